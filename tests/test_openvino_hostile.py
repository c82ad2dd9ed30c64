"""Hostile numbers in models with ovpool's ops, through the extension library:
nothing before ``evaluate`` allocates per output position or window, every
size is checked against ovpool's limit (2^40 elements) and the memory budget
before anything is allocated, and what is refused ends in an OpenVINO
exception naming the op, the tensor and ovpool's limit or budget, never in a
``std::bad_alloc`` or a ``MemoryError``.

The measuring tests run a child process that imports only ``openvino``, loads
the library (``core.add_extension``) and measures its own peak resident
memory under an address-space limit: its ``VmHWM``, the high-water mark of
its own address space (``getrusage``'s ``ru_maxrss`` also holds the RSS of
the process it was forked from, here the test runner).
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ov = pytest.importorskip("openvino")

import openvino.opset8 as o8  # noqa: E402

import ovpool.openvino as ovp  # noqa: E402
from ovpool import _isa  # noqa: E402

# The child's prelude: the library alone, an address space of its size after
# the imports plus 3 GiB (an allocation per output position of the files
# below would need 3 to 12 GiB), and its resident memory now and at its peak.
PRELUDE = """
import os, resource, sys, time
import numpy as np
import openvino as ov
core = ov.Core()
core.add_extension(sys.argv[1])
assert "ovpool" not in sys.modules
with open("/proc/self/status") as f:
    vm = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (vm + (3 << 30), resource.RLIM_INFINITY))
def status(field):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith(field + ":"))
def rss():
    return status("VmRSS")
def peak():
    return status("VmHWM")
"""


def _child(ov_extension, code, *args, **env):
    result = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code), ov_extension, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    return result.stdout


def _max_pool_onnx(path, length, kernel=2):
    """One MaxPool on an input of shape [1, 1, length, 1]: 96 bytes for 2^27."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    node = helper.make_node("MaxPool", ["X"], ["Y"], kernel_shape=[kernel, 1])
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, length, 1])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 7
    data = model.SerializeToString()
    with open(path, "wb") as f:
        f.write(data)
    return len(data)


@pytest.mark.parametrize("policy", ["default", "all"])
@pytest.mark.parametrize("log2", [27, 29])
def test_a_96_byte_onnx_max_pool_reads_without_its_window_tables(
    ov_extension, tmp_path, log2, policy
):
    # the ONNX pool's shape inference built the whole window table of the
    # axis (24 bytes per output position) on every validation: 3.2 GB and
    # 5-9 s for 2^27 before; now the empty-window test is arithmetic
    path = tmp_path / "max_pool.onnx"
    assert _max_pool_onnx(path, 1 << log2) <= 97
    out = _child(
        ov_extension,
        """
        before, start = rss(), time.perf_counter()
        model = core.read_model(sys.argv[2])
        seconds = time.perf_counter() - start
        print(model.output(0).get_partial_shape(), seconds, (peak() - before) / 2**20)
        print(sorted({op.get_type_info().version_id for op in model.get_ordered_ops()}))
    """,
        path,
        OVPOOL_OPENVINO_POLICY=policy,
        OVPOOL_MEMORY_BUDGET="16G",
    )
    shape, seconds, growth = out.splitlines()[0].split()
    assert shape == f"[1,1,{(1 << log2) - 1},1]"
    assert float(growth) < 100, out  # MiB beyond the process before read_model
    assert float(seconds) < 5, out  # (generous: a shared, loaded machine)
    # the default policy reads the values natively; "all" keeps ovpool's op
    assert ("ovpool" in out.splitlines()[1]) == (policy == "all"), out


def test_a_reshape_past_ovpools_limit_names_it(ov_extension, tmp_path):
    path = tmp_path / "max_pool.onnx"
    _max_pool_onnx(path, 1 << 20, kernel=1)
    out = _child(
        ov_extension,
        """
        model = core.read_model(sys.argv[2])
        for shape in ([1, 1, 2**40, 2**40], [2**20, 2**20, 2**20, 1], [1, 1, 2**41, 1]):
            try:
                model.reshape({0: shape})
                print("reshaped", shape)
            except MemoryError as exc:
                print("MemoryError", exc)
            except RuntimeError as exc:
                print(" ".join(str(exc).split()))
    """,
        path,
        OVPOOL_OPENVINO_POLICY="all",
    )
    lines = out.splitlines()
    assert len(lines) == 3, out
    assert "ovpool::OnnxMaxPool" in lines[0] and "MemoryError" not in out
    assert (
        "the X input [1,1,1099511627776,1099511627776] would hold 1.20893e+24 elements "
        "(4.8357e+24 bytes of f32), more than ovpool's limit of 2^40 (1099511627776) "
        "elements"
    ) in lines[0]
    assert "the X input [1048576,1048576,1048576,1] would hold 1.15292e+18 elements" in lines[1]
    assert (
        "the X input [1,1,2199023255552,1] has dim 2 = 2199023255552, more than ovpool's "
        "limit of 2^40"
    ) in lines[2]


