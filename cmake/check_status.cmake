# No private status values: every hwrt_status a function returns is one of the public enum
# (include/hwrt/hwrt_core.h), so a user can switch on it and hwrt_status_name names it.
# Internal outcomes (graph capture took the work, the pool wants a GC or a trim) travel
# as out-parameters or private enums instead. This scan fails on a cast of a number or
# of an expression to hwrt_status in src/, the way such sentinels were written
# ("#define HWI_CONSUMED ((hwrt_status)1000)").
#   cmake -DSRC=<dir> -P cmake/check_status.cmake
if(NOT SRC)
  message(FATAL_ERROR "check_status: pass -DSRC=<source dir>")
endif()
file(GLOB_RECURSE files ${SRC}/*.c ${SRC}/*.h)
set(bad 0)
foreach(f ${files})
  file(STRINGS ${f} lines REGEX "\\([ \t]*hwrt_status[ \t]*\\)[ \t]*[(0-9]")
  foreach(l ${lines})
    string(STRIP "${l}" l)
    message(SEND_ERROR "${f}: a number cast to hwrt_status: \"${l}\": hwrt_status values "
                       "outside the public enum must not exist (use an out-parameter or a private enum)")
    set(bad 1)
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "check_status: private status values found")
endif()
list(LENGTH files n)
message(STATUS "check_status: ${n} files, no private status values")
