"""The pytest plugin (graphcert/pytest_plugin.py), run through pytester over the synthetic
framework of tests/_fakestep.py: a safe step passes, an unsafe one fails naming bucket, size
and row, a step that synchronises in capture fails with the fix, a missing framework skips
with its reason, and the certificate is written where told."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
TESTS = Path(__file__).resolve().parents[1]
# -p no:graphcert: where the package is installed its entry point already loads the plugin.
# -p no:hypothesispytest: the users' tests here use no hypothesis, and its plugin's import
# was half of each run's start-up (ten runs).
PLUGIN = ("-p", "no:graphcert", "-p", "graphcert.pytest_plugin", "-p", "no:hypothesispytest")


@pytest.fixture
def user_tests(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # a subprocess: numpy cannot be imported twice in one process, as pytester's in-process
    # runs would do; it finds graphcert and the synthetic framework on PYTHONPATH
    monkeypatch.setenv("PYTHONPATH", f"{TESTS.parent}:{TESTS}")
    pytester.makeconftest(
        "import _certfactory\n"
        "import graphcert.run.environment as env\n"
        "# synthetic framework, synthetic environment: no GPU is read\n"
        "env.environment = lambda device=0, git=None: _certfactory.environment('SYNTHETIC')\n")
    pytester.makepyfile(test_user="""
        from _fakestep import SAFE, UNSAFE, SYNCING
        import graphcert

        def test_safe(graphcert_verify):
            result = graphcert_verify(SAFE, "1,2,4,8,16")
            assert result.verdict.passed and len(result.classes) == 5

        def test_unsafe(graphcert_verify):
            graphcert_verify(UNSAFE, "4,8", samples=3)

        def test_syncing(graphcert_verify):
            graphcert_verify(SYNCING, "8")

        def test_missing_framework(graphcert_verify):
            step = graphcert.step(lambda x: x, lambda n: None, framework="cupy", name="cp")
            graphcert_verify(step, "8")
    """)
    return pytester


def test_plugin_passes_fails_and_skips_with_reasons(user_tests: pytest.Pytester) -> None:
    result = user_tests.runpytest_subprocess(*PLUGIN, "-rs")
    outcomes = result.parseoutcomes()
    out = result.stdout.str()
    try:
        import cupy  # noqa: F401
        cupy_here = True
    except ImportError:
        cupy_here = False
    assert outcomes.get("passed") == 1 and outcomes.get("failed") == 2, out
    result.stdout.fnmatch_lines([
        "*step batch_mean is not graph-safe over 4,8 (fail):*",
        "*bucket 4, n=1: step batch_mean, bucket 4, n=1: output 0 row 0 differs*padded rows*",
        "*step syncs is not graph-safe over 8*",
        "*bucket 8: step syncs, bucket 8: synthetic could not capture it*",
    ])
    if not cupy_here:
        assert outcomes.get("skipped") == 1
        result.stdout.fnmatch_lines(["*graphcert: CuPy is not installed*"])


def test_plugin_writes_the_certificate_where_told(user_tests: pytest.Pytester,
                                                  tmp_path: Path) -> None:
    out = tmp_path / "certs"
    result = user_tests.runpytest_subprocess(*PLUGIN, f"--graphcert-out={out}",
                                             "-k", "safe and not un")
    assert result.parseoutcomes().get("passed") == 1, result.stdout.str()
    (cert_path,) = out.glob("topology-rowwise-*.json")
    cert = json.loads(cert_path.read_text())
    assert cert["verdict"]["status"] == "pass"
    assert cert["workload"]["ref"].endswith("_fakestep.py:SAFE")
    assert [c["bucket"]["cache_key"]["bucket"] for c in cert["results"]["classes"]] == \
        [1, 2, 4, 8, 16]
    from graphcert.cert.store import load_certificate

    load_certificate(cert_path)  # digest and schema hold


def test_ini_key_sets_the_folder(user_tests: pytest.Pytester) -> None:
    user_tests.makeini("[pytest]\ngraphcert_out = inicerts\ngraphcert_samples = 2\n")
    result = user_tests.runpytest_subprocess(*PLUGIN, "-k", "safe and not un")
    assert result.parseoutcomes().get("passed") == 1, result.stdout.str()
    assert len(list((user_tests.path / "inicerts").glob("topology-rowwise-*.json"))) == 1


DEVICE_TEST = """
    import _fakestep
    from _fakestep import SAFE

    def test_device(graphcert_verify):
        graphcert_verify(SAFE, "4", samples=2)
        print("DEVICE", _fakestep.FakeAdapter.made[-1].device)

    def test_call_overrides(graphcert_verify):
        graphcert_verify(SAFE, "4", samples=2, device=5)
        print("DEVICE", _fakestep.FakeAdapter.made[-1].device)
