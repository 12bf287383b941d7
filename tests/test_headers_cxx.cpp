// SPDX-License-Identifier: Apache-2.0
/*
 * Compile check: the public headers (the device functions of
 * attnmeta/device/ and the conformance kit's included) and the
 * dialect/kernel headers are valid C++17 under -Wall -Wextra -Werror. Built as
 * an object library; the build itself is the test.
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

int attnmeta_header_check_cxx();
int attnmeta_header_check_cxx() {
  const am_thread th = am_make_thread(0, 1, 0, 1, 0, 1);
  return static_cast<int>(am_clamp64(th.block_dim, 0, 4)) + ATTNMETA_VERSION +
         static_cast<int>(sizeof(am_step_params) + sizeof(attnmeta_step));
}
