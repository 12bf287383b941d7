# SPDX-License-Identifier: Apache-2.0
# Installation and the package consumers find: headers, the core library
# (libattnmeta.so.0), the backend modules (<libdir>/attnmeta/), the command
# line tool (bin/attnmeta), the Python package, a relocatable CMake package
# (find_package(attnmeta CONFIG) -> attnmeta::attnmeta) and a pkg-config
# file (attnmeta.pc). docs/install.md describes the layout and the three
# ways of using an installed attnmeta.
#
# Installed layout (prefix P, libdir L = CMAKE_INSTALL_LIBDIR):
#   P/include/attnmeta/*.h
#   P/L/libattnmeta.so -> libattnmeta.so.0 -> libattnmeta.so.0.1.0
#   P/L/libattnmeta.a                        (ATTNMETA_BUILD_STATIC=ON)
#   P/L/attnmeta/libattnmeta_{cuda,hip}.so   (the modules that were built)
#   P/L/cmake/attnmeta/attnmeta{Config,ConfigVersion,Targets*}.cmake
#   P/L/pkgconfig/attnmeta.pc
#   P/bin/attnmeta                           (RUNPATH $ORIGIN/../L)
#   P/include/attnmeta/conformance/*.h       the conformance kit's library:
#   P/L/libattnmeta_conformance.a            format reader/writer, runner engine
#   P/share/attnmeta/vectors/*.amv           the conformance vectors
#   P/share/attnmeta/spec/*.md               the vector format, one file a version
#   P/<ATTNMETA_PYTHON_INSTALL_DIR>/attnmeta/
#   P/share/doc/attnmeta/*.md
#
# Everything is relative to the prefix: `cmake --install build --prefix P`
# works for any P, and an installed tree may be moved as a whole.
include(CMakePackageConfigHelpers)

set(ATTNMETA_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/attnmeta" CACHE STRING
    "Where the CMake package files are installed, relative to the prefix")
set(ATTNMETA_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig" CACHE STRING
    "Where attnmeta.pc is installed, relative to the prefix")
option(ATTNMETA_INSTALL_PYTHON "Install the Python package (python/attnmeta)" ON)
# The dispatcher looks for the modules in <folder of libattnmeta.so>/attnmeta
# first, so this folder is fixed relative to the core library. It is also the
# folder compiled into the core (ATTNMETA_MODULE_INSTALL_DIR).
set(ATTNMETA_INSTALL_MODULEDIR "${CMAKE_INSTALL_LIBDIR}/attnmeta")

# ---- optional static core ----
# ATTNMETA_BUILD_STATIC=ON also builds libattnmeta.a (target attnmeta_static,
# exported as attnmeta::attnmeta_static, package component "static") from
# the core's own sources, beside the shared library, which stays the
# default. A program linked with it finds the GPU modules in the folder the
# build recorded (<install libdir>/attnmeta) or through $ATTNMETA_MODULE_DIR.
option(ATTNMETA_BUILD_STATIC "Also build and install the static core library libattnmeta.a" OFF)
if(ATTNMETA_BUILD_STATIC)
  get_target_property(_attnmeta_core_sources attnmeta SOURCES)
  get_target_property(_attnmeta_core_defs attnmeta COMPILE_DEFINITIONS)
  add_library(attnmeta_static STATIC ${_attnmeta_core_sources})
  target_include_directories(attnmeta_static
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${PROJECT_SOURCE_DIR}/src/common ${PROJECT_BINARY_DIR}/generated)
  target_compile_definitions(attnmeta_static PRIVATE ${_attnmeta_core_defs})
  add_dependencies(attnmeta_static attnmeta_commit_id)
  target_compile_options(attnmeta_static PRIVATE ${ATTNMETA_WARNINGS})
  target_link_libraries(attnmeta_static PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  set_target_properties(attnmeta_static PROPERTIES OUTPUT_NAME attnmeta
    ARCHIVE_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)
endif()

# Names a project that adds attnmeta with add_subdirectory() or FetchContent
# can use exactly as it would use the installed package.
add_library(attnmeta::attnmeta ALIAS attnmeta)
if(TARGET attnmeta_static)
  add_library(attnmeta::attnmeta_static ALIAS attnmeta_static)
endif()

# ---- exported symbols of the backend modules ----
# A module exports exactly one symbol, attnmeta_backend_entry (abi/
# backend_module.map); kernel handles, device stubs and the statically
# linked CUDA runtime stay local. ci/check_symbols.sh verifies it.
foreach(_m IN ITEMS attnmeta_cuda attnmeta_hip)
  if(TARGET ${_m})
    target_link_options(${_m} PRIVATE
      "LINKER:--version-script=${PROJECT_SOURCE_DIR}/abi/backend_module.map")
    set_property(TARGET ${_m} APPEND PROPERTY LINK_DEPENDS
      "${PROJECT_SOURCE_DIR}/abi/backend_module.map")
  endif()
endforeach()

# ---- core library, static core, command-line tool ----
file(RELATIVE_PATH _attnmeta_bin_to_lib "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_LIBDIR}")
set_target_properties(attnmeta_cli PROPERTIES
  INSTALL_RPATH "$ORIGIN/${_attnmeta_bin_to_lib}"
  EXPORT_NAME cli)

set(_attnmeta_install_targets attnmeta attnmeta_cli attnmeta_conformance)
if(TARGET attnmeta_static)
  list(APPEND _attnmeta_install_targets attnmeta_static)
endif()
install(TARGETS ${_attnmeta_install_targets}
  EXPORT attnmetaTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime
    NAMELINK_COMPONENT Development
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development)

# Every public header of include/attnmeta/, whatever is there at install time.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/attnmeta
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT Development
  FILES_MATCHING PATTERN "*.h")

