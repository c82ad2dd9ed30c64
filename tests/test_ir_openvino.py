"""ovpool.ir against OpenVINO itself: a held-out-style set of random IR models
written by ``ov.save_model`` at test time (random pool layers, versions and
attributes, chains, dynamic batch, bounded dims, compressed constants) must
give OpenVINO's native CPU results; the layer table's attribute spellings,
reader defaults, output order and names must be OpenVINO's.

Configurations where OpenVINO's CPU plugin deviates from its specification
are not generated here (AvgPool exclude-pad=false with ceil rounding; same_*
auto_pad with ceil rounding; In*Out > 2**24 adaptive bins; NaN in AdaptiveMaxPool;
i64 AdaptiveMaxPool indices; f64 empty MaxPool windows, -FLT_MAX on OpenVINO's CPU
which computes f64 in f32);
tests/test_ir_reader.py checks those against PyTorch, and
test_openvino_still_deviates below notices when OpenVINO fixes them.
"""

import glob
import os
import random

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
import openvino.opset1 as ov1  # noqa: E402
import openvino.opset8 as ov8  # noqa: E402
import openvino.opset14 as ov14  # noqa: E402
import openvino.opset16 as ov16  # noqa: E402
from lxml import etree  # noqa: E402

from ovpool import _check, ir, layers, ov_ops  # noqa: E402
from ovpool.errors import OvpoolError  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N_RANDOM_MODELS = int(os.environ.get("OVPOOL_IR_RANDOM_MODELS", "60"))
POOL_KINDS = ["adaptive_avg", "adaptive_max", "avg1", "avg14", "avg16", "max1", "max8", "max14"]


def ov_run(path, inputs):
    outputs, _ = _check.run_openvino(path, inputs)
    return outputs


# --------------------------------------------------------------------------
# Random models
# --------------------------------------------------------------------------


def _pool_attrs(rng, spatial, kind, empty_windows):
    """Random valid attributes (None when this shape cannot take them).

    ``empty_windows``: allow windows with no input element (MaxPool pads >=
    kernel, ``ceil`` rounding). Only the last layer of a chain gets them: their
    -FLT_MAX / NaN outputs would meet OpenVINO's tie rule for values equal to
    its -FLT_MAX start value in the next MaxPool (OpenVINO keeps index 0,
    ovpool the first element equal to the maximum)."""
    n = len(spatial)
    versions = {"avg1": 1, "avg14": 14, "avg16": 16, "max1": 1, "max8": 8, "max14": 14}
    version = versions[kind]
    is_avg = kind.startswith("avg")
    kernel = [rng.randint(1, min(4, s + 1)) for s in spatial]
    dilations = [1] * n
    if version in (8, 14, 16) and not (is_avg and version == 14):
        dilations = [rng.choice([1, 1, 2, 3]) for _ in range(n)]
    strides = [rng.randint(1, 3) for _ in range(n)]
    auto_pad = rng.choice(["explicit", "explicit", "explicit", "same_upper", "same_lower", "valid"])
    effective = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    # AvgPool exclude-pad needs pad < kernel; MaxPool allows pad == kernel (empty windows)
    limit = [e - 1 if is_avg or not empty_windows else e for e in effective]
    begins = [rng.randint(0, max(0, lim)) for lim in limit]
    ends = [rng.randint(0, max(0, lim)) for lim in limit]
    roundings = (
        ["floor"] + (["ceil"] if empty_windows else []) + (["ceil_torch"] if version >= 14 else [])
    )
    rounding = rng.choice(roundings)
    exclude_pad = rng.random() < 0.6
    # where OpenVINO deviates from its spec (tests/test_ir_reader.py, tests/test_ov_ops.py):
    if is_avg and not exclude_pad and rounding != "floor":
        rounding = "floor"  # include-pad + ceil: OpenVINO's CPU divides by the full kernel
    if auto_pad in ("same_upper", "same_lower") and rounding == "ceil":
        rounding = "floor"  # OpenVINO's shape inference adds a window beyond ceil(n/s)
    if auto_pad == "valid":
        begins, ends = [0] * n, [0] * n
    if any(
        s + b + e < ek for s, b, e, ek in zip(spatial, begins, ends, effective)
    ) and auto_pad in ("explicit", "valid"):
        return None
    if not empty_windows and _has_empty_window(
        spatial, kernel, strides, begins, ends, dilations, auto_pad, rounding
    ):
        return None  # e.g. dilated taps that all skip over a short input
    return dict(
        kernel=kernel,
        strides=strides,
        dilations=dilations,
        pads_begin=begins,
        pads_end=ends,
        auto_pad=auto_pad,
        rounding_type=rounding,
        exclude_pad=exclude_pad,
        version=version,
        index_element_type=rng.choice(["i32", "i64"]),
        axis=rng.randint(-(n + 2), n + 1),
    )


