"""The default policy is written once, in the library (src/openvino/native.cpp):
the ONNX and PyTorch conversions apply it, and ovpool.openvino.patch_plan /
patch_model ask it through the library's C entry points. So a pool gets the
same verdict by every route, and the verdicts hold against native OpenVINO
itself."""

import warnings

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
onnx = pytest.importorskip("onnx")

import openvino.opset8 as o8  # noqa: E402
import openvino.opset14 as o14  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import ovpool  # noqa: E402
import ovpool.openvino as ovp  # noqa: E402
from ovpool import ov_ops  # noqa: E402

F32 = {"INFERENCE_PRECISION_HINT": "f32"}


@pytest.fixture(scope="module")
def core(ov_extension):
    return ovp.register(ov.Core())


# (name, n, kernel, stride, pads (begin, end), auto_pad, rounding, count_include_pad, verdict)
CASES = [
    ("plain", 14, 3, 2, (1, 1), "NOTSET", "floor", 1, None),
    ("include_pad_ceil", 14, 3, 2, (1, 1), "NOTSET", "ceil_torch", 1, "avg_pool_include_pad_ceil"),
    ("exclude_pad_ceil", 14, 3, 2, (1, 1), "NOTSET", "ceil_torch", 0, None),
    # 27, k2 s3: OpenVINO's "ceil" adds a 10th window to ceil(27 / 3) = 9
    ("same_ceil_differs", 27, 2, 3, (0, 0), "SAME_UPPER", "ceil", 0, "output_shape"),
    # 28, k2 s3: its shape is the specification's, and so are its values
    ("same_ceil_agrees", 28, 2, 3, (0, 0), "SAME_UPPER", "ceil", 0, None),
    ("same_ceil_torch", 27, 2, 3, (0, 0), "SAME_UPPER", "ceil_torch", 0, None),
    ("same_floor", 27, 2, 3, (0, 0), "SAME_LOWER", "floor", 0, None),
    ("window_numbers", 9, 2, 2**17, (0, 0), "NOTSET", "floor", 0, "window_numbers"),
]


def _onnx_avg(n, kernel, stride, pads, auto_pad, rounding, include):
    attrs = dict(
        kernel_shape=[kernel],
        strides=[stride],
        ceil_mode=int(rounding == "ceil_torch"),
        count_include_pad=include,
    )
    if auto_pad == "NOTSET":
        attrs["pads"] = [pads[0], pads[1]]
    else:
        attrs["auto_pad"] = auto_pad
    node = helper.make_node("AveragePool", ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])


def _native_avg(n, kernel, stride, pads, auto_pad, rounding, include, dims=None):
    x = o8.parameter(dims or [1, 2, n], np.float32, name="x")
    mode = "explicit" if auto_pad == "NOTSET" else auto_pad.lower()
    node = o14.avg_pool(x, [stride], [pads[0]], [pads[1]], [kernel], not include, rounding, mode)
    node.set_friendly_name("pool")
    return ov.Model([node.output(0)], [x])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_every_route_gives_a_pool_the_same_verdict(core, case):
    """patch_plan on a native AvgPool and the ONNX conversion of the same
    AveragePool agree: moved to ovpool's op exactly where the library's
    verdict is a deviation."""
    _, n, kernel, stride, pads, auto_pad, rounding, include, verdict = case
    args = (n, kernel, stride, pads, auto_pad, rounding, include)
    (decision,) = ovp.patch_plan(_native_avg(*args))
    assert decision.deviation == verdict
    assert decision.move == (verdict is not None)
    if rounding == "ceil":
        return  # (ONNX has no such rounding: its ceil_mode is ceil_torch)
    model = core.read_model(_onnx_avg(*args).SerializeToString(), ov.Tensor(np.empty(0, np.uint8)))
    on_ovpool = any(op.get_type_info().version_id == "ovpool" for op in model.get_ordered_ops())
    assert on_ovpool == decision.move


def test_where_native_keeps_a_same_ceil_pool_it_is_right(core, rng):
    """The shape check asks native OpenVINO: a same_upper / ceil pool whose
    native shape is the specification's stays native, and native computes
    the specification's values there; one whose shape differs moves."""
    for n, moves in ((28, False), (27, True)):
        model = _native_avg(n, 2, 3, (0, 0), "SAME_UPPER", "ceil", 0)
        x = rng.standard_normal((1, 2, n)).astype(np.float32)
        native = core.compile_model(model, "CPU", F32)([x])[0]
        want = ov_ops.avg_pool(x, 2, 3, auto_pad="same_upper", rounding_type="ceil")
        assert (native.shape != want.shape) == moves
        if not moves:
            np.testing.assert_allclose(native, want, rtol=1e-6)
        assert ovp.patch_model(model) == int(moves)
        patched = core.compile_model(model, "CPU", F32)([x])[0]
        np.testing.assert_allclose(patched, want, rtol=1e-6)


def test_unknown_dims_count_as_a_deviation_where_they_could_be_one():
    """With the spatial dim unknown, a same_upper pool with "ceil" may add a
    window and moves; with ceil_torch or floor it cannot and stays."""
    dims = [1, 2, ov.Dimension(4, 64)]
    for rounding, moves in (("ceil", True), ("ceil_torch", False), ("floor", False)):
        (d,) = ovp.patch_plan(_native_avg(0, 2, 3, (0, 0), "SAME_UPPER", rounding, 0, dims))
        assert d.move == moves and d.deviation == ("output_shape" if moves else None)


def test_adaptive_verdicts_by_both_routes(core):
    """A global adaptive average stays native by patch_plan and becomes a
    native mean in the PyTorch conversion; other bins move by both."""
    torch = pytest.importorskip("torch")

    x = o8.parameter([1, 4, 12, 12], np.float32, name="x")
    nodes = {
        "global": o8.adaptive_avg_pool(x, o8.constant(np.array([1, 1]))),
        "bins": o8.adaptive_avg_pool(x, o8.constant(np.array([5, 5]))),
        "max": o8.adaptive_max_pool(x, o8.constant(np.array([1, 1])), "i32"),
    }
    for name, node in nodes.items():
        node.set_friendly_name(name)
    plan = {d.name: d for d in ovp.patch_plan(ov.Model([n.output(0) for n in nodes.values()], [x]))}
    assert not plan["global"].move and "ReduceMean" in plan["global"].reason
    assert plan["bins"].move and plan["bins"].faster
    assert plan["max"].deviation == "adaptive_max_pool"

    def kinds(size):
        module = torch.nn.AdaptiveAvgPool2d(size)
        with warnings.catch_warnings():  # (TorchScript's deprecation)
            warnings.simplefilter("ignore")
            model = ov.convert_model(
                module, example_input=torch.ones(1, 4, 12, 12), extension=ovp.pytorch_extensions()
            )
        return {op.get_type_info().version_id for op in model.get_ordered_ops()}

    assert "ovpool" not in kinds(1)
    assert "ovpool" in kinds(5)


def test_the_policy_reports_a_library_error_as_ovpools(ov_extension):
    """An exception inside the library's policy reaches Python as an
    OvpoolValueError with the library's message, never through the C ABI."""
    attrs = {
        "kernel": [0],
        "strides": [1],
        "dilations": [1],
        "pads_begin": [0],
        "pads_end": [0],
        "rounding_type": "floor",
        "auto_pad": "explicit",
        "exclude-pad": True,
    }
    with pytest.raises(ovpool.OvpoolValueError, match=r"ovpool's policy: .*kernel"):
        ovp._policy().window(False, attrs, ov.PartialShape([1, 1, 5]))
