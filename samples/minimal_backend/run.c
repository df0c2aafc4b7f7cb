/*
 * The minimal backend's kernel interpreter: runs a compiled kernel (compile.c) once per grid
 * point, with the semantics of the core's reference interpreter (core/kernel/interpreter.cc,
 * core/prims/scalar_ops.cc):
 *
 *  - floating values are doubles; with numerics=dtype (the default) every floating result is
 *    rounded to its statement's dtype (f16 and bf16 through float, as PyTorch's CPU casts),
 *    with numerics=float64 they keep float64 between ops as the reference does. Reductions
 *    accumulate in double and round once. Stores and casts always round.
 *  - integer values are int64, wrapped to their dtype's width after every op; bool is 0/1.
 *  - loads and stores are bounds-checked against the launch's buffers; a failed CHECK, an
 *    out-of-range access, an integer division by zero and a max/min/argmax/argmin over an
 *    empty loop fail the launch with OUT_OF_RANGE.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "minimal.h"

/* ---- dtypes and conversions ------------------------------------------------------------------- */

size_t mb_dtype_bytes(uint32_t dtype) {
  static const size_t bytes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  return dtype <= PLUGSDK_DTYPE_F64 ? bytes[dtype] : 0;
}

bool mb_dtype_is_float(uint32_t dtype) { return dtype >= PLUGSDK_DTYPE_F16 && dtype <= PLUGSDK_DTYPE_F64; }

/* uint64 -> int64 two's complement, without implementation-defined conversions. */
static int64_t s64(uint64_t u) { return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1; }

/* The low `bits` bits of v, sign-extended. */
static int64_t sext(int64_t v, unsigned bits) {
  const uint64_t m = ((uint64_t)1 << bits) - 1, u = (uint64_t)v & m, sign = (uint64_t)1 << (bits - 1);
  return u & sign ? -(int64_t)(m - u) - 1 : (int64_t)u;
}

/* An integer wrapped to the width of an integral dtype (two's complement); bool -> 0/1. */
static int64_t wrap(uint32_t dtype, int64_t v) {
  switch (dtype) {
    case PLUGSDK_DTYPE_BOOL: return v != 0;
    case PLUGSDK_DTYPE_U8: return (int64_t)((uint64_t)v & 0xff);
    case PLUGSDK_DTYPE_I8: return sext(v, 8);
    case PLUGSDK_DTYPE_I16: return sext(v, 16);
    case PLUGSDK_DTYPE_I32: return sext(v, 32);
    default: return v;
  }
}

static double half_to_double(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp == 0 ? ldexp(mant, -24) : exp == 31 ? (mant ? NAN : INFINITY) : ldexp(mant | 0x400, exp - 25);
  return h & 0x8000 ? -v : v;
}

/* float -> f16 bits, round to nearest even. */
static uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  x &= 0x7fffffff;
  if (x >= 0x7f800000) return sign | 0x7c00 | (x > 0x7f800000 ? 0x200 : 0); /* inf, NaN */
#if defined(MINIMAL_BREAK_ROUNDING)
  /* DELIBERATELY WRONG (the broken_rounding test plugin, never shipped): round toward zero,
   * so about half of all values come out 1 ulp small in magnitude. The conformance tests
   * test_suite_plugins.py::test_broken_rounding_* rely on this breakage. */
  if (x >= 0x47800000) return sign | 0x7bff; /* >= 65536: the largest finite, toward zero */
  if (x < 0x38800000) return sign | (uint16_t)trunc(fabs((double)f) * 16777216.0);
  return sign | (uint16_t)((x - 0x38000000) >> 13);
#else
  if (x >= 0x477ff000) return sign | 0x7c00; /* >= 65520 rounds to inf */
  if (x < 0x38800000) /* below 2^-14: a multiple of 2^-24 (exact in double; may round up to 2^-14) */
    return sign | (uint16_t)nearbyint(fabs((double)f) * 16777216.0);
  x += 0xfff + ((x >> 13) & 1); /* round the 13 dropped bits to nearest even */
  return sign | (uint16_t)((x - 0x38000000) >> 13);
