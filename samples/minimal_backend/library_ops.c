/*
 * The three library ops of the minimal backend on gathered values: prims.matmul,
 * prims.convolution (forward and transposed) and prims.sdpa, with the semantics of the core's
 * reference kernels (core/exec/kernels_prims_data.cc, kernels_nn_conv.cc,
 * kernels_nn_attention.cc): floating ops accumulate in double in the reference's order,
 * integer matmul and convolution wrap. library.c checks the operands, makes the views and
 * stores the results.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "library_internal.h"

/* ---- matmul ---------------------------------------------------------------------------------------- */

plugsdk_error_t* mb_run_matmul(const launch_t* l, const view_t* v, mb_value_t** results) {
  const view_t *a = &v[0], *b = &v[1], *o = &v[2];
  const uint32_t r = a->rank;
  int64_t batch = 1;
  for (uint32_t d = 0; d + 2 < r; ++d) {
    if (b->size[d] != a->size[d] || o->size[d] != a->size[d])
      return mb_failed(l, PLUGSDK_CODE_INVALID_ARGUMENT, "batch dim %u: a %lld, b %lld, out %lld (they must be equal)",
                       d, (long long)a->size[d], (long long)b->size[d], (long long)o->size[d]);
    batch *= a->size[d];
  }
  const int64_t m = a->size[r - 2], k = a->size[r - 1], n = b->size[r - 1];
  if (b->size[r - 2] != k || o->size[r - 2] != m || o->size[r - 1] != n)
    return mb_failed(l, PLUGSDK_CODE_INVALID_ARGUMENT,
                     "[%lld, %lld] x [%lld, %lld] -> [%lld, %lld]: the shapes do not match", (long long)m, (long long)k,
                     (long long)b->size[r - 2], (long long)n, (long long)o->size[r - 2], (long long)o->size[r - 1]);
  mb_value_t *x = mb_values(a->numel), *y = mb_values(b->numel), *c = mb_values(o->numel);
  if (!x || !y || !c) {
    free(x);
    free(y);
    free(c);
    return mb_failed(l, PLUGSDK_CODE_RESOURCE_EXHAUSTED, "out of memory");
  }
  mb_gather(a, x);
  mb_gather(b, y);
  const bool fp = mb_dtype_is_float(a->dtype);
  /* As nn::batchedProduct: c[i, j] += a[i, k] * b[k, j] in k order, no skipping of zeros. */
  for (int64_t bi = 0; bi < batch; ++bi) {
    const mb_value_t* ab = x + bi * m * k;
    const mb_value_t* bb = y + bi * k * n;
    mb_value_t* cb = c + bi * m * n;
    for (int64_t i = 0; i < m; ++i) {
      mb_value_t* crow = cb + i * n;
      for (int64_t kk = 0; kk < k; ++kk) {
        const mb_value_t av = ab[i * k + kk];
        const mb_value_t* brow = bb + kk * n;
        if (fp)
          for (int64_t j = 0; j < n; ++j) crow[j].f += av.f * brow[j].f;
        else
          for (int64_t j = 0; j < n; ++j) crow[j].i = wadd(crow[j].i, wmul(av.i, brow[j].i));
      }
    }
  }
  free(x);
  free(y);
  results[0] = c;
  return NULL;
}

/* ---- convolution ------------------------------------------------------------------------------------ */

/* The geometry with the spatial dims right-aligned into three (leading ones are 1). */
typedef struct geom {
  int64_t n, cin, cout, groups;
  int64_t in[3], out[3], k[3], s[3], p[3], d[3];
} geom_t;

static int64_t floor_div_pos(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); } /* b > 0 */
static int64_t ceil_div_pos(int64_t a, int64_t b) { return -floor_div_pos(-a, b); }

/* [lo, hi): the i in [0, n) for which i * s + off lies in [0, limit). */
static void valid_range(int64_t n, int64_t s, int64_t off, int64_t limit, int64_t* lo, int64_t* hi) {
  *lo = ceil_div_pos(-off, s);
  if (*lo < 0) *lo = 0;
  *hi = floor_div_pos(limit - 1 - off, s) + 1;
  if (*hi > n) *hi = n;
  if (*hi < *lo) *hi = *lo;
}

