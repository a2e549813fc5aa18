/* The per-process stream writer (see jsonout.h). No allocation or lock in a forked child:
 * jo_forget only flips flags. */
#define _GNU_SOURCE
#include "jsonout.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WRITE_AT (1u << 20) /* write the buffer out once it holds this much */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;
static atomic_int off = 1; /* 1: no stream (not opened, closed, or inherited by a fork) */
static jbuf pending;
#define IMPATIENT_NS 200000000L /* how long an _exit waits for the stream's lock */

int jo_lock(pthread_mutex_t *m) { return pthread_mutex_lock(m) == 0; }

void jb_init(jbuf *b) { b->data = NULL; b->len = b->cap = 0; b->failed = 0; }

void jb_free(jbuf *b) { free(b->data); jb_init(b); }

static int grow(jbuf *b, size_t extra) {
    if (b->failed) return 0;
    if (b->len + extra + 1 <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) { b->failed = 1; return 0; }
    b->data = p;
    b->cap = cap;
    return 1;
}

void jb_raw(jbuf *b, const char *s, size_t n) {
    if (!grow(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void jb_puts(jbuf *b, const char *s) { jb_raw(b, s, strlen(s)); }

void jb_u64(jbuf *b, uint64_t v) {
    char s[24];
    int n = snprintf(s, sizeof s, "%" PRIu64, v);
    jb_raw(b, s, (size_t)n);
}

void jb_i64(jbuf *b, int64_t v) {
    char s[24];
    int n = snprintf(s, sizeof s, "%" PRId64, v);
    jb_raw(b, s, (size_t)n);
}

/* Length of the valid UTF-8 sequence at p (1 to 4), or 0 if the bytes there are not one. */
static size_t utf8_length(const unsigned char *p) {
    size_t n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
    if (n == 0 || p[0] > 0xf4) return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0; /* also stops at the terminating NUL */
    if (n == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))) return 0;
    if (n == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))) return 0;
    return n;
}

void jb_str(jbuf *b, const char *s) {
    static const char hexd[] = "0123456789abcdef";
    if (!s) { jb_puts(b, "null"); return; }
    jb_raw(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            jb_raw(b, e, 2);
        } else if (c < 0x20 || c == 0x7f) {
            char e[6] = {'\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15]};
            jb_raw(b, e, 6);
        } else if (c >= 0x80) {
            /* The stream is UTF-8 whatever the program's bytes (argv, a path): a byte that
             * starts no valid sequence becomes U+FFFD. */
            size_t n = utf8_length(p);
            if (n) jb_raw(b, (const char *)p, n);
            else jb_raw(b, "\\ufffd", 6);
            p += n ? n : 1;
            continue;
        } else {
            jb_raw(b, (const char *)p, 1);
        }
        p++;
    }
    jb_raw(b, "\"", 1);
}

void jb_hex(jbuf *b, const unsigned char *p, size_t n) {
    static const char hexd[] = "0123456789abcdef";
    if (!grow(b, 2 * n + 2)) return;
    char *o = b->data + b->len;
    *o++ = '"';
    for (size_t i = 0; i < n; i++) { *o++ = hexd[p[i] >> 4]; *o++ = hexd[p[i] & 15]; }
    *o++ = '"';
    b->len += 2 * n + 2;
    b->data[b->len] = '\0';
}

void jl_begin(jbuf *b, const char *t) {
    b->len = 0;
    b->failed = 0;
    jb_puts(b, "{\"t\":");
    jb_str(b, t);
}

void jl_key(jbuf *b, const char *key) {
    jb_raw(b, ",", 1);
    jb_str(b, key);
    jb_raw(b, ":", 1);
}

void jl_ku64(jbuf *b, const char *key, uint64_t v) { jl_key(b, key); jb_u64(b, v); }
void jl_ki64(jbuf *b, const char *key, int64_t v) { jl_key(b, key); jb_i64(b, v); }
void jl_kstr(jbuf *b, const char *key, const char *s) { jl_key(b, key); jb_str(b, s); }

static void write_all(const char *p, size_t n) {
    while (n > 0 && fd >= 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return; /* a full disk or a closed folder: the lines are lost, the program runs on */
        }
        p += w;
        n -= (size_t)w;
    }
}

/* The pid and start ticks stay the same across exec: a process that initialised CUDA and then
 * exec'd another program that does gets a second file, proc-<pid>-<start>-e1.jsonl (then -e2,
 * ...), never lines appended to the first program's stream. */
