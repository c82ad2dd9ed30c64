"""IR models through OpenVINO with ovpool's extension library: ``read_model``
and ``patch_model`` (an in-memory model) under both policies, against
OpenVINO's native results and the recorded specification answers."""

import glob
import os

import numpy as np
import pytest

ov = pytest.importorskip("openvino")

import openvino.opset8 as o8  # noqa: E402

import ovpool  # noqa: E402
import ovpool.openvino as ovp  # noqa: E402
from ovpool import IRError, _check, ir  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = sorted(glob.glob(os.path.join(HERE, "..", "ir_examples", "*.xml")))
STOCK = {f"{t}-{v}" for t, v in ovp.STOCK_LAYERS}
F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def name_of(path):
    return os.path.splitext(os.path.basename(path))[0]


def pool_kinds(model):
    return {
        f"{n.get_type_name()}-{n.get_type_info().version_id}"
        for n in model.get_ordered_ops()
        if "Pool" in n.get_type_name()
    }


def run(core, model, inputs):
    compiled = core.compile_model(model, "CPU", F32)
    result = compiled(list(inputs))
    outputs = []
    for port in compiled.outputs:
        array = np.array(result[port])
        if port.get_element_type() == ov.Type.bf16:
            array = _check._bf16_from_bits(array)
        outputs.append(array)
    return outputs


def expected_outputs(path):
    """The recording: OpenVINO's native result, or the specification's where
    OpenVINO's CPU deviates (meta reference "spec")."""
    return _check.load_recording(path)


def assert_outputs(path, got, recording):
    model = ir.read_model(path)
    ok, diff, why = _check.compare_all(model, got, recording.outputs)
    assert ok, f"{name_of(path)}: {why} (max abs diff {diff})"


@pytest.fixture(scope="module")
def core(ov_extension):
    return ovp.register(ov.Core())


def test_examples_are_there():
    names = {name_of(p) for p in EXAMPLES}
    assert {"max_pool_1", "avg_pool_1", "adaptive_max_pool_8_i64", "chain"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=name_of)
def test_read_model_all(core, path):
    recording = expected_outputs(path)
    model = ovp.read_model(core, path, policy="all")
    kinds = pool_kinds(model)
    assert kinds and not kinds & STOCK, kinds
    assert all(k.endswith("-ovpool") for k in kinds)
    assert_outputs(path, run(core, model, recording.inputs), recording)


@pytest.mark.parametrize("path", EXAMPLES, ids=name_of)
def test_read_model_default_policy_is_exact(core, path):
    """The default policy moves fewer nodes, and every example still gives
    the specification's answer (the recording), where native OpenVINO
    deviates too."""
    recording = expected_outputs(path)
    model = ovp.read_model(core, path)
    assert_outputs(path, run(core, model, recording.inputs), recording)
    if recording.reference == "spec":
        assert any(k.endswith("-ovpool") for k in pool_kinds(model))


@pytest.mark.parametrize("path", EXAMPLES, ids=name_of)
def test_patch_model_and_save_read_round_trip(core, path, tmp_path):
    recording = expected_outputs(path)
    model = core.read_model(path)  # native
    stock = [
        n
        for n in model.get_ordered_ops()
        if f"{n.get_type_name()}-{n.get_type_info().version_id}" in STOCK
    ]
    native = None
    if recording.reference == "openvino":
        native = run(core, model, recording.inputs)
    names = [sorted(o.get_names()) for o in model.outputs]
    if name_of(path).startswith("ovpool_opset"):  # already ovpool's: nothing to patch
        assert not stock and ovp.patch_model(model, policy="all") == 0
    else:
        assert ovp.patch_model(model, policy="all") == len(stock) > 0
    assert not pool_kinds(model) & STOCK
    assert [sorted(o.get_names()) for o in model.outputs] == names
    model.validate_nodes_and_infer_types()
    got = run(core, model, recording.inputs)
    assert_outputs(path, got, recording)
    if native is not None:  # live native result, not only the recording
        assert_outputs(path, got, type(recording)(recording.inputs, native, recording.meta))
    ov.save_model(model, tmp_path / "patched.xml")
    again = ovp.register(ov.Core()).read_model(tmp_path / "patched.xml")
    assert not pool_kinds(again) & STOCK
    assert_outputs(path, run(core, again, recording.inputs), recording)


