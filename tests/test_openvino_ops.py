"""ovpool's ops in the extension library (libovpool_openvino.so): the Op
contract (construction, attributes, shape inference, evaluate), round trips,
element types, threads and streams, against ovpool's numpy API."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ov = pytest.importorskip("openvino")

import openvino.opset8 as o8  # noqa: E402

import ovpool  # noqa: E402
import ovpool.openvino as ovp  # noqa: E402
from ovpool import layers, ov_ops  # noqa: E402

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def core(ov_extension):
    return ovp.register(ov.Core())


def param(shape, etype=np.float32, name="x"):
    node = o8.parameter(ov.PartialShape(shape), etype, name=name)
    node.output(0).set_names({name})
    return node


def const(values, dtype=np.int64):
    return o8.constant(np.array(values, dtype)).output(0)


def run(core, model, inputs, config=F32):
    compiled = core.compile_model(model, "CPU", config)
    result = compiled(list(inputs))
    return [result[o] for o in compiled.outputs]


def model_of(op, params):
    return ov.Model([o8.result(o) for o in op.outputs()], params)


def op(type_, inputs, **attrs):
    return ovp.make_op(type_, inputs, **attrs)


def typed(attrs_of_node, type_):
    entry = layers.get(type_, "ovpool")
    return entry.attributes(**{k: v for k, v in attrs_of_node.items() if k in entry.attr_names})


# One op of every type of ovpool's opset with non-default attributes.
def all_ops(x):
    size = const([3, 4])
    return {
        "AdaptiveAvgPool": op("AdaptiveAvgPool", [x, size]),
        "AdaptiveMaxPool": op("AdaptiveMaxPool", [x, size], index_element_type="i32"),
        "AvgPool": op(
            "AvgPool",
            [x],
            **{
                "kernel": [3, 2],
                "strides": [2, 1],
                "pads_begin": [1, 0],
                "pads_end": [1, 1],
                "exclude-pad": False,
                "rounding_type": "ceil_torch",
                "dilations": [1, 2],
            },
        ),
        "MaxPool": op(
            "MaxPool",
            [x],
            kernel=[2, 3],
            strides=[2, 2],
            pads_begin=[1, 1],
            pads_end=[0, 1],
            rounding_type="ceil",
            axis=2,
            index_element_type="i32",
            dilations=[2, 1],
        ),
        "OnnxAveragePool": op(
            "OnnxAveragePool",
            [x],
            kernel_shape=[3, 3],
            strides=[2, 2],
            auto_pad="SAME_LOWER",
            count_include_pad=True,
        ),
        "OnnxMaxPool": op(
            "OnnxMaxPool",
            [x],
            kernel_shape=[2, 2],
            strides=[2, 1],
            pads=[1, 0, 0, 1],
            storage_order=1,
            ceil_mode=True,
        ),
        "LpPool": op("LpPool", [x], kernel_shape=[2, 3], p=3.0, strides=[1, 2]),
        "GlobalLpPool": op("GlobalLpPool", [x], p=1.0),
    }


def test_every_op_of_the_opset_is_in_the_library_never_a_stock_version(core):
    entries = {t for (t, v) in layers.LAYERS if v == layers.OVPOOL_OPSET}
    assert set(ovp.OP_TYPES) == entries
    x = param([2, 3, 12, 14])
    made = all_ops(x.output(0))
    values, indices = op("MaxPool", [x], kernel=[2, 2], strides=[2, 2]).outputs()
    made["MaxUnpool"] = op("MaxUnpool", [values, indices], kernel_shape=[2, 2], strides=[2, 2])
    assert set(made) == entries
    for name, node in made.items():
        info = node.get_type_info()
        assert (info.name, info.version_id) == (name, "ovpool")


def test_attributes_survive_save_and_read(core, tmp_path):
    x = param([2, 3, 12, 14])
    ops = all_ops(x.output(0))
    values, indices = op("MaxPool", [x], kernel=[2, 2], strides=[2, 2], axis=0).outputs()
    ops["MaxUnpool"] = op(
        "MaxUnpool",
        [values, indices],
        kernel_shape=[2, 2],
        strides=[2, 2],
        indices_relative_to="output_shape",
    )
    model = ov.Model([o8.result(o) for node in ops.values() for o in node.outputs()], [x])
    ov.save_model(model, tmp_path / "m.xml")
    read = core.read_model(tmp_path / "m.xml")
    by_type = {}
    for node in read.get_ordered_ops():
        if node.get_type_info().version_id == "ovpool":
            by_type.setdefault(node.get_type_name(), []).append(node)
    for name, node in ops.items():
        (again,) = by_type[name] if name != "MaxPool" else by_type[name][-1:]
        assert again.get_attributes() == node.get_attributes(), name
    # ovpool's own IR runtime reads what the library wrote
    from ovpool import ir

    assert {layer.type for layer in ir.read_model(tmp_path / "m.xml").layers} >= set(ops)
    data = np.random.default_rng(0).standard_normal((2, 3, 12, 14)).astype(np.float32)
    for a, b in zip(run(core, model, [data]), run(core, read, [data])):
        np.testing.assert_array_equal(a, b)


def test_every_op_matches_the_numpy_api(core):
    rng = np.random.default_rng(1)
    data = rng.standard_normal((2, 3, 11, 13)).astype(np.float32)
    x = param([2, 3, 11, 13])
    for name, node in all_ops(x.output(0)).items():
        got = run(core, model_of(node, [x]), [data])
        entry = layers.get(name, "ovpool")
        inputs = [data] + ([np.array([3, 4])] if name.startswith("Adaptive") else [])
        expected = entry.run(inputs, typed(node.get_attributes(), name))
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype and g.shape == e.shape, name
            np.testing.assert_array_equal(g, e, err_msg=name)


def test_ir_written_by_the_python_ops_of_earlier_versions_runs(core):
    from ovpool import _check, ir

    for name in ("ovpool_opset", "ovpool_opset_onnx"):
        path = os.path.join(ROOT, "ir_examples", f"{name}.xml")
        recording = _check.load_recording(path)
        got = run(core, core.read_model(path), recording.inputs)
        ok, diff, why = _check.compare_all(ir.read_model(path), got, recording.outputs)
        assert ok, (name, why, diff)


def test_shape_inference_static_dynamic_and_value_dependent(core):
    x = param([-1, 3, -1, -1])
    node = op("MaxPool", [x], kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])
    assert str(node.get_output_partial_shape(0)) == "[?,3,?,?]"
    x2 = param([4, 3, 13, 11])
    node2 = op(
        "MaxPool",
        [x2],
        kernel=[3, 3],
        strides=[2, 2],
        pads_begin=[1, 1],
        pads_end=[1, 1],
        rounding_type="ceil_torch",
    )
    assert str(node2.get_output_partial_shape(0)) == "[4,3,7,6]"
    assert node2.get_output_element_type(1) == ov.Type.i64
    # same_upper with ceil rounding: ceil(n / s), whatever the rounding
    node3 = op(
        "MaxPool", [x2], kernel=[3, 3], strides=[2, 2], auto_pad="same_upper", rounding_type="ceil"
    )
    assert str(node3.get_output_partial_shape(0)) == "[4,3,7,6]"
    # output_size a Parameter: the output's spatial dims are dynamic, evaluate shapes it
    size = param([2], np.int64, "size")
    adaptive = op("AdaptiveAvgPool", [x, size])
    assert str(adaptive.get_output_partial_shape(0)) == "[?,3,?,?]"
    compiled = core.compile_model(model_of(adaptive, [x, size]), "CPU", F32)
    request = compiled.create_infer_request()
    rng = np.random.default_rng(2)
    for shape, out in (((2, 3, 14, 14), (7, 7)), ((1, 3, 5, 9), (3, 8)), ((3, 3, 5, 5), (8, 8))):
        data = rng.standard_normal(shape).astype(np.float32)
        got = request.infer([data, np.array(out, np.int64)])[compiled.outputs[0]]
        np.testing.assert_array_equal(got, ovpool.adaptive_avg_pool(data, out))


def test_evaluate_shapes_value_dependent_outputs(core):
    # MaxUnpool with output_shape given at run time
    x = param([1, 1, 2, 2])
    indices = param([1, 1, 2, 2], np.int64, "i")
    shape = param([4], np.int64, "shape")
    node = op(
        "MaxUnpool",
        [x, indices, shape],
        kernel_shape=[2, 2],
        strides=[2, 2],
        indices_relative_to="output_shape",
    )
    assert str(node.get_output_partial_shape(0)) == "[1,1,?,?]"
    values = np.array([[[[1, 2], [3, 4]]]], np.float32)
    where = np.array([[[[0, 3], [10, 15]]]], np.int64)
    for out_shape in ((1, 1, 4, 4), (1, 1, 5, 5)):
        (got,) = run(
            core,
            model_of(node, [x, indices, shape]),
            [values, where, np.array(out_shape, np.int64)],
        )
        expected = ovpool.max_unpool(
            values,
            where,
            (2, 2),
            strides=(2, 2),
            output_shape=out_shape,
            indices_relative_to="output_shape",
        )
        np.testing.assert_array_equal(got, expected)


def test_evaluate_called_directly_shapes_tensors_handed_over_empty(core):
    """A caller may hand outputs of Shape{0} over when their shape depends on
    input values: evaluate sets the shape before writing."""
    x = param([-1, 3, -1, -1])
    size = param([2], np.int64, "size")
    node = op("AdaptiveAvgPool", [x, size])
    data = np.random.default_rng(9).standard_normal((2, 3, 9, 7)).astype(np.float32)
    outputs = [ov.Tensor(ov.Type.f32, ov.Shape([0]))]
    assert node.evaluate(outputs, [ov.Tensor(data), ov.Tensor(np.array([4, 3], np.int32))])
    np.testing.assert_array_equal(outputs[0].data, ovpool.adaptive_avg_pool(data, (4, 3)))


def test_dynamic_shapes_run_with_several_shapes(core):
    x = param([-1, -1, -1, -1])
    node = op("AvgPool", [x], kernel=[3, 3], strides=[2, 2], auto_pad="same_upper")
    compiled = core.compile_model(model_of(node, [x]), "CPU", F32)
    request = compiled.create_infer_request()
    rng = np.random.default_rng(3)
    for shape in ((1, 2, 13, 13), (2, 1, 8, 5), (1, 2, 13, 13)):
        data = rng.standard_normal(shape).astype(np.float32)
        got = request.infer([data])[compiled.outputs[0]]
        np.testing.assert_array_equal(
            got, ov_ops.avg_pool(data, [3, 3], [2, 2], auto_pad="same_upper")
        )


@pytest.mark.parametrize("etype", ["f16", "bf16", "f64"])
def test_reduced_and_double_precision_models(core, etype):
    ml_dtypes = pytest.importorskip("ml_dtypes") if etype == "bf16" else None
    dtype = {"f16": np.float16, "f64": np.float64}.get(etype) or ml_dtypes.bfloat16
    rng = np.random.default_rng(4)
    data = rng.standard_normal((2, 3, 13, 11)).astype(np.float32).astype(dtype)
    x = param([2, 3, 13, 11], getattr(ov.Type, etype))
    avg = op(
        "AvgPool",
        [x],
        kernel=[3, 3],
        strides=[2, 2],
        pads_begin=[1, 1],
        pads_end=[1, 1],
        rounding_type="ceil_torch",
    )
    values, indices = op("MaxPool", [x], kernel=[2, 2], strides=[2, 2], axis=2).outputs()
    adaptive = op("AdaptiveAvgPool", [x, const([5, 4])])
    model = ov.Model(
        [o8.result(o) for o in (avg.output(0), values, indices, adaptive.output(0))], [x]
    )
    if etype == "bf16":  # the tensor holds the raw bits
        tensor = ov.Tensor(ov.Type.bf16, ov.Shape(list(data.shape)))
        tensor.data.view(np.uint16)[...] = data.view(np.uint16)
    else:
        tensor = ov.Tensor(data)
    expected = [
        ov_ops.avg_pool(data, [3, 3], [2, 2], [1, 1], [1, 1], rounding_type="ceil_torch"),
        *ov_ops.max_pool(data, [2, 2], [2, 2], axis=2),
        ovpool.adaptive_avg_pool(data, (5, 4)),
    ]
    compiled = core.compile_model(model, "CPU", F32)
    # Where the CPU has no arithmetic in the model's 16-bit type, the plugin
    # runs ovpool's ops in float32 between Converts of its own (bf16 without
    # AVX-512 BF16, say): the outputs are then the plugin's conversion of
    # ovpool's float32 results, which for bf16 need not round to nearest.
    ours = {
        node.get_rt_info()["runtimePrecision"].astype(str)
        for node in compiled.get_runtime_model().get_ordered_ops()
        if node.get_rt_info()["layerType"].astype(str) == "Reference"
    }
    if etype != "f64" and ours == {"f32"}:
        widened = data.astype(np.float32)
        expected[0] = _plugin_convert(
            core,
            ov_ops.avg_pool(widened, [3, 3], [2, 2], [1, 1], [1, 1], rounding_type="ceil_torch"),
            etype,
        )
        expected[1] = _plugin_convert(core, expected[1].astype(np.float32), etype)
        expected[3] = _plugin_convert(core, ovpool.adaptive_avg_pool(widened, (5, 4)), etype)
    else:
        assert ours == {"f32" if etype == "f64" else etype}, ours
    result = compiled([tensor])
    for port, e in zip(compiled.outputs, expected):
        got = result[port]
        if port.get_element_type() == ov.Type.bf16:
            got = got.view(np.uint16).view(dtype)
        assert got.shape == e.shape
        if etype == "f64":  # OpenVINO's CPU plugin computes f64 in f32
            np.testing.assert_allclose(got, e, rtol=1e-6, atol=1e-6)
        else:
            assert got.dtype == e.dtype
            np.testing.assert_array_equal(got, e)


def _plugin_convert(core, values, etype):
    """float32 values converted to etype by OpenVINO's CPU plugin."""
    x = param(list(values.shape))
    compiled = core.compile_model(
        ov.Model([o8.result(o8.convert(x, getattr(ov.Type, etype)))], [x]), "CPU", F32
    )
    got = compiled([values])[compiled.outputs[0]]
    if etype == "bf16":
        import ml_dtypes

        return got.view(np.uint16).view(ml_dtypes.bfloat16)
    return got


