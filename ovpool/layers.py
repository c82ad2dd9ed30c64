"""The layer table: every layer ovpool runs, described once.

ovpool has three front doors (the numpy API, the IR runtime :mod:`ovpool.ir`,
the OpenVINO extension with its ONNX and PyTorch conversions) and one way
down (:mod:`ovpool.shapes` -> :mod:`ovpool.ops` / :mod:`ovpool.ov_ops` -> the
kernels). This module is where the doors meet: one :class:`LayerType` entry per
``(type, version)`` holds

* the attribute schema (:class:`Attr`: the name exactly as written in IR,
  e.g. ``exclude-pad``; its kind; the default OpenVINO's reader applies when
  the attribute is missing; whether it is required), parsing from IR strings
  (``"3, 3"``, ``"true"``) and formatting back;
* output type inference (:meth:`LayerType.infer`: shapes with ``None`` for a
  dynamic dim, element types), delegating the arithmetic to
  :mod:`ovpool.shapes`;
* :meth:`LayerType.run`: numpy arrays in, a list of numpy arrays out,
  delegating to :mod:`ovpool.ov_ops` / :mod:`ovpool.ops`.

The pool layers come from ovpool's op schema, ``ovpool/opset.json``
(:mod:`ovpool._opset`), which the OpenVINO extension library's ops are
generated from too: a new layer version or attribute is an edit there (and
the attribute's meaning to the ops, when it is new). Nothing here imports
``openvino``.

Entries
-------
OpenVINO layers (``version`` = the opset that introduced that version of the
op, as ``ov.save_model`` writes it; :func:`lookup` maps any other opset that
contains the op onto it, e.g. ``MaxPool`` ``opset9`` -> ``opset8``):

=================  ==========================  ==================================
type               version                     inputs -> outputs
=================  ==========================  ==================================
Parameter          opset1                      -> data
Const              opset1                      -> data (from the .bin)
Result             opset1                      data ->
Convert            opset1                      data -> data
AdaptiveAvgPool    opset8                      data, output_size -> output
AdaptiveMaxPool    opset8                      data, output_size -> output, indices
AvgPool            opset1, opset14, opset16    data -> output
MaxPool            opset1                      data -> output
MaxPool            opset8, opset14             data -> output, indices
=================  ==========================  ==================================

ovpool's own opset, version string ``"ovpool"`` (the ops of the OpenVINO
extension; its ONNX and PyTorch conversion extensions map nodes onto them):

``AdaptiveAvgPool``, ``AdaptiveMaxPool``
    AdaptiveAvgPool-8 / AdaptiveMaxPool-8, same attributes.
``AvgPool``
    AvgPool-16's attributes (``dilations``; ``rounding_type`` floor, ceil,
    ceil_torch), OpenVINO semantics (:func:`ovpool.ov_ops.avg_pool`).
``MaxPool``
    MaxPool-14's attributes (``axis``, ``index_element_type``); outputs
    values and indices (:func:`ovpool.ov_ops.max_pool`).
``OnnxAveragePool``
    ONNX AveragePool-22 (``kernel_shape``, ``strides``, ``pads`` in ONNX
    order ``[x1_begin, ..., x1_end, ...]``, ``dilations``, ``auto_pad``
    NOTSET/SAME_UPPER/SAME_LOWER/VALID, ``ceil_mode``, ``count_include_pad``)
    -> :func:`ovpool.ops.avg_pool`.
``OnnxMaxPool``
    ONNX MaxPool-22 (as above plus ``storage_order``), outputs ``Y`` and
    ``Indices`` (i64, flat over the whole tensor) -> :func:`ovpool.ops.max_pool`.
``LpPool``, ``GlobalLpPool``
    ONNX LpPool-22 / GlobalLpPool-22 (``p``, a float here).
``MaxUnpool``
    ONNX MaxUnpool-22: inputs ``X``, ``I`` and an optional ``output_shape``;
    ``indices_relative_to`` picks ONNX's reference reading (``default_shape``)
    or ONNX Runtime's and PyTorch's (``output_shape``), see
    :func:`ovpool.ops.max_unpool`.

Using an entry::

    entry = layers.get("MaxPool", "opset8")
    attrs = entry.parse_attributes({"kernel": "3, 3", "strides": "2, 2"})  # IR strings
    attrs = entry.attributes(kernel=[3, 3], strides=[2, 2])  # Python values
    entry.defaults(n_spatial=2)  # typed defaults, e.g. for visit_attributes
    entry.infer([TensorType((None, 3, 13, 13), "f32")], attrs)
    entry.run([x], attrs)  # -> [values, indices]

For an ``openvino.Op`` written in Python from an entry (the extension
library's C++ ops are generated from the same schema instead):

* ``visit_attributes``: start from ``entry.defaults(n_spatial)`` (typed, never
  an empty list), let the visitor fill it, then ``entry.attributes(**d)``;
* ``validate_and_infer_types``: ``entry.infer([TensorType(shape, etype)
  ...], attrs, values)`` with ``shape`` a tuple (None for a dynamic dim, None
  for a dynamic rank), ``etype`` the IR name (``ov.Type.get_type_name()``) and
  ``values`` the data of Constant inputs (None otherwise); then
  ``set_output_type`` per returned :class:`TensorType`;
* ``evaluate``: ``entry.run([t.data for t in inputs], attrs)`` and copy into
  the outputs (``set_shape`` first);
* a conversion extension builds ``entry.attributes(**onnx_or_torch_attrs)``
  for an entry of ovpool's opset (``get(name, "ovpool")``).

Attribute values are ``int``, ``float``, ``bool``, ``str`` and ``list`` of
ints. A per-axis list attribute left out of the IR (``pads_begin``,
``dilations``, ...) parses to ``[]``, meaning "the fill value on every axis"
(0 for pads, 1 for dilations), as OpenVINO's reader does; :meth:`defaults`
materialises it for a given rank because OpenVINO's attribute visitor cannot
carry an empty list.

Errors: bad attribute values raise :class:`~ovpool.OvpoolValueError` /
:class:`~ovpool.OvpoolTypeError` naming the attribute; :func:`lookup` raises
:class:`UnknownLayer` for a type or version OpenVINO does not have; ``infer``
raises :class:`UnsupportedLayer` for a layer OpenVINO accepts but ovpool's
kernels do not run (e.g. AvgPool on i32 data). The IR reader adds the file and
line.

ovpool is stricter than OpenVINO's reader in a few places, on purpose:
booleans must be ``true``/``false``/``1``/``0`` (any case), integers must be
written as integers (OpenVINO truncates ``"3.5"``), pads must be >= 0.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from . import _core, _opset, _spec, ops, ov_ops
from ._isa import kernels as _kernels
from ._ov_opsets import LAST_OPSET, OPSETS
from .errors import OvpoolTypeError, OvpoolValueError
from .shapes import MAX_ELEMENTS

__all__ = [
    "Attr",
    "LayerType",
    "TensorType",
    "Dim",
    "LAYERS",
    "OVPOOL_OPSET",
    "ELEMENT_TYPES",
    "UnknownLayer",
    "UnsupportedLayer",
    "get",
    "lookup",
    "numpy_dtype",
    "element_type_of",
    "element_nbytes",
]

OVPOOL_OPSET = "ovpool"

# --------------------------------------------------------------------------
# Element types
# --------------------------------------------------------------------------

# IR element type -> (bits per element, numpy dtype name or None if ovpool
# cannot hold it as a numpy array); the op schema's table.
ELEMENT_TYPES = _opset.ELEMENT_TYPES
# The element types the pools take (the op schema's sets, ovpool/opset.json:
# a type the kernels learn is added there).
FLOAT_TYPES = _opset.ELEMENT_TYPE_SETS["float"]
MAX_TYPES = _opset.ELEMENT_TYPE_SETS["max"]  # what ovpool's max kernels take
INDEX_TYPES = _opset.ELEMENT_TYPE_SETS["index"]
INTEGER_TYPES = _opset.ELEMENT_TYPE_SETS["integer"]
NUMERIC_TYPES = ("boolean",) + FLOAT_TYPES + INTEGER_TYPES  # numpy-representable

try:  # optional: exact bfloat16 arrays
    import ml_dtypes as _ml_dtypes

    _BF16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    _BF16 = None


def numpy_dtype(etype):
    """The numpy dtype of an IR element type, or None if numpy cannot hold it.

    ``bf16`` is ``ml_dtypes.bfloat16`` when ml_dtypes is installed, else
    float32 (bf16 values are exact in float32).
    """
    bits_name = ELEMENT_TYPES.get(etype)
    if bits_name is None or bits_name[1] is None:
        return None
    if etype == "bf16":
        return _BF16 if _BF16 is not None else np.dtype(np.float32)
    return np.dtype(bits_name[1])


def element_type_of(dtype):
    """The IR element type of a numpy dtype (``bfloat16`` -> ``bf16``)."""
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        return "bf16"
    for etype, (_, name) in ELEMENT_TYPES.items():
        if name == dtype.name and etype != "bf16":
            return etype
    raise OvpoolTypeError(f"numpy dtype {dtype} has no OpenVINO element type")


def element_nbytes(etype, count):
    """Bytes of ``count`` elements of ``etype`` as OpenVINO packs them in the
    .bin (sub-byte types packed; u3 in groups of 8 per 3 bytes, u6 in groups
    of 4 per 3 bytes), or None when the size is not a function of the count
    (``string``)."""
    bits = ELEMENT_TYPES[etype][0]
    if bits is None:
        return None
    if etype == "u3":
        return -(-count // 8) * 3
    if etype == "u6":
        return -(-count // 4) * 3
    return -(-count * bits // 8)


# --------------------------------------------------------------------------
# Errors of the table
# --------------------------------------------------------------------------


class UnknownLayer(OvpoolValueError):
    """A layer type or version that neither OpenVINO nor ovpool knows."""


class UnsupportedLayer(OvpoolValueError):
    """A valid layer that ovpool's runtime does not run (OpenVINO does)."""


