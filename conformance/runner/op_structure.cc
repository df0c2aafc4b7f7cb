// The op tier's structure and data-movement family: the 8 structure prims (broadcast_in_dim,
// reshape, permute, slice, rev, pad, concat, as_strided), gather and scatter, and the
// generators iota, full and rand, in every dtype each accepts. None of them computes a
// floating value (scatter's reductions use data that is exact in any order, and rand is
// specified bit for bit), so every case is exact: a moved element must arrive with its NaN,
// its infinity and the sign of its zero.
#include <algorithm>
#include <numeric>

#include "conformance/runner/op_common.h"

namespace plugsdk::conformance::op {
namespace {

/// Data that shows where every element went: specials, then random values of the dtype.
Fill moveFill(DType t) {
  if (t == DType::kBool) return Fill::bools();
  return ir::isFloating(t) ? Fill::normal(100).mixed() : Fill::fullRange().mixed();
}

/// A padding value literal of the dtype (ints and bool cannot take a float literal).
std::string padValue(DType t, bool nan) {
  if (t == DType::kBool) return "true";
  if (ir::isFloating(t)) return nan ? "nan" : "-1.5";
  return t == DType::kU8 ? "255" : "-7";
}

/// One structure variant: name, input shapes, body (with the input names %a, %b, %c).
struct Variant {
  std::string name;
  std::vector<std::vector<int64_t>> inputs;
  std::string body;
  bool everyDtype = false;  ///< run in all ten dtypes, not only f32, i64 and bool
};

std::vector<Variant> structureVariants(DType t) {
  const std::string pv = padValue(t, false), pn = padValue(t, true);
  return {
      {"broadcast_in_dim.new_and_size1_dims",
       {{1, 17}},
       "prims.broadcast_in_dim(%a) {broadcast_dimensions = [0, 2], shape = [9, 5, 17]}",
       true},
      {"broadcast_in_dim.trailing", {{33}}, "prims.broadcast_in_dim(%a) {broadcast_dimensions = [0], shape = [33, 9]}"},
      {"broadcast_in_dim.rank_0", {{}}, "prims.broadcast_in_dim(%a) {broadcast_dimensions = [], shape = [7, 9]}"},
      {"broadcast_in_dim.to_empty", {{1}}, "prims.broadcast_in_dim(%a) {broadcast_dimensions = [1], shape = [0, 3]}"},
      {"reshape.transpose_shape", {{9, 17}}, "prims.reshape(%a) {shape = [17, 9]}", true},
      {"reshape.flatten_1025", {{5, 5, 41}}, "prims.reshape(%a) {shape = [1025]}"},
      {"reshape.empty", {{0, 3}}, "prims.reshape(%a) {shape = [3, 0]}"},
      {"reshape.rank_0", {{}}, "prims.reshape(%a) {shape = [1, 1]}"},
      {"permute.rank_3", {{5, 7, 9}}, "prims.permute(%a) {dims = [2, 0, 1]}", true},
      {"permute.rank_4", {{3, 1, 5, 9}}, "prims.permute(%a) {dims = [3, 1, 0, 2]}"},
      {"permute.transpose_33x65", {{33, 65}}, "prims.permute(%a) {dims = [1, 0]}"},
      {"slice.offset_strided",
       {{33, 40}},
       "prims.slice(%a) {limit_indices = [30, 37], start_indices = [1, 3], strides = [2, 3]}",
       true},
      {"slice.rank_3",
       {{5, 9, 17}},
       "prims.slice(%a) {limit_indices = [4, 9, 16], start_indices = [1, 0, 1], strides = [1, 2, 1]}"},
      {"slice.empty", {{4, 9}}, "prims.slice(%a) {limit_indices = [2, 9], start_indices = [2, 0]}"},
      {"slice.stride_past_limit",
       {{1025}},
       "prims.slice(%a) {limit_indices = [1025], start_indices = [3], strides = [100]}"},
      {"rev.last_dim", {{9, 17}}, "prims.rev(%a) {dims = [1]}", true},
      {"rev.two_dims", {{5, 7, 9}}, "prims.rev(%a) {dims = [0, 2]}"},
      {"rev.size_1025", {{1025}}, "prims.rev(%a) {dims = [0]}"},
      {"pad.low_high_interior",
       {{7, 9}},
       "prims.pad(%a) {high = [3, 0], interior = [0, 1], low = [1, 2], padding_value = " + pv + "}",
       true},
      {"pad.nan_value", {{9}}, "prims.pad(%a) {high = [5], low = [2], padding_value = " + pn + "}"},
      {"pad.empty_with_interior",
       {{0, 3}},
       "prims.pad(%a) {high = [1, 0], interior = [3, 2], low = [1, 0], padding_value = " + pv + "}"},
      {"concat.dim_0", {{9, 17}, {1, 17}, {7, 17}}, "prims.concat(%a, %b, %c) {dim = 0}", true},
      {"concat.dim_1_empty_piece", {{9, 3}, {9, 0}, {9, 14}}, "prims.concat(%a, %b, %c) {dim = 1}"},
      {"as_strided.offset", {{40}}, "prims.as_strided(%a) {size = [7, 5], storage_offset = 3, stride = [5, 1]}", true},
      {"as_strided.overlapping_windows",
       {{35}},
       "prims.as_strided(%a) {size = [9, 9], storage_offset = 2, stride = [3, 1]}"},
      {"as_strided.zero_stride", {{17}}, "prims.as_strided(%a) {size = [9, 3], storage_offset = 14, stride = [0, 1]}"},
      {"as_strided.transpose", {{9, 17}}, "prims.as_strided(%a) {size = [17, 9], stride = [1, 17]}"},
  };
}

void addStructure(Suite& s) {
  for (DType t : kAllTypes)
    for (const Variant& v : structureVariants(t)) {
      if (!v.everyDtype && t != DType::kF32 && t != DType::kI64 && t != DType::kBool) continue;
      std::vector<std::pair<std::string, std::string>> inputs;
      std::vector<Fill> fills;
      for (size_t i = 0; i < v.inputs.size(); ++i) {
        inputs.emplace_back(std::string(1, static_cast<char>('a' + i)), typeText(t, v.inputs[i]));
        fills.push_back(moveFill(t));
      }
      const size_t dot = v.name.find('.');
      addCase(s, v.name.substr(0, dot) + "." + dt(t) + v.name.substr(dot),
              {graphText(inputs, {"%y = " + v.body}, "%y"), fills});
    }
}

/// Scatter with reduce none: unique indices along dim 1 in every row, so no write races.
void uniqueRows(std::vector<exec::HostTensor>& in, std::mt19937_64& rng) {
  exec::HostTensor& index = in[1];
  const int64_t rows = index.shape()[0], cols = index.shape()[1], size = in[0].shape()[1];
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> perm(static_cast<size_t>(size));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (int64_t c = 0; c < cols; ++c) index.setInt(r * cols + c, perm[static_cast<size_t>(c)]);
  }
}

void addGatherScatter(Suite& s) {
  for (DType t : kAllTypes)
    for (DType it : {DType::kI64, DType::kI32}) {
      const std::string prefix = dt(t) + ".";
      const std::string ix = it == DType::kI64 ? "" : "_i32_index";
      const Fill data = moveFill(t);
      addCase(s, "gather." + prefix + "dim_1_repeats" + ix,
              {graphText({{"a", typeText(t, {9, 17})}, {"i", typeText(it, {9, 33})}},
                         {"%y = prims.gather(%a, %i) {dim = 1}"}, "%y"),
               {data, Fill::ints(0, 16)}});
      if (it == DType::kI32 && t != DType::kF32) continue;
      addCase(s, "gather." + prefix + "dim_0" + ix,
              {graphText({{"a", typeText(t, {9, 17})}, {"i", typeText(it, {4, 15})}},
                         {"%y = prims.gather(%a, %i) {dim = 0}"}, "%y"),
               {data, Fill::ints(0, 8)}});
      addCase(s, "gather." + prefix + "empty_index" + ix,
              {graphText({{"a", typeText(t, {9, 17})}, {"i", typeText(it, {0, 17})}},
                         {"%y = prims.gather(%a, %i) {dim = 0}"}, "%y"),
               {data, Fill::ints(0, 8)}});
    }
  for (DType t : kAllTypes) {
    const std::string prefix = "scatter." + dt(t) + ".";
    const std::string a = typeText(t, {9, 17}), src = typeText(t, {9, 5}), idx = typeText(DType::kI64, {9, 5});
    addCase(s, prefix + "none_unique",
            {graphText({{"a", a}, {"i", idx}, {"s", src}}, {"%y = prims.scatter(%a, %i, %s) {dim = 1}"}, "%y"),
             {moveFill(t), Fill::ints(0, 16), moveFill(t)},
             exact(),
             uniqueRows});
    if (t == DType::kBool) continue;
    for (const char* red : {"sum", "prod", "amax", "amin"}) {
      // duplicate indices: floats take small integers for sum and prod (exact in any order of
      // accumulation), and no -0.0 for amax and amin (either zero may win a tie)
      const bool arith = std::string(red) == "sum" || std::string(red) == "prod";
      Fill f = !ir::isFloating(t) ? Fill::fullRange().mixed()
               : arith            ? Fill::ints(-2, 2)
                                  : Fill::normal().mixed().withoutNegZero();
      addCase(
          s, prefix + red + "_duplicates",
          {graphText({{"a", typeText(t, {9, 17})}, {"i", typeText(DType::kI64, {9, 33})}, {"s", typeText(t, {9, 33})}},
                     {std::string("%y = prims.scatter(%a, %i, %s) {dim = 1, reduce = \"") + red + "\"}"}, "%y"),
           {f, Fill::ints(0, 16), f}});
    }
  }
}

void addGenerators(Suite& s) {
  for (DType t : kIntTypes) {
    const std::string prefix = "iota." + dt(t) + ".";
    addCase(
        s, prefix + "size_1025",
        {graphText({}, {"%y = prims.iota() {dtype = " + dt(t) + ", length = 1025, start = -7, step = 3}"}, "%y"), {}});
    addCase(s, prefix + "wraps",
            {graphText({}, {"%y = prims.iota() {dtype = " + dt(t) + ", length = 33, start = 100, step = 1000000007}"},
                       "%y"),
             {}});
    addCase(s, prefix + "empty", {graphText({}, {"%y = prims.iota() {dtype = " + dt(t) + ", length = 0}"}, "%y"), {}});
  }
  for (DType t : kAllTypes) {
    const std::string prefix = "full." + dt(t) + ".";
    std::vector<std::pair<std::string, std::string>> values;
    if (ir::isFloating(t)) {
      // a denormal of the dtype (f64 1e-310, f32 and bf16 1e-40, f16 1e-5): flushed to 0 is wrong
      const char* denormal = t == DType::kF64 ? "1e-310" : t == DType::kF16 ? "1e-05" : "1e-40";
      values = {{"0.1", "rounds"}, {"-0.0", "neg_zero"}, {"nan", "nan"},
                {"1e300", "big"},  {"-inf", "neg_inf"},  {denormal, "denormal"}};
    } else if (t == DType::kBool)
      values = {{"true", "true"}, {"0.5", "float_to_bool"}};
    else
      values = {{"-3", "negative"}, {"300", "wraps"}};
    for (const auto& [value, name] : values)
      addCase(
          s, prefix + name + "_1025",
          {graphText({}, {"%y = prims.full() {dtype = " + dt(t) + ", shape = [1025], value = " + value + "}"}, "%y"),
           {}});
    addCase(s, prefix + "empty",
            {graphText({}, {"%y = prims.full() {dtype = " + dt(t) + ", shape = [0, 3], value = 1}"}, "%y"), {}});
    addCase(s, prefix + "rank_0",
            {graphText({}, {"%y = prims.full() {dtype = " + dt(t) + ", shape = [], value = 1}"}, "%y"), {}});
  }
  // rand is specified bit for bit (a counter-based generator), so it is compared exactly
  for (DType t : kFloatTypes) {
    const std::string prefix = "rand." + dt(t) + ".";
    addCase(s, prefix + "size_1025",
            {graphText({}, {"%y = prims.rand() {dtype = " + dt(t) + ", seed = 42, shape = [1025]}"}, "%y"), {}});
    addCase(
        s, prefix + "rank_2_offset",
        {graphText({}, {"%y = prims.rand() {dtype = " + dt(t) + ", offset = 1000, seed = -1, shape = [33, 17]}"}, "%y"),
         {}});
  }
}

}  // namespace

void addStructureCases(Suite& s) {
  addStructure(s);
  addGatherScatter(s);
  addGenerators(s);
}

}  // namespace plugsdk::conformance::op
