# SPDX-License-Identifier: Apache-2.0
# The HIP backend module, libattnmeta_hip.so, built whenever a HIP compiler
# is found (ATTNMETA_WITH_HIP=AUTO) or demanded (ON).
#
# Targets: ATTNMETA_HIP_ARCHITECTURES when set; by default the AMD GPUs
# deployments run, gfx90a (MI200), gfx942 (MI300X, MI325X) and gfx950
# (MI355X), each kept only when the compiler builds it (probed below:
# clang 19 knows gfx942, gfx950 needs clang 20 / ROCm 6.4 or newer).
#
# Two layouts are supported:
#  - a regular ROCm install (/opt/rocm, ROCm 6.x): CMake's HIP language finds
#    it (or -DCMAKE_HIP_COMPILER=/opt/rocm/llvm/bin/clang++);
#  - Debian's ROCm packages (hipcc, libamdhip64-dev: ROCm 5.2): the newest
#    Debian clang that has its offload bundler, lld and compiler-rt
#    (clang-19: clang-19, clang-tools-19, lld-19, libclang-rt-19-dev; else
#    clang-15) as the HIP compiler,
#    the ROCm root at /usr and the device libraries under
#    /usr/lib/x86_64-linux-gnu/amdgcn/bitcode, set up below.
include(CheckLanguage)
set(_debian_bitcode /usr/lib/x86_64-linux-gnu/amdgcn/bitcode)
set(_attnmeta_hip_default_targets gfx90a gfx942 gfx950)
set(_debian_device_libs "")

# The ISA version of a target as ROCm's device libraries spell it: gfx942
# is 9402 (major 9, minor 4, stepping 2), gfx90a 9010.
function(attnmeta_hip_isa_version target out)
  if(NOT target MATCHES "^gfx([0-9]+)([0-9a-f])([0-9a-f])$")
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  math(EXPR _v "${CMAKE_MATCH_1} * 1000 + 0x${CMAKE_MATCH_2} * 10 + 0x${CMAKE_MATCH_3}")
  set(${out} ${_v} PARENT_SCOPE)
endfunction()

