# SPDX-License-Identifier: Apache-2.0
"""patch_sglang() on SGLang's fused CUDA-graph metadata updates, against a
stand-in written from SGLang's structure: the defining modules
(sglang.kernels.ops.kvcache.trtllm_mla_graph_metadata and
...trtllm_mha_graph_metadata, FA3's sglang.kernels.ops.attention.metadata)
holding the NumPy renderings of sglang_graph_standin, and the TRT-LLM MLA,
TRT-LLM MHA and FA3 backends importing the names at import time. Checks
that each routed target replaces every binding, gives SGLang's values bit
for bit, counts its launches, hands what attnmeta refuses to SGLang's
function with the reason, leaves FA3's draft-extend and unknown forms to
SGLang with why, and restores."""

import sys
import types

import numpy as np
import pytest

import sglang_graph_standin as sg
from attnmeta.integrations.sglang import TARGETS, patch_sglang

MLA = "sglang.kernels.ops.kvcache.trtllm_mla_graph_metadata"
MHA = "sglang.kernels.ops.kvcache.trtllm_mha_graph_metadata"
META = "sglang.kernels.ops.attention.metadata"
MLA_BACKEND = "sglang.srt.layers.attention.trtllm_mla_backend"
MHA_BACKEND = "sglang.srt.layers.attention.trtllm_mha_backend"
FA3_BACKEND = "sglang.srt.layers.attention.flashattention_backend"
LABELS = ("trtllm_mla_graph_metadata", "trtllm_mha_graph_metadata", "fa3_draft_extend_metadata")


