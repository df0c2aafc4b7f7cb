/*
 * plugsdk.h -- the stable C ABI between the plugsdk core and backend plugins.
 *
 * ABI 1.9 (1.8 plus recordings: recording_begin, recording_end, recording_launch and
 * recording_destroy; 1.8 is 1.7 plus the library op PLUGSDK_LIBRARY_SDPA_BACKWARD; 1.7 is 1.6 plus
 * device_info.sdpa_dtypes, sdpa_skips, sdpa_head_dim_max and sdpa_head_dim_multiple; 1.6 is 1.5 plus
 * device_info.matmul_dtypes; 1.5 is 1.4 plus device_info.split_row_reductions and split_column_reductions; 1.4 is 1.3
 * plus device_info.convolution_dtypes and convolution_skips_transposed; 1.3 is 1.2 plus
 * device_info.async_stream_failures; 1.2 is 1.1 plus stream_import and mixed-precision
 * prims.matmul; 1.1 is 1.0 plus buffer_import). 1.0 to 1.8 are frozen: copies live in
 * sdk/tests/abi_v1_0 to abi_v1_8, and a test checks that every later header keeps their
 * layouts. docs/abi/reference.md documents every field;
 * docs/abi/CHANGELOG.md records each version.
 *
 * Standalone C11: includes only <stddef.h>, <stdint.h> and <stdbool.h>. No C++ type and no
 * exception crosses it. Rules (learned from PJRT's and IREE's plugin ABIs):
 *
 *  - Versions. The core passes the highest ABI version it knows to the plugin's one
 *    exported entry point, plugsdk_plugin_init(). The plugin returns its function table,
 *    stamped with the version it implements, or NULL with a refusal message. Same major:
 *    compatible; the minor only adds fields and functions at the end of structs.
 *  - Sizes, never equality. Every struct starts with `size_t struct_size` (set by whoever
 *    fills it in, to sizeof the struct as *it* knows it) and `void* extension` (a chain of
 *    plugsdk_extension_t, NULL when unused). A reader accepts struct_size >= the size it
 *    needs for the fields it reads, and treats fields past struct_size as absent (zero).
 *    Arrays of structs carry their element size in the containing struct.
 *  - Calls. Every function takes one args struct and returns a plugsdk_error_t*: NULL on
 *    success, else an error object the caller owns and frees with api->error_destroy.
 *    Outputs are out_* fields of the args struct.
 *  - Ownership is written on every handle and pointer: "borrowed" pointers are valid for the
 *    duration of the call only; "owned by X" handles are destroyed by X's destroy function.
 *    Strings a plugin hands out (out_reason, device names, logs) stay valid as long as the
 *    object they describe (the client, the executable).
 *  - Fixed layouts. plugsdk_index_insn_t, plugsdk_index_expr_t and plugsdk_tensor_desc_t
 *    have no size field: they never change within major 1 (new data goes in extensions).
 *  - Threads. The core never calls into one client from two threads at once; calls on
 *    different clients may run concurrently, so a plugin's global state must be safe for it.
 *  - Destroying. The core synchronizes a stream before destroying anything queued work
 *    uses. error_destroy of NULL is a no-op. Buffers are aligned to at least 64 bytes and
 *    every launch offset is a multiple of its argument's element size.
 */
#ifndef PLUGSDK_PLUGSDK_H_
#define PLUGSDK_PLUGSDK_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PLUGSDK_ABI_VERSION_MAJOR 1
#define PLUGSDK_ABI_VERSION_MINOR 9

#if defined(_WIN32)
#define PLUGSDK_EXPORT __declspec(dllexport)
#else
#define PLUGSDK_EXPORT __attribute__((visibility("default")))
#endif

/* Records the last field of a struct as of this ABI version: the size a reader built
 * against this header needs (see PLUGSDK_STRUCT_SIZE). */
#define PLUGSDK_STRUCT_SIZE(type, last_field) (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/* ---- extensions ---------------------------------------------------------------------- */

/* The head of every extension struct. `type` names the extension (values are assigned in
 * docs/abi/extensions.md); readers skip types they do not know. */
typedef struct plugsdk_extension {
  size_t struct_size;
  void* extension; /* the next extension in the chain, or NULL */
  uint32_t type;
} plugsdk_extension_t;

/* ---- errors -------------------------------------------------------------------------- */

/* Canonical codes (the same numbering as the core's Status). A plugin converts its
 * vendor's error codes at its edge, in one place. */
typedef enum plugsdk_code {
  PLUGSDK_CODE_OK = 0,
  PLUGSDK_CODE_INVALID_ARGUMENT = 1,
  PLUGSDK_CODE_NOT_FOUND = 2,
  PLUGSDK_CODE_UNIMPLEMENTED = 3,
  PLUGSDK_CODE_FAILED_PRECONDITION = 4,
  PLUGSDK_CODE_OUT_OF_RANGE = 5,
  PLUGSDK_CODE_INTERNAL = 6,
  PLUGSDK_CODE_UNAVAILABLE = 7,
  PLUGSDK_CODE_RESOURCE_EXHAUSTED = 8,
} plugsdk_code_t;

