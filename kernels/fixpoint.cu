// Label propagation for connected components: the kernels of the `fixpoint` and `converge`
// workloads.
//
// The graph (see graphcert/workloads/fixpoint.py) has `comps` components. Vertex v belongs
// to component c = v % comps and sits at index j = v / comps of that component's binary
// heap, so its tree neighbours are computed, not stored: parent (j-1)/2, children 2j+1 and
// 2j+2. On top of the tree, `degree` random perfect matchings inside each component add
// chords, stored as match[k * cap + v] (the partner of v in matching k; a matching is
// symmetric, so pulling from it covers both directions of each chord).
//
// Only vertices < n take part: an edge with an end >= n is ignored, so every n of one
// capacity class runs on the same buffers and launch geometry (the induced subgraph on
// [0, n)), with n the only size-dependent kernel argument.
//
// One step is synchronous (Jacobi): out[v] = min(in[v], in[u] for every neighbour u < n).
// Each thread reads only `in` and writes only its own out[v], so the result does not
// depend on thread order and equals the numpy reference step exactly. Steps ping-pong
// between two label buffers.
#include "graphcert_device.cuh"

__device__ __forceinline__ u32 fp_umin(u32 a, u32 b) { return a < b ? a : b; }

// state[] of the converge workload: changed flag, rounds run, done (eager path only).
#define CV_CHANGED 0
#define CV_ROUNDS 1
#define CV_DONE 2

// One synchronous step for vertex v; returns whether its label changed.
__device__ __forceinline__ bool fp_step_vertex(const u32* __restrict__ in,
                                               u32* __restrict__ out,
                                               const u32* __restrict__ match, u32 v, u32 n,
                                               u32 cap, u32 degree, u32 comps) {
    const u32 own = in[v];
    u32 best = own;
    const u64 j = v / comps;
    const u64 c = v - j * comps;
    if (j > 0) best = fp_umin(best, in[((j - 1) / 2) * comps + c]);  // parent < v < n
    const u64 left = (2 * j + 1) * comps + c;  // u64: no wrap-around near 2^32
    if (left < n) best = fp_umin(best, in[left]);
    if (left + comps < n) best = fp_umin(best, in[left + comps]);
    for (u32 k = 0; k < degree; ++k) {
        const u32 w = match[(u64)k * cap + v];
        if (w < n) best = fp_umin(best, in[w]);
    }
    out[v] = best;
    return best != own;
}

// labels[v] = v for v < n: every launch starts from singletons.
extern "C" __global__ void fp_init(u32* labels, u32 n) {
    const u32 v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) labels[v] = v;
}

// One synchronous step of the fixpoint workload (K of these make one run).
extern "C" __global__ void fp_step(const u32* __restrict__ in, u32* __restrict__ out,
                                   const u32* __restrict__ match, u32 n, u32 cap, u32 degree,
                                   u32 comps) {
    const u32 v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) fp_step_vertex(in, out, match, v, n, cap, degree, comps);
}

// converge: singleton labels and a cleared state, so each launch starts afresh.
extern "C" __global__ void cv_init(u32* labels, u32 n, u32* state) {
    const u32 v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) labels[v] = v;
    if (v == 0) {
        state[CV_CHANGED] = 0;
        state[CV_ROUNDS] = 0;
        state[CV_DONE] = 0;
    }
}

// converge: one step that raises state[CHANGED] when any label moved. Once the eager path
// has marked the run done, the remaining queued steps return at once (the labels are a
// fixed point by then, so skipping them changes nothing but time).
extern "C" __global__ void cv_step(const u32* __restrict__ in, u32* __restrict__ out,
                                   const u32* __restrict__ match, u32 n, u32 cap, u32 degree,
                                   u32 comps, u32* state) {
    if (state[CV_DONE]) return;
    const u32 v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n && fp_step_vertex(in, out, match, v, n, cap, degree, comps)) {
        state[CV_CHANGED] = 1;  // every writer stores the same value: a benign race
    }
}

// converge, graph path: the last node of the WHILE body. Counts the round, clears the flag
// for the next round, and keeps looping while the round changed something. max_rounds is
// a guard that cannot trigger on a correct run (the workload proves a smaller bound); it
// stops a broken kernel from spinning the GPU forever, and `rounds` then shows it.
extern "C" __global__ void cv_check(u32* state, cudaGraphConditionalHandle handle,
                                    u32 max_rounds) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const u32 changed = state[CV_CHANGED];
    state[CV_CHANGED] = 0;
    const u32 rounds = state[CV_ROUNDS] + 1;
    state[CV_ROUNDS] = rounds;
    cudaGraphSetConditional(handle, (changed != 0 && rounds < max_rounds) ? 1u : 0u);
}

// converge, eager path: the same bookkeeping as cv_check, for a stream that runs a fixed
// max_rounds rounds. The first round that changes nothing sets DONE; later rounds are no-ops,
// so `rounds` and the labels match the WHILE loop's exactly.
extern "C" __global__ void cv_round(u32* state) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    if (state[CV_DONE]) return;
    const u32 changed = state[CV_CHANGED];
    state[CV_CHANGED] = 0;
    state[CV_ROUNDS] += 1;
    if (!changed) state[CV_DONE] = 1;
}
