# `cmake --install`: the SDK header, the core library and its headers, the CLI, the shipped
# plugins, and a CMake package so out-of-tree code finds it all with find_package(plugsdk):
#   plugsdk::sdk   the C ABI header (plugin authors need nothing else)
#   plugsdk::core  the core library (to embed the compiler in a C++ program)
# Layout under the prefix:
#   include/plugsdk/plugsdk.h            the ABI      include/plugsdk/core/...  core headers
#   lib/libplugsdk_core.a                lib/plugsdk/plugins/libplugsdk_*.so
#   bin/plugsdk                          lib/cmake/plugsdk/plugsdkConfig.cmake
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PLUGSDK_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/plugsdk)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/sdk/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/plugsdk/core
  FILES_MATCHING PATTERN "*.h" PATTERN "tests" EXCLUDE PATTERN "golden" EXCLUDE)

set_target_properties(plugsdk_sdk PROPERTIES EXPORT_NAME sdk)
set_target_properties(plugsdk_core PROPERTIES EXPORT_NAME core)
install(TARGETS plugsdk_sdk plugsdk_core EXPORT plugsdkTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS plugsdk_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ${PLUGSDK_SHIPPED_PLUGINS} LIBRARY DESTINATION ${PLUGSDK_INSTALL_PLUGINDIR})
install(EXPORT plugsdkTargets NAMESPACE plugsdk:: DESTINATION ${PLUGSDK_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/plugsdkConfig.cmake.in
  ${PROJECT_BINARY_DIR}/plugsdkConfig.cmake INSTALL_DESTINATION ${PLUGSDK_INSTALL_CMAKEDIR}
  PATH_VARS PLUGSDK_INSTALL_PLUGINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/plugsdkConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/plugsdkConfig.cmake ${PROJECT_BINARY_DIR}/plugsdkConfigVersion.cmake
  DESTINATION ${PLUGSDK_INSTALL_CMAKEDIR})
