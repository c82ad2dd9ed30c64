"""The layer table (ovpool.layers): schema, parsing, defaults, shape inference
with dynamic dims, lookup of IR versions, and run() against the numpy API.
No OpenVINO needed (tests/test_ir_openvino.py checks the table against it)."""

import subprocess
import sys

import numpy as np
import pytest

import ovpool
from ovpool import layers, ops, ov_ops
from ovpool.layers import TensorType, UnknownLayer, UnsupportedLayer

OV_ENTRIES = {
    ("Parameter", "opset1"),
    ("Const", "opset1"),
    ("Result", "opset1"),
    ("Convert", "opset1"),
    ("AdaptiveAvgPool", "opset8"),
    ("AdaptiveMaxPool", "opset8"),
    ("AvgPool", "opset1"),
    ("AvgPool", "opset14"),
    ("AvgPool", "opset16"),
    ("MaxPool", "opset1"),
    ("MaxPool", "opset8"),
    ("MaxPool", "opset14"),
}
OVPOOL_ENTRIES = {
    (t, "ovpool")
    for t in (
        "AdaptiveAvgPool",
        "AdaptiveMaxPool",
        "AvgPool",
        "MaxPool",
        "OnnxAveragePool",
        "OnnxMaxPool",
        "LpPool",
        "GlobalLpPool",
        "MaxUnpool",
    )
}


def test_the_table_has_every_entry():
    assert set(layers.LAYERS) == OV_ENTRIES | OVPOOL_ENTRIES