def test_read_model_completes_max_pool_1_and_keeps_names(core):
    path = os.path.join(HERE, "..", "ir_examples", "max_pool_1.xml")
    assert pool_kinds(ovp.read_model(core, path)) == {"MaxPool-opset1"}  # native is right
    model = ovp.read_model(core, path, policy="all")
    (pool,) = [n for n in model.get_ordered_ops() if n.get_type_name() == "MaxPool"]
    assert pool.get_output_size() == 2  # MaxPool-1 had one output
    assert pool.get_attributes()["dilations"] == [1, 1]
    assert [o.get_any_name() for o in model.outputs] == [
        o.get_any_name() for o in ov.Core().read_model(path).outputs
    ]


def test_read_model_rejects_hostile_files_before_openvino(core, tmp_path):
    path = os.path.join(HERE, "..", "ir_examples", "max_pool_1.xml")
    text = open(path, encoding="utf-8").read()
    bad = tmp_path / "doctype.xml"
    bad.write_text(text.replace("<net ", '<!DOCTYPE net [<!ENTITY x "y">]>\n<net ', 1))
    with pytest.raises(IRError, match="DOCTYPE"):
        ovp.read_model(core, bad)
    # an edge to a missing layer: OpenVINO 2026.4's reader segfaults on it
    missing = tmp_path / "missing.xml"
    missing.write_text(text.replace('to-layer="1"', 'to-layer="99"', 1))
    with pytest.raises(IRError, match="missing layer"):
        ovp.read_model(core, missing)


def test_layers_ovpool_does_not_run_stay_native(core, tmp_path):
    x = o8.parameter([1, 2, 6, 6], np.int32, name="x")
    pool = o8.max_pool(x, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2])  # i32: not for ovpool
    y = o8.adaptive_avg_pool(o8.convert(x, "f32"), o8.constant(np.array([3, 3])))
    model = ov.Model([o8.result(pool.output(0)), o8.result(y.output(0))], [x])
    ov.save_model(model, tmp_path / "m.xml")
    read = ovp.read_model(core, tmp_path / "m.xml", policy="all")
    assert pool_kinds(read) == {"MaxPool-opset8", "AdaptiveAvgPool-ovpool"}
    assert ovp.patch_model(model, policy="all") == 1
    assert pool_kinds(model) == {"MaxPool-opset8", "AdaptiveAvgPool-ovpool"}
    data = np.arange(72, dtype=np.int32).reshape(1, 2, 6, 6)
    for a, b in zip(run(core, read, [data]), run(core, model, [data])):
        np.testing.assert_array_equal(a, b)


def test_max_pool_values_only_skips_the_indices(core):
    """A MaxPool whose indices nobody reads computes the values only (the
    indices cost ~20x more); with the indices read they are right."""
    x = o8.parameter([2, 3, 13, 13], np.float32, name="x")
    values, indices = ovp.make_op(
        "MaxPool", [x], kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1], axis=2
    ).outputs()
    data = np.random.default_rng(0).standard_normal((2, 3, 13, 13)).astype(np.float32)
    (only,) = run(core, ov.Model([o8.result(values)], [x]), [data])
    both = run(core, ov.Model([o8.result(values), o8.result(indices)], [x]), [data])
    np.testing.assert_array_equal(only, both[0])
    assert both[1].max() > 0 and both[1].min() >= 0


