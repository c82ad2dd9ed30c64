"""The ``ovpool`` command (also ``python -m ovpool``).

IR commands:

* ``ovpool info MODEL.xml [--layers]``: a summary of an OpenVINO IR model
  (inputs, outputs, layers counted by type, which ones ovpool's runtime runs)
  and its pool layers with their attributes and what
  ``ovpool.openvino.read_model``'s default policy does with each and why;
  every layer with ``--layers``.
* ``ovpool run MODEL.xml [--input NAME=FILE.npy] [--shape NAME=DIMS] [--seed S]
  [--output DIR] [--policy default|all]``: run it, print the input and output
  shapes and the time, save the outputs as .npy files. A model of pool
  layers runs on ovpool's runtime; a model with other layers (a network) runs
  through OpenVINO's CPU plugin with its pool layers on ovpool's extension
  where ``--policy`` says, and the command says which moved and why.
* ``ovpool check PATH... [--input ...] [--shape ...]``: run models (or every
  .xml under folders) on ovpool's runtime and compare with OpenVINO's native
  CPU result when OpenVINO is installed, else with the outputs recorded next
  to the model (``MODEL.npz``). One row per model; exit status 1 on any
  mismatch or error. A model with layers ovpool's runtime does not run
  (Convolution, ...) is checked through OpenVINO instead: its pool layers on
  ovpool's ops (the extension library) against native OpenVINO, those where
  native OpenVINO deviates from the specification left native. Without
  OpenVINO it is reported as ``openvino-route`` and is not a failure.

``run`` and ``check`` take any input as a file (``--input NAME=FILE.npy``) or
as seeded random data of a shape (``--shape NAME=1,3,224,224``); the other
inputs are seeded random data of their static shape, and a dynamic input
given neither way is an error naming both options.

Bad usage exits with status 2 and a one-line message; an expected error
(:class:`~ovpool.OvpoolError`, e.g. a malformed IR) prints one line (or, for
a network that ``run`` cannot take through OpenVINO because OpenVINO is not
installed, one line per layer ovpool's runtime does not run, the first 10), no
traceback, and exits with status 1.
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
        (
            "onnx averagepool_2d_ceil",
            lambda: ops.avg_pool(x44, (3, 3), strides=(2, 2), ceil_mode=True),
            np.array([[[[6, 7.5], [12, 13.5]]]], np.float32),
        ),
        (
            "onnx maxpool_2d_precomputed_pads",
            lambda: ops.max_pool(x55, (5, 5), pads=(2, 2, 2, 2))[0, 0, 0],
            np.array([13, 14, 15, 15, 15], np.float32),
        ),
        (
            "onnx maxpool_with_argmax storage_order=1",
            lambda: ops.max_pool(x55, (2, 2), strides=(2, 2), storage_order=1, return_indices=True)[
                1
            ],
            np.array([[[[6, 16], [8, 18]]]], np.int64),
        ),
        (
            "openvino adaptive_avg_pool 7 -> 3",
            lambda: ops.adaptive_avg_pool(np.arange(7, dtype=np.float32).reshape(1, 1, 7), 3),
            np.array([[[1.0, 3.0, 5.0]]], np.float32),
        ),
    ]
    failed = 0
    for name, run, expected in cases:
        got = run()
        ok = got.shape == expected.shape and np.allclose(got, expected)
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    print(
        f"ovpool {__version__}: OpenMP {'on' if _kernels.openmp_enabled() else 'OFF'}, "
        f"{get_num_threads()} threads; {len(cases) - failed}/{len(cases)} cases passed"
    )
    return 1 if failed else 0


# ---- IR commands (ovpool info / run / check) ----


class _UsageError(Exception):
    """Bad usage found after argument parsing (exit status 2)."""


def _ms(seconds):
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def _counts(items):
    """``"a x2, b"``: items counted, the most frequent first."""
    counts = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{k} x{n}" if n > 1 else k for k, n in ordered)


def _info(args):
    """Describe an IR model: a summary, the pool layers, every layer with --layers."""
    from . import _check, ir

    model = ir.read_model(args.model)
    print(f"{model.path}: IR v{model.ir_version}, model {model.name!r}, {len(model.layers)} layers")
    for title, infos in (("inputs", model.inputs), ("outputs", model.outputs)):
        print(f"{title}:")
        for info in infos:
            print(f"  {info.name:24s} {info.element_type:8s} {info.shape_str()}")
    print(f"layer types: {_counts(layer.type for layer in model.layers)}")
    others = [layer for layer in model.layers if not layer.runs_on_ovpool]
    if not others:
        print(
            "ovpool's runtime runs every layer: `ovpool run` and `ovpool check` run the model on it"
        )
    else:
        print(
            f"ovpool's runtime runs {len(model.layers) - len(others)} of the "
            f"{len(model.layers)} layers; {len(others)} need OpenVINO "
            f"({_counts(layer.type for layer in others)}): `ovpool run` and `ovpool check` "
            "take the model through OpenVINO with ovpool's extension (in Python: "
            "ovpool.openvino.read_model)"
        )
    used = {row["id"] for row in model.describe() if row["used"]}
    if len(used) < len(model.layers):
        print(f"{len(model.layers) - len(used)} layer(s) not used by any output")
    _print_pools(model, used, _check)
    if args.layers:
        _print_layers(model)
    else:
        print(f"every layer: `ovpool info --layers {args.model}`")
    return 0


def _print_pools(model, used, _check):
    pools = [layer for layer in model.layers if _check.is_pool(layer)]
    if not pools:
        print("pool layers: none")
        return
    decisions, why_not = _check.openvino_plan(model)
    by_name = {}
    for d in decisions or []:
        by_name.setdefault(d.name, []).append(d)
    head = f"pool layers: {len(pools)} ({_counts(f'{p.type}-{p.version}' for p in pools)})"
    if decisions:
        moving = sum(d.move for d in decisions)
        head += (
            f"; ovpool.openvino.read_model's default policy moves {moving} of the "
            f"{len(decisions)} native ones onto ovpool's ops"
        )
    elif decisions is None:
        head += f"; what ovpool.openvino.read_model's default policy does: unknown ({why_not})"
    print(head)
    for layer in pools:
        ins = [_type_of(model, source) for source in layer.sources[:1]]
        outs = [str(t) for t in layer.output_types]
        unused = "" if layer.id in used else "  (not used by any output)"
        print(
            f"  {layer.id:>4} {layer.name}  {layer.type}-{layer.version}  "
            f"{' '.join(ins)} -> {' '.join(outs)}{unused}"
        )
        attrs = [f"{k}={''.join(v.split())}" for k, v in layer.raw_attributes.items()]
        for k in layer.entry.value_inputs if layer.entry is not None else ():
            # an adaptive pool's output size: an input, shown when it is a constant
            # (the reader has read it already, to infer the shapes)
            value = model._const_value(layer.sources[k]) if k < len(layer.sources) else None
            if value is not None:
                attrs.append(f"{layer.entry.inputs[k]}={','.join(map(str, value.reshape(-1)))}")
        if attrs:
            print(f"         {' '.join(attrs)}")
        if layer.version == "ovpool":
            print("         ovpool's own op (opset 'ovpool'): runs on ovpool's kernels")
        elif by_name.get(layer.name):
            print(f"         default policy: {by_name[layer.name].pop(0).reason}")
        if not layer.runs_on_ovpool:
            print(f"         ovpool's runtime: {layer.reason}")


def _type_of(model, source):
    """The type of output ``source`` ((layer id, output index)) as info prints it."""
    layer_id, index = source
    types = model._by_id[layer_id].output_types
    return str(types[index]) if index < len(types) else "?"


def _print_layers(model):
    rows = model.describe()
    width = max(len(r["name"]) for r in rows)
    print("layers:")
    for r in rows:
        where = "ovpool" if r["runs_on_ovpool"] else "OpenVINO"
        note = "" if r["runs_on_ovpool"] else f"  ({r['reason']})"
        unused = "" if r["used"] else "  (not used by any output)"
        print(
            f"  {r['id']:>4} {r['name']:{width}s} {r['type']:>16s} {r['version']:8s} "
            f"{where:8s} {' '.join(r['outputs'])}{note}{unused}"
        )


def _named_values(specs, option, form, parse):
    """``{NAME: parse(NAME, VALUE)}`` of a repeated ``option NAME=VALUE``."""
    values = {}
    for spec in specs or []:
        name, sep, value = spec.partition("=")
        if not sep or not name or not value:
            raise _UsageError(f"{option} takes {form}, got {spec!r}")
        if name in values:
            raise _UsageError(f"{option} {name}=... is given twice")
        values[name] = value
    return {name: parse(name, value) for name, value in values.items()}  # usage errors first


def _load(name, path):
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise OvpoolError(f"{path}: cannot load the input {name!r}: {exc}") from None
    if not isinstance(array, np.ndarray):  # an .npz archive
        array.close()
        raise OvpoolError(f"{path}: cannot load the input {name!r}: not a .npy file (one array)")
    return array


def _dims(name, text):
    try:
        dims = tuple(int(d) for d in text.split(","))
    except ValueError:
        raise _UsageError(
            f"--shape {name}={text}: the dims are integers separated by commas, e.g. 1,3,224,224"
        ) from None
    if any(d < 0 for d in dims):
        raise _UsageError(f"--shape {name}={text}: a dim is >= 0")
    return dims


def _given_inputs(args):
    """``(given arrays, shapes)`` of --input and --shape."""
    return (
        _named_values(args.input, "--input", "NAME=FILE.npy", _load),
        _named_values(args.shape, "--shape", "NAME=DIMS, e.g. x=1,3,224,224", _dims),
    )


def _safe_name(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip(".") or "output"


def _run(args):
    """Run an IR model: on ovpool's runtime, or through OpenVINO with ovpool's
    extension for a model with other layers."""
    from . import _check, ir
    from .ir._reader import _error
    from .ir._runtime import _unsupported_report

    given, shapes = _given_inputs(args)
    model = ir.read_model(args.model)
    if not model.runs_on_ovpool and not _check.openvino_available():
        lines = _unsupported_report(model.unsupported_layers, model.path)
        raise _error(
            model.path,
            model.unsupported_layers[0].line,
            "\n".join(lines + ["(`ovpool run` does this itself once OpenVINO is installed)"]),
        )
    inputs = _check.random_inputs(model, args.seed, given, shapes)
    if model.runs_on_ovpool:
        outputs, seconds = _check.time_ovpool(model, inputs, repeat=args.repeat)
        route = f"on ovpool's runtime, {get_num_threads()} threads"
    else:
        outputs, seconds = _run_through_openvino(model, inputs, args, _check)
        route = "through OpenVINO (CPU plugin, f32) with ovpool's extension"
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
    print(f"ran in {_ms(seconds)} ms (best of {args.repeat}) {route}")
    return 0


def _run_through_openvino(model, inputs, args, _check):
    """The OpenVINO route of ``ovpool run``: says which pool layers move."""
    others = _counts(f"{layer.type}-{layer.version}" for layer in model.unsupported_layers)
    ready, why = _check.openvino_extension()
    if not ready:
        raise OvpoolError(
            f"{model.path}: ovpool's runtime does not run {others}, and ovpool's "
            f"OpenVINO extension, which runs the model through OpenVINO, is not "
            f"available: {why}"
        )
    print(
        f"route: OpenVINO (CPU plugin, f32) with ovpool's extension, for the layers "
        f"ovpool's runtime does not run ({others})"
    )
    outputs, seconds, plan = _check.run_openvino_route(model, inputs, args.policy, args.repeat)
    moved = [d for d in plan if d.move]
    print(f"pool layers under --policy {args.policy}: {len(moved)} of {len(plan)} on ovpool's ops")
    groups = {}
    for d in plan:
        groups.setdefault(d.reason, []).append(d)
    for reason, group in groups.items():
        verb, _, why = reason.partition(": ")  # "moved: ..." / "stays native: ..."
        print(f"  {verb} ({len(group)}): {why}")
        if group[0].move:
            for d in group:
                print(f"      {d.name} ({d.kind})")
    if len(moved) < len(plan) and args.policy != "all":
        print("  (`--policy all` moves every pool layer ovpool's kernels take)")
    return outputs, seconds


def _check_cmd(args):
    """Compare models on ovpool's runtime with OpenVINO or recorded outputs."""
    from . import _check

    given, shapes = _given_inputs(args)
    paths = _check.find_models(args.paths)
    if not paths:
        raise OvpoolError(f"no .xml model found in {' '.join(args.paths)}")
    use_openvino = _check.openvino_available() and not args.no_openvino
    source = "OpenVINO (native CPU, f32)" if use_openvino else "the recorded .npz files"
    print(f"ovpool {__version__}: checking {len(paths)} model(s) against {source}")
    rows = [
        _check.check_model(
            p,
            seed=args.seed,
            use_openvino=use_openvino,
            repeat=args.repeat,
            given=given,
            shapes=shapes,
        )
        for p in paths
    ]
    width = max(len(os.path.relpath(r.path)) for r in rows)
    print(
        f"{'model':{width}s}  {'status':14s} {'max|diff|':>9s} {'ovpool ms':>10s} "
        f"{'ref ms':>9s}  reference / note"
    )
    for r in rows:
        if r.max_diff is None:
            diff = "-"
        else:
            diff = "nan" if math.isnan(r.max_diff) else f"{r.max_diff:.2g}"
        note = "; ".join(x for x in (r.reference, " ".join(r.note.split())) if x)
        print(
            f"{os.path.relpath(r.path):{width}s}  {r.status:14s} {diff:>9s} "
            f"{_ms(r.ovpool_s):>10s} {_ms(r.reference_s):>9s}  {note}"
        )
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
    unused = sorted((set(given) | set(shapes)) - set().union(*(r.given for r in rows)))
    if unused:
        raise OvpoolError(
            f"no model checked has an input named {', '.join(map(repr, unused))} "
            "(given with --input or --shape)"
        )
    return 1 if failed else 0


