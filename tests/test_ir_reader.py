"""ovpool.ir without OpenVINO: the recorded examples, the Model API, constants of
every element type, dynamic and bounded shapes, unsupported layers, ovpool's
own opset, and the deviations from OpenVINO's CPU plugin against PyTorch."""

import glob
import os

import numpy as np
import pytest
from ir_helpers import IR

import ovpool
from ovpool import _check, ir, ops, ov_ops

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "ir_examples", "*.xml")))


def line_of(path, needle):
    text = open(path).read()
    return text.count("\n", 0, text.index(needle)) + 1


# --------------------------------------------------------------------------
# ir_examples/ check themselves against the recorded outputs
# --------------------------------------------------------------------------


def test_there_are_examples():
    names = {os.path.basename(p)[:-4] for p in EXAMPLES}
    assert {
        "adaptive_avg_pool_8",
        "adaptive_max_pool_8_i32",
        "avg_pool_1",
        "avg_pool_14",
        "avg_pool_16",
        "max_pool_1",
        "max_pool_8",
        "max_pool_14",
        "dynamic_shape",
        "compressed_consts",
        "chain",
        "multi_output",
        "cnn_openvino_route",
    } <= names
    total = sum(os.path.getsize(p) for p in glob.glob(os.path.join(ROOT, "ir_examples", "*")))
    assert total < 1 << 20


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: os.path.basename(p)[:-4])
def test_example_matches_its_recording(path):
    row = _check.check_model(path, use_openvino=False, repeat=1)
    recording = _check.load_recording(path)
    assert recording is not None and recording.inputs
    if recording.meta.get("openvino_route"):
        assert row.status == "openvino-route", row
        assert "Convolution" in row.note
    else:
        assert row.status == "ok", row
        assert row.reference.startswith("recorded")


def test_examples_cover_every_openvino_layer_version():
    seen = set()
    for path in EXAMPLES:
        for layer in ir.read_model(path).layers:
            if layer.entry is not None:
                seen.add(layer.entry.key)
    assert {key for key in ovpool.layers.LAYERS if key[1] != "ovpool"} <= seen


# --------------------------------------------------------------------------
# The Model API
# --------------------------------------------------------------------------


def example(name):
    return os.path.join(ROOT, "ir_examples", name + ".xml")


def test_model_description():
    model = ir.read_model(example("multi_output"))
    assert [(i.name, i.shape, i.dtype, i.element_type) for i in model.inputs] == [
        ("x", (1, 3, 10, 10), np.float32, "f32"),
        ("h", (2, 2, 9), np.float16, "f16"),
    ]
    assert [o.name for o in model.outputs] == [
        "avg_f16",
        "max_indices",
        "adaptive_values",
        "max_values",
        "x",
    ]
    assert model.outputs[4].names == ("x", "x_copy") == model.inputs[0].names
    assert [o.element_type for o in model.outputs] == ["f16", "i32", "f16", "f32", "f32"]
    assert model.outputs[1].shape == (1, 3, 5, 5)
    kinds = {(layer.type, layer.version) for layer in model.layers}
    assert ("MaxPool", "opset8") in kinds and ("AvgPool", "opset1") in kinds
    avg = next(layer for layer in model.layers if layer.type == "AvgPool")
    assert avg.attributes["exclude-pad"] is False and avg.attributes["kernel"] == [3]
    assert avg.raw_attributes["exclude-pad"] == "false"
    assert avg.runs_on_ovpool and model.runs_on_ovpool
    assert "multi_output.xml" in repr(model)


def test_inputs_by_position_and_by_name():
    model = ir.read_model(example("multi_output"))
    rec = _check.load_recording(example("multi_output"))
    by_position = model(*rec.inputs)
    by_name = model({"h": rec.inputs[1], "x": rec.inputs[0]})
    for a, b in zip(by_position, by_name):
        np.testing.assert_array_equal(a, b)
    assert model.run(*rec.inputs)[0].shape == by_position[0].shape