def test_read_model_with_a_separate_bin_and_without_one(core, tmp_path):
    examples = os.path.join(HERE, "..", "ir_examples")
    recording = expected_outputs(os.path.join(examples, "chain.xml"))
    xml, weights = tmp_path / "renamed.xml", tmp_path / "weights" / "w.bin"
    weights.parent.mkdir()
    xml.write_bytes(open(os.path.join(examples, "chain.xml"), "rb").read())
    weights.write_bytes(open(os.path.join(examples, "chain.bin"), "rb").read())
    model = ovp.read_model(core, xml, weights)
    assert_outputs(
        os.path.join(examples, "chain.xml"), run(core, model, recording.inputs), recording
    )
    alone = tmp_path / "alone.xml"  # no Const layers: no .bin needed
    alone.write_bytes(open(os.path.join(examples, "max_pool_1.xml"), "rb").read())
    assert pool_kinds(ovp.read_model(core, alone, policy="all")) == {"MaxPool-ovpool"}


def test_ovpool_check_compares_a_network_through_openvino(core, tmp_path, capsys):
    """A model with layers ovpool's runtime does not run (Convolution, ...) is
    checked through OpenVINO: its pool layers on ovpool's ops against native
    OpenVINO, those where native deviates left native (and named)."""
    import openvino.opset1 as o1

    from ovpool import cli

    rng = np.random.default_rng(0)
    x = o8.parameter([2, 3, 28, 28], np.float32, name="x")
    conv = o8.convolution(
        x,
        o8.constant(rng.standard_normal((8, 3, 3, 3)).astype(np.float32)),
        [1, 1],
        [1, 1],
        [1, 1],
        [1, 1],
    )
    pool = o8.max_pool(o8.relu(conv), [2, 2], [1, 1], [1, 1], [1, 1], [3, 3])
    avg = o1.avg_pool(pool.output(0), [2, 2], [1, 1], [1, 1], [3, 3], False, "ceil")  # deviates
    head = o8.adaptive_avg_pool(avg, o8.constant(np.array([5, 3])))
    model = ov.Model([o8.result(head), o8.result(pool.output(1))], [x])
    ov.save_model(model, tmp_path / "net.xml")
    row = _check.check_model(tmp_path / "net.xml", use_openvino=True, repeat=1)
    assert row.status == "ok" and row.route == "openvino", row
    assert row.reference == "openvino"
    assert "2 pool layer(s) on ovpool's ops" in row.note
    assert "1 left native where OpenVINO deviates (avg_pool_include_pad_ceil)" in row.note
    assert cli.main(["check", "--repeat", "1", str(tmp_path / "net.xml")]) == 0
    assert "1 ok (1 through OpenVINO with ovpool's ops)" in capsys.readouterr().out


