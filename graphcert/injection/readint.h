/* What the graph reader's files share (graphread.c, kernread.c). Not an interface. */
#ifndef GRAPHCERT_READINT_H
#define GRAPHCERT_READINT_H

#include <stdint.h>
#include <stdio.h>

#include "drv.h"
#include "jsonout.h"

#define MAX_PARAMS 1024   /* parameters asked of cuFuncGetParamInfo before giving up */
#define MAX_EXTRA 64      /* key/value pairs read from an `extra` array */
#define CACHE_SLOTS 4096  /* allocation lookups remembered over one read */
#define MIN_STRUCT_ADDRESS (1ull << 32) /* as params.MIN_STRUCT_ADDRESS */

typedef struct { uint64_t address, base, size; int known, found; } slot;

typedef struct {
    const gc_driver *d;
    jbuf *out;
    char *why;
    size_t why_n;
    slot *cache;
    size_t *off, *sz; /* a kernel's parameter layout (MAX_PARAMS each) */
} reader;

int gc_fail(reader *r, const char *call, CUresult res);

#define CALL(r, fn, ...)                                                   \
    do {                                                                   \
        if (!(r)->d->fn) {                                                 \
            snprintf((r)->why, (r)->why_n, "the driver has no %s", #fn);   \
            return -1;                                                     \
        }                                                                  \
        CUresult res_ = (r)->d->fn(__VA_ARGS__);                           \
        if (res_ != CUDA_SUCCESS) return gc_fail((r), #fn, res_);             \
    } while (0)


/* The kernel node's fields (after "type"), as snapshot._kernel and params.param_attrs. */
int gc_kernel_fields(reader *r, CUgraphNode node);

#endif
