// Exclusive prefix sum over u32 (wrapping add): a recursive multi-block reduce-then-scan.
//
// Every level splits its input into scan blocks of SCAN_BLOCK = 256 elements (blocks have
// 256 threads). Going down, scan_block_sums writes one sum per scan block; the level above
// is those sums. The top level (at most 256 elements) is scanned by one block, one element
// per thread. Going up, scan_add_offsets scans each scan block of a level again and adds
// its offset (the scanned sum from the level above). Kernel count: 1 + 2 per level below
// the top. A level's fan-in is 256 whatever the launch shape, so the count holds.
//
// Bandwidth: a CUDA block of 256 threads handles SCAN_TILES = 8 consecutive scan blocks
// (2048 elements) with 16-byte loads and stores, each thread issuing all its loads before
// using any. One 4-byte element per thread per block left too few bytes in flight to cover
// DRAM latency: 23% of peak on an H200, against 55% now (58% on an H100; 2^26 elements,
// benchmarks/scan_bandwidth.py).
// Reduce-then-scan rather than scan-then-add: the bottom level moves 12 bytes per element
// (read in, read in again, write out) instead of 16, with the same kernel count; that
// caps it near 8/12 of what a copy reaches. The up-sweep walks its level from the end, so
// its first reads find the tail the down-sweep just left in L2.
//
// Buffers must be 16-byte aligned (cuMemAlloc gives 256).
//
// Sizing: launch geometry comes from the class capacity; every kernel takes the TRUE n and
// the level's shift (8 * level) and derives its level's length as ceil(n / 256^level), so
// n is the only size-dependent parameter of every node. Scan blocks past that length are
// skipped; elements at or past n are never read and outputs past n are never written.
#include "graphcert_device.cuh"

#define SCAN_BLOCK 256u  // threads per block and elements per scan block (a level's fan-in)
#define SCAN_TILES 8u   // scan blocks per CUDA block, a multiple of 4; scan.py must agree
#define SCAN_WARPS (SCAN_BLOCK / 32u)
#define FULL_MASK 0xffffffffu

// ceil(n / 2^shift) in 64 bits, so n near 2^32 cannot wrap.
__device__ __forceinline__ u32 level_length(u32 n, u32 shift) {
    return (u32)(((u64)n + ((1ull << shift) - 1ull)) >> shift);
}

__device__ __forceinline__ u32 warp_inclusive(u32 v, u32 lane) {
#pragma unroll
    for (u32 d = 1; d < 32u; d <<= 1) {
        const u32 t = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v += t;
    }
    return v;
}

// Exclusive scan of one value per thread across the block. Every thread must call it.
__device__ __forceinline__ u32 block_exclusive(u32 v) {
    __shared__ u32 warp_offsets[SCAN_WARPS];
    const u32 lane = threadIdx.x & 31u;
    const u32 warp = threadIdx.x >> 5;
    const u32 inclusive = warp_inclusive(v, lane);
    if (lane == 31u) warp_offsets[warp] = inclusive;
    __syncthreads();
    if (warp == 0u) {
        const u32 total = lane < SCAN_WARPS ? warp_offsets[lane] : 0u;
        const u32 scanned = warp_inclusive(total, lane);  // all 32 lanes take part
        if (lane < SCAN_WARPS) warp_offsets[lane] = scanned - total;
    }
    __syncthreads();
    return warp_offsets[warp] + inclusive - v;
}

// Each thread covers 4 consecutive elements per chunk (one 16-byte load); a chunk is 1024
// elements, 4 scan blocks; warp w of a chunk covers 128 elements, half of scan block w/2.
#define SCAN_CHUNKS (SCAN_TILES / 4u)

// Load elements i..i+3 (zero past `length`): one 16-byte load unless it straddles the end.
__device__ __forceinline__ uint4 load4(const u32* in, u64 i, u32 length) {
    if (i + 4u <= length) return *reinterpret_cast<const uint4*>(in + i);
    uint4 q = make_uint4(0u, 0u, 0u, 0u);
    if (i < length) q.x = in[i];
    if (i + 1u < length) q.y = in[i + 1u];
    if (i + 2u < length) q.z = in[i + 2u];
    return q;
}

__device__ __forceinline__ void store4(u32* out, u64 i, u32 length, uint4 q) {
    if (i + 4u <= length) {
        *reinterpret_cast<uint4*>(out + i) = q;
        return;
    }
    if (i < length) out[i] = q.x;
    if (i + 1u < length) out[i + 1u] = q.y;
    if (i + 2u < length) out[i + 2u] = q.z;
}