def test_no_openvino_import():
    code = (
        "import sys, ovpool.layers, ovpool.ir, ovpool._check, ovpool.cli; "
        "assert 'openvino' not in sys.modules, 'openvino imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_attribute_names_as_written_in_ir():
    avg = layers.get("AvgPool", "opset16")
    assert avg.attr_names == (
        "kernel",
        "strides",
        "pads_begin",
        "pads_end",
        "exclude-pad",
        "rounding_type",
        "auto_pad",
        "dilations",
    )
    assert avg.attr("exclude_pad").name == "exclude-pad"
    assert layers.get("MaxPool", "opset14").attr_names[-2:] == ("index_element_type", "axis")
    assert layers.get("MaxPool", "opset1").attr_names == (
        "kernel",
        "strides",
        "pads_begin",
        "pads_end",
        "rounding_type",
        "auto_pad",
    )
    assert layers.get("AdaptiveMaxPool", "opset8").attr_names == ("index_element_type",)
    assert layers.get("AdaptiveAvgPool", "opset8").attr_names == ()


def test_reader_defaults():
    """The values OpenVINO's reader applies for missing attributes."""
    attrs = layers.get("AvgPool", "opset1").parse_attributes({"kernel": "3, 3", "strides": "1,1"})
    assert attrs == {
        "kernel": [3, 3],
        "strides": [1, 1],
        "pads_begin": [],
        "pads_end": [],
        "exclude-pad": True,
        "rounding_type": "floor",
        "auto_pad": "explicit",
    }
    attrs = layers.get("MaxPool", "opset8").parse_attributes({"kernel": "2", "strides": "2"})
    assert attrs["index_element_type"] == "i64" and attrs["axis"] == 0
    assert attrs["dilations"] == [] and attrs["rounding_type"] == "floor"
    assert layers.get("AdaptiveMaxPool", "opset8").parse_attributes({}) == {
        "index_element_type": "i64"
    }


@pytest.mark.parametrize("key", sorted(OV_ENTRIES | OVPOOL_ENTRIES))
def test_required_attributes(key):
    entry = layers.LAYERS[key]
    for attr in entry.attrs:
        if attr.required:
            raw = {
                a.name: a.format(a.placeholder())
                for a in entry.attrs
                if a.required and a.name != attr.name
            }
            with pytest.raises(ovpool.OvpoolValueError, match=f"'{attr.name}' is missing"):
                entry.parse_attributes(raw)


@pytest.mark.parametrize("key", sorted(OV_ENTRIES | OVPOOL_ENTRIES))
def test_defaults_for_visit_attributes(key):
    """Typed, never an empty list (OpenVINO's attribute visitor refuses one)."""
    entry = layers.LAYERS[key]
    defaults = entry.defaults(n_spatial=3)
    assert list(defaults) == list(entry.attr_names)
    for attr in entry.attrs:
        value = defaults[attr.name]
        if attr.kind == "ints":
            assert isinstance(value, list) and value and all(type(v) is int for v in value)
            if attr.per_axis:
                assert len(value) == 3 * attr.per_axis and set(value) == {attr.fill}
        elif attr.kind == "bool":
            assert type(value) is bool
        elif attr.kind == "int":
            assert type(value) is int
        elif attr.kind == "float":
            assert type(value) is float
        elif attr.kind in ("str", "etype"):
            assert type(value) is str
    # the defaults round-trip through IR strings
    formatted = entry.format_attributes(
        {k: v for k, v in defaults.items() if entry.attr(k).kind != "pshape"}
    )
    parsed = (
        entry.parse_attributes(formatted) if all(a.kind != "pshape" for a in entry.attrs) else None
    )
    if parsed is not None:
        assert parsed == defaults


@pytest.mark.parametrize(
    "kind, text, value",
    [
        ("ints", "3, 3", [3, 3]),
        ("ints", "3,3", [3, 3]),
        ("ints", " 1 , 2 ,3 ", [1, 2, 3]),
        ("ints", "", []),
        ("int", "-2", -2),
        ("bool", "true", True),
        ("bool", "FALSE", False),
        ("bool", "1", True),
        ("float", "0.10000000000000001", 0.1),
        ("shape", "", []),
        ("shape", "2, 3", [2, 3]),
    ],
)
def test_parse_kinds(kind, text, value):
    attr = layers.Attr("a", kind)
    assert attr.parse(text) == value
    if kind != "float":
        assert attr.parse(attr.format(value)) == value


def test_parse_partial_shapes():
    attr = layers.Attr("shape", "pshape")
    assert attr.parse("?,3,1..64,-1") == (
        layers.Dim(0, None),
        3,
        layers.Dim(1, 64),
        layers.Dim(0, None),
    )
    assert attr.parse("...") is None
    assert attr.parse("") == ()
    assert attr.parse("2..") == (layers.Dim(2, None),)
    assert attr.parse("..8") == (layers.Dim(0, 8),)
    assert attr.parse("4..4") == (4,)
    assert attr.format(attr.parse("?,3,1..64")) == "?,3,1..64"
    for bad in ("1,-2", "a", "5..2", "1,,2"):
        with pytest.raises(ovpool.OvpoolValueError):
            attr.parse(bad)


def test_enums_are_case_insensitive_and_canonical():
    entry = layers.get("AvgPool", "opset14")
    attrs = entry.parse_attributes(
        {"kernel": "2", "strides": "2", "auto_pad": "SAME_UPPER", "rounding_type": "Ceil_Torch"}
    )
    assert attrs["auto_pad"] == "same_upper" and attrs["rounding_type"] == "ceil_torch"
    with pytest.raises(ovpool.OvpoolValueError, match=r"must be one of floor, ceil$"):
        layers.get("AvgPool", "opset1").parse_attributes(
            {"kernel": "2", "strides": "2", "rounding_type": "ceil_torch"}
        )
    onnx = layers.get("OnnxMaxPool", "ovpool").parse_attributes(
        {"kernel_shape": "2", "auto_pad": "same_lower"}
    )
    assert onnx["auto_pad"] == "SAME_LOWER"


def test_python_attributes():
    entry = layers.get("AvgPool", "ovpool")
    attrs = entry.attributes(
        kernel=(3, 3), strides=np.array([2, 2]), exclude_pad=False, rounding_type="CEIL_TORCH"
    )
    assert attrs["exclude-pad"] is False and attrs["kernel"] == [3, 3]
    assert attrs["strides"] == [2, 2] and attrs["rounding_type"] == "ceil_torch"
    assert entry.attributes(**{"exclude-pad": True, "kernel": [1], "strides": [1]})["exclude-pad"]
    with pytest.raises(ovpool.OvpoolValueError, match="unknown attributes \\['size'\\]"):
        entry.attributes(kernel=[1], strides=[1], size=3)
    with pytest.raises(ovpool.OvpoolValueError, match="'strides' is missing"):
        entry.attributes(kernel=[1])
    with pytest.raises(ovpool.OvpoolTypeError, match="kernel must be a list of ints"):
        entry.attributes(kernel="3, 3", strides=[1])
    with pytest.raises(ovpool.OvpoolTypeError, match="exclude-pad must be a bool"):
        entry.attributes(kernel=[3], strides=[1], exclude_pad="yes")


# --------------------------------------------------------------------------
# lookup
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "type_, version, expected",
    [
        ("MaxPool", "opset1", ("MaxPool", "opset1")),
        ("MaxPool", "opset7", ("MaxPool", "opset1")),
        ("MaxPool", "opset9", ("MaxPool", "opset8")),
        ("MaxPool", "opset16", ("MaxPool", "opset14")),
        ("AvgPool", "opset13", ("AvgPool", "opset1")),
        ("AvgPool", "opset15", ("AvgPool", "opset14")),
        ("AvgPool", "opset16", ("AvgPool", "opset16")),
        ("AdaptiveMaxPool", "opset12", ("AdaptiveMaxPool", "opset8")),
        ("Parameter", "opset17", ("Parameter", "opset1")),
        ("Const", "opset3", ("Const", "opset1")),
        ("OnnxMaxPool", "ovpool", ("OnnxMaxPool", "ovpool")),
        ("Convolution", "opset1", None),
        ("ReLU", "opset1", None),
    ],
)
def test_lookup(type_, version, expected):
    entry = layers.lookup(type_, version)
    assert (entry.key if entry else None) == expected


