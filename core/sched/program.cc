// The Program's text form.
#include "core/sched/program.h"

#include "core/kernel/kernel_text.h"

namespace plugsdk::sched {

int64_t dtypeBytes(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kU8:
    case DType::kI8: return 1;
    case DType::kI16:
    case DType::kF16:
    case DType::kBF16: return 2;
    case DType::kI32:
    case DType::kF32: return 4;
    case DType::kI64:
    case DType::kF64: return 8;
  }
  return 8;
}

namespace {

const char* roleName(BufferRole r) {
  switch (r) {
    case BufferRole::kInput: return "input";
    case BufferRole::kOutput: return "output";
    case BufferRole::kTemp: return "temp";
  }
  return "?";
}

std::string list(const Shape& s) { return ir::shapeToString(s); }

std::string bufferRef(const Program& p, int b) {
  return b < 0 ? "%<acc>" : "%" + p.buffers[static_cast<size_t>(b)].name;
}

std::string viewText(const Program& p, const View& v) {
  std::string s = bufferRef(p, v.buffer) + list(v.shape);
  if (v.strides != ir::contiguousStrides(v.shape)) s += " strides " + list(v.strides);
  if (v.offset != SymExpr(0)) s += " offset " + v.offset.toString();
  return s;
}

}  // namespace

std::string printProgram(const Program& p) {
  std::string out = "program @" + p.name + "(";
  for (size_t i = 0; i < p.inputs.size(); ++i)
    out += (i ? ", %" : "%") + p.inputs[i].name + ": " + p.inputs[i].type.toString();
  out += ") -> (";
  for (size_t i = 0; i < p.outputs.size(); ++i)
    out += (i ? ", %" : "%") + p.buffers[static_cast<size_t>(p.outputs[i].buffer)].name + list(p.outputs[i].shape);
  out += ") {\n";
  for (const Buffer& b : p.buffers) {
    out += "  buffer %" + b.name + ": " + std::string(ir::dtypeName(b.dtype)) + "[" + b.numel.toString() + "] " +
           roleName(b.role);
    if (b.role == BufferRole::kTemp) out += " slot " + std::to_string(b.slot) + " offset " + b.offset.toString();
    out += "\n";
  }
  out += "  arena " + p.arenaBytes.toString() + " bytes\n";
  for (const kernel::Kernel& k : p.kernels) {
    std::string text = kernel::printKernel(k);
    out += "\n";
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      out += "  " + text.substr(start, end - start) + "\n";
      start = end + 1;
    }
  }
  out += "\n";
  for (const Step& s : p.steps) {
    if (s.kind == Step::Kind::kLaunch) {
      out += "  launch @" + p.kernels[static_cast<size_t>(s.launch.kernel)].name + "(";
      for (size_t i = 0; i < s.launch.args.size(); ++i) out += (i ? ", " : "") + bufferRef(p, s.launch.args[i]);
      out += ")";
    } else {
      out += "  call " + s.call.op + "(";
      for (size_t i = 0; i < s.call.inputs.size(); ++i)
        out += (i ? ", " : "") + (s.call.inputs[i] ? viewText(p, *s.call.inputs[i]) : std::string("none"));
      out += ") -> (";
      for (size_t i = 0; i < s.call.outputs.size(); ++i) out += (i ? ", " : "") + viewText(p, s.call.outputs[i]);
      out += ")";
      // Attributes that are none (their default: prims.matmul's dtype) are left out.
      std::string attrs;
      for (const auto& [k, v] : s.call.attrs)
        if (!v.isNone()) attrs += (attrs.empty() ? "" : ", ") + k + " = " + v.toString();
      if (!attrs.empty()) out += " {" + attrs + "}";
      if (s.call.epilogue >= 0) {
        out += " epilogue @" + p.kernels[static_cast<size_t>(s.call.epilogue)].name + "(";
        for (size_t i = 0; i < s.call.epilogueArgs.size(); ++i)
          out += (i ? ", " : "") + bufferRef(p, s.call.epilogueArgs[i]);
        out += ")";
      }
    }
    out += "  # " + s.origin + "\n";
  }
  return out + "}\n";
}

}  // namespace plugsdk::sched
