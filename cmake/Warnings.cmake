# Warning flags for every plugsdk target: -Wall -Wextra everywhere, -Werror in CI.
add_library(plugsdk_warnings INTERFACE)
target_compile_options(plugsdk_warnings INTERFACE -Wall -Wextra -Wno-missing-field-initializers)
if(PLUGSDK_WERROR)
  target_compile_options(plugsdk_warnings INTERFACE -Werror)
endif()
