"""A process that imports OpenVINO and numpy, never ovpool: it loads ovpool's
extension library from the path given (the installed package's) with
``core.add_extension(path)``, runs the ``ir_examples`` models that hold
ovpool's ops, and compares their outputs with the recorded ones.

    python .ci/openvino_only.py LIBRARY IR_EXAMPLES_DIR
"""

import sys
from pathlib import Path

import numpy as np
import openvino as ov

MODELS = ("ovpool_opset", "ovpool_opset_onnx")


def main(library: str, examples: Path) -> None:
    core = ov.Core()
    core.add_extension(library)
    for name in MODELS:
        compiled = core.compile_model(
            str(examples / f"{name}.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"}
        )
        with np.load(examples / f"{name}.npz") as data:
            inputs = [data[k] for k in sorted(data.files) if k.startswith("in_")]
            expected = [data[f"out_{k}"] for k in range(len(compiled.outputs))]
        result = compiled(inputs)
        for k, (output, want) in enumerate(zip(compiled.outputs, expected)):
            got = result[output]
            assert got.shape == want.shape and got.dtype == want.dtype, (name, k)
            if want.dtype.kind == "f":
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=name)
            else:
                np.testing.assert_array_equal(got, want, err_msg=name)
        print(f"{name}: {len(expected)} outputs equal the recording")
    imported = sorted(m for m in sys.modules if m.split(".")[0] == "ovpool")
    assert not imported, imported


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