def test_outputs_are_fresh_arrays():
    model = ir.read_model(example("multi_output"))
    x, h = _check.load_recording(example("multi_output")).inputs
    outputs = model(x, h)
    assert outputs[4] is not x and np.array_equal(outputs[4], x)
    assert all(o.flags.writeable for o in outputs)
    outputs[4][...] = 0
    assert x.any()


def test_dynamic_and_bounded_dims_are_resolved_per_call(rng):
    model = ir.read_model(example("dynamic_shape"))
    (info,) = model.inputs
    assert info.shape == (None, 3, None, None)
    assert info.bounds == ((0, None), (3, 3), (8, 32), (8, 32))
    assert info.shape_str() == "[?,3,8..32,8..32]"
    assert model.outputs[1].shape == (None, 3, 4, 4)
    # twice over: the second round takes the output types inferred in the first
    for shape in [(1, 3, 8, 8), (5, 3, 32, 9), (2, 3, 13, 21)] * 2:
        x = rng.standard_normal(shape).astype(np.float32)
        avg, adaptive = model(x)
        np.testing.assert_array_equal(
            avg, ov_ops.avg_pool(x, [3, 3], [2, 2], auto_pad="same_upper")
        )
        np.testing.assert_array_equal(adaptive, ovpool.adaptive_avg_pool(x, (4, 4)))
    with pytest.raises(ovpool.IRError, match=r"got \[1, 3, 33, 8\]"):
        model(np.zeros((1, 3, 33, 8), np.float32))


def test_same_pads_written_as_zeros_are_recomputed(tmp_path, rng):
    """save_model writes pads_begin/pads_end = 0 when auto_pad is not explicit."""
    builder = IR()
    x = builder.parameter((1, 2, 13, 13), name="x")
    pool = builder.layer(
        "MaxPool",
        "opset8",
        [(x, 0)],
        [("f32", (1, 2, 7, 7)), ("i64", (1, 2, 7, 7))],
        {
            "kernel": "3, 3",
            "strides": "2, 2",
            "pads_begin": "0, 0",
            "pads_end": "0, 0",
            "auto_pad": "same_lower",
            "dilations": "1, 1",
        },
    )
    builder.result(pool, 0)
    builder.result(pool, 1)
    model = ir.read_model(builder.write(tmp_path))
    data = rng.standard_normal((1, 2, 13, 13)).astype(np.float32)
    values, indices = model(data)
    want = ov_ops.max_pool(data, [3, 3], [2, 2], [1, 1], [1, 1])
    np.testing.assert_array_equal(values, want[0])
    np.testing.assert_array_equal(indices, want[1])


def test_missing_optional_attributes_take_the_reader_defaults(tmp_path, rng):
    builder = IR()
    x = builder.parameter((1, 2, 9, 9), name="x")
    pool = builder.layer(
        "AvgPool",
        "opset16",
        [(x, 0)],
        [("f32", (1, 2, 4, 4))],
        {"kernel": "3, 3", "strides": "2, 2"},
    )
    builder.result(pool)
    model = ir.read_model(builder.write(tmp_path))
    data = rng.standard_normal((1, 2, 9, 9)).astype(np.float32)
    np.testing.assert_array_equal(
        model(data)[0], ov_ops.avg_pool(data, [3, 3], [2, 2], exclude_pad=True)
    )


def test_other_opset_names_of_the_same_op(tmp_path, rng):
    builder = IR()
    x = builder.parameter((1, 1, 10), name="x")
    pool = builder.layer(
        "MaxPool",
        "opset11",
        [(x, 0)],
        [("f32", (1, 1, 5)), ("i32", (1, 1, 5))],
        {"kernel": "2", "strides": "2", "index_element_type": "i32"},
    )
    builder.result(pool, 0)
    builder.result(pool, 1)
    model = ir.read_model(builder.write(tmp_path))
    assert model.layers[1].entry.key == ("MaxPool", "opset8")
    data = rng.standard_normal((1, 1, 10)).astype(np.float32)
    assert model(data)[1].dtype == np.int32


