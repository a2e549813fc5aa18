/* The graph reader: graphcert/cuda/snapshot.py and graphcert/cuda/params.py in C, field by
 * field, writing the raw snapshot the stream reader turns into a RawGraph. A failing driver
 * query fails the whole read (as check() raises there), except the launch attributes (null)
 * and the allocation lookups (not a pointer), which the Python reader also lets pass. */
#define _GNU_SOURCE
#include "graphread.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readint.h"

#define MAX_DEPTH 64      /* child graphs and conditional bodies nested deeper: a read error */

int gc_fail(reader *r, const char *call, CUresult res) {
    char scratch[32];
    snprintf(r->why, r->why_n, "%s: %s", call, gc_result_name(res, scratch, sizeof scratch));
    return -1;
}

static int read_graph(reader *r, CUgraph g, int depth);

/* "H" or "D" as snapshot._side: unified addresses are asked of the driver. */
static const char *side(reader *r, CUmemorytype t, CUdeviceptr dev, const void *host) {
    if (t == CU_MEMORYTYPE_HOST) return "H";
    if (t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_ARRAY) return "D";
    CUdeviceptr ptr = dev ? dev : (CUdeviceptr)(uintptr_t)host;
    unsigned int where = 0;
    if (r->d->cuPointerGetAttribute &&
        r->d->cuPointerGetAttribute(&where, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr) ==
            CUDA_SUCCESS && where == CU_MEMORYTYPE_DEVICE)
        return "D";
    return "H";
}

static int node_fields(reader *r, CUgraphNode node, CUgraphNodeType type, int depth) {
    jbuf *o = r->out;
    switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        return gc_kernel_fields(r, node);
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
        CUDA_MEMCPY3D p;
        memset(&p, 0, sizeof p);
        CALL(r, cuGraphMemcpyNodeGetParams, node, &p);
        jl_kstr(o, "src", side(r, p.srcMemoryType, p.srcDevice, p.srcHost));
        jl_kstr(o, "dst", side(r, p.dstMemoryType, p.dstDevice, p.dstHost));
        jl_ku64(o, "width", p.WidthInBytes);
        jl_ku64(o, "height", p.Height);
        jl_ku64(o, "depth", p.Depth);
        return 0;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
        CUDA_MEMSET_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        CALL(r, cuGraphMemsetNodeGetParams, node, &p);
        jl_ku64(o, "element_size", p.elementSize);
        jl_ku64(o, "width", p.width);
        jl_ku64(o, "height", p.height);
        jl_ku64(o, "value", p.value);
        return 0;
    }
    case CU_GRAPH_NODE_TYPE_GRAPH: {
        CUgraph child = NULL;
        CALL(r, cuGraphChildGraphNodeGetGraph, node, &child);
        jl_key(o, "child");
        return read_graph(r, child, depth + 1);
    }
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL: {
        CUDA_EXT_SEM_SIGNAL_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        CALL(r, cuGraphExternalSemaphoresSignalNodeGetParams, node, &p);
        jl_ku64(o, "count", p.numExtSems);
        return 0;
    }
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: {
        CUDA_EXT_SEM_WAIT_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        CALL(r, cuGraphExternalSemaphoresWaitNodeGetParams, node, &p);
        jl_ku64(o, "count", p.numExtSems);
        return 0;
    }
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
        CUDA_MEM_ALLOC_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        CALL(r, cuGraphMemAllocNodeGetParams, node, &p);
        jl_ku64(o, "bytes", p.bytesize);
        return 0;
    }
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: {
        CUDA_BATCH_MEM_OP_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        CALL(r, cuGraphBatchMemOpNodeGetParams, node, &p);
        jl_ku64(o, "count", p.count);
        jb_puts(o, ",\"ops\":[");
        for (unsigned i = 0; p.paramArray && i < p.count; i++) {
            if (i) jb_raw(o, ",", 1);
            jb_u64(o, (uint64_t)p.paramArray[i].operation);
        }
        jb_raw(o, "]", 1);
        return 0;
    }
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: {
        CUgraphNodeParams p;
        memset(&p, 0, sizeof p);
        CUresult res = r->d->cuGraphNodeGetParams ? r->d->cuGraphNodeGetParams(node, &p)
                                                  : CUDA_ERROR_NOT_FOUND;
        if (res != CUDA_SUCCESS) {
            char scratch[32], text[160];
            if (r->d->cuGraphNodeGetParams)
                snprintf(text, sizeof text, "cuGraphNodeGetParams: %s",
                         gc_result_name(res, scratch, sizeof scratch));
            else
                snprintf(text, sizeof text, "the driver has no cuGraphNodeGetParams");
            jl_kstr(o, "unread", text);
            return 0;
        }
        jl_ku64(o, "cond_type", (uint64_t)p.conditional.type);
        jl_ku64(o, "size", p.conditional.size);
        jb_puts(o, ",\"bodies\":[");
        for (unsigned i = 0; i < p.conditional.size; i++) {
            if (i) jb_raw(o, ",", 1);
            if (!p.conditional.phGraph_out || read_graph(r, p.conditional.phGraph_out[i],
                                                          depth + 1) != 0) {
                if (!p.conditional.phGraph_out)
                    snprintf(r->why, r->why_n, "cuGraphNodeGetParams gave no body graphs");
                return -1;
            }
        }
        jb_raw(o, "]", 1);
        return 0;
    }
    default:
        return 0; /* host, empty, event, mem free, unknown: the type alone */
    }
}

