"""Inputs, plans and prepared pools: the Python side of a call.

Python validates and explains; the C++ kernel core plans and computes; the
compiled driver carries a call across. A public function of :mod:`ovpool.ops`
or :mod:`ovpool.ov_ops` is a :class:`FrontDoor`: its builder validates the
attributes for an input shape and dtype once and returns a prepared
:class:`Pool` (the plan, the output shapes and dtypes), which the driver
caches under a key of plain integers and runs on every later call with the
same shape, dtype and attributes (``_kernels.call``). The per-call path is
compiled; this module holds what it hands back to Python: the errors, the
coercion of array-likes, and the rare calls that widen a 16-bit input first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _limits, _opset, _spec, _threads
from ._isa import kernels as _kernels
from ._limits import check_budget
from .errors import OvpoolError, OvpoolTypeError, OvpoolValueError
from .shapes import MAX_ELEMENTS

Pool = _kernels.Pool
FrontDoor = _kernels.FrontDoor

# Thresholds of the kernel core's plans to change from their defaults
# (plan.hpp's Tuning, by field name). Empty in use; the tests lower the size
# thresholds to run the large-input paths on small arrays (and clear _cache).
TUNING = {}

# The pools the numpy functions have built (the driver's cache, by key).
_cache = _kernels.pool_cache

# Codes of spec.hpp's Family and DType.
AVERAGE, LP, MAX, ARGMAX = (
    _spec.FAMILY_AVERAGE,
    _spec.FAMILY_LP,
    _spec.FAMILY_MAX,
    _spec.FAMILY_ARGMAX,
)
# The dtypes the pools take (the op schema's element type sets: every pool
# takes the float ones, the max pools the 8-bit integers too), by numpy name
# (ml_dtypes' bfloat16 is "bfloat16"), each with its DType code (spec.hpp
# names a type as the IR does).
_FLOAT_DTYPES = _opset.numpy_names("float")
_MAX_DTYPES = _opset.numpy_names("max")
_DTYPE_CODES = {
    name: getattr(_spec, f"DTYPE_{etype.upper()}")
    for name, etype in zip(_MAX_DTYPES, _opset.ELEMENT_TYPE_SETS["max"])
}


def cached_plans():
    """The plans of the pools in the cache (for tests)."""
    return [pool.plan for pool in _cache.values()]


# --------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Input:
    """What a pool is prepared for: an input's shape and dtype, validated."""

    lead: tuple  # (N, C)
    spatial: tuple  # the spatial shape, 1 to 3 dims
    dtype: np.dtype  # the input's dtype, also the values' dtype
    code: int  # spec.hpp's DType of it

    @property
    def n_spatial(self):
        return len(self.spatial)

    @property
    def shape(self):
        return self.lead + self.spatial

    @property
    def half(self):
        return self.code in (_spec.DTYPE_F16, _spec.DTYPE_BF16)


def _check_dtype(dtype, op, allow_int8, name):
    allowed = _MAX_DTYPES if allow_int8 else _FLOAT_DTYPES
    if dtype.name in allowed:
        return
    raise OvpoolTypeError(
        f"{op}: unsupported dtype {dtype} of {name}; expected one of {', '.join(allowed)}"
    )


def _check_rank(shape, op, name):
    if len(shape) not in (3, 4, 5):
        raise OvpoolValueError(
            f"{op}: {name} must have shape (N, C, D1[, D2[, D3]]) with 1 to 3 spatial dims, "
            f"got shape {tuple(shape)}"
        )


def input_of(shape, dtype, op, *, allow_int8=False, name="x"):
    """An :class:`Input` of ``shape`` and ``dtype``: float32/float64, float16
    and bfloat16 (computed in float32, returned in their own dtype), int8 and
    uint8 only where ``allow_int8`` (the max ops); 3 to 5 dims."""
    try:
        dtype = np.dtype(dtype)
    except TypeError as exc:
        raise OvpoolTypeError(f"{op}: {name} has no numpy dtype: {exc}") from None
    if not dtype.isnative:
        dtype = dtype.newbyteorder("=")
    _check_dtype(dtype, op, allow_int8, name)
    try:
        shape = tuple(int(n) for n in shape)
    except (TypeError, ValueError):
        raise OvpoolTypeError(
            f"{op}: the shape of {name} must be a sequence of ints, got {shape!r}"
        ) from None
    _check_rank(shape, op, name)
    if min(shape) < 0:
        raise OvpoolValueError(f"{op}: the shape of {name} {shape} has a negative dim")
    code = _DTYPE_CODES[dtype.name]
    return Input(shape[:2], shape[2:], dtype, code)