# --------------------------------------------------------------------------
# Attributes
# --------------------------------------------------------------------------


class _Required:
    def __repr__(self):
        return "REQUIRED"


REQUIRED = _Required()

_INT_RE = re.compile(r"[-+]?\d{1,19}")
_MAX_LIST = 64  # longest list attribute / rank ovpool accepts


class Dim(NamedTuple):
    """A dynamic dimension of a Parameter shape: ``lo..hi`` (``hi=None``: unbounded)."""

    lo: int
    hi: int | None

    def __str__(self):
        if self.lo == 0 and self.hi is None:
            return "?"
        return f"{self.lo if self.lo else ''}..{'' if self.hi is None else self.hi}"


def _parse_int(text, name):
    token = text.strip()
    if not _INT_RE.fullmatch(token):
        raise OvpoolValueError(f"attribute {name}={text!r} is not an integer")
    return int(token)


def _parse_int_list(text, name):
    if not text.strip():
        return []
    items = text.split(",")
    if len(items) > _MAX_LIST:
        raise OvpoolValueError(f"attribute {name} has {len(items)} entries (at most {_MAX_LIST})")
    return [_parse_int(item, name) for item in items]


def _parse_pshape(text, name):
    """``"?,3,1..64,-1"`` -> ``(Dim(0, None), 3, Dim(1, 64), Dim(0, None))``;
    ``"..."`` (dynamic rank) -> None; ``""`` -> ``()`` (a scalar)."""
    text = text.strip()
    if text == "...":
        return None
    if not text:
        return ()
    items = text.split(",")
    if len(items) > _MAX_LIST:
        raise OvpoolValueError(f"attribute {name} has rank {len(items)} (at most {_MAX_LIST})")
    dims = []
    for item in items:
        token = item.strip()
        if token in ("?", "-1"):
            dims.append(Dim(0, None))
        elif ".." in token:
            lo, _, hi = token.partition("..")
            lo = _parse_int(lo, name) if lo.strip() else 0
            hi = _parse_int(hi, name) if hi.strip() else None
            if lo < 0 or (hi is not None and (hi < lo or hi > MAX_ELEMENTS)):
                raise OvpoolValueError(f"attribute {name}={text!r} has a bad bounded dim {token!r}")
            dims.append(Dim(lo, hi) if lo != hi else lo)
        else:
            value = _parse_int(token, name)
            if value < 0 or value > MAX_ELEMENTS:
                raise OvpoolValueError(f"attribute {name}={text!r} has a bad dim {value}")
            dims.append(value)
    return tuple(dims)


