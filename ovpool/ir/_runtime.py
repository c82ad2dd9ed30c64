"""The IR runtime: a model that :mod:`ovpool.ir._reader` read, executed on
numpy arrays, each layer through the layer table (:mod:`ovpool.layers`) on
ovpool's kernels; its inputs, outputs and the layers it cannot run.
:mod:`ovpool.ir` is the public API.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import OvpoolError
from ..layers import Dim, TensorType, numpy_dtype
from ._reader import Layer, _check_bytes, _check_size, _error, names_of

# --------------------------------------------------------------------------
# Inputs and outputs
# --------------------------------------------------------------------------


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


def _info(names, layer, t, bounds=None):
    """The TensorInfo of a Parameter or Result layer of type ``t``."""
    return TensorInfo(
        names[0] if names else layer.name,
        names or (layer.name,),
        t.shape,
        numpy_dtype(t.etype),
        t.etype,
        layer,
        bounds,
    )


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
    def _of(cls, graph):
        """The model of a graph the reader read (:mod:`ovpool.ir._reader`)."""
        self = cls.__new__(cls)
        self.path = graph.path
        self.bin_path = graph.bin_path
        self.name = graph.name
        self.ir_version = graph.ir_version
        self.layers = graph.layers
        self._by_id = graph.by_id
        self._order = graph.order
        self._weights = graph.weights
        self._limits = graph.limits
        self._finish()
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
                self.inputs.append(_info(names, layer, layer.output_types[0], bounds))
            elif layer.type == "Result":
                src_id, index = layer.sources[0]
                src = self._by_id[src_id]
                names = names_of(layer.raw_attributes.get("output_names"))
                if not names:
                    names = src.out_ports[index].names
                self.outputs.append(_info(names, layer, src.output_types[index]))
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
        return self._weights.const(layer)

    def _const_value(self, source):
        """The value of a small constant output (Const, or Converts of one),
        else None (the reader's :meth:`~ovpool.ir._reader.Weights.value`)."""
        return self._weights.value(source)

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
                        self._limits.tensor_elements,
                        lambda n: OvpoolError(
                            f"an output of {n} elements is more than {self._limits.tensor_elements}"
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
