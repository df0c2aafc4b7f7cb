// The SPIR-V module writer and SPIRV-Tools around it: a hand-built vector add validates in the
// OpenCL environment and disassembles as written; types, constants and capabilities are
// deduplicated; a corrupted module (a flipped opcode, a dropped type) is rejected with the
// validator's message, the reproducing command and the disassembly in the error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/level_zero/spirv/module.h"
#include "backends/level_zero/spirv/validate.h"

namespace plugsdk::level_zero::spirv {
namespace {

/// c[i] = a[i] + b[i] for i = the global id (no bounds guard: the launch sizes it).
std::vector<uint32_t> vectorAdd(bool shaderToo = false) {
  Module m;
  m.capability(spv::Capability::Addresses);
  m.capability(spv::Capability::Kernel);
  m.capability(spv::Capability::Int64);
  if (shaderToo) m.capability(static_cast<spv::Capability>(1));  // Shader: not an OpenCL capability
  m.memoryModel(spv::AddressingModel::Physical64, spv::MemoryModel::OpenCL);
  const uint32_t f32 = m.typeFloat(32), i64 = m.typeInt(64);
  const uint32_t ptr = m.typePointer(spv::StorageClass::CrossWorkgroup, f32);
  const uint32_t v3 = m.typeVector(i64, 3);
  const uint32_t gid = m.globalVariable(m.typePointer(spv::StorageClass::Input, v3), spv::StorageClass::Input);
  m.decorate(gid, spv::Decoration::BuiltIn, {static_cast<uint32_t>(spv::BuiltIn::GlobalInvocationId)});
  const uint32_t voidT = m.typeVoid();
  const uint32_t fn = m.beginFunction(voidT, m.typeFunction(voidT, {ptr, ptr, ptr}));
  const uint32_t a = m.parameter(ptr), b = m.parameter(ptr), c = m.parameter(ptr);
  m.name(fn, "vadd");
  m.name(a, "a");
  m.name(b, "b");
  m.name(c, "c");
  m.entryPoint(spv::ExecutionModel::Kernel, fn, "vadd", {gid});
  m.label(m.newId());
  const uint32_t i = m.op(spv::Op::CompositeExtract, i64, {m.op(spv::Op::Load, v3, {gid}), 0});
  auto at = [&](uint32_t base) { return m.op(spv::Op::InBoundsPtrAccessChain, ptr, {base, i}); };
  const uint32_t x = m.op(spv::Op::Load, f32, {at(a), spv::kMemoryAccessAligned, 4});
  const uint32_t y = m.op(spv::Op::Load, f32, {at(b), spv::kMemoryAccessAligned, 4});
  m.emit(spv::Op::Store, {at(c), m.op(spv::Op::FAdd, f32, {x, y}), spv::kMemoryAccessAligned, 4});
  m.emit(spv::Op::Return, {});
  m.endFunction();
  return m.words();
}

/// The position of the first instruction with `opcode` (its first word), or words.size().
size_t find(const std::vector<uint32_t>& words, spv::Op opcode) {
  for (size_t at = 5; at < words.size(); at += words[at] >> 16)
    if ((words[at] & 0xffff) == static_cast<uint32_t>(opcode)) return at;
  return words.size();
}

TEST(SpirvModule, VectorAddValidatesAndDisassembles) {
  const std::vector<uint32_t> words = vectorAdd();
  EXPECT_EQ(words[0], spv::kMagic);
  EXPECT_EQ(words[1], 0x00010000u) << "SPIR-V 1.0";
  sdk::Status st = validate(words, "vadd");
  ASSERT_TRUE(st.isOk()) << st.message();
  sdk::StatusOr<std::string> text = disassemble(words);
  ASSERT_TRUE(text.isOk()) << text.status().message();
  EXPECT_NE(text->find("OpCapability Kernel"), std::string::npos) << *text;
  EXPECT_NE(text->find("OpMemoryModel Physical64 OpenCL"), std::string::npos) << *text;
  EXPECT_NE(text->find("OpEntryPoint Kernel %vadd \"vadd\""), std::string::npos) << *text;
  EXPECT_NE(text->find("OpDecorate %gl_GlobalInvocationID BuiltIn GlobalInvocationId"), std::string::npos) << *text;
  EXPECT_NE(text->find("%c = OpFunctionParameter %_ptr_CrossWorkgroup_float"), std::string::npos) << *text;
  EXPECT_NE(text->find("OpFAdd %float"), std::string::npos) << *text;
  EXPECT_NE(text->find("OpLoad %float %"), std::string::npos) << *text;
  EXPECT_NE(text->find("Aligned 4"), std::string::npos) << *text;
}

TEST(SpirvModule, TypesConstantsAndCapabilitiesAreDeduplicated) {
  Module m;
  m.capability(spv::Capability::Kernel);
  m.capability(spv::Capability::Kernel);
  const uint32_t i32 = m.typeInt(32);
  EXPECT_EQ(m.typeInt(32), i32);
  EXPECT_NE(m.typeInt(64), i32);
  const uint32_t f32 = m.typeFloat(32);
  EXPECT_NE(f32, i32);
  EXPECT_EQ(m.typePointer(spv::StorageClass::CrossWorkgroup, f32),
            m.typePointer(spv::StorageClass::CrossWorkgroup, f32));
  EXPECT_NE(m.typePointer(spv::StorageClass::CrossWorkgroup, f32), m.typePointer(spv::StorageClass::Function, f32));
  EXPECT_EQ(m.constInt(i32, 7), m.constInt(i32, 7));
  EXPECT_NE(m.constInt(i32, 7), m.constInt(m.typeInt(64), 7));
  EXPECT_NE(m.constFloat(f32, 1.0), m.constInt(i32, 0x3f800000)) << "same bits, different types";
  EXPECT_EQ(m.constBool(true), m.constBool(true));
  EXPECT_NE(m.constBool(true), m.constBool(false));
  EXPECT_EQ(m.typeOf(m.constInt(i32, 3)), i32);
  // A narrow negative constant keeps only its width's bits (Kernel ints are signless).
  const uint32_t i8 = m.typeInt(8);
  EXPECT_EQ(m.constInt(i8, static_cast<uint64_t>(-1)), m.constInt(i8, 0xff));
  const uint32_t ext1 = m.extInstImport("OpenCL.std");
  EXPECT_EQ(m.extInstImport("OpenCL.std"), ext1);
  const std::vector<uint32_t> w = m.words();
  size_t caps = 0;
  for (size_t at = 5; at < w.size(); at += w[at] >> 16) caps += (w[at] & 0xffff) == 17;
  EXPECT_EQ(caps, 1u);
}

TEST(SpirvModule, FlippedOpcodeIsRejectedWithTheValidatorsMessage) {
  std::vector<uint32_t> words = vectorAdd();
  const size_t at = find(words, spv::Op::FAdd);
  ASSERT_LT(at, words.size());
  words[at] = (words[at] & 0xffff0000u) | static_cast<uint32_t>(spv::Op::IAdd);  // an integer add of floats
  sdk::Status st = validate(words, "kernel @vadd");
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), sdk::Code::kInternal);
  EXPECT_NE(st.message().find("kernel @vadd: the SPIR-V module is invalid (opencl2.0)"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("Expected int scalar or vector type as Result Type: IAdd"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("spirv-val --target-env opencl2.0"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("OpIAdd %float"), std::string::npos) << "the disassembly:\n" << st.message();
}

TEST(SpirvModule, DroppedTypeIsRejected) {
  std::vector<uint32_t> words = vectorAdd();
  const size_t at = find(words, spv::Op::TypeFloat);
  ASSERT_LT(at, words.size());
  words.erase(words.begin() + static_cast<std::ptrdiff_t>(at),
              words.begin() + static_cast<std::ptrdiff_t>(at + (words[at] >> 16)));
  const std::string message = validatorMessage(words);
  EXPECT_NE(message.find("requires a previous definition"), std::string::npos) << message;
  sdk::Status st = validate(words, "vadd");
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find(message), std::string::npos) << st.message();
}

TEST(SpirvModule, TruncatedModuleIsRejected) {
  std::vector<uint32_t> words = vectorAdd();
  words.resize(words.size() - 3);  // the function's last instructions cut off
  EXPECT_FALSE(validatorMessage(words).empty());
  EXPECT_FALSE(validate(words, "vadd").isOk());
}

// What the environments accept (docs/level-zero-backend.md): the OpenCL ones reject a
// capability OpenCL does not have, which the universal 1.0 environment lets through; all
// three take the valid module.
TEST(SpirvModule, OpenClEnvironmentsRejectWhatUniversalAccepts) {
  for (TargetEnv env : {TargetEnv::kOpenCL1_2, TargetEnv::kOpenCL2_0, TargetEnv::kUniversal1_0})
    EXPECT_EQ(validatorMessage(vectorAdd(), env), "") << targetEnvName(env);
  const std::vector<uint32_t> shader = vectorAdd(/*shaderToo=*/true);
  EXPECT_EQ(validatorMessage(shader, TargetEnv::kUniversal1_0), "");
  for (TargetEnv env : {TargetEnv::kOpenCL1_2, TargetEnv::kOpenCL2_0}) {
    const std::string m = validatorMessage(shader, env);
    EXPECT_NE(m.find("Shader"), std::string::npos) << targetEnvName(env) << ": " << m;
  }
}

}  // namespace
}  // namespace plugsdk::level_zero::spirv
