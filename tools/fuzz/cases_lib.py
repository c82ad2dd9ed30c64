"""Hostile models for ovpool's OpenVINO extension library, run by OpenVINO alone.

The library is what OpenVINO's own programs load (``core.add_extension(path)``,
``benchmark_app -extensions``, OpenVINO Model Server), so its workers import
``openvino`` and never ``ovpool``. Two families of cases, each made from
``(seed, index)`` alone:

* **IR mutants of ovpool's opset** (:func:`make_ir_case`): one node of one of
  the 9 op types of the opset with random valid attributes, shapes and
  element types (or one of the two ``ovpool_opset*`` examples), then one to
  four mutations aimed at what the library reads: attributes (0, -1, 2^20 to
  2^64, lists of the wrong length, words, deleted, unknown ones), constants
  (``output_size`` / ``output_shape``: their values, shape and element type),
  element types, shapes (dims of 0, 2^27 to 2^63, dynamic, intervals, other
  ranks), edges rewired among the layers; now and then one of
  :mod:`tools.fuzz.cases_ir`'s generic mutations.
* **single-node ONNX pool files** (:func:`make_onnx_case`): MaxPool (with and
  without Indices), AveragePool, LpPool, GlobalLpPool, GlobalAveragePool,
  GlobalMaxPool and MaxUnpool at opsets 8 to 22, inputs of rank 3 to 5 in
  float, float16, double, bfloat16, int8, uint8 (and types no pool takes),
  valid attributes, then zero to two corruptions: a hostile number, a list of
  the wrong length or type, a word, a missing or unknown attribute, a huge,
  empty or dynamic input dim. The conversion policy (``default`` or ``all``)
  is drawn per case.

Modes (workers of :mod:`tools.fuzz.runner`):

* ``lib-ir`` / ``lib-onnx``: OpenVINO with the library reads the file,
  compiles it (CPU, f32) unless its inputs declare more than 64 MiB, and runs
  it on seeded inputs when they are small; the outputs are kept for ``ort``.
* ``native-ir``: the same mutant with ovpool's AvgPool, MaxPool and adaptive
  pools given the stock opset versions of the same names and attributes
  (opset16, opset14, opset8), by OpenVINO without the library (mutants
  holding one of the ONNX ops, which have no stock twin, are not run).
* ``native-onnx``: the same ONNX file by OpenVINO without the library.
* ``ort``: ONNX Runtime on the same file and inputs, compared with the
  library's outputs.

Classes: ok; ovpool-error (an exception naming ovpool: its node's validation
or its own message); budget (ovpool's memory budget); error (an exception
from OpenVINO not naming ovpool: the coordinator keeps it as OpenVINO's own
where OpenVINO without the library fails the same file at the same stage or
earlier, or the file's reader refused it, and otherwise makes it a finding);
memory (``MemoryError``, ``std::bad_alloc``); blowup (the process's resident
memory grew past what the case may take: 64 MiB while reading, 768 MiB after).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

import numpy as np

from .cases_ir import EXAMPLES, _Mutant

MODES = ("lib-ir", "native-ir", "lib-onnx", "native-onnx", "ort")
LIB_MODES = ("lib-ir", "lib-onnx")
LIBRARY_NAME = "libovpool_openvino.so"

MAX_FEED_ELEMENTS = 1 << 16  # inputs made and run at most
MAX_COMPILE_INPUT_BYTES = 64 << 20  # declared inputs compiled at most (the plugin allocates them)
READ_GROWTH_MIB = 64  # resident memory reading a model may take
RUN_GROWTH_MIB = 768  # ... compiling and running it (ovpool's outputs are budgeted)

HUGE = (0, -1, 2**20, 2**27, 2**31, 2**39, 2**40, 2**40 + 1, 2**41, 2**62, 2**63 - 1, 2**63, 2**64)
ONNX_HUGE = tuple(v for v in HUGE if v < 2**63) + (-(2**63),)  # an ONNX int is an int64
WORDS = ("", " ", "abc", "1.5", "nan", "-0", "1e3", "0x10", "true", "?", "1,,2", "\uff12")


# --------------------------------------------------------------------------
# the library and the engines
# --------------------------------------------------------------------------


def library_path():
    """The library the workers load: OVPOOL_OPENVINO_EXTENSION (a file or the
    folder holding it), as the coordinator sets it."""
    path = os.environ.get("OVPOOL_OPENVINO_EXTENSION", "")
    if os.path.isdir(path):
        path = os.path.join(path, LIBRARY_NAME)
    if not os.path.isfile(path):
        raise RuntimeError(f"OVPOOL_OPENVINO_EXTENSION={path!r} names no library file")
    return path


_STATE = {}


def setup(mode):
    """Import what ``mode`` runs with and make its engine (before the worker
    limits its address space)."""
    if mode == "ort":
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 4
        _STATE["ort"] = (onnxruntime, options)
    else:
        import openvino as ov

        core = ov.Core()
        if mode in LIB_MODES:
            core.add_extension(library_path())
        _STATE["core"] = core
    if mode.endswith("ir"):
        import lxml.etree  # noqa: F401
    else:
        import onnx  # noqa: F401


# --------------------------------------------------------------------------
# IR of ovpool's opset
# --------------------------------------------------------------------------

_PRECISION = {
    "f32": "FP32",
    "f16": "FP16",
    "bf16": "BF16",
    "f64": "FP64",
    "i8": "I8",
    "u8": "U8",
    "i32": "I32",
    "i64": "I64",
    "boolean": "BOOL",
    "u64": "U64",
}
# ovpool's ops whose type names and attributes are those of a stock op
TWINS = {
    "AvgPool": "opset16",
    "MaxPool": "opset14",
    "AdaptiveAvgPool": "opset8",
    "AdaptiveMaxPool": "opset8",
}
OPS = (
    "AdaptiveAvgPool",
    "AdaptiveMaxPool",
    "AvgPool",
    "MaxPool",
    "OnnxAveragePool",
    "OnnxMaxPool",
    "LpPool",
    "GlobalLpPool",
    "MaxUnpool",
)
MAX_TYPES = ("AdaptiveMaxPool", "MaxPool", "OnnxMaxPool", "MaxUnpool")
# the attributes each op reads, for the targeted mutations
OP_ATTRIBUTES = {
    "AdaptiveAvgPool": (),
    "AdaptiveMaxPool": ("index_element_type",),
    "AvgPool": (
        "kernel",
        "strides",
        "pads_begin",
        "pads_end",
        "dilations",
        "exclude-pad",
        "rounding_type",
        "auto_pad",
    ),
    "MaxPool": (
        "kernel",
        "strides",
        "pads_begin",
        "pads_end",
        "dilations",
        "rounding_type",
        "auto_pad",
        "index_element_type",
        "axis",
    ),
    "OnnxAveragePool": (
        "kernel_shape",
        "strides",
        "pads",
        "dilations",
        "auto_pad",
        "ceil_mode",
        "count_include_pad",
    ),
    "OnnxMaxPool": (
        "kernel_shape",
        "strides",
        "pads",
        "dilations",
        "auto_pad",
        "ceil_mode",
        "storage_order",
    ),
    "LpPool": ("kernel_shape", "strides", "pads", "dilations", "auto_pad", "ceil_mode", "p"),
    "GlobalLpPool": ("p",),
    "MaxUnpool": ("kernel_shape", "strides", "pads", "indices_relative_to"),
}
ATTRIBUTE_WORDS = {
    "auto_pad": (
        "explicit",
        "same_upper",
        "same_lower",
        "valid",
        "NOTSET",
        "SAME_UPPER",
        "SAME_LOWER",
        "VALID",
        "notset",
        "Same_Lower",
        "",
        "pad",
    ),
    "rounding_type": ("floor", "ceil", "ceil_torch", "CEIL", "round", ""),
    "index_element_type": ("i32", "i64", "u8", "f32", "string", "dynamic", ""),
    "exclude-pad": ("true", "false", "1", "0", "yes", ""),
    "ceil_mode": ("true", "false", "1", "0", "2", ""),
    "count_include_pad": ("true", "false", "1", "0", ""),
    "indices_relative_to": ("default_shape", "output_shape", "OUTPUT_SHAPE", "input", ""),
    "p": ("1", "2", "3", "0.5", "0", "-1", "nan", "inf", "-inf", "1e308", "1e-300", "x"),
    "storage_order": ("0", "1", "2", "-1", "9223372036854775807"),
    "axis": ("0", "1", "2", "3", "4", "-1", "-5", "5", "-9223372036854775808"),
}
ELEMENT_TYPES = (
    "f32",
    "f16",
    "bf16",
    "f64",
    "i8",
    "u8",
    "i32",
    "i64",
    "boolean",
    "u1",
    "u4",
    "string",
    "dynamic",
    "f8e4m3",
    "u64",
)
SHAPES = (
    "1,1,134217728,1",
    "1,1,1099511627776,1099511627776",
    "1,1,2199023255552",
    "1048576,1048576,1048576,1",
    "1,1,4611686018427387904,1",
    "0,2,8,8",
    "1,1,0,0",
    "2,3,?,?",
    "?,?,?,?",
    "?,?,?",
    "1..4,2,1..1000000000,5",
    "1,2,8",
    "1,2,8,8,8",
    "1,2,8,8,8,8",
    "1,2",
    "",
    "1,1,1,1",
    "1,1,65536,65536",
    "1,1,9223372036854775807",
)


class _Net:
    """An IR model written layer by layer (constants into a .bin)."""

    def __init__(self):
        self.layers, self.edges, self.blob = [], [], bytearray()

    def _id(self):
        return len(self.layers)

    def parameter(self, shape, etype, name):
        k = self._id()
        dims = "".join(f"<dim>{d if isinstance(d, int) else -1}</dim>" for d in shape)
        text = ",".join(str(d) for d in shape)
        self.layers.append(
            f'<layer id="{k}" name="{name}" type="Parameter" version="opset1">'
            f'<data shape="{text}" element_type="{etype}"/><output><port id="0" '
            f'precision="{_PRECISION.get(etype, "FP32")}">{dims}</port></output></layer>'
        )
        return k, 0

    def const(self, values, etype, name):
        k = self._id()
        data = np.asarray(values, {"i64": np.int64, "i32": np.int32}[etype]).tobytes()
        offset = len(self.blob)
        self.blob += data
        self.layers.append(
            f'<layer id="{k}" name="{name}" type="Const" version="opset1">'
            f'<data element_type="{etype}" shape="{len(values)}" offset="{offset}" '
            f'size="{len(data)}"/><output><port id="0" precision="{_PRECISION[etype]}">'
            f"<dim>{len(values)}</dim></port></output></layer>"
        )
        return k, 0

    def op(self, type_, attrs, inputs, outputs):
        k = self._id()
        data = " ".join(f'{name}="{value}"' for name, value in attrs.items())
        ins = "".join(f'<port id="{j}"/>' for j in range(len(inputs)))
        outs = "".join(
            f'<port id="{len(inputs) + j}" precision="{p}"/>' for j, p in enumerate(outputs)
        )
        self.layers.append(
            f'<layer id="{k}" name="pool" type="{type_}" version="ovpool">'
            f"<data {data}/><input>{ins}</input><output>{outs}</output></layer>"
        )
        for j, (src, port) in enumerate(inputs):
            self.edges.append((src, port, k, j))
        for j in range(len(outputs)):
            r = self._id()
            self.layers.append(
                f'<layer id="{r}" name="out{j}" type="Result" version="opset1">'
                '<input><port id="0"/></input></layer>'
            )
            self.edges.append((k, len(inputs) + j, r, 0))

    def xml(self):
        edges = "".join(
            f'<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"/>'
            for a, b, c, d in self.edges
        )
        return (
            '<?xml version="1.0"?>\n<net name="lib_case" version="11"><layers>'
            + "".join(self.layers)
            + "</layers><edges>"
            + edges
            + "</edges></net>"
        ).encode(), bytes(self.blob)


def _ints(values):
    return ", ".join(str(v) for v in values)


def _window(rng, n):
    kernel = [int(rng.integers(1, 4)) for _ in range(n)]
    strides = [int(rng.integers(1, 4)) for _ in range(n)]
    dilations = [int(rng.integers(1, 3)) if rng.random() < 0.3 else 1 for _ in range(n)]
    begins = [int(rng.integers(0, k)) if rng.random() < 0.4 else 0 for k in kernel]
    ends = [int(rng.integers(0, k)) if rng.random() < 0.4 else 0 for k in kernel]
    return kernel, strides, dilations, begins, ends


def _one_node(rng, op):
    """A valid one-node model of ``op``: (xml, bin)."""
    n = int(rng.integers(1, 4))
    shape = [int(rng.integers(1, 3)), int(rng.integers(1, 4))] + [
        int(rng.integers(1, 10 if n > 1 else 24)) for _ in range(n)
    ]
    if rng.random() < 0.15:
        shape[int(rng.integers(len(shape)))] = "?"
    types = ("f32",) * 6 + ("f16", "bf16", "f64") + (("i8", "u8") if op in MAX_TYPES else ())
    etype = types[int(rng.integers(len(types)))]
    net = _Net()
    x = net.parameter(shape, etype, "x")
    kernel, strides, dilations, begins, ends = _window(rng, n)
    values = _PRECISION.get(etype, "FP32")
    if op.startswith("Adaptive"):
        size = [int(rng.integers(1, 7)) for _ in range(n)]
        size_type = ("i64", "i32")[int(rng.integers(2))]
        inputs = [x, net.const(size, size_type, "output_size")]
        if op == "AdaptiveAvgPool":
            net.op(op, {}, inputs, [values])
        else:
            index = ("i32", "i64")[int(rng.integers(2))]
            net.op(op, {"index_element_type": index}, inputs, [values, _PRECISION[index]])
    elif op in ("AvgPool", "MaxPool"):
        auto = ("explicit",) * 4 + ("same_upper", "same_lower", "valid")
        attrs = {
            "kernel": _ints(kernel),
            "strides": _ints(strides),
            "pads_begin": _ints(begins),
            "pads_end": _ints(ends),
            "dilations": _ints(dilations),
            "rounding_type": ("floor", "ceil", "ceil_torch")[int(rng.integers(3))],
            "auto_pad": auto[int(rng.integers(len(auto)))],
        }
        if op == "AvgPool":
            attrs["exclude-pad"] = ("true", "false")[int(rng.integers(2))]
            net.op(op, attrs, [x], [values])
        else:
            index = ("i32", "i64")[int(rng.integers(2))]
            attrs["index_element_type"] = index
            attrs["axis"] = str(int(rng.integers(-(n + 2), n + 2)))
            net.op(op, attrs, [x], [values, _PRECISION[index]])
    elif op in ("OnnxAveragePool", "OnnxMaxPool", "LpPool"):
        auto = ("NOTSET",) * 4 + ("SAME_UPPER", "SAME_LOWER", "VALID")
        attrs = {
            "kernel_shape": _ints(kernel),
            "strides": _ints(strides),
            "pads": _ints(begins + ends),
            "dilations": _ints(dilations),
            "auto_pad": auto[int(rng.integers(len(auto)))],
            "ceil_mode": ("false", "true")[int(rng.integers(2))],
        }
        if attrs["auto_pad"] != "NOTSET":
            attrs["pads"] = _ints([0] * 2 * n)
        if op == "OnnxAveragePool":
            attrs["count_include_pad"] = ("false", "true")[int(rng.integers(2))]
            net.op(op, attrs, [x], [values])
        elif op == "OnnxMaxPool":
            attrs["storage_order"] = str(int(rng.integers(2)))
            net.op(op, attrs, [x], [values, "I64"])
        else:
            attrs["p"] = ("1", "2", "3", "0.5")[int(rng.integers(4))]
            net.op(op, attrs, [x], [values])
    elif op == "GlobalLpPool":
        net.op(op, {"p": ("1", "2", "3", "1.5")[int(rng.integers(4))]}, [x], [values])
    else:  # MaxUnpool
        index_type = ("i64", "i32")[int(rng.integers(2))]
        i = net.parameter(shape, index_type, "i")
        attrs = {
            "kernel_shape": _ints(kernel),
            "strides": _ints(strides),
            "pads": _ints(begins + ends),
            "indices_relative_to": ("default_shape", "output_shape")[int(rng.integers(2))],
        }
        inputs = [x, i]
        if rng.random() < 0.4 and "?" not in shape:
            default = [
                (d - 1) * s + k - b - e
                for d, s, k, b, e in zip(shape[2:], strides, kernel, begins, ends)
            ]
            if min(default) >= 1:
                full = shape[:2] + [d + int(rng.integers(0, 3)) for d in default]
                inputs.append(net.const(full, ("i64", "i32")[int(rng.integers(2))], "output_shape"))
        net.op(op, attrs, inputs, [values])
    return net.xml()


class _LibMutant(_Mutant):
    """The mutations aimed at what the library reads."""

    def ovpool_layers(self):
        return [x for x in self.layers() if x.get("version") == "ovpool"]

    def number(self):
        if self.rng.random() < 0.5:
            return str(HUGE[int(self.rng.integers(len(HUGE)))])
        return str(int(self.rng.integers(0, 8)))

    def pool_attr(self):
        layer = self.pick(self.ovpool_layers())
        data = layer.find("data") if layer is not None else None
        if data is None:
            return
        names = OP_ATTRIBUTES.get(layer.get("type"), ()) or ("p",)
        name = self.pick(list(names))
        old = data.get(name)
        r = self.rng.random()
        if name in ATTRIBUTE_WORDS and r < 0.6:
            value = self.pick(list(ATTRIBUTE_WORDS[name]))
        elif old is not None and r < 0.85:
            items = [v.strip() for v in old.split(",")]
            k = self.rng.random()
            if k < 0.6 and items:
                items[int(self.rng.integers(len(items)))] = self.number()
            elif k < 0.8:
                items = (
                    items[:-1]
                    if len(items) > 1 and self.rng.random() < 0.5
                    else items + [self.number()]
                )
            else:
                items = [self.number()] * len(items)
            value = ", ".join(items)
        elif r < 0.93:
            value = self.pick(list(WORDS))
        else:
            data.attrib.pop(name, None)
            self.notes.append(f"{layer.get('type')} drop {name}")
            return
        data.set(name, value)
        self.notes.append(f"{layer.get('type')} {name}={value[:60]!r}")

    def unknown_attr(self):
        layer = self.pick(self.ovpool_layers())
        data = layer.find("data") if layer is not None else None
        if data is not None:
            name = self.pick(
                [
                    "storage_order",
                    "kernel",
                    "p",
                    "axis",
                    "auto_pad",
                    "extra",
                    "kernel_shape",
                    "exclude-pad",
                ]
            )
            data.set(name, self.number())
            self.notes.append(f"{layer.get('type')} +{name}={data.get(name)}")

    def param_shape(self):
        params = [x for x in self.layers() if x.get("type") == "Parameter"]
        layer = self.pick(params)
        data = layer.find("data") if layer is not None else None
        if data is None:
            return
        shape = self.pick(list(SHAPES))
        data.set("shape", shape)
        port = layer.find("output/port")
        if port is not None and self.rng.random() < 0.8:
            for d in list(port):
                port.remove(d)
            for d in shape.split(",") if shape else []:
                dim = port.makeelement("dim", {})
                dim.text = d if re.fullmatch(r"\d+", d) else "-1"
                port.append(dim)
        self.notes.append(f"Parameter {layer.get('name')} shape={shape!r}")

    def param_type(self):
        params = [x for x in self.layers() if x.get("type") == "Parameter"]
        layer = self.pick(params)
        data = layer.find("data") if layer is not None else None
        if data is None:
            return
        etype = self.pick(list(ELEMENT_TYPES))
        data.set("element_type", etype)
        port = layer.find("output/port")
        if port is not None:
            port.set("precision", _PRECISION.get(etype, etype.upper()))
        self.notes.append(f"Parameter {layer.get('name')} element_type={etype}")

    def const_values(self):
        consts = [x for x in self.layers() if x.get("type") == "Const"]
        layer = self.pick(consts)
        data = layer.find("data") if layer is not None else None
        if data is None:
            return
        r = self.rng.random()
        if r < 0.6:
            etype = data.get("element_type")
            try:
                offset, size = int(data.get("offset")), int(data.get("size"))
            except (TypeError, ValueError):
                return
            dtype = {"i64": np.int64, "i32": np.int32}.get(etype)
            if (
                dtype is None
                or offset < 0
                or offset + size > len(self.blob)
                or size % np.dtype(dtype).itemsize
            ):
                return
            values = np.frombuffer(self.blob[offset : offset + size], dtype).copy()
            if values.size:
                k = int(self.rng.integers(values.size))
                values[k] = np.array(int(self.pick(list(HUGE))) % (1 << 64), np.uint64).astype(
                    dtype
                )
            blob = bytearray(self.blob)
            blob[offset : offset + size] = values.tobytes()
            self.blob = bytes(blob)
            self.notes.append(f"Const {layer.get('name')} = {values.tolist()}")
        elif r < 0.8:
            etype = self.pick(["i32", "i64", "f32", "u64", "u8", "boolean", "i4"])
            data.set("element_type", etype)
            self.notes.append(f"Const {layer.get('name')} element_type={etype}")
        else:
            shape = self.pick(["", "0", "1", "3", "4", "2,2", "1000000", "4294967296"])
            data.set("shape", shape)
            self.notes.append(f"Const {layer.get('name')} shape={shape!r}")

    def rewire(self):
        """An edge moved to another existing layer's port (never a missing one)."""
        edges = list(self.root.iter("edge"))
        e = self.pick(edges)
        layers = self.layers()
        if e is None or not layers:
            return
        target = self.pick(layers)
        name = self.pick(["from", "to"])
        group = "output" if name == "from" else "input"
        ports = [p.get("id") for p in target.findall(f"{group}/port")]
        if not ports:
            return
        e.set(f"{name}-layer", target.get("id"))
        e.set(f"{name}-port", self.pick(ports))
        self.notes.append(f"edge {name} {target.get('type')}:{e.get(name + '-port')}")

    TARGETED = (
        "pool_attr",
        "pool_attr",
        "pool_attr",
        "pool_attr",
        "unknown_attr",
        "param_shape",
        "param_shape",
        "param_type",
        "const_values",
        "const_values",
        "rewire",
    )
    GENERIC = ("attr_set", "attr_del", "dim", "delete", "duplicate", "edge", "reorder")


