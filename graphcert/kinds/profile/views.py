"""The terminal view of a profile: per class, the top nodes by share (median
[95% interval], min, max, start offset), the critical path, the largest gaps, the untimed
nodes with their reasons and the tracing overhead; in span mode, per class the replay span,
its distortion and the untraced held device time (no node table). Shared by `graphcert show` and
`graphcert profile`; `--json` prints `ProfileResult.to_json` instead."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from graphcert.cert.compare import CertificateDiff
from graphcert.cert.kind import KindResult
from graphcert.errors import clip
from graphcert.kinds.profile.overhead import HELD, TOUCH_FACTOR, ReplayOverhead
from graphcert.kinds.profile.result import ProfiledClass, ProfileResult
from graphcert.kinds.profile.span import REPLAY_SPAN, SPAN_MODE, ReplaySpan
from graphcert.profiling import NodeFigures
from graphcert.render.certview import CHANGE_STYLE
from graphcert.render.layout import Column, Grid
from graphcert.render.names import demangle, short_name
from graphcert.render.words import Pairs

if TYPE_CHECKING:
    from rich.console import RenderableType

TOP_NODES = 20  # nodes shown per class, by share
TOP_GAPS = 10
FULL_NAME_LIMIT = 2000  # characters of a full demangled name (the HTML table wraps it)

_NODE_COLUMNS = (Column("node", right=True, key=True), Column("kind", key=True),
                 Column("kernel", wrap=True), Column("share", right=True),
                 Column("median [95%]", right=True), Column("min", right=True),
                 Column("max", right=True), Column("start", right=True))
_GAP_COLUMNS = (Column("edge", key=True), Column("gap", right=True), Column("via", wrap=True))
_WHATIF_COLUMNS = (Column("node", right=True, key=True), Column("kernel", wrap=True),
                   Column("traced median", right=True),
                   Column("contribution [95%]", right=True))
WHATIF_TITLE = "what-if: what a replay saves without each node"


def ns(value: float) -> str:
    """A time given in ns, in µs: "12.34 µs"."""
    return f"{value / 1e3:,.2f} µs"


def kernel_name(name: str | None, *, full: bool = False) -> str:
    """A node's kernel name for a view: demangled (in full, or in the short table form
    `at::native::vectorized_elementwise_kernel<…>`); the certificate keeps the mangled one."""
    if not name:
        return "-"
    return clip(demangle(name), FULL_NAME_LIMIT) if full else clip(short_name(name))


def _node_name(n: NodeFigures, full: bool) -> str:
    if n.body_records is None:
        return kernel_name(n.name, full=full)
    return f"{n.name or 'body'}: {n.body_records:,.4g} records a replay"


def node_rows(c: ProfiledClass, top: int = TOP_NODES, *,
              full_names: bool = False) -> list[tuple[str, ...]]:
    """The `top` nodes by share, largest first (ties by index); kernel names demangled
    (`kernel_name`)."""
    if c.profile is None:
        return []
    nodes = sorted(c.profile.nodes, key=lambda n: (-n.share, n.index))[:top]
    return [(str(n.index), n.kind.value, _node_name(n, full_names),
             f"{n.share:.1%}",
             f"{ns(n.median_ns)} [{n.low_ns / 1e3:,.2f}, {n.high_ns / 1e3:,.2f}]",
             ns(n.min_ns), ns(n.max_ns), ns(n.start_offset_ns)) for n in nodes]


def gap_rows(c: ProfiledClass, top: int = TOP_GAPS) -> list[tuple[str, ...]]:
    """The `top` largest gaps on dependent edges."""
    if c.profile is None:
        return []
    gaps = sorted(c.profile.gaps, key=lambda g: (-g.median_ns, g.from_index, g.to_index))
    return [(f"{g.from_index} -> {g.to_index}", ns(g.median_ns),
             "untimed nodes" if g.through_untimed else "edge") for g in gaps[:top]]


def what_if_rows(c: ProfiledClass) -> list[tuple[str, ...]]:
    """One row per attributed node, as attributed (longest traced first): its kernel's short
    name, traced median and what a replay saves without it [95% interval]."""
    if c.what_if is None:
        return []
    by_index = {n.index: n for n in c.profile.nodes} if c.profile is not None else {}
    rows: list[tuple[str, ...]] = []
    for w in c.what_if.nodes:
        node = by_index.get(w.index)
        rows.append((str(w.index), kernel_name(node.name) if node is not None else "-",
                     ns(node.median_ns) if node is not None else "-",
                     f"{ns(w.contribution_ns)} [{w.low_ns / 1e3:,.2f}, "
                     f"{w.high_ns / 1e3:,.2f}]"))
    return rows


def what_if_parts(c: ProfiledClass) -> list[RenderableType]:
    """The what-if table of a class (with how its nodes were chosen), a line saying why it
    did not run, or nothing (a certificate from before what-if attribution)."""
    from rich.text import Text

    w = c.what_if
    if w is None:
        return [] if c.what_if_reason is None else [Text(f"what-if: {c.what_if_reason}")]
    caption = (f"{w.selection}; replay {ns(w.baseline_ns)} [{w.baseline_low_ns / 1e3:,.2f}, "
               f"{w.baseline_high_ns / 1e3:,.2f}] untraced")
    return [Grid(_WHATIF_COLUMNS, what_if_rows(c), title=WHATIF_TITLE, caption=caption)]


def overhead_text(o: ReplayOverhead) -> str:
    """The overhead line: the ratio (with its interval where held), both medians, what
    tracing adds per traced record (a kernel, copy or set run) where counted, and the host's
    launch-call times apart."""
    extra = o.extra_ns_per_record
    per = (f", {extra:+,.0f} ns per traced record ({o.records_per_replay:,.4g} a replay)"
           if extra is not None and o.records_per_replay is not None else "")
    if o.method != HELD:
        text = (f"{o.ratio:.3f}x (traced {ns(o.traced_ns)}, untraced {ns(o.untraced_ns)}"
                f"{per}, {o.samples} replays each)")
        return text + (f"; {FASTER_TRACED}" if o.ratio < 1 else "")
    span = o.ratio_interval
    within = f" [{span[0]:.3f}, {span[1]:.3f}]" if span is not None else ""
    host = (f"; host launch call {ns(o.host_untraced_ns)} untraced, {ns(o.host_traced_ns)} "
            f"traced" if o.host_untraced_ns is not None and o.host_traced_ns is not None
            else "")
    return (f"{o.ratio:.3f}x{within} on the device clock (held launches: traced "
            f"{ns(o.traced_ns)}, untraced {ns(o.untraced_ns)}{per}, {o.samples} replays "
            f"each){host}")


# Why a traced replay could read faster than an untraced one in certificates timed back to
# back: each figure is CUDA events around replays enqueued back to back, so it holds the
# host's launch gaps as well as the device's work, and the two runs' launch gaps differ (an
# untraced replay can start later behind a slower launch). Held launches leave them out.
FASTER_TRACED = ("traced reads faster: both figures are events around replays enqueued back to "
                 "back, so the host's launch gaps are in them; read the span for the device time")


MIN_RUN = 4  # consecutive node indices shown as a range from this many on


def path_text(path: Sequence[int]) -> str:
    """A critical path for a reader: runs of at least MIN_RUN consecutive node indices (a
    serial chain's) as `first..last (N nodes)`, the rest one by one (`0 -> 1 -> 3..998 (996
    nodes) -> 999`); the certificate's JSON keeps every index."""
    parts: list[str] = []
    i = 0
    while i < len(path):
        j = i
        while j + 1 < len(path) and path[j + 1] == path[j] + 1:
            j += 1
        if j - i + 1 >= MIN_RUN:
            parts.append(f"{path[i]}..{path[j]} ({j - i + 1:,} nodes)")
        else:
            parts.extend(str(n) for n in path[i:j + 1])
        i = j + 1
    return " -> ".join(parts)


def class_lines(c: ProfiledClass) -> list[tuple[str, str]]:
    """Key/value lines of one class: the replay's figures, the path, the overhead (span
    mode: `span_lines`)."""
    p = c.profile
    if p is None:
        return span_lines(c)
    over = (overhead_text(c.overhead) if c.overhead is not None
            else f"not measured: {c.overhead_reason}")
    return [("class", f"{c.label} (captured for n={c.size:,}, topology "
                      f"{c.topology_hash[:12]})"),
            ("replay", f"span {ns(p.span_ns)}, node sum {ns(p.sum_ns)}, parallelism "
                       f"{p.parallelism:.2f}, {p.replays} replays ({p.incomplete_replays} "
                       f"incomplete, {p.dropped} records dropped)"),
            ("critical path", f"{ns(p.critical_path_ns)}: {path_text(p.critical_path)}"),
            ("overhead", over),
            *(("distorted", text) for text in [distorted_text(c)] if text),
            *((f"untimed {u.index}", f"{u.kind.value}: {u.reason}") for u in p.untimed)]


def distorted_text(c: ProfiledClass) -> str:
    """Which kernels tracing distorts by more than 1/TOUCH_FACTOR (the nodes the overhead's
    note numbers), by short name with counts: `chain_store ×16`; "" where none."""
    if c.overhead is None or c.profile is None:
        return ""
    touched = set(c.overhead.touched(c.profile))
    counts: dict[str, int] = {}
    for n in c.profile.nodes:
        if n.index in touched:
            name = kernel_name(n.name) if n.name else n.kind.value
            counts[name] = counts.get(name, 0) + 1
    if not counts:
        return ""
    kinds = ", ".join(f"{name} ×{k}" for name, k in sorted(counts.items(), key=lambda x: -x[1]))
    return (f"{len(touched)} of {len(c.profile.nodes)} timed nodes read over "
            f"{1 / TOUCH_FACTOR:.0%} slow traced: {kinds}")


def span_text(s: ReplaySpan) -> str:
    """The replay span line: median [95%], and how many replays left a record."""
    return (f"{ns(s.median_ns)} [{s.low_ns / 1e3:,.2f}, {s.high_ns / 1e3:,.2f}] "
            f"(GRAPH_TRACE, {s.records} records of {s.replays} replays, {s.dropped} dropped)")


def distortion_text(s: ReplaySpan) -> str:
    """The distortion line: traced held / untraced held, with its interval."""
    span = s.distortion_interval
    within = f" [{span[0]:.3f}, {span[1]:.3f}]" if span is not None else ""
    return (f"{s.distortion:.3f}x{within} on the device clock (held launches: traced "
            f"{ns(s.traced_ns)}, untraced {ns(s.untraced_ns)})")


def span_lines(c: ProfiledClass) -> list[tuple[str, str]]:
    """Key/value lines of a span-mode class: replay span, distortion, untraced device time."""
    s = c.span
    head = ("class", f"{c.label} (captured for n={c.size:,}, topology {c.topology_hash[:12]})")
    if s is None:
        return [head, ("replay span", f"not measured: {c.overhead_reason}")]
    u_lo, u_hi = s.untraced_interval
    return [head, ("replay span", span_text(s)), ("distortion", distortion_text(s)),
            ("untraced", f"{ns(s.untraced_ns)} [{u_lo / 1e3:,.2f}, {u_hi / 1e3:,.2f}] held "
                         f"device time of a replay")]


def profile_view(ref: str, result: ProfileResult) -> list[RenderableType]:
    """A profile's results (of workload `ref`): per class its lines, top nodes and largest
    gaps, then notes."""
    from rich.text import Text

    out: list[RenderableType] = [Pairs([
        ("workload", clip(ref)),
        ("replays", f"{result.replays} per class, CUPTI {result.cupti_version}"
                    + _l2(result.flush_l2)
                    + (", span mode (GRAPH_TRACE only)" if result.mode == SPAN_MODE else ""))])]
    for c in result.classes:
        out.append(Pairs(class_lines(c)))
        if c.profile is None:
            continue
        shown = min(TOP_NODES, len(c.profile.nodes))
        out.append(Grid(_NODE_COLUMNS, node_rows(c),
                        title=f"top {shown} of {len(c.profile.nodes)} timed nodes by share"))
        out += what_if_parts(c)
        if c.profile.gaps:
            out.append(Grid(_GAP_COLUMNS, gap_rows(c), title="largest gaps on dependent edges"))
    out += [Text(f"note: {n}") for n in result.notes]
    return out


def _l2(flush_l2: bool | None) -> str:
    if flush_l2 is None:
        return ""
    return ", L2 cleared before each replay" if flush_l2 else ", L2 warm"


def show_view(ref: str, result: KindResult) -> list[RenderableType]:
    """What `graphcert show` draws of a profile certificate's results."""
    assert isinstance(result, ProfileResult)
    return profile_view(ref, result)


_DIFF_COLUMNS = (Column("class", key=True), Column("node", right=True, key=True),
                 Column("kernel", wrap=True), Column("a", right=True), Column("b", right=True),
                 Column("diff", right=True), Column("change"))


def _row_name(index: int | None, name: str) -> str:
    if index is not None:
        return str(index)
    return "span" if name == REPLAY_SPAN else "path"


def diff_view(diff: CertificateDiff) -> list[RenderableType]:
    """What `graphcert diff` draws of two profiles: nodes by canonical index."""
    from rich.text import Text

    return [Grid(_DIFF_COLUMNS, [
        (n.label, _row_name(n.index, n.name),
         n.name if n.index is None else kernel_name(n.name),
         f"{n.baseline_ns / 1e3:,.2f} µs", f"{n.current_ns / 1e3:,.2f} µs", f"{n.diff:+.1%}",
         Text(n.change.value, style=CHANGE_STYLE[n.change])) for n in diff.nodes or ()])]
