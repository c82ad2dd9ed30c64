"""The numpy API: ONNX pooling ops and OpenVINO's adaptive pools.

Every function takes an array-like of shape ``(N, C, D1[, D2[, D3]])``
(contiguous or not) and returns new numpy arrays; ``out=`` reuses a buffer
(C-contiguous, writeable, of the output's shape and dtype, sharing no memory
with the input nor with ``out_indices``). Every allocation sized by the
arguments (an output, a contiguous copy of a strided or broadcast input) is
checked against ovpool's memory budget first (:func:`ovpool.set_memory_budget`;
over it: :class:`~ovpool.MemoryBudgetError`), and ``num_threads`` is checked
even when there is nothing to compute.
The ONNX ops follow the newest opset (AveragePool-22, MaxPool-22, LpPool-22,
GlobalAveragePool-22, GlobalMaxPool-22, GlobalLpPool-22, MaxUnpool-22), whose
attributes cover every older version. OpenVINO's own variants (pads_begin /
pads_end, rounding_type ceil / ceil_torch, exclude-pad, MaxPool-8 ``axis``)
live in :mod:`ovpool.ov_ops`.

Semantics pinned down here:

* ``ceil_mode=True`` drops a last window that would start in the right
  padding (ONNX since opset 19, PyTorch).
* ``count_include_pad=True`` counts the declared pads only, never positions
  added by ceil rounding.
* Max ties go to the first maximum in row-major window order. NaN propagates
  as in PyTorch: a window containing NaN gives NaN, and its index is the last
  NaN in row-major window order.
* MaxPool indices are flat over the whole ``(N, C, ...)`` tensor,
  column-major within the spatial dims when ``storage_order=1``.
  AdaptiveMaxPool indices are flat within each ``(n, c)`` plane.
* A window of ``max_pool`` or of ``avg_pool`` without ``count_include_pad``
  that holds no input element is an error. The references disagree there
  (ONNX Runtime refuses pads >= kernel, but gives -FLT_MAX / index -1 for a
  dilated window that skips the input; the ONNX reference gives NaN), so
  ovpool refuses rather than pick one. OpenVINO's behaviour for such windows
  is in :mod:`ovpool.ov_ops`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from . import _core
from ._isa import kernels as _kernels
from ._limits import check_budget
from .errors import OvpoolTypeError, OvpoolValueError
from .shapes import (
    MAX_ELEMENTS,
    adaptive_output_spatial,
    adaptive_axis_windows,
    max_unpool_output_spatial,
    normalize_auto_pad,
    normalize_int_list,
    pool_geometry,
    fixed_axis_windows,
    split_onnx_pads,
)

__all__ = [
    "adaptive_avg_pool",
    "adaptive_max_pool",
    "avg_pool",
    "max_pool",
    "lp_pool",
    "global_avg_pool",
    "global_max_pool",
    "global_lp_pool",
    "max_unpool",
]


# --------------------------------------------------------------------------
# argument helpers
# --------------------------------------------------------------------------

def _bool(value, name, op):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise OvpoolTypeError(f"{op}: {name} must be a bool (or 0/1), got {value!r}")


def check_num_threads(num_threads, op):
    """Refuse a bad ``num_threads`` at the entry point, so that a call with
    nothing to compute (an empty input) refuses it too."""
    if num_threads is None:
        return
    if isinstance(num_threads, (bool, np.bool_)) or not isinstance(num_threads, numbers.Integral):
        raise OvpoolTypeError(f"{op}: num_threads must be a positive int or None, "
                              f"got {num_threads!r}")
    if num_threads < 1:
        raise OvpoolValueError(f"{op}: num_threads must be >= 1, got {num_threads}")


def check_output_budget(op, lead, out_spatial, dtype, out=None):
    """The output's bytes against the memory budget, checked when a plan is
    built, before its window tables (which grow with the output) exist;
    not when ``out`` is an array of that many elements (the caller's memory)."""
    n = lead[0] * lead[1]
    for d in out_spatial:
        n *= d
    if isinstance(out, np.ndarray) and out.size == n:
        return
    check_budget(op, "out", n * dtype.itemsize, tuple(lead) + tuple(out_spatial), dtype)


def _p_value(p, op):
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, numbers.Real):
        raise OvpoolTypeError(f"{op}: p must be a number, got {p!r}")
    p = float(p)
    if not np.isfinite(p) or p <= 0:
        raise OvpoolValueError(f"{op}: p must be a positive finite number, got {p}")
    return p


