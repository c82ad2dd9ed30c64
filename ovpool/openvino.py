"""The OpenVINO extension: ovpool's kernels as operations inside OpenVINO graphs.

::

    import openvino as ov
    import ovpool.openvino as ovp

    core = ov.Core()
    ovp.register(core)                          # ovpool's ops + ONNX conversions
    model = ovp.read_model(core, "model.xml")   # IR: every pool layer on ovpool
    model = core.read_model("model.onnx")       # ONNX: pools on ovpool after register
    n = ovp.patch_model(model)                  # any in-memory ov.Model
    model = ov.convert_model(torch_module, example_input=x,
                             extension=ovp.pytorch_extensions())

Every operation is an ``openvino.Op`` generated from an entry of ovpool's own
opset in the layer table (:mod:`ovpool.layers`, version string ``"ovpool"``):
its attributes are the entry's schema, ``validate_and_infer_types`` is the
entry's ``infer`` and ``evaluate`` its ``run`` with the output tensors passed
as ``out=``. The type is ``DiscreteTypeInfo(name, "ovpool")``, never a stock
opset version: OpenVINO's CPU plugin matches stock ops by name and version
and would treat a Python op registered as ``("MaxPool", "opset8")`` as its
native twin (compile errors, segfaults with dynamic shapes).

=================  ==================================  =============================
op (``ovpool``)    semantics                           maps
=================  ==================================  =============================
AdaptiveAvgPool    AdaptiveAvgPool-8                   IR, torch adaptive_avg_poolNd,
                                                       ONNX GlobalAveragePool
AdaptiveMaxPool    AdaptiveMaxPool-8                   IR, torch adaptive_max_poolNd,
                                                       ONNX GlobalMaxPool
AvgPool            AvgPool-16 (OpenVINO attributes)    IR AvgPool-1/14/16,
                                                       torch avg_poolNd
MaxPool            MaxPool-14 (values and indices)     IR MaxPool-1/8/14,
                                                       torch max_poolNd
OnnxAveragePool    ONNX AveragePool-22                 ONNX AveragePool
OnnxMaxPool        ONNX MaxPool-22 (storage_order)     ONNX MaxPool
LpPool             ONNX LpPool-22                      ONNX LpPool
GlobalLpPool       ONNX GlobalLpPool-22                ONNX GlobalLpPool
MaxUnpool          ONNX MaxUnpool-22                   ONNX MaxUnpool
=================  ==================================  =============================

A model holding these ops (saved with ``ov.save_model`` or exported with
``CompiledModel.export_model``) needs :func:`register` on the Core that reads
or imports it: without it OpenVINO reports ``unsupported opset: ovpool``.
ovpool's own IR runtime (:mod:`ovpool.ir`) runs such files without OpenVINO.

Inside ``evaluate``: tensors are zero-copy numpy views of the plugin's
buffers; OpenVINO's CPU plugin hands f16 and f64 over as f32 and i64 inputs
as i32, and bf16 as raw bits behind a float16 view (decoded here, results
rounded to nearest even). ``evaluate`` keeps no per-call state on the op, so
several streams and infer requests may run it at once; the kernels release
the GIL. See :func:`set_num_threads` for the thread count used there.
"""

from __future__ import annotations

import functools
import os
import tempfile
import threading
import weakref

import numpy as np

from . import ir as _ir
from . import layers as _layers
from ._threads import get_num_threads as _default_threads
from .errors import OvpoolError, OvpoolValueError
from .layers import OVPOOL_OPSET, TensorType


class OpenVINONotInstalled(OvpoolError, ImportError):
    """``import ovpool.openvino`` without OpenVINO installed."""


try:
    import openvino as ov
except ImportError as _exc:
    raise OpenVINONotInstalled(
        "ovpool.openvino needs OpenVINO, which could not be imported "
        f"({_exc}). Install it with: pip install \"ovpool[openvino]\"",
        name="openvino") from _exc

__all__ = [
    "register",
    "extensions",
    "read_model",
    "patch_model",
    "pytorch_extensions",
    "set_num_threads",
    "get_num_threads",
    "OP_CLASSES",
    "PoolOp",
    "OpenVINONotInstalled",
]

