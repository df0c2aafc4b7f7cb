// Accuracy of the f64 math functions (emitMathF64: exp, expm1, log, log1p, log2, sin, cos,
// tanh, sinh, cosh, erf) against
// the x87 long double libm (64-bit significand) rounded to double, at 8 lanes (AVX-512),
// 4 lanes (an AVX2 target) and 1 lane: special values, thresholds, the doubles nearest
// k pi/2, and 2^20 random and dense-grid inputs per function; at most 4 ulp, the special
// values exact. Every double cannot be run: this is the whole f64 evidence (docs/cpu-math.md).
#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/jit.h"
#include "backends/llvm_lowering/vector_math.h"

namespace plugsdk::cpu {
namespace {

using lowering::MathFn;
using Kernel = void (*)(const double* x, double* out, int64_t n);

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

struct Fn64 {
  MathFn fn;
  const char* name;
  long double (*ref)(long double);
  double lo, hi;
  std::vector<double> boundaries;
};

const std::vector<Fn64>& cases64() {
  static const std::vector<Fn64> all = {
      {MathFn::kExp, "exp", ::expl, -700, 700, {709.782712893384, -708.3964185322641, -745.1332191019411, -746, 0.5}},
      {MathFn::kExpm1, "expm1", ::expm1l, -10, 10, {709.782712893384, -37.5, 0.34657359027997264, 1e-10}},
      {MathFn::kLog, "log", ::logl, 1e-3, 1e3, {0.7071067811865476, 1.4142135623730951, 1, 2, 4.9e-324}},
      {MathFn::kSin, "sin", ::sinl, -100, 100, {1e5, -1e5, 3.141592653589793, 1.5707963267948966, 1e-300}},
      {MathFn::kCos, "cos", ::cosl, -100, 100, {1e5, -1e5, 3.141592653589793, 1.5707963267948966, 1e-300}},
      {MathFn::kTanh, "tanh", ::tanhl, -10, 10, {22, -22, 0.625, 1e-10, 19.06}},
      {MathFn::kLog1p, "log1p", ::log1pl, -0.999, 1e3, {-1, -0.2928932188134524, 0.41421356237309515, 1e-20}},
      {MathFn::kLog2, "log2", ::log2l, 1e-3, 1e3, {0.7071067811865476, 1.4142135623730951, 1, 2, 1024, 4.9e-324}},
      {MathFn::kSinh, "sinh", ::sinhl, -10, 10, {1, -1, 710.4758600739439, -710.4758600739439, 709.78}},
      {MathFn::kCosh, "cosh", ::coshl, -10, 10, {710.4758600739439, -710.4758600739439, 709.78, 1e-8}},
      {MathFn::kErf, "erf", ::erfl, -6, 6, {0.75, -0.75, 6, 5.93, -5.93, 1e-10, 1e-300}},
  };
  return all;
}

double ulpError64(double got, long double ref) {
  double want = static_cast<double>(ref);
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0 : INFINITY;
  if (want == 0 && got == 0) return std::signbit(want) == std::signbit(got) ? 0 : INFINITY;
  if (std::isinf(want) || std::isinf(got)) {
    if (std::isinf(want) && std::isinf(got)) return want == got ? 0 : INFINITY;
    long double g = std::isinf(got) ? std::copysign(0x1p1024L, got) : got;
    long double r = std::isinf(want) ? std::copysign(0x1p1024L, ref) : ref;
    return static_cast<double>(std::fabs(g - r) / 0x1p971L);
  }
  int e = std::ilogb(ref == 0 ? 0x1p-1074L : ref);
  long double ulp = std::ldexp(1.0L, std::max(e, -1022) - 52);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / ulp);
}

struct Compiled64 {
  std::unique_ptr<Jit> jit;
  std::unique_ptr<LoadedObject> object;
  std::map<MathFn, Kernel> kernels;
  unsigned lanes = 0;
};

/// void NAME(const double* x, double* out, int64 n): out[i] = fn(x[i]), n a multiple of lanes.
void buildKernel64(llvm::Module& m, const std::string& name, MathFn fn, unsigned lanes) {
  llvm::LLVMContext& c = m.getContext();
  llvm::IRBuilder<> b(c);
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getPtrTy(), b.getInt64Ty()}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, &m);
  auto* entry = llvm::BasicBlock::Create(c, "entry", f);
  auto* loop = llvm::BasicBlock::Create(c, "loop", f);
  auto* done = llvm::BasicBlock::Create(c, "done", f);
  llvm::Type* vt =
      lanes == 1 ? b.getDoubleTy() : static_cast<llvm::Type*>(llvm::FixedVectorType::get(b.getDoubleTy(), lanes));
  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateICmpSGT(f->getArg(2), b.getInt64(0)), loop, done);
  b.SetInsertPoint(loop);
  auto* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(b.getInt64(0), entry);
  auto* x = b.CreateAlignedLoad(vt, b.CreateGEP(b.getDoubleTy(), f->getArg(0), i), llvm::Align(8));
  llvm::Value* r = lowering::emitMathF64(b, fn, x);
  ASSERT_NE(r, nullptr);
  b.CreateAlignedStore(r, b.CreateGEP(b.getDoubleTy(), f->getArg(1), i), llvm::Align(8));
  auto* next = b.CreateAdd(i, b.getInt64(lanes));
  b.CreateCondBr(b.CreateICmpSLT(next, f->getArg(2)), loop, done);
  i->addIncoming(next, b.GetInsertBlock());
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

