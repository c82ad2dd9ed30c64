"""ovpool inside OpenVINO: the extension library and a thin Python layer over it.

ovpool's ops live in a C++ OpenVINO extension library,
``libovpool_openvino.so``, which the wheel carries (built against the
OpenVINO release the ``openvino`` extra installs; ``python -m ovpool.openvino
build`` builds it for another). Any OpenVINO consumer loads it: this
module, ``core.add_extension(path)`` from any Python or C++ program,
``benchmark_app -extensions path``, ``ovc --extension path``,
``ov.convert_model(..., extension=path)`` and OpenVINO Model Server's CPU
extensions. This module only finds the library and rewrites graphs::

    import openvino as ov
    import ovpool.openvino as ovp

    core = ovp.register(ov.Core())  # ovpool's ops + ONNX conversions
    model = ovp.read_model(core, "model.xml")  # IR: the pools where ovpool wins or is exact
    n = ovp.patch_model(model)  # the same for any in-memory ov.Model
    model = core.read_model("model.onnx")  # ONNX: every pool on ovpool after register
    model = ov.convert_model(torch_module, example_input=x, extension=ovp.pytorch_extensions())

The library's ops form the opset ``"ovpool"``: ``AdaptiveAvgPool``,
``AdaptiveMaxPool``, ``AvgPool`` and ``MaxPool`` (OpenVINO's attributes and
specification) and ``OnnxAveragePool``, ``OnnxMaxPool``, ``LpPool``,
``GlobalLpPool`` and ``MaxUnpool`` (ONNX's), with the type names, attributes
and ports of the layer table (:mod:`ovpool.layers`). A model holding them
needs the library on the Core that reads it or imports its blob.

Which nodes :func:`patch_model` and :func:`read_model` move (``policy``):

* ``"default"``: a node moves where native OpenVINO deviates from the
  specification (:data:`DEVIATIONS`) or where ovpool is faster with the
  layout change counted (OpenVINO runs an extension op in plain NCHW and
  reorders its blocked tensors around it): MaxPool with its indices read,
  every AdaptiveMaxPool, adaptive averages whose bins do not tile. Other
  nodes stay native (see :func:`patch_plan` for each node's reason).
* ``"all"``: every pool node ovpool's kernels take.
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from .. import _opset, _spec
from .. import ir as _ir
from .. import layers as _layers
from ..errors import OvpoolError, OvpoolValueError
from ..layers import OVPOOL_OPSET, TensorType
from ._library import BUILD_COMMAND, ENV_VAR, ExtensionError, build, extension_path, is_current


class OpenVINONotInstalled(OvpoolError, ImportError):
    """``import ovpool.openvino`` without OpenVINO installed."""


try:
    import openvino as ov
except ImportError as _exc:
    raise OpenVINONotInstalled(
        "ovpool.openvino needs OpenVINO, which could not be imported "
        f'({_exc}). Install it with: pip install "ovpool[openvino]"',
        name="openvino",
    ) from _exc

__all__ = [
    "register",
    "read_model",
    "patch_model",
    "patch_plan",
    "make_op",
    "pytorch_extensions",
    "conversion_policy",
    "extension_path",
    "build",
    "is_current",
    "info",
    "Decision",
    "ExtensionError",
    "OpenVINONotInstalled",
    "OP_TYPES",
    "STOCK_LAYERS",
    "PYTORCH_OPS",
    "POLICIES",
    "DEVIATIONS",
    "BUILD_COMMAND",
    "ENV_VAR",
]

OP_TYPES = tuple(sorted(t for (t, v) in _layers.LAYERS if v == OVPOOL_OPSET))
"""The op types of the library's opset ``"ovpool"``."""

# The stock pool layers that ovpool can replace, by (type, version as in IR and
# in Node.get_type_info().version_id): the op schema's stock versions.
STOCK_LAYERS = tuple((op.type, v.version) for op in _opset.SCHEMA.ops for v in op.stock)

