"""Input normalisation, allocation and kernel dispatch shared by every op.

Python validates and allocates; Cython computes. The functions here turn an
array-like into contiguous ``(n_planes, plane_size)`` planes of a kernel dtype,
allocate the outputs (or check a caller's ``out=``), lift every rank to three
spatial axes, pick the thread count and call :mod:`ovpool._kernels`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _kernels
from ._threads import resolve_num_threads
from .errors import OvpoolTypeError, OvpoolValueError
from .shapes import MAX_ELEMENTS

# Window table of a size-1 axis added when lifting 1D/2D pools to 3D.
_UNIT_TABLE = np.array([[0, 1, 1]], dtype=np.int64)
_UNIT_TABLE.setflags(write=False)

_NATIVE = (np.dtype(np.float32), np.dtype(np.float64))
_INT8 = (np.dtype(np.int8), np.dtype(np.uint8))


def _is_bfloat16(dtype):
    return dtype.name == "bfloat16"  # ml_dtypes.bfloat16, without importing it


@dataclass
class Planes:
    """An input seen as contiguous planes of the kernel dtype."""

    planes: np.ndarray        # (n_planes, prod(spatial)), kernel dtype, C-contiguous
    lead: tuple               # (N, C)
    spatial: tuple            # the spatial shape, 1 to 3 dims
    result_dtype: np.dtype    # dtype of the values returned to the caller

    @property
    def n_spatial(self):
        return len(self.spatial)

    @property
    def lifted_spatial(self):
        return (1,) * (3 - len(self.spatial)) + tuple(self.spatial)


def prepare(x, op, *, allow_int8=False, name="x"):
    """Validate ``x`` and view it as planes.

    float32/float64 are used as they are; float16 and bfloat16 are computed in
    float32 and returned in their own dtype; int8/uint8 only where
    ``allow_int8`` (the max ops). Anything else is a TypeError.
    """
    if isinstance(x, np.ndarray):
        array = x
    else:
        try:
            array = np.asarray(x)
        except (TypeError, ValueError) as exc:
            raise OvpoolTypeError(f"{op}: {name} is not a numeric array: {exc}") from None
    dtype = array.dtype
    if dtype in _NATIVE or (allow_int8 and dtype in _INT8):
        kernel_dtype = dtype
    elif dtype == np.float16 or _is_bfloat16(dtype):
        kernel_dtype = np.dtype(np.float32)
    else:
        allowed = "float16, bfloat16, float32, float64" + (", int8, uint8" if allow_int8 else "")
        raise OvpoolTypeError(f"{op}: unsupported dtype {dtype} of {name}; expected one of {allowed}")
    if array.ndim not in (3, 4, 5):
        raise OvpoolValueError(
            f"{op}: {name} must have shape (N, C, D1[, D2[, D3]]) with 1 to 3 spatial dims, "
            f"got shape {array.shape}")
    lead = tuple(array.shape[:2])
    spatial = tuple(array.shape[2:])
    planes = np.ascontiguousarray(array, dtype=kernel_dtype).reshape(
        lead[0] * lead[1], int(np.prod(spatial, dtype=np.int64)))
    return Planes(planes, lead, spatial, dtype)


def _lift(items, fill):
    return (fill,) * (3 - len(items)) + tuple(items)


def _check_out(out, shape, dtype, op, name, source):
    if not isinstance(out, np.ndarray):
        raise OvpoolTypeError(f"{op}: {name} must be a numpy array, got {type(out).__name__}")
    if out.shape != tuple(shape) or out.dtype != dtype:
        raise OvpoolValueError(
            f"{op}: {name} must have shape {tuple(shape)} and dtype {dtype}, "
            f"got shape {out.shape} and dtype {out.dtype}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise OvpoolValueError(f"{op}: {name} must be C-contiguous and writeable")
    if source is not None and np.shares_memory(out, source):
        raise OvpoolValueError(f"{op}: {name} must not overlap the input")
    return out


def _allocate(shape, dtype, out, op, name, source, result_dtype=None):
    """The array the kernel writes: ``out`` itself when it has the kernel
    dtype, else a new array (copied into ``out`` by :func:`_finish`).
    ``out`` must have ``result_dtype``, the dtype returned to the caller."""
    total = 1
    for n in shape:
        total *= n
    if total > MAX_ELEMENTS:
        raise OvpoolValueError(f"{op}: output shape {tuple(shape)} is absurdly large")
    if out is not None:
        _check_out(out, shape, dtype if result_dtype is None else result_dtype, op, name, source)
        if out.dtype == dtype:
            return out
    try:
        return np.empty(shape, dtype=dtype)
    except (MemoryError, ValueError) as exc:
        raise OvpoolValueError(f"{op}: cannot allocate output of shape {tuple(shape)}: {exc}") from None


def _finish(result, result_dtype, out, op, name):
    """Cast back to the caller's dtype (float16, bfloat16) and fill ``out``."""
    if out is not None:
        if out is not result:
            out[...] = result
        return out
    if result.dtype != result_dtype:
        return result.astype(result_dtype)
    return result


