"""The memory budget (ovpool._limits): its default, its settings, and every
request it guards in the numpy API and the IR runtime refused before anything
is allocated, with an error naming the op, the argument and the bytes."""

import re
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from ir_helpers import IR

import ovpool
from ovpool import _limits, ir


@pytest.fixture
def budget():
    """Set the budget for one test; the default comes back after it."""
    previous = []

    def set_(nbytes):
        previous.append(ovpool.set_memory_budget(nbytes))

    yield set_
    ovpool.set_memory_budget(None)


def refused(call, *, op, what, nbytes, peak_below=8 << 20):
    """``call()`` raises MemoryBudgetError naming op, what and nbytes, having
    allocated less than ``peak_below`` bytes."""
    tracemalloc.start()
    try:
        with pytest.raises(ovpool.MemoryBudgetError) as info:
            call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert isinstance(info.value, ovpool.OvpoolError) and isinstance(info.value, ValueError)
    assert re.search(op, message), message
    assert re.search(what, message), message
    assert f"would need {nbytes} bytes" in message, message
    assert peak < peak_below, f"peak {peak} bytes before refusing: {message}"
    return message


# --------------------------------------------------------------------------
# the setting
# --------------------------------------------------------------------------


def test_default_is_a_quarter_of_usable_memory():
    ovpool.set_memory_budget(None)
    usable = _limits._usable_memory()
    assert usable is not None  # Linux: sysconf gives the physical memory
    assert ovpool.get_memory_budget() == max(256 << 20, usable // 4)
    assert ovpool.get_memory_budget() == _limits.default_memory_budget()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1048576", 1 << 20),
        ("512M", 512 << 20),
        ("512MiB", 512 << 20),
        ("2g", 2 << 30),
        ("1.5G", 3 << 29),
        ("64 KiB", 64 << 10),
        ("0", 0),
        ("1T", 1 << 40),
    ],
)
def test_parse_sizes(text, expected):
    assert _limits.parse_budget(text) == expected


def test_parse_percentage():
    assert _limits.parse_budget("50%") == _limits._usable_memory() // 2
    assert _limits.parse_budget("100%") == _limits._usable_memory()


@pytest.mark.parametrize(
    "value, error",
    [
        ("lots", ovpool.OvpoolValueError),
        ("-5", ovpool.OvpoolValueError),
        ("5X", ovpool.OvpoolValueError),
        ("150%", ovpool.OvpoolValueError),
        (-1, ovpool.OvpoolValueError),
        (2.5, ovpool.OvpoolTypeError),
        (True, ovpool.OvpoolTypeError),
    ],
)
def test_bad_settings(value, error):
    with pytest.raises(error):
        ovpool.set_memory_budget(value)


def test_set_returns_the_previous_budget(budget):
    default = ovpool.get_memory_budget()
    assert ovpool.set_memory_budget(1 << 20) == default
    assert ovpool.set_memory_budget("3M") == 1 << 20
    assert ovpool.get_memory_budget() == 3 << 20


def test_environment_variable(monkeypatch):
    try:
        monkeypatch.setenv("OVPOOL_MEMORY_BUDGET", "7M")
        ovpool.set_memory_budget(None)  # None re-reads the environment
        assert ovpool.get_memory_budget() == 7 << 20
        monkeypatch.setenv("OVPOOL_MEMORY_BUDGET", "seven")
        ovpool.set_memory_budget(None)
        with pytest.raises(ovpool.OvpoolValueError, match="OVPOOL_MEMORY_BUDGET 'seven'"):
            ovpool.get_memory_budget()
        # every allocating call reports the bad setting, even a tiny one
        with pytest.raises(ovpool.OvpoolValueError, match="OVPOOL_MEMORY_BUDGET"):
            ovpool.global_avg_pool(np.ones((1, 1, 2), np.float32))
    finally:
        monkeypatch.delenv("OVPOOL_MEMORY_BUDGET")
        ovpool.set_memory_budget(None)
    assert ovpool.get_memory_budget() == _limits.default_memory_budget()


def test_environment_variable_at_import():
    code = "import ovpool; print(ovpool.get_memory_budget())"
    env = {"OVPOOL_MEMORY_BUDGET": "300M", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        cwd=str(__import__("pathlib").Path(__file__).parents[1]),
        check=True,
    )
    assert int(out.stdout) == 300 << 20