def _has_empty_window(spatial, kernel, strides, begins, ends, dilations, auto_pad, rounding):
    """Whether some window holds no input element, by enumerating every tap
    (the pads auto_pad resolves come from ovpool's lowering)."""
    try:
        lowering = ov_ops.ov_lowering(
            "MaxPool",
            (1, 1) + tuple(spatial),
            0,
            2,
            kernel,
            strides,
            begins,
            ends,
            dilations,
            auto_pad,
            rounding,
        )
    except OvpoolError:
        return True
    for a, n_in in enumerate(spatial):
        pad_begin = lowering.pads[a][0]
        for o in range(lowering.out_shape[2 + a]):
            taps = (o * strides[a] - pad_begin + t * dilations[a] for t in range(kernel[a]))
            if not any(0 <= p < n_in for p in taps):
                return True
    return False


def _make_pool(rng, node, kind, spatial, empty_windows):
    """One random pool layer on ``node``: (layer node, extra outputs) or None."""
    if kind in ("adaptive_avg", "adaptive_max"):
        size = np.array(
            [rng.randint(1, s + 3) for s in spatial], dtype=rng.choice([np.int32, np.int64])
        )
        if kind == "adaptive_avg":
            return ov8.adaptive_avg_pool(node, ov8.constant(size)), []
        pool = ov8.adaptive_max_pool(node, ov8.constant(size), index_element_type="i32")
        return pool, [pool.output(1)]
    a = _pool_attrs(rng, spatial, kind, empty_windows)
    if a is None:
        return None
    auto = None if a["auto_pad"] == "explicit" else a["auto_pad"]
    args = (a["strides"], a["pads_begin"], a["pads_end"], a["kernel"])
    if kind == "avg1":
        return ov1.avg_pool(node, *args, a["exclude_pad"], a["rounding_type"], auto), []
    if kind == "avg14":
        return ov14.avg_pool(node, *args, a["exclude_pad"], a["rounding_type"], auto), []
    if kind == "avg16":
        return ov16.avg_pool(
            node, *args, a["exclude_pad"], a["rounding_type"], auto, dilations=a["dilations"]
        ), []
    if kind == "max1":
        return ov1.max_pool(node, *args, a["rounding_type"], auto), []
    builder = ov8.max_pool if kind == "max8" else ov14.max_pool
    pool = builder(
        node,
        a["strides"],
        a["dilations"],
        a["pads_begin"],
        a["pads_end"],
        a["kernel"],
        a["rounding_type"],
        auto,
        a["index_element_type"],
        a["axis"],
    )
    return pool, [pool.output(1)]


