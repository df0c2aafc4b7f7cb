/*
 * minimal.h -- the private header of the minimal backend (samples/minimal_backend).
 *
 * The plugin is five files:
 *   plugin.c   the ABI surface: entry point, errors, client (options), device, memory,
 *              streams, events, launch's argument checks;
 *   compile.c  compile_kernel: validates the borrowed plugsdk_kernel_t and copies what the
 *              interpreter needs into an executable it owns;
 *   run.c      the kernel interpreter: index programs, scalar ops, casts, reductions;
 *   library.c  compile_library and its launch: prims.matmul / convolution / sdpa on strided
 *              operands, with a fused epilogue kernel run by run.c;
 *   library_ops.c  the three ops' arithmetic on gathered values (library_internal.h is
 *              what the two library files share).
 */
#ifndef PLUGSDK_MINIMAL_H_
#define PLUGSDK_MINIMAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugsdk/plugsdk.h"

/* ---- names, and the deliberately broken test variants -------------------------------------------- */

/* The conformance suite's own tests build two broken variants of this plugin from these same
 * sources (conformance/CMakeLists.txt; never installed) to prove the suite catches real bugs:
 *   MINIMAL_BREAK_ROUNDING   casts to f16 and bf16 truncate instead of rounding to nearest even
 *   MINIMAL_BREAK_LAST_TILE  the innermost loop runs in tiles of 8 and skips the partial last one
 * Each reports its own plugin and device name, so a report says which one ran. The shipped
 * plugin defines neither. */
#if defined(MINIMAL_BREAK_ROUNDING)
#define MB_PLUGIN_NAME "broken_rounding"
#define MB_DEVICE_NAME "host0-broken-rounding"
#elif defined(MINIMAL_BREAK_LAST_TILE)
#define MB_PLUGIN_NAME "broken_tile"
#define MB_DEVICE_NAME "host0-broken-tile"
#else
#define MB_PLUGIN_NAME "minimal"
#define MB_DEVICE_NAME "host0"
#endif

/* ---- errors (plugin.c) ------------------------------------------------------------------- */

struct plugsdk_error {
  plugsdk_code_t code;
  char* message; /* owned by the error (or static for the out-of-memory error) */
};

/* An error with a printf-style message; never NULL (falls back to a static out-of-memory
 * error that error_destroy knows not to free). */
