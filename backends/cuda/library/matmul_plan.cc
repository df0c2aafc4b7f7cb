// The matmul call's copy, its values at a launch, and the cuBLASLt plan (matmul_plan.h).
#include "backends/cuda/library/matmul_plan.h"

#include <limits>

#include "backends/cuda/library/cublaslt_api.h"

namespace plugsdk::cuda {

namespace {

/// How a matrix R x C with strides (sr, sc) is stored column-major: as itself (colMajor,
/// ld = sc) or as its transpose (ld = sr); nullopt when neither has a unit stride or the
/// leading dimension is too small (overlapping or broadcast rows).
struct Stored {
  bool colMajor;
  int64_t ld;
};
std::optional<Stored> storage(int64_t R, int64_t C, int64_t sr, int64_t sc) {
  if (sc == 1 || C == 1) {
    const int64_t ld = R == 1 ? C : sr;
    if (ld >= C) return Stored{false, ld};
  }
  if (sr == 1 || R == 1) {
    const int64_t ld = C == 1 ? R : sc;
    if (ld >= R) return Stored{true, ld};
  }
  return std::nullopt;
}

/// op(storage) = X (transposed = false) or X^T (true), for X (R x C) stored as `st`.
LtMatrix operand(int64_t R, int64_t C, const Stored& st, bool transposed) {
  // Stored colMajor: the storage is X (R x C); else it is X^T (C x R).
  const bool storageIsX = st.colMajor;
  LtMatrix m;
  m.rows = static_cast<uint64_t>(storageIsX ? R : C);
  m.cols = static_cast<uint64_t>(storageIsX ? C : R);
  m.ld = st.ld;
  m.op = storageIsX == !transposed ? lt::kOpN : lt::kOpT;
  return m;
}

}  // namespace

OperandDesc copyOperand(const plugsdk_tensor_desc_t& d) {
  OperandDesc o;
  o.dtype = d.dtype;
  o.sizes.assign(d.sizes, d.sizes + d.rank);
  o.strides.assign(d.strides, d.strides + d.rank);
  o.offset = d.offset;
  return o;
}

sdk::StatusOr<MatmulCall> MatmulCall::from(const sdk::LibraryCall& c) {
  if (c.inputs.size() != 2 || c.outputs.size() != 1)
    return sdk::invalidArgument("prims.matmul takes 2 inputs and 1 output, not " + std::to_string(c.inputs.size()) +
                                " and " + std::to_string(c.outputs.size()));
  MatmulCall m;
  m.pool.assign(c.indexPool.begin(), c.indexPool.end());
  for (const char* s : c.symbols) m.symbols.emplace_back(s);
  m.a = copyOperand(c.inputs[0]);
  m.b = copyOperand(c.inputs[1]);
  m.out = copyOperand(c.outputs[0]);
  const size_t r = m.out.sizes.size();
  if (r < 2 || m.a.sizes.size() != r || m.b.sizes.size() != r)
    return sdk::unimplemented("prims.matmul of ranks " + std::to_string(m.a.sizes.size()) + " x " +
                              std::to_string(m.b.sizes.size()) + " -> " + std::to_string(r) +
                              " (the cuda plugin takes equal ranks >= 2)");
  return m;
}

sdk::StatusOr<MatmulShape> MatmulShape::eval(const MatmulCall& c, sdk::Span<const int64_t> symbols) {
  sdk::IndexEnv env;
  env.symbols = symbols;
  const sdk::Span<const plugsdk_index_insn_t> pool(c.pool.data(), c.pool.size());
  auto one = [&](const char* name, const OperandDesc& d, std::vector<int64_t>* sizes, std::vector<int64_t>* strides,
                 int64_t* offset) -> sdk::Status {
    for (size_t i = 0; i < d.sizes.size(); ++i) {
      sdk::StatusOr<int64_t> n = sdk::evalIndex(pool, d.sizes[i], env);
      if (!n.isOk()) return n.status().withContext(std::string("prims.matmul ") + name + " size " + std::to_string(i));
      sdk::StatusOr<int64_t> s = sdk::evalIndex(pool, d.strides[i], env);
      if (!s.isOk())
        return s.status().withContext(std::string("prims.matmul ") + name + " stride " + std::to_string(i));
      sizes->push_back(*n);
      strides->push_back(*s);
    }
    sdk::StatusOr<int64_t> o = sdk::evalIndex(pool, d.offset, env);
    if (!o.isOk()) return o.status().withContext(std::string("prims.matmul ") + name + " offset");
    *offset = *o;
    return sdk::Status::ok();
  };
  std::vector<int64_t> as, ast, bs, bst, os, ost;
  MatmulShape s;
  for (sdk::Status st : {one("a", c.a, &as, &ast, &s.aOffset), one("b", c.b, &bs, &bst, &s.bOffset),
                         one("result", c.out, &os, &ost, &s.outOffset)})
    if (!st.isOk()) return st;
  const size_t r = os.size();
  s.m = os[r - 2];
  s.n = os[r - 1];
  s.k = as[r - 1];
  if (as[r - 2] != s.m || bs[r - 2] != s.k || bs[r - 1] != s.n)
    return sdk::invalidArgument("prims.matmul: a [.., " + std::to_string(as[r - 2]) + ", " + std::to_string(as[r - 1]) +
                                "] x b [.., " + std::to_string(bs[r - 2]) + ", " + std::to_string(bs[r - 1]) +
                                "] does not give the result's [.., " + std::to_string(s.m) + ", " +
                                std::to_string(s.n) + "]");
  for (size_t d = 0; d + 2 < r; ++d) {
    if (as[d] != os[d] || bs[d] != os[d])
      return sdk::invalidArgument("prims.matmul: batch dim " + std::to_string(d) + " is " + std::to_string(as[d]) +
                                  " in a, " + std::to_string(bs[d]) + " in b and " + std::to_string(os[d]) +
                                  " in the result");
    s.batch.push_back(os[d]);
    s.aBatch.push_back(ast[d]);
    s.bBatch.push_back(bst[d]);
    s.outBatch.push_back(ost[d]);
  }
  s.aM = ast[r - 2];
  s.aK = ast[r - 1];
  s.bK = bst[r - 2];
  s.bN = bst[r - 1];
  s.outM = ost[r - 2];
  s.outN = ost[r - 1];
  return s;
}

namespace {

/// Batch dims over which b is broadcast (stride 0) and whose a and result rows continue the
/// matrices' rows (stride m * rowStride) become rows: [8, 256, 768] x [768, 50257] is one
/// [2048, 768] x [768, 50257] product, not a batch of 8 (whose results cuBLASLt's fast
/// kernels may not take, and which the padded result does not cover).
MatmulShape foldBroadcastBatches(MatmulShape s) {
  while (!s.batch.empty()) {
    const size_t d = s.batch.size() - 1;
    const bool folds =
        s.batch[d] == 1 || (s.bBatch[d] == 0 && s.aBatch[d] == s.m * s.aM && s.outBatch[d] == s.m * s.outM);
    if (!folds) break;
    s.m *= s.batch[d];
    for (std::vector<int64_t>* v : {&s.batch, &s.aBatch, &s.bBatch, &s.outBatch}) v->pop_back();
  }
  return s;
}

}  // namespace

std::optional<LtPlan> planCublasLt(const MatmulShape& shape) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  const MatmulShape s = foldBroadcastBatches(shape);
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.m > kMax || s.n > kMax || s.k > kMax) return std::nullopt;
  const std::optional<Stored> sa = storage(s.m, s.k, s.aM, s.aK);
  const std::optional<Stored> sb = storage(s.k, s.n, s.bK, s.bN);
  const std::optional<Stored> so = storage(s.m, s.n, s.outM, s.outN);
  if (!sa || !sb || !so) return std::nullopt;
  LtPlan p;
  if (!so->colMajor) {
    // The result's storage is C^T (n x m): D = C^T = b^T a^T.
    p.swapped = true;
    p.A = operand(s.k, s.n, *sb, true);
    p.B = operand(s.m, s.k, *sa, true);
  } else {
    p.A = operand(s.m, s.k, *sa, false);
    p.B = operand(s.k, s.n, *sb, false);
  }
  p.D = operand(s.m, s.n, *so, p.swapped);  // op N by construction
  // Batch dims: size-1 ones dropped, then neighbours merged where every operand's strides
  // nest (stride[d] == stride[d + 1] * size[d + 1]); the innermost is cuBLASLt's batch.
  std::vector<int64_t> sizes, as, bs, os;
  for (size_t d = 0; d < s.batch.size(); ++d) {
    if (s.batch[d] == 1) continue;
    if (s.batch[d] <= 0) return std::nullopt;
    if (!sizes.empty() && as.back() == s.aBatch[d] * s.batch[d] && bs.back() == s.bBatch[d] * s.batch[d] &&
        os.back() == s.outBatch[d] * s.batch[d]) {
      sizes.back() *= s.batch[d];
      as.back() = s.aBatch[d];
      bs.back() = s.bBatch[d];
      os.back() = s.outBatch[d];
      continue;
    }
    sizes.push_back(s.batch[d]);
    as.push_back(s.aBatch[d]);
    bs.push_back(s.bBatch[d]);
    os.push_back(s.outBatch[d]);
  }
  if (!sizes.empty()) {
    if (sizes.back() > kMax) return std::nullopt;
    p.batchCount = static_cast<int32_t>(sizes.back());
    p.aStride = p.swapped ? bs.back() : as.back();
    p.bStride = p.swapped ? as.back() : bs.back();
    p.dStride = os.back();
    sizes.pop_back();
    as.pop_back();
    bs.pop_back();
    os.pop_back();
  }
  p.outerSizes = sizes;
  p.outerA = p.swapped ? bs : as;
  p.outerB = p.swapped ? as : bs;
  p.outerD = os;
  return p;
}

