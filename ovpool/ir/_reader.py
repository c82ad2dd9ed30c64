"""The IR reader: an OpenVINO IR ``.xml`` and its ``.bin`` read into a
validated graph, every error an :class:`~ovpool.IRError` naming the file
and line.

It parses the XML (refusing DTDs and entities before parsing, checking every
size a file claims), looks every layer up in the layer table
(:mod:`ovpool.layers`), reads ports and edges, orders the layers, checks the
constants against the ``.bin`` and the memory budget, and infers every
layer's output types. :mod:`ovpool.ir._runtime` executes the graph;
:mod:`ovpool.ir` is the public API of both.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .. import layers as _layers
from .._limits import check_budget
from ..errors import IRError, OvpoolError
from ..layers import Dim, TensorType, element_nbytes, numpy_dtype


class Limits(NamedTuple):
    """What one read accepts (``ovpool.ir``'s MAX_XML_BYTES,
    MAX_TENSOR_ELEMENTS and MAX_ATTRIBUTES, as they were at the read)."""

    xml_bytes: int
    tensor_elements: int
    attributes: int


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
# The graph
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


@dataclass
class Graph:
    """A model as read: its layers (validated, their output types inferred),
    in document order and in topological order, and its weights."""

    path: str
    bin_path: str
    name: str
    ir_version: str
    layers: list  # of Layer, in document order
    by_id: dict
    order: list  # layer ids, each after the layers it reads
    weights: Weights
    limits: Limits


class Weights:
    """The .bin of a model: the data of its Const layers, each read (and
    checked against the memory budget again) when first needed."""

    def __init__(self, path, bin_path, by_id):
        self.path = path  # the .xml, for messages
        self.bin_path = bin_path
        self.by_id = by_id
        self.size = 0  # the .bin's bytes (set once the Consts are checked)
        self._arrays = {}
        self._values = {}

    def const(self, layer):
        """The data of a Const layer (read-only, decoded), read once."""
        array = self._arrays.get(layer.id)
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
            self._arrays[layer.id] = array
        return array

    def value(self, source):
        """The value of a small constant output (Const, or Convert of one), else None.

        Iterative, and each value is kept: a file may chain any number of
        Converts in front of a value input, or feed one chain to many layers."""
        known = self._values
        chain = []
        while source not in known:
            lid, index = source
            layer = self.by_id[lid]
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
                known[source] = self.const(layer) if count <= _MAX_CONST_VALUE_ELEMENTS else None
                break
            chain.append((source, layer))
            source = layer.sources[0]
        value = known[source]
        for source, layer in reversed(chain):  # the Converts, from the Const on
            if value is not None:
                value = layer.entry.run([value], layer.attributes)[0]
            known[source] = value
        return value


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


def read(xml_path, bin_path, limits):
    """The :class:`Graph` of the IR ``xml_path`` (``bin_path`` None: the
    ``.bin`` beside it) within ``limits``; :class:`~ovpool.IRError` for a file
    that cannot be read, is malformed or hostile."""
    return _Reader(xml_path, bin_path, limits).read()


def names_of(text):
    """The tensor names of a ``names=`` attribute, sorted (a backslash
    escapes a comma within a name)."""
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


class _Reader:
    def __init__(self, xml_path, bin_path, limits):
        self.path = os.fspath(xml_path)
        if bin_path is None:
            bin_path = os.path.splitext(self.path)[0] + ".bin"
        self.bin_path = os.fspath(bin_path)
        self.limits = limits

    def err(self, where, message):
        return _error(self.path, where, message)

    def _checked(self, element):
        """``element``, refused if it has more than the limit of attributes
        (``ovpool.ir.MAX_ATTRIBUTES``; counting them is one linear walk)."""
        n = len(element.attrib)
        if n > self.limits.attributes:
            raise self.err(
                element,
                f"<{element.tag}> has {n} attributes, more than "
                f"{self.limits.attributes}; ovpool refuses it",
            )
        return element

    def _attributes(self, element):
        """Every attribute of ``element`` as a dict, in time linear in their number."""
        if len(self._checked(element).attrib) <= _FEW_ATTRIBUTES:
            return dict(element.attrib)
        return {str(value.attrname): str(value) for value in element.xpath("@*")}

    # -- the XML document --------------------------------------------------

    def _read_bytes(self):
        limit = self.limits.xml_bytes
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
            most = self.limits.tensor_elements
            if not match or int(match.group(1)) > most:
                raise self.err(dim, f"bad dimension {text!r} (a dim is -1 or a size <= {most})")
            dims.append(int(match.group(1)))
            if len(dims) > 64:
                raise self.err(port, "a port with more than 64 dims")
        return tuple(dims)

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
                            names_of(port.get("names")),
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
        graph = Graph(
            self.path,
            self.bin_path,
            root.get("name", ""),
            ir_version,
            layer_list,
            by_id,
            order,
            Weights(self.path, self.bin_path, by_id),
            self.limits,
        )
        self._check_consts(graph)
        self._infer(graph)
        return graph

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
            out = self._edge_port(edge, "from", src, outs[src_id], src_port)
            inp = self._edge_port(edge, "to", dst, ins[dst_id], dst_port)
            index = inp.index
            if dst.sources[index] is not None:
                raise self.err(edge, f"input port {dst_port} of {dst.label} has two incoming edges")
            dst.sources[index] = (src_id, out.index)

    def _edge_port(self, edge, end, layer, ports, pid):
        """Port ``pid`` of ``layer`` at the ``end`` ("from" or "to") of
        ``edge``, from ``ports`` (its output or input ports by id)."""
        port = ports.get(pid)
        if port is None:
            kind = "output" if end == "from" else "input"
            known = _ids(layer.out_ports if end == "from" else layer.in_ports)
            raise self.err(
                edge,
                f"edge {end} a missing port: {layer.label} has no {kind} port "
                f"{pid} (its {kind}s: {known})",
            )
        return port

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

    def _check_consts(self, graph):
        consts = [layer for layer in graph.layers if layer.type == "Const" and layer.entry]
        if not consts:
            return
        try:
            graph.weights.size = os.stat(self.bin_path).st_size
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
            most = self.limits.tensor_elements
            if count > most:
                raise self.err(layer.line, f"{where} claims {count} elements, more than {most}")
            if a["offset"] + a["size"] > graph.weights.size:
                raise self.err(
                    layer.line,
                    f"{where} reads past the end of {self.bin_path} ({graph.weights.size} bytes)",
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

    def _infer(self, graph):
        opaque = set()  # layers whose types come from the declared port dims
        for lid in graph.order:
            layer = graph.by_id[lid]
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
            inputs = [graph.by_id[s].output_types[i] for s, i in layer.sources]
            values = [
                graph.weights.value(src) if k in layer.entry.value_inputs else None
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
                    self.limits.tensor_elements,
                    lambda n: self.err(
                        layer.line,
                        f"{layer.label}: an output of {n} elements is more than "
                        f"{self.limits.tensor_elements}",
                    ),
                )
                if layer.type != "Parameter":  # (an input's memory is the caller's)
                    try:
                        _check_bytes(layer, t)
                    except OvpoolError as exc:
                        raise self.err(layer.line, f"{layer.label}: {exc}") from None
            layer.output_types = types
            layer.output_bounds = self._bounds(graph, layer, types, values)

    @staticmethod
    def _bounds(graph, layer, types, values):
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
            graph.by_id[s].output_bounds[i] if i < len(graph.by_id[s].output_bounds) else None
            for s, i in layer.sources
        ]
        inputs = [graph.by_id[s].output_types[i] for s, i in layer.sources]
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


def _check_size(shape, most, make_error):
    """``make_error(n)`` raised when the known dims of ``shape`` hold more than
    ``most`` elements."""
    if shape is None:
        return
    n = 1
    for d in shape:
        if d is not None:
            n *= d
    if n > most:
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
