// Accuracy of the vectorized f32 math functions (codegen/vector_math.h) against float64 libm
// rounded to float: each function is JIT-compiled as a loop over an array at 16 lanes
// (AVX-512), 8 lanes (an AVX2 target) and 1 lane, and run on the special values, the
// overflow/underflow boundaries, denormals, and 2^20 random and dense-grid inputs; the worst
// error must be within the conformance suite's 4 ulp and the special values exact.
// PLUGSDK_MATH_EXHAUSTIVE=1 runs every f32 bit pattern (the table in docs/cpu-math.md;
// PLUGSDK_MATH_FN=exp,log picks functions) and PLUGSDK_MATH_BENCH=1 measures throughput.
#include "backends/llvm_lowering/vector_math.h"

#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/jit.h"

namespace plugsdk::cpu {
namespace {

using lowering::MathFn;
using Kernel = void (*)(const float* x, const float* y, float* out, int64_t n);

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kDenormMin = std::numeric_limits<float>::denorm_min();
constexpr float kMin = std::numeric_limits<float>::min();
constexpr float kMax = std::numeric_limits<float>::max();

/// One function under test: its double reference, the conformance suite's input range,
/// and the inputs where its behaviour changes (thresholds, tested with their neighbours).
struct FnCase {
  MathFn fn;
  const char* name;
  double (*ref1)(double);
  double (*ref2)(double, double);
  float lo, hi;
  std::vector<float> boundaries;
  float ylo = -100, yhi = 100;  // the second operand's range (atan2, pow)
};

const std::vector<FnCase>& cases() {
  static const std::vector<FnCase> all = {
      {MathFn::kExp,
       "exp",
       ::exp,
       nullptr,
       -88,
       88,
       {88.7228393f, 88.72283f, -87.33654f, -103.972f, -103.279f, -104, 0.3465736f}},
      {MathFn::kExpm1,
       "expm1",
       ::expm1,
       nullptr,
       -10,
       10,
       {88.7228393f, -17.3287f, 0.3465736f, -0.3465736f, 1e-5f, -1e-5f}},
      {MathFn::kLog, "log", ::log, nullptr, 1e-3f, 1e3f, {0.70710677f, 1.4142135f, 1, 2, 0.5f}},
      {MathFn::kLog1p, "log1p", ::log1p, nullptr, -0.999f, 1e3f, {-1, -0.29289323f, 0.41421357f, 1e-8f, -1e-8f}},
      {MathFn::kLog2, "log2", ::log2, nullptr, 1e-3f, 1e3f, {0.70710677f, 1.4142135f, 1, 2, 0.5f, 1024}},
      {MathFn::kSin, "sin", ::sin, nullptr, -100, 100, {1e5f, -1e5f, 3.14159265f, 1.5707964f, 0.7853982f, 1e-20f}},
      {MathFn::kCos, "cos", ::cos, nullptr, -100, 100, {1e5f, -1e5f, 3.14159265f, 1.5707964f, 0.7853982f, 1e-20f}},
      {MathFn::kTan, "tan", ::tan, nullptr, -100, 100, {1e5f, -1e5f, 1.5707964f, 0.7853982f, 1e-20f}},
      {MathFn::kTanh, "tanh", ::tanh, nullptr, -10, 10, {9, -9, 0.625f, 1e-5f, 8.317766f}},
      {MathFn::kErf, "erf", ::erf, nullptr, -5, 5, {1, -1, 3.92f, 4, -4, 1e-5f}},
      {MathFn::kSinh, "sinh", ::sinh, nullptr, -10, 10, {1, -1, 89.415985f, -89.415985f, 88.7228f}},
      {MathFn::kCosh, "cosh", ::cosh, nullptr, -10, 10, {89.415985f, -89.415985f, 88.7228f, 1e-4f}},
      {MathFn::kAtan, "atan", ::atan, nullptr, -100, 100, {2.4142137f, 0.41421357f, 1, 1e20f, -1e20f}},
      {MathFn::kAsin, "asin", ::asin, nullptr, -1, 1, {0.5f, -0.5f, 1, -1, 1e-20f}},
      {MathFn::kAcos, "acos", ::acos, nullptr, -1, 1, {0.5f, -0.5f, 1, -1, 1e-20f}},
      {MathFn::kAsinh, "asinh", ::asinh, nullptr, -100, 100, {2, -2, 0x1p28f, 1e30f, 1e-5f}},
      {MathFn::kAcosh, "acosh", ::acosh, nullptr, 1, 100, {1, 2, 0x1p28f, 1e30f}},
      {MathFn::kAtanh, "atanh", ::atanh, nullptr, -1, 1, {1, -1, 0.5f, 1e-5f}},
      {MathFn::kAtan2, "atan2", nullptr, ::atan2, -100, 100, {1, -1, 1e-30f, 1e30f}},
      {MathFn::kPow, "pow", nullptr, ::pow, 0.1f, 10, {3, -3, 16777215, -16777215, 0x1p24f, 1.5f, -1.5f}, -4, 4},
  };
  return all;
}

/// The error of `got` against the double reference in units of the f32 spacing at the
/// reference (denormal spacing below the normal range); infinite when a NaN, an infinity or
/// the sign of a zero differs.
double ulpError(float got, double ref) {
  float want = static_cast<float>(ref);
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0 : INFINITY;
  if (want == 0 && got == 0) return std::signbit(want) == std::signbit(got) ? 0 : INFINITY;
  if (std::isinf(want) || std::isinf(got)) {
    if (std::isinf(want) && std::isinf(got)) return want == got ? 0 : INFINITY;
    // One side overflowed: measure against 2^128 standing for the infinity.
    double g = std::isinf(got) ? std::copysign(0x1p128, got) : got;
    double r = std::isinf(want) ? std::copysign(0x1p128, ref) : ref;
    return std::fabs(g - r) / 0x1p104;
  }
  int e = std::ilogb(ref == 0 ? 0x1p-149 : ref);
  double ulp = std::ldexp(1.0, std::max(e, -126) - 23);
  return std::fabs(static_cast<double>(got) - ref) / ulp;
}

/// The JIT-compiled kernels of every function at one width.
struct Compiled {
  std::unique_ptr<Jit> jit;
  std::unique_ptr<LoadedObject> object;
  std::map<MathFn, Kernel> kernels;
  std::string assembly;
  unsigned lanes = 0;
  Kernel pairSin = nullptr, pairCos = nullptr;  ///< emitSinCosF32's first and second result
};

/// void NAME(const float* x, const float* y, float* out, int64 n), n a multiple of `lanes`:
/// out[i] = fn(x[i], y[i]). `splitBlock` emits into a complete block (before the loop's
/// latch), the other case at the end of an unterminated block: both ways a caller may use.
using Emit = std::function<llvm::Value*(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y)>;
void buildKernel(llvm::Module& m, const std::string& name, unsigned lanes, bool splitBlock, const Emit& emit) {
  llvm::LLVMContext& c = m.getContext();
  llvm::IRBuilder<> b(c);
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getPtrTy(), b.getPtrTy(), b.getInt64Ty()}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, &m);
  auto* entry = llvm::BasicBlock::Create(c, "entry", f);
  auto* loop = llvm::BasicBlock::Create(c, "loop", f);
  auto* done = llvm::BasicBlock::Create(c, "done", f);
  llvm::Type* vt =
      lanes == 1 ? b.getFloatTy() : static_cast<llvm::Type*>(llvm::FixedVectorType::get(b.getFloatTy(), lanes));
  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateICmpSGT(f->getArg(3), b.getInt64(0)), loop, done);
  b.SetInsertPoint(loop);
  auto* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(b.getInt64(0), entry);
  auto* x = b.CreateAlignedLoad(vt, b.CreateGEP(b.getFloatTy(), f->getArg(0), i), llvm::Align(4));
  auto* y = b.CreateAlignedLoad(vt, b.CreateGEP(b.getFloatTy(), f->getArg(1), i), llvm::Align(4));
  llvm::Value* next = nullptr;
  if (splitBlock) {
    next = b.CreateAdd(i, b.getInt64(lanes));
    b.CreateCondBr(b.CreateICmpSLT(next, f->getArg(3)), loop, done);
    b.SetInsertPoint(llvm::cast<llvm::Instruction>(next));
  }
  llvm::Value* r = emit(b, x, y);
  ASSERT_NE(r, nullptr);
  b.CreateAlignedStore(r, b.CreateGEP(b.getFloatTy(), f->getArg(2), i), llvm::Align(4));
  if (!splitBlock) {
    next = b.CreateAdd(i, b.getInt64(lanes));
    b.CreateCondBr(b.CreateICmpSLT(next, f->getArg(3)), loop, done);
    i->addIncoming(next, b.GetInsertBlock());
  } else {
    i->addIncoming(next, llvm::cast<llvm::Instruction>(next)->getParent());
  }
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

