// Benchmark of the CPU backend's GEMM against OpenBLAS's sgemm on the same threads (OpenBLAS
// is dlopened, so it is not a build dependency). Prints a table: the micro-kernel alone in
// L1, then 2048^3, the MLP layer 256 x 1024 x 1024 with nn.Linear's transposed weight (and
// its bias + ReLU epilogue fused through the block callback), 512^3 and 64^3, on 1 and 2
// threads; medians of several repetitions after warm-up, beside the micro-kernel's own peak.
// Then the whole MLP (4 layers). OpenBLAS runs in a forked child process of its own (see
// inChild), so its OpenMP pool and our TBB pool never share a process.
//   cpu_gemm_bench [--isa avx512|avx2|scalar] [--shape MRxNR] [--unroll U] [--pfb D]
//                  [--mc N] [--kc N] [--nc N] [--tpt TASKS_PER_THREAD] [--reps N]
//                  [--only SHAPE-SUBSTRING] [--blas 0]
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <tbb/task_arena.h>

#include "backends/cpu/library/gemm.h"

namespace plugsdk::cpu {
namespace {

// cblas_sgemm's enums (CBLAS's ABI: plain ints).
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using SetThreadsFn = void (*)(int);

struct OpenBlas {
  SgemmFn sgemm = nullptr;
  SetThreadsFn setBlasThreads = nullptr, setOmpThreads = nullptr;
  // The Debian build is the OpenMP one: its thread count follows omp_set_num_threads too.
  void setThreads(int n) {
    setBlasThreads(n);
    if (setOmpThreads) setOmpThreads(n);
  }
  bool load() {
    void* h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) return false;
    sgemm = reinterpret_cast<SgemmFn>(dlsym(h, "cblas_sgemm"));
    setBlasThreads = reinterpret_cast<SetThreadsFn>(dlsym(h, "openblas_set_num_threads"));
    setOmpThreads = reinterpret_cast<SetThreadsFn>(dlsym(h, "omp_set_num_threads"));
    return sgemm && setBlasThreads;
  }
};

/// The median of timed runs of f: `blocks` blocks after one warm-up block; per block a
/// pause (a noisy neighbour on this shared machine comes and goes), one untimed run (wakes
/// the sleeping thread pool: TBB's workers take about a millisecond to rejoin after idling
/// in this VM, which a compiled program running kernels back to back does not see), then
/// three timed runs.
double median(int blocks, const std::function<void()>& f) {
  std::vector<double> t;
  for (int b = 0; b < blocks + 1; ++b) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    f();
    for (int r = 0; r < 3; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      f();
      if (b > 0) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// Runs f in a forked child and returns its results (empty: the child failed). OpenBLAS is
/// measured this way, in a process of its own as eager torch runs it, forked before this
/// process starts any TBB thread: with an OpenMP pool beside TBB's, or forks after TBB's
/// workers exist, half the plugsdk 2-thread rows ran at 1-thread speed.
std::vector<double> inChild(const std::function<std::vector<double>()>& f) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::vector<double> r = f();
    ssize_t ignored = write(fds[1], r.data(), r.size() * sizeof(double));
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  std::vector<double> r;
  double x;
  while (pid > 0 && read(fds[0], &x, sizeof x) == static_cast<ssize_t>(sizeof x)) r.push_back(x);
  close(fds[0]);
  if (pid > 0) waitpid(pid, nullptr, 0);
  return r;
}

std::vector<float> randomVector(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

struct Case {
  const char* name;
  int64_t m, n, k;
  bool linear;  // B is nn.Linear's weight (n x k, row-major) used transposed, + bias + ReLU
};

int run(int argc, char** argv) {
  std::string isaName = "", shapeArg, only;
  bool useBlas = true;
  GemmBlocking blocking;
  int reps = 5, unroll = -1, pfb = -1, tasksPerThread = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--isa")
      isaName = v;
    else if (a == "--shape")
      shapeArg = v;
    else if (a == "--mc")
      blocking.mc = std::stoll(v);
    else if (a == "--kc")
      blocking.kc = std::stoll(v);
    else if (a == "--nc")
      blocking.nc = std::stoll(v);
    else if (a == "--reps")
      reps = std::stoi(v);
    else if (a == "--blas")
      useBlas = v != "0";
    else if (a == "--only")
      only = v;
    else if (a == "--tpt")
      tasksPerThread = std::stoi(v);
    else if (a == "--unroll")
      unroll = std::stoi(v);
    else if (a == "--pfb")
      pfb = std::stoi(v);
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  auto isa = selectIsa(hostFeatures(), isaName);
  if (!isa.isOk()) return std::fprintf(stderr, "%s\n", isa.status().message().c_str()), 1;
  auto jit = Jit::create(*isa);
  if (!jit.isOk()) return std::fprintf(stderr, "%s\n", jit.status().message().c_str()), 1;
  GemmMicroKernelShape shape = defaultGemmMicroKernelShape(*isa);
  if (!shapeArg.empty()) std::sscanf(shapeArg.c_str(), "%dx%d", &shape.mr, &shape.nr);
  if (unroll > 0) shape.unroll = unroll;
  if (pfb >= 0) shape.prefetchB = pfb;
  auto t0 = std::chrono::steady_clock::now();
  auto kernels = buildGemmKernels(**jit, shape);
  if (!kernels.isOk()) return std::fprintf(stderr, "%s\n", kernels.status().message().c_str()), 1;
  const double buildMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  GemmBlocking def = defaultGemmBlocking(*kernels);
  std::printf(
      "plugsdk GEMM: ISA %s, micro-kernel %dx%d (unroll %d, B prefetch %d), blocking MC %lld KC %lld NC %lld, "
      "built in %.1f ms\n",
      std::string(isa->name()).c_str(), shape.mr, shape.nr, shape.unroll, shape.prefetchB,
      static_cast<long long>(blocking.mc ? blocking.mc : def.mc),
      static_cast<long long>(blocking.kc ? blocking.kc : def.kc),
      static_cast<long long>(blocking.nc ? blocking.nc : def.nc), buildMs);
  OpenBlas blas;  // loaded only in the child process that times it (see inChild)

  // The micro-kernel alone on L1-resident panels: the ceiling for everything below.
  double peak = 0;  // GFLOP/s of one core: the physical limit each row is compared with
  {
    const int64_t kc = 256;
    std::vector<float> a = randomVector(shape.mr * kc, 1), b = randomVector(shape.nr * kc, 2);
    std::vector<float> c(shape.mr * shape.nr);
    const int inner = 2000;
    double s = median(reps, [&] {
      for (int r = 0; r < inner; ++r) kernels->micro(kc, a.data(), b.data(), c.data(), shape.nr, kGemmAccumulate);
    });
    peak = 2.0 * shape.mr * shape.nr * kc * inner / s * 1e-9;
    std::printf("micro-kernel in L1 (kc %lld): %.1f GFLOP/s on one core (the 'of peak' column's limit)\n\n",
                static_cast<long long>(kc), peak);
  }

  const Case cases[] = {{"2048^3", 2048, 2048, 2048, false},
                        {"MLP layer 256x1024x1024 (W^T, +bias+ReLU)", 256, 1024, 1024, true},
                        {"512^3", 512, 512, 512, false},
                        {"deep K 512x4608x512 (resnet18 layer 4)", 512, 512, 4608, false},
                        {"64^3", 64, 64, 64, false}};
  // Seconds per run of every row, then of the MLP: plugsdk's, or OpenBLAS's (blasMode).
  std::unique_ptr<tbb::task_arena> arenaOwner;
  auto measure = [&](bool blasMode) {
    std::vector<double> times;
    if (!blasMode) arenaOwner = std::make_unique<tbb::task_arena>(2);  // one arena, as a client owns
    tbb::task_arena* arena = arenaOwner.get();                         // null in the OpenBLAS child: never used there
    if (blasMode) {
      if (!blas.load()) return times;
    }
    for (const Case& cs : cases) {
      if (!only.empty() && std::string(cs.name).find(only) == std::string::npos) continue;
      std::vector<float> a = randomVector(cs.m * cs.k, 3), b = randomVector(cs.k * cs.n, 4),
                         bias = randomVector(cs.n, 5);
      std::vector<float> c(cs.m * cs.n);
      GemmProblem p;
      p.m = cs.m, p.n = cs.n, p.k = cs.k;
      p.a = {a.data(), GemmElement::kF32, cs.k, 1, 0};
      // nn.Linear: weight W is n x k row-major, and the layer computes x @ W^T.
      p.b = cs.linear ? GemmOperand{b.data(), GemmElement::kF32, 1, cs.k, 0}
                      : GemmOperand{b.data(), GemmElement::kF32, cs.n, 1, 0};
      p.c = c.data(), p.ldc = cs.n;
      const double flops = 2.0 * cs.m * cs.n * cs.k;
      const int innerReps = flops < 1e8 ? static_cast<int>(1e8 / flops) : 1;
      for (int threads : {1, 2}) {
        GemmOptions o;
        o.arena = arena;
        o.maxThreads = threads;
        o.blocking = blocking;
        o.tasksPerThread = tasksPerThread;
        if (cs.linear)
          o.onBlockDone = [&](int64_t, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
            for (int64_t i = m0; i < m1; ++i)
              for (int64_t j = n0; j < n1; ++j) c[i * cs.n + j] = std::max(c[i * cs.n + j] + bias[j], 0.0f);
          };
        auto ours = [&] {
          for (int r = 0; r < innerReps; ++r) (void)gemm(*kernels, p, o);
        };
        auto theirs = [&] {
          for (int r = 0; r < innerReps; ++r) {
            blas.sgemm(kRowMajor, kNoTrans, cs.linear ? kTrans : kNoTrans, cs.m, cs.n, cs.k, 1.0f, a.data(), cs.k,
                       b.data(), cs.linear ? cs.k : cs.n, 0.0f, c.data(), cs.n);
            if (cs.linear)  // the same epilogue, as a separate pass (what eager torch does)
              for (int64_t i = 0; i < cs.m * cs.n; ++i) c[i] = std::max(c[i] + bias[i % cs.n], 0.0f);
          }
        };
        if (blasMode) blas.setThreads(threads);
        times.push_back((blasMode ? median(reps, theirs) : median(reps, ours)) / innerReps);
      }
    }

    // The MLP of the design's baseline: 4 x (Linear(1024) + ReLU), batch 256, 2 threads.
    {
      const int64_t batch = 256, width = 1024;
      std::vector<std::vector<float>> w, bias;
      for (int l = 0; l < 4; ++l) {
        w.push_back(randomVector(width * width, 10 + l));
        for (float& x : w.back()) x *= 0.05f;
        bias.push_back(randomVector(width, 20 + l));
      }
      std::vector<float> x0 = randomVector(batch * width, 30), x1(batch * width), x2(batch * width);
      auto ours = [&] {
        const float* in = x0.data();
        for (int l = 0; l < 4; ++l) {
          float* out = (l % 2 == 0) ? x1.data() : x2.data();
          GemmProblem p;
          p.m = batch, p.n = width, p.k = width;
          p.a = {in, GemmElement::kF32, width, 1, 0};
          p.b = {w[l].data(), GemmElement::kF32, 1, width, 0};
          p.c = out, p.ldc = width;
          GemmOptions o;
          o.arena = arena;
          o.blocking = blocking;
          o.tasksPerThread = tasksPerThread;
          const float* bl = bias[l].data();
          o.onBlockDone = [&](int64_t, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
            for (int64_t i = m0; i < m1; ++i)
              for (int64_t j = n0; j < n1; ++j) out[i * width + j] = std::max(out[i * width + j] + bl[j], 0.0f);
          };
          (void)gemm(*kernels, p, o);
          in = out;
        }
      };
      auto theirs = [&] {
        const float* in = x0.data();
        for (int l = 0; l < 4; ++l) {
          float* out = (l % 2 == 0) ? x1.data() : x2.data();
          blas.sgemm(kRowMajor, kNoTrans, kTrans, batch, width, width, 1.0f, in, width, w[l].data(), width, 0.0f, out,
                     width);
          for (int64_t i = 0; i < batch * width; ++i) out[i] = std::max(out[i] + bias[l][i % width], 0.0f);
          in = out;
        }
      };
      if (blasMode) blas.setThreads(2);
      times.push_back(blasMode ? median(reps, theirs) : median(reps, ours));
    }
    return times;
  };

  // OpenBLAS first, in a child forked before any TBB thread exists; then plugsdk here.
  const std::vector<double> theirs = useBlas ? inChild([&] { return measure(true); }) : std::vector<double>{};
  const std::vector<double> ours = measure(false);
  auto blasAt = [&](size_t i) { return i < theirs.size() ? theirs[i] : 0.0; };
  std::printf("| shape | threads | plugsdk GFLOP/s | OpenBLAS GFLOP/s | plugsdk / OpenBLAS | plugsdk ms | of peak |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  size_t row = 0;
  for (const Case& cs : cases) {
    if (!only.empty() && std::string(cs.name).find(only) == std::string::npos) continue;
    const double flops = 2.0 * cs.m * cs.n * cs.k;
    for (int threads : {1, 2}) {
      const double tOurs = ours[row], tTheirs = blasAt(row);
      ++row;
      std::printf("| %s | %d | %.1f | %.1f | %.2f | %.3f | %.0f%% |\n", cs.name, threads, flops / tOurs * 1e-9,
                  tTheirs > 0 ? flops / tTheirs * 1e-9 : 0.0, tTheirs > 0 ? tTheirs / tOurs : 0.0, tOurs * 1e3,
                  100.0 * flops / tOurs * 1e-9 / (peak * threads));
    }
  }
  std::printf(
      "\nMLP 4 x (Linear(1024) + ReLU), batch 256, 2 threads: plugsdk %.2f ms, OpenBLAS + separate "
      "bias/ReLU pass %.2f ms (DESIGN.md's eager torch: 13.8 ms)\n",
      ours[row] * 1e3, blasAt(row) * 1e3);
  return 0;
}

}  // namespace
}  // namespace plugsdk::cpu

int main(int argc, char** argv) { return plugsdk::cpu::run(argc, argv); }
