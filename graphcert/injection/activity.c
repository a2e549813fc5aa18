/* CUPTI activity: graph launches (GRAPH_TRACE), kernels launched one by one
 * (CONCURRENT_KERNEL; with GRAPH_TRACE on, graph kernels give none), NVTX (MARKER) and the
 * kernel-launch API calls (API records for those cbids only), turned into stream lines when
 * CUPTI hands a completed buffer over. No per-launch callback. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "collector.h"
#include "jsonout.h"

#define BUFFER_BYTES (4u << 20)
#define ALIGN 8

/* Names interned by their text (a kernel's name pointer is CUPTI's to reuse). */
typedef struct { char *s; uint64_t hash, id; } name_slot;
static name_slot *names;
static size_t names_cap, names_used;
static uint64_t next_id = 1;
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t fnv(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h ? h : 1;
}

static int names_grow(void) {
    size_t cap = names_cap ? names_cap * 2 : 1024;
    name_slot *fresh = calloc(cap, sizeof *fresh);
    if (!fresh) return 0;
    for (size_t i = 0; i < names_cap; i++) {
        if (!names[i].s) continue;
        size_t j = names[i].hash & (cap - 1);
        while (fresh[j].s) j = (j + 1) & (cap - 1);
        fresh[j] = names[i];
    }
    free(names);
    names = fresh;
    names_cap = cap;
    return 1;
}

uint64_t gc_intern(const char *s) {
    if (!s) return 0;
    uint64_t h = fnv(s), id = 0;
    if (!jo_lock(&names_lock)) return 0;
    if (names_used * 2 >= names_cap && !names_grow()) goto done;
    size_t j = h & (names_cap - 1);
    while (names[j].s) {
        if (names[j].hash == h && strcmp(names[j].s, s) == 0) { id = names[j].id; goto done; }
        j = (j + 1) & (names_cap - 1);
    }
    char *copy = strdup(s);
    if (!copy) goto done;
    names[j] = (name_slot){copy, h, next_id++};
    names_used++;
    id = names[j].id;
    /* Written under the lock, so a `str` line always precedes the first line naming it. */
    jbuf b;
    jb_init(&b);
    jl_begin(&b, "str");
    jl_ku64(&b, "id", id);
    jl_kstr(&b, "s", s);
    jo_emit(&b);
    jb_free(&b);
done:
    pthread_mutex_unlock(&names_lock);
    return id;
}

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    *buffer = aligned_alloc(ALIGN, BUFFER_BYTES);
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0;
}

/* The oldest record layouts that hold every field read here. Later versions only append
 * fields (the offsets of these are the same in every one, checked below where the newest
 * are known), so the collector builds against any CUPTI 12 or 13 headers a wheel brings and
 * reads the records of whichever libcupti the process loaded. */
typedef CUpti_ActivityKernel5 kernel_record;
typedef CUpti_ActivityGraphTrace graph_trace_record;
#if CUPTI_API_VERSION >= 130000
#define SAME_OFFSET(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #a "." #f)
SAME_OFFSET(kernel_record, CUpti_ActivityKernel13, start);
SAME_OFFSET(kernel_record, CUpti_ActivityKernel13, end);
SAME_OFFSET(kernel_record, CUpti_ActivityKernel13, deviceId);
SAME_OFFSET(kernel_record, CUpti_ActivityKernel13, correlationId);
SAME_OFFSET(kernel_record, CUpti_ActivityKernel13, name);
SAME_OFFSET(kernel_record, CUpti_ActivityKernel13, graphId);
SAME_OFFSET(graph_trace_record, CUpti_ActivityGraphTrace2, start);
SAME_OFFSET(graph_trace_record, CUpti_ActivityGraphTrace2, end);
SAME_OFFSET(graph_trace_record, CUpti_ActivityGraphTrace2, deviceId);
SAME_OFFSET(graph_trace_record, CUpti_ActivityGraphTrace2, correlationId);
SAME_OFFSET(graph_trace_record, CUpti_ActivityGraphTrace2, graphId);
#endif

