#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A whole DeepSeek-V4 decode step's metadata, side by side on one GPU:

  triton    the engine's launch sequence: one Triton kernel per product, with
            the memsets and copies around it, as vLLM launches them
            (compressor_utils.py, sparse_swa.py):
              part 1     the Triton pair of compare.py (token map, indexer
                         decode metadata: seq_lens_out, block_table_out, ...);
              ratio 4    out.fill_(-1), then the compressed slot-mapping
                         kernel, one program per request;
              ratio 128  the same for the ratio-128 group;
              SWA        decode_swa_lens[T:] = 0, is_valid_token =
                         slot_mapping >= 0, token_to_req_indices copied from
                         a pinned host tensor (built on the host with
                         repeat_interleave, as the engine does), then the
                         SWA kernel, one program per token;
              C128A      one program per token writing the row of global
                         compressed slots (c < n through the table, -1
                         beyond) and its length (a model of the engine's
                         kernel: it is built in its sparse-MLA builder);
  attnmeta  one StepPlan with every one of these outputs: one launch.

Both run on poisoned outputs first and must agree entry for entry on every
output a consumer reads (rows of real tokens, every length, every slot).
Then GPU us per step (50 steps captured in one CUDA graph, replayed), host
us per step issued eagerly, and GPU operations per step (torch.profiler),
with the same helpers as compare.py (bench/timing.py). Targets: attnmeta <= 0.5 x the GPU
time and <= 0.2 x the host time of the Triton sequence.

Usage: python3 bench/triton_dsv4.py [--json FILE] [--case NAME]... [--quick]
       [--library PATH]
