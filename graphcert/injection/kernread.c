/* A kernel node's fields: graphcert/cuda/snapshot.py's _kernel and graphcert/cuda/params.py
 * in C (name, launch shape, parameter layout and bytes, the pointers among them, launch
 * attributes). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "readint.h"

/* (base, size) of the live allocation holding `address`, as params.allocation_of with
 * strict=False: any failure reads as "no allocation". */
static int allocation(reader *r, uint64_t address, uint64_t *base, uint64_t *size) {
    if (address == 0 || !r->d->cuMemGetAddressRange) return 0;
    slot *s = &r->cache[(address >> 3) % CACHE_SLOTS];
    if (!s->known || s->address != address) {
        CUdeviceptr b = 0;
        size_t n = 0;
        s->known = 1;
        s->address = address;
        s->found = r->d->cuMemGetAddressRange(&b, &n, (CUdeviceptr)address) == CUDA_SUCCESS;
        s->base = b;
        s->size = n;
    }
    *base = s->base;
    *size = s->size;
    return s->found;
}

static uint64_t le64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* The parameter buffer an `extra` array names (params._extra_buffer). */
static int extra_buffer(void **extra, const unsigned char **buf, size_t *size) {
    void *b = NULL;
    int have_size = 0;
    for (int i = 0; i < MAX_EXTRA; i++) {
        void *key = extra[2 * i];
        if (key == CU_LAUNCH_PARAM_END) break;
        if (key == CU_LAUNCH_PARAM_BUFFER_POINTER) b = extra[2 * i + 1];
        else if (key == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[2 * i + 1]) {
            *size = *(size_t *)extra[2 * i + 1];
            have_size = 1;
        }
    }
    *buf = b;
    return b && have_size;
}

/* "params" (hex of each parameter) and "pointers", or "params": null and "params_unread". */
static void params(reader *r, const CUDA_KERNEL_NODE_PARAMS *p, const size_t *off,
                   const size_t *sz, int n) {
    const char *unread = NULL;
    const unsigned char *buffer = NULL;
    size_t buffer_size = 0;
    void **slots = p->kernelParams;
    if (n == 0) {
        unread = "the driver gave no parameter layout";
    } else if (slots) {
        for (int i = 0; i < n; i++)
            if (!slots[i]) unread = "the driver's kernelParams array holds a null pointer";
    } else if (!p->extra || !extra_buffer(p->extra, &buffer, &buffer_size)) {
        unread = "the driver gave neither kernelParams nor an extra parameter buffer";
    } else {
        for (int i = 0; i < n; i++)
            if (off[i] + sz[i] > buffer_size)
                unread = "the extra parameter buffer is smaller than the parameter layout";
    }
    if (unread) {
        jb_puts(r->out, ",\"params\":null");
        jl_kstr(r->out, "params_unread", unread);
        return;
    }
    jb_puts(r->out, ",\"params\":[");
    for (int i = 0; i < n; i++) {
        if (i) jb_raw(r->out, ",", 1);
        jb_hex(r->out, slots ? (const unsigned char *)slots[i] : buffer + off[i], sz[i]);
    }
    jb_puts(r->out, "],\"pointers\":[");
    int first = 1;
    for (int i = 0; i < n; i++) {
        const unsigned char *data = slots ? (const unsigned char *)slots[i] : buffer + off[i];
        uint64_t base, size;
        if (sz[i] == 8) {
            uint64_t v = le64(data);
            if (allocation(r, v, &base, &size)) {
                jb_puts(r->out, first ? "[" : ",[");
                jb_u64(r->out, (uint64_t)i); jb_raw(r->out, ",", 1);
                jb_u64(r->out, v - base); jb_raw(r->out, ",", 1);
                jb_u64(r->out, size); jb_raw(r->out, "]", 1);
                first = 0;
            }
        } else if (sz[i] > 8) { /* a struct: its aligned words that point into an allocation */
            for (size_t byte = 0; byte + 8 <= sz[i]; byte += 8) {
                uint64_t w = le64(data + byte);
                if (w < MIN_STRUCT_ADDRESS || !allocation(r, w, &base, &size)) continue;
                jb_puts(r->out, first ? "[" : ",[");
                jb_u64(r->out, (uint64_t)i); jb_raw(r->out, ",", 1);
                jb_u64(r->out, w - base); jb_raw(r->out, ",", 1);
                jb_u64(r->out, size); jb_raw(r->out, ",", 1);
                jb_u64(r->out, byte); jb_raw(r->out, ",", 1);
                jb_u64(r->out, w); jb_raw(r->out, "]", 1);
                first = 0;
            }
        }
    }
    jb_raw(r->out, "]", 1);
}

