// The library kernels' shared module builder (tiled_kernel.h).
#include "backends/level_zero/library/tiled_kernel.h"

#include "backends/level_zero/spirv/validate.h"

namespace plugsdk::level_zero::library {

TiledKernel::TiledKernel(const std::string& entry, std::array<uint32_t, 3> local,
                         const std::vector<KernelArg>& params) {
  m.capability(spv::Capability::Addresses);
  m.capability(spv::Capability::Kernel);
  m.capability(spv::Capability::Int64);
  m.memoryModel(spv::AddressingModel::Physical64, spv::MemoryModel::OpenCL);
  i64 = m.typeInt(64);
  u32 = m.typeInt(32);
  f32 = m.typeFloat(32);
  bt = m.typeBool();
  gptr = m.typePointer(spv::StorageClass::CrossWorkgroup, f32);
  lptr = m.typePointer(spv::StorageClass::Workgroup, f32);
  std::vector<uint32_t> types;
  for (const KernelArg& p : params) {
    if (p.kind == KernelArg::kU8Pointer && !u8) {
      m.capability(spv::Capability::Int8);
      u8 = m.typeInt(8);
      u8ptr_ = m.typePointer(spv::StorageClass::CrossWorkgroup, u8);
    }
    types.push_back(p.kind == KernelArg::kF32Pointer ? gptr : p.kind == KernelArg::kU8Pointer ? u8ptr_ : i64);
  }
  const uint32_t voidT = m.typeVoid();
  const uint32_t fnT = m.typeFunction(voidT, types);
  const uint32_t v3 = m.typeVector(i64, 3);
  auto builtin = [&](spv::BuiltIn b, const char* name) {
    const uint32_t v = m.globalVariable(m.typePointer(spv::StorageClass::Input, v3), spv::StorageClass::Input);
    m.decorate(v, spv::Decoration::BuiltIn, {static_cast<uint32_t>(b)});
    m.decorate(v, spv::Decoration::Constant);
    m.name(v, name);
    return v;
  };
  const uint32_t lidVar = builtin(spv::BuiltIn::LocalInvocationId, "local_id");
  const uint32_t widVar = builtin(spv::BuiltIn::WorkgroupId, "group_id");

  const uint32_t fn = m.beginFunction(voidT, fnT);
  m.name(fn, entry);
  for (size_t i = 0; i < params.size(); ++i) {
    params_.push_back(m.parameter(types[i]));
    m.name(params_.back(), params[i].name);
  }
  m.entryPoint(spv::ExecutionModel::Kernel, fn, entry, {lidVar, widVar});
  m.executionMode(fn, spv::ExecutionMode::LocalSize, {local[0], local[1], local[2]});
  m.executionMode(fn, spv::ExecutionMode::ContractionOff);

  m.label(m.newId());
  const uint32_t lid = op(spv::Op::Load, v3, {lidVar}), wid = op(spv::Op::Load, v3, {widVar});
  lx = op(spv::Op::CompositeExtract, i64, {lid, 0});
  ly = op(spv::Op::CompositeExtract, i64, {lid, 1});
  gx = op(spv::Op::CompositeExtract, i64, {wid, 0});
  gy = op(spv::Op::CompositeExtract, i64, {wid, 1});
  gz = op(spv::Op::CompositeExtract, i64, {wid, 2});
}

uint32_t TiledKernel::shared(uint32_t count, const std::string& name) {
  const uint32_t v = m.globalVariable(m.typePointer(spv::StorageClass::Workgroup, m.typeArray(f32, count)),
                                      spv::StorageClass::Workgroup);
  m.name(v, name);
  return v;
}

uint32_t TiledKernel::ext(spv::OpenCLStd f, std::initializer_list<uint32_t> args) {
  if (!openclStd_) openclStd_ = m.extInstImport("OpenCL.std");
  std::vector<uint32_t> operands{openclStd_, static_cast<uint32_t>(f)};
  operands.insert(operands.end(), args.begin(), args.end());
  return m.op(spv::Op::ExtInst, f32, operands);
}

namespace {

std::vector<uint32_t> aligned(std::initializer_list<uint32_t> xs, uint32_t bytes) {
  std::vector<uint32_t> v(xs);
  v.push_back(spv::kMemoryAccessAligned);
  v.push_back(bytes);
  return v;
}

}  // namespace

uint32_t TiledKernel::loadOrZero(uint32_t ok, uint32_t ptr, uint32_t index) {
  const uint32_t i = op(spv::Op::Select, i64, {ok, index, cI(0)});
  const uint32_t v = m.op(spv::Op::Load, f32, aligned({op(spv::Op::InBoundsPtrAccessChain, gptr, {ptr, i})}, 4));
  return op(spv::Op::Select, f32, {ok, v, cF(0)});
}

uint32_t TiledKernel::loadU8OrZero(uint32_t ok, uint32_t ptr, uint32_t index) {
  const uint32_t i = op(spv::Op::Select, i64, {ok, index, cI(0)});
  const uint32_t v = m.op(spv::Op::Load, u8, aligned({op(spv::Op::InBoundsPtrAccessChain, u8ptr_, {ptr, i})}, 1));
  return op(spv::Op::Select, u8, {ok, v, m.constInt(u8, 0)});
}

void TiledKernel::storeGlobal(uint32_t ptr, uint32_t index, uint32_t value) {
  m.emit(spv::Op::Store, aligned({op(spv::Op::InBoundsPtrAccessChain, gptr, {ptr, index}), value}, 4));
}

void TiledKernel::barrier() {
  const uint32_t wg = m.constInt(u32, spv::kScopeWorkgroup);
  m.emit(spv::Op::ControlBarrier, {wg, wg, m.constInt(u32, spv::kSemanticsGroupBarrier)});
}

TiledKernel::Values TiledKernel::loop(uint32_t from, uint32_t end, uint32_t step, const Values& init,
                                      const std::function<Values(uint32_t, const Values&)>& body) {
  const uint32_t header = m.newId(), first = m.newId(), cont = m.newId(), merge = m.newId();
  const uint32_t pre = m.currentBlock();
  // The continue block's ids, named by the header's phis before they are defined.
  const uint32_t iNext = m.newId();
  Values next;
  for (size_t k = 0; k < init.size(); ++k) next.push_back(m.newId());
  m.emit(spv::Op::Branch, {header});
  m.label(header);
  const uint32_t i = op(spv::Op::Phi, i64, {from, pre, iNext, cont});
  Values carried;
  for (size_t k = 0; k < init.size(); ++k)
    carried.push_back(op(spv::Op::Phi, m.typeOf(init[k]), {init[k], pre, next[k], cont}));
  const uint32_t more = lt(i, end);  // the merge instruction must come right before the branch
  m.emit(spv::Op::LoopMerge, {merge, cont, spv::kLoopControlNone});
  m.emit(spv::Op::BranchConditional, {more, first, merge});
  m.label(first);
  const Values out = body(i, carried);
  const uint32_t last = m.currentBlock();
  m.emit(spv::Op::Branch, {cont});
  m.label(cont);
  // The body's values under the ids the header's phis name (a phi of one incoming edge).
  for (size_t k = 0; k < init.size(); ++k) m.emit(spv::Op::Phi, {m.typeOf(init[k]), next[k], out[k], last});
  m.emit(spv::Op::IAdd, {i64, iNext, i, step});
  m.emit(spv::Op::Branch, {header});
  m.label(merge);
  return carried;
}

TiledKernel::Values TiledKernel::when(uint32_t cond, const Values& otherwise, const std::function<Values()>& body) {
  const uint32_t then = m.newId(), merge = m.newId();
  const uint32_t pre = m.currentBlock();
  m.emit(spv::Op::SelectionMerge, {merge, spv::kSelectionControlNone});
  m.emit(spv::Op::BranchConditional, {cond, then, merge});
  m.label(then);
  const Values got = body();
  const uint32_t last = m.currentBlock();
  m.emit(spv::Op::Branch, {merge});
  m.label(merge);
  Values out;
  for (size_t k = 0; k < otherwise.size(); ++k)
    out.push_back(op(spv::Op::Phi, m.typeOf(otherwise[k]), {got[k], last, otherwise[k], pre}));
  return out;
}

sdk::StatusOr<std::vector<uint32_t>> TiledKernel::finish(const std::string& what) {
  m.emit(spv::Op::Return, {});
  m.endFunction();
  std::vector<uint32_t> words = m.words();
  sdk::Status st = spirv::validate(words, what);
  if (!st.isOk()) return st;
  return words;
}

}  // namespace plugsdk::level_zero::library