# The stock pool layers that ovpool replaces, by (type, version as in IR and
# in Node.get_type_info().version_id).
STOCK_LAYERS = (
    ("AdaptiveAvgPool", "opset8"),
    ("AdaptiveMaxPool", "opset8"),
    ("AvgPool", "opset1"), ("AvgPool", "opset14"), ("AvgPool", "opset16"),
    ("MaxPool", "opset1"), ("MaxPool", "opset8"), ("MaxPool", "opset14"),
)

_BF16 = ov.Type.bf16
_F16 = np.dtype(np.float16)
_OV_TYPES = {name: getattr(ov.Type, name) for name in (
    "boolean", "bf16", "f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32",
    "u64")}
_INDEX_DTYPES = {np.dtype(np.int32): "i32", np.dtype(np.int64): "i64"}


# --------------------------------------------------------------------------
# Threads inside evaluate
# --------------------------------------------------------------------------

_num_threads = None
_active = 0                       # evaluate calls running right now (all ops)
_active_lock = threading.Lock()


def set_num_threads(n):
    """Threads of one ovpool kernel call inside OpenVINO (None: automatic).

    Automatic: at most the CPUs the calling thread may run on. OpenVINO's
    CPU plugin pins the thread that runs a stream (and so ``evaluate``) to
    that stream's cores; an OpenMP team created there inherits the pin, so
    more threads than those cores share them and spin against each other
    (measured 4-6x slower, the slowdown that ``OMP_WAIT_POLICY=PASSIVE``
    only softens). When the thread is not pinned, the CPUs ovpool may use
    (``ovpool.get_num_threads()``, ``OVPOOL_NUM_THREADS``) are shared
    between the ovpool ops running at that moment (several streams or
    infer requests). ``OVPOOL_OPENVINO_NUM_THREADS`` in the environment
    (read at import) sets a fixed count too.
    """
    global _num_threads
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise OvpoolValueError(f"set_num_threads(n) needs an int >= 1 or None, got {n!r}")
    _num_threads = n


def get_num_threads():
    """The fixed thread count (:func:`set_num_threads`, or
    ``OVPOOL_OPENVINO_NUM_THREADS`` as read when ``ovpool.openvino`` was
    imported), or None (automatic)."""
    return _num_threads


def _env_threads():
    env = os.environ.get("OVPOOL_OPENVINO_NUM_THREADS", "").strip()
    if not env:
        return None
    try:
        value = int(env)
    except ValueError:
        value = 0
    if value < 1:
        raise OvpoolValueError(
            f"OVPOOL_OPENVINO_NUM_THREADS must be a positive integer, got {env!r}")
    return value


def _thread_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return None


_num_threads = _env_threads()

# Read here, outside OpenVINO's pinned threads (ovpool caches its CPU count
# on first use; a first use inside evaluate would see one pinned core).
_PROCESS_CPUS = _thread_cpus() or _default_threads()
_default_threads()


