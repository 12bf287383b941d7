# SPDX-License-Identifier: Apache-2.0
"""The DeepSeek-V3.2/V4 products of a step (contract sections 5, 7, 8):
their checks for :class:`StepPlan`, and drop-ins named like the engine
functions they replace. They are built in the same launch as every other
product of the step."""

from typing import Any, Dict, List, Optional

from . import _lib, _schema
from ._arrays import int32, table
from ._members import DSV4_INPUTS, GROUP, STEP, Attach

__all__ = [
    "DSV4_ARGS",
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
    swa_token_slots=None,
    c128a_rows=None,
    c128a_lens=None,
    c128a_block_table=None,
    c128a_ratio=128,
    c128a_block_size=2,
    c128a_width=None,
    c128a_local=False,
    indexer_ratio=None,
    indexer_prefill=False,
    c128a_prefill_rows=None,
    c128a_num_decode_tokens=None,
)

# The settings declared after 0.3 (those that name the products they
# serve in the schema) and the inputs the set-up below does not name: each
# a StepPlan keyword of its member's name, set as given (None: left 0/NULL).
# A grouped table's group count and stride are not keywords: they come
# from the buffers' shapes (_grouped below).
_FROM_SHAPES = frozenset(m for member in STEP.values() if member.groups
                         for m in (member.groups, member.group_stride))
_SETTINGS = {name: c_type for name, c_type, role, _, products in _schema.STEP_FIELDS
             if role == "PARAM" and products and name not in _FROM_SHAPES}
_HAND_INPUTS = frozenset(("swa_block_table", "c128a_block_table", "swa_token_slots"))
_BY_NAME_INPUTS = tuple(name for name in DSV4_INPUTS if name not in _HAND_INPUTS)
DSV4_ARGS.update((name, None) for name in _SETTINGS)

# A compressed group's keys: its buffers, and its two settings.
_GROUP_KEYS = frozenset(GROUP) | {"ratio", "block_size"}


def _rows(buf: Any) -> Any:
    """A row output: 2-D, or 3-D with a middle dimension of 1 (vLLM's
    [tokens, 1, width] buffers), seen as [tokens, width]."""
    shape = getattr(buf, "shape", None)
    if shape is not None and len(shape) == 3 and shape[1] == 1:
        buf = buf.reshape(shape[0], shape[2])
    return buf


def _grouped(step: Any, attach: Attach, name: str, buf: Any, groups: int, ndim: int) -> int:
    """Attaches ``buf`` of the grouped table ``name``: with ``groups``
    0 (not grouped) as it is; else [G, ...] with ``ndim`` dimensions, its
    first group attached (the checks of a table) and the distance to the
    second, in elements, set as the group stride (the library checks that
    it covers a group). Returns the columns."""
    member = STEP[name]
    if not groups:
        return attach(step, member, buf)[1]
    shape = tuple(getattr(buf, "shape", ()))
    if len(shape) != ndim or shape[0] != groups:
        raise ValueError("%s must be [%d groups, ...] with %d dimensions (swa_block_table's "
                         "groups), got shape %s" % (name, groups, ndim, shape))
    first = _rows(buf[0]) if ndim == 4 else buf[0]
    cols = attach(step, member, first)[1]
    stride = 0
    if groups > 1:
        second = _rows(buf[1]) if ndim == 4 else buf[1]
        gap = (table(second, name, out=member.out)[0] or 0) - (getattr(step, name) or 0)
        if gap <= 0 or gap % 4:
            raise ValueError("%s's groups must lie at increasing addresses, a whole number of "
                             "elements apart (got %d bytes)" % (name, gap))
        stride = gap // 4
    setattr(step, member.groups or "", groups)
    setattr(step, member.group_stride or "", stride)
    return cols