# ---- conformance kit: headers, vectors, format specification ----
# `attnmeta conformance` without files runs <datadir>/attnmeta/vectors, found
# relative to the tool (conformance/CMakeLists.txt), so no source tree is
# needed to run the kit.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/conformance/include/attnmeta/conformance
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attnmeta
  COMPONENT Development
  FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/conformance/vectors/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/attnmeta/vectors
  COMPONENT Runtime
  FILES_MATCHING PATTERN "*.amv")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/conformance/spec/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/attnmeta/spec
  COMPONENT Documentation
  FILES_MATCHING PATTERN "*.md")

# ---- backend modules: <libdir>/attnmeta/ ----
set(_attnmeta_modules "")
foreach(_m IN ITEMS attnmeta_cuda attnmeta_hip)
  if(TARGET ${_m})
    install(TARGETS ${_m} LIBRARY DESTINATION ${ATTNMETA_INSTALL_MODULEDIR} COMPONENT Runtime)
    string(REPLACE "attnmeta_" "" _kind "${_m}")
    list(APPEND _attnmeta_modules ${_kind})
  endif()
endforeach()

# ---- CMake package ----
install(EXPORT attnmetaTargets
  NAMESPACE attnmeta::
  DESTINATION ${ATTNMETA_INSTALL_CMAKEDIR}
  COMPONENT Development)

set(ATTNMETA_PACKAGE_MODULES "${_attnmeta_modules}")
if(TARGET attnmeta_static)
  set(ATTNMETA_PACKAGE_HAS_STATIC 1)
else()
  set(ATTNMETA_PACKAGE_HAS_STATIC 0)
endif()
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/attnmetaConfig.cmake.in
  ${PROJECT_BINARY_DIR}/attnmetaConfig.cmake
  INSTALL_DESTINATION ${ATTNMETA_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR ATTNMETA_INSTALL_MODULEDIR CMAKE_INSTALL_BINDIR)
# SameMajorVersion: the major version is the soname (libattnmeta.so.0), the
# promise of binary compatibility. A request for 0.1 accepts any later 0.y
# (same soname, API and ABI only grow) and refuses 1.x, whose soname and ABI
# differ; AnyNewerVersion would accept that break. See docs/abi.md.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/attnmetaConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/attnmetaConfig.cmake
  ${PROJECT_BINARY_DIR}/attnmetaConfigVersion.cmake
  DESTINATION ${ATTNMETA_INSTALL_CMAKEDIR}
  COMPONENT Development)

# ---- pkg-config ----
# The prefix is written when installing, as the normalised absolute install
# prefix (that of `cmake --install --prefix P`; the final one under DESTDIR
# staging), so `pkg-config --cflags --libs` gives plain paths such as
# -IP/include. For a tree moved after installation, `pkg-config
# --define-prefix` derives the prefix from the file's place instead.
# Absolute install folders are written as they are.
foreach(_v IN ITEMS LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_v}}")
    set(ATTNMETA_PC_${_v} "${CMAKE_INSTALL_${_v}}")
  else()
    set(ATTNMETA_PC_${_v} "\${prefix}/${CMAKE_INSTALL_${_v}}")
  endif()
