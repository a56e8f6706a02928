# Runtime search paths of what `cmake --install` puts under the prefix.
#
# Executables (bindir) and modules elsewhere find libhwrt through a RUNPATH relative to
# their own file ($ORIGIN), never through an absolute path: the installed tree works at
# any prefix, after a move, and with LD_LIBRARY_PATH unset. Libraries in libdir need no
# entry for each other (libhwrt_mpi.so does not link libhwrt). Link directories outside the
# system's (a custom OpenBLAS or MPI) are kept, as CMake finds them at link time.
#
# Build-tree binaries keep CMake's absolute build RUNPATH; install rewrites it.

# hwrt_rpath_to_libdir(<var> <dir relative to the prefix>): "$ORIGIN/<path to libdir>".
function(hwrt_rpath_to_libdir var from)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(${var} "${CMAKE_INSTALL_LIBDIR}" PARENT_SCOPE)
    return()
  endif()
  file(RELATIVE_PATH rel /${from} /${CMAKE_INSTALL_LIBDIR})
  if(rel STREQUAL "")
    set(${var} "$ORIGIN" PARENT_SCOPE)
  else()
    set(${var} "$ORIGIN/${rel}" PARENT_SCOPE)
  endif()
endfunction()

# The default for every target made after this point: right for executables in bindir.
hwrt_rpath_to_libdir(CMAKE_INSTALL_RPATH ${CMAKE_INSTALL_BINDIR})
set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)
# The build tree mirrors the install layout for programs and data: every tool in
# build/bin (where hwrt-bench finds its hwrt-bench-<name> siblings), shared data in
# build/share/hwrt (found from bin/ by the same relative path as once installed).
set(HWRT_BUILD_BINDIR ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_BINDIR})
set(HWRT_BUILD_DATADIR ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_DATADIR}/hwrt)
file(RELATIVE_PATH HWRT_BIN_TO_DATA /${CMAKE_INSTALL_BINDIR} /${CMAKE_INSTALL_DATADIR}/hwrt)
