// A native serving loop for `graphcert record -- COMMAND` (CUDA runtime, no Python): one CUDA
// graph per batch-size bucket, a seeded stream of request sizes, each step replaying its
// bucket's graph. Its planted faults and process shapes are what the multi-process recorder
// must see exactly (tests/gpu/test_record_processes_gpu.py).
//
// Build:  nvcc -O2 -o native_server examples/record/native_server.cu
// Run:    graphcert record -- ./native_server [FLAGS]
//
//   --steps N          serving steps (default 2000; 0: start, capture, print, end)
//   --seed S           the request-size stream's seed (default 0)
//   --fallback         bucket 16 gets no graph: its steps launch the 4 kernels eagerly inside
//                      NVTX range "eager b16" (the vLLM bug: a bucket never dispatched)
//   --selfcheck N      every N steps one eager check kernel inside NVTX range "selfcheck"
//                      (an intended eager kernel: a gate's allow_eager_ranges passes it)
//   --fork N           fork N workers before any CUDA call; worker i serves on device
//                      i % deviceCount with seed+i and ends with _exit(0) (no atexit, as
//                      forked workers end); the parent waits for all and exits with the first
//                      failure's status (128 + signal for a signal)
//   --kill-self-at S   worker 1 (or the only serving process) raises SIGKILL at step S
//   --orphan S         first fork a child that makes one graph, replays it 8 times and sleeps
//                      S seconds; nobody waits for it (a child that outlives the command)
//
// Every serving process prints one ground-truth line to stdout, flushed, once it is done:
//   graphcert-truth {"pid": P, "device": D, "graphs": G, "graph_launches": L,
//                    "eager_launches": E, "eager_steady": Es,
//                    "eager_by_range": {"eager b16": X, "selfcheck": Y}}
// eager_steady counts eager launches enqueued after the process's first graph launch on its
// one stream (so their device start follows that graph's first kernel, where graphcert's
// steady state begins); eager_by_range counts those steady ones per NVTX range. Every CUDA
// call is checked: an error prints one line to stderr and exits 1.

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

namespace {

constexpr int kBuckets[] = {1, 2, 4, 8, 16, 32, 64};
constexpr int kNumBuckets = sizeof(kBuckets) / sizeof(kBuckets[0]);
constexpr int kRow = 4096;           // elements per request row
constexpr int kMaxSize = 64;         // the largest request (and bucket)
constexpr int kLeftOut = 16;         // --fallback: this bucket has no graph
constexpr int kThreads = 256;
constexpr int kOrphanReplays = 8;

void check(cudaError_t err, const char* what, int line) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "native_server: %s failed at line %d: %s (%s)\n", what, line,
                 cudaGetErrorName(err), cudaGetErrorString(err));
    std::exit(1);
  }
}
#define CK(call) check((call), #call, __LINE__)

__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
__global__ void shift(float* x, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += b;
}
__global__ void relu(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] > 0.f ? x[i] : 0.f;
}
__global__ void mix(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * y[i] + x[i];
}
// the self-check: flags a non-finite first element (one block, one launch)
__global__ void selfcheck(const float* y, int* bad) {
  if (threadIdx.x == 0 && !isfinite(y[0])) *bad = 1;
}

struct Options {
  long steps = 2000;
  unsigned long long seed = 0;
  bool fallback = false;
  long selfcheck_every = 0;
  int fork_workers = 0;
  long kill_at = -1;
  int orphan_s = -1;
};

struct Counts {
  int graphs = 0;
  long graph_launches = 0, eager = 0, eager_steady = 0, steady_b16 = 0, steady_check = 0;
};

// The 4-kernel chain over one bucket's n elements: what a graph holds and what eager runs.
void chain(float* x, float* y, int n, cudaStream_t s) {
  int grid = (n + kThreads - 1) / kThreads;
  scale<<<grid, kThreads, 0, s>>>(x, 0.5f, n);
  shift<<<grid, kThreads, 0, s>>>(x, 0.25f, n);
  relu<<<grid, kThreads, 0, s>>>(x, n);
  mix<<<grid, kThreads, 0, s>>>(y, x, n);
  CK(cudaGetLastError());
}

