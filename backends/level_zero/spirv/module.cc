// The SPIR-V module writer (module.h): words, ids, deduplicated types and constants.
#include "backends/level_zero/spirv/module.h"

#include <cassert>
#include <cstring>

namespace plugsdk::level_zero::spirv {

namespace {

// Dedup keys carry a section tag so that a decoration and a type with equal operands differ.
enum Section : uint32_t { kCapability = 1, kExtension, kImport, kDecoration, kTypeOrConstant };

}  // namespace

void Module::append(Words& out, spv::Op code, const std::vector<uint32_t>& operands) {
  const uint32_t count = static_cast<uint32_t>(operands.size()) + 1;
  out.push_back((count << 16) | static_cast<uint32_t>(code));
  out.insert(out.end(), operands.begin(), operands.end());
}

void Module::appendString(std::vector<uint32_t>& operands, const std::string& s) {
  // UTF-8, NUL-terminated, padded with NULs to a whole word; little-endian within a word.
  const size_t words = s.size() / 4 + 1;
  for (size_t w = 0; w < words; ++w) {
    uint32_t word = 0;
    for (size_t b = 0; b < 4; ++b) {
      const size_t i = w * 4 + b;
      if (i < s.size()) word |= static_cast<uint32_t>(static_cast<unsigned char>(s[i])) << (8 * b);
    }
    operands.push_back(word);
  }
}

void Module::setType(uint32_t id, uint32_t type) {
  if (valueTypes_.size() <= id) valueTypes_.resize(id + 1, 0);
  valueTypes_[id] = type;
}

void Module::capability(spv::Capability c) {
  std::vector<uint32_t> key{kCapability, static_cast<uint32_t>(c)};
  if (!dedup_.emplace(key, 0).second) return;
  append(capabilities_, spv::Op::Capability, {static_cast<uint32_t>(c)});
}

void Module::extension(const std::string& name) {
  std::vector<uint32_t> operands;
  appendString(operands, name);
  std::vector<uint32_t> key{kExtension};
  key.insert(key.end(), operands.begin(), operands.end());
  if (!dedup_.emplace(key, 0).second) return;
  append(extensions_, spv::Op::Extension, operands);
}

uint32_t Module::extInstImport(const std::string& name) {
  std::vector<uint32_t> operands;
  appendString(operands, name);
  std::vector<uint32_t> key{kImport};
  key.insert(key.end(), operands.begin(), operands.end());
  auto it = dedup_.find(key);
  if (it != dedup_.end()) return it->second;
  const uint32_t id = newId();
  dedup_.emplace(key, id);
  operands.insert(operands.begin(), id);
  append(imports_, spv::Op::ExtInstImport, operands);
  return id;
}

void Module::memoryModel(spv::AddressingModel a, spv::MemoryModel m) {
  memoryModel_.clear();
  append(memoryModel_, spv::Op::MemoryModel, {static_cast<uint32_t>(a), static_cast<uint32_t>(m)});
}

void Module::entryPoint(spv::ExecutionModel model, uint32_t function, const std::string& name,
                        const std::vector<uint32_t>& interface) {
  std::vector<uint32_t> operands{static_cast<uint32_t>(model), function};
  appendString(operands, name);
  operands.insert(operands.end(), interface.begin(), interface.end());
  append(entryPoints_, spv::Op::EntryPoint, operands);
}

void Module::executionMode(uint32_t function, spv::ExecutionMode mode, const std::vector<uint32_t>& literals) {
  std::vector<uint32_t> operands{function, static_cast<uint32_t>(mode)};
  operands.insert(operands.end(), literals.begin(), literals.end());
  append(executionModes_, spv::Op::ExecutionMode, operands);
}

void Module::name(uint32_t target, const std::string& name) {
  std::vector<uint32_t> operands{target};
  appendString(operands, name);
  append(names_, spv::Op::Name, operands);
}

void Module::decorate(uint32_t target, spv::Decoration d, const std::vector<uint32_t>& literals) {
  std::vector<uint32_t> operands{target, static_cast<uint32_t>(d)};
  operands.insert(operands.end(), literals.begin(), literals.end());
  std::vector<uint32_t> key{kDecoration};
  key.insert(key.end(), operands.begin(), operands.end());
  if (!dedup_.emplace(key, 0).second) return;
  append(decorations_, spv::Op::Decorate, operands);
}

uint32_t Module::typeOrConstant(spv::Op code, uint32_t resultType, const std::vector<uint32_t>& operands) {
  std::vector<uint32_t> key{kTypeOrConstant, static_cast<uint32_t>(code), resultType};
  key.insert(key.end(), operands.begin(), operands.end());
  auto it = dedup_.find(key);
  if (it != dedup_.end()) return it->second;
  const uint32_t id = newId();
  dedup_.emplace(key, id);
  std::vector<uint32_t> all;
  if (resultType) all.push_back(resultType);
  all.push_back(id);
  all.insert(all.end(), operands.begin(), operands.end());
  append(globals_, code, all);
  if (resultType) setType(id, resultType);
  return id;
}

uint32_t Module::typeVoid() {
  const uint32_t id = typeOrConstant(spv::Op::TypeVoid, 0, {});
  types_[id] = TypeInfo{spv::Op::TypeVoid, 0, 0};
  return id;
}

uint32_t Module::typeBool() {
  const uint32_t id = typeOrConstant(spv::Op::TypeBool, 0, {});
  types_[id] = TypeInfo{spv::Op::TypeBool, 0, 0};
  return id;
}

uint32_t Module::typeInt(uint32_t width) {
  const uint32_t id = typeOrConstant(spv::Op::TypeInt, 0, {width, 0});
  types_[id] = TypeInfo{spv::Op::TypeInt, width, 0};
  return id;
}

uint32_t Module::typeFloat(uint32_t width) {
  const uint32_t id = typeOrConstant(spv::Op::TypeFloat, 0, {width});
  types_[id] = TypeInfo{spv::Op::TypeFloat, width, 0};
  return id;
}

uint32_t Module::typeVector(uint32_t element, uint32_t count) {
  const uint32_t id = typeOrConstant(spv::Op::TypeVector, 0, {element, count});
  types_[id] = TypeInfo{spv::Op::TypeVector, count, element};
  return id;
}

uint32_t Module::typeArray(uint32_t element, uint32_t count) {
  const uint32_t length = constInt(typeInt(32), count);
  const uint32_t id = typeOrConstant(spv::Op::TypeArray, 0, {element, length});
  types_[id] = TypeInfo{spv::Op::TypeArray, count, element};
  return id;
}

uint32_t Module::typePointer(spv::StorageClass sc, uint32_t pointee) {
  const uint32_t id = typeOrConstant(spv::Op::TypePointer, 0, {static_cast<uint32_t>(sc), pointee});
  types_[id] = TypeInfo{spv::Op::TypePointer, 0, pointee};
  return id;
}

uint32_t Module::typeFunction(uint32_t result, const std::vector<uint32_t>& params) {
  std::vector<uint32_t> operands{result};
  operands.insert(operands.end(), params.begin(), params.end());
  const uint32_t id = typeOrConstant(spv::Op::TypeFunction, 0, operands);
  types_[id] = TypeInfo{spv::Op::TypeFunction, 0, 0};
  return id;
}

const TypeInfo& Module::typeInfo(uint32_t type) const {
  static const TypeInfo kNone;
  auto it = types_.find(type);
  return it == types_.end() ? kNone : it->second;
}

uint32_t Module::constInt(uint32_t type, uint64_t value) {
  const uint32_t width = typeInfo(type).width;
  // Kernel integer types are unsigned-in-encoding: the high bits of a narrow literal are 0.
  if (width < 64) value &= (uint64_t{1} << width) - 1;
  if (width > 32)
    return typeOrConstant(spv::Op::Constant, type, {static_cast<uint32_t>(value), static_cast<uint32_t>(value >> 32)});
  return typeOrConstant(spv::Op::Constant, type, {static_cast<uint32_t>(value)});
}

uint32_t Module::constFloat(uint32_t type, double value) {
  if (typeInfo(type).width == 64) {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return typeOrConstant(spv::Op::Constant, type, {static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32)});
  }
  const auto f = static_cast<float>(value);
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  return typeOrConstant(spv::Op::Constant, type, {bits});
}

