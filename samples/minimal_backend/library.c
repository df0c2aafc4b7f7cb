/*
 * compile_library for the minimal backend: prims.matmul, prims.convolution and prims.sdpa on
 * strided operands, with the semantics of the core's reference kernels
 * (core/exec/kernels_prims_data.cc, kernels_nn_conv.cc, kernels_nn_attention.cc); this file
 * checks, parses and launches, and library_ops.c computes:
 *
 *  - operands are plugsdk_tensor_desc_t: sizes, strides (elements) and offset are index
 *    programs over the call's symbols, evaluated at launch with its symbol values; every
 *    element an operand can reach is checked against its buffer before anything is read;
 *  - floating ops accumulate in double in the reference's order (results are bitwise those of
 *    the reference after rounding to the output dtype); integer matmul / convolution wrap
 *    (two's complement, then to the output's width);
 *  - the attributes come as text, "name = value, ..." as the core prints them
 *    (kernel_encoding.cc: `stride = [2, 2], padding = [1, 1], ...`); anything this file does
 *    not understand is INVALID_ARGUMENT naming the attribute.
 *
 * With an epilogue kernel, output 0 is not stored: the result goes to a temporary (row-major,
 * the dtype of the epilogue's ACCUMULATOR argument), then the epilogue runs (run.c) with its
 * accumulator bound to the temporary and its other arguments to the launch's trailing
 * buffers in order. The launch's symbol values are the call's symbols, then the epilogue
 * kernel's own symbols (as core/plugin/device_program.cc passes them).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "library_internal.h"

/* ---- the ops ---------------------------------------------------------------------------------- */

static const char* const matmul_operands[] = {"a", "b", "out"};
static const char* const conv_operands[] = {"input", "weight", "out"};
static const char* const sdpa_operands[] = {"query", "key", "value", "attn_mask", "out", "logsumexp"};

static const op_info_t op_table[] = {
    {PLUGSDK_LIBRARY_MATMUL, "prims.matmul", 2, 1, matmul_operands, "none"},
    {PLUGSDK_LIBRARY_CONVOLUTION, "prims.convolution", 2, 1, conv_operands,
     "stride, padding, dilation, transposed, output_padding, groups"},
    {PLUGSDK_LIBRARY_SDPA, "prims.sdpa", 4, 2, sdpa_operands, "dropout_p, is_causal, scale, seed"},
};

static const op_info_t* op_of(uint32_t bit) {
  for (size_t i = 0; i < sizeof(op_table) / sizeof(op_table[0]); ++i)
    if (op_table[i].bit == bit) return &op_table[i];
  return NULL;
}

/* "compile_library: prims.matmul: <what>" */
static plugsdk_error_t* bad(plugsdk_code_t code, const op_info_t* op, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static plugsdk_error_t* bad(plugsdk_code_t code, const op_info_t* op, const char* fmt, ...) {
  char what[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  return mb_error(code, "compile_library: %s: %s", op->name, what);
}

/* ---- the attribute text ---------------------------------------------------------------------------- */

typedef struct attr_text {
  const char *name, *value;
  size_t name_len, value_len;
  bool used;
} attr_text_t;

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool is_ident(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

/* Splits "name = value, name = value" at top-level commas (not inside [...], (...) or "..."). */
static plugsdk_error_t* split_attributes(const op_info_t* op, const char* text, attr_text_t* out, size_t* n) {
  *n = 0;
  const char* p = text ? text : "";
  for (;;) {
    while (is_space(*p)) ++p;
    if (!*p) {
      if (*n == 0) return NULL;
      return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "attributes end with a ','");
    }
    const char* name = p;
    if (!is_ident(*p, true))
      return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "cannot parse the attributes at '%.40s' (expected a name)", p);
    while (is_ident(*p, false)) ++p;
    const size_t name_len = (size_t)(p - name);
    while (is_space(*p)) ++p;
    if (*p != '=')
      return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "attribute '%.*s' has no '= value'", (int)name_len, name);
    ++p;
    while (is_space(*p)) ++p;
    const char* value = p;
    int depth = 0;
    bool quoted = false;
    for (; *p && (quoted || depth > 0 || *p != ','); ++p) {
      if (quoted) {
        if (*p == '\\' && p[1])
          ++p;
        else if (*p == '"')
          quoted = false;
      } else if (*p == '"') {
        quoted = true;
      } else if (*p == '[' || *p == '(') {
        ++depth;
      } else if (*p == ']' || *p == ')') {
        if (--depth < 0) break;
      }
    }
    if (quoted || depth != 0)
      return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "the value of attribute '%.*s' is unbalanced", (int)name_len, name);
    size_t value_len = (size_t)(p - value);
    while (value_len && is_space(value[value_len - 1])) --value_len;
    if (!value_len) return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "attribute '%.*s' has no value", (int)name_len, name);
    for (size_t i = 0; i < *n; ++i)
      if (out[i].name_len == name_len && !memcmp(out[i].name, name, name_len))
        return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "attribute '%.*s' is given twice", (int)name_len, name);
    if (*n == MB_MAX_ATTRS) return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "more than %d attributes", MB_MAX_ATTRS);
    out[(*n)++] = (attr_text_t){name, value, name_len, value_len, false};
    if (!*p) return NULL;
    ++p; /* the ',' */
  }
}

