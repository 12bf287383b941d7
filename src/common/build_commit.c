// SPDX-License-Identifier: Apache-2.0
/* The source commit of this build, recorded by cmake/commit_id.cmake. */
#include "attnmeta/attnmeta.h"

#if defined(__has_include)
#  if __has_include("am_build_commit.h")
#    include "am_build_commit.h"
#  endif
#endif
#ifndef AM_BUILD_COMMIT
#  define AM_BUILD_COMMIT "unknown"
#endif

const char *attnmeta_build_commit(void) { return AM_BUILD_COMMIT; }
