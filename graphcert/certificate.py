"""Certificates: one JSON document of evidence, digested, schema-checked, written atomically.

Pure: no CUDA, no numpy. `make_certificate` builds one, `write_certificate` checks it against
the shipped schema and writes it whole or not at all, `load_certificate` says in one line,
naming the file, what is wrong with a certificate it cannot trust.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import socket
import subprocess
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from graphcert import __version__
from graphcert.errors import GraphcertError
from graphcert.fileio import atomic_write_text

SCHEMA_VERSION = 1
CERT_KINDS: tuple[str, ...] = ("topology", "bench")
SNAPSHOT_KIND = "graphcert.snapshot"
TOOL_NAME = "graphcert"
# What regenerates a certificate of each kind, for "re-run" hints.
PRODUCER: dict[str, str] = {"topology": "graphcert verify", "bench": "graphcert bench"}

DigestOf = Callable[[str], "str | None"]


class CertificateError(GraphcertError):
    """A certificate that cannot be used: unreadable, corrupt, tampered, wrong version, stale."""

    exit_code = 2

    def __init__(self, path: Path | str, problem: str, *, hint: str | None = None,
                 reason: str = "invalid"):
        super().__init__(f"{path}: {problem}", hint=hint)
        self.path = str(path)
        self.problem = problem
        self.reason = reason  # short machine key: not_json, not_certificate, digest, ...


class NotACertificate(CertificateError):
    """A JSON file that is not a graphcert certificate (a snapshot is one such)."""

    def __init__(self, path: Path | str, problem: str, *, is_snapshot: bool = False,
                 hint: str | None = None):
        super().__init__(path, problem, hint=hint, reason="not_certificate")
        self.is_snapshot = is_snapshot


def utc_now() -> str:
    """The current time as UTC ISO-8601 with a Z, to the second."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def canonical_json(value: Any) -> bytes:
    """sort_keys, compact separators, UTF-8, no NaN: the bytes the digest is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def compute_digest(cert: Mapping[str, Any]) -> str:
    """`sha256:<hex>` over the canonical JSON of everything except `digest`."""
    body = {k: v for k, v in cert.items() if k != "digest"}
    return "sha256:" + hashlib.sha256(canonical_json(body)).hexdigest()


def make_certificate(kind: str, *, workload: dict[str, Any], environment: dict[str, Any],
                     results: dict[str, Any], verdict: dict[str, Any],
                     created: str | None = None) -> dict[str, Any]:
    """Assemble a certificate of `kind` and seal it with its digest (not schema-checked)."""
    if kind not in CERT_KINDS:
        raise ValueError(f"unknown certificate kind {kind!r}; known: {', '.join(CERT_KINDS)}")
    cert: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": kind,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "created": created or utc_now(),
        "environment": environment,
        "workload": workload,
        "results": results,
        "verdict": verdict,
    }
    cert["digest"] = compute_digest(cert)
    return cert


def validate_certificate(cert: Mapping[str, Any]) -> list[str]:
    """Structural problems of a certificate against its kind's shipped schema."""
    from graphcert.schemas import check, load_schema

    kind = cert.get("kind")
    if kind not in CERT_KINDS:
        return [f"field 'kind': {kind!r} is not one of {', '.join(map(repr, CERT_KINDS))}"]
    return check(cert, load_schema(str(kind)))


