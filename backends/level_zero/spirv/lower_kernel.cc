// KernelLowering's frame: the entry point and its parameters, the flattened grid (one
// work-item per point), structured control flow, statements and CHECKs; lowerKernel and
// compileKernel.
#include "backends/level_zero/spirv/lower_kernel.h"

#include <algorithm>

#include "backends/level_zero/spirv/lowering.h"
#include "backends/level_zero/spirv/optimize.h"
#include "backends/llvm_lowering/dtypes.h"
#include "backends/llvm_lowering/frame.h"

namespace plugsdk::level_zero::spirv {

using lowering::kStatusCheckBase;

KernelLowering::KernelLowering(Module& m, const sdk::KernelView& k, uint32_t groupSize, bool contiguousChunks,
                               uint32_t subgroupSlots)
    : m_(m), k_(k), groupSize_(groupSize), contiguousChunks_(contiguousChunks), subgroupSlots_(subgroupSlots) {
  values_.resize(k.numValues(), 0);
  valueTypes_.resize(k.numValues(), PLUGSDK_DTYPE_I64);
  checkOrdinal_.resize(k.numStmts(), 0);
  for (size_t i = 0; i < k.numStmts(); ++i) {
    const plugsdk_stmt_t& s = k.stmt(i);
    if (s.result >= 0) valueTypes_[static_cast<size_t>(s.result)] = s.dtype;
    if (s.kind == PLUGSDK_STMT_CHECK) {
      checkOrdinal_[i] = checkMessages.size();
      checkMessages.emplace_back(s.message ? s.message : "");
    }
  }
}

sdk::Status KernelLowering::fail(size_t pos, const std::string& why) const {
  return sdk::unimplemented("kernel @" + std::string(k_.name()) + ", statement " + std::to_string(pos) + ": " + why);
}

uint32_t KernelLowering::intT(uint32_t bits) {
  if (bits == 8) m_.capability(spv::Capability::Int8);
  if (bits == 16) m_.capability(spv::Capability::Int16);
  return m_.typeInt(bits);
}

uint32_t KernelLowering::floatT(uint32_t bits) {
  if (bits == 16) m_.capability(spv::Capability::Float16Buffer);
  if (bits == 64) m_.capability(spv::Capability::Float64);
  return m_.typeFloat(bits);
}

uint32_t KernelLowering::computeType(uint32_t dtype) {
  switch (dtype) {
    case PLUGSDK_DTYPE_BOOL: return boolT();
    case PLUGSDK_DTYPE_U8:
    case PLUGSDK_DTYPE_I8: return intT(8);
    case PLUGSDK_DTYPE_I16: return intT(16);
    case PLUGSDK_DTYPE_I32: return intT(32);
    case PLUGSDK_DTYPE_I64: return intT(64);
    case PLUGSDK_DTYPE_F16:
    case PLUGSDK_DTYPE_BF16:
    case PLUGSDK_DTYPE_F32: return floatT(32);
    case PLUGSDK_DTYPE_F64: return floatT(64);
    default: return 0;
  }
}

uint32_t KernelLowering::storageType(uint32_t dtype) {
  switch (dtype) {
    case PLUGSDK_DTYPE_BOOL:
    case PLUGSDK_DTYPE_U8:
    case PLUGSDK_DTYPE_I8: return intT(8);
    case PLUGSDK_DTYPE_I16:
    case PLUGSDK_DTYPE_BF16: return intT(16);
    case PLUGSDK_DTYPE_I32: return intT(32);
    case PLUGSDK_DTYPE_I64: return intT(64);
    case PLUGSDK_DTYPE_F16: return floatT(16);
    case PLUGSDK_DTYPE_F32: return floatT(32);
    case PLUGSDK_DTYPE_F64: return floatT(64);
    default: return 0;
  }
}

uint32_t KernelLowering::ext(spv::OpenCLStd f, uint32_t type, std::initializer_list<uint32_t> args) {
  std::vector<uint32_t> operands{openclStd_, static_cast<uint32_t>(f)};
  operands.insert(operands.end(), args.begin(), args.end());
  return m_.op(spv::Op::ExtInst, type, operands);
}

uint32_t KernelLowering::boolToInt(uint32_t b, uint32_t type) {
  return m_.op(spv::Op::Select, type, {b, m_.constInt(type, 1), m_.constInt(type, 0)});
}

uint32_t KernelLowering::bitsType(uint32_t dtype) { return dtype == PLUGSDK_DTYPE_F16 ? intT(16) : storageType(dtype); }

sdk::Status KernelLowering::ifThen(uint32_t cond, const std::function<sdk::Status()>& body) {
  const uint32_t then = m_.newId(), after = m_.newId();
  m_.emit(spv::Op::SelectionMerge, {after, spv::kSelectionControlNone});
  m_.emit(spv::Op::BranchConditional, {cond, then, after});
  m_.label(then);
  sdk::Status st = body();
  if (!st.isOk()) return st;
  m_.emit(spv::Op::Branch, {after});
  m_.label(after);
  return sdk::Status::ok();
}

sdk::Status KernelLowering::forLoop(uint32_t n, const std::function<sdk::Status(uint32_t)>& body) {
  const uint32_t var = m_.localVariable(i64());
  m_.emit(spv::Op::Store, {var, constI64(0)});
  const uint32_t header = m_.newId(), bodyBlock = m_.newId(), cont = m_.newId(), merge = m_.newId();
  m_.emit(spv::Op::Branch, {header});
  m_.label(header);
  const uint32_t i = m_.op(spv::Op::Load, i64(), {var});
  const uint32_t more = m_.op(spv::Op::SLessThan, boolT(), {i, n});
  m_.emit(spv::Op::LoopMerge, {merge, cont, spv::kLoopControlNone});
  m_.emit(spv::Op::BranchConditional, {more, bodyBlock, merge});
  m_.label(bodyBlock);
  sdk::Status st = body(i);
  if (!st.isOk()) return st;
  m_.emit(spv::Op::Branch, {cont});
  m_.label(cont);
  m_.emit(spv::Op::Store, {var, m_.op(spv::Op::IAdd, i64(), {i, constI64(1)})});
  m_.emit(spv::Op::Branch, {header});
  m_.label(merge);
  return sdk::Status::ok();
}

void KernelLowering::failWith(uint32_t failed, int32_t code) {
  // Group mode: no return before the group's barriers. Inside a spread loop the work-item
  // skips the rest of its iteration; outside (every work-item fails alike) the group skips
  // the statements up to the next loop, which then runs no iteration (lower_group.cc).
  if (spreading_) return skipRestIf(failed, code);
  if (groupSize_) {
    groupMayFail_ = true;
    return skipRestIf(failed, code);
  }
  const uint32_t bad = m_.newId(), ok = m_.newId();
  m_.emit(spv::Op::SelectionMerge, {ok, spv::kSelectionControlNone});
  m_.emit(spv::Op::BranchConditional, {failed, bad, ok});
  m_.label(bad);
  // The first failure wins: 0 -> code, left as it is when another work-item got there first.
  const uint32_t scope = constU32(spv::kScopeDevice), relaxed = constU32(spv::kSemanticsRelaxed);
  m_.op(spv::Op::AtomicCompareExchange, u32(),
        {status_, scope, relaxed, relaxed, constU32(static_cast<uint32_t>(code)), constU32(0)});
  m_.emit(spv::Op::Return, {});
  m_.label(ok);
}

sdk::Status KernelLowering::run(const std::string& entry) {
  m_.capability(spv::Capability::Addresses);
  m_.capability(spv::Capability::Kernel);
  m_.capability(spv::Capability::Int64);
  openclStd_ = m_.extInstImport("OpenCL.std");
  m_.memoryModel(spv::AddressingModel::Physical64, spv::MemoryModel::OpenCL);

  // Parameters: argument pointers, the status word, the symbols (lower_kernel.h).
  std::vector<uint32_t> params;
  for (size_t a = 0; a < k_.numArgs(); ++a) {
    const uint32_t st = storageType(k_.arg(a).dtype);
    if (!st) return fail(0, "argument " + std::to_string(a) + " has dtype " + std::to_string(k_.arg(a).dtype));
    params.push_back(m_.typePointer(spv::StorageClass::CrossWorkgroup, st));
  }
  const uint32_t statusPtrT = m_.typePointer(spv::StorageClass::CrossWorkgroup, u32());
  params.push_back(statusPtrT);
  for (size_t s = 0; s < k_.numSymbols(); ++s) params.push_back(i64());
  const uint32_t voidT = m_.typeVoid();
  const uint32_t fnT = m_.typeFunction(voidT, params);

  const uint32_t gidT = m_.typeVector(i64(), 3);
  const uint32_t gidVar = m_.globalVariable(m_.typePointer(spv::StorageClass::Input, gidT), spv::StorageClass::Input);
  m_.decorate(gidVar, spv::Decoration::BuiltIn, {static_cast<uint32_t>(spv::BuiltIn::GlobalInvocationId)});
  m_.decorate(gidVar, spv::Decoration::Constant);
  m_.name(gidVar, "global_id");

  const uint32_t fn = m_.beginFunction(voidT, fnT);
  m_.name(fn, entry);
  for (size_t a = 0; a < k_.numArgs(); ++a) {
    argPtrs_.push_back(m_.parameter(params[a]));
    const char* n = k_.arg(a).name;
    m_.name(argPtrs_.back(), n && *n ? n : "arg" + std::to_string(a));
  }
  status_ = m_.parameter(statusPtrT);
  m_.name(status_, "status");
  for (size_t s = 0; s < k_.numSymbols(); ++s) {
    symbols_.push_back(m_.parameter(i64()));
    m_.name(symbols_.back(), std::string(k_.symbol(s)));
  }
  // Group mode: the grid point is the work-group's id, and the work-group size is fixed.
  uint32_t lidVar = 0, widVar = 0;
  if (groupSize_) {
    lidVar = m_.globalVariable(m_.typePointer(spv::StorageClass::Input, gidT), spv::StorageClass::Input);
    m_.decorate(lidVar, spv::Decoration::BuiltIn, {static_cast<uint32_t>(spv::BuiltIn::LocalInvocationId)});
    m_.decorate(lidVar, spv::Decoration::Constant);
    m_.name(lidVar, "local_id");
    widVar = m_.globalVariable(m_.typePointer(spv::StorageClass::Input, gidT), spv::StorageClass::Input);
    m_.decorate(widVar, spv::Decoration::BuiltIn, {static_cast<uint32_t>(spv::BuiltIn::WorkgroupId)});
    m_.decorate(widVar, spv::Decoration::Constant);
    m_.name(widVar, "group_id");
    std::vector<uint32_t> interface{gidVar, lidVar, widVar};
    if (subgroupSlots_) {
      // Sums combine through sub-groups (lower_group.cc): OpenCL's sub-group built-ins.
      m_.capability(spv::Capability::Groups);
      auto builtin = [&](spv::BuiltIn b, const char* name) {
        const uint32_t v = m_.globalVariable(m_.typePointer(spv::StorageClass::Input, u32()), spv::StorageClass::Input);
        m_.decorate(v, spv::Decoration::BuiltIn, {static_cast<uint32_t>(b)});
        m_.decorate(v, spv::Decoration::Constant);
        m_.name(v, name);
        interface.push_back(v);
        return v;
      };
      sgLocalVar_ = builtin(spv::BuiltIn::SubgroupLocalInvocationId, "subgroup_local_id");
      sgIdVar_ = builtin(spv::BuiltIn::SubgroupId, "subgroup_id");
      sgCountVar_ = builtin(spv::BuiltIn::NumSubgroups, "num_subgroups");
    }
    m_.entryPoint(spv::ExecutionModel::Kernel, fn, entry, interface);
    m_.executionMode(fn, spv::ExecutionMode::LocalSize, {groupSize_, 1, 1});
  } else {
    m_.entryPoint(spv::ExecutionModel::Kernel, fn, entry, {gidVar});
  }
  // IEEE results as the reference computes them: no fused multiply-adds.
  m_.executionMode(fn, spv::ExecutionMode::ContractionOff);
  m_.label(m_.newId());

  // The grid's extents and points; work-items past the last point return.
  const size_t rank = k_.numGrid();
  std::vector<Idx> sizes;
  Idx total{0, 1};
  for (size_t d = 0; d < rank; ++d) {
    sdk::StatusOr<Idx> e = index(k_.grid(d));
    if (!e.isOk()) return e.status().withContext("grid dim " + std::to_string(d));
    sizes.push_back(*e);
    total = product(total, *e);
  }
  const uint32_t gid =
      m_.op(spv::Op::CompositeExtract, i64(), {m_.op(spv::Op::Load, gidT, {groupSize_ ? widVar : gidVar}), 0});
  if (groupSize_) lid_ = m_.op(spv::Op::CompositeExtract, i64(), {m_.op(spv::Op::Load, gidT, {lidVar}), 0});
  if (groupSize_) {
    // No early return in group mode: PoCL 6.0 crashes (SIGSEGV) running a kernel whose
    // barriers sit behind a conditional return, uniform or not (measured); the launch has
    // exactly one work-group per point, so there is nothing to guard. A failure outside the
    // loops sets this flag instead (failWith).
    groupFailed_ = m_.localVariable(boolT());
    m_.emit(spv::Op::Store, {groupFailed_, m_.constBool(false)});
  } else {
    const uint32_t past = m_.op(spv::Op::UGreaterThanEqual, boolT(), {gid, materialize(total)});
    const uint32_t ret = m_.newId(), go = m_.newId();
    m_.emit(spv::Op::SelectionMerge, {go, spv::kSelectionControlNone});
    m_.emit(spv::Op::BranchConditional, {past, ret, go});
    m_.label(ret);
    m_.emit(spv::Op::Return, {});
    m_.label(go);
  }
  grid_.assign(rank, 0);
  uint32_t rest = gid;
  for (size_t d = rank; d-- > 0;) {  // the last dim varies fastest
    if (d == 0) {
      grid_[0] = rest;
      break;
    }
    const uint32_t n = materialize(sizes[d]);
    grid_[d] = m_.op(spv::Op::UMod, i64(), {rest, n});
    rest = m_.op(spv::Op::UDiv, i64(), {rest, n});
  }

  for (const sdk::StmtRef s : k_.body()) {
    sdk::Status st = statement(s.stmt(), s.position());
    if (!st.isOk()) return st;
  }
  closeSkips();
  m_.emit(spv::Op::Return, {});
  m_.endFunction();
  return sdk::Status::ok();
}

sdk::Status KernelLowering::statement(const plugsdk_stmt_t& s, size_t pos) {
  auto set = [&](sdk::StatusOr<uint32_t> v) -> sdk::Status {
    if (!v.isOk()) return v.status();
    values_[static_cast<size_t>(s.result)] = *v;
    if (groupSize_ && !spreading_) defined_.push_back(s.result);
    return sdk::Status::ok();
  };
  switch (s.kind) {
    case PLUGSDK_STMT_LOAD: syncBeforeReading(s.arg); return set(load(s, pos));
    case PLUGSDK_STMT_CONST: {
      const uint32_t t = computeType(s.dtype);
      if (!t) return fail(pos, "a constant of dtype " + std::to_string(s.dtype));
      if (s.dtype == PLUGSDK_DTYPE_BOOL) return set(m_.constBool(s.ivalue != 0));
      if (lowering::isFloatDtype(s.dtype)) return set(roundTo(m_.constFloat(t, s.fvalue), s.dtype));
      return set(m_.constInt(t, static_cast<uint64_t>(s.ivalue)));
    }
    case PLUGSDK_STMT_INDEX: {
      sdk::StatusOr<Idx> x = index(s.index);
      if (!x.isOk()) return x.status();
      return set(materialize(*x));
    }
    case PLUGSDK_STMT_SCALAR: return set(scalarOp(s, pos));
    case PLUGSDK_STMT_WHERE:
      return set(m_.op(spv::Op::Select, computeType(s.dtype),
                       {value(s.operands[0]), value(s.operands[1]), value(s.operands[2])}));
    case PLUGSDK_STMT_CAST: return set(cast(s, pos));
    case PLUGSDK_STMT_RAND: {
      sdk::StatusOr<Idx> x = index(s.index);
      if (!x.isOk()) return x.status();
      if (!lowering::isFloatDtype(s.dtype)) return fail(pos, "rand of a non-floating dtype");
      return set(rand(s, materialize(*x)));
    }
    case PLUGSDK_STMT_STORE:
      if (!groupSize_) return store(s, pos);
      written_.insert(s.arg);
      if (spreading_) return store(s, pos);
      return onFirstWorkItem([&] { return store(s, pos); });
    case PLUGSDK_STMT_LOOP:
      closeSkips();  // group mode: loops start at a point every work-item reaches
      for (size_t i = pos + 1; i <= pos + s.body_count; ++i)
        if (k_.stmt(i).kind == PLUGSDK_STMT_LOAD) syncBeforeReading(k_.stmt(i).arg);
      return loop(s, pos);
    case PLUGSDK_STMT_REDUCE: return fail(pos, "a reduce outside a loop body");
    case PLUGSDK_STMT_CHECK:
      failWith(m_.op(spv::Op::LogicalNot, boolT(), {value(s.operands[0])}),
               kStatusCheckBase + static_cast<int32_t>(checkOrdinal_[pos]));
      return sdk::Status::ok();
    default: return fail(pos, "statement kind " + std::to_string(s.kind) + " is unknown");
  }
}

sdk::StatusOr<SpirvKernel> lowerKernel(const sdk::KernelView& k, const std::string& entry, uint32_t groupSize,
                                       bool contiguousChunks, uint32_t subgroupSlots) {
  Module m;
  KernelLowering l(m, k, groupSize, contiguousChunks, groupSize ? subgroupSlots : 0);
  sdk::Status st = l.run(entry);
  if (!st.isOk()) return st;
  SpirvKernel out;
  out.words = m.words();
  out.entry = entry;
  out.checkMessages = l.checkMessages;
  out.numArgs = k.numArgs();
  out.numSymbols = k.numSymbols();
  out.groupSize = groupSize;
  return out;
}

sdk::StatusOr<SpirvKernel> compileKernel(const sdk::KernelView& k, const std::string& entry,
                                         const CompileOptions& options) {
  const uint32_t g = chooseMapping(k, options.maxGroupSize).groupSize;
  const uint32_t slots =
      options.minSubgroupSize ? std::max<uint32_t>(1, g / std::min(options.minSubgroupSize, std::max(g, 1u))) : 0;
  sdk::StatusOr<SpirvKernel> out = lowerKernel(k, entry, g, options.contiguousChunks, slots);
  if (!out.isOk()) return out;
  const std::string what = "kernel @" + std::string(k.name());
  sdk::Status st = validate(out->words, what, options.env);
  if (!st.isOk()) return st;
  if (options.optimize) {
    sdk::StatusOr<std::vector<uint32_t>> o = optimize(out->words, what, kernelPasses(), options.env);
    if (!o.isOk()) return o.status();
    out->words = std::move(*o);
  }
  return out;
}

}  // namespace plugsdk::level_zero::spirv