# Debian 12's device libraries (ROCm 5.2) predate gfx942 and gfx950: they
# lack the one-constant library naming the ISA version, which clang wants
# for every target. A folder of links to Debian's libraries, plus that
# constant compiled for each missing target, gives clang what ROCm 6 ships.
function(attnmeta_debian_device_libs compiler out)
  set(_dir ${PROJECT_BINARY_DIR}/debian-device-libs)
  file(MAKE_DIRECTORY ${_dir})
  file(GLOB _libs ${_debian_bitcode}/*.bc)
  foreach(_lib IN LISTS _libs)
    get_filename_component(_name ${_lib} NAME)
    if(NOT EXISTS ${_dir}/${_name})
      file(CREATE_LINK ${_lib} ${_dir}/${_name} SYMBOLIC)
    endif()
  endforeach()
  foreach(_target IN LISTS _attnmeta_hip_default_targets ATTNMETA_HIP_ARCHITECTURES)
    string(REGEX REPLACE "^gfx([0-9a-f]+).*" "\\1" _id "${_target}")
    attnmeta_hip_isa_version(${_target} _isa)
    if(_isa STREQUAL "" OR EXISTS ${_dir}/oclc_isa_version_${_id}.bc)
      continue()
    endif()
    file(WRITE ${_dir}/isa_version_${_id}.cl "__constant int __oclc_ISA_version = ${_isa};\n")
    execute_process(COMMAND ${compiler} -x cl -cl-std=CL2.0 --target=amdgcn-amd-amdhsa
        -mcpu=${_target} -nogpulib -mcode-object-version=4 -fvisibility=protected -emit-llvm -c
        ${_dir}/isa_version_${_id}.cl -o ${_dir}/oclc_isa_version_${_id}.bc
      RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(NOT _rc EQUAL 0)
      file(REMOVE ${_dir}/oclc_isa_version_${_id}.bc) # a target this clang does not know
    endif()
  endforeach()
  set(${out} ${_dir} PARENT_SCOPE)
endfunction()

# Whether the HIP compiler builds a small kernel, device code linked, for
# `target`, with the project's HIP flags.
function(attnmeta_hip_builds compiler target out)
  set(_dir ${PROJECT_BINARY_DIR}/hip-target-probe)
  file(MAKE_DIRECTORY ${_dir})
  file(WRITE ${_dir}/probe.hip
    "#include <hip/hip_runtime.h>\n__global__ void probe(int *p) { p[threadIdx.x] = (int)blockIdx.x; }\n")
  separate_arguments(_flags UNIX_COMMAND "${CMAKE_HIP_FLAGS}")
  execute_process(COMMAND ${compiler} -x hip ${_flags} --offload-arch=${target} -c ${_dir}/probe.hip
      -o ${_dir}/probe_${target}.o
    RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_VARIABLE _err)
  if(_rc EQUAL 0)
    set(${out} TRUE PARENT_SCOPE)
  else()
    string(REGEX MATCH "error: [^\n]*" _first "${_err}")
    message(STATUS "attnmeta: the HIP compiler does not build ${target}: ${_first}")
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

if(NOT ATTNMETA_WITH_HIP STREQUAL "OFF")
  if(NOT CMAKE_HIP_COMPILER AND NOT DEFINED ENV{HIPCXX} AND NOT EXISTS /opt/rocm
     AND EXISTS ${_debian_bitcode})
    foreach(_v IN ITEMS 19 18 17 16 15)
      set(_bin /usr/lib/llvm-${_v}/bin)
      file(GLOB _builtins ${_bin}/../lib/clang/*/lib/linux/libclang_rt.builtins-x86_64.a)
      if(EXISTS ${_bin}/clang++ AND EXISTS ${_bin}/clang-offload-bundler AND EXISTS ${_bin}/ld.lld
         AND _builtins)
        set(CMAKE_HIP_COMPILER ${_bin}/clang++)
        break()
      endif()
    endforeach()
  endif()
  if(CMAKE_HIP_COMPILER AND CMAKE_HIP_COMPILER MATCHES "^/usr/lib/llvm-[0-9]+/bin/clang\\+\\+$"
     AND EXISTS ${_debian_bitcode} AND NOT EXISTS /opt/rocm)
    # CMake expects <root>/lib/cmake/hip-lang; Debian keeps it under the
    # multiarch folder. A root whose lib/cmake links there satisfies CMake,
    # and the package resolves its own prefix (/usr) through the link.
    set(_root ${PROJECT_BINARY_DIR}/debian-rocm-root)
    file(MAKE_DIRECTORY ${_root}/lib)
    if(NOT EXISTS ${_root}/lib/cmake)
      file(CREATE_LINK /usr/lib/x86_64-linux-gnu/cmake ${_root}/lib/cmake SYMBOLIC)
    endif()
    set(CMAKE_HIP_COMPILER_ROCM_ROOT ${_root})
    attnmeta_debian_device_libs(${CMAKE_HIP_COMPILER} _debian_device_libs)
    # Code object version 4: what Debian's ROCm 5.2 runtime loads.
    set(_debian_flags "--rocm-path=/usr --rocm-device-lib-path=${_debian_device_libs} -mcode-object-version=4")
    if(NOT CMAKE_HIP_FLAGS MATCHES "--rocm-device-lib-path")
      set(CMAKE_HIP_FLAGS "${CMAKE_HIP_FLAGS} ${_debian_flags}")
    endif()
    # The compiler checks run in sub-projects that inherit the environment,
    # not our variables: they need the multiarch package folder from it.
    set(ENV{CMAKE_PREFIX_PATH} "/usr/lib/x86_64-linux-gnu/cmake:$ENV{CMAKE_PREFIX_PATH}")
    # Debian's hip-lang package puts /usr/include on the command line as
    # -isystem, ahead of libstdc++'s folders; clang 16 and later then miss
    # math.h through <cmath> in their HIP wrapper headers, and CMake's
    # compiler checks, which would find that /usr/include is implicit, fail
    # for that very reason. The checks are skipped (the probe above compiled
    # and linked device code already) and the folder declared implicit.
    if(NOT CMAKE_HIP_COMPILER MATCHES "llvm-15/")
      set(CMAKE_HIP_COMPILER_FORCED TRUE)
      set(_attnmeta_hip_implicit_usr_include TRUE)
    endif()
  endif()
  if(NOT CMAKE_HIP_COMPILER)
    check_language(HIP)
  endif()
  if(CMAKE_HIP_COMPILER)
    # The language's own check builds for one target every HIP compiler
    # knows; the module's targets are chosen below, with the compiler the
    # language settled on (a build folder keeps the compiler it was first
    # configured with).
    if("${ATTNMETA_HIP_ARCHITECTURES}" STREQUAL "")
      set(CMAKE_HIP_ARCHITECTURES gfx90a)
    else()
      set(CMAKE_HIP_ARCHITECTURES "${ATTNMETA_HIP_ARCHITECTURES}")
    endif()
    enable_language(HIP)
    if(_attnmeta_hip_implicit_usr_include)
      list(APPEND CMAKE_HIP_IMPLICIT_INCLUDE_DIRECTORIES /usr/include)
    endif()
    if("${ATTNMETA_HIP_ARCHITECTURES}" STREQUAL "")
      set(ATTNMETA_HIP_TARGETS "")
      foreach(_target IN LISTS _attnmeta_hip_default_targets)
        attnmeta_hip_builds(${CMAKE_HIP_COMPILER} ${_target} _ok)
        if(_ok)
          list(APPEND ATTNMETA_HIP_TARGETS ${_target})
        endif()
      endforeach()
    else()
      set(ATTNMETA_HIP_TARGETS "${ATTNMETA_HIP_ARCHITECTURES}")
    endif()
    if(NOT ATTNMETA_HIP_TARGETS)
      if(ATTNMETA_WITH_HIP STREQUAL "ON")
        message(FATAL_ERROR "ATTNMETA_WITH_HIP=ON but ${CMAKE_HIP_COMPILER} builds none of "
                            "${_attnmeta_hip_default_targets} (set ATTNMETA_HIP_ARCHITECTURES)")
      endif()
      message(WARNING "attnmeta: ${CMAKE_HIP_COMPILER} builds none of ${_attnmeta_hip_default_targets}; "
                      "HIP module not built (set ATTNMETA_HIP_ARCHITECTURES to build other targets)")
    endif()
  elseif(ATTNMETA_WITH_HIP STREQUAL "ON")
    message(FATAL_ERROR "ATTNMETA_WITH_HIP=ON but no HIP compiler was found")
  endif()
endif()

if(CMAKE_HIP_COMPILER AND ATTNMETA_HIP_TARGETS)
  add_library(attnmeta_hip MODULE src/hip/hip_backend.hip)
  string(REPLACE ";" " " _targets "${ATTNMETA_HIP_TARGETS}")
  set_target_properties(attnmeta_hip PROPERTIES HIP_ARCHITECTURES "${ATTNMETA_HIP_TARGETS}"
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
  message(STATUS "attnmeta: HIP module for ${_targets} (${CMAKE_HIP_COMPILER})")
  # Each code object in the module is for one of the targets, and each
  # target has one (the module's .hip_fatbin section, read by the script).
  if(BUILD_TESTING)
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(Python3_FOUND)
      add_test(NAME hip_module_code_objects
        COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/ci/hip_code_objects.py
                $<TARGET_FILE:attnmeta_hip> ${ATTNMETA_HIP_TARGETS})
    endif()
  endif()
else()
  message(STATUS "attnmeta: no HIP compiler, HIP module not built")
endif()
