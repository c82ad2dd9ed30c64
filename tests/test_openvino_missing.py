"""Without OpenVINO: ``import ovpool.openvino`` fails clearly, the rest of
ovpool never imports openvino. Runs in subprocesses (no importorskip: these
must run whether or not OpenVINO is installed)."""

import os
import subprocess
import sys
import textwrap

BLOCK_OPENVINO = textwrap.dedent("""
    import sys

    class BlockOpenVINO:
        def find_spec(self, name, path=None, target=None):
            if name == "openvino" or name.startswith("openvino."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, BlockOpenVINO())
""")


def run_python(code):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_import_without_openvino_is_a_clear_ovpool_error():
    out = run_python(
        BLOCK_OPENVINO
        + textwrap.dedent("""
        import ovpool
        try:
            import ovpool.openvino
        except ovpool.OvpoolError as exc:
            assert isinstance(exc, ImportError), type(exc).__mro__
            assert "ovpool.openvino" not in sys.modules
            print(exc)
        else:
            raise SystemExit("imported without openvino")
    """)
    )
    assert 'pip install "ovpool[openvino]"' in out
    assert "needs OpenVINO" in out


def test_the_rest_of_ovpool_never_imports_openvino():
    out = run_python(
        BLOCK_OPENVINO
        + textwrap.dedent("""
        import numpy as np
        import ovpool, ovpool.ir, ovpool.layers, ovpool.ov_ops, ovpool.cli, ovpool._check
        ovpool.max_pool(np.ones((1, 1, 4, 4), np.float32), 2)
        print(sorted(m for m in sys.modules if m.split(".")[0] == "openvino"))
    """)
    )
    assert out.strip() == "[]"


def test_ovpool_check_runs_the_examples_without_openvino():
    examples = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ir_examples")
    out = run_python(
        BLOCK_OPENVINO
        + textwrap.dedent(f"""
        from ovpool import cli
        status = cli.main(["check", {examples!r}])
        print("status", status)
    """)
    )
    assert "status 0" in out
    assert "ovpool_opset_onnx.xml" in out and "MISMATCH" not in out