def index_dtype_of(index_dtype, op, name="index_dtype"):
    """int32 / int64 from a numpy dtype or OpenVINO's ``"i32"`` / ``"i64"``."""
    aliases = {"i32": np.int32, "i64": np.int64}
    try:
        dtype = np.dtype(aliases.get(index_dtype, index_dtype)
                         if isinstance(index_dtype, str) else index_dtype)
    except TypeError:
        dtype = None
    if dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise OvpoolTypeError(f"{op}: {name} must be int32 or int64, got {index_dtype!r}")
    return dtype


def onnx_geometry(spatial, kernel_shape, strides, pads, dilations, auto_pad, ceil_mode, op):
    """Resolve ONNX pool attributes into a :class:`~ovpool.shapes.PoolGeometry`."""
    n = len(spatial)
    kernel = normalize_int_list(kernel_shape, "kernel_shape", n, minimum=1)
    strides = normalize_int_list(strides, "strides", n, minimum=1, default=1)
    dilations = normalize_int_list(dilations, "dilations", n, minimum=1, default=1)
    check_dilated_kernel(kernel, dilations, op)
    mode = normalize_auto_pad(auto_pad)
    if pads is not None and mode != "explicit":
        given = normalize_int_list(pads, "pads", n, minimum=0, length=2 * n)
        if any(given):
            raise OvpoolValueError(
                f"{op}: pads={list(given)} cannot be combined with auto_pad={auto_pad!r}")
    begins, ends = split_onnx_pads(pads, n)
    rounding = "ceil_torch" if _bool(ceil_mode, "ceil_mode", op) else "floor"
    return pool_geometry(tuple(spatial), kernel, strides, dilations, begins, ends,
                         mode, rounding, op=op)


def check_dilated_kernel(kernel, dilations, op):
    """Refuse a dilated kernel past :data:`~ovpool.shapes.MAX_ELEMENTS` (each
    factor is within it, their product may pass 2**63 in the window tables)."""
    for k, d in zip(kernel, dilations):
        if (k - 1) * d + 1 > MAX_ELEMENTS:
            raise OvpoolValueError(
                f"{op}: the dilated kernel is absurdly large (kernel {list(kernel)}, dilations "
                f"{list(dilations)})")


def geometry_windows(geometry, count_include_pad=False):
    """The per-axis :class:`~ovpool.shapes.AxisWindows` of a fixed-window pool."""
    return [fixed_axis_windows(geometry.in_spatial[a], geometry.out_spatial[a], geometry.kernel[a],
                         geometry.strides[a], geometry.dilations[a], geometry.pads_begin[a],
                         geometry.pads_end[a], bool(count_include_pad))
            for a in range(geometry.n_spatial)]


def _refuse_empty_windows(geometry, op):
    if geometry.has_empty_window():
        raise OvpoolValueError(
            f"{op}: some window lies entirely in the padding (pads_begin="
            f"{list(geometry.pads_begin)}, pads_end={list(geometry.pads_end)}, kernel_shape="
            f"{list(geometry.kernel)}, dilations={list(geometry.dilations)}); "
            "pads must be smaller than the dilated kernel")


# --------------------------------------------------------------------------
# adaptive pools (OpenVINO AdaptiveAvgPool-8 / AdaptiveMaxPool-8, torch)
# --------------------------------------------------------------------------

def adaptive_avg_pool(x, output_size, *, num_threads=None, out=None):
    """Adaptive average pooling (OpenVINO AdaptiveAvgPool-8, torch adaptive_avg_poolNd).

    Output bin ``i`` of an axis averages input ``[floor(i*In/Out),
    ceil((i+1)*In/Out))``, computed in integers.

    Parameters
    ----------
    x : array-like of shape (N, C, D1[, D2[, D3]]), float16/bfloat16/float32/float64
    output_size : int or sequence of one int per spatial dim, each >= 1
        May be larger than the input.
    num_threads : int, optional
    out : ndarray, optional
        Output buffer of shape (N, C, *output_size) and the dtype of ``x``.

    Returns
    -------
    ndarray of shape (N, C, *output_size), dtype of ``x``
    """
    op = "adaptive_avg_pool"
    if num_threads is not None:
        check_num_threads(num_threads, op)
    planes = _core.prepare(x, op)
    plan = _core.cached((op, planes.lead, planes.spatial, output_size),
                        lambda: adaptive_plan(planes.lead, planes.spatial, output_size, op,
                                              planes.planes.dtype, out))
    return _core.run_sum_pool(planes, plan, op=op, num_threads=num_threads, out=out)


