// One decode step of a small transformer-like stack: per layer, five small launch-bound
// kernels over n token rows of `hidden` floats (row-major, row r at r * hidden):
//   dc_rmsnorm  h = x / sqrt(mean(x^2) + eps) * gain
//   dc_matvec   z = h . W        (W is hidden x hidden, row k at k * hidden)
//   dc_bias     z += bias
//   dc_gelu     z = gelu_tanh(z)
//   dc_residual x_out = x_in + z
// Launch geometry comes from the capacity class; n (rows) is the size argument, and rows
// >= n are never touched. Indices are 64-bit: capacity * hidden may pass 2^32.
#include "graphcert_device.cuh"

// One warp per row: lanes stride the row, a shuffle tree sums the squares. blockDim.x is a
// multiple of 32, so a warp never straddles two rows and exits (row >= n) as a whole.
extern "C" __global__ void dc_rmsnorm(const float* __restrict__ x,
                                      const float* __restrict__ gain,
                                      float* __restrict__ h, u32 n, u32 hidden, float eps) {
    const u64 thread = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 row = thread / 32;
    const u32 lane = threadIdx.x % 32;
    if (row >= n) return;
    const float* xr = x + row * hidden;
    float sum = 0.0f;
    for (u32 k = lane; k < hidden; k += 32) sum += xr[k] * xr[k];
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    }
    const float scale = 1.0f / sqrtf(sum / (float)hidden + eps);  // IEEE sqrt and divide
    float* hr = h + row * hidden;
    for (u32 k = lane; k < hidden; k += 32) hr[k] = xr[k] * scale * gain[k];
}

// One thread per output element: a warp shares the row of h (broadcast reads) and reads
// consecutive columns of W (coalesced).
extern "C" __global__ void dc_matvec(const float* __restrict__ h, const float* __restrict__ w,
                                     float* __restrict__ z, u32 n, u32 hidden) {
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 row = i / hidden;
    if (row >= n) return;
    const u32 col = (u32)(i - row * hidden);
    const float* hr = h + row * hidden;
    float acc = 0.0f;
    for (u32 k = 0; k < hidden; ++k) acc += hr[k] * w[(u64)k * hidden + col];
    z[i] = acc;
}

extern "C" __global__ void dc_bias(float* __restrict__ z, const float* __restrict__ bias, u32 n,
                                   u32 hidden) {
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (u64)n * hidden) z[i] += bias[i % hidden];
}

// GELU, tanh approximation: 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))).
extern "C" __global__ void dc_gelu(float* __restrict__ z, u32 n, u32 hidden) {
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (u64)n * hidden) return;
    const float v = z[i];
    z[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

// x_in and x_out are the same buffer after the first layer (updated in place), so they
// carry no __restrict__.
extern "C" __global__ void dc_residual(const float* x_in, const float* __restrict__ z,
                                       float* x_out, u32 n, u32 hidden) {
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (u64)n * hidden) x_out[i] = x_in[i] + z[i];
}
