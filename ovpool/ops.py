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

import functools
import inspect
import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar, cast, overload

import numpy as np
import numpy.typing as npt

from . import _core, _docs, _threads
from ._core import ARGMAX, AVERAGE, LP, MAX
from ._isa import kernels as _kernels
from .errors import OvpoolError, OvpoolTypeError, OvpoolValueError
from .shapes import (
    ONNX,
    ROUNDING_CEIL_TORCH,
    ROUNDING_FLOOR,
    auto_pad_code,
    index_code,
    ints,
    lower,
)

Ints = int | Sequence[int]
"""An int for every spatial axis, or one int per axis."""

_F = TypeVar("_F", bound=Callable[..., Any])

# the shared parameter documentation (ovpool._docs) filled in
_doc = _docs.filler("the function's name")

__all__ = [
    "prepare",
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
# error messages
# --------------------------------------------------------------------------


def op_errors(op: str, per_axis: str | None = None) -> Callable[[_F], _F]:
    """Decorate a public op so that every :class:`~ovpool.OvpoolError` it raises
    starts with ``op:`` (the shape helpers it calls do not know which op they
    check for), and so that a per-axis argument with one entry more than ``x``
    has spatial dims, the mark of an unbatched input, says how ``x`` was read.

    The wrapper is compiled with the op's own signature: forwarding
    ``*args, **kwargs`` cost 0.4 us a call (5% of a max pool on 28x28), this
    0.15 us. Only the error path does any work.
    """

    def decorate(function: _F) -> _F:
        params, forward, namespace = [], [], {"_function": function, "_OvpoolError": OvpoolError}
        keyword_only = False
        for name, param in inspect.signature(function).parameters.items():
            if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
                raise TypeError(f"op_errors: unsupported parameter kind of {name}")
            if param.kind is param.KEYWORD_ONLY and not keyword_only:
                params.append("*")
                keyword_only = True
            default = ""
            if param.default is not param.empty:
                namespace[f"_default_{name}"] = param.default
                default = f"=_default_{name}"
            params.append(name + default)
            forward.append(f"{name}={name}" if keyword_only else name)
        source = (
            f"def {function.__name__}({', '.join(params)}):\n"
            f"    try:\n"
            f"        return _function({', '.join(forward)})\n"
            f"    except _OvpoolError as exc:\n"
            f"        _explain(exc, {op!r}, {per_axis!r}, locals())\n"
            f"        raise\n"
        )
        namespace["_explain"] = _explain
        exec(compile(source, f"<ovpool.ops.op_errors: {function.__name__}>", "exec"), namespace)
        wrapper = cast(Callable[..., Any], namespace[function.__name__])
        return cast(_F, functools.wraps(function)(wrapper))

    return decorate


# --------------------------------------------------------------------------
# front doors and prepared pools
# --------------------------------------------------------------------------

# the compiled per-call path: (door, x, attributes, num_threads, out, out_indices)
_call = _kernels.call

# public function -> (its FrontDoor, the names of its attributes)
_DOORS: dict[Callable[..., Any], tuple[Any, tuple[str, ...]]] = {}
_PER_CALL = ("x", "num_threads", "out", "out_indices")


def front_door(
    op: str,
    builder: Callable[..., Any],
    function: Callable[..., Any],
    per_axis: str | None = None,
    allow_int8: bool = False,
) -> Any:
    """The :class:`~ovpool._core.FrontDoor` of a public ``function``: its
    pools come from ``builder(shape, dtype, *attributes)``, the attributes
    being the function's parameters but x, num_threads, out and out_indices,
    in order. Its errors are explained as :func:`op_errors` explains them."""
    names = tuple(name for name in inspect.signature(function).parameters if name not in _PER_CALL)
    built = tuple(inspect.signature(builder).parameters)[2 : 2 + len(names)]
    if built != names:
        raise TypeError(f"front_door: {builder.__name__} takes {built}, {op} passes {names}")

    def explain(exc: OvpoolError, x: object, args: tuple) -> None:
        arguments = dict(zip(names, args))
        arguments["x"] = x
        _explain(exc, op, per_axis, arguments)

    door = _core.FrontDoor(op, builder, explain, allow_int8)
    _DOORS[function] = (door, names)
    return door


class _Shape:
    """Stands in for x in the messages of :func:`prepare` (only its shape counts)."""

    def __init__(self, shape: tuple) -> None:
        self.shape = shape


def prepare(
    op: Callable[..., Any],
    shape: Sequence[int],
    dtype: npt.DTypeLike,
    *args: Any,
    num_threads: int | None = None,
    **kwargs: Any,
) -> Any:
    """Prepare a pool for repeated calls on inputs of one shape and dtype.

    Everything a call of ``op`` decides from its arguments (their checks, the
    output shape, the kernel's plan, the memory it needs) is decided once
    here; calling the returned :class:`~ovpool.Pool` with an array then only
    checks the array and runs.

    Parameters
    ----------
    op : callable
        A pooling function of :mod:`ovpool` or :mod:`ovpool.ov_ops`, e.g.
        :func:`ovpool.max_pool` (not :func:`ovpool.max_unpool`).
    shape : sequence of int
        The input's shape ``(N, C, D1[, D2[, D3]])``.
    dtype : dtype-like
        The input's dtype.
    *args, **kwargs
        The arguments of ``op`` after ``x``, as ``op`` takes them (but
        ``out`` and ``out_indices``, which go to each call).
    num_threads : int, optional
        Threads of every call of the pool (default: as the functions choose
        them, per call).

    Returns
    -------
    Pool
        Call it as ``pool(x, out=None, out_indices=None)``; it returns what
        ``op`` returns. Its ``out_shape``, ``dtype``, ``index_dtype`` and
        ``plan`` describe it. One pool may be called from several threads
        at once.

    Raises
    ------
    OvpoolTypeError, OvpoolValueError
        As ``op`` raises them for these arguments, and when ``op`` is not a
        pooling function of ovpool.

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> pool = ovpool.prepare(ovpool.max_pool, (1, 1, 4, 4), np.float32, (2, 2), strides=2)
    >>> pool.out_shape
    (1, 1, 2, 2)
    >>> pool(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
    array([[[[ 5.,  7.],
             [13., 15.]]]], dtype=float32)
    """
    entry = _DOORS.get(op)
    if entry is None:
        raise OvpoolTypeError(
            f"prepare: op must be a pooling function of ovpool or ovpool.ov_ops, got {op!r}"
        )
    door, names = entry
    for name in ("out", "out_indices", "x"):
        if name in kwargs:
            raise OvpoolTypeError(
                f"prepare: {name} is an argument of each call of the pool, not of prepare"
            )
    try:
        bound = inspect.signature(op).bind(None, *args, **kwargs)
    except TypeError as exc:
        raise OvpoolTypeError(f"prepare: {door.op}: {exc}") from None
    bound.apply_defaults()
    values = tuple(bound.arguments[name] for name in names)
    try:
        if num_threads is not None:
            num_threads = _threads.check(num_threads, f"{door.op}: num_threads")
        pool = door.builder(shape, dtype, *values)
    except OvpoolError as exc:
        door.explain(exc, _Shape(tuple(shape) if isinstance(shape, (tuple, list)) else ()), values)
        raise
    pool._set_num_threads(num_threads)
    # what it was prepared from, for pickle: loaded, it is prepared again
    pool._set_source(
        functools.partial(prepare, op, shape, dtype, *args, num_threads=num_threads, **kwargs)
    )
    return pool


def _explain(exc: OvpoolError, op: str, per_axis: str | None, arguments: dict) -> None:
    message = str(exc)
    if not message.startswith(f"{op}: "):
        message = f"{op}: {message}"
    shape = getattr(arguments.get("x"), "shape", None)
    if isinstance(shape, tuple) and per_axis is not None and per_axis in message:
        try:
            given = len(arguments[per_axis])
        except TypeError:
            given = None
        n_spatial = len(shape) - 2
        if 1 <= n_spatial <= 2 and given == n_spatial + 1:
            axes = ("L",) if n_spatial == 1 else ("H", "W")
            message += (
                f". x of shape {shape} is read as (N, C, {', '.join(axes)}), a {n_spatial}D "
                f"pool, while {per_axis} has {given} entries: if x is one unbatched sample "
                f"of {given} spatial dims, add a batch axis with x[None]"
            )
    elif isinstance(shape, tuple) and len(shape) == 2 and "must have shape" in message:
        message += (
            ". x of shape (H, W) or (C, L) has no batch or channel axis: add them with "
            "x[None, None] (one plane) or x[None] (one sample of C channels)"
        )
    exc.args = (message,) + exc.args[1:]


# --------------------------------------------------------------------------
# argument helpers
# --------------------------------------------------------------------------


def _bool(value: object, name: str, op: str) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise OvpoolTypeError(f"{op}: {name} must be a bool (or 0/1), got {value!r}")


def check_num_threads(num_threads: object, op: str) -> None:
    """Refuse a bad ``num_threads`` at the entry point, before any other
    argument's error and whatever the input holds."""
    if num_threads is not None:
        _threads.check(num_threads, f"{op}: num_threads")


def _p_value(p: object, op: str) -> float:
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, numbers.Real):
        raise OvpoolTypeError(f"{op}: p must be a number, got {p!r}")
    return float(p)


