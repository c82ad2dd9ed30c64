"""ovpool's op schema (``ovpool/opset.json``), read and checked.

The schema is the one place that says which ops the opset ``"ovpool"`` has
(the OpenVINO extension library's ops) and which stock OpenVINO versions
share their attributes: names, versions, attributes with their kinds and
defaults, ports, and the element types each input takes. ``ovpool.layers``
builds the layer table of the IR reader and runtime from it, the numpy API
takes its element types from it, and the extension library's op table is
generated from it when the library is built
(``ovpool/openvino/_opset_cpp.py``).

This module imports nothing of ovpool, so that the library's build can load
it alone, by its path, from a checkout or an installed package.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

PATH = Path(__file__).resolve().with_name("opset.json")
OPSET = "ovpool"  # the version string of ovpool's own ops in IR

KINDS = ("int", "float", "bool", "str", "ints", "etype")
FORMS = ("window", "adaptive", "global", "unpool")
SEMANTICS = ("openvino", "onnx")
FAMILIES = ("average", "lp", "max", "argmax")


# OpenVINO's element types: IR name -> (bits per element, numpy dtype name or
# None where numpy cannot hold it). "string" has no fixed size.
ELEMENT_TYPES = {
    "boolean": (8, "bool"),
    "bf16": (16, "bfloat16"),
    "f16": (16, "float16"),
    "f32": (32, "float32"),
    "f64": (64, "float64"),
    "i8": (8, "int8"),
    "i16": (16, "int16"),
    "i32": (32, "int32"),
    "i64": (64, "int64"),
    "u8": (8, "uint8"),
    "u16": (16, "uint16"),
    "u32": (32, "uint32"),
    "u64": (64, "uint64"),
    "u1": (1, None),
    "u2": (2, None),
    "u3": (3, None),
    "u4": (4, None),
    "u6": (6, None),
    "i4": (4, None),
    "nf4": (4, None),
    "f4e2m1": (4, None),
    "f8e4m3": (8, None),
    "f8e5m2": (8, None),
    "f8e8m0": (8, None),
    "string": (None, None),
    "dynamic": (None, None),
}


class SchemaError(ValueError):
    """opset.json breaks a rule of its own format."""


@dataclass(frozen=True)
class AttrDef:
    """One attribute as the schema defines it (see ``about`` in opset.json)."""

    key: str
    name: str
    kind: str
    default: object  # None where required
    required: bool
    choices: tuple  # strings; for an etype, the types of its element type set
    minimum: float | None
    per_axis: int
    fill: int
    spatial: bool
    doc: str


@dataclass(frozen=True)
class InputDef:
    name: str
    types: str  # the key of an element type set
    value: bool  # shape inference reads its values
    optional: bool


@dataclass(frozen=True)
class OutputDef:
    name: str
    rule: str  # "data": the data input's type; "attribute": attr's; "fixed": fixed
    attr: str | None  # the IR name of the etype attribute giving its type
    fixed: str | None  # its element type
    types: str | None  # the element type set an attribute's type must be in


@dataclass(frozen=True)
class Version:
    """One version of an op: ``"ovpool"`` or a stock OpenVINO opset."""

    version: str
    doc: str
    attrs: tuple  # of AttrDef
    outputs: tuple  # of OutputDef


@dataclass(frozen=True)
class OpDef:
    type: str
    doc: str
    form: str
    semantics: str
    family: str
    inputs: tuple  # of InputDef
    outputs: tuple  # of OutputDef
    attrs: tuple  # of AttrDef, in IR order
    stock: tuple  # of Version

    @property
    def versions(self):
        """Its stock OpenVINO versions, then ovpool's."""
        return self.stock + (Version(OPSET, self.doc, self.attrs, self.outputs),)


@dataclass(frozen=True)
class Schema:
    element_types: dict  # set key -> tuple of IR element types
    type_text: dict  # set key -> how messages name the set
    ops: tuple  # of OpDef

    def op(self, type_):
        for op in self.ops:
            if op.type == type_:
                return op
        raise KeyError(type_)


def _attr(key, raw, element_types):
    unknown = set(raw) - {
        "name",
        "kind",
        "default",
        "required",
        "choices",
        "minimum",
        "per_axis",
        "fill",
        "spatial",
        "doc",
    }
    if unknown:
        raise SchemaError(f"attribute {key!r}: unknown fields {sorted(unknown)}")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise SchemaError(f"attribute {key!r}: kind {kind!r} is not one of {KINDS}")
    required = bool(raw.get("required", False))
    if required == ("default" in raw):
        raise SchemaError(f"attribute {key!r}: give a default or mark it required")
    choices = raw.get("choices", ())
    if kind == "etype":
        if choices not in element_types:
            raise SchemaError(f"attribute {key!r}: choices must name an element type set")
        choices = element_types[choices]
    default = raw.get("default")
    if kind == "ints" and default not in (None, []):
        raise SchemaError(f"attribute {key!r}: a list attribute defaults to [] or is required")
    if choices and default is not None and default not in choices:
        raise SchemaError(f"attribute {key!r}: its default is not one of its choices")
    return AttrDef(
        key=key,
        name=raw.get("name", key),
        kind=kind,
        default=default,
        required=required,
        choices=tuple(choices),
        minimum=raw.get("minimum"),
        per_axis=int(raw.get("per_axis", 0)),
        fill=int(raw.get("fill", 0)),
        spatial=bool(raw.get("spatial", False)),
        doc=raw.get("doc", ""),
    )


