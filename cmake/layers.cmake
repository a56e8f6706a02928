# libhwrt's layers (docs/ARCHITECTURE.md, "Layers"): one object library per layer,
# hwrt_layer_<name>, from its folder's .c files, linked into libhwrt.so and libhwrt.a in
# dependency order, lowest first:
#   base < backends (sim, opencl, cuda, ascend) < runtime < mem < exec < tensor < offload
#        < {prof, diag, distributed}
# Every layer library depends on hwrt_check_layers, which runs cmake/check_layers.cmake on
# every build: an upward #include fails the build before anything compiles.
# A layer's own link dependencies are listed with it, so only the sim backend brings
# OpenBLAS (its matmul) and no other layer's objects reference it (tests/structure
# checks the objects); OpenCL is never linked: the opencl backend dlopens the ICD loader
# at run time, as the MPI plugin is dlopened by distributed.
set(HWRT_LAYERS base backends sim opencl cuda ascend runtime mem exec tensor offload prof diag distributed)
set(HWRT_LAYER_DIR_base src/base)
set(HWRT_LAYER_DIR_backends src/backends)          # backend.h, range_alloc, sticky_fault: shared
set(HWRT_LAYER_DIR_sim src/backends/sim)
set(HWRT_LAYER_DIR_opencl src/backends/opencl)
set(HWRT_LAYER_DIR_cuda src/backends/cuda)
set(HWRT_LAYER_DIR_ascend src/backends/ascend)
foreach(l runtime mem exec tensor offload prof diag distributed)
  set(HWRT_LAYER_DIR_${l} src/${l})
endforeach()
set(HWRT_LAYER_LIBS_base ${CMAKE_DL_LIBS})       # base/dynlib: the run-time loader
set(HWRT_LAYER_LIBS_sim ${OPENBLAS_LIB} m)
set(HWRT_LAYER_LIBS_opencl ${CMAKE_DL_LIBS})     # dlopen("libOpenCL.so.1")
set(HWRT_LAYER_LIBS_cuda ${CMAKE_DL_LIBS})       # dlopen("libcuda.so.1", NVML, CUPTI)
set(HWRT_LAYER_LIBS_ascend ${CMAKE_DL_LIBS})     # dlopen("libascendcl.so", aclnn, DCMI)
set(HWRT_LAYER_LIBS_distributed ${CMAKE_DL_LIBS}) # dlopen("libhwrt_mpi.so")

add_custom_target(hwrt_check_layers
  COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR}/src -DINCLUDE=${PROJECT_SOURCE_DIR}/include
          -P ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake
  COMMENT "Checking the layer rule (cmake/check_layers.cmake)" VERBATIM)

set(HWRT_LAYER_OBJECTS "")
set(HWRT_LAYER_LINK_LIBS Threads::Threads m)
set(HWRT_LAYERED_SOURCES "")
foreach(l ${HWRT_LAYERS})
  file(GLOB srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${HWRT_LAYER_DIR_${l}}/*.c)
  if(NOT srcs)
    message(FATAL_ERROR "layer ${l}: no sources in ${HWRT_LAYER_DIR_${l}}")
  endif()
  list(APPEND HWRT_LAYERED_SOURCES ${srcs})
  add_library(hwrt_layer_${l} OBJECT ${srcs})
  target_include_directories(hwrt_layer_${l} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(hwrt_layer_${l} PRIVATE -fvisibility=hidden)
  target_link_libraries(hwrt_layer_${l} PRIVATE Threads::Threads)
  add_dependencies(hwrt_layer_${l} hwrt_check_layers)
  list(APPEND HWRT_LAYER_OBJECTS $<TARGET_OBJECTS:hwrt_layer_${l}>)
  list(APPEND HWRT_LAYER_LINK_LIBS ${HWRT_LAYER_LIBS_${l}})
endforeach()
list(REMOVE_DUPLICATES HWRT_LAYER_LINK_LIBS)

# Every .c under src/ (but the run-time loaded plugins) belongs to a layer.
file(GLOB_RECURSE HWRT_ALL_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*.c)
list(FILTER HWRT_ALL_SOURCES EXCLUDE REGEX "/src/plugins/")
list(REMOVE_ITEM HWRT_ALL_SOURCES ${HWRT_LAYERED_SOURCES})
if(HWRT_ALL_SOURCES)
  message(FATAL_ERROR "sources in no layer (add their folder to cmake/layers.cmake and "
                      "cmake/check_layers.cmake): ${HWRT_ALL_SOURCES}")
endif()
