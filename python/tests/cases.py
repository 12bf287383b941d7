# SPDX-License-Identifier: Apache-2.0
"""The cases the tests run on every array kind (NumPy on the CPU backend,
torch on CPU and CUDA), and a harness that runs one case through the
binding with poisoned outputs and guard zones around every buffer, then
compares with the reference."""

import random

import numpy as np

import reference

POISON32 = 0x5EADBEEF - 2**32 if 0x5EADBEEF >= 2**31 else 0x5EADBEEF
POISON64 = -0x0123456789ABCDEF
GUARD32 = 0x6A6A6A6A
GUARD64 = 0x6A6A6A6A6A6A6A6A
GUARD = 16  # guard elements on each side of every buffer

ALL_PRODUCTS = (
    "token_to_req",
    "seq_lens_out",
    "global_seq_lens_out",
    "block_table_out",
    "decode_lens_out",
    "req_indices_out",
    "per_req_lens_out",
    "positions",
    "slot_mapping",
)
INT64_PRODUCTS = ("positions", "slot_mapping")


class Case:
    """One step's inputs. `table` has R rows of `stride` entries, the first
    `cols` of each used."""

    def __init__(self, name, qsl, T, C=None, seq_lens=None, cols=0, stride=None, table=None,
                 num_mapped=-1, block_size=1, W=1, k=0, I=1, extra_qsl=0, hostile=False):
        self.name = name
        self.qsl = list(qsl)
        self.R = len(qsl) - 1
        self.T = T
        self.C = T if C is None else C
        self.seq_lens = None if seq_lens is None else list(seq_lens)
        self.cols = cols
        self.stride = cols if stride is None else stride
        if table is None:
            table = [[(r + 1) * 1000 + c for c in range(self.stride)] for r in range(self.R)]
        self.table = [list(row) + [0] * (self.stride - len(row)) for row in table]
        self.num_mapped = num_mapped
        self.block_size = block_size
        self.W, self.k, self.I = W, k, I
        self.extra_qsl = extra_qsl  # trailing qsl entries past R (num_reqs passed explicitly)
        self.hostile = hostile

    def __repr__(self):
        return self.name


def _auto_seq(qsl, ctx):
    return [qsl[r + 1] - qsl[r] + ctx[r] for r in range(len(qsl) - 1)]


