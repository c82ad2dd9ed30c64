"""ovpool's side-by-side benchmark against PyTorch, ONNX Runtime and OpenVINO.

Run ``python benchmarks/run.py --help`` or ``ovpool bench --help`` from a
source checkout; see ``benchmarks/README.md``.
"""
