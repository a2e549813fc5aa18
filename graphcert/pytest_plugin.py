"""pytest plugin (entry point `pytest11: graphcert`): assert in your own tests that a framework
step is graph-safe over its buckets.

    def test_decode_is_graph_safe(graphcert_verify):
        graphcert_verify(decode_step, classes="vllm:64")

The fixture verifies the step (capture per bucket, padded replay against the eager call) and
fails the test with the failing bucket, size, node and reason; a framework that is not
installed, or has no device, skips the test with that reason. With `--graphcert-out DIR` (or
the ini key `graphcert_out`) each verified step's topology certificate is written there, for
`graphcert gate`. `graphcert_classes` / `graphcert_samples` set the defaults. Steps run on
`--graphcert-device N`, else $GRAPHCERT_DEVICE, else GPU 0 (a call's `device=` overrides).
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from graphcert.cert.results import ClassResult, VerifyResult

if TYPE_CHECKING:
    from graphcert.frameworks.step import Step


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("graphcert", "graphcert: CUDA graph safety of framework steps")
    group.addoption("--graphcert-out", dest="graphcert_out", default=None,
                    help="write the topology certificate of each step graphcert_verify "
                         "checks into this folder")
    group.addoption("--graphcert-device", dest="graphcert_device", default=None, type=int,
                    metavar="N", help="GPU the steps run on (default: $GRAPHCERT_DEVICE or 0)")
    parser.addini("graphcert_out", "folder for graphcert_verify's topology certificates",
                  default="")
    parser.addini("graphcert_classes", "default buckets of graphcert_verify", default="vllm:64")
    parser.addini("graphcert_samples", "default sizes sampled per bucket", default="4")


def failure_lines(result: VerifyResult) -> list[str]:
    """One line per failing bucket and size: bucket, n, node where known, and why."""
    lines = []
    for cls in result.classes:
        if not isinstance(cls, ClassResult) or cls.passed:
            continue
        bad = [s for s in cls.samples if not s.ok]
        for s in bad:
            node = s.update.failing_node if s.update is not None else None
            where = f"bucket {cls.capacity:,}, n={s.n:,}" + (
                f", node {node}" if node is not None else "")
            lines.append(f"{where}: {s.error or 'output differs from the eager call'}")
        if not bad:
            lines.extend(f"bucket {cls.capacity:,}: {why}" for why in cls.reasons)
    if not lines:
        lines = list(result.verdict.reasons)
    return lines


def _reference(step: Any) -> str:
    """`file.py:NAME` of the module attribute holding the step (what the certificate's
    source digest covers), else the file defining its callable."""
    module = sys.modules.get(getattr(step.fn, "__module__", "") or "")
    path = getattr(module, "__file__", None)
    for attr, value in vars(module).items() if module is not None and path else ():
        if value is step:
            return f"{path}:{attr}"
    try:
        source = inspect.getsourcefile(step.fn)
    except TypeError:
        source = None
    return f"{source}:{step.name}" if source else str(step.name)


class StepVerify:
    """The `graphcert_verify` fixture's value: call it with a step."""

    def __init__(self, config: pytest.Config):
        self.config = config
        out = config.getoption("graphcert_out") or config.getini("graphcert_out")
        self.out_dir = Path(out) if out else None
        self.classes = str(config.getini("graphcert_classes") or "vllm:64")
        self.samples = int(config.getini("graphcert_samples") or 4)
        self.written: list[Path] = []

    def device(self) -> int:
        """--graphcert-device, else $GRAPHCERT_DEVICE, else 0 (a bad variable: a usage error
        naming it, as the CLI's exit 2)."""
        from graphcert.commands._options import resolve_device
        from graphcert.errors import InputError
        from graphcert.options import Options

        try:
            return resolve_device(self.config.getoption("graphcert_device"),
                                  Options.from_environ(os.environ, signing=False))
        except InputError as exc:
            raise pytest.UsageError(f"graphcert: {exc.one_line()}") from None

    def __call__(self, step: Any, classes: str | None = None, *, samples: int | None = None,
                 seed: int = 0, ref: str | None = None, device: int | None = None
                 ) -> VerifyResult:
        """Verify `step` over `classes` (a range, bucket list or preset) on GPU `device`;
        fail the test with the failing bucket, size, node and reason; skip when its
        framework cannot run."""
        from graphcert.buckets import parse_buckets
        from graphcert.errors import FrameworkMissing
        from graphcert.run.steps import verify_step

        spec = classes or self.classes
        ref = ref or _reference(step)
        gpu = self.device() if device is None else device
        try:
            result = verify_step(step, ref, parse_buckets(spec), samples=samples or self.samples,
                                 seed=seed, classes_spec=spec, device=gpu)
        except FrameworkMissing as exc:
            pytest.skip(f"graphcert: {exc.one_line()}")
        if self.out_dir is not None:
            self.written.append(self._write(result, ref, step, gpu))
        if not result.verdict.passed:
            lines = failure_lines(result)
            pytest.fail(f"graphcert: step {step.name} is not graph-safe over {spec} "
                        f"({result.verdict.status.value}):\n  " + "\n  ".join(lines),
                        pytrace=False)
        return result

    def _write(self, result: VerifyResult, ref: str, step: Step, device: int) -> Path:
        from graphcert.fileio import ensure_writable_dir
        from graphcert.options import Options
        from graphcert.run import environment
        from graphcert.workloads.loaded import LoadedWorkload

        assert self.out_dir is not None
        ensure_writable_dir(self.out_dir)
        # A plugin is an entry point like the command line: it reads the environment (the
        # signing key, the git commit of a copy without .git) and passes it down.
        options = Options.from_environ(os.environ)
        loaded = LoadedWorkload(ref, "the graphcert_verify fixture", step)
        return environment.write(result, self.out_dir, loaded,
                                 environment.environment(device, options.git),
                                 key=options.signing_key)


@pytest.fixture
def graphcert_verify(request: pytest.FixtureRequest) -> Callable[..., VerifyResult]:
    """Verify a framework step over its buckets; fails with bucket, size, node and reason."""
    return StepVerify(request.config)
