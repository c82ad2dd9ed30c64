"""Structure-aware mutants of the IR files in ``ir_examples/``.

A mutant is made from ``(seed, index)`` alone (:func:`make_case`): one of the
21 example models (every layer ovpool runs, dynamic and bounded shapes,
compressed constants, several outputs, a CNN for the OpenVINO route, ovpool's
own opset), parsed, then changed by one to five mutations drawn from:

* elements deleted, duplicated, reordered, moved under another parent, their
  tag renamed or their text replaced;
* attributes set to negative, huge, empty and non-numeric values (and to other
  layer types, versions, element types, auto_pad and rounding words), deleted,
  or flooded (thousands of extra attributes on one element);
* dims changed, added or removed; edges rewired to other, missing or cyclic
  layers and ports, or added;
* a Const's offset and size moved around the end of the .bin;
* a chain of up to thousands of Convert layers put between a Const and its
  consumer (the walk a file can deepen);
* the serialised .xml truncated, a byte changed or junk inserted; the .bin
  truncated, emptied, extended or its bytes changed.

:func:`run_ovpool` reads the mutant with :func:`ovpool.ir.read_model`,
describes it, and when it reads, calls it on seeded inputs of its declared
shapes at 1, 2 and 7 threads (the bits must agree); :func:`run_openvino`
reads and compiles the same files with OpenVINO's CPU plugin and, where
ovpool ran the model, runs it on the same inputs and compares the outputs.
"""

from __future__ import annotations

import copy
import glob
import math
import os
import re
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(ROOT, "ir_examples")

HOSTILE_VALUES = (
    "-1",
    "-2147483649",
    "0",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "18446744073709551616",
    "1" + "0" * 30,
    "",
    " ",
    "abc",
    "1.5",
    "nan",
    "inf",
    "-0",
    "0x10",
    "1e3",
    " 2 ",
    "\uff12",
    "1,2,3",
    ",,",
    "?",
    "...",
    "1..",
    "..-3",
    "2, 2, 2, 2, 2, 2, 2",
    "true",
    "FALSE",
    "\\,",
    "1" * 400,
)
WORDS = {
    "type": (
        "Parameter",
        "Const",
        "Result",
        "Convert",
        "AdaptiveAvgPool",
        "AdaptiveMaxPool",
        "AvgPool",
        "MaxPool",
        "Convolution",
        "Relu",
        "Concat",
        "Loop",
        "FancyPool",
        "OnnxMaxPool",
        "MaxUnpool",
        "LpPool",
        "GlobalLpPool",
        "OnnxAveragePool",
        "",
    ),
    "version": (
        "opset1",
        "opset8",
        "opset14",
        "opset16",
        "opset99",
        "opset0",
        "ovpool",
        "extension",
        "",
        "opset",
    ),
    "element_type": (
        "f32",
        "f16",
        "bf16",
        "f64",
        "i8",
        "u8",
        "i32",
        "i64",
        "u1",
        "u4",
        "string",
        "dynamic",
        "undefined",
        "f8e4m3",
        "boolean",
        "F32",
    ),
    "precision": ("FP32", "FP16", "BF16", "I64", "I32", "U8", "BOOL", "FP64", "STRING", "xx"),
    "auto_pad": ("explicit", "same_upper", "same_lower", "valid", "notset", "SAME_UPPER", ""),
    "rounding_type": ("floor", "ceil", "ceil_torch", "CEIL", "round", ""),
    "index_element_type": ("i32", "i64", "u8", "f32", "string"),
    "destination_type": ("f32", "f16", "i64", "i32", "boolean", "string", "u4", "bf16"),
    "shape": (
        "?",
        "-1",
        "...",
        "1..",
        "1..64",
        "2,3,?,?",
        "0",
        "2,3,1000000000,1000000000",
        "1,1,4294967296",
        "?,?,?,?,?,?,?",
        "-2",
        "",
    ),
}
ATTR_NAMES = (
    "id",
    "name",
    "type",
    "version",
    "shape",
    "element_type",
    "offset",
    "size",
    "kernel",
    "strides",
    "pads_begin",
    "pads_end",
    "dilations",
    "auto_pad",
    "rounding_type",
    "exclude-pad",
    "axis",
    "index_element_type",
    "destination_type",
    "from-layer",
    "from-port",
    "to-layer",
    "to-port",
    "precision",
    "names",
    "kernel_shape",
    "pads",
    "ceil_mode",
    "storage_order",
    "p",
    "count_include_pad",
    "output_names",
)