def _format_pshape(dims):
    if dims is None:
        return "..."
    return ",".join(str(d) for d in dims)


@dataclass(frozen=True)
class Attr:
    """One attribute of a layer, as written in IR ``<data .../>``.

    ``kind``:

    * ``"int"``, ``"float"``, ``"bool"``;
    * ``"ints"``: a list of ints (``"3, 3"``); with ``per_axis`` that many
      entries per spatial axis (ONNX ``pads``: 2), ``fill`` being the value
      assumed for a missing attribute on every axis;
    * ``"str"``: one of ``choices`` (case-insensitive, returned as spelled in
      ``choices``); ``"etype"``: an element type (``choices`` limits it);
    * ``"shape"``: a static shape (``"2, 3"``, ``""`` for a scalar);
      ``"pshape"``: a Parameter shape with ``?``/``-1`` and ``lo..hi`` dims
      (:class:`Dim`), None for a dynamic rank (``"..."``).
    """

    name: str
    kind: str
    default: object = REQUIRED
    choices: tuple = ()
    minimum: int | None = None
    per_axis: int = 0
    fill: int = 0
    doc: str = ""
    spatial: bool = False  # its length is the spatial rank

    @classmethod
    def of(cls, a):
        """The Attr of an attribute of the op schema (:mod:`ovpool._opset`)."""
        return cls(
            a.name,
            a.kind,
            REQUIRED if a.required else _copy(a.default),
            choices=a.choices,
            minimum=a.minimum,
            per_axis=a.per_axis,
            fill=a.fill,
            doc=a.doc,
            spatial=a.spatial,
        )

    @property
    def required(self):
        return self.default is REQUIRED

    @property
    def python_name(self):
        """The name as a Python identifier (``exclude-pad`` -> ``exclude_pad``)."""
        return self.name.replace("-", "_")

    def parse(self, text):
        """Parse the IR string of this attribute into its typed value."""
        kind, name = self.kind, self.name
        if not isinstance(text, str):
            raise OvpoolTypeError(f"attribute {name} must be a string, got {text!r}")
        if kind == "int":
            return self._check(_parse_int(text, name))
        if kind == "ints":
            return self._check(_parse_int_list(text, name))
        if kind == "bool":
            token = text.strip().lower()
            if token in ("true", "1"):
                return True
            if token in ("false", "0"):
                return False
            raise OvpoolValueError(f"attribute {name}={text!r} is not a boolean (true/false)")
        if kind == "float":
            try:
                value = float(text)
            except ValueError:
                raise OvpoolValueError(f"attribute {name}={text!r} is not a number") from None
            return self._check(value)
        if kind in ("str", "etype"):
            return self._check(text.strip())
        if kind == "shape":
            dims = _parse_int_list(text, name)
            return self._check(dims)
        if kind == "pshape":
            return _parse_pshape(text, name)
        raise AssertionError(kind)

    def check(self, value):
        """Validate and normalise a Python value of this attribute."""
        kind, name = self.kind, self.name
        if kind == "int":
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
                raise OvpoolTypeError(f"attribute {name} must be an int, got {value!r}")
            return self._check(int(value))
        if kind in ("ints", "shape"):
            if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                raise OvpoolTypeError(f"attribute {name} must be a list of ints, got {value!r}")
            items = list(value)
            if len(items) > _MAX_LIST:
                raise OvpoolValueError(f"attribute {name} has {len(items)} entries")
            for v in items:
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
                    raise OvpoolTypeError(f"attribute {name} must be a list of ints, got {value!r}")
            return self._check([int(v) for v in items])
        if kind == "bool":
            if isinstance(value, (bool, np.bool_)) or (
                isinstance(value, numbers.Integral) and value in (0, 1)
            ):
                return bool(value)
            raise OvpoolTypeError(f"attribute {name} must be a bool, got {value!r}")
        if kind == "float":
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
                raise OvpoolTypeError(f"attribute {name} must be a number, got {value!r}")
            return self._check(float(value))
        if kind in ("str", "etype"):
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            if not isinstance(value, str):
                raise OvpoolTypeError(f"attribute {name} must be a string, got {value!r}")
            return self._check(value.strip())
        if kind == "pshape":
            if value is None:
                return None
            if isinstance(value, str):
                return _parse_pshape(value, name)
            dims = []
            for d in value:
                if d is None:
                    dims.append(Dim(0, None))
                elif isinstance(d, Dim):
                    dims.append(d)
                else:
                    dims.append(self._check_dim(d))
            return tuple(dims)
        raise AssertionError(kind)

    def _check_dim(self, d):
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Integral) or d < 0:
            raise OvpoolValueError(f"attribute {self.name}: bad dim {d!r}")
        return int(d)

    def _check(self, value):
        name = self.name
        if self.kind in ("str", "etype"):
            choices = self.choices or (tuple(ELEMENT_TYPES) if self.kind == "etype" else ())
            for choice in choices:
                if value.lower() == choice.lower():
                    return choice
            if choices:
                raise OvpoolValueError(
                    f"attribute {name}={value!r} must be one of {', '.join(choices)}"
                )
            return value
        if self.kind == "float":
            if not math.isfinite(value):
                raise OvpoolValueError(f"attribute {name}={value!r} must be finite")
            if self.minimum is not None and value < self.minimum:
                raise OvpoolValueError(f"attribute {name}={value!r} must be >= {self.minimum}")
            return value
        values = value if isinstance(value, list) else [value]
        minimum = 0 if self.kind == "shape" else self.minimum
        for v in values:
            if minimum is not None and v < minimum:
                raise OvpoolValueError(
                    f"attribute {name}={value!r}: every entry must be >= {minimum}"
                )
            if abs(v) > MAX_ELEMENTS:
                raise OvpoolValueError(f"attribute {name}={value!r} is absurdly large")
        return value

    def format(self, value):
        """The IR string of a typed value (``[3, 3]`` -> ``"3, 3"``)."""
        if self.kind in ("ints", "shape"):
            return ", ".join(str(int(v)) for v in value)
        if self.kind == "bool":
            return "true" if value else "false"
        if self.kind == "float":
            return repr(float(value))
        if self.kind == "pshape":
            return _format_pshape(value)
        return str(value)

    def placeholder(self, n_spatial=2):
        """A typed value for a required attribute that has none yet (never empty:
        OpenVINO's attribute visitor cannot carry an empty list)."""
        if self.kind == "ints":
            return [self.fill] * (n_spatial * self.per_axis if self.per_axis else 1)
        return {
            "int": 0,
            "float": 0.0,
            "bool": False,
            "str": (self.choices or ("",))[0],
            "etype": (self.choices or ("f32",))[0],
            "shape": [],
            "pshape": (),
        }[self.kind]


