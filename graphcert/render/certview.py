"""Rich views of one certificate (`graphcert show`) and of two compared (`graphcert diff`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import CertificateDiff, Change
from graphcert.cert.kind import KindResult
from graphcert.cert.registry import spec
from graphcert.errors import clip
from graphcert.model.jsontext import short_hash
from graphcert.render.layout import Column, Grid
from graphcert.render.numbers import size, us
from graphcert.render.words import Pairs

if TYPE_CHECKING:
    from rich.console import RenderableType

# diff's timings table: the size, side and quantity name a row; the change reason is free text.
_TIMING_COLUMNS = (Column("n", right=True, key=True), Column("side", key=True),
                   Column("quantity", key=True), Column("a", right=True),
                   Column("b", right=True), Column("diff", right=True),
                   Column("noise", right=True), Column("change", wrap=True))
CHANGE_STYLE = {Change.SAME: "", Change.FASTER: "green", Change.SLOWER: "bold red",
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


class KindViews(Protocol):
    """A kind's terminal views (graphcert/kinds/<kind>/views.py): `show_view`, and optionally
    `diff_view` (two certificates' results compared; the timings table where a kind has
    none)."""

    def show_view(self, ref: str, result: KindResult) -> list[RenderableType]: ...


class DiffView(Protocol):
    def __call__(self, diff: CertificateDiff) -> list[RenderableType]: ...


def views_of(kind: str) -> KindViews:
    """The terminal views of certificate kind `kind`."""
    return cast(KindViews, spec(kind).module("views"))


def show_renderables(cert: Certificate, path: str, staleness: str) -> list[RenderableType]:
    """Everything `graphcert show` prints for one certificate: the header, the verdict's
    reasons, then the same view the command that made it prints (with the verdict the
    certificate records)."""
    from rich.text import Text

    out: list[RenderableType] = [_kv(header_rows(cert, path, staleness))]
    out += [Text(f"  - {r}") for r in cert.recorded_verdict.reasons]
    ref = clip(cert.workload.ref)  # a file's own text, shortened for the terminal
    return out + views_of(cert.kind).show_view(ref, cert.result)


def timings_view(diff: CertificateDiff) -> list[RenderableType]:
    """Two certificates' timings compared, one row a timing."""
    from rich.text import Text

    return [Grid(_TIMING_COLUMNS, [
        (size(t.n), t.side, t.quantity, us(t.baseline_s), us(t.current_s),
         f"{t.diff:+.1%}", f"{t.threshold:.1%}",
         Text(t.change.value + (f" ({t.reason})" if t.reason else ""),
              style=CHANGE_STYLE[t.change]))
        for t in diff.timings])]


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
    kind_view = cast(DiffView | None, getattr(views_of(diff.kind), "diff_view", None))
    out += (kind_view or timings_view)(diff)
    out += [Text(f"note: {n}") for n in diff.notes]
    return out
