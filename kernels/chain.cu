// The launch-overhead workload: a chain of near-empty kernels, one thread each.
//
// Launch `step` stores step + 1 into marks[step], so the host can check that every launch
// ran. A store and nothing else: on an H100 a graph of 1000 such nodes took 0.785 us per
// node, the same as empty kernels, while a counter read-modify-write per launch (which
// would also prove the order) took 0.940 us: a dependent load would be measured as launch
// overhead. The order is the stream's or the graph's edges' to guarantee.
#include "graphcert_device.cuh"

extern "C" __global__ void chain_mark(u32* marks, u32 step) {
    marks[step] = step + 1u;
}
