"""``ovpool bench``: run the side-by-side benchmark of a source checkout.

The benchmark itself (case list, peer runners, timing protocol, reports) lives
in the repository's ``benchmarks/`` directory, which is not installed: it
compares against three heavy runtimes and writes results next to the sources,
so it is a development tool, and one copy of the case list is better than an
installed twin. This module only finds that directory and hands the command
line to ``benchmarks.run.main``; it imports no peer (torch, onnxruntime,
openvino) itself, and ``import ovpool`` never imports this module.

The ``benchmarks/`` directory is looked up, in order, in the directory given
by ``--bench-dir`` or ``OVPOOL_BENCH_DIR``, next to this package (in-place and
editable installs), then in the current directory and its parents.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from .errors import OvpoolError

__all__ = ["find_benchmarks", "main"]


def _is_bench_dir(path):
    return (path / "run.py").is_file() and (path / "cases.py").is_file()


def find_benchmarks(explicit=None):
    """The ``benchmarks/`` directory to run, or raise :class:`OvpoolError`."""
    given = explicit or os.environ.get("OVPOOL_BENCH_DIR")
    if given:  # an explicit directory must be right: no silent fallback
        path = Path(given).expanduser().resolve()
        for candidate in (path, path / "benchmarks"):
            if _is_bench_dir(candidate):
                return candidate
        source = "--bench-dir" if explicit else "OVPOOL_BENCH_DIR"
        raise OvpoolError(f"{source}={given!r} is not ovpool's benchmarks/ directory "
                          "(or a checkout containing it): no run.py and cases.py there")
    candidates = []
    candidates.append(Path(__file__).resolve().parent.parent / "benchmarks")
    cwd = Path.cwd().resolve()
    candidates += [d / "benchmarks" for d in (cwd, *cwd.parents)]
    for path in candidates:
        if _is_bench_dir(path):
            return path
    raise OvpoolError(
        "ovpool bench runs the benchmarks/ directory of an ovpool source checkout, and none "
        "was found (looked next to the package and in the current directory and its parents). "
        "Run it from the checkout, or pass --bench-dir PATH (or set OVPOOL_BENCH_DIR); "
        "install the peers with `pip install -e \".[bench]\"`.")


def main(argv=None):
    """Run ``benchmarks.run.main(argv)``; ``--bench-dir DIR`` is consumed here."""
    argv = list(sys.argv[1:] if argv is None else argv)
    explicit = None
    if "--bench-dir" in argv:
        i = argv.index("--bench-dir")
        if i + 1 >= len(argv):
            raise OvpoolError("--bench-dir needs a directory")
        explicit = argv[i + 1]
        del argv[i:i + 2]
    bench_dir = find_benchmarks(explicit)
    root = str(bench_dir.parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    loaded = sys.modules.get("benchmarks")
    if loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve().parent != bench_dir:
        raise OvpoolError(f"another module named 'benchmarks' is already imported: {loaded!r}")
    run = importlib.import_module("benchmarks.run")
    return run.main(argv, prog="ovpool bench")
