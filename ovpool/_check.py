"""Checking IR models: ovpool's runtime against OpenVINO or recorded outputs.

The machinery behind ``ovpool run`` and ``ovpool check`` (the CLI only
formats). A model ``m.xml`` may have a sibling ``m.npz`` recorded by
``ir_examples/make_examples.py``: inputs ``in_0, in_1, ...``, expected outputs
``out_0, out_1, ...`` (in ``Model.outputs`` order) and a JSON string ``meta``
whose ``"reference"`` is ``"openvino"`` (OpenVINO's native CPU result) or
``"spec"`` (OpenVINO's CPU plugin deviates from its specification there; the
recorded outputs are the specification's / PyTorch's).

OpenVINO is imported lazily and only here; it is never given a file that
ovpool's own reader refused (OpenVINO 2026.4 segfaults on some malformed IR).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

from . import ir
from ._limits import check_budget
from .errors import IRError, OvpoolError
from .layers import LAYERS, numpy_dtype

# rtol = atol per output element type (OpenVINO computes f16/bf16/f64 in f32)
TOLERANCES = {"f16": 2e-3, "bf16": 1.6e-2, "f32": 1e-5, "f64": 1e-5}


_POOL_TYPES = frozenset(t for t, _ in LAYERS) - {"Parameter", "Const", "Convert", "Result"}


def is_pool(layer):
    """Whether ``layer`` (an :class:`ovpool.ir.Layer`) is a pool layer of the
    layer table's types, in any version."""
    return layer.type in _POOL_TYPES


# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------


def _names(info, key):
    """Whether ``key`` names the input ``info`` (a tensor name or its
    Parameter's layer name)."""
    return key == info.name or key in info.names or key == info.layer.name


def names_of(model, keys):
    """The ``keys`` that name an input of ``model``."""
    return {key for key in keys if any(_names(info, key) for info in model.inputs)}


def _example_shape(info):
    """A shape that fits ``info`` (for a message): its static dims, the
    lower bound of a bounded dim, 1 for a dynamic batch and 224 for another
    dynamic dim (an image side)."""
    if info.shape is None:
        return "D0,D1,..."
    dims, bounds = [], info.bounds or ((0, None),) * len(info.shape)
    for k, (d, (lo, hi)) in enumerate(zip(info.shape, bounds)):
        if d is not None:
            dims.append(d)
        elif lo > 0 or hi is not None:
            dims.append(max(lo, 1) if hi is None else min(max(lo, 1), hi))
        else:
            dims.append(1 if k == 0 else 224)
    return ",".join(str(d) for d in dims)


def random_inputs(model, seed=0, given=None, shapes=None):
    """Inputs for ``model``, in its input order: the arrays of ``given``
    ({name: array}, e.g. loaded from ``--input NAME=FILE.npy``), seeded random
    arrays of the shapes in ``shapes`` ({name: shape}, ``--shape``), and
    seeded random arrays for the other inputs, which must have a static
    shape: standard normal floats, integers in [0, 10), random booleans. A
    name is a tensor name of the input or its Parameter's layer name.

    Every array is checked against the input's element type and shape
    (bounds included) with the messages of :class:`ovpool.ir.Model`, and a
    random array against ovpool's memory budget before it is made. Raises
    OvpoolError for a name the model does not have, an input given twice,
    and a dynamic input given neither way (naming both options)."""
    rng = np.random.default_rng(seed)
    given, shapes = dict(given or {}), dict(shapes or {})
    for key in [*given, *shapes]:
        if not names_of(model, [key]):
            raise OvpoolError(
                f"{model.path}: the model has no input {key!r}; its inputs "
                f"are {[i.name for i in model.inputs]}"
            )
    arrays = []
    for info in model.inputs:
        named = [f"--input {k}=..." for k in given if _names(info, k)] + [
            f"--shape {k}=..." for k in shapes if _names(info, k)
        ]
        if len(named) > 1:
            raise OvpoolError(
                f"{model.path}: input {info.name!r} is given twice ({' and '.join(named)})"
            )
        key = next((k for k in given if _names(info, k)), None)
        if key is not None:
            arrays.append(model._check_input(info, given[key]))
            continue
        key = next((k for k in shapes if _names(info, k)), None)
        shape = shapes[key] if key is not None else info.shape
        if shape is None or None in shape:
            raise OvpoolError(
                f"{model.path}: input {info.name!r} has the dynamic shape {info.shape_str()}; "
                f"give it as a file, --input {info.name}=FILE.npy, or as seeded random data "
                f"of a shape, e.g. --shape {info.name}={_example_shape(info)}"
            )
        if info.dtype is None:
            raise OvpoolError(
                f"{model.path}: input {info.name!r} has element type "
                f"{info.element_type}, which numpy cannot hold"
            )
        shape = tuple(shape)
        model._check_input(info, np.broadcast_to(np.zeros((), info.dtype), shape))  # no data yet
        check_budget(
            model.path,
            f"the random input {info.name!r}",
            math.prod(shape) * np.dtype(info.dtype).itemsize,
            shape,
            info.dtype,
        )
        arrays.append(_random(rng, shape, info.dtype))
    return arrays


