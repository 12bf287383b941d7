# SPDX-License-Identifier: Apache-2.0
"""SGLang's CUDA-graph replay convention, for the graph tests
(test_sglang_graph_gpu, test_sglang_trtllm_graph_gpu): a graph captured
once for a padded batch of BS rows; every replay rewrites
``req_pool_indices`` and ``seq_lens`` in place, the padding rows pointing
at the reserved row 0 of ``req_to_token`` with SGLang's fill length. torch
(with a CUDA device) is imported only when a function needs it."""

import numpy as np

BS = 6            # the batch the graph is captured for
POOL_ROWS = 12
POOL_COLS = 384
FILL = 1          # SGLang's seq_len_fill_value for padding rows
POISON = -7


def pool(seed):
    """A req_to_token of random slots, row 0 reserved (zeros) for padding."""
    rng = np.random.default_rng(seed)
    r2t = rng.integers(1, 1 << 15, (POOL_ROWS, POOL_COLS)).astype(np.int32)
    r2t[0] = 0  # SGLang reserves row 0 for padding
    return r2t


def padded(step, dtype=np.int64):
    """(req_pool_indices, seq_lens) of the step's real rows, padded to BS."""
    rpi, seq = step
    pad = BS - len(rpi)
    return (np.array(list(rpi) + [0] * pad, np.int64),
            np.array(list(seq) + [FILL] * pad, dtype))


def cuda(x):
    import torch
    return torch.from_numpy(np.ascontiguousarray(x)).cuda()


def capture(build):
    """``build()`` run once on a side stream (SGLang's warm-up), then captured."""
    import torch
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        build()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        build()
    return graph


def replay(graph, rpi_dev, seq_dev, outs, rpi, seq, poison=None):
    """One replay on these contents; the outputs (or those of ``poison``)
    are poisoned first, so what it does not write shows."""
    import torch
    rpi_dev.copy_(torch.from_numpy(rpi))
    seq_dev.copy_(torch.from_numpy(seq))
    for o in outs if poison is None else poison:
        o.fill_(POISON)
    graph.replay()
    torch.cuda.synchronize()
    return [o.cpu().numpy() for o in outs]