# --------------------------------------------------------------------------
# Tensor types and layer entries
# --------------------------------------------------------------------------


class TensorType(NamedTuple):
    """The type of a tensor: ``shape`` (a tuple with None for a dynamic dim, or
    None for a dynamic rank) and ``etype`` (an IR element type, e.g. ``"f32"``)."""

    shape: tuple | None
    etype: str

    def __str__(self):
        if self.shape is None:
            return f"{self.etype}[...]"
        return f"{self.etype}[{','.join('?' if d is None else str(d) for d in self.shape)}]"


@dataclass(frozen=True)
class LayerType:
    """One ``(type, version)`` of the layer table (see the module docstring)."""

    type: str
    version: str
    attrs: tuple
    inputs: tuple
    outputs: tuple
    infer_fn: Callable = field(repr=False)
    run_fn: Callable | None = field(repr=False, default=None)
    optional_inputs: int = 0  # trailing inputs that may be absent
    value_inputs: tuple = ()  # inputs whose values (not just types) shape inference reads
    semantics: str = "openvino"  # "openvino" or "onnx"
    doc: str = ""
    # the pools' own, from the op schema: the kernel core's family, the
    # element type set of each input, the outputs' type rules
    family: str = ""
    input_types: tuple = ()
    output_defs: tuple = field(default=(), repr=False)

    @property
    def key(self):
        return (self.type, self.version)

    @property
    def attr_names(self):
        return tuple(a.name for a in self.attrs)

    @property
    def spatial_attr(self):
        """The attribute whose length is the spatial rank (kernel), or None."""
        for a in self.attrs:
            if a.spatial:
                return a
        return None

    def attr(self, name):
        for a in self.attrs:
            if a.name == name or a.python_name == name:
                return a
        raise KeyError(name)

    def parse_attributes(self, raw):
        """IR ``<data>`` strings -> typed attributes, defaults applied.

        Attributes not in the schema are ignored (as OpenVINO's reader does).
        Raises :class:`~ovpool.OvpoolValueError` for a missing required or a
        malformed attribute.
        """
        return self._typed(dict(raw), Attr.parse, python_names=False)

    def attributes(self, **values):
        """Typed attributes from Python values (``exclude_pad=`` or
        ``**{"exclude-pad": ...}``), validated, defaults applied."""
        given = dict(values)
        result = self._typed(given, Attr.check, python_names=True)
        if given:
            raise OvpoolValueError(
                f"{self.type}-{self.version}: unknown attributes {sorted(given)}; "
                f"it has {list(self.attr_names)}"
            )
        return result

    def _typed(self, given, convert, python_names):
        """Each attribute from ``given`` (taken out of it) by ``convert``, or
        its default; ``python_names``: also under its Python name."""
        result = {}
        for a in self.attrs:
            key = a.python_name if python_names and a.name not in given else a.name
            if key in given:
                try:
                    result[a.name] = convert(a, given.pop(key))
                except (OvpoolValueError, OvpoolTypeError) as exc:
                    raise type(exc)(f"{self.type}-{self.version}: {exc}") from None
            elif a.required:
                raise OvpoolValueError(
                    f"{self.type}-{self.version}: the required attribute {a.name!r} is missing"
                )
            else:
                result[a.name] = _copy(a.default)
        return result

    def defaults(self, n_spatial=2):
        """Typed defaults for every attribute, with per-axis lists of
        ``n_spatial`` entries and placeholders for required attributes: the
        dict an ``openvino.Op`` hands to ``visit_attributes``."""
        result = {}
        for a in self.attrs:
            if a.required or (a.kind == "ints" and a.per_axis and not a.default):
                result[a.name] = a.placeholder(n_spatial)
            else:
                result[a.name] = _copy(a.default)
        return result

    def format_attributes(self, attrs):
        """Typed attributes -> IR ``<data>`` strings."""
        return {a.name: a.format(attrs[a.name]) for a in self.attrs if a.name in attrs}

    def infer(self, input_types, attrs, values=None):
        """Output :class:`TensorType` list from the input types.

        ``values``: per input, its numpy value when known (a constant) else
        None; only the inputs in ``value_inputs`` are read (AdaptiveAvgPool's
        output_size). Raises :class:`UnsupportedLayer` when ovpool's kernels
        do not take these inputs, :class:`~ovpool.OvpoolValueError` when the
        layer is invalid.
        """
        n_min = len(self.inputs) - self.optional_inputs
        if not n_min <= len(input_types) <= len(self.inputs):
            raise OvpoolValueError(
                f"{self.type}-{self.version} takes {_count(n_min, len(self.inputs))} inputs, "
                f"got {len(input_types)}"
            )
        if values is None:
            values = [None] * len(input_types)
        types = [t if isinstance(t, TensorType) else TensorType(*t) for t in input_types]
        if self.input_types:
            _check_types(self, types, attrs)
        return list(self.infer_fn(self, types, attrs, list(values)))

    def run(self, inputs, attrs, out=None, *, num_threads=None, values_only=False):
        """Run the layer on numpy arrays; returns a list of numpy arrays.

        Options of the pool layers (the OpenVINO extension uses them):

        * ``out``: per output, an array to write it into (the ops' ``out=`` /
          ``out_indices=``: right shape and dtype, C-contiguous) or None;
        * ``num_threads``: the kernels' thread count (None: ovpool's default);
        * ``values_only``: the caller does not use the indices of a max pool
          (MaxPool-8/-14, OnnxMaxPool): they are not computed and None is
          returned in their place.
        """
        if self.run_fn is None:
            raise OvpoolValueError(f"{self.type}-{self.version} is not computed by run()")
        options = {}
        if out is not None:
            options["out"] = list(out)
        if num_threads is not None:
            options["num_threads"] = num_threads
        if values_only:
            options["values_only"] = True
        return list(self.run_fn(list(inputs), attrs, **options))