@pytest.mark.parametrize(
    "type_, version",
    [
        ("Relu", "opset1"),
        ("Constant", "opset1"),
        ("MaxPool", "opset17"),
        ("MaxPool", "opset0"),
        ("MaxPool", "opset99"),
        ("MaxPool", "extension"),
        ("AdaptiveAvgPool", "opset7"),
        ("Convolution", "ovpool"),
        ("FancyPool", "opset8"),
    ],
)
def test_lookup_unknown(type_, version):
    with pytest.raises(UnknownLayer):
        layers.lookup(type_, version)


# --------------------------------------------------------------------------
# shape inference
# --------------------------------------------------------------------------


def infer(key, shapes, attrs=None, values=None, etypes=None):
    entry = layers.LAYERS[key]
    etypes = etypes or ["f32"] * len(shapes)
    attrs = entry.attributes(**(attrs or {}))
    return entry.infer([TensorType(s, e) for s, e in zip(shapes, etypes)], attrs, values)


def test_infer_max_pool_dynamic_dims():
    out = infer(
        ("MaxPool", "opset8"),
        [(None, 3, 13, None)],
        dict(
            kernel=[3, 3],
            strides=[2, 2],
            pads_begin=[1, 1],
            pads_end=[1, 1],
            index_element_type="i32",
        ),
    )
    assert out == [TensorType((None, 3, 7, None), "f32"), TensorType((None, 3, 7, None), "i32")]


def test_infer_same_upper_dynamic_and_static():
    attrs = dict(kernel=[3], strides=[2], auto_pad="same_upper")
    assert infer(("AvgPool", "opset1"), [(2, 4, 13)], attrs)[0].shape == (2, 4, 7)
    assert infer(("AvgPool", "opset1"), [(2, 4, None)], attrs)[0].shape == (2, 4, None)


