// The kernel IR in the ABI's flat encoding (plugsdk_kernel_t: arrays of statements and
// postfix index programs), and back. The encoded form owns its storage; plugins receive a
// borrowed plugsdk_kernel_t for the duration of compile_kernel.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/attribute.h"
#include "core/kernel/kernel_ir.h"
#include "core/support/status.h"
#include "plugsdk/plugsdk.h"

namespace plugsdk::plugin {

/// A strided operand of a library call (elements); dtype nullopt: an absent optional input.
struct LibraryOperand {
  std::optional<ir::DType> dtype;
  std::vector<ir::SymExpr> shape, strides;
  ir::SymExpr offset;
};

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

/// A library call's operands as ABI tensor descriptors over one pool of index programs,
/// with its attributes in .pgraph syntax; the layout plugsdk_compile_library_args_t borrows.
class EncodedLibraryCall {
 public:
  uint32_t op = 0;  ///< plugsdk_library_op_t bit
  std::string attributes;
  std::vector<plugsdk_tensor_desc_t> inputs, outputs;
  std::vector<plugsdk_index_insn_t> insns;
  std::vector<std::string> symbols;
  std::vector<const char*> symbolPtrs;

 private:
  friend StatusOr<std::unique_ptr<EncodedLibraryCall>> encodeLibraryCall(const std::string&, const ir::AttrMap&,
                                                                         const std::vector<LibraryOperand>&,
                                                                         const std::vector<LibraryOperand>&);
  std::vector<std::vector<plugsdk_index_expr_t>> exprs_;  // sizes and strides per descriptor
};

/// The ABI bit of a library prim ("prims.matmul" -> PLUGSDK_LIBRARY_MATMUL), 0 if none.
uint32_t libraryOpBit(const std::string& prim);

/// Encodes `op` ("prims.matmul", ...) on strided operands (an absent optional input has
/// dtype nullopt): descriptors point into the result's own storage.
StatusOr<std::unique_ptr<EncodedLibraryCall>> encodeLibraryCall(const std::string& op, const ir::AttrMap& attrs,
                                                                const std::vector<LibraryOperand>& inputs,
                                                                const std::vector<LibraryOperand>& outputs);

/// Encodes a verified kernel.
StatusOr<std::unique_ptr<EncodedKernel>> encodeKernel(const kernel::Kernel& k);
/// Decodes (what a C++ plugin may use); validates sizes, ranges and the result's IR.
StatusOr<kernel::Kernel> decodeKernel(const plugsdk_kernel_t& k);

}  // namespace plugsdk::plugin