def test_an_output_over_the_budget_is_refused_at_reshape(ov_extension, tmp_path):
    path = tmp_path / "max_pool.onnx"
    _max_pool_onnx(path, 1 << 10)
    out = _child(
        ov_extension,
        """
        model = core.read_model(sys.argv[2])
        try:
            model.reshape({0: [1, 1, 2**25, 1]})
        except RuntimeError as exc:
            print(" ".join(str(exc).split()))
        model.reshape({0: [1, 1, 2**20, 1]})
        compiled = core.compile_model(model, "CPU")
        print(compiled.output(0).get_partial_shape())
    """,
        path,
        OVPOOL_OPENVINO_POLICY="all",
        OVPOOL_MEMORY_BUDGET="64M",
    )
    refused, shape = out.splitlines()
    # the values (128 MiB of f32) are over the 64 MiB budget: named with their bytes
    assert (
        "ovpool OnnxMaxPool (Y): output 0 [1,1,33554431,1] of f32 would need 134217724 "
        "bytes (128 MiB), more than ovpool's memory budget of 67108864 bytes (64 MiB)"
    ) in refused
    assert shape == "[1,1,1048575,1]"


def _one_onnx_max_pool_ir(n_in, kernel, stride, dilation, pad_begin, pad_end):
    """The IR of one OnnxMaxPool on [1, 1, n_in] (the library's own checks:
    ovpool's Python side never sees it)."""
    return f"""<?xml version="1.0"?>
<net name="one" version="11"><layers>
<layer id="0" name="x" type="Parameter" version="opset1"><data shape="1,1,{n_in}"
 element_type="f32"/><output><port id="0" precision="FP32"><dim>1</dim><dim>1</dim>
 <dim>{n_in}</dim></port></output></layer>
<layer id="1" name="pool" type="OnnxMaxPool" version="ovpool"><data kernel_shape="{kernel}"
 strides="{stride}" pads="{pad_begin}, {pad_end}" dilations="{dilation}" auto_pad="NOTSET"
 ceil_mode="true" storage_order="0"/><input><port id="0"/></input>
 <output><port id="1" precision="FP32"/><port id="2" precision="I64"/></output></layer>
<layer id="2" name="v" type="Result" version="opset1"><input><port id="0"/></input></layer>
<layer id="3" name="i" type="Result" version="opset1"><input><port id="0"/></input></layer>
</layers><edges>
<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>
<edge from-layer="1" from-port="2" to-layer="3" to-port="0"/>
</edges></net>""".encode()


@pytest.fixture(scope="module")
def core(ov_extension):
    return ovp.register(ov.Core())


def test_empty_windows_refused_as_the_window_tables_say(core):
    # the library's arithmetic test against the core's window tables (a row
    # with no tap), on geometries where the Euclid steps matter (dilation
    # beyond the input, strides and pads around it)
    rng = np.random.default_rng(30)
    seen = {False: 0, True: 0}
    empty = ov.Tensor(np.empty(0, np.uint8))
    for _ in range(400):
        n_in, kernel, stride = (int(v) for v in rng.integers(1, [60, 4, 30]))
        dilation, pad_begin, pad_end = (int(v) for v in rng.integers([1, 0, 0], [60, 30, 30]))
        if (kernel - 1) * dilation + 1 > n_in + pad_begin + pad_end:
            continue  # the window does not fit: another refusal
        n_out, pb, pe = _isa.kernels.axis_output_size(
            n_in, kernel, stride, dilation, pad_begin, pad_end, 0, 2
        )  # explicit, ceil_torch
        table = _isa.kernels.window_table((n_in, n_out, False, kernel, stride, dilation, pb, pe, 0))
        expected = bool((table[:, 1] == 0).any())
        seen[expected] += 1
        xml = _one_onnx_max_pool_ir(n_in, kernel, stride, dilation, pad_begin, pad_end)
        if expected:
            with pytest.raises(RuntimeError, match="some window lies entirely in the padding"):
                core.read_model(xml, empty)
        else:
            model = core.read_model(xml, empty)
            assert model.output(0).get_partial_shape() == ov.PartialShape([1, 1, n_out])
    assert min(seen.values()) > 60, seen


def test_a_huge_axis_is_checked_at_once(ov_extension):
    # kernel 2, dilation n + 1, n padded on each side: only the window
    # starting at -1 (taps -1 and n) misses an input of n, and an input of
    # n + 1 has none empty; 2^40 output positions either way (the tables
    # would be 24 TiB): refused in an instant, for the empty window or for
    # the output's bytes
    n = 1 << 39
    out = _child(
        ov_extension,
        """
        sys.path.insert(0, sys.argv[3])
        from test_openvino_hostile import _one_onnx_max_pool_ir
        n = int(sys.argv[2])
        before, start = rss(), time.perf_counter()
        for n_in in (n, n + 1):
            try:
                core.read_model(_one_onnx_max_pool_ir(n_in, 2, 1, n + 1, n, n),
                                ov.Tensor(np.empty(0, np.uint8)))
            except RuntimeError as exc:
                print(str(exc).strip().splitlines()[-1])
        print(time.perf_counter() - start, (peak() - before) / 2**20)
    """,
        n,
        os.path.dirname(os.path.abspath(__file__)),
        OVPOOL_MEMORY_BUDGET="1G",
    )
    empty, budget, numbers = out.splitlines()
    assert "some window lies entirely in the padding" in empty
    assert (
        "output 0 [1,1,1099511627776] of f32 would need 4398046511104 bytes (4 TiB), more "
        "than ovpool's memory budget of 1073741824 bytes"
    ) in budget
    seconds, growth = (float(v) for v in numbers.split())
    assert growth < 100 and seconds < 5, numbers


