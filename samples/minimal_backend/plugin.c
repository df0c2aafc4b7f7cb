/*
 * The minimal backend's ABI surface: one host device that runs kernels by interpreting the
 * ABI's kernel encoding (compile.c, run.c). Memory is malloc'ed host memory, streams run
 * their work at once, events are always complete.
 *
 * Every function checks its arguments first and answers INVALID_ARGUMENT (or OUT_OF_RANGE
 * for offsets and sizes) with a message that names the function: a bad call never crashes
 * the process that loaded the plugin.
 */
#define _POSIX_C_SOURCE 200809L /* sysconf */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "minimal.h"

/* ---- errors ---------------------------------------------------------------------------------- */

static plugsdk_error_t out_of_memory = {PLUGSDK_CODE_RESOURCE_EXHAUSTED, "minimal backend: out of memory"};

plugsdk_error_t* mb_error(plugsdk_code_t code, const char* fmt, ...) {
  plugsdk_error_t* e = malloc(sizeof(*e));
  char* msg = malloc(512);
  if (!e || !msg) {
    free(e);
    free(msg);
    return &out_of_memory;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, 512, fmt, ap);
  va_end(ap);
  e->code = code;
  e->message = msg;
  return e;
}

#define INVALID(...) mb_error(PLUGSDK_CODE_INVALID_ARGUMENT, __VA_ARGS__)
#define RANGE(...) mb_error(PLUGSDK_CODE_OUT_OF_RANGE, __VA_ARGS__)

/* The checks every function starts with: args present and large enough for the fields it
 * reads (`last` is the last of them), then the client. */