# --------------------------------------------------------------------------
# Constants of every element type, shared offsets, Convert
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype",
    [
        np.float32,
        np.float16,
        np.float64,
        np.int8,
        np.uint8,
        np.int16,
        np.uint16,
        np.int32,
        np.int64,
        np.uint32,
        np.uint64,
        np.bool_,
    ],
)
def test_const_element_types(tmp_path, dtype):
    value = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    builder = IR()
    c = builder.const(value, name="c")
    builder.result(c)
    scalar = builder.const(np.array(7, dtype=dtype), name="s")
    builder.result(scalar)
    (got, got_scalar) = ir.read_model(builder.write(tmp_path))()
    assert got.dtype == dtype and got.shape == (3, 4)
    np.testing.assert_array_equal(got, value)
    assert got_scalar.shape == () and got_scalar == np.array(7, dtype)


def test_const_bf16_and_shared_offsets(tmp_path):
    builder = IR()
    value = np.array([1.0, -2.5, 3.140625, 1e30], np.float32)
    bits = (value.view(np.uint32) >> 16).astype(np.uint16)
    builder.blob = bytearray(bits.tobytes())
    a = builder.layer(
        "Const",
        "opset1",
        [],
        [("bf16", (4,))],
        {"element_type": "bf16", "shape": "4", "offset": 0, "size": 8},
        name="a",
    )
    # a second Const reading the same bytes as i16 (save_model deduplicates by bytes)
    b = builder.layer(
        "Const",
        "opset1",
        [],
        [("i16", (2, 2))],
        {"element_type": "i16", "shape": "2, 2", "offset": 0, "size": 8},
        name="b",
    )
    conv = builder.layer(
        "Convert", "opset1", [(a, 0)], [("f32", (4,))], {"destination_type": "f32"}, name="to_f32"
    )
    builder.result(a)
    builder.result(b)
    builder.result(conv)
    model = ir.read_model(builder.write(tmp_path))
    bf16, i16, f32 = model()
    np.testing.assert_array_equal(f32, (bits.astype(np.uint32) << 16).view(np.float32))
    np.testing.assert_array_equal(i16.reshape(-1), bits.view(np.int16))
    assert model.outputs[0].element_type == "bf16"
    np.testing.assert_array_equal(bf16.astype(np.float32), f32)


def test_f16_decompression_convert(tmp_path, rng):
    """save_model's default: Const f16 -> Convert(decompression) f32 -> a pool."""
    table = rng.standard_normal((1, 2, 6, 6)).astype(np.float16)
    builder = IR()
    c = builder.const(table, name="table_compressed")
    conv = builder.layer(
        "Convert",
        "opset1",
        [(c, 0)],
        [("f32", (1, 2, 6, 6))],
        {"destination_type": "f32"},
        name="table",
    )
    pool = builder.layer(
        "MaxPool",
        "opset1",
        [(conv, 0)],
        [("f32", (1, 2, 3, 3))],
        {"kernel": "2, 2", "strides": "2, 2"},
        name="pool",
    )
    builder.result(pool)
    (got,) = ir.read_model(builder.write(tmp_path))()
    np.testing.assert_array_equal(
        got, ov_ops.max_pool(table.astype(np.float32), [2, 2], [2, 2], return_indices=False)
    )


def test_sub_byte_constants_are_described_not_run(tmp_path):
    builder = IR()
    builder.blob = bytearray(b"\x12\x34")
    c = builder.layer(
        "Const",
        "opset1",
        [],
        [("u4", (3,))],
        {"element_type": "u4", "shape": "3", "offset": 0, "size": 2},
        name="w",
    )
    builder.result(c)
    path = builder.write(tmp_path)
    model = ir.read_model(path)
    assert not model.runs_on_ovpool
    assert "u4" in model.unsupported_layers[0].reason
    with pytest.raises(ovpool.IRError, match="Const opset1 'w'"):
        model()


