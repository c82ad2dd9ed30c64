"""The fuzzer's command line (see :mod:`tools.fuzz`)."""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sys
import tempfile
import time
import traceback

from . import cases_ir, cases_lib, runner

# Classes that are findings (a defect of ovpool) unless known open.
FINDINGS = (
    "foreign",
    "memory",
    "blowup",
    "crash",
    "crash-flaky",
    "hang",
    "wrong",
    "threads",
    "rerun",
    "refused-valid",
    "accepted-invalid",
    "unnamed",
    "oracle",
    "ov-differ",
    "fuzzer",
)
# Passes of other engines, beside ovpool's: their failures are theirs.
OTHER_ENGINES = {
    "openvino": "OpenVINO",
    "native-ir": "OpenVINO",
    "native-onnx": "OpenVINO",
    "ort": "ONNX Runtime",
}
ROWS = (
    ("ok", "ok: computed (or read and described)"),
    ("checked", "  of which checked against torch / the spec oracle / ONNX Runtime"),
    ("ran", "  of which run on seeded inputs (the library)"),
    ("ovpool-error", "OvpoolError / IRError (naming the file and line)"),
    ("budget", "MemoryBudgetError (over the budget)"),
    ("error", "exception from OpenVINO (ONNX Runtime), not ovpool's"),
    ("no-twin", "not run: an ONNX op of ovpool's opset, no stock twin"),
    ("refused-valid", "OvpoolError on a call the reference computes"),
    ("accepted-invalid", "result where the spec says error"),
    ("unnamed", "IRError not naming the file"),
    ("wrong", "wrong answer"),
    ("threads", "other bits at 1 / 2 / 7 threads"),
    ("rerun", "failed when called again"),
    ("foreign", "other exception (the library: one not naming ovpool)"),
    ("memory", "MemoryError (the library: std::bad_alloc)"),
    ("blowup", "memory blow-up (resident memory past the case's share)"),
    ("crash", "crash (signal or exit), again when run alone"),
    ("crash-flaky", "crash, not when run alone"),
    ("hang", "hang (no result within the timeout)"),
    ("oracle", "torch and the spec oracle disagree (fuzzer defect)"),
    ("ov-differ", "outputs differ from OpenVINO's (not a documented deviation)"),
    ("fuzzer", "the fuzzer failed to make the case (fuzzer defect)"),
)


def known_open(outcome):
    """The label of a known open finding (in a part of ovpool another issue
    owns), or None."""
    label = outcome.extra.get("known_open")
    detail = outcome.detail or ""
    if outcome.kind in OTHER_ENGINES and outcome.cls != "ov-differ":
        return OTHER_ENGINES[outcome.kind]
    if outcome.extra.get("as_native"):
        return "OpenVINO's own: it fails the same file the same way without the library"
    # the window tables (shapes.py, the Plan) and the kernels' per-thread scratch
    if outcome.cls == "memory" and any(
        where in detail for where in ("shapes.py", "_kernels", "(__init__)", "(merged_tiling)")
    ):
        return "window tables / scratch of the plan (issue 20)"
    if outcome.cls in ("crash", "crash-flaky") and (
        "libgomp" in detail or label == "large num_threads"
    ):
        return "thread count passed to OpenMP (issue 20)"
    if label and outcome.cls in FINDINGS:
        return f"{label} (issue 20)"
    return None


def _count(outcomes):
    counts = collections.Counter(o.cls for o in outcomes)
    counts["checked"] = sum(1 for o in outcomes if o.cls == "ok" and o.extra.get("checked"))
    counts["ran"] = sum(
        1
        for o in outcomes
        if o.cls == "ok" and o.kind in cases_lib.LIB_MODES and o.extra.get("stage") == "ran"
    )
    return counts


