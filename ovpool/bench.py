"""``ovpool bench``: run the side-by-side benchmark of a source checkout.

The benchmark itself (case list, peer runners, timing protocol, reports) lives
in the repository's ``benchmarks/`` directory, which is not installed: it
compares against three heavy runtimes and writes results next to the sources,
so it is a development tool, and one copy of the case list is better than an
installed twin. This module only finds that directory and hands the command
line to the benchmark's ``run.main``; it imports no peer (torch, onnxruntime,
openvino) itself, and ``import ovpool`` never imports this module.

The ``benchmarks/`` directory is looked up, in order, in the directory given
by ``--bench-dir`` or ``OVPOOL_BENCH_DIR``, next to this package (in-place and
editable installs), then in the current directory and its parents. It is
loaded by path as the private package ``_ovpool_benchmarks``
(:func:`load_benchmarks`): nothing is added to ``sys.path``, and a package of
yours named ``benchmarks`` is neither shadowed nor imported.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

from .errors import OvpoolError

__all__ = ["PACKAGE", "find_benchmarks", "load_benchmarks", "main"]

PACKAGE = "_ovpool_benchmarks"
"""The module name the benchmark package is loaded under."""


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
        raise OvpoolError(
            f"{source}={given!r} is not ovpool's benchmarks/ directory "
            "(or a checkout containing it): no run.py and cases.py there"
        )
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
        'install the peers with `pip install -e ".[bench]"`.'
    )


def load_benchmarks(bench_dir):
    """Import the ``benchmarks/`` directory ``bench_dir`` as the package :data:`PACKAGE`.

    Its modules import each other relatively, so they work under this name;
    loading by path keeps the generic name ``benchmarks`` free for the
    caller's own code. Returns the package (loaded once per process).
    """
    bench_dir = Path(bench_dir).resolve()
    loaded = sys.modules.get(PACKAGE)
    if loaded is not None:
        if [str(bench_dir)] != list(getattr(loaded, "__path__", [])):
            raise OvpoolError(
                f"another benchmarks directory is already loaded: {list(loaded.__path__)}"
            )
        return loaded
    spec = importlib.util.spec_from_file_location(
        PACKAGE, bench_dir / "__init__.py", submodule_search_locations=[str(bench_dir)]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    try:
        spec.loader.exec_module(package)
    except BaseException:
        del sys.modules[PACKAGE]
        raise
    return package


def main(argv=None):
    """Run the benchmark's ``run.main(argv)``; ``--bench-dir DIR`` is consumed here."""
    argv = list(sys.argv[1:] if argv is None else argv)
    explicit = None
    if "--bench-dir" in argv:
        i = argv.index("--bench-dir")
        if i + 1 >= len(argv):
            raise OvpoolError("--bench-dir needs a directory")
        explicit = argv[i + 1]
        del argv[i : i + 2]
    package = load_benchmarks(find_benchmarks(explicit))
    run = importlib.import_module(f"{package.__name__}.run")
    return run.main(argv, prog="ovpool bench")
