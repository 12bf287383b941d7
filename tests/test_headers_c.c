// SPDX-License-Identifier: Apache-2.0
/*
 * Compile check: the public headers (the device functions of
 * attnmeta/device/ and the conformance kit's included) and the
 * dialect/kernel headers are valid C11 under -std=c11 -pedantic -Wall -Wextra
 * -Werror. Built as an object library; the build itself is the test.
 */
#include "attnmeta/attnmeta.h"
#include "attnmeta/device/topk_slot.h"
#include "am_dialect.h"
#include "am_step_params.h"
#include "am_token_math.h"
#include "am_step_kernel.h"
#include "am_row_copy.h"
#include "am_step_choices.h"
#include "am_dsv4.h"
#include "am_step_translate.h"
#include "am_topk_params.h"
#include "am_topk_kernel.h"
#include "attnmeta/conformance/vecfile.h"
#include "attnmeta/conformance/vecfile_pool.h"
#include "attnmeta/conformance/vecfile_topk.h"
#include "attnmeta/conformance/vecrun.h"

/* Touch a few names so the check is not an empty translation unit. */
int attnmeta_header_check_c(void);
int attnmeta_header_check_c(void) {
  const am_thread th = am_make_thread(0, 1, 0, 1, 0, 1);
  return (int)(am_clamp64(th.block_dim, 0, 4) + ATTNMETA_VERSION +
               (int)sizeof(am_step_params) + (int)sizeof(attnmeta_step));
}
