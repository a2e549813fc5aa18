"""The gate's answer when it cannot judge (exit 2): stale, tampered, unsigned or unreadable
certificates, a bad policy or signing key. It is a report like any other, so CI's JSON, JUnit
and markdown still say what was wrong, and it is the one gate call
`graphcert gate` and `graphcert report` share. Pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from graphcert.cert.signing import SigningKey
from graphcert.cert.store import DigestOf, MethodOf
from graphcert.errors import ExitStatus, GraphcertError
from graphcert.gate.policy import Policy, load_policy
from graphcert.gate.report import GateRun, UnusableInput, display_path, gate_run
from graphcert.jsontypes import JSONObject


@dataclass(frozen=True)
class UnusableReport:
    """What the gate was given and each input it could not use, one line each, as the
    command line prints them."""

    created: str
    policy: Policy | None  # None: the policy itself could not be read
    baseline: str | None
    problems: tuple[str, ...]

    status = "unusable"
    passed = False
    exit_code = ExitStatus.UNUSABLE

    def to_dict(self) -> JSONObject:
        """The keys of GateReport.to_dict, so a reader of the JSON needs no second schema:
        no certificates or checks were judged, `unusable` says why."""
        return {"status": self.status, "passed": self.passed, "exit_code": int(self.exit_code),
                "created": self.created,
                "policy": self.policy.to_dict() if self.policy is not None else None,
                "baseline": self.baseline, "skipped_snapshots": 0,
                "unusable": list(self.problems), "checks": [], "certificates": []}


def judge(paths: Sequence[Path], *, policy_file: Path | None, baseline: Path | None,
          created: str, digest_of: DigestOf | None, method_of: MethodOf | None,
          key: Callable[[], SigningKey | None], require_signature: bool
          ) -> GateRun | UnusableReport:
    """The gate over `paths`: its run, or the report of why it could not judge. The policy
    and the signing key (`key` loads it; the caller reads the environment) are read here so
    that a bad one is listed like an unusable certificate, never a bare exit."""
    policy: Policy | None = None
    try:
        policy = load_policy(policy_file)
        signing_key = key()
        return gate_run(paths, policy=policy, baseline=baseline, created=created,
                        digest_of=digest_of, method_of=method_of, key=signing_key,
                        require_signature=require_signature)
    except UnusableInput as exc:
        problems = exc.problems
    except GraphcertError as exc:  # the policy, a policy entry naming no workload, the key
        problems = (exc.one_line(),)
    return UnusableReport(created, policy, None if baseline is None else display_path(baseline),
                          tuple(problems))
