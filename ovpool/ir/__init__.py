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

from ..errors import IRError as IRError  # (its errors, as ovpool.ir always had them)
from . import _reader
from ._reader import Layer
from ._reader import Port as Port
from ._runtime import Model, TensorInfo

__all__ = [
    "read_model",
    "Model",
    "Layer",
    "TensorInfo",
    "MAX_XML_BYTES",
    "MAX_TENSOR_ELEMENTS",
    "MAX_ATTRIBUTES",
]

# This module is the public API of the reader (XML, weights, validation,
# line-numbered errors: _reader.py) and of the runtime (graph execution:
# _runtime.py). The limits are read at each read_model, so that they may be
# changed here.

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
    limits = _reader.Limits(MAX_XML_BYTES, MAX_TENSOR_ELEMENTS, MAX_ATTRIBUTES)
    return Model._of(_reader.read(xml_path, bin_path, limits))
