// The convolution call's copy, its values at a launch and cuDNN's geometry (conv_plan.h).
#include "backends/cuda/library/conv_plan.h"

#include <limits>

#include "plugsdk/library_attributes.hpp"

namespace plugsdk::cuda {

namespace {

std::string dims(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

}  // namespace

sdk::StatusOr<ConvCall> ConvCall::from(const sdk::LibraryCall& c) {
  if (c.inputs.size() != 2 || c.outputs.size() != 1)
    return sdk::invalidArgument("prims.convolution takes 2 inputs and 1 output, not " +
                                std::to_string(c.inputs.size()) + " and " + std::to_string(c.outputs.size()));
  ConvCall v;
  v.pool.assign(c.indexPool.begin(), c.indexPool.end());
  for (const char* s : c.symbols) v.symbols.emplace_back(s);
  v.x = copyOperand(c.inputs[0]);
  v.w = copyOperand(c.inputs[1]);
  v.out = copyOperand(c.outputs[0]);
  const size_t r = v.x.sizes.size();
  if (r < 3 || r > 5 || v.w.sizes.size() != r || v.out.sizes.size() != r)
    return sdk::invalidArgument("prims.convolution operands of ranks " + std::to_string(r) + ", " +
                                std::to_string(v.w.sizes.size()) + " -> " + std::to_string(v.out.sizes.size()) +
                                " (1 to 3 spatial dims, equal ranks)");
  const uint32_t t = v.x.dtype;
  if ((t != PLUGSDK_DTYPE_F16 && t != PLUGSDK_DTYPE_BF16 && t != PLUGSDK_DTYPE_F32 && t != PLUGSDK_DTYPE_F64) ||
      v.w.dtype != t || v.out.dtype != t)
    return sdk::unimplemented("prims.convolution of dtype " + std::to_string(t) +
                              ": the cuda plugin's convolution takes f16, bf16, f32 and f64 (device_info "
                              "convolution_dtypes)");
  sdk::StatusOr<sdk::LibraryAttributes> a = sdk::LibraryAttributes::parse(std::string(c.attributes));
  if (!a.isOk()) return a.status().withContext("prims.convolution");
  sdk::StatusOr<bool> transposed = a->getBool("transposed");
  if (!transposed.isOk()) return transposed.status().withContext("prims.convolution");
  if (*transposed)
    return sdk::unimplemented(
        "a transposed prims.convolution (the cuda plugin leaves them to the core: convolution_skips_transposed)");
  const size_t sd = r - 2;
  for (auto [name, to] :
       {std::pair{"stride", &v.stride}, std::pair{"padding", &v.padding}, std::pair{"dilation", &v.dilation}}) {
    sdk::StatusOr<std::vector<int64_t>> l = a->getInts(name);
    if (!l.isOk()) return l.status().withContext("prims.convolution");
    if (l->size() == 1) l->assign(sd, (*l)[0]);
    if (l->size() != sd)
      return sdk::invalidArgument(std::string("prims.convolution: ") + name + " has " + std::to_string(l->size()) +
                                  " entries for " + std::to_string(sd) + " spatial dims");
    *to = *l;
  }
  sdk::StatusOr<int64_t> groups = a->getInt("groups");
  if (!groups.isOk()) return groups.status().withContext("prims.convolution");
  if (*groups < 1) return sdk::invalidArgument("prims.convolution: groups " + std::to_string(*groups));
  v.groups = *groups;
  return v;
}

int64_t TensorValue::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

bool TensorValue::packed() const {
  int64_t want = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] != 1 && strides[d] != want) return false;
    want *= sizes[d];
  }
  return true;
}

sdk::StatusOr<TensorValue> evalOperand(sdk::Span<const plugsdk_index_insn_t> pool, const OperandDesc& d,
                                       const std::vector<int64_t>& symbols) {
  sdk::IndexEnv env;
  env.symbols = sdk::Span<const int64_t>(symbols.data(), symbols.size());
  TensorValue v;
  for (size_t i = 0; i < d.sizes.size(); ++i) {
    sdk::StatusOr<int64_t> n = sdk::evalIndex(pool, d.sizes[i], env);
    if (!n.isOk()) return n.status().withContext("size " + std::to_string(i));
    sdk::StatusOr<int64_t> s = sdk::evalIndex(pool, d.strides[i], env);
    if (!s.isOk()) return s.status().withContext("stride " + std::to_string(i));
    v.sizes.push_back(*n);
    v.strides.push_back(*s);
  }
  sdk::StatusOr<int64_t> o = sdk::evalIndex(pool, d.offset, env);
  if (!o.isOk()) return o.status().withContext("offset");
  v.offset = *o;
  return v;
}

