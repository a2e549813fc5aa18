"""The collector's _exit path on CPU (GRAPHCERT_COLLECTOR_IDLE, and subscribing where CUPTI
refuses without a GPU): its end line, with the _exit status, is written without malloc or
free, whether _exit is called directly or from a signal handler."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from graphcert.injection.build import Built

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None and shutil.which("gcc") is None,
    reason="no C compiler on this machine")


# A SYNTHETIC stand-in for the driver (as _HOST) whose malloc, calloc, realloc and free end
# the process with status 70 once `forbid` is set: the collector's _exit path must write its
# end line without them. argv[2]: "_exit" calls _exit(9) directly, "signal" from a signal
# handler (as a program's SIGTERM handler that calls os._exit does).
_HOST_NO_MALLOC = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
extern void *__libc_malloc(size_t), *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static volatile int forbid;
static void refuse(void) {
    static const char said[] = "allocation in _exit\n";
    if (write(2, said, sizeof said - 1) < 0) {}
    syscall(SYS_exit_group, 70);
}
void *malloc(size_t n) { if (forbid) refuse(); return __libc_malloc(n); }
void *calloc(size_t n, size_t m) { if (forbid) refuse(); return __libc_calloc(n, m); }
void *realloc(void *p, size_t n) { if (forbid) refuse(); return __libc_realloc(p, n); }
void free(void *p) { if (forbid && p) refuse(); __libc_free(p); }
static void handler(int sig) { (void)sig; _exit(9); }
int main(int argc, char **argv) {
    (void)argc;
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 3; }
    int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
    if (init() != 1) return 4;
    signal(SIGUSR1, handler);
    forbid = 1;
    if (strcmp(argv[2], "signal") == 0) raise(SIGUSR1);
    _exit(9);
}
"""


@pytest.mark.parametrize("idle", [True, False])
@pytest.mark.parametrize("how", ["_exit", "signal"])
def test_the_exit_now_end_line_is_written_without_allocating(
        built: Built, tmp_path: Path, how: str, idle: bool) -> None:
    src = tmp_path / "no_malloc.c"
    src.write_text(_HOST_NO_MALLOC, encoding="utf-8")
    exe = tmp_path / "no_malloc"
    subprocess.run([shutil.which("cc") or "gcc", str(src), "-o", str(exe), "-ldl", "-rdynamic"],
                   check=True)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    env = {**os.environ, "GRAPHCERT_RUN_DIR": str(run_dir), "GRAPHCERT_FLUSH_MS": "5",
           "LD_PRELOAD": str(built.exit_hook)}
    env.pop("GRAPHCERT_COLLECTOR_IDLE", None)
    if idle:
        env["GRAPHCERT_COLLECTOR_IDLE"] = "1"
    done = subprocess.run([str(exe), str(built.collector), how], capture_output=True, env=env,
                          check=False, timeout=60)
    assert (done.returncode, done.stderr) == (9, b"")
    (stream,) = run_dir.iterdir()
    lines = [json.loads(line) for line in stream.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["t"] == "process"
    end = lines[-1]
    assert set(end) == {"t", "how", "code", "at"} and isinstance(end["at"], int)
    assert {k: end[k] for k in ("t", "how", "code")} == {"t": "end", "how": "_exit", "code": 9}
