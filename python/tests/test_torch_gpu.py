# SPDX-License-Identifier: Apache-2.0
"""torch CUDA (or ROCm) tensors on the GPU backend: the reference cases,
several launch shapes, hostile data, streams, no synchronisation, and a full
step captured in a torch.cuda.CUDAGraph and replayed after the device
query_start_loc changed in place. Skipped unless torch sees a GPU."""

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("torch sees no GPU", allow_module_level=True)

import cases  # noqa: E402
import reference  # noqa: E402
from conftest import open_contexts  # noqa: E402
from torch_arrays import TorchArrays  # noqa: E402

CASES = cases.well_formed_cases()
DEVICE = torch.device("cuda", torch.cuda.current_device())
ARRAYS = TorchArrays(DEVICE)
GPU_CONFIGS = {
    "auto": None,
    "block32_grid1": dict(block=32, grid=1),
    "block64_grid3_unstaged": dict(block=64, grid=3, stage=0),
    "block1024_lanes4_staged": dict(block=1024, lanes=4, stage=1),
    "block128_scalar_rows": dict(block=128, vector=0, lanes=8),
    "block256_vector_staged": dict(block=256, grid=2, stage=1, vector=1, lanes=32),
    "block1_grid1": dict(block=1, grid=1),
}


@pytest.fixture(scope="module")
def gpu_kind(attnmeta):
    return attnmeta.Backend.HIP if getattr(torch.version, "hip", None) else attnmeta.Backend.CUDA


@pytest.fixture(scope="module")
def gpu_contexts(attnmeta, gpu_kind):
    yield from open_contexts(attnmeta, gpu_kind, DEVICE.index, GPU_CONFIGS)


def _check(case, got, **kw):
    problems = cases.check_case(case, got, **kw)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("api", ["plan", "function", "indexer"])
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_every_product(case, api):
    _check(case, cases.run_case(case, ARRAYS, api=api))


@pytest.mark.parametrize("config", [c for c in GPU_CONFIGS if c != "auto"])
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_launch_shapes(case, config, gpu_contexts):
    _check(case, cases.run_case(case, ARRAYS, context=gpu_contexts[config]))


@pytest.mark.parametrize("product", cases.ALL_PRODUCTS)
@pytest.mark.parametrize("case", CASES[:14], ids=repr)
def test_single_product(case, product):
    _check(case, cases.run_case(case, ARRAYS, products=(product,)), products=(product,))


@pytest.mark.parametrize("config", list(GPU_CONFIGS))
@pytest.mark.parametrize("case,flags", cases.hostile_cases(),
                         ids=lambda v: repr(v) if isinstance(v, cases.Case) else "")
def test_hostile(case, flags, config, gpu_contexts):
    got = cases.run_case(case, ARRAYS, context=gpu_contexts[config])
    _check(case, got, values=False)
    word = int(got["error_word"][cases.GUARD])
    assert word & flags == flags


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_token_map(attnmeta, case):
    if case.extra_qsl:
        pytest.skip("the drop-in takes R from len(query_start_loc)")
    qsl = torch.tensor(case.qsl, dtype=torch.int32, device=DEVICE)
    out = torch.full((case.T + 3,), cases.POISON32, dtype=torch.int32, device=DEVICE)
    got = attnmeta.compute_token_to_req_indices(qsl, out, case.num_mapped, case.T)
    assert got.shape == (case.T,)
    assert got.data_ptr() == out.data_ptr() or case.T == 0  # torch: empty views have no pointer
    host = out.cpu().tolist()
    assert host[:case.T] == reference.token_map(case.qsl, case.R, case.num_mapped, case.T)
    assert host[case.T:] == [cases.POISON32] * 3


def test_backend_follows_torch(attnmeta, gpu_kind):
    plan = attnmeta.StepPlan(torch.zeros(2, dtype=torch.int32, device=DEVICE),
                             decode_lens_out=torch.zeros(2, dtype=torch.int32, device=DEVICE))
    assert plan.backend == gpu_kind and plan.device == DEVICE.index
    assert attnmeta.get_context(gpu_kind, DEVICE.index) is plan.context


def test_large_step(attnmeta):
    """The CLI's realistic step: 64 requests of 1-4 tokens, 512 columns,
    block size 64, padded to 256 tokens, capacity 512."""
    import random

    rng = random.Random(12345)
    qlens = [rng.randint(1, 4) for _ in range(64)]
    case = cases.make("large", qlens, pad=256 - sum(qlens), cap_extra=256,
                      ctx=[rng.randint(1000, 8000) for _ in range(64)], block_size=64, cols=512)
    _check(case, cases.run_case(case, ARRAYS))


# ---- streams, synchronisation, allocation ----


