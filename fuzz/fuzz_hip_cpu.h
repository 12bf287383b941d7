// SPDX-License-Identifier: Apache-2.0
/*
 * The HIP-CPU mode of fuzz_step (env ATTNMETA_FUZZ_HIP_CPU=1): every valid
 * input also runs through the HIP backend module built on HIP-CPU
 * (cmake -DATTNMETA_HIP_CPU_ROOT=..., module folder <build>/hip-cpu given
 * as ATTNMETA_MODULE_DIR), with real multi-thread blocks: several lanes and
 * groups per block, several blocks, the staging loop and the barrier. The
 * launch goes through attnmeta_build_step, so every kernel parameter is
 * the one the library's own host code derives (step.c), not a copy.
 *
 * HIP-CPU's device memory is host memory: the step's pointers are the
 * harness's exact-size host buffers, so AddressSanitizer sees any access
 * past them. A real GPU module is refused (its device could not read them).
 */
#ifndef ATTNMETA_FUZZ_HIP_CPU_H
#define ATTNMETA_FUZZ_HIP_CPU_H

#include "attnmeta/attnmeta.h"

/* 1 when the mode is asked for; then the HIP backend is open (a HIP-CPU
 * module that cannot be opened ends the run with a failure). */
int fz_hip_cpu_enabled(void);

/* The launch config of the HIP run, from a decoded GPU shape: lanes
 * 3 x lanes + 1 (4 to 97, most not powers of two), groups + 1 (2 to 9),
 * the grid as decoded. Stage and vector 0/1 as decoded. */
attnmeta_launch_config fz_hip_cpu_config(int lanes, int groups, int grid, int stage, int vector);

/* Runs `step` on the HIP backend with `config` and waits for it; a refused
 * or failed call fails the run. `what` receives a description of the run
 * for failure messages. */
void fz_hip_cpu_build_step(const attnmeta_step *step, const attnmeta_launch_config *config,
                           char *what, size_t what_size);

/* The HIP backend's context on HIP-CPU, or NULL when the mode is off. */
attnmeta_context *fz_hip_cpu_context(void);

#endif /* ATTNMETA_FUZZ_HIP_CPU_H */
