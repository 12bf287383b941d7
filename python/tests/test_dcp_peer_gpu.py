# SPDX-License-Identifier: Apache-2.0
"""vLLM's DCP peer views on torch GPU tensors, as vLLM's own tests call
them: strided and expanded (stride 0) gathered tables, strided req_id,
block table and token_indices, persistent outputs, empty tensors (data
pointer 0), the table and the rows under torch.compile. Skipped unless
torch sees a GPU."""

import numpy as np
import pytest

from test_dcp_peer import GATHERED, ref_slots, ref_table

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("torch sees no GPU", allow_module_level=True)

DEVICE = torch.device("cuda", torch.cuda.current_device())


def test_rotated_table_strided_and_expanded(attnmeta):
    storage = torch.full((3, 2, 2, 8), -99, dtype=torch.int32, device=DEVICE)
    g = storage[:, :, 1, 1::2]
    g.copy_(torch.tensor([[[0, 7, -1, -1], [2, 3, 4, -1]], [[1, 8, -1, -1], [5, -1, 6, -1]],
                          [[6, 2**31 - 1, -1, -1], [7, 1, 0, -1]]], dtype=torch.int32))
    got = attnmeta.build_rotated_dcp_peer_block_table(
        g, local_rank=2, peer_block_stride=8, cp_kv_cache_interleave_size=32, block_size=32,
        BLOCK_N=8)
    np.testing.assert_array_equal(got.cpu().numpy(), ref_table(g.cpu().numpy(), 2, 8))
    owner = torch.tensor([[2, 0]], dtype=torch.int32, device=DEVICE)
    expanded = owner.unsqueeze(0).expand(4, -1, -1)  # production: one table for every rank
    got = attnmeta.build_rotated_dcp_peer_block_table(
        expanded, local_rank=0, peer_block_stride=6, cp_kv_cache_interleave_size=64,
        block_size=64, BLOCK_N=8)
    assert got.tolist() == [[2, 8, 14, 20, 0, 6, 12, 18]]
    for rank in (0, 1, 3):
        got = attnmeta.build_rotated_dcp_peer_block_table(
            torch.from_numpy(GATHERED).to(DEVICE), local_rank=rank, peer_block_stride=16,
            cp_kv_cache_interleave_size=64, block_size=64, BLOCK_N=4)
        np.testing.assert_array_equal(got.cpu().numpy(), ref_table(GATHERED, rank, 16))


def test_peer_slots_strided_persistent_and_empty(attnmeta):
    req = torch.tensor([9, 0, 9, 1], dtype=torch.int32, device=DEVICE)[1::2]
    table = torch.tensor([[3, 99, 7, 99], [5, 99, 1, 99]], dtype=torch.int32,
                         device=DEVICE)[:, ::2]
    storage = torch.full((2, 256), -1, dtype=torch.int32)
    storage[0, :16:2] = torch.tensor([0, 1, 2, 3, 8, 9, 10, 11])
    storage[1, :16:2] = torch.tensor([4, 5, 6, 7, 12, 13, 14, 15])
    ti = storage.to(DEVICE)[:, ::2]
    got = attnmeta.convert_global_indices_to_dcp_peer_slots(
        req, table, ti, dcp_size=2, blocks_per_peer=16, cp_kv_cache_interleave_size=2,
        block_size=4)
    want, _ = ref_slots(req.cpu().numpy(), table.cpu().numpy(), ti.cpu().numpy(), 2, 16, 2, 4)
    np.testing.assert_array_equal(got.cpu().numpy(), want)
    out = torch.full((2, 128), -99, dtype=torch.int32, device=DEVICE)
    vc = torch.full((2,), 99, dtype=torch.int32, device=DEVICE)
    got, counts = attnmeta.convert_global_indices_to_dcp_peer_slots(
        req, table, ti, dcp_size=2, blocks_per_peer=16, cp_kv_cache_interleave_size=2,
        block_size=4, return_valid_counts=True, out=out, valid_counts_out=vc)
    assert got.data_ptr() == out.data_ptr() and counts.data_ptr() == vc.data_ptr()
    np.testing.assert_array_equal(out.cpu().numpy(), want)
    empty = torch.empty((0, 4), dtype=torch.int32, device=DEVICE)
    e_out, e_vc = torch.empty_like(empty), torch.empty(0, dtype=torch.int32, device=DEVICE)
    got, counts = attnmeta.convert_global_indices_to_dcp_peer_slots(
        torch.empty(0, dtype=torch.int32, device=DEVICE),
        torch.zeros((1, 1), dtype=torch.int32, device=DEVICE), empty, dcp_size=4,
        blocks_per_peer=16, cp_kv_cache_interleave_size=64, block_size=64,
        return_valid_counts=True, out=e_out, valid_counts_out=e_vc)
    assert got is e_out and counts is e_vc
    torch.cuda.synchronize()


def test_topk_plan_peer_view_under_compile(attnmeta):
    import attnmeta.ops  # noqa: F401  (registers the operators)

    req = torch.tensor([0, 1], dtype=torch.int32, device=DEVICE)
    table = torch.tensor([[3, 7, 9], [5, 1, 6]], dtype=torch.int32, device=DEVICE)
    ti = torch.tensor([[0, 1, 2, 3], [4, 5, 6, -1]], dtype=torch.int32, device=DEVICE)
    out = torch.zeros_like(ti)

    @torch.compile(fullgraph=True)
    def convert(ti, out):
        attnmeta.ops.convert_topk(ti, table, out, req_id=req, block_size=4, dcp_size=2,
                                  cp_kv_cache_interleave_size=2, blocks_per_peer=16)
        return out

    convert(ti, out)
    want, _ = ref_slots(req.cpu().numpy(), table.cpu().numpy(), ti.cpu().numpy(), 2, 16, 2, 4)
    np.testing.assert_array_equal(out.cpu().numpy(), want)
