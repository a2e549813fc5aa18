"""Shared fixtures. GPU fixtures skip only when there is no driver or no device."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _thorough import PROFILE
from hypothesis import settings

TESTS = Path(__file__).resolve().parent

# No deadline: a property test that fails because a loaded machine ran one example slowly
# says nothing about the code. "thorough" runs 10x hypothesis's default examples wherever a
# test does not set its own count (tests/_thorough.py scales the ones that do).
settings.register_profile("ci", deadline=None)
settings.register_profile("thorough", deadline=None, max_examples=1000)
settings.load_profile(PROFILE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/gpu/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.gpu)


@pytest.fixture()
def synthetic_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """For CLI tests of synthetic certificates: fake source digests, no GitHub summary, a
    wide plain terminal, and the tmp dir as cwd (returned)."""
    from _certfactory import fake_digest

    from graphcert import workloadref
    from graphcert.workloads import registry

    # the certificate-reading commands find sources through graphcert.workloadref, the
    # recording side (run/) through the registry's re-export of the same function
    for module in (workloadref, registry):
        monkeypatch.setattr(module, "source_digest", lambda ref, *a: fake_digest(ref))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="session")
def gpu_ctx() -> Iterator[object]:
    """A RunContext on device 0. NoDriverError skips; every other error fails the test."""
    from graphcert.cuda.context import RunContext
    from graphcert.errors import NoDriverError

    try:
        ctx = RunContext.open(0, seed=1234)
    except NoDriverError as exc:
        pytest.skip(f"no CUDA driver or device: {exc}")
    yield ctx
    ctx.close()


@pytest.fixture
def stream(gpu_ctx: object) -> Iterator[object]:
    from graphcert.cuda.stream import Stream

    s = Stream()
    yield s
    s.synchronize()
    s.destroy()


@pytest.fixture
def test_kernels() -> Path:
    """Kernels used only by tests (they include kernels/graphcert_device.cuh)."""
    return TESTS / "kernels" / "graphcert_test.cu"


@pytest.fixture
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private kernel cache, so tests never see each other's entries."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("GRAPHCERT_CACHE", str(cache))
    return cache


@pytest.fixture(autouse=True)
def no_signing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Certificates are unsigned unless a test sets a key (a developer's key never leaks in)."""
    monkeypatch.delenv("GRAPHCERT_SIGNING_KEY", raising=False)
    monkeypatch.delenv("GRAPHCERT_SIGNING_KEY_FILE", raising=False)


@pytest.fixture()
def no_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    """cuInit as on a machine without the driver library, on any machine: the first driver
    call is NoDriverError (exit 3), so a CLI test sees where the GPU work would start."""
    from types import SimpleNamespace

    from graphcert.cuda import check

    def absent(flags: int) -> None:
        raise OSError("libcuda.so.1: cannot open shared object file (test)")

    monkeypatch.setattr(check, "driver", SimpleNamespace(cuInit=absent))
    monkeypatch.setattr(check, "_initialized", False)
    monkeypatch.setattr(check, "_driver_loaded", False)
