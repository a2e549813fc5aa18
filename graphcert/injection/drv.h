/* The driver functions the collector calls, found through cuGetProcAddress (no -lcuda). */
#ifndef GRAPHCERT_DRV_H
#define GRAPHCERT_DRV_H

#include <cuda.h>

/* Each field has the type of cuda.h's prototype. cuda.h maps some names to their newest
 * variant (cuGraphGetEdges -> cuGraphGetEdges_v2), so a field is named after that variant
 * and the name cuGetProcAddress is asked for (the #name below) is the base name: at
 * CUDA_VERSION the driver hands back exactly the variant the header declares. */
#define GRAPHCERT_DRIVER_FUNCTIONS(X) \
    X(cuGetErrorName) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetUuid) \
    X(cuDeviceGetGraphMemAttribute) X(cuGraphGetNodes) X(cuGraphGetEdges) \
    X(cuGraphNodeGetType) X(cuGraphKernelNodeGetParams) X(cuGraphKernelNodeGetAttribute) \
    X(cuFuncGetName) X(cuFuncGetParamInfo) X(cuKernelGetName) X(cuKernelGetParamInfo) \
    X(cuMemGetAddressRange) X(cuPointerGetAttribute) X(cuGraphMemcpyNodeGetParams) \
    X(cuGraphMemsetNodeGetParams) X(cuGraphChildGraphNodeGetGraph) \
    X(cuGraphExternalSemaphoresSignalNodeGetParams) \
    X(cuGraphExternalSemaphoresWaitNodeGetParams) X(cuGraphMemAllocNodeGetParams) \
    X(cuGraphBatchMemOpNodeGetParams)

/* cuGraphNodeGetParams (conditional bodies) is asked for at this version or CUDA_VERSION,
 * whichever is higher: the driver answers with the newest variant it has up to it, and a
 * driver without the call leaves the field NULL (a conditional's bodies are then unread). */
#define NODE_PARAMS_VERSION 13090

#define GRAPHCERT_FIELD(name) __typeof__(&name) name;
typedef struct {
    GRAPHCERT_DRIVER_FUNCTIONS(GRAPHCERT_FIELD)
    /* Newer than the CUDA 13.0 headers: typed here, found at NODE_PARAMS_VERSION. */
    CUresult (*cuGraphNodeGetParams)(CUgraphNode, CUgraphNodeParams *);
} gc_driver;
#undef GRAPHCERT_FIELD

/* Find libcuda's cuGetProcAddress (at InitializeInjection: the driver is loaded). */
void gc_drv_prepare(void);
/* The table, filled on first use (after cuInit has returned); NULL fields: not found. NULL
 * whole: libcuda or cuGetProcAddress not to be had. */
const gc_driver *gc_drv(void);
/* The driver's name for a CUresult ("CUDA_ERROR_INVALID_VALUE"), or "CUresult <n>". */
const char *gc_result_name(CUresult r, char *scratch, unsigned n);

#endif