def coerce(x, op, allow_int8=False, name="x"):
    """``x`` as an ndarray the kernels read in place: C-contiguous, aligned,
    native byte order. Its dtype and rank are checked before any copy; the
    copy of a strided or broadcast view is checked against the memory budget
    (a broadcast view of a few bytes may claim terabytes)."""
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
    _check_dtype(dtype, op, allow_int8, name)
    _check_rank(array.shape, op, name)
    if array.flags.c_contiguous and array.flags.aligned and array.dtype.isnative:
        return array
    check_budget(
        op, f"a contiguous copy of {name}", array.size * dtype.itemsize, array.shape, dtype
    )
    try:
        return np.require(array.astype(dtype, copy=False), dtype, ("C", "A"))
    except MemoryError:
        raise OvpoolValueError(
            f"{op}: out of memory for a contiguous copy of {name} of shape {array.shape}"
        ) from None


# --------------------------------------------------------------------------
# plans and pools
# --------------------------------------------------------------------------


def check_output_budget(op, inp, out_spatial, out=None):
    """The output's bytes against the memory budget, checked before any work
    that grows with them; not when ``out`` is an array of that many elements
    (the caller's memory)."""
    n = inp.lead[0] * inp.lead[1]
    for d in out_spatial:
        n *= d
    if isinstance(out, np.ndarray) and out.size == n:
        return
    nbytes = n * inp.dtype.itemsize
    if nbytes > _limits._budget:
        check_budget(op, "out", nbytes, inp.lead + tuple(out_spatial), inp.dtype)


def make_plan(op, inp, lowering):
    """The kernel core's plan of a call on ``inp`` (:class:`Input`) that
    :func:`ovpool.shapes.lower` lowered. The window tables are checked
    against the memory budget first (the outputs by each call that allocates
    them)."""
    out_spatial = lowering.out_shape[2:]
    tables = _spec.window_table_bytes(out_spatial)
    if tables > _limits._budget:
        # an output that large is what a call would refuse first
        check_output_budget(op, inp, out_spatial)
        check_budget(op, "the window tables", tables)
    try:
        return _kernels.make_plan(lowering, TUNING)
    except (RuntimeError, ValueError, OverflowError) as exc:
        raise OvpoolValueError(
            f"{op}: output shape {lowering.out_shape} is absurdly large ({exc})"
        ) from None
    except MemoryError:
        raise OvpoolValueError(
            f"{op}: cannot allocate the window tables of output shape {lowering.out_shape}"
        ) from None


def pool(op, inp, lowering, index_dtype=None):
    """The prepared :class:`Pool` of a lowered call for inputs like ``inp``."""
    return Pool(
        make_plan(op, inp, lowering),
        op,
        inp.shape,
        inp.dtype,
        lowering.out_shape,
        None if index_dtype is None else np.dtype(index_dtype),
    )


# --------------------------------------------------------------------------
# the per-call path's Python side (called by the driver, only when needed)
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
            f"got shape {out.shape} and dtype {out.dtype}"
        )
    if not (
        out.flags.c_contiguous and out.flags.writeable and out.flags.aligned and out.dtype.isnative
    ):
        raise OvpoolValueError(
            f"{op}: {name} must be C-contiguous, aligned, writeable and in native byte order"
        )
    if source is not None and np.shares_memory(out, source):
        raise OvpoolValueError(f"{op}: {name} must not overlap the input")
    for other_name, other in others:
        # (every array here is C-contiguous: the exact test is a bounds test)
        if other is not None and np.shares_memory(out, other):
            raise OvpoolValueError(f"{op}: {name} must not overlap {other_name}")
    return out


def _pool_check_out(pool, x, out, out_indices):
    if out is not None:
        _check_out(out, pool.out_shape, pool.dtype, pool.op, "out", x)
    if out_indices is not None and pool.index_dtype is not None:
        _check_out(
            out_indices,
            pool.out_shape,
            pool.index_dtype,
            pool.op,
            "out_indices",
            x,
            (("out", out),),
        )


