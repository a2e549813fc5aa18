"""Environment facts and certificate writing: workload identity, where it ran, the sealed file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphcert.cert.document import (
    certificate_filename,
    certificate_of,
    host_environment,
    host_facts,
    make_certificate,
    write_certificate,
)
from graphcert.cert.method import method_kind
from graphcert.cert.results import BenchResult, SweepFit, VerifyResult
from graphcert.cert.results.fleet import CERT_NAME_ENV, short_uuid
from graphcert.errors import first_line
from graphcert.workloads import registry

if TYPE_CHECKING:
    from graphcert.cert.signing import SigningKey
    from graphcert.options import GitCommit


def workload_identity(ref: str, workload: Any, kind: str) -> dict[str, Any]:
    """Reference, name, options, the digest of the sources and of graphcert's method for
    method kind `kind` (the gate recomputes both the same way; see
    graphcert.workloads.sources and graphcert.cert.method.method_kind)."""
    return {"ref": ref, "name": str(workload.name), "source_digest": registry.source_digest(ref),
            "method_digest": registry.method_digest(kind),
            "options": dict(registry.parse_ref(ref).options)}


def environment(device_index: int, git: GitCommit | None) -> dict[str, Any]:
    """GPU, driver and library versions, plus Python, host and git.

    A device machine may hold a copy of the tree without .git: `git` (Options.git, from
    $GRAPHCERT_GIT_COMMIT and $GRAPHCERT_GIT_DIRTY) then says which commit it is.
    """
    from graphcert.cuda.device import environment as gpu_environment

    env = {**gpu_environment(device_index), **host_environment(Path.cwd())}
    if git is not None:
        env["git"] = git.to_json()
    return env


def machine_facts(*, require_gpu: bool = False) -> dict[str, Any]:
    """What `graphcert env` shows: driver, CUDA, libraries, every GPU, host, kernel cache.
    Without a driver: the library versions, no GPUs and why (NoDriverError if `require_gpu`)."""
    from graphcert.errors import NoDriverError
    from graphcert.paths import cache_dir

    try:
        from graphcert.cuda.device import environment as gpu_environment

        gpu = gpu_environment()
    except NoDriverError as exc:
        if require_gpu:
            raise
        gpu = _without_driver(exc.one_line())
    return {**gpu, **host_facts(), "cache_dir": str(cache_dir())}


def _without_driver(reason: str) -> dict[str, Any]:
    """What can be said with no driver: library versions, and why there are no GPUs."""
    env: dict[str, Any] = {"driver_version": None, "cuda_version": None}
    try:
        from graphcert.cuda.device import software_versions

        env.update(software_versions())
    except Exception as exc:  # noqa: BLE001 - informational; NVRTC may be absent as well
        env["software_versions_error"] = first_line(exc)
    env["gpus"] = []
    env["no_driver"] = reason
    return env


def write(result: VerifyResult | BenchResult, out_dir: Path, ref: str, workload: Any,
          env: dict[str, Any], *, key: SigningKey | None) -> Path:
    """Seal the certificate of `result`, sign it with `key` (Options.signing_key; None:
    unsigned) and write it atomically; returns its path. With $GRAPHCERT_CERT_NAME=uuid (set for the
    workers of a several-GPU run) the name carries the GPU's short UUID."""
    kind = "topology" if isinstance(result, VerifyResult) else "bench"
    method = method_kind(kind, result.settings)  # "+step" for a framework step
    cert = certificate_of(result, workload=workload_identity(ref, workload, method),
                          environment=env)
    name = certificate_filename(cert["kind"], labelled(ref, workload), gpu_label(env))
    return write_certificate(out_dir / name, cert, key=key)


def gpu_label(env: dict[str, Any]) -> str:
    """The GPU part of a certificate's file name: its model, and a short UUID when workers on
    several GPUs of one model write side by side (their names must differ)."""
    gpu = str(env["gpu"]["name"])
    if os.environ.get(CERT_NAME_ENV) == "uuid":
        gpu = f"{gpu}-{short_uuid(str(env['gpu'].get('uuid', '')))}"
    return gpu


def labelled(ref: str, workload: Any, swept: str | None = None) -> str:
    """The workload's name with its options, as certificate file names carry it
    (`chain[kernels=10]`; a sweep's `chain[kernels]`), so runs that differ only in options
    (a --sweep) never overwrite each other. No options: the plain name, as before."""
    options = dict(registry.parse_ref(ref).options)
    parts = [f"[{k}={options[k]}]" for k in sorted(options) if k != swept]
    return str(workload.name) + "".join(parts) + (f"[{swept}]" if swept else "")


def sweep_filename(base_ref: str, workload: Any, key: str, gpu_name: str,
                   suffix: str = ".json") -> str:
    """`sweep-<workload>_<key>-<gpu>.json` (or another suffix, for the plot beside it)."""
    name = certificate_filename("sweep", labelled(base_ref, workload, key), gpu_name)
    return name[:-len(".json")] + suffix


def write_sweep(fit: SweepFit, out_dir: Path, base_ref: str, workload: Any,
                env: dict[str, Any], *, key: SigningKey | None) -> Path:
    """Seal the sweep certificate (fit, points, the runs' certificates), sign it with `key`
    (as `write`), and write it."""
    cert = make_certificate("sweep", workload=workload_identity(base_ref, workload, "sweep"),
                            environment=env, results=fit.to_json(),
                            verdict=fit.verdict.to_json())
    name = sweep_filename(base_ref, workload, fit.key, gpu_label(env))
    return write_certificate(out_dir / name, cert, key=key)