def _threads_for_call():
    """``(threads, counted)`` for one kernel call inside evaluate; ``counted``:
    the call was counted as running (call :func:`_leave` after it)."""
    global _active
    if _num_threads is not None:
        return _num_threads, False
    allowed = _thread_cpus()
    if allowed == 1:                                 # pinned to one core by OpenVINO
        return 1, False
    n = _default_threads()
    if allowed is not None and allowed < _PROCESS_CPUS:     # pinned to some cores
        return max(1, min(n, allowed)), False
    with _active_lock:
        _active += 1
        concurrent = _active
    return max(1, n // concurrent), True


def _leave():
    global _active
    with _active_lock:
        _active -= 1


# --------------------------------------------------------------------------
# Types and shapes between OpenVINO and the layer table
# --------------------------------------------------------------------------

def _shape_of(pshape):
    """ov.PartialShape -> tuple with None for a dynamic dim, or None (dynamic rank)."""
    if pshape.rank.is_dynamic:
        return None
    return tuple(d.get_length() if d.is_static else None for d in pshape)


def _pshape(shape):
    if shape is None:
        return ov.PartialShape.dynamic()
    return ov.PartialShape([ov.Dimension() if d is None else ov.Dimension(d) for d in shape])


def _ov_type(etype):
    return _OV_TYPES.get(etype, ov.Type.dynamic)


def _constant_value(output):
    """The data of a Constant feeding ``output``'s consumer, else None."""
    node = output.get_node()
    if node.get_type_info().name == "Constant" and hasattr(node, "get_data"):
        return node.get_data()
    return None


def _node_types(entry, outputs):
    """TensorTypes and constant values of a node's inputs (``ov.Output``\\ s).
    A dynamic element type (PyTorch frontend, mid-conversion) is checked as
    f32 data / i64 integers; the caller keeps the output dynamic."""
    types, values = [], []
    for k, out in enumerate(outputs):
        etype = out.get_element_type().get_type_name()
        if etype == "dynamic":
            etype = "f32" if k == 0 else "i64"
        types.append(TensorType(_shape_of(out.get_partial_shape()), etype))
        values.append(_constant_value(out) if k in entry.value_inputs else None)
    return types, values


def _spatial_count(entry, attrs):
    for a in entry.attrs:
        if a.kind == "ints" and a.per_axis == 1 and a.required:     # kernel, kernel_shape
            return len(attrs[a.name])
    return None


def _materialize(entry, attrs, n_spatial=None):
    """Per-axis list attributes left empty ("the fill value on every axis")
    spelled out: OpenVINO's attribute visitor cannot carry an empty list."""
    n = _spatial_count(entry, attrs) or n_spatial
    if n is None:
        return dict(attrs)
    result = dict(attrs)
    for a in entry.attrs:
        if a.kind == "ints" and a.per_axis and not result.get(a.name):
            result[a.name] = [a.fill] * (n * a.per_axis)
    return result


def _freeze(attrs):
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in attrs.items())


# --------------------------------------------------------------------------
# bf16: OpenVINO hands bf16 tensors over as raw bits behind a float16 view
# --------------------------------------------------------------------------

def _bf16_to_f32(view):
    bits = np.ascontiguousarray(view).view(np.uint16)
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _f32_to_bf16_bits(values):
    """float32 -> bf16 bits (uint16), round to nearest even; NaN stays NaN."""
    values = np.ascontiguousarray(values, dtype=np.float32)
    u = values.view(np.uint32)
    with np.errstate(over="ignore"):
        bits = ((u + (np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1)))) >> 16).astype(np.uint16)
    nan = np.isnan(values)
    if nan.any():
        bits[nan] = ((u[nan] >> 16) | np.uint32(0x40)).astype(np.uint16)
    return bits


# --------------------------------------------------------------------------
# The ops
# --------------------------------------------------------------------------

_types_cache = {}
_TYPES_CACHE_SIZE = 512


def _output_types(entry, attrs, attrs_key, arrays):
    """``(entry.infer(...), numpy dtypes)`` for concrete arrays, memoised
    (evaluate runs once per inference)."""
    key = [entry.key, attrs_key]
    for k, a in enumerate(arrays):
        key.append(a.shape)
        key.append(a.dtype.num)
        if k in entry.value_inputs:
            key.append(tuple(a.reshape(-1).tolist()))
    key = tuple(key)
    types = _types_cache.get(key)
    if types is None:
        tensor_types = [TensorType(a.shape, _layers.element_type_of(a.dtype)) for a in arrays]
        value_list = [arrays[k] if k in entry.value_inputs else None for k in range(len(arrays))]
        types = entry.infer(tensor_types, attrs, value_list)
        types = [(t, _layers.numpy_dtype(t.etype)) for t in types]
        if len(_types_cache) >= _TYPES_CACHE_SIZE:
            _types_cache.clear()
        _types_cache[key] = types
    return types