static attr_text_t* find_attr(attr_text_t* attrs, size_t n, const char* name) {
  for (size_t i = 0; i < n; ++i)
    if (attrs[i].name_len == strlen(name) && !memcmp(attrs[i].name, name, attrs[i].name_len)) {
      attrs[i].used = true;
      return &attrs[i];
    }
  return NULL;
}

/* A decimal int64 filling [s, s + n) exactly. */
static bool parse_int(const char* s, size_t n, int64_t* out) {
  size_t i = 0;
  const bool neg = n > 0 && s[0] == '-';
  if (neg) ++i;
  if (i == n) return false;
  uint64_t v = 0;
  for (; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const uint64_t d = (uint64_t)(s[i] - '0');
    if (v > ((uint64_t)INT64_MAX + 1 - d) / 10) return false;
    v = v * 10 + d;
  }
  if (!neg && v > (uint64_t)INT64_MAX) return false;
  *out = neg ? s64(0 - v) : (int64_t)v;
  return true;
}

static bool parse_float(const char* s, size_t n, double* out) {
  char buf[64];
  if (n == 0 || n >= sizeof(buf)) return false;
  memcpy(buf, s, n);
  buf[n] = '\0';
  char* end = NULL;
  *out = strtod(buf, &end);
  return end == buf + n;
}

static bool parse_ints(const char* s, size_t n, mb_ints_t* out) {
  if (n < 2 || s[0] != '[' || s[n - 1] != ']') return false;
  const char* p = s + 1;
  const char* end = s + n - 1;
  out->n = 0;
  while (p < end && is_space(*p)) ++p;
  if (p == end) return true; /* [] */
  for (;;) {
    const char* item = p;
    while (p < end && *p != ',') ++p;
    const char* item_end = p;
    while (item_end > item && is_space(item_end[-1])) --item_end;
    if (out->n == 3 || !parse_int(item, (size_t)(item_end - item), &out->v[out->n])) return false;
    ++out->n;
    if (p == end) return true;
    ++p;
    while (p < end && is_space(*p)) ++p;
  }
}

static bool equals(const attr_text_t* a, const char* word) {
  return a->value_len == strlen(word) && !memcmp(a->value, word, a->value_len);
}

/* The attribute `name` (required unless `optional`), or NULL when absent and optional. */
static plugsdk_error_t* need(const op_info_t* op, attr_text_t* attrs, size_t n, const char* name, bool optional,
                             attr_text_t** out) {
  *out = find_attr(attrs, n, name);
  if (!*out && !optional)
    return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "missing attribute '%s' (it takes: %s)", name, op->attrs);
  return NULL;
}

