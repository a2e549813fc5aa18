/* /proc/self facts for the stream's file name and its `process` line. */
#define _GNU_SOURCE
#include "procinfo.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The whole of a /proc file (they report size 0, so read until end); NULL if unreadable. */
static char *slurp(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        ssize_t got = read(fd, buf + n, cap - n);
        if (got <= 0) break;
        n += (size_t)got;
        if (n == cap) {
            char *more = realloc(buf, 2 * cap + 1);
            if (!more) { free(buf); buf = NULL; break; }
            buf = more;
            cap *= 2;
        }
    }
    close(fd);
    if (buf) buf[n] = '\0';
    *len = n;
    return buf;
}

unsigned long long gc_start_ticks(void) {
    size_t n = 0;
    char *stat = slurp("/proc/self/stat", &n);
    unsigned long long ticks = 0;
    /* The command name (field 2) may hold spaces and parentheses: count from its last ')'. */
    char *p = stat ? strrchr(stat, ')') : NULL;
    if (p) {
        int field = 2;
        for (; *p && field < 22; p++)
            if (*p == ' ') field++;
        ticks = strtoull(p, NULL, 10);
    }
    free(stat);
    return ticks;
}

void gc_process_fields(jbuf *b) {
    jl_ki64(b, "pid", (int64_t)getpid());
    jl_ki64(b, "ppid", (int64_t)getppid());
    jl_key(b, "argv");
    jb_raw(b, "[", 1);
    size_t n = 0;
    char *cmd = slurp("/proc/self/cmdline", &n);
    for (size_t i = 0; cmd && i < n; i += strlen(cmd + i) + 1) {
        if (i) jb_raw(b, ",", 1);
        jb_str(b, cmd + i);
    }
    free(cmd);
    jb_raw(b, "]", 1);
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len >= 0) exe[len] = '\0';
    jl_kstr(b, "exe", len >= 0 ? exe : NULL);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    jl_ku64(b, "wall_ns", (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
}
