// Reference kernels for the indexing ops (float64 / exact integers). Out-of-range index
// values are reported as out_of_range errors naming the index, dim and size.
#include <cmath>
#include <limits>

#include "core/exec/kernels.h"
#include "core/exec/kernels_shape_util.h"
#include "core/ir/shape_rules.h"

namespace plugsdk::exec {

using namespace shape_kernels;

namespace {

using Outs = StatusOr<std::vector<HostTensor>>;

Outs one(HostTensor t) { return std::vector<HostTensor>{std::move(t)}; }

int64_t prodOf(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

Status indexError(const std::string& op, int64_t v, int64_t dim, int64_t size) {
  return outOfRange(op + ": index " + std::to_string(v) + " is out of bounds for dimension " + std::to_string(dim) +
                    " with size " + std::to_string(size));
}

/// Copies `count` consecutive elements (same dtype).
void copyRun(const HostTensor& in, int64_t from, HostTensor& out, int64_t to, int64_t count) {
  if (out.isFloating())
    std::copy_n(in.doubles().begin() + from, count, out.doubles().begin() + to);
  else
    std::copy_n(in.ints().begin() + from, count, out.ints().begin() + to);
}

Outs indexSelectKernel(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  const HostTensor& index = *ctx.input(1);
  ASSIGN_OR_RETURN(int64_t dim, ir::wrapDim(ctx.getInt("dim"), x.rank()));
  HostTensor out = ctx.makeOutput();
  auto ud = static_cast<size_t>(dim);
  int64_t n = x.rank() == 0 ? 1 : x.shape()[ud];
  int64_t outer = x.rank() == 0 ? 1 : prodOf(x.shape(), 0, ud);
  int64_t inner = x.rank() == 0 ? 1 : prodOf(x.shape(), ud + 1, x.shape().size());
  int64_t k = index.numel();
  for (int64_t i = 0; i < k; ++i) {
    int64_t v = index.ints()[static_cast<size_t>(i)];
    if (v < 0 || v >= n) return indexError("index_select", v, dim, n);
    for (int64_t o = 0; o < outer; ++o) copyRun(x, (o * n + v) * inner, out, (o * k + i) * inner, inner);
  }
  return one(std::move(out));
}

/// Shape as gather/scatter see it (a 0-dim tensor as [1]).
std::vector<int64_t> nonEmptyShape(const HostTensor& t) { return t.rank() == 0 ? std::vector<int64_t>{1} : t.shape(); }

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t run = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = run;
    run *= shape[i];
  }
  return s;
}

/// Index no larger than `bound` in every dim except `exceptDim` (-1: none).
Status checkNoLarger(const std::string& op, const std::vector<int64_t>& index, const std::vector<int64_t>& bound,
                     const char* boundName, int64_t exceptDim) {
  if (index.size() != bound.size()) return invalidArgument(op + ": index must have the same rank as " + boundName);
  for (size_t d = 0; d < index.size(); ++d)
    if (static_cast<int64_t>(d) != exceptDim && index[d] > bound[d])
      return invalidArgument(op + ": index " + shapeString(index) + " is larger than " + boundName + " " +
                             shapeString(bound) + " at dim " + std::to_string(d));
  return Status::ok();
}

Outs gatherKernel(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  const HostTensor& index = *ctx.input(1);
  ASSIGN_OR_RETURN(int64_t dim, ir::wrapDim(ctx.getInt("dim"), x.rank()));
  HostTensor out = ctx.makeOutput();
  if (index.numel() == 0) return one(std::move(out));
  auto xShape = nonEmptyShape(x), iShape = nonEmptyShape(index);
  RETURN_IF_ERROR(checkNoLarger("gather", iShape, xShape, "self", dim));
  auto xs = rowMajorStrides(xShape);
  auto ud = static_cast<size_t>(dim);
  int64_t n = xShape[ud];
  Status st;
  forEachIndex(iShape, [&](const std::vector<int64_t>& p, int64_t linear) {
    if (!st.isOk()) return;
    int64_t v = index.ints()[static_cast<size_t>(linear)];
    if (v < 0 || v >= n) {
      st = indexError("gather", v, dim, n);
      return;
    }
    int64_t off = offsetOf(p, xs) + (v - p[ud]) * xs[ud];
    copyRun(x, off, out, linear, 1);
  });
  if (!st.isOk()) return st;
  return one(std::move(out));
}

enum class Combine { kAssign, kSum, kProd, kMean, kMax, kMin };

/// Two's-complement add/multiply without signed-overflow UB (wrapped to the dtype later).
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

double combineF(Combine c, double a, double b) {
  switch (c) {
    case Combine::kAssign: return b;
    case Combine::kSum:
    case Combine::kMean: return a + b;
    case Combine::kProd: return a * b;
    case Combine::kMax:
      return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::max(a, b);
    case Combine::kMin:
      return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::min(a, b);
  }
  return b;
}

int64_t combineI(Combine c, int64_t a, int64_t b) {
  switch (c) {
    case Combine::kAssign: return b;
    case Combine::kSum:
    case Combine::kMean: return wrapAdd(a, b);
    case Combine::kProd: return wrapMul(a, b);
    case Combine::kMax: return std::max(a, b);
    case Combine::kMin: return std::min(a, b);
  }
  return b;
}

/// The scatter family: out = self; for every index position p, out[p with dim = index[p]]
/// combines with src[p] (or the scalar value). Positions are visited in row-major order,
/// so with kAssign the last write wins, as on PyTorch's CPU backend.
Outs scatterImpl(const RefKernelContext& ctx, const HostTensor* src, const ir::Attribute* value, Combine c,
                 bool includeSelf) {
  const std::string op = ctx.schema().name;
  const HostTensor& x = *ctx.input(0);
  const HostTensor& index = *ctx.input(1);
  ASSIGN_OR_RETURN(int64_t dim, ir::wrapDim(ctx.getInt("dim"), x.rank()));
  HostTensor out = reshaped(x, x.dtype(), x.shape());
  if (index.numel() == 0) return one(std::move(out));
  auto xShape = nonEmptyShape(x), iShape = nonEmptyShape(index);
  RETURN_IF_ERROR(checkNoLarger(op, iShape, xShape, "self", dim));
  std::vector<int64_t> ss;
  if (src) {
    auto sShape = nonEmptyShape(*src);
    RETURN_IF_ERROR(checkNoLarger(op, iShape, sShape, "src", -1));
    ss = rowMajorStrides(sShape);
  }
  HostTensor scalar = value ? scalarAs(*value, x.dtype()) : HostTensor();
  auto xs = rowMajorStrides(xShape);
  auto ud = static_cast<size_t>(dim);
  int64_t n = xShape[ud];
  bool fp = out.isFloating();
  // Positions not yet combined with anything when include_self is false; counts for mean.
  std::vector<char> fresh(static_cast<size_t>(out.numel()), includeSelf ? 0 : 1);
  std::vector<int64_t> count(c == Combine::kMean ? static_cast<size_t>(out.numel()) : 0, includeSelf ? 1 : 0);
  std::vector<char> touched(count.size(), 0);
  Status st;
  forEachIndex(iShape, [&](const std::vector<int64_t>& p, int64_t linear) {
    if (!st.isOk()) return;
    int64_t v = index.ints()[static_cast<size_t>(linear)];
    if (v < 0 || v >= n) {
      st = indexError(op, v, dim, n);
      return;
    }
    auto dst = static_cast<size_t>(offsetOf(p, xs) + (v - p[ud]) * xs[ud]);
    auto from = static_cast<size_t>(src ? offsetOf(p, ss) : 0);
    Combine k = fresh[dst] ? Combine::kAssign : c;
    fresh[dst] = 0;
    if (fp)
      out.doubles()[dst] = combineF(k, out.doubles()[dst], src ? src->doubles()[from] : scalar.doubles()[0]);
    else
      out.ints()[dst] = combineI(k, out.ints()[dst], src ? src->ints()[from] : scalar.ints()[0]);
    if (c == Combine::kMean) {
      ++count[dst];
      touched[dst] = 1;
    }
  });
  if (!st.isOk()) return st;
  for (size_t i = 0; i < touched.size(); ++i) {
    if (!touched[i]) continue;
    if (fp) {
      out.doubles()[i] /= static_cast<double>(count[i]);
    } else {
      int64_t sum = wrapToIntType(out.ints()[i], out.dtype()), q = sum / count[i];
      if ((sum % count[i] != 0) && (sum < 0)) --q;  // floor division, as PyTorch's integer mean
      out.ints()[i] = q;
    }
  }
  if (!fp)
    for (auto& e : out.ints()) e = wrapToIntType(e, out.dtype());
  return one(std::move(out));
}

StatusOr<Combine> legacyReduce(const RefKernelContext& ctx) {
  std::string r = ctx.getString("reduce");
  if (r == "add") return Combine::kSum;
  if (r == "multiply") return Combine::kProd;
  return invalidArgument(ctx.schema().name + ": unknown reduce \"" + r + "\"");
}

Outs scatterReduceKernel(const RefKernelContext& ctx) {
  std::string r = ctx.getString("reduce");
  Combine c = r == "sum"    ? Combine::kSum
              : r == "prod" ? Combine::kProd
              : r == "mean" ? Combine::kMean
              : r == "amax" ? Combine::kMax
              : r == "amin" ? Combine::kMin
                            : Combine::kAssign;
  if (c == Combine::kAssign) return invalidArgument("scatter_reduce: unknown reduce \"" + r + "\"");
  return scatterImpl(ctx, ctx.input(2), nullptr, c, ctx.getBool("include_self"));
}

Outs embeddingKernel(const RefKernelContext& ctx) {
  const HostTensor& w = *ctx.input(0);
  const HostTensor& indices = *ctx.input(1);
  HostTensor out = ctx.makeOutput();
  int64_t rows = w.shape()[0], d = w.shape()[1];
  for (int64_t i = 0; i < indices.numel(); ++i) {
    int64_t v = indices.ints()[static_cast<size_t>(i)];
    if (v < 0 || v >= rows)
      return outOfRange("embedding: index " + std::to_string(v) + " out of range for a weight of " +
                        std::to_string(rows) + " rows");
    copyRun(w, v * d, out, i * d, d);
  }
  return one(std::move(out));
}

/// For index.Tensor and index_put: the element offset in self of the block selected by the
/// indices at broadcast position b (negative indices wrap), for every position of `bshape`.
StatusOr<std::vector<int64_t>> indexBases(const RefKernelContext& ctx, const HostTensor& x, size_t firstIndex,
                                          const std::vector<int64_t>& bshape) {
  const std::string op = ctx.schema().name;
  std::vector<const HostTensor*> idx(ctx.inputs().begin() + static_cast<std::ptrdiff_t>(firstIndex),
                                     ctx.inputs().end());
  std::vector<std::vector<int64_t>> bstrides;
  for (const HostTensor* t : idx) bstrides.push_back(broadcastStrides(t->shape(), bshape));
  auto xs = x.strides();
  std::vector<int64_t> bases(static_cast<size_t>(shapeNumel(bshape)), 0);
  Status st;
  forEachIndex(bshape, [&](const std::vector<int64_t>& b, int64_t linear) {
    if (!st.isOk()) return;
    int64_t base = 0;
    for (size_t j = 0; j < idx.size(); ++j) {
      int64_t v = idx[j]->ints()[static_cast<size_t>(offsetOf(b, bstrides[j]))];
      int64_t n = x.shape()[j];
      if (v < -n || v >= n) {
        st = indexError(op, v, static_cast<int64_t>(j), n);
        return;
      }
      base += (v < 0 ? v + n : v) * xs[j];
    }
    bases[static_cast<size_t>(linear)] = base;
  });
  if (!st.isOk()) return st;
  return bases;
}

Outs indexKernel(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  size_t k = ctx.numInputs() - 1;
  HostTensor out = ctx.makeOutput();
  const auto& os = out.shape();
  size_t bRank = os.size() - (x.shape().size() - k);
  std::vector<int64_t> bshape(os.begin(), os.begin() + static_cast<std::ptrdiff_t>(bRank));
  int64_t inner = prodOf(x.shape(), k, x.shape().size());
  ASSIGN_OR_RETURN(auto bases, indexBases(ctx, x, 1, bshape));
  for (size_t i = 0; i < bases.size(); ++i) copyRun(x, bases[i], out, static_cast<int64_t>(i) * inner, inner);
  return one(std::move(out));
}

Outs indexPutKernel(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  const HostTensor& values = *ctx.input(1);
  size_t k = ctx.numInputs() - 2;
  bool accumulate = ctx.getBool("accumulate");
  // The indexing result's shape: the indices' broadcast shape + self's trailing dims.
  std::vector<int64_t> bshape;
  for (size_t i = 2; i < ctx.numInputs(); ++i) {
    const auto& s = ctx.input(i)->shape();
    if (s.size() > bshape.size()) bshape.insert(bshape.begin(), s.size() - bshape.size(), 1);
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& b = bshape[bshape.size() - s.size() + d];
      if (b == 1) b = s[d];
    }
  }
  std::vector<int64_t> inner(x.shape().begin() + static_cast<std::ptrdiff_t>(k), x.shape().end());
  std::vector<int64_t> target = bshape;
  target.insert(target.end(), inner.begin(), inner.end());
  if (values.rank() > static_cast<int>(target.size()))
    return invalidArgument("index_put: values " + shapeString(values.shape()) + " do not broadcast to " +
                           shapeString(target));
  for (size_t d = 0; d < values.shape().size(); ++d) {
    int64_t v = values.shape()[d], t = target[target.size() - values.shape().size() + d];
    if (v != 1 && v != t)
      return invalidArgument("index_put: values " + shapeString(values.shape()) + " do not broadcast to " +
                             shapeString(target));
  }
  auto vs = broadcastStrides(values.shape(), target);
  std::vector<int64_t> vsB(vs.begin(), vs.begin() + static_cast<std::ptrdiff_t>(bshape.size()));
  std::vector<int64_t> vsI(vs.begin() + static_cast<std::ptrdiff_t>(bshape.size()), vs.end());
  std::vector<int64_t> innerV;
  forEachIndex(inner, [&](const std::vector<int64_t>& q, int64_t) { innerV.push_back(offsetOf(q, vsI)); });
  ASSIGN_OR_RETURN(auto bases, indexBases(ctx, x, 2, bshape));
  HostTensor out = reshaped(x, x.dtype(), x.shape());
  bool fp = out.isFloating();
  size_t bi = 0;
  forEachIndex(bshape, [&](const std::vector<int64_t>& b, int64_t) {
    int64_t base = bases[bi++], vbase = offsetOf(b, vsB);
    for (size_t j = 0; j < innerV.size(); ++j) {
      auto o = static_cast<size_t>(base) + j;
      auto from = static_cast<size_t>(vbase + innerV[j]);
      if (fp)
        out.doubles()[o] = accumulate ? out.doubles()[o] + values.doubles()[from] : values.doubles()[from];
      else
        out.ints()[o] =
            wrapToIntType(accumulate ? wrapAdd(out.ints()[o], values.ints()[from]) : values.ints()[from], out.dtype());
    }
  });
  return one(std::move(out));
}

}  // namespace