# (name, suffix) of the ATen pools: aten::{name}{n}d{suffix}; torch.export
# also names the adaptive average's decomposition _adaptive_avg_pool
_ATEN_POOLS = (
    ("max_pool", ""),
    ("max_pool", "_with_indices"),
    ("avg_pool", ""),
    ("adaptive_avg_pool", ""),
    ("adaptive_max_pool", ""),
)
PYTORCH_OPS = tuple(
    f"aten::{name}{n}d{suffix}" for n in (1, 2, 3) for name, suffix in _ATEN_POOLS
) + tuple(
    f"aten.{name}{n}d{suffix}.default"
    for n in (1, 2, 3)
    for name, suffix in (*_ATEN_POOLS, ("_adaptive_avg_pool", ""))
)
"""The ops the library's PyTorch conversions take: TorchScript's names
(``ov.convert_model(module, example_input=x)``) and torch.export's FX names
(``ov.convert_model(exported_program)``), before and after ATen's
decompositions."""

POLICIES = ("default", "all")

DEVIATIONS = {
    "avg_pool_include_pad_ceil": (
        "AvgPool counting pads with ceil rounding: native OpenVINO divides an edge window "
        "that runs past the declared pads by the full kernel (PyTorch, ONNX Runtime and the "
        "specification: by its taps inside input + pads)"
    ),
    "output_shape": (
        "native OpenVINO's output shape differs from the specification's (same_upper / "
        "same_lower with ceil rounding adds a window beyond ceil(n / s))"
    ),
    "adaptive_float_bins": (
        "AdaptiveAvgPool with In * Out > 2**24: native OpenVINO computes bin borders in "
        "float32 and misplaces some"
    ),
    "adaptive_max_pool": (
        "AdaptiveMaxPool: native OpenVINO ignores a NaN unless it comes first in its bin and "
        "cannot compile int64 indices"
    ),
    "window_numbers": (
        f"a kernel, stride, dilation or pad beyond {_spec.NATIVE_LARGEST_WINDOW}: native "
        "OpenVINO's CPU plugin crashes "
        "on a stride of 2**32, stalls on a kernel of 2**31 and cannot compile 2**32; ovpool "
        "clips its windows to the input"
    ),
}
"""Where native OpenVINO (CPU, 2026.4) deviates from the specification; the
default policy moves these nodes whatever the cost. The keys are the verdicts
of the library's policy (``src/openvino/native.hpp``), which decides for
:func:`patch_model` as for the ONNX and PyTorch conversions."""

# --------------------------------------------------------------------------
# The library
# --------------------------------------------------------------------------

_registered = weakref.WeakSet()
_register_lock = threading.Lock()
_private_core = None


def info():
    """What the library is, where, and what it was built against (a dict)."""
    import ctypes

    from . import _library

    path = extension_path()
    record = _library.read_record(_library.Path(path)) or {}
    library = ctypes.CDLL(path)
    library.ovpool_openvino_info.restype = ctypes.c_char_p
    return {"path": path, "info": library.ovpool_openvino_info().decode(), **record}


def register(core):
    """Add the library (ovpool's ops and its ONNX and PyTorch conversions) to
    ``core``, an ``ov.Core``; idempotent per Core; returns ``core``.

    Needed on every Core that reads a model holding ovpool's ops (IR saved by
    ``ov.save_model``, blobs from ``export_model``) and on the Core whose
    ``read_model`` should map ONNX pools onto ovpool. Raises
    :class:`ExtensionError` when the library is not built or does not match
    the installed OpenVINO.
    """
    path = extension_path()
    with _register_lock:
        if core in _registered:
            return core
        core.add_extension(path)
        _registered.add(core)
    return core


def _core():
    """A Core of this module's own, with the library: it reads the one-node
    models :func:`make_op` takes its nodes from, and keeps the library
    loaded for as long as the process runs."""
    global _private_core
    with _register_lock:
        if _private_core is None:
            core = ov.Core()
            core.add_extension(extension_path())
            _private_core = core
    return _private_core


def pytorch_extensions():
    """The library's path in a list, for ``ov.convert_model(module,
    example_input=..., extension=pytorch_extensions())`` (TorchScript) and
    ``ov.convert_model(exported_program, extension=pytorch_extensions())``
    (torch.export): aten max_poolNd (and ``_with_indices``), avg_poolNd,
    adaptive_avg_poolNd and adaptive_max_poolNd, N = 1, 2, 3
    (:data:`PYTORCH_OPS`), are converted with PyTorch's semantics
    (``ceil_mode``, ``count_include_pad``'s divisor, indices per (n, c) plane,
    NaN, unbatched inputs, every argument form including a stride left out):
    on ovpool's ops where native OpenVINO deviates or is slow, natively
    elsewhere (every one ovpool's kernels take on ovpool's ops within
    ``conversion_policy("all")``). ``divisor_override`` is refused with a
    clear error. A model converted with them needs :func:`register` on the
    Core that reads a saved copy."""
    return [extension_path()]


