// Helpers shared by the `plugsdk` commands (main.cc, report.cc).
#pragma once

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/exec/host_tensor.h"
#include "core/ir/context.h"
#include "core/ir/tensor_type.h"
#include "core/support/status.h"

namespace plugsdk::cli {

extern const char* kUsage;

inline int fail(const Status& s) {
  std::fprintf(stderr, "plugsdk: error: %s\n", s.toString().c_str());
  return 1;
}

inline int usageError(const std::string& msg) {
  std::fprintf(stderr, "plugsdk: %s\n\n%s", msg.c_str(), kUsage);
  return 2;
}

inline exec::HostTensor randomTensor(const ir::TensorType& type, const std::vector<int64_t>& shape,
                                     std::mt19937_64& rng) {
  exec::HostTensor t(type.dtype, shape);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int64_t> ints(type.dtype == ir::DType::kU8 ? 0 : -10, 9);
  std::uniform_int_distribution<int64_t> bits(0, 1);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.isFloating())
      t.setDouble(i, exec::roundToFloatType(normal(rng), type.dtype));
    else if (type.dtype == ir::DType::kBool)
      t.setInt(i, bits(rng));
    else
      t.setInt(i, ints(rng));
  }
  return t;
}

/// `plugsdk report FILE...`: kernels and memory per stage, program vs reference (report.cc).
int cmdReport(const std::vector<std::string>& args);

/// `plugsdk autograd FILE`: training graphs, saved bytes, stage times (autograd.cc).
int cmdAutograd(const ir::Context& ctx, const std::vector<std::string>& args);

}  // namespace plugsdk::cli