static int64_t pick(const mb_ints_t* v, size_t i) { return v->n == 1 ? v->v[0] : v->v[i]; }

static plugsdk_error_t* conv_geometry(const launch_t* l, const view_t* v, geom_t* g) {
  const mb_library_t* lib = l->lib;
  const view_t *x = &v[0], *w = &v[1], *o = &v[2];
  const size_t sp = x->rank - 2, off = 3 - sp;
  memset(g, 0, sizeof(*g));
  g->n = x->size[0];
  g->cin = x->size[1];
  g->cout = o->size[1];
  g->groups = lib->groups;
  for (int i = 0; i < 3; ++i) g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
  for (size_t i = 0; i < sp; ++i) {
    g->in[off + i] = x->size[2 + i];
    g->out[off + i] = o->size[2 + i];
    g->k[off + i] = w->size[2 + i];
    g->s[off + i] = pick(&lib->stride, i);
    g->p[off + i] = pick(&lib->padding, i);
    g->d[off + i] = pick(&lib->dilation, i);
  }
  const int64_t G = g->groups;
  if (o->size[0] != g->n)
    return mb_failed(l, PLUGSDK_CODE_INVALID_ARGUMENT, "batch: input %lld, out %lld", (long long)g->n,
                     (long long)o->size[0]);
  if (g->cin % G || g->cout % G)
    return mb_failed(l, PLUGSDK_CODE_INVALID_ARGUMENT,
                     "%lld input and %lld output channels are not divisible by groups = %lld", (long long)g->cin,
                     (long long)g->cout, (long long)G);
  /* weight: [cout, cin / groups, k...], transposed [cin, cout / groups, k...] */
  const int64_t w0 = lib->transposed ? g->cin : g->cout, w1 = lib->transposed ? g->cout / G : g->cin / G;
  if (w->size[0] != w0 || w->size[1] != w1)
    return mb_failed(l, PLUGSDK_CODE_INVALID_ARGUMENT, "weight is [%lld, %lld, ...], needs [%lld, %lld, ...]",
                     (long long)w->size[0], (long long)w->size[1], (long long)w0, (long long)w1);
  for (size_t i = 0; i < sp; ++i) {
    const size_t j = off + i;
    const int64_t span = g->d[j] * (g->k[j] - 1);
    const int64_t want = lib->transposed
                             ? (g->in[j] - 1) * g->s[j] - 2 * g->p[j] + span + pick(&lib->output_padding, i) + 1
                             : floor_div_pos(g->in[j] + 2 * g->p[j] - span - 1, g->s[j]) + 1;
    if (g->out[j] != want)
      return mb_failed(l, PLUGSDK_CODE_INVALID_ARGUMENT, "spatial dim %zu: out has size %lld, the attributes give %lld",
                       i, (long long)g->out[j], (long long)want);
  }
  return NULL;
}

/* As the reference's convForward: per output element, the sum runs over input channels, then
 * kernel positions; a non-finite weight poisons the outputs whose window touches padding. */
