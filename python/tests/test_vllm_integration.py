"""attnmeta.integrations.vllm against a stand-in shaped like vLLM's
(tests/vllm_standin.py): with the patch, CommonAttentionMetadata's token
map and the sparse indexer's flattened decode metadata come from attnmeta
and equal what the stand-in's own (vLLM's) code gives, buffers and caches
included; restore() puts vLLM's functions back; an old vLLM or a changed
method is left alone with a reason. NumPy arrays always; torch tensors too
where torch exists (its GPU when it sees one)."""

import numpy as np
import pytest

import vllm_standin

# (query_start_loc, seq_lens, num_actual_tokens): uniform, varlen,
# empty requests, cudagraph padding past the real tokens, a single token.
CASES = [
    ([0, 2, 4, 6], [9, 5, 7], 6),
    ([0, 3, 4, 8, 8], [10, 7, 12, 0], 8),
    ([0, 3, 4, 8, 8], [10, 7, 12, 0], 11),
    ([0, 0, 1, 1, 3], [0, 4, 0, 6], 5),
    ([0, 1], [1], 1),
]
WIDTH = 5


def _array_kinds():
    kinds = [("numpy", vllm_standin.Arrays(np=np))]
    try:
        import torch
    except ImportError:
        return kinds
    kinds.append(("torch-cpu", vllm_standin.Arrays(torch=torch, device="cpu")))
    if torch.cuda.is_available():
        kinds.append(("torch-cuda", vllm_standin.Arrays(torch=torch, device="cuda")))
    return kinds


KINDS = dict(_array_kinds())


@pytest.fixture
def vllm_mod():
    from attnmeta.integrations import vllm as integration

    yield integration
    patch = integration.active_patch()
    if patch is not None:
        patch.restore()


def _common(mods, xp, qsl, seq, tokens):
    R = len(seq)
    table = xp.i32([[100 * r + c + 1 for c in range(WIDTH)] for r in range(R)])
    cls = mods["vllm.v1.attention.backend"].CommonAttentionMetadata
    # vLLM keeps a host copy of the boundaries: a CPU tensor under torch
    qsl_cpu = (xp.torch.tensor(qsl, dtype=xp.torch.int32) if xp.torch is not None
               else np.array(qsl, np.int32))
    return cls(xp.i32(qsl), qsl_cpu, xp.i32(seq), table, R, tokens)


def _run_token_map(mods, xp, qsl, seq, tokens):
    common = _common(mods, xp, qsl, seq, tokens)
    buffer = xp.full((16,), -7)
    got = common.token_to_req_indices(buffer)
    again = common.token_to_req_indices(xp.full((16,), -5))  # the cache answers
    return xp.tolist(got), xp.tolist(again), xp.tolist(buffer)


