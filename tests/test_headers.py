"""Every header of the kernel core compiles alone: a translation unit that
includes nothing but that header builds without an error or a warning, in
the baseline and the x86-64-v3 build (a header relying on an include another
one made before it fails here)."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

import ovpool

COMPILER = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
INCLUDE = Path(ovpool.get_include())
HEADERS = sorted(p.relative_to(INCLUDE).as_posix() for p in (INCLUDE / "ovpool").rglob("*.hpp"))
ISAS = [[]]
if platform.machine().lower() in ("x86_64", "amd64"):
    ISAS.append(["-march=x86-64-v3"])


def test_the_core_has_headers():
    assert "ovpool/ovpool.hpp" in HEADERS and len(HEADERS) > 5


@pytest.mark.skipif(COMPILER is None, reason="no C++ compiler")
@pytest.mark.parametrize("flags", ISAS, ids=lambda f: f[0] if f else "baseline")
@pytest.mark.parametrize("header", HEADERS)
def test_header_compiles_alone(header, flags, tmp_path):
    unit = tmp_path / "unit.cpp"
    unit.write_text(f'#include "{header}"\n')
    command = [
        COMPILER,
        "-std=c++17",
        "-fsyntax-only",
        "-Wall",
        "-Wextra",
        "-Werror",
        *flags,
        "-I",
        str(INCLUDE),
        str(unit),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