def adaptive_plan(lead, spatial, output_size, op="adaptive pooling", dtype=None, out=None):
    """The :class:`~ovpool._core.Plan` of an adaptive pool (its output checked
    against the memory budget as ``dtype`` first, when given, see
    :func:`check_output_budget`)."""
    for n_in in spatial:
        if n_in < 1:
            raise OvpoolValueError(
                f"adaptive pooling needs non-empty spatial dims of x, got size 0 in spatial "
                f"shape {tuple(spatial)}")
    out_spatial = adaptive_output_spatial(spatial, output_size)
    if dtype is not None:
        check_output_budget(op, lead, out_spatial, dtype, out)
    windows = [adaptive_axis_windows(n_in, n_out) for n_in, n_out in zip(spatial, out_spatial)]
    return _core.Plan(lead, spatial, windows)


def adaptive_max_pool(x, output_size, *, index_dtype=np.int64, num_threads=None, out=None,
                      out_indices=None):
    """Adaptive max pooling (OpenVINO AdaptiveMaxPool-8, torch adaptive_max_poolNd).

    Returns ``(values, indices)``; indices are flat within each (n, c) plane,
    i.e. in ``[0, D*H*W)``, as ``index_dtype`` (int32 or int64). Bins as in
    :func:`adaptive_avg_pool`; ties and NaN as in the module docstring.
    """
    op = "adaptive_max_pool"
    if num_threads is not None:
        check_num_threads(num_threads, op)
    index_dtype = index_dtype_of(index_dtype, op)
    planes = _core.prepare(x, op, allow_int8=True)
    plan = _core.cached((op, planes.lead, planes.spatial, output_size),
                        lambda: adaptive_plan(planes.lead, planes.spatial, output_size, op,
                                              planes.planes.dtype, out))
    return _core.run_max_pool(planes, plan, op=op, with_indices=True, index_dtype=index_dtype,
                              planes_per_index_space=1, num_threads=num_threads, out=out,
                              out_indices=out_indices)


# --------------------------------------------------------------------------
# ONNX fixed-window pools
# --------------------------------------------------------------------------

def avg_pool(x, kernel_shape, *, strides=None, pads=None, dilations=None, auto_pad="NOTSET",
             ceil_mode=False, count_include_pad=False, num_threads=None, out=None):
    """ONNX AveragePool (opset 22 semantics, covering every older version).

    Parameters
    ----------
    x : array-like of shape (N, C, D1[, D2[, D3]]), float16/bfloat16/float32/float64
    kernel_shape : sequence of one int per spatial dim (or one int for all)
    strides, dilations : sequence of ints, default 1
    pads : sequence ``[x1_begin, x2_begin, ..., x1_end, x2_end, ...]``, default 0
    auto_pad : "NOTSET", "SAME_UPPER", "SAME_LOWER" or "VALID"
    ceil_mode : bool
        Ceil rounding of the output size; a window that would start in the
        right padding is dropped.
    count_include_pad : bool
        Divide by the number of taps inside input + declared pads instead of
        inside the input.

    Returns
    -------
    ndarray of shape (N, C, *out_spatial), dtype of ``x``
    """
    op = "avg_pool"
    if num_threads is not None:
        check_num_threads(num_threads, op)
    planes = _core.prepare(x, op)

    def build():
        geometry = onnx_geometry(planes.spatial, kernel_shape, strides, pads, dilations,
                                 auto_pad, ceil_mode, op)
        check_output_budget(op, planes.lead, geometry.out_spatial, planes.planes.dtype, out)
        include = _bool(count_include_pad, "count_include_pad", op)
        if not include:
            _refuse_empty_windows(geometry, op)
        return _core.Plan(planes.lead, planes.spatial, geometry_windows(geometry, include))

    plan = _core.cached((op, planes.lead, planes.spatial, kernel_shape, strides, pads,
                         dilations, auto_pad, ceil_mode, count_include_pad), build)
    return _core.run_sum_pool(planes, plan, op=op, num_threads=num_threads, out=out)


