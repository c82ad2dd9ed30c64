"""Small calls: what a call costs when there is almost nothing to pool.

On a 1x8x8x8 float32 input the pooling itself takes well under a
microsecond; what a call costs is its front door (argument checks, the cache
of plans, allocation, the thread decision). This group times seven such calls
three ways, beside PyTorch's functional call and a tiny numpy ufunc call
(``np.add`` on two 8-element arrays, allocating its output), the yardstick
of what a Python call into compiled code costs on the machine:

* ``function``: the numpy function (``ovpool.max_pool(x, ...)``), as a user
  calls it in a loop;
* ``pool``: a prepared pool (``ovpool.prepare(...)``) called on the array;
* ``torch``: ``torch.nn.functional``'s call on a tensor sharing x's memory.

Targets: a function at most 4 ufunc calls and at most torch's time; a
prepared pool at most 2 ufunc calls.

Protocol: each system is timed in blocks of consecutive calls around one
clock read (a clock read per call would cost a tenth of what is measured),
blocks of about 20 ms, the systems in a shuffled order in each of several
rounds; a system's time is the median of its block medians. The garbage
collector is off while timing. Run::

    python benchmarks/run.py --small-calls            # a table, and JSON under --out
"""

from __future__ import annotations

import gc
import json
import platform
import random
import statistics
import time
from pathlib import Path

import numpy as np

SHAPE = (1, 8, 8, 8)
FUNCTION_UFUNCS = 4.0  # target: a function call at most this many ufunc calls
POOL_UFUNCS = 2.0  # target: a prepared pool call


def _calls(x, torch):
    """(name, what it computes, ovpool function and its arguments, torch call)."""
    import ovpool

    t = None if torch is None else torch.from_numpy(x)
    functional = None if torch is None else torch.nn.functional
    cases = [
        (
            "global_avg_pool",
            "mean of each plane",
            ovpool.global_avg_pool,
            (),
            {},
            lambda: functional.adaptive_avg_pool2d(t, 1),
        ),
        (
            "global_max_pool",
            "maximum of each plane",
            ovpool.global_max_pool,
            (),
            {},
            lambda: functional.adaptive_max_pool2d(t, 1),
        ),
        (
            "avg_pool_3x3",
            "avg_pool 3x3 s1",
            ovpool.avg_pool,
            ((3, 3),),
            {},
            lambda: functional.avg_pool2d(t, 3, 1),
        ),
        (
            "max_pool_2x2_s2",
            "max_pool 2x2 s2",
            ovpool.max_pool,
            ((2, 2),),
            {"strides": (2, 2)},
            lambda: functional.max_pool2d(t, 2, 2),
        ),
        (
            "max_pool_2x2_s2_indices",
            "max_pool 2x2 s2 with indices",
            ovpool.max_pool,
            ((2, 2),),
            {"strides": (2, 2), "return_indices": True},
            lambda: functional.max_pool2d(t, 2, 2, return_indices=True),
        ),
        (
            "adaptive_avg_pool_3x3",
            "adaptive_avg_pool to 3x3",
            ovpool.adaptive_avg_pool,
            (3,),
            {},
            lambda: functional.adaptive_avg_pool2d(t, 3),
        ),
        (
            "adaptive_max_pool_3x3",
            "adaptive_max_pool to 3x3 (values, indices)",
            ovpool.adaptive_max_pool,
            (3,),
            {},
            lambda: functional.adaptive_max_pool2d(t, 3, return_indices=True),
        ),
    ]
    out = []
    for name, what, function, args, kwargs, torch_call in cases:
        pool = ovpool.prepare(function, x.shape, x.dtype, *args, **kwargs)
        out.append(
            (
                name,
                what,
                {
                    "function": (lambda f=function, a=args, k=kwargs: f(x, *a, **k)),
                    "pool": (lambda p=pool: p(x)),
                    "torch": None if torch is None else torch_call,
                },
            )
        )
    return out


def _block(fn, n):
    clock = time.perf_counter_ns
    start = clock()
    for _ in range(n):
        fn()
    return (clock() - start) / n / 1000.0  # us a call


def _calibrate(fn, block_s):
    for _ in range(200):
        fn()
    per = _block(fn, 2000) * 1e-6
    return max(200, int(block_s / max(per, 1e-9)))