@contextlib.contextmanager
def conversion_policy(policy):
    """Within the block, the library's ONNX and PyTorch conversions follow
    ``policy``: ``"default"`` (native nodes where native OpenVINO is exact,
    ovpool's ops elsewhere, as :func:`patch_model`) or ``"all"`` (every pool
    on ovpool's ops). It sets ``OVPOOL_OPENVINO_POLICY``, which the library
    reads at each conversion (and which any other program may set)::

        with ovp.conversion_policy("all"):
            model = core.read_model("model.onnx")
    """
    _check_policy(policy)
    previous = os.environ.get("OVPOOL_OPENVINO_POLICY")
    os.environ["OVPOOL_OPENVINO_POLICY"] = policy
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("OVPOOL_OPENVINO_POLICY", None)
        else:
            os.environ["OVPOOL_OPENVINO_POLICY"] = previous


# --------------------------------------------------------------------------
# Types and shapes between OpenVINO and the layer table
# --------------------------------------------------------------------------


def _shape_of(pshape):
    """ov.PartialShape -> tuple with None for a dynamic dim, or None (dynamic rank)."""
    if pshape.rank.is_dynamic:
        return None
    return tuple(d.get_length() if d.is_static else None for d in pshape)


def _constant_value(output):
    """The data of a Constant (or of a Convert of one) feeding ``output``'s
    consumer, else None."""
    node = output.get_node()
    if node.get_type_info().name == "Convert" and node.get_input_size() == 1:
        node = node.input_value(0).get_node()
    if node.get_type_info().name == "Constant" and hasattr(node, "get_data"):
        return node.get_data()
    return None


def _node_types(entry, outputs):
    """TensorTypes and constant values of a node's inputs (``ov.Output``\\ s)."""
    types, values = [], []
    for k, out in enumerate(outputs):
        etype = out.get_element_type().get_type_name()
        if etype == "dynamic":
            etype = "f32" if k == 0 else "i64"
        types.append(TensorType(_shape_of(out.get_partial_shape()), etype))
        values.append(_constant_value(out) if k in entry.value_inputs else None)
    return types, values


def _materialize(entry, attrs):
    """Per-axis list attributes left empty ("the fill value on every axis")
    spelled out, as the library's ops write them."""
    result = dict(attrs)
    if entry.spatial_attr is None:
        return result
    n = len(attrs[entry.spatial_attr.name])
    for a in entry.attrs:
        if a.kind == "ints" and a.per_axis and not result.get(a.name):
            result[a.name] = [a.fill] * (n * a.per_axis)
    return result


def _ovpool_attrs(stock, attrs):
    """Typed attributes of a stock layer (e.g. MaxPool-1) -> those of its ovpool op."""
    target = _layers.get(stock.type, OVPOOL_OPSET)
    given = {k: v for k, v in attrs.items() if k in target.attr_names}
    return target, _materialize(target, target.attributes(**given))


# --------------------------------------------------------------------------
# Nodes of the library's ops
# --------------------------------------------------------------------------


def _ir_shape(pshape):
    if pshape.rank.is_dynamic:
        return "...", []
    dims, ports = [], []
    for d in pshape:
        if d.is_static:
            dims.append(str(d.get_length()))
            ports.append(str(d.get_length()))
        else:
            lo, hi = d.get_min_length(), d.get_max_length()
            dims.append("?" if hi < 0 else f"{lo}..{hi}")
            ports.append("-1")
    return ",".join(dims), ports


# IR port precisions of element types (the Parameter's port must name one)
_PRECISIONS = {
    "f32": "FP32",
    "f16": "FP16",
    "bf16": "BF16",
    "f64": "FP64",
    "boolean": "BOOL",
    "dynamic": "UNSPECIFIED",
}


