"""Pooling with OpenVINO's operation semantics, on numpy arrays.

These functions mirror OpenVINO's pooling operations attribute for attribute
(``pads_begin``/``pads_end``, ``exclude_pad``, ``rounding_type``,
``auto_pad`` in lower case, MaxPool-8's ``axis`` and ``index_element_type``).
The IR runtime and the OpenVINO extension run layers through them.

Where OpenVINO's CPU plugin deviates from its own specification, these follow
the specification and PyTorch:

* AvgPool with exclude-pad false, ceil rounding and explicit pads: an edge
  window is divided by its taps inside input + declared pads (PyTorch, ONNX
  Runtime), not by the full kernel (OpenVINO CPU).
* Adaptive bin borders are computed in integers (OpenVINO CPU uses float32,
  wrong once In*Out > 2**24).
* AdaptiveMaxPool propagates NaN like PyTorch (OpenVINO CPU ignores a NaN
  unless it is the first element of the bin).

Windows that lie entirely in the padding (possible with ``rounding_type="ceil"``
or with pads as large as the kernel) give what OpenVINO gives: MaxPool the
lowest finite value of the dtype with index = the start of its index space;
AvgPool NaN with exclude-pad and 0 without.
"""

from __future__ import annotations

import numpy as np

from . import _core
from .errors import OvpoolTypeError, OvpoolValueError
from .ops import _bool, adaptive_avg_pool, geometry_windows, index_dtype_of  # noqa: F401
from .ops import check_dilated_kernel, check_num_threads, check_output_budget
from .ops import adaptive_max_pool as _adaptive_max_pool
from .shapes import (
    normalize_auto_pad,
    normalize_int_list,
    normalize_rounding,
    pool_geometry,
)

__all__ = ["avg_pool", "max_pool", "adaptive_avg_pool", "adaptive_max_pool", "ov_geometry",
           "check_avg_pool_pads"]


def ov_geometry(spatial, kernel, strides, pads_begin, pads_end, dilations, auto_pad,
                rounding_type, op):
    """Resolve OpenVINO pool attributes into a :class:`~ovpool.shapes.PoolGeometry`.

    With ``auto_pad`` other than ``explicit`` the given pads are ignored and
    recomputed (``ov.save_model`` writes them as zeros).
    """
    n = len(spatial)
    kernel = normalize_int_list(kernel, "kernel", n, minimum=1)
    strides = normalize_int_list(strides, "strides", n, minimum=1, default=1)
    dilations = normalize_int_list(dilations, "dilations", n, minimum=1, default=1)
    check_dilated_kernel(kernel, dilations, op)
    begins = normalize_int_list(pads_begin, "pads_begin", n, minimum=0, default=0)
    ends = normalize_int_list(pads_end, "pads_end", n, minimum=0, default=0)
    mode = normalize_auto_pad(auto_pad)
    rounding = normalize_rounding(rounding_type)
    return pool_geometry(spatial, kernel, strides, dilations, begins, ends, mode, rounding, op=op)


def avg_pool(x, kernel, strides=None, pads_begin=None, pads_end=None, *, exclude_pad=True,
             rounding_type="floor", auto_pad="explicit", dilations=None, num_threads=None,
             out=None):
    """OpenVINO AvgPool-1/-14/-16.

    ``rounding_type``: ``floor``, ``ceil`` (keeps a window that starts in the
    right padding) or ``ceil_torch`` (drops it). ``dilations`` is AvgPool-16's.
    """
    op = "AvgPool"
    if num_threads is not None:
        check_num_threads(num_threads, op)
    planes = _core.prepare(x, op)

    def build():
        geometry = ov_geometry(planes.spatial, kernel, strides, pads_begin, pads_end, dilations,
                               auto_pad, rounding_type, op)
        check_output_budget(op, planes.lead, geometry.out_spatial, planes.planes.dtype, out)
        exclude = _bool(exclude_pad, "exclude_pad", op)
        check_avg_pool_pads(geometry, exclude, auto_pad, op)
        # OpenVINO counts pads only when some pad is non-zero (its reference:
        # pads_in_avg = !exclude_pad && any pad != 0); with all pads 0 a ceil
        # window past the input is then 0/0 = NaN, as in OpenVINO
        include = not exclude and any(geometry.pads_begin + geometry.pads_end)
        windows = geometry_windows(geometry, include)
        if include:
            # A rounding_type=ceil window may start beyond the declared pads: its
            # sum is 0 and OpenVINO returns 0, so keep its divisor non-zero.
            windows = [_nonzero_divisor(t) for t in windows]
        else:
            windows = [_empty_window_divisor(t, n_in) for t, n_in in zip(windows, planes.spatial)]
        return _core.Plan(planes.lead, planes.spatial, windows)

    plan = _core.cached((op, planes.lead, planes.spatial, kernel, strides, pads_begin, pads_end,
                         exclude_pad, rounding_type, auto_pad, dilations), build)
    return _core.run_sum_pool(planes, plan, op=op, num_threads=num_threads, out=out)


