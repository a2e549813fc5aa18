// The resident-dispatch workload's kernel: y[i] += a * x[i] + b for i < n (u32, wrapping).
//
// (a, b) come from a parameter block the graph uploads host->device before this kernel, and
// y is cleared by a memset node first: accumulating (+=) rather than assigning makes the
// clear part of the answer, so a replay without it would be caught.
#include "graphcert_device.cuh"

extern "C" __global__ void resident_axpb(const u32* params, const u32* x, u32* y, u32 n) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] += params[0] * x[i] + params[1];
}