endforeach()
set(ATTNMETA_PC_LIBS_PRIVATE "")
foreach(_l IN LISTS CMAKE_DL_LIBS)
  string(APPEND ATTNMETA_PC_LIBS_PRIVATE " -l${_l}")
endforeach()
if(CMAKE_THREAD_LIBS_INIT)
  string(APPEND ATTNMETA_PC_LIBS_PRIVATE " ${CMAKE_THREAD_LIBS_INIT}")
endif()
string(STRIP "${ATTNMETA_PC_LIBS_PRIVATE}" ATTNMETA_PC_LIBS_PRIVATE)
# Everything but the prefix now; the prefix at install time.
set(ATTNMETA_PC_PREFIX "@ATTNMETA_PC_PREFIX@")
configure_file(${PROJECT_SOURCE_DIR}/cmake/attnmeta.pc.in ${PROJECT_BINARY_DIR}/attnmeta.pc.in @ONLY)
install(CODE "
  set(ATTNMETA_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  cmake_path(NORMAL_PATH ATTNMETA_PC_PREFIX)
  string(REGEX REPLACE \"(.)/+$\" \"\\\\1\" ATTNMETA_PC_PREFIX \"\${ATTNMETA_PC_PREFIX}\")
  configure_file(\"${PROJECT_BINARY_DIR}/attnmeta.pc.in\" \"${PROJECT_BINARY_DIR}/attnmeta.pc\" @ONLY)
" COMPONENT Development)
install(FILES ${PROJECT_BINARY_DIR}/attnmeta.pc
  DESTINATION ${ATTNMETA_INSTALL_PKGCONFIGDIR}
  COMPONENT Development)

# ---- Python package ----
# Where it goes, unless ATTNMETA_PYTHON_INSTALL_DIR says (relative to the
# prefix), is decided when installing, from the prefix actually used
# (`cmake --install build --prefix P`), as the Python that reads P expects:
#   /usr        Debian's Python: lib/python3/dist-packages
#   /usr/local  Debian's Python: lib/python3.X/dist-packages (it never reads
#               /usr/local/.../site-packages)
#   any other   CPython's prefix layout, lib/python3.X/site-packages (that of
#               a virtual environment: `--prefix $VIRTUAL_ENV`)
# X is the version of /usr/bin/python3 for /usr and /usr/local, else that of
# the python3 CMake finds (Python3_EXECUTABLE picks another).
set(ATTNMETA_PYTHON_INSTALL_DIR "" CACHE STRING
    "Where the Python package attnmeta/ is installed, relative to the prefix (empty: chosen at install time)")
set(_attnmeta_py_mm "3")
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  set(_attnmeta_py_mm "${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}")
endif()
set(_attnmeta_sys_mm "")
set(_attnmeta_sys_debian 0)
if(EXISTS /usr/bin/python3)
  execute_process(COMMAND /usr/bin/python3 -c
      "import sys; print('%d.%d' % sys.version_info[:2], int(any(p.endswith('/dist-packages') for p in sys.path)))"
    OUTPUT_VARIABLE _attnmeta_sys OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _attnmeta_rc)
  if(_attnmeta_rc EQUAL 0 AND _attnmeta_sys MATCHES "^([0-9.]+) ([01])$")
    set(_attnmeta_sys_mm "${CMAKE_MATCH_1}")
    set(_attnmeta_sys_debian "${CMAKE_MATCH_2}")
  endif()
endif()
if(ATTNMETA_PYTHON_INSTALL_DIR)
  set(_attnmeta_pydest "${ATTNMETA_PYTHON_INSTALL_DIR}")
  set(_attnmeta_pyconf "${ATTNMETA_PYTHON_INSTALL_DIR}")
else()
  if(ATTNMETA_INSTALL_PYTHON AND EXISTS ${PROJECT_SOURCE_DIR}/python/attnmeta)
    install(CODE "
      set(_attnmeta_pydir \"lib/python${_attnmeta_py_mm}/site-packages\")
      if(${_attnmeta_sys_debian} AND \"\${CMAKE_INSTALL_PREFIX}\" MATCHES \"^/usr/*$\")
        set(_attnmeta_pydir \"lib/python3/dist-packages\")
      elseif(${_attnmeta_sys_debian} AND \"\${CMAKE_INSTALL_PREFIX}\" MATCHES \"^/usr/local/*$\")
        set(_attnmeta_pydir \"lib/python${_attnmeta_sys_mm}/dist-packages\")
      endif()
      message(STATUS \"attnmeta: Python package into \${CMAKE_INSTALL_PREFIX}/\${_attnmeta_pydir}\")
    " COMPONENT Python)
  endif()
  # Expanded by the install script: the folder chosen just above.
  set(_attnmeta_pydest "\${_attnmeta_pydir}")
  # Every choice is three folders below the prefix: the same relative links.
  set(_attnmeta_pyconf "lib/python${_attnmeta_py_mm}/site-packages")
endif()
if(ATTNMETA_INSTALL_PYTHON AND EXISTS ${PROJECT_SOURCE_DIR}/python/attnmeta)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/attnmeta
    DESTINATION ${_attnmeta_pydest}
    COMPONENT Python
    PATTERN "__pycache__" EXCLUDE
    PATTERN "*.pyc" EXCLUDE
    PATTERN "lib" EXCLUDE)
  # The installed package gets the layout of the wheel (attnmeta/lib/ holding
  # the core library and the modules), made of
  # relative links to the files installed in <libdir>, so `import attnmeta`
  # finds the library of its own installation from any prefix, and the core
  # finds the modules beside itself.
  if(IS_ABSOLUTE "${_attnmeta_pyconf}")
    set(_attnmeta_pylib "${_attnmeta_pyconf}/attnmeta/lib")
  else()
    set(_attnmeta_pylib "${CMAKE_INSTALL_PREFIX}/${_attnmeta_pyconf}/attnmeta/lib")
  endif()
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${_attnmeta_pyconf}")
    set(_attnmeta_up "${CMAKE_INSTALL_FULL_LIBDIR}")
  else()
    file(RELATIVE_PATH _attnmeta_up "${_attnmeta_pylib}" "${CMAKE_INSTALL_FULL_LIBDIR}")
    string(REGEX REPLACE "/$" "" _attnmeta_up "${_attnmeta_up}")
  endif()
  set(_attnmeta_links ${PROJECT_BINARY_DIR}/python-links)
  file(REMOVE_RECURSE ${_attnmeta_links})
  file(MAKE_DIRECTORY ${_attnmeta_links})
  file(CREATE_LINK "${_attnmeta_up}/libattnmeta.so.0" ${_attnmeta_links}/libattnmeta.so.0 SYMBOLIC)
  foreach(_kind IN LISTS _attnmeta_modules)
    file(CREATE_LINK "${_attnmeta_up}/attnmeta/libattnmeta_${_kind}.so"
         ${_attnmeta_links}/libattnmeta_${_kind}.so SYMBOLIC)
  endforeach()
  install(DIRECTORY ${_attnmeta_links}/
    DESTINATION ${_attnmeta_pydest}/attnmeta/lib
    COMPONENT Python)
endif()

# ---- documentation ----
foreach(_doc IN ITEMS contract.md abi.md install.md conformance.md)
  if(EXISTS ${PROJECT_SOURCE_DIR}/docs/${_doc})
    install(FILES ${PROJECT_SOURCE_DIR}/docs/${_doc}
      DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT Documentation)
  endif()
endforeach()

# ---- uninstall ----
# `cmake --build build --target uninstall` removes what the last
# `cmake --install build` put in place (install_manifest.txt), see
# cmake/uninstall.cmake. Vendored with add_subdirectory(), the target is
# attnmeta_uninstall, leaving the name to the parent project.
if(PROJECT_IS_TOP_LEVEL)
  set(_attnmeta_uninstall uninstall)
else()
  set(_attnmeta_uninstall attnmeta_uninstall)
endif()
add_custom_target(${_attnmeta_uninstall}
  COMMAND ${CMAKE_COMMAND} -DMANIFEST=${PROJECT_BINARY_DIR}/install_manifest.txt
          -P ${PROJECT_SOURCE_DIR}/cmake/uninstall.cmake
  COMMENT "attnmeta: removing the files of install_manifest.txt"
  VERBATIM)
