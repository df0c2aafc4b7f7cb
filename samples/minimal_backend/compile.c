/*
 * compile_kernel for the minimal backend: the plugsdk_kernel_t is borrowed for the call, so
 * everything the interpreter needs is checked and copied into the executable here --
 * statements (decoded once: operand dtypes, accumulator slots), loop extents, the index
 * program pool, arguments, grid, CHECK messages and the name.
 *
 * A malformed encoding is INVALID_ARGUMENT naming the kernel and the statement; nothing the
 * core hands over is trusted to be in range. The checks follow core/kernel/kernel_ir.cc's
 * verifyKernel: SSA order and loop scoping, dtypes, operand counts, index programs that use
 * only what is in scope.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "minimal.h"

/* ---- the scalar op table: arity and which operand dtypes each op accepts (scalar_ops.cc) --- */

enum { ANY, NUMERIC, INTEGRAL, FLOATING }; /* NUMERIC: all but bool; INTEGRAL: integers and bool */

static const struct {
  const char* name;
  unsigned char arity, operands;
} ops[PLUGSDK_OP_COUNT_V1_0] = {
    {"abs", 1, NUMERIC},
    {"neg", 1, NUMERIC},
    {"sign", 1, NUMERIC},
    {"floor", 1, NUMERIC},
    {"ceil", 1, NUMERIC},
    {"round", 1, NUMERIC},
    {"trunc", 1, NUMERIC},
    {"bitwise_not", 1, INTEGRAL},
    {"exp", 1, FLOATING},
    {"expm1", 1, FLOATING},
    {"log", 1, FLOATING},
    {"log1p", 1, FLOATING},
    {"log2", 1, FLOATING},
    {"sqrt", 1, FLOATING},
    {"rsqrt", 1, FLOATING},
    {"sin", 1, FLOATING},
    {"cos", 1, FLOATING},
    {"tan", 1, FLOATING},
    {"asin", 1, FLOATING},
    {"acos", 1, FLOATING},
    {"atan", 1, FLOATING},
    {"sinh", 1, FLOATING},
    {"cosh", 1, FLOATING},
    {"tanh", 1, FLOATING},
    {"asinh", 1, FLOATING},
    {"acosh", 1, FLOATING},
    {"atanh", 1, FLOATING},
    {"erf", 1, FLOATING},
    {"add", 2, NUMERIC},
    {"sub", 2, NUMERIC},
    {"mul", 2, NUMERIC},
    {"div", 2, NUMERIC},
    {"remainder", 2, NUMERIC},
    {"fmod", 2, NUMERIC},
    {"pow", 2, NUMERIC},
    {"atan2", 2, FLOATING},
    {"maximum", 2, ANY},
    {"minimum", 2, ANY},
    {"bitwise_and", 2, INTEGRAL},
    {"bitwise_or", 2, INTEGRAL},
    {"bitwise_xor", 2, INTEGRAL},
    {"eq", 2, ANY},
    {"ne", 2, ANY},
    {"lt", 2, ANY},
    {"le", 2, ANY},
    {"gt", 2, ANY},
    {"ge", 2, ANY},
};

static bool is_predicate(uint32_t op) { return op >= PLUGSDK_OP_EQ && op <= PLUGSDK_OP_GE; }

static bool accepts(unsigned char operands, uint32_t dtype) {
  switch (operands) {
    case NUMERIC: return dtype != PLUGSDK_DTYPE_BOOL;
    case INTEGRAL: return !mb_dtype_is_float(dtype);
    case FLOATING: return mb_dtype_is_float(dtype);
    default: return true;
  }
}

static const char* kind_names[] = {"load", "const",  "index", "scalar", "where", "cast",
                                   "rand", "reduce", "store", "loop",   "check"};

/* ---- the checker ------------------------------------------------------------------------------ */

