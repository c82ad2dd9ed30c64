"""ONNX models through OpenVINO's ONNX frontend with the conversion
extensions of ovpool's library (``ovpool.openvino.register``): every pool case
of the ONNX backend suite, and the places where the frontend alone is wrong."""

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from references import onnx_pool_cases  # noqa: E402

import ovpool  # noqa: E402
import ovpool.openvino as ovp  # noqa: E402

F32 = {"INFERENCE_PRECISION_HINT": "f32"}


CASES = onnx_pool_cases()


@pytest.fixture(scope="module")
def core(ov_extension):
    return ovp.register(ov.Core())


def read(core, model):
    return core.read_model(model.SerializeToString(), ov.Tensor(np.empty(0, np.uint8)))


def run(core, model, inputs):
    compiled = core.compile_model(model, "CPU", F32)
    result = compiled(list(inputs))
    return [result[o] for o in compiled.outputs]


def node_model(node, inputs, outputs, opset=22):
    graph = helper.make_graph([node], "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def tensor(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def test_the_suite_has_all_53_pool_cases():
    assert len(CASES) == 53


@pytest.mark.parametrize("policy", ovp.POLICIES)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_backend_case(core, case, policy):
    with ovp.conversion_policy(policy):
        model = read(core, case.model)
    kinds = {
        n.get_type_info().version_id
        for n in model.get_ordered_ops()
        if n.get_type_name() not in ("Parameter", "Result", "Constant")
    }
    if policy == "all":
        assert kinds == {"ovpool"}, kinds  # every pool on ovpool, nothing native
    assert case.data_sets, case.name
    compiled = core.compile_model(model, "CPU", F32)
    for inputs, expected in case.data_sets:
        result = compiled(list(inputs))
        got = [result[o] for o in compiled.outputs]
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.shape == e.shape and g.dtype == e.dtype
            np.testing.assert_allclose(g, e, rtol=case.rtol, atol=case.atol)


def test_max_pool_ceil_mode_shape(core):
    """OpenVINO's ONNX frontend maps ceil_mode to MaxPool-8 ``ceil``: 4x4 on
    (1,1,5,5) k2 s2 p1, where ONNX (ORT, the reference, torch) gives 3x3."""
    node = helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1
    )
    model = node_model(
        node,
        [tensor("x", TensorProto.FLOAT, [1, 1, 5, 5])],
        [tensor("y", TensorProto.FLOAT, None)],
        opset=12,
    )
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    (native,) = run(ov.Core(), read(ov.Core(), model), [x])
    assert native.shape == (1, 1, 4, 4)
    (got,) = run(core, read(core, model), [x])
    np.testing.assert_array_equal(
        got, ovpool.max_pool(x, 2, strides=2, pads=[1, 1, 1, 1], ceil_mode=True)
    )
    assert got.shape == (1, 1, 3, 3)


def test_max_pool_storage_order_and_int8(core):
    node = helper.make_node(
        "MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2], storage_order=1
    )
    model = node_model(
        node,
        [tensor("x", TensorProto.INT8, [2, 2, 6, 5])],
        [tensor("y", TensorProto.INT8, None), tensor("i", TensorProto.INT64, None)],
        opset=12,
    )
    x = np.random.default_rng(0).integers(-100, 100, (2, 2, 6, 5)).astype(np.int8)
    values, indices = run(core, read(core, model), [x])
    expected = ovpool.max_pool(x, 2, strides=2, storage_order=1, return_indices=True)
    np.testing.assert_array_equal(values, expected[0])
    np.testing.assert_array_equal(indices, expected[1])
    # the frontend alone ignores storage_order
    model = node_model(
        node,
        [tensor("x", TensorProto.FLOAT, [2, 2, 6, 5])],
        [tensor("y", TensorProto.FLOAT, None), tensor("i", TensorProto.INT64, None)],
        opset=12,
    )
    native = run(ov.Core(), read(ov.Core(), model), [x.astype(np.float32)])[1]
    assert not np.array_equal(native, expected[1])


def test_max_unpool_with_output_shape_given_at_run_time(core):
    node = helper.make_node(
        "MaxUnpool", ["x", "i", "shape"], ["y"], kernel_shape=[2, 2], strides=[2, 2]
    )
    model = node_model(
        node,
        [
            tensor("x", TensorProto.FLOAT, [1, 1, 2, 2]),
            tensor("i", TensorProto.INT64, [1, 1, 2, 2]),
            tensor("shape", TensorProto.INT64, [4]),
        ],
        [tensor("y", TensorProto.FLOAT, None)],
    )
    with pytest.raises(RuntimeError, match="MaxUnpool"):
        read(ov.Core(), model)  # no conversion rule in the frontend
    converted = read(core, model)
    assert str(converted.outputs[0].get_partial_shape()) == "[1,1,?,?]"
    x = np.array([[[[1, 2], [3, 4]]]], np.float32)
    i = np.array([[[[0, 3], [9, 15]]]], np.int64)
    for shape in ((1, 1, 4, 4), (1, 1, 5, 6)):
        (got,) = run(core, converted, [x, i, np.array(shape, np.int64)])
        np.testing.assert_array_equal(
            got, ovpool.max_unpool(x, i, 2, strides=2, output_shape=shape)
        )