def _one_node_ir(entry, attrs, inputs):
    """The IR of a model holding one node of ``entry`` fed by Parameters
    typed like ``inputs`` (``ov.Output``\\ s)."""
    from xml.sax.saxutils import quoteattr

    layers, edges = [], []
    op_id = len(inputs)
    for k, out in enumerate(inputs):
        shape, ports = _ir_shape(out.get_partial_shape())
        etype = out.get_element_type().get_type_name()
        dims = "".join(f"<dim>{d}</dim>" for d in ports)
        precision = _PRECISIONS.get(etype, etype.upper())
        layers.append(
            f'<layer id="{k}" name="in{k}" type="Parameter" version="opset1">'
            f'<data shape="{shape}" element_type="{etype}"/>'
            f'<output><port id="0" precision="{precision}">{dims}</port></output>'
            "</layer>"
        )
        edges.append(f'<edge from-layer="{k}" from-port="0" to-layer="{op_id}" to-port="{k}"/>')
    data = " ".join(
        f"{name}={quoteattr(text)}" for name, text in entry.format_attributes(attrs).items()
    )
    in_ports = "".join(f'<port id="{k}"/>' for k in range(len(inputs)))
    types, values = _node_types(entry, inputs)
    try:
        out_types = [t.etype for t in entry.infer(types, attrs, values)]
    except OvpoolError:
        out_types = ["dynamic"] * len(entry.outputs)  # the library reports the problem
    if inputs[0].get_element_type().get_type_name() == "dynamic":
        out_types[0] = "dynamic"
    out_ports = "".join(
        f'<port id="{len(inputs) + j}" precision="{_PRECISIONS.get(t, t.upper())}"/>'
        for j, t in enumerate(out_types)
    )
    layers.append(
        f'<layer id="{op_id}" name="op" type="{entry.type}" version="{OVPOOL_OPSET}">'
        f"<data {data}/><input>{in_ports}</input><output>{out_ports}</output></layer>"
    )
    for j in range(len(entry.outputs)):
        rid = op_id + 1 + j
        layers.append(
            f'<layer id="{rid}" name="out{j}" type="Result" version="opset1">'
            f'<input><port id="0"/></input></layer>'
        )
        edges.append(
            f'<edge from-layer="{op_id}" from-port="{len(inputs) + j}" '
            f'to-layer="{rid}" to-port="0"/>'
        )
    return (
        '<?xml version="1.0"?><net name="ovpool_node" version="11"><layers>'
        + "".join(layers)
        + "</layers><edges>"
        + "".join(edges)
        + "</edges></net>"
    ).encode()


def _new_node(entry, attrs, inputs):
    """A node of the library's op ``entry`` with typed ``attrs`` on
    ``inputs``: read from a one-node IR by this module's Core, then
    connected to the real inputs (the Parameters and Results it was read
    with go away with that model)."""
    model = _core().read_model(_one_node_ir(entry, attrs, inputs), ov.Tensor(np.empty(0, np.uint8)))
    (node,) = [n for n in model.get_ordered_ops() if n.get_type_info().version_id == OVPOOL_OPSET]
    del model
    node.set_arguments(list(inputs))
    node.validate_and_infer_types()
    return node


def make_op(type_, inputs, **attrs):
    """A node of the library's op ``type_`` on ``inputs`` (``ov.Output``\\ s or
    nodes), e.g. ``make_op("MaxPool", [x], kernel=[3, 3], strides=[2, 2])``.

    Attributes take their IR names (``exclude-pad``) or Python names
    (``exclude_pad``) and are validated by the layer table; the node's shape
    inference is the library's. Returns an ``ov.Node``.
    """
    entry = _layers.get(type_, OVPOOL_OPSET)
    if entry is None:
        raise OvpoolValueError(f"ovpool's opset has no op {type_!r}; it has {', '.join(OP_TYPES)}")
    inputs = [i.output(0) if isinstance(i, ov.Node) else i for i in inputs]
    attrs = _materialize(entry, entry.attributes(**attrs))
    types, values = _node_types(entry, inputs)
    try:
        entry.infer(types, attrs, values)  # the layer table's messages first
    except OvpoolError as exc:
        raise type(exc)(f"ovpool {type_}: {exc}") from None
    return _new_node(entry, attrs, inputs)


# --------------------------------------------------------------------------
# Which nodes move
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """What :func:`patch_model` does with one native pool node."""

    name: str  # the node's friendly name
    kind: str  # e.g. "MaxPool-opset8"
    supported: bool  # ovpool's kernels take its inputs
    deviation: str | None  # a key of DEVIATIONS where native deviates here
    faster: str | None  # why ovpool is faster here, layout change counted
    move: bool  # moved under the policy asked for
    reason: str  # why it moves or stays


