# SPDX-License-Identifier: Apache-2.0
"""Every check of the binding: each bad argument raises a Python exception
that names it (TypeError for types and dtypes, ValueError for shapes,
sizes, strides and devices), and the library's own refusals become
AttnmetaError carrying the C message. Nothing is written on any error."""

import numpy as np
import pytest

R, T, C, COLS = 3, 6, 8, 4


def _valid():
    """Arguments of a valid StepPlan building every product."""
    return dict(
        query_start_loc=np.array([0, 2, 3, 5], np.int32),
        seq_lens=np.array([7, 8, 9], np.int32),
        block_table=np.arange(R * COLS, dtype=np.int32).reshape(R, COLS),
        token_to_req=np.full(T, -9, np.int32),
        seq_lens_out=np.full(C, -9, np.int32),
        global_seq_lens_out=np.full(T, -9, np.int32),
        block_table_out=np.full((T, COLS), -9, np.int32),
        decode_lens_out=np.full(T, -9, np.int32),
        req_indices_out=np.full(T, -9, np.int32),
        per_req_lens_out=np.full(R, -9, np.int32),
        positions=np.full(T, -9, np.int64),
        slot_mapping=np.full(C, -9, np.int64),
        error_word=np.zeros(1, np.int32),
        block_size=4,
    )


OUTPUTS = ("token_to_req", "seq_lens_out", "global_seq_lens_out", "block_table_out",
           "decode_lens_out", "req_indices_out", "per_req_lens_out", "positions", "slot_mapping")


def _untouched(args, skip=()):
    for name in OUTPUTS:
        if name not in skip and args[name] is not None:
            assert (args[name] == -9).all(), "%s was written on an error" % name


def _plan(attnmeta, args):
    args = dict(args)
    qsl = args.pop("query_start_loc")
    return attnmeta.StepPlan(qsl, **args)


def _expect(attnmeta, exc, match, **changes):
    """A plan over _valid() with `changes` must raise exc matching `match`."""
    args = _valid()
    args.update(changes)
    with pytest.raises(exc, match=match):
        _plan(attnmeta, args).build(R, T)
    _untouched(args, skip=changes)


def test_valid_baseline(attnmeta):
    args = _valid()
    _plan(attnmeta, args).build(R, T)
    assert args["decode_lens_out"].tolist() == [1] * T


# ---- types and dtypes ----

@pytest.mark.parametrize("name", ["query_start_loc", "seq_lens", "token_to_req", "seq_lens_out",
                                  "global_seq_lens_out", "decode_lens_out", "req_indices_out",
                                  "per_req_lens_out", "error_word"])
def test_int32_buffers_reject_other_dtypes(attnmeta, name):
    bad = _valid()[name].astype(np.int64)
    _expect(attnmeta, TypeError, name + " must be a native-endian int32", **{name: bad})


@pytest.mark.parametrize("name", ["block_table", "block_table_out"])
def test_tables_reject_other_dtypes(attnmeta, name):
    _expect(attnmeta, TypeError, name + " must be", **{name: _valid()[name].astype(np.uint32)})


@pytest.mark.parametrize("name", ["positions", "slot_mapping"])
def test_int64_outputs_reject_int32(attnmeta, name):
    _expect(attnmeta, TypeError, name + " must be a native-endian int64",
            **{name: _valid()[name].astype(np.int32)})


def test_non_native_byte_order(attnmeta):
    _expect(attnmeta, TypeError, "seq_lens must be a native-endian int32",
            seq_lens=_valid()["seq_lens"].astype(">i4" if np.little_endian else "<i4"))


@pytest.mark.parametrize("value", [[0, 1, 2, 3], (0, 1), 5, "qsl", None.__class__])
def test_not_an_array(attnmeta, value):
    _expect(attnmeta, TypeError, "query_start_loc must be a torch.Tensor, a numpy.ndarray",
            query_start_loc=value)


def test_output_not_an_array(attnmeta):
    _expect(attnmeta, TypeError, "slot_mapping must be a torch.Tensor, a numpy.ndarray",
            slot_mapping=[0] * C)


# ---- shapes, contiguity, strides ----

@pytest.mark.parametrize("name", ["query_start_loc", "seq_lens", "token_to_req", "seq_lens_out",
                                  "positions", "slot_mapping", "per_req_lens_out"])
def test_vectors_must_be_1d(attnmeta, name):
    _expect(attnmeta, ValueError, name + " must be 1-D", **{name: _valid()[name].reshape(1, -1)})


