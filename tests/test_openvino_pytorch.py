"""PyTorch modules through ``ov.convert_model(..., extension=<ovpool's
library>)`` against PyTorch itself, including where OpenVINO's own conversion
does not match PyTorch."""

import warnings

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
torch = pytest.importorskip("torch")

import ovpool.openvino as ovp  # noqa: E402

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
nn = torch.nn


@pytest.fixture(scope="module")
def core(ov_extension):
    return ovp.register(ov.Core())


def convert(module, x, ovpool=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if ovpool:
            return ov.convert_model(module, example_input=x, extension=ovp.pytorch_extensions())
        return ov.convert_model(module, example_input=x)


def run(core, model, x):
    compiled = core.compile_model(model, "CPU", F32)
    result = compiled([x.numpy()])
    return [result[o] for o in compiled.outputs]


def torch_outputs(module, x):
    with torch.no_grad():
        out = module(x)
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def max_abs_diff(got, expected):
    worst = 0.0
    for g, e in zip(got, expected):
        if g.shape != e.shape:
            return float("inf")
        if e.dtype.kind in "iu":
            worst = max(worst, float(np.abs(g.astype(np.int64) - e).max()) if e.size else 0.0)
            continue
        nan = np.isnan(e)
        if (np.isnan(g) != nan).any():
            return float("nan")
        worst = max(worst, float(np.abs(np.where(nan, 0, g - e)).max()) if e.size else 0.0)
    return worst


def assert_matches_torch(got, expected, atol=1e-6):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        if e.dtype.kind in "iu":
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=atol)


def nan_input(shape):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(3))
    x.view(-1)[::7] = float("nan")
    return x


# (module, input shape, native OpenVINO matches torch?)
MODULES = [
    (nn.MaxPool1d(4, 3, 2, ceil_mode=True, return_indices=True), (1, 2, 10), True),
    (nn.MaxPool2d(3, 2, 1), (2, 3, 14, 14), True),
    (nn.MaxPool2d(2, 2, 1, ceil_mode=True, return_indices=True), (1, 2, 5, 5), True),
    (nn.MaxPool2d(3, 2, 1, dilation=2, return_indices=True), (2, 3, 15, 14), True),
    (nn.MaxPool2d(3), (3, 13, 13), True),  # unbatched
    (nn.MaxPool3d(2, 2, 1, ceil_mode=True, return_indices=True), (1, 2, 5, 6, 7), True),
    (nn.AvgPool1d(7, 3, 3, ceil_mode=True), (1, 2, 9), False),
    (nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=True), (1, 2, 14, 14), False),
    (nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False), (1, 2, 14, 14), True),
    (nn.AvgPool2d(2, stride=3, ceil_mode=True), (3, 10, 10), True),  # unbatched
    (nn.AvgPool3d(3, 2, 1, ceil_mode=True), (1, 2, 5, 6, 7), False),
    (nn.AdaptiveAvgPool1d(997), (1, 1, 100003), False),  # In*Out > 2**24
    (nn.AdaptiveAvgPool2d((3, None)), (2, 3, 13, 11), True),
    (nn.AdaptiveAvgPool3d((4, 3, 5)), (1, 2, 9, 10, 11), True),
    (nn.AdaptiveMaxPool1d(4, return_indices=True), (2, 3, 50), True),
    (nn.AdaptiveMaxPool2d((5, 4), return_indices=True), (1, 3, 17, 6), True),
    (nn.AdaptiveMaxPool2d(2), "nan", False),  # NaN propagates
    (nn.AdaptiveMaxPool3d(2, return_indices=True), (1, 2, 5, 6, 7), True),
    # the stride left out (PyTorch's default: the kernel)
    (nn.AvgPool2d(2), (2, 3, 9, 8), True),
    (nn.AvgPool1d(3), (3, 10), True),  # unbatched
    (nn.AvgPool3d((2, 1, 3), ceil_mode=True, count_include_pad=False), (1, 2, 5, 6, 7), True),
    (nn.MaxPool2d(2), (2, 3, 9, 8), True),
    (nn.MaxPool1d(3, return_indices=True), (1, 2, 10), True),
    (nn.MaxPool3d((2, 1, 3), dilation=(1, 2, 1)), (1, 2, 5, 6, 7), True),
]


@pytest.mark.parametrize("policy", ovp.POLICIES)
@pytest.mark.parametrize(
    "module, shape, native_ok",
    MODULES,
    ids=[f"{type(m).__name__}-{k}" for k, (m, _, _) in enumerate(MODULES)],
)
def test_module_matches_torch(core, module, shape, native_ok, policy):
    x = (
        nan_input((1, 3, 4, 4))
        if shape == "nan"
        else torch.randn(*shape, generator=torch.Generator().manual_seed(len(shape)))
    )
    expected = torch_outputs(module, x)
    with ovp.conversion_policy(policy):
        model = convert(module, x)
    kinds = {
        n.get_type_info().version_id for n in model.get_ordered_ops() if "Pool" in n.get_type_name()
    }
    if policy == "all":
        assert kinds == {"ovpool"}
    elif not native_ok:  # where native OpenVINO is wrong, ovpool's op
        assert "ovpool" in kinds
    got = run(core, model, x)
    assert_matches_torch(got, expected)
    # the default policy: the patched native conversion is as right
    native = convert(module, x, ovpool=False)
    ovp.patch_model(native)
    assert_matches_torch(run(core, native, x), expected)
    if policy == "all":
        return
    native = run(core, convert(module, x, ovpool=False), x)
    diff = max_abs_diff(native, expected)
    assert (diff <= 1e-6) == native_ok, f"native OpenVINO differs by {diff}"