static plugsdk_error_t* not_a(const op_info_t* op, const attr_text_t* a, const char* what) {
  return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "attribute '%.*s' = '%.*s' is not %s", (int)a->name_len, a->name,
             (int)(a->value_len > 60 ? 60 : a->value_len), a->value, what);
}

static plugsdk_error_t* int_attr(const op_info_t* op, attr_text_t* attrs, size_t n, const char* name, int64_t* out,
                                 int64_t min) {
  attr_text_t* a;
  TRY(need(op, attrs, n, name, false, &a));
  if (!parse_int(a->value, a->value_len, out)) return not_a(op, a, "an integer");
  if (*out < min) return not_a(op, a, min == 1 ? "a positive integer" : "a non-negative integer");
  return NULL;
}

/* An int list of 1 or `spatial` values, each >= min. */
static plugsdk_error_t* ints_attr(const op_info_t* op, attr_text_t* attrs, size_t n, const char* name, mb_ints_t* out,
                                  size_t spatial, int64_t min) {
  attr_text_t* a;
  TRY(need(op, attrs, n, name, false, &a));
  if (!parse_ints(a->value, a->value_len, out)) return not_a(op, a, "a list of up to 3 integers");
  if (out->n != 1 && out->n != spatial) {
    char what[64];
    snprintf(what, sizeof(what), "a list of 1 or %zu integers (the spatial dims)", spatial);
    return not_a(op, a, what);
  }
  for (size_t i = 0; i < out->n; ++i)
    if (out->v[i] < min) return not_a(op, a, min == 1 ? "a list of positive integers" : "a list of integers >= 0");
  return NULL;
}

static plugsdk_error_t* bool_attr(const op_info_t* op, attr_text_t* attrs, size_t n, const char* name, bool* out) {
  attr_text_t* a;
  TRY(need(op, attrs, n, name, true, &a));
  if (!a) return NULL; /* the schema's default (false) */
  if (equals(a, "true") || equals(a, "false")) {
    *out = equals(a, "true");
    return NULL;
  }
  return not_a(op, a, "true or false");
}

static plugsdk_error_t* parse_op_attributes(const op_info_t* op, const char* text, mb_library_t* lib) {
  attr_text_t attrs[MB_MAX_ATTRS];
  size_t n = 0;
  TRY(split_attributes(op, text, attrs, &n));
  attr_text_t* a;
  if (op->bit == PLUGSDK_LIBRARY_CONVOLUTION) {
    const size_t spatial = lib->operands[0].rank - 2; /* checked to be 1..3 */
    TRY(ints_attr(op, attrs, n, "stride", &lib->stride, spatial, 1));
    TRY(ints_attr(op, attrs, n, "padding", &lib->padding, spatial, 0));
    TRY(ints_attr(op, attrs, n, "dilation", &lib->dilation, spatial, 1));
    TRY(ints_attr(op, attrs, n, "output_padding", &lib->output_padding, spatial, 0));
    TRY(int_attr(op, attrs, n, "groups", &lib->groups, 1));
    TRY(need(op, attrs, n, "transposed", false, &a));
    TRY(bool_attr(op, attrs, n, "transposed", &lib->transposed));
  } else if (op->bit == PLUGSDK_LIBRARY_SDPA) {
    /* The schema's defaults when absent: dropout_p 0.0, is_causal false, scale none, seed 0. */
    TRY(need(op, attrs, n, "dropout_p", true, &a));
    if (a && (!parse_float(a->value, a->value_len, &lib->dropout_p) || !(lib->dropout_p >= 0 && lib->dropout_p <= 1)))
      return not_a(op, a, "a probability in [0, 1]");
    TRY(bool_attr(op, attrs, n, "is_causal", &lib->is_causal));
    TRY(need(op, attrs, n, "scale", true, &a));
    if (a && !equals(a, "none")) {
      if (!parse_float(a->value, a->value_len, &lib->scale)) return not_a(op, a, "a float or none");
      lib->has_scale = true;
    }
    TRY(need(op, attrs, n, "seed", true, &a));
    if (a && !parse_int(a->value, a->value_len, &lib->seed)) return not_a(op, a, "an integer");
  }
  for (size_t i = 0; i < n; ++i)
    if (!attrs[i].used)
      return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "unknown attribute '%.*s' (it takes: %s)", (int)attrs[i].name_len,
                 attrs[i].name, op->attrs);
  return NULL;
}