def check_avg_pool_pads(geometry, exclude_pad, auto_pad, op="AvgPool"):
    """OpenVINO's AvgPool validation: with exclude-pad and explicit pads, a pad
    as large as the dilated kernel would leave a window empty (OpenVINO
    refuses it: "Kernel after dilation is sometimes entirely in the padding
    area"). Works on a shape-inference geometry with dynamic dims too."""
    if exclude_pad and normalize_auto_pad(auto_pad) == "explicit":
        for axis in range(geometry.n_spatial):
            effective = (geometry.kernel[axis] - 1) * geometry.dilations[axis] + 1
            if geometry.pads_begin[axis] >= effective or geometry.pads_end[axis] >= effective:
                raise OvpoolValueError(
                    f"{op}: with exclude_pad the dilated kernel ({effective}) must be larger "
                    f"than the pads (pads_begin={list(geometry.pads_begin)}, "
                    f"pads_end={list(geometry.pads_end)}); some window would be empty")


def _empty_window_divisor(axis, n_in):
    """Exclude-pad divisor of an empty window, as OpenVINO computes it.

    A window that starts beyond the end of the input (rounding_type=ceil) is
    divided by ``min(start + kernel, n_in) - start = n_in - start``: 0/0 = NaN
    when it starts right at the end, 0/negative = -0 further out. An empty
    window elsewhere (dilated taps that skip the input) has no taps: NaN."""
    empty = axis.table[:, 1] == 0
    if not empty.any():
        return axis
    fixed = axis.table.copy()
    starts = np.arange(axis.n_out, dtype=np.int64) * axis.stride - axis.pad_begin
    fixed[empty, 2] = np.where(starts[empty] >= n_in, n_in - starts[empty], 0)
    fixed.setflags(write=False)
    return axis.with_table(fixed)


def _nonzero_divisor(axis):
    if (axis.table[:, 2] > 0).all():
        return axis
    fixed = axis.table.copy()
    fixed[:, 2] = np.maximum(fixed[:, 2], 1)
    fixed.setflags(write=False)
    return axis.with_table(fixed)


def max_pool(x, kernel, strides=None, pads_begin=None, pads_end=None, *, dilations=None,
             rounding_type="floor", auto_pad="explicit", axis=0, index_element_type="i64",
             return_indices=True, num_threads=None, out=None, out_indices=None):
    """OpenVINO MaxPool-1/-8/-14.

    Returns ``(values, indices)`` (MaxPool-8/-14), or the values only with
    ``return_indices=False`` (MaxPool-1). Indices are flat indices into the
    unpadded input counted from dimension ``axis``: 0 = the whole tensor
    (ONNX's indices), 1 = within each sample, 2 = within each (n, c) plane
    (PyTorch's). ``index_element_type``: ``"i32"``/``"i64"`` or a numpy dtype.
    """
    op = "MaxPool"
    if num_threads is not None:
        check_num_threads(num_threads, op)
    planes = _core.prepare(x, op, allow_int8=True)

    def build():
        geometry = ov_geometry(planes.spatial, kernel, strides, pads_begin, pads_end, dilations,
                               auto_pad, rounding_type, op)
        check_output_budget(op, planes.lead, geometry.out_spatial, planes.planes.dtype, out)
        return _core.Plan(planes.lead, planes.spatial, geometry_windows(geometry))

    plan = _core.cached((op, planes.lead, planes.spatial, kernel, strides, pads_begin, pads_end,
                         dilations, rounding_type, auto_pad), build)
    return_indices = _bool(return_indices, "return_indices", op)
    if not return_indices:
        return _core.run_max_pool(planes, plan, op=op, num_threads=num_threads, out=out)
    index_dtype = index_dtype_of(index_element_type, op, "index_element_type")
    rank = 2 + planes.n_spatial
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise OvpoolTypeError(f"{op}: axis must be an int, got {axis!r}")
    if not -rank <= axis < rank:
        raise OvpoolValueError(f"{op}: axis must be in [{-rank}, {rank - 1}], got {axis}")
    axis = int(axis) % rank
    n, c = planes.lead
    index_modulo = None
    if axis == 0:
        planes_per_space = n * c
    elif axis == 1:
        planes_per_space = c
    else:
        planes_per_space = 1
        if axis > 2:
            index_modulo = int(np.prod(planes.spatial[axis - 2:], dtype=np.int64))
    return _core.run_max_pool(planes, plan, op=op, with_indices=True, index_dtype=index_dtype,
                              planes_per_index_space=planes_per_space,
                              index_modulo=index_modulo, num_threads=num_threads, out=out,
                              out_indices=out_indices)


def adaptive_max_pool(x, output_size, *, index_element_type="i64", num_threads=None, out=None,
                      out_indices=None):
    """OpenVINO AdaptiveMaxPool-8: ``(values, indices)``, indices per (n, c) plane."""
    return _adaptive_max_pool(x, output_size, index_dtype=index_element_type,
                              num_threads=num_threads, out=out, out_indices=out_indices)

