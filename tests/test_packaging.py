"""How ovpool is built: the wheel's extension library is built against the
OpenVINO release series the ``openvino`` extra pins, and a build without
OpenVINO (or with the library switched off) still builds ovpool and says how
to get the library. Skipped where the tests run without the checkout's
``pyproject.toml`` and ``setup.py``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
tomllib = pytest.importorskip("tomllib")
requirements = pytest.importorskip("packaging.requirements")


def _pyproject():
    path = ROOT / "pyproject.toml"
    if not path.is_file():
        pytest.skip("no pyproject.toml beside the tests")
    return tomllib.loads(path.read_text())


def _openvino(requirement_list):
    found = [r for r in map(requirements.Requirement, requirement_list) if r.name == "openvino"]
    assert len(found) == 1, requirement_list
    return found[0]


def test_the_wheel_pins_the_openvino_it_builds_against():
    project = _pyproject()
    built = _openvino(project["build-system"]["requires"])
    extra = _openvino(project["project"]["optional-dependencies"]["openvino"])
    assert str(built.specifier) == str(extra.specifier)
    # one release series (~=X.Y.Z.0: X.Y.Z and its post-releases), the library's ABI
    (spec,) = extra.specifier
    assert spec.operator == "~=" and spec.version.count(".") == 3, spec
    for extra_name in ("test", "bench"):
        assert "ovpool[openvino]" in project["project"]["optional-dependencies"][extra_name]


BLOCK_OPENVINO = textwrap.dedent("""
    import runpy, sys

    class BlockOpenVINO:
        def find_spec(self, name, path=None, target=None):
            if name == "openvino" or name.startswith("openvino."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, BlockOpenVINO())
    sys.argv = ["setup.py", "-q", "build_openvino"]
    runpy.run_path("setup.py", run_name="__main__")
""")


@pytest.mark.parametrize("why", ["no openvino", "switched off"])
def test_a_build_without_the_library_says_how_to_get_it(why):
    if not (ROOT / "setup.py").is_file():
        pytest.skip("no setup.py beside the tests")
    pytest.importorskip("Cython")
    env = dict(os.environ)
    if why == "switched off":
        env["OVPOOL_NO_OPENVINO_LIBRARY"] = "1"
        code = BLOCK_OPENVINO.replace("sys.meta_path.insert(0, BlockOpenVINO())", "")
    else:
        env.pop("OVPOOL_NO_OPENVINO_LIBRARY", None)
        code = BLOCK_OPENVINO
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "building without the OpenVINO extension library" in result.stderr
    assert "python -m ovpool.openvino build" in result.stderr
    reason = (
        "OVPOOL_NO_OPENVINO_LIBRARY is set"
        if why == "switched off"
        else "OpenVINO is not installed in the build environment"
    )
    assert reason in result.stderr


def test_a_library_built_before_is_refused_unless_its_record_matches(tmp_path):
    """OVPOOL_OPENVINO_LIBRARY_DIR (tools/build_wheels.py's one library for
    every wheel) is taken only when its record names these sources and the
    build's OpenVINO release: never silently rebuilt, never mixed."""
    if not (ROOT / "setup.py").is_file():
        pytest.skip("no setup.py beside the tests")
    pytest.importorskip("Cython")
    openvino = pytest.importorskip("openvino")
    release = openvino.get_version().split("-")[0]
    (tmp_path / "libovpool_openvino.so").write_bytes(b"not a library")
    record = {"openvino_release": release, "sources": "0" * 64, "python": "3.x"}
    (tmp_path / "libovpool_openvino.json").write_text(json.dumps(record))
    env = {**os.environ, "OVPOOL_OPENVINO_LIBRARY_DIR": str(tmp_path)}
    env.pop("OVPOOL_NO_OPENVINO_LIBRARY", None)
    code = BLOCK_OPENVINO.replace("sys.meta_path.insert(0, BlockOpenVINO())", "")
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode != 0
    assert f"was built against OpenVINO {release} from sources 000000000000" in result.stderr


def test_the_guides_name_the_pinned_release():
    """The install guide and the OpenVINO guide say which OpenVINO the wheel's
    library is for; a new pin updates them."""
    extra = _openvino(_pyproject()["project"]["optional-dependencies"]["openvino"])
    (spec,) = extra.specifier
    release = spec.version.rsplit(".", 1)[0]  # 2026.4.1.0 -> 2026.4.1
    for guide in ("install.md", "openvino.md", "serving.md"):
        text = (ROOT / "docs" / "guide" / guide).read_text()
        assert f"openvino~={spec.version}" in text, guide
        assert f"OpenVINO {release}" in text, guide


def test_the_wheels_built_are_the_pythons_the_classifiers_list():
    """cibuildwheel builds, and requires-python starts at, the CPython
    versions the classifiers list (tools/build_wheels.py reads the same
    classifiers)."""
    project = _pyproject()
    listed = [
        m[1]
        for c in project["project"]["classifiers"]
        if (m := re.fullmatch(r"Programming Language :: Python :: (3\.\d+)", c))
    ]
    assert listed, project["project"]["classifiers"]
    built = project["tool"]["cibuildwheel"]["build"]
    assert built == [f"cp{v.replace('.', '')}-*" for v in listed]
    assert project["project"]["requires-python"] == f">={listed[0]}"
