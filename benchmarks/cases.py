"""The benchmark's cases: one pooling op on one input, and how each peer expresses it.

A :class:`Case` names an ovpool call (``op`` and ``params`` are the function
of :mod:`ovpool.ops` and its keyword arguments) on a random input of
``shape`` and ``dtype``, and, for each peer, the list of ways to compute the
same result:

* ``torch``: a function of the ``torch`` namespace (``"nn.functional.max_pool2d"``,
  ``"mean"``) called as ``fn(x, *args, **kwargs)``;
* ``onnx``: one ONNX node (``op``, attributes, ``opset``) run by ONNX Runtime,
  each graph-optimization level in ``peers.ORT_LEVELS`` tried;
* ``openvino``: one node of an OpenVINO opset builder (``openvino.opsetN.op``)
  whose ``outputs`` become the model's results.

``None`` means the peer has no such op. Several specs for one peer are
alternatives: the runner times each briefly and keeps the fastest (its label is
reported). A spec with ``equivalent`` set computes the same numbers with a
different op (adaptive 28->7 as AveragePool k=s=4, adaptive ->1 as
GlobalAveragePool or ReduceMean): this makes the bar *higher* for ovpool, and
``--no-equivalent`` drops them.

Indices are compared modulo the input plane size, so per-plane (PyTorch,
AdaptiveMaxPool-8) and whole-tensor (ONNX MaxPool, OpenVINO MaxPool-8 axis=0)
conventions compare equal.

This module imports nothing heavy: the peak-memory child process loads it
without torch, onnxruntime or openvino.
"""

from __future__ import annotations

import fnmatch
from dataclasses import asdict, dataclass, field

__all__ = ["PeerSpec", "Case", "ModelCase", "CASES", "MODEL_CASES", "select_cases", "case_by_name"]


@dataclass
class PeerSpec:
    """One way for a peer to compute a case."""

    system: str  # "torch", "onnx" or "openvino"
    fn: str  # torch function path, ONNX op_type, or OpenVINO builder name
    label: str  # shown in reports, e.g. "MaxPool-18", "F.max_pool2d"
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)  # torch kwargs, ONNX attributes, builder kwargs
    opset: int | None = None  # ONNX opset or OpenVINO opset module
    outputs: tuple = (0,)  # OpenVINO: node outputs that become results; ONNX: output count
    equivalent: str | None = None  # set when a different op computes the same numbers
    note: str = ""


@dataclass
class Case:
    name: str
    op: str  # function of ovpool.ops
    shape: tuple
    dtype: str = "float32"
    params: dict = field(default_factory=dict)
    torch: list | None = None
    onnx: list | None = None
    openvino: list | None = None
    group: str = "extra"  # "issue" (the issue's table), "extra", "smoke"
    note: str = ""

    @property
    def n_spatial(self):
        return len(self.shape) - 2

    def peer_specs(self, peer):
        return getattr(self, {"onnxruntime": "onnx"}.get(peer, peer))

    def describe(self):
        data = asdict(self)
        data["shape"] = list(self.shape)
        return data


@dataclass
class ModelCase:
    """A small OpenVINO model timed native and with its pool nodes patched to ovpool ops."""

    name: str
    shape: tuple
    layers: list  # PeerSpecs applied in a chain (output 0 feeds the next)
    dtype: str = "float32"
    note: str = ""


# --------------------------------------------------------------------------
# spec helpers
# --------------------------------------------------------------------------


def _t(fn, *args, equivalent=None, note="", **kwargs):
    label = fn.replace("nn.functional.", "F.") if fn.startswith("nn.") else f"torch.{fn}"
    return PeerSpec("torch", fn, label, args, kwargs, equivalent=equivalent, note=note)


def _x(op, opset, *, n_outputs=1, equivalent=None, note="", **attrs):
    return PeerSpec(
        "onnx",
        op,
        f"{op}-{opset}",
        (),
        attrs,
        opset,
        tuple(range(n_outputs)),
        equivalent=equivalent,
        note=note,
    )