int bucket_of(int n) {
  for (int b : kBuckets)
    if (b >= n) return b;
  return kBuckets[kNumBuckets - 1];
}

// A 64-bit LCG (Knuth's MMIX constants): sizes 1..64, the same for a seed everywhere.
int next_size(unsigned long long* state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return 1 + static_cast<int>((*state >> 33) % kMaxSize);
}

struct Device {
  cudaStream_t stream;
  float *x, *y;
  int* bad;
  int ordinal;
};

Device open_device(int ordinal) {
  Device d{};
  d.ordinal = ordinal;
  CK(cudaSetDevice(ordinal));
  CK(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
  size_t bytes = sizeof(float) * kMaxSize * kRow;
  CK(cudaMalloc(&d.x, bytes));
  CK(cudaMalloc(&d.y, bytes));
  CK(cudaMalloc(&d.bad, sizeof(int)));
  CK(cudaMemsetAsync(d.x, 0, bytes, d.stream));  // memsets, not kernels: nothing eager
  CK(cudaMemsetAsync(d.y, 0, bytes, d.stream));
  CK(cudaMemsetAsync(d.bad, 0, sizeof(int), d.stream));
  // load every kernel now (lazy loading would load them inside the first capture)
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, scale));
  CK(cudaFuncGetAttributes(&attr, shift));
  CK(cudaFuncGetAttributes(&attr, relu));
  CK(cudaFuncGetAttributes(&attr, mix));
  CK(cudaFuncGetAttributes(&attr, selfcheck));
  return d;
}

cudaGraphExec_t capture(const Device& d, int bucket) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(d.stream, cudaStreamCaptureModeThreadLocal));
  chain(d.x, d.y, bucket * kRow, d.stream);
  CK(cudaStreamEndCapture(d.stream, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphDestroy(graph));  // the executable keeps what it needs
  return exec;
}

void print_truth(const Device& d, const Counts& c) {
  std::printf("graphcert-truth {\"pid\": %d, \"device\": %d, \"graphs\": %d, "
              "\"graph_launches\": %ld, \"eager_launches\": %ld, \"eager_steady\": %ld, "
              "\"eager_by_range\": {\"eager b16\": %ld, \"selfcheck\": %ld}}\n",
              static_cast<int>(getpid()), d.ordinal, c.graphs, c.graph_launches, c.eager,
              c.eager_steady, c.steady_b16, c.steady_check);
  std::fflush(stdout);
}

// One serving process on `ordinal`: capture, serve, print the truth. Returns nothing when
// told to kill itself at a step.
void serve(const Options& o, int ordinal, unsigned long long seed, bool may_kill) {
  Device d = open_device(ordinal);
  Counts c;
  cudaGraphExec_t execs[kNumBuckets] = {};
  for (int i = 0; i < kNumBuckets; ++i) {
    if (o.fallback && kBuckets[i] == kLeftOut) continue;
    execs[i] = capture(d, kBuckets[i]);
    ++c.graphs;
  }
  bool launched_graph = false;
  unsigned long long state = seed;
  for (long step = 0; step < o.steps; ++step) {
    if (may_kill && step == o.kill_at) raise(SIGKILL);  // a process killed mid-run
    int n = next_size(&state);
    int b = bucket_of(n);
    int i = 0;
    while (kBuckets[i] != b) ++i;
    if (execs[i] != nullptr) {
      CK(cudaGraphLaunch(execs[i], d.stream));
      ++c.graph_launches;
      launched_graph = true;
    } else {
      nvtxRangePushA("eager b16");
      chain(d.x, d.y, b * kRow, d.stream);
      nvtxRangePop();
      c.eager += 4;
      if (launched_graph) { c.eager_steady += 4; c.steady_b16 += 4; }
    }
    if (o.selfcheck_every > 0 && (step + 1) % o.selfcheck_every == 0) {
      nvtxRangePushA("selfcheck");
      selfcheck<<<1, 32, 0, d.stream>>>(d.y, d.bad);
      CK(cudaGetLastError());
      nvtxRangePop();
      c.eager += 1;
      if (launched_graph) { c.eager_steady += 1; c.steady_check += 1; }
    }
  }
  CK(cudaStreamSynchronize(d.stream));
  print_truth(d, c);
}

