"""Hostile inputs: outputs that share memory with the inputs or
with each other, num_threads on empty inputs, and IR files that deepen the
reader's walks or flood it with attributes, ports or layers. Each ends in an
OvpoolError / IRError naming the argument or the element (or in the right
answer), quickly, with the process alive."""

import os
import time

import numpy as np
import pytest
from ir_helpers import IR

import ovpool
from ovpool import ir, ov_ops

torch = pytest.importorskip("torch")


# --------------------------------------------------------------------------
# outputs that overlap inputs or each other
# --------------------------------------------------------------------------

# The readers below are linear in the file's size and take a second or two
# here; a quadratic one takes minutes on these sizes. The bound separates the
# two with room for a machine shared with other jobs (a guard on the
# algorithm, not a performance claim).
LINEAR_SECONDS = 30


def _x():
    return np.random.default_rng(5).standard_normal((2, 3, 8)).astype(np.float64)


def test_max_pool_out_overlapping_out_indices():
    x = _x()
    buf = np.zeros(2 * 3 * 4, np.int64)
    values = buf.view(np.float64).reshape(2, 3, 4)
    with pytest.raises(ovpool.OvpoolValueError, match="max_pool: out_indices must not overlap out"):
        ovpool.max_pool(
            x, 2, strides=2, return_indices=True, out=values, out_indices=buf.reshape(2, 3, 4)
        )
    # disjoint halves of one buffer are fine, and right
    buf = np.zeros(2 * 2 * 3 * 4, np.int64)
    values = buf[:24].view(np.float64).reshape(2, 3, 4)
    indices = buf[24:].reshape(2, 3, 4)
    ovpool.max_pool(x, 2, strides=2, return_indices=True, out=values, out_indices=indices)
    ref, ref_idx = torch.nn.functional.max_pool1d(torch.from_numpy(x), 2, 2, return_indices=True)
    np.testing.assert_array_equal(values, ref.numpy())
    np.testing.assert_array_equal(indices % 8, ref_idx.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_adaptive_max_pool_out_overlapping_out_indices(dtype):
    x = _x().astype(dtype)
    raw = np.zeros(2 * 3 * 4 * 8, np.uint8)
    values = raw[: 2 * 3 * 4 * np.dtype(dtype).itemsize].view(dtype).reshape(2, 3, 4)
    indices = raw.view(np.int64).reshape(2, 3, 4)
    with pytest.raises(
        ovpool.OvpoolValueError, match="adaptive_max_pool: out_indices must not overlap out"
    ):
        ovpool.adaptive_max_pool(x, 4, out=values, out_indices=indices)


def test_ov_max_pool_with_axis_out_overlapping_out_indices():
    # axis > 2 takes the modulo path: indices are computed apart, then copied
    x = np.arange(2 * 3 * 4 * 4, dtype=np.float64).reshape(2, 3, 4, 4)
    buf = np.zeros(2 * 3 * 2 * 2, np.int64)
    values = buf.view(np.float64).reshape(2, 3, 2, 2)
    with pytest.raises(ovpool.OvpoolValueError, match="out_indices must not overlap out"):
        ov_ops.max_pool(x, [2, 2], [2, 2], axis=3, out=values, out_indices=buf.reshape(2, 3, 2, 2))
    assert not buf.any()  # refused before anything was written


def test_out_overlapping_x():
    x = np.zeros((1, 1, 16), np.float32)
    with pytest.raises(ovpool.OvpoolValueError, match="out must not overlap the input"):
        ovpool.max_pool(x, 2, strides=2, out=x[..., :8])
    with pytest.raises(ovpool.OvpoolValueError, match="out must not overlap the input"):
        ovpool.adaptive_avg_pool(x, 8, out=x[..., 8:])


def test_max_unpool_out_overlapping_indices():
    x = np.array([[[5.0, 7.0]]])
    indices = np.array([[[1, 2]]], np.int64)
    # out (float64) on the memory of indices: zeroing out would zero them
    shared = np.zeros(4, np.int64)
    shared[:2] = [1, 2]
    with pytest.raises(ovpool.OvpoolValueError, match="max_unpool: out must not overlap indices"):
        ovpool.max_unpool(
            x,
            shared[:2].reshape(1, 1, 2),
            2,
            strides=2,
            out=shared.view(np.float64).reshape(1, 1, 4),
        )
    out = np.empty((1, 1, 4))
    ovpool.max_unpool(x, indices, 2, strides=2, out=out)
    np.testing.assert_array_equal(out, [[[0, 5, 7, 0]]])


def test_max_unpool_out_overlapping_x():
    buf = np.array([5.0, 7.0, 0, 0, 0, 0])
    with pytest.raises(ovpool.OvpoolValueError, match="max_unpool: out must not overlap"):
        ovpool.max_unpool(
            buf[:2].reshape(1, 1, 2),
            np.array([[[1, 2]]]),
            2,
            strides=2,
            out=buf[1:5].reshape(1, 1, 4),
        )
    ovpool.max_unpool(
        buf[:2].reshape(1, 1, 2), np.array([[[1, 2]]]), 2, strides=2, out=buf[2:].reshape(1, 1, 4)
    )
    np.testing.assert_array_equal(buf, [5, 7, 0, 5, 7, 0])


# --------------------------------------------------------------------------
# num_threads on empty inputs
# --------------------------------------------------------------------------

EMPTY = np.zeros((0, 2, 6), np.float32)

CALLS = {
    "adaptive_avg_pool": lambda n: ovpool.adaptive_avg_pool(EMPTY, 3, num_threads=n),
    "adaptive_max_pool": lambda n: ovpool.adaptive_max_pool(EMPTY, 3, num_threads=n),
    "avg_pool": lambda n: ovpool.avg_pool(EMPTY, 2, num_threads=n),
    "max_pool": lambda n: ovpool.max_pool(EMPTY, 2, num_threads=n),
    "lp_pool": lambda n: ovpool.lp_pool(EMPTY, 2, num_threads=n),
    "global_avg_pool": lambda n: ovpool.global_avg_pool(EMPTY, num_threads=n),
    "global_max_pool": lambda n: ovpool.global_max_pool(EMPTY, num_threads=n),
    "global_lp_pool": lambda n: ovpool.global_lp_pool(EMPTY, num_threads=n),
    "AvgPool": lambda n: ov_ops.avg_pool(EMPTY, [2], [1], num_threads=n),
    "MaxPool": lambda n: ov_ops.max_pool(EMPTY, [2], [1], num_threads=n),
}


@pytest.mark.parametrize("op", sorted(CALLS))
@pytest.mark.parametrize(
    "num_threads, error",
    [
        (0, ovpool.OvpoolValueError),
        (-3, ovpool.OvpoolValueError),
        (2.0, ovpool.OvpoolTypeError),
        ("2", ovpool.OvpoolTypeError),
        (True, ovpool.OvpoolTypeError),
    ],
)
def test_num_threads_checked_on_empty_input(op, num_threads, error):
    with pytest.raises(error, match=f"{op}: num_threads must be"):
        CALLS[op](num_threads)
    result = CALLS[op](2)  # a valid count: the empty result
    first = result[0] if isinstance(result, tuple) else result
    assert first.shape[0] == 0


# --------------------------------------------------------------------------
# the IR reader
# --------------------------------------------------------------------------


def _line_of(path, needle):
    text = open(path).read()
    return text.count("\n", 0, text.index(needle)) + 1


def test_parameter_without_an_output_port_is_an_input(tmp_path):
    # OpenVINO 2026.4 reads it as an input of its declared shape (checked below
    # when OpenVINO is installed); ovpool raised IndexError
    builder = IR()
    x = builder.parameter((1, 2, 8), name="x")
    pool = builder.layer(
        "MaxPool",
        "opset1",
        [(x, 0)],
        [("f32", (1, 2, 4))],
        {"kernel": "2", "strides": "2"},
        name="pool",
    )
    builder.result(pool)
    builder.layers.insert(
        1,
        (
            9,
            '<layer id="9" name="y" type="Parameter" version="opset1">'
            '<data shape="3,1" element_type="f16" /></layer>',
        ),
    )
    path = builder.write(tmp_path)
    model = ir.read_model(path)
    assert [(i.name, i.shape, i.dtype) for i in model.inputs] == [
        ("x", (1, 2, 8), np.dtype(np.float32)),
        ("y", (3, 1), np.dtype(np.float16)),
    ]
    x = np.arange(16, dtype=np.float32).reshape(1, 2, 8)
    (values,) = model(x, np.zeros((3, 1), np.float16))
    np.testing.assert_array_equal(values, x[..., 1::2])
    ov = pytest.importorskip("openvino")
    ov_model = ov.Core().read_model(path)
    assert [
        (tuple(p.get_shape()), p.get_element_type().get_type_name()) for p in ov_model.inputs
    ] == [((1, 2, 8), "f32"), ((3, 1), "f16")]


def _convert_chain(tmp_path, n, consumers=1):
    builder = IR()
    x = builder.parameter((1, 1, 8, 8), name="x")
    prev = builder.const(np.array([2, 4], np.int64), name="size")
    for _ in range(n):
        prev = builder.layer(
            "Convert", "opset1", [(prev, 0)], [("i64", (2,))], {"destination_type": "i64"}
        )
    for k in range(consumers):
        pool = builder.layer(
            "AdaptiveAvgPool",
            "opset8",
            [(x, 0), (prev, 0)],
            [("f32", (1, 1, 2, 4))],
            name=f"pool{k}",
        )
        builder.result(pool)
    return builder.write(tmp_path)


def test_long_convert_chain_into_a_value_input(tmp_path):
    # it recursed once per Convert until RecursionError
    path = _convert_chain(tmp_path, 5000)
    start = time.perf_counter()
    model = ir.read_model(path)
    assert time.perf_counter() - start < LINEAR_SECONDS
    x = np.arange(64, dtype=np.float32).reshape(1, 1, 8, 8)
    (out,) = model(x)
    expected = torch.nn.functional.adaptive_avg_pool2d(torch.from_numpy(x), (2, 4)).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_one_convert_chain_feeding_many_layers_is_read_once(tmp_path):
    # the chain's value is kept: 1000 consumers of a 1000-long chain, not a million steps
    path = _convert_chain(tmp_path, 1000, consumers=1000)
    start = time.perf_counter()
    model = ir.read_model(path)
    assert time.perf_counter() - start < LINEAR_SECONDS
    assert len(model.outputs) == 1000


def test_attribute_flood_refused_in_linear_time(tmp_path):
    # 100,000 attributes on one <data>: 28 s before (lxml's attribute lookups
    # are linear each); OpenVINO reads the file in 0.2 s
    text = open(
        os.path.join(os.path.dirname(__file__), "..", "ir_examples", "max_pool_8.xml")
    ).read()
    flood = " ".join(f'a{i}="{i}"' for i in range(100_000))
    text = text.replace("<data ", f"<data {flood} ", 1)
    path = tmp_path / "flood.xml"
    path.write_text(text)
    start = time.perf_counter()
    with pytest.raises(ovpool.IRError) as info:
        ir.read_model(path)
    assert time.perf_counter() - start < 2
    assert f"{path}:5: <data> has 100002 attributes, more than {ir.MAX_ATTRIBUTES}" in str(
        info.value
    )


def test_attributes_up_to_the_cap_are_read(tmp_path):
    builder = IR()
    x = builder.parameter((1, 1, 8), name="x")
    data = {"kernel": "2", "strides": "2"}
    data.update({f"extra{i}": str(i) for i in range(ir.MAX_ATTRIBUTES - 2)})
    pool = builder.layer("MaxPool", "opset1", [(x, 0)], [("f32", (1, 1, 4))], data, name="pool")
    builder.result(pool)
    path = builder.write(tmp_path)
    model = ir.read_model(path)
    layer = model.layers[1]
    assert len(layer.raw_attributes) == ir.MAX_ATTRIBUTES
    assert layer.raw_attributes["extra1000"] == "1000"
    assert layer.attributes["kernel"] == [2]
    x = np.arange(8, dtype=np.float32).reshape(1, 1, 8)
    np.testing.assert_array_equal(model(x)[0], x[..., 1::2])
    builder.layers[1] = (1, builder.layers[1][1].replace("<data ", '<data one_more="1" '))
    path = builder.write(tmp_path, stem="over")
    with pytest.raises(
        ovpool.IRError,
        match=f"over.xml:{_line_of(path, 'one_more')}: <data> has "
        f"{ir.MAX_ATTRIBUTES + 1} attributes",
    ):
        ir.read_model(path)


def test_layer_with_many_ports_and_edges_reads_in_linear_time(tmp_path):
    # a layer ovpool does not run (Concat) with 20,000 inputs: each edge found
    # its port by a scan of the layer's ports (quadratic)
    n = 20_000
    ports = "".join(f'<port id="{k}" precision="FP32"><dim>1</dim></port>' for k in range(n))
    layers = [
        '<layer id="0" name="x" type="Parameter" version="opset1">'
        '<data shape="1" element_type="f32" /><output><port id="0" precision="FP32">'
        "<dim>1</dim></port></output></layer>",
        f'<layer id="1" name="cat" type="Concat" version="opset1"><data axis="0" />'
        f'<input>{ports}</input><output><port id="{n}" precision="FP32"><dim>{n}</dim>'
        "</port></output></layer>",
        '<layer id="2" name="out" type="Result" version="opset1"><input><port id="0" '
        f'precision="FP32"><dim>{n}</dim></port></input></layer>',
    ]
    edges = [f'<edge from-layer="0" from-port="0" to-layer="1" to-port="{k}" />' for k in range(n)]
    edges.append(f'<edge from-layer="1" from-port="{n}" to-layer="2" to-port="0" />')
    text = (
        '<?xml version="1.0"?>\n<net name="wide" version="11">\n<layers>\n'
        + "\n".join(layers)
        + "\n</layers>\n<edges>\n"
        + "\n".join(edges)
        + "\n</edges>\n</net>\n"
    )
    path = tmp_path / "wide.xml"
    path.write_text(text)
    start = time.perf_counter()
    model = ir.read_model(path)
    assert time.perf_counter() - start < LINEAR_SECONDS
    assert [layer.type for layer in model.unsupported_layers] == ["Concat"]
    assert model.outputs[0].shape == (n,)


def test_long_cycle_reported_in_linear_time(tmp_path):
    n = 20_000
    builder = IR()
    x = builder.parameter((1, 1, 8), name="x")
    prev = x
    for k in range(n):
        prev = builder.layer(
            "MaxPool",
            "opset1",
            [(prev, 0)],
            [("f32", (1, 1, 8))],
            {"kernel": "1", "strides": "1"},
            name=f"p{k}",
        )
    builder.result(prev)
    builder.edges[0] = (prev, 1, 1, 0)  # the first pool reads the last: one long cycle
    path = builder.write(tmp_path)
    start = time.perf_counter()
    with pytest.raises(ovpool.IRError, match=r"cycle: .* \.\.\. \(19992 more layers\) .*") as info:
        ir.read_model(path)
    assert time.perf_counter() - start < LINEAR_SECONDS
    assert len(str(info.value)) < 1000


# --------------------------------------------------------------------------
# arguments the fuzzer found escaping as other exceptions
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, error, match",
    [
        # an array where an int or a word is expected: numpy's "truth value of an
        # empty array is ambiguous" ValueError escaped
        (
            lambda x: ovpool.max_pool(x, 2, storage_order=np.array([], np.int64)),
            ovpool.OvpoolValueError,
            "storage_order must be 0 or 1",
        ),
        (
            lambda x: ovpool.max_unpool(
                x, np.zeros(x.shape, np.int64), 1, indices_relative_to=np.array([], np.int64)
            ),
            ovpool.OvpoolValueError,
            "indices_relative_to must be",
        ),
        # an int for pads with auto_pad SAME: the message called list() on it (TypeError)
        (
            lambda x: ovpool.avg_pool(x, 2, pads=1, auto_pad="SAME_UPPER"),
            ovpool.OvpoolValueError,
            r"pads=\[1, 1\] cannot be combined",
        ),
        # a dilated kernel past 2**63 overflowed numpy's int64 (OverflowError)
        (
            lambda x: ovpool.lp_pool(x, 2**40, dilations=2**31, auto_pad="SAME_UPPER"),
            ovpool.OvpoolValueError,
            "dilated kernel is absurdly large",
        ),
        (
            lambda x: ov_ops.max_pool(x, [2**40], [1], dilations=[2**31], auto_pad="same_upper"),
            ovpool.OvpoolValueError,
            "dilated kernel is absurdly large",
        ),
    ],
)
def test_arguments_found_by_the_fuzzer(call, error, match):
    x = np.ones((1, 2, 6), np.float32)
    with pytest.raises(error, match=match):
        call(x)


def test_max_unpool_huge_default_shape_refused_before_the_index_check():
    # np.prod of the default shape wrapped past 2**63 and named a negative range
    x = np.ones((3, 1, 3, 2, 6), np.float32)
    with pytest.raises(ovpool.MemoryBudgetError, match="max_unpool: out of shape"):
        ovpool.max_unpool(x, np.zeros(x.shape, np.int64), 2**31, strides=[3, 1, 2])
