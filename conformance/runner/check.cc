// Device vs reference: see check.h.
#include "conformance/runner/check.h"

#include <cmath>
#include <random>

#include "core/exec/reference_executor.h"
#include "core/plugin/device_program.h"

namespace plugsdk::conformance {
namespace {

/// Mantissa bits and the smallest normal exponent of each floating dtype.
std::pair<int, int> floatFormat(ir::DType t) {
  switch (t) {
    case ir::DType::kF16: return {10, -14};
    case ir::DType::kBF16: return {7, -126};
    case ir::DType::kF32: return {23, -126};
    default: return {52, -1022};
  }
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

double ulpOf(double v, ir::DType dtype) {
  const auto [mantissa, minExp] = floatFormat(dtype);
  const double a = std::fabs(v);
  int e = a > 0 && std::isfinite(a) ? std::ilogb(a) : minExp;
  e = std::max(e, minExp);
  return std::ldexp(1.0, e - mantissa);
}

Outcome compareOutputs(const std::vector<exec::HostTensor>& got, const std::vector<exec::HostTensor>& want,
                       const std::vector<Tolerance>& tolerances) {
  if (got.size() != want.size())
    return Outcome::fail("the device returned " + std::to_string(got.size()) + " outputs, the reference " +
                         std::to_string(want.size()));
  double worstRatio = -1, worstErr = 0, worstBound = 0;
  for (size_t o = 0; o < want.size(); ++o) {
    const exec::HostTensor &x = got[o], &y = want[o];
    const std::string where = "output " + std::to_string(o);
    if (x.shape() != y.shape())
      return Outcome::fail(where + " is " + x.typeString() + ", the reference " + y.typeString());
    const Tolerance& tol = tolerances.size() == 1 ? tolerances[0] : tolerances.at(o);
    if (!y.isFloating()) {
      for (int64_t i = 0; i < y.numel(); ++i)
        if (x.getInt(i) != y.getInt(i))
          return Outcome::fail(where + " element " + std::to_string(i) + ": " + std::to_string(x.getInt(i)) +
                               " vs reference " + std::to_string(y.getInt(i)) + " (integers must be exact)");
      worstRatio = std::max(worstRatio, 0.0);
      continue;
    }
    const bool exact = tol.ulps == 0 && tol.scaled == 0 && tol.bound.empty();
    double scale = 1;
    for (int64_t i = 0; i < y.numel(); ++i)
      if (std::isfinite(y.getDouble(i))) scale = std::max(scale, std::fabs(y.getDouble(i)));
    for (int64_t i = 0; i < y.numel(); ++i) {
      const double a = x.getDouble(i), b = exec::roundToFloatType(y.getDouble(i), y.dtype());
      const std::string at = where + " element " + std::to_string(i) + ": " + num(a) + " vs reference " + num(b);
      if (std::isnan(a) || std::isnan(b)) {
        if (std::isnan(a) != std::isnan(b)) return Outcome::fail(at + " (NaN differs)");
        continue;
      }
      if (std::isinf(a) || std::isinf(b)) {
        if (a != b) return Outcome::fail(at + " (infinity differs)");
        continue;
      }
      const double err = std::fabs(a - b);
      double bound = std::max(tol.ulps * ulpOf(b, y.dtype()), tol.scaled * scale);
      if (!tol.bound.empty()) bound = std::max(bound, tol.bound.at(static_cast<size_t>(i)));
      if (exact && (err != 0 || std::signbit(a) != std::signbit(b)))
        return Outcome::fail(at + (err == 0 ? " (the sign of zero differs; this op is exact)" : " (this op is exact)"));
      if (err > bound) {
        Outcome f = Outcome::fail(at + ": error " + num(err) + " > bound " + num(bound) +
                                  (tol.ulps ? " (" + num(tol.ulps) + " ulp)" : ""));
        f.maxError = err;
        f.bound = bound;
        return f;
      }
      const double ratio = bound > 0 ? err / bound : 0;
      if (ratio > worstRatio) worstRatio = ratio, worstErr = err, worstBound = bound;
    }
  }
  Outcome p = Outcome::pass();
  p.maxError = worstErr;
  p.bound = worstBound;
  return p;
}

std::optional<ir::DType> unclaimedDtype(const plugin::DeviceCaps& caps, const ir::Graph& g) {
  for (const ir::Value* v : g.inputs())
    if (!caps.supports(v->type().dtype)) return v->type().dtype;
  for (const auto& n : g.nodes())
    for (const ir::Value* v : n->outputs())
      if (!caps.supports(v->type().dtype)) return v->type().dtype;
  return std::nullopt;
}

std::vector<std::vector<int64_t>> concreteShapes(const ir::Graph& g, const std::map<std::string, int64_t>& sizes) {
  std::vector<std::vector<int64_t>> out;
  for (const ir::Value* v : g.inputs()) {
    std::vector<int64_t> shape;
    for (const auto& d : v->type().shape) {
      std::map<std::string, int64_t> env = sizes;
      for (const std::string& s : d.symbols()) env.emplace(s, 1);
      shape.push_back(d.evaluate(env).value_or(1));
    }
    out.push_back(std::move(shape));
  }
  return out;
}

std::vector<exec::HostTensor> randomInputs(const ir::Graph& g, uint64_t seed,
                                           const std::map<std::string, int64_t>& sizes) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> positive(0.5, 1.5);
  const auto shapes = concreteShapes(g, sizes);
  std::vector<exec::HostTensor> out;
  for (size_t k = 0; k < shapes.size(); ++k) {
    const ir::DType dt = g.inputs()[k]->type().dtype;
    exec::HostTensor t(dt, shapes[k]);
    const bool param = shapes[k].size() == 1;
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (t.isFloating())
        t.setDouble(i, exec::roundToFloatType(param ? positive(rng) : normal(rng), dt));
      else
        t.setInt(i, static_cast<int64_t>(rng() % 3));
    }
    out.push_back(std::move(t));
  }
  return out;
}

StatusOr<std::vector<exec::HostTensor>> runOnDevice(const plugin::Device& device, const ir::Context& ctx,
                                                    const ir::Graph& g, const std::vector<exec::HostTensor>& inputs,
                                                    const compile::CompileOptions* options,
                                                    compile::Compiled* compiled) {
  const compile::CompileOptions opts = options ? *options : plugin::optionsFor(device.caps());
  ASSIGN_OR_RETURN(compile::Compiled c, compile::compileGraph(ctx, g, opts));
  ASSIGN_OR_RETURN(auto program, plugin::DeviceProgram::compile(device, c.program));
  ASSIGN_OR_RETURN(std::vector<exec::HostTensor> out, program->run(inputs, {.poison = true}));
  if (compiled) *compiled = std::move(c);
  return out;
}

std::string graphWithDtype(std::string text, const std::string& dtype) {
  for (size_t p = 0; (p = text.find("DT", p)) != std::string::npos; p += dtype.size()) text.replace(p, 2, dtype);
  return text;
}

std::optional<Outcome> skipUnclaimed(const CaseContext& c, const ir::Graph& g) {
  plugin::DeviceCaps claimed = c.device.caps();
  claimed.dtypes &= c.dtypes;
  if (auto t = unclaimedDtype(claimed, g))
    return Outcome::skip(
        (c.device.caps().supports(*t) ? "the backend's expectations do not claim " : "the device does not claim ") +
        std::string(ir::dtypeName(*t)));
  return std::nullopt;
}

Outcome checkGraph(const CaseContext& c, const std::shared_ptr<const ir::Context>& ctx, const ir::Graph& g,
                   const std::vector<exec::HostTensor>& inputs, const std::vector<Tolerance>& tolerances) {
  if (auto skip = skipUnclaimed(c, g)) return *skip;
  auto got = runOnDevice(c.device, *ctx, g, inputs);
  if (!got.isOk()) return Outcome::of(got.status());
  auto want = exec::ReferenceExecutor(ctx).run(g, inputs);
  if (!want.isOk()) return Outcome::fail("the reference executor failed: " + want.status().toString());
  return compareOutputs(*got, *want, tolerances);
}

}  // namespace plugsdk::conformance
