"""registry.load returns one typed value, normalised at load: a built-in or a user workload as
a NativeWorkload with its hooks resolved, a framework step as the Step itself."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from graphcert.errors import InputError
from graphcert.frameworks.step import Step
from graphcert.workloads.base import SizeParam, Tolerance
from graphcert.workloads.chain import Chain
from graphcert.workloads.loaded import LoadedWorkload, NativeWorkload
from graphcert.workloads.registry import load

TESTS = Path(__file__).resolve().parents[1]
FIXTURE = TESTS / "fixtures" / "workloads" / "scale.py"


def test_a_builtin_loads_as_a_native_workload_with_its_hooks() -> None:
    loaded = load("chain[kernels=3]")
    assert isinstance(loaded, LoadedWorkload)
    assert (loaded.ref, loaded.origin, loaded.name) == ("chain[kernels=3]",
                                                        "graphcert.workloads.chain", "chain")
    assert isinstance(loaded.target, NativeWorkload) and not loaded.is_step
    assert isinstance(loaded.target.workload, Chain) and loaded.target.workload.kernels == 3
    assert loaded.native() is loaded.target
    with pytest.raises(InputError, match="not a framework step"):
        loaded.step()
    assert loaded.target.hooks.predict(1) == {"kernel": 3}
    assert loaded.target.hooks.tolerance() == Tolerance()


def test_a_user_file_workload_loads_as_a_native_workload() -> None:
    loaded = load(f"{FIXTURE}:Scale")
    assert loaded.origin == str(FIXTURE) and loaded.name == "scale"
    native = loaded.native()
    assert type(native.workload).__name__ == "Scale"
    assert native.hooks.size_params() == (SizeParam("t_scale_u32", 2),)
    assert native.hooks.build is None  # record() is captured


def test_a_framework_step_loads_as_the_step(tmp_path: Path) -> None:
    user = tmp_path / "mystep.py"
    user.write_text(f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
                    "from _fakestep import SAFE\n")
    loaded = load(f"{user}:SAFE")
    assert isinstance(loaded.target, Step) and loaded.is_step
    sys.path.insert(0, str(TESTS))
    import _fakestep

    assert loaded.target is _fakestep.SAFE and loaded.name == _fakestep.SAFE.name
    assert loaded.step() is _fakestep.SAFE
    with pytest.raises(InputError, match="is a framework step"):
        loaded.native()


def test_a_hook_that_raises_at_load_is_one_line(tmp_path: Path) -> None:
    user = tmp_path / "w.py"
    user.write_text("class W:\n"
                    "    name = description = 'w'\n    kernel_files = ()\n"
                    "    def setup(self, ctx, capacity): pass\n"
                    "    def record(self, stream, n): pass\n"
                    "    def outputs(self, n): return {}\n"
                    "    def reference(self, n): return {}\n"
                    "    def teardown(self): pass\n"
                    "    @property\n    def predict(self): raise RuntimeError('boom')\n")
    with pytest.raises(InputError) as info:
        load(f"{user}:W")
    assert "raised RuntimeError: boom" in str(info.value) and "\n" not in str(info.value)