# --------------------------------------------------------------------------
# Layers ovpool does not run
# --------------------------------------------------------------------------

CONV = 'name="conv"'


def test_unsupported_layers_are_described_and_named_on_call(tmp_path):
    builder = IR()
    x = builder.parameter((1, 3, 8, 8), name="image")
    w = builder.const(np.ones((4, 3, 3, 3), np.float32), name="w")
    conv = builder.layer(
        "Convolution",
        "opset1",
        [(x, 0), (w, 0)],
        [("f32", (1, 4, 6, 6))],
        {"strides": "1, 1", "dilations": "1, 1", "pads_begin": "0, 0", "pads_end": "0, 0"},
        name="conv",
    )
    relu = builder.layer("ReLU", "opset1", [(conv, 0)], [("f32", (1, 4, 6, 6))], name="relu")
    pool = builder.layer(
        "MaxPool",
        "opset1",
        [(relu, 0)],
        [("f32", (1, 4, 3, 3))],
        {"kernel": "2, 2", "strides": "2, 2"},
        name="pool",
    )
    builder.result(pool)
    path = builder.write(tmp_path)
    model = ir.read_model(path)
    assert [layer.name for layer in model.unsupported_layers] == ["conv", "relu"]
    assert model.outputs[0].shape == (1, 4, 3, 3)  # from the declared ports
    rows = {r["name"]: r for r in model.describe()}
    assert not rows["conv"]["runs_on_ovpool"] and rows["pool"]["runs_on_ovpool"]
    assert model.layers[2].raw_attributes["strides"] == "1, 1"
    with pytest.raises(ovpool.IRError) as info:
        model(np.zeros((1, 3, 8, 8), np.float32))
    message = str(info.value)
    assert message.startswith(f"{path}:{line_of(path, CONV)}:"), message
    for part in (
        "Convolution opset1 'conv' (id 2",
        "ReLU opset1 'relu' (id 3",
        "ovpool.openvino.read_model",
        f"{path}:",
    ):
        assert part in message, message


def test_unsupported_layer_not_needed_by_the_outputs(tmp_path, rng):
    builder = IR()
    x = builder.parameter((1, 1, 8), name="x")
    builder.layer("Floor", "opset1", [(x, 0)], [("f32", (1, 1, 8))], name="unused")
    pool = builder.layer(
        "MaxPool",
        "opset1",
        [(x, 0)],
        [("f32", (1, 1, 4))],
        {"kernel": "2", "strides": "2"},
        name="pool",
    )
    builder.result(pool)
    model = ir.read_model(builder.write(tmp_path))
    assert model.runs_on_ovpool
    assert not [r for r in model.describe() if r["name"] == "unused"][0]["used"]
    data = rng.standard_normal((1, 1, 8)).astype(np.float32)
    np.testing.assert_array_equal(model(data)[0], data.reshape(1, 1, 4, 2).max(-1))


def test_avg_pool_on_integers_needs_openvino(tmp_path):
    builder = IR()
    x = builder.parameter((1, 1, 8), "i32", name="x")
    pool = builder.layer(
        "AvgPool",
        "opset1",
        [(x, 0)],
        [("i32", (1, 1, 4))],
        {"kernel": "2", "strides": "2"},
        name="pool",
    )
    builder.result(pool)
    model = ir.read_model(builder.write(tmp_path))
    assert not model.runs_on_ovpool and "not i32" in model.unsupported_layers[0].reason


# --------------------------------------------------------------------------
# ovpool's own opset
# --------------------------------------------------------------------------