# The window attribute every spatial axis needs an entry of, per op.
KERNEL_ATTRIBUTE = {
    "AvgPool": "kernel",
    "MaxPool": "kernel",
    "OnnxAveragePool": "kernel_shape",
    "OnnxMaxPool": "kernel_shape",
    "LpPool": "kernel_shape",
    "MaxUnpool": "kernel_shape",
}


def kernel_not_per_axis(root):
    """A note when some ovpool layer fed straight by a Parameter has a kernel
    that is absent, empty or not one entry per spatial axis of that
    Parameter's shape, else None: a file the library must refuse wherever
    OpenVINO refuses its stock twin (a kernel of no entry is no identity)."""
    layers = {x.get("id"): x for x in root.iter("layer")}
    for edge in root.iter("edge"):
        layer = layers.get(edge.get("to-layer"))
        source = layers.get(edge.get("from-layer"))
        if layer is None or source is None or edge.get("to-port") != "0":
            continue
        name = KERNEL_ATTRIBUTE.get(layer.get("type"))
        if layer.get("version") != "ovpool" or name is None or source.get("type") != "Parameter":
            continue
        shape = source.find("data")
        shape = None if shape is None else shape.get("shape")
        if shape is None or not re.fullmatch(r"[0-9?,\s-]*", shape) or "-1" in shape:
            continue  # (a dynamic rank or a spelling the reader refuses)
        rank = len([d for d in shape.split(",") if d.strip()]) - 2
        data = layer.find("data")
        value = None if data is None else data.get(name)
        items = [v for v in (value or "").split(",") if v.strip()]
        if 1 <= rank <= 3 and (value is None or len(items) != rank):
            return f"{layer.get('type')} {name}={value!r} on {rank} spatial dims"
    return None


