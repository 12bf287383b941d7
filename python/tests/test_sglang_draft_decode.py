# SPDX-License-Identifier: Apache-2.0
"""EAGLE's multi-step draft decode lists (generate_draft_decode_kv_indices,
docs/contract.md section 14): through the stand-in's draft backend
(sglang_standin_draft.py) the routed kernel gives what SGLang's gives, bit
for bit, into the same buffers, in one attnmeta launch and none of
SGLang's. SGLang's own tests of the kernel re-expressed (rows of shuffled
whole pages, seq_lens [5, 1, 9], 3 steps, pages of 1 and 2, positions the
lengths repeated per branch, a sentinel where nothing is written; and a
random pool whose emitted ids are its values), CUDA-graph padding rows,
branches over pages, the drop-in's refusals and SGLang's kernel taking
the forms attnmeta does not build."""

import numpy as np
import pytest

import sglang_standin as standin
import sglang_standin_draft as draft
import test_sglang_integration as integration
from attnmeta import generate_draft_decode_kv_indices

KINDS = integration.KINDS
SENTINEL = -7


def _run_template(xp, pool, rpi, seq_lens, positions, steps, topk, page_size, width=None):
    """run(mods) for _both: the draft backend's template into fresh
    buffers (kv_indptr zeros, as SGLang allocates it; kv_indices a sentinel)."""
    num_seqs = len(seq_lens)
    bs = num_seqs * topk
    if width is None:
        width = (topk * int(sum(seq_lens)) + steps * bs) * 2 + 64  # room, as SGLang's test gives

    def run(mods):
        kv_indices = xp.full((steps, width), SENTINEL)
        kv_indptr = xp.zeros((steps, bs + 3))
        mods[draft.DRAFT_BACKEND].draft_common_template(
            xp.array(rpi, np.int64), pool, xp.array(seq_lens, np.int64),
            xp.array(positions, np.int64), kv_indices, kv_indptr, num_seqs, topk, steps,
            page_size)
        return kv_indices, kv_indptr

    return run


@pytest.fixture(scope="module")
def sglang_mod():
    from attnmeta.integrations import sglang

    return sglang


def _routed_same(monkeypatch, sglang_mod, xp, run):
    theirs, mine, their_launches, my_launches, patch = integration._both(
        monkeypatch, sglang_mod, xp, run)
    integration._assert_same(theirs, mine)
    assert their_launches == {"generate_draft_decode_kv_indices": 1}
    assert not my_launches
    assert patch.launches["draft_decode_kv_indices"] == 1
    assert not patch.fallbacks.get("draft_decode_kv_indices")
    return mine