def _full_plan(attnmeta, R, T, C, cols, block_size, **extra):
    dev = DEVICE
    i32 = dict(dtype=torch.int32, device=dev)
    i64 = dict(dtype=torch.int64, device=dev)
    bufs = dict(
        query_start_loc=torch.zeros(R + 1, **i32),
        seq_lens=torch.zeros(R, **i32),
        block_table=torch.randint(0, 10000, (R, cols), **i32),
        token_to_req=torch.full((T,), cases.POISON32, **i32),
        seq_lens_out=torch.full((C,), cases.POISON32, **i32),
        global_seq_lens_out=torch.full((T,), cases.POISON32, **i32),
        block_table_out=torch.full((T, cols), cases.POISON32, **i32),
        decode_lens_out=torch.full((T,), cases.POISON32, **i32),
        req_indices_out=torch.full((T,), cases.POISON32, **i32),
        per_req_lens_out=torch.full((R,), cases.POISON32, **i32),
        positions=torch.full((T,), cases.POISON64, **i64),
        slot_mapping=torch.full((C,), cases.POISON64, **i64),
        error_word=torch.zeros(1, **i32),
    )
    qsl = bufs.pop("query_start_loc")
    plan = attnmeta.StepPlan(qsl, block_size=block_size, **bufs, **extra)
    bufs["query_start_loc"] = qsl
    return plan, bufs


def _expect(bufs, case, products=cases.ALL_PRODUCTS, flags=0, token_map_out=None):
    torch.cuda.synchronize()
    want = reference.step(case)
    T, R, C, cols = case.T, case.R, case.C, case.cols
    for name in products:
        got = bufs[name].cpu()
        if name == "block_table_out":
            assert got[:T, :cols].tolist() == want[name], name
        elif name in ("seq_lens_out", "slot_mapping"):
            assert got[:C].tolist() == want[name], name
        elif name == "per_req_lens_out":
            assert got[:R].tolist() == want[name], name
        else:
            assert got[:T].tolist() == want[name], name
    assert int(bufs["error_word"].item()) == flags
    if token_map_out is not None:
        assert token_map_out.cpu()[:T].tolist() == reference.token_map(case.qsl, R, -1, T)


def test_side_stream_and_handles(attnmeta):
    R, T, C, cols, bs = 3, 8, 10, 6, 16
    plan, bufs = _full_plan(attnmeta, R, T, C, cols, bs)
    table = bufs["block_table"].cpu().tolist()
    side = torch.cuda.Stream()
    for stream in (side, side.cuda_stream):
        for name in ("positions", "slot_mapping"):
            bufs[name].fill_(cases.POISON64)
        with torch.cuda.stream(side):
            bufs["query_start_loc"].copy_(torch.tensor([0, 2, 5, 6], dtype=torch.int32))
            bufs["seq_lens"].copy_(torch.tensor([9, 40, 70], dtype=torch.int32))
        torch.cuda.current_stream().wait_stream(side)
        plan.build(R, T, stream=stream)
        side.synchronize()
        _expect(bufs, cases.Case("side", [0, 2, 5, 6], T, C, [9, 40, 70], cols, cols, table,
                                 block_size=bs))
    # The current stream inside a `with torch.cuda.stream(...)` block is the default choice.
    with torch.cuda.stream(side):
        plan.build(R, T)
    side.synchronize()


def test_no_sync_and_no_allocation(attnmeta):
    R, T, C, cols = 4, 16, 20, 8
    plan, bufs = _full_plan(attnmeta, R, T, C, cols, 4)
    out = torch.zeros(T, dtype=torch.int32, device=DEVICE)
    plan.build(R, T)  # warm: module loaded, context open
    attnmeta.compute_token_to_req_indices(bufs["query_start_loc"], out, -1, T)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(10):
            plan.build(R, T)
            attnmeta.compute_token_to_req_indices(bufs["query_start_loc"], out, -1, T)
            attnmeta.token_to_req(bufs["query_start_loc"], out, T, num_mapped=3)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert torch.cuda.memory_allocated() == before


# ---- graph capture ----


SPLITS = [
    # (qsl, seq_lens) with R = 4, T = 16: the contents change, the sizes do not.
    ([0, 4, 8, 12, 16], [20, 9, 64, 4]),    # full
    ([0, 1, 2, 3, 16], [20, 9, 64, 40]),    # same total, different split
    ([0, 7, 7, 9, 16], [30, 30, 30, 30]),   # same total, a zero-length request
    ([0, 2, 4, 5, 7], [5, 6, 7, 8]),        # smaller total: 9 padding tokens
    ([0, 0, 3, 3, 5], [1, 90, 2, 77]),      # zero-length requests inserted, smaller total
    ([0, 0, 0, 0, 0], [0, 0, 0, 0]),        # nothing real
    ([0, 16, 16, 16, 16], [200, 0, 0, 0]),  # one long request
]


