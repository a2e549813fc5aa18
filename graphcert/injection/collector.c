/* The injection collector: the CUDA driver loads this library (CUDA_INJECTION64_PATH) in
 * every process that initialises CUDA and calls InitializeInjection. It subscribes to CUPTI
 * and writes one JSON-Lines stream per process into $GRAPHCERT_RUN_DIR (the format:
 * docs/record-streams.md). Driver callbacks only for graph instantiation, update and stream
 * capture; everything per launch comes from activity records (activity.c). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti_driver_cbid.h>
#include <cupti_version.h>

#include "collector.h"
#include "drv.h"
#include "graphread.h"
#include "jsonout.h"
#include "procinfo.h"

#ifndef GRAPHCERT_SOURCE_HASH
#define GRAPHCERT_SOURCE_HASH "unknown" /* build.py passes the hash of these sources */
#endif

static atomic_int finished;     /* finish ran, or this is a forked copy of a recorded process */
static pid_t owner;             /* the process this stream records */
static int subscribed;
static unsigned flush_ms = 200;
static pthread_t flusher;
static int flusher_running;
static sem_t wake;              /* posted to wake the flush thread (sem_post: signal-safe) */
static atomic_int stop;         /* exit: the flush thread returns */
static atomic_int last_flush;   /* _exit: 1 asks the flush thread for a last flush, 2: done */

uint64_t gc_now(void) {
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
}

/* CUPTI's time at the process line and CLOCK_MONOTONIC's then: at _exit, CUPTI's clock is
 * extrapolated from them (clock_gettime is async-signal-safe; cuptiGetTimestamp may load
 * libraries or allocate). */
static uint64_t started_at, started_mono;

static uint64_t mono_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t now_safe(void) { return started_at + (mono_ns() - started_mono); }

void gc_error(const char *what, CUptiResult result, const char *detail) {
    const char *name = NULL;
    char number[32];
    if (cuptiGetResultString(result, &name) != CUPTI_SUCCESS || !name) {
        snprintf(number, sizeof number, "CUptiResult %d", (int)result);
        name = number;
    }
    /* cupti-python's names (ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), as graphcert.cupti. */
    if (strncmp(name, "CUPTI_", 6) == 0) name += 6;
    jbuf b;
    jb_init(&b);
    jl_begin(&b, "error");
    jl_kstr(&b, "what", what);
    jl_kstr(&b, "result", name);
    jl_kstr(&b, "detail", detail);
    jo_emit(&b);
    jb_free(&b);
}

/* The first fields of each instrumented call's parameter struct (generated_cuda_meta.h;
 * that header is not included: it drags in the runtime's metadata). */
typedef struct { CUgraphExec *phGraphExec; CUgraph hGraph; } instantiate_args;
typedef struct { CUgraphExec hGraphExec; CUgraph hGraph; } update_args;
typedef struct { CUstream hStream; } begin_args;
typedef struct { CUstream hStream; CUgraph *phGraph; } end_args;

enum { NONE, INSTANTIATE, UPDATE, BEGIN, END };

static int call_kind(CUpti_CallbackId cbid) {
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz:
        return INSTANTIATE;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2:
        return UPDATE;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz:
        return BEGIN;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz:
        return END;
    default:
        return NONE;
    }
}

/* The source graph is read at the API exit, not in GRAPHEXEC_CREATED: the driver is done
 * with it and holds no lock on it, and it is still alive (PyTorch frees it right after
 * instantiating unless keep_graph=True). */
static void instantiated(jbuf *b, const CUpti_CallbackData *cb, uint64_t t1) {
    const instantiate_args *a = cb->functionParams;
    CUgraphExec exec = a->phGraphExec ? *a->phGraphExec : NULL;
    uint32_t exec_id = 0, graph_id = 0;
    int have_exec = exec && cuptiGetGraphExecId(exec, &exec_id) == CUPTI_SUCCESS;
    int have_graph = a->hGraph && cuptiGetGraphId(a->hGraph, &graph_id) == CUPTI_SUCCESS;
    jl_begin(b, "inst");
    jl_ku64(b, "exec", (uint64_t)(uintptr_t)exec);
    jl_ku64(b, "graph", (uint64_t)(uintptr_t)a->hGraph);
    jl_key(b, "exec_id");
    if (have_exec) jb_u64(b, exec_id); else jb_puts(b, "null");
    jl_key(b, "graph_id");
    if (have_graph) jb_u64(b, graph_id); else jb_puts(b, "null");
    jl_ku64(b, "t0", cb->correlationData ? *cb->correlationData : 0);
    jl_ku64(b, "t1", t1);
    jl_key(b, "snapshot");
    size_t mark = b->len;
    char why[256] = "";
    if (gc_read_graph(b, a->hGraph, why, sizeof why) == 0 && !b->failed) {
        jl_key(b, "read_error");
        jb_puts(b, "null");
    } else {
        b->len = mark;
        b->failed = 0;
        jb_puts(b, "null");
        jl_kstr(b, "read_error", why[0] ? why : "out of memory");
    }
}