def test_ovpool_opset_model(tmp_path, rng):
    builder = IR()
    x = builder.parameter((1, 2, 9, 8), name="x")
    mp = builder.layer(
        "OnnxMaxPool",
        "ovpool",
        [(x, 0)],
        [("f32", (1, 2, 5, 4)), ("i64", (1, 2, 5, 4))],
        {"kernel_shape": "3, 2", "strides": "2, 2", "pads": "1, 0, 1, 0", "storage_order": "1"},
        name="maxpool",
    )
    shape = builder.const(np.array([1, 2, 9, 8], np.int64), name="shape")
    up = builder.layer(
        "MaxUnpool",
        "ovpool",
        [(mp, 0), (mp, 1), (shape, 0)],
        [("f32", (1, 2, 9, 8))],
        {
            "kernel_shape": "3, 2",
            "strides": "2, 2",
            "pads": "1, 0, 1, 0",
            "indices_relative_to": "output_shape",
        },
        name="unpool",
    )
    lp = builder.layer(
        "LpPool",
        "ovpool",
        [(x, 0)],
        [("f32", (1, 2, 4, 4))],
        {"kernel_shape": "2, 2", "strides": "2, 2", "p": "3", "ceil_mode": "false"},
        name="lp",
    )
    avg = builder.layer(
        "OnnxAveragePool",
        "ovpool",
        [(x, 0)],
        [("f32", (1, 2, 5, 4))],
        {
            "kernel_shape": "3, 3",
            "strides": "2, 2",
            "auto_pad": "SAME_UPPER",
            "count_include_pad": "1",
        },
        name="avg",
    )
    g = builder.layer(
        "GlobalLpPool", "ovpool", [(x, 0)], [("f32", (1, 2, 1, 1))], {"p": "2"}, name="global"
    )
    adaptive = builder.layer(
        "AdaptiveAvgPool",
        "ovpool",
        [(x, 0), (builder.const(np.array([3, 3], np.int32)), 0)],
        [("f32", (1, 2, 3, 3))],
        name="adaptive",
    )
    for lid, k in ((mp, 0), (mp, 1), (up, 0), (lp, 0), (avg, 0), (g, 0), (adaptive, 0)):
        builder.result(lid, k)
    model = ir.read_model(builder.write(tmp_path))
    data = rng.standard_normal((1, 2, 9, 8)).astype(np.float32)
    got = model(data)
    y, i = ops.max_pool(
        data, (3, 2), strides=(2, 2), pads=(1, 0, 1, 0), storage_order=1, return_indices=True
    )
    want = [
        y,
        i,
        None,
        ops.lp_pool(data, (2, 2), p=3, strides=(2, 2)),
        ops.avg_pool(data, (3, 3), strides=(2, 2), auto_pad="SAME_UPPER", count_include_pad=True),
        ops.global_lp_pool(data),
        ovpool.adaptive_avg_pool(data, 3),
    ]
    for k, w in enumerate(want):
        if w is not None:
            np.testing.assert_array_equal(got[k], w)
    assert got[2].shape == (1, 2, 9, 8) and np.isin(y, got[2]).all()


# --------------------------------------------------------------------------
# Deviations of OpenVINO's CPU plugin: ovpool follows the spec and PyTorch
# --------------------------------------------------------------------------


