# SPDX-License-Identifier: Apache-2.0
"""attnmeta.integrations.vllm against the stand-in of vLLM's code
(vllm_standin*.py): every routed target gives what the stand-in's own
(vLLM's) code gives, bit for bit, into the same persistent buffers, with
none of the stand-in's kernels left on the routed path and the handle's
counters saying so; targets whose code differs are left alone with a
reason; restore() puts every binding back. NumPy arrays always; torch
tensors too where torch exists (its GPU when it sees one)."""

import sys
import types

import numpy as np
import pytest

import vllm_standin

INDEXER = "vllm.v1.attention.backends.mla.indexer"
WIDTH = 5

# (query_start_loc, seq_lens, num_actual_tokens): speculative decode
# lengths (all within next_n = 4), empty requests, graph padding past the
# real tokens, a single token.
CASES = [
    ([0, 2, 4, 6], [9, 5, 7], 6),
    ([0, 3, 4, 8, 8], [10, 7, 12, 0], 8),
    ([0, 3, 4, 8, 8], [10, 7, 12, 0], 11),
    ([0, 0, 1, 1, 3], [0, 4, 0, 6], 5),
    ([0, 1], [1], 1),
]
UNIFORM = [([0, 2, 4, 6], [9, 5, 7], 6), ([0, 4, 8], [300, 4], 8), ([0, 1, 2], [7, 1], 2)]


def _kinds():
    kinds = {"numpy": vllm_standin.Arrays()}
    try:
        import torch
    except ImportError:
        return kinds
    kinds["torch-cpu"] = vllm_standin.Arrays(torch=torch, device="cpu")
    if torch.cuda.is_available():
        kinds["torch-cuda"] = vllm_standin.Arrays(torch=torch, device="cuda")
    return kinds


KINDS = _kinds()


def _table(xp, rows, width=WIDTH):
    return xp.i32([[100 * r + c + 1 for c in range(width)] for r in range(rows)])


def _common(mods, xp, qsl, seq, tokens, dcp=False, table=None, holes=()):
    R = len(seq)
    cls = mods["vllm.v1.attention.backend"].CommonAttentionMetadata
    slots = xp.array([-1 if t in holes else 5 for t in range(qsl[-1])]
                     + [-1] * (tokens - qsl[-1]), np.int64)
    return cls(xp.i32(qsl), xp.host(qsl), xp.i32(seq), _table(xp, R) if table is None else table,
               R, tokens, slot_mapping=slots, dcp_local_seq_lens=xp.i32(seq) if dcp else None)


def _plain(value, xp):
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return np.asarray(xp.to_np(value)).tolist()


def _state(obj, xp):
    """Every array attribute of a builder or metadata record, as lists."""
    out = {}
    for name, value in sorted(vars(obj).items()):
        if name.startswith("_"):
            continue
        if hasattr(value, "shape"):
            out[name] = _plain(value, xp)
        elif isinstance(value, (bool, int)) or value is None:
            out[name] = value
    return out


def _run_standin_and_patched(monkeypatch, vllm_mod, xp, run, **install):
    """run(mods) -> result, once on vLLM's code and once patched (fresh
    modules each time); returns (theirs, mine, their launches, my launches,
    handle)."""
    mods = vllm_standin.install(monkeypatch, xp, **install)
    theirs = run(mods)
    their_launches = vllm_standin.standin_launches()
    mods = vllm_standin.install(monkeypatch, xp, **install)
    patch = vllm_mod.patch_vllm()
    mine = run(mods)
    my_launches = vllm_standin.standin_launches()
    patch.restore()
    return theirs, mine, their_launches, my_launches, patch


def _replaced(before, after, patch, kernel, launch, count):
    """vLLM's ``kernel`` ran ``count`` times unpatched and never patched;
    attnmeta's ``launch`` ran ``count`` times, with no fallback."""
    assert before[kernel] == count
    assert kernel not in after
    assert patch.launches[launch] == count and patch.fallbacks == {}


# ---------------------------------------------------------------------------
# the token map


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("case", CASES, ids=str)
def test_token_map_method(vllm_mod, monkeypatch, kind, case):
    xp = KINDS[kind]

    def run(mods):
        common = _common(mods, xp, *case)
        buffer = xp.full((16,), -7)
        got = common.token_to_req_indices(buffer)
        again = common.token_to_req_indices(xp.full((16,), -5))  # the cache answers
        return _plain(got, xp), _plain(again, xp), _plain(buffer, xp)

    theirs, mine, before, after, patch = _run_standin_and_patched(monkeypatch, vllm_mod, xp, run)
    assert mine == theirs
    assert before.get("torch.repeat_interleave") == 1
    assert not any(k.startswith("torch.") for k in after), after
    assert patch.launches["token_to_req_indices"] == 1  # once, then the cache


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("case", CASES, ids=str)
def test_token_map_function_and_its_importers(vllm_mod, monkeypatch, kind, case):
    xp = KINDS[kind]
    qsl, seq, tokens = case

    def run(mods):
        ops = mods["vllm.v1.attention.ops.metadata"]
        draft = mods["vllm.v1.spec_decode.draft_metadata"]
        common = _common(mods, xp, *case)
        out = xp.full((16,), -7)
        a = _plain(ops.compute_token_to_req_indices(common.query_start_loc, out, qsl[-1] - 1,
                                                    tokens), xp)
        # a negative count maps nothing, as vLLM's kernel does
        b = _plain(ops.compute_token_to_req_indices(common.query_start_loc, xp.full((16,), -3),
                                                    -1, tokens), xp)
        c = _plain(draft.update_draft_token_map(common, out, tokens), xp)
        return a, b, c, _plain(out, xp)

    theirs, mine, before, after, patch = _run_standin_and_patched(monkeypatch, vllm_mod, xp, run)
    assert mine == theirs
    assert before["_token_request_mapping_kernel"] == 3
    assert "_token_request_mapping_kernel" not in after
    assert patch.launches["compute_token_to_req_indices"] == 3
    assert sorted(patch.bindings["compute_token_to_req_indices"]) == [
        "vllm.v1.attention.ops.metadata.compute_token_to_req_indices",
        "vllm.v1.spec_decode.draft_metadata.compute_token_to_req_indices"]


