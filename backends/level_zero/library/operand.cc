// Library call operands: copies and launch-time values (operand.h).
#include "backends/level_zero/library/operand.h"

namespace plugsdk::level_zero::library {

OperandDesc copyOperand(const plugsdk_tensor_desc_t& d) {
  OperandDesc o;
  o.dtype = d.dtype;
  o.sizes.assign(d.sizes, d.sizes + d.rank);
  o.strides.assign(d.strides, d.strides + d.rank);
  o.offset = d.offset;
  return o;
}

sdk::StatusOr<OperandValues> evalOperand(const std::string& what, const OperandDesc& d,
                                         sdk::Span<const plugsdk_index_insn_t> pool, const sdk::IndexEnv& env) {
  OperandValues v;
  for (size_t i = 0; i < d.sizes.size(); ++i) {
    sdk::StatusOr<int64_t> n = sdk::evalIndex(pool, d.sizes[i], env);
    if (!n.isOk()) return n.status().withContext(what + " size " + std::to_string(i));
    sdk::StatusOr<int64_t> s = sdk::evalIndex(pool, d.strides[i], env);
    if (!s.isOk()) return s.status().withContext(what + " stride " + std::to_string(i));
    v.sizes.push_back(*n);
    v.strides.push_back(*s);
  }
  sdk::StatusOr<int64_t> o = sdk::evalIndex(pool, d.offset, env);
  if (!o.isOk()) return o.status().withContext(what + " offset");
  v.offset = *o;
  return v;
}

}  // namespace plugsdk::level_zero::library
