#!/usr/bin/env python
"""ovpool against PyTorch, ONNX Runtime, OpenVINO and the memory roofline, in one process.

Usage (from the repository root; ``ovpool bench`` takes the same options)::

    python benchmarks/run.py                         # every case, all CPUs, 7 rounds
    python benchmarks/run.py --cases 'aap*,maxpool_stem' --threads 1,2 --plot
    python benchmarks/run.py --processes 3 --plot    # 3 fresh interpreters, median of run medians
    python benchmarks/run.py --quick --cases smoke_maxpool   # seconds (tests/test_bench.py)
    python benchmarks/run.py --list

For each case and thread count: build every system (ovpool with ``out=``,
each peer in each of its configurations), check each peer's outputs against
ovpool's, keep the fastest correct configuration of each peer, warm up, then
time every system in its own blocks of calls over shuffled rounds
(``benchmarks/timing.py``). Reported per system: the median of block medians
and the best block, in ms; per case: ovpool / best peer and ovpool / roofline,
the 1-thread / n-thread time of ovpool (``ovpool_1t`` is timed in the same
rounds) beside that of the roofline (``roofline_1t``: how much more memory
bandwidth a second thread can draw on this machine), and the peak memory of
one ovpool call (``benchmarks/memory.py``, a fresh process per case).
Results go to ``--out`` (default
``benchmarks/results/``) as JSON and CSV, plus a PNG of the ratios with
``--plot``.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import fnmatch
import gzip
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

if not __package__:  # run as a script: this checkout's ovpool, and this directory as a package
    _ROOT = Path(__file__).resolve().parent.parent
    if sys.path and Path(sys.path[0]).resolve() == _ROOT / "benchmarks":
        sys.path.pop(0)  # not this directory's modules as top-level names
    sys.path.insert(0, str(_ROOT))
    from ovpool.bench import load_benchmarks

    __package__ = load_benchmarks(_ROOT / "benchmarks").__name__

from . import cases as cases_mod
from . import memory, peers, sweep, timing

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "benchmarks" / "results"
SCHEMA = 1
MIB = 1 << 20

# targets of the issue, reported (never asserted)
TARGET_BEST_PEER = 0.8
TARGET_GEOMEAN = 0.5
TARGET_ROOFLINE = 3.0
TARGET_SCALING = 1.6


# --------------------------------------------------------------------------
# options
# --------------------------------------------------------------------------


def build_parser(prog="benchmarks/run.py"):
    p = argparse.ArgumentParser(
        prog=prog,
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--cases",
        default=None,
        help="comma-separated names, globs or groups (issue, extra, smoke); "
        "default: every case but the smoke ones",
    )
    p.add_argument(
        "--threads",
        default=None,
        help="comma-separated thread counts, e.g. 1,2 (default: the CPUs available)",
    )
    p.add_argument(
        "--systems",
        default=",".join(peers.SYSTEMS),
        help="subset of " + ",".join(peers.SYSTEMS) + " (ovpool is always run)",
    )
    p.add_argument(
        "--rounds", type=int, default=None, help="shuffled rounds (default 7; 2 with --quick)"
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="few rounds and calls, no selection timing: a smoke run, not a measurement",
    )
    p.add_argument(
        "--processes",
        type=int,
        default=1,
        metavar="K",
        help="run K fresh interpreters one after another and report the median of their "
        "medians (multi-ms host stalls last for whole processes)",
    )
    p.add_argument("--out", default=str(DEFAULT_OUT), metavar="DIR", help="result directory")
    p.add_argument("--name", default=None, help="file name stem (default bench-<timestamp>)")
    p.add_argument(
        "--plot", action="store_true", help="also write a PNG of the ratios (matplotlib)"
    )
    p.add_argument(
        "--no-memory",
        dest="memory",
        action="store_false",
        help="skip the peak-memory measurement (one fresh process per case)",
    )
    p.add_argument(
        "--no-scaling",
        dest="scaling",
        action="store_false",
        help="do not time ovpool at 1 thread alongside n > 1 threads",
    )
    p.add_argument(
        "--no-model",
        dest="model",
        action="store_false",
        help="skip the OpenVINO model benchmark (native vs ovpool.openvino.patch_model)",
    )
    p.add_argument(
        "--no-equivalent",
        dest="equivalent",
        action="store_false",
        help="peers use only the same op (no GlobalAveragePool/AvgPool for adaptive)",
    )
    p.add_argument(
        "--ort-levels",
        default=",".join(peers.ORT_LEVELS),
        help="ONNX Runtime graph optimization levels to try (default %(default)s)",
    )
    p.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before each case wait up to SECONDS for other processes to leave the "
        "CPUs (< 10%% busy over 1 s); the load seen is recorded either way",
    )
    p.add_argument("--seed", type=int, default=0, help="input and shuffle seed")
    p.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="force the tqdm progress bar (default: on a terminal, not with --quick)",
    )
    p.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument(
        "--report",
        default=None,
        metavar="JSON",
        help="print the tables of an existing result file (and --plot it); no run",
    )
    p.add_argument(
        "--sweep",
        type=int,
        default=None,
        metavar="SEED",
        help="instead of the named cases, a seeded random sweep of pool "
        f"configurations (benchmarks/sweep.py; seed {sweep.TUNE_SEED} is tuned "
        f"on, seed {sweep.REPORT_SEED} only reported)",
    )
    p.add_argument(
        "--sweep-count",
        type=int,
        default=sweep.DEFAULT_COUNT,
        metavar="N",
        help="configurations of the sweep (default %(default)s)",
    )
    p.add_argument(
        "--small-calls",
        action="store_true",
        help="instead of the cases, the small-call group: seven calls on a 1x8x8x8 "
        "input as a function, as a prepared pool and in torch, beside a tiny "
        "numpy ufunc call (benchmarks/small_calls.py)",
    )
    p.add_argument(
        "--serving",
        action="store_true",
        help="instead of the cases, the serving group: python -m ovpool.serve with "
        "ovpool's extension and natively, side by side, under 1, 4 and 16 gRPC clients: "
        "throughput and p50/p99 latency (benchmarks/serving.py; the serve extra)",
    )
    p.add_argument(
        "--contention",
        action="store_true",
        help="instead of the cases, the contention group: two calls alone, right after "
        "an ONNX Runtime / OpenVINO / torch call, quiet and beside a busy process, p50 "
        "and p90 against the same call on one thread (benchmarks/contention.py)",
    )
    p.add_argument(
        "--baseline",
        default=None,
        metavar="DIR",
        help="also time an earlier build of ovpool, found as the package ovpool_base "
        "in DIR, in the same rounds (the system ovpool_base, the ratio "
        "ovpool_over_base): a change measured paired against its parent",
    )
    p.add_argument("--child-json", default=None, help=argparse.SUPPRESS)
    return p


def _threads(args):
    if args.threads:
        return [int(t) for t in str(args.threads).split(",") if t.strip()]
    try:
        return [len(os.sched_getaffinity(0))]
    except AttributeError:
        return [os.cpu_count() or 1]


def _protocol(args):
    proto = timing.Protocol(**timing.QUICK.as_dict()) if args.quick else timing.Protocol()
    if args.rounds:
        proto.rounds = args.rounds
    return proto


# --------------------------------------------------------------------------
# machine and environment
# --------------------------------------------------------------------------


def _lscpu():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    info = {}
    for line in out.splitlines():
        key, _, value = line.partition(":")
        info[key.strip()] = value.strip()
    return info


def _read(path, default=""):
    try:
        return Path(path).read_text().strip()
    except OSError:
        return default


def _steal_ticks():
    fields = _read("/proc/stat").splitlines()[0].split() if _read("/proc/stat") else []
    return int(fields[8]) if len(fields) > 8 else None


def cpu_snapshot():
    """``(busy s, total s, own CPU s)``: machine-wide from /proc/stat, own from os.times()."""
    fields = _read("/proc/stat").splitlines()[0].split()[1:] if _read("/proc/stat") else []
    ticks = [int(v) for v in fields[:8]]
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    if len(ticks) < 5:
        return None
    idle = ticks[3] + ticks[4]
    own = os.times()
    return (sum(ticks) - idle) / hz, sum(ticks) / hz, own.user + own.system


def other_load(start, end):
    """Fraction of the machine's CPU time used by *other* processes between two snapshots."""
    if start is None or end is None or end[1] <= start[1]:
        return None
    busy = (end[0] - start[0]) - (end[2] - start[2])
    return round(max(0.0, busy) / (end[1] - start[1]), 3)