def _run_indexer(mods, xp, qsl, seq, tokens):
    common = _common(mods, xp, qsl, seq, tokens)
    builder = mods["vllm.v1.attention.backends.mla.indexer"].DeepseekV32IndexerMetadataBuilder(16, WIDTH)
    meta = builder.build(0, common)
    return dict(seq_lens=xp.tolist(meta.seq_lens), decode_lens=xp.tolist(meta.decode_lens),
                block_table=xp.tolist(meta.block_table), batch=meta.batch,
                requires_padding=meta.requires_padding,
                seq_buffer=xp.tolist(builder.decode_seq_lens_buffer))


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("case", CASES, ids=str)
def test_token_map_equals_vllm(vllm_mod, monkeypatch, kind, case):
    xp = KINDS[kind]
    mods = vllm_standin.install(monkeypatch, xp)
    theirs = _run_token_map(mods, xp, *case)
    cls = mods["vllm.v1.attention.backend"].CommonAttentionMetadata
    original = cls.token_to_req_indices
    import attnmeta

    calls = []
    real = attnmeta.compute_token_to_req_indices
    monkeypatch.setattr(attnmeta, "compute_token_to_req_indices",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    patch = vllm_mod.patch_vllm()
    assert "token_to_req_indices" in patch.applied, patch
    assert cls.token_to_req_indices is not original
    mine = _run_token_map(mods, xp, *case)
    assert mine == theirs
    assert calls == [1]  # computed once by attnmeta, then the cache answered
    patch.restore()
    assert cls.token_to_req_indices is original
    assert vllm_mod.active_patch() is None


def _without_padding_columns(result, real):
    """vLLM clears only column 0 of padding rows (the rest keeps what was
    there); attnmeta clears the whole row. Compare column 0 there."""
    rows = result["block_table"]
    result = dict(result)
    result["block_table"] = rows[:real] + [row[:1] for row in rows[real:]]
    return result


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("case", CASES, ids=str)
def test_indexer_decode_equals_vllm(vllm_mod, monkeypatch, kind, case):
    xp = KINDS[kind]
    mods = vllm_standin.install(monkeypatch, xp)
    qsl, seq, tokens = case
    theirs = _run_indexer(mods, xp, *case)
    from attnmeta import _step

    launches = []
    real_build_step = _step.build_step
    monkeypatch.setattr(_step, "build_step", lambda *a, **k: launches.append(1) or real_build_step(*a, **k))
    with vllm_mod.patch_vllm() as patch:
        assert "indexer_decode" in patch.applied, patch
        mine = _run_indexer(mods, xp, *case)
    assert launches == [1]  # the metadata came from one attnmeta step
    real = qsl[-1]
    assert _without_padding_columns(mine, real) == _without_padding_columns(theirs, real)
    assert all(row == [0] * WIDTH for row in mine["block_table"][real:])
    cls = mods["vllm.v1.attention.backends.mla.indexer"].DeepseekV32IndexerMetadataBuilder
    assert not hasattr(cls._prepare_decode_tensors, "__attnmeta_original__")
    assert not hasattr(cls.build, "__attnmeta_original__")


def test_native_path_left_to_vllm(vllm_mod, monkeypatch):
    xp = KINDS["numpy"]
    mods = vllm_standin.install(monkeypatch, xp)
    cls = mods["vllm.v1.attention.backends.mla.indexer"].DeepseekV32IndexerMetadataBuilder
    common = _common(mods, xp, [0, 2, 4], [9, 5], 4)
    with vllm_mod.patch_vllm():
        builder = cls(16, WIDTH, use_native=True)
        meta = builder.build(0, common)
    assert meta.batch == 2 and xp.tolist(meta.seq_lens) == [9, 5]
    assert xp.tolist(builder.decode_seq_lens_buffer) == [-9] * 16  # untouched


def test_old_vllm_is_left_alone(vllm_mod, monkeypatch):
    mods = vllm_standin.install(monkeypatch, KINDS["numpy"], version="0.10.2")
    cls = mods["vllm.v1.attention.backend"].CommonAttentionMetadata
    original = cls.__dict__["token_to_req_indices"]
    patch = vllm_mod.patch_vllm()
    assert patch.applied == [] and not patch.active
    assert "older than 0.11.0" in patch.skipped["token_to_req_indices"]
    assert "older than 0.11.0" in patch.skipped["indexer_decode"]
    assert cls.__dict__["token_to_req_indices"] is original
    assert vllm_mod.active_patch() is None
    forced = vllm_mod.patch_vllm(check_version=False)
    assert sorted(forced.applied) == ["indexer_decode", "token_to_req_indices"]
    forced.restore()
    assert cls.__dict__["token_to_req_indices"] is original


def test_changed_method_is_left_alone(vllm_mod, monkeypatch):
    mods = vllm_standin.install(monkeypatch, KINDS["numpy"], old_prepare=True)
    patch = vllm_mod.patch_vllm()
    assert patch.applied == ["token_to_req_indices"]
    assert "_prepare_decode_tensors takes (seq_lens, block_table, decode_lens, query_start_loc" in \
        patch.skipped["indexer_decode"]
    assert "indexer_decode not routed" in repr(patch)
    patch.restore()


def test_only_what_is_asked_and_once(vllm_mod, monkeypatch):
    vllm_standin.install(monkeypatch, KINDS["numpy"])
    patch = vllm_mod.patch_vllm(indexer_decode=False)
    assert patch.applied == ["token_to_req_indices"] and patch.skipped == {}
    assert vllm_mod.patch_vllm() is patch  # in force already: the same handle
    patch.restore()
    patch.restore()  # twice is fine


def test_without_vllm(vllm_mod, monkeypatch):
    import sys

    for name in list(sys.modules):
        if name == "vllm" or name.startswith("vllm."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm fails
    with pytest.raises(ImportError):
        vllm_mod.patch_vllm()
