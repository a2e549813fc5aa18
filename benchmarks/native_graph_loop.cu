// A native C++ (CUDA runtime API) loop timing what `graphcert bench chain` times, for the
// fidelity check "graph device time per node within 1% of a native loop in the same run",
// and a bare cuLaunchKernel loop for "stream-path host cost <= 1.15x a bare loop".
//
// The same kernel as graphcert's chain workload (kernels/chain.cu: one thread stores
// step + 1), the same method: each sample is (event, work, event) queued behind a blocking
// kernel that spins on a host-mapped flag, then released; the median over samples. By default
// the context is first put in its several-streams state (2,000 empty kernels on a second
// stream, as graphcert's harness does); --fresh skips that (a fresh single-stream context).
//
// Build and run: bash benchmarks/native_graph_loop.sh (nvcc -O2 -std=c++17 -arch=sm_90);
// one JSON object per line.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,        \
                         cudaGetErrorString(err_));                                   \
            std::exit(1);                                                             \
        }                                                                             \
    } while (0)

#define CHECK_CU(call)                                                                \
    do {                                                                              \
        CUresult err_ = (call);                                                       \
        if (err_ != CUDA_SUCCESS) {                                                   \
            std::fprintf(stderr, "%s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #call, \
                         static_cast<int>(err_));                                     \
            std::exit(1);                                                             \
        }                                                                             \
    } while (0)

// cuLaunchKernel through the runtime's driver entry point: no link against libcuda, which a
// machine without a driver (where this is compiled to check it) does not have.
using LaunchKernelFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, unsigned, CUstream, void**, void**);

__device__ __forceinline__ unsigned long long globaltimer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// graphcert's kernels/graphcert_runtime.cu gc_block_until_released, same logic.
__global__ void block_until_released(const volatile unsigned int* release,
                                     unsigned long long timeout_ns, unsigned int* status) {
    const unsigned long long start = globaltimer_ns();
    unsigned int outcome = 2;
    while (globaltimer_ns() - start < timeout_ns) {
        if (*release != 0u) {
            outcome = 1;
            break;
        }
        __nanosleep(1000);
    }
    *status = outcome;
}

// graphcert's kernels/chain.cu chain_mark.
__global__ void chain_mark(unsigned int* marks, unsigned int step) { marks[step] = step + 1u; }

__global__ void empty_kernel() {}

// graphcert's gc_clock_calibrate: spin `cycles` SM cycles, report cycles and global-time ns.
__global__ void clock_calibrate(unsigned long long cycles, unsigned long long* out) {
    const unsigned long long t0 = globaltimer_ns();
    const long long c0 = clock64();
    long long c1 = c0;
    while (static_cast<unsigned long long>(c1 - c0) < cycles) c1 = clock64();
    out[0] = static_cast<unsigned long long>(c1 - c0);
    out[1] = globaltimer_ns() - t0;
}

// The effective SM clock in MHz while a spin of `cycles` ran (a negative number: no time
// passed on the global timer).
static double sm_clock_mhz(unsigned long long cycles, unsigned long long* out_dev,
                           cudaStream_t s) {
    clock_calibrate<<<1, 1, 0, s>>>(cycles, out_dev);
    unsigned long long host[2] = {0, 0};
    CHECK(cudaMemcpyAsync(host, out_dev, sizeof(host), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    return host[1] ? static_cast<double>(host[0]) / static_cast<double>(host[1]) * 1e3 : -1.0;
}

// graphcert's bench reads the SM clock with a 20,000,000-cycle spin (~10 ms) before each
// size, which also raises a clock that idles low; --warm-clock does the same before each
// node count. Every run reads the clock after its samples with a short spin.
constexpr unsigned long long kWarmCycles = 20000000ull;
constexpr unsigned long long kProbeCycles = 1000000ull;

struct Blocker {
    unsigned int* flag_host = nullptr;
    unsigned int* flag_dev = nullptr;
    unsigned int* status = nullptr;

    Blocker() {
        CHECK(cudaHostAlloc(&flag_host, sizeof(unsigned int), cudaHostAllocMapped));
        CHECK(cudaHostGetDevicePointer(&flag_dev, flag_host, 0));
        CHECK(cudaMalloc(&status, sizeof(unsigned int)));
    }
    bool reset_status = false;  // --reset-status: as graphcert's BlockingKernel.hold
    void hold(cudaStream_t s) {
        *reinterpret_cast<volatile unsigned int*>(flag_host) = 0u;
        const unsigned int zero = 0u;
        if (reset_status) CHECK(cudaMemcpy(status, &zero, sizeof(zero), cudaMemcpyHostToDevice));
        block_until_released<<<1, 1, 0, s>>>(flag_dev, 5000000000ull, status);
    }
    void release() { *reinterpret_cast<volatile unsigned int*>(flag_host) = 1u; }
    bool released() {
        unsigned int out = 0;
        CHECK(cudaMemcpy(&out, status, sizeof(out), cudaMemcpyDeviceToHost));
        return out == 1u;
    }
    ~Blocker() {
        cudaFreeHost(flag_host);
        cudaFree(status);
    }
};

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// A driver API function through the runtime's entry point (no link against libcuda).
template <typename Fn>
static Fn driver_fn(const char* name) {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found;
    CHECK(cudaGetDriverEntryPointByVersion(name, &entry, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || entry == nullptr) {
        std::fprintf(stderr, "%s not found through the driver entry point\n", name);
        std::exit(1);
    }
    return reinterpret_cast<Fn>(entry);
}

using ModuleLoadDataFn = CUresult (*)(CUmodule*, const void*);
using ModuleGetFunctionFn = CUresult (*)(CUfunction*, CUmodule, const char*);

// --cubin FILE: chain_mark from a cubin loaded with cuModuleLoadData and launched with
// cuLaunchKernel (a CUfunction, as graphcert launches its NVRTC-built kernels) instead of
// the runtime's own (a CUkernel of the executable's fatbin).
static CUfunction load_chain_mark(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        std::fprintf(stderr, "cannot open %s\n", path.c_str());
        std::exit(1);
    }
    std::vector<char> image;
    char buf[65536];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof(buf), f)) > 0) image.insert(image.end(), buf, buf + got);
    std::fclose(f);
    CUmodule module;
    CUfunction func;
    CHECK_CU(driver_fn<ModuleLoadDataFn>("cuModuleLoadData")(&module, image.data()));
    CHECK_CU(driver_fn<ModuleGetFunctionFn>("cuModuleGetFunction")(&func, module, "chain_mark"));
    return func;
}

struct Options {
    bool fresh = false;
    bool flush_l2 = false;
    int samples = 200;
    std::vector<int> nodes{1000, 16};
    int bare = 20000;
    int release_delay_us = 0;  // wait this long after enqueueing a sample before releasing
    bool warm_clock = false;   // read the clock with graphcert's long spin before each count
    std::string cubin;         // chain_mark from this cubin through the driver API
    unsigned long long stream = 0;  // time on this existing stream (a CUstream's address)
    bool reset_status = false;      // a synchronous 4-byte upload before each hold
    unsigned long long exec = 0;    // time this CUgraphExec (another tool's) as the graph
    unsigned long long marks = 0;   // the kernels store into this device buffer (n x u32)
};

static Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--fresh") {
            o.fresh = true;
        } else if (a == "--flush-l2") {
            o.flush_l2 = true;
        } else if ((a == "--marks" || a == "--exec" || a == "--stream") && i + 1 < argc) {
            unsigned long long& address = a == "--marks" ? o.marks : a == "--exec" ? o.exec
                                                                                  : o.stream;
            address = std::strtoull(argv[++i], nullptr, 0);
        } else if (a == "--reset-status") {
            o.reset_status = true;
        } else if (a == "--warm-clock") {
            o.warm_clock = true;
        } else if (a == "--cubin" && i + 1 < argc) {
            o.cubin = argv[++i];
        } else if (a == "--samples" && i + 1 < argc) {
            o.samples = std::max(3, std::atoi(argv[++i]));
        } else if (a == "--release-delay-us" && i + 1 < argc) {
            o.release_delay_us = std::max(0, std::atoi(argv[++i]));
        } else if (a == "--bare" && i + 1 < argc) {
            o.bare = std::max(100, std::atoi(argv[++i]));
        } else if (a == "--nodes" && i + 1 < argc) {
            o.nodes.clear();
            const std::string list = argv[++i];
            for (size_t pos = 0; pos <= list.size();) {
                const size_t comma = std::min(list.find(',', pos), list.size());
                const std::string part = list.substr(pos, comma - pos);
                if (!part.empty()) o.nodes.push_back(std::max(1, std::atoi(part.c_str())));
                pos = comma + 1;
            }
        } else {
            std::fprintf(stderr,
                         "usage: %s [--fresh] [--flush-l2] [--warm-clock] [--cubin FILE] "
                         "[--samples N] [--nodes 1000,16] [--bare COUNT] "
                         "[--release-delay-us US] [--stream ADDRESS] [--reset-status] "
                         "[--exec ADDRESS] [--marks ADDRESS]\n",
                         argv[0]);
            std::exit(2);
        }
    }
    return o;
}