def wait_for_idle(max_wait_s, threshold=0.1, window_s=1.0):
    """Wait (at most ``max_wait_s``) until other processes use < ``threshold`` of the CPUs."""
    deadline = time.time() + max_wait_s
    while True:
        start = cpu_snapshot()
        time.sleep(window_s)
        load = other_load(start, cpu_snapshot())
        if load is None or load < threshold or time.time() >= deadline:
            return load


def _version(module):
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:
        return None


def l3_bytes():
    text = _read("/sys/devices/system/cpu/cpu0/cache/index3/size")
    if text.endswith("K"):
        return int(text[:-1]) * 1024
    if text.endswith("M"):
        return int(text[:-1]) * MIB
    return 32 * MIB


def kernels_fingerprint():
    """Size and mtime of ovpool's compiled modules: an in-place rebuild during a run shows."""
    import ovpool

    pkg = Path(ovpool.__file__).parent
    return {
        p.name: [p.stat().st_size, int(p.stat().st_mtime)] for p in sorted(pkg.glob("_kernels*.so"))
    }


def _ovpool_isa():
    """The kernel build ovpool dispatched to (``OVPOOL_ISA`` overrides it)."""
    try:
        from ovpool import _isa

        return getattr(_isa, "name", None)
    except ImportError:
        return None


