#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Side-by-side timing of one decode step's metadata, on the same GPU, in one
process, on the same inputs, for three implementations:

  torch     the PyTorch op chain serving engines used before attnmeta
            (arange / repeat_interleave with output_size, gathers, index
            copies, fills: a few dozen small launches);
  triton    one Triton kernel per product: the token map (256 tokens per
            program, vectorised binary search over query_start_loc) and the
            indexer decode metadata (one program per token, binary search,
            block-table row copy, tail programs clearing seq_lens_out[T, C));
  attnmeta  the C library through its Python binding (python/attnmeta), one
            launch for everything.

The product set is the one `attnmeta bench` times: token_to_req[T], and the
sparse-indexer decode metadata seq_lens_out[C] (C > T), block_table_out[T,
cols], decode_lens[T], req_indices[T], per_req_lens[R].

For every case the three are first run on poisoned outputs and checked to
agree, entry for entry; then:
  GPU us    device time per step: 50 steps captured into one
            torch.cuda.CUDAGraph (cycling through the input sets), replayed
            between CUDA events; median over repeats;
  host us   wall time per step issued eagerly (synchronised only outside the
            timed loop);
  launches  GPU operations per step, counted with torch.profiler.

Prints a table last, writes --json and a --png chart. A missing Triton or
binding makes its columns "n/a"; nothing here needs them to import.

Usage: python3 bench/compare.py [--json FILE] [--png FILE] [--case NAME]...
       [--repeats N] [--steps N] [--target-ms MS] [--library PATH] [--quick]
       [--without triton|attnmeta]
