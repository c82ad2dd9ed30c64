"""Read OpenVINO IR (.xml + .bin) and run its pooling layers, without OpenVINO.

::

    import numpy as np, ovpool.ir

    model = ovpool.ir.read_model("model.xml")  # .bin: the sibling file
    model.inputs, model.outputs  # name, shape (None = dynamic), dtype
    model.layers  # id, name, type, version, attributes
    outputs = model(np.ones((1, 3, 13, 13), np.float32))  # or model({"x": array})

The reader parses and validates the file into a graph of layers, edges and
constants; every layer is looked up in the layer table
(:mod:`ovpool.layers`), which knows its attributes, shape inference and how to
run it on ovpool's kernels. The outputs come in the order of OpenVINO's
``Model.outputs`` for the same file: the Result layers in document order
(verified against ``openvino.Core().read_model`` with shuffled layers and ids).

A model with layers ovpool does not run (Convolution, ...) is still read and
described; calling it raises :class:`~ovpool.IRError` naming every such layer.
Run such a model with OpenVINO and ovpool's extension
(``ovpool.openvino.read_model``).

Hostile and malformed files raise :class:`~ovpool.IRError` whose message
starts with ``path:line:`` of the XML element at fault. The reader never
resolves entities or DTDs (a DOCTYPE or entity declaration is rejected before
parsing), never opens another file than the .xml and its .bin, never touches
the network, and checks every claimed size (the .xml's, each Const's
offset/size against the .bin, every tensor's element count against
:data:`MAX_TENSOR_ELEMENTS`, and the bytes of every Const and of every output
a layer would allocate against ovpool's memory budget,
:func:`ovpool.set_memory_budget`) before allocating anything proportional to
it. Its graph walks are iterative and linear (no recursion a file can
deepen: a chain of thousands of Converts reads in a second), and an element
with more than :data:`MAX_ATTRIBUTES` attributes is refused after one linear
count. OpenVINO's own reader (2026.4) segfaults on an edge to a missing
layer; ovpool's rejects it. ``docs/fuzzing.md`` has the last fuzzing run of
both readers on the same mutated files.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import layers as _layers
from ._limits import check_budget
from .errors import IRError, OvpoolError
from .layers import Dim, TensorType, element_nbytes, numpy_dtype

__all__ = [
    "read_model",
    "Model",
    "Layer",
    "TensorInfo",
    "MAX_XML_BYTES",
    "MAX_TENSOR_ELEMENTS",
    "MAX_ATTRIBUTES",
]

MAX_XML_BYTES = 256 * 1024 * 1024
"""The largest .xml ovpool reads (256 MiB; real IR .xml files are far smaller)."""

MAX_TENSOR_ELEMENTS = 1 << 32
"""The most elements any one tensor of a model may have (Parameter, Const or an
inferred output): 2**32, already 16 GiB of float32. Checked before allocating."""

MAX_ATTRIBUTES = 1024
"""The most attributes one element of the .xml may have (real IR layers have a
few dozen at most). An element with more is refused before its attributes are
read; lxml looks each attribute up by a walk of the element's list, so reading
all of them one by one costs time quadratic in their number."""

# Elements with more attributes than this are read by one XPath walk (linear)
# instead of dict(element.attrib) (quadratic, but faster on a few).
_FEW_ATTRIBUTES = 32

_MAX_CONST_VALUE_ELEMENTS = 64  # constants read at load time for shape inference
_IR_VERSIONS = ("10", "11")
_INT_RE = re.compile(r"\s*\+?(\d{1,18})\s*")
_DTD_RE = re.compile(rb"<!\s*(DOCTYPE|ENTITY|ELEMENT|ATTLIST|NOTATION)", re.IGNORECASE)
_ENCODING_RE = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([^"']*)["']""")
_PRECISIONS = {"fp32": "f32", "fp16": "f16", "fp64": "f64", "bool": "boolean"}


# --------------------------------------------------------------------------
# Public data classes
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Port:
    """A port of a layer as declared in the .xml."""

    id: int
    index: int  # position among the layer's inputs or outputs
    names: tuple  # tensor names (``names="a,b"``)
    shape: tuple  # declared dims, None for -1
    precision: str  # declared element type, e.g. "f32"
    line: int


@dataclass
class Layer:
    """One ``<layer>`` of the model (:attr:`Model.layers`).

    Attributes
    ----------
    id : int
        The layer's ``id`` in the .xml.
    name : str
        Its ``name``.
    type : str
        Its ``type``, e.g. ``"MaxPool"``.
    version : str
        Its ``version``: an opset (``"opset8"``) or ``"ovpool"``.
    attributes : dict
        Typed and with defaults applied for the layers ovpool knows, the raw
        strings of ``<data>`` for the others.
    raw_attributes : dict
        The strings of ``<data>`` as written.
    line : int
        The line of the ``<layer>`` element.
    reason : str or None
        Why ovpool's runtime cannot run the layer, None if it can.
    entry, in_ports, out_ports, sources, output_types, output_bounds
        The reader's bookkeeping: the layer table entry, the declared ports,
        the ``(layer id, output index)`` feeding each input, the inferred
        output types and value bounds.

    Examples
    --------
    >>> from ovpool import ir
    >>> model = ir.read_model("ir_examples/max_pool_8.xml")
    >>> [(layer.type, layer.version) for layer in model.layers]
    [('Parameter', 'opset1'), ('MaxPool', 'opset8'), ('Result', 'opset1'), ('Result', 'opset1')]
    >>> pool = model.layers[1]
    >>> pool.runs_on_ovpool, pool.attributes["kernel"]
    (True, [3, 3])
    """

    id: int
    name: str
    type: str
    version: str
    attributes: dict
    raw_attributes: dict
    line: int
    entry: object = field(default=None, repr=False)  # ovpool.layers.LayerType or None
    in_ports: list = field(default_factory=list, repr=False)
    out_ports: list = field(default_factory=list, repr=False)
    sources: list = field(default_factory=list, repr=False)  # per input: (layer id, output index)
    output_types: list = field(default_factory=list, repr=False)
    output_bounds: list = field(default_factory=list, repr=False)
    reason: str | None = None

    @property
    def runs_on_ovpool(self) -> bool:
        """True if ovpool's runtime can run this layer."""
        return self.reason is None

    @property
    def label(self) -> str:
        """The layer as error messages name it: type, version, name and id."""
        return f"{self.type} {self.version} layer {self.name!r} (id {self.id})"