/* An error made by the plugin. Owned by the caller of the function that returned it,
 * destroyed with api->error_destroy. */
typedef struct plugsdk_error plugsdk_error_t;

/* ---- handles (all opaque; created and destroyed by the plugin) ------------------------- */

typedef struct plugsdk_client plugsdk_client_t;         /* one plugin instance; owns everything below */
typedef struct plugsdk_buffer plugsdk_buffer_t;         /* device memory; owned by the core, freed with buffer_free */
typedef struct plugsdk_stream plugsdk_stream_t;         /* an in-order queue of work on one device */
typedef struct plugsdk_event plugsdk_event_t;           /* a point in a stream */
typedef struct plugsdk_recording plugsdk_recording_t;   /* work recorded from a stream, replayable (1.9) */
typedef struct plugsdk_executable plugsdk_executable_t; /* a compiled kernel or library call */

/* ---- data types (the core's DType order) ---------------------------------------------- */

typedef enum plugsdk_dtype {
  PLUGSDK_DTYPE_BOOL = 0,
  PLUGSDK_DTYPE_U8 = 1,
  PLUGSDK_DTYPE_I8 = 2,
  PLUGSDK_DTYPE_I16 = 3,
  PLUGSDK_DTYPE_I32 = 4,
  PLUGSDK_DTYPE_I64 = 5,
  PLUGSDK_DTYPE_F16 = 6,
  PLUGSDK_DTYPE_BF16 = 7,
  PLUGSDK_DTYPE_F32 = 8,
  PLUGSDK_DTYPE_F64 = 9,
} plugsdk_dtype_t;

#define PLUGSDK_DTYPE_BIT(d) (1u << (d))

/* ---- the kernel encoding --------------------------------------------------------------- */
/*
 * A loop-level kernel from the scheduler (docs/kernel-ir.md), as flat arrays a C plugin can
 * walk without parsing. `text` carries the same kernel in the kernel-IR text form for
 * plugins that prefer it and for logs. All pointers are borrowed for the duration of the
 * compile call that passes the kernel.
 *
 * Index expressions are postfix programs over int64 (Python floor semantics for FLOORDIV
 * and MOD): operands push, operators pop two and push one. They read grid variables
 * (i<n>), the variables of the enclosing loop (r<n>), size symbols (by index into
 * kernel.symbols, bound at launch) and integer SSA values (indirect indices).
 */
typedef enum plugsdk_index_op {
  PLUGSDK_INDEX_CONST = 0,    /* push operand */
  PLUGSDK_INDEX_GRID_VAR = 1, /* push i<operand> */
  PLUGSDK_INDEX_LOOP_VAR = 2, /* push r<operand> */
  PLUGSDK_INDEX_SYMBOL = 3,   /* push the launch value of symbols[operand] */
  PLUGSDK_INDEX_VALUE = 4,    /* push the integer SSA value %<operand> */
  PLUGSDK_INDEX_ADD = 5,
  PLUGSDK_INDEX_SUB = 6,
  PLUGSDK_INDEX_MUL = 7,
  PLUGSDK_INDEX_FLOORDIV = 8,
  PLUGSDK_INDEX_MOD = 9,
} plugsdk_index_op_t;

typedef struct plugsdk_index_insn {
  uint32_t op; /* plugsdk_index_op_t */
  uint32_t reserved;
  int64_t operand;
} plugsdk_index_insn_t;

/* A range of kernel.index_insns: the postfix program of one expression. */
typedef struct plugsdk_index_expr {
  uint32_t first;
  uint32_t count;
} plugsdk_index_expr_t;

typedef enum plugsdk_stmt_kind {
  PLUGSDK_STMT_LOAD = 0,   /* result = args[arg][index] (masked by operands[0] when num_operands == 1) */
  PLUGSDK_STMT_CONST = 1,  /* result = fvalue (floating dtypes) or ivalue */
  PLUGSDK_STMT_INDEX = 2,  /* result (i64) = index */
  PLUGSDK_STMT_SCALAR = 3, /* result = op(operands...), op from plugsdk_scalar_op_t */
  PLUGSDK_STMT_WHERE = 4,  /* result = operands[0] ? operands[1] : operands[2] */
  PLUGSDK_STMT_CAST = 5,   /* result = convert_element_type(operands[0], dtype) */
  PLUGSDK_STMT_RAND = 6,   /* result = uniform(seed = ivalue, counter = index) */
  PLUGSDK_STMT_REDUCE = 7, /* inside a loop: result = combine over the loop of operands[0] */
  PLUGSDK_STMT_STORE = 8,  /* args[arg][index] = operands[0], combined by `combine` */
  PLUGSDK_STMT_LOOP = 9,   /* a reduction loop over loop_sizes; the next body_count statements are its body */
  PLUGSDK_STMT_CHECK = 10, /* fail the launch with `message` where operands[0] is false */
} plugsdk_stmt_kind_t;