def _shuffled_pages(rng, num_seqs, max_context, page_size):
    """SGLang's read-table test's rows: each a shuffle of whole virtual pages."""
    pages = max_context // page_size
    rows = []
    for _ in range(num_seqs):
        order = rng.permutation(pages)
        rows.append((order[:, None] * page_size + np.arange(page_size)).reshape(-1))
    return np.stack(rows).astype(np.int32)


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("page_size", [1, 2])
@pytest.mark.parametrize("topk", [1, 2])
def test_sglang_read_table_case(sglang_mod, monkeypatch, kind, page_size, topk):
    xp = KINDS[kind]
    rng = np.random.default_rng(7)
    host_pool = _shuffled_pages(rng, 3, 64, page_size)
    seq_lens = [5, 1, 9]
    positions = np.repeat(seq_lens, topk)
    run = _run_template(xp, xp.array(host_pool, np.int32), [0, 1, 2], seq_lens, positions, 3,
                        topk, page_size)
    indices, indptr = _routed_same(monkeypatch, sglang_mod, xp, run)
    written = indices != SENTINEL
    # every written entry is a pool value; the rest keeps the sentinel
    assert np.isin(indices[written], host_pool).all()
    for step in range(3):
        used = topk * sum(seq_lens) + 3 * topk * (step + 1)
        assert written[step, :used].all() and not written[step, used:].any()
        assert indptr[step, 3 * topk] == used


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_sglang_raw_copy_case(sglang_mod, monkeypatch, kind):
    xp = KINDS[kind]
    rng = np.random.default_rng(11)
    host_pool = rng.integers(0, 1 << 20, size=(2, 32), dtype=np.int32)
    run = _run_template(xp, xp.array(host_pool, np.int32), [0, 1], [4, 7], [4, 7], 2, 1, 1)
    indices, _ = _routed_same(monkeypatch, sglang_mod, xp, run)
    assert np.isin(indices[indices != SENTINEL], host_pool).all()
    # request 0's lists start each step: its 4 tokens, then its drafts
    assert indices[1, :6].tolist() == host_pool[0, :6].tolist()


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("topk,steps", [(1, 3), (2, 5), (4, 3)])
def test_graph_padding_rows(sglang_mod, monkeypatch, kind, topk, steps):
    """A replayed graph's batch: the padded rows read pool row 0 for the
    fill length 1, their positions 0."""
    xp = KINDS[kind]
    rng = np.random.default_rng(topk * 10 + steps)
    num_seqs, pad = 9, 3
    seq_lens = rng.integers(1, 50, size=num_seqs)
    seq_lens[num_seqs - pad:] = 1
    positions = np.zeros(num_seqs * topk, dtype=np.int64)
    positions[: (num_seqs - pad) * topk] = np.repeat(seq_lens[: num_seqs - pad], topk)
    rpi = list(rng.choice(np.arange(1, 16), size=num_seqs - pad, replace=False)) + [0] * pad
    host_pool = np.arange(16 * 128, dtype=np.int32).reshape(16, 128)
    host_pool[0] = 0
    run = _run_template(xp, xp.array(host_pool, np.int32), rpi, seq_lens.tolist(), positions,
                        steps, topk, 1)
    _routed_same(monkeypatch, sglang_mod, xp, run)


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("page_size", [4, 16])
def test_branches_over_pages(sglang_mod, monkeypatch, kind, page_size):
    xp = KINDS[kind]
    rng = np.random.default_rng(page_size)
    seq_lens = rng.integers(0, 40, size=6).tolist()
    topk, steps = 3, 4
    host_pool = rng.integers(0, 1 << 16, size=(6, 40 + topk * (steps + 2 * page_size)),
                             dtype=np.int32)
    run = _run_template(xp, xp.array(host_pool, np.int32), [5, 4, 3, 2, 1, 0], seq_lens,
                        np.repeat(seq_lens, topk), steps, topk, page_size)
    _routed_same(monkeypatch, sglang_mod, xp, run)


# ---------------------------------------------------------------------------
# the drop-in on its own


def _args(pool, steps=2, topk=2, num_seqs=2):
    rpi = np.array([1, 0, 0], dtype=np.int64)
    lens = np.array([3, 2, 1], dtype=np.int64)
    pos = np.repeat(lens, topk)
    kv_indices = np.full((steps, 64), SENTINEL, dtype=np.int32)
    kv_indptr = np.zeros((steps, num_seqs * topk + 1), dtype=np.int32)
    return [rpi, pool, lens, kv_indices, kv_indptr, pos, pool.shape[1], 64,
            kv_indptr.shape[1], 2, 2, 4, 1]


def test_dropin_worked_example():
    pool = np.arange(2 * 16, dtype=np.int32).reshape(2, 16)
    args = _args(pool)
    generate_draft_decode_kv_indices[(2, 2, 2)](*args)
    kv_indices, kv_indptr = args[3], args[4]
    # step 0: request 0 (row 1, 3 tokens) branch 0 drafts at column 3,
    # branch 1 at 3 + 2; request 1 (row 0, 2 tokens) at 2 and 4
    assert kv_indices[0, :14].tolist() == [16, 17, 18, 19, 16, 17, 18, 21, 0, 1, 2, 0, 1, 4]
    assert (kv_indices[0, 14:] == SENTINEL).all()
    assert kv_indptr.tolist() == [[0, 4, 8, 11, 14], [0, 5, 10, 14, 18]]


