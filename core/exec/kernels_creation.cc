// Reference kernels for the creation ops. Values are rounded to the output dtype as
// PyTorch stores them (a float32 full(0.1) holds float32(0.1)); empty* ops give zeros.
#include <cmath>

#include "core/exec/kernels.h"
#include "core/exec/kernels_shape_util.h"

namespace plugsdk::exec {

using namespace shape_kernels;

namespace {

using Outs = StatusOr<std::vector<HostTensor>>;

Outs zerosKernel(const RefKernelContext& ctx) { return std::vector<HostTensor>{ctx.makeOutput()}; }

Outs fillKernel(const RefKernelContext& ctx, const ir::Attribute& value) {
  HostTensor out = ctx.makeOutput();
  fillWith(out, scalarAs(value, out.dtype()));
  return std::vector<HostTensor>{std::move(out)};
}

const ir::Attribute& oneAttr() {
  static const ir::Attribute kOne = ir::Attribute::fromInt(1);
  return kOne;
}

double scalarDouble(const ir::Attribute& a) {
  if (auto b = a.asBool()) return *b ? 1.0 : 0.0;
  return a.asDouble().value_or(0.0);
}

/// Scalar::to<int64_t>: integers exactly, floats truncated toward zero.
int64_t scalarInt(const ir::Attribute& a) {
  if (auto i = a.asInt()) return *i;
  if (auto b = a.asBool()) return *b ? 1 : 0;
  return doubleToIntType(a.asDouble().value_or(0.0), DType::kI64);
}

int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

Outs arangeKernel(const RefKernelContext& ctx) {
  HostTensor out = ctx.makeOutput();
  bool hasStart = ctx.schema().findArg("start") != nullptr, hasStep = ctx.schema().findArg("step") != nullptr;
  static const ir::Attribute kZero = ir::Attribute::fromInt(0);
  const ir::Attribute& start = hasStart ? ctx.attr("start") : kZero;
  const ir::Attribute& step = hasStep ? ctx.attr("step") : oneAttr();
  DType dt = out.dtype();
  int64_t n = out.numel();
  if (out.isFloating()) {
    // PyTorch's CPU accumulate type: double for float32/float64, float for float16/bfloat16.
    bool narrow = dt == DType::kF16 || dt == DType::kBF16;
    double s = scalarDouble(start), st = scalarDouble(step);
    for (int64_t i = 0; i < n; ++i) {
      double v = narrow ? static_cast<double>(static_cast<float>(s) + static_cast<float>(st) * static_cast<float>(i))
                        : s + st * static_cast<double>(i);
      out.doubles()[static_cast<size_t>(i)] = roundToFloatType(v, dt);
    }
  } else {
    int64_t s = scalarInt(start), st = scalarInt(step);
    for (int64_t i = 0; i < n; ++i) out.setInt(i, wrapAdd(s, wrapMul(st, i)));
  }
  return std::vector<HostTensor>{std::move(out)};
}

Outs linspaceKernel(const RefKernelContext& ctx) {
  HostTensor out = ctx.makeOutput();
  int64_t steps = out.numel();
  const ir::Attribute& a = ctx.attr("start");
  const ir::Attribute& b = ctx.attr("end");
  if (steps == 0) return std::vector<HostTensor>{std::move(out)};
  if (steps == 1) return fillKernel(ctx, a);
  DType dt = out.dtype();
  // Integral outputs: start and end converted to the dtype, a double step, values truncated.
  // Floating outputs: computed in float64 here (PyTorch uses the dtype's own arithmetic).
  double s = out.isFloating() ? scalarDouble(a) : static_cast<double>(wrapToIntType(scalarInt(a), dt));
  double e = out.isFloating() ? scalarDouble(b) : static_cast<double>(wrapToIntType(scalarInt(b), dt));
  double step = (e - s) / static_cast<double>(steps - 1);
  int64_t halfway = steps / 2;
  for (int64_t i = 0; i < steps; ++i) {
    double v = i < halfway ? s + step * static_cast<double>(i) : e - step * static_cast<double>(steps - i - 1);
    if (out.isFloating())
      out.doubles()[static_cast<size_t>(i)] = roundToFloatType(v, dt);
    else
      out.setDouble(i, v);
  }
  return std::vector<HostTensor>{std::move(out)};
}

}  // namespace

void registerCreationKernels(RefKernelTable& t) {
  for (const char* op : {"aten.zeros", "aten.empty.memory_format", "aten.zeros_like", "aten.empty_like",
                         "aten.new_zeros", "aten.new_empty"})
    t.add(op, zerosKernel);
  for (const char* op : {"aten.ones", "aten.ones_like", "aten.new_ones"})
    t.add(op, [](const RefKernelContext& ctx) { return fillKernel(ctx, oneAttr()); });
  for (const char* op : {"aten.full", "aten.full_like", "aten.new_full"})
    t.add(op, [](const RefKernelContext& ctx) { return fillKernel(ctx, ctx.attr("fill_value")); });
  t.add("aten.scalar_tensor", [](const RefKernelContext& ctx) { return fillKernel(ctx, ctx.attr("s")); });
  t.add("aten.arange", arangeKernel);
  t.add("aten.arange.start", arangeKernel);
  t.add("aten.arange.start_step", arangeKernel);
  t.add("aten.linspace", linspaceKernel);
}

}  // namespace plugsdk::exec
