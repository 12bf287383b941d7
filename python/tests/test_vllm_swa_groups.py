# SPDX-License-Identifier: Apache-2.0
"""patch_vllm's ``swa_groups`` target against the stand-in of vLLM's
batched DeepSeek-V4.1 SWA builder (vllm_standin_swa_groups.py): with the
groups' tables views of one buffer, every group's rows and lengths are the
stand-in's (vLLM's) bit for bit, in one attnmeta launch per decode or
prefill part and none of the stand-in's kernels; separate tables, a
missing builder or a kernel of other arguments are left to vLLM with a
reason; and the drop-in's argument checks write nothing."""

import numpy as np
import pytest

import vllm_standin
from test_vllm_integration import KINDS, _common, _plain, _replaced, _run_standin_and_patched

MODULE = "vllm.v1.attention.backends.mla.swa_metadata"

# (query_start_loc, seq_lens, num_actual_tokens, replay floors or None)
CASES = [
    ([0, 1, 2, 3], [40, 9, 130], 3, None),  # decode only
    ([0, 1, 2, 3], [40, 9, 130], 3, [30, 0, 125]),  # floors inside the windows
    ([0, 2, 4, 9], [20, 7, 30], 9, [0, 3, 24]),  # MTP decodes, then a prefill
    ([0, 1, 7, 12], [20, 6, 9], 14, [12, 0, 5]),  # prefills and graph padding
    ([0, 6, 11], [6, 30], 11, None),  # prefill tokens only
]


def _tables(xp, groups, reqs, cols, shared):
    """G tables of R x cols: views of one buffer G x (R + 1) rows apart
    (`shared`), or separate arrays."""
    values = [[[1000 * g + 50 * r + 3 * c + 1 for c in range(cols)] for r in range(reqs)]
              for g in range(groups)]
    if not shared:
        return [xp.i32(v) for v in values]
    big = xp.full((groups, reqs + 1, cols), -3)
    for g in range(groups):
        xp.assign(big[g, :reqs], xp.i32(values[g]))
    return [big[g, :reqs] for g in range(groups)]


def _build(mods, xp, case, groups, shared, holes=()):
    qsl, seq, tokens, floors = case
    cls = mods[MODULE].SWAWindowMetadata
    window, width, bs = 8, 10, 4
    meta = cls("cpu", groups, 16, 16, window, width)
    tables = _tables(xp, groups, len(seq), 40, shared)
    layers = {"layer%d" % g: (g, t) for g, t in enumerate(tables)}
    assert meta.observe(layers, xp.i32(floors) if floors else None)
    common = _common(mods, xp, qsl, seq, tokens, holes=holes)
    meta.prepare(common, bs, 2, {})
    got = [{k: _plain(v, xp) for k, v in meta.rows_for_slot(g).items()} for g in range(groups)]
    return got, meta


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("groups", [1, 3])
@pytest.mark.parametrize("holes", [(), (1,)], ids=["every_slot", "a_token_without_slot"])
def test_groups_match_vllm(vllm_mod, monkeypatch, kind, case, groups, holes):
    xp = KINDS[kind]

    def run(mods):
        got, meta = _build(mods, xp, case, groups, True, holes)
        # what vLLM writes: each part's rows and lengths of every group
        written = (_plain(meta.decode_indices[:, :meta.num_decode_tokens], xp),
                   _plain(meta.decode_lens[:, :meta.num_decode_tokens], xp))
        return got, written, meta.num_decode_tokens, meta.num_prefill_tokens

    theirs, mine, before, after, patch = _run_standin_and_patched(monkeypatch, vllm_mod, xp, run)
    assert mine == theirs
    launches = (theirs[2] > 0) + (theirs[3] > 0)
    _replaced(before, after, patch, "_batched_swa_indices_and_lens_kernel", "swa_groups", launches)


def test_rows_hold_the_floor(vllm_mod, monkeypatch):
    """A hand-checked row: window 8, floor 35, position 39: positions 35..39."""
    xp = KINDS["numpy"]
    mods = vllm_standin.install(monkeypatch, xp)
    with vllm_mod.patch_vllm():
        got, _ = _build(mods, xp, ([0, 1], [40], 1, [35]), 2, True)
    assert got[0]["decode_swa_lens"] == [5] and got[1]["decode_swa_lens"] == [5]
    # table g row 0: 1000 g + 3 c + 1; block 8 (position 35, id 25), 9 (36..39, id 28)
    assert got[0]["decode_swa_indices"][0][0][:6] == [25 * 4 + 3, 112, 113, 114, 115, -1]
    assert got[1]["decode_swa_indices"][0][0][0] == 1025 * 4 + 3