def write_certificate(path: Path | str, cert: Mapping[str, Any]) -> Path:
    """Check `cert` and write it atomically; on any failure nothing is left at `path`."""
    path = Path(path)
    problems = validate_certificate(cert)
    try:
        sealed = cert.get("digest") == compute_digest(cert)
    except ValueError as exc:  # NaN or Infinity: not JSON
        problems.insert(0, f"a value is not JSON ({exc})")
        sealed = True
    if not problems and not sealed:
        problems = ["field 'digest' does not match the content (changed after sealing?)"]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise CertificateError(path, f"refusing to write an invalid certificate: "
                                     f"{problems[0]}{more}", reason="invalid")
    text = json.dumps(cert, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    atomic_write_text(path, text)
    return path


def read_document(path: Path | str) -> Any:
    """Parse a JSON file; CertificateError (one line) when unreadable or not JSON."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CertificateError(path, f"cannot be read: {exc.strerror or exc}",
                               reason="unreadable") from exc
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CertificateError(path, "not JSON (not UTF-8 text)", reason="not_json") from exc
    except json.JSONDecodeError as exc:
        raise CertificateError(path, f"not JSON ({exc.msg} at line {exc.lineno} column "
                                     f"{exc.colno})", reason="not_json") from exc


def is_snapshot(doc: Any) -> bool:
    """True for a saved graph snapshot (`"kind": "graphcert.snapshot"`)."""
    return isinstance(doc, dict) and doc.get("kind") == SNAPSHOT_KIND


def _looks_like_certificate(doc: Any) -> bool:
    if not isinstance(doc, dict):
        return False
    tool = doc.get("tool")
    if isinstance(tool, dict) and tool.get("name") == TOOL_NAME:
        return True
    return doc.get("kind") in CERT_KINDS and "schema_version" in doc


def check_document(doc: Any, path: Path | str, *, digest_of: DigestOf | None = None
                   ) -> dict[str, Any]:
    """Check a parsed document is a sound, current certificate; return it or raise.

    `digest_of(ref)` gives the current source digest of a workload (None: not found);
    pass None to skip the staleness check (baselines, show, diff).
    """
    if is_snapshot(doc):
        raise NotACertificate(path, "is a graph snapshot, not a certificate", is_snapshot=True,
                              hint="compare snapshots with graphcert diff A B")
    if not _looks_like_certificate(doc):
        raise NotACertificate(path, "not a graphcert certificate",
                              hint="expected a JSON file written by graphcert verify or bench")
    version = doc.get("schema_version")
    if "schema_version" not in doc:
        raise CertificateError(path, "missing field 'schema_version'", reason="missing_field")
    if not isinstance(version, int) or isinstance(version, bool):
        raise CertificateError(path, f"field 'schema_version': expected integer, got "
                                     f"{version!r}", reason="invalid")
    kind = doc.get("kind")
    producer = PRODUCER.get(str(kind), "graphcert verify/bench")
    if version > SCHEMA_VERSION:
        tool = doc.get("tool")
        writer = tool.get("version", "?") if isinstance(tool, dict) else "?"
        raise CertificateError(
            path, f"schema version {version} is newer than this graphcert reads "
                  f"({SCHEMA_VERSION}); it was written by graphcert {writer}",
            hint=f"upgrade graphcert (this is {__version__})", reason="newer")
    if version < SCHEMA_VERSION:
        raise CertificateError(
            path, f"schema version {version} is older than this graphcert reads "
                  f"({SCHEMA_VERSION})", hint=f"re-run {producer} to regenerate it",
            reason="older")
    if kind not in CERT_KINDS:
        raise CertificateError(path, f"unknown certificate kind {kind!r} (known: "
                                     f"{', '.join(CERT_KINDS)})", reason="invalid")
    if "digest" not in doc:
        raise CertificateError(path, "missing field 'digest'", reason="missing_field")
    try:
        actual = compute_digest(doc)
    except ValueError as exc:  # NaN or Infinity cannot be canonical
        raise CertificateError(path, f"not canonical JSON ({exc})", reason="invalid") from exc
    if doc["digest"] != actual:
        raise CertificateError(
            path, "digest mismatch: the certificate was edited or corrupted after it was written",
            hint=f"re-run {producer} to regenerate it", reason="digest")
    problems = validate_certificate(doc)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        first = problems[0]
        reason = "missing_field" if first.startswith("missing field") else "invalid"
        raise CertificateError(path, first + more, hint=f"re-run {producer} to regenerate it",
                               reason=reason)
    if digest_of is not None:
        check_stale(doc, path, digest_of)
    cert: dict[str, Any] = doc
    return cert


def check_stale(cert: Mapping[str, Any], path: Path | str, digest_of: DigestOf) -> None:
    """Raise when the workload's sources changed since the certificate was made."""
    workload = cert["workload"]
    ref, name = workload["ref"], workload.get("name", workload["ref"])
    try:
        current = digest_of(ref)
    except (GraphcertError, OSError) as exc:
        raise CertificateError(path, f"sources of workload {name!r} not found ({exc}); "
                                     f"cannot check staleness", reason="sources_missing") from exc
    if current is None:
        raise CertificateError(path, f"sources of workload {name!r} ({ref}) not found; cannot "
                                     f"check staleness",
                               hint="run the gate where the workload's sources are",
                               reason="sources_missing")
    if current != workload["source_digest"]:
        producer = PRODUCER[cert["kind"]]
        raise CertificateError(
            path, f"stale: the sources of workload {name!r} changed since this certificate "
                  f"was made", hint=f"re-run {producer} {ref}", reason="stale")


def current_source_digest(ref: str) -> str | None:
    """The registry's digest of a workload's sources now (looked up at call time)."""
    from graphcert.workloads import registry

    return registry.source_digest(ref)


def memoized_digests() -> DigestOf:
    """A digest_of that reads each workload's sources once (for many certificates)."""
    cache: dict[str, str | None] = {}

    def digest_of(ref: str) -> str | None:
        if ref not in cache:
            cache[ref] = current_source_digest(ref)
        return cache[ref]

    return digest_of


def load_certificate(path: Path | str, *, check_stale: bool = True) -> dict[str, Any]:
    """Read, check and return a certificate; CertificateError says what is wrong."""
    doc = read_document(path)
    return check_document(doc, path, digest_of=current_source_digest if check_stale else None)


def staleness(cert: Mapping[str, Any], digest_of: DigestOf = current_source_digest) -> str:
    """'current', 'stale' or 'not found': for show, which displays instead of failing."""
    try:
        current = digest_of(cert["workload"]["ref"])
    except (GraphcertError, OSError):
        current = None
    if current is None:
        return "not found"
    return "current" if current == cert["workload"]["source_digest"] else "stale"


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("_.") or "unknown"


def certificate_filename(kind: str, workload_name: str, gpu_name: str) -> str:
    """`<kind>-<workload>-<gpu>.json` with anything outside [A-Za-z0-9._-] made `_`."""
    return f"{_safe(kind)}-{_safe(workload_name)}-{_safe(gpu_name)}.json"


def collect_git_info(cwd: Path | str | None = None) -> dict[str, Any]:
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


def host_environment(cwd: Path | str | None = None) -> dict[str, Any]:
    """The non-GPU part of `environment`: Python, host, platform and git."""
    return {
        "python": platform.python_version(),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "git": collect_git_info(cwd),
    }
