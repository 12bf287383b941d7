# SPDX-License-Identifier: Apache-2.0
"""compute_swa_indices_and_lens with in-image bidirectional visibility
(left_visible / right_visible) and with each request's replay floor
(replay_start), contract section 7, against a naive reference written from
vLLM's kernels, on the CPU backend: images in prefill chunks, adjacent
images, an image wider than the window, floors below, inside and above the
window, hostile counts; the argument errors; and the same rows through
StepPlan's keywords."""

import numpy as np
import pytest

import attnmeta
from attnmeta._dsv4_dropins import compute_swa_indices_and_lens

I32_MIN, I32_MAX = -(2**31), 2**31 - 1


def visible_counts(qsl, seq, spans, max_image_tokens, n):
    """vLLM's per-token counts (get_image_visible): a token at p in an image
    [a, b] sees min(p - a, M - 1) before and min(b - p, M) after."""
    left, right = np.zeros(n, np.int32), np.zeros(n, np.int32)
    for r in range(len(seq)):
        for t in range(qsl[r], qsl[r + 1]):
            p = seq[r] - (qsl[r + 1] - qsl[r]) + t - qsl[r]
            for a, b in spans:
                if a <= p <= b:
                    left[t] = min(p - a, max_image_tokens - 1)
                    right[t] = min(b - p, max_image_tokens)
    return left, right


def reference(qsl, seq, table, bs, window, width, n, left=None, right=None, replay=None,
              slots=None):
    """vLLM's causal rows, one token at a time, in Python integers; the
    length clamped into [0, width] and a block past the table -1."""
    rows = np.full((n, width), -1, np.int32)
    lens = np.zeros(n, np.int32)
    for t in range(min(n, qsl[-1])):
        if slots is not None and slots[t] < 0:
            continue
        r = max(i for i in range(len(seq)) if qsl[i] <= t < qsl[i + 1])
        p = seq[r] - (qsl[r + 1] - qsl[r]) + t - qsl[r]
        lv = 0 if left is None else int(left[t])
        rv = 0 if right is None else int(right[t])
        start = max(p - (window - 1) - max(lv - (window - 1), 0), 0)
        if replay is not None:
            start = max(start, int(replay[r]))
        length = min(max(p + rv + 1 - start, 0), width)
        lens[t] = length
        for j in range(length):
            q = start + j
            blk = q // bs
            if blk < table.shape[1] and table[r, blk] >= 0:
                rows[t, j] = table[r, blk] * bs + q % bs
    return rows, lens


def table_of(rows, cols):
    return np.array([[100 * r + 3 * c + 1 for c in range(cols)] for r in range(rows)], np.int32)


IMAGE_CASES = [
    # (query_start_loc, seq_lens, spans, max image tokens, window, block size)
    ([0, 40], [50], [(20, 44)], 32, 8, 4),
    ([0, 1, 21, 30], [70, 40, 9], [(22, 31), (32, 39)], 16, 6, 8),
    ([0, 30], [30], [(2, 28)], 32, 4, 2),
    ([0, 12, 20], [12, 30], [(0, 11), (25, 29)], 12, 3, 64),
]


@pytest.mark.parametrize("case", IMAGE_CASES, ids=str)
@pytest.mark.parametrize("shape", ["flat", "vllm"])
def test_in_image_rows_match_the_reference(attnmeta, case, shape):
    qsl, seq, spans, m, window, bs = case
    n = qsl[-1] + 3  # graph padding past the real tokens
    width = window + m
    table = table_of(len(seq), 24)
    left, right = visible_counts(qsl, seq, spans, m, n)
    left[qsl[-1]:] = 7  # padding tokens: whatever the buffer holds
    dims = (n + 2, 1, width) if shape == "vllm" else (n + 2, width + 3)
    indices = np.full(dims, -9, np.int32)
    lens = np.full(n + 2, -9, np.int32)
    got_rows, got_lens = compute_swa_indices_and_lens(
        indices, lens, window, np.array(qsl, np.int32), np.array(seq, np.int32), table, bs,
        num_tokens=n, left_visible=left, right_visible=right, index_width=width)
    want_rows, want_lens = reference(qsl, seq, table, bs, window, width, n, left, right)
    rows = got_rows.reshape(n, -1)[:, :width]
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(got_lens, want_lens)
    assert lens[n:].tolist() == [0, 0]  # cleared past T, as the engine's memset
    if shape == "flat":
        assert (indices[:, width:] == -9).all()  # the rows' padding left alone
    assert (want_lens > window).any()  # the image widened some row