/* The elementwise ops, in the order of core/prims/scalar_ops.h (docs/prims.md). */
typedef enum plugsdk_scalar_op {
  PLUGSDK_OP_ABS,
  PLUGSDK_OP_NEG,
  PLUGSDK_OP_SIGN,
  PLUGSDK_OP_FLOOR,
  PLUGSDK_OP_CEIL,
  PLUGSDK_OP_ROUND,
  PLUGSDK_OP_TRUNC,
  PLUGSDK_OP_BITWISE_NOT,
  PLUGSDK_OP_EXP,
  PLUGSDK_OP_EXPM1,
  PLUGSDK_OP_LOG,
  PLUGSDK_OP_LOG1P,
  PLUGSDK_OP_LOG2,
  PLUGSDK_OP_SQRT,
  PLUGSDK_OP_RSQRT,
  PLUGSDK_OP_SIN,
  PLUGSDK_OP_COS,
  PLUGSDK_OP_TAN,
  PLUGSDK_OP_ASIN,
  PLUGSDK_OP_ACOS,
  PLUGSDK_OP_ATAN,
  PLUGSDK_OP_SINH,
  PLUGSDK_OP_COSH,
  PLUGSDK_OP_TANH,
  PLUGSDK_OP_ASINH,
  PLUGSDK_OP_ACOSH,
  PLUGSDK_OP_ATANH,
  PLUGSDK_OP_ERF,
  PLUGSDK_OP_ADD,
  PLUGSDK_OP_SUB,
  PLUGSDK_OP_MUL,
  PLUGSDK_OP_DIV,
  PLUGSDK_OP_REMAINDER,
  PLUGSDK_OP_FMOD,
  PLUGSDK_OP_POW,
  PLUGSDK_OP_ATAN2,
  PLUGSDK_OP_MAXIMUM,
  PLUGSDK_OP_MINIMUM,
  PLUGSDK_OP_BITWISE_AND,
  PLUGSDK_OP_BITWISE_OR,
  PLUGSDK_OP_BITWISE_XOR,
  PLUGSDK_OP_EQ,
  PLUGSDK_OP_NE,
  PLUGSDK_OP_LT,
  PLUGSDK_OP_LE,
  PLUGSDK_OP_GT,
  PLUGSDK_OP_GE,
  PLUGSDK_OP_COUNT_V1_0 /* not an op: the number of ops in ABI 1.0 */
} plugsdk_scalar_op_t;

typedef enum plugsdk_reduce_op {
  PLUGSDK_REDUCE_SUM = 0,
  PLUGSDK_REDUCE_PROD = 1,
  PLUGSDK_REDUCE_MAX = 2,
  PLUGSDK_REDUCE_MIN = 3,
  PLUGSDK_REDUCE_ARGMAX = 4,
  PLUGSDK_REDUCE_ARGMIN = 5,
} plugsdk_reduce_op_t;

typedef enum plugsdk_combine {
  PLUGSDK_COMBINE_NONE = 0,
  PLUGSDK_COMBINE_SUM = 1,
  PLUGSDK_COMBINE_PROD = 2,
  PLUGSDK_COMBINE_MAX = 3,
  PLUGSDK_COMBINE_MIN = 4,
} plugsdk_combine_t;

typedef struct plugsdk_stmt {
  uint32_t kind;  /* plugsdk_stmt_kind_t */
  uint32_t dtype; /* plugsdk_dtype_t of the result */
  int32_t result; /* SSA value id, -1 for STORE, LOOP and CHECK */
  int32_t arg;    /* LOAD / STORE: kernel argument */
  uint32_t op;    /* SCALAR: plugsdk_scalar_op_t; REDUCE: plugsdk_reduce_op_t; STORE: plugsdk_combine_t */
  uint32_t num_operands;
  int32_t operands[3];
  uint32_t body_count;                    /* LOOP: statements that follow and form the body */
  plugsdk_index_expr_t index;             /* LOAD / STORE / INDEX / RAND */
  uint32_t num_loop_sizes;                /* LOOP: its rank (loop variables r0 .. r<num_loop_sizes - 1>) */
  const plugsdk_index_expr_t* loop_sizes; /* LOOP: num_loop_sizes extents, r0 outermost */
  double fvalue;                          /* CONST of a floating dtype */
  int64_t ivalue;                         /* CONST of an integral dtype; RAND seed */
  const char* message;                    /* CHECK: borrowed, NUL-terminated */
} plugsdk_stmt_t;

typedef enum plugsdk_arg_access {
  PLUGSDK_ACCESS_READ = 1u << 0,
  PLUGSDK_ACCESS_WRITE = 1u << 1,
  PLUGSDK_ACCESS_ACCUMULATOR = 1u << 2, /* the library result an epilogue reads */
} plugsdk_arg_access_t;

typedef struct plugsdk_kernel_arg {
  const char* name; /* borrowed */
  uint32_t dtype;   /* plugsdk_dtype_t */
  uint32_t access;  /* plugsdk_arg_access_t bits */
} plugsdk_kernel_arg_t;

