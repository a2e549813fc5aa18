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

static exit_fn real_exit, real_Exit;

/* The real calls are found when the library is loaded (one thread, no lock held), not at
 * _exit: a forked child of a threaded program must not need the loader's lock to end. */
__attribute__((constructor)) static void find_real(void) {
    void *a = dlsym(RTLD_NEXT, "_exit"), *b = dlsym(RTLD_NEXT, "_Exit");
    memcpy(&real_exit, &a, sizeof a);
    memcpy(&real_Exit, &b, sizeof b);
}

__attribute__((noreturn)) static void leave(exit_fn real, int status) {
    finish_fn finish = atomic_load(&registered);
    if (finish) finish(status);
    if (real) real(status);
    for (;;) syscall(SYS_exit_group, status); /* what glibc's _exit does, if none was found */
}

void _exit(int status) { leave(real_exit, status); }

void _Exit(int status) { leave(real_Exit ? real_Exit : real_exit, status); }