/* ---- descriptors ----------------------------------------------------------------------------------- */

/* An index program of the pool over the call's symbols only (no grid, loop or value
 * operands), never underflowing its stack, leaving one value. */
static plugsdk_error_t* check_expr(const op_info_t* op, mb_library_t* lib, plugsdk_index_expr_t e, const char* operand,
                                   const char* what) {
  if (e.count == 0 || e.first > lib->num_insns || e.count > lib->num_insns - e.first)
    return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op,
               "%s of %s: index expression [%u, +%u) is outside the %zu index instructions", what, operand, e.first,
               e.count, lib->num_insns);
  uint32_t depth = 0;
  for (uint32_t i = 0; i < e.count; ++i) {
    const plugsdk_index_insn_t* in = &lib->insns[e.first + i];
    switch (in->op) {
      case PLUGSDK_INDEX_CONST: break;
      case PLUGSDK_INDEX_SYMBOL:
        if (in->operand < 0 || (uint64_t)in->operand >= lib->num_symbols)
          return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "%s of %s uses symbol %lld of %zu", what, operand,
                     (long long)in->operand, lib->num_symbols);
        break;
      case PLUGSDK_INDEX_ADD:
      case PLUGSDK_INDEX_SUB:
      case PLUGSDK_INDEX_MUL:
      case PLUGSDK_INDEX_FLOORDIV:
      case PLUGSDK_INDEX_MOD:
        if (depth < 2)
          return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "%s of %s: index program underflows its stack", what, operand);
        depth -= 2;
        break;
      default:
        return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "%s of %s: index op %u is not allowed in a descriptor", what,
                   operand, in->op);
    }
    if (++depth > lib->max_stack) lib->max_stack = depth;
  }
  if (depth != 1)
    return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "%s of %s: index program leaves %u values", what, operand, depth);
  return NULL;
}

static plugsdk_error_t* copy_operand(const op_info_t* op, mb_library_t* lib, size_t i, const plugsdk_tensor_desc_t* d,
                                     bool optional) {
  const char* name = op->operand_names[i];
  mb_operand_t* o = &lib->operands[i];
  if (d->dtype == UINT32_MAX) {
    if (!optional) return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "%s is absent, and it is not optional", name);
    if (d->rank != 0) return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "absent %s has rank %u, not 0", name, d->rank);
    return NULL;
  }
  if (d->dtype > PLUGSDK_DTYPE_F64)
    return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "%s has unknown dtype %u", name, d->dtype);
  if (d->rank > MB_MAX_RANK)
    return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "%s has rank %u (at most %d)", name, d->rank, MB_MAX_RANK);
  if (d->rank && (!d->sizes || !d->strides))
    return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "%s has rank %u and NULL sizes or strides", name, d->rank);
  o->present = true;
  o->dtype = d->dtype;
  o->rank = d->rank;
  for (uint32_t r = 0; r < d->rank; ++r) {
    TRY(check_expr(op, lib, d->sizes[r], name, "a size"));
    TRY(check_expr(op, lib, d->strides[r], name, "a stride"));
    o->sizes[r] = d->sizes[r];
    o->strides[r] = d->strides[r];
  }
  TRY(check_expr(op, lib, d->offset, name, "the offset"));
  o->offset = d->offset;
  return NULL;
}

