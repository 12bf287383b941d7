// SPDX-License-Identifier: Apache-2.0
/* The compile check of test_fused_topk_device.cu, under the HIP compiler. */
#include "test_fused_topk_device.cu"
