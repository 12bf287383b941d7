// SPDX-License-Identifier: Apache-2.0
/* am_environment (am_environment.h), on its own so that the loader, the
 * context and the log read the environment without depending on each other. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "am_environment.h"

const char *am_environment(const char *name) { return secure_getenv(name); }
