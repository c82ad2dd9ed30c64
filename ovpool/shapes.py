"""Python's side of the pool rules: arguments read into what the core's
lowering takes, and the lowering's answers.

Every rule of an op (how many entries an attribute has and their ranges,
auto_pad and rounding, the output size, windows that would hold no input
element, the divisor of an average, the index space of MaxPool's indices) is
written once, in the C++ kernel core (``src/ovpool/lower.hpp``, on the window
arithmetic of ``plan.hpp``), which the numpy API, the IR runtime and the
OpenVINO extension library share. This module only reads Python values into
lists of ints and codes, the way the numpy API accepts them (one int for
every axis, numpy integers, arrays), and hands them to the core
(:func:`lower`).

Conventions (per spatial axis): ``n_in`` input size, ``kernel`` k, ``stride``
s, ``dilation`` d, ``pad_begin``/``pad_end``; the *effective kernel* is
``(k - 1) * d + 1``; output ``o`` covers the padded positions ``o*s -
pad_begin + t*d`` for ``t < k``. Rounding of the output size: ``floor``;
``ceil`` (OpenVINO's: keeps a last window that starts in the right padding);
``ceil_torch`` (PyTorch's ``ceil_mode``, ONNX's ``ceil_mode=1``: drops it).
Worked example: n_in=5, k=2, s=2, pads 1+1: windows start at -1, 1, 3, 5;
``ceil`` keeps 4, ``ceil_torch`` 3. ``auto_pad`` ``same_*`` gives ``ceil(n_in
/ s)`` outputs with the odd pad at the end (upper) or the start (lower);
``valid`` no pads.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from . import _spec
from ._isa import kernels as _kernels
from .errors import OvpoolTypeError, OvpoolValueError

__all__ = [
    "MAX_ELEMENTS",
    "ONNX",
    "OPENVINO",
    "ints",
    "index_code",
    "auto_pad_code",
    "rounding_code",
    "lower",
    "axis_has_empty_window",
]

# The most elements of any array, and the largest size of any axis, kernel,
# pad or output size (spec.hpp's limits::kMaxElements, 2**40).
MAX_ELEMENTS = _spec.MAX_ELEMENTS

# Whose semantics an op follows (lower.hpp's Semantics).
ONNX = _kernels.SEMANTICS_ONNX
OPENVINO = _kernels.SEMANTICS_OPENVINO

# auto_pad and rounding codes of spec.hpp
ROUNDING_FLOOR = _spec.ROUNDING_CODES["floor"]
ROUNDING_CEIL_TORCH = _spec.ROUNDING_CODES["ceil_torch"]


def index_code(index_dtype):
    """spec.hpp's IndexType of an index dtype (int64 when None)."""
    if index_dtype is not None and np.dtype(index_dtype) == np.int32:
        return _spec.INDEX_I32
    return _spec.INDEX_I64


def _as_int(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise OvpoolTypeError(f"{name} must contain integers, got {value!r}")
    return operator.index(value)


def ints(value, name, count, *, required=False):
    """``value`` as a list of Python ints, or None when not given.

    One int stands for ``count`` entries (one per axis, or ``2 * n`` for
    ONNX pads); a sequence or 1-D array is taken entry by entry. How many
    entries it must have and their ranges are the core's rules
    (:func:`lower`)."""
    if value is None:
        if required:
            raise OvpoolValueError(f"{name} is required")
        return None
    if isinstance(value, np.ndarray):
        if value.ndim > 1:
            raise OvpoolValueError(
                f"{name} must be an int or a 1-D sequence, got shape {value.shape}"
            )
        value = value.tolist()
    if isinstance(value, (str, bytes)):
        raise OvpoolTypeError(f"{name} must be an int or a sequence of ints, got {value!r}")
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        values = [operator.index(value)] * count
    else:
        try:
            items = list(value)
        except TypeError:
            raise OvpoolTypeError(
                f"{name} must be an int or a sequence of ints, got {value!r}"
            ) from None
        values = [_as_int(v, name) for v in items]
    for v in values:
        if not -(1 << 62) <= v <= 1 << 62:  # (a Python int may not fit the core's int64)
            raise OvpoolValueError(f"{name} is absurdly large: {values}")
    return values


def _parsed(parse, value, name):
    """``parse`` (the core's parser of a string attribute) of ``value``; its
    refusal as an :class:`~ovpool.OvpoolValueError`."""
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    if not isinstance(value, str):
        raise OvpoolTypeError(f"{name} must be a string, got {value!r}")
    try:
        return parse(value, name)
    except ValueError as exc:
        if isinstance(exc, OvpoolValueError):
            raise
        raise OvpoolValueError(str(exc)) from None


def auto_pad_code(value, name="auto_pad"):
    """spec.hpp's AutoPad of an ONNX (``NOTSET``, ``SAME_UPPER``, ...) or
    OpenVINO (``explicit``, ``same_upper``, ...) spelling, any case."""
    return _parsed(_kernels.parse_auto_pad, value, name)


def rounding_code(value, name="rounding_type"):
    """spec.hpp's Rounding of ``floor``, ``ceil`` or ``ceil_torch``."""
    return _parsed(_kernels.parse_rounding, value, name)


def lower(semantics, family, code, dims, **attributes):
    """The core's rules of an op on an input of shape ``dims`` (None for an
    unknown dim) and element type ``code`` (spec.hpp's DType): a lowering
    whose ``out_shape`` is the output's shape (None where unknown) and which
    :func:`ovpool._core.make_plan` plans when the shape is known.
    ``attributes`` are those of ``_kernels.lower`` (lists from :func:`ints`,
    codes). A broken rule raises :class:`~ovpool.OvpoolValueError` with the
    core's message."""
    try:
        return _kernels.lower(semantics, family, code, dims, **attributes)
    except OverflowError:
        raise OvpoolValueError(f"an attribute is absurdly large: {attributes}") from None
    except ValueError as exc:
        raise OvpoolValueError(str(exc)) from None


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
