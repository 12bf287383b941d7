# SPDX-License-Identifier: Apache-2.0
"""The stand-in's batched DeepSeek-V4.1 SWA builder (see vllm_standin.py),
written from reading vLLM's ``swa_metadata.py``: ``SWAWindowMetadata``
(persistent [G, rows, 1, width] rows and [G, rows] lengths, ``observe`` of
every group's table and the replay start, ``prepare`` with its lazy import
of the batch split, ``_launch`` of one kernel over ``(num_tokens, G)``,
``rows_for_slot``) and ``_batched_swa_indices_and_lens_kernel``, whose
tables come as a device array of their addresses. The stand-in kernel
finds each table by its address among those ``observe`` saw."""

import numpy as np

from vllm_standin import Kernel

MODULE = "vllm.v1.attention.backends.mla.swa_metadata"
MODULES = [MODULE]

_ARGS = ("table_ptrs", "indices_ptr", "indices_width", "lens_ptr", "rows", "window_size",
         "query_start_loc_ptr", "seq_lens_ptr", "token_to_req_indices_ptr", "is_valid_token_ptr",
         "block_table_stride", "block_size", "replay_start_ptr", "token_offset",
         "TRITON_BLOCK_SIZE")

_TABLES = {}  # address -> the table observed there


def address(x):
    if hasattr(x, "data_ptr"):
        return int(x.data_ptr())
    return int(x.__array_interface__["data"][0])


def _host(x):
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)


def _body(grid, table_ptrs, indices, indices_width, lens, rows, window_size, query_start_loc,
          seq_lens, token_to_req_indices, is_valid_token, block_table_stride, block_size,
          replay_start, token_offset, TRITON_BLOCK_SIZE):
    flat_rows = indices.reshape(-1)
    flat_lens = lens.reshape(-1)
    for group in range(grid[1]):
        table = _host(_TABLES[int(table_ptrs[group])]).reshape(-1)
        for pid in range(grid[0]):
            token = pid + token_offset
            row = group * rows + pid
            out = flat_rows[row * indices_width:(row + 1) * indices_width]
            if not is_valid_token[token]:
                flat_lens[row] = 0
                out[:] = -1
                continue
            req = int(token_to_req_indices[token])
            start = int(query_start_loc[req])
            qlen = int(query_start_loc[req + 1]) - start
            pos = int(seq_lens[req]) - qlen + token - start
            first = max(pos - (window_size - 1), 0)
            first = max(first, int(replay_start[req]))
            length = pos + 1 - first
            flat_lens[row] = length
            for j in range(indices_width):
                q = first + j
                out[j] = (table[req * block_table_stride + q // block_size] * block_size
                          + q % block_size) if j < length else -1


def fill(modules, xp, **_):
    m = modules[MODULE]
    kernel = Kernel("_batched_swa_indices_and_lens_kernel", _body, _ARGS)
    m._batched_swa_indices_and_lens_kernel = kernel

    def split_batch_counts(cm, decode_threshold):
        from vllm.v1.attention.backends.utils import split_decodes_and_prefills

        return split_decodes_and_prefills(cm, decode_threshold=decode_threshold)

    class SWAWindowMetadata:
        def __init__(self, device, num_groups, decode_rows, prefill_rows, window_size,
                     index_width, poison=-9):
            self.num_groups = num_groups
            self.window_size = window_size
            self.index_width = index_width
            self.decode_rows = decode_rows
            self.prefill_rows = prefill_rows
            self.decode_indices = xp.full((num_groups, decode_rows, 1, index_width), poison)
            self.decode_lens = xp.full((num_groups, decode_rows), poison)
            self.prefill_indices = (xp.full((num_groups, prefill_rows, 1, index_width), poison)
                                    if prefill_rows else None)
            self.prefill_lens = (xp.full((num_groups, prefill_rows), poison)
                                 if prefill_rows else None)
            self._token_scratch_buffer = xp.full((max(prefill_rows, decode_rows),), poison)
            self._no_replay = xp.zeros((max(decode_rows, 1),))
            self._is_valid_token = xp.zeros((max(prefill_rows, decode_rows),), np.bool_)
            self._table_ptrs = None
            self._table_stride = 0
            self._group_tables = []
            self.replay_start = None
            self.num_decode_tokens = self.num_prefill_tokens = 0

        def observe(self, layer_groups, replay_start=None):
            self.replay_start = replay_start if replay_start is not None else self._no_replay
            tables = [table for _slot, table in layer_groups.values()]
            if len(tables) != self.num_groups:
                return False
            stride = int(tables[0].stride(0)) if hasattr(tables[0], "stride") and callable(
                tables[0].stride) else tables[0].strides[0] // tables[0].itemsize
            if stride != tables[0].shape[1]:
                return False
            self._group_tables = tables
            for t in tables:
                _TABLES[address(t)] = t
            self._table_ptrs = xp.array([address(t) for t in tables], np.int64)
            self._table_stride = stride
            return True

        def prepare(self, cm, block_size, decode_threshold, prefill_metadata):
            (num_decodes, num_prefills, num_decode_tokens,
             num_prefill_tokens) = split_batch_counts(cm, decode_threshold)
            is_valid = self._is_valid_token[: cm.slot_mapping.shape[0]]
            xp.assign(is_valid, xp.ge(cm.slot_mapping, 0))
            scratch = max(cm.num_actual_tokens, int(cm.query_start_loc_cpu[-1]))
            self.token_to_req_indices = cm.token_to_req_indices(
                self._token_scratch_buffer[:scratch])
            self.seq_lens = cm.seq_lens
            self.query_start_loc = cm.query_start_loc
            self.is_valid_token = is_valid
            self.num_decode_tokens = num_decode_tokens
            self.num_prefill_tokens = num_prefill_tokens
            assert num_decode_tokens <= self.decode_rows
            assert num_prefill_tokens <= self.prefill_rows
            if num_decode_tokens:
                self._launch(self.decode_indices, self.decode_lens, token_offset=0,
                             num_tokens=num_decode_tokens, block_size=block_size,
                             rows=self.decode_rows)
            if num_prefill_tokens:
                self._launch(self.prefill_indices, self.prefill_lens,
                             token_offset=num_decode_tokens, num_tokens=num_prefill_tokens,
                             block_size=block_size, rows=self.prefill_rows)

        def _launch(self, indices, lens, *, token_offset, num_tokens, block_size, rows):
            assert indices is not None and lens is not None
            kernel[(num_tokens, self.num_groups)](
                self._table_ptrs, indices, self.index_width, lens, rows, self.window_size,
                self.query_start_loc, self.seq_lens, self.token_to_req_indices,
                self.is_valid_token, self._table_stride, block_size, self.replay_start,
                token_offset, TRITON_BLOCK_SIZE=128)

        def rows_for_slot(self, group):
            d, p = self.num_decode_tokens, self.num_prefill_tokens
            return {
                "decode_swa_indices": self.decode_indices[group, :d],
                "decode_swa_lens": self.decode_lens[group, :d],
                "prefill_swa_indices": self.prefill_indices[group, :p] if p else None,
                "prefill_swa_lens": self.prefill_lens[group, :p] if p else None,
            }

    SWAWindowMetadata.__module__ = m.__name__
    m.SWAWindowMetadata = SWAWindowMetadata
    m.split_batch_counts = split_batch_counts
