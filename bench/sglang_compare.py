#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GPU timing of SGLang's per-step metadata builds on one GPU, in one
process, on the same inputs (contract sections 10, 12, 13):

  flashinfer   FlashInfer's decode build: SGLang's cumsum, cast-copy and
               slot-list kernel (bench/triton_sglang.py) against
               attnmeta.create_kv_indptr_and_indices (one launch);
  fa3          FA3's decode metadata (lengths, cu_seqlens_k, page table):
               SGLang's fused kernel re-implemented against
               attnmeta.normal_decode_set_metadata;
  dsa          DSA's decode metadata (lengths, their top-k clip and prefix
               sums, page_table_1 or not, the real page table): the fused
               kernel re-implemented, and SGLang's torch path (the one ROCm
               takes), against attnmeta.fused_dsa_decode_metadata;
  draft        EAGLE's multi-step draft decode lists (section 14; 5 steps,
               top-k 1 and 4, pages of 1 and 64): SGLang's kernel
               re-implemented against attnmeta.generate_draft_decode_kv_indices
               (not in the default builds: --builds draft).

Cases: bs in {1, 8, 64, 256} requests of ctx/2 to ctx tokens, ctx in
{4096, 32768}, page sizes 1 and 64 (FA3), 64 (DSA, top-k 2048). Inputs
follow SGLang's graph buffers: int64 req_pool_indices and seq_lens, a
req_to_token pool whose row 0 is reserved. Outputs are checked equal on
what both sides write before timing; a mismatch fails the run. For each
implementation: device us per build (bench/timing.py's CUDA-graph replay,
median), host us to issue a build eagerly, and GPU operations per build
(torch.profiler).

Usage: python3 bench/sglang_compare.py [--json FILE] [--quick] [--library PATH]
           [--builds flashinfer,fa3,dsa,draft] [--bs 1,8] [--ctx 4096]
