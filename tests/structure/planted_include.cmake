# The layer checker fails on an upward include, naming the file, the include and the
# rule: run on a copy of src/ with one include planted at a time (and passes on the
# untouched copy). cmake -DSRC= -DINCLUDE= -DCHECKER= -DWORK= -P planted_include.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(COPY ${SRC} DESTINATION ${WORK})
set(TREE ${WORK}/src)
set(failures 0)

function(run_checker out_rc out_text)
  execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${TREE} -DINCLUDE=${INCLUDE} -P ${CHECKER}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  string(REGEX REPLACE "[ \t\r\n]+" " " text "${o}${e}")   # message() wraps long lines
  set(${out_rc} ${rc} PARENT_SCOPE)
  set(${out_text} "${text}" PARENT_SCOPE)
endfunction()

run_checker(rc text)
if(NOT rc EQUAL 0)
  message(SEND_ERROR "the untouched copy of src/ fails the check: ${text}")
  math(EXPR failures "${failures} + 1")
endif()

# plant(file include expected...): append `#include "include"` to src/<file>, expect the
# checker to fail with every expected fragment in its output, then restore the file
function(plant file inc)
  file(READ ${TREE}/${file} orig)
  file(APPEND ${TREE}/${file} "\n#include \"${inc}\"\n")
  run_checker(rc text)
  file(WRITE ${TREE}/${file} "${orig}")
  if(rc EQUAL 0)
    message(SEND_ERROR "planted #include \"${inc}\" in src/${file}: the checker passed")
    set(failures 1 PARENT_SCOPE)
    return()
  endif()
  foreach(frag "src/${file}" ${ARGN})
    string(FIND "${text}" "${frag}" at)
    if(at LESS 0)
      message(SEND_ERROR "planted #include \"${inc}\" in src/${file}: output lacks \"${frag}\": ${text}")
      set(failures 1 PARENT_SCOPE)
    endif()
  endforeach()
  message(STATUS "planted in src/${file}: ${text}")
endfunction()

plant(base/status.c "../exec/stream.h" "#include \"../exec/stream.h\""
      "layer base may not include layer exec" "base may include its own headers and include/ only")
plant(runtime/handle.c "../tensor/tensor.h" "layer runtime may not include layer tensor"
      "runtime may include its own headers, backends, base and include/")
plant(backends/sim/sim_fault.c "../../tensor/ops.c" "layer sim may not include layer tensor")
plant(backends/sim/sim_mem.c "../opencl/ocl.h" "layer sim may not include layer opencl")
plant(mem/pool.c "../exec/stream.h" "layer mem may not include layer exec")
plant(prof/prof_hook.c "../diag/sync_check.h" "layer prof may not include layer diag")
plant(tensor/ops.c "../backends/sim/sim.h" "layer tensor may not include layer sim")
plant(exec/stream.c "no_such_header.h" "does not resolve")
# an allowlisted include is accepted only in its own file
plant(tensor/dlpack.c "../offload/offload.h" "layer tensor may not include layer offload")

if(failures)
  message(FATAL_ERROR "planted_include: the checker missed a planted include")
endif()
