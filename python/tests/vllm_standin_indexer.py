# SPDX-License-Identifier: Apache-2.0
"""The stand-in's token map, compressed slot mapping and sparse-indexer
metadata builder (see vllm_standin.py): vllm.v1.attention.ops.metadata,
vllm.v1.attention.backend, vllm.v1.attention.backends.utils,
vllm.v1.attention.backends.mla.compressor_utils and .indexer, and a module
that imports the token map by name (as vLLM's draft-decode update does)."""

import dataclasses
from typing import Any

import numpy as np

from vllm_standin import CallableKernel, Kernel, cdiv, stride0, token_request

MODULES = [
    "vllm.v1.attention.ops.metadata",
    "vllm.v1.attention.backend",
    "vllm.v1.attention.backends.utils",
    "vllm.v1.attention.backends.mla.compressor_utils",
    "vllm.v1.attention.backends.mla.indexer",
    "vllm.v1.spec_decode.draft_metadata",
]

# ---------------------------------------------------------------------------
# vllm.v1.attention.ops.metadata


def _token_request_mapping_body(grid, query_start_loc, output, num_reqs, num_mapped, num_tokens,
                                num_warps=4):
    tokens = np.arange(min(grid[0] * 256, num_tokens))
    req = token_request(query_start_loc, tokens, num_reqs)
    output[tokens] = np.where(tokens < num_mapped, req, 0)


_VARLEN_ARGS = ("query_start_loc", "seq_lens", "block_table", "output_seq_lens",
                "output_block_table", "decode_lens", "indices", "per_req_lens", "num_reqs",
                "num_tokens", "capacity", "input_stride", "output_stride", "BLOCK_COLS")


def _indexer_decode_metadata_body(grid, query_start_loc, seq_lens, block_table, output_seq_lens,
                                  output_block_table, decode_lens, indices, per_req_lens, num_reqs,
                                  num_tokens, capacity, input_stride, output_stride, BLOCK_COLS,
                                  num_warps=4):
    actual = int(query_start_loc[num_reqs])
    for token in range(grid[0]):
        if token < num_tokens:
            req = int(token_request(query_start_loc, token, num_reqs))
            valid = token < actual
            start, end = int(query_start_loc[req]), int(query_start_loc[req + 1])
            output_seq_lens[token] = (int(seq_lens[req]) - (end - start) + token - start + 1
                                      if valid else 0)
            decode_lens[token] = 1
            indices[token] = req if valid else num_reqs + token - actual
            output_block_table[token, :BLOCK_COLS] = (block_table[req, :BLOCK_COLS] if valid
                                                       else 0)
        else:
            tail = num_tokens + (token - num_tokens) * 256 + np.arange(256)
            output_seq_lens[tail[tail < capacity]] = 0
        if token < num_reqs:
            per_req_lens[token] = query_start_loc[token + 1] - query_start_loc[token]


def _fill_ops_metadata(m, xp, old_varlen_kernel=False, inline_varlen_kernel=True, **_):
    m._token_request_mapping_kernel = Kernel(
        "_token_request_mapping_kernel", _token_request_mapping_body,
        ("query_start_loc", "output", "num_reqs", "num_mapped", "num_tokens"))
    names = _VARLEN_ARGS[:-3] + _VARLEN_ARGS[-1:] if old_varlen_kernel else _VARLEN_ARGS
    if inline_varlen_kernel:  # added with it
        m._indexer_decode_metadata_kernel = Kernel(
            "_indexer_decode_metadata_kernel", _indexer_decode_metadata_body, names)

    def compute_token_to_req_indices(query_start_loc, out, num_mapped_tokens, num_tokens):
        """The request of each of the first num_tokens tokens (0 from
        num_mapped_tokens on), from the device boundaries only."""
        m._token_request_mapping_kernel[(cdiv(num_tokens, 256),)](
            query_start_loc, out, query_start_loc.shape[0] - 1, num_mapped_tokens, num_tokens,
            num_warps=4)
        return out[:num_tokens]

    m.compute_token_to_req_indices = compute_token_to_req_indices