/// Compiles every function for `isaName` ("" = host best) at its width; lanes 1 uses the
/// host ISA with scalar IR. An empty result (no kernels) when the CPU lacks the ISA.
std::unique_ptr<Compiled> compileAll(const std::string& isaName, bool scalar) {
  auto isa = selectIsa(hostFeatures(), isaName);
  if (!isa.isOk()) return nullptr;
  auto out = std::make_unique<Compiled>();
  out->lanes = scalar ? 1 : isa->f32Lanes();
  auto jit = Jit::create(*isa);
  EXPECT_TRUE(jit.isOk()) << jit.status().message();
  out->jit = std::move(*jit);
  llvm::LLVMContext c;
  auto m = std::make_unique<llvm::Module>("math", c);
  EXPECT_TRUE(out->jit->prepare(*m).isOk());
  std::vector<std::string> names;
  for (const FnCase& fc : cases()) {
    names.push_back(std::string("math_") + fc.name);
    buildKernel(*m, names.back(), out->lanes, out->lanes == 8,
                [&](llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y) { return emitMathF32(b, fc.fn, x, y); });
  }
  for (int which : {0, 1}) {
    names.push_back(which == 0 ? "pair_sin" : "pair_cos");
    buildKernel(*m, names.back(), out->lanes, out->lanes == 8,
                [&](llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value*) {
                  auto [sin, cos] = lowering::emitSinCosF32(b, x);
                  return which == 0 ? sin : cos;
                });
  }
  sdk::Status st = out->jit->optimize(*m, 2);
  EXPECT_TRUE(st.isOk()) << st.message();
  auto asmText = out->jit->emitAssembly(*m);
  if (asmText.isOk()) out->assembly = *asmText;
  auto obj = out->jit->emitObject(*m);
  EXPECT_TRUE(obj.isOk()) << obj.status().message();
  auto lo = out->jit->load(*obj, "math", names);
  EXPECT_TRUE(lo.isOk()) << lo.status().message();
  out->object = std::move(*lo);
  for (const FnCase& fc : cases()) {
    out->kernels[fc.fn] = reinterpret_cast<Kernel>(*out->object->lookup(std::string("math_") + fc.name));
  }
  out->pairSin = reinterpret_cast<Kernel>(*out->object->lookup("pair_sin"));
  out->pairCos = reinterpret_cast<Kernel>(*out->object->lookup("pair_cos"));
  return out;
}

