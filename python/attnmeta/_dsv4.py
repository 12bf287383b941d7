# SPDX-License-Identifier: Apache-2.0
"""The DeepSeek-V3.2/V4 products of a step (contract sections 5, 7, 8):
their checks for :class:`StepPlan`, and drop-ins named like the engine
functions they replace. They are built in the same launch as every other
product of the step."""

from typing import Any, Callable, Dict, List, Tuple

from . import _lib
from ._arrays import I32, I64, int32, table, vec

__all__ = [
    "DSV4_ARGS",
    "DSV4_OUTPUTS",
    "setup_dsv4",
]

# StepPlan's keyword arguments for these products, with their defaults.
DSV4_ARGS = dict(
    compressed_groups=(),
    swa_indices=None,
    swa_lens=None,
    swa_block_table=None,
    swa_block_size=64,
    swa_window=None,
    swa_width=None,
    swa_causal=True,
    c128a_rows=None,
    c128a_lens=None,
    c128a_block_table=None,
    c128a_ratio=128,
    c128a_block_size=2,
    c128a_width=None,
    c128a_local=False,
)

# Buffers by kind, for StepPlan.views(): rows [T, width], [C] and [R] vectors.
DSV4_OUTPUTS = dict(rows=("swa_indices", "c128a_rows"), capacity=("swa_lens", "c128a_lens"))

_GROUP_KEYS = frozenset(("block_table", "ratio", "block_size", "slot_mapping", "seq_lens_out"))


def _rows(buf: Any, name: str) -> Tuple[Tuple[Any, Any, int, int, int], Any]:
    """A row output: 2-D, or 3-D with a middle dimension of 1 (vLLM's
    [tokens, 1, width] buffers), seen as [tokens, width]."""
    shape = getattr(buf, "shape", None)
    if shape is not None and len(shape) == 3 and shape[1] == 1:
        buf = buf.reshape(shape[0], shape[2])
    return table(buf, name, out=True), buf


