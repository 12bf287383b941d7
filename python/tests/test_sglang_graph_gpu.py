# SPDX-License-Identifier: Apache-2.0
"""SGLang's decode builds through attnmeta captured in a CUDA graph, with
SGLang's replay convention: the graph is captured once for the padded batch,
then every replay rewrites ``req_pool_indices`` and ``seq_lens`` in place,
the padding rows pointing at row 0 of ``req_to_token`` (reserved) with
SGLang's fill length. What each replay wrote equals the NumPy stand-in of
SGLang's function (test_sglang_metadata_integration, sglang_standin) run on
the same contents. Skipped without torch or a CUDA device."""

import numpy as np
import pytest

import sglang_standin
import vllm_standin
from cuda_graph_replay import BS, POOL_COLS, capture, cuda, padded, pool, replay
from attnmeta import _sglang_dropins as dropins
from test_sglang_metadata_integration import (fused_dsa_decode_metadata as dsa_reference,
                                              fused_dsa_target_verify_metadata as verify_reference,
                                              normal_decode_set_metadata as fa3_reference)

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

# each replay: (req_pool_indices of the real rows, their seq_lens); the rest
# of the BS rows are padding (req_pool_indices 0, seq_lens FILL)
STEPS = [
    ([3, 1, 7, 2], [100, 3, 250, 17]),
    ([5, 9], [384, 1]),
    ([11, 4, 6, 8, 10, 2], [64, 65, 1, 200, 129, 7]),
    ([], []),
]


@pytest.mark.parametrize("page_size", [1, 16])
def test_fa3_decode_metadata_replays(page_size):
    r2t = pool(page_size)
    pages = -(-POOL_COLS // page_size)
    swa_map = (np.arange(1 << 15) * 3 % (1 << 15)).astype(np.int64)
    rpi_dev, seq_dev = cuda(padded(STEPS[0])[0]), cuda(padded(STEPS[0])[1])
    outs = [torch.full((BS,), -7, dtype=torch.int32, device="cuda"),
            torch.full((BS + 1,), -7, dtype=torch.int32, device="cuda"),
            torch.full((BS, pages + 3), -7, dtype=torch.int32, device="cuda"),
            torch.full((BS, pages + 3), -7, dtype=torch.int32, device="cuda")]
    r2t_dev = cuda(r2t)

    class Pool:
        full_to_swa_index_mapping = cuda(swa_map)

    graph = capture(lambda: dropins.normal_decode_set_metadata(
        outs[0], outs[1], outs[2], r2t_dev, rpi_dev, pages, seq_dev, 0, page_size, outs[3],
        Pool()))

    class HostPool:
        full_to_swa_index_mapping = swa_map

    for step in STEPS:
        got = replay(graph, rpi_dev, seq_dev, outs, *padded(step))
        want = [np.full(o.shape, -7, np.int32) for o in outs]
        rpi, seq = padded(step)
        fa3_reference(want[0], want[1], want[2], r2t, rpi, pages, seq, 0, page_size, want[3],
                      HostPool())
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w, err_msg=str(step))


@pytest.mark.parametrize("verify", [0, 1], ids=["decode", "target_verify"])
def test_dsa_metadata_replays(verify):
    next_n, max_len, topk, ps = 3, POOL_COLS, 64, 64
    r2t = pool(10 + verify)
    rows = BS * (next_n if verify else 1)
    shapes = [(BS,), (BS + 1,), (rows, max_len), (rows,), (rows + 1,),
              (rows, -(-max_len // ps)), (rows,)]
    outs = [torch.full(s, -7, dtype=torch.int32, device="cuda") for s in shapes]
    rpi_dev, seq_dev = cuda(padded(STEPS[0])[0]), cuda(padded(STEPS[0])[1])
    r2t_dev = cuda(r2t)

    def call(fn, o, seq, rpi, table):
        if verify:
            fn(seq, rpi, table, o[0], o[1], o[2], o[6], o[3], o[4], o[5], BS, max_len, topk, ps,
               next_n)
        else:
            fn(seq, rpi, table, o[0], o[1], o[2], o[3], o[4], o[5], BS, max_len, topk, ps)

    fn = dropins.fused_dsa_target_verify_metadata if verify else dropins.fused_dsa_decode_metadata
    graph = capture(lambda: call(fn, outs, seq_dev, rpi_dev, r2t_dev))
    for step in STEPS:
        got = replay(graph, rpi_dev, seq_dev, outs, *padded(step))
        want = [np.full(s, -7, np.int32) for s in shapes]
        rpi, seq = padded(step)
        call(verify_reference if verify else dsa_reference, want, seq, rpi, r2t)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w, err_msg=str(step))


def test_flashinfer_slot_list_replays_through_the_patched_backend(monkeypatch):
    """The stand-in FlashInfer backend's update_decode_indices (a torch
    cumulative sum and cast-copy, then the slot-list kernel) with
    patch_sglang(): the kernel is attnmeta's launch, captured with the
    torch operations around it."""
    from attnmeta.integrations.sglang import patch_sglang

    r2t = pool(3)
    capacity = BS * POOL_COLS
    xp = vllm_standin.Arrays(torch=torch, device="cuda")
    mods = sglang_standin.install(monkeypatch, xp)
    backend = mods[sglang_standin.FLASHINFER]
    rpi_dev, seq_dev = cuda(padded(STEPS[0])[0]), cuda(padded(STEPS[0])[1])
    r2t_dev = cuda(r2t)
    indptr = torch.zeros(BS + 1, dtype=torch.int32, device="cuda")
    indices = torch.full((capacity,), -7, dtype=torch.int32, device="cuda")
    with patch_sglang() as handle:
        assert "flashinfer_kv_indices" in handle.applied, handle
        graph = capture(lambda: backend.update_decode_indices(
            r2t_dev, rpi_dev, seq_dev, BS, indptr, indices))
        before = handle.launches["flashinfer_kv_indices"]
        assert not [k for k in sglang_standin.launches() if not k.startswith("torch.")]
        for step in STEPS:
            got_indptr, got = replay(graph, rpi_dev, seq_dev, [indptr, indices], *padded(step),
                                     poison=[indices])
            rpi, seq = padded(step)
            want_indptr = np.concatenate([[0], np.cumsum(seq)]).astype(np.int32)
            want = np.full(capacity, -7, np.int32)
            for b in range(BS):
                want[want_indptr[b]:want_indptr[b + 1]] = r2t[rpi[b], :seq[b]]
            np.testing.assert_array_equal(got_indptr, want_indptr, err_msg=str(step))
            np.testing.assert_array_equal(got, want, err_msg=str(step))
        assert handle.launches["flashinfer_kv_indices"] == before  # replays are not calls