def max_pool(x, kernel_shape, *, strides=None, pads=None, dilations=None, auto_pad="NOTSET",
             ceil_mode=False, storage_order=0, return_indices=False, num_threads=None,
             out=None, out_indices=None):
    """ONNX MaxPool (opset 22 semantics), on float and int8/uint8 inputs.

    Returns the values, or ``(values, indices)`` with int64 indices when
    ``return_indices``. Indices are flat over the whole (N, C, ...) tensor,
    ignoring padding; ``storage_order=1`` numbers the spatial dims column-major
    (``c*H*W + h + w*H`` in 2D). Other arguments as in :func:`avg_pool`.
    """
    op = "max_pool"
    if num_threads is not None:
        check_num_threads(num_threads, op)
    planes = _core.prepare(x, op, allow_int8=True)
    if isinstance(storage_order, (bool, np.bool_)) or not isinstance(
            storage_order, numbers.Integral) or storage_order not in (0, 1):
        raise OvpoolValueError(f"{op}: storage_order must be 0 or 1, got {storage_order!r}")
    return_indices = _bool(return_indices, "return_indices", op)

    def build():
        geometry = onnx_geometry(planes.spatial, kernel_shape, strides, pads, dilations,
                                 auto_pad, ceil_mode, op)
        check_output_budget(op, planes.lead, geometry.out_spatial, planes.planes.dtype, out)
        _refuse_empty_windows(geometry, op)
        return _core.Plan(planes.lead, planes.spatial, geometry_windows(geometry))

    plan = _core.cached((op, planes.lead, planes.spatial, kernel_shape, strides, pads,
                         dilations, auto_pad, ceil_mode), build)
    n_planes = planes.lead[0] * planes.lead[1]
    return _core.run_max_pool(planes, plan, op=op, with_indices=return_indices,
                              index_dtype=np.int64, column_major=storage_order == 1,
                              planes_per_index_space=n_planes, num_threads=num_threads,
                              out=out, out_indices=out_indices)


def lp_pool(x, kernel_shape, *, p=2, strides=None, pads=None, dilations=None, auto_pad="NOTSET",
            ceil_mode=False, num_threads=None, out=None):
    """ONNX LpPool (opset 22): ``(sum over the window of |x|^p)^(1/p)``.

    Padding contributes zeros. Other arguments as in :func:`avg_pool`.
    """
    op = "lp_pool"
    if num_threads is not None:
        check_num_threads(num_threads, op)
    p = _p_value(p, op)
    planes = _core.prepare(x, op)

    def build():
        geometry = onnx_geometry(planes.spatial, kernel_shape, strides, pads, dilations,
                                 auto_pad, ceil_mode, op)
        check_output_budget(op, planes.lead, geometry.out_spatial, planes.planes.dtype, out)
        return _core.Plan(planes.lead, planes.spatial, geometry_windows(geometry))

    plan = _core.cached((op, planes.lead, planes.spatial, kernel_shape, strides, pads,
                         dilations, auto_pad, ceil_mode), build)
    return _core.run_sum_pool(planes, plan, op=op, p=p, num_threads=num_threads, out=out)


# --------------------------------------------------------------------------
# global pools
# --------------------------------------------------------------------------

def global_avg_pool(x, *, num_threads=None, out=None):
    """ONNX GlobalAveragePool: the mean of each (n, c) plane, shape (N, C, 1, ...)."""
    if num_threads is not None:
        check_num_threads(num_threads, "global_avg_pool")
    planes = _core.prepare(x, "global_avg_pool")
    return _global(planes, "global_avg_pool", num_threads, out, mode="avg")


def global_max_pool(x, *, num_threads=None, out=None):
    """ONNX GlobalMaxPool: the maximum of each (n, c) plane (NaN propagates)."""
    if num_threads is not None:
        check_num_threads(num_threads, "global_max_pool")
    planes = _core.prepare(x, "global_max_pool", allow_int8=True)
    return _global(planes, "global_max_pool", num_threads, out, mode="max")


def global_lp_pool(x, *, p=2, num_threads=None, out=None):
    """ONNX GlobalLpPool: ``(sum of |x|^p)^(1/p)`` over each (n, c) plane."""
    if num_threads is not None:
        check_num_threads(num_threads, "global_lp_pool")
    p = _p_value(p, "global_lp_pool")
    planes = _core.prepare(x, "global_lp_pool")
    return _global(planes, "global_lp_pool", num_threads, out, mode="lp", p=p)


def _global(planes, op, num_threads, out, mode, p=None):
    plan = _core.cached(("global", planes.lead, planes.spatial),
                        lambda: adaptive_plan(planes.lead, planes.spatial, 1))
    if mode == "max":
        return _core.run_max_pool(planes, plan, op=op, num_threads=num_threads, out=out)
    return _core.run_sum_pool(planes, plan, op=op, p=p, num_threads=num_threads, out=out)


# --------------------------------------------------------------------------
# MaxUnpool
# --------------------------------------------------------------------------

