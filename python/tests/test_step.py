# SPDX-License-Identifier: Apache-2.0
"""The one-launch step (contract sections 2-4) through the binding, NumPy on
the CPU backend, against the naive reference: every product, poisoned
outputs and guard zones around every buffer."""

import numpy as np
import pytest

import cases
import reference
from conftest import CPU_CONFIGS

CASES = cases.well_formed_cases()
ARRAYS = cases.NumpyArrays()


def _run_and_check(case, products=cases.ALL_PRODUCTS, **kw):
    preset = kw.get("error_word", True)
    got = cases.run_case(case, ARRAYS, products, **kw)
    problems = cases.check_case(case, got, products,
                                preset_flags=0 if preset is True else preset)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("api", ["plan", "function", "indexer"])
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_every_product(case, api):
    _run_and_check(case, api=api)


@pytest.mark.parametrize("config", [c for c in CPU_CONFIGS if c != "auto"])
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_every_product_launch_shapes(case, config, cpu_contexts):
    _run_and_check(case, context=cpu_contexts[config])


@pytest.mark.parametrize("product", cases.ALL_PRODUCTS)
@pytest.mark.parametrize("case", [c for c in CASES if not c.name.startswith("random")][:12] +
                         CASES[-4:], ids=repr)
def test_single_product(case, product):
    _run_and_check(case, products=(product,))


@pytest.mark.parametrize("product", ["token_to_req", "decode_lens_out", "req_indices_out",
                                     "per_req_lens_out"])
def test_products_that_need_no_seq_lens_or_table(attnmeta, product):
    case = cases.make("plain", [2, 0, 3], pad=2, ctx=[1, 2, 3])
    qsl = np.array(case.qsl, np.int32)
    n = case.R if product == "per_req_lens_out" else case.T
    out = np.full(n + 1, cases.POISON32, np.int32)
    attnmeta.build_step(qsl, case.T, **{product: out})
    assert out[:n].tolist() == reference.step(case)[product]
    assert out[n] == cases.POISON32


@pytest.mark.parametrize("W,k,I", [(1, 0, 1), (2, 0, 1), (2, 1, 1), (4, 2, 2), (3, 2, 16)])
@pytest.mark.parametrize("block_size", [1, 16, 64])
def test_slots_block_sizes(W, k, I, block_size):
    case = cases.make("slots_bs%d_w%d" % (block_size, W), [1, 5, 0, 3, 2], pad=3, cap_extra=2,
                      ctx=[0, 17, 4, 130, 255], block_size=block_size, W=W, k=k, I=I, seed=block_size)
    _run_and_check(case, products=("positions", "slot_mapping", "seq_lens_out",
                                   "global_seq_lens_out"))


def test_dcp_contract_example(attnmeta):
    """W = 2, k = 1, I = 1: global lengths [8, 9, 10] -> local [4, 4, 5]."""
    qsl = np.array([0, 1, 2, 3], np.int32)
    seq_lens = np.array([8, 9, 10], np.int32)
    local = np.zeros(3, np.int32)
    glob = np.zeros(3, np.int32)
    attnmeta.build_step(qsl, 3, seq_lens=seq_lens, seq_lens_out=local, global_seq_lens_out=glob,
                        dcp_world_size=2, dcp_rank=1, dcp_interleave=1)
    assert glob.tolist() == [8, 9, 10]
    assert local.tolist() == [4, 4, 5]


def test_reference_dcp_formula_counts_tokens():
    for W in (1, 2, 3, 4):
        for I in (1, 2, 3, 16):
            for k in range(W):
                for L in range(0, 100):
                    assert reference.dcp_local(L, W, k, I) == reference.dcp_local_by_counting(L, W, k, I)


@pytest.mark.parametrize("config", list(CPU_CONFIGS))
@pytest.mark.parametrize("case,flags", cases.hostile_cases(), ids=lambda v: repr(v) if isinstance(v, cases.Case) else "")
def test_hostile_data_flags_and_bounds(case, flags, config, cpu_contexts):
    got = cases.run_case(case, ARRAYS, context=cpu_contexts[config])
    problems = cases.check_case(case, got, values=False)
    assert not problems, "\n".join(problems)
    word = int(got["error_word"][cases.GUARD])
    assert word & flags == flags, "flags 0x%x, expected at least 0x%x" % (word, flags)


def test_actual_past_num_tokens_is_clamped():
    """qsl[R] > T: the device total is clamped to T, every token is valid."""
    case = cases.Case("total_past_T", [0, 3, 9], 5, 7, [10, 10], 10, hostile=False)
    got = cases.run_case(case, ARRAYS)
    problems = [p for p in cases.check_case(case, got) if not p.startswith("error_word")]
    assert not problems, "\n".join(problems)
    assert int(got["error_word"][cases.GUARD]) == reference.FLAG_TOTAL_OUT_OF_RANGE


