"""Smoke tests of the benchmark (benchmarks/run.py and ``ovpool bench``).

They check that a ``--quick`` run on a tiny case works with every peer that
is installed and writes the expected fields. They never assert a speed: a
timed test on a shared 2-vCPU VM would only measure the neighbours.
"""

import importlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PEER_MODULES = {
    "torch": ("torch",),
    "onnxruntime": ("onnx", "onnxruntime"),
    "openvino": ("openvino",),
}
INSTALLED = [
    p
    for p, mods in PEER_MODULES.items()
    if all(importlib.util.find_spec(m) is not None for m in mods)
]
ISSUE_CASES = {
    "gap_resnet_head",
    "aap_28to7",
    "aap_50to7_overlap",
    "aap3d",
    "aap1d",
    "maxpool_stem",
    "avgpool_incep",
    "avgpool_2x2",
    "avgpool_7x7_s1",
    "maxpool3d",
}
STAT_FIELDS = ("median_ms", "best_block_ms", "min_ms", "block_medians_ms", "calls_per_block")


def _run(args, timeout=900):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, (
        f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return proc


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    proc = _run(
        [
            "benchmarks/run.py",
            "--quick",
            "--cases",
            "smoke_maxpool",
            "--threads",
            "2",
            "--out",
            str(out),
            "--name",
            "smoke",
            "--no-progress",
        ]
    )
    return json.loads((out / "smoke.json").read_text()), out, proc.stdout


def test_quick_run_writes_the_report_files(quick):
    report, out, stdout = quick
    assert (out / "smoke.csv").is_file()
    for key in (
        "schema",
        "options",
        "machine",
        "peers_available",
        "cases",
        "results",
        "summary",
        "noise",
        "model",
    ):
        assert key in report
    assert report["machine"]["cpus"]
    assert report["options"]["threads"] == [2]
    assert [c["name"] for c in report["cases"]] == ["smoke_maxpool"]
    assert "| smoke_maxpool | 2 |" in stdout
    header = (out / "smoke.csv").read_text().splitlines()[0].split(",")
    for column in (
        "case",
        "threads",
        "ovpool_ms",
        "roofline_ms",
        "ovpool_over_best_peer",
        "ovpool_over_roofline",
        "scaling_1t_over_nt",
        "roofline_scaling_1t_over_nt",
        "roofline_1t_ms",
        "peak_extra_alloc_mib",
    ):
        assert column in header


def test_ovpool_roofline_and_scaling_are_timed(quick):
    entry = quick[0]["results"][0]
    for name in ("ovpool", "ovpool_1t", "roofline", "roofline_1t"):
        system = entry["systems"][name]
        assert system["status"] == "ok" and system["config"]
        for field in STAT_FIELDS:
            assert field in system
        assert system["median_ms"] > 0
    assert {"ovpool_over_roofline", "scaling_1t_over_nt", "roofline_scaling_1t_over_nt"} <= set(
        entry["ratios"]
    )
    ratios, systems = entry["ratios"], entry["systems"]
    assert ratios["roofline_scaling_1t_over_nt"] == pytest.approx(
        systems["roofline_1t"]["median_ms"] / systems["roofline"]["median_ms"]
    )


@pytest.mark.parametrize("peer", INSTALLED)
def test_each_installed_peer_is_checked_and_timed(quick, peer):
    report = quick[0]
    assert report["peers_available"][peer]["available"], report["peers_available"][peer]
    system = report["results"][0]["systems"][peer]
    assert system["status"] == "ok", system
    assert system["check"]["ok"] and system["check"]["max_abs_diff"] == 0.0  # max is exact
    assert system["config"] in [v["config"] for v in system["variants"]]
    for field in STAT_FIELDS:
        assert field in system
    assert report["results"][0]["ratios"]["best_peer"] in INSTALLED


def test_onnxruntime_tries_both_optimization_levels(quick):
    if "onnxruntime" not in INSTALLED:
        pytest.skip("onnxruntime is not installed")
    variants = quick[0]["results"][0]["systems"]["onnxruntime"]["variants"]
    assert {v["config"] for v in variants} == {
        "MaxPool-18 ENABLE_ALL",
        "MaxPool-18 ENABLE_EXTENDED",
    }


def test_peak_memory_is_measured_in_a_child(quick):
    memory = quick[0]["cases"][0]["memory"]
    assert "error" not in memory, memory
    for field in (
        "method",
        "input_bytes",
        "output_bytes",
        "extra_alloc_bytes",
        "extra_out_bytes",
        "budget_extra_bytes",
        "within_budget",
    ):
        assert field in memory
    assert memory["output_bytes"] == 2 * 16 * 6 * 6 * 4


def test_model_hook_runs_or_skips_cleanly(quick):
    model = quick[0]["model"]
    if "skipped" in model:
        assert "ovpool.openvino" in model["skipped"] or "openvino" in model["skipped"]
    else:
        for entry in model["results"]:
            assert "error" in entry or (
                {"openvino_native", "openvino_ovpool"} <= set(entry["systems"])
            )


def test_ovpool_bench_command_and_fresh_processes(tmp_path):
    _run(
        [
            "-m",
            "ovpool",
            "bench",
            "--quick",
            "--cases",
            "smoke_aap",
            "--systems",
            "ovpool",
            "--threads",
            "1",
            "--processes",
            "2",
            "--no-memory",
            "--no-model",
            "--no-progress",
            "--out",
            str(tmp_path),
            "--name",
            "cli",
        ]
    )
    report = json.loads((tmp_path / "cli.json").read_text())
    assert report["options"]["processes"] == 2
    system = report["results"][0]["systems"]["ovpool"]
    assert len(system["run_medians_ms"]) == 2
    assert set(report["results"][0]["systems"]) == {"ovpool"}


def test_ovpool_bench_adds_no_benchmarks_package_to_sys_path(tmp_path):
    """A user's own top-level package named `benchmarks` stays theirs."""
    own = tmp_path / "benchmarks"
    own.mkdir()
    (own / "__init__.py").write_text("MINE = True\n")
    code = (
        "import sys; from ovpool.bench import main; "
        f"sys.path.insert(0, {str(tmp_path)!r}); before = list(sys.path); "
        "status = main(['--bench-dir', sys.argv[1], '--list']); "
        "import benchmarks; "
        "print('RESULT', status, sys.path == before, benchmarks.MINE, "
        "sorted(m for m in sys.modules if m.split('.')[0] == 'benchmarks'), "
        "'_ovpool_benchmarks.run' in sys.modules)"
    )
    out = _run(["-c", code, str(ROOT)]).stdout
    assert "smoke_maxpool" in out  # the case list came from the checkout
    result = out.splitlines()[-1]
    assert result == "RESULT 0 True True ['benchmarks'] True", result


def test_importing_ovpool_imports_no_peer():
    code = (
        "import sys, ovpool, ovpool.cli, ovpool.bench; "
        "print(sorted(m for m in ('torch', 'onnxruntime', 'openvino') if m in sys.modules))"
    )
    assert _run(["-c", code]).stdout.strip() == "[]"


def _benchmark_module(name):
    """A module of the checkout's benchmarks/, loaded as ovpool bench loads it."""
    from ovpool.bench import load_benchmarks

    package = load_benchmarks(ROOT / "benchmarks")
    return importlib.import_module(f"{package.__name__}.{name}")


def test_case_list_covers_the_issue():
    cases = _benchmark_module("cases")
    names = {c.name for c in cases.CASES}
    assert ISSUE_CASES <= names
    assert {c.name for c in cases.select_cases("issue")} == ISSUE_CASES
    kinds = {
        (c.op, c.params.get("return_indices", c.op == "adaptive_max_pool"), len(c.shape), c.dtype)
        for c in cases.CASES
    }
    assert ("max_pool", True, 4, "float32") in kinds  # MaxPool with indices
    assert ("adaptive_max_pool", True, 4, "float32") in kinds  # AdaptiveMaxPool with indices
    assert any(op in ("max_pool", "avg_pool") and nd == 3 for op, _, nd, _ in kinds)  # 1D windows
    assert any(dtype == "float16" for *_, dtype in kinds)


def test_aggregate_takes_the_median_of_run_medians():
    run = _benchmark_module("run")

    def fake(ovp, peer, best_block, load=0.0):
        systems = {
            "ovpool": {
                "status": "ok",
                "config": "o",
                "median_ms": ovp,
                "best_block_ms": best_block,
                "min_ms": best_block,
                "block_medians_ms": [ovp],
            },
            "torch": {
                "status": "ok",
                "config": "t",
                "median_ms": peer,
                "best_block_ms": peer,
                "min_ms": peer,
                "block_medians_ms": [peer],
            },
        }
        return {
            "schema": 1,
            "created": "",
            "options": {"threads": [2]},
            "machine": {},
            "peers_available": {},
            "cases": [{"name": "c"}],
            "results": [{"case": "c", "threads": 2, "systems": systems, "other_load": load}],
            "model": {"skipped": "x"},
        }

    merged = run.aggregate(
        [fake(1.0, 4.0, 0.9), fake(8.0, 4.0, 0.8, load=0.5), fake(2.0, 4.0, 1.5)]
    )
    entry = merged["results"][0]
    ovp = entry["systems"]["ovpool"]
    assert ovp["median_ms"] == 2.0 and ovp["best_block_ms"] == 0.8
    assert ovp["run_medians_ms"] == [1.0, 8.0, 2.0]
    assert entry["ratios"]["ovpool_over_best_peer"] == 0.5
    # the run with a neighbour on the CPUs is left out of the quiet statistics
    assert entry["quiet_runs"] == 2 and ovp["median_ms_quiet"] == 1.5
    assert entry["ratios_quiet"]["ovpool_over_best_peer"] == 1.5 / 4.0


def test_model_hook_with_a_stand_in_extension(monkeypatch):
    """The hook's plumbing, with a stand-in for ovpool.openvino that patches nothing."""
    if "openvino" not in INSTALLED:
        pytest.skip("openvino is not installed")
    import argparse
    import random
    import types

    cases, run, timing = (_benchmark_module(m) for m in ("cases", "run", "timing"))

    stub = types.ModuleType("ovpool.openvino")
    stub.register = lambda core: None
    stub.patch_model = lambda model: 0
    monkeypatch.setitem(sys.modules, "ovpool.openvino", stub)
    # `from ovpool import openvino` reads the package attribute once the real
    # module has been imported by another test: stub that too
    import ovpool

    monkeypatch.setattr(ovpool, "openvino", stub, raising=False)
    monkeypatch.setattr(
        cases,
        "MODEL_CASES",
        [
            cases.ModelCase(
                "tiny",
                (1, 4, 8, 8),
                [
                    cases._v(
                        "max_pool",
                        14,
                        kernel_shape=[2, 2],
                        strides=[2, 2],
                        dilations=[1, 1],
                        pads_begin=[0, 0],
                        pads_end=[0, 0],
                    )
                ],
            )
        ],
    )
    result = run.bench_models(argparse.Namespace(seed=0), timing.QUICK, [1], random.Random(0))
    (entry,) = result["results"]
    assert "error" not in entry, entry
    assert entry["patched_nodes"] == 0 and entry["check"]["ok"]
    assert entry["ratio_ovpool_over_native"] > 0
