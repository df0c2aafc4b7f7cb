// gradcheck: random inputs and tangents, the joint graph's gradients, central differences.
#include "core/autograd/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "core/autograd/partition.h"
#include "core/exec/reference_executor.h"

namespace plugsdk::autograd {
namespace {

StatusOr<std::vector<int64_t>> constantShape(const ir::Value& v) {
  std::vector<int64_t> shape;
  for (const ir::SymExpr& d : v.type().shape) {
    auto c = d.constant();
    if (!c)
      return invalidArgument("gradcheck: input %" + v.name() + " has a symbolic size (" + v.type().toString() + ")");
    shape.push_back(*c);
  }
  return shape;
}

/// sum_j <tangent_j, output_{tangentOf[j]}>
double pairing(const std::vector<exec::HostTensor>& outs, const std::vector<exec::HostTensor>& tangents,
               const std::vector<int>& tangentOf) {
  double s = 0;
  for (size_t j = 0; j < tangents.size(); ++j) {
    const exec::HostTensor& o = outs.at(static_cast<size_t>(tangentOf[j]));
    for (int64_t k = 0; k < o.numel(); ++k) s += tangents[j].getDouble(k) * o.getDouble(k);
  }
  return s;
}

}  // namespace

StatusOr<GradcheckResult> gradcheck(const std::shared_ptr<const ir::Context>& ctx, const ir::Graph& prims,
                                    const GradcheckOptions& options) {
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> uniform(options.lo, options.hi), unit(-1.0, 1.0);
  std::vector<exec::HostTensor> inputs;
  JointSpec spec;
  for (size_t i = 0; i < prims.inputs().size(); ++i) {
    const ir::Value& in = *prims.inputs()[i];
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, constantShape(in));
    exec::HostTensor t(in.type().dtype, shape);
    auto fixed = options.fixed.find(i);
    if (fixed != options.fixed.end()) {
      if (static_cast<int64_t>(fixed->second.size()) != t.numel())
        return invalidArgument("gradcheck: " + std::to_string(fixed->second.size()) + " fixed values for %" +
                               in.name() + " of " + std::to_string(t.numel()) + " elements");
      for (int64_t k = 0; k < t.numel(); ++k) t.setDouble(k, fixed->second[static_cast<size_t>(k)]);
    } else if (t.isFloating()) {
      for (int64_t k = 0; k < t.numel(); ++k) t.setDouble(k, uniform(rng));
    } else {
      return invalidArgument("gradcheck: integer input %" + in.name() + " needs fixed values");
    }
    spec.requiresGrad.push_back(t.isFloating() && !options.noGrad.count(i));
    inputs.push_back(std::move(t));
  }
  const VjpTable defaults = options.table ? VjpTable() : makeVjpTable();
  ASSIGN_OR_RETURN(JointGraph joint, buildJoint(*ctx, prims, spec, options.table ? *options.table : defaults));
  std::vector<exec::HostTensor> tangents, jointInputs = inputs;
  for (size_t j = 0; j < joint.tangentOf.size(); ++j) {
    const ir::Value& t = *joint.graph.inputs()[joint.numForwardInputs + j];
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, constantShape(t));
    exec::HostTensor v(t.type().dtype, shape);
    for (int64_t k = 0; k < v.numel(); ++k) v.setDouble(k, unit(rng));
    tangents.push_back(v);
    jointInputs.push_back(std::move(v));
  }
  exec::ReferenceExecutor ex(ctx);
  ASSIGN_OR_RETURN(std::vector<exec::HostTensor> jointOut, ex.run(joint.graph, jointInputs));

  GradcheckResult r;
  // The partitioned programs (with and without recomputation) reproduce the joint graph.
  for (bool recompute : {true, false}) {
    PartitionOptions po;
    po.recompute = recompute;
    ASSIGN_OR_RETURN(TrainingGraphs t, partitionJoint(*ctx, joint, po));
    ASSIGN_OR_RETURN(std::vector<exec::HostTensor> fw, ex.run(t.forward, inputs));
    std::vector<exec::HostTensor> bwIn;
    for (int i : t.savedInputs) bwIn.push_back(inputs.at(static_cast<size_t>(i)));
    bwIn.insert(bwIn.end(), fw.begin() + static_cast<std::ptrdiff_t>(t.numForwardOutputs), fw.end());
    bwIn.insert(bwIn.end(), tangents.begin(), tangents.end());
    std::vector<exec::HostTensor> bw;
    if (!t.gradOf.empty()) {
      ASSIGN_OR_RETURN(bw, ex.run(t.backward, bwIn));
    }
    fw.resize(t.numForwardOutputs);
    fw.insert(fw.end(), bw.begin(), bw.end());
    for (size_t o = 0; o < fw.size() && r.ok; ++o)
      for (int64_t k = 0; k < fw[o].numel() && r.ok; ++k) {
        const double a = fw[o].getDouble(k), b = jointOut.at(o).getDouble(k);
        if (!(std::fabs(a - b) <= 1e-12 * (1 + std::fabs(b))) && !(std::isnan(a) && std::isnan(b))) {
          r.ok = false;
          r.failure = std::string("the partitioned programs (") + (recompute ? "min cut" : "no recomputation") +
                      ") disagree with the joint graph at output " + std::to_string(o) + "[" + std::to_string(k) +
                      "]: " + std::to_string(a) + " vs " + std::to_string(b);
        }
      }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!spec.requiresGrad[i]) continue;
    const exec::HostTensor* analytic = nullptr;
    for (size_t j = 0; j < joint.gradOf.size(); ++j)
      if (joint.gradOf[j] == static_cast<int>(i)) analytic = &jointOut.at(joint.numForwardOutputs + j);
    const int64_t n = inputs[i].numel();
    const int64_t every = std::max<int64_t>(1, n / std::max<int64_t>(1, options.maxElements));
    for (int64_t k = 0; k < n; k += every) {
      std::vector<exec::HostTensor> plus = inputs, minus = inputs;
      const double x = inputs[i].getDouble(k), h = options.step * std::max(1.0, std::fabs(x));
      plus[i].setDouble(k, x + h);
      minus[i].setDouble(k, x - h);
      ASSIGN_OR_RETURN(std::vector<exec::HostTensor> up, ex.run(prims, plus));
      ASSIGN_OR_RETURN(std::vector<exec::HostTensor> down, ex.run(prims, minus));
      const double numeric =
          (pairing(up, tangents, joint.tangentOf) - pairing(down, tangents, joint.tangentOf)) / (2 * h);
      const double a = analytic ? analytic->getDouble(k) : 0.0;
      const double err = std::fabs(a - numeric);
      ++r.checked;
      r.maxAbsError = std::max(r.maxAbsError, std::isnan(err) ? INFINITY : err);
      if (r.ok && !(err <= options.atol + options.rtol * std::fabs(numeric))) {
        std::ostringstream m;
        m.precision(10);
        m << "d/d%" << prims.inputs()[i]->name() << "[" << k << "] at " << x << ": analytic " << a
          << (analytic ? "" : " (no gradient output)") << ", finite differences " << numeric;
        r.ok = false;
        r.failure = m.str();
      }
    }
  }
  return r;
}

}  // namespace plugsdk::autograd
