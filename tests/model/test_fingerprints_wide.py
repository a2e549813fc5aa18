"""Wide fan-outs (twin classes beyond graphcert.model.twins' bounds, split before labelling):
fingerprints stay exact isomorphism invariants and take milliseconds, and graphs below the
bounds are labelled exactly as before (docs/fingerprints.md, section 4a).

All graphs are synthetic (kernel names k_*), built in code; nothing imitates a GPU.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from unittest import mock

import pytest
from _graphs import bipartite_fan_edges, fan_in_chain_edges, fan_in_edges, fan_out_edges
from _thorough import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphcert.model import (
    EdgeData,
    NodeKind,
    RawGraph,
    RawNode,
    canonical,
    diff_snapshots,
    snapshot_from_raw,
    twins,
)
from tests.model.test_fingerprints_property import (
    FAMILIES,
    kern,
    random_dags,
    round_trip,
    shuffle_graph,
)

# Each example is one random relabelling of a graph past the twin bounds (two labellings of
# a 1,000-node-plus graph); thorough runs twice as many.
WIDE = settings(max_examples=examples(3, 6), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def labelled(n: int, edges: list[tuple[int, int]], leaf_names: int = 1) -> RawGraph:
    """Node 0 k_hub, the others cycling through leaf_names kernel names."""
    return RawGraph(tuple(kern(i, "k_hub" if i == 0 else f"k_leaf{i % leaf_names}")
                          for i in range(n)), tuple(edges))


def fan_with_data(width: int) -> RawGraph:
    """A fan-out whose every edge is programmatic (an edge vertex each for BLISS)."""
    n, edges = fan_out_edges(width)
    return RawGraph(labelled(n, []).nodes, tuple((a, b, EdgeData(1, 1, 0)) for a, b in edges))


def fans_in_a_chain(width: int) -> RawGraph:
    """Two stars inside one chain, one after the other, leaves of two kernels."""
    n, edges = fan_in_chain_edges(3, width)
    m, more = fan_in_chain_edges(3, width)
    edges += [(n - 1, n)] + [(a + n, b + n) for a, b in more]
    return labelled(n + m, edges, 2)


def body_with_a_fan(width: int) -> RawGraph:
    """A WHILE conditional whose body is a wide fan-out, between two kernels."""
    body = labelled(*fan_out_edges(width), 3)
    cond = RawNode(1, NodeKind.CONDITIONAL, {"type": "while", "size": 1}, (body,))
    return RawGraph((kern(0, "k_start"), cond, kern(2, "k_end")), ((0, 1), (1, 2)))


WIDE_FAMILIES = {
    "fan-out-2000-3-leaf-kernels": labelled(*fan_out_edges(2000), 3),
    "fan-in-1500": labelled(*fan_in_edges(1500)),
    "stars-in-a-chain-1100": fans_in_a_chain(1100),
    "bipartite-3x1100x2": labelled(*bipartite_fan_edges(3, 1100, 2)),
    "fan-out-1100-programmatic-edges": fan_with_data(1100),
    "conditional-body-fan-1800": body_with_a_fan(1800),
}


@contextmanager
def splits_counted() -> Iterator[list[int]]:
    """Counts the runs that split twins while the block runs."""
    split: list[int] = []
    real = canonical.individualised

    def counting(*args: object) -> list[int] | None:
        got = real(*args)  # type: ignore[arg-type]
        if got is not None:
            split.append(1)
        return got

    with mock.patch.object(canonical, "individualised", counting):
        yield split


@contextmanager
def bounds(squares: int, work: int) -> Iterator[None]:
    with mock.patch.object(twins, "TWIN_SQUARES_MAX", squares), \
            mock.patch.object(twins, "TWIN_WORK_MAX", work):
        yield


@pytest.mark.parametrize("name", sorted(WIDE_FAMILIES))
@WIDE
@given(seed=st.integers(0, 2**32 - 1))
def test_wide_families_are_canonical(name: str, seed: int) -> None:
    raw = WIDE_FAMILIES[name]
    with splits_counted() as split:
        a = snapshot_from_raw(raw)
    assert split, "the family is meant to exceed the twin bounds"
    b = snapshot_from_raw(shuffle_graph(raw, random.Random(seed)))
    assert a == b  # hashes, order, deps, attrs, children: all of it
    assert round_trip(b) == b


def test_wide_graphs_that_differ_get_different_hashes() -> None:
    n, edges = fan_out_edges(2000)
    leaf_to_leaf = labelled(n, [*edges, (1, 2)])
    half = RawGraph(tuple(kern(i, "k_a" if i <= 1000 else "k_b") for i in range(n)),
                    tuple(edges))
    shifted = RawGraph(tuple(kern(i, "k_a" if i <= 999 else "k_b") for i in range(n)),
                       tuple(edges))
    nb, bip = bipartite_fan_edges(3, 1100, 2)
    one_data_edge = fan_with_data(1100)
    graphs = {
        "fan 2000": labelled(n, edges),
        "fan 2001": labelled(*fan_out_edges(2001)),
        "fan 2000, one leaf feeds another": leaf_to_leaf,
        "fan 1000 k_a + 1000 k_b": half,
        "fan 999 k_a + 1001 k_b": shifted,
        "fan-in 2000": labelled(*fan_in_edges(2000)),
        "bipartite 3x1100x2": labelled(nb, bip),
        "bipartite minus one edge": labelled(nb, bip[1:]),
        "fan 1100 programmatic": one_data_edge,
        "fan 1100, one edge plain": RawGraph(one_data_edge.nodes,
                                             ((0, 1), *one_data_edge.edges[1:])),
        "stars in a chain": fans_in_a_chain(1100),
    }
    hashes = {name: snapshot_from_raw(g).topology_hash for name, g in graphs.items()}
    assert len(set(hashes.values())) == len(graphs), hashes


@WIDE
@given(data=st.data())
def test_shape_never_reorders_topology_in_a_wide_fan(data: st.DataObject) -> None:
    """Leaves alike in topology but not in shape: topology twins numbered by shape. New
    grids keep the topology fingerprint and every node's place."""
    n, edges = fan_out_edges(1500)
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1)))

    def grids() -> RawGraph:
        return RawGraph(tuple(kern(i, "k_hub" if i == 0 else "k_leaf", rng.choice([1, 2, 3]))
                              for i in range(n)), tuple(edges))

    with splits_counted() as split:
        a, b = snapshot_from_raw(grids()), snapshot_from_raw(grids())
    assert split
    assert a.topology_hash == b.topology_hash
    assert [(x.kind, x.name, x.deps) for x in a.nodes] == [(x.kind, x.name, x.deps)
                                                             for x in b.nodes]
    d = diff_snapshots(a, b)
    assert not d.added and not d.removed and {c.field for c in d.changed} <= {"grid"}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=random_dags(), seed=st.integers(0, 2**32 - 1))
