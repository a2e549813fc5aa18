"""Edge lists of symmetric graph families, shared by the fingerprint property tests and
benchmarks/fingerprint_speed.py and fanout_speed.py (each labels the nodes its own way).
Synthetic graphs."""

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


def fan_out_edges(width: int) -> tuple[int, list[tuple[int, int]]]:
    """(node count, edges) of one node (0) feeding `width` others."""
    return width + 1, [(0, i) for i in range(1, width + 1)]


def fan_in_edges(width: int) -> tuple[int, list[tuple[int, int]]]:
    """(node count, edges) of `width` nodes all feeding one (0)."""
    return width + 1, [(i, 0) for i in range(1, width + 1)]


def fan_in_chain_edges(chain: int, width: int) -> tuple[int, list[tuple[int, int]]]:
    """(node count, edges) of a star inside a chain: `chain` nodes in a row, the last of
    which feeds `width` nodes that all feed a join, followed by `chain` more in a row."""
    edges = [(i, i + 1) for i in range(chain - 1)]
    hub, join = chain - 1, chain + width
    edges += [(hub, i) for i in range(chain, join)] + [(i, join) for i in range(chain, join)]
    edges += [(i, i + 1) for i in range(join, join + chain)]
    return join + chain + 1, edges


def bipartite_fan_edges(sources: int, width: int, sinks: int
                        ) -> tuple[int, list[tuple[int, int]]]:
    """(node count, edges) of `sources` nodes each feeding all of `width` nodes, each of which
    feeds all of `sinks` nodes (fan-in and fan-out at once)."""
    middle = range(sources, sources + width)
    ends = range(sources + width, sources + width + sinks)
    edges = [(s, m) for s in range(sources) for m in middle]
    return sources + width + sinks, edges + [(m, e) for m in middle for e in ends]
