"""A snapshot as Graphviz DOT text (for pictures in the HTML report). Pure.

Nodes are labelled with their dotted inventory index, kind and what they do (short kernel
names); child graphs and conditional bodies are drawn as nested clusters.
"""

from __future__ import annotations

from graphcert.model import GraphSnapshot, NodeKind, NodeRecord
from graphcert.render.inventory import format_dim, operation

_SHAPE = {NodeKind.KERNEL: "box", NodeKind.MEMSET: "parallelogram",
          NodeKind.MEMCPY: "parallelogram", NodeKind.CONDITIONAL: "diamond",
          NodeKind.GRAPH: "folder", NodeKind.EMPTY: "point"}
KIND_FILL = {NodeKind.KERNEL: "#dbeafe", NodeKind.MEMSET: "#fef3c7", NodeKind.MEMCPY: "#fde68a",
             NodeKind.CONDITIONAL: "#fce7f3", NodeKind.GRAPH: "#e5e7eb"}


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _label(label: str, node: NodeRecord) -> str:
    text = f"{label} {operation(node)}"
    if node.kind is NodeKind.KERNEL:
        text += f"\ngrid {format_dim(node.attrs.get('grid'))} " \
                f"block {format_dim(node.attrs.get('block'))}"
    return text


def _emit(s: GraphSnapshot, prefix: str, ident: str, lines: list[str], depth: int) -> None:
    pad = "  " * depth
    for node in s.nodes:
        label = f"{prefix}{node.index}"
        name = f"{ident}n{node.index}"
        attrs = [f"label={_quote(_label(label, node))}",
                 f"shape={_SHAPE.get(node.kind, 'ellipse')}", "style=filled",
                 f"fillcolor={_quote(KIND_FILL.get(node.kind, '#f3f4f6'))}"]
        lines.append(f"{pad}{name} [{', '.join(attrs)}];")
        for dep in node.deps:
            lines.append(f"{pad}{ident}n{dep} -> {name};")
        for j, child in enumerate(node.children):
            sub = f"{ident}n{node.index}c{j}_"
            inner = f"{label}." if node.kind is NodeKind.GRAPH else f"{label}[{j}]."
            title = "child graph" if node.kind is NodeKind.GRAPH else f"body {j}"
            lines.append(f"{pad}subgraph cluster_{sub} {{")
            lines.append(f"{pad}  label={_quote(f'{label} {title}')}; style=dashed;")
            _emit(child, inner, sub, lines, depth + 1)
            lines.append(f"{pad}}}")
            if child.nodes:  # tie the cluster to its owner so the layout keeps them close
                lines.append(f"{pad}{name} -> {sub}n{child.nodes[0].index} "
                             "[style=dotted, arrowhead=none];")


def snapshot_to_dot(snapshot: GraphSnapshot, title: str = "graph") -> str:
    """DOT text of the snapshot, deterministic for a given snapshot."""
    lines = ["digraph G {",
             f"  label={_quote(title)}; labelloc=t; rankdir=TB;",
             '  node [fontname="Helvetica", fontsize=10];',
             '  edge [color="#555555"];']
    _emit(snapshot, "", "", lines, 1)
    lines.append("}")
    return "\n".join(lines) + "\n"