# ---------------------------------------------------------------------------
# vllm.v1.attention.backend and .backends.utils


def _fill_backend(m, xp, **_):
    @dataclasses.dataclass(eq=False)  # a dataclass, as vLLM's; compared by identity
    class CommonAttentionMetadata:
        query_start_loc: Any
        query_start_loc_cpu: Any
        seq_lens: Any
        block_table_tensor: Any
        num_reqs: int
        num_actual_tokens: int
        slot_mapping: Any = None
        dcp_local_seq_lens: Any = None
        max_seq_len: int = 0
        positions: Any = None
        _token_to_req_indices_cache = None  # not a field: no annotation

        def token_to_req_indices(self, buffer):
            """Build or reuse the per-token request map."""
            num_tokens = self.num_actual_tokens
            if self._token_to_req_indices_cache is not None:
                return self._token_to_req_indices_cache[:num_tokens]
            num_mapped = int(self.query_start_loc_cpu[-1])
            query_lens = xp.diff(self.query_start_loc)
            xp.assign(buffer[:num_mapped],
                      xp.repeat(xp.arange(query_lens.shape[0]), query_lens, num_mapped))
            if num_mapped < num_tokens:
                xp.fill(buffer[num_mapped:num_tokens], 0)
            self._token_to_req_indices_cache = buffer[: max(num_mapped, num_tokens)]
            return self._token_to_req_indices_cache[:num_tokens]

    CommonAttentionMetadata.__module__ = m.__name__
    m.CommonAttentionMetadata = CommonAttentionMetadata


def _fill_utils(m, xp, **_):
    def split_decodes_and_prefills(common, decode_threshold=1, require_uniform=False,
                                   treat_short_extends_as_decodes=True):
        """Decodes first: requests with at most decode_threshold tokens (host
        boundaries), then prefills."""
        qsl = [int(v) for v in common.query_start_loc_cpu[: common.num_reqs + 1]]
        lens = [b - a for a, b in zip(qsl, qsl[1:])]
        num_decodes = 0
        while num_decodes < len(lens) and lens[num_decodes] <= decode_threshold:
            num_decodes += 1
        decode_tokens = qsl[num_decodes]
        # padding tokens past the real ones belong to the decode part
        if num_decodes == common.num_reqs:
            decode_tokens = common.num_actual_tokens
        return (num_decodes, common.num_reqs - num_decodes, decode_tokens,
                common.num_actual_tokens - decode_tokens)

    def get_dcp_local_seq_lens(seq_lens, dcp_world_size=1, dcp_rank=None,
                               cp_kv_cache_interleave_size=1):
        """This rank's share of each length (KV token i on rank (i / I) % W)."""
        world, inter = dcp_world_size, cp_kv_cache_interleave_size
        base = xp.floordiv(xp.floordiv(seq_lens, inter), world) * inter
        rest = seq_lens - base * world
        low = rest - dcp_rank * inter
        low = xp.clamp_min(low, 0, "dcp_clamp")
        if xp.torch is not None:
            low = low.clamp(max=inter)
        else:
            low = np.minimum(low, inter)
        return base + low

    m.split_decodes_and_prefills = split_decodes_and_prefills
    m.get_dcp_local_seq_lens = get_dcp_local_seq_lens


# ---------------------------------------------------------------------------
# vllm.v1.attention.backends.mla.compressor_utils