@dataclass(frozen=True)
class TensorInfo:
    """A model input or output (:attr:`Model.inputs`, :attr:`Model.outputs`).

    Attributes
    ----------
    name : str
        OpenVINO's ``get_any_name()`` for the tensor.
    names : tuple of str
        Every name of the tensor.
    shape : tuple of (int or None), or None
        The dims, None for a dynamic dim; None for a dynamic rank.
    dtype : numpy.dtype or None
        The numpy dtype, None if numpy cannot hold the element type.
    element_type : str
        The IR element type, e.g. ``"f32"``.
    layer : Layer
        The Parameter or Result layer.
    bounds : tuple of (int, int or None), or None
        For inputs: ``(lo, hi)`` per dim (hi None: unbounded).

    Examples
    --------
    >>> from ovpool import ir
    >>> info = ir.read_model("ir_examples/dynamic_shape.xml").inputs[0]
    >>> info.name, info.shape, info.element_type, info.shape_str()
    ('x', (None, 3, None, None), 'f32', '[?,3,8..32,8..32]')
    """

    name: str
    names: tuple
    shape: tuple | None
    dtype: np.dtype | None
    element_type: str
    layer: Layer = field(repr=False)
    bounds: tuple | None = field(default=None, repr=False)

    def shape_str(self) -> str:
        """The shape as OpenVINO prints it.

        Returns
        -------
        str
            ``[2,3,?,8..32]``: ``?`` for a dynamic dim, ``lo..hi`` for a
            bounded one, ``[...]`` for a dynamic rank.

        Examples
        --------
        >>> from ovpool import ir
        >>> ir.read_model("ir_examples/chain.xml").inputs[0].shape_str()
        '[2,4,32,30]'
        """
        if self.shape is None:
            return "[...]"
        dims = []
        for i, d in enumerate(self.shape):
            if d is not None:
                dims.append(str(d))
            elif self.bounds is not None and self.bounds[i] != (0, None):
                lo, hi = self.bounds[i]
                dims.append(f"{lo}..{'' if hi is None else hi}")
            else:
                dims.append("?")
        return "[" + ",".join(dims) + "]"


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


def _error(path, where, message):
    """An IRError whose message starts with ``path:line:``."""
    line = where if (where is None or isinstance(where, int)) else where.sourceline
    exc = IRError(f"{path}:{line}: {message}" if line else f"{path}: {message}")
    exc.path = path
    exc.line = line
    return exc


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------


def read_model(
    xml_path: str | os.PathLike[str], bin_path: str | os.PathLike[str] | None = None
) -> Model:
    """Read an OpenVINO IR model (IR v10/v11, ``.xml`` + ``.bin``), without OpenVINO.

    The whole file is parsed and validated, and every layer looked up in
    ovpool's layer table; a model with layers ovpool's runtime does not run
    is still read and described (:attr:`Model.unsupported_layers`).

    Parameters
    ----------
    xml_path : str or os.PathLike
        The ``.xml``, as written by ``openvino.save_model`` or model
        conversion.
    bin_path : str or os.PathLike, optional
        The weights; default: ``xml_path`` with the extension ``.bin``. Only
        needed (and only read, lazily) when the model has Const layers.

    Returns
    -------
    Model
        The model, callable on numpy arrays.

    Raises
    ------
    IRError
        For a file that cannot be read, is malformed or hostile (a DOCTYPE or
        entity, an oversized claim, an edge to a missing layer, a cycle, ...),
        or uses an unknown layer version; the message starts with
        ``path:line:``. Also a ``ValueError``.

    See Also
    --------
    ovpool.openvino.read_model : Read a model into OpenVINO with ovpool's ops.

    Examples
    --------
    >>> import numpy as np
    >>> from ovpool import ir
    >>> model = ir.read_model("ir_examples/chain.xml")
    >>> [(i.name, i.shape) for i in model.inputs]
    [('x', (2, 4, 32, 30))]
    >>> outputs = model(np.zeros((2, 4, 32, 30), np.float32))
    >>> [(o.name, a.shape, a.dtype.name) for o, a in zip(model.outputs, outputs)]
    [('values', (2, 4, 3, 3), 'float32'), ('indices', (2, 4, 3, 3), 'int32')]
    """
    return _Reader(xml_path, bin_path).read()