def examples():
    return sorted(glob.glob(os.path.join(EXAMPLES, "*.xml")))


_BASES = {}


def _base(path):
    if path not in _BASES:
        with open(path, "rb") as f:
            xml = f.read()
        bin_path = path[:-4] + ".bin"
        blob = open(bin_path, "rb").read() if os.path.exists(bin_path) else b""
        _BASES[path] = (xml, blob)
    return _BASES[path]


class _Mutant:
    def __init__(self, rng, root, blob):
        self.rng = rng
        self.root = root
        self.blob = blob
        self.notes = []

    # helpers
    def pick(self, items):
        return items[int(self.rng.integers(len(items)))] if items else None

    def elements(self):
        return [e for e in self.root.iter() if isinstance(e.tag, str) and e is not self.root]

    def layers(self):
        return [e for e in self.root.iter("layer")]

    def value(self, name=None):
        if name in WORDS and self.rng.random() < 0.6:
            return self.pick(WORDS[name])
        return self.pick(HOSTILE_VALUES)

    # the mutations
    def delete(self):
        e = self.pick(self.elements())
        if e is not None and e.getparent() is not None:
            e.getparent().remove(e)
            self.notes.append(f"delete <{e.tag}>")

    def duplicate(self):
        e = self.pick(self.elements())
        if e is not None:
            e.addnext(copy.deepcopy(e))
            self.notes.append(f"duplicate <{e.tag}>")

    def reorder(self):
        parents = [e for e in self.root.iter() if isinstance(e.tag, str) and len(e) > 1]
        e = self.pick(parents)
        if e is not None:
            children = list(e)
            self.rng.shuffle(children)
            e[:] = children
            self.notes.append(f"reorder <{e.tag}>")

    def move(self):
        e, target = self.pick(self.elements()), self.pick(self.elements())
        if e is None or target is None or e is target or e in target.iterancestors():
            return
        e.getparent().remove(e)
        target.append(e)
        self.notes.append(f"move <{e.tag}> into <{target.tag}>")

    def attr_set(self):
        e = self.pick([x for x in self.elements() if x.attrib] or self.elements())
        if e is None:
            return
        names = list(e.attrib) if e.attrib and self.rng.random() < 0.8 else list(ATTR_NAMES)
        name = self.pick(names)
        value = self.value(name)
        if name in ("from-layer", "to-layer", "id") and self.rng.random() < 0.5:
            ids = [x.get("id") for x in self.layers() if x.get("id") is not None]
            value = self.pick(ids) or value
        e.set(name, value)
        self.notes.append(f"<{e.tag}> {name}={value[:40]!r}")

    def attr_del(self):
        e = self.pick([x for x in self.elements() if x.attrib])
        if e is not None:
            name = self.pick(list(e.attrib))
            del e.attrib[name]
            self.notes.append(f"<{e.tag}> drop {name}")

    def flood(self):
        e = self.pick(self.elements())
        if e is None:
            return
        n = int(self.rng.choice([10, 100, 1000, 1020, 1030, 3000] * 4 + [100_000]))
        # a marker, expanded in the serialised text: lxml sets each attribute
        # by a walk of the element's list (setting n of them is quadratic)
        e.set("flood_marker", str(n))
        self.notes.append(f"<{e.tag}> +{n} attributes")

    def dim(self):
        dims = list(self.root.iter("dim"))
        d = self.pick(dims)
        if d is None:
            return
        r = self.rng.random()
        if r < 0.6:
            d.text = self.value()
        elif r < 0.8:
            d.addnext(copy.deepcopy(d))
        else:
            d.getparent().remove(d)
        what = ("=" + repr(d.text[:20])) if r < 0.6 else ("add" if r < 0.8 else "drop")
        self.notes.append(f"dim {what}")

    def edge(self):
        edges = list(self.root.iter("edge"))
        e = self.pick(edges)
        if e is None:
            return
        name = self.pick(["from-layer", "from-port", "to-layer", "to-port"])
        if self.rng.random() < 0.7:
            value = str(int(self.rng.integers(0, 12)))
        else:
            value = self.value()
        e.set(name, value)
        self.notes.append(f"edge {name}={value[:20]!r}")

    def edge_add(self):
        edges_el = self.root.find("edges")
        if edges_el is None:
            return
        old = self.pick(list(edges_el))
        new = copy.deepcopy(old) if old is not None else edges_el.makeelement("edge", {})
        for name in ("from-layer", "from-port", "to-layer", "to-port"):
            new.set(name, str(int(self.rng.integers(0, 12))))
        edges_el.append(new)
        self.notes.append("edge added " + " ".join(new.get(n) for n in ("from-layer", "to-layer")))

    def const(self):
        consts = [x for x in self.layers() if x.get("type") == "Const"]
        layer = self.pick(consts)
        data = layer.find("data") if layer is not None else None
        if data is None:
            return
        size = len(self.blob)
        name = self.pick(["offset", "size"])
        value = self.pick(
            [
                str(size),
                str(size + 1),
                str(max(size - 1, 0)),
                "0",
                str(2**63 - 1),
                str(2**40),
                str(int(self.rng.integers(0, size + 8))),
            ]
        )
        data.set(name, value)
        self.notes.append(f"Const {name}={value}")

    def chain(self):
        """Convert layers between a Const and its consumer."""
        consts = {x.get("id"): x for x in self.layers() if x.get("type") == "Const"}
        edges = [e for e in self.root.iter("edge") if e.get("from-layer") in consts]
        edge = self.pick(edges)
        if edge is None:
            return
        const = consts[edge.get("from-layer")]
        port = const.find("output/port")
        if port is None:
            return
        etype = const.find("data").get("element_type") if const.find("data") is not None else "i64"
        n = int(self.rng.choice([10, 500, 3000]))
        layers_el = self.root.find("layers")
        edges_el = self.root.find("edges")
        if layers_el is None or edges_el is None or edge.get("from-port") is None:
            return
        ids = [int(x.get("id")) for x in self.layers() if (x.get("id") or "").isdigit()]
        next_id = max(ids, default=0) + 1
        source = (edge.get("from-layer"), edge.get("from-port"))
        for k in range(n):
            layer = layers_el.makeelement(
                "layer",
                {"id": str(next_id + k), "name": f"cv{k}", "type": "Convert", "version": "opset1"},
            )
            data = layer.makeelement("data", {"destination_type": etype})
            layer.append(data)
            inp = layer.makeelement("input", {})
            p_in = copy.deepcopy(port)
            p_in.set("id", "0")
            p_in.attrib.pop("names", None)
            inp.append(p_in)
            layer.append(inp)
            out = layer.makeelement("output", {})
            p_out = copy.deepcopy(port)
            p_out.set("id", "1")
            p_out.attrib.pop("names", None)
            out.append(p_out)
            layer.append(out)
            layers_el.append(layer)
            e = edges_el.makeelement(
                "edge",
                {
                    "from-layer": source[0],
                    "from-port": source[1],
                    "to-layer": str(next_id + k),
                    "to-port": "0",
                },
            )
            edges_el.append(e)
            source = (str(next_id + k), "1")
        edge.set("from-layer", source[0])
        edge.set("from-port", source[1])
        self.notes.append(f"{n} Converts after Const {const.get('name')!r}")

    def rename_tag(self):
        e = self.pick(self.elements())
        if e is not None:
            old = e.tag
            e.tag = self.pick(
                [
                    "layer",
                    "port",
                    "data",
                    "edge",
                    "dim",
                    "input",
                    "output",
                    "x",
                    "layers",
                    "edges",
                    "net",
                ]
            )
            self.notes.append(f"<{old}> renamed <{e.tag}>")

    def text(self):
        e = self.pick(self.elements())
        if e is not None:
            e.text = self.value()
            self.notes.append(f"<{e.tag}> text {e.text[:20]!r}")

    def big_dims(self):
        """A Parameter or Const declaring a large but valid shape."""
        layers = [x for x in self.layers() if x.get("type") in ("Parameter", "Const")]
        layer = self.pick(layers)
        data = layer.find("data") if layer is not None else None
        if data is None:
            return
        value = self.pick(
            [
                "1,1,4294967296",
                "65536,65536",
                "1,1,100000,100000",
                "2,3,1..1000000000,1..1000000000",
                ",".join(["1"] * 18),
            ]
        )
        data.set("shape", value)
        self.notes.append(f"{layer.get('type')} shape={value}")

    def strip_ports(self):
        """A layer's <input> or <output> removed (a Parameter without an output port)."""
        groups = [g for layer in self.layers() for g in layer if g.tag in ("input", "output")]
        g = self.pick(groups)
        if g is not None:
            layer = g.getparent()
            layer.remove(g)
            self.notes.append(f"<{g.tag}> of {layer.get('type')} {layer.get('name')!r} removed")

    TREE = (
        "strip_ports",
        "delete",
        "duplicate",
        "reorder",
        "move",
        "attr_set",
        "attr_set",
        "attr_set",
        "attr_del",
        "flood",
        "dim",
        "dim",
        "edge",
        "edge",
        "edge_add",
        "const",
        "const",
        "chain",
        "rename_tag",
        "text",
        "big_dims",
    )