def _copy(value):
    return list(value) if isinstance(value, list) else value


def _count(lo, hi):
    return str(lo) if lo == hi else f"{lo} to {hi}"


LAYERS = {}


def _register(type_, version, attrs, inputs, outputs, infer, run=None, **kw):
    entry = LayerType(type_, version, tuple(attrs), tuple(inputs), tuple(outputs), infer, run, **kw)
    assert entry.key not in LAYERS, entry.key
    LAYERS[entry.key] = entry
    return entry


def get(type_, version):
    """The entry of ``(type, version)`` exactly as registered (``"opset8"``,
    ``"ovpool"``), or None. See :func:`lookup` for IR version strings."""
    return LAYERS.get((type_, version))


_OPSET_RE = re.compile(r"opset(\d{1,4})")


def lookup(type_, version):
    """Resolve an IR layer's ``type`` and ``version`` attributes.

    Returns the :class:`LayerType` that runs it, or None when OpenVINO knows
    the layer but ovpool does not run it (Convolution, ...). Any opset that
    contains an op maps onto the version of the op it contains (``MaxPool``
    in ``opset9`` is MaxPool-8). Raises :class:`UnknownLayer` for a type or
    version OpenVINO does not know (checked against OpenVINO's opset tables,
    :mod:`ovpool._ov_opsets`) that is not in ovpool's opset either.
    """
    if version == OVPOOL_OPSET:
        entry = LAYERS.get((type_, OVPOOL_OPSET))
        if entry is None:
            names = sorted(t for t, v in LAYERS if v == OVPOOL_OPSET)
            raise UnknownLayer(
                f"ovpool's opset has no layer type {type_!r}; it has {', '.join(names)}"
            )
        return entry
    match = _OPSET_RE.fullmatch(version or "")
    if not match or not 1 <= int(match.group(1)) <= LAST_OPSET:
        raise UnknownLayer(
            f"unknown layer version {version!r}: OpenVINO's opsets are opset1..opset{LAST_OPSET}, "
            f"ovpool's is {OVPOOL_OPSET!r}"
        )
    n = int(match.group(1))
    runs = OPSETS.get(type_)
    if runs is None:
        raise UnknownLayer(f"unknown layer type {type_!r}: no OpenVINO opset has it")
    for first, last, op_version in runs:
        if first <= n <= last:
            return LAYERS.get((type_, f"opset{max(op_version, 1)}"))
    where = ", ".join(f"opset{a}" if a == b else f"opset{a}..opset{b}" for a, b, _ in runs)
    raise UnknownLayer(f"OpenVINO's {version} has no layer type {type_!r} (it is in {where})")


