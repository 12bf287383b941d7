# SPDX-License-Identifier: Apache-2.0
"""SGLang's TRT-LLM MLA and MHA graph metadata updates through attnmeta,
recorded in a CUDA graph as SGLang records them (init_forward_metadata_in_graph)
and replayed with SGLang's convention: captured once for the padded batch,
every replay rewrites ``req_pool_indices`` and ``seq_lens`` in place, the
padding rows pointing at the reserved row 0 of ``req_to_token`` with fill
length 1. What each replay wrote equals the NumPy rendering of SGLang's
function (sglang_graph_standin) run on the same contents and the same
poisoned buffers. Also SGLang's own graph test (lengths [3, 4] captured,
[65, 130] replayed with 2 drafts), and FA3's draft_extend_set_metadata.
Skipped without torch or a CUDA device."""

import numpy as np
import pytest

import sglang_graph_standin as sg
from cuda_graph_replay import BS, POISON, POOL_COLS, capture, cuda, padded, pool, replay
from attnmeta import _sglang_graph_dropins as dropins
from test_sglang_graph_integration import standin  # noqa: F401  (the fixture)

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

# each replay: (pool rows of the real requests, their seq_lens); the other
# BS rows are padding (pool row 0, length FILL). Lengths stay below
# POOL_COLS - 4 so that every page SGLang reads is inside the pool row.
STEPS = [
    ([3, 1, 7, 2], [100, 3, 250, 17]),
    ([5, 9], [379, 1]),
    ([11, 4, 6, 8, 10, 2], [64, 65, 1, 200, 129, 7]),
    ([], []),
]


@pytest.mark.parametrize("page_size,offset", [(32, 0), (64, 2)])
def test_trtllm_mla_graph_metadata_replays(page_size, offset):
    r2t = pool(page_size + offset)
    width = POOL_COLS // page_size + 2
    outs = [torch.full((BS, width), POISON, dtype=torch.int32, device="cuda"),
            torch.full((BS,), POISON, dtype=torch.int32, device="cuda")]
    rpi_dev, seq_dev = cuda(padded(STEPS[0])[0]), cuda(padded(STEPS[0])[1])
    r2t_dev = cuda(r2t)
    graph = capture(lambda: dropins.update_trtllm_mla_graph_metadata(
        req_pool_indices=rpi_dev, seq_lens=seq_dev, req_to_token=r2t_dev,
        block_kv_indices=outs[0], bs=BS, seqlen_offset=offset, page_size=page_size,
        seq_lens_k=outs[1]))
    for step in STEPS:
        rpi, seq = padded(step)
        got = replay(graph, rpi_dev, seq_dev, outs, rpi, seq)
        want = [np.full((BS, width), POISON, np.int32), np.full(BS, POISON, np.int32)]
        sg.update_trtllm_mla_graph_metadata(
            req_pool_indices=rpi, seq_lens=seq, req_to_token=r2t, block_kv_indices=want[0], bs=BS,
            seqlen_offset=offset, page_size=page_size, seq_lens_k=want[1])
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w, err_msg=str(step))


def test_trtllm_mla_sglangs_graph_case():
    """SGLang's test_metadata_update_records_inside_cuda_graph: captured with
    lengths [3, 4], replayed with [65, 130] and 2 drafts."""
    r2t = torch.arange(4 * 256, dtype=torch.int32, device="cuda").reshape(4, 256)
    rpi = torch.arange(2, dtype=torch.int64, device="cuda")
    seq = torch.tensor([3, 4], dtype=torch.int64, device="cuda")
    table = torch.full((4, 8), -1, dtype=torch.int32, device="cuda")
    lens_k = torch.zeros(4, dtype=torch.int32, device="cuda")
    graph = capture(lambda: dropins.update_trtllm_mla_graph_metadata(
        req_pool_indices=rpi, seq_lens=seq, req_to_token=r2t, block_kv_indices=table, bs=2,
        seqlen_offset=2, page_size=64, seq_lens_k=lens_k))
    seq.copy_(torch.tensor([65, 130], dtype=torch.int64))
    graph.replay()
    torch.cuda.synchronize()
    assert lens_k[:2].tolist() == [67, 132]
    assert table[1, :3].tolist() == (r2t[1, ::64][:3] // 64).tolist()
    assert table[:2, 3:].eq(-1).all() and table[2:].eq(-1).all()


@pytest.mark.parametrize("seq_dtype", [np.int64, np.int32], ids=["int64", "int32"])
@pytest.mark.parametrize("offset", [0, 3])
def test_trtllm_mha_graph_metadata_replays(seq_dtype, offset):
    ps = 16
    pages = POOL_COLS // ps
    r2t = pool(20 + offset)
    mapping = (np.arange((1 << 15) + ps + 1) * 7 % (1 << 15)).astype(np.int64)
    mapping[-1] = -1
    shapes = [(BS,), (BS + 1,), (BS, pages), (BS, pages)]
    outs = [torch.full(s, POISON, dtype=torch.int32, device="cuda") for s in shapes]
    rpi_dev = cuda(padded(STEPS[0])[0])
    seq_dev = cuda(padded(STEPS[0], seq_dtype)[1])
    r2t_dev, map_dev = cuda(r2t), cuda(mapping)
    graph = capture(lambda: dropins.update_trtllm_mha_graph_metadata(
        req_pool_indices=rpi_dev, seq_lens=seq_dev, req_to_token=r2t_dev, cache_seqlens=outs[0],
        cu_seqlens_k=outs[1], page_table=outs[2], bs=BS, seqlen_offset=offset,
        max_seq_pages=pages, page_size=ps, swa_mapping=map_dev, swa_page_table=outs[3]))
    for step in STEPS:
        rpi, seq = padded(step, seq_dtype)
        got = replay(graph, rpi_dev, seq_dev, outs, rpi, seq)
        want = [np.full(s, POISON, np.int32) for s in shapes]
        sg.update_trtllm_mha_graph_metadata(
            req_pool_indices=rpi, seq_lens=seq, req_to_token=r2t, cache_seqlens=want[0],
            cu_seqlens_k=want[1], page_table=want[2], bs=BS, seqlen_offset=offset,
            max_seq_pages=pages, page_size=ps, swa_mapping=mapping, swa_page_table=want[3])
        want[1][0] = 0  # SGLang's kernel leaves cu_seqlens_k[0]; attnmeta writes its 0
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w, err_msg=str(step))