def describe_machine():
    cpu = _lscpu()
    flags = set(cpu.get("Flags", "").split())
    mem_kib = 0
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            mem_kib = int(line.split()[1])
    import ovpool

    git = {}
    try:
        git["commit"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        git["dirty_files"] = len(
            subprocess.run(
                ["git", "status", "--porcelain", "--untracked-files=no"],
                cwd=REPO_ROOT,
                capture_output=True,
                text=True,
                timeout=10,
            ).stdout.splitlines()
        )
    except (OSError, subprocess.SubprocessError):
        pass
    gomp = sorted(
        {line.split()[-1] for line in _read("/proc/self/maps").splitlines() if "libgomp" in line}
    )
    return {
        "cpu_model": cpu.get("Model name", platform.processor()),
        "cpu_family": cpu.get("CPU family"),
        "cpu_model_number": cpu.get("Model"),
        "cpus": cpu.get("CPU(s)", str(os.cpu_count())),
        "threads_per_core": cpu.get("Thread(s) per core"),
        "hypervisor": cpu.get("Hypervisor vendor"),
        "l1d": cpu.get("L1d cache"),
        "l2": cpu.get("L2 cache"),
        "l3": cpu.get("L3 cache"),
        "isa": sorted(
            f
            for f in flags
            if f
            in {
                "sse4_2",
                "avx",
                "avx2",
                "fma",
                "f16c",
                "avx512f",
                "avx512bw",
                "avx512vl",
                "avx512_bf16",
                "avx512_vnni",
                "avx512_fp16",
            }
        ),
        "memory_gib": round(mem_kib / (1 << 20), 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "versions": {
            m: _version(m) for m in ("numpy", "torch", "onnx", "onnxruntime", "openvino", "Cython")
        },
        "ovpool": {
            "version": ovpool.__version__,
            "openmp": ovpool.openmp_enabled(),
            "isa": _ovpool_isa(),
            "kernels": kernels_fingerprint(),
            "path": str(Path(ovpool.__file__).parent),
            **git,
        },
        "libgomp_loaded": gomp,
        "env": {
            k: v
            for k, v in os.environ.items()
            if k.startswith(("OMP_", "OVPOOL_", "KMP_", "GOMP_", "MKL_", "OPENBLAS_"))
        },
    }


# --------------------------------------------------------------------------
# one case at one thread count
# --------------------------------------------------------------------------


def _short(exc, limit=300):
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _build_peer(peer, case, x, n, reference, args, protocol):
    """Build every configuration of a peer, check it, keep the fastest correct one.

    Returns ``(runner or None, info dict)``.
    """
    plane = math.prod(case.shape[2:])
    candidates = peers.peer_candidates(
        peer,
        case,
        x,
        n,
        reference,
        ort_levels=args.ort_levels.split(","),
        equivalent=args.equivalent,
    )
    if not candidates:
        specs = case.peer_specs(peer)
        reason = "only an equivalent op (--no-equivalent)" if specs else "the peer has no such op"
        return None, {"status": "no-op", "reason": reason}
    built, variants = [], []
    for label, factory in candidates:
        spec = peers.spec_of(case, peer, label)
        variant = {
            "config": label,
            "equivalent": spec.equivalent if spec else None,
            "note": spec.note if spec else "",
        }
        try:
            runner = factory()
            check = peers.compare(reference, runner.outputs(), plane, case.dtype)
        except Exception as exc:  # an unsupported op/dtype/attribute: report, do not time
            variant.update(status="error", error=_short(exc))
            built.append(None)
            variants.append(variant)
            continue
        variant.update(status="ok" if check["ok"] else "mismatch", check=check)
        if peer == "openvino":
            variant["runtime_layers"] = runner.runtime_layers()
        built.append(runner)
        variants.append(variant)
    correct = [r if v["status"] == "ok" else None for r, v in zip(built, variants)]
    pool = correct if any(r is not None for r in correct) else built
    if sum(r is not None for r in pool) > 1 and not args.quick:
        best, times = timing.select_fastest(pool, protocol)
        for variant, t in zip(variants, times):
            if t is not None:
                variant["select_ms"] = round(t * 1e3, 4)
    else:
        best = next((i for i, r in enumerate(pool) if r is not None), None)
    for i, runner in enumerate(built):
        if runner is not None and i != best:
            runner.close()
    if best is None:
        return None, {
            "status": "error",
            "variants": variants,
            "reason": "; ".join(v.get("error", "") for v in variants),
        }
    chosen = variants[best]
    info = {
        "status": chosen["status"],
        "config": chosen["config"],
        "equivalent": chosen["equivalent"],
        "check": chosen["check"],
        "variants": variants,
    }
    if chosen["status"] == "mismatch":
        info["reason"] = "outputs differ from ovpool's; timed but excluded from the best peer"
    return built[best], info


def bench_case(case, x, n, args, protocol, rng, available, on_block=None):
    systems = [s for s in args.systems.split(",") if s]
    entry = {"case": case.name, "threads": n, "systems": {}}
    ovp = peers.OvpoolRunner(case, x, n)
    reference = ovp.outputs()
    entry["output_bytes"] = sum(a.nbytes for a in reference)
    runners = {"ovpool": ovp}
    entry["systems"]["ovpool"] = {"status": "ok", "config": ovp.config}
    if n > 1 and args.scaling:
        runners["ovpool_1t"] = peers.OvpoolRunner(case, x, 1)
        entry["systems"]["ovpool_1t"] = {"status": "ok", "config": runners["ovpool_1t"].config}
    if getattr(args, "baseline", None):
        base = peers.OvpoolRunner(case, x, n, module=peers.import_baseline(args.baseline))
        check = peers.compare(reference, base.outputs(), math.prod(case.shape[2:]), x.dtype)
        runners["ovpool_base"] = base
        entry["systems"]["ovpool_base"] = {
            "status": "ok" if check["ok"] else "mismatch",
            "config": base.config,
            "check": check,
        }
    for peer in peers.PEERS:
        if peer not in systems:
            continue
        ok, reason = available[peer]
        if not ok:
            entry["systems"][peer] = {"status": "unavailable", "reason": reason}
            continue
        runner, info = _build_peer(peer, case, x, n, reference, args, protocol)
        entry["systems"][peer] = info
        if runner is not None:
            runners[peer] = runner
    ran = [
        s["status"]
        for p, s in entry["systems"].items()
        if p in peers.PEERS and s.get("status") in ("ok", "mismatch")
    ]
    if ran and all(status == "mismatch" for status in ran):
        entry["ovpool_suspect"] = (
            f"every peer that ran ({len(ran)}) disagrees with ovpool: ovpool is probably wrong here"
        )
    if "roofline" in systems:
        roof = peers.RooflineRunner(x, reference, n)
        runners["roofline"] = roof
        entry["systems"]["roofline"] = {"status": "ok", "config": roof.config}
        if n > 1 and args.scaling:
            # the memory traffic alone at 1 thread: the scaling a call bound by
            # memory bandwidth can reach
            runners["roofline_1t"] = peers.RooflineRunner(x, reference, 1)
            entry["systems"]["roofline_1t"] = {
                "status": "ok",
                "config": runners["roofline_1t"].config,
            }
    calls = {
        name: timing.calls_per_block(timing.warm_up(r, protocol), protocol)
        for name, r in runners.items()
    }
    blocks = timing.run_rounds(runners, calls, protocol, rng, on_block=on_block)
    for name, runner in runners.items():
        entry["systems"][name].update(timing.summarize(blocks[name]))
        runner.close()
    entry["ratios"] = compute_ratios(entry["systems"])
    return entry


def compute_ratios(systems):
    ratios = {}
    ovp = systems.get("ovpool", {})
    if "median_ms" not in ovp:
        return ratios
    timed = {
        p: s
        for p, s in systems.items()
        if p in peers.PEERS and s.get("status") == "ok" and "median_ms" in s
    }
    if timed:
        best = min(timed, key=lambda p: timed[p]["median_ms"])
        best_block = min(s["best_block_ms"] for s in timed.values())
        ratios.update(
            best_peer=best,
            best_peer_ms=timed[best]["median_ms"],
            best_peer_config=timed[best].get("config"),
            ovpool_over_best_peer=ovp["median_ms"] / timed[best]["median_ms"],
            ovpool_over_best_peer_best_block=ovp["best_block_ms"] / best_block,
        )
    roof = systems.get("roofline", {})
    if "median_ms" in roof:
        ratios["ovpool_over_roofline"] = ovp["median_ms"] / roof["median_ms"]
    base = systems.get("ovpool_base", {})
    if "median_ms" in base:
        ratios["ovpool_over_base"] = ovp["median_ms"] / base["median_ms"]
        ratios["ovpool_over_base_best_block"] = ovp["best_block_ms"] / base["best_block_ms"]
    one = systems.get("ovpool_1t", {})
    if "median_ms" in one:
        ratios["scaling_1t_over_nt"] = one["median_ms"] / ovp["median_ms"]
    roof_one = systems.get("roofline_1t", {})
    if "median_ms" in roof_one and "median_ms" in roof:
        ratios["roofline_scaling_1t_over_nt"] = roof_one["median_ms"] / roof["median_ms"]
    return ratios


# --------------------------------------------------------------------------
# the OpenVINO model hook (ovpool.openvino, issue 4)
# --------------------------------------------------------------------------


def bench_models(args, protocol, threads, rng):
    """Each MODEL_CASE native in OpenVINO against the same model after
    ``ovpool.openvino.patch_model``; skipped while the extension is missing."""
    ok, reason = peers.peer_available("openvino")
    if not ok:
        return {"skipped": reason}
    try:
        import ovpool.openvino as ovx
    except Exception as exc:  # an OpenVINO that imports but is unusable: no model hook
        return {"skipped": f"ovpool.openvino is not importable: {_short(exc)}"}
    import openvino as ov

    results = []
    for mc in cases_mod.MODEL_CASES:
        for n in threads:
            entry = {"model": mc.name, "threads": n, "note": mc.note, "systems": {}}
            before = cpu_snapshot()
            try:
                x = peers.make_input(mc, args.seed)
                native = peers.OpenVINORunner(
                    peers.ov_model(mc.layers, mc.shape, mc.dtype), x, n, "native"
                )
                model = peers.ov_model(mc.layers, mc.shape, mc.dtype)
                entry["patched_nodes"] = ovx.patch_model(model)
                core = ov.Core()
                ovx.register(core)
                patched = peers.OpenVINORunner(
                    model, x, n, "ovpool.openvino.patch_model", core=core
                )
                entry["check"] = peers.compare(
                    native.outputs(), patched.outputs(), math.prod(mc.shape[2:]), mc.dtype
                )
                entry["native_layers"] = native.runtime_layers()
                entry["patched_layers"] = patched.runtime_layers()
                runners = {"openvino_native": native, "openvino_ovpool": patched}
                calls = {
                    k: timing.calls_per_block(timing.warm_up(r, protocol), protocol)
                    for k, r in runners.items()
                }
                blocks = timing.run_rounds(runners, calls, protocol, rng)
                for k, r in runners.items():
                    entry["systems"][k] = {"config": r.config, **timing.summarize(blocks[k])}
                    r.close()
                systems = entry["systems"]
                entry["ratio_ovpool_over_native"] = (
                    systems["openvino_ovpool"]["median_ms"]
                    / systems["openvino_native"]["median_ms"]
                )
            except Exception as exc:
                entry["error"] = _short(exc)
            entry["other_load"] = other_load(before, cpu_snapshot())
            results.append(entry)
    return {"results": results}


# --------------------------------------------------------------------------
# a whole run
# --------------------------------------------------------------------------


def _progress(total, args):
    enabled = (
        args.progress if args.progress is not None else (sys.stderr.isatty() and not args.quick)
    )
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="block", dynamic_ncols=True, file=sys.stderr)


def case_meta(case, reference_bytes=None):
    import numpy as np

    meta = case.describe()
    meta["input_bytes"] = math.prod(case.shape) * np.dtype(case.dtype).itemsize
    if reference_bytes is not None:
        meta["output_bytes"] = reference_bytes
        meta["exceeds_l3"] = meta["input_bytes"] + reference_bytes > l3_bytes()
    return meta


def _selected_cases(args):
    if getattr(args, "sweep", None) is None:
        return cases_mod.select_cases(args.cases)
    chosen = sweep.sweep_cases(args.sweep, args.sweep_count)
    if args.cases:
        patterns = [p.strip() for p in args.cases.split(",") if p.strip()]
        chosen = [c for c in chosen if any(fnmatch.fnmatchcase(c.name, p) for p in patterns)]
    return chosen


def run_benchmark(args):
    import ovpool  # noqa: F401  (first: its libgomp is the one the process keeps)

    selected = _selected_cases(args)
    threads = _threads(args)
    protocol = _protocol(args)
    systems = [s for s in args.systems.split(",") if s]
    available = {
        p: peers.peer_available(p) if p in systems else (False, "not selected") for p in peers.PEERS
    }
    started = time.time()
    load_start, steal_start = _read("/proc/loadavg"), _steal_ticks()
    report = {
        "schema": SCHEMA,
        "created": _dt.datetime.now().isoformat(timespec="seconds"),
        "argv": sys.argv[1:] if args.child_json is None else None,
        "options": {
            "cases": args.cases,
            "threads": threads,
            "systems": systems,
            "quick": args.quick,
            "equivalent": args.equivalent,
            "ort_levels": args.ort_levels.split(","),
            "seed": args.seed,
            "processes": 1,
            "protocol": protocol.as_dict(),
            "openvino_config": dict(peers.openvino_config(1), INFERENCE_NUM_THREADS="n"),
        },
        "machine": describe_machine(),
        "peers_available": {p: {"available": ok, "reason": r} for p, (ok, r) in available.items()},
        "cases": [],
        "results": [],
    }
    rng = random.Random(args.seed)
    n_systems = 2 + len([p for p in peers.PEERS if p in systems]) + any(t > 1 for t in threads)
    bar = _progress(len(selected) * len(threads) * protocol.rounds * n_systems, args)
    tick = bar.update if bar is not None else None
    try:
        for case in selected:
            if bar is not None:
                bar.set_description(case.name)
            x = peers.make_input(case, args.seed)
            out_bytes = None
            for n in threads:
                waited = wait_for_idle(args.wait_idle) if args.wait_idle > 0 else None
                before = cpu_snapshot()
                entry = bench_case(case, x, n, args, protocol, rng, available, on_block=tick)
                entry["other_load"] = other_load(before, cpu_snapshot())
                if waited is not None:
                    entry["other_load_before"] = waited
                out_bytes = entry.pop("output_bytes")
                report["results"].append(entry)
            report["cases"].append(case_meta(case, out_bytes))
            del x
    finally:
        if bar is not None:
            bar.close()
    if args.memory:
        by_name = {m["name"]: m for m in report["cases"]}
        for case in selected:
            by_name[case.name]["memory"] = memory.measure_case(case.name, max(threads), REPO_ROOT)
    report["model"] = (
        bench_models(args, protocol, threads, rng) if args.model else {"skipped": "--no-model"}
    )
    report["noise"] = {
        "loadavg_start": load_start,
        "loadavg_end": _read("/proc/loadavg"),
        "steal_ticks": (_steal_ticks() - steal_start) if steal_start is not None else None,
        "other_load_per_case": {
            f"{e['case']}@{e['threads']}": e.get("other_load") for e in report["results"]
        },
        "quantized_blocks": sum(
            s.get("quantized_blocks", 0) for e in report["results"] for s in e["systems"].values()
        ),
        "blocks": sum(
            len(s.get("block_medians_ms", []))
            for e in report["results"]
            for s in e["systems"].values()
        ),
    }
    if kernels_fingerprint() != report["machine"]["ovpool"]["kernels"]:
        report["warnings"] = report.get("warnings", []) + [
            "ovpool's compiled kernels were rebuilt during the run: results mix two builds"
        ]
    report["duration_s"] = round(time.time() - started, 1)
    report["summary"] = summarize_report(report)
    return report


# --------------------------------------------------------------------------
# fresh-process mode
# --------------------------------------------------------------------------


def _child_argv(args, json_path, seed):
    show = args.progress if args.progress is not None else (sys.stderr.isatty() and not args.quick)
    argv = [
        "--processes",
        "1",
        "--no-memory",
        "--progress" if show else "--no-progress",
        "--child-json",
        str(json_path),
        "--systems",
        args.systems,
        "--ort-levels",
        args.ort_levels,
        "--seed",
        str(seed),
    ]
    if args.cases:
        argv += ["--cases", args.cases]
    if args.threads:
        argv += ["--threads", str(args.threads)]
    if args.rounds:
        argv += ["--rounds", str(args.rounds)]
    if args.wait_idle:
        argv += ["--wait-idle", str(args.wait_idle)]
    if args.baseline:
        argv += ["--baseline", str(args.baseline)]
    if args.sweep is not None:
        argv += ["--sweep", str(args.sweep), "--sweep-count", str(args.sweep_count)]
    for flag, on in (
        ("--quick", args.quick),
        ("--no-scaling", not args.scaling),
        ("--no-model", not args.model),
        ("--no-equivalent", not args.equivalent),
    ):
        if on:
            argv.append(flag)
    return argv


def run_fresh_processes(args):
    """K child interpreters in sequence (never in parallel on 2 vCPUs), then aggregate."""
    runs = []
    bar = None  # each child shows its own bar
    with tempfile.TemporaryDirectory(prefix="ovpool-bench-") as tmp:
        for k in range(args.processes):
            path = Path(tmp) / f"run{k}.json"
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(
                filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")])
            )
            cmd = [
                sys.executable,
                str(Path(__file__).resolve()),
                *_child_argv(args, path, args.seed + k),
            ]
            print(f"benchmark process {k + 1}/{args.processes}", file=sys.stderr)
            proc = subprocess.run(cmd, cwd=str(REPO_ROOT), env=env)
            if proc.returncode != 0 or not path.exists():
                raise SystemExit(f"benchmark child {k} failed (exit {proc.returncode})")
            runs.append(json.loads(path.read_text()))
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    report = aggregate(runs)
    report["argv"] = sys.argv[1:]
    if args.memory:
        threads = report["options"]["threads"]
        for meta in report["cases"]:
            meta["memory"] = memory.measure_case(meta["name"], max(threads), REPO_ROOT)
    report["summary"] = summarize_report(report)
    return report


_STAT_KEYS = ("median_ms", "best_block_ms", "min_ms")


def aggregate(runs):
    """Median of run medians per (case, threads, system); best block = the best over runs."""
    first = runs[0]
    report = {
        k: first[k] for k in ("schema", "created", "options", "machine", "peers_available", "cases")
    }
    report["options"] = dict(first["options"], processes=len(runs))
    report["results"] = []
    for i, entry in enumerate(first["results"]):
        merged = {"case": entry["case"], "threads": entry["threads"], "systems": {}}
        for name, sys0 in entry["systems"].items():
            per_run = [r["results"][i]["systems"].get(name, {}) for r in runs]
            timed = [s for s in per_run if "median_ms" in s]
            info = {
                k: v
                for k, v in sys0.items()
                if k
                not in _STAT_KEYS
                + ("block_medians_ms", "quantized_blocks", "n_calls", "calls_per_block")
            }
            statuses = Counter(s.get("status") for s in per_run)
            info["status"] = statuses.most_common(1)[0][0]
            if any(s.get("status") == "mismatch" for s in per_run):
                info["status"] = "mismatch"
            if timed:
                configs = Counter(s.get("config") for s in timed)
                info["config"] = configs.most_common(1)[0][0]
                info["configs_by_run"] = [s.get("config") for s in timed]
                info["run_medians_ms"] = [s["median_ms"] for s in timed]
                info["median_ms_by_run"] = [s.get("median_ms") for s in per_run]
                info["median_ms"] = statistics.median(info["run_medians_ms"])
                info["best_block_ms"] = min(s["best_block_ms"] for s in timed)
                info["min_ms"] = min(s["min_ms"] for s in timed)
                info["quantized_blocks"] = sum(s.get("quantized_blocks", 0) for s in timed)
                info["blocks"] = sum(len(s.get("block_medians_ms", [])) for s in timed)
            merged["systems"][name] = info
        merged["ratios"] = compute_ratios(merged["systems"])
        merged["ratios_by_run"] = [r["results"][i].get("ratios", {}) for r in runs]
        merged["other_load_by_run"] = [r["results"][i].get("other_load") for r in runs]
        report["results"].append(merged)
    models = [r.get("model", {}) for r in runs]
    if all("results" in m for m in models):
        merged_models = []
        for i, entry in enumerate(models[0]["results"]):
            m = dict(entry)
            for k in ("openvino_native", "openvino_ovpool"):
                meds = [mm["results"][i]["systems"].get(k, {}).get("median_ms") for mm in models]
                meds = [v for v in meds if v is not None]
                if meds and k in m.get("systems", {}):
                    m["systems"] = dict(m["systems"])
                    m["systems"][k] = dict(
                        m["systems"][k], median_ms=statistics.median(meds), run_medians_ms=meds
                    )
            if "openvino_ovpool" in m.get("systems", {}):
                m["ratio_ovpool_over_native"] = (
                    m["systems"]["openvino_ovpool"]["median_ms"]
                    / m["systems"]["openvino_native"]["median_ms"]
                )
            merged_models.append(m)
        report["model"] = {"results": merged_models}
    else:
        report["model"] = models[0]
    ovp_info = [r.get("machine", {}).get("ovpool", {}) for r in runs]
    report["commits_by_run"] = [o.get("commit") for o in ovp_info]
    warnings = [w for r in runs for w in r.get("warnings", [])]
    if any(o.get("kernels") != ovp_info[0].get("kernels") for o in ovp_info):
        warnings.append(
            f"the runs used different compiled kernels: {[o.get('kernels') for o in ovp_info]}"
        )
    if warnings:
        report["warnings"] = sorted(set(warnings))
    add_quiet_stats(report)
    report["noise"] = {
        "per_run": [r.get("noise") for r in runs],
        "duration_s_per_run": [r.get("duration_s") for r in runs],
    }
    report["duration_s"] = round(sum(r.get("duration_s") or 0 for r in runs), 1)
    return report


QUIET_LOAD = 0.1


def add_quiet_stats(report, threshold=QUIET_LOAD):
    """Medians and ratios over the runs during which other processes used less
    than ``threshold`` of the CPUs (``other_load``), where there are such runs.

    On a shared 2-vCPU machine a neighbour on one vCPU turns every 2-thread
    OpenMP call (ovpool, torch, the roofline) into a multi-ms wait, while ORT
    and OpenVINO degrade less: runs under load are not comparable.
    """
    for entry in report["results"]:
        loads = entry.get("other_load_by_run") or []
        quiet = [i for i, load in enumerate(loads) if load is not None and load < threshold]
        entry["quiet_runs"] = len(quiet)
        if not quiet:
            continue
        systems = {}
        for name, info in entry["systems"].items():
            by_run = info.get("median_ms_by_run") or []
            if not by_run and len(info.get("run_medians_ms", [])) == len(loads):
                by_run = info["run_medians_ms"]  # every run timed it: aligned
            values = [by_run[i] for i in quiet if i < len(by_run) and by_run[i] is not None]
            if values:
                info["median_ms_quiet"] = statistics.median(values)
                systems[name] = dict(info, median_ms=info["median_ms_quiet"])
            else:
                systems[name] = {k: v for k, v in info.items() if k != "median_ms"}
        entry["ratios_quiet"] = compute_ratios(systems)
    report.setdefault("options", {})["quiet_load_threshold"] = threshold


# --------------------------------------------------------------------------
# summary, files, table
# --------------------------------------------------------------------------


def _geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def summarize_report(report):
    """Per thread count: the issue's targets, as measured (information, not assertions)."""
    metas = {m["name"]: m for m in report["cases"]}
    summary = {}
    for n in report["options"]["threads"]:
        entries = [e for e in report["results"] if e["threads"] == n]
        vs_peer = [
            e["ratios"]["ovpool_over_best_peer"]
            for e in entries
            if "ovpool_over_best_peer" in e["ratios"]
        ]
        vs_roof = [
            e["ratios"]["ovpool_over_roofline"]
            for e in entries
            if "ovpool_over_roofline" in e["ratios"]
        ]
        big = [e for e in entries if metas.get(e["case"], {}).get("exceeds_l3")]
        scaling_big = [
            e["ratios"]["scaling_1t_over_nt"] for e in big if "scaling_1t_over_nt" in e["ratios"]
        ]
        summary[str(n)] = {
            "cases": len(entries),
            "cases_with_a_peer": len(vs_peer),
            "geomean_ovpool_over_best_peer": _geomean(vs_peer),
            "max_ovpool_over_best_peer": max(vs_peer) if vs_peer else None,
            f"cases_at_most_{TARGET_BEST_PEER}x_best_peer": sum(
                r <= TARGET_BEST_PEER for r in vs_peer
            ),
            f"cases_within_{TARGET_ROOFLINE:g}x_roofline": sum(
                r <= TARGET_ROOFLINE for r in vs_roof
            ),
            "max_ovpool_over_roofline": max(vs_roof) if vs_roof else None,
            "scaling_on_cases_beyond_l3": {
                e["case"]: e["ratios"]["scaling_1t_over_nt"]
                for e in big
                if "scaling_1t_over_nt" in e["ratios"]
            },
            f"cases_beyond_l3_scaling_at_least_{TARGET_SCALING}": sum(
                s >= TARGET_SCALING for s in scaling_big
            ),
            "roofline_scaling_on_cases_beyond_l3": {
                e["case"]: e["ratios"]["roofline_scaling_1t_over_nt"]
                for e in big
                if "roofline_scaling_1t_over_nt" in e["ratios"]
            },
            **_sweep_summary(entries),
            "mismatches": sorted(
                {
                    f"{e['case']}:{p}"
                    for e in entries
                    for p, s in e["systems"].items()
                    if s.get("status") == "mismatch"
                }
            ),
            "ovpool_suspect": sorted(e["case"] for e in entries if e.get("ovpool_suspect")),
        }
    mems = [m.get("memory", {}) for m in report["cases"] if "memory" in m]
    if mems:
        summary["memory_within_budget"] = sum(bool(m.get("within_budget")) for m in mems)
        summary["memory_measured"] = len(mems)
    return summary


SWEEP_PEER = 0.5  # sweep target: ovpool <= max(0.5x best peer, 1.1x roofline)
SWEEP_ROOFLINE = 1.1


def _percentiles(values):
    if not values:
        return None
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]  # noqa: E731
    return {
        "min": ordered[0],
        "p25": pick(0.25),
        "median": pick(0.5),
        "p75": pick(0.75),
        "p90": pick(0.9),
        "max": ordered[-1],
    }