def _bytes_mutation(rng, data, notes, what):
    r = rng.random()
    if not data:
        return data
    if r < 0.35:
        cut = int(rng.integers(0, len(data)))
        notes.append(f"{what} truncated at {cut} of {len(data)}")
        return data[:cut]
    if r < 0.65:
        out = bytearray(data)
        for _ in range(int(rng.integers(1, 5))):
            out[int(rng.integers(len(out)))] = int(rng.integers(256))
        notes.append(f"{what} bytes changed")
        return bytes(out)
    if r < 0.85:
        pos = int(rng.integers(len(data)))
        junk = bytes(rng.integers(0, 256, int(rng.integers(1, 16))).astype(np.uint8))
        notes.append(f"{what} junk inserted at {pos}")
        return data[:pos] + junk + data[pos:]
    notes.append(f"{what} extended")
    return data + bytes(int(rng.integers(1, 64)))


_FLOOD_RE = re.compile(rb'flood_marker="(\d{1,6})"')


def make_case(seed, index, known_open=False):
    """(base name, xml bytes, bin bytes, notes) of mutant ``index`` of run ``seed``."""
    from lxml import etree

    rng = np.random.default_rng([seed, 1, index])
    paths = examples()
    path = paths[int(rng.integers(len(paths)))]
    xml, blob = _base(path)
    root = etree.fromstring(xml, etree.XMLParser(remove_blank_text=False))
    mutant = _Mutant(rng, root, blob)
    n = int(rng.choice([1, 1, 1, 1, 2, 2, 2, 3, 3, 5]))
    byte_level = []
    for _ in range(n):
        r = rng.random()
        if r < 0.12:
            byte_level.append("xml")
        elif r < 0.24:
            byte_level.append("bin")
        else:
            getattr(mutant, _Mutant.TREE[int(rng.integers(len(_Mutant.TREE)))])()
    data = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    data = _FLOOD_RE.sub(
        lambda m: " ".join(
            f'flood{i}="{i}"' for i in range(min(int(m.group(1)), 100_000))
        ).encode(),
        data,
    )
    for what in byte_level:
        if what == "xml":
            data = _bytes_mutation(rng, data, mutant.notes, "xml")
        else:
            blob = _bytes_mutation(rng, blob, mutant.notes, "bin") if rng.random() < 0.8 else b""
            if not blob:
                mutant.notes.append("bin emptied")
    return os.path.basename(path), data, blob, mutant.notes


