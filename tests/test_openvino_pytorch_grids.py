"""OpenVINO's own PyTorch-frontend layer tests for pooling, rebuilt from their
parameter grids and run through every route a PyTorch user takes with
ovpool's library loaded.

The grids are those of ``tests/layer_tests/pytorch_tests/test_pooling.py``,
``test_adaptive_avg_pool.py`` and ``test_adaptive_max_pool.py`` in
openvinotoolkit/openvino (170 cases: the same modules, parameters, input
shapes and dtypes). Each case is computed by PyTorch (the reference) and by

* native OpenVINO (``ov.convert_model(module, example_input=x)``), whose
  failures are listed in NATIVE_DEVIATIONS rather than skipped;
* ovpool's conversions on the TorchScript route, under both policies (under
  ``"all"`` every pool is one of ovpool's ops);
* ovpool's conversions on the torch.export route
  (``ov.convert_model(torch.export.export(module, (x,)), extension=...)``),
  under both policies;
* the numpy API (``ovpool.avg_pool``, ``max_pool``, ``adaptive_*``).

Max values and indices must be exact, averages within 1e-5.
"""

import warnings
from dataclasses import dataclass

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
torch = pytest.importorskip("torch")

import ovpool  # noqa: E402
import ovpool.openvino as ovp  # noqa: E402

F = torch.nn.functional
F32 = {"INFERENCE_PRECISION_HINT": "f32"}


@dataclass(frozen=True)
class Case:
    op: str  # avg_poolNd, max_poolNd, max_poolNd_with_indices, adaptive_*
    shape: tuple
    kernel_size: object = None
    stride: object = None
    padding: object = 0
    dilation: object = 1
    ceil_mode: bool = False
    count_include_pad: bool = True
    output_size: object = None
    return_indices: bool = False
    dtype: str = "float32"  # the module pools x.to(dtype)

    @property
    def rank(self):
        return int(self.op.split("pool")[1][0])

    @property
    def id(self):
        parts = [self.op, "x".join(map(str, self.shape))]
        for name in ("kernel_size", "stride", "padding", "dilation", "output_size"):
            value = getattr(self, name)
            if value is not None and not (name == "dilation" and value == 1):
                parts.append(f"{name[0]}{value!r}".replace(" ", ""))
        if self.ceil_mode:
            parts.append("ceil")
        if self.op.startswith("avg") and not self.count_include_pad:
            parts.append("nopad")
        if self.return_indices:
            parts.append("indices")
        if self.dtype != "float32":
            parts.append(self.dtype)
        return "-".join(parts)


# test_pooling.py's parameters (the d2 list as the file enables it)
D1 = [
    dict(kernel_size=3, stride=1, padding=0),
    dict(kernel_size=(4,), stride=1, padding=1),
    dict(kernel_size=4, stride=(5,), padding=2),
    dict(kernel_size=4, stride=None, padding=0),
]
D2 = [dict(kernel_size=[8, 8], stride=[8, 4], padding=1)]
D3 = [
    dict(kernel_size=[3, 3, 3], stride=1, padding=0),
    dict(kernel_size=[3, 3, 3], stride=[1, 1, 1], padding=1),
    dict(kernel_size=[3, 3, 3], stride=[3, 3, 3], padding=[0, 0, 0]),
    dict(kernel_size=[3, 2, 1], stride=[3, 1, 1], padding=[0, 0, 0]),
    dict(kernel_size=[3, 2, 1], stride=None, padding=[0, 0, 0]),
]
POOL_SHAPE = (1, 3, 15, 15, 15)


def _pooling_cases():
    cases = []
    for n, grid in ((1, D1), (2, D2), (3, D3)):
        shape = POOL_SHAPE[: n + 2]
        for params in grid:
            for ceil in (True, False):
                for cip in (True, False):
                    cases.append(
                        Case(
                            f"avg_pool{n}d", shape, ceil_mode=ceil, count_include_pad=cip, **params
                        )
                    )
            for ceil in (True, False):
                for dilation in (1, 2):
                    for dtype in ("float32", "int32") if n == 2 else ("float32",):
                        cases.append(
                            Case(
                                f"max_pool{n}d",
                                shape,
                                ceil_mode=ceil,
                                dilation=dilation,
                                dtype=dtype,
                                **params,
                            )
                        )
            for ceil in (True, False):
                for dilation in (1, 2):
                    cases.append(
                        Case(
                            f"max_pool{n}d",
                            shape,
                            ceil_mode=ceil,
                            dilation=dilation,
                            return_indices=True,
                            **params,
                        )
                    )
    return cases


