"""ovpool's op schema (ovpool/opset.json) is the one place that says what an op
of the opset "ovpool" is: the layer table of the IR runtime and the extension
library's ops (whose C++ table is generated from it) both come from it, and
the element types every front door takes are its sets."""

from __future__ import annotations

import json
import re
from xml.etree import ElementTree

import numpy as np
import pytest

import ovpool
from ovpool import _opset, layers
from ovpool.openvino import _opset_cpp

SCHEMA = _opset.SCHEMA
OPS = [op.type for op in SCHEMA.ops]


def test_the_layer_table_is_the_schema():
    """Every version the schema lists is a layer of the table with the
    schema's attributes (names, kinds, defaults, choices), ports and
    element types, and nothing else is a pool layer."""
    pools = {k for k in layers.LAYERS if k[0] not in ("Parameter", "Const", "Result", "Convert")}
    listed = set()
    for op in SCHEMA.ops:
        for version in op.versions:
            listed.add((op.type, version.version))
            entry = layers.get(op.type, version.version)
            assert [a.name for a in entry.attrs] == [a.name for a in version.attrs]
            for a, d in zip(entry.attrs, version.attrs):
                assert (a.kind, a.choices, a.per_axis, a.fill, a.required) == (
                    d.kind,
                    d.choices,
                    d.per_axis,
                    d.fill,
                    d.required,
                )
                assert a.required or a.default == d.default
            assert entry.inputs == tuple(i.name for i in op.inputs)
            assert entry.outputs == tuple(o.name for o in version.outputs)
            assert entry.input_types == tuple(i.types for i in op.inputs)
    assert pools == listed
    assert layers.MAX_TYPES == SCHEMA.element_types["max"]
    assert layers.FLOAT_TYPES == SCHEMA.element_types["float"]


def _load(raw, folder):
    path = folder / "opset.json"
    path.write_text(json.dumps(raw))
    return _opset.load(path)


def test_the_generated_op_table_follows_the_schema(tmp_path):
    """The C++ table is rendered from the schema: a new attribute is one edit
    of opset.json (its lowering aside), and lands in its op's row."""
    plain = _opset_cpp.render(SCHEMA)
    for op in SCHEMA.ops:
        assert f'{{"{op.type}", Form::{op.form}, ovpool::Semantics::{op.semantics}' in plain
        row = re.search(rf"kAttrs_{op.type}\[\] = \{{(.*?)\n\}};", plain, re.S)
        names = re.findall(r'^\s*\{"([^"]+)", AttrKind::', row.group(1), re.M) if row else []
        assert names == [a.name for a in op.attrs], op.type
    # each element type a data input takes is the kernel core's type of that name
    for t in SCHEMA.element_types["max"]:
        assert f"{{ov::element::Type_t::{t}, ovpool::DType::{t}}}" in plain
    raw = json.loads(_opset.PATH.read_text())
    raw["attributes"]["sharpness"] = {"kind": "float", "default": 0.5}
    raw["ops"][OPS.index("MaxPool")]["attrs"].append("sharpness")
    edited = _opset_cpp.render(_load(raw, tmp_path))
    row = re.search(r"kAttrs_MaxPool\[\] = \{(.*?)\n\};", edited, re.S).group(1)
    assert (
        row.strip()
        .splitlines()[-1]
        .strip()
        .startswith('{"sharpness", AttrKind::float_, false, 0, 0.5,')
    )


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda r: r["attributes"]["axis"].update(kind="long"), "kind 'long'"),
        (lambda r: r["attributes"]["axis"].update(required=True), "default or mark it required"),
        (lambda r: r["attributes"]["p"].update(choices=[1.0, 3.0]), "not one of its choices"),
        (lambda r: r["ops"][OPS.index("LpPool")]["attrs"].append("q"), "no attribute 'q'"),
        (lambda r: r["attributes"]["kernel"].update(spatial=False), "one spatial attribute"),
        (
            lambda r: r["ops"][OPS.index("MaxPool")]["outputs"][1].update(type="axis"),
            "typed by an etype attribute",
        ),
        (lambda r: r["element_types"]["max"]["types"].append("u4"), "no numpy-held IR types"),
        (
            lambda r: r["ops"][OPS.index("AvgPool")]["stock"]["opset1"].update(
                choices={"rounding_type": ["floor", "round"]}
            ),
            "must narrow",
        ),
        (lambda r: r["ops"][OPS.index("LpPool")].update(family="median"), "family 'median'"),
    ],
)
def test_a_schema_that_breaks_its_rules_is_refused(edit, message, tmp_path):
    raw = json.loads(_opset.PATH.read_text())
    edit(raw)
    with pytest.raises(_opset.SchemaError, match=re.escape(message)):
        _load(raw, tmp_path)


CANDIDATES = [
    "float16",
    "float32",
    "float64",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "bool",
    "complex64",
]


@pytest.mark.parametrize("name", CANDIDATES)
def test_the_numpy_api_takes_the_schemas_element_types(name):
    x = np.ones((1, 2, 4, 4), dtype=name)
    for function, key in ((ovpool.max_pool, "max"), (ovpool.avg_pool, "float")):
        names = _opset.numpy_names(key)
        if name in names:
            assert function(x, 2).dtype == x.dtype
        else:
            with pytest.raises(ovpool.OvpoolTypeError) as info:
                function(x, 2)
            assert str(info.value).endswith("expected one of " + ", ".join(names))


