"""The verdict every result carries: pass, fail or incomplete, with reasons. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from graphcert.jsontypes import Doc, JSONObject, as_bool, as_opt_str, as_strs


class Status(str, Enum):
    """A verdict: incomplete (something could not run) is never a pass."""

    PASS = "pass"
    FAIL = "fail"
    INCOMPLETE = "incomplete"


@dataclass(frozen=True)
class Verdict:
    """Pass, fail or incomplete, with the reasons; `passed` only for a full pass."""

    status: Status
    reasons: tuple[str, ...] = ()
    # The reasons that say something could not run (the others failed), so a view labels
    # each without judging again. Not in the certificate: one read back knows it only for
    # an incomplete verdict (every reason).
    missing: tuple[str, ...] = field(default=(), compare=False, repr=False)

    @property
    def passed(self) -> bool:
        return self.status is Status.PASS

    @classmethod
    def of(cls, failures: Sequence[str], missing: Sequence[str] = ()) -> Verdict:
        """Fail if anything failed; else incomplete if anything could not run; else pass."""
        status = (Status.FAIL if failures else Status.INCOMPLETE if missing else Status.PASS)
        return cls(status, tuple(failures) + tuple(missing), tuple(missing))

    def labelled(self) -> tuple[tuple[Status, str], ...]:
        """Each reason with what it says: FAIL (something failed) or INCOMPLETE (something
        could not run; every reason of a verdict that is not a fail)."""
        return tuple((Status.INCOMPLETE if why in self.missing or self.status is not Status.FAIL
                      else Status.FAIL, why) for why in self.reasons)

    def combined(self, other: Verdict, prefix: str = "") -> Verdict:
        """Both verdicts as one: the worse status (fail, then incomplete, then pass) and the
        reasons of both, `other`'s each led by `prefix` (e.g. "fresh context: ")."""
        rank = (Status.PASS, Status.INCOMPLETE, Status.FAIL)
        worst = max(self.status, other.status, key=rank.index)
        return Verdict(worst, self.reasons + tuple(prefix + r for r in other.reasons),
                       self.missing + tuple(prefix + r for r in other.missing))

    def to_json(self) -> JSONObject:
        return {"passed": self.passed, "reasons": list(self.reasons),
                "status": self.status.value}

    @classmethod
    def from_json(cls, doc: Doc) -> Verdict:
        """Certificates written before `status` existed hold only `passed`."""
        status = as_opt_str(doc, "status")
        if status is None:
            status = "pass" if as_bool(doc, "passed") else "fail"
        reasons = tuple(as_strs(doc, "reasons")) if "reasons" in doc else ()
        return cls(Status(status), reasons, reasons if status == "incomplete" else ())