def _sweep_summary(entries):
    """The distributions of ovpool / best peer and ovpool / roofline, and the
    sweep's targets: every configuration at most max(0.5x the best peer, 1.1x
    the roofline), and none slower than any peer."""
    vs_peer = [
        e["ratios"]["ovpool_over_best_peer"]
        for e in entries
        if "ovpool_over_best_peer" in e["ratios"]
    ]
    vs_roof = [
        e["ratios"]["ovpool_over_roofline"]
        for e in entries
        if "ovpool_over_roofline" in e["ratios"]
    ]
    misses, slower = [], []
    for e in entries:
        ovp = e["systems"].get("ovpool", {}).get("median_ms")
        if ovp is None:
            continue
        bounds = []
        r = e["ratios"]
        if "best_peer_ms" in r:
            bounds.append(SWEEP_PEER * r["best_peer_ms"])
        roof = e["systems"].get("roofline", {}).get("median_ms")
        if roof is not None:
            bounds.append(SWEEP_ROOFLINE * roof)
        if bounds and ovp > max(bounds):
            misses.append(e["case"])
        if any(
            s.get("status") == "ok" and "median_ms" in s and s["median_ms"] < ovp
            for p, s in e["systems"].items()
            if p in peers.PEERS
        ):
            slower.append(e["case"])
    return {
        "ovpool_over_best_peer_percentiles": _percentiles(vs_peer),
        "ovpool_over_roofline_percentiles": _percentiles(vs_roof),
        f"cases_over_max_{SWEEP_PEER}x_peer_{SWEEP_ROOFLINE}x_roofline": misses,
        "cases_slower_than_a_peer": slower,
    }


