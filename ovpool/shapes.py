"""Output shapes, padding rules and window tables of every pool ovpool runs.

The arithmetic of pooling windows lives once, in the C++ kernel core
(``src/ovpool/plan.hpp``), which the kernels, this module and the OpenVINO
extension share. This module normalises the arguments of the Python front
doors (the numpy API :mod:`ovpool.ops` / :mod:`ovpool.ov_ops`, the IR
runtime), explains what does not fit, and takes its numbers from the core.

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

import numbers
import operator
from dataclasses import dataclass

import numpy as np

from ._isa import kernels as _kernels
from .errors import OvpoolTypeError, OvpoolValueError

__all__ = [
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
    "axis_has_empty_window",
    "split_onnx_pads",
    "max_unpool_output_spatial",
    "fixed_axes",
    "adaptive_axes",
    "DIVISOR_TAPS",
    "DIVISOR_DECLARED_PADS",
    "DIVISOR_OV_INCLUDE",
    "DIVISOR_OV_EXCLUDE",
    "MAX_ELEMENTS",
]

AUTO_PADS = ("explicit", "same_upper", "same_lower", "valid")
ROUNDINGS = ("floor", "ceil", "ceil_torch")

# Upper bound on the number of elements of any array ovpool agrees to create
# (2**40 elements, already 4 TiB of float32): guards the window tables and the
# integer arithmetic against absurd sizes before anything is allocated.
MAX_ELEMENTS = 1 << 40

# Codes of plan.hpp's AutoPad, Rounding and Divisor.
_AUTO_PAD_CODES = {"explicit": 0, "same_upper": 1, "same_lower": 2, "valid": 3}
_ROUNDING_CODES = {"floor": 0, "ceil": 1, "ceil_torch": 2}
DIVISOR_TAPS = 0           # taps inside the input (count_include_pad=0)
DIVISOR_DECLARED_PADS = 1  # taps inside input + declared pads (count_include_pad=1)
DIVISOR_OV_INCLUDE = 2     # OpenVINO AvgPool counting pads (at least 1)
DIVISOR_OV_EXCLUDE = 3     # OpenVINO exclude-pad (n_in - start past the end)

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


def normalize_int_list(value, name, n_spatial, *, minimum, default=None,
                       length=None) -> tuple[int, ...]:
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
    if (kernel - 1) * dilation + 1 > 4 * MAX_ELEMENTS:
        raise OvpoolValueError(
            f"the dilated kernel ({kernel} taps, dilation {dilation}) is absurdly large")
    if n_in is None:
        if auto_pad in ("same_upper", "same_lower"):
            return None, None, None
        if auto_pad == "valid":
            return None, 0, 0
        return None, pad_begin, pad_end
    return _kernels.axis_output_size(n_in, kernel, stride, dilation, pad_begin, pad_end,
                                     _AUTO_PAD_CODES[auto_pad], _ROUNDING_CODES[rounding])


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
        return any(axis_has_empty_window(self.in_spatial[a], self.out_spatial[a],
                                         self.kernel[a], self.strides[a], self.dilations[a],
                                         self.pads_begin[a])
                   for a in range(self.n_spatial))


def axis_has_empty_window(n_in, n_out, kernel, stride, dilation, pad_begin):
    """True if some window of one fixed-window axis holds no input element.

    Decided by the kernel core (``plan.hpp``) in O(log) steps without a table:
    a geometry's output may be far larger than anything a caller will allocate
    (shape inference, an error message). Only windows starting outside the
    input can be empty: past its end every one is, and in front the first tap
    at or past 0 of window ``o`` is at ``(o * stride - pad_begin) mod
    dilation``, empty when that lies beyond the input.
    """
    return _kernels.axis_has_empty_window(n_in, n_out, kernel, stride, dilation, pad_begin)


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


def fixed_axes(geometry, divisor=DIVISOR_TAPS):
    """The axes of a resolved fixed-window geometry as the kernel core's plan
    takes them (``divisor``: one of the ``DIVISOR_*`` rules, or one per axis)."""
    rules = divisor if isinstance(divisor, (tuple, list)) else (divisor,) * geometry.n_spatial
    return [(geometry.in_spatial[a], geometry.out_spatial[a], False, geometry.kernel[a],
             geometry.strides[a], geometry.dilations[a], geometry.pads_begin[a],
             geometry.pads_end[a], rules[a]) for a in range(geometry.n_spatial)]


def adaptive_axes(in_spatial, out_spatial):
    """The axes of an adaptive pool as the kernel core's plan takes them."""
    return [(n_in, n_out, True, 1, 1, 1, 0, 0, DIVISOR_TAPS)
            for n_in, n_out in zip(in_spatial, out_spatial)]


def pool_windows(n_in, n_out, kernel, stride, dilation, pad_begin, pad_end,
                 count_include_pad, divisor=None):
    """Window table of one axis of a fixed-window pool (read-only int64 array).

    Row ``o`` is ``(first, n_taps, divisor)``: the first tap inside the input,
    the number of taps inside the input, and this axis's factor of the average
    divisor: ``n_taps``, or with ``count_include_pad`` the number of taps inside
    the *declared* padded range ``[-pad_begin, n_in + pad_end)`` (positions
    added by ceil rounding beyond ``pad_end`` never count, as in PyTorch, ONNX
    Runtime and the ONNX reference). ``divisor`` (a ``DIVISOR_*`` rule)
    overrides ``count_include_pad``.

    Worked example: n_in=5, k=3, s=2, pads (1, 1): windows start at -1, 1, 3;
    rows (0, 2, 2|3), (1, 3, 3), (3, 2, 2|3).
    """
    if divisor is None:
        divisor = DIVISOR_DECLARED_PADS if count_include_pad else DIVISOR_TAPS
    return _kernels.window_table((n_in, n_out, False, kernel, stride, dilation, pad_begin,
                                  pad_end, divisor))


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


def adaptive_windows(n_in, n_out):
    """Window table of one adaptive axis (read-only int64 array).

    Bin ``i`` covers ``[floor(i*n_in/n_out), ceil((i+1)*n_in/n_out))``, computed
    in integers: a float formula misplaces bin borders once n_in*n_out > 2**24
    (OpenVINO's CPU plugin does). The divisor is the bin size. An output larger
    than the input is legal (bins then repeat input elements).
    """
    if n_in < 1:
        raise OvpoolValueError(f"adaptive pooling needs non-empty spatial axes, got size {n_in}")
    return _kernels.window_table((n_in, n_out, True, 1, 1, 1, 0, 0, DIVISOR_TAPS))


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
        n_out = _kernels.unpool_output_size(n_in, kernel[axis], strides[axis], pads_begin[axis],
                                            pads_end[axis])
        if n_out < 1:
            raise OvpoolValueError(
                f"max_unpool: the output size along spatial axis {axis} would be {n_out} "
                f"(input {n_in}, kernel_shape={list(kernel)}, strides={list(strides)}, "
                f"pads=({pads_begin[axis]}, {pads_end[axis]}))")
        out.append(n_out)
    return tuple(out)