class PoolOp(ov.Op):
    """Base of the generated ops: one subclass per entry of ovpool's opset.

    ``Cls(inputs, attrs)`` or ``Cls(inputs, **attrs)``: ``inputs`` a list of
    ``ov.Output`` (or nodes), ``attrs`` typed attributes with their IR names
    (``exclude-pad``) or Python names (``exclude_pad``), validated by the
    layer table. ``Cls()`` (no arguments) is how OpenVINO's readers build it.
    The attributes are read-only after construction: ``evaluate`` relies on
    it when several streams call it at once.
    """

    entry = None                  # the layer table entry
    class_type_info = None

    def __init__(self, inputs=None, attrs=None, **kwargs):
        entry = type(self).entry
        if inputs is not None:
            inputs = [i.output(0) if isinstance(i, ov.Node) else i for i in inputs]
        if attrs is None and not kwargs and not inputs:
            self._filled = False
            self._set(entry.defaults())          # the reader's visit_attributes fills them
        else:
            given = dict(attrs or {})
            given.update(kwargs)
            self._filled = True
            self._set(entry.attributes(**given))
        super().__init__(self, inputs)           # validates when inputs are given

    def _set(self, attrs):
        entry = type(self).entry
        self._attrs = _materialize(entry, attrs)
        self._attrs_key = _freeze(self._attrs)

    @property
    def attributes(self):
        """A copy of the typed attributes (IR names)."""
        return {k: list(v) if isinstance(v, list) else v for k, v in self._attrs.items()}

    def get_type_info(self):
        return type(self).class_type_info

    def visit_attributes(self, visitor):
        entry = type(self).entry
        attrs = self._attrs
        if not self._filled:                       # read_model: defaults of the input's rank
            shape = _shape_of(self.get_input_partial_shape(0)) if self.get_input_size() else None
            n = len(shape) - 2 if shape is not None and len(shape) >= 3 else 2
            attrs = _materialize(entry, entry.defaults(n), n)
        d = {k: list(v) if isinstance(v, list) else v for k, v in attrs.items()}
        visitor.on_attributes(d)                   # save: reads d; read: fills known keys
        self._set(entry.attributes(**d))
        self._filled = True
        return True

    def clone_with_new_inputs(self, new_inputs):
        return type(self)(list(new_inputs), self._attrs)

    def validate_and_infer_types(self):
        entry = type(self).entry
        outputs = [self.input_value(k) for k in range(self.get_input_size())]
        types, values = _node_types(entry, outputs)
        dynamic = self.get_input_element_type(0).get_type_name() == "dynamic"
        try:
            result = entry.infer(types, self._attrs, values)
        except OvpoolError as exc:
            raise type(exc)(f"ovpool {entry.type} ({self.get_friendly_name()}): {exc}") from None
        for k, t in enumerate(result):
            etype = "dynamic" if dynamic and k == 0 else t.etype
            self.set_output_type(k, _ov_type(etype), _pshape(t.shape))

    def has_evaluate(self):
        return True

    def _indices_used(self):
        """Whether the compiled graph reads output 1 (a max pool's indices).

        Looked up at the first evaluate, when the graph is final, and kept:
        every caller computes the same answer, so concurrent first calls are
        harmless. Computing MaxPool indices costs ~20x the values alone.
        """
        used = self.__dict__.get("_indices_used_cache")
        if used is None:
            used = len(self.output(1).get_target_inputs()) > 0
            self.__dict__["_indices_used_cache"] = used
        return used

    def evaluate(self, outputs, inputs):
        entry, attrs, attrs_key = type(self).entry, self._attrs, self._attrs_key
        arrays = [tensor.data for tensor in inputs]
        for k, array in enumerate(arrays):
            # bf16 arrives as its raw bits behind a float16 view (true f16 arrives as f32)
            if array.dtype == _F16 and inputs[k].get_element_type() == _BF16:
                arrays[k] = _bf16_to_f32(array)
        views = [tensor.data for tensor in outputs]
        if len(views) > 1 and "index_element_type" in attrs:
            # the indices dtype OpenVINO allocated (it may narrow i64 to i32)
            actual = _INDEX_DTYPES.get(views[1].dtype)
            if actual is not None and actual != attrs["index_element_type"]:
                attrs = dict(attrs, index_element_type=actual)
                attrs_key = _freeze(attrs)
        outs, bf16 = [], ()
        for k, (t, dtype) in enumerate(_output_types(entry, attrs, attrs_key, arrays)):
            view = views[k]
            if view.shape != t.shape:
                outputs[k].set_shape(list(t.shape))      # the plugin may pass Shape{0}
                view = views[k] = outputs[k].data
            if view.dtype == dtype:
                outs.append(view)
            else:
                outs.append(None)
                if view.dtype == _F16 and outputs[k].get_element_type() == _BF16:
                    bf16 += (k,)
        values_only = len(outputs) > 1 and not self._indices_used()
        n_threads, counted = _threads_for_call()
        try:
            results = entry.run(arrays, attrs, out=outs, num_threads=n_threads,
                                values_only=values_only)
        finally:
            if counted:
                _leave()
        for k, result in enumerate(results):
            if result is None or result is outs[k]:      # None: indices nobody reads
                continue
            if k in bf16:
                views[k].view(np.uint16)[...] = _f32_to_bf16_bits(result).reshape(views[k].shape)
            else:
                views[k][...] = result
        return True