uint32_t Module::constBool(bool value) {
  return typeOrConstant(value ? spv::Op::ConstantTrue : spv::Op::ConstantFalse, typeBool(), {});
}

uint32_t Module::constNull(uint32_t type) { return typeOrConstant(spv::Op::ConstantNull, type, {}); }

uint32_t Module::globalVariable(uint32_t pointerType, spv::StorageClass sc) {
  const uint32_t id = newId();
  append(globals_, spv::Op::Variable, {pointerType, id, static_cast<uint32_t>(sc)});
  setType(id, pointerType);
  return id;
}

uint32_t Module::beginFunction(uint32_t resultType, uint32_t functionType) {
  assert(!inFunction_ && "spirv::Module: one function at a time");
  inFunction_ = true;
  firstLabel_ = true;
  fnHeader_.clear();
  fnVariables_.clear();
  fnBody_.clear();
  const uint32_t id = newId();
  append(fnHeader_, spv::Op::Function, {resultType, id, spv::kFunctionControlNone, functionType});
  return id;
}

uint32_t Module::parameter(uint32_t type) {
  const uint32_t id = newId();
  append(fnHeader_, spv::Op::FunctionParameter, {type, id});
  setType(id, type);
  return id;
}

uint32_t Module::localVariable(uint32_t pointee) {
  const uint32_t ptr = typePointer(spv::StorageClass::Function, pointee);
  const uint32_t id = newId();
  append(fnVariables_, spv::Op::Variable, {ptr, id, static_cast<uint32_t>(spv::StorageClass::Function)});
  setType(id, ptr);
  return id;
}

