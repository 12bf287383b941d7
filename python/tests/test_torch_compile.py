# SPDX-License-Identifier: Apache-2.0
"""The torch custom operators (attnmeta.ops) and torch.compile: each
operator passes torch.library.opcheck (schema, fake implementation,
mutation declared), and the package's own entry points compile with
fullgraph=True (no graph break) and give the reference's results, on the
GPU when torch sees one, else on torch CPU tensors. Eager calls stay the
direct ctypes call. Skipped without torch >= 2.4."""

import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("torch %s has no torch.library.custom_op (2.4+)" % torch.__version__,
                allow_module_level=True)

import reference  # noqa: E402

DEVICE = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
QSL = [0, 2, 3, 6]
SEQ = [5, 1, 3]
T, COLS, BS = 8, 3, 2


def i32(values):
    return torch.tensor(values, dtype=torch.int32, device=DEVICE)


def poisoned(n, dtype=torch.int32, cols=None):
    shape = (n,) if cols is None else (n, cols)
    return torch.full(shape, -7, dtype=dtype, device=DEVICE)


@pytest.fixture(scope="module")
def ops(attnmeta):
    import attnmeta.ops as module

    return module


def _table():
    return i32([[10, 11, 12], [20, 21, 22], [30, 31, 32]])


def test_opcheck_token_to_req_indices(ops):
    torch.library.opcheck(torch.ops.attnmeta.token_to_req_indices.default,
                          (i32(QSL), poisoned(T), -1, T))


def _step_outputs():
    """Every output of the step's operator but global_seq_lens_out, by name."""
    return dict(token_to_req=poisoned(T), seq_lens_out=poisoned(T),
                block_table_out=poisoned(T, cols=COLS), decode_lens_out=poisoned(T),
                req_indices_out=poisoned(T), per_req_lens_out=poisoned(3),
                positions=poisoned(T, torch.int64), slot_mapping=poisoned(T, torch.int64),
                error_word=torch.zeros(1, dtype=torch.int32, device=DEVICE))


def test_opcheck_build_step(ops):
    outputs = _step_outputs()
    args = ([i32(QSL), i32(SEQ), _table()] + [outputs.get(name) for name in ops.OUTPUTS]
            + [3, T, T, -1, BS, 1, 0, 1])
    torch.library.opcheck(torch.ops.attnmeta.build_step.default, tuple(args))


def test_compiled_token_map(attnmeta, ops):
    @torch.compile(fullgraph=True)
    def step(qsl, out):
        return attnmeta.compute_token_to_req_indices(qsl, out, -1, T) + 0

    qsl, out = i32(QSL), poisoned(T)
    got = step(qsl, out)
    assert got.tolist() == reference.token_map(QSL, 3, -1, T)
    assert out.tolist() == got.tolist()  # the in-place write reached the caller's buffer
    qsl2 = i32([0, 1, 4, 5])  # same shapes: no recompilation needed, new contents
    assert step(qsl2, out).tolist() == reference.token_map([0, 1, 4, 5], 3, -1, T)


