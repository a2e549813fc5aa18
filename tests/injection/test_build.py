"""graphcert.injection.build on CPU: the collector and the exit hook compile here (gcc and
/usr/local/cuda/include/cuda.h are on the CI machine), the cache is reused and rebuilt when a
source changes, a missing compiler or cuda.h is one line with exit code 2, and the exit hook
is harmless in a process without the collector. No GPU: the collector's CUPTI side is run on
the GPU machine; here it runs in GRAPHCERT_COLLECTOR_IDLE mode only (process and end lines)."""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graphcert.errors import ExitStatus
from graphcert.injection.build import Built, CollectorUnavailable, build

# The module (graphcert.injection's `build` attribute is the function of the same name).
build_module = importlib.import_module("graphcert.injection.build")

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None and shutil.which("gcc") is None,
    reason="no C compiler on this machine")


@pytest.fixture()
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("GRAPHCERT_CACHE", str(folder))
    monkeypatch.delenv("CC", raising=False)
    return folder


def _compile_program(tmp_path: Path, name: str, source: str) -> Path:
    src = tmp_path / f"{name}.c"
    src.write_text(source, encoding="utf-8")
    exe = tmp_path / name
    subprocess.run([shutil.which("cc") or "gcc", str(src), "-o", str(exe), "-ldl"], check=True)
    return exe


def test_build_compiles_both_libraries_into_the_cache(cache: Path) -> None:
    built = build()
    assert built.collector.parent.parent == cache / "collector"
    assert built.libcupti.name == "libcupti.so.13" and built.libcupti.is_file()
    assert (built.cupti_include / "cupti_activity.h").is_file()
    collector = ctypes.CDLL(str(built.collector))
    assert hasattr(collector, "InitializeInjection")
    hook = ctypes.CDLL(str(built.exit_hook))
    assert hasattr(hook, "_exit") and hasattr(hook, "graphcert_exit_hook_register")
    # Only the entry point leaves the collector: its helpers never clash with a program's.
    exported = subprocess.run(["nm", "-D", "--defined-only", str(built.collector)],
                              capture_output=True, text=True, check=True).stdout
    assert [line.split()[-1] for line in exported.splitlines()] == ["InitializeInjection"]


