// encodeKernel / decodeKernel: statements flattened in order (a loop's body follows it),
// index expressions as postfix programs over the kernel's symbol table.
#include "core/plugin/kernel_encoding.h"

#include <algorithm>
#include <map>

#include "core/kernel/kernel_text.h"

namespace plugsdk::plugin {

namespace {

using ir::SymExpr;
using kernel::Stmt;
using kernel::StmtKind;

class IndexEncoder {
 public:
  IndexEncoder(std::vector<plugsdk_index_insn_t>& insns, std::vector<std::string>& symbols)
      : insns_(insns), symbols_(symbols) {}

  plugsdk_index_expr_t encode(const SymExpr& e) {
    plugsdk_index_expr_t r{static_cast<uint32_t>(insns_.size()), 0};
    bool first = true;
    for (const auto& t : e.terms()) {
      push(PLUGSDK_INDEX_CONST, t.coeff);
      for (const auto& a : t.atoms) {
        atom(*a);
        push(PLUGSDK_INDEX_MUL, 0);
      }
      if (!first) push(PLUGSDK_INDEX_ADD, 0);
      first = false;
    }
    if (first) push(PLUGSDK_INDEX_CONST, 0);
    r.count = static_cast<uint32_t>(insns_.size()) - r.first;
    return r;
  }

 private:
  void push(plugsdk_index_op_t op, int64_t operand) { insns_.push_back({static_cast<uint32_t>(op), 0, operand}); }

  void atom(const ir::SymAtom& a) {
    if (a.kind != ir::SymAtom::Kind::kSymbol) {
      encodeInline(a.lhs);
      encodeInline(a.rhs);
      push(a.kind == ir::SymAtom::Kind::kFloorDiv ? PLUGSDK_INDEX_FLOORDIV : PLUGSDK_INDEX_MOD, 0);
      return;
    }
    const std::string& n = a.name;
    const bool digits = n.size() > 1 && n.find_first_not_of("0123456789", 1) == std::string::npos;
    if (digits && n[0] == 'i') return push(PLUGSDK_INDEX_GRID_VAR, std::stoll(n.substr(1)));
    if (digits && n[0] == 'r') return push(PLUGSDK_INDEX_LOOP_VAR, std::stoll(n.substr(1)));
    if (digits && n[0] == '%') return push(PLUGSDK_INDEX_VALUE, std::stoll(n.substr(1)));
    auto it = std::find(symbols_.begin(), symbols_.end(), n);
    if (it == symbols_.end()) it = symbols_.insert(symbols_.end(), n);
    push(PLUGSDK_INDEX_SYMBOL, it - symbols_.begin());
  }

  /// A sub-expression inside an atom, emitted in place.
  void encodeInline(const SymExpr& e) {
    plugsdk_index_expr_t r = encode(e);
    (void)r;
  }

