"""A stand-in for the parts of vLLM that attnmeta.integrations.vllm
replaces, shaped like vLLM's (module paths, class and method names,
parameters, the persistent buffers the builder owns) and computing what
vLLM computes, written with NumPy (or torch, when given) so the tests run
without vLLM. install(monkeypatch, xp) puts the modules into sys.modules."""

import sys
import types


class Arrays:
    """The few array operations the stand-in needs, for NumPy or torch."""

    def __init__(self, np=None, torch=None, device="cpu"):
        self.np, self.torch, self.device = np, torch, device

    def i32(self, values):
        if self.torch is not None:
            return self.torch.tensor(values, dtype=self.torch.int32, device=self.device)
        return self.np.array(values, dtype=self.np.int32)

    def zeros(self, shape):
        if self.torch is not None:
            return self.torch.zeros(shape, dtype=self.torch.int32, device=self.device)
        return self.np.zeros(shape, dtype=self.np.int32)

    def full(self, shape, value):
        z = self.zeros(shape)
        z[...] = value
        return z

    def cpu(self, x):
        return x.cpu() if self.torch is not None else x.copy()

    def repeat(self, x, counts, total):
        if self.torch is not None:
            return self.torch.repeat_interleave(x, counts.to(self.torch.int64), dim=0,
                                                output_size=total)
        return self.np.repeat(x, counts, axis=0)[:total]

    def arange(self, n):
        if self.torch is not None:
            return self.torch.arange(n, dtype=self.torch.int32, device=self.device)
        return self.np.arange(n, dtype=self.np.int32)

    def diff(self, x):
        return x[1:] - x[:-1]

    def tolist(self, x):
        return x.tolist()


def make_modules(xp, version="0.11.1", old_prepare=False):
    """The stand-in vllm package: {module name: module}."""

    class CommonAttentionMetadata:
        _token_to_req_indices_cache = None

        def __init__(self, query_start_loc, query_start_loc_cpu, seq_lens, block_table_tensor,
                     num_reqs, num_actual_tokens):
            self.query_start_loc = query_start_loc
            self.query_start_loc_cpu = query_start_loc_cpu
            self.seq_lens = seq_lens
            self.block_table_tensor = block_table_tensor
            self.num_reqs = num_reqs
            self.num_actual_tokens = num_actual_tokens

        def token_to_req_indices(self, buffer):
            """Build or reuse the per-token request map (vLLM's steps)."""
            num_tokens = self.num_actual_tokens
            if self._token_to_req_indices_cache is not None:
                return self._token_to_req_indices_cache[:num_tokens]
            num_mapped = int(self.query_start_loc_cpu[-1])
            query_lens = xp.diff(self.query_start_loc)
            mapped = xp.repeat(xp.arange(query_lens.shape[0]), query_lens, num_mapped)
            buffer[:num_mapped] = mapped
            if num_mapped < num_tokens:
                buffer[num_mapped:num_tokens] = 0
            self._token_to_req_indices_cache = buffer[: max(num_mapped, num_tokens)]
            return self._token_to_req_indices_cache[:num_tokens]

    class DecodeMetadata:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    class DeepseekV32IndexerMetadataBuilder:
        def __init__(self, max_tokens, width, use_native=False):
            self.decode_seq_lens_buffer = xp.full((max_tokens,), -9)
            self.expanded_block_table_buffer = xp.full((max_tokens, width), -9)
            self.decode_lens_buffer = xp.full((max_tokens,), -9)
            self.arange_buffer = xp.arange(max_tokens)
            self.use_native = use_native

        def _prepare_decode_tensors(self, seq_lens, block_table, decode_lens, decode_lens_cpu,
                                    query_start_loc, num_decodes, num_decode_tokens, use_native,
                                    next_n, max_decode_len):
            """vLLM's flattened (one row per token) decode tensors."""
            if use_native:
                return seq_lens, block_table, decode_lens, num_decodes, False
            actual = int(decode_lens_cpu.sum())
            offsets = xp.repeat(seq_lens - decode_lens - query_start_loc, decode_lens, actual)
            self.decode_seq_lens_buffer[:actual] = offsets + self.arange_buffer[:actual] + 1
            self.decode_seq_lens_buffer[actual:] = 0
            self.expanded_block_table_buffer[:actual] = xp.repeat(block_table, decode_lens, actual)
            if actual < num_decode_tokens:
                # vLLM clears only column 0 of the padding rows.
                self.expanded_block_table_buffer[actual:num_decode_tokens, 0] = 0
            self.decode_lens_buffer[:num_decode_tokens] = 1
            return (self.decode_seq_lens_buffer[:num_decode_tokens],
                    self.expanded_block_table_buffer[:num_decode_tokens],
                    self.decode_lens_buffer[:num_decode_tokens], num_decode_tokens, False)

        def build(self, common_prefix_len, common_attn_metadata, fast_build=False):
            c = common_attn_metadata
            num_decodes = c.num_reqs  # every request decodes in these tests
            num_decode_tokens = c.num_actual_tokens
            decode_lens = xp.diff(c.query_start_loc[: num_decodes + 1])
            self.decode_lens_buffer[:num_decodes] = decode_lens
            decode_lens = self.decode_lens_buffer[:num_decodes]
            decode_lens_cpu = xp.cpu(xp.diff(c.query_start_loc_cpu[: num_decodes + 1]))
            max_decode_len = int(decode_lens_cpu.max())
            seq_lens, block_table, decode_lens, batch, padded = self._prepare_decode_tensors(
                seq_lens=c.seq_lens[:num_decodes],
                block_table=c.block_table_tensor[:num_decodes],
                decode_lens=decode_lens,
                decode_lens_cpu=decode_lens_cpu,
                query_start_loc=c.query_start_loc[:num_decodes],
                num_decodes=num_decodes,
                num_decode_tokens=num_decode_tokens,
                use_native=self.use_native,
                next_n=max_decode_len,
                max_decode_len=max_decode_len,
            )
            return DecodeMetadata(seq_lens=seq_lens, block_table=block_table,
                                  decode_lens=decode_lens, batch=batch, requires_padding=padded)

    if old_prepare:  # a vLLM whose method has other parameters: left alone
        def _prepare_decode_tensors(self, seq_lens, block_table, decode_lens, query_start_loc,
                                    num_decodes, num_decode_tokens):
            raise AssertionError("not called by these tests")

        DeepseekV32IndexerMetadataBuilder._prepare_decode_tensors = _prepare_decode_tensors

    names = ["vllm", "vllm.v1", "vllm.v1.attention", "vllm.v1.attention.backend",
             "vllm.v1.attention.backends", "vllm.v1.attention.backends.mla",
             "vllm.v1.attention.backends.mla.indexer"]
    modules = {name: types.ModuleType(name) for name in names}
    for name in names[1:]:
        parent, _, child = name.rpartition(".")
        setattr(modules[parent], child, modules[name])
    modules["vllm"].__version__ = version
    modules["vllm.v1.attention.backend"].CommonAttentionMetadata = CommonAttentionMetadata
    modules["vllm.v1.attention.backends.mla.indexer"].DeepseekV32IndexerMetadataBuilder = (
        DeepseekV32IndexerMetadataBuilder)
    return modules


def install(monkeypatch, xp, **kw):
    """The stand-in modules in sys.modules (undone by monkeypatch)."""
    modules = make_modules(xp, **kw)
    for name in list(sys.modules):
        if name == "vllm" or name.startswith("vllm."):
            monkeypatch.delitem(sys.modules, name)
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    return modules
