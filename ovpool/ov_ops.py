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

from collections.abc import Sequence
from typing import Literal, overload

import numpy as np
import numpy.typing as npt

from . import _core
from . import ops as _ops
from ._core import ARGMAX, AVERAGE, MAX
from .errors import OvpoolTypeError, OvpoolValueError
from .ops import (
    Ints,
    _bool,
    _call,
    _check_index_space,
    adaptive_avg_pool,
    check_dilated_kernel,
    front_door,
    index_dtype_of,
)
from .shapes import (
    DIVISOR_OV_EXCLUDE,
    DIVISOR_OV_INCLUDE,
    PoolGeometry,
    fixed_axes,
    normalize_auto_pad,
    normalize_int_list,
    normalize_rounding,
    pool_geometry,
)

__all__ = ["avg_pool", "max_pool", "adaptive_avg_pool", "adaptive_max_pool", "ov_geometry",
           "check_avg_pool_pads"]


def ov_geometry(spatial: Sequence[int | None], kernel: Ints, strides: Ints | None,
                pads_begin: Ints | None, pads_end: Ints | None, dilations: Ints | None,
                auto_pad: str, rounding_type: str, op: str) -> PoolGeometry:
    """Resolve OpenVINO pool attributes into a :class:`~ovpool.shapes.PoolGeometry`.

    The shape arithmetic of :func:`avg_pool` and :func:`max_pool`, shared
    with the IR runtime's shape inference (:mod:`ovpool.layers`).

    Parameters
    ----------
    spatial : sequence of int or None
        The input's spatial dims (None: a dynamic dim, for shape inference).
    kernel, strides, pads_begin, pads_end, dilations, auto_pad, rounding_type
        As in :func:`avg_pool`. With ``auto_pad`` other than ``"explicit"``
        the given pads are ignored and recomputed.
    op : str
        The op's name, for error messages.

    Returns
    -------
    PoolGeometry
        Output spatial dims and the pads actually used.

    Raises
    ------
    OvpoolTypeError, OvpoolValueError
        For a bad attribute, or a window that does not fit.

    Examples
    --------
    >>> from ovpool.ov_ops import ov_geometry
    >>> g = ov_geometry((5,), 2, 2, 0, 0, None, "explicit", "ceil", "MaxPool")
    >>> g.out_spatial
    (3,)
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



def avg_pool(x: npt.ArrayLike, kernel: Ints, strides: Ints | None = None,
             pads_begin: Ints | None = None, pads_end: Ints | None = None, *,
             exclude_pad: bool = True, rounding_type: str = "floor",
             auto_pad: str = "explicit", dilations: Ints | None = None,
             num_threads: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """OpenVINO AvgPool-1, -14 and -16, attribute for attribute.

    Parameters
    ----------
    x : array_like of shape (N, C, D1[, D2[, D3]])
        float32, float64, float16 or ``ml_dtypes.bfloat16``; any memory
        layout (a non-native byte order is converted to native).
    kernel : int or sequence of int
        Window size per spatial dim (one int: the same for every dim).
    strides : int or sequence of int, optional
        Step per spatial dim, default 1.
    pads_begin, pads_end : int or sequence of int, optional
        Padding at the start and at the end of each spatial dim, default 0.
        Ignored (recomputed) unless ``auto_pad="explicit"``, as OpenVINO
        does: ``ov.save_model`` writes them as zeros.
    exclude_pad : bool, default True
        Divide by the taps inside the input only; False also counts the
        pads, and then only when some pad is non-zero (OpenVINO's rule). An
        edge window that ceil rounding extends past the pads is divided by
        its taps inside input + pads (the specification and PyTorch; the CPU
        plugin divides by the full kernel).
    rounding_type : {"floor", "ceil", "ceil_torch"}
        Output size rounding. ``"ceil"`` keeps a last window that starts in
        the right padding (OpenVINO); ``"ceil_torch"`` drops it (PyTorch,
        ONNX).
    auto_pad : {"explicit", "same_upper", "same_lower", "valid"}
        OpenVINO's padding mode (ONNX's upper-case spellings and ``"notset"``
        are accepted).
    dilations : int or sequence of int, optional
        Spacing between window taps per spatial dim, default 1 (AvgPool-16,
        MaxPool-8/-14).
    num_threads : int, optional
        Threads for this call (>= 1). Default: :func:`ovpool.get_num_threads`.
    out : ndarray, optional
        C-contiguous, writeable buffer of the output's shape and the dtype of
        ``x``, not overlapping ``x``.

    Returns
    -------
    ndarray of shape ``(N, C, *out_spatial)``
        The averages, in the dtype of ``x``. A window entirely in the
        padding gives what OpenVINO gives: NaN with ``exclude_pad``, 0
        without.

    Raises
    ------
    OvpoolTypeError
        If ``x`` has an unsupported dtype or an argument the wrong type.
    OvpoolValueError
        If ``x`` has the wrong rank or an argument a bad value; the message
        starts with the OpenVINO op's name.
        With ``exclude_pad`` and explicit pads as large as the dilated
        kernel (OpenVINO refuses them too).

    See Also
    --------
    ovpool.avg_pool : The ONNX operation (``pads`` in one list, ``count_include_pad``).

    Examples
    --------
    >>> import numpy as np
    >>> from ovpool import ov_ops
    >>> x = np.ones((1, 1, 4), dtype=np.float32)
    >>> ov_ops.avg_pool(x, 3, 1, 1, 1, exclude_pad=True)
    array([[[1., 1., 1., 1.]]], dtype=float32)
    >>> ov_ops.avg_pool(x, 3, 1, 1, 1, exclude_pad=False)
    array([[[0.6666667, 1.       , 1.       , 0.6666667]]], dtype=float32)
    """
    return _call(_AVG_POOL, x, (kernel, strides, pads_begin, pads_end, exclude_pad, rounding_type,
                                 auto_pad, dilations), num_threads, out, None)


def _build_avg_pool(shape, dtype, kernel, strides, pads_begin, pads_end, exclude_pad,
                    rounding_type, auto_pad, dilations):
    op = "AvgPool"
    inp = _core.input_of(shape, dtype, op)
    geometry = ov_geometry(inp.spatial, kernel, strides, pads_begin, pads_end, dilations,
                           auto_pad, rounding_type, op)
    exclude = _bool(exclude_pad, "exclude_pad", op)
    check_avg_pool_pads(geometry, exclude, auto_pad, op)
    # OpenVINO counts pads only when some pad is non-zero (its reference:
    # pads_in_avg = !exclude_pad && any pad != 0); with all pads 0 a ceil
    # window past the input is then 0/0 = NaN, as in OpenVINO. Counting
    # pads, a rounding_type=ceil window may start beyond the declared pads:
    # its sum is 0 and OpenVINO returns 0, so its divisor stays non-zero;
    # excluding them, an empty window is divided as OpenVINO divides it
    # (spec.hpp's Divisor::ov_exclude).
    include = not exclude and any(geometry.pads_begin + geometry.pads_end)
    divisor = DIVISOR_OV_INCLUDE if include else DIVISOR_OV_EXCLUDE
    return _core.pool(op, inp, _core.make_plan(op, inp, AVERAGE, fixed_axes(geometry, divisor)))


_AVG_POOL = front_door("AvgPool", _build_avg_pool, avg_pool, "kernel")


def check_avg_pool_pads(geometry: PoolGeometry, exclude_pad: bool, auto_pad: str,
                        op: str = "AvgPool") -> None:
    """Refuse explicit pads that would leave an exclude-pad AvgPool window empty.

    OpenVINO's own validation ("Kernel after dilation is sometimes entirely
    in the padding area"); it also works on a shape-inference geometry with
    dynamic dims.

    Parameters
    ----------
    geometry : PoolGeometry
        From :func:`ov_geometry`.
    exclude_pad : bool
        The layer's ``exclude-pad``.
    auto_pad : str
        The layer's ``auto_pad``; only ``"explicit"`` pads are checked.
    op : str, default "AvgPool"
        The op's name, for the message.

    Raises
    ------
    OvpoolValueError
        If a pad is as large as the dilated kernel.

    Examples
    --------
    >>> from ovpool.ov_ops import check_avg_pool_pads, ov_geometry
    >>> g = ov_geometry((5,), 2, 1, 2, 0, None, "explicit", "floor", "AvgPool")
    >>> check_avg_pool_pads(g, True, "explicit")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ovpool.errors.OvpoolValueError: AvgPool: with exclude_pad the dilated kernel (2) must be ...
    """
    if exclude_pad and normalize_auto_pad(auto_pad) == "explicit":
        for axis in range(geometry.n_spatial):
            effective = (geometry.kernel[axis] - 1) * geometry.dilations[axis] + 1
            if geometry.pads_begin[axis] >= effective or geometry.pads_end[axis] >= effective:
                raise OvpoolValueError(
                    f"{op}: with exclude_pad the dilated kernel ({effective}) must be larger "
                    f"than the pads (pads_begin={list(geometry.pads_begin)}, "
                    f"pads_end={list(geometry.pads_end)}); some window would be empty")


@overload
def max_pool(x: npt.ArrayLike, kernel: Ints, strides: Ints | None = ...,
             pads_begin: Ints | None = ..., pads_end: Ints | None = ..., *,
             dilations: Ints | None = ..., rounding_type: str = ..., auto_pad: str = ...,
             axis: int = ..., index_element_type: npt.DTypeLike = ...,
             return_indices: Literal[True] = ..., num_threads: int | None = ...,
             out: np.ndarray | None = ...,
             out_indices: np.ndarray | None = ...) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def max_pool(x: npt.ArrayLike, kernel: Ints, strides: Ints | None = ...,
             pads_begin: Ints | None = ..., pads_end: Ints | None = ..., *,
             dilations: Ints | None = ..., rounding_type: str = ..., auto_pad: str = ...,
             axis: int = ..., index_element_type: npt.DTypeLike = ...,
             return_indices: Literal[False], num_threads: int | None = ...,
             out: np.ndarray | None = ..., out_indices: np.ndarray | None = ...) -> np.ndarray: ...
@overload
def max_pool(x: npt.ArrayLike, kernel: Ints, strides: Ints | None = ...,
             pads_begin: Ints | None = ..., pads_end: Ints | None = ..., *,
             dilations: Ints | None = ..., rounding_type: str = ..., auto_pad: str = ...,
             axis: int = ..., index_element_type: npt.DTypeLike = ...,
             return_indices: bool = ..., num_threads: int | None = ...,
             out: np.ndarray | None = ..., out_indices: np.ndarray | None = ...
             ) -> np.ndarray | tuple[np.ndarray, np.ndarray]: ...

def max_pool(x: npt.ArrayLike, kernel: Ints, strides: Ints | None = None,
             pads_begin: Ints | None = None, pads_end: Ints | None = None, *,
             dilations: Ints | None = None, rounding_type: str = "floor",
             auto_pad: str = "explicit", axis: int = 0, index_element_type: npt.DTypeLike = "i64",
             return_indices: bool = True, num_threads: int | None = None,
             out: np.ndarray | None = None, out_indices: np.ndarray | None = None
             ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """OpenVINO MaxPool-1, -8 and -14, attribute for attribute.

    Ties go to the first maximum in row-major window order; a window holding
    a NaN gives NaN and the last NaN's index.

    Parameters
    ----------
    x : array_like of shape (N, C, D1[, D2[, D3]])
        float32, float64, float16 or ``ml_dtypes.bfloat16``, int8 or
        uint8; any memory
        layout (a non-native byte order is converted to native).
    kernel : int or sequence of int
        Window size per spatial dim (one int: the same for every dim).
    strides : int or sequence of int, optional
        Step per spatial dim, default 1.
    pads_begin, pads_end : int or sequence of int, optional
        Padding at the start and at the end of each spatial dim, default 0.
        Ignored (recomputed) unless ``auto_pad="explicit"``, as OpenVINO
        does: ``ov.save_model`` writes them as zeros.
    rounding_type : {"floor", "ceil", "ceil_torch"}
        Output size rounding. ``"ceil"`` keeps a last window that starts in
        the right padding (OpenVINO); ``"ceil_torch"`` drops it (PyTorch,
        ONNX).
    auto_pad : {"explicit", "same_upper", "same_lower", "valid"}
        OpenVINO's padding mode (ONNX's upper-case spellings and ``"notset"``
        are accepted).
    dilations : int or sequence of int, optional
        Spacing between window taps per spatial dim, default 1 (AvgPool-16,
        MaxPool-8/-14).
    axis : int, default 0
        Where the indices start counting (MaxPool-8's ``axis``): 0 = over the
        whole tensor (ONNX's indices), 1 = within each sample, 2 = within
        each ``(n, c)`` plane (PyTorch's); negative values count from the end.
    index_element_type : {"i64", "i32", numpy.int64, numpy.int32}
        dtype of the indices.
    return_indices : bool, default True
        False: the values only (MaxPool-1).
    num_threads : int, optional
        Threads for this call (>= 1). Default: :func:`ovpool.get_num_threads`.
    out : ndarray, optional
        C-contiguous, writeable buffer of the output's shape and the dtype of
        ``x``, not overlapping ``x``.
    out_indices : ndarray, optional
        The same for the indices.

    Returns
    -------
    values : ndarray of shape ``(N, C, *out_spatial)``
        The maxima, in the dtype of ``x``. A window entirely in the padding
        gives the dtype's lowest value, as OpenVINO does.
    indices : ndarray of shape ``(N, C, *out_spatial)``
        Unless ``return_indices=False``: flat indices into the unpadded
        input counted from ``axis``, as ``index_element_type``.

    Raises
    ------
    OvpoolTypeError
        If ``x`` has an unsupported dtype or an argument the wrong type.
    OvpoolValueError
        If ``x`` has the wrong rank or an argument a bad value; the message
        starts with the OpenVINO op's name.

    See Also
    --------
    ovpool.max_pool : The ONNX operation.

    Examples
    --------
    >>> import numpy as np
    >>> from ovpool import ov_ops
    >>> x = np.arange(1, 33, dtype=np.float32).reshape(1, 2, 4, 4)
    >>> values, indices = ov_ops.max_pool(x, 2, 2)
    >>> indices[0, 1]                        # axis=0: over the whole tensor
    array([[21, 23],
           [29, 31]])
    >>> ov_ops.max_pool(x, 2, 2, axis=2)[1][0, 1]   # within each plane
    array([[ 5,  7],
           [13, 15]])
    >>> x = np.array([[[1, 2, 3, 4]]], dtype=np.float32)
    >>> ov_ops.max_pool(x, 2, 2, 0, 1, rounding_type="ceil", return_indices=False)
    array([[[ 2.0000000e+00,  4.0000000e+00, -3.4028235e+38]]], dtype=float32)
    >>> ov_ops.max_pool(x, 2, 2, 0, 1, rounding_type="ceil_torch", return_indices=False)
    array([[[2., 4.]]], dtype=float32)
    """
    return _call(_MAX_POOL, x, (kernel, strides, pads_begin, pads_end, dilations, rounding_type,
                                 auto_pad, axis, index_element_type, return_indices),
                 num_threads, out, out_indices)


def _build_max_pool(shape, dtype, kernel, strides, pads_begin, pads_end, dilations, rounding_type,
                    auto_pad, axis, index_element_type, return_indices):
    op = "MaxPool"
    inp = _core.input_of(shape, dtype, op, allow_int8=True)
    return_indices = _bool(return_indices, "return_indices", op)
    index_dtype = planes_per_space = index_modulo = None
    if return_indices:
        index_dtype = index_dtype_of(index_element_type, op, "index_element_type")
        rank = 2 + inp.n_spatial
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise OvpoolTypeError(f"{op}: axis must be an int, got {axis!r}")
        if not -rank <= axis < rank:
            raise OvpoolValueError(f"{op}: axis must be in [{-rank}, {rank - 1}], got {axis}")
        axis = int(axis) % rank
        n, c = inp.lead
        index_modulo = 0
        if axis == 0:
            planes_per_space = n * c
        elif axis == 1:
            planes_per_space = c
        else:
            planes_per_space = 1
            if axis > 2:
                index_modulo = int(np.prod(inp.spatial[axis - 2:], dtype=np.int64))
        _check_index_space(inp.spatial, planes_per_space, index_dtype, op)
    geometry = ov_geometry(inp.spatial, kernel, strides, pads_begin, pads_end, dilations,
                           auto_pad, rounding_type, op)
    if not return_indices:
        return _core.pool(op, inp, _core.make_plan(op, inp, MAX, fixed_axes(geometry)))
    plan = _core.make_plan(op, inp, ARGMAX, fixed_axes(geometry), index_dtype=index_dtype,
                           planes_per_index_space=planes_per_space, index_modulo=index_modulo)
    return _core.pool(op, inp, plan, index_dtype)


_MAX_POOL = front_door("MaxPool", _build_max_pool, max_pool, "kernel", allow_int8=True)


def adaptive_max_pool(x: npt.ArrayLike, output_size: Ints, *,
                      index_element_type: npt.DTypeLike = "i64", num_threads: int | None = None,
                      out: np.ndarray | None = None,
                      out_indices: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """OpenVINO AdaptiveMaxPool-8: :func:`ovpool.adaptive_max_pool` with its attribute name.

    Parameters
    ----------
    x : array_like of shape (N, C, D1[, D2[, D3]])
        As in :func:`ovpool.adaptive_max_pool`.
    output_size : int or sequence of int
        Output size per spatial dim (the op's second input).
    index_element_type : {"i64", "i32", numpy.int64, numpy.int32}
        dtype of the indices. OpenVINO's CPU plugin cannot compile the
        default i64; ovpool runs it.
    num_threads, out, out_indices
        As in :func:`ovpool.adaptive_max_pool`.

    Returns
    -------
    values : ndarray of shape ``(N, C, *output_size)``
        The maxima (NaN propagates, where OpenVINO's CPU plugin ignores a
        NaN that is not first in its bin).
    indices : ndarray of shape ``(N, C, *output_size)``
        Flat positions within each ``(n, c)`` plane.

    Raises
    ------
    OvpoolTypeError, OvpoolValueError
        As :func:`ovpool.adaptive_max_pool`.

    Examples
    --------
    >>> import numpy as np
    >>> from ovpool import ov_ops
    >>> x = np.array([[[3, 1, 4, 1, 5, 9, 2]]], dtype=np.float32)
    >>> ov_ops.adaptive_max_pool(x, 3, index_element_type="i32")[1]
    array([[[2, 4, 5]]], dtype=int32)
    """
    return _call(_ADAPTIVE_MAX_POOL, x, (output_size, index_element_type), num_threads, out,
                 out_indices)


def _build_adaptive_max_pool(shape, dtype, output_size, index_element_type):
    return _ops._build_adaptive_max_pool(shape, dtype, output_size, index_element_type,
                                         "index_element_type")


_ADAPTIVE_MAX_POOL = front_door("adaptive_max_pool", _build_adaptive_max_pool, adaptive_max_pool,
                                "output_size", allow_int8=True)