CSV_SYSTEMS = ("ovpool", "torch", "onnxruntime", "openvino", "roofline", "ovpool_1t", "roofline_1t")


def summary_rows(report):
    metas = {m["name"]: m for m in report["cases"]}
    rows = []
    for e in report["results"]:
        meta = metas.get(e["case"], {})
        mem = meta.get("memory", {})
        row = {
            "case": e["case"],
            "group": meta.get("group"),
            "op": meta.get("op"),
            "shape": "x".join(map(str, meta.get("shape", []))),
            "dtype": meta.get("dtype"),
            "threads": e["threads"],
            "input_mib": round(meta.get("input_bytes", 0) / MIB, 2),
            "output_mib": round((meta.get("output_bytes") or 0) / MIB, 2),
            "exceeds_l3": meta.get("exceeds_l3"),
        }
        for name in CSV_SYSTEMS:
            s = e["systems"].get(name, {})
            row[f"{name}_ms"] = _r(s.get("median_ms"))
            row[f"{name}_best_block_ms"] = _r(s.get("best_block_ms"))
            if name in peers.PEERS:
                row[f"{name}_status"] = s.get("status")
                row[f"{name}_config"] = s.get("config")
        r = e["ratios"]
        row.update(
            best_peer=r.get("best_peer"),
            best_peer_ms=_r(r.get("best_peer_ms")),
            ovpool_over_best_peer=_r(r.get("ovpool_over_best_peer")),
            ovpool_over_best_peer_best_block=_r(r.get("ovpool_over_best_peer_best_block")),
            ovpool_over_roofline=_r(r.get("ovpool_over_roofline")),
            scaling_1t_over_nt=_r(r.get("scaling_1t_over_nt")),
            roofline_scaling_1t_over_nt=_r(r.get("roofline_scaling_1t_over_nt")),
            peak_extra_alloc_mib=_r(
                mem.get("extra_alloc_bytes", 0) / MIB
                if mem.get("extra_alloc_bytes") is not None
                else None
            ),
            peak_extra_out_mib=_r(
                mem.get("extra_out_bytes", 0) / MIB
                if mem.get("extra_out_bytes") is not None
                else None
            ),
            peak_budget_mib=_r(
                mem.get("budget_extra_bytes", 0) / MIB
                if mem.get("budget_extra_bytes") is not None
                else None
            ),
            peak_within_budget=mem.get("within_budget"),
        )
        rows.append(row)
    return rows


