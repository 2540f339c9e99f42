# Installation: headers, the libraries a production engine links, and a package config so that
# find_package(seqby) provides seqby::core, seqby::broker, seqby::runtime, seqby::redis and
# seqby::properties. Everything a consumer needs is in the component `seqby_dev`
# (cmake --install build --component seqby_dev); the seqby command is installed besides. The
# fixtures of seqby's own tests (seqby::testing: the `record` handler and the known-broken
# variants) and the simulator that runs them (seqby::sim: a SimCase names its variant) are a
# component of their own, `seqby_testing`, with their own export file: a production install
# never ships them.
include(CMakePackageConfigHelpers)

set(SEQBY_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/seqby)
set(SEQBY_EXPORTED_LIBRARIES seqby_core seqby_broker seqby_runtime seqby_redis seqby_properties)
set(SEQBY_TESTING_LIBRARIES seqby_testing seqby_sim)

foreach(lib IN LISTS SEQBY_EXPORTED_LIBRARIES SEQBY_TESTING_LIBRARIES)
  # Installed as seqby::core, seqby::redis, ...: the names the build tree's aliases use.
  string(REPLACE "seqby_" "" short ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${short})
  # The public headers use C++20 coroutines: consumers compile as C++20 at least.
  get_target_property(type ${lib} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_compile_features(${lib} INTERFACE cxx_std_20)
  else()
    target_compile_features(${lib} PUBLIC cxx_std_20)
  endif()
endforeach()

install(TARGETS ${SEQBY_EXPORTED_LIBRARIES}
  EXPORT seqbyTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT seqby_dev
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT seqby_dev)

foreach(include_dir core/include adapters/include properties/include)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/${include_dir}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT seqby_dev
    FILES_MATCHING PATTERN "*.h")
endforeach()

install(TARGETS ${SEQBY_TESTING_LIBRARIES}
  EXPORT seqbyTestingTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT seqby_testing
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT seqby_testing)
foreach(include_dir testing/include sim/include)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/${include_dir}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT seqby_testing
    FILES_MATCHING PATTERN "*.h")
endforeach()
install(EXPORT seqbyTestingTargets
  NAMESPACE seqby::
  FILE seqbyTestingTargets.cmake
  DESTINATION ${SEQBY_INSTALL_CMAKEDIR} COMPONENT seqby_testing)

install(EXPORT seqbyTargets
  NAMESPACE seqby::
  FILE seqbyTargets.cmake
  DESTINATION ${SEQBY_INSTALL_CMAKEDIR} COMPONENT seqby_dev)

configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/seqbyConfig.cmake.in
  ${CMAKE_BINARY_DIR}/seqbyConfig.cmake
  INSTALL_DESTINATION ${SEQBY_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/seqbyConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)  # 0.x: a minor release may change the API
install(FILES ${CMAKE_BINARY_DIR}/seqbyConfig.cmake ${CMAKE_BINARY_DIR}/seqbyConfigVersion.cmake
  DESTINATION ${SEQBY_INSTALL_CMAKEDIR} COMPONENT seqby_dev)