def test_fa3_draft_extend_metadata_replays():
    """FA3's draft_extend_set_metadata captured once: each replay's lengths,
    both prefix sums and one page-table row a request equal SGLang's."""
    from attnmeta._sglang_dropins import draft_extend_set_metadata

    ps, width = 16, POOL_COLS // 16
    r2t = pool(40)
    shapes = [(BS,), (BS + 1,), (BS + 1,), (BS, width)]
    outs = [torch.full(s, POISON, dtype=torch.int32, device="cuda") for s in shapes]
    rpi_dev, seq_dev = cuda(padded(STEPS[0])[0]), cuda(padded(STEPS[0])[1])
    ext_dev = cuda(np.ones(BS, np.int64))
    r2t_dev = cuda(r2t)
    graph = capture(lambda: draft_extend_set_metadata(
        outs[0], outs[1], outs[2], outs[3], r2t_dev, rpi_dev, seq_dev, ext_dev, ps))
    rng = np.random.default_rng(5)
    for step in STEPS:
        rpi, seq = padded(step)
        ext = rng.integers(1, 5, BS).astype(np.int64)
        ext_dev.copy_(torch.from_numpy(ext))
        got = replay(graph, rpi_dev, seq_dev, outs, rpi, seq)
        want = [np.full(s, POISON, np.int32) for s in shapes]
        sg.draft_extend_set_metadata(want[0], want[1], want[2], want[3], r2t, rpi, seq, ext, ps)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w, err_msg=str(step))


def test_patched_backends_record_attnmetas_launch(standin):  # noqa: F811
    """The routed bindings of the stand-in TRT-LLM backends, called with
    torch tensors and captured: one attnmeta launch each at capture and
    warm-up, none at replay, SGLang's values."""
    from attnmeta.integrations.sglang import patch_sglang

    r2t = pool(5)
    r2t_dev = cuda(r2t)
    rpi_dev, seq_dev = cuda(padded(STEPS[0])[0]), cuda(padded(STEPS[0])[1])
    mla = [torch.full((BS, 8), POISON, dtype=torch.int32, device="cuda"),
           torch.full((BS,), POISON, dtype=torch.int32, device="cuda")]
    mha = [torch.full(s, POISON, dtype=torch.int32, device="cuda")
           for s in ((BS,), (BS + 1,), (BS, 24))]
    with patch_sglang() as handle:
        mla_fn = standin.trtllm_mla_backend.update_trtllm_mla_graph_metadata
        mha_fn = standin.trtllm_mha_backend.update_trtllm_mha_graph_metadata

        def build():
            mla_fn(req_pool_indices=rpi_dev, seq_lens=seq_dev, req_to_token=r2t_dev,
                   block_kv_indices=mla[0], bs=BS, seqlen_offset=1, page_size=64,
                   seq_lens_k=mla[1])
            mha_fn(req_pool_indices=rpi_dev, seq_lens=seq_dev, req_to_token=r2t_dev,
                   cache_seqlens=mha[0], cu_seqlens_k=mha[1], page_table=mha[2], bs=BS,
                   seqlen_offset=1, max_seq_pages=24, page_size=16,
                   out_cache_loc=torch.zeros(BS, dtype=torch.int64, device="cuda"))

        graph = capture(build)
        assert handle.launches["trtllm_mla_graph_metadata"] == 2
        assert handle.launches["trtllm_mha_graph_metadata"] == 2
        assert sg.CALLS == {}  # SGLang's functions did not run
        for step in STEPS:
            rpi, seq = padded(step)
            got = replay(graph, rpi_dev, seq_dev, mla + mha, rpi, seq)
            want = [np.full(o.shape, POISON, np.int32) for o in mla + mha]
            sg._mla(rpi, seq, r2t, want[0], BS, 1, 64, want[1])
            sg.update_trtllm_mha_graph_metadata(
                req_pool_indices=rpi, seq_lens=seq, req_to_token=r2t, cache_seqlens=want[2],
                cu_seqlens_k=want[3], page_table=want[4], bs=BS, seqlen_offset=1,
                max_seq_pages=24, page_size=16)
            want[3][0] = 0
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w, err_msg=str(step))
        assert handle.launches["trtllm_mla_graph_metadata"] == 2  # replays are not calls
        assert handle.launches["trtllm_mha_graph_metadata"] == 2
