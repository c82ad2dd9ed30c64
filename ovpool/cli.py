"""The ``ovpool`` command (also ``python -m ovpool``).

IR commands:

* ``ovpool info MODEL.xml``: inputs, outputs and layers of an OpenVINO IR
  model, and which layers ovpool's runtime runs.
* ``ovpool run MODEL.xml [--input NAME=FILE.npy ...] [--seed S] [--output DIR]``:
  run it on ovpool's runtime, print output shapes and timing, save .npy files.
* ``ovpool check PATH...``: run models (or every .xml under folders) on
  ovpool's runtime and compare with OpenVINO's native CPU result when
  OpenVINO is installed, else with the outputs recorded next to the model
  (``MODEL.npz``). One row per model; exit status 1 on any mismatch or error.
  A model with layers ovpool's runtime does not run (Convolution, ...) is
  checked through OpenVINO instead: its pool layers on ovpool's ops (the
  extension library) against native OpenVINO, those where native OpenVINO
  deviates from the specification left native. Without OpenVINO it is
  reported as ``openvino-route`` and is not a failure.

Bad usage exits with status 2 and a one-line message; an expected error
(:class:`~ovpool.OvpoolError`, e.g. a malformed IR) prints one line (or, for
a model with layers ovpool's runtime does not run, one line per layer, the
first 10), no traceback, and exits with status 1.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys

import numpy as np

from . import __version__
from ._isa import kernels as _kernels
from ._threads import get_num_threads
from .errors import OvpoolError


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # bad usage: one line, exit status 2
        self.exit(2, f"ovpool: error: {message}\n")


def _selfcheck(args):
    """Run hand-computed cases from the ONNX and OpenVINO specifications."""
    from . import ops

    x44 = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    x55 = np.arange(1, 26, dtype=np.float32).reshape(1, 1, 5, 5)
    cases = [
        ("onnx averagepool_2d_ceil",
         lambda: ops.avg_pool(x44, (3, 3), strides=(2, 2), ceil_mode=True),
         np.array([[[[6, 7.5], [12, 13.5]]]], np.float32)),
        ("onnx maxpool_2d_precomputed_pads",
         lambda: ops.max_pool(x55, (5, 5), pads=(2, 2, 2, 2))[0, 0, 0],
         np.array([13, 14, 15, 15, 15], np.float32)),
        ("onnx maxpool_with_argmax storage_order=1",
         lambda: ops.max_pool(x55, (2, 2), strides=(2, 2), storage_order=1,
                              return_indices=True)[1],
         np.array([[[[6, 16], [8, 18]]]], np.int64)),
        ("openvino adaptive_avg_pool 7 -> 3",
         lambda: ops.adaptive_avg_pool(np.arange(7, dtype=np.float32).reshape(1, 1, 7), 3),
         np.array([[[1.0, 3.0, 5.0]]], np.float32)),
    ]
    failed = 0
    for name, run, expected in cases:
        got = run()
        ok = got.shape == expected.shape and np.allclose(got, expected)
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    print(f"ovpool {__version__}: OpenMP {'on' if _kernels.openmp_enabled() else 'OFF'}, "
          f"{get_num_threads()} threads; {len(cases) - failed}/{len(cases)} cases passed")
    return 1 if failed else 0


# ---- IR commands (ovpool info / run / check) ----

class _UsageError(Exception):
    """Bad usage found after argument parsing (exit status 2)."""


def _ms(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def _info(args):
    """Describe an IR model."""
    from . import ir

    model = ir.read_model(args.model)
    print(f"{model.path}: IR v{model.ir_version}, model {model.name!r}, {len(model.layers)} layers")
    for title, infos in (("inputs", model.inputs), ("outputs", model.outputs)):
        print(f"{title}:")
        for info in infos:
            print(f"  {info.name:24s} {info.element_type:8s} {info.shape_str()}")
    rows = model.describe()
    width = max(len(r["name"]) for r in rows)
    print("layers:")
    for r in rows:
        where = "ovpool" if r["runs_on_ovpool"] else "OpenVINO"
        note = "" if r["runs_on_ovpool"] else f"  ({r['reason']})"
        unused = "" if r["used"] else "  (not used by any output)"
        print(f"  {r['id']:>4} {r['name']:{width}s} {r['type']:>16s} {r['version']:8s} "
              f"{where:8s} {' '.join(r['outputs'])}{note}{unused}")
    if model.runs_on_ovpool:
        print("ovpool's runtime runs every layer of this model (ovpool run / ovpool check)")
    else:
        kinds = sorted({f"{layer.type}-{layer.version}" for layer in model.unsupported_layers})
        print(f"{len(model.unsupported_layers)} layer(s) need OpenVINO ({', '.join(kinds)}): "
              "run the model with OpenVINO and ovpool's extension, "
              f"ovpool.openvino.read_model(core, {args.model!r}) with core = openvino.Core()")
    return 0


def _parse_inputs(specs):
    given = {}
    for spec in specs or []:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise _UsageError(f"--input takes NAME=FILE.npy, got {spec!r}")
        try:
            given[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise OvpoolError(f"{path}: cannot load the input {name!r}: {exc}") from None
    return given


def _safe_name(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip(".") or "output"


def _run(args):
    """Run an IR model on ovpool's runtime."""
    from . import _check, ir

    model = ir.read_model(args.model)
    inputs = _check.random_inputs(model, args.seed, _parse_inputs(args.input))
    outputs, seconds = _check.time_ovpool(model, inputs, repeat=args.repeat)
    for info, array in zip(model.inputs, inputs):
        print(f"input  {info.name:24s} {array.dtype!s:8s} {list(array.shape)}")
    used = set()
    for info, array in zip(model.outputs, outputs):
        line = f"output {info.name:24s} {array.dtype!s:8s} {list(array.shape)}"
        if args.output:
            os.makedirs(args.output, exist_ok=True)
            base = name = _safe_name(info.name)
            k = 1
            while name in used:
                k += 1
                name = f"{base}_{k}"
            used.add(name)
            path = os.path.join(args.output, name + ".npy")
            np.save(path, array)
            line += f" -> {path}"
        print(line)
    print(f"ran in {_ms(seconds)} ms (best of {args.repeat}) on ovpool's runtime, "
          f"{get_num_threads()} threads")
    return 0


