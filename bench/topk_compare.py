#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GPU timing of the per-layer sparse top-k conversion (contract section 6)
on one GPU, in one process, on the same inputs:

  attnmeta        attnmeta_convert_topk through the Python binding (TopkPlan),
                  without counts, with counts, and compacted with counts;
  triton          the engines' kernel re-implemented in bench/triton_topk.py
                  (a program per token and 128-column tile), without counts,
                  and with counts as triton_counts_atomic (counter zeroing +
                  kernel with atomic adds, as the engines issue it);
  triton_row      the single-tile form (a program per token over its whole
                  row, the count a reduction in registers, one launch):
                  without counts, and with counts as triton_counts, the
                  reference of the counted mode;
  copy            a device copy of the same T x K int32 (what the conversion
                  must at least move: read the indices, write the slots).

Cases: T in {1, 8, 64, 256, 1024} tokens x K in {512, 2048}, decode (one
token a request), block size 64, requests of 8k to 64k positions, random
positions. Each case is timed warm (one input set, L2-resident when it
fits) and cold (input and output sets rotated so their footprint exceeds
2 x L2 when at most MAX_SETS sets can do it; the footprint reached is
recorded). Device time: STEPS calls captured in one CUDA graph, replayed
between CUDA events, median over repeats (bench/timing.py, as the other
scripts measure).

The copy bound of a case is its bytes (T x K x 4 read, the same written,
plus T x 4 request ids) divided by the bandwidth of a 512 MiB device copy
measured in the same run. Targets (issue tracker, issue 18): attnmeta
<= 1.2 x the copy bound where memory-bound, <= 0.5 x the Triton kernel's
time where latency-bound. The ratios am/triton take the best Triton form of
each mode (the faster of triton and triton_row plain; triton_counts, the
single-tile kernel, counted). Outputs are checked equal (attnmeta vs every
Triton form, both modes) before timing; a mismatch fails the run.

With --chain, each conversion is also timed between a producer and a
consumer kernel (warm), with and without early start (attnmeta_early:
TopkPlan(early_start=True), ATTNMETA_LAUNCH_EARLY_START), and its share of
the chain printed against Triton's (the issue's early-start target).

Usage: python3 bench/topk_compare.py [--json FILE] [--print-json] [--quick] [--library PATH]
           [--modes warm,cold] [--tokens 1,8] [--topk 512] [--one-group] [--chain]