sdk::StatusOr<ConvShape> ConvShape::eval(const ConvCall& c, sdk::Span<const int64_t> symbols) {
  const sdk::Span<const plugsdk_index_insn_t> pool(c.pool.data(), c.pool.size());
  const std::vector<int64_t> values(symbols.begin(), symbols.end());
  auto one = [&](const char* name, const OperandDesc& d, TensorValue* v) -> sdk::Status {
    sdk::StatusOr<TensorValue> t = evalOperand(pool, d, values);
    if (!t.isOk()) return t.status().withContext(std::string("prims.convolution ") + name);
    *v = std::move(*t);
    return sdk::Status::ok();
  };
  ConvShape s;
  for (sdk::Status st : {one("input", c.x, &s.x), one("weight", c.w, &s.w), one("result", c.out, &s.out)})
    if (!st.isOk()) return st;
  const size_t sd = s.x.sizes.size() - 2;
  auto bad = [&](const std::string& what) {
    return sdk::invalidArgument("prims.convolution: " + what + " (input [" + std::to_string(s.x.sizes[0]) + ", " +
                                std::to_string(s.x.sizes[1]) + ", ...], weight [" + std::to_string(s.w.sizes[0]) +
                                ", " + std::to_string(s.w.sizes[1]) + ", ...], groups " + std::to_string(c.groups) +
                                ")");
  };
  if (s.out.sizes[0] != s.x.sizes[0]) return bad("the result's batch is not the input's");
  if (s.w.sizes[1] * c.groups != s.x.sizes[1]) return bad("the weight's channels times groups are not the input's");
  if (s.out.sizes[1] != s.w.sizes[0] || s.w.sizes[0] % c.groups != 0)
    return bad("the result's channels are not the weight's output channels (a multiple of groups)");
  for (size_t i = 0; i < sd; ++i) {
    const int64_t span = c.dilation[i] * (s.w.sizes[2 + i] - 1) + 1;
    const int64_t want = (s.x.sizes[2 + i] + 2 * c.padding[i] - span) / c.stride[i] + 1;
    if (s.out.sizes[2 + i] != want)
      return bad("spatial dim " + std::to_string(i) + " of the result is " + std::to_string(s.out.sizes[2 + i]) +
                 ", the attributes give " + std::to_string(want));
  }
  return s;
}

std::vector<int> packedStrides(const std::vector<int>& d) {
  std::vector<int> s(d.size(), 1);
  for (size_t i = d.size() - 1; i-- > 0;) s[i] = s[i + 1] * d[i + 1];
  return s;
}

std::string DnnGeometry::describe() const {
  return std::string(weightGradient ? "weight gradient: " : "") + "x " + dims(x) + " w " + dims(w) + " -> y " +
         dims(y) + ", padding " + dims(pad) + " stride " + dims(stride) + " dilation " + dims(dilation) + ", " +
         std::to_string(images) + " images a call";
}