static void driver_call(CUpti_CallbackId cbid, const CUpti_CallbackData *cb) {
    int kind = call_kind(cbid);
    if (kind == NONE) return;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        if (cb->correlationData) *cb->correlationData = gc_now();
        return;
    }
    uint64_t at = gc_now();
    CUresult rc = cb->functionReturnValue ? *(const CUresult *)cb->functionReturnValue
                                          : CUDA_ERROR_UNKNOWN;
    jbuf b;
    jb_init(&b);
    if (kind == INSTANTIATE && rc == CUDA_SUCCESS) {
        instantiated(&b, cb, at);
    } else if (kind == UPDATE) {
        char scratch[32];
        jl_begin(&b, "update");
        jl_ku64(&b, "exec", (uint64_t)(uintptr_t)((const update_args *)cb->functionParams)->hGraphExec);
        jl_ku64(&b, "at", at);
        jl_ki64(&b, "code", (int64_t)rc);
        jl_kstr(&b, "result", gc_result_name(rc, scratch, sizeof scratch));
    } else if (kind == BEGIN && rc == CUDA_SUCCESS) {
        jl_begin(&b, "capture_begin");
        jl_ku64(&b, "stream", (uint64_t)(uintptr_t)((const begin_args *)cb->functionParams)->hStream);
        jl_ku64(&b, "at", at);
    } else if (kind == END && rc == CUDA_SUCCESS) {
        const end_args *a = cb->functionParams;
        CUgraph graph = a->phGraph ? *a->phGraph : NULL;
        if (graph) {
            jl_begin(&b, "capture_end");
            jl_ku64(&b, "stream", (uint64_t)(uintptr_t)a->hStream);
            jl_ku64(&b, "graph", (uint64_t)(uintptr_t)graph);
            jl_ku64(&b, "at", at);
        }
    }
    if (b.len) jo_emit(&b);
    jb_free(&b);
}

static void CUPTIAPI on_event(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                              const void *data) {
    (void)userdata;
    if (atomic_load(&finished)) return;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        driver_call(cbid, data);
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
        const CUpti_ResourceData *rd = data;
        if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
            gc_describe_device(rd->context);
        } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING) {
            const CUpti_GraphData *g = rd->resourceDescriptor;
            jbuf b;
            jb_init(&b);
            jl_begin(&b, "destroy");
            jl_ku64(&b, "exec", (uint64_t)(uintptr_t)(g ? g->graphExec : NULL));
            jl_ku64(&b, "at", gc_now());
            jo_emit(&b);
            jb_free(&b);
        }
    }
}

/* The flush thread: every GRAPHCERT_FLUSH_MS, CUPTI's buffers out, then the stream; on an
 * _exit's request, one last forced flush and the graphmem lines (this thread may allocate and
 * take CUPTI's locks; the thread in _exit, maybe in a signal handler, may not). */
static void *flush_loop(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        struct timespec at;
        clock_gettime(CLOCK_REALTIME, &at);
        at.tv_sec += flush_ms / 1000;
        at.tv_nsec += (long)(flush_ms % 1000) * 1000000L;
        if (at.tv_nsec >= 1000000000L) { at.tv_sec++; at.tv_nsec -= 1000000000L; }
        while (sem_timedwait(&wake, &at) != 0 && errno == EINTR) continue;
        if (atomic_load(&stop)) break;
        if (atomic_load(&last_flush) == 1) {
            cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
            gc_graphmem_lines();
            jo_flush();
            atomic_store(&last_flush, 2);
            break;
        }
        cuptiActivityFlushAll(0);
        jo_flush();
    }
    return NULL;
}