def test_the_layer_table_takes_the_schemas_element_types():
    for etype in layers.NUMERIC_TYPES:
        for type_, version, allowed in (
            ("MaxPool", "opset8", SCHEMA.element_types["max"]),
            ("AvgPool", "opset1", SCHEMA.element_types["float"]),
            ("MaxUnpool", "ovpool", SCHEMA.element_types["max"]),
        ):
            entry = layers.get(type_, version)
            attrs = entry.attributes(**{entry.spatial_attr.name: [2, 2], "strides": [2, 2]})
            types = [layers.TensorType((1, 2, 4, 4), etype)]
            if type_ == "MaxUnpool":
                types.append(layers.TensorType((1, 2, 4, 4), "i64"))
            if etype in allowed:
                entry.infer(types, attrs)
            else:
                with pytest.raises(layers.UnsupportedLayer, match=f"not {etype}$"):
                    entry.infer(types, attrs)


# --------------------------------------------------------------------------
# the library's ops are the schema's
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ov_ops_made(ov_extension):
    ov = pytest.importorskip("openvino")
    from openvino import opset8 as o8

    import ovpool.openvino as ovp

    x = o8.parameter([1, 2, 8, 8], np.float32, name="x")
    size = o8.constant(np.array([3, 3], np.int64))
    made = {
        "AdaptiveAvgPool": ovp.make_op("AdaptiveAvgPool", [x, size]),
        "AdaptiveMaxPool": ovp.make_op("AdaptiveMaxPool", [x, size], index_element_type="i32"),
        "AvgPool": ovp.make_op("AvgPool", [x], kernel=[2, 2], strides=[2, 2]),
        "MaxPool": ovp.make_op("MaxPool", [x], kernel=[2, 2], strides=[2, 2]),
        "OnnxAveragePool": ovp.make_op("OnnxAveragePool", [x], kernel_shape=[2, 2]),
        "OnnxMaxPool": ovp.make_op("OnnxMaxPool", [x], kernel_shape=[2, 2]),
        "LpPool": ovp.make_op("LpPool", [x], kernel_shape=[2, 2], p=3.0),
        "GlobalLpPool": ovp.make_op("GlobalLpPool", [x]),
    }
    values, indices = made["OnnxMaxPool"].outputs()
    made["MaxUnpool"] = ovp.make_op("MaxUnpool", [values, indices], kernel_shape=[2, 2])
    return ov, x, made


def test_the_library_ops_have_the_schemas_attributes_ports_and_types(ov_ops_made, tmp_path):
    """Each library op visits the schema's attributes in the schema's order
    (what ov.save_model writes), has its ports, and types its outputs by the
    schema's rules; ovpool's IR reader reads the saved file back to the same
    attributes."""
    ov, x, made = ov_ops_made
    assert sorted(made) == sorted(OPS)
    results = []
    for name, node in made.items():
        op = SCHEMA.op(name)
        assert list(node.get_attributes()) == [a.name for a in op.attrs], name
        assert node.get_output_size() == len(op.outputs)
        attributes = node.get_attributes()
        for j, o in enumerate(op.outputs):
            want = {"data": "f32", "fixed": o.fixed, "attribute": attributes.get(o.attr)}[o.rule]
            assert node.get_output_element_type(j).get_type_name() == want, (name, o.name)
        node.set_friendly_name(name)
        results += [node.output(j) for j in range(node.get_output_size())]
    path = tmp_path / "all.xml"
    ov.save_model(ov.Model(results, [x]), path)
    tree = ElementTree.parse(path)
    read = ovpool.ir.read_model(path)
    by_name = {layer.name: layer for layer in read.layers}
    for element in tree.iter("layer"):
        name = element.get("name")
        if element.get("version") != "ovpool":
            continue
        data = element.find("data")
        written = list(data.attrib) if data is not None else []
        assert written == [a.name for a in SCHEMA.op(element.get("type")).attrs], name
        layer = by_name[name]
        assert layer.entry is layers.get(element.get("type"), "ovpool")
        assert layer.runs_on_ovpool


@pytest.mark.parametrize("etype", ["f16", "bf16", "f32", "f64", "i8", "u8", "i16", "i32", "u32"])
def test_the_library_ops_take_the_schemas_element_types(ov_ops_made, etype):
    """The library's own check (its op read from IR, past the layer table's)
    takes the schema's element types and names the set when it refuses."""
    ov, _, _ = ov_ops_made
    from openvino import opset8 as o8

    import ovpool.openvino as ovp

    x = o8.parameter([1, 2, 4, 4], getattr(ov.Type, etype))
    for name, allowed, attrs in (
        ("MaxPool", "max", {"kernel": [2, 2], "strides": [2, 2]}),
        ("OnnxAveragePool", "float", {"kernel_shape": [2, 2]}),
        ("LpPool", "float", {"kernel_shape": [2, 2]}),
    ):
        entry = layers.get(name, "ovpool")
        attrs = ovp._materialize(entry, entry.attributes(**attrs))
        if etype in SCHEMA.element_types[allowed]:
            node = ovp._new_node(entry, attrs, [x.output(0)])
            assert node.get_output_element_type(0).get_type_name() == etype
        else:
            text = f"ovpool runs {name} on {SCHEMA.type_text[allowed]} "
            with pytest.raises(RuntimeError, match=re.escape(text)):
                ovp._new_node(entry, attrs, [x.output(0)])
