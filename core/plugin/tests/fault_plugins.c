/*
 * Plugins that load fine and then misbehave (or come from the future), for the fault and
 * compatibility tests of the core's device layer. One library per variant, selected by the
 * macro it is compiled with (core/CMakeLists.txt):
 *   FAULT_ERRORS       every call after client_create returns an error with a message
 *   FAULT_NULL_HANDLES client_create succeeds but hands back a NULL client
 *   FAULT_NULL_BUFFER  buffer_allocate succeeds but hands back a NULL buffer
 *   FAULT_LAUNCH       everything works except launch, which fails with a message
 *   ONE_THREAD         fails any call that enters while another call on the client is still
 *                      inside (each call lingers a little): checks the core keeps the ABI's
 *                      one-thread-per-client promise
 *   FAULT_FREE         buffer_free fails (the conformance suite must notice)
 *   FAULT_HANG         a launch with valid arguments never returns (the conformance runner's
 *                      per-case time limit must fail that case, not the run)
 *   FAULT_CRASH        a launch with valid arguments raises SIGSEGV (the runner must fail that
 *                      case and carry on in a new worker process)
 *   NEWER_MINOR        a correct plugin of ABI 1.<current + 1>: a bigger table with a function
 *                      this core does not know, and a bigger device_info it must not overrun
 * All variants own one host device with malloc memory; kernels compile to nothing.
 */
#include <stddef.h>
#include <stdlib.h>
#if defined(ONE_THREAD)
#include <stdatomic.h>
#include <time.h>
#endif
#if defined(FAULT_HANG)
#include <unistd.h>
#endif
#if defined(FAULT_CRASH)
#include <signal.h>
#endif
#include <string.h>

#include "plugsdk/plugsdk.h"

struct plugsdk_error {
  uint32_t code;
  const char* message;
};
struct plugsdk_client {
  int unused;
};
struct plugsdk_buffer {
  uint64_t bytes;
  unsigned char* data;
};
struct plugsdk_stream {
  int unused;
};
struct plugsdk_executable {
  int unused;
};

static plugsdk_error_t* fail(uint32_t code, const char* message) {
  plugsdk_error_t* e = (plugsdk_error_t*)malloc(sizeof(*e));
  if (!e) return NULL;
  e->code = code;
  e->message = message;
  return e;
}

#if defined(FAULT_ERRORS)
#define MAYBE_FAIL(call) return fail(PLUGSDK_CODE_INTERNAL, call ": the device fell over (on purpose)")
#elif defined(ONE_THREAD)
static atomic_int inside;
/* Enter: fail if another call is inside; linger so that an overlap is likely to be seen. */
#define MAYBE_FAIL(call)                                                                             \
  do {                                                                                               \
    if (atomic_fetch_add(&inside, 1) != 0) {                                                         \
      atomic_fetch_sub(&inside, 1);                                                                  \
      return fail(PLUGSDK_CODE_INTERNAL, call ": entered while another call was inside the client"); \
    }                                                                                                \
    struct timespec ts = {0, 200000};                                                                \
    nanosleep(&ts, NULL);                                                                            \
    atomic_fetch_sub(&inside, 1);                                                                    \
  } while (0)
#else
#define MAYBE_FAIL(call) (void)0
#endif

static plugsdk_error_t* error_destroy(plugsdk_error_destroy_args_t* a) {
  free(a->error);
  return NULL;
}
static plugsdk_error_t* error_info(plugsdk_error_info_args_t* a) {
  a->out_code = a->error->code;
  a->out_message = a->error->message;
  return NULL;
}
static plugsdk_error_t* client_create(plugsdk_client_create_args_t* a) {
#if defined(FAULT_NULL_HANDLES)
  a->out_client = NULL;
#else
  static plugsdk_client_t the_client;
  a->out_client = &the_client;
#endif
  return NULL;
}
static plugsdk_error_t* client_destroy(plugsdk_client_destroy_args_t* a) {
  (void)a;
  return NULL;
}
static plugsdk_error_t* device_count(plugsdk_device_count_args_t* a) {
  MAYBE_FAIL("device_count");
  a->out_count = 1;
  return NULL;
}

#if defined(NEWER_MINOR)
/* The device_info of a future minor: more fields after the 1.0 ones. */
typedef struct {
  plugsdk_device_info_t v1_0;
  uint64_t future_field_a;
  uint64_t future_field_b;
} device_info_v1_1;
#endif

