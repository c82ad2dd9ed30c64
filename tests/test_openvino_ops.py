"""ovpool's openvino.Op classes: the Op contract (construction, attributes,
shape inference, evaluate), round trips, element types, streams."""

import os
import subprocess
import sys

import numpy as np
import pytest

ov = pytest.importorskip("openvino")

import openvino.opset8 as o8  # noqa: E402

import ovpool  # noqa: E402
import ovpool.openvino as ovp  # noqa: E402
from ovpool import layers, ov_ops  # noqa: E402

F32 = {"INFERENCE_PRECISION_HINT": "f32"}


@pytest.fixture(scope="module")
def core():
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


# One op of every type of ovpool's opset with non-default attributes, and how
# ovpool's numpy API computes it.
def all_ops(x):
    size = const([3, 4])
    return {
        "AdaptiveAvgPool": (ovp.AdaptiveAvgPool([x, size]), {}),
        "AdaptiveMaxPool": (ovp.AdaptiveMaxPool([x, size], index_element_type="i32"), {}),
        "AvgPool": (ovp.AvgPool([x], {"kernel": [3, 2], "strides": [2, 1], "pads_begin": [1, 0],
                                      "pads_end": [1, 1], "exclude-pad": False,
                                      "rounding_type": "ceil_torch", "dilations": [1, 2]}), {}),
        "MaxPool": (ovp.MaxPool([x], kernel=[2, 3], strides=[2, 2], pads_begin=[1, 1],
                                pads_end=[0, 1], rounding_type="ceil", axis=2,
                                index_element_type="i32", dilations=[2, 1]), {}),
        "OnnxAveragePool": (ovp.OnnxAveragePool([x], kernel_shape=[3, 3], strides=[2, 2],
                                                auto_pad="SAME_LOWER", count_include_pad=True), {}),
        "OnnxMaxPool": (ovp.OnnxMaxPool([x], kernel_shape=[2, 2], strides=[2, 1], pads=[1, 0, 0, 1],
                                        storage_order=1, ceil_mode=True), {}),
        "LpPool": (ovp.LpPool([x], kernel_shape=[2, 3], p=3.0, strides=[1, 2]), {}),
        "GlobalLpPool": (ovp.GlobalLpPool([x], p=1.0), {}),
    }


def test_one_class_per_entry_of_the_ovpool_opset_never_a_stock_version():
    entries = {t for (t, v) in layers.LAYERS if v == layers.OVPOOL_OPSET}
    assert set(ovp.OP_CLASSES) == entries
    for name, cls in ovp.OP_CLASSES.items():
        op = cls()                                   # the readers' path: no arguments
        info = op.get_type_info()
        assert (info.name, info.version_id) == (name, "ovpool")
        assert getattr(ovp, name) is cls


def test_attributes_survive_save_and_read(core, tmp_path):
    x = param([2, 3, 12, 14])
    ops = all_ops(x.output(0))
    values, indices = ovp.MaxPool([x], kernel=[2, 2], strides=[2, 2], axis=0).outputs()
    unpool = ovp.MaxUnpool([values, indices], kernel_shape=[2, 2], strides=[2, 2],
                           indices_relative_to="output_shape")
    ops["MaxUnpool"] = (unpool, {})
    results = [o8.result(o) for op, _ in ops.values() for o in op.outputs()]
    model = ov.Model(results, [x])
    ov.save_model(model, tmp_path / "m.xml")
    read = core.read_model(tmp_path / "m.xml")
    by_type = {}
    for node in read.get_ordered_ops():
        if node.get_type_info().version_id == "ovpool":
            by_type.setdefault(node.get_type_name(), []).append(node)
    for name, (op, _) in ops.items():
        (node,) = by_type[name] if name != "MaxPool" else by_type[name][-1:]
        assert node.get_attributes() == op.get_attributes(), name
        assert isinstance(node, ovp.OP_CLASSES[name])
    data = np.random.default_rng(0).standard_normal((2, 3, 12, 14)).astype(np.float32)
    for a, b in zip(run(core, model, [data]), run(core, read, [data])):
        np.testing.assert_array_equal(a, b)


def test_clone_keeps_attributes():
    x = param([1, 2, 9, 9])
    op = ovp.AvgPool([x], {"kernel": [3, 3], "strides": [2, 2], "exclude-pad": False,
                           "rounding_type": "ceil"})
    clone = op.clone_with_new_inputs([param([1, 2, 8, 8]).output(0)])   # ceil: 4, floor: 3
    assert type(clone) is ovp.AvgPool
    assert clone.get_attributes() == op.get_attributes()
    assert list(clone.get_output_partial_shape(0)) == list(ov.PartialShape([1, 2, 4, 4]))


