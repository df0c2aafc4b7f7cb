// Which dims a reduction op reduces, read from its "dim" attribute the same way by inference
// (reduction.cc) and by the reference kernels (kernels_reduction.cc).
#pragma once

#include <string>
#include <vector>

#include "core/ir/op_registry.h"
#include "core/ir/shape_rules.h"

namespace plugsdk::ops::red {

/// A mask over the input dims: true where the op reduces. By the schema's "dim" argument:
/// absent (whole-tensor ops), none, or an empty int[] reduce every dim; `int dim` one dim;
/// `int[] dim` a list of distinct dims. Dims are wrapped (negative counts from the end); a
/// rank-0 input accepts dim 0 or -1 and gives an empty mask.
inline StatusOr<std::vector<bool>> reducedDims(const ir::AttrReader& attrs, int64_t rank) {
  std::vector<bool> all(static_cast<size_t>(rank), true);
  const ir::ArgSpec* spec = attrs.schema().findArg("dim");
  if (!spec) return all;
  const ir::Attribute& a = attrs.attr("dim");
  if (a.isNone()) return all;
  std::vector<int64_t> dims;
  if (spec->type == ir::ArgType::kIntList) {
    auto list = a.asIntList();
    if (!list) return attrs.error("dim must be a list of constant ints, got " + a.toString());
    if (list->empty()) return all;
    dims = *list;
  } else {
    dims.assign(1, attrs.getInt("dim"));
  }
  auto wrapped = ir::wrapDims(dims, rank);
  if (!wrapped.isOk()) return attrs.error(wrapped.status().message());
  std::vector<bool> mask(static_cast<size_t>(rank), false);
  for (int64_t d : *wrapped)
    if (rank > 0) mask[static_cast<size_t>(d)] = true;
  return mask;
}

}  // namespace plugsdk::ops::red
