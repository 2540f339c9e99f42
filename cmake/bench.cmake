# Benchmarks (Google Benchmark): every bench/*.cpp is its own executable bench_<name>.
# Benchmarks are never part of make test; run them with make bench.
find_package(benchmark QUIET)
if(benchmark_FOUND)
  file(GLOB SEQBY_BENCH_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bench/*.cpp)
  foreach(src IN LISTS SEQBY_BENCH_SOURCES)
    get_filename_component(name ${src} NAME_WE)
    add_executable(bench_${name} ${src})
    target_link_libraries(bench_${name} PRIVATE seqby_scenarios benchmark::benchmark)
    seqby_warnings(bench_${name})
    seqby_link_tcmalloc(bench_${name})
    if(name STREQUAL "lua_script_closures")  # runs the embedded scripts on a Lua state of its own
      target_link_libraries(bench_${name} PRIVATE PkgConfig::LUA51)
    endif()
    # The unit test of their command lines runs them (bench/tests/unit/bench_command_lines.cpp).
    if(TARGET unit_bench_command_lines)
      add_dependencies(unit_bench_command_lines bench_${name})
    endif()
  endforeach()
  if(TARGET unit_bench_command_lines)
    target_compile_definitions(unit_bench_command_lines PRIVATE SEQBY_BENCH_BUILT)
  endif()
endif()
