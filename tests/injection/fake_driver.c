/* A SYNTHETIC stand-in for libcuda.so.1 (no GPU, no real driver): cuGetProcAddress_v2 and the
 * graph queries the collector's graph reader makes, answering for two made-up graphs, so
 * tests/injection/test_graphread.py can run the reader on CPU. Nothing here is measured. */
#include <cuda.h>
#include <stdint.h>
#include <string.h>

#define ALLOC_BASE 0x7f0000000000ull /* one made-up device allocation of 4096 bytes */
#define ALLOC_SIZE 4096ull

typedef struct fake_node {
    CUgraphNodeType type;
    int which; /* per type: which made-up node */
} fake_node;

typedef struct fake_graph {
    int n;
    fake_node *nodes[8];
    int edges;
    int from[8], to[8];
    CUgraphEdgeData data[8];
    int broken; /* cuGraphGetNodes fails */
} fake_graph;

static fake_node k0 = {CU_GRAPH_NODE_TYPE_KERNEL, 0}, cp = {CU_GRAPH_NODE_TYPE_MEMCPY, 0},
                 ms = {CU_GRAPH_NODE_TYPE_MEMSET, 0}, ch = {CU_GRAPH_NODE_TYPE_GRAPH, 0},
                 k1 = {CU_GRAPH_NODE_TYPE_KERNEL, 1}, cond = {CU_GRAPH_NODE_TYPE_CONDITIONAL, 0},
                 empty = {CU_GRAPH_NODE_TYPE_EMPTY, 0}, alloc = {CU_GRAPH_NODE_TYPE_MEM_ALLOC, 0};
static fake_graph child = {2, {&empty, &alloc}, 1, {0}, {1}, {{0}}, 0};
/* main: kernel, memcpy, memset, child graph, library kernel, conditional */
static fake_graph main_graph = {6, {&k0, &cp, &ms, &ch, &k1, &cond}, 3, {0, 1, 0}, {1, 2, 4},
                                {{0}, {0}, {.from_port = 1, .to_port = 0, .type = 1}}, 0};
static fake_graph broken = {0, {0}, 0, {0}, {0}, {{0}}, 1};

/* Graph 1 is the main graph, 2 a graph whose node list cannot be read. */
CUgraph fake_graph_handle(int which) {
    return (CUgraph)(which == 1 ? (void *)&main_graph : (void *)&broken);
}

/* kernel 0: (int *p, int n, struct {long a; int *q; long b;}) with p and q in the allocation */
static uint64_t k0_p = ALLOC_BASE + 16;
static int32_t k0_n = 7;
static uint64_t k0_s[3] = {5, ALLOC_BASE + 32, 9};
static void *k0_params[3] = {&k0_p, &k0_n, k0_s};
/* kernel 1 (a library kernel): its parameters in an `extra` buffer: (long 3, int 4) */
static unsigned char k1_buffer[12] = {3, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0};
static size_t k1_size = sizeof k1_buffer;
static void *k1_extra[5] = {CU_LAUNCH_PARAM_BUFFER_POINTER, k1_buffer,
                            CU_LAUNCH_PARAM_BUFFER_SIZE, &k1_size, CU_LAUNCH_PARAM_END};

static CUresult get_error_name(CUresult r, const char **s) {
    *s = r == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_UNKNOWN";
    return CUDA_SUCCESS;
}

static CUresult get_nodes(CUgraph g, CUgraphNode *nodes, size_t *n) {
    fake_graph *f = (fake_graph *)g;
    if (f->broken) return CUDA_ERROR_INVALID_VALUE;
    if (nodes)
        for (int i = 0; i < f->n && (size_t)i < *n; i++) nodes[i] = (CUgraphNode)f->nodes[i];
    *n = (size_t)f->n;
    return CUDA_SUCCESS;
}

static CUresult get_edges(CUgraph g, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *d,
                          size_t *n) {
    fake_graph *f = (fake_graph *)g;
    if (from)
        for (int i = 0; i < f->edges && (size_t)i < *n; i++) {
            from[i] = (CUgraphNode)f->nodes[f->from[i]];
            to[i] = (CUgraphNode)f->nodes[f->to[i]];
            if (d) d[i] = f->data[i];
        }
    *n = (size_t)f->edges;
    return CUDA_SUCCESS;
}

static CUresult node_type(CUgraphNode n, CUgraphNodeType *t) {
    *t = ((fake_node *)n)->type;
    return CUDA_SUCCESS;
}

static CUresult kernel_params(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS *p) {
    memset(p, 0, sizeof *p);
    if (((fake_node *)n)->which == 0) {
        p->func = (CUfunction)0x10;
        p->gridDimX = 4, p->gridDimY = 1, p->gridDimZ = 1;
        p->blockDimX = 128, p->blockDimY = 1, p->blockDimZ = 1;
        p->sharedMemBytes = 256;
        p->kernelParams = k0_params;
    } else {
        p->kern = (CUkernel)0x20;
        p->gridDimX = p->gridDimY = p->gridDimZ = 1;
        p->blockDimX = p->blockDimY = p->blockDimZ = 32;
        p->extra = k1_extra;
    }
    return CUDA_SUCCESS;
}

