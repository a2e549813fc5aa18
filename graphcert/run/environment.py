"""Environment facts and certificate writing: workload identity, where it ran (GPU, host, git),
the sealed file."""

from __future__ import annotations

import platform
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from graphcert.cert.document import certificate_filename, make_certificate, write_certificate
from graphcert.cert.method import method_kind
from graphcert.cert.results.fleet import short_uuid
from graphcert.cert.results.verdict import Verdict
from graphcert.errors import first_line
from graphcert.jsontypes import Doc, JSONObject, as_doc, as_opt_doc
from graphcert.kinds.sweep.result import SweepFit
from graphcert.kinds.topology.result import VerifyResult
from graphcert.recording.processes import GpuSeen
from graphcert.workloads import registry
from graphcert.workloads.loaded import LoadedWorkload

if TYPE_CHECKING:
    from graphcert.cert.signing import SigningKey
    from graphcert.options import GitCommit


def identity(ref: str, name: str, kind: str) -> JSONObject:
    """Reference, name, options, the digest of the sources and of graphcert's method for
    method kind `kind` (the gate recomputes both the same way; see
    graphcert.cert.digests and graphcert.cert.method.method_kind)."""
    return {"ref": ref, "name": name, "source_digest": registry.source_digest(ref),
            "method_digest": registry.method_digest(kind),
            "options": dict(registry.parse_ref(ref).options)}


def workload_identity(loaded: LoadedWorkload, kind: str) -> JSONObject:
    """The certificate's `workload` block for a loaded workload or step (see `identity`)."""
    return identity(loaded.ref, loaded.name, kind)


class Sealable(Protocol):
    """A typed result a certificate is made of: its JSON and its verdict's."""

    @property
    def verdict(self) -> Verdict: ...

    def to_json(self) -> JSONObject: ...


@dataclass(frozen=True)
class Subject:
    """What a certificate is about: its kind, its `workload` block and the label its file
    name carries (`chain[kernels=10]`; a recorded program's name)."""

    kind: str
    workload: JSONObject
    label: str


def subject(loaded: LoadedWorkload, kind: str, *, method: str | None = None,
            swept: str | None = None) -> Subject:
    """The subject of a `kind` certificate of `loaded` (digested with method kind `method`,
    default `kind`; a sweep's label names its swept option)."""
    return Subject(kind, workload_identity(loaded, method or kind), labelled(loaded, swept))


def collect_git_info(cwd: Path | str | None = None) -> JSONObject:
    """The checkout's commit and dirty flag; nulls outside a checkout or without git."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                                  timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def host_facts() -> dict[str, str]:
    """Python version, host name and platform (for certificates and `graphcert env`)."""
    return {"python": platform.python_version(), "host": socket.gethostname(),
            "platform": platform.platform()}


def host_environment(cwd: Path | str | None = None) -> JSONObject:
    """The non-GPU part of `environment`: host facts and git."""
    return {**host_facts(), "git": collect_git_info(cwd)}


def environment(device_index: int, git: GitCommit | None) -> JSONObject:
    """GPU, driver and library versions, plus Python, host and git.

    A device machine may hold a copy of the tree without .git: `git` (Options.git, from
    $GRAPHCERT_GIT_COMMIT and $GRAPHCERT_GIT_DIRTY) then says which commit it is.
    """
    from graphcert.cuda.device import environment as gpu_environment

    if git is None:
        return {**gpu_environment(device_index), **host_environment(Path.cwd())}
    return {**gpu_environment(device_index), **host_facts(), "git": git.to_json()}


def gpu_seen(device: int) -> tuple[GpuSeen, ...]:
    """The GPU a recording ran on (its UUID and name); none where the driver cannot say."""
    try:
        from graphcert.cuda.device import device_info

        info = device_info(device)
    except Exception:  # noqa: BLE001 (which GPU it was is a detail; the recording stands)
        return ()
    return (GpuSeen(device, info.uuid, info.name),)


def machine_facts(*, require_gpu: bool = False) -> JSONObject:
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


def _without_driver(reason: str) -> JSONObject:
    """What can be said with no driver: library versions, and why there are no GPUs."""
    env: JSONObject = {"driver_version": None, "cuda_version": None}
    try:
        from graphcert.cuda.device import software_versions

        env.update(software_versions())
    except Exception as exc:  # noqa: BLE001 - informational; NVRTC may be absent as well
        env["software_versions_error"] = first_line(exc)
    env["gpus"] = []
    env["no_driver"] = reason
    return env


def write(result: Sealable, out_dir: Path, about: LoadedWorkload | Subject,
          env: JSONObject, *, key: SigningKey | None, uuid_names: bool = False) -> Path:
    """The one certificate writer: seal the certificate of `result` about `about` (a
    verify or bench result's workload, or any kind's Subject), sign it with `key`
    (Options.signing_key; None: unsigned) and write it atomically; returns its path. The
    name carries the GPU's short UUID with `uuid_names`, as a several-GPU run's workers ask."""
    if not isinstance(about, Subject):
        kind = "topology" if isinstance(result, VerifyResult) else "bench"
        # "+step" for a framework step: from the settings as the certificate holds them, as
        # the gate derives it
        about = subject(about, kind,
                        method=method_kind(kind, as_opt_doc(result.to_json(), "settings")))
    cert = make_certificate(about.kind, workload=about.workload, environment=env,
                            results=result.to_json(), verdict=result.verdict.to_json())
    name = certificate_filename(about.kind, about.label, gpu_label(env, uuid_names))
    return write_certificate(out_dir / name, cert, key=key)


def gpu_label(env: Doc, uuid_names: bool = False) -> str:
    """The GPU part of a certificate's file name: its model, and with `uuid_names` a short
    UUID, for workers on several GPUs of one model writing side by side (their names must
    differ)."""
    facts = as_doc(env, "gpu")
    gpu = str(facts["name"])
    if uuid_names:
        gpu = f"{gpu}-{short_uuid(str(facts.get('uuid', '')))}"
    return gpu


def labelled(loaded: LoadedWorkload, swept: str | None = None) -> str:
    """The workload's name with its options, as certificate file names carry it
    (`chain[kernels=10]`; a sweep's `chain[kernels]`), so runs that differ only in options
    (a --sweep) never overwrite each other. No options: the plain name, as before."""
    options = dict(registry.parse_ref(loaded.ref).options)
    parts = [f"[{k}={options[k]}]" for k in sorted(options) if k != swept]
    return loaded.name + "".join(parts) + (f"[{swept}]" if swept else "")


def sweep_filename(base: LoadedWorkload, key: str, gpu_name: str, suffix: str = ".json"
                   ) -> str:
    """`sweep-<workload>_<key>-<gpu>.json` (or another suffix, for the plot beside it)."""
    name = certificate_filename("sweep", labelled(base, key), gpu_name)
    return name[:-len(".json")] + suffix


def write_sweep(fit: SweepFit, out_dir: Path, base: LoadedWorkload, env: JSONObject,
                *, key: SigningKey | None, uuid_names: bool = False) -> Path:
    """The sweep certificate (fit, points, the runs' certificates), through `write`."""
    return write(fit, out_dir, subject(base, "sweep", swept=fit.key), env, key=key,
                 uuid_names=uuid_names)
