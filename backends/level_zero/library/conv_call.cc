// The convolution call's copy and its launches (conv_call.h).
#include "backends/level_zero/library/conv_call.h"

#include <algorithm>
#include <string>

#include "backends/level_zero/library/divide.h"
#include "plugsdk/library_attributes.hpp"

namespace plugsdk::level_zero::library {

sdk::StatusOr<ConvCall> ConvCall::from(const sdk::LibraryCall& c) {
  if (c.inputs.size() != 2 || c.outputs.size() != 1)
    return sdk::invalidArgument("prims.convolution takes 2 inputs and 1 output, not " +
                                std::to_string(c.inputs.size()) + " and " + std::to_string(c.outputs.size()));
  ConvCall v;
  v.pool.assign(c.indexPool.begin(), c.indexPool.end());
  v.x = copyOperand(c.inputs[0]);
  v.w = copyOperand(c.inputs[1]);
  v.out = copyOperand(c.outputs[0]);
  const size_t r = v.x.sizes.size();
  if (r < 3 || r > 5 || v.w.sizes.size() != r || v.out.sizes.size() != r)
    return sdk::invalidArgument("prims.convolution operands of ranks " + std::to_string(r) + ", " +
                                std::to_string(v.w.sizes.size()) + " -> " + std::to_string(v.out.sizes.size()) +
                                " (1 to 3 spatial dims, equal ranks)");
  for (const OperandDesc* o : {&v.x, &v.w, &v.out})
    if (o->dtype != PLUGSDK_DTYPE_F32)
      return sdk::unimplemented("the level_zero plugin's prims.convolution takes f32 only (dtype " +
                                std::to_string(o->dtype) + "; device_info.convolution_dtypes says so)");
  sdk::StatusOr<sdk::LibraryAttributes> a = sdk::LibraryAttributes::parse(std::string(c.attributes));
  if (!a.isOk()) return a.status().withContext("prims.convolution");
  sdk::StatusOr<bool> transposed = a->getBool("transposed");
  if (!transposed.isOk()) return transposed.status().withContext("prims.convolution");
  if (*transposed)
    return sdk::unimplemented(
        "a transposed prims.convolution (the level_zero plugin leaves them to the core: "
        "convolution_skips_transposed)");
  const size_t sd = r - 2;
  for (auto [name, to] :
       {std::pair{"stride", &v.stride}, std::pair{"padding", &v.padding}, std::pair{"dilation", &v.dilation}}) {
    sdk::StatusOr<std::vector<int64_t>> l = a->getInts(name);
    if (!l.isOk()) return sdk::unimplemented(l.status().message()).withContext("prims.convolution");
    if (l->size() == 1) l->assign(sd, (*l)[0]);
    if (l->size() != sd)
      return sdk::invalidArgument(std::string("prims.convolution: ") + name + " has " + std::to_string(l->size()) +
                                  " entries for " + std::to_string(sd) + " spatial dims");
    *to = *l;
  }
  for (size_t i = 0; i < sd; ++i)
    if (v.stride[i] < 1 || v.dilation[i] < 1 || v.padding[i] < 0)
      return sdk::invalidArgument("prims.convolution: stride " + std::to_string(v.stride[i]) + ", dilation " +
                                  std::to_string(v.dilation[i]) + ", padding " + std::to_string(v.padding[i]) +
                                  " in spatial dim " + std::to_string(i));
  sdk::StatusOr<int64_t> groups = a->getInt("groups");
  if (!groups.isOk()) return groups.status().withContext("prims.convolution");
  if (*groups < 1) return sdk::invalidArgument("prims.convolution: groups " + std::to_string(*groups));
  v.groups = *groups;
  return v;
}

sdk::StatusOr<std::vector<ConvLaunch>> planConvLaunches(const ConvCall& c, sdk::Span<const int64_t> symbols) {
  sdk::IndexEnv env;
  env.symbols = symbols;
  const sdk::Span<const plugsdk_index_insn_t> pool(c.pool.data(), c.pool.size());
  sdk::StatusOr<OperandValues> x = evalOperand("prims.convolution input", c.x, pool, env),
                               w = evalOperand("prims.convolution weight", c.w, pool, env),
                               y = evalOperand("prims.convolution result", c.out, pool, env);
  for (const auto* v : {&x, &w, &y})
    if (!v->isOk()) return v->status();
  const size_t sd = x->sizes.size() - 2;
  const int64_t g = c.groups;
  auto bad = [&](const std::string& what) {
    return sdk::invalidArgument("prims.convolution: " + what + " (input [" + std::to_string(x->sizes[0]) + ", " +
                                std::to_string(x->sizes[1]) + ", ...], weight [" + std::to_string(w->sizes[0]) + ", " +
                                std::to_string(w->sizes[1]) + ", ...], groups " + std::to_string(g) + ")");
  };
  if (y->sizes[0] != x->sizes[0]) return bad("the result's batch is not the input's");
  if (w->sizes[1] * g != x->sizes[1]) return bad("the weight's channels times groups are not the input's");
  if (y->sizes[1] != w->sizes[0] || w->sizes[0] % g != 0)
    return bad("the result's channels are not the weight's output channels (a multiple of groups)");
  for (size_t i = 0; i < sd; ++i) {
    const int64_t span = c.dilation[i] * (w->sizes[2 + i] - 1) + 1;
    const int64_t reach = x->sizes[2 + i] + 2 * c.padding[i] - span;
    const int64_t want = reach < 0 ? 0 : reach / c.stride[i] + 1;
    if (y->sizes[2 + i] != want)
      return bad("spatial dim " + std::to_string(i) + " of the result is " + std::to_string(y->sizes[2 + i]) +
                 ", the attributes give " + std::to_string(want));
  }
  // Three spatial dims, the missing ones unit dims in front (size 1, stride 0, no padding).
  const size_t lead = 3 - sd;
  auto spatial = [&](const OperandValues& v, const std::vector<int64_t>& attr, size_t d, bool sizes, int64_t unit) {
    if (d < lead) return unit;
    return sizes ? v.sizes[2 + d - lead] : attr.empty() ? v.strides[2 + d - lead] : attr[d - lead];
  };
  ConvLaunch base;
  int64_t* s = base.scalars.data();
  const int64_t ocg = w->sizes[0] / g, cg = w->sizes[1];
  int64_t ks = 1, p = 1;
  for (size_t d = 0; d < 3; ++d) {
    ks *= spatial(*w, {}, d, true, 1);
    p *= spatial(*y, {}, d, true, 1);
    s[kConvI0 + d] = spatial(*x, {}, d, true, 1);
    s[kConvS0 + d] = spatial(*x, c.stride, d, false, 1);
    s[kConvPad0 + d] = spatial(*x, c.padding, d, false, 0);
    s[kConvD0 + d] = spatial(*x, c.dilation, d, false, 1);
    s[kConvXN + 2 + d] = spatial(*x, {}, d, false, 0);
    s[kConvWO + 2 + d] = spatial(*w, {}, d, false, 0);
    s[kConvYN + 2 + d] = spatial(*y, {}, d, false, 0);
  }
  s[kConvOcg] = ocg;
  s[kConvP] = p;
  s[kConvR] = cg * ks;
  s[kConvKs] = ks;
  s[kConvK1] = spatial(*w, {}, 1, true, 1);
  s[kConvK2] = spatial(*w, {}, 2, true, 1);
  s[kConvO1] = spatial(*y, {}, 1, true, 1);
  s[kConvO2] = spatial(*y, {}, 2, true, 1);
  s[kConvCg] = cg;
  s[kConvXN] = x->strides[0];
  s[kConvXN + 1] = x->strides[1];
  s[kConvWO] = w->strides[0];
  s[kConvWO + 1] = w->strides[1];
  s[kConvYN] = y->strides[0];
  s[kConvYN + 1] = y->strides[1];
  base.xOffset = x->offset;
  base.wOffset = w->offset;
  base.yOffset = y->offset;
  std::vector<ConvLaunch> out;
  const int64_t cols = x->sizes[0] * p;
  s[kConvCols] = cols;
  if (ocg <= 0 || cols <= 0) return out;
  // The kernel divides by multiplying (divide.h): its dividends (columns and reduction
  // indices, up to a tile past the end) stay below 2^31.
  if (cols + kTile > kMagicLimit || s[kConvR] + kTile > kMagicLimit)
    return sdk::unimplemented("prims.convolution of " + std::to_string(cols) +
                              " images x output positions and a reduction of " + std::to_string(s[kConvR]) +
                              ": the level_zero kernel takes each below 2^31");
  const int64_t divisors[] = {p, s[kConvO1] * s[kConvO2], s[kConvO2], ks, s[kConvK1] * s[kConvK2], s[kConvK2]};
  for (uint32_t d = 0; d < 6; ++d) {
    const MagicDivisor m = magicDivisor(std::max<int64_t>(divisors[d], 1));  // 0: a zero R, never divided
    s[kConvDiv + 2 * d] = m.multiplier;
    s[kConvDiv + 2 * d + 1] = m.shift;
  }
  // Launches of kMaxGroups work-groups at most along x (columns) and z (groups).
  const int64_t tiles = (cols + kTile - 1) / kTile, most = static_cast<int64_t>(kMaxGroups);
  for (int64_t gFrom = 0; gFrom < g; gFrom += most)
    for (int64_t tFrom = 0; tFrom < tiles; tFrom += most) {
      ConvLaunch l = base;
      l.groups = {static_cast<uint64_t>(std::min(tiles - tFrom, most)),
                  static_cast<uint64_t>((ocg + kTile - 1) / kTile), static_cast<uint64_t>(std::min(g - gFrom, most))};
      l.scalars[kConvColBase] = tFrom * kTile;
      l.scalars[kConvZBase] = gFrom;
      out.push_back(l);
    }
  return out;
}

}  // namespace plugsdk::level_zero::library