def _op_class(entry):
    doc = (f"ovpool's {entry.type} ({entry.doc}) as an ``openvino.Op``, type "
           f"``{entry.type}`` in opset ``{OVPOOL_OPSET}``.\n\nAttributes: "
           + ", ".join(f"``{a.name}``" for a in entry.attrs) + ".")
    return type(entry.type, (PoolOp,), {
        "entry": entry,
        "class_type_info": ov.DiscreteTypeInfo(entry.type, OVPOOL_OPSET),
        "__doc__": doc,
        "__module__": __name__,
        "__qualname__": entry.type,
    })


OP_CLASSES = {entry.type: _op_class(entry)
              for (type_, version), entry in _layers.LAYERS.items() if version == OVPOOL_OPSET}
"""Op class per type of ovpool's opset (also module attributes: ``MaxPool``, ...)."""
globals().update(OP_CLASSES)
__all__ += sorted(OP_CLASSES)


def make_op(type_, inputs, **attrs):
    """An ovpool op node: ``make_op("MaxPool", [x], kernel=[3, 3], strides=[2, 2])``."""
    try:
        cls = OP_CLASSES[type_]
    except KeyError:
        raise OvpoolValueError(f"ovpool's opset has no op {type_!r}; it has "
                               f"{', '.join(sorted(OP_CLASSES))}") from None
    return cls(inputs, attrs)


# --------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------

_registered = weakref.WeakSet()
_register_lock = threading.Lock()


def extensions():
    """The ``ov.OpExtension`` of every ovpool op plus the ONNX frontend's
    ``ConversionExtension``\\ s (what :func:`register` adds to a Core)."""
    return [ov.OpExtension(cls) for cls in OP_CLASSES.values()] + _onnx_extensions()


def register(core):
    """Add ovpool's ops and ONNX conversions to ``core`` (an ``ov.Core``).

    Needed on every Core that reads a model with ovpool ops (IR saved by
    ``ov.save_model``, blobs from ``export_model``) and on the Core whose
    ``read_model`` should map ONNX pools onto ovpool. Idempotent per Core.
    Returns ``core``.
    """
    with _register_lock:
        if core in _registered:
            return core
        core.add_extension(extensions())
        _registered.add(core)
    return core


# --------------------------------------------------------------------------
# Stock layers -> ovpool ops
# --------------------------------------------------------------------------

def _ovpool_attrs(stock, attrs):
    """Typed attributes of a stock layer (e.g. MaxPool-1) -> those of its ovpool op."""
    target = _layers.get(stock.type, OVPOOL_OPSET)
    given = {k: v for k, v in attrs.items() if k in target.attr_names}
    return target, _materialize(target, target.attributes(**given))


def _supported(target, attrs, types, values):
    try:
        target.infer(types, attrs, values)
    except _layers.UnsupportedLayer:
        return False
    return True