static void conv_forward(const geom_t* g, bool fp, const mb_value_t* x, const mb_value_t* w, mb_value_t* out) {
  const int64_t cinG = g->cin / g->groups, coutG = g->cout / g->groups;
  const int64_t IS = g->in[0] * g->in[1] * g->in[2], OS = g->out[0] * g->out[1] * g->out[2];
  const int64_t KS = g->k[0] * g->k[1] * g->k[2];
  for (int64_t n = 0; n < g->n; ++n)
    for (int64_t oc = 0; oc < g->cout; ++oc) {
      const int64_t grp = oc / coutG;
      mb_value_t* o = out + (n * g->cout + oc) * OS;
      for (int64_t icl = 0; icl < cinG; ++icl) {
        const mb_value_t* xp = x + (n * g->cin + grp * cinG + icl) * IS;
        const mb_value_t* wp = w + (oc * cinG + icl) * KS;
        for (int64_t kd = 0; kd < g->k[0]; ++kd)
          for (int64_t kh = 0; kh < g->k[1]; ++kh)
            for (int64_t kw = 0; kw < g->k[2]; ++kw) {
              const mb_value_t wv = wp[(kd * g->k[1] + kh) * g->k[2] + kw];
              const bool poison = fp && !isfinite(wv.f);
              const int64_t offW = kw * g->d[2] - g->p[2];
              int64_t lo, hi;
              valid_range(g->out[2], g->s[2], offW, g->in[2], &lo, &hi);
              for (int64_t od = 0; od < g->out[0]; ++od) {
                const int64_t id = od * g->s[0] - g->p[0] + kd * g->d[0];
                for (int64_t oh = 0; oh < g->out[1]; ++oh) {
                  const int64_t ih = oh * g->s[1] - g->p[1] + kh * g->d[1];
                  mb_value_t* orow = o + (od * g->out[1] + oh) * g->out[2];
                  const bool row_ok = id >= 0 && id < g->in[0] && ih >= 0 && ih < g->in[1];
                  if (!row_ok) {
                    if (poison)
                      for (int64_t ow = 0; ow < g->out[2]; ++ow) orow[ow].f += wv.f * 0.0;
                    continue;
                  }
                  const mb_value_t* xrow = xp + (id * g->in[1] + ih) * g->in[2];
                  if (fp)
                    for (int64_t ow = lo; ow < hi; ++ow) orow[ow].f += wv.f * xrow[ow * g->s[2] + offW].f;
                  else
                    for (int64_t ow = lo; ow < hi; ++ow)
                      orow[ow].i = wadd(orow[ow].i, wmul(wv.i, xrow[ow * g->s[2] + offW].i));
                  if (poison) {
                    for (int64_t ow = 0; ow < lo; ++ow) orow[ow].f += wv.f * 0.0;
                    for (int64_t ow = hi; ow < g->out[2]; ++ow) orow[ow].f += wv.f * 0.0;
                  }
                }
              }
            }
      }
    }
}

/* As the reference's convTransposed: each input element scatters into the outputs it reaches. */
static void conv_transposed(const geom_t* g, bool fp, const mb_value_t* x, const mb_value_t* w, mb_value_t* out) {
  const int64_t cinG = g->cin / g->groups, coutG = g->cout / g->groups;
  const int64_t IS = g->in[0] * g->in[1] * g->in[2], OS = g->out[0] * g->out[1] * g->out[2];
  const int64_t KS = g->k[0] * g->k[1] * g->k[2];
  for (int64_t n = 0; n < g->n; ++n)
    for (int64_t ic = 0; ic < g->cin; ++ic) {
      const int64_t grp = ic / cinG;
      const mb_value_t* xp = x + (n * g->cin + ic) * IS;
      for (int64_t ocl = 0; ocl < coutG; ++ocl) {
        mb_value_t* o = out + (n * g->cout + grp * coutG + ocl) * OS;
        const mb_value_t* wp = w + (ic * coutG + ocl) * KS;
        for (int64_t kd = 0; kd < g->k[0]; ++kd)
          for (int64_t kh = 0; kh < g->k[1]; ++kh)
            for (int64_t kw = 0; kw < g->k[2]; ++kw) {
              const mb_value_t wv = wp[(kd * g->k[1] + kh) * g->k[2] + kw];
              const int64_t offW = kw * g->d[2] - g->p[2];
              int64_t lo, hi;
              valid_range(g->in[2], g->s[2], offW, g->out[2], &lo, &hi);
              for (int64_t id = 0; id < g->in[0]; ++id) {
                const int64_t od = id * g->s[0] - g->p[0] + kd * g->d[0];
                if (od < 0 || od >= g->out[0]) continue;
                for (int64_t ih = 0; ih < g->in[1]; ++ih) {
                  const int64_t oh = ih * g->s[1] - g->p[1] + kh * g->d[1];
                  if (oh < 0 || oh >= g->out[1]) continue;
                  const mb_value_t* xrow = xp + (id * g->in[1] + ih) * g->in[2];
                  mb_value_t* orow = o + (od * g->out[1] + oh) * g->out[2];
                  if (fp)
                    for (int64_t iw = lo; iw < hi; ++iw) orow[iw * g->s[2] + offW].f += wv.f * xrow[iw].f;
                  else
                    for (int64_t iw = lo; iw < hi; ++iw) {
                      mb_value_t* t = &orow[iw * g->s[2] + offW];
                      t->i = wadd(t->i, wmul(wv.i, xrow[iw].i));
                    }
                }
              }
            }
      }
    }
}