@pytest.mark.parametrize("name", ["block_table", "block_table_out"])
def test_tables_must_be_2d(attnmeta, name):
    _expect(attnmeta, ValueError, name + " must be 2-D", **{name: _valid()[name].reshape(-1)})


@pytest.mark.parametrize("name,dtype", [("query_start_loc", np.int32), ("seq_lens", np.int32),
                                        ("token_to_req", np.int32), ("seq_lens_out", np.int32),
                                        ("positions", np.int64), ("slot_mapping", np.int64),
                                        ("req_indices_out", np.int32)])
def test_vectors_must_be_contiguous(attnmeta, name, dtype):
    n = len(_valid()[name])
    strided = np.zeros(2 * n, dtype)[::2]
    _expect(attnmeta, ValueError, name + " must be contiguous", **{name: strided})


def test_reversed_vector_is_not_contiguous(attnmeta):
    _expect(attnmeta, ValueError, "decode_lens_out must be contiguous",
            decode_lens_out=np.zeros(T, np.int32)[::-1])


@pytest.mark.parametrize("name", ["block_table", "block_table_out"])
def test_tables_need_unit_column_stride(attnmeta, name):
    rows, cols = _valid()[name].shape
    strided = np.zeros((rows, 2 * cols), np.int32)[:, ::2]
    _expect(attnmeta, ValueError, name + " must have unit column stride", **{name: strided})


@pytest.mark.parametrize("name", ["block_table", "block_table_out"])
def test_tables_row_stride_at_least_cols(attnmeta, name):
    rows, cols = _valid()[name].shape
    base = np.zeros(rows * cols + cols, np.int32)
    overlapping = np.lib.stride_tricks.as_strided(base, (rows, cols), (4 * (cols - 1), 4))
    _expect(attnmeta, ValueError, name + " has row stride %d, smaller than its %d columns"
            % (cols - 1, cols), **{name: overlapping})


@pytest.mark.parametrize("name", ["block_table", "block_table_out"])
def test_tables_reversed_rows(attnmeta, name):
    _expect(attnmeta, ValueError, name + " has row stride -", **{name: _valid()[name][::-1]})


def test_table_strides_not_whole_elements(attnmeta):
    raw = np.zeros(4 * R * COLS + 8, np.uint8)
    odd = np.lib.stride_tricks.as_strided(raw[:4 * R * COLS].view(np.int32), (R, COLS),
                                          (4 * COLS + 2, 4))
    _expect(attnmeta, ValueError, "block_table is not aligned", block_table=odd)


def test_tables_with_padded_rows_are_fine(attnmeta):
    args = _valid()
    wide = np.full((R, COLS + 5), -1, np.int32)
    wide[:, :COLS] = args["block_table"]
    out = np.full((T, COLS + 3), -9, np.int32)
    args.update(block_table=wide[:, :COLS], block_table_out=out[:, :COLS + 1])
    _plan(attnmeta, args).build(R, T)
    assert (out[:, COLS:] == -9).all()
    assert out[0, :COLS].tolist() == args["block_table"][0].tolist()


def test_unaligned_buffer(attnmeta):
    raw = np.zeros(4 * T + 4, np.uint8)
    unaligned = raw[1:1 + 4 * T].view(np.int32)
    assert not unaligned.flags.aligned
    _expect(attnmeta, ValueError, "req_indices_out is not aligned", req_indices_out=unaligned)


@pytest.mark.parametrize("name", ["token_to_req", "seq_lens_out", "block_table_out",
                                  "per_req_lens_out", "positions", "slot_mapping", "error_word"])
def test_read_only_outputs(attnmeta, name):
    ro = _valid()[name].copy()
    ro.setflags(write=False)
    _expect(attnmeta, ValueError, name + " is an output but the array is read-only", **{name: ro})


def test_read_only_inputs_are_fine(attnmeta):
    args = _valid()
    for name in ("query_start_loc", "seq_lens", "block_table"):
        args[name].setflags(write=False)
    _plan(attnmeta, args).build(R, T)


# ---- sizes and capacities ----

def test_query_start_loc_empty(attnmeta):
    _expect(attnmeta, ValueError, "query_start_loc must hold at least one entry",
            query_start_loc=np.zeros(0, np.int32))


@pytest.mark.parametrize("name,limit", [("query_start_loc", R + 1), ("seq_lens", R),
                                        ("block_table", R), ("per_req_lens_out", R)])
