"""Randomized differential tests of the numpy API against independent references.

* ONNX pools (AveragePool, MaxPool, LpPool, Global*Pool, MaxUnpool) against
  ``onnx.reference`` AND onnxruntime. A configuration counts only where the two
  references agree with each other: each has known defects (onnx.reference
  crashes on many ceil_mode configurations and misplaces MaxPool SAME_LOWER
  windows; ORT refuses pads >= kernel and float64 AveragePool). Each test
  asserts that a healthy fraction of its configurations was counted, so it
  cannot pass by skipping everything.
* Adaptive pools and torch-compatible avg/max pools against
  ``torch.nn.functional`` (values and indices, NaN and ties included).

Two families of configurations are left out of the ONNX comparison *before*
running, because there both references agree with each other but not with the
ONNX spec, OpenVINO or ovpool (they are pinned by hand cases in
test_edge_cases.py and against OpenVINO in test_ov_ops.py):

* auto_pad SAME_* with a dilation > 1: ONNX Runtime ignores the dilation when
  it computes the SAME pads, and onnx.reference does too for SAME_LOWER.
* auto_pad SAME_* where the spec's total pad ``(out-1)*s + ek - in`` is
  negative (effective kernel smaller than the stride): both references then
  pad by a negative amount (they crop the input), ovpool and OpenVINO pad 0.

Tolerances: float32 sums are accumulated separably (rows, then columns), so
averages may differ from the references by 1-2 ulp (rtol 1e-6); float64 by
1e-12; max values are compared bit for bit and indices exactly.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ovpool

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from references import (
    onnx_pool_attrs,
    onnx_reference,
    onnxruntime_run,
    plane_to_flat_indices,
)

MIN_COUNTED_FRACTION = 0.65

F32_TOL = dict(rtol=1e-6, atol=1e-6)
F64_TOL = dict(rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------
# configuration generators
# --------------------------------------------------------------------------


def _effective(kernel, dilations):
    return [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]


def _same_pad_is_negative(spatial, kernel, strides, dilations):
    for n_in, k, s, d in zip(spatial, kernel, strides, dilations):
        n_out = -(-n_in // s)
        if (n_out - 1) * s + (k - 1) * d + 1 - n_in < 0:
            return True
    return False


def random_onnx_pool_config(rng, op):
    """One random ONNX pool configuration: (x, kernel_shape, keyword args)."""
    while True:
        nd = int(rng.integers(1, 4))
        max_size = {1: 20, 2: 11, 3: 6}[nd]
        kernel = [int(rng.integers(1, 5)) for _ in range(nd)]
        strides = [int(rng.integers(1, 4)) for _ in range(nd)]
        dilations = [int(rng.integers(1, 3)) for _ in range(nd)] if rng.random() < 0.4 else [1] * nd
        auto_pad = str(rng.choice(["NOTSET"] * 4 + ["SAME_UPPER", "SAME_LOWER", "VALID"]))
        # ORT refuses pads >= kernel: keep pads in [0, kernel)
        pads = [int(rng.integers(0, k)) for k in kernel * 2] if auto_pad == "NOTSET" else None
        ceil_mode = bool(rng.random() < 0.4)
        effective = _effective(kernel, dilations)
        spatial = []
        for a in range(nd):
            padding = pads[a] + pads[a + nd] if pads else 0
            low = max(1, effective[a] - padding)
            spatial.append(int(rng.integers(low, max(low, max_size) + 1)))
        if auto_pad.startswith("SAME") and (
            any(d > 1 for d, k in zip(dilations, kernel) if k > 1)
            or _same_pad_is_negative(spatial, kernel, strides, dilations)
        ):
            continue  # known to be wrong in both references, see the module docstring
        if rng.random() < 0.2 and op != "MaxPool":
            dtype = np.float64
        elif op == "MaxPool":
            dtype = rng.choice([np.float32] * 6 + [np.float64, np.int8, np.uint8])
        else:
            dtype = np.float32
        shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), *spatial)
        if np.dtype(dtype).kind in "iu":
            info = np.iinfo(dtype)
            x = rng.integers(info.min, int(info.max) + 1, size=shape).astype(dtype)
            if rng.random() < 0.5:
                x = (x // 64).astype(dtype)  # few distinct values: many ties
        else:
            x = rng.standard_normal(shape).astype(dtype)
            if op == "MaxPool" and rng.random() < 0.3:
                x = np.round(x * 2).astype(dtype)  # ties
        kwargs = dict(
            strides=strides, pads=pads, dilations=dilations, auto_pad=auto_pad, ceil_mode=ceil_mode
        )
        return x, kernel, kwargs


def _describe(x, kernel, kwargs, extra=None):
    return f"x{x.shape} {x.dtype} kernel={kernel} " + " ".join(
        f"{k}={v}" for k, v in {**kwargs, **(extra or {})}.items()
    )


def _run_or_error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn()
        except Exception as exc:
            return exc


def _outputs_agree(a, b, tol, exact_from=None):
    """Lists of arrays of the same shapes, close within ``tol`` (outputs from
    index ``exact_from`` on, e.g. indices, must be identical)."""
    if isinstance(a, Exception) or isinstance(b, Exception) or len(a) != len(b):
        return False
    for i, (p, q) in enumerate(zip(a, b)):
        if p.shape != q.shape:
            return False
        if exact_from is not None and i >= exact_from:
            if not np.array_equal(p, q):
                return False
        elif not np.allclose(p.astype(np.float64), q.astype(np.float64), equal_nan=True, **tol):
            return False
    return True


def _references(op, x, attrs, n_outputs, ort_opset=22):
    """(onnx.reference outputs, ORT outputs), each a list or the exception.

    float64 AveragePool/LpPool and int8/uint8 inputs are given to a reference
    that cannot run them in the nearest exact form: ORT gets float32 for float64
    (agreement then checked at float32 precision), onnx.reference gets float32
    for int8/uint8 (exact: every int8 is a float32).
    """
    ref_x = x.astype(np.float32) if x.dtype.kind in "iu" else x
    ref = _run_or_error(lambda: onnx_reference(op, [ref_x], attrs, n_outputs))
    if not isinstance(ref, Exception) and x.dtype.kind in "iu":
        ref = [ref[0].astype(x.dtype)] + ref[1:]
    ort_x = x.astype(np.float32) if (x.dtype == np.float64 and op != "MaxPool") else x
    ort = _run_or_error(lambda: onnxruntime_run(op, [ort_x], attrs, n_outputs, opset=ort_opset))
    return ref, ort


class Tally:
    """Counts configurations and collects mismatches with their description."""

    def __init__(self):
        self.total = 0
        self.counted = 0
        self.failures = []

    def check(self):
        assert not self.failures, (
            f"{len(self.failures)} of {self.counted} counted configurations differ:\n"
            + "\n".join(self.failures[:20])
        )
        assert self.counted >= MIN_COUNTED_FRACTION * self.total, (
            f"only {self.counted} of {self.total} configurations had agreeing references"
        )


def _compare_with_references(
    tally, op, x, kernel, kwargs, extra_attrs, run_ovpool, n_outputs=1, ort_opset=22
):
    tally.total += 1
    attrs = onnx_pool_attrs(kernel, **kwargs, **extra_attrs)
    ref, ort = _references(op, x, attrs, n_outputs, ort_opset)
    agree_tol = F32_TOL if x.dtype != np.float64 or op == "MaxPool" else dict(rtol=1e-5, atol=1e-6)
    if not _outputs_agree(ref, ort, agree_tol, exact_from=1):
        return
    tally.counted += 1
    description = _describe(x, kernel, kwargs, extra_attrs)
    try:
        got = run_ovpool()
    except ovpool.OvpoolError as exc:
        tally.failures.append(f"{op} {description}: ovpool raised {exc}")
        return
    got = list(got) if isinstance(got, tuple) else [got]
    expected = ref
    for i, (g, e) in enumerate(zip(got, expected)):
        if g.shape != e.shape or g.dtype != e.dtype:
            tally.failures.append(
                f"{op} {description}: output {i} is {g.shape} {g.dtype}, "
                f"references {e.shape} {e.dtype}"
            )
            return
    if op == "MaxPool":
        if not all(
            np.array_equal(g, e, equal_nan=g.dtype.kind == "f") for g, e in zip(got, expected)
        ):
            tally.failures.append(f"{op} {description}: values or indices differ")
    else:
        tol = F64_TOL if x.dtype == np.float64 else F32_TOL
        if not np.allclose(got[0], expected[0], **tol):
            err = np.max(np.abs(got[0] - expected[0]))
            tally.failures.append(f"{op} {description}: max abs error {err:.3g}")


# --------------------------------------------------------------------------
# ONNX fixed-window pools
# --------------------------------------------------------------------------


def test_averagepool_random_configurations_match_onnx_reference_and_onnxruntime():
    rng = np.random.default_rng(1001)
    tally = Tally()
    for _ in range(200):
        x, kernel, kwargs = random_onnx_pool_config(rng, "AveragePool")
        include = bool(rng.integers(0, 2))
        _compare_with_references(
            tally,
            "AveragePool",
            x,
            kernel,
            kwargs,
            {"count_include_pad": int(include)},
            lambda: ovpool.avg_pool(x, kernel, count_include_pad=include, **kwargs),
        )
    tally.check()


def test_maxpool_random_configurations_match_onnx_reference_and_onnxruntime():
    """Values and indices (storage_order 0 and 1), float32/float64/int8/uint8."""
    rng = np.random.default_rng(1002)
    tally = Tally()
    for _ in range(200):
        x, kernel, kwargs = random_onnx_pool_config(rng, "MaxPool")
        order = int(rng.integers(0, 2))
        _compare_with_references(
            tally,
            "MaxPool",
            x,
            kernel,
            kwargs,
            {"storage_order": order},
            lambda: ovpool.max_pool(x, kernel, storage_order=order, return_indices=True, **kwargs),
            n_outputs=2,
        )
    tally.check()


def test_maxpool_values_only_random_configurations_match_onnx_references():
    """The values-only kernel is a different code path from the one with indices."""
    rng = np.random.default_rng(1003)
    tally = Tally()
    for _ in range(100):
        x, kernel, kwargs = random_onnx_pool_config(rng, "MaxPool")
        _compare_with_references(
            tally, "MaxPool", x, kernel, kwargs, {}, lambda: ovpool.max_pool(x, kernel, **kwargs)
        )
    tally.check()


@pytest.mark.parametrize("p", [1, 2, 3])
def test_lppool_random_configurations_match_onnx_reference_and_onnxruntime(p):
    rng = np.random.default_rng(1010 + p)
    tally = Tally()
    for _ in range(70):
        x, kernel, kwargs = random_onnx_pool_config(rng, "LpPool")
        _compare_with_references(
            tally,
            "LpPool",
            x,
            kernel,
            kwargs,
            {"p": p},
            lambda: ovpool.lp_pool(x, kernel, p=p, **kwargs),
        )
    tally.check()


# --------------------------------------------------------------------------
# Global pools
# --------------------------------------------------------------------------


def _random_global_input(rng, dtype):
    nd = int(rng.integers(1, 4))
    spatial = [int(rng.integers(1, {1: 40, 2: 12, 3: 7}[nd])) for _ in range(nd)]
    return rng.standard_normal((int(rng.integers(1, 3)), int(rng.integers(1, 4)), *spatial)).astype(
        dtype
    )


def test_global_average_pool_random_inputs_match_onnx_reference_and_onnxruntime():
    rng = np.random.default_rng(1020)
    for _ in range(20):
        x = _random_global_input(rng, np.float32)
        ref = onnx_reference("GlobalAveragePool", [x], {})[0]
        ort = onnxruntime_run("GlobalAveragePool", [x], {})[0]
        np.testing.assert_allclose(ref, ort, **F32_TOL)
        got = ovpool.global_avg_pool(x)
        assert got.shape == ort.shape == x.shape[:2] + (1,) * (x.ndim - 2)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, ort, **F32_TOL)


def test_global_max_pool_random_inputs_match_onnxruntime_and_numpy():
    """onnx.reference's GlobalMaxPool returns wrong shapes for 1D and 3D inputs
    ((2, 1) for (2, 3, 7); (1, 1, 4, 1, 1, 1) for (1, 1, 4, 5, 6)): the second
    reference is numpy."""
    rng = np.random.default_rng(1021)
    for _ in range(20):
        x = _random_global_input(rng, np.float32)
        exact = x.max(axis=tuple(range(2, x.ndim)), keepdims=True)
        ort = onnxruntime_run("GlobalMaxPool", [x], {})[0]
        np.testing.assert_array_equal(ort, exact)
        got = ovpool.global_max_pool(x)
        assert got.shape == exact.shape and got.dtype == np.float32
        np.testing.assert_array_equal(got, exact)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_global_lppool_random_inputs_match_onnxruntime_and_float64_numpy(p):
    """onnx.reference has no GlobalLpPool: the second reference is numpy in float64."""
    rng = np.random.default_rng(1030 + p)
    for _ in range(10):
        x = _random_global_input(rng, np.float32)
        axes = tuple(range(2, x.ndim))
        exact = (np.abs(x.astype(np.float64)) ** p).sum(axis=axes, keepdims=True) ** (1 / p)
        ort = onnxruntime_run("GlobalLpPool", [x], {"p": p}, opset=18)[0]
        np.testing.assert_allclose(ort, exact, rtol=1e-5)
        got = ovpool.global_lp_pool(x, p=p)
        assert got.shape == exact.shape and got.dtype == np.float32
        np.testing.assert_allclose(got, exact, rtol=2e-6, atol=1e-6)


# --------------------------------------------------------------------------
# MaxUnpool
# --------------------------------------------------------------------------


def _random_maxpool_for_unpool(rng):
    """A MaxPool configuration ORT accepts, its input, values and indices (from ORT)."""
    while True:
        nd = int(rng.integers(1, 4))
        kernel = [int(rng.integers(1, 4)) for _ in range(nd)]
        strides = [int(rng.integers(1, k + 2)) for k in kernel]
        pads = [int(rng.integers(0, k)) for k in kernel * 2]
        spatial = [
            int(rng.integers(max(1, k - pads[a] - pads[a + nd]) + 1, 9))
            for a, k in enumerate(kernel)
        ]
        x = rng.standard_normal(
            (int(rng.integers(1, 3)), int(rng.integers(1, 3)), *spatial)
        ).astype(np.float32)
        pooled = _run_or_error(
            lambda: onnxruntime_run(
                "MaxPool", [x], onnx_pool_attrs(kernel, strides=strides, pads=pads), 2
            )
        )
        if not isinstance(pooled, Exception):
            return x, kernel, strides, pads, pooled[0], pooled[1]


def test_maxunpool_random_roundtrips_match_onnx_reference_and_onnxruntime():
    """MaxUnpool of a MaxPool without output_shape. Where both references
    refuse (an index beyond the default output shape, e.g. stride > kernel or
    rows dropped by floor rounding), ovpool must raise OvpoolValueError."""
    rng = np.random.default_rng(1040)
    counted = refused = 0
    for _ in range(50):
        x, kernel, strides, pads, values, indices = _random_maxpool_for_unpool(rng)
        attrs = dict(kernel_shape=kernel, strides=strides, pads=pads)
        ref = _run_or_error(lambda: onnx_reference("MaxUnpool", [values, indices], attrs))
        ort = _run_or_error(lambda: onnxruntime_run("MaxUnpool", [values, indices], attrs))
        context = f"x{x.shape} k={kernel} s={strides} pads={pads}"
        if isinstance(ref, Exception) and isinstance(ort, Exception):
            refused += 1
            with pytest.raises(ovpool.OvpoolValueError):
                ovpool.max_unpool(values, indices, kernel, strides=strides, pads=pads)
            continue
        if not _outputs_agree(ref, ort, F32_TOL):
            continue
        counted += 1
        got = ovpool.max_unpool(values, indices, kernel, strides=strides, pads=pads)
        assert got.shape == ref[0].shape and got.dtype == np.float32, context
        np.testing.assert_array_equal(got, ref[0], err_msg=context)
    assert counted + refused >= 0.8 * 50 and counted >= 15


def test_maxunpool_random_output_shape_modes_match_their_references():
    """MaxUnpool back to the MaxPool's input shape (output_shape given):
    ``indices_relative_to="output_shape"`` is ONNX Runtime's and torch's reading,
    the default ``"default_shape"`` is onnx.reference's. The two references
    disagree by design here, so each mode is checked against its own."""
    pytest.importorskip("torch")
    from references import flat_to_plane_indices, torch_max_unpool

    rng = np.random.default_rng(1041)
    checked_ort = checked_ref = 0
    for _ in range(40):
        x, kernel, strides, pads, values, indices = _random_maxpool_for_unpool(rng)
        attrs = dict(kernel_shape=kernel, strides=strides, pads=pads)
        shape = np.array(x.shape, dtype=np.int64)
        context = f"x{x.shape} k={kernel} s={strides} pads={pads}"
        ort = _run_or_error(lambda: onnxruntime_run("MaxUnpool", [values, indices, shape], attrs))
        if not isinstance(ort, Exception):
            checked_ort += 1
            got = ovpool.max_unpool(
                values,
                indices,
                kernel,
                strides=strides,
                pads=pads,
                output_shape=x.shape,
                indices_relative_to="output_shape",
            )
            assert got.shape == x.shape, context
            np.testing.assert_array_equal(got, ort[0], err_msg=context)
            if all(p == q for p, q in zip(pads[: len(kernel)], pads[len(kernel) :])) and all(
                2 * p <= k for p, k in zip(pads, kernel)
            ):
                expected = torch_max_unpool(
                    values,
                    flat_to_plane_indices(indices, x.shape[2:]),
                    kernel,
                    strides,
                    pads[: len(kernel)],
                    x.shape[2:],
                )
                np.testing.assert_array_equal(got, expected, err_msg=context)
        ref = _run_or_error(lambda: onnx_reference("MaxUnpool", [values, indices, shape], attrs))
        if not isinstance(ref, Exception):
            checked_ref += 1
            got = ovpool.max_unpool(
                values, indices, kernel, strides=strides, pads=pads, output_shape=x.shape
            )
            assert got.shape == x.shape, context
            np.testing.assert_array_equal(got, ref[0], err_msg=context)
    assert checked_ort >= 30 and checked_ref >= 10


# --------------------------------------------------------------------------
# torch.nn.functional: torch-compatible ONNX configurations
# --------------------------------------------------------------------------


def _has_empty_window(spatial, out_spatial, kernel, strides, dilations, pads):
    for n_in, n_out, k, s, d, p in zip(spatial, out_spatial, kernel, strides, dilations, pads):
        for o in range(n_out):
            taps = [o * s - p + t * d for t in range(k)]
            if not any(0 <= pos < n_in for pos in taps):
                return True
    return False


def random_torch_pool_config(rng, with_dilation):
    """A configuration torch accepts: symmetric pads <= kernel // 2."""
    nd = int(rng.integers(1, 4))
    max_size = {1: 24, 2: 12, 3: 7}[nd]
    kernel = [int(rng.integers(1, 5)) for _ in range(nd)]
    strides = [int(rng.integers(1, 4)) for _ in range(nd)]
    dilations = [int(rng.integers(1, 4)) for _ in range(nd)] if with_dilation else [1] * nd
    pads = [int(rng.integers(0, k // 2 + 1)) for k in kernel]
    effective = _effective(kernel, dilations)
    spatial = [
        int(rng.integers(max(1, e - 2 * p), max(e - 2 * p, max_size) + 1))
        for e, p in zip(effective, pads)
    ]
    ceil_mode = bool(rng.random() < 0.5)
    dtype = np.float64 if rng.random() < 0.2 else np.float32
    x = rng.standard_normal((int(rng.integers(1, 3)), int(rng.integers(1, 4)), *spatial)).astype(
        dtype
    )
    return x, kernel, strides, dilations, pads, ceil_mode


def test_avg_pool_random_torch_compatible_configurations_match_torch():
    pytest.importorskip("torch")
    from references import torch_avg_pool

    rng = np.random.default_rng(1050)
    for _ in range(120):
        x, kernel, strides, _, pads, ceil_mode = random_torch_pool_config(rng, False)
        include = bool(rng.integers(0, 2))
        if x.ndim == 5 and any(n < k for n, k in zip(x.shape[2:], kernel)):
            continue  # torch's avg_pool3d refuses an input smaller than the kernel
        expected = torch_avg_pool(
            x, kernel, strides, pads, ceil_mode=ceil_mode, count_include_pad=include
        )
        got = ovpool.avg_pool(
            x,
            kernel,
            strides=strides,
            pads=pads * 2,
            ceil_mode=ceil_mode,
            count_include_pad=include,
        )
        context = (
            f"x{x.shape} {x.dtype} k={kernel} s={strides} p={pads} ceil={ceil_mode} "
            f"include={include}"
        )
        assert got.shape == expected.shape and got.dtype == x.dtype, context
        np.testing.assert_allclose(
            got, expected, err_msg=context, **(F64_TOL if x.dtype == np.float64 else F32_TOL)
        )


def test_max_pool_random_torch_compatible_configurations_match_torch_with_nan_and_ties():
    """Values bit-exact (NaN included) and indices identical after converting
    ovpool's tensor-flat indices to torch's per-plane indices."""
    pytest.importorskip("torch")
    from references import torch_max_pool

    rng = np.random.default_rng(1060)
    tested = 0
    for _ in range(150):
        x, kernel, strides, dilations, pads, ceil_mode = random_torch_pool_config(rng, True)
        if rng.random() < 0.3:
            x = np.round(x * 2).astype(x.dtype)  # ties
        if rng.random() < 0.3:
            x[rng.random(x.shape) < 0.1] = np.nan
        values, plane_indices = torch_max_pool(
            x, kernel, strides, pads, dilations, ceil_mode=ceil_mode
        )
        if _has_empty_window(x.shape[2:], values.shape[2:], kernel, strides, dilations, pads):
            continue  # torch gives -inf there; ovpool refuses such pads (test_errors.py)
        tested += 1
        context = (
            f"x{x.shape} {x.dtype} k={kernel} s={strides} d={dilations} p={pads} ceil={ceil_mode}"
        )
        got, got_indices = ovpool.max_pool(
            x,
            kernel,
            strides=strides,
            pads=pads * 2,
            dilations=dilations,
            ceil_mode=ceil_mode,
            return_indices=True,
        )
        assert got.shape == values.shape and got.dtype == x.dtype, context
        np.testing.assert_array_equal(got, values, err_msg=context)
        np.testing.assert_array_equal(
            got_indices, plane_to_flat_indices(plane_indices, x.shape[2:]), err_msg=context
        )
        only_values = ovpool.max_pool(
            x, kernel, strides=strides, pads=pads * 2, dilations=dilations, ceil_mode=ceil_mode
        )
        np.testing.assert_array_equal(only_values, values, err_msg=context)
    assert tested >= 0.8 * 150


# --------------------------------------------------------------------------
# torch.nn.functional: adaptive pools
# --------------------------------------------------------------------------


def _random_adaptive_case(rng):
    nd = int(rng.integers(1, 4))
    max_size = {1: 40, 2: 14, 3: 7}[nd]
    spatial = [int(rng.integers(1, max_size + 1)) for _ in range(nd)]
    # mostly smaller outputs, sometimes larger than the input
    output = [
        int(rng.integers(1, n + 1)) if rng.random() < 0.7 else int(rng.integers(n, n + 6))
        for n in spatial
    ]
    dtype = np.float64 if rng.random() < 0.2 else np.float32
    x = rng.standard_normal((int(rng.integers(1, 3)), int(rng.integers(1, 4)), *spatial)).astype(
        dtype
    )
    return x, output


def test_adaptive_avg_pool_random_sizes_match_torch():
    pytest.importorskip("torch")
    from references import torch_adaptive_avg_pool

    rng = np.random.default_rng(1070)
    for _ in range(120):
        x, output = _random_adaptive_case(rng)
        expected = torch_adaptive_avg_pool(x, output)
        got = ovpool.adaptive_avg_pool(x, output)
        context = f"x{x.shape} {x.dtype} -> {output}"
        assert got.shape == expected.shape and got.dtype == x.dtype, context
        np.testing.assert_allclose(
            got, expected, err_msg=context, **(F64_TOL if x.dtype == np.float64 else F32_TOL)
        )


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_adaptive_max_pool_random_sizes_match_torch_with_nan_and_ties(index_dtype):
    pytest.importorskip("torch")
    from references import torch_adaptive_max_pool

    rng = np.random.default_rng(1080)
    for _ in range(100):
        x, output = _random_adaptive_case(rng)
        if rng.random() < 0.3:
            x = np.round(x).astype(x.dtype)  # ties
        if rng.random() < 0.3:
            x[rng.random(x.shape) < 0.1] = np.nan
        values, indices = torch_adaptive_max_pool(x, output)
        got, got_indices = ovpool.adaptive_max_pool(x, output, index_dtype=index_dtype)
        context = f"x{x.shape} {x.dtype} -> {output}"
        assert got.shape == values.shape and got.dtype == x.dtype, context
        assert got_indices.dtype == index_dtype, context
        np.testing.assert_array_equal(got, values, err_msg=context)
        np.testing.assert_array_equal(got_indices, indices, err_msg=context)


# --------------------------------------------------------------------------
# wide rows: the specialised horizontal passes (k 1-5, 7; strides 1, 2, k)
# and the vectorised row loops with their tails
# --------------------------------------------------------------------------


def test_wide_rows_avg_and_max_pool_match_torch():
    """Rows of 17-140 elements (several vector widths plus a tail), kernel
    widths and strides that hit every specialised path and the generic one,
    pads, ceil_mode, NaN; max values bit-exact, indices identical."""
    pytest.importorskip("torch")
    from references import torch_avg_pool, torch_max_pool

    rng = np.random.default_rng(1090)
    for _ in range(120):
        nd = int(rng.integers(1, 3))
        k = int(rng.choice([1, 2, 3, 4, 5, 6, 7, 8]))
        s = int(rng.choice([1, 2, 3, k]))
        kernel = [int(rng.integers(1, 4)) for _ in range(nd - 1)] + [k]
        strides = [int(rng.integers(1, 3)) for _ in range(nd - 1)] + [s]
        pads = [int(rng.integers(0, kk // 2 + 1)) for kk in kernel]
        width = int(rng.integers(max(17, k), 141))
        spatial = [int(rng.integers(kk, kk + 6)) for kk in kernel[:-1]] + [width]
        ceil_mode = bool(rng.integers(0, 2))
        dtype = np.float64 if rng.random() < 0.25 else np.float32
        x = rng.standard_normal(
            (int(rng.integers(1, 3)), int(rng.integers(1, 4)), *spatial)
        ).astype(dtype)
        context = f"x{x.shape} {x.dtype} k={kernel} s={strides} p={pads} ceil={ceil_mode}"
        tol = F64_TOL if dtype == np.float64 else F32_TOL
        for include in (False, True):
            expected = torch_avg_pool(
                x, kernel, strides, pads, ceil_mode=ceil_mode, count_include_pad=include
            )
            got = ovpool.avg_pool(
                x,
                kernel,
                strides=strides,
                pads=pads * 2,
                ceil_mode=ceil_mode,
                count_include_pad=include,
            )
            np.testing.assert_allclose(got, expected, err_msg=context, **tol)
        if rng.random() < 0.4:
            x[rng.random(x.shape) < 0.05] = np.nan
        values, plane_indices = torch_max_pool(
            x, kernel, strides, pads, [1] * nd, ceil_mode=ceil_mode
        )
        np.testing.assert_array_equal(
            ovpool.max_pool(x, kernel, strides=strides, pads=pads * 2, ceil_mode=ceil_mode),
            values,
            err_msg=context,
        )
        got, indices = ovpool.max_pool(
            x, kernel, strides=strides, pads=pads * 2, ceil_mode=ceil_mode, return_indices=True
        )
        np.testing.assert_array_equal(got, values, err_msg=context)
        np.testing.assert_array_equal(
            indices, plane_to_flat_indices(plane_indices, x.shape[2:]), err_msg=context
        )


def test_wide_rows_dilated_avg_pool_and_int8_max_pool_match_onnxruntime():
    """The generic horizontal pass (dilation > 1) of AveragePool and LpPool, and
    8-bit MaxPool on wide rows, against ONNX Runtime (torch has neither)."""
    rng = np.random.default_rng(1091)
    for _ in range(30):
        k = int(rng.integers(2, 6))
        d = int(rng.integers(2, 4))
        s = int(rng.integers(1, 4))
        pad = int(rng.integers(0, k))
        width = int(rng.integers(max(17, (k - 1) * d + 1), 120))
        x = rng.standard_normal((1, 2, 3, width)).astype(np.float32)
        attrs = onnx_pool_attrs([2, k], strides=[1, s], pads=[0, pad, 1, pad], dilations=[1, d])
        context = f"x{x.shape} {attrs}"
        for include in (0, 1):
            expected = onnxruntime_run("AveragePool", [x], {**attrs, "count_include_pad": include})[
                0
            ]
            got = ovpool.avg_pool(
                x,
                (2, k),
                strides=(1, s),
                pads=(0, pad, 1, pad),
                dilations=(1, d),
                count_include_pad=bool(include),
            )
            np.testing.assert_allclose(got, expected, err_msg=context, **F32_TOL)
        expected = onnxruntime_run("LpPool", [x], {**attrs, "p": 2})[0]
        got = ovpool.lp_pool(x, (2, k), strides=(1, s), pads=(0, pad, 1, pad), dilations=(1, d))
        np.testing.assert_allclose(got, expected, err_msg=context, rtol=1e-5, atol=1e-6)
        for dtype in (np.int8, np.uint8):
            xi = rng.integers(
                np.iinfo(dtype).min, int(np.iinfo(dtype).max) + 1, size=x.shape
            ).astype(dtype)
            values, indices = onnxruntime_run("MaxPool", [xi], attrs, 2)
            got, got_indices = ovpool.max_pool(
                xi,
                (2, k),
                strides=(1, s),
                pads=(0, pad, 1, pad),
                dilations=(1, d),
                return_indices=True,
            )
            np.testing.assert_array_equal(got, values, err_msg=context)
            np.testing.assert_array_equal(got_indices, indices, err_msg=context)
            np.testing.assert_array_equal(
                ovpool.max_pool(
                    xi, (2, k), strides=(1, s), pads=(0, pad, 1, pad), dilations=(1, d)
                ),
                values,
                err_msg=context,
            )


@pytest.mark.parametrize(
    "n_in, n_out",
    [(56, 7), (224, 7), (64, 8), (64, 16), (64, 32), (64, 64), (28, 14), (30, 10), (7, 7), (9, 3)],
)
def test_adaptive_pools_with_divisible_sizes_match_torch(n_in, n_out):
    """In % Out == 0 takes the uniform-window path (kernel = stride = In/Out)."""
    pytest.importorskip("torch")
    from references import torch_adaptive_avg_pool, torch_adaptive_max_pool

    rng = np.random.default_rng(n_in * 1000 + n_out)
    x = rng.standard_normal((2, 3, n_in, n_in + n_in // 2)).astype(np.float32)
    x[0, 1, 3, 5] = np.nan
    output = (n_out, n_out)
    np.testing.assert_allclose(
        ovpool.adaptive_avg_pool(x[:, :, :, :n_in], output),
        torch_adaptive_avg_pool(x[:, :, :, :n_in], output),
        rtol=1e-6,
        atol=1e-6,
    )
    values, indices = torch_adaptive_max_pool(x, output)
    got, got_indices = ovpool.adaptive_max_pool(x, output)
    np.testing.assert_array_equal(got, values)
    np.testing.assert_array_equal(got_indices, indices)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint8])
def test_global_max_pool_every_plane_size_and_nan_position_matches_numpy(dtype):
    """The global reductions run over 16 lanes plus a tail: plane sizes 1-70 and
    a NaN in every lane and in the tail."""
    rng = np.random.default_rng(1092)
    for size in range(1, 71):
        if np.dtype(dtype).kind == "f":
            x = rng.standard_normal((2, 3, size)).astype(dtype)
            x[0, 0, rng.integers(0, size)] = np.nan
            x[1, 2, size - 1] = np.nan
        else:
            x = rng.integers(
                np.iinfo(dtype).min, int(np.iinfo(dtype).max) + 1, size=(2, 3, size)
            ).astype(dtype)
        got = ovpool.global_max_pool(x)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, x.max(axis=2, keepdims=True), err_msg=f"size {size}")


def test_global_average_and_lp_pool_every_plane_size_match_float64_numpy():
    rng = np.random.default_rng(1093)
    for size in list(range(1, 70)) + [255, 256, 257, 4097]:
        x = rng.standard_normal((2, 2, size)).astype(np.float32)
        exact = x.astype(np.float64)
        np.testing.assert_allclose(
            ovpool.global_avg_pool(x),
            exact.mean(axis=2, keepdims=True),
            rtol=1e-5,
            atol=1e-6,
            err_msg=f"size {size}",
        )
        for p in (1, 2, 3):
            np.testing.assert_allclose(
                ovpool.global_lp_pool(x, p=p),
                (np.abs(exact) ** p).sum(axis=2, keepdims=True) ** (1 / p),
                rtol=1e-5,
                err_msg=f"size {size} p={p}",
            )


# --------------------------------------------------------------------------
# the plan cache: same shapes, different attributes, interleaved
# --------------------------------------------------------------------------


def test_interleaved_calls_with_the_same_shapes_and_different_attributes():
    """Plans are cached by shape and attributes; interleaving calls that share
    shapes but differ in one attribute (or in dtype) must keep every answer
    right (checked against ONNX Runtime and torch)."""
    pytest.importorskip("torch")
    from references import torch_adaptive_max_pool

    rng = np.random.default_rng(1094)
    x = rng.standard_normal((2, 3, 9, 10)).astype(np.float32)
    kernel, strides, pads = [3, 3], [2, 2], [1, 1, 1, 1]

    def ort(op, data, n_outputs=1, **extra):
        return onnxruntime_run(
            op, [data], onnx_pool_attrs(kernel, strides=strides, pads=pads, **extra), n_outputs
        )

    for _ in range(2):
        for include in (0, 1):
            for ceil in (0, 1):
                got = ovpool.avg_pool(
                    x, kernel, strides=strides, pads=pads, ceil_mode=ceil, count_include_pad=include
                )
                expected = ort("AveragePool", x, ceil_mode=ceil, count_include_pad=include)[0]
                np.testing.assert_allclose(got, expected, **F32_TOL)
        for p in (1, 2, 3):
            np.testing.assert_allclose(
                ovpool.lp_pool(x, kernel, strides=strides, pads=pads, p=p),
                ort("LpPool", x, p=p)[0],
                rtol=1e-5,
                atol=1e-6,
            )
        for order in (0, 1):
            got = ovpool.max_pool(
                x, kernel, strides=strides, pads=pads, storage_order=order, return_indices=True
            )
            expected = ort("MaxPool", x, 2, storage_order=order)
            np.testing.assert_array_equal(got[0], expected[0])
            np.testing.assert_array_equal(got[1], expected[1])
        for dtype in (np.float64, np.float16, np.float32):
            got = ovpool.avg_pool(x.astype(dtype), kernel, strides=strides, pads=pads)
            assert got.dtype == dtype
            expected = ort("AveragePool", x.astype(np.float32))[0]
            np.testing.assert_allclose(
                got.astype(np.float32),
                expected,
                rtol=1e-3 if dtype == np.float16 else 1e-6,
                atol=1e-3,
            )
        values, indices = torch_adaptive_max_pool(x, (4, 5))
        for index_dtype in (np.int32, np.int64):
            got, got_indices = ovpool.adaptive_max_pool(x, (4, 5), index_dtype=index_dtype)
            assert got_indices.dtype == index_dtype
            np.testing.assert_array_equal(got_indices, indices)