def test_infer_dynamic_rank():
    out = infer(("MaxPool", "opset1"), [None], dict(kernel=[2, 2, 2], strides=[1, 1, 1]))
    assert out == [TensorType((None, None, None, None, None), "f32")]
    out = infer(
        ("AdaptiveAvgPool", "opset8"),
        [None, (2,)],
        values=[None, np.array([3, 4])],
        etypes=["f16", "i64"],
    )
    assert out == [TensorType((None, None, 3, 4), "f16")]


def test_infer_adaptive_without_the_value():
    out = infer(("AdaptiveMaxPool", "opset8"), [(1, 2, 9, 9), (2,)], etypes=["f32", "i32"])
    assert out == [TensorType((1, 2, None, None), "f32"), TensorType((1, 2, None, None), "i64")]


def test_infer_rounding_ceil_and_ceil_torch():
    attrs = dict(kernel=[2, 2], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])
    ceil = infer(("MaxPool", "opset1"), [(1, 2, 5, 5)], dict(attrs, rounding_type="ceil"))
    assert ceil[0].shape == (1, 2, 4, 4)
    torch_ceil = infer(
        ("MaxPool", "opset14"), [(1, 2, 5, 5)], dict(attrs, rounding_type="ceil_torch")
    )
    assert torch_ceil[0].shape == (1, 2, 3, 3)


def test_infer_unsupported_element_types():
    with pytest.raises(UnsupportedLayer, match="not i32"):
        infer(("AvgPool", "opset1"), [(1, 1, 4)], dict(kernel=[2], strides=[2]), etypes=["i32"])
    assert (
        infer(("MaxPool", "opset1"), [(1, 1, 4)], dict(kernel=[2], strides=[2]), etypes=["u8"])[
            0
        ].etype
        == "u8"
    )
    with pytest.raises(UnsupportedLayer):
        infer(
            ("MaxPool", "opset8"),
            [(1, 1, 4)],
            dict(kernel=[2], strides=[2], index_element_type="u8"),
        )


def test_infer_onnx_and_max_unpool():
    out = infer(
        ("OnnxMaxPool", "ovpool"),
        [(1, 1, 5, 5)],
        dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=True),
    )
    assert out == [TensorType((1, 1, 3, 3), "f32"), TensorType((1, 1, 3, 3), "i64")]
    out = infer(
        ("MaxUnpool", "ovpool"),
        [(1, 1, 2, 2), (1, 1, 2, 2)],
        dict(kernel_shape=[2, 2], strides=[2, 2]),
        etypes=["f32", "i64"],
    )
    assert out == [TensorType((1, 1, 4, 4), "f32")]
    out = infer(
        ("MaxUnpool", "ovpool"),
        [(1, 1, 2, 2), (1, 1, 2, 2), (4,)],
        dict(kernel_shape=[2, 2], strides=[2, 2]),
        values=[None, None, np.array([1, 1, 5, 5])],
        etypes=["f32", "i64", "i64"],
    )
    assert out == [TensorType((1, 1, 5, 5), "f32")]
    assert infer(("GlobalLpPool", "ovpool"), [(2, 3, 4, None)])[0].shape == (2, 3, 1, 1)


# --------------------------------------------------------------------------
# run() delegates to the numpy API
# --------------------------------------------------------------------------


def run(key, inputs, **attrs):
    entry = layers.LAYERS[key]
    return entry.run(inputs, entry.attributes(**attrs))


