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

import numbers
from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np
import numpy.typing as npt

from . import _core, _docs
from . import ops as _ops
from ._core import ARGMAX, AVERAGE, MAX
from .errors import OvpoolTypeError
from .ops import (
    Ints,
    _bool,
    _call,
    adaptive_avg_pool,
    front_door,
    index_dtype_of,
)
from .shapes import OPENVINO, auto_pad_code, index_code, ints, lower, rounding_code

__all__ = ["avg_pool", "max_pool", "adaptive_avg_pool", "adaptive_max_pool"]

# the shared parameter documentation (ovpool._docs) filled in
_doc = _docs.filler("the OpenVINO op's name")


def ov_lowering(
    op: str,
    dims: Sequence[int | None],
    code: int,
    family: int,
    kernel: Ints,
    strides: Ints | None,
    pads_begin: Ints | None,
    pads_end: Ints | None,
    dilations: Ints | None,
    auto_pad: str,
    rounding_type: str,
    *,
    exclude_pad: bool = True,
    axis: int = 0,
    index_dtype: Any = None,
) -> Any:
    """An OpenVINO AvgPool's or MaxPool's attributes, as the numpy API and the
    IR runtime take them, lowered by the kernel core on an input of shape
    ``dims`` (None for an unknown dim): its ``out_shape`` and its plan
    (:func:`ovpool.shapes.lower`). The divisor of an average, the exclude-pad
    check and MaxPool-8's index space are the core's rules."""
    n = len(dims) - 2
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        raise OvpoolTypeError(f"{op}: axis must be an int, got {axis!r}")
    return lower(
        OPENVINO,
        family,
        code,
        tuple(dims),
        kernel=ints(kernel, "kernel", n, required=True),
        strides=ints(strides, "strides", n),
        pads_begin=ints(pads_begin, "pads_begin", n),
        pads_end=ints(pads_end, "pads_end", n),
        dilations=ints(dilations, "dilations", n),
        auto_pad=auto_pad_code(auto_pad),
        rounding=rounding_code(rounding_type),
        count_pads=not exclude_pad,
        axis=int(axis),
        index_type=index_code(index_dtype),
    )