/* Ranks and dtypes each op needs (sizes are checked at launch, when they are known). */
static plugsdk_error_t* check_signature(const op_info_t* op, const mb_library_t* lib) {
  const mb_operand_t* o = lib->operands;
  const char* const* nm = op->operand_names;
  switch (op->bit) {
    case PLUGSDK_LIBRARY_MATMUL:
    case PLUGSDK_LIBRARY_CONVOLUTION: {
      const bool conv = op->bit == PLUGSDK_LIBRARY_CONVOLUTION;
      for (int i = 0; i < 3; ++i) {
        const uint32_t r = o[i].rank;
        if (conv ? (r < 3 || r > 5) : r < 2)
          return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "%s has rank %u (%s)", nm[i], r,
                     conv ? "needs 3 to 5: batch, channels and 1 to 3 spatial dims" : "needs at least 2");
        if (r != o[0].rank)
          return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "%s has rank %u and %s rank %u", nm[i], r, nm[0], o[0].rank);
        if (mb_dtype_is_float(o[i].dtype) != mb_dtype_is_float(o[0].dtype))
          return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "%s and %s are not both floating or both integral", nm[i],
                     nm[0]);
      }
      return NULL;
    }
    default: { /* sdpa */
      for (int i = 0; i < 6; ++i) {
        if (!o[i].present) continue;
        if (i != 3 && !mb_dtype_is_float(o[i].dtype))
          return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "%s is not floating", nm[i]);
        if (i == 3 && !mb_dtype_is_float(o[i].dtype) && o[i].dtype != PLUGSDK_DTYPE_BOOL)
          return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "attn_mask is neither bool nor floating");
        if (i < 3 && o[i].rank < 2)
          return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "%s has rank %u, needs at least 2", nm[i], o[i].rank);
      }
      if (o[1].rank > o[0].rank || o[2].rank > o[0].rank)
        return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "key or value has more batch dims than query");
      if (o[4].rank != o[0].rank || o[5].rank + 1 != o[0].rank)
        return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "out has rank %u and logsumexp rank %u; query has rank %u",
                   o[4].rank, o[5].rank, o[0].rank);
      if (o[3].present && o[3].rank > o[0].rank)
        return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "attn_mask has rank %u, more than query's %u", o[3].rank,
                   o[0].rank);
      return NULL;
    }
  }
}

/* ---- compile --------------------------------------------------------------------------------------- */

void mb_library_free(mb_library_t* lib) {
  if (!lib) return;
  free(lib->insns);
  mb_executable_free(lib->epilogue);
  free(lib);
}

size_t mb_library_num_buffers(const mb_library_t* lib) {
  return lib->num_inputs + lib->num_outputs + (lib->epilogue ? lib->epilogue->num_args - 1 : 0);
}

size_t mb_library_num_symbols(const mb_library_t* lib) {
  return lib->num_symbols + (lib->epilogue ? lib->epilogue->num_symbols : 0);
}

static plugsdk_error_t* compile_epilogue(const op_info_t* op, mb_library_t* lib, const plugsdk_kernel_t* k) {
  if (!(op->bit & MB_EPILOGUE_OPS))
    return bad(PLUGSDK_CODE_UNIMPLEMENTED, op, "takes no epilogue on this device (epilogue_ops: matmul, convolution)");
  TRY(mb_compile(k, NULL, &lib->epilogue));
  const plugsdk_executable_t* e = lib->epilogue;
  size_t accs = 0;
  for (size_t i = 0; i < e->num_args; ++i)
    if (e->args[i].access & PLUGSDK_ACCESS_ACCUMULATOR) {
      ++accs;
      lib->acc_arg = i;
    }
  if (accs != 1)
    return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "the epilogue kernel @%s has %zu ACCUMULATOR arguments, needs 1",
               e->name, accs);
  const mb_arg_t* acc = &e->args[lib->acc_arg];
  if (acc->access & PLUGSDK_ACCESS_WRITE)
    return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "the epilogue kernel @%s writes its accumulator %%%s", e->name,
               acc->name);
  const mb_operand_t* out = &lib->operands[lib->num_inputs];
  if (acc->dtype != out->dtype)
    return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op,
               "the epilogue's accumulator %%%s has dtype %u, the result (output 0) dtype %u", acc->name, acc->dtype,
               out->dtype);
  return NULL;
}

