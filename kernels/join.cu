// Inner hash join of u32 keys (arity 1: one column; arity 2: two columns compared together).
//
// The table is open addressing with linear probing over `mask + 1` slots (a power of two,
// at least twice the build rows). A slot holds a BUILD ROW INDEX, not a key, and EMPTY is
// 0xffffffff: every key value stays usable (no sentinel key), duplicates each take a slot,
// and arity 2 needs no wider slot. The host clears the table with a memset to 0xff bytes.
//
// Probing is done twice with the same walk: join_count counts matches per probe row, the
// counts are exclusive-scanned (scan.cu), and join_scatter writes (probe row, build row)
// pairs from each row's offset. The table does not change between the two walks, so a row
// writes exactly as many pairs as it counted.
#include "graphcert_device.cuh"

#define JOIN_EMPTY 0xffffffffu

__device__ __forceinline__ u32 mix32(u32 h) {  // murmur3's finaliser
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

__device__ __forceinline__ u32 key_hash(u32 k0, u32 k1, u32 arity) {
    return arity == 2u ? mix32(k0 ^ mix32(k1 + 0x9e3779b9u)) : mix32(k0);
}

// For arity 1 the second column pointers alias the first and are never read.
extern "C" __global__ void join_build(const u32* build0, const u32* build1, u32 build_rows,
                                      u32 arity, u32* slots, u32 mask) {
    const u32 row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= build_rows) return;
    const u32 k0 = build0[row];
    const u32 k1 = arity == 2u ? build1[row] : 0u;
    u32 h = key_hash(k0, k1, arity) & mask;
    // The table is at most half full, so a free slot is always found; the bound is a guard.
    for (u32 step = 0; step <= mask; ++step) {
        if (atomicCAS(&slots[h], JOIN_EMPTY, row) == JOIN_EMPTY) return;
        h = (h + 1u) & mask;
    }
}

// Visit every build row whose key equals (k0, k1); the walk both probe kernels share.
template <typename Visit>
__device__ __forceinline__ void for_each_match(u32 k0, u32 k1, u32 arity, const u32* build0,
                                               const u32* build1, const u32* slots, u32 mask,
                                               Visit visit) {
    u32 h = key_hash(k0, k1, arity) & mask;
    for (u32 step = 0; step <= mask; ++step) {
        const u32 row = slots[h];
        if (row == JOIN_EMPTY) return;
        if (build0[row] == k0 && (arity != 2u || build1[row] == k1)) visit(row);
        h = (h + 1u) & mask;
    }
}

// counts[i] = matches of probe row i, for i < n (rows past n: untouched, the scan skips them).
extern "C" __global__ void join_count(const u32* probe0, const u32* probe1, u32 n, u32 arity,
                                      const u32* build0, const u32* build1, const u32* slots,
                                      u32 mask, u32* counts) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const u32 k0 = probe0[i];
    const u32 k1 = arity == 2u ? probe1[i] : 0u;
    u32 count = 0u;
    for_each_match(k0, k1, arity, build0, build1, slots, mask, [&](u32) { ++count; });
    counts[i] = count;
}

// pairs[2*p], pairs[2*p+1] = (probe row, build row) for p in [offsets[i], offsets[i]+counts[i]).
// Thread 0 also writes the total match count (0 when n == 0). Writes past out_capacity are
// dropped: the host sizes the output by a proven bound, so that guard never fires unless a
// bug broke the bound, and then the count shows it.
extern "C" __global__ void join_scatter(const u32* probe0, const u32* probe1, u32 n, u32 arity,
                                        const u32* build0, const u32* build1, const u32* slots,
                                        u32 mask, const u32* offsets, const u32* counts,
                                        u32* pairs, u32 out_capacity, u32* total) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0u) total[0] = n == 0u ? 0u : offsets[n - 1u] + counts[n - 1u];
    if (i >= n) return;
    const u32 k0 = probe0[i];
    const u32 k1 = arity == 2u ? probe1[i] : 0u;
    u32 p = offsets[i];
    for_each_match(k0, k1, arity, build0, build1, slots, mask, [&](u32 row) {
        if (p < out_capacity) {
            pairs[2ull * p] = i;
            pairs[2ull * p + 1ull] = row;
        }
        ++p;
    });
}
