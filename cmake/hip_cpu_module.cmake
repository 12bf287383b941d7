# Test-only: the HIP module's own source (src/hip/hip_backend.hip, with the
# HIP runtime map and the shared glue) built by the host C++ compiler
# against HIP-CPU (third_party/hip-cpu: the HIP runtime API on the CPU), so
# the HIP backend runs, with multi-thread blocks, on a machine without an
# AMD GPU. Asked for with -DATTNMETA_HIP_CPU_ROOT=DIR (the folder holding
# HIP-CPU's include/).
#
# The module is libattnmeta_hip.so like the real one, but in its own folder,
# <build>/hip-cpu/, which the dispatcher never searches by itself: only the
# tests reach it, through ATTNMETA_MODULE_DIR. It is never installed (the
# install rules name the real modules' targets only), so it can never shadow
# a real HIP module.
set(ATTNMETA_HIP_CPU_ROOT "" CACHE PATH
    "HIP-CPU folder (e.g. third_party/hip-cpu): build the HIP module for the CPU, for tests only")
if(NOT ATTNMETA_HIP_CPU_ROOT)
  return()
endif()
get_filename_component(_hip_cpu_root "${ATTNMETA_HIP_CPU_ROOT}" ABSOLUTE BASE_DIR "${PROJECT_SOURCE_DIR}")
if(NOT EXISTS ${_hip_cpu_root}/include/hip/hip_runtime.h)
  message(FATAL_ERROR "ATTNMETA_HIP_CPU_ROOT=${ATTNMETA_HIP_CPU_ROOT}: no include/hip/hip_runtime.h there")
endif()
# HIP-CPU runs blocks through the C++17 parallel algorithms, which libstdc++
# implements with TBB (Debian: libtbb-dev).
find_package(TBB REQUIRED)

set(ATTNMETA_HIP_CPU_MODULE_DIR ${PROJECT_BINARY_DIR}/hip-cpu)
# The .hip file is compiled as C++ through a one-line wrapper: its own
# language stays HIP for the real module.
set(_wrapper ${ATTNMETA_HIP_CPU_MODULE_DIR}/src/hip_backend_on_hip_cpu.cpp)
file(WRITE ${_wrapper}.in "#include \"${PROJECT_SOURCE_DIR}/src/hip/hip_backend.hip\"\n")
configure_file(${_wrapper}.in ${_wrapper} COPYONLY)
add_library(attnmeta_hip_cpu MODULE ${_wrapper})
set_target_properties(attnmeta_hip_cpu PROPERTIES
  OUTPUT_NAME attnmeta_hip PREFIX "lib"
  LIBRARY_OUTPUT_DIRECTORY ${ATTNMETA_HIP_CPU_MODULE_DIR})
target_include_directories(attnmeta_hip_cpu PRIVATE
  ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src/common ${PROJECT_SOURCE_DIR}/src/hip)
# Third-party headers: their own warnings are not ours (-Werror).
target_include_directories(attnmeta_hip_cpu SYSTEM PRIVATE ${_hip_cpu_root}/include)
target_compile_definitions(attnmeta_hip_cpu PRIVATE AM_BUILD_TARGETS="hip-cpu")
target_compile_options(attnmeta_hip_cpu PRIVATE ${ATTNMETA_WARNINGS})
target_link_libraries(attnmeta_hip_cpu PRIVATE TBB::tbb Threads::Threads)
message(STATUS "attnmeta: HIP module on HIP-CPU (tests only) in ${ATTNMETA_HIP_CPU_MODULE_DIR}")
