# SPDX-License-Identifier: Apache-2.0
# cmake -DSOURCE_DIR=<checkout> -P cmake/check_versions.cmake
# Fails when the copies of the release number disagree with the header's
# ATTNMETA_VERSION_* macros: python/attnmeta/_version.py, the newest
# release section of CHANGELOG.md and the library file named in docs/abi.md.
include(${CMAKE_CURRENT_LIST_DIR}/version.cmake)
attnmeta_read_version(${SOURCE_DIR}/include/attnmeta/attnmeta.h _header)
set(_errors "")
attnmeta_python_version(${SOURCE_DIR}/python/attnmeta/_version.py _python)
if(NOT _python STREQUAL _header)
  string(APPEND _errors "  python/attnmeta/_version.py says '${_python}'\n")
endif()
file(STRINGS ${SOURCE_DIR}/CHANGELOG.md _sections REGEX "^## \\[?[0-9]+\\.[0-9]+\\.[0-9]+")
list(GET _sections 0 _newest)
if(NOT _newest MATCHES "^## \\[?${_header}[] ]")
  string(APPEND _errors "  CHANGELOG.md's newest release section is '${_newest}'\n")
endif()
file(READ ${SOURCE_DIR}/docs/abi.md _abi)
string(FIND "${_abi}" "libattnmeta.so.${_header}" _at)
if(_at EQUAL -1)
  string(APPEND _errors "  docs/abi.md does not name libattnmeta.so.${_header}\n")
endif()
if(_errors)
  message(FATAL_ERROR "include/attnmeta/attnmeta.h says ${_header}, but:\n${_errors}")
endif()
message(STATUS "version ${_header}: header, python/attnmeta/_version.py, CHANGELOG.md and docs/abi.md agree")
