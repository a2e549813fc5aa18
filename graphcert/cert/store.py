"""Finding and loading certificates: read a JSON file, check it is a sound, current certificate,
and make its typed value (graphcert.cert.certificate.Certificate), once per file.

Pure: no CUDA, no numpy. `load_certificate` says in one line, naming the file, what is wrong
with a certificate it cannot trust. The checks read the document itself (the digest and the
signature cover its exact canonical JSON, the schema and the evidence check are checks of the
document); everything after them reads the typed value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeGuard

from graphcert._version import __version__
from graphcert.cert.certificate import Certificate
from graphcert.cert.document import (
    SCHEMA_VERSION,
    TOOL_NAME,
    CertificateError,
    NotACertificate,
    compute_digest,
    validate_certificate,
)
from graphcert.cert.evidence import contradictions
from graphcert.cert.registry import KIND_NAMES, known, spec
from graphcert.cert.signing import SigningKey, signature_problem
from graphcert.errors import GraphcertError, InputError, clip, clip_repr
from graphcert.fileio import JSONProblem, parse_json
from graphcert.fileread import MAX_DOCUMENT_BYTES, FileProblem, read_bounded
from graphcert.model.io import SNAPSHOT_KIND

DigestOf = Callable[[str], "str | None"]  # workload ref -> its source digest now
MethodOf = Callable[[str], "str | None"]  # method kind -> graphcert's method digest now


def read_document(path: Path | str, *, named: bool = True) -> object:
    """Parse a JSON file; CertificateError (one line) when unreadable or not JSON. `named`
    False for a file found by walking a folder: then a FIFO or device is refused, not read."""
    path = Path(path)
    try:
        raw = read_bounded(path, MAX_DOCUMENT_BYTES, streams=named)
    except FileProblem as exc:
        raise CertificateError(path, exc.problem, hint=exc.hint, reason="unreadable") from None
    try:
        return parse_json(raw)
    except JSONProblem as exc:
        raise CertificateError(path, exc.problem, reason=exc.reason) from None


def is_snapshot(doc: object) -> bool:
    """True for a saved graph snapshot (`"kind": "graphcert.snapshot"`)."""
    return isinstance(doc, dict) and doc.get("kind") == SNAPSHOT_KIND


def _looks_like_certificate(doc: object) -> TypeGuard[dict[str, object]]:
    if not isinstance(doc, dict):
        return False
    tool = doc.get("tool")
    if isinstance(tool, dict) and tool.get("name") == TOOL_NAME:
        return True
    return known(doc.get("kind")) and "schema_version" in doc


def check_document(doc: object, path: Path | str, *, digest_of: DigestOf | None = None,
                   method_of: MethodOf | None = None, method_change: str = "stale",
                   key: SigningKey | None = None, require_signature: bool = False
                   ) -> Certificate:
    """Check a parsed document is a sound, current certificate; return its typed value or
    raise.

    `digest_of(ref)` gives the current source digest of a workload (None: not found);
    pass None to skip the staleness check (baselines, show, diff). `method_of(kind)` gives
    graphcert's current method digest (passed in like `digest_of`; None: not checked); a
    changed method is stale unless `method_change` is "warn". A signature is checked
    whenever `key` is given, and required when `require_signature`.
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
                                     f"{clip_repr(version)}", reason="invalid")
    kind = doc.get("kind")
    producer = spec(kind).producer if known(kind) else "graphcert verify/bench"
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
    if not known(kind):
        raise CertificateError(path, f"unknown certificate kind {clip_repr(kind)} (known: "
                                     f"{', '.join(KIND_NAMES)})", reason="invalid")
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
    cert = _sound(doc, path, actual, producer)
    problem = signature_problem(doc, key, required=require_signature)
    if problem is not None:
        raise CertificateError(path, problem, hint=f"re-run {producer} with the signing key set",
                               reason="signature")
    if digest_of is not None:
        check_stale(cert, path, digest_of, method_of, method_change=method_change)
    return cert


def _typed(doc: Mapping[str, Any], path: Path | str, producer: str) -> Certificate:
    """The typed value of a checked document. The schema admits only what the typed results
    read, so this does not fail; if it ever did, it is one line naming the file, not a
    traceback in whichever reader came first."""
    try:
        return Certificate.from_document(doc)
    except InputError as exc:  # the kind's values check their own order and range as read
        raise CertificateError(path, f"contradicts itself: results: {exc.message}",
                               hint=f"edited or corrupted; re-run {producer} to regenerate it",
                               reason="contradiction") from exc
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise CertificateError(path, f"does not read as a {doc['kind']} certificate "
                                     f"({clip(repr(exc))})",
                               hint=f"re-run {producer} to regenerate it",
                               reason="invalid") from exc