def test_every_op_matches_the_numpy_api(core):
    rng = np.random.default_rng(1)
    data = rng.standard_normal((2, 3, 11, 13)).astype(np.float32)
    x = param([2, 3, 11, 13])
    for name, (op, _) in all_ops(x.output(0)).items():
        got = run(core, model_of(op, [x]), [data])
        attrs = op.attributes
        entry = layers.get(name, "ovpool")
        inputs = [data] + ([np.array([3, 4])] if name.startswith("Adaptive") else [])
        expected = entry.run(inputs, attrs)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype and g.shape == e.shape, name
            np.testing.assert_array_equal(g, e, err_msg=name)


def test_shape_inference_static_dynamic_and_value_dependent(core):
    x = param([-1, 3, -1, -1])
    op = ovp.MaxPool([x], kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])
    assert str(op.get_output_partial_shape(0)) == "[?,3,?,?]"
    x2 = param([4, 3, 13, 11])
    op2 = ovp.MaxPool([x2], kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
                      rounding_type="ceil_torch")
    assert str(op2.get_output_partial_shape(0)) == "[4,3,7,6]"
    assert op2.get_output_element_type(1) == ov.Type.i64
    # output_size a Parameter: the output's spatial dims are dynamic, evaluate reshapes
    size = param([2], np.int64, "size")
    adaptive = ovp.AdaptiveAvgPool([x, size])
    assert str(adaptive.get_output_partial_shape(0)) == "[?,3,?,?]"
    model = model_of(adaptive, [x, size])
    compiled = core.compile_model(model, "CPU", F32)
    request = compiled.create_infer_request()
    rng = np.random.default_rng(2)
    for shape, out in (((2, 3, 14, 14), (7, 7)), ((1, 3, 5, 9), (3, 8)), ((3, 3, 5, 5), (8, 8))):
        data = rng.standard_normal(shape).astype(np.float32)
        result = request.infer([data, np.array(out, np.int64)])
        got = result[compiled.outputs[0]]
        np.testing.assert_allclose(got, ovpool.adaptive_avg_pool(data, out), rtol=1e-6, atol=1e-6)


def test_evaluate_sets_the_shape_of_value_dependent_outputs(core):
    # MaxUnpool with output_shape given at run time
    x = param([1, 1, 2, 2])
    indices = param([1, 1, 2, 2], np.int64, "i")
    shape = param([4], np.int64, "shape")
    op = ovp.MaxUnpool([x, indices, shape], kernel_shape=[2, 2], strides=[2, 2],
                       indices_relative_to="output_shape")
    assert str(op.get_output_partial_shape(0)) == "[1,1,?,?]"
    values = np.array([[[[1, 2], [3, 4]]]], np.float32)
    where = np.array([[[[0, 3], [10, 15]]]], np.int64)
    for out_shape in ((1, 1, 4, 4), (1, 1, 5, 5)):
        (got,) = run(core, model_of(op, [x, indices, shape]),
                     [values, where, np.array(out_shape, np.int64)])
        expected = ovpool.max_unpool(values, where, (2, 2), strides=(2, 2), output_shape=out_shape,
                                     indices_relative_to="output_shape")
        np.testing.assert_array_equal(got, expected)


def test_dynamic_shapes_run_with_several_shapes(core):
    x = param([-1, -1, -1, -1])
    op = ovp.AvgPool([x], kernel=[3, 3], strides=[2, 2], auto_pad="same_upper")
    compiled = core.compile_model(model_of(op, [x]), "CPU", F32)
    request = compiled.create_infer_request()
    rng = np.random.default_rng(3)
    for shape in ((1, 2, 13, 13), (2, 1, 8, 5), (1, 2, 13, 13)):
        data = rng.standard_normal(shape).astype(np.float32)
        got = request.infer([data])[compiled.outputs[0]]
        expected = ov_ops.avg_pool(data, [3, 3], [2, 2], auto_pad="same_upper")
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("etype", ["f16", "bf16", "f64"])
def test_reduced_and_double_precision_models(core, etype):
    ml_dtypes = pytest.importorskip("ml_dtypes") if etype == "bf16" else None
    dtype = {"f16": np.float16, "f64": np.float64}.get(etype) or ml_dtypes.bfloat16
    rng = np.random.default_rng(4)
    data = rng.standard_normal((2, 3, 13, 11)).astype(np.float32).astype(dtype)
    x = param([2, 3, 13, 11], getattr(ov.Type, etype))
    avg = ovp.AvgPool([x], kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
                      rounding_type="ceil_torch")
    values, indices = ovp.MaxPool([x], kernel=[2, 2], strides=[2, 2], axis=2).outputs()
    adaptive = ovp.AdaptiveAvgPool([x, const([5, 4])])
    model = ov.Model([o8.result(o) for o in (avg.output(0), values, indices, adaptive.output(0))],
                     [x])
    if etype == "bf16":   # the tensor holds the raw bits
        tensor = ov.Tensor(ov.Type.bf16, ov.Shape(list(data.shape)))
        tensor.data.view(np.uint16)[...] = data.view(np.uint16)
    else:
        tensor = ov.Tensor(data)
    expected = [ov_ops.avg_pool(data, [3, 3], [2, 2], [1, 1], [1, 1], rounding_type="ceil_torch"),
                *ov_ops.max_pool(data, [2, 2], [2, 2], axis=2),
                ovpool.adaptive_avg_pool(data, (5, 4))]
    compiled = core.compile_model(model, "CPU", F32)
    result = compiled([tensor])
    for port, e in zip(compiled.outputs, expected):
        got = result[port]
        if port.get_element_type() == ov.Type.bf16:
            got = got.view(np.uint16).view(dtype)
        assert got.shape == e.shape
        if etype == "f64":   # OpenVINO's CPU computes f64 in f32
            np.testing.assert_allclose(got, e, rtol=1e-6, atol=1e-6)
        else:
            assert got.dtype == e.dtype
            np.testing.assert_array_equal(got, e)


