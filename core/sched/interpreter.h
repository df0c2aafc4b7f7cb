// The program interpreter: runs a scheduled Program on the host with the reference's
// numerics -- kernels through the kernel interpreter, library calls through the prims'
// reference kernels on gathered strided views -- so graph -> prims -> program can be
// checked against the reference executor stage by stage. It also checks the memory plan on
// the arena's byte ranges: reading a temporary after another was written over its bytes, two
// results of one step overlapping, a result overlapping an operand of its step other than by
// an in-place update, or an in-place update that changes what the kernel computes (checked
// by running it both on private copies and on the shared memory) is an error.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/exec/host_tensor.h"
#include "core/ir/context.h"
#include "core/sched/program.h"

namespace plugsdk::sched {

/// Binds the program's size symbols from the inputs' shapes and checks every input's dtype,
/// rank and dims against the program (errors name the input and the dim).
StatusOr<std::map<std::string, int64_t>> bindInputs(const Program& p, const std::vector<exec::HostTensor>& inputs);

/// An input's dtype and concrete shape (a tensor the program does not hold itself).
struct InputShape {
  ir::DType dtype = ir::DType::kF32;
  std::vector<int64_t> shape;
};
StatusOr<std::map<std::string, int64_t>> bindInputs(const Program& p, const std::vector<InputShape>& inputs);

class ProgramInterpreter {
 public:
  explicit ProgramInterpreter(std::shared_ptr<const ir::Context> ctx);
  ~ProgramInterpreter();
  /// Runs `p` on logical (contiguous) input values; returns the outputs.
  StatusOr<std::vector<exec::HostTensor>> run(const Program& p, const std::vector<exec::HostTensor>& inputs) const;

  struct Impl;  ///< the reference kernels for library calls (interpreter.cc)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace plugsdk::sched