def patch_model(model):
    """Replace every native pool node of ``model`` (an ``ov.Model``) by its ovpool op.

    AdaptiveAvgPool-8, AdaptiveMaxPool-8, AvgPool-1/14/16 and MaxPool-1/8/14
    become ovpool's AdaptiveAvgPool, AdaptiveMaxPool, AvgPool and MaxPool with
    the same attributes; consumers, tensor names and friendly names move to
    the new node. A node whose inputs ovpool's kernels do not take (e.g.
    MaxPool on i32 data) stays native. Nodes inside sub-graphs (If, Loop)
    are not visited. Returns how many nodes were replaced; the model is
    revalidated.
    """
    count = 0
    for node in model.get_ordered_ops():
        info = node.get_type_info()
        key = (info.name, info.version_id)
        if key not in STOCK_LAYERS:
            continue
        stock = _layers.get(*key)
        node_attrs = {k: v for k, v in node.get_attributes().items() if k in stock.attr_names}
        target, attrs = _ovpool_attrs(stock, stock.attributes(**node_attrs))
        inputs = [node.input_value(k) for k in range(node.get_input_size())]
        types, values = _node_types(target, inputs)
        if not _supported(target, attrs, types, values):
            continue
        new = OP_CLASSES[target.type](inputs, attrs)
        new.set_friendly_name(node.get_friendly_name())
        for k in range(node.get_output_size()):
            node.output(k).replace(new.output(k))
        count += 1
    if count:
        model.validate_nodes_and_infer_types()
    return count


class _TreeReader(_ir._Reader):
    """ovpool's IR reader, keeping the parsed lxml tree."""

    root = None

    def _parse(self, data):
        self.root = super()._parse(data)
        return self.root


def read_model(core, xml_path, bin_path=None):
    """Read a stock OpenVINO IR with every pool layer on ovpool's ops.

    The file is first read and validated by ovpool's own IR reader
    (:func:`ovpool.ir.read_model`: hostile and malformed files raise
    :class:`~ovpool.IRError` before OpenVINO sees them). Each pool layer
    (AdaptiveAvgPool-8, AdaptiveMaxPool-8, AvgPool-1/14/16, MaxPool-1/8/14)
    is then rewritten to ovpool's opset (version ``"ovpool"``, attributes
    completed: AvgPool-1/-14 get ``dilations``, MaxPool-1 ``dilations``,
    ``axis``, ``index_element_type`` and an indices output port; pads that
    ``save_model`` wrote as 0 for a non-explicit ``auto_pad`` are recomputed
    by the op) and the result is read by ``core.read_model`` with the
    original weights. Registers ovpool on ``core``. Returns an ``ov.Model``.
    """
    register(core)
    reader = _TreeReader(xml_path, bin_path)
    model = reader.read()
    root = reader.root
    (layers_element,) = [c for c in root if isinstance(c.tag, str) and c.tag == "layers"]
    elements = [c for c in layers_element if isinstance(c.tag, str) and c.tag == "layer"]
    for element, layer in zip(elements, model.layers):
        entry = layer.entry
        if entry is None or layer.reason is not None or entry.key not in STOCK_LAYERS:
            continue
        target, attrs = _ovpool_attrs(entry, layer.attributes)
        types = [TensorType(p.shape, p.precision or "f32") for p in layer.in_ports]
        if not _supported(target, attrs, types, [None] * len(types)):
            continue
        _rewrite_layer(element, layer, target, attrs)
    from lxml import etree

    xml_bytes = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    with tempfile.TemporaryDirectory(prefix="ovpool-") as tmp:
        path = os.path.join(tmp, "model.xml")
        with open(path, "wb") as f:
            f.write(xml_bytes)
        if os.path.exists(reader.bin_path):
            return core.read_model(path, reader.bin_path)
        return core.read_model(xml_bytes, ov.Tensor(np.empty(0, np.uint8)))


def _rewrite_layer(element, layer, target, attrs):
    element.set("version", OVPOOL_OPSET)
    datas = [c for c in element if isinstance(c.tag, str) and c.tag == "data"]
    if target.attrs:
        if datas:
            data = datas[0]
            data.attrib.clear()
        else:
            data = element.makeelement("data", {})
            element.insert(0, data)
        for name, text in target.format_attributes(attrs).items():
            data.set(name, text)
    n_out = len(layer.out_ports)
    if n_out < len(target.outputs) and n_out == 1:
        # MaxPool-1 -> ovpool MaxPool: declare the indices output (unused)
        (outputs,) = [c for c in element if isinstance(c.tag, str) and c.tag == "output"]
        first = [c for c in outputs if isinstance(c.tag, str) and c.tag == "port"][0]
        ids = [p.id for p in layer.in_ports + layer.out_ports]
        port = outputs.makeelement("port", {"id": str(max(ids) + 1), "precision": "I64"})
        for dim in first:
            if isinstance(dim.tag, str) and dim.tag == "dim":
                copy = port.makeelement("dim", {})
                copy.text = dim.text
                port.append(copy)
        outputs.append(port)