void Module::label(uint32_t id) {
  // The first label goes into the header so that the variables follow it.
  append(firstLabel_ ? fnHeader_ : fnBody_, spv::Op::Label, {id});
  firstLabel_ = false;
  block_ = id;
}

uint32_t Module::op(spv::Op code, uint32_t resultType, std::initializer_list<uint32_t> operands) {
  return op(code, resultType, std::vector<uint32_t>(operands));
}

uint32_t Module::op(spv::Op code, uint32_t resultType, const std::vector<uint32_t>& operands) {
  const uint32_t id = newId();
  std::vector<uint32_t> all{resultType, id};
  all.insert(all.end(), operands.begin(), operands.end());
  append(fnBody_, code, all);
  setType(id, resultType);
  return id;
}

void Module::emit(spv::Op code, std::initializer_list<uint32_t> operands) {
  emit(code, std::vector<uint32_t>(operands));
}

void Module::emit(spv::Op code, const std::vector<uint32_t>& operands) { append(fnBody_, code, operands); }

void Module::endFunction() {
  functions_.insert(functions_.end(), fnHeader_.begin(), fnHeader_.end());
  functions_.insert(functions_.end(), fnVariables_.begin(), fnVariables_.end());
  functions_.insert(functions_.end(), fnBody_.begin(), fnBody_.end());
  append(functions_, spv::Op::FunctionEnd, {});
  inFunction_ = false;
}

std::vector<uint32_t> Module::words() const {
  std::vector<uint32_t> out{spv::kMagic, spv::kVersion1_0, spv::kGenerator, nextId_, 0};
  for (const Words* s : {&capabilities_, &extensions_, &imports_, &memoryModel_, &entryPoints_, &executionModes_,
                         &names_, &decorations_, &globals_, &functions_})
    out.insert(out.end(), s->begin(), s->end());
  return out;
}

}  // namespace plugsdk::level_zero::spirv