def random_model(seed, folder):
    """(xml path, inputs, description) of one random model written by ov.save_model."""
    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    n_spatial = rng.randint(1, 3)
    spatial = [rng.randint(3, 12) for _ in range(n_spatial)]
    channels = rng.randint(1, 4)
    batch = rng.randint(1, 3)
    dtype = rng.choice([np.float32] * 6 + [np.float16] * 2 + [np.float64])
    dims = [batch, channels] + spatial
    pshape = list(dims)
    if rng.random() < 0.35:
        pshape[0] = -1
    if rng.random() < 0.2:
        pshape[2] = ov.Dimension(1, spatial[0] + 5)
    x = ov8.parameter(ov.PartialShape(pshape), dtype, name="x")
    x.output(0).set_names({"x"})
    node, results, description = x, [], []
    cur = list(spatial)
    n_layers = rng.randint(1, 3)
    for position in range(n_layers):
        # f64: OpenVINO's CPU computes in f32, so an empty MaxPool window is
        # -FLT_MAX there and the f64 lowest value in ovpool (native f64)
        empty_windows = position == n_layers - 1 and dtype != np.float64
        for _attempt in range(20):
            kind = rng.choice(POOL_KINDS)
            try:
                made = _make_pool(rng, node, kind, cur, empty_windows)
            except RuntimeError:  # OpenVINO's validation refused these attributes
                made = None
            if made is None:
                continue
            pool, extra = made
            shape = pool.get_output_partial_shape(0)
            new = [
                shape[2 + k].get_length() if shape[2 + k].is_static else 0 for k in range(n_spatial)
            ]
            if min(new) < 1:
                continue
            break
        else:
            break
        description.append(
            f"{pool.get_type_name()}-{pool.get_type_info().version_id}{pool.get_attributes()}"
        )
        results.extend(ov8.result(o) for o in extra)
        node, cur = pool.output(0), new
        if rng.random() < 0.3:
            results.append(ov8.result(node))
    results.append(ov8.result(node))
    if rng.random() < 0.3:  # a constant branch: f16-compressed by save_model
        table = ov8.constant(np_rng.standard_normal((1, 2, 6)).astype(np.float32))
        results.append(ov8.result(ov1.max_pool(table, [2], [0], [0], [2])))
    rng.shuffle(results)
    model = ov.Model(results, [x], f"random_{seed}")
    path = os.path.join(folder, f"random_{seed}.xml")
    ov.save_model(model, path, compress_to_fp16=rng.random() < 0.7)
    data = np_rng.standard_normal(dims)
    if rng.random() < 0.3:
        data = np.round(data * 2)  # ties: the first maximum
    return path, [data.astype(dtype)], description


@pytest.fixture(scope="module")
def random_models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("random_ir")
    return [random_model(seed, str(folder)) for seed in range(N_RANDOM_MODELS)]


def test_random_models_match_openvino(random_models):
    failures, kinds = [], set()
    for path, inputs, description in random_models:
        model = ir.read_model(path)
        kinds |= {layer.entry.key for layer in model.layers if layer.entry}
        got = model(*inputs)
        expected = ov_run(path, inputs)
        ok, diff, why = _check.compare_all(model, got, expected)
        if not ok:
            failures.append(f"{os.path.basename(path)}: {why} (max diff {diff}); {description}")
    assert not failures, "\n".join(failures)
    assert {
        ("AdaptiveAvgPool", "opset8"),
        ("AdaptiveMaxPool", "opset8"),
        ("AvgPool", "opset1"),
        ("AvgPool", "opset14"),
        ("AvgPool", "opset16"),
        ("MaxPool", "opset1"),
        ("MaxPool", "opset8"),
        ("MaxPool", "opset14"),
        ("Convert", "opset1"),
    } <= kinds


def test_random_models_describe_like_openvino(random_models):
    core = ov.Core()
    for path, _, _ in random_models:
        ours, theirs = ir.read_model(path), core.read_model(path)
        for mine, port in zip(ours.inputs + ours.outputs, theirs.inputs + theirs.outputs):
            assert mine.name == port.get_any_name()
            assert set(mine.names) == set(port.get_names())
            pshape = port.get_partial_shape()
            assert mine.shape == tuple(d.get_length() if d.is_static else None for d in pshape)
            assert mine.element_type == port.get_element_type().get_type_name()
        assert len(ours.outputs) == len(theirs.outputs)