# (digest, signature) of documents found sound: a gate's baseline often holds the very
# certificates it is given, and their digest (checked against their content) says so.
_SOUND: set[tuple[str, str]] = set()


def _sound(doc: Mapping[str, Any], path: Path | str, digest: str, producer: str) -> Certificate:
    """The typed value of `doc`, made once: raise unless it fits its schema and its claims
    agree with its evidence (checked on the document and on that typed value)."""
    # "absent" is no repr of any JSON value: `"signature": null` (which the schema refuses,
    # a signature being an object) must not share the seal of a certificate with none
    seal = (digest, repr(doc["signature"]) if "signature" in doc else "absent")
    if seal in _SOUND:
        return _typed(doc, path, producer)
    problems = validate_certificate(doc)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        first = problems[0]
        reason = "missing_field" if first.startswith("missing field") else "invalid"
        raise CertificateError(path, first + more, hint=f"re-run {producer} to regenerate it",
                               reason=reason)
    cert = _typed(doc, path, producer)
    found = contradictions(doc, cert.result)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise CertificateError(path, f"contradicts itself: {found[0]}{more}",
                               hint=f"edited or corrupted; re-run {producer} to regenerate it",
                               reason="contradiction")
    if len(_SOUND) < 100_000:
        _SOUND.add(seal)
    return cert


def check_stale(cert: Certificate, path: Path | str, digest_of: DigestOf,
                method_of: MethodOf | None = None, *, method_change: str = "stale") -> None:
    """Raise when the workload's sources, or graphcert's method for this kind (unless
    `method_change` is "warn"), changed since the certificate was made."""
    workload = cert.workload
    # the file's own strings, shortened: a 100 KB reference must not make a 100 KB line
    ref, name = clip(workload.ref), clip_repr(workload.name)
    producer = spec(cert.kind).producer
    try:
        current = digest_of(workload.ref)
    except (GraphcertError, OSError) as exc:
        raise CertificateError(path, f"sources of workload {name} not found ({clip(str(exc))}); "
                                     f"cannot check staleness", reason="sources_missing") from exc
    if current is None:
        raise CertificateError(path, f"sources of workload {name} ({ref}) not found; cannot "
                                     f"check staleness",
                               hint="run the gate where the workload's sources are",
                               reason="sources_missing")
    if current != workload.source_digest:
        raise CertificateError(
            path, f"stale: the sources of workload {name} changed since this certificate "
                  f"was made", hint=f"re-run {producer} {ref}", reason="stale")
    if method_change == "stale" and method_changed(cert, method_of):
        raise CertificateError(
            path, f"stale: graphcert's {cert.kind} method (harness code or kernels) changed "
                  f"since this certificate was made",
            hint=f"re-run {producer} {ref}, or set method_change = \"warn\" in the policy",
            reason="stale_method")


def method_changed(cert: Certificate, method_of: MethodOf | None) -> bool:
    """True when graphcert's method for the certificate's method kind differs from the
    recorded one (`method_of(method_kind)`, passed in by the caller; None: not checked)."""
    if method_of is None:
        return False
    try:
        current = method_of(cert.method_kind)
    except (GraphcertError, OSError):
        current = None  # graphcert's own files unreadable: nothing to compare with
    return current is not None and current != cert.workload.method_digest


def memoized_digests(digest_of: DigestOf) -> DigestOf:
    """`digest_of` computing each digest once (for many certificates: sources per workload
    ref, or graphcert's method per kind)."""
    cache: dict[str, str | None] = {}

    def memo(ref: str) -> str | None:
        if ref not in cache:
            cache[ref] = digest_of(ref)
        return cache[ref]

    return memo


def load_certificate(path: Path | str, *, digest_of: DigestOf | None = None,
                     method_of: MethodOf | None = None) -> Certificate:
    """Read, check and return a certificate (typed); CertificateError says what is wrong. With
    `digest_of` (the workload registry's source digest, passed in by the caller: this pure
    layer never imports workloads) a stale certificate is refused too; with `method_of` also
    one whose graphcert method changed."""
    doc = read_document(path)
    return check_document(doc, path, digest_of=digest_of, method_of=method_of)


def staleness(cert: Certificate, digest_of: DigestOf,
              method_of: MethodOf | None = None) -> str:
    """'current', "current (graphcert's method changed)", 'stale' or 'not found': for
    show, which displays instead of failing."""
    try:
        current = digest_of(cert.workload.ref)
    except (GraphcertError, OSError):
        current = None
    if current is None:
        return "not found"
    if current != cert.workload.source_digest:
        return "stale"
    return ("current (graphcert's method changed)" if method_changed(cert, method_of)
            else "current")