def test_vllm_values_by_hand(attnmeta):
    # window 4, max image tokens 8, positions 10..17, one image [11, 16],
    # slot = position (table [0, 1, ...], block size 4): the token at 14
    # sees its whole image, 11..16
    qsl, seq = np.array([0, 8], np.int32), np.array([18], np.int32)
    table = np.arange(16, dtype=np.int32)[None, :]
    left = np.array([0, 0, 1, 2, 3, 4, 5, 0], np.int32)
    right = np.array([0, 5, 4, 3, 2, 1, 0, 0], np.int32)
    rows, lens = compute_swa_indices_and_lens(
        np.zeros((8, 12), np.int32), np.zeros(8, np.int32), 4, qsl, seq, table, 4,
        left_visible=left, right_visible=right)
    assert lens.tolist() == [4, 9, 8, 7, 6, 6, 6, 4]
    assert rows[:, 0].tolist() == [7, 8, 9, 10, 11, 11, 11, 14]
    assert rows[4].tolist() == [11, 12, 13, 14, 15, 16] + [-1] * 6
    # the replay floor 12 of the request: lengths 0 0 1 2 3 4 4 4
    rows, lens = compute_swa_indices_and_lens(
        np.zeros((8, 4), np.int32), np.zeros(8, np.int32), 4, qsl, seq, table, 4,
        replay_start=np.array([12], np.int32))
    assert lens.tolist() == [0, 0, 1, 2, 3, 4, 4, 4]
    assert rows[2].tolist() == [12, -1, -1, -1] and rows[7].tolist() == [14, 15, 16, 17]


@pytest.mark.parametrize("floors", [[0, 290, 15, 30], [I32_MIN, I32_MAX, -5, 4]])
def test_replay_floor_matches_the_reference(attnmeta, floors):
    qsl, seq = [0, 1, 2, 12, 24], [40, 300, 20, 12]
    n, window, bs = 26, 16, 4
    table = table_of(4, 24)
    slots = np.arange(n, dtype=np.int64)
    slots[3::5] = -1  # tokens without a KV slot
    replay = np.array(floors, np.int32)
    rows, lens = compute_swa_indices_and_lens(
        np.full((n, window), -9, np.int32), np.full(n, -9, np.int32), window,
        np.array(qsl, np.int32), np.array(seq, np.int32), table, bs, slot_mapping=slots,
        replay_start=replay)
    want_rows, want_lens = reference(qsl, seq, table, bs, window, window, n, replay=replay,
                                     slots=slots)
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(lens, want_lens)


def test_hostile_counts_stay_in_the_row(attnmeta):
    qsl, seq = [0, 8, 18], [30, 12]
    n, window, width, bs = 20, 5, 12, 4
    table = table_of(2, 3)  # rows reaching past 12 positions leave the table
    values = np.array([-1, I32_MAX, I32_MIN, 0, -40, 1000, 7, I32_MAX - 3], np.int32)
    left = values[np.arange(n) % 8]
    right = values[(np.arange(n) * 3 + 1) % 8]
    rows, lens = compute_swa_indices_and_lens(
        np.full((n, width), -9, np.int32), np.full(n, -9, np.int32), window,
        np.array(qsl, np.int32), np.array(seq, np.int32), table, bs, left_visible=left,
        right_visible=right)
    want_rows, want_lens = reference(qsl, seq, table, bs, window, width, n, left, right)
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(lens, want_lens)
    assert lens.max() == width and lens.min() == 0


def test_step_plan_keywords(attnmeta):
    qsl, seq = np.array([0, 8], np.int32), np.array([18], np.int32)
    table = np.arange(16, dtype=np.int32)[None, :]
    left = np.array([0, 0, 1, 2, 3, 4, 5, 0], np.int32)
    right = np.array([0, 5, 4, 3, 2, 1, 0, 0], np.int32)
    rows, lens = np.zeros((8, 12), np.int32), np.zeros(8, np.int32)
    plan = attnmeta.StepPlan(query_start_loc=qsl, seq_lens=seq, swa_indices=rows, swa_lens=lens,
                             swa_block_table=table, swa_block_size=4, swa_window=4,
                             swa_left_visible=left, swa_right_visible=right)
    plan.build(1, 8)
    assert lens.tolist() == [4, 9, 8, 7, 6, 6, 6, 4]


def _call(**kw):
    qsl, seq = np.array([0, 4], np.int32), np.array([9], np.int32)
    args = dict(swa_indices=np.zeros((4, 8), np.int32), swa_lens=np.zeros(4, np.int32),
                window_size=4, query_start_loc=qsl, seq_lens=seq,
                block_table=np.arange(4, dtype=np.int32)[None, :], block_size=4)
    args.update(kw)
    return compute_swa_indices_and_lens(**args)


def test_argument_errors(attnmeta):
    counts = np.zeros(4, np.int32)
    with pytest.raises(ValueError, match="swa_right_visible is NULL but swa_left_visible is set"):
        _call(left_visible=counts)
    with pytest.raises(ValueError, match="causal mode only"):
        _call(left_visible=counts, right_visible=counts, causal=False)
    with pytest.raises(ValueError, match="causal mode only"):
        _call(replay_start=np.zeros(1, np.int32), causal=False)
    with pytest.raises(ValueError, match="exclude each other"):
        _call(left_visible=counts, right_visible=counts, replay_start=np.zeros(1, np.int32))
    with pytest.raises(ValueError, match="index_width"):
        _call(index_width=9)  # wider than the rows' 8 columns