static void launch_attrs(reader *r, CUgraphNode node) {
    CUlaunchAttributeValue v;
    jbuf *o = r->out;
    int ok = r->d->cuGraphKernelNodeGetAttribute != NULL;
    memset(&v, 0, sizeof v);
    jl_key(o, "cooperative");
    if (ok && r->d->cuGraphKernelNodeGetAttribute(node, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v) ==
                  CUDA_SUCCESS)
        jb_u64(o, v.cooperative ? 1 : 0);
    else
        jb_puts(o, "null");
    memset(&v, 0, sizeof v);
    jl_key(o, "cluster");
    if (ok && r->d->cuGraphKernelNodeGetAttribute(
                  node, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v) == CUDA_SUCCESS) {
        jb_raw(o, "[", 1); jb_u64(o, v.clusterDim.x); jb_raw(o, ",", 1);
        jb_u64(o, v.clusterDim.y); jb_raw(o, ",", 1); jb_u64(o, v.clusterDim.z);
        jb_raw(o, "]", 1);
    } else {
        jb_puts(o, "null");
    }
    memset(&v, 0, sizeof v);
    jl_key(o, "priority");
    if (ok && r->d->cuGraphKernelNodeGetAttribute(node, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v) ==
                  CUDA_SUCCESS)
        jb_i64(o, v.priority);
    else
        jb_puts(o, "null");
}

int gc_kernel_fields(reader *r, CUgraphNode node) {
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    CALL(r, cuGraphKernelNodeGetParams, node, &p);
    const char *name = NULL;
    size_t *off = r->off, *sz = r->sz; /* MAX_PARAMS each, kept over the read */
    int n = 0, library = 0;
    if (p.func) {
        CALL(r, cuFuncGetName, &name, p.func);
        if (r->d->cuFuncGetParamInfo)
            while (n < MAX_PARAMS &&
                   r->d->cuFuncGetParamInfo(p.func, (size_t)n, &off[n], &sz[n]) == CUDA_SUCCESS)
                n++;
    } else if (p.kern) {
        library = 1;
        CALL(r, cuKernelGetName, &name, p.kern);
        if (r->d->cuKernelGetParamInfo)
            while (n < MAX_PARAMS &&
                   r->d->cuKernelGetParamInfo(p.kern, (size_t)n, &off[n], &sz[n]) == CUDA_SUCCESS)
                n++;
    }
    jbuf *o = r->out;
    jl_kstr(o, "name", name);
    jb_puts(o, ",\"grid\":["); jb_u64(o, p.gridDimX); jb_raw(o, ",", 1); jb_u64(o, p.gridDimY);
    jb_raw(o, ",", 1); jb_u64(o, p.gridDimZ);
    jb_puts(o, "],\"block\":["); jb_u64(o, p.blockDimX); jb_raw(o, ",", 1);
    jb_u64(o, p.blockDimY); jb_raw(o, ",", 1); jb_u64(o, p.blockDimZ); jb_raw(o, "]", 1);
    jl_ku64(o, "smem", p.sharedMemBytes);
    /* As snapshot.py: sizes from cuFuncGetParamInfo for a function, none for a library
     * kernel (its layout still reads the parameters). */
    jl_key(o, "param_sizes");
    if (library || !p.func || n == 0) {
        jb_puts(o, library || !p.func ? "null" : "[]");
    } else {
        jb_raw(o, "[", 1);
        for (int i = 0; i < n; i++) { if (i) jb_raw(o, ",", 1); jb_u64(o, sz[i]); }
        jb_raw(o, "]", 1);
    }
    params(r, &p, off, sz, name ? n : 0); /* no name: no function, so no layout */
    launch_attrs(r, node);
    return 0;
}