def test_a_module_imported_later_gets_the_routed_token_map(vllm_mod, monkeypatch):
    mods = vllm_standin.install(monkeypatch, KINDS["numpy"])
    ops = mods["vllm.v1.attention.ops.metadata"]
    original = ops.compute_token_to_req_indices
    patch = vllm_mod.patch_vllm()
    late = types.ModuleType("vllm.v1.late_importer")
    exec("from vllm.v1.attention.ops.metadata import compute_token_to_req_indices", late.__dict__)
    assert late.compute_token_to_req_indices is not original
    late.compute_token_to_req_indices(np.array([0, 2, 3], np.int32), np.zeros(4, np.int32), 3, 4)
    assert patch.launches["compute_token_to_req_indices"] == 1
    monkeypatch.setitem(sys.modules, late.__name__, late)
    patch.restore()
    assert ops.compute_token_to_req_indices is original
    assert mods["vllm.v1.spec_decode.draft_metadata"].compute_token_to_req_indices is original
    assert late.compute_token_to_req_indices is original  # imported during the patch


# ---------------------------------------------------------------------------
# the sparse indexer: varlen, flattened and native decode, DCP, compression

PATHS = {
    # name: builder options, the routed target, the stand-in kernels it replaces
    "varlen": (dict(supports_varlen=True), "indexer_decode_varlen",
               {"_indexer_decode_metadata_kernel"}),
    "flatten": (dict(use_flattening=True), "indexer_decode_flat",
                {"torch.repeat_interleave", "_PREPARE_UNIFORM_DECODE_KERNEL"}),
    "native": (dict(), "indexer_decode_native", {"torch.clamp"}),
}



def _build(mods, xp, case, options, steps=1):
    """Builds `case` (and, for steps > 1, the same step again after the
    boundaries were rewritten in place, as a graph replay sees them)."""
    qsl, seq, tokens = case
    dcp = options.pop("dcp", None)
    builder_options = dict(options, num_speculative_tokens=3)
    if dcp:
        builder_options.update(dcp_world_size=dcp[0], dcp_rank=dcp[1])
    builder = mods[INDEXER].DeepseekV32IndexerMetadataBuilder(16, WIDTH, **builder_options)
    common = _common(mods, xp, qsl, seq, tokens, dcp=bool(dcp))
    results = []
    for step in range(steps):
        if step:
            # the same padded step, its requests rotated: other boundaries
            lens = [b - a for a, b in zip(qsl, qsl[1:])]
            lens = lens[step % len(lens):] + lens[:step % len(lens)]
            new_seq = seq[step % len(seq):] + seq[:step % len(seq)]
            new_qsl = [0]
            for n in lens:
                new_qsl.append(new_qsl[-1] + n)
            common.query_start_loc[...] = xp.i32(new_qsl)
            common.query_start_loc_cpu[...] = xp.host(new_qsl)
            common.seq_lens[...] = xp.i32(new_seq)
            common._token_to_req_indices_cache = None
        meta = builder.build(0, common)
        results.append(dict(meta=_state(meta, xp),
                            decode=_state(meta.decode, xp) if meta.decode else None))
    return dict(steps=results, builder=_state(builder, xp))


def _mask_padding_columns(result, path, case):
    """vLLM's repeat_interleave branch clears only column 0 of the padding
    rows of the expanded block table (the rest keeps what was there);
    attnmeta clears the whole row. Compare column 0 of those rows."""
    if path != "flatten":
        return result
    qsl, _, tokens = case
    table = result["builder"]["expanded_block_table_buffer"]
    for row in range(qsl[-1], tokens):
        table[row] = table[row][:1]
    for step in result["steps"]:
        if step["decode"]:
            rows = step["decode"]["block_table"]
            for row in range(qsl[-1], len(rows)):
                rows[row] = rows[row][:1]
    return result


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("extra", ["plain", "dcp", "compressed"])
@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("case", CASES, ids=str)
def test_indexer_decode_paths(vllm_mod, monkeypatch, kind, path, extra, case):
    xp = KINDS[kind]
    qsl, seq, tokens = case
    options, target, replaced = PATHS[path]
    if path == "native" and tokens != qsl[-1]:
        pytest.skip("the native path takes no padding tokens (uniform batches)")
    options = dict(options)
    if extra == "dcp":
        options["dcp"] = (2, 1)
    if extra == "compressed":
        options["compress_ratio"] = 4

    theirs, mine, before, after, patch = _run_standin_and_patched(
        monkeypatch, vllm_mod, xp, lambda mods: _build(mods, xp, case, dict(options)))
    if path == "flatten":
        for row in mine["builder"]["expanded_block_table_buffer"][qsl[-1]:tokens]:
            assert row == [0] * WIDTH
    assert _mask_padding_columns(mine, path, case) == _mask_padding_columns(theirs, path, case)
    assert replaced & set(before), before
    assert not replaced & set(after), after
    # under DCP the flattened path also expands the global lengths (when a
    # request has more than one token): a second launch
    longest = max(b - a for a, b in zip(qsl, qsl[1:]))
    expanded = path == "flatten" and extra == "dcp" and longest > 1
    assert patch.launches[target] == (2 if expanded else 1), patch.launches
    assert patch.fallbacks == {}
    if extra == "compressed":
        assert before["_compressed_slot_mapping_kernel"] == 1
        assert "_compressed_slot_mapping_kernel" not in after
        assert patch.launches["compressed_slot_mapping"] == 1