"""

import argparse
import datetime
import json
import math
import os
import statistics
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from timing import add_run_args, cuda_torch, load_attnmeta, parse_run_args, time_graph  # noqa: E402
TOKENS = (1, 8, 64, 256, 1024)
TOPK = (512, 2048)
BLOCK = 64
MAX_SETS = 1024
POISON = -0x5A5A5A5B


def load_triton():
    try:
        import triton_topk
        return triton_topk, None
    except Exception as exc:
        return None, "triton not importable: %s" % exc


def copy_bandwidth(torch, repeats):
    """Bytes per us (read + write) of a 512 MiB device-to-device copy."""
    n = 128 << 20
    a = torch.ones(n, dtype=torch.int32, device="cuda")
    b = torch.empty_like(a)
    b.copy_(a)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = []
    for _ in range(max(repeats, 3)):
        start.record()
        for _ in range(5):
            b.copy_(a)
        stop.record()
        stop.synchronize()
        best.append(start.elapsed_time(stop) * 1e3 / 5)
    del a, b
    us = statistics.median(best)
    return 2 * 4 * n / us


def make_case(torch, T, K, nsets, seed):
    """Input/output sets of one case and the shared block table."""
    gen = torch.Generator().manual_seed(seed)
    R = T
    seq = torch.randint(8192, 65536, (R,), generator=gen, dtype=torch.int64)
    cols = int(math.ceil(65536 / BLOCK))
    table = torch.randint(0, 1 << 20, (R, cols), generator=gen, dtype=torch.int32).cuda()
    req = torch.arange(R, dtype=torch.int32)
    sets = []
    for _ in range(nsets):
        x = (torch.rand((T, K), generator=gen) * seq[req.long()].unsqueeze(1).double()).to(torch.int32)
        x[:, -K // 16:] = -1  # some rows end early, as the indexer pads short requests
        sets.append(dict(req=req.cuda(), topk=x.cuda(),
                         out=torch.full((T, K), POISON, dtype=torch.int32, device="cuda"),
                         count=torch.zeros(T, dtype=torch.int32, device="cuda")))
    return table, sets


# The conversion between the kernels it sits between in a sparse layer: a
# producer writing the indices (the indexer's top-k; here a device copy into
# them) and a consumer reading the slots (the sparse attention; here a copy
# out of them). A conversion's share of the chain is the chain's time less
# the pair's (producer and consumer alone).
CHAINED = ("attnmeta", "attnmeta_early", "attnmeta_counts", "attnmeta_counts_early", "triton",
           "triton_row", "triton_counts")


def add_chains(torch, impls, sets):
    src = [s["topk"].clone() for s in sets]
    sink = [torch.empty_like(s["out"]) for s in sets]

    def produce(i):
        sets[i]["topk"].copy_(src[i])

    def consume(i):
        sink[i].copy_(sets[i]["out"])

    def pair(i):
        produce(i)
        consume(i)
    impls["chain_pair"] = pair
    for name in CHAINED:
        if name in impls:
            impls["chain_" + name] = (lambda f: (lambda i: (produce(i), f(i), consume(i))))(impls[name])


def chain_share(res, name):
    chain, pair = med(res, "chain_" + name), med(res, "chain_pair")
    return chain - pair if chain is not None and pair is not None else None


def run_case(torch, am, tr, T, K, cold, l2, bw, args):
    set_bytes = 2 * T * K * 4 + 2 * T * 4
    nsets = 1
    if cold:
        nsets = int(min(max(math.ceil(2.2 * l2 / set_bytes), 2), MAX_SETS))
    table, sets = make_case(torch, T, K, nsets, seed=T * 7919 + K)
    res = dict(T=T, K=K, mode="cold" if cold else "warm", sets=nsets,
               footprint_bytes=nsets * set_bytes, footprint_over_l2=nsets * set_bytes / l2,
               bytes=2 * T * K * 4 + T * 4)
    res["copy_bound_us"] = res["bytes"] / bw
    steps = max(args.steps, nsets)
    impls = {}
    if am is not None:
        for name, kw in (("attnmeta", {}), ("attnmeta_counts", dict(count=True)),
                         ("attnmeta_compact", dict(count=True, compact=True)),
                         ("attnmeta_early", dict(early=True)),
                         ("attnmeta_counts_early", dict(count=True, early=True))):
            plans = [am.TopkPlan(s["topk"], table, s["out"], req_id=s["req"], block_size=BLOCK,
                                 valid_counts=s["count"] if kw.get("count") else None,
                                 compact=kw.get("compact", False),
                                 early_start=kw.get("early", False)) for s in sets]
            impls[name] = (lambda ps: (lambda i: ps[i].convert()))(plans)
    if am is not None and args.one_group:
        # the same conversion with one row a block (block = the plan's lanes)
        ctx = am.Context("cuda")
        ctx.set_launch_config(block=min(1 << max(0, math.ceil(math.log2(K / 4))), 512))
        for name, count in (("attnmeta_1g", False), ("attnmeta_counts_1g", True)):
            plans = [am.TopkPlan(s["topk"], table, s["out"], req_id=s["req"], block_size=BLOCK,
                                 valid_counts=s["count"] if count else None, context=ctx)
                     for s in sets]
            impls[name] = (lambda ps: (lambda i: ps[i].convert()))(plans)
    for split in (args.split if am is not None else ()):
        # the plain conversion of T x K as (T x split) rows of K / split
        # columns (same slots: a plain row's columns are independent)
        if K % split or K // split < 64:
            continue
        plans = [am.TopkPlan(s["topk"].view(T * split, K // split), table,
                             s["out"].view(T * split, K // split),
                             req_id=s["req"].repeat_interleave(split), block_size=BLOCK)
                 for s in sets]
        impls["attnmeta_split%d" % split] = (lambda ps: (lambda i: ps[i].convert()))(plans)
    if tr is not None and K % 128 == 0:
        for name, count in (("triton", False), ("triton_counts_atomic", True)):
            ks = [tr.TritonTopk(s["req"], table, s["topk"], s["out"],
                                s["count"] if count else None, block_size=BLOCK) for s in sets]
            impls[name] = (lambda kk: (lambda i: kk[i].launch()))(ks)
    if tr is not None and K & (K - 1) == 0:
        for name, count in (("triton_row", False), ("triton_counts", True)):
            ks = [tr.TritonTopkRow(s["req"], table, s["topk"], s["out"],
                                   s["count"] if count else None, block_size=BLOCK) for s in sets]
            impls[name] = (lambda kk: (lambda i: kk[i].launch()))(ks)
    copies = [(s["out"], s["topk"]) for s in sets]
    impls["copy"] = lambda i: copies[i][0].copy_(copies[i][1])
    if args.chain and not cold:
        add_chains(torch, impls, sets)

    # check: attnmeta and Triton agree, in both modes, on set 0
    results = {}
    plain_names = ("attnmeta", "attnmeta_early", "attnmeta_1g", "triton", "triton_row") + tuple(
        "attnmeta_split%d" % v for v in args.split)
    counted_names = ("attnmeta_counts", "attnmeta_counts_early", "attnmeta_counts_1g",
                     "triton_counts_atomic", "triton_counts")
    for name in plain_names + counted_names:
        if name in impls:
            sets[0]["out"].fill_(POISON)
            sets[0]["count"].fill_(POISON if name.startswith("attnmeta") else 0)
            impls[name](0)
            torch.cuda.synchronize()
            results[name] = (sets[0]["out"].clone(), sets[0]["count"].clone())
    res["check"] = "ok"
    pairs = [("attnmeta", b, False) for b in plain_names[1:]]
    pairs += [("attnmeta_counts", b, True) for b in counted_names[1:]]
    for a, b, counted in pairs:
        if a in results and b in results:
            if not torch.equal(results[a][0], results[b][0]) or (
                    counted and not torch.equal(results[a][1], results[b][1])):
                res["check"] = "FAIL: %s and %s disagree" % (a, b)
    for name, step in impls.items():
        try:
            res[name] = time_graph(torch, step, nsets, steps, args.repeats, args.target_ms)
        except Exception as exc:
            traceback.print_exc()
            res[name] = dict(error=str(exc))
    return res


def fmt(v):
    return "n/a" if v is None else ("%.2f" % v)


def med(res, name):
    r = res.get(name)
    return r.get("median") if isinstance(r, dict) else None


def best(res, names):
    v = [med(res, n) for n in names if med(res, n) is not None]
    return min(v) if v else None


def print_table(report):
    cols = ("attnmeta", "attnmeta_counts", "attnmeta_compact", "triton", "triton_row",
            "triton_counts_atomic", "triton_counts", "copy")
    print("\nsparse top-k conversion, GPU us per call (median); copy bound = bytes / %.0f GB/s"
          % (report["copy_bandwidth_gbs"]))
    print("triton: tiles; row: single tile; +cnt/at: tiles, zeroing + atomics; +cnt/row: single "
          "tile, the counted reference; am/triton: plain / counted against the best of each mode")
    print("%-5s %5s %5s %6s | %8s %8s %8s %8s %8s %8s %8s %8s | %6s | %9s %9s" % (
        "mode", "T", "K", "sets", "attnmeta", "+counts", "compact", "triton", "row", "+cnt/at",
        "+cnt/row", "copy", "bound", "am/bound", "am/triton"))
    for r in report["cases"]:
        am, trn = med(r, "attnmeta"), best(r, ("triton", "triton_row"))
        amc, trc = med(r, "attnmeta_counts"), best(r, ("triton_counts",))
        print("%-5s %5d %5d %6d | %s | %6.2f | %9s %9s  %s" % (
            r["mode"], r["T"], r["K"], r["sets"],
            " ".join("%8s" % fmt(med(r, c)) for c in cols), r["copy_bound_us"],
            fmt(am / r["copy_bound_us"]) if am else "n/a",
            ("%s/%s" % (fmt(am / trn) if am and trn else "n/a", fmt(amc / trc) if amc and trc else "n/a")),
            r["check"]))
    if any(med(r, "attnmeta_1g") is not None for r in report["cases"]):
        print("\none row a block (--one-group): plain / counted, us")
        for r in report["cases"]:
            print("%-5s %5d %5d | %8s %8s" % (r["mode"], r["T"], r["K"], fmt(med(r, "attnmeta_1g")),
                                          fmt(med(r, "attnmeta_counts_1g"))))
    splits = sorted({int(n[len("attnmeta_split"):]) for r in report["cases"] for n in r
                     if n.startswith("attnmeta_split")})
    if splits:
        print("\nrows split (--split): plain us, T x K as (T x s) rows of K / s")
        print("%-5s %5s %5s | %s" % ("mode", "T", "K", " ".join("%8s" % ("s=%d" % v) for v in splits)))
        for r in report["cases"]:
            print("%-5s %5d %5d | %s" % (r["mode"], r["T"], r["K"], " ".join(
                "%8s" % fmt(med(r, "attnmeta_split%d" % v)) for v in splits)))


def print_chains(report):
    rows = [r for r in report["cases"] if med(r, "chain_pair") is not None]
    if not rows:
        return
    print("\nin a chain (--chain): producer -> conversion -> consumer, us a step; share = chain - "
          "pair; early = ATTNMETA_LAUNCH_EARLY_START; ratio = attnmeta early share / the best "
          "Triton form's share")
    print("alone: the early launch timed alone (a graph of conversions only), plain / counted")
    print("%-5s %5s %5s | %6s | %7s %7s %7s | %7s %7s %7s | %6s %6s | %s" % (
        "mode", "T", "K", "pair", "am", "early", "triton", "am+c", "early+c", "trn+c",
        "plain", "count", "alone"))
    for r in rows:
        sh = {n: chain_share(r, n) for n in CHAINED}
        trn = min([v for v in (sh["triton"], sh["triton_row"]) if v is not None], default=None)
        trc = sh["triton_counts"]
        print("%-5s %5d %5d | %6s | %7s %7s %7s | %7s %7s %7s | %6s %6s | %s/%s" % (
            r["mode"], r["T"], r["K"], fmt(med(r, "chain_pair")), fmt(sh["attnmeta"]),
            fmt(sh["attnmeta_early"]), fmt(trn), fmt(sh["attnmeta_counts"]),
            fmt(sh["attnmeta_counts_early"]), fmt(trc),
            fmt(sh["attnmeta_early"] / trn) if sh["attnmeta_early"] and trn else "n/a",
            fmt(sh["attnmeta_counts_early"] / trc) if sh["attnmeta_counts_early"] and trc else "n/a",
            fmt(med(r, "attnmeta_early")), fmt(med(r, "attnmeta_counts_early"))))


def csv_ints(text):
    return tuple(int(v) for v in text.split(",") if v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write every number here")
    ap.add_argument("--print-json", action="store_true", help="print every number as one JSON line")
    ap.add_argument("--modes", default="warm,cold", help="warm, cold or both (comma-separated)")
    ap.add_argument("--tokens", type=csv_ints, default=TOKENS, help="T values, comma-separated")
    ap.add_argument("--topk", type=csv_ints, default=TOPK, help="K values, comma-separated")
    ap.add_argument("--split", type=csv_ints, default=(),
                    help="also time the plain conversion with each row split in this many rows")
    ap.add_argument("--chain", action="store_true",
                    help="also time each conversion between a producer and a consumer (warm)")
    ap.add_argument("--one-group", action="store_true",
                    help="also time attnmeta with one row a block (a launch config)")
    add_run_args(ap)
    args = parse_run_args(ap)
    torch = cuda_torch("topk_compare.py")
    if torch is None:
        return 2
    am, why_am = load_attnmeta(args.library)
    tr, why_tr = load_triton()
    for why in (why_am, why_tr):
        if why:
            print("topk_compare.py: %s" % why, file=sys.stderr)
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20) or (50 << 20)
    bw = copy_bandwidth(torch, args.repeats)
    report = dict(tool="bench/topk_compare.py",
                  date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                  device_name=torch.cuda.get_device_name(), torch_version=torch.__version__,
                  l2_bytes=l2, copy_bandwidth_gbs=bw / 1e3, block_size=BLOCK,
                  notes=dict(attnmeta=why_am, triton=why_tr), cases=[])
    failed = am is None
    modes = [m.strip() for m in args.modes.split(",")]
    for cold in [m == "cold" for m in ("warm", "cold") if m in modes]:
        for K in args.topk:
            for T in args.tokens:
                print("  %s T=%d K=%d" % ("cold" if cold else "warm", T, K), file=sys.stderr, flush=True)
                try:
                    res = run_case(torch, am, tr, T, K, cold, l2, bw, args)
                except Exception as exc:
                    traceback.print_exc()
                    res = dict(T=T, K=K, mode="cold" if cold else "warm", sets=0, copy_bound_us=0,
                               check="FAIL: %s" % exc)
                failed |= res["check"] != "ok"
                report["cases"].append(res)
                torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, default=str)
    if args.print_json:
        print("topk_compare.json: " + json.dumps(report, default=str))
    print_table(report)
    print_chains(report)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
