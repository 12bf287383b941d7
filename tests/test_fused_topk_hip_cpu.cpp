// SPDX-License-Identifier: Apache-2.0
/*
 * A HIP kernel that calls the device functions of
 * attnmeta/device/topk_slot.h, run on the CPU through HIP-CPU (blocks of
 * several threads, each block a token's row, its threads sharing the row
 * through attnmeta_topk_slot_row_part, counts and flags joined with
 * atomics), against attnmeta_convert_topk on the CPU backend: outputs
 * between poisoned guard zones, counts and error word, bit for bit, over
 * seeded random inputs with hostile data. Prints one line and exits 0 on
 * success.
 */
#include <hip/hip_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "attnmeta/attnmeta.h"
#include "attnmeta/device/topk_slot.h"
#include "fused_topk_rows.h"
#include "op_inputs.h"

namespace {

constexpr int32_t kGuard = 16;
constexpr int32_t kPoison = 0x5A5A5A5A;

/* HIP-CPU's __global__ carries g++'s `simd` attribute, which warns on a
 * struct parameter (-Werror); its launch calls the kernel as an ordinary
 * function, so the kernel is spelled as one here. */
__attribute__((flatten)) void fused_rows(attnmeta_topk op) { amt_fused_rows(&op); }

uint64_t state = 0x1234;
uint32_t rnd(uint32_t n) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return n ? static_cast<uint32_t>(state >> 33) % n : 0;
}

struct Buffers {
  std::vector<int32_t> out, cnt;
  int32_t err = 1 << 30;
  Buffers(size_t out_elems, size_t cnt_elems) : out(out_elems, kPoison), cnt(cnt_elems, kPoison) {}
};

}  // namespace

int main() {
  attnmeta_context *ctx = nullptr;
  if (attnmeta_open(&ctx, ATTNMETA_BACKEND_CPU, 0) != ATTNMETA_OK) {
    std::printf("FAIL attnmeta_open: %s\n", attnmeta_open_error());
    return 1;
  }
  int failures = 0, rounds = 0;
  for (int round = 0; round < 60 && failures == 0; ++round, ++rounds) {
    const int32_t T = 1 + static_cast<int32_t>(rnd(40)), K = 1 + static_cast<int32_t>(rnd(70));
    const int32_t R = static_cast<int32_t>(rnd(4)), cols = static_cast<int32_t>(rnd(6));
    const int32_t bs = 1 << rnd(6), P = static_cast<int32_t>(rnd(3));
    const int32_t world = rnd(3) ? 1 : 2 + static_cast<int32_t>(rnd(2));
    const int32_t lanes = 1 + static_cast<int32_t>(rnd(48));
    const int counted = static_cast<int>(rnd(2));
    std::vector<int32_t> topk(static_cast<size_t>(T) * K), req(T), pre(T), table(static_cast<size_t>(R) * cols + 1),
        ws(P + 1);
    std::vector<int64_t> slot(T);
    for (auto &x : topk) {
      const uint32_t kind = rnd(8);
      x = kind == 0 ? -1 : kind == 1 ? INT32_MAX : static_cast<int32_t>(rnd(static_cast<uint32_t>((cols + 2) * bs * world)));
    }
    for (int32_t t = 0; t < T; ++t) {
      req[t] = static_cast<int32_t>(rnd(static_cast<uint32_t>(R + 2))) - 1; /* -1 and R: hostile */
      pre[t] = rnd(3) ? -1 : static_cast<int32_t>(rnd(static_cast<uint32_t>(P + 1)));
      slot[t] = rnd(5) ? 7 : -3;
    }
    for (auto &id : table) id = rnd(6) ? static_cast<int32_t>(rnd(50000)) : rnd(2) ? -5 : INT32_MAX / 2;
    for (auto &w : ws) w = rnd(4) ? static_cast<int32_t>(rnd(1u << 20)) : INT32_MAX - 3;

    attnmeta_topk op;
    amt_topk_rows(&op, topk.data(), T, K, nullptr);
    amt_topk_table(&op, req.data(), R, R * cols > 0 ? table.data() : nullptr, cols, bs);
    amt_topk_dcp(&op, world, world - 1, 1 + static_cast<int32_t>(rnd(3)));
    const int32_t *prefill = rnd(2) ? pre.data() : nullptr;
    amt_topk_prefill(&op, prefill, prefill && P ? ws.data() : nullptr, prefill ? P : 0);
    op.token_slot = rnd(2) ? slot.data() : nullptr;

    const size_t out_elems = static_cast<size_t>(T) * K + 2 * kGuard, cnt_elems = T + 2 * kGuard;
    Buffers lib(out_elems, cnt_elems), hip(out_elems, cnt_elems);
    op.out = lib.out.data() + kGuard;
    op.valid_count = counted ? lib.cnt.data() + kGuard : nullptr;
    op.error_word = &lib.err;
    if (attnmeta_convert_topk(ctx, &op, nullptr) != ATTNMETA_OK) {
      std::printf("FAIL round %d: attnmeta_convert_topk: %s\n", round, attnmeta_last_error(ctx));
      return 1;
    }
    op.out = hip.out.data() + kGuard;
    op.valid_count = counted ? hip.cnt.data() + kGuard : nullptr;
    op.error_word = &hip.err;
    for (int32_t t = 0; counted && t < T; ++t) op.valid_count[t] = 0;
    hipLaunchKernelGGL(fused_rows, dim3(static_cast<unsigned>(T)), dim3(static_cast<unsigned>(lanes)), 0, nullptr, op);
    if (hipDeviceSynchronize() != hipSuccess) {
      std::printf("FAIL round %d: the kernel did not run\n", round);
      return 1;
    }
    for (size_t i = 0; i < out_elems; ++i)
      if (hip.out[i] != lib.out[i] && failures++ < 4)
        std::printf("FAIL round %d (%d lanes): out element %lld = %d, library %d\n", round, lanes,
                    static_cast<long long>(i) - kGuard, hip.out[i], lib.out[i]);
    for (size_t i = 0; i < cnt_elems; ++i)
      if (hip.cnt[i] != lib.cnt[i] && failures++ < 4)
        std::printf("FAIL round %d: valid_count element %lld = %d, library %d\n", round,
                    static_cast<long long>(i) - kGuard, hip.cnt[i], lib.cnt[i]);
    if (hip.err != lib.err && failures++ < 4)
      std::printf("FAIL round %d: error word 0x%x, library 0x%x\n", round, static_cast<unsigned>(hip.err),
                  static_cast<unsigned>(lib.err));
  }
  attnmeta_close(ctx);
  if (failures) return 1;
  std::printf("PASS fused top-k HIP kernel on HIP-CPU: %d rounds equal to attnmeta_convert_topk\n", rounds);
  return 0;
}
