# The CUDA backend module, libattnmeta_cuda.so, built whenever nvcc exists
# (ATTNMETA_WITH_CUDA=AUTO) or demanded (ON). The CUDA runtime is linked
# statically so the module needs only the driver where it runs.
#
# ATTNMETA_CUDA_ARCHITECTURES (CMakeLists.txt) defaults to machine code for
# the GPUs in service (A100 80, A10/A40/RTX 30 86, L4/L40S/RTX 40 89,
# H100/H200 90, B200 100, RTX 50/RTX PRO 6000 120) plus compute_120 PTX,
# which the driver compiles at open for a newer GPU.
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
  # What the module holds, for `attnmeta info`, the open check's message and
  # the choice between machine code and PTX at open: "80" is sm_80 machine
  # code (SASS) and compute_80 PTX, "80-real" SASS only, "80-virtual" PTX
  # only; "90a" is SASS for that exact device only.
  set(_targets "")
  set(_sass "")
  set(_ptx "")
  foreach(_arch IN LISTS ATTNMETA_CUDA_ARCHITECTURES)
    if(NOT _arch MATCHES "^([0-9]+)([af]?)(-real|-virtual)?$")
      message(FATAL_ERROR "ATTNMETA_CUDA_ARCHITECTURES: '${_arch}' is not of the form 90, 90-real, "
                          "90-virtual or 90a (list the architectures explicitly)")
    endif()
    set(_num ${CMAKE_MATCH_1})
    set(_suffix ${CMAKE_MATCH_2})
    set(_kind ${CMAKE_MATCH_3})
    if(NOT _kind STREQUAL "-virtual")
      list(APPEND _targets "sm_${_num}${_suffix}")
      # Exact-device ("a"/"f") machine code: encoded as a negative number.
      if(_suffix STREQUAL "")
        list(APPEND _sass ${_num})
      else()
        list(APPEND _sass -${_num})
      endif()
    endif()
    if(NOT _kind STREQUAL "-real")
      list(APPEND _targets "compute_${_num}${_suffix}")
      list(APPEND _ptx ${_num})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _targets)
  string(REPLACE ";" " " _targets "${_targets}")
  # Space-separated strings (nvcc splits -D values at commas).
  string(REPLACE ";" " " _sass "${_sass}")
  string(REPLACE ";" " " _ptx "${_ptx}")
  target_compile_definitions(attnmeta_cuda PRIVATE
    "AM_CUDA_SASS_ARCHS=\"${_sass}\"" "AM_CUDA_PTX_ARCHS=\"${_ptx}\"")
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
