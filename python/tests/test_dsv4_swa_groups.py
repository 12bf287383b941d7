# SPDX-License-Identifier: Apache-2.0
"""Every SWA group of a step in one launch (contract section 7): StepPlan
with a 3-D swa_block_table [G, R, cols] and rows [G, T, width] or vLLM's
[G, T, 1, width], against a naive reference run once per group on its own
table, on the CPU backend; groups with gaps between them; the argument
errors, which write nothing."""

import numpy as np
import pytest

import attnmeta
from test_dsv4_swa_visible import reference  # one group's causal rows, no image visibility

POISON = 0x5A5A5A5A


def tables(groups, reqs, cols):
    return np.array([[[1000 * g + 50 * r + 3 * c + 1 for c in range(cols)] for r in range(reqs)]
                     for g in range(groups)], np.int32)


CASES = [
    # (query_start_loc, seq_lens, groups, window, block size)
    ([0, 1, 9, 20], [40, 12, 30], 1, 8, 4),
    ([0, 4, 12], [20, 9], 2, 4, 2),
    ([0, 1, 2, 12, 24], [40, 300, 20, 12], 3, 16, 4),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("shape", ["dense", "vllm", "gaps"])
@pytest.mark.parametrize("floor", [False, True])
def test_groups_match_the_reference(attnmeta, case, shape, floor):
    qsl, seq, groups, window, bs = case
    n = qsl[-1] + 2  # graph padding past the real tokens
    width = window + 2
    qsl, seq = np.array(qsl, np.int32), np.array(seq, np.int32)
    replay = np.array([(r * 11) % 17 for r in range(len(seq))], np.int32) if floor else None
    table = tables(groups, len(seq), 24)
    if shape == "gaps":  # groups and rows further apart than they need
        big_t = np.full((groups, len(seq) + 1, 30), -3, np.int32)
        big_t[:, :len(seq), :24] = table
        table_arg = big_t[:, :len(seq), :24]
        big_r = np.full((groups, n + 3, width + 5), POISON, np.int32)
        rows = big_r[:, :n, :width]
    else:
        big_r = np.full((groups, n, 1, width) if shape == "vllm" else (groups, n, width), POISON,
                        np.int32)
        rows = big_r
        table_arg = table
    lens = np.full(n + 4, POISON, np.int32)
    kw = dict(swa_replay_start=replay) if floor else {}
    plan = attnmeta.StepPlan(query_start_loc=qsl, seq_lens=seq, swa_indices=rows, swa_lens=lens,
                             swa_block_table=table_arg, swa_block_size=bs, swa_window=window,
                             swa_width=width, **kw)
    plan.build(len(seq), n)
    got = rows.reshape(groups, n, width)
    for g in range(groups):
        want_rows, want_lens = reference(qsl, seq, table[g], bs, window, width, n,
                                             replay=replay)
        assert got[g].tolist() == want_rows.tolist(), "group %d" % g
        assert lens[:n].tolist() == want_lens.tolist()
    assert (lens[n:] == 0).all()  # the capacity past the tokens
    if shape == "gaps":  # the padding of rows and groups untouched
        assert (big_r[:, n:, :] == POISON).all() and (big_r[:, :, width:] == POISON).all()


def test_group_keywords_come_from_the_shapes(attnmeta):
    qsl, seq = np.array([0, 4], np.int32), np.array([9], np.int32)
    with pytest.raises(TypeError):
        attnmeta.StepPlan(query_start_loc=qsl, seq_lens=seq, swa_groups=2)


def test_argument_errors_write_nothing(attnmeta):
    qsl, seq = np.array([0, 4], np.int32), np.array([9], np.int32)
    table = tables(2, 1, 4)

    def plan(rows, bt):
        lens = np.full(4, POISON, np.int32)
        with pytest.raises(ValueError) as e:
            attnmeta.StepPlan(query_start_loc=qsl, seq_lens=seq, swa_indices=rows,
                              swa_lens=lens, swa_block_table=bt, swa_block_size=4,
                              swa_window=4).build(1, 4)
        assert (lens == POISON).all()
        return str(e.value)

    rows3 = np.full((3, 4, 8), POISON, np.int32)
    assert "swa_indices must be [2 groups" in plan(rows3, table)
    rows2d = np.full((4, 8), POISON, np.int32)
    assert "swa_indices must be [G, T, width]" in plan(rows2d, table)
    # groups of rows that overlap (a group stride of one row): the library's check
    overlapping = np.lib.stride_tricks.as_strided(np.full(64, POISON, np.int32), (2, 4, 8),
                                                  (32, 32, 4))
    assert "swa_indices_group_stride (8) < the 32 elements" in plan(overlapping, table)