std::unique_ptr<Compiled64> compile64(const std::string& isaName, bool scalar) {
  auto isa = selectIsa(hostFeatures(), isaName);
  if (!isa.isOk()) return nullptr;
  auto out = std::make_unique<Compiled64>();
  out->lanes = scalar ? 1 : isa->f32Lanes() / 2;
  auto jit = Jit::create(*isa);
  EXPECT_TRUE(jit.isOk()) << jit.status().message();
  out->jit = std::move(*jit);
  llvm::LLVMContext c;
  auto m = std::make_unique<llvm::Module>("math64", c);
  EXPECT_TRUE(out->jit->prepare(*m).isOk());
  std::vector<std::string> names;
  for (const Fn64& fc : cases64()) {
    names.push_back(std::string("math64_") + fc.name);
    buildKernel64(*m, names.back(), fc.fn, out->lanes);
  }
  sdk::Status st = out->jit->optimize(*m, 2);
  EXPECT_TRUE(st.isOk()) << st.message();
  auto obj = out->jit->emitObject(*m);
  EXPECT_TRUE(obj.isOk()) << obj.status().message();
  auto lo = out->jit->load(*obj, "math64", names);
  EXPECT_TRUE(lo.isOk()) << lo.status().message();
  out->object = std::move(*lo);
  for (const Fn64& fc : cases64()) {
    out->kernels[fc.fn] = reinterpret_cast<Kernel>(*out->object->lookup(std::string("math64_") + fc.name));
  }
  return out;
}

Compiled64* compiled64(int which) {  // 0: 8 lanes, 1: 4 lanes (AVX2), 2: scalar
  static std::unique_ptr<Compiled64> all[3] = {compile64("avx512", false), compile64("avx2", false),
                                               compile64("scalar", true)};
  return all[which].get();
}

std::vector<double> run64(Kernel k, std::vector<double> x) {
  size_t n = x.size();
  x.resize((n + 15) / 16 * 16, 0.5);
  std::vector<double> out(x.size());
  k(x.data(), out.data(), static_cast<int64_t>(x.size()));
  out.resize(n);
  return out;
}