#define MAX_EXECS 1000

int jo_open(const char *dir, int pid, unsigned long long start) {
    char path[PATH_MAX];
    for (int exec = 0; exec < MAX_EXECS; exec++) {
        int n = exec ? snprintf(path, sizeof path, "%s/proc-%d-%llu-e%d.jsonl", dir, pid, start,
                                exec)
                     : snprintf(path, sizeof path, "%s/proc-%d-%llu.jsonl", dir, pid, start);
        if (n < 0 || (size_t)n >= sizeof path) return -1;
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST) break;
    }
    if (fd < 0) return -1;
    jb_init(&pending);
    atomic_store(&off, 0);
    return 0;
}

void jo_emit(jbuf *b) {
    if (atomic_load(&off) || b->failed) return;
    jb_raw(b, "}\n", 2);
    if (b->failed) return;
    if (!jo_lock(&lock)) return;
    if (!atomic_load(&off)) {
        jb_raw(&pending, b->data, b->len);
        if (pending.failed) { /* no memory to buffer it: what is buffered, then this line */
            write_all(pending.data, pending.len);
            pending.len = 0;
            pending.failed = 0;
            write_all(b->data, b->len);
        } else if (pending.len >= WRITE_AT) {
            write_all(pending.data, pending.len);
            pending.len = 0;
        }
    }
    pthread_mutex_unlock(&lock);
}

void jo_flush(void) {
    if (atomic_load(&off)) return;
    if (!jo_lock(&lock)) return;
    if (!atomic_load(&off) && pending.len) {
        write_all(pending.data, pending.len);
        pending.len = 0;
    }
    pthread_mutex_unlock(&lock);
}

void jo_close(void) {
    if (!jo_lock(&lock)) { /* the holder never lets go (an interrupted thread): stop */
        atomic_store(&off, 1);
        return;
    }
    if (!atomic_load(&off)) {
        write_all(pending.data, pending.len);
        pending.len = 0;
        atomic_store(&off, 1);
        close(fd);
        fd = -1;
    }
    pthread_mutex_unlock(&lock);
}

/* v's decimal digits, written to end just before `end` (24 bytes suffice): where they start. */
static char *decimal(char *end, uint64_t v) {
    char *p = end;
    do { *--p = (char)('0' + v % 10); v /= 10; } while (v);
    return p;
}

static size_t put(char *at, const char *s, size_t n) {
    memcpy(at, s, n);
    return n;
}

void jo_end_now(unsigned code, uint64_t at) {
    if (atomic_load(&off)) return;
    /* The line is built on the stack: no malloc, no stdio. `how` is "_exit", the only way in. */
    char line[128], digits[24];
    size_t n = 0;
    const char *p;
#define LITERAL(s) put(line + n, s, sizeof s - 1)
    n += LITERAL("{\"t\":\"end\",\"how\":\"_exit\",\"code\":");
    p = decimal(digits + sizeof digits, code);
    n += put(line + n, p, (size_t)(digits + sizeof digits - p));
    n += LITERAL(",\"at\":");
    p = decimal(digits + sizeof digits, at);
    n += put(line + n, p, (size_t)(digits + sizeof digits - p));
    n += LITERAL("}\n");
#undef LITERAL
    /* trylock and nanosleep, not a blocking lock: the holder may be the very thread a signal
     * handler calling _exit interrupted. No lock within the wait: nothing is written (a
     * stream without its end line, as a killed process's). */
    int locked = 0;
    for (long waited = 0; waited < IMPATIENT_NS; waited += 1000000L) {
        if (pthread_mutex_trylock(&lock) == 0) { locked = 1; break; }
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
    }
    if (!locked) { atomic_store(&off, 1); return; }
    if (!atomic_load(&off)) {
        write_all(pending.data, pending.len); /* what is buffered: allocated before, not now */
        pending.len = 0;
        write_all(line, n);
        atomic_store(&off, 1);
        close(fd);
        fd = -1;
    }
    pthread_mutex_unlock(&lock);
}

void jo_forget(void) {
    /* The child's copy of the descriptor is closed so nothing of it reaches the parent's file;
     * the buffer (the parent's lines) is left as it is: freeing it could meet a lock the
     * forking thread's sibling held. */
    atomic_store(&off, 1);
    if (fd >= 0) close(fd);
    fd = -1;
}