typedef struct plugsdk_kernel {
  size_t struct_size;
  void* extension;
  const char* name; /* borrowed */
  const char* text; /* borrowed: the kernel-IR text form of the same kernel */
  size_t arg_size;  /* sizeof(plugsdk_kernel_arg_t) as the core knows it */
  size_t num_args;
  const plugsdk_kernel_arg_t* args;
  size_t num_grid;                  /* grid rank */
  const plugsdk_index_expr_t* grid; /* grid sizes (expressions over symbols) */
  size_t stmt_size;                 /* sizeof(plugsdk_stmt_t) as the core knows it */
  size_t num_stmts;                 /* top-level and loop-body statements, in order */
  const plugsdk_stmt_t* stmts;
  size_t num_index_insns;
  const plugsdk_index_insn_t* index_insns;
  size_t num_symbols;
  const char* const* symbols; /* size symbol names; values come with each launch */
  uint32_t num_values;        /* SSA ids are 0 .. num_values - 1 */
} plugsdk_kernel_t;

/* ---- capabilities (data the core reads; it never branches on a plugin's name) ---------- */

typedef enum plugsdk_library_op {
  PLUGSDK_LIBRARY_MATMUL = 1u << 0,      /* prims.matmul (1.2: f16/bf16 operands may give an f32 result) */
  PLUGSDK_LIBRARY_CONVOLUTION = 1u << 1, /* prims.convolution */
  PLUGSDK_LIBRARY_SDPA = 1u << 2,        /* prims.sdpa */
  /* ABI 1.8: prims.sdpa_backward (inputs grad_out, query, key, value, out, logsumexp and the
   * optional attn_mask; outputs the gradients of query, key and value). Its forms are
   * prims.sdpa's: device_info.sdpa_dtypes, sdpa_skips and the head-dim limits govern both. */
  PLUGSDK_LIBRARY_SDPA_BACKWARD = 1u << 3,
} plugsdk_library_op_t;

/* Forms of prims.sdpa a device leaves to the core (device_info.sdpa_skips, ABI 1.7): a call
 * of such a form is expanded into matmuls and a softmax, as on a device without the op. */
typedef enum plugsdk_sdpa_skip {
  PLUGSDK_SDPA_SKIPS_BOOL_MASK = 1u << 0,         /* an attn_mask of bool (true = attend) */
  PLUGSDK_SDPA_SKIPS_FLOAT_MASK = 1u << 1,        /* an additive attn_mask of the query's dtype */
  PLUGSDK_SDPA_SKIPS_DROPOUT = 1u << 2,           /* dropout_p > 0 */
  PLUGSDK_SDPA_SKIPS_CAUSAL = 1u << 3,            /* is_causal */
  PLUGSDK_SDPA_SKIPS_UNEQUAL_HEAD_DIMS = 1u << 4, /* value's last dim (Ev) differs from E */
} plugsdk_sdpa_skip_t;

typedef enum plugsdk_memory_kind {
  PLUGSDK_MEMORY_DEVICE = 1u << 0, /* only the device reads it */
  PLUGSDK_MEMORY_HOST = 1u << 1,   /* host memory the device can read */
  PLUGSDK_MEMORY_SHARED = 1u << 2, /* unified: both read it */
} plugsdk_memory_kind_t;

