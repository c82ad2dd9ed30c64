"""Hand-written OpenVINO IR for the IR tests (no OpenVINO needed).

``IR`` builds a small IR v11 document layer by layer, with ports numbered as
``ov.save_model`` numbers them (inputs 0..n-1, outputs n..), and writes the
.xml (+ .bin) into a folder.
"""

from __future__ import annotations

import os
from xml.sax.saxutils import quoteattr

import numpy as np

PRECISION = {
    "f32": "FP32",
    "f16": "FP16",
    "f64": "FP64",
    "bf16": "BF16",
    "i8": "I8",
    "u8": "U8",
    "i16": "I16",
    "u16": "U16",
    "i32": "I32",
    "i64": "I64",
    "u32": "U32",
    "u64": "U64",
    "boolean": "BOOL",
}
ETYPE = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float16): "f16",
    np.dtype(np.float64): "f64",
    np.dtype(np.int8): "i8",
    np.dtype(np.uint8): "u8",
    np.dtype(np.int16): "i16",
    np.dtype(np.uint16): "u16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint32): "u32",
    np.dtype(np.uint64): "u64",
    np.dtype(np.bool_): "boolean",
}


def _dims(shape):
    return "".join(f"<dim>{-1 if d is None else d}</dim>" for d in shape)


def _port(pid, etype, shape, names=None):
    extra = f" names={quoteattr(names)}" if names else ""
    return (
        f'<port id="{pid}" precision="{PRECISION.get(etype, etype.upper())}"{extra}>'
        f"{_dims(shape)}</port>"
    )


class IR:
    """A hand-built IR: ``add_*`` return the new layer's id."""

    def __init__(self, name="model"):
        self.name = name
        self.layers = []  # (id, xml)
        self.edges = []  # (from_layer, from_port, to_layer, to_port)
        self.blob = bytearray()
        self.ports = {}  # layer id -> [(out port id, etype, shape)]

    def _next_id(self):
        return len(self.layers)

    def layer(self, type_, version, inputs, outputs, data=None, name=None, lid=None):
        """``inputs``: list of (layer id, output index); ``outputs``: list of
        (etype, shape). Returns the layer id."""
        lid = self._next_id() if lid is None else lid
        name = name or f"{type_}_{lid}"
        attrs = "".join(f" {k}={quoteattr(str(v))}" for k, v in (data or {}).items())
        body = f"<data{attrs} />" if data is not None else ""
        if inputs:
            ins = []
            for k, (src, index) in enumerate(inputs):
                out_pid, etype, shape = self.ports[src][index]
                ins.append(_port(k, etype, shape))
                self.edges.append((src, out_pid, lid, k))
            body += "<input>" + "".join(ins) + "</input>"
        out_ports = []
        if outputs:
            outs = []
            for k, (etype, shape) in enumerate(outputs):
                pid = len(inputs) + k
                outs.append(_port(pid, etype, shape, f"{name}.{k}" if len(outputs) > 1 else name))
                out_ports.append((pid, etype, shape))
            body += "<output>" + "".join(outs) + "</output>"
        self.ports[lid] = out_ports
        self.layers.append(
            (
                lid,
                f'<layer id="{lid}" name={quoteattr(name)} type="{type_}" '
                f'version="{version}">{body}</layer>',
            )
        )
        return lid

    def parameter(self, shape, etype="f32", name=None, shape_attr=None):
        text = (
            shape_attr
            if shape_attr is not None
            else ",".join("?" if d is None else str(d) for d in shape)
        )
        return self.layer(
            "Parameter",
            "opset1",
            [],
            [(etype, shape)],
            {"shape": text, "element_type": etype},
            name,
        )

    def const(self, array, name=None):
        array = np.array(array, order="C")  # (ascontiguousarray would make a scalar 1-D)
        etype = ETYPE[array.dtype]
        offset = len(self.blob)
        raw = array.astype(array.dtype.newbyteorder("<")).tobytes()
        self.blob += raw
        return self.layer(
            "Const",
            "opset1",
            [],
            [(etype, array.shape)],
            {
                "element_type": etype,
                "shape": ", ".join(map(str, array.shape)),
                "offset": offset,
                "size": len(raw),
            },
            name,
        )

    def result(self, src, index=0, name=None):
        return self.layer("Result", "opset1", [(src, index)], [], None, name)

    def xml(self):
        layers = "\n".join(f"    {x}" for _, x in self.layers)
        edges = "\n".join(
            f'    <edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}" />'
            for a, b, c, d in self.edges
        )
        return (
            f'<?xml version="1.0"?>\n<net name="{self.name}" version="11">\n  <layers>\n'
            f"{layers}\n  </layers>\n  <edges>\n{edges}\n  </edges>\n</net>\n"
        )

    def write(self, folder, stem="model", xml=None):
        path = os.path.join(os.fspath(folder), stem + ".xml")
        with open(path, "w") as f:
            f.write(self.xml() if xml is None else xml)
        with open(os.path.join(os.fspath(folder), stem + ".bin"), "wb") as f:
            f.write(bytes(self.blob))
        return path


def pool_model(
    folder,
    data=None,
    type_="MaxPool",
    version="opset8",
    shape=(1, 2, 8, 8),
    out_shape=(1, 2, 4, 4),
    n_out=2,
    index_type="i64",
    stem="model",
):
    """Parameter -> one pool layer -> Result(s)."""
    ir = IR()
    x = ir.parameter(shape, name="x")
    outputs = [("f32", out_shape)] + [(index_type, out_shape)] * (n_out - 1)
    if data is None:
        data = {
            "kernel": "2, 2",
            "strides": "2, 2",
            "pads_begin": "0, 0",
            "pads_end": "0, 0",
            "rounding_type": "floor",
            "auto_pad": "explicit",
        }
    pool = ir.layer(type_, version, [(x, 0)], outputs, data, name="pool")
    for k in range(n_out):
        ir.result(pool, k, name=f"out{k}")
    return ir, ir.write(folder, stem)
