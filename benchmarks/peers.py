"""Runners: one callable per system, built once per (case, thread count), timed by run.py.

Every runner owns its input and pre-allocated outputs, so a timed call does
only the work of the system:

* ``ovpool``: ``ovpool.<op>(x, **params, num_threads=n, out=..., out_indices=...)``.
* ``torch``: the ``torch.nn.functional`` call (or ``torch.mean``/``amax`` for the
  global cases) on ``torch.from_numpy(x)``, after ``torch.set_num_threads(n)``;
  autograd off. PyTorch allocates its outputs (its F API has no ``out=``).
* ``onnxruntime``: one node in an ONNX model (``ir_version=10``; ORT 1.31
  refuses newer IR versions), ``intra_op_num_threads=n``, sequential execution,
  run through an IOBinding bound to the input and to pre-allocated outputs.
  Each spec is built at each level of :data:`ORT_LEVELS` (``ENABLE_ALL``
  rewrites 4-D pools to NCHWc with two reorders; ``ENABLE_EXTENDED`` keeps the
  plain MLAS kernel), AveragePool at opset 11 and 19.
* ``openvino``: the opset-builder node compiled for CPU with
  ``{"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": n,
  "NUM_STREAMS": 1}``, one reused infer request, input and output tensors
  sharing pre-allocated numpy memory.
* ``roofline``: read the input once and write the outputs once, with PyTorch's
  ``n``-thread vectorised kernels: ``torch.sum`` over the input bytes viewed as
  float32, then ``fill_`` on every output's bytes. It ignores the windows
  entirely, so it is a floor, not a competitor.

Heavy modules (torch, onnx, onnxruntime, openvino) are imported on first use.
"""

from __future__ import annotations

import importlib
import importlib.util
import math

import numpy as np

PEERS = ("torch", "onnxruntime", "openvino")
SYSTEMS = ("ovpool",) + PEERS + ("roofline",)
ORT_LEVELS = ("ENABLE_ALL", "ENABLE_EXTENDED")


def openvino_config(n_threads):
    return {
        "INFERENCE_PRECISION_HINT": "f32",
        "INFERENCE_NUM_THREADS": int(n_threads),
        "NUM_STREAMS": 1,
    }


_MODULES = {
    "torch": ("torch",),
    "onnxruntime": ("onnx", "onnxruntime"),
    "openvino": ("openvino",),
    "roofline": ("torch",),
}


def peer_available(peer):
    """``(True, "")`` if the peer's modules import, else ``(False, reason)``."""
    for module in _MODULES.get(peer, ()):
        if importlib.util.find_spec(module) is None:
            return False, f"{module} is not installed"
        try:
            importlib.import_module(module)
        except Exception as exc:  # a broken install is "unavailable", not a crash
            return False, f"import {module} failed: {exc!r}"
    return True, ""