def max_unpool(x, indices, kernel_shape, *, strides=None, pads=None, output_shape=None,
               indices_relative_to="default_shape", out=None):
    """ONNX MaxUnpool: scatter ``x`` into zeros at the flat ``indices`` of MaxPool.

    Parameters
    ----------
    x : array-like of shape (N, C, D1[, D2[, D3]])
    indices : integer array-like of the same shape: flat positions over the
        whole (N, C, ...) tensor, as MaxPool returns them (storage_order=0)
    kernel_shape, strides, pads : as in :func:`max_pool`
    output_shape : sequence of ints, optional
        The full output shape (N, C, ...). The *default shape* is, per axis,
        ``(in - 1)*stride + kernel - pad_begin - pad_end``.
    indices_relative_to : "default_shape" or "output_shape"
        With ``output_shape`` larger than the default shape, ONNX's reference
        implementation and its conformance case
        (test_maxunpool_export_with_output_shape) read the indices as
        positions in the default shape and place that block at the origin of
        the output ("default_shape", the default here). ONNX Runtime and
        PyTorch's max_unpool read them as positions in ``output_shape``
        directly ("output_shape"), which is what inverts a MaxPool of an
        odd-sized input.

    Duplicate indices: the last one in flat order wins. An index outside its
    tensor raises :class:`~ovpool.OvpoolValueError`.
    """
    op = "max_unpool"
    planes = _core.prepare(x, op, allow_int8=True).widened()  # 16-bit floats scatter as float32
    n = planes.n_spatial
    try:
        index_array = np.asarray(indices)
    except (TypeError, ValueError) as exc:
        raise OvpoolTypeError(f"{op}: indices is not an integer array: {exc}") from None
    if index_array.dtype.kind not in "iu":
        raise OvpoolTypeError(f"{op}: indices must be integers, got dtype {index_array.dtype}")
    if index_array.shape != planes.lead + planes.spatial:
        raise OvpoolValueError(
            f"{op}: indices must have the shape of x {planes.lead + planes.spatial}, "
            f"got {index_array.shape}")
    if not isinstance(indices_relative_to, str) or \
            indices_relative_to not in ("default_shape", "output_shape"):
        raise OvpoolValueError(
            f"{op}: indices_relative_to must be 'default_shape' or 'output_shape', "
            f"got {indices_relative_to!r}")
    kernel = normalize_int_list(kernel_shape, "kernel_shape", n, minimum=1)
    strides = normalize_int_list(strides, "strides", n, minimum=1, default=1)
    begins, ends = split_onnx_pads(pads, n)
    default_shape = planes.lead + max_unpool_output_spatial(planes.spatial, kernel, strides,
                                                            begins, ends)
    if output_shape is None:
        full_shape = default_shape
    else:
        full_shape = normalize_int_list(output_shape, "output_shape", n, minimum=1,
                                        length=n + 2)
        if full_shape[:2] != planes.lead:
            raise OvpoolValueError(
                f"{op}: output_shape {list(full_shape)} must keep N and C of x {planes.lead}")
        if any(o < d for o, d in zip(full_shape, default_shape)):
            raise OvpoolValueError(
                f"{op}: output_shape {list(full_shape)} is smaller than the default "
                f"shape {list(default_shape)}")
    # the output's bytes before any work that grows with them
    check_output_budget(op, planes.lead, full_shape[2:], planes.planes.dtype, out)
    index_shape = default_shape if indices_relative_to == "default_shape" else full_shape
    index_space = math.prod(index_shape)   # (Python ints: np.prod wraps past 2**63)
    # (uint64 indices above 2**63 wrap to negative here and are caught below)
    flat_indices = np.ascontiguousarray(index_array, dtype=np.int64).reshape(-1)
    if flat_indices.size:
        bad = np.flatnonzero((flat_indices < 0) | (flat_indices >= index_space))
        if bad.size:
            position = np.unravel_index(bad[0], index_array.shape)
            raise OvpoolValueError(
                f"{op}: indices{list(map(int, position))} = {int(flat_indices[bad[0]])} is "
                f"outside a tensor of shape {tuple(index_shape)} (valid range [0, {index_space}))")
    if index_shape != full_shape:
        # move positions of the default-shape block to the same coordinates in the output
        flat_indices = np.ravel_multi_index(np.unravel_index(flat_indices, index_shape),
                                            full_shape).astype(np.int64, copy=False)
    # out is zeroed before the scatter reads the indices: it must not share them
    result = _core.allocate(full_shape, planes.planes.dtype, out, op, "out", planes.planes,
                             planes.result_dtype, (("indices", flat_indices),))
    flat = result.reshape(-1)
    flat[...] = 0
    bad = _kernels.max_unpool(planes.planes.reshape(-1), flat_indices, flat)
    if bad >= 0:  # unreachable after the check above; the kernel never writes out of range
        raise OvpoolValueError(f"{op}: index {int(flat_indices[bad])} is out of range")
    return _core.finish(result, planes.result_dtype, out)