def setup_dsv4(args: Dict[str, Any], step: Any, attach: Attach) -> List[str]:
    """Checks the DSV4 arguments of a StepPlan and fills `step` (a ctypes
    Step) through ``attach`` (the plan's). Returns the names of the
    buffers that read seq_lens."""
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
        cg.ratio = _at_least_one(group.get("ratio", 0), where + ".ratio")
        if slots is not None:
            attach(cg, GROUP["slot_mapping"], slots, where + ".slot_mapping")
            cg.block_size = _at_least_one(group.get("block_size", 0), where + ".block_size")
            bt = group.get("block_table")
            if bt is not None:
                attach(cg, GROUP["block_table"], bt, where + ".block_table")
            elif not any(args[name] is not None for name in _BY_NAME_INPUTS):
                raise ValueError("%s.block_table is required for its slot_mapping" % where)
        if lens is not None:
            attach(cg, GROUP["seq_lens_out"], lens, where + ".seq_lens_out")
        readers.append(where)

    # Sliding-window rows (section 7).
    swa, swa_lens = args["swa_indices"], args["swa_lens"]
    if swa is not None or swa_lens is not None:
        width = args["swa_width"]
        if swa is not None:
            bt = args["swa_block_table"]
            if bt is None:
                raise ValueError("swa_block_table is required for swa_indices")
            # a 3-D table [G, R, cols] holds every group's: the rows are
            # then [G, T, width] or vLLM's [G, T, 1, width]
            groups = bt.shape[0] if len(getattr(bt, "shape", ())) == 3 else 0
            ndim = len(getattr(swa, "shape", ())) if groups else 0
            if groups and ndim not in (3, 4):
                raise ValueError("swa_indices must be [G, T, width] or [G, T, 1, width] with a "
                                 "table of %d groups, got shape %s"
                                 % (groups, tuple(swa.shape)))
            if groups:
                cols = _grouped(step, attach, "swa_indices", swa, groups, ndim)
            else:
                cols = attach(step, STEP["swa_indices"], _rows(swa))[1]
            width = _width(cols, width, "swa_width", "swa_indices")
            _grouped(step, attach, "swa_block_table", bt, groups, 3)
            step.swa_block_size = int32(args["swa_block_size"], "swa_block_size")
        if swa_lens is not None:
            attach(step, STEP["swa_lens"], swa_lens)
        window = args["swa_window"]
        if window is None:
            raise ValueError("swa_window is required for the SWA rows")
        step.swa_window = int32(window, "swa_window")
        if width is None:
            raise ValueError("swa_width is required when only swa_lens is built")
        step.swa_width = int32(width, "swa_width")
        step.swa_mode = _lib.SWA_CAUSAL if args["swa_causal"] else _lib.SWA_NON_CAUSAL
        if args["swa_token_slots"] is not None:
            # the step's slot_mapping: a token whose slot is < 0 sees nothing
            attach(step, STEP["swa_token_slots"], args["swa_token_slots"])
        readers.append("swa_indices" if swa is not None else "swa_lens")

    # Heavily compressed rows (section 8); mixed mode when the decode
    # tokens are counted: those global, the rest local into c128a_prefill_rows.
    rows_buf, c_lens = args["c128a_rows"], args["c128a_lens"]
    prefill_buf, decodes = args["c128a_prefill_rows"], args["c128a_num_decode_tokens"]
    if prefill_buf is not None and decodes is None:
        raise ValueError("c128a_prefill_rows needs c128a_num_decode_tokens (mixed mode)")
    mixed = decodes is not None
    if rows_buf is not None or c_lens is not None or prefill_buf is not None:
        width = args["c128a_width"]
        local = bool(args["c128a_local"])
        if mixed and local:
            raise ValueError("c128a_num_decode_tokens (mixed mode) and c128a_local=True exclude "
                             "each other")
        step.c128a_mode = (_lib.C128A_MIXED if mixed
                           else _lib.C128A_LOCAL if local else _lib.C128A_GLOBAL)
        if mixed:
            step.c128a_num_decode_tokens = int32(decodes, "c128a_num_decode_tokens")
            if prefill_buf is not None:
                cols = attach(step, STEP["c128a_prefill_rows"], _rows(prefill_buf))[1]
                width = _width(cols, width, "c128a_width", "c128a_prefill_rows")
        step.c128a_ratio = int32(args["c128a_ratio"], "c128a_ratio")
        step.c128a_block_size = int32(args["c128a_block_size"], "c128a_block_size")
        if rows_buf is not None:
            cols = attach(step, STEP["c128a_rows"], _rows(rows_buf))[1]
            width = _width(cols, width, "c128a_width", "c128a_rows")
            if not local:
                bt = args["c128a_block_table"]
                if bt is None:
                    raise ValueError("c128a_block_table is required for global c128a_rows")
                attach(step, STEP["c128a_block_table"], bt)
        if c_lens is not None:
            attach(step, STEP["c128a_lens"], c_lens)
        if width is None:
            raise ValueError("c128a_width is required when only c128a_lens is built")
        step.c128a_width = int32(width, "c128a_width")
        readers.append("c128a_rows" if rows_buf is not None else "c128a_lens")

    # The indexer's compressed lengths (section 5a).
    if args["indexer_lens_out"] is not None:
        attach(step, STEP["indexer_lens_out"], args["indexer_lens_out"])
        if args["indexer_ratio"] is None:
            raise ValueError("indexer_ratio is required for indexer_lens_out")
        step.indexer_ratio = _at_least_one(args["indexer_ratio"], "indexer_ratio")
        step.indexer_mode = _lib.INDEXER_PREFILL if args["indexer_prefill"] else _lib.INDEXER_DECODE
        readers.append("indexer_lens_out")

    # The settings and inputs declared after 0.3, by name (the library
    # checks their rules).
    for name in _BY_NAME_INPUTS:
        if args[name] is not None:
            attach(step, STEP[name], args[name])
    for name, c_type in _SETTINGS.items():
        if args[name] is not None:
            setattr(step, name, int32(args[name], name) if c_type == "int32_t" else int(args[name]))
    return readers


def _at_least_one(value: Any, name: str) -> int:
    number = int32(value, name)
    if number < 1:
        raise ValueError("%s (%d) must be >= 1" % (name, number))
    return number


def _width(cols: int, width: Optional[int], name: str, rows: str) -> int:
    """The rows' width: ``name`` (``<prefix>_width``) when given, at most
    the columns of the rows' buffer ``rows``; else those columns."""
    if width is None:
        return cols
    if width > cols:
        raise ValueError("%s (%d) exceeds %s' %d columns" % (name, width, rows, cols))
    return width