def make_ir_case(seed, index):
    """(base, xml bytes, bin bytes, notes, twin xml bytes or None) of IR case
    ``index`` of run ``seed``."""
    from lxml import etree

    rng = np.random.default_rng([seed, 4, index])
    if rng.random() < 0.15:
        name = ("ovpool_opset", "ovpool_opset_onnx")[int(rng.integers(2))]
        with open(os.path.join(EXAMPLES, name + ".xml"), "rb") as f:
            xml = f.read()
        with open(os.path.join(EXAMPLES, name + ".bin"), "rb") as f:
            blob = f.read()
    else:
        name = OPS[int(rng.integers(len(OPS)))]
        xml, blob = _one_node(rng, name)
    root = etree.fromstring(xml)
    mutant = _LibMutant(rng, root, blob)
    for _ in range(int(rng.choice([1, 1, 1, 2, 2, 3, 4]))):
        if rng.random() < 0.12:
            getattr(mutant, _LibMutant.GENERIC[int(rng.integers(len(_LibMutant.GENERIC)))])()
        else:
            getattr(mutant, _LibMutant.TARGETED[int(rng.integers(len(_LibMutant.TARGETED)))])()
    data = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    return name, data, mutant.blob, mutant.notes, twin_of(data)


_OVPOOL_LAYER = re.compile(rb'type="([^"]*)" version="ovpool"')


