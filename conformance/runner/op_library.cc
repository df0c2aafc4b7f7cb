// The op tier's library family: prims.matmul, prims.convolution and prims.sdpa (the ops a
// backend may take whole through compile_library), directly and through the ATen ops that
// decompose into them (aten.mm, aten.addmm, aten.bmm, aten.convolution,
// aten.scaled_dot_product_attention). Matmul: odd sizes, transposed and offset operands,
// batches and broadcast batches, empty M and K; convolution: 1-d, 2-d, 3-d with strides,
// padding, dilation, groups, transposed, channels-last views; sdpa: causal (also L > S), bool
// and additive masks, scale, dropout, odd and length-1 sequences.
//
// Tolerances: small-integer data is exact in any order of accumulation, so it must be exact;
// random data gets |err| <= (K + 1) u sum_k |a_k| |b_k| per element (K products per output);
// sdpa gets |err| <= (4 u_out + 2 (E + S) u_acc) max(1, max |reference|) (docs/conformance.md).
#include <algorithm>
#include <cmath>

#include "conformance/runner/op_common.h"

namespace plugsdk::conformance::op {
namespace {

/// Small integers whose K-term dot products are exact in the dtype (and in f32 accumulators).
Fill exactDotFill(DType t, int64_t k) {
  if (!ir::isFloating(t)) return Fill::fullRange().mixed();  // integers wrap: exact in any order
  const double lim = std::floor(std::sqrt(1.0 / unitRoundoff(t) / static_cast<double>(std::max<int64_t>(k, 1))));
  const double m = std::clamp(lim, 1.0, 4.0);
  return Fill::ints(-m, m);
}

struct Operand {
  std::vector<int64_t> shape;  ///< as stored in the graph input
  std::string view;            ///< a view line producing %Nv from %N, or empty
};

/// A case on `t`: operands (a view each, or none), the body calling the op on %a/%av etc.
OpSpec libraryCase(DType t, const std::vector<std::pair<std::string, Operand>>& ops, const std::string& call,
                   const std::string& results, Fill fill, ToleranceRule tol) {
  std::vector<std::pair<std::string, std::string>> inputs;
  std::vector<std::string> lines;
  std::vector<Fill> fills;
  for (const auto& [name, op] : ops) {
    inputs.emplace_back(name, typeText(t, op.shape));
    if (!op.view.empty()) lines.push_back(op.view);
    fills.push_back(fill);
  }
  lines.push_back(call);
  return {graphText(inputs, lines, results), fills, std::move(tol)};
}

// ---- matmul ----------------------------------------------------------------------------------

struct MatmulShape {
  std::string name;
  std::vector<int64_t> batch;
  int64_t m, k, n;
  bool ta = false, tb = false;  ///< read a (b) through a transpose of its stored [K, M] ([N, K])
  bool offsetA = false;         ///< read a as a slice (offset and row stride) of a larger tensor
  bool broadcastB = false;      ///< b is [1, K, N] broadcast along the batch
};

std::vector<int64_t> cat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void addMatmul(Suite& s) {
  const std::vector<MatmulShape> shapes = {
      {"odd_17x33x65", {}, 17, 33, 65},
      {"odd_17x33x65_transposed_a", {}, 17, 33, 65, true},
      {"odd_17x33x65_transposed_b", {}, 17, 33, 65, false, true},
      {"odd_17x33x65_transposed_ab", {}, 17, 33, 65, true, true},
      {"offset_9x17x15", {}, 9, 17, 15, false, false, true},
      {"square_64", {}, 64, 64, 64},
      {"vector_1x129x1", {}, 1, 129, 1},
      {"tall_129x7x9", {}, 129, 7, 9},
      {"k_1_7x1x9", {}, 7, 1, 9},
      {"k_0_7x0x9", {}, 7, 0, 9},
      {"m_0_0x5x9", {}, 0, 5, 9},
      {"batched_3x17x33x9", {3}, 17, 33, 9},
      {"batched_transposed_b_3x9x17x5", {3}, 9, 17, 5, false, true},
      {"rank_4_2x3x9x17x5", {2, 3}, 9, 17, 5},
      {"broadcast_batch_3x9x17x5", {3}, 9, 17, 5, false, false, false, true},
  };
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI64, DType::kI32, DType::kI16,
                  DType::kI8, DType::kU8}) {
    const bool fl = ir::isFloating(t);
    for (const MatmulShape& m : shapes) {
      if (t != DType::kF32 && m.name != "odd_17x33x65" && m.name != "odd_17x33x65_transposed_b" &&
          m.name != "batched_3x17x33x9" && m.name != "k_0_7x0x9")
        continue;
      const size_t r = m.batch.size();
      Operand a{m.ta ? cat(m.batch, {m.k, m.m}) : cat(m.batch, {m.m, m.k}), ""};
      Operand b{m.tb ? cat(m.batch, {m.n, m.k}) : cat(m.batch, {m.k, m.n}), ""};
      std::vector<int64_t> swap;
      for (size_t i = 0; i < r; ++i) swap.push_back(static_cast<int64_t>(i));
      swap.push_back(static_cast<int64_t>(r) + 1);
      swap.push_back(static_cast<int64_t>(r));
      if (m.ta) a.view = "%av = prims.permute(%a) {dims = " + listText(swap) + "}";
      if (m.tb) b.view = "%bv = prims.permute(%b) {dims = " + listText(swap) + "}";
      if (m.offsetA) {
        a.shape = {m.m + 3, m.k + 6};
        a.view = "%av = prims.slice(%a) {limit_indices = " + listText({m.m + 2, m.k + 5}) + ", start_indices = [2, 5]}";
      }
      if (m.broadcastB) {
        b.shape = {1, m.k, m.n};
        b.view = "%bv = prims.broadcast_in_dim(%b) {broadcast_dimensions = [0, 1, 2], shape = " +
                 listText(cat(m.batch, {m.k, m.n})) + "}";
      }
      const std::string call = std::string("%y = prims.matmul(") + (a.view.empty() ? "%a" : "%av") + ", " +
                               (b.view.empty() ? "%b" : "%bv") + ")";
      const std::string prefix = "matmul." + dt(t) + "." + m.name;
      addCase(s, prefix + (fl ? "_exact" : ""),
              libraryCase(t, {{"a", a}, {"b", b}}, call, "%y", exactDotFill(t, m.k), exact()));
      if (fl)
        addCase(
            s, prefix,
            libraryCase(t, {{"a", a}, {"b", b}}, call, "%y", Fill::normal(), absBound(static_cast<double>(m.k + 1))));
      // ABI 1.2: f16/bf16 operands, the f32 accumulator as the result (bounds in f32 units).
      if (t == DType::kF16 || t == DType::kBF16) {
        const std::string mixed = call + " {dtype = f32}";
        const std::string mixedPrefix = "matmul." + dt(t) + "_to_f32." + m.name;
        addCase(s, mixedPrefix + "_exact",
                libraryCase(t, {{"a", a}, {"b", b}}, mixed, "%y", exactDotFill(DType::kF32, m.k), exact()));
        addCase(
            s, mixedPrefix,
            libraryCase(t, {{"a", a}, {"b", b}}, mixed, "%y", Fill::normal(), absBound(static_cast<double>(m.k + 1))));
      }
    }
  }
  // NaN and infinities in the operands reach exactly the outputs they should
  OpSpec special = libraryCase(DType::kF32, {{"a", {{17, 33}, ""}}, {"b", {{33, 9}, ""}}}, "%y = prims.matmul(%a, %b)",
                               "%y", Fill::normal(), absBound(34));
  special.fills[0] = Fill::normal().mixed().withoutHuge();
  addCase(s, "matmul.f32.special_17x33x9", special);
}

