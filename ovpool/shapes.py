"""Output shapes, padding rules and window tables of every pool ovpool runs.

This pure-Python module is the one place that knows the arithmetic of
pooling windows. The numpy API (:mod:`ovpool.ops`, :mod:`ovpool.ov_ops`), the
IR runtime and the OpenVINO extension all call it, so ONNX's and OpenVINO's
rules are written down once.

Conventions (per spatial axis):

* ``n_in`` input size, ``kernel`` k, ``stride`` s, ``dilation`` d,
  ``pad_begin``/``pad_end`` the padding on each side.
* The *effective kernel* is ``(k - 1) * d + 1``.
* Output ``o`` covers the padded positions ``o*s - pad_begin + t*d`` for
  ``t < k``; taps outside ``[0, n_in)`` are padding.

Rounding of the output size (``rounding``):

* ``"floor"``: ``(n_in + pads - ek) // s + 1``.
* ``"ceil"``: ``ceil((n_in + pads - ek) / s) + 1``. This is OpenVINO's ``ceil``
  (AvgPool-1/14/16, MaxPool-1/8/14): it keeps a last window that starts in the
  right padding.
* ``"ceil_torch"``: the same, but a last window that would start in the right
  padding is dropped. This is PyTorch's ``ceil_mode``, ONNX's ``ceil_mode=1``
  and OpenVINO's ``ceil_torch``. Worked example: n_in=5, k=2, s=2, pads 1+1:
  ceil((5+2-2)/2)+1 = 4 windows starting at -1, 1, 3, 5; position 5 is the
  right padding, so ``ceil_torch`` keeps 3 and ``ceil`` keeps 4.

``auto_pad`` (normalised to lower case; ONNX ``NOTSET`` = ``"explicit"``):

* ``"same_upper"`` / ``"same_lower"``: output ``ceil(n_in / s)``, total pad
  ``max((out - 1)*s + ek - n_in, 0)``, the odd element at the end (upper) or
  at the beginning (lower). Rounding does not apply.
* ``"valid"``: no padding; the rounding rule applies with zero pads (as ONNX
  Runtime and OpenVINO do).
* ``"explicit"``: the given pads.
"""

from __future__ import annotations

import functools
import numbers
import operator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .errors import OvpoolTypeError, OvpoolValueError

__all__ = [
    "AxisWindows",
    "fixed_axis_windows",
    "adaptive_axis_windows",
    "AUTO_PADS",
    "ROUNDINGS",
    "PoolGeometry",
    "adaptive_windows",
    "adaptive_output_spatial",
    "axis_output_size",
    "normalize_auto_pad",
    "normalize_int_list",
    "pool_geometry",
    "pool_windows",
    "split_onnx_pads",
    "max_unpool_output_spatial",
    "MAX_ELEMENTS",
]

AUTO_PADS = ("explicit", "same_upper", "same_lower", "valid")
ROUNDINGS = ("floor", "ceil", "ceil_torch")

# Upper bound on the number of elements of any array ovpool agrees to create
# (2**40 elements, already 4 TiB of float32): guards the window tables and the
# integer arithmetic against absurd sizes before anything is allocated.
MAX_ELEMENTS = 1 << 40

_AUTO_PAD_ALIASES = {
    "notset": "explicit",
    "explicit": "explicit",
    "same_upper": "same_upper",
    "same_lower": "same_lower",
    "valid": "valid",
}


# --------------------------------------------------------------------------
# Argument normalisation
# --------------------------------------------------------------------------

