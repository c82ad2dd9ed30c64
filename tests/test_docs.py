"""The documentation: every docstring example runs and prints what it shows,
the public API is annotated, the performance page and README's table are
those the benchmark's results give, and the Sphinx site builds with warnings
as errors (skipped where Sphinx, numpydoc or MyST is not installed, or where
the tests run without the checkout's docs/)."""

from __future__ import annotations

import doctest
import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import ovpool
from ovpool import errors, ir, ov_ops

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _public():
    """(name, object) of every documented function, class and method."""
    found = {}
    for module in (ovpool, ov_ops, ir, errors):
        for name in module.__all__:
            obj = getattr(module, name)
            if callable(obj):
                found.setdefault(id(obj), (f"{module.__name__}.{name}", obj))
    for cls in (ir.Model, ir.Layer, ir.TensorInfo):
        for name, member in vars(cls).items():
            if (name == "__call__" or not name.startswith("_")) and (
                inspect.isfunction(member) or isinstance(member, property)
            ):
                found.setdefault(id(member), (f"ir.{cls.__name__}.{name}", member))
    return sorted(found.values(), key=lambda item: item[0])


PUBLIC = _public()
FUNCTIONS = [(n, f) for n, f in PUBLIC if inspect.isfunction(f)]


def test_the_public_api_is_all_here():
    names = {n for n, _ in PUBLIC}
    for expected in (
        "ovpool.max_pool",
        "ovpool.adaptive_avg_pool",
        "ovpool.ov_ops.max_pool",
        "ovpool.ir.read_model",
        "ir.Model.__call__",
        "ovpool.set_num_threads",
        "ovpool.IRError",
    ):
        assert expected in names


@pytest.mark.parametrize("name, obj", PUBLIC, ids=[n for n, _ in PUBLIC])
def test_docstring_examples_run(name, obj, monkeypatch):
    """Each example prints exactly what its docstring shows (from the checkout's
    root, where the IR examples live)."""
    monkeypatch.chdir(ROOT)
    target = obj.fget if isinstance(obj, property) else obj
    tests = [
        t for t in doctest.DocTestFinder(recurse=False).find(target, name, globs={}) if t.examples
    ]
    if not isinstance(obj, property):  # one-line properties need none
        assert tests, f"{name} has no Examples section"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


@pytest.mark.parametrize("name, fn", FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
def test_public_functions_are_annotated(name, fn):
    signature = inspect.signature(fn)
    missing = [
        p.name
        for p in signature.parameters.values()
        if p.annotation is inspect.Parameter.empty and p.name != "self"
    ]
    assert not missing, f"{name}: parameters without a type hint: {missing}"
    assert signature.return_annotation is not inspect.Signature.empty, f"{name}: no return type"


def test_the_package_is_marked_typed():
    assert (Path(ovpool.__file__).parent / "py.typed").is_file()


def _make_performance():
    path = DOCS / "make_performance.py"
    if not path.is_file():
        pytest.skip("no docs/ next to the tests (tests run from an installed copy)")
    spec = importlib.util.spec_from_file_location("_ovpool_make_performance", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_performance_page_and_readme_table_match_the_results():
    """docs/reference/performance.md and README's table are what the script
    writes from benchmarks/readme/ (run docs/make_performance.py after a run)."""
    assert _make_performance().main(["--check"]) == 0


def test_performance_numbers_come_from_the_csv():
    make = _make_performance()
    rows = {r["case"]: r for r in make.load_rows()}
    page = (DOCS / "reference" / "performance.md").read_text()
    row = rows["maxpool_indices"]
    assert f"| {make._ms(float(row['ovpool_ms']))} |" in page
    readme = (ROOT / "README.md").read_text()
    issue = [r for r in rows.values() if r["group"] == "issue"]
    assert len(issue) == 10
    for r in issue:
        assert f"| `{r['case']}` |" in readme


def test_docs_build_without_warnings(tmp_path):
    if not DOCS.is_dir():
        pytest.skip("no docs/ next to the tests")
    for module in ("sphinx", "numpydoc", "myst_parser"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-E",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            str(DOCS),
            str(tmp_path / "html"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-5000:]
