# Fuzz targets (README.md "Fuzzing"): each fuzz/<name>.cpp defines LLVMFuzzerTestOneInput and has
# a committed corpus in fuzz/corpus/<name>/. Two builds of the same sources:
# - The ordinary build (SEQBY_BUILD_TESTS): each target is linked with fuzz/replay_main.cpp as
#   fuzz_replay_<name> and registered as the ctest test fuzz_replay_<name> (label unit), which
#   replays its corpus, so `make test` replays every corpus without clang.
# - SEQBY_FUZZ=ON (clang only; `make fuzz`): every library is compiled with
#   -fsanitize=fuzzer-no-link,address,undefined and each target links libFuzzer's main as
#   fuzz_<name>; the tests, benchmarks and the seqby command are not built.
# Included before the libraries are declared (so that the sanitizer flags reach them); the
# targets are declared at the end of the top directory, once the libraries exist.
option(SEQBY_FUZZ "Build the libFuzzer targets of fuzz/ (clang only)" OFF)
if(SEQBY_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "SEQBY_FUZZ needs clang (libFuzzer): configure with CXX=clang++")
  endif()
  # -fno-sanitize=function: clang 14 cannot emit its prologue data for coroutine functions split
  # under coverage instrumentation ("Cannot represent a difference across sections").
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=function
                      -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  set(SEQBY_BUILD_TESTS OFF)
  set(SEQBY_BUILD_BENCH OFF)
  set(SEQBY_BUILD_APPS OFF)
endif()

set(SEQBY_FUZZ_TARGETS naming json_object history_jsonl journal case_file exec_protocol redis_reply)
# What each target links: the libraries of the code it fuzzes.
set(SEQBY_FUZZ_LIBS_naming seqby_core)
set(SEQBY_FUZZ_LIBS_json_object seqby_core nlohmann_json::nlohmann_json)
set(SEQBY_FUZZ_LIBS_history_jsonl seqby_properties)
set(SEQBY_FUZZ_LIBS_journal seqby_redis seqby_properties)
set(SEQBY_FUZZ_LIBS_case_file seqby_scenarios)
# The fuzz build compiles only what case_io.cpp needs (a link closure), not all of scenarios/ and
# sim/: the same sources, without the hour the rest takes to instrument on a shared machine.
set(SEQBY_FUZZ_SOURCES_case_file scenarios/src/case_io.cpp sim/src/faults.cpp sim/src/sim_case.cpp
    sim/src/rng.cpp sim/src/sim_runtime.cpp sim/src/scheduler.cpp testing/src/variant.cpp)
set(SEQBY_FUZZ_LIBS_exec_protocol seqby_runtime)
set(SEQBY_FUZZ_LIBS_redis_reply seqby_redis)

function(seqby_fuzz_targets)
  if(NOT SEQBY_FUZZ AND NOT SEQBY_BUILD_TESTS)
    return()
  endif()
  foreach(name IN LISTS SEQBY_FUZZ_TARGETS)
    if(SEQBY_FUZZ)
      set(target fuzz_${name})
      add_executable(${target} ${CMAKE_SOURCE_DIR}/fuzz/${name}.cpp)
      target_link_options(${target} PRIVATE -fsanitize=fuzzer)
      if(SEQBY_FUZZ_SOURCES_${name})
        list(TRANSFORM SEQBY_FUZZ_SOURCES_${name} PREPEND ${CMAKE_SOURCE_DIR}/)
        target_sources(${target} PRIVATE ${SEQBY_FUZZ_SOURCES_${name}})
        target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/scenarios/src
          ${CMAKE_SOURCE_DIR}/scenarios/include ${CMAKE_SOURCE_DIR}/sim/include
          ${CMAKE_SOURCE_DIR}/testing/include ${CMAKE_SOURCE_DIR}/adapters/include
          ${CMAKE_SOURCE_DIR}/properties/include)
        set(SEQBY_FUZZ_LIBS_${name} seqby_core nlohmann_json::nlohmann_json)
      endif()
    else()
      set(target fuzz_replay_${name})
      add_executable(${target} ${CMAKE_SOURCE_DIR}/fuzz/${name}.cpp
                     ${CMAKE_SOURCE_DIR}/fuzz/replay_main.cpp)
      add_test(NAME fuzz_replay_${name}
               COMMAND ${target} ${CMAKE_SOURCE_DIR}/fuzz/corpus/${name})
      set_tests_properties(fuzz_replay_${name} PROPERTIES LABELS unit)
    endif()
    # resp.h reads replies as the hiredis links do (adapters/src/hiredis/hiredis_common.h).
    target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/fuzz
                               ${CMAKE_SOURCE_DIR}/adapters/src/hiredis)
    target_link_libraries(${target} PRIVATE ${SEQBY_FUZZ_LIBS_${name}})
    seqby_warnings(${target})
  endforeach()
endfunction()
cmake_language(DEFER CALL seqby_fuzz_targets)