@pytest.fixture
def standin(monkeypatch):
    sg.CALLS.clear()
    for name in ("sglang", "sglang.kernels", "sglang.kernels.ops", "sglang.kernels.ops.kvcache",
                 "sglang.kernels.ops.attention", "sglang.srt", "sglang.srt.layers",
                 "sglang.srt.layers.attention"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    mods = {name: types.ModuleType(name) for name in (MLA, MHA, META, MLA_BACKEND, MHA_BACKEND,
                                                       FA3_BACKEND)}
    mods[MLA].update_trtllm_mla_graph_metadata = sg.update_trtllm_mla_graph_metadata
    mods[MHA].update_trtllm_mha_graph_metadata = sg.update_trtllm_mha_graph_metadata
    mods[META].draft_extend_set_metadata = sg.draft_extend_set_metadata
    # the backends import the names at import time
    mods[MLA_BACKEND].update_trtllm_mla_graph_metadata = sg.update_trtllm_mla_graph_metadata
    mods[MHA_BACKEND].update_trtllm_mha_graph_metadata = sg.update_trtllm_mha_graph_metadata
    mods[FA3_BACKEND].draft_extend_set_metadata = sg.draft_extend_set_metadata
    for module in mods.values():
        monkeypatch.setitem(sys.modules, module.__name__, module)
    return types.SimpleNamespace(**{k.rsplit(".", 1)[1]: v for k, v in mods.items()})


def mla_call(fn, page_size, offset):
    rng = np.random.default_rng(page_size + offset)
    r2t = rng.integers(0, 1 << 20, (8, 512)).astype(np.int32)
    r2t[0] = 0
    rpi = np.array([5, 2, 7, 0, 0], np.int64)  # two graph padding rows
    seq = np.array([300, 17, 500, 1, 1], np.int64)
    table = np.full((6, 512 // page_size), -1, np.int32)
    lens_k = np.full(6, -7, np.int32)
    fn(req_pool_indices=rpi, seq_lens=seq, req_to_token=r2t, block_kv_indices=table, bs=5,
       seqlen_offset=offset, page_size=page_size, seq_lens_k=lens_k)
    return [table, lens_k]


def mha_call(fn, swa, offset, **extra):
    rng = np.random.default_rng(offset + 10 * swa)
    ps = 16
    r2t = rng.integers(0, 4096, (9, 256)).astype(np.int32)
    r2t[0] = 0
    rpi = np.array([3, 8, 1, 0], np.int64)
    seq = np.array([100, 3, 230, 1], np.int32)
    out = [np.full(5, -7, np.int32), np.concatenate([[0], np.full(5, -7)]).astype(np.int32),
           np.full((5, 16), -7, np.int32), np.full((5, 16), -7, np.int32)]
    mapping = (np.arange(4096 + ps + 1) * 5 % 4096).astype(np.int64)
    mapping[-1] = -1
    fn(req_pool_indices=rpi, seq_lens=seq, req_to_token=r2t, cache_seqlens=out[0],
       cu_seqlens_k=out[1], page_table=out[2], bs=4, seqlen_offset=offset, max_seq_pages=16,
       page_size=ps, swa_mapping=mapping if swa else None, swa_page_table=out[3] if swa else None,
       **extra)
    return out


def assert_same(got, want):
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_targets_are_listed():
    for label in LABELS:
        assert label in TARGETS


def test_routes_the_trtllm_updates_with_sglangs_values(standin):
    cases = [(ps, off) for ps in (32, 64) for off in (0, 4)]
    want_mla = [mla_call(sg.update_trtllm_mla_graph_metadata, *c) for c in cases]
    want_mha = [mha_call(sg.update_trtllm_mha_graph_metadata, swa, off)
                for swa in (0, 1) for off in (0, 3)]
    sg.CALLS.clear()
    with patch_sglang() as handle:
        assert "trtllm_mla_graph_metadata" in handle.applied, handle
        assert "trtllm_mha_graph_metadata" in handle.applied, handle
        assert "%s.update_trtllm_mla_graph_metadata" % MLA_BACKEND in \
            handle.bindings["trtllm_mla_graph_metadata"]
        assert "%s.update_trtllm_mha_graph_metadata" % MHA_BACKEND in \
            handle.bindings["trtllm_mha_graph_metadata"]
        got_mla = [mla_call(standin.trtllm_mla_backend.update_trtllm_mla_graph_metadata, *c)
                   for c in cases]
        got_mha = [mha_call(standin.trtllm_mha_backend.update_trtllm_mha_graph_metadata, swa, off)
                   for swa in (0, 1) for off in (0, 3)]
        # the defining module's binding is routed too
        got_mla.append(mla_call(standin.trtllm_mla_graph_metadata.update_trtllm_mla_graph_metadata,
                                32, 0))
        assert sg.CALLS == {}  # none of SGLang's functions ran
        assert handle.launches["trtllm_mla_graph_metadata"] == 5
        assert handle.launches["trtllm_mha_graph_metadata"] == 4
        assert not handle.fallbacks.get("trtllm_mha_graph_metadata")
    assert len(got_mla + got_mha) == len(want_mla + want_mha) + 1
    for got, want in zip(got_mla + got_mha, want_mla + [want_mla[0]] + want_mha):
        assert_same(got, want)
    assert standin.trtllm_mla_backend.update_trtllm_mla_graph_metadata is \
        sg.update_trtllm_mla_graph_metadata  # restored
    assert standin.trtllm_mha_graph_metadata.update_trtllm_mha_graph_metadata is \
        sg.update_trtllm_mha_graph_metadata


@pytest.mark.parametrize("extra,why", [
    (dict(out_cache_loc=np.array([5, -1, 9], np.int64),
          swa_out_cache_loc=np.full(6, 123, np.int64)), "swa_out_cache_loc"),
])
def test_refused_forms_run_sglangs_function(standin, extra, why):
    want = mha_call(sg.update_trtllm_mha_graph_metadata, 1, 2, **extra)
    want_extra = {k: v.copy() for k, v in extra.items() if isinstance(v, np.ndarray)}
    for k, v in extra.items():  # the inputs again, outputs poisoned as before
        if isinstance(v, np.ndarray) and k in ("swa_out_cache_loc", "cu_seqlens_q"):
            v[:] = 123 if k == "swa_out_cache_loc" else 0
    sg.CALLS.clear()
    with patch_sglang() as handle:
        got = mha_call(standin.trtllm_mha_backend.update_trtllm_mha_graph_metadata, 1, 2, **extra)
        assert sg.CALLS == {"update_trtllm_mha_graph_metadata": 1}
        assert handle.fallbacks["trtllm_mha_graph_metadata"] == 1
        assert why in handle.fallback_reasons["trtllm_mha_graph_metadata"]
        assert not handle.launches.get("trtllm_mha_graph_metadata")
    assert_same(got, want)
    for k, v in want_extra.items():
        np.testing.assert_array_equal(extra[k], v, err_msg=k)


@pytest.mark.parametrize("extra", [
    dict(q_mode=1, qlens=np.array([1, 2, 3, 1], np.int32)),
    dict(q_mode=2, q_stride=4),
])
def test_q_modes_are_routed_with_sglangs_values(standin, extra):
    want_q = np.concatenate([[0], np.full(5, -7)]).astype(np.int32)
    want = mha_call(sg.update_trtllm_mha_graph_metadata, 1, 2, cu_seqlens_q=want_q, **extra)
    got_q = np.concatenate([[0], np.full(5, -7)]).astype(np.int32)
    sg.CALLS.clear()
    with patch_sglang() as handle:
        got = mha_call(standin.trtllm_mha_backend.update_trtllm_mha_graph_metadata, 1, 2,
                       cu_seqlens_q=got_q, **extra)
        assert sg.CALLS == {}
        assert handle.launches["trtllm_mha_graph_metadata"] == 1
        assert not handle.fallbacks.get("trtllm_mha_graph_metadata")
    assert_same(got + [got_q], want + [want_q])


def draft_extend_call(fn, **extra):
    rng = np.random.default_rng(3)
    r2t = rng.integers(0, 4096, (9, 256)).astype(np.int32)
    r2t[0] = 0
    rpi = np.array([3, 8, 1, 0], np.int64)  # a graph padding row at pool row 0
    seq = np.array([100, 3, 230, 1], np.int64)
    ext = np.array([2, 3, 1, 1], np.int32)
    out = [np.full(4, -7, np.int32), np.full(5, -7, np.int32), np.full(5, -7, np.int32),
           np.full((5, 12), -7, np.int32)]
    fn(out[0], out[1], out[2], out[3], r2t, rpi, seq, ext, 16, **extra)
    return out


def test_fa3_draft_extend_is_routed_with_sglangs_values(standin):
    want = draft_extend_call(sg.draft_extend_set_metadata)
    sg.CALLS.clear()
    with patch_sglang() as handle:
        assert "fa3_draft_extend_metadata" in handle.applied, handle
        got = [draft_extend_call(standin.flashattention_backend.draft_extend_set_metadata),
               draft_extend_call(standin.metadata.draft_extend_set_metadata)]
        assert sg.CALLS == {}
        assert handle.launches["fa3_draft_extend_metadata"] == 2
        # an SWA pool's form (swa_out_cache_loc) runs SGLang's function
        draft_extend_call(standin.metadata.draft_extend_set_metadata,
                          full_to_swa_index_mapping=np.arange(4096, dtype=np.int64))
        assert sg.CALLS == {"draft_extend_set_metadata": 1}
        assert handle.fallbacks["fa3_draft_extend_metadata"] == 1
        assert "swa_out_cache_loc" in handle.fallback_reasons["fa3_draft_extend_metadata"]
    for g in got:
        assert_same(g, want)
    assert standin.metadata.draft_extend_set_metadata is sg.draft_extend_set_metadata  # restored


def test_first_mha_form_is_routed_to_the_full_width_drop_in(standin, monkeypatch):
    first = sg.update_trtllm_mha_graph_metadata_first
    monkeypatch.setattr(standin.trtllm_mha_graph_metadata, "update_trtllm_mha_graph_metadata",
                        first)
    monkeypatch.setattr(standin.trtllm_mha_backend, "update_trtllm_mha_graph_metadata", first)
    want = mha_call(first, 1, 1)
    sg.CALLS.clear()
    with patch_sglang() as handle:
        got = mha_call(standin.trtllm_mha_backend.update_trtllm_mha_graph_metadata, 1, 1)
        assert sg.CALLS == {}
        assert handle.launches["trtllm_mha_graph_metadata"] == 1
    assert_same(got, want)
    assert (got[2][1, 1:] != -7).all()  # a 6-token row written to all 16 pages


def test_unknown_form_and_turned_off_targets_are_left_alone(standin, monkeypatch):
    def dcp_form(*, req_pool_indices, seq_lens, req_to_token, cache_seqlens, cu_seqlens_k,
                 page_table, bs, seqlen_offset, max_seq_pages, page_size, swa_mapping=None,
                 swa_page_table=None, out_cache_loc=None, swa_out_cache_loc=None,
                 cu_seqlens_q=None, qlens=None, q_stride=0, q_mode=0, skip_page_table=False,
                 causal_seqlens_kv_global=None, causal_seqlen_offset=0, dcp_size=1, dcp_rank=0):
        raise AssertionError("not called")

    monkeypatch.setattr(standin.trtllm_mha_graph_metadata, "update_trtllm_mha_graph_metadata",
                        dcp_form)
    monkeypatch.setattr(standin.trtllm_mha_backend, "update_trtllm_mha_graph_metadata", dcp_form)
    with patch_sglang(trtllm_mla_graph_metadata=False) as handle:
        assert "not a form attnmeta knows" in handle.skipped["trtllm_mha_graph_metadata"]
        assert standin.trtllm_mha_backend.update_trtllm_mha_graph_metadata is dcp_form
        assert handle.skipped["trtllm_mla_graph_metadata"] == "turned off by the caller"
        assert standin.trtllm_mla_backend.update_trtllm_mla_graph_metadata is \
            sg.update_trtllm_mla_graph_metadata
