"""Input normalisation, allocation and the calls into the kernel core.

Python validates and allocates; the C++ kernel core (``src/ovpool``) plans
and computes. The functions here turn an array-like into contiguous
``(n_planes, plane_size)`` planes of a kernel dtype, build the core's plan of
a call (:func:`make_plan`: window tables, the kernel path, the scratch each
thread needs), allocate the outputs (or check a caller's ``out=``), pick the
thread count and run the plan through the compiled driver.

Plans depend only on the shapes, the dtype and the attributes of a call: the
ops cache them by their arguments (:func:`cached`), so a repeated call costs
a dictionary lookup, not a re-validation.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from . import _limits
from ._isa import kernels as _kernels
from ._limits import check_budget
from ._threads import resolve_num_threads
from .errors import OvpoolTypeError, OvpoolValueError
from .shapes import MAX_ELEMENTS

_NATIVE = (np.dtype(np.float32), np.dtype(np.float64))
_INT8 = (np.dtype(np.int8), np.dtype(np.uint8))

# Thresholds of the kernel core's plans to change from their defaults
# (plan.hpp's Tuning, by field name). Empty in use; the tests lower the size
# thresholds to run the large-input paths on small arrays.
TUNING = {}

# Codes of plan.hpp's Family and DType (by dtype.char: dtype.name costs two
# microseconds, a third of a small call).
AVERAGE, LP, MAX, ARGMAX = 0, 1, 2, 3
_DTYPE_CODES = {"f": 0, "d": 1, "e": 2, "b": 4, "B": 5}
_BFLOAT16_CODE = 3


def _is_bfloat16(dtype):
    # ml_dtypes.bfloat16, without importing it; its kind is "V" (void), and
    # the kind check first spares the other dtypes dtype.name (2 us a call)
    return dtype.kind == "V" and dtype.name == "bfloat16"


@dataclass
class Planes:
    """An input seen as contiguous planes of the kernel dtype."""

    planes: np.ndarray        # (n_planes, prod(spatial)), kernel dtype, C-contiguous
    lead: tuple               # (N, C)
    spatial: tuple            # the spatial shape, 1 to 3 dims
    result_dtype: np.dtype    # dtype of the values returned to the caller
    half: str = None          # "f16" / "bf16": planes hold the raw bits as uint16
    code: int = 0             # plan.hpp's DType of result_dtype (a cache key too)

    @property
    def n_spatial(self):
        return len(self.spatial)

    def widened(self):
        """The same planes as float32 (the fallback for 16-bit floats when a
        kernel's per-thread scratch would be too large)."""
        if self.half is None:
            return self
        values = self.planes.view(self.result_dtype).astype(np.float32)
        return Planes(values, self.lead, self.spatial, self.result_dtype, None, 0)


def prepare(x, op, *, allow_int8=False, name="x"):
    """Validate ``x`` and view it as planes.

    float32/float64 are used as they are; float16 and bfloat16 are computed in
    float32 and returned in their own dtype; int8/uint8 only where
    ``allow_int8`` (the max ops). Anything else is a TypeError. An array in
    non-native byte order is converted to native order first (results are
    native).
    """
    if isinstance(x, np.ndarray):
        array = x
    else:
        try:
            array = np.asarray(x)
        except (TypeError, ValueError) as exc:
            raise OvpoolTypeError(f"{op}: {name} is not a numeric array: {exc}") from None
    dtype = array.dtype
    if not dtype.isnative:  # e.g. big-endian data from a file: the kernels read native order
        dtype = dtype.newbyteorder("=")
        array = array.astype(dtype)
    half = None
    if dtype in _NATIVE or (allow_int8 and dtype in _INT8):
        kernel_dtype = dtype
    elif dtype == np.float16 or _is_bfloat16(dtype):
        kernel_dtype = dtype  # viewed as raw uint16 bits below
        half = "f16" if dtype == np.float16 else "bf16"
    else:
        allowed = "float16, bfloat16, float32, float64" + (", int8, uint8" if allow_int8 else "")
        raise OvpoolTypeError(
            f"{op}: unsupported dtype {dtype} of {name}; expected one of {allowed}")
    if array.ndim not in (3, 4, 5):
        raise OvpoolValueError(
            f"{op}: {name} must have shape (N, C, D1[, D2[, D3]]) with 1 to 3 spatial dims, "
            f"got shape {array.shape}")
    lead = array.shape[:2]
    spatial = array.shape[2:]
    plane_size = 1
    for n in spatial:
        plane_size *= n
    if not array.flags.c_contiguous:
        # the copy needs the view's logical size: a broadcast view of a few
        # bytes may claim terabytes
        check_budget(op, f"a contiguous copy of {name}", array.size * dtype.itemsize,
                     array.shape, dtype)
    try:
        planes = np.ascontiguousarray(array, dtype=kernel_dtype).reshape(lead[0] * lead[1],
                                                                         plane_size)
    except MemoryError:
        raise OvpoolValueError(f"{op}: out of memory for a contiguous copy of {name} of shape "
                               f"{array.shape}") from None
    if half is not None:
        planes = planes.view(np.uint16)
    code = _BFLOAT16_CODE if half == "bf16" else _DTYPE_CODES[dtype.char]
    return Planes(planes, lead, spatial, dtype, half, code)


# --------------------------------------------------------------------------
# plans and their cache
# --------------------------------------------------------------------------

# Bytes per output position per axis of a plan's window tables, an upper
# bound (plan.hpp: a (first, taps, divisor) row of int64, plus on W the
# divisor factors and the list of empty windows). The tables follow the output
# size even when the output holds nothing (N or C is 0).
_TABLE_BYTES = 40


def check_output_budget(op, planes, out_spatial, out=None):
    """The output's bytes against the memory budget, checked before any work
    that grows with them; not when ``out`` is an array of that many elements
    (the caller's memory)."""
    n = planes.lead[0] * planes.lead[1]
    for d in out_spatial:
        n *= d
    if isinstance(out, np.ndarray) and out.size == n:
        return
    nbytes = n * planes.result_dtype.itemsize
    if nbytes > _limits._budget:
        check_budget(op, "out", nbytes, planes.lead + tuple(out_spatial), planes.result_dtype)


def make_plan(op, planes, family, axes, *, out=None, p=2.0, index_dtype=np.int64,
              planes_per_index_space=1, column_major=False, index_modulo=0):
    """The kernel core's plan of one call on ``planes`` (:class:`Planes`):
    ``family`` (AVERAGE, LP, MAX, ARGMAX), one axis tuple per spatial dim
    (:func:`ovpool.shapes.fixed_axes` / :func:`~ovpool.shapes.adaptive_axes`),
    and for ARGMAX the index dtype and layout (see plan.hpp's PoolSpec).
    The output (unless ``out`` holds it) and the window tables are checked
    against the memory budget first."""
    out_spatial = [a[1] for a in axes]
    check_output_budget(op, planes, out_spatial, out)
    tables = _TABLE_BYTES * sum(out_spatial)
    if tables > _limits._budget:
        check_budget(op, "the window tables", tables)
    n, c = planes.lead
    try:
        return _kernels.make_plan(
            family, planes.code, n, c, axes, p,
            1 if np.dtype(index_dtype) == np.int64 else 0, max(1, planes_per_index_space),
            column_major, index_modulo, TUNING)
    except (RuntimeError, ValueError, OverflowError) as exc:
        shape = planes.lead + tuple(a[1] for a in axes)
        raise OvpoolValueError(f"{op}: output shape {shape} is absurdly large ({exc})") from None
    except MemoryError:
        shape = planes.lead + tuple(a[1] for a in axes)
        raise OvpoolValueError(
            f"{op}: cannot allocate the window tables of output shape {shape}") from None


_CACHE_SIZE = 256
_cache = {}
_cache_lock = threading.Lock()


_TAG = object()  # marks frozen non-int values
_TYPED_SCALARS = frozenset([int, float, bool, np.int64, np.int32, np.float64, np.float32,
                            np.bool_])


def _freeze(value):
    """A hashable stand-in for an argument (lists and arrays become tuples).

    Scalars keep their type: 2.0 == 2 and True == 1, but only the int is a
    valid size, so they must not share a cached plan. Exact type checks (not
    isinstance) keep this cheap: it runs on every call.
    """
    kind = type(value)
    if kind is int or kind is str or value is None:
        return value
    if kind is tuple or kind is list:
        for v in value:
            if type(v) is not int:
                return tuple([_freeze(v) for v in value])
        return tuple(value)  # the common case: plain ints
    if kind in _TYPED_SCALARS:
        return (_TAG, kind, value)  # equal to no argument a caller can write
    if kind is np.ndarray:
        return (_TAG, value.dtype.str, value.shape, value.tobytes())
    if kind is np.dtype or kind is type:
        return value
    raise TypeError  # not cacheable: the caller builds without the cache


def cached_plans():
    """The plans in the cache (for tests)."""
    return [value for value in _cache.values() if isinstance(value, _kernels.Plan)]


def cached(key_parts, build):
    """``build()``, memoised by the hashable form of ``key_parts``.

    Only successful builds are cached; an argument that cannot be frozen
    bypasses the cache (the build then validates and reports it).
    """
    try:
        key = _freeze(key_parts)
        hash(key)
    except TypeError:
        return build()
    value = _cache.get(key)
    if value is None:
        value = build()
        with _cache_lock:
            if len(_cache) >= _CACHE_SIZE:
                _cache.pop(next(iter(_cache)))
            _cache[key] = value
    return value


# --------------------------------------------------------------------------
# allocation
# --------------------------------------------------------------------------

def _check_out(out, shape, dtype, op, name, source, others=()):
    """``out`` as the caller's buffer for output ``name``: shape, dtype,
    layout, and no memory shared with ``source`` (the input the kernel reads)
    nor with any array of ``others``, ``(name, array)`` pairs (the other
    inputs and outputs of the call): a kernel writing into what it reads, or
    two outputs into one buffer, would return wrong values."""
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
    for other_name, other in others:
        # (every array here is C-contiguous: the exact test is a bounds test)
        if other is not None and np.shares_memory(out, other):
            raise OvpoolValueError(f"{op}: {name} must not overlap {other_name}")
    return out


def allocate(shape, dtype, out, op, name, source, result_dtype=None, others=()):
    """The array the kernel writes: ``out`` itself when it has the kernel
    dtype, else a new array (copied into ``out`` by :func:`finish`).
    ``out`` must have ``result_dtype``, the dtype returned to the caller, and
    share no memory with ``source`` nor ``others`` (see :func:`_check_out`)."""
    total = 1
    for n in shape:
        total *= n
    if total > MAX_ELEMENTS:
        raise OvpoolValueError(f"{op}: output shape {tuple(shape)} is absurdly large")
    if out is not None:
        _check_out(out, shape, dtype if result_dtype is None else result_dtype, op, name, source,
                   others)
        if out.dtype == dtype:
            return out
    nbytes = total * dtype.itemsize
    if nbytes > _limits._budget:   # (the call only when over: it is on every call's path)
        check_budget(op, name, nbytes, shape, dtype)
    try:
        return np.empty(shape, dtype=dtype)
    except (MemoryError, ValueError) as exc:
        raise OvpoolValueError(
            f"{op}: cannot allocate output of shape {tuple(shape)}: {exc}") from None


def finish(result, result_dtype, out):
    """Cast back to the caller's dtype (float16, bfloat16) and fill ``out``.

    The cast rounds; values beyond float16's range (such as the -FLT_MAX of a
    max window with no input) become infinities, as OpenVINO's f16 gives."""
    if out is not None:
        if out is not result:
            with np.errstate(over="ignore"):
                out[...] = result
        return out
    if result.dtype != result_dtype:
        with np.errstate(over="ignore"):  # (entering errstate costs a microsecond)
            return result.astype(result_dtype)
    return result


# --------------------------------------------------------------------------
# kernel calls
# --------------------------------------------------------------------------

def _half_output(shape, out, op, planes):
    """(array the 16-bit kernel writes as uint16, array returned to the caller)."""
    if out is not None:
        _check_out(out, shape, planes.result_dtype, op, "out", planes.planes)
        return out.view(np.uint16), out
    bits = allocate(shape, np.dtype(np.uint16), None, op, "out", None)
    return bits, bits.view(planes.result_dtype)


def run(plan, planes, *, op, index_dtype=np.int64, num_threads=None, out=None,
        out_indices=None):
    """Run ``plan`` on ``planes``: the values, or ``(values, indices)`` for
    the argmax family. ``out`` / ``out_indices`` are the caller's buffers."""
    n_threads = plan.threads(resolve_num_threads(num_threads))
    shape = planes.lead + plan.out_spatial
    x = planes.planes
    result = None
    if plan.widen_input:
        # the 16-bit kernel's scratch would be too large: widen the whole input
        x = x.view(planes.result_dtype).astype(np.float32)
    if planes.half is not None and not plan.widen_input:
        values, result = _half_output(shape, out, op, planes)
    else:
        values = allocate(shape, x.dtype, out, op, "out", x, planes.result_dtype)
    indices = None
    if plan.family == ARGMAX:
        index_dtype = np.dtype(index_dtype)
        if out_indices is not None:
            indices = _check_out(out_indices, shape, index_dtype, op, "out_indices", x,
                                 (("out", out),))
        else:
            indices = allocate(shape, index_dtype, None, op, "indices", None)
    scratch = plan.scratch_bytes * n_threads
    if scratch > _limits._budget:
        check_budget(op, "per-thread scratch", scratch)
    try:
        _kernels.run(plan, x, values, indices, n_threads)
    except MemoryError as exc:
        raise OvpoolValueError(f"{op}: {exc}") from None
    if result is None:
        result = finish(values, planes.result_dtype, out)
    return (result, indices) if plan.family == ARGMAX else result