Compiled* compiled(int which) {  // 0: 16 lanes, 1: 8 lanes (AVX2), 2: scalar
  static std::unique_ptr<Compiled> all[3] = {compileAll("avx512", false), compileAll("avx2", false),
                                             compileAll("scalar", true)};
  return all[which].get();
}

/// Runs `k` over x (and y), padding to a multiple of 16 lanes.
std::vector<float> run(Kernel k, std::vector<float> x, std::vector<float> y) {
  size_t n = x.size();
  size_t padded = (n + 15) / 16 * 16;
  x.resize(padded, 0.5f);
  y.resize(padded, 0.5f);
  std::vector<float> out(padded);
  k(x.data(), y.data(), out.data(), static_cast<int64_t>(padded));
  out.resize(n);
  return out;
}

struct Worst {
  double ulp = 0;
  float x = 0, y = 0, got = 0;
  double want = 0;
};

Worst measure(const FnCase& fc, Kernel k, const std::vector<float>& x, const std::vector<float>& y) {
  std::vector<float> got = run(k, x, y);
  Worst w;
  for (size_t i = 0; i < x.size(); ++i) {
    double ref = fc.ref1 != nullptr ? fc.ref1(x[i]) : fc.ref2(x[i], y[i]);
    double e = ulpError(got[i], ref);
    if (!(e <= w.ulp)) w = {e, x[i], y[i], got[i], ref};
  }
  return w;
}

std::vector<float> specialValues() {
  return {0.0f,
          -0.0f,
          kInf,
          -kInf,
          kNan,
          -kNan,
          kDenormMin,
          -kDenormMin,
          0x1.8p-140f,
          -0x1.8p-140f,
          kMin,
          -kMin,
          0x1.fffffcp-127f,
          -0x1.fffffcp-127f,
          kMax,
          -kMax,
          1,
          -1,
          0.5f,
          -0.5f,
          2,
          -2,
          3,
          -3};
}

/// Special values, boundaries with 8 neighbours each way (for sin, cos and tan the floats
/// nearest k pi/2), 2^19 random bit patterns (the
/// whole float range), 2^18 uniform in the conformance range, and a dense grid over it.
void inputsFor(const FnCase& fc, std::vector<float>* x, std::vector<float>* y) {
  std::mt19937 rng(1234);
  std::vector<float> base = specialValues();
  for (float bnd : fc.boundaries) {
    float up = bnd, down = bnd;
    for (int i = 0; i < 8; ++i) {
      base.push_back(up);
      base.push_back(down);
      up = std::nextafter(up, kInf);
      down = std::nextafter(down, -kInf);
    }
  }
  if (fc.fn == MathFn::kSin || fc.fn == MathFn::kCos || fc.fn == MathFn::kTan) {
    // The floats nearest the multiples of pi/2 up to the fast path's limit: the results
    // closest to 0 (or the poles), where the range reduction's error shows.
    for (int k = 1; k < 66000; ++k) {
      float v = static_cast<float>(k * 1.5707963267948966);
      base.push_back(v);
      base.push_back(std::nextafter(v, kInf));
      base.push_back(-std::nextafter(v, 0.0f));
    }
  }
  if (fc.ref2 != nullptr) {  // every pair of special values, in both orders
    for (float a : base) {
      for (float c : base) {
        x->push_back(a);
        y->push_back(c);
      }
    }
  } else {
    *x = base;
    y->assign(base.size(), 0.5f);
  }
  std::uniform_real_distribution<float> range(fc.lo, fc.hi);
  for (int i = 0; i < (1 << 19); ++i) x->push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  for (int i = 0; i < (1 << 18); ++i) x->push_back(range(rng));
  const int grid = 1 << 18;
  for (int i = 0; i < grid; ++i) x->push_back(fc.lo + (fc.hi - fc.lo) * static_cast<float>(i) / grid);
  std::uniform_real_distribution<float> yrange(fc.ylo, fc.yhi);
  const size_t rangeStart = x->size() - grid - (1 << 18);
  while (y->size() < x->size()) {
    // random bits against random bits, then the conformance ranges against each other
    y->push_back(y->size() < rangeStart ? std::bit_cast<float>(static_cast<uint32_t>(rng())) : yrange(rng));
  }
  if (fc.ref2 != nullptr) {  // negative first operands with integer second ones (pow's sign)
    std::uniform_real_distribution<float> neg(-10, -0.1f);
    std::uniform_int_distribution<int> ints(-30, 30);
    for (int i = 0; i < (1 << 16); ++i) {
      x->push_back(neg(rng));
      y->push_back(static_cast<float>(ints(rng)));
    }
  }
}

