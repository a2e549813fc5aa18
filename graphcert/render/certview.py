"""Rich views of one certificate (`graphcert show`) and of two compared (`graphcert diff`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graphcert.cert.compare import CertificateDiff, Change, fmt_seconds, hash_change, short_hash

if TYPE_CHECKING:
    from rich.console import RenderableType

_CHANGE_STYLE = {Change.SAME: "", Change.FASTER: "green", Change.SLOWER: "bold red",
                 Change.AMBIGUOUS: "yellow"}


def _kv(rows: list[tuple[str, str]]) -> RenderableType:
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")
    for key, value in rows:
        grid.add_row(Text(key), Text(value))
    return grid


def _opt(value: Any, none: str = "-") -> str:
    return none if value is None else str(value)


def header_rows(cert: Mapping[str, Any], path: str, staleness: str) -> list[tuple[str, str]]:
    """Key/value lines about a certificate: what, where, when, on what."""
    env, wl, verdict = cert["environment"], cert["workload"], cert["verdict"]
    gpu, git = env["gpu"], env["git"]
    commit = "-" if git.get("commit") is None else git["commit"][:12] + (
        " (dirty)" if git.get("dirty") else "")
    return [
        ("certificate", f"{cert['kind']}  {path}"),
        ("workload", f"{wl['name']} ({wl['ref']}), sources {staleness}"),
        ("verdict", "PASS" if verdict["passed"] else "FAIL"),
        ("created", f"{cert['created']} by graphcert {cert['tool']['version']}"),
        ("gpu", f"{gpu['name']} ({_opt(gpu.get('uuid'))}), compute capability "
                f"{gpu['compute_capability']}, {_opt(gpu.get('sm_count'))} SMs"),
        ("driver", f"{_opt(env['driver_version'])}, CUDA driver API "
                   f"{_opt(env['cuda_driver_api'])}, cuda-bindings "
                   f"{_opt(env['cuda_bindings_version'])}, NVRTC {_opt(env['nvrtc_version'])}"),
        ("host", f"{env['host']}, Python {env['python']}, {env['platform']}"),
        ("git", commit),
        ("digest", cert["digest"]),
    ]


def show_renderables(cert: Mapping[str, Any], path: str, staleness: str
                     ) -> list[RenderableType]:
    """Everything `graphcert show` prints for one certificate."""
    from rich.text import Text

    out: list[RenderableType] = [_kv(header_rows(cert, path, staleness))]
    reasons = cert["verdict"]["reasons"]
    out += [Text(f"  - {r}") for r in reasons]
    if cert["kind"] == "topology":
        out += _topology_view(cert["results"])
    else:
        out += _bench_view(cert["results"])
    return out


def _samples_ok(cls: Mapping[str, Any]) -> str:
    samples = cls.get("samples", [])
    flags = ("topology_equal", "shape_equal", "output_equal", "param_update_output_equal",
             "node_count_matches_prediction")
    ok = sum(1 for s in samples if s.get("error") is None and
             all(s.get(f) is not False for f in flags))
    return f"{ok}/{len(samples)}"


def _topology_view(results: Mapping[str, Any]) -> list[RenderableType]:
    from rich.table import Table
    from rich.text import Text

    table = Table(header_style="bold", box=None, pad_edge=False)
    for name in ("capacity", "status", "nodes", "counts", "topology", "shape", "padding",
                 "samples ok", "reason"):
        table.add_column(name, overflow="fold")
    for c in results["classes"]:
        counts = ", ".join(f"{k} {v}" for k, v in sorted((c.get("counts") or {}).items()))
        waste = c.get("padding_waste") or {}
        table.add_row(str(c["capacity"]), c["status"], _opt(c.get("node_count")), counts,
                      short_hash(c.get("topology_hash")), short_hash(c.get("shape_hash")),
                      f"{waste.get('min', '-')}..{waste.get('max', '-')}", _samples_ok(c),
                      _opt(c.get("reason"), ""))
    out: list[RenderableType] = [table]
    for t in results.get("transitions", []):
        out.append(Text(f"class {t['from']} -> {t['to']}: {t['change']}"))
    return out


def _speedup(iv: Mapping[str, Any] | None) -> str:
    if iv is None:
        return "-"
    return f"{iv['median']:.2f}x [{iv['low']:.2f}, {iv['high']:.2f}]"


def _median(q: Mapping[str, Any] | None) -> str:
    return "-" if q is None else f"{fmt_seconds(q['median_s'])} ±{q['noise']:.1%}"


def _bench_view(results: Mapping[str, Any]) -> list[RenderableType]:
    from rich.table import Table
    from rich.text import Text

    table = Table(header_style="bold", box=None, pad_edge=False)
    for name in ("n", "capacity", "nodes", "stream e2e", "graph e2e", "e2e speedup",
                 "enqueue speedup", "device speedup", "break-even", "throttled"):
        table.add_column(name, overflow="fold")
    for s in results["sizes"]:
        be = s.get("break_even_launches")
        table.add_row(str(s["n"]), str(s["capacity"]), str(s["node_count"]),
                      _median(s["stream"]["end_to_end"]), _median(s["graph"]["end_to_end"]),
                      _speedup(s["speedup"]["end_to_end"]),
                      _speedup(s["speedup"]["host_enqueue"]),
                      _speedup(s["speedup"].get("device")),
                      "-" if be is None else f"{be:.0f} launches",
                      "yes" if s["throttled"] else "no")
    clock = results.get("clock", {})
    def mhz(value: Any) -> str:
        return f"{value:.0f}" if isinstance(value, (int, float)) else _opt(value)

    return [table, Text(f"SM clock {mhz(clock.get('before_mhz'))} -> "
                        f"{mhz(clock.get('after_mhz'))} MHz")]


def diff_renderables(diff: CertificateDiff, a: str, b: str) -> list[RenderableType]:
    """Everything `graphcert diff` prints for two certificates (b against a)."""
    from rich.table import Table
    from rich.text import Text

    out: list[RenderableType] = [Text(f"{diff.kind} certificates: a = {a}, b = {b}",
                                      style="bold")]
    for title, rows in (("environment", diff.environment), ("workload", diff.workload)):
        if not rows:
            out.append(Text(f"{title}: identical"))
            continue
        out.append(Text(f"{title}:"))
        out += [Text(f"  {f}: {_opt(x)} -> {_opt(y)}") for f, x, y in rows]
    va, vb = ("PASS" if v else "FAIL" for v in diff.verdict)
    out.append(Text(f"verdict: {va} -> {vb}"))
    if diff.kind == "topology":
        table = Table(header_style="bold", box=None, pad_edge=False)
        for name in ("capacity", "change", "topology a -> b", "shape a -> b", "nodes"):
            table.add_column(name, overflow="fold")
        for c in diff.classes:
            style = "" if c.change == "same" else "bold red" if c.change == "topology" \
                else "yellow"
            table.add_row(str(c.capacity), Text(c.change, style=style),
                          hash_change(c.baseline_topology, c.current_topology),
                          hash_change(c.baseline_shape, c.current_shape),
                          c.describe().split("nodes ", 1)[-1] if c.change in
                          ("topology", "shape") else _counts(c.current_counts))
        out.append(table)
        for c in diff.classes:
            out += [Text(f"  class {c.capacity}: {line}") for line in c.node_diff]
    else:
        table = Table(header_style="bold", box=None, pad_edge=False)
        for name in ("n", "side", "quantity", "a", "b", "diff", "noise", "change"):
            table.add_column(name, overflow="fold")
        for t in diff.timings:
            change = t.change.value + (f" ({t.reason})" if t.reason else "")
            table.add_row(str(t.n), t.side, t.quantity, fmt_seconds(t.baseline_s),
                          fmt_seconds(t.current_s), f"{t.diff:+.1%}", f"{t.threshold:.1%}",
                          Text(change, style=_CHANGE_STYLE[t.change]))
        out.append(table)
    out += [Text(f"note: {n}") for n in diff.notes]
    return out


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"