static CUresult kernel_attr(CUgraphNode n, CUlaunchAttributeID id, CUlaunchAttributeValue *v) {
    if (((fake_node *)n)->which != 0) return CUDA_ERROR_INVALID_VALUE;
    if (id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) { v->cooperative = 1; return CUDA_SUCCESS; }
    if (id == CU_LAUNCH_ATTRIBUTE_PRIORITY) { v->priority = -2; return CUDA_SUCCESS; }
    return CUDA_ERROR_INVALID_VALUE; /* cluster dimension: not set */
}

static CUresult func_name(const char **name, CUfunction f) {
    (void)f;
    *name = "k_add\"quoted\"";
    return CUDA_SUCCESS;
}

static CUresult kernel_name(const char **name, CUkernel k) {
    (void)k;
    *name = "library_kernel";
    return CUDA_SUCCESS;
}

static CUresult func_param_info(CUfunction f, size_t i, size_t *off, size_t *size) {
    static const size_t offs[3] = {0, 8, 16}, sizes[3] = {8, 4, 24};
    (void)f;
    if (i >= 3) return CUDA_ERROR_INVALID_VALUE;
    *off = offs[i], *size = sizes[i];
    return CUDA_SUCCESS;
}

static CUresult kernel_param_info(CUkernel k, size_t i, size_t *off, size_t *size) {
    static const size_t offs[2] = {0, 8}, sizes[2] = {8, 4};
    (void)k;
    if (i >= 2) return CUDA_ERROR_INVALID_VALUE;
    *off = offs[i], *size = sizes[i];
    return CUDA_SUCCESS;
}

static CUresult address_range(CUdeviceptr *base, size_t *size, CUdeviceptr p) {
    if (p < ALLOC_BASE || p >= ALLOC_BASE + ALLOC_SIZE) return CUDA_ERROR_NOT_FOUND;
    *base = ALLOC_BASE, *size = ALLOC_SIZE;
    return CUDA_SUCCESS;
}

static CUresult pointer_attr(void *data, CUpointer_attribute a, CUdeviceptr p) {
    if (a != CU_POINTER_ATTRIBUTE_MEMORY_TYPE || p < ALLOC_BASE) return CUDA_ERROR_INVALID_VALUE;
    *(unsigned int *)data = CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
}

static CUresult memcpy_params(CUgraphNode n, CUDA_MEMCPY3D *p) {
    (void)n;
    memset(p, 0, sizeof *p);
    p->srcMemoryType = CU_MEMORYTYPE_HOST;
    p->dstMemoryType = CU_MEMORYTYPE_UNIFIED; /* resolved through cuPointerGetAttribute */
    p->dstDevice = ALLOC_BASE + 256;
    p->WidthInBytes = 64, p->Height = 1, p->Depth = 1;
    return CUDA_SUCCESS;
}

static CUresult memset_params(CUgraphNode n, CUDA_MEMSET_NODE_PARAMS *p) {
    (void)n;
    memset(p, 0, sizeof *p);
    p->elementSize = 4, p->width = 16, p->height = 1, p->value = 0;
    return CUDA_SUCCESS;
}

static CUresult child_graph(CUgraphNode n, CUgraph *g) {
    (void)n;
    *g = (CUgraph)&child;
    return CUDA_SUCCESS;
}

static CUresult alloc_params(CUgraphNode n, CUDA_MEM_ALLOC_NODE_PARAMS *p) {
    (void)n;
    memset(p, 0, sizeof *p);
    p->bytesize = 1 << 20;
    return CUDA_SUCCESS;
}

static const struct { const char *name; void *fn; } table[] = {
    {"cuGetErrorName", (void *)get_error_name}, {"cuGraphGetNodes", (void *)get_nodes},
    {"cuGraphGetEdges", (void *)get_edges}, {"cuGraphNodeGetType", (void *)node_type},
    {"cuGraphKernelNodeGetParams", (void *)kernel_params},
    {"cuGraphKernelNodeGetAttribute", (void *)kernel_attr},
    {"cuFuncGetName", (void *)func_name}, {"cuKernelGetName", (void *)kernel_name},
    {"cuFuncGetParamInfo", (void *)func_param_info},
    {"cuKernelGetParamInfo", (void *)kernel_param_info},
    {"cuMemGetAddressRange", (void *)address_range},
    {"cuPointerGetAttribute", (void *)pointer_attr},
    {"cuGraphMemcpyNodeGetParams", (void *)memcpy_params},
    {"cuGraphMemsetNodeGetParams", (void *)memset_params},
    {"cuGraphChildGraphNodeGetGraph", (void *)child_graph},
    {"cuGraphMemAllocNodeGetParams", (void *)alloc_params},
    /* no cuGraphNodeGetParams: as driver 13.0, a conditional's bodies stay unread */
};

CUresult cuGetProcAddress_v2(const char *symbol, void **fn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status) {
    (void)version, (void)flags;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(symbol, table[i].name) == 0) {
            *fn = table[i].fn;
            *status = CU_GET_PROC_ADDRESS_SUCCESS;
            return CUDA_SUCCESS;
        }
    *fn = NULL;
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
}