std::vector<double> inputs64(const Fn64& fc) {
  std::vector<double> x = {0.0,     -0.0,    kInf,     -kInf, kNan, 4.9e-324, -4.9e-324, 2.2250738585072014e-308,
                           -1e-310, 1.7e308, -1.7e308, 1,     -1,   0.5,      -0.5,      2};
  for (double bnd : fc.boundaries) {
    double up = bnd, down = bnd;
    for (int i = 0; i < 8; ++i) {
      x.push_back(up);
      x.push_back(down);
      up = std::nextafter(up, kInf);
      down = std::nextafter(down, -kInf);
    }
  }
  if (fc.fn == MathFn::kSin || fc.fn == MathFn::kCos) {
    for (int k = 1; k < 66000; ++k) {
      double v = static_cast<double>(k * 1.5707963267948966192313216916397514L);
      x.push_back(v);
      x.push_back(-std::nextafter(v, kInf));
    }
  }
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> range(fc.lo, fc.hi);
  for (int i = 0; i < (1 << 19); ++i) x.push_back(std::bit_cast<double>(rng()));
  for (int i = 0; i < (1 << 18); ++i) x.push_back(range(rng));
  const int grid = 1 << 18;
  for (int i = 0; i < grid; ++i) x.push_back(fc.lo + (fc.hi - fc.lo) * i / grid);
  return x;
}

class VectorMathF64 : public ::testing::TestWithParam<int> {};

TEST_P(VectorMathF64, WithinFourUlp) {
  Compiled64* cc = compiled64(GetParam());
  if (cc == nullptr) GTEST_SKIP() << "this CPU lacks the ISA";
  for (const Fn64& fc : cases64()) {
    std::vector<double> x = inputs64(fc);
    std::vector<double> got = run64(cc->kernels.at(fc.fn), x);
    double worst = 0, at = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      double e = ulpError64(got[i], fc.ref(x[i]));
      if (!(e <= worst)) {
        worst = e;
        at = x[i];
      }
    }
    std::printf("f64 %-6s %u lanes: %zu inputs, max %.3f ulp at %a\n", fc.name, cc->lanes, x.size(), worst, at);
    EXPECT_LE(worst, 4.0) << fc.name << " at " << cc->lanes << " lanes, x = " << at;
  }
}

TEST_P(VectorMathF64, SpecialValues) {
  Compiled64* cc = compiled64(GetParam());
  if (cc == nullptr) GTEST_SKIP() << "this CPU lacks the ISA";
  struct Sv {
    MathFn fn;
    double x, want;
  };
  const Sv table[] = {
      {MathFn::kExp, -kInf, 0},
      {MathFn::kExp, kInf, kInf},
      {MathFn::kExp, 710, kInf},
      {MathFn::kExp, -746, 0},
      {MathFn::kExp, kNan, kNan},
      {MathFn::kExpm1, -0.0, -0.0},
      {MathFn::kExpm1, -kInf, -1},
      {MathFn::kExpm1, kInf, kInf},
      {MathFn::kLog, 0, -kInf},
      {MathFn::kLog, -0.0, -kInf},
      {MathFn::kLog, -1, kNan},
      {MathFn::kLog, kInf, kInf},
      {MathFn::kLog, 1, 0},
      {MathFn::kLog, kNan, kNan},
      {MathFn::kSin, kInf, kNan},
      {MathFn::kSin, -0.0, -0.0},
      {MathFn::kCos, -kInf, kNan},
      {MathFn::kCos, -0.0, 1},
      {MathFn::kTanh, kInf, 1},
      {MathFn::kTanh, -kInf, -1},
      {MathFn::kTanh, -0.0, -0.0},
      {MathFn::kTanh, kNan, kNan},
      {MathFn::kSin, 1e300, std::sin(1e300)},
      {MathFn::kLog1p, -1, -kInf},
      {MathFn::kLog1p, -0.0, -0.0},
      {MathFn::kLog1p, -2, kNan},
      {MathFn::kLog1p, kInf, kInf},
      {MathFn::kLog2, 1024, 10},
      {MathFn::kLog2, 4.9e-324, -1074},
      {MathFn::kLog2, 0, -kInf},
      {MathFn::kSinh, -0.0, -0.0},
      {MathFn::kSinh, -kInf, -kInf},
      {MathFn::kSinh, 711, kInf},
      {MathFn::kCosh, -kInf, kInf},
      {MathFn::kCosh, 0, 1},
      {MathFn::kCosh, kNan, kNan},
      {MathFn::kErf, kInf, 1},
      {MathFn::kErf, -kInf, -1},
      {MathFn::kErf, -0.0, -0.0},
      {MathFn::kErf, kNan, kNan},
  };
  for (const Sv& sv : table) {
    double got = run64(cc->kernels.at(sv.fn), {sv.x})[0];
    bool same = std::isnan(sv.want) ? std::isnan(got) : (got == sv.want && std::signbit(got) == std::signbit(sv.want));
    EXPECT_TRUE(same) << lowering::libmNameF32(sv.fn) << " (f64) of " << sv.x << " = " << got << ", want " << sv.want;
  }
  // What has no f64 lowering is declined.
  llvm::LLVMContext c;
  llvm::IRBuilder<> b(c);
  llvm::Module m("decline", c);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {b.getDoubleTy(), b.getFloatTy()}, false),
                                   llvm::Function::ExternalLinkage, "f", &m);
  b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", f));
  EXPECT_EQ(lowering::emitMathF64(b, MathFn::kAtan, f->getArg(0)), nullptr);
  EXPECT_EQ(lowering::emitMathF64(b, MathFn::kExp, f->getArg(1)), nullptr);
}