typedef struct checker {
  const plugsdk_kernel_t* k;
  const char* name;
  plugsdk_executable_t* exe;
  int8_t* scope;      /* per value: -1 undefined, else the loop depth it was defined at */
  uint32_t* dtype;    /* per value */
  size_t stmt;        /* the statement being checked, for messages */
  uint32_t loop_rank; /* loop variables in scope (0 outside loops) */
} checker_t;

static plugsdk_error_t* fail(const checker_t* c, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static plugsdk_error_t* fail(const checker_t* c, const char* fmt, ...) {
  char what[384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  if (c->stmt == SIZE_MAX)
    return mb_error(PLUGSDK_CODE_INVALID_ARGUMENT, "compile_kernel: kernel @%s: %s", c->name, what);
  return mb_error(PLUGSDK_CODE_INVALID_ARGUMENT, "compile_kernel: kernel @%s: statement %zu: %s", c->name, c->stmt,
                  what);
}

/* Element i of an array whose element size the core states (it may be a newer, larger struct). */
static const plugsdk_stmt_t* stmt_at(const plugsdk_kernel_t* k, size_t i) {
  return (const plugsdk_stmt_t*)((const char*)k->stmts + i * k->stmt_size);
}
static const plugsdk_kernel_arg_t* arg_at(const plugsdk_kernel_t* k, size_t i) {
  return (const plugsdk_kernel_arg_t*)((const char*)k->args + i * k->arg_size);
}

static plugsdk_error_t* check_value(const checker_t* c, int32_t id) {
  if (id < 0 || (uint32_t)id >= c->k->num_values) return fail(c, "value %%%d is out of range", id);
  if (c->scope[id] < 0) return fail(c, "uses %%%d before it is defined (or outside its loop)", id);
  return NULL;
}

/* An index program: in the pool, never underflowing its stack, leaving one value, reading
 * only grid variables, loop variables of the enclosing loop, known symbols and defined
 * integer values. */
static plugsdk_error_t* check_index(checker_t* c, plugsdk_index_expr_t e, bool values_allowed) {
  const plugsdk_kernel_t* k = c->k;
  if (e.count == 0 || e.first > k->num_index_insns || e.count > k->num_index_insns - e.first)
    return fail(c, "index expression [%u, +%u) is outside the %zu index instructions", e.first, e.count,
                k->num_index_insns);
  uint32_t depth = 0;
  for (uint32_t i = 0; i < e.count; ++i) {
    const plugsdk_index_insn_t* in = &k->index_insns[e.first + i];
    const int64_t x = in->operand;
    switch (in->op) {
      case PLUGSDK_INDEX_CONST: break;
      case PLUGSDK_INDEX_GRID_VAR:
        if (x < 0 || (uint64_t)x >= k->num_grid)
          return fail(c, "index uses i%lld, the grid has rank %zu", (long long)x, k->num_grid);
        break;
      case PLUGSDK_INDEX_LOOP_VAR:
        if (x < 0 || (uint64_t)x >= c->loop_rank)
          return fail(c, "index uses r%lld, which is not in scope", (long long)x);
        break;
      case PLUGSDK_INDEX_SYMBOL:
        if (x < 0 || (uint64_t)x >= k->num_symbols)
          return fail(c, "index uses symbol %lld of %zu", (long long)x, k->num_symbols);
        break;
      case PLUGSDK_INDEX_VALUE: {
        if (!values_allowed) return fail(c, "a grid or loop size reads value %%%lld", (long long)x);
        if (x < 0 || x > INT32_MAX) return fail(c, "index uses value %%%lld, out of range", (long long)x);
        plugsdk_error_t* err = check_value(c, (int32_t)x);
        if (err) return err;
        const uint32_t t = c->dtype[x];
        if (mb_dtype_is_float(t) || t == PLUGSDK_DTYPE_BOOL)
          return fail(c, "index uses %%%lld, which is not an integer", (long long)x);
        break;
      }
      case PLUGSDK_INDEX_ADD:
      case PLUGSDK_INDEX_SUB:
      case PLUGSDK_INDEX_MUL:
      case PLUGSDK_INDEX_FLOORDIV:
      case PLUGSDK_INDEX_MOD:
        if (depth < 2) return fail(c, "index program underflows its stack");
        depth -= 2; /* pops two, pushes one below */
        break;
      default: return fail(c, "unknown index op %u", in->op);
    }
    if (++depth > c->exe->max_stack) c->exe->max_stack = depth;
  }
  if (depth != 1) return fail(c, "index program leaves %u values", depth);
  return NULL;
}

static plugsdk_error_t* check_arg(const checker_t* c, const plugsdk_stmt_t* s, uint32_t need, const char* what) {
  if (s->arg < 0 || (size_t)s->arg >= c->k->num_args) return fail(c, "argument %d is out of range", s->arg);
  const mb_arg_t* a = &c->exe->args[s->arg];
  if (!(a->access & need)) return fail(c, "%s %%%s, whose access does not allow it", what, a->name);
  return NULL;
}

/* A copy of a borrowed string (strdup is POSIX, not C11). */
static char* copy_string(const char* s) {
  if (!s) s = "";
  char* d = malloc(strlen(s) + 1);
  if (d) strcpy(d, s);
  return d;
}

#define TRY(x)                   \
  do {                           \
    plugsdk_error_t* err_ = (x); \
    if (err_) return err_;       \
  } while (0)

/* Checks statement i and copies it into exe->stmts[i]. */
static plugsdk_error_t* check_stmt(checker_t* c, size_t i, bool in_loop) {
  const plugsdk_stmt_t* s = stmt_at(c->k, i);
  mb_stmt_t* d = &c->exe->stmts[i];
  c->stmt = i;
  if (s->kind > PLUGSDK_STMT_CHECK) return fail(c, "unknown statement kind %u", s->kind);
  if (s->dtype > PLUGSDK_DTYPE_F64) return fail(c, "%s of unknown dtype %u", kind_names[s->kind], s->dtype);
  if (s->num_operands > 3) return fail(c, "%u operands", s->num_operands);
  for (uint32_t j = 0; j < s->num_operands; ++j) TRY(check_value(c, s->operands[j]));

  d->kind = s->kind;
  d->dtype = s->dtype;
  d->result = s->result;
  d->arg = s->arg;
  d->op = s->op;
  d->num_operands = s->num_operands;
  memcpy(d->operands, s->operands, sizeof(d->operands));
  d->index = s->index;
  d->fvalue = s->fvalue;
  d->ivalue = s->ivalue;
  if (s->num_operands) {
    d->operand_dtype = c->dtype[s->operands[0]];
    d->operand_float = mb_dtype_is_float(d->operand_dtype);
  }
  const uint32_t t0 = s->num_operands ? d->operand_dtype : 0;
  for (uint32_t j = 1; j < s->num_operands; ++j)
    if (s->kind == PLUGSDK_STMT_SCALAR && c->dtype[s->operands[j]] != t0)
      return fail(c, "operands of different dtypes");

  switch (s->kind) {
    case PLUGSDK_STMT_LOAD:
      TRY(check_arg(c, s, PLUGSDK_ACCESS_READ, "load from"));
      if (s->dtype != c->exe->args[s->arg].dtype)
        return fail(c, "load of another dtype than %%%s's", c->exe->args[s->arg].name);
      if (s->num_operands > 1 || (s->num_operands == 1 && t0 != PLUGSDK_DTYPE_BOOL))
        return fail(c, "a load's mask must be one bool");
      TRY(check_index(c, s->index, true));
      break;
    case PLUGSDK_STMT_STORE:
      TRY(check_arg(c, s, PLUGSDK_ACCESS_WRITE, "store to"));
      if (s->num_operands != 1) return fail(c, "store needs one operand");
      if (t0 != c->exe->args[s->arg].dtype)
        return fail(c, "store of another dtype than %%%s's", c->exe->args[s->arg].name);
      if (s->op > PLUGSDK_COMBINE_MIN) return fail(c, "unknown combine %u", s->op);
      d->dtype = t0;
      TRY(check_index(c, s->index, true));
      break;
    case PLUGSDK_STMT_CONST: break;
    case PLUGSDK_STMT_INDEX:
      if (s->dtype != PLUGSDK_DTYPE_I64) return fail(c, "index must be i64");
      TRY(check_index(c, s->index, true));
      break;
    case PLUGSDK_STMT_RAND:
      if (!mb_dtype_is_float(s->dtype)) return fail(c, "rand of a non-floating dtype");
      TRY(check_index(c, s->index, true));
      break;
    case PLUGSDK_STMT_SCALAR:
      if (s->op >= PLUGSDK_OP_COUNT_V1_0) return fail(c, "unknown scalar op %u", s->op);
      if (s->num_operands != ops[s->op].arity)
        return fail(c, "%s takes %u operands", ops[s->op].name, ops[s->op].arity);
      if (!accepts(ops[s->op].operands, t0)) return fail(c, "%s does not accept its operands' dtype", ops[s->op].name);
      if (s->dtype != (is_predicate(s->op) ? (uint32_t)PLUGSDK_DTYPE_BOOL : t0))
        return fail(c, "%s has the wrong result dtype", ops[s->op].name);
      break;
    case PLUGSDK_STMT_WHERE:
      if (s->num_operands != 3 || t0 != PLUGSDK_DTYPE_BOOL || c->dtype[s->operands[1]] != s->dtype ||
          c->dtype[s->operands[2]] != s->dtype)
        return fail(c, "where needs a bool and two operands of the result dtype");
      break;
    case PLUGSDK_STMT_CAST:
      if (s->num_operands != 1) return fail(c, "cast needs one operand");
      break;
    case PLUGSDK_STMT_REDUCE:
      if (!in_loop) return fail(c, "reduce outside a loop");
      if (s->num_operands != 1) return fail(c, "reduce needs one operand");
      if (s->op > PLUGSDK_REDUCE_ARGMIN) return fail(c, "unknown reduce op %u", s->op);
      if (s->op >= PLUGSDK_REDUCE_ARGMAX ? s->dtype != PLUGSDK_DTYPE_I64
                                         : mb_dtype_is_float(s->dtype) != d->operand_float)
        return fail(c, "reduce has the wrong result dtype");
      d->acc = c->exe->num_reduces++;
      break;
    case PLUGSDK_STMT_CHECK:
      if (s->num_operands != 1 || t0 != PLUGSDK_DTYPE_BOOL) return fail(c, "check needs one bool operand");
      d->message = copy_string(s->message ? s->message : "check failed");
      if (!d->message) return mb_error(PLUGSDK_CODE_RESOURCE_EXHAUSTED, "compile_kernel: out of memory");
      break;
    default: break; /* LOOP: check_body */
  }
  if (s->kind == PLUGSDK_STMT_STORE || s->kind == PLUGSDK_STMT_CHECK) return NULL;
  if (s->result < 0 || (uint32_t)s->result >= c->k->num_values)
    return fail(c, "defines value %%%d, out of range", s->result);
  if (c->scope[s->result] >= 0) return fail(c, "%%%d is defined twice", s->result);
  c->scope[s->result] = in_loop ? 1 : 0;
  c->dtype[s->result] = s->dtype;
  return NULL;
}

/* Statements [first, end): the top level, or a loop's body (no nested loops, as verifyKernel). */
static plugsdk_error_t* check_body(checker_t* c, size_t first, size_t end, bool in_loop) {
  for (size_t i = first; i < end; ++i) {
    const plugsdk_stmt_t* s = stmt_at(c->k, i);
    if (s->kind != PLUGSDK_STMT_LOOP) {
      TRY(check_stmt(c, i, in_loop));
      continue;
    }
    c->stmt = i;
    if (in_loop) return fail(c, "nested loops are not supported");
    /* rank 0 is one iteration: the core emits it for a reduction over no dims */
    if (s->num_loop_sizes > 0 && !s->loop_sizes) return fail(c, "loop without sizes");
    if (s->body_count > end - i - 1)
      return fail(c, "loop body of %u statements runs past the kernel's end", s->body_count);
    mb_stmt_t* d = &c->exe->stmts[i];
    d->kind = PLUGSDK_STMT_LOOP;
    d->result = -1;
    d->body_count = s->body_count;
    d->num_loop_sizes = s->num_loop_sizes;
    d->first_loop_size = (uint32_t)c->exe->num_loop_sizes;
    for (uint32_t j = 0; j < s->num_loop_sizes; ++j) {
      TRY(check_index(c, s->loop_sizes[j], false));
      c->exe->loop_sizes[c->exe->num_loop_sizes++] = s->loop_sizes[j];
    }
    if (s->num_loop_sizes > c->exe->max_loop_rank) c->exe->max_loop_rank = s->num_loop_sizes;
    c->loop_rank = s->num_loop_sizes;
    TRY(check_body(c, i + 1, i + 1 + s->body_count, true));
    c->loop_rank = 0;
    /* Values defined in the loop go out of scope, except the results of its reduces. */
    for (size_t j = i + 1; j <= i + s->body_count; ++j) {
      const mb_stmt_t* b = &c->exe->stmts[j];
      if (b->result >= 0 && b->kind != PLUGSDK_STMT_REDUCE && b->kind != PLUGSDK_STMT_STORE &&
          b->kind != PLUGSDK_STMT_CHECK)
        c->scope[b->result] = -1;
      else if (b->kind == PLUGSDK_STMT_REDUCE)
        c->scope[b->result] = 0;
    }
    i += s->body_count;
  }
  return NULL;
}

/* Options: "key=value;...". The one key is numerics: dtype (default) rounds every floating
 * result to its statement's dtype, float64 keeps float64 between ops as the core's reference
 * interpreter does (stores and casts still round). */
static plugsdk_error_t* parse_options(const char* options, plugsdk_executable_t* exe) {
  exe->round_every_op = true;
  if (!options) return NULL;
  const char* p = options;
  while (*p) {
    size_t n = strcspn(p, ";");
    if (n == strlen("numerics=float64") && !strncmp(p, "numerics=float64", n))
      exe->round_every_op = false;
    else if (n == strlen("numerics=dtype") && !strncmp(p, "numerics=dtype", n))
      exe->round_every_op = true;
    else if (n)
      return mb_error(PLUGSDK_CODE_INVALID_ARGUMENT,
                      "compile_kernel: unknown option '%.*s' (known: numerics=dtype|float64)", (int)n, p);
    p += n + (p[n] == ';');
  }
  return NULL;
}

void mb_executable_free(plugsdk_executable_t* exe) {
  if (!exe) return;
  for (size_t i = 0; i < exe->num_args && exe->args; ++i) free(exe->args[i].name);
  for (size_t i = 0; i < exe->num_stmts && exe->stmts; ++i) free(exe->stmts[i].message);
  free(exe->args);
  free(exe->grid);
  free(exe->stmts);
  free(exe->loop_sizes);
  free(exe->index_insns);
  free(exe->name);
  mb_library_free(exe->library);
  exe->magic = MB_MAGIC_DEAD;
  free(exe);
}

plugsdk_error_t* mb_compile(const plugsdk_kernel_t* k, const char* options, plugsdk_executable_t** out) {
  checker_t c = {k, k->name ? k->name : "?", NULL, NULL, NULL, SIZE_MAX, 0};
  if (k->struct_size < PLUGSDK_STRUCT_SIZE(plugsdk_kernel_t, num_values))
    return fail(&c, "kernel->struct_size is %zu, too small", k->struct_size);
  if (k->stmt_size < PLUGSDK_STRUCT_SIZE(plugsdk_stmt_t, message) ||
      k->arg_size < PLUGSDK_STRUCT_SIZE(plugsdk_kernel_arg_t, access))
    return fail(&c, "stmt_size %zu or arg_size %zu is smaller than ABI 1.0's", k->stmt_size, k->arg_size);
  if ((k->num_args && !k->args) || (k->num_grid && !k->grid) || (k->num_stmts && !k->stmts) ||
      (k->num_index_insns && !k->index_insns) || (k->num_symbols && !k->symbols))
    return fail(&c, "an array with a non-zero count is NULL");
  if (k->num_stmts > UINT32_MAX || k->num_index_insns > UINT32_MAX) return fail(&c, "too many statements");

  plugsdk_executable_t* exe = calloc(1, sizeof(*exe));
  if (!exe) return mb_error(PLUGSDK_CODE_RESOURCE_EXHAUSTED, "compile_kernel: out of memory");
  exe->magic = MB_MAGIC_EXECUTABLE;
  c.exe = exe;
  plugsdk_error_t* err = parse_options(options, exe);
  if (err) goto out;

  size_t loop_sizes = 0;
  for (size_t i = 0; i < k->num_stmts; ++i) {
    const plugsdk_stmt_t* s = stmt_at(k, i);
    if (s->kind == PLUGSDK_STMT_LOOP) loop_sizes += s->num_loop_sizes;
  }
  exe->name = copy_string(c.name);
  exe->args = calloc(k->num_args + 1, sizeof(*exe->args));
  exe->grid = calloc(k->num_grid + 1, sizeof(*exe->grid));
  exe->stmts = calloc(k->num_stmts + 1, sizeof(*exe->stmts));
  exe->loop_sizes = calloc(loop_sizes + 1, sizeof(*exe->loop_sizes));
  exe->index_insns = calloc(k->num_index_insns + 1, sizeof(*exe->index_insns));
  c.scope = malloc((k->num_values + 1) * sizeof(*c.scope));
  c.dtype = calloc(k->num_values + 1, sizeof(*c.dtype));
  if (!exe->name || !exe->args || !exe->grid || !exe->stmts || !exe->loop_sizes || !exe->index_insns || !c.scope ||
      !c.dtype) {
    err = mb_error(PLUGSDK_CODE_RESOURCE_EXHAUSTED, "compile_kernel: out of memory");
    goto out;
  }
  memset(c.scope, -1, (k->num_values + 1) * sizeof(*c.scope));
  exe->num_stmts = k->num_stmts;
  exe->num_symbols = k->num_symbols;
  exe->num_values = k->num_values;
  if (k->num_index_insns) memcpy(exe->index_insns, k->index_insns, k->num_index_insns * sizeof(*k->index_insns));
  exe->num_index_insns = k->num_index_insns;

  for (size_t i = 0; i < k->num_args; ++i) {
    const plugsdk_kernel_arg_t* a = arg_at(k, i);
    exe->num_args = i + 1; /* so that a failure frees what was copied */
    exe->args[i].name = copy_string(a->name);
    exe->args[i].dtype = a->dtype;
    exe->args[i].access = a->access;
    if (!exe->args[i].name) {
      err = mb_error(PLUGSDK_CODE_RESOURCE_EXHAUSTED, "compile_kernel: out of memory");
      goto out;
    }
    if (a->dtype > PLUGSDK_DTYPE_F64) {
      err = fail(&c, "argument %zu has unknown dtype %u", i, a->dtype);
      goto out;
    }
  }
  for (size_t i = 0; i < k->num_grid; ++i) {
    if ((err = check_index(&c, k->grid[i], false))) goto out;
    exe->grid[i] = k->grid[i];
  }
  exe->num_grid = k->num_grid;
  err = check_body(&c, 0, k->num_stmts, false);

out:
  free(c.scope);
  free(c.dtype);
  if (err) {
    mb_executable_free(exe);
    return err;
  }
  *out = exe;
  return NULL;
}