def test_error_word_keeps_earlier_flags():
    case = cases.hostile_cases()[0][0]
    preset = 1 << 30
    got = cases.run_case(case, ARRAYS, error_word=preset)
    word = int(got["error_word"][cases.GUARD])
    assert word & preset and word & reference.FLAG_QSL_FIRST_NONZERO


def test_clean_data_raises_no_flag(attnmeta):
    word = np.zeros(1, np.int32)
    qsl = np.array([0, 2, 3], np.int32)
    attnmeta.build_step(qsl, 4, seq_lens=np.array([5, 9], np.int32), error_word=word,
                        positions=np.zeros(4, np.int64))
    assert word[0] == 0
    assert attnmeta.describe_error_flags(int(word[0])) == "no error"


def _plan_buffers(R, T, C, cols):
    return dict(
        token_to_req=np.full(T, cases.POISON32, np.int32),
        seq_lens_out=np.full(C, cases.POISON32, np.int32),
        global_seq_lens_out=np.full(T, cases.POISON32, np.int32),
        block_table_out=np.full((T, cols), cases.POISON32, np.int32),
        decode_lens_out=np.full(T, cases.POISON32, np.int32),
        req_indices_out=np.full(T, cases.POISON32, np.int32),
        per_req_lens_out=np.full(R, cases.POISON32, np.int32),
        positions=np.full(T, cases.POISON64, np.int64),
        slot_mapping=np.full(C, cases.POISON64, np.int64),
        error_word=np.zeros(1, np.int32),
    )


def _expect_plan(plan, case):
    want = reference.step(case)
    b = plan.buffers
    T, R, C = case.T, case.R, case.C
    for name in ("token_to_req", "global_seq_lens_out", "decode_lens_out", "req_indices_out",
                 "positions"):
        assert b[name][:T].tolist() == want[name], name
    assert b["seq_lens_out"][:C].tolist() == want["seq_lens_out"]
    assert b["slot_mapping"][:C].tolist() == want["slot_mapping"]
    assert b["per_req_lens_out"][:R].tolist() == want["per_req_lens_out"]
    assert b["block_table_out"][:T, :case.cols].tolist() == want["block_table_out"]
    assert b["error_word"][0] == 0


def test_plan_replays_with_new_contents(attnmeta):
    """The graph pattern on the CPU: one plan, sizes fixed, the contents of
    qsl / seq_lens changed in place between builds (same total, different
    split; smaller total; zero-length requests inserted)."""
    R, T, C, cols, bs = 4, 12, 16, 8, 4
    qsl = np.zeros(R + 1, np.int32)
    seq_lens = np.zeros(R, np.int32)
    table = np.arange(R * cols, dtype=np.int32).reshape(R, cols) + 100
    bufs = _plan_buffers(R, T, C, cols)
    plan = attnmeta.StepPlan(qsl, seq_lens=seq_lens, block_table=table, block_size=bs, **bufs)
    assert plan.capacity == C and plan.max_reqs == R and plan.max_tokens == T
    splits = [
        ([0, 3, 6, 9, 12], [10, 6, 20, 3]),   # full
        ([0, 1, 2, 10, 12], [10, 6, 20, 3]),  # same total, different split
        ([0, 2, 4, 5, 7], [9, 9, 9, 9]),      # smaller total: padding tokens
        ([0, 0, 4, 4, 6], [1, 5, 2, 7]),      # zero-length requests inserted
        ([0, 0, 0, 0, 0], [0, 0, 0, 0]),      # nothing real
    ]
    for q, s in splits:
        qsl[:] = q
        seq_lens[:] = s
        plan.build(R, T)
        case = cases.Case("replay", q, T, C, s, cols, cols, table.tolist(), block_size=bs)
        _expect_plan(plan, case)


def test_plan_smaller_steps_clear_the_tail(attnmeta):
    R, T, C, cols = 3, 9, 12, 4
    qsl = np.array([0, 3, 6, 9], np.int32)
    seq_lens = np.array([30, 31, 32], np.int32)
    table = np.arange(R * cols, dtype=np.int32).reshape(R, cols)
    bufs = _plan_buffers(R, T, C, cols)
    plan = attnmeta.StepPlan(qsl, seq_lens=seq_lens, block_table=table, block_size=1, **bufs)
    plan.build(3, 9)
    qsl[:3] = [0, 1, 2]
    plan.build(2, 4)
    want = reference.step(cases.Case("small", [0, 1, 2], 4, C, [30, 31], cols, cols,
                                     table[:2].tolist()))
    assert bufs["seq_lens_out"].tolist() == want["seq_lens_out"]
    assert bufs["slot_mapping"].tolist() == want["slot_mapping"]
    assert bufs["per_req_lens_out"][:2].tolist() == [1, 1]