def test_num_reqs_over_a_buffer(attnmeta, name, limit):
    args = _valid()
    args[name] = args[name][:limit - 1]
    plan = _plan(attnmeta, args)
    with pytest.raises(ValueError, match="%s.* has room for %d .*fewer than num_reqs = %d"
                       % (name, limit - 2 if name == "query_start_loc" else limit - 1, R)):
        plan.build(R, T)
    _untouched(args)
    plan.build(R - 1, T)  # fits


@pytest.mark.parametrize("name", ["token_to_req", "global_seq_lens_out", "decode_lens_out",
                                  "req_indices_out", "positions", "block_table_out",
                                  "seq_lens_out", "slot_mapping"])
def test_num_tokens_over_a_buffer(attnmeta, name):
    args = _valid()
    args[name] = args[name][:T - 1]
    if name in ("seq_lens_out", "slot_mapping"):
        args["capacity"] = T - 1
    plan = _plan(attnmeta, args)
    with pytest.raises(ValueError, match="%s has room for %d .*fewer than num_tokens = %d"
                       % (name, T - 1, T)):
        plan.build(R, T)
    _untouched(args, skip=(name,))


@pytest.mark.parametrize("what,value", [("num_reqs", -1), ("num_tokens", -1)])
def test_negative_sizes(attnmeta, what, value):
    args = _valid()
    plan = _plan(attnmeta, args)
    sizes = dict(num_reqs=R, num_tokens=T)
    sizes[what] = value
    with pytest.raises(ValueError, match="%s \\(-1\\) must be >= 0" % what):
        plan.build(**sizes)
    _untouched(args)


def test_capacity_over_buffer(attnmeta):
    _expect(attnmeta, ValueError, "seq_lens_out has 8 entries, fewer than capacity = 9", capacity=9)


def test_capacity_negative(attnmeta):
    _expect(attnmeta, ValueError, "capacity \\(-2\\) must be >= 0", capacity=-2)


def test_capacity_below_num_tokens_is_the_librarys_check(attnmeta):
    args = _valid()
    args["capacity"] = T - 2
    with pytest.raises(attnmeta.AttnmetaError) as info:
        _plan(attnmeta, args).build(R, T)
    err = info.value
    assert isinstance(err, attnmeta.AttnmetaArgumentError) and isinstance(err, ValueError)
    assert err.status == attnmeta.Status.CAPACITY
    assert err.message == "capacity (4) is smaller than num_tokens (6)"
    assert err.function == "attnmeta_build_step"
    assert "capacity (4) is smaller than num_tokens (6)" in str(err)
    _untouched(args)


def test_block_table_out_narrower_than_table(attnmeta):
    _expect(attnmeta, ValueError, "block_table_out has 3 columns, fewer than block_table's 4",
            block_table_out=np.zeros((T, COLS - 1), np.int32))


def test_error_word_empty(attnmeta):
    _expect(attnmeta, ValueError, "error_word must hold at least one int32",
            error_word=np.zeros(0, np.int32))


@pytest.mark.parametrize("product", ["seq_lens_out", "global_seq_lens_out", "positions",
                                     "slot_mapping"])
def test_products_needing_seq_lens(attnmeta, product):
    _expect(attnmeta, ValueError, "seq_lens is required when %s is built" % product, seq_lens=None,
            **{p: None for p in ("seq_lens_out", "global_seq_lens_out", "positions", "slot_mapping")
               if p != product})


@pytest.mark.parametrize("product", ["block_table_out", "slot_mapping"])
def test_products_needing_block_table(attnmeta, product):
    other = "slot_mapping" if product == "block_table_out" else "block_table_out"
    _expect(attnmeta, ValueError, "block_table is required when %s is built" % product,
            block_table=None, **{other: None})


# ---- scalars ----

@pytest.mark.parametrize("name,value,match", [
    ("block_size", 0, "block_size \\(0\\) must be >= 1"),
    ("dcp_world_size", 0, "dcp_world_size \\(0\\) must be >= 1"),
    ("dcp_rank", 1, "dcp_rank \\(1\\) must be in \\[0, dcp_world_size = 1\\)"),
    ("dcp_rank", -1, "dcp_rank \\(-1\\) must be in"),
    ("dcp_interleave", 0, "dcp_interleave \\(0\\) must be >= 1"),
    ("num_mapped", 2**31, "num_mapped \\(2147483648\\) does not fit in int32"),
    ("capacity", -2**31 - 1, "capacity .* does not fit in int32"),
    ("block_size", 2**40, "block_size .* does not fit in int32"),
])
def test_scalar_ranges(attnmeta, name, value, match):
    _expect(attnmeta, ValueError, match, **{name: value})


