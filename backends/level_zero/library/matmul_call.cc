// The matmul call's copy and its launches (matmul_call.h).
#include "backends/level_zero/library/matmul_call.h"

#include <string>

namespace plugsdk::level_zero::library {

sdk::StatusOr<MatmulCall> MatmulCall::from(const sdk::LibraryCall& c) {
  if (c.inputs.size() != 2 || c.outputs.size() != 1)
    return sdk::invalidArgument("prims.matmul takes 2 inputs and 1 output, not " + std::to_string(c.inputs.size()) +
                                " and " + std::to_string(c.outputs.size()));
  MatmulCall m;
  m.pool.assign(c.indexPool.begin(), c.indexPool.end());
  m.a = copyOperand(c.inputs[0]);
  m.b = copyOperand(c.inputs[1]);
  m.out = copyOperand(c.outputs[0]);
  for (const OperandDesc* o : {&m.a, &m.b, &m.out})
    if (o->dtype != PLUGSDK_DTYPE_F32)
      return sdk::unimplemented("the level_zero plugin's tiled prims.matmul takes f32 only (dtype " +
                                std::to_string(o->dtype) + "; device_info.matmul_dtypes says so)");
  const size_t r = m.out.sizes.size();
  if (r < 2 || m.a.sizes.size() != r || m.b.sizes.size() != r)
    return sdk::unimplemented("prims.matmul of ranks " + std::to_string(m.a.sizes.size()) + " x " +
                              std::to_string(m.b.sizes.size()) + " -> " + std::to_string(r) +
                              " (the level_zero plugin takes equal ranks >= 2)");
  return m;
}

sdk::StatusOr<std::vector<MatmulLaunch>> planLaunches(const MatmulCall& c, sdk::Span<const int64_t> symbols) {
  sdk::IndexEnv env;
  env.symbols = symbols;
  const sdk::Span<const plugsdk_index_insn_t> pool(c.pool.data(), c.pool.size());
  auto eval = [&](const char* name, const OperandDesc& d) {
    return evalOperand(std::string("prims.matmul ") + name, d, pool, env);
  };
  sdk::StatusOr<OperandValues> a = eval("a", c.a), b = eval("b", c.b), o = eval("result", c.out);
  for (const auto* v : {&a, &b, &o})
    if (!v->isOk()) return v->status();
  const size_t r = o->sizes.size();
  const int64_t m = o->sizes[r - 2], n = o->sizes[r - 1], k = a->sizes[r - 1];
  if (a->sizes[r - 2] != m || b->sizes[r - 2] != k || b->sizes[r - 1] != n)
    return sdk::invalidArgument("prims.matmul: a [.., " + std::to_string(a->sizes[r - 2]) + ", " + std::to_string(k) +
                                "] x b [.., " + std::to_string(b->sizes[r - 2]) + ", " +
                                std::to_string(b->sizes[r - 1]) + "] does not give the result's [.., " +
                                std::to_string(m) + ", " + std::to_string(n) + "]");
  int64_t points = 1;
  for (size_t d = 0; d + 2 < r; ++d) {
    if (a->sizes[d] != o->sizes[d] || b->sizes[d] != o->sizes[d])
      return sdk::invalidArgument("prims.matmul: batch dim " + std::to_string(d) + " is " +
                                  std::to_string(a->sizes[d]) + " in a, " + std::to_string(b->sizes[d]) + " in b and " +
                                  std::to_string(o->sizes[d]) + " in the result");
    points *= o->sizes[d];
  }
  std::vector<MatmulLaunch> out;
  if (m <= 0 || n <= 0 || points <= 0) return out;
  // The innermost batch dim is the groups' third dim; the outer ones, the host's loops.
  const size_t inner = r > 2 ? r - 3 : 0;
  const int64_t z = r > 2 ? o->sizes[inner] : 1;
  MatmulLaunch base;
  base.groups = {static_cast<uint64_t>((n + kTile - 1) / kTile), static_cast<uint64_t>((m + kTile - 1) / kTile),
                 static_cast<uint64_t>(z)};
  base.scalars = {m,
                  n,
                  k,
                  a->strides[r - 2],
                  a->strides[r - 1],
                  b->strides[r - 2],
                  b->strides[r - 1],
                  o->strides[r - 2],
                  o->strides[r - 1],
                  r > 2 ? a->strides[inner] : 0,
                  r > 2 ? b->strides[inner] : 0,
                  r > 2 ? o->strides[inner] : 0};
  const size_t outer = r > 3 ? r - 3 : 0;  // dims 0 .. outer - 1 looped
  std::vector<int64_t> at(outer, 0);
  for (;;) {
    MatmulLaunch l = base;
    l.aOffset = a->offset;
    l.bOffset = b->offset;
    l.cOffset = o->offset;
    for (size_t d = 0; d < outer; ++d) {
      l.aOffset += at[d] * a->strides[d];
      l.bOffset += at[d] * b->strides[d];
      l.cOffset += at[d] * o->strides[d];
    }
    out.push_back(l);
    size_t d = outer;
    while (d > 0 && ++at[d - 1] == o->sizes[d - 1]) at[--d] = 0;
    if (d == 0) break;
  }
  return out;
}

}  // namespace plugsdk::level_zero::library