static void start_flusher(void) {
    sigset_t all, old;
    sigfillset(&all);
    /* The program's signals go to the program's threads, never to this one. */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    flusher_running = sem_init(&wake, 0, 0) == 0 && pthread_create(&flusher, NULL, flush_loop, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* _exit's last lines, async-signal-safe as far as the collector goes (_exit may come from a
 * signal handler that interrupted malloc, CUPTI or a lock holder): this thread only posts a
 * semaphore, polls an atomic, sleeps and write(2)s. The last CUPTI flush and the graphmem
 * lines are asked of the flush thread and waited for at most a second; without a flush
 * thread, or when it does not answer in time (blocked on a lock the interrupted code holds),
 * the activity records CUPTI had not handed over are lost, and so are the graphmem lines. */
static void finish_now(int code) {
    if (subscribed && flusher_running && !pthread_equal(pthread_self(), flusher)) {
        atomic_store(&last_flush, 1);
        sem_post(&wake);
        for (int ms = 0; ms < 1000 && atomic_load(&last_flush) != 2; ms++) {
            struct timespec step = {0, 1000000L};
            nanosleep(&step, NULL);
        }
    }
    jo_end_now((unsigned)code, now_safe());
}

/* The last lines: once per process, whichever of exit and _exit comes first, from any
 * thread. `code` < 0: exit (no status to give); otherwise _exit (finish_now). */
static void finish(const char *how, int code) {
    /* A vfork child (Python's subprocess, posix_spawn) shares this memory and runs no fork
     * handler; when its exec fails it calls _exit through the hook: not this process. */
    if (getpid() != owner) return;
    if (atomic_exchange(&finished, 1)) return;
    if (code >= 0) {
        finish_now(code);
        return;
    }
    if (flusher_running && !pthread_equal(pthread_self(), flusher)) {
        atomic_store(&stop, 1);
        sem_post(&wake);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 10;
        if (pthread_timedjoin_np(flusher, NULL, &until) == 0) flusher_running = 0;
    }
    if (subscribed && !flusher_running) { /* a flush thread still busy holds CUPTI's flush */
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        gc_graphmem_lines();
    }
    jbuf b;
    jb_init(&b);
    jl_begin(&b, "end");
    jl_kstr(&b, "how", how);
    jl_key(&b, "code");
    jb_puts(&b, "null");
    jl_ku64(&b, "at", gc_now());
    jo_emit(&b);
    jb_free(&b);
    jo_close();
}

static void at_exit(void) { finish("exit", -1); }

/* Called by exit_hook.so's _exit/_Exit before the real one. */
static void at_exit_now(int status) { finish("_exit", status & 0xff); }

/* A forked child is not the process this stream records: it never writes it, and its
 * own exit writes nothing (no lock is taken here: another thread may have held one). */
static void forked_child(void) {
    atomic_store(&finished, 1);
    jo_forget();
}

static void subscribe(void) {
    CUpti_SubscriberHandle subscriber;
    CUptiResult r = cuptiSubscribe(&subscriber, on_event, NULL);
    if (r != CUPTI_SUCCESS) {
        gc_error("cuptiSubscribe", r,
                 r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                     ? "another tool holds CUPTI in this process (Nsight Systems, a profiler, "
                       "or graphcert.record() in the program): nothing recorded"
                     : "CUPTI refused the subscriber: nothing recorded");
        return;
    }
    subscribed = 1;
    static const CUpti_CallbackId resources[] = {CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
                                                 CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING};
    for (size_t i = 0; i < sizeof resources / sizeof resources[0]; i++) {
        r = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, resources[i]);
        if (r != CUPTI_SUCCESS) gc_error("cuptiEnableCallback", r, "a resource callback");
    }
    int callbacks = !gc_part_off("callbacks");
    for (CUpti_CallbackId cbid = 1; callbacks && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++) {
        if (call_kind(cbid) == NONE) continue;
        r = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
        if (r != CUPTI_SUCCESS) {
            const char *name = NULL;
            cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name);
            gc_error("cuptiEnableCallback", r, name ? name : "a driver callback");
        }
    }
    gc_activity_start();
    start_flusher();
}

int gc_part_off(const char *part) {
    const char *off = getenv("GRAPHCERT_COLLECTOR_OFF");
    size_t n = strlen(part);
    for (const char *at = off; at && *at; at = strchr(at, ',') ? strchr(at, ',') + 1 : NULL) {
        if (strncmp(at, part, n) == 0 && (at[n] == ',' || at[n] == '\0')) {
            gc_error("GRAPHCERT_COLLECTOR_OFF", CUPTI_SUCCESS, part);
            return 1;
        }
    }
    return 0;
}

typedef void (*exit_hook_register_fn)(void (*)(int));

__attribute__((visibility("default"))) int InitializeInjection(void);

int InitializeInjection(void) {
    static atomic_int once;
    if (atomic_exchange(&once, 1)) return 1;
    const char *dir = getenv("GRAPHCERT_RUN_DIR");
    if (!dir || !*dir) return 1; /* not under graphcert record: nothing to do */
    owner = getpid();
    gc_drv_prepare();
    if (jo_open(dir, (int)owner, gc_start_ticks()) != 0) {
        fprintf(stderr, "graphcert collector: cannot write a stream in %s (check "
                        "GRAPHCERT_RUN_DIR)\n", dir);
        return 1;
    }
    const char *ms = getenv("GRAPHCERT_FLUSH_MS");
    if (ms && *ms) {
        char *end = NULL;
        unsigned long v = strtoul(ms, &end, 10);
        if (end && !*end && v >= 1 && v <= 3600000) flush_ms = (unsigned)v;
    }
    uint32_t version = 0;
    jbuf b;
    jb_init(&b);
    jl_begin(&b, "process");
    gc_process_fields(&b);
    started_at = gc_now();
    started_mono = mono_ns();
    jl_ku64(&b, "at", started_at);
    jl_key(&b, "cupti_version");
    if (cuptiGetVersion(&version) == CUPTI_SUCCESS) jb_u64(&b, version); else jb_puts(&b, "null");
    jl_kstr(&b, "collector", GRAPHCERT_SOURCE_HASH);
    jo_emit(&b);
    jb_free(&b);
    pthread_atfork(NULL, NULL, forked_child);
    atexit(at_exit);
    exit_hook_register_fn reg;
    void *sym = dlsym(RTLD_DEFAULT, "graphcert_exit_hook_register");
    memcpy(&reg, &sym, sizeof reg);
    if (reg) reg(at_exit_now);
    const char *idle = getenv("GRAPHCERT_COLLECTOR_IDLE");
    if (!(idle && strcmp(idle, "1") == 0)) subscribe();
    jo_flush();
    return 1;
}
