#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Host overhead of the Python binding: microseconds of host time per call,
eager (no graph), for the token map and the full step, with torch CUDA
tensors (or, with --device cpu / without torch, torch CPU tensors or NumPy
arrays on the CPU backend, where the time includes the work itself).

Each timed loop only issues launches: torch.cuda.synchronize() runs before
and after it, never inside. Calls are timed in batches small enough that
the launch queue never fills (a full queue would make the host wait for the
GPU and measure the GPU instead). Prints one table and, with --json PATH,
writes the figures as JSON.

The step is the C CLI's: 64 requests of 1 to 4 speculative tokens, KV
lengths of a few thousand, a 512-column block table (block size 64), padded
to 256 tokens, capacity 512.

With torch (>= 2.4) the same calls are also timed through the custom
operators of attnmeta.ops (torch.ops.attnmeta.*, what torch.compile sees),
called eagerly: the direct calls stay the default outside torch.compile,
and the "op:" rows show what the dispatcher would add to each.
"""

import argparse
import json
import platform
import random
import statistics
import sys
import time

REQS, COLS, BLOCK, PADDED, CAPACITY = 64, 512, 64, 256, 512


def _parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default=None, help="cuda (default when torch sees a GPU), cpu, or numpy")
    p.add_argument("--iters", type=int, default=2000, help="calls per repeat")
    p.add_argument("--batch", type=int, default=200, help="calls between synchronisations")
    p.add_argument("--repeats", type=int, default=7, help="repeats; the median is reported")
    p.add_argument("--json", default=None, help="also write the results to this file")
    return p.parse_args()


def _inputs():
    rng = random.Random(12345)
    qsl = [0]
    seq = []
    for _ in range(REQS):
        qlen = rng.randint(1, 4)
        qsl.append(qsl[-1] + qlen)
        seq.append(1000 + rng.randrange(7000) + qlen)
    table = [[r * COLS + c for c in range(COLS)] for r in range(REQS)]
    return qsl, seq, table


class _Numpy:
    name = "numpy"

    def __init__(self):
        import numpy as np

        self.np = np

    def i32(self, values):
        return self.np.array(values, dtype=self.np.int32)

    def zeros(self, shape, int64=False):
        return self.np.zeros(shape, dtype=self.np.int64 if int64 else self.np.int32)

    def sync(self):
        pass


class _Torch:
    def __init__(self, torch, device):
        self.torch = torch
        self.device = torch.device(device)
        self.name = "torch-" + self.device.type

    def i32(self, values):
        return self.torch.tensor(values, dtype=self.torch.int32, device=self.device)

    def zeros(self, shape, int64=False):
        dtype = self.torch.int64 if int64 else self.torch.int32
        return self.torch.zeros(shape, dtype=dtype, device=self.device)

    def sync(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)


def _pick(device):
    if device == "numpy":
        return _Numpy()
    try:
        import torch
    except ImportError:
        if device not in (None, "numpy"):
            sys.exit("torch is not importable: only --device numpy works here")
        return _Numpy()
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return _Torch(torch, device)


def _time(fn, arrays, iters, batch, repeats):
    """Median over repeats of the host microseconds per call."""
    for _ in range(min(200, iters)):
        fn()
    arrays.sync()
    results = []
    for _ in range(repeats):
        spent = 0
        done = 0
        while done < iters:
            n = min(batch, iters - done)
            arrays.sync()
            t0 = time.perf_counter_ns()
            for _ in range(n):
                fn()
            spent += time.perf_counter_ns() - t0
            done += n
        arrays.sync()
        results.append(spent / iters / 1000.0)
    return statistics.median(results), min(results)


def main():
    args = _parse()
    import attnmeta

    arrays = _pick(args.device)
    qsl_host, seq_host, table_host = _inputs()
    actual = qsl_host[-1]
    qsl = arrays.i32(qsl_host)
    seq_lens = arrays.i32(seq_host)
    table = arrays.i32(table_host)
    out = dict(
        token_to_req=arrays.zeros(PADDED),
        seq_lens_out=arrays.zeros(CAPACITY),
        block_table_out=arrays.zeros((PADDED, COLS)),
        decode_lens_out=arrays.zeros(PADDED),
        req_indices_out=arrays.zeros(PADDED),
        per_req_lens_out=arrays.zeros(REQS),
        positions=arrays.zeros(PADDED, int64=True),
        slot_mapping=arrays.zeros(CAPACITY, int64=True),
        error_word=arrays.zeros(1),
    )
    token_map_out = arrays.zeros(PADDED)
    plan = attnmeta.StepPlan(qsl, seq_lens=seq_lens, block_table=table, block_size=BLOCK, **out)
    indexer = attnmeta.IndexerDecodeMetadata(
        qsl, seq_lens, table, seq_lens_out=out["seq_lens_out"],
        block_table_out=out["block_table_out"], decode_lens_out=out["decode_lens_out"],
        req_indices_out=out["req_indices_out"], per_req_lens_out=out["per_req_lens_out"])
    token_plan = attnmeta.StepPlan(qsl, token_to_req=token_map_out)

    candidates = [
        ("token map: compute_token_to_req_indices",
         lambda: attnmeta.compute_token_to_req_indices(qsl, token_map_out, actual, PADDED)),
        ("token map: token_to_req", lambda: attnmeta.token_to_req(qsl, token_map_out, PADDED)),
        ("token map: StepPlan.build", lambda: token_plan.build(REQS, PADDED)),
        ("full step: build_step (checks every call)",
         lambda: attnmeta.build_step(qsl, PADDED, seq_lens=seq_lens, block_table=table,
                                     block_size=BLOCK, **out)),
        ("full step: StepPlan.build", lambda: plan.build(REQS, PADDED)),
        ("indexer: IndexerDecodeMetadata.build", lambda: indexer.build(REQS, PADDED)),
    ]
    # What the binding adds to the C call, in parts.
    from attnmeta import _arrays, _compile, _lib

    ctx = plan.context
    if plan.backend == attnmeta.Backend.CPU:
        candidates.append(("floor: attnmeta_build_step via ctypes, prepared step",
                           lambda: _lib.build_step(ctx._handle, plan._addr, None)))
    else:
        raw_stream = _arrays.torch_state().raw_stream
        index = plan.device
        candidates.append(("floor: attnmeta_build_step via ctypes, prepared step",
                           lambda: _lib.build_step(ctx._handle, plan._addr, raw_stream(index))))
        candidates.append(("part: torch's current raw stream", lambda: raw_stream(index)))
    candidates.append(("part: checking one buffer", lambda: _arrays.vec(qsl, "query_start_loc")))
    candidates.append(("part: the torch.compile check (is_compiling)", lambda: _compile.is_compiling()))
    # The torch custom operators (attnmeta.ops), called eagerly: what a
    # call costs through torch's dispatcher, against the direct calls above
    # (which stay the default outside torch.compile).
    if isinstance(arrays, _Torch):
        try:
            import attnmeta.ops  # noqa: F401

            torch = arrays.torch
            op_token_map = torch.ops.attnmeta.token_to_req_indices
            op_step = torch.ops.attnmeta.build_step
            names = attnmeta.ops.OUTPUTS
            step_outs = [out.get(n) for n in names]
            indexer_outs = [indexer.buffers.get(n) for n in names]
            candidates.append(("op: torch.ops.attnmeta.token_to_req_indices",
                               lambda: op_token_map(qsl, token_map_out, actual, PADDED)))
            candidates.append(("op: torch.ops.attnmeta.build_step, full step",
                               lambda: op_step(qsl, seq_lens, table, *step_outs, REQS, PADDED,
                                               CAPACITY, -1, BLOCK, 1, 0, 1)))
            candidates.append(("op: torch.ops.attnmeta.build_step, indexer",
                               lambda: op_step(qsl, seq_lens, table, *indexer_outs, REQS, PADDED,
                                               -1, -1, 1, 1, 0, 1)))
        except ImportError as exc:
            print("attnmeta.ops not measured: %s" % exc, file=sys.stderr)
    if isinstance(arrays, _Torch) and arrays.device.type == "cuda":
        torch = arrays.torch
        small = torch.zeros(16, dtype=torch.int32, device=arrays.device)
        candidates.append(("baseline: torch small.zero_()", lambda: small.zero_()))
        candidates.append(("baseline: torch.cuda.current_stream()",
                           lambda: torch.cuda.current_stream()))

    rows = []
    for name, fn in candidates:
        median, best = _time(fn, arrays, args.iters, args.batch, args.repeats)
        rows.append(dict(name=name, median_us=round(median, 3), min_us=round(best, 3)))

    info = dict(
        arrays=arrays.name,
        backend=plan.backend.name.lower(),
        device=plan.context.device_name,
        library=attnmeta.library_path,
        library_version=attnmeta.version_string(),
        python=platform.python_version(),
        iters=args.iters,
        batch=args.batch,
        repeats=args.repeats,
        case="R=%d T=%d C=%d cols=%d block=%d" % (REQS, PADDED, CAPACITY, COLS, BLOCK),
        date=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    )
    if isinstance(arrays, _Torch):
        info["torch"] = arrays.torch.__version__
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(info=info, results=rows), f, indent=2)
            f.write("\n")
    print("attnmeta binding host overhead: %s on %s (%s), %s" % (
        info["arrays"], info["backend"], info["device"], info["case"]))
    if info["backend"] == "cpu":
        print("(CPU backend: the times include building the metadata itself)")
    width = max(len(r["name"]) for r in rows)
    print("%-*s  %10s  %10s" % (width, "call", "median us", "min us"))
    for r in rows:
        print("%-*s  %10.2f  %10.2f" % (width, r["name"], r["median_us"], r["min_us"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