def test_a_small_cnn_saved_and_read_back(core, tmp_path):
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(3, 2, 1, ceil_mode=True),
        nn.Conv2d(8, 8, 3, padding=1),
        nn.ReLU(),
        nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=True),
        nn.AdaptiveAvgPool2d(3),
        nn.Flatten(),
    ).eval()
    x = torch.randn(2, 3, 30, 30)
    expected = torch_outputs(net, x)
    model = convert(net, x)
    # the convolutions differ by ~1e-4 between oneDNN and torch; the native
    # AvgPool (ceil, count_include_pad) is further off
    assert max_abs_diff(run(core, model, x), expected) < 1e-3
    assert max_abs_diff(run(core, convert(net, x, ovpool=False), x), expected) > 1e-2
    ov.save_model(model, tmp_path / "cnn.xml", compress_to_fp16=False)
    with pytest.raises(RuntimeError, match="ovpool"):
        ov.Core().read_model(tmp_path / "cnn.xml")
    again = ovp.register(ov.Core()).read_model(tmp_path / "cnn.xml")
    np.testing.assert_array_equal(run(core, again, x)[0], run(core, model, x)[0])


def test_dynamic_input_shapes(core):
    module = nn.MaxPool2d(3, 2, 1, ceil_mode=True, return_indices=True)
    x = torch.randn(1, 2, 9, 9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ov.convert_model(
            module, example_input=x, input=[-1, 2, -1, -1], extension=ovp.pytorch_extensions()
        )
    compiled = core.compile_model(model, "CPU", F32)
    request = compiled.create_infer_request()
    for shape in ((1, 2, 9, 9), (3, 2, 16, 11)):
        x = torch.randn(*shape)
        result = request.infer([x.numpy()])
        assert_matches_torch([result[o] for o in compiled.outputs], torch_outputs(module, x))


class Functional(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, x):
        return self.f(x)


# every way F.avg_pool2d / F.max_pool2d take their windows: ints, lists,
# tuples, the stride left out, None or empty
FUNCTIONAL_FORMS = [
    lambda x: nn.functional.avg_pool2d(x, 2),
    lambda x: nn.functional.avg_pool2d(x, [3, 2], None, (1, 0), True, False),
    lambda x: nn.functional.avg_pool2d(x, (2, 3), [], 1),
    lambda x: nn.functional.max_pool2d(x, 3, None, 1, 1, True),
    lambda x: nn.functional.max_pool2d(x, [2, 3], [], [1, 1], (2, 1)),
    lambda x: nn.functional.max_pool2d(x, 3, return_indices=True)[1],
    lambda x: nn.functional.avg_pool1d(x[0], 3),
    lambda x: nn.functional.max_pool3d(x[:, None], (1, 2, 2)),
]


@pytest.mark.parametrize("policy", ovp.POLICIES)
@pytest.mark.parametrize("form", range(len(FUNCTIONAL_FORMS)))
def test_every_argument_form_converts(core, form, policy):
    module = Functional(FUNCTIONAL_FORMS[form])
    x = torch.randn(2, 3, 11, 10, generator=torch.Generator().manual_seed(form))
    with ovp.conversion_policy(policy):
        model = convert(module, x)
    if policy == "all":
        kinds = {n.get_type_info().version_id for n in model.get_ordered_ops()}
        assert "ovpool" in kinds and not {"opset14", "opset16"} & kinds
    assert_matches_torch(run(core, model, x), torch_outputs(module, x))


def test_torch_export_dynamic_shapes(core):
    """torch.export with dynamic spatial dims: the FX names convert onto
    ovpool's ops, and one compiled model serves every shape."""

    class Net(nn.Module):
        def forward(self, x):
            v, i = nn.functional.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)
            return v, i, nn.functional.avg_pool2d(x, 2), nn.functional.adaptive_avg_pool2d(x, 3)

    net = Net()
    dim = 2 * torch.export.Dim("half", min=3, max=32)  # ceil_mode's guard wants even sides
    x = torch.randn(1, 2, 12, 12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.export.export(net, (x,), dynamic_shapes={"x": {2: dim, 3: dim}})
        with ovp.conversion_policy("all"):
            model = ov.convert_model(program, extension=ovp.pytorch_extensions())
    kinds = {
        n.get_type_info().version_id for n in model.get_ordered_ops() if "Pool" in n.get_type_name()
    }
    assert kinds == {"ovpool"}
    compiled = core.compile_model(model, "CPU", F32)
    request = compiled.create_infer_request()
    for side in (12, 8, 34):
        x = torch.randn(1, 2, side, side)
        result = request.infer([x.numpy()])
        assert_matches_torch([result[o] for o in compiled.outputs], torch_outputs(net, x))


def test_divisor_override_is_refused_clearly(core):
    module = nn.AvgPool2d(3, 2, 1, divisor_override=2)
    with pytest.raises(Exception, match="divisor_override is not supported"):
        convert(module, torch.randn(1, 2, 8, 8))


def test_the_converted_ops(core):
    assert "aten::max_pool2d_with_indices" in ovp.PYTORCH_OPS
    assert "aten.max_pool2d_with_indices.default" in ovp.PYTORCH_OPS
    assert "aten._adaptive_avg_pool3d.default" in ovp.PYTORCH_OPS
    assert len(ovp.PYTORCH_OPS) == 15 + 18
    assert ovp.pytorch_extensions() == [ovp.extension_path()]
