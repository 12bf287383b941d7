# SPDX-License-Identifier: Apache-2.0
"""The stand-in's DeepSeek-V4 builders (see vllm_standin.py):
vllm.v1.attention.backends.mla.sparse_swa (the SWA metadata builder and
its inline kernel), .sparse_utils (the per-layer top-k conversion and the
DCP peer views) and a
sparse-MLA module that imports the conversion by name and calls it per
layer."""

import numpy as np

from vllm_standin import Kernel, stride0

MODULES = [
    "vllm.v1.attention.backends.mla.sparse_swa",
    "vllm.v1.attention.backends.mla.sparse_utils",
    "vllm.v1.attention.backends.mla.flashmla_sparse",
]

_SWA_ARGS = ("swa_indices_ptr", "swa_indices_stride", "swa_lens_ptr", "window_size",
             "query_start_loc_ptr", "seq_lens_ptr", "token_to_req_indices_ptr",
             "is_valid_token_ptr", "block_table_ptr", "block_table_stride", "block_size",
             "token_offset", "TRITON_BLOCK_SIZE")


_SWA_IMAGE_ARGS = ("swa_indices_ptr", "swa_indices_stride", "swa_lens_ptr", "window_size",
                   "index_width", "left_visible_ptr", "right_visible_ptr",
                   "query_start_loc_ptr", "seq_lens_ptr", "token_to_req_indices_ptr",
                   "is_valid_token_ptr", "block_table_ptr", "block_table_stride", "block_size",
                   "token_offset", "HAS_IMAGE", "TRITON_BLOCK_SIZE")