class VectorMath : public ::testing::TestWithParam<int> {};

TEST_P(VectorMath, WithinFourUlpAndExactSpecialValues) {
  Compiled* cc = compiled(GetParam());
  if (cc == nullptr) GTEST_SKIP() << "this CPU lacks the ISA";
  for (const FnCase& fc : cases()) {
    std::vector<float> x, y;
    inputsFor(fc, &x, &y);
    Worst w = measure(fc, cc->kernels.at(fc.fn), x, y);
    std::printf("%-6s %2u lanes: %zu inputs, max %.3f ulp at %a, %a\n", fc.name, cc->lanes, x.size(), w.ulp, w.x, w.y);
    EXPECT_LE(w.ulp, 4.0) << fc.name << " at " << cc->lanes << " lanes: " << w.ulp << " ulp at x = " << w.x << " ("
                          << std::hexfloat << w.x << std::defaultfloat << "), y = " << w.y << ": got " << w.got
                          << ", want " << w.want;
  }
}

// sin and cos from one reduction (emitSinCosF32) are sin and cos bit for bit, on the inputs
// of the accuracy test (huge arguments, which take the libm block, and specials included).
TEST_P(VectorMath, SinCosPairIsSinAndCos) {
  Compiled* cc = compiled(GetParam());
  if (cc == nullptr) GTEST_SKIP() << "this CPU lacks the ISA";
  for (const char* name : {"sin", "cos"}) {
    const FnCase& fc =
        *std::find_if(cases().begin(), cases().end(), [&](const FnCase& c) { return c.name == std::string(name); });
    std::vector<float> x, y;
    inputsFor(fc, &x, &y);
    for (float huge : {1e5f, 1.5e5f, 3e7f, -1e20f, 1e38f}) x.push_back(huge);
    const std::vector<float> alone = run(cc->kernels.at(fc.fn), x, y);
    const std::vector<float> paired = run(fc.fn == MathFn::kSin ? cc->pairSin : cc->pairCos, x, y);
    size_t differ = 0;
    for (size_t i = 0; i < x.size(); ++i)
      if (std::memcmp(&alone[i], &paired[i], sizeof(float)) != 0 && ++differ <= 3)
        ADD_FAILURE() << name << " at " << cc->lanes << " lanes, x = " << std::hexfloat << x[i] << ": alone "
                      << alone[i] << ", paired " << paired[i];
    EXPECT_EQ(differ, 0u) << name << " over " << x.size() << " inputs";
  }
}