"""

import argparse
import datetime
import json
import math
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from timing import (add_run_args, count_launches, cuda_torch, library_of,  # noqa: E402
                    load_attnmeta, parse_run_args, time_cold, time_eager, time_graph)

POISON = -0x5A5A5A5B  # 0xA5A5A5A5 as int32
MAX_SETS = 8
SET_BUDGET_BYTES = 16 << 20  # rotate input sets while all of them fit here
# Cold figures: input sets rotated past 2 x L2 where that takes at most this
# many sets (one graph step each), else an L2 scrub between steps whose own
# time is measured alone and subtracted.
COLD_MAX_SETS = 128

# Anchors recorded in the design notes (performance.md, "Anchors, measured
# side by side in one run": NVIDIA H200, CUDA 13.0, torch 2.11, Triton 3.6).
# Shown next to the live numbers so a drift of the harness itself is visible.
ANCHORS = {
    "1x1": dict(floor=0.50, torch_gpu=40.7, triton_gpu=2.75, torch_host=470, triton_host=45),
    "1x4": dict(floor=0.69, torch_gpu=42.7, triton_gpu=2.87, torch_host=481, triton_host=57),
    "16x6": dict(floor=0.70, torch_gpu=42.1, triton_gpu=4.23, torch_host=496, triton_host=42),
    "16x6+17pad": dict(floor=0.70, torch_gpu=45.6, triton_gpu=4.38, torch_host=487, triton_host=42),
    "128x2": dict(floor=0.70, torch_gpu=49.4, triton_gpu=6.42, torch_host=449, triton_host=41),
    "1024x1": dict(floor=0.70, torch_gpu=80.6, triton_gpu=10.09, torch_host=657, triton_host=41),
    "256xmixed+31pad": dict(floor=0.69, torch_gpu=67.5, triton_gpu=6.71, torch_host=765, triton_host=41),
    "skewed": dict(floor=0.70, torch_gpu=48.7, triton_gpu=3.48, torch_host=464, triton_host=70),
}
IMPLS = ("torch", "triton", "attnmeta")


# ---------------------------------------------------------------------------
# cases (the same as `attnmeta bench`, tools/cli_bench_cases.c)


def _lcg_stream(seed):
    while True:
        seed = (seed * 1103515245 + 12345) & 0xFFFFFFFF
        yield seed >> 8


def make_cases():
    mixed = _lcg_stream(2024)
    return [
        dict(name="1x1", label="1 x 1, 64", qlens=[1], pad=0, cols=64),
        dict(name="1x4", label="1 x 4, 64", qlens=[4], pad=0, cols=64),
        dict(name="16x6", label="16 x 6, 64", qlens=[6] * 16, pad=0, cols=64),
        dict(name="16x6+17pad", label="16 x 6 + 17 pad, 65", qlens=[6] * 16, pad=17, cols=65),
        dict(name="128x2", label="128 x 2, 2560", qlens=[2] * 128, pad=0, cols=2560),
        dict(name="1024x1", label="1024 x 1, 2560", qlens=[1] * 1024, pad=0, cols=2560),
        dict(name="256xmixed+31pad", label="256 x mixed 0..8 + 31 pad, 512",
             qlens=[next(mixed) % 9 for _ in range(256)], pad=31, cols=512),
        dict(name="skewed", label="skewed [0,257,1,0,3], 64", qlens=[0, 257, 1, 0, 3], pad=0, cols=64),
        # the wide cases with the block table a column slice of a table 7
        # columns wider, starting at its column 3: odd stride, rows starting
        # at every offset modulo 16 bytes (as an engine slices its tables)
        dict(name="128x2/odd", label="128 x 2, 2560 of 2567 from col 3", qlens=[2] * 128, pad=0,
             cols=2560, table_cols=2567, col_offset=3),
        dict(name="1024x1/odd", label="1024 x 1, 2560 of 2567 from col 3", qlens=[1] * 1024, pad=0,
             cols=2560, table_cols=2567, col_offset=3),
    ]


def capacity_of(num_tokens):
    """Capacity of the capacity-long outputs: past T, to the next multiple of 512."""
    return (num_tokens // 512 + 1) * 512


# ---------------------------------------------------------------------------
# the three implementations


def torch_step(torch, inp, out, m):
    """The op chain of the engines before attnmeta: host-known sizes,
    output_size given so nothing synchronises (graph-capturable)."""
    qsl, seq_lens, table = inp
    R, T, C, A = m["R"], m["T"], m["C"], m["actual"]
    dev = qsl.device
    qlen = qsl[1 : R + 1] - qsl[:R]
    qlen64 = qlen.to(torch.int64)
    req = torch.repeat_interleave(qlen64, output_size=A)  # request of each real token
    # token -> request map
    out["token_to_req"][:A].copy_(req)
    out["token_to_req"][A:T].fill_(0)
    # indexer decode metadata, one row per token
    start = qsl.index_select(0, req)
    off = torch.arange(A, device=dev, dtype=torch.int32) - start
    causal = seq_lens.index_select(0, req) - qlen.index_select(0, req) + off + 1
    out["seq_lens_out"][:A].copy_(causal.clamp_(min=0))
    out["seq_lens_out"][A:C].zero_()
    out["block_table_out"][:A].copy_(table.index_select(0, req))
    out["block_table_out"][A:T].zero_()
    out["decode_lens"][:T].fill_(1)
    out["req_indices"][:A].copy_(req)
    out["req_indices"][A:T].copy_(torch.arange(R, R + T - A, device=dev, dtype=torch.int32))
    out["per_req_lens"][:R].copy_(qlen)


def load_triton():
    """The Triton pair, or (None, why) when Triton is missing."""
    try:
        import triton
        import triton.language as tl
    except Exception as exc:  # ImportError, or a broken install
        return None, "triton not importable: %s" % exc

    @triton.jit
    def request_of(qsl_ptr, t, num_reqs, n_iter, mask):
        """Smallest r in [0, R) with qsl[r + 1] > t (else R - 1): a binary
        search of n_iter steps, for one token or a block of them at once."""
        lo = t * 0
        hi = lo + num_reqs
        for _ in range(n_iter):
            active = lo < hi
            mid = (lo + hi) // 2
            v = tl.load(qsl_ptr + mid + 1, mask=mask & active, other=0)
            right = active & (v <= t)
            left = active & (v > t)
            lo = tl.where(right, mid + 1, lo)
            hi = tl.where(left, mid, hi)
        return tl.minimum(lo, num_reqs - 1)

    @triton.jit
    def token_map_kernel(qsl_ptr, out_ptr, num_reqs, num_tokens, n_iter, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        t = pid * BLOCK + tl.arange(0, BLOCK)
        in_range = t < num_tokens
        actual = tl.load(qsl_ptr + num_reqs)
        r = request_of(qsl_ptr, t, num_reqs, n_iter, in_range)
        tl.store(out_ptr + t, tl.where(t < actual, r, 0), mask=in_range)

    @triton.jit
    def indexer_kernel(qsl_ptr, seq_lens_ptr, table_ptr, table_stride, seq_out_ptr, table_out_ptr,
                       table_out_stride, decode_ptr, indices_ptr, per_req_ptr, num_reqs, num_tokens,
                       capacity, cols, n_iter, main_programs, BLOCK_C: tl.constexpr,
                       TAIL: tl.constexpr):
        pid = tl.program_id(0)
        if pid < main_programs:
            t = pid
            if t < num_reqs:
                tl.store(per_req_ptr + t, tl.load(qsl_ptr + t + 1) - tl.load(qsl_ptr + t))
            if t < num_tokens:
                actual = tl.load(qsl_ptr + num_reqs)
                r = request_of(qsl_ptr, t, num_reqs, n_iter, t >= 0)
                valid = t < actual
                start = tl.load(qsl_ptr + r).to(tl.int64)
                qlen = tl.load(qsl_ptr + r + 1).to(tl.int64) - start
                causal = tl.load(seq_lens_ptr + r).to(tl.int64) - qlen + (t - start) + 1
                causal = tl.where(valid, tl.maximum(causal, 0), 0)
                tl.store(seq_out_ptr + t, causal.to(tl.int32))
                tl.store(decode_ptr + t, 1)
                tl.store(indices_ptr + t, tl.where(valid, r, num_reqs + t - actual))
                row_in = table_ptr + r.to(tl.int64) * table_stride
                row_out = table_out_ptr + t.to(tl.int64) * table_out_stride
                for c0 in range(0, cols, BLOCK_C):
                    offs = c0 + tl.arange(0, BLOCK_C)
                    m = offs < cols
                    row = tl.load(row_in + offs, mask=m & valid, other=0)
                    tl.store(row_out + offs, row, mask=m)
        else:
            i = num_tokens + (pid - main_programs) * TAIL + tl.arange(0, TAIL)
            tl.store(seq_out_ptr + i, tl.zeros([TAIL], dtype=tl.int32), mask=i < capacity)

    def n_iter_of(R):
        return max(1, math.ceil(math.log2(R + 1)) + 1)

    def step(torch, inp, out, m):
        qsl, seq_lens, table = inp
        R, T, C, cols = m["R"], m["T"], m["C"], m["cols"]
        n_iter = n_iter_of(R)
        block = 256
        token_map_kernel[(triton.cdiv(T, block),)](qsl, out["token_to_req"], R, T, n_iter, BLOCK=block)
        tail = 1024
        main = max(T, R)
        grid = (main + triton.cdiv(C - T, tail),)
        block_c = min(1024, triton.next_power_of_2(max(cols, 1)))
        indexer_kernel[grid](qsl, seq_lens, table, table.stride(0), out["seq_lens_out"],
                             out["block_table_out"], out["block_table_out"].stride(0),
                             out["decode_lens"], out["req_indices"], out["per_req_lens"], R, T, C,
                             cols, n_iter, main, BLOCK_C=block_c, TAIL=tail)

    return step, None


def attnmeta_factory(attnmeta, sets, out, m):
    """One attnmeta call per input set, over the shared outputs: a function
    step(set_index). The only place that touches the binding's API."""
    plans = [
        attnmeta.StepPlan(qsl, seq_lens=seq_lens, block_table=table,
                          token_to_req=out["token_to_req"], seq_lens_out=out["seq_lens_out"],
                          block_table_out=out["block_table_out"],
                          decode_lens_out=out["decode_lens"], req_indices_out=out["req_indices"],
                          per_req_lens_out=out["per_req_lens"], capacity=m["C"])
        for qsl, seq_lens, table in sets
    ]
    R, T = m["R"], m["T"]

    def step(i):
        plans[i].build(R, T)

    return step


