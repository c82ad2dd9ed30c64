"""Hand-computed edge cases of the numpy API, one test per case.

Expected numbers are written in the tests (derived in the docstrings or
comments); where an independent reference runs the case too (torch,
onnx.reference, onnxruntime), it is checked as well.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import ovpool
from ovpool import _isa, shapes


def _torch():
    return pytest.importorskip("torch")


def f32(values):
    return np.array(values, dtype=np.float32)


# --------------------------------------------------------------------------
# ceil_mode and count_include_pad
# --------------------------------------------------------------------------


def test_maxpool_2d_ceil_last_window_starts_on_pad_is_dropped():
    """x (1,1,5,5) = 5*r + c, k2 s2 pads 1 ceil_mode -> (1,1,3,3).

    ceil((5+2-2)/2)+1 = 4 windows would start at -1, 1, 3, 5; position 5 is
    the right padding, so the last one is dropped. Rows covered: {0}, {1,2},
    {3,4} (same for columns), so out[i, j] = 5*max_row_i + max_col_j.
    """
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    values, indices = ovpool.max_pool(
        x, (2, 2), strides=(2, 2), pads=(1, 1, 1, 1), ceil_mode=True, return_indices=True
    )
    expected = f32([[0, 2, 4], [10, 12, 14], [20, 22, 24]]).reshape(1, 1, 3, 3)
    np.testing.assert_array_equal(values, expected)
    np.testing.assert_array_equal(indices, expected.astype(np.int64))  # x = flat index
    torch = _torch()
    t = torch.nn.functional.max_pool2d(torch.from_numpy(x), 2, 2, 1, ceil_mode=True)
    np.testing.assert_array_equal(values, t.numpy())


def test_averagepool_2d_ceil_last_window_starts_on_pad_is_dropped():
    """Same geometry as the MaxPool case, averages (count_include_pad=0):
    row means 0, 1.5, 3.5, so out[i, j] = 5*mean_row_i + mean_col_j."""
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    got = ovpool.avg_pool(x, (2, 2), strides=(2, 2), pads=(1, 1, 1, 1), ceil_mode=True)
    expected = f32([[0, 1.5, 3.5], [7.5, 9, 11], [17.5, 19, 21]]).reshape(1, 1, 3, 3)
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_averagepool_1d_ceil_window_starting_inside_input_is_kept():
    """x = [1..5] (1,1,5), k2 s2, no pads, ceil_mode: windows at 0, 2, 4; the
    last one starts inside the input and holds only x[4] -> [1.5, 3.5, 5]."""
    x = f32([[[1, 2, 3, 4, 5]]])
    got = ovpool.avg_pool(x, (2,), strides=(2,), ceil_mode=True)
    np.testing.assert_allclose(got, f32([[[1.5, 3.5, 5]]]), rtol=1e-6)
    floor = ovpool.avg_pool(x, (2,), strides=(2,), ceil_mode=False)
    np.testing.assert_allclose(floor, f32([[[1.5, 3.5]]]), rtol=1e-6)


def test_averagepool_1d_ceil_count_include_pad_counts_declared_pads_only():
    """x = [1..6] (1,1,6), k3 s2 pads (1,1), ceil_mode, count_include_pad.

    ceil((6+2-3)/2)+1 = 4 windows starting at -1, 1, 3, 5:
      taps {-1,0,1}: (0+1+2)/3 = 1    ({-1} is a declared pad: counted)
      taps {1,2,3}:  (2+3+4)/3 = 3
      taps {3,4,5}:  (4+5+6)/3 = 5
      taps {5,6,7}:  6/2 = 3          (6 is the declared pad, 7 is added by
                                       ceil rounding and not counted)
    Dividing by the full kernel (OpenVINO CPU) would give 2, by the taps
    inside the input would give 6.
    """
    x = f32([[[1, 2, 3, 4, 5, 6]]])
    got = ovpool.avg_pool(
        x, (3,), strides=(2,), pads=(1, 1), ceil_mode=True, count_include_pad=True
    )
    np.testing.assert_allclose(got, f32([[[1, 3, 5, 3]]]), rtol=1e-6)
    torch = _torch()
    t = torch.nn.functional.avg_pool1d(
        torch.from_numpy(x), 3, 2, 1, ceil_mode=True, count_include_pad=True
    )
    np.testing.assert_allclose(got, t.numpy(), rtol=1e-6)


def test_averagepool_2d_ceil_count_include_pad_divisors():
    """Ones (1,1,6,6), k3 s2 pads 1, ceil, count_include_pad -> (1,1,4,4).

    Per axis the divisor factors are 3, 3, 3, 2 (the last window holds input
    position 5 and declared pad 6, not the ceil position 7) and the sums 2, 3,
    3, 1: per-axis ratios 2/3, 1, 1, 1/2 and out = outer product.
    """
    x = np.ones((1, 1, 6, 6), dtype=np.float32)
    got = ovpool.avg_pool(
        x, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1), ceil_mode=True, count_include_pad=True
    )
    axis = np.array([2 / 3, 1, 1, 1 / 2])
    np.testing.assert_allclose(got[0, 0], np.outer(axis, axis), rtol=1e-6)


def test_averagepool_1d_count_include_pad_without_ceil():
    """x = [1..4], k3 s1 pads (2,1), count_include_pad -> divisors all 3:
    taps {-2,-1,0}: 1/3, {-1,0,1}: 3/3, {0,1,2}: 6/3, {1,2,3}: 9/3, {2,3,4}: 7/3."""
    x = f32([[[1, 2, 3, 4]]])
    got = ovpool.avg_pool(x, (3,), pads=(2, 1), count_include_pad=True)
    np.testing.assert_allclose(got, f32([[[1, 3, 6, 9, 7]]]) / 3, rtol=1e-6)
    excluded = ovpool.avg_pool(x, (3,), pads=(2, 1), count_include_pad=False)
    np.testing.assert_allclose(excluded, f32([[[1, 1.5, 2, 3, 3.5]]]), rtol=1e-6)


def test_averagepool_3d_counts_the_pads_of_a_depth_of_one():
    """A depth of 1 padded (1, 1) by SAME_UPPER under a 3-deep kernel, with
    count_include_pad: each window's divisor is 3 (depth, two of it padding)
    x 2 x 2 = 12, though every depth window holds one element and H, W tile
    (the first window sums 0 + 1 + 4 + 5 = 10: 10 / 12)."""
    x = np.arange(24, dtype=np.float32).reshape(1, 3, 1, 2, 4)
    got = ovpool.avg_pool(
        x, (3, 2, 2), strides=(1, 2, 2), auto_pad="SAME_UPPER", count_include_pad=True
    )
    sums = np.array([10, 18, 42, 50, 74, 82], np.float32)
    np.testing.assert_allclose(got.ravel(), sums / 12, rtol=1e-6)
    onnx = pytest.importorskip("onnx")
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node(
        "AveragePool",
        ["X"],
        ["Y"],
        kernel_shape=[3, 2, 2],
        strides=[1, 2, 2],
        auto_pad="SAME_UPPER",
        count_include_pad=1,
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    np.testing.assert_allclose(got, ReferenceEvaluator(model).run(None, {"X": x})[0], rtol=1e-6)


# --------------------------------------------------------------------------
# auto_pad
# --------------------------------------------------------------------------


def test_same_upper_puts_the_odd_pad_at_the_end():
    """x = [1..5], k2 s1, SAME_UPPER: output 5, one pad element at the end:
    windows [1,2] [2,3] [3,4] [4,5] [5,pad]."""
    x = f32([[[1, 2, 3, 4, 5]]])
    np.testing.assert_allclose(
        ovpool.avg_pool(x, (2,), auto_pad="SAME_UPPER"), f32([[[1.5, 2.5, 3.5, 4.5, 5]]]), rtol=1e-6
    )
    np.testing.assert_allclose(
        ovpool.avg_pool(x, (2,), auto_pad="SAME_UPPER", count_include_pad=True),
        f32([[[1.5, 2.5, 3.5, 4.5, 2.5]]]),
        rtol=1e-6,
    )
    values, indices = ovpool.max_pool(x, (2,), auto_pad="SAME_UPPER", return_indices=True)
    np.testing.assert_array_equal(values, f32([[[2, 3, 4, 5, 5]]]))
    np.testing.assert_array_equal(indices, [[[1, 2, 3, 4, 4]]])


def test_same_lower_puts_the_odd_pad_at_the_beginning():
    """x = [1..5], k2 s1, SAME_LOWER: windows [pad,1] [1,2] [2,3] [3,4] [4,5].
    (onnx.reference gets SAME_LOWER MaxPool wrong; ORT is checked too.)"""
    x = f32([[[1, 2, 3, 4, 5]]])
    np.testing.assert_allclose(
        ovpool.avg_pool(x, (2,), auto_pad="SAME_LOWER"), f32([[[1, 1.5, 2.5, 3.5, 4.5]]]), rtol=1e-6
    )
    np.testing.assert_allclose(
        ovpool.avg_pool(x, (2,), auto_pad="SAME_LOWER", count_include_pad=True),
        f32([[[0.5, 1.5, 2.5, 3.5, 4.5]]]),
        rtol=1e-6,
    )
    values, indices = ovpool.max_pool(x, (2,), auto_pad="SAME_LOWER", return_indices=True)
    np.testing.assert_array_equal(values, f32([[[1, 2, 3, 4, 5]]]))
    np.testing.assert_array_equal(indices, [[[0, 1, 2, 3, 4]]])
    pytest.importorskip("onnxruntime")
    from references import onnxruntime_run

    ort_values, ort_indices = onnxruntime_run(
        "MaxPool", [x], dict(kernel_shape=[2], auto_pad="SAME_LOWER"), 2
    )
    np.testing.assert_array_equal(values, ort_values)
    np.testing.assert_array_equal(indices, ort_indices)


def test_same_2d_with_stride_odd_pads_on_each_side():
    """x (1,1,5,5) = 5*r + c, k3 s2: output ceil(5/2) = 3, total pad
    (3-1)*2 + 3 - 5 = 2 -> (1, 1) for both SAME modes: windows start at -1, 1, 3.
    For x (1,1,6,6) total pad (3-1)*2 + 3 - 6 = 1: SAME_UPPER (0, 1) gives window
    starts 0, 2, 4; SAME_LOWER (1, 0) gives -1, 1, 3."""
    x5 = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    for mode in ("SAME_UPPER", "SAME_LOWER"):
        got = ovpool.max_pool(x5, (3, 3), strides=(2, 2), auto_pad=mode)
        np.testing.assert_array_equal(got[0, 0], f32([[6, 8, 9], [16, 18, 19], [21, 23, 24]]))
    x6 = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)
    upper = ovpool.max_pool(x6, (3, 3), strides=(2, 2), auto_pad="SAME_UPPER")
    # rows covered {0,1,2} {2,3,4} {4,5}: max rows 2, 4, 5
    np.testing.assert_array_equal(upper[0, 0], 6 * f32([[2], [4], [5]]) + f32([2, 4, 5]))
    lower = ovpool.max_pool(x6, (3, 3), strides=(2, 2), auto_pad="SAME_LOWER")
    # rows covered {0,1} {1,2,3} {3,4,5}: max rows 1, 3, 5
    np.testing.assert_array_equal(lower[0, 0], 6 * f32([[1], [3], [5]]) + f32([1, 3, 5]))


def test_valid_auto_pad_uses_no_pads_and_ceil_mode_keeps_a_window_inside_the_input():
    """x = [1..7], k3 s2 VALID: windows at 0, 2, 4 -> means 2, 4, 6.
    x = [1..8] with ceil_mode: the window at 6 starts inside the input and is
    kept -> 2, 4, 6, 7.5 (ONNX Runtime, OpenVINO's valid + ceil). The ONNX
    spec's VALID formula ceil((in - ek + 1) / s) and onnx.reference give 3
    outputs here (onnx.reference's AveragePool refuses ceil_mode with auto_pad),
    so test_differential.py cannot count this case: it is pinned here."""
    x = f32([[[1, 2, 3, 4, 5, 6, 7]]])
    np.testing.assert_allclose(
        ovpool.avg_pool(x, (3,), strides=(2,), auto_pad="VALID"), f32([[[2, 4, 6]]]), rtol=1e-6
    )
    x8 = f32([[[1, 2, 3, 4, 5, 6, 7, 8]]])
    got = ovpool.avg_pool(x8, (3,), strides=(2,), auto_pad="VALID", ceil_mode=True)
    np.testing.assert_allclose(got, f32([[[2, 4, 6, 7.5]]]), rtol=1e-6)
    pytest.importorskip("onnxruntime")
    from references import onnxruntime_run

    ort = onnxruntime_run(
        "AveragePool", [x8], dict(kernel_shape=[3], strides=[2], auto_pad="VALID", ceil_mode=1)
    )[0]
    np.testing.assert_allclose(got, ort, rtol=1e-6)


def test_same_upper_and_lower_with_dilation_use_the_dilated_kernel():
    """x = [0..6] (1,1,7), k3 d2 (effective 5) s2: output ceil(7/2) = 4, total
    pad (4-1)*2 + 5 - 7 = 4 -> (2, 2) for both modes; windows at -2, 0, 2, 4
    with taps t, t+2, t+4: maxima 2, 4, 6, 6. For x = [0..5]: total pad 3,
    SAME_UPPER (1, 2): maxima 3, 5, 5; SAME_LOWER (2, 1): maxima 2, 4, 4.

    This is the ONNX spec and OpenVINO. ONNX Runtime ignores the dilation
    when computing SAME pads (it returns 3 outputs [3, 5, 5] for n=7), and
    onnx.reference's SAME_LOWER does too, which is why test_differential.py
    leaves SAME + dilations out; test_ov_ops.py compares them with OpenVINO.
    """
    x7 = np.arange(7, dtype=np.float32).reshape(1, 1, 7)
    for mode in ("SAME_UPPER", "SAME_LOWER"):
        values, indices = ovpool.max_pool(
            x7, (3,), strides=(2,), dilations=(2,), auto_pad=mode, return_indices=True
        )
        np.testing.assert_array_equal(values, f32([[[2, 4, 6, 6]]]))
        np.testing.assert_array_equal(indices, [[[2, 4, 6, 6]]])
    x6 = np.arange(6, dtype=np.float32).reshape(1, 1, 6)
    np.testing.assert_array_equal(
        ovpool.max_pool(x6, (3,), strides=(2,), dilations=(2,), auto_pad="SAME_UPPER"),
        f32([[[3, 5, 5]]]),
    )
    np.testing.assert_array_equal(
        ovpool.max_pool(x6, (3,), strides=(2,), dilations=(2,), auto_pad="SAME_LOWER"),
        f32([[[2, 4, 4]]]),
    )
    pytest.importorskip("onnx")
    from references import onnx_reference  # SAME_UPPER is right there

    ref = onnx_reference(
        "MaxPool", [x7], dict(kernel_shape=[3], strides=[2], dilations=[2], auto_pad="SAME_UPPER")
    )[0]
    np.testing.assert_array_equal(ref, f32([[[2, 4, 6, 6]]]))


def test_same_with_stride_larger_than_kernel_pads_zero_not_negative():
    """x = [0..5] (1,1,6), k1 s3 SAME_UPPER/SAME_LOWER: output ceil(6/3) = 2;
    the spec formula (2-1)*3 + 1 - 6 = -2 is negative: ovpool (like OpenVINO)
    pads 0, windows at 0 and 3 -> [0, 3]. onnx.reference pads by -1 (crops,
    giving [1, 4]) and ONNX Runtime refuses ("padding values must be
    non-negative") in 1D but crops like onnx.reference in 3D."""
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 6)
    for mode in ("SAME_UPPER", "SAME_LOWER"):
        np.testing.assert_array_equal(
            ovpool.max_pool(x, (1,), strides=(3,), auto_pad=mode), f32([[[0, 3]]])
        )
        np.testing.assert_array_equal(
            ovpool.avg_pool(x, (1,), strides=(3,), auto_pad=mode), f32([[[0, 3]]])
        )


# --------------------------------------------------------------------------
# dilations
# --------------------------------------------------------------------------


def test_maxpool_and_averagepool_1d_dilations():
    """x = [3,1,4,1,5,9,2,6,5,3], k3 d2 s1: taps i, i+2, i+4 for i = 0..5:
    {3,4,5}->5@4  {1,1,9}->9@5  {4,5,2}->5@4  {1,9,6}->9@5  {5,2,5}->5@4 (tie: first)
    {9,6,3}->9@5; sums 12, 11, 11, 16, 12, 18."""
    x = f32([[[3, 1, 4, 1, 5, 9, 2, 6, 5, 3]]])
    values, indices = ovpool.max_pool(x, (3,), dilations=(2,), return_indices=True)
    np.testing.assert_array_equal(values, f32([[[5, 9, 5, 9, 5, 9]]]))
    np.testing.assert_array_equal(indices, [[[4, 5, 4, 5, 4, 5]]])
    np.testing.assert_allclose(
        ovpool.avg_pool(x, (3,), dilations=(2,)), f32([[[12, 11, 11, 16, 12, 18]]]) / 3, rtol=1e-6
    )
    np.testing.assert_allclose(
        ovpool.lp_pool(x, (3,), dilations=(2,), p=1), f32([[[12, 11, 11, 16, 12, 18]]]), rtol=1e-6
    )


def test_maxpool_2d_dilations_with_pads_skip_taps_in_the_padding():
    """x (1,1,4,4) = 4*r + c, k2 d2 s1 pads 1 (all sides): output
    (4+2-3)+1 = 4 per axis; window o has taps o-1 and o+1 per axis, so the
    largest tap inside the input is min(o+1, 3) (o-1 when o+1 = 4):
    rows/cols 1, 2, 3, 2 -> out = 4*[1,2,3,2]^T + [1,2,3,2]."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    values, indices = ovpool.max_pool(
        x, (2, 2), dilations=(2, 2), pads=(1, 1, 1, 1), return_indices=True
    )
    axis = f32([1, 2, 3, 2])
    expected = 4 * axis[:, None] + axis[None, :]
    np.testing.assert_array_equal(values[0, 0], expected)
    np.testing.assert_array_equal(indices[0, 0], expected.astype(np.int64))


# --------------------------------------------------------------------------
# max: ties and NaN
# --------------------------------------------------------------------------


def test_maxpool_ties_go_to_the_first_max_in_row_major_window_order():
    """x (1,1,3,3) = [[1,5,0],[5,2,5],[0,5,5]], k2 s1 -> (1,1,2,2):
    window (0,0) [[1,5],[5,2]]: 5 at (0,1) and (1,0) -> (0,1) = 1 (an earlier
      row beats an earlier column)
    window (0,1) [[5,0],[2,5]]: (0,1) = 1 beats (1,2) = 5
    window (1,0) [[5,2],[0,5]]: (1,0) = 3 beats (2,1) = 7
    window (1,1) [[2,5],[5,5]]: (1,2) = 5 beats (2,1), (2,2)."""
    x = f32([[[[1, 5, 0], [5, 2, 5], [0, 5, 5]]]])
    values, indices = ovpool.max_pool(x, (2, 2), strides=(1, 1), return_indices=True)
    np.testing.assert_array_equal(values, np.full((1, 1, 2, 2), 5, np.float32))
    np.testing.assert_array_equal(indices, [[[[1, 1], [3, 5]]]])
    a_values, a_indices = ovpool.adaptive_max_pool(x, (2, 2))  # bins [0,2) [1,3): same windows
    np.testing.assert_array_equal(a_indices, [[[[1, 1], [3, 5]]]])
    torch = _torch()
    _, t_indices = torch.nn.functional.max_pool2d(torch.from_numpy(x), 2, 1, return_indices=True)
    np.testing.assert_array_equal(indices, t_indices.numpy())


def test_maxpool_3d_ties_across_depth_go_to_the_first_slice():
    """x (1,1,2,2,2) all 7 except nothing: every element ties; k2 -> the first
    element (0,0,0), index 0. With x[0,0,1,0,0] = 9 the max is unique: index 4."""
    x = np.full((1, 1, 2, 2, 2), 7, np.float32)
    values, indices = ovpool.max_pool(x, (2, 2, 2), return_indices=True)
    assert values.ravel().tolist() == [7] and indices.ravel().tolist() == [0]
    x[0, 0, 1, 0, 0] = 9
    values, indices = ovpool.max_pool(x, (2, 2, 2), return_indices=True)
    assert values.ravel().tolist() == [9] and indices.ravel().tolist() == [4]


def test_maxpool_nan_propagates_with_the_last_nan_index_in_row_major_order():
    """PyTorch's rule. x (1,1,3,3) = [[1,nan,0],[nan,2,5],[0,5,nan]], k2 s1:
    window (0,0) NaN at (0,1) and (1,0): the last in row-major order is
      (1,0) = 3 (a later row wins even at an earlier column)
    window (0,1) NaN at (0,1) only -> 1
    window (1,0) NaN at (1,0) only -> 3
    window (1,1) NaN at (2,2) -> 8."""
    x = f32([[[[1, np.nan, 0], [np.nan, 2, 5], [0, 5, np.nan]]]])
    values, indices = ovpool.max_pool(x, (2, 2), return_indices=True)
    assert np.isnan(values).all()
    np.testing.assert_array_equal(indices, [[[[3, 1], [3, 8]]]])
    assert np.isnan(ovpool.max_pool(x, (2, 2))).all()  # values-only path
    a_values, a_indices = ovpool.adaptive_max_pool(x, 2)
    assert np.isnan(a_values).all()
    np.testing.assert_array_equal(a_indices, [[[[3, 1], [3, 8]]]])
    torch = _torch()
    t_values, t_indices = torch.nn.functional.max_pool2d(
        torch.from_numpy(x), 2, 1, return_indices=True
    )
    np.testing.assert_array_equal(values, t_values.numpy())
    np.testing.assert_array_equal(indices, t_indices.numpy())


def test_maxpool_1d_nan_then_larger_value_stays_nan():
    """x = [1, nan, 3, nan, 2] k5 -> NaN at index 3 (the last NaN); x = [nan, 5]
    k2 -> NaN at 0 (5 > NaN is false, NaN is kept); torch agrees."""
    x = f32([[[1, np.nan, 3, np.nan, 2]]])
    values, indices = ovpool.max_pool(x, (5,), return_indices=True)
    assert np.isnan(values).all() and indices.ravel().tolist() == [3]
    y = f32([[[np.nan, 5]]])
    values, indices = ovpool.max_pool(y, (2,), return_indices=True)
    assert np.isnan(values).all() and indices.ravel().tolist() == [0]
    torch = _torch()
    for data, k in ((x, 5), (y, 2)):
        _, t_indices = torch.nn.functional.max_pool1d(
            torch.from_numpy(data), k, return_indices=True
        )
        np.testing.assert_array_equal(
            ovpool.max_pool(data, (k,), return_indices=True)[1], t_indices.numpy()
        )


def test_global_max_pool_propagates_nan():
    x = f32([[[1, np.nan, 3]], [[1, 2, 3]]]).reshape(2, 1, 3)
    got = ovpool.global_max_pool(x)
    assert np.isnan(got[0, 0, 0]) and got[1, 0, 0] == 3


# --------------------------------------------------------------------------
# indices: storage order, N and C
# --------------------------------------------------------------------------


def _storage_order_input():
    """x (1,2,3,4): channel 0 = arange(12) (window max bottom-right),
    channel 1 = -arange(12) (window max top-left)."""
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    return np.stack([base, -base])[None]


def test_maxpool_2d_storage_order_0_indices_are_row_major_over_the_tensor():
    """k2 s(1,2) -> (1,2,2,2). Channel 0 maxima at (1,1),(1,3),(2,1),(2,3):
    c*12 + h*4 + w = 5, 7, 9, 11; channel 1 at (0,0),(0,2),(1,0),(1,2): 12 + 0, 2, 4, 6."""
    values, indices = ovpool.max_pool(
        _storage_order_input(), (2, 2), strides=(1, 2), return_indices=True
    )
    np.testing.assert_array_equal(indices, [[[[5, 7], [9, 11]], [[12, 14], [16, 18]]]])


def test_maxpool_2d_storage_order_1_indices_are_column_major():
    """Same maxima, index c*12 + h + w*3: channel 0: 1+3, 1+9, 2+3, 2+9 = 4, 10, 5, 11;
    channel 1: 12 + 0, 6, 1, 7. Checked against ONNX Runtime as well."""
    x = _storage_order_input()
    values, indices = ovpool.max_pool(
        x, (2, 2), strides=(1, 2), storage_order=1, return_indices=True
    )
    np.testing.assert_array_equal(indices, [[[[4, 10], [5, 11]], [[12, 18], [13, 19]]]])
    pytest.importorskip("onnxruntime")
    from references import onnxruntime_run

    ort = onnxruntime_run(
        "MaxPool", [x], dict(kernel_shape=[2, 2], strides=[1, 2], storage_order=1), 2
    )
    np.testing.assert_array_equal(values, ort[0])
    np.testing.assert_array_equal(indices, ort[1])


def test_maxpool_3d_storage_order_1_indices_are_column_major():
    """x (1,1,2,2,2) = arange(8) (x[d,h,w] = 4d + 2h + w), k (2,2,1) -> (1,1,1,1,2):
    maxima at (1,1,0) and (1,1,1); row-major 6, 7; column-major d + 2h + 4w = 3, 7."""
    x = np.arange(8, dtype=np.float32).reshape(1, 1, 2, 2, 2)
    _, row_major = ovpool.max_pool(x, (2, 2, 1), return_indices=True)
    _, column_major = ovpool.max_pool(x, (2, 2, 1), storage_order=1, return_indices=True)
    assert row_major.ravel().tolist() == [6, 7]
    assert column_major.ravel().tolist() == [3, 7]
    pytest.importorskip("onnxruntime")
    from references import onnxruntime_run

    ort = onnxruntime_run("MaxPool", [x], dict(kernel_shape=[2, 2, 1], storage_order=1), 2)
    np.testing.assert_array_equal(column_major, ort[1])


def test_maxpool_indices_are_flattened_over_n_and_c():
    """x (2,3,2,2) = arange(24), global 2x2 window: the max of plane p = n*3 + c
    is its last element, index 4p + 3."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2)
    values, indices = ovpool.max_pool(x, (2, 2), return_indices=True)
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(indices.reshape(2, 3), [[3, 7, 11], [15, 19, 23]])
    np.testing.assert_array_equal(values.reshape(2, 3), [[3, 7, 11], [15, 19, 23]])


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64, "i32", "i64"])
def test_adaptive_max_pool_indices_are_per_plane(index_dtype):
    """Same x (2,3,2,2), output 1x1: every plane's max is its element 3."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2)
    values, indices = ovpool.adaptive_max_pool(x, (1, 1), index_dtype=index_dtype)
    expected_dtype = np.int32 if index_dtype in (np.int32, "i32") else np.int64
    assert indices.dtype == expected_dtype
    np.testing.assert_array_equal(indices, np.full((2, 3, 1, 1), 3))
    np.testing.assert_array_equal(values.reshape(2, 3), [[3, 7, 11], [15, 19, 23]])


def test_adaptive_max_pool_default_index_dtype_is_int64():
    _, indices = ovpool.adaptive_max_pool(np.ones((1, 1, 4), np.float32), 2)
    assert indices.dtype == np.int64


# --------------------------------------------------------------------------
# adaptive bins
# --------------------------------------------------------------------------


def test_adaptive_pools_1d_output_larger_than_input():
    """x = [1,2,4,8,16] (1,1,5) -> 8 bins [floor(8i/... )]: bin i covers
    [floor(5i/8), ceil(5(i+1)/8)) = [0,1) [0,2) [1,2) [1,3) [2,4) [3,4) [3,5) [4,5):
    means 1, 1.5, 2, 3, 6, 8, 12, 16; maxima 1, 2, 2, 4, 8, 8, 16, 16 at
    0, 1, 1, 2, 3, 3, 4, 4."""
    x = f32([[[1, 2, 4, 8, 16]]])
    np.testing.assert_allclose(
        ovpool.adaptive_avg_pool(x, 8), f32([[[1, 1.5, 2, 3, 6, 8, 12, 16]]]), rtol=1e-6
    )
    values, indices = ovpool.adaptive_max_pool(x, 8)
    np.testing.assert_array_equal(values, f32([[[1, 2, 2, 4, 8, 8, 16, 16]]]))
    np.testing.assert_array_equal(indices, [[[0, 1, 1, 2, 3, 3, 4, 4]]])
    torch = _torch()
    t = torch.nn.functional.adaptive_avg_pool1d(torch.from_numpy(x), 8)
    np.testing.assert_allclose(ovpool.adaptive_avg_pool(x, 8), t.numpy(), rtol=1e-6)


def test_adaptive_pools_2d_overlapping_bins():
    """x (1,1,4,5) = 5r + c -> (3,2): row bins [0,2) [1,3) [2,4), column bins
    [0,3) [2,5). mean = 5*mean_row + mean_col with row means 0.5, 1.5, 2.5 and
    column means 1, 3; max = 5*max_row + max_col (max rows 1,2,3; cols 2,4)."""
    x = np.arange(20, dtype=np.float32).reshape(1, 1, 4, 5)
    np.testing.assert_allclose(
        ovpool.adaptive_avg_pool(x, (3, 2))[0, 0],
        f32([[3.5, 5.5], [8.5, 10.5], [13.5, 15.5]]),
        rtol=1e-6,
    )
    values, indices = ovpool.adaptive_max_pool(x, (3, 2))
    np.testing.assert_array_equal(values[0, 0], f32([[7, 9], [12, 14], [17, 19]]))
    np.testing.assert_array_equal(indices[0, 0], [[7, 9], [12, 14], [17, 19]])


def test_adaptive_avg_pool_openvino_reference_vectors_1d():
    """OpenVINO's AdaptiveAvgPool-8 reference case: (2,3,7) -> (2,3,3). Bins
    7->3: [0,3) [2,5) [4,7), expected sums derived by hand below (/3)."""
    x = f32(
        [
            [[0, 4, 1, 3, -2, -5, -2], [-2, 1, -3, 1, -3, -4, 0], [-2, 1, -1, -2, 3, -1, -3]],
            [[-1, -2, 3, 4, -3, -4, 1], [2, 0, -4, -5, -2, -2, -3], [2, 3, 1, -5, 2, -4, -2]],
        ]
    )
    sums = f32(
        [
            [
                [0 + 4 + 1, 1 + 3 - 2, -2 - 5 - 2],
                [-2 + 1 - 3, -3 + 1 - 3, -3 - 4 + 0],
                [-2 + 1 - 1, -1 - 2 + 3, 3 - 1 - 3],
            ],
            [
                [-1 - 2 + 3, 3 + 4 - 3, -3 - 4 + 1],
                [2 + 0 - 4, -4 - 5 - 2, -2 - 2 - 3],
                [2 + 3 + 1, 1 - 5 + 2, 2 - 4 - 2],
            ],
        ]
    )
    np.testing.assert_allclose(sums.ravel()[:3], [5, 2, -9])  # the OpenVINO numbers /3
    got = ovpool.adaptive_avg_pool(x, 3)
    np.testing.assert_allclose(got, sums / 3, rtol=1e-6, atol=1e-7)
    for dtype in (np.float16, np.float64):
        np.testing.assert_allclose(
            ovpool.adaptive_avg_pool(x.astype(dtype), 3).astype(np.float64),
            sums / 3,
            rtol=1e-3 if dtype == np.float16 else 1e-12,
            atol=1e-3,
        )


def test_adaptive_avg_pool_3d_bins_in_each_axis():
    """x (1,1,3,2,5) = 10d + 5h + w -> (2,1,2): depth bins [0,2) [1,3),
    height [0,2), width [0,3) [2,5): mean = 10*{0.5,1.5} + 5*0.5 + {1,3}."""
    x = np.arange(30, dtype=np.float32).reshape(1, 1, 3, 2, 5)
    got = ovpool.adaptive_avg_pool(x, (2, 1, 2))
    expected = 10 * f32([0.5, 1.5])[:, None, None] + 2.5 + f32([1, 3])[None, None, :]
    np.testing.assert_allclose(got[0, 0], expected, rtol=1e-6)


def _exact_adaptive_1d(x, n_out):
    """float64 numpy AdaptiveAvg/MaxPool along the last axis, bins in Python ints."""
    n_in = x.shape[-1]
    avg = np.empty(x.shape[:-1] + (n_out,))
    amax = np.empty(x.shape[:-1] + (n_out,), dtype=x.dtype)
    arg = np.empty(x.shape[:-1] + (n_out,), dtype=np.int64)
    for i in range(n_out):
        start = (i * n_in) // n_out
        end = -((-(i + 1) * n_in) // n_out)
        window = x[..., start:end].astype(np.float64)
        avg[..., i] = window.mean(axis=-1)
        amax[..., i] = x[..., start:end].max(axis=-1)
        arg[..., i] = start + window.argmax(axis=-1)
    return avg, amax, arg


def _float32_borders(n_in, n_out):
    """Bin borders of a float32 formula (what OpenVINO's CPU plugin computes)."""
    i = np.arange(n_out, dtype=np.float32)
    start = np.floor(i * np.float32(n_in) / np.float32(n_out)).astype(np.int64)
    end = np.ceil((i + 1) * np.float32(n_in) / np.float32(n_out)).astype(np.int64)
    return start, end


@pytest.mark.parametrize("n_in, n_out", [(100003, 997), (160000, 999)])
def test_adaptive_pools_1d_bins_are_exact_when_in_times_out_exceeds_2_pow_24(n_in, n_out):
    """In*Out > 2**24: float32 bin borders go wrong; ovpool's integer bins must
    match an exact float64 numpy implementation on every bin."""
    assert n_in * n_out > 2**24
    exact_start = np.array([(i * n_in) // n_out for i in range(n_out)])
    exact_end = np.array([-((-(i + 1) * n_in) // n_out) for i in range(n_out)])
    f_start, f_end = _float32_borders(n_in, n_out)
    assert (f_start != exact_start).any() or (f_end != exact_end).any(), (
        "the case must be one where a float32 formula is wrong"
    )
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, n_in)).astype(np.float32)
    avg, amax, arg = _exact_adaptive_1d(x, n_out)
    got = ovpool.adaptive_avg_pool(x, n_out)
    np.testing.assert_allclose(got, avg, rtol=1e-5, atol=1e-6)
    values, indices = ovpool.adaptive_max_pool(x, n_out)
    np.testing.assert_array_equal(values, amax)
    np.testing.assert_array_equal(indices, arg)


# --------------------------------------------------------------------------
# LpPool
# --------------------------------------------------------------------------


def test_lppool_1d_p1_p2_p3():
    """x = [3, -4, 0, 1], k2 s2: p=1 |3|+|-4| = 7, |0|+|1| = 1; p=2 sqrt(9+16) = 5,
    sqrt(0+1) = 1; p=3 (27+64)^(1/3) = 91^(1/3), 1."""
    x = f32([[[3, -4, 0, 1]]])
    np.testing.assert_allclose(
        ovpool.lp_pool(x, (2,), strides=(2,), p=1), f32([[[7, 1]]]), rtol=1e-6
    )
    np.testing.assert_allclose(
        ovpool.lp_pool(x, (2,), strides=(2,), p=2), f32([[[5, 1]]]), rtol=1e-6
    )
    np.testing.assert_allclose(
        ovpool.lp_pool(x, (2,), strides=(2,), p=3), f32([[[91 ** (1 / 3), 1]]]), rtol=1e-6
    )
    np.testing.assert_allclose(ovpool.global_lp_pool(x, p=2), f32([[[26**0.5]]]), rtol=1e-6)


def test_lppool_padding_contributes_zero():
    """x = [3, 4], k2 pads (1, 1), p=2: windows {pad,3} {3,4} {4,pad} -> 3, 5, 4."""
    x = f32([[[3, 4]]])
    np.testing.assert_allclose(
        ovpool.lp_pool(x, (2,), pads=(1, 1), p=2), f32([[[3, 5, 4]]]), rtol=1e-6
    )


# --------------------------------------------------------------------------
# dtypes
# --------------------------------------------------------------------------


def test_int8_max_pool_full_range_and_padding_is_not_zero():
    """x int8 [-128, 127, -1, 0, -128] k2 -> [127, 127, 0, 0] at [1, 1, 3, 3].
    All -100 with pads 1: the padding must not contribute 0 -> all -100."""
    x = np.array([[[-128, 127, -1, 0, -128]]], np.int8)
    values, indices = ovpool.max_pool(x, (2,), return_indices=True)
    assert values.dtype == np.int8
    np.testing.assert_array_equal(values, [[[127, 127, 0, 0]]])
    np.testing.assert_array_equal(indices, [[[1, 1, 3, 3]]])
    negative = np.full((1, 1, 3), -100, np.int8)
    values, indices = ovpool.max_pool(negative, (2,), pads=(1, 1), return_indices=True)
    np.testing.assert_array_equal(values, np.full((1, 1, 4), -100))
    np.testing.assert_array_equal(indices, [[[0, 0, 1, 2]]])
    np.testing.assert_array_equal(
        ovpool.max_pool(negative, (2,), pads=(1, 1)), np.full((1, 1, 4), -100)
    )


def test_uint8_max_pool_adaptive_and_global():
    """x uint8 [0, 255, 3, 200, 200] k2 -> [255, 255, 200, 200] at [1, 1, 3, 3]
    (the 200/200 tie keeps the first); adaptive 5->2 bins [0,3) [2,5): 255@1, 200@3;
    global: 255."""
    x = np.array([[[0, 255, 3, 200, 200]]], np.uint8)
    values, indices = ovpool.max_pool(x, (2,), return_indices=True)
    assert values.dtype == np.uint8
    np.testing.assert_array_equal(values, [[[255, 255, 200, 200]]])
    np.testing.assert_array_equal(indices, [[[1, 1, 3, 3]]])
    a_values, a_indices = ovpool.adaptive_max_pool(x, 2)
    assert a_values.dtype == np.uint8
    np.testing.assert_array_equal(a_values, [[[255, 200]]])
    np.testing.assert_array_equal(a_indices, [[[1, 3]]])
    g = ovpool.global_max_pool(x)
    assert g.dtype == np.uint8 and g.ravel().tolist() == [255]


def _low_precision_ops():
    """(name, fn) of every float op, each taking one 4-D input."""
    return [
        ("avg_pool", lambda x: ovpool.avg_pool(x, (8, 8), strides=(4, 4), pads=(1, 1, 1, 1))),
        ("lp_pool", lambda x: ovpool.lp_pool(x, (8, 8), strides=(4, 4), p=2)),
        ("adaptive_avg_pool", lambda x: ovpool.adaptive_avg_pool(x, (3, 5))),
        ("global_avg_pool", ovpool.global_avg_pool),
        ("global_lp_pool", lambda x: ovpool.global_lp_pool(x, p=3)),
        ("max_pool", lambda x: ovpool.max_pool(x, (3, 3), strides=(2, 2))),
        ("adaptive_max_pool", lambda x: ovpool.adaptive_max_pool(x, (3, 5))[0]),
        ("global_max_pool", ovpool.global_max_pool),
    ]


def _exact_float64(name, x64):
    """The same ops in float64 numpy/torch, for the low-precision dtype tests."""
    torch = _torch()
    t = torch.from_numpy(x64)
    F = torch.nn.functional
    with torch.no_grad():
        return {
            "avg_pool": lambda: F.avg_pool2d(t, 8, 4, 1, count_include_pad=False),
            "lp_pool": lambda: F.lp_pool2d(t.abs(), 2, 8, 4),
            "adaptive_avg_pool": lambda: F.adaptive_avg_pool2d(t, (3, 5)),
            "global_avg_pool": lambda: t.mean(dim=(2, 3), keepdim=True),
            "global_lp_pool": lambda: (t.abs() ** 3).sum(dim=(2, 3), keepdim=True) ** (1 / 3),
            "max_pool": lambda: F.max_pool2d(t, 3, 2),
            "adaptive_max_pool": lambda: F.adaptive_max_pool2d(t, (3, 5)),
            "global_max_pool": lambda: t.amax(dim=(2, 3), keepdim=True),
        }[name]().numpy()


@pytest.mark.parametrize(
    "name, fn", _low_precision_ops(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_float16_inputs_return_float16_with_float32_accurate_values(name, fn):
    """Sums over 64 elements in float16 would be off by several ulp; computed in
    float32 and rounded once, every value is within 1 float16 ulp of the exact
    float64 result (max values are exact)."""
    rng = np.random.default_rng(16)
    x = (rng.random((2, 3, 20, 21)) + 0.5).astype(np.float16)
    got = fn(x)
    assert got.dtype == np.float16
    exact = _exact_float64(name, x.astype(np.float64))
    if "max" in name:
        np.testing.assert_array_equal(got, exact.astype(np.float16))
    else:
        np.testing.assert_array_max_ulp(got, exact.astype(np.float16), maxulp=1)


@pytest.mark.parametrize(
    "name, fn", _low_precision_ops(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_bfloat16_inputs_return_bfloat16_with_float32_accurate_values(name, fn):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(17)
    x = (rng.random((2, 3, 20, 21)) + 0.5).astype(ml_dtypes.bfloat16)
    got = fn(x)
    assert got.dtype == ml_dtypes.bfloat16
    exact = _exact_float64(name, x.astype(np.float64))
    got64 = got.astype(np.float64)
    if "max" in name:
        np.testing.assert_array_equal(got64, exact)
    else:
        # rounded once from float32: within one bfloat16 ulp (2**-7 relative)
        np.testing.assert_array_less(np.abs(got64 - exact), np.abs(exact) * 2.0**-7)


def test_float64_stays_float64_with_float64_accuracy():
    """x = 1 + k*1e-12 (k = 0..15), k4 s4 -> means 1 + 1.5e-12, 1 + 5.5e-12, ...:
    float32 would round every one of them to 1."""
    x = (1 + np.arange(16) * 1e-12).reshape(1, 1, 16)
    got = ovpool.avg_pool(x, (4,), strides=(4,))
    assert got.dtype == np.float64
    np.testing.assert_allclose(
        got, [[[1 + 1.5e-12, 1 + 5.5e-12, 1 + 9.5e-12, 1 + 13.5e-12]]], rtol=0, atol=1e-15
    )
    a = ovpool.adaptive_avg_pool(x, 4)
    assert a.dtype == np.float64
    np.testing.assert_allclose(a, got, rtol=0, atol=1e-15)
    values, _ = ovpool.max_pool(x, (4,), strides=(4,), return_indices=True)
    assert values.dtype == np.float64
    np.testing.assert_array_equal(values, x[..., 3::4])


# --------------------------------------------------------------------------
# layouts, empty tensors, out=
# --------------------------------------------------------------------------


def _views():
    rng = np.random.default_rng(3)
    base = rng.standard_normal((3, 2, 9, 11)).astype(np.float32)
    return {
        "transposed_spatial": base.transpose(0, 1, 3, 2),
        "transposed_nc": base.transpose(1, 0, 2, 3),
        "strided_slice": base[:, :, ::2, 1::3],
        "reversed": base[::-1, :, ::-1, :],
        "fortran": np.asfortranarray(base),
    }


@pytest.mark.parametrize("view_name", list(_views()))
def test_non_contiguous_inputs_give_the_same_result_as_contiguous(view_name):
    """Every op on a view equals the op on ``np.ascontiguousarray`` of the
    view, bit for bit, and matches torch on the view."""
    view = _views()[view_name]
    assert not view.flags.c_contiguous
    dense = np.ascontiguousarray(view)
    calls = [
        lambda x: ovpool.avg_pool(x, (2, 2), pads=(1, 0, 0, 1), count_include_pad=True),
        lambda x: ovpool.max_pool(x, (2, 2), return_indices=True),
        lambda x: ovpool.lp_pool(x, (2, 2), p=3),
        lambda x: ovpool.adaptive_avg_pool(x, (2, 3)),
        lambda x: ovpool.adaptive_max_pool(x, (2, 3)),
        ovpool.global_avg_pool,
        ovpool.global_max_pool,
    ]
    for call in calls:
        a, b = call(view), call(dense)
        for p, q in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            np.testing.assert_array_equal(p, q)
    torch = _torch()
    t = torch.from_numpy(dense)
    np.testing.assert_allclose(
        ovpool.adaptive_avg_pool(view, (2, 3)),
        torch.nn.functional.adaptive_avg_pool2d(t, (2, 3)).numpy(),
        rtol=1e-6,
        atol=1e-6,
    )
    np.testing.assert_array_equal(
        ovpool.max_pool(view, (2, 2)), torch.nn.functional.max_pool2d(t, 2, 1).numpy()
    )


def test_read_only_input_is_accepted():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    x.setflags(write=False)
    np.testing.assert_array_equal(
        ovpool.max_pool(x, (2, 2), strides=(2, 2)), f32([[[[5, 7], [13, 15]]]])
    )


def test_nested_list_input_is_accepted():
    np.testing.assert_allclose(
        ovpool.avg_pool([[[1.0, 2.0, 3.0, 5.0]]], (2,), strides=(2,)), [[[1.5, 4.0]]]
    )


EMPTY_SHAPES = [(0, 3, 6, 6), (2, 0, 6, 6), (0, 2, 7), (0, 1, 4, 4, 4)]


@pytest.mark.parametrize("return_indices", [False, True])
def test_openvino_max_pool_of_an_empty_row_is_its_padding(return_indices):
    """OpenVINO's MaxPool on a row of no element padded (1, 1): one window,
    all padding: the lowest float32 and index 0 (ovpool.ov_ops follows
    OpenVINO on empty windows), values alone or with indices."""
    from ovpool import ov_ops

    x = np.zeros((1, 1, 0), np.float32)
    got = ov_ops.max_pool(
        x, [2], [1], [1], [1], rounding_type="ceil", axis=2, return_indices=return_indices
    )
    values = got[0] if return_indices else got
    np.testing.assert_array_equal(values, np.full((1, 1, 1), np.finfo(np.float32).min))
    if return_indices:
        np.testing.assert_array_equal(got[1], np.zeros((1, 1, 1), np.int64))


@pytest.mark.parametrize("shape", EMPTY_SHAPES, ids=str)
def test_empty_n_or_c_gives_empty_outputs_of_the_right_shape(shape):
    """Pooling works on zero planes: output (N, C, *out_spatial) with 0 elements.
    k2 s2 on 6 (or 4) gives 3 (or 2); 7 gives 3; adaptive to 2; global to 1."""
    x = np.zeros(shape, np.float32)
    n, c = shape[:2]
    nd = len(shape) - 2
    pooled = tuple(s // 2 for s in shape[2:])
    k = (2,) * nd
    assert ovpool.avg_pool(x, k, strides=k).shape == (n, c) + pooled
    assert ovpool.lp_pool(x, k, strides=k).shape == (n, c) + pooled
    assert ovpool.max_pool(x, k, strides=k).shape == (n, c) + pooled
    values, indices = ovpool.max_pool(x, k, strides=k, return_indices=True)
    assert values.shape == indices.shape == (n, c) + pooled
    values, indices = ovpool.adaptive_max_pool(x, 2, index_dtype=np.int32)
    assert values.shape == indices.shape == (n, c) + (2,) * nd
    assert indices.dtype == np.int32
    assert ovpool.adaptive_avg_pool(x, 2).shape == (n, c) + (2,) * nd
    for fn in (ovpool.global_avg_pool, ovpool.global_max_pool, ovpool.global_lp_pool):
        assert fn(x).shape == (n, c) + (1,) * nd


def test_empty_n_max_unpool():
    x = np.zeros((0, 2, 2, 2), np.float32)
    got = ovpool.max_unpool(x, np.zeros(x.shape, np.int64), (2, 2), strides=(2, 2))
    assert got.shape == (0, 2, 4, 4) and got.dtype == np.float32


def test_out_buffers_are_used_and_returned():
    x = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
    out = np.full((1, 2, 2, 2), -1, np.float32)
    result = ovpool.avg_pool(x, (2, 2), strides=(2, 2), out=out)
    assert result is out
    np.testing.assert_allclose(out[0, 0], [[2.5, 4.5], [10.5, 12.5]])

    values = np.empty((1, 2, 2, 2), np.float32)
    indices = np.empty((1, 2, 2, 2), np.int64)
    result = ovpool.max_pool(
        x, (2, 2), strides=(2, 2), return_indices=True, out=values, out_indices=indices
    )
    assert result[0] is values and result[1] is indices
    np.testing.assert_array_equal(indices[0, 1], [[21, 23], [29, 31]])

    a_values = np.empty((1, 2, 1, 2), np.float32)
    a_indices = np.empty((1, 2, 1, 2), np.int32)
    result = ovpool.adaptive_max_pool(
        x, (1, 2), index_dtype=np.int32, out=a_values, out_indices=a_indices
    )
    assert result[0] is a_values and result[1] is a_indices
    np.testing.assert_array_equal(a_indices[0, 0], [[13, 15]])

    for fn, expected in ((ovpool.global_avg_pool, [7.5, 23.5]), (ovpool.global_max_pool, [15, 31])):
        g = np.empty((1, 2, 1, 1), np.float32)
        assert fn(x, out=g) is g
        np.testing.assert_allclose(g.ravel(), expected)

    a = np.empty((1, 2, 2, 2), np.float32)
    assert ovpool.adaptive_avg_pool(x, 2, out=a) is a
    np.testing.assert_allclose(a[0, 0], [[2.5, 4.5], [10.5, 12.5]])

    lp = np.empty((1, 2, 2, 2), np.float32)
    assert ovpool.lp_pool(x, (2, 2), strides=(2, 2), p=1, out=lp) is lp
    np.testing.assert_allclose(lp[0, 0], [[10, 18], [42, 50]])

    u = np.empty((1, 2, 4, 4), np.float32)
    assert ovpool.max_unpool(values, indices, (2, 2), strides=(2, 2), out=u) is u
    np.testing.assert_array_equal(
        u, np.where(np.isin(np.arange(32), indices.ravel()), np.arange(32), 0).reshape(1, 2, 4, 4)
    )


def test_out_buffer_of_a_float16_input_is_float16():
    x = np.arange(16, dtype=np.float16).reshape(1, 1, 4, 4)
    out = np.empty((1, 1, 2, 2), np.float16)
    assert ovpool.avg_pool(x, (2, 2), strides=(2, 2), out=out) is out
    np.testing.assert_array_equal(out, np.array([[[[2.5, 4.5], [10.5, 12.5]]]], np.float16))


# --------------------------------------------------------------------------
# MaxUnpool
# --------------------------------------------------------------------------


def test_maxunpool_roundtrip_with_max_pool_indices():
    """x (1,2,4,4) = arange(32), k2 s2: maxima at the bottom-right of each
    window; unpooling puts them back at their flat positions, zeros elsewhere."""
    x = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
    values, indices = ovpool.max_pool(x, (2, 2), strides=(2, 2), return_indices=True)
    got = ovpool.max_unpool(values, indices, (2, 2), strides=(2, 2))
    expected = np.zeros_like(x)
    expected[:, :, 1::2, 1::2] = x[:, :, 1::2, 1::2]
    np.testing.assert_array_equal(got, expected)


def test_maxunpool_default_shape_mode_follows_the_onnx_reference():
    """The ONNX conformance case: x [[5,6],[7,8]], indices [[5,7],[13,15]], k2 s2,
    output_shape (1,1,5,5). The indices address the default 4x4 output
    (rows 1, 3; cols 1, 3), placed at the origin of the 5x5 output."""
    x = f32([[[[5, 6], [7, 8]]]])
    indices = np.array([[[[5, 7], [13, 15]]]], np.int64)
    got = ovpool.max_unpool(x, indices, (2, 2), strides=(2, 2), output_shape=(1, 1, 5, 5))
    expected = np.zeros((1, 1, 5, 5), np.float32)
    expected[0, 0, 1, 1], expected[0, 0, 1, 3] = 5, 6
    expected[0, 0, 3, 1], expected[0, 0, 3, 3] = 7, 8
    np.testing.assert_array_equal(got, expected)
    pytest.importorskip("onnx")
    from references import onnx_reference

    ref = onnx_reference(
        "MaxUnpool",
        [x, indices, np.array([1, 1, 5, 5], np.int64)],
        dict(kernel_shape=[2, 2], strides=[2, 2]),
    )[0]
    np.testing.assert_array_equal(got, ref)


def test_maxunpool_output_shape_mode_follows_onnxruntime_and_torch():
    """MaxPool of x (1,1,5,5) = arange(25), k2 s2 -> maxima 6, 8, 16, 18 at
    those flat positions of the 5x5 input. indices_relative_to="output_shape"
    reads them in the 5x5 output: the inverse of the pool."""
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    values, indices = ovpool.max_pool(x, (2, 2), strides=(2, 2), return_indices=True)
    np.testing.assert_array_equal(indices.ravel(), [6, 8, 16, 18])
    got = ovpool.max_unpool(
        values,
        indices,
        (2, 2),
        strides=(2, 2),
        output_shape=x.shape,
        indices_relative_to="output_shape",
    )
    expected = np.zeros_like(x)
    expected.ravel()[[6, 8, 16, 18]] = [6, 8, 16, 18]
    np.testing.assert_array_equal(got, expected)
    pytest.importorskip("onnxruntime")
    from references import onnxruntime_run

    ort = onnxruntime_run(
        "MaxUnpool",
        [values, indices, np.array(x.shape, np.int64)],
        dict(kernel_shape=[2, 2], strides=[2, 2]),
    )[0]
    np.testing.assert_array_equal(got, ort)
    torch = _torch()
    t = torch.nn.functional.max_unpool2d(
        torch.from_numpy(values), torch.from_numpy(indices), 2, 2, output_size=[5, 5]
    )
    np.testing.assert_array_equal(got, t.numpy())
    # The default mode reads 16 and 18 as positions in the default 4x4 shape:
    # outside it, so it refuses instead of writing the wrong place.
    with pytest.raises(ovpool.OvpoolValueError, match="indices"):
        ovpool.max_unpool(values, indices, (2, 2), strides=(2, 2), output_shape=x.shape)


def test_maxunpool_duplicate_indices_last_one_wins():
    """x [1, 2] both at index 0 -> out[0] = 2 (ONNX Runtime's sequential loop)."""
    x = f32([[[1, 2]]])
    indices = np.array([[[0, 0]]], np.int64)
    got = ovpool.max_unpool(x, indices, (2,), strides=(2,))
    np.testing.assert_array_equal(got, f32([[[2, 0, 0, 0]]]))
    pytest.importorskip("onnxruntime")
    from references import onnxruntime_run

    ort = onnxruntime_run("MaxUnpool", [x, indices], dict(kernel_shape=[2], strides=[2]))[0]
    np.testing.assert_array_equal(got, ort)


def test_maxunpool_keeps_int8_and_accepts_int32_indices():
    x = np.array([[[-5, 7]]], np.int8)
    got = ovpool.max_unpool(x, np.array([[[1, 2]]], np.int32), (2,), strides=(2,))
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, [[[0, -5, 7, 0]]])


def test_empty_window_test_matches_the_window_tables():
    # shapes.axis_has_empty_window decides in O(log) steps without a table;
    # the kernels' window tables are the reference (a row with 0 taps)
    rng = np.random.default_rng(7)
    seen = {False: 0, True: 0}
    for _ in range(4000):
        n_in, kernel, stride = (int(v) for v in rng.integers(1, [13, 6, 7]))
        dilation, pad_begin, pad_end = (int(v) for v in rng.integers([1, 0, 0], [16, 9, 9]))
        n_out = int(rng.integers(1, 13))
        table = _isa.kernels.window_table(
            (n_in, n_out, False, kernel, stride, dilation, pad_begin, pad_end, 0)
        )
        expected = bool((table[:, 1] == 0).any())
        seen[expected] += 1
        assert (
            shapes.axis_has_empty_window(n_in, n_out, kernel, stride, dilation, pad_begin)
            == expected
        )
    assert min(seen.values()) > 500


def test_empty_window_test_of_a_huge_axis_builds_nothing():
    # kernel 2, stride 1, dilation n + 1, n padded in front: window o starts at
    # o - n and its second tap is at o + 1, so only the window starting at -1
    # (o = n - 1, taps -1 and n) misses an input of n; one of n + 1 holds it
    n = 1 << 39
    tracemalloc.start()
    try:
        assert shapes.axis_has_empty_window(n, 2 * n, 2, 1, n + 1, n)
        assert not shapes.axis_has_empty_window(n + 1, 2 * n, 2, 1, n + 1, n)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 16
