/* The driver table (drv.h). libcuda is not linked (CI machines have none, and the stub must
 * not be needed at run time): libcuda.so.1 is already loaded when the driver calls
 * InitializeInjection, so dlopen(RTLD_NOLOAD) finds it, and every other function comes from
 * cuGetProcAddress at the CUDA_VERSION of the cuda.h compiled against, which returns the ABI
 * variant that header declares whatever newer driver runs. */
#define _GNU_SOURCE
#include "drv.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

static gc_driver table;
static int have;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static get_proc_fn get_proc;

/* The loader's part, at InitializeInjection: no dlopen later, inside a driver callback, where
 * the loader's lock could meet a thread that holds it and waits for the driver. */
void gc_drv_prepare(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib) lib = dlopen("libcuda.so.1", RTLD_NOW);
    /* cuda.h 12.5+ names the 5-argument form cuGetProcAddress_v2. */
    void *sym = lib ? dlsym(lib, "cuGetProcAddress_v2") : NULL;
    memcpy(&get_proc, &sym, sizeof sym);
}

static void fill(void) {
    get_proc_fn get = get_proc;
    if (!get) return;
    memset(&table, 0, sizeof table);
#define GRAPHCERT_LOAD(name)                                                            \
    {                                                                                   \
        void *fn = NULL;                                                                \
        CUdriverProcAddressQueryResult found;                                           \
        if (get(#name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) ==       \
                CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS)                   \
            memcpy(&table.name, &fn, sizeof fn);                                        \
    }
    GRAPHCERT_DRIVER_FUNCTIONS(GRAPHCERT_LOAD)
#undef GRAPHCERT_LOAD
    {
        void *fn = NULL;
        CUdriverProcAddressQueryResult found;
        int version = CUDA_VERSION > NODE_PARAMS_VERSION ? CUDA_VERSION : NODE_PARAMS_VERSION;
        if (get("cuGraphNodeGetParams", &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &found) ==
                CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS)
            memcpy(&table.cuGraphNodeGetParams, &fn, sizeof fn);
    }
    have = 1;
}

const gc_driver *gc_drv(void) {
    pthread_once(&once, fill);
    return have ? &table : NULL;
}

const char *gc_result_name(CUresult r, char *scratch, unsigned n) {
    const gc_driver *d = gc_drv();
    const char *name = NULL;
    if (d && d->cuGetErrorName && d->cuGetErrorName(r, &name) == CUDA_SUCCESS && name)
        return name;
    snprintf(scratch, n, "CUresult %d", (int)r);
    return scratch;
}
