"""The typed certificate: one frozen value per certificate file, made once by
graphcert.cert.store after the document is checked, and read by the gate, the renderers and
the commands instead of the document's keys. Pure: no CUDA, no numpy.

`Certificate.from_document` trusts its input to fit the schema (the store validates it first);
it converts nothing that a field already holds (a GPU clock recorded as 1980 stays 1980), so
`Environment.to_json` and `WorkloadIdentity.to_json` give back exactly what the file holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from graphcert.cert.kind import KindResult
from graphcert.cert.method import method_kind
from graphcert.cert.registry import spec
from graphcert.cert.results.verdict import Status, Verdict
from graphcert.jsontypes import (
    Doc,
    as_doc,
    as_int,
    as_opt_bool,
    as_opt_doc,
    as_opt_int,
    as_opt_number,
    as_opt_str,
    as_scalar,
    as_str,
)

Scalar = str | int | float | bool | None  # what the schema allows a producer to add


def _scalars(doc: Doc, known: tuple[str, ...] = ()) -> dict[str, Scalar]:
    """The fields of `doc` outside `known`, each kept as the scalar it is (the schema admits
    no other value there): a producer's additions, or a workload's options."""
    return {k: as_scalar(v, k) for k, v in doc.items() if k not in known}


@dataclass(frozen=True)
class GpuFacts:
    """The GPU a certificate was made on, as recorded (`environment.gpu`)."""

    name: str
    uuid: str | None
    compute_capability: str
    sm_count: int | None
    memory_bytes: int | None
    clock_mhz: float | None
    extra: Mapping[str, Scalar] = field(default_factory=dict)  # index, clocks, L2, ...

    _KNOWN = ("name", "uuid", "compute_capability", "sm_count", "memory_bytes", "clock_mhz")

    @property
    def ident(self) -> tuple[str, str]:
        """(name, UUID): an absent UUID reads as '' (one GPU of a fleet is told by both)."""
        return self.name, self.uuid or ""

    def to_json(self) -> dict[str, Scalar]:
        return {"name": self.name, "uuid": self.uuid,
                "compute_capability": self.compute_capability, "sm_count": self.sm_count,
                "memory_bytes": self.memory_bytes, "clock_mhz": self.clock_mhz, **self.extra}

    @classmethod
    def from_json(cls, doc: Doc) -> GpuFacts:
        return cls(as_str(doc, "name"), as_opt_str(doc, "uuid"),
                   as_str(doc, "compute_capability"), as_opt_int(doc, "sm_count"),
                   as_opt_int(doc, "memory_bytes"), as_opt_number(doc, "clock_mhz"),
                   _scalars(doc, cls._KNOWN))


@dataclass(frozen=True)
class GitState:
    """The checkout's commit and whether it was dirty (None: not a checkout, or no git)."""

    commit: str | None
    dirty: bool | None

    def to_json(self) -> dict[str, Scalar]:
        return {"commit": self.commit, "dirty": self.dirty}


@dataclass(frozen=True)
class Environment:
    """Where a certificate was made: the GPU, driver and library versions, host, git."""

    gpu: GpuFacts
    driver_version: str | None
    cuda_driver_api: int | None
    cuda_bindings_version: str | None
    nvrtc_version: str | None
    python: str
    host: str
    platform: str
    git: GitState
    extra: Mapping[str, Scalar] = field(default_factory=dict)  # cuda_version, and additions

    _KNOWN = ("gpu", "driver_version", "cuda_driver_api", "cuda_bindings_version",
              "nvrtc_version", "python", "host", "platform", "git")

    def to_json(self) -> dict[str, Scalar | dict[str, Scalar]]:
        """The `environment` block as the certificate holds it (what diff compares)."""
        return {"gpu": self.gpu.to_json(), "driver_version": self.driver_version,
                "cuda_driver_api": self.cuda_driver_api,
                "cuda_bindings_version": self.cuda_bindings_version,
                "nvrtc_version": self.nvrtc_version, "python": self.python, "host": self.host,
                "platform": self.platform, "git": self.git.to_json(), **self.extra}

    @classmethod
    def from_json(cls, doc: Doc) -> Environment:
        git = as_doc(doc, "git")
        return cls(GpuFacts.from_json(as_doc(doc, "gpu")), as_opt_str(doc, "driver_version"),
                   as_opt_int(doc, "cuda_driver_api"), as_opt_str(doc, "cuda_bindings_version"),
                   as_opt_str(doc, "nvrtc_version"), as_str(doc, "python"),
                   as_str(doc, "host"), as_str(doc, "platform"),
                   GitState(as_opt_str(git, "commit"), as_opt_bool(git, "dirty")),
                   _scalars(doc, cls._KNOWN))