#define CHECK_ARGS(fn, type, last)                                                            \
  do {                                                                                        \
    if (!args) return INVALID(#fn ": args is NULL");                                          \
    if (args->struct_size < PLUGSDK_STRUCT_SIZE(type, last))                                  \
      return INVALID(#fn ": args->struct_size is %zu, needs at least %zu", args->struct_size, \
                     (size_t)PLUGSDK_STRUCT_SIZE(type, last));                                \
  } while (0)
#define CHECK_CLIENT(fn)                                                                                    \
  do {                                                                                                      \
    if (!args->client || args->client->magic != MB_MAGIC_CLIENT) return INVALID(#fn ": bad client handle"); \
  } while (0)

static bool is_buffer(const plugsdk_client_t* c, const plugsdk_buffer_t* b) {
  return b && b->magic == MB_MAGIC_BUFFER && b->client == c;
}
static bool is_stream(const plugsdk_client_t* c, const plugsdk_stream_t* s) {
  return s && s->magic == MB_MAGIC_STREAM && s->client == c;
}
static bool is_event(const plugsdk_client_t* c, const plugsdk_event_t* e) {
  return e && e->magic == MB_MAGIC_EVENT && e->client == c;
}
/* A stream argument may be NULL (synchronous); a non-NULL one must be ours. */
static bool stream_ok(const plugsdk_client_t* c, const plugsdk_stream_t* s) { return !s || is_stream(c, s); }

/* [offset, offset + bytes) lies within `size` (without overflowing). */
static bool in_range(uint64_t offset, uint64_t bytes, uint64_t size) {
  return offset <= size && bytes <= size - offset;
}

static plugsdk_error_t* error_destroy(plugsdk_error_destroy_args_t* args) {
  CHECK_ARGS(error_destroy, plugsdk_error_destroy_args_t, error);
  if (args->error && args->error != &out_of_memory) {
    free(args->error->message);
    free(args->error);
  }
  return NULL;
}

static plugsdk_error_t* error_info(plugsdk_error_info_args_t* args) {
  CHECK_ARGS(error_info, plugsdk_error_info_args_t, out_message);
  if (!args->error) return INVALID("error_info: error is NULL");
  args->out_code = args->error->code;
  args->out_message = args->error->message;
  return NULL;
}

/* ---- client and device ------------------------------------------------------------------------ */

/* The client options, "key=value;..." (spaces around keys and values are ignored):
 *   library=all|none|OP[,OP...]   the library ops device_info reports, OP one of matmul,
 *                                 convolution, sdpa (default all). The core expands the others
 *                                 into loop kernels; epilogue_ops are the reported ones among
 *                                 matmul and convolution.
 * An unknown key or value is INVALID_ARGUMENT naming it. */
static const char* trim(const char* s, size_t* n) {
  while (*n && (*s == ' ' || *s == '\t')) {
    ++s;
    --*n;
  }
  while (*n && (s[*n - 1] == ' ' || s[*n - 1] == '\t')) --*n;
  return s;
}

static bool word_is(const char* s, size_t n, const char* word) { return n == strlen(word) && !strncmp(s, word, n); }

static plugsdk_error_t* parse_library_option(const char* v, size_t n, uint32_t* out) {
  if (word_is(v, n, "all")) {
    *out = MB_LIBRARY_ALL;
    return NULL;
  }
  if (word_is(v, n, "none")) {
    *out = 0;
    return NULL;
  }
  *out = 0;
  while (n) {
    size_t len = 0;
    while (len < n && v[len] != ',') ++len;
    size_t wl = len;
    const char* w = trim(v, &wl);
    if (word_is(w, wl, "matmul"))
      *out |= PLUGSDK_LIBRARY_MATMUL;
    else if (word_is(w, wl, "convolution"))
      *out |= PLUGSDK_LIBRARY_CONVOLUTION;
    else if (word_is(w, wl, "sdpa"))
      *out |= PLUGSDK_LIBRARY_SDPA;
    else
      return INVALID(
          "client_create: option library: unknown value '%.*s' (all, none, or a list of matmul, "
          "convolution, sdpa)",
          (int)wl, w);
    v += len + (len < n);
    n -= len + (len < n);
  }
  return NULL;
}

static plugsdk_error_t* parse_client_options(const char* options, plugsdk_client_t* c) {
  c->library_ops = MB_LIBRARY_ALL;
  for (const char* p = options ? options : ""; *p;) {
    const size_t n = strcspn(p, ";");
    size_t en = n;
    const char* entry = trim(p, &en);
    if (en) { /* empty entries ("a=b;;") are skipped */
      const char* eq = memchr(entry, '=', en);
      if (!eq) return INVALID("client_create: option '%.*s' is not key=value", (int)en, entry);
      size_t kn = (size_t)(eq - entry), vn = en - kn - 1;
      const char* key = trim(entry, &kn);
      const char* value = trim(eq + 1, &vn);
      if (!word_is(key, kn, "library"))
        return INVALID("client_create: unknown option '%.*s' (known: library)", (int)kn, key);
      plugsdk_error_t* e = parse_library_option(value, vn, &c->library_ops);
      if (e) return e;
    }
    p += n + (p[n] == ';');
  }
  return NULL;
}

static plugsdk_error_t* client_create(plugsdk_client_create_args_t* args) {
  CHECK_ARGS(client_create, plugsdk_client_create_args_t, out_client);
  plugsdk_client_t* c = calloc(1, sizeof(*c));
  if (!c) return &out_of_memory;
  plugsdk_error_t* e = parse_client_options(args->options, c);
  if (e) {
    free(c);
    return e;
  }
  c->magic = MB_MAGIC_CLIENT;
  args->out_client = c;
  return NULL;
}

static plugsdk_error_t* client_destroy(plugsdk_client_destroy_args_t* args) {
  CHECK_ARGS(client_destroy, plugsdk_client_destroy_args_t, client);
  CHECK_CLIENT(client_destroy);
  if (args->client->live_objects)
    return mb_error(PLUGSDK_CODE_FAILED_PRECONDITION,
                    "client_destroy: %zu buffers, streams, events or executables are still alive",
                    args->client->live_objects);
  args->client->magic = MB_MAGIC_DEAD;
  free(args->client);
  return NULL;
}

static plugsdk_error_t* device_count(plugsdk_device_count_args_t* args) {
  CHECK_ARGS(device_count, plugsdk_device_count_args_t, out_reason);
  CHECK_CLIENT(device_count);
  args->out_count = 1;
  args->out_reason = NULL;
  return NULL;
}

static uint64_t host_memory_bytes(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : (uint64_t)1 << 32;
}

static plugsdk_error_t* device_info(plugsdk_device_info_args_t* args) {
  CHECK_ARGS(device_info, plugsdk_device_info_args_t, info);
  CHECK_CLIENT(device_info);
  if (args->device != 0) return INVALID("device_info: no device %u (the minimal backend has one)", args->device);
  plugsdk_device_info_t* info = args->info;
  const size_t header = offsetof(plugsdk_device_info_t, name);
  if (!info) return INVALID("device_info: info is NULL");
  if (info->struct_size < header)
    return INVALID("device_info: info->struct_size is %zu, smaller than the struct's header", info->struct_size);

  plugsdk_device_info_t mine;
  memset(&mine, 0, sizeof(mine));
  mine.name = MB_DEVICE_NAME;
  mine.dtypes = (1u << (PLUGSDK_DTYPE_F64 + 1)) - 1; /* all ten */
  mine.vector_bits = 0;                              /* a scalar interpreter */
  mine.memory_kinds = PLUGSDK_MEMORY_HOST | PLUGSDK_MEMORY_SHARED;
  mine.memory_bytes = host_memory_bytes();
  mine.max_buffer_bytes = mine.memory_bytes;
  mine.library_ops = args->client->library_ops; /* the core expands the others into loop kernels */
  mine.epilogue_ops = args->client->library_ops & MB_EPILOGUE_OPS;
  mine.max_kernel_stmts = 0;
  mine.fuses_horizontal = true;
  mine.fuses_reduction_epilogue = true;
  mine.fuses_multi_reduction = true;
  mine.takes_subgraphs = false;

  /* Fill only the fields the caller's struct has (it may come from an older header), keep its
   * extension chain, and say how much was filled: the smaller of the two sizes. */
  size_t size = info->struct_size < sizeof(mine) ? info->struct_size : sizeof(mine);
  memcpy((char*)info + header, (const char*)&mine + header, size - header);
  info->struct_size = size;
  return NULL;
}

/* ---- memory ---------------------------------------------------------------------------------- */

static plugsdk_error_t* buffer_allocate(plugsdk_buffer_allocate_args_t* args) {
  CHECK_ARGS(buffer_allocate, plugsdk_buffer_allocate_args_t, out_buffer);
  CHECK_CLIENT(buffer_allocate);
  if (args->device != 0) return INVALID("buffer_allocate: no device %u", args->device);
  if (args->memory_kind != PLUGSDK_MEMORY_HOST && args->memory_kind != PLUGSDK_MEMORY_SHARED)
    return INVALID("buffer_allocate: memory_kind %u is not HOST or SHARED", args->memory_kind);
  if (args->bytes > SIZE_MAX - 64)
    return mb_error(PLUGSDK_CODE_RESOURCE_EXHAUSTED, "buffer_allocate: %llu bytes is too large",
                    (unsigned long long)args->bytes);
  plugsdk_buffer_t* b = calloc(1, sizeof(*b));
  /* aligned_alloc wants a multiple of the alignment; zero bytes still get a real block. */
  size_t rounded = ((size_t)args->bytes + 63) / 64 * 64;
  unsigned char* data = aligned_alloc(64, rounded ? rounded : 64);
  if (!b || !data) {
    free(b);
    free(data);
    return mb_error(PLUGSDK_CODE_RESOURCE_EXHAUSTED, "buffer_allocate: cannot allocate %llu bytes",
                    (unsigned long long)args->bytes);
  }
  b->magic = MB_MAGIC_BUFFER;
  b->client = args->client;
  b->bytes = args->bytes;
  b->data = data;
  args->client->live_objects++;
  args->out_buffer = b;
  return NULL;
}

static plugsdk_error_t* buffer_free(plugsdk_buffer_free_args_t* args) {
  CHECK_ARGS(buffer_free, plugsdk_buffer_free_args_t, buffer);
  CHECK_CLIENT(buffer_free);
  if (!is_buffer(args->client, args->buffer)) return INVALID("buffer_free: bad buffer handle");
  args->buffer->magic = MB_MAGIC_DEAD;
  free(args->buffer->data);
  free(args->buffer);
  args->client->live_objects--;
  return NULL;
}

static plugsdk_error_t* buffer_copy(plugsdk_buffer_copy_args_t* args) {
  CHECK_ARGS(buffer_copy, plugsdk_buffer_copy_args_t, bytes);
  CHECK_CLIENT(buffer_copy);
  if (!stream_ok(args->client, args->stream)) return INVALID("buffer_copy: bad stream handle");
  const uint64_t n = args->bytes;
  const void* from = NULL;
  void* to = NULL;
  switch (args->kind) {
    case PLUGSDK_COPY_HOST_TO_DEVICE:
      if (!args->host_src) return INVALID("buffer_copy: HOST_TO_DEVICE with host_src NULL");
      from = args->host_src;
      break;
    case PLUGSDK_COPY_DEVICE_TO_HOST:
      if (!args->host_dst) return INVALID("buffer_copy: DEVICE_TO_HOST with host_dst NULL");
      to = args->host_dst;
      break;
    case PLUGSDK_COPY_DEVICE_TO_DEVICE: break;
    default: return INVALID("buffer_copy: unknown copy kind %u", args->kind);
  }
  if (!from) { /* the source is a buffer */
    if (!is_buffer(args->client, args->src)) return INVALID("buffer_copy: bad src buffer handle");
    if (!in_range(args->src_offset, n, args->src->bytes))
      return RANGE("buffer_copy: %llu bytes at src_offset %llu pass the end of the %llu-byte src buffer",
                   (unsigned long long)n, (unsigned long long)args->src_offset, (unsigned long long)args->src->bytes);
    from = args->src->data + args->src_offset;
  }
  if (!to) { /* the destination is a buffer */
    if (!is_buffer(args->client, args->dst)) return INVALID("buffer_copy: bad dst buffer handle");
    if (!in_range(args->dst_offset, n, args->dst->bytes))
      return RANGE("buffer_copy: %llu bytes at dst_offset %llu pass the end of the %llu-byte dst buffer",
                   (unsigned long long)n, (unsigned long long)args->dst_offset, (unsigned long long)args->dst->bytes);
    to = args->dst->data + args->dst_offset;
  }
  if (n) memmove(to, from, (size_t)n); /* device-to-device copies may overlap */
  return NULL;
}

static plugsdk_error_t* buffer_fill(plugsdk_buffer_fill_args_t* args) {
  CHECK_ARGS(buffer_fill, plugsdk_buffer_fill_args_t, pattern_bytes);
  CHECK_CLIENT(buffer_fill);
  if (!stream_ok(args->client, args->stream)) return INVALID("buffer_fill: bad stream handle");
  if (!is_buffer(args->client, args->buffer)) return INVALID("buffer_fill: bad buffer handle");
  const uint32_t p = args->pattern_bytes;
  if (p != 1 && p != 2 && p != 4 && p != 8) return INVALID("buffer_fill: pattern_bytes is %u, not 1, 2, 4 or 8", p);
  if (args->bytes % p)
    return INVALID("buffer_fill: bytes (%llu) is not a multiple of pattern_bytes (%u)", (unsigned long long)args->bytes,
                   p);
  if (!in_range(args->offset, args->bytes, args->buffer->bytes))
    return RANGE("buffer_fill: %llu bytes at offset %llu pass the end of the %llu-byte buffer",
                 (unsigned long long)args->bytes, (unsigned long long)args->offset,
                 (unsigned long long)args->buffer->bytes);
  unsigned char* d = args->buffer->data + args->offset;
  for (uint64_t i = 0; i < args->bytes; i += p) memcpy(d + i, args->pattern, p);
  return NULL;
}

/* ---- streams and events: work runs at once, so there is never anything to wait for ------------ */

static plugsdk_error_t* stream_create(plugsdk_stream_create_args_t* args) {
  CHECK_ARGS(stream_create, plugsdk_stream_create_args_t, out_stream);
  CHECK_CLIENT(stream_create);
  if (args->device != 0) return INVALID("stream_create: no device %u", args->device);
  plugsdk_stream_t* s = calloc(1, sizeof(*s));
  if (!s) return &out_of_memory;
  s->magic = MB_MAGIC_STREAM;
  s->client = args->client;
  args->client->live_objects++;
  args->out_stream = s;
  return NULL;
}

static plugsdk_error_t* stream_destroy(plugsdk_stream_args_t* args) {
  CHECK_ARGS(stream_destroy, plugsdk_stream_args_t, stream);
  CHECK_CLIENT(stream_destroy);
  if (!is_stream(args->client, args->stream)) return INVALID("stream_destroy: bad stream handle");
  args->stream->magic = MB_MAGIC_DEAD;
  free(args->stream);
  args->client->live_objects--;
  return NULL;
}

static plugsdk_error_t* stream_synchronize(plugsdk_stream_args_t* args) {
  CHECK_ARGS(stream_synchronize, plugsdk_stream_args_t, stream);
  CHECK_CLIENT(stream_synchronize);
  if (!is_stream(args->client, args->stream)) return INVALID("stream_synchronize: bad stream handle");
  return NULL; /* launch reports its errors itself: nothing is ever pending */
}

static plugsdk_error_t* event_create(plugsdk_event_args_t* args) {
  CHECK_ARGS(event_create, plugsdk_event_args_t, out_event);
  CHECK_CLIENT(event_create);
  plugsdk_event_t* e = calloc(1, sizeof(*e));
  if (!e) return &out_of_memory;
  e->magic = MB_MAGIC_EVENT;
  e->client = args->client;
  args->client->live_objects++;
  args->out_event = e;
  return NULL;
}

/* record (event, stream), wait (stream waits for event), synchronize (event) and destroy
 * (event) share their checks. */
static plugsdk_error_t* event_check(plugsdk_event_args_t* args, const char* fn, bool needs_stream) {
  if (!args) return INVALID("%s: args is NULL", fn);
  if (args->struct_size < PLUGSDK_STRUCT_SIZE(plugsdk_event_args_t, event))
    return INVALID("%s: args->struct_size is %zu, too small", fn, args->struct_size);
  if (!args->client || args->client->magic != MB_MAGIC_CLIENT) return INVALID("%s: bad client handle", fn);
  if (!is_event(args->client, args->event)) return INVALID("%s: bad event handle", fn);
  if (needs_stream && !is_stream(args->client, args->stream)) return INVALID("%s: bad stream handle", fn);
  return NULL;
}

static plugsdk_error_t* event_record(plugsdk_event_args_t* args) { return event_check(args, "event_record", true); }
static plugsdk_error_t* event_wait(plugsdk_event_args_t* args) { return event_check(args, "event_wait", true); }
static plugsdk_error_t* event_synchronize(plugsdk_event_args_t* args) {
  return event_check(args, "event_synchronize", false);
}

static plugsdk_error_t* event_destroy(plugsdk_event_args_t* args) {
  plugsdk_error_t* e = event_check(args, "event_destroy", false);
  if (e) return e;
  args->event->magic = MB_MAGIC_DEAD;
  free(args->event);
  args->client->live_objects--;
  return NULL;
}

/* ---- compile and launch ------------------------------------------------------------------------ */

static plugsdk_error_t* compile_kernel(plugsdk_compile_kernel_args_t* args) {
  CHECK_ARGS(compile_kernel, plugsdk_compile_kernel_args_t, out_executable);
  CHECK_CLIENT(compile_kernel);
  if (args->device != 0) return INVALID("compile_kernel: no device %u", args->device);
  if (!args->kernel) return INVALID("compile_kernel: kernel is NULL");
  plugsdk_executable_t* exe = NULL;
  plugsdk_error_t* e = mb_compile(args->kernel, args->options, &exe);
  if (e) return e;
  exe->client = args->client;
  args->client->live_objects++;
  args->out_executable = exe;
  return NULL;
}

static plugsdk_error_t* compile_library(plugsdk_compile_library_args_t* args) {
  CHECK_ARGS(compile_library, plugsdk_compile_library_args_t, out_executable);
  CHECK_CLIENT(compile_library);
  if (args->device != 0) return INVALID("compile_library: no device %u", args->device);
  plugsdk_executable_t* exe = NULL;
  plugsdk_error_t* e = mb_compile_library(args, args->client->library_ops, &exe);
  if (e) return e;
  exe->client = args->client;
  args->client->live_objects++;
  args->out_executable = exe;
  return NULL;
}

static bool is_executable(const plugsdk_client_t* c, const plugsdk_executable_t* x) {
  return x && x->magic == MB_MAGIC_EXECUTABLE && x->client == c;
}

static plugsdk_error_t* executable_destroy(plugsdk_executable_destroy_args_t* args) {
  CHECK_ARGS(executable_destroy, plugsdk_executable_destroy_args_t, executable);
  CHECK_CLIENT(executable_destroy);
  if (!is_executable(args->client, args->executable)) return INVALID("executable_destroy: bad executable handle");
  mb_executable_free(args->executable);
  args->client->live_objects--;
  return NULL;
}

static plugsdk_error_t* executable_log(plugsdk_executable_log_args_t* args) {
  CHECK_ARGS(executable_log, plugsdk_executable_log_args_t, out_log);
  CHECK_CLIENT(executable_log);
  if (!is_executable(args->client, args->executable)) return INVALID("executable_log: bad executable handle");
  args->out_log = "";
  return NULL;
}

enum { MB_MAX_STACK_ARGS = 16 }; /* kernels with more arguments allocate their tables */

/* A library call: NULL buffers are passed on (absent inputs, output 0 under an epilogue), and
 * library.c says where they are not allowed. */
static plugsdk_error_t* launch_library(const plugsdk_launch_args_t* args, const plugsdk_executable_t* x) {
  const size_t nb = mb_library_num_buffers(x->library), ns = mb_library_num_symbols(x->library);
  if (args->num_buffers != nb)
    return INVALID("launch: library call %s takes %zu buffers, got %zu", x->name, nb, args->num_buffers);
  if (args->num_symbols != ns)
    return INVALID("launch: library call %s takes %zu symbol values, got %zu", x->name, ns, args->num_symbols);
  if (nb && !args->buffers) return INVALID("launch: buffers is NULL");
  if (ns && !args->symbol_values) return INVALID("launch: symbol_values is NULL");
  unsigned char** bases = calloc(nb + 1, sizeof(*bases));
  uint64_t* bytes = calloc(nb + 1, sizeof(*bytes));
  plugsdk_error_t* e = NULL;
  if (!bases || !bytes) e = &out_of_memory;
  for (size_t i = 0; i < nb && !e; ++i) {
    const plugsdk_buffer_t* b = args->buffers[i];
    const uint64_t off = args->offsets ? args->offsets[i] : 0;
    if (!b) continue;
    if (!is_buffer(args->client, b))
      e = INVALID("launch: library call %s: bad buffer handle for buffer %zu", x->name, i);
    else if (off > b->bytes)
      e = RANGE("launch: library call %s: offset %llu of buffer %zu passes the end of its %llu-byte buffer", x->name,
                (unsigned long long)off, i, (unsigned long long)b->bytes);
    else {
      bases[i] = b->data + off;
      bytes[i] = b->bytes - off;
    }
  }
  if (!e) e = mb_library_run(x, bases, bytes, args->symbol_values);
  free(bases);
  free(bytes);
  return e;
}

static plugsdk_error_t* launch(plugsdk_launch_args_t* args) {
  CHECK_ARGS(launch, plugsdk_launch_args_t, symbol_values);
  CHECK_CLIENT(launch);
  if (!stream_ok(args->client, args->stream)) return INVALID("launch: bad stream handle");
  const plugsdk_executable_t* x = args->executable;
  if (!is_executable(args->client, x)) return INVALID("launch: bad executable handle");
  if (x->library) return launch_library(args, x);
  if (args->num_buffers != x->num_args)
    return INVALID("launch: kernel @%s takes %zu buffers, got %zu", x->name, x->num_args, args->num_buffers);
  if (args->num_symbols != x->num_symbols)
    return INVALID("launch: kernel @%s takes %zu symbol values, got %zu", x->name, x->num_symbols, args->num_symbols);
  if (x->num_args && !args->buffers) return INVALID("launch: buffers is NULL");
  if (x->num_symbols && !args->symbol_values) return INVALID("launch: symbol_values is NULL");

  unsigned char* base_store[MB_MAX_STACK_ARGS];
  int64_t count_store[MB_MAX_STACK_ARGS];
  unsigned char** bases = base_store;
  int64_t* counts = count_store;
  if (x->num_args > MB_MAX_STACK_ARGS) {
    bases = malloc(x->num_args * sizeof(*bases));
    counts = malloc(x->num_args * sizeof(*counts));
    if (!bases || !counts) {
      free(bases);
      free(counts);
      return &out_of_memory;
    }
  }
  plugsdk_error_t* e = NULL;
  for (size_t i = 0; i < x->num_args && !e; ++i) {
    const plugsdk_buffer_t* b = args->buffers[i];
    const uint64_t off = args->offsets ? args->offsets[i] : 0;
    if (!is_buffer(args->client, b))
      e = INVALID("launch: kernel @%s: bad buffer handle for argument %%%s", x->name, x->args[i].name);
    else if (off > b->bytes)
      e = RANGE("launch: kernel @%s: offset %llu of argument %%%s passes the end of its %llu-byte buffer", x->name,
                (unsigned long long)off, x->args[i].name, (unsigned long long)b->bytes);
    else {
      bases[i] = b->data + off;
      counts[i] = (int64_t)((b->bytes - off) / mb_dtype_bytes(x->args[i].dtype));
    }
  }
  if (!e) e = mb_run(x, bases, counts, args->symbol_values);
  if (bases != base_store) {
    free(bases);
    free(counts);
  }
  return e;
}

/* ---- the entry point -------------------------------------------------------------------------- */

static const plugsdk_api_t api = {
    .struct_size = sizeof(plugsdk_api_t),
    .extension = NULL,
    .abi_major = 1,
    .abi_minor = 0,
    .plugin_name = MB_PLUGIN_NAME,
    .plugin_version = "0.2 (the plugsdk sample backend: a kernel interpreter with matmul, convolution and sdpa)",
    .error_destroy = error_destroy,
    .error_info = error_info,
    .client_create = client_create,
    .client_destroy = client_destroy,
    .device_count = device_count,
    .device_info = device_info,
    .buffer_allocate = buffer_allocate,
    .buffer_free = buffer_free,
    .buffer_copy = buffer_copy,
    .buffer_fill = buffer_fill,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .stream_synchronize = stream_synchronize,
    .event_create = event_create,
    .event_record = event_record,
    .event_wait = event_wait,
    .event_synchronize = event_synchronize,
    .event_destroy = event_destroy,
    .compile_kernel = compile_kernel,
    .compile_library = compile_library,
    .executable_destroy = executable_destroy,
    .executable_log = executable_log,
    .launch = launch,
    .compile_subgraph = NULL, /* takes_subgraphs is false */
};

PLUGSDK_EXPORT const plugsdk_api_t* plugsdk_plugin_init(plugsdk_init_args_t* args) {
  if (!args || args->struct_size < PLUGSDK_STRUCT_SIZE(plugsdk_init_args_t, out_refusal)) return NULL;
  if (args->core_abi_major != PLUGSDK_ABI_VERSION_MAJOR) {
    args->out_refusal = "the minimal backend implements ABI 1.0 and needs a core of ABI major version 1";
    return NULL;
  }
  return &api;
}
