"""The Workload protocol's optional hooks: declared once (WorkloadBase) with their defaults,
resolved once at load (hooks_of) the same for subclasses and duck-typed workloads."""

from __future__ import annotations

import dataclasses

import pytest

from graphcert.workloads.base import OPTIONAL_HOOKS, SizeParam, Tolerance, WorkloadBase
from graphcert.workloads.loaded import Hooks, hooks_of
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


class SetUp(WorkloadBase):
    """Size parameters that depend on the class set up, as scan's and join's do."""

    capacity = 0

    @property
    def size_params(self) -> tuple[SizeParam, ...]:
        return (SizeParam("small", 1),) if self.capacity <= 256 else (SizeParam("big", 1),)


@pytest.mark.parametrize("workload", [Bare(), WorkloadBase()], ids=["duck", "base"])
def test_defaults(workload: object) -> None:
    hooks = hooks_of(workload)
    assert hooks.predict(8) is None
    assert hooks.size_params() == ()
    assert hooks.tolerance() == Tolerance()
    assert not hooks.builds_explicitly and hooks.build is None
    assert hooks.bytes_needed(8) is None


def test_a_workloads_own_hooks_win() -> None:
    hooks = hooks_of(Full())
    assert hooks.predict(8) == {"kernel": 4}
    assert hooks.size_params()[0].value(5) == 10
    assert hooks.tolerance().rtol == 1e-3
    assert hooks.builds_explicitly
    assert hooks.bytes_needed(8) == 32


def test_size_params_are_read_when_asked_not_at_load() -> None:
    workload = SetUp()
    hooks = hooks_of(workload)
    workload.capacity = 1024  # what setup(1024) does
    assert [p.kernel for p in hooks.size_params()] == ["big"]


def test_only_declared_hooks() -> None:
    assert set(OPTIONAL_HOOKS) == {"predict", "size_params", "tolerance", "build",
                                   "bytes_needed"}
    assert {f.name for f in dataclasses.fields(Hooks)} == set(OPTIONAL_HOOKS)


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_builtins_define_prediction_and_memory_hooks(name: str) -> None:
    # built-ins are duck-typed (subclassing would change their source digest and make the
    # recorded reports stale); they define the hooks verify and capture lean on
    hooks = load(name).native().hooks
    assert hooks.predict(256) is not None and hooks.bytes_needed(256) is not None
