"""The view of a sweep (`graphcert bench --sweep` and `graphcert show` draw it): the fit per
way and quantity, each point's per-launch medians, and the plot. Pure (matplotlib only
inside the plot)."""

from __future__ import annotations

import io
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from rich.text import Text

from graphcert.cert.kind import KindResult
from graphcert.cert.results.figures import SIDES
from graphcert.errors import InputError
from graphcert.fileio import atomic_write_bytes, check_output_file
from graphcert.kinds.bench.views import LABELS
from graphcert.kinds.sweep.result import SweepFit
from graphcert.render.layout import Column, Grid
from graphcert.render.numbers import us

if TYPE_CHECKING:
    from rich.console import Console, RenderableType


# The certificate names the plot its run drew; the image is not part of the certificate, and
# a folder of certificates copied elsewhere (reports/) may not hold it.
PLOT_NOTE = "drawn beside the certificate when the sweep ran; not part of it"


def show_view(ref: str, result: KindResult) -> list[RenderableType]:
    """What `graphcert show` draws of a sweep certificate's results."""
    assert isinstance(result, SweepFit)
    return sweep_view(result)


def sweep_table(fit: SweepFit) -> Grid:
    """The a + b·value fit per way and quantity."""
    columns = (Column("way", key=True), Column("quantity", key=True, wrap=True),
               Column("a (fixed)", right=True), Column("b (per kernel)", right=True),
               Column("R²", right=True))
    rows = []
    for way in SIDES:
        for q, label in LABELS.items():
            f = fit.fit[way][q]
            rows.append((way, label, us(f.a_s if f else None), us(f.b_s if f else None),
                         f"{f.r2:.4f}" if f else "-"))
    return Grid(columns, rows, title=f"cost per launch = a + b·{fit.key}")


def sweep_points(fit: SweepFit) -> list[tuple[tuple[str, str, str, str], str | None]]:
    """Each swept run: (value, stream e2e / kernel, graph e2e / kernel, graph device / node)
    as printed, and its certificate's name (None where not written)."""
    names = list(fit.certificates) + [None] * len(fit.points)
    out = []
    for value, point, name in zip(fit.values, fit.points, names, strict=False):
        per = float(value) or 1.0
        s, g, gd = (point.stream.get("end_to_end"), point.graph.get("end_to_end"),
                    point.graph.get("device"))
        out.append(((str(value), us(s.median_s / per if s else None),
                     us(g.median_s / per if g else None),
                     us(gd.median_s / per if gd else None)), name))
    return out


def sweep_view(fit: SweepFit) -> list[RenderableType]:
    """A sweep certificate: the fit, then each point's per-launch medians and certificate."""
    columns = (Column(fit.key, right=True, key=True),
               Column("stream e2e / kernel", right=True), Column("graph e2e / kernel", right=True),
               Column("graph device / node", right=True), Column("certificate"))
    rows = [(*figures, name or "-") for figures, name in sweep_points(fit)]
    out: list[RenderableType] = [
        sweep_table(fit), Grid(columns, rows, title=f"swept {fit.key}: each run's first size")]
    if fit.plot:
        out.append(Text(f"plot: {fit.plot} ({PLOT_NOTE})"))
    return out


def _matplotlib() -> ModuleType:
    """matplotlib, set to draw into files (Agg), or InputError saying how to install it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
    except ImportError as exc:
        raise InputError("--plot needs matplotlib",
                         hint="pip install 'graphcert[plot]'") from exc
    module: ModuleType = matplotlib
    return module


def _plot_format(path: Path) -> str:
    """The image format `path` names by its suffix (png without one, as matplotlib does)."""
    return path.suffix[1:].lower() or "png"


def check_plot_path(path: Path) -> Path:
    """Before any GPU work: `path` can be written as a file, matplotlib is importable and
    draws the format its suffix names. InputError (one line, exit 2) otherwise."""
    check_output_file(path, "--plot")
    _matplotlib()
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    if _plot_format(path) not in formats:
        raise InputError(f"--plot {path}: matplotlib cannot draw {_plot_format(path)!r} "
                         f"images", hint=f"end the name with one of "
                                         f"{', '.join(sorted(formats))}")
    return path


def plot_sweep(fit: SweepFit, path: Path) -> Path:
    """Per-kernel cost against N for stream and graph, host and device; saved to `path`.
    Drawn into memory, then written atomically: an error leaves no file behind."""
    _matplotlib()
    import matplotlib.pyplot as plt

    key, xs = fit.key, list(fit.values)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharex=True)
    try:
        for ax, (q, label) in zip(axes, LABELS.items(), strict=True):
            for way, style in (("stream", "o-"), ("graph", "s-")):
                ys = [t.median_s / x * 1e6 if (t := p.way(way).get(q)) else float("nan")
                      for x, p in zip(xs, fit.points, strict=True)]
                ax.plot(xs, ys, style, label=f"{way} launch")
            ax.set_xscale("log")
            ax.set_title(f"{label}: time per kernel")
            ax.set_xlabel(f"{key} (log scale)")
            ax.set_ylabel("µs per kernel")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
        fig.suptitle("graphcert bench: stream launch vs graph launch")
        fig.tight_layout()
        image = io.BytesIO()
        fig.savefig(image, format=_plot_format(path), dpi=110)
    except OSError as exc:  # a font or backend file matplotlib could not read
        raise InputError(f"cannot draw the plot {path}: {exc.strerror or exc}") from exc
    finally:
        plt.close(fig)
    try:
        return atomic_write_bytes(path, image.getvalue())
    except OSError as exc:
        raise InputError(f"cannot write the plot {path}: {exc.strerror or exc}") from exc


def print_sweep(out: Console, err: Console, fit: SweepFit, certificate: Path | None, *,
                named_plot: Path | None, asked_plot: Path | None, as_json: bool) -> None:
    """A sweep's table (not with --json) and its certificate's path, then its plots drawn,
    each in the format its name gives: the one the certificate names and --plot's."""
    if not as_json:
        out.print(sweep_table(fit))
    if certificate is not None:
        err.print(Text(f"sweep certificate: {certificate}"))
    for target in (named_plot, asked_plot):
        if target is not None:
            plot_sweep(fit, target)
    if asked_plot is not None:
        err.print(Text(f"plot: {asked_plot}"))
