"""Certificates: one JSON document of evidence, digested, schema-checked, written atomically.

Pure: no CUDA, no numpy, no subprocess (the host and git facts a certificate carries are
gathered by graphcert.run.environment and passed in). `make_certificate` builds one,
`write_certificate` checks it against the shipped schema and writes it whole or not at all;
reading and checking one is in graphcert.cert.store.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from graphcert._version import __version__
from graphcert.cert.registry import KIND_NAMES, known
from graphcert.cert.signing import SigningKey, sign
from graphcert.errors import ExitStatus, GraphcertError, clip_repr
from graphcert.fileio import atomic_write_text
from graphcert.jsontypes import Doc
from graphcert.model.jsontext import canonical_json, sha256_text

if TYPE_CHECKING:
    from graphcert.cert.kind import KindResult

# 2: the workload block carries method_digest, the source digest follows imports and
# includes, and a certificate may carry an HMAC signature.
SCHEMA_VERSION = 2
TOOL_NAME = "graphcert"


class CertificateError(GraphcertError):
    """A certificate that cannot be used: unreadable, corrupt, tampered, wrong version, stale."""

    exit_code = ExitStatus.UNUSABLE

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


def compute_digest(cert: Doc) -> str:
    """`sha256:<hex>` over the canonical JSON of everything except `digest` and `signature`
    (the signature is added after sealing and covers the digest)."""
    body = {k: v for k, v in cert.items() if k not in ("digest", "signature")}
    return "sha256:" + sha256_text(canonical_json(body))


def make_certificate(kind: str, *, workload: Doc, environment: Doc, results: Doc, verdict: Doc,
                     created: str | None = None) -> dict[str, object]:
    """Assemble a certificate of `kind` and seal it with its digest (not schema-checked)."""
    if not known(kind):
        raise ValueError(f"unknown certificate kind {kind!r}; known: {', '.join(KIND_NAMES)}")
    cert: dict[str, object] = {
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


def certificate_of(result: KindResult, *, workload: Doc, environment: Doc,
                   created: str | None = None) -> dict[str, object]:
    """The sealed certificate of a typed result, of the kind its type belongs to."""
    return make_certificate(result.kind, workload=workload, environment=environment,
                            results=dict(result.to_json()), verdict=result.verdict.to_json(),
                            created=created)


def validate_certificate(cert: Doc) -> list[str]:
    """Structural problems of a certificate against its kind's shipped schema."""
    from graphcert.cert.schemas import validate

    kind = cert.get("kind")
    if not known(kind):
        return [f"field 'kind': {clip_repr(kind)} is not one of "
                f"{', '.join(map(repr, KIND_NAMES))}"]
    return validate(cert, str(kind))


def write_certificate(path: Path | str, cert: Doc, *,
                      key: SigningKey | None = None) -> Path:
    """Check `cert`, sign it with `key` (None: unsigned) and write it atomically; on any
    failure nothing is left at `path`. This is the one place certificates are written; the
    caller loads the key (graphcert.cert.signing.load_key), so nothing here reads the
    environment."""
    path = Path(path)
    cert = sign(cert, key)
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


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str) -> str:
    """`text` as part of a file name: runs outside [A-Za-z0-9._-] become one `_`."""
    return _UNSAFE.sub("_", text).strip("_.") or "unknown"


def certificate_filename(kind: str, workload_name: str, gpu_name: str) -> str:
    """`<kind>-<workload>-<gpu>.json`, each part made safe by `safe_name`."""
    return f"{safe_name(kind)}-{safe_name(workload_name)}-{safe_name(gpu_name)}.json"

