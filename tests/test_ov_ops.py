"""``ovpool.ov_ops`` (OpenVINO semantics) against OpenVINO's native ops.

Each comparison builds a one-op ``ov.Model`` with the opset builders
(AvgPool-14/-16, MaxPool-14, AdaptiveAvgPool-8, AdaptiveMaxPool-8) and runs
it on the CPU plugin in f32.

Where the CPU plugin deviates from OpenVINO's own specification (or is
inconsistent with itself), ovpool follows the specification and PyTorch; such
configurations are left out of the comparison with OpenVINO and checked
against torch / ONNX Runtime instead, and a test marked
``OPENVINO DEVIATION`` asserts that OpenVINO still differs, so that we notice
when OpenVINO fixes it:

1. AvgPool, exclude_pad=False, rounding ceil/ceil_torch, explicit pads: OV
   divides an edge window that reaches past the declared pads by the full
   kernel (torch and ONNX Runtime: by the taps inside input + declared pads).
2. AdaptiveAvgPool with In*Out > 2**24: OV computes bin borders in float32.
3. AdaptiveMaxPool with NaN: OV ignores a NaN unless it is the bin's first
   element (torch propagates it).
4. AdaptiveMaxPool with i64 indices does not compile on CPU (i32 is used).
5. auto_pad same_upper/same_lower with rounding_type="ceil" where the SAME
   total pad would be negative (effective kernel < stride): OV adds a window
   beyond ceil(in/stride) (the spec's shape rule for same_* is in/stride).
6. AvgPool exclude_pad with rounding_type="ceil": a window that starts beyond
   the declared pads_end gives -0 in OV, but NaN (0/0) when it starts inside
   the declared pads; ovpool gives NaN for both.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("openvino")

from references import (
    ov_adaptive_avg_pool,
    ov_adaptive_max_pool,
    ov_avg_pool,
    ov_max_pool,
)

import ovpool
from ovpool import ov_ops

FLT_LOWEST = np.float32(-3.4028235e38)


def f32(values):
    return np.array(values, dtype=np.float32)


def _effective(kernel, dilations):
    return [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]


def _same_pad_is_negative(spatial, kernel, strides, dilations):
    return any(
        (-(-n // s) - 1) * s + e - n < 0
        for n, s, e in zip(spatial, strides, _effective(kernel, dilations))
    )


def _window_starts_beyond_pads(spatial, out_spatial, strides, pads_begin, pads_end):
    return any(
        (o - 1) * s - pb >= n + pe
        for n, o, s, pb, pe in zip(spatial, out_spatial, strides, pads_begin, pads_end)
    )


def _error_or(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn()
        except Exception as exc:
            return exc


def random_ov_config(rng):
    nd = int(rng.integers(1, 4))
    max_size = {1: 16, 2: 9, 3: 6}[nd]
    kernel = [int(rng.integers(1, 5)) for _ in range(nd)]
    strides = [int(rng.integers(1, 4)) for _ in range(nd)]
    dilations = [int(rng.integers(1, 3)) for _ in range(nd)] if rng.random() < 0.4 else [1] * nd
    auto_pad = str(rng.choice(["explicit"] * 3 + ["same_upper", "same_lower", "valid"]))
    effective = _effective(kernel, dilations)
    # pads up to beyond the dilated kernel: MaxPool windows entirely in the padding are
    # legal in OV (and so is an include-pad AvgPool window)
    pads_begin = [int(rng.integers(0, e + 2)) for e in effective]
    pads_end = [int(rng.integers(0, e + 2)) for e in effective]
    rounding = str(rng.choice(["floor", "ceil", "ceil_torch"]))
    padding = [b + e if auto_pad == "explicit" else 0 for b, e in zip(pads_begin, pads_end)]
    spatial = [int(rng.integers(max(1, e - p), max_size + e)) for e, p in zip(effective, padding)]
    x = rng.standard_normal((int(rng.integers(1, 3)), int(rng.integers(1, 4)), *spatial)).astype(
        np.float32
    )
    return x, dict(
        kernel=kernel,
        strides=strides,
        pads_begin=pads_begin,
        pads_end=pads_end,
        dilations=dilations,
        rounding_type=rounding,
        auto_pad=auto_pad,
    )


def _known_ov_deviation(x, cfg, out_spatial, exclude_pad=None):
    """True for configurations where the CPU plugin deviates (module docstring)."""
    spatial = x.shape[2:]
    explicit = cfg["auto_pad"] == "explicit"
    if (
        cfg["rounding_type"] == "ceil"
        and cfg["auto_pad"].startswith("same")
        and _same_pad_is_negative(spatial, cfg["kernel"], cfg["strides"], cfg["dilations"])
    ):
        return True  # deviation 5
    if exclude_pad is None:
        return False
    if (
        not exclude_pad
        and cfg["rounding_type"] != "floor"
        and explicit
        and any(cfg["pads_begin"] + cfg["pads_end"])
    ):
        return True  # deviation 1
    if (
        exclude_pad
        and cfg["rounding_type"] == "ceil"
        and explicit
        and _window_starts_beyond_pads(
            spatial, out_spatial, cfg["strides"], cfg["pads_begin"], cfg["pads_end"]
        )
    ):
        return True  # deviation 6
    return False


# --------------------------------------------------------------------------
# randomized comparison with OpenVINO
# --------------------------------------------------------------------------


def test_avg_pool_random_configurations_match_openvino():
    """AvgPool-14 (AvgPool-16 with dilations): values within float32 rounding,
    NaN where OpenVINO has NaN; where OpenVINO refuses (exclude-pad windows
    entirely in the padding) ovpool must refuse too."""
    rng = np.random.default_rng(3001)
    total = compared = refused = 0
    failures = []
    for _ in range(150):
        x, cfg = random_ov_config(rng)
        exclude_pad = bool(rng.integers(0, 2))
        total += 1
        dilations = cfg["dilations"] if any(d > 1 for d in cfg["dilations"]) else None
        expected = _error_or(
            lambda: ov_avg_pool(
                x,
                cfg["kernel"],
                cfg["strides"],
                cfg["pads_begin"],
                cfg["pads_end"],
                exclude_pad=exclude_pad,
                rounding_type=cfg["rounding_type"],
                auto_pad=cfg["auto_pad"],
                dilations=dilations,
            )
        )
        got = _error_or(lambda: ov_ops.avg_pool(x, exclude_pad=exclude_pad, **cfg))
        context = f"x{x.shape} {cfg} exclude_pad={exclude_pad}"
        if isinstance(expected, Exception):
            refused += 1
            if not isinstance(got, ovpool.OvpoolValueError):
                failures.append(
                    f"{context}: OpenVINO refuses ({expected!s:.80}), ovpool "
                    f"returned {type(got).__name__}"
                )
            continue
        if isinstance(got, Exception):
            failures.append(f"{context}: ovpool raised {got}")
            continue
        if _known_ov_deviation(x, cfg, expected.shape[2:], exclude_pad):
            continue
        compared += 1
        if got.shape != expected.shape or not np.allclose(
            got, expected, rtol=1e-6, atol=1e-6, equal_nan=True
        ):
            failures.append(f"{context}: shapes {got.shape} {expected.shape}")
    assert not failures, "\n".join(failures[:20])
    assert compared >= 0.5 * total and refused < 0.3 * total


def test_max_pool_random_configurations_match_openvino():
    """MaxPool-14: values and indices bit-identical for every axis and index
    type, windows entirely in the padding included (lowest value, index =
    the first index of the window's plane)."""
    rng = np.random.default_rng(3002)
    total = compared = 0
    failures = []
    for _ in range(150):
        x, cfg = random_ov_config(rng)
        rank = x.ndim
        axis = int(rng.integers(-rank, rank))
        index_type = str(rng.choice(["i32", "i64"]))
        total += 1
        expected = ov_max_pool(
            x,
            cfg["kernel"],
            cfg["strides"],
            cfg["pads_begin"],
            cfg["pads_end"],
            dilations=cfg["dilations"],
            rounding_type=cfg["rounding_type"],
            auto_pad=cfg["auto_pad"],
            axis=axis,
            index_element_type=index_type,
        )
        if _known_ov_deviation(x, cfg, expected[0].shape[2:]):
            continue
        compared += 1
        values, indices = ov_ops.max_pool(x, axis=axis, index_element_type=index_type, **cfg)
        context = f"x{x.shape} {cfg} axis={axis} {index_type}"
        if (
            values.shape != expected[0].shape
            or indices.dtype != expected[1].dtype
            or not np.array_equal(values, expected[0])
            or not np.array_equal(indices, expected[1])
        ):
            failures.append(context)
        only_values = ov_ops.max_pool(x, return_indices=False, **cfg)
        if not np.array_equal(only_values, expected[0]):
            failures.append(context + " (values-only path)")
    assert not failures, "\n".join(failures[:20])
    assert compared >= 0.9 * total


def _random_adaptive(rng):
    nd = int(rng.integers(1, 4))
    spatial = [int(rng.integers(1, {1: 60, 2: 16, 3: 8}[nd] + 1)) for _ in range(nd)]
    output = [
        int(rng.integers(1, n + 1)) if rng.random() < 0.7 else int(rng.integers(n, n + 6))
        for n in spatial
    ]
    x = rng.standard_normal((int(rng.integers(1, 3)), int(rng.integers(1, 4)), *spatial)).astype(
        np.float32
    )
    if rng.random() < 0.3:
        x = np.round(x).astype(np.float32)  # ties
    return x, output


def test_adaptive_avg_pool_random_sizes_match_openvino():
    rng = np.random.default_rng(3003)
    for _ in range(60):
        x, output = _random_adaptive(rng)
        expected = ov_adaptive_avg_pool(x, output)
        got = ov_ops.adaptive_avg_pool(x, output)
        np.testing.assert_allclose(
            got, expected, rtol=1e-6, atol=1e-6, err_msg=f"x{x.shape} -> {output}"
        )


def test_adaptive_max_pool_random_sizes_match_openvino_i32_and_i64():
    """OpenVINO only compiles i32 indices on CPU; ovpool's i64 must hold the
    same numbers."""
    rng = np.random.default_rng(3004)
    for _ in range(60):
        x, output = _random_adaptive(rng)
        values, indices = ov_adaptive_max_pool(x, output, "i32")
        context = f"x{x.shape} -> {output}"
        for index_type, dtype in (("i32", np.int32), ("i64", np.int64)):
            got, got_indices = ov_ops.adaptive_max_pool(x, output, index_element_type=index_type)
            assert got_indices.dtype == dtype, context
            np.testing.assert_array_equal(got, values, err_msg=context)
            np.testing.assert_array_equal(got_indices, indices, err_msg=context)


def test_same_auto_pad_with_dilations_matches_openvino():
    """The family left out of the ONNX differential tests (ONNX Runtime ignores
    dilations in SAME pads): compared with OpenVINO here, MaxPool and AvgPool-16."""
    rng = np.random.default_rng(3005)
    for _ in range(40):
        nd = int(rng.integers(1, 4))
        kernel = [int(rng.integers(2, 5)) for _ in range(nd)]
        dilations = [int(rng.integers(2, 4)) for _ in range(nd)]
        strides = [int(rng.integers(1, 4)) for _ in range(nd)]
        mode = str(rng.choice(["same_upper", "same_lower"]))
        rounding = str(rng.choice(["floor", "ceil_torch"]))
        spatial = [int(rng.integers(1, {1: 20, 2: 10, 3: 6}[nd] + 1)) for _ in range(nd)]
        x = rng.standard_normal((1, 2, *spatial)).astype(np.float32)
        zeros = [0] * nd
        context = f"x{x.shape} k={kernel} d={dilations} s={strides} {mode} {rounding}"
        values, indices = ov_max_pool(
            x,
            kernel,
            strides,
            zeros,
            zeros,
            dilations=dilations,
            rounding_type=rounding,
            auto_pad=mode,
        )
        got, got_indices = ov_ops.max_pool(
            x,
            kernel,
            strides,
            zeros,
            zeros,
            dilations=dilations,
            rounding_type=rounding,
            auto_pad=mode,
        )
        assert got.shape == tuple(-(-n // s) for n, s in zip(x.shape, (1, 1, *strides))), context
        np.testing.assert_array_equal(got, values, err_msg=context)
        np.testing.assert_array_equal(got_indices, indices, err_msg=context)
        for exclude in (True, False):
            expected = ov_avg_pool(
                x,
                kernel,
                strides,
                zeros,
                zeros,
                exclude_pad=exclude,
                rounding_type=rounding,
                auto_pad=mode,
                dilations=dilations,
            )
            got = ov_ops.avg_pool(
                x,
                kernel,
                strides,
                zeros,
                zeros,
                exclude_pad=exclude,
                rounding_type=rounding,
                auto_pad=mode,
                dilations=dilations,
            )
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, err_msg=context)


# --------------------------------------------------------------------------
# hand-computed cases, checked against OpenVINO too
# --------------------------------------------------------------------------


def test_rounding_ceil_keeps_and_ceil_torch_drops_the_window_starting_in_right_padding():
    """x (1,1,5,5) = 5r + c, k2 s2 pads 1: windows start at -1, 1, 3, 5; the one
    at 5 lies in the right padding. ceil -> 4x4 (its row/column are empty:
    MaxPool -FLT_MAX, index 0 = start of the plane; exclude-pad AvgPool NaN,
    include-pad AvgPool 0), ceil_torch -> 3x3, floor -> 3x3."""
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    common = ((2, 2), (2, 2), (1, 1), (1, 1))
    values, indices = ov_ops.max_pool(x, *common, rounding_type="ceil")
    expected = np.full((4, 4), FLT_LOWEST, np.float32)
    expected[:3, :3] = [[0, 2, 4], [10, 12, 14], [20, 22, 24]]
    np.testing.assert_array_equal(values[0, 0], expected)
    expected_indices = np.zeros((4, 4), np.int64)
    expected_indices[:3, :3] = [[0, 2, 4], [10, 12, 14], [20, 22, 24]]
    np.testing.assert_array_equal(indices[0, 0], expected_indices)
    ov_values, ov_indices = ov_max_pool(x, *common, rounding_type="ceil")
    np.testing.assert_array_equal(values, ov_values)
    np.testing.assert_array_equal(indices, ov_indices)

    torch_values, _ = ov_ops.max_pool(x, *common, rounding_type="ceil_torch")
    np.testing.assert_array_equal(torch_values[0, 0], expected[:3, :3])
    np.testing.assert_array_equal(
        torch_values, ov_max_pool(x, *common, rounding_type="ceil_torch")[0]
    )

    excluded = ov_ops.avg_pool(x, *common, exclude_pad=True, rounding_type="ceil")
    means = f32([[0, 1.5, 3.5], [7.5, 9, 11], [17.5, 19, 21]])
    np.testing.assert_allclose(excluded[0, 0, :3, :3], means, rtol=1e-6)
    assert np.isnan(excluded[0, 0, 3, :]).all() and np.isnan(excluded[0, 0, :, 3]).all()
    np.testing.assert_allclose(
        excluded,
        ov_avg_pool(x, *common, exclude_pad=True, rounding_type="ceil"),
        rtol=1e-6,
        equal_nan=True,
    )
    included = ov_ops.avg_pool(x, *common, exclude_pad=False, rounding_type="ceil")
    # include-pad: rows (and columns) {-1,0} {1,2} {3,4} {5,6}: divisor factor 2 each
    # inside the declared padded range [-1, 6), the window at 5 has factor 1 and sum 0.
    # out = (5 * sum_rows * |cols| + sum_cols * |rows|) / 4 with row sums 0, 3, 7
    np.testing.assert_allclose(
        included[0, 0, :3, :3], f32([[0, 0.75, 1.75], [3.75, 9, 11], [8.75, 19, 21]]), rtol=1e-6
    )
    assert (included[0, 0, 3, :] == 0).all() and (included[0, 0, :, 3] == 0).all()
    np.testing.assert_allclose(
        included, ov_avg_pool(x, *common, exclude_pad=False, rounding_type="ceil"), rtol=1e-6
    )


def test_max_pool_8_axis_selects_the_index_base():
    """x (2,3,4,4) = arange(96), k2 s2: window maxima at (1,1),(1,3),(3,1),(3,3)
    of each plane p = 3n + c, i.e. plane offsets 5, 7, 13, 15:
    axis 0 (whole tensor): 16p + offset; axis 1 (per sample): 16c + offset;
    axis 2 and -2 (per plane): offset; axis 3 and -1 (last spatial axis, OpenVINO
    takes the index modulo W = 4): 1, 3, 1, 3."""
    x = np.arange(96, dtype=np.float32).reshape(2, 3, 4, 4)
    offsets = np.array([[5, 7], [13, 15]])
    plane = np.arange(6).reshape(2, 3, 1, 1)
    channel = np.arange(3).reshape(1, 3, 1, 1)
    expected = {
        0: 16 * plane + offsets,
        1: 16 * channel + offsets + 0 * plane,
        2: np.broadcast_to(offsets, (2, 3, 2, 2)),
        -2: np.broadcast_to(offsets, (2, 3, 2, 2)),
        3: np.broadcast_to(offsets % 4, (2, 3, 2, 2)),
        -1: np.broadcast_to(offsets % 4, (2, 3, 2, 2)),
        -4: 16 * plane + offsets,
    }
    for axis, want in expected.items():
        for index_type, dtype in (("i32", np.int32), ("i64", np.int64)):
            _, indices = ov_ops.max_pool(
                x, (2, 2), (2, 2), (0, 0), (0, 0), axis=axis, index_element_type=index_type
            )
            assert indices.dtype == dtype
            np.testing.assert_array_equal(indices, want, err_msg=f"axis={axis}")
            ov_indices = ov_max_pool(
                x, (2, 2), (2, 2), (0, 0), (0, 0), axis=axis, index_element_type=index_type
            )[1]
            np.testing.assert_array_equal(indices, ov_indices, err_msg=f"axis={axis}")


def test_max_pool_empty_windows_with_pads_as_large_as_the_kernel():
    """x (1,2,3) = arange(6), k2 s1 pads (2, 2): 3+4-2+1 = 6 windows start at
    -2..3; the first (taps -2, -1) and the last (taps 3, 4) lie in the padding:
    -FLT_MAX, index = first index of the plane (0 and 3 for axis 0, 0 for axis 2)."""
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    values, indices = ov_ops.max_pool(x, (2,), (1,), (2,), (2,))
    np.testing.assert_array_equal(
        values, f32([[[FLT_LOWEST, 0, 1, 2, 2, FLT_LOWEST], [FLT_LOWEST, 3, 4, 5, 5, FLT_LOWEST]]])
    )
    np.testing.assert_array_equal(indices, [[[0, 0, 1, 2, 2, 0], [3, 3, 4, 5, 5, 3]]])
    ov_values, ov_indices = ov_max_pool(x, (2,), (1,), (2,), (2,))
    np.testing.assert_array_equal(values, ov_values)
    np.testing.assert_array_equal(indices, ov_indices)
    _, per_plane = ov_ops.max_pool(x, (2,), (1,), (2,), (2,), axis=2)
    np.testing.assert_array_equal(per_plane, [[[0, 0, 1, 2, 2, 0], [0, 0, 1, 2, 2, 0]]])


@pytest.mark.parametrize("dtype, lowest", [(np.int8, -128), (np.uint8, 0)])
def test_max_pool_8bit_empty_windows_give_the_lowest_value_of_the_dtype(dtype, lowest):
    """Same geometry as the rounding case, 8-bit input: empty windows give the
    dtype's lowest value, as OpenVINO does."""
    x = (np.arange(25).reshape(1, 1, 5, 5) + (50 if dtype == np.uint8 else -100)).astype(dtype)
    values, indices = ov_ops.max_pool(x, (2, 2), (2, 2), (1, 1), (1, 1), rounding_type="ceil")
    assert values.dtype == dtype
    assert (values[0, 0, 3, :] == lowest).all() and (values[0, 0, :, 3] == lowest).all()
    ov_values, ov_indices = ov_max_pool(x, (2, 2), (2, 2), (1, 1), (1, 1), rounding_type="ceil")
    np.testing.assert_array_equal(values, ov_values)
    np.testing.assert_array_equal(indices, ov_indices)


def test_avg_pool_exclude_pad_window_in_declared_padding_is_nan():
    """x = [1..6], k3 s2 pads (0, 2), ceil: windows at 0, 2, 4, 6; the one at 6
    covers declared pads 6, 7 and position 8: no input element -> 0/0 = NaN
    with exclude-pad (OpenVINO too); include-pad: 0 (divisor 2, sum 0).
    Window at 4: (5+6)/2 = 5.5 exclude-pad, (5+6+0)/3 include-pad."""
    x = f32([[[1, 2, 3, 4, 5, 6]]])
    excluded = ov_ops.avg_pool(x, (3,), (2,), (0,), (2,), exclude_pad=True, rounding_type="ceil")
    np.testing.assert_allclose(excluded[..., :3], f32([[[2, 4, 5.5]]]), rtol=1e-6)
    assert np.isnan(excluded[0, 0, 3])
    np.testing.assert_allclose(
        excluded,
        ov_avg_pool(x, (3,), (2,), (0,), (2,), exclude_pad=True, rounding_type="ceil"),
        equal_nan=True,
    )
    included = ov_ops.avg_pool(x, (3,), (2,), (0,), (2,), exclude_pad=False, rounding_type="ceil")
    np.testing.assert_allclose(included, f32([[[2, 4, 11 / 3, 0]]]), rtol=1e-6)
    np.testing.assert_allclose(
        included,
        ov_avg_pool(x, (3,), (2,), (0,), (2,), exclude_pad=False, rounding_type="ceil"),
        rtol=1e-6,
    )


def test_avg_pool_16_dilations_and_valid_ceil_match_openvino():
    """x = [0..10], k2 d3 s2 valid: effective kernel 4, span 11 - 4 = 7; floor: 7//2 + 1
    = 4 windows at 0, 2, 4, 6
    -> means of (0,3) (2,5) (4,7) (6,9) = 1.5, 3.5, 5.5, 7.5; ceil keeps a window
    at 8 whose second tap (11) is outside -> 8 (OpenVINO applies the rounding to
    valid padding as well)."""
    x = np.arange(11, dtype=np.float32).reshape(1, 1, 11)
    floor = ov_ops.avg_pool(x, (2,), (2,), (0,), (0,), dilations=(3,), auto_pad="valid")
    np.testing.assert_allclose(floor, f32([[[1.5, 3.5, 5.5, 7.5]]]), rtol=1e-6)
    ceil = ov_ops.avg_pool(
        x, (2,), (2,), (0,), (0,), dilations=(3,), auto_pad="valid", rounding_type="ceil"
    )
    np.testing.assert_allclose(ceil, f32([[[1.5, 3.5, 5.5, 7.5, 8]]]), rtol=1e-6)
    for rounding, got in (("floor", floor), ("ceil", ceil)):
        expected = ov_avg_pool(
            x, (2,), (2,), (0,), (0,), dilations=(3,), auto_pad="valid", rounding_type=rounding
        )
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_explicit_pads_are_ignored_with_auto_pad_as_openvino_does():
    """With auto_pad other than explicit, OpenVINO ignores pads_begin/pads_end
    (its serializer even writes zeros): x [1..5] k2 same_upper with pads (3, 3)
    is SAME_UPPER: [1.5, 2.5, 3.5, 4.5, 5]."""
    x = f32([[[1, 2, 3, 4, 5]]])
    got = ov_ops.avg_pool(x, (2,), (1,), (3,), (3,), auto_pad="same_upper")
    np.testing.assert_allclose(got, f32([[[1.5, 2.5, 3.5, 4.5, 5]]]), rtol=1e-6)
    np.testing.assert_allclose(
        got, ov_avg_pool(x, (2,), (1,), (3,), (3,), auto_pad="same_upper"), rtol=1e-6
    )


# --------------------------------------------------------------------------
# where OpenVINO's CPU plugin deviates: compare with torch / ONNX Runtime
# --------------------------------------------------------------------------


def test_avg_pool_include_pad_ceil_torch_with_pads_matches_torch_and_onnxruntime():
    """Deviation 1's configurations, compared with the references OpenVINO's
    spec agrees with: ceil_torch + include-pad = torch ceil_mode +
    count_include_pad = ONNX AveragePool ceil_mode=1 count_include_pad=1;
    rounding ceil gives the same numbers plus windows in the padding (0)."""
    pytest.importorskip("torch")
    pytest.importorskip("onnxruntime")
    from references import onnxruntime_run, torch_avg_pool

    rng = np.random.default_rng(3006)
    for _ in range(40):
        nd = int(rng.integers(1, 4))
        kernel = [int(rng.integers(2, 5)) for _ in range(nd)]
        strides = [int(rng.integers(1, 4)) for _ in range(nd)]
        pads = [int(rng.integers(0, k // 2 + 1)) for k in kernel]
        spatial = [int(rng.integers(k, {1: 20, 2: 10, 3: 7}[nd] + k)) for k in kernel]
        x = rng.standard_normal((1, 2, *spatial)).astype(np.float32)
        context = f"x{x.shape} k={kernel} s={strides} pads={pads}"
        got = ov_ops.avg_pool(
            x, kernel, strides, pads, pads, exclude_pad=False, rounding_type="ceil_torch"
        )
        np.testing.assert_allclose(
            got,
            torch_avg_pool(x, kernel, strides, pads, ceil_mode=True, count_include_pad=True),
            rtol=1e-6,
            atol=1e-6,
            err_msg=context,
        )
        asymmetric_end = [int(rng.integers(0, k)) for k in kernel]
        got = ov_ops.avg_pool(
            x, kernel, strides, pads, asymmetric_end, exclude_pad=False, rounding_type="ceil_torch"
        )
        ort = onnxruntime_run(
            "AveragePool",
            [x],
            dict(
                kernel_shape=kernel,
                strides=strides,
                pads=pads + asymmetric_end,
                ceil_mode=1,
                count_include_pad=1,
            ),
        )[0]
        np.testing.assert_allclose(got, ort, rtol=1e-6, atol=1e-6, err_msg=context)
        keep = ov_ops.avg_pool(
            x, kernel, strides, pads, asymmetric_end, exclude_pad=False, rounding_type="ceil"
        )
        # the shape OpenVINO computes is right; only its divisors deviate
        ov_shape = ov_avg_pool(
            x, kernel, strides, pads, asymmetric_end, exclude_pad=False, rounding_type="ceil"
        ).shape
        assert keep.shape == ov_shape, context
        block = tuple(slice(0, n) for n in got.shape)
        np.testing.assert_array_equal(keep[block], got, err_msg=context)
        extra = np.ones(keep.shape, bool)
        extra[block] = False
        assert (keep[extra] == 0).all(), context


# --------------------------------------------------------------------------
# OPENVINO DEVIATION tests: they assert that OpenVINO still differs
# --------------------------------------------------------------------------

FIXED = (
    "OpenVINO no longer deviates here: compare ovpool with OpenVINO directly in the "
    "randomized tests above and delete this OPENVINO DEVIATION test"
)


def test_OPENVINO_DEVIATION_avg_pool_include_pad_ceil_divides_by_the_full_kernel():
    """x = [1..6], k3 s2 pads (1, 1), ceil_torch, exclude_pad=False: the window at
    5 holds input 5 (=6), declared pad 6 and ceil position 7. torch/ORT/ovpool:
    6/2 = 3. OpenVINO CPU: 6/3 = 2."""
    x = f32([[[1, 2, 3, 4, 5, 6]]])
    got = ov_ops.avg_pool(x, (3,), (2,), (1,), (1,), exclude_pad=False, rounding_type="ceil_torch")
    np.testing.assert_allclose(got, f32([[[1, 3, 5, 3]]]), rtol=1e-6)
    torch = pytest.importorskip("torch")
    t = torch.nn.functional.avg_pool1d(
        torch.from_numpy(x), 3, 2, 1, ceil_mode=True, count_include_pad=True
    )
    np.testing.assert_allclose(got, t.numpy(), rtol=1e-6)
    ov = ov_avg_pool(x, (3,), (2,), (1,), (1,), exclude_pad=False, rounding_type="ceil_torch")
    assert not np.allclose(ov, got), FIXED
    np.testing.assert_allclose(ov, f32([[[1, 3, 5, 2]]]), rtol=1e-6)


@pytest.mark.parametrize("n_in, n_out", [(100003, 997), (160000, 999)])
def test_OPENVINO_DEVIATION_adaptive_avg_pool_float32_bins_beyond_2_pow_24(n_in, n_out):
    """OpenVINO computes bin borders in float32: some bins are off by one element
    once In*Out > 2**24. ovpool's integer bins match a float64 numpy oracle."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 1, n_in)).astype(np.float32)
    exact = np.array(
        [
            x[0, 0, (i * n_in) // n_out : -((-(i + 1) * n_in) // n_out)].astype(np.float64).mean()
            for i in range(n_out)
        ]
    )
    got = ov_ops.adaptive_avg_pool(x, n_out)[0, 0]
    np.testing.assert_allclose(got, exact, rtol=1e-5, atol=1e-6)
    ov = ov_adaptive_avg_pool(x, [n_out])[0, 0]
    assert np.abs(ov - exact).max() > 1e-3, FIXED


def test_OPENVINO_DEVIATION_adaptive_max_pool_ignores_nan():
    """x (1,1,4,4) with NaN at (0,0), (1,3), (2,2), (3,0) -> 2x2 bins: torch and
    ovpool give NaN in every bin that holds one; OpenVINO ignores a NaN unless
    it is the first element of its bin."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    for r, c in ((0, 0), (1, 3), (2, 2), (3, 0)):
        x[0, 0, r, c] = np.nan
    values, indices = ov_ops.adaptive_max_pool(x, (2, 2))
    assert np.isnan(values).all()
    np.testing.assert_array_equal(indices[0, 0], [[0, 7], [12, 10]])  # the last NaN of each bin
    torch = pytest.importorskip("torch")
    t_values, t_indices = torch.nn.functional.adaptive_max_pool2d(
        torch.from_numpy(x), 2, return_indices=True
    )
    np.testing.assert_array_equal(values, t_values.numpy())
    np.testing.assert_array_equal(indices, t_indices.numpy())
    ov_values, _ = ov_adaptive_max_pool(x, (2, 2), "i32")
    assert not np.isnan(ov_values).all(), FIXED


def test_OPENVINO_DEVIATION_adaptive_max_pool_i64_indices_do_not_compile_on_cpu():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 16)
    with pytest.raises(Exception, match=r"i64|I64|int64"):
        ov_adaptive_max_pool(x, (4,), "i64")
    values, indices = ov_ops.adaptive_max_pool(x, 4, index_element_type="i64")
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(indices.ravel(), [3, 7, 11, 15])
    np.testing.assert_array_equal(indices, ov_adaptive_max_pool(x, (4,), "i32")[1])


def test_OPENVINO_DEVIATION_same_auto_pad_with_rounding_ceil_adds_a_window():
    """x = [0..14], k1 s3 same_upper/same_lower: output ceil(15/3) = 5 (the spec's
    shape rule for same_*), windows at 0, 3, 6, 9, 12. OpenVINO with
    rounding_type="ceil" returns 6, the last window lying outside the input
    (-FLT_MAX / NaN); with floor and ceil_torch it returns 5 like ovpool."""
    x = np.arange(15, dtype=np.float32).reshape(1, 1, 15)
    for mode in ("same_upper", "same_lower"):
        for rounding in ("floor", "ceil", "ceil_torch"):
            values, _ = ov_ops.max_pool(
                x, (1,), (3,), (0,), (0,), auto_pad=mode, rounding_type=rounding
            )
            np.testing.assert_array_equal(values, f32([[[0, 3, 6, 9, 12]]]))
        ov_values, _ = ov_max_pool(x, (1,), (3,), (0,), (0,), auto_pad=mode, rounding_type="ceil")
        assert ov_values.shape != values.shape, FIXED
        assert ov_values.shape == (1, 1, 6) and ov_values[0, 0, 5] == FLT_LOWEST


def test_avg_pool_exclude_pad_window_beyond_the_pads_is_minus_zero_as_in_openvino():
    """x = [1, 2], k2 s3 pads_end 1, ceil, exclude-pad: windows at 0 and 3; the
    one at 3 starts beyond the declared padding [2, 3) and holds no input.
    OpenVINO divides it by min(start + k, n) - start = -1: 0/-1 = -0, not the
    NaN of an empty window that starts right at the end of the input (see
    test_avg_pool_exclude_pad_window_in_declared_padding_is_nan); ovpool does
    the same."""
    x = f32([[[1, 2]]])
    got = ov_ops.avg_pool(x, (2,), (3,), (0,), (1,), exclude_pad=True, rounding_type="ceil")
    assert got[0, 0, 0] == 1.5 and got[0, 0, 1] == 0 and not np.isnan(got[0, 0, 1])
    ov = ov_avg_pool(x, (2,), (3,), (0,), (1,), exclude_pad=True, rounding_type="ceil")
    np.testing.assert_array_equal(got, ov)