def test_16_bit_inputs_widened_as_a_whole_are_exact(core):
    """A 16-bit plane too large for per-thread scratch: the library widens
    the whole input to float32 first (the plan's widen_input), as Python does."""
    data = np.random.default_rng(10).standard_normal((1, 1, 1500, 1500)).astype(np.float16)
    x = param(list(data.shape), np.float16)
    values, indices = op("MaxPool", [x], kernel=[3, 3], strides=[2, 2], axis=2).outputs()
    model = ov.Model([o8.result(values), o8.result(indices)], [x])
    # the template plugin path: evaluate on f16 itself
    outputs = [ov.Tensor(ov.Type.f16, ov.Shape([0])), ov.Tensor(ov.Type.i64, ov.Shape([0]))]
    node = [n for n in model.get_ordered_ops() if n.get_type_name() == "MaxPool"][0]
    assert node.evaluate(outputs, [ov.Tensor(data)])
    expected = ov_ops.max_pool(data, [3, 3], [2, 2], axis=2)
    np.testing.assert_array_equal(outputs[0].data, expected[0])
    np.testing.assert_array_equal(outputs[1].data, expected[1])


def test_int8_max_pool(core):
    data = np.random.default_rng(5).integers(-128, 127, (1, 2, 9, 9)).astype(np.int8)
    x = param([1, 2, 9, 9], np.int8)
    node = op("MaxPool", [x], kernel=[3, 3], strides=[2, 2], axis=1, index_element_type="i32")
    values, indices = run(core, model_of(node, [x]), [data])
    expected = ov_ops.max_pool(data, [3, 3], [2, 2], axis=1, index_element_type="i32")
    np.testing.assert_array_equal(values, expected[0])
    np.testing.assert_array_equal(indices, expected[1])


