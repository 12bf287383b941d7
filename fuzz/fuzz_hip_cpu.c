// SPDX-License-Identifier: Apache-2.0
/* The HIP-CPU mode of fuzz_step. See fuzz_hip_cpu.h. */
#include "fuzz_hip_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

static attnmeta_context *hip_ctx;

int fz_hip_cpu_enabled(void) {
  static int state = -1;
  const char *env, *targets = NULL;
  attnmeta_status st;
  if (state >= 0) return state;
  env = getenv("ATTNMETA_FUZZ_HIP_CPU");
  state = env && strcmp(env, "1") == 0;
  if (!state) return 0;
  st = attnmeta_backend_targets(ATTNMETA_BACKEND_HIP, &targets);
  FZ_CHECK(st == ATTNMETA_OK && targets && strcmp(targets, "hip-cpu") == 0,
           "ATTNMETA_FUZZ_HIP_CPU=1 needs the HIP-CPU module (ATTNMETA_MODULE_DIR=<build>/hip-cpu); "
           "the HIP backend says: %s (built for %s)",
           attnmeta_status_string(st), targets && targets[0] ? targets : "nothing");
  st = attnmeta_open(&hip_ctx, ATTNMETA_BACKEND_HIP, 0);
  FZ_CHECK(st == ATTNMETA_OK, "cannot open the HIP backend on HIP-CPU: %s (%s)",
           attnmeta_status_string(st), attnmeta_open_error());
  return state;
}

attnmeta_launch_config fz_hip_cpu_config(int lanes, int groups, int grid, int stage, int vector) {
  attnmeta_launch_config c = attnmeta_launch_config_default();
  c.lanes = 3 * lanes + 1;
  c.block = c.lanes * (groups + 1);
  c.grid = grid;
  c.stage = stage ? 1 : 0;
  c.vector = vector ? 1 : 0;
  return c;
}

void fz_hip_cpu_build_step(const attnmeta_step *step, const attnmeta_launch_config *config,
                           char *what, size_t what_size) {
  attnmeta_status st;
  snprintf(what, what_size,
           "the HIP backend on HIP-CPU (launch config {block %d, grid %d, stage %d, vector %d, "
           "lanes %d})",
           config->block, config->grid, config->stage, config->vector, config->lanes);
  st = attnmeta_set_launch_config(hip_ctx, config);
  FZ_CHECK(st == ATTNMETA_OK, "%s: launch config refused: %s", what, attnmeta_last_error(hip_ctx));
  st = attnmeta_build_step(hip_ctx, step, NULL);
  FZ_CHECK(st == ATTNMETA_OK, "%s: valid step refused: %s (%s)", what, attnmeta_status_string(st),
           attnmeta_last_error(hip_ctx));
  st = attnmeta_synchronize(hip_ctx, NULL);
  FZ_CHECK(st == ATTNMETA_OK, "%s: synchronize failed: %s", what, attnmeta_last_error(hip_ctx));
}

attnmeta_context *fz_hip_cpu_context(void) { return fz_hip_cpu_enabled() ? hip_ctx : NULL; }
