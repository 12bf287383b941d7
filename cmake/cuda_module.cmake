# The CUDA backend module, libattnmeta_cuda.so, built whenever nvcc exists
# (ATTNMETA_WITH_CUDA=AUTO) or demanded (ON). The CUDA runtime is linked
# statically so the module needs only the driver where it runs.
include(CheckLanguage)
if(NOT ATTNMETA_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
  elseif(ATTNMETA_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "ATTNMETA_WITH_CUDA=ON but no CUDA compiler was found")
  endif()
endif()

if(CMAKE_CUDA_COMPILER)
  add_library(attnmeta_cuda MODULE src/cuda/cuda_backend.cu)
  set(_targets "")
  foreach(_arch IN LISTS ATTNMETA_CUDA_ARCHITECTURES)
    string(REGEX REPLACE "-.*" "" _num "${_arch}")
    list(APPEND _targets "sm_${_num}")
  endforeach()
  string(REPLACE ";" " " _targets "${_targets}")
  set_target_properties(attnmeta_cuda PROPERTIES
    CUDA_ARCHITECTURES "${ATTNMETA_CUDA_ARCHITECTURES}"
    CUDA_RUNTIME_LIBRARY Static
    PREFIX "lib")
  target_include_directories(attnmeta_cuda PRIVATE
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src/common ${PROJECT_SOURCE_DIR}/src/cuda)
  target_compile_definitions(attnmeta_cuda PRIVATE AM_BUILD_TARGETS="${_targets}")
  target_compile_options(attnmeta_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall>)
  if(ATTNMETA_PTXAS_VERBOSE)  # registers, spills and stack of each kernel
    target_compile_options(attnmeta_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xptxas=-v>)
  endif()
  message(STATUS "attnmeta: CUDA module for ${_targets}")
else()
  message(STATUS "attnmeta: no CUDA compiler, CUDA module not built")
endif()
