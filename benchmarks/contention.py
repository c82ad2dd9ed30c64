"""Calls beside other thread pools: what a pool call costs right after
another runtime's call, and with a busy neighbour process.

ovpool's users run it in the process of a model (OpenVINO, ONNX Runtime,
PyTorch) and on machines shared with other processes. A call whose threads
meet at a barrier waits there for the slowest of them; one the scheduler has
not run yet costs a scheduler slice (milliseconds) however small the call.
This group times two calls of the issue that measured it call by call:

* ``adaptive_avg``: ``adaptive_avg_pool`` of 8x512x28x28 float32 to 7x7;
* ``max_5x5``: ``max_pool`` 5x5 s1 p2 on 8x512x20x20 float32;

in four settings (alone; right after an ONNX Runtime call; after an OpenVINO
call; after a torch call: each peer runs a 3x3 average pool on 8x256x56x56
before every timed call), on the machine as it is ("quiet") and beside one
CPU-bound neighbour process the benchmark starts ("busy"). Each is timed at
the default thread count and at 1 thread in the same setting (the
reference), and, when OpenVINO is installed, through ovpool's extension
library inside OpenVINO (its ops on OpenVINO's TBB threads:
``patch_model(policy="all")`` of the native op, ``infer`` of a compiled
model). Target: in every setting, p90 at most 2x the one-thread p90.

Protocol: rounds of the settings in a shuffled order; in each, every system
makes ``CALLS`` timed calls (each after its setting's peer call, if any);
p50 and p90 are over all of a cell's calls. ``--baseline DIR`` adds an
earlier build (the package ``ovpool_base``) in the same rounds. Run::

    python benchmarks/run.py --contention            # a table, and JSON under --out
"""

from __future__ import annotations

import json
import platform
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

CALLS = 25  # timed calls of a system in a setting, per round
TARGET = 2.0  # p90 at most this many times the one-thread p90
PEER_SHAPE = (8, 256, 56, 56)


def _ovpool_calls(ov):
    x1 = np.random.default_rng(1).random((8, 512, 28, 28), dtype=np.float32)
    x2 = np.random.default_rng(2).random((8, 512, 20, 20), dtype=np.float32)
    return {
        "adaptive_avg": (x1, lambda nt: ov.adaptive_avg_pool(x1, (7, 7), num_threads=nt)),
        "max_5x5": (x2, lambda nt: ov.max_pool(x2, (5, 5), pads=(2, 2, 2, 2), num_threads=nt)),
    }


def _peers():
    """The calls that run before a timed call: name -> callable (the
    runtimes that are not installed are left out)."""
    peers = {"alone": lambda: None}
    xp = np.random.default_rng(3).random(PEER_SHAPE, dtype=np.float32)
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper

        node = helper.make_node("AveragePool", ["X"], ["Y"], kernel_shape=[3, 3], pads=[1] * 4)
        graph = helper.make_graph(
            [node],
            "g",
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, PEER_SHAPE)],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        peers["after_onnxruntime"] = lambda: session.run(None, {"X": xp})
    except ImportError:
        pass
    try:
        import openvino as ovr
        import openvino.opset8 as o8

        p = o8.parameter(PEER_SHAPE, np.float32)
        model = ovr.Model([o8.avg_pool(p, [1, 1], [1, 1], [1, 1], [3, 3], True)], [p])
        compiled = ovr.Core().compile_model(model, "CPU")
        peers["after_openvino"] = lambda: compiled(xp)
    except ImportError:
        pass
    try:
        import torch

        tx = torch.from_numpy(xp)
        peers["after_torch"] = lambda: torch.nn.functional.avg_pool2d(tx, 3, 1, 1)
    except ImportError:
        pass
    return peers


def _extension_calls(calls, patch=True):
    """The same calls on ovpool's ops inside OpenVINO, or (patch False) on
    OpenVINO's own ops; None without OpenVINO."""
    try:
        import openvino as ovr
        import openvino.opset8 as o8

        import ovpool.openvino as ovp
    except ImportError:
        return None
    core = ovp.register(ovr.Core())
    out = {}
    for name, (x, _) in calls.items():
        p = o8.parameter(x.shape, np.float32)
        if name == "adaptive_avg":
            node = o8.adaptive_avg_pool(p, o8.constant(np.array([7, 7], np.int64)))
        else:
            node = o8.max_pool(p, [1, 1], [1, 1], [2, 2], [2, 2], [5, 5])
        model = ovr.Model([node.output(0)], [p])
        if patch:
            ovp.patch_model(model, policy="all")
        request = core.compile_model(model, "CPU").create_infer_request()
        out[name] = (lambda r, a: lambda nt: r.infer([a]))(request, x)
    return out


