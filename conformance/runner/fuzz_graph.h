// The graph fuzzer's generator: seeded random ATen-level graphs, as .pgraph text, that a
// correct device computes within the fuzz tolerance (fuzzTolerance in fuzz_check.h). What it
// covers and why each op is shaped the way it is: docs/conformance.md, "The graph fuzzer".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/ir/dtype.h"
#include "core/plugin/device.h"

namespace plugsdk::conformance {

/// Bounds on a generated graph. The defaults keep one graph to a few milliseconds on a
/// host-interpreting plugin.
struct FuzzOptions {
  int minOps = 3;  ///< ops drawn per graph (helper nodes such as abs before log come on top)
  int maxOps = 14;
  int maxInputs = 4;                   ///< 1..maxInputs graph inputs
  int64_t maxElements = 2048;          ///< no value of the graph has more elements
  bool matmul = true;                  ///< occasionally aten.mm / aten.bmm
  std::optional<ir::DType> floatType;  ///< the graph's float dtype (default: drawn among the claimed ones)
};

/// A random, well-typed ATen-level graph (with every output type written, so the parser
/// checks the generator's own shape and dtype bookkeeping against the core's inference).
/// Only dtypes `caps` claims are used. The same seed, caps and options give the same text.
std::string randomGraph(uint64_t seed, const plugin::DeviceCaps& caps, const FuzzOptions& options = {});

}  // namespace plugsdk::conformance