#ifdef NATIVE_LIBRARY
// Built as a shared library (-DNATIVE_LIBRARY) for benchmarks/native_in_process.py, which
// calls it in graphcert's own process, on graphcert's primary context, between bench runs.
extern "C" int native_main(int argc, char** argv) {
#else
int main(int argc, char** argv) {
#endif
    Options opt = parse(argc, argv);
    // Host-mapped memory needs no flag under unified addressing; in a library the context is
    // already active, where some drivers refuse to set flags: not an error here.
    if (cudaSetDeviceFlags(cudaDeviceMapHost) != cudaSuccess) (void)cudaGetLastError();
    CHECK(cudaFree(nullptr));  // create the context
    // --stream: a stream the caller made (benchmarks/native_in_process.py passes graphcert's
    // harness stream, to tell the stream's own state from the rest of the context's).
    cudaStream_t s = reinterpret_cast<cudaStream_t>(opt.stream);
    if (opt.stream == 0) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    if (!opt.fresh) {  // the several-streams state (graphcert's SETTLE_LAUNCHES)
        cudaStream_t other;
        CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
        for (int i = 0; i < 2000; ++i) empty_kernel<<<1, 1, 0, other>>>();
        CHECK(cudaStreamSynchronize(other));
        CHECK(cudaStreamDestroy(other));
    }
    int device = 0, l2 = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    size_t flush_bytes = 2 * static_cast<size_t>(std::max(l2, 1 << 20));
    void* flush = nullptr;
    if (opt.flush_l2) CHECK(cudaMalloc(&flush, flush_bytes));
    Blocker blocker;
    blocker.reset_status = opt.reset_status;
    unsigned long long* clock_out = nullptr;
    CHECK(cudaMalloc(&clock_out, 2 * sizeof(unsigned long long)));
    cudaEvent_t start, end;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&end));
    const char* state = opt.fresh ? "fresh_single_stream" : "several_streams";
    const LaunchKernelFn launch_kernel = driver_fn<LaunchKernelFn>("cuLaunchKernel");
    const CUfunction module_func = opt.cubin.empty() ? nullptr : load_chain_mark(opt.cubin);

    for (int n : opt.nodes) {
        unsigned int* marks = reinterpret_cast<unsigned int*>(opt.marks);  // --marks: not ours
        if (marks == nullptr) CHECK(cudaMalloc(&marks, sizeof(unsigned int) * n));
        auto stream_path = [&](cudaStream_t st) {
            if (module_func == nullptr) {
                for (int k = 0; k < n; ++k) chain_mark<<<1, 1, 0, st>>>(marks, k);
                return;
            }
            for (int k = 0; k < n; ++k) {
                unsigned int step = static_cast<unsigned int>(k);
                void* args[] = {&marks, &step};
                CHECK_CU(launch_kernel(module_func, 1, 1, 1, 1, 1, 1, 0,
                                       reinterpret_cast<CUstream>(st), args, nullptr));
            }
        };
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        stream_path(s);
        CHECK(cudaStreamEndCapture(s, &graph));
        CHECK(cudaGraphInstantiate(&exec, graph, 0));
        CHECK(cudaGraphUpload(exec, s));
        cudaGraphExec_t exec_timed = opt.exec ? reinterpret_cast<cudaGraphExec_t>(opt.exec) : exec;
        for (int i = 0; i < 10; ++i) CHECK(cudaGraphLaunch(exec_timed, s));
        stream_path(s);
        CHECK(cudaStreamSynchronize(s));
        const double clock_before = opt.warm_clock ? sm_clock_mhz(kWarmCycles, clock_out, s) : -1.0;

        // device time: one sample per blocking-kernel hold
        auto device_samples = [&](auto&& work) {
            std::vector<double> out;
            for (int i = 0; i < opt.samples; ++i) {
                if (flush) CHECK(cudaMemsetAsync(flush, 0, flush_bytes, s));
                blocker.hold(s);
                CHECK(cudaEventRecord(start, s));
                work();
                CHECK(cudaEventRecord(end, s));
                // How long the host takes from enqueueing to releasing (Python is slower
                // than this loop); the probe of whether that moves the figure.
                if (opt.release_delay_us > 0) {
                    const double until = now_s() + opt.release_delay_us * 1e-6;
                    while (now_s() < until) {
                    }
                }
                blocker.release();
                CHECK(cudaStreamSynchronize(s));
                if (!blocker.released()) {
                    std::fprintf(stderr, "the blocking kernel timed out\n");
                    std::exit(1);
                }
                float ms = 0;
                CHECK(cudaEventElapsedTime(&ms, start, end));
                out.push_back(ms * 1e-3);
            }
            return median(out);
        };
        double graph_dev = device_samples([&] { CHECK(cudaGraphLaunch(exec_timed, s)); });
        double stream_dev = device_samples([&] { stream_path(s); });
        const double clock_after = sm_clock_mhz(kProbeCycles, clock_out, s);

        // host time around the launch calls only, the GPU drained between samples
        auto host_samples = [&](auto&& work) {
            std::vector<double> out;
            for (int i = 0; i < opt.samples; ++i) {
                CHECK(cudaStreamSynchronize(s));
                double t0 = now_s();
                work();
                out.push_back(now_s() - t0);
            }
            CHECK(cudaStreamSynchronize(s));
            return median(out);
        };
        double graph_host = host_samples([&] { CHECK(cudaGraphLaunch(exec_timed, s)); });
        double stream_host = host_samples([&] { stream_path(s); });

        std::printf(
            "{\"nodes\": %d, \"state\": \"%s\", \"flush_l2\": %s, \"samples\": %d, "
            "\"release_delay_us\": %d, \"warm_clock\": %s, \"kernel\": \"%s\", "
            "\"sm_clock_mhz_before\": %.1f, \"sm_clock_mhz_after\": %.1f, "
            "\"graph_device_us_per_node\": %.4f, \"stream_device_us_per_kernel\": %.4f, "
            "\"graph_host_launch_us\": %.4f, \"stream_host_us_per_launch\": %.4f}\n",
            n, state, flush ? "true" : "false", opt.samples, opt.release_delay_us,
            opt.warm_clock ? "true" : "false", module_func ? "cubin" : "runtime", clock_before,
            clock_after, graph_dev / n * 1e6,
            stream_dev / n * 1e6, graph_host * 1e6, stream_host / n * 1e6);
        std::fflush(stdout);
        CHECK(cudaGraphExecDestroy(exec));
        CHECK(cudaGraphDestroy(graph));
        if (!opt.marks) CHECK(cudaFree(marks));
    }

    // The bare loop: cuLaunchKernel of an argument-free kernel, as graphcert's
    // time_bare_launches does from Python (its floor for the stream path's host cost).
    cudaFunction_t rt_func;
    CHECK(cudaGetFuncBySymbol(&rt_func, reinterpret_cast<const void*>(empty_kernel)));
    CUfunction func = reinterpret_cast<CUfunction>(rt_func);
    CUstream cs = reinterpret_cast<CUstream>(s);
    for (int i = 0; i < 100; ++i)
        CHECK_CU(launch_kernel(func, 1, 1, 1, 1, 1, 1, 0, cs, nullptr, nullptr));
    CHECK(cudaStreamSynchronize(s));
    double t0 = now_s();
    for (int i = 0; i < opt.bare; ++i)
        CHECK_CU(launch_kernel(func, 1, 1, 1, 1, 1, 1, 0, cs, nullptr, nullptr));
    double bare = (now_s() - t0) / opt.bare;
    CHECK(cudaStreamSynchronize(s));
    t0 = now_s();
    for (int i = 0; i < opt.bare; ++i) empty_kernel<<<1, 1, 0, s>>>();
    double bare_rt = (now_s() - t0) / opt.bare;
    CHECK(cudaStreamSynchronize(s));
    std::printf("{\"bare_culaunchkernel_host_us\": %.4f, \"bare_runtime_launch_host_us\": %.4f, "
                "\"launches\": %d, \"state\": \"%s\"}\n",
                bare * 1e6, bare_rt * 1e6, opt.bare, state);

    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(end));
    if (flush) CHECK(cudaFree(flush));
    CHECK(cudaFree(clock_out));
    if (opt.stream == 0) CHECK(cudaStreamDestroy(s));
    return 0;
}
