"""How `diff` pairs the nodes of two topologies (graphcert.model.align): difflib exactly as
before where affordable, beyond that common prefix and suffix plus a shortest edit script,
in time near-linear in the nodes. Synthetic graphs (kernel names k_*), built in code."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from graphcert.model import NodeKind, RawGraph, RawNode, diff_snapshots, snapshot_from_raw
from graphcert.model import align as align_module
from graphcert.model.align import _edit_script_blocks, align

seqs = st.lists(st.integers(0, 2), max_size=30)


def lcs_length(a: list[int], b: list[int]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev_diag, row = 0, row[:]
        for j, y in enumerate(b):
            prev_diag, row[j + 1] = row[j + 1], (prev_diag + 1 if x == y
                                                  else max(row[j + 1], row[j]))
    return row[-1]


def is_pairing(pairs: dict[int, int], a: list[int], b: list[int]) -> bool:
    """Equal items, increasing on both sides."""
    ordered = sorted(pairs.items())
    return (all(a[i] == b[j] for i, j in ordered)
            and all(j1 < j2 for (_, j1), (_, j2) in zip(ordered, ordered[1:], strict=False)))


@settings(max_examples=300, deadline=None)
@given(a=seqs, b=seqs)
def test_the_edit_script_pairs_a_longest_common_subsequence(a: list[int], b: list[int]) -> None:
    blocks = _edit_script_blocks(a, b, 60)
    if not a or not b:
        assert blocks is None
        return
    assert blocks is not None
    pairs = {x + k: y + k for x, y, size in blocks for k in range(size)}
    assert is_pairing(pairs, a, b)
    assert len(pairs) == lcs_length(a, b)


@settings(max_examples=200, deadline=None)
@given(a=seqs, b=seqs, edits=st.integers(0, 6))
def test_beyond_the_difflib_budget_pairs_stay_equal_and_in_order(a: list[int], b: list[int],
                                                                 edits: int) -> None:
    with mock.patch.object(align_module, "DIFFLIB_STEPS_MAX", -1), \
            mock.patch.object(align_module, "MYERS_EDITS_MAX", edits):
        pairs = align(a, b)
    assert is_pairing(pairs, a, b)


@settings(max_examples=200, deadline=None)
@given(a=seqs, b=seqs)
def test_within_the_difflib_budget_the_pairs_are_difflibs(a: list[int], b: list[int]) -> None:
    blocks = difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
    assert align(a, b) == {blk.a + k: blk.b + k for blk in blocks for k in range(blk.size)}


def chain(n: int, renamed: int = -1, removed: int = -1, inserted: int = -1,
          every: int = 0) -> RawGraph:
    """n kernels in a row cycling through four names; node `renamed` (and every `every`-th)
    renamed, `removed` taken out, a kernel inserted before position `inserted`."""
    names = ("k_a", "k_b", "k_c", "k_d")
    nodes = [RawNode(i, NodeKind.KERNEL, {
        "name": "k_renamed" if i == renamed or (every and i % every == 1) else names[i % 4],
        "grid": [4, 1, 1], "block": [256, 1, 1]}) for i in range(n) if i != removed]
    if inserted >= 0:
        nodes.insert(inserted, RawNode(n, NodeKind.KERNEL, {"name": "k_inserted"}))
    ids = [node.id for node in nodes]
    return RawGraph(tuple(nodes), tuple(zip(ids, ids[1:], strict=False)))


@contextmanager
def edit_scripts() -> Iterator[list[list[tuple[int, int, int]] | None]]:
    """What each edit-script search returned while inside (None: it gave up)."""
    found: list[list[tuple[int, int, int]] | None] = []

    def recorded(*args: Any) -> Any:
        found.append(_edit_script_blocks(*args))
        return found[-1]

    with mock.patch.object(align_module, "_edit_script_blocks", recorded):
        yield found


def test_diff_of_long_chains_with_edits_far_apart_is_exact() -> None:
    """8,000 kernels of four names: difflib's searches would pass their budget, so the
    prefix, suffix and edit-script path pairs them, and the diff is exactly the three edits.
    How fast this is at 1e5 nodes: benchmarks/fanout_speed.py."""
    n = 8_000
    assert n * (n // 4 + 1) > align_module.DIFFLIB_STEPS_MAX  # difflib's first search alone
    a = snapshot_from_raw(chain(n))
    b = snapshot_from_raw(chain(n, renamed=1_601, removed=4_002, inserted=6_403))
    with edit_scripts() as found:
        d = diff_snapshots(a, b)
    assert len(found) == 1 and found[0] is not None  # the edit script found the edits
    assert sorted(n.name or "" for n in d.removed) == ["k_b", "k_c"]
    assert sorted(n.name or "" for n in d.added) == ["k_inserted", "k_renamed"]
    assert {c.field for c in d.changed} == {"deps"} and len(d.changed) == 3


def test_diff_of_chains_with_edits_everywhere_pairs_the_left_overs_by_name() -> None:
    """More edits than the edit-script search looks for (600 renamed kernels: 1,200 edits):
    the search gives up and left-overs are paired by name in order. How fast this is at
    40,000 nodes: benchmarks/fanout_speed.py."""
    a = snapshot_from_raw(chain(12_000))
    b = snapshot_from_raw(chain(12_000, every=20))
    assert 2 * 600 > align_module.MYERS_EDITS_MAX
    with edit_scripts() as found:
        d = diff_snapshots(a, b)
    assert found == [None]  # the edit-script search gave up: more edits than it looks for
    assert len(d.added) == len(d.removed) == 600
    assert {n.name for n in d.added} == {"k_renamed"}
    assert {n.name for n in d.removed} == {"k_b"}