static plugsdk_error_t* device_info(plugsdk_device_info_args_t* a) {
  MAYBE_FAIL("device_info");
  plugsdk_device_info_t info;
  memset(&info, 0, sizeof(info));
  info.name = "fault0";
  info.dtypes = PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32);
  info.memory_kinds = PLUGSDK_MEMORY_HOST;
#if defined(NEWER_MINOR)
  device_info_v1_1 full;
  memset(&full, 0, sizeof(full));
  full.v1_0 = info;
  full.v1_0.struct_size = sizeof(full);
  full.future_field_a = full.future_field_b = 0xdeadbeefdeadbeefull;
  /* Write only as much as the core's struct holds: what a correct newer plugin does. */
  size_t n = a->info->struct_size < sizeof(full) ? a->info->struct_size : sizeof(full);
  memcpy((char*)a->info + offsetof(plugsdk_device_info_t, name),
         (const char*)&full + offsetof(plugsdk_device_info_t, name), n - offsetof(plugsdk_device_info_t, name));
  a->info->struct_size = n;
#else
  size_t n = a->info->struct_size < sizeof(info) ? a->info->struct_size : sizeof(info);
  memcpy((char*)a->info + offsetof(plugsdk_device_info_t, name),
         (const char*)&info + offsetof(plugsdk_device_info_t, name), n - offsetof(plugsdk_device_info_t, name));
  a->info->struct_size = n;
#endif
  return NULL;
}
static plugsdk_error_t* buffer_allocate(plugsdk_buffer_allocate_args_t* a) {
  MAYBE_FAIL("buffer_allocate");
#if defined(FAULT_NULL_BUFFER)
  a->out_buffer = NULL;
  return NULL;
#else
  plugsdk_buffer_t* b = (plugsdk_buffer_t*)calloc(1, sizeof(*b));
  if (!b) return fail(PLUGSDK_CODE_RESOURCE_EXHAUSTED, "buffer_allocate: out of memory");
  b->bytes = a->bytes;
  b->data = (unsigned char*)malloc(a->bytes ? a->bytes : 1);
  a->out_buffer = b;
  return NULL;
#endif
}
static plugsdk_error_t* buffer_free(plugsdk_buffer_free_args_t* a) {
  if (a->buffer) free(a->buffer->data);
  free(a->buffer);
#if defined(FAULT_FREE)
  /* Two lines, the second tab-indented: a message must reach a report intact (the
   * conformance runner passes it from a worker process through a line protocol). */
  return fail(PLUGSDK_CODE_INTERNAL,
              "buffer_free: the allocator lost track of the buffer (on purpose)\n\tsee the allocator log \\ line 2");
#else
  return NULL;
#endif
}
static plugsdk_error_t* buffer_copy(plugsdk_buffer_copy_args_t* a) {
  MAYBE_FAIL("buffer_copy");
  if (a->kind == PLUGSDK_COPY_HOST_TO_DEVICE) {
    if (a->dst_offset + a->bytes > a->dst->bytes) return fail(PLUGSDK_CODE_OUT_OF_RANGE, "buffer_copy: out of range");
    memcpy(a->dst->data + a->dst_offset, a->host_src, a->bytes);
  } else if (a->kind == PLUGSDK_COPY_DEVICE_TO_HOST) {
    if (a->src_offset + a->bytes > a->src->bytes) return fail(PLUGSDK_CODE_OUT_OF_RANGE, "buffer_copy: out of range");
    memcpy(a->host_dst, a->src->data + a->src_offset, a->bytes);
  } else {
    memmove(a->dst->data + a->dst_offset, a->src->data + a->src_offset, a->bytes);
  }
  return NULL;
}
static plugsdk_error_t* buffer_fill(plugsdk_buffer_fill_args_t* a) {
  MAYBE_FAIL("buffer_fill");
  if (!a->buffer || a->pattern_bytes == 0 || a->pattern_bytes > 8 || a->bytes % a->pattern_bytes ||
      a->offset + a->bytes > a->buffer->bytes)
    return fail(PLUGSDK_CODE_INVALID_ARGUMENT, "buffer_fill: bad arguments");
  for (uint64_t i = 0; i < a->bytes; ++i) a->buffer->data[a->offset + i] = a->pattern[i % a->pattern_bytes];
  return NULL;
}
static plugsdk_stream_t the_stream;
static plugsdk_error_t* stream_create(plugsdk_stream_create_args_t* a) {
  a->out_stream = &the_stream;
  return NULL;
}
static plugsdk_error_t* stream_noop(plugsdk_stream_args_t* a) {
  (void)a;
  return NULL;
}
static plugsdk_error_t* event_unimplemented(plugsdk_event_args_t* a) {
  (void)a;
  return fail(PLUGSDK_CODE_UNIMPLEMENTED, "events: not in this test plugin");
}
static plugsdk_executable_t the_executable;
static plugsdk_error_t* compile_kernel(plugsdk_compile_kernel_args_t* a) {
  a->out_executable = &the_executable;
  return NULL;
}
static plugsdk_error_t* compile_library(plugsdk_compile_library_args_t* a) {
  (void)a;
  return fail(PLUGSDK_CODE_UNIMPLEMENTED, "compile_library: not in this test plugin");
}
static plugsdk_error_t* executable_destroy(plugsdk_executable_destroy_args_t* a) {
  (void)a;
  return NULL;
}
static plugsdk_error_t* executable_log(plugsdk_executable_log_args_t* a) {
  a->out_log = "compiled to nothing (a test plugin)";
  return NULL;
}
static plugsdk_error_t* launch(plugsdk_launch_args_t* a) {
  (void)a;
  MAYBE_FAIL("launch");
#if defined(FAULT_LAUNCH)
  return fail(PLUGSDK_CODE_INTERNAL, "launch: the kernel hit a hardware fault (on purpose)");
#elif defined(FAULT_HANG) || defined(FAULT_CRASH)
  /* Only a real launch misbehaves: the ABI tier's bad-argument calls still get an error. */
  if (!a || a->struct_size < sizeof(*a) || !a->client || !a->executable)
    return fail(PLUGSDK_CODE_INVALID_ARGUMENT, "launch: bad arguments");
#if defined(FAULT_HANG)
  for (;;) sleep(1000); /* a kernel that never finishes (on purpose) */
#else
  raise(SIGSEGV); /* a kernel that takes the process down (on purpose) */
  return NULL;
#endif
#else
  return NULL; /* kernels compile to nothing: outputs keep what was there */
#endif
}