sdk::StatusOr<DnnGeometry> dnnGeometry(const ConvCall& c, const ConvShape& s) {
  DnnGeometry g;
  const size_t sd = s.x.sizes.size() - 2;
  g.rank = sd == 3 ? 5 : 4;
  const int64_t n = s.x.sizes[0];
  // Images per call: each call's x and result below 2^31 elements.
  const int64_t xImage = s.x.numel() / std::max<int64_t>(n, 1), yImage = s.out.numel() / std::max<int64_t>(n, 1);
  const int64_t perImage = std::max<int64_t>({xImage, yImage, 1});
  if (perImage > kIntMax || s.w.numel() > kIntMax)
    return sdk::unimplemented("prims.convolution: one image (" + std::to_string(perImage) +
                              " elements) or the weight (" + std::to_string(s.w.numel()) +
                              ") is past cuDNN's 32-bit indexing");
  g.images = std::max<int64_t>(1, std::min<int64_t>(n, kIntMax / perImage));
  g.xImage = s.x.strides[0];
  g.yImage = s.out.strides[0];
  // Rank 4 or 5; a 1-d convolution gets a unit dim before its spatial dim, strided as a
  // packed layout would stride it (so a packed operand stays packed).
  auto lay = [&](const TensorValue& t, int64_t batch, std::vector<int>* d, std::vector<int>* st) -> sdk::Status {
    std::vector<int64_t> ds{batch, t.sizes[1]}, ss{t.strides[0], t.strides[1]};
    if (sd == 1) {
      ds.push_back(1);
      ss.push_back(t.sizes[2] * t.strides[2]);
    }
    for (size_t i = 0; i < sd; ++i) {
      ds.push_back(t.sizes[2 + i]);
      ss.push_back(t.strides[2 + i]);
    }
    for (size_t i = 0; i < ds.size(); ++i) {
      if (ss[i] < 0)
        return sdk::unimplemented(
            "prims.convolution: a negative stride (a reversed view; the core materializes "
            "those for library calls)");
      if (ds[i] > kIntMax || ss[i] > kIntMax)
        return sdk::unimplemented("prims.convolution: a size or stride past cuDNN's 32-bit indexing");
      d->push_back(static_cast<int>(ds[i]));
      st->push_back(static_cast<int>(std::max<int64_t>(ss[i], 0)));
    }
    return sdk::Status::ok();
  };
  for (sdk::Status st : {lay(s.x, g.images, &g.x, &g.xStrides), lay(s.out, g.images, &g.y, &g.yStrides),
                         lay(s.w, s.w.sizes[0], &g.w, &g.wStrides)})
    if (!st.isOk()) return st;
  if (sd == 1) {
    g.pad.push_back(0);
    g.stride.push_back(1);
    g.dilation.push_back(1);
  }
  for (size_t i = 0; i < sd; ++i) {
    g.pad.push_back(static_cast<int>(c.padding[i]));
    g.stride.push_back(static_cast<int>(c.stride[i]));
    g.dilation.push_back(static_cast<int>(c.dilation[i]));
  }
  auto packedAs = [](const TensorValue& t, const std::vector<int>& d, const std::vector<int>& st) {
    if (!t.packed()) return false;
    const std::vector<int> want = packedStrides(d);
    for (size_t i = 0; i < d.size(); ++i)
      if (d[i] != 1 && st[i] != want[i]) return false;
    return true;
  };
  g.xPacked = packedAs(s.x, g.x, g.xStrides);
  g.yPacked = packedAs(s.out, g.y, g.yStrides);
  g.wPacked = packedAs(s.w, g.w, g.wStrides);
  return g;
}

namespace {
int64_t spatialPoints(const std::vector<int>& d) {
  int64_t n = 1;
  for (size_t i = 2; i < d.size(); ++i) n *= d[i];
  return n;
}
bool packedLike(const std::vector<int>& d, const std::vector<int>& st) {
  const std::vector<int> want = packedStrides(d);
  for (size_t i = 0; i < d.size(); ++i)
    if (d[i] != 1 && st[i] != want[i]) return false;
  return true;
}
}  // namespace

bool isWeightGradient(const DnnGeometry& g, int64_t groups) {
  return groups == 1 && g.images == g.x[0] && spatialPoints(g.w) > spatialPoints(g.y);
}

DnnGeometry weightGradientForm(const DnnGeometry& g) {
  DnnGeometry w = g;
  for (std::vector<int>* v : {&w.x, &w.xStrides, &w.w, &w.wStrides, &w.y, &w.yStrides}) std::swap((*v)[0], (*v)[1]);
  std::swap(w.stride, w.dilation);
  w.xPacked = packedLike(w.x, w.xStrides);
  w.wPacked = packedLike(w.w, w.wStrides);
  w.yPacked = packedLike(w.y, w.yStrides);
  w.images = w.x[0];
  w.xImage = w.xStrides[0];
  w.yImage = 0;
  w.weightGradient = true;
  return w;
}

}  // namespace plugsdk::cuda
