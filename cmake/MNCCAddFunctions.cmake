# Helpers that give every mncc library, tool, unit test and benchmark the
# same shape. Libraries are shared so that a plugin loaded into a tool links
# against the very copy of a dialect the tool registered.

# Splits `LINK_LIBS a b PRIVATE c` style lists; a list that does not start
# with a visibility keyword is PUBLIC.
function(_mncc_link_libs target)
  if(NOT ARGN)
    return()
  endif()
  list(GET ARGN 0 first)
  if(first MATCHES "^(PUBLIC|PRIVATE|INTERFACE)$")
    target_link_libraries(${target} ${ARGN})
  else()
    target_link_libraries(${target} PUBLIC ${ARGN})
  endif()
endfunction()

# add_mncc_library(name sources... [DEPENDS targets...] [LINK_LIBS libs...])
function(add_mncc_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_library(${name} SHARED ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${MNCC_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${MNCC_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  _mncc_link_libs(${name} ${ARG_LINK_LIBS})
  install(TARGETS ${name} EXPORT MNCCTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  set_property(GLOBAL APPEND PROPERTY MNCC_LIBRARIES ${name})
endfunction()

# add_mncc_tool(name sources... [DEPENDS targets...] [LINK_LIBS libs...])
function(add_mncc_tool name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  _mncc_link_libs(${name} ${ARG_LINK_LIBS})
  install(TARGETS ${name} EXPORT MNCCTargets
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  set_property(GLOBAL APPEND PROPERTY MNCC_TOOLS ${name})
endfunction()

# add_mncc_unittest(name sources... [LINK_LIBS libs...])
# GoogleTest binaries live in build/unittests, where lit's GoogleTest format
# (test/unit/lit.cfg.py) finds every binary whose name ends in "Tests".
function(add_mncc_unittest name)
  cmake_parse_arguments(ARG "" "" "LINK_LIBS" ${ARGN})
  if(NOT name MATCHES "Tests$")
    message(FATAL_ERROR "unit test binary '${name}' must end in 'Tests'")
  endif()
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${MNCC_BINARY_DIR}/unittests)
  target_link_libraries(${name} PRIVATE GTest::gtest GTest::gtest_main
    Threads::Threads)
  _mncc_link_libs(${name} ${ARG_LINK_LIBS})
  set_property(GLOBAL APPEND PROPERTY MNCC_UNITTESTS ${name})
endfunction()

# add_mncc_bench(name sources... [LINK_LIBS libs...])
function(add_mncc_bench name)
  cmake_parse_arguments(ARG "" "" "LINK_LIBS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${MNCC_BINARY_DIR}/bench)
  _mncc_link_libs(${name} ${ARG_LINK_LIBS})
  set_property(GLOBAL APPEND PROPERTY MNCC_BENCHES ${name})
endfunction()

# add_mncc_tablegen(target td-file [ARGS -gen-... output]...)
# Runs mlir-tblgen into the build tree beside the dialect's public headers,
# so each dialect keeps its generated files in its own folder.
function(add_mncc_tablegen target td)
  set(LLVM_TARGET_DEFINITIONS ${td})
  set(pending "")
  foreach(arg ${ARGN})
    if(arg MATCHES "\\.inc$")
      mlir_tablegen(${arg} ${pending})
      set(pending "")
    else()
      list(APPEND pending ${arg})
    endif()
  endforeach()
  add_public_tablegen_target(${target})
endfunction()
