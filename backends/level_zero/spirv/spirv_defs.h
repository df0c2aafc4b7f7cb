// The few SPIR-V enumerants the module writer uses, with the values of the Khronos grammar
// (SPIR-V 1.0 unified spec, and the OpenCL.std extended instruction set). The toolbox has no
// spirv-headers package (SPIRV-Tools' Debian package ships none), so they are defined here
// rather than vendored; every value is checked by the validator and by the disassembly goldens.
#pragma once

#include <cstdint>

namespace plugsdk::level_zero::spv {

constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kVersion1_0 = 0x00010000;  ///< PoCL 6 takes SPIR-V 1.0-1.2
constexpr uint32_t kGenerator = 0;            ///< no registered generator id

enum class Op : uint16_t {
  Name = 5,
  Extension = 10,
  ExtInstImport = 11,
  ExtInst = 12,
  MemoryModel = 14,
  EntryPoint = 15,
  ExecutionMode = 16,
  Capability = 17,
  TypeVoid = 19,
  TypeBool = 20,
  TypeInt = 21,
  TypeFloat = 22,
  TypeVector = 23,
  TypeArray = 28,
  TypePointer = 32,
  TypeFunction = 33,
  ConstantTrue = 41,
  ConstantFalse = 42,
  Constant = 43,
  ConstantNull = 46,
  Function = 54,
  FunctionParameter = 55,
  FunctionEnd = 56,
  Variable = 59,
  Load = 61,
  Store = 62,
  AccessChain = 65,
  InBoundsPtrAccessChain = 70,
  Decorate = 71,
  CompositeExtract = 81,
  ConvertFToU = 109,
  ConvertFToS = 110,
  ConvertSToF = 111,
  ConvertUToF = 112,
  UConvert = 113,
  SConvert = 114,
  FConvert = 115,
  ConvertPtrToU = 117,
  ConvertUToPtr = 120,
  Bitcast = 124,
  SNegate = 126,
  FNegate = 127,
  IAdd = 128,
  FAdd = 129,
  ISub = 130,
  FSub = 131,
  IMul = 132,
  FMul = 133,
  UDiv = 134,
  SDiv = 135,
  FDiv = 136,
  UMod = 137,
  SRem = 138,
  IsNan = 156,
  Ordered = 162,
  Unordered = 163,
  LogicalEqual = 164,
  LogicalNotEqual = 165,
  LogicalOr = 166,
  LogicalAnd = 167,
  LogicalNot = 168,
  Select = 169,
  IEqual = 170,
  INotEqual = 171,
  UGreaterThan = 172,
  SGreaterThan = 173,
  UGreaterThanEqual = 174,
  SGreaterThanEqual = 175,
  ULessThan = 176,
  SLessThan = 177,
  ULessThanEqual = 178,
  SLessThanEqual = 179,
  FOrdEqual = 180,
  FUnordNotEqual = 183,
  FOrdLessThan = 184,
  FOrdGreaterThan = 186,
  FOrdLessThanEqual = 188,
  FOrdGreaterThanEqual = 190,
  ShiftRightLogical = 194,
  ShiftRightArithmetic = 195,
  GroupIAdd = 264,
  GroupFAdd = 265,
  ShiftLeftLogical = 196,
  BitwiseOr = 197,
  BitwiseXor = 198,
  BitwiseAnd = 199,
  Not = 200,
  ControlBarrier = 224,
  AtomicLoad = 227,
  AtomicCompareExchange = 230,
  AtomicIAdd = 234,
  AtomicSMin = 236,
  AtomicUMin = 237,
  AtomicSMax = 238,
  AtomicUMax = 239,
  Phi = 245,
  LoopMerge = 246,
  SelectionMerge = 247,
  Label = 248,
  Branch = 249,
  BranchConditional = 250,
  Return = 253,
};

enum class Capability : uint32_t {
  Addresses = 4,
  Linkage = 5,
  Kernel = 6,
  Float16Buffer = 8,
  Float64 = 10,
  Int64 = 11,
  Int64Atomics = 12,
  Groups = 18,
  Int16 = 22,
  Int8 = 39,
};

enum class AddressingModel : uint32_t { Physical64 = 2 };
enum class MemoryModel : uint32_t { OpenCL = 2 };
enum class ExecutionModel : uint32_t { Kernel = 6 };
enum class ExecutionMode : uint32_t { LocalSize = 17, ContractionOff = 31 };

enum class StorageClass : uint32_t {
  Input = 1,
  Workgroup = 4,
  CrossWorkgroup = 5,
  Function = 7,
};

enum class Decoration : uint32_t {
  BuiltIn = 11,
  Constant = 22,
  Alignment = 44,
};

enum class BuiltIn : uint32_t {
  WorkgroupId = 26,
  LocalInvocationId = 27,
  GlobalInvocationId = 28,
  NumSubgroups = 38,
  SubgroupId = 40,
  SubgroupLocalInvocationId = 41,
};

constexpr uint32_t kMemoryAccessAligned = 0x2;
constexpr uint32_t kScopeDevice = 1;
constexpr uint32_t kScopeWorkgroup = 2;
constexpr uint32_t kScopeSubgroup = 3;
constexpr uint32_t kGroupOperationReduce = 0;
/// A work-group barrier's memory semantics: SequentiallyConsistent | WorkgroupMemory |
/// CrossWorkgroupMemory (what OpenCL's barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE) is).
constexpr uint32_t kSemanticsGroupBarrier = 0x10 | 0x100 | 0x200;
constexpr uint32_t kSemanticsRelaxed = 0;
constexpr uint32_t kFunctionControlNone = 0;
constexpr uint32_t kSelectionControlNone = 0;
constexpr uint32_t kLoopControlNone = 0;

/// OpenCL.std extended instructions (the OpenCL extended instruction set, version 1.0).
enum class OpenCLStd : uint32_t {
  acos = 0,
  acosh = 1,
  asin = 3,
  asinh = 4,
  atan = 6,
  atan2 = 7,
  atanh = 8,
  ceil = 12,
  cos = 14,
  cosh = 15,
  erf = 18,
  exp = 19,
  expm1 = 22,
  fabs = 23,
  floor = 25,
  fmax = 27,
  fmod = 29,
  log = 37,
  log2 = 38,
  log1p = 40,
  pow = 48,
  rint = 53,
  sin = 57,
  sinh = 59,
  sqrt = 61,
  tan = 62,
  tanh = 63,
  trunc = 66,
  vload_half = 173,
  vstore_half_r = 176,
};

/// FPRoundingMode (vstore_half_r's mode operand).
constexpr uint32_t kRoundingModeRTE = 0;

}  // namespace plugsdk::level_zero::spv
