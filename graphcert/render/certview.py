"""Rich views of one certificate (`graphcert show`) and of two compared (`graphcert diff`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import CertificateDiff, Change, hash_change
from graphcert.cert.results import SweepFit, VerifyResult
from graphcert.cert.results.plan import PlanResult
from graphcert.cert.results.profile import ProfileResult
from graphcert.cert.results.record import RecordResult
from graphcert.errors import clip
from graphcert.model.jsontext import short_hash
from graphcert.render.layout import Column, Grid
from graphcert.render.numbers import size, us
from graphcert.render.words import Pairs

if TYPE_CHECKING:
    from rich.console import RenderableType

# diff's tables: the size names a row; a hash change is two tokens ("a -> b") that may break
# only at their arrow; node counts and change reasons are lists and free text.
_CLASS_COLUMNS = (Column("capacity", right=True, key=True), Column("change", key=True),
                  Column("topology a -> b", wrap=True), Column("shape a -> b", wrap=True),
                  Column("nodes", wrap=True, sep=", "))
_TIMING_COLUMNS = (Column("n", right=True, key=True), Column("side", key=True),
                   Column("quantity", key=True), Column("a", right=True),
                   Column("b", right=True), Column("diff", right=True),
                   Column("noise", right=True), Column("change", wrap=True))
_NODE_COLUMNS = (Column("class", key=True), Column("node", right=True, key=True),
                 Column("kernel", wrap=True), Column("a", right=True), Column("b", right=True),
                 Column("diff", right=True), Column("change"))
_CHANGE_STYLE = {Change.SAME: "", Change.FASTER: "green", Change.SLOWER: "bold red",
                 Change.AMBIGUOUS: "yellow"}


def _kv(rows: list[tuple[str, str]]) -> RenderableType:
    """Key/value lines; a value too wide to sit beside its key goes whole below it."""
    return Pairs(rows)


def _opt(value: object, none: str = "-") -> str:
    return none if value is None else str(value)


def header_rows(cert: Certificate, path: str, staleness: str) -> list[tuple[str, str]]:
    """Key/value lines about a certificate: what, where, when, on what."""
    env, wl = cert.environment, cert.workload
    gpu, git = env.gpu, env.git
    commit = "-" if git.commit is None else short_hash(git.commit) + (
        " (dirty)" if git.dirty else "")
    return [
        ("certificate", f"{cert.kind}  {path}"),
        ("workload", f"{clip(wl.name)} ({clip(wl.ref)}), sources {staleness}"),
        ("verdict", cert.recorded_verdict.status.value.upper()),
        ("created", f"{cert.created} by graphcert {cert.tool_version}"),
        ("gpu", f"{gpu.name} ({_opt(gpu.uuid)}), compute capability "
                f"{gpu.compute_capability}, {_opt(gpu.sm_count)} SMs"),
        ("driver", f"{_opt(env.driver_version)}, CUDA driver API "
                   f"{_opt(env.cuda_driver_api)}, cuda-bindings "
                   f"{_opt(env.cuda_bindings_version)}, NVRTC {_opt(env.nvrtc_version)}"),
        ("host", f"{env.host}, Python {env.python}, {env.platform}"),
        ("git", commit),
        ("digest", cert.digest),
    ]


def show_renderables(cert: Certificate, path: str, staleness: str) -> list[RenderableType]:
    """Everything `graphcert show` prints for one certificate: the header, the verdict's
    reasons, then the same view the command that made it prints (with the verdict the
    certificate records)."""
    from rich.text import Text

    from graphcert.render.bench import bench_view, sweep_view
    from graphcert.render.plan import plan_view
    from graphcert.render.verify import verify_view

    out: list[RenderableType] = [_kv(header_rows(cert, path, staleness))]
    out += [Text(f"  - {r}") for r in cert.recorded_verdict.reasons]
    ref = clip(cert.workload.ref)  # a file's own text, shortened for the terminal
    result = cert.result
    if isinstance(result, VerifyResult):
        out += verify_view(ref, result)
    elif isinstance(result, SweepFit):
        out += sweep_view(result)
    elif isinstance(result, PlanResult):
        out += plan_view(result)
    elif isinstance(result, ProfileResult):
        from graphcert.render.profile import profile_view

        out += profile_view(ref, result)
    elif isinstance(result, RecordResult):  # issue 32
        from graphcert.render.record import record_view

        out += record_view(result)
    else:
        out += bench_view(ref, result)
    return out


def diff_renderables(diff: CertificateDiff, a: str, b: str) -> list[RenderableType]:
    """Everything `graphcert diff` prints for two certificates (b against a)."""
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
        classes: list[tuple[str | Text, ...]] = []
        for c in diff.classes:
            style = "" if c.change == "same" else "bold red" if c.change == "topology" \
                else "yellow"
            classes.append((size(c.capacity), Text(c.change, style=style),
                         hash_change(c.baseline_topology, c.current_topology),
                         hash_change(c.baseline_shape, c.current_shape),
                         c.describe().split("nodes ", 1)[-1] if c.change in
                         ("topology", "shape") else _counts(c.current_counts)))
        out.append(Grid(_CLASS_COLUMNS, classes))
        for c in diff.classes:
            out += [Text(f"  class {size(c.capacity)}: {line}") for line in c.node_diff]
    elif diff.kind == "profile":  # nodes by canonical index (issue 31)
        out.append(Grid(_NODE_COLUMNS, [
            (n.label, "path" if n.index is None else str(n.index), n.name,
             f"{n.baseline_ns / 1e3:,.2f} µs", f"{n.current_ns / 1e3:,.2f} µs", f"{n.diff:+.1%}",
             Text(n.change.value, style=_CHANGE_STYLE[n.change])) for n in diff.nodes]))
    else:
        out.append(Grid(_TIMING_COLUMNS, [
            (size(t.n), t.side, t.quantity, us(t.baseline_s), us(t.current_s),
             f"{t.diff:+.1%}", f"{t.threshold:.1%}",
             Text(t.change.value + (f" ({t.reason})" if t.reason else ""),
                  style=_CHANGE_STYLE[t.change]))
            for t in diff.timings]))
    out += [Text(f"note: {n}") for n in diff.notes]
    return out


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"
