// Library calls (prims.matmul / convolution / sdpa) through the core's reference kernels,
// as core/sched/interpreter.cc runs them for the program interpreter: each strided input is
// gathered into a contiguous float64 tensor, the prim's reference kernel computes the
// results, output views are scattered back into their buffers, and an epilogue kernel runs
// with its ACCUMULATOR argument bound to result 0 (see reference.h).
#include <cctype>
#include <cstdlib>

#include "conformance/reference_backend/reference.h"
#include "core/exec/kernel_utils.h"
#include "core/exec/tensor_bytes.h"
#include "core/plugin/kernel_encoding.h"
#include "core/prims/prims.h"
#include "core/text/parser.h"
#include "plugsdk/kernel_view.hpp"

namespace plugsdk::reference {
namespace {

using exec::HostTensor;

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

/// Splits at the commas outside brackets.
std::vector<std::string> splitTop(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t from = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || (s[i] == ',' && depth == 0)) {
      if (!trim(s.substr(from, i - from)).empty()) out.push_back(trim(s.substr(from, i - from)));
      from = i + 1;
    } else if (s[i] == '[') {
      ++depth;
    } else if (s[i] == ']') {
      --depth;
    }
  }
  return out;
}

/// The printer writes floats with '.', 'e', or as inf / nan (ir::formatDouble).
std::optional<double> asFloat(const std::string& t) {
  const bool special = t == "inf" || t == "-inf" || t == "nan";
  if (!special && t.find_first_of(".eE") == std::string::npos) return std::nullopt;
  if (!special && !(std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '-' || t[0] == '.')) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  return end && *end == '\0' ? std::optional<double>(v) : std::nullopt;
}

StatusOr<ir::Attribute> parseValue(const std::string& t) {
  if (t == "none") return ir::Attribute::none();
  if (t == "true" || t == "false") return ir::Attribute::fromBool(t == "true");
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') return ir::Attribute::fromString(t.substr(1, t.size() - 2));
  if (auto d = ir::parseDType(t)) return ir::Attribute::fromDType(*d);
  if (t.front() == '[') {
    if (t.back() != ']') return invalidArgument("unterminated list '" + t + "'");
    const std::vector<std::string> items = splitTop(t.substr(1, t.size() - 2));
    bool floats = false;
    for (const std::string& i : items) floats = floats || asFloat(i).has_value();
    if (floats) {
      std::vector<double> v;
      for (const std::string& i : items) {
        auto f = asFloat(i);
        char* end = nullptr;
        const double x = f ? *f : std::strtod(i.c_str(), &end);
        if (!f && (!end || *end != '\0')) return invalidArgument("'" + i + "' in a float list");
        v.push_back(x);
      }
      return ir::Attribute::fromFloats(v);
    }
    std::vector<ir::SymExpr> v;
    for (const std::string& i : items) {
      ASSIGN_OR_RETURN(ir::SymExpr e, text::parseSymExpr(i));
      v.push_back(e);
    }
    return ir::Attribute::fromInts(std::move(v));
  }
  if (auto f = asFloat(t)) return ir::Attribute::fromFloat(*f);
  ASSIGN_OR_RETURN(ir::SymExpr e, text::parseSymExpr(t));  // an integer or a size expression
  return ir::Attribute::fromSym(e);
}

StatusOr<std::vector<int64_t>> evalAll(const std::vector<plugsdk_index_expr_t>& es,
                                       const std::vector<plugsdk_index_insn_t>& pool, sdk::Span<const int64_t> syms) {
  std::vector<int64_t> out;
  for (plugsdk_index_expr_t e : es) {
    sdk::StatusOr<int64_t> v =
        sdk::evalIndex(sdk::Span<const plugsdk_index_insn_t>(pool), e, sdk::IndexEnv{{}, {}, syms});
    if (!v.isOk()) return invalidArgument(v.status().message());
    out.push_back(*v);
  }
  return out;
}

/// A descriptor's view at launch: shape, strides and offset evaluated.
struct View {
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
};

StatusOr<View> evalView(const Descriptor& d, const std::vector<plugsdk_index_insn_t>& pool,
                        sdk::Span<const int64_t> syms) {
  View v;
  ASSIGN_OR_RETURN(v.shape, evalAll(d.sizes, pool, syms));
  ASSIGN_OR_RETURN(v.strides, evalAll(d.strides, pool, syms));
  ASSIGN_OR_RETURN(std::vector<int64_t> off, evalAll({d.offset}, pool, syms));
  v.offset = off[0];
  return v;
}

