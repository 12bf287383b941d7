# SPDX-License-Identifier: Apache-2.0
"""The patched stand-in builds (vllm_standin*.py) on torch CUDA tensors,
captured in a CUDA graph: the boundaries, lengths and top-k positions are
rewritten in place and the graph replayed, and what it wrote equals the
stand-in's own (vLLM's) code run on the new contents. Skipped without torch
or a CUDA device."""

import numpy as np
import pytest

import vllm_standin

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

INDEXER = "vllm.v1.attention.backends.mla.indexer"
WIDTH = 6
CAPACITY = 32
TOKENS = 11  # the padded token count the graph is captured for

# (query_start_loc, seq_lens): the captured step, then two rewrites in place
STEPS = [
    ([0, 3, 4, 8, 8], [10, 7, 12, 0]),
    ([0, 1, 4, 6, 8], [20, 9, 15, 6]),
    ([0, 2, 3, 3, 5], [5, 5, 0, 9]),
]


def _table(rows):
    return [[100 * r + c + 1 for c in range(WIDTH)] for r in range(rows)]


def _common(mods, xp, qsl, seq):
    cls = mods["vllm.v1.attention.backend"].CommonAttentionMetadata
    slots = xp.array([5] * TOKENS, np.int64)
    return cls(xp.i32(qsl), xp.host(qsl), xp.i32(seq), xp.i32(_table(len(seq))), len(seq),
               TOKENS, slot_mapping=slots)


def _lists(meta):
    d = meta.decode
    out = dict(seq_lens=d.seq_lens, block_table=d.block_table, decode_lens=d.decode_lens,
               per_req=d.per_req_decode_lens, slot_mapping=meta.slot_mapping)
    if d.indices is not None:
        out["indices"] = d.indices
    return {k: np.asarray(v.cpu() if hasattr(v, "cpu") else v).tolist() for k, v in out.items()}


def _reference(monkeypatch, qsl, seq, options):
    """The stand-in's own code on NumPy arrays (no patch)."""
    xp = vllm_standin.Arrays()
    mods = vllm_standin.install(monkeypatch, xp)
    builder = mods[INDEXER].DeepseekV32IndexerMetadataBuilder(
        CAPACITY, WIDTH, num_speculative_tokens=3, **options)
    meta = builder.build(0, _common(mods, xp, qsl, seq))
    return _lists(meta), np.asarray(builder.decode_seq_lens_buffer).tolist()


@pytest.mark.parametrize("options", [dict(supports_varlen=True, compress_ratio=4),
                                     dict(supports_varlen=True),
                                     dict(use_flattening=True)], ids=str)
def test_patched_build_in_a_cuda_graph(vllm_mod, monkeypatch, options):
    expected = [_reference(monkeypatch, qsl, seq, options) for qsl, seq in STEPS]
    xp = vllm_standin.Arrays(torch=torch, device="cuda")
    mods = vllm_standin.install(monkeypatch, xp)
    patch = vllm_mod.patch_vllm()
    builder = mods[INDEXER].DeepseekV32IndexerMetadataBuilder(
        CAPACITY, WIDTH, num_speculative_tokens=3, **options)
    common = _common(mods, xp, *STEPS[0])
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        builder.build(0, common)  # warm-up, outside the capture
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    vllm_standin.LAUNCHES.clear()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        meta = builder.build(0, common)
    # nothing of the stand-in's own kernels was captured: no host round trip
    assert not [k for k in vllm_standin.standin_launches() if not k.startswith("torch.")]
    for (qsl, seq), (want, want_buffer) in zip(STEPS, expected):
        common.query_start_loc.copy_(torch.tensor(qsl, dtype=torch.int32))
        common.seq_lens.copy_(torch.tensor(seq, dtype=torch.int32))
        builder.decode_seq_lens_buffer[TOKENS:].fill_(-5)  # must be cleared again
        graph.replay()
        torch.cuda.synchronize()
        got = _lists(meta)
        if options.get("use_flattening"):
            # the repeat_interleave branch clears column 0 of padding rows only
            real = qsl[-1]
            for rows in (got["block_table"], want["block_table"]):
                rows[real:] = [row[:1] for row in rows[real:]]
        assert got == want, (qsl, seq)
        assert builder.decode_seq_lens_buffer.cpu().tolist() == want_buffer
    assert sum(patch.launches.values()) >= 1
    patch.restore()


def test_patched_topk_conversions_in_a_cuda_graph(vllm_mod, monkeypatch):
    layers, topk = 61, 16
    rng = np.random.default_rng(5)
    steps = [(rng.integers(0, 3, 9), rng.integers(-1, 64, (9, topk))) for _ in range(3)]
    table = [[100 * r + c for c in range(16)] for r in range(3)]

    def reference(req, pos):
        xp = vllm_standin.Arrays()
        mods = vllm_standin.install(monkeypatch, xp)
        layer = mods["vllm.v1.attention.backends.mla.flashmla_sparse"]
        out, counts = layer.convert_layer_topk(xp.i32(req.tolist()), xp.i32(table),
                                               xp.i32(pos.tolist()), 4, topk)
        return out.tolist(), counts.tolist()

    expected = [reference(*s) for s in steps]
    xp = vllm_standin.Arrays(torch=torch, device="cuda")
    mods = vllm_standin.install(monkeypatch, xp)
    layer = mods["vllm.v1.attention.backends.mla.flashmla_sparse"]
    patch = vllm_mod.patch_vllm()
    req = xp.i32(steps[0][0].tolist())
    pos = xp.i32(steps[0][1].tolist())
    tab = xp.i32(table)
    layer.convert_layer_topk(req, tab, pos, 4, topk)  # warm-up
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = [layer.convert_layer_topk(req, tab, pos, 4, topk) for _ in range(layers)]
    for (r, p), want in zip(steps, expected):
        req.copy_(torch.tensor(r.tolist(), dtype=torch.int32))
        pos.copy_(torch.tensor(p.tolist(), dtype=torch.int32))
        graph.replay()
        torch.cuda.synchronize()
        for out, counts in outs:
            assert (out.cpu().tolist(), counts.cpu().tolist()) == want
    assert patch.launches["topk_conversion"] == layers + 1
    patch.restore()