def _adaptive_cases():
    cases = []
    for shape in ((1, 2, 8, 9, 10), (2, 8, 9, 10)):
        for size in ([5, 7, 9], 7):
            cases.append(Case("adaptive_avg_pool3d", shape, output_size=size))
    for shape in ((2, 8, 9, 10), (8, 9, 10)):
        for size in ([7, 9], 7):
            cases.append(Case("adaptive_avg_pool2d", shape, output_size=size))
    for shape in ((8, 9, 10), (9, 10)):
        cases.append(Case("adaptive_avg_pool1d", shape, output_size=7))
    max_grids = {
        3: ([(2, 1, 1, 4, 4), (4, 1, 3, 32, 32), (1, 3, 32, 32)], [[2, 2, 2], [4, 4, 4]]),
        2: ([(2, 1, 4, 4), (1, 3, 32, 32), (3, 32, 32)], [[2, 2], [4, 4]]),
        1: ([(1, 4, 4), (3, 32, 32), (16, 8)], [2, 4]),
    }
    for n, (shapes, sizes) in max_grids.items():
        for shape in shapes:
            for size in sizes:
                for indices in (False, True):
                    cases.append(
                        Case(
                            f"adaptive_max_pool{n}d",
                            shape,
                            output_size=size,
                            return_indices=indices,
                        )
                    )
    return cases


CASES = _pooling_cases() + _adaptive_cases()
assert len(CASES) == 170

# Where native OpenVINO's conversion does not match PyTorch: an average
# counting pads whose last ceil_mode window starts in the padding and runs
# past it, which native OpenVINO divides by the whole kernel (semantics.md).
NATIVE_DEVIATIONS = {
    "avg_pool2d-1x3x15x15-k[8,8]-s[8,4]-p1-ceil",
}


# Cases that stay on native OpenVINO under policy "all", and why.
STAYS_NATIVE = {c.id: "ovpool's max pools take no int32 yet" for c in CASES if c.dtype == "int32"}


def _pool(case, x):
    """The case's PyTorch call on x: a tuple of its outputs."""
    c = case
    if c.dtype != "float32":
        x = x.to(getattr(torch, c.dtype))
    f = getattr(F, c.op)
    if c.op.startswith("avg_pool"):
        out = f(x, c.kernel_size, c.stride, c.padding, c.ceil_mode, c.count_include_pad)
    elif c.op.startswith("max_pool"):
        out = f(
            x,
            c.kernel_size,
            c.stride,
            c.padding,
            c.dilation,
            c.ceil_mode,
            return_indices=c.return_indices,
        )
    elif c.op.startswith("adaptive_max"):
        out = f(x, c.output_size, c.return_indices)
    else:
        out = f(x, c.output_size)
    return out if isinstance(out, tuple) else (out,)


class Group(torch.nn.Module):
    """The cases of one op on one input as one module, their outputs in a
    row (a graph per case would make the suite minutes longer: the
    conversions and compilations cost far more than the pools)."""

    def __init__(self, cases):
        super().__init__()
        self.cases = cases

    def forward(self, x):
        return tuple(o for case in self.cases for o in _pool(case, x))


def _groups():
    groups = {}
    for case in CASES:
        groups.setdefault((case.op, case.shape, case.dtype, case.return_indices), []).append(case)
    return list(groups.values())


GROUPS = _groups()


def _group_id(cases):
    c = cases[0]
    return "-".join(
        [c.op, "x".join(map(str, c.shape))]
        + (["indices"] if c.return_indices else [])
        + ([c.dtype] if c.dtype != "float32" else [])
    )


def _input(cases):
    rng = np.random.default_rng(sum(map(ord, _group_id(cases))))
    return torch.from_numpy(rng.standard_normal(cases[0].shape).astype(np.float32))


def _split(outputs, cases, x):
    """The flat outputs of a group, per case (as many as PyTorch gives it)."""
    out, k = {}, 0
    for case in cases:
        n = len(_pool(case, x))
        out[case.id] = outputs[k : k + n]
        k += n
    assert k == len(outputs)
    return out


def _reference(cases, x):
    with torch.no_grad():
        return _split([np.asarray(o.numpy()) for o in Group(cases)(x)], cases, x)


