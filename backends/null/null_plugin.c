/*
 * The null backend: a plugin that loads, negotiates the ABI, reports no devices and answers
 * UNIMPLEMENTED to everything else. It is the skeleton to clone for a new backend
 * (backends/null/README.md says how).
 */
#include <stdlib.h>
#include <string.h>

#include "plugsdk/plugsdk.h"

struct plugsdk_error {
  plugsdk_code_t code;
  const char* message; /* static */
};

struct plugsdk_client {
  int unused;
};

static plugsdk_error_t* make_error(plugsdk_code_t code, const char* message) {
  plugsdk_error_t* e = (plugsdk_error_t*)malloc(sizeof(plugsdk_error_t));
  if (!e) return NULL; /* out of memory: nothing better to report */
  e->code = code;
  e->message = message;
  return e;
}

static plugsdk_error_t* unimplemented(void) {
  return make_error(PLUGSDK_CODE_UNIMPLEMENTED, "the null backend implements nothing (it has no devices)");
}

static plugsdk_error_t* error_destroy(plugsdk_error_destroy_args_t* args) {
  free(args->error);
  return NULL;
}

static plugsdk_error_t* error_info(plugsdk_error_info_args_t* args) {
  args->out_code = args->error->code;
  args->out_message = args->error->message;
  return NULL;
}

static plugsdk_error_t* client_create(plugsdk_client_create_args_t* args) {
  args->out_client = (plugsdk_client_t*)calloc(1, sizeof(plugsdk_client_t));
  if (!args->out_client) return make_error(PLUGSDK_CODE_RESOURCE_EXHAUSTED, "out of memory");
  return NULL;
}

static plugsdk_error_t* client_destroy(plugsdk_client_destroy_args_t* args) {
  free(args->client);
  return NULL;
}

static plugsdk_error_t* device_count(plugsdk_device_count_args_t* args) {
  args->out_count = 0;
  args->out_reason = "the null backend has no devices";
  return NULL;
}

#define NULL_UNIMPLEMENTED(fn, type)       \
  static plugsdk_error_t* fn(type* args) { \
    (void)args;                            \
    return unimplemented();                \
  }
NULL_UNIMPLEMENTED(device_info, plugsdk_device_info_args_t)
NULL_UNIMPLEMENTED(buffer_allocate, plugsdk_buffer_allocate_args_t)
NULL_UNIMPLEMENTED(buffer_free, plugsdk_buffer_free_args_t)
NULL_UNIMPLEMENTED(buffer_copy, plugsdk_buffer_copy_args_t)
NULL_UNIMPLEMENTED(buffer_fill, plugsdk_buffer_fill_args_t)
NULL_UNIMPLEMENTED(stream_create, plugsdk_stream_create_args_t)
NULL_UNIMPLEMENTED(stream_destroy, plugsdk_stream_args_t)
NULL_UNIMPLEMENTED(stream_synchronize, plugsdk_stream_args_t)
NULL_UNIMPLEMENTED(event_create, plugsdk_event_args_t)
NULL_UNIMPLEMENTED(event_record, plugsdk_event_args_t)
NULL_UNIMPLEMENTED(event_wait, plugsdk_event_args_t)
NULL_UNIMPLEMENTED(event_synchronize, plugsdk_event_args_t)
NULL_UNIMPLEMENTED(event_destroy, plugsdk_event_args_t)
NULL_UNIMPLEMENTED(compile_kernel, plugsdk_compile_kernel_args_t)
NULL_UNIMPLEMENTED(compile_library, plugsdk_compile_library_args_t)
NULL_UNIMPLEMENTED(executable_destroy, plugsdk_executable_destroy_args_t)
NULL_UNIMPLEMENTED(executable_log, plugsdk_executable_log_args_t)
NULL_UNIMPLEMENTED(launch, plugsdk_launch_args_t)

static const plugsdk_api_t kApi = {
    sizeof(plugsdk_api_t),
    NULL,
    PLUGSDK_ABI_VERSION_MAJOR,
    PLUGSDK_ABI_VERSION_MINOR,
    "null",
    "0.1.0",
    error_destroy,
    error_info,
    client_create,
    client_destroy,
    device_count,
    device_info,
    buffer_allocate,
    buffer_free,
    buffer_copy,
    buffer_fill,
    stream_create,
    stream_destroy,
    stream_synchronize,
    event_create,
    event_record,
    event_wait,
    event_synchronize,
    event_destroy,
    compile_kernel,
    compile_library,
    executable_destroy,
    executable_log,
    launch,
    NULL, /* compile_subgraph */
    NULL, /* buffer_import (1.1): the core copies */
    NULL, /* stream_import (1.2): the core waits for the caller's stream */
    NULL, /* recording_begin (1.9): the core launches every call */
    NULL, /* recording_end */
    NULL, /* recording_launch */
    NULL, /* recording_destroy */
};

PLUGSDK_EXPORT const plugsdk_api_t* plugsdk_plugin_init(plugsdk_init_args_t* args) {
  if (args->core_abi_major != PLUGSDK_ABI_VERSION_MAJOR) {
    args->out_refusal = "the null backend implements ABI major version 1 only";
    return NULL;
  }
  return &kApi;
}