def test_compiled_build_step(attnmeta, ops):
    @torch.compile(fullgraph=True)
    def step(qsl, seq, table, tok, pos, slots):
        attnmeta.build_step(qsl, T, seq_lens=seq, block_table=table, token_to_req=tok,
                            positions=pos, slot_mapping=slots, block_size=BS)
        return slots * 1

    tok, pos, slots = poisoned(T), poisoned(T, torch.int64), poisoned(T, torch.int64)
    got = step(i32(QSL), i32(SEQ), _table(), tok, pos, slots)
    positions = [3, 4, 0, 0, 1, 2]
    rows = [0, 0, 1, 2, 2, 2]
    table = [[10, 11, 12], [20, 21, 22], [30, 31, 32]]
    want = [table[r][p // BS] * BS + p % BS for r, p in zip(rows, positions)] + [-1, -1]
    assert got.tolist() == want and slots.tolist() == want
    assert tok.tolist() == reference.token_map(QSL, 3, -1, T)
    assert pos.tolist() == positions + [0, 0]


def test_compiled_plan_build(attnmeta, ops):
    """A prepared IndexerDecodeMetadata built inside a compiled function."""
    seq_out, table_out = poisoned(T), poisoned(T, cols=COLS)
    dec, req_idx, per_req = poisoned(T), poisoned(T), poisoned(3)
    qsl, seq = i32(QSL), i32(SEQ)
    meta = attnmeta.IndexerDecodeMetadata(qsl, seq, _table(), seq_lens_out=seq_out,
                                          block_table_out=table_out, decode_lens_out=dec,
                                          req_indices_out=req_idx, per_req_lens_out=per_req)

    @torch.compile(fullgraph=True)
    def step(qsl, seq):
        meta.build(3, T)
        return per_req + 0

    assert step(qsl, seq).tolist() == [2, 1, 3]
    assert req_idx.tolist() == [0, 0, 1, 2, 2, 2, 3, 4]
    assert dec.tolist() == [1] * T
    assert seq_out.tolist() == [4, 5, 1, 1, 2, 3, 0, 0]


def test_eager_calls_stay_direct(attnmeta, ops, monkeypatch):
    """Outside torch.compile the functions never touch the operators."""
    from attnmeta import _compile

    class Refuse:
        def __getattr__(self, name):
            raise AssertionError("eager call went through attnmeta.ops.%s" % name)

    monkeypatch.setattr(_compile, "ops_module", Refuse())
    out = poisoned(T)
    attnmeta.compute_token_to_req_indices(i32(QSL), out, -1, T)
    attnmeta.build_step(i32(QSL), T, token_to_req=out)
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()
    assert out.tolist() == reference.token_map(QSL, 3, -1, T)


# The DeepSeek-V4 products: positions [3, 4, 0, 0, 1, 2] of requests
# [0, 0, 1, 2, 2, 2]; a window of 4 sees min(pos + 1, 4) positions; a
# ratio-2 group (2 rows a block) gives the token that completes a row its
# slot, table[r][(pos // 2) // 2] * 2 + (pos // 2) % 2.
SWA_LENS = [4, 4, 1, 1, 2, 3, 0, 0]
GROUP_SLOTS = [21, -1, -1, -1, 60, -1, -1, -1]
GROUP_LENS = [2, 0, 1]


def _dsv4_buffers():
    return dict(swa_lens=poisoned(T), slots=poisoned(T, torch.int64), lens=poisoned(3),
                c128a_lens=poisoned(T), indexer_lens=poisoned(T))


def _dsv4_plan(attnmeta, b):
    return attnmeta.StepPlan(
        i32(QSL), seq_lens=i32(SEQ), block_table=_table(),
        compressed_groups=[dict(block_table=_table(), ratio=2, block_size=2,
                                slot_mapping=b["slots"], seq_lens_out=b["lens"])],
        swa_lens=b["swa_lens"], swa_window=4, swa_width=4, swa_block_table=_table(),
        swa_block_size=BS, c128a_lens=b["c128a_lens"], c128a_block_table=_table(),
        c128a_ratio=2, c128a_block_size=2, c128a_width=2, indexer_lens_out=b["indexer_lens"],
        indexer_ratio=2)


def _expect_dsv4(b):
    assert b["swa_lens"].tolist() == SWA_LENS
    assert b["slots"].tolist() == GROUP_SLOTS
    assert b["lens"].tolist() == GROUP_LENS
    # C128A of ratio 2, width 2: min((pos + 1) // 2, 2) rows
    assert b["c128a_lens"].tolist() == [2, 2, 0, 0, 1, 1, 0, 0]
    # the indexer's lengths, ratio 2: (pos + 1) // 2
    assert b["indexer_lens"].tolist() == [2, 2, 0, 0, 1, 1, 0, 0]


def test_opcheck_build_dsv4_step(ops):
    b = _dsv4_buffers()
    # the operator's arguments by name; the settings left out take the
    # operator's "not given" (-1, or the setting's default)
    values = dict(
        query_start_loc=i32(QSL), seq_lens=i32(SEQ), block_table=_table(),
        g0_slot_mapping=b["slots"], g0_seq_lens_out=b["lens"], g0_block_table=_table(),
        swa_lens=b["swa_lens"], swa_block_table=_table(), c128a_lens=b["c128a_lens"],
        c128a_block_table=_table(), indexer_lens_out=b["indexer_lens"],
        num_reqs=3, num_tokens=T, capacity=-1, num_mapped=-1, block_size=0, dcp_world_size=1,
        dcp_rank=0, dcp_interleave=1, num_groups=1, group_ratios=[2, 0, 0, 0],
        group_block_sizes=[2, 0, 0, 0], swa_block_size=BS, swa_window=4, swa_width=4,
        swa_causal=True, c128a_ratio=2, c128a_block_size=2, c128a_width=2, c128a_local=False,
        indexer_ratio=2, indexer_prefill=False)
    for name, default in ops._DSV4_SCALARS.items():
        values.setdefault(name, -1 if default is None else default)
    args = tuple(values.get(name) for name in ops._DSV4_NAMES)
    torch.library.opcheck(torch.ops.attnmeta.build_dsv4_step.default, args)


def test_compiled_plan_with_dsv4_products(attnmeta, ops):
    """A StepPlan with compressed groups, SWA and C128A products built
    inside torch.compile(fullgraph=True): one operator, the same results."""
    b = _dsv4_buffers()
    plan = _dsv4_plan(attnmeta, b)

    @torch.compile(fullgraph=True)
    def step(qsl):
        plan.build(3, T)
        return qsl + 0

    step(i32(QSL))
    _expect_dsv4(b)


def test_compiled_build_step_with_dsv4_products(attnmeta, ops):
    b = _dsv4_buffers()

    @torch.compile(fullgraph=True)
    def step(qsl, seq, table):
        attnmeta.build_step(
            qsl, T, seq_lens=seq, block_table=table,
            compressed_groups=[dict(block_table=table, ratio=2, block_size=2,
                                    slot_mapping=b["slots"], seq_lens_out=b["lens"])],
            swa_lens=b["swa_lens"], swa_window=4, swa_width=4, swa_block_table=table,
            swa_block_size=BS, c128a_lens=b["c128a_lens"], c128a_block_table=table,
            c128a_ratio=2, c128a_block_size=2, c128a_width=2,
            indexer_lens_out=b["indexer_lens"], indexer_ratio=2)
        return b["slots"] * 1

    got = step(i32(QSL), i32(SEQ), _table())
    assert got.tolist() == GROUP_SLOTS
    _expect_dsv4(b)


def test_compiled_dsv4_dropin(attnmeta, ops):
    """The drop-in builds a StepPlan; inside torch.compile it becomes the operator."""
    out = poisoned(T, torch.int64)

    @torch.compile(fullgraph=True)
    def step(qsl, seq, table):
        return attnmeta.get_compressed_slot_mapping(T, qsl, seq, table, 2, 2, out=out) * 1

    got = step(i32(QSL), i32(SEQ), _table())
    assert got.tolist() == GROUP_SLOTS
    assert out.tolist() == GROUP_SLOTS


# Top-k: tokens of requests 0 and 2, block size 2: x -> table[r][x // 2] * 2 + x % 2.
TOPK = [[0, 3, 5, -1], [1, 2, -1, 4]]
TOPK_WANT = [[20, 23, 25, -1], [61, 62, -1, 64]]


def test_opcheck_convert_topk(ops):
    args = (i32(TOPK), _table(), poisoned(2, cols=4), poisoned(2),
            torch.zeros(1, dtype=torch.int32, device=DEVICE), i32([0, 2]), None, None, None,
            None, -1, False, 2, -1, 1, 0, 1, 0)
    torch.library.opcheck(torch.ops.attnmeta.convert_topk.default, args)


def test_compiled_convert_topk(attnmeta, ops):
    out, counts = poisoned(2, cols=4), poisoned(2)

    @torch.compile(fullgraph=True)
    def layer(indices, table, req):
        ops.convert_topk(indices, table, out, req_id=req, valid_counts=counts, block_size=2)
        return out * 1

    got = layer(i32(TOPK), _table(), i32([0, 2]))
    assert got.tolist() == TOPK_WANT
    assert counts.tolist() == [3, 3]


def test_compiled_topk_plan(attnmeta, ops):
    """A TopkPlan converted inside torch.compile: the operator."""
    out, counts = poisoned(2, cols=4), poisoned(2)
    plan = attnmeta.TopkPlan(i32(TOPK), _table(), out, req_id=i32([0, 2]), valid_counts=counts,
                             block_size=2)

    @torch.compile(fullgraph=True)
    def layer(x):
        plan.convert()
        return x + 0

    layer(i32([1]))
    assert out.tolist() == TOPK_WANT and counts.tolist() == [3, 3]