// The exact special values (Annex F), checked one by one so a failure names the case.
TEST_P(VectorMath, SpecialValues) {
  Compiled* cc = compiled(GetParam());
  if (cc == nullptr) GTEST_SKIP() << "this CPU lacks the ISA";
  struct Sv {
    MathFn fn;
    float x, want;
  };
  const Sv table[] = {
      {MathFn::kExp, -kInf, 0},
      {MathFn::kExp, kInf, kInf},
      {MathFn::kExp, 89, kInf},
      {MathFn::kExp, -104, 0},
      {MathFn::kExp, 0, 1},
      {MathFn::kExp, -0.0f, 1},
      {MathFn::kLog, 0, -kInf},
      {MathFn::kLog, -0.0f, -kInf},
      {MathFn::kLog, -1, kNan},
      {MathFn::kLog, kInf, kInf},
      {MathFn::kLog, 1, 0},
      {MathFn::kLog, -kInf, kNan},
      {MathFn::kLog2, 0, -kInf},
      {MathFn::kLog2, 1024, 10},
      {MathFn::kLog2, kDenormMin, -149},
      {MathFn::kLog2, -kDenormMin, kNan},
      {MathFn::kLog1p, -1, -kInf},
      {MathFn::kLog1p, -0.0f, -0.0f},
      {MathFn::kLog1p, -2, kNan},
      {MathFn::kLog1p, kInf, kInf},
      {MathFn::kExpm1, -0.0f, -0.0f},
      {MathFn::kExpm1, -kInf, -1},
      {MathFn::kExpm1, kInf, kInf},
      {MathFn::kExpm1, 100, kInf},
      {MathFn::kTanh, kInf, 1},
      {MathFn::kTanh, -kInf, -1},
      {MathFn::kTanh, -0.0f, -0.0f},
      {MathFn::kErf, kInf, 1},
      {MathFn::kErf, -kInf, -1},
      {MathFn::kErf, -0.0f, -0.0f},
      {MathFn::kSin, kInf, kNan},
      {MathFn::kSin, -kInf, kNan},
      {MathFn::kSin, -0.0f, -0.0f},
      {MathFn::kCos, kInf, kNan},
      {MathFn::kCos, -0.0f, 1},
      {MathFn::kTan, -0.0f, -0.0f},
      {MathFn::kTan, kInf, kNan},
      {MathFn::kSinh, -0.0f, -0.0f},
      {MathFn::kSinh, -kInf, -kInf},
      {MathFn::kSinh, 90, kInf},
      {MathFn::kCosh, -kInf, kInf},
      {MathFn::kCosh, 0, 1},
      {MathFn::kAtan, -0.0f, -0.0f},
      {MathFn::kAtan, kInf, 1.57079637f},
      {MathFn::kAsin, -0.0f, -0.0f},
      {MathFn::kAsin, 1.5f, kNan},
      {MathFn::kAcos, 1, 0},
      {MathFn::kAcos, -1.5f, kNan},
      {MathFn::kAsinh, -0.0f, -0.0f},
      {MathFn::kAsinh, -kInf, -kInf},
      {MathFn::kAcosh, 1, 0},
      {MathFn::kAcosh, 0.5f, kNan},
      {MathFn::kAcosh, kInf, kInf},
      {MathFn::kAtanh, 1, kInf},
      {MathFn::kAtanh, -1, -kInf},
      {MathFn::kAtanh, -0.0f, -0.0f},
      {MathFn::kAtanh, 2, kNan},
  };
  for (const Sv& sv : table) {
    const float xs[] = {sv.x, kNan};
    for (float x : xs) {
      float want = std::isnan(x) ? kNan : sv.want;
      float got = run(cc->kernels.at(sv.fn), {x}, {0.5f})[0];
      bool same = std::isnan(want) ? std::isnan(got) : (got == want && std::signbit(got) == std::signbit(want));
      EXPECT_TRUE(same) << lowering::libmNameF32(sv.fn) << "(" << x << ") = " << got << ", want " << want << " at "
                        << cc->lanes << " lanes";
    }
  }
  // atan2's signed zeros and infinities (Annex F.9.1.4), beside the pairs the 4-ulp test runs.
  const float pi = 3.14159274f, pio2 = 1.57079637f, pio4 = 0.785398185f;
  const float pairs[][3] = {
      {0.0f, 0.0f, 0.0f}, {-0.0f, 0.0f, -0.0f}, {0.0f, -0.0f, pi},  {-0.0f, -0.0f, -pi}, {0.0f, -1, pi},
      {-0.0f, -1, -pi},   {1, 0.0f, pio2},      {-1, -0.0f, -pio2}, {kInf, kInf, pio4},  {-kInf, -kInf, -2.35619449f},
      {1, kInf, 0},       {1, -kInf, pi}};
  for (const auto& p : pairs) {
    float got = run(cc->kernels.at(MathFn::kAtan2), {p[0]}, {p[1]})[0];
    EXPECT_TRUE(got == p[2] && std::signbit(got) == std::signbit(p[2]))
        << "atan2(" << p[0] << ", " << p[1] << ") = " << got << ", want " << p[2];
  }
  // pow's (Annex F.9.4.4), the ones a wrong sign or a 0 * inf would break.
  const float powPairs[][3] = {
      {kNan, 0.0f, 1},    {kNan, -0.0f, 1},     {1, kNan, 1},      {-1, kInf, 1},        {-1, -kInf, 1},
      {0.0f, -3, kInf},   {-0.0f, -3, -kInf},   {-0.0f, -2, kInf}, {-0.0f, -0.5f, kInf}, {-0.0f, 3, -0.0f},
      {-0.0f, 2, 0.0f},   {0.0f, -kInf, kInf},  {0.5f, kInf, 0},   {2, kInf, kInf},      {0.5f, -kInf, kInf},
      {-kInf, -3, -0.0f}, {-kInf, -2, 0.0f},    {-kInf, 3, -kInf}, {-kInf, 0.5f, kInf},  {kInf, -1, 0},
      {-2, 0.5f, kNan},   {-2, 3, -8},          {-2, 2, 4},        {2, 128, kInf},       {2, -149, kDenormMin},
      {2, -150, 0},       {-8, 1.0f / 3, kNan}, {kNan, 1, kNan},   {2, kNan, kNan},      {-1, 16777215, -1}};
  for (const auto& p : powPairs) {
    float got = run(cc->kernels.at(MathFn::kPow), {p[0]}, {p[1]})[0];
    bool same = std::isnan(p[2]) ? std::isnan(got) : (got == p[2] && std::signbit(got) == std::signbit(p[2]));
    EXPECT_TRUE(same) << "pow(" << p[0] << ", " << p[1] << ") = " << got << ", want " << p[2];
  }
}

std::string widthName(const ::testing::TestParamInfo<int>& info) {
  const char* names[] = {"Lanes16", "Lanes8Avx2", "Lanes1"};
  return names[info.param];
}
INSTANTIATE_TEST_SUITE_P(Widths, VectorMath, ::testing::Values(0, 1, 2), widthName);

