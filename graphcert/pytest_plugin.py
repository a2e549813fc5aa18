"""pytest plugin (entry point `pytest11: graphcert`; without the installed entry point,
`-p graphcert.pytest_plugin`): assert in your own tests that a framework step, or a
workload, is graph-safe over its buckets.

    def test_decode_is_graph_safe(graphcert_verify):
        graphcert_verify(DECODE, "vllm:64")      # a graphcert.step(...) declaration
        graphcert_verify("scan", "2^8..2^12")    # or a workload reference, as the CLI takes

The fixture verifies (a step: capture per bucket, padded replay against the eager call) and
returns the VerifyResult; a verdict that is not pass fails the test through pytest.fail
(`pytest.fail.Exception`, a BaseException: `except Exception` does not catch it) with the
failing bucket, size, node and reason; bad input (an unknown workload, a malformed bucket
list) fails it in one line; a framework that is not installed or has no device, or no GPU,
skips it with that reason, reported at the line of the test. With `--graphcert-out DIR` (or
the ini key `graphcert_out`) each verified topology certificate is written there, for
`graphcert gate`. The ini keys `graphcert_classes` (default vllm:64) and `graphcert_samples`
(default 4) set the defaults. Steps run on `--graphcert-device N`, else $GRAPHCERT_DEVICE,
else GPU 0 (a call's `device=` overrides).
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from graphcert.kinds.topology.result import ClassResult, VerifyResult

if TYPE_CHECKING:
    from graphcert.buckets import Buckets
    from graphcert.frameworks.step import Step
    from graphcert.options import Options


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


def _label(step: object) -> str:
    """How a failure names what was verified: `step NAME` or `workload REF`."""
    return f"workload {step}" if isinstance(step, str) else f"step {getattr(step, 'name', step)}"


def _reference(step: Step) -> str:
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
        # A plugin is an entry point like the command line: the environment is read here,
        # once (the device, the signing key, the git commit of a copy without .git), and
        # what the fixture does is built from this copy.
        self.environ: dict[str, str] = dict(os.environ)

    def options(self, *, signing: bool = True) -> Options:
        """The session's Options, from the environment as read when the session began;
        without `signing` no key is loaded (a bad key cannot stop what writes nothing)."""
        from graphcert.options import Options

        return Options.from_environ(self.environ, signing=signing)

    def device(self) -> int:
        """--graphcert-device, else $GRAPHCERT_DEVICE, else 0 (a bad variable: a usage error
        naming it, as the CLI's exit 2)."""
        from graphcert.commands._options import resolve_device
        from graphcert.errors import InputError

        try:
            return resolve_device(self.config.getoption("graphcert_device"),
                                  self.options(signing=False))
        except InputError as exc:
            raise pytest.UsageError(f"graphcert: {exc.one_line()}") from None

    def __call__(self, step: Step | str, classes: str | None = None, *,
                 samples: int | None = None, seed: int = 0, ref: str | None = None,
                 device: int | None = None) -> VerifyResult:
        """Verify `step` (a graphcert.step declaration, or a workload reference: a built-in
        name, path/file.py:NAME, package.module:NAME) over `classes` (a range, bucket list or
        preset) on GPU `device`; fail the test with the failing bucket, size, node and
        reason; skip when its framework or a GPU is not there."""
        # Skips and failures are reported at the line of the user's test that called us.
        __tracebackhide__ = True
        from graphcert.errors import FrameworkMissing, GraphcertError, NoDriverError

        spec = classes or self.classes
        # skip and fail outside the except blocks, so the report is the line alone, with no
        # "during handling of the above exception" chain
        skip = problem = None
        try:
            result = self._verify(step, spec, samples or self.samples, seed, ref, device)
        except (FrameworkMissing, NoDriverError) as exc:
            skip = exc.one_line()
        except GraphcertError as exc:  # bad input: one line, no traceback into graphcert
            problem = exc.one_line()
        if skip is not None:
            pytest.skip(f"graphcert: {skip}")
        if problem is not None:
            pytest.fail(f"graphcert: {problem}", pytrace=False)
        if not result.verdict.passed:
            lines = failure_lines(result)
            pytest.fail(f"graphcert: {_label(step)} is not graph-safe over {spec} "
                        f"({result.verdict.status.value}):\n  " + "\n  ".join(lines),
                        pytrace=False)
        return result

    def _verify(self, step: object, spec: str, samples: int, seed: int, ref: str | None,
                device: int | None) -> VerifyResult:
        """The verify the call asks for, its certificate written when asked: a step here, a
        reference through the commands' own call (run/jobs)."""
        from graphcert.apicheck import type_name
        from graphcert.buckets import parse_buckets
        from graphcert.errors import InputError
        from graphcert.frameworks.step import Step as StepType

        buckets = parse_buckets(spec)
        gpu = self.device() if device is None else device
        if isinstance(step, str):
            if ref is not None:
                raise InputError(f"ref={ref!r} names a step's certificate; the workload "
                                 f"reference {step!r} is its own", hint="drop ref=")
            return self._verify_reference(step, buckets, spec, samples, seed, gpu)
        if not isinstance(step, StepType):
            raise InputError(f"graphcert_verify takes a graphcert.step(...) declaration or a "
                             f"workload reference such as 'scan' or 'path/file.py:NAME', not "
                             f"a {type_name(step)}")
        from graphcert.run.steps import verify_step

        ref = ref or _reference(step)
        result = verify_step(step, ref, buckets, samples=samples, seed=seed,
                             classes_spec=spec, device=gpu)
        if self.out_dir is not None:
            self.written.append(self._write(result, ref, step, gpu))
        return result

    def _verify_reference(self, ref: str, buckets: Buckets, spec: str, samples: int,
                          seed: int, device: int) -> VerifyResult:
        """A workload reference, verified as `graphcert verify REF` verifies it."""
        from graphcert.run.jobs import verify_workloads

        (done,) = verify_workloads([ref], buckets, samples=samples, seed=seed,
                                   classes_spec=spec, device=device, out_dir=self.out_dir,
                                   options=self.options())
        if done.certificate is not None:
            self.written.append(done.certificate)
        return done.result

    def _write(self, result: VerifyResult, ref: str, step: Step, device: int) -> Path:
        from graphcert.fileio import ensure_writable_dir
        from graphcert.run import environment
        from graphcert.workloads.loaded import LoadedWorkload

        assert self.out_dir is not None
        ensure_writable_dir(self.out_dir)
        options = self.options()
        loaded = LoadedWorkload(ref, "the graphcert_verify fixture", step)
        return environment.write(result, self.out_dir, loaded,
                                 environment.environment(device, options.git),
                                 key=options.signing_key)


@pytest.fixture
def graphcert_verify(request: pytest.FixtureRequest) -> Callable[..., VerifyResult]:
    """Verify a framework step over its buckets; fails with bucket, size, node and reason."""
    return StepVerify(request.config)