# ---------------------------------------------------------------------------
# inputs, outputs, checks


def query_start_loc(qlens):
    qsl = [0]
    for q in qlens:
        qsl.append(qsl[-1] + q)
    return qsl


def input_set(torch, case, dev, qsl, s, gen):
    """Input set number s on the device: query_start_loc, seq_lens (KV
    lengths of a few thousand tokens, new tokens included, drawn from gen)
    and the block table (distinct, non-zero ids, different in every set)."""
    qlens = case["qlens"]
    R, cols = len(qlens), case["cols"]
    q = torch.tensor(qsl, dtype=torch.int32)
    seq = torch.tensor(qlens, dtype=torch.int32) + 1000 + torch.randint(0, 7000, (R,), generator=gen, dtype=torch.int32)
    table = (1 + s * R * cols + torch.arange(R * cols, dtype=torch.int64)).to(torch.int32).reshape(R, cols)
    return q.to(dev), seq.to(dev), place(torch, table, case, dev)


def make_inputs(torch, case, dev):
    qlens = case["qlens"]
    R, cols = len(qlens), case["cols"]
    qsl = query_start_loc(qlens)
    actual = qsl[-1]
    T = actual + case["pad"]
    m = dict(R=R, T=T, C=capacity_of(T), cols=cols, actual=actual)
    set_bytes = 4 * (R * cols + 2 * R + 1)
    nsets = MAX_SETS if MAX_SETS * set_bytes <= SET_BUDGET_BYTES else 1
    gen = torch.Generator().manual_seed(7 + R * 31 + cols)
    sets = [input_set(torch, case, dev, qsl, s, gen) for s in range(nsets)]
    m["nsets"] = nsets
    m["set_bytes"] = set_bytes
    m["bytes"] = 4 * (sum(1 for q in qlens if q > 0) * cols + T * cols + (R + 1) + R + T + m["C"] + T + T + R)
    return sets, m