class _Reader:
    def __init__(self, xml_path, bin_path):
        self.path = os.fspath(xml_path)
        if bin_path is None:
            bin_path = os.path.splitext(self.path)[0] + ".bin"
        self.bin_path = os.fspath(bin_path)

    def err(self, where, message):
        return _error(self.path, where, message)

    def _checked(self, element):
        """``element``, refused if it has more than :data:`MAX_ATTRIBUTES`
        attributes (counting them is one linear walk)."""
        n = len(element.attrib)
        if n > MAX_ATTRIBUTES:
            raise self.err(
                element,
                f"<{element.tag}> has {n} attributes, more than "
                f"{MAX_ATTRIBUTES}; ovpool refuses it",
            )
        return element

    def _attributes(self, element):
        """Every attribute of ``element`` as a dict, in time linear in their number."""
        if len(self._checked(element).attrib) <= _FEW_ATTRIBUTES:
            return dict(element.attrib)
        return {str(value.attrname): str(value) for value in element.xpath("@*")}

    # -- the XML document --------------------------------------------------

    def _read_bytes(self):
        limit = MAX_XML_BYTES
        chunks, total = [], 0
        try:
            with open(self.path, "rb") as f:
                if os.fstat(f.fileno()).st_size > limit:
                    raise self.err(
                        None,
                        f"the .xml is larger than {limit / 2**20:g} MiB; "
                        "ovpool refuses to parse it",
                    )
                while True:  # chunks: never a buffer sized by a claim
                    chunk = f.read(1 << 20)
                    if not chunk:
                        break
                    total += len(chunk)
                    if total > limit:
                        raise self.err(
                            None,
                            f"the .xml is larger than {limit / 2**20:g} MiB; "
                            "ovpool refuses to parse it",
                        )
                    chunks.append(chunk)
        except OSError as exc:
            raise _error(
                self.path, None, f"cannot read the IR file: {exc.strerror or exc}"
            ) from None
        return b"".join(chunks)

    def _check_raw(self, data):
        body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
        stripped = body.lstrip()
        if not stripped:
            raise self.err(None, "the file is empty, not an OpenVINO IR .xml")
        if not stripped.startswith(b"<"):
            raise self.err(1, "not an XML document (OpenVINO IR is UTF-8 XML starting with '<')")
        declared = _ENCODING_RE.match(stripped)
        if declared and declared.group(1).lower() not in (b"utf-8", b"utf8", b"us-ascii", b"ascii"):
            encoding = declared.group(1).decode("ascii", "replace")
            raise self.err(1, f"the XML declares encoding {encoding!r}; ovpool reads UTF-8 IR only")
        match = _DTD_RE.search(data)
        if match:
            line = data.count(b"\n", 0, match.start()) + 1
            raise self.err(
                line,
                f"'<!{match.group(1).decode()}' found: DOCTYPE and entity "
                "declarations are not allowed in IR (rejected, never resolved)",
            )

    def _parse(self, data):
        from lxml import etree

        parser = etree.XMLParser(
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            huge_tree=False,
            dtd_validation=False,
            remove_comments=True,
            remove_pis=True,
            collect_ids=False,
        )
        try:
            root = etree.fromstring(data, parser)
        except etree.XMLSyntaxError as exc:
            line = exc.lineno if exc.lineno else None
            message = str(exc.msg if hasattr(exc, "msg") else exc).splitlines()[0]
            raise self.err(line, f"malformed XML: {message}") from None
        except (ValueError, etree.LxmlError) as exc:
            raise self.err(None, f"malformed XML: {exc}") from None
        docinfo = root.getroottree().docinfo
        if docinfo.doctype or docinfo.internalDTD is not None or docinfo.externalDTD is not None:
            raise self.err(1, "DOCTYPE declarations are not allowed in IR")
        return root

    # -- small parsers -----------------------------------------------------

    def _int(self, element, key, what=None):
        text = element.get(key)
        if text is None:
            raise self.err(element, f"<{element.tag}> has no {key!r} attribute{what or ''}")
        match = _INT_RE.fullmatch(text)
        if not match:
            raise self.err(element, f"<{element.tag}> {key}={text!r} is not a non-negative integer")
        return int(match.group(1))

    def _dims(self, port):
        dims = []
        for dim in port:
            if not isinstance(dim.tag, str) or dim.tag != "dim":
                continue
            text = (dim.text or "").strip()
            if text == "-1":
                dims.append(None)
                continue
            match = _INT_RE.fullmatch(text)
            if not match or int(match.group(1)) > MAX_TENSOR_ELEMENTS:
                raise self.err(
                    dim, f"bad dimension {text!r} (a dim is -1 or a size <= {MAX_TENSOR_ELEMENTS})"
                )
            dims.append(int(match.group(1)))
            if len(dims) > 64:
                raise self.err(port, "a port with more than 64 dims")
        return tuple(dims)

    @staticmethod
    def _names(text):
        if not text:
            return ()
        names, current, escaped = [], [], False
        for ch in text:
            if escaped:
                current.append(ch)
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == ",":
                names.append("".join(current))
                current = []
            else:
                current.append(ch)
        names.append("".join(current))
        return tuple(sorted(n for n in names if n))

    # -- layers ------------------------------------------------------------

    def _layer(self, element):
        self._checked(element)
        lid = self._int(element, "id")
        name = element.get("name", "")
        type_ = element.get("type")
        version = element.get("version")
        if not type_:
            raise self.err(element, f"layer {name!r} (id {lid}) has no type")
        if version is None:
            raise self.err(element, f"{type_} layer {name!r} (id {lid}) has no version")
        datas = [c for c in element if isinstance(c.tag, str) and c.tag == "data"]
        if len(datas) > 1:
            raise self.err(datas[1], f"{type_} layer {name!r} (id {lid}) has two <data> elements")
        data = datas[0] if datas else None
        raw = self._attributes(data) if data is not None else {}
        layer = Layer(lid, name, type_, version, raw, raw, element.sourceline)
        try:
            layer.entry = _layers.lookup(type_, version)
        except _layers.UnknownLayer as exc:
            raise self.err(element, f"layer {name!r} (id {lid}): {exc}") from None
        if layer.entry is None:
            layer.reason = f"ovpool's runtime has no {type_} layer (an OpenVINO op)"
        else:
            try:
                layer.attributes = layer.entry.parse_attributes(raw)
            except OvpoolError as exc:
                raise self.err(
                    data if data is not None else element, f"{layer.label}: {exc}"
                ) from None
        seen = set()
        for direction, ports in (("input", layer.in_ports), ("output", layer.out_ports)):
            for group in element:
                if not isinstance(group.tag, str) or group.tag != direction:
                    continue
                for port in group:
                    if not isinstance(port.tag, str) or port.tag != "port":
                        continue
                    pid = self._int(self._checked(port), "id")
                    if pid in seen:
                        raise self.err(port, f"{layer.label} has two ports with id {pid}")
                    seen.add(pid)
                    precision = (port.get("precision") or "").lower()
                    ports.append(
                        Port(
                            pid,
                            len(ports),
                            self._names(port.get("names")),
                            self._dims(port),
                            _PRECISIONS.get(precision, precision),
                            port.sourceline,
                        )
                    )
        entry = layer.entry
        if entry is not None:
            n_min = len(entry.inputs) - entry.optional_inputs
            if not n_min <= len(layer.in_ports) <= len(entry.inputs):
                raise self.err(
                    element,
                    f"{layer.label} has {len(layer.in_ports)} input ports; "
                    f"{type_} takes {_count(n_min, len(entry.inputs))}",
                )
            # fewer declared outputs than the op has are fine (OpenVINO maps
            # output ports by their position, not by their id)
            if len(layer.out_ports) > len(entry.outputs):
                raise self.err(
                    element,
                    f"{layer.label} has {len(layer.out_ports)} output ports; "
                    f"{type_} has {len(entry.outputs)}",
                )
        return layer

    # -- the whole model ---------------------------------------------------

    def read(self):
        data = self._read_bytes()
        self._check_raw(data)
        root = self._parse(data)
        del data
        if root.tag != "net":
            raise self.err(root, f"the root element is <{root.tag}>, not <net>: not an OpenVINO IR")
        self._checked(root)
        ir_version = root.get("version")
        if ir_version not in _IR_VERSIONS:
            raise self.err(
                root,
                f"IR version {ir_version!r} is not supported (ovpool reads "
                f"versions {', '.join(_IR_VERSIONS)})",
            )
        layers_el = [c for c in root if isinstance(c.tag, str) and c.tag == "layers"]
        edges_el = [c for c in root if isinstance(c.tag, str) and c.tag == "edges"]
        if len(layers_el) != 1 or len(edges_el) > 1:
            raise self.err(root, "an IR has exactly one <layers> and at most one <edges>")

        layer_list, by_id = [], {}
        for element in layers_el[0]:
            if not isinstance(element.tag, str) or element.tag != "layer":
                continue
            layer = self._layer(element)
            if layer.id in by_id:
                first = by_id[layer.id]
                raise self.err(
                    element,
                    f"duplicate layer id {layer.id} (also {first.label}, line {first.line})",
                )
            by_id[layer.id] = layer
            layer_list.append(layer)
        if not layer_list:
            raise self.err(layers_el[0], "the model has no layers")

        self._edges(edges_el[0] if edges_el else None, by_id)
        for layer in layer_list:
            for port, source in zip(layer.in_ports, layer.sources):
                if source is None:
                    raise self.err(
                        port.line, f"input port {port.id} of {layer.label} has no incoming edge"
                    )
        order = self._toposort(layer_list, by_id)
        model = Model._new(
            self.path, self.bin_path, root.get("name", ""), ir_version, layer_list, by_id, order
        )
        self._check_consts(model)
        self._infer(model)
        model._finish()
        return model

    def _edges(self, edges_el, by_id):
        for layer in by_id.values():
            layer.sources = [None] * len(layer.in_ports)
        if edges_el is None:
            return
        # port id -> port, per layer: a list scan per edge would be quadratic
        # in a layer with many ports
        outs = {lid: {p.id: p for p in layer.out_ports} for lid, layer in by_id.items()}
        ins = {lid: {p.id: p for p in layer.in_ports} for lid, layer in by_id.items()}
        for edge in edges_el:
            if not isinstance(edge.tag, str) or edge.tag != "edge":
                continue
            self._checked(edge)
            src_id = self._int(edge, "from-layer")
            src_port = self._int(edge, "from-port")
            dst_id = self._int(edge, "to-layer")
            dst_port = self._int(edge, "to-port")
            src, dst = by_id.get(src_id), by_id.get(dst_id)
            if src is None:
                raise self.err(edge, f"edge from a missing layer (from-layer={src_id})")
            if dst is None:
                raise self.err(edge, f"edge to a missing layer (to-layer={dst_id})")
            out = outs[src_id].get(src_port)
            if out is None:
                raise self.err(
                    edge,
                    f"edge from a missing port: {src.label} has no output port "
                    f"{src_port} (its outputs: {_ids(src.out_ports)})",
                )
            inp = ins[dst_id].get(dst_port)
            if inp is None:
                raise self.err(
                    edge,
                    f"edge to a missing port: {dst.label} has no input port "
                    f"{dst_port} (its inputs: {_ids(dst.in_ports)})",
                )
            index = inp.index
            if dst.sources[index] is not None:
                raise self.err(edge, f"input port {dst_port} of {dst.label} has two incoming edges")
            dst.sources[index] = (src_id, out.index)

    def _toposort(self, layer_list, by_id):
        consumers = {layer.id: [] for layer in layer_list}
        pending = {}
        for layer in layer_list:
            pending[layer.id] = len(layer.sources)
            for src_id, _ in layer.sources:
                consumers[src_id].append(layer.id)
        ready = [layer.id for layer in reversed(layer_list) if pending[layer.id] == 0]
        order = []
        while ready:
            lid = ready.pop()
            order.append(lid)
            for cid in consumers[lid]:
                pending[cid] -= 1
                if pending[cid] == 0:
                    ready.append(cid)
        if len(order) != len(layer_list):
            # walk back along unresolved inputs until a layer repeats: it is on a cycle
            left = {lid for lid, n in pending.items() if n > 0}
            lid = next(layer.id for layer in layer_list if layer.id in left)
            seen = {}  # layer id -> position on the walk (a dict: the walk may be long)
            while lid not in seen:
                seen[lid] = len(seen)
                lid = next(s for s, _ in by_id[lid].sources if s in left)
            cycle = [by_id[c].label for c in reversed(list(seen)[seen[lid] :])]
            if len(cycle) > 8:
                cycle = cycle[:4] + [f"... ({len(cycle) - 8} more layers)"] + cycle[-4:]
            names = " -> ".join(cycle)
            raise self.err(by_id[lid].line, f"the graph has a cycle: {names}")
        return order

    def _check_consts(self, model):
        consts = [layer for layer in model.layers if layer.type == "Const" and layer.entry]
        if not consts:
            model._bin_size = 0
            return
        try:
            model._bin_size = os.stat(self.bin_path).st_size
        except OSError as exc:
            raise self.err(
                consts[0].line,
                f"{consts[0].label} needs the weights file {self.bin_path}: {exc.strerror or exc}",
            ) from None
        for layer in consts:
            a = layer.attributes
            count = 1
            for d in a["shape"]:
                count *= d
            where = (
                f"{layer.label} (element_type={a['element_type']}, shape={a['shape']}, "
                f"offset={a['offset']}, size={a['size']})"
            )
            if count > MAX_TENSOR_ELEMENTS:
                raise self.err(
                    layer.line, f"{where} claims {count} elements, more than {MAX_TENSOR_ELEMENTS}"
                )
            if a["offset"] + a["size"] > model._bin_size:
                raise self.err(
                    layer.line,
                    f"{where} reads past the end of {self.bin_path} ({model._bin_size} bytes)",
                )
            expected = element_nbytes(a["element_type"], count)
            if expected is not None and expected != a["size"]:
                raise self.err(
                    layer.line, f"{where}: the shape needs {expected} bytes, not {a['size']}"
                )
            try:
                _check_const_bytes(layer)
            except OvpoolError as exc:
                raise self.err(layer.line, f"{layer.label}: {exc}") from None
            if numpy_dtype(a["element_type"]) is None:
                layer.reason = f"ovpool's runtime does not decode {a['element_type']} constants"

    def _infer(self, model):
        opaque = set()  # layers whose types come from the declared port dims
        for lid in model._order:
            layer = model._by_id[lid]
            declared = [TensorType(p.shape, p.precision) for p in layer.out_ports]
            if layer.type == "Const" and layer.entry is not None:
                layer.output_types = layer.entry.infer([], layer.attributes)
                if layer.reason is not None:
                    opaque.add(lid)
                continue
            if (
                layer.entry is None
                or layer.reason is not None
                or any(src in opaque for src, _ in layer.sources)
            ):
                layer.output_types = declared
                opaque.add(lid)
                continue
            inputs = [model._by_id[s].output_types[i] for s, i in layer.sources]
            values = [
                model._const_value(src) if k in layer.entry.value_inputs else None
                for k, src in enumerate(layer.sources)
            ]
            # fewer declared output ports than the op has outputs keep that
            # many; a Parameter without one is still an input (as in OpenVINO)
            n_outputs = max(len(layer.out_ports), layer.type == "Parameter")
            try:
                types = layer.entry.infer(inputs, layer.attributes, values)[:n_outputs]
            except _layers.UnsupportedLayer as exc:
                layer.reason = str(exc)
                layer.output_types = declared
                opaque.add(lid)
                continue
            except OvpoolError as exc:
                raise self.err(layer.line, f"{layer.label}: {exc}") from None
            for t in types:
                _check_size(
                    t.shape,
                    lambda n: self.err(
                        layer.line,
                        f"{layer.label}: an output of {n} elements is more than "
                        f"{MAX_TENSOR_ELEMENTS}",
                    ),
                )
                if layer.type != "Parameter":  # (an input's memory is the caller's)
                    try:
                        _check_bytes(layer, t)
                    except OvpoolError as exc:
                        raise self.err(layer.line, f"{layer.label}: {exc}") from None
            layer.output_types = types
            layer.output_bounds = self._bounds(model, layer, types, values)

    @staticmethod
    def _bounds(model, layer, types, values):
        """Per output, ``(lo, hi)`` per dim (None for a dynamic rank). A bounded
        input dim (Parameter ``lo..hi``) is pushed through the layer's shape
        inference at both ends (output sizes grow with input sizes): equal
        ends make the output dim static, as OpenVINO's interval shape
        inference does."""
        if layer.type == "Parameter":
            dims = layer.attributes["shape"]
            return [
                None
                if dims is None
                else tuple((d.lo, d.hi) if isinstance(d, Dim) else (d, d) for d in dims)
            ]
        result = [
            None if t.shape is None else tuple((0, None) if d is None else (d, d) for d in t.shape)
            for t in types
        ]
        in_bounds = [
            model._by_id[s].output_bounds[i] if i < len(model._by_id[s].output_bounds) else None
            for s, i in layer.sources
        ]
        inputs = [model._by_id[s].output_types[i] for s, i in layer.sources]
        if not any(b and any(lo != hi and hi is not None for lo, hi in b) for b in in_bounds):
            return result

        def at(end):
            shapes = []
            for t, b in zip(inputs, in_bounds):
                if t.shape is None or b is None:
                    shapes.append(t)
                    continue
                dims = tuple(
                    d if d is not None else (b[k][end] if b[k][end] else None)
                    for k, d in enumerate(t.shape)
                )
                shapes.append(TensorType(dims, t.etype))
            return layer.entry.infer(shapes, layer.attributes, values)

        try:
            lows, highs = at(0), at(1)
        except OvpoolError:
            return result
        for k, (t, lo_t, hi_t) in enumerate(zip(types, lows, highs)):
            if t.shape is None or lo_t.shape is None or hi_t.shape is None:
                continue
            dims, bounds = list(t.shape), list(result[k])
            for j, d in enumerate(t.shape):
                lo, hi = lo_t.shape[j], hi_t.shape[j]
                if d is None and lo is not None and hi is not None:
                    bounds[j] = (lo, hi)
                    if lo == hi:
                        dims[j] = lo
            types[k] = TensorType(tuple(dims), t.etype)
            result[k] = tuple(bounds)
        return result