@pytest.mark.parametrize("name", ["block_size", "dcp_world_size", "dcp_rank", "dcp_interleave",
                                  "num_mapped", "capacity"])
def test_scalar_types(attnmeta, name):
    _expect(attnmeta, TypeError, name + " must be an integer, got float", **{name: 1.0})


def test_numpy_integer_scalars_are_fine(attnmeta):
    args = _valid()
    args.update(block_size=np.int64(4), dcp_world_size=np.int32(1), capacity=np.int16(C))
    _plan(attnmeta, args).build(np.int64(R), np.int32(T))


def test_build_size_types(attnmeta):
    plan = _plan(attnmeta, _valid())
    with pytest.raises(TypeError):
        plan.build(1.5, T)
    with pytest.raises(TypeError, match="num_mapped must be an integer"):
        plan.build(R, T, num_mapped="3")
    with pytest.raises(TypeError, match="num_tokens must be an integer"):
        attnmeta.build_step(_valid()["query_start_loc"], 2.0)


def test_dcp_rank_with_world(attnmeta):
    _expect(attnmeta, ValueError, "dcp_rank \\(2\\) must be in \\[0, dcp_world_size = 2\\)",
            dcp_world_size=2, dcp_rank=2)


# ---- functions ----

def test_build_step_num_reqs_default_and_errors(attnmeta):
    a = _valid()
    qsl = a.pop("query_start_loc")
    with pytest.raises(ValueError, match="fewer than num_reqs = 4"):
        attnmeta.build_step(qsl, T, num_reqs=4, **a)
    with pytest.raises(ValueError, match="fewer than num_tokens = 7"):
        attnmeta.build_step(qsl, T + 1, **a)
    with pytest.raises(TypeError, match="unexpected keyword"):
        attnmeta.build_step(qsl, T, positions_out=a["positions"])
    attnmeta.build_step(qsl, T, **a)
    assert a["per_req_lens_out"].tolist() == [2, 1, 2]


def test_token_to_req_errors(attnmeta):
    qsl = np.array([0, 1, 3], np.int32)
    out = np.full(4, -9, np.int32)
    with pytest.raises(TypeError, match="query_start_loc must be a native-endian int32"):
        attnmeta.token_to_req(qsl.astype(np.int64), out)
    with pytest.raises(TypeError, match="out must be a native-endian int32"):
        attnmeta.token_to_req(qsl, out.astype(np.int64))
    with pytest.raises(ValueError, match="out must be contiguous"):
        attnmeta.token_to_req(qsl, np.zeros(8, np.int32)[::2])
    with pytest.raises(ValueError, match="out is an output but the array is read-only"):
        ro = out.copy()
        ro.setflags(write=False)
        attnmeta.token_to_req(qsl, ro)
    with pytest.raises(ValueError, match="query_start_loc must hold at least one entry"):
        attnmeta.token_to_req(np.zeros(0, np.int32), out)
    with pytest.raises(ValueError, match="fewer than num_reqs = 3"):
        attnmeta.token_to_req(qsl, out, num_reqs=3)
    with pytest.raises(ValueError, match="num_reqs \\(-1\\) must be >= 0"):
        attnmeta.token_to_req(qsl, out, num_reqs=-1)
    with pytest.raises(ValueError, match="out has room for 4 tokens, fewer than num_tokens = 5"):
        attnmeta.token_to_req(qsl, out, 5)
    with pytest.raises(ValueError, match="num_tokens \\(-1\\) must be >= 0"):
        attnmeta.token_to_req(qsl, out, -1)
    with pytest.raises(ValueError, match="num_mapped .* does not fit in int32"):
        attnmeta.token_to_req(qsl, out, num_mapped=2**31)
    with pytest.raises(ValueError, match="fewer than num_tokens = 5"):
        attnmeta.compute_token_to_req_indices(qsl, out, -1, 5)
    assert (out == -9).all()


def test_stream_type_on_cpu(attnmeta):
    qsl = np.array([0, 1], np.int32)
    with pytest.raises(TypeError, match="stream must be None, an int handle or a torch.cuda.Stream"):
        attnmeta.token_to_req(qsl, np.zeros(1, np.int32), stream="default")
    plan = attnmeta.StepPlan(qsl, decode_lens_out=np.zeros(1, np.int32))
    plan.build(1, 1, stream=object())  # ignored on the CPU backend: the plan never reads it