def test_global_lp_pool_and_global_pools_on_3d(core):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    for op, attrs, expected in (
        ("GlobalLpPool", {"p": 3}, ovpool.global_lp_pool(x, p=3)),
        ("GlobalAveragePool", {}, ovpool.global_avg_pool(x)),
        ("GlobalMaxPool", {}, ovpool.global_max_pool(x)),
    ):
        node = helper.make_node(op, ["x"], ["y"], **attrs)
        model = node_model(
            node,
            [tensor("x", TensorProto.FLOAT, [2, 3, 4, 5, 6])],
            [tensor("y", TensorProto.FLOAT, None)],
        )
        for policy in ovp.POLICIES:
            with ovp.conversion_policy(policy):
                converted = read(core, model)
            kinds = {n.get_type_info().version_id for n in converted.get_ordered_ops()}
            # by default the global average and max are native ReduceMean / ReduceMax
            assert ("ovpool" in kinds) == (policy == "all" or op == "GlobalLpPool"), (op, policy)
            (got,) = run(core, converted, [x])
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_default_policy_moves_only_what_native_gets_wrong_or_slow(core):
    """MaxPool's values and a right AveragePool stay native; MaxPool's
    Indices and an AveragePool native OpenVINO divides wrongly are ovpool's."""

    def kinds_of(node, outputs):
        model = node_model(node, [tensor("x", TensorProto.FLOAT, [1, 2, 14, 14])], outputs)
        return sorted(
            f"{n.get_type_name()}-{n.get_type_info().version_id}"
            for n in read(core, model).get_ordered_ops()
            if "Pool" in n.get_type_name()
        )

    values = [tensor("y", TensorProto.FLOAT, None)]
    both = values + [tensor("i", TensorProto.INT64, None)]
    maxpool = helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1
    )
    assert kinds_of(maxpool, values) == ["MaxPool-opset14"]
    maxpool_i = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[3, 3], strides=[2, 2])
    assert kinds_of(maxpool_i, both) == ["MaxPool-opset14", "OnnxMaxPool-ovpool"]
    right = helper.make_node(
        "AveragePool",
        ["x"],
        ["y"],
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 1, 1, 1],
        count_include_pad=1,
    )
    assert kinds_of(right, values) == ["AvgPool-opset16"]
    wrong = helper.make_node(
        "AveragePool",
        ["x"],
        ["y"],
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 1, 1, 1],
        count_include_pad=1,
        ceil_mode=1,
    )
    assert kinds_of(wrong, values) == ["OnnxAveragePool-ovpool"]


def test_average_pool_dynamic_batch_f16(core):
    node = helper.make_node(
        "AveragePool",
        ["x"],
        ["y"],
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 1, 1, 1],
        ceil_mode=1,
        count_include_pad=1,
    )
    model = node_model(
        node,
        [tensor("x", TensorProto.FLOAT16, ["n", 2, 14, 14])],
        [tensor("y", TensorProto.FLOAT16, None)],
    )
    converted = read(core, model)
    for n in (1, 3):
        x = np.random.default_rng(n).standard_normal((n, 2, 14, 14)).astype(np.float16)
        (got,) = run(core, converted, [x])
        expected = ovpool.avg_pool(
            x, 3, strides=2, pads=[1, 1, 1, 1], ceil_mode=True, count_include_pad=True
        )
        assert got.dtype == np.float16
        np.testing.assert_allclose(
            got.astype(np.float32), expected.astype(np.float32), rtol=2e-3, atol=2e-3
        )


def _window_node(op, kernel, name, **attrs):
    node = helper.make_node(op, ["X"], ["Y"], name=name, **attrs)
    if kernel is not None:
        node.attribute.append(
            helper.make_attribute("kernel_shape", kernel, attr_type=onnx.AttributeProto.INTS)
        )
    return node


@pytest.mark.parametrize("policy", ovp.POLICIES)
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool", "LpPool"])
@pytest.mark.parametrize("kernel", [None, [], [2], [2, 2, 2]], ids=["absent", "empty", "1", "3"])
@pytest.mark.parametrize("name", ["pool1", ""], ids=["named", "unnamed"])
def test_a_kernel_that_is_not_one_per_axis_is_refused(core, op, kernel, name, policy):
    """ONNX wants one kernel_shape entry per spatial axis: absent, empty or
    of another length, the node is refused with ovpool's message (onnx's
    checker, ONNX Runtime and native OpenVINO refuse it too), never run as
    an identity; the message names the node, by its output when unnamed."""
    node = _window_node(op, kernel, name)
    model = node_model(
        node,
        [tensor("X", TensorProto.FLOAT, [1, 2, 6, 6])],
        [tensor("Y", TensorProto.FLOAT, None)],
        opset=18,
    )
    with ovp.conversion_policy(policy), pytest.raises(RuntimeError) as error:
        read(core, model)
    message = str(error.value)
    expected = (
        "kernel_shape must have 2 entries for 2 spatial dims"
        if not kernel
        else f"kernel_shape={kernel} gives {len(kernel)} spatial dims"
    )
    assert expected.replace(" ", "") in message.replace(" ", "")
    assert f"<Node({op}): {name or 'Y'}>" in message  # the frontend's report of the node
    # the independent verdicts: ONNX Runtime and native OpenVINO refuse it too
    ort = pytest.importorskip("onnxruntime")
    state = ort.capi.onnxruntime_pybind11_state
    with pytest.raises((state.Fail, state.InvalidGraph, state.InvalidArgument)):
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(RuntimeError):
        ov.Core().read_model(model.SerializeToString(), ov.Tensor(np.empty(0, np.uint8)))


def test_an_attribute_message_names_an_unnamed_node(core):
    node = _window_node("MaxPool", [2, 2], "", ceil_mode=2)
    model = node_model(
        node,
        [tensor("X", TensorProto.FLOAT, [1, 2, 6, 6])],
        [tensor("Y", TensorProto.FLOAT, None)],
        opset=18,
    )
    with pytest.raises(RuntimeError, match="ceil_mode of the unnamed MaxPool node must be 0 or 1"):
        read(core, model)
