# SPDX-License-Identifier: Apache-2.0
"""The buffer members of attnmeta_step, attnmeta_compressed_group and
attnmeta_topk as the schema (``_schema.py``) lists them, and
:class:`Attach`, which points one of them at a caller's buffer: the checks
(dtype, device, shape), the reference that keeps the buffer alive, the
room it gives for requests and tokens."""

from typing import Any, Callable, Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple

from . import _schema
from ._arrays import I32, I64, int32, table, vec


class Member(NamedTuple):
    """One device-buffer member of a struct."""

    name: str
    dtype: str  # I32 or I64
    out: bool  # written (OUT) rather than read (IN)
    rows: str  # its extent's rows: R, R1, T, C, P or ONE
    cols: Optional[str]  # a table's member holding its columns; None for a vector
    stride: Optional[str]  # a table's member holding its row stride
    products: FrozenSet[str]
    groups: Optional[str] = None  # a grouped table's member holding its group count
    group_stride: Optional[str] = None  # ... and the one holding its group stride


def members(fields: Sequence[Tuple[str, str, str, Any, Tuple[str, ...]]]) -> Dict[str, Member]:
    """The buffer members of one struct, by name, in the schema's order."""
    found = {}
    for name, c_type, role, extent, products in fields:
        if role in ("IN", "OUT"):
            cols, stride = (extent[1], extent[2]) if len(extent) >= 3 else (None, None)
            groups, group_stride = (extent[3], extent[4]) if len(extent) == 5 else (None, None)
            dtype = I64 if c_type.replace("const ", "").startswith("int64_t") else I32
            found[name] = Member(name, dtype, role == "OUT", extent[0], cols, stride,
                                 frozenset(products), groups, group_stride)
    return found


STEP = members(_schema.STEP_FIELDS)
GROUP = members(_schema.COMPRESSED_GROUP_FIELDS)
TOPK = members(_schema.TOPK_FIELDS)


def _dsv4(member: Member) -> bool:
    return not member.products.isdisjoint(_schema.DSV4_PRODUCTS)


# The step's outputs outside the DeepSeek-V3.2/V4 products, and the inputs
# those read (seq_lens, block_table; query_start_loc is always read).
STEP_OUTPUTS = tuple(m.name for m in STEP.values() if m.out and not _dsv4(m))
_CORE_PRODUCTS = frozenset().union(*(STEP[name].products for name in STEP_OUTPUTS))
STEP_INPUTS = tuple(m.name for m in STEP.values() if not m.out and "ALWAYS" not in m.products
                    and not m.products.isdisjoint(_CORE_PRODUCTS))
# The DeepSeek-V3.2/V4 outputs and tables of the step itself, and each
# compressed group's.
DSV4_OUTPUTS = tuple(m.name for m in STEP.values() if m.out and _dsv4(m))
DSV4_INPUTS = tuple(m.name for m in STEP.values() if not m.out and "ALWAYS" not in m.products
                    and m.products.isdisjoint(_CORE_PRODUCTS))
GROUP_OUTPUTS = tuple(m.name for m in GROUP.values() if m.out)
GROUP_INPUTS = tuple(m.name for m in GROUP.values() if not m.out)


def readers(name: str) -> Tuple[str, ...]:
    """The step outputs (of STEP_OUTPUTS) that read input ``name``."""
    wanted = STEP[name].products
    return tuple(out for out in STEP_OUTPUTS if not STEP[out].products.isdisjoint(wanted))


def member_of(key: str) -> Member:
    """The member behind a plan's buffer key: a step member's name, or
    ``compressed_groups[g].<member>``."""
    if key.startswith("compressed_groups["):
        return GROUP[key.rsplit(".", 1)[1]]
    return STEP[key]


_UNITS = {"R": "requests", "T": "tokens", "C": "tokens"}


class Attach:
    """Points the buffer members of one operation's structs at the caller's
    buffers, all on the device of the first one.

    ``keep`` receives each buffer (by its key), ``limits[rows]`` the room
    it gives: (entries, key, unit) for rows R and T, and capacity-long
    outputs (C) go both to ``limits["T"]`` and, as (entries, key), to
    ``cap_lens``. ``fallback`` is the pointer an empty input gets (for
    the step any valid address, as nothing is read; None for NULL)."""

    def __init__(self, check_dev: Callable[[Any, str], None], fallback: Any,
                 keep: Dict[str, Any], limits: Dict[str, List[Tuple[int, str, str]]],
                 cap_lens: List[Tuple[int, str]]) -> None:
        self.check_dev = check_dev
        self.fallback = fallback
        self.keep = keep
        self.limits = limits
        self.cap_lens = cap_lens

    def __call__(self, struct: Any, member: Member, buf: Any,
                 key: Optional[str] = None) -> Tuple[int, int]:
        """Checks ``buf`` as ``member`` of ``struct`` (named ``key``,
        default the member's name) and points the member at it, a table's
        stride member too (and its columns member, for an input). Returns
        (length, columns): a table's rows and columns, a vector's length
        and 0."""
        key = member.name if key is None else key
        unit = _UNITS.get(member.rows, "")
        if member.cols is None:
            ptr, d, n = vec(buf, key, member.dtype, out=member.out)
            cols = 0
        else:
            ptr, d, n, cols, stride = table(buf, key, out=member.out)
            unit = "rows (%s)" % unit
            setattr(struct, member.stride or "", stride)
            if not member.out:
                setattr(struct, member.cols, int32(cols, key + " columns"))
        self.check_dev(d, key)
        self.keep[key] = buf
        setattr(struct, member.name, ptr or (None if member.out else self.fallback))
        if member.rows in self.limits:
            self.limits[member.rows].append((n, key, unit))
        if member.rows == "C":
            self.limits["T"].append((n, key, unit))
            self.cap_lens.append((n, key))
        return n, cols