#endif
}

static double bf16_to_double(uint16_t b) {
  const uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* float -> bf16 bits, round to nearest even. */
static uint16_t float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40); /* NaN stays NaN */
#if defined(MINIMAL_BREAK_ROUNDING)
  /* DELIBERATELY WRONG (the broken_rounding test plugin, never shipped): truncate the low
   * 16 bits (round toward zero). test_suite_plugins.py::test_broken_rounding_* rely on it. */
  return (uint16_t)(x >> 16);
#else
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
#endif
}

/* A double rounded to the nearest value of a floating dtype (core/exec/host_tensor.cc's
 * roundToFloatType: f16 and bf16 go through float, rounding twice). */
static double round_to(uint32_t dtype, double v) {
  switch (dtype) {
    case PLUGSDK_DTYPE_F32: return (float)v;
    case PLUGSDK_DTYPE_F16: return half_to_double(float_to_half((float)v));
    case PLUGSDK_DTYPE_BF16: return bf16_to_double(float_to_bf16((float)v));
    default: return v;
  }
}

/* double -> integral dtype as PyTorch's CPU conversion: truncation; NaN and out-of-range
 * values give INT32_MIN for i8/i16/i32 (then wrapped) and INT64_MIN for i64/u8. */
static int64_t double_to_int(uint32_t dtype, double v) {
  if (dtype == PLUGSDK_DTYPE_BOOL) return v != 0.0;
  const double t = trunc(v);
  if (dtype == PLUGSDK_DTYPE_I8 || dtype == PLUGSDK_DTYPE_I16 || dtype == PLUGSDK_DTYPE_I32)
    return wrap(dtype, isnan(t) || t >= 2147483648.0 || t < -2147483648.0 ? INT32_MIN : (int64_t)t);
  return wrap(dtype, isnan(t) || t >= 9223372036854775808.0 || t < -9223372036854775808.0 ? INT64_MIN : (int64_t)t);
}

/* ---- values, loads and stores ------------------------------------------------------------------- */

static mb_value_t load(uint32_t dtype, const unsigned char* p) {
  mb_value_t v;
  switch (dtype) {
    case PLUGSDK_DTYPE_BOOL: v.i = *p != 0; break;
    case PLUGSDK_DTYPE_U8: v.i = *p; break;
    case PLUGSDK_DTYPE_I8: v.i = sext(*p, 8); break;
    case PLUGSDK_DTYPE_I16: {
      int16_t x;
      memcpy(&x, p, 2);
      v.i = x;
      break;
    }
    case PLUGSDK_DTYPE_I32: {
      int32_t x;
      memcpy(&x, p, 4);
      v.i = x;
      break;
    }
    case PLUGSDK_DTYPE_I64: memcpy(&v.i, p, 8); break;
    case PLUGSDK_DTYPE_F16:
    case PLUGSDK_DTYPE_BF16: {
      uint16_t x;
      memcpy(&x, p, 2);
      v.f = dtype == PLUGSDK_DTYPE_F16 ? half_to_double(x) : bf16_to_double(x);
      break;
    }
    case PLUGSDK_DTYPE_F32: {
      float x;
      memcpy(&x, p, 4);
      v.f = x;
      break;
    }
    default: memcpy(&v.f, p, 8); break;
  }
  return v;
}

static void store(uint32_t dtype, unsigned char* p, mb_value_t v) {
  switch (dtype) {
    case PLUGSDK_DTYPE_BOOL: *p = v.i != 0; break;
    case PLUGSDK_DTYPE_U8:
    case PLUGSDK_DTYPE_I8: *p = (unsigned char)((uint64_t)v.i & 0xff); break;
    case PLUGSDK_DTYPE_I16: {
      uint16_t x = (uint16_t)(uint64_t)v.i;
      memcpy(p, &x, 2);
      break;
    }
    case PLUGSDK_DTYPE_I32: {
      uint32_t x = (uint32_t)(uint64_t)v.i;
      memcpy(p, &x, 4);
      break;
    }
    case PLUGSDK_DTYPE_I64: memcpy(p, &v.i, 8); break;
    case PLUGSDK_DTYPE_F16:
    case PLUGSDK_DTYPE_BF16: {
      uint16_t x = dtype == PLUGSDK_DTYPE_F16 ? float_to_half((float)v.f) : float_to_bf16((float)v.f);
      memcpy(p, &x, 2);
      break;
    }
    case PLUGSDK_DTYPE_F32: {
      float x = (float)v.f;
      memcpy(p, &x, 4);
      break;
    }
    default: memcpy(p, &v.f, 8); break;
  }
}