# --------------------------------------------------------------------------
# Output order, spellings and defaults
# --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_output_order_follows_the_document_like_openvino(tmp_path, seed):
    """Shuffle the layers and renumber the ids: both readers keep the Results'
    (and Parameters') document order."""
    rng = random.Random(seed)
    tree = etree.parse(os.path.join(ROOT, "ir_examples", "multi_output.xml"))
    layers_el = tree.find("layers")
    items = list(layers_el)
    rng.shuffle(items)
    ids = list(range(100, 100 + len(items)))
    rng.shuffle(ids)
    mapping = {el.get("id"): str(i) for el, i in zip(items, ids)}
    for el in items:
        layers_el.remove(el)
    for el in items:
        el.set("id", mapping[el.get("id")])
        layers_el.append(el)
    for edge in tree.find("edges"):
        edge.set("from-layer", mapping[edge.get("from-layer")])
        edge.set("to-layer", mapping[edge.get("to-layer")])
    path = str(tmp_path / "shuffled.xml")
    tree.write(path)
    open(str(tmp_path / "shuffled.bin"), "wb").write(
        open(os.path.join(ROOT, "ir_examples", "multi_output.bin"), "rb").read()
    )
    ours, theirs = ir.read_model(path), ov.Core().read_model(path)
    assert [o.layer.name for o in ours.outputs] == [
        o.get_node().get_friendly_name() for o in theirs.outputs
    ]
    assert [i.layer.name for i in ours.inputs] == [
        i.get_node().get_friendly_name() for i in theirs.inputs
    ]
    recording = _check.load_recording(os.path.join(ROOT, "ir_examples", "multi_output.xml"))
    inputs = (
        [recording.inputs[[i.name for i in ours.inputs].index(n)] for n in ("x", "h")]
        if [i.name for i in ours.inputs] == ["x", "h"]
        else recording.inputs[::-1]
    )
    ok, _, why = _check.compare_all(ours, ours(*inputs), ov_run(path, inputs))
    assert ok, why


def _stock_nodes():
    x = ov8.parameter([1, 2, 8, 8], np.float32)
    size = ov8.constant(np.array([3, 3], np.int64))
    return {
        ("AdaptiveAvgPool", "opset8"): ov8.adaptive_avg_pool(x, size),
        ("AdaptiveMaxPool", "opset8"): ov8.adaptive_max_pool(x, size),
        ("AvgPool", "opset1"): ov1.avg_pool(x, [1, 1], [0, 0], [0, 0], [2, 2], True),
        ("AvgPool", "opset14"): ov14.avg_pool(x, [1, 1], [0, 0], [0, 0], [2, 2], True),
        ("AvgPool", "opset16"): ov16.avg_pool(x, [1, 1], [0, 0], [0, 0], [2, 2], True),
        ("MaxPool", "opset1"): ov1.max_pool(x, [1, 1], [0, 0], [0, 0], [2, 2]),
        ("MaxPool", "opset8"): ov8.max_pool(x, [1, 1], [1, 1], [0, 0], [0, 0], [2, 2]),
        ("MaxPool", "opset14"): ov14.max_pool(x, [1, 1], [1, 1], [0, 0], [0, 0], [2, 2]),
        ("Convert", "opset1"): ov8.convert(x, "f16"),
        ("Parameter", "opset1"): x,
        ("Const", "opset1"): size,
        ("Result", "opset1"): ov8.result(x),
    }


def test_the_table_matches_openvinos_ops():
    """Type names, versions and attribute names (spelled as OpenVINO writes them)."""
    nodes = _stock_nodes()
    assert set(nodes) == {k for k in layers.LAYERS if k[1] != "ovpool"}
    for key, node in nodes.items():
        info = node.get_type_info()
        type_name = {"Constant": "Const"}.get(info.name, info.name)
        assert (type_name, info.version_id) == key
        entry = layers.LAYERS[key]
        ir_only = {"offset", "size"} if key == ("Const", "opset1") else set()  # .bin position
        assert set(node.get_attributes()) | ir_only == set(entry.attr_names), key
        assert len(entry.inputs) == node.get_input_size(), key
        assert len(entry.outputs) == (node.get_output_size() if key[0] != "Result" else 0), key


