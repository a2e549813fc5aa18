/* The per-process JSON-Lines stream: lines are built in a jbuf, then appended whole to the
 * process's buffer (one mutex) and written to proc-<pid>-<start>.jsonl (proc-<pid>-<start>-e<n>.jsonl after an exec) with
 * write(2). */
#ifndef GRAPHCERT_JSONOUT_H
#define GRAPHCERT_JSONOUT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *data;
    size_t len, cap;
    int failed; /* out of memory: the line is dropped rather than written half */
} jbuf;

void jb_init(jbuf *b);
void jb_free(jbuf *b);
void jb_raw(jbuf *b, const char *s, size_t n);
void jb_puts(jbuf *b, const char *s);
void jb_u64(jbuf *b, uint64_t v);
void jb_i64(jbuf *b, int64_t v);
void jb_str(jbuf *b, const char *s); /* a JSON string, escaped; NULL gives null */
void jb_hex(jbuf *b, const unsigned char *p, size_t n); /* "0a1b..." */

/* A line: jl_begin(b, "kernel") writes {"t":"kernel"; jl_key(b, "name") writes ,"name":. */
void jl_begin(jbuf *b, const char *t);
void jl_key(jbuf *b, const char *key);
void jl_ku64(jbuf *b, const char *key, uint64_t v);
void jl_ki64(jbuf *b, const char *key, int64_t v);
void jl_kstr(jbuf *b, const char *key, const char *s);

/* The stream: open it in `dir`; 0 on success. */
int jo_open(const char *dir, int pid, unsigned long long start);
/* Append b's line (adds "}\n") to the process buffer; writes it out when large. */
void jo_emit(jbuf *b);
/* Write the process buffer out now. */
void jo_flush(void);
/* The `_exit` end: what is buffered, then {"t":"end","how":"_exit","code":code,"at":at}, then
 * stop, with write(2) only (no malloc, no stdio, no blocking lock): _exit may come from a
 * signal handler that interrupted malloc or a holder of the stream's lock. */
void jo_end_now(unsigned code, uint64_t at);
/* Flush and stop: later lines are dropped (after the end line, or in a forked child). */
void jo_close(void);
/* A forked child: never write the parent's buffer or stream (no lock taken). */
void jo_forget(void);
/* Take a lock of the collector's: 1 when had. */
int jo_lock(pthread_mutex_t *m);

#endif