def _r(value, digits=4):
    if value is None:
        return None
    return float(f"{value:.{digits}g}")


def write_outputs(report, args):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = args.name or "bench-" + _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    paths = {"json": out / f"{stem}.json", "csv": out / f"{stem}.csv"}
    paths["json"].write_text(json.dumps(report, indent=1, default=str) + "\n")
    rows = summary_rows(report)
    if rows:
        with paths["csv"].open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    if args.plot:
        try:
            from .plot import plot_ratios

            paths["png"] = out / f"{stem}.png"
            plot_ratios(report, paths["png"])
            if any(e.get("ratios_quiet") for e in report["results"]):
                paths["png_quiet"] = out / f"{stem}-quiet.png"
                plot_ratios(report, paths["png_quiet"], quiet=True)
        except ImportError as exc:
            print(f"no plot: {exc}", file=sys.stderr)
    return paths


def _ms(value):
    if value is None:
        return "-"
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def _scaling(ratios):
    if "scaling_1t_over_nt" not in ratios:
        return "-"
    text = f"{ratios['scaling_1t_over_nt']:.2f}"
    if "roofline_scaling_1t_over_nt" in ratios:
        text += f" ({ratios['roofline_scaling_1t_over_nt']:.2f})"
    return text


def markdown_table(report, quiet=False):
    """The results as Markdown; ``quiet``: medians over the quiet runs only."""
    if quiet:
        report = _quiet_copy(report)
    metas = {m["name"]: m for m in report["cases"]}
    lines = [
        "| case | threads | ovpool | torch | ORT | OpenVINO | roofline | ovpool/best peer "
        "| ovpool/roofline | 1t/nt (roofline's) | call peak MiB (budget) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for e in report["results"]:
        s, r = e["systems"], e["ratios"]
        cells = []
        for name in ("torch", "onnxruntime", "openvino"):
            info = s.get(name, {})
            text = _ms(info.get("median_ms"))
            if info.get("equivalent") and "median_ms" in info:
                text += "*"
            if info.get("status") == "mismatch":
                text += " (wrong)"
            cells.append(text)
        mem = metas.get(e["case"], {}).get("memory", {})
        peak = (
            "-"
            if "extra_alloc_bytes" not in mem
            else (f"{mem['extra_alloc_bytes'] / MIB:.1f} ({mem['budget_extra_bytes'] / MIB:.0f})")
        )
        best = r.get("ovpool_over_best_peer")
        lines.append(
            "| "
            + " | ".join(
                [
                    e["case"],
                    str(e["threads"]),
                    _ms(s["ovpool"].get("median_ms")),
                    *cells,
                    _ms(s.get("roofline", {}).get("median_ms")),
                    "-" if best is None else f"{best:.2f} ({r.get('best_peer')})",
                    "-" if "ovpool_over_roofline" not in r else f"{r['ovpool_over_roofline']:.1f}",
                    _scaling(r),
                    peak,
                ]
            )
            + " |"
        )
    lines.append("")
    lines.append(
        "`*`: the peer's fastest configuration is an equivalent op; `(wrong)`: its "
        "outputs differ from ovpool's (timed, excluded from the best peer)."
    )
    return "\n".join(lines)


def _quiet_copy(report):
    out = dict(report, results=[])
    for e in report["results"]:
        if not e.get("quiet_runs"):
            continue
        systems = {
            k: dict(v, median_ms=v["median_ms_quiet"])
            if "median_ms_quiet" in v
            else {kk: vv for kk, vv in v.items() if kk != "median_ms"}
            for k, v in e["systems"].items()
        }
        out["results"].append(dict(e, systems=systems, ratios=e.get("ratios_quiet", {})))
    return out


def configs_table(report):
    """Which configuration of each peer won, per case (first thread count)."""
    lines = ["| case | torch | ONNX Runtime | OpenVINO |", "|---|---|---|---|"]
    seen = set()
    for e in report["results"]:
        if e["case"] in seen:
            continue
        seen.add(e["case"])
        cells = []
        for name in ("torch", "onnxruntime", "openvino"):
            info = e["systems"].get(name, {})
            if "config" in info:
                cell = info["config"] + (
                    f" [= {info['equivalent']}]" if info.get("equivalent") else ""
                )
                if info.get("status") == "mismatch":
                    cell += " (wrong)"
            else:
                cell = f"- ({info.get('reason', info.get('status', 'not run'))})"
            cells.append(cell)
        lines.append("| " + " | ".join([e["case"], *cells]) + " |")
    return "\n".join(lines)


def read_report(path):
    """A result file written by this benchmark: ``.json``, or ``.json.gz`` as kept in
    ``benchmarks/readme/``."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def main(argv=None, prog="benchmarks/run.py"):
    args = build_parser(prog).parse_args(argv)
    if args.list:
        for c in cases_mod.CASES:
            print(
                f"{c.name:28s} {c.group:6s} {c.op:18s} {'x'.join(map(str, c.shape)):18s} "
                f"{c.dtype:8s} {c.params}"
            )
        return 0
    if args.report:
        report = read_report(args.report)
        if "other_load_by_run" in (report["results"] or [{}])[0]:
            add_quiet_stats(report)
        if args.plot:
            from .plot import plot_ratios

            print("wrote", plot_ratios(report, Path(args.report).with_suffix(".png")))
            if any(e.get("ratios_quiet") for e in report["results"]):
                quiet_png = Path(args.report).with_name(Path(args.report).stem + "-quiet.png")
                print("wrote", plot_ratios(report, quiet_png, quiet=True))
        print(markdown_table(report))
        if any(e.get("quiet_runs") for e in report["results"]):
            print("\nQuiet runs only:")
            print(markdown_table(report, quiet=True))
        print()
        print(configs_table(report))
        return 0
    if args.small_calls:
        from . import small_calls

        return small_calls.main(
            args.out, args.name, rounds=args.rounds or 9, seed=args.seed, machine=describe_machine()
        )
    if args.contention:
        from . import contention

        return contention.main(
            args.out,
            args.name,
            rounds=args.rounds or 4,
            seed=args.seed,
            machine=describe_machine(),
            baseline=args.baseline,
        )
    if args.serving:
        from . import serving

        return serving.main(
            args.out, args.name, rounds=args.rounds or 3, seed=args.seed, machine=describe_machine()
        )
    if args.processes > 1:
        report = run_fresh_processes(args)
    else:
        report = run_benchmark(args)
    if args.child_json:
        Path(args.child_json).write_text(json.dumps(report, default=str))
        return 0
    paths = write_outputs(report, args)
    print(markdown_table(report))
    if any(e.get("quiet_runs") for e in report["results"]):
        print(
            f"\nQuiet runs only (other processes < {QUIET_LOAD:.0%} of the CPUs); "
            "quiet runs per case: "
            + ", ".join(f"{e['case']}={e['quiet_runs']}" for e in report["results"])
        )
        print(markdown_table(report, quiet=True))
    print()
    print(configs_table(report))
    for n, s in report["summary"].items():
        if isinstance(s, dict):
            print(
                f"threads={n}: "
                + ", ".join(f"{k}={_fmt(v)}" for k, v in s.items() if not isinstance(v, dict))
            )
    model = report.get("model", {})
    if "skipped" in model:
        print(f"model benchmark skipped: {model['skipped']}")
    for m in model.get("results", []):
        print(
            f"model {m['model']} threads={m['threads']}: "
            + (
                m["error"]
                if "error" in m
                else f"native {_ms(m['systems']['openvino_native']['median_ms'])} ms, ovpool "
                f"{_ms(m['systems']['openvino_ovpool']['median_ms'])} ms "
                f"({m['patched_nodes']} nodes patched, check ok={m['check']['ok']})"
            )
        )
    for warning in report.get("warnings", []):
        print(f"WARNING: {warning}")
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def _fmt(v):
    return f"{v:.3g}" if isinstance(v, float) else str(v)


if __name__ == "__main__":
    sys.exit(main())