def _compressed_slot_mapping_body(grid, slot_mapping, query_start_loc, seq_lens, block_table,
                                  block_table_stride, block_size, COMPRESS_RATIO, CP_WORLD_SIZE,
                                  CP_RANK, CP_KV_CACHE_INTERLEAVE_SIZE, PAD_ID, TRITON_BLOCK_SIZE):
    world, rank, inter = CP_WORLD_SIZE, CP_RANK, CP_KV_CACHE_INTERLEAVE_SIZE
    for b in range(grid[0]):
        start, end = int(query_start_loc[b]), int(query_start_loc[b + 1])
        first = int(seq_lens[b]) - (end - start)
        for i in range(end - start):
            pos = first + i
            row = pos // COMPRESS_RATIO
            vblock = block_size * world
            block, voff = row // vblock, row % vblock
            ok = (pos + 1) % COMPRESS_RATIO == 0 and (voff // inter) % world == rank
            slot = PAD_ID
            if ok:
                slot = (int(block_table[b, block]) * block_size
                        + (voff // (world * inter)) * inter + voff % inter)
            slot_mapping[start + i] = slot


def _pcp_compressed_slot_mapping_body(grid, logical_slot_mapping, positions,
                                      compressed_slot_mapping, num_tokens, storage_block_size,
                                      LOGICAL_BLOCK_SIZE, COMPRESS_RATIO, PAD_ID,
                                      TRITON_BLOCK_SIZE):
    for t in range(min(grid[0] * TRITON_BLOCK_SIZE, num_tokens)):
        slot, pos = int(logical_slot_mapping[t]), int(positions[t])
        ok = slot >= 0 and (pos + 1) % COMPRESS_RATIO == 0
        compressed_slot_mapping[t] = ((slot // LOGICAL_BLOCK_SIZE) * storage_block_size
                                      + (slot % LOGICAL_BLOCK_SIZE) // COMPRESS_RATIO
                                      if ok else PAD_ID)


def _fill_pcp(m, xp):
    m._pcp_compressed_slot_mapping_kernel = Kernel(
        "_pcp_compressed_slot_mapping_kernel", _pcp_compressed_slot_mapping_body,
        ("logical_slot_mapping_ptr", "positions_ptr", "compressed_slot_mapping_ptr",
         "num_tokens", "storage_block_size", "LOGICAL_BLOCK_SIZE", "COMPRESS_RATIO", "PAD_ID",
         "TRITON_BLOCK_SIZE"))

    def get_pcp_compressed_slot_mapping(logical_slot_mapping, positions, logical_block_size,
                                        storage_block_size, compress_ratio, out=None):
        n = int(logical_slot_mapping.shape[0])
        assert int(positions.shape[0]) == n
        assert logical_block_size % compress_ratio == 0
        assert storage_block_size == logical_block_size // compress_ratio
        if out is None:  # uninitialised, as torch.empty_like
            slots = xp.full((n,), -12345, np.int64)
            xp._op("empty_like")
        else:
            assert int(out.shape[0]) >= n
            slots = out[:n]
        if n == 0:
            return slots
        m._pcp_compressed_slot_mapping_kernel[(cdiv(n, 256),)](
            logical_slot_mapping, positions, slots, n, storage_block_size,
            LOGICAL_BLOCK_SIZE=logical_block_size, COMPRESS_RATIO=compress_ratio, PAD_ID=-1,
            TRITON_BLOCK_SIZE=256)
        return slots

    m.get_pcp_compressed_slot_mapping = get_pcp_compressed_slot_mapping


def _fill_compressor_utils(m, xp, **_):
    _fill_pcp(m, xp)
    m._compressed_slot_mapping_kernel = Kernel(
        "_compressed_slot_mapping_kernel", _compressed_slot_mapping_body,
        ("slot_mapping_ptr", "query_start_loc_ptr", "seq_lens_ptr", "block_table_ptr",
         "block_table_stride", "block_size", "COMPRESS_RATIO", "CP_WORLD_SIZE", "CP_RANK",
         "CP_KV_CACHE_INTERLEAVE_SIZE", "PAD_ID", "TRITON_BLOCK_SIZE"))

    def get_compressed_slot_mapping(num_tokens, query_start_loc, seq_lens, block_table,
                                    block_size, compress_ratio, out=None, cp_world_size=1,
                                    cp_rank=0, cp_kv_cache_interleave_size=1):
        if out is not None:
            xp.fill(out, -1)  # the whole buffer, not only [:num_tokens]
            slot_mapping = out[:num_tokens]
        else:
            slot_mapping = xp.full((num_tokens,), -1, np.int64)
            xp._op("full")
        m._compressed_slot_mapping_kernel[(block_table.shape[0],)](
            slot_mapping, query_start_loc, seq_lens, block_table, stride0(block_table),
            block_size, compress_ratio,
            CP_WORLD_SIZE=cp_world_size, CP_RANK=cp_rank,
            CP_KV_CACHE_INTERLEAVE_SIZE=cp_kv_cache_interleave_size, PAD_ID=-1,
            TRITON_BLOCK_SIZE=1024)
        return slot_mapping

    m.get_compressed_slot_mapping = get_compressed_slot_mapping


# ---------------------------------------------------------------------------
# vllm.v1.attention.backends.mla.indexer


def _uniform_decode_body(grid, seq_lens, decode_seq_lens, block_table, expanded_block_table,
                         decode_lens, num_decode_tokens, max_decode_len):
    cols = block_table.shape[1]
    for idx in range(grid[0]):
        req, local = idx // max_decode_len, idx % max_decode_len
        decode_seq_lens[idx] = max(int(seq_lens[req]) - max_decode_len + local + 1, 0)
        expanded_block_table[idx, :cols] = block_table[req]
        decode_lens[idx] = 1


class _Record:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def _fill_indexer(m, xp, old_prepare=False, inline_varlen_kernel=True, **_):
    """inline_varlen_kernel=False: the varlen path as vLLM had it before its
    inline kernel (through _prepare_decode_tensors, with the request ids
    from _build_varlen_decode_indices)."""
    utils = _current["vllm.v1.attention.backends.utils"]
    compressor = _current["vllm.v1.attention.backends.mla.compressor_utils"]
    # module-level imports, as indexer.py has them
    m.get_compressed_slot_mapping = compressor.get_compressed_slot_mapping
    m.get_dcp_local_seq_lens = utils.get_dcp_local_seq_lens
    m.split_decodes_and_prefills = utils.split_decodes_and_prefills
    m._PREPARE_UNIFORM_DECODE_KERNEL = CallableKernel(
        "_PREPARE_UNIFORM_DECODE_KERNEL", _uniform_decode_body,
        ("seq_lens", "decode_seq_lens", "block_table", "expanded_block_table", "decode_lens",
         "num_decode_tokens", "max_decode_len"),
        lambda *args: (args[5],))
    m.DeepSeekV32IndexerDecodeMetadata = _Record
    m.DeepseekV32IndexerMetadata = _Record

    class DeepseekV32IndexerMetadataBuilder:
        """Only the decode side and the compressed slot mapping (prefill
        chunking is not modelled)."""

        def __init__(self, max_tokens, block_table_width, *, supports_varlen=False,
                     use_flattening=False, num_speculative_tokens=0, compress_ratio=1,
                     block_size=64, dcp_world_size=1, dcp_rank=0, cp_kv_cache_interleave_size=1,
                     adaptive=False, max_num_seqs=None, poison=-9):
            self.supports_varlen = supports_varlen
            self.use_flattening = use_flattening
            self.num_speculative_tokens = num_speculative_tokens
            self.compress_ratio = compress_ratio
            self.num_states = block_size
            self.dcp_world_size, self.dcp_rank = dcp_world_size, dcp_rank
            self.cp_kv_cache_interleave_size = cp_kv_cache_interleave_size
            self.adaptive = adaptive
            next_n = num_speculative_tokens + 1
            self.decode_threshold = next_n
            self.offsets_buffer = xp.arange(next_n)
            for name in ("decode_lens_buffer", "per_req_decode_lens_buffer",
                         "decode_seq_lens_buffer", "global_decode_seq_lens_buffer",
                         "decode_indices_buffer", "expanded_seq_lens_buffer"):
                setattr(self, name, xp.full((max_tokens,), poison))
            self.arange_buffer = xp.arange(max(max_tokens, (max_num_seqs or 0) * next_n))
            self.expanded_block_table_buffer = xp.full((max_tokens, block_table_width), poison)
            if compress_ratio > 1:
                self.compressed_slot_mapping_buffer = xp.full((max_tokens,), poison, np.int64)

        def _dcp_localize_decode_seq_lens(self, seq_lens, num_decodes, seq_lens_is_buffer_view):
            local = m.get_dcp_local_seq_lens(seq_lens, self.dcp_world_size, self.dcp_rank,
                                             self.cp_kv_cache_interleave_size)
            if seq_lens_is_buffer_view:
                xp.assign(seq_lens, local)
                return seq_lens
            out = self.decode_seq_lens_buffer[:num_decodes]
            xp.assign(out, local)
            return out

        def _prepare_decode_tensors(self, seq_lens, block_table, decode_lens, decode_lens_cpu,
                                    query_start_loc, num_decodes, num_decode_tokens, use_native,
                                    next_n, max_decode_len):
            min_decode_len = int(decode_lens_cpu.min())
            if not use_native:
                if (not self.supports_varlen and (num_decodes == 1 or not self.adaptive)
                        and min_decode_len == max_decode_len
                        and num_decodes * max_decode_len == num_decode_tokens):
                    m._PREPARE_UNIFORM_DECODE_KERNEL(
                        seq_lens, self.decode_seq_lens_buffer, block_table,
                        self.expanded_block_table_buffer, self.decode_lens_buffer,
                        num_decode_tokens, max_decode_len)
                    xp.fill(self.decode_seq_lens_buffer[num_decode_tokens:], 0)
                else:
                    actual = int(decode_lens_cpu.sum())
                    offsets = xp.repeat(seq_lens - decode_lens - query_start_loc, decode_lens,
                                        actual)
                    xp.assign(self.decode_seq_lens_buffer[:actual],
                              offsets + self.arange_buffer[:actual] + 1)
                    xp.fill(self.decode_seq_lens_buffer[actual:], 0)
                    xp.assign(self.expanded_block_table_buffer[:actual],
                              xp.repeat(block_table, decode_lens, actual))
                    if actual < num_decode_tokens:
                        # only column 0 of the padding rows
                        xp.fill(self.expanded_block_table_buffer[actual:num_decode_tokens, 0], 0)
                    xp.fill(self.decode_lens_buffer[:num_decode_tokens], 1)
                return (self.decode_seq_lens_buffer[:num_decode_tokens],
                        self.expanded_block_table_buffer[:num_decode_tokens],
                        self.decode_lens_buffer[:num_decode_tokens], num_decode_tokens, False)
            requires_padding = min_decode_len != max_decode_len
            if next_n > 1:
                view = self.decode_seq_lens_buffer[: num_decodes * max_decode_len]
                view = view.reshape(num_decodes, max_decode_len)
                xp.assign(view, xp.clamp_min(
                    seq_lens.reshape(-1, 1) - max_decode_len + 1
                    + self.offsets_buffer[:max_decode_len], 0))
                seq_lens = view
            return seq_lens, block_table, decode_lens, num_decodes, requires_padding

        def _build_varlen_decode_indices(self, decode_lens, decode_lens_cpu, num_decode_tokens):
            indices = self.decode_indices_buffer[:num_decode_tokens]
            actual = int(decode_lens_cpu.sum())
            num_decodes = decode_lens.shape[0]
            xp.assign(indices[:actual], xp.repeat(self.arange_buffer[:num_decodes], decode_lens,
                                                  actual))
            if actual < num_decode_tokens:
                xp.assign(indices[actual:num_decode_tokens],
                          num_decodes + self.arange_buffer[: num_decode_tokens - actual])
            return indices

        def _prepare_global_decode_seq_lens(self, global_seq_lens, decode_lens, decode_lens_cpu,
                                            query_start_loc, num_decode_tokens, use_native,
                                            max_decode_len):
            if global_seq_lens is None:
                return None
            if use_native or max_decode_len <= 1:
                return global_seq_lens
            actual = int(decode_lens_cpu.sum())
            if actual > 0:
                offsets = xp.repeat(global_seq_lens - decode_lens - query_start_loc, decode_lens,
                                    actual)
                xp.assign(self.global_decode_seq_lens_buffer[:actual],
                          offsets + self.arange_buffer[:actual] + 1)
            xp.fill(self.global_decode_seq_lens_buffer[actual:num_decode_tokens], 0)
            return self.global_decode_seq_lens_buffer[:num_decode_tokens]

        def build(self, common_prefix_len, common_attn_metadata, fast_build=False):
            c = common_attn_metadata
            num_tokens = c.num_actual_tokens
            query_start_loc, seq_lens = c.query_start_loc, c.seq_lens
            block_table = c.block_table_tensor
            num_decodes, num_prefills, num_decode_tokens, num_prefill_tokens = (
                m.split_decodes_and_prefills(
                    c, decode_threshold=self.decode_threshold,
                    require_uniform=not (self.use_flattening or self.supports_varlen)))
            compressed_slot_mapping = c.slot_mapping
            if self.compress_ratio > 1:
                compressed_slot_mapping = m.get_compressed_slot_mapping(
                    num_tokens, query_start_loc, seq_lens, block_table, self.num_states,
                    self.compress_ratio, out=self.compressed_slot_mapping_buffer)
            decode = None
            if num_decodes > 0:
                inline = self.supports_varlen and inline_varlen_kernel
                if not inline:
                    xp.diff(query_start_loc[: num_decodes + 1],
                            out=self.decode_lens_buffer[:num_decodes])
                    xp.assign(self.per_req_decode_lens_buffer[:num_decodes],
                              self.decode_lens_buffer[:num_decodes])
                decode_lens = self.decode_lens_buffer[:num_decodes]
                qsl_cpu = c.query_start_loc_cpu[: num_decodes + 1]
                decode_lens_cpu = qsl_cpu[1:] - qsl_cpu[:-1]
                global_seq_lens = None
                if c.dcp_local_seq_lens is not None:
                    global_seq_lens = seq_lens[:num_decodes]
                seq = seq_lens[:num_decodes]
                table = block_table[:num_decodes]
                max_decode_len = int(decode_lens_cpu.max())
                min_decode_len = int(decode_lens_cpu.min())
                next_n = 1 + self.num_speculative_tokens
                use_native = (not (self.use_flattening or self.supports_varlen)
                              and max_decode_len <= next_n)
                if not inline:
                    global_seq_lens = self._prepare_global_decode_seq_lens(
                        global_seq_lens=global_seq_lens, decode_lens=decode_lens,
                        decode_lens_cpu=decode_lens_cpu,
                        query_start_loc=query_start_loc[:num_decodes],
                        num_decode_tokens=num_decode_tokens, use_native=use_native,
                        max_decode_len=max_decode_len)
                indices = None
                if self.supports_varlen and not inline:
                    indices = self._build_varlen_decode_indices(decode_lens, decode_lens_cpu,
                                                                num_decode_tokens)
                if inline:
                    # imported here, as vLLM's build() does
                    from vllm.v1.attention.ops.metadata import _indexer_decode_metadata_kernel

                    capacity = self.decode_seq_lens_buffer.shape[0]
                    grid = max(num_decodes,
                               num_decode_tokens + cdiv(capacity - num_decode_tokens, 256))
                    _indexer_decode_metadata_kernel[(grid,)](
                        query_start_loc, seq, table, self.decode_seq_lens_buffer,
                        self.expanded_block_table_buffer, self.decode_lens_buffer,
                        self.decode_indices_buffer, self.per_req_decode_lens_buffer,
                        num_decodes, num_decode_tokens, capacity, stride0(table),
                        stride0(self.expanded_block_table_buffer),
                        BLOCK_COLS=table.shape[1], num_warps=4)
                    seq = self.decode_seq_lens_buffer[:num_decode_tokens]
                    table = self.expanded_block_table_buffer[:num_decode_tokens]
                    decode_lens = self.decode_lens_buffer[:num_decode_tokens]
                    indices = self.decode_indices_buffer[:num_decode_tokens]
                    requires_padding = False
                    if global_seq_lens is not None and max_decode_len > 1:
                        xp.assign(self.global_decode_seq_lens_buffer[:num_decode_tokens], seq)
                        global_seq_lens = self.global_decode_seq_lens_buffer[:num_decode_tokens]
                else:
                    seq, table, decode_lens, _batch, requires_padding = (
                        self._prepare_decode_tensors(
                            seq_lens=seq, block_table=table, decode_lens=decode_lens,
                            decode_lens_cpu=decode_lens_cpu,
                            query_start_loc=query_start_loc[:num_decodes],
                            num_decodes=num_decodes, num_decode_tokens=num_decode_tokens,
                            use_native=use_native, next_n=next_n,
                            max_decode_len=max_decode_len))
                is_view = not use_native or next_n > 1
                if c.dcp_local_seq_lens is not None:
                    seq = self._dcp_localize_decode_seq_lens(seq, num_decodes, is_view)
                if self.compress_ratio > 1:
                    if is_view:
                        xp.assign(seq, xp.floordiv(seq, self.compress_ratio))
                    else:
                        xp.assign(self.expanded_seq_lens_buffer[:num_decodes],
                                  xp.floordiv(seq, self.compress_ratio))
                        xp.fill(self.expanded_seq_lens_buffer[num_decodes:num_decode_tokens], 0)
                        seq = self.expanded_seq_lens_buffer[:num_decode_tokens]
                if seq.ndim == 1:
                    seq = seq.reshape(-1, 1)
                decode = _Record(block_table=table, seq_lens=seq, decode_lens=decode_lens,
                                 requires_padding=requires_padding, indices=indices,
                                 global_seq_lens=global_seq_lens,
                                 per_req_decode_lens=self.per_req_decode_lens_buffer[:num_decodes],
                                 decode_is_uniform=min_decode_len == max_decode_len,
                                 write_max_decode_len=max_decode_len)
            return _Record(seq_lens=seq_lens, slot_mapping=compressed_slot_mapping,
                           num_decodes=num_decodes, num_decode_tokens=num_decode_tokens,
                           num_prefills=num_prefills, num_prefill_tokens=num_prefill_tokens,
                           decode=decode)

    if old_prepare:  # a vLLM whose method has other parameters: left alone
        def _prepare_decode_tensors(self, seq_lens, block_table, decode_lens, query_start_loc,
                                    num_decodes, num_decode_tokens):
            raise AssertionError("not called by these tests")

        DeepseekV32IndexerMetadataBuilder._prepare_decode_tensors = _prepare_decode_tensors

    DeepseekV32IndexerMetadataBuilder.__module__ = m.__name__
    m.DeepseekV32IndexerMetadataBuilder = DeepseekV32IndexerMetadataBuilder


def _fill_draft_metadata(m, xp, **_):
    # imported by name at module level, as vLLM's draft-decode update does
    m.compute_token_to_req_indices = _current["vllm.v1.attention.ops.metadata"].compute_token_to_req_indices

    def update_draft_token_map(common, out, num_tokens):
        """The token map of a draft step, straight from the device boundaries."""
        return m.compute_token_to_req_indices(common.query_start_loc, out,
                                              int(common.query_start_loc_cpu[-1]), num_tokens)

    m.update_draft_token_map = update_draft_token_map


_current = {}


def fill(modules, xp, **options):
    _current.clear()
    _current.update(modules)
    _fill_ops_metadata(modules["vllm.v1.attention.ops.metadata"], xp, **options)
    _fill_backend(modules["vllm.v1.attention.backend"], xp, **options)
    _fill_utils(modules["vllm.v1.attention.backends.utils"], xp, **options)
    _fill_compressor_utils(modules["vllm.v1.attention.backends.mla.compressor_utils"], xp, **options)
    _fill_indexer(modules["vllm.v1.attention.backends.mla.indexer"], xp, **options)
    _fill_draft_metadata(modules["vllm.v1.spec_decode.draft_metadata"], xp, **options)
