# SPDX-License-Identifier: Apache-2.0
"""torch CPU tensors through the CPU backend (skipped without torch): the
same cases as NumPy, and the checks that are torch's own."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import cases  # noqa: E402
import reference  # noqa: E402
from torch_arrays import TorchArrays  # noqa: E402

CASES = cases.well_formed_cases()
ARRAYS = TorchArrays("cpu")


@pytest.mark.parametrize("api", ["plan", "function", "indexer"])
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_every_product(case, api):
    got = cases.run_case(case, ARRAYS, api=api)
    problems = cases.check_case(case, got)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case,flags", cases.hostile_cases(),
                         ids=lambda v: repr(v) if isinstance(v, cases.Case) else "")
def test_hostile(case, flags):
    got = cases.run_case(case, ARRAYS)
    assert not cases.check_case(case, got, values=False)
    assert int(got["error_word"][cases.GUARD]) & flags == flags


def test_token_map(attnmeta):
    qsl = torch.tensor([0, 2, 2, 5], dtype=torch.int32)
    out = torch.full((8,), -1, dtype=torch.int32)
    got = attnmeta.compute_token_to_req_indices(qsl, out, -1, 7)
    assert got.data_ptr() == out.data_ptr() and got.shape == (7,)
    assert out.tolist() == reference.token_map([0, 2, 2, 5], 3, -1, 7) + [-1]


def test_plan_backend_is_cpu(attnmeta):
    plan = attnmeta.StepPlan(torch.zeros(3, dtype=torch.int32),
                             decode_lens_out=torch.zeros(4, dtype=torch.int32))
    assert plan.backend == attnmeta.Backend.CPU


def test_mixing_numpy_and_torch_cpu(attnmeta):
    qsl = np.array([0, 1, 3], np.int32)
    out = torch.zeros(3, dtype=torch.int32)
    attnmeta.token_to_req(qsl, out)
    assert out.tolist() == [0, 1, 1]


def test_empty_tensors(attnmeta):
    # torch gives empty tensors a NULL data pointer: R = 0, T = 0 must still work.
    qsl = torch.zeros(1, dtype=torch.int32)
    empty = torch.zeros(0, dtype=torch.int32)
    empty64 = torch.zeros(0, dtype=torch.int64)
    table = torch.zeros((0, 4), dtype=torch.int32)
    table_out = torch.full((3, 4), -9, dtype=torch.int32)
    attnmeta.build_step(qsl, 3, seq_lens=empty, block_table=table, block_table_out=table_out,
                        per_req_lens_out=empty, positions=torch.full((3,), -9, dtype=torch.int64),
                        slot_mapping=torch.full((5,), -9, dtype=torch.int64), block_size=16)
    assert table_out.tolist() == [[0] * 4] * 3
    attnmeta.build_step(qsl, 0, token_to_req=empty, positions=empty64, seq_lens=empty)
    assert attnmeta.token_to_req(qsl, empty) is empty


def test_torch_validation(attnmeta):
    qsl = torch.tensor([0, 1, 3], dtype=torch.int32)
    out = torch.zeros(4, dtype=torch.int32)
    with pytest.raises(TypeError, match="query_start_loc must be a int32 tensor, got torch.int64"):
        attnmeta.token_to_req(qsl.long(), out)
    with pytest.raises(TypeError, match="positions must be a int64 tensor, got torch.int32"):
        attnmeta.build_step(qsl, 3, seq_lens=qsl[:2], positions=out)
    with pytest.raises(ValueError, match="out must be contiguous, got stride 2"):
        attnmeta.token_to_req(qsl, torch.zeros(8, dtype=torch.int32)[::2])
    with pytest.raises(ValueError, match="out must be 1-D, got shape \\(2, 2\\)"):
        attnmeta.token_to_req(qsl, out.view(2, 2))
    table = torch.zeros((4, 3), dtype=torch.int32)
    with pytest.raises(ValueError, match="block_table must have unit column stride"):
        attnmeta.build_step(qsl, 3, block_table=table.t(), block_table_out=torch.zeros((3, 4), dtype=torch.int32))
    with pytest.raises(ValueError, match="block_table_out has row stride 2, smaller than its 3 columns"):
        attnmeta.build_step(qsl, 3, block_table=table[:2],
                            block_table_out=torch.zeros(10, dtype=torch.int32).as_strided((3, 3), (2, 1)))
    with pytest.raises(ValueError, match="must be a strided"):
        attnmeta.token_to_req(qsl.to_sparse(), out)
    with pytest.raises(ValueError, match="is on device 'meta'"):
        attnmeta.token_to_req(qsl, torch.zeros(4, dtype=torch.int32, device="meta"))
    with pytest.raises(TypeError, match="must be a torch.Tensor, a numpy.ndarray, or an object with __cuda_array_interface__ or __dlpack__, got list"):
        attnmeta.token_to_req([0, 1], out)


def test_table_with_one_row_any_stride(attnmeta):
    qsl = torch.tensor([0, 2], dtype=torch.int32)
    table = torch.arange(12, dtype=torch.int32).view(3, 4)[1:2]  # 1 row, stride 4
    odd = torch.arange(12, dtype=torch.int32).as_strided((1, 4), (1, 1))  # stride 1 < cols: unused
    out = torch.full((2, 4), -9, dtype=torch.int32)
    attnmeta.build_step(qsl, 2, block_table=table, block_table_out=out)
    assert out.tolist() == [[4, 5, 6, 7]] * 2
    attnmeta.build_step(qsl, 2, block_table=odd, block_table_out=out)
    assert out.tolist() == [[0, 1, 2, 3]] * 2