def twin_of(xml):
    """The mutant with ovpool's layers given the stock opset versions of the
    same names, or None when one of them has no stock twin."""
    types = {m.group(1).decode("utf-8", "replace") for m in _OVPOOL_LAYER.finditer(xml)}
    if not types or not types <= set(TWINS):
        return None
    return _OVPOOL_LAYER.sub(
        lambda m: b'type="%s" version="%s"' % (m.group(1), TWINS[m.group(1).decode()].encode()), xml
    )


# --------------------------------------------------------------------------
# single-node ONNX pool files
# --------------------------------------------------------------------------

ONNX_OPS = (
    "MaxPool",
    "MaxPool",
    "AveragePool",
    "AveragePool",
    "LpPool",
    "GlobalLpPool",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "MaxUnpool",
)
# opsets each op is written at (LpPool's ceil_mode and dilations: 18;
# AveragePool's dilations: 19; MaxPool's dilations and storage_order: 10, 8)
ONNX_OPSETS = (8, 10, 11, 12, 18, 19, 22)
ONNX_TYPES = ("float",) * 8 + (
    "float16",
    "double",
    "bfloat16",
    "int8",
    "uint8",
    "int32",
    "int64",
    "bool",
)


@dataclass
class OnnxCase:
    model: bytes
    feeds: list | None  # one array per graph input, or None: not run
    notes: list = field(default_factory=list)
    policy: str = "default"
    op: str = ""
    opset: int = 0
    attrs: dict = field(default_factory=dict)
    # why a file must be refused where ONNX Runtime refuses it (a kernel
    # that is not one entry per spatial axis), or None
    must_refuse: str | None = None

    def comparable(self):
        """Whether ONNX Runtime's result is the one ovpool documents for
        SAME_* padding (docs/reference/semantics.md): ONNX Runtime pads for
        the undilated kernel (fewer outputs than ceil(n / s) once dilated),
        and crops where the total pad would be negative (ovpool pads 0)."""
        if not self.feeds or not str(self.attrs.get("auto_pad", "")).startswith("SAME"):
            return True
        n = len(self.feeds[0].shape) - 2
        kernel = self.attrs.get("kernel_shape")
        strides = self.attrs.get("strides", [1] * n)
        dilations = self.attrs.get("dilations", [1] * n)
        if not all(
            isinstance(v, list) and len(v) == n and all(isinstance(i, int) for i in v)
            for v in (kernel, strides, dilations)
        ):
            return True  # (refused by ovpool: nothing to compare)
        for size, k, s, d in zip(self.feeds[0].shape[2:], kernel, strides, dilations):
            if d != 1 or s < 1 or (-(-size // s) - 1) * s + (k - 1) * d + 1 < size:
                return False
        return True


def _onnx_dtype(name):
    import ml_dtypes

    return (
        np.dtype(ml_dtypes.bfloat16)
        if name == "bfloat16"
        else np.dtype(
            {
                "float": np.float32,
                "float16": np.float16,
                "double": np.float64,
                "int8": np.int8,
                "uint8": np.uint8,
                "int32": np.int32,
                "int64": np.int64,
                "bool": np.bool_,
            }[name]
        )
    )


def make_onnx_case(seed, index):
    """The ONNX case ``index`` of run ``seed`` (deterministic)."""
    from onnx import AttributeProto, TensorProto, helper

    rng = np.random.default_rng([seed, 5, index])
    notes = []
    op = ONNX_OPS[int(rng.integers(len(ONNX_OPS)))]
    opsets = [v for v in ONNX_OPSETS if not (op == "MaxUnpool" and v < 9)]
    opset = opsets[int(rng.integers(len(opsets)))]
    n = int(rng.integers(1, 4))
    dims = [int(rng.integers(1, 3)), int(rng.integers(1, 4))] + [
        int(rng.integers(1, 10 if n > 1 else 20)) for _ in range(n)
    ]
    type_name = ONNX_TYPES[int(rng.integers(len(ONNX_TYPES)))] if rng.random() < 0.5 else "float"
    if op not in ("MaxPool", "GlobalMaxPool", "MaxUnpool") and type_name in ("int8", "uint8"):
        type_name = "float"
    attrs = {}
    kernel, strides, dilations, begins, ends = _window(rng, n)
    window = op in ("MaxPool", "AveragePool", "LpPool")
    if window:
        attrs["kernel_shape"] = kernel
        if strides != [1] * n or rng.random() < 0.5:
            attrs["strides"] = strides
        auto = ("NOTSET",) * 5 + ("SAME_UPPER", "SAME_LOWER", "VALID")
        attrs["auto_pad"] = auto[int(rng.integers(len(auto)))]
        if attrs["auto_pad"] == "NOTSET" and (begins + ends != [0] * 2 * n or rng.random() < 0.3):
            attrs["pads"] = begins + ends
        if (
            (op == "MaxPool" and opset >= 10)
            or (op == "AveragePool" and opset >= 19)
            or (op == "LpPool" and opset >= 18)
        ):
            if dilations != [1] * n or rng.random() < 0.3:
                attrs["dilations"] = dilations
        if opset >= 10 and (op != "LpPool" or opset >= 18) and rng.random() < 0.4:
            attrs["ceil_mode"] = 1
        if op == "AveragePool" and rng.random() < 0.5:
            attrs["count_include_pad"] = 1
        if op == "MaxPool" and opset >= 8 and rng.random() < 0.3:
            attrs["storage_order"] = 1
        if op == "LpPool":
            attrs["p"] = int(rng.choice([1, 2, 3])) if opset >= 2 else 2.0
    elif op == "GlobalLpPool":
        attrs["p"] = int(rng.choice([1, 2, 3]))
    elif op == "MaxUnpool":
        attrs["kernel_shape"] = kernel
        if strides != [1] * n or rng.random() < 0.5:
            attrs["strides"] = strides
        if begins + ends != [0] * 2 * n:
            attrs["pads"] = begins + ends
    outputs = 2 if op == "MaxPool" and rng.random() < 0.4 else 1
    inputs = ["X"] + (["I"] if op == "MaxUnpool" else [])
    shape_input = op == "MaxUnpool" and rng.random() < 0.3
    corruptions = 0
    for _ in range(int(rng.choice([0, 0, 1, 1, 1, 2]))):
        r = rng.random()
        names = [k for k in attrs if k != "auto_pad"] or ["kernel_shape"]
        if "kernel_shape" in attrs and rng.random() < 0.15:
            # the kernel taken away, emptied or given another number of entries
            form = int(rng.integers(4))
            if form == 0:
                del attrs["kernel_shape"]
            else:
                attrs["kernel_shape"] = [[], [2] * (n + 1), [2] * max(n - 1, 0)][form - 1]
        elif r < 0.45:
            name = names[int(rng.integers(len(names)))]
            old = attrs.get(name, [1] * n)
            value = ONNX_HUGE[int(rng.integers(len(ONNX_HUGE)))]
            if isinstance(old, list) and old and rng.random() < 0.7:
                old = list(old)
                old[int(rng.integers(len(old)))] = value
                value = old
            attrs[name] = value
        elif r < 0.6:
            name = names[int(rng.integers(len(names)))]
            old = attrs.get(name, [1] * n)
            size = len(old) if isinstance(old, list) else 1
            length = int(rng.choice([0, 1, size + 1, 2 * size + 1, 7]))
            attrs[name] = [int(rng.integers(0, 4)) for _ in range(length)]
        elif r < 0.7:
            name = ("kernel_shape", "p", "storage_order", "ceil_mode", "pads", "auto_pad")[
                int(rng.integers(6))
            ]
            attrs[name] = (
                [1.5, 2.5]
                if rng.random() < 0.4
                else ("abc" if rng.random() < 0.5 else float("nan"))
            )
        elif r < 0.75:
            attrs["auto_pad"] = ("FOO", "", "same_upper", "notset")[int(rng.integers(4))]
        elif r < 0.8:
            attrs.pop(names[int(rng.integers(len(names)))], None)
        elif r < 0.83:
            attrs["extra"] = 3
        else:
            k = int(rng.integers(len(dims)))
            dims[k] = ("N", 0, 2**27, 2**31, 2**40, 2**41, 2**62, -1)[int(rng.integers(8))]
        corruptions += 1
    notes.append(
        f"{op}-{opset} {type_name} {dims} {attrs}"
        + (" +Indices" if outputs == 2 else "")
        + (" +output_shape" if shape_input else "")
        + (f" ({corruptions} corrupted)" if corruptions else "")
    )
    elem = getattr(TensorProto, type_name.upper())
    graph_inputs = [helper.make_tensor_value_info("X", elem, dims)]
    if op == "MaxUnpool":
        graph_inputs.append(helper.make_tensor_value_info("I", TensorProto.INT64, dims))
        if shape_input:
            inputs.append("S")
            graph_inputs.append(helper.make_tensor_value_info("S", TensorProto.INT64, [len(dims)]))
    out_names = ["Y", "Indices"][:outputs]
    node = helper.make_node(op, inputs, out_names)
    for name, value in attrs.items():
        # (an empty list has no type for make_attribute to infer: ints)
        node.attribute.append(
            helper.make_attribute(
                name, value, attr_type=AttributeProto.INTS if value == [] else None
            )
        )
    graph_outputs = [
        helper.make_tensor_value_info(name, elem if k == 0 else TensorProto.INT64, None)
        for k, name in enumerate(out_names)
    ]
    graph = helper.make_graph([node], "pool", graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    feeds = _onnx_feeds(rng, op, dims, type_name, attrs, shape_input)
    policy = ("default", "all")[int(rng.integers(2))]
    must_refuse = None
    kernel = attrs.get("kernel_shape")
    entries = len(kernel) if isinstance(kernel, list) else None if kernel is None else 1
    if op in ("MaxPool", "AveragePool", "LpPool", "MaxUnpool") and entries != len(dims) - 2:
        must_refuse = f"kernel_shape={kernel!r} on {len(dims) - 2} spatial dims"
    return OnnxCase(model.SerializeToString(), feeds, notes, policy, op, opset, attrs, must_refuse)


def _onnx_feeds(rng, op, dims, type_name, attrs, shape_input):
    """Seeded inputs of the declared shapes (a symbolic dim made 1 to 6), or
    None when some dim is not a small positive number."""
    shape = [int(rng.integers(1, 7)) if d == "N" else d for d in dims]
    if any(not isinstance(d, int) or d < 1 for d in shape) or math.prod(shape) > MAX_FEED_ELEMENTS:
        return None
    dtype = _onnx_dtype(type_name)
    if dtype.kind == "b":
        x = rng.random(shape) < 0.5
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(max(info.min, -100), min(info.max, 100) + 1, size=shape).astype(dtype)
    else:
        values = rng.standard_normal(shape)
        if rng.random() < 0.3:
            values = np.round(values * 2)  # ties
        x = values.astype(dtype)
    feeds = [x]
    if op == "MaxUnpool":
        n = len(shape) - 2
        kernel = attrs.get("kernel_shape", [1] * n)
        strides = attrs.get("strides", [1] * n)
        pads = attrs.get("pads", [0] * 2 * n)
        try:
            default = shape[:2] + [
                (d - 1) * s + k - b - e
                for d, s, k, b, e in zip(shape[2:], strides, kernel, pads[:n], pads[n:])
            ]
        except TypeError:
            return None
        space = math.prod(default) if min(default) >= 1 else 1
        if not isinstance(space, int) or space > 1 << 24:
            return None
        # distinct indices (ONNX Runtime and ovpool agree when no two collide)
        count = math.prod(shape)
        if count > space:
            indices = rng.integers(0, max(space, 1), size=shape)
        else:
            indices = rng.permutation(space)[:count].reshape(shape)
        feeds.append(indices.astype(np.int64))
        if shape_input:
            feeds.append(np.array(default if min(default) >= 1 else shape, np.int64))
    return feeds


# --------------------------------------------------------------------------
# running a case
# --------------------------------------------------------------------------


def _reset_peak():
    """Start measuring this process's peak resident memory afresh (Linux: 5
    written to clear_refs resets VmHWM); its resident memory now."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return _status("VmRSS")


def _status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) << 10
    return 0


def _growth_mib(before):
    """MiB the peak resident memory rose above ``before`` since _reset_peak."""
    return max(_status("VmHWM") - before, 0) >> 20


_OVPOOL_MESSAGE = re.compile(r"While validating node 'ovpool::|(^|\n)\s*ovpool[ :]")


def classify_message(message):
    """ovpool-error / budget / memory / error (OpenVINO's, not naming ovpool)."""
    if "ovpool's memory budget" in message:
        return "budget"
    if _OVPOOL_MESSAGE.search(message):
        return "ovpool-error"
    if (
        "bad_alloc" in message
        or "Cannot allocate memory" in message
        or "std::length_error" in message
    ):
        return "memory"
    return "error"


def _first_line(message, limit=300):
    lines = [
        line.strip()
        for line in message.splitlines()
        if line.strip() and not line.startswith("Exception from src/")
    ]
    return (" | ".join(lines) or message.strip())[:limit]


def _declared_bytes(model):
    total = 0
    for param in model.get_parameters():
        shape = param.get_partial_shape()
        if shape.rank.is_dynamic or not shape.is_static:
            continue
        total += math.prod(d.get_length() for d in shape) * max(param.get_element_type().size, 1)
    return total


def _feeds_for(compiled, rng):
    """Seeded inputs for a compiled IR model, or None (dynamic, too large or a
    type numpy cannot hold)."""
    feeds = []
    sizes = {}
    for port in compiled.inputs:
        shape = port.get_partial_shape()
        if not shape.is_static:
            return None
        dims = [d.get_length() for d in shape]
        if math.prod(dims) > MAX_FEED_ELEMENTS:
            return None
        name = port.get_element_type().get_type_name()
        sizes[len(feeds)] = math.prod(dims)
        if name in ("f32", "f16", "f64"):
            feeds.append(
                rng.standard_normal(dims).astype(
                    {"f32": np.float32, "f16": np.float16, "f64": np.float64}[name]
                )
            )
        elif name in ("i8", "u8", "i32", "i64"):
            dtype = {"i8": np.int8, "u8": np.uint8, "i32": np.int32, "i64": np.int64}[name]
            high = sizes[0] if feeds and name in ("i32", "i64") else 100
            feeds.append(rng.integers(0, max(high, 1), size=dims).astype(dtype))
        elif name == "bf16":
            import openvino as ov

            bits = rng.standard_normal(dims).astype(np.float32).view(np.uint32) >> 16
            feeds.append(ov.Tensor(bits.astype(np.uint16), dims, ov.Type.bf16))
        else:
            return None
    return feeds


def _save(path, outputs):
    np.savez(path, *[np.asarray(o) for o in outputs])


def run_openvino(path, weights, seed, index, save=None, feeds=None):
    """(class, detail, extra) of OpenVINO (with or without the library, as the
    worker's Core has it) reading, compiling and running one file."""
    core = _STATE["core"]
    extra = {"stage": "read"}
    before = _reset_peak()
    try:
        model = core.read_model(path) if weights is None else core.read_model(path, weights)
        extra["ovpool_ops"] = sum(
            1 for op in model.get_ordered_ops() if op.get_type_info().version_id == "ovpool"
        )
        # (the CPU plugin compiles no model with an untyped Parameter, a Relu's neither)
        extra["untyped_parameter"] = any(
            p.get_element_type().is_dynamic() for p in model.get_parameters()
        )
        grown = _growth_mib(before)
        if grown > READ_GROWTH_MIB:
            return "blowup", f"read_model: resident memory grew {grown} MiB", extra
        declared = _declared_bytes(model)
        if declared > MAX_COMPILE_INPUT_BYTES:
            return "ok", f"read; not compiled (inputs of {declared} bytes)", extra
        extra["stage"] = "compile"
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        extra["stage"] = "infer"
        if feeds is None:
            feeds = _feeds_for(compiled, np.random.default_rng([seed, 6, index]))
        if feeds is None or len(feeds) != len(compiled.inputs):
            return "ok", "compiled; not run", extra
        results = compiled.create_infer_request().infer(list(feeds))
        outputs = [np.array(results[o]) for o in compiled.outputs]
        grown = _growth_mib(before)
        if grown > RUN_GROWTH_MIB:
            return "blowup", f"resident memory grew {grown} MiB", extra
        if save is not None:
            _save(save, outputs)
        extra["stage"] = "ran"
        return "ok", "ran", extra
    except MemoryError as exc:
        return "memory", f"{extra['stage']}: MemoryError: {exc}"[:300], extra
    except Exception as exc:  # OpenVINO raises RuntimeError and others
        message = str(exc)
        return (
            classify_message(message),
            f"{extra['stage']}: {type(exc).__name__}: {_first_line(message)}",
            extra,
        )


def run_ort(path, feeds, saved, comparable=True):
    """(class, detail, extra) of ONNX Runtime on one file, and its outputs
    compared with the library's (``saved``, when it ran and ``comparable``)."""
    onnxruntime, options = _STATE["ort"]
    extra = {"stage": "read"}
    try:
        session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        if feeds is None:
            return "ok", "session; not run", extra
        extra["stage"] = "infer"
        names = [i.name for i in session.get_inputs()]
        outputs = session.run(None, dict(zip(names, feeds)))
    except MemoryError as exc:
        return "memory", f"{extra['stage']}: MemoryError: {exc}"[:300], extra
    except Exception as exc:  # ONNX Runtime's refusals
        return "error", f"{extra['stage']}: {type(exc).__name__}: {_first_line(str(exc))}", extra
    extra["stage"] = "ran"
    if not comparable:
        extra["comparison"] = None
        extra["incomparable"] = True
    elif saved is not None and os.path.exists(saved):
        with np.load(saved) as data:
            ours = [data[k] for k in data.files]
        extra["comparison"] = compare(feeds[0], outputs, ours)
    return "ok", "ran", extra


# (OpenVINO's CPU plugin computes float64 models in float32)
_RTOL = {"float32": 1e-5, "float64": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}


def compare(x, reference, ours):
    """ "agree", or "differ: ..." naming the first difference."""
    if len(ours) < len(reference):
        return f"differ: {len(ours)} outputs, ONNX Runtime {len(reference)}"
    x = np.asarray(x)
    finite = np.isfinite(x.astype(np.float64)) if x.dtype.kind != "b" else None
    scale = (
        max(1.0, float(np.abs(x.astype(np.float64)[finite]).max()))
        if finite is not None and finite.any()
        else 1.0
    )
    for k, (want, got) in enumerate(zip(reference, ours)):
        want, got = np.asarray(want), np.asarray(got)
        if want.shape != got.shape:
            return f"differ: output {k} shape {got.shape}, ONNX Runtime {want.shape}"
        a, b = got.astype(np.float64), want.astype(np.float64)
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        if want.dtype.kind == "f" and not same.all():
            rtol = _RTOL.get(want.dtype.name, 1e-5)
            with np.errstate(invalid="ignore"):
                same |= np.abs(a - b) <= rtol * (scale + np.abs(b))
        if not same.all():
            where = tuple(int(i) for i in np.argwhere(~same)[0])
            return (
                f"differ: output {k} at {int((~same).sum())} of {same.size} positions, "
                f"first {where}: ovpool {a[where]!r}, ONNX Runtime {b[where]!r}"
            )
    return "agree"


def run_case(mode, seed, index, tmp):
    """Run case ``index`` of ``mode``: (class, detail, extra)."""
    if mode.endswith("ir"):
        base, xml, blob, _, twin = make_ir_case(seed, index)
        if mode == "native-ir":
            if twin is None:
                return "no-twin", "an ONNX op of ovpool's opset: no stock twin", {}
            xml = twin
        import openvino as ov

        extra_weights = (
            ov.Tensor(np.frombuffer(blob, np.uint8).copy())
            if blob
            else ov.Tensor(np.empty(0, np.uint8))
        )
        cls, detail, extra = run_openvino(xml, extra_weights, seed, index)
        extra["twin"] = twin is not None
        from lxml import etree

        extra["must_refuse"] = kernel_not_per_axis(etree.fromstring(xml))
        return cls, detail, extra
    case = make_onnx_case(seed, index)
    path = os.path.join(tmp, f"{mode}-{seed}-{index}.onnx")
    with open(path, "wb") as f:
        f.write(case.model)
    saved = os.path.join(tmp, f"lib-onnx-{seed}-{index}.npz")
    try:
        if mode == "ort":
            cls, detail, extra = run_ort(path, case.feeds, saved, case.comparable())
        elif mode == "lib-onnx":
            os.environ["OVPOOL_OPENVINO_POLICY"] = case.policy
            cls, detail, extra = run_openvino(path, None, seed, index, save=saved, feeds=case.feeds)
        else:
            cls, detail, extra = run_openvino(path, None, seed, index, feeds=case.feeds)
    finally:
        os.remove(path)
    extra["must_refuse"] = case.must_refuse
    return cls, detail, extra


def describe(mode, seed, index):
    if mode.endswith("ir"):
        base, _, _, notes, twin = make_ir_case(seed, index)
        return f"mutant of {base}: " + "; ".join(notes) + ("" if twin else " (no stock twin)")
    case = make_onnx_case(seed, index)
    return f"policy {case.policy}: " + "; ".join(case.notes)
