#!/usr/bin/env python
"""Write the performance page and README's headline table from the benchmark's results.

    python docs/make_performance.py            # rewrite docs/performance.md and README's table
    python docs/make_performance.py --check    # exit 1 if either is out of date (CI, tests)

The numbers come from the results kept in ``benchmarks/readme/``: the table
from ``readme-2t.csv`` (one row per case, as ``benchmarks/run.py`` writes it),
the machine, the protocol and the other runs' summaries from the gzipped JSON
reports beside it. Nothing here is typed in by hand: to publish a new run,
copy its CSV, PNG and ``gzip -9n``'d JSON into ``benchmarks/readme/`` under
these names and run this script.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "readme"
MAIN_RUN = "readme-2t"
OTHER_RUNS = ("heldout-2t", "amd-a31500a-2t", "amd-a31500a-heldout-2t")
PLOT = "readme-2t-quiet.png"
# the random-shape sweep (benchmarks/sweep.py): seed 1 is tuned on, seed 2 only reported
SWEEP_RUNS = (("sweep1-2t", 1, "tuned on"), ("sweep2-2t", 2, "report only"))
PAGE = ROOT / "docs" / "reference" / "performance.md"
README = ROOT / "README.md"
BEGIN = "<!-- performance table: written by docs/make_performance.py -->"
END = "<!-- end of performance table -->"
PEERS = (("torch", "torch"), ("onnxruntime", "ORT"), ("openvino", "OpenVINO"))
TARGET_BEST_PEER = 0.8
TARGET_ROOFLINE = 3.0


def load_run(stem: str) -> dict:
    with gzip.open(RESULTS / f"{stem}.json.gz", "rt", encoding="utf-8") as f:
        return json.load(f)


def load_rows(stem: str = MAIN_RUN) -> list[dict]:
    with (RESULTS / f"{stem}.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def _num(text: str) -> float | None:
    return None if text in ("", "None", "nan") else float(text)


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def _equivalent_configs(report: dict) -> dict[str, set[str]]:
    """Per case, the labels of peer configurations that compute an equivalent op."""
    labels: dict[str, set[str]] = {}
    for case in report["cases"]:
        found = labels.setdefault(case["name"], set())
        for system in ("torch", "onnx", "openvino"):
            for spec in case.get(system) or []:
                if spec.get("equivalent"):
                    found.add(spec["label"])
    return labels


def _peer_cell(row: dict, peer: str, equivalent: set[str]) -> str:
    text = _ms(_num(row[f"{peer}_ms"]))
    config = row[f"{peer}_config"]  # a label, then ONNX Runtime's level
    if text != "-" and any(config == label or config.startswith(label + " ")
                           for label in equivalent):
        text += "*"
    if row[f"{peer}_status"] == "mismatch":
        text += " (wrong)"
    return text


def results_table(rows: list[dict], report: dict) -> str:
    equivalent = _equivalent_configs(report)
    lines = ["| case | shape, dtype | ovpool | torch | ORT | OpenVINO | roofline "
             "| ovpool / fastest peer | ovpool / roofline | 1t / 2t (roofline's) "
             "| call peak MiB (budget) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        best = _num(row["ovpool_over_best_peer"])
        roof = _num(row["ovpool_over_roofline"])
        scaling = _num(row["scaling_1t_over_nt"])
        roof_scaling = _num(row["roofline_scaling_1t_over_nt"])
        peak = _num(row["peak_extra_alloc_mib"])
        budget = _num(row["peak_budget_mib"])
        lines.append("| " + " | ".join([
            f"`{row['case']}`",
            f"{row['op']} {row['shape']} {row['dtype']}",
            _ms(_num(row["ovpool_ms"])),
            *(_peer_cell(row, peer, equivalent.get(row["case"], set())) for peer, _ in PEERS),
            _ms(_num(row["roofline_ms"])),
            "-" if best is None else f"{best:.2f} ({row['best_peer']})",
            "-" if roof is None else f"{roof:.1f}",
            "-" if scaling is None else (
                f"{scaling:.2f}" + ("" if roof_scaling is None else f" ({roof_scaling:.2f})")),
            "-" if peak is None else f"{peak:.1f} ({budget:.0f})",
        ]) + " |")
    return "\n".join(lines)


def headline_table(rows: list[dict]) -> str:
    """README's table: the benchmark's `issue` cases, ovpool against the fastest peer."""
    lines = ["| case | op, input | ovpool ms | fastest peer ms | ovpool / fastest peer |",
             "|---|---|---|---|---|"]
    for row in rows:
        if row["group"] != "issue":
            continue
        best = _num(row["ovpool_over_best_peer"])
        peer = dict(PEERS).get(row["best_peer"], row["best_peer"])
        lines.append(f"| `{row['case']}` | {row['op']} {row['shape']} {row['dtype']} "
                     f"| {_ms(_num(row['ovpool_ms']))} "
                     f"| {_ms(_num(row['best_peer_ms']))} ({peer}) "
                     f"| {'-' if best is None else f'{best:.2f}'} |")
    return "\n".join(lines)


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def summary(rows: list[dict]) -> dict:
    vs_peer = [v for r in rows if (v := _num(r["ovpool_over_best_peer"])) is not None]
    issue = [v for r in rows if r["group"] == "issue"
             and (v := _num(r["ovpool_over_best_peer"])) is not None]
    vs_roof = [v for r in rows if (v := _num(r["ovpool_over_roofline"])) is not None]
    scaling = [v for r in rows if (v := _num(r["scaling_1t_over_nt"])) is not None]
    return {
        "cases": len(rows),
        "geomean": _geomean(vs_peer),
        "geomean_issue": _geomean(issue),
        "issue_cases": len(issue),
        "at_most_target": sum(v <= TARGET_BEST_PEER for v in vs_peer),
        "within_roofline": sum(v <= TARGET_ROOFLINE for v in vs_roof),
        "max_roofline": max(vs_roof),
        "max_roofline_case": max(rows, key=lambda r: _num(r["ovpool_over_roofline"]) or 0)["case"],
        "scaling": (min(scaling), max(scaling)),
        "within_budget": sum(r["peak_within_budget"] == "True" for r in rows),
        "mismatches": [f"{r['case']}: {name}" for r in rows for peer, name in PEERS
                       if r[f"{peer}_status"] == "mismatch"],
    }


def headline_summary(rows: list[dict], report: dict) -> str:
    s = summary(rows)
    machine = report["machine"]
    return (f"Geometric mean of ovpool's time over the fastest peer's: **{s['geomean']:.2f}** "
            f"over all {s['cases']} cases of the benchmark ({s['geomean_issue']:.2f} over the "
            f"{s['issue_cases']} above); {s['at_most_target']} of {s['cases']} cases at or "
            f"under {TARGET_BEST_PEER}x; every case within {s['max_roofline']:.1f}x of the "
            f"memory roofline. {_cpu(machine)}, "
            f"{report['options']['threads'][0]} threads for every system.")


def _cpu(machine: dict) -> str:
    return f"{machine['cpus']} vCPU {machine['cpu_model']}, L3 {machine['l3'].split(' (')[0]}"


def machine_text(report: dict) -> str:
    m = report["machine"]
    v = m["versions"]
    where = f" under {m['hypervisor']}" if m.get("hypervisor") else ""
    isa = ", ".join(m["isa"])
    return "\n".join([
        f"- CPU: {m['cpus']} vCPU {m['cpu_model']}{where}, {m['threads_per_core']} thread "
        "per core",
        f"- caches: L1d {m['l1d']}, L2 {m['l2']}, L3 {m['l3']}",
        f"- memory: {m['memory_gib']} GiB",
        f"- ISA extensions seen: {isa}; ovpool dispatched to its "
        f"`{m['ovpool']['isa']}` build",
        f"- software: Python {m['python']}, numpy {v['numpy']}, torch {v['torch']}, "
        f"ONNX Runtime {v['onnxruntime']}, OpenVINO {v['openvino']}, Cython {v['Cython']}; "
        f"ovpool {m['ovpool']['version']} at commit `{m['ovpool']['commit']}`",
        f"- run: {report['created'][:10]}, seed {report['options']['seed']}",
    ])


def method_text(report: dict) -> str:
    o = report["options"]
    p = o["protocol"]
    quiet = o.get("quiet_load_threshold")
    ov = ", ".join(f"`{k}={v}`" for k, v in o["openvino_config"].items())
    return "\n".join([
        "Every system runs the same case side by side in one process: ovpool with its",
        "outputs preallocated (`out=`), PyTorch (`torch.nn.functional`), ONNX Runtime (a",
        "one-node model through an IOBinding, at the optimisation levels "
        f"{', '.join(o['ort_levels'])}),",
        f"OpenVINO (the op compiled for CPU with {ov}), and the memory roofline: reading",
        "the input once and writing the outputs once with PyTorch's vectorised kernels, a",
        "floor rather than a competitor.",
        "",
        f"Each system is timed in its own blocks of calls ({p['block_s']:g} s a block, "
        f"{p['min_calls']}-{p['max_calls']} calls), in {p['rounds']} shuffled rounds, in each",
        f"of {o['processes']} fresh processes; a time is the median of the block medians,",
        "then the median over the processes"
        + (f" where other processes used under {quiet:.0%} of the CPUs." if quiet else "."),
        "Each peer is built in every configuration it has (ONNX Runtime's levels and",
        "opsets, and *equivalent ops* such as an AveragePool with kernel = stride for an",
        "adaptive pool whose input size is a multiple of its output), its outputs are",
        "checked against ovpool's, and its fastest correct configuration is kept; `*`",
        "marks a peer timed on an equivalent op, `(wrong)` one whose outputs differed",
        "(timed, excluded from the fastest peer).",
        "",
        "`1t / 2t` is ovpool's time at 1 thread over its time at 2, and in parentheses",
        "the roofline's: the scaling memory bandwidth allows. The last column is the peak",
        "memory one call adds, measured in a fresh process, against the budget output +",
        "16 MiB. `benchmarks/README.md` describes the protocol in full.",
    ])


def other_runs_table() -> str:
    lines = ["| result file | machine | commit | seed | ovpool / fastest peer (geomean) "
             f"| cases at or under {TARGET_BEST_PEER}x | cases within {TARGET_ROOFLINE:g}x "
             "of the roofline (max) |",
             "|---|---|---|---|---|---|---|"]
    for stem in (MAIN_RUN, *OTHER_RUNS):
        report = load_run(stem)
        s = report["summary"][str(report["options"]["threads"][0])]
        lines.append(
            f"| `{stem}.json.gz` | {_cpu(report['machine'])} "
            f"| `{report['machine']['ovpool']['commit']}` | {report['options']['seed']} "
            f"| {s['geomean_ovpool_over_best_peer']:.2f} "
            f"| {s[f'cases_at_most_{TARGET_BEST_PEER}x_best_peer']} of {s['cases']} "
            f"| {s[f'cases_within_{TARGET_ROOFLINE:g}x_roofline']} of {s['cases']} "
            f"({s['max_ovpool_over_roofline']:.1f}x) |")
    return "\n".join(lines)



def _quantiles(values: list[float]) -> str:
    v = sorted(values)
    pick = [v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))] for q in (0.1, 0.5, 0.9)]
    return f"{pick[0]:.2f} / {pick[1]:.2f} / {pick[2]:.2f} (max {v[-1]:.2f})"


def sweep_section() -> str:
    """The sweep's runs: per seed the distribution of ovpool / fastest peer and
    ovpool / roofline, the issue's target, and every configuration."""
    parts = []
    for stem, seed, role in SWEEP_RUNS:
        if not (RESULTS / f"{stem}.csv").exists():
            continue
        rows = [r for r in load_rows(stem) if _num(r["ovpool_over_best_peer"]) is not None]
        report = load_run(stem)
        best = [float(r["ovpool_over_best_peer"]) for r in rows]
        roof = [float(r["ovpool_over_roofline"]) for r in rows
                if _num(r["ovpool_over_roofline"]) is not None]
        meets = [r for r in rows if float(r["ovpool_over_best_peer"]) <= 0.5
                 or (_num(r["ovpool_over_roofline"]) or math.inf) <= 1.1]
        slower = [r["case"] for r in rows if float(r["ovpool_over_best_peer"]) > 1.0]
        commit = report["machine"].get("ovpool", {}).get("commit", "")
        at = f", commit `{commit}`" if commit else ""
        lines = [
            f"### Seed {seed} ({role})",
            "",
            f"{len(rows)} configurations, {report['created'][:10]}, {_cpu(report['machine'])}, "
            f"{report['options']['threads'][0]} threads{at}.",
            "",
            f"- ovpool / fastest peer: geometric mean **{_geomean(best):.2f}**; "
            f"10th / 50th / 90th percentile {_quantiles(best)}.",
            f"- ovpool / roofline: 10th / 50th / 90th percentile {_quantiles(roof)}.",
            "- At most max(0.5x the fastest peer, 1.1x the roofline): "
            f"{len(meets)} of {len(rows)}.",
            f"- Slower than a peer: {len(slower)} of {len(rows)}"
            + (": " + ", ".join(f"`{c}`" for c in slower) if slower else "") + ".",
            "",
            "| configuration | ovpool ms | fastest peer | ovpool / peer | ovpool / roofline |",
            "|---|---|---|---|---|",
        ]
        for r in sorted(rows, key=lambda r: -float(r["ovpool_over_best_peer"])):
            roof_cell = _num(r["ovpool_over_roofline"])
            ratio = float(r["ovpool_over_best_peer"])
            lines.append(f"| `{r['case']}` | {_ms(_num(r['ovpool_ms']))} | {r['best_peer']} "
                         f"{_ms(_num(r['best_peer_ms']))} | {ratio:.2f} "
                         f"| {'-' if roof_cell is None else f'{roof_cell:.1f}'} |")
        plot = f"{stem}-quiet.png"
        if (RESULTS / plot).exists():
            lines += ["", f"![seed {seed}: ovpool / fastest peer and ovpool / roofline]"
                          f"(../../benchmarks/readme/{plot})"]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) or "No sweep run published yet."