mb_value_t mb_load(uint32_t dtype, const unsigned char* p) { return load(dtype, p); }
void mb_store(uint32_t dtype, unsigned char* p, mb_value_t v) { store(dtype, p, v); }

/* ---- scalar ops (core/prims/scalar_ops.cc) -------------------------------------------------------- */

static double max_f(double a, double b) { return isnan(a) ? a : isnan(b) ? b : (a < b ? b : a); }
static double min_f(double a, double b) { return isnan(a) ? a : isnan(b) ? b : (b < a ? b : a); }

/* Python's %: the result takes the divisor's sign. */
static double remainder_f(double a, double b) {
  double m = fmod(a, b);
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  return m;
}

static double eval_float(uint32_t op, double a, double b) {
  switch (op) {
    case PLUGSDK_OP_ABS: return fabs(a);
    case PLUGSDK_OP_NEG: return -a;
    case PLUGSDK_OP_SIGN: return (double)((0 < a) - (a < 0)); /* NaN and -0.0 -> 0 */
    case PLUGSDK_OP_FLOOR: return floor(a);
    case PLUGSDK_OP_CEIL: return ceil(a);
    case PLUGSDK_OP_ROUND: return nearbyint(a); /* half to even */
    case PLUGSDK_OP_TRUNC: return trunc(a);
    case PLUGSDK_OP_EXP: return exp(a);
    case PLUGSDK_OP_EXPM1: return expm1(a);
    case PLUGSDK_OP_LOG: return log(a);
    case PLUGSDK_OP_LOG1P: return log1p(a);
    case PLUGSDK_OP_LOG2: return log2(a);
    case PLUGSDK_OP_SQRT: return sqrt(a);
    case PLUGSDK_OP_RSQRT: return 1.0 / sqrt(a);
    case PLUGSDK_OP_SIN: return sin(a);
    case PLUGSDK_OP_COS: return cos(a);
    case PLUGSDK_OP_TAN: return tan(a);
    case PLUGSDK_OP_ASIN: return asin(a);
    case PLUGSDK_OP_ACOS: return acos(a);
    case PLUGSDK_OP_ATAN: return atan(a);
    case PLUGSDK_OP_SINH: return sinh(a);
    case PLUGSDK_OP_COSH: return cosh(a);
    case PLUGSDK_OP_TANH: return tanh(a);
    case PLUGSDK_OP_ASINH: return asinh(a);
    case PLUGSDK_OP_ACOSH: return acosh(a);
    case PLUGSDK_OP_ATANH: return atanh(a);
    case PLUGSDK_OP_ERF: return erf(a);
    case PLUGSDK_OP_ADD: return a + b;
    case PLUGSDK_OP_SUB: return a - b;
    case PLUGSDK_OP_MUL: return a * b;
    case PLUGSDK_OP_DIV: return a / b;
    case PLUGSDK_OP_REMAINDER: return remainder_f(a, b);
    case PLUGSDK_OP_FMOD: return fmod(a, b);
    case PLUGSDK_OP_POW: return pow(a, b);
    case PLUGSDK_OP_ATAN2: return atan2(a, b);
    case PLUGSDK_OP_MAXIMUM: return max_f(a, b);
    case PLUGSDK_OP_MINIMUM: return min_f(a, b);
    case PLUGSDK_OP_EQ: return a == b;
    case PLUGSDK_OP_NE: return a != b;
    case PLUGSDK_OP_LT: return a < b;
    case PLUGSDK_OP_LE: return a <= b;
    case PLUGSDK_OP_GT: return a > b;
    case PLUGSDK_OP_GE: return a >= b;
    default: return NAN; /* bitwise ops take no floats (compile.c) */
  }
}