def test_within_the_budget_is_computed(budget):
    x = np.arange(8 * 8 * 8, dtype=np.float32).reshape(8, 8, 8)
    budget(8 * 8 * 4 * 4)  # exactly the output's bytes (its window tables: 160)
    np.testing.assert_array_equal(ovpool.adaptive_avg_pool(x, 4), (x[..., 0::2] + x[..., 1::2]) / 2)
    budget(8 * 8 * 4 * 4 - 1)
    refused(
        lambda: ovpool.adaptive_avg_pool(x, 4),
        op="adaptive_avg_pool",
        what=r"out of shape \(8, 8, 4\) and dtype float32",
        nbytes=1024,
    )


def test_window_tables_counted(budget):
    # no plane to compute, yet the tables follow output_size: 40 bytes a position
    x = np.ones((0, 1, 1), np.float32)
    budget(1 << 20)
    refused(
        lambda: ovpool.adaptive_avg_pool(x, 1 << 20),
        op="adaptive_avg_pool",
        what="the window tables",
        nbytes=40 << 20,
    )
    assert ovpool.adaptive_avg_pool(x, 1 << 14).shape == (0, 1, 1 << 14)


# --------------------------------------------------------------------------
# the numpy API
# --------------------------------------------------------------------------


def test_adaptive_output_refused_before_its_window_tables(budget):
    # the window tables grow with output_size (24 bytes per output position):
    # the output is checked first
    budget(256 << 20)
    x = np.ones((1, 1, 1), np.float32)
    refused(
        lambda: ovpool.adaptive_avg_pool(x, 1 << 27),
        op="adaptive_avg_pool",
        what=r"out of shape \(1, 1, 134217728\)",
        nbytes=4 << 27,
    )
    refused(
        lambda: ovpool.adaptive_max_pool(x, 1 << 27),
        op="adaptive_max_pool",
        what=r"out of shape",
        nbytes=4 << 27,
    )


@pytest.mark.parametrize(
    "call, op, nbytes",
    [
        (
            lambda x: ovpool.avg_pool(x, 2, pads=[1 << 35, 0], count_include_pad=True),
            "avg_pool",
            4 * ((1 << 35) + 3),
        ),
        (lambda x: ovpool.lp_pool(x, 1, pads=[0, 1 << 33]), "lp_pool", 4 * ((1 << 33) + 4)),
        (
            lambda x: ovpool.max_pool(x, (1 << 33) + 1, pads=[1 << 33, 1 << 33]),
            "max_pool",
            4 * ((1 << 33) + 4),
        ),
        (
            lambda x: ovpool.ov_ops.avg_pool(x, [2], [1], [0], [1 << 34], exclude_pad=False),
            "AvgPool",
            4 * ((1 << 34) + 3),
        ),
        (
            lambda x: ovpool.ov_ops.max_pool(x, [1], [1], [1 << 34], [0]),
            "MaxPool",
            4 * ((1 << 34) + 4),
        ),
    ],
)
def test_absurd_pads_refused(call, op, nbytes, budget):
    x = np.ones((1, 1, 4), np.float32)
    refused(lambda: call(x), op=op, what="out of shape", nbytes=nbytes)


def test_max_unpool_output_shape_refused(budget):
    x = np.ones((1, 1, 2), np.float32)
    i = np.array([[[0, 1]]])
    refused(
        lambda: ovpool.max_unpool(x, i, 2, output_shape=[1, 1, 1 << 40]),
        op="max_unpool",
        what=r"out of shape \(1, 1, 1099511627776\)",
        nbytes=4 << 40,
    )


def test_indices_output_counted(budget):
    x = np.ones((16, 16, 64), np.float32)
    budget(16 * 16 * 64 * 4)  # the values fit, their int64 indices do not
    refused(
        lambda: ovpool.adaptive_max_pool(x, 64),
        op="adaptive_max_pool",
        what=r"indices of shape \(16, 16, 64\) and dtype int64",
        nbytes=2 << 16,
    )


def test_broadcast_view_copy_refused(budget):
    budget(256 << 20)
    x = np.broadcast_to(np.float32(1), (1000, 1000, 1000))  # 4 bytes claiming 4 GB
    refused(
        lambda: ovpool.global_avg_pool(x),
        op="global_avg_pool",
        what=r"a contiguous copy of x of shape \(1000, 1000, 1000\)",
        nbytes=4 * 10**9,
    )


def test_caller_out_needs_no_budget(budget):
    # out= is the caller's memory: only the window tables (320 bytes) are ovpool's
    x = np.arange(64 * 64 * 16, dtype=np.float64).reshape(64, 64, 16)
    out = np.empty((64, 64, 8), np.float64)
    budget(4096)
    result = ovpool.max_pool(x, 2, strides=2, out=out)
    assert result is out
    np.testing.assert_array_equal(out, np.maximum(x[..., 0::2], x[..., 1::2]))