def test_bad_attributes_and_types(core, tmp_path):
    x = param([1, 2, 8, 8])
    with pytest.raises(ovpool.OvpoolValueError, match="kernel"):
        op("AvgPool", [x], kernel=[0, 2], strides=[1, 1])
    with pytest.raises(ovpool.OvpoolValueError, match="unknown attributes"):
        op("MaxPool", [x], kernel=[2, 2], strides=[1, 1], storage_order=1)
    with pytest.raises(layers.UnsupportedLayer, match="i32"):
        op("AvgPool", [param([1, 2, 8, 8], np.int32)], kernel=[2, 2], strides=[2, 2])
    with pytest.raises(ovpool.OvpoolValueError, match="ovpool's opset has no op"):
        ovp.make_op("Convolution", [x])
    # the library's own checks, for IR that ovpool's Python side never saw
    good = model_of(op("AvgPool", [x], kernel=[2, 2], strides=[2, 2]), [x])
    ov.save_model(good, tmp_path / "good.xml")
    text = (tmp_path / "good.xml").read_text()
    for old, new, message in (
        ('kernel="2, 2"', 'kernel="2, 2, 2"', "spatial dims"),
        ('kernel="2, 2"', 'kernel="2, 0"', "kernel"),
        ('rounding_type="floor"', 'rounding_type="round"', "rounding_type"),
        ('strides="2, 2"', 'strides="2"', "strides"),
    ):
        (tmp_path / "bad.xml").write_text(text.replace(old, new))
        with pytest.raises(RuntimeError, match=message):
            core.read_model(tmp_path / "bad.xml")