plugsdk_error_t* mb_run_convolution(const launch_t* l, const view_t* v, mb_value_t** results) {
  geom_t g;
  TRY(conv_geometry(l, v, &g));
  mb_value_t *x = mb_values(v[0].numel), *w = mb_values(v[1].numel), *o = mb_values(v[2].numel);
  if (!x || !w || !o) {
    free(x);
    free(w);
    free(o);
    return mb_failed(l, PLUGSDK_CODE_RESOURCE_EXHAUSTED, "out of memory");
  }
  mb_gather(&v[0], x);
  mb_gather(&v[1], w);
  const bool fp = mb_dtype_is_float(v[0].dtype);
  if (l->lib->transposed)
    conv_transposed(&g, fp, x, w, o);
  else
    conv_forward(&g, fp, x, w, o);
  free(x);
  free(w);
  results[0] = o;
  return NULL;
}

/* ---- sdpa ------------------------------------------------------------------------------------------- */

/* Element offset of a (broadcast) operand's matrix for the output batch index idx: a dim of
 * size `size` against the output's `osize` reads idx / (osize / size) (plain broadcasting
 * for size 1 or osize, grouped-query head sharing otherwise), as the reference's batchOffset. */
static int64_t batch_offset(const int64_t* idx, const int64_t* ob, uint32_t nob, const view_t* t, int64_t matrix) {
  const uint32_t nb = t->rank - 2, off = nob - nb;
  int64_t o = 0;
  for (uint32_t i = 0; i < nb; ++i) o = o * t->size[i] + idx[off + i] / (ob[off + i] / t->size[i]);
  return o * matrix;
}

