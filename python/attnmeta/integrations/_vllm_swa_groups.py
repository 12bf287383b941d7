# SPDX-License-Identifier: Apache-2.0
"""The vLLM target ``swa_groups``: the batched DeepSeek-V4.1 SWA builder
(``SWAWindowMetadata`` of a ``swa_metadata`` module, whose ``_launch``
makes one ``_batched_swa_indices_and_lens_kernel`` launch over every SWA
group of the step), routed to one attnmeta launch of the grouped SWA rows
(contract section 7) when the groups' tables are views of one buffer at
equal spacing, as the grouped step needs them."""

from typing import Any, List, Optional, Sequence, Tuple

from ._vllm_handle import VllmPatch, params, wraps

LABEL = "swa_groups"
MODULE_BASENAME = "swa_metadata"
BATCHED_SWA_ARGS = ("table_ptrs", "indices_ptr", "indices_width", "lens_ptr", "rows",
                    "window_size", "query_start_loc_ptr", "seq_lens_ptr",
                    "token_to_req_indices_ptr", "is_valid_token_ptr", "block_table_stride",
                    "block_size", "replay_start_ptr", "token_offset", "TRITON_BLOCK_SIZE")
LAUNCH_PARAMS = ("self", "indices", "lens", "token_offset", "num_tokens", "block_size", "rows")


def _builder_module() -> Optional[Any]:
    """The loaded vLLM module ``*.swa_metadata`` that defines SWAWindowMetadata."""
    import sys

    for name, module in sorted(sys.modules.items()):
        if (module is not None and name.startswith("vllm.")
                and name.rpartition(".")[2] == MODULE_BASENAME
                and isinstance(module.__dict__.get("SWAWindowMetadata"), type)):
            return module
    return None


def _address(x: Any) -> int:
    if hasattr(x, "data_ptr"):
        return int(x.data_ptr())
    return int(x.__array_interface__["data"][0])


def _root(x: Any) -> Any:
    """The allocation a table is a view of (torch: its storage's address)."""
    if hasattr(x, "untyped_storage"):
        return int(x.untyped_storage().data_ptr())
    if hasattr(x, "storage") and hasattr(x, "data_ptr"):  # torch before 2.0
        return int(x.storage().data_ptr())
    while getattr(x, "base", None) is not None:
        x = x.base
    return id(x)


def stacked_view(tables: Sequence[Any]) -> Tuple[Optional[Any], str]:
    """The G tables as one [G, R, cols] view of the buffer they share, with
    the spacing of their addresses as the group stride; (None, why) when
    they are not views of one buffer at one positive spacing."""
    tables = list(tables)
    if not tables:
        return None, "no SWA group tables"
    first = tables[0]
    if any(tuple(t.shape) != tuple(first.shape) or t.dtype != first.dtype for t in tables):
        return None, "the group tables differ in shape or type"
    if len(tables) == 1:
        return first[None], ""
    if len({_root(t) for t in tables}) != 1:
        return None, ("the group tables are separate allocations: the grouped step reads one "
                      "buffer with a group stride")
    gaps = {_address(b) - _address(a) for a, b in zip(tables, tables[1:])}
    item = int(first.itemsize) if hasattr(first, "itemsize") else first.element_size()
    gap = gaps.pop() if len(gaps) == 1 else 0
    if gap <= 0 or gap % item:
        return None, "the group tables are not equally spaced in their buffer"
    shape = (len(tables),) + tuple(first.shape)
    if hasattr(first, "as_strided"):  # torch
        return first.as_strided(shape, (gap // item,) + tuple(first.stride())), ""
    import numpy as np

    return np.lib.stride_tricks.as_strided(first, shape, (gap,) + first.strides), ""


def swa_groups(patch: VllmPatch) -> None:
    module = _builder_module()
    if module is None:
        patch.skipped[LABEL] = ("no loaded vllm module *.%s defines SWAWindowMetadata (vLLM's "
                                "batched DeepSeek-V4.1 SWA builder)" % MODULE_BASENAME)
        return
    cls = module.SWAWindowMetadata
    kernel = module.__dict__.get("_batched_swa_indices_and_lens_kernel")
    names = tuple(getattr(kernel, "arg_names", None) or ("?",))
    if names != BATCHED_SWA_ARGS:
        patch.skipped[LABEL] = "%s._batched_swa_indices_and_lens_kernel takes (%s), not (%s)" % (
            module.__name__, ", ".join(names), ", ".join(BATCHED_SWA_ARGS))
        return
    original = cls.__dict__.get("_launch")
    have = params(original) if original is not None else None
    if have != LAUNCH_PARAMS:
        patch.skipped[LABEL] = "SWAWindowMetadata._launch takes (%s), not (%s)" % (
            ", ".join(have or ("?",)), ", ".join(LAUNCH_PARAMS))
        return
    from .._dsv4_dropins import batched_swa_indices_and_lens

    @wraps(original)
    def _launch(self: Any, indices: Any, lens: Any, *, token_offset: int, num_tokens: int,
                block_size: int, rows: int) -> Any:
        tables: List[Any] = list(getattr(self, "_group_tables", []))
        stacked, reason = stacked_view(tables)
        if stacked is not None and indices is not None and lens is not None:
            try:
                batched_swa_indices_and_lens(
                    stacked, indices, self.index_width, lens, rows, self.window_size,
                    self.query_start_loc, self.seq_lens, self.token_to_req_indices,
                    self.is_valid_token, self._table_stride, block_size, self.replay_start,
                    token_offset, num_tokens)
                patch.count(LABEL)
                return None
            except (TypeError, ValueError) as exc:  # attnmeta wrote nothing: vLLM's kernel runs
                reason = "%s: %s" % (type(exc).__name__, exc)
        patch.fell_back(LABEL, reason or "no buffers")
        return original(self, indices, lens, token_offset=token_offset, num_tokens=num_tokens,
                        block_size=block_size, rows=rows)

    patch.replace(cls, "_launch", _launch, LABEL)
    patch.apply(LABEL)