def _swa_rows(grid, swa_indices, swa_lens, window_size, width, left, right, query_start_loc,
              seq_lens, token_to_req_indices, is_valid_token, block_table, block_size,
              token_offset):
    rows = swa_indices.reshape(swa_indices.shape[0], -1)
    for pid in range(grid[0]):
        token = pid + token_offset
        if not is_valid_token[token]:
            swa_lens[pid] = 0
            rows[pid, :width] = -1  # the newest kernel clears the row too
            continue
        req = int(token_to_req_indices[token])
        start, end = int(query_start_loc[req]), int(query_start_loc[req + 1])
        pos = int(seq_lens[req]) - (end - start) + token - start
        lv = int(left[token]) if left is not None else 0
        rv = int(right[token]) if right is not None else 0
        first = max(pos - (window_size - 1) - max(lv - (window_size - 1), 0), 0)
        length = pos + rv + 1 - first
        swa_lens[pid] = length
        q = first + np.arange(width)
        inside = np.arange(width) < length
        slots = np.full(width, -1, dtype=np.int64)
        slots[inside] = block_table[req, q[inside] // block_size] * block_size + q[inside] % block_size
        rows[pid, :width] = slots


def _swa_body(grid, swa_indices, swa_indices_stride, swa_lens, window_size, query_start_loc,
              seq_lens, token_to_req_indices, is_valid_token, block_table, block_table_stride,
              block_size, token_offset, TRITON_BLOCK_SIZE):
    _swa_rows(grid, swa_indices, swa_lens, window_size, window_size, None, None,
              query_start_loc, seq_lens, token_to_req_indices, is_valid_token, block_table,
              block_size, token_offset)


def _swa_image_body(grid, swa_indices, swa_indices_stride, swa_lens, window_size, index_width,
                    left_visible, right_visible, query_start_loc, seq_lens,
                    token_to_req_indices, is_valid_token, block_table, block_table_stride,
                    block_size, token_offset, HAS_IMAGE, TRITON_BLOCK_SIZE):
    _swa_rows(grid, swa_indices, swa_lens, window_size, index_width,
              left_visible if HAS_IMAGE else None, right_visible if HAS_IMAGE else None,
              query_start_loc, seq_lens, token_to_req_indices, is_valid_token, block_table,
              block_size, token_offset)


_VISIBILITY_ARGS = ("left_visible_ptr", "right_visible_ptr", "span_indptr_ptr",
                    "span_starts_ptr", "span_ends_ptr", "query_start_loc_ptr", "seq_lens_ptr",
                    "token_to_req_indices_ptr", "max_image_tokens", "token_offset")


def _visibility_body(grid, left, right, indptr, starts, ends, query_start_loc, seq_lens,
                     token_to_req_indices, max_image_tokens, token_offset):
    for pid in range(grid[0]):
        token = pid + token_offset
        req = int(token_to_req_indices[token])
        start, end = int(query_start_loc[req]), int(query_start_loc[req + 1])
        pos = int(seq_lens[req]) - (end - start) + token - start
        lv = rv = 0
        for i in range(int(indptr[req]), int(indptr[req + 1])):
            if int(starts[i]) <= pos <= int(ends[i]):
                lv = min(pos - int(starts[i]), max_image_tokens - 1)
                rv = min(int(ends[i]) - pos, max_image_tokens)
        left[token], right[token] = lv, rv


def _fill_sparse_swa(m, xp, swa_image=False, **_):
    """swa_image: vLLM's kernel since in-image visibility (index_width, the
    counts and HAS_IMAGE) and its visibility kernel; the builder takes
    max_image_tokens and, for prefill requests with image spans in
    common_attn_metadata.mm_req_doc_ranges, launches the prefill rows with
    HAS_IMAGE (both parts' rows window + max_image_tokens wide: the
    stand-in's layout)."""
    if swa_image:
        m._compute_swa_indices_and_lens_kernel = Kernel(
            "_compute_swa_indices_and_lens_kernel", _swa_image_body, _SWA_IMAGE_ARGS)
        m._compute_image_visibility_kernel = Kernel(
            "_compute_image_visibility_kernel", _visibility_body, _VISIBILITY_ARGS)
    else:
        m._compute_swa_indices_and_lens_kernel = Kernel(
            "_compute_swa_indices_and_lens_kernel", _swa_body, _SWA_ARGS)

    class DeepseekSparseSWAMetadata:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    class DeepseekSparseSWAMetadataBuilder:
        def __init__(self, max_tokens, window_size, block_size=64, num_speculative_tokens=0,
                     poison=-9, max_image_tokens=0):
            self.window_size = window_size
            self.block_size = block_size
            self.max_image_tokens = max_image_tokens
            self.width = window_size + max_image_tokens
            self.decode_threshold = 1 + num_speculative_tokens
            self.token_to_req_indices = xp.full((max_tokens,), poison)
            self.decode_swa_indices = xp.full((max_tokens, 1, self.width), poison)
            self.decode_swa_lens = xp.full((max_tokens,), poison)
            self.prefill_swa_indices = xp.full((max_tokens, 1, self.width), poison)
            self.prefill_swa_lens = xp.full((max_tokens,), poison)
            self.is_valid_token = xp.zeros((max_tokens,), np.bool_)
            self.left_visible = xp.zeros((max_tokens,))
            self.right_visible = xp.zeros((max_tokens,))

        def _image_counts(self, c, num_decodes, num_decode_tokens, num_prefill_tokens,
                          token_to_req):
            """The visibility kernel over the prefill tokens; False when no
            prefill request has an image span."""
            ranges = getattr(c, "mm_req_doc_ranges", None) or {}
            indptr, starts, ends = [0], [], []
            for req in range(c.num_reqs):
                for lo, hi in (ranges.get(req, ()) if req >= num_decodes else ()):
                    starts.append(lo)
                    ends.append(hi)
                indptr.append(len(starts))
            if not starts or not num_prefill_tokens:
                return False
            m._compute_image_visibility_kernel[(num_prefill_tokens,)](
                self.left_visible, self.right_visible, xp.i32(indptr), xp.i32(starts),
                xp.i32(ends), c.query_start_loc, c.seq_lens, token_to_req,
                self.max_image_tokens, token_offset=num_decode_tokens)
            return True

        def _launch(self, rows, lens, c, token_to_req, is_valid, table, offset, n, image):
            kernel = m._compute_swa_indices_and_lens_kernel[(n,)]
            if not swa_image:
                kernel(rows, stride0(rows), lens, self.window_size, c.query_start_loc,
                       c.seq_lens, token_to_req, is_valid, table, stride0(table),
                       self.block_size, token_offset=offset, TRITON_BLOCK_SIZE=1024)
                return
            # without HAS_IMAGE the counts are not read; distinct buffers all
            # the same, since the stand-in's kernel writes every torch
            # argument back from its host copy (an alias of lens would undo
            # the lengths)
            kernel(rows, stride0(rows), lens, self.window_size, self.width, self.left_visible,
                   self.right_visible,
                   c.query_start_loc, c.seq_lens, token_to_req, is_valid, table, stride0(table),
                   self.block_size, token_offset=offset, HAS_IMAGE=image, TRITON_BLOCK_SIZE=1024)

        def build(self, common_prefix_len, common_attn_metadata, fast_build=False):
            from vllm.v1.attention.backends.utils import split_decodes_and_prefills

            c = common_attn_metadata
            num_decodes, num_prefills, num_decode_tokens, num_prefill_tokens = (
                split_decodes_and_prefills(c, decode_threshold=self.decode_threshold))
            qsl_cpu = [int(v) for v in c.query_start_loc_cpu]
            # the request of each real token, on the host, then copied over
            host = np.repeat(np.arange(c.num_reqs), np.diff(qsl_cpu)).astype(np.int32)
            token_to_req = self.token_to_req_indices[: host.shape[0]]
            xp.assign(token_to_req, host if xp.torch is None else xp.torch.from_numpy(host).to(
                token_to_req.device))
            is_valid = self.is_valid_token[: c.slot_mapping.shape[0]]
            xp.assign(is_valid, xp.ge(c.slot_mapping, 0))
            table = c.block_table_tensor
            if num_decode_tokens > 0:
                xp.fill(self.decode_swa_lens[num_decode_tokens:], 0)
                self._launch(self.decode_swa_indices, self.decode_swa_lens, c, token_to_req,
                             is_valid, table, 0, num_decode_tokens, False)
            if num_prefill_tokens > 0:
                image = swa_image and self._image_counts(
                    c, num_decodes, num_decode_tokens, num_prefill_tokens, token_to_req)
                self._launch(self.prefill_swa_indices[:num_prefill_tokens],
                             self.prefill_swa_lens[:num_prefill_tokens], c, token_to_req,
                             is_valid, table, num_decode_tokens, num_prefill_tokens, image)
            return DeepseekSparseSWAMetadata(
                token_to_req_indices=token_to_req, is_valid_token=is_valid,
                decode_swa_indices=self.decode_swa_indices[:num_decode_tokens],
                decode_swa_lens=self.decode_swa_lens[:num_decode_tokens],
                num_decodes=num_decodes, num_prefills=num_prefills,
                num_decode_tokens=num_decode_tokens, num_prefill_tokens=num_prefill_tokens)

    DeepseekSparseSWAMetadataBuilder.__module__ = m.__name__
    m.DeepseekSparseSWAMetadataBuilder = DeepseekSparseSWAMetadataBuilder


def _convert_body(grid, req_id, block_table, token_indices, out, valid_count, prefill_request_id,
                  workspace_starts, max_num_blocks_per_req, BLOCK_SIZE, BLOCK_STRIDE_ROWS, BLOCK_N,
                  HAS_PREFILL, COUNT_VALID, SINGLE_TILE, COMPACT_TO_FRONT, DCP_SIZE, DCP_RANK,
                  DCP_INTERLEAVE, bt_stride0, bt_stride1, ti_stride0, ti_stride1, out_stride0,
                  out_stride1, num_warps=4):
    for t in range(grid[0]):
        tok = token_indices[t].astype(np.int64)
        req = int(req_id[t])
        invalid = tok < 0
        prefill = HAS_PREFILL and int(prefill_request_id[t]) >= 0
        remote = (tok // DCP_INTERLEAVE) % DCP_SIZE != DCP_RANK
        local = (tok // (DCP_SIZE * DCP_INTERLEAVE)) * DCP_INTERLEAVE + tok % DCP_INTERLEAVE
        block, inner = local // BLOCK_SIZE, local % BLOCK_SIZE
        good_block = (block >= 0) & (block < max_num_blocks_per_req)
        invalid = invalid | ~good_block | remote
        base = np.zeros_like(tok)
        if not prefill:
            use = good_block & ~remote
            base[use] = block_table[req, block[use]]
        value = base * BLOCK_STRIDE_ROWS + inner
        if prefill:
            value = int(workspace_starts[int(prefill_request_id[t])]) + tok
        value = np.where(invalid, -1, value)
        if COMPACT_TO_FRONT:
            kept = value[~invalid]
            out[t, :] = -1
            out[t, : kept.shape[0]] = kept
        else:
            out[t, :] = value
        if COUNT_VALID:
            valid_count[t] = int((~invalid).sum())


_PEER_TABLE_ARGS = ("gathered_block_tables_ptr", "out_ptr", "num_requests", "max_owner_pages",
                    "dcp_size", "local_rank", "peer_block_stride", "BLOCK_N")
_PEER_SLOT_ARGS = ("req_id_ptr", "block_table_ptr", "token_indices_ptr", "out_ptr",
                   "valid_count_ptr", "num_requests", "max_num_blocks_per_req",
                   "NUM_TOPK_TOKENS", "BLOCK_SIZE", "BLOCK_N", "COUNT_VALID", "DCP_SIZE",
                   "DCP_INTERLEAVE", "PEER_BLOCK_STRIDE")


def _peer_table_body(grid, gathered, out, num_requests, max_owner_pages, dcp_size, local_rank,
                     peer_block_stride, BLOCK_N):
    for r in range(num_requests):
        for page in range(dcp_size * max_owner_pages):
            owner = page % dcp_size
            block = int(gathered[owner, r, page // dcp_size])
            peer = ((owner - local_rank) % dcp_size) * peer_block_stride + block
            ok = 0 <= block < peer_block_stride and peer <= 2**31 - 1
            out[r, page] = peer if ok else -1


def _peer_slot_body(grid, req_id, block_table, token_indices, out, valid_count, num_requests,
                    max_num_blocks_per_req, NUM_TOPK_TOKENS, BLOCK_SIZE, BLOCK_N, COUNT_VALID,
                    DCP_SIZE, DCP_INTERLEAVE, PEER_BLOCK_STRIDE):
    for t in range(grid[0]):
        req = int(req_id[t])
        n = 0
        for j in range(NUM_TOPK_TOKENS):
            x = int(token_indices[t, j])
            value = -1
            owner = (x // DCP_INTERLEAVE) % DCP_SIZE
            local = (x // (DCP_SIZE * DCP_INTERLEAVE)) * DCP_INTERLEAVE + x % DCP_INTERLEAVE
            blk = local // BLOCK_SIZE
            if x >= 0 and 0 <= req < num_requests and blk < max_num_blocks_per_req:
                block = int(block_table[req, blk])
                if 0 <= block < PEER_BLOCK_STRIDE:
                    value = (owner * PEER_BLOCK_STRIDE + block) * BLOCK_SIZE + local % BLOCK_SIZE
            out[t, j] = value
            n += value >= 0
        if COUNT_VALID:
            valid_count[t] += n


def _owner_filter_body(grid, peer_slots, local_slots, valid_counts, OWNER_SLOT_START,
                       OWNER_SLOT_STOP):
    for row in range(grid[0]):
        kept = [int(v) - OWNER_SLOT_START for v in peer_slots[row]
                if OWNER_SLOT_START <= int(v) < OWNER_SLOT_STOP]
        local_slots[row, : len(kept)] = kept
        valid_counts[row] = len(kept)


def _fill_peer_views(m, xp):
    """vLLM's DCP peer views (its newest sparse_utils), on the stand-in's
    kernels."""
    m._build_rotated_dcp_peer_block_table_kernel = Kernel(
        "_build_rotated_dcp_peer_block_table_kernel", _peer_table_body, _PEER_TABLE_ARGS)
    m._convert_global_indices_to_dcp_peer_slots_kernel = Kernel(
        "_convert_global_indices_to_dcp_peer_slots_kernel", _peer_slot_body, _PEER_SLOT_ARGS)

    def build_rotated_dcp_peer_block_table(gathered_block_tables, *, local_rank,
                                           peer_block_stride, cp_kv_cache_interleave_size,
                                           block_size, BLOCK_N=128):
        assert cp_kv_cache_interleave_size == block_size
        world, rows, pages = gathered_block_tables.shape
        out = xp.full((rows, world * pages), -7)
        if rows > 0 and world * pages > 0:
            m._build_rotated_dcp_peer_block_table_kernel[(rows, 1)](
                gathered_block_tables, out, rows, pages, world, local_rank, peer_block_stride,
                BLOCK_N)
        return out

    def convert_global_indices_to_dcp_peer_slots(
            req_id, block_table, token_indices, dcp_size, blocks_per_peer,
            cp_kv_cache_interleave_size=1, block_size=64, BLOCK_N=128, return_valid_counts=False,
            out=None, valid_counts_out=None):
        tokens, topk = token_indices.shape
        out = xp.empty_like(token_indices) if out is None else out
        counts = None
        if return_valid_counts:
            counts = xp.zeros((tokens,)) if valid_counts_out is None else valid_counts_out
            xp.fill(counts, 0)
        if tokens > 0:
            m._convert_global_indices_to_dcp_peer_slots_kernel[(tokens, 1)](
                req_id, block_table, token_indices, out, counts, block_table.shape[0],
                block_table.shape[1], topk, block_size, BLOCK_N, return_valid_counts, dcp_size,
                cp_kv_cache_interleave_size, blocks_per_peer)
        return (out, counts) if return_valid_counts else out

    m._filter_peer_slots_to_owner_local_kernel = Kernel(
        "_filter_peer_slots_to_owner_local_kernel", _owner_filter_body,
        ("peer_slots_ptr", "local_slots_ptr", "valid_counts_ptr", "OWNER_SLOT_START",
         "OWNER_SLOT_STOP"))

    def filter_peer_slots_to_owner_local(peer_slots, *, owner_rank, dcp_world_size,
                                         blocks_per_peer, block_size):
        rows, topk = peer_slots.shape
        local = xp.full((rows, topk), -1)
        counts = xp.zeros((rows,))
        start = owner_rank * blocks_per_peer * block_size
        if rows > 0:
            m._filter_peer_slots_to_owner_local_kernel[(rows,)](
                peer_slots, local, counts, start, start + blocks_per_peer * block_size)
        return local, counts

    m.filter_peer_slots_to_owner_local = filter_peer_slots_to_owner_local
    m.build_rotated_dcp_peer_block_table = build_rotated_dcp_peer_block_table
    m.convert_global_indices_to_dcp_peer_slots = convert_global_indices_to_dcp_peer_slots


def _fill_sparse_utils(m, xp, **_):
    _fill_peer_views(m, xp)
    m._convert_req_index_to_global_index_kernel = Kernel(
        "_convert_req_index_to_global_index_kernel", _convert_body, ("req_id_ptr",))

    def _tiling(topk, block_n, count_valid):
        if count_valid and topk & (topk - 1) == 0:
            return True, topk, 1
        return False, block_n, topk // block_n

    def _strides(x):
        return (x.stride(0), x.stride(1)) if callable(getattr(x, "stride", None)) else (
            x.strides[0] // x.itemsize, x.strides[1] // x.itemsize)

    def triton_convert_req_index_to_global_index(
            req_id, block_table, token_indices, BLOCK_SIZE=64, BLOCK_STRIDE_ROWS=None,
            NUM_TOPK_TOKENS=2048, BLOCK_N=128, HAS_PREFILL_WORKSPACE=False,
            prefill_workspace_request_ids=None, prefill_workspace_starts=None,
            return_valid_counts=False):
        assert req_id.shape[0] == token_indices.shape[0]
        assert token_indices.shape[1] == NUM_TOPK_TOKENS
        single, block_n, tiles = _tiling(NUM_TOPK_TOKENS, BLOCK_N, return_valid_counts)
        out = xp.empty_like(token_indices)
        counts = xp.zeros((req_id.shape[0],)) if return_valid_counts else None
        m._convert_req_index_to_global_index_kernel[(req_id.shape[0], tiles)](
            req_id, block_table, token_indices, out, counts, prefill_workspace_request_ids,
            prefill_workspace_starts, block_table.shape[1], BLOCK_SIZE,
            BLOCK_SIZE if BLOCK_STRIDE_ROWS is None else BLOCK_STRIDE_ROWS, block_n,
            HAS_PREFILL_WORKSPACE, return_valid_counts, single, False, 1, 0, 1,
            *_strides(block_table), *_strides(token_indices), *_strides(out), num_warps=4)
        return (out, counts) if return_valid_counts else out

    def triton_filter_and_convert_dcp_index(
            req_id, block_table, token_indices, dcp_size, dcp_rank,
            cp_kv_cache_interleave_size=1, BLOCK_SIZE=64, NUM_TOPK_TOKENS=2048, BLOCK_N=128,
            return_valid_counts=False, compact_valid_to_front=True):
        if dcp_size == 1:
            return triton_convert_req_index_to_global_index(
                req_id, block_table, token_indices, BLOCK_SIZE=BLOCK_SIZE,
                NUM_TOPK_TOKENS=NUM_TOPK_TOKENS, BLOCK_N=BLOCK_N,
                return_valid_counts=return_valid_counts)
        count = return_valid_counts or compact_valid_to_front
        single, block_n, tiles = _tiling(NUM_TOPK_TOKENS, BLOCK_N, count)
        out = xp.empty_like(token_indices)
        if compact_valid_to_front:
            xp.fill(out, -1)
        counts = xp.zeros((req_id.shape[0],)) if count else None
        m._convert_req_index_to_global_index_kernel[(req_id.shape[0], tiles)](
            req_id, block_table, token_indices, out, counts, None, None, block_table.shape[1],
            BLOCK_SIZE, BLOCK_SIZE, block_n, False, count, single, compact_valid_to_front,
            dcp_size, dcp_rank, cp_kv_cache_interleave_size, *_strides(block_table),
            *_strides(token_indices), *_strides(out), num_warps=4)
        return (out, counts) if return_valid_counts else out

    m.triton_convert_req_index_to_global_index = triton_convert_req_index_to_global_index
    m.triton_filter_and_convert_dcp_index = triton_filter_and_convert_dcp_index


_C128A_ARGS = ("global_decode_ptr", "global_decode_stride", "decode_lens_ptr", "prefill_local_ptr",
               "prefill_local_stride", "positions_ptr", "compress_ratio", "effective_topk",
               "num_decode_tokens", "token_to_req_indices_ptr", "block_table_ptr",
               "block_table_stride", "block_size", "slot_mapping_ptr", "BLOCK_SIZE")


def _c128a_body(grid, global_decode, global_decode_stride, decode_lens, prefill_local,
                prefill_local_stride, positions, compress_ratio, effective_topk,
                num_decode_tokens, token_to_req_indices, block_table, block_table_stride,
                block_size, slot_mapping, BLOCK_SIZE):
    columns = np.arange(effective_topk)
    for t in range(grid[0]):
        n = min((int(positions[t]) + 1) // compress_ratio, effective_topk)
        inside = columns < n
        if t < num_decode_tokens:
            req = int(token_to_req_indices[t])
            row = np.full(effective_topk, -1, dtype=np.int64)
            c = columns[inside]
            row[inside] = block_table[req, c // block_size] * block_size + c % block_size
            global_decode[t, :effective_topk] = row
            decode_lens[t] = int(inside.sum()) if slot_mapping[t] >= 0 else 0
        else:
            prefill_local[t - num_decode_tokens, :effective_topk] = np.where(
                inside, columns, -1)


def _effective_topk(max_pos, compress_ratio, max_compressed_tokens, alignment=128):
    """The rows' width for the batch: its longest compressed length rounded
    up to the alignment, within the bound."""
    if max_pos < 0:
        return 0
    longest = min(max((max_pos + 1) // compress_ratio, 0), max_compressed_tokens)
    if longest == 0:
        return min(max_compressed_tokens, alignment)
    return min(max_compressed_tokens, -(-longest // alignment) * alignment)


def _c128a_full_width(m, positions, compress_ratio, num_decode_tokens, global_decode_buffer,
                      decode_lens_buffer, prefill_buffer, max_compressed_tokens, inputs,
                      **constants):
    """vLLM's full-width build_c128a_topk_metadata (before the batch width):
    one launch of every column of the tokens' rows, the kernel's ``inputs``
    after num_decode_tokens and its ``constants``; returns the decode
    tokens' rows and lengths and the prefill tokens' rows."""
    num_tokens = positions.shape[0]
    views = (global_decode_buffer[:num_decode_tokens], decode_lens_buffer[:num_decode_tokens],
             prefill_buffer[: num_tokens - num_decode_tokens])
    if num_tokens == 0:
        return views
    m._build_c128a_topk_metadata_kernel[(num_tokens,)](
        global_decode_buffer, stride0(global_decode_buffer), decode_lens_buffer,
        prefill_buffer, stride0(prefill_buffer), positions, compress_ratio,
        max_compressed_tokens, num_decode_tokens, *inputs, BLOCK_SIZE=1024, **constants)
    return views


def _fill_c128a(m, xp, c128a_batch_width=True, **_):
    """The C128A rows: a module-level function launching one kernel for the
    decode and prefill tokens, called from the sparse-MLA builder's
    _build_c128a_metadata. ``c128a_batch_width=False``: vLLM before the
    batch-dependent width (no max_seq_len; rows of max_compressed_tokens)."""
    m._build_c128a_topk_metadata_kernel = Kernel(
        "_build_c128a_topk_metadata_kernel", _c128a_body, _C128A_ARGS)

    def build_c128a_topk_metadata(positions, compress_ratio, num_decode_tokens,
                                  token_to_req_indices, block_table, block_size, slot_mapping,
                                  global_decode_buffer, decode_lens_buffer, prefill_buffer,
                                  max_compressed_tokens=8192, max_seq_len=None):
        num_tokens = positions.shape[0]
        num_prefill_tokens = num_tokens - num_decode_tokens
        if num_tokens == 0:
            return (global_decode_buffer[:num_decode_tokens, :0],
                    decode_lens_buffer[:num_decode_tokens],
                    prefill_buffer[:num_prefill_tokens, :0])
        # the host's largest sequence length when given, else a device read
        max_pos = (int(max_seq_len) - 1 if max_seq_len is not None
                   else int(xp.to_np(positions).max()))
        width = _effective_topk(max_pos, compress_ratio, max_compressed_tokens)
        global_decode = global_decode_buffer[:num_decode_tokens, :width]
        decode_lens = decode_lens_buffer[:num_decode_tokens]
        prefill_local = prefill_buffer[:num_prefill_tokens, :width]
        if num_decode_tokens > 0:
            xp.fill(global_decode, -1)
            xp.fill(decode_lens, 0)
        if num_prefill_tokens > 0:
            xp.fill(prefill_local, -1)
        if width == 0:
            return global_decode, decode_lens, prefill_local
        m._build_c128a_topk_metadata_kernel[(num_tokens,)](
            global_decode_buffer, stride0(global_decode_buffer), decode_lens_buffer,
            prefill_buffer, stride0(prefill_buffer), positions, compress_ratio,
            width, num_decode_tokens, token_to_req_indices, block_table,
            stride0(block_table), block_size, slot_mapping, BLOCK_SIZE=1024)
        return global_decode, decode_lens, prefill_local

    def build_c128a_topk_metadata_full_width(
            positions, compress_ratio, num_decode_tokens, token_to_req_indices, block_table,
            block_size, slot_mapping, global_decode_buffer, decode_lens_buffer, prefill_buffer,
            max_compressed_tokens=8192):
        return _c128a_full_width(
            m, positions, compress_ratio, num_decode_tokens, global_decode_buffer,
            decode_lens_buffer, prefill_buffer, max_compressed_tokens,
            (token_to_req_indices, block_table, stride0(block_table), block_size, slot_mapping))

    if c128a_batch_width:
        m.build_c128a_topk_metadata = build_c128a_topk_metadata
    else:
        build_c128a_topk_metadata_full_width.__name__ = "build_c128a_topk_metadata"
        m.build_c128a_topk_metadata = build_c128a_topk_metadata_full_width

    class FlashMLASparseMetadataBuilder:
        """Only the C128A part (compress_ratio 128)."""

        def __init__(self, max_tokens, max_compressed, block_size=256, compress_ratio=128,
                     num_speculative_tokens=0, poison=-9):
            self.compress_ratio = compress_ratio
            self.block_size = block_size
            self.decode_threshold = 1 + num_speculative_tokens
            self.c128a_max_compressed = max_compressed
            self.req_id_per_token_buffer = xp.full((max_tokens,), poison)
            self.c128a_global_decode_buffer = xp.full((max_tokens, max_compressed), poison)
            self.c128a_decode_lens_buffer = xp.full((max_tokens,), poison)
            self.c128a_prefill_buffer = xp.full((max_tokens, max_compressed), poison)

        def build(self, common_prefix_len, common_attn_metadata, fast_build=False):
            cm = common_attn_metadata
            qsl_cpu = [int(v) for v in cm.query_start_loc_cpu]
            host = np.repeat(np.arange(cm.num_reqs), np.diff(qsl_cpu)).astype(np.int32)
            xp.fill(self.req_id_per_token_buffer, 0)
            xp.assign(self.req_id_per_token_buffer[: host.shape[0]],
                      host if xp.torch is None else xp.torch.from_numpy(host).to(
                          self.req_id_per_token_buffer.device))
            return self._build_c128a_metadata(
                cm, self.req_id_per_token_buffer[: cm.num_actual_tokens])

        def _build_c128a_metadata(self, cm, req_id_per_token):
            return self._c128a_fields(cm, lambda num_total, num_decodes, num_decode_tokens: (
                m.build_c128a_topk_metadata(
                    cm.positions[:num_total], self.compress_ratio, num_decode_tokens,
                    req_id_per_token, cm.block_table_tensor[:num_decodes],
                    self.block_size // self.compress_ratio, cm.slot_mapping,
                    self.c128a_global_decode_buffer, self.c128a_decode_lens_buffer,
                    self.c128a_prefill_buffer, max_compressed_tokens=self.c128a_max_compressed,
                    **({"max_seq_len": cm.max_seq_len} if c128a_batch_width else {}))))

        def _c128a_fields(self, cm, build):
            """The split into decode and prefill tokens, build(num_total,
            num_decodes, num_decode_tokens) -> vLLM's three views, the
            metadata's C128A fields."""
            from vllm.v1.attention.backends.utils import split_decodes_and_prefills

            num_decodes, _, num_decode_tokens, num_prefill_tokens = split_decodes_and_prefills(
                cm, decode_threshold=self.decode_threshold)
            num_total = num_decode_tokens + num_prefill_tokens
            if num_total == 0:
                return {}
            global_decode, decode_lens, prefill_local = build(num_total, num_decodes,
                                                              num_decode_tokens)
            result = {}
            if num_decode_tokens > 0:
                result["c128a_global_decode_topk_indices"] = global_decode.reshape(
                    num_decode_tokens, 1, -1)
                result["c128a_decode_topk_lens"] = decode_lens
            if num_prefill_tokens > 0:
                result["c128a_prefill_topk_indices"] = prefill_local
            return result

    FlashMLASparseMetadataBuilder.__module__ = m.__name__
    m.FlashMLASparseMetadataBuilder = FlashMLASparseMetadataBuilder


_C128A_DCP_ARGS = ("global_decode_ptr", "global_decode_stride", "decode_lens_ptr",
                   "prefill_local_ptr", "prefill_local_stride", "positions_ptr",
                   "compress_ratio", "max_compressed_tokens", "num_decode_tokens",
                   "actual_num_query_tokens", "token_to_req_indices_ptr", "block_table_ptr",
                   "block_table_stride", "block_size", "slot_mapping_ptr", "DCP_WORLD_SIZE",
                   "DCP_RANK", "CP_KV_CACHE_INTERLEAVE_SIZE", "BLOCK_SIZE")


def _c128a_dcp_body(grid, global_decode, global_decode_stride, decode_lens, prefill_local,
                    prefill_local_stride, positions, compress_ratio, max_compressed_tokens,
                    num_decode_tokens, actual_num_query_tokens, token_to_req_indices,
                    block_table, block_table_stride, block_size, slot_mapping, DCP_WORLD_SIZE,
                    DCP_RANK, CP_KV_CACHE_INTERLEAVE_SIZE, BLOCK_SIZE):
    """The DCP variant's kernel: with DCP_WORLD_SIZE > 1 a decode token's
    row holds the rows this rank owns, packed to the front, and every real
    query (t < actual_num_query_tokens) counts, whatever its slot."""
    world, inter = DCP_WORLD_SIZE, CP_KV_CACHE_INTERLEAVE_SIZE
    columns = np.arange(max_compressed_tokens)
    for t in range(grid[0]):
        n = min((int(positions[t]) + 1) // compress_ratio, max_compressed_tokens)
        inside = columns < n
        real = t < actual_num_query_tokens
        if t >= num_decode_tokens:
            prefill_local[t - num_decode_tokens, :max_compressed_tokens] = np.where(
                inside & real, columns, -1)
            continue
        req = int(token_to_req_indices[t])
        if world == 1:
            valid = bool(slot_mapping[t] >= 0)
            row = np.full(max_compressed_tokens, -1, dtype=np.int64)
            c = columns[inside]
            row[inside] = block_table[req, c // block_size] * block_size + c % block_size
            count = int(inside.sum())
        else:
            valid = real
            block = columns // (block_size * world)
            within = columns - block * block_size * world
            local = (within // inter) % world == DCP_RANK
            keep = inside & local & valid
            c = columns[keep]
            slots = (block_table[req, block[keep]].astype(np.int64) * block_size
                     + (within[keep] // (world * inter)) * inter + within[keep] % inter)
            row = np.full(max_compressed_tokens, -1, dtype=np.int64)
            row[: c.shape[0]] = slots
            count = int(keep.sum())
        global_decode[t, :max_compressed_tokens] = row
        decode_lens[t] = count if valid else 0


def _fill_c128a_dcp(m, xp):
    """vLLM's DCP variant of the C128A rows: build_c128a_topk_metadata takes
    actual_num_query_tokens and the step's DCP (rows of
    max_compressed_tokens), and the builder passes its DCP when the step
    has rank-local lengths."""
    m._build_c128a_topk_metadata_kernel = Kernel(
        "_build_c128a_topk_metadata_kernel", _c128a_dcp_body, _C128A_DCP_ARGS)

    def build_c128a_topk_metadata(positions, compress_ratio, num_decode_tokens,
                                  actual_num_query_tokens, token_to_req_indices, block_table,
                                  block_size, slot_mapping, global_decode_buffer,
                                  decode_lens_buffer, prefill_buffer, max_compressed_tokens=8192,
                                  dcp_world_size=1, dcp_rank=0, cp_kv_cache_interleave_size=1):
        return _c128a_full_width(
            m, positions, compress_ratio, num_decode_tokens, global_decode_buffer,
            decode_lens_buffer, prefill_buffer, max_compressed_tokens,
            (actual_num_query_tokens, token_to_req_indices, block_table, stride0(block_table),
             block_size, slot_mapping), DCP_WORLD_SIZE=dcp_world_size, DCP_RANK=dcp_rank,
            CP_KV_CACHE_INTERLEAVE_SIZE=cp_kv_cache_interleave_size)

    m.build_c128a_topk_metadata = build_c128a_topk_metadata
    base = m.FlashMLASparseMetadataBuilder

    class FlashMLASparseMetadataBuilder(base):
        def __init__(self, *args, dcp_world_size=1, dcp_rank=0, cp_kv_cache_interleave_size=1,
                     **kwargs):
            base.__init__(self, *args, **kwargs)
            self.dcp_world_size, self.dcp_rank = dcp_world_size, dcp_rank
            self.cp_kv_cache_interleave_size = cp_kv_cache_interleave_size

        def build(self, common_prefix_len, common_attn_metadata, fast_build=False):
            cm = common_attn_metadata
            req_id_per_token = cm.token_to_req_indices(self.req_id_per_token_buffer)
            actual = int(cm.query_start_loc_cpu[-1])
            local_kv = self.dcp_world_size > 1 and cm.dcp_local_seq_lens is not None
            return self._build_c128a_metadata(
                cm, req_id_per_token, actual, self.dcp_world_size if local_kv else 1,
                self.dcp_rank if local_kv else 0,
                self.cp_kv_cache_interleave_size if local_kv else 1)

        def _build_c128a_metadata(self, cm, req_id_per_token, actual_num_query_tokens,
                                  dcp_world_size, dcp_rank, cp_kv_cache_interleave_size):
            return self._c128a_fields(cm, lambda num_total, num_decodes, num_decode_tokens: (
                m.build_c128a_topk_metadata(
                    cm.positions[:num_total], self.compress_ratio, num_decode_tokens,
                    actual_num_query_tokens, req_id_per_token,
                    cm.block_table_tensor[:num_decodes], self.block_size // self.compress_ratio,
                    cm.slot_mapping, self.c128a_global_decode_buffer,
                    self.c128a_decode_lens_buffer, self.c128a_prefill_buffer,
                    max_compressed_tokens=self.c128a_max_compressed,
                    dcp_world_size=dcp_world_size, dcp_rank=dcp_rank,
                    cp_kv_cache_interleave_size=cp_kv_cache_interleave_size)))

    FlashMLASparseMetadataBuilder.__module__ = m.__name__
    m.FlashMLASparseMetadataBuilder = FlashMLASparseMetadataBuilder


def _fill_flashmla_sparse(m, xp, sparse_utils=None, c128a_dcp=False, **options):
    _fill_c128a(m, xp, **options)
    if c128a_dcp:
        _fill_c128a_dcp(m, xp)
    # imported by name at module level, as the sparse-MLA backends do
    m.triton_convert_req_index_to_global_index = (
        sparse_utils.triton_convert_req_index_to_global_index)
    m.triton_filter_and_convert_dcp_index = sparse_utils.triton_filter_and_convert_dcp_index

    def convert_layer_topk(req_id, block_table, topk_indices, block_size, topk, dcp_size=1,
                           dcp_rank=0):
        """One layer's conversion of its top-k indices to cache slots."""
        if dcp_size > 1:
            return m.triton_filter_and_convert_dcp_index(
                req_id, block_table, topk_indices, dcp_size, dcp_rank, BLOCK_SIZE=block_size,
                NUM_TOPK_TOKENS=topk, return_valid_counts=True)
        return m.triton_convert_req_index_to_global_index(
            req_id, block_table, topk_indices, BLOCK_SIZE=block_size, NUM_TOPK_TOKENS=topk,
            return_valid_counts=True)

    m.convert_layer_topk = convert_layer_topk


def fill(modules, xp, **options):
    options.pop("sparse_utils", None)
    _fill_sparse_swa(modules["vllm.v1.attention.backends.mla.sparse_swa"], xp, **options)
    utils = modules["vllm.v1.attention.backends.mla.sparse_utils"]
    _fill_sparse_utils(utils, xp, **options)
    _fill_flashmla_sparse(modules["vllm.v1.attention.backends.mla.flashmla_sparse"], xp,
                          sparse_utils=utils, **options)
