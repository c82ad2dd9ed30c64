"""Independent references for the tests (not a test module).

* :func:`onnx_reference` runs a one-node ONNX model with ``onnx.reference``.
* :func:`onnxruntime_run` runs the same model with ONNX Runtime (IR version
  10: ORT 1.31 refuses IR version 14, which onnx 1.23 writes by default).
* ``torch_*`` wrap ``torch.nn.functional`` and return numpy arrays.
* ``ov_*`` build a one-op ``openvino.Model`` from the opset builders and run
  it on the CPU plugin in f32 (the CPU's default inference precision on this
  machine is bf16, useless for comparisons).

Every wrapper imports its library lazily, so a test module can
``pytest.importorskip`` the library it needs before calling it. Nothing in
here calls ovpool.
"""

from __future__ import annotations

import functools

import numpy as np

ORT_IR_VERSION = 10
DEFAULT_OPSET = 22


# --------------------------------------------------------------------------
# ONNX: one-node models, onnx.reference and onnxruntime
# --------------------------------------------------------------------------


def onnx_node_model(
    op_type,
    inputs,
    attrs,
    n_outputs=1,
    *,
    opset=DEFAULT_OPSET,
    ir_version=ORT_IR_VERSION,
    output_dtypes=None,
):
    """A model with one node ``op_type(inputs...) -> n_outputs`` and no initialisers.

    ``inputs`` is a list of numpy arrays named ``in0, in1, ...``. Output 0 has
    the dtype of input 0, output 1 (MaxPool's Indices) int64, unless
    ``output_dtypes`` says otherwise.
    """
    from onnx import helper

    names = [f"in{i}" for i in range(len(inputs))]
    graph_inputs = [
        helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape))
        for name, a in zip(names, inputs)
    ]
    if output_dtypes is None:
        output_dtypes = [inputs[0].dtype, np.dtype(np.int64)][:n_outputs]
    outputs = [
        helper.make_tensor_value_info(
            f"out{i}", helper.np_dtype_to_tensor_dtype(np.dtype(dt)), None
        )
        for i, dt in enumerate(output_dtypes)
    ]
    node = helper.make_node(
        op_type,
        names,
        [o.name for o in outputs],
        **{k: v for k, v in attrs.items() if v is not None},
    )
    graph = helper.make_graph([node], f"{op_type.lower()}_test", graph_inputs, outputs)
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version
    )


def onnx_reference(op_type, inputs, attrs, n_outputs=1, *, opset=DEFAULT_OPSET):
    """Outputs of ``onnx.reference.ReferenceEvaluator`` (list of arrays)."""
    from onnx.reference import ReferenceEvaluator

    model = onnx_node_model(op_type, inputs, attrs, n_outputs, opset=opset)
    feeds = {f"in{i}": a for i, a in enumerate(inputs)}
    return [np.asarray(o) for o in ReferenceEvaluator(model).run(None, feeds)]


def onnxruntime_run(op_type, inputs, attrs, n_outputs=1, *, opset=DEFAULT_OPSET):
    """Outputs of ONNX Runtime's CPU provider (list of arrays).

    Raises whatever ORT raises when it refuses the model (e.g. pads >= kernel).
    """
    import onnxruntime as ort

    model = onnx_node_model(op_type, inputs, attrs, n_outputs, opset=opset)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 4
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    feeds = {f"in{i}": a for i, a in enumerate(inputs)}
    return [np.asarray(o) for o in session.run(None, feeds)]


def onnx_pool_attrs(
    kernel_shape,
    *,
    strides=None,
    pads=None,
    dilations=None,
    auto_pad="NOTSET",
    ceil_mode=0,
    **extra,
):
    """ONNX pool attributes with ovpool's keyword names (None = omitted)."""
    attrs = dict(kernel_shape=list(kernel_shape), auto_pad=auto_pad, ceil_mode=int(ceil_mode))
    if strides is not None:
        attrs["strides"] = list(strides)
    if pads is not None:
        attrs["pads"] = list(pads)
    if dilations is not None:
        attrs["dilations"] = list(dilations)
    attrs.update(extra)
    return attrs


# --------------------------------------------------------------------------
# torch.nn.functional
# --------------------------------------------------------------------------


def _torch():
    import torch

    return torch


def _fn(name, n_spatial):
    import torch.nn.functional as F

    return getattr(F, f"{name}{n_spatial}d")


def torch_avg_pool(x, kernel, stride, padding, *, ceil_mode=False, count_include_pad=True):
    """``F.avg_poolNd`` (symmetric ``padding``, one int per spatial dim)."""
    torch = _torch()
    n = x.ndim - 2
    with torch.no_grad():
        y = _fn("avg_pool", n)(
            torch.from_numpy(np.ascontiguousarray(x)),
            list(kernel),
            list(stride),
            list(padding),
            ceil_mode=ceil_mode,
            count_include_pad=count_include_pad,
        )
    return y.numpy()


def torch_max_pool(x, kernel, stride, padding, dilation, *, ceil_mode=False):
    """``F.max_poolNd(..., return_indices=True)``: (values, per-plane indices)."""
    torch = _torch()
    n = x.ndim - 2
    with torch.no_grad():
        y, i = _fn("max_pool", n)(
            torch.from_numpy(np.ascontiguousarray(x)),
            list(kernel),
            list(stride),
            list(padding),
            list(dilation),
            ceil_mode=ceil_mode,
            return_indices=True,
        )
    return y.numpy(), i.numpy()