@pytest.mark.parametrize("extra", ["plain", "dcp"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_indexer_earlier_varlen_layout(vllm_mod, monkeypatch, extra, case):
    """vLLM's varlen path before its inline kernel: through
    _prepare_decode_tensors (the repeat_interleave branch) and
    _build_varlen_decode_indices."""
    xp = KINDS["numpy"]
    options = dict(supports_varlen=True)
    if extra == "dcp":
        options["dcp"] = (2, 1)

    def run(mods):
        return _build(mods, xp, case, dict(options))

    theirs, mine, before, after, patch = _run_standin_and_patched(
        monkeypatch, vllm_mod, xp, run, inline_varlen_kernel=False)
    assert _mask_padding_columns(mine, "flatten", case) == \
        _mask_padding_columns(theirs, "flatten", case)
    assert before["torch.repeat_interleave"] >= 3
    assert "torch.repeat_interleave" not in after, after
    assert patch.launches["indexer_decode_varlen"] == 1  # the request ids
    assert patch.launches["indexer_decode_flat"] >= 1


@pytest.mark.parametrize("case", UNIFORM, ids=str)
def test_indexer_flatten_uniform_kernel_branch(vllm_mod, monkeypatch, case):
    """Uniform decode lengths, no padding, no adaptive verification: vLLM's
    _PREPARE_UNIFORM_DECODE_KERNEL branch."""
    xp = KINDS["numpy"]
    theirs, mine, before, after, patch = _run_standin_and_patched(
        monkeypatch, vllm_mod, xp, lambda mods: _build(mods, xp, case, dict(use_flattening=True)))
    assert mine == theirs
    assert before["_PREPARE_UNIFORM_DECODE_KERNEL"] == 1
    assert "_PREPARE_UNIFORM_DECODE_KERNEL" not in after
    assert patch.launches["indexer_decode_flat"] == 1


@pytest.mark.parametrize("path", ["varlen", "flatten"])
@pytest.mark.parametrize("case", CASES[1:3], ids=str)
def test_indexer_rewritten_boundaries_as_a_replay_sees_them(vllm_mod, monkeypatch, path, case):
    """The same builder, its boundaries rewritten in place between builds:
    what a graph replay reads. Stale entries of the first build must go."""
    xp = KINDS["numpy"]
    options = PATHS[path][0]
    theirs, mine, _, after, patch = _run_standin_and_patched(
        monkeypatch, vllm_mod, xp, lambda mods: _build(mods, xp, case, dict(options), steps=3))
    assert _mask_padding_columns(mine, path, case) == _mask_padding_columns(theirs, path, case)
    assert patch.launches[PATHS[path][1]] == 3
    assert not PATHS[path][2] & set(after)


# ---------------------------------------------------------------------------
# DeepSeek-V4: compressed slot mapping with DCP, SWA rows, top-k conversion


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("dcp", [(1, 0, 1), (2, 1, 1), (4, 2, 2)])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_compressed_slot_mapping_with_dcp(vllm_mod, monkeypatch, kind, dcp, case):
    xp = KINDS[kind]
    qsl, seq, tokens = case
    world, rank, inter = dcp

    def run(mods):
        fn = mods[INDEXER].get_compressed_slot_mapping  # the indexer's own binding
        seq_big = [s * 8 for s in seq]  # lengths spanning several blocks
        table = _table(xp, len(seq), 16)
        out = xp.full((16,), 77, np.int64)
        got = fn(tokens, xp.i32(qsl), xp.i32(seq_big), table, 4, 2, out=out,
                 cp_world_size=world, cp_rank=rank, cp_kv_cache_interleave_size=inter)
        new = fn(tokens, xp.i32(qsl), xp.i32(seq_big), table, 4, 2, None, world, rank, inter)
        return _plain(got, xp), _plain(out, xp), _plain(new, xp)

    theirs, mine, before, after, patch = _run_standin_and_patched(monkeypatch, vllm_mod, xp, run)
    assert mine == theirs
    assert before["_compressed_slot_mapping_kernel"] == 2
    assert "_compressed_slot_mapping_kernel" not in after and "torch.fill" not in after
    assert patch.launches["compressed_slot_mapping"] == 2


PCP_CASES = [
    # (logical slots, positions, logical block size, compress ratio): holes
    # (-1), slots in later logical blocks, a position that completes no row
    ([0, 3, -1, 7, 12, 15, 300, 1023], [3, 7, 11, 15, 6, 127, 511, 1023], 256, 4),
    ([5, 127, 128, 255, -1, 1000], [127, 255, 127, 383, 127, 127], 256, 128),
    ([9], [0], 16, 1),
    ([], [], 64, 4),
]


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("case", PCP_CASES, ids=str)
def test_pcp_compressed_slot_mapping(vllm_mod, monkeypatch, kind, case):
    """compressor_utils.get_pcp_compressed_slot_mapping and a binding of it
    in another module: vLLM's outputs bit for bit, into the caller's
    buffer (only its first T entries) or a new one."""
    xp = KINDS[kind]
    slots, positions, logical, ratio = case
    n = len(slots)

    def run(mods):
        compressor = mods["vllm.v1.attention.backends.mla.compressor_utils"]
        layer = mods["vllm.v1.attention.backends.mla.flashmla_sparse"]
        monkeypatch.setattr(layer, "get_pcp_compressed_slot_mapping",
                            compressor.get_pcp_compressed_slot_mapping, raising=False)
        logical_slots, pos = xp.array(slots, np.int64), xp.array(positions, np.int64)
        out = xp.full((n + 3,), 77, np.int64)
        got = compressor.get_pcp_compressed_slot_mapping(logical_slots, pos, logical,
                                                         logical // ratio, ratio, out=out)
        new = layer.get_pcp_compressed_slot_mapping(
            logical_slots, pos, logical_block_size=logical, storage_block_size=logical // ratio,
            compress_ratio=ratio)
        return _plain(got, xp), _plain(out, xp), _plain(new, xp)

    theirs, mine, before, after, patch = _run_standin_and_patched(monkeypatch, vllm_mod, xp, run)
    assert mine == theirs
    assert mine[1][n:] == [77] * 3  # past the tokens: the caller's values
    launches = 2 if n else 0
    assert before.get("_pcp_compressed_slot_mapping_kernel", 0) == launches
    assert "_pcp_compressed_slot_mapping_kernel" not in after
    assert patch.launches.get("pcp_compressed_slot_mapping", 0) == launches
    assert patch.fallbacks == {}


SWA_CASES = [
    # (query_start_loc, seq_lens, num_actual_tokens, decode requests)
    ([0, 2, 4, 6], [9, 5, 70], 6, 3),
    ([0, 3, 4, 8, 8], [10, 7, 12, 0], 11, 4),
    ([0, 1, 2, 12], [40, 3, 30], 12, 2),  # a prefill after the decodes
    ([0, 1, 7, 12], [20, 6, 9], 12, 1),  # two prefills, one of them chunked
    ([0, 1, 7, 12], [20, 6, 9], 14, 1),  # and graph padding after them
    ([0, 6, 11], [6, 30], 11, 0),  # prefill tokens only
]


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("case", SWA_CASES, ids=str)
@pytest.mark.parametrize("holes", [(), (1, 4)], ids=["every_slot", "tokens_without_slots"])
def test_swa_builder(vllm_mod, monkeypatch, kind, case, holes):
    xp = KINDS[kind]
    qsl, seq, tokens, decodes = case
    window = 8

    def run(mods):
        cls = mods["vllm.v1.attention.backends.mla.sparse_swa"].DeepseekSparseSWAMetadataBuilder
        builder = cls(16, window, block_size=4, num_speculative_tokens=3)
        common = _common(mods, xp, qsl, seq, tokens, table=_table(xp, len(seq), 20),
                         holes=holes)
        meta = builder.build(0, common)
        return _state(meta, xp), _state(builder, xp), meta.num_decode_tokens

    theirs, mine, before, after, patch = _run_standin_and_patched(monkeypatch, vllm_mod, xp, run)
    decode_tokens = theirs[2]
    # Tokens whose slot_mapping entry is -1 (graph padding, and real tokens
    # without a KV slot): length 0 and a row of -1 in vLLM's newest kernel
    # and in attnmeta alike, so everything is the same.
    assert mine == theirs
    launches = (decode_tokens > 0) + (decode_tokens < tokens)  # vLLM's decode and prefill
    _replaced(before, after, patch, "_compute_swa_indices_and_lens_kernel", "swa_decode", launches)


def test_swa_padding_rows(vllm_mod, monkeypatch):
    xp = KINDS["numpy"]
    mods = vllm_standin.install(monkeypatch, xp)
    cls = mods["vllm.v1.attention.backends.mla.sparse_swa"].DeepseekSparseSWAMetadataBuilder
    with vllm_mod.patch_vllm():
        builder = cls(16, 8, block_size=4, num_speculative_tokens=3)
        meta = builder.build(0, _common(mods, xp, [0, 3, 4], [10, 7], 7))
    assert meta.decode_swa_lens.tolist() == [8, 8, 8, 7, 0, 0, 0]
    assert (builder.decode_swa_indices[4:7] == -1).all()
    assert (builder.decode_swa_lens[7:] == 0).all()


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("dcp", [1, 2, 4])
@pytest.mark.parametrize("topk", [4, 8, 12])
def test_topk_conversion_per_layer(vllm_mod, monkeypatch, kind, dcp, topk):
    xp = KINDS[kind]
    rng = np.random.default_rng(topk * 10 + dcp)
    req = rng.integers(0, 3, 9).astype(np.int32)
    positions = rng.integers(-1, 40, (9, topk)).astype(np.int32)

    def run(mods):
        layer = mods["vllm.v1.attention.backends.mla.flashmla_sparse"]
        table = _table(xp, 3, 12)
        got = [layer.convert_layer_topk(xp.i32(req.tolist()), table, xp.i32(positions.tolist()),
                                        4, topk, dcp_size=dcp, dcp_rank=dcp - 1)
               for _layer in range(3)]
        return [(_plain(a, xp), _plain(b, xp)) for a, b in got]

    theirs, mine, before, after, patch = _run_standin_and_patched(monkeypatch, vllm_mod, xp, run)
    assert mine == theirs
    assert before["_convert_req_index_to_global_index_kernel"] == 3
    assert "_convert_req_index_to_global_index_kernel" not in after
    assert patch.launches["topk_conversion"] == 3


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("world,interleave", [(1, 1), (2, 2), (4, 64)])
def test_dcp_peer_views(vllm_mod, monkeypatch, kind, world, interleave):
    xp = KINDS[kind]
    rng = np.random.default_rng(world * 10 + interleave)
    req = rng.integers(-1, 4, 7).astype(np.int32)
    table = rng.integers(-2, 60, (3, 5)).astype(np.int32)
    positions = rng.integers(-2, world * 5 * 64 + 70, (7, 12)).astype(np.int32)
    gathered = rng.integers(-2, 40, (world, 3, 4)).astype(np.int32)

    def run(mods):
        utils = mods["vllm.v1.attention.backends.mla.sparse_utils"]
        got = []
        for rank in range(world):
            got.append(utils.build_rotated_dcp_peer_block_table(
                xp.i32(gathered.tolist()), local_rank=rank, peer_block_stride=37,
                cp_kv_cache_interleave_size=64, block_size=64))
        out, counts = xp.full((7, 12), 5), xp.full((7,), 9)
        got += list(utils.convert_global_indices_to_dcp_peer_slots(
            xp.i32(req.tolist()), xp.i32(table.tolist()), xp.i32(positions.tolist()), world, 50,
            cp_kv_cache_interleave_size=interleave, block_size=64, return_valid_counts=True,
            out=out, valid_counts_out=counts))
        got.append(utils.convert_global_indices_to_dcp_peer_slots(
            xp.i32(req.tolist()), xp.i32(table.tolist()), xp.i32(positions.tolist()), world, 50,
            cp_kv_cache_interleave_size=interleave, block_size=64))
        if world > 1:
            got += list(utils.filter_peer_slots_to_owner_local(
                got[world], owner_rank=world - 1, dcp_world_size=world, blocks_per_peer=50,
                block_size=64))
        return [_plain(a, xp) for a in got]

    theirs, mine, before, after, patch = _run_standin_and_patched(monkeypatch, vllm_mod, xp, run)
    assert mine == theirs
    assert before["_build_rotated_dcp_peer_block_table_kernel"] == world
    assert before["_convert_global_indices_to_dcp_peer_slots_kernel"] == 2
    assert "_build_rotated_dcp_peer_block_table_kernel" not in after
    assert "_convert_global_indices_to_dcp_peer_slots_kernel" not in after
    assert patch.launches["dcp_peer_views"] == world + 2 + (world > 1)
    assert "_filter_peer_slots_to_owner_local_kernel" not in after


# ---------------------------------------------------------------------------
# what is routed, what is left alone, and putting it back


def test_a_source_checkout_is_judged_by_its_code(vllm_mod, monkeypatch):
    for version in ("0.7.2.dev0+g1234abcd", "0.10.2", "unknown"):
        vllm_standin.install(monkeypatch, KINDS["numpy"], version=version)
        patch = vllm_mod.patch_vllm()
        assert sorted(patch.applied) == sorted(vllm_mod.TARGETS), patch
        assert patch.skipped == {}
        patch.restore()


def test_changed_code_is_left_alone(vllm_mod, monkeypatch):
    vllm_standin.install(monkeypatch, KINDS["numpy"], old_prepare=True, old_varlen_kernel=True)
    patch = vllm_mod.patch_vllm()
    for name in ("indexer_decode_flat", "indexer_decode_native", "indexer_decode_varlen"):
        assert name not in patch.applied
    assert "_prepare_decode_tensors takes (seq_lens, block_table, decode_lens, query_start_loc" \
        in patch.skipped["indexer_decode_flat"]
    assert "_indexer_decode_metadata_kernel takes (query_start_loc" in \
        patch.skipped["indexer_decode_varlen"]
    assert "indexer_decode_varlen not routed" in repr(patch)
    assert "token_to_req_indices" in patch.applied
    patch.restore()


def test_a_launch_outside_the_routed_layout_runs_vllms_kernel(vllm_mod, monkeypatch):
    xp = KINDS["numpy"]
    mods = vllm_standin.install(monkeypatch, xp)
    ops = mods["vllm.v1.attention.ops.metadata"]
    with vllm_mod.patch_vllm() as patch:
        qsl, seq, table = xp.i32([0, 2, 3]), xp.i32([5, 4]), _table(xp, 2)
        out = [xp.full((8,), -9) for _ in range(4)]
        table_out = xp.full((8, WIDTH), -9)
        # an input stride that is not the table's: not what attnmeta takes
        ops._indexer_decode_metadata_kernel[(4,)](
            qsl, seq, table, out[0], table_out, out[1], out[2], out[3], 2, 3, 8, WIDTH + 1,
            WIDTH, BLOCK_COLS=WIDTH)
    assert patch.fallbacks == {"indexer_decode_varlen": 1}
    assert patch.launches["indexer_decode_varlen"] == 0
    assert vllm_standin.standin_launches()["_indexer_decode_metadata_kernel"] == 1
    # a buffer attnmeta refuses (int64 lengths): nothing written, vLLM's kernel runs
    with vllm_mod.patch_vllm() as patch:
        ops._indexer_decode_metadata_kernel[(4,)](
            qsl, seq, table, np.full(8, -9, np.int64), table_out, out[1], out[2], out[3], 2, 3,
            8, WIDTH, WIDTH, BLOCK_COLS=WIDTH)
    assert patch.fallbacks == {"indexer_decode_varlen": 1}
    assert patch.fallback_reasons["indexer_decode_varlen"].startswith(("ValueError", "TypeError"))
    assert vllm_standin.standin_launches()["_indexer_decode_metadata_kernel"] == 2


def test_only_what_is_asked_restore_and_once(vllm_mod, monkeypatch):
    mods = vllm_standin.install(monkeypatch, KINDS["numpy"])
    before = {name: dict(vars(module)) for name, module in mods.items()}
    classes = {name: dict(vars(getattr(mods[mod], name))) for mod, name in
               ((INDEXER, "DeepseekV32IndexerMetadataBuilder"),
                ("vllm.v1.attention.backend", "CommonAttentionMetadata"))}
    patch = vllm_mod.patch_vllm(indexer_decode=False, dsv4=False, compute_token_to_req_indices=False)
    assert patch.applied == ["token_to_req_indices"] and patch.skipped == {}
    assert vllm_mod.patch_vllm() is patch  # in force already: the same handle
    patch.restore()
    patch.restore()  # twice is fine
    full = vllm_mod.patch_vllm()
    assert sorted(full.applied) == sorted(vllm_mod.TARGETS)
    full.restore()
    assert {name: dict(vars(module)) for name, module in mods.items()} == before
    assert {name: dict(vars(getattr(mods[mod], name))) for mod, name in
            ((INDEXER, "DeepseekV32IndexerMetadataBuilder"),
             ("vllm.v1.attention.backend", "CommonAttentionMetadata"))} == classes
    with pytest.raises(TypeError, match="unknown target"):
        vllm_mod.patch_vllm(indexer_decode_flattened=False)


def test_without_vllm(vllm_mod, monkeypatch):
    for name in list(sys.modules):
        if name == "vllm" or name.startswith("vllm."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm fails
    with pytest.raises(ImportError):
        vllm_mod.patch_vllm()


def test_a_module_that_cannot_be_imported_skips_its_targets_only(vllm_mod, monkeypatch):
    vllm_standin.install(monkeypatch, KINDS["numpy"])
    monkeypatch.setitem(sys.modules, "vllm.v1.attention.backends.mla.sparse_swa", None)
    patch = vllm_mod.patch_vllm()
    assert "cannot import vllm.v1.attention.backends.mla.sparse_swa" in patch.skipped["swa_decode"]
    assert sorted(patch.applied) == sorted(set(vllm_mod.TARGETS) - {"swa_decode"})
    patch.restore()


C128A_CASES = [
    # (query_start_loc, seq_lens, num_actual_tokens)
    ([0, 2, 4, 6], [900, 129, 300], 6),
    ([0, 3, 4, 8, 8], [1000, 7, 640, 0], 11),
    ([0, 1], [128], 1),
]


def _c128a_common(mods, xp, qsl, seq, tokens, pad_position=0, dcp=False, table_width=WIDTH):
    common = _common(mods, xp, qsl, seq, tokens, dcp=dcp,
                     table=_table(xp, len(seq), table_width))
    positions = [pad_position] * tokens
    for r in range(len(seq)):
        for i in range(qsl[r], qsl[r + 1]):
            positions[i] = seq[r] - (qsl[r + 1] - qsl[r]) + (i - qsl[r])
    common.positions = xp.array(positions, np.int64)
    common.max_seq_len = max(seq)
    return common


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("case", C128A_CASES, ids=str)
def test_c128a_rows_of_a_decode_step(vllm_mod, monkeypatch, kind, case):
    xp = KINDS[kind]

    def run(mods):
        cls = mods["vllm.v1.attention.backends.mla.flashmla_sparse"].FlashMLASparseMetadataBuilder
        builder = cls(16, 8, num_speculative_tokens=3)
        result = builder.build(0, _c128a_common(mods, xp, *case))
        return ({k: _plain(v, xp) for k, v in sorted(result.items())},
                _state(builder, xp))

    theirs, mine, before, after, patch = _run_standin_and_patched(monkeypatch, vllm_mod, xp, run)
    assert mine == theirs
    _replaced(before, after, patch, "_build_c128a_topk_metadata_kernel", "c128a_decode", 1)


def test_c128a_stale_padding_positions(vllm_mod, monkeypatch):
    xp = KINDS["numpy"]
    mods = vllm_standin.install(monkeypatch, xp)
    cls = mods["vllm.v1.attention.backends.mla.flashmla_sparse"].FlashMLASparseMetadataBuilder
    with vllm_mod.patch_vllm() as patch:
        # padding tokens with stale positions: length 0, and a row of -1
        builder = cls(16, 8, num_speculative_tokens=3)
        result = builder.build(0, _c128a_common(mods, xp, [0, 3, 4], [700, 300], 7,
                                                pad_position=999))
        assert result["c128a_decode_topk_lens"].tolist() == [5, 5, 5, 2, 0, 0, 0]
        assert (builder.c128a_global_decode_buffer[4:7] == -1).all()
        assert patch.launches["c128a_decode"] == 1


C128A_MIXED_CASES = [
    # (query_start_loc, seq_lens, num_actual_tokens, max_compressed)
    ([0, 1, 2, 9], [300, 129, 700], 9, 8),
    ([0, 1, 2, 9], [300, 129, 700], 9, 384),  # rows of 128 of the 384 columns
    ([0, 2, 4, 9, 12], [900, 129, 300, 20000], 12, 384),  # rows of 256
    ([0, 1, 2, 9], [300, 129, 40000], 9, 384),  # the whole 384
    ([0, 5, 12], [400, 1000], 12, 256),  # prefill tokens only
]


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("case", C128A_MIXED_CASES, ids=str)
def test_c128a_rows_of_a_step_with_prefill_tokens(vllm_mod, monkeypatch, kind, case):
    xp = KINDS[kind]
    qsl, seq, tokens, bound = case

    def run(mods):
        cls = mods["vllm.v1.attention.backends.mla.flashmla_sparse"].FlashMLASparseMetadataBuilder
        builder = cls(16, bound, num_speculative_tokens=1)
        result = builder.build(0, _c128a_common(mods, xp, qsl, seq, tokens))
        return ({k: _plain(v, xp) for k, v in sorted(result.items())},
                _state(builder, xp))

    theirs, mine, before, after, patch = _run_standin_and_patched(monkeypatch, vllm_mod, xp, run)
    assert mine[0] == theirs[0]  # every view the builder returns
    decodes = len(theirs[0].get("c128a_decode_topk_lens", []))
    width = len(theirs[0]["c128a_prefill_topk_indices"][0])
    longest = max(seq) // 128
    assert width == min(bound, max(-(-longest // 128), 1) * 128)
    # the buffers: what vLLM writes is the same; attnmeta also writes -1 into
    # the rows past each table's tokens, and the prefill tokens' lengths
    rows, lens = "c128a_global_decode_buffer", "c128a_decode_lens_buffer"
    pre = "c128a_prefill_buffer"
    for name, count in ((rows, decodes), (lens, decodes), (pre, tokens - decodes)):
        assert mine[1][name][:count] == theirs[1][name][:count]
        assert mine[1][name][tokens:] == theirs[1][name][tokens:]
    for name, first in ((rows, decodes), (pre, tokens - decodes)):
        assert all(r[:width] == [-1] * width for r in mine[1][name][first:tokens])
        assert all(m[width:] == t[width:] for m, t in zip(mine[1][name], theirs[1][name]))
    local = [min((p + 1) // 128, width) for p in _plain(_c128a_common(
        vllm_standin.make_modules(xp), xp, qsl, seq, tokens).positions, xp)]
    assert mine[1][lens][decodes:tokens] == local[decodes:]
    assert before["_build_c128a_topk_metadata_kernel"] == 1
    assert "_build_c128a_topk_metadata_kernel" not in after
    # only the builder's own clearing of its request map; not vLLM's -1 fills
    assert before["torch.fill"] > 1 and after["torch.fill"] == 1
    assert patch.launches["c128a_decode"] == 1 and patch.fallbacks == {}


def test_c128a_without_the_hosts_max_seq_len(vllm_mod, monkeypatch):
    xp = KINDS["numpy"]

    def run(mods):
        cls = mods["vllm.v1.attention.backends.mla.flashmla_sparse"].FlashMLASparseMetadataBuilder
        builder = cls(16, 384, num_speculative_tokens=1)
        common = _c128a_common(mods, xp, [0, 1, 2, 9], [300, 129, 20000], 9)
        common.max_seq_len = None  # the width from the positions, as vLLM's fallback
        return {k: _plain(v, xp) for k, v in sorted(builder.build(0, common).items())}

    theirs, mine, before, after, patch = _run_standin_and_patched(monkeypatch, vllm_mod, xp, run)
    assert mine == theirs
    assert len(mine["c128a_prefill_topk_indices"][0]) == 256
    assert patch.launches["c128a_decode"] == 1


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("case", [C128A_CASES[0], C128A_MIXED_CASES[1]], ids=str)
def test_c128a_of_vllm_before_the_batch_width(vllm_mod, monkeypatch, kind, case):
    """build_c128a_topk_metadata without max_seq_len: rows as wide as the
    kernel's bound, every column of the tokens' rows written."""
    xp = KINDS[kind]
    qsl, seq, tokens = case[:3]

    def run(mods):
        cls = mods["vllm.v1.attention.backends.mla.flashmla_sparse"].FlashMLASparseMetadataBuilder
        builder = cls(16, 200, num_speculative_tokens=1 if len(case) > 3 else 3)
        result = builder.build(0, _c128a_common(mods, xp, qsl, seq, tokens))
        return {k: _plain(v, xp) for k, v in sorted(result.items())}

    theirs, mine, before, after, patch = _run_standin_and_patched(
        monkeypatch, vllm_mod, xp, run, c128a_batch_width=False)
    assert mine == theirs
    assert {np.asarray(v).shape[-1] for k, v in mine.items() if "indices" in k} == {200}
    assert "_build_c128a_topk_metadata_kernel" not in after
    assert patch.launches["c128a_decode"] == 1 and patch.fallbacks == {}


C128A_DCP_CASES = [
    # (query_start_loc, seq_lens, num_actual_tokens)
    ([0, 2, 4, 6], [900, 129, 3000], 6),  # decode tokens only
    ([0, 1, 2, 9], [3000, 129, 700], 9),  # a prefill after the decodes
    ([0, 1, 2, 9], [3000, 129, 700], 12),  # and graph padding after it
]


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("case", C128A_DCP_CASES, ids=str)
@pytest.mark.parametrize("world, interleave", [(1, 1), (2, 1), (4, 1), (2, 2)], ids=str)
def test_c128a_rows_of_vllm_with_dcp(vllm_mod, monkeypatch, kind, case, world, interleave):
    """The DCP variant of build_c128a_topk_metadata (actual_num_query_tokens
    and the step's DCP): each rank's owned rows packed to the front."""
    xp = KINDS[kind]
    qsl, seq, tokens = case

    def run(mods):
        cls = mods["vllm.v1.attention.backends.mla.flashmla_sparse"].FlashMLASparseMetadataBuilder
        builder = cls(16, 32, num_speculative_tokens=1, dcp_world_size=world,
                      dcp_rank=world - 1, cp_kv_cache_interleave_size=interleave)
        result = builder.build(0, _c128a_common(mods, xp, qsl, seq, tokens, dcp=True,
                                                table_width=12))
        return ({k: _plain(v, xp) for k, v in sorted(result.items())},
                _state(builder, xp))

    theirs, mine, before, after, patch = _run_standin_and_patched(
        monkeypatch, vllm_mod, xp, run, c128a_dcp=True)
    assert mine[0] == theirs[0]
    decodes = len(theirs[0].get("c128a_decode_topk_lens", []))
    if decodes == tokens:  # decode-only: attnmeta writes what vLLM writes
        assert mine[1] == theirs[1]
    else:
        name = "c128a_global_decode_buffer"
        assert mine[1][name][:decodes] == theirs[1][name][:decodes]
    _replaced(before, after, patch, "_build_c128a_topk_metadata_kernel", "c128a_decode", 1)


def test_c128a_with_dcp_groups_wider_than_a_block_stay_vllms(vllm_mod, monkeypatch):
    xp = KINDS["numpy"]

    def run(mods):
        cls = mods["vllm.v1.attention.backends.mla.flashmla_sparse"].FlashMLASparseMetadataBuilder
        builder = cls(16, 32, num_speculative_tokens=1, dcp_world_size=2, dcp_rank=1,
                      cp_kv_cache_interleave_size=4)  # 2 compressed rows a block
        result = builder.build(0, _c128a_common(mods, xp, [0, 1, 2, 9], [3000, 129, 700], 9,
                                                dcp=True, table_width=12))
        return {k: _plain(v, xp) for k, v in sorted(result.items())}

    theirs, mine, before, after, patch = _run_standin_and_patched(
        monkeypatch, vllm_mod, xp, run, c128a_dcp=True)
    assert mine == theirs
    assert after["_build_c128a_topk_metadata_kernel"] == 1
    assert patch.fallbacks == {"c128a_decode": 1} and not patch.launches.get("c128a_decode")


def test_other_signatures_of_the_dsv4_functions_are_left_alone(vllm_mod, monkeypatch):
    mods = vllm_standin.install(monkeypatch, KINDS["numpy"])
    layer = mods["vllm.v1.attention.backends.mla.flashmla_sparse"]
    compressor = mods["vllm.v1.attention.backends.mla.compressor_utils"]

    def build_c128a_topk_metadata(positions, compress_ratio, num_decode_tokens,
                                  actual_num_query_tokens, token_to_req_indices, block_table,
                                  block_size, slot_mapping, global_decode_buffer,
                                  decode_lens_buffer, prefill_buffer, max_compressed_tokens=8192,
                                  dcp_world_size=1, dcp_rank=0, cp_kv_cache_interleave_size=1,
                                  topk_alignment=128):
        raise AssertionError("not called")

    def get_compressed_slot_mapping(num_tokens, query_start_loc, seq_lens, block_table,
                                    block_size, compress_ratio, out=None, cp_world_size=1,
                                    cp_rank=0, cp_kv_cache_interleave_size=1, pad_id=-1):
        raise AssertionError("not called")

    monkeypatch.setattr(layer, "build_c128a_topk_metadata", build_c128a_topk_metadata)
    def get_pcp_compressed_slot_mapping(logical_slot_mapping, positions, logical_block_size,
                                        storage_block_size, compress_ratio, out=None,
                                        pad_id=-1):
        raise AssertionError("not called")

    monkeypatch.setattr(compressor, "get_compressed_slot_mapping", get_compressed_slot_mapping)
    monkeypatch.setattr(compressor, "get_pcp_compressed_slot_mapping",
                        get_pcp_compressed_slot_mapping)
    with vllm_mod.patch_vllm() as patch:
        assert "pad_id" in patch.skipped["pcp_compressed_slot_mapping"]
        assert compressor.get_pcp_compressed_slot_mapping is get_pcp_compressed_slot_mapping
        assert "topk_alignment" in patch.skipped["c128a_decode"]
        assert "pad_id" in patch.skipped["compressed_slot_mapping"]
        assert layer.build_c128a_topk_metadata is build_c128a_topk_metadata
        assert compressor.get_compressed_slot_mapping is get_compressed_slot_mapping
        assert "topk_conversion" in patch.applied
