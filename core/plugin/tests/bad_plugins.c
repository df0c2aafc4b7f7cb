/*
 * Purpose-built bad plugins for the loader's fault tests: one shared library per defect,
 * selected by the BAD_* macro it is compiled with (core/CMakeLists.txt builds each).
 */
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "plugsdk/plugsdk.h"

static plugsdk_api_t api;

#if defined(BAD_NO_SYMBOL)
PLUGSDK_EXPORT int not_a_plugsdk_plugin(void) { return 0; }
#else
PLUGSDK_EXPORT const plugsdk_api_t* plugsdk_plugin_init(plugsdk_init_args_t* args) {
#if defined(BAD_REFUSES)
  args->out_refusal = "this plugin needs core ABI 1.7 or newer";
  return NULL;
#elif defined(BAD_CRASHES)
  (void)args;
  raise(SIGSEGV);
  return NULL;
#elif defined(BAD_EXITS)
  (void)args;
  exit(5); /* ends whatever process loads it: the probe must take this for a crash */
#else
  (void)args;
  memset(&api, 0, sizeof(api));
  api.struct_size = sizeof(api);
  api.abi_major = PLUGSDK_ABI_VERSION_MAJOR;
  api.abi_minor = PLUGSDK_ABI_VERSION_MINOR;
  api.plugin_name = "bad";
#if defined(BAD_MAJOR2)
  api.abi_major = 2;
#elif defined(BAD_SMALL_TABLE)
  api.struct_size = offsetof(plugsdk_api_t, error_destroy) + sizeof(void*);
#elif defined(BAD_NULL_FUNCTIONS)
  /* a full-size table with every function NULL */
#endif
  return &api;
#endif
}
#endif
