# SPDX-License-Identifier: Apache-2.0
"""Token -> request map (contract section 1) through the binding, NumPy on
the CPU backend, against the naive reference."""

import numpy as np
import pytest

import cases
import reference
from conftest import CPU_CONFIGS

CASES = cases.well_formed_cases()


def _poisoned(n):
    return np.full(n, cases.POISON32, np.int32)


@pytest.mark.parametrize("config", list(CPU_CONFIGS))
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_token_to_req_matches_reference(attnmeta, cpu_contexts, case, config):
    qsl = np.array(case.qsl + [case.qsl[-1]] * case.extra_qsl, np.int32)
    out = _poisoned(case.T + 3)
    got = attnmeta.token_to_req(qsl, out, case.T, num_reqs=case.R, num_mapped=case.num_mapped,
                                context=cpu_contexts[config])
    assert got is out
    assert out[:case.T].tolist() == reference.token_map(case.qsl, case.R, case.num_mapped, case.T)
    assert (out[case.T:] == cases.POISON32).all(), "wrote past num_tokens"


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_compute_token_to_req_indices(attnmeta, case):
    if case.extra_qsl:
        pytest.skip("the drop-in takes R from len(query_start_loc)")
    qsl = np.array(case.qsl, np.int32)
    out = _poisoned(case.T + 4)
    got = attnmeta.compute_token_to_req_indices(qsl, out, case.num_mapped, case.T)
    assert got.shape == (case.T,)
    assert np.shares_memory(got, out) or case.T == 0
    assert got.tolist() == reference.token_map(case.qsl, case.R, case.num_mapped, case.T)
    assert (out[case.T:] == cases.POISON32).all()


def test_num_mapped_none_means_actual(attnmeta):
    qsl = np.array([0, 2, 5], np.int32)
    out = _poisoned(8)
    attnmeta.compute_token_to_req_indices(qsl, out, None, 8)
    assert out.tolist() == [0, 0, 1, 1, 1, 0, 0, 0]


def test_num_mapped_negative_reads_device_total(attnmeta):
    # The host passes -1; the map follows the contents of qsl at launch time.
    qsl = np.array([0, 1, 3], np.int32)
    out = _poisoned(5)
    attnmeta.token_to_req(qsl, out, 5, num_mapped=-7)
    assert out.tolist() == [0, 1, 1, 0, 0]
    qsl[:] = [0, 2, 4]
    attnmeta.token_to_req(qsl, out, 5, num_mapped=-1)
    assert out.tolist() == [0, 0, 1, 1, 0]


def test_no_requests_writes_zeros(attnmeta):
    out = _poisoned(6)
    attnmeta.token_to_req(np.zeros(1, np.int32), out, 6, num_mapped=6)
    assert out.tolist() == [0] * 6


def test_zero_tokens_writes_nothing(attnmeta):
    out = _poisoned(3)
    attnmeta.token_to_req(np.array([0, 2], np.int32), out, 0)
    assert (out == cases.POISON32).all()
    empty = np.zeros(0, np.int32)
    assert attnmeta.token_to_req(np.array([0, 0], np.int32), empty) is empty
    assert attnmeta.compute_token_to_req_indices(np.array([0], np.int32), empty, -1, 0).shape == (0,)


def test_num_tokens_defaults_to_len_out(attnmeta):
    out = _poisoned(4)
    attnmeta.token_to_req(np.array([0, 1, 3], np.int32), out)
    assert out.tolist() == [0, 1, 1, 0]


def test_slice_of_larger_buffers(attnmeta):
    # vLLM passes views of persistent buffers: qsl[:R + 1], out[:T].
    qsl_buf = np.array([0, 3, 4, 4, 9, 9, 9], np.int32)
    out_buf = _poisoned(16)
    got = attnmeta.compute_token_to_req_indices(qsl_buf[:4], out_buf[2:12], -1, 6)
    assert got.tolist() == [0, 0, 0, 1, 0, 0]
    assert (out_buf[:2] == cases.POISON32).all() and (out_buf[8:] == cases.POISON32).all()
