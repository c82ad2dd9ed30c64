"""Bad input: every case raises an ``ovpool.OvpoolError`` that is also the
builtin a caller expects (ValueError for a bad value or shape, TypeError for a
bad type or dtype), and its message names the argument at fault.

None of these may crash the interpreter, hang or read out of bounds: they all
run in this process.
"""

from __future__ import annotations

import numpy as np
import pytest

import ovpool
from ovpool import ov_ops

X = np.zeros((1, 1, 5, 5), np.float32)
V = ValueError
T = TypeError


def _unpool(indices, **kwargs):
    x = np.zeros((1, 1, 2, 2), np.float32)
    return lambda: ovpool.max_unpool(x, indices, (2, 2), strides=(2, 2), **kwargs)


INT_INDICES = np.zeros((1, 1, 2, 2), np.int64)

# (id, call, builtin class, words the message must contain)
CASES = [
    # rank
    ("rank_2", lambda: ovpool.avg_pool(np.zeros((5, 5), np.float32), (2, 2)), V, ["x", "(5, 5)"]),
    (
        "rank_6",
        lambda: ovpool.max_pool(np.zeros((1, 1, 2, 2, 2, 2), np.float32), (1, 1, 1, 1)),
        V,
        ["x", "(1, 1, 2, 2, 2, 2)"],
    ),
    ("rank_0", lambda: ovpool.global_avg_pool(np.float32(1)), V, ["x"]),
    # wrong lengths
    ("kernel_length", lambda: ovpool.avg_pool(X, (2, 2, 2)), V, ["kernel_shape", "[2, 2, 2]"]),
    ("kernel_missing", lambda: ovpool.avg_pool(X, None), V, ["kernel_shape"]),
    ("strides_length", lambda: ovpool.avg_pool(X, (2, 2), strides=(1,)), V, ["strides", "[1]"]),
    ("pads_length", lambda: ovpool.avg_pool(X, (2, 2), pads=(1, 1)), V, ["pads", "[1, 1]"]),
    (
        "dilations_length",
        lambda: ovpool.max_pool(X, (2, 2), dilations=(1, 1, 1)),
        V,
        ["dilations", "[1, 1, 1]"],
    ),
    (
        "output_size_length",
        lambda: ovpool.adaptive_avg_pool(X, (2, 2, 2)),
        V,
        ["output_size", "[2, 2, 2]"],
    ),
    (
        "max_unpool_output_shape_length",
        _unpool(INT_INDICES, output_shape=(4, 4)),
        V,
        ["output_shape", "[4, 4]"],
    ),
    ("lp_pool_kernel_length", lambda: ovpool.lp_pool(X, (2,)), V, ["kernel_shape"]),
    # an empty kernel or output size is no identity (ONNX wants an entry per
    # spatial axis; ONNX Runtime and OpenVINO refuse both)
    ("max_pool_kernel_empty", lambda: ovpool.max_pool(X, ()), V, ["kernel_shape", "got 0"]),
    ("avg_pool_kernel_empty", lambda: ovpool.avg_pool(X, []), V, ["kernel_shape", "got 0"]),
    ("lp_pool_kernel_empty", lambda: ovpool.lp_pool(X, ()), V, ["kernel_shape", "got 0"]),
    ("ov_max_pool_kernel_empty", lambda: ov_ops.max_pool(X, []), V, ["kernel", "got 0"]),
    ("ov_avg_pool_kernel_empty", lambda: ov_ops.avg_pool(X, ()), V, ["kernel", "got 0"]),
    (
        "max_unpool_kernel_empty",
        lambda: ovpool.max_unpool(np.zeros((1, 1, 2, 2), np.float32), INT_INDICES, ()),
        V,
        ["kernel_shape", "got 0"],
    ),
    (
        "adaptive_avg_output_size_empty",
        lambda: ovpool.adaptive_avg_pool(X, ()),
        V,
        ["output_size", "got 0"],
    ),
    (
        "adaptive_avg_output_size_none",
        lambda: ovpool.adaptive_avg_pool(X, None),
        V,
        ["output_size"],
    ),
    (
        "adaptive_max_output_size_empty",
        lambda: ovpool.adaptive_max_pool(X, []),
        V,
        ["output_size", "got 0"],
    ),
    (
        "prepared_kernel_empty",
        lambda: ovpool.prepare(ovpool.max_pool, X.shape, X.dtype, ()),
        V,
        ["kernel_shape", "got 0"],
    ),
    # zero or negative
    ("kernel_zero", lambda: ovpool.avg_pool(X, (0, 2)), V, ["kernel_shape", "[0, 2]"]),
    ("kernel_negative", lambda: ovpool.max_pool(X, (-1, 2)), V, ["kernel_shape", "[-1, 2]"]),
    ("stride_zero", lambda: ovpool.avg_pool(X, (2, 2), strides=(0, 1)), V, ["strides", "[0, 1]"]),
    (
        "stride_negative",
        lambda: ovpool.max_pool(X, (2, 2), strides=(1, -2)),
        V,
        ["strides", "[1, -2]"],
    ),
    (
        "dilation_zero",
        lambda: ovpool.lp_pool(X, (2, 2), dilations=(1, 0)),
        V,
        ["dilations", "[1, 0]"],
    ),
    (
        "dilation_negative",
        lambda: ovpool.max_pool(X, (2, 2), dilations=(-1, 1)),
        V,
        ["dilations", "[-1, 1]"],
    ),
    ("output_size_zero", lambda: ovpool.adaptive_max_pool(X, (0, 2)), V, ["output_size", "[0, 2]"]),
    ("output_size_negative", lambda: ovpool.adaptive_avg_pool(X, -1), V, ["output_size", "-1"]),
    (
        "pads_negative",
        lambda: ovpool.avg_pool(X, (2, 2), pads=(0, -1, 0, 0)),
        V,
        ["pads", "[0, -1, 0, 0]"],
    ),
    (
        "max_unpool_kernel_zero",
        lambda: ovpool.max_unpool(X, np.zeros(X.shape, np.int64), (0, 2)),
        V,
        ["kernel_shape"],
    ),
    # pads with auto_pad
    (
        "pads_with_same_upper",
        lambda: ovpool.avg_pool(X, (2, 2), pads=(1, 1, 1, 1), auto_pad="SAME_UPPER"),
        V,
        ["pads", "[1, 1, 1, 1]", "SAME_UPPER"],
    ),
    (
        "pads_with_same_lower",
        lambda: ovpool.lp_pool(X, (2, 2), pads=(0, 0, 1, 0), auto_pad="SAME_LOWER"),
        V,
        ["pads", "SAME_LOWER"],
    ),
    (
        "pads_with_valid",
        lambda: ovpool.max_pool(X, (2, 2), pads=(1, 0, 0, 0), auto_pad="VALID"),
        V,
        ["pads", "VALID"],
    ),
    (
        "unknown_auto_pad",
        lambda: ovpool.max_pool(X, (2, 2), auto_pad="SAME"),
        V,
        ["auto_pad", "'SAME'"],
    ),
    ("auto_pad_not_a_string", lambda: ovpool.max_pool(X, (2, 2), auto_pad=1), T, ["auto_pad"]),
    # windows that do not fit
    ("kernel_larger_than_input", lambda: ovpool.avg_pool(X, (6, 2)), V, ["kernel_shape", "[6, 2]"]),
    (
        "dilated_kernel_larger_than_input",
        lambda: ovpool.max_pool(X, (3, 2), dilations=(3, 1)),
        V,
        ["dilations", "[3, 1]"],
    ),
    (
        "kernel_larger_than_input_valid",
        lambda: ovpool.lp_pool(X, (2, 6), auto_pad="VALID"),
        V,
        ["kernel_shape", "[2, 6]"],
    ),
    (
        "kernel_larger_than_padded_input",
        lambda: ovpool.avg_pool(X, (8, 2), pads=(1, 0, 1, 0)),
        V,
        ["kernel_shape", "[8, 2]"],
    ),
    (
        "max_pool_window_entirely_in_padding",
        lambda: ovpool.max_pool(X, (2, 2), pads=(2, 0, 0, 0)),
        V,
        ["pads", "padding"],
    ),
    (
        "max_pool_dilated_window_entirely_in_padding",
        lambda: ovpool.max_pool(np.zeros((1, 1, 1), np.float32), (2,), dilations=(2,), pads=(1, 1)),
        V,
        ["padding"],
    ),
    (
        "avg_pool_exclude_pad_window_entirely_in_padding",
        lambda: ovpool.avg_pool(X, (2, 2), pads=(0, 0, 0, 3)),
        V,
        ["pads", "padding"],
    ),
    (
        "empty_spatial_axis",
        lambda: ovpool.avg_pool(np.zeros((1, 1, 0, 5), np.float32), (1, 1)),
        V,
        ["input size 0"],
    ),
    (
        "adaptive_empty_spatial_axis",
        lambda: ovpool.adaptive_avg_pool(np.zeros((1, 1, 0, 5), np.float32), 2),
        V,
        ["size 0"],
    ),
    (
        "global_empty_spatial_axis",
        lambda: ovpool.global_max_pool(np.zeros((1, 1, 0), np.float32)),
        V,
        ["spatial"],
    ),
    # dtypes
    ("int32_avg", lambda: ovpool.avg_pool(X.astype(np.int32), (2, 2)), T, ["int32", "x"]),
    ("int32_max", lambda: ovpool.max_pool(X.astype(np.int32), (2, 2)), T, ["int32", "x"]),
    ("int64_adaptive_max", lambda: ovpool.adaptive_max_pool(X.astype(np.int64), 2), T, ["int64"]),
    ("int8_avg", lambda: ovpool.avg_pool(X.astype(np.int8), (2, 2)), T, ["int8"]),
    ("uint8_lp", lambda: ovpool.lp_pool(X.astype(np.uint8), (2, 2)), T, ["uint8"]),
    ("int8_global_avg", lambda: ovpool.global_avg_pool(X.astype(np.int8)), T, ["int8"]),
    ("bool", lambda: ovpool.max_pool(X.astype(bool), (2, 2)), T, ["bool"]),
    ("complex", lambda: ovpool.avg_pool(X.astype(np.complex64), (2, 2)), T, ["complex64"]),
    ("object", lambda: ovpool.avg_pool(X.astype(object), (2, 2)), T, ["object"]),
    ("strings", lambda: ovpool.max_pool(np.full((1, 1, 3, 3), "a"), (2, 2)), T, ["<U1"]),
    ("bytes", lambda: ovpool.global_max_pool(np.full((1, 1, 3), b"a")), T, ["|S1"]),
    (
        "datetime",
        lambda: ovpool.global_max_pool(np.zeros((1, 1, 3), "datetime64[s]")),
        T,
        ["datetime64"],
    ),
    # not numeric at all
    ("string_input", lambda: ovpool.avg_pool("hello", (2, 2)), T, ["x"]),
    ("none_input", lambda: ovpool.adaptive_avg_pool(None, 2), T, ["x"]),
    ("dict_input", lambda: ovpool.global_avg_pool({"a": 1}), T, ["x"]),
    ("ragged_input", lambda: ovpool.avg_pool([[[1.0, 2.0], [3.0]]], (1,)), T, ["x"]),
    # attribute types
    ("kernel_float", lambda: ovpool.avg_pool(X, (2.0, 2)), T, ["kernel_shape", "2.0"]),
    ("kernel_string", lambda: ovpool.avg_pool(X, "22"), T, ["kernel_shape", "'22'"]),
    ("kernel_bool", lambda: ovpool.avg_pool(X, (True, 2)), T, ["kernel_shape", "True"]),
    ("kernel_2d_array", lambda: ovpool.avg_pool(X, np.ones((2, 2), int)), V, ["kernel_shape"]),
    ("kernel_absurd", lambda: ovpool.avg_pool(X, (2**62, 2)), V, ["kernel_shape"]),
    ("output_size_absurd", lambda: ovpool.adaptive_avg_pool(X, (2**30, 2**30)), V, ["output_size"]),
    (
        "ceil_mode_string",
        lambda: ovpool.avg_pool(X, (2, 2), ceil_mode="yes"),
        T,
        ["ceil_mode", "'yes'"],
    ),
    (
        "count_include_pad_two",
        lambda: ovpool.avg_pool(X, (2, 2), count_include_pad=2),
        T,
        ["count_include_pad", "2"],
    ),
    (
        "return_indices_string",
        lambda: ovpool.max_pool(X, (2, 2), return_indices="no"),
        T,
        ["return_indices"],
    ),
    # max_unpool indices
    (
        "max_unpool_indices_wrong_shape",
        _unpool(np.zeros((1, 1, 2, 3), np.int64)),
        V,
        ["indices", "(1, 1, 2, 3)"],
    ),
    (
        "max_unpool_indices_wrong_rank",
        _unpool(np.zeros((1, 1, 4), np.int64)),
        V,
        ["indices", "(1, 1, 4)"],
    ),
    (
        "max_unpool_indices_negative",
        _unpool(-np.ones((1, 1, 2, 2), np.int64)),
        V,
        ["indices", "-1"],
    ),
    (
        "max_unpool_indices_too_large",
        _unpool(np.full((1, 1, 2, 2), 16, np.int64)),
        V,
        ["indices", "16"],
    ),
    (
        "max_unpool_one_index_too_large",
        _unpool(np.array([[[[0, 1], [2, 2**40]]]], np.int64)),
        V,
        ["indices[0, 0, 1, 1]"],
    ),
    ("max_unpool_indices_huge", _unpool(np.full((1, 1, 2, 2), 2**62, np.int64)), V, ["indices"]),
    (
        "max_unpool_indices_uint64_above_int64",
        _unpool(np.full((1, 1, 2, 2), 2**63 + 1, np.uint64)),
        V,
        ["indices"],
    ),
    (
        "max_unpool_indices_float",
        _unpool(np.zeros((1, 1, 2, 2), np.float32)),
        T,
        ["indices", "float32"],
    ),
    ("max_unpool_indices_bool", _unpool(np.zeros((1, 1, 2, 2), bool)), T, ["indices", "bool"]),
    ("max_unpool_indices_string", _unpool("abc"), T, ["indices"]),
    (
        "max_unpool_output_shape_smaller",
        _unpool(INT_INDICES, output_shape=(1, 1, 3, 3)),
        V,
        ["output_shape", "[1, 1, 3, 3]"],
    ),
    (
        "max_unpool_output_shape_changes_c",
        _unpool(INT_INDICES, output_shape=(1, 2, 4, 4)),
        V,
        ["output_shape", "[1, 2, 4, 4]"],
    ),
    (
        "max_unpool_indices_relative_to",
        _unpool(INT_INDICES, indices_relative_to="x"),
        V,
        ["indices_relative_to", "'x'"],
    ),
    (
        "max_unpool_indices_beyond_default_shape",
        _unpool(np.full((1, 1, 2, 2), 20, np.int64), output_shape=(1, 1, 5, 5)),
        V,
        ["indices", "20"],
    ),
    (
        "max_unpool_output_size_zero",
        lambda: ovpool.max_unpool(
            np.zeros((1, 1, 1), np.float32), np.zeros((1, 1, 1), np.int64), (2,), pads=(1, 1)
        ),
        V,
        ["output size"],
    ),
    # threads
    (
        "num_threads_zero",
        lambda: ovpool.avg_pool(X, (2, 2), num_threads=0),
        V,
        ["num_threads", "0"],
    ),
    (
        "num_threads_negative",
        lambda: ovpool.max_pool(X, (2, 2), num_threads=-1),
        V,
        ["num_threads", "-1"],
    ),
    (
        "num_threads_float",
        lambda: ovpool.adaptive_avg_pool(X, 2, num_threads=1.5),
        T,
        ["num_threads", "1.5"],
    ),
    (
        "num_threads_bool",
        lambda: ovpool.lp_pool(X, (2, 2), num_threads=True),
        T,
        ["num_threads", "True"],
    ),
    (
        "num_threads_string",
        lambda: ovpool.global_avg_pool(X, num_threads="2"),
        T,
        ["num_threads", "'2'"],
    ),
    ("set_num_threads_zero", lambda: ovpool.set_num_threads(0), V, ["0"]),
    ("set_num_threads_negative", lambda: ovpool.set_num_threads(-1), V, ["-1"]),
    ("set_num_threads_float", lambda: ovpool.set_num_threads(1.5), T, ["1.5"]),
    # p
    ("p_zero", lambda: ovpool.lp_pool(X, (2, 2), p=0), V, ["p", "0"]),
    ("p_negative", lambda: ovpool.lp_pool(X, (2, 2), p=-1), V, ["p", "-1"]),
    ("p_inf", lambda: ovpool.lp_pool(X, (2, 2), p=float("inf")), V, ["p", "inf"]),
    ("p_nan", lambda: ovpool.global_lp_pool(X, p=float("nan")), V, ["p", "nan"]),
    ("p_string", lambda: ovpool.lp_pool(X, (2, 2), p="2"), T, ["p", "'2'"]),
    ("p_none", lambda: ovpool.global_lp_pool(X, p=None), T, ["p", "None"]),
    # storage_order
    (
        "storage_order_two",
        lambda: ovpool.max_pool(X, (2, 2), storage_order=2),
        V,
        ["storage_order", "2"],
    ),
    (
        "storage_order_negative",
        lambda: ovpool.max_pool(X, (2, 2), storage_order=-1),
        V,
        ["storage_order", "-1"],
    ),
    (
        "storage_order_string",
        lambda: ovpool.max_pool(X, (2, 2), storage_order="0"),
        V,
        ["storage_order", "'0'"],
    ),
    # index_dtype
    (
        "index_dtype_float32",
        lambda: ovpool.adaptive_max_pool(X, 2, index_dtype=np.float32),
        T,
        ["index_dtype", "float32"],
    ),
    (
        "index_dtype_int16",
        lambda: ovpool.adaptive_max_pool(X, 2, index_dtype=np.int16),
        T,
        ["index_dtype", "int16"],
    ),
    # OpenVINO's "i8" is int8 (numpy would read it as 8-byte int64)
    (
        "index_element_type_i8",
        lambda: ov_ops.max_pool(X, 2, 2, 0, 0, index_element_type="i8"),
        T,
        ["index_element_type", "'i8'"],
    ),
    (
        "index_dtype_uint32",
        lambda: ovpool.adaptive_max_pool(X, 2, index_dtype=np.uint32),
        T,
        ["index_dtype", "uint32"],
    ),
    (
        "index_dtype_string",
        lambda: ovpool.adaptive_max_pool(X, 2, index_dtype="u32"),
        T,
        ["index_dtype", "'u32'"],
    ),
    (
        "index_dtype_none",
        lambda: ovpool.adaptive_max_pool(X, 2, index_dtype=None),
        T,
        ["index_dtype", "None"],
    ),
    # out= buffers
    (
        "out_wrong_shape",
        lambda: ovpool.avg_pool(X, (2, 2), out=np.empty((1, 1, 3, 3), np.float32)),
        V,
        ["out", "(1, 1, 3, 3)"],
    ),
    (
        "out_wrong_dtype",
        lambda: ovpool.avg_pool(X, (2, 2), out=np.empty((1, 1, 4, 4))),
        V,
        ["out", "float64"],
    ),
    ("out_not_an_array", lambda: ovpool.avg_pool(X, (2, 2), out=[0]), T, ["out", "list"]),
    (
        "out_not_contiguous",
        lambda: ovpool.avg_pool(X, (2, 2), out=np.empty((1, 1, 4, 8), np.float32)[..., ::2]),
        V,
        ["out", "contiguous"],
    ),
    (
        "out_read_only",
        lambda: ovpool.global_avg_pool(X, out=np.broadcast_to(np.float32(0), (1, 1, 1, 1))),
        V,
        ["out"],
    ),
    ("out_overlaps_input", lambda: ovpool.avg_pool(X, (1, 1), out=X), V, ["out", "overlap"]),
    (
        "out_indices_wrong_dtype",
        lambda: ovpool.max_pool(
            X, (2, 2), return_indices=True, out_indices=np.empty((1, 1, 4, 4), np.int32)
        ),
        V,
        ["out_indices", "int32"],
    ),
    # OpenVINO-semantics functions
    (
        "ov_rounding_type",
        lambda: ov_ops.avg_pool(X, (2, 2), (1, 1), (0, 0), (0, 0), rounding_type="round"),
        V,
        ["rounding_type", "'round'"],
    ),
    (
        "ov_axis_too_large",
        lambda: ov_ops.max_pool(X, (2, 2), (1, 1), (0, 0), (0, 0), axis=4),
        V,
        ["axis", "4"],
    ),
    (
        "ov_axis_too_negative",
        lambda: ov_ops.max_pool(X, (2, 2), (1, 1), (0, 0), (0, 0), axis=-5),
        V,
        ["axis", "-5"],
    ),
    (
        "ov_axis_float",
        lambda: ov_ops.max_pool(X, (2, 2), (1, 1), (0, 0), (0, 0), axis=1.0),
        T,
        ["axis", "1.0"],
    ),
    (
        "ov_index_element_type",
        lambda: ov_ops.max_pool(X, (2, 2), (1, 1), (0, 0), (0, 0), index_element_type="u32"),
        T,
        ["index_element_type", "'u32'"],
    ),
    (
        "ov_adaptive_index_element_type",
        lambda: ov_ops.adaptive_max_pool(X, 2, index_element_type="f32"),
        T,
        ["'f32'"],
    ),
    (
        "ov_exclude_pad_window_in_padding",
        lambda: ov_ops.avg_pool(X, (2, 2), (1, 1), (2, 0), (0, 0)),
        V,
        ["pads_begin", "[2, 0]"],
    ),
    (
        "ov_pads_begin_length",
        lambda: ov_ops.avg_pool(X, (2, 2), (1, 1), (0,), (0, 0)),
        V,
        ["pads_begin", "[0]"],
    ),
    (
        "ov_pads_end_negative",
        lambda: ov_ops.max_pool(X, (2, 2), (1, 1), (0, 0), (0, -1)),
        V,
        ["pads_end", "[0, -1]"],
    ),
    (
        "ov_kernel_too_large",
        lambda: ov_ops.max_pool(X, (6, 6), (1, 1), (0, 0), (0, 0)),
        V,
        ["kernel"],
    ),
    (
        "ov_auto_pad",
        lambda: ov_ops.avg_pool(X, (2, 2), (1, 1), (0, 0), (0, 0), auto_pad="same"),
        V,
        ["auto_pad", "'same'"],
    ),
]