def _busy_neighbour():
    """One CPU-bound process beside the benchmark."""
    return subprocess.Popen([sys.executable, "-c", "while True:\n    pass"])


def _percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def run(rounds=4, seed=0, baseline=None):
    import ovpool

    rng = random.Random(seed)
    calls = _ovpool_calls(ovpool)
    systems = {"ovpool": lambda f: f(None), "ovpool_1t": lambda f: f(1)}
    base_calls = None
    if baseline is not None:
        base_calls = _ovpool_calls(baseline)
        systems["ovpool_base"] = None
    extension = _extension_calls(calls)
    native = _extension_calls(calls, patch=False)
    if extension is not None:
        systems["openvino_ext"] = None
        systems["openvino_native"] = None
    peers = _peers()
    samples = {}  # (load, call, peer, system) -> [seconds]
    for load in ("quiet", "busy"):
        neighbour = _busy_neighbour() if load == "busy" else None
        try:
            time.sleep(0.2 if neighbour else 0.0)
            for _, (_, f) in calls.items():
                f(None)
                f(1)
            for _ in range(rounds):
                order = [(c, p, s) for c in calls for p in peers for s in systems]
                rng.shuffle(order)
                for call, peer, system in order:
                    if system == "ovpool_base":
                        f = base_calls[call][1]
                        timed = lambda f=f: f(None)  # noqa: E731
                    elif system in ("openvino_ext", "openvino_native"):
                        f = (extension if system == "openvino_ext" else native)[call]
                        timed = lambda f=f: f(None)  # noqa: E731
                    else:
                        f = calls[call][1]
                        timed = lambda f=f, s=system: systems[s](f)  # noqa: E731
                    before = peers[peer]
                    cell = samples.setdefault((load, call, peer, system), [])
                    for _ in range(CALLS):
                        before()
                        t = time.perf_counter()
                        timed()
                        cell.append(time.perf_counter() - t)
        finally:
            if neighbour is not None:
                neighbour.kill()
                neighbour.wait()
    results = []
    for (load, call, peer, system), values in sorted(samples.items()):
        results.append(
            {
                "load": load,
                "call": call,
                "setting": peer,
                "system": system,
                "p50_ms": _percentile(values, 0.5) * 1e3,
                "p90_ms": _percentile(values, 0.9) * 1e3,
                "calls": len(values),
            }
        )
    return results


def table(results):
    """A markdown table: per load, call and setting, p50 / p90 of each system
    and the ratio of ovpool's p90 to its one-thread p90."""
    cells = {(r["load"], r["call"], r["setting"], r["system"]): r for r in results}
    keys = sorted({(r["load"], r["call"], r["setting"]) for r in results})
    systems = [
        s
        for s in ("ovpool", "ovpool_1t", "ovpool_base", "openvino_ext", "openvino_native")
        if any(k[3] == s for k in cells)
    ]
    head = "| load | call | setting | " + " | ".join(f"{s} p50 / p90 ms" for s in systems)
    head += " | ovpool p90 / 1-thread p90 |"
    lines = [head, "|" + "---|" * (4 + len(systems))]
    worst = 0.0
    for load, call, setting in keys:
        row = [load, call, setting]
        for s in systems:
            r = cells.get((load, call, setting, s))
            row.append("" if r is None else f"{r['p50_ms']:.2f} / {r['p90_ms']:.2f}")
        ratio = (
            cells[(load, call, setting, "ovpool")]["p90_ms"]
            / cells[(load, call, setting, "ovpool_1t")]["p90_ms"]
        )
        worst = max(worst, ratio)
        row.append(f"{ratio:.2f}")
        lines.append("| " + " | ".join(row) + " |")
    lines.append(f"\nworst ovpool p90 / one-thread p90: {worst:.2f} (target at most {TARGET:.1f})")
    return "\n".join(lines)


def main(out, name, rounds=4, seed=0, machine=None, baseline=None):
    base = None
    if baseline is not None:
        from .peers import import_baseline

        base = import_baseline(baseline)
    results = run(rounds=rounds, seed=seed, baseline=base)
    report = {
        "group": "contention",
        "machine": machine or platform.processor(),
        "calls_per_cell_and_round": CALLS,
        "rounds": rounds,
        "results": results,
    }
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name or 'contention-' + time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(report, indent=1, default=str))
    print(table(results))
    print(f"wrote {path}")
    return 0