def test_export_and_import(core):
    x = param([2, 3, 16, 16])
    values, indices = op(
        "MaxPool", [x], kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1], axis=2
    ).outputs()
    adaptive = op("AdaptiveMaxPool", [values, const([3, 3])], index_element_type="i64")
    model = ov.Model([o8.result(o) for o in (indices, *adaptive.outputs())], [x])
    blob = core.compile_model(model, "CPU", F32).export_model()
    data = np.random.default_rng(6).standard_normal((2, 3, 16, 16)).astype(np.float32)
    with pytest.raises(RuntimeError, match="ovpool"):
        ov.Core().import_model(blob, "CPU")
    imported = ovp.register(ov.Core()).import_model(blob, "CPU")
    got = [imported([data])[o] for o in imported.outputs]
    for g, e in zip(got, run(core, model, [data])):
        np.testing.assert_array_equal(g, e)


def test_register_is_idempotent_and_needed(core, tmp_path):
    x = param([1, 1, 4, 4])
    ov.save_model(model_of(op("AdaptiveAvgPool", [x, const([2, 2])]), [x]), tmp_path / "m.xml")
    with pytest.raises(RuntimeError, match="unsupported opset: ovpool"):
        ov.Core().read_model(tmp_path / "m.xml")
    fresh = ov.Core()
    assert ovp.register(fresh) is fresh
    assert ovp.register(fresh) is fresh  # the second call adds nothing
    names = [n.get_type_name() for n in fresh.read_model(tmp_path / "m.xml").get_ordered_ops()]
    assert "AdaptiveAvgPool" in names