// ---- convolution -----------------------------------------------------------------------------

struct Conv {
  std::string name;
  std::vector<int64_t> x, w;
  std::vector<int64_t> stride, padding, dilation, outputPadding;
  int64_t groups = 1;
  bool transposed = false;
  bool channelsLast = false;  ///< x stored [N, spatial..., C] and permuted to [N, C, spatial...]
};

/// Terms per output element: (input channels per group) x kernel volume.
int64_t convTerms(const Conv& c) {
  int64_t vol = 1;
  for (size_t i = 2; i < c.w.size(); ++i) vol *= c.w[i];
  return (c.transposed ? c.w[0] / c.groups : c.w[1]) * vol;
}

std::string boolText(bool b) { return b ? "true" : "false"; }

void addConvolution(Suite& s) {
  const std::vector<Conv> convs = {
      {"2d_3x3_pad_1", {2, 3, 9, 9}, {5, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}},
      {"2d_stride_padding", {1, 4, 17, 15}, {8, 4, 3, 5}, {2, 3}, {1, 2}, {1, 1}, {0, 0}},
      {"2d_dilation_groups", {1, 6, 13, 13}, {9, 2, 3, 3}, {1, 1}, {2, 1}, {2, 2}, {0, 0}, 3},
      {"2d_1x1", {2, 17, 9, 9}, {33, 17, 1, 1}, {1, 1}, {0, 0}, {1, 1}, {0, 0}},
      {"2d_channels_last", {1, 9, 9, 3}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, false, true},
      {"1d", {3, 5, 65}, {7, 5, 3}, {1}, {0}, {1}, {0}},
      {"1d_depthwise_stride", {2, 4, 33}, {4, 1, 5}, {2}, {2}, {1}, {0}, 4},
      {"3d", {1, 3, 5, 7, 9}, {4, 3, 2, 3, 3}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}, {0, 0, 0}},
      {"2d_transposed", {1, 4, 5, 7}, {4, 3, 3, 3}, {2, 2}, {1, 0}, {1, 1}, {1, 0}, 1, true},
      {"1d_transposed_groups_dilation", {1, 4, 9}, {4, 2, 3}, {3}, {1}, {2}, {2}, 2, true},
      {"3d_transposed", {1, 2, 3, 4, 5}, {2, 3, 2, 2, 2}, {2, 1, 2}, {0, 1, 0}, {1, 1, 1}, {1, 0, 0}, 1, true},
      {"2d_transposed_channels_last", {2, 5, 7, 4}, {4, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, true, true},
      {"2d_transposed_groups_batch", {3, 6, 6, 5}, {6, 2, 3, 2}, {2, 1}, {1, 0}, {1, 2}, {1, 0}, 3, true},
      // Wide rows and 8+ output channels per group, as real layers have: the shapes a
      // backend's fast paths take (the small cases above may all fall back to a simple one).
      {"2d_3x3_wide", {2, 5, 12, 30}, {16, 5, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}},
      {"2d_7x7_stride_2", {2, 3, 20, 40}, {8, 3, 7, 7}, {2, 2}, {3, 3}, {1, 1}, {0, 0}},
      {"2d_1x1_stride_2", {2, 8, 10, 20}, {16, 8, 1, 1}, {2, 2}, {0, 0}, {1, 1}, {0, 0}},
      {"2d_dilation_groups_wide", {1, 4, 10, 40}, {16, 2, 3, 3}, {1, 1}, {2, 2}, {2, 2}, {0, 0}, 2},
      {"2d_channels_last_wide", {1, 12, 30, 5}, {8, 5, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1, false, true},
      {"1d_wide", {2, 6, 100}, {12, 6, 5}, {1}, {2}, {1}, {0}},
      {"3d_wide", {1, 3, 3, 4, 60}, {8, 3, 2, 1, 3}, {1, 1, 1}, {0, 0, 1}, {1, 1, 1}, {0, 0, 0}},
  };
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI64, DType::kI32}) {
    const bool fl = ir::isFloating(t);
    for (const Conv& c : convs) {
      if (t != DType::kF32 && c.name != "2d_stride_padding" && c.name != "2d_transposed" && c.name != "1d" &&
          c.name != "2d_7x7_stride_2")
        continue;
      Operand x{c.x, ""};
      if (c.channelsLast) {
        std::vector<int64_t> perm = {0, static_cast<int64_t>(c.x.size()) - 1};
        for (int64_t i = 1; i + 1 < static_cast<int64_t>(c.x.size()); ++i) perm.push_back(i);
        x.view = "%xv = prims.permute(%x) {dims = " + listText(perm) + "}";
      }
      const std::string call = std::string("%y = prims.convolution(") + (x.view.empty() ? "%x" : "%xv") +
                               ", %w) {dilation = " + listText(c.dilation) + ", groups = " + std::to_string(c.groups) +
                               ", output_padding = " + listText(c.outputPadding) +
                               ", padding = " + listText(c.padding) + ", stride = " + listText(c.stride) +
                               ", transposed = " + boolText(c.transposed) + "}";
      const std::string prefix = "convolution." + dt(t) + "." + c.name;
      const int64_t k = convTerms(c);
      addCase(s, prefix + (fl ? "_exact" : ""),
              libraryCase(t, {{"x", x}, {"w", {c.w, ""}}}, call, "%y", exactDotFill(t, k), exact()));
      if (fl)
        addCase(s, prefix,
                libraryCase(t, {{"x", x}, {"w", {c.w, ""}}}, call, "%y", Fill::normal(),
                            absBound(static_cast<double>(k + 1))));
    }
  }
}