/// Every element position of a view, bounds-checked against `n` elements.
StatusOr<std::vector<int64_t>> positions(const View& v, int64_t n, const std::string& what) {
  std::vector<int64_t> at;
  Status st = Status::ok();
  exec::forEachIndex(v.shape, [&](const std::vector<int64_t>& idx, int64_t) {
    const int64_t p = v.offset + exec::offsetOf(idx, v.strides);
    if ((p < 0 || p >= n) && st.isOk())
      st = outOfRange(what + " reaches element " + std::to_string(p) + " of a buffer of " + std::to_string(n));
    at.push_back(p);
  });
  if (!st.isOk()) return st;
  return at;
}

int64_t elementsOf(const Bytes& b, ir::DType t) {
  return static_cast<int64_t>(b.size / static_cast<uint64_t>(ir::dtypeSize(t)));
}

}  // namespace

StatusOr<ir::AttrMap> parseAttributes(const std::string& text) {
  ir::AttrMap out;
  for (const std::string& entry : splitTop(text)) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) return invalidArgument("attribute '" + entry + "' is not name = value");
    const std::string name = trim(entry.substr(0, eq)), value = trim(entry.substr(eq + 1));
    if (name.empty() || value.empty()) return invalidArgument("attribute '" + entry + "' is not name = value");
    auto v = parseValue(value);
    if (!v.isOk()) return v.status().withContext("attribute " + name);
    if (!out.emplace(name, *v).second) return invalidArgument("attribute " + name + " is given twice");
  }
  return out;
}

StatusOr<LibraryPlan> planLibrary(const ir::Context& ctx, uint32_t op, const std::string& attributes,
                                  const std::vector<plugsdk_tensor_desc_t>& inputs,
                                  const std::vector<plugsdk_tensor_desc_t>& outputs,
                                  const std::vector<plugsdk_index_insn_t>& pool,
                                  const std::vector<std::string>& symbols, const plugsdk_kernel_t* epilogue) {
  LibraryPlan p;
  for (std::string_view name : prims::kLibraryPrims)
    if (plugin::libraryOpBit(std::string(name)) == op) p.op = std::string(name);
  if (p.op.empty() || !ctx.ops.find(p.op)) return unimplemented("library op bit " + std::to_string(op));
  ASSIGN_OR_RETURN(p.attrs, parseAttributes(attributes));
  auto copy = [](const plugsdk_tensor_desc_t& d) {
    Descriptor c;
    if (d.dtype != UINT32_MAX) c.dtype = static_cast<ir::DType>(d.dtype);
    c.sizes.assign(d.sizes, d.sizes + d.rank);
    c.strides.assign(d.strides, d.strides + d.rank);
    c.offset = d.offset;
    return c;
  };
  for (const auto& d : inputs) p.inputs.push_back(copy(d));
  for (const auto& d : outputs) {
    if (d.dtype == UINT32_MAX) return invalidArgument("an output descriptor has no dtype");
    p.outputs.push_back(copy(d));
  }
  if (p.outputs.empty()) return invalidArgument(p.op + " has no output");
  p.pool = pool;
  p.symbols = symbols;
  if (epilogue) {
    ASSIGN_OR_RETURN(kernel::Kernel k, plugin::decodeKernel(*epilogue));
    bool found = false;
    for (size_t i = 0; i < k.args.size(); ++i)
      if (k.args[i].accumulator) p.accumulator = i, found = true;
    if (!found) return invalidArgument("the epilogue kernel @" + k.name + " has no ACCUMULATOR argument");
    for (size_t i = 0; i < epilogue->num_symbols; ++i) p.epilogueSymbols.emplace_back(epilogue->symbols[i]);
    p.epilogue = std::move(k);
  }
  return p;
}

