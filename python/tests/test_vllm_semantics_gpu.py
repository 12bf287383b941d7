# SPDX-License-Identifier: Apache-2.0
"""The engines' semantics of the top-k conversion and the DSV4 drop-ins on
torch GPU tensors: empty tensors (data pointer 0), prefill-workspace rows
past the table, persistent outputs, padded block tables, the owner filter
of DCP peer slots. Skipped unless torch sees a GPU."""

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("torch sees no GPU", allow_module_level=True)

DEVICE = torch.device("cuda", torch.cuda.current_device())


def i32(values):
    return torch.tensor(values, dtype=torch.int32, device=DEVICE)


def test_empty_tensors(attnmeta):
    table = torch.empty((0, 4), dtype=torch.int32, device=DEVICE)
    assert table.numel() == 0  # its data pointer is 0 on CUDA
    topk = torch.arange(16, dtype=torch.int32, device=DEVICE).view(2, 8)
    out, counts = attnmeta.filter_and_convert_dcp_index(
        torch.zeros(2, dtype=torch.int32, device=DEVICE), table, topk, 2, 0, BLOCK_SIZE=16,
        NUM_TOPK_TOKENS=8, return_valid_counts=True)
    assert (out == -1).all() and (counts == 0).all()
    none = torch.empty((0, 8), dtype=torch.int32, device=DEVICE)
    req = torch.empty(0, dtype=torch.int32, device=DEVICE)
    full = i32([[1, 2, 3, 4]])
    out, counts = attnmeta.convert_req_index_to_global_index(
        req, full, none, BLOCK_SIZE=16, NUM_TOPK_TOKENS=8, return_valid_counts=True)
    assert out.shape == (0, 8) and counts.shape == (0,)
    out, counts = attnmeta.filter_and_convert_dcp_index(
        req, full, none, 2, 1, BLOCK_SIZE=16, NUM_TOPK_TOKENS=8, return_valid_counts=True)
    assert out.shape == (0, 8) and counts.shape == (0,)
    slots = attnmeta.get_compressed_slot_mapping(3, i32([0]), req, table, 64, 4)
    assert slots.tolist() == [-1, -1, -1]
    torch.cuda.synchronize()


def test_prefill_past_the_table(attnmeta):
    out = attnmeta.convert_req_index_to_global_index(
        i32([0, 0]), i32([[3, 4]]), i32([[128, 31, -1, 32], [200, 0, 5, 32]]), BLOCK_SIZE=16,
        NUM_TOPK_TOKENS=4, HAS_PREFILL_WORKSPACE=True,
        prefill_workspace_request_ids=i32([0, 1]), prefill_workspace_starts=i32([0, 100]))
    assert out.tolist() == [[128, 31, -1, 32], [300, 100, 105, 132]]


def test_persistent_outputs(attnmeta):
    out = torch.full((3, 4), -99, dtype=torch.int32, device=DEVICE)
    counts = torch.full((3,), -99, dtype=torch.int32, device=DEVICE)
    got, got_counts = attnmeta.convert_req_index_to_global_index(
        i32([0, 1]), i32([[3, 4], [5, 6]]), i32([[0, 17, -1, 40], [1, 2, 31, 16]]),
        BLOCK_SIZE=16, NUM_TOPK_TOKENS=4, return_valid_counts=True, out=out[:2],
        valid_counts_out=counts[:2], BLOCK_STRIDE_ROWS=48)
    assert got.data_ptr() == out.data_ptr() and got_counts.data_ptr() == counts.data_ptr()
    assert out.tolist() == [[144, 193, -1, -1], [241, 242, 303, 288], [-99] * 4]
    assert counts.tolist() == [2, 4, -99]


def test_padded_block_table(attnmeta):
    got = attnmeta.get_compressed_slot_mapping(4, i32([0, 4]), i32([2]), i32([[5], [7], [9]]),
                                               64, 4)
    assert got.tolist() == [-1, -1, -1, -1]


def test_owner_filter(attnmeta):
    peer = i32([[16, 3, 23, -1, 17, 8, 24, 20, 15]])
    local, counts = attnmeta._topk.filter_peer_slots_to_owner_local(
        peer, owner_rank=2, dcp_world_size=3, blocks_per_peer=2, block_size=4)
    assert local.device == peer.device and local.dtype == torch.int32
    assert local.tolist() == [[0, 7, 1, 4, -1, -1, -1, -1, -1]] and counts.tolist() == [4]