def _pool_check_budget(pool, n_threads, own_out=True, own_indices=True):
    op = pool.op
    budget = _limits.get_memory_budget()  # raises for a malformed OVPOOL_MEMORY_BUDGET
    if own_out and pool.out_bytes > budget:
        check_budget(op, "out", pool.out_bytes, pool.out_shape, pool.dtype)
    if own_indices and pool.index_bytes > budget:
        check_budget(op, "indices", pool.index_bytes, pool.out_shape, pool.index_dtype)
    check_budget(op, "per-thread scratch", pool.plan.scratch_bytes * n_threads)


def _pool_input(pool, x):
    """x for a prepared pool: coerced, and of the shape and dtype it was
    prepared for."""
    array = coerce(x, pool.op, allow_int8=True)
    if array.shape != pool.shape or array.dtype != pool.dtype:
        raise OvpoolValueError(
            f"{pool.op}: this pool was prepared for x of shape {pool.shape} and dtype "
            f"{pool.dtype}, got shape {array.shape} and dtype {array.dtype}"
        )
    return array


def _run_widened(pool, x, num_threads, out, out_indices):
    """A 16-bit input whose kernel scratch would be too large: the whole
    input is widened to float32, pooled, and rounded back."""
    op = pool.op
    n_threads = pool.threads(num_threads)
    _pool_check_budget(pool, n_threads, out is None, out_indices is None)
    check_budget(op, "a float32 copy of x", x.size * 4, x.shape, np.dtype(np.float32))
    if out is not None:
        _check_out(out, pool.out_shape, pool.dtype, op, "out", x)
    wide = x.astype(np.float32)
    values = np.empty(pool.out_shape, np.float32)
    indices = None
    if pool.index_dtype is not None:
        if out_indices is not None:
            indices = _check_out(
                out_indices, pool.out_shape, pool.index_dtype, op, "out_indices", x, (("out", out),)
            )
        else:
            indices = np.empty(pool.out_shape, pool.index_dtype)
    try:
        _kernels.run(pool.plan, wide, values, indices, n_threads)
    except MemoryError as exc:
        raise OvpoolValueError(f"{op}: {exc}") from None
    # the cast rounds; values beyond float16's range (the -FLT_MAX of a max
    # window with no input) become infinities, as OpenVINO's f16 gives
    with np.errstate(over="ignore"):
        if out is not None:
            out[...] = values
            result = out
        else:
            result = values.astype(pool.dtype)
    return result if indices is None else (result, indices)


def _default_threads():
    return _threads.get_num_threads()


_kernels._python.update(
    OvpoolError=OvpoolError,
    OvpoolValueError=OvpoolValueError,
    check_threads=_threads.check,
    default_threads=_default_threads,
    coerce=coerce,
    check_budget=_pool_check_budget,
    check_out=_pool_check_out,
    pool_input=_pool_input,
    run_widened=_run_widened,
)


# --------------------------------------------------------------------------
# inputs of the ops that have no plan (max_unpool)
# --------------------------------------------------------------------------


def allocate(shape, dtype, out, op, name, source, result_dtype=None, others=()):
    """The array a kernel writes: ``out`` itself when it has the kernel
    dtype, else a new array (copied into ``out`` by :func:`finish`).
    ``out`` must have ``result_dtype``, the dtype returned to the caller, and
    share no memory with ``source`` nor ``others`` (see :func:`_check_out`)."""
    total = 1
    for n in shape:
        total *= n
    if total > MAX_ELEMENTS:
        raise OvpoolValueError(f"{op}: output shape {tuple(shape)} is absurdly large")
    if out is not None:
        _check_out(
            out, shape, dtype if result_dtype is None else result_dtype, op, name, source, others
        )
        if out.dtype == dtype:
            return out
    nbytes = total * dtype.itemsize
    if nbytes > _limits._budget:
        check_budget(op, name, nbytes, shape, dtype)
    try:
        return np.empty(shape, dtype=dtype)
    except (MemoryError, ValueError) as exc:
        raise OvpoolValueError(
            f"{op}: cannot allocate output of shape {tuple(shape)}: {exc}"
        ) from None


def finish(result, result_dtype, out):
    """Cast back to the caller's dtype (float16, bfloat16) and fill ``out``."""
    if out is not None:
        if out is not result:
            with np.errstate(over="ignore"):
                out[...] = result
        return out
    if result.dtype != result_dtype:
        with np.errstate(over="ignore"):
            return result.astype(result_dtype)
    return result