# --------------------------------------------------------------------------
# Shape helpers (the arithmetic itself is in ovpool.shapes / ovpool.ops)
# --------------------------------------------------------------------------


def _split_nc(t, n_spatial, what="data", source="the attributes"):
    """(lead dims, spatial dims) of a pool input; ranks 3-5. ``n_spatial``
    (from ``source``) must match the input's rank when both are known."""
    if t.shape is None:
        return (None, None), (None,) * n_spatial
    rank = len(t.shape)
    if rank not in (3, 4, 5):
        raise OvpoolValueError(
            f"the {what} input must have rank 3, 4 or 5 (N, C, 1 to 3 spatial dims), "
            f"got shape {_fmt(t.shape)}"
        )
    if n_spatial is not None and rank - 2 != n_spatial:
        raise OvpoolValueError(
            f"{source} gives {n_spatial} spatial dims but the {what} input has shape "
            f"{_fmt(t.shape)} ({rank - 2} spatial dims)"
        )
    return tuple(t.shape[:2]), tuple(t.shape[2:])


def _fmt(shape):
    if shape is None:
        return "[...]"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _require(t, allowed, role, layer):
    if t.etype not in allowed:
        raise UnsupportedLayer(
            f"{layer.type}-{layer.version}: ovpool runs it on {'/'.join(allowed)} {role}, "
            f"not {t.etype}"
        )


def _per_axis(value):
    """[] (the attribute was left out) -> None (the ops' default)."""
    return None if value is None or len(value) == 0 else list(value)


def _int_vector(value, t, role):
    """A small 1-D integer input (output_size, output_shape) as a list of ints."""
    array = np.asarray(value)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise OvpoolValueError(
            f"{role} must be a 1-D integer tensor, got {array.dtype} of shape {list(array.shape)}"
        )
    return [int(v) for v in array]


# --------------------------------------------------------------------------
# Parameter, Const, Result, Convert
# --------------------------------------------------------------------------


def _infer_parameter(layer, types, attrs, values):
    if numpy_dtype(attrs["element_type"]) is None:
        raise UnsupportedLayer(f"ovpool's runtime has no {attrs['element_type']} inputs")
    shape = attrs["shape"]
    if shape is not None:
        shape = tuple(d if isinstance(d, int) else None for d in shape)
    return [TensorType(shape, attrs["element_type"])]


def _infer_const(layer, types, attrs, values):
    return [TensorType(tuple(attrs["shape"]), attrs["element_type"])]


def _infer_result(layer, types, attrs, values):
    return []


def _infer_convert(layer, types, attrs, values):
    (data,) = types
    _require(data, NUMERIC_TYPES, "inputs", layer)
    if attrs["destination_type"] not in NUMERIC_TYPES:
        raise UnsupportedLayer(
            f"Convert: ovpool converts to {'/'.join(NUMERIC_TYPES)}, "
            f"not {attrs['destination_type']}"
        )
    return [TensorType(data.shape, attrs["destination_type"])]


def _run_convert(inputs, attrs):
    (x,) = inputs
    target = numpy_dtype(attrs["destination_type"])
    if target == np.bool_:
        return [np.asarray(x != 0)]
    with np.errstate(invalid="ignore", over="ignore"):
        # float -> int truncates toward zero (OpenVINO's Convert); out-of-range
        # and NaN values are implementation-defined there as in numpy
        return [np.asarray(x).astype(target)]


_register(
    "Parameter",
    "opset1",
    [
        Attr("shape", "pshape", doc="partial shape: ?, -1, lo..hi, ... for a dynamic rank"),
        Attr("element_type", "etype"),
    ],
    [],
    ["output"],
    _infer_parameter,
    doc="A model input; its value is given at call time.",
)
_register(
    "Const",
    "opset1",
    [
        Attr("element_type", "etype"),
        Attr("shape", "shape"),
        Attr("offset", "int", minimum=0),
        Attr("size", "int", minimum=0),
    ],
    [],
    ["output"],
    _infer_const,
    doc="A constant read from the .bin at offset/size (little-endian).",
)
_register(
    "Result",
    "opset1",
    [],
    ["data"],
    [],
    _infer_result,
    run=lambda inputs, attrs: [],
    doc="A model output (the order of Result layers in the file is the output order).",
)
_register(
    "Convert",
    "opset1",
    [Attr("destination_type", "etype")],
    ["data"],
    ["output"],
    _infer_convert,
    run=_run_convert,
    doc="Element type conversion (save_model's f16 -> f32 decompression of constants).",
)


# --------------------------------------------------------------------------
# The pool layers: from the op schema (ovpool/opset.json)
# --------------------------------------------------------------------------

