# PLUGSDK_SANITIZE=ON: AddressSanitizer + UndefinedBehaviorSanitizer on every target,
# with UB reported as an error (no silent recovery).
if(PLUGSDK_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# PLUGSDK_FUZZ=ON: every target gets the fuzzer's coverage instrumentation plus ASan/UBSan.
if(PLUGSDK_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
