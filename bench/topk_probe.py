#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where the top-k conversion's time goes: bench/topk_probe.cu's kernels,
attnmeta_convert_topk and the Triton kernels of bench/triton_topk.py timed
side by side in one process, on the same buffers and stream, as
bench/topk_compare.py times them (CUDA graph of STEPS calls, warm).

  probe_vec       Triton's single-tile layout written in CUDA (the engines'
                  checks only)
  probe_strided   the short body's layout, the engines' checks only
  probe_rows      attnmeta's short body, built into the probe library and
                  launched from it (the library's launch path left out)
  attnmeta        attnmeta_convert_topk through TopkPlan
  triton, triton_row

Every form's slots are checked equal to attnmeta's before timing.
With --once N, each form runs N times eagerly and nothing is timed (for a
profiler).

Usage: python3 bench/topk_probe.py --library build/lib/libattnmeta.so
           --probe topk_probe.so [--cases 1x512,1024x2048] [--once N] [--json FILE]
"""

import argparse
import ctypes
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from timing import cuda_torch, load_attnmeta, time_graph  # noqa: E402
from topk_compare import BLOCK, POISON, load_triton, make_case  # noqa: E402

PROBES = (("probe_vec", 0, False), ("probe_strided", 1, False), ("probe_rows", 2, False),
          ("probe_rows_counted", 3, True), ("clean", 4, False), ("clean_fill64", 5, False),
          ("clean_fill192", 6, False), ("clean_checked", 7, False), ("clean_wide", 8, False),
          ("probe_rows128", 9, False), ("probe_rows128_counted", 10, True),
          ("part_000", 11, False), ("part_100", 12, False), ("part_010", 13, False),
          ("part_110", 14, False), ("part_111", 15, False),
          ("rows_lean", 16, False), ("rows_lean128", 17, False))


def probe_impls(torch, lib, table, s):
    stream = lambda: ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)  # noqa: E731
    T, K = s["topk"].shape

    def launcher(which, counted):
        def go(_i):
            rc = lib.topk_probe_launch(
                which, stream(), ctypes.c_void_p(s["req"].data_ptr()),
                ctypes.c_void_p(table.data_ptr()), ctypes.c_int64(table.stride(0)),
                ctypes.c_void_p(s["topk"].data_ptr()), ctypes.c_int64(s["topk"].stride(0)),
                ctypes.c_void_p(s["out"].data_ptr()), ctypes.c_int64(s["out"].stride(0)),
                ctypes.c_void_p(s["count"].data_ptr() if counted else 0), T, K, table.shape[1],
                BLOCK)
            if rc:
                raise RuntimeError("probe launch failed: cudaError %d" % rc)
        return go
    return {name: launcher(which, counted) for name, which, counted in PROBES}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--library")
    ap.add_argument("--probe", required=True)
    ap.add_argument("--cases", default="1x512,8x512,64x512,1x2048,64x2048,1024x512,256x2048,1024x2048")
    ap.add_argument("--once", type=int, default=0)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json")
    args = ap.parse_args()
    torch = cuda_torch("topk_probe")
    if torch is None:
        return 1
    am, err = load_attnmeta(args.library)
    if am is None:
        print(err)
        return 1
    tr, err = load_triton()
    if tr is None:
        print(err)
    lib = ctypes.CDLL(args.probe)
    report = []
    for case in args.cases.split(","):
        T, K = (int(v) for v in case.split("x"))
        table, sets = make_case(torch, T, K, 1, seed=T * 7919 + K)
        s = sets[0]
        plan = am.TopkPlan(s["topk"], table, s["out"], req_id=s["req"], block_size=BLOCK)
        cplan = am.TopkPlan(s["topk"], table, s["out"], req_id=s["req"], block_size=BLOCK,
                            valid_counts=s["count"])
        impls = {"attnmeta": lambda _i: plan.convert(),
                 "attnmeta_counts": lambda _i: cplan.convert()}
        impls.update(probe_impls(torch, lib, table, s))
        if tr is not None:
            row = tr.TritonTopkRow(s["req"], table, s["topk"], s["out"], None, block_size=BLOCK)
            tile = tr.TritonTopk(s["req"], table, s["topk"], s["out"], None, block_size=BLOCK)
            rowc = tr.TritonTopkRow(s["req"], table, s["topk"], s["out"], s["count"],
                                    block_size=BLOCK)
            impls["triton_row"] = lambda _i: row.launch()
            impls["triton"] = lambda _i: tile.launch()
            impls["triton_counts"] = lambda _i: rowc.launch()
        ref = cref = None
        res = dict(T=T, K=K, check="ok")
        for name, f in impls.items():
            s["out"].fill_(POISON)
            s["count"].fill_(-7)
            f(0)
            torch.cuda.synchronize()
            got = (s["out"].clone(), s["count"].clone())
            if name == "attnmeta":
                ref = got
            elif ref is not None and not torch.equal(ref[0], got[0]):
                res["check"] = "FAIL: %s" % name
            if name == "attnmeta_counts":
                cref = got[1]
            if name in ("probe_rows_counted", "probe_rows128_counted", "triton_counts") and not torch.equal(cref, got[1]):
                res["check"] = "FAIL: %s counts" % name
        if args.once:
            for name, f in impls.items():
                for _ in range(args.once):
                    f(0)
                torch.cuda.synchronize()
            print(case, res["check"])
            continue
        for name, f in impls.items():
            res[name] = time_graph(torch, f, 1, args.steps, args.repeats, 10.0)["median"]
        report.append(res)
        print("%5d x %4d  %s  %s" % (T, K, "  ".join("%s %.2f" % (n, res[n]) for n in impls),
                                     res["check"]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0 if all(r["check"] == "ok" for r in report) else 1


if __name__ == "__main__":
    sys.exit(main())
