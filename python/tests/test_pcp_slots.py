# SPDX-License-Identifier: Apache-2.0
"""get_pcp_compressed_slot_mapping (contract section 5b) against a naive
reference written from vLLM's kernel, on the CPU backend: ordinary and
hostile slots and positions, every ratio of a DeepSeek-V4 step, the tail of
a longer ``out`` left alone, the argument errors; and the same product
through StepPlan's keywords."""

import numpy as np
import pytest

import attnmeta
from attnmeta._dsv4_dropins import get_pcp_compressed_slot_mapping

I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def reference(logical, positions, lbs, storage, ratio):
    """vLLM's per-token formula, in Python integers (no overflow)."""
    out = []
    for s, p in zip(logical.tolist(), positions.tolist()):
        if s >= 0 and (p + 1) % ratio == 0:
            out.append((s // lbs) * storage + (s % lbs) // ratio)
        else:
            out.append(-1)
    return np.array(out, dtype=np.int64)


def hostile(n):
    rng = np.random.default_rng(5)
    logical = rng.integers(-3, 50000, n, dtype=np.int64)
    positions = rng.integers(-9, 9000, n, dtype=np.int64)
    logical[::7] = I64_MAX
    logical[3::11] = I64_MIN
    positions[::5] = I64_MAX
    positions[2::9] = I64_MIN
    positions[4::13] = -1
    return logical, positions


@pytest.mark.parametrize("lbs,ratio", [(256, 4), (256, 128), (256, 1), (512, 8), (4, 4)])
@pytest.mark.parametrize("n", [1, 7, 300])
def test_matches_the_reference(lbs, ratio, n):
    logical, positions = hostile(n)
    got = get_pcp_compressed_slot_mapping(logical, positions, lbs, lbs // ratio, ratio)
    assert got.dtype == np.int64 and got.shape == (n,)
    np.testing.assert_array_equal(got, reference(logical, positions, lbs, lbs // ratio, ratio))


def test_vllm_values_by_hand():
    # 1031 = block 4, offset 7 of 256: 4 * 64 + 7 // 4 = 257; position -1
    # completes a row ((-1 + 1) % 4 == 0), as in vLLM's kernel
    logical = np.array([1031, 1031, -1, 255, 256], dtype=np.int64)
    positions = np.array([3, 4, 3, -1, I64_MAX], dtype=np.int64)
    got = get_pcp_compressed_slot_mapping(logical, positions, 256, 64, 4)
    assert got.tolist() == [257, -1, -1, 63, 64]


def test_out_is_written_in_its_first_entries_only():
    logical = np.arange(10, dtype=np.int64) * 3
    positions = np.arange(10, dtype=np.int64)
    out = np.full(16, 77, dtype=np.int64)
    got = get_pcp_compressed_slot_mapping(logical, positions, 16, 4, 4, out=out)
    np.testing.assert_array_equal(got, reference(logical, positions, 16, 4, 4))
    assert np.shares_memory(got, out)
    assert out[10:].tolist() == [77] * 6


def test_no_tokens():
    empty = np.zeros(0, dtype=np.int64)
    assert get_pcp_compressed_slot_mapping(empty, empty, 256, 64, 4).shape == (0,)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(logical_block_size=258),
         r"logical_block_size \(258\) must be a multiple of compress_ratio \(4\)"),
        (dict(storage_block_size=32),
         r"storage_block_size \(32\) must be logical_block_size // compress_ratio = 64"),
        (dict(compress_ratio=0), r"compress_ratio \(0\) must be >= 1"),
        (dict(logical_block_size=0), r"logical_block_size \(0\) must be >= 1"),
    ],
)
def test_bad_sizes(kwargs, message):
    logical = np.arange(4, dtype=np.int64)
    args = dict(logical_slot_mapping=logical, positions=logical, logical_block_size=256,
                storage_block_size=64, compress_ratio=4)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        get_pcp_compressed_slot_mapping(**args)


def test_bad_buffers():
    logical = np.arange(4, dtype=np.int64)
    with pytest.raises(ValueError, match="positions has 3 entries"):
        get_pcp_compressed_slot_mapping(logical, logical[:3], 256, 64, 4)
    with pytest.raises(ValueError, match="out has 2 entries"):
        get_pcp_compressed_slot_mapping(logical, logical, 256, 64, 4,
                                        out=np.zeros(2, dtype=np.int64))
    with pytest.raises((TypeError, ValueError), match="logical_slot_mapping"):
        get_pcp_compressed_slot_mapping(logical.astype(np.int32), logical, 256, 64, 4)


def test_step_plan_keywords_build_every_group_from_the_logical_slots():
    """Two groups of a DSV4 step in one launch, by the members' names."""
    logical, positions = hostile(12)
    qsl = np.array([0, 5, 12], dtype=np.int32)
    seq = np.array([9, 40], dtype=np.int32)
    g0, g1 = np.full(14, 5, dtype=np.int64), np.full(14, 5, dtype=np.int64)
    plan = attnmeta.StepPlan(qsl, seq_lens=seq, pcp_logical_slots=logical,
                             pcp_positions=positions, pcp_logical_block_size=256,
                             compressed_groups=(dict(ratio=4, block_size=64, slot_mapping=g0),
                                                dict(ratio=128, block_size=2, slot_mapping=g1)))
    plan.build(2, 12)
    np.testing.assert_array_equal(g0[:12], reference(logical, positions, 256, 64, 4))
    np.testing.assert_array_equal(g1[:12], reference(logical, positions, 256, 2, 128))
    assert g0[12:].tolist() == [-1, -1] and g1[12:].tolist() == [-1, -1]


def test_step_plan_rejects_dcp_with_pcp():
    logical = np.arange(4, dtype=np.int64)
    out = np.zeros(4, dtype=np.int64)
    plan = attnmeta.StepPlan(np.array([0, 4], dtype=np.int32), seq_lens=np.array([4], np.int32),
                             dcp_world_size=2, dcp_rank=1, pcp_logical_slots=logical,
                             pcp_positions=logical, pcp_logical_block_size=256,
                             compressed_groups=(dict(ratio=4, block_size=64, slot_mapping=out),))
    with pytest.raises(attnmeta.AttnmetaError, match="pcp_logical_slots needs dcp_world_size 1"):
        plan.build(1, 4)
    assert out.tolist() == [0, 0, 0, 0]
