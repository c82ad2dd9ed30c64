#!/usr/bin/env python
"""ovpool inside OpenVINO: single-op models and whole networks, native vs patched.

Usage (from the repository root, with openvino and torch installed and the
extension library built: ``python -m ovpool.openvino build``)::

    python benchmarks/ov_models.py                       # every case, 1 process, 7 rounds
    python benchmarks/ov_models.py --processes 3 --wait-idle 5     # for publishing
    python benchmarks/ov_models.py --cases resnet18,vgg11 --batches 8
    python benchmarks/ov_models.py --report benchmarks/results/ov-models.json

Each case is timed in one process as three systems, each a compiled model
with one reused infer request (``INFERENCE_PRECISION_HINT=f32``,
``INFERENCE_NUM_THREADS`` = the CPUs, one stream), side by side in
interleaved shuffled blocks (``timing.py``: median of block medians):

* ``native``: the model as OpenVINO converts or builds it;
* ``default``: after ``ovpool.openvino.patch_model(model)`` (the default
  policy: only where native deviates from the specification or ovpool is
  faster with the layout change counted);
* ``all``: after ``patch_model(model, policy="all")`` (every pool node);
* ``pytorch_route`` (networks): converted with ovpool's library,
  ``ov.convert_model(module, ..., extension=pytorch_extensions())``, whose
  conversions follow the default policy.

Cases:

* single-op models (Parameter -> pool -> Result) with the issue's targets:
  a 1x1x8x8 AdaptiveAvgPool (to 3x3, bins that do not tile: moved by
  default), 8x512x28x28 AdaptiveAvgPool to 7x7, MaxPool 3x3 s2 p1 with its
  indices on 8x64x56x56;
* the networks of ``networks.py`` (torchvision's architectures in plain
  PyTorch, random weights) at batch 1 and 8, converted with
  ``ov.convert_model(module, example_input=x, input=[shape])``.

Every system's outputs are compared with PyTorch's (networks) or with the
native model's (single ops) before timing. Results: JSON in
``benchmarks/results/`` and a Markdown table on stdout.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import random
import statistics
import subprocess
import sys
import warnings
from pathlib import Path

if not __package__:  # run as a script: this checkout's ovpool, and this directory as a package
    _ROOT = Path(__file__).resolve().parent.parent
    if sys.path and Path(sys.path[0]).resolve() == _ROOT / "benchmarks":
        sys.path.pop(0)
    sys.path.insert(0, str(_ROOT))
    from ovpool.bench import load_benchmarks

    __package__ = load_benchmarks(_ROOT / "benchmarks").__name__

import numpy as np

from . import networks, timing
from .run import cpu_snapshot, describe_machine, other_load, wait_for_idle

REPO_ROOT = Path(__file__).resolve().parent.parent
SYSTEMS = ("native", "default", "all", "pytorch_route")
TARGETS = {"aap_tiny": 1.1, "aap_28to7": 0.1, "maxpool_indices": 0.03}
NETWORK_TARGET = 1.03

# (name, input shape, builder name, kwargs): single-op models
SINGLE_OPS = {
    "aap_tiny": ((1, 1, 8, 8), "adaptive_avg", {"size": [3, 3]}),
    "aap_28to7": ((8, 512, 28, 28), "adaptive_avg", {"size": [7, 7]}),
    "maxpool_indices": ((8, 64, 56, 56), "max_indices", {}),
}


def case_names():
    return list(SINGLE_OPS) + list(networks.NETWORKS)


# --------------------------------------------------------------------------
# models
# --------------------------------------------------------------------------


def single_op_model(name):
    import openvino as ov
    import openvino.opset8 as o8

    shape, kind, kw = SINGLE_OPS[name]
    x = o8.parameter(list(shape), np.float32, name="x")
    if kind == "adaptive_avg":
        outputs = [o8.adaptive_avg_pool(x, o8.constant(np.array(kw["size"], np.int64))).output(0)]
    else:
        pool = o8.max_pool(x, [2, 2], [1, 1], [1, 1], [1, 1], [3, 3], index_element_type="i64")
        outputs = [pool.output(0), pool.output(1)]
    model = ov.Model([o8.result(o) for o in outputs], [x], name)
    data = np.random.default_rng(0).standard_normal(shape, dtype=np.float32)
    return model, data, None


def network_model(name, batch):
    import openvino as ov
    import torch

    import ovpool.openvino as ovp

    module, chw = networks.build(name)
    x = torch.randn(batch, *chw, generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ov.convert_model(module, example_input=x, input=[list(x.shape)])
        # the PyTorch route: converted with ovpool's library (its default policy)
        routed = ov.convert_model(
            module, example_input=x, input=[list(x.shape)], extension=ovp.pytorch_extensions()
        )
        with torch.no_grad():
            reference = module(x).numpy()
    return model, x.numpy(), [reference], routed


def max_abs_diff(got, expected):
    worst = 0.0
    for g, e in zip(got, expected):
        if g.shape != e.shape:
            return float("inf")
        worst = max(worst, float(np.abs(g.astype(np.float64) - e.astype(np.float64)).max()))
    return worst


# --------------------------------------------------------------------------
# one case
# --------------------------------------------------------------------------


def bench_case(name, batch, n_threads, protocol, rng):
    import openvino as ov

    import ovpool.openvino as ovp

    from .peers import OpenVINORunner

    core = ovp.register(ov.Core())
    if name in SINGLE_OPS:
        model, x, reference = single_op_model(name)
        routed = None
    else:
        model, x, reference, routed = network_model(name, batch)
    entry = {
        "case": name,
        "batch": int(x.shape[0]),
        "threads": n_threads,
        "input_shape": list(x.shape),
        "systems": {},
    }
    runners, outputs = {}, {}
    systems = [s for s in SYSTEMS if s != "pytorch_route" or routed is not None]
    for system in systems:
        if system == "pytorch_route":
            m = routed
            moved = sum(n.get_type_info().version_id == "ovpool" for n in m.get_ordered_ops())
            decisions, reasons = [], []
        else:
            m = model.clone()
            policy = "all" if system == "all" else "default"
            moved = 0 if system == "native" else ovp.patch_model(m, policy=policy)
            decisions = ovp.patch_plan(model.clone(), policy=policy)
            reasons = sorted({d.reason for d in decisions if d.move}) if system != "native" else []
        runner = OpenVINORunner(m, x, n_threads, system, core=core)
        runners[system] = runner
        outputs[system] = runner.outputs()
        layers = [f"{t}/{p}" for t, p in runner.runtime_layers()]
        entry["systems"][system] = {
            "moved_nodes": moved,
            "pool_nodes": len(decisions),
            "reasons": reasons,
            "runtime_layers": sorted(
                {t for t in layers if "Pool" in t or t.split("/")[0] in ("Reference", "Reorder")}
            ),
            "reorders": sum(t.startswith("Reorder/") for t in layers),
        }
    for system in systems:
        info = entry["systems"][system]
        if reference is not None:
            info["max_abs_diff_torch"] = max_abs_diff(outputs[system][:1], reference)
        info["max_abs_diff_native"] = max_abs_diff(outputs[system], outputs["native"])
    calls = {
        k: timing.calls_per_block(timing.warm_up(r, protocol), protocol) for k, r in runners.items()
    }
    blocks = timing.run_rounds(runners, calls, protocol, rng)
    for k, r in runners.items():
        entry["systems"][k].update(timing.summarize(blocks[k]))
        r.close()
    native = entry["systems"]["native"]["median_ms"]
    entry["ratios"] = {k: entry["systems"][k]["median_ms"] / native for k in systems}
    return entry


def run_all(args):
    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    protocol = timing.Protocol(**timing.QUICK.as_dict()) if args.quick else timing.Protocol()
    if args.rounds:
        protocol.rounds = args.rounds
    rng = random.Random(args.seed)
    results = []
    for name in args.cases:
        batches = [1] if name in SINGLE_OPS else args.batches
        for batch in batches:
            load = wait_for_idle(args.wait_idle) if args.wait_idle > 0 else None
            before = cpu_snapshot()
            try:
                entry = bench_case(name, batch, threads, protocol, rng)
            except Exception as exc:  # a case that cannot be built is reported, not fatal
                entry = {"case": name, "batch": batch, "error": f"{type(exc).__name__}: {exc}"}
            entry["other_load"] = other_load(before, cpu_snapshot())
            entry["load_before"] = load
            results.append(entry)
            print(_row(entry), file=sys.stderr, flush=True)
    return results


# --------------------------------------------------------------------------
# processes, report
# --------------------------------------------------------------------------


def merge(runs):
    """Median of the per-process medians, per case and system."""
    merged = []
    for i, first in enumerate(runs[0]):
        entry = json.loads(json.dumps(first))
        if "error" in entry:
            merged.append(entry)
            continue
        for system in entry["systems"]:
            meds = [run[i]["systems"][system]["median_ms"] for run in runs if "systems" in run[i]]
            entry["systems"][system]["median_ms"] = statistics.median(meds)
            entry["systems"][system]["process_medians_ms"] = meds
            entry["systems"][system]["best_block_ms"] = min(
                run[i]["systems"][system]["best_block_ms"] for run in runs if "systems" in run[i]
            )
        native = entry["systems"]["native"]["median_ms"]
        entry["ratios"] = {k: entry["systems"][k]["median_ms"] / native for k in entry["systems"]}
        entry["other_load"] = [run[i].get("other_load") for run in runs]
        merged.append(entry)
    return merged


def _row(e):
    if "error" in e:
        return f"| {e['case']} | {e['batch']} | error: {e['error'][:80]} |"
    s = e["systems"]
    target = TARGETS.get(e["case"], NETWORK_TARGET)
    ok = "yes" if e["ratios"]["default"] <= target else "NO"
    diff = s["default"].get("max_abs_diff_torch", s["default"]["max_abs_diff_native"])
    diff_all = s["all"].get("max_abs_diff_torch", s["all"]["max_abs_diff_native"])
    moved = s["default"]["moved_nodes"]
    same = " (= native)" if moved == 0 else ""
    route = "-"
    if "pytorch_route" in s:
        route = (
            f"{s['pytorch_route']['median_ms']:.3f} ({e['ratios']['pytorch_route']:.3f}, "
            f"{s['pytorch_route']['moved_nodes']} ovpool)"
        )
    return (
        f"| {e['case']} | {e['batch']} | {s['native']['median_ms']:.3f} | "
        f"{s['default']['median_ms']:.3f} | **{e['ratios']['default']:.3f}** | "
        f"{moved}/{s['default']['pool_nodes']}{same} | "
        f"{s['all']['median_ms']:.3f} ({e['ratios']['all']:.3f}) | "
        f"{s['all']['moved_nodes']} | {route} | {diff:.1e} / {diff_all:.1e} | "
        f"<= {target} | {ok} |"
    )


HEADER = (
    "| case | batch | native ms | default ms | default / native | moved (default) | "
    "all ms (/ native) | moved (all) | PyTorch route ms (/ native) | "
    "max abs diff (default / all) | target | holds |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def print_report(report):
    m = report["machine"]
    print(
        f"\n{m.get('cpu_model')}, {m.get('cpus')} CPUs; openvino "
        f"{m['versions'].get('openvino')}, torch {m['versions'].get('torch')}; "
        f"{report['processes']} process(es) x {report['rounds']} rounds; "
        f"{report['created']}\n"
    )
    print(HEADER)
    for e in report["results"]:
        print(_row(e))
    print("\nmax abs diff: networks against PyTorch, single ops against native OpenVINO")


def build_parser():
    p = argparse.ArgumentParser(
        prog="benchmarks/ov_models.py", description=__doc__.split("\n\n")[0]
    )
    p.add_argument(
        "--cases",
        default=",".join(case_names()),
        help="comma-separated cases (default: all): " + ", ".join(case_names()),
    )
    p.add_argument("--batches", default="1,8", help="network batch sizes (default 1,8)")
    p.add_argument("--rounds", type=int, default=None, help="shuffled rounds (default 7)")
    p.add_argument(
        "--processes",
        type=int,
        default=1,
        metavar="K",
        help="K fresh interpreters one after another; the median of their medians",
    )
    p.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before each case wait up to SECONDS for other processes to leave the CPUs",
    )
    p.add_argument("--quick", action="store_true", help="a smoke run, not a measurement")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(REPO_ROOT / "benchmarks" / "results"))
    p.add_argument("--name", default=None, help="file name stem (default ov-models-<timestamp>)")
    p.add_argument("--report", default=None, metavar="JSON", help="print an existing result file")
    p.add_argument("--child-json", default=None, help=argparse.SUPPRESS)
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.report:
        print_report(json.loads(Path(args.report).read_text()))
        return 0
    args.cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in args.cases if c not in case_names()]
    if unknown:
        raise SystemExit(f"unknown cases {unknown}; known: {case_names()}")
    args.batches = [int(b) for b in str(args.batches).split(",") if b.strip()]
    if args.child_json:
        Path(args.child_json).write_text(json.dumps(run_all(args)))
        return 0
    import ovpool  # noqa: F401  (first, as in run.py)

    if args.processes > 1:
        runs = []
        for k in range(args.processes):
            child = Path(args.out) / f".ov-models-child-{os.getpid()}-{k}.json"
            child.parent.mkdir(parents=True, exist_ok=True)
            argv_child = [a for a in (argv if argv is not None else sys.argv[1:])]
            argv_child = _strip(argv_child, "--processes") + ["--child-json", str(child)]
            subprocess.run([sys.executable, str(Path(__file__).resolve()), *argv_child], check=True)
            runs.append(json.loads(child.read_text()))
            child.unlink()
        results = merge(runs)
    else:
        results = run_all(args)
    protocol = timing.Protocol()
    report = {
        "created": _dt.datetime.now().isoformat(timespec="seconds"),
        "argv": sys.argv[1:] if argv is None else argv,
        "processes": args.processes,
        "rounds": args.rounds or (timing.QUICK.rounds if args.quick else protocol.rounds),
        "machine": describe_machine(),
        "targets": TARGETS,
        "network_target": NETWORK_TARGET,
        "results": results,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = args.name or "ov-models-" + _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    (out / f"{stem}.json").write_text(json.dumps(report, indent=1))
    print_report(report)
    print(f"\nwritten: {out / (stem + '.json')}")
    return 0


def _strip(argv, option):
    result, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == option:
            skip = True
            continue
        if a.startswith(option + "="):
            continue
        result.append(a)
    return result


if __name__ == "__main__":
    sys.exit(main())