def write_case(folder, stem, xml, blob):
    xml_path = os.path.join(folder, stem + ".xml")
    with open(xml_path, "wb") as f:
        f.write(xml)
    with open(os.path.join(folder, stem + ".bin"), "wb") as f:
        f.write(blob)
    return xml_path


# --------------------------------------------------------------------------
# running a mutant
# --------------------------------------------------------------------------

MAX_INPUT_ELEMENTS = 1 << 20
MAX_COMPARED = 32 << 20  # bytes of outputs compared across thread counts at most


def model_inputs(model, rng):
    """Seeded inputs for every model input, or None when one cannot be made
    (a dynamic rank, an element type numpy cannot hold, too large)."""
    feeds = []
    for info in model.inputs:
        if info.shape is None or info.dtype is None:
            return None
        shape = []
        for k, d in enumerate(info.shape):
            if d is None:
                lo, hi = info.bounds[k] if info.bounds else (0, None)
                lo = max(lo, 1)
                hi = lo + 8 if hi is None else min(hi, lo + 8)
                d = int(rng.integers(lo, hi + 1)) if hi >= lo else lo
            shape.append(d)
        if math.prod(shape) > MAX_INPUT_ELEMENTS:
            return None
        dtype = info.dtype
        if dtype.kind == "b":
            value = rng.random(shape) < 0.5
        elif dtype.kind in "iu":
            value = rng.integers(0, 5, size=shape).astype(dtype)
        else:
            value = rng.standard_normal(shape).astype(dtype)
        feeds.append(value)
    return feeds