// The orphan: one graph, a few replays, then asleep while the command ends.
void orphan(int seconds) {
  Device d = open_device(0);
  Counts c;
  cudaGraphExec_t exec = capture(d, 1);
  c.graphs = 1;
  for (int r = 0; r < kOrphanReplays; ++r) CK(cudaGraphLaunch(exec, d.stream));
  c.graph_launches = kOrphanReplays;
  CK(cudaStreamSynchronize(d.stream));
  print_truth(d, c);
  sleep(static_cast<unsigned>(seconds));
  std::exit(0);
}

long number(const char* flag, const char* value) {
  char* end = nullptr;
  long v = value ? std::strtol(value, &end, 10) : -1;
  if (!value || *end != '\0' || v < 0) {
    std::fprintf(stderr, "native_server: %s needs a whole number >= 0, got %s\n", flag,
                 value ? value : "nothing");
    std::exit(2);
  }
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!std::strcmp(a, "--fallback")) { o.fallback = true; continue; }
    if (!std::strcmp(a, "--steps")) o.steps = number(a, v);
    else if (!std::strcmp(a, "--seed")) o.seed = static_cast<unsigned long long>(number(a, v));
    else if (!std::strcmp(a, "--selfcheck")) o.selfcheck_every = number(a, v);
    else if (!std::strcmp(a, "--fork")) o.fork_workers = static_cast<int>(number(a, v));
    else if (!std::strcmp(a, "--kill-self-at")) o.kill_at = number(a, v);
    else if (!std::strcmp(a, "--orphan")) o.orphan_s = static_cast<int>(number(a, v));
    else {
      std::fprintf(stderr, "native_server: unknown flag %s (see the header of "
                   "examples/record/native_server.cu)\n", a);
      std::exit(2);
    }
    ++i;  // the value
  }
  return o;
}

int status_code(int status) {
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  std::fflush(stdout);  // nothing buffered is copied into a child
  if (o.orphan_s >= 0) {
    pid_t pid = fork();
    if (pid < 0) { std::perror("native_server: fork"); return 1; }
    if (pid == 0) orphan(o.orphan_s);  // never returns; the parent does not wait for it
  }
  if (o.fork_workers <= 0) {
    serve(o, 0, o.seed, true);
    return 0;
  }
  pid_t workers[64];
  if (o.fork_workers > 64) { std::fprintf(stderr, "native_server: --fork at most 64\n"); return 2; }
  for (int w = 0; w < o.fork_workers; ++w) {
    pid_t pid = fork();  // before any CUDA call: a forked CUDA context is unusable
    if (pid < 0) { std::perror("native_server: fork"); return 1; }
    if (pid == 0) {
      int count = 0;
      CK(cudaGetDeviceCount(&count));
      // worker 1 is the one killed (worker 0 when it is the only one)
      serve(o, w % count, o.seed + static_cast<unsigned long long>(w),
            w == 1 || o.fork_workers == 1);
      _exit(0);  // as forked workers end: no atexit handlers, no CUDA teardown
    }
    workers[w] = pid;
  }
  int code = 0;
  for (int w = 0; w < o.fork_workers; ++w) {
    int status = 0;
    if (waitpid(workers[w], &status, 0) < 0) { std::perror("native_server: waitpid"); return 1; }
    if (code == 0 && status_code(status) != 0) code = status_code(status);
  }
  return code;
}
