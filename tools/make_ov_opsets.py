"""Write ovpool/_ov_opsets.py from the opset tables of an installed openvino.

Run from the repository root after upgrading OpenVINO: ``python tools/make_ov_opsets.py``.
"""

import os
import re
import sys

import openvino

# OpenVINO's serializer writes these C++ type names differently in IR
# (translate_type_name in src/core/src/pass/serialize.cpp)
IR_NAMES = {"Constant": "Const", "PRelu": "PReLU", "Relu": "ReLU", "Softmax": "SoftMax"}

d = os.path.join(os.path.dirname(openvino.__file__), "include", "openvino", "opsets")
table, last = {}, 0
for f in sorted(os.listdir(d)):
    m = re.fullmatch(r"opset(\d+)_tbl.hpp", f)
    if not m:
        continue
    k = int(m.group(1))
    last = max(last, k)
    for line in open(os.path.join(d, f)):
        m2 = re.match(r"_OPENVINO_OP_REG\((\w+),\s*ov::op::v(\d+)\)", line.strip())
        if m2:
            name = IR_NAMES.get(m2.group(1), m2.group(1))
            table.setdefault(name, {})[k] = int(m2.group(2))
lines = []
for name, per in sorted(table.items()):
    runs = []
    for k in sorted(per):
        v = per[k]
        if runs and runs[-1][1] == k - 1 and runs[-1][2] == v:
            runs[-1][1] = k
        else:
            runs.append([k, k, v])
    lines.append(f"    {name!r}: {tuple(tuple(r) for r in runs)!r},")
version = openvino.__version__.split("-")[0]
out = (
    f'''"""Which OpenVINO opsets contain which layer types (generated data).

Generated from ``openvino/include/openvino/opsets/opset*_tbl.hpp`` of
openvino {version} by ``python tools/make_ov_opsets.py``; do not edit by hand.

``OPSETS[type]`` is a tuple of ``(first_opset, last_opset, op_version)`` runs:
IR ``<layer type=T version="opsetN">`` is OpenVINO's ``ov::op::v<op_version>::T``
for ``first_opset <= N <= last_opset``. Types are spelled as in IR: ``Const``,
``PReLU``, ``ReLU`` and ``SoftMax`` are the C++ ``Constant``, ``PRelu``,
``Relu`` and ``Softmax``. :func:`ovpool.layers.lookup` uses this to tell a layer that
OpenVINO knows but ovpool does not run (Convolution) from an unknown type or
version, and to map e.g. ``MaxPool`` ``opset9`` onto MaxPool-8.
"""

LAST_OPSET = {last}

OPSETS = {{
'''
    + "\n".join(lines)
    + "\n}\n"
)
path = sys.argv[1] if len(sys.argv) > 1 else "ovpool/_ov_opsets.py"
open(path, "w").write(out)
print(f"wrote {path}: {len(table)} types, opset1..opset{last}")