@pytest.mark.parametrize(
    "key", sorted(k for k in layers.LAYERS if k[1] != "ovpool" and k[0].endswith("Pool"))
)
def test_reader_defaults_match_openvino(tmp_path, key):
    """Write the layer with only its required attributes; OpenVINO's reader
    and ovpool's apply the same defaults."""
    type_, version = key
    nodes = _stock_nodes()
    model = ov.Model(
        [ov8.result(o) for o in nodes[key].outputs()],
        [n for k, n in nodes.items() if k == ("Parameter", "opset1")],
    )
    path = str(tmp_path / "full.xml")
    ov.save_model(model, path)
    tree = etree.parse(path)
    entry = layers.LAYERS[key]
    for layer in tree.iter("layer"):
        if layer.get("type") == type_:
            data = layer.find("data")
            if data is not None:
                for name in list(data.attrib):
                    if not entry.attr(name).required:
                        del data.attrib[name]
    stripped = str(tmp_path / "stripped.xml")
    tree.write(stripped)
    open(str(tmp_path / "stripped.bin"), "wb").write(open(str(tmp_path / "full.bin"), "rb").read())
    theirs = [n for n in ov.Core().read_model(stripped).get_ops() if n.get_type_name() == type_][0]
    ours = [layer for layer in ir.read_model(stripped).layers if layer.type == type_][0]
    expected = theirs.get_attributes()
    for attr in entry.attrs:
        mine, their = ours.attributes[attr.name], expected[attr.name]
        if attr.kind == "ints" and attr.per_axis and mine == []:
            mine = [attr.fill] * 2  # [] = the fill value on every axis
            their = their or [attr.fill] * 2
        assert mine == their, (key, attr.name, mine, their)


@pytest.mark.parametrize(
    "type_, version, accepted",
    [
        ("MaxPool", "opset5", True),
        ("MaxPool", "opset16", True),
        ("AvgPool", "opset15", True),
        ("AdaptiveAvgPool", "opset1", False),
        ("MaxPool", "opset17", False),
        ("AdaptiveAvgPool", "opset99", False),
    ],
)
def test_versions_accepted_like_openvino(tmp_path, type_, version, accepted):
    source = os.path.join(
        ROOT,
        "ir_examples",
        "adaptive_avg_pool_8.xml"
        if type_ == "AdaptiveAvgPool"
        else "max_pool_1.xml"
        if type_ == "MaxPool"
        else "avg_pool_1.xml",
    )
    text = open(source).read()
    old = f'type="{type_}" version="'
    start = text.index(old) + len(old)
    text = text[:start] + version + text[text.index('"', start) :]
    path = tmp_path / "m.xml"
    path.write_text(text)
    (tmp_path / "m.bin").write_bytes(open(source[:-4] + ".bin", "rb").read())
    try:
        ov.Core().read_model(str(path))
        ov_ok = True
    except RuntimeError:
        ov_ok = False
    try:
        ir.read_model(path)
        ours_ok = True
    except ir.IRError:
        ours_ok = False
    assert ov_ok == ours_ok == accepted


def test_openvino_still_deviates():
    """The deviation examples record the spec; OpenVINO's CPU plugin still
    differs from them (if this fails, OpenVINO fixed a bug: update README's
    list and regenerate ir_examples/)."""
    for path in sorted(glob.glob(os.path.join(ROOT, "ir_examples", "*.xml"))):
        recording = _check.load_recording(path)
        if recording is None or recording.reference != "spec":
            continue
        model = ir.read_model(path)
        try:
            outputs = ov_run(path, recording.inputs)
        except RuntimeError:
            assert "i64" in recording.meta["deviation"], path
            continue
        ok, _, _ = _check.compare_all(model, outputs, recording.outputs)
        assert not ok, f"{path}: OpenVINO's CPU plugin now gives the spec's answer"


def test_examples_match_openvino():
    """ovpool check's OpenVINO path on every example."""
    for path in sorted(glob.glob(os.path.join(ROOT, "ir_examples", "*.xml"))):
        row = _check.check_model(path, use_openvino=True, repeat=1)
        assert not row.failed, row


@pytest.mark.parametrize("pads_end, expected_last", [(0, "nan"), (1, 0.0)])
def test_avg_pool_include_pad_ceil_window_past_the_input(tmp_path, pads_end, expected_last):
    """exclude-pad=false counts pads only when some pad is non-zero (OpenVINO's
    pads_in_avg): with all pads 0 the ceil window past the input is NaN, with
    a pad it is 0 (ovpool.ov_ops follows both)."""
    x = ov8.parameter([1, 1, 4], np.float32, name="x")
    pool = ov1.avg_pool(x, [2], [0], [pads_end], [1], False, "ceil")
    path = str(tmp_path / "m.xml")
    ov.save_model(ov.Model([ov8.result(pool)], [x]), path)
    data = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 4)
    (got,) = ir.read_model(path)(data)
    (want,) = ov_run(path, [data])
    np.testing.assert_array_equal(got, want)
    assert str(got[0, 0, -1]) == str(np.float32(expected_last))
