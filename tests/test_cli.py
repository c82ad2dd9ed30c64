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
    except SystemExit as exc:   # argparse: bad usage, --version
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
    if block_openvino:   # as on a machine without OpenVINO
        code += "sys.modules['openvino'] = None\n"
    code += "from ovpool.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


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
    (tmp_path / "broken.xml").write_text('<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY a "b">]>'
                                         '\n<net version="11"/>\n')
    rc, out, err = ovpool(capsys, "check", "--no-openvino", str(tmp_path))
    assert rc == 1
    broken = [line for line in out.splitlines() if "broken.xml" in line]
    assert "ERROR" in broken[0] and "broken.xml:2:" in broken[0] and "DOCTYPE" in broken[0]
    assert [line for line in out.splitlines() if "max_pool_1.xml" in line][0].split()[1] == "ok"
    assert "Traceback" not in out + err


def test_check_without_any_reference(tmp_path, capsys):
    builder = IR()
    x = builder.parameter((1, 1, 4), name="x")
    builder.result(builder.layer("MaxPool", "opset1", [(x, 0)], [("f32", (1, 1, 2))],
                                 {"kernel": "2", "strides": "2"}))
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
    assert "\nlayers:" not in out           # the summary only, without --layers
    path = os.path.join(EXAMPLES, "cnn_openvino_route.xml")
    rc, out, _ = ovpool(capsys, "info", path)
    assert rc == 0
    assert "conv1" not in out
    assert "runs 9 of the 13 layers; 4 need OpenVINO (Convolution x2, ReLU x2)" in out
    assert "ovpool.openvino.read_model" in out
    assert f"every layer: `ovpool info --layers {path}`" in out
    pools = out[out.index("pool layers: 2 (AdaptiveAvgPool-opset8, MaxPool-opset14)"):]
    pool1 = pools[pools.index(" pool1 "):pools.index(" gap ")]
    assert "f32[1,8,32,32] -> f32[1,8,16,16] i64[1,8,16,16]" in pool1
    assert "kernel=2,2" in pool1 and "strides=2,2" in pool1 and "rounding_type=floor" in pool1
    assert "output_size=2,2" in pools[pools.index(" gap "):]
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
    assert saved == sorted(f"{name}.npy" for name in
                           ("avg_f16", "max_indices", "adaptive_values", "max_values", "x"))
    assert np.load(tmp_path / "max_indices.npy").dtype == np.int32
    first = np.load(tmp_path / "avg_f16.npy")
    ovpool(capsys, "run", model_path, "--seed", "3", "--output", str(tmp_path))
    np.testing.assert_array_equal(np.load(tmp_path / "avg_f16.npy"), first)


def test_run_with_given_inputs(tmp_path, capsys, rng):
    model_path = os.path.join(EXAMPLES, "dynamic_shape.xml")
    x = rng.standard_normal((2, 3, 9, 12)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    rc, out, _ = ovpool(capsys, "run", model_path, "--input", f"x={tmp_path / 'x.npy'}",
                        "--output", str(tmp_path / "out"), "--repeat", "2")
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
    assert rc == 1 and "must have shape f32[?,3,8..32,8..32], got [1, 3, 4, 4]" in one_line_error(err)
    rc, _, err = ovpool(capsys, "run", dynamic, "--shape", "x=1,3,8,8", "--input",
                        f"x={tmp_path / 'x.npy'}")
    assert rc == 1 and "given twice" in one_line_error(err)
    rc, _, err = ovpool(capsys, "run", dynamic, "--shape", "x=100000,3,100000,100000")
    message = one_line_error(err)
    assert rc == 1 and "memory budget" in message and "'x'" in message


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
        previous = builder.layer("ReLU", "opset1", [(previous, 0)], [("f32", (1, 3, 8, 8))],
                                 name=f"relu{k}")
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
        "core", "xml_path"]


# --------------------------------------------------------------------------
# usage
# --------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    [], ["frobnicate"], ["info"], ["run"], ["check"],
    ["run", "m.xml", "--input", "novalue"], ["run", "m.xml", "--repeat", "0"],
    ["run", "m.xml", "--seed", "x"], ["check", "--bogus", "x"],
])
def test_bad_usage_exits_2_with_one_line(capsys, args):
    if args[:1] == ["run"] and "--input" in args:
        path = os.path.join(EXAMPLES, "max_pool_1.xml")
        args = ["run", path] + args[2:]
    rc, out, err = ovpool(capsys, *args)
    assert rc == 2, (args, out, err)
    one_line_error(err)


def test_python_dash_m():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "ovpool", "info", "ir_examples/max_pool_8.xml"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "MaxPool" in done.stdout