def _check_cmd(args):
    """Compare models on ovpool's runtime with OpenVINO or recorded outputs."""
    from . import _check

    paths = _check.find_models(args.paths)
    if not paths:
        raise OvpoolError(f"no .xml model found in {' '.join(args.paths)}")
    use_openvino = _check.openvino_available() and not args.no_openvino
    source = "OpenVINO (native CPU, f32)" if use_openvino else "the recorded .npz files"
    print(f"ovpool {__version__}: checking {len(paths)} model(s) against {source}")
    rows = [_check.check_model(p, seed=args.seed, use_openvino=use_openvino, repeat=args.repeat)
            for p in paths]
    width = max(len(os.path.relpath(r.path)) for r in rows)
    print(f"{'model':{width}s}  {'status':14s} {'max|diff|':>9s} {'ovpool ms':>10s} "
          f"{'ref ms':>9s}  reference / note")
    for r in rows:
        if r.max_diff is None:
            diff = "-"
        else:
            diff = "nan" if math.isnan(r.max_diff) else f"{r.max_diff:.2g}"
        note = "; ".join(x for x in (r.reference, " ".join(r.note.split())) if x)
        print(f"{os.path.relpath(r.path):{width}s}  {r.status:14s} {diff:>9s} "
              f"{_ms(r.ovpool_s):>10s} {_ms(r.reference_s):>9s}  {note}")
    failed = [r for r in rows if r.failed]
    routed = [r for r in rows if r.status == "openvino-route"]
    summary = f"{len(rows) - len(failed) - len(routed)} ok"
    through = [r for r in rows if r.route == "openvino" and not r.failed]
    if through:
        summary += f" ({len(through)} through OpenVINO with ovpool's ops)"
    if routed:
        summary += f", {len(routed)} need the OpenVINO route (not checked by ovpool's runtime)"
    if failed:
        summary += f", {len(failed)} FAILED"
    print(summary)
    return 1 if failed else 0


def _positive(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _add_ir_commands(commands):
    info = commands.add_parser("info", help="describe an OpenVINO IR model (.xml + .bin)")
    info.add_argument("model", metavar="MODEL.xml")
    info.set_defaults(func=_info)

    run = commands.add_parser("run", help="run an OpenVINO IR model on ovpool's runtime")
    run.add_argument("model", metavar="MODEL.xml")
    run.add_argument("--input", action="append", metavar="NAME=FILE.npy",
                     help="an input from a .npy file (repeat for several); the others are "
                          "seeded random")
    run.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    run.add_argument("--output", metavar="DIR", help="save the outputs as DIR/<name>.npy")
    run.add_argument("--repeat", type=_positive, default=1, help="runs to time (best of)")
    run.set_defaults(func=_run)

    check = commands.add_parser(
        "check", help="compare IR models on ovpool's runtime with OpenVINO or recorded outputs")
    check.add_argument("paths", nargs="+", metavar="PATH", help="model .xml files or folders")
    check.add_argument("--seed", type=int, default=0,
                       help="seed of the random inputs of models without a recorded .npz")
    check.add_argument("--no-openvino", action="store_true",
                       help="compare with the recorded .npz even if OpenVINO is installed")
    check.add_argument("--repeat", type=_positive, default=3, help="runs to time (best of)")
    check.set_defaults(func=_check_cmd)

# ---- end of IR commands ----


def build_parser():
    parser = _Parser(prog="ovpool", description="Fast, exact pooling for OpenVINO IR and ONNX.")
    parser.add_argument("--version", action="version", version=f"ovpool {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    selfcheck = commands.add_parser("selfcheck", help="check the installed kernels on known cases")
    selfcheck.set_defaults(func=_selfcheck)
    _add_ir_commands(commands)

    def _bench(args):  # imported lazily: the peers (torch, onnxruntime, openvino) load only here
        from .bench import main as bench_main
        return bench_main(args.bench_args)

    # prefix_chars="+": every option after "bench" goes to benchmarks/run.py untouched
    bench = commands.add_parser("bench", add_help=False, prefix_chars="+",
                                help="time ovpool against PyTorch, ONNX Runtime and OpenVINO "
                                     "(source checkout; `ovpool bench --help`)")
    bench.add_argument("bench_args", nargs=argparse.REMAINDER)
    bench.set_defaults(func=_bench)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except _UsageError as exc:
        parser.exit(2, f"ovpool: error: {exc}\n")
    except OvpoolError as exc:  # an expected error: no traceback
        # one line, unless the message lists items one per line (the layers
        # ovpool's runtime cannot run): those lines are kept, indented
        lines = [line[:len(line) - len(line.lstrip())] + " ".join(line.split())
                 for line in str(exc).splitlines() if line.strip()]
        body = "\n  ".join(lines)
        print(f"ovpool: error: {body}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
