// The kernel IR in the ABI's flat encoding (plugsdk_kernel_t: arrays of statements and
// postfix index programs), and back. The encoded form owns its storage; plugins receive a
// borrowed plugsdk_kernel_t for the duration of compile_kernel.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/kernel/kernel_ir.h"
#include "core/support/status.h"
#include "plugsdk/plugsdk.h"

namespace plugsdk::plugin {

class EncodedKernel {
 public:
  const plugsdk_kernel_t& get() const { return kernel_; }

 private:
  friend StatusOr<std::unique_ptr<EncodedKernel>> encodeKernel(const kernel::Kernel& k);
  plugsdk_kernel_t kernel_{};
  std::string name_, text_;
  std::vector<std::string> argNames_, symbols_, messages_;
  std::vector<const char*> symbolPtrs_;
  std::vector<plugsdk_kernel_arg_t> args_;
  std::vector<plugsdk_index_expr_t> grid_, loopSizes_;
  std::vector<plugsdk_stmt_t> stmts_;
  std::vector<plugsdk_index_insn_t> insns_;
};

/// Encodes a verified kernel.
StatusOr<std::unique_ptr<EncodedKernel>> encodeKernel(const kernel::Kernel& k);
/// Decodes (what a C++ plugin may use); validates sizes, ranges and the result's IR.
StatusOr<kernel::Kernel> decodeKernel(const plugsdk_kernel_t& k);

}  // namespace plugsdk::plugin
