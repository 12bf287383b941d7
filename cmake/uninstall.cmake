# SPDX-License-Identifier: Apache-2.0
# cmake -DMANIFEST=<build>/install_manifest.txt -P cmake/uninstall.cmake
# (the target `uninstall`: cmake --build build --target uninstall)
#
# Removes every file and link the last `cmake --install` of this build
# folder listed in install_manifest.txt, the __pycache__ folders Python left
# beside the installed package, then each folder left empty that is, or is
# inside, a folder named attnmeta (include/attnmeta, lib/attnmeta,
# lib/cmake/attnmeta, share/attnmeta, share/doc/attnmeta, the Python
# package): shared folders such as bin/ or lib/pkgconfig stay. Finally the manifest itself, so a second
# run says there is nothing to remove.
if(NOT EXISTS "${MANIFEST}")
  message(FATAL_ERROR "uninstall: no ${MANIFEST}: nothing was installed from this build folder "
                      "(or it was uninstalled already)")
endif()
file(STRINGS "${MANIFEST}" _files)
set(_folders "")
set(_removed 0)
foreach(_file IN LISTS _files)
  if(_file STREQUAL "")
    continue()
  endif()
  if(EXISTS "${_file}" OR IS_SYMLINK "${_file}")
    file(REMOVE "${_file}")
    math(EXPR _removed "${_removed} + 1")
  endif()
  get_filename_component(_dir "${_file}" DIRECTORY)
  list(APPEND _folders "${_dir}")
  if(_file MATCHES "\\.py$" AND IS_DIRECTORY "${_dir}/__pycache__")
    file(REMOVE_RECURSE "${_dir}/__pycache__")
  endif()
endforeach()
# Deepest first: a folder goes once the folders inside it have gone.
set(_candidates "")
foreach(_dir IN LISTS _folders)
  # The folder and its parents up to the nearest one named attnmeta.
  while(_dir MATCHES "/attnmeta(/|$)")
    list(APPEND _candidates "${_dir}")
    get_filename_component(_name "${_dir}" NAME)
    if(_name STREQUAL "attnmeta")
      break()
    endif()
    get_filename_component(_dir "${_dir}" DIRECTORY)
  endwhile()
endforeach()
list(REMOVE_DUPLICATES _candidates)
list(SORT _candidates ORDER DESCENDING)
foreach(_dir IN LISTS _candidates)
  file(GLOB _left "${_dir}/*" "${_dir}/.*")
  if(IS_DIRECTORY "${_dir}" AND NOT _left)
    file(REMOVE_RECURSE "${_dir}")
  endif()
endforeach()
file(REMOVE "${MANIFEST}")
message(STATUS "uninstall: removed ${_removed} files listed in ${MANIFEST}")