typedef struct plugsdk_device_info {
  size_t struct_size;
  void* extension;
  const char* name;      /* borrowed, valid while the client lives: "cpu0", a product name */
  uint32_t dtypes;       /* PLUGSDK_DTYPE_BIT of every dtype kernels may use */
  uint32_t vector_bits;  /* preferred vector / SIMD width in bits (0: scalar) */
  uint32_t memory_kinds; /* plugsdk_memory_kind_t bits */
  uint64_t memory_bytes; /* total device memory */
  uint64_t max_buffer_bytes;
  uint32_t library_ops;      /* plugsdk_library_op_t bits it implements */
  uint32_t epilogue_ops;     /* library ops that accept a fused epilogue kernel */
  uint32_t max_kernel_stmts; /* 0: no limit; the scheduler keeps fused kernels below it */
  bool fuses_horizontal;     /* fusion capabilities the scheduler reads (FusionCaps) */
  bool fuses_reduction_epilogue;
  bool fuses_multi_reduction;
  bool takes_subgraphs; /* compile_subgraph is implemented */
  /* ABI 1.3 (read only when struct_size covers it; false before). A run-time failure (a
   * CHECK, an integer division by zero) of a launch on an imported stream (stream_import) is
   * raised on that stream by the native runtime itself, as its own kernels' assertions are
   * (CUDA: a device-side assert, which every later call on the context reports), so the
   * core need not wait for such launches to report it. */
  bool async_stream_failures;
  /* ABI 1.4 (read only when struct_size covers it). The forms of prims.convolution taken when
   * library_ops has PLUGSDK_LIBRARY_CONVOLUTION: PLUGSDK_DTYPE_BIT of the input dtypes taken
   * (0: every dtype), and whether transposed convolutions are left out. The core expands the
   * other calls, as on a device without the op. Before 1.4: every form. */
  uint32_t convolution_dtypes;
  bool convolution_skips_transposed;
  /* ABI 1.5 (read only when struct_size covers split_column_reductions; 0 before). Split
   * reductions, for a device that wants many independent rows of work: a reduction whose
   * reduced dims include the innermost one and that keeps fewer rows than
   * split_row_reductions is computed in two stages (partial reductions over slices of its
   * outermost reduced dims, then a reduction of the partials) so that rows x slices reaches
   * it; split_column_reductions is the same for a reduction that keeps its innermost dim (a
   * column sum), columns x slices. 0: never split. */
  uint32_t split_row_reductions;
  uint32_t split_column_reductions;
  /* ABI 1.6 (read only when struct_size covers it; 0 before). The forms of prims.matmul taken
   * when library_ops has PLUGSDK_LIBRARY_MATMUL: PLUGSDK_DTYPE_BIT of the operand dtypes taken
   * (0: every dtype, as before 1.6). The core expands the other calls into loop kernels, as on
   * a device without the op. 64 bits wide so that it lies past the end of 1.5's struct: 1.5's
   * sizeof ends in 4 bytes of tail padding (LP64), which a 32-bit field would occupy, and a 1.5
   * plugin's struct_size covers. */
  uint64_t matmul_dtypes;
  /* ABI 1.7 (read only when struct_size covers them; 0 before). The forms of prims.sdpa taken
   * when library_ops has PLUGSDK_LIBRARY_SDPA; the core expands the other calls into matmuls
   * and a softmax. sdpa_dtypes: PLUGSDK_DTYPE_BIT of the query dtypes taken (0: every dtype).
   * sdpa_skips: plugsdk_sdpa_skip_t bits of the forms not taken. sdpa_head_dim_max: E and Ev
   * at most this (0: any); sdpa_head_dim_multiple: E and Ev multiples of this (0 or 1: any);
   * a call whose head dims are symbolic is expanded when either is set. */
  uint64_t sdpa_dtypes;
  uint32_t sdpa_skips;
  uint16_t sdpa_head_dim_max;
  uint16_t sdpa_head_dim_multiple;
} plugsdk_device_info_t;

/* ---- function argument structs ---------------------------------------------------------- */

typedef struct plugsdk_error_destroy_args {
  size_t struct_size;
  void* extension;
  plugsdk_error_t* error; /* destroyed */
} plugsdk_error_destroy_args_t;

typedef struct plugsdk_error_info_args {
  size_t struct_size;
  void* extension;
  const plugsdk_error_t* error;
  uint32_t out_code;       /* plugsdk_code_t */
  const char* out_message; /* borrowed, valid until the error is destroyed */
} plugsdk_error_info_args_t;

typedef struct plugsdk_client_create_args {
  size_t struct_size;
  void* extension;
  const char* options;          /* borrowed: "key=value;..." plugin-specific, may be NULL */
  plugsdk_client_t* out_client; /* owned by the caller, destroyed with client_destroy */
} plugsdk_client_create_args_t;

typedef struct plugsdk_client_destroy_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client; /* everything created from it must have been destroyed */
} plugsdk_client_destroy_args_t;

typedef struct plugsdk_device_count_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  uint32_t out_count;     /* 0 is valid: no device (and not an error) */
  const char* out_reason; /* valid while the client lives: why there is none (e.g. no driver), or NULL */
} plugsdk_device_count_args_t;

typedef struct plugsdk_device_info_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  uint32_t device;
  /* The plugin fills fields up to min(info->struct_size, its own size) and sets
   * info->struct_size to that minimum (the fields it knows); it never writes past it. */
  plugsdk_device_info_t* info;
} plugsdk_device_info_args_t;

typedef struct plugsdk_buffer_allocate_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  uint32_t device;
  uint32_t memory_kind;         /* one plugsdk_memory_kind_t bit */
  uint64_t bytes;               /* 0 is valid */
  plugsdk_buffer_t* out_buffer; /* owned by the caller, freed with buffer_free */
} plugsdk_buffer_allocate_args_t;

/* ABI 1.1. Memory the caller already has, used in place (zero-copy: a torch tensor's
 * storage). memory_kind says what `data` is: PLUGSDK_MEMORY_HOST, a host pointer;
 * PLUGSDK_MEMORY_DEVICE, an address in the device's own memory (a CUDA device pointer, a
 * Level Zero device allocation). The buffer borrows it: the caller keeps it alive until
 * buffer_free and every launch using the buffer have completed; buffer_free never frees
 * `data`. A device that cannot address that memory returns UNIMPLEMENTED and the core copies. */
typedef struct plugsdk_buffer_import_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  uint32_t device;
  uint32_t memory_kind; /* one plugsdk_memory_kind_t bit */
  void* data;           /* borrowed; may be NULL only when bytes is 0 */
  uint64_t bytes;
  plugsdk_buffer_t* out_buffer; /* owned by the caller, freed with buffer_free */
} plugsdk_buffer_import_args_t;

