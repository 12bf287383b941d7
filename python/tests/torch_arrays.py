# SPDX-License-Identifier: Apache-2.0
"""The harness's buffers as torch tensors on one device."""

import numpy as np
import torch

import cases


class TorchArrays(cases.Arrays):
    def __init__(self, device):
        self.device = torch.device(device)

    def _dtype(self, int64):
        return torch.int64 if int64 else torch.int32

    def alloc(self, n, int64=False):
        guard = cases.GUARD64 if int64 else cases.GUARD32
        base = torch.full((n + 2 * cases.GUARD,), guard, dtype=self._dtype(int64), device=self.device)
        view = base[cases.GUARD:cases.GUARD + n]
        view.fill_(cases.POISON64 if int64 else cases.POISON32)
        return base, view

    def alloc_table(self, rows, cols, stride):
        base = torch.full((rows * stride + 2 * cases.GUARD,), cases.GUARD32, dtype=torch.int32,
                          device=self.device)
        view = base[cases.GUARD:cases.GUARD + rows * stride].view(rows, stride)
        view.fill_(cases.POISON32)
        return base, view[:, :cols]

    def input(self, values, int64=False):
        return torch.tensor(values, dtype=self._dtype(int64), device=self.device)

    def input_table(self, flat, rows, stride, cols):
        full = torch.tensor(flat, dtype=torch.int32, device=self.device).view(rows, stride)
        return full[:, :cols]

    def read(self, x):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return x.cpu().numpy()


def as_numpy(x):
    return np.asarray(x.cpu().numpy())