def _v(builder, opset, *, outputs=(0,), label=None, equivalent=None, note="", **kwargs):
    if label is None:
        name = "".join(part.capitalize() for part in builder.split("_"))
        label = f"{name}-{opset}" + (" +indices" if len(outputs) > 1 else "")
    return PeerSpec(
        "openvino",
        builder,
        label,
        (),
        kwargs,
        opset,
        tuple(outputs),
        equivalent=equivalent,
        note=note,
    )


def _tup(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


def _spatial_axes(n):
    return tuple(range(2, 2 + n))


# --------------------------------------------------------------------------
# case builders: one per op family, filling every peer's expression
# --------------------------------------------------------------------------


def adaptive_avg(name, shape, output_size, dtype="float32", **kw):
    n = len(shape) - 2
    out = _tup(output_size, n)
    spatial = shape[2:]
    divisible = all(i % o == 0 for i, o in zip(spatial, out))
    kernel = [i // o for i, o in zip(spatial, out)]
    torch = [_t(f"nn.functional.adaptive_avg_pool{n}d", out if n > 1 else out[0])]
    openvino = [_v("adaptive_avg_pool", 8, output_shape=list(out))]
    onnx = None
    if all(o == 1 for o in out):
        eq = "global average (adaptive to 1)"
        torch.append(_t("mean", dim=_spatial_axes(n), keepdim=True, equivalent=eq))
        onnx = [_x("GlobalAveragePool", 18, equivalent=eq)]
        openvino.append(
            _v("reduce_mean", 1, axes=list(_spatial_axes(n)), keep_dims=True, equivalent=eq)
        )
    elif divisible:
        eq = f"AvgPool kernel=stride={kernel} (In divisible by Out)"
        onnx = [
            _x("AveragePool", opset, kernel_shape=kernel, strides=kernel, equivalent=eq)
            for opset in (11, 19)
        ]
        openvino.append(
            _v(
                "avg_pool",
                14,
                kernel_shape=kernel,
                strides=kernel,
                pads_begin=[0] * n,
                pads_end=[0] * n,
                exclude_pad=True,
                equivalent=eq,
            )
        )
    return Case(
        name,
        "adaptive_avg_pool",
        tuple(shape),
        dtype,
        {"output_size": out},
        torch=torch,
        onnx=onnx,
        openvino=openvino,
        **kw,
    )


def adaptive_max(name, shape, output_size, dtype="float32", **kw):
    n = len(shape) - 2
    out = _tup(output_size, n)
    spatial = shape[2:]
    kernel = [i // o for i, o in zip(spatial, out)]
    torch = [
        _t(f"nn.functional.adaptive_max_pool{n}d", out if n > 1 else out[0], return_indices=True)
    ]
    openvino = [
        _v(
            "adaptive_max_pool",
            8,
            outputs=(0, 1),
            output_shape=list(out),
            index_element_type="i32",
            note="i32 indices: the CPU plugin does not compile the default i64",
        )
    ]
    onnx = None
    if all(i % o == 0 for i, o in zip(spatial, out)):
        eq = f"MaxPool kernel=stride={kernel} with indices (In divisible by Out)"
        onnx = [
            _x(
                "MaxPool",
                18,
                n_outputs=2,
                kernel_shape=kernel,
                strides=kernel,
                equivalent=eq,
                note="ORT's MaxPool with Indices is a scalar loop",
            )
        ]
        openvino.append(
            _v(
                "max_pool",
                8,
                outputs=(0, 1),
                kernel_shape=kernel,
                strides=kernel,
                dilations=[1] * n,
                pads_begin=[0] * n,
                pads_end=[0] * n,
                axis=2,
                equivalent=eq,
                note="MaxPool-8 with indices: CPU reference path",
            )
        )
    return Case(
        name,
        "adaptive_max_pool",
        tuple(shape),
        dtype,
        {"output_size": out},
        torch=torch,
        onnx=onnx,
        openvino=openvino,
        **kw,
    )


def _window_params(shape, kernel, stride, pad, ceil, extra_params):
    n = len(shape) - 2
    k, s, p = _tup(kernel, n), _tup(stride, n), _tup(pad, n)
    params = {"kernel_shape": k, "strides": s, "pads": p + p}
    if ceil:
        params["ceil_mode"] = True
    params.update(extra_params)
    return n, k, s, p, params


def max_pool(
    name,
    shape,
    kernel,
    stride=1,
    pad=0,
    *,
    ceil=False,
    indices=False,
    dilation=1,
    dtype="float32",
    **kw,
):
    n, k, s, p, params = _window_params(
        shape, kernel, stride, pad, ceil, {"return_indices": True} if indices else {}
    )
    d = _tup(dilation, n)
    if any(di > 1 for di in d):
        params["dilations"] = d
    torch = None
    # torch: symmetric pads at most half the dilated kernel
    if all(2 * pi <= (ki - 1) * di + 1 for pi, ki, di in zip(p, k, d)):
        torch = [
            _t(
                f"nn.functional.max_pool{n}d",
                kernel_size=k,
                stride=s,
                padding=p,
                dilation=d,
                ceil_mode=ceil,
                return_indices=indices,
            )
        ]
    onnx = [
        _x(
            "MaxPool",
            18,
            n_outputs=2 if indices else 1,
            kernel_shape=list(k),
            strides=list(s),
            pads=list(p + p),
            dilations=list(d),
            ceil_mode=int(ceil),
            note="MaxPool with Indices: ORT's scalar loop" if indices else "",
        )
    ]
    # MaxPool-8 unless ceil_mode needs MaxPool-14's "ceil_torch" (same CPU kernel)
    openvino = [
        _v(
            "max_pool",
            14 if ceil else 8,
            outputs=(0, 1) if indices else (0,),
            kernel_shape=list(k),
            strides=list(s),
            dilations=list(d),
            pads_begin=list(p),
            pads_end=list(p),
            rounding_type="ceil_torch" if ceil else "floor",
            axis=0,
            note="indices output used: OpenVINO's CPU reference path" if indices else "",
        )
    ]
    return Case(
        name,
        "max_pool",
        tuple(shape),
        dtype,
        params,
        torch=torch,
        onnx=onnx,
        openvino=openvino,
        **kw,
    )


def avg_pool(
    name,
    shape,
    kernel,
    stride=1,
    pad=0,
    *,
    ceil=False,
    count_include_pad=False,
    dilation=1,
    dtype="float32",
    **kw,
):
    n, k, s, p, params = _window_params(
        shape, kernel, stride, pad, ceil, {"count_include_pad": True} if count_include_pad else {}
    )
    d = _tup(dilation, n)
    dilated = any(di > 1 for di in d)
    if dilated:
        params["dilations"] = d
    torch = None
    if not dilated and all(2 * pi <= ki for pi, ki in zip(p, k)):  # torch has no dilation
        torch = [
            _t(
                f"nn.functional.avg_pool{n}d",
                kernel_size=k,
                stride=s,
                padding=p,
                ceil_mode=ceil,
                count_include_pad=count_include_pad,
            )
        ]
    onnx = [
        _x(
            "AveragePool",
            opset,
            kernel_shape=list(k),
            strides=list(s),
            pads=list(p + p),
            ceil_mode=int(ceil),
            count_include_pad=int(count_include_pad),
            **({"dilations": list(d)} if dilated else {}),
            note="opset 19+ never reaches MLAS" if opset >= 19 else "",
        )
        for opset in ((19,) if dilated else (11, 19))
    ]  # dilations: opset 19+
    if dilated:
        openvino = [
            _v(
                "avg_pool",
                16,
                kernel_shape=list(k),
                strides=list(s),
                pads_begin=list(p),
                pads_end=list(p),
                exclude_pad=not count_include_pad,
                rounding_type="ceil_torch" if ceil else "floor",
                dilations=list(d),
            )
        ]
    else:
        openvino = [
            _v(
                "avg_pool",
                14,
                kernel_shape=list(k),
                strides=list(s),
                pads_begin=list(p),
                pads_end=list(p),
                exclude_pad=not count_include_pad,
                rounding_type="ceil_torch" if ceil else "floor",
            )
        ]
    return Case(
        name,
        "avg_pool",
        tuple(shape),
        dtype,
        params,
        torch=torch,
        onnx=onnx,
        openvino=openvino,
        **kw,
    )


def lp_pool(name, shape, kernel, stride=1, p=2, dtype="float32", **kw):
    n = len(shape) - 2
    k, s = _tup(kernel, n), _tup(stride, n)
    torch = [_t(f"nn.functional.lp_pool{n}d", float(p), k, s)] if n in (1, 2, 3) else None
    onnx = [_x("LpPool", 18, kernel_shape=list(k), strides=list(s), p=int(p))]
    return Case(
        name,
        "lp_pool",
        tuple(shape),
        dtype,
        {"kernel_shape": k, "strides": s, "p": p},
        torch=torch,
        onnx=onnx,
        openvino=None,
        note="OpenVINO has no LpPool op",
        **kw,
    )


def global_avg(name, shape, dtype="float32", **kw):
    n = len(shape) - 2
    axes = _spatial_axes(n)
    return Case(
        name,
        "global_avg_pool",
        tuple(shape),
        dtype,
        {},
        torch=[_t(f"nn.functional.adaptive_avg_pool{n}d", 1), _t("mean", dim=axes, keepdim=True)],
        onnx=[_x("GlobalAveragePool", 18)],
        openvino=[
            _v("reduce_mean", 1, axes=list(axes), keep_dims=True),
            _v("adaptive_avg_pool", 8, output_shape=[1] * n),
        ],
        **kw,
    )


def global_max(name, shape, dtype="float32", **kw):
    n = len(shape) - 2
    axes = _spatial_axes(n)
    return Case(
        name,
        "global_max_pool",
        tuple(shape),
        dtype,
        {},
        torch=[_t("amax", dim=axes, keepdim=True), _t(f"nn.functional.adaptive_max_pool{n}d", 1)],
        onnx=[_x("GlobalMaxPool", 18)],
        openvino=[_v("reduce_max", 1, axes=list(axes), keep_dims=True)],
        **kw,
    )


# --------------------------------------------------------------------------
# the cases
# --------------------------------------------------------------------------

ISSUE = {"group": "issue"}

CASES = [
    # -- the issue's table ---------------------------------------------------
    adaptive_avg("gap_resnet_head", (32, 2048, 7, 7), 1, **ISSUE),
    adaptive_avg("aap_28to7", (8, 512, 28, 28), 7, **ISSUE),
    adaptive_avg("aap_50to7_overlap", (8, 256, 50, 50), 7, **ISSUE),
    adaptive_avg("aap3d", (4, 64, 16, 56, 56), (4, 7, 7), **ISSUE),
    adaptive_avg("aap1d", (32, 512, 1000), 100, **ISSUE),
    max_pool("maxpool_stem", (16, 64, 112, 112), 3, 2, 1, **ISSUE),
    avg_pool("avgpool_incep", (16, 256, 35, 35), 3, 1, 1, count_include_pad=False, **ISSUE),
    avg_pool("avgpool_2x2", (16, 128, 56, 56), 2, 2, 0, **ISSUE),
    avg_pool("avgpool_7x7_s1", (8, 64, 128, 128), 7, 1, 3, count_include_pad=True, **ISSUE),
    max_pool("maxpool3d", (4, 64, 16, 56, 56), 3, 2, 1, **ISSUE),
    # -- indices -----------------------------------------------------------------
    max_pool(
        "maxpool_indices",
        (8, 64, 56, 56),
        3,
        2,
        1,
        indices=True,
        note="OpenVINO MaxPool-8 with its indices output runs the reference path",
    ),
    adaptive_max("amp_28to7_indices", (8, 512, 28, 28), 7),
    adaptive_max("amp_50to7_indices", (8, 256, 50, 50), 7),
    # -- 1D fixed windows --------------------------------------------------------
    max_pool("maxpool1d", (32, 256, 2048), 3, 2, 1),
    avg_pool("avgpool1d_k3s1", (32, 256, 2048), 3, 1, 1, count_include_pad=False),
    # -- float16 (computed in float32 by ovpool, OpenVINO with f32 precision) ------
    adaptive_avg("gap_resnet_head_f16", (32, 2048, 7, 7), 1, dtype="float16"),
    adaptive_avg("aap_28to7_f16", (8, 512, 28, 28), 7, dtype="float16"),
    max_pool("maxpool_stem_f16", (16, 64, 112, 112), 3, 2, 1, dtype="float16"),
    avg_pool("avgpool_2x2_f16", (16, 128, 56, 56), 2, 2, 0, dtype="float16"),
    # -- further shapes of the same kinds --------------------------------------
    max_pool("maxpool_stem_b1", (1, 64, 112, 112), 3, 2, 1, note="ResNet stem at batch 1"),
    max_pool("maxpool_2x2", (16, 128, 56, 56), 2, 2, 0),
    adaptive_avg("aap3d_overlap", (4, 64, 10, 30, 30), (3, 7, 7)),
    adaptive_avg("aap_14to7_b64", (64, 512, 14, 14), 7),
    global_avg("gap_7x7_b128", (128, 2048, 7, 7), note="51 MB input: beyond L3"),
    global_max("global_max_7x7", (32, 2048, 7, 7)),
    avg_pool("avgpool_3x3_s2_ceil", (16, 128, 56, 56), 3, 2, 1, ceil=True, count_include_pad=False),
    avg_pool(
        "avgpool_3x3_s2_ceil_cip",
        (16, 128, 56, 56),
        3,
        2,
        1,
        ceil=True,
        count_include_pad=True,
        note="edge windows: OpenVINO divides by the full kernel (see ovpool.ov_ops)",
    ),
    lp_pool("lppool_3x3_s2", (16, 64, 56, 56), 3, 2, p=2),
    # -- smoke (tiny; only selected by name, for tests/test_bench.py) -------------
    max_pool("smoke_maxpool", (2, 16, 12, 12), 3, 2, 1, group="smoke"),
    adaptive_avg("smoke_aap", (2, 16, 12, 12), 3, group="smoke"),
]

MODEL_CASES = [
    ModelCase(
        "resnet_pools",
        (8, 64, 112, 112),
        [
            _v(
                "max_pool",
                14,
                kernel_shape=[3, 3],
                strides=[2, 2],
                dilations=[1, 1],
                pads_begin=[1, 1],
                pads_end=[1, 1],
            ),
            _v("relu", 1),
            _v(
                "avg_pool",
                14,
                kernel_shape=[3, 3],
                strides=[1, 1],
                pads_begin=[1, 1],
                pads_end=[1, 1],
                exclude_pad=True,
            ),
            _v("adaptive_avg_pool", 8, output_shape=[1, 1]),
        ],
        note="stem MaxPool -> Relu -> AvgPool 3x3 s1 -> AdaptiveAvgPool 1x1",
    ),
    ModelCase(
        "maxpool_indices_model",
        (8, 64, 56, 56),
        [
            _v(
                "max_pool",
                8,
                outputs=(0, 1),
                kernel_shape=[3, 3],
                strides=[2, 2],
                dilations=[1, 1],
                pads_begin=[1, 1],
                pads_end=[1, 1],
                axis=0,
            ),
        ],
        note="MaxPool-8 with indices: native OpenVINO runs its reference path",
    ),
    ModelCase(
        "adaptive_max_model",
        (8, 256, 50, 50),
        [
            _v(
                "adaptive_max_pool",
                8,
                outputs=(0, 1),
                output_shape=[7, 7],
                index_element_type="i32",
            ),
        ],
    ),
]


def case_by_name(name):
    for case in CASES:
        if case.name == name:
            return case
    if name.startswith("sweep") and "_" in name:
        # a sweep case: sweep<seed>_<index>_...; the first index + 1 cases of
        # a seed are the same whatever the count
        from . import sweep

        seed, index = name[len("sweep") :].split("_")[:2]
        for case in sweep.sweep_cases(int(seed), int(index) + 1):
            if case.name == name:
                return case
    raise KeyError(f"no benchmark case named {name!r}")


def select_cases(patterns=None):
    """Cases matching comma-separated glob patterns (default: all but the smoke cases)."""
    if not patterns:
        return [c for c in CASES if c.group != "smoke"]
    if isinstance(patterns, str):
        patterns = [p.strip() for p in patterns.split(",") if p.strip()]
    chosen = [
        c for c in CASES if any(fnmatch.fnmatchcase(c.name, p) or p == c.group for p in patterns)
    ]
    if not chosen:
        raise ValueError(f"no case matches {patterns}; known: {[c.name for c in CASES]}")
    return chosen