static int64_t add_i(int64_t a, int64_t b) { return s64((uint64_t)a + (uint64_t)b); }
static int64_t mul_i(int64_t a, int64_t b) { return s64((uint64_t)a * (uint64_t)b); }
static int64_t neg_i(int64_t a) { return s64(0 - (uint64_t)a); }

/* Integer a^b by repeated squaring, wrapping; negative exponents give 0 unless |a| == 1. */
static int64_t pow_i(int64_t base, int64_t exp) {
  if (exp < 0) return base == 1 ? 1 : base == -1 ? (exp % 2 == 0 ? 1 : -1) : 0;
  int64_t r = 1;
  for (; exp; exp >>= 1, base = mul_i(base, base))
    if (exp & 1) r = mul_i(r, base);
  return r;
}

/* An integral op on values of `dtype`; false for an integer division by zero. */
static bool eval_int(uint32_t op, int64_t a, int64_t b, uint32_t dtype, int64_t* out) {
  int64_t r;
  switch (op) {
    case PLUGSDK_OP_ABS: r = a < 0 ? neg_i(a) : a; break;
    case PLUGSDK_OP_NEG: r = neg_i(a); break;
    case PLUGSDK_OP_SIGN: r = (0 < a) - (a < 0); break;
    case PLUGSDK_OP_BITWISE_NOT: r = dtype == PLUGSDK_DTYPE_BOOL ? a == 0 : ~a; break;
    case PLUGSDK_OP_ADD: r = add_i(a, b); break;
    case PLUGSDK_OP_SUB: r = s64((uint64_t)a - (uint64_t)b); break;
    case PLUGSDK_OP_MUL: r = mul_i(a, b); break;
    case PLUGSDK_OP_DIV: /* C division; INT64_MIN / -1 wraps */
      if (b == 0) return false;
      r = b == -1 ? neg_i(a) : a / b;
      break;
    case PLUGSDK_OP_REMAINDER: /* the divisor's sign */
      if (b == 0) return false;
      r = b == -1 ? 0 : a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      break;
    case PLUGSDK_OP_FMOD: /* the dividend's sign */
      if (b == 0) return false;
      r = b == -1 ? 0 : a % b;
      break;
    case PLUGSDK_OP_POW: r = pow_i(a, b); break;
    case PLUGSDK_OP_MAXIMUM: r = a < b ? b : a; break;
    case PLUGSDK_OP_MINIMUM: r = b < a ? b : a; break;
    case PLUGSDK_OP_BITWISE_AND: r = a & b; break;
    case PLUGSDK_OP_BITWISE_OR: r = a | b; break;
    case PLUGSDK_OP_BITWISE_XOR: r = a ^ b; break;
    case PLUGSDK_OP_EQ: *out = a == b; return true;
    case PLUGSDK_OP_NE: *out = a != b; return true;
    case PLUGSDK_OP_LT: *out = a < b; return true;
    case PLUGSDK_OP_LE: *out = a <= b; return true;
    case PLUGSDK_OP_GT: *out = a > b; return true;
    case PLUGSDK_OP_GE: *out = a >= b; return true;
    default: r = a; break; /* floor, ceil, round, trunc: identity on integers */
  }
  *out = wrap(dtype, r);
  return true;
}

/* prims.rand: (splitmix64(splitmix64(seed) + counter) >> (64 - bits)) * 2^-bits. */
static uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double mb_uniform(int64_t seed, int64_t counter, int bits) {
  const uint64_t key = splitmix64((uint64_t)seed);
  return ldexp((double)(splitmix64(key + (uint64_t)counter) >> (64 - bits)), -bits);
}

