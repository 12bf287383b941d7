# SPDX-License-Identifier: Apache-2.0
"""The handle of an SGLang patch. It is the vLLM handle (applied, skipped
and why, launch and fallback counters, bindings, an undo) for the package
``sglang``: restore() also gives SGLang's objects back to the sglang
modules imported while the patch was in force."""

import importlib
import threading
from typing import Any, Optional, Sequence

from ._vllm_handle import VllmPatch, _vllm_modules

PACKAGE = "sglang"

lock = threading.Lock()
# The patch in force (patch_sglang sets it, restore clears it); under `lock`.
in_force = None  # type: Optional[SglangPatch]


class SglangPatch(VllmPatch):
    """What :func:`patch_sglang` did: ``applied``, ``skipped`` (target ->
    why it was left to SGLang), ``launches`` (target -> attnmeta launches),
    ``fallbacks`` and ``fallback_reasons`` (launches handed to SGLang's own
    kernel), ``bindings`` (target -> the ``module.name`` places replaced);
    ``restore()`` or the end of a ``with`` block puts SGLang's code back."""

    def __init__(self, sglang_version: str) -> None:
        VllmPatch.__init__(self, sglang_version)
        self.sglang_version = sglang_version

    def find(self, label: str, modules: Sequence[str], name: str) -> Any:
        """``name`` from the first of ``modules`` that defines it, or None
        with why in ``skipped[label]``."""
        tried = []
        for module_name in modules:
            try:
                module = importlib.import_module(module_name)
            except Exception as exc:  # an SGLang module may fail in other ways than ImportError
                tried.append("cannot import %s: %s: %s" % (module_name, type(exc).__name__, exc))
                continue
            found = module.__dict__.get(name)
            if found is not None:
                return found
            tried.append("%s has no %s" % (module_name, name))
        self.skipped[label] = "; ".join(tried)
        return None

    def restore(self) -> None:
        """SGLang's own kernels back; safe to call twice."""
        global in_force
        with lock:
            # sglang modules imported while the patch was in force took the
            # routed objects by name (_made keeps each routed object alive)
            sglang_kernel = {id(routed): original for routed, original in self._made.values()}
            for module in _vllm_modules(PACKAGE):
                for attr, value in list(vars(module).items()):
                    if id(value) in sglang_kernel:
                        setattr(module, attr, sglang_kernel[id(value)])
            VllmPatch.restore(self)
            if in_force is self:
                in_force = None

    def __repr__(self) -> str:
        return VllmPatch.__repr__(self).replace("vllm.VllmPatch vLLM", "sglang.SglangPatch SGLang",
                                                1)
