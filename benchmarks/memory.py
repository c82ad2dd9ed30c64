"""Peak memory of one ovpool call, measured in a fresh process per case.

``tracemalloc`` only sees Python's allocator, not the C ``malloc``/``mmap``
of numpy buffers or of the kernels' scratch, so the resident set is measured
instead:

1. A fresh interpreter (``python benchmarks/memory.py CASE THREADS``) imports
   only numpy, ovpool and the benchmark's ``cases`` (no torch, onnxruntime or
   openvino), builds the case's input and touches every page of it.
2. It writes ``5`` to ``/proc/self/clear_refs``, which resets the peak
   resident set ``VmHWM`` to the current ``VmRSS``.
3. It makes one call and reads ``VmHWM``: ``peak - RSS before`` is the memory
   the call added at its peak (its new output arrays, scratch, temporary
   copies, thread stacks touched), in ``extra_alloc_bytes``.
4. The same again with the outputs pre-allocated and passed as ``out=``
   (allocated before the reset): ``extra_out_bytes``, the call's own
   temporaries only.

Pages freed back to glibc but not to the kernel before step 2 would be reused
without raising the peak; a fresh process with a single call avoids that.
Where ``clear_refs`` is not writable the fallback is ``getrusage``'s
``ru_maxrss`` delta (only valid when the call's peak exceeds everything
before it), and the method is reported.

The issue's budget is ``input + output + 16 MiB``; since the input is
already resident, the call may add at most ``output + 16 MiB``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

if not __package__:  # run as a script (the child): as benchmarks/run.py does
    _ROOT = Path(__file__).resolve().parent.parent
    if sys.path and Path(sys.path[0]).resolve() == _ROOT / "benchmarks":
        sys.path.pop(0)
    sys.path.insert(0, str(_ROOT))
    from ovpool.bench import load_benchmarks

    __package__ = load_benchmarks(_ROOT / "benchmarks").__name__

MIB = 1 << 20
BUDGET_SLACK = 16 * MIB


def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _measure(call):
    """Bytes the call added to the resident set at its peak, and the method used."""
    if _reset_peak():
        before = _status_kib("VmRSS")
        result = call()
        peak = _status_kib("VmHWM")
        return (peak - before) * 1024, "VmHWM after clear_refs=5", result
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = call()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    method = "getrusage ru_maxrss delta (clear_refs unavailable)"
    return max(0, peak - before) * 1024, method, result


def child_main(case_name, n_threads):
    import numpy as np

    import ovpool

    from . import cases
    from .peers import make_input

    case = cases.case_by_name(case_name)
    x = make_input(case)
    x.reshape(-1).view(np.uint8)[::4096].sum()  # every page resident
    fn = getattr(ovpool, case.op)

    extra_alloc, method, result = _measure(lambda: fn(x, **case.params, num_threads=n_threads))
    outputs = list(result) if isinstance(result, tuple) else [result]
    out_bytes = sum(a.nbytes for a in outputs)
    kwargs = {"num_threads": n_threads, "out": np.empty_like(outputs[0])}
    if len(outputs) > 1:
        kwargs["out_indices"] = np.empty_like(outputs[1])
    for a in kwargs.values():
        if isinstance(a, np.ndarray):
            a.fill(0)  # resident before the reset
    del result, outputs
    extra_out, _, _ = _measure(lambda: fn(x, **case.params, **kwargs))
    report = {
        "method": method,
        "threads": n_threads,
        "input_bytes": int(x.nbytes),
        "output_bytes": int(out_bytes),
        "extra_alloc_bytes": int(extra_alloc),
        "extra_out_bytes": int(extra_out),
        "budget_extra_bytes": int(out_bytes + BUDGET_SLACK),
    }
    report["within_budget"] = report["extra_alloc_bytes"] <= report["budget_extra_bytes"]
    print(json.dumps(report))
    return 0


def measure_case(case_name, n_threads, repo_root, timeout=600):
    """Run :func:`child_main` in a fresh interpreter; the report dict (or an error)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(repo_root), env.get("PYTHONPATH")]))
    child = [sys.executable, str(Path(__file__).resolve()), case_name, str(n_threads)]
    proc = subprocess.run(
        child, cwd=str(repo_root), env=env, capture_output=True, text=True, timeout=timeout
    )
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1], int(sys.argv[2])))