static double uniform_at(int64_t seed, int64_t counter, uint32_t dtype) {
  const int bits = dtype == PLUGSDK_DTYPE_F16    ? 11
                   : dtype == PLUGSDK_DTYPE_BF16 ? 8
                   : dtype == PLUGSDK_DTYPE_F32  ? 24
                                                 : 53;
  return mb_uniform(seed, counter, bits);
}

/* ---- the interpreter state of one launch --------------------------------------------------------- */

typedef struct mb_acc {
  bool seen;
  double f;
  int64_t i;
  int64_t best; /* argmax / argmin: position in the loop's domain */
} mb_acc_t;

typedef struct run {
  const plugsdk_executable_t* exe;
  unsigned char* const* bases;
  const int64_t* elements;
  const int64_t* symbols;
  mb_value_t* values;
  int64_t* grid_vars; /* i0 .. */
  int64_t* loop_vars; /* r0 .. of the loop being run */
  int64_t* stack;     /* index programs */
  int64_t* sizes;     /* the extents of the loop being run */
  mb_acc_t* accs;
} run_t;

static plugsdk_error_t* fail(const run_t* r, const char* what, const char* detail) {
  return mb_error(PLUGSDK_CODE_OUT_OF_RANGE, "launch: kernel @%s: %s%s", r->exe->name, what, detail ? detail : "");
}

/* Python floor division and modulo (b == 0 gives 0, as the reference's index evaluator). */
static int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return neg_i(a);
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

/* Runs a postfix index program (compile.c checked its operands and stack depth). */
static int64_t eval_index(const run_t* r, plugsdk_index_expr_t e) {
  const plugsdk_index_insn_t* in = r->exe->index_insns + e.first;
  if (e.count == 1 && in->op == PLUGSDK_INDEX_CONST) return in->operand;
  int64_t* st = r->stack;
  size_t sp = 0;
  for (uint32_t n = 0; n < e.count; ++n, ++in) {
    switch (in->op) {
      case PLUGSDK_INDEX_CONST: st[sp++] = in->operand; break;
      case PLUGSDK_INDEX_GRID_VAR: st[sp++] = r->grid_vars[in->operand]; break;
      case PLUGSDK_INDEX_LOOP_VAR: st[sp++] = r->loop_vars[in->operand]; break;
      case PLUGSDK_INDEX_SYMBOL: st[sp++] = r->symbols[in->operand]; break;
      case PLUGSDK_INDEX_VALUE: st[sp++] = r->values[in->operand].i; break;
      default: {
        const int64_t b = st[--sp], a = st[sp - 1];
        switch (in->op) {
          case PLUGSDK_INDEX_ADD: st[sp - 1] = add_i(a, b); break;
          case PLUGSDK_INDEX_SUB: st[sp - 1] = s64((uint64_t)a - (uint64_t)b); break;
          case PLUGSDK_INDEX_MUL: st[sp - 1] = mul_i(a, b); break;
          case PLUGSDK_INDEX_FLOORDIV: st[sp - 1] = floor_div(a, b); break;
          default: st[sp - 1] = s64((uint64_t)a - (uint64_t)mul_i(b, floor_div(a, b))); break; /* MOD */
        }
      }
    }
  }
  return st[0];
}

/* The element a LOAD or STORE addresses, bounds-checked. */
static plugsdk_error_t* address(const run_t* r, const mb_stmt_t* s, unsigned char** at) {
  const int64_t i = eval_index(r, s->index), n = r->elements[s->arg];
  if (i < 0 || i >= n) {
    char detail[320];
    snprintf(detail, sizeof(detail), "%s %%%s at element %lld, outside its %lld elements",
             s->kind == PLUGSDK_STMT_LOAD ? "load from" : "store to", r->exe->args[s->arg].name, (long long)i,
             (long long)n);
    return fail(r, detail, NULL);
  }
  *at = r->bases[s->arg] + (size_t)i * mb_dtype_bytes(s->dtype);
  return NULL;
}

static const uint32_t combine_op[] = {0, PLUGSDK_OP_ADD, PLUGSDK_OP_MUL, PLUGSDK_OP_MAXIMUM, PLUGSDK_OP_MINIMUM};