@pytest.mark.parametrize("W,k,I", [(1, 0, 1), (2, 1, 1), (4, 2, 2)])
def test_graph_capture_full_step(attnmeta, W, k, I):
    R, T, C, cols, bs = 4, 16, 24, 64, 16
    plan, bufs = _full_plan(attnmeta, R, T, C, cols, bs, dcp_world_size=W, dcp_rank=k,
                            dcp_interleave=I)
    token_map = torch.full((T,), cases.POISON32, dtype=torch.int32, device=DEVICE)
    qsl = bufs["query_start_loc"]
    table = bufs["block_table"].cpu().tolist()

    def step():
        plan.build(R, T)
        attnmeta.compute_token_to_req_indices(qsl, token_map, -1, T)

    # Warm up on a side stream (module and context are ready before capture).
    qsl.copy_(torch.tensor(SPLITS[0][0], dtype=torch.int32))
    bufs["seq_lens"].copy_(torch.tensor(SPLITS[0][1], dtype=torch.int32))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    for q, s in SPLITS:
        qsl.copy_(torch.tensor(q, dtype=torch.int32))
        bufs["seq_lens"].copy_(torch.tensor(s, dtype=torch.int32))
        for name in ("token_to_req", "positions", "slot_mapping", "seq_lens_out"):
            bufs[name].fill_(cases.POISON64 if name in cases.INT64_PRODUCTS else cases.POISON32)
        token_map.fill_(cases.POISON32)
        graph.replay()
        case = cases.Case("graph", q, T, C, s, cols, cols, table, block_size=bs, W=W, k=k, I=I)
        _expect(bufs, case, token_map_out=token_map)


def test_graph_capture_many_steps_back_to_back(attnmeta):
    """Several plans of different sizes in one graph, as an engine captures
    one graph per padded batch size."""
    plans = []
    for R, T in ((1, 1), (4, 8), (8, 32)):
        plan, bufs = _full_plan(attnmeta, R, T, T + 4, 16, 1)
        q = [0] + [min(T, (r + 1) * (T // R)) for r in range(R)]
        bufs["query_start_loc"].copy_(torch.tensor(q, dtype=torch.int32))
        bufs["seq_lens"].copy_(torch.tensor([16] * R, dtype=torch.int32))
        plans.append((plan, bufs, R, T, q))
    for plan, _, R, T, _ in plans:
        plan.build(R, T)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for plan, _, R, T, _ in plans:
            plan.build(R, T)
    for plan, bufs, R, T, q in plans:
        bufs["decode_lens_out"].fill_(0)
    graph.replay()
    for plan, bufs, R, T, q in plans:
        case = cases.Case("multi", q, T, T + 4, [16] * R, 16, 16, bufs["block_table"].cpu().tolist(),
                          block_size=1)
        _expect(bufs, case)


# ---- errors that only torch on a GPU can make ----


def test_device_mismatch(attnmeta):
    qsl = torch.tensor([0, 1], dtype=torch.int32, device=DEVICE)
    with pytest.raises(ValueError, match="out is on the host .* but query_start_loc is on"):
        attnmeta.token_to_req(qsl, torch.zeros(1, dtype=torch.int32))
    with pytest.raises(ValueError, match="seq_lens_out is on the host"):
        attnmeta.build_step(qsl, 1, seq_lens=qsl[:1], seq_lens_out=torch.zeros(1, dtype=torch.int32))
    cpu_ctx = attnmeta.get_context(attnmeta.Backend.CPU, 0)
    with pytest.raises(ValueError, match="context is on the host"):
        attnmeta.StepPlan(qsl, decode_lens_out=torch.zeros(1, dtype=torch.int32, device=DEVICE),
                          context=cpu_ctx)


def test_stream_argument_errors(attnmeta):
    qsl = torch.tensor([0, 1], dtype=torch.int32, device=DEVICE)
    out = torch.zeros(1, dtype=torch.int32, device=DEVICE)
    with pytest.raises(TypeError, match="stream must be None, an int handle or a torch.cuda.Stream"):
        attnmeta.token_to_req(qsl, out, stream="fast")
    plan = attnmeta.StepPlan(qsl, token_to_req=out)
    with pytest.raises(TypeError, match="stream must be"):
        plan.build(1, 1, stream=1.5)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_second_gpu_keeps_current_device(attnmeta):
    torch.cuda.set_device(0)
    dev1 = torch.device("cuda", 1)
    qsl = torch.tensor([0, 2, 3], dtype=torch.int32, device=dev1)
    out = torch.full((4,), -1, dtype=torch.int32, device=dev1)
    attnmeta.token_to_req(qsl, out)
    plan = attnmeta.StepPlan(qsl, req_indices_out=out)
    plan.build(2, 4)
    assert torch.cuda.current_device() == 0
    assert out.cpu().tolist() == [0, 0, 1, 2]
    with pytest.raises(ValueError, match="stream belongs to device 0"):
        plan.build(2, 4, stream=torch.cuda.Stream(device=0))
    with pytest.raises(ValueError, match="on (cuda|hip) device 0"):
        attnmeta.token_to_req(qsl, torch.zeros(4, dtype=torch.int32, device="cuda:0"))