void registerIndexingKernels(RefKernelTable& t) {
  t.add("aten.index_select", indexSelectKernel);
  t.add("aten.gather", gatherKernel);
  t.add("aten.scatter.src",
        [](const RefKernelContext& ctx) { return scatterImpl(ctx, ctx.input(2), nullptr, Combine::kAssign, true); });
  t.add("aten.scatter.value", [](const RefKernelContext& ctx) {
    return scatterImpl(ctx, nullptr, &ctx.attr("value"), Combine::kAssign, true);
  });
  t.add("aten.scatter_add",
        [](const RefKernelContext& ctx) { return scatterImpl(ctx, ctx.input(2), nullptr, Combine::kSum, true); });
  t.add("aten.scatter.reduce", [](const RefKernelContext& ctx) -> Outs {
    ASSIGN_OR_RETURN(Combine c, legacyReduce(ctx));
    return scatterImpl(ctx, ctx.input(2), nullptr, c, true);
  });
  t.add("aten.scatter.value_reduce", [](const RefKernelContext& ctx) -> Outs {
    ASSIGN_OR_RETURN(Combine c, legacyReduce(ctx));
    return scatterImpl(ctx, nullptr, &ctx.attr("value"), c, true);
  });
  t.add("aten.scatter_reduce.two", scatterReduceKernel);
  t.add("aten.embedding", embeddingKernel);
  t.add("aten.index.Tensor", indexKernel);
  t.add("aten.index_put", indexPutKernel);
}

}  // namespace plugsdk::exec