def index_dtype_of(index_dtype: npt.DTypeLike, op: str, name: str = "index_dtype") -> np.dtype:
    """int32 / int64 from a numpy dtype or OpenVINO's ``"i32"`` / ``"i64"``.

    Strings are OpenVINO's element type names or numpy's dtype names only:
    numpy reads ``"i8"`` as 8-byte int64, where OpenVINO's ``"i8"`` is int8.
    """
    names = {"i32": np.int32, "i64": np.int64, "int32": np.int32, "int64": np.int64}
    dtype: np.dtype | None
    try:
        if isinstance(index_dtype, str):
            dtype = np.dtype(names[index_dtype.strip().lower()])
        else:
            dtype = np.dtype(index_dtype)
    except (TypeError, KeyError):
        dtype = None
    if dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise OvpoolTypeError(f"{op}: {name} must be int32 or int64, got {index_dtype!r}")
    return dtype


def onnx_lowering(
    op: str,
    dims: Sequence[int | None],
    code: int,
    family: int,
    kernel_shape: Ints,
    strides: Ints | None,
    pads: Ints | None,
    dilations: Ints | None,
    auto_pad: str,
    ceil_mode: bool | int,
    *,
    count_include_pad: bool = False,
    storage_order: int = 0,
    p: float = 2.0,
) -> Any:
    """An ONNX fixed-window pool's attributes, as the numpy API and the IR
    runtime take them, lowered by the kernel core on an input of shape
    ``dims`` (None for an unknown dim): its ``out_shape`` and its plan
    (:func:`ovpool.shapes.lower`)."""
    n = len(dims) - 2
    return lower(
        ONNX,
        family,
        code,
        tuple(dims),
        kernel=ints(kernel_shape, "kernel_shape", n, required=True),
        strides=ints(strides, "strides", n),
        pads=ints(pads, "pads", 2 * n),
        dilations=ints(dilations, "dilations", n),
        auto_pad=auto_pad_code(auto_pad),
        rounding=ROUNDING_CEIL_TORCH if _bool(ceil_mode, "ceil_mode", op) else ROUNDING_FLOOR,
        count_pads=count_include_pad,
        storage_order=storage_order,
        p=p,
    )