def make_input(case, seed=0):
    """The case's input: standard normal values, C-contiguous, in the case's dtype."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(case.shape, dtype=np.float32)
    return x.astype(case.dtype, copy=False)


def _as_list(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


# --------------------------------------------------------------------------
# runners
# --------------------------------------------------------------------------


class Runner:
    """A zero-argument callable doing one inference of one system."""

    system = "?"
    config = ""

    def __init__(self, n_threads):
        self.n_threads = n_threads

    def activate(self):
        """Called before every timed block (process-wide thread settings)."""

    def __call__(self):
        raise NotImplementedError

    def outputs(self):
        """Run once and return copies of the outputs as numpy arrays."""
        self.activate()
        self()
        return [np.array(a, copy=True) for a in self._output_arrays()]

    def _output_arrays(self):
        raise NotImplementedError

    def close(self):
        pass


class OvpoolRunner(Runner):
    system = "ovpool"

    def __init__(self, case, x, n_threads, module=None):
        super().__init__(n_threads)
        import ovpool

        self.fn = getattr(module or ovpool, case.op)
        self.x = x
        self.params = dict(case.params)
        first = _as_list(self.fn(x, **self.params, num_threads=n_threads))
        self.kwargs = {"num_threads": n_threads, "out": first[0]}
        if len(first) > 1:
            self.kwargs["out_indices"] = first[1]
        self.arrays = first
        self.config = f"ovpool.{case.op}(num_threads={n_threads}, out=preallocated)"

    def __call__(self):
        self.fn(self.x, **self.params, **self.kwargs)

    def _output_arrays(self):
        return self.arrays


class TorchRunner(Runner):
    system = "torch"

    def __init__(self, case, spec, x, n_threads):
        super().__init__(n_threads)
        import torch

        torch.set_grad_enabled(False)
        self.torch = torch
        fn = torch
        for part in spec.fn.split("."):
            fn = getattr(fn, part)
        self.fn, self.args, self.kwargs = fn, spec.args, dict(spec.kwargs)
        self.xt = torch.from_numpy(x)
        self.config = spec.label
        self.result = None

    def activate(self):
        self.torch.set_num_threads(self.n_threads)

    def __call__(self):
        self.result = self.fn(self.xt, *self.args, **self.kwargs)

    def _output_arrays(self):
        return [t.numpy() for t in _as_list(self.result)]


def onnx_model_bytes(spec, shape, dtype):
    """A one-node ONNX model (``ir_version=10``) for an ONNX PeerSpec."""
    from onnx import TensorProto, helper

    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    names = ["y", "indices"][: len(spec.outputs)]
    node = helper.make_node(spec.fn, ["x"], names, **spec.kwargs)
    outputs = [helper.make_tensor_value_info("y", elem, None)]
    if len(names) > 1:
        outputs.append(helper.make_tensor_value_info("indices", TensorProto.INT64, None))
    graph = helper.make_graph(
        [node], "bench", [helper.make_tensor_value_info("x", elem, shape)], outputs
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", spec.opset)],
        ir_version=10,
        producer_name="ovpool-bench",
    )
    return model.SerializeToString()


class OrtRunner(Runner):
    system = "onnxruntime"

    def __init__(self, case, spec, level, x, n_threads, reference):
        super().__init__(n_threads)
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, f"ORT_{level}")
        options.intra_op_num_threads = n_threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.session = ort.InferenceSession(
            onnx_model_bytes(spec, list(x.shape), x.dtype),
            options,
            providers=["CPUExecutionProvider"],
        )
        self.x = x
        # outputs: the shapes ovpool produced; indices are int64 in ONNX
        self.arrays = [np.empty(reference[0].shape, x.dtype)]
        if len(spec.outputs) > 1:
            self.arrays.append(np.empty(reference[1].shape, np.int64))
        self.binding = self.session.io_binding()
        self.binding.bind_cpu_input("x", x)
        for name, array in zip(("y", "indices"), self.arrays):
            self.binding.bind_output(
                name, "cpu", 0, array.dtype, list(array.shape), array.ctypes.data
            )
        self.config = f"{spec.label} {level}"

    def __call__(self):
        self.session.run_with_iobinding(self.binding)

    def _output_arrays(self):
        return self.arrays

    def close(self):
        self.binding = self.session = None


_OV_CORE = None


def ov_core():
    global _OV_CORE
    if _OV_CORE is None:
        import openvino as ov

        _OV_CORE = ov.Core()
    return _OV_CORE


def ov_node(spec, data):
    """Apply one OpenVINO PeerSpec (an opset builder) to ``data``."""
    import openvino.opset1 as ops1

    module = importlib.import_module(f"openvino.opset{spec.opset}")
    kwargs = dict(spec.kwargs)
    if "output_shape" in kwargs:
        kwargs["output_shape"] = ops1.constant(np.array(kwargs["output_shape"], np.int64))
    if "axes" in kwargs:
        kwargs["reduction_axes"] = ops1.constant(np.array(kwargs.pop("axes"), np.int64))
    return getattr(module, spec.fn)(data, **kwargs)


def ov_model(layers, shape, dtype):
    """A model applying ``layers`` (PeerSpecs) in a chain; the last one's
    ``outputs`` become the results."""
    import openvino as ov
    import openvino.opset1 as ops1

    param = ops1.parameter(list(shape), np.dtype(dtype), name="x")
    node = param
    for spec in layers:
        node = ov_node(spec, node.output(0) if hasattr(node, "output") else node)
    results = [ops1.result(node.output(i)) for i in layers[-1].outputs]
    return ov.Model(results, [param], "bench")


class OpenVINORunner(Runner):
    system = "openvino"

    def __init__(self, model, x, n_threads, label, core=None):
        super().__init__(n_threads)
        import openvino as ov

        core = core or ov_core()
        self.compiled = core.compile_model(model, "CPU", openvino_config(n_threads))
        self.request = self.compiled.create_infer_request()
        self.x = x
        self.request.set_input_tensor(ov.Tensor(x, shared_memory=True))
        self.arrays = []
        for i, port in enumerate(self.compiled.outputs):
            array = np.empty(tuple(port.get_shape()), port.get_element_type().to_dtype())
            try:
                self.request.set_output_tensor(i, ov.Tensor(array, shared_memory=True))
            except Exception:  # plugin refused a user buffer: read its own tensor
                array = None
            self.arrays.append(array)
        self.config = label

    def __call__(self):
        self.request.infer()

    def _output_arrays(self):
        return [
            a if a is not None else self.request.get_output_tensor(i).data
            for i, a in enumerate(self.arrays)
        ]

    def runtime_layers(self):
        """``[(layer type, primitive type)]`` of the compiled model (what the plugin chose)."""
        info = []
        for op in self.compiled.get_runtime_model().get_ordered_ops():
            rt = op.get_rt_info()
            layer = rt["layerType"].astype(str) if "layerType" in rt else op.get_type_name()
            prim = rt["primitiveType"].astype(str) if "primitiveType" in rt else ""
            if layer not in ("Parameter", "Result", "Input", "Output"):
                info.append((layer, prim))
        return info

    def close(self):
        self.request = self.compiled = None


class RooflineRunner(Runner):
    """Read the input once, write every output once: the memory-traffic floor."""

    system = "roofline"

    def __init__(self, x, reference, n_threads):
        super().__init__(n_threads)
        raw = x.reshape(-1).view(np.uint8)
        words = raw[: raw.size - raw.size % 4].view(np.float32)
        self.buffers = [np.empty(a.nbytes, np.uint8) for a in reference]
        try:
            import torch
        except ImportError:
            torch = None
        self.torch = torch
        if torch is not None:
            self.read = torch.from_numpy(words)
            self.writes = [torch.from_numpy(b) for b in self.buffers]
            self.config = (
                f"torch.sum(input bytes as float32) + fill_(output bytes), {n_threads} threads"
            )
        else:
            self.read, self.writes = words, self.buffers
            self.config = "numpy sum + fill (1 thread: torch missing)"

    def activate(self):
        if self.torch is not None:
            self.torch.set_num_threads(self.n_threads)

    def __call__(self):
        self.read.sum()
        for w in self.writes:
            w.fill_(0) if self.torch is not None else w.fill(0)

    def outputs(self):
        return []


# --------------------------------------------------------------------------
# candidates of a peer for a case
# --------------------------------------------------------------------------


def peer_candidates(peer, case, x, n_threads, reference, *, ort_levels=ORT_LEVELS, equivalent=True):
    """``[(label, factory)]``: every configuration of ``peer`` for ``case``.

    A factory builds the runner (it may raise: unsupported dtype, op, ...).
    """
    specs = case.peer_specs(peer) or []
    if not equivalent:
        specs = [s for s in specs if not s.equivalent]
    candidates = []
    for spec in specs:
        if peer == "torch":
            candidates.append((spec.label, lambda s=spec: TorchRunner(case, s, x, n_threads)))
        elif peer == "onnxruntime":
            for level in ort_levels:
                candidates.append(
                    (
                        f"{spec.label} {level}",
                        lambda s=spec, lv=level: OrtRunner(case, s, lv, x, n_threads, reference),
                    )
                )
        elif peer == "openvino":
            candidates.append(
                (
                    spec.label,
                    lambda s=spec: OpenVINORunner(
                        ov_model([s], x.shape, x.dtype), x, n_threads, s.label
                    ),
                )
            )
    return candidates


def spec_of(case, peer, label):
    """The PeerSpec behind a candidate label (ORT labels carry the level)."""
    for spec in case.peer_specs(peer) or []:
        if label == spec.label or label.startswith(spec.label + " "):
            return spec
    return None


# --------------------------------------------------------------------------
# correctness
# --------------------------------------------------------------------------


def tolerances(dtype):
    return (2e-3, 2e-3) if np.dtype(dtype).itemsize <= 2 else (1e-5, 1e-6)


def compare(reference, got, plane_size, dtype):
    """Compare a peer's outputs with ovpool's.

    Values: ``allclose`` (float16: rtol=atol=2e-3; else rtol=1e-5, atol=1e-6),
    NaN equal to NaN. Indices: equal modulo the input plane size.
    """
    rtol, atol = tolerances(dtype)
    report = {"ok": True, "max_abs_diff": 0.0, "rtol": rtol, "atol": atol}
    if len(got) < len(reference):
        return {**report, "ok": False, "error": f"{len(got)} outputs, expected {len(reference)}"}
    ref_values = np.asarray(reference[0], np.float64)
    values = np.asarray(got[0], np.float64)
    if values.shape != ref_values.shape:
        if values.size != ref_values.size:
            return {
                **report,
                "ok": False,
                "error": f"shape {values.shape}, expected {ref_values.shape}",
            }
        values = values.reshape(ref_values.shape)
    diff = np.abs(values - ref_values)
    both_nan = np.isnan(values) & np.isnan(ref_values)
    diff[both_nan] = 0.0
    report["max_abs_diff"] = float(np.nanmax(diff)) if diff.size else 0.0
    if np.isnan(diff).any():
        report["max_abs_diff"] = math.inf
    close = np.allclose(values, ref_values, rtol=rtol, atol=atol, equal_nan=True)
    if not close:
        bad = ~np.isclose(values, ref_values, rtol=rtol, atol=atol, equal_nan=True)
        report.update(
            ok=False,
            n_value_mismatches=int(bad.sum()),
            first_value_mismatch=[int(i) for i in np.argwhere(bad)[0]],
        )
    if len(reference) > 1:
        ref_idx = np.asarray(reference[1], np.int64).reshape(ref_values.shape) % plane_size
        idx = np.asarray(got[1], np.int64).reshape(ref_values.shape) % plane_size
        mismatches = int((ref_idx != idx).sum())
        report["n_index_mismatches"] = mismatches
        if mismatches:
            report["ok"] = False
    return report


def import_baseline(directory, name="ovpool_base"):
    """An earlier build of ovpool, importable as the package ``name`` from
    ``directory`` (a copy of its ovpool/ folder renamed), for paired timing
    against the checkout. The checkout's ovpool must be imported first."""
    import importlib
    import sys

    import ovpool  # noqa: F401  (first: the checkout owns the name "ovpool")

    sys.path.insert(0, str(directory))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(directory))
