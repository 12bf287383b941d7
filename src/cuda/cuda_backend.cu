// SPDX-License-Identifier: Apache-2.0
/* The CUDA backend module: the shared kernel body and launch glue, built
 * with CUDA's runtime names. */
#include "cuda_runtime_map.h"

#include "am_gpu_backend.h"