// Down-sweep: sums[b] = sum of scan block b of this level. Scan blocks past the level's
// length are skipped: the level above never reads their sums (its length is
// ceil(length / 256)).
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK)
scan_block_sums(const u32* in, u32* sums, u32 n, u32 shift) {
    const u32 length = level_length(n, shift);
    const u64 first = (u64)blockIdx.x * SCAN_TILES;  // this CUDA block's first scan block
    if (first * SCAN_BLOCK >= length) return;  // uniform per block: no barrier is split
    const u32 lane = threadIdx.x & 31u;
    const u32 warp = threadIdx.x >> 5;
    uint4 q[SCAN_CHUNKS];
#pragma unroll
    for (u32 c = 0; c < SCAN_CHUNKS; ++c)  // all loads first: they are in flight together
        q[c] = load4(in, first * SCAN_BLOCK + c * 4u * SCAN_BLOCK + 4u * threadIdx.x, length);
    __shared__ u32 partial[SCAN_CHUNKS][SCAN_WARPS];
#pragma unroll
    for (u32 c = 0; c < SCAN_CHUNKS; ++c) {
        u32 s = q[c].x + q[c].y + q[c].z + q[c].w;
#pragma unroll
        for (u32 o = 16; o > 0u; o >>= 1) s += __shfl_xor_sync(FULL_MASK, s, o);
        if (lane == 0u) partial[c][warp] = s;
    }
    __syncthreads();
    const u32 t = threadIdx.x;  // thread t < SCAN_TILES writes scan block first + t
    if (t < SCAN_TILES && (first + t) * SCAN_BLOCK < length) {
        const u32 c = t / 4u, w = 2u * (t % 4u);
        sums[first + t] = partial[c][w] + partial[c][w + 1u];
    }
}

// Top level: at most 256 elements, one block. `in` may equal `out` (scan in place).
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK)
scan_single_block(const u32* in, u32* out, u32 n, u32 shift) {
    const u32 length = level_length(n, shift);
    const u32 i = threadIdx.x;
    const u32 v = i < length ? in[i] : 0u;
    const u32 exclusive = block_exclusive(v);
    if (i < length) out[i] = exclusive;
}

// Up-sweep: out = exclusive scan within each scan block + offsets[scan block]. `in` may
// equal `out`: each thread reads its elements before the barrier and writes the same
// elements after it.
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK)
scan_add_offsets(const u32* in, u32* out, const u32* offsets, u32 n, u32 shift) {
    const u32 length = level_length(n, shift);
    // Last CUDA block first: the down-sweep ended on this level's tail, still in L2.
    const u64 first = (u64)(gridDim.x - 1u - blockIdx.x) * SCAN_TILES;
    if (first * SCAN_BLOCK >= length) return;
    const u32 lane = threadIdx.x & 31u;
    const u32 warp = threadIdx.x >> 5;
    const u32 block_of_warp = warp / 2u;  // scan block of this warp within its chunk
    uint4 q[SCAN_CHUNKS];
    u32 offset[SCAN_CHUNKS];
#pragma unroll
    for (u32 c = 0; c < SCAN_CHUNKS; ++c) {
        q[c] = load4(in, first * SCAN_BLOCK + c * 4u * SCAN_BLOCK + 4u * threadIdx.x, length);
        const u64 b = first + 4u * c + block_of_warp;
        offset[c] = b * SCAN_BLOCK < length ? offsets[b] : 0u;  // no entry past the length
    }
    __shared__ u32 partial[SCAN_CHUNKS][SCAN_WARPS];
    u32 before[SCAN_CHUNKS];  // sum of this warp's elements before this thread's four
#pragma unroll
    for (u32 c = 0; c < SCAN_CHUNKS; ++c) {
        q[c].y += q[c].x;  // local inclusive scan of the four
        q[c].z += q[c].y;
        q[c].w += q[c].z;
        const u32 inclusive = warp_inclusive(q[c].w, lane);
        before[c] = inclusive - q[c].w;
        if (lane == 31u) partial[c][warp] = inclusive;
    }
    __syncthreads();
#pragma unroll
    for (u32 c = 0; c < SCAN_CHUNKS; ++c) {
        // the second warp of a scan block starts after the first warp's total
        const u32 base = offset[c] + before[c] + ((warp & 1u) ? partial[c][warp - 1u] : 0u);
        const uint4 r = make_uint4(base, base + q[c].x, base + q[c].y, base + q[c].z);
        store4(out, first * SCAN_BLOCK + c * 4u * SCAN_BLOCK + 4u * threadIdx.x, length, r);
    }
}