def _as_int(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise OvpoolTypeError(f"{name} must contain integers, got {value!r}")
    return operator.index(value)


def normalize_int_list(value, name, n_spatial, *, minimum, default=None, length=None):
    """Return ``value`` as a tuple of ``length`` Python ints (default ``n_spatial``).

    ``value`` may be a sequence or a single int (repeated). ``None`` gives
    ``default`` repeated. Every entry must be ``>= minimum``.
    """
    length = n_spatial if length is None else length
    if value is None:
        if default is None:
            raise OvpoolValueError(f"{name} is required")
        return (default,) * length
    if isinstance(value, np.ndarray):
        if value.ndim > 1:
            raise OvpoolValueError(f"{name} must be an int or a 1-D sequence, got shape {value.shape}")
        value = value.tolist()
    if isinstance(value, (str, bytes)):
        raise OvpoolTypeError(f"{name} must be an int or a sequence of ints, got {value!r}")
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        values = (operator.index(value),) * length
    else:
        try:
            items = list(value)
        except TypeError:
            raise OvpoolTypeError(
                f"{name} must be an int or a sequence of ints, got {value!r}") from None
        values = tuple(_as_int(v, name) for v in items)
        if len(values) != length:
            raise OvpoolValueError(
                f"{name} must have {length} entries for {n_spatial} spatial dims, "
                f"got {len(values)}: {list(values)}")
    for v in values:
        if v < minimum:
            raise OvpoolValueError(f"{name} must be >= {minimum}, got {list(values)}")
        if v > MAX_ELEMENTS:
            raise OvpoolValueError(f"{name} is absurdly large: {list(values)}")
    return values


def normalize_auto_pad(auto_pad, name="auto_pad"):
    """Map ONNX (``NOTSET``, ``SAME_UPPER``, ...) and OpenVINO (``explicit``,
    ``same_upper``, ...) spellings onto :data:`AUTO_PADS`."""
    if isinstance(auto_pad, bytes):
        auto_pad = auto_pad.decode("ascii", "replace")
    if not isinstance(auto_pad, str):
        raise OvpoolTypeError(f"{name} must be a string, got {auto_pad!r}")
    key = auto_pad.strip().lower()
    if key not in _AUTO_PAD_ALIASES:
        raise OvpoolValueError(
            f"{name} must be one of NOTSET/explicit, SAME_UPPER, SAME_LOWER, VALID; got {auto_pad!r}")
    return _AUTO_PAD_ALIASES[key]


def normalize_rounding(rounding, name="rounding_type"):
    if not isinstance(rounding, str) or rounding.lower() not in ROUNDINGS:
        raise OvpoolValueError(f"{name} must be one of {', '.join(ROUNDINGS)}; got {rounding!r}")
    return rounding.lower()


def split_onnx_pads(pads, n_spatial, name="pads"):
    """ONNX ``[x1_begin, x2_begin, ..., x1_end, x2_end, ...]`` -> (begins, ends)."""
    values = normalize_int_list(pads, name, n_spatial, minimum=0, default=0,
                                length=2 * n_spatial)
    return values[:n_spatial], values[n_spatial:]


# --------------------------------------------------------------------------
# Fixed-window pools (AveragePool, MaxPool, LpPool; AvgPool, MaxPool)
# --------------------------------------------------------------------------

def axis_output_size(n_in, kernel, stride, dilation, pad_begin, pad_end,
                     auto_pad="explicit", rounding="floor"):
    """Output size and the pads actually used along one axis.

    Returns ``(n_out, pad_begin, pad_end)``; ``n_in=None`` (a dynamic
    dimension) gives ``(None, pad_begin, pad_end)`` for explicit and valid
    padding and ``(None, None, None)`` for same_*. ``n_out`` may be <= 0: the
    caller decides whether that is an error.
    """
    effective = (kernel - 1) * dilation + 1
    if auto_pad in ("same_upper", "same_lower"):
        if n_in is None:
            return None, None, None
        n_out = -(-n_in // stride)
        total = max((n_out - 1) * stride + effective - n_in, 0)
        small, large = total // 2, total - total // 2
        if auto_pad == "same_upper":
            return n_out, small, large
        return n_out, large, small
    if auto_pad == "valid":
        pad_begin = pad_end = 0
    if n_in is None:
        return None, pad_begin, pad_end
    span = n_in + pad_begin + pad_end - effective
    if span < 0:
        return 0, pad_begin, pad_end
    if rounding == "floor":
        n_out = span // stride + 1
    else:
        n_out = -(-span // stride) + 1
        if rounding == "ceil_torch" and (n_out - 1) * stride >= n_in + pad_begin:
            n_out -= 1
    return n_out, pad_begin, pad_end


@dataclass(frozen=True)
class PoolGeometry:
    """The resolved geometry of one fixed-window pool call (spatial axes only)."""

    in_spatial: tuple
    out_spatial: tuple
    kernel: tuple
    strides: tuple
    dilations: tuple
    pads_begin: tuple
    pads_end: tuple

    @property
    def n_spatial(self):
        return len(self.in_spatial)

    def has_empty_window(self):
        """True if some output window contains no input element."""
        for axis in range(self.n_spatial):
            table = pool_windows(self.in_spatial[axis], self.out_spatial[axis],
                                 self.kernel[axis], self.strides[axis],
                                 self.dilations[axis], self.pads_begin[axis],
                                 self.pads_end[axis], False)
            if (table[:, 1] == 0).any():
                return True
        return False


def pool_geometry(in_spatial, kernel, strides, dilations, pads_begin, pads_end,
                  auto_pad="explicit", rounding="floor", *, op="pool"):
    """Resolve the output size and pads of a fixed-window pool.

    All arguments are already-normalised tuples of ints (see
    :func:`normalize_int_list`). Raises :class:`OvpoolValueError` when the
    window does not fit the (padded) input. An entry ``None`` of
    ``in_spatial`` (a dynamic dimension, for shape inference) gives ``None``
    in ``out_spatial`` (and ``None`` pads with ``same_*``); such a geometry is
    for shape inference only, not for window tables.
    """
    out, begins, ends = [], [], []
    for axis, n_in in enumerate(in_spatial):
        n_out, pb, pe = axis_output_size(n_in, kernel[axis], strides[axis], dilations[axis],
                                         pads_begin[axis], pads_end[axis], auto_pad, rounding)
        if n_out is not None and n_out < 1:
            effective = (kernel[axis] - 1) * dilations[axis] + 1
            raise OvpoolValueError(
                f"{op}: the window does not fit along spatial axis {axis}: input size {n_in} "
                f"with pads ({pb}, {pe}) is smaller than the dilated kernel {effective} "
                f"(kernel_shape={list(kernel)}, dilations={list(dilations)})")
        out.append(n_out)
        begins.append(pb)
        ends.append(pe)
    total = 1
    for n in out:
        total *= 1 if n is None else n
    if total > MAX_ELEMENTS:
        raise OvpoolValueError(f"{op}: output spatial shape {out} is absurdly large")
    return PoolGeometry(tuple(in_spatial), tuple(out), tuple(kernel), tuple(strides),
                        tuple(dilations), tuple(begins), tuple(ends))


@functools.lru_cache(maxsize=512)
def pool_windows(n_in, n_out, kernel, stride, dilation, pad_begin, pad_end,
                 count_include_pad):
    """Window table of one axis of a fixed-window pool (read-only int64 array).

    Row ``o`` is ``(first, n_taps, divisor)``: the first tap inside the input,
    the number of taps inside the input, and this axis's factor of the average
    divisor: ``n_taps``, or with ``count_include_pad`` the number of taps inside
    the *declared* padded range ``[-pad_begin, n_in + pad_end)`` (positions
    added by ceil rounding beyond ``pad_end`` never count, as in PyTorch, ONNX
    Runtime and the ONNX reference).

    Worked example: n_in=5, k=3, s=2, pads (1, 1): windows start at -1, 1, 3;
    rows (0, 2, 2|3), (1, 3, 3), (3, 2, 2|3).
    """
    o = np.arange(n_out, dtype=np.int64)
    start = o * stride - pad_begin
    # first tap index t >= 0 with start + t*d >= 0, last with start + t*d <= n_in - 1
    t_first = np.where(start < 0, (-start + dilation - 1) // dilation, 0)
    t_last = np.minimum(kernel - 1, (n_in - 1 - start) // dilation)
    n_taps = np.maximum(t_last - t_first + 1, 0)
    first = np.where(n_taps > 0, start + t_first * dilation, 0)
    if count_include_pad:
        t_last_padded = np.minimum(kernel - 1, (n_in + pad_end - 1 - start) // dilation)
        divisor = np.maximum(t_last_padded + 1, 0)
    else:
        divisor = n_taps
    table = np.ascontiguousarray(np.stack([first, n_taps, divisor], axis=1), dtype=np.int64)
    table.setflags(write=False)
    return table


class AxisWindows(NamedTuple):
    """The windows of one axis, as the kernels take them.

    ``table`` is the (n_out, 3) table of :func:`pool_windows`. When
    ``uniform``, output ``o`` also reads the padded positions
    ``o*stride + t*dilation`` (t < kernel) of the input with ``pad_begin``
    elements of padding in front: the kernels then run a fixed-size window
    over a padded buffer instead of the table.
    """

    table: np.ndarray
    kernel: int
    stride: int
    dilation: int
    pad_begin: int
    uniform: bool

    @property
    def n_out(self):
        return self.table.shape[0]

    def with_table(self, table):
        return self._replace(table=table)


@functools.lru_cache(maxsize=512)
def fixed_axis_windows(n_in, n_out, kernel, stride, dilation, pad_begin, pad_end,
                       count_include_pad):
    """:class:`AxisWindows` of a fixed-window pool axis (see :func:`pool_windows`)."""
    table = pool_windows(n_in, n_out, kernel, stride, dilation, pad_begin, pad_end,
                         count_include_pad)
    return AxisWindows(table, kernel, stride, dilation, pad_begin, True)


@functools.lru_cache(maxsize=512)
def adaptive_axis_windows(n_in, n_out):
    """:class:`AxisWindows` of an adaptive axis; uniform when n_in % n_out == 0."""
    table = adaptive_windows(n_in, n_out)
    if n_in % n_out == 0:
        k = n_in // n_out
        return AxisWindows(table, k, k, 1, 0, True)
    return AxisWindows(table, 1, 1, 1, 0, False)


# --------------------------------------------------------------------------
# Adaptive pools (AdaptiveAvgPool-8, AdaptiveMaxPool-8) and global pools
# --------------------------------------------------------------------------

def adaptive_output_spatial(in_spatial, output_size, name="output_size"):
    """Normalise ``output_size`` (an int or one entry per spatial dim)."""
    out = normalize_int_list(output_size, name, len(in_spatial), minimum=1)
    total = 1
    for n in out:
        total *= n
    if total > MAX_ELEMENTS:
        raise OvpoolValueError(f"{name} {list(out)} is absurdly large")
    return out


@functools.lru_cache(maxsize=512)
def adaptive_windows(n_in, n_out):
    """Window table of one adaptive axis (read-only int64 array).

    Bin ``i`` covers ``[floor(i*n_in/n_out), ceil((i+1)*n_in/n_out))``, computed
    in integers: a float formula misplaces bin borders once n_in*n_out > 2**24
    (OpenVINO's CPU plugin does). The divisor is the bin size. An output larger
    than the input is legal (bins then repeat input elements).
    """
    if n_in < 1:
        raise OvpoolValueError(f"adaptive pooling needs non-empty spatial axes, got size {n_in}")
    o = np.arange(n_out, dtype=np.int64)
    start = (o * n_in) // n_out
    end = ((o + 1) * n_in + n_out - 1) // n_out
    size = end - start
    table = np.ascontiguousarray(np.stack([start, size, size], axis=1), dtype=np.int64)
    table.setflags(write=False)
    return table


# --------------------------------------------------------------------------
# MaxUnpool
# --------------------------------------------------------------------------

def max_unpool_output_spatial(in_spatial, kernel, strides, pads_begin, pads_end):
    """ONNX MaxUnpool default output size: ``(n_in - 1)*s + k - pad_begin - pad_end``.

    ``n_in=None`` (a dynamic dimension) gives ``None``.
    """
    out = []
    for axis, n_in in enumerate(in_spatial):
        if n_in is None:
            out.append(None)
            continue
        n_out = (n_in - 1) * strides[axis] + kernel[axis] - pads_begin[axis] - pads_end[axis]
        if n_out < 1:
            raise OvpoolValueError(
                f"max_unpool: the output size along spatial axis {axis} would be {n_out} "
                f"(input {n_in}, kernel_shape={list(kernel)}, strides={list(strides)}, "
                f"pads=({pads_begin[axis]}, {pads_end[axis]}))")
        out.append(n_out)
    return tuple(out)