def test_async_queue_with_streams_and_96_requests(core):
    x = param([4, 8, 28, 28])
    values, indices = op(
        "MaxPool", [x], kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1], axis=0
    ).outputs()
    avg = op("AdaptiveAvgPool", [values, const([5, 5])])
    wide = op(
        "OnnxAveragePool",
        [x],
        kernel_shape=[3, 3],
        pads=[1, 1, 1, 1],
        count_include_pad=True,
        ceil_mode=True,
        strides=[2, 2],
    )
    model = ov.Model([o8.result(o) for o in (avg.output(0), indices, wide.output(0))], [x])
    compiled = core.compile_model(model, "CPU", {**F32, "NUM_STREAMS": "2"})
    assert compiled.get_property("NUM_STREAMS") == 2
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal((4, 8, 28, 28)).astype(np.float32) for _ in range(96)]
    results = [None] * 96
    queue = ov.AsyncInferQueue(compiled, 4)

    def done(request, k):
        results[k] = [np.array(request.get_output_tensor(i).data) for i in range(3)]

    queue.set_callback(done)
    for k, data in enumerate(inputs):
        queue.start_async([data], userdata=k)
    queue.wait_all()
    for data, got in zip(inputs, results):
        v, i = ov_ops.max_pool(data, [3, 3], [2, 2], [1, 1], [1, 1], axis=0)
        np.testing.assert_array_equal(got[0], ovpool.adaptive_avg_pool(v, (5, 5)))
        np.testing.assert_array_equal(got[1], i)
        np.testing.assert_array_equal(
            got[2],
            ovpool.avg_pool(
                data, 3, strides=2, pads=[1, 1, 1, 1], ceil_mode=True, count_include_pad=True
            ),
        )


@pytest.mark.parametrize("threads", ["1", "2"])
def test_results_do_not_depend_on_openvinos_threads(core, threads):
    data = np.random.default_rng(8).standard_normal((2, 16, 60, 60)).astype(np.float32)
    x = param(list(data.shape))
    values, indices = op(
        "MaxPool", [x], kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1], axis=2
    ).outputs()
    adaptive = op("AdaptiveAvgPool", [x, const([7, 9])])
    model = ov.Model([o8.result(o) for o in (values, indices, adaptive.output(0))], [x])
    got = run(core, model, [data], {**F32, "INFERENCE_NUM_THREADS": threads})
    expected = [
        *ov_ops.max_pool(data, [3, 3], [2, 2], [1, 1], [1, 1], axis=2),
        ovpool.adaptive_avg_pool(data, (7, 9)),
    ]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def _subprocess(code, **env):
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, **env},
    )
    return result


