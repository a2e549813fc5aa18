"""Edge lists of symmetric graph families, shared by the fingerprint property tests and
benchmarks/fingerprint_speed.py (each labels the nodes its own way). Synthetic graphs."""

from __future__ import annotations


def reduction_tree_edges(leaves: int) -> tuple[int, list[tuple[int, int]]]:
    """(node count, edges) of a binary reduction: each node combines two of the level before."""
    edges, level, nxt = [], list(range(leaves)), leaves
    while len(level) > 1:
        new = []
        for a, b in zip(level[::2], level[1::2], strict=True):
            edges += [(a, nxt), (b, nxt)]
            new.append(nxt)
            nxt += 1
        level = new
    return nxt, edges


def butterfly_edges(width: int, stages: int) -> tuple[int, list[tuple[int, int]]]:
    """(node count, sorted edges) of an all-reduce butterfly: node (s, i) after (s-1, i) and
    (s-1, i xor 2^((s-1) mod log2 width))."""
    bits = max(width.bit_length() - 1, 1)
    edges: set[tuple[int, int]] = set()
    for s in range(1, stages + 1):
        for i in range(width):
            partner = i ^ (1 << ((s - 1) % bits))
            edges |= {((s - 1) * width + i, s * width + i),
                      ((s - 1) * width + partner, s * width + i)}
    return width * (stages + 1), sorted(edges)