// ---- sdpa ------------------------------------------------------------------------------------

/// |err| <= (4 u_out + 2 (E + S) u_acc) max(1, max |reference|) per output, E the head size
/// and S the key length; u_acc is f32's unit roundoff (f64's for f64). See docs/conformance.md.
ToleranceRule sdpaTolerance() {
  return [](const CaseData& d) -> StatusOr<std::vector<Tolerance>> {
    const auto& q = d.inputs.at(0);
    const auto& k = d.inputs.at(1);
    const double e = static_cast<double>(q.shape().back()), len = static_cast<double>(k.shape()[k.shape().size() - 2]);
    const double uacc = unitRoundoff(q.dtype() == DType::kF64 ? DType::kF64 : DType::kF32);
    std::vector<Tolerance> out;
    for (const ir::Value* v : d.graph.outputs())
      out.push_back(Tolerance::relativeToMax(4 * unitRoundoff(v->type().dtype) + 2 * (e + len) * uacc));
    return out;
  };
}

struct Attention {
  std::string name;
  std::vector<int64_t> q, k, v;
  std::string mask;  ///< "", "bool" or "float": a mask of shape [..., L, S]
  std::string attrs;
};

void addSdpa(Suite& s) {
  const std::vector<Attention> cases = {
      {"basic_2x3x17x33", {2, 3, 17, 16}, {2, 3, 33, 16}, {2, 3, 33, 8}, "", ""},
      {"causal_2x17", {2, 17, 8}, {2, 17, 8}, {2, 17, 8}, "", "is_causal = true"},
      {"causal_l_gt_s", {1, 9, 8}, {1, 5, 8}, {1, 5, 4}, "", "is_causal = true"},
      {"bool_mask", {2, 9, 8}, {2, 17, 8}, {2, 17, 8}, "bool", ""},
      {"additive_mask", {2, 9, 8}, {2, 17, 8}, {2, 17, 8}, "float", ""},
      {"scale_0.3", {4, 7, 5}, {4, 7, 5}, {4, 7, 3}, "", "scale = 0.3"},
      {"length_1", {1, 1, 8}, {1, 1, 8}, {1, 1, 8}, "", ""},
      {"odd_65x63", {1, 65, 17}, {1, 63, 17}, {1, 63, 9}, "", "is_causal = true"},
      {"dropout", {2, 9, 8}, {2, 17, 8}, {2, 17, 8}, "", "dropout_p = 0.25, seed = 11"},
  };
  for (DType t : kFloatTypes)
    for (const Attention& a : cases) {
      if (t != DType::kF32 && a.name != "basic_2x3x17x33" && a.name != "causal_2x17" && a.name != "bool_mask") continue;
      std::vector<std::pair<std::string, std::string>> inputs = {
          {"q", typeText(t, a.q)}, {"k", typeText(t, a.k)}, {"v", typeText(t, a.v)}};
      std::vector<Fill> fills = {Fill::normal(), Fill::normal(), Fill::normal()};
      if (!a.mask.empty()) {
        std::vector<int64_t> ms = a.q;
        ms.back() = a.k[a.k.size() - 2];
        inputs.emplace_back("m", typeText(a.mask == "bool" ? DType::kBool : t, ms));
        fills.push_back(a.mask == "bool" ? Fill::bools() : Fill::normal());
      }
      const std::string call = "%o, %l = prims.sdpa(%q, %k, %v, " + std::string(a.mask.empty() ? "none" : "%m") + ")" +
                               (a.attrs.empty() ? "" : " {" + a.attrs + "}");
      addCase(s, "sdpa." + dt(t) + "." + a.name, {graphText(inputs, {call}, "%o, %l"), fills, sdpaTolerance()});
    }
}