@dataclass(frozen=True)
class WorkloadIdentity:
    """What was certified: the workload's reference and name, its options, the digest of its
    sources and of graphcert's method for this kind (what staleness is judged by)."""

    ref: str
    name: str
    source_digest: str
    method_digest: str
    options: Mapping[str, Scalar] = field(default_factory=dict)

    def to_json(self) -> dict[str, Scalar | dict[str, Scalar]]:
        """The `workload` block as the certificate holds it (what diff compares)."""
        return {"ref": self.ref, "name": self.name, "source_digest": self.source_digest,
                "options": dict(self.options), "method_digest": self.method_digest}

    @classmethod
    def from_json(cls, doc: Doc) -> WorkloadIdentity:
        return cls(as_str(doc, "ref"), as_str(doc, "name"), as_str(doc, "source_digest"),
                   as_str(doc, "method_digest"), _scalars(as_doc(doc, "options")))


@dataclass(frozen=True)
class Signature:
    """An HMAC-SHA256 signature as recorded (checked by graphcert.cert.signing on the
    document, whose canonical bytes it covers)."""

    algorithm: str
    key_id: str
    value: str


_STRICTNESS = {Status.PASS: 0, Status.INCOMPLETE: 1, Status.FAIL: 2}


def judged_verdict(result: KindResult) -> Verdict:
    """The stricter of `result`'s stored verdict and the one its results earn now. A stored
    verdict its evidence contradicts never gets here (the loader refuses it:
    graphcert.cert.evidence); this makes a certificate written before graphcert recorded
    verdict status read incomplete where its results say so (a skipped class)."""
    judged = result.rejudged()
    if _STRICTNESS[judged.status] > _STRICTNESS[result.verdict.status]:
        return judged
    return result.verdict


@dataclass(frozen=True)
class Certificate:
    """One checked certificate, typed: identity, environment, results, verdicts, digest.

    `result` carries the verdict the certificate records (what `show` and the report print);
    `verdict` is the one the gate judges by, the stricter of that and what the results earn
    now (`judged_verdict`).
    """

    kind: str  # one of graphcert.cert.registry.KIND_NAMES (the schema admits no other)
    schema_version: int
    tool_version: str
    created: str
    environment: Environment
    workload: WorkloadIdentity
    result: KindResult
    verdict: Verdict
    digest: str
    signature: Signature | None
    # The document as read, kept only for `graphcert show --json`, which prints the
    # certificate itself rather than a re-serialisation of the typed value. The digest,
    # schema, evidence and signature checks ran on it before this value was made.
    document: Mapping[str, object] = field(default_factory=dict, compare=False, repr=False)

    @property
    def recorded_verdict(self) -> Verdict:
        """The verdict as the certificate records it."""
        return self.result.verdict

    @property
    def method_kind(self) -> str:
        """The kind graphcert's method digest is taken for: "+step" for a framework step
        (graphcert.cert.method.method_kind, as the writer derives it)."""
        return method_kind(self.kind, {"framework": self.result.framework})

    @classmethod
    def from_document(cls, doc: Doc) -> Certificate:
        """The typed value of a schema-valid certificate document (graphcert.cert.store
        checks the document first; this checks nothing the schema does not, and the
        narrowing of each value read cannot fail on a document the schema admits)."""
        kind = str(doc["kind"])
        result = spec(kind).result_type().from_json(as_doc(doc, "results"),
                                                    as_doc(doc, "verdict"))
        sig = as_opt_doc(doc, "signature")
        return cls(kind, as_int(doc, "schema_version"), as_str(as_doc(doc, "tool"), "version"),
                   as_str(doc, "created"), Environment.from_json(as_doc(doc, "environment")),
                   WorkloadIdentity.from_json(as_doc(doc, "workload")), result,
                   judged_verdict(result), as_str(doc, "digest"),
                   Signature(as_str(sig, "algorithm"), as_str(sig, "key_id"),
                             as_str(sig, "value")) if sig else None,
                   doc)