def _cols_for(case_seq, block_size, W):
    longest = max(case_seq, default=0)
    return max(1, (longest + block_size * W - 1) // (block_size * W))


def make(name, qlens, pad=0, cap_extra=0, ctx=None, block_size=1, W=1, k=0, I=1, extra_cols=0,
         stride_extra=0, num_mapped=-1, extra_qsl=0, cols=None, seed=0):
    """A well-formed case from query lengths: pad padding tokens, capacity
    cap_extra past T, KV context lengths ctx (default: seeded randoms),
    a block table wide enough for every position."""
    rng = random.Random(seed)
    qsl = [0]
    for n in qlens:
        qsl.append(qsl[-1] + n)
    R = len(qlens)
    if ctx is None:
        ctx = [rng.randrange(0, 300) for _ in range(R)]
    seq = _auto_seq(qsl, ctx)
    if cols is None:
        cols = _cols_for(seq, block_size, W) + extra_cols
    stride = cols + stride_extra
    table = [[rng.randrange(0, 5000) for _ in range(stride)] for _ in range(R)]
    T = qsl[-1] + pad
    return Case(name, qsl, T, T + cap_extra, seq, cols, stride, table, num_mapped, block_size, W,
                k, I, extra_qsl)


def _random_cases(count, seed):
    rng = random.Random(seed)
    out = []
    for i in range(count):
        R = rng.choice([0, 1, 2, 3, 5, 8, 13])
        qlens = [rng.choice([0, 1, 1, 2, 3, 4, 7]) for _ in range(R)]
        W = rng.choice([1, 1, 2, 3])
        out.append(
            make(
                "random%d" % i,
                qlens,
                pad=rng.choice([0, 0, 1, 5]),
                cap_extra=rng.choice([0, 3]),
                block_size=rng.choice([1, 16, 64]),
                W=W,
                k=rng.randrange(W),
                I=rng.choice([1, 1, 2, 4]),
                extra_cols=rng.choice([0, 2]),
                stride_extra=rng.choice([0, 0, 3]),
                num_mapped=rng.choice([-1, -1, 0, 2, 50]),
                extra_qsl=rng.choice([0, 2]),
                seed=seed * 1000 + i,
            )
        )
    return out


def well_formed_cases():
    cases = [
        make("one_token", [1], ctx=[5]),
        make("decode_batch", [1, 1, 1, 1], ctx=[10, 0, 63, 64]),
        make("spec_tokens", [3, 1, 4, 2], ctx=[7, 100, 0, 31]),
        make("padding", [2, 3], pad=6, ctx=[4, 9]),
        make("capacity_tail", [2, 1], pad=2, cap_extra=9, ctx=[3, 3]),
        make("zero_length_first", [0, 2, 3], ctx=[5, 5, 5]),
        make("zero_length_middle", [2, 0, 0, 3], pad=3, ctx=[5, 5, 5, 5]),
        make("zero_length_last", [2, 3, 0], pad=1, ctx=[5, 5, 5]),
        make("all_zero_length", [0, 0, 0], pad=4, ctx=[1, 2, 3]),
        make("no_requests", [], pad=5, cap_extra=2),
        make("no_requests_no_tokens", []),
        make("no_tokens", [0, 0], ctx=[3, 4]),
        make("skewed", [0, 257, 1, 0, 3], pad=3, ctx=[0, 40, 9, 2, 1]),
        make("num_mapped_zero", [2, 2], pad=2, num_mapped=0),
        make("num_mapped_some", [2, 2], pad=2, num_mapped=3),
        make("num_mapped_past_actual", [2, 2], pad=3, num_mapped=6),
        make("num_mapped_past_T", [2, 2], pad=1, num_mapped=100),
        make("longer_qsl", [1, 2], extra_qsl=3, ctx=[4, 4]),
        make("odd_cols", [2, 1], ctx=[40, 60], cols=65),
        make("wide_stride", [1, 3], ctx=[17, 2], stride_extra=7),
        make("extra_cols", [3], ctx=[0], extra_cols=5),
        make("block16", [3, 2, 1], pad=2, ctx=[15, 16, 100], block_size=16),
        make("block64", [4, 1], pad=1, ctx=[63, 200], block_size=64),
        make("block1", [2, 2], ctx=[0, 9], block_size=1),
        make("dcp_w2_k1", [1, 1, 1], ctx=[7, 8, 9], W=2, k=1, I=1),  # global [8, 9, 10]
        make("dcp_w2_k0", [1, 1, 1], ctx=[7, 8, 9], W=2, k=0, I=1),
        make("dcp_w4_i2", [3, 2], pad=2, ctx=[30, 41], W=4, k=3, I=2, block_size=16),
        make("dcp_w3_i4_bs64", [2, 5], ctx=[300, 170], W=3, k=1, I=4, block_size=64),
        make("dcp_w2_i16_bs16", [4, 4], ctx=[70, 33], W=2, k=0, I=16, block_size=16),
    ]
    # The contract's example spelled out: W=2, k=1, I=1, global [8, 9, 10] -> local [4, 4, 5].
    cases.append(Case("dcp_example", [0, 1, 2, 3], 3, 3, [8, 9, 10], 1, 1, [[1], [2], [3]],
                      block_size=16, W=2, k=1, I=1))
    return cases + _random_cases(24, seed=7)


def hostile_cases():
    """Device data the host cannot check: flags raised, nothing out of bounds."""
    F = reference
    return [
        (Case("first_nonzero", [2, 3, 5], 5, 6, [4, 4], 2, hostile=True), F.FLAG_QSL_FIRST_NONZERO),
        (Case("decreasing", [0, 4, 2, 5], 6, 6, [9, 9, 9], 2, hostile=True), F.FLAG_QSL_DECREASING),
        (Case("total_past_T", [0, 3, 9], 5, 7, [10, 10], 3, hostile=True), F.FLAG_TOTAL_OUT_OF_RANGE),
        (Case("total_negative", [0, 2, -4], 4, 4, [5, 5], 2, hostile=True),
         F.FLAG_TOTAL_OUT_OF_RANGE | F.FLAG_QSL_DECREASING),
        (Case("seq_len_negative", [0, 1, 2], 3, 3, [-5, 4], 2, hostile=True),
         F.FLAG_SEQ_LEN_NEGATIVE | F.FLAG_SEQ_LEN_LT_QLEN | F.FLAG_POSITION_NEGATIVE),
        (Case("seq_len_lt_qlen", [0, 3, 4], 4, 4, [1, 9], 3, hostile=True),
         F.FLAG_SEQ_LEN_LT_QLEN | F.FLAG_POSITION_NEGATIVE),
        (Case("position_past_table", [0, 2], 2, 2, [50], 2, block_size=4, hostile=True),
         F.FLAG_BLOCK_OUT_OF_TABLE),
        (Case("negative_block_id", [0, 2], 2, 2, [3], 2, table=[[-7, -8]], block_size=4, hostile=True),
         F.FLAG_BLOCK_ID_NEGATIVE),
        (Case("huge_lengths", [0, 1], 1, 1, [2**31 - 1], 2, block_size=1, hostile=True),
         F.FLAG_BLOCK_OUT_OF_TABLE),
        (Case("huge_qsl", [0, 2**31 - 1, -(2**31)], 3, 3, [5, 5], 1, hostile=True),
         F.FLAG_QSL_DECREASING | F.FLAG_TOTAL_OUT_OF_RANGE),
        (Case("no_requests_first_nonzero", [3], 4, 4, [], 0, hostile=True), F.FLAG_QSL_FIRST_NONZERO),
    ]


# ---------------------------------------------------------------------------
# The harness


class Arrays:
    """How to make and read buffers of one array kind. `alloc` returns
    (base, view): base includes the guard zones; `read` gives NumPy."""

    def alloc(self, n, int64=False):
        raise NotImplementedError

    def alloc_table(self, rows, cols, stride):
        raise NotImplementedError

    def input(self, values, int64=False):
        raise NotImplementedError

    def input_table(self, flat, rows, stride, cols):
        raise NotImplementedError

    def read(self, x):
        raise NotImplementedError


class NumpyArrays(Arrays):
    def alloc(self, n, int64=False):
        dtype = np.int64 if int64 else np.int32
        base = np.full(n + 2 * GUARD, GUARD64 if int64 else GUARD32, dtype)
        view = base[GUARD:GUARD + n]
        view[:] = POISON64 if int64 else POISON32
        return base, view

    def alloc_table(self, rows, cols, stride):
        base = np.full(rows * stride + 2 * GUARD, GUARD32, np.int32)
        view = base[GUARD:GUARD + rows * stride].reshape(rows, stride)
        view[:] = POISON32
        return base, view[:, :cols]

    def input(self, values, int64=False):
        return np.array(values, dtype=np.int64 if int64 else np.int32)

    def input_table(self, flat, rows, stride, cols):
        full = np.array(flat, dtype=np.int32).reshape(rows, stride)
        return full[:, :cols]

    def read(self, x):
        return np.asarray(x)


def run_case(case, arrays, products=ALL_PRODUCTS, api="plan", context=None, error_word=True,
             slack=2):
    """Runs `case` through the binding (api: "plan", "function", "indexer")
    and returns (results as NumPy, guard bases, sizes) for check_case."""
    R, T, C = case.R, case.T, case.C
    qsl = arrays.input(case.qsl + [case.qsl[-1]] * case.extra_qsl)
    seq_lens = arrays.input(case.seq_lens if case.seq_lens is not None else [])
    table_rows = [v for row in case.table for v in row]
    table = arrays.input_table(table_rows, R, case.stride, case.cols)
    bufs, bases = {}, {}
    sizes = {
        "token_to_req": T + slack,
        "seq_lens_out": C + slack,
        "global_seq_lens_out": T + slack,
        "decode_lens_out": T + slack,
        "req_indices_out": T + slack,
        "per_req_lens_out": R + slack,
        "positions": T + slack,
        "slot_mapping": C + slack,
    }
    for name in products:
        if name == "block_table_out":
            base, view = arrays.alloc_table(T + slack, case.cols + 2, case.cols + 5)
        else:
            base, view = arrays.alloc(sizes[name], int64=name in INT64_PRODUCTS)
        bufs[name], bases[name] = view, base
    if error_word:
        base, view = arrays.alloc(1)
        view[0] = 0 if error_word is True else int(error_word)  # an int: bits set beforehand
        bufs["error_word"], bases["error_word"] = view, base
    common = dict(
        seq_lens=seq_lens,
        block_table=table,
        num_mapped=case.num_mapped,
        block_size=case.block_size,
        dcp_world_size=case.W,
        dcp_rank=case.k,
        dcp_interleave=case.I,
        capacity=C if ("seq_lens_out" in products or "slot_mapping" in products) else None,
        context=context,
    )
    if api == "plan":
        plan = _import().StepPlan(qsl, **common, **bufs)
        plan.build(R, T)
    elif api == "function":
        _import().build_step(qsl, T, num_reqs=R, **common, **bufs)
    elif api == "indexer":
        extra = {k: v for k, v in bufs.items() if k not in (
            "seq_lens_out", "block_table_out", "decode_lens_out", "req_indices_out", "per_req_lens_out")}
        common.pop("seq_lens")
        common.pop("block_table")
        plan = _import().IndexerDecodeMetadata(
            qsl, seq_lens, table,
            seq_lens_out=bufs.get("seq_lens_out"),
            block_table_out=bufs.get("block_table_out"),
            decode_lens_out=bufs.get("decode_lens_out"),
            req_indices_out=bufs.get("req_indices_out"),
            per_req_lens_out=bufs.get("per_req_lens_out"),
            **common, **extra)
        plan.build(R, T)
    else:
        raise ValueError(api)
    return {k: arrays.read(v) for k, v in bases.items()}


def _import():
    import attnmeta

    return attnmeta


def check_case(case, got_bases, products=ALL_PRODUCTS, slack=2, values=True, preset_flags=0):
    """Compares the guarded buffers of run_case with the reference: guards
    untouched, written entries equal, entries past what the contract writes
    still poisoned. With values=False (hostile data) only the guards, the
    unwritten entries and the flags are checked."""
    R, T, C, cols = case.R, case.T, case.C, case.cols
    want = reference.step(case, products)
    problems = []
    for name, base in got_bases.items():
        int64 = name in INT64_PRODUCTS
        guard = GUARD64 if int64 else GUARD32
        poison = POISON64 if int64 else POISON32
        if name == "block_table_out":
            stride = cols + 5
            rows = T + slack
            head, tail = base[:GUARD], base[GUARD + rows * stride:]
            body = base[GUARD:GUARD + rows * stride].reshape(rows, stride)
        else:
            head, tail = base[:GUARD], base[-GUARD:]
            body = base[GUARD:-GUARD]
        if (head != guard).any() or (tail != guard).any():
            problems.append("%s: guard zone overwritten" % name)
        if name == "error_word":
            flags = int(body[0]) & 0xFFFFFFFF
            if (flags & want["flags"]) != want["flags"]:
                problems.append("error_word: 0x%x lacks the flags 0x%x" % (flags, want["flags"]))
            if not case.hostile and flags != (want["flags"] | preset_flags):
                problems.append("error_word: 0x%x, expected 0x%x" % (flags, want["flags"] | preset_flags))
            if preset_flags and (flags & preset_flags) != preset_flags:
                problems.append("error_word: preset flags 0x%x were cleared" % preset_flags)
            continue
        if name == "block_table_out":
            written = body[:T, :cols]
            rest = [body[:T, cols:], body[T:]]
            expect = np.array(want[name], dtype=np.int64).reshape(T, cols)
        else:
            n = {"seq_lens_out": C, "slot_mapping": C, "per_req_lens_out": R}.get(name, T)
            written, rest = body[:n], [body[n:]]
            expect = np.array(want[name], dtype=np.int64)
        for part in rest:
            if (part != poison).any():
                problems.append("%s: wrote past the entries the contract names" % name)
        if values or name == "decode_lens_out":
            if written.shape != expect.shape or (written.astype(np.int64) != expect).any():
                problems.append("%s: got %s, expected %s" % (name, written.tolist(), expect.tolist()))
        elif not values and (written == poison).any() and T > 0:
            problems.append("%s: entries left unwritten" % name)
    return problems