// ---- sdpa_backward ---------------------------------------------------------------------------

/// The gradients of q, k and v: |err| <= (8 u_out + 4 (E + S + Ev) u_acc) max(1, max |reference|)
/// per gradient. Twice the forward's budget on each term: the backward rounds twice as often
/// (out enters D = rowsum(dO * out); P and dS are rounded to the operands' dtype for their
/// products, as flash attention does) and sums over both sequence lengths.
ToleranceRule sdpaBackwardTolerance() {
  return [](const CaseData& d) -> StatusOr<std::vector<Tolerance>> {
    const auto& q = d.inputs.at(0);
    const auto& k = d.inputs.at(1);
    const auto& v = d.inputs.at(2);
    const double sum = static_cast<double>(q.shape().back() + k.shape()[k.shape().size() - 2] + v.shape().back());
    const double uacc = unitRoundoff(q.dtype() == DType::kF64 ? DType::kF64 : DType::kF32);
    std::vector<Tolerance> out;
    for (const ir::Value* o : d.graph.outputs())
      out.push_back(Tolerance::relativeToMax(8 * unitRoundoff(o->type().dtype) + 4 * sum * uacc));
    return out;
  };
}

/// The forward and its backward in one graph, as a training step has them: the backward reads
/// the forward's out and logsumexp, so a device that takes both runs its own pair.
void addSdpaBackward(Suite& s) {
  const std::vector<Attention> cases = {
      {"basic_2x3x17x33", {2, 3, 17, 16}, {2, 3, 33, 16}, {2, 3, 33, 8}, "", ""},
      {"causal_2x17", {2, 17, 8}, {2, 17, 8}, {2, 17, 8}, "", "is_causal = true"},
      {"heads_2x4x50x64", {2, 4, 50, 64}, {2, 4, 50, 64}, {2, 4, 50, 64}, "", ""},
      {"causal_l_gt_s", {1, 9, 8}, {1, 5, 8}, {1, 5, 8}, "", "is_causal = true"},
      {"bool_mask", {2, 9, 8}, {2, 17, 8}, {2, 17, 8}, "bool", ""},
      {"additive_mask", {2, 9, 8}, {2, 17, 8}, {2, 17, 8}, "float", ""},
      {"scale_0.3", {4, 7, 5}, {4, 7, 5}, {4, 7, 3}, "", "scale = 0.3"},
      {"length_1", {1, 1, 8}, {1, 1, 8}, {1, 1, 8}, "", ""},
      {"dropout", {2, 9, 8}, {2, 17, 8}, {2, 17, 8}, "", "dropout_p = 0.25, seed = 11"},
  };
  for (DType t : kFloatTypes)
    for (const Attention& a : cases) {
      const bool everyDtype = a.name == "basic_2x3x17x33" || a.name == "causal_2x17" || a.name == "heads_2x4x50x64";
      if (t != DType::kF32 && !everyDtype) continue;
      std::vector<int64_t> os = a.q;
      os.back() = a.v.back();
      std::vector<std::pair<std::string, std::string>> inputs = {
          {"q", typeText(t, a.q)}, {"k", typeText(t, a.k)}, {"v", typeText(t, a.v)}, {"g", typeText(t, os)}};
      std::vector<Fill> fills = {Fill::normal(), Fill::normal(), Fill::normal(), Fill::normal()};
      if (!a.mask.empty()) {
        std::vector<int64_t> ms = a.q;
        ms.back() = a.k[a.k.size() - 2];
        inputs.emplace_back("m", typeText(a.mask == "bool" ? DType::kBool : t, ms));
        fills.push_back(a.mask == "bool" ? Fill::bools() : Fill::normal());
      }
      const std::string mask = a.mask.empty() ? "none" : "%m", attrs = a.attrs.empty() ? "" : " {" + a.attrs + "}";
      const std::vector<std::string> body = {
          "%o, %l = prims.sdpa(%q, %k, %v, " + mask + ")" + attrs,
          "%dq, %dk, %dv = prims.sdpa_backward(%g, %q, %k, %v, %o, %l, " + mask + ")" + attrs};
      addCase(s, "sdpa_backward." + dt(t) + "." + a.name,
              {graphText(inputs, body, "%dq, %dk, %dv"), fills, sdpaBackwardTolerance()});
    }
}

