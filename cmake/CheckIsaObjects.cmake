# cmake -DNM=nm -DOBJECTS="a.o;b.o" -P CheckIsaObjects.cmake
#
# Fails when an object compiled for an instruction set beyond the baseline
# defines a weak (or unique) symbol outside its own Eigen namespace
# (MnccEigen<Isa>): such a symbol can be merged with the baseline build's
# copy, and the linker may keep the AVX one for every caller.
foreach(object IN LISTS OBJECTS)
  execute_process(COMMAND ${NM} --defined-only ${object}
    OUTPUT_VARIABLE symbols RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "nm failed on ${object}")
  endif()
  string(REPLACE "\n" ";" lines "${symbols}")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9a-fA-F]* [WVu] (.*)$")
      set(name "${CMAKE_MATCH_1}")
      if(NOT name MATCHES "MnccEigen" AND NOT name MATCHES "^DW\\.ref\\.")
        message(FATAL_ERROR
          "${object} defines the weak symbol ${name} outside its Eigen "
          "namespace; keep it out of the ISA build (see "
          "lib/reference/eigen/Products.inc)")
      endif()
    endif()
  endforeach()
endforeach()