def _count(lo, hi):
    return str(lo) if lo == hi else f"{lo} to {hi}"


def _ids(ports, most=16):
    ids = [p.id for p in ports]
    return ids if len(ids) <= most else ids[:most] + ["..."]


# Output types a model keeps per (layer, input shapes); a model fed ever new
# shapes starts over past this many.
_INFERRED_MAX = 1024


def _inference_key(layer_id, types, values):
    """What a layer's shape inference depends on besides its attributes: its
    input types and the values of its value inputs (small: AdaptiveAvgPool's
    output_size); None (do not cache) for a large value."""
    frozen = []
    for value in values:
        if value is None:
            frozen.append(None)
        elif value.size <= 64:
            frozen.append((value.dtype.str, value.shape, value.tobytes()))
        else:
            return None
    return layer_id, tuple(types), tuple(frozen)


def _check_size(shape, make_error):
    if shape is None:
        return
    n = 1
    for d in shape:
        if d is not None:
            n *= d
    if n > MAX_TENSOR_ELEMENTS:
        raise make_error(n)


def _check_const_bytes(layer):
    """A Const's bytes, as read from the .bin and as decoded, against the
    memory budget."""
    a = layer.attributes
    dtype = numpy_dtype(a["element_type"])
    decoded = a["size"]
    if dtype is not None:
        decoded = dtype.itemsize
        for d in a["shape"]:
            decoded *= d
    check_budget(
        layer.type, "the constant", max(a["size"], decoded), tuple(a["shape"]), a["element_type"]
    )