// ---- through ATen ----------------------------------------------------------------------------

void addAten(Suite& s) {
  const DType t = DType::kF32;
  addCase(s, "matmul.f32.aten_mm_17x33x9",
          {graphText({{"a", "f32[17, 33]"}, {"b", "f32[33, 9]"}}, {"%y = aten.mm(%a, %b)"}, "%y"),
           {Fill::normal(), Fill::normal()},
           absBound(34)});
  // bias: one more term per element
  addCase(
      s, "matmul.f32.aten_addmm_17x33x9",
      {graphText({{"c", "f32[9]"}, {"a", "f32[17, 33]"}, {"b", "f32[33, 9]"}}, {"%y = aten.addmm(%c, %a, %b)"}, "%y"),
       {Fill::normal(), Fill::normal(), Fill::normal()},
       absBound(35)});
  addCase(s, "matmul.f32.aten_bmm_3x9x17x5_exact",
          {graphText({{"a", "f32[3, 9, 17]"}, {"b", "f32[3, 17, 5]"}}, {"%y = aten.bmm(%a, %b)"}, "%y"),
           {exactDotFill(t, 17), exactDotFill(t, 17)}});
  addCase(s, "convolution.f32.aten_convolution_bias",
          {graphText({{"x", "f32[2, 3, 9, 9]"}, {"w", "f32[5, 3, 3, 3]"}, {"b", "f32[5]"}},
                     {"%y = aten.convolution(%x, %w, %b) {dilation = [1, 1], groups = 1, output_padding = [0, 0], "
                      "padding = [1, 1], stride = [2, 2], transposed = false}"},
                     "%y"),
           {Fill::normal(), Fill::normal(), Fill::normal()},
           absBound(29)});
  addCase(s, "sdpa.f32.aten_scaled_dot_product_attention_causal",
          {graphText({{"q", "f32[2, 3, 17, 8]"}, {"k", "f32[2, 3, 17, 8]"}, {"v", "f32[2, 3, 17, 8]"}},
                     {"%y = aten.scaled_dot_product_attention(%q, %k, %v, none) {is_causal = true}"}, "%y"),
           {Fill::normal(), Fill::normal(), Fill::normal()},
           sdpaTolerance()});
}

}  // namespace

void addLibraryCases(Suite& s) {
  addMatmul(s);
  addConvolution(s);
  addSdpa(s);
  addSdpaBackward(s);
  addAten(s);
}

}  // namespace plugsdk::conformance::op
