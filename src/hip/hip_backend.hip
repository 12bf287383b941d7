// SPDX-License-Identifier: Apache-2.0
/* The HIP backend module: the shared kernel body and launch glue, built
 * with HIP's runtime names. */
#include "hip_runtime_map.h"

#include "am_gpu_backend.h"