"""

import argparse
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import compare  # noqa: E402  (the part-1 Triton pair and the step's helpers)
from timing import (add_run_args, count_launches, cuda_torch, library_of,  # noqa: E402
                    load_attnmeta, parse_run_args, time_eager, time_graph)

POISON = compare.POISON
SWA_WINDOW = 128
SWA_BLOCK = 64
C4_RATIO, C4_BLOCK = 4, 64        # storage block 256 / ratio
C128_RATIO, C128_BLOCK = 128, 2
MAX_CONTEXT = 1 << 20             # DeepSeek-V4: 1M tokens
C128A_WIDTH = MAX_CONTEXT // C128_RATIO
INDEXER_COLS = 512                # the indexer's (ratio-4) table of a 131072-token context

# (name, requests, tokens per request, padding tokens)
CASES = [
    ("dsv4_1x1", 1, 1, 0),
    ("dsv4_4x1", 4, 1, 0),
    ("dsv4_32x2", 32, 2, 0),
    ("dsv4_128x1", 128, 1, 0),
    ("dsv4_64x2+31pad", 64, 2, 31),
]


def load_triton_dsv4():
    """The engine's DSV4 kernels, or (None, why) when Triton is missing."""
    try:
        import triton
        import triton.language as tl
    except Exception as exc:
        return None, "triton not importable: %s" % exc

    @triton.jit
    def compressed_slot_mapping_kernel(slot_mapping_ptr, query_start_loc_ptr, seq_lens_ptr,
                                       block_table_ptr, block_table_stride, block_size,
                                       COMPRESS_RATIO: tl.constexpr, PAD_ID: tl.constexpr,
                                       TRITON_BLOCK_SIZE: tl.constexpr):
        batch_idx = tl.program_id(0)
        query_start = tl.load(query_start_loc_ptr + batch_idx)
        query_end = tl.load(query_start_loc_ptr + batch_idx + 1)
        query_len = query_end - query_start
        seq_len = tl.load(seq_lens_ptr + batch_idx)
        start_pos = seq_len - query_len
        for i in range(0, query_len, TRITON_BLOCK_SIZE):
            offset = i + tl.arange(0, TRITON_BLOCK_SIZE)
            mask = offset < query_len
            pos = start_pos + offset
            is_valid = (pos + 1) % COMPRESS_RATIO == 0
            cpos = pos // COMPRESS_RATIO
            block_ids = cpos // block_size
            block_numbers = tl.load(block_table_ptr + batch_idx * block_table_stride + block_ids,
                                    mask=mask & is_valid)
            slot_ids = block_numbers.to(tl.int64) * block_size + cpos % block_size
            slot_ids = tl.where(is_valid, slot_ids, PAD_ID)
            tl.store(slot_mapping_ptr + query_start + offset, slot_ids, mask=mask)

    @triton.jit
    def swa_indices_and_lens_kernel(swa_indices_ptr, swa_indices_stride, swa_lens_ptr,
                                    window_size, query_start_loc_ptr, seq_lens_ptr,
                                    token_to_req_indices_ptr, is_valid_token_ptr, block_table_ptr,
                                    block_table_stride, block_size,
                                    TRITON_BLOCK_SIZE: tl.constexpr):
        pid = tl.program_id(0)
        is_valid = tl.load(is_valid_token_ptr + pid)
        if not is_valid:
            tl.store(swa_lens_ptr + pid, 0)
            return
        req_idx = tl.load(token_to_req_indices_ptr + pid)
        query_start = tl.load(query_start_loc_ptr + req_idx)
        query_end = tl.load(query_start_loc_ptr + req_idx + 1)
        seq_len = tl.load(seq_lens_ptr + req_idx)
        pos = seq_len - (query_end - query_start) + pid - query_start
        start_pos = tl.maximum(pos - window_size + 1, 0)
        end_pos = pos + 1
        swa_len = end_pos - start_pos
        tl.store(swa_lens_ptr + pid, swa_len)
        for i in range(0, window_size, TRITON_BLOCK_SIZE):
            offset = i + tl.arange(0, TRITON_BLOCK_SIZE)
            pos_offset = start_pos + offset
            block_numbers = tl.load(
                block_table_ptr + req_idx * block_table_stride + pos_offset // block_size,
                mask=pos_offset < end_pos)
            slot_ids = block_numbers * block_size + pos_offset % block_size
            slot_ids = tl.where(offset < swa_len, slot_ids, -1)
            tl.store(swa_indices_ptr + pid * swa_indices_stride + offset, slot_ids,
                     mask=offset < window_size)

    @triton.jit
    def c128a_rows_kernel(rows_ptr, rows_stride, lens_ptr, query_start_loc_ptr, seq_lens_ptr,
                          token_to_req_indices_ptr, is_valid_token_ptr, block_table_ptr,
                          block_table_stride, block_size, width, RATIO: tl.constexpr,
                          BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        is_valid = tl.load(is_valid_token_ptr + pid)
        req_idx = tl.load(token_to_req_indices_ptr + pid)
        query_start = tl.load(query_start_loc_ptr + req_idx)
        query_end = tl.load(query_start_loc_ptr + req_idx + 1)
        seq_len = tl.load(seq_lens_ptr + req_idx)
        pos = seq_len - (query_end - query_start) + pid - query_start
        n = tl.where(is_valid, tl.minimum((pos + 1) // RATIO, width), 0)
        tl.store(lens_ptr + pid, n)
        row = rows_ptr + pid.to(tl.int64) * rows_stride
        for c0 in range(0, width, BLOCK):
            c = c0 + tl.arange(0, BLOCK)
            ids = tl.load(block_table_ptr + req_idx * block_table_stride + c // block_size,
                          mask=c < n, other=0)
            tl.store(row + c, tl.where(c < n, ids * block_size + c % block_size, -1),
                     mask=c < width)

    def step(torch, inp, out, m):
        (qsl, seq_lens, indexer_table, t4, t128, swa_table, slot_mapping, qlens_cpu,
         token_req_host) = inp
        R, T, C = m["R"], m["T"], m["C"]
        # part 1
        m["part1"](torch, (qsl, seq_lens, indexer_table), out, m)
        # the two compressed groups
        for key, table, ratio, bs in (("slots4", t4, C4_RATIO, C4_BLOCK),
                                      ("slots128", t128, C128_RATIO, C128_BLOCK)):
            out[key].fill_(-1)
            compressed_slot_mapping_kernel[(R,)](out[key], qsl, seq_lens, table, table.stride(0),
                                                 bs, COMPRESS_RATIO=ratio, PAD_ID=-1,
                                                 TRITON_BLOCK_SIZE=64)
        # SWA: the engine's token map comes from the host
        x = torch.repeat_interleave(torch.arange(R, dtype=torch.int32), qlens_cpu)
        token_req_host[: x.shape[0]].copy_(x)
        out["token_req"][:T].copy_(token_req_host[:T], non_blocking=True)
        torch.ge(slot_mapping, 0, out=out["is_valid"])
        out["swa_lens"][m["actual"]:].fill_(0)
        swa_indices_and_lens_kernel[(m["actual"],)](
            out["swa"], out["swa"].stride(0), out["swa_lens"], SWA_WINDOW, qsl, seq_lens,
            out["token_req"], out["is_valid"], swa_table, swa_table.stride(0), SWA_BLOCK,
            TRITON_BLOCK_SIZE=1024)
        # C128A
        out["c128a_lens"][m["actual"]:].fill_(0)
        c128a_rows_kernel[(m["actual"],)](
            out["c128a"], out["c128a"].stride(0), out["c128a_lens"], qsl, seq_lens,
            out["token_req"], out["is_valid"], t128, t128.stride(0), C128_BLOCK, C128A_WIDTH,
            RATIO=C128_RATIO, BLOCK=1024)

    return step, None


def make_case(torch, name, R, qlen, pad, dev):
    T = R * qlen + pad
    actual = R * qlen
    C = compare.capacity_of(T)
    m = dict(R=R, T=T, C=C, actual=actual, cols=INDEXER_COLS, nsets=4)
    gen = torch.Generator().manual_seed(17 + R)
    sets = []
    qlens = torch.full((R,), qlen, dtype=torch.int32)
    qsl = torch.cat([torch.zeros(1, dtype=torch.int32), torch.cumsum(qlens, 0).to(torch.int32)])

    def table(cols, base):
        ids = base + torch.randperm(R * cols, generator=gen).to(torch.int32)
        return ids.reshape(R, cols).to(dev)

    for s in range(m["nsets"]):
        seq = torch.randint(1000, 131072, (R,), generator=gen, dtype=torch.int32) + qlen
        slots = torch.full((T,), -1, dtype=torch.int64)
        slots[:actual] = 1  # the engine's own slot mapping: >= 0 for real tokens
        sets.append((qsl.to(dev), seq.to(dev), table(INDEXER_COLS, 1 + s),
                     table(131072 // C4_RATIO // C4_BLOCK + 1, 7 + s),
                     table(MAX_CONTEXT // C128_RATIO // C128_BLOCK + 1, 11 + s),
                     table(131072 // SWA_BLOCK + 2, 13 + s), slots.to(dev), qlens,
                     torch.zeros(T, dtype=torch.int32).pin_memory()))
    return sets, m


def make_outputs(torch, m, dev):
    T, C, R = m["T"], m["C"], m["R"]
    i32, i64 = dict(dtype=torch.int32, device=dev), dict(dtype=torch.int64, device=dev)
    out = compare.make_outputs(torch, m, dev)
    out.update(slots4=torch.empty(C, **i64), slots128=torch.empty(C, **i64),
               swa=torch.empty(T, SWA_WINDOW, **i32), swa_lens=torch.empty(C, **i32),
               c128a=torch.empty(T, C128A_WIDTH, **i32), c128a_lens=torch.empty(C, **i32),
               token_req=torch.empty(T, **i32), is_valid=torch.empty(T, dtype=torch.bool, device=dev))
    return out


def attnmeta_step(attnmeta, sets, out, m):
    plans = []
    for qsl, seq_lens, indexer_table, t4, t128, swa_table, _, _, _ in sets:
        plans.append(attnmeta.StepPlan(
            qsl, seq_lens=seq_lens, block_table=indexer_table,
            token_to_req=out["token_to_req"], seq_lens_out=out["seq_lens_out"],
            block_table_out=out["block_table_out"], decode_lens_out=out["decode_lens"],
            req_indices_out=out["req_indices"], per_req_lens_out=out["per_req_lens"],
            capacity=m["C"],
            compressed_groups=[
                dict(block_table=t4, ratio=C4_RATIO, block_size=C4_BLOCK,
                     slot_mapping=out["slots4"]),
                dict(block_table=t128, ratio=C128_RATIO, block_size=C128_BLOCK,
                     slot_mapping=out["slots128"]),
            ],
            swa_indices=out["swa"], swa_lens=out["swa_lens"], swa_block_table=swa_table,
            swa_block_size=SWA_BLOCK, swa_window=SWA_WINDOW,
            c128a_rows=out["c128a"], c128a_lens=out["c128a_lens"], c128a_block_table=t128,
            c128a_ratio=C128_RATIO, c128a_block_size=C128_BLOCK))
    R, T = m["R"], m["T"]

    def step(i):
        plans[i].build(R, T)

    return step


# What a consumer reads: every slot and length; the rows of real tokens.
CHECKED = ("token_to_req", "seq_lens_out", "decode_lens", "req_indices", "per_req_lens",
           "slots4", "slots128", "swa_lens", "c128a_lens")


def difference(a, b, m):
    for key in CHECKED:
        if not bool((a[key] == b[key]).all()):
            i = int((a[key] != b[key]).nonzero()[0][0])
            return "%s[%d]: %d vs %d" % (key, i, int(a[key][i]), int(b[key][i]))
    n = m["actual"]
    for key in ("block_table_out", "swa", "c128a"):
        if not bool((a[key][:n] == b[key][:n]).all()):
            i = (a[key][:n] != b[key][:n]).nonzero()[0].tolist()
            return "%s%s: %d vs %d" % (key, i, int(a[key][i[0], i[1]]), int(b[key][i[0], i[1]]))
    return None


def run_case(torch, name, R, qlen, pad, triton_step, attnmeta, args):
    dev = torch.device("cuda")
    sets, m = make_case(torch, name, R, qlen, pad, dev)
    res = dict(name=name, num_reqs=R, tokens=m["T"], actual=m["actual"], capacity=m["C"],
               c128a_width=C128A_WIDTH, swa_window=SWA_WINDOW)
    outs, steps = {}, {}
    if triton_step:
        outs["triton"] = make_outputs(torch, m, dev)
        steps["triton"] = lambda i, o=outs["triton"]: triton_step(torch, sets[i], o, m)
    if attnmeta:
        outs["attnmeta"] = make_outputs(torch, m, dev)
        steps["attnmeta"] = attnmeta_step(attnmeta, sets, outs["attnmeta"], m)
    for key, step in list(steps.items()):
        for t in outs[key].values():
            t.fill_(POISON if t.dtype != torch.bool else False)
        try:
            step(0)
            torch.cuda.synchronize()
        except Exception as exc:
            traceback.print_exc()
            res[key] = dict(error="failed: %s" % exc)
            del steps[key]
    if len(steps) == 2:
        diff = difference(outs["triton"], outs["attnmeta"], m)
        res["check"] = "FAIL: " + diff if diff else "ok"
        if diff:
            return res
    for key, step in steps.items():
        gpu = time_graph(torch, step, m["nsets"], args.steps, args.repeats, args.target_ms)
        host = time_eager(torch, step, m["nsets"], args.repeats, args.target_ms)
        res[key] = dict(gpu_us=gpu, host_us=host,
                        launches=count_launches(torch, step, m["nsets"]))
    if "triton" in res and "attnmeta" in res and "gpu_us" in res["attnmeta"]:
        res["gpu_ratio"] = res["attnmeta"]["gpu_us"]["median"] / res["triton"]["gpu_us"]["median"]
        res["host_ratio"] = (res["attnmeta"]["host_us"]["median"] /
                             res["triton"]["host_us"]["median"])
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json")
    ap.add_argument("--case", action="append")
    add_run_args(ap)
    args = parse_run_args(ap)
    torch = cuda_torch("triton_dsv4.py")
    if torch is None:
        return 2
    part1, why1 = compare.load_triton()
    dsv4, why2 = load_triton_dsv4()
    triton_step = None
    if part1 and dsv4:
        def triton_step(torch_, inp, out, m):
            m["part1"] = part1
            dsv4(torch_, inp, out, m)
    attnmeta, why3 = load_attnmeta(args.library)
    for why in (why1, why2, why3):
        if why:
            print("triton_dsv4.py: %s" % why, file=sys.stderr)
    report = dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__,
                  library=library_of(attnmeta), cases=[])
    status = 0
    for name, R, qlen, pad in CASES:
        if args.case and name not in args.case:
            continue
        res = run_case(torch, name, R, qlen, pad, triton_step, attnmeta, args)
        report["cases"].append(res)
        status |= res.get("check", "ok") != "ok"
    print("%-18s %6s | %9s %9s %5s | %9s %9s %5s | %6s %6s  check" %
          ("case", "T", "tri.gpu", "tri.host", "l", "am.gpu", "am.host", "l", "gpu x", "host x"))
    for r in report["cases"]:
        def cell(key, what):
            v = r.get(key, {}).get(what)
            return "%9.2f" % v["median"] if isinstance(v, dict) else "%9s" % "n/a"

        def launches(key):
            v = r.get(key, {}).get("launches")
            return "%5.1f" % v if v is not None else "%5s" % "n/a"
        print("%-18s %6d | %s %s %s | %s %s %s | %6s %6s  %s" % (
            r["name"], r["tokens"], cell("triton", "gpu_us"), cell("triton", "host_us"),
            launches("triton"), cell("attnmeta", "gpu_us"), cell("attnmeta", "host_us"),
            launches("attnmeta"),
            "%.2f" % r["gpu_ratio"] if "gpu_ratio" in r else "n/a",
            "%.2f" % r["host_ratio"] if "host_ratio" in r else "n/a", r.get("check", "-")))
    print("targets: attnmeta <= 0.5 x the GPU time and <= 0.2 x the host time of the Triton sequence")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
