# SPDX-License-Identifier: Apache-2.0
"""The drop-ins for SGLang's TRT-LLM MLA and MHA graph metadata updates on
NumPy buffers (the CPU backend), bit for bit against the NumPy renderings
of SGLang's functions (sglang_graph_standin) on poisoned buffers with rows
past ``bs``: SGLang's own cases re-expressed (the MLA parity grid, the long
and the large-batch cases, the graph replay's ``[67, 132]``; the MHA
correctness grid for ``q_mode = 0``, static and dynamic widths, SWA tables,
``bs == 0``), CUDA-graph padding rows at pool row 0, what is refused, and
the defined answers on data SGLang's kernels cannot take."""

import numpy as np
import pytest

import sglang_graph_standin as sg
from attnmeta._sglang_dropins import draft_extend_set_metadata
from attnmeta._sglang_graph_dropins import (
    update_trtllm_mha_graph_metadata,
    update_trtllm_mha_graph_metadata_full_width,
    update_trtllm_mla_graph_metadata,
)

STALE = -77
GUARD = 2  # rows past bs in every output, which must stay as they were


def mla_case(bs, page_size, seqlen_offset, seed, pool_size=8, max_context_len=2048,
             seq_lens=None):
    """SGLang's _run_parity_case data: a random pool, distinct rows, random lengths."""
    rng = np.random.default_rng(seed)
    r2t = rng.integers(0, pool_size * max_context_len, (pool_size, max_context_len),
                       dtype=np.int64).astype(np.int32)
    rpi = rng.permutation(pool_size)[:bs].astype(np.int64)
    if seq_lens is None:
        seq_lens = rng.integers(1, max_context_len - seqlen_offset, bs).astype(np.int64)
    return r2t, rpi, np.asarray(seq_lens, np.int64)


def run_mla(fn, r2t, rpi, seq, bs, page_size, offset, width, with_k, fill):
    rows = bs + GUARD
    table = np.full((rows, width), fill, np.int32)
    lens_k = np.full(rows, STALE, np.int32) if with_k else None
    pad_rpi = np.concatenate([rpi, np.zeros(GUARD, np.int64)])
    pad_seq = np.concatenate([seq, np.ones(GUARD, np.int64)])
    fn(req_pool_indices=pad_rpi, seq_lens=pad_seq, req_to_token=r2t, block_kv_indices=table,
       bs=bs, seqlen_offset=offset, page_size=page_size, seq_lens_k=lens_k)
    return table, lens_k


def check_mla(r2t, rpi, seq, bs, page_size, offset, width, with_k):
    for fill in (-1, STALE):  # SGLang's -1 buffers, and a poison that shows every write
        got = run_mla(update_trtllm_mla_graph_metadata, r2t, rpi, seq, bs, page_size, offset,
                      width, with_k, fill)
        want = run_mla(sg.update_trtllm_mla_graph_metadata, r2t, rpi, seq, bs, page_size, offset,
                       width, with_k, fill)
        np.testing.assert_array_equal(got[0], want[0])
        if with_k:
            np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("bs", [1, 3, 8])
