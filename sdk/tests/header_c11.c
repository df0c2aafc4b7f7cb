/* Compiles the ABI header as strict C11 (see sdk/CMakeLists.txt) and checks its layout rules. */
#include "plugsdk/plugsdk.h"

_Static_assert(offsetof(plugsdk_api_t, struct_size) == 0, "struct_size comes first");
_Static_assert(offsetof(plugsdk_init_args_t, struct_size) == 0, "struct_size comes first");
_Static_assert(offsetof(plugsdk_kernel_t, struct_size) == 0, "struct_size comes first");
_Static_assert(PLUGSDK_API_SIZE_V1_0 <= sizeof(plugsdk_api_t), "the 1.0 table fits");
_Static_assert(PLUGSDK_OP_COUNT_V1_0 == 47, "47 elementwise ops in ABI 1.0");

int main(void) {
  plugsdk_init_args_t args = {sizeof(plugsdk_init_args_t), NULL, PLUGSDK_ABI_VERSION_MAJOR, PLUGSDK_ABI_VERSION_MINOR,
                              NULL};
  return args.core_abi_major == 1 ? 0 : 1;
}