/// Whether `text` mentions `name` as a whole symbol (not inside a longer identifier).
bool namesSymbol(const std::string& text, const std::string& name) {
  auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_'; };
  for (size_t p = text.find(name); p != std::string::npos; p = text.find(name, p + 1)) {
    bool before = p > 0 && ident(text[p - 1]);
    bool after = p + name.size() < text.size() && ident(text[p + name.size()]);
    if (!before && !after) return true;
  }
  return false;
}

// The generated code really is vectorized at the width asked for, and calls no libm on the
// fast path: the AVX2 build has no zmm register, the AVX-512 build uses them, and only the
// trigonometric slow paths name a libm function.
TEST(VectorMathCode, VectorWidthAndNoLibmCalls) {
  for (int which : {0, 1}) {
    Compiled* cc = compiled(which);
    if (cc == nullptr) continue;
    ASSERT_FALSE(cc->assembly.empty());
    EXPECT_EQ(cc->assembly.find("zmm") != std::string::npos, cc->lanes == 16);
    for (const char* fn : {"expf", "logf", "tanhf", "erff", "expm1f", "log1pf", "atanf", "powf", "atan2f"}) {
      EXPECT_FALSE(namesSymbol(cc->assembly, fn)) << fn;
    }
    EXPECT_TRUE(namesSymbol(cc->assembly, "sinf"));  // the slow path of sin (so the search works)
  }
}

// What emitMathF32 cannot lower is declined with nullptr (the caller then calls libm per
// lane): a non-f32 value, a binary function without its second operand.
TEST(VectorMathCode, DeclinesWhatItDoesNotImplement) {
  llvm::LLVMContext c;
  llvm::Module m("decline", c);
  llvm::IRBuilder<> b(c);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {b.getFloatTy(), b.getDoubleTy()}, false),
                                   llvm::Function::ExternalLinkage, "f", &m);
  b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", f));
  EXPECT_EQ(lowering::emitMathF32(b, MathFn::kPow, f->getArg(0)), nullptr);
  EXPECT_EQ(lowering::emitMathF32(b, MathFn::kExp, f->getArg(1)), nullptr);
  EXPECT_EQ(lowering::emitMathF32(b, MathFn::kAtan2, f->getArg(0)), nullptr);
  EXPECT_NE(lowering::emitMathF32(b, MathFn::kExp, f->getArg(0)), nullptr);
  EXPECT_STREQ(lowering::libmNameF32(MathFn::kAtan2), "atan2f");
}

const FnCase* findCase(const std::string& name) {
  for (const FnCase& fc : cases()) {
    if (name == fc.name) return &fc;
  }
  return nullptr;
}

// exp through a target's approximate 2^t (MathTarget::exp2Intrinsic; the CUDA backend's
// ex2.approx.ftz.f32) checked on the host with LLVM's exp2 (glibc's exp2f, within ~0.5 ulp)
// in its place: the base-2 reduction and the two-step scaling lose at most 0.35 ulp by
// vector_math.cc's reasoning, so the result must stay within 1 ulp here (the GPU's 2 ulp
// approximation then gives 2.85), and the special values, overflow, underflow and denormal
// results must be right, with NaN carried through NaN-propagating clamps (nanMinMax) or
// selected at the end. Scalar and 8 lanes (the intrinsic is called per lane).
TEST(VectorMathCode, ExpThroughATargetExp2) {
  const FnCase* fc = findCase("exp");
  ASSERT_NE(fc, nullptr);
  std::vector<float> x, y;
  inputsFor(*fc, &x, &y);
  for (float v = -104.5f; v < 90.5f; v += 0.0625f) x.push_back(v);  // every binade of the result
  y.resize(x.size(), 0.5f);
  for (bool nanMinMax : {false, true}) {
    for (const char* isaName : {"scalar", "avx2"}) {
      auto isa = selectIsa(hostFeatures(), isaName);
      if (!isa.isOk()) continue;
      const unsigned lanes = std::string(isaName) == "scalar" ? 1 : isa->f32Lanes();
      auto jit = Jit::create(*isa);
      ASSERT_TRUE(jit.isOk()) << jit.status().message();
      llvm::LLVMContext c;
      auto m = std::make_unique<llvm::Module>("exp2", c);
      ASSERT_TRUE((*jit)->prepare(*m).isOk());
      const lowering::MathTarget target{llvm::Intrinsic::exp2, nanMinMax};
      buildKernel(*m, "exp_by_exp2", lanes, false, [&](llvm::IRBuilderBase& b, llvm::Value* v, llvm::Value*) {
        return lowering::emitMathF32(b, MathFn::kExp, v, nullptr, target);
      });
      ASSERT_TRUE((*jit)->optimize(*m, 2).isOk());
      auto asmText = (*jit)->emitAssembly(*m);
      ASSERT_TRUE(asmText.isOk());
      EXPECT_TRUE(namesSymbol(*asmText, "exp2f")) << "the stand-in is called";
      auto obj = (*jit)->emitObject(*m);
      ASSERT_TRUE(obj.isOk()) << obj.status().message();
      auto lo = (*jit)->load(*obj, "exp2", {"exp_by_exp2"});
      ASSERT_TRUE(lo.isOk()) << lo.status().message();
      auto k = reinterpret_cast<Kernel>(*(*lo)->lookup("exp_by_exp2"));
      Worst w = measure(*fc, k, x, y);
      std::printf("exp by exp2 (nanMinMax %d, %u lanes): %zu inputs, max %.3f ulp at %a\n", nanMinMax, lanes, x.size(),
                  w.ulp, w.x);
      EXPECT_LE(w.ulp, 1.0) << "at x = " << std::hexfloat << w.x << ": got " << w.got << ", want " << w.want;
      // PLUGSDK_MATH_EXHAUSTIVE=1: every f32 bit pattern, the GPU's configuration (NaN-
      // propagating clamps, vector lanes), on all threads (a few minutes).
      const char* all = std::getenv("PLUGSDK_MATH_EXHAUSTIVE");
      if (all == nullptr || std::string(all) != "1" || !nanMinMax || lanes == 1) continue;
      const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
      std::vector<Worst> worst(threads);
      std::atomic<uint64_t> next{0};
      constexpr uint64_t kChunk = uint64_t{1} << 20;
      auto work = [&](unsigned th) {
        std::vector<float> in(kChunk), zeros(kChunk, 0.5f), out(kChunk);
        for (uint64_t c; (c = next++) < (uint64_t{1} << 32) / kChunk;) {
          for (uint64_t i = 0; i < kChunk; ++i) in[i] = std::bit_cast<float>(static_cast<uint32_t>(c * kChunk + i));
          k(in.data(), zeros.data(), out.data(), static_cast<int64_t>(kChunk));
          for (uint64_t i = 0; i < kChunk; ++i) {
            const double ref = ::exp(static_cast<double>(in[i]));
            const double e = ulpError(out[i], ref);
            if (!(e <= worst[th].ulp)) worst[th] = {e, in[i], 0, out[i], ref};
          }
        }
      };
      std::vector<std::thread> pool;
      for (unsigned th = 0; th < threads; ++th) pool.emplace_back(work, th);
      for (auto& th : pool) th.join();
      Worst every;
      for (const Worst& v : worst)
        if (!(v.ulp <= every.ulp)) every = v;
      std::printf("EXHAUSTIVE exp by exp2: max %.3f ulp at %a\n", every.ulp, every.x);
      EXPECT_LE(every.ulp, 1.0) << "at x = " << std::hexfloat << every.x << ": got " << every.got;
    }
  }
}