def _random(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 10, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


# --------------------------------------------------------------------------
# Recorded references
# --------------------------------------------------------------------------


@dataclass
class Recording:
    inputs: list
    outputs: list
    meta: dict = field(default_factory=dict)

    @property
    def reference(self):
        return self.meta.get("reference", "openvino")


def npz_path(xml_path):
    return os.path.splitext(os.fspath(xml_path))[0] + ".npz"


def load_recording(xml_path):
    """The sibling ``.npz`` of a model, or None."""
    path = npz_path(xml_path)
    if not os.path.exists(path):
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            keys = set(data.files)
            inputs = [data[f"in_{k}"] for k in range(len(keys)) if f"in_{k}" in keys]
            outputs = [data[f"out_{k}"] for k in range(len(keys)) if f"out_{k}" in keys]
            meta = json.loads(str(data["meta"])) if "meta" in keys else {}
    except (OSError, ValueError, KeyError) as exc:
        raise OvpoolError(f"{path}: cannot read the recorded outputs: {exc}") from None
    return Recording(inputs, outputs, meta)


def save_recording(xml_path, inputs, outputs, meta):
    arrays = {f"in_{k}": a for k, a in enumerate(inputs)}
    arrays.update({f"out_{k}": a for k, a in enumerate(outputs)})
    np.savez_compressed(
        npz_path(xml_path), meta=np.array(json.dumps(meta, sort_keys=True)), **arrays
    )


# --------------------------------------------------------------------------
# OpenVINO
# --------------------------------------------------------------------------


def openvino_available():
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return True


def _run_compiled(core, model, inputs, repeat):
    import openvino as ov

    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    best = None
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        result = request.infer(list(inputs))
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    outputs = []
    for port in compiled.outputs:
        array = np.array(result[port], copy=True)
        if port.get_element_type() == ov.Type.bf16:
            array = _bf16_from_bits(array)
        outputs.append(array)
    return outputs, best


def run_openvino(xml_path, inputs, repeat=1):
    """OpenVINO's native CPU result (``INFERENCE_PRECISION_HINT=f32``):
    ``(outputs, best time in seconds)``; bf16 outputs decoded (OpenVINO's
    ``Tensor.data`` shows them as float16). A model in ovpool's own opset
    runs with ovpool's OpenVINO extension registered."""
    import openvino as ov

    core = ov.Core()
    if any(layer.version == "ovpool" for layer in ir.read_model(xml_path).layers):
        from . import openvino as ovpool_openvino

        openvino_extension()
        ovpool_openvino.register(core)
    return _run_compiled(core, os.fspath(xml_path), inputs, repeat)


def _bf16_from_bits(array):
    bits = np.ascontiguousarray(array).view(np.uint16)
    dtype = numpy_dtype("bf16")
    if dtype.name == "bfloat16":
        return bits.view(dtype)
    return (bits.astype(np.uint32) << 16).view(np.float32)


# --------------------------------------------------------------------------
# Comparing
# --------------------------------------------------------------------------


def compare(got, expected, etype):
    """``(ok, max_abs_diff, why)`` for one output. Floats within
    :data:`TOLERANCES` (NaN where NaN is expected), anything else exact."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        return False, float("inf"), f"shape {list(got.shape)} != {list(expected.shape)}"
    if got.dtype != expected.dtype:
        return False, float("inf"), f"dtype {got.dtype} != {expected.dtype}"
    if got.size == 0:
        return True, 0.0, ""
    if got.dtype.kind == "f" or got.dtype.name == "bfloat16":
        g, e = got.astype(np.float64), expected.astype(np.float64)
        nan_g, nan_e = np.isnan(g), np.isnan(e)
        if (nan_g != nan_e).any():
            return False, float("nan"), f"{int((nan_g != nan_e).sum())} NaN positions differ"
        finite = ~nan_e
        same_inf = g == e
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.where(finite & ~same_inf, np.abs(g - e), 0.0)
        max_diff = float(diff.max()) if diff.size else 0.0
        tol = TOLERANCES.get(etype, 1e-5)
        bad = diff > tol + tol * np.abs(np.where(finite, e, 0.0))
        if not np.isfinite(max_diff) or bad.any():
            return False, max_diff, f"{int(bad.sum())} elements beyond rtol=atol={tol:g}"
        return True, max_diff, ""
    diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    max_diff = float(diff.max())
    if (got != expected).any():
        return False, max_diff, f"{int((got != expected).sum())} elements differ"
    return True, max_diff, ""


def compare_all(model, got, expected):
    """Compare every output; ``(ok, max_abs_diff, why)``."""
    if len(got) != len(expected):
        return False, float("inf"), f"{len(got)} outputs, expected {len(expected)}"
    ok, worst, why = True, 0.0, ""
    for info, g, e in zip(model.outputs, got, expected):
        one_ok, diff, reason = compare(g, e, info.element_type)
        if not one_ok and ok:
            why = f"output {info.name!r}: {reason}"
        ok = ok and one_ok
        worst = max(worst, diff) if not np.isnan(diff) else diff
    return ok, worst, why


def time_ovpool(model, inputs, repeat=3):
    """``(outputs, best time in seconds)`` of ``model(*inputs)``."""
    best, outputs = None, None
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        outputs = model(*inputs)
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return outputs, best


# --------------------------------------------------------------------------
# One row of `ovpool check`
# --------------------------------------------------------------------------


@dataclass
class CheckRow:
    path: str
    status: str  # ok, MISMATCH, ERROR, openvino-route, NO-REFERENCE
    route: str = "ovpool"  # "ovpool" (ovpool's runtime) or "openvino" (OpenVINO + ovpool's ops)
    max_diff: float | None = None
    ovpool_s: float | None = None
    reference: str = ""  # "openvino", "recorded (openvino)", "recorded (spec)"
    reference_s: float | None = None
    note: str = ""
    given: frozenset = frozenset()  # the names of --input / --shape this model has

    @property
    def failed(self):
        return self.status in ("MISMATCH", "ERROR", "NO-REFERENCE")


def find_models(paths):
    """Every .xml under ``paths`` (files or folders, recursively), sorted."""
    found = []
    for path in paths:
        path = os.fspath(path)
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                found.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(".xml"))
        elif os.path.exists(path):
            found.append(path)
        else:
            raise OvpoolError(f"{path}: no such file or folder")
    return found


def check_model(path, seed=0, use_openvino=None, repeat=3, given=None, shapes=None):
    """Run one model on ovpool's runtime and compare it (see the module docstring).

    ``given`` ({name: array}) and ``shapes`` ({name: shape}) are the inputs
    of ``random_inputs``; those naming no input of this model are left out
    (``ovpool check`` gives them to every model it checks), the names used
    are in the row's ``given``. A model given an input is compared on those
    inputs, not on its recording."""
    if use_openvino is None:
        use_openvino = openvino_available()
    try:
        model = ir.read_model(path)
    except IRError as exc:
        return CheckRow(path, "ERROR", note=str(exc))
    given = {k: v for k, v in (given or {}).items() if names_of(model, [k])}
    shapes = {k: v for k, v in (shapes or {}).items() if names_of(model, [k])}
    row = _check_model(path, model, seed, use_openvino, repeat, given, shapes)
    row.given = frozenset([*given, *shapes])
    if row.given and os.path.exists(npz_path(path)):
        row.note = "; ".join(x for x in (row.note, "inputs given: the recording is not used") if x)
    return row


def _check_model(path, model, seed, use_openvino, repeat, given, shapes):
    try:
        recording = None if given or shapes else load_recording(path)
    except OvpoolError as exc:
        return CheckRow(path, "ERROR", note=str(exc))
    route = "ovpool"
    if not model.runs_on_ovpool:
        ready, why = openvino_extension() if use_openvino else (False, "")
        if not ready:
            kinds = sorted({f"{layer.type}-{layer.version}" for layer in model.unsupported_layers})
            if use_openvino:
                why = (
                    f"needs ovpool's OpenVINO extension ({', '.join(kinds)}), which is not "
                    f"available: {why}"
                )
            else:
                why = f"needs OpenVINO + ovpool's extension ({', '.join(kinds)})"
            return CheckRow(path, "openvino-route", note=why)
        route = "openvino"
    try:
        inputs = (
            recording.inputs
            if recording is not None and recording.inputs
            else random_inputs(model, seed, given, shapes)
        )
        if route == "openvino":
            return check_openvino_route(path, model, recording, inputs, repeat)
        got, ovpool_s = time_ovpool(model, inputs, repeat)
    except OvpoolError as exc:
        return CheckRow(path, "ERROR", route=route, note=str(exc))

    row = CheckRow(path, "ok", ovpool_s=ovpool_s)
    ov_outputs, ov_error = None, None
    if use_openvino:
        try:
            ov_outputs, row.reference_s = run_openvino(path, inputs, repeat)
        except Exception as exc:  # OpenVINO's own failure (e.g. i64 AdaptiveMaxPool on CPU)
            ov_error = str(exc).strip().splitlines()[-1][:160] if str(exc).strip() else repr(exc)
    if recording is not None and recording.reference == "spec":
        expected, row.reference = recording.outputs, "recorded (spec)"
        row.note = recording.meta.get("deviation_short", "OpenVINO's CPU deviates here")
        if ov_outputs is not None:
            _, ov_diff, _ = compare_all(model, got, ov_outputs)
            row.note += f" (OpenVINO CPU differs by {ov_diff:.3g})"
    elif ov_outputs is not None:
        expected, row.reference = ov_outputs, "openvino"
    elif recording is not None and recording.outputs:
        expected, row.reference = recording.outputs, "recorded (openvino)"
        if ov_error:
            row.note = f"OpenVINO failed: {ov_error}"
    else:
        row.status = "NO-REFERENCE"
        row.note = "no reference: " + (
            f"OpenVINO failed ({ov_error})"
            if ov_error
            else "install openvino or record outputs in a sibling .npz"
        )
        return row
    ok, row.max_diff, why = compare_all(model, got, expected)
    if not ok:
        row.status = "MISMATCH"
        row.note = why if not row.note else f"{why}; {row.note}"
    return row


# --------------------------------------------------------------------------
# Models with layers ovpool's runtime does not run: the OpenVINO route
# --------------------------------------------------------------------------

_extension_state = {}


def _one_line(exc, limit=300):
    return " ".join(str(exc).split())[:limit]


def openvino_extension():
    """``(ready, why not)``: the extension library, built once on the spot when
    it is missing or stale (``python -m ovpool.openvino build``: CMake and a
    C++ compiler, about a minute), so that ``ovpool run`` and ``ovpool
    check`` can take models through OpenVINO."""
    if "ready" in _extension_state:
        return _extension_state["ready"], _extension_state["why"]
    ready, why = False, ""
    try:
        from .openvino import _library

        try:
            _library.extension_path()
            ready = True
        except _library.ExtensionError as exc:
            if os.environ.get(_library.ENV_VAR):
                raise
            import sys

            print(
                f"ovpool: {exc}\novpool: building it now (once, about a minute)...",
                file=sys.stderr,
                flush=True,
            )
            _library.build()
            ready = True
    except Exception as exc:  # no compiler, no CMake, OpenVINO unusable: say so in the rows
        why = _one_line(exc)
    _extension_state.update(ready=ready, why=why)
    return ready, why


def run_openvino_route(model, inputs, policy="default", repeat=1):
    """Run ``model`` (an :class:`ovpool.ir.Model` with layers ovpool's runtime
    does not run) in OpenVINO's CPU plugin (``INFERENCE_PRECISION_HINT=f32``)
    with its pool layers on ovpool's ops where ``policy`` says
    (:func:`ovpool.openvino.patch_model`). The extension library must be
    ready (:func:`openvino_extension`). Returns ``(outputs, best time in
    seconds, decisions)``, the decisions of
    :func:`ovpool.openvino.patch_plan` for every native pool layer."""
    import openvino as ov

    from . import openvino as ovpool_openvino

    try:
        core = ovpool_openvino.register(ov.Core())
        native = ovpool_openvino._read_validated(core, model)
        plan = ovpool_openvino.patch_plan(native, policy=policy)
        ovpool_openvino.patch_model(native, policy=policy)
        outputs, seconds = _run_compiled(core, native, inputs, repeat)
    except RuntimeError as exc:  # OpenVINO's own failure
        raise OvpoolError(
            f"{model.path}: OpenVINO could not run the model: {_one_line(exc)}"
        ) from None
    return outputs, seconds, plan


def openvino_plan(model, policy="default"):
    """``(decisions, why not)``: what :func:`ovpool.openvino.read_model` does
    with each native pool layer of ``model`` under ``policy``
    (:func:`ovpool.openvino.patch_plan`), or ``(None, the reason)`` when
    OpenVINO cannot tell (not installed, or it cannot read the model). Builds
    nothing: a model holding ovpool's own ops is read only when the
    extension library is already there."""
    if not openvino_available():
        return None, "OpenVINO is not installed"
    import openvino as ov

    from . import openvino as ovpool_openvino

    core = ov.Core()
    try:
        if any(layer.version == "ovpool" for layer in model.layers):
            ovpool_openvino.register(core)
        native = ovpool_openvino._read_validated(core, model)
    except (OvpoolError, RuntimeError) as exc:
        return None, f"OpenVINO cannot read the model here: {_one_line(exc, 160)}"
    return ovpool_openvino.patch_plan(native, policy=policy), ""


def check_openvino_route(path, model, recording, inputs, repeat=3):
    """Check a model with layers ovpool's runtime does not run (Convolution,
    ...) through OpenVINO: the model with its pool layers on ovpool's ops
    against native OpenVINO, both on ``inputs`` (a dynamic model is reshaped
    to their shapes first).

    Every pool layer ovpool's kernels take moves onto ovpool's ops, except
    where native OpenVINO deviates from the specification: those stay native
    here (they are named in the note), so that the comparison checks each
    moved layer against an OpenVINO that is right there. With a recording of
    the specification's answer (``"reference": "spec"``), every pool layer
    moves and the recording is the reference.
    """
    try:
        import openvino as ov

        from . import openvino as ovpool_openvino
    except ImportError as exc:
        return CheckRow(path, "ERROR", route="openvino", note=f"cannot import OpenVINO: {exc}")
    spec = recording is not None and recording.reference == "spec"
    kept = []

    def select(node):
        # every pool layer ovpool takes, but those where native deviates
        # (unless the recording holds the specification's answer)
        decision, how = ovpool_openvino._decide(node, "all")
        if decision.deviation is not None and not spec:
            kept.append(decision)
            decision = dataclasses.replace(decision, move=False)
        return decision, how

    def read():
        # the dynamic inputs set to the shapes of `inputs`, so that the
        # deviation rules see the real sizes (as read where OpenVINO cannot
        # reshape the model)
        native = ovpool_openvino._read_validated(core, model)
        if any(port.get_partial_shape().is_dynamic for port in native.inputs):
            try:
                native.reshape({k: ov.PartialShape(list(a.shape)) for k, a in enumerate(inputs)})
            except RuntimeError:
                native = ovpool_openvino._read_validated(core, model)
        return native

    try:
        core = ovpool_openvino.register(ov.Core())
        patched = read()
        moved = ovpool_openvino._patch(patched, select)
        got, ovpool_s = _run_compiled(core, patched, inputs, repeat)
    except (OvpoolError, RuntimeError) as exc:
        return CheckRow(path, "ERROR", route="openvino", note=f"OpenVINO route: {_one_line(exc)}")
    row = CheckRow(path, "ok", ovpool_s=ovpool_s, route="openvino")
    layers = f"{moved} pool layer(s) on ovpool's ops in OpenVINO"
    if kept:
        layers += (
            f", {len(kept)} left native where OpenVINO deviates "
            f"({', '.join(sorted({d.deviation for d in kept}))})"
        )
    if spec:
        expected, row.reference = recording.outputs, "recorded (spec)"
        try:
            _, row.reference_s = _run_compiled(core, read(), inputs, repeat)
        except RuntimeError:
            pass
    else:
        try:
            expected, row.reference_s = _run_compiled(core, read(), inputs, repeat)
            row.reference = "openvino"
        except RuntimeError as exc:
            if recording is None or not recording.outputs:
                row.status, row.note = "NO-REFERENCE", f"{layers}; OpenVINO failed: {exc}"
                return row
            expected, row.reference = recording.outputs, "recorded (openvino)"
    row.note = layers
    ok, row.max_diff, why = compare_all(model, got, expected)
    if not ok:
        row.status = "MISMATCH"
        row.note = f"{why}; {layers}"
    return row
