# SPDX-License-Identifier: Apache-2.0
"""Launch counts and timings of the stand-in's decode-step builds
(vllm_standin*.py) with and without attnmeta.integrations.vllm, for a
DeepSeek-V4-shaped step: per build, the stand-in's kernel launches and
torch operations before and after the patch and the attnmeta launches made,
then, patched, the host time of one eager build and (on CUDA) the GPU time
of one replay of the build captured in a CUDA graph.

The stand-in's own kernels are NumPy functions, so only the counts compare
with vLLM; the timings are those of the patched builds. The torch
operations counted are the ones the stand-in marks (copies, fills, diffs,
repeat_interleave, clamps, divisions); the elementwise arithmetic between
them is not counted.

    PYTHONPATH=python ATTNMETA_LIBRARY=BUILD/lib/libattnmeta.so \\
        python3 python/tests/vllm_standin_measure.py [--device cuda] [--json FILE]
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import vllm_standin  # noqa: E402

INDEXER = "vllm.v1.attention.backends.mla.indexer"
SWA = "vllm.v1.attention.backends.mla.sparse_swa"
LAYER = "vllm.v1.attention.backends.mla.flashmla_sparse"


class _Install:
    """monkeypatch's setitem/delitem, for use outside pytest."""

    def setitem(self, mapping, key, value):
        mapping[key] = value

    def delitem(self, mapping, key):
        del mapping[key]


def _step(xp, mods, reqs, next_n, width, capacity):
    qsl = [next_n * r for r in range(reqs + 1)]
    seq = [2048 + 13 * r for r in range(reqs)]
    cls = mods["vllm.v1.attention.backend"].CommonAttentionMetadata
    table = xp.i32([[1000 * r + c for c in range(width)] for r in range(reqs)])
    slots = xp.array(list(range(qsl[-1])), np.int64)
    return cls(xp.i32(qsl), xp.host(qsl), xp.i32(seq), table, reqs, qsl[-1], slot_mapping=slots,
               max_seq_len=max(seq))


def _scenarios(args):
    reqs, n, width, cap = args.requests, args.next_n, args.width, args.capacity
    layers = args.layers

    def indexer(options):
        def make(xp, mods):
            builder = mods[INDEXER].DeepseekV32IndexerMetadataBuilder(
                cap, width, num_speculative_tokens=n - 1, **options)
            common = _step(xp, mods, reqs, n, width, cap)
            return lambda: builder.build(0, common)
        return make

    def swa(xp, mods):
        builder = mods[SWA].DeepseekSparseSWAMetadataBuilder(cap, 128, block_size=64,
                                                             num_speculative_tokens=n - 1)
        common = _step(xp, mods, reqs, n, width, cap)
        return lambda: builder.build(0, common)

    def c128a(xp, mods):
        cls = mods[LAYER].FlashMLASparseMetadataBuilder
        builder = cls(cap, 64, num_speculative_tokens=n - 1)
        common = _step(xp, mods, reqs, n, width, cap)
        positions = []
        for r in range(reqs):
            first = int(common.seq_lens[r]) - n
            positions += [first + i for i in range(n)]
        common.positions = xp.array(positions, np.int64)
        return lambda: builder.build(0, common)

    def topk(xp, mods):
        layer = mods[LAYER]
        tokens = reqs * n
        rng = np.random.default_rng(1)
        req = xp.i32(np.repeat(np.arange(reqs), n).tolist())
        pos = xp.i32(rng.integers(-1, 4096, (tokens, 512)).tolist())
        table = xp.i32([[1000 * r + c for c in range(width)] for r in range(reqs)])
        return lambda: [layer.convert_layer_topk(req, table, pos, 64, 512)
                        for _ in range(layers)]

    return {
        "indexer varlen + compressed slot mapping (ratio 4)":
            (indexer(dict(supports_varlen=True, compress_ratio=4)), True),
        "indexer flattened": (indexer(dict(use_flattening=True)), True),
        "indexer native [B, next_n]": (indexer(dict()), True),
        "SWA builder (decode)": (swa, False),  # its host token map cannot be captured
        "C128A builder (decode)": (c128a, False),  # nor this one's
        "top-k conversion, %d layers" % layers: (topk, True),
    }


def _count(make, xp, patched):
    from attnmeta.integrations import vllm as integration

    mods = vllm_standin.install(_Install(), xp)
    handle = integration.patch_vllm() if patched else None
    build = make(xp, mods)
    build()  # warm-up (first-call caches)
    vllm_standin.LAUNCHES.clear()
    if handle is not None:
        handle.reset_counts()
    build()
    launches = vllm_standin.standin_launches()
    kernels = {k: v for k, v in launches.items() if not k.startswith("torch.")}
    ops = {k: v for k, v in launches.items() if k.startswith("torch.")}
    result = dict(kernels=kernels, torch_ops=ops)
    if handle is not None:
        result["attnmeta"] = {k: v for k, v in handle.launches.items() if v}
    return result, build, handle


def _time_host(build, sync, repeat):
    times = []
    for _ in range(repeat):
        sync()
        start = time.perf_counter()
        build()
        times.append((time.perf_counter() - start) * 1e6)
    sync()
    return statistics.median(times)


def _time_graph(torch, build, repeat):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        build()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        build()
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeat):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / repeat


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="numpy", choices=["numpy", "cpu", "cuda"])
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--next-n", type=int, default=2)
    parser.add_argument("--width", type=int, default=64, help="block-table columns")
    parser.add_argument("--capacity", type=int, default=512)
    parser.add_argument("--layers", type=int, default=61)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--json")
    args = parser.parse_args()
    torch = None
    if args.device == "numpy":
        xp = vllm_standin.Arrays()
    else:
        import torch

        xp = vllm_standin.Arrays(torch=torch, device=args.device)

    def sync():
        if args.device == "cuda":
            torch.cuda.synchronize()

    report = {}
    for name, (make, capturable) in _scenarios(args).items():
        before, _, _ = _count(make, xp, False)
        after, build, handle = _count(make, xp, True)
        row = dict(before=before, after=after,
                   patched_host_us=round(_time_host(build, sync, args.repeat), 1))
        if args.device == "cuda" and capturable:
            row["patched_graph_replay_gpu_us"] = round(_time_graph(torch, build, args.repeat), 2)
        handle.restore()
        report[name] = row
        print("%s: %s" % (name, json.dumps(row, sort_keys=True)), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=args.device, args=vars(args), report=report), f, indent=1,
                      sort_keys=True)


if __name__ == "__main__":
    main()