static void line(jbuf *b, CUpti_Activity *rec) {
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
        graph_trace_record *g = (graph_trace_record *)rec;
        jl_begin(b, "glaunch");
        jl_ku64(b, "graph_id", g->graphId);
        jl_ku64(b, "corr", g->correlationId);
        jl_ku64(b, "start", g->start);
        jl_ku64(b, "end", g->end);
        jl_ku64(b, "device", g->deviceId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
        kernel_record *k = (kernel_record *)rec;
        uint64_t name = gc_intern(k->name);
        jl_begin(b, "kernel");
        jl_ku64(b, "name", name);
        jl_ku64(b, "start", k->start);
        jl_ku64(b, "end", k->end);
        jl_ku64(b, "graph_id", k->graphId);
        jl_ku64(b, "corr", k->correlationId);
        jl_ku64(b, "device", k->deviceId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
        CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)rec;
        jl_begin(b, "call");
        jl_ku64(b, "corr", a->correlationId);
        jl_ku64(b, "tid", a->threadId);
        jl_ku64(b, "at", a->start);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
        CUpti_ActivityMarker2 *m = (CUpti_ActivityMarker2 *)rec;
        const char *edge = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END)     ? "end"
                           : (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) ? "start"
                                                                           : "instant";
        uint64_t name = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) ? 0 : gc_intern(m->name);
        jl_begin(b, "marker");
        jl_ku64(b, "id", m->id);
        jl_kstr(b, "edge", edge);
        jl_ku64(b, "name", name);
        jl_ku64(b, "tid", m->objectId.pt.threadId);
        jl_ku64(b, "at", m->timestamp);
        break;
    }
    default:
        b->len = 0; /* a kind not asked for: nothing */
        return;
    }
    jo_emit(b);
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                              size_t valid) {
    (void)size;
    jbuf b;
    jb_init(&b);
    CUpti_Activity *rec = NULL;
    while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
        line(&b, rec);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped) {
        jl_begin(&b, "dropped");
        jl_ku64(&b, "n", dropped);
        jo_emit(&b);
    }
    jb_free(&b);
    free(buffer);
    jo_flush(); /* after each completed buffer */
}

/* Kernel-launch API records, by name: every cbid whose name holds LaunchKernel or
 * LaunchCooperativeKernel (the _ptsz, Ex/ExC and MultiDevice variants with them). */
static void enable_launch_apis(CUpti_CallbackDomain domain, uint32_t size,
                               CUptiResult (*enable)(CUpti_CallbackId, uint8_t)) {
    for (uint32_t cbid = 1; cbid < size; cbid++) {
        const char *name = NULL;
        if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) continue;
        if (!strstr(name, "LaunchKernel") && !strstr(name, "LaunchCooperativeKernel")) continue;
        CUptiResult r = enable(cbid, 1);
        if (r != CUPTI_SUCCESS) gc_error("cuptiActivityEnable*Api", r, name);
    }
}

int gc_activity_start(void) {
    CUptiResult r = cuptiActivityRegisterCallbacks(requested, completed);
    if (r != CUPTI_SUCCESS) {
        gc_error("cuptiActivityRegisterCallbacks", r, "no activity records");
        return -1;
    }
    static const struct { CUpti_ActivityKind kind; const char *name, *part; } kinds[] = {
        {CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "GRAPH_TRACE", "graphs"},
        {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL", "kernels"},
        {CUPTI_ACTIVITY_KIND_MARKER, "MARKER", "markers"},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (gc_part_off(kinds[i].part)) continue;
        r = cuptiActivityEnable(kinds[i].kind);
        if (r != CUPTI_SUCCESS) {
            gc_error("cuptiActivityEnable", r, kinds[i].name);
            failed = 1;
        }
    }
    if (gc_part_off("calls")) return failed ? -1 : 0;
    enable_launch_apis(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
                       cuptiActivityEnableDriverApi);
    enable_launch_apis(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
                       cuptiActivityEnableRuntimeApi);
    return failed ? -1 : 0;
}