def _convert(source, ovpool_ext, policy, x=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        extension = ovp.pytorch_extensions() if ovpool_ext else None
        with ovp.conversion_policy(policy):
            if x is None:
                return ov.convert_model(source, extension=extension)
            return ov.convert_model(source, example_input=x, extension=extension)


def _run(core, model, x):
    compiled = core.compile_model(model, "CPU", F32)
    result = compiled([x.numpy()])
    return [np.asarray(result[o]) for o in compiled.outputs]


def _assert_matches(got, expected, what):
    assert len(got) == len(expected), what
    for g, e in zip(got, expected):
        assert g.shape == e.shape, f"{what}: shape {g.shape} != {e.shape}"
        if e.dtype.kind in "iu":
            np.testing.assert_array_equal(g.astype(np.int64), e.astype(np.int64), err_msg=what)
        else:
            np.testing.assert_allclose(g, e, rtol=0, atol=1e-5, err_msg=what)


def _matches(got, expected):
    try:
        _assert_matches(got, expected, "")
    except AssertionError:
        return False
    return True


def _pool_nodes(model):
    """(friendly name, opset) of each pool node of a converted model."""
    return [
        (n.get_friendly_name(), n.get_type_info().version_id)
        for n in model.get_ordered_ops()
        if "Pool" in n.get_type_name()
    ]


def _check_route(core, cases, x, model, policy, route):
    expected = _reference(cases, x)
    got = _split(_run(core, model, x), cases, x)
    for case in cases:
        _assert_matches(got[case.id], expected[case.id], f"{case.id} ({route}, {policy})")
    if policy == "all":
        native = [name for name, opset in _pool_nodes(model) if opset != "ovpool"]
        stays = [c for c in cases if c.id in STAYS_NATIVE]
        assert len(native) == len(stays), (route, _pool_nodes(model))


@pytest.fixture(scope="module")
def core(ov_extension):
    return ovp.register(ov.Core())


@pytest.mark.parametrize("cases", GROUPS, ids=[_group_id(g) for g in GROUPS])
def test_native_openvino_as_listed(core, cases):
    """Native OpenVINO on the grids: right except where NATIVE_DEVIATIONS
    says, so that a deviation fixed upstream (or a new one) shows here."""
    x = _input(cases)
    expected = _reference(cases, x)
    got = _split(_run(core, _convert(Group(cases).eval(), False, "default", x), x), cases, x)
    wrong = {c.id for c in cases if not _matches(got[c.id], expected[c.id])}
    assert wrong == {c.id for c in cases} & NATIVE_DEVIATIONS


@pytest.mark.parametrize("policy", ovp.POLICIES)
@pytest.mark.parametrize("cases", GROUPS, ids=[_group_id(g) for g in GROUPS])
def test_torchscript_route(core, cases, policy):
    x = _input(cases)
    model = _convert(Group(cases).eval(), True, policy, x)
    _check_route(core, cases, x, model, policy, "TorchScript")


@pytest.mark.parametrize("policy", ovp.POLICIES)
@pytest.mark.parametrize("cases", GROUPS, ids=[_group_id(g) for g in GROUPS])
def test_torch_export_route(core, cases, policy):
    x = _input(cases)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.export.export(Group(cases).eval(), (x,))
    _check_route(core, cases, x, _convert(program, True, policy), policy, "torch.export")


def _numpy_api(case, x):
    """The case through ovpool's numpy API, in PyTorch's terms."""
    n = case.rank
    unbatched = len(case.shape) == n + 1
    a = x.numpy()
    if case.dtype != "float32":
        a = torch.from_numpy(a).to(getattr(torch, case.dtype)).numpy()
    if unbatched:
        a = a[None]

    def per_axis(value, fill=None):
        if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
            return fill
        if isinstance(value, int):
            return [value] * n
        return list(value) * (n // len(value))

    if case.op.startswith("adaptive"):
        size = per_axis(case.output_size)
        if case.op.startswith("adaptive_avg"):
            out = [ovpool.adaptive_avg_pool(a, size)]
        else:
            out = list(ovpool.adaptive_max_pool(a, size))
            if not case.return_indices:
                out = out[:1]
    else:
        kernel = per_axis(case.kernel_size)
        strides = per_axis(case.stride, kernel)
        pads = per_axis(case.padding) * 2
        if case.op.startswith("avg"):
            out = [
                ovpool.avg_pool(
                    a,
                    kernel,
                    strides=strides,
                    pads=pads,
                    ceil_mode=case.ceil_mode,
                    count_include_pad=case.count_include_pad,
                )
            ]
        else:
            got = ovpool.max_pool(
                a,
                kernel,
                strides=strides,
                pads=pads,
                dilations=per_axis(case.dilation),
                ceil_mode=case.ceil_mode,
                return_indices=case.return_indices,
            )
            if case.return_indices:
                values, indices = got
                plane = int(np.prod(a.shape[2:]))
                out = [values, indices % plane]  # ONNX's flat indices, PyTorch's per plane
            else:
                out = [got]
    return [o[0] if unbatched else o for o in out]


@pytest.mark.parametrize("cases", GROUPS, ids=[_group_id(g) for g in GROUPS])
def test_numpy_api(cases):
    x = _input(cases)
    expected = _reference(cases, x)
    for case in cases:
        if case.id in STAYS_NATIVE:
            with pytest.raises(ovpool.OvpoolError, match="int32"):
                _numpy_api(case, x)
            continue
        _assert_matches(_numpy_api(case, x), expected[case.id], case.id)
