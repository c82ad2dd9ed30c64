"""The ``ovpool`` command: info, run, check (with and without OpenVINO), bad
usage (exit 2, one line) and expected errors (exit 1, one line, no traceback)."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from ir_helpers import IR

from ovpool import cli, ir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "ir_examples")


def ovpool(capsys, *args):
    """Run the command in-process: (exit status, stdout, stderr)."""
    try:
        rc = cli.main(list(args))
    except SystemExit as exc:  # argparse: bad usage, --version
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def one_line_error(err):
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ovpool: error: "), err
    return lines[0]


def subprocess_ovpool(*args, block_openvino=False):
    code = "import sys\n"
    if block_openvino:  # as on a machine without OpenVINO
        code += "sys.modules['openvino'] = None\n"
    code += "from ovpool.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def copy_example(tmp_path, name):
    for ext in (".xml", ".bin", ".npz"):
        shutil.copy(os.path.join(EXAMPLES, name + ext), tmp_path / (name + ext))
    return tmp_path / (name + ".xml")


# --------------------------------------------------------------------------
# check
# --------------------------------------------------------------------------


def test_check_examples_with_recordings(capsys):
    rc, out, err = ovpool(capsys, "check", "--no-openvino", "--repeat", "1", EXAMPLES)
    assert rc == 0, out + err
    n_models = len([f for f in os.listdir(EXAMPLES) if f.endswith(".xml")])
    rows = [line for line in out.splitlines() if ".xml" in line]
    assert len(rows) == n_models
    assert "the recorded .npz files" in out
    route = [r for r in rows if "cnn_openvino_route" in r]
    assert "openvino-route" in route[0] and "Convolution" in route[0]
    assert all(" ok " in r for r in rows if r not in route)
    assert f"{n_models - 1} ok, 1 need the OpenVINO route" in out.splitlines()[-1]


def test_check_examples_without_openvino_installed():
    """The Quick start command on a machine without OpenVINO."""
    done = subprocess_ovpool("check", "ir_examples/", block_openvino=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "against the recorded .npz files" in done.stdout
    assert "FAILED" not in done.stdout


def test_check_examples_with_openvino(capsys):
    pytest.importorskip("openvino")
    rc, out, err = ovpool(capsys, "check", "--repeat", "1", EXAMPLES)
    assert rc == 0, out + err
    assert "against OpenVINO (native CPU, f32)" in out
    rows = [line for line in out.splitlines() if ".xml" in line]
    assert any("  openvino" in r for r in rows)
    assert any("recorded (spec)" in r for r in rows)


def test_check_reports_a_mismatch(tmp_path, capsys):
    path = copy_example(tmp_path, "avg_pool_1")
    data = dict(np.load(str(path)[:-4] + ".npz"))
    data["out_0"] = data["out_0"] + np.float32(0.01)
    np.savez(str(path)[:-4] + ".npz", **data)
    rc, out, _ = ovpool(capsys, "check", "--no-openvino", str(tmp_path))
    assert rc == 1
    assert "MISMATCH" in out and "1 FAILED" in out


def test_check_reports_a_broken_file_without_traceback(tmp_path, capsys):
    copy_example(tmp_path, "max_pool_1")
    (tmp_path / "broken.xml").write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY a "b">]>\n<net version="11"/>\n'
    )
    rc, out, err = ovpool(capsys, "check", "--no-openvino", str(tmp_path))
    assert rc == 1
    broken = [line for line in out.splitlines() if "broken.xml" in line]
    assert "ERROR" in broken[0] and "broken.xml:2:" in broken[0] and "DOCTYPE" in broken[0]
    assert [line for line in out.splitlines() if "max_pool_1.xml" in line][0].split()[1] == "ok"
    assert "Traceback" not in out + err


def test_check_without_any_reference(tmp_path, capsys):
    builder = IR()
    x = builder.parameter((1, 1, 4), name="x")
    builder.result(
        builder.layer(
            "MaxPool", "opset1", [(x, 0)], [("f32", (1, 1, 2))], {"kernel": "2", "strides": "2"}
        )
    )
    builder.write(tmp_path)
    rc, out, _ = ovpool(capsys, "check", "--no-openvino", str(tmp_path))
    assert rc == 1 and "NO-REFERENCE" in out


def test_check_without_models(tmp_path, capsys):
    rc, _, err = ovpool(capsys, "check", str(tmp_path))
    assert rc == 1 and "no .xml model found" in one_line_error(err)
    rc, _, err = ovpool(capsys, "check", str(tmp_path / "missing.xml"))
    assert rc == 1 and "no such file or folder" in one_line_error(err)


# --------------------------------------------------------------------------
# info and run
# --------------------------------------------------------------------------


def test_info(capsys):
    rc, out, _ = ovpool(capsys, "info", os.path.join(EXAMPLES, "multi_output.xml"))
    assert rc == 0
    assert "IR v11" in out and "max_indices" in out and "f16" in out
    assert "ovpool's runtime runs every layer" in out
    assert "layer types: Result x5, Parameter x2, AdaptiveMaxPool, AvgPool, Const, MaxPool" in out
    assert "\nlayers:" not in out  # the summary only, without --layers
    path = os.path.join(EXAMPLES, "cnn_openvino_route.xml")
    rc, out, _ = ovpool(capsys, "info", path)
    assert rc == 0
    assert "conv1" not in out
    assert "runs 9 of the 13 layers; 4 need OpenVINO (Convolution x2, ReLU x2)" in out
    assert "ovpool.openvino.read_model" in out
    assert f"every layer: `ovpool info --layers {path}`" in out
    pools = out[out.index("pool layers: 2 (AdaptiveAvgPool-opset8, MaxPool-opset14)") :]
    pool1 = pools[pools.index(" pool1 ") : pools.index(" gap ")]
    assert "f32[1,8,32,32] -> f32[1,8,16,16] i64[1,8,16,16]" in pool1
    assert "kernel=2,2" in pool1 and "strides=2,2" in pool1 and "rounding_type=floor" in pool1
    assert "output_size=2,2" in pools[pools.index(" gap ") :]
    rc, out, _ = ovpool(capsys, "info", "--layers", path)
    assert rc == 0
    conv = [line for line in out.splitlines() if "conv1" in line][0]
    assert "Convolution" in conv and "OpenVINO" in conv


def test_info_says_what_the_default_policy_does_with_each_pool(capsys):
    """Each pool layer's line carries the reason patch_plan gives for it, on
    the model as OpenVINO reads it."""
    ov = pytest.importorskip("openvino")
    import ovpool.openvino as ovp

    path = os.path.join(EXAMPLES, "chain.xml")
    plan = ovp.patch_plan(ov.Core().read_model(path))
    rc, out, _ = ovpool(capsys, "info", path)
    assert rc == 0
    moved = sum(d.move for d in plan)
    assert moved == 2 and len(plan) == 4
    assert f"default policy moves {moved} of the {len(plan)} native ones" in out
    lines = out.splitlines()
    for d in plan:
        at = next(k for k, line in enumerate(lines) if f" {d.name}  {d.kind}" in line)
        assert lines[at + 2].strip() == f"default policy: {d.reason}"


def test_info_without_openvino(monkeypatch, capsys):
    from ovpool import _check

    monkeypatch.setattr(_check, "openvino_available", lambda: False)
    rc, out, _ = ovpool(capsys, "info", os.path.join(EXAMPLES, "chain.xml"))
    assert rc == 0
    assert "default policy does: unknown (OpenVINO is not installed)" in out
    assert "default policy: " not in out
    assert "kernel=3,3" in out


def test_info_of_a_malformed_file(tmp_path, capsys):
    path = tmp_path / "bad.xml"
    path.write_text("<net version='11'><layers>")
    rc, out, err = ovpool(capsys, "info", str(path))
    assert rc == 1 and out == ""
    assert "bad.xml" in one_line_error(err)


def test_run_with_seed_and_output(tmp_path, capsys):
    model_path = os.path.join(EXAMPLES, "multi_output.xml")
    rc, out, _ = ovpool(capsys, "run", model_path, "--seed", "3", "--output", str(tmp_path))
    assert rc == 0
    assert "ran in" in out and "ms" in out
    saved = sorted(os.listdir(tmp_path))
    assert saved == sorted(
        f"{name}.npy" for name in ("avg_f16", "max_indices", "adaptive_values", "max_values", "x")
    )
    assert np.load(tmp_path / "max_indices.npy").dtype == np.int32
    first = np.load(tmp_path / "avg_f16.npy")
    ovpool(capsys, "run", model_path, "--seed", "3", "--output", str(tmp_path))
    np.testing.assert_array_equal(np.load(tmp_path / "avg_f16.npy"), first)


def test_run_with_given_inputs(tmp_path, capsys, rng):
    model_path = os.path.join(EXAMPLES, "dynamic_shape.xml")
    x = rng.standard_normal((2, 3, 9, 12)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    rc, out, _ = ovpool(
        capsys,
        "run",
        model_path,
        "--input",
        f"x={tmp_path / 'x.npy'}",
        "--output",
        str(tmp_path / "out"),
        "--repeat",
        "2",
    )
    assert rc == 0, out
    assert "[2, 3, 9, 12]" in out and "best of 2" in out
    expected = ir.read_model(model_path)(x)
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "avg.npy"), expected[0])
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "adaptive.npy"), expected[1])


def test_run_errors(tmp_path, capsys):
    dynamic = os.path.join(EXAMPLES, "dynamic_shape.xml")
    rc, _, err = ovpool(capsys, "run", dynamic)
    message = one_line_error(err)
    assert rc == 1 and "--input x=FILE.npy" in message and "--shape x=1,3,8,8" in message
    np.save(tmp_path / "x.npy", np.zeros((1, 3, 4, 4), np.float32))
    rc, _, err = ovpool(capsys, "run", dynamic, "--input", f"x={tmp_path / 'x.npy'}")
    assert rc == 1 and "must have shape" in one_line_error(err)
    rc, _, err = ovpool(capsys, "run", dynamic, "--input", f"y={tmp_path / 'x.npy'}")
    assert rc == 1 and "no input 'y'" in one_line_error(err)
    rc, _, err = ovpool(capsys, "run", dynamic, "--input", f"x={tmp_path / 'missing.npy'}")
    assert rc == 1 and "cannot load" in one_line_error(err)
    np.savez(tmp_path / "x.npz", x=np.zeros((1, 3, 8, 8), np.float32))
    rc, _, err = ovpool(capsys, "run", dynamic, "--input", f"x={tmp_path / 'x.npz'}")
    assert rc == 1 and "not a .npy file" in one_line_error(err)
    rc, _, err = ovpool(capsys, "run", dynamic, "--shape", "x=1,3,4,4")
    message = one_line_error(err)
    assert rc == 1 and "must have shape f32[?,3,8..32,8..32], got [1, 3, 4, 4]" in message
    rc, _, err = ovpool(
        capsys, "run", dynamic, "--shape", "x=1,3,8,8", "--input", f"x={tmp_path / 'x.npy'}"
    )
    assert rc == 1 and "given twice" in one_line_error(err)
    rc, _, err = ovpool(capsys, "run", dynamic, "--shape", "x=100000,3,100000,100000")
    assert rc == 1 and "got [100000, 3, 100000, 100000]" in one_line_error(err)  # made no data


def test_a_random_input_is_checked_against_the_memory_budget(capsys):
    from ovpool import set_memory_budget

    previous = set_memory_budget(1 << 20)
    try:
        rc, _, err = ovpool(
            capsys, "run", os.path.join(EXAMPLES, "dynamic_shape.xml"), "--shape", "x=100,3,32,32"
        )
    finally:
        set_memory_budget(previous)
    message = one_line_error(err)
    assert rc == 1 and "the random input 'x' of shape (100, 3, 32, 32)" in message
    assert "1228800 bytes" in message and "memory budget of 1048576 bytes" in message


def test_run_without_openvino_lists_the_layers_it_cannot_run(monkeypatch, capsys):
    from ovpool import _check

    monkeypatch.setattr(_check, "openvino_available", lambda: False)
    rc, _, err = ovpool(capsys, "run", os.path.join(EXAMPLES, "cnn_openvino_route.xml"))
    assert rc == 1 and "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[0].startswith("ovpool: error: ") and "cannot run 4 layers" in lines[0]
    assert lines[1].strip().startswith("Convolution opset1 'conv1' (id 3")
    assert lines[-1].strip() == "(`ovpool run` does this itself once OpenVINO is installed)"


def test_run_lists_unsupported_layers_one_per_line_capped(tmp_path, monkeypatch, capsys):
    """A network ovpool's runtime does not run, without OpenVINO: one line per
    layer (the first 10), a count of the others, and the OpenVINO call that
    runs it."""
    from ovpool import _check

    monkeypatch.setattr(_check, "openvino_available", lambda: False)
    builder = IR()
    previous = builder.parameter((1, 3, 8, 8), name="x")
    for k in range(13):
        previous = builder.layer(
            "ReLU", "opset1", [(previous, 0)], [("f32", (1, 3, 8, 8))], name=f"relu{k}"
        )
    builder.result(previous)
    path = builder.write(tmp_path)
    rc, out, err = ovpool(capsys, "run", str(path))
    assert rc == 1 and out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[0].startswith(f"ovpool: error: {path}:")
    assert "cannot run 13 layers of this model (ReLU-opset1 x13):" in lines[0]
    listed = [line.strip().split("'")[1] for line in lines if "ReLU opset1 'relu" in line]
    assert listed == [f"relu{k}" for k in range(10)]
    assert lines[11].strip() == f"... and 3 more (`ovpool info --layers {path}` lists every layer)"
    assert lines[-2].strip() == f"model = ovpool.openvino.read_model(core, {str(path)!r})"
    assert len(lines) == 16


def test_the_suggested_openvino_call_has_the_real_signature():
    pytest.importorskip("openvino")
    import inspect

    import ovpool.openvino

    assert list(inspect.signature(ovpool.openvino.read_model).parameters)[:2] == [
        "core",
        "xml_path",
    ]


# --------------------------------------------------------------------------
# usage
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["frobnicate"],
        ["info"],
        ["run"],
        ["check"],
        ["run", "m.xml", "--input", "novalue"],
        ["run", "m.xml", "--repeat", "0"],
        ["run", "m.xml", "--seed", "x"],
        ["check", "--bogus", "x"],
        ["run", "m.xml", "--shape", "x=1,a"],
        ["run", "m.xml", "--shape", "x=1,-3"],
        ["run", "m.xml", "--shape", "x"],
        ["run", "m.xml", "--shape", "x=1", "--shape", "x=2"],
        ["check", "--input", "x=a.npy", "--input", "x=b.npy", "m.xml"],
        ["run", "m.xml", "--policy", "fast"],
        ["info", "m.xml", "--policy", "all"],
    ],
)
def test_bad_usage_exits_2_with_one_line(capsys, args):
    if args[:1] == ["run"] and "--input" in args:
        path = os.path.join(EXAMPLES, "max_pool_1.xml")
        args = ["run", path] + args[2:]
    rc, out, err = ovpool(capsys, *args)
    assert rc == 2, (args, out, err)
    one_line_error(err)


def test_python_dash_m():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-m", "ovpool", "info", "ir_examples/max_pool_8.xml"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "MaxPool" in done.stdout


# --------------------------------------------------------------------------
# a network converted from PyTorch, with a dynamic input shape
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """A small PyTorch network (convolutions and three pools: a MaxPool that
    native OpenVINO runs exactly, an AvgPool counting pads with ceil
    rounding where it deviates, an adaptive head) converted with
    ``ov.convert_model`` and saved as IR with the input shape [?,3,?,?];
    f32 weights, so that PyTorch is the reference. Returns (xml path, module)."""
    import warnings

    ov = pytest.importorskip("openvino")
    torch = pytest.importorskip("torch")
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
            self.pool1 = nn.MaxPool2d(3, 2, ceil_mode=True)
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
            self.pool2 = nn.AvgPool2d(3, 2, padding=1, ceil_mode=True)
            self.head = nn.AdaptiveAvgPool2d(3)

        def forward(self, x):
            x = self.pool1(torch.relu(self.conv1(x)))
            return self.head(self.pool2(torch.relu(self.conv2(x))))

    torch.manual_seed(0)
    module = Net().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ov.convert_model(
            module, example_input=torch.zeros(1, 3, 32, 32), input=[-1, 3, -1, -1]
        )
    path = tmp_path_factory.mktemp("converted") / "net.xml"
    ov.save_model(model, path, compress_to_fp16=False)
    return path, module


def torch_output(module, x):
    import torch

    with torch.no_grad():
        return module(torch.from_numpy(x)).numpy()


def check_row(out, path):
    (row,) = [line.split() for line in out.splitlines() if line.startswith(os.path.relpath(path))]
    return row


def test_check_a_converted_dynamic_network(converted, ov_extension, capsys):
    """The issue's case: `ovpool check` on a network whose input is
    [?,3,?,?] says which option gives the input; the option it names
    compares ovpool's route with native OpenVINO and prints ok with the
    largest difference."""
    path, _ = converted
    assert ir.read_model(path).inputs[0].shape_str() == "[?,3,?,?]"
    rc, out, _ = ovpool(capsys, "check", "--repeat", "1", str(path))
    assert rc == 1
    row = check_row(out, path)
    assert row[1] == "ERROR"
    note = " ".join(row)
    assert "--input x=FILE.npy" in note
    suggested = note[note.index("--shape ") :].split()[:2]
    assert suggested == ["--shape", "x=1,3,224,224"]
    rc, out, _ = ovpool(capsys, "check", "--repeat", "1", *suggested, str(path))
    assert rc == 0, out
    row = check_row(out, path)
    assert row[1] == "ok" and row[5] == "openvino;"
    assert 0 <= float(row[2]) <= 1e-5
    # at 224 x 224 the adaptive head's bins are exact natively, so it is
    # compared; the AvgPool, where native OpenVINO deviates, is left native
    assert (
        "2 pool layer(s) on ovpool's ops in OpenVINO, 1 left native where OpenVINO "
        "deviates (avg_pool_include_pad_ceil)" in out
    )
    assert out.splitlines()[-1] == "1 ok (1 through OpenVINO with ovpool's ops)"


def test_check_a_converted_network_with_a_given_input(
    converted, ov_extension, tmp_path, capsys, rng
):
    path, _ = converted
    np.save(tmp_path / "x.npy", rng.standard_normal((2, 3, 29, 31)).astype(np.float32))
    rc, out, _ = ovpool(
        capsys, "check", "--repeat", "1", "--input", f"x={tmp_path / 'x.npy'}", str(path)
    )
    assert rc == 0, out
    assert check_row(out, path)[1] == "ok"
    rc, out, err = ovpool(capsys, "check", "--repeat", "1", "--shape", "image=1,3,8,8", str(path))
    assert rc == 1
    assert "no model checked has an input named 'image'" in one_line_error(err)


@pytest.mark.parametrize("policy", ["default", "all"])
def test_run_a_converted_dynamic_network_through_openvino(
    converted, ov_extension, tmp_path, capsys, rng, policy
):
    """`ovpool run --input x=x.npy model.xml --output out/` on a network:
    through OpenVINO with ovpool's extension, the pool layers that moved
    named, the output written and equal to PyTorch's."""
    import openvino as ov

    import ovpool.openvino as ovp

    path, module = converted
    x = rng.standard_normal((2, 3, 29, 31)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    args = [
        "run",
        "--input",
        f"x={tmp_path / 'x.npy'}",
        str(path),
        "--output",
        str(tmp_path / "out"),
    ]
    if policy != "default":
        args += ["--policy", policy]
    rc, out, err = ovpool(capsys, *args)
    assert rc == 0, out + err
    assert out.startswith(
        "route: OpenVINO (CPU plugin, f32) with ovpool's extension, for the "
        "layers ovpool's runtime does not run (Add-opset1 x2, "
        "Convolution-opset1 x2, ReLU-opset1 x2)"
    )
    plan = ovp.patch_plan(ov.Core().read_model(path), policy=policy)
    moved = [d for d in plan if d.move]
    assert len(plan) == 3 and len(moved) == (2 if policy == "default" else 3)
    assert f"pool layers under --policy {policy}: {len(moved)} of 3 on ovpool's ops" in out
    listed = [line.strip() for line in out.splitlines() if line.startswith("      ")]
    assert listed == [f"{d.name} ({d.kind})" for d in moved]
    assert ("`--policy all` moves" in out) == (policy == "default")
    assert "through OpenVINO (CPU plugin, f32) with ovpool's extension" in out.splitlines()[-1]
    (saved,) = os.listdir(tmp_path / "out")
    output = np.load(tmp_path / "out" / saved)
    assert output.shape == (2, 8, 3, 3)
    np.testing.assert_allclose(output, torch_output(module, x), rtol=1e-5, atol=1e-5)


def test_run_a_converted_network_on_random_data_of_a_shape(converted, ov_extension, capsys):
    path, _ = converted
    rc, out, _ = ovpool(capsys, "run", "--shape", "x=1,3,40,24", "--seed", "3", str(path))
    assert rc == 0, out
    assert "input  x                        float32  [1, 3, 40, 24]" in out
    assert "[1, 8, 3, 3]" in out


def test_info_on_a_converted_network(converted, capsys):
    path, _ = converted
    rc, out, _ = ovpool(capsys, "info", str(path))
    assert rc == 0
    assert "  x                        f32      [?,3,?,?]" in out
    assert (
        "layer types: Const x5, Add x2, Convolution x2, ReLU x2, AdaptiveAvgPool, AvgPool, "
        "MaxPool, Parameter, Result" in out
    )
    assert (
        "pool layers: 3 (AdaptiveAvgPool-opset8, AvgPool-opset14, MaxPool-opset14); "
        "ovpool.openvino.read_model's default policy moves 2 of the 3 native ones" in out
    )
    assert "exclude-pad=false" in out and "rounding_type=ceil_torch" in out
    assert "output_size=3,3" in out


def test_a_converted_network_without_openvino(converted, monkeypatch, capsys):
    """As where OpenVINO is not installed: run lists the layers its runtime
    does not run (before asking for the dynamic input), check reports the
    network as needing the OpenVINO route, info lists the pools without the
    policy's decisions."""
    from ovpool import _check

    monkeypatch.setattr(_check, "openvino_available", lambda: False)
    path, _ = converted
    rc, _, err = ovpool(capsys, "run", str(path))
    lines = err.strip().splitlines()
    assert (
        rc == 1
        and "cannot run 6 layers of this model (Add-opset1 x2, Convolution-opset1 "
        "x2, ReLU-opset1 x2)"
        in lines[0]
    )
    rc, out, _ = ovpool(capsys, "check", str(path))
    assert rc == 0 and check_row(out, path)[1] == "openvino-route"
    rc, out, _ = ovpool(capsys, "info", str(path))
    assert rc == 0 and "unknown (OpenVINO is not installed)" in out and "output_size=3,3" in out


def test_policy_choices_are_the_libraries():
    pytest.importorskip("openvino")
    import ovpool.openvino as ovp

    run = cli.build_parser()._subparsers._group_actions[0].choices["run"]
    (policy,) = [a for a in run._actions if "--policy" in a.option_strings]
    assert tuple(policy.choices) == ovp.POLICIES and policy.default == "default"


# --------------------------------------------------------------------------
# every hint names an option, a command or a function that exists
# --------------------------------------------------------------------------

# the modules whose messages the command prints
HINT_MODULES = (
    "ovpool/cli.py",
    "ovpool/_check.py",
    "ovpool/ir/_reader.py",
    "ovpool/ir/_runtime.py",
    "ovpool/_limits.py",
    "ovpool/openvino/__init__.py",
    "ovpool/openvino/_library.py",
)
# commands that run a model: a message of a module other than cli.py that
# names an option without naming a command is one they print
RUNNING = ("run", "check")
_ARGPARSE_CALLS = {"add_argument", "add_parser", "add_subparsers", "ArgumentParser", "_Parser"}


def _messages(relpath):
    """(function, text) of every message of a module: its string literals and
    f-strings with a space in them (a sentence, not a token of code such as a
    file name or a CMake argument), but its docstrings and argparse's options
    and help; in an f-string, a placeholder naming a module-level string
    constant is replaced by its value, the others by ``{}``."""
    import ast

    tree = ast.parse(open(os.path.join(ROOT, relpath)).read())
    constants = {
        node.targets[0].id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            skip.add(id(body[0].value))
        if isinstance(node, ast.Call):
            func = (
                node.func.attr
                if isinstance(node.func, ast.Attribute)
                else getattr(node.func, "id", "")
            )
            if func in _ARGPARSE_CALLS:
                skip.update(id(n) for arg in [*node.args, *node.keywords] for n in ast.walk(arg))
    found = []

    def text_of(node):
        if isinstance(node, ast.Constant):
            return node.value
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(value.value)
            elif isinstance(value.value, ast.Name) and value.value.id in constants:
                parts.append(constants[value.value.id])
            else:
                parts.append("{}")
        return "".join(parts)

    def visit(node, function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if id(node) in skip:
            return
        if isinstance(node, ast.JoinedStr) or (
            isinstance(node, ast.Constant) and isinstance(node.value, str)
        ):
            text = text_of(node)
            if " " in text:
                found.append((function, text))
            return
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, None)
    return found


def _commands_of_cli_functions(parser):
    """{function of cli.py: the commands that reach it}, from the handlers
    the parser names and the names each function mentions."""
    import ast

    tree = ast.parse(open(os.path.join(ROOT, "ovpool", "cli.py")).read())
    functions = {
        node.name: node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    mentions = {
        name: {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & set(functions)
        for name, node in functions.items()
    }
    reached = {}
    for command, sub in _subcommands(parser).items():
        stack = [sub.get_default("func").__name__]
        while stack:
            name = stack.pop()
            if command not in reached.setdefault(name, set()):
                reached[name].add(command)
                stack.extend(mentions.get(name, ()))
    return reached


def _subcommands(parser):
    import argparse

    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _options(parser):
    return {s for a in parser._actions for s in a.option_strings}


def _hint_problems(messages, parser, reached):
    """What is wrong with the hints in ``messages`` ((module, function, text)):
    a command ``ovpool CMD`` that does not exist, an option that ``CMD`` (or
    the command printing the message) does not take, ``python -m MODULE SUB``
    that does not run, a dotted ``ovpool.name`` that does not resolve."""
    import importlib
    import re

    commands = _subcommands(parser)
    problems = []
    for module, function, text in messages:
        where = f"{module}:{function}: {text!r}"
        spans = []
        for match in re.finditer(r"\bovpool ([a-z]+)\b([^`]*)", text):
            cmd = match.group(1)
            if cmd not in commands:
                if text[max(0, match.start() - 1) : match.start()] == "`":
                    problems.append(f"{where}: no command {cmd!r}")
                continue
            spans.append((match.start(), match.end()))
            for option in re.findall(r"(?<![\w-])--[a-z][\w-]*", match.group(2)):
                if option not in _options(commands[cmd]) | {"--help"}:
                    problems.append(f"{where}: `ovpool {cmd}` has no {option}")
        for match in re.finditer(r"python -m ([\w.]+) ([a-z]+)((?: --?[\w-]+)*)", text):
            spans.append((match.start(), match.end()))
            try:
                main = importlib.import_module(match.group(1) + ".__main__").main
            except ImportError as exc:
                problems.append(f"{where}: {exc}")
                continue
            try:
                main([match.group(2), "--help"])
            except SystemExit as exc:
                if exc.code != 0:
                    problems.append(
                        f"{where}: python -m {match.group(1)} has no {match.group(2)!r}"
                    )
        for match in re.finditer(r"(?<![\w-])--[a-z][\w-]*", text):
            if any(a <= match.start() < b for a, b in spans):
                continue
            owners = reached.get(function, set(commands)) if module == "ovpool/cli.py" else RUNNING
            for cmd in sorted(owners):
                if match.group() not in _options(commands[cmd]):
                    problems.append(
                        f"{where}: `ovpool {cmd}` prints {match.group()}, which it does not take"
                    )
        for name in re.findall(r"(?<![\w.])ovpool(?:\.[A-Za-z_]\w*)+", text):
            parts = name.split(".")
            obj, k = None, len(parts)
            while k > 0:
                try:
                    obj = importlib.import_module(".".join(parts[:k]))
                    break
                except ImportError:
                    k -= 1
            for attr in parts[k:]:
                obj = getattr(obj, attr, None)
            if obj is None:
                problems.append(f"{where}: {name} does not exist")
    return problems


def test_every_hint_names_an_option_command_or_function_that_exists(capsys):
    pytest.importorskip("openvino")  # ovpool.openvino's names resolve with it
    parser = cli.build_parser()
    reached = _commands_of_cli_functions(parser)
    assert reached["_named_values"] == {"run", "check"}
    assert reached["_run_through_openvino"] == {"run"}
    messages = [(m, f, t) for m in HINT_MODULES for f, t in _messages(m)]
    hints = [t for _, _, t in messages if "--" in t or "ovpool." in t or "python -m" in t]
    assert len(hints) >= 10
    assert any("--shape {}" in t and "--input {}=FILE.npy" in t for t in hints)
    assert any("`ovpool info --layers {}`" in t for t in hints)
    assert any("python -m ovpool.openvino build" in t for t in hints)
    assert _hint_problems(messages, parser, reached) == []
    capsys.readouterr()
    # and the check finds what it is for
    bad = [
        ("ovpool/_check.py", "random_inputs", "give it with --inputs x=FILE.npy"),
        ("ovpool/cli.py", "_run", "`--no-openvino` skips it"),
        ("ovpool/cli.py", "_info", "see `ovpool inf --layers x`"),
        ("ovpool/cli.py", "_info", "see `ovpool info --layer x`"),
        ("ovpool/ir/_runtime.py", "f", "call ovpool.openvino.read_modle(core, path)"),
        ("ovpool/ir/_runtime.py", "f", "run python -m ovpool.openvino compile"),
    ]
    problems = _hint_problems(bad, parser, reached)
    capsys.readouterr()
    assert [p.split(": ")[0] for p in problems] == [
        "ovpool/_check.py:random_inputs",
        "ovpool/_check.py:random_inputs",
        "ovpool/cli.py:_run",
        "ovpool/cli.py:_info",
        "ovpool/cli.py:_info",
        "ovpool/ir/_runtime.py:f",
        "ovpool/ir/_runtime.py:f",
    ], problems


def test_every_option_in_the_help_exists(capsys):
    parser = cli.build_parser()
    for name, sub in _subcommands(parser).items():
        if name == "bench":  # its options are benchmarks/run.py's
            continue
        import re

        mentioned = set(re.findall(r"(?<![\w-])--[a-z][\w-]*", sub.format_help()))
        assert mentioned <= _options(sub), (name, mentioned - _options(sub))