def table(passes):
    """Markdown table: one column per pass; the known open findings (in parts
    another issue owns) on rows of their own."""
    names = [name for name, _ in passes]
    counts, labels = {}, collections.defaultdict(collections.Counter)
    for name, outcomes in passes:
        mine = []
        for o in outcomes:
            label = known_open(o) if o.cls in FINDINGS else None
            if label and label not in OTHER_ENGINES.values():
                labels[label][name] += 1
                labels[label]["classes"] += 0
                labels[label].setdefault(("cls", o.cls), 0)
                labels[label][("cls", o.cls)] += 1
            else:
                mine.append(o)
        counts[name] = _count(mine)
    lines = ["| outcome | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for key, label in ROWS:
        values = [counts[name].get(key, 0) for name in names]
        if not any(values) and key not in ("ok", "crash", "hang", "memory", "foreign", "wrong"):
            continue
        lines.append(f"| {label} | " + " | ".join(str(v) for v in values) + " |")
    for label, c in labels.items():
        kinds = ", ".join(sorted(k[1] for k in c if isinstance(k, tuple)))
        lines.append(
            f"| known open: {label} ({kinds}) | "
            + " | ".join(str(c.get(name, 0)) for name in names)
            + " |"
        )
    lines.append("| **cases** | " + " | ".join(str(len(o)) for _, o in passes) + " |")
    return "\n".join(lines)


def compare_summary(passes):
    """Counts of OpenVINO's outputs against ovpool's on the mutants both ran:
    agree, differ on a mutant of a ``deviation_*`` example (where ovpool
    documents that OpenVINO's CPU plugin deviates from its spec), differ
    elsewhere (marked on the outcome as a finding to look at)."""
    counts = collections.Counter()
    for _, outcomes in passes:
        for o in outcomes:
            c = o.extra.get("comparison")
            if not c or o.kind != "openvino":
                continue
            if c == "agree":
                counts["agree"] += 1
                continue
            base = cases_ir.make_case(o.seed, o.index)[0]
            if base.startswith("deviation_"):
                counts["differ on a deviation_* example"] += 1
            else:
                counts["differ elsewhere"] += 1
                o.cls, o.detail = "ov-differ", f"{c} (mutant of {base})"
    return counts


# the stages of a run, in order (tools.fuzz.cases_lib)
_STAGES = {"read": 0, "compile": 1, "infer": 2, "ran": 3}


def library_summary(passes):
    """Attribute the library's failures and compare its outputs.

    A library outcome that is not ovpool's own refusal (an exception not
    naming ovpool, a bad_alloc, a blow-up, a crash, a hang) is OpenVINO's
    where OpenVINO without the library fails the same file (for IR: its stock
    twin) at the same stage or earlier, or, for an IR file without a twin, its
    reader refused it; otherwise it is a finding ("foreign" for an
    exception). Where ONNX Runtime and the library both ran a file, their
    outputs must agree ("wrong" otherwise). Returns the library's outcomes
    by what was found (for the report)."""
    by_kind = {}
    for _, outcomes in passes:
        for o in outcomes:
            by_kind.setdefault(o.kind, {})[o.index] = o
    notes = collections.defaultdict(list)  # label -> the library's outcomes
    for lib, native in (("lib-ir", "native-ir"), ("lib-onnx", "native-onnx")):
        for index, o in sorted(by_kind.get(lib, {}).items()):
            if o.cls not in ("error", "memory", "blowup", "crash", "crash-flaky", "hang"):
                continue
            twin = by_kind.get(native, {}).get(index)
            stage = _STAGES.get(o.extra.get("stage"), 0)
            if (
                twin is not None
                and twin.cls not in ("ok", "no-twin", "ovpool-error")
                and (
                    _STAGES.get(twin.extra.get("stage"), 0) <= stage
                    or o.cls in ("crash", "crash-flaky", "hang")
                )
            ):
                if o.cls != "error":
                    o.extra["as_native"] = True
                notes[f"{lib}: fails as OpenVINO without the library does"].append(o)
            elif (
                o.cls == "error"
                and lib == "lib-ir"
                and stage == 0
                and (twin is None or twin.cls == "no-twin")
            ):
                notes[f"{lib}: refused by OpenVINO's IR reader (no stock twin)"].append(o)
            elif o.cls == "error" and o.extra.get("untyped_parameter"):
                notes[
                    f"{lib}: a Parameter without element type, which OpenVINO's CPU plugin "
                    "compiles with no op"
                ].append(o)
            elif o.cls == "error":
                o.cls = "foreign"
    # A kernel that is not one entry per spatial axis: where the oracle (the
    # stock twin on native OpenVINO; ONNX Runtime) refuses the file, the
    # library must refuse it too, never run it (as an identity); where the
    # oracle runs it, the fuzzer's rule is wrong.
    for lib, oracle in (("lib-ir", "native-ir"), ("lib-onnx", "ort")):
        for index, o in sorted(by_kind.get(lib, {}).items()):
            reason = o.extra.get("must_refuse")
            verdict = by_kind.get(oracle, {}).get(index)
            if not reason or verdict is None or verdict.cls in ("no-twin",):
                continue
            if verdict.cls == "ok":
                if verdict.extra.get("stage") == "ran":
                    o.cls, o.detail = "oracle", f"{oracle} runs a file with {reason}"
                continue
            if o.cls == "ok" and o.extra.get("stage") in ("infer", "ran"):
                o.cls, o.detail = "accepted-invalid", f"ran a file with {reason}"
            else:
                notes[f"{lib}: refuses a kernel not one per axis, as {oracle} does"].append(o)
    lib = by_kind.get("lib-onnx", {})
    for index, o in sorted(by_kind.get("ort", {}).items()):
        ours = lib.get(index)
        comparison = o.extra.get("comparison")
        if ours is None:
            continue
        if comparison == "agree":
            notes["ONNX Runtime and the library agree"].append(ours)
            ours.extra["checked"] = True
        elif comparison:
            notes["ONNX Runtime and the library differ"].append(ours)
            ours.cls, ours.detail = "wrong", comparison
        elif o.extra.get("incomparable") and ours.extra.get("stage") == "ran":
            notes[
                "both ran, not compared: SAME_* with dilations or a negative total pad "
                "(ovpool documents another reading than ONNX Runtime's)"
            ].append(ours)
        elif (
            o.cls == "ok"
            and o.extra.get("stage") == "ran"
            and ours.cls in ("ovpool-error", "budget")
        ):
            notes["the library refuses what ONNX Runtime runs"].append(ours)
        elif o.cls == "error" and ours.extra.get("stage") == "ran":
            notes["the library runs what ONNX Runtime refuses"].append(ours)
    return notes


def _findings(outcomes):
    return [o for o in outcomes if o.cls in FINDINGS]


def _save_ir(out_dir, outcome):
    base, xml, blob, notes = cases_ir.make_case(outcome.seed, outcome.index)
    os.makedirs(out_dir, exist_ok=True)
    stem = f"{outcome.kind}-{outcome.seed}-{outcome.index}"
    path = cases_ir.write_case(out_dir, stem, xml, blob)
    return path, base, notes


def _describe(outcome):
    if outcome.kind in cases_lib.MODES:
        return cases_lib.describe(outcome.kind, outcome.seed, outcome.index)
    if outcome.kind == "api":
        from . import cases_api

        return cases_api.make_case(
            outcome.seed, outcome.index, outcome.extra.get("known_open_run", False)
        ).describe()
    base, _, _, notes = cases_ir.make_case(outcome.seed, outcome.index)
    return f"mutant of {base}: " + "; ".join(notes)


def _limit_this_process(headroom=4 << 30):
    """This process regenerates cases too (to describe and save findings): a
    case that asks a lot of memory must fail here as in a worker, not bring
    in the OOM killer. The soft limit only: workers set their own."""
    import resource

    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = vm + headroom
    if hard == resource.RLIM_INFINITY or limit < hard:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def replay(spec, out_dir, known=False, budget="256M", headroom_mib=768):
    """Run one case in this process, under a worker's budget and address-space
    limit (set before ovpool is imported)."""
    kind, seed, index = spec.split(":")
    seed, index = int(seed), int(index)
    os.environ["OVPOOL_MEMORY_BUDGET"] = budget
    if kind in cases_lib.MODES:
        return replay_library(kind, seed, index, out_dir, headroom_mib)
    import numpy  # noqa: F401

    import ovpool  # noqa: F401

    if kind == "api":
        import torch  # noqa: F401
    _limit_this_process(headroom_mib << 20)
    if kind == "api":
        from . import cases_api

        case = cases_api.make_case(seed, index, known)
        print(case.describe())
        try:
            print(cases_api.run_case(case))
        except BaseException:  # show whatever happens
            traceback.print_exc()
        return 0
    base, xml, blob, notes = cases_ir.make_case(seed, index)
    os.makedirs(out_dir, exist_ok=True)
    path = cases_ir.write_case(out_dir, f"ir-{seed}-{index}", xml, blob)
    print(f"mutant of {base}: {'; '.join(notes)}\nwritten to {path} (+ .bin)")
    print(cases_ir.run_ovpool(path, seed, index))
    return 0


def replay_library(kind, seed, index, out_dir, headroom_mib):
    """A library case in this process: OpenVINO and the library only."""
    if not os.environ.get("OVPOOL_OPENVINO_EXTENSION"):
        from ovpool.openvino import _library  # (ovpool only to find the library)

        os.environ["OVPOOL_OPENVINO_EXTENSION"] = str(_library.extension_path())
    cases_lib.setup(kind)
    _limit_this_process((headroom_mib * 8) << 20)
    print(cases_lib.describe(kind, seed, index))
    os.makedirs(out_dir, exist_ok=True)
    if kind.endswith("ir"):
        _, xml, blob, _, twin = cases_lib.make_ir_case(seed, index)
        path = cases_ir.write_case(out_dir, f"{kind}-{seed}-{index}", xml, blob)
        if twin is not None:
            cases_ir.write_case(out_dir, f"{kind}-{seed}-{index}-twin", twin, blob)
    else:
        path = os.path.join(out_dir, f"{kind}-{seed}-{index}.onnx")
        with open(path, "wb") as f:
            f.write(cases_lib.make_onnx_case(seed, index).model)
    print(f"written to {path}")
    print(cases_lib.run_case(kind, seed, index, out_dir))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.fuzz", description=__doc__)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ir", type=int, default=0, help="IR mutants")
    parser.add_argument("--api", type=int, default=0, help="API calls")
    parser.add_argument(
        "--lib-ir",
        type=int,
        default=0,
        help="IR mutants of ovpool's opset run by OpenVINO with the library "
        "(and their stock twins without it)",
    )
    parser.add_argument(
        "--lib-onnx",
        type=int,
        default=0,
        help="single-node ONNX pool files run by OpenVINO with the library, "
        "without it, and by ONNX Runtime",
    )
    parser.add_argument("--library", help="the extension library (default: ovpool's build)")
    parser.add_argument("--start", type=int, default=0, help="first case index")
    parser.add_argument(
        "--openvino",
        action="store_true",
        help="also read, compile and run the IR mutants with OpenVINO",
    )
    parser.add_argument(
        "--known-open",
        action="store_true",
        help="also generate the classes of the known open findings",
    )
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per case")
    parser.add_argument(
        "--headroom",
        type=int,
        default=768,
        help="MiB of address space a worker has beyond its imports",
    )
    parser.add_argument("--budget", default="256M", help="OVPOOL_MEMORY_BUDGET of the workers")
    parser.add_argument("--out", default="fuzz-findings", help="folder for reproducers")
    parser.add_argument("--json", help="write every outcome and the summary here")
    parser.add_argument(
        "--replay",
        metavar="KIND:SEED:INDEX",
        help="run one case in this process and show what happens",
    )
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if args.replay:
        return replay(args.replay, args.out, args.known_open, args.budget, args.headroom)

    _limit_this_process()
    tmp = tempfile.mkdtemp(prefix="ovpool-fuzz-")
    passes, infos, timings = [], {}, {}

    def progress_for(name, total):
        state = {"n": 0, "t": time.monotonic()}

        def progress(outcome):
            state["n"] += 1
            if args.quiet:
                return
            if outcome.cls in FINDINGS and not known_open(outcome):
                print(
                    f"  [{name}] {outcome.cls}: {outcome.replay}: {outcome.detail[:300]}",
                    flush=True,
                )
            if time.monotonic() - state["t"] > 30:
                state["t"] = time.monotonic()
                print(f"  [{name}] {state['n']}/{total}", flush=True)

        return progress

    try:
        plan = []
        if args.ir:
            plan.append(("ovpool IR", "ir", args.ir))
            if args.openvino:
                plan.append(("OpenVINO on the same files", "openvino", args.ir))
        if args.api:
            plan.append(("ovpool API", "api", args.api))
        if args.lib_ir:
            plan += [
                ("library IR", "lib-ir", args.lib_ir),
                ("OpenVINO on the stock twins", "native-ir", args.lib_ir),
            ]
        if args.lib_onnx:
            plan += [
                ("library ONNX", "lib-onnx", args.lib_onnx),
                ("OpenVINO on the ONNX files", "native-onnx", args.lib_onnx),
                ("ONNX Runtime on the ONNX files", "ort", args.lib_onnx),
            ]
        library = args.library
        if (args.lib_ir or args.lib_onnx) and library is None:
            from ovpool.openvino import _library

            library = str(_library.extension_path())
        for name, mode, n in plan:
            indices = range(args.start, args.start + n)
            jobs = args.jobs
            engine = mode == "openvino" or mode in cases_lib.MODES
            timeout = args.timeout * (3 if engine else 1)
            headroom = args.headroom * (8 if engine else 1)
            start = time.monotonic()
            if not args.quiet:
                print(f"{name}: {n} cases, seed {args.seed}, {jobs} worker(s)", flush=True)
            outcomes, info = runner.run(
                mode,
                args.seed,
                indices,
                jobs=jobs,
                timeout=timeout,
                headroom_mib=headroom,
                budget=args.budget,
                known_open=args.known_open,
                tmp=tmp,
                progress=progress_for(name, n),
                library=library,
            )
            timings[name] = time.monotonic() - start
            infos[name] = info
            passes.append((name, outcomes))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    comparisons = compare_summary(passes)
    library_counts = library_summary(passes)
    print()
    print(
        f"seed {args.seed}, cases {args.start}..; budget {args.budget}, address space "
        f"+{args.headroom} MiB per worker (x8 for OpenVINO), timeout {args.timeout:g} s"
    )
    print(table(passes))
    print()
    for name, _ in passes:
        info = infos[name]
        print(
            f"{name}: {timings[name]:.0f} s; worker RSS after imports "
            f"{info['worker_rss_mib']:.0f} MiB, address space {info['worker_vm_mib']:.0f} MiB; "
            f"{info['restarts']} worker restarts"
        )
    if comparisons:
        print(f"outputs of OpenVINO vs ovpool on the mutants both ran: {dict(comparisons)}")
    for label, items in sorted(library_counts.items()):
        print(f"{label}: {len(items)}")
        if "agree" not in label:
            for o in items[:3]:
                print(f"  {o.replay}  # {o.cls}: {o.detail[:160]}")
    unexpected, known = [], collections.defaultdict(list)
    for _name, outcomes in passes:
        for o in _findings(outcomes):
            label = known_open(o)
            (known[label].append(o) if label else unexpected.append(o))
    for label, items in known.items():
        classes = collections.Counter(o.cls for o in items)
        print(f"\nknown open: {label}: {dict(classes)}")
        for o in items[:3]:
            print(f"  {o.replay}  # {o.cls}: {o.detail[:200]}")
    if unexpected:
        print(f"\n{len(unexpected)} finding(s):")
        for o in unexpected[:50]:
            try:
                description = _describe(o)[:400]
                if o.kind in ("ir", "openvino"):
                    description += f"\n    reproducer: {_save_ir(args.out, o)[0]}"
            except Exception as exc:  # a case the fuzzer cannot make again
                description = f"(not made again here: {exc!r})"
            print(f"  {o.cls}: {o.replay}\n    {o.detail[:400]}\n    {description}", flush=True)
    else:
        print("\nno finding outside the known open ones")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "seed": args.seed,
                    "start": args.start,
                    "budget": args.budget,
                    "headroom_mib": args.headroom,
                    "timeout": args.timeout,
                    "timings": timings,
                    "infos": infos,
                    "counts": {name: _count(o) for name, o in passes},
                    "comparisons": comparisons,
                    "library": {
                        label: [o.index for o in items] for label, items in library_counts.items()
                    },
                    "outcomes": [
                        dict(
                            kind=o.kind,
                            index=o.index,
                            cls=o.cls,
                            detail=o.detail,
                            seconds=o.seconds,
                            extra={k: v for k, v in o.extra.items() if k != "known_open_run"},
                        )
                        for _, outs in passes
                        for o in outs
                        if o.cls not in ("ok", "ovpool-error", "budget")
                        or o.extra.get("comparison", "agree") != "agree"
                    ],
                },
                f,
                indent=1,
                default=str,
            )
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
