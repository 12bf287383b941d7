# SPDX-License-Identifier: Apache-2.0
"""The handle of an SGLang patch. It is the vLLM handle (applied, skipped
and why, launch and fallback counters, bindings, an undo) for the package
``sglang``: restore() also gives SGLang's objects back to the sglang
modules imported while the patch was in force."""

import threading
from typing import Any, Optional

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

    def restore(self) -> None:
        """SGLang's own kernels back; safe to call twice."""
        global in_force
        with lock:
            for module in _vllm_modules(PACKAGE):
                for attr, value in list(module.__dict__.items()):
                    made = self._made.get(id(value))
                    if made is not None and made[0] is value:
                        setattr(module, attr, made[1])
            VllmPatch.restore(self)
            if in_force is self:
                in_force = None

    def __enter__(self) -> "SglangPatch":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.restore()

    def __repr__(self) -> str:
        parts = ["SGLang %s" % self.sglang_version,
                 "routed through attnmeta: %s" % (", ".join(self.applied) or "nothing")]
        parts += ["%s not routed: %s" % item for item in sorted(self.skipped.items())]
        return "<attnmeta.integrations.sglang.SglangPatch %s>" % "; ".join(parts)
