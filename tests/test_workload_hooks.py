"""The Workload protocol's optional hooks: declared once (WorkloadBase) with their defaults,
the same for subclasses and duck-typed workloads."""

from __future__ import annotations

import pytest

from graphcert.workloads.base import (
    OPTIONAL_HOOKS,
    SizeParam,
    Tolerance,
    WorkloadBase,
    builds_explicitly,
    hook,
    memory_estimate,
    predict,
    size_params,
    tolerance,
)
from graphcert.workloads.registry import BUILTINS, load


class Bare:
    """A duck-typed workload that defines no optional hook."""

    name = "bare"


class Full(WorkloadBase):
    size_params = (SizeParam("k", 1, scale=2),)
    tolerance = Tolerance(rtol=1e-3)

    def predict(self, capacity: int) -> dict[str, int]:
        return {"kernel": capacity.bit_length()}

    def bytes_needed(self, capacity: int) -> int:
        return 4 * capacity

    def build(self, builder: object, n: int) -> None:  # type: ignore[override]
        raise AssertionError("not called here")


@pytest.mark.parametrize("workload", [Bare(), WorkloadBase()], ids=["duck", "base"])
def test_defaults(workload: object) -> None:
    assert predict(workload, 8) is None
    assert size_params(workload) == ()
    assert tolerance(workload) == Tolerance()
    assert not builds_explicitly(workload)
    assert memory_estimate(workload, 8) is None


def test_a_workloads_own_hooks_win() -> None:
    w = Full()
    assert predict(w, 8) == {"kernel": 4}
    assert size_params(w)[0].value(5) == 10
    assert tolerance(w).rtol == 1e-3
    assert builds_explicitly(w)
    assert memory_estimate(w, 8) == 32


def test_only_declared_hooks() -> None:
    assert set(OPTIONAL_HOOKS) == {"predict", "size_params", "tolerance", "build",
                                   "bytes_needed"}
    with pytest.raises(ValueError, match="not an optional workload hook"):
        hook(Bare(), "setup")


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_builtins_define_prediction_and_memory_hooks(name: str) -> None:
    # built-ins are duck-typed (subclassing would change their source digest and make the
    # recorded reports stale); they define the hooks verify and capture lean on
    w = load(name)
    assert predict(w, 256) is not None and memory_estimate(w, 256) is not None