plugsdk_error_t* mb_run_sdpa(const launch_t* l, const view_t* v, mb_value_t** results) {
  const mb_library_t* lib = l->lib;
  const view_t *q = &v[0], *k = &v[1], *vv = &v[2], *mask = lib->operands[3].present ? &v[3] : NULL;
  const view_t *out = &v[4], *lse = &v[5];
  const uint32_t nob = q->rank - 2;
  const int64_t* ob = q->size;
  const int64_t L = q->size[nob], E = q->size[nob + 1];
  const int64_t S = k->size[k->rank - 2], Ev = vv->size[vv->rank - 1];
  if (k->size[k->rank - 1] != E || vv->size[vv->rank - 2] != S)
    return mb_failed(l, PLUGSDK_CODE_INVALID_ARGUMENT,
                     "query [.., %lld, %lld], key [.., %lld, %lld], value [.., %lld, %lld] do not match", (long long)L,
                     (long long)E, (long long)S, (long long)k->size[k->rank - 1], (long long)vv->size[vv->rank - 2],
                     (long long)Ev);
  for (int t = 1; t <= 2; ++t) { /* key / value batch dims divide query's */
    const view_t* x = t == 1 ? k : vv;
    const uint32_t nb = x->rank - 2, off = nob - nb;
    for (uint32_t i = 0; i < nb; ++i)
      if (ob[off + i] && (x->size[i] == 0 || ob[off + i] % x->size[i]))
        return mb_failed(l, PLUGSDK_CODE_INVALID_ARGUMENT, "%s batch dim %u (%lld) does not divide query's (%lld)",
                         t == 1 ? "key" : "value", i, (long long)x->size[i], (long long)ob[off + i]);
  }
  for (uint32_t d = 0; d < nob; ++d)
    if (out->size[d] != ob[d] || lse->size[d] != ob[d])
      return mb_failed(l, PLUGSDK_CODE_INVALID_ARGUMENT, "out or logsumexp batch dim %u differs from query's", d);
  if (out->size[nob] != L || out->size[nob + 1] != Ev || lse->size[nob] != L)
    return mb_failed(l, PLUGSDK_CODE_INVALID_ARGUMENT, "out must be [.., %lld, %lld] and logsumexp [.., %lld]",
                     (long long)L, (long long)Ev, (long long)L);
  /* The mask broadcast to [ob..., L, S] (right-aligned; dims of size 1 repeat). */
  int64_t mstride[MB_MAX_RANK] = {0};
  const uint32_t nfull = nob + 2;
  int64_t full[MB_MAX_RANK];
  for (uint32_t d = 0; d < nob; ++d) full[d] = ob[d];
  full[nob] = L;
  full[nob + 1] = S;
  if (mask) {
    int64_t st = 1;
    for (uint32_t i = mask->rank; i-- > 0;) {
      const uint32_t f = nfull - mask->rank + i;
      if (mask->size[i] != 1 && mask->size[i] != full[f])
        return mb_failed(l, PLUGSDK_CODE_INVALID_ARGUMENT, "attn_mask dim %u (%lld) does not broadcast to %lld", i,
                         (long long)mask->size[i], (long long)full[f]);
      mstride[f] = mask->size[i] == 1 ? 0 : st;
      st *= mask->size[i];
    }
  }
  mb_value_t *qx = mb_values(q->numel), *kx = mb_values(k->numel), *vx = mb_values(vv->numel);
  mb_value_t* mx_ = mask ? mb_values(mask->numel) : NULL;
  mb_value_t *o = mb_values(out->numel), *lx = mb_values(lse->numel);
  double* scores = malloc((size_t)(S > 0 ? S : 1) * sizeof(double));
  if (!qx || !kx || !vx || (mask && !mx_) || !o || !lx || !scores) {
    free(qx);
    free(kx);
    free(vx);
    free(mx_);
    free(o);
    free(lx);
    free(scores);
    return mb_failed(l, PLUGSDK_CODE_RESOURCE_EXHAUSTED, "out of memory");
  }
  mb_gather(q, qx);
  mb_gather(k, kx);
  mb_gather(vv, vx);
  if (mask) mb_gather(mask, mx_);
  const bool bool_mask = mask && mask->dtype == PLUGSDK_DTYPE_BOOL;
  const double scale = lib->has_scale ? lib->scale : 1.0 / sqrt((double)E), keep = 1.0 - lib->dropout_p;
  int64_t idx[MB_MAX_RANK] = {0}, batches = 1;
  for (uint32_t d = 0; d < nob; ++d) batches *= ob[d];
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t qo = batch_offset(idx, ob, nob, q, L * E), ko = batch_offset(idx, ob, nob, k, S * E);
    const int64_t vo = batch_offset(idx, ob, nob, vv, S * Ev);
    int64_t mbase = 0;
    for (uint32_t d = 0; d < nob; ++d) mbase += idx[d] * mstride[d];
    for (int64_t i = 0; i < L; ++i) {
      bool all_masked = true;
      double mx = -INFINITY;
      for (int64_t j = 0; j < S; ++j) {
        double sc = 0;
        for (int64_t e = 0; e < E; ++e) sc += qx[qo + i * E + e].f * kx[ko + j * E + e].f;
        sc *= scale;
        if (lib->is_causal && j > i) sc = -INFINITY; /* top-left aligned tril(ones(L, S)) */
        if (mask) {
          const mb_value_t m = mx_[mbase + i * mstride[nob] + j * mstride[nob + 1]];
          if (bool_mask) {
            if (m.i == 0) sc = -INFINITY;
          } else {
            sc += m.f;
          }
        }
        scores[j] = sc;
        if (sc != -INFINITY) all_masked = false;
        if (isnan(sc) || sc > mx) mx = isnan(mx) ? mx : sc;
      }
      if (all_masked) continue; /* out row and lse stay 0 */
      double sum = 0;
      for (int64_t j = 0; j < S; ++j) sum += (scores[j] = exp(scores[j] - mx));
      lx[b * L + i].f = mx + log(sum);
      for (int64_t j = 0; j < S; ++j) {
        scores[j] /= sum;
        if (lib->dropout_p > 0)
          scores[j] = mb_uniform(lib->seed, (b * L + i) * S + j, 53) < keep ? scores[j] / keep : 0.0;
      }
      for (int64_t e = 0; e < Ev; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < S; ++j) acc += scores[j] * vx[vo + j * Ev + e].f;
        o[(b * L + i) * Ev + e].f = acc;
      }
    }
    for (uint32_t d = nob; d-- > 0;) { /* the next batch index, row-major */
      if (++idx[d] < ob[d]) break;
      idx[d] = 0;
    }
  }
  free(qx);
  free(kx);
  free(vx);
  free(mx_);
  free(scores);
  results[0] = o;
  results[1] = lx;
  return NULL;
}