def test_default_policy_decisions(core):
    """Each rule of the default policy, node by node (patch_plan), and what
    patch_model then does; "all" moves every node ovpool takes."""
    import openvino.opset1 as o1
    import openvino.opset14 as o14

    x = o8.parameter([2, 8, 28, 28], np.float32, name="x")
    x27 = o8.parameter([2, 8, 27, 27], np.float32, name="x27")
    conv = o8.relu(
        o8.convolution(
            x, o8.constant(np.ones((8, 8, 1, 1), np.float32)), [1, 1], [0, 0], [0, 0], [1, 1]
        )
    )
    nodes = {
        "values": o14.max_pool(conv, [2, 2], [1, 1], [1, 1], [1, 1], [3, 3], "ceil_torch"),
        "indices": o8.max_pool(conv, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2]),
        "avg_exact": o1.avg_pool(conv, [2, 2], [1, 1], [1, 1], [3, 3], True, "ceil"),
        "avg_deviates": o1.avg_pool(conv, [2, 2], [1, 1], [1, 1], [3, 3], False, "ceil"),
        # 27: native gives 10 windows of 2 at stride 3, the specification ceil(27 / 3) = 9
        "same_ceil": o8.max_pool(x27, [3, 3], [1, 1], [0, 0], [0, 0], [2, 2], "ceil", "same_upper"),
        "global": o8.adaptive_avg_pool(conv, o8.constant(np.array([1, 1]))),
        "bins": o8.adaptive_avg_pool(conv, o8.constant(np.array([6, 6]))),
        "tiles": o8.adaptive_avg_pool(conv, o8.constant(np.array([7, 7]))),
        "adaptive_max": o8.adaptive_max_pool(conv, o8.constant(np.array([5, 5])), "i32"),
        "int": o8.max_pool(o8.convert(x, "i32"), [2, 2], [1, 1], [0, 0], [0, 0], [2, 2]),
    }
    results = []
    for name, node in nodes.items():
        node.set_friendly_name(name)
        results.append(o8.result(node.output(0)))
    results.append(o8.result(nodes["indices"].output(1)))
    model = ov.Model(results, [x, x27])
    plan = {d.name: d for d in ovp.patch_plan(model)}
    moved = {name for name, d in plan.items() if d.move}
    assert moved == {"indices", "avg_deviates", "same_ceil", "bins", "tiles", "adaptive_max"}
    assert plan["avg_deviates"].deviation == "avg_pool_include_pad_ceil"
    assert plan["same_ceil"].deviation == "output_shape"
    assert plan["adaptive_max"].deviation == "adaptive_max_pool"
    assert plan["indices"].faster and "reference" in plan["indices"].reason
    assert "ReduceMean" in plan["global"].reason
    assert not plan["int"].supported
    assert {d.name for d in ovp.patch_plan(model, policy="all") if d.move} == set(nodes) - {"int"}
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(s).astype(np.float32) for s in ((2, 8, 28, 28), (2, 8, 27, 27))]
    native = run(core, model, data)
    assert ovp.patch_model(model) == 6
    patched = run(core, model, data)
    for k, (a, b) in enumerate(zip(native, patched)):
        if k in (3, 4):  # native deviates: the value, the shape
            assert a.shape != b.shape or np.abs(a - b).max() > 1e-3
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(ovpool.OvpoolValueError, match="policy"):
        ovp.patch_model(model, policy="fast")


@pytest.mark.parametrize(
    "type_, version",
    [("MaxPool", "opset8"), ("AvgPool", "opset1"), ("MaxPool", "ovpool"), ("AvgPool", "ovpool")],
)
@pytest.mark.parametrize("kernel", ["", "2", "2, 2, 2"], ids=["empty", "1", "3"])
def test_an_ir_pool_without_one_kernel_entry_per_axis_is_refused(tmp_path, type_, version, kernel):
    """A pool whose kernel does not give one entry per spatial axis is no
    identity: ovpool's IR reader refuses it naming the layer and its line,
    and OpenVINO with the library loaded refuses it too."""
    from ir_helpers import pool_model

    data = {
        "kernel": kernel,
        "strides": "2, 2",
        "pads_begin": "0, 0",
        "pads_end": "0, 0",
        "rounding_type": "floor",
        "auto_pad": "explicit",
    }
    if type_ == "AvgPool":
        data["exclude-pad"] = "true"
    n_out = 2 if type_ == "MaxPool" and version == "opset8" else 1
    _, path = pool_model(tmp_path, data, type_, version, n_out=n_out)
    with pytest.raises(IRError, match=r"model.xml:\d+: .* layer .pool.") as error:
        ir.read_model(path)(np.zeros((1, 2, 8, 8), np.float32))
    assert "pool" in str(error.value) and "kernel" in str(error.value)
    # OpenVINO reads a stock layer itself (and refuses it its own way); an
    # ovpool layer is the library's, whose message names the kernel
    with pytest.raises(RuntimeError, match="kernel" if version == "ovpool" else None):
        ovp.register(ov.Core()).compile_model(path, "CPU")
