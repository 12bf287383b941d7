# SPDX-License-Identifier: Apache-2.0
"""A naive reference of docs/contract.md in plain Python: loops, Python's
unbounded integers, no NumPy, nothing shared with the library. Slow on
purpose; only for the small cases of the tests."""

INT32_MAX = 2**31 - 1

FLAG_QSL_FIRST_NONZERO = 1 << 0
FLAG_QSL_DECREASING = 1 << 1
FLAG_TOTAL_OUT_OF_RANGE = 1 << 2
FLAG_SEQ_LEN_NEGATIVE = 1 << 3
FLAG_SEQ_LEN_LT_QLEN = 1 << 4
FLAG_BLOCK_OUT_OF_TABLE = 1 << 5
FLAG_BLOCK_ID_NEGATIVE = 1 << 6
FLAG_POSITION_NEGATIVE = 1 << 7


def c_div(a, b):
    """C's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def c_mod(a, b):
    return a - c_div(a, b) * b


def req_of(qsl, R, t):
    """Smallest r in [0, R) with qsl[r + 1] > t, else R - 1."""
    for r in range(R):
        if qsl[r + 1] > t:
            return r
    return R - 1


def token_map(qsl, R, num_mapped, T):
    """Contract section 1: the T entries of the map."""
    actual = qsl[R]
    n = actual if num_mapped < 0 else num_mapped
    limit = min(n, T)
    out = []
    for t in range(T):
        if R > 0 and t < limit:
            out.append(req_of(qsl, R, t))
        else:
            out.append(0)
    return out


def dcp_local(L, W, k, I):
    """Section 2a: the rank-local share of a causal length L."""
    base = ((L // I) // W) * I
    return base + min(max(L - base * W - k * I, 0), I)


def dcp_local_by_counting(L, W, k, I):
    """The same share, by counting the KV tokens of rank k."""
    return sum(1 for i in range(L) if (i // I) % W == k)


def well_formed(case):
    """qsl[0] == 0, non-decreasing, qsl[R] in [0, T]."""
    q, R, T = case.qsl, case.R, case.T
    if q[0] != 0:
        return False
    if any(q[r + 1] < q[r] for r in range(R)):
        return False
    return 0 <= q[R] <= T


def step(case, products=None):
    """Every product of contract sections 1-3 for `case` (an object with qsl,
    R, T, C, seq_lens, table (R rows), cols, num_mapped, block_size, W, k,
    I). Returns a dict: each product's written entries (block_table_out as T
    rows of cols), and 'flags' (bits the error word must show: for slots,
    counted only when slot_mapping is in `products`)."""
    q, R, T, C = case.qsl, case.R, case.T, case.C
    W, k, I, bs, cols = case.W, case.k, case.I, case.block_size, case.cols
    products = products or ()
    total = q[R]
    actual = min(max(total, 0), T) if R > 0 else 0
    out = {
        "token_to_req": token_map(q, R, case.num_mapped, T),
        "seq_lens_out": [],
        "global_seq_lens_out": [],
        "block_table_out": [],
        "decode_lens_out": [],
        "req_indices_out": [],
        "per_req_lens_out": [q[r + 1] - q[r] for r in range(R)],
        "positions": [],
        "slot_mapping": [],
    }
    flags = 0
    if q[0] != 0:
        flags |= FLAG_QSL_FIRST_NONZERO
    for r in range(R):
        if q[r + 1] < q[r]:
            flags |= FLAG_QSL_DECREASING
    if total < 0 or total > T:
        flags |= FLAG_TOTAL_OUT_OF_RANGE
    if case.seq_lens is not None:
        for r in range(R):
            if case.seq_lens[r] < 0:
                flags |= FLAG_SEQ_LEN_NEGATIVE
            if case.seq_lens[r] < q[r + 1] - q[r]:
                flags |= FLAG_SEQ_LEN_LT_QLEN

    for t in range(T):
        valid = t < actual
        r = req_of(q, R, t) if R > 0 else 0
        out["decode_lens_out"].append(1)
        if not valid:
            out["seq_lens_out"].append(0)
            out["global_seq_lens_out"].append(0)
            out["block_table_out"].append([0] * cols)
            out["req_indices_out"].append(R + (t - actual))
            out["positions"].append(0)
            out["slot_mapping"].append(-1)
            continue
        qlen = q[r + 1] - q[r]
        off = t - q[r]
        seq = case.seq_lens[r] if case.seq_lens is not None else 0
        L = min(max(seq - qlen + off + 1, 0), INT32_MAX)
        out["global_seq_lens_out"].append(L)
        out["seq_lens_out"].append(dcp_local(L, W, k, I) if W > 1 else L)
        out["block_table_out"].append(list(case.table[r][:cols]) if cols else [])
        out["req_indices_out"].append(r)
        position = seq - qlen + off
        out["positions"].append(position)
        if position < 0 and ("positions" in products or "slot_mapping" in products):
            flags |= FLAG_POSITION_NEGATIVE
        # slot mapping (section 3), with C's division for the record
        vb = bs * W
        blk = c_div(position, vb)
        vo = c_mod(position, vb)
        if blk < 0 or blk >= cols:
            out["slot_mapping"].append(-1)
            if "slot_mapping" in products:
                flags |= FLAG_BLOCK_OUT_OF_TABLE
            continue
        mine = c_mod(c_div(vo, I), W) == k
        if not mine:
            out["slot_mapping"].append(-1)
            continue
        block_id = case.table[r][blk]
        if block_id < 0 and "slot_mapping" in products:
            flags |= FLAG_BLOCK_ID_NEGATIVE
        out["slot_mapping"].append(block_id * bs + c_div(vo, W * I) * I + c_mod(vo, I))
    for _ in range(T, C):
        out["seq_lens_out"].append(0)
        out["slot_mapping"].append(-1)
    out["flags"] = flags
    return out