  std::vector<plugsdk_index_insn_t>& insns_;
  std::vector<std::string>& symbols_;
};

/// The ABI numbers statement kinds on its own (the IR's enum is internal and may change).
uint32_t abiKind(StmtKind k) {
  switch (k) {
    case StmtKind::kLoad: return PLUGSDK_STMT_LOAD;
    case StmtKind::kConst: return PLUGSDK_STMT_CONST;
    case StmtKind::kIndex: return PLUGSDK_STMT_INDEX;
    case StmtKind::kScalar: return PLUGSDK_STMT_SCALAR;
    case StmtKind::kWhere: return PLUGSDK_STMT_WHERE;
    case StmtKind::kCast: return PLUGSDK_STMT_CAST;
    case StmtKind::kRand: return PLUGSDK_STMT_RAND;
    case StmtKind::kReduce: return PLUGSDK_STMT_REDUCE;
    case StmtKind::kStore: return PLUGSDK_STMT_STORE;
    case StmtKind::kLoop: return PLUGSDK_STMT_LOOP;
    case StmtKind::kCheck: return PLUGSDK_STMT_CHECK;
  }
  return UINT32_MAX;
}

StatusOr<StmtKind> irKind(uint32_t k) {
  for (StmtKind s :
       {StmtKind::kLoad, StmtKind::kConst, StmtKind::kIndex, StmtKind::kScalar, StmtKind::kWhere, StmtKind::kCast,
        StmtKind::kRand, StmtKind::kReduce, StmtKind::kStore, StmtKind::kLoop, StmtKind::kCheck})
    if (abiKind(s) == k) return s;
  return invalidArgument("unknown statement kind " + std::to_string(k));
}

uint32_t opCode(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::kScalar: return static_cast<uint32_t>(s.op);
    case StmtKind::kReduce: return static_cast<uint32_t>(s.reduce);
    case StmtKind::kStore: return static_cast<uint32_t>(s.combine);
    default: return 0;
  }
}

Status encodeBody(const std::vector<Stmt>& body, IndexEncoder& ix, std::vector<plugsdk_stmt_t>& out,
                  std::vector<std::string>& messages, std::vector<plugsdk_index_expr_t>& loopSizes) {
  for (const Stmt& s : body) {
    plugsdk_stmt_t e{};
    e.kind = abiKind(s.kind);
    e.dtype = static_cast<uint32_t>(s.dtype);
    e.result = s.result;
    e.arg = s.arg;
    e.op = opCode(s);
    if (s.operands.size() > 3) return internalError("a statement with more than 3 operands");
    e.num_operands = static_cast<uint32_t>(s.operands.size());
    for (size_t i = 0; i < s.operands.size(); ++i) e.operands[i] = s.operands[i];
    e.index = ix.encode(s.index);
    e.fvalue = s.fvalue;
    e.ivalue = s.ivalue;
    if (s.kind == StmtKind::kCheck) messages.push_back(s.message);  // pointers fixed up later
    if (s.kind == StmtKind::kLoop) {
      e.num_loop_sizes = static_cast<uint32_t>(s.loopSizes.size());
      // loop_sizes will point into `loopSizes` once it stops growing (encodeKernel)
      for (const SymExpr& size : s.loopSizes) loopSizes.push_back(ix.encode(size));
      const size_t at = out.size();
      out.push_back(e);
      RETURN_IF_ERROR(encodeBody(s.body, ix, out, messages, loopSizes));
      out[at].body_count = static_cast<uint32_t>(out.size() - at - 1);
      continue;
    }
    out.push_back(e);
  }
  return Status::ok();
}

class IndexDecoder {
 public:
  explicit IndexDecoder(const plugsdk_kernel_t& k) : k_(k) {}
  StatusOr<SymExpr> decode(const plugsdk_index_expr_t& e) const {
    if (static_cast<size_t>(e.first) + e.count > k_.num_index_insns)
      return invalidArgument("index expression out of range");
    std::vector<SymExpr> stack;
    for (uint32_t i = 0; i < e.count; ++i) {
      const plugsdk_index_insn_t& in = k_.index_insns[e.first + i];
      switch (in.op) {
        case PLUGSDK_INDEX_CONST: stack.emplace_back(in.operand); break;
        case PLUGSDK_INDEX_GRID_VAR:
          stack.push_back(SymExpr::symbol(kernel::gridVar(static_cast<size_t>(in.operand))));
          break;
        case PLUGSDK_INDEX_LOOP_VAR:
          stack.push_back(SymExpr::symbol(kernel::loopVar(static_cast<size_t>(in.operand))));
          break;
        case PLUGSDK_INDEX_VALUE: stack.push_back(kernel::valueRef(static_cast<int>(in.operand))); break;
        case PLUGSDK_INDEX_SYMBOL:
          if (in.operand < 0 || static_cast<size_t>(in.operand) >= k_.num_symbols)
            return invalidArgument("bad symbol index");
          stack.push_back(SymExpr::symbol(k_.symbols[in.operand]));
          break;
        default: {
          if (stack.size() < 2) return invalidArgument("index program underflows its stack");
          SymExpr b = stack.back();
          stack.pop_back();
          SymExpr a = stack.back();
          stack.pop_back();
          if ((in.op == PLUGSDK_INDEX_FLOORDIV || in.op == PLUGSDK_INDEX_MOD) && b.isZero())
            return invalidArgument("index program divides by zero");
          switch (in.op) {
            case PLUGSDK_INDEX_ADD: stack.push_back(a + b); break;
            case PLUGSDK_INDEX_SUB: stack.push_back(a - b); break;
            case PLUGSDK_INDEX_MUL: stack.push_back(a * b); break;
            case PLUGSDK_INDEX_FLOORDIV: stack.push_back(SymExpr::floorDiv(a, b)); break;
            case PLUGSDK_INDEX_MOD: stack.push_back(SymExpr::mod(a, b)); break;
            default: return invalidArgument("unknown index op " + std::to_string(in.op));
          }
        }
      }
    }
    if (stack.size() != 1) return invalidArgument("index program leaves " + std::to_string(stack.size()) + " values");
    return stack[0];
  }

