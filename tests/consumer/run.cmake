# Installs the seqby_dev component of a built tree into a fresh prefix, then configures, builds and
# runs tests/consumer against that prefix only. Run as:
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -P tests/consumer/run.cmake
# Fails (non-zero exit) with the failing step's output, or when the consumer prints another line.
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "consumer test: ${name} failed (${status})\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step(install ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component seqby_dev)
# The production install ships no test fixture (seqby::testing is a component of its own): not
# the record handler, not the known-broken variants (seqby/testing/variant.h, nor the old
# seqby/core/variant.h), not the simulator that runs them.
foreach(fixture include/seqby/testing include/seqby/testing/variant.h include/seqby/core/variant.h
        include/seqby/sim include/seqby/sim/sim_redis_engine.h include/seqby/sim/sim_redis_lua.h)
  if(EXISTS ${prefix}/${fixture})
    message(FATAL_ERROR "consumer test: the seqby_dev component installed ${fixture}")
  endif()
endforeach()
file(GLOB_RECURSE fixture_libraries ${prefix}/libseqby_testing* ${prefix}/libseqby_sim*)
if(fixture_libraries)
  message(FATAL_ERROR "consumer test: the seqby_dev component installed ${fixture_libraries}")
endif()
# Only the temporary prefix is searched for seqby: the build tree must not leak into the consumer.
step(configure ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/build
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
     -DCMAKE_BUILD_TYPE=RelWithDebInfo)
step(build ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step(run ${WORK_DIR}/build/seqby_consumer)
set(expected "consumer: partitions=3 error=protocol (not an integer: \"x\")\n")
if(NOT step_output STREQUAL expected)
  message(FATAL_ERROR "consumer test: printed\n${step_output}\nexpected\n${expected}")
endif()
message(STATUS "consumer test: passed: ${step_output}")
