# SPDX-License-Identifier: Apache-2.0
# The release number has one home, the ATTNMETA_VERSION_* macros of
# include/attnmeta/attnmeta.h. The project version, the soname and the CMake
# package version come from it here; setup.py reads the same macros for the
# wheel. python/attnmeta/_version.py cannot read a C header at import, so it
# holds a copy that configuring (and the test version_sources_agree) compares.
#
# attnmeta_read_version(<header> <out-var>): "MAJOR.MINOR.PATCH".
function(attnmeta_read_version header out)
  file(STRINGS "${header}" _lines REGEX "^#define ATTNMETA_VERSION_(MAJOR|MINOR|PATCH) +[0-9]+")
  set(_parts "")
  foreach(_part IN ITEMS MAJOR MINOR PATCH)
    set(_value "")
    foreach(_line IN LISTS _lines)
      if(_line MATCHES "^#define ATTNMETA_VERSION_${_part} +([0-9]+)")
        set(_value ${CMAKE_MATCH_1})
      endif()
    endforeach()
    if(_value STREQUAL "")
      message(FATAL_ERROR "${header} defines no ATTNMETA_VERSION_${_part}")
    endif()
    list(APPEND _parts ${_value})
  endforeach()
  list(JOIN _parts "." _version)
  set(${out} "${_version}" PARENT_SCOPE)
endfunction()

# attnmeta_python_version(<_version.py> <out-var>): its __version__ string.
function(attnmeta_python_version file out)
  file(STRINGS "${file}" _lines REGEX "^__version__ *= *\"")
  set(_version "")
  if(_lines MATCHES "^__version__ *= *\"([^\"]*)\"")
    set(_version "${CMAKE_MATCH_1}")
  endif()
  set(${out} "${_version}" PARENT_SCOPE)
endfunction()