 private:
  const plugsdk_kernel_t& k_;
};

StatusOr<std::vector<Stmt>> decodeBody(const plugsdk_kernel_t& k, const IndexDecoder& ix, size_t& pos, size_t end) {
  std::vector<Stmt> out;
  while (pos < end) {
    const plugsdk_stmt_t& e = k.stmts[pos++];
    if (e.num_operands > 3) return invalidArgument("a statement with more than 3 operands");
    Stmt s;
    ASSIGN_OR_RETURN(s.kind, irKind(e.kind));
    s.dtype = static_cast<ir::DType>(e.dtype);
    s.result = e.result;
    s.arg = e.arg;
    for (uint32_t i = 0; i < e.num_operands; ++i) s.operands.push_back(e.operands[i]);
    ASSIGN_OR_RETURN(s.index, ix.decode(e.index));
    if (s.kind == StmtKind::kScalar) s.op = static_cast<prims::ScalarOp>(e.op);
    if (s.kind == StmtKind::kReduce) s.reduce = static_cast<kernel::ReduceOp>(e.op);
    if (s.kind == StmtKind::kStore) s.combine = static_cast<kernel::Combine>(e.op);
    s.fvalue = e.fvalue;
    s.ivalue = e.ivalue;
    if (s.kind == StmtKind::kCheck && e.message) s.message = e.message;
    if (s.kind == StmtKind::kLoop) {
      if ((e.num_loop_sizes > 0 && !e.loop_sizes) || pos + e.body_count > end)  // rank 0: one iteration
        return invalidArgument("bad loop encoding");
      for (uint32_t i = 0; i < e.num_loop_sizes; ++i) {
        ASSIGN_OR_RETURN(SymExpr size, ix.decode(e.loop_sizes[i]));
        s.loopSizes.push_back(size);
      }
      const size_t bodyEnd = pos + e.body_count;
      ASSIGN_OR_RETURN(s.body, decodeBody(k, ix, pos, bodyEnd));
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<EncodedKernel>> encodeKernel(const kernel::Kernel& k) {
  RETURN_IF_ERROR(kernel::verifyKernel(k));
  auto enc = std::unique_ptr<EncodedKernel>(new EncodedKernel());
  IndexEncoder ix(enc->insns_, enc->symbols_);
  for (const SymExpr& g : k.grid) enc->grid_.push_back(ix.encode(g));
  RETURN_IF_ERROR(encodeBody(k.body, ix, enc->stmts_, enc->messages_, enc->loopSizes_));
  size_t mi = 0;
  for (plugsdk_stmt_t& s : enc->stmts_)
    if (s.kind == PLUGSDK_STMT_CHECK) s.message = enc->messages_[mi++].c_str();
  size_t loopStart = 0;
  for (plugsdk_stmt_t& s : enc->stmts_)
    if (s.kind == PLUGSDK_STMT_LOOP) {
      s.loop_sizes = enc->loopSizes_.data() + loopStart;
      loopStart += s.num_loop_sizes;
    }
  for (const kernel::Arg& a : k.args) enc->argNames_.push_back(a.name);
  for (size_t i = 0; i < k.args.size(); ++i) {
    const kernel::Arg& a = k.args[i];
    uint32_t access = 0;
    if (a.read) access |= PLUGSDK_ACCESS_READ;
    if (a.written) access |= PLUGSDK_ACCESS_WRITE;
    if (a.accumulator) access |= PLUGSDK_ACCESS_ACCUMULATOR;
    enc->args_.push_back({enc->argNames_[i].c_str(), static_cast<uint32_t>(a.dtype), access});
  }
  for (const std::string& s : enc->symbols_) enc->symbolPtrs_.push_back(s.c_str());
  enc->name_ = k.name;
  enc->text_ = kernel::printKernel(k);
  plugsdk_kernel_t& out = enc->kernel_;
  out.struct_size = sizeof(plugsdk_kernel_t);
  out.name = enc->name_.c_str();
  out.text = enc->text_.c_str();
  out.arg_size = sizeof(plugsdk_kernel_arg_t);
  out.num_args = enc->args_.size();
  out.args = enc->args_.data();
  out.num_grid = enc->grid_.size();
  out.grid = enc->grid_.data();
  out.stmt_size = sizeof(plugsdk_stmt_t);
  out.num_stmts = enc->stmts_.size();
  out.stmts = enc->stmts_.data();
  out.num_index_insns = enc->insns_.size();
  out.index_insns = enc->insns_.data();
  out.num_symbols = enc->symbolPtrs_.size();
  out.symbols = enc->symbolPtrs_.data();
  out.num_values = static_cast<uint32_t>(k.numValues);
  return enc;
}

uint32_t libraryOpBit(const std::string& op) {
  if (op == "prims.matmul") return PLUGSDK_LIBRARY_MATMUL;
  if (op == "prims.convolution") return PLUGSDK_LIBRARY_CONVOLUTION;
  if (op == "prims.sdpa") return PLUGSDK_LIBRARY_SDPA;
  if (op == "prims.sdpa_backward") return PLUGSDK_LIBRARY_SDPA_BACKWARD;
  return 0;
}

StatusOr<std::unique_ptr<EncodedLibraryCall>> encodeLibraryCall(const std::string& op, const ir::AttrMap& attrs,
                                                                const std::vector<LibraryOperand>& inputs,
                                                                const std::vector<LibraryOperand>& outputs) {
  auto enc = std::unique_ptr<EncodedLibraryCall>(new EncodedLibraryCall());
  enc->op = libraryOpBit(op);
  if (!enc->op) return invalidArgument(op + " is not a library op of the ABI");
  for (const auto& [name, value] : attrs) {
    // Added in ABI 1.2 and written only when set, so an older plugin's matmul reads as before.
    if (op == "prims.matmul" && name == "dtype" && value.isNone()) continue;
    enc->attributes += (enc->attributes.empty() ? "" : ", ") + name + " = " + value.toString();
  }
  IndexEncoder ix(enc->insns, enc->symbols);
  auto describe = [&](const LibraryOperand& o) {
    plugsdk_tensor_desc_t d{};
    d.dtype = o.dtype ? static_cast<uint32_t>(*o.dtype) : UINT32_MAX;
    d.rank = static_cast<uint32_t>(o.shape.size());
    std::vector<plugsdk_index_expr_t> exprs;
    for (const SymExpr& s : o.shape) exprs.push_back(ix.encode(s));
    for (const SymExpr& s : o.strides) exprs.push_back(ix.encode(s));
    d.offset = ix.encode(o.offset);
    enc->exprs_.push_back(std::move(exprs));
    return d;
  };
  for (const LibraryOperand& o : inputs) enc->inputs.push_back(describe(o));
  for (const LibraryOperand& o : outputs) enc->outputs.push_back(describe(o));
  // Pointers into exprs_ once it stops growing.
  size_t e = 0;
  for (auto* list : {&enc->inputs, &enc->outputs})
    for (plugsdk_tensor_desc_t& d : *list) {
      const std::vector<plugsdk_index_expr_t>& x = enc->exprs_[e++];
      d.sizes = x.data();
      d.strides = x.data() + d.rank;
    }
  for (const std::string& s : enc->symbols) enc->symbolPtrs.push_back(s.c_str());
  return enc;
}

StatusOr<kernel::Kernel> decodeKernel(const plugsdk_kernel_t& k) {
  if (k.struct_size < PLUGSDK_STRUCT_SIZE(plugsdk_kernel_t, num_values))
    return invalidArgument("plugsdk_kernel_t is too small (" + std::to_string(k.struct_size) + " bytes)");
  if (k.stmt_size != sizeof(plugsdk_stmt_t) || k.arg_size != sizeof(plugsdk_kernel_arg_t))
    return unimplemented("kernel statements or arguments of another ABI minor version");
  kernel::Kernel out;
  out.name = k.name ? k.name : "";
  for (size_t i = 0; i < k.num_args; ++i) {
    const plugsdk_kernel_arg_t& a = k.args[i];
    kernel::Arg arg;
    arg.name = a.name ? a.name : "";
    arg.dtype = static_cast<ir::DType>(a.dtype);
    arg.read = (a.access & PLUGSDK_ACCESS_READ) != 0;
    arg.written = (a.access & PLUGSDK_ACCESS_WRITE) != 0;
    arg.accumulator = (a.access & PLUGSDK_ACCESS_ACCUMULATOR) != 0;
    out.args.push_back(arg);
  }
  IndexDecoder ix(k);
  for (size_t i = 0; i < k.num_grid; ++i) {
    ASSIGN_OR_RETURN(SymExpr g, ix.decode(k.grid[i]));
    out.grid.push_back(g);
  }
  size_t pos = 0;
  ASSIGN_OR_RETURN(out.body, decodeBody(k, ix, pos, k.num_stmts));
  out.numValues = static_cast<int>(k.num_values);
  RETURN_IF_ERROR(kernel::verifyKernel(out));
  return out;
}

}  // namespace plugsdk::plugin