def test_plan_num_mapped_override(attnmeta):
    qsl = np.array([0, 2, 5], np.int32)
    out = np.full(6, cases.POISON32, np.int32)
    plan = attnmeta.StepPlan(qsl, token_to_req=out, num_mapped=-1)
    plan.build(2, 6, num_mapped=3)
    assert out.tolist() == [0, 0, 1, 0, 0, 0]
    plan.build(2, 6)
    assert out.tolist() == [0, 0, 1, 1, 1, 0]
    plan(2, 6, num_mapped=0)
    assert out.tolist() == [0] * 6


def test_plan_capacity_follows_tokens_without_capacity_outputs(attnmeta):
    qsl = np.array([0, 1, 2], np.int32)
    dec = np.full(8, cases.POISON32, np.int32)
    plan = attnmeta.StepPlan(qsl, decode_lens_out=dec)
    assert plan.capacity is None and plan.max_tokens == 8
    plan.build(2, 5)
    assert dec.tolist() == [1] * 5 + [cases.POISON32] * 3


def test_plan_replace(attnmeta):
    qsl = np.array([0, 1, 3], np.int32)
    a = np.full(3, cases.POISON32, np.int32)
    b = np.full(5, cases.POISON32, np.int32)
    plan = attnmeta.StepPlan(qsl, req_indices_out=a)
    plan.build(2, 3)
    assert a.tolist() == [0, 1, 1]
    plan.replace(req_indices_out=b)
    assert plan.req_indices_out is b and plan.max_tokens == 5
    plan.build(2, 5)
    assert b.tolist() == [0, 1, 1, 2, 3]
    with pytest.raises(TypeError, match="unknown"):
        plan.replace(not_an_argument=1)
    with pytest.raises(TypeError, match="req_indices_out"):
        plan.replace(req_indices_out=[0, 0])


def test_plan_views_and_attributes(attnmeta):
    R, T, C, cols = 2, 5, 7, 3
    qsl = np.array([0, 2, 3], np.int32)
    seq_lens = np.array([4, 6], np.int32)
    table = np.ones((R, cols), np.int32)
    bufs = _plan_buffers(R, T, C, cols)
    meta = attnmeta.IndexerDecodeMetadata(
        qsl, seq_lens, table, seq_lens_out=bufs["seq_lens_out"],
        block_table_out=bufs["block_table_out"], decode_lens_out=bufs["decode_lens_out"],
        req_indices_out=bufs["req_indices_out"], per_req_lens_out=bufs["per_req_lens_out"])
    meta.build(2, 4)
    views = meta.views(2, 4)
    assert views["seq_lens_out"].tolist() == [3, 4, 6, 0]
    assert views["per_req_lens_out"].tolist() == [2, 1]
    assert views["block_table_out"].shape == (4, cols)
    assert meta.seq_lens_out is bufs["seq_lens_out"]
    assert meta.positions is None
    assert meta.backend == attnmeta.Backend.CPU and meta.device == 0
    assert "seq_lens_out" in repr(meta)
    with pytest.raises(AttributeError):
        meta.not_an_attribute


def test_plan_keeps_buffers_alive(attnmeta):
    import gc
    import weakref

    qsl = np.array([0, 2], np.int32)
    out = np.zeros(2, np.int32)
    ref = weakref.ref(out)
    plan = attnmeta.StepPlan(qsl, decode_lens_out=out)
    del out
    gc.collect()
    assert ref() is not None
    plan.build(1, 2)
    assert ref().tolist() == [1, 1]


def test_context_argument_and_launch_config(attnmeta):
    ctx = attnmeta.Context(attnmeta.Backend.CPU, 0)
    ctx.set_launch_config(grid=4, stage=1)
    case = cases.make("ctx", [3, 0, 2, 1], pad=2, cap_extra=1, ctx=[4, 5, 6, 7], block_size=2)
    _run_and_check(case, context=ctx)
    ctx.reset_launch_config()
    _run_and_check(case, context=ctx)
    ctx.close()


def test_stream_is_ignored_on_cpu(attnmeta):
    qsl = np.array([0, 1, 2], np.int32)
    out = np.zeros(2, np.int32)
    attnmeta.token_to_req(qsl, out, stream=0)
    attnmeta.build_step(qsl, 2, decode_lens_out=out, stream=12345)
    assert out.tolist() == [1, 1]


def test_many_builds_are_stable(attnmeta):
    """A plan built many times gives the same results (no state kept)."""
    case = cases.make("repeat", [2, 3, 1], pad=2, cap_extra=3, ctx=[10, 20, 30], block_size=16)
    qsl = np.array(case.qsl, np.int32)
    table = np.array(case.table, np.int32)
    bufs = _plan_buffers(case.R, case.T, case.C, case.cols)
    plan = attnmeta.StepPlan(qsl, seq_lens=np.array(case.seq_lens, np.int32), block_table=table,
                             block_size=16, **bufs)
    for _ in range(200):
        plan.build(case.R, case.T)
    _expect_plan(plan, case)
