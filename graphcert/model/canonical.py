"""Exact canonical order of a vertex-coloured DAG, from BLISS through python-igraph. Pure.

`canonical_labels` runs `igraph.Graph.canonical_permutation(color=...)` (BLISS, an exact
canonical labelling) once per colouring, finest first, each run on the graph as the previous
run relabelled it. The last run uses the coarsest (topology) colouring, so:

- the topology-coloured graph in the final labels is BLISS's canonical form of the topology
  colouring (whatever the input order): equal topology means position i of one graph is
  position i of the other (an isomorphism maps each to each);
- the input of each run is itself the canonical form of the finer colouring before it, so
  graphs alike at a finer level (equal shape, or equal everything) come out with identical
  labels: shape picks among the labellings topology allows, it never moves topology.

A colouring that splits the vertices into no more classes than the next coarser one is the
same partition (each level refines the next) and is skipped: its run would change nothing.
Colours are ranks of the signature strings in sorted order, so equal graphs get equal
colours. Where a colouring's twin classes (same colour, same neighbours: a wide fan-out's
leaves) are too large for BLISS's search, the run first gives each twin a colour of its own
(graphcert.model.twins; docs/fingerprints.md, section 4a, says why the form stays exact).
`topological_order` turns labels into the order snapshots list nodes in (by depth, then
label): a function of the relabelled graph alone, so it keeps both properties.
`labelled_order` does both. Where every node has a depth of its own (a chain, as a small
framework step often is), labels cannot change that order: `depth_order` gives it without
BLISS, the same order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphcert.model.twins import individualised, neighbourhoods


def _graph(n: int, edges: Sequence[tuple[int, int]]) -> Any:
    # Imported here: loading, rendering and diffing saved snapshots never need it, and it
    # is a third of `graphcert inventory FILE`'s start-up. GraphBase, python-igraph's C
    # type, has every call used here; Graph's Python constructor adds ~4 us (it imports
    # numpy to check the edge list's type) to each of the two graphs a snapshot builds.
    import igraph

    return igraph.GraphBase(n, list(edges), True)


def warm() -> None:
    """Import python-igraph now (a one-time cost), so the first canonical order is not
    charged with it."""
    import igraph  # noqa: F401


def colour_ranks(signatures: Sequence[str]) -> tuple[list[int], int]:
    """(colour per vertex, number of colours): the rank of each signature among the distinct
    signatures in sorted (code point) order, so the colours of equal graphs are equal."""
    distinct = sorted(set(signatures))
    rank = {s: i for i, s in enumerate(distinct)}
    return [rank[s] for s in signatures], len(distinct)


def canonical_labels(n: int, edges: Sequence[tuple[int, int]],
                     levels: Sequence[Sequence[str]],
                     hoods: Sequence[int] | None = None) -> list[int]:
    """Canonical label of each of the n vertices of a simple directed graph.

    levels: vertex signatures per colouring, finest first and topology last; each must
    refine the next (equal signatures at one level imply equal ones at the next).
    hoods: twins.neighbourhoods of the first vertices, where twin classes may need
    splitting (twins.individualised decides per colouring); None: never split."""
    if n == 0:
        return []
    graph = _graph(n, edges)
    label = list(range(n))  # original vertex -> its vertex in `graph`
    graph_is_input = True
    counts = [colour_ranks(sigs) for sigs in levels]
    last = len(levels) - 1
    for i, (colours, k) in enumerate(counts):
        if i < last and k == counts[i + 1][1]:
            continue  # same partition as the next level: nothing to refine
        if hoods is not None:  # twins numbered in their order in `graph`
            colours = individualised(colours, hoods, label) or colours
        # colours are per original vertex; `graph` is numbered by `label`
        if graph_is_input:
            current = colours
        else:
            current = [0] * n
            for v, c in enumerate(colours):
                current[label[v]] = c
        # python-igraph 1.0 returns "new vertex i is old vertex perm[i]" (what its
        # permute_vertices takes; its docstring says the inverse). tests/test_fingerprints_
        # property.py would catch a change: the labels would stop being canonical.
        perm = graph.canonical_permutation(color=current)
        graph = graph.permute_vertices(perm)
        new_id = [0] * n
        for i, old in enumerate(perm):
            new_id[old] = i
        label = [new_id[x] for x in label]
        graph_is_input = False
    return label


def topological_order(n: int, edges: Sequence[tuple[int, int]], labels: Sequence[int]
                      ) -> list[int] | None:
    """Nodes ordered by depth (longest path from a source), then by canonical label; None
    when the graph has a cycle."""
    if n == 0:
        return []
    graph = _graph(n, edges)
    if not graph.is_dag():  # self-loops included
        return None
    succs: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        succs[a].append(b)
    depth = [0] * n
    for v in graph.topological_sorting(mode="out"):
        d = depth[v] + 1
        for s in succs[v]:
            if depth[s] < d:
                depth[s] = d
    return sorted(range(n), key=lambda v: (depth[v], labels[v]))


def labelled_order(n: int, pairs: Sequence[tuple[int, int]], levels: Sequence[Sequence[str]],
                   edge_colours: Mapping[tuple[int, int], str]) -> list[int] | None:
    """topological_order by canonical_labels over `levels` (finest first); None on a cycle.
    BLISS wants a simple graph: an edge in `edge_colours` (its signature) becomes a vertex of
    that colour between its ends, so a programmatic edge and a plain one are told apart.
    Twins are found on the nodes, through their edges and edge colours (twins.neighbourhoods)."""
    coloured = [list(level) for level in levels]
    graph_edges: list[tuple[int, int]] = list(pairs)
    if edge_colours:
        graph_edges = []
        for a, b in pairs:
            colour = edge_colours.get((a, b))
            if colour is None:
                graph_edges.append((a, b))
                continue
            mid = len(coloured[0])
            for level in coloured:
                level.append(colour)
            graph_edges += [(a, mid), (mid, b)]
    hoods = neighbourhoods(n, pairs, edge_colours)
    labels = canonical_labels(len(coloured[0]), graph_edges, coloured, hoods)
    return topological_order(n, pairs, labels[:n])


# Up to this many nodes, depth_order tries the order without labels first (a framework's small
# step is often a chain); beyond it BLISS's fixed cost no longer matters.
DEPTH_ORDER_MAX_NODES = 64


def _kahn(n: int, succs: Sequence[Sequence[int]]) -> tuple[list[int], list[int]]:
    """Kahn's algorithm: each node's depth (its longest path from a source) and the in-degree
    it has left at the end, non-zero exactly on or behind a cycle."""
    indeg = [0] * n
    for out in succs:
        for s in out:
            indeg[s] += 1
    ready = [v for v in range(n) if indeg[v] == 0]
    depth = [0] * n
    while ready:
        v = ready.pop()
        below = depth[v] + 1
        for s in succs[v]:
            if depth[s] < below:
                depth[s] = below
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
    return depth, indeg


def depth_order(n: int, edges: Sequence[tuple[int, int]]) -> list[int] | None:
    """The order topological_order gives whatever the labels, where every node has its own
    depth (a chain): the nodes by depth. None where two nodes share a depth, where n exceeds
    DEPTH_ORDER_MAX_NODES, or where there is a cycle (the labelled path then decides)."""
    if not 0 < n <= DEPTH_ORDER_MAX_NODES or len(edges) < n - 1:
        return None
    succs: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        succs[a].append(b)
    depth, left = _kahn(n, succs)
    if any(left):
        return None
    order = sorted(range(n), key=depth.__getitem__)
    return order if all(depth[v] == i for i, v in enumerate(order)) else None


def find_cycle_nodes(n: int, succs: Sequence[Sequence[int]]) -> list[int]:
    """Nodes left over by Kahn's algorithm (on or behind a cycle); empty for a DAG."""
    _, left = _kahn(n, succs)
    return [v for v in range(n) if left[v] > 0]


__all__ = ["DEPTH_ORDER_MAX_NODES", "canonical_labels", "colour_ranks", "depth_order",
           "find_cycle_nodes", "labelled_order", "topological_order"]
