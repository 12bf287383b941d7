// SPDX-License-Identifier: Apache-2.0
/*
 * The device functions of attnmeta/device/topk_slot.h in CUDA kernels on
 * the GPU (the kernels of tests/test_fused_topk_device.cu: lanes sharing a
 * row with atomics for counts and flags, entry by entry, one thread a
 * whole row with compaction), against attnmeta_convert_topk on the CUDA
 * backend and on the CPU backend, bit for bit: outputs between poisoned
 * guard zones, counts, error word. Seeded random inputs with hostile data
 * (requests outside [0, R), positions past the table, negative and huge
 * block ids, workspace indices at or past P, DCP, negative token_slot).
 */
#include <cstdio>
#include <cstring>
#include <vector>

extern "C" {
#include "gpu_check.h"
}
#include "../op_inputs.h"
#include "../test_fused_topk_device.cu"

namespace {

constexpr int kGuard = 16;
constexpr int32_t kPoison = 0x5A5A5A5A;
uint64_t state = 0xC0FFEE;
uint32_t rnd(uint32_t n) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return n ? static_cast<uint32_t>(state >> 33) % n : 0;
}

template <typename T>
T *to_device(const std::vector<T> &v) {
  T *d = nullptr;
  if (v.empty()) return nullptr;
  AMG_CUDA(cudaMalloc(&d, v.size() * sizeof(T)));
  AMG_CUDA(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

struct Result {
  std::vector<int32_t> out, cnt;
  int32_t err;
};

enum Way { kLibrary, kLanes, kEntries, kWholeRows };
const char *const kWayNames[] = {"attnmeta_convert_topk (CUDA)", "lanes", "entries", "whole rows"};

}  // namespace

int main() {
  amg_require_device("fused_topk_gpu");
  attnmeta_context *gpu = amg_open_cuda("fused_topk_gpu");
  attnmeta_context *cpu = nullptr;
  if (!AMG_CHECK(attnmeta_open(&cpu, ATTNMETA_BACKEND_CPU, 0) == ATTNMETA_OK, "CPU backend")) return amg_finish("fused_topk_gpu");
  for (int round = 0; round < 200; ++round) {
    const int32_t T = 1 + static_cast<int32_t>(rnd(300)), K = 1 + static_cast<int32_t>(rnd(600));
    const int32_t R = static_cast<int32_t>(rnd(6)), cols = static_cast<int32_t>(rnd(12));
    const int32_t bs = rnd(4) ? 1 << rnd(7) : 3 + static_cast<int32_t>(rnd(60)), P = static_cast<int32_t>(rnd(3));
    const int32_t world = rnd(3) ? 1 : 2 + static_cast<int32_t>(rnd(2));
    const int counted = static_cast<int>(rnd(2)), compact = counted && rnd(2);
    std::vector<int32_t> topk(static_cast<size_t>(T) * K), req(T), pre(T), table(static_cast<size_t>(R) * cols), ws(P);
    std::vector<int64_t> slot(T);
    for (auto &x : topk) {
      const uint32_t kind = rnd(8);
      x = kind == 0 ? -1 : kind == 1 ? INT32_MAX : static_cast<int32_t>(rnd(static_cast<uint32_t>((cols + 2) * bs * world)));
    }
    for (int32_t t = 0; t < T; ++t) {
      req[t] = static_cast<int32_t>(rnd(static_cast<uint32_t>(R + 2))) - 1;
      pre[t] = rnd(3) ? -1 : static_cast<int32_t>(rnd(static_cast<uint32_t>(P + 1)));
      slot[t] = rnd(5) ? 7 : -3;
    }
    for (auto &id : table) id = rnd(6) ? static_cast<int32_t>(rnd(50000)) : rnd(2) ? -5 : INT32_MAX / 2;
    for (auto &w : ws) w = rnd(4) ? static_cast<int32_t>(rnd(1u << 20)) : INT32_MAX - 3;
    const bool with_pre = rnd(2), with_slot = rnd(2);

    attnmeta_topk host_op, dev_op;
    amt_topk_rows(&host_op, nullptr, T, K, nullptr);
    amt_topk_table(&host_op, nullptr, R, nullptr, cols, bs);
    amt_topk_dcp(&host_op, world, world - 1, 1 + static_cast<int32_t>(rnd(3)));
    host_op.num_prefill = with_pre ? P : 0;
    host_op.compact = compact;
    dev_op = host_op;
    host_op.topk = topk.data();
    host_op.req_id = req.data();
    host_op.block_table = table.empty() ? nullptr : table.data();
    host_op.prefill_req = with_pre ? pre.data() : nullptr;
    host_op.workspace_starts = with_pre && P ? ws.data() : nullptr;
    host_op.token_slot = with_slot ? slot.data() : nullptr;
    dev_op.topk = to_device(topk);
    dev_op.req_id = to_device(req);
    dev_op.block_table = to_device(table);
    int32_t *d_pre = to_device(pre), *d_ws = to_device(ws);
    int64_t *d_slot = to_device(slot);
    dev_op.prefill_req = with_pre ? d_pre : nullptr;
    dev_op.workspace_starts = with_pre && P ? d_ws : nullptr;
    dev_op.token_slot = with_slot ? d_slot : nullptr;

    const size_t out_elems = static_cast<size_t>(T) * K + 2 * kGuard, cnt_elems = T + 2 * kGuard;
    /* the CPU backend's result */
    Result want{std::vector<int32_t>(out_elems, kPoison), std::vector<int32_t>(cnt_elems, kPoison), 0};
    host_op.out = want.out.data() + kGuard;
    host_op.valid_count = counted ? want.cnt.data() + kGuard : nullptr;
    host_op.error_word = &want.err;
    if (!AMG_CHECK(attnmeta_convert_topk(cpu, &host_op, nullptr) == ATTNMETA_OK, "round %d: CPU: %s", round,
                   attnmeta_last_error(cpu)))
      break;
    int32_t *d_out, *d_cnt, *d_err;
    AMG_CUDA(cudaMalloc(&d_out, out_elems * 4));
    AMG_CUDA(cudaMalloc(&d_cnt, cnt_elems * 4));
    AMG_CUDA(cudaMalloc(&d_err, 4));
    for (int way = kLibrary; way <= kWholeRows; ++way) {
      if (way == kLanes && compact) continue;    /* in place only */
      if (way == kEntries && (compact || counted)) continue; /* plain rows */
      std::vector<int32_t> poison(out_elems, kPoison);
      Result got{std::vector<int32_t>(out_elems), std::vector<int32_t>(cnt_elems), 0};
      AMG_CUDA(cudaMemcpy(d_out, poison.data(), out_elems * 4, cudaMemcpyHostToDevice));
      AMG_CUDA(cudaMemcpy(d_cnt, poison.data(), cnt_elems * 4, cudaMemcpyHostToDevice));
      AMG_CUDA(cudaMemset(d_err, 0, 4));
      if (way == kLanes && counted) AMG_CUDA(cudaMemset(d_cnt + kGuard, 0, static_cast<size_t>(T) * 4));
      attnmeta_topk op = dev_op;
      op.out = d_out + kGuard;
      op.valid_count = counted ? d_cnt + kGuard : nullptr;
      op.error_word = d_err;
      const unsigned lanes = 1 + rnd(256);
      if (way == kLibrary)
        AMG_CHECK(attnmeta_convert_topk(gpu, &op, nullptr) == ATTNMETA_OK, "round %d: CUDA: %s", round, attnmeta_last_error(gpu));
      else if (way == kLanes)
        attnmeta_check_fused_rows<<<static_cast<unsigned>(T), lanes>>>(op);
      else if (way == kEntries)
        attnmeta_check_fused_entries<<<static_cast<unsigned>(T), lanes>>>(op, dev_op.topk);
      else
        attnmeta_check_fused_whole_rows<<<(static_cast<unsigned>(T) + 63) / 64, 64>>>(op);
      AMG_CUDA(cudaGetLastError());
      AMG_CUDA(cudaDeviceSynchronize());
      AMG_CUDA(cudaMemcpy(got.out.data(), d_out, out_elems * 4, cudaMemcpyDeviceToHost));
      AMG_CUDA(cudaMemcpy(got.cnt.data(), d_cnt, cnt_elems * 4, cudaMemcpyDeviceToHost));
      AMG_CUDA(cudaMemcpy(&got.err, d_err, 4, cudaMemcpyDeviceToHost));
      size_t bad = 0, first = 0;
      for (size_t i = 0; i < out_elems; ++i)
        if (got.out[i] != want.out[i] && !bad++) first = i;
      AMG_CHECK(bad == 0, "round %d, %s: %zu out elements differ from the CPU backend (first: element %lld, %d against %d)",
                round, kWayNames[way], bad, static_cast<long long>(first) - kGuard, bad ? got.out[first] : 0,
                bad ? want.out[first] : 0);
      AMG_CHECK(got.cnt == want.cnt, "round %d, %s: valid_count differs from the CPU backend", round, kWayNames[way]);
      AMG_CHECK(got.err == want.err, "round %d, %s: error word 0x%x, CPU backend 0x%x", round, kWayNames[way],
                static_cast<unsigned>(got.err), static_cast<unsigned>(want.err));
    }
    cudaFree(d_out);
    cudaFree(d_cnt);
    cudaFree(d_err);
    cudaFree(const_cast<int32_t *>(dev_op.topk));
    cudaFree(const_cast<int32_t *>(dev_op.req_id));
    cudaFree(const_cast<int32_t *>(dev_op.block_table));
    cudaFree(d_pre);
    cudaFree(d_ws);
    cudaFree(d_slot);
    if (amg_failed > 20) break;
  }
  attnmeta_close(cpu);
  attnmeta_close(gpu);
  return amg_finish("fused_topk_gpu");
}