_FAMILIES = {"average": _core.AVERAGE, "lp": _core.LP, "max": _core.MAX, "argmax": _core.ARGMAX}
# The attributes of an ONNX pool that its lowering takes as options, beyond
# the window (ovpool.ops.onnx_lowering).
_ONNX_OPTIONS = ("count_include_pad", "storage_order", "p")


def _check_types(layer, types, attrs):
    """The element types of the inputs and of the attribute-typed outputs,
    against the schema's sets: the data input's raises
    :class:`UnsupportedLayer` (OpenVINO runs it), the others'
    :class:`~ovpool.OvpoolValueError`."""
    for k, t in enumerate(types):
        key = layer.input_types[k]
        if t.etype in _opset.ELEMENT_TYPE_SETS[key]:
            continue
        text = _opset.SCHEMA.type_text[key]
        if k == 0:
            raise UnsupportedLayer(
                f"{layer.type}-{layer.version}: ovpool runs it on {text} {layer.inputs[0]}, "
                f"not {t.etype}"
            )
        raise OvpoolValueError(f"{layer.inputs[k]} must be {text}, got {t.etype}")
    for output in layer.output_defs:
        if output.types is not None:
            etype = attrs[output.attr]
            if etype not in _opset.ELEMENT_TYPE_SETS[output.types]:
                text = _opset.SCHEMA.type_text[output.types]
                raise UnsupportedLayer(f"ovpool writes {text} {output.name}, not {etype}")


def _output_types(layer, data, attrs, shape):
    """The outputs' types: the data input's, an attribute's, or fixed."""
    types = []
    for output in layer.output_defs:
        if output.rule == "data":
            etype = data.etype
        elif output.rule == "attribute":
            etype = attrs[output.attr]
        else:
            etype = output.fixed
        types.append(TensorType(shape, etype))
    return types


def _index_dtype(layer, attrs):
    """The indices' numpy dtype of a max pool with an indices output, else None."""
    if len(layer.output_defs) < 2:
        return None
    etype = _output_types(layer, TensorType(None, "f32"), attrs, None)[1].etype
    return np.dtype(np.int32 if etype == "i32" else np.int64)


def _family(layer):
    family = _FAMILIES[layer.family]
    # MaxPool-1 has no indices output: its values only
    return _core.MAX if family == _core.ARGMAX and len(layer.output_defs) < 2 else family


def _infer_window(layer, types, attrs, values):
    """A fixed-window pool: the output shape by the core's rules
    (:func:`ovpool.ov_ops.ov_lowering`, :func:`ovpool.ops.onnx_lowering`)."""
    (data,) = types
    spatial = layer.spatial_attr.name
    n_spatial = len(attrs[spatial])
    lead, spatial_dims = _split_nc(data, n_spatial, layer.inputs[0], f"{spatial}={attrs[spatial]}")
    if layer.semantics == "openvino":
        lowering = ov_ops.ov_lowering(
            layer.type,
            lead + spatial_dims,
            _spec.DTYPE_F32,
            _family(layer),
            attrs["kernel"],
            attrs["strides"],
            _per_axis(attrs["pads_begin"]),
            _per_axis(attrs["pads_end"]),
            _per_axis(attrs.get("dilations")),
            attrs["auto_pad"],
            attrs["rounding_type"],
            exclude_pad=attrs.get("exclude-pad", True),
            axis=attrs.get("axis", 0),
            index_dtype=_index_dtype(layer, attrs),
        )
    else:
        lowering = ops.onnx_lowering(
            layer.type,
            lead + spatial_dims,
            _spec.DTYPE_F32,
            _family(layer),
            attrs["kernel_shape"],
            _per_axis(attrs["strides"]),
            _per_axis(attrs["pads"]),
            _per_axis(attrs.get("dilations")),
            attrs["auto_pad"],
            attrs.get("ceil_mode", False),
            **{name: attrs[name] for name in _ONNX_OPTIONS if name in attrs},
        )
    return _output_types(layer, data, attrs, lowering.out_shape)


def _infer_global(layer, types, attrs, values):
    (data,) = types
    if data.shape is None:
        return _output_types(layer, data, attrs, None)
    lead, spatial = _split_nc(data, None, layer.inputs[0])
    lowering = ops.adaptive_lowering(
        lead + spatial, _spec.DTYPE_F32, _family(layer), None, p=attrs["p"], global_pool=True
    )
    return _output_types(layer, data, attrs, lowering.out_shape)


def _infer_adaptive(layer, types, attrs, values):
    data, size = types
    n_spatial = None
    if size.shape is not None:
        if len(size.shape) != 1:
            raise OvpoolValueError(f"output_size must be 1-D, got shape {_fmt(size.shape)}")
        n_spatial = size.shape[0]
    lead, spatial = _split_nc(data, n_spatial, source=f"output_size of shape {_fmt(size.shape)}")
    if values[1] is not None:
        out_spatial = ops.adaptive_lowering(
            lead + spatial,
            _spec.DTYPE_F32,
            _family(layer),
            _int_vector(values[1], size, "output_size"),
            index_dtype=_index_dtype(layer, attrs),
        ).out_shape[2:]
    else:
        out_spatial = (None,) * len(spatial)
    if data.shape is None and n_spatial is None:
        out_shape = None
    else:
        out_shape = lead + tuple(out_spatial)
    return _output_types(layer, data, attrs, out_shape)


