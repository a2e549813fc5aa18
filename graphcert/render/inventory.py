"""Rich rendering of snapshots (table and tree). Pure: no CUDA import.

Output is deterministic for a given snapshot and console width, so tests compare it with
golden files.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from graphcert.model import (
    KINDS,
    GraphSnapshot,
    NodeKind,
    NodeRecord,
)
from graphcert.model.jsontext import short_hash
from graphcert.model.params import PARAM_VALUES, format_param
from graphcert.render.layout import Column, Grid
from graphcert.render.names import demangle, short_name
from graphcert.render.words import Outline

MAX_DEPS_SHOWN = 6
_DIMENSIONS = ("grid", "block", "cluster_dim")
# The launch columns of the table and tree; a node shows those its kind hashes (KINDS).
_LAUNCH_FIELDS = ("grid", "block", "shared_mem_bytes")


def format_bytes(n: object) -> str:
    """Exact below 1 KiB, else IEC units with at most one decimal ("1.5 MiB")."""
    if not isinstance(n, int) or isinstance(n, bool):
        return "-" if n is None else str(n)
    if abs(n) < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if abs(value) < 1024 or unit == "TiB":
            text = f"{value:.1f}".removesuffix(".0")
            return f"{text} {unit}"
    raise AssertionError("unreachable")


def format_dim(value: object) -> str:
    """[8, 1, 1] -> "8x1x1"; missing -> "-"."""
    if isinstance(value, list) and value:
        return "x".join(str(v) for v in value)
    return "-" if value is None else str(value)


def format_value(field: str, value: object) -> str:
    """One attribute value as a table cell."""
    if value is None:
        return "-"
    if field in _DIMENSIONS:
        return format_dim(value)
    if field == "deps" and isinstance(value, list):
        return _deps_text([str(v) for v in value])
    if field in ("bytes", "shared_mem_bytes", "width_bytes"):
        return format_bytes(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def operation(node: NodeRecord, *, full_name: bool = False) -> str:
    """What a node does, in a few words: the kernel name, "memcpy DtoH", "memset value=0"...

    Kernel names are demangled: in full with `full_name`, else in the short table form.
    """
    a = node.attrs
    kind = node.kind
    if kind is NodeKind.KERNEL:
        if node.name:
            text = demangle(node.name) if full_name else short_name(node.name)
        else:
            text = "(unnamed kernel)"
        flags = []
        if a.get("cooperative"):
            flags.append("cooperative")
        cluster = a.get("cluster_dim")
        # The driver reports 0x0x0 (and a 1x1x1 cluster is none either) for no cluster.
        if isinstance(cluster, list) and any(c not in (0, 1) for c in cluster
                                             if isinstance(c, int)):
            flags.append(f"cluster {format_dim(cluster)}")
        if a.get("priority"):
            flags.append(f"priority {a['priority']}")
        return text + (f" [{', '.join(flags)}]" if flags else "")
    if kind is NodeKind.MEMSET:
        text = f"memset value={format_value('value', a.get('value'))}"
        if a.get("element_size") is not None:
            text += f" elem={a['element_size']}B"
        return text
    if kind is NodeKind.MEMCPY:
        return f"memcpy {a.get('direction') or '(direction unknown)'}"
    if kind is NodeKind.GRAPH:
        n = sum(c.node_count for c in node.children)
        return f"child graph ({plural(n, 'node')})" if node.children else "child graph"
    if kind is NodeKind.CONDITIONAL:
        text = f"conditional {a.get('type') or '(type unknown)'}"
        if node.children:
            return text + f" ({plural(len(node.children), 'body', 'bodies')})"
        if a.get("size") is not None:
            return text + f" ({plural(a['size'], 'body', 'bodies')}, not read)"
        return text + " (bodies not read)"
    return KINDS[kind].label.format_map(_Fields({k: v for k, v in a.items() if v is not None}))


class _Fields(dict[str, Any]):
    """A node's attrs for a label template; a field it lacks shows as "?"."""

    def __missing__(self, key: str) -> str:
        return "?"