/* Runs one statement that is not a LOOP or a REDUCE. */
static plugsdk_error_t* step(run_t* r, const mb_stmt_t* s) {
  mb_value_t* v = r->values;
  const bool fp = mb_dtype_is_float(s->dtype);
  const bool round = r->exe->round_every_op && fp && s->dtype != PLUGSDK_DTYPE_F64;
  unsigned char* at;
  plugsdk_error_t* e;
  switch (s->kind) {
    case PLUGSDK_STMT_LOAD:
      if (s->num_operands && v[s->operands[0]].i == 0) { /* masked off: no access, value 0 */
        if (fp)
          v[s->result].f = 0.0;
        else
          v[s->result].i = 0;
        return NULL;
      }
      if ((e = address(r, s, &at))) return e;
      v[s->result] = load(s->dtype, at);
      return NULL;
    case PLUGSDK_STMT_STORE: {
      if ((e = address(r, s, &at))) return e;
      mb_value_t x = v[s->operands[0]];
      if (s->op != PLUGSDK_COMBINE_NONE) {
        const mb_value_t old = load(s->dtype, at);
        if (fp)
          x.f = eval_float(combine_op[s->op], old.f, x.f);
        else
          eval_int(combine_op[s->op], old.i, x.i, s->dtype, &x.i);
      }
      store(s->dtype, at, x);
      return NULL;
    }
    case PLUGSDK_STMT_CONST:
      if (fp)
        v[s->result].f = round ? round_to(s->dtype, s->fvalue) : s->fvalue;
      else
        v[s->result].i = wrap(s->dtype, s->ivalue);
      return NULL;
    case PLUGSDK_STMT_INDEX: v[s->result].i = eval_index(r, s->index); return NULL;
    case PLUGSDK_STMT_RAND: /* exact in its dtype: no rounding */
      v[s->result].f = uniform_at(s->ivalue, eval_index(r, s->index), s->dtype);
      return NULL;
    case PLUGSDK_STMT_SCALAR: {
      const mb_value_t a = v[s->operands[0]], b = v[s->operands[s->num_operands > 1]];
      if (s->operand_float) {
        const double x = eval_float(s->op, a.f, b.f);
        if (fp)
          v[s->result].f = round ? round_to(s->dtype, x) : x;
        else
          v[s->result].i = x != 0; /* a comparison */
      } else if (!eval_int(s->op, a.i, b.i, s->operand_dtype, &v[s->result].i)) {
        return fail(r, "integer division by zero (ZeroDivisionError)", NULL);
      }
      return NULL;
    }
    case PLUGSDK_STMT_WHERE: v[s->result] = v[s->operands[v[s->operands[0]].i ? 1 : 2]]; return NULL;
    case PLUGSDK_STMT_CAST: {
      const mb_value_t a = v[s->operands[0]];
      if (fp)
        v[s->result].f = round_to(s->dtype, s->operand_float ? a.f : (double)a.i);
      else if (s->operand_float)
        v[s->result].i = double_to_int(s->dtype, a.f);
      else
        v[s->result].i = wrap(s->dtype, a.i);
      return NULL;
    }
    case PLUGSDK_STMT_CHECK:
      if (v[s->operands[0]].i == 0) return fail(r, s->message, NULL);
      return NULL;
    default: return NULL; /* LOOP and REDUCE are run by run_loop */
  }
}

/* ---- reductions ------------------------------------------------------------------------------- */

/* Combines value x (at row-major position pos of the loop's domain) into a reduce's
 * accumulator, with the reference's NaN and tie rules. */