def _positive(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _add_input_options(command):
    command.add_argument(
        "--input",
        action="append",
        metavar="NAME=FILE.npy",
        help="an input from a .npy file (repeat for several)",
    )
    command.add_argument(
        "--shape",
        action="append",
        metavar="NAME=DIMS",
        help="an input of seeded random data of this shape, e.g. "
        "x=1,3,224,224 (repeat for several); the inputs given neither "
        "way are seeded random data of their static shape",
    )


def _add_ir_commands(commands):
    info = commands.add_parser("info", help="describe an OpenVINO IR model (.xml + .bin)")
    info.add_argument("model", metavar="MODEL.xml")
    info.add_argument("--layers", action="store_true", help="list every layer too")
    info.set_defaults(func=_info)

    run = commands.add_parser(
        "run",
        help="run an OpenVINO IR model: on ovpool's runtime, or through OpenVINO with "
        "ovpool's extension when it has other layers",
    )
    run.add_argument("model", metavar="MODEL.xml")
    _add_input_options(run)
    run.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    run.add_argument("--output", metavar="DIR", help="save the outputs as DIR/<name>.npy")
    run.add_argument("--repeat", type=_positive, default=1, help="runs to time (best of)")
    run.add_argument(
        "--policy",
        choices=("default", "all"),
        default="default",
        help="through OpenVINO: which pool layers move onto ovpool's ops "
        "(ovpool.openvino.patch_model): 'default' where native OpenVINO "
        "deviates or ovpool is faster, 'all' every one ovpool's kernels take",
    )
    run.set_defaults(func=_run)

    check = commands.add_parser(
        "check", help="compare IR models on ovpool's runtime with OpenVINO or recorded outputs"
    )
    check.add_argument("paths", nargs="+", metavar="PATH", help="model .xml files or folders")
    _add_input_options(check)
    check.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the random inputs of models without a recorded .npz",
    )
    check.add_argument(
        "--no-openvino",
        action="store_true",
        help="compare with the recorded .npz even if OpenVINO is installed",
    )
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
    bench = commands.add_parser(
        "bench",
        add_help=False,
        prefix_chars="+",
        help="time ovpool against PyTorch, ONNX Runtime and OpenVINO "
        "(source checkout; `ovpool bench --help`)",
    )
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
        lines = [
            line[: len(line) - len(line.lstrip())] + " ".join(line.split())
            for line in str(exc).splitlines()
            if line.strip()
        ]
        body = "\n  ".join(lines)
        print(f"ovpool: error: {body}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