def same_bits(first, second):
    """True if two lists of arrays hold the same dtypes, shapes and bytes
    (compared in place: no copy of a large output)."""
    if len(first) != len(second):
        return False
    for a, b in zip(first, second):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
        if not np.array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8)):
            return False
    return True


def run_ovpool(xml_path, seed, index, save=None):
    """(class, detail) of reading and running a mutant with ovpool.

    Classes: ok (read and ran, or read with layers ovpool does not run),
    ovpool-error (IRError naming the file), unnamed (an IRError without the
    file's name), foreign, memory, threads (bits differ across threads)."""
    import ovpool
    from ovpool import ir

    def classify_error(exc, when):
        message = str(exc)
        if not message.startswith(xml_path + ":"):
            return "unnamed", (f"{when}: {type(exc).__name__} without the file's name: {message}")[
                :600
            ]
        return "ovpool-error", f"{when}: {message[len(xml_path) :]}"[:300]

    try:
        model = ir.read_model(xml_path)
        model.describe()
        repr(model)
    except ovpool.OvpoolError as exc:
        return classify_error(exc, "read")
    except MemoryError as exc:
        return "memory", "read: MemoryError at " + where_raised(exc)
    except Exception as exc:
        return "foreign", f"read: {type(exc).__name__}: {exc} at {where_raised(exc)}"[:800]
    rng = np.random.default_rng([seed, 3, index])
    feeds = model_inputs(model, rng)
    if feeds is None:
        return "ok", "read; not called (inputs not made)"
    try:
        outputs = model(*feeds)
    except ovpool.OvpoolError as exc:
        return classify_error(exc, "call")
    except MemoryError as exc:
        return "memory", "call: MemoryError at " + where_raised(exc)
    except Exception as exc:
        return "foreign", f"call: {type(exc).__name__}: {exc} at {where_raised(exc)}"[:800]
    if sum(a.nbytes for a in outputs) > MAX_COMPARED:
        return "ok", "ran (too large to compare across threads)"
    try:
        for n in (1, 2, 7):
            ovpool.set_num_threads(n)
            if not same_bits(outputs, model(*feeds)):
                return "threads", f"outputs at {n} threads differ from the default's"
    except MemoryError as exc:
        return "memory", "call again: MemoryError at " + where_raised(exc)
    except ovpool.OvpoolError as exc:
        if out_of_memory(exc):  # the worker's address space, reported as ovpool should
            return classify_error(exc, "call again")
        return "rerun", f"call again: {type(exc).__name__}: {exc}"[:600]
    except Exception as exc:  # a call that worked once fails again
        return "rerun", f"call again: {type(exc).__name__}: {exc}"[:600]
    finally:
        ovpool.set_num_threads(None)
    if save is not None and sum(a.nbytes for a in feeds + outputs) < (4 << 20):
        arrays = {f"in{k}": a for k, a in enumerate(feeds)}
        arrays.update({f"out{k}": a for k, a in enumerate(outputs)})
        np.savez(save, **{k: _plain(v) for k, v in arrays.items()})
    return "ok", "ran"


