"""Twin vertices, split before labelling where BLISS's search would be too long. Pure.

Twins are vertices of one colour with the same predecessors and the same successors, each
edge with the same edge data (a 10,000-wide fan-out's leaves). Exchanging two twins is an
automorphism, so BLISS must find all of them: on a class of s twins its search costs about
s^2 (a 1,000-wide star 0.3 s, a 10,000-wide one two to three minutes), and many classes
cost about their twins beyond one per class times the graph's size. `individualised` gives
each twin a colour of its own first, where the twin classes of a colouring exceed
TWIN_SQUARES_MAX or TWIN_WORK_MAX (below them, labelling is exactly as it always was: the
hashes of such graphs never change).

Why the canonical form stays exact (docs/fingerprints.md, section 4a): twin classes are
defined by colours and edges only, so an isomorphism maps them onto each other; any two
ways of numbering the twins of each class differ by exchanging twins, an automorphism, so
the colourings they give are isomorphic and BLISS returns one canonical form for all of
them. Whether a colouring is split depends on its class sizes only, also invariant.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import chain
from operator import itemgetter

TWIN_SQUARES_MAX = 1 << 20
"""Twins are split where the sum of squared twin-class sizes exceeds this (one class of
1,024 twins: about 0.3 s of BLISS on a 2020s CPU)..."""

TWIN_WORK_MAX = 1 << 27
"""... or where the twins beyond one per class, times the vertices BLISS labels, exceed
this (10,000 pairs of twins in a 30,000-vertex graph: about 0.7 s)."""


def neighbourhoods(n: int, pairs: Sequence[tuple[int, int]],
                   edge_colours: Mapping[tuple[int, int], str]) -> list[int] | None:
    """Per node, a number equal for exactly the nodes with the same predecessors and
    successors through edges of the same colour; None where no colouring can have twin
    classes large enough to split (colours only split these classes further)."""
    vertices = n + len(edge_colours)
    if not may_exceed(n, pairs, vertices):
        return None
    ids = hood_ids(n, pairs, edge_colours)
    return ids if exceeds(class_sizes(ids), vertices) else None


def hood_ids(n: int, pairs: Sequence[tuple[int, int]],
             edge_colours: Mapping[tuple[int, int], str]) -> list[int]:
    """neighbourhoods' numbers, for every graph."""
    edge_rank = {c: i + 1 for i, c in enumerate(sorted(set(edge_colours.values())))}
    preds: list[list[int]] = [[] for _ in range(n)]
    succs: list[list[int]] = [[] for _ in range(n)]
    # One int per neighbour: the neighbour itself, shifted by n per edge colour.
    for a, b in pairs:
        colour = edge_colours.get((a, b)) if edge_colours else None
        shift = 0 if colour is None else n * edge_rank[colour]
        preds[b].append(a + shift)
        succs[a].append(b + shift)
    hood: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
    return [hood.setdefault((tuple(sorted(p)), tuple(sorted(s))), len(hood))
            for p, s in zip(preds, succs, strict=True)]


def may_exceed(n: int, pairs: Sequence[tuple[int, int]], vertices: int) -> bool:
    """From degrees alone (C-speed counting: a chain of 10^5 nodes must not pay for
    neighbourhoods), whether twin classes could exceed the bounds."""
    widest, total = degree_bounds(n, pairs)
    return widest * total > TWIN_SQUARES_MAX or total * vertices > TWIN_WORK_MAX


def degree_bounds(n: int, pairs: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """(no twin class is larger, the twin classes hold at most this many nodes in all).
    Twins with predecessors are all successors of one node, twins with successors only all
    predecessors of one, the rest isolated: so each class fits in one of the degrees of 2
    or more (or the isolated nodes), and each twin is counted in one of them."""
    outs = Counter(map(itemgetter(0), pairs))
    ins = Counter(map(itemgetter(1), pairs))
    isolated = n - len(outs.keys() | ins.keys())
    wide = [d for d in chain(outs.values(), ins.values()) if d > 1]
    if isolated > 1:
        wide.append(isolated)
    return max(wide, default=0), sum(wide)


def class_sizes(keys: Sequence[object]) -> list[int]:
    """Sizes of the classes of equal keys that hold at least two."""
    count: dict[object, int] = {}
    for k in keys:
        count[k] = count.get(k, 0) + 1
    return [c for c in count.values() if c > 1]


def exceeds(sizes: Sequence[int], vertices: int) -> bool:
    """Whether twin classes of these sizes (each at least 2), in a graph of `vertices`
    vertices, are beyond what BLISS's search handles quickly: then they are split."""
    squares = sum(s * s for s in sizes)
    beyond_one = sum(sizes) - len(sizes)
    return squares > TWIN_SQUARES_MAX or beyond_one * vertices > TWIN_WORK_MAX


def individualised(colours: Sequence[int], hoods: Sequence[int], place: Sequence[int]
                   ) -> list[int] | None:
    """A finer colouring that gives every twin a colour of its own, or None where the twin
    classes of `colours` do not exceed the bounds (then label as before).

    colours: per vertex (nodes first, then any edge vertices, never twins); hoods: per node,
    from `neighbourhoods`; place: where each vertex is in the graph being labelled, which
    numbers the twins of a class in that order (any order gives the same canonical form;
    this one keeps graphs equal at a finer colouring labelled alike)."""
    classes: dict[tuple[int, int], list[int]] = {}
    for v, h in enumerate(hoods):
        classes.setdefault((colours[v], h), []).append(v)
    sizes = [len(m) for m in classes.values() if len(m) > 1]
    if not sizes or not exceeds(sizes, len(colours)):
        return None
    key = [(c, 0) for c in colours]
    for members in classes.values():
        if len(members) > 1:
            members.sort(key=place.__getitem__)
            for j, v in enumerate(members):
                key[v] = (colours[v], j)
    rank = {k: i for i, k in enumerate(sorted(set(key)))}
    return [rank[k] for k in key]


__all__ = ["TWIN_SQUARES_MAX", "TWIN_WORK_MAX", "class_sizes", "degree_bounds", "exceeds",
           "hood_ids", "individualised", "may_exceed", "neighbourhoods"]