def _outputs(op_type, raws, attrs, element_types):
    outputs = []
    for raw in raws:
        type_, types = raw["type"], raw.get("types")
        if type_ == "data":
            outputs.append(OutputDef(raw["name"], "data", None, None, None))
        elif type_ in attrs:
            if attrs[type_].kind != "etype" or types not in element_types:
                raise SchemaError(
                    f"{op_type}: output {raw['name']} is typed by an etype attribute "
                    "within an element type set ('types')"
                )
            outputs.append(OutputDef(raw["name"], "attribute", attrs[type_].name, None, types))
        elif any(type_ in s for s in element_types.values()):
            outputs.append(OutputDef(raw["name"], "fixed", None, type_, None))
        else:
            raise SchemaError(f"{op_type}: output {raw['name']} has an unknown type {type_!r}")
    return tuple(outputs)


def _op(raw, attributes, element_types):
    type_ = raw["type"]
    for field, allowed in (("form", FORMS), ("semantics", SEMANTICS), ("family", FAMILIES)):
        if raw.get(field) not in allowed:
            raise SchemaError(f"{type_}: {field} {raw.get(field)!r} is not one of {allowed}")
    attrs = []
    for key in raw["attrs"]:
        if key not in attributes:
            raise SchemaError(f"{type_}: no attribute {key!r} in the schema's attributes")
        attrs.append(attributes[key])
    by_key = {a.key: a for a in attrs}
    if len({a.name for a in attrs}) != len(attrs):
        raise SchemaError(f"{type_}: two attributes share a name")
    spatial = [a for a in attrs if a.spatial]
    if len(spatial) > 1 or (raw["form"] in ("window", "unpool")) != bool(spatial):
        raise SchemaError(f"{type_}: a window or unpool op has one spatial attribute, no other op")
    inputs = []
    for item in raw["inputs"]:
        if item["types"] not in element_types:
            raise SchemaError(f"{type_}: input {item['name']} has an unknown type set")
        if inputs and inputs[-1].optional and not item.get("optional"):
            raise SchemaError(f"{type_}: only trailing inputs may be optional")
        inputs.append(
            InputDef(
                item["name"], item["types"], bool(item.get("value")), bool(item.get("optional"))
            )
        )
    outputs = _outputs(type_, raw["outputs"], by_key, element_types)
    stock = []
    for version, variant in raw.get("stock", {}).items():
        without = set(variant.get("without", ()))
        narrowed = variant.get("choices", {})
        if not without <= set(by_key) or not set(narrowed) <= set(by_key):
            raise SchemaError(f"{type_}-{version}: names an attribute the op does not have")
        v_attrs = []
        for a in attrs:
            if a.key in without:
                continue
            if a.key in narrowed:
                choices = tuple(narrowed[a.key])
                if not set(choices) <= set(a.choices):
                    raise SchemaError(f"{type_}-{version}: {a.key}'s choices must narrow")
                a = AttrDef(**{**a.__dict__, "choices": choices})
            v_attrs.append(a)
        names = variant.get("outputs")
        v_outputs = outputs if names is None else tuple(o for o in outputs if o.name in names)
        stock.append(Version(version, variant.get("doc", raw["doc"]), tuple(v_attrs), v_outputs))
    return OpDef(
        type=type_,
        doc=raw["doc"],
        form=raw["form"],
        semantics=raw["semantics"],
        family=raw["family"],
        inputs=tuple(inputs),
        outputs=outputs,
        attrs=tuple(attrs),
        stock=tuple(stock),
    )


def load(path=PATH):
    """The :class:`Schema` of ``opset.json``; :class:`SchemaError` where it
    breaks a rule of its format."""
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    element_types = {k: tuple(v["types"]) for k, v in raw["element_types"].items()}
    for key, types in element_types.items():
        unknown = [t for t in types if ELEMENT_TYPES.get(t, (None, None))[1] is None]
        if unknown:
            raise SchemaError(f"element types {key!r}: {unknown} are no numpy-held IR types")
    type_text = {k: v["text"] for k, v in raw["element_types"].items()}
    attributes = {k: _attr(k, v, element_types) for k, v in raw["attributes"].items()}
    ops = tuple(_op(op, attributes, element_types) for op in raw["ops"])
    if len({op.type for op in ops}) != len(ops):
        raise SchemaError("two ops share a type name")
    return Schema(element_types, type_text, ops)


SCHEMA = load()
ELEMENT_TYPE_SETS = SCHEMA.element_types


def numpy_names(key):
    """The numpy dtype names of an element type set."""
    return tuple(ELEMENT_TYPES[t][1] for t in ELEMENT_TYPE_SETS[key])