# --------------------------------------------------------------------------
# ONNX frontend
# --------------------------------------------------------------------------

def _onnx_attrs(node, entry, skip=()):
    given = {}
    for a in entry.attrs:
        if a.name in skip or not node.has_attribute(a.name):
            continue
        value = node.get_attribute(a.name)
        if a.name == "auto_pad" and value in ("", b""):
            continue
        given[a.name] = value
    return given


def _onnx_pool(type_, node):
    entry = _layers.get(type_, OVPOOL_OPSET)
    attrs = _onnx_attrs(node, entry, skip=("indices_relative_to",))
    inputs = [node.get_input(k) for k in range(node.get_input_size())]
    return OP_CLASSES[type_](inputs, attrs).outputs()


def _onnx_global(adaptive, node):
    x = node.get_input(0)
    shape = _shape_of(x.get_partial_shape())
    if shape is None:
        kind = "GlobalAveragePool" if adaptive == "AdaptiveAvgPool" else "GlobalMaxPool"
        raise OvpoolValueError(f"ovpool: {kind} needs an input of known rank")
    import openvino.opset8 as opset

    ones = opset.constant(np.ones(len(shape) - 2, dtype=np.int64))
    if adaptive == "AdaptiveMaxPool":
        return OP_CLASSES[adaptive]([x, ones.output(0)], index_element_type="i64").outputs()[:1]
    return OP_CLASSES[adaptive]([x, ones.output(0)]).outputs()


def _onnx_extensions():
    from openvino.frontend.onnx import ConversionExtension

    table = {
        "AveragePool": functools.partial(_onnx_pool, "OnnxAveragePool"),
        "MaxPool": functools.partial(_onnx_pool, "OnnxMaxPool"),
        "LpPool": functools.partial(_onnx_pool, "LpPool"),
        "GlobalLpPool": functools.partial(_onnx_pool, "GlobalLpPool"),
        "MaxUnpool": functools.partial(_onnx_pool, "MaxUnpool"),
        "GlobalAveragePool": functools.partial(_onnx_global, "AdaptiveAvgPool"),
        "GlobalMaxPool": functools.partial(_onnx_global, "AdaptiveMaxPool"),
    }
    return [ConversionExtension(name, fn) for name, fn in table.items()]


# --------------------------------------------------------------------------
# PyTorch frontend
# --------------------------------------------------------------------------

def _pt_ints(ctx, index, n, default=None, name="argument"):
    value = ctx.get_values_from_const_input(index, None) if index < ctx.get_input_size() else None
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        return default
    if isinstance(value, (list, tuple)):
        value = [int(v) for v in value]
    else:
        value = [int(value)]
    if len(value) == 1:
        value = value * n
    if len(value) != n:
        raise OvpoolValueError(f"ovpool: {name}={value} does not have {n} entries")
    return value


def _pt_flag(ctx, index, default):
    if index >= ctx.get_input_size():
        return default
    value = ctx.get_values_from_const_input(index, default)
    return default if value is None else bool(value)


def _pt_batched(x, n):
    """torch's unbatched inputs (C, *spatial): add N = 1 (and remove it after)."""
    shape = _shape_of(x.get_partial_shape())
    if shape is not None and len(shape) == n + 1:
        import openvino.opset8 as opset

        return opset.unsqueeze(x, opset.constant(np.array([0], np.int64))).output(0), True
    return x, False


def _pt_unbatch(outputs, unbatched):
    if not unbatched:
        return list(outputs)
    import openvino.opset8 as opset

    axis = opset.constant(np.array([0], np.int64))
    return [opset.squeeze(o, axis).output(0) for o in outputs]