def out_of_memory(exc):
    """True for ovpool's report of an allocation that failed or would pass the budget."""
    import ovpool

    message = str(exc)
    return (
        isinstance(exc, getattr(ovpool, "MemoryBudgetError", ()))
        or "out of memory" in message
        or "cannot allocate" in message
    )


def _plain(a):
    """bfloat16 arrays are stored as float32 (npz cannot hold ml_dtypes)."""
    return a.astype(np.float32) if a.dtype.name == "bfloat16" else a


def run_openvino(xml_path, saved=None):
    """(class, detail, comparison) of OpenVINO reading, compiling and (where
    ovpool ran the model, ``saved`` its .npz) running a mutant.

    Classes: ok, error (an exception from OpenVINO); comparison: None, "agree"
    or "differ: ..." with the largest difference."""
    import openvino as ov

    core = _core()
    try:
        model = core.read_model(xml_path)
    except Exception as exc:  # OpenVINO raises RuntimeError and others
        return "error", f"read_model: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}", None
    try:
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    except Exception as exc:
        return (
            "error",
            f"compile_model: {type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}",
            None,
        )
    if saved is None or not os.path.exists(saved):
        return "ok", "compiled", None
    data = np.load(saved)
    feeds = [data[f"in{k}"] for k in range(len(compiled.inputs)) if f"in{k}" in data.files]
    outs = [
        data[k]
        for k in sorted((k for k in data.files if k.startswith("out")), key=lambda k: int(k[3:]))
    ]
    if len(feeds) != len(compiled.inputs) or len(outs) != len(compiled.outputs):
        return "ok", "compiled", "differ: another number of inputs or outputs"
    try:
        request = compiled.create_infer_request()
        results = request.infer({k: v for k, v in enumerate(feeds)})
    except Exception as exc:
        first = (str(exc).splitlines() or [""])[0][:200]
        return "error", f"infer: {type(exc).__name__}: {first}", None
    worst = None
    for k, expected in enumerate(outs):
        got = np.asarray(results[compiled.outputs[k]])
        if got.shape != expected.shape:
            return "ok", "ran", f"differ: output {k} shape {got.shape} vs ovpool {expected.shape}"
        a, b = got.astype(np.float64), expected.astype(np.float64)
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        close = np.abs(a - b) <= 1e-5 * (1 + np.abs(b))
        if not (same | close).all():
            bad = ~(same | close)
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            worst = (
                f"differ: output {k} at {int(bad.sum())} of {bad.size} positions, first "
                f"{where}: OpenVINO {a[where]!r} vs ovpool {b[where]!r}"
            )
            break
    _ = ov
    return "ok", "ran", worst or "agree"


_CORE = []


def _core():
    if not _CORE:
        import openvino as ov

        _CORE.append(ov.Core())
    return _CORE[0]


def where_raised(exc):
    """The innermost frame, and the innermost one in ovpool if that is another."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "?"

    def show(f):
        return f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} ({f.name})"

    own = [f for f in frames if "/ovpool/" in f.filename or f.filename.endswith(".pxi")]
    if own and own[-1] is not frames[-1]:
        return f"{show(own[-1])} -> {show(frames[-1])}"
    return show(frames[-1])
