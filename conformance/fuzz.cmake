# The graph fuzzer and the minimizer (docs/conformance.md, "The graph fuzzer and the
# minimizer"): the fuzz tier inside plugsdk-conformance, the plugsdk-fuzz tool, and the
# minimizer's unit tests. Included from conformance/CMakeLists.txt.
target_sources(plugsdk_conformance PRIVATE runner/fuzz_cases.cc runner/fuzz_check.cc runner/fuzz_graph.cc
  runner/minimize.cc)

add_executable(plugsdk_fuzz runner/fuzz_main.cc runner/fuzz_check.cc runner/fuzz_graph.cc runner/minimize.cc
  runner/check.cc)
set_target_properties(plugsdk_fuzz PROPERTIES OUTPUT_NAME plugsdk-fuzz)
target_link_libraries(plugsdk_fuzz PRIVATE plugsdk_core plugsdk_warnings)
install(TARGETS plugsdk_fuzz RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

if(PLUGSDK_BUILD_TESTS)
  # Plugin-free: the minimizer against synthetic failure predicates, the generator against
  # the core's parser and verifier.
  add_executable(conformance_fuzz_tests runner/minimize_test.cc runner/fuzz_graph_test.cc runner/fuzz_check_test.cc
    runner/minimize.cc runner/fuzz_graph.cc runner/fuzz_check.cc runner/check.cc)
  target_link_libraries(conformance_fuzz_tests PRIVATE plugsdk_core plugsdk_warnings GTest::gtest_main)
  gtest_discover_tests(conformance_fuzz_tests DISCOVERY_MODE PRE_TEST)
endif()
