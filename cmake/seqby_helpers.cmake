# seqby_warnings(target): the project's warning set; warnings are kept at zero.
function(seqby_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
endfunction()

# seqby_library(name src_dir include_dir [extra sources...]): a static library from every .cpp
# in src_dir (an interface library while the folder has none yet), headers under include_dir.
function(seqby_library name src_dir include_dir)
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${src_dir}/*.cpp)
  list(APPEND srcs ${ARGN})
  if(srcs)
    add_library(${name} STATIC ${srcs})
    target_include_directories(${name} PUBLIC
      $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/${include_dir}>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    seqby_warnings(${name})
  else()
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE
      $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/${include_dir}>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  endif()
  set_target_properties(${name} PROPERTIES EXPORT_NAME ${name})
endfunction()

# seqby_link(name [PUBLIC deps...] [PRIVATE deps...]): target_link_libraries that also works
# while a library is still an interface library (its folder has no sources yet).
function(seqby_link name)
  cmake_parse_arguments(ARG "" "" "PUBLIC;PRIVATE" ${ARGN})
  get_target_property(type ${name} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_link_libraries(${name} INTERFACE ${ARG_PUBLIC} ${ARG_PRIVATE})
  else()
    if(ARG_PUBLIC)
      target_link_libraries(${name} PUBLIC ${ARG_PUBLIC})
    endif()
    if(ARG_PRIVATE)
      target_link_libraries(${name} PRIVATE ${ARG_PRIVATE})
    endif()
  endif()
endfunction()