plugsdk_error_t* mb_error(plugsdk_code_t code, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- handles ------------------------------------------------------------------------------ */

/* Each handle starts with a magic number, so that passing one kind of handle where another
 * is expected (or a destroyed one, often) is an INVALID_ARGUMENT instead of a crash. */
enum {
  MB_MAGIC_CLIENT = 0x6d62636c,
  MB_MAGIC_BUFFER = 0x6d626266,
  MB_MAGIC_STREAM = 0x6d627374,
  MB_MAGIC_EVENT = 0x6d626576,
  MB_MAGIC_EXECUTABLE = 0x6d626578,
  MB_MAGIC_DEAD = 0x64656164,
};

struct plugsdk_client {
  uint32_t magic;
  size_t live_objects;  /* buffers, streams, events and executables not yet destroyed */
  uint32_t library_ops; /* plugsdk_library_op_t bits device_info reports (option library=...) */
};

struct plugsdk_buffer {
  uint32_t magic;
  plugsdk_client_t* client;
  uint64_t bytes;
  unsigned char* data; /* 64-byte aligned */
};

struct plugsdk_stream {
  uint32_t magic;
  plugsdk_client_t* client;
};

struct plugsdk_event {
  uint32_t magic;
  plugsdk_client_t* client;
};

/* ---- the compiled kernel (compile.c builds it, run.c executes it) ------------------------- */

/* One statement, decoded and checked. Operand and result ids index the value array. */
typedef struct mb_stmt {
  uint32_t kind;  /* plugsdk_stmt_kind_t */
  uint32_t dtype; /* of the result (LOAD / STORE: of the argument) */
  int32_t result;
  int32_t arg;
  uint32_t op; /* scalar op, reduce op or combine */
  int32_t operands[3];
  uint32_t num_operands;
  bool operand_float;         /* SCALAR / CAST / REDUCE: operands[0] holds a double */
  uint32_t operand_dtype;     /* SCALAR / CAST / REDUCE: dtype of operands[0] */
  plugsdk_index_expr_t index; /* LOAD / STORE / INDEX / RAND: a range of index_insns */
  uint32_t body_count;        /* LOOP */
  uint32_t num_loop_sizes;    /* LOOP */
  uint32_t first_loop_size;   /* LOOP: into mb_kernel.loop_sizes */
  uint32_t acc;               /* REDUCE: its accumulator slot */
  double fvalue;
  int64_t ivalue;
  char* message; /* CHECK: owned copy */
} mb_stmt_t;

typedef struct mb_arg {
  char* name; /* owned copy */
  uint32_t dtype;
  uint32_t access;
} mb_arg_t;

typedef struct mb_library mb_library_t; /* library.c */

struct plugsdk_executable {
  uint32_t magic;
  plugsdk_client_t* client;
  char* name;            /* the kernel's name (a library call: the prim's), owned */
  mb_library_t* library; /* non-NULL: a library call (library.c); the fields below are unused */
  size_t num_args;
  mb_arg_t* args;
  size_t num_grid;
  plugsdk_index_expr_t* grid;
  size_t num_stmts;
  mb_stmt_t* stmts;
  size_t num_loop_sizes;
  plugsdk_index_expr_t* loop_sizes;
  size_t num_index_insns;
  plugsdk_index_insn_t* index_insns;
  size_t num_symbols;
  uint32_t num_values;
  uint32_t num_reduces;   /* accumulator slots */
  uint32_t max_loop_rank; /* loop variables r0 .. */
  uint32_t max_stack;     /* the deepest index program stack */
  bool round_every_op;    /* numerics=dtype (default) or numerics=float64 (see README.md) */
};

/* Values of one element: floating dtypes as double, integers and bool as int64. */
typedef union mb_value {
  double f;  /* floating dtypes */
  int64_t i; /* integers and bool */
} mb_value_t;

/* compile.c: fills *out (owned by the caller, destroyed with mb_executable_free). */
plugsdk_error_t* mb_compile(const plugsdk_kernel_t* kernel, const char* options, plugsdk_executable_t** out);
void mb_executable_free(plugsdk_executable_t* exe);

/* run.c: runs the executable once over its grid. `bases[i]` is argument i's first element
 * (the buffer's data plus the launch offset), `elements[i]` how many elements follow it. */
plugsdk_error_t* mb_run(const plugsdk_executable_t* exe, unsigned char* const* bases, const int64_t* elements,
                        const int64_t* symbol_values);

/* run.c: one element of `dtype` at p (stores round floats and wrap integers to the dtype). */
mb_value_t mb_load(uint32_t dtype, const unsigned char* p);
void mb_store(uint32_t dtype, unsigned char* p, mb_value_t v);
/* prims.rand's counter-based uniform in [0, 1) with `bits` bits of precision. */
double mb_uniform(int64_t seed, int64_t counter, int bits);

/* ---- library calls (library.c) ---------------------------------------------------------------- */

/* The library ops a client reports by default, and those that take a fused epilogue. */
#define MB_LIBRARY_ALL (PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION | PLUGSDK_LIBRARY_SDPA)
#define MB_EPILOGUE_OPS (PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION)

/* compile_library: validates the borrowed descriptors, parses the attribute text, compiles
 * the epilogue (mb_compile) and fills *out (owned by the caller, mb_executable_free). */
plugsdk_error_t* mb_compile_library(const plugsdk_compile_library_args_t* args, uint32_t library_ops,
                                    plugsdk_executable_t** out);
void mb_library_free(mb_library_t* lib);

/* The buffers a library executable's launch takes, and the symbol values. */
size_t mb_library_num_buffers(const mb_library_t* lib);
size_t mb_library_num_symbols(const mb_library_t* lib);

/* Runs a library call. bases[i] is buffer i's data plus the launch offset (NULL for a NULL
 * buffer), bytes[i] how many bytes follow it; symbol_values has mb_library_num_symbols(). */
plugsdk_error_t* mb_library_run(const plugsdk_executable_t* exe, unsigned char* const* bases, const uint64_t* bytes,
                                const int64_t* symbol_values);

/* Bytes of one element of a dtype (0 for an unknown dtype). */
size_t mb_dtype_bytes(uint32_t dtype);
bool mb_dtype_is_float(uint32_t dtype);

#endif /* PLUGSDK_MINIMAL_H_ */