static void accumulate(mb_acc_t* a, const mb_stmt_t* s, mb_value_t x, int64_t pos) {
  const uint32_t op = s->op;
  const bool fp = s->operand_float;
  if (!a->seen) {
    a->seen = true;
    a->best = pos;
    if (op == PLUGSDK_REDUCE_SUM || op == PLUGSDK_REDUCE_PROD) {
      a->f = op == PLUGSDK_REDUCE_SUM ? 0.0 : 1.0;
      a->i = op == PLUGSDK_REDUCE_SUM ? 0 : 1;
    } else {
      a->f = x.f;
      a->i = x.i;
      return;
    }
  }
  switch (op) {
    case PLUGSDK_REDUCE_SUM:
      if (fp)
        a->f += x.f;
      else
        a->i = add_i(a->i, x.i);
      break;
    case PLUGSDK_REDUCE_PROD:
      if (fp)
        a->f *= x.f;
      else
        a->i = mul_i(a->i, x.i);
      break;
    case PLUGSDK_REDUCE_MAX:
      if (fp)
        a->f = max_f(a->f, x.f);
      else if (x.i > a->i)
        a->i = x.i;
      break;
    case PLUGSDK_REDUCE_MIN:
      if (fp)
        a->f = min_f(a->f, x.f);
      else if (x.i < a->i)
        a->i = x.i;
      break;
    default: { /* argmax / argmin: the first of equal values, and the first NaN, win */
      const bool is_max = op == PLUGSDK_REDUCE_ARGMAX;
      if (fp) {
        if (isnan(a->f)) break;
        if (isnan(x.f) || (is_max ? x.f > a->f : x.f < a->f)) {
          a->f = x.f;
          a->best = pos;
        }
      } else if (is_max ? x.i > a->i : x.i < a->i) {
        a->i = x.i;
        a->best = pos;
      }
    }
  }
}

static plugsdk_error_t* finish(run_t* r, const mb_stmt_t* s, const mb_acc_t* a, int64_t total) {
  static const char* names[] = {"sum", "prod", "max", "min", "argmax", "argmin"};
  mb_value_t* out = &r->values[s->result];
  const bool identity = s->op == PLUGSDK_REDUCE_SUM || s->op == PLUGSDK_REDUCE_PROD;
  if (total == 0 && !identity) {
    char what[64];
    snprintf(what, sizeof(what), "reduce %s over an empty loop (no identity)", names[s->op]);
    return fail(r, what, NULL);
  }
  if (!identity && s->op >= PLUGSDK_REDUCE_ARGMAX)
    out->i = a->best;
  else if (mb_dtype_is_float(s->dtype)) {
    const double x = total == 0 ? (s->op == PLUGSDK_REDUCE_SUM ? 0.0 : 1.0) : a->f;
    out->f = r->exe->round_every_op ? round_to(s->dtype, x) : x;
  } else
    out->i = wrap(s->dtype, total == 0 ? s->op == PLUGSDK_REDUCE_PROD : a->i);
  return NULL;
}

/* A LOOP at stmts[at]: its body runs for every point of the loop's domain (row-major,
 * r0 outermost); REDUCEs accumulate, the other statements run as at the top level. */
static plugsdk_error_t* run_loop(run_t* r, size_t at) {
  const plugsdk_executable_t* x = r->exe;
  const mb_stmt_t* loop = &x->stmts[at];
  const mb_stmt_t* body = loop + 1;
  const mb_stmt_t* end = body + loop->body_count;
  const uint32_t rank = loop->num_loop_sizes;
  int64_t total = 1;
  for (uint32_t d = 0; d < rank; ++d) {
    r->sizes[d] = eval_index(r, x->loop_sizes[loop->first_loop_size + d]);
    if (r->sizes[d] < 0) return fail(r, "a loop has a negative extent", NULL);
    total *= r->sizes[d];
    r->loop_vars[d] = 0;
  }
#if defined(MINIMAL_BREAK_LAST_TILE)
  /* DELIBERATELY WRONG (the broken_tile test plugin, never shipped): the innermost loop runs
   * in tiles of 8 and the partial last tile is skipped, the classic vectorizer remainder bug.
   * test_suite_plugins.py::test_broken_tile_fails_the_model_tier relies on it. */
  if (rank && r->sizes[rank - 1] % 8) {
    total /= r->sizes[rank - 1];
    r->sizes[rank - 1] -= r->sizes[rank - 1] % 8;
    total *= r->sizes[rank - 1];
  }
#endif
  for (const mb_stmt_t* s = body; s < end; ++s)
    if (s->kind == PLUGSDK_STMT_REDUCE) r->accs[s->acc].seen = false;
  for (int64_t pos = 0; pos < total; ++pos) {
    for (const mb_stmt_t* s = body; s < end; ++s) {
      if (s->kind == PLUGSDK_STMT_REDUCE) {
        accumulate(&r->accs[s->acc], s, r->values[s->operands[0]], pos);
      } else {
        plugsdk_error_t* e = step(r, s);
        if (e) return e;
      }
    }
    for (uint32_t d = rank; d-- > 0;) { /* the next point: an odometer, r<rank-1> fastest */
      if (++r->loop_vars[d] < r->sizes[d]) break;
      r->loop_vars[d] = 0;
    }
  }
  for (const mb_stmt_t* s = body; s < end; ++s) {
    if (s->kind != PLUGSDK_STMT_REDUCE) continue;
    plugsdk_error_t* e = finish(r, s, &r->accs[s->acc], total);
    if (e) return e;
  }
  return NULL;
}

