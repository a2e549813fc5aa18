"""Graphviz's `dot`: DOT text to SVG where it is installed, and one note where it is not.

Pure with respect to CUDA: it runs the `dot` program, nothing else.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

INSTALL_DOT = ("`apt-get install graphviz` (Debian/Ubuntu), `conda install graphviz` or "
               "`brew install graphviz`")
MISSING_DOT = ("Graphviz's `dot` is not installed, so graphs are not drawn as SVG; install it "
               f"with {INSTALL_DOT}")
_told = False


def dot_path() -> str | None:
    """Where `dot` is on the PATH, or None."""
    return shutil.which("dot")


def note_missing_dot(what: str = MISSING_DOT) -> None:
    """Say once per process, on stderr, what was not drawn for want of Graphviz (by default:
    any SVG) and how to install it."""
    global _told
    if not _told:
        _told = True
        sys.stderr.write(f"graphcert: note: {what}\n")


def dot_to_svg(dot: str, *, timeout: float = 120.0) -> str | None:
    """The SVG of a DOT graph, or None when `dot` is missing (noted once) or fails."""
    exe = dot_path()
    if exe is None:
        note_missing_dot()
        return None
    try:
        proc = subprocess.run([exe, "-Tsvg"], input=dot.encode(), capture_output=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        sys.stderr.write(f"graphcert: note: Graphviz's `dot` failed ({exc}); no SVG\n")
        return None
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        sys.stderr.write(f"graphcert: note: Graphviz's `dot` failed"
                         f"{': ' + err[0] if err else ''}; no SVG\n")
        return None
    return proc.stdout.decode("utf-8", errors="replace")