@pytest.mark.parametrize("page_size", [32, 64])
@pytest.mark.parametrize("seqlen_offset", [0, 4])
@pytest.mark.parametrize("with_seq_lens_k", [False, True])
def test_mla_parity_with_sglang(bs, page_size, seqlen_offset, with_seq_lens_k):
    seed = 1234 + bs * 31 + page_size + seqlen_offset * 7 + int(with_seq_lens_k)
    r2t, rpi, seq = mla_case(bs, page_size, seqlen_offset, seed)
    check_mla(r2t, rpi, seq, bs, page_size, seqlen_offset, 2048 // page_size, with_seq_lens_k)


def test_mla_long_sequences():
    ctx = 1_000_064
    r2t, rpi, seq = mla_case(2, 64, 4, 7, pool_size=2, max_context_len=ctx,
                             seq_lens=[1_000_000, 999_983])
    check_mla(r2t, rpi, seq, 2, 64, 4, ctx // 64, True)


def test_mla_large_batch():
    bs = 16 * 1024
    seq = np.arange(bs, dtype=np.int64) % 257 + 1
    r2t, rpi, seq = mla_case(bs, 32, 2, 8, pool_size=bs, max_context_len=512, seq_lens=seq)
    table = np.full((bs, 512 // 32), -1, np.int32)
    want = table.copy()
    lens_k, want_k = np.zeros(bs, np.int32), np.zeros(bs, np.int32)
    args = dict(req_pool_indices=rpi, seq_lens=seq, req_to_token=r2t, bs=bs, seqlen_offset=2,
                page_size=32)
    update_trtllm_mla_graph_metadata(block_kv_indices=table, seq_lens_k=lens_k, **args)
    sg.update_trtllm_mla_graph_metadata(block_kv_indices=want, seq_lens_k=want_k, **args)
    np.testing.assert_array_equal(table, want)
    np.testing.assert_array_equal(lens_k, want_k)


def test_mla_graph_replay_values_and_padding_rows():
    """SGLang's graph test: lengths [65, 130] with 2 drafts give [67, 132] and
    3 pages in row 1; two more rows are graph padding (pool row 0, length 1)."""
    r2t = np.arange(4 * 256, dtype=np.int32).reshape(4, 256)
    r2t[0] = 0
    table = np.full((4, 8), -1, np.int32)
    lens_k = np.full(4, STALE, np.int32)
    update_trtllm_mla_graph_metadata(
        req_pool_indices=np.array([1, 2, 0, 0]), seq_lens=np.array([65, 130, 1, 1]),
        req_to_token=r2t, block_kv_indices=table, bs=4, seqlen_offset=2, page_size=64,
        seq_lens_k=lens_k)
    assert lens_k.tolist() == [67, 132, 3, 3]
    np.testing.assert_array_equal(table[1, :3], r2t[2, ::64][:3] // 64)
    assert table[0, :2].tolist() == (r2t[1, [0, 64]] // 64).tolist()
    assert table[2].tolist() == table[3].tolist() == [0] + [-1] * 7
    assert (table[:, 3:] == -1).all() and table[0, 2] == -1


def test_mla_bs_zero_writes_nothing():
    table = np.full((2, 4), STALE, np.int32)
    lens_k = np.full(2, STALE, np.int32)
    update_trtllm_mla_graph_metadata(
        req_pool_indices=np.zeros(0, np.int64), seq_lens=np.zeros(0, np.int64),
        req_to_token=np.zeros((2, 8), np.int32), block_kv_indices=table, bs=0, seqlen_offset=0,
        page_size=4, seq_lens_k=lens_k)
    assert (table == STALE).all() and (lens_k == STALE).all()


def test_mla_int32_inputs_are_read_as_sglangs():
    r2t, rpi, seq = mla_case(3, 32, 4, 99)
    got = np.full((3, 64), -1, np.int32)
    want = got.copy()
    args = dict(req_to_token=r2t, bs=3, seqlen_offset=4, page_size=32)
    update_trtllm_mla_graph_metadata(req_pool_indices=rpi.astype(np.int32),
                                     seq_lens=seq.astype(np.int32), block_kv_indices=got, **args)
    sg.update_trtllm_mla_graph_metadata(req_pool_indices=rpi, seq_lens=seq,
                                        block_kv_indices=want, **args)
    np.testing.assert_array_equal(got, want)


# ---- TRT-LLM MHA ----

MHA_PAGE = 128  # SGLang's test's PAGE_SIZE


def mha_inputs(bs, seed, pool_size=64, max_num_pages=16):
    """SGLang's _build_inputs: int32 lengths in [1, seq_max], distinct pool rows."""
    rng = np.random.default_rng(seed)
    stride = max_num_pages * MHA_PAGE
    cap = pool_size * stride
    r2t = rng.integers(0, cap, (pool_size, stride), dtype=np.int64).astype(np.int32)
    rpi = rng.permutation(pool_size)[:bs].astype(np.int64)
    seq = rng.integers(1, min((max_num_pages - 2) * MHA_PAGE, 1500) + 1, bs).astype(np.int32)
    mapping = rng.integers(0, cap, cap + MHA_PAGE + 1, dtype=np.int64)
    mapping[-1] = -1  # SGLang's sentinel
    return r2t, rpi, seq, mapping


def mha_buffers(bs, width, swa):
    rows = bs + GUARD
    return dict(cache_seqlens=np.full(rows, STALE, np.int32),
                cu_seqlens_k=np.concatenate([[0], np.full(rows, STALE)]).astype(np.int32),
                page_table=np.full((rows, width), STALE, np.int32),
                swa_page_table=np.full((rows, width), STALE, np.int32) if swa else None)


def padded(x):
    return np.concatenate([x, np.ones(GUARD, x.dtype)])


def check_mha(fn, reference, bs, seqlen_offset, swa, max_seq_pages, seed, **extra):
    r2t, rpi, seq, mapping = mha_inputs(bs, seed)
    got, want = mha_buffers(bs, 16, swa), mha_buffers(bs, 16, swa)
    args = dict(req_pool_indices=padded(rpi), seq_lens=padded(seq), req_to_token=r2t, bs=bs,
                seqlen_offset=seqlen_offset, max_seq_pages=max_seq_pages, page_size=MHA_PAGE,
                swa_mapping=mapping if swa else None, **extra)
    fn(**got, **args)
    reference(**want, **args)
    for name in got:
        if got[name] is not None:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)


@pytest.mark.parametrize("bs", [1, 3, 8, 17])
@pytest.mark.parametrize("seqlen_offset", [0, 1, 4])
@pytest.mark.parametrize("with_swa", [False, True])
@pytest.mark.parametrize("static_width", [False, True])
def test_mha_metadata_like_sglangs_test(bs, seqlen_offset, with_swa, static_width):
    seed = 1234 + bs * 31 + seqlen_offset * 7 + int(with_swa) + 1000 * int(static_width)
    _, _, seq, _ = mha_inputs(bs, seed)
    dynamic = (int(seq.max()) + seqlen_offset + MHA_PAGE - 1) // MHA_PAGE
    pages = 16 if static_width else dynamic
    # out_cache_loc without swa_out_cache_loc is read by neither
    check_mha(update_trtllm_mha_graph_metadata, sg.update_trtllm_mha_graph_metadata, bs,
              seqlen_offset, with_swa, pages, seed, out_cache_loc=np.arange(bs, dtype=np.int64))


@pytest.mark.parametrize("with_swa", [False, True])
@pytest.mark.parametrize("pages", [1, 3, 6])
def test_mha_max_seq_pages_bounds_the_live_prefix(pages, with_swa):
    """Rows longer than max_seq_pages pages get max_seq_pages of them."""
    check_mha(update_trtllm_mha_graph_metadata, sg.update_trtllm_mha_graph_metadata, 8, 2,
              with_swa, pages, 40 + pages)


@pytest.mark.parametrize("with_swa", [False, True])
@pytest.mark.parametrize("bs,pages", [(3, 16), (8, 7), (17, 1)])
def test_mha_first_form_writes_every_row_to_max_seq_pages(bs, pages, with_swa):
    check_mha(update_trtllm_mha_graph_metadata_full_width,
              sg.update_trtllm_mha_graph_metadata_first, bs, 2, with_swa, pages, bs + 5)


def test_mha_skip_page_table_writes_lengths_only():
    check_mha(update_trtllm_mha_graph_metadata, sg.update_trtllm_mha_graph_metadata, 5, 3, True,
              16, 11, skip_page_table=True)
    got = mha_buffers(2, 4, False)
    update_trtllm_mha_graph_metadata(
        req_pool_indices=np.array([1, 0]), seq_lens=np.array([9, 1]),
        req_to_token=np.arange(64, dtype=np.int32).reshape(2, 32),
        cache_seqlens=got["cache_seqlens"], cu_seqlens_k=got["cu_seqlens_k"], page_table=None,
        bs=2, seqlen_offset=0, max_seq_pages=4, page_size=8, skip_page_table=True)
    assert got["cache_seqlens"].tolist() == [9, 1, STALE, STALE]
    assert got["cu_seqlens_k"].tolist() == [0, 9, 10, STALE, STALE]


def test_mha_padding_rows_read_pool_row_zero():
    r2t = np.arange(4 * 16, dtype=np.int32).reshape(4, 16)
    r2t[0] = 0
    got, want = mha_buffers(4, 4, True), mha_buffers(4, 4, True)
    mapping = np.arange(64, dtype=np.int64) * 2
    args = dict(req_pool_indices=np.array([2, 3, 0, 0, 0, 0]),
                seq_lens=np.array([5, 16, 1, 1, 1, 1], np.int64), req_to_token=r2t, bs=4,
                seqlen_offset=0, max_seq_pages=4, page_size=4, swa_mapping=mapping)
    update_trtllm_mha_graph_metadata(**got, **args)
    sg.update_trtllm_mha_graph_metadata(**want, **args)
    for name in got:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    assert got["page_table"][2].tolist() == [0, STALE, STALE, STALE]
    assert got["swa_page_table"][3].tolist() == [0, STALE, STALE, STALE]


def test_mha_bs_zero_writes_nothing():
    got = mha_buffers(0, 4, False)
    update_trtllm_mha_graph_metadata(
        req_pool_indices=np.zeros(0, np.int64), seq_lens=np.zeros(0, np.int32),
        req_to_token=np.zeros((4, 4 * MHA_PAGE), np.int32), bs=0, seqlen_offset=0,
        max_seq_pages=0, page_size=MHA_PAGE, **{k: v for k, v in got.items() if v is not None})
    assert (got["cache_seqlens"] == STALE).all()
    assert got["cu_seqlens_k"].tolist() == [0, STALE, STALE]


def test_mha_sentinels_of_the_swa_table():
    """A negative slot and a negative mapping entry give -1 in the SWA table,
    as SGLang's; a negative slot's page is -1 too (SGLang's truncation gives 0
    there, contract section 12)."""
    r2t = np.array([[0, 1, 2, 3, 4, 5, 6, 7], [-1, 9, 10, 11, 12, 13, 14, 15]], np.int32)
    mapping = np.arange(20, dtype=np.int64) * 3
    mapping[4] = -1
    got = mha_buffers(2, 4, True)
    update_trtllm_mha_graph_metadata(
        req_pool_indices=np.array([0, 1]), seq_lens=np.array([8, 8]), req_to_token=r2t,
        bs=2, seqlen_offset=0, max_seq_pages=4, page_size=2, swa_mapping=mapping, **got)
    assert got["swa_page_table"][0].tolist() == [0, 3, -1, 9]
    assert got["swa_page_table"][1].tolist() == [-1, 15, 18, 21]
    assert got["page_table"][1].tolist() == [-1, 5, 6, 7]


@pytest.mark.parametrize("extra,why", [
    (dict(swa_out_cache_loc=np.zeros(3, np.int64), out_cache_loc=np.zeros(2, np.int64)),
     "swa_out_cache_loc"),
])
def test_mha_refuses_what_the_pool_operation_lacks(extra, why):
    got = mha_buffers(2, 4, False)
    with pytest.raises(NotImplementedError, match=why):
        update_trtllm_mha_graph_metadata(
            req_pool_indices=np.array([0, 1]), seq_lens=np.array([3, 4]),
            req_to_token=np.zeros((2, 8), np.int32), bs=2, seqlen_offset=0, max_seq_pages=4,
            page_size=2, **{k: v for k, v in got.items() if v is not None}, **extra)
    assert (got["cache_seqlens"] == STALE).all() and (got["page_table"] == STALE).all()


@pytest.mark.parametrize("change,why", [
    (dict(swa_page_table=np.zeros((4, 4), np.int32)), "without swa_mapping"),
    (dict(swa_page_table=np.zeros((4, 3), np.int32), swa_mapping=np.zeros(8, np.int64)),
     "3 columns"),
    (dict(page_size=0), "page_size"),
    (dict(bs=-1), "bs"),
    (dict(page_table=np.zeros((1, 4), np.int32)), "fewer than the 2 needed"),
    (dict(q_mode=2, q_stride=0, cu_seqlens_q=np.zeros(3, np.int32)), "q_stride"),
    (dict(q_mode=1, cu_seqlens_q=np.zeros(3, np.int32)), "qlens"),
    (dict(q_mode=3, cu_seqlens_q=np.zeros(3, np.int32)), "q_mode"),
    (dict(q_mode=1, qlens=np.ones(2, np.int32)), "cu_seqlens_q"),
])
def test_mha_bad_arguments_write_nothing(change, why):
    got = mha_buffers(2, 4, False)
    args = dict(req_pool_indices=np.array([0, 1]), seq_lens=np.array([3, 4]),
                req_to_token=np.zeros((2, 8), np.int32), bs=2, seqlen_offset=0, max_seq_pages=4,
                page_size=2, cache_seqlens=got["cache_seqlens"], cu_seqlens_k=got["cu_seqlens_k"],
                page_table=got["page_table"])
    args.update(change)
    with pytest.raises(ValueError, match=why):
        update_trtllm_mha_graph_metadata(**args)
    assert (got["cache_seqlens"] == STALE).all() and (got["cu_seqlens_k"][1:] == STALE).all()


def test_mla_bad_arguments_write_nothing():
    table = np.full((1, 4), STALE, np.int32)
    with pytest.raises(ValueError, match="fewer than the 2 needed"):
        update_trtllm_mla_graph_metadata(
            req_pool_indices=np.array([0, 1]), seq_lens=np.array([3, 4]),
            req_to_token=np.zeros((2, 8), np.int32), block_kv_indices=table, bs=2,
            seqlen_offset=0, page_size=2)
    assert (table == STALE).all()


def test_first_form_refuses_a_width_past_the_table():
    got = mha_buffers(2, 4, False)
    with pytest.raises(ValueError, match="wider than page_table"):
        update_trtllm_mha_graph_metadata_full_width(
            req_pool_indices=np.array([0, 1]), seq_lens=np.array([3, 4]),
            req_to_token=np.zeros((2, 16), np.int32), bs=2, seqlen_offset=0, max_seq_pages=5,
            page_size=2, cache_seqlens=got["cache_seqlens"], cu_seqlens_k=got["cu_seqlens_k"],
            page_table=got["page_table"])
    assert (got["page_table"] == STALE).all()


@pytest.mark.parametrize("q_mode", [1, 2])
@pytest.mark.parametrize("bs", [1, 3, 17])
@pytest.mark.parametrize("full_width", [False, True])
def test_mha_q_modes_like_sglang(q_mode, bs, full_width):
    """cu_seqlens_q of q_mode 1 (cumsum(qlens)) and 2 ((b + 1) * q_stride)
    next to the per-request page tables, in the same launch."""
    r2t, rpi, seq, mapping = mha_inputs(bs, 4321 + bs)
    qlens = np.random.default_rng(bs).integers(0, 7, bs + GUARD).astype(np.int32)
    pairs = (update_trtllm_mha_graph_metadata, sg.update_trtllm_mha_graph_metadata)
    if full_width:
        pairs = (update_trtllm_mha_graph_metadata_full_width,
                 sg.update_trtllm_mha_graph_metadata_first)
    runs = []
    for fn in pairs:
        out = mha_buffers(bs, 16, True)
        out["cu_seqlens_q"] = np.concatenate([[0], np.full(bs + GUARD, STALE)]).astype(np.int32)
        fn(**out, req_pool_indices=padded(rpi), seq_lens=padded(seq), req_to_token=r2t, bs=bs,
           seqlen_offset=1, max_seq_pages=16, page_size=MHA_PAGE, swa_mapping=mapping,
           qlens=qlens, q_stride=4, q_mode=q_mode)
        runs.append(out)
    for name in runs[0]:
        np.testing.assert_array_equal(runs[0][name], runs[1][name], err_msg=name)
    assert (runs[0]["cu_seqlens_q"][bs + 1:] == STALE).all()


def draft_extend_inputs(bs, page_size, seed):
    rng = np.random.default_rng(seed)
    r2t = rng.integers(0, 1 << 20, (bs + 4, 40 * page_size)).astype(np.int32)
    r2t[0] = 0
    rpi = rng.permutation(bs + 4)[:bs].astype(np.int64)
    seq = rng.integers(1, 40 * page_size, bs).astype(np.int64)
    ext = rng.integers(1, 5, bs).astype(np.int32)
    return r2t, rpi, seq, ext


def run_draft_extend(fn, r2t, rpi, seq, ext, page_size, width):
    bs = len(rpi)
    out = [np.full(bs, STALE, np.int32), np.full(bs + 1 + GUARD, STALE, np.int32),
           np.full(bs + 1 + GUARD, STALE, np.int32), np.full((bs + GUARD, width), STALE, np.int32)]
    fn(out[0], out[1], out[2], out[3], r2t, rpi, seq, ext, page_size)
    return out


@pytest.mark.parametrize("bs", [1, 4, 33])
@pytest.mark.parametrize("page_size", [1, 16])
@pytest.mark.parametrize("width", [3, 40])
def test_fa3_draft_extend_like_sglang(bs, page_size, width):
    """FA3's draft_extend_set_metadata: cache_seqlens, cu_seqlens_k,
    cu_seqlens_q = cumsum(extend_seq_lens) and one page-table row a request,
    the live prefix kept inside the table's width; rows and entries past
    them stay as they were."""
    r2t, rpi, seq, ext = draft_extend_inputs(bs, page_size, 99 + bs + page_size + width)
    got = run_draft_extend(draft_extend_set_metadata, r2t, rpi, seq, ext, page_size, width)
    want = run_draft_extend(sg.draft_extend_set_metadata, r2t, rpi, seq, ext, page_size, width)
    for g, w, name in zip(got, want, ("cache_seqlens", "cu_seqlens_k", "cu_seqlens_q", "pages")):
        np.testing.assert_array_equal(g, w, err_msg=name)
    assert (got[3][bs:] == STALE).all() and (got[2][bs + 1:] == STALE).all()


def test_fa3_draft_extend_refusals_write_nothing():
    r2t, rpi, seq, ext = draft_extend_inputs(2, 16, 5)
    out = run_draft_extend(lambda *a: None, r2t, rpi, seq, ext, 16, 4)
    with pytest.raises(NotImplementedError, match="swa_out_cache_loc"):
        draft_extend_set_metadata(*out, r2t, rpi, seq, ext, 16,
                                  full_to_swa_index_mapping=np.zeros(8, np.int64))
    with pytest.raises(ValueError, match="power of two"):
        draft_extend_set_metadata(*out, r2t, rpi, seq, ext, 12)
    for x in out:
        assert (x == STALE).all()
