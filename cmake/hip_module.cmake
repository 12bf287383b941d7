# SPDX-License-Identifier: Apache-2.0
# The HIP backend module, libattnmeta_hip.so, built whenever a HIP compiler
# is found (ATTNMETA_WITH_HIP=AUTO) or demanded (ON).
#
# Two layouts are supported:
#  - a regular ROCm install (/opt/rocm): CMake's HIP language finds it; set
#    ATTNMETA_HIP_ARCHITECTURES to your targets (e.g. gfx942);
#  - Debian's ROCm packages (hipcc, libamdhip64-dev): clang-15 as the HIP
#    compiler with the ROCm root at /usr and the device libraries under
#    /usr/lib/x86_64-linux-gnu/amdgcn/bitcode, set up below.
include(CheckLanguage)
set(_debian_bitcode /usr/lib/x86_64-linux-gnu/amdgcn/bitcode)
if(NOT ATTNMETA_WITH_HIP STREQUAL "OFF")
  if(NOT CMAKE_HIP_COMPILER AND NOT DEFINED ENV{HIPCXX} AND NOT EXISTS /opt/rocm
     AND EXISTS ${_debian_bitcode} AND EXISTS /usr/bin/clang++-15)
    set(CMAKE_HIP_COMPILER /usr/bin/clang++-15)
    # CMake expects <root>/lib/cmake/hip-lang; Debian keeps it under the
    # multiarch folder. A root whose lib/cmake links there satisfies CMake,
    # and the package resolves its own prefix (/usr) through the link.
    set(_root ${PROJECT_BINARY_DIR}/debian-rocm-root)
    file(MAKE_DIRECTORY ${_root}/lib)
    file(CREATE_LINK /usr/lib/x86_64-linux-gnu/cmake ${_root}/lib/cmake SYMBOLIC)
    set(CMAKE_HIP_COMPILER_ROCM_ROOT ${_root})
    set(CMAKE_HIP_FLAGS "${CMAKE_HIP_FLAGS} --rocm-path=/usr --rocm-device-lib-path=${_debian_bitcode}")
    # The compiler checks run in sub-projects that inherit the environment,
    # not our variables: they need the multiarch package folder from it.
    set(ENV{CMAKE_PREFIX_PATH} "/usr/lib/x86_64-linux-gnu/cmake:$ENV{CMAKE_PREFIX_PATH}")
  endif()
  set(CMAKE_HIP_ARCHITECTURES "${ATTNMETA_HIP_ARCHITECTURES}")
  check_language(HIP)
  if(CMAKE_HIP_COMPILER)
    enable_language(HIP)
  elseif(ATTNMETA_WITH_HIP STREQUAL "ON")
    message(FATAL_ERROR "ATTNMETA_WITH_HIP=ON but no HIP compiler was found")
  endif()
endif()

if(CMAKE_HIP_COMPILER)
  add_library(attnmeta_hip MODULE src/hip/hip_backend.hip)
  string(REPLACE ";" " " _targets "${ATTNMETA_HIP_ARCHITECTURES}")
  set_target_properties(attnmeta_hip PROPERTIES HIP_ARCHITECTURES "${ATTNMETA_HIP_ARCHITECTURES}"
                                                PREFIX "lib")
  target_include_directories(attnmeta_hip PRIVATE
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src/common ${PROJECT_SOURCE_DIR}/src/hip)
  target_compile_definitions(attnmeta_hip PRIVATE AM_BUILD_TARGETS="${_targets}")
  find_package(hip CONFIG QUIET)
  if(TARGET hip::host)
    target_link_libraries(attnmeta_hip PRIVATE hip::host)
  else()
    find_library(ATTNMETA_AMDHIP64 amdhip64 REQUIRED)
    target_link_libraries(attnmeta_hip PRIVATE ${ATTNMETA_AMDHIP64})
  endif()
  message(STATUS "attnmeta: HIP module for ${_targets}")
else()
  message(STATUS "attnmeta: no HIP compiler, HIP module not built")
endif()
