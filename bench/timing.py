#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How the bench scripts measure, in one place, so that compare.py,
topk_compare.py and triton_dsv4.py time every implementation the same way:

  time_graph      device us per call: `steps` calls captured in one
                  torch.cuda.CUDAGraph after a warm-up of as many calls
                  outside the capture, one probe of 2 replays to size a
                  repeat, then repeats of up to 100000 replays between CUDA
                  events (median, min, max);
  time_cold       the same with the inputs out of L2;
  time_eager      host us to issue one call eagerly, and us to completion;
  count_launches  GPU operations per call, from torch.profiler.

Also the options every script shares (add_run_args, parse_run_args), torch
with a GPU or the reason there is none (cuda_torch), and the binding
(load_attnmeta, library_of). Imports nothing but the standard library at
load time; torch is passed in.
"""

import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def add_run_args(ap):
    """The options of a timing run, common to the bench scripts."""
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--steps", type=int, default=50, help="calls captured per graph")
    ap.add_argument("--target-ms", type=float, default=10.0, help="wall time a repeat aims at")
    ap.add_argument("--library", help="path of libattnmeta.so (sets ATTNMETA_LIBRARY)")
    ap.add_argument("--quick", action="store_true", help="3 repeats, 3 ms a repeat")


def parse_run_args(ap):
    args = ap.parse_args()
    if args.quick:
        args.repeats, args.target_ms = 3, 3.0
    return args


def cuda_torch(script):
    """torch when it sees a GPU, else None (the reason printed as `script`'s)."""
    try:
        import torch
    except Exception as exc:
        print("%s: torch is not importable (%s); nothing to time" % (script, exc), file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print("%s: torch sees no GPU; nothing to time" % script, file=sys.stderr)
        return None
    return torch


def time_graph(torch, step, nsets, steps, repeats, target_ms, scrub=None):
    """Device us per step: `steps` calls captured in one CUDA graph (set i %
    nsets for call i), replayed between events; median/min/max of repeats.
    With `scrub`, scrub() runs before each call (and is timed with it)."""
    if scrub is not None:
        inner = step

        def step(i):
            scrub()
            inner(i)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for i in range(steps):  # warm-up, outside the capture
            step(i % nsets)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(steps):
            step(i % nsets)
    graph.replay()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def run(replays):
        start.record()
        for _ in range(replays):
            graph.replay()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1e3 / (replays * steps)

    per = max(run(2), 1e-3)
    replays = int(min(max(target_ms * 1e3 / (per * steps), 2), 100000))
    samples = sorted(run(replays) for _ in range(repeats))
    del graph
    return dict(median=statistics.median(samples), min=samples[0], max=samples[-1],
                replays=replays, steps=steps)


def time_cold(torch, step, nsets, repeats, target_ms, scrub_buf):
    """Device us per step with the inputs out of L2: with rotation (scrub_buf
    None) the graph cycles through all `nsets` sets (> 2 x L2 in all); else
    each step follows a write of scrub_buf (2 x L2), and a graph of the
    scrubs alone is subtracted."""
    steps = max(nsets, 50)
    if scrub_buf is None:
        g = time_graph(torch, step, nsets, steps, repeats, target_ms)
        g["method"] = "rotation of %d input sets" % nsets
        return g
    scrub = lambda: scrub_buf.fill_(1)  # noqa: E731
    both = time_graph(torch, step, nsets, steps, repeats, target_ms, scrub=scrub)
    alone = time_graph(torch, lambda i: None, 1, steps, repeats, target_ms, scrub=scrub)
    return dict(median=both["median"] - alone["median"], min=both["min"] - alone["max"],
                max=both["max"] - alone["min"], replays=both["replays"], steps=steps,
                scrub_us=alone["median"],
                method="L2 scrub of %d MB before each step, its time subtracted"
                % (scrub_buf.numel() * 4 >> 20))


def time_eager(torch, step, nsets, repeats, target_ms):
    """Host us to issue one step eagerly (no sync inside the loop), and us
    per step to completion."""
    for i in range(20):
        step(i % nsets)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(20):
        step(i % nsets)
    torch.cuda.synchronize()
    per = max((time.perf_counter() - t0) * 1e6 / 20, 1e-3)
    iters = int(min(max(target_ms * 1e3 / per, 10), 20000))
    host, done = [], []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(iters):
            step(i % nsets)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        host.append((t1 - t0) * 1e6 / iters)
        done.append((t2 - t0) * 1e6 / iters)
    host.sort()
    return dict(median=statistics.median(host), min=host[0], max=host[-1],
                complete=statistics.median(done), iterations=iters)


def count_launches(torch, step, nsets, steps=4):
    """GPU operations (kernels, copies, memsets) per step, from the profiler."""
    try:
        import warnings
        from torch.profiler import ProfilerActivity, profile
        torch.cuda.synchronize()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the profiler's notes about its cycles
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for i in range(steps):
                    step(i % nsets)
                torch.cuda.synchronize()
            n = 0
            for e in prof.events():
                if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA:
                    n += 1
        return n / steps
    except Exception as exc:
        print("launch count unavailable: %s" % exc, file=sys.stderr)
        return None


def load_attnmeta(library=None):
    """The binding, or (None, why). Looks in python/ of this checkout when
    the package is not installed."""
    if library:
        os.environ["ATTNMETA_LIBRARY"] = library
    try:
        import attnmeta  # noqa: F401
    except Exception:
        sys.path.insert(0, os.path.join(ROOT, "python"))
        try:
            import attnmeta  # noqa: F401
        except Exception as exc:
            return None, "attnmeta binding not importable: %s" % exc
    import attnmeta
    return attnmeta, None


def library_of(attnmeta):
    """The file the binding loaded, as text (None without a binding)."""
    if attnmeta is None:
        return None
    path = getattr(attnmeta, "library_path", None)
    try:
        path = path() if callable(path) else path
    except Exception:
        path = None
    return None if path is None else str(path)