def setup_dsv4(
    args: Dict[str, Any],
    step: Any,
    keep: Dict[str, Any],
    qptr: Any,
    check_dev: Callable[[Any, str], None],
    req_limits: List[Tuple[int, str, str]],
    token_limits: List[Tuple[int, str, str]],
    cap_lens: List[Tuple[int, str]],
) -> List[str]:
    """Checks the DSV4 arguments of a StepPlan and fills `step` (a ctypes
    Step). Returns the names of the buffers that read seq_lens."""
    readers: List[str] = []

    groups = args["compressed_groups"] or ()
    if len(groups) > _lib.MAX_COMPRESSED_GROUPS:
        raise ValueError(
            "compressed_groups holds %d groups; a step carries at most %d"
            % (len(groups), _lib.MAX_COMPRESSED_GROUPS)
        )
    for g, group in enumerate(groups):
        where = "compressed_groups[%d]" % g
        unknown = set(group) - _GROUP_KEYS
        if unknown:
            raise TypeError("%s has unknown keys: %s" % (where, ", ".join(sorted(unknown))))
        cg = step.compressed_groups[g]
        slots, lens = group.get("slot_mapping"), group.get("seq_lens_out")
        if slots is None and lens is None:
            continue
        ratio = int32(group.get("ratio", 0), where + ".ratio")
        if ratio < 1:
            raise ValueError("%s.ratio (%d) must be >= 1" % (where, ratio))
        cg.ratio = ratio
        if slots is not None:
            ptr, d, n = vec(slots, where + ".slot_mapping", I64, out=True)
            check_dev(d, where + ".slot_mapping")
            keep[where + ".slot_mapping"] = slots
            cg.slot_mapping = ptr or None
            token_limits.append((n, where + ".slot_mapping", "tokens"))
            cap_lens.append((n, where + ".slot_mapping"))
            bs = int32(group.get("block_size", 0), where + ".block_size")
            if bs < 1:
                raise ValueError("%s.block_size (%d) must be >= 1" % (where, bs))
            cg.block_size = bs
            bt = group.get("block_table")
            if bt is None:
                raise ValueError("%s.block_table is required for its slot_mapping" % where)
            ptr, d, rows, cols, stride = table(bt, where + ".block_table")
            check_dev(d, where + ".block_table")
            keep[where + ".block_table"] = bt
            cg.block_table = ptr or qptr
            cg.block_table_cols = int32(cols, where + ".block_table columns")
            cg.block_table_stride = stride
            req_limits.append((rows, where + ".block_table", "rows (requests)"))
        if lens is not None:
            ptr, d, n = vec(lens, where + ".seq_lens_out", I32, out=True)
            check_dev(d, where + ".seq_lens_out")
            keep[where + ".seq_lens_out"] = lens
            cg.seq_lens_out = ptr or None
            req_limits.append((n, where + ".seq_lens_out", "requests"))
        readers.append(where)

    # Sliding-window rows (section 7).
    swa, swa_lens = args["swa_indices"], args["swa_lens"]
    if swa is not None or swa_lens is not None:
        width = args["swa_width"]
        if swa is not None:
            (ptr, d, rows, cols, stride), view = _rows(swa, "swa_indices")
            check_dev(d, "swa_indices")
            keep["swa_indices"] = view
            step.swa_indices = ptr or None
            step.swa_indices_stride = stride
            token_limits.append((rows, "swa_indices", "rows (tokens)"))
            if width is None:
                width = cols
            elif width > cols:
                raise ValueError("swa_width (%d) exceeds swa_indices' %d columns" % (width, cols))
            bt = args["swa_block_table"]
            if bt is None:
                raise ValueError("swa_block_table is required for swa_indices")
            tptr, d, trows, tcols, tstride = table(bt, "swa_block_table")
            check_dev(d, "swa_block_table")
            keep["swa_block_table"] = bt
            step.swa_block_table = tptr or qptr
            step.swa_block_table_cols = int32(tcols, "swa_block_table columns")
            step.swa_block_table_stride = tstride
            req_limits.append((trows, "swa_block_table", "rows (requests)"))
            step.swa_block_size = int32(args["swa_block_size"], "swa_block_size")
        if swa_lens is not None:
            ptr, d, n = vec(swa_lens, "swa_lens", I32, out=True)
            check_dev(d, "swa_lens")
            keep["swa_lens"] = swa_lens
            step.swa_lens = ptr or None
            token_limits.append((n, "swa_lens", "tokens"))
            cap_lens.append((n, "swa_lens"))
        window = args["swa_window"]
        if window is None:
            raise ValueError("swa_window is required for the SWA rows")
        step.swa_window = int32(window, "swa_window")
        if width is None:
            raise ValueError("swa_width is required when only swa_lens is built")
        step.swa_width = int32(width, "swa_width")
        step.swa_mode = _lib.SWA_CAUSAL if args["swa_causal"] else _lib.SWA_NON_CAUSAL
        readers.append("swa_indices" if swa is not None else "swa_lens")

    # Heavily compressed rows (section 8).
    rows_buf, c_lens = args["c128a_rows"], args["c128a_lens"]
    if rows_buf is not None or c_lens is not None:
        width = args["c128a_width"]
        local = bool(args["c128a_local"])
        step.c128a_mode = _lib.C128A_LOCAL if local else _lib.C128A_GLOBAL
        step.c128a_ratio = int32(args["c128a_ratio"], "c128a_ratio")
        step.c128a_block_size = int32(args["c128a_block_size"], "c128a_block_size")
        if rows_buf is not None:
            (ptr, d, rows, cols, stride), view = _rows(rows_buf, "c128a_rows")
            check_dev(d, "c128a_rows")
            keep["c128a_rows"] = view
            step.c128a_rows = ptr or None
            step.c128a_rows_stride = stride
            token_limits.append((rows, "c128a_rows", "rows (tokens)"))
            if width is None:
                width = cols
            elif width > cols:
                raise ValueError("c128a_width (%d) exceeds c128a_rows' %d columns" % (width, cols))
            if not local:
                bt = args["c128a_block_table"]
                if bt is None:
                    raise ValueError("c128a_block_table is required for global c128a_rows")
                tptr, d, trows, tcols, tstride = table(bt, "c128a_block_table")
                check_dev(d, "c128a_block_table")
                keep["c128a_block_table"] = bt
                step.c128a_block_table = tptr or qptr
                step.c128a_block_table_cols = int32(tcols, "c128a_block_table columns")
                step.c128a_block_table_stride = tstride
                req_limits.append((trows, "c128a_block_table", "rows (requests)"))
        if c_lens is not None:
            ptr, d, n = vec(c_lens, "c128a_lens", I32, out=True)
            check_dev(d, "c128a_lens")
            keep["c128a_lens"] = c_lens
            step.c128a_lens = ptr or None
            token_limits.append((n, "c128a_lens", "tokens"))
            cap_lens.append((n, "c128a_lens"))
        if width is None:
            raise ValueError("c128a_width is required when only c128a_lens is built")
        step.c128a_width = int32(width, "c128a_width")
        readers.append("c128a_rows" if rows_buf is not None else "c128a_lens")
    return readers