@_doc
def avg_pool(
    x: npt.ArrayLike,
    kernel: Ints,
    strides: Ints | None = None,
    pads_begin: Ints | None = None,
    pads_end: Ints | None = None,
    *,
    exclude_pad: bool = True,
    rounding_type: str = "floor",
    auto_pad: str = "explicit",
    dilations: Ints | None = None,
    num_threads: int | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """OpenVINO AvgPool-1, -14 and -16, attribute for attribute.

    Parameters
    ----------
    %(x)s
    %(ov_window)s
    exclude_pad : bool, default True
        Divide by the taps inside the input only; False also counts the
        pads, and then only when some pad is non-zero (OpenVINO's rule). An
        edge window that ceil rounding extends past the pads is divided by
        its taps inside input + pads (the specification and PyTorch; the CPU
        plugin divides by the full kernel).
    %(ov_rounding)s
    %(num_threads)s
    %(out)s

    Returns
    -------
    ndarray of shape ``(N, C, *out_spatial)``
        The averages, in the dtype of ``x``. A window entirely in the
        padding gives what OpenVINO gives: NaN with ``exclude_pad``, 0
        without.

    %(raises)s
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
    return _call(
        _AVG_POOL,
        x,
        (kernel, strides, pads_begin, pads_end, exclude_pad, rounding_type, auto_pad, dilations),
        num_threads,
        out,
        None,
    )


def _build_avg_pool(
    shape,
    dtype,
    kernel,
    strides,
    pads_begin,
    pads_end,
    exclude_pad,
    rounding_type,
    auto_pad,
    dilations,
):
    op = "AvgPool"
    inp = _core.input_of(shape, dtype, op)
    lowering = ov_lowering(
        op,
        inp.shape,
        inp.code,
        AVERAGE,
        kernel,
        strides,
        pads_begin,
        pads_end,
        dilations,
        auto_pad,
        rounding_type,
        exclude_pad=_bool(exclude_pad, "exclude_pad", op),
    )
    return _core.pool(op, inp, lowering)


_AVG_POOL = front_door("AvgPool", _build_avg_pool, avg_pool, "kernel")


@overload
def max_pool(
    x: npt.ArrayLike,
    kernel: Ints,
    strides: Ints | None = ...,
    pads_begin: Ints | None = ...,
    pads_end: Ints | None = ...,
    *,
    dilations: Ints | None = ...,
    rounding_type: str = ...,
    auto_pad: str = ...,
    axis: int = ...,
    index_element_type: npt.DTypeLike = ...,
    return_indices: Literal[True] = ...,
    num_threads: int | None = ...,
    out: np.ndarray | None = ...,
    out_indices: np.ndarray | None = ...,
) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def max_pool(
    x: npt.ArrayLike,
    kernel: Ints,
    strides: Ints | None = ...,
    pads_begin: Ints | None = ...,
    pads_end: Ints | None = ...,
    *,
    dilations: Ints | None = ...,
    rounding_type: str = ...,
    auto_pad: str = ...,
    axis: int = ...,
    index_element_type: npt.DTypeLike = ...,
    return_indices: Literal[False],
    num_threads: int | None = ...,
    out: np.ndarray | None = ...,
    out_indices: np.ndarray | None = ...,
) -> np.ndarray: ...
@overload
def max_pool(
    x: npt.ArrayLike,
    kernel: Ints,
    strides: Ints | None = ...,
    pads_begin: Ints | None = ...,
    pads_end: Ints | None = ...,
    *,
    dilations: Ints | None = ...,
    rounding_type: str = ...,
    auto_pad: str = ...,
    axis: int = ...,
    index_element_type: npt.DTypeLike = ...,
    return_indices: bool = ...,
    num_threads: int | None = ...,
    out: np.ndarray | None = ...,
    out_indices: np.ndarray | None = ...,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]: ...


@_doc
def max_pool(
    x: npt.ArrayLike,
    kernel: Ints,
    strides: Ints | None = None,
    pads_begin: Ints | None = None,
    pads_end: Ints | None = None,
    *,
    dilations: Ints | None = None,
    rounding_type: str = "floor",
    auto_pad: str = "explicit",
    axis: int = 0,
    index_element_type: npt.DTypeLike = "i64",
    return_indices: bool = True,
    num_threads: int | None = None,
    out: np.ndarray | None = None,
    out_indices: np.ndarray | None = None,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """OpenVINO MaxPool-1, -8 and -14, attribute for attribute.

    Ties go to the first maximum in row-major window order; a window holding
    a NaN gives NaN and the last NaN's index.

    Parameters
    ----------
    %(x_int8)s
    %(ov_window)s
    %(ov_rounding)s
    axis : int, default 0
        Where the indices start counting (MaxPool-8's ``axis``): 0 = over the
        whole tensor (ONNX's indices), 1 = within each sample, 2 = within
        each ``(n, c)`` plane (PyTorch's); negative values count from the end.
    index_element_type : {"i64", "i32", numpy.int64, numpy.int32}
        dtype of the indices.
    return_indices : bool, default True
        False: the values only (MaxPool-1).
    %(num_threads)s
    %(out)s
    out_indices : ndarray, optional
        The same for the indices (their shape, ``index_element_type``).

    Returns
    -------
    values : ndarray of shape ``(N, C, *out_spatial)``
        The maxima, in the dtype of ``x``. A window entirely in the padding
        gives the dtype's lowest value, as OpenVINO does.
    indices : ndarray of shape ``(N, C, *out_spatial)``
        Unless ``return_indices=False``: flat indices into the unpadded
        input counted from ``axis``, as ``index_element_type``.

    %(raises)s

    See Also
    --------
    ovpool.max_pool : The ONNX operation.

    Examples
    --------
    >>> import numpy as np
    >>> from ovpool import ov_ops
    >>> x = np.arange(1, 33, dtype=np.float32).reshape(1, 2, 4, 4)
    >>> values, indices = ov_ops.max_pool(x, 2, 2)
    >>> indices[0, 1]  # axis=0: over the whole tensor
    array([[21, 23],
           [29, 31]])
    >>> ov_ops.max_pool(x, 2, 2, axis=2)[1][0, 1]  # within each plane
    array([[ 5,  7],
           [13, 15]])
    >>> x = np.array([[[1, 2, 3, 4]]], dtype=np.float32)
    >>> ov_ops.max_pool(x, 2, 2, 0, 1, rounding_type="ceil", return_indices=False)
    array([[[ 2.0000000e+00,  4.0000000e+00, -3.4028235e+38]]], dtype=float32)
    >>> ov_ops.max_pool(x, 2, 2, 0, 1, rounding_type="ceil_torch", return_indices=False)
    array([[[2., 4.]]], dtype=float32)
    """
    return _call(
        _MAX_POOL,
        x,
        (
            kernel,
            strides,
            pads_begin,
            pads_end,
            dilations,
            rounding_type,
            auto_pad,
            axis,
            index_element_type,
            return_indices,
        ),
        num_threads,
        out,
        out_indices,
    )


def _build_max_pool(
    shape,
    dtype,
    kernel,
    strides,
    pads_begin,
    pads_end,
    dilations,
    rounding_type,
    auto_pad,
    axis,
    index_element_type,
    return_indices,
):
    op = "MaxPool"
    inp = _core.input_of(shape, dtype, op, allow_int8=True)
    return_indices = _bool(return_indices, "return_indices", op)
    index_dtype = None
    if return_indices:
        index_dtype = index_dtype_of(index_element_type, op, "index_element_type")
    lowering = ov_lowering(
        op,
        inp.shape,
        inp.code,
        ARGMAX if return_indices else MAX,
        kernel,
        strides,
        pads_begin,
        pads_end,
        dilations,
        auto_pad,
        rounding_type,
        axis=axis if return_indices else 0,
        index_dtype=index_dtype,
    )
    return _core.pool(op, inp, lowering, index_dtype)


_MAX_POOL = front_door("MaxPool", _build_max_pool, max_pool, "kernel", allow_int8=True)


def adaptive_max_pool(
    x: npt.ArrayLike,
    output_size: Ints,
    *,
    index_element_type: npt.DTypeLike = "i64",
    num_threads: int | None = None,
    out: np.ndarray | None = None,
    out_indices: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
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
    return _call(
        _ADAPTIVE_MAX_POOL, x, (output_size, index_element_type), num_threads, out, out_indices
    )


def _build_adaptive_max_pool(shape, dtype, output_size, index_element_type):
    return _ops._build_adaptive_max_pool(
        shape, dtype, output_size, index_element_type, "index_element_type"
    )


_ADAPTIVE_MAX_POOL = front_door(
    "adaptive_max_pool", _build_adaptive_max_pool, adaptive_max_pool, "output_size", allow_int8=True
)