def test_output_size_constants_are_read_only_when_small(core):
    # an output_size Const of a million entries on an input of unknown rank:
    # refused by its shape, never read into a vector
    entries = 10**6
    xml = f"""<?xml version="1.0"?>
<net name="big_size" version="11"><layers>
<layer id="0" name="x" type="Parameter" version="opset1"><data shape="..." element_type="f32"/>
 <output><port id="0" precision="FP32"/></output></layer>
<layer id="1" name="size" type="Const" version="opset1"><data element_type="i64"
 shape="{entries}" offset="0" size="{8 * entries}"/><output><port id="0" precision="I64">
 <dim>{entries}</dim></port></output></layer>
<layer id="2" name="pool" type="AdaptiveAvgPool" version="ovpool"><data/><input>
 <port id="0"/><port id="1"/></input><output><port id="2" precision="FP32"/></output></layer>
<layer id="3" name="out" type="Result" version="opset1"><input><port id="0"/></input></layer>
</layers><edges>
<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
</edges></net>""".encode()
    weights = ov.Tensor(np.ones(entries, np.int64).view(np.uint8))
    with pytest.raises(
        RuntimeError,
        match=r"output_size must have 1 to 3 entries, got shape "
        r"\[1000000\]",
    ):
        core.read_model(xml, weights)


def test_max_unpool_output_shape_at_run_time_is_checked(core):
    # output_shape given at run time: shape inference sees its values (the
    # CPU plugin folds them into its node) and checks their product
    x = o8.parameter([1, 1, 2, 1], np.float32)
    i = o8.parameter([1, 1, 2, 1], np.int64)
    s = o8.parameter([4], np.int64)
    node = ovp.make_op("MaxUnpool", [x, i, s], kernel_shape=[2, 1], strides=[2, 1])
    compiled = core.compile_model(ov.Model([o8.result(node.output(0))], [x, i, s]), "CPU")
    xs, idx = np.array([[[[5], [7]]]], np.float32), np.array([[[[1], [2]]]], np.int64)
    got = compiled([xs, idx, np.array([1, 1, 6, 1], np.int64)])[0]
    np.testing.assert_array_equal(got[..., 0], [[[0, 5, 7, 0, 0, 0]]])
    with pytest.raises(RuntimeError) as info:
        compiled([xs, idx, np.array([1, 1, 2**30, 2**30], np.int64)])
    message = " ".join(str(info.value).split())
    assert (
        "ovpool::MaxUnpool" in message
        and "output 0 [1,1,1073741824,1073741824] would hold "
        "1.15292e+18 elements (4.61169e+18 bytes of f32), more than ovpool's limit of 2^40"
        in message
    ), message


def test_window_numbers_native_openvino_cannot_take_stay_on_ovpools_ops(ov_extension, tmp_path):
    # OpenVINO's CPU plugin crashes (SIGFPE) on an AvgPool stride of 2^32:
    # the default policy, which gives an AveragePool native OpenVINO computes
    # right to a native node, keeps this one on ovpool's op
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    node = helper.make_node("AveragePool", ["X"], ["Y"], kernel_shape=[1], strides=[2**32])
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 12])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    path = tmp_path / "stride.onnx"
    path.write_bytes(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]).SerializeToString()
    )
    out = _child(
        ov_extension,
        """
        model = core.read_model(sys.argv[2])
        print(sorted({op.get_type_info().version_id for op in model.get_ordered_ops()}))
        x = np.arange(36, dtype=np.float32).reshape(1, 3, 12)
        print(core.compile_model(model, "CPU")([x])[0].ravel().tolist())
    """,
        path,
        OVPOOL_OPENVINO_POLICY="default",
    )
    types, values = out.splitlines()
    assert "ovpool" in types
    assert values == "[0.0, 12.0, 24.0]"


def test_patch_model_moves_window_numbers_native_openvino_cannot_take():
    from ovpool.openvino import _decide

    x = o8.parameter([1, 2, 9, 9], np.float32)
    model = ov.Model(
        [
            o8.max_pool(x, [2**32, 1], [1, 1], [0, 0], [0, 0], [1, 1]).output(0),
            o8.max_pool(x, [2, 1], [1, 1], [0, 0], [0, 0], [1, 1]).output(0),
        ],
        [x],
    )
    decisions = {
        tuple(node.get_strides()): _decide(node, "default")[0]
        for node in model.get_ordered_ops()
        if node.get_type_info().name == "MaxPool"
    }
    assert decisions[2**32, 1].deviation == "window_numbers" and decisions[2**32, 1].move
    assert decisions[2, 1].deviation is None and not decisions[2, 1].move