# --------------------------------------------------------------------------
# the IR runtime
# --------------------------------------------------------------------------

NAME_C, NAME_POOL, NAME_WIDEN = 'name="c"', 'name="pool"', 'name="widen"'


def _line_of(path, needle):
    text = open(path).read()
    return text.count("\n", 0, text.index(needle)) + 1


def test_ir_const_over_budget_refused_at_read(tmp_path, budget):
    builder = IR()
    c = builder.const(np.zeros((64, 64), np.float32), name="c")
    builder.result(c)
    path = builder.write(tmp_path)
    assert ir.read_model(path)()[0].shape == (64, 64)
    budget(64 * 64 * 4 - 1)
    with pytest.raises(ovpool.IRError) as info:
        ir.read_model(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{_line_of(path, NAME_C)}: ")
    assert "the constant of shape (64, 64)" in message and "would need 16384 bytes" in message


def test_ir_const_over_budget_at_call(tmp_path, budget):
    builder = IR()
    c = builder.const(np.ones((8, 8), np.float32), name="c")
    builder.result(c)
    path = builder.write(tmp_path)
    model = ir.read_model(path)
    budget(100)
    with pytest.raises(ovpool.IRError, match=r"model\.xml:\d+: .*would need 256 bytes"):
        model()


def test_ir_pool_output_over_budget_refused_at_read(tmp_path, budget):
    # a 1 KB file asking for a 2**31-element output
    builder = IR()
    x = builder.parameter((1, 1, 1), name="x")
    size = builder.const(np.array([1 << 31], np.int64), name="size")
    pool = builder.layer(
        "AdaptiveAvgPool", "opset8", [(x, 0), (size, 0)], [("f32", (1, 1, 1 << 31))], name="pool"
    )
    builder.result(pool)
    path = builder.write(tmp_path)
    budget(256 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(ovpool.IRError) as info:
            ir.read_model(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert f"{path}:{_line_of(path, NAME_POOL)}:" in message
    assert "AdaptiveAvgPool: an output of shape (1, 1, 2147483648)" in message
    assert "would need 8589934592 bytes" in message
    assert peak < 8 << 20


def test_ir_dynamic_output_over_budget_refused_at_call(tmp_path, budget):
    builder = IR()
    x = builder.parameter((1, 1, None), name="x")
    conv = builder.layer(
        "Convert",
        "opset1",
        [(x, 0)],
        [("f64", (1, 1, None))],
        {"destination_type": "f64"},
        name="widen",
    )
    builder.result(conv)
    path = builder.write(tmp_path)
    model = ir.read_model(path)
    x = np.arange(1000, dtype=np.float32).reshape(1, 1, 1000)
    np.testing.assert_array_equal(model(x)[0], x.astype(np.float64))
    budget(7999)  # the f64 output of 1000 elements needs 8000
    with pytest.raises(ovpool.IRError) as info:
        model(np.zeros((1, 1, 1001), np.float32))
    message = str(info.value)
    assert f"{path}:{_line_of(path, NAME_WIDEN)}:" in message
    assert "would need 8008 bytes" in message


def test_ir_const_within_budget_but_beyond_memory(tmp_path):
    # a 2 GiB Const in a sparse .bin, with an address-space limit below it:
    # an IRError naming the layer, not a bare MemoryError (in a child process)
    code = f"""
import os, resource, sys
sys.path.insert(0, {str(__import__("pathlib").Path(__file__).parent)!r})
import numpy as np, ovpool
from ovpool import ir
from ir_helpers import IR
builder = IR()
c = builder.layer("Const", "opset1", [], [("f32", (1 << 29,))],
                  {{"element_type": "f32", "shape": str(1 << 29), "offset": 0,
                    "size": 1 << 31}}, name="c")
builder.result(c)
path = builder.write({str(tmp_path)!r})
with open(path[:-4] + ".bin", "wb") as f:
    f.truncate(1 << 31)
ovpool.set_memory_budget(4 << 30)
model = ir.read_model(path)
vm = int([l for l in open("/proc/self/status") if l.startswith("VmSize")][0].split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + (512 << 20),) * 2)
try:
    model()
except ovpool.IRError as exc:
    print("IRError", exc)
"""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=str(__import__("pathlib").Path(__file__).parents[1]),
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("IRError "), out.stdout
    assert "out of memory reading 2147483648 bytes of the constant" in out.stdout