def test_bf16_round_to_nearest_even_and_nan():
    values = np.array([1.0, 1.00390625, 1.01171875, -3.5, np.inf, -np.inf, np.nan,
                       3.4028235e38, 1e-40], np.float32)
    bits = ovp._f32_to_bf16_bits(values)
    ml_dtypes = pytest.importorskip("ml_dtypes")
    expected = values.astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(bits.view(ml_dtypes.bfloat16)[:6], expected[:6])
    assert np.isnan(bits.view(ml_dtypes.bfloat16)[6].astype(np.float32))
    np.testing.assert_array_equal(bits[7:], expected[7:].view(np.uint16))
    np.testing.assert_array_equal(ovp._bf16_to_f32(bits.view(np.float16))[:6],
                                  expected[:6].astype(np.float32))


def test_int8_max_pool(core):
    data = np.random.default_rng(5).integers(-128, 127, (1, 2, 9, 9)).astype(np.int8)
    x = param([1, 2, 9, 9], np.int8)
    op = ovp.MaxPool([x], kernel=[3, 3], strides=[2, 2], axis=1, index_element_type="i32")
    values, indices = run(core, model_of(op, [x]), [data])
    expected = ov_ops.max_pool(data, [3, 3], [2, 2], axis=1, index_element_type="i32")
    np.testing.assert_array_equal(values, expected[0])
    np.testing.assert_array_equal(indices, expected[1])


def test_bad_attributes_and_types_are_ovpool_errors():
    x = param([1, 2, 8, 8])
    with pytest.raises(ovpool.OvpoolValueError, match="kernel"):
        ovp.AvgPool([x], kernel=[0, 2], strides=[1, 1])
    with pytest.raises(ovpool.OvpoolValueError, match="unknown attributes"):
        ovp.MaxPool([x], kernel=[2, 2], strides=[1, 1], storage_order=1)
    with pytest.raises(layers.UnsupportedLayer, match="i32"):
        ovp.AvgPool([param([1, 2, 8, 8], np.int32)], kernel=[2, 2], strides=[2, 2])
    with pytest.raises(ovpool.OvpoolValueError, match="ovpool's opset has no op"):
        ovp.make_op("Convolution", [x])


def test_export_and_import(core):
    x = param([2, 3, 16, 16])
    values, indices = ovp.MaxPool([x], kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1],
                                  pads_end=[1, 1], axis=2).outputs()
    adaptive = ovp.AdaptiveMaxPool([values, const([3, 3])], index_element_type="i64")
    model = ov.Model([o8.result(o) for o in (indices, *adaptive.outputs())], [x])
    blob = core.compile_model(model, "CPU", F32).export_model()
    data = np.random.default_rng(6).standard_normal((2, 3, 16, 16)).astype(np.float32)
    with pytest.raises(RuntimeError, match="ovpool"):
        ov.Core().import_model(blob, "CPU")
    imported = ovp.register(ov.Core()).import_model(blob, "CPU")
    got = [imported([data])[o] for o in imported.outputs]
    for g, e in zip(got, run(core, model, [data])):
        np.testing.assert_array_equal(g, e)