def _pt_max_pool(n, with_indices, ctx):
    kernel = _pt_ints(ctx, 1, n, name="kernel_size")
    attrs = dict(kernel=kernel,
                 strides=_pt_ints(ctx, 2, n, kernel, "stride"),
                 pads_begin=_pt_ints(ctx, 3, n, [0] * n, "padding"),
                 dilations=_pt_ints(ctx, 4, n, [1] * n, "dilation"),
                 rounding_type="ceil_torch" if _pt_flag(ctx, 5, False) else "floor",
                 auto_pad="explicit", index_element_type="i64", axis=2)
    attrs["pads_end"] = attrs["pads_begin"]
    x, unbatched = _pt_batched(ctx.get_input(0), n)
    outputs = MaxPool([x], attrs).outputs()        # noqa: F821 (generated above)
    return _pt_unbatch(outputs if with_indices else outputs[:1], unbatched)


def _pt_avg_pool(n, ctx):
    if ctx.get_input_size() > 6 and ctx.get_values_from_const_input(6, None) is not None:
        raise OvpoolValueError(
            "ovpool: avg_pool with divisor_override is not supported (OpenVINO has no such "
            "attribute); convert this module without ovpool's extensions")
    kernel = _pt_ints(ctx, 1, n, name="kernel_size")
    padding = _pt_ints(ctx, 3, n, [0] * n, "padding")
    attrs = {"kernel": kernel, "strides": _pt_ints(ctx, 2, n, kernel, "stride"),
             "pads_begin": padding, "pads_end": padding, "dilations": [1] * n,
             "exclude-pad": not _pt_flag(ctx, 5, True),
             "rounding_type": "ceil_torch" if _pt_flag(ctx, 4, False) else "floor",
             "auto_pad": "explicit"}
    x, unbatched = _pt_batched(ctx.get_input(0), n)
    return _pt_unbatch(AvgPool([x], attrs).outputs(), unbatched)   # noqa: F821


def _pt_adaptive(n, kind, ctx):
    x, unbatched = _pt_batched(ctx.get_input(0), n)
    size = ctx.get_input(1)
    if kind == "max":
        outputs = AdaptiveMaxPool([x, size], index_element_type="i64").outputs()  # noqa: F821
    else:
        outputs = AdaptiveAvgPool([x, size]).outputs()                            # noqa: F821
    return _pt_unbatch(outputs, unbatched)


PYTORCH_OPS = tuple(
    f"aten::{name}{n}d{suffix}"
    for n in (1, 2, 3)
    for name, suffix in (("max_pool", ""), ("max_pool", "_with_indices"), ("avg_pool", ""),
                         ("adaptive_avg_pool", ""), ("adaptive_max_pool", "")))
"""The TorchScript ops :func:`pytorch_extensions` converts."""


def pytorch_extensions():
    """Conversion extensions for ``ov.convert_model(module, example_input=...,
    extension=pytorch_extensions())``: aten max_poolNd (and
    ``_with_indices``), avg_poolNd, adaptive_avg_poolNd and
    adaptive_max_poolNd, N = 1, 2, 3, become ovpool ops that match PyTorch
    (ceil_mode = ``ceil_torch``, count_include_pad's divisor as torch's,
    max indices per (n, c) plane, NaN propagated, unbatched inputs).
    ``divisor_override`` is refused with a clear error. A model converted
    with them needs :func:`register` on the Core that compiles a saved copy.
    """
    from openvino.frontend.pytorch import ConversionExtension

    result = []
    for op in PYTORCH_OPS:
        name = op[len("aten::"):]
        n = int(name[name.index("pool") + 4])          # max_pool2d_with_indices -> 2
        if name.startswith("max_pool"):
            fn = functools.partial(_pt_max_pool, n, name.endswith("_with_indices"))
        elif name.startswith("avg_pool"):
            fn = functools.partial(_pt_avg_pool, n)
        elif name.startswith("adaptive_avg"):
            fn = functools.partial(_pt_adaptive, n, "avg")
        else:
            fn = functools.partial(_pt_adaptive, n, "max")
        result.append(ConversionExtension(op, fn))
    return result