def _check_bytes(layer, t):
    """A tensor of static type ``t`` that ``layer`` would allocate, against the
    memory budget."""
    if t.shape is None or None in t.shape:
        return
    dtype = numpy_dtype(t.etype)
    if dtype is None:
        return
    n = dtype.itemsize
    for d in t.shape:
        n *= d
    check_budget(layer.type, "an output", n, t.shape, t.etype)


def _decode(raw, etype, shape):
    """Little-endian .bin bytes -> a read-only numpy array."""
    if etype == "bf16":
        bits = np.frombuffer(raw, dtype="<u2")
        dtype = numpy_dtype("bf16")
        if dtype.name == "bfloat16":
            array = bits.astype(np.uint16).view(dtype)
        else:
            array = (bits.astype(np.uint32) << 16).view(np.float32)
    elif etype == "boolean":
        array = np.frombuffer(raw, dtype=np.uint8) != 0
    else:
        dtype = numpy_dtype(etype)
        array = np.frombuffer(raw, dtype=dtype.newbyteorder("<"))
        if array.dtype != dtype:
            array = array.astype(dtype)
    array = array.reshape(shape)
    array.setflags(write=False)
    return array


# --------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------

_UNSUPPORTED_LISTED = 10  # unsupported layers an error message lists, one per line