// ns per element at 8 lanes against glibc's scalar double functions (PLUGSDK_MATH_BENCH=1).
TEST(VectorMathF64Bench, Throughput) {
  const char* on = std::getenv("PLUGSDK_MATH_BENCH");
  if (on == nullptr || std::string(on) != "1") GTEST_SKIP() << "set PLUGSDK_MATH_BENCH=1";
  Compiled64* cc = compiled64(0) != nullptr ? compiled64(0) : compiled64(1);
  ASSERT_NE(cc, nullptr);
  struct B {
    MathFn fn;
    const char* name;
    double (*libm)(double);
    double lo, hi;
  };
  const B benches[] = {{MathFn::kExp, "exp", ::exp, -700, 700}, {MathFn::kLog, "log", ::log, 1e-3, 1e3},
                       {MathFn::kSin, "sin", ::sin, -100, 100}, {MathFn::kCos, "cos", ::cos, -100, 100},
                       {MathFn::kTanh, "tanh", ::tanh, -5, 5},  {MathFn::kErf, "erf", ::erf, -3, 3}};
  const size_t n = 1 << 15;
  const int reps = 200;
  for (const B& bench : benches) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> d(bench.lo, bench.hi);
    std::vector<double> x(n), out(n);
    for (double& v : x) v = d(rng);
    Kernel k = cc->kernels.at(bench.fn);
    k(x.data(), out.data(), n);
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) k(x.data(), out.data(), n);
    auto t1 = std::chrono::steady_clock::now();
    double (*volatile lib)(double) = bench.libm;
    for (int r = 0; r < reps; ++r) {
      for (size_t i = 0; i < n; ++i) out[i] = lib(x[i]);
    }
    auto t2 = std::chrono::steady_clock::now();
    double vec = std::chrono::duration<double, std::nano>(t1 - t0).count() / (double(n) * reps);
    double sca = std::chrono::duration<double, std::nano>(t2 - t1).count() / (double(n) * reps);
    std::printf("BENCH f64 %-5s %u lanes: %.3f ns/element; glibc %s scalar: %.3f ns/element (%.1fx)\n", bench.name,
                cc->lanes, vec, bench.name, sca, sca / vec);
    EXPECT_GT(sca, 0);
  }
}

std::string widthName64(const ::testing::TestParamInfo<int>& info) {
  const char* names[] = {"Lanes8", "Lanes4Avx2", "Lanes1"};
  return names[info.param];
}
INSTANTIATE_TEST_SUITE_P(Widths, VectorMathF64, ::testing::Values(0, 1, 2), widthName64);

}  // namespace
}  // namespace plugsdk::cpu