typedef struct plugsdk_buffer_free_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  plugsdk_buffer_t* buffer;
} plugsdk_buffer_free_args_t;

typedef enum plugsdk_copy_kind {
  PLUGSDK_COPY_HOST_TO_DEVICE = 0,
  PLUGSDK_COPY_DEVICE_TO_HOST = 1,
  PLUGSDK_COPY_DEVICE_TO_DEVICE = 2,
} plugsdk_copy_kind_t;

typedef struct plugsdk_buffer_copy_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  plugsdk_stream_t* stream; /* NULL: synchronous */
  uint32_t kind;            /* plugsdk_copy_kind_t */
  plugsdk_buffer_t* src;
  uint64_t src_offset; /* device side(s) */
  plugsdk_buffer_t* dst;
  uint64_t dst_offset;
  const void* host_src; /* HOST_TO_DEVICE: borrowed until the copy completes */
  void* host_dst;       /* DEVICE_TO_HOST: written when the copy completes */
  uint64_t bytes;
} plugsdk_buffer_copy_args_t;

typedef struct plugsdk_buffer_fill_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  plugsdk_stream_t* stream;
  plugsdk_buffer_t* buffer;
  uint64_t offset;
  uint64_t bytes;
  uint8_t pattern[8];
  uint32_t pattern_bytes; /* 1, 2, 4 or 8; bytes is a multiple of it */
} plugsdk_buffer_fill_args_t;

typedef struct plugsdk_stream_create_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  uint32_t device;
  plugsdk_stream_t* out_stream; /* owned by the caller, destroyed with stream_destroy */
} plugsdk_stream_create_args_t;

/* ABI 1.2. A stream over the caller's own native stream (a CUstream, a Level Zero command
 * queue or list; what `native` is, is the plugin's to document), so the core's work is ordered
 * with the caller's work there (torch's current stream) without host waits. Borrowed: the
 * caller keeps the native stream alive until stream_destroy, which releases the handle only.
 * A failed kernel CHECK on it is returned by its next stream_synchronize, as on any stream;
 * with device_info.async_stream_failures (1.3) the native runtime raises it instead.
 * A plugin that cannot wrap the native object returns UNIMPLEMENTED. */
typedef struct plugsdk_stream_import_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  uint32_t device;
  void* native;                 /* borrowed */
  plugsdk_stream_t* out_stream; /* owned by the caller, destroyed with stream_destroy */
} plugsdk_stream_import_args_t;

typedef struct plugsdk_stream_args {
  size_t struct_size;
  void* extension; /* destroy / synchronize */
  plugsdk_client_t* client;
  plugsdk_stream_t* stream;
} plugsdk_stream_args_t;

typedef struct plugsdk_event_args {
  size_t struct_size;
  void* extension;
  /* create: out_event is owned by the caller (stream: the stream it will be recorded on, may be
   * NULL); record: event marks the current end of stream;
   * wait: stream waits for event; synchronize: the host waits; destroy */
  plugsdk_client_t* client;
  plugsdk_stream_t* stream;
  plugsdk_event_t* event;
  plugsdk_event_t* out_event;
} plugsdk_event_args_t;

typedef struct plugsdk_compile_kernel_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  uint32_t device;
  const plugsdk_kernel_t* kernel;       /* borrowed for the call */
  const char* options;                  /* borrowed, may be NULL */
  plugsdk_executable_t* out_executable; /* owned by the caller, destroyed with executable_destroy */
} plugsdk_compile_kernel_args_t;

/* A library op (prims.matmul / convolution / sdpa / sdpa_backward) on strided operands, with an optional
 * epilogue kernel that reads the result through its ACCUMULATOR argument. ABI 1.2: a
 * prims.matmul of f16/bf16 operands may have an f32 output (the accumulator, unrounded; its
 * attributes then read "dtype = f32"); the core sends it only to plugins of ABI >= 1.2. */
typedef struct plugsdk_tensor_desc {
  uint32_t dtype;
  uint32_t rank;
  const plugsdk_index_expr_t* sizes;   /* rank expressions over the op's symbols */
  const plugsdk_index_expr_t* strides; /* elements */
  plugsdk_index_expr_t offset;
} plugsdk_tensor_desc_t;

typedef struct plugsdk_compile_library_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  uint32_t device;
  uint32_t op;            /* one plugsdk_library_op_t bit */
  const char* attributes; /* borrowed: the prim's attributes in .pgraph syntax */
  size_t num_inputs;
  const plugsdk_tensor_desc_t* inputs; /* an absent optional input has rank 0 and dtype UINT32_MAX */
  size_t num_outputs;
  const plugsdk_tensor_desc_t* outputs;
  const plugsdk_index_insn_t* index_insns;
  size_t num_index_insns; /* the pool the descriptors index */
  const char* const* symbols;
  size_t num_symbols;
  const plugsdk_kernel_t* epilogue; /* NULL: none */
  plugsdk_executable_t* out_executable;
} plugsdk_compile_library_args_t;