#if defined(NEWER_MINOR)
/* The table of a future minor: 1.0's functions, then one this core has never heard of. */
typedef struct {
  plugsdk_api_t v1_0;
  plugsdk_error_t* (*future_function)(void* args);
} api_v1_1;
static plugsdk_error_t* future_function(void* args) {
  (void)args;
  return NULL;
}
static api_v1_1 table;
#define API (table.v1_0)
#else
static plugsdk_api_t table;
#define API table
#endif

PLUGSDK_EXPORT const plugsdk_api_t* plugsdk_plugin_init(plugsdk_init_args_t* args) {
  if (args->core_abi_major != PLUGSDK_ABI_VERSION_MAJOR) {
    args->out_refusal = "this plugin implements ABI major 1 only";
    return NULL;
  }
  memset(&table, 0, sizeof(table));
  API.struct_size = sizeof(table);
  API.abi_major = PLUGSDK_ABI_VERSION_MAJOR;
  API.abi_minor = PLUGSDK_ABI_VERSION_MINOR;
#if defined(NEWER_MINOR)
  API.abi_minor = PLUGSDK_ABI_VERSION_MINOR + 1;
  table.future_function = future_function;
#endif
  API.plugin_name = "fault";
  API.plugin_version = "test";
  API.error_destroy = error_destroy;
  API.error_info = error_info;
  API.client_create = client_create;
  API.client_destroy = client_destroy;
  API.device_count = device_count;
  API.device_info = device_info;
  API.buffer_allocate = buffer_allocate;
  API.buffer_free = buffer_free;
  API.buffer_copy = buffer_copy;
  API.buffer_fill = buffer_fill;
  API.stream_create = stream_create;
  API.stream_destroy = stream_noop;
  API.stream_synchronize = stream_noop;
  API.event_create = event_unimplemented;
  API.event_record = event_unimplemented;
  API.event_wait = event_unimplemented;
  API.event_synchronize = event_unimplemented;
  API.event_destroy = event_unimplemented;
  API.compile_kernel = compile_kernel;
  API.compile_library = compile_library;
  API.executable_destroy = executable_destroy;
  API.executable_log = executable_log;
  API.launch = launch;
  return &API;
}
