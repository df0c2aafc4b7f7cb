// The scheduler's output, and exactly what a backend receives: an ordered list of kernel
// launches and library-op calls over flat buffers, with the inputs, outputs and size symbols
// it takes and a memory plan for its temporaries.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ir/attribute.h"
#include "core/ir/tensor_type.h"
#include "core/kernel/kernel_ir.h"

namespace plugsdk::sched {

using ir::DType;
using ir::Shape;
using ir::SymExpr;

enum class BufferRole { kInput, kOutput, kTemp };

/// Flat storage of `numel` elements of `dtype`. Temporaries live in one arena at `offset`
/// bytes (the memory plan); inputs and outputs are provided by the caller.
struct Buffer {
  std::string name;
  DType dtype = DType::kF32;
  SymExpr numel;
  BufferRole role = BufferRole::kTemp;
  SymExpr offset;  ///< temps: byte offset in the arena
  int slot = -1;   ///< temps: arena slot (buffers sharing a slot reuse its memory)
};

/// A strided view of a buffer (elements): how library ops see their operands.
struct View {
  int buffer = -1;
  Shape shape;
  Shape strides;
  SymExpr offset;
};

/// A library op (prims.matmul / prims.convolution / prims.sdpa) on views. With an epilogue,
/// result 0 is not stored: the epilogue kernel reads it through its accumulator argument at
/// the row-major position of each element and writes the real output(s).
struct LibraryCall {
  std::string op;
  ir::AttrMap attrs;
  std::vector<std::optional<View>> inputs;  ///< nullopt: an absent optional input
  std::vector<View> outputs;                ///< contiguous views of the result buffers
  int epilogue = -1;                        ///< kernel index, or -1
  std::vector<int> epilogueArgs;            ///< buffer per epilogue argument (-1 for the accumulator)
};

struct Launch {
  int kernel = -1;
  std::vector<int> args;  ///< buffer per kernel argument
};

struct Step {
  enum class Kind { kLaunch, kCall } kind = Kind::kLaunch;
  Launch launch;
  LibraryCall call;
  std::string origin;               ///< the prim values it stores or keeps ("%7, %9"), for dumps and errors
  std::vector<std::string> values;  ///< names of every prim value computed in it (fused ones included)
};

struct ProgramInput {
  std::string name;
  int buffer = -1;
  ir::TensorType type;  ///< explicit strides are read as given
};

struct ProgramOutput {
  std::string name;
  int buffer = -1;
  Shape shape;  ///< contiguous
};

struct Program {
  std::string name;
  std::vector<Buffer> buffers;
  std::vector<ProgramInput> inputs;
  std::vector<ProgramOutput> outputs;
  std::vector<kernel::Kernel> kernels;
  std::vector<Step> steps;
  SymExpr arenaBytes;                ///< the memory plan's arena size
  std::vector<std::string> symbols;  ///< size symbols, bound from input shapes at run time

  int numLaunches() const;
  int numCalls() const;
};

/// Bytes of one element.
int64_t dtypeBytes(DType t);

/// The text form (dumps, golden tests): buffers, kernels, then the steps.
std::string printProgram(const Program& p);

}  // namespace plugsdk::sched
