"""Writing verify and bench certificates: workload identity, environment, verdict."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from graphcert.cert.document import (
    certificate_filename,
    host_environment,
    make_certificate,
    write_certificate,
)
from graphcert.workloads import registry


def workload_identity(ref: str, workload: Any, kind: str) -> dict[str, Any]:
    """Reference, name, options, the digest of the sources and of graphcert's method for
    `kind` (the gate recomputes both the same way; see graphcert.workloads.sources)."""
    return {"ref": ref, "name": str(workload.name), "source_digest": registry.source_digest(ref),
            "method_digest": registry.method_digest(kind),
            "options": dict(registry.parse_ref(ref).options)}


def environment(device_index: int) -> dict[str, Any]:
    """GPU, driver and library versions, plus Python, host and git.

    A device machine may hold a copy of the tree without .git: GRAPHCERT_GIT_COMMIT and
    GRAPHCERT_GIT_DIRTY then say which commit it is.
    """
    from graphcert.cuda.device import environment as gpu_environment

    env = {**gpu_environment(device_index), **host_environment(Path.cwd())}
    if os.environ.get("GRAPHCERT_GIT_COMMIT"):
        env["git"] = {"commit": os.environ["GRAPHCERT_GIT_COMMIT"],
                      "dirty": os.environ.get("GRAPHCERT_GIT_DIRTY", "0") == "1"}
    return env


def write(kind: str, out_dir: Path, ref: str, workload: Any, env: dict[str, Any],
          results: dict[str, Any], reasons: list[str], passed: bool) -> Path:
    """Seal and atomically write one certificate; returns its path."""
    cert = make_certificate(kind, workload=workload_identity(ref, workload, kind), environment=env,
                            results=results, verdict={"passed": passed, "reasons": reasons})
    name = certificate_filename(kind, str(workload.name), env["gpu"]["name"])
    return write_certificate(out_dir / name, cert)