def page() -> str:
    rows = load_rows()
    report = load_run(MAIN_RUN)
    s = summary(rows)
    mismatches = "; ".join(s["mismatches"]) or "none"
    return f"""# Performance

<!-- Written by docs/make_performance.py from benchmarks/readme/{MAIN_RUN}.csv and the
     JSON reports beside it: edit the script or the results, not this page. -->

ovpool against PyTorch, ONNX Runtime, OpenVINO and the memory roofline, measured
by the project's own benchmark (`benchmarks/`, `ovpool bench`). Times are in ms.

## Summary

- Geometric mean of ovpool's time over the fastest correct peer's:
  **{s['geomean']:.2f}** over the {s['cases']} cases, {s['geomean_issue']:.2f} over the
  {s['issue_cases']} headline cases (README's table; the group `issue` in
  `benchmarks/cases.py`).
- {s['at_most_target']} of {s['cases']} cases at or under {TARGET_BEST_PEER}x the fastest peer.
- {s['within_roofline']} of {s['cases']} cases within {TARGET_ROOFLINE:g}x of the memory roofline
  (at most {s['max_roofline']:.1f}x, `{s['max_roofline_case']}`).
- 2 threads are {s['scaling'][0]:.2f}-{s['scaling'][1]:.2f}x faster than 1 on every case.
- {s['within_budget']} of {s['cases']} calls within their memory budget.
- Peers whose outputs differed from ovpool's: {mismatches}.

The machine is a shared virtual machine: single numbers move by 10-30% between
runs; read them as ratios within one table.

## Machine

{machine_text(report)}

## Method

{method_text(report)}

## Results

{results_table(rows, report)}

`*`: the peer's fastest configuration is an equivalent op; `(wrong)`: its
outputs differ from ovpool's (timed, excluded from the fastest peer).

![ovpool / fastest peer and ovpool / roofline per case](../../benchmarks/readme/{PLOT})

## Random shapes (sweep)

The 28 cases above are where the kernels were tuned. `benchmarks/sweep.py`
draws pool configurations the way networks use them (1D/2D/3D, kernels 2-7
and adaptive outputs 1-14, strides 1-3, paddings, dilations, ceil mode,
count_include_pad, batch x channels from small to beyond L3, float32 and
float16, with and without indices) from a seed, and runs each beside every
peer that supports it, with the method above (`python benchmarks/run.py
--sweep SEED`). Seed 1 is the one the kernels were tuned on; seed 2 is only
reported. The target is at most max(0.5x the fastest peer, 1.1x the
roofline) on every configuration, and none slower than a peer.

{sweep_section()}

## Other runs

The same benchmark in full, kept beside the main run: a held-out run with
another seed (its commit changed only the README), and the last runs on a
machine of the same kind with a 32 MiB L3, on earlier kernels.

{other_runs_table()}

## Reproduce

```bash
pip install -e ".[bench]"        # onnx, onnxruntime, torch, openvino, tqdm, matplotlib
python benchmarks/run.py --threads 2 --processes 3 --wait-idle 5 --plot    # about 15 minutes
python benchmarks/run.py --report benchmarks/readme/{MAIN_RUN}.json.gz   # this page's run
```

To publish a run, copy its `.csv` and `-quiet.png` into `benchmarks/readme/`
as `{MAIN_RUN}.*`, its JSON as `{MAIN_RUN}.json.gz` (`gzip -9n`), and run
`python docs/make_performance.py`.
"""


def readme_block() -> str:
    rows = load_rows()
    text = textwrap.fill(headline_summary(rows, load_run(MAIN_RUN)), width=78)
    return "\n".join([BEGIN, "", headline_table(rows), "", text, "", END])


def updated_readme(text: str) -> str:
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + readme_block() + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="only check that docs/performance.md and README's table are current")
    args = parser.parse_args(argv)
    targets = {PAGE: page(), README: updated_readme(README.read_text(encoding="utf-8"))}
    stale = [path for path, text in targets.items()
             if not path.exists() or path.read_text(encoding="utf-8") != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} is out of date: run python docs/make_performance.py",
                  file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(targets[path], encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