def _tables(planes, windows, dilations):
    lifted = [_UNIT_TABLE] * (3 - planes.n_spatial) + list(windows)
    return lifted, _lift(dilations, 1)


def run_sum_pool(planes, out_spatial, windows, dilations, *, op, p=None,
                 num_threads=None, out=None):
    """Average pooling (``p is None``) or Lp pooling over window tables."""
    x = planes.planes
    full_shape = planes.lead + tuple(out_spatial)
    result = _allocate(full_shape, x.dtype, out, op, "out", x, planes.result_dtype)
    tables, dils = _tables(planes, windows, dilations)
    in_d, in_h, in_w = planes.lifted_spatial
    n_rows = x.shape[0] * tables[0].shape[0] * tables[1].shape[0]
    n_threads = resolve_num_threads(num_threads, n_rows, x.size + result.size)
    scratch = np.empty((n_threads, max(in_w, 1)), dtype=x.dtype)
    flat_out = result.reshape(x.shape[0], -1)
    if p is None:
        _kernels.avg_pool(x, flat_out, scratch, in_d, in_h, in_w, *tables, *dils, n_threads)
    else:
        _kernels.lp_pool(x, flat_out, scratch, in_d, in_h, in_w, *tables, *dils, float(p), n_threads)
    return _finish(result, planes.result_dtype, out, op, "out")


def run_max_pool(planes, out_spatial, windows, dilations, *, op, with_indices=False,
                 index_dtype=np.int64, column_major=False, planes_per_index_space=1,
                 index_modulo=None, num_threads=None, out=None, out_indices=None):
    """Max pooling over window tables, optionally with flat indices.

    Indices count within ``planes_per_index_space`` consecutive planes (1: per
    (n, c) plane; N*C: the whole tensor; C: per sample), row-major or
    column-major within the spatial dims. ``index_modulo`` then reduces them
    (OpenVINO MaxPool-8 with an axis inside the spatial dims).
    """
    x = planes.planes
    full_shape = planes.lead + tuple(out_spatial)
    values = _allocate(full_shape, x.dtype, out, op, "out", x, planes.result_dtype)
    tables, dils = _tables(planes, windows, dilations)
    in_d, in_h, in_w = planes.lifted_spatial
    n_rows = x.shape[0] * tables[0].shape[0] * tables[1].shape[0]
    n_threads = resolve_num_threads(num_threads, n_rows, x.size + values.size)
    flat_values = values.reshape(x.shape[0], -1)
    if not with_indices:
        scratch = np.empty((n_threads, max(in_w, 1)), dtype=x.dtype)
        _kernels.max_pool(x, flat_values, scratch, in_d, in_h, in_w, *tables, *dils, n_threads)
        return _finish(values, planes.result_dtype, out, op, "out")

    index_dtype = np.dtype(index_dtype)
    if index_dtype == np.int32:
        space = in_d * in_h * in_w * max(1, planes_per_index_space)
        if space > np.iinfo(np.int32).max:
            raise OvpoolValueError(
                f"{op}: indices up to {space - 1} do not fit in int32; use int64 indices")
    if out_indices is not None and index_modulo is None:
        indices = _check_out(out_indices, full_shape, index_dtype, op, "out_indices", x)
    else:
        indices = _allocate(full_shape, index_dtype, None, op, "indices", None)
    if column_major:
        strides = (1, in_d, in_d * in_h)
    else:
        strides = (in_h * in_w, in_w, 1)
    _kernels.max_pool_with_indices(x, flat_values, indices.reshape(x.shape[0], -1),
                                   in_d, in_h, in_w, *tables, *dils, *strides,
                                   max(1, planes_per_index_space), n_threads)
    if index_modulo is not None:
        np.remainder(indices, index_modulo, out=indices)
        if out_indices is not None:
            _check_out(out_indices, full_shape, index_dtype, op, "out_indices", x)
            out_indices[...] = indices
            indices = out_indices
    return _finish(values, planes.result_dtype, out, op, "out"), indices