def test_run_ov_entries(rng):
    x = rng.standard_normal((2, 3, 11, 9)).astype(np.float32)
    got = run(
        ("AvgPool", "opset16"),
        [x],
        kernel=[3, 2],
        strides=[2, 1],
        pads_begin=[1, 0],
        pads_end=[1, 1],
        exclude_pad=False,
        rounding_type="ceil_torch",
        dilations=[1, 2],
    )
    want = ov_ops.avg_pool(
        x,
        [3, 2],
        [2, 1],
        [1, 0],
        [1, 1],
        exclude_pad=False,
        rounding_type="ceil_torch",
        dilations=[1, 2],
    )
    np.testing.assert_array_equal(got[0], want)
    got = run(
        ("MaxPool", "opset14"), [x], kernel=[2, 2], strides=[2, 2], axis=2, index_element_type="i32"
    )
    want = ov_ops.max_pool(x, [2, 2], [2, 2], axis=2, index_element_type="i32")
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype
    got = run(("MaxPool", "opset1"), [x], kernel=[2, 2], strides=[2, 2])
    assert len(got) == 1
    got = run(
        ("AdaptiveMaxPool", "ovpool"), [x, np.array([4, 4], np.int32)], index_element_type="i32"
    )
    want = ovpool.adaptive_max_pool(x, (4, 4), index_dtype=np.int32)
    np.testing.assert_array_equal(got[1], want[1])


def test_run_onnx_entries(rng):
    x = rng.standard_normal((1, 2, 7, 8)).astype(np.float32)
    common = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 0])
    y, i = run(("OnnxMaxPool", "ovpool"), [x], storage_order=1, ceil_mode=True, **common)
    wy, wi = ops.max_pool(
        x,
        (3, 3),
        strides=(2, 2),
        pads=(1, 1, 1, 0),
        storage_order=1,
        ceil_mode=True,
        return_indices=True,
    )
    np.testing.assert_array_equal(y, wy)
    np.testing.assert_array_equal(i, wi)
    (a,) = run(("OnnxAveragePool", "ovpool"), [x], count_include_pad=True, **common)
    np.testing.assert_array_equal(
        a, ops.avg_pool(x, (3, 3), strides=(2, 2), pads=(1, 1, 1, 0), count_include_pad=True)
    )
    (lp,) = run(("LpPool", "ovpool"), [x], p=3.0, **common)
    np.testing.assert_array_equal(
        lp, ops.lp_pool(x, (3, 3), p=3, strides=(2, 2), pads=(1, 1, 1, 0))
    )
    (g,) = run(("GlobalLpPool", "ovpool"), [x], p=1.5)
    np.testing.assert_array_equal(g, ops.global_lp_pool(x, p=1.5))
    y, i = ops.max_pool(x, (2, 2), strides=(2, 2), return_indices=True)
    (u,) = run(
        ("MaxUnpool", "ovpool"),
        [y, i, np.array([1, 2, 7, 8])],
        kernel_shape=[2, 2],
        strides=[2, 2],
        indices_relative_to="output_shape",
    )
    np.testing.assert_array_equal(
        u,
        ops.max_unpool(
            y,
            i,
            (2, 2),
            strides=(2, 2),
            output_shape=(1, 2, 7, 8),
            indices_relative_to="output_shape",
        ),
    )


def test_run_convert():
    x = np.array([2.7, -2.7, 0.0, np.nan], np.float32)
    (i,) = run(("Convert", "opset1"), [x[:3]], destination_type="i32")
    np.testing.assert_array_equal(i, [2, -2, 0])  # truncation toward zero, as OpenVINO
    (b,) = run(("Convert", "opset1"), [x], destination_type="boolean")
    np.testing.assert_array_equal(b, [True, True, False, True])
    (h,) = run(("Convert", "opset1"), [np.float16([1.5])], destination_type="f32")
    assert h.dtype == np.float32


def test_element_helpers():
    assert layers.element_nbytes("u3", 9) == 6 and layers.element_nbytes("u6", 5) == 6
    assert layers.element_nbytes("u1", 9) == 2 and layers.element_nbytes("nf4", 5) == 3
    assert layers.element_nbytes("f8e4m3", 5) == 5 and layers.element_nbytes("string", 5) is None
    assert layers.numpy_dtype("u4") is None
    assert layers.numpy_dtype("boolean") == np.bool_
    assert layers.element_type_of(np.float16) == "f16"
    assert layers.numpy_dtype("bf16").itemsize in (2, 4)