def run(rounds=9, block_s=0.02, seed=0, with_torch=True):
    """Time every case; return a report (dict)."""
    torch = None
    if with_torch:
        try:
            import torch
        except ImportError:
            torch = None
    import ovpool

    rng = np.random.default_rng(seed)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    a = np.ones(8, np.float32)
    systems = {"ufunc": lambda: np.add(a, a)}
    cases = _calls(x, torch)
    for name, _, calls in cases:
        for system, fn in calls.items():
            if fn is not None:
                systems[f"{name}/{system}"] = fn
    counts = {key: _calibrate(fn, block_s) for key, fn in systems.items()}
    blocks = {key: [] for key in systems}
    order = list(systems)
    shuffle = random.Random(seed)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            shuffle.shuffle(order)
            for key in order:
                blocks[key].append(_block(systems[key], counts[key]))
    finally:
        if enabled:
            gc.enable()
    us = {key: statistics.median(values) for key, values in blocks.items()}
    ufunc = us["ufunc"]
    results = []
    for name, what, calls in cases:
        entry = {"case": name, "what": what, "us": {}, "over_ufunc": {}}
        for system in calls:
            key = f"{name}/{system}"
            if key in us:
                entry["us"][system] = us[key]
                entry["over_ufunc"][system] = us[key] / ufunc
        if "torch" in entry["us"]:
            entry["function_over_torch"] = entry["us"]["function"] / entry["us"]["torch"]
            entry["pool_over_torch"] = entry["us"]["pool"] / entry["us"]["torch"]
        entry["meets_targets"] = (
            entry["over_ufunc"]["function"] <= FUNCTION_UFUNCS
            and entry["over_ufunc"]["pool"] <= POOL_UFUNCS
            and entry.get("function_over_torch", 0.0) <= 1.0
        )
        results.append(entry)
    return {
        "shape": list(SHAPE),
        "dtype": "float32",
        "ufunc_us": ufunc,
        "targets": {
            "function_ufuncs": FUNCTION_UFUNCS,
            "pool_ufuncs": POOL_UFUNCS,
            "function_over_torch": 1.0,
        },
        "rounds": rounds,
        "block_s": block_s,
        "ovpool_version": ovpool.__version__,
        "ovpool_threads": ovpool.get_num_threads(),
        "torch_version": None if torch is None else torch.__version__,
        "torch_threads": None if torch is None else torch.get_num_threads(),
        "machine": platform.processor() or platform.machine(),
        "results": results,
    }


def table(report):
    """The results as a Markdown table (the performance page prints it too)."""
    lines = [
        "| call | function us (ufuncs) | prepared pool us (ufuncs) | torch us "
        "| function / torch | targets met |",
        "|---|---|---|---|---|---|",
    ]
    for e in report["results"]:
        us, uf = e["us"], e["over_ufunc"]
        torch_us = f"{us['torch']:.2f}" if "torch" in us else "-"
        vs = f"{e['function_over_torch']:.2f}" if "function_over_torch" in e else "-"
        lines.append(
            f"| {e['what']} | {us['function']:.2f} ({uf['function']:.1f}) | "
            f"{us['pool']:.2f} ({uf['pool']:.1f}) | {torch_us} | {vs} | "
            f"{'yes' if e['meets_targets'] else 'no'} |"
        )
    return "\n".join(lines)


def markdown(report):
    return (
        f"Small calls on a {'x'.join(map(str, report['shape']))} {report['dtype']} input; "
        f"a tiny ufunc call (the yardstick) took {report['ufunc_us']:.3f} us.\n\n" + table(report)
    )


def main(out_dir, name=None, rounds=9, seed=0, machine=None):
    report = run(rounds=rounds, seed=seed)
    report["created"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    if machine is not None:  # run.py's description: CPU, caches, the checkout's commit
        report["machine_info"] = machine
        report["commit"] = machine.get("ovpool", {}).get("commit")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = name or time.strftime("small-calls-%Y%m%d-%H%M%S")
    path = out / f"{stem}.json"
    path.write_text(json.dumps(report, indent=1))
    print(markdown(report))
    print(f"wrote {path}")
    return 0