def test_both_kernel_builds_give_the_same_bits(core):
    """OVPOOL_ISA=baseline forces the library's baseline build (the one that
    runs on any x86-64): its results equal the dispatched build's."""
    code = """
        import numpy as np, openvino as ov, openvino.opset8 as o8, sys
        import ovpool.openvino as ovp
        core = ovp.register(ov.Core())
        x = o8.parameter([3, 8, 37, 29], np.float16 if sys.argv[-1] == "f16" else np.float32)
        outs = [*ovp.make_op("MaxPool", [x], kernel=[3, 3], strides=[2, 2], axis=2).outputs(),
                ovp.make_op("AdaptiveAvgPool", [x, o8.constant(np.array([5, 7]))]).output(0),
                ovp.make_op("AvgPool", [x], kernel=[2, 2], strides=[2, 2]).output(0),
                ovp.make_op("LpPool", [x], kernel_shape=[3, 3], p=3.0).output(0)]
        model = ov.Model([o8.result(o) for o in outs], [x])
        data = np.random.default_rng(0).standard_normal((3, 8, 37, 29))
        c = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        r = c([data.astype(np.float32)])
        np.savez(sys.argv[1], *[r[o] for o in c.outputs])
        print(ovp.info()["info"])
    """
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for isa in ("baseline", "auto"):
            path = os.path.join(tmp, f"{isa}.npz")
            result = subprocess.run(
                [sys.executable, "-c", textwrap.dedent(code), path],
                text=True,
                capture_output=True,
                timeout=300,
                cwd=ROOT,
                env={**os.environ, "OVPOOL_ISA": isa},
            )
            assert result.returncode == 0, result.stderr
            assert ("kernels baseline" in result.stdout) == (isa == "baseline"), result.stdout
            with np.load(path) as data:
                runs[isa] = [data[k] for k in data.files]
        for a, b in zip(runs["baseline"], runs["auto"]):
            np.testing.assert_array_equal(a, b)


def test_memory_budget_refuses_with_the_bytes():
    # the window tables (40 bytes per output column: spec.hpp's rule, the
    # Python side's too) are over a 32 KiB budget, the 12 KB output is not:
    # refused when the plan is built
    result = _subprocess(
        """
        import numpy as np, openvino as ov, openvino.opset8 as o8
        import ovpool.openvino as ovp
        core = ovp.register(ov.Core())
        x = o8.parameter([1, 1, 64, 3000], np.float32)
        node = ovp.make_op("AdaptiveAvgPool", [x, o8.constant(np.array([1, 2999]))])
        c = core.compile_model(ov.Model([o8.result(node.output(0))], [x]), "CPU")
        try:
            c([np.ones((1, 1, 64, 3000), np.float32)])
        except RuntimeError as exc:
            print(exc)
    """,
        OVPOOL_MEMORY_BUDGET="32K",
    )
    assert result.returncode == 0, result.stderr
    assert ovpool._spec.window_table_bytes([1, 2999]) == 24 * 3000 + 16 * 2999
    assert "the window tables would need 119984 bytes" in result.stdout
    assert "memory budget of 32768 bytes" in result.stdout
    assert "OVPOOL_MEMORY_BUDGET" in result.stdout


def test_an_output_over_the_budget_is_refused_by_shape_inference():
    # OpenVINO allocates what shape inference declares: an output over the
    # budget is refused there (here when the op is made), before anything
    result = _subprocess(
        """
        import numpy as np, openvino as ov, openvino.opset8 as o8
        import ovpool.openvino as ovp
        x = o8.parameter([1, 1, 64, 3000], np.float32)
        try:
            ovp.make_op("AdaptiveAvgPool", [x, o8.constant(np.array([63, 2999]))])
        except RuntimeError as exc:
            print(exc)
    """,
        OVPOOL_MEMORY_BUDGET="32K",
    )
    assert result.returncode == 0, result.stderr
    assert (
        "ovpool AdaptiveAvgPool (op): output 0 [1,1,63,2999] of f32 would need 755748 bytes"
        in result.stdout
    ), result.stdout
    assert "memory budget of 32768 bytes" in result.stdout
