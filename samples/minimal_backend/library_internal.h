/*
 * library_internal.h -- what library.c (compile_library, descriptors, launch) and
 * library_ops.c (the three ops' arithmetic) share: the compiled call, operand views at
 * launch, and the helpers both use. Private to samples/minimal_backend.
 */
#ifndef PLUGSDK_MINIMAL_LIBRARY_INTERNAL_H_
#define PLUGSDK_MINIMAL_LIBRARY_INTERNAL_H_

#include <stdint.h>

#include "minimal.h"

enum { MB_MAX_RANK = 16, MB_MAX_OPERANDS = 6, MB_MAX_ATTRS = 16 };

typedef struct mb_operand {
  bool present;
  uint32_t dtype;
  uint32_t rank;
  plugsdk_index_expr_t sizes[MB_MAX_RANK], strides[MB_MAX_RANK], offset;
} mb_operand_t;

/* An int-list attribute: 1 value (for every spatial dim) or one per spatial dim. */
typedef struct mb_ints {
  size_t n;
  int64_t v[3];
} mb_ints_t;

struct mb_library {
  uint32_t op; /* one plugsdk_library_op_t bit */
  size_t num_inputs, num_outputs;
  mb_operand_t operands[MB_MAX_OPERANDS]; /* inputs, then outputs */
  plugsdk_index_insn_t* insns;            /* owned copy of the pool */
  size_t num_insns;
  size_t num_symbols; /* the call's own (the epilogue's follow them at launch) */
  uint32_t max_stack;
  /* prims.convolution */
  mb_ints_t stride, padding, dilation, output_padding;
  bool transposed;
  int64_t groups;
  /* prims.sdpa */
  double dropout_p;
  bool is_causal, has_scale;
  double scale;
  int64_t seed;
  /* the fused epilogue, or NULL */
  plugsdk_executable_t* epilogue;
  size_t acc_arg; /* its ACCUMULATOR argument */
};

/* One library op: its plugsdk_library_op_t bit, prim name and operands (library.c's table). */
typedef struct op_info {
  uint32_t bit;
  const char* name;
  size_t inputs, outputs;
  const char* const* operand_names;
  const char* attrs; /* for messages */
} op_info_t;

/* ---- wrapping integer arithmetic -------------------------------------------------------------- */

static inline int64_t s64(uint64_t u) { return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1; }
static inline int64_t wadd(int64_t a, int64_t b) { return s64((uint64_t)a + (uint64_t)b); }
static inline int64_t wsub(int64_t a, int64_t b) { return s64((uint64_t)a - (uint64_t)b); }
static inline int64_t wmul(int64_t a, int64_t b) { return s64((uint64_t)a * (uint64_t)b); }
static inline int64_t floor_div(int64_t a, int64_t b) { /* Python's //; b == 0 gives 0 as the core's evaluator */
  if (b == 0) return 0;
  if (b == -1) return wsub(0, a);
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

/* An operand at launch: its evaluated sizes and strides over its memory. */
typedef struct view {
  unsigned char* base; /* element 0 of the buffer (the launch offset applied) */
  uint32_t dtype, rank;
  int64_t size[MB_MAX_RANK], stride[MB_MAX_RANK], offset, numel;
} view_t;

typedef struct launch_state {
  const mb_library_t* lib;
  const op_info_t* op;
  const int64_t* symbols;
  int64_t* stack;
} launch_t;

#define TRY(x)                   \
  do {                           \
    plugsdk_error_t* err_ = (x); \
    if (err_) return err_;       \
  } while (0)

/* "launch: prims.matmul: <what>" */
plugsdk_error_t* mb_failed(const launch_t* l, plugsdk_code_t code, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The view's elements, row-major; and row-major values into its elements (rounded or wrapped
 * to its dtype). */
void mb_gather(const view_t* v, mb_value_t* out);
void mb_scatter(const view_t* v, const mb_value_t* in);
/* A zeroed array of n values (0.0 and 0 are both all-zero bits); NULL when out of memory. */
mb_value_t* mb_values(int64_t n);

/* The ops (library_ops.c), on the launch's views (inputs, then outputs); results[i] gets
 * output i's values, row-major, allocated with malloc. */
plugsdk_error_t* mb_run_matmul(const launch_t* l, const view_t* v, mb_value_t** results);
plugsdk_error_t* mb_run_convolution(const launch_t* l, const view_t* v, mb_value_t** results);
plugsdk_error_t* mb_run_sdpa(const launch_t* l, const view_t* v, mb_value_t** results);

#endif /* PLUGSDK_MINIMAL_LIBRARY_INTERNAL_H_ */