def test_separate_tables_fall_back(vllm_mod, monkeypatch):
    xp = KINDS["numpy"]
    case = CASES[2]
    mods = vllm_standin.install(monkeypatch, xp)
    theirs, _ = _build(mods, xp, case, 3, False)
    mods = vllm_standin.install(monkeypatch, xp)
    with vllm_mod.patch_vllm() as patch:
        mine, _ = _build(mods, xp, case, 3, False)
        assert vllm_standin.standin_launches()["_batched_swa_indices_and_lens_kernel"] == 2
    assert mine == theirs
    assert patch.launches["swa_groups"] == 0 and patch.fallbacks["swa_groups"] == 2
    assert "separate allocations" in patch.fallback_reasons["swa_groups"]


def test_left_alone_without_the_builder_or_with_other_arguments(vllm_mod, monkeypatch):
    xp = KINDS["numpy"]
    mods = vllm_standin.install(monkeypatch, xp)
    monkeypatch.delattr(mods[MODULE], "SWAWindowMetadata")
    with vllm_mod.patch_vllm() as patch:
        assert "defines SWAWindowMetadata" in patch.skipped["swa_groups"]
        assert "swa_decode" in patch.applied
    mods = vllm_standin.install(monkeypatch, xp)
    mods[MODULE]._batched_swa_indices_and_lens_kernel.arg_names.remove("replay_start_ptr")
    with vllm_mod.patch_vllm() as patch:
        assert "not (table_ptrs" in patch.skipped["swa_groups"]
    original = mods[MODULE].SWAWindowMetadata._launch
    assert mods[MODULE].SWAWindowMetadata._launch is original  # nothing replaced


def test_restore_puts_the_builder_back(vllm_mod, monkeypatch):
    xp = KINDS["numpy"]
    mods = vllm_standin.install(monkeypatch, xp)
    original = mods[MODULE].SWAWindowMetadata._launch
    patch = vllm_mod.patch_vllm(swa_groups=True)
    assert mods[MODULE].SWAWindowMetadata._launch is not original
    patch.restore()
    assert mods[MODULE].SWAWindowMetadata._launch is original
    with vllm_mod.patch_vllm(swa_groups=False) as off:
        assert "swa_groups" not in off.applied
        assert mods[MODULE].SWAWindowMetadata._launch is original


def _dropin_args(groups=2, rows=4, width=6, n=3):
    tables = np.arange(1, groups * 2 * 5 + 1, dtype=np.int32).reshape(groups, 2, 5)
    return dict(block_tables=tables,
                indices=np.full((groups, rows, 1, width), 77, np.int32), indices_width=width,
                lens=np.full((groups, rows), 77, np.int32), rows=rows, window_size=4,
                query_start_loc=np.array([0, 1, n], np.int32),
                seq_lens=np.array([9, 12], np.int32), token_to_req_indices=None,
                is_valid_token=np.ones(8, np.bool_), block_table_stride=5, block_size=4,
                replay_start=np.zeros(2, np.int32), token_offset=0, num_tokens=n)


@pytest.mark.parametrize("bad", [
    dict(block_table_stride=6),  # not the tables' row stride
    dict(indices_width=5),  # not the rows' width
    dict(num_tokens=5),  # more tokens than a group's rows
    dict(rows=3),  # not the buffers' rows
    dict(window_size=0),
    dict(block_tables=np.zeros((2, 5), np.int32)),  # one table, not [G, R, cols]
])
def test_dropin_refuses_and_writes_nothing(attnmeta, bad):
    from attnmeta._dsv4_dropins import batched_swa_indices_and_lens

    args = _dropin_args()
    args.update(bad)
    with pytest.raises(ValueError):
        batched_swa_indices_and_lens(**args)
    assert (args["indices"] == 77).all() and (args["lens"] == 77).all()


def test_dropin_writes_only_the_parts_rows(attnmeta):
    from attnmeta._dsv4_dropins import batched_swa_indices_and_lens

    args = _dropin_args()
    rows, lens = batched_swa_indices_and_lens(**args)
    assert rows.shape == (2, 3, 1, 6) and lens.tolist() == [[4, 4, 4], [4, 4, 4]]
    assert (args["indices"][:, 3:] == 77).all() and (args["lens"][:, 3:] == 77).all()