# --------------------------------------------------------------------------
# adaptive pools (OpenVINO AdaptiveAvgPool-8 / AdaptiveMaxPool-8, torch)
# --------------------------------------------------------------------------


@_doc
def adaptive_avg_pool(
    x: npt.ArrayLike,
    output_size: Ints,
    *,
    num_threads: int | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Adaptive average pooling (OpenVINO AdaptiveAvgPool-8, torch ``adaptive_avg_poolNd``).

    Output bin ``i`` of a spatial axis averages the inputs
    ``[floor(i * In / Out), ceil((i + 1) * In / Out))``, computed in integers
    (exact for any size, where OpenVINO's CPU plugin rounds the bin borders
    in float32). An output larger than the input is allowed.

    Parameters
    ----------
    %(x)s
    %(output_size)s
    %(num_threads)s
    %(out)s

    Returns
    -------
    ndarray of shape ``(N, C, *output_size)``
        The averages, in the dtype of ``x``.

    %(raises)s

    See Also
    --------
    adaptive_max_pool : The maxima of the same bins, with their indices.
    global_avg_pool : The mean of each whole plane.

    Notes
    -----
    An input of shape ``(C, H, W)`` is read as ``(N, C, L)``, a 1D pool:
    add the batch axis with ``x[None]``.

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> x = np.arange(7, dtype=np.float32).reshape(1, 1, 7)
    >>> ovpool.adaptive_avg_pool(x, 3)  # bins [0, 3), [2, 5), [4, 7)
    array([[[1., 3., 5.]]], dtype=float32)
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> ovpool.adaptive_avg_pool(x, (2, 2))
    array([[[[ 2.5,  4.5],
             [10.5, 12.5]]]], dtype=float32)
    """
    return _call(_ADAPTIVE_AVG_POOL, x, (output_size,), num_threads, out, None)


def _build_adaptive_avg_pool(shape, dtype, output_size):
    op = "adaptive_avg_pool"
    return _adaptive(op, _core.input_of(shape, dtype, op), output_size, AVERAGE)


_ADAPTIVE_AVG_POOL = front_door(
    "adaptive_avg_pool", _build_adaptive_avg_pool, adaptive_avg_pool, "output_size"
)


def adaptive_lowering(
    dims: Sequence[int | None],
    code: int,
    family: int,
    output_size: Ints | None,
    *,
    index_dtype: Any = None,
    p: float = 2.0,
    global_pool: bool = False,
) -> Any:
    """An adaptive pool lowered by the kernel core on an input of shape
    ``dims``; a global one (one bin per axis) with ``global_pool``, whose
    ``output_size`` is then None."""
    n = len(dims) - 2
    return lower(
        ONNX,
        family,
        code,
        tuple(dims),
        adaptive=True,
        global_pool=global_pool,
        output_size=None if global_pool else ints(output_size, "output_size", n, required=True),
        index_type=index_code(index_dtype),
        p=p,
    )


def _adaptive(
    op: str,
    inp: _core.Input,
    output_size: Ints | None,
    family: int,
    *,
    index_dtype: Any = None,
    p: float = 2.0,
    global_pool: bool = False,
) -> Any:
    """The pool of an adaptive pool of ``inp`` (also of the global pools:
    ``global_pool``, one bin per axis)."""
    lowering = adaptive_lowering(
        inp.shape,
        inp.code,
        family,
        output_size,
        index_dtype=index_dtype,
        p=p,
        global_pool=global_pool,
    )
    return _core.pool(op, inp, lowering, index_dtype)


@_doc
def adaptive_max_pool(
    x: npt.ArrayLike,
    output_size: Ints,
    *,
    index_dtype: npt.DTypeLike = np.int64,
    num_threads: int | None = None,
    out: np.ndarray | None = None,
    out_indices: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Adaptive max pooling (OpenVINO AdaptiveMaxPool-8, torch ``adaptive_max_poolNd``).

    The bins are those of :func:`adaptive_avg_pool`. Each output is the
    first maximum of its bin in row-major order; a bin holding a NaN gives
    NaN, and its index is the last NaN's (PyTorch's rule).

    Parameters
    ----------
    %(x_int8)s
    %(output_size)s
    index_dtype : {numpy.int64, numpy.int32, "i64", "i32"}
        dtype of the indices.
    %(num_threads)s
    %(out)s
    out_indices : ndarray, optional
        The same for the indices (their shape, int64 or ``index_dtype``).

    Returns
    -------
    values : ndarray of shape ``(N, C, *output_size)``
        The maxima, in the dtype of ``x``.
    indices : ndarray of shape ``(N, C, *output_size)``
        Flat row-major positions within each ``(n, c)`` plane, in
        ``[0, D1 * D2 * D3)``, as ``index_dtype``.

    %(raises)s
        int32 indices that could not address every element of a plane are
        refused.

    See Also
    --------
    adaptive_avg_pool : The averages of the same bins.
    max_pool : Fixed windows, indices over the whole tensor.

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> x = np.array([[[3, 1, 4, 1, 5, 9, 2]]], dtype=np.float32)
    >>> values, indices = ovpool.adaptive_max_pool(x, 3)
    >>> values
    array([[[4., 5., 9.]]], dtype=float32)
    >>> indices
    array([[[2, 4, 5]]])
    """
    return _call(_ADAPTIVE_MAX_POOL, x, (output_size, index_dtype), num_threads, out, out_indices)


def _build_adaptive_max_pool(shape, dtype, output_size, index_dtype, index_name="index_dtype"):
    op = "adaptive_max_pool"
    index_dtype = index_dtype_of(index_dtype, op, index_name)
    inp = _core.input_of(shape, dtype, op, allow_int8=True)
    return _adaptive(op, inp, output_size, ARGMAX, index_dtype=index_dtype)


_ADAPTIVE_MAX_POOL = front_door(
    "adaptive_max_pool", _build_adaptive_max_pool, adaptive_max_pool, "output_size", allow_int8=True
)


# --------------------------------------------------------------------------
# ONNX fixed-window pools
# --------------------------------------------------------------------------


@_doc
def avg_pool(
    x: npt.ArrayLike,
    kernel_shape: Ints,
    *,
    strides: Ints | None = None,
    pads: Ints | None = None,
    dilations: Ints | None = None,
    auto_pad: str = "NOTSET",
    ceil_mode: bool | int = False,
    count_include_pad: bool | int = False,
    num_threads: int | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Average pooling (ONNX AveragePool-22, covering every older version).

    Parameters
    ----------
    %(x)s
    %(onnx_window)s
    count_include_pad : bool or {0, 1}
        Divide by the taps inside the input and the declared pads, rather
        than inside the input only. Positions added by ceil rounding are
        never counted (PyTorch, ONNX Runtime).
    %(num_threads)s
    %(out)s

    Returns
    -------
    ndarray of shape ``(N, C, *out_spatial)``
        The averages, in the dtype of ``x``. ``out_spatial`` follows ONNX:
        ``floor((in + pads - dilated_kernel) / stride) + 1`` per dim
        (``ceil`` with ``ceil_mode``).

    %(raises)s
        Without ``count_include_pad``, a window that holds no input element
        is refused (the references disagree on it).

    See Also
    --------
    ovpool.ov_ops.avg_pool : OpenVINO's AvgPool, with its own attributes.
    lp_pool : The Lp norm of the same windows.

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> ovpool.avg_pool(x, (2, 2), strides=(2, 2))
    array([[[[ 3.5,  5.5],
             [11.5, 13.5]]]], dtype=float32)
    >>> ovpool.avg_pool(x, (3, 3), strides=(2, 2), ceil_mode=True)
    array([[[[ 6. ,  7.5],
             [12. , 13.5]]]], dtype=float32)
    """
    return _call(
        _AVG_POOL,
        x,
        (kernel_shape, strides, pads, dilations, auto_pad, ceil_mode, count_include_pad),
        num_threads,
        out,
        None,
    )


def _build_avg_pool(
    shape, dtype, kernel_shape, strides, pads, dilations, auto_pad, ceil_mode, count_include_pad
):
    op = "avg_pool"
    inp = _core.input_of(shape, dtype, op)
    lowering = onnx_lowering(
        op,
        inp.shape,
        inp.code,
        AVERAGE,
        kernel_shape,
        strides,
        pads,
        dilations,
        auto_pad,
        ceil_mode,
        count_include_pad=_bool(count_include_pad, "count_include_pad", op),
    )
    return _core.pool(op, inp, lowering)


_AVG_POOL = front_door("avg_pool", _build_avg_pool, avg_pool, "kernel_shape")


@overload
def max_pool(
    x: npt.ArrayLike,
    kernel_shape: Ints,
    *,
    strides: Ints | None = ...,
    pads: Ints | None = ...,
    dilations: Ints | None = ...,
    auto_pad: str = ...,
    ceil_mode: bool | int = ...,
    storage_order: int = ...,
    return_indices: Literal[False] = ...,
    num_threads: int | None = ...,
    out: np.ndarray | None = ...,
    out_indices: np.ndarray | None = ...,
) -> np.ndarray: ...
@overload
def max_pool(
    x: npt.ArrayLike,
    kernel_shape: Ints,
    *,
    strides: Ints | None = ...,
    pads: Ints | None = ...,
    dilations: Ints | None = ...,
    auto_pad: str = ...,
    ceil_mode: bool | int = ...,
    storage_order: int = ...,
    return_indices: Literal[True],
    num_threads: int | None = ...,
    out: np.ndarray | None = ...,
    out_indices: np.ndarray | None = ...,
) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def max_pool(
    x: npt.ArrayLike,
    kernel_shape: Ints,
    *,
    strides: Ints | None = ...,
    pads: Ints | None = ...,
    dilations: Ints | None = ...,
    auto_pad: str = ...,
    ceil_mode: bool | int = ...,
    storage_order: int = ...,
    return_indices: bool = ...,
    num_threads: int | None = ...,
    out: np.ndarray | None = ...,
    out_indices: np.ndarray | None = ...,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]: ...


@_doc
def max_pool(
    x: npt.ArrayLike,
    kernel_shape: Ints,
    *,
    strides: Ints | None = None,
    pads: Ints | None = None,
    dilations: Ints | None = None,
    auto_pad: str = "NOTSET",
    ceil_mode: bool | int = False,
    storage_order: int = 0,
    return_indices: bool = False,
    num_threads: int | None = None,
    out: np.ndarray | None = None,
    out_indices: np.ndarray | None = None,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Max pooling (ONNX MaxPool-22, covering every older version).

    Each output is the first maximum of its window in row-major order; a
    window holding a NaN gives NaN, and its index is the last NaN's
    (PyTorch's rule).

    Parameters
    ----------
    %(x_int8)s
    %(onnx_window)s
    storage_order : {0, 1}
        0: indices row-major within the spatial dims; 1: column-major
        (``c*H*W + h + w*H`` in 2D).
    return_indices : bool
        Also return the indices (ONNX MaxPool's second output).
    %(num_threads)s
    %(out)s
    out_indices : ndarray, optional
        The same for the indices (their shape, int64 or ``index_dtype``).

    Returns
    -------
    values : ndarray of shape ``(N, C, *out_spatial)``
        The maxima, in the dtype of ``x``; the only result unless
        ``return_indices``.
    indices : ndarray of shape ``(N, C, *out_spatial)``, int64
        With ``return_indices``: flat positions over the whole
        ``(N, C, ...)`` input, padding not counted.

    %(raises)s
        A window that holds no input element is refused (the references
        disagree on it; :func:`ovpool.ov_ops.max_pool` follows OpenVINO).

    See Also
    --------
    ovpool.ov_ops.max_pool : OpenVINO's MaxPool, indices counted from an axis.
    max_unpool : Scatter values back to these indices.

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> x = np.arange(1, 26, dtype=np.float32).reshape(1, 1, 5, 5)
    >>> values, indices = ovpool.max_pool(x, (2, 2), strides=(2, 2), return_indices=True)
    >>> values
    array([[[[ 7.,  9.],
             [17., 19.]]]], dtype=float32)
    >>> indices
    array([[[[ 6,  8],
             [16, 18]]]])
    >>> ovpool.max_pool(x, (2, 2), strides=(2, 2), storage_order=1, return_indices=True)[1]
    array([[[[ 6, 16],
             [ 8, 18]]]])
    """
    return _call(
        _MAX_POOL,
        x,
        (
            kernel_shape,
            strides,
            pads,
            dilations,
            auto_pad,
            ceil_mode,
            storage_order,
            return_indices,
        ),
        num_threads,
        out,
        out_indices,
    )


def _build_max_pool(
    shape,
    dtype,
    kernel_shape,
    strides,
    pads,
    dilations,
    auto_pad,
    ceil_mode,
    storage_order,
    return_indices,
):
    op = "max_pool"
    inp = _core.input_of(shape, dtype, op, allow_int8=True)
    if (
        isinstance(storage_order, (bool, np.bool_))
        or not isinstance(storage_order, numbers.Integral)
        or storage_order not in (0, 1)
    ):
        raise OvpoolValueError(f"{op}: storage_order must be 0 or 1, got {storage_order!r}")
    return_indices = _bool(return_indices, "return_indices", op)
    lowering = onnx_lowering(
        op,
        inp.shape,
        inp.code,
        ARGMAX if return_indices else MAX,
        kernel_shape,
        strides,
        pads,
        dilations,
        auto_pad,
        ceil_mode,
        storage_order=int(storage_order),
    )
    return _core.pool(op, inp, lowering, np.int64 if return_indices else None)


_MAX_POOL = front_door("max_pool", _build_max_pool, max_pool, "kernel_shape", allow_int8=True)


@_doc
def lp_pool(
    x: npt.ArrayLike,
    kernel_shape: Ints,
    *,
    p: float = 2,
    strides: Ints | None = None,
    pads: Ints | None = None,
    dilations: Ints | None = None,
    auto_pad: str = "NOTSET",
    ceil_mode: bool | int = False,
    num_threads: int | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Lp pooling (ONNX LpPool-22): ``(sum over the window of |x|**p) ** (1/p)``.

    Padding contributes zeros.

    Parameters
    ----------
    %(x)s
    %(onnx_window)s
    %(p)s
    %(num_threads)s
    %(out)s

    Returns
    -------
    ndarray of shape ``(N, C, *out_spatial)``
        The norms, in the dtype of ``x`` (``out_spatial`` as in
        :func:`avg_pool`).

    %(raises)s

    See Also
    --------
    global_lp_pool : The norm of each whole plane.

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> x = np.array([[[3, 4, 6, 8]]], dtype=np.float32)
    >>> ovpool.lp_pool(x, 2, strides=2)
    array([[[ 5., 10.]]], dtype=float32)
    >>> ovpool.lp_pool(x, 2, strides=2, p=1)
    array([[[ 7., 14.]]], dtype=float32)
    """
    return _call(
        _LP_POOL,
        x,
        (kernel_shape, p, strides, pads, dilations, auto_pad, ceil_mode),
        num_threads,
        out,
        None,
    )


def _build_lp_pool(shape, dtype, kernel_shape, p, strides, pads, dilations, auto_pad, ceil_mode):
    op = "lp_pool"
    p = _p_value(p, op)
    inp = _core.input_of(shape, dtype, op)
    return _core.pool(
        op,
        inp,
        onnx_lowering(
            op,
            inp.shape,
            inp.code,
            LP,
            kernel_shape,
            strides,
            pads,
            dilations,
            auto_pad,
            ceil_mode,
            p=p,
        ),
    )


_LP_POOL = front_door("lp_pool", _build_lp_pool, lp_pool, "kernel_shape")


# --------------------------------------------------------------------------
# global pools
# --------------------------------------------------------------------------


@_doc
def global_avg_pool(
    x: npt.ArrayLike, *, num_threads: int | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    """The mean of each ``(n, c)`` plane (ONNX GlobalAveragePool).

    Parameters
    ----------
    %(x)s
    %(num_threads)s
    %(out)s

    Returns
    -------
    ndarray of shape (N, C, 1[, 1[, 1]])
        One mean per plane, in the dtype of ``x``, with every spatial dim
        kept as 1.

    %(raises)s
        An empty spatial dim is refused.

    See Also
    --------
    adaptive_avg_pool : The same with ``output_size=1``.

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> x = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
    >>> y = ovpool.global_avg_pool(x)
    >>> y.shape
    (1, 2, 1, 1)
    >>> y.ravel()
    array([1.5, 5.5], dtype=float32)
    """
    return _call(_GLOBAL_AVG_POOL, x, (), num_threads, out, None)


@_doc
def global_max_pool(
    x: npt.ArrayLike, *, num_threads: int | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    """The maximum of each ``(n, c)`` plane (ONNX GlobalMaxPool); NaN propagates.

    Parameters
    ----------
    %(x_int8)s
    %(num_threads)s
    %(out)s

    Returns
    -------
    ndarray of shape (N, C, 1[, 1[, 1]])
        One maximum per plane, in the dtype of ``x``.

    %(raises)s
        An empty spatial dim is refused.

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> x = np.array([[[1, 7, 3], [4, np.nan, 6]]], dtype=np.float32)
    >>> ovpool.global_max_pool(x).ravel()
    array([ 7., nan], dtype=float32)
    """
    return _call(_GLOBAL_MAX_POOL, x, (), num_threads, out, None)


@_doc
def global_lp_pool(
    x: npt.ArrayLike, *, p: float = 2, num_threads: int | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    """The Lp norm of each ``(n, c)`` plane (ONNX GlobalLpPool): ``(sum of |x|**p) ** (1/p)``.

    Parameters
    ----------
    %(x)s
    %(p)s
    %(num_threads)s
    %(out)s

    Returns
    -------
    ndarray of shape (N, C, 1[, 1[, 1]])
        One norm per plane, in the dtype of ``x``.

    %(raises)s
        An empty spatial dim is refused.

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> x = np.array([[[3, 4], [6, -8]]], dtype=np.float32)
    >>> ovpool.global_lp_pool(x).ravel()
    array([ 5., 10.], dtype=float32)
    """
    return _call(_GLOBAL_LP_POOL, x, (p,), num_threads, out, None)


def _build_global_pool(op, family, shape, dtype, p=2.0):
    inp = _core.input_of(shape, dtype, op, allow_int8=family == MAX)
    return _adaptive(op, inp, None, family, p=p, global_pool=True)


def _build_global_avg_pool(shape, dtype):
    return _build_global_pool("global_avg_pool", AVERAGE, shape, dtype)


def _build_global_max_pool(shape, dtype):
    return _build_global_pool("global_max_pool", MAX, shape, dtype)


def _build_global_lp_pool(shape, dtype, p):
    return _build_global_pool("global_lp_pool", LP, shape, dtype, _p_value(p, "global_lp_pool"))


_GLOBAL_AVG_POOL = front_door("global_avg_pool", _build_global_avg_pool, global_avg_pool)
_GLOBAL_MAX_POOL = front_door(
    "global_max_pool", _build_global_max_pool, global_max_pool, allow_int8=True
)
_GLOBAL_LP_POOL = front_door("global_lp_pool", _build_global_lp_pool, global_lp_pool)


# --------------------------------------------------------------------------
# MaxUnpool
# --------------------------------------------------------------------------


@op_errors("max_unpool", "kernel_shape")
@_doc
def max_unpool(
    x: npt.ArrayLike,
    indices: npt.ArrayLike,
    kernel_shape: Ints,
    *,
    strides: Ints | None = None,
    pads: Ints | None = None,
    output_shape: Sequence[int] | None = None,
    indices_relative_to: Literal["default_shape", "output_shape"] = "default_shape",
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Scatter ``x`` into zeros at the flat ``indices`` of a max pool (ONNX MaxUnpool-22).

    Parameters
    ----------
    %(x_int8)s
    indices : array_like of int, of the shape of ``x``
        Flat positions over the whole ``(N, C, ...)`` output, as
        :func:`max_pool` returns them (``storage_order=0``).
    kernel_shape : int or sequence of int
        The max pool's window size per spatial dim.
    strides : int or sequence of int, optional
        The max pool's strides, default 1.
    pads : sequence of int, optional
        The max pool's pads, ``[x1_begin, ..., x1_end, ...]``, default 0.
    output_shape : sequence of int, optional
        The full output shape ``(N, C, ...)``, at least the *default shape*,
        per spatial dim ``(in - 1) * stride + kernel - pad_begin - pad_end``.
    indices_relative_to : {"default_shape", "output_shape"}
        With an ``output_shape`` larger than the default: ``"default_shape"``
        (the ONNX reference and its conformance case) reads the indices as
        positions in the default shape and places that block at the origin;
        ``"output_shape"`` (ONNX Runtime, PyTorch) reads them as positions in
        ``output_shape``, which inverts a max pool of an odd-sized input.
    %(out)s

    Returns
    -------
    ndarray of shape output_shape (or the default shape)
        Zeros, except ``x`` at its indices (the last one in flat order wins
        a duplicate), in the dtype of ``x``.

    %(raises)s
        An index outside its tensor is refused.

    See Also
    --------
    max_pool : Its ``return_indices=True`` gives the indices.

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> values, indices = ovpool.max_pool(x, (2, 2), strides=(2, 2), return_indices=True)
    >>> ovpool.max_unpool(values, indices, (2, 2), strides=(2, 2))
    array([[[[ 0.,  0.,  0.,  0.],
             [ 0.,  6.,  0.,  8.],
             [ 0.,  0.,  0.,  0.],
             [ 0., 14.,  0., 16.]]]], dtype=float32)
    """
    op = "max_unpool"
    array = _core.coerce(x, op, allow_int8=True)
    inp = _core.input_of(array.shape, array.dtype, op, allow_int8=True)
    data = array.astype(np.float32) if inp.half else array  # 16-bit floats scatter as float32
    n = inp.n_spatial
    try:
        index_array = np.asarray(indices)
    except (TypeError, ValueError) as exc:
        raise OvpoolTypeError(f"{op}: indices is not an integer array: {exc}") from None
    if index_array.dtype.kind not in "iu":
        raise OvpoolTypeError(f"{op}: indices must be integers, got dtype {index_array.dtype}")
    if index_array.shape != inp.lead + inp.spatial:
        raise OvpoolValueError(
            f"{op}: indices must have the shape of x {inp.lead + inp.spatial}, "
            f"got {index_array.shape}"
        )
    if not isinstance(indices_relative_to, str) or indices_relative_to not in (
        "default_shape",
        "output_shape",
    ):
        raise OvpoolValueError(
            f"{op}: indices_relative_to must be 'default_shape' or 'output_shape', "
            f"got {indices_relative_to!r}"
        )
    try:
        *_, default_shape, full_shape = _kernels.lower_unpool(
            inp.shape,
            ints(kernel_shape, "kernel_shape", n, required=True),
            ints(strides, "strides", n),
            ints(pads, "pads", 2 * n),
            ints(output_shape, "output_shape", n + 2),
        )
    except ValueError as exc:
        raise OvpoolValueError(f"{op}: {exc}") from None
    # the output's bytes before any work that grows with them
    _core.check_output_budget(op, inp, full_shape[2:], out)
    index_shape = default_shape if indices_relative_to == "default_shape" else full_shape
    index_space = math.prod(index_shape)  # (Python ints: np.prod wraps past 2**63)
    # (uint64 indices above 2**63 wrap to negative here and are caught below)
    flat_indices = np.ascontiguousarray(index_array, dtype=np.int64).reshape(-1)
    if flat_indices.size:
        bad = np.flatnonzero((flat_indices < 0) | (flat_indices >= index_space))
        if bad.size:
            position = np.unravel_index(bad[0], index_array.shape)
            raise OvpoolValueError(
                f"{op}: indices{list(map(int, position))} = {int(flat_indices[bad[0]])} is "
                f"outside a tensor of shape {tuple(index_shape)} (valid range [0, {index_space}))"
            )
    if index_shape != full_shape:
        # move positions of the default-shape block to the same coordinates in the output
        flat_indices = np.ravel_multi_index(
            np.unravel_index(flat_indices, index_shape), full_shape
        ).astype(np.int64, copy=False)
    # out is zeroed before the scatter reads the indices: it must not share them
    result = _core.allocate(
        full_shape, data.dtype, out, op, "out", data, inp.dtype, (("indices", flat_indices),)
    )
    flat = result.reshape(-1)
    flat[...] = 0
    bad = _kernels.max_unpool(data.reshape(-1), flat_indices, flat)
    if bad >= 0:  # unreachable after the check above; the kernel never writes out of range
        raise OvpoolValueError(f"{op}: index {int(flat_indices[bad])} is out of range")
    return _core.finish(result, inp.dtype, out)