# ---- contexts ----

def test_context_argument_type(attnmeta):
    with pytest.raises(TypeError, match="context must be an attnmeta.Context"):
        _plan(attnmeta, dict(_valid(), context="cpu"))


def test_closed_context(attnmeta):
    ctx = attnmeta.Context(attnmeta.Backend.CPU)
    args = _valid()
    plan = _plan(attnmeta, dict(args, context=ctx))
    ctx.close()
    with pytest.raises(attnmeta.AttnmetaError) as info:
        plan.build(R, T)
    assert info.value.status == attnmeta.Status.INVALID_CONTEXT
    assert "closed" in str(info.value)
    _untouched(args)
    with pytest.raises(ValueError, match="the context is closed"):
        ctx.handle
    with pytest.raises(ValueError, match="the context is closed"):
        ctx.last_error()


def test_open_errors(attnmeta):
    with pytest.raises(attnmeta.AttnmetaArgumentError) as info:
        attnmeta.Context(attnmeta.Backend.CPU, -1)
    assert info.value.status == attnmeta.Status.INVALID_ARGUMENT
    assert info.value.message == "device ordinal -1 is negative"
    assert info.value.function == "attnmeta_open"
    with pytest.raises(attnmeta.AttnmetaError) as info:
        attnmeta.Context(99, 0)
    assert info.value.status == attnmeta.Status.UNKNOWN_BACKEND
    assert "unknown backend kind 99" in info.value.message
    with pytest.raises(ValueError, match="device .* does not fit in int32"):
        attnmeta.Context(attnmeta.Backend.CPU, 2**40)
    with pytest.raises(TypeError, match="backend must be an attnmeta.Backend, an integer or a name"):
        attnmeta.Context(1.0)
    with pytest.raises(ValueError, match="backend 'tpu' is not a backend name: one of auto, cpu, cuda, hip"):
        attnmeta.Context("tpu")


def test_open_error_env_override(attnmeta, monkeypatch):
    monkeypatch.setenv("ATTNMETA_BACKEND", "tpu")
    with pytest.raises(attnmeta.AttnmetaError) as info:
        attnmeta.Context(attnmeta.Backend.AUTO)
    assert info.value.status == attnmeta.Status.UNKNOWN_BACKEND
    assert "ATTNMETA_BACKEND=tpu" in info.value.message
    monkeypatch.setenv("ATTNMETA_BACKEND", "cpu")
    with attnmeta.Context(attnmeta.Backend.AUTO) as ctx:
        assert ctx.backend == attnmeta.Backend.CPU


@pytest.mark.parametrize("kind", ["CUDA", "HIP"])
def test_gpu_backend_without_device(attnmeta, kind):
    backend = attnmeta.Backend[kind]
    if attnmeta.backend_device_count(backend) > 0:
        pytest.skip("a %s device is present" % kind)
    with pytest.raises(attnmeta.AttnmetaError) as info:
        attnmeta.Context(backend, 0)
    assert info.value.status in (attnmeta.Status.NO_DEVICE, attnmeta.Status.BACKEND_UNAVAILABLE)
    assert info.value.message


@pytest.mark.parametrize("config,status", [
    (dict(block=2), "NOT_SUPPORTED"),
    (dict(block=-1), "INVALID_ARGUMENT"),
    (dict(stage=2), "INVALID_ARGUMENT"),
    (dict(vector=-2), "INVALID_ARGUMENT"),
    (dict(lanes=-3), "INVALID_ARGUMENT"),
])
def test_launch_config_errors(attnmeta, config, status):
    with attnmeta.Context(attnmeta.Backend.CPU) as ctx:
        with pytest.raises(attnmeta.AttnmetaError) as info:
            ctx.set_launch_config(**config)
        assert info.value.status == attnmeta.Status[status]
        assert info.value.message.startswith("launch config:")
        assert ctx.last_error() == info.value.message
    with pytest.raises(ValueError, match="grid .* does not fit in int32"):
        attnmeta.Context(attnmeta.Backend.CPU).set_launch_config(grid=2**31)


def test_describe_error_flags_range(attnmeta):
    with pytest.raises(ValueError, match="do not fit the 32-bit error word"):
        attnmeta.describe_error_flags(2**32)
    with pytest.raises(TypeError):
        attnmeta.describe_error_flags("1")
