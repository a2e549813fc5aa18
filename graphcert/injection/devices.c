/* The devices a process uses: a `device` line when a context is first made on one, and its
 * graph memory (`graphmem`) at exit. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>

#include <cuda.h>

#include "collector.h"
#include "drv.h"
#include "jsonout.h"

#define MAX_DEVICES 64

static atomic_uint_fast64_t used;      /* device ordinals a context was made on (bits) */
static atomic_uint_fast64_t described; /* device ordinals whose `device` line is written */

void gc_device_used(uint32_t ordinal) {
    if (ordinal < MAX_DEVICES) atomic_fetch_or(&used, (uint_fast64_t)1 << ordinal);
}

void gc_describe_device(CUcontext ctx) {
    uint32_t ordinal = 0;
    if (!ctx || cuptiGetDeviceId(ctx, &ordinal) != CUPTI_SUCCESS) return;
    gc_device_used(ordinal);
    uint_fast64_t bit = ordinal < MAX_DEVICES ? (uint_fast64_t)1 << ordinal : 0;
    if (bit && (atomic_fetch_or(&described, bit) & bit)) return;
    const gc_driver *d = gc_drv();
    CUdevice dev;
    char name[256] = "";
    char uuid[48] = "";
    CUuuid u;
    if (d && d->cuDeviceGet && d->cuDeviceGet(&dev, (int)ordinal) == CUDA_SUCCESS) {
        if (d->cuDeviceGetName && d->cuDeviceGetName(name, sizeof name, dev) != CUDA_SUCCESS)
            name[0] = '\0';
        if (d->cuDeviceGetUuid && d->cuDeviceGetUuid(&u, dev) == CUDA_SUCCESS) {
            const unsigned char *x = (const unsigned char *)u.bytes;
            snprintf(uuid, sizeof uuid,
                     "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                     x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11],
                     x[12], x[13], x[14], x[15]);
        }
    }
    jbuf b;
    jb_init(&b);
    jl_begin(&b, "device");
    jl_ku64(&b, "ordinal", ordinal);
    jl_kstr(&b, "uuid", uuid[0] ? uuid : NULL);
    jl_kstr(&b, "name", name[0] ? name : NULL);
    jo_emit(&b);
    jb_free(&b);
}

void gc_graphmem_lines(void) {
    const gc_driver *d = gc_drv();
    uint_fast64_t bits = atomic_load(&used);
    static const CUgraphMem_attribute attrs[4] = {
        CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
        CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH};
    static const char *keys[4] = {"used_current", "used_high", "reserved_current",
                                  "reserved_high"};
    for (int ordinal = 0; d && d->cuDeviceGet && ordinal < MAX_DEVICES; ordinal++) {
        CUdevice dev;
        if (!(bits & ((uint_fast64_t)1 << ordinal)) ||
            d->cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS)
            continue;
        jbuf b;
        jb_init(&b);
        jl_begin(&b, "graphmem");
        jl_ku64(&b, "ordinal", (uint64_t)ordinal);
        for (int i = 0; i < 4; i++) {
            cuuint64_t v = 0;
            jl_key(&b, keys[i]);
            if (d->cuDeviceGetGraphMemAttribute &&
                d->cuDeviceGetGraphMemAttribute(dev, attrs[i], &v) == CUDA_SUCCESS)
                jb_u64(&b, v);
            else
                jb_puts(&b, "null");
        }
        jo_emit(&b);
        jb_free(&b);
    }
}

