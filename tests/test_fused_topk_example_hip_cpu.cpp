// SPDX-License-Identifier: Apache-2.0
/*
 * The selection kernel of examples/fused_topk (select_kernel.cuh), the
 * source the CUDA example runs on the H200 test machine, run on the CPU
 * through HIP-CPU with its real block of FT_THREADS threads: positions
 * (unfused) and slots (fused) against the example's reference (sorting,
 * then attnmeta_convert_topk on the CPU backend), with rows of ties,
 * short contexts, a negative block id and a poisoned element past the
 * last row. Prints one line; exit status 0 on success.
 */
#include <hip/hip_runtime.h>

#include <cstdio>
#include <vector>

#include "problem.h"
#include "select_kernel.cuh"

int main() {
  struct Shape { int32_t T, R, L, K; };
  // K = 3000: two rounds of the final loop; K = 9000 > FT_MAX_L: kept <= L, the rest -1
  const Shape shapes[] = {{1, 1, 100, 512}, {5, 2, 3000, 256}, {7, 3, 8192, 2048}, {6, 6, 777, 1},
                          {4, 2, 1030, 1000}, {3, 2, 8192, 3000}, {2, 2, 600, 9000}};
  attnmeta_context *cpu = nullptr;
  int failures = 0;
  if (attnmeta_open(&cpu, ATTNMETA_BACKEND_CPU, 0) != ATTNMETA_OK) {
    std::printf("FAIL attnmeta_open: %s\n", attnmeta_open_error());
    return 1;
  }
  for (const Shape &s : shapes) {
    ft_problem p;
    if (!ft_problem_make(&p, s.T, s.R, s.L, s.K, 99u + static_cast<uint32_t>(s.L))) return 1;
    p.table[p.cols - 1] = -5; /* request 0's last block: -1 entries and their flag */
    const size_t n = static_cast<size_t>(p.T) * p.K;
    std::vector<int32_t> want_pos(n), want(n), pos(n + 1, 0x5A5A5A5A), slots(n + 1, 0x5A5A5A5A);
    int32_t want_err = 0, err[2] = {0, 0};
    if (!ft_reference_select(&p, want_pos.data())) return 1;
    attnmeta_topk op = ft_topk_op(&p, want_pos.data(), p.req_id, p.table, want.data(), &want_err);
    if (attnmeta_convert_topk(cpu, &op, nullptr) != ATTNMETA_OK) {
      std::printf("FAIL attnmeta_convert_topk: %s\n", attnmeta_last_error(cpu));
      return 1;
    }
    op = ft_topk_op(&p, nullptr, p.req_id, p.table, slots.data(), &err[0]);
    hipLaunchKernelGGL(ft_select_kernel<true>, dim3(static_cast<unsigned>(p.T)), dim3(FT_THREADS), 0, nullptr,
                       p.scores, p.L, p.seq_lens, op, slots.data());
    op = ft_topk_op(&p, nullptr, p.req_id, p.table, pos.data(), &err[1]);
    hipLaunchKernelGGL(ft_select_kernel<false>, dim3(static_cast<unsigned>(p.T)), dim3(FT_THREADS), 0, nullptr,
                       p.scores, p.L, p.seq_lens, op, pos.data());
    if (hipDeviceSynchronize() != hipSuccess) return 1;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += pos[i] != want_pos[i] || slots[i] != want[i];
    bad += pos[n] != 0x5A5A5A5A || slots[n] != 0x5A5A5A5A;
    /* the positions form converts nothing, so raises nothing */
    if (bad || err[0] != want_err || err[1] != 0) {
      failures++;
      std::printf("FAIL T=%d L=%d K=%d: %zu entries differ, "
                  "error words 0x%x 0x%x (reference 0x%x, 0)\n",
                  p.T, p.L, p.K, bad, static_cast<unsigned>(err[0]), static_cast<unsigned>(err[1]),
                  static_cast<unsigned>(want_err));
    }
    ft_problem_free(&p);
  }
  attnmeta_close(cpu);
  if (failures) return 1;
  std::printf("PASS the fused top-k example's kernel on HIP-CPU: %zu shapes equal to the reference\n",
              sizeof shapes / sizeof shapes[0]);
  return 0;
}