def _unsupported_report(
    layers: list[Layer], xml_path: str, limit: int = _UNSUPPORTED_LISTED
) -> list[str]:
    """The lines that tell a user which layers ovpool's runtime cannot run.

    A head line counting them by kind, one line per layer for the first
    ``limit``, a count of the others, and the call that runs the model in
    OpenVINO with ovpool's extension instead. Used by :meth:`Model.__call__`
    and the ``ovpool`` command.

    Parameters
    ----------
    layers : list of Layer
        The layers ovpool's runtime cannot run (:attr:`Model.unsupported_layers`).
    xml_path : str
        The model's ``.xml``, quoted in the suggested call.
    limit : int, default 10
        Layers listed one per line; the others are counted.

    Returns
    -------
    list of str
        The lines, without trailing newlines.
    """
    kinds: dict[str, int] = {}
    for layer in layers:
        kind = f"{layer.type}-{layer.version}"
        kinds[kind] = kinds.get(kind, 0) + 1
    counts = ", ".join(f"{kind} x{n}" for kind, n in sorted(kinds.items()))
    lines = [
        f"ovpool's runtime cannot run {len(layers)} layer{'s' if len(layers) != 1 else ''} "
        f"of this model ({counts}):"
    ]
    lines += [
        f"  {layer.type} {layer.version} '{layer.name}' (id {layer.id}, line {layer.line}): "
        f"{layer.reason}"
        for layer in layers[:limit]
    ]
    if len(layers) > limit:
        lines.append(
            f"  ... and {len(layers) - limit} more "
            f"(`ovpool info --layers {xml_path}` lists every layer)"
        )
    lines += [
        "Run the model with OpenVINO and ovpool's extension instead "
        '(pip install "ovpool[openvino]"):',
        "  core = openvino.Core()",
        f"  model = ovpool.openvino.read_model(core, {str(xml_path)!r})",
    ]
    return lines


