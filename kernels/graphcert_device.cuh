// Shared device-side helpers for graphcert's kernels. NVRTC needs no CUDA toolkit headers
// for anything here, so kernels build from the pip NVRTC wheel alone.
#pragma once

typedef unsigned int u32;
typedef unsigned long long u64;

__device__ __forceinline__ unsigned long long gc_globaltimer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// The device-runtime builtin behind conditional graph nodes, declared as the toolkit's
// cuda_device_runtime_api.h declares it (same PTX), so no toolkit headers are needed.
typedef unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ __attribute__((cudart_builtin)) void cudaGraphSetConditional(
    cudaGraphConditionalHandle handle, unsigned int value);
