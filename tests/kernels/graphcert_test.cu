// Kernels used by graphcert's own tests of the CUDA layer.
#include "graphcert_device.cuh"

extern "C" __global__ void t_axpy(float a, const float* x, float* y, u32 n) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void t_copy_u32(const u32* src, u32* dst, u32 n) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

extern "C" __global__ void t_increment(u32* counter) {
    if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(counter, 1u);
}

// One WHILE iteration: decrement the counter and keep looping while it is positive.
extern "C" __global__ void t_countdown(u32* counter, u32* iterations,
                                      cudaGraphConditionalHandle handle) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    *iterations += 1u;
    if (*counter > 0u) *counter -= 1u;
    cudaGraphSetConditional(handle, *counter > 0u ? 1u : 0u);
}

extern "C" __global__ void t_scale_u32(const u32* x, u32* y, u32 n) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 3u * x[i];
}
