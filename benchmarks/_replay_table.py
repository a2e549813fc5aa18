"""The pure half of benchmarks/replay_methods.py: each method's row (median per replay, its
95% interval, the count), the table printed, replay spans from CUPTI records, and the L2
flush's extra per graph node. No CUDA: the CPU tests (tests/benchmarks) cover it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from graphcert.orderstats import median_interval

# The rows, in the order they are printed (key, method). The ratios each row is read
# against: the held, settled, L2-warm row (3) is the reference every distortion is taken to.
METHODS: tuple[tuple[str, str], ...] = (
    ("1", "back-to-back events, fresh context, L2 warm"),
    ("2", "back-to-back events, settled context, L2 warm"),
    ("3", "held events, settled, L2 warm"),
    ("3r", "held events again, after rows 4-5 (state check)"),
    ("3n", "held events, graph instantiated after settling"),
    ("3s", "held events on row 1-2's stream"),
    ("3k", "held events, first thing in the kernel-trace child"),
    ("4", "held events, settled, L2 flushed"),
    ("5", "hot batch (bench's K) behind one blocker, per launch"),
    ("5b", "hot batch (K=10) behind one blocker, per launch"),
    ("6", "GRAPH_TRACE span, held replays"),
    ("7", "held events, GRAPH_TRACE on"),
    ("8", "kernel-traced span (first start..last end), held"),
    ("9", "held events, kernel tracing on"),
    ("10a", "host: one launch call, untraced"),
    ("10b", "host: one launch call, kernel-traced"),
)
REFERENCE = "3"
RATIO_TO_REFERENCE = frozenset({"1", "2", "3r", "3n", "3s", "3k", "4", "5", "5b", "6", "7", "8",
                                "9"})

# The steps of an --orders sequence (benchmarks/_replay_gpu.py order_job runs them).
ORDER_STEPS = {"B": "back-to-back on the graph's own stream", "b": "back-to-back on the "
               "harness's stream", "H": "held on the harness's stream", "N": "open a "
               "harness, settling the context", "U": "open a harness, not settling",
               "R": "instantiate the graph again (later steps launch the new one)"}


@dataclass(frozen=True)
class Figure:
    """One method's samples summarised: median and 95% interval of the median (seconds), the
    count; or `skipped` (a reason) where the method could not run."""

    median_s: float = float("nan")
    low_s: float = float("nan")
    high_s: float = float("nan")
    count: int = 0
    skipped: str | None = None
    note: str = ""

    @classmethod
    def of(cls, samples_s: Sequence[float], note: str = "") -> Figure:
        """The figure of `samples_s` (seconds); a Figure skipped with a reason when empty."""
        if not samples_s:
            return cls(skipped="no samples", note=note)
        low, med, high = median_interval(samples_s)
        return cls(med, low, high, len(samples_s), note=note)

    @classmethod
    def skip(cls, reason: str) -> Figure:
        return cls(skipped=reason)


def figure_json(raw: Mapping[str, object]) -> Figure:
    """A Figure from what a child process sent: {"samples": [...], "note": ...} or
    {"skipped": reason}."""
    if "skipped" in raw:
        return Figure.skip(str(raw["skipped"]))
    samples = raw.get("samples", [])
    assert isinstance(samples, list)
    return Figure.of([float(x) for x in samples], str(raw.get("note", "")))


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f}"


def format_rows(title: str, figures: Mapping[str, Figure]) -> list[str]:
    """The table of one subject: a line per method present in `figures` (METHODS order),
    median and interval in µs, the count, and the ratio to row 3 where both exist."""
    lines = [title, f"  {'#':>3}  {'method':<52} {'median µs':>11}  {'95% interval µs':<21}"
                    f" {'n':>5}  note"]
    ref = figures.get(REFERENCE)
    ref_s = ref.median_s if ref is not None and ref.skipped is None else None
    for key, method in METHODS:
        fig = figures.get(key)
        if fig is None:
            continue
        if fig.skipped is not None:
            lines.append(f"  {key:>3}  {method:<52} {'-':>11}  {'':<21} {0:>5}  "
                         f"skipped: {fig.skipped}")
            continue
        notes = [fig.note] if fig.note else []
        if key in RATIO_TO_REFERENCE and ref_s and key != REFERENCE:
            notes.insert(0, f"x{fig.median_s / ref_s:.3f} of row {REFERENCE}")
        interval = f"[{_us(fig.low_s)}, {_us(fig.high_s)}]"
        lines.append(f"  {key:>3}  {method:<52} {_us(fig.median_s):>11}  {interval:<21}"
                     f" {fig.count:>5}  {'; '.join(notes)}".rstrip())
    return lines


def launch_spans(records: Iterable[tuple[int, int, int]], skip_first: int = 0
                 ) -> tuple[list[float], int]:
    """Seconds from first start to last end of each launch's records ((correlation id,
    start ns, end ns) of a graph's kernel records: one correlation id per cuGraphLaunch),
    in launch order, the first `skip_first` launches (warm-up) left out; only launches with
    the most common record count (complete ones) are kept. Also that count."""
    groups: dict[int, list[tuple[int, int]]] = {}
    for corr, start, end in records:
        groups.setdefault(corr, []).append((start, end))
    if not groups:
        return [], 0
    full = Counter(len(g) for g in groups.values()).most_common(1)[0][0]
    ordered = sorted(groups.values(), key=lambda g: min(s for s, _ in g))[skip_first:]
    spans = [(max(e for _, e in g) - min(s for s, _ in g)) * 1e-9
             for g in ordered if len(g) == full]
    return spans, full


@dataclass(frozen=True)
class FlushCase:
    """One graph of the flush experiment: its label, node count, and held device time per
    launch (seconds) with L2 warm and with L2 flushed before each launch."""

    label: str
    nodes: int
    warm: Figure
    flushed: Figure

    @property
    def extra_per_node_s(self) -> float:
        """What the flush adds to one launch, per node (median flushed - median warm)."""
        return (self.flushed.median_s - self.warm.median_s) / max(self.nodes, 1)


def format_flush(cases: Sequence[FlushCase]) -> list[str]:
    """The flush experiment's table: warm and flushed medians per graph, the flush's extra
    per launch and per node (ns)."""
    lines = ["L2 flush experiment (held launches, settled; extra = flushed - warm)",
             f"  {'graph':<34} {'nodes':>6} {'warm µs':>10} {'flushed µs':>11} "
             f"{'extra µs':>9} {'extra ns/node':>14}"]
    for c in cases:
        if c.warm.skipped is not None or c.flushed.skipped is not None:
            lines.append(f"  {c.label:<34} {c.nodes:>6}  skipped: "
                         f"{c.warm.skipped or c.flushed.skipped}")
            continue
        extra = c.flushed.median_s - c.warm.median_s
        lines.append(f"  {c.label:<34} {c.nodes:>6} {_us(c.warm.median_s):>10} "
                     f"{_us(c.flushed.median_s):>11} {_us(extra):>9} "
                     f"{c.extra_per_node_s * 1e9:>14.1f}")
    return lines
