// graphcert's own device helpers: the blocking kernel that holds a stream while launches
// queue up behind it, and the clock calibration kernel used to read the effective SM clock.
#include "graphcert_device.cuh"

// Spin until the host writes a non-zero release flag (host-mapped pinned memory) or until
// timeout_ns of GPU global time pass. status[0] = 1 when released, 2 when timed out, so a
// full launch queue can never hang the tool: the kernel ends by itself.
extern "C" __global__ void gc_block_until_released(const volatile unsigned int* release,
                                                   unsigned long long timeout_ns,
                                                   unsigned int* status) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    const unsigned long long start = gc_globaltimer_ns();
    unsigned int outcome = 2;
    while (gc_globaltimer_ns() - start < timeout_ns) {
        if (*release != 0u) {
            outcome = 1;
            break;
        }
        __nanosleep(1000);
    }
    status[0] = outcome;
    __threadfence_system();
}

// Spin for `cycles` SM clock cycles and report the cycles and global-time nanoseconds it
// took: cycles / ns is the SM clock in GHz while the kernel ran (no NVML needed).
extern "C" __global__ void gc_clock_calibrate(unsigned long long cycles,
                                              unsigned long long* out) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    const unsigned long long t0 = gc_globaltimer_ns();
    const long long c0 = clock64();
    long long c1 = c0;
    while ((unsigned long long)(c1 - c0) < cycles) c1 = clock64();
    const unsigned long long t1 = gc_globaltimer_ns();
    out[0] = (unsigned long long)(c1 - c0);
    out[1] = t1 - t0;
}

// An empty kernel: the unit of pure launch overhead.
extern "C" __global__ void gc_empty() {}