"""

import argparse
import datetime
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from timing import (add_run_args, count_launches, cuda_torch, library_of, load_attnmeta,  # noqa: E402
                    parse_run_args, time_eager, time_graph)

BS = (1, 8, 64, 256)
CTX = (4096, 32768)
TOPK = 2048
STALE = -77


def make_pool(torch, bs, ctx, seed):
    gen = torch.Generator().manual_seed(seed)
    rows = bs + 1
    r2t = torch.randint(0, 1 << 22, (rows, ctx + 128), generator=gen, dtype=torch.int32)
    r2t[0] = 0
    rpi = torch.randperm(bs, generator=gen).to(torch.int64) + 1
    seq = torch.randint(ctx // 2, ctx + 1, (bs,), generator=gen, dtype=torch.int64)
    return r2t.cuda(), rpi.cuda(), seq.cuda()


def check(torch, name, pairs):
    for what, mine, theirs in pairs:
        if not torch.equal(mine, theirs):
            bad = (mine != theirs).nonzero()[:4].tolist()
            raise AssertionError("%s: %s differs (first at %s)" % (name, what, bad))


def flashinfer_case(torch, am, tr, bs, ctx):
    r2t, rpi, seq = make_pool(torch, bs, ctx, bs * 31 + ctx)
    total = int(seq.sum())
    ip_a, ip_t = (torch.zeros(bs + 1, dtype=torch.int32, device="cuda") for _ in range(2))
    out_a, out_t = (torch.full((total,), STALE, dtype=torch.int32, device="cuda") for _ in range(2))
    impls = dict(
        attnmeta=lambda i: am.create_kv_indptr_and_indices[(bs,)](
            r2t, rpi, seq, ip_a, None, out_a, r2t.stride(0)),
        triton=lambda i: tr.slot_list(torch, r2t, rpi, seq, ip_t, out_t, bs))
    impls["attnmeta"](0)
    impls["triton"](0)
    torch.cuda.synchronize()
    check(torch, "flashinfer", [("kv_indptr", ip_a, ip_t), ("kv_indices", out_a, out_t)])
    return impls


def fa3_case(torch, am, tr, bs, ctx, ps):
    r2t, rpi, seq = make_pool(torch, bs, ctx, bs * 37 + ctx + ps)
    pages = (ctx + ps - 1) // ps
    bufs = [[torch.full((bs,), STALE, dtype=torch.int32, device="cuda"),
             torch.zeros(bs + 1, dtype=torch.int32, device="cuda"),
             torch.full((bs, pages + 8), STALE, dtype=torch.int32, device="cuda")] for _ in range(2)]
    a, t = bufs
    impls = dict(
        attnmeta=lambda i: am.normal_decode_set_metadata(a[0], a[1], a[2], r2t, rpi, pages, seq,
                                                         0, ps),
        triton=lambda i: tr.fa3_decode(t[0], t[1], t[2], r2t, rpi, pages, seq, 0, ps))
    impls["attnmeta"](0)
    impls["triton"](0)
    torch.cuda.synchronize()
    check(torch, "fa3", [("cache_seqlens", a[0], t[0]), ("cu_seqlens_k", a[1], t[1]),
                         ("page_table", a[2], t[2])])
    return impls


def dsa_case(torch, am, tr, bs, ctx, ps, with_table_1):
    r2t, rpi, seq = make_pool(torch, bs, ctx, bs * 41 + ctx + with_table_1)
    max_len = ctx

    def buffers():
        return [torch.full((bs,), STALE, dtype=torch.int32, device="cuda"),
                torch.zeros(bs + 1, dtype=torch.int32, device="cuda"),
                torch.full((bs, max_len), STALE, dtype=torch.int32, device="cuda")
                if with_table_1 else None,
                torch.full((bs,), STALE, dtype=torch.int32, device="cuda"),
                torch.zeros(bs + 1, dtype=torch.int32, device="cuda"),
                torch.full((bs, (max_len + ps - 1) // ps), STALE, dtype=torch.int32, device="cuda")]

    a, t, u = buffers(), buffers(), buffers()
    impls = dict(
        attnmeta=lambda i: am.fused_dsa_decode_metadata(seq, rpi, r2t, a[0], a[1], a[2], a[3], a[4],
                                                        a[5], bs, max_len, TOPK, ps),
        triton=lambda i: tr.dsa_decode(seq, rpi, r2t, t[0], t[1], t[2], t[3], t[4], t[5], bs,
                                       max_len, TOPK, ps),
        torch_ops=lambda i: tr.dsa_decode_unfused(torch, seq, rpi, r2t, u[0], u[1], u[2], u[3],
                                                  u[4], u[5], bs, max_len, TOPK, ps))
    for f in impls.values():
        f(0)
    torch.cuda.synchronize()
    pairs = [(n, a[k], t[k]) for k, n in ((0, "cache_seqlens"), (1, "cu_seqlens_k"),
                                          (3, "dsa_cache_seqlens"), (4, "dsa_cu_seqlens_k"),
                                          (5, "real_page_table"))]
    if with_table_1:
        pairs.append(("page_table_1", a[2], t[2]))
    check(torch, "dsa", pairs)
    live = (seq.to(torch.int32).clamp(max=max_len) + ps - 1) // ps  # the torch path's live pages
    cols = torch.arange(u[5].shape[1], device="cuda")
    mask = cols[None, :] < live[:, None]
    check(torch, "dsa torch path", [("lengths", u[3], a[3]), ("sums", u[4], a[4]),
                                    ("real_page_table", u[5][mask], a[5][mask])])
    return impls


def draft_case(torch, am, tr, bs, ctx, topk, ps, steps=5):
    gen = torch.Generator().manual_seed(bs * 43 + ctx + topk + ps)
    # room for every branch's draft pages past the longest row
    r2t = torch.randint(0, 1 << 22, (bs + 1, ctx + topk * (steps + 2 * ps) + 8), generator=gen,
                        dtype=torch.int32)
    r2t[0] = 0
    rpi = (torch.randperm(bs, generator=gen).to(torch.int64) + 1).cuda()
    seq = torch.randint(ctx // 2, ctx + 1, (bs,), generator=gen, dtype=torch.int64).cuda()
    r2t = r2t.cuda()
    pos = seq.repeat_interleave(topk)
    width = topk * int(seq.sum()) + steps * bs * topk
    lists = [torch.full((steps, width), STALE, dtype=torch.int32, device="cuda") for _ in range(2)]
    ptrs = [torch.zeros((steps, bs * topk + 1), dtype=torch.int32, device="cuda") for _ in range(2)]

    def np2(n):
        return 1 << (int(n) - 1).bit_length() if n > 1 else 1

    impls = dict(
        attnmeta=lambda i: am.generate_draft_decode_kv_indices[(steps, bs, topk)](
            rpi, r2t, seq, lists[0], ptrs[0], pos, r2t.stride(0), width, ptrs[0].shape[1],
            np2(bs), np2(steps), np2(bs * topk), ps),
        triton=lambda i: tr.draft_decode(rpi, r2t, seq, lists[1], ptrs[1], pos, steps, bs, topk,
                                         ps))
    impls["attnmeta"](0)
    impls["triton"](0)
    torch.cuda.synchronize()
    check(torch, "draft", [("kv_indices", lists[0], lists[1]), ("kv_indptr", ptrs[0], ptrs[1])])
    return impls


def measure(torch, impls, args):
    out = {}
    for name, step in impls.items():
        g = time_graph(torch, step, 1, args.steps, args.repeats, args.target_ms)
        e = time_eager(torch, step, 1, args.repeats, args.target_ms)
        out[name] = dict(device_us=g["median"], device_min_us=g["min"], host_us=e["median"],
                         launches=count_launches(torch, step, 1))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_args(ap)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--builds", default="flashinfer,fa3,dsa")
    ap.add_argument("--bs", default=",".join(map(str, BS)))
    ap.add_argument("--ctx", default=",".join(map(str, CTX)))
    args = parse_run_args(ap)
    torch = cuda_torch("sglang_compare")
    if torch is None:
        return 2
    am, why = load_attnmeta(args.library)
    if am is None:
        print(why, file=sys.stderr)
        return 2
    import triton_sglang as tr
    builds = args.builds.split(",")
    results, failed = [], 0
    for bs in map(int, args.bs.split(",")):
        for ctx in map(int, args.ctx.split(",")):
            cases = []
            if "flashinfer" in builds:
                cases.append(("flashinfer", {}, lambda: flashinfer_case(torch, am, tr, bs, ctx)))
            if "fa3" in builds:
                for ps in (1, 64):
                    cases.append(("fa3", dict(page_size=ps),
                                  lambda ps=ps: fa3_case(torch, am, tr, bs, ctx, ps)))
            if "dsa" in builds:
                for t1 in (True, False):
                    cases.append(("dsa", dict(page_size=64, page_table_1=t1),
                                  lambda t1=t1: dsa_case(torch, am, tr, bs, ctx, 64, t1)))
            if "draft" in builds:
                for topk, ps in ((1, 1), (4, 1), (4, 64)):
                    cases.append(("draft", dict(topk=topk, page_size=ps, steps=5),
                                  lambda topk=topk, ps=ps: draft_case(torch, am, tr, bs, ctx,
                                                                      topk, ps)))
            for build, extra, make in cases:
                row = dict(build=build, bs=bs, ctx=ctx, **extra)
                try:
                    row["impls"] = measure(torch, make(), args)
                    a, t = row["impls"]["attnmeta"], row["impls"]["triton"]
                    row["device_ratio"] = a["device_us"] / t["device_us"]
                except Exception as exc:
                    traceback.print_exc()
                    row["error"] = "%s: %s" % (type(exc).__name__, exc)
                    failed += 1
                results.append(row)
                print(json.dumps(row), flush=True)
    doc = dict(script="bench/sglang_compare.py", when=datetime.datetime.utcnow().isoformat() + "Z",
               device=torch.cuda.get_device_name(), library=library_of(am), results=results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
