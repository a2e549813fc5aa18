/* A preload library (LD_PRELOAD) for the processes `graphcert record` starts: _exit and
 * _Exit first call the finish function the collector registered (a process that ends with
 * _exit, such as a forked worker, runs no atexit handler), then the real call. It does not
 * link CUPTI and, where no collector registered, does nothing but the real call. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef void (*finish_fn)(int status);
typedef void (*exit_fn)(int status);

static _Atomic(finish_fn) registered;

EXPORT void graphcert_exit_hook_register(finish_fn finish);
EXPORT void _exit(int status);
EXPORT void _Exit(int status);

void graphcert_exit_hook_register(finish_fn finish) { atomic_store(&registered, finish); }

__attribute__((noreturn)) static void leave(const char *name, int status) {
    finish_fn finish = atomic_load(&registered);
    if (finish) finish(status);
    exit_fn real;
    void *sym = dlsym(RTLD_NEXT, name);
    memcpy(&real, &sym, sizeof real);
    if (real) real(status);
    for (;;) syscall(SYS_exit_group, status); /* no next _exit (never in glibc): end anyway */
}

void _exit(int status) { leave("_exit", status); }

void _Exit(int status) { leave("_Exit", status); }