Status runLibrary(const ir::Context& ctx, const exec::RefKernelTable& kernels, const LibraryPlan& plan,
                  const std::vector<Bytes>& buffers, const std::vector<int64_t>& symbolValues) {
  const ir::OpDef* def = ctx.ops.find(plan.op);
  const exec::RefKernel* kernel = kernels.find(plan.op);
  if (!def || !kernel) return internalError("no reference kernel for " + plan.op);
  const sdk::Span<const int64_t> syms(symbolValues.data(), plan.symbols.size());
  std::map<std::string, int64_t> named;
  for (size_t i = 0; i < plan.symbols.size(); ++i) named[plan.symbols[i]] = symbolValues[i];

  // Inputs: gathered from their strided views into contiguous tensors.
  std::vector<HostTensor> ins;
  std::vector<const HostTensor*> ptrs;
  ins.reserve(plan.inputs.size());
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const Descriptor& d = plan.inputs[i];
    if (!d.dtype) {
      ptrs.push_back(nullptr);
      continue;
    }
    if (!buffers[i].present) return invalidArgument(plan.op + ": no buffer for input " + std::to_string(i));
    ASSIGN_OR_RETURN(View v, evalView(d, plan.pool, syms));
    const int64_t n = elementsOf(buffers[i], *d.dtype);
    ASSIGN_OR_RETURN(std::vector<int64_t> at, positions(v, n, plan.op + " input " + std::to_string(i)));
    const HostTensor storage = exec::decodeElements(*d.dtype, {n}, buffers[i].data);
    HostTensor t(*d.dtype, v.shape);
    for (size_t e = 0; e < at.size(); ++e) {
      if (t.isFloating())
        t.doubles()[e] = storage.doubles()[static_cast<size_t>(at[e])];
      else
        t.ints()[e] = storage.ints()[static_cast<size_t>(at[e])];
    }
    ins.push_back(std::move(t));
    ptrs.push_back(&ins.back());
  }

  std::vector<View> outs;
  std::vector<ir::DType> dtypes;
  std::vector<std::vector<int64_t>> shapes;
  for (const Descriptor& d : plan.outputs) {
    ASSIGN_OR_RETURN(View v, evalView(d, plan.pool, syms));
    shapes.push_back(v.shape);
    dtypes.push_back(*d.dtype);
    outs.push_back(std::move(v));
  }
  if (plan.epilogue) dtypes[0] = plan.epilogue->args[plan.accumulator].dtype;  // the accumulator's dtype
  exec::RefKernelContext rc(def->schema, plan.attrs, ptrs, dtypes, shapes, named);
  ASSIGN_OR_RETURN(std::vector<HostTensor> results, (*kernel)(rc));
  if (results.size() < plan.outputs.size())
    return internalError(plan.op + "'s reference kernel returned " + std::to_string(results.size()) + " results");

  // Outputs: scattered into their views (output 0 under an epilogue goes to the epilogue).
  const size_t base = plan.inputs.size();
  for (size_t o = plan.epilogue ? 1 : 0; o < plan.outputs.size(); ++o) {
    const Bytes& b = buffers[base + o];
    if (!b.present) return invalidArgument(plan.op + ": no buffer for output " + std::to_string(o));
    const int64_t n = elementsOf(b, dtypes[o]);
    ASSIGN_OR_RETURN(std::vector<int64_t> at, positions(outs[o], n, plan.op + " output " + std::to_string(o)));
    HostTensor storage = exec::decodeElements(dtypes[o], {n}, b.data);
    const HostTensor was = storage;
    for (size_t e = 0; e < at.size(); ++e) {
      if (storage.isFloating())
        storage.doubles()[static_cast<size_t>(at[e])] = results[o].getDouble(static_cast<int64_t>(e));
      else
        storage.ints()[static_cast<size_t>(at[e])] = results[o].getInt(static_cast<int64_t>(e));
    }
    writeChanged(storage, was, b.data);
  }
  if (!plan.epilogue) return Status::ok();

  // The epilogue: result 0 (row-major) through the accumulator, the other arguments bound to
  // the buffers after the outputs, its own symbols after the call's.
  HostTensor acc(dtypes[0], {results[0].numel()});
  for (int64_t e = 0; e < acc.numel(); ++e) {
    if (acc.isFloating())
      acc.doubles()[static_cast<size_t>(e)] = results[0].getDouble(e);
    else
      acc.ints()[static_cast<size_t>(e)] = results[0].getInt(e);
  }
  const kernel::Kernel& k = *plan.epilogue;
  std::vector<Bytes> args(k.args.size());
  size_t next = base + plan.outputs.size();
  for (size_t a = 0; a < k.args.size(); ++a)
    if (a != plan.accumulator) args[a] = buffers.at(next++);
  std::map<std::string, int64_t> esyms = named;
  for (size_t i = 0; i < plan.epilogueSymbols.size(); ++i)
    esyms[plan.epilogueSymbols[i]] = symbolValues.at(plan.symbols.size() + i);
  return runKernelOn(k, args, plan.accumulator, &acc, esyms);
}

}  // namespace plugsdk::reference