typedef struct plugsdk_executable_destroy_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  plugsdk_executable_t* executable;
} plugsdk_executable_destroy_args_t;

typedef struct plugsdk_executable_log_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  const plugsdk_executable_t* executable;
  const char* out_log; /* borrowed until the executable is destroyed: compiler messages, may be "" */
} plugsdk_executable_log_args_t;

/* Whole prim subgraphs (optional: devices with takes_subgraphs). The graph is a verified
 * prim-level graph in the .pgraph text form (docs/pgraph.md; every node a prims.* op). The
 * executable is launched with one buffer per graph input, then one per graph output (each
 * contiguous, row-major), and the values of `symbols` (the graph's size symbols, in the order
 * given here). */
typedef struct plugsdk_compile_subgraph_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  uint32_t device;
  const char* graph_text; /* borrowed for the call */
  size_t num_symbols;
  const char* const* symbols; /* borrowed for the call */
  const char* options;        /* borrowed, may be NULL */
  plugsdk_executable_t* out_executable;
} plugsdk_compile_subgraph_args_t;

/* Runs an executable on a stream (NULL: synchronously). Buffers, in order:
 *  - a kernel: one per kernel argument;
 *  - a library op: one per input descriptor (NULL for an absent one), one per output
 *    descriptor, then one per epilogue argument that is not its ACCUMULATOR, in order;
 *  - a subgraph: one per graph input, then one per graph output.
 * offsets[i] (bytes) is added to buffer i's base (library descriptors add their own element
 * offsets on top). symbol_values follow the executable's symbol list; for a library op with
 * an epilogue, the call's `symbols` then the epilogue kernel's own `symbols` (a name may be
 * in both). With an epilogue, output 0's buffer is NULL: the plugin computes output 0 into
 * its own row-major temporary of the ACCUMULATOR argument's dtype, which the epilogue reads. A kernel CHECK that
 * fails makes the launch return PLUGSDK_CODE_OUT_OF_RANGE with the check's message (when the
 * launch is asynchronous, the stream's next synchronize returns it). */
typedef struct plugsdk_launch_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  plugsdk_stream_t* stream;
  const plugsdk_executable_t* executable;
  size_t num_buffers;
  plugsdk_buffer_t* const* buffers;
  const uint64_t* offsets; /* per buffer, bytes; NULL: all zero */
  size_t num_symbols;
  const int64_t* symbol_values; /* in the kernel's symbols order */
} plugsdk_launch_args_t;

/* ABI 1.9. Recordings (a CUDA graph, a Level Zero command list, a list of calls): the work
 * queued on `stream` between recording_begin and recording_end -- launches, buffer copies and
 * fills -- is recorded instead of run. recording_end returns it as a recording, and
 * recording_launch queues all of it on a stream of the same device as one unit, each time it
 * is called, at a fraction of the host cost of the calls it holds.
 *  - A recording holds what the work used as it was then: device addresses (buffer bases
 *    plus offsets), executables and symbol values. The caller replays it only while those
 *    buffers and executables are alive and destroys it before any executable it uses.
 *  - While recording, the stream takes nothing but launches, copies and fills: no
 *    synchronize, no event. A recorded call that fails returns its error as usual; the caller
 *    still calls recording_end, which always ends the recording.
 *  - recording_end returns UNIMPLEMENTED when the work cannot be recorded (nothing of it ran:
 *    the caller queues it again without recording). recording_begin returns UNIMPLEMENTED
 *    when the plugin records nothing on this stream (an option turned it off, a synchronous
 *    stream).
 *  - recording_launch returns FAILED_PRECONDITION, having queued nothing, when a recording
 *    can no longer run (a resource of the plugin's that it used is gone); the caller then
 *    destroys it and queues the work again.
 *  - recording_destroy may come while launches of the recording are still queued (the one
 *    exception to "the core synchronizes before destroying"): the plugin frees it once they
 *    complete, as cuGraphExecDestroy does.
 * Optional: NULL entries (or a table shorter than PLUGSDK_API_SIZE_V1_9) and the core queues
 * every call of every run. */
typedef struct plugsdk_recording_args {
  size_t struct_size;
  void* extension;
  plugsdk_client_t* client;
  plugsdk_stream_t* stream;           /* begin, end, launch */
  plugsdk_recording_t* recording;     /* launch, destroy */
  plugsdk_recording_t* out_recording; /* end: owned by the caller, destroyed with recording_destroy */
} plugsdk_recording_args_t;

/* ---- the function table ------------------------------------------------------------------ */