def _infer_unpool(layer, types, attrs, values):
    data, indices = types[0], types[1]
    n_spatial = len(attrs["kernel_shape"])
    lead, spatial = _split_nc(data, n_spatial, "X", f"kernel_shape={attrs['kernel_shape']}")
    if (
        indices.shape is not None
        and data.shape is not None
        and len(indices.shape) != len(data.shape)
    ):
        raise OvpoolValueError(
            f"I {_fmt(indices.shape)} must have the shape of X {_fmt(data.shape)}"
        )
    output_shape = None
    if len(types) == 3:
        if values[2] is None:
            return [TensorType(lead + (None,) * n_spatial, data.etype)]
        output_shape = _int_vector(values[2], types[2], "output_shape")
    try:
        *_, out = _kernels.lower_unpool(
            lead + spatial,
            attrs["kernel_shape"],
            _per_axis(attrs["strides"]),
            _per_axis(attrs["pads"]),
            output_shape,
        )
    except ValueError as exc:
        raise OvpoolValueError(str(exc)) from None
    return [TensorType(out, data.etype)]


_INFER = {
    "window": _infer_window,
    "global": _infer_global,
    "adaptive": _infer_adaptive,
    "unpool": _infer_unpool,
}


# How each op runs on numpy arrays: its function of ovpool.ov_ops /
# ovpool.ops, whose keyword arguments are the attributes' Python names.


def _arguments(attrs):
    """The attributes as keyword arguments of the op's function (a list
    attribute left out, [], as None: the function's default)."""
    return {
        name.replace("-", "_"): _per_axis(value) if isinstance(value, list) else value
        for name, value in attrs.items()
    }


def _run_adaptive_avg(inputs, attrs, out=(None,), num_threads=None):
    x, size = inputs
    size = _int_vector(size, None, "output_size")
    return [ov_ops.adaptive_avg_pool(x, size, out=out[0], num_threads=num_threads)]


def _run_adaptive_max(inputs, attrs, out=(None, None), num_threads=None, values_only=False):
    x, size = inputs
    values, indices = ov_ops.adaptive_max_pool(
        x,
        _int_vector(size, None, "output_size"),
        **_arguments(attrs),
        out=out[0],
        out_indices=out[1],
        num_threads=num_threads,
    )
    return [values, indices]


def _run_ov_avg(inputs, attrs, out=(None,), num_threads=None):
    (x,) = inputs
    return [ov_ops.avg_pool(x, **_arguments(attrs), out=out[0], num_threads=num_threads)]


def _run_ov_max(inputs, attrs, out=(None, None), num_threads=None, values_only=False):
    (x,) = inputs
    with_indices = "axis" in attrs and not values_only  # (MaxPool-1 has no indices)
    result = ov_ops.max_pool(
        x,
        **_arguments(attrs),
        return_indices=with_indices,
        out=out[0],
        out_indices=out[1] if with_indices else None,
        num_threads=num_threads,
    )
    if with_indices:
        return list(result)
    return [result, None] if "axis" in attrs else [result]


def _run_onnx_avg(inputs, attrs, out=(None,), num_threads=None):
    (x,) = inputs
    return [ops.avg_pool(x, **_arguments(attrs), out=out[0], num_threads=num_threads)]


def _run_onnx_max(inputs, attrs, out=(None, None), num_threads=None, values_only=False):
    (x,) = inputs
    result = ops.max_pool(
        x,
        **_arguments(attrs),
        return_indices=not values_only,
        out=out[0],
        out_indices=None if values_only else out[1],
        num_threads=num_threads,
    )
    return [result, None] if values_only else list(result)


def _run_lp(inputs, attrs, out=(None,), num_threads=None):
    (x,) = inputs
    return [ops.lp_pool(x, **_arguments(attrs), out=out[0], num_threads=num_threads)]


def _run_global_lp(inputs, attrs, out=(None,), num_threads=None):
    (x,) = inputs
    return [ops.global_lp_pool(x, **_arguments(attrs), out=out[0], num_threads=num_threads)]


def _run_max_unpool(inputs, attrs, out=(None,), num_threads=None):  # (not threaded)
    x, indices = inputs[0], inputs[1]
    output_shape = _int_vector(inputs[2], None, "output_shape") if len(inputs) > 2 else None
    return [ops.max_unpool(x, indices, **_arguments(attrs), output_shape=output_shape, out=out[0])]


_RUN = {
    "AdaptiveAvgPool": _run_adaptive_avg,
    "AdaptiveMaxPool": _run_adaptive_max,
    "AvgPool": _run_ov_avg,
    "MaxPool": _run_ov_max,
    "OnnxAveragePool": _run_onnx_avg,
    "OnnxMaxPool": _run_onnx_max,
    "LpPool": _run_lp,
    "GlobalLpPool": _run_global_lp,
    "MaxUnpool": _run_max_unpool,
}

for _op in _opset.SCHEMA.ops:
    for _version in _op.versions:
        _register(
            _op.type,
            _version.version,
            [Attr.of(a) for a in _version.attrs],
            [i.name for i in _op.inputs],
            [o.name for o in _version.outputs],
            _INFER[_op.form],
            _RUN[_op.type],
            optional_inputs=sum(i.optional for i in _op.inputs),
            value_inputs=tuple(k for k, i in enumerate(_op.inputs) if i.value),
            semantics=_op.semantics,
            doc=_version.doc,
            family=_op.family,
            input_types=tuple(i.types for i in _op.inputs),
            output_defs=_version.outputs,
        )