def plural(n: object, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _deps_text(labels: list[str]) -> str:
    if not labels:
        return "-"
    shown = labels[:MAX_DEPS_SHOWN]
    more = len(labels) - len(shown)
    return ", ".join(shown) + (f", +{more} more" if more else "")


def _child_prefix(node: NodeRecord, parent: str, j: int) -> str:
    # A child graph has one child: "4.0" is node 0 inside node 4. Conditional bodies are
    # numbered: "5[1].0" is node 0 of body 1 of node 5.
    return f"{parent}." if node.kind is NodeKind.GRAPH else f"{parent}[{j}]."


def _dep_labels(s: GraphSnapshot, node: NodeRecord, prefix: str) -> list[str]:
    """Predecessor labels; an edge with CUDA 13 edge data says so ("3 (edge type 1, port
    1->0)")."""
    labels = [f"{prefix}{d}" for d in node.deps]
    if s.edge_data:
        data = {a: d for a, b, d in s.edge_data if b == node.index}
        labels = [f"{lab} (edge type {data[d].type}, port {data[d].from_port}->"
                  f"{data[d].to_port})" if d in data else lab
                  for lab, d in zip(labels, node.deps, strict=True)]
    return labels


def _rows(s: GraphSnapshot, prefix: str) -> Iterator[tuple[str, NodeRecord, list[str]]]:
    for node in s.nodes:
        label = f"{prefix}{node.index}"
        yield label, node, _dep_labels(s, node, prefix)
        for j, child in enumerate(node.children):
            yield from _rows(child, _child_prefix(node, label, j))


_HEADERS = ("#", "kind", "kernel / operation", "grid", "block", "smem", "bytes", "deps")
_RIGHT = {"#", "grid", "block", "smem", "bytes"}
# Past this many rows the table is laid out by plain string padding: rich measures every
# cell, which takes seconds for a 10,000-node graph. Same layout, only no folding.
LARGE_TABLE_ROWS = 1000


def _launch_cells(node: NodeRecord) -> tuple[str, str, str]:
    """grid, block, shared memory cells: blank for a kind that has no such field."""
    shape = KINDS[node.kind].shape
    a = node.attrs
    return tuple(  # type: ignore[return-value]
        ("" if key not in shape else format_bytes(a.get(key)) if key == "shared_mem_bytes"
         else format_dim(a.get(key))) for key in _LAUNCH_FIELDS)


def _table_rows(snapshot: GraphSnapshot) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    # Look-alike nodes share one attrs dict (snapshot_from_raw and load_snapshot intern
    # them), so their middle cells are made once: 10^4-node chains render fast.
    middle: dict[tuple[int, NodeKind], tuple[str, ...]] = {}
    for label, node, deps in _rows(snapshot, ""):
        key = (id(node.attrs), node.kind)
        cells = middle.get(key) if not node.children else None
        if cells is None:
            a = node.attrs
            cells = (node.kind.value, operation(node), *_launch_cells(node),
                     format_bytes(a["bytes"]) if a.get("bytes") is not None else "")
            if not node.children:
                middle[key] = cells
        rows.append((label, *cells, _deps_text(deps)))
    return rows


# A node's index names its row. On a narrow terminal, columns nobody filled leave the table
# first, then the dependencies (a list), then the widest launch columns; the kind and the
# kernel or operation (a name: never split) stay longest (render/layout.py).
INVENTORY_COLUMNS = tuple(
    Column(h, right=h in _RIGHT, wrap=h in ("kernel / operation", "deps"), key=h == "#",
           keep={"kind": 1, "kernel / operation": 2, "deps": -1}.get(h, 0),
           sep=", " if h == "deps" else None)
    for h in _HEADERS)


def inventory_table(snapshot: GraphSnapshot) -> Grid:
    """Every node (child graphs and conditional bodies included, with dotted indices)."""
    return Grid(INVENTORY_COLUMNS, _table_rows(snapshot), gap=3)


def plain_inventory_table(snapshot: GraphSnapshot) -> Text:
    """The inventory table laid out like inventory_table, fast for any size (no folding)."""
    return plain_layout(_HEADERS, _table_rows(snapshot), _RIGHT)


def plain_layout(headers: Sequence[str], rows: Sequence[Sequence[str]],
                 right: Collection[str]) -> Text:
    """Rows laid out as a rich Table with box SIMPLE_HEAD, no edges, lays them out where no
    cell folds (columns in `right` right-justified), in one pass for any number of rows."""
    table = [headers, *rows]
    columns = []
    widths = []
    for i, header in enumerate(headers):
        cells = [row[i] for row in table]
        if all(c.isascii() for c in cells):  # one cell per character: str pads in C
            width = max(map(len, cells))
            pad = str.rjust if header in right else str.ljust
            columns.append([pad(c, width) for c in cells])
        else:
            width = max(map(cell_len, cells))
            columns.append([" " * (width - cell_len(c)) + c if header in right
                            else c + " " * (width - cell_len(c)) for c in cells])
        widths.append(width)
    lines = ["   ".join(cells).rstrip() for cells in zip(*columns, strict=True)]
    rule = "\u2500" * (sum(widths) + 3 * (len(widths) - 1))
    return Text("\n".join([lines[0], rule, *lines[1:]]))


def print_plain(console: Console, text: Text) -> None:
    """Print text laid out already (plain_layout). Unstyled: where nothing records it,
    rich's render pipeline would only copy it (a sixth of `inventory FILE` for 10,000
    nodes), so it is written as it is."""
    if console.record or console.is_jupyter:
        console.print(text, soft_wrap=True)
    else:
        console.file.write(text.plain + "\n")


def counts_line(snapshot: GraphSnapshot) -> str:
    """"7 nodes (+2 nested): kernel 4, memset 1, graph 1, ..." (top level, by kind)."""
    top = snapshot.counts()
    nested = sum(snapshot.counts(recursive=True).values()) - snapshot.node_count
    parts = ", ".join(f"{k} {v}" for k, v in top.items()) or "empty graph"
    more = f" (+{nested} nested)" if nested else ""
    return f"{plural(snapshot.node_count, 'node')}{more}: {parts}"


def fingerprint_line(snapshot: GraphSnapshot) -> str:
    """Both fingerprints, short form."""
    return (f"topology {short_hash(snapshot.topology_hash)}  "
            f"shape {short_hash(snapshot.shape_hash)}")


def meta_line(snapshot: GraphSnapshot) -> str | None:
    """Free-form metadata (workload, capacity, n, ...) as key=value pairs, if any."""
    items = [f"{k}={v}" for k, v in snapshot.meta.items()
             if isinstance(v, (str, int, float, bool)) or v is None]
    return "  ".join(items) if items else None


def summary_text(snapshot: GraphSnapshot) -> Text:
    """Counts by kind, fingerprints and metadata, one per line."""
    lines = [counts_line(snapshot), fingerprint_line(snapshot)]
    meta = meta_line(snapshot)
    if meta:
        lines.append(meta)
    lines += [f"note: {note}" for note in snapshot.notes]
    return Text("\n".join(lines))


def _node_label(label: str, node: NodeRecord, deps: list[str]) -> str:
    a = node.attrs
    parts = [f"{label} {node.kind.value}: {operation(node, full_name=True)}"]
    if "grid" in KINDS[node.kind].shape:
        grid, block, smem = _launch_cells(node)
        parts.append(f"grid {grid} block {block} smem {smem}")
    if a.get("bytes") is not None:
        parts.append(format_bytes(a["bytes"]))
    if isinstance(a.get(PARAM_VALUES), list):
        parts.append(params_text(a[PARAM_VALUES]))
    if deps:
        parts.append(f"after {_deps_text(deps)}")
    return "  ".join(parts)


MAX_PARAM_TEXT = 24


def params_text(values: Sequence[object]) -> str:
    """"params (0x7f0a00000000, 1024, hex:0a0b…)": each value as diff shows it, long byte
    strings cut (the snapshot holds them whole)."""
    shown = []
    for v in values:
        text = format_param(v)
        shown.append(text if len(text) <= MAX_PARAM_TEXT else text[:MAX_PARAM_TEXT - 1] + "…")
    return f"params ({', '.join(shown)})"


def _add_nodes(tree: Outline, s: GraphSnapshot, prefix: str) -> None:
    for node in s.nodes:
        label = f"{prefix}{node.index}"
        branch = tree.add(_node_label(label, node, _dep_labels(s, node, prefix)))
        for j, child in enumerate(node.children):
            inner = _child_prefix(node, label, j)
            if node.kind is NodeKind.GRAPH:
                _add_nodes(branch, child, inner)
            else:
                body = branch.add(f"body {j}: {plural(child.node_count, 'node')}, "
                                  f"{fingerprint_line(child)}")
                _add_nodes(body, child, inner)


def inventory_tree(snapshot: GraphSnapshot) -> Outline:
    """The graph as a tree: nodes in canonical order, child graphs and bodies nested."""
    tree = Outline(f"graph ({fingerprint_line(snapshot)})")
    _add_nodes(tree, snapshot, "")
    return tree


def render_inventory(console: Console, snapshot: GraphSnapshot, *, tree: bool = False) -> None:
    """Print a snapshot as the `inventory` command shows it: table (or tree), then summary."""
    if tree:
        console.print(inventory_tree(snapshot))
    elif sum(snapshot.counts(recursive=True).values()) > LARGE_TABLE_ROWS:
        print_plain(console, plain_inventory_table(snapshot))
    else:
        console.print(inventory_table(snapshot))
    console.print(summary_text(snapshot))


__all__ = [
    "counts_line",
    "fingerprint_line",
    "format_bytes",
    "format_dim",
    "format_value",
    "inventory_table",
    "inventory_tree",
    "params_text",
    "meta_line",
    "operation",
    "plain_inventory_table",
    "plain_layout",
    "print_plain",
    "render_inventory",
    "summary_text",
]