plugsdk_error_t* mb_compile_library(const plugsdk_compile_library_args_t* a, uint32_t library_ops,
                                    plugsdk_executable_t** out) {
  const op_info_t* op = op_of(a->op);
  if (!op) return mb_error(PLUGSDK_CODE_INVALID_ARGUMENT, "compile_library: op %u is not one library op bit", a->op);
  if (!(library_ops & a->op))
    return bad(PLUGSDK_CODE_UNIMPLEMENTED, op, "not enabled on this client (device_info's library_ops leaves it out)");
  if (a->num_inputs != op->inputs || a->num_outputs != op->outputs)
    return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "takes %zu inputs and %zu outputs, got %zu and %zu", op->inputs,
               op->outputs, a->num_inputs, a->num_outputs);
  if (!a->inputs || !a->outputs || (a->num_index_insns && !a->index_insns))
    return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "inputs, outputs or index_insns is NULL");
  if (a->num_index_insns > UINT32_MAX) return bad(PLUGSDK_CODE_INVALID_ARGUMENT, op, "too many index instructions");

  mb_library_t* lib = calloc(1, sizeof(*lib));
  plugsdk_executable_t* exe = calloc(1, sizeof(*exe));
  char* name = malloc(strlen(op->name) + 1);
  if (lib) lib->insns = malloc((a->num_index_insns + 1) * sizeof(*lib->insns));
  if (!lib || !exe || !name || !lib->insns) {
    free(exe);
    free(name);
    mb_library_free(lib);
    return mb_error(PLUGSDK_CODE_RESOURCE_EXHAUSTED, "compile_library: out of memory");
  }
  strcpy(name, op->name);
  exe->magic = MB_MAGIC_EXECUTABLE;
  exe->name = name;
  exe->library = lib;
  lib->op = a->op;
  lib->num_inputs = op->inputs;
  lib->num_outputs = op->outputs;
  lib->num_symbols = a->num_symbols;
  lib->num_insns = a->num_index_insns;
  if (a->num_index_insns) memcpy(lib->insns, a->index_insns, a->num_index_insns * sizeof(*lib->insns));

  plugsdk_error_t* err = NULL;
  for (size_t i = 0; i < op->inputs && !err; ++i)
    err = copy_operand(op, lib, i, &a->inputs[i], op->bit == PLUGSDK_LIBRARY_SDPA && i == 3);
  for (size_t i = 0; i < op->outputs && !err; ++i) err = copy_operand(op, lib, op->inputs + i, &a->outputs[i], false);
  if (!err) err = check_signature(op, lib);
  if (!err) err = parse_op_attributes(op, a->attributes, lib);
  if (!err && a->epilogue) err = compile_epilogue(op, lib, a->epilogue);
  if (err) {
    mb_executable_free(exe);
    return err;
  }
  *out = exe;
  return NULL;
}

/* ---- launch: views ------------------------------------------------------------------------------- */

