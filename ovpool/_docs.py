"""The parameter documentation that the pools of :mod:`ovpool.ops` and
:mod:`ovpool.ov_ops` share, written once.

A docstring names a shared entry by a line of its own, ``%(name)s``, at the
indentation of a parameter (or of a section heading, for ``raises``);
:func:`filler` makes the decorator that puts the entries in, re-indented.
numpydoc, Sphinx and ``help()`` then read whole docstrings.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import Any, TypeVar

from ._opset import numpy_names

_F = TypeVar("_F", bound=Callable[..., Any])


def _param(names: str, type_: str, text: str) -> str:
    return f"{names} : {type_}\n" + textwrap.indent(textwrap.dedent(text).strip(), "    ")


def _x(max_pool: bool) -> str:
    extra = [n for n in numpy_names("max") if n not in numpy_names("float")]
    integers = f"{', '.join(extra[:-1])} and {extra[-1]} are accepted too. " if max_pool else ""
    return _param(
        "x",
        "array_like of shape (N, C, D1[, D2[, D3]])",
        textwrap.fill(
            "The input: a batch of N samples of C channels with 1 to 3 spatial dims. float32 "
            "and float64 are computed natively; float16 and ``ml_dtypes.bfloat16`` are widened "
            "to float32 row by row inside the kernels and rounded back to their own dtype. "
            f"{integers}Any memory layout; a non-native byte order is converted to native.",
            width=72,
            break_on_hyphens=False,
        ),
    )


_WINDOW = "Window size per spatial dim (one int: the same for every dim)."
_STRIDES = _param("strides", "int or sequence of int, optional", "Step per spatial dim, default 1.")
_DILATIONS = "Spacing between window taps per spatial dim, default 1"

SECTIONS = {
    "x": _x(False),
    "x_int8": _x(True),
    # ONNX's window (ovpool.ops)
    "onnx_window": "\n".join(
        [
            _param("kernel_shape", "int or sequence of int", _WINDOW),
            _STRIDES,
            _param(
                "pads",
                "sequence of int, optional",
                """
                ``[x1_begin, x2_begin, ..., x1_end, x2_end, ...]`` (ONNX order),
                default 0. Only with ``auto_pad="NOTSET"``.
                """,
            ),
            _param("dilations", "int or sequence of int, optional", _DILATIONS + "."),
            _param(
                "auto_pad",
                '{"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}',
                """
                ONNX automatic padding (OpenVINO's lower-case spellings and
                ``"explicit"`` are accepted). ``SAME_*`` pads to ``ceil(in / stride)``
                outputs, the odd pad at the end (UPPER) or the start (LOWER).
                """,
            ),
            _param(
                "ceil_mode",
                "bool or {0, 1}",
                """
                Round the output size up; a last window that would start in the
                right padding is dropped (ONNX since opset 19, PyTorch).
                """,
            ),
        ]
    ),
    # OpenVINO's window (ovpool.ov_ops): kernel to pads, then rounding on
    "ov_window": "\n".join(
        [
            _param("kernel", "int or sequence of int", _WINDOW),
            _STRIDES,
            _param(
                "pads_begin, pads_end",
                "int or sequence of int, optional",
                """
                Padding at the start and at the end of each spatial dim, default 0.
                Ignored (recomputed) unless ``auto_pad="explicit"``, as OpenVINO
                does: ``ov.save_model`` writes them as zeros.
                """,
            ),
        ]
    ),
    "ov_rounding": "\n".join(
        [
            _param(
                "rounding_type",
                '{"floor", "ceil", "ceil_torch"}',
                """
                Output size rounding. ``"ceil"`` keeps a last window that starts in
                the right padding (OpenVINO); ``"ceil_torch"`` drops it (PyTorch,
                ONNX).
                """,
            ),
            _param(
                "auto_pad",
                '{"explicit", "same_upper", "same_lower", "valid"}',
                """
                OpenVINO's padding mode (ONNX's upper-case spellings and ``"notset"``
                are accepted).
                """,
            ),
            _param(
                "dilations",
                "int or sequence of int, optional",
                _DILATIONS + " (AvgPool-16, MaxPool-8/-14).",
            ),
        ]
    ),
    "output_size": _param(
        "output_size",
        "int or sequence of int",
        """
        Output size per spatial dim (one int: the same for every dim), each
        >= 1.
        """,
    ),
    "p": _param("p", "float, default 2", "The norm's order, positive and finite."),
    "num_threads": _param(
        "num_threads",
        "int, optional",
        """
        Threads for this call (>= 1). Default: :func:`ovpool.get_num_threads`,
        and one thread for tiny inputs.
        """,
    ),
    "out": _param(
        "out",
        "ndarray, optional",
        """
        C-contiguous, writeable buffer of the output's shape and of the
        dtype of ``x``, not overlapping ``x``; it is filled and returned.
        """,
    ),
}


def _raises(named_by: str) -> str:
    return textwrap.dedent(
        f"""\
        Raises
        ------
        OvpoolTypeError
            If ``x`` is not a numeric array or has an unsupported dtype, or an
            argument has the wrong type (a ``TypeError`` too).
        OvpoolValueError
            If ``x`` has the wrong rank, an argument has a bad value or length,
            or ``out`` does not match (a ``ValueError`` too). Every message starts
            with {named_by}."""
    )


_PLACEHOLDER = re.compile(r"^( *)%\((\w+)\)s$", re.MULTILINE)


def filler(named_by: str) -> Callable[[_F], _F]:
    """The decorator that fills a docstring's ``%(name)s`` lines from
    :data:`SECTIONS`, and ``%(raises)s`` with the Raises section whose
    messages start with ``named_by`` (``"the function's name"``)."""
    sections = {**SECTIONS, "raises": _raises(named_by)}

    def put(match: re.Match) -> str:
        return textwrap.indent(sections[match.group(2)], match.group(1))

    def fill(function: _F) -> _F:
        function.__doc__ = _PLACEHOLDER.sub(put, function.__doc__ or "")
        return function

    return fill