def test_a_second_build_reuses_the_cache(built: Built,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHCERT_CACHE", str(built.collector.parent.parent.parent))
    monkeypatch.delenv("CC", raising=False)
    stamp = built.collector.stat().st_mtime_ns, built.exit_hook.stat().st_mtime_ns

    def no_compile(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled again although the cache held the libraries")

    monkeypatch.setattr(build_module, "_compile", no_compile)
    again = build()
    assert again == built
    assert (again.collector.stat().st_mtime_ns, again.exit_hook.stat().st_mtime_ns) == stamp


def test_a_cache_folder_missing_a_library_is_built_again(cache: Path) -> None:
    first = build()
    first.exit_hook.unlink()
    again = build()
    assert again == first and again.exit_hook.is_file() and again.collector.is_file()


def test_a_changed_source_builds_anew(built: Built, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHCERT_CACHE", str(built.collector.parent.parent.parent))
    monkeypatch.delenv("CC", raising=False)
    sources = tmp_path / "sources"
    shutil.copytree(build_module.SOURCE_DIR, sources,
                    ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    with open(sources / "jsonout.c", "a", encoding="utf-8") as f:
        f.write("/* a changed comment */\n")
    monkeypatch.setattr(build_module, "SOURCE_DIR", sources)
    changed = build()
    assert changed.collector.parent != built.collector.parent
    assert changed.collector.is_file() and changed.exit_hook.is_file()
    assert built.collector.is_file()  # the other build's folder stays


def test_no_compiler_is_one_line_naming_the_fix(cache: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "/nonexistent")
    monkeypatch.setenv("PATH", str(tmp_path))  # no cc, gcc or clang there
    with pytest.raises(CollectorUnavailable) as caught:
        build()
    assert caught.value.exit_code == ExitStatus.UNUSABLE == 2
    assert "install gcc or set CC" in caught.value.one_line()
    assert "\n" not in caught.value.one_line()
    monkeypatch.delenv("CC")
    with pytest.raises(CollectorUnavailable, match="no C compiler"):
        build()
    assert not (cache / "collector").exists()


def test_cc_with_an_unbalanced_quote_is_one_line_naming_cc(cache: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setenv("CC", "gcc -DX='unclosed")
    with pytest.raises(CollectorUnavailable) as caught:
        build()
    assert caught.value.exit_code == 2
    line = caught.value.one_line()
    assert "CC=gcc -DX='unclosed" in line and "quote" in line and "\n" not in line


def test_no_cuda_h_is_one_line_naming_the_fix(cache: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "no-toolkit"))
    monkeypatch.setenv("PATH", os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep)
        if not (Path(p) / "nvcc").exists()))
    monkeypatch.setattr(build_module, "DEFAULT_CUDA_INCLUDES", (tmp_path / "nowhere",))
    with pytest.raises(CollectorUnavailable) as caught:
        build()
    assert caught.value.exit_code == 2
    line = caught.value.one_line()
    assert "cuda.h" in line and "set CUDA_HOME" in line and "\n" not in line


def test_no_cupti_wheel_is_one_line_naming_the_fix(cache: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cu13" / "include").mkdir(parents=True)  # headers' folder, but no library
    monkeypatch.setattr(build_module, "nvidia_roots", lambda: [str(tmp_path)])
    with pytest.raises(CollectorUnavailable) as caught:
        build()
    assert caught.value.exit_code == 2
    line = caught.value.one_line()
    assert "no CUPTI wheel" in line and "pip install" in line and "\n" not in line


def test_python_m_graphcert_injection_prints_the_paths(built: Built) -> None:
    env = {**os.environ, "GRAPHCERT_CACHE": str(built.collector.parent.parent.parent)}
    env.pop("CC", None)
    done = subprocess.run([sys.executable, "-m", "graphcert.injection"], capture_output=True,
                          text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"collector: {built.collector}",
                                        f"exit_hook: {built.exit_hook}",
                                        f"libcupti: {built.libcupti}",
                                        f"cupti_include: {built.cupti_include}"]


def test_a_compile_error_names_its_first_line_and_the_log(cache: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    sources = tmp_path / "broken"
    shutil.copytree(build_module.SOURCE_DIR, sources,
                    ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    with open(sources / "procinfo.c", "a", encoding="utf-8") as f:
        f.write("int broken(void) { return undeclared_name; }\n")
    monkeypatch.setattr(build_module, "SOURCE_DIR", sources)
    with pytest.raises(CollectorUnavailable) as caught:
        build()
    line = caught.value.one_line()
    assert "undeclared_name" in line and ".log" in line
    logs = list((cache / "collector").glob("*.log"))
    assert len(logs) == 1 and "undeclared_name" in logs[0].read_text(encoding="utf-8")
    assert not [p for p in (cache / "collector").iterdir() if p.is_dir()]  # nothing half-built


def test_the_exit_hook_is_harmless_without_the_collector(built: Built, tmp_path: Path) -> None:
    exe = _compile_program(tmp_path, "ends_with_exit_now",
                           "#include <unistd.h>\nint main(void) { _exit(7); }\n")
    done = subprocess.run([str(exe)], capture_output=True,
                          env={**os.environ, "LD_PRELOAD": str(built.exit_hook)}, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (7, b"", b"")


# A SYNTHETIC stand-in for the collector's side of the hook: at load it registers a finish
# function that says it ran, as the collector does in InitializeInjection.
_REGISTERS = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
static void finish(int status) { fprintf(stderr, "finished %d\n", status); }
__attribute__((constructor)) static void registers(void) {
    void (*reg)(void (*)(int));
    void *sym = dlsym(RTLD_DEFAULT, "graphcert_exit_hook_register");
    memcpy(&reg, &sym, sizeof reg);
    if (reg) reg(finish);
}
"""


@pytest.mark.parametrize("code", ["import os; os._exit(7)", "import posix; posix._exit(7)"])
def test_pythons_exit_now_goes_through_the_hook(built: Built, tmp_path: Path,
                                                 code: str) -> None:
    src = tmp_path / "registers.c"
    src.write_text(_REGISTERS, encoding="utf-8")
    lib = tmp_path / "libregisters.so"
    subprocess.run([shutil.which("cc") or "gcc", "-shared", "-fPIC", str(src), "-o", str(lib),
                    "-ldl"], check=True)
    env = {**os.environ, "LD_PRELOAD": f"{built.exit_hook} {lib}"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env,
                          check=False)
    assert (done.returncode, done.stdout, done.stderr) == (7, b"", b"finished 7\n")


# A stand-in for the CUDA driver (synthetic: no CUDA here): loads the collector as the driver
# would and calls InitializeInjection, then ends as argv[2] says; first, with "fork" or
# "vfork", a child that ends with _exit(5) (a vfork child shares the parent's memory and runs
# no fork handler, as when Python's subprocess fails to exec); "exec" execs itself to end with
# "exit" (the same pid and start ticks, CUDA initialised again). argv[3] is only recorded.
_HOST = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 3; }
    int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
    if (init() != 1) return 4;
    if (strcmp(argv[2], "fork") == 0) {
        pid_t child = fork();
        if (child == 0) _exit(5);
        int status = 0;
        waitpid(child, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 5) return 6;
    }
    if (strcmp(argv[2], "vfork") == 0) {
        pid_t child = vfork();
        if (child == 0) _exit(5);
        int status = 0;
        waitpid(child, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 5) return 6;
    }
    if (strcmp(argv[2], "_exit") == 0) _exit(9);
    if (strcmp(argv[2], "exec") == 0) {
        execl(argv[0], argv[0], argv[1], "exit", (char *)0);
        return 8;
    }
    return 0;
}
"""


@pytest.mark.parametrize(("how", "status", "end"), [
    ("exit", 0, {"how": "exit", "code": None}),
    ("_exit", 9, {"how": "_exit", "code": 9}),
    ("fork", 0, {"how": "exit", "code": None}),
    ("vfork", 0, {"how": "exit", "code": None}),
])
def test_the_idle_collector_writes_its_process_and_end_lines(
        built: Built, tmp_path: Path, how: str, status: int, end: dict[str, object]) -> None:
    exe = _compile_program(tmp_path, "driver_stand_in", _HOST)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    env = {**os.environ, "GRAPHCERT_RUN_DIR": str(run_dir), "GRAPHCERT_COLLECTOR_IDLE": "1",
           "LD_PRELOAD": str(built.exit_hook)}
    odd = b'odd\xff"quote\nline\\'  # not UTF-8, and characters JSON escapes
    done = subprocess.run([str(exe), str(built.collector), how, odd], capture_output=True,
                          env=env, check=False)
    assert (done.returncode, done.stderr) == (status, b"")
    streams = list(run_dir.iterdir())
    # One stream: the forked child is not the recorded process and writes nothing.
    assert len(streams) == 1 and streams[0].name.startswith(f"proc-{_pid(streams[0])}-")
    lines = [json.loads(line) for line in streams[0].read_text(encoding="utf-8").splitlines()]
    assert [line["t"] for line in lines] == ["process", "end"]
    process = lines[0]
    assert process["argv"] == [str(exe), str(built.collector), how, 'odd\ufffd"quote\nline\\']
    assert process["collector"] == build_module.source_hash()
    assert {k: lines[1][k] for k in ("how", "code")} == end


def _pid(stream: Path) -> int:
    return int(json.loads(stream.read_text(encoding="utf-8").splitlines()[0])["pid"])


def test_without_a_run_dir_the_collector_does_nothing(built: Built, tmp_path: Path) -> None:
    exe = _compile_program(tmp_path, "driver_stand_in", _HOST)
    env = {k: v for k, v in os.environ.items() if k != "GRAPHCERT_RUN_DIR"}
    here = tmp_path / "cwd"
    here.mkdir()
    done = subprocess.run([str(exe), str(built.collector), "exit"], capture_output=True,
                          env=env, cwd=here, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert not list(here.iterdir())


def test_the_subscribing_collector_ends_its_stream_whatever_cupti_says(
        built: Built, tmp_path: Path) -> None:
    """Without a GPU, cuptiSubscribe is refused here (an `error` line); with one it is not:
    either way the stream starts with `process`, ends with `end`, and every line is JSON."""
    exe = _compile_program(tmp_path, "driver_stand_in", _HOST)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    env = {**os.environ, "GRAPHCERT_RUN_DIR": str(run_dir), "GRAPHCERT_FLUSH_MS": "5",
           "LD_PRELOAD": str(built.exit_hook)}
    env.pop("GRAPHCERT_COLLECTOR_IDLE", None)
    done = subprocess.run([str(exe), str(built.collector), "_exit", "x"], capture_output=True,
                          env=env, check=False, timeout=60)
    assert (done.returncode, done.stderr) == (9, b"")
    (stream,) = run_dir.iterdir()
    lines = [json.loads(line) for line in stream.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["t"] == "process"
    assert {k: lines[-1][k] for k in ("t", "how", "code")} == {"t": "end", "how": "_exit",
                                                               "code": 9}
    for line in lines[1:-1]:
        if line["t"] == "error":
            assert set(line) == {"t", "what", "result", "detail"} and line["result"]


def test_an_exec_after_cuda_writes_a_second_stream_of_the_same_pid(built: Built,
                                                                   tmp_path: Path) -> None:
    exe = _compile_program(tmp_path, "driver_stand_in", _HOST)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    env = {**os.environ, "GRAPHCERT_RUN_DIR": str(run_dir), "GRAPHCERT_COLLECTOR_IDLE": "1",
           "LD_PRELOAD": str(built.exit_hook)}
    done = subprocess.run([str(exe), str(built.collector), "exec"], capture_output=True,
                          env=env, check=False)
    assert (done.returncode, done.stderr) == (0, b"")
    first, second = sorted(run_dir.iterdir(), key=lambda p: len(p.name))
    assert second.name == first.name.removesuffix(".jsonl") + "-e1.jsonl"
    before = [json.loads(x) for x in first.read_text(encoding="utf-8").splitlines()]
    after = [json.loads(x) for x in second.read_text(encoding="utf-8").splitlines()]
    # The first program's stream ends at the exec (no end line); the second is whole.
    assert [x["t"] for x in before] == ["process"] and before[0]["argv"][2] == "exec"
    assert [x["t"] for x in after] == ["process", "end"] and after[0]["argv"][2] == "exit"
    assert before[0]["pid"] == after[0]["pid"]