def test_int32_indices_that_would_overflow_are_refused():
    """2**31 elements of int8 (np.zeros is calloc'ed: no page is touched, and
    ovpool raises before any kernel runs): int32 indices cannot address them."""
    x = np.zeros((1, 1, 2**31), np.int8)
    with pytest.raises(ovpool.OvpoolValueError, match="int32"):
        ovpool.adaptive_max_pool(x, 1, index_dtype=np.int32)
    y = np.zeros((2, 2**10, 2**20), np.int8)  # axis=0 indices span all planes
    with pytest.raises(ovpool.OvpoolValueError, match="int32"):
        ov_ops.max_pool(y, (2**20,), (2**20,), axis=0, index_element_type="i32")


@pytest.mark.parametrize("call, builtin, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_ovpool_error_naming_the_argument(call, builtin, words):
    with pytest.raises(ovpool.OvpoolError) as info:
        call()
    assert isinstance(info.value, builtin), (
        f"{type(info.value).__name__} is not a {builtin.__name__}: {info.value}"
    )
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


def test_every_error_class_is_also_a_builtin():
    assert issubclass(ovpool.OvpoolValueError, ovpool.OvpoolError)
    assert issubclass(ovpool.OvpoolValueError, ValueError)
    assert issubclass(ovpool.OvpoolTypeError, ovpool.OvpoolError)
    assert issubclass(ovpool.OvpoolTypeError, TypeError)


ALL_OPS = [
    ("avg_pool", lambda x: ovpool.avg_pool(x, (1,) * max(x.ndim - 2, 1))),
    ("max_pool", lambda x: ovpool.max_pool(x, (1,) * max(x.ndim - 2, 1))),
    ("lp_pool", lambda x: ovpool.lp_pool(x, (1,) * max(x.ndim - 2, 1))),
    ("adaptive_avg_pool", lambda x: ovpool.adaptive_avg_pool(x, 1)),
    ("adaptive_max_pool", lambda x: ovpool.adaptive_max_pool(x, 1)),
    ("global_avg_pool", ovpool.global_avg_pool),
    ("global_max_pool", ovpool.global_max_pool),
    ("global_lp_pool", ovpool.global_lp_pool),
    (
        "max_unpool",
        lambda x: ovpool.max_unpool(x, np.zeros(x.shape, np.int64), (1,) * max(x.ndim - 2, 1)),
    ),
    ("ov_avg_pool", lambda x: ov_ops.avg_pool(x, (1,) * max(x.ndim - 2, 1))),
    ("ov_max_pool", lambda x: ov_ops.max_pool(x, (1,) * max(x.ndim - 2, 1))),
]


@pytest.mark.parametrize("name, fn", ALL_OPS, ids=[n for n, _ in ALL_OPS])
@pytest.mark.parametrize("shape", [(4,), (1, 4), (1, 1, 1, 1, 1, 4)], ids=str)
def test_every_op_refuses_a_wrong_rank(name, fn, shape):
    with pytest.raises(ovpool.OvpoolValueError, match=r"x|shape"):
        fn(np.zeros(shape, np.float32))


@pytest.mark.parametrize("name, fn", ALL_OPS, ids=[n for n, _ in ALL_OPS])
@pytest.mark.parametrize(
    "dtype",
    [np.int32, np.int64, np.uint16, bool, np.complex128, object],
    ids=lambda d: np.dtype(d).name,
)
def test_every_op_refuses_an_unsupported_dtype(name, fn, dtype):
    with pytest.raises(ovpool.OvpoolTypeError, match=np.dtype(dtype).name):
        fn(np.zeros((1, 1, 4), dtype))


# The ops cache their plans by their arguments: a bad argument that compares
# equal to a good one (2.0 == 2, True == 1) must not slip through validation
# because the good one was seen before.
CACHE_CASES = [
    (
        "kernel_float",
        lambda: ovpool.avg_pool(X, (2, 2)),
        lambda: ovpool.avg_pool(X, (2.0, 2)),
        T,
        "kernel_shape",
    ),
    (
        "kernel_bool",
        lambda: ovpool.max_pool(X, (1, 2)),
        lambda: ovpool.max_pool(X, (True, 2)),
        T,
        "kernel_shape",
    ),
    (
        "strides_bool",
        lambda: ovpool.lp_pool(X, (2, 2), strides=(1, 1)),
        lambda: ovpool.lp_pool(X, (2, 2), strides=(True, True)),
        T,
        "strides",
    ),
    (
        "output_size_float",
        lambda: ovpool.adaptive_avg_pool(X, 2),
        lambda: ovpool.adaptive_avg_pool(X, 2.0),
        T,
        "output_size",
    ),
    (
        "ceil_mode_float",
        lambda: ovpool.avg_pool(X, (2, 2), ceil_mode=True),
        lambda: ovpool.avg_pool(X, (2, 2), ceil_mode=1.0),
        T,
        "ceil_mode",
    ),
    (
        "count_include_pad_float",
        lambda: ovpool.avg_pool(X, (2, 2), count_include_pad=1),
        lambda: ovpool.avg_pool(X, (2, 2), count_include_pad=1.0),
        T,
        "count_include_pad",
    ),
    (
        "ov_pads_float",
        lambda: ov_ops.max_pool(X, (2, 2), (1, 1), (1, 1), (0, 0)),
        lambda: ov_ops.max_pool(X, (2, 2), (1, 1), (1.0, 1), (0, 0)),
        T,
        "pads_begin",
    ),
]


@pytest.mark.parametrize(
    "good, bad, builtin, word", [c[1:] for c in CACHE_CASES], ids=[c[0] for c in CACHE_CASES]
)
def test_bad_argument_is_refused_even_after_an_equal_good_call(good, bad, builtin, word):
    good()
    with pytest.raises(ovpool.OvpoolError) as info:
        bad()
    assert isinstance(info.value, builtin) and word in str(info.value)


OP_NAMES = (
    "adaptive_avg_pool",
    "adaptive_max_pool",
    "avg_pool",
    "max_pool",
    "lp_pool",
    "global_avg_pool",
    "global_max_pool",
    "global_lp_pool",
    "max_unpool",
    "AvgPool",
    "MaxPool",
)


@pytest.mark.parametrize("call", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_every_message_starts_with_the_op_name(call):
    with pytest.raises(ovpool.OvpoolError) as info:
        call()
    message = str(info.value)
    name = message.split(":", 1)[0]
    assert name in OP_NAMES or message.startswith("set_num_threads(n) "), message


@pytest.mark.parametrize("name, fn", ALL_OPS, ids=[n for n, _ in ALL_OPS])
def test_threads_and_out_errors_name_the_op(name, fn):
    """Errors found by shared helpers (thread count, plan building) name the op too."""
    expected = {"ov_avg_pool": "AvgPool", "ov_max_pool": "MaxPool"}.get(name, name)
    with pytest.raises(ovpool.OvpoolTypeError, match=f"^{expected}: "):
        fn(np.zeros((1, 1, 4), np.int32))


@pytest.mark.parametrize(
    "call, op, argument",
    [
        (lambda x: ovpool.adaptive_avg_pool(x, (2, 2)), "adaptive_avg_pool", "output_size"),
        (lambda x: ovpool.adaptive_max_pool(x, [2, 2]), "adaptive_max_pool", "output_size"),
        (lambda x: ovpool.max_pool(x, (3, 3), strides=(2, 2)), "max_pool", "kernel_shape"),
        (lambda x: ovpool.avg_pool(x, kernel_shape=(2, 2)), "avg_pool", "kernel_shape"),
        (lambda x: ovpool.lp_pool(x, (2, 2)), "lp_pool", "kernel_shape"),
        (lambda x: ov_ops.max_pool(x, (2, 2), (2, 2)), "MaxPool", "kernel"),
    ],
    ids=["adaptive_avg", "adaptive_max", "max", "avg", "lp", "ov_max"],
)
def test_an_unbatched_image_gets_a_hint(call, op, argument):
    """(C, H, W) with a 2-entry size is read as (N, C, L): the message says so."""
    with pytest.raises(ovpool.OvpoolValueError) as info:
        call(np.zeros((3, 8, 8), np.float32))
    message = str(info.value)
    assert message.startswith(f"{op}: {argument} must have 1 entries"), message
    assert "x of shape (3, 8, 8) is read as (N, C, L), a 1D pool" in message
    assert f"{argument} has 2 entries" in message and "x[None]" in message


def test_an_unbatched_volume_gets_a_hint():
    with pytest.raises(ovpool.OvpoolValueError) as info:
        ovpool.adaptive_avg_pool(np.zeros((2, 4, 6, 6), np.float32), (1, 2, 2))
    assert "read as (N, C, H, W), a 2D pool" in str(info.value)
    assert "x[None]" in str(info.value)


def test_a_plane_without_batch_and_channel_axes_gets_a_hint():
    with pytest.raises(ovpool.OvpoolValueError) as info:
        ovpool.max_pool(np.zeros((8, 8), np.float32), (2, 2))
    assert str(info.value).startswith("max_pool: x must have shape (N, C, D1")
    assert "x[None, None]" in str(info.value)


def test_no_hint_when_the_sizes_match_the_rank():
    with pytest.raises(ovpool.OvpoolValueError) as info:
        ovpool.adaptive_avg_pool(np.zeros((1, 3, 8, 8), np.float32), (2, 2, 2, 2))
    assert "x[None]" not in str(info.value)


@pytest.mark.parametrize(
    "fn",
    [ovpool.global_avg_pool, ovpool.global_max_pool, ovpool.global_lp_pool],
    ids=["global_avg_pool", "global_max_pool", "global_lp_pool"],
)
def test_global_pool_of_an_empty_axis_names_itself(fn):
    with pytest.raises(ovpool.OvpoolValueError) as info:
        fn(np.zeros((1, 2, 0, 3), np.float32))
    message = str(info.value)
    assert message.startswith(f"{fn.__name__}: ") and "adaptive" not in message, message
    assert "(0, 3)" in message


BYTE_ORDER_CALLS = [
    ("avg_pool", lambda x: ovpool.avg_pool(x, (3, 3), strides=2, pads=(1, 1, 1, 1))),
    ("max_pool", lambda x: ovpool.max_pool(x, (3, 3), strides=2, return_indices=True)),
    ("lp_pool", lambda x: ovpool.lp_pool(x, (2, 2), p=3)),
    ("adaptive_avg_pool", lambda x: ovpool.adaptive_avg_pool(x, (4, 3))),
    ("adaptive_max_pool", lambda x: ovpool.adaptive_max_pool(x, 4)),
    ("global_avg_pool", ovpool.global_avg_pool),
    ("global_max_pool", ovpool.global_max_pool),
    ("ov_avg_pool", lambda x: ov_ops.avg_pool(x, (2, 2), (2, 2), rounding_type="ceil")),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name, call", BYTE_ORDER_CALLS, ids=[n for n, _ in BYTE_ORDER_CALLS])
def test_non_native_byte_order_is_converted(name, call, dtype, rng):
    """A big-endian array (on a little-endian machine; the other way round on
    a big-endian one) gives the native array's result, in native order."""
    native = rng.standard_normal((2, 3, 9, 11)).astype(dtype)
    swapped = native.astype(native.dtype.newbyteorder("S"))
    assert not swapped.dtype.isnative and np.array_equal(swapped, native)
    expected = call(native)
    got = call(swapped)
    for e, g in zip(*(r if isinstance(r, tuple) else (r,) for r in (expected, got))):
        assert g.dtype == e.dtype and g.dtype.isnative
        np.testing.assert_array_equal(g, e)