def test_register_is_idempotent_and_needed(tmp_path):
    x = param([1, 1, 4, 4])
    ov.save_model(model_of(ovp.AdaptiveAvgPool([x, const([2, 2])]), [x]), tmp_path / "m.xml")
    with pytest.raises(RuntimeError, match="unsupported opset: ovpool"):
        ov.Core().read_model(tmp_path / "m.xml")
    core = ov.Core()
    assert ovp.register(core) is core
    assert ovp.register(core) is core       # the second call adds nothing
    names = [n.get_type_name() for n in core.read_model(tmp_path / "m.xml").get_ordered_ops()]
    assert "AdaptiveAvgPool" in names


def test_async_queue_with_streams_and_96_requests(core):
    x = param([4, 8, 28, 28])
    values, indices = ovp.MaxPool([x], kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1],
                                  pads_end=[1, 1], axis=0).outputs()
    avg = ovp.AdaptiveAvgPool([values, const([5, 5])])
    model = ov.Model([o8.result(o) for o in (avg.output(0), indices)], [x])
    compiled = core.compile_model(model, "CPU", {**F32, "NUM_STREAMS": "2"})
    assert compiled.get_property("NUM_STREAMS") == 2
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal((4, 8, 28, 28)).astype(np.float32) for _ in range(96)]
    results = [None] * 96
    queue = ov.AsyncInferQueue(compiled, 4)

    def done(request, k):
        results[k] = [np.array(request.get_output_tensor(i).data) for i in range(2)]

    queue.set_callback(done)
    for k, data in enumerate(inputs):
        queue.start_async([data], userdata=k)
    queue.wait_all()
    for data, got in zip(inputs, results):
        v, i = ov_ops.max_pool(data, [3, 3], [2, 2], [1, 1], [1, 1], axis=0)
        np.testing.assert_allclose(got[0], ovpool.adaptive_avg_pool(v, (5, 5)), rtol=1e-6)
        np.testing.assert_array_equal(got[1], i)


def test_thread_setting(core):
    with pytest.raises(ovpool.OvpoolValueError):
        ovp.set_num_threads(0)
    x = param([2, 4, 30, 30])
    model = model_of(ovp.AvgPool([x], kernel=[3, 3], strides=[1, 1]), [x])
    data = np.random.default_rng(8).standard_normal((2, 4, 30, 30)).astype(np.float32)
    auto = run(core, model, [data])[0]
    try:
        for n in (1, 2):
            ovp.set_num_threads(n)
            assert ovp.get_num_threads() == n
            np.testing.assert_array_equal(run(core, model, [data])[0], auto)
    finally:
        ovp.set_num_threads(None)
    assert ovp.get_num_threads() is None


def test_threads_inside_evaluate_follow_the_pinned_thread(core, monkeypatch):
    """OpenVINO pins the thread running evaluate; ovpool uses that many threads."""
    seen = []
    original = ovp._threads_for_call

    def spy():
        seen.append((len(os.sched_getaffinity(0)), original()[0]))
        return original()

    monkeypatch.setattr(ovp, "_threads_for_call", spy)
    x = param([1, 4, 30, 30])
    run(core, model_of(ovp.AvgPool([x], kernel=[3, 3], strides=[1, 1]), [x]),
        [np.ones((1, 4, 30, 30), np.float32)])
    ((cpus, threads),) = seen
    assert threads == min(cpus, ovpool.get_num_threads())


def test_thread_environment_variable():
    code = ("import ovpool.openvino as ovp; print(ovp.get_num_threads())")
    env = dict(os.environ, OVPOOL_OPENVINO_NUM_THREADS="3")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=root)
    assert out.stdout.strip() == "3", out.stderr
    env["OVPOOL_OPENVINO_NUM_THREADS"] = "x"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=root)
    assert out.returncode != 0 and "OVPOOL_OPENVINO_NUM_THREADS" in out.stderr


def test_evaluate_reshapes_an_output_passed_as_shape_0():
    """reference.cpp may hand over outputs of Shape{0} when their shape depends
    on input values: evaluate sets the shape before writing."""
    x = param([-1, 3, -1, -1])
    size = param([2], np.int64, "size")
    op = ovp.AdaptiveMaxPool([x, size], index_element_type="i32")
    data = np.random.default_rng(9).standard_normal((2, 3, 9, 7)).astype(np.float32)
    outputs = [ov.Tensor(ov.Type.f32, ov.Shape([0])), ov.Tensor(ov.Type.i32, ov.Shape([0]))]
    assert op.evaluate(outputs, [ov.Tensor(data), ov.Tensor(np.array([4, 3], np.int32))])
    values, indices = ovpool.adaptive_max_pool(data, (4, 3), index_dtype=np.int32)
    np.testing.assert_array_equal(outputs[0].data, values)
    np.testing.assert_array_equal(outputs[1].data, indices)
