# SPDX-License-Identifier: Apache-2.0
"""slot_mapping needs an explicit block_size: without one the binding
raises a ValueError naming both, and nothing is written; the C library
refuses a step from attnmeta_step_init that wants slots the same way.
With block_size given, the slots match the naive reference."""

import ctypes

import numpy as np
import pytest

import cases
import reference

R, T, C, COLS = 2, 5, 7, 3
QSL = [0, 2, 5]
SEQ = [4, 6]
TABLE = [[7, 8, 9], [3, 4, 5]]


def _buffers():
    return dict(
        seq_lens=np.array(SEQ, np.int32),
        block_table=np.array(TABLE, np.int32),
        positions=np.full(T, -9, np.int64),
        slot_mapping=np.full(C, -9, np.int64),
    )


def test_plan_refuses_slots_without_block_size(attnmeta):
    bufs = _buffers()
    with pytest.raises(ValueError, match="slot_mapping needs block_size"):
        attnmeta.StepPlan(np.array(QSL, np.int32), **bufs)
    assert (bufs["slot_mapping"] == -9).all() and (bufs["positions"] == -9).all()


def test_build_step_refuses_slots_without_block_size(attnmeta):
    bufs = _buffers()
    with pytest.raises(ValueError, match="slot_mapping needs block_size"):
        attnmeta.build_step(np.array(QSL, np.int32), T, **bufs)
    assert (bufs["slot_mapping"] == -9).all() and (bufs["positions"] == -9).all()


def test_replace_adding_slots_needs_block_size(attnmeta):
    bufs = _buffers()
    slots = bufs.pop("slot_mapping")
    plan = attnmeta.StepPlan(np.array(QSL, np.int32), **bufs)  # no slots: no block_size needed
    plan.build(R, T)
    with pytest.raises(ValueError, match="slot_mapping needs block_size"):
        plan.replace(slot_mapping=slots)
    assert (slots == -9).all()
    plan.replace(slot_mapping=slots, block_size=2)
    plan.build(R, T)
    assert slots[:T].tolist() == _want_slots(2)


@pytest.mark.parametrize("bad", [0, -1])
def test_block_size_below_one_is_refused(attnmeta, bad):
    bufs = _buffers()
    with pytest.raises(ValueError, match=r"block_size \(%d\) must be >= 1" % bad):
        attnmeta.StepPlan(np.array(QSL, np.int32), block_size=bad, **bufs)
    assert (bufs["slot_mapping"] == -9).all()


def _want_slots(block_size):
    case = cases.Case("explicit", QSL, T, C, SEQ, COLS, COLS, TABLE, block_size=block_size)
    return reference.step(case)["slot_mapping"][:T]


@pytest.mark.parametrize("block_size", [1, 2])
def test_explicit_block_size_gives_the_reference_slots(attnmeta, block_size):
    bufs = _buffers()
    attnmeta.build_step(np.array(QSL, np.int32), T, block_size=block_size, **bufs)
    assert bufs["slot_mapping"][:T].tolist() == _want_slots(block_size)
    assert bufs["slot_mapping"][T:].tolist() == [-1] * (C - T)


def test_c_library_refuses_an_initialised_step_with_slots(attnmeta):
    """attnmeta_step_init leaves block_size unset: the C call refuses slots."""
    from attnmeta import _lib

    qsl = np.array(QSL, np.int32)
    bufs = _buffers()
    step = _lib.Step()
    _lib.step_init(ctypes.addressof(step))
    step.query_start_loc = qsl.ctypes.data
    step.num_reqs, step.num_tokens, step.capacity = R, T, C
    step.seq_lens = bufs["seq_lens"].ctypes.data
    step.block_table = bufs["block_table"].ctypes.data
    step.block_table_cols = step.block_table_stride = COLS
    step.slot_mapping = bufs["slot_mapping"].ctypes.data
    ctx = attnmeta.Context("cpu")
    with ctx:
        status = _lib.build_step(ctx.handle, ctypes.addressof(step), None)
        assert status == attnmeta.Status.INVALID_ARGUMENT
        message = ctx.last_error()
    assert "slot_mapping" in message and "block_size" in message, message
    assert (bufs["slot_mapping"] == -9).all()