# The library's verdicts (native.hpp) where ovpool's op is faster, the
# layout change counted, or native OpenVINO is, in words.
_FASTER = {
    "runtime_sizes": (
        "output size known only at run time: ovpool's bins are exact for any "
        "size, native OpenVINO's float32 borders are not"
    ),
    "adaptive_bins": (
        "adaptive bins: native OpenVINO runs them as a scalar loop; ovpool's op "
        "was 3-10% faster per network with the reorders counted"
    ),
    "indices_read": (
        "indices read: native OpenVINO falls back to its single-threaded reference "
        "implementation, ovpool's are threaded and vectorised"
    ),
}
_STAYS = {
    "global_average": (
        "a global average: OpenVINO's CPU plugin runs it as a vectorised "
        "ReduceMean, exact and with no reorder"
    ),
}


class _Policy:
    """The default policy's rules, as the library's conversions apply them
    (``src/openvino/native.cpp``: its C entry points), for the nodes of a
    native model."""

    def __init__(self, path):
        import ctypes

        library = ctypes.CDLL(path)
        ints = ctypes.POINTER(ctypes.c_int64)
        self._ctypes = ctypes
        self._window = library.ovpool_openvino_window_deviation
        self._window.restype = ctypes.c_char_p
        self._window.argtypes = [ctypes.c_int, ctypes.c_int, *[ints] * 5]
        self._window.argtypes += [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        self._window.argtypes += [ints, ints]
        self._adaptive = library.ovpool_openvino_adaptive_verdict
        self._adaptive.restype = ctypes.c_char_p
        self._adaptive.argtypes = [ctypes.c_int, ctypes.c_int, ints, ctypes.c_int, ints, ints]

    def _ints(self, values):
        values = [int(v) for v in values]
        return (self._ctypes.c_int64 * max(len(values), 1))(*values)

    def _shape(self, pshape):
        if pshape.rank.is_dynamic:
            return -1, self._ints(()), self._ints(())
        dims = list(pshape)
        return (
            len(dims),
            self._ints(d.get_min_length() for d in dims),
            self._ints(d.get_max_length() for d in dims),
        )

    @staticmethod
    def _key(answer):
        text = answer.decode()
        if text.startswith("error: "):
            raise OvpoolValueError(f"ovpool's policy: {text[7:]}")
        return text or None

    def window(self, max_pool, attrs, pshape):
        """The deviation of an AvgPool (MaxPool) with ovpool's ``attrs`` on
        data of ``pshape``, or None."""
        lists = [
            self._ints(attrs[name])
            for name in ("kernel", "strides", "dilations", "pads_begin", "pads_end")
        ]
        return self._key(
            self._window(
                int(max_pool),
                len(attrs["kernel"]),
                *lists,
                attrs["rounding_type"].encode(),
                attrs["auto_pad"].encode(),
                int(attrs.get("exclude-pad", True)),
                *self._shape(pshape),
            )
        )

    def adaptive(self, max_pool, sizes, pshape):
        """The verdict on an adaptive pool whose output size is ``sizes``
        (None: known at run time only)."""
        n = -1 if sizes is None else len(sizes)
        return self._key(
            self._adaptive(int(max_pool), n, self._ints(sizes or ()), *self._shape(pshape))
        )


_policies = {}


def _policy():
    path = extension_path()
    with _register_lock:
        if path not in _policies:
            _policies[path] = _Policy(path)
        return _policies[path]


def _decide(node, policy):
    info = node.get_type_info()
    key = (info.name, info.version_id)
    kind = f"{info.name}-{info.version_id}"
    name = node.get_friendly_name()
    stock = _layers.get(*key)
    node_attrs = {k: v for k, v in node.get_attributes().items() if k in stock.attr_names}
    target, attrs = _ovpool_attrs(stock, stock.attributes(**node_attrs))
    inputs = [node.input_value(k) for k in range(node.get_input_size())]
    types, values = _node_types(target, inputs)
    try:
        target.infer(types, attrs, values)
    except _layers.UnsupportedLayer as exc:
        return Decision(name, kind, False, None, None, False, f"stays native: {exc}"), None
    data = node.get_input_partial_shape(0)
    if info.name in ("AvgPool", "MaxPool"):
        verdict = _policy().window(info.name == "MaxPool", attrs, data)
        if (
            verdict is None
            and info.name == "MaxPool"
            and node.get_output_size() > 1
            and len(node.output(1).get_target_inputs()) > 0
        ):
            verdict = "indices_read"
    else:
        sizes = _constant_value(node.input_value(1))
        if sizes is not None:
            sizes = [int(s) for s in np.asarray(sizes).reshape(-1)]
        verdict = _policy().adaptive(info.name == "AdaptiveMaxPool", sizes, data)
    deviation = verdict if verdict in DEVIATIONS else None
    faster = _FASTER.get(verdict)
    if policy == "all":
        move, reason = True, "moved: policy='all'"
    elif deviation is not None:
        move, reason = True, f"moved: {DEVIATIONS[deviation]}"
    elif faster is not None:
        move, reason = True, f"moved: {faster}"
    else:
        native = (
            "native OpenVINO is exact here, and faster in its blocked layout than ovpool "
            "with the reorders to and from plain NCHW"
        )
        move, reason = False, "stays native: " + _STAYS.get(verdict, native)
    return Decision(name, kind, True, deviation, faster, move, reason), (target, attrs, inputs)


def _check_policy(policy):
    if policy not in POLICIES:
        raise OvpoolValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")


def _stock_nodes(model):
    for node in model.get_ordered_ops():
        info = node.get_type_info()
        if (info.name, info.version_id) in STOCK_LAYERS:
            yield node


def patch_plan(model, *, policy="default"):
    """What :func:`patch_model` would do to each native pool node of
    ``model``: a list of :class:`Decision` (nothing is changed)."""
    _check_policy(policy)
    return [_decide(node, policy)[0] for node in _stock_nodes(model)]


def _patch(model, select):
    count = 0
    for node in list(_stock_nodes(model)):
        decision, how = select(node)
        if how is None or not decision.move:
            continue
        target, attrs, inputs = how
        new = _new_node(target, attrs, inputs)
        new.set_friendly_name(node.get_friendly_name())
        for k in range(node.get_output_size()):
            node.output(k).replace(new.output(k))
        count += 1
    if count:
        model.validate_nodes_and_infer_types()
    return count


def patch_model(model, *, policy="default"):
    """Move native pool nodes of ``model`` (an ``ov.Model``) onto ovpool's ops.

    ``policy="default"`` moves a node only where native OpenVINO deviates
    from the specification or ovpool is faster with the layout change
    counted; ``policy="all"`` moves every AdaptiveAvgPool-8,
    AdaptiveMaxPool-8, AvgPool-1/14/16 and MaxPool-1/8/14 whose inputs
    ovpool's kernels take (see the module docstring, :func:`patch_plan`).
    Consumers, tensor names and friendly names move to the new node; nodes
    inside sub-graphs (If, Loop) are not visited. Returns how many nodes
    moved; the model is revalidated. Compiling the patched model needs no
    registration; reading a saved copy does (:func:`register`).
    """
    _check_policy(policy)
    return _patch(model, lambda node: _decide(node, policy))


def read_model(core, xml_path, bin_path=None, *, policy="default"):
    """Read an OpenVINO IR with its pool layers on ovpool's ops where
    ``policy`` says (see :func:`patch_model`); registers the library on
    ``core``; returns an ``ov.Model``.

    The file is first read and validated by ovpool's own IR reader
    (:func:`ovpool.ir.read_model`: a hostile or malformed file raises
    :class:`~ovpool.IRError` before OpenVINO sees it), then by
    ``core.read_model``, then patched.
    """
    model = _read_validated(register(core), _ir.read_model(xml_path, bin_path))
    patch_model(model, policy=policy)
    return model


def _read_validated(core, ir_model):
    """``core.read_model`` of the file behind ``ir_model`` (an
    :class:`ovpool.ir.Model`: a file ovpool's reader validated), unpatched;
    ``ovpool run`` and ``ovpool check`` plan and patch it themselves."""
    if os.path.exists(ir_model.bin_path):
        return core.read_model(ir_model.path, ir_model.bin_path)
    with open(ir_model.path, "rb") as f:  # no weights: OpenVINO wants a .bin next to it otherwise
        return core.read_model(f.read(), ov.Tensor(np.empty(0, np.uint8)))
