"""The fuzzer of tools/fuzz: its runner tells crashes, hangs and memory errors
apart, and a short seeded run of IR mutants and API calls finds nothing.

The long runs (``python -m tools.fuzz --ir 20000 --api 20000 --openvino
--known-open``; ``--lib-ir 5000 --lib-onnx 5000`` for the extension library)
and their results are in docs/fuzzing.md.

The short run includes the classes that were open before the kernel core
(issue 20) budgeted its window tables and scratch and capped thread counts:
integer arguments between 2**20 and 2**40 and thread counts no process can
run (``known_open=True`` below).
"""

import collections
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.fuzz import cases_lib, runner  # noqa: E402
from tools.fuzz.__main__ import FINDINGS, known_open, library_summary  # noqa: E402

SEED = 22


def test_runner_classifies_every_outcome(tmp_path):
    outcomes, info = runner.run(
        "selftest", 0, range(6), jobs=2, timeout=3, headroom_mib=256, tmp=str(tmp_path)
    )
    by_index = {o.index: o for o in outcomes}
    assert sorted(by_index) == list(range(6))
    assert by_index[0].cls == by_index[5].cls == "ok"
    assert by_index[1].cls == "crash" and "SIGABRT" in by_index[1].detail
    assert by_index[2].cls == "crash" and "exited with status 3" in by_index[2].detail
    assert "selftest: exiting" in by_index[2].detail  # the worker's stderr is kept
    assert by_index[3].cls == "hang"
    assert by_index[4].cls == "memory"  # the address-space limit holds
    assert info["restarts"] == 5  # a crash is run again alone: 2 + 2, and 1 hang


def _short_run(mode, n, tmp_path):
    outcomes, _ = runner.run(
        mode,
        SEED,
        range(n),
        jobs=2,
        timeout=30,
        headroom_mib=768,
        budget="256M",
        known_open=True,
        tmp=str(tmp_path),
    )
    assert sorted(o.index for o in outcomes) == list(range(n))
    findings = [o for o in outcomes if o.cls in FINDINGS]
    assert not findings, "\n".join(
        f"{o.cls} ({known_open(o) or 'new'}): {o.replay}: {o.detail}" for o in findings
    )
    return collections.Counter(o.cls for o in outcomes), outcomes


def test_short_ir_run(tmp_path):
    counts, _ = _short_run("ir", 1500, tmp_path)
    # both kinds of outcome are exercised: it cannot pass by refusing everything
    assert counts["ok"] > 250 and counts["ovpool-error"] > 750, counts


def test_short_api_run(tmp_path):
    pytest.importorskip("torch")
    counts, outcomes = _short_run("api", 1200, tmp_path)
    checked = sum(1 for o in outcomes if o.cls == "ok" and o.extra.get("checked"))
    assert checked > 400 and counts["ovpool-error"] > 300, (checked, counts)


def test_short_library_run(ov_extension, tmp_path):
    """IR mutants of ovpool's opset and hostile ONNX pool files through the
    extension library in workers that import only openvino (beside OpenVINO
    without the library and ONNX Runtime): no finding, and the library both
    refuses and computes, agreeing with ONNX Runtime where both ran."""
    pytest.importorskip("onnxruntime")
    passes = []
    for mode in cases_lib.MODES:
        # (OpenVINO without the library and ONNX Runtime hang on some files
        # that the library refuses, such as a 2^41-tap MaxPool: their
        # timeout is short, their hangs are theirs)
        outcomes, info = runner.run(
            mode,
            SEED,
            range(40),
            jobs=2,
            timeout=60 if mode in cases_lib.LIB_MODES else 5,
            headroom_mib=6144,
            budget="256M",
            tmp=str(tmp_path),
            library=ov_extension,
        )
        assert sorted(o.index for o in outcomes) == list(range(40)), mode
        passes.append((mode, outcomes))
    notes = library_summary(passes)
    mine = [o for mode, outcomes in passes if mode in cases_lib.LIB_MODES for o in outcomes]
    findings = [o for o in mine if o.cls in FINDINGS and not known_open(o)]
    assert not findings, "\n".join(f"{o.cls}: {o.replay}: {o.detail}" for o in findings)
    counts = collections.Counter((o.kind, o.cls) for o in mine)
    for mode in cases_lib.LIB_MODES:
        assert counts[mode, "ok"] >= 8 and counts[mode, "ovpool-error"] >= 8, counts
    assert len(notes["ONNX Runtime and the library agree"]) >= 8, dict(notes)
