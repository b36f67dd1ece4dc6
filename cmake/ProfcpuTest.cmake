# profcpu_unit_test(NAME SOURCES... LIBS ...): a gtest binary registered with ctest,
# labelled "unit" so scripts/test.sh can run the unit tests alone under sanitizers.
function(profcpu_unit_test name)
  if(NOT PROFCPU_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS unit)
endfunction()