typedef struct plugsdk_api {
  size_t struct_size;
  void* extension;
  uint32_t abi_major; /* the version the plugin implements */
  uint32_t abi_minor;
  const char* plugin_name;    /* static: "cpu", "null", ... (for messages only) */
  const char* plugin_version; /* static, free form */

  plugsdk_error_t* (*error_destroy)(plugsdk_error_destroy_args_t* args);
  plugsdk_error_t* (*error_info)(plugsdk_error_info_args_t* args);
  plugsdk_error_t* (*client_create)(plugsdk_client_create_args_t* args);
  plugsdk_error_t* (*client_destroy)(plugsdk_client_destroy_args_t* args);
  plugsdk_error_t* (*device_count)(plugsdk_device_count_args_t* args);
  plugsdk_error_t* (*device_info)(plugsdk_device_info_args_t* args);
  plugsdk_error_t* (*buffer_allocate)(plugsdk_buffer_allocate_args_t* args);
  plugsdk_error_t* (*buffer_free)(plugsdk_buffer_free_args_t* args);
  plugsdk_error_t* (*buffer_copy)(plugsdk_buffer_copy_args_t* args);
  plugsdk_error_t* (*buffer_fill)(plugsdk_buffer_fill_args_t* args);
  plugsdk_error_t* (*stream_create)(plugsdk_stream_create_args_t* args);
  plugsdk_error_t* (*stream_destroy)(plugsdk_stream_args_t* args);
  plugsdk_error_t* (*stream_synchronize)(plugsdk_stream_args_t* args);
  plugsdk_error_t* (*event_create)(plugsdk_event_args_t* args);
  plugsdk_error_t* (*event_record)(plugsdk_event_args_t* args);
  plugsdk_error_t* (*event_wait)(plugsdk_event_args_t* args);
  plugsdk_error_t* (*event_synchronize)(plugsdk_event_args_t* args);
  plugsdk_error_t* (*event_destroy)(plugsdk_event_args_t* args);
  plugsdk_error_t* (*compile_kernel)(plugsdk_compile_kernel_args_t* args);
  plugsdk_error_t* (*compile_library)(plugsdk_compile_library_args_t* args);
  plugsdk_error_t* (*executable_destroy)(plugsdk_executable_destroy_args_t* args);
  plugsdk_error_t* (*executable_log)(plugsdk_executable_log_args_t* args);
  plugsdk_error_t* (*launch)(plugsdk_launch_args_t* args);
  /* Optional: NULL unless some device reports takes_subgraphs. */
  plugsdk_error_t* (*compile_subgraph)(plugsdk_compile_subgraph_args_t* args);
  /* ABI 1.1. Optional: NULL (or a table shorter than PLUGSDK_API_SIZE_V1_1) and the core
   * copies tensors in and out instead. */
  plugsdk_error_t* (*buffer_import)(plugsdk_buffer_import_args_t* args);
  /* ABI 1.2. Optional: NULL (or a shorter table) and the core waits for the caller's stream
   * instead (the caller synchronizes it before a run; the run synchronizes its own). */
  plugsdk_error_t* (*stream_import)(plugsdk_stream_import_args_t* args);
  /* ABI 1.9. Optional (all four or none): see plugsdk_recording_args_t. */
  plugsdk_error_t* (*recording_begin)(plugsdk_recording_args_t* args);
  plugsdk_error_t* (*recording_end)(plugsdk_recording_args_t* args);
  plugsdk_error_t* (*recording_launch)(plugsdk_recording_args_t* args);
  plugsdk_error_t* (*recording_destroy)(plugsdk_recording_args_t* args);
} plugsdk_api_t;

/* The size of the table in ABI 1.0: a core accepts any table at least this large. */
#define PLUGSDK_API_SIZE_V1_0 PLUGSDK_STRUCT_SIZE(plugsdk_api_t, compile_subgraph)
/* The size of the table in ABI 1.1 (buffer_import). Read a 1.1 entry only from a table this
 * large: a 1.0 plugin's table ends before it. */
#define PLUGSDK_API_SIZE_V1_1 PLUGSDK_STRUCT_SIZE(plugsdk_api_t, buffer_import)
/* The size of the table in ABI 1.2 (stream_import). */
#define PLUGSDK_API_SIZE_V1_2 PLUGSDK_STRUCT_SIZE(plugsdk_api_t, stream_import)
/* The size of the table in ABI 1.9 (the recording functions). */
#define PLUGSDK_API_SIZE_V1_9 PLUGSDK_STRUCT_SIZE(plugsdk_api_t, recording_destroy)

/* ---- the entry point ---------------------------------------------------------------------- */

typedef struct plugsdk_init_args {
  size_t struct_size;
  void* extension;
  uint32_t core_abi_major; /* the highest ABI version the core implements */
  uint32_t core_abi_minor;
  const char* out_refusal; /* set (static string) when the plugin returns NULL: why */
} plugsdk_init_args_t;

/* The one exported symbol. Returns the plugin's table (static storage, valid until the
 * library is unloaded) or NULL to refuse the core, with args->out_refusal saying why. */
#define PLUGSDK_ENTRY_SYMBOL "plugsdk_plugin_init"
typedef const plugsdk_api_t* (*plugsdk_plugin_init_fn)(plugsdk_init_args_t* args);
PLUGSDK_EXPORT const plugsdk_api_t* plugsdk_plugin_init(plugsdk_init_args_t* args);

#ifdef __cplusplus
}
#endif

#endif /* PLUGSDK_PLUGSDK_H_ */