plugsdk_error_t* mb_failed(const launch_t* l, plugsdk_code_t code, const char* fmt, ...) {
  char what[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  return mb_error(code, "launch: %s: %s", l->op->name, what);
}

static int64_t eval(const launch_t* l, plugsdk_index_expr_t e) {
  const plugsdk_index_insn_t* in = l->lib->insns + e.first;
  int64_t* st = l->stack;
  size_t sp = 0;
  for (uint32_t n = 0; n < e.count; ++n, ++in) {
    if (in->op == PLUGSDK_INDEX_CONST) {
      st[sp++] = in->operand;
    } else if (in->op == PLUGSDK_INDEX_SYMBOL) {
      st[sp++] = l->symbols[in->operand];
    } else {
      const int64_t b = st[--sp], a = st[sp - 1];
      switch (in->op) {
        case PLUGSDK_INDEX_ADD: st[sp - 1] = wadd(a, b); break;
        case PLUGSDK_INDEX_SUB: st[sp - 1] = wsub(a, b); break;
        case PLUGSDK_INDEX_MUL: st[sp - 1] = wmul(a, b); break;
        case PLUGSDK_INDEX_FLOORDIV: st[sp - 1] = floor_div(a, b); break;
        default: st[sp - 1] = wsub(a, wmul(b, floor_div(a, b))); break; /* MOD */
      }
    }
  }
  return st[0];
}

/* Operand i's sizes and strides at this launch; with `base`, every element it reaches must
 * lie within the `bytes` that follow base. */
static plugsdk_error_t* make_view(const launch_t* l, size_t i, unsigned char* base, uint64_t bytes, bool memory,
                                  view_t* v) {
  const mb_operand_t* o = &l->lib->operands[i];
  const char* name = l->op->operand_names[i];
  v->base = base;
  v->dtype = o->dtype;
  v->rank = o->rank;
  v->numel = 1;
  v->offset = eval(l, o->offset);
  for (uint32_t d = 0; d < o->rank; ++d) {
    v->size[d] = eval(l, o->sizes[d]);
    v->stride[d] = eval(l, o->strides[d]);
    if (v->size[d] < 0)
      return mb_failed(l, PLUGSDK_CODE_INVALID_ARGUMENT, "%s has size %lld in dim %u", name, (long long)v->size[d], d);
    if (v->size[d] && v->numel > INT64_MAX / 8 / v->size[d])
      return mb_failed(l, PLUGSDK_CODE_OUT_OF_RANGE, "%s has too many elements", name);
    v->numel *= v->size[d];
  }
  if (!memory || v->numel == 0) return NULL;
  if (!base) return mb_failed(l, PLUGSDK_CODE_INVALID_ARGUMENT, "the buffer of %s is NULL", name);
  /* The lowest and highest element the view reaches, without overflowing. */
  int64_t lo = v->offset, hi = v->offset;
  for (uint32_t d = 0; d < o->rank; ++d) {
    const int64_t n = v->size[d] - 1, s = v->stride[d];
    if (n == 0) continue;
    if (s > INT64_MAX / n || s < -(INT64_MAX / n))
      return mb_failed(l, PLUGSDK_CODE_OUT_OF_RANGE, "%s: stride %lld of dim %u overflows", name, (long long)s, d);
    const int64_t ext = s * n;
    if (ext < 0 ? lo < INT64_MIN - ext : hi > INT64_MAX - ext)
      return mb_failed(l, PLUGSDK_CODE_OUT_OF_RANGE, "%s: its strides overflow", name);
    if (ext < 0)
      lo += ext;
    else
      hi += ext;
  }
  const uint64_t elements = bytes / mb_dtype_bytes(o->dtype);
  if (lo < 0 || (uint64_t)hi >= elements)
    return mb_failed(l, PLUGSDK_CODE_OUT_OF_RANGE,
                     "%s reaches elements [%lld, %lld], outside its buffer's %llu elements", name, (long long)lo,
                     (long long)hi, (unsigned long long)elements);
  return NULL;
}

/* The view's elements, row-major. */
void mb_gather(const view_t* v, mb_value_t* out) {
  int64_t idx[MB_MAX_RANK] = {0}, at = v->offset;
  const size_t esize = mb_dtype_bytes(v->dtype);
  for (int64_t n = 0; n < v->numel; ++n) {
    out[n] = mb_load(v->dtype, v->base + (size_t)at * esize);
    for (uint32_t d = v->rank; d-- > 0;) {
      if (++idx[d] < v->size[d]) {
        at += v->stride[d];
        break;
      }
      at -= v->stride[d] * (v->size[d] - 1);
      idx[d] = 0;
    }
  }
}

/* Row-major values into the view's elements (rounded or wrapped to its dtype). */
void mb_scatter(const view_t* v, const mb_value_t* in) {
  int64_t idx[MB_MAX_RANK] = {0}, at = v->offset;
  const size_t esize = mb_dtype_bytes(v->dtype);
  for (int64_t n = 0; n < v->numel; ++n) {
    mb_store(v->dtype, v->base + (size_t)at * esize, in[n]);
    for (uint32_t d = v->rank; d-- > 0;) {
      if (++idx[d] < v->size[d]) {
        at += v->stride[d];
        break;
      }
      at -= v->stride[d] * (v->size[d] - 1);
      idx[d] = 0;
    }
  }
}

/* A zeroed array of n values (0.0 and 0 are both all-zero bits). */
mb_value_t* mb_values(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(mb_value_t)); }

