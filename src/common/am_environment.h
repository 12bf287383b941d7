// SPDX-License-Identifier: Apache-2.0
/* How the library reads its environment variables. */
#ifndef ATTNMETA_AM_ENVIRONMENT_H
#define ATTNMETA_AM_ENVIRONMENT_H

/* The environment variable `name`, or NULL; NULL too in a process running
 * with elevated privileges (set-user-ID, set-group-ID, capabilities), which
 * must not let its caller choose what the library loads (secure_getenv). */
const char *am_environment(const char *name);

#endif /* ATTNMETA_AM_ENVIRONMENT_H */