def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize(
    "rank, shape, k, s, p",
    [
        (1, (2, 3, 9), 7, 3, 3),
        (2, (1, 2, 14, 14), 3, 2, 1),
        (2, (1, 2, 8, 8), 5, 3, 2),
        (3, (1, 2, 5, 6, 7), 3, 2, 1),
    ],
)
@pytest.mark.parametrize("version", ["opset14", "opset16"])
def test_avg_pool_ceil_include_pad_follows_torch(tmp_path, rng, rank, shape, k, s, p, version):
    torch = _torch()
    fn = {
        1: torch.nn.functional.avg_pool1d,
        2: torch.nn.functional.avg_pool2d,
        3: torch.nn.functional.avg_pool3d,
    }[rank]
    data = rng.standard_normal(shape).astype(np.float32)
    want = fn(
        torch.from_numpy(data), k, stride=s, padding=p, ceil_mode=True, count_include_pad=True
    ).numpy()
    builder = IR()
    x = builder.parameter(shape, name="x")
    pool = builder.layer(
        "AvgPool",
        version,
        [(x, 0)],
        [("f32", want.shape)],
        {
            "kernel": ", ".join([str(k)] * rank),
            "strides": ", ".join([str(s)] * rank),
            "pads_begin": ", ".join([str(p)] * rank),
            "pads_end": ", ".join([str(p)] * rank),
            "exclude-pad": "false",
            "rounding_type": "ceil_torch",
        },
        name="pool",
    )
    builder.result(pool)
    (got,) = ir.read_model(builder.write(tmp_path))(data)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n_in, n_out", [(8417, 1999), (100003, 997), (160000, 999)])
def test_adaptive_avg_pool_1d_large_follows_torch(tmp_path, rng, n_in, n_out):
    torch = _torch()
    data = rng.standard_normal((1, 1, n_in)).astype(np.float32)
    builder = IR()
    x = builder.parameter((1, 1, n_in), name="x")
    size = builder.const(np.array([n_out], np.int64))
    pool = builder.layer(
        "AdaptiveAvgPool", "opset8", [(x, 0), (size, 0)], [("f32", (1, 1, n_out))], name="pool"
    )
    builder.result(pool)
    (got,) = ir.read_model(builder.write(tmp_path))(data)
    want = torch.nn.functional.adaptive_avg_pool1d(torch.from_numpy(data), n_out).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_output_size_fed_per_call_sets_each_call_s_shape(tmp_path, rng):
    """AdaptiveAvgPool's output_size as a model input: each call's value gives
    that call's output shape, also when a value comes back after another."""
    torch = _torch()
    data = rng.standard_normal((2, 3, 12, 10)).astype(np.float32)
    builder = IR()
    x = builder.parameter(data.shape, name="x")
    size = builder.parameter((2,), etype="i64", name="size")
    pool = builder.layer(
        "AdaptiveAvgPool", "opset8", [(x, 0), (size, 0)], [("f32", (2, 3, None, None))], name="pool"
    )
    builder.result(pool)
    model = ir.read_model(builder.write(tmp_path))
    for out_size in [(3, 4), (5, 5), (3, 4), (1, 10)]:
        (got,) = model(data, np.array(out_size, np.int64))
        want = torch.nn.functional.adaptive_avg_pool2d(torch.from_numpy(data), out_size)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("index_type", ["i32", "i64"])
def test_adaptive_max_pool_nan_and_i64_follow_torch(tmp_path, rng, index_type):
    torch = _torch()
    data = rng.standard_normal((2, 3, 7, 9)).astype(np.float32)
    data[0, 0, 0, 1] = data[1, 2, 4, 4] = data[0, 1, 6, 8] = data[0, 1, 6, 7] = np.nan
    builder = IR()
    x = builder.parameter(data.shape, name="x")
    size = builder.const(np.array([3, 4], np.int32))
    pool = builder.layer(
        "AdaptiveMaxPool",
        "opset8",
        [(x, 0), (size, 0)],
        [("f32", (2, 3, 3, 4)), (index_type, (2, 3, 3, 4))],
        {"index_element_type": index_type},
        name="pool",
    )
    builder.result(pool, 0)
    builder.result(pool, 1)
    values, indices = ir.read_model(builder.write(tmp_path))(data)
    want_v, want_i = torch.nn.functional.adaptive_max_pool2d(
        torch.from_numpy(data), (3, 4), return_indices=True
    )
    np.testing.assert_array_equal(values, want_v.numpy())
    np.testing.assert_array_equal(indices, want_i.numpy())
    assert indices.dtype == (np.int32 if index_type == "i32" else np.int64)
    assert np.isnan(values).any()
