# `cmake --install build [--prefix DIR]` (or `make install PREFIX=DIR`):
#   <libdir>/libhwrt.so.MAJOR.MINOR.PATCH (+ SONAME link libhwrt.so.MAJOR, libhwrt.so),
#   <libdir>/libhwrt.a, <libdir>/libhwrt_mpi.so (plugin, when MPI was found),
#   <includedir>/hwrt.h + hwrt/*.h, <libdir>/pkgconfig/hwrt.pc,
#   <libdir>/cmake/hwrt/{hwrtConfig,hwrtConfigVersion,hwrtTargets*}.cmake,
#   <bindir>/hwrt-*, <datadir>/hwrt/traces/, the Python module (python/CMakeLists.txt).
# Everything is relative to the prefix, so the tree can be moved after installing.
include(CMakePackageConfigHelpers)

set_target_properties(hwrt PROPERTIES INSTALL_RPATH "")   # needs nothing from libdir
install(TARGETS hwrt hwrt_static EXPORT hwrtTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(HWRT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hwrt)
install(EXPORT hwrtTargets NAMESPACE hwrt:: DESTINATION ${HWRT_CMAKE_DIR} FILE hwrtTargets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/hwrtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/hwrtConfig.cmake INSTALL_DESTINATION ${HWRT_CMAKE_DIR})
# 0.x: a program built against 0.1 needs 0.1.x or a later 0.y (the SONAME is libhwrt.so.0)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hwrtConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/hwrtConfig.cmake ${PROJECT_BINARY_DIR}/hwrtConfigVersion.cmake
        DESTINATION ${HWRT_CMAKE_DIR})

# pkg-config: prefix found from the .pc file's own place (${pcfiledir}), so it stays
# right when the tree moves. Libs.private: what `pkg-config --static` adds for libhwrt.a.
file(RELATIVE_PATH HWRT_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" HWRT_PC_TO_PREFIX "${HWRT_PC_TO_PREFIX}")
list(TRANSFORM CMAKE_DL_LIBS PREPEND "-l" OUTPUT_VARIABLE HWRT_PC_DL)
string(REPLACE ";" " " HWRT_PC_DL "${HWRT_PC_DL}")
set(HWRT_PC_LIBS_PRIVATE "-lopenblas -lm ${HWRT_PC_DL} -pthread")
configure_file(${PROJECT_SOURCE_DIR}/scripts/hwrt.pc.in ${PROJECT_BINARY_DIR}/hwrt.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hwrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Shared data: the allocation traces hwrt-bench-pool replays (found from bindir, relative).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/bench/traces DESTINATION ${CMAKE_INSTALL_DATADIR}/hwrt)
