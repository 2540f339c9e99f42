# Test suites. Every file <folder>/tests/<label>/<name>.cpp is its own GoogleTest executable,
# named <label>_<name>, whose tests carry the ctest label <label>: unit, property, sim, redis or
# cluster (each cluster test starts its own Redis Cluster:
# scenarios/include/seqby/scenarios/redis_cluster.h).
# Tests labelled redis read SEQBY_TEST_REDIS_URL when set (make test starts one server for the
# whole label) and otherwise start their own redis-server on a free loopback port.
find_package(GTest REQUIRED)
find_package(rapidcheck REQUIRED)
include(GoogleTest)

file(GLOB SEQBY_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/*/tests/*/*.cpp)
file(GLOB SEQBY_TEST_SUPPORT CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/support/*.cpp)
if(SEQBY_TEST_SUPPORT)
  add_library(seqby_test_support STATIC ${SEQBY_TEST_SUPPORT})
  target_include_directories(seqby_test_support PUBLIC ${CMAKE_SOURCE_DIR}/tests/support)
  target_link_libraries(seqby_test_support PUBLIC seqby_scenarios GTest::gtest)
  seqby_warnings(seqby_test_support)
else()
  add_library(seqby_test_support INTERFACE)
  target_include_directories(seqby_test_support INTERFACE ${CMAKE_SOURCE_DIR}/tests/support)
  target_link_libraries(seqby_test_support INTERFACE seqby_scenarios)
endif()

# How the tests' own files compile. Compiling them was most of a clean build (about 1,280 of
# 2,740 CPU seconds; the libraries and seqby keep the build type's flags): line tables and -O1
# take it to a little over half, and the code they test is the libraries', built as configured.
# Set to "" for the build type's flags (a debugger's locals in a test body).
set(SEQBY_TEST_CXX_FLAGS "-O1 -g1" CACHE STRING "Extra compile flags of the test files")
separate_arguments(seqby_test_flags UNIX_COMMAND "${SEQBY_TEST_CXX_FLAGS}")

# The standard and third-party headers every test file parses (GoogleTest, nlohmann/json, the
# standard library: about 2 of a test file's 4-5 s of parsing), compiled once into a header of
# seqby_test_pch and reused by every test. Only headers outside seqby: a change to seqby's own
# headers rebuilds the tests that include them, not every test.
option(SEQBY_TEST_PCH "Precompile the tests' common third-party headers" ON)
set(seqby_test_pch_headers <algorithm> <chrono> <cstdint> <filesystem> <fstream> <functional>
    <map> <memory> <optional> <set> <sstream> <string> <thread> <vector>
    <gtest/gtest.h> <nlohmann/json.hpp>)
function(seqby_test_target_options target)
  target_link_libraries(${target} PRIVATE seqby_test_support seqby_scenarios
                        rapidcheck rapidcheck_gtest GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${target} PRIVATE
    SEQBY_SOURCE_DIR="${CMAKE_SOURCE_DIR}" SEQBY_BINARY_DIR="${CMAKE_BINARY_DIR}")
  target_compile_options(${target} PRIVATE ${seqby_test_flags})
  seqby_warnings(${target})
endfunction()
if(SEQBY_TEST_PCH)
  file(WRITE ${CMAKE_BINARY_DIR}/seqby_test_pch.cpp "// The tests' precompiled headers.\n")
  # An executable like the tests (its main is gtest_main's), so that it compiles exactly as they
  # do (-fPIE among the rest): GCC ignores a precompiled header made with other settings.
  add_executable(seqby_test_pch ${CMAKE_BINARY_DIR}/seqby_test_pch.cpp)
  seqby_test_target_options(seqby_test_pch)
  target_precompile_headers(seqby_test_pch PRIVATE ${seqby_test_pch_headers})
endif()

foreach(src IN LISTS SEQBY_TEST_SOURCES)
  get_filename_component(label_dir ${src} DIRECTORY)
  get_filename_component(label ${label_dir} NAME)
  get_filename_component(name ${src} NAME_WE)
  set(target ${label}_${name})
  add_executable(${target} ${src})
  seqby_test_target_options(${target})
  if(SEQBY_TEST_PCH)
    target_precompile_headers(${target} REUSE_FROM seqby_test_pch)
  endif()
  if(name MATCHES "^observe_")
    target_link_libraries(${target} PRIVATE seqby_observe)  # the worker's metrics and log format
  endif()
  if(name MATCHES "^(cli_|two_instance_)" AND TARGET seqby)
    add_dependencies(${target} seqby)  # these tests run the built seqby command
  endif()
  gtest_discover_tests(${target} PROPERTIES LABELS ${label} DISCOVERY_TIMEOUT 60)
endforeach()

# The installed package works for a consumer: install into a temporary prefix, then configure,
# build and run tests/consumer against it (find_package(seqby), seqby::core, seqby::redis).
add_test(NAME install_consumer
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DWORK_DIR=${CMAKE_BINARY_DIR}/consumer-test -P ${CMAKE_SOURCE_DIR}/tests/consumer/run.cmake)
set_tests_properties(install_consumer PROPERTIES LABELS unit)

# Every C++ file matches the repository's .clang-format (make format rewrites them).
add_test(NAME format_check COMMAND ${CMAKE_SOURCE_DIR}/scripts/check-format)
set_tests_properties(format_check PROPERTIES LABELS unit)

# The drawn structure: each library includes only the libraries below it (docs/ARCHITECTURE.md).
add_test(NAME layer_check COMMAND ${CMAKE_SOURCE_DIR}/scripts/check-layers)
set_tests_properties(layer_check PROPERTIES LABELS unit)

# The bounded simulation campaign of make test: 200 seeds of the default case with swarm faults,
# every property checked on every run, through the command line exactly as CI users run it.
# A failing seed prints its replay command. Longer campaigns are `seqby sim --seeds A..B`.
if(TARGET seqby)
  add_test(NAME sim_campaign_200_seeds
    COMMAND seqby sim --seeds 0..199 --jobs 2
            --save-failures ${CMAKE_BINARY_DIR}/failures)
  set_tests_properties(sim_campaign_200_seeds PROPERTIES LABELS sim TIMEOUT 1200)
  # Same seed, same build => byte-identical history (DESIGN.md section 2).
  add_test(NAME sim_seed_42_is_deterministic COMMAND seqby sim --seed 42 --check-determinism)
  set_tests_properties(sim_seed_42_is_deterministic PROPERTIES LABELS sim)
  # The same campaign under the cluster key layout (docs/ARCHITECTURE.md "The cluster key
  # layout"): every script keeps to one hash slot, a publish is three steps, acquire and renew
  # go in per-slot batches, and the same checker judges every run.
  add_test(NAME sim_cluster_campaign_200_seeds
    COMMAND seqby sim --key-layout cluster --seeds 0..199 --jobs 2
            --save-failures ${CMAKE_BINARY_DIR}/failures-cluster)
  set_tests_properties(sim_cluster_campaign_200_seeds PROPERTIES LABELS sim TIMEOUT 1200)
  # Seed 49 failed before records of a multi-script call were sorted to their own script.
  add_test(NAME sim_cluster_seed_49_is_deterministic
    COMMAND seqby sim --key-layout cluster --seed 49 --check-determinism)
  set_tests_properties(sim_cluster_seed_49_is_deterministic PROPERTIES LABELS sim)
endif()

# The mutation catalog of scripts/mutate (make mutate, never part of make test) parses and each
# entry applies exactly once to this tree, so it cannot rot silently; a bad catalog exits 2.
add_test(NAME mutate_catalog COMMAND python3 ${CMAKE_SOURCE_DIR}/mutate/test_catalog.py)
set_tests_properties(mutate_catalog PROPERTIES LABELS unit)