typedef struct { CUgraphNode h; size_t i; } entry;

static int by_handle(const void *a, const void *b) {
    uintptr_t x = (uintptr_t)((const entry *)a)->h, y = (uintptr_t)((const entry *)b)->h;
    return x < y ? -1 : x > y;
}

static long index_of(const entry *sorted, size_t n, CUgraphNode h) {
    entry key = {h, 0};
    const entry *e = bsearch(&key, sorted, n, sizeof key, by_handle);
    return e ? (long)e->i : -1;
}

static int edges(reader *r, CUgraph g, const entry *sorted, size_t n) {
    size_t count = 0;
    CALL(r, cuGraphGetEdges, g, NULL, NULL, NULL, &count);
    jb_puts(r->out, "],\"edges\":[");
    if (count == 0) return 0;
    CUgraphNode *from = calloc(count, sizeof *from), *to = calloc(count, sizeof *to);
    CUgraphEdgeData *data = calloc(count, sizeof *data);
    int rc = -1;
    if (!from || !to || !data) {
        snprintf(r->why, r->why_n, "out of memory for %zu edges", count);
        goto done;
    }
    CUresult res = r->d->cuGraphGetEdges(g, from, to, data, &count);
    if (res != CUDA_SUCCESS) { gc_fail(r, "cuGraphGetEdges", res); goto done; }
    for (size_t i = 0; i < count; i++) {
        long a = index_of(sorted, n, from[i]), b = index_of(sorted, n, to[i]);
        if (a < 0 || b < 0) {
            snprintf(r->why, r->why_n, "cuGraphGetEdges named a node cuGraphGetNodes did not");
            goto done;
        }
        if (i) jb_raw(r->out, ",", 1);
        jb_raw(r->out, "[", 1); jb_u64(r->out, (uint64_t)a); jb_raw(r->out, ",", 1);
        jb_u64(r->out, (uint64_t)b); jb_raw(r->out, ",", 1); jb_u64(r->out, data[i].type);
        jb_raw(r->out, ",", 1); jb_u64(r->out, data[i].from_port); jb_raw(r->out, ",", 1);
        jb_u64(r->out, data[i].to_port); jb_raw(r->out, "]", 1);
    }
    rc = 0;
done:
    free(from); free(to); free(data);
    return rc;
}

static int read_graph(reader *r, CUgraph g, int depth) {
    if (depth > MAX_DEPTH) {
        snprintf(r->why, r->why_n, "graphs nested more than %d deep", MAX_DEPTH);
        return -1;
    }
    size_t n = 0;
    CALL(r, cuGraphGetNodes, g, NULL, &n);
    CUgraphNode *nodes = calloc(n ? n : 1, sizeof *nodes);
    entry *sorted = calloc(n ? n : 1, sizeof *sorted);
    int rc = -1;
    if (!nodes || !sorted) { snprintf(r->why, r->why_n, "out of memory for %zu nodes", n); goto done; }
    if (n) {
        CUresult res = r->d->cuGraphGetNodes(g, nodes, &n);
        if (res != CUDA_SUCCESS) { gc_fail(r, "cuGraphGetNodes", res); goto done; }
    }
    jb_puts(r->out, "{\"nodes\":[");
    for (size_t i = 0; i < n; i++) {
        CUgraphNodeType type;
        CUresult res = r->d->cuGraphNodeGetType ? r->d->cuGraphNodeGetType(nodes[i], &type)
                                                : CUDA_ERROR_NOT_FOUND;
        if (res != CUDA_SUCCESS) { gc_fail(r, "cuGraphNodeGetType", res); goto done; }
        jb_puts(r->out, i ? ",{\"type\":" : "{\"type\":");
        jb_u64(r->out, (uint64_t)type);
        if (node_fields(r, nodes[i], type, depth) != 0) goto done;
        jb_raw(r->out, "}", 1);
        sorted[i].h = nodes[i];
        sorted[i].i = i;
    }
    qsort(sorted, n, sizeof *sorted, by_handle);
    if (edges(r, g, sorted, n) != 0) goto done;
    jb_puts(r->out, "]}");
    rc = 0;
done:
    free(nodes); free(sorted);
    return rc;
}

int gc_read_graph(jbuf *out, CUgraph graph, char *why, size_t why_n) {
    reader r = {gc_drv(), out, why, why_n, calloc(CACHE_SLOTS, sizeof(slot)),
                malloc(MAX_PARAMS * sizeof(size_t)), malloc(MAX_PARAMS * sizeof(size_t))};
    int rc = -1;
    if (!r.d) snprintf(why, why_n, "libcuda's cuGetProcAddress was not found");
    else if (!r.cache || !r.off || !r.sz) snprintf(why, why_n, "out of memory");
    else rc = read_graph(&r, graph, 0);
    free(r.cache);
    free(r.off);
    free(r.sz);
    return rc;
}