def test_random_dags_are_canonical_with_every_twin_class_split(raw: RawGraph,
                                                                seed: int) -> None:
    with bounds(-1, -1):
        a = snapshot_from_raw(raw)
        b = snapshot_from_raw(shuffle_graph(raw, random.Random(seed)))
    assert a == b
    assert round_trip(a) == a


@pytest.mark.parametrize("name", sorted(FAMILIES))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_symmetric_families_are_canonical_with_every_twin_class_split(name: str,
                                                                      seed: int) -> None:
    with bounds(-1, -1):
        a = snapshot_from_raw(FAMILIES[name])
        b = snapshot_from_raw(shuffle_graph(FAMILIES[name], random.Random(seed)))
    assert a == b


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=random_dags())
def test_degrees_bound_the_twin_classes(raw: RawGraph) -> None:
    """The degree-only pre-check (what spares a long chain the neighbourhoods) is sound: no
    twin class is larger than its widest, and all hold no more nodes than its total."""
    n, pairs = len(raw.nodes), [(e[0], e[1]) for e in raw.edges]
    sizes = twins.class_sizes(twins.hood_ids(n, pairs, {}))
    widest, total = twins.degree_bounds(n, pairs)
    assert max(sizes, default=0) <= widest and sum(sizes) <= total


def test_the_bounds_split_a_1025_wide_fan_but_not_a_1024_wide_one() -> None:
    assert not twins.exceeds([1024], 1025) and twins.exceeds([1025], 1026)
    assert not twins.exceeds([2] * 4000, 12_001) and twins.exceeds([2] * 12_000, 36_001)
    for width, splits in ((1024, False), (1025, True)):
        with splits_counted() as split:
            snapshot_from_raw(labelled(*fan_out_edges(width)))
        assert bool(split) is splits


def test_graphs_below_the_bounds_are_labelled_as_before() -> None:
    """Below the bounds no run is split: the labels are those of plain BLISS runs."""
    for raw in [*FAMILIES.values(), labelled(*fan_out_edges(1024)),
                labelled(*bipartite_fan_edges(2, 700, 2))]:
        with splits_counted() as split:
            snapshot_from_raw(raw)
        assert not split


@pytest.mark.parametrize("build", [lambda: labelled(*fan_out_edges(10_000)),
                                   lambda: labelled(*fan_in_edges(10_000)),
                                   lambda: labelled(*fan_in_chain_edges(100, 10_000), 4),
                                   lambda: labelled(*bipartite_fan_edges(3, 10_000, 3))],
                         ids=["fan-out", "fan-in", "star-in-chain", "bipartite"])
def test_a_10000_wide_fan_is_split_and_canonical(build: Callable[[], RawGraph]) -> None:
    """Before twins were split one of these took two minutes; split, ~0.05 s (the figures:
    benchmarks/fanout_speed.py, the same four shapes)."""
    raw = build()
    with splits_counted() as split:
        a = snapshot_from_raw(raw)
    assert split, "a 10,000-wide fan exceeds the twin bounds"
    assert snapshot_from_raw(shuffle_graph(raw, random.Random(10_000))) == a