/* ---- launch ----------------------------------------------------------------------------------------- */

/* Output 0 into a row-major temporary of its dtype, then the epilogue over it and the
 * launch's trailing buffers. */
static plugsdk_error_t* run_epilogue(const launch_t* l, const view_t* out0, const mb_value_t* result,
                                     unsigned char* const* bases, const uint64_t* bytes) {
  const mb_library_t* lib = l->lib;
  const plugsdk_executable_t* e = lib->epilogue;
  const size_t esize = mb_dtype_bytes(out0->dtype);
  unsigned char* temp = malloc((size_t)(out0->numel > 0 ? out0->numel : 1) * esize);
  unsigned char** ebases = malloc((e->num_args + 1) * sizeof(*ebases));
  int64_t* counts = malloc((e->num_args + 1) * sizeof(*counts));
  plugsdk_error_t* err = NULL;
  if (!temp || !ebases || !counts) {
    err = mb_failed(l, PLUGSDK_CODE_RESOURCE_EXHAUSTED, "out of memory for the result of %lld elements",
                    (long long)out0->numel);
    goto out;
  }
  for (int64_t i = 0; i < out0->numel; ++i) mb_store(out0->dtype, temp + (size_t)i * esize, result[i]);
  size_t next = lib->num_inputs + lib->num_outputs;
  for (size_t j = 0; j < e->num_args; ++j) {
    if (j == lib->acc_arg) {
      ebases[j] = temp;
      counts[j] = out0->numel;
      continue;
    }
    if (!bases[next]) {
      err = mb_failed(l, PLUGSDK_CODE_INVALID_ARGUMENT,
                      "the buffer of epilogue argument %%%s (launch buffer %zu) is NULL", e->args[j].name, next);
      goto out;
    }
    ebases[j] = bases[next];
    counts[j] = (int64_t)(bytes[next] / mb_dtype_bytes(e->args[j].dtype));
    ++next;
  }
  err = mb_run(e, ebases, counts, e->num_symbols ? l->symbols + lib->num_symbols : NULL);
out:
  free(temp);
  free(ebases);
  free(counts);
  return err;
}

plugsdk_error_t* mb_library_run(const plugsdk_executable_t* exe, unsigned char* const* bases, const uint64_t* bytes,
                                const int64_t* symbol_values) {
  const mb_library_t* lib = exe->library;
  launch_t l = {lib, op_of(lib->op), symbol_values, NULL};
  l.stack = malloc((lib->max_stack + 1) * sizeof(int64_t));
  if (!l.stack) return mb_failed(&l, PLUGSDK_CODE_RESOURCE_EXHAUSTED, "out of memory");
  view_t v[MB_MAX_OPERANDS];
  memset(v, 0, sizeof(v));
  mb_value_t* results[2] = {NULL, NULL};
  plugsdk_error_t* err = NULL;
  const size_t n = lib->num_inputs + lib->num_outputs;
  for (size_t i = 0; i < n && !err; ++i) {
    if (!lib->operands[i].present) continue;
    const bool memory = !(lib->epilogue && i == lib->num_inputs); /* output 0 goes to the epilogue */
    err = make_view(&l, i, bases[i], bytes[i], memory, &v[i]);
  }
  if (!err) {
    switch (lib->op) {
      case PLUGSDK_LIBRARY_MATMUL: err = mb_run_matmul(&l, v, results); break;
      case PLUGSDK_LIBRARY_CONVOLUTION: err = mb_run_convolution(&l, v, results); break;
      default: err = mb_run_sdpa(&l, v, results); break;
    }
  }
  for (size_t i = 0; i < lib->num_outputs && !err; ++i) {
    if (i == 0 && lib->epilogue)
      err = run_epilogue(&l, &v[lib->num_inputs], results[0], bases, bytes);
    else
      mb_scatter(&v[lib->num_inputs + i], results[i]);
  }
  free(results[0]);
  free(results[1]);
  free(l.stack);
  return err;
}