plugsdk_error_t* mb_run(const plugsdk_executable_t* x, unsigned char* const* bases, const int64_t* elements,
                        const int64_t* symbol_values) {
  /* One block of scratch per launch; nothing is allocated while the kernel runs. */
  const size_t n_ints = 2 * x->num_grid + 2 * (size_t)x->max_loop_rank + x->max_stack + 1;
  const size_t bytes =
      x->num_values * sizeof(mb_value_t) + n_ints * sizeof(int64_t) + x->num_reduces * sizeof(mb_acc_t);
  void* block = calloc(1, bytes ? bytes : 1);
  if (!block) return mb_error(PLUGSDK_CODE_RESOURCE_EXHAUSTED, "launch: out of memory");
  run_t r = {x, bases, elements, symbol_values, block, NULL, NULL, NULL, NULL, NULL};
  int64_t* ints = (int64_t*)(r.values + x->num_values);
  int64_t* grid = ints;
  r.grid_vars = grid + x->num_grid;
  r.loop_vars = r.grid_vars + x->num_grid;
  r.sizes = r.loop_vars + x->max_loop_rank;
  r.stack = r.sizes + x->max_loop_rank;
  r.accs = (mb_acc_t*)(ints + n_ints);

  plugsdk_error_t* e = NULL;
  int64_t points = 1;
  for (size_t d = 0; d < x->num_grid; ++d) {
    grid[d] = eval_index(&r, x->grid[d]);
    if (grid[d] < 0) {
      e = fail(&r, "a grid dimension has a negative size", NULL);
      break;
    }
    points *= grid[d];
  }
#if defined(MINIMAL_BREAK_LAST_TILE)
  /* DELIBERATELY WRONG (broken_tile, see run_loop): a kernel without loops has the last grid
   * dimension as its innermost loop; its partial last tile of 8 is skipped. */
  bool has_loop = false;
  for (size_t i = 0; i < x->num_stmts; ++i) has_loop = has_loop || x->stmts[i].kind == PLUGSDK_STMT_LOOP;
  if (!e && !has_loop && x->num_grid && grid[x->num_grid - 1] % 8) {
    points /= grid[x->num_grid - 1];
    grid[x->num_grid - 1] -= grid[x->num_grid - 1] % 8;
    points *= grid[x->num_grid - 1];
  }
#endif
  for (int64_t p = 0; p < points && !e; ++p) {
    for (size_t i = 0; i < x->num_stmts && !e; ++i) {
      const mb_stmt_t* s = &x->stmts[i];
      if (s->kind == PLUGSDK_STMT_LOOP) {
        e = run_loop(&r, i);
        i += s->body_count;
      } else {
        e = step(&r, s);
      }
    }
    for (size_t d = x->num_grid; d-- > 0;) { /* the next grid point, i<rank-1> fastest */
      if (++r.grid_vars[d] < grid[d]) break;
      r.grid_vars[d] = 0;
    }
  }
  free(block);
  return e;
}
