"""The fast numpy references (cached, prefix-reusing) equal the old ones bit for bit.

The oracle is the old implementation, kept in tests/_refs_oracle.py. Host only: setup()
runs against a context whose uploads are dropped.
"""

from __future__ import annotations

from typing import Any

import _refs_oracle as oracle
import numpy as np
import pytest
from _hostctx import HostContext
from hypothesis import given, settings
from hypothesis import strategies as st

from graphcert.buckets import lower_edge, parse_classes, sample_sizes
from graphcert.workloads import memo
from graphcert.workloads.converge import converge_reference, converge_reference_cached
from graphcert.workloads.decode import Decode
from graphcert.workloads.fixpoint import label_graph, labels_after
from graphcert.workloads.join import join_prefix_reference, join_reference
from graphcert.workloads.registry import load


def _assert_same(new: dict[str, np.ndarray], old: dict[str, np.ndarray], where: str) -> None:
    assert sorted(new) == sorted(old), where
    for key in old:
        assert new[key].dtype == old[key].dtype, f"{where} {key}"
        assert new[key].shape == old[key].shape, f"{where} {key}"
        assert np.array_equal(new[key], old[key]), f"{where} {key}"


def _check(ref: str, seed: int, capacity: int, sizes: list[int], **options: Any) -> None:
    workload = load(ref).native().workload
    workload.setup(HostContext(seed), capacity)
    try:
        for n in sizes:
            _assert_same(workload.reference(n), oracle.ORACLES[workload.name](
                seed, capacity, n, **options), f"{ref} seed={seed} capacity={capacity} n={n}")
    finally:
        workload.teardown()


@pytest.mark.parametrize("name", ["scan", "resident", "join", "fixpoint", "converge"])
def test_every_sample_size_of_small_classes_is_bit_identical(name: str) -> None:
    memo.clear()
    for capacity in parse_classes("2^0..2^13"):
        _check(name, 3, capacity, sample_sizes(capacity, 6, 3))


def test_decode_bit_identical_below_and_above_the_pool() -> None:
    # hidden=8 keeps the 2^16-row pool reference cheap; 2^17 gathers pool rows at random.
    for capacity in (1, 2, 64, 1 << 12, 1 << 17):
        _check("decode[layers=2,hidden=8]", 4, capacity, sample_sizes(capacity, 4, 4),
               layers=2, hidden=8)


def test_decode_setup_uploads_the_same_rows_as_before() -> None:
    d = Decode(layers=2, hidden=8)
    d.setup(HostContext(9), 1 << 17)
    rng = np.random.default_rng([9, 0xDEC0])
    pool = rng.random((1 << 16, 8), dtype=np.float32) * 2 - 1
    assert np.array_equal(d._host["pool"], pool)
    assert np.array_equal(d._host["rows"], rng.integers(0, 1 << 16, 1 << 17))
    d.teardown()


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(["scan", "resident", "join", "fixpoint", "converge"]),
       seed=st.integers(0, 2**32 - 1), exponent=st.integers(0, 12), data=st.data())
def test_any_seed_and_size_is_bit_identical(name: str, seed: int, exponent: int,
                                            data: st.DataObject) -> None:
    capacity = 1 << exponent
    sizes = data.draw(st.lists(st.integers(lower_edge(capacity), capacity), min_size=1,
                               max_size=4))
    _check(name, seed, capacity, sizes)


@settings(max_examples=25, deadline=None)
@given(arity=st.sampled_from([1, 2]), seed=st.integers(0, 2**32 - 1),
       rows=st.integers(1, 300), duplicates=st.integers(1, 4),
       hit=st.floats(0, 1), data=st.data())
def test_join_prefix_reference_answers_every_n(arity: int, seed: int, rows: int,
                                               duplicates: int, hit: float,
                                               data: st.DataObject) -> None:
    build, probe = oracle.join_inputs(seed, 500, arity=arity, build_rows=rows,
                                      duplicates=duplicates, hit_rate=hit)
    pairs, ends = join_prefix_reference(build, probe)
    for n in data.draw(st.lists(st.integers(0, 500), min_size=1, max_size=5)):
        want = oracle.join_pairs(build, probe[:, :n])
        assert np.array_equal(pairs[:ends[n]], want)
        assert np.array_equal(join_reference(build, probe[:, :n]), want)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), exponent=st.integers(0, 10),
       components=st.integers(1, 6), degree=st.integers(0, 3),
       steps=st.lists(st.integers(0, 20), min_size=1, max_size=4), data=st.data())
def test_label_walk_in_any_order_equals_propagate(seed: int, exponent: int, components: int,
                                                  degree: int, steps: list[int],
                                                  data: st.DataObject) -> None:
    capacity = 1 << exponent
    n = data.draw(st.integers(0, capacity))
    memo.clear()
    graph = label_graph(seed, capacity, components, degree)
    for k in steps:  # carried forward, answered from the fixed point, or started again
        labels, changing = labels_after(seed, graph, n, k)
        assert np.array_equal(labels, graph.propagate(n, k))
        if changing is not None:
            assert changing <= k
            assert np.array_equal(graph.propagate(n, changing + 1), labels)
    for limit in (1, 2, 5):  # including limits the loop runs into
        got = converge_reference_cached(seed, graph, n, limit)
        want = converge_reference(graph, n, limit)
        assert np.array_equal(got[0], want[0]) and got[1] == want[1]


def test_cached_references_are_read_only_and_the_cache_is_bounded(monkeypatch: Any) -> None:
    memo.clear()
    scan = load("scan").native().workload
    scan.setup(HostContext(1), 1024)
    prefix = scan.reference(1000)["prefix"]
    with pytest.raises(ValueError):
        prefix[0] = 1
    scan.teardown()
    monkeypatch.setattr(memo, "BUDGET_BYTES", 10_000)
    for i in range(10):
        memo.cached(("t", i), lambda: np.zeros(1000, dtype=np.uint32))
    assert memo.held_bytes() <= 10_000
    assert memo.lookup(("t", 0)) is None and memo.lookup(("t", 9)) is not None
    memo.clear()
