"""Fingerprint every recorded graph again and compare with the hashes recorded for it.

    PYTHONPATH=. python3 tools/refingerprint.py [--seeds 3]

Snapshots: every `*.snapshot.json` (and golden `example_snapshot.json`) under tests/,
reports/ and examples/ is loaded, rebuilt as a reader's graph with its nodes renamed and
listed in a random order (`--seeds` times), fingerprinted from scratch (canonical labelling
included) and compared with the stored snapshot: both hashes, node order, deps, attrs,
edge data, children. Certificates (every JSON with `results.classes` under reports/ and
tests/) hold hashes, not graphs: for each class the script says whether a recorded snapshot
reproduces its hashes, and checks that its node count is too small for twin splitting
(docs/fingerprints.md, section 4a) to apply. Exit 0 when nothing differs, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphcert.model import (  # noqa: E402
    GraphSnapshot,
    RawGraph,
    RawNode,
    load_snapshot,
    snapshot_from_raw,
)
from graphcert.model.twins import exceeds  # noqa: E402

FOLDERS = ("tests", "reports", "examples")


def snapshot_files() -> list[Path]:
    found: set[Path] = set()
    for folder in FOLDERS:
        found |= set((ROOT / folder).rglob("*.snapshot.json"))
        found |= set((ROOT / folder).rglob("example_snapshot.json"))
    return sorted(found)


def as_raw(s: GraphSnapshot, rng: random.Random) -> RawGraph:
    """The snapshot as a reader could have produced it: new ids, nodes and edges shuffled."""
    ids = rng.sample(range(10**9), len(s.nodes))
    nodes = [RawNode(ids[n.index], n.kind, dict(n.attrs),
                     tuple(as_raw(c, rng) for c in n.children)) for n in s.nodes]
    data = {(a, b): d for a, b, d in s.edge_data}
    edges = [(ids[a], ids[b], data[(a, b)]) if (a, b) in data else (ids[a], ids[b])
             for a, b in s.edges]
    rng.shuffle(nodes)
    rng.shuffle(edges)
    return RawGraph(tuple(nodes), tuple(edges))  # type: ignore[arg-type]


def same_graph(a: GraphSnapshot, b: GraphSnapshot) -> bool:
    return (a.topology_hash, a.shape_hash, a.nodes, a.edges, a.edge_data) == (
        b.topology_hash, b.shape_hash, b.nodes, b.edges, b.edge_data)


def all_hashes(s: GraphSnapshot) -> set[tuple[str, str]]:
    found = {(s.topology_hash, s.shape_hash)}
    for node in s.nodes:
        for child in node.children:
            found |= all_hashes(child)
    return found


def certificate_classes() -> list[tuple[Path, dict[str, object]]]:
    found = []
    for folder in ("reports", "tests"):
        for path in sorted((ROOT / folder).rglob("*.json")):
            try:
                doc = json.loads(path.read_text())
            except (ValueError, UnicodeDecodeError):
                continue
            if not isinstance(doc, dict) or doc.get("kind") not in ("topology", "bench"):
                continue  # a profile's or plan's classes are not capacity classes
            results = doc.get("results")
            classes = results.get("classes") if isinstance(results, dict) else None
            if isinstance(classes, list):
                found += [(path, c) for c in classes if isinstance(c, dict)]
    return found


def could_split(nodes: int) -> bool:
    """Whether any graph of `nodes` nodes can have twin classes beyond the bounds: the
    largest possible (one class of all nodes, every pair of nodes joined by a data edge)."""
    return exceeds([nodes], nodes + nodes * nodes) if nodes > 1 else False


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    differences = 0
    recorded: set[tuple[str, str]] = set()
    files = snapshot_files()
    for path in files:
        stored = load_snapshot(path)
        recorded |= all_hashes(stored)
        bad = [seed for seed in range(args.seeds)
               if not same_graph(snapshot_from_raw(as_raw(stored, random.Random(seed))),
                                 stored)]
        differences += len(bad)
        print(f"{'DIFFERS' if bad else 'same   '} {path.relative_to(ROOT)} "
              f"({stored.node_count} nodes{f'; seeds {bad}' if bad else ''})")
    classes = certificate_classes()
    reproduced = sum(1 for _, c in classes
                     if (c.get("topology_hash"), c.get("shape_hash")) in recorded)
    counts = [c.get("node_count") for _, c in classes]
    largest = max((n for n in counts if isinstance(n, int)), default=0)
    splittable = [(p, c) for p, c in classes
                  if not isinstance(c.get("node_count"), int) or could_split(c["node_count"])]
    differences += len(splittable)
    for path in sorted({p for p, _ in splittable}):
        sizes = sorted({str(c.get("node_count")) for p, c in splittable if p == path})
        print(f"DIFFERS {path.relative_to(ROOT)}: classes of {', '.join(sizes)} nodes could "
              "have twins split")
    print(f"{len(files)} snapshots x {args.seeds} relabellings fingerprinted again; "
          f"{len(classes)} certificate classes, {reproduced} with a recorded snapshot of "
          f"their hashes; the largest has {largest} nodes (top level), "
          f"{len(splittable)} could have twins split")
    print(f"{differences} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