def test_dropin_hostile_rows_get_minus_one():
    pool = np.arange(2 * 16, dtype=np.int32).reshape(2, 16)
    args = _args(pool, steps=1)
    args[0] = np.array([7, 0], dtype=np.int64)  # pool row 7 of 2
    generate_draft_decode_kv_indices[(1, 2, 2)](*args)
    assert args[3][0, :8].tolist() == [-1] * 8
    assert args[3][0, 8:14].tolist() == [0, 1, 2, 0, 1, 3]  # one step: branch 1 at 2 + 1


def test_dropin_refusals():
    pool = np.arange(2 * 16, dtype=np.int32).reshape(2, 16)
    with pytest.raises(TypeError, match="tuple"):
        generate_draft_decode_kv_indices[lambda meta: (2, 2, 2)](*_args(pool))
    with pytest.raises(ValueError, match="steps, bs, topk"):
        generate_draft_decode_kv_indices[(2, 2)](*_args(pool))
    args = _args(pool)
    args[7] = 63
    with pytest.raises(ValueError, match="kv_indices_stride"):
        generate_draft_decode_kv_indices[(2, 2, 2)](*args)
    args = _args(pool)
    args[6] = 15
    with pytest.raises(ValueError, match="pool_len"):
        generate_draft_decode_kv_indices[(2, 2, 2)](*args)
    args = _args(pool)
    args[9] = 1
    with pytest.raises(ValueError, match="bs_upper"):
        generate_draft_decode_kv_indices[(2, 2, 2)](*args)
    args = _args(pool)
    args[4] = np.zeros((2, 4), dtype=np.int32)  # B * K + 1 = 5 columns needed
    args[8] = 4
    with pytest.raises(ValueError, match="kv_indptr has 4 columns"):
        generate_draft_decode_kv_indices[(2, 2, 2)](*args)
    args = _args(pool)
    with pytest.raises(NotImplementedError, match="ENTRY_PAGE_SIZE"):
        generate_draft_decode_kv_indices[(2, 2, 2)](*args, ENTRY_PAGE_SIZE=2)
    args = _args(pool)
    args[3] = np.full((2, 64), SENTINEL, dtype=np.int64)
    with pytest.raises(NotImplementedError, match="int64 kv_indices"):
        generate_draft_decode_kv_indices[(2, 2, 2)](*args)
    assert (args[4] == 0).all()  # nothing written on refusal


def test_sglang_runs_what_attnmeta_does_not_build(monkeypatch):
    """ENTRY_PAGE_SIZE > 1 (the unified pool's read table): SGLang's kernel."""
    xp = KINDS["numpy"]
    mods = standin.install(monkeypatch, xp)
    kernel = mods[draft.CACHE_LOCS].generate_draft_decode_kv_indices
    widened = draft.vllm_standin.Kernel(
        "generate_draft_decode_kv_indices", lambda grid, *a, **k: None,
        draft.DRAFT_ARGS + ["ENTRY_PAGE_SIZE"])
    for name in (draft.CACHE_LOCS, draft.SPEC_UTILS, draft.DRAFT_BACKEND):
        setattr(mods[name], "generate_draft_decode_kv_indices", widened)
    del kernel
    from attnmeta.integrations import sglang

    pool = np.arange(2 * 16, dtype=np.int32).reshape(2, 16)
    with sglang.patch_sglang() as patch:
        assert "draft_decode_kv_indices" in patch.applied
        routed = mods[draft.DRAFT_BACKEND].generate_draft_decode_kv_indices
        routed[(2, 2, 2)](*_args(pool), ENTRY_PAGE_SIZE=4)
        assert patch.fallbacks["draft_decode_kv_indices"] == 1
        assert "ENTRY_PAGE_SIZE" in patch.fallback_reasons["draft_decode_kv_indices"]