int64_t paddedResultLd(const LtPlan& p, int64_t k, uint64_t elementBytes, uint32_t alignD, uint64_t operandBytes,
                       uint32_t alignOperands) {
  constexpr int64_t kMinK = 256, kMinResults = int64_t{1} << 20;
  if (p.batchCount != 1 || !p.outerSizes.empty() || elementBytes == 0 || elementBytes >= 16) return 0;
  if ((static_cast<uint64_t>(p.D.ld) * elementBytes) % 16 == 0 && alignD >= 16) return 0;
  auto aligned = [&](const LtMatrix& m) { return (static_cast<uint64_t>(m.ld) * operandBytes) % 16 == 0; };
  if (!aligned(p.A) || !aligned(p.B) || alignOperands < 16) return 0;
  if (k < kMinK || static_cast<int64_t>(p.D.rows * p.D.cols) < kMinResults) return 0;
  const auto per = static_cast<int64_t>(16 / elementBytes);
  return (static_cast<int64_t>(p.D.rows) + per - 1) / per * per;
}

std::vector<RowPart> alignedRowParts(const LtPlan& p, uint64_t elementBytes) {
  const uint64_t per = elementBytes == 0 || elementBytes >= 16 ? 1 : 16 / elementBytes;
  const uint64_t head = p.D.rows / per * per;
  if (head == 0 || head == p.D.rows) return {RowPart{p, 0, 0}};
  // op(A) is rows x k: its rows are the storage's rows (op N) or columns (op T).
  auto rows = [&](uint64_t first, uint64_t count) {
    RowPart part{p, 0, static_cast<int64_t>(first)};
    part.plan.D.rows = count;
    if (p.A.op == lt::kOpN) {
      part.plan.A.rows = count;
      part.aOffset = static_cast<int64_t>(first);
    } else {
      part.plan.A.cols = count;
      part.aOffset = static_cast<int64_t>(first) * p.A.ld;
    }
    return part;
  };
  return {rows(0, head), rows(head, p.D.rows - head)};
}

std::string LtPlan::describe() const {
  auto m = [](const char* name, const LtMatrix& x) {
    return std::string(name) + (x.op == lt::kOpT ? "^T" : "") + "[" + std::to_string(x.rows) + "x" +
           std::to_string(x.cols) + " ld " + std::to_string(x.ld) + "]";
  };
  std::string s = m("D", D) + " = " + m("A", A) + " " + m("B", B) + (swapped ? " (A = b, B = a)" : "");
  if (batchCount > 1)
    s += ", batch " + std::to_string(batchCount) + " strides " + std::to_string(aStride) + " " +
         std::to_string(bStride) + " " + std::to_string(dStride);
  if (!outerSizes.empty()) s += ", " + std::to_string(outerSizes.size()) + " outer dims looped";
  return s;
}

}  // namespace plugsdk::cuda