def place(torch, table, case, dev):
    """The table on the device: as it is, or as the column slice [off, off +
    cols) of a wider table (the columns around it hold -1, never read)."""
    wide, off = case.get("table_cols"), case.get("col_offset", 0)
    if not wide:
        return table.to(dev)
    full = torch.full((table.shape[0], wide), -1, dtype=torch.int32, device=dev)
    full[:, off:off + table.shape[1]] = table.to(dev)
    return full[:, off:off + table.shape[1]]


def cold_sets(torch, case, dev, m, l2_bytes):
    """Input sets for the cold figure: as many as make > 2 x L2 in all,
    when that is at most COLD_MAX_SETS sets (the wide cases); else None
    (the cold figure then comes from an L2 scrub between steps)."""
    need = int(2 * l2_bytes // max(m["set_bytes"], 1)) + 1
    if need > COLD_MAX_SETS:
        return None
    gen = torch.Generator().manual_seed(11 + m["R"] * 31 + m["cols"])
    qsl = query_start_loc(case["qlens"])
    return [input_set(torch, case, dev, qsl, s, gen) for s in range(need)]


def make_outputs(torch, m, dev):
    T, C, R, cols = m["T"], m["C"], m["R"], m["cols"]
    i32 = dict(dtype=torch.int32, device=dev)
    return dict(token_to_req=torch.empty(T, **i32), seq_lens_out=torch.empty(C, **i32),
                block_table_out=torch.empty(T, cols, **i32), decode_lens=torch.empty(T, **i32),
                req_indices=torch.empty(T, **i32), per_req_lens=torch.empty(R, **i32))


def poison(out):
    for t in out.values():
        t.fill_(POISON)


def first_difference(a, b):
    """None when every output agrees, else a description of the first difference."""
    for name in a:
        x, y = a[name].cpu(), b[name].cpu()
        if not bool((x == y).all()):
            idx = (x != y).nonzero()[0].tolist()
            return "%s%s: %d vs %d" % (name, idx, x[tuple(idx)].item(), y[tuple(idx)].item())
    return None


# ---------------------------------------------------------------------------
# timing


def empty_floor(torch, triton_ok, steps, repeats, target_ms):
    """Device us per node of a graph of empty kernels (a Triton kernel doing
    nothing, or torch's smallest launch when Triton is missing)."""
    try:
        if triton_ok:
            import triton

            @triton.jit
            def empty_kernel(x):
                pass

            x = torch.empty(1, device="cuda")

            def step(_):
                empty_kernel[(1,)](x)
        else:
            x = torch.empty(1, device="cuda")

            def step(_):
                x.fill_(0)
        return time_graph(torch, step, 1, steps, repeats, target_ms)["median"]
    except Exception as exc:
        print("compare.py: empty-kernel floor unavailable: %s" % exc, file=sys.stderr)
        return None


# ---------------------------------------------------------------------------
# output


def fmt(v, digits=2):
    if v is None:
        return "n/a"
    return ("%." + str(digits) + "f") % v


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def print_table(report):
    print()
    print("compare.py on %s, torch %s, triton %s, attnmeta %s, %s" % (
        report["device_name"], report["torch_version"], report["triton_version"] or "n/a",
        report["attnmeta_version"] or "n/a", report["date"]))
    print("floor (empty kernel in a graph): %s us/node; GPU us = device time per step (graph of %d "
          "steps, median); host us = eager issue per step; launches = GPU operations per step"
          % (fmt(report["floor_us"]), report["steps_per_graph"]))
    head = ("%-32s %8s %8s %8s %7s | %8s %8s %8s %7s | %s" % (
        "case", "torch", "triton", "attnmeta", "am/tri", "torch", "triton", "attnmeta", "am/tri",
        "launches t/tr/am"))
    print("%-32s %-35s | %-35s |" % ("", "GPU us per step", "host us per step"))
    print(head)
    for c in report["cases"]:
        if c.get("error"):
            print("%-32s %s" % (c["label"], c["error"]))
            continue
        g = {k: (c[k]["gpu_us"]["median"] if c.get(k) and c[k].get("gpu_us") else None) for k in IMPLS}
        h = {k: (c[k]["host_us"]["median"] if c.get(k) and c[k].get("host_us") else None) for k in IMPLS}
        n = {k: (c[k].get("launches") if c.get(k) else None) for k in IMPLS}
        print("%-32s %8s %8s %8s %7s | %8s %8s %8s %7s | %s/%s/%s" % (
            c["label"], fmt(g["torch"]), fmt(g["triton"]), fmt(g["attnmeta"]),
            fmt(ratio(g["attnmeta"], g["triton"])), fmt(h["torch"], 1), fmt(h["triton"], 1),
            fmt(h["attnmeta"], 1), fmt(ratio(h["attnmeta"], h["triton"])),
            fmt(n["torch"], 0), fmt(n["triton"], 0), fmt(n["attnmeta"], 0)))
    print("targets: attnmeta GPU <= 0.5 x triton; attnmeta host (binding) <= 0.35 x triton; 1 launch")
    cold = [c for c in report["cases"] if not c.get("error") and any(
        c.get(k, {}).get("gpu_us_cold") for k in IMPLS if isinstance(c.get(k), dict))]
    if cold:
        print()
        print("cold: GPU us per step with the inputs out of L2 (L2 %s MB)" % fmt(
            cold[0].get("l2_bytes", 0) / 2**20, 0))
        print("%-32s %8s %8s %8s %7s | %8s  %s" % ("case", "torch", "triton", "attnmeta", "am/tri",
                                                  "am warm", "how"))
        for c in cold:
            g = {k: ((c.get(k) or {}).get("gpu_us_cold") or {}).get("median") for k in IMPLS}
            w = ((c.get("attnmeta") or {}).get("gpu_us") or {}).get("median")
            how = ((c.get("attnmeta") or c.get("triton") or {}).get("gpu_us_cold") or {}).get("method", "")
            print("%-32s %8s %8s %8s %7s | %8s  %s" % (
                c["label"], fmt(g["torch"]), fmt(g["triton"]), fmt(g["attnmeta"]),
                fmt(ratio(g["attnmeta"], g["triton"])), fmt(w), how))


def draw(report, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as exc:
        print("compare.py: no chart (matplotlib: %s)" % exc, file=sys.stderr)
        return
    cases = [c for c in report["cases"] if not c.get("error")]
    if not cases:
        return
    fig, axes = plt.subplots(2, 1, figsize=(12, 8), sharex=True)
    width = 0.27
    xs = range(len(cases))
    for ax, key, title in ((axes[0], "gpu_us", "GPU us per step (graph replay, median)"),
                           (axes[1], "host_us", "host us per step (eager issue)")):
        for j, impl in enumerate(IMPLS):
            vals = [c[impl][key]["median"] if c.get(impl) and c[impl].get(key) else 0 for c in cases]
            ax.bar([x + (j - 1) * width for x in xs], vals, width, label=impl)
        if key == "gpu_us" and report.get("floor_us"):
            ax.axhline(report["floor_us"], color="gray", linestyle="--", linewidth=1,
                       label="empty kernel (%.2f us)" % report["floor_us"])
        ax.set_yscale("log")
        ax.set_title(title)
        ax.grid(axis="y", alpha=0.3)
        ax.legend()
    axes[1].set_xticks(list(xs))
    axes[1].set_xticklabels([c["label"] for c in cases], rotation=20, ha="right", fontsize=8)
    fig.suptitle("%s, %s" % (report["device_name"], report["date"]))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------


def run_case(torch, case, impls, args):
    dev = torch.device("cuda")
    sets, m = make_inputs(torch, case, dev)
    res = dict(name=case["name"], label=case["label"], num_reqs=m["R"], actual_tokens=m["actual"],
               num_tokens=m["T"], capacity=m["C"], cols=m["cols"], bytes=m["bytes"],
               input_sets=m["nsets"], anchor=ANCHORS.get(case["name"]))
    outs, steps = {}, {}
    for name, impl in impls.items():
        out = make_outputs(torch, m, dev)
        outs[name] = out
        if name == "attnmeta":
            try:
                steps[name] = attnmeta_factory(impl, sets, out, m)
            except Exception as exc:
                res[name] = dict(error="set-up failed: %s" % exc)
                continue
        else:
            steps[name] = (lambda fn, o: (lambda i: fn(torch, sets[i], o, m)))(impl, out)
    # Check: each on poisoned outputs, then all against the first that ran.
    ran = []
    for name, step in list(steps.items()):
        poison(outs[name])
        try:
            step(0)
            torch.cuda.synchronize()
            ran.append(name)
        except Exception as exc:
            res[name] = dict(error="failed: %s" % exc)
            traceback.print_exc()
            del steps[name]
    for name in ran[1:]:
        diff = first_difference(outs[ran[0]], outs[name])
        if diff:
            res[name] = dict(error="disagrees with %s: %s" % (ran[0], diff))
            res["check"] = "FAIL"
            del steps[name]
    res.setdefault("check", "ok" if len(ran) > 1 else "single")
    for name, step in steps.items():
        try:
            gpu = time_graph(torch, step, m["nsets"], args.steps, args.repeats, args.target_ms)
            host = time_eager(torch, step, m["nsets"], args.repeats, args.target_ms)
            res[name] = dict(gpu_us=gpu, host_us=host,
                             launches=count_launches(torch, step, m["nsets"]))
        except Exception as exc:
            res[name] = dict(error="timing failed: %s" % exc)
            traceback.print_exc()
    # Cold: the same steps with their inputs out of L2.
    if not args.warm_only and steps:
        l2 = torch.cuda.get_device_properties(dev).L2_cache_size
        csets = cold_sets(torch, case, dev, m, l2)
        scrub_buf = None if csets else torch.empty(int(2 * l2) // 4 + 1, dtype=torch.int32, device=dev)
        nc = len(csets) if csets else m["nsets"]
        res["l2_bytes"] = l2
        for name, step in steps.items():
            if not isinstance(res.get(name), dict) or res[name].get("error"):
                continue
            try:
                if csets:
                    if name == "attnmeta":
                        cstep = attnmeta_factory(impls[name], csets, outs[name], m)
                    else:
                        cstep = (lambda fn, o: (lambda i: fn(torch, csets[i], o, m)))(impls[name], outs[name])
                else:
                    cstep = step
                res[name]["gpu_us_cold"] = time_cold(torch, cstep, nc, args.repeats, args.target_ms,
                                                     scrub_buf)
            except Exception as exc:
                res[name]["gpu_us_cold"] = dict(error="cold timing failed: %s" % exc)
                traceback.print_exc()
        del csets, scrub_buf
    # After all the timing, one more step of set 0 each: still in agreement.
    for name, step in steps.items():
        step(0)
    torch.cuda.synchronize()
    names = [n for n in steps if n in outs]
    for name in names[1:]:
        diff = first_difference(outs[names[0]], outs[name])
        if diff:
            res["check"] = "FAIL after timing: %s vs %s: %s" % (names[0], name, diff)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write every number here")
    ap.add_argument("--png", help="draw GPU and host time per case here")
    ap.add_argument("--case", action="append", help="only this case (repeatable)")
    add_run_args(ap)
    ap.add_argument("--warm-only", action="store_true",
                    help="no cold figures (inputs out of L2: rotated past 2 x L2, or scrubbed)")
    ap.add_argument("--without", action="append", default=[], choices=["triton", "attnmeta"],
                    help="leave an implementation out, as if it were missing (repeatable)")
    args = parse_run_args(ap)

    torch = cuda_torch("compare.py")
    if torch is None:
        return 2

    impls = {"torch": torch_step}
    notes = {}
    triton_step, why = load_triton() if "triton" not in args.without else (None, "left out (--without)")
    if triton_step:
        impls["triton"] = triton_step
    else:
        notes["triton"] = why
        print("compare.py: %s: triton columns n/a" % why, file=sys.stderr)
    am, why = load_attnmeta(args.library) if "attnmeta" not in args.without else (None, "left out (--without)")
    if am:
        impls["attnmeta"] = am
    else:
        notes["attnmeta"] = why
        print("compare.py: %s: attnmeta columns n/a" % why, file=sys.stderr)

    try:
        import triton
        triton_version = triton.__version__
    except Exception:
        triton_version = None
    report = dict(
        tool="bench/compare.py",
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        device_name=torch.cuda.get_device_name(),
        torch_version=torch.__version__, cuda_version=torch.version.cuda,
        triton_version=triton_version,
        attnmeta_version=(am.version_string() if am else None),
        attnmeta_library=library_of(am),
        steps_per_graph=args.steps, repeats=args.repeats, target_ms=args.target_ms,
        notes=notes, anchor_source="design notes, performance.md (NVIDIA H200, CUDA 13.0, torch 2.11, Triton 3.6)",
        cases=[])
    report["floor_us"] = empty_floor(torch, "triton" in impls, args.steps, args.repeats, args.target_ms)

    failed = False
    for case in make_cases():
        if args.case and case["name"] not in args.case:
            continue
        print("  %-32s" % case["label"], end="", file=sys.stderr, flush=True)
        try:
            res = run_case(torch, case, impls, args)
        except Exception as exc:
            traceback.print_exc()
            res = dict(name=case["name"], label=case["label"], error="failed: %s" % exc)
        failed |= bool(res.get("error")) or str(res.get("check", "")).startswith("FAIL")
        for k in IMPLS:
            if k in notes:
                res[k] = dict(error=notes[k])
        report["cases"].append(res)
        print(" %s" % res.get("check", res.get("error")), file=sys.stderr, flush=True)

    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, default=str)
    if args.png:
        draw(report, args.png)
    print_table(report)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