def torch_adaptive_avg_pool(x, output_size):
    torch = _torch()
    n = x.ndim - 2
    with torch.no_grad():
        return _fn("adaptive_avg_pool", n)(
            torch.from_numpy(np.ascontiguousarray(x)), list(output_size)
        ).numpy()


def torch_adaptive_max_pool(x, output_size):
    """(values, per-plane indices)."""
    torch = _torch()
    n = x.ndim - 2
    with torch.no_grad():
        y, i = _fn("adaptive_max_pool", n)(
            torch.from_numpy(np.ascontiguousarray(x)), list(output_size), return_indices=True
        )
    return y.numpy(), i.numpy()


def torch_max_unpool(x, plane_indices, kernel, stride, padding, output_size):
    """``F.max_unpoolNd`` with per-plane indices; ``output_size`` spatial only."""
    torch = _torch()
    n = x.ndim - 2
    with torch.no_grad():
        return _fn("max_unpool", n)(
            torch.from_numpy(np.ascontiguousarray(x)),
            torch.from_numpy(np.ascontiguousarray(plane_indices)),
            list(kernel),
            list(stride),
            list(padding),
            output_size=list(output_size),
        ).numpy()


def plane_to_flat_indices(indices, spatial_shape):
    """Per-(n, c)-plane indices (torch) -> indices flat over the whole tensor (ONNX)."""
    indices = np.asarray(indices, dtype=np.int64)
    n, c = indices.shape[:2]
    plane = int(np.prod(spatial_shape))
    base = (np.arange(n * c, dtype=np.int64) * plane).reshape((n, c) + (1,) * (indices.ndim - 2))
    return indices + base


def flat_to_plane_indices(indices, spatial_shape):
    """Indices flat over the whole tensor -> per-(n, c)-plane indices."""
    return np.asarray(indices, dtype=np.int64) % int(np.prod(spatial_shape))


# --------------------------------------------------------------------------
# OpenVINO (CPU plugin, f32)
# --------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def ov_core():
    import openvino as ov

    return ov.Core()


def ov_run(build, inputs):
    """Build ``build(*parameters) -> node`` around ``inputs``, compile on CPU in
    f32 and return the outputs as numpy arrays (one per node output)."""
    import openvino as ov
    import openvino.opset8 as ops8

    params = [ops8.parameter(list(a.shape), ov.Type(a.dtype)) for a in inputs]
    node = build(*params)
    model = ov.Model(node.outputs(), params, "ovpool_test")
    compiled = ov_core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled(list(inputs))
    return [np.array(result[o]) for o in compiled.outputs]


def ov_avg_pool(
    x,
    kernel,
    strides,
    pads_begin,
    pads_end,
    *,
    exclude_pad=True,
    rounding_type="floor",
    auto_pad="explicit",
    dilations=None,
):
    """AvgPool-16 when ``dilations`` is given, else AvgPool-14."""
    if dilations is not None:
        import openvino.opset16 as ops

        def build(p):
            return ops.avg_pool(
                p,
                list(strides),
                list(pads_begin),
                list(pads_end),
                list(kernel),
                exclude_pad,
                rounding_type,
                auto_pad,
                dilations=list(dilations),
            )
    else:
        import openvino.opset14 as ops

        def build(p):
            return ops.avg_pool(
                p,
                list(strides),
                list(pads_begin),
                list(pads_end),
                list(kernel),
                exclude_pad,
                rounding_type,
                auto_pad,
            )

    return ov_run(build, [x])[0]


def ov_max_pool(
    x,
    kernel,
    strides,
    pads_begin,
    pads_end,
    *,
    dilations=None,
    rounding_type="floor",
    auto_pad="explicit",
    axis=0,
    index_element_type="i64",
):
    """MaxPool-14: (values, indices)."""
    import openvino.opset14 as ops

    dilations = [1] * len(kernel) if dilations is None else list(dilations)

    def build(p):
        return ops.max_pool(
            p,
            list(strides),
            dilations,
            list(pads_begin),
            list(pads_end),
            list(kernel),
            rounding_type,
            auto_pad,
            index_element_type,
            axis,
        )

    return ov_run(build, [x])


def ov_adaptive_avg_pool(x, output_size):
    import openvino.opset8 as ops

    def build(p):
        return ops.adaptive_avg_pool(p, ops.constant(np.asarray(output_size, np.int64)))

    return ov_run(build, [x])[0]


def ov_adaptive_max_pool(x, output_size, index_element_type="i32"):
    import openvino.opset8 as ops

    def build(p):
        return ops.adaptive_max_pool(
            p, ops.constant(np.asarray(output_size, np.int64)), index_element_type
        )

    return ov_run(build, [x])


# ONNX backend node test cases of the pooling ops (onnx.backend.test.case.node)
ONNX_POOL_OPS = {
    "AveragePool",
    "MaxPool",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "LpPool",
    "GlobalLpPool",
    "MaxUnpool",
}


def onnx_pool_cases():
    """The pooling cases of the ONNX backend node test suite shipped in onnx."""
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases(None)
    return [c for c in cases if {n.op_type for n in c.model.graph.node} & ONNX_POOL_OPS]