class Model:
    """An IR model read by :func:`read_model`; call it to run it.

    Attributes
    ----------
    path : str
        The ``.xml``.
    bin_path : str
        The ``.bin``.
    name : str
        The ``<net name=...>``.
    ir_version : str
        ``"10"`` or ``"11"``.
    layers : list of Layer
        Every layer, in document order.
    inputs : list of TensorInfo
        The Parameter layers, in document order (OpenVINO's order).
    outputs : list of TensorInfo
        The Result layers, in document order (OpenVINO's ``Model.outputs``).
    unsupported_layers : list of Layer
        The layers the outputs need that ovpool's runtime cannot run; calling
        the model raises :class:`~ovpool.IRError` listing them when this is
        not empty.

    Examples
    --------
    >>> from ovpool import ir
    >>> model = ir.read_model("ir_examples/cnn_openvino_route.xml")
    >>> model.runs_on_ovpool
    False
    >>> sorted({layer.type for layer in model.unsupported_layers})
    ['Convolution', 'ReLU']
    """

    path: str
    bin_path: str
    name: str
    ir_version: str
    layers: list[Layer]
    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    unsupported_layers: list[Layer]
    _by_id: dict[int, Layer]

    @classmethod
    def _new(cls, path, bin_path, name, ir_version, layer_list, by_id, order):
        self = cls.__new__(cls)
        self.path = path
        self.bin_path = bin_path
        self.name = name
        self.ir_version = ir_version
        self.layers = layer_list
        self._by_id = by_id
        self._order = order
        self._bin_size = 0
        self._consts = {}
        self._const_values = {}
        return self

    def _finish(self):
        self.inputs = []
        self.outputs = []
        for layer in self.layers:
            if layer.type == "Parameter" and layer.entry is not None:
                shape_attr = layer.attributes["shape"]
                bounds = None
                if shape_attr is not None:
                    bounds = tuple(
                        (d.lo, d.hi) if isinstance(d, Dim) else (d, d) for d in shape_attr
                    )
                port = layer.out_ports[0] if layer.out_ports else None
                names = port.names if port and port.names else ()
                t = layer.output_types[0]
                self.inputs.append(
                    TensorInfo(
                        names[0] if names else layer.name,
                        names or (layer.name,),
                        t.shape,
                        numpy_dtype(t.etype),
                        t.etype,
                        layer,
                        bounds,
                    )
                )
            elif layer.type == "Result":
                src_id, index = layer.sources[0]
                src = self._by_id[src_id]
                t = src.output_types[index]
                names = _Reader._names(layer.raw_attributes.get("output_names"))
                if not names:
                    names = src.out_ports[index].names
                self.outputs.append(
                    TensorInfo(
                        names[0] if names else layer.name,
                        names or (layer.name,),
                        t.shape,
                        numpy_dtype(t.etype),
                        t.etype,
                        layer,
                    )
                )
        if not self.outputs:
            raise _error(self.path, self.layers[0].line, "the model has no Result layer")
        # the layers the outputs depend on, in topological order
        needed, stack = set(), [o.layer.id for o in self.outputs]
        while stack:
            lid = stack.pop()
            if lid not in needed:
                needed.add(lid)
                stack.extend(src for src, _ in self._by_id[lid].sources)
        self._plan = [lid for lid in self._order if lid in needed]
        self.unsupported_layers = [
            self._by_id[lid] for lid in self._plan if not self._by_id[lid].runs_on_ovpool
        ]
        uses = {}
        for lid in self._plan:
            for src in self._by_id[lid].sources:
                uses[src] = uses.get(src, 0) + 1
        self._uses = uses
        # (layer id, input types, value inputs) -> the layer's output types:
        # a model called again on the same shapes skips shape inference (it
        # was half of a small pool layer's time per call)
        self._inferred = {}

    # -- properties --------------------------------------------------------

    @property
    def runs_on_ovpool(self) -> bool:
        """True if ovpool's runtime can run the whole model."""
        return not self.unsupported_layers

    def __repr__(self):
        ins = ", ".join(f"{i.name}: {i.element_type}{i.shape_str()}" for i in self.inputs)
        outs = ", ".join(f"{o.name}: {o.element_type}{o.shape_str()}" for o in self.outputs)
        return f"<ovpool.ir.Model {os.path.basename(self.path)!r} ({ins}) -> ({outs})>"

    # -- constants ---------------------------------------------------------

    def _const(self, layer):
        array = self._consts.get(layer.id)
        if array is None:
            a = layer.attributes
            try:
                _check_const_bytes(layer)  # (the budget may have changed since)
            except OvpoolError as exc:
                raise _error(self.path, layer.line, f"{layer.label}: {exc}") from None
            try:
                with open(self.bin_path, "rb") as f:
                    f.seek(a["offset"])
                    raw = f.read(a["size"])
                if len(raw) != a["size"]:
                    raise _error(
                        self.path,
                        layer.line,
                        f"{layer.label}: {self.bin_path} is shorter than when the model was read",
                    )
                array = _decode(raw, a["element_type"], tuple(a["shape"]))
            except OSError as exc:
                raise _error(
                    self.path,
                    layer.line,
                    f"{layer.label}: cannot read {self.bin_path}: {exc.strerror or exc}",
                ) from None
            except MemoryError:
                raise _error(
                    self.path,
                    layer.line,
                    f"{layer.label}: out of memory reading {a['size']} bytes of the constant",
                ) from None
            self._consts[layer.id] = array
        return array

    def _const_value(self, source):
        """The value of a small constant output (Const, or Convert of one), else None.

        Iterative, and each value is kept: a file may chain any number of
        Converts in front of a value input, or feed one chain to many layers."""
        known = self._const_values
        chain = []
        while source not in known:
            lid, index = source
            layer = self._by_id[lid]
            if (
                layer.reason is not None
                or layer.entry is None
                or layer.type not in ("Const", "Convert")
            ):
                known[source] = None
                break
            if layer.type == "Const":
                count = 1
                for d in layer.attributes["shape"]:
                    count *= d
                known[source] = self._const(layer) if count <= _MAX_CONST_VALUE_ELEMENTS else None
                break
            chain.append((source, layer))
            source = layer.sources[0]
        value = known[source]
        for source, layer in reversed(chain):  # the Converts, from the Const on
            if value is not None:
                value = layer.entry.run([value], layer.attributes)[0]
            known[source] = value
        return value

    # -- running -----------------------------------------------------------

    def _bind(self, args, kwargs):
        if kwargs:
            raise TypeError("pass inputs positionally or as one dict {name: array}")
        if len(args) == 1 and isinstance(args[0], dict):
            feeds = [None] * len(self.inputs)
            for key, value in args[0].items():
                matches = [
                    k
                    for k, info in enumerate(self.inputs)
                    if key == info.name or key in info.names or key == info.layer.name
                ]
                if not matches:
                    raise _error(
                        self.path,
                        None,
                        f"the model has no input {key!r}; its inputs are "
                        f"{[i.name for i in self.inputs]}",
                    )
                k = matches[0]
                if feeds[k] is not None:
                    raise _error(
                        self.path,
                        self.inputs[k].layer.line,
                        f"input {self.inputs[k].name!r} is given twice",
                    )
                feeds[k] = value
            for k, value in enumerate(feeds):
                if value is None:
                    raise _error(
                        self.path,
                        self.inputs[k].layer.line,
                        f"input {self.inputs[k].name!r} is missing",
                    )
            return feeds
        if len(args) != len(self.inputs):
            raise _error(
                self.path,
                None,
                f"the model takes {len(self.inputs)} inputs "
                f"{[i.name for i in self.inputs]}, got {len(args)}",
            )
        return list(args)

    def _check_input(self, info, value):
        where = info.layer.line
        if (
            isinstance(value, np.ndarray)
            and info.dtype is not None
            and value.dtype == info.dtype
            and (info.shape is None or value.shape == info.shape)
        ):
            return value  # the common case: no message to format
        expected = f"{info.element_type}{info.shape_str()}"
        if not isinstance(value, np.ndarray):
            try:
                value = np.asarray(value)
            except (TypeError, ValueError) as exc:
                raise _error(
                    self.path, where, f"input {info.name!r} is not an array: {exc}"
                ) from None
        if info.dtype is None or value.dtype != info.dtype:
            raise _error(
                self.path,
                where,
                f"input {info.name!r} must be {expected} "
                f"(numpy {info.dtype}), got a {value.dtype} array",
            )
        if info.shape is not None:
            ok = value.ndim == len(info.shape) and all(
                lo <= n and (hi is None or n <= hi) for n, (lo, hi) in zip(value.shape, info.bounds)
            )
            if not ok:
                raise _error(
                    self.path,
                    where,
                    f"input {info.name!r} must have shape {expected}, got {list(value.shape)}",
                )
        return value

    def __call__(self, *args: Any, **kwargs: Any) -> list[np.ndarray]:
        """Run the model on numpy arrays: ``model(x)``, ``model(x, y)`` or ``model({"x": x})``.

        Shapes are inferred per call (and remembered per input shapes), so
        dynamic and bounded dims take any size they allow. ``run`` is the
        same method.

        Parameters
        ----------
        *args : ndarray, or one dict of str to ndarray
            One array per input, in the order of :attr:`inputs`, or one dict
            keyed by input (tensor or layer) name. Each must have the input's
            dtype and a shape its dims allow.
        **kwargs
            Not accepted (a ``TypeError``): pass a dict.

        Returns
        -------
        list of ndarray
            One array per output, in the order of :attr:`outputs`; arrays the
            caller owns (never a view of an input or of a constant).

        Raises
        ------
        IRError
            If the model has layers ovpool's runtime does not run (listed one
            per line, the first 10, with the call that runs it in OpenVINO
            instead), or an input is missing, of the wrong dtype or shape, or
            a layer refuses its inputs.

        Examples
        --------
        >>> import numpy as np
        >>> from ovpool import ir
        >>> model = ir.read_model("ir_examples/avg_pool_1.xml")
        >>> x = np.ones(model.inputs[0].shape, np.float32)
        >>> [y.shape for y in model(x)] == [o.shape for o in model.outputs]
        True
        """
        if self.unsupported_layers:
            raise _error(
                self.path,
                self.unsupported_layers[0].line,
                "\n".join(_unsupported_report(self.unsupported_layers, self.path)),
            )
        feeds = self._bind(args, kwargs)
        feeds = [self._check_input(info, value) for info, value in zip(self.inputs, feeds)]
        feed_of = {info.layer.id: value for info, value in zip(self.inputs, feeds)}
        values, uses = {}, dict(self._uses)
        result_ids = {o.layer.id for o in self.outputs}
        for lid in self._plan:
            layer = self._by_id[lid]
            if layer.type == "Parameter":
                values[(lid, 0)] = feed_of[lid]
                continue
            if layer.type == "Const":
                values[(lid, 0)] = self._const(layer)
                continue
            if lid in result_ids:
                continue
            inputs = [values[src] for src in layer.sources]
            outputs = self._run_layer(layer, inputs)
            for src in layer.sources:  # free intermediates as soon as possible
                uses[src] -= 1
                if uses[src] == 0 and self._by_id[src[0]].type != "Const":
                    values.pop(src, None)
            for index, array in enumerate(outputs):
                values[(lid, index)] = array
        results, seen = [], set()
        fed = {id(v) for v in feeds}
        for info in self.outputs:
            array = values[info.layer.sources[0]]
            if id(array) in seen or id(array) in fed or not array.flags.writeable:
                try:
                    array = np.array(array, copy=True)
                except MemoryError:
                    raise _error(
                        self.path, info.layer.line, f"out of memory copying output {info.name!r}"
                    ) from None
            seen.add(id(array))
            results.append(array)
        return results

    run = __call__

    def _run_layer(self, layer, inputs):
        entry = layer.entry
        types = [
            TensorType(a.shape, t.etype)
            for a, t in zip(inputs, (self._by_id[s].output_types[i] for s, i in layer.sources))
        ]
        values = [inputs[k] if k in entry.value_inputs else None for k in range(len(inputs))]
        key = _inference_key(layer.id, types, values)
        try:
            out_types = self._inferred.get(key) if key is not None else None
            if out_types is None:
                out_types = entry.infer(types, layer.attributes, values)
                for t in out_types:
                    _check_size(
                        t.shape,
                        lambda n: OvpoolError(
                            f"an output of {n} elements is more than {MAX_TENSOR_ELEMENTS}"
                        ),
                    )
                    _check_bytes(layer, t)
                if key is not None:
                    if len(self._inferred) >= _INFERRED_MAX:
                        self._inferred.clear()
                    self._inferred[key] = out_types
            outputs = entry.run(inputs, layer.attributes)
        except OvpoolError as exc:
            raise _error(self.path, layer.line, f"{layer.label}: {exc}") from None
        except MemoryError:
            raise _error(self.path, layer.line, f"{layer.label}: out of memory") from None
        for t, array in zip(out_types, outputs):
            if t.shape is not None and None not in t.shape and tuple(array.shape) != t.shape:
                raise _error(
                    self.path,
                    layer.line,
                    f"{layer.label}: internal error: output shape "
                    f"{array.shape} differs from the inferred {t}",
                )
        return outputs

    # -- description -------------------------------------------------------

    def describe(self) -> list[dict[str, Any]]:
        """One dict per layer, as ``ovpool info`` prints them.

        Returns
        -------
        list of dict
            Per layer, in document order: ``id``, ``name``, ``type``,
            ``version``, ``line``, ``outputs`` (the output types as strings),
            ``runs_on_ovpool``, ``reason`` and ``used`` (whether an output
            depends on it).

        Examples
        --------
        >>> from ovpool import ir
        >>> rows = ir.read_model("ir_examples/max_pool_8.xml").describe()
        >>> [(r["type"], r["runs_on_ovpool"]) for r in rows][:2]
        [('Parameter', True), ('MaxPool', True)]
        """
        rows = []
        needed = set(self._plan)
        for layer in self.layers:
            rows.append(
                dict(
                    id=layer.id,
                    name=layer.name,
                    type=layer.type,
                    version=layer.version,
                    line=layer.line,
                    outputs=[str(t) for t in layer.output_types],
                    runs_on_ovpool=layer.runs_on_ovpool,
                    reason=layer.reason,
                    used=layer.id in needed,
                )
            )
        return rows
