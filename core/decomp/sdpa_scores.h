// What attention's forward expansion (rules_library.cc) and its backward (sdpa_backward.cc)
// share: the scores' masks. One construction for both, so the weights the backward recomputes
// are the forward's.
#pragma once

#include "core/decomp/emitter.h"

namespace plugsdk::decomp {

/// `x` with `n` zeros (false for bool) appended along `dim` (as is when n is 0 or x is null).
V padDim(Emitter& e, V x, int64_t dim, const ir::SymExpr& n);

/// The masked scores [..., L, Sp] of keys padded from S to Sp rows (Sp == S: none): -inf at
/// the padded keys (index >= S), above the diagonal when `causal` (key > query), and where a
/// bool `mask` is false; a float `mask` added in `acc`. `mask` (or null) broadcasts to
/// [..., L, S].
V maskScores(Emitter& e, V scores, const ir::SymExpr& s, const ir::SymExpr& sp, bool causal, V mask, ir::DType acc);

}  // namespace plugsdk::decomp