/// Binary functions cannot be run on every pair: 2^28 random pairs instead, half random
/// bit patterns, half from the conformance ranges.
void randomPairs(const FnCase& fc, Compiled* cc, unsigned threads) {
  auto start = std::chrono::steady_clock::now();
  std::vector<Worst> worst(threads);
  const uint64_t chunk = 1 << 20, chunks = 1 << 8;
  std::atomic<uint64_t> nextChunk{0};
  auto work = [&](unsigned t) {
    std::vector<float> x(chunk), y(chunk), out(chunk);
    for (uint64_t c; (c = nextChunk++) < chunks;) {
      std::mt19937 rng(static_cast<uint32_t>(c));
      std::uniform_real_distribution<float> xr(fc.lo, fc.hi), yr(fc.ylo, fc.yhi);
      for (uint64_t i = 0; i < chunk; ++i) {
        bool bitsCase = c % 2 == 0;
        x[i] = bitsCase ? std::bit_cast<float>(static_cast<uint32_t>(rng())) : xr(rng);
        y[i] = bitsCase ? std::bit_cast<float>(static_cast<uint32_t>(rng())) : yr(rng);
      }
      cc->kernels.at(fc.fn)(x.data(), y.data(), out.data(), chunk);
      for (uint64_t i = 0; i < chunk; ++i) {
        double ref = fc.ref2(x[i], y[i]);
        double e = ulpError(out[i], ref);
        if (!(e <= worst[t].ulp)) worst[t] = {e, x[i], y[i], out[i], ref};
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work, t);
  for (auto& th : pool) th.join();
  Worst w;
  for (const Worst& v : worst) {
    if (!(v.ulp <= w.ulp)) w = v;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("RANDOM2^28 %-6s max %.3f ulp at (%a, %a) = (%.9g, %.9g): got %.9g want %.9g (%.0f s, %u lanes)\n",
              fc.name, w.ulp, w.x, w.y, w.x, w.y, w.got, w.want, secs, cc->lanes);
  std::fflush(stdout);
  EXPECT_LE(w.ulp, 4.0) << fc.name;
}

// Every f32 bit pattern through the 16-lane (else 8-lane) kernels, on all threads: the
// table of docs/cpu-math.md. Off unless PLUGSDK_MATH_EXHAUSTIVE=1 (minutes per function).
TEST(VectorMathExhaustive, EveryFloat) {
  const char* on = std::getenv("PLUGSDK_MATH_EXHAUSTIVE");
  if (on == nullptr || std::string(on) != "1") GTEST_SKIP() << "set PLUGSDK_MATH_EXHAUSTIVE=1";
  Compiled* cc = compiled(0) != nullptr ? compiled(0) : compiled(1);
  ASSERT_NE(cc, nullptr);
  std::vector<std::string> names;
  const char* pick = std::getenv("PLUGSDK_MATH_FN");
  if (pick != nullptr) {
    std::string s = pick;
    for (size_t p = 0; p != std::string::npos;) {
      size_t q = s.find(',', p);
      names.push_back(s.substr(p, q == std::string::npos ? q : q - p));
      p = q == std::string::npos ? q : q + 1;
    }
  } else {
    for (const FnCase& fc : cases()) names.push_back(fc.name);
  }
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (const std::string& name : names) {
    const FnCase* fc = findCase(name);
    ASSERT_NE(fc, nullptr) << name;
    if (fc->ref2 != nullptr) {
      randomPairs(*fc, cc, threads);
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    std::vector<Worst> worst(threads);
    std::vector<uint64_t> over1(threads), over2(threads);
    std::atomic<uint64_t> nextChunk{0};
    const uint64_t chunk = 1 << 20;
    auto work = [&](unsigned t) {
      std::vector<float> x(chunk), y(chunk, 0.5f), out(chunk);
      for (uint64_t c; (c = nextChunk++) < (1ull << 32) / chunk;) {
        for (uint64_t i = 0; i < chunk; ++i) x[i] = std::bit_cast<float>(static_cast<uint32_t>(c * chunk + i));
        cc->kernels.at(fc->fn)(x.data(), y.data(), out.data(), chunk);
        for (uint64_t i = 0; i < chunk; ++i) {
          double e = ulpError(out[i], fc->ref1(x[i]));
          if (e > 1) ++over1[t];
          if (e > 2) ++over2[t];
          if (!(e <= worst[t].ulp)) worst[t] = {e, x[i], 0, out[i], fc->ref1(x[i])};
        }
      }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work, t);
    for (auto& th : pool) th.join();
    Worst w;
    uint64_t n1 = 0, n2 = 0;
    for (unsigned t = 0; t < threads; ++t) {
      if (!(worst[t].ulp <= w.ulp)) w = worst[t];
      n1 += over1[t];
      n2 += over2[t];
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf(
        "EXHAUSTIVE %-6s max %.3f ulp at x = %a (%.9g): got %.9g want %.9g; >1 ulp: %llu, >2 ulp: %llu "
        "inputs (%.0f s, %u lanes)\n",
        fc->name, w.ulp, w.x, w.x, w.got, w.want, static_cast<unsigned long long>(n1),
        static_cast<unsigned long long>(n2), secs, cc->lanes);
    std::fflush(stdout);
    EXPECT_LE(w.ulp, 4.0) << fc->name;
  }
}

void benchWidth(Compiled* cc);

// ns per element of the 16-lane (and 8-lane) kernels against glibc's scalar f32 functions, one thread,
// on 2^16 elements in cache. Off unless PLUGSDK_MATH_BENCH=1.
TEST(VectorMathBench, Throughput) {
  const char* on = std::getenv("PLUGSDK_MATH_BENCH");
  if (on == nullptr || std::string(on) != "1") GTEST_SKIP() << "set PLUGSDK_MATH_BENCH=1";
  for (int which : {0, 1}) {
    if (compiled(which) != nullptr) benchWidth(compiled(which));
  }
}

void benchWidth(Compiled* cc) {
  const size_t n = 1 << 16;
  const int reps = 200;
  struct B {
    MathFn fn;
    const char* name;
    float (*libm)(float);
    float lo, hi;
  };
  const B benches[] = {{MathFn::kExp, "exp", ::expf, -80, 80},   {MathFn::kLog, "log", ::logf, 1e-3f, 1e3f},
                       {MathFn::kSin, "sin", ::sinf, -100, 100}, {MathFn::kCos, "cos", ::cosf, -100, 100},
                       {MathFn::kTanh, "tanh", ::tanhf, -5, 5},  {MathFn::kErf, "erf", ::erff, -3, 3}};
  for (const B& bench : benches) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(bench.lo, bench.hi);
    std::vector<float> x(n), y(n, 0.5f), out(n);
    for (float& v : x) v = d(rng);
    Kernel k = cc->kernels.at(bench.fn);
    k(x.data(), y.data(), out.data(), n);
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) k(x.data(), y.data(), out.data(), n);
    auto t1 = std::chrono::steady_clock::now();
    float (*volatile lib)(float) = bench.libm;  // an opaque call, as the per-lane fallback is
    for (int r = 0; r < reps; ++r) {
      for (size_t i = 0; i < n; ++i) out[i] = lib(x[i]);
    }
    auto t2 = std::chrono::steady_clock::now();
    double vec = std::chrono::duration<double, std::nano>(t1 - t0).count() / (double(n) * reps);
    double sca = std::chrono::duration<double, std::nano>(t2 - t1).count() / (double(n) * reps);
    std::printf("BENCH %-5s %u lanes: %.3f ns/element; glibc %sf scalar: %.3f ns/element (%.1fx)\n", bench.name,
                cc->lanes, vec, bench.name, sca, sca / vec);
    EXPECT_GT(sca, 0);
  }
}

}  // namespace
}  // namespace plugsdk::cpu
