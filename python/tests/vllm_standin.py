# SPDX-License-Identifier: Apache-2.0
"""A stand-in for the parts of vLLM that attnmeta.integrations.vllm routes,
written from reading vLLM's code: the same module paths, class, method,
function and kernel names, parameters, persistent buffers and branches
(varlen, flattened and native indexer decode, DCP, KV compression, lazy
imports inside build(), names imported into other modules, kernel objects
launched inline as ``kernel[grid](...)``), computing what vLLM computes.

Its "Triton kernels" are NumPy functions behind objects that count their
launches (:data:`LAUNCHES`, by kernel name); the torch operations between
them are counted too (``torch.<op>``). Arrays are NumPy arrays or torch
tensors (:class:`Arrays`); a kernel given torch tensors works on host
copies and writes them back, so the stand-in runs anywhere (it is a
reference, not something to capture in a CUDA graph).

install(monkeypatch, xp, **options) puts the modules into sys.modules."""

import collections
import sys
import types

import numpy as np

LAUNCHES = collections.Counter()


def cdiv(a, b):
    return -(-a // b)


class Arrays:
    """The array operations the stand-in needs, for NumPy or torch; each
    device operation is counted in LAUNCHES as torch.<name>."""

    def __init__(self, np=np, torch=None, device="cpu"):
        self.np, self.torch, self.device = np, torch, device

    def _op(self, name):
        LAUNCHES["torch." + name] += 1

    def _dtype(self, dtype):
        if self.torch is None:
            return dtype
        return {np.int32: self.torch.int32, np.int64: self.torch.int64,
                np.bool_: self.torch.bool}[dtype]

    # allocation (no launch counted: vLLM allocates its buffers once)
    def array(self, values, dtype=np.int32):
        if self.torch is not None:
            return self.torch.tensor(values, dtype=self._dtype(dtype), device=self.device)
        return np.array(values, dtype=dtype)

    def i32(self, values):
        return self.array(values, np.int32)

    def host(self, values):
        """A host (CPU) int32 array: vLLM's *_cpu tensors."""
        if self.torch is not None:
            return self.torch.tensor(values, dtype=self.torch.int32)
        return np.array(values, dtype=np.int32)

    def full(self, shape, value, dtype=np.int32):
        if self.torch is not None:
            # torch.full takes a sequence of ints, where NumPy also takes one int
            shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(n) for n in shape)
            return self.torch.full(shape, value, dtype=self._dtype(dtype), device=self.device)
        return np.full(shape, value, dtype=dtype)

    def zeros(self, shape, dtype=np.int32):
        return self.full(shape, 0, dtype)

    def arange(self, n):
        if self.torch is not None:
            return self.torch.arange(n, dtype=self.torch.int32, device=self.device)
        return np.arange(n, dtype=np.int32)

    def empty_like(self, x):
        if self.torch is not None:
            return self.torch.empty_like(x)
        return np.empty_like(x)

    # device operations (counted)
    def fill(self, x, value):
        self._op("fill")
        x[...] = value

    def assign(self, dst, src):
        """dst[...] = src (one copy or elementwise kernel)."""
        self._op("copy")
        dst[...] = src

    def diff(self, x, out=None):
        self._op("diff")
        d = x[1:] - x[:-1]
        if out is not None:
            out[...] = d
            return out
        return d

    def repeat(self, x, counts, total):
        self._op("repeat_interleave")
        if self.torch is not None:
            return self.torch.repeat_interleave(x, counts.to(self.torch.int64), dim=0,
                                                output_size=total)
        return np.repeat(x, counts, axis=0)[:total]

    def clamp_min(self, x, low, name="clamp"):
        self._op(name)
        if self.torch is not None:
            return x.clamp(min=low)
        return np.maximum(x, low)

    def ge(self, x, value):
        self._op("ge")
        return x >= value

    def floordiv(self, x, d):
        self._op("floordiv")
        return x // d

    # host side
    def to_np(self, x):
        if self.torch is not None and isinstance(x, self.torch.Tensor):
            return x.detach().cpu().numpy().copy()
        return x

    def tolist(self, x):
        return x.tolist()

    def item(self, x):
        return int(x.item()) if hasattr(x, "item") else int(x)


class Kernel:
    """A stand-in Triton kernel: ``kernel[grid](*args, **kwargs)`` counts one
    launch under its name and runs ``body(grid, *args, **kwargs)`` on NumPy
    views (torch tensors: host copies, written back afterwards).
    ``arg_names`` are the kernel's parameters, as Triton's JITFunction has."""

    def __init__(self, name, body, arg_names):
        self.__name__ = name
        self.body = body
        self.arg_names = list(arg_names)

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            LAUNCHES[self.__name__] += 1
            host, back = [], []
            for a in args:
                if hasattr(a, "detach"):  # torch tensor
                    h = a.detach().cpu().numpy().copy()
                    back.append((a, h))
                    host.append(h)
                else:
                    host.append(a)
            self.body(tuple(grid), *host, **kwargs)
            for tensor, h in back:
                import torch

                tensor.copy_(torch.from_numpy(h).to(tensor.device))

        return launch

    def __repr__(self):
        return "<stand-in kernel %s>" % self.__name__


class CallableKernel(Kernel):
    """A kernel launched by calling an instance (vLLM's VllmTritonJitKernel
    style); ``grid_of(*args)`` gives the grid."""

    def __init__(self, name, body, arg_names, grid_of):
        Kernel.__init__(self, name, body, arg_names)
        self.grid_of = grid_of

    def __call__(self, *args):
        self[self.grid_of(*args)](*args)


def stride0(x):
    """Elements between rows (torch's stride(0), NumPy's strides[0])."""
    return x.stride(0) if callable(getattr(x, "stride", None)) else x.strides[0] // x.itemsize


def token_request(qsl, token, num_reqs):
    """The request of each token: the first r with qsl[r + 1] > token, else
    the last request (as vLLM's binary search)."""
    ends = np.asarray(qsl[1:num_reqs + 1], dtype=np.int64)
    found = np.searchsorted(ends, np.asarray(token, dtype=np.int64), side="right")
    return np.minimum(found, num_reqs - 1)


def _package(names):
    """Modules for every name and every package above it, linked."""
    full = set()
    for name in names:
        parts = name.split(".")
        full.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    modules = {name: types.ModuleType(name) for name in full}
    for name in full:
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(modules[parent], child, modules[name])
    return modules


def make_modules(xp, version="0.7.2.dev0+g1234abcd", **options):
    """The stand-in vllm package: {module name: module}. ``version``: a
    source checkout's fallback version by default."""
    import vllm_standin_dsv4
    import vllm_standin_indexer
    import vllm_standin_swa_groups

    modules = _package(vllm_standin_indexer.MODULES + vllm_standin_dsv4.MODULES
                       + vllm_standin_swa_groups.MODULES)
    modules["vllm"].__version__ = version
    vllm_standin_indexer.fill(modules, xp, **options)
    vllm_standin_dsv4.fill(modules, xp, **options)
    vllm_standin_swa_groups.fill(modules, xp, **options)
    return modules


def install(monkeypatch, xp, **kw):
    """The stand-in modules in sys.modules (undone by monkeypatch); the
    launch counts start from zero."""
    modules = make_modules(xp, **kw)
    for name in list(sys.modules):
        if name == "vllm" or name.startswith("vllm."):
            monkeypatch.delitem(sys.modules, name)
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    LAUNCHES.clear()
    return modules


def standin_launches():
    """Launches of stand-in kernels and torch operations since the last
    reset, by name (a copy)."""
    return dict(LAUNCHES)