"""


@pytest.mark.parametrize(("args", "env", "want"), [
    ((), None, ["0", "5"]),
    (("--graphcert-device=3",), None, ["3", "5"]),
    ((), "2", ["2", "5"]),
    (("--graphcert-device=1",), "2", ["1", "5"]),  # the option wins over the variable
])
def test_steps_run_on_the_device_asked_for(user_tests: pytest.Pytester,
                                           monkeypatch: pytest.MonkeyPatch,
                                           args: tuple[str, ...], env: str | None,
                                           want: list[str]) -> None:
    if env is None:
        monkeypatch.delenv("GRAPHCERT_DEVICE", raising=False)
    else:
        monkeypatch.setenv("GRAPHCERT_DEVICE", env)
    user_tests.makepyfile(test_device=DEVICE_TEST)
    result = user_tests.runpytest_subprocess(*PLUGIN, *args, "-s", "test_device.py")
    assert result.parseoutcomes().get("passed") == 2, result.stdout.str()
    seen = re.findall(r"DEVICE (\d+)", result.stdout.str())
    assert seen == want


def test_a_bad_device_variable_is_one_usage_error(user_tests: pytest.Pytester,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHCERT_DEVICE", "gpu0")
    user_tests.makepyfile(test_device=DEVICE_TEST)
    result = user_tests.runpytest_subprocess(*PLUGIN, "test_device.py", "-k", "test_device")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*graphcert: $GRAPHCERT_DEVICE='gpu0' is not a device index*"])


REFERENCE_TESTS = """
    import pytest
    import graphcert.cuda.check as check

    def test_step_by_reference(graphcert_verify):
        result = graphcert_verify("{fakestep}:SAFE", "1,2,4", samples=2)
        assert result.verdict.passed and [c.capacity for c in result.classes] == [1, 2, 4]

    def test_builtin_without_a_gpu(graphcert_verify, monkeypatch):
        # synthetic: the driver made absent, as on a machine without one
        def absent(flags):
            raise OSError("libcuda.so.1: cannot open shared object file (test)")
        monkeypatch.setattr(check, "driver", type("D", (), {{"cuInit": staticmethod(absent)}}))
        monkeypatch.setattr(check, "_initialized", False)
        monkeypatch.setattr(check, "_driver_loaded", False)
        graphcert_verify("scan", "2^8..2^9", samples=2)

    def test_unknown_workload(graphcert_verify):
        graphcert_verify("chian", "8")

    def test_not_a_step(graphcert_verify):
        graphcert_verify(42, "8")

    def test_bad_buckets(graphcert_verify):
        from _fakestep import SAFE
        graphcert_verify(SAFE, "8,4")

    def test_failure_is_no_exception(graphcert_verify):
        from _fakestep import UNSAFE
        try:
            graphcert_verify(UNSAFE, "4", samples=2)
        except Exception:
            raise AssertionError("pytest.fail is caught by except Exception")
        except BaseException as exc:
            assert isinstance(exc, pytest.fail.Exception)
            print("CAUGHT", type(exc).__name__)
"""


def test_a_reference_is_verified_and_bad_input_is_one_line(user_tests: pytest.Pytester
                                                           ) -> None:
    """graphcert_verify("scan") no longer crashes inside the plugin: a step's reference is
    verified as the CLI verifies it, a built-in without a GPU skips with the reason, and an
    unknown workload, a non-step, a bad bucket list each fail in one line (no traceback)."""
    user_tests.makepyfile(test_refs=REFERENCE_TESTS.format(fakestep=TESTS / "_fakestep.py"))
    result = user_tests.runpytest_subprocess(*PLUGIN, "-rsf", "-s", "test_refs.py")
    out = result.stdout.str()
    outcomes = result.parseoutcomes()
    assert (outcomes.get("passed"), outcomes.get("skipped"), outcomes.get("failed")) == \
        (2, 1, 3), out
    result.stdout.fnmatch_lines([
        "*CAUGHT Failed*",
        "*_ test_unknown_workload _*",
        "graphcert: unknown workload 'chian' (did you mean chain*",
        "*_ test_not_a_step _*",
        "graphcert: graphcert_verify takes a graphcert.step(...) declaration or a workload "
        "reference such as 'scan' or 'path/file.py:NAME', not a int",
        "*_ test_bad_buckets _*",
        "graphcert: bucket list '8,4' is not ascending (8 then 4)*",
        "SKIPPED [[]1[]] test_refs.py:*: graphcert: no NVIDIA driver found*",
    ])
    assert "During handling" not in out and "Traceback" not in out, out
    assert "AttributeError" not in out and "pytest_plugin.py" not in out, out


def test_skips_point_at_the_users_test(user_tests: pytest.Pytester) -> None:
    """A skip is reported at the line of the test that called graphcert_verify, not at the
    plugin's own line."""
    result = user_tests.runpytest_subprocess(*PLUGIN, "-rs", "-k", "missing_framework")
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed here: the step does not skip")
    except ImportError:
        pass
    lines = [ln for ln in result.stdout.lines if ln.startswith("SKIPPED")]
    assert lines and all(ln.startswith("SKIPPED [1] test_user.py:") for ln in lines), lines
    line_no = int(lines[0].split(":")[1])
    source = (user_tests.path / "test_user.py").read_text().splitlines()
    assert "graphcert_verify(step" in source[line_no - 1], source[line_no - 1]
