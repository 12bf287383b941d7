# SPDX-License-Identifier: Apache-2.0
"""patch_vllm's ``swa_decode`` target on vLLM's SWA kernel since in-image
visibility (``index_width``, ``left_visible_ptr``, ``right_visible_ptr``,
``HAS_IMAGE``): the stand-in's builder (vllm_standin_dsv4.py, option
``swa_image``) gives the same rows and lengths patched as unpatched, with
and without image spans, decode and prefill parts, slotless tokens, in one
attnmeta launch per part (the visibility kernel stays vLLM's)."""

import pytest

import vllm_standin
from test_vllm_integration import KINDS, _common, _state, _table

SPARSE_SWA = "vllm.v1.attention.backends.mla.sparse_swa"

# (query_start_loc, seq_lens, num_actual_tokens, image spans by request)
CASES = [
    ([0, 1, 13], [20, 30], 13, {1: [(20, 26)]}),  # a decode, a prefill with an image
    ([0, 1, 2, 12, 24], [40, 3, 30, 12], 24, {2: [(21, 24), (26, 29)], 3: [(0, 6)]}),
    ([0, 1, 7, 12], [20, 6, 9], 14, {}),  # no image: HAS_IMAGE off, wider rows
    ([0, 6, 11], [6, 30], 11, {0: [(1, 5)]}),  # prefill tokens only
]


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("holes", [(), (3,)], ids=["every_slot", "a_token_without_slot"])
def test_image_rows_match_vllm(vllm_mod, monkeypatch, kind, case, holes):
    xp = KINDS[kind]
    qsl, seq, tokens, spans = case

    def run(mods):
        cls = mods[SPARSE_SWA].DeepseekSparseSWAMetadataBuilder
        builder = cls(32, 4, block_size=4, num_speculative_tokens=1, max_image_tokens=6)
        common = _common(mods, xp, qsl, seq, tokens, table=_table(xp, len(seq), 20),
                         holes=holes)
        common.mm_req_doc_ranges = spans
        meta = builder.build(0, common)
        return _state(meta, xp), _state(builder, xp), meta.num_decode_tokens

    mods = vllm_standin.install(monkeypatch, xp, swa_image=True)
    theirs = run(mods)
    before = vllm_standin.standin_launches()
    mods = vllm_standin.install(monkeypatch, xp, swa_image=True)
    with vllm_mod.patch_vllm() as patch:
        mine = run(mods)
    after = vllm_standin.standin_launches()
    assert mine == theirs
    decode_tokens = theirs[2]
    launches = (decode_tokens > 0) + (decode_tokens < tokens)
    assert before["_compute_swa_indices_and_lens_kernel"] == launches
    assert "_compute_swa_indices_and_lens_kernel" not in after
    assert after.get("_compute_image_visibility_kernel", 0) == before.get(
        "_compute_image_visibility_kernel", 0)
    assert patch.launches["swa_decode"] == launches and patch.fallbacks == {}


def test_image_rows_see_the_whole_image(vllm_mod, monkeypatch):
    """Window 4, image [20, 26], the prefill token at 23 sees 20..26."""
    xp = KINDS["numpy"]
    mods = vllm_standin.install(monkeypatch, xp, swa_image=True)
    cls = mods[SPARSE_SWA].DeepseekSparseSWAMetadataBuilder
    with vllm_mod.patch_vllm():
        builder = cls(16, 4, block_size=4, max_image_tokens=6)
        common = _common(mods, xp, [0, 1, 13], [20, 30], 13,
                         table=xp.i32([[4 * b for b in range(20)]] * 2))
        common.mm_req_doc_ranges = {1: [(20, 26)]}
        builder.build(0, common)
    # prefill token i of request 1 is at position 18 + i; 23 is prefill row 5
    assert int(builder.prefill_swa_lens[5]) == 7
    row = builder.prefill_swa_indices[5, 0].tolist()
    assert row[:7] == [4 * (p // 4) * 4 + p % 4 for p in range(20, 27)] and row[7:] == [-1] * 3


def test_other_kernel_arguments_are_left_alone(vllm_mod, monkeypatch):
    xp = KINDS["numpy"]
    mods = vllm_standin.install(monkeypatch, xp, swa_image=True)
    mods[SPARSE_SWA]._compute_swa_indices_and_lens_kernel.arg_names.remove("HAS_IMAGE")
    with vllm_mod.patch_vllm() as patch:
        assert "swa_decode" not in patch.applied
        assert "takes (" in patch.skipped["swa_decode"]
