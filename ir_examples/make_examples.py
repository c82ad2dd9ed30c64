"""Regenerate ovpool's IR examples: ``python ir_examples/make_examples.py``.

Needs openvino (which writes the IR with its own ``ov.save_model``) and torch
(the reference where OpenVINO's CPU plugin deviates from its specification).
Every example is a pair ``NAME.xml`` + ``NAME.bin`` plus ``NAME.npz`` holding
a fixed seeded input (``in_0, ...``), the expected outputs (``out_0, ...`` in
``Model.outputs`` order) and a JSON ``meta``:

* ``reference: "openvino"``: the outputs are OpenVINO's native CPU result
  (``INFERENCE_PRECISION_HINT=f32``);
* ``reference: "spec"``: OpenVINO's CPU plugin deviates from its operation
  specification and from PyTorch on this model; the outputs are PyTorch's
  (= the specification's), ``deviation`` says how, and
  ``openvino_max_abs_diff`` how far OpenVINO's CPU result is from them;
* ``openvino_route: true``: the model has layers ovpool's runtime does not run
  (Convolution, ...); the outputs are OpenVINO's, for OpenVINO with ovpool's
  extension.

``ovpool check ir_examples/`` then runs every example on ovpool's runtime and
compares it with OpenVINO (when installed) or with the .npz.

The ``ovpool_opset*`` examples are in ovpool's own opset ("ovpool"), written
after ovpool's OpenVINO extension (``ovpool.openvino``) mapped the pools onto
it; OpenVINO runs them with the extension registered (``_check.run_openvino``
does), ovpool's runtime without OpenVINO.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import openvino as ov
import openvino.opset1 as ov1
import openvino.opset8 as ov8
import openvino.opset14 as ov14
import openvino.opset16 as ov16

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import ovpool  # noqa: F401  (installed, or on PYTHONPATH)
except ImportError:  # run from a source checkout with an in-place build
    sys.path.insert(0, os.path.dirname(HERE))

from ovpool import _check, ir  # noqa: E402

EXAMPLES = []


def example(name, description, *, spec=None, deviation=None, short=None, openvino_route=False):
    """Register ``build() -> (ov.Model, [inputs])``; ``spec(inputs) -> outputs``
    (torch) when OpenVINO's CPU plugin deviates on this model, ``deviation``
    saying how and ``short`` in a few words."""

    def register(build):
        EXAMPLES.append(
            dict(
                name=name,
                description=description,
                build=build,
                spec=spec,
                deviation=deviation,
                short=short,
                openvino_route=openvino_route,
            )
        )
        return build

    return register


def rng_of(seed):
    return np.random.default_rng(20261122 + seed)


def param(shape, name, dtype=np.float32):
    node = ov8.parameter(
        ov.PartialShape(shape) if not isinstance(shape, ov.PartialShape) else shape,
        dtype,
        name=name,
    )
    node.output(0).set_names({name})
    return node


def named(node, name):
    node.set_friendly_name(name)
    return node


def result(output, name):
    output.add_names({name})
    node = ov8.result(output)
    node.set_friendly_name(f"{name}/result")
    return node


def const(value, name):
    return named(ov8.constant(value), name)


def model(results, params, name):
    return ov.Model(results, params, name)


# --------------------------------------------------------------------------
# One example per supported layer and version
# --------------------------------------------------------------------------


@example("adaptive_avg_pool_8", "AdaptiveAvgPool-8, 2D 13x11 -> 5x7, i64 output_size")
def build_adaptive_avg_pool():
    x = param([2, 3, 13, 11], "x")
    y = named(ov8.adaptive_avg_pool(x, const(np.array([5, 7], np.int64), "output_size")), "pool")
    return model([result(y.output(0), "y")], [x], "adaptive_avg_pool_8"), [
        rng_of(1).standard_normal((2, 3, 13, 11)).astype(np.float32)
    ]


@example(
    "adaptive_avg_pool_8_3d",
    "AdaptiveAvgPool-8, 3D 9x10x11 -> 4x3x5 (i32 output_size), "
    "and an output larger than the input (3 -> 8)",
)
def build_adaptive_avg_pool_3d():
    x = param([1, 2, 9, 10, 3], "x")
    y = named(ov8.adaptive_avg_pool(x, const(np.array([4, 3, 8], np.int32), "output_size")), "pool")
    return model([result(y.output(0), "y")], [x], "adaptive_avg_pool_8_3d"), [
        rng_of(2).standard_normal((1, 2, 9, 10, 3)).astype(np.float32)
    ]


@example("adaptive_max_pool_8_i32", "AdaptiveMaxPool-8, 1D 50 -> 7, i32 indices, both outputs")
def build_adaptive_max_pool_i32():
    x = param([2, 3, 50], "x")
    y = named(
        ov8.adaptive_max_pool(
            x, const(np.array([7], np.int64), "output_size"), index_element_type="i32"
        ),
        "pool",
    )
    return model(
        [result(y.output(0), "values"), result(y.output(1), "indices")],
        [x],
        "adaptive_max_pool_8_i32",
    ), [rng_of(3).standard_normal((2, 3, 50)).astype(np.float32)]


def _torch_adaptive_max(inputs, size, index_dtype=np.int64):
    import torch

    x = torch.from_numpy(inputs[0])
    fn = {
        3: torch.nn.functional.adaptive_max_pool1d,
        4: torch.nn.functional.adaptive_max_pool2d,
        5: torch.nn.functional.adaptive_max_pool3d,
    }[x.dim()]
    values, indices = fn(x, size, return_indices=True)
    return [values.numpy(), indices.numpy().astype(index_dtype)]


@example(
    "adaptive_max_pool_8_i64",
    "AdaptiveMaxPool-8, 2D 17x6 -> 5x4, default i64 indices",
    spec=lambda inputs: _torch_adaptive_max(inputs, (5, 4)),
    short="i64 indices do not compile on OpenVINO's CPU plugin",
    deviation="AdaptiveMaxPool-8 with i64 indices (the default) does not compile on "
    "OpenVINO's CPU plugin ('CPU plugin does not support i64 for use with "
    "oneDNN'); outputs from torch.nn.functional.adaptive_max_pool2d",
)
def build_adaptive_max_pool_i64():
    x = param([1, 3, 17, 6], "x")
    y = named(ov8.adaptive_max_pool(x, const(np.array([5, 4], np.int64), "output_size")), "pool")
    return model(
        [result(y.output(0), "values"), result(y.output(1), "indices")],
        [x],
        "adaptive_max_pool_8_i64",
    ), [rng_of(4).standard_normal((1, 3, 17, 6)).astype(np.float32)]


@example("avg_pool_1", "AvgPool-1, 2D k3 s2 pads 1/1, exclude-pad, rounding_type ceil")
def build_avg_pool_1():
    x = param([1, 4, 14, 14], "x")
    y = named(ov1.avg_pool(x, [2, 2], [1, 1], [1, 1], [3, 3], True, "ceil"), "pool")
    return model([result(y.output(0), "y")], [x], "avg_pool_1"), [
        rng_of(5).standard_normal((1, 4, 14, 14)).astype(np.float32)
    ]


@example("avg_pool_14", "AvgPool-14, 1D k4 s3 pads 2/1, exclude-pad, rounding_type ceil_torch")
def build_avg_pool_14():
    x = param([2, 4, 20], "x")
    y = named(ov14.avg_pool(x, [3], [2], [1], [4], True, "ceil_torch"), "pool")
    return model([result(y.output(0), "y")], [x], "avg_pool_14"), [
        rng_of(6).standard_normal((2, 4, 20)).astype(np.float32)
    ]


@example(
    "avg_pool_16",
    "AvgPool-16, 3D k(2,3,3) s(1,2,2) dilations (2,1,2), auto_pad same_lower, exclude-pad false",
)
def build_avg_pool_16():
    x = param([1, 2, 7, 8, 9], "x")
    y = named(
        ov16.avg_pool(
            x,
            [1, 2, 2],
            [0, 0, 0],
            [0, 0, 0],
            [2, 3, 3],
            False,
            "floor",
            "same_lower",
            dilations=[2, 1, 2],
        ),
        "pool",
    )
    return model([result(y.output(0), "y")], [x], "avg_pool_16"), [
        rng_of(7).standard_normal((1, 2, 7, 8, 9)).astype(np.float32)
    ]


@example("max_pool_1", "MaxPool-1, 2D k3 s2, rounding_type ceil (a last window in the padding)")
def build_max_pool_1():
    x = param([1, 3, 15, 16], "x")
    y = named(ov1.max_pool(x, [2, 2], [0, 0], [0, 0], [3, 3], "ceil"), "pool")
    return model([result(y.output(0), "y")], [x], "max_pool_1"), [
        rng_of(8).standard_normal((1, 3, 15, 16)).astype(np.float32)
    ]


@example(
    "max_pool_8",
    "MaxPool-8, 2D k3 s2 dilations 2 pads 1/2, axis 0 (indices over the whole "
    "tensor), i64 indices, integer-valued input (ties: the first maximum)",
)
def build_max_pool_8():
    x = param([2, 3, 12, 13], "x")
    y = named(
        ov8.max_pool(x, [2, 2], [2, 2], [1, 1], [2, 2], [3, 3], "floor", None, "i64", 0), "pool"
    )
    return model(
        [result(y.output(0), "values"), result(y.output(1), "indices")], [x], "max_pool_8"
    ), [np.round(rng_of(9).standard_normal((2, 3, 12, 13)) * 2).astype(np.float32)]


@example(
    "max_pool_14",
    "MaxPool-14, 3D k2 s2 pads 1/1 rounding_type ceil_torch, axis 2 (indices "
    "per plane, like torch), i32 indices",
)
def build_max_pool_14():
    x = param([1, 2, 5, 6, 7], "x")
    y = named(
        ov14.max_pool(
            x, [2, 2, 2], [1, 1, 1], [1, 1, 1], [1, 1, 1], [2, 2, 2], "ceil_torch", None, "i32", 2
        ),
        "pool",
    )
    return model(
        [result(y.output(0), "values"), result(y.output(1), "indices")], [x], "max_pool_14"
    ), [rng_of(10).standard_normal((1, 2, 5, 6, 7)).astype(np.float32)]


# --------------------------------------------------------------------------
# Graph-level examples
# --------------------------------------------------------------------------


@example(
    "dynamic_shape",
    "dynamic batch and bounded spatial dims (?,3,8..32,8..32): "
    "AvgPool-14 same_upper and AdaptiveAvgPool-8; input 3x3x17x20",
)
def build_dynamic_shape():
    shape = ov.PartialShape([ov.Dimension(), 3, ov.Dimension(8, 32), ov.Dimension(8, 32)])
    x = param(shape, "x")
    a = named(ov14.avg_pool(x, [2, 2], [0, 0], [0, 0], [3, 3], True, "floor", "same_upper"), "avg")
    b = named(
        ov8.adaptive_avg_pool(x, const(np.array([4, 4], np.int64), "output_size")), "adaptive"
    )
    return model(
        [result(a.output(0), "avg"), result(b.output(0), "adaptive")], [x], "dynamic_shape"
    ), [rng_of(11).standard_normal((3, 3, 17, 20)).astype(np.float32)]


@example(
    "compressed_consts",
    "save_model's default compress_to_fp16: a float Const stored as "
    "f16 + Convert(decompression) to f32, pooled; integer Consts kept",
)
def build_compressed_consts():
    x = param([1, 2, 8, 8], "x")
    table = named(
        ov8.constant(rng_of(12).standard_normal((1, 2, 8, 8)).astype(np.float32)), "table"
    )
    pooled_table = named(ov1.max_pool(table, [2, 2], [0, 0], [0, 0], [2, 2]), "table_pool")
    pooled_x = named(
        ov8.adaptive_avg_pool(x, const(np.array([4, 4], np.int64), "output_size")), "x_pool"
    )
    return model(
        [result(pooled_x.output(0), "x_pooled"), result(pooled_table.output(0), "table_pooled")],
        [x],
        "compressed_consts",
    ), [rng_of(13).standard_normal((1, 2, 8, 8)).astype(np.float32)]


@example(
    "chain",
    "a chain of pools: MaxPool-14 -> AvgPool-16 -> AdaptiveAvgPool-8 -> AdaptiveMaxPool-8 (i32)",
)
def build_chain():
    x = param([2, 4, 32, 30], "x")
    a = named(
        ov14.max_pool(x, [2, 2], [1, 1], [1, 1], [1, 1], [3, 3], "ceil_torch", None, "i64", 0),
        "max",
    )
    b = named(
        ov16.avg_pool(
            a.output(0), [1, 1], [1, 1], [1, 1], [3, 3], True, "floor", None, dilations=[2, 2]
        ),
        "avg",
    )
    c = named(ov8.adaptive_avg_pool(b, const(np.array([7, 5], np.int64), "size_c")), "adaptive_avg")
    d = named(
        ov8.adaptive_max_pool(
            c, const(np.array([3, 3], np.int64), "size_d"), index_element_type="i32"
        ),
        "adaptive_max",
    )
    return model([result(d.output(0), "values"), result(d.output(1), "indices")], [x], "chain"), [
        rng_of(14).standard_normal((2, 4, 32, 30)).astype(np.float32)
    ]


@example(
    "multi_output",
    "two inputs (f32 and f16) and five outputs, Results not in layer-id "
    "order: MaxPool-8 values and indices, AvgPool-1, AdaptiveMaxPool-8, "
    "and an input passed through",
)
def build_multi_output():
    x = param([1, 3, 10, 10], "x")
    h = param([2, 2, 9], "h", np.float16)
    m = named(
        ov8.max_pool(x, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2], "floor", None, "i32", 1), "max"
    )
    a = named(ov1.avg_pool(h, [2], [1], [1], [3], False, "floor"), "avg_f16")
    b = named(
        ov8.adaptive_max_pool(h, const(np.array([4], np.int32), "size"), index_element_type="i32"),
        "adaptive_max_f16",
    )
    results = [
        result(a.output(0), "avg_f16"),
        result(m.output(1), "max_indices"),
        result(b.output(0), "adaptive_values"),
        result(m.output(0), "max_values"),
        result(x.output(0), "x_copy"),
    ]
    return model(results, [x, h], "multi_output"), [
        rng_of(15).standard_normal((1, 3, 10, 10)).astype(np.float32),
        rng_of(16).standard_normal((2, 2, 9)).astype(np.float16),
    ]


# --------------------------------------------------------------------------
# Where OpenVINO's CPU plugin deviates from its specification
# --------------------------------------------------------------------------


def _torch_avg_pool_ceil_include(inputs):
    import torch

    y = torch.nn.functional.avg_pool2d(
        torch.from_numpy(inputs[0]), 3, stride=2, padding=1, ceil_mode=True, count_include_pad=True
    )
    return [y.numpy()]


@example(
    "deviation_avg_pool_ceil_include_pad",
    "AvgPool-14 k3 s2 pads 1/1, exclude-pad false, rounding_type ceil_torch on 14x14",
    spec=_torch_avg_pool_ceil_include,
    short="OpenVINO's CPU divides overhanging windows by the full kernel",
    deviation="OpenVINO's CPU divides a window that overhangs the declared pads by the full "
    "kernel size; the spec, PyTorch and ONNX Runtime divide by the taps inside "
    "input + pads (last column 0.5 vs 0.333 on an all-ones input)",
)
def build_deviation_avg_pool():
    x = param([1, 2, 14, 14], "x")
    y = named(ov14.avg_pool(x, [2, 2], [1, 1], [1, 1], [3, 3], False, "ceil_torch"), "pool")
    return model([result(y.output(0), "y")], [x], "deviation_avg_pool_ceil_include_pad"), [
        rng_of(17).standard_normal((1, 2, 14, 14)).astype(np.float32)
    ]


def _torch_adaptive_avg_1d(inputs):
    import torch

    return [torch.nn.functional.adaptive_avg_pool1d(torch.from_numpy(inputs[0]), 1999).numpy()]


@example(
    "deviation_adaptive_avg_pool_1d_large",
    "AdaptiveAvgPool-8 1D 8417 -> 1999 (In*Out > 2**24)",
    spec=_torch_adaptive_avg_1d,
    short="OpenVINO's CPU computes bin borders in float32",
    deviation="OpenVINO's CPU computes adaptive bin borders in float32, which misplaces a "
    "border once In*Out > 2**24; the spec and PyTorch use exact integer bins",
)
def build_deviation_adaptive_avg():
    x = param([1, 1, 8417], "x")
    y = named(ov8.adaptive_avg_pool(x, const(np.array([1999], np.int64), "output_size")), "pool")
    return model([result(y.output(0), "y")], [x], "deviation_adaptive_avg_pool_1d_large"), [
        rng_of(18).standard_normal((1, 1, 8417)).astype(np.float32)
    ]


@example(
    "deviation_adaptive_max_pool_nan",
    "AdaptiveMaxPool-8 2D 6x6 -> 3x3 with NaNs, i32 indices",
    spec=lambda inputs: _torch_adaptive_max(inputs, (3, 3), np.int32),
    short="OpenVINO's CPU ignores NaN",
    deviation="OpenVINO's CPU ignores a NaN unless it is the first element of the bin; "
    "PyTorch (and ovpool) propagate it: the bin gives NaN, its index is the NaN's",
)
def build_deviation_adaptive_max_nan():
    x = param([1, 2, 6, 6], "x")
    y = named(
        ov8.adaptive_max_pool(
            x, const(np.array([3, 3], np.int64), "output_size"), index_element_type="i32"
        ),
        "pool",
    )
    data = rng_of(19).standard_normal((1, 2, 6, 6)).astype(np.float32)
    data[0, 0, 0, 1] = data[0, 0, 3, 3] = data[0, 1, 5, 4] = np.nan
    return model(
        [result(y.output(0), "values"), result(y.output(1), "indices")],
        [x],
        "deviation_adaptive_max_pool_nan",
    ), [data]


def _spec_max_pool_same_ceil(inputs):
    x = inputs[0]  # k1 s3: the spec's ceil(14/3) = 5 windows
    values = x[..., ::3]
    indices = np.broadcast_to(np.arange(0, x.shape[-1], 3, dtype=np.int32), values.shape)
    return [values.copy(), indices.copy()]


@example(
    "deviation_max_pool_same_ceil",
    "MaxPool-8 k1 s3 auto_pad same_upper, rounding_type ceil, on length 14",
    spec=_spec_max_pool_same_ceil,
    short="OpenVINO adds a window past the input for same_* with ceil",
    deviation="with auto_pad same_upper/same_lower the spec's output size is "
    "ceil(14/3) = 5; OpenVINO's shape inference still applies rounding_type=ceil "
    "and returns 6, the last window outside the input (-FLT_MAX, index 0)",
)
def build_deviation_max_pool_same_ceil():
    x = param([1, 2, 14], "x")
    y = named(ov8.max_pool(x, [3], [1], [0], [0], [1], "ceil", "same_upper", "i32", 2), "pool")
    return model(
        [result(y.output(0), "values"), result(y.output(1), "indices")],
        [x],
        "deviation_max_pool_same_ceil",
    ), [rng_of(22).standard_normal((1, 2, 14)).astype(np.float32)]


# --------------------------------------------------------------------------
# The OpenVINO route: a realistic network with layers ovpool does not run
# --------------------------------------------------------------------------


@example(
    "cnn_openvino_route",
    "a small CNN: Convolution, ReLU, MaxPool-14, Convolution, ReLU, "
    "AdaptiveAvgPool-8 (f16-compressed weights); ovpool's runtime "
    "does not run Convolution, so this needs OpenVINO + ovpool's "
    "extension",
    openvino_route=True,
)
def build_cnn():
    rng = rng_of(20)
    x = param([1, 3, 32, 32], "image")
    w1 = named(ov8.constant((rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)), "w1")
    c1 = named(ov1.convolution(x, w1, [1, 1], [1, 1], [1, 1], [1, 1]), "conv1")
    r1 = named(ov1.relu(c1), "relu1")
    p1 = named(
        ov14.max_pool(r1, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2], "floor", None, "i64", 0), "pool1"
    )
    w2 = named(ov8.constant((rng.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32)), "w2")
    c2 = named(ov1.convolution(p1.output(0), w2, [1, 1], [1, 1], [1, 1], [1, 1]), "conv2")
    r2 = named(ov1.relu(c2), "relu2")
    g = named(ov8.adaptive_avg_pool(r2, const(np.array([2, 2], np.int64), "output_size")), "gap")
    return model([result(g.output(0), "features")], [x], "cnn_openvino_route"), [
        rng_of(21).standard_normal((1, 3, 32, 32)).astype(np.float32)
    ]


# --------------------------------------------------------------------------
# ovpool's own opset ("ovpool"), written by ov.save_model with ovpool's
# OpenVINO extension (ovpool.openvino); OpenVINO reads it after
# ovpool.openvino.register(core), ovpool's IR runtime without OpenVINO
# --------------------------------------------------------------------------

F32 = {"INFERENCE_PRECISION_HINT": "f32"}


@example(
    "ovpool_opset",
    "ovpool's opset: a stock model (MaxPool-8 axis 0 with both outputs, "
    "AvgPool-14 ceil_torch, AdaptiveMaxPool-8 i32, AdaptiveAvgPool-8) "
    "after ovpool.openvino.patch_model(policy='all'); outputs equal native "
    "OpenVINO's "
    "on the stock model",
)
def build_ovpool_opset():
    import ovpool.openvino as ovp

    x = param([2, 3, 15, 14], "x")
    m = named(
        ov8.max_pool(x, [2, 2], [1, 1], [1, 1], [1, 1], [3, 3], "floor", None, "i64", 0), "max"
    )
    a = named(ov14.avg_pool(m.output(0), [1, 1], [1, 1], [1, 1], [3, 3], True, "ceil_torch"), "avg")
    b = named(
        ov8.adaptive_max_pool(
            a, const(np.array([4, 3], np.int64), "size_b"), index_element_type="i32"
        ),
        "adaptive_max",
    )
    c = named(
        ov8.adaptive_avg_pool(b.output(0), const(np.array([2, 2], np.int64), "size_c")),
        "adaptive_avg",
    )
    stock = model(
        [
            result(m.output(1), "max_indices"),
            result(b.output(1), "adaptive_indices"),
            result(c.output(0), "y"),
        ],
        [x],
        "ovpool_opset",
    )
    inputs = [rng_of(23).standard_normal((2, 3, 15, 14)).astype(np.float32)]
    native = ov.Core().compile_model(stock, "CPU", F32)(inputs)
    assert ovp.patch_model(stock, policy="all") == 4
    core = ovp.register(ov.Core())
    patched = core.compile_model(stock, "CPU", F32)(inputs)
    for n, p in zip(native.values(), patched.values()):
        np.testing.assert_allclose(p, n, rtol=1e-6, atol=1e-7)
    return stock, inputs


@example(
    "ovpool_opset_onnx",
    "ovpool's opset from ONNX (OpenVINO's ONNX frontend with "
    "ovpool.openvino.register): MaxPool storage_order=1 with both "
    "outputs, LpPool p=3, MaxUnpool; outputs equal ONNX Runtime's",
)
def build_ovpool_opset_onnx():
    from onnx import TensorProto, helper

    import ovpool.openvino as ovp

    nodes = [
        helper.make_node(
            "MaxPool", ["x"], ["m", "i"], kernel_shape=[2, 2], strides=[2, 2], storage_order=1
        ),
        helper.make_node(
            "LpPool", ["x"], ["lp"], kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1], p=3
        ),
        helper.make_node("MaxPool", ["x"], ["v", "j"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("MaxUnpool", ["v", "j"], ["u"], kernel_shape=[2, 2], strides=[2, 2]),
    ]
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "ovpool_opset_onnx",
        [value("x", TensorProto.FLOAT, [1, 2, 8, 6])],
        [
            value(n, t, None)
            for n, t in (
                ("m", TensorProto.FLOAT),
                ("i", TensorProto.INT64),
                ("lp", TensorProto.FLOAT),
                ("u", TensorProto.FLOAT),
            )
        ],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    core = ovp.register(ov.Core())
    with ovp.conversion_policy("all"):
        converted = core.read_model(proto.SerializeToString(), ov.Tensor(np.empty(0, np.uint8)))
    inputs = [rng_of(24).standard_normal((1, 2, 8, 6)).astype(np.float32)]
    import onnxruntime

    expected = onnxruntime.InferenceSession(proto.SerializeToString()).run(None, {"x": inputs[0]})
    got = core.compile_model(converted, "CPU", F32)(inputs)
    for g, e in zip(got.values(), expected):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)
    return converted, inputs


# --------------------------------------------------------------------------


def main():
    version = ov.__version__.split("-")[0]
    for spec in EXAMPLES:
        name = spec["name"]
        xml = os.path.join(HERE, name + ".xml")
        ov_model, inputs = spec["build"]()
        ov.save_model(ov_model, xml)  # compress_to_fp16=True, the default
        meta = dict(
            example=name,
            description=spec["description"],
            openvino=version,
            reference="openvino",
            openvino_route=spec["openvino_route"],
        )
        ov_outputs, ov_error = None, None
        try:
            ov_outputs, _ = _check.run_openvino(xml, inputs)
        except Exception as exc:  # e.g. i64 AdaptiveMaxPool does not compile on CPU
            ov_error = str(exc).strip().splitlines()[-1]
        model = ir.read_model(xml)
        if spec["spec"] is not None:
            outputs = spec["spec"](inputs)
            meta.update(
                reference="spec", deviation=spec["deviation"], deviation_short=spec["short"]
            )
            if ov_outputs is not None:
                agrees, diff, why = _check.compare_all(model, ov_outputs, outputs)
                assert not agrees, f"{name}: OpenVINO no longer deviates"
                meta["openvino_differs"] = why
                meta["openvino_max_abs_diff"] = diff if np.isfinite(diff) else str(diff)
            else:
                meta["openvino_error"] = ov_error
        else:
            if ov_outputs is None:
                raise SystemExit(f"{name}: OpenVINO failed: {ov_error}")
            outputs = ov_outputs
        _check.save_recording(xml, inputs, outputs, meta)
        # ovpool's own runtime must agree with what was recorded
        if model.runs_on_ovpool:
            got = model(*inputs)
            ok, diff, why = _check.compare_all(model, got, outputs)
            status = "ok" if ok else f"MISMATCH {why}"
        else:
            status = "openvino-route"
            diff = float("nan")
        extra = (
            f" (OpenVINO CPU: {meta.get('openvino_differs', meta.get('openvino_error'))})"
            if spec["spec"]
            else ""
        )
        print(f"{name:40s} {status:14s} {diff:9.2g} {meta['reference']}{extra}")
    total = sum(os.path.getsize(os.path.join(HERE, f)) for f in os.listdir(HERE))
    print(f"ir_examples/: {total / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
