"""The C++ kernel core as others use it, and the path each shape takes.

* A C++ program built with the system compiler (no Python headers) includes
  the headers and checks an adaptive average and max pooling with indices
  against hand-computed values, in the baseline and x86-64-v3 builds.
* Every kernel template compiles without a warning under -Wall -Wextra.
* A third-party Cython module, built from a temporary folder, cimports
  ``ovpool.kernels`` and calls pools inside its own ``nogil`` code; its
  results equal ovpool's own functions'.
* The kernel path chosen for the shapes each path exists for.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

import ovpool
from ovpool import _core

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPP = os.path.join(ROOT, "tests", "cpp")
COMPILER = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")


def _v3_cpu():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(line for line in f if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return False
    return {"avx2", "f16c", "fma", "bmi2"} <= set(flags)


ISAS = [[]] + ([["-march=x86-64-v3"]] if _v3_cpu() else [])
needs_compiler = pytest.mark.skipif(COMPILER is None, reason="no C++ compiler")


def _compile(sources, output, flags):
    command = [
        COMPILER,
        "-std=c++17",
        "-O2",
        "-Wall",
        "-Wextra",
        "-Werror",
        *flags,
        "-I",
        ovpool.get_include(),
        *sources,
        "-o",
        output,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]


@needs_compiler
@pytest.mark.parametrize("flags", ISAS, ids=lambda f: f[0] if f else "baseline")
def test_cpp_program_on_the_headers_alone(flags, tmp_path):
    program = str(tmp_path / "core_test")
    _compile([os.path.join(CPP, "core_test.cpp")], program, flags)
    result = subprocess.run([program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "ok"


@needs_compiler
@pytest.mark.parametrize("flags", ISAS, ids=lambda f: f[0] if f else "baseline")
def test_every_kernel_compiles_without_warnings(flags, tmp_path):
    _compile(["-c", os.path.join(CPP, "instantiate_all.cpp")], str(tmp_path / "all.o"), flags)


def test_get_include_holds_the_headers_and_the_pxd():
    include = ovpool.get_include()
    assert os.path.isfile(os.path.join(include, "ovpool", "ovpool.hpp"))
    assert os.path.isfile(os.path.join(os.path.dirname(ovpool.__file__), "kernels.pxd"))


THIRD_PARTY = '''
# distutils: language = c++
# cython: language_level=3, boundscheck=False, wraparound=False
"""A third-party module calling ovpool's kernels from its own nogil code."""
from libc.stdint cimport int64_t
from ovpool cimport kernels
import numpy as np


def adaptive_avg(float[:, :, :, ::1] x, int oh, int ow):
    out = np.empty((x.shape[0], x.shape[1], oh, ow), np.float32)
    cdef float[:, :, :, ::1] o = out
    cdef int status
    with nogil:
        status = kernels.adaptive_avg_pool2d(x, o)
    if status != kernels.kOk:
        raise ValueError(status)
    return out


def max_with_indices(double[:, :, :, ::1] x, int k, int s, int p):
    cdef kernels.Window w = kernels.window2d(k, k, s, s, p, p)
    cdef kernels.Shape shape = kernels.shape2d(x.shape[0], x.shape[1], x.shape[2], x.shape[3])
    cdef int64_t size[2]
    if kernels.pool_output_size(shape, w, size) != kernels.kOk:
        raise ValueError("does not fit")
    out = np.empty((x.shape[0], x.shape[1], size[0], size[1]), np.float64)
    indices = np.empty(out.shape, np.int64)
    cdef double[:, :, :, ::1] o = out
    cdef int64_t[:, :, :, ::1] i = indices
    cdef int status
    with nogil:
        status = kernels.max_pool2d_with_indices(x, w, o, i)
    if status != kernels.kOk:
        raise ValueError(status)
    return out, indices


def lp_pool_3d(float[:, :, :, :, ::1] x, int k, double p):
    cdef kernels.Shape shape
    cdef kernels.Window w
    cdef int64_t size[3]
    cdef int a
    shape.n = x.shape[0]
    shape.c = x.shape[1]
    shape.n_spatial = 3
    for a in range(3):
        shape.spatial[a] = x.shape[2 + a]
        w.kernel[a] = k
        w.strides[a] = k
    if kernels.pool_output_size(shape, w, size) != kernels.kOk:
        raise ValueError("does not fit")
    out = np.empty((x.shape[0], x.shape[1], size[0], size[1], size[2]), np.float32)
    cdef float[:, :, :, :, ::1] o = out
    cdef int status
    with nogil:
        status = kernels.lp_pool[float](&x[0, 0, 0, 0, 0], shape, w, p, &o[0, 0, 0, 0, 0])
    if status != kernels.kOk:
        raise ValueError(status)
    return out


def refused():
    """A window larger than the padded input: a status, not a crash."""
    cdef kernels.Shape shape = kernels.shape2d(1, 1, 4, 4)
    cdef kernels.Window w = kernels.window2d(9, 9, 1, 1, 0, 0)
    cdef float x[16]
    cdef float y[1]
    cdef int status
    with nogil:
        status = kernels.avg_pool[float](x, shape, w, False, y)
    return status
'''

SETUP = """
import ovpool
from Cython.Build import cythonize
from setuptools import Extension, setup
ext = Extension("thirdparty", ["thirdparty.pyx"], language="c++",
                include_dirs=[ovpool.get_include()], extra_compile_args=["-std=c++17", "-O1"])
setup(name="thirdparty", ext_modules=cythonize([ext], quiet=True),
      script_args=["build_ext", "--inplace"])
"""


@needs_compiler
def test_third_party_cython_module_cimports_the_kernels(tmp_path):
    pytest.importorskip("Cython")
    (tmp_path / "thirdparty.pyx").write_text(textwrap.dedent(THIRD_PARTY))
    (tmp_path / "setup.py").write_text(textwrap.dedent(SETUP))
    env = dict(os.environ)
    # Cython finds ovpool/kernels.pxd on sys.path, as it finds numpy's .pxd
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    build = subprocess.run(
        [sys.executable, "setup.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert build.returncode == 0, build.stderr[-4000:]
    check = textwrap.dedent("""
        import numpy as np, ovpool, thirdparty
        rng = np.random.default_rng(5)
        x = rng.standard_normal((2, 3, 30, 30)).astype(np.float32)
        assert np.array_equal(thirdparty.adaptive_avg(x, 7, 5), ovpool.adaptive_avg_pool(x, (7, 5)))
        y = np.round(rng.standard_normal((2, 3, 17, 19)) * 2)
        got = thirdparty.max_with_indices(y, 3, 2, 1)
        want = ovpool.max_pool(y, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1), return_indices=True)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        z = rng.standard_normal((1, 2, 6, 8, 10)).astype(np.float32)
        assert np.array_equal(thirdparty.lp_pool_3d(z, 2, 3.0),
                              ovpool.lp_pool(z, (2, 2, 2), strides=(2, 2, 2), p=3.0))
        assert thirdparty.refused() == -1
        print("ok")
    """)
    result = subprocess.run(
        [sys.executable, "-c", check],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"


# -- the kernel path of each shape -------------------------------------------------

RNG = np.random.default_rng(11)
V3 = ovpool._isa.kernels.float16_in_registers()  # the builds with AVX2 and F16C


def _x(shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


PATH_CASES = [
    # (name, call, expected path)
    ("global average", lambda: ovpool.global_avg_pool(_x((2, 3, 7, 7))), "global"),
    ("global max int8", lambda: ovpool.global_max_pool(_x((2, 3, 5), np.int8)), "global"),
    ("global Lp float16", lambda: ovpool.global_lp_pool(_x((2, 3, 9, 9), np.float16)), "global"),
    ("adaptive 28->7: tiles", lambda: ovpool.adaptive_avg_pool(_x((2, 8, 28, 28)), 7), "tiles"),
    ("2x2 s2 max", lambda: ovpool.max_pool(_x((2, 3, 16, 16)), (2, 2), strides=(2, 2)), "tiles"),
    (
        "tiles float16",
        lambda: ovpool.avg_pool(_x((2, 3, 16, 16), np.float16), (2, 2), strides=(2, 2)),
        "tiles",
    ),
    (
        "3x3 s2 p1 max",
        lambda: ovpool.max_pool(_x((2, 3, 40, 40)), (3, 3), strides=(2, 2), pads=(1, 1, 1, 1)),
        "rows.runs",
    ),
    (
        "3x3 s1 average",
        lambda: ovpool.avg_pool(_x((2, 3, 26, 26)), (3, 3), pads=(1,) * 4),
        "rows.runs",
    ),
    (
        "3x3 s1 average on 24x24: blocked",
        lambda: ovpool.avg_pool(_x((2, 3, 24, 24)), (3, 3), pads=(1,) * 4),
        "blocked",
    ),
    (
        "5x5 s1 max on 80x80: blocked, its columns pooled once",
        lambda: ovpool.max_pool(_x((2, 3, 80, 80)), (5, 5)),
        "blocked",
    ),
    (
        "5x5 s1 max on 81x81: rows",
        lambda: ovpool.max_pool(_x((2, 3, 81, 81)), (5, 5)),
        "rows.runs",
    ),
    (
        "float16 5x5 s1 max on 112x112: blocked, its columns pooled once",
        lambda: ovpool.max_pool(_x((2, 3, 112, 112), np.float16), (5, 5)),
        "blocked",
    ),
    (
        "7x7 s3 max on 160x160: blocked, its columns pooled once",
        lambda: ovpool.max_pool(_x((1, 8, 160, 160)), (7, 7), strides=(3, 3)),
        "blocked",
    ),
    (
        "9x9 s3 max on 160x160: rows",
        lambda: ovpool.max_pool(_x((1, 8, 160, 160)), (9, 9), strides=(3, 3)),
        "rows.runs",
    ),
    (
        "3x3 s1 max on 25x25 (few taps to share a column's): rows",
        lambda: ovpool.max_pool(_x((2, 3, 25, 25)), (3, 3), pads=(1,) * 4),
        "rows.runs",
    ),
    (
        "float64 5x5 s1 max on 20x20: rows",
        lambda: ovpool.max_pool(_x((2, 3, 20, 20), np.float64), (5, 5)),
        "rows.separable",
    ),
    (
        "3D max 3x3x3 s1 on 28x28 slices: blocked, its columns pooled once",
        lambda: ovpool.max_pool(_x((1, 8, 8, 28, 28)), (3, 3, 3), pads=(1,) * 6),
        "blocked",
    ),
    (
        "3D max 3x3x3 s1 on 29x29 slices: the depth slab",
        lambda: ovpool.max_pool(_x((1, 8, 8, 29, 29)), (3, 3, 3), pads=(1,) * 6),
        "rows.depth_slab",
    ),
    (
        "3x3 s2 L2 norm",
        lambda: ovpool.lp_pool(_x((2, 3, 40, 40)), (3, 3), p=2, strides=(2, 2)),
        "rows.runs",
    ),
    (
        "3x3 s2 L3 norm",
        lambda: ovpool.lp_pool(_x((2, 3, 40, 40)), (3, 3), p=3, strides=(2, 2)),
        "rows.runs",
    ),
    (
        "2x2 s1 max, dilated",
        lambda: ovpool.max_pool(_x((2, 3, 26, 26)), (2, 2), dilations=(2, 2)),
        "rows.runs",
    ),
    (
        "windows of 17 rows: rows",
        lambda: ovpool.avg_pool(_x((2, 3, 20, 40)), (17, 3)),
        "rows.separable",
    ),
    (
        "3x3 s2 on 4x64x112x112, prefetched: rows",
        lambda: ovpool.max_pool(_x((4, 64, 112, 112)), (3, 3), strides=(2, 2)),
        "rows.separable",
    ),
    (
        "3x3 s3 p1 max on 112x112: blocked",
        lambda: ovpool.max_pool(_x((2, 8, 112, 112)), (3, 3), strides=(3, 3), pads=(1,) * 4),
        "blocked",
    ),
    (
        "3x3 s3 p1 max on 449x448: rows",
        lambda: ovpool.max_pool(_x((1, 8, 449, 448)), (3, 3), strides=(3, 3), pads=(1,) * 4),
        "rows.separable",
    ),
    (
        "float16 3x3 s2 p1 max on 8 planes of 56x56: blocked",
        lambda: ovpool.max_pool(
            _x((1, 8, 56, 56), np.float16), (3, 3), strides=(2, 2), pads=(1,) * 4
        ),
        "blocked",
    ),
    (
        "float16 3x3 s2 p1 max on 8 planes of 57x57: rows",
        lambda: ovpool.max_pool(
            _x((1, 8, 57, 57), np.float16), (3, 3), strides=(2, 2), pads=(1,) * 4
        ),
        "rows.separable",
    ),
    (
        "float16 3x3 s2 p1 max on 16 planes of 112x112, as keys: blocked",
        lambda: ovpool.max_pool(
            _x((1, 16, 112, 112), np.float16), (3, 3), strides=(2, 2), pads=(1,) * 4
        ),
        "blocked",
    ),
    (
        "float16 5x5 s1 max on 16 1D rows of 1000, as keys: blocked",
        lambda: ovpool.max_pool(_x((1, 16, 1000), np.float16), (5,)),
        "blocked",
    ),
    (
        "float16 3x3 s2 max on 16 1D rows of 4096: rows",
        lambda: ovpool.max_pool(_x((1, 16, 4096), np.float16), (3,), strides=(2,)),
        "rows.separable",
    ),
    (
        "float16 3x3 s2 average on 71x71 planes: blocked",
        lambda: ovpool.avg_pool(_x((1, 16, 71, 71), np.float16), (3, 3), strides=(2, 2)),
        "blocked",
    ),
    (
        "bfloat16 3x3 s2 average on 71x71 planes: rows",
        lambda: ovpool.avg_pool(_x((1, 16, 71, 71), ml_dtypes.bfloat16), (3, 3), strides=(2, 2)),
        "rows.separable",
    ),
    (
        "float16 3x3 s2 max on 16 1D rows of 1000: blocked",
        lambda: ovpool.max_pool(_x((1, 16, 1000), np.float16), (3,), strides=(2,)),
        "blocked",
    ),
    (
        "float16 5x5 s3 max on 16 1D rows of 4096: blocked",
        lambda: ovpool.max_pool(_x((1, 16, 4096), np.float16), (5,), strides=(3,)),
        "blocked",
    ),
    (
        "float16 3x3 s2 average on 16 1D rows of 4096: blocked",
        lambda: ovpool.avg_pool(_x((1, 16, 4096), np.float16), (3,), strides=(2,)),
        "blocked",
    ),
    (
        "bfloat16 5x5 s3 max on 16 1D rows of 1024: blocked",
        lambda: ovpool.max_pool(_x((1, 16, 1024), ml_dtypes.bfloat16), (5,), strides=(3,)),
        "blocked",
    ),
    (
        "bfloat16 3x3 s2 average on 16 1D rows of 1024: rows",
        lambda: ovpool.avg_pool(_x((1, 16, 1024), ml_dtypes.bfloat16), (3,), strides=(2,)),
        "rows.separable",
    ),
    (
        "float16 3x3 s1 max with indices on 16 planes of 56x56, as keys: blocked",
        lambda: ovpool.max_pool(_x((1, 16, 56, 56), np.float16), (3, 3), return_indices=True),
        "blocked",
    ),
    (
        "float16 3x3 s1 max with indices on 8 planes of 56x56: argmax",
        lambda: ovpool.max_pool(_x((1, 8, 56, 56), np.float16), (3, 3), return_indices=True),
        "argmax.tables",
    ),
    (
        "float16 3x3 s3 max with indices on 16 1D rows of 1000: blocked",
        lambda: ovpool.max_pool(
            _x((1, 16, 1000), np.float16), (3,), strides=(3,), return_indices=True
        ),
        "blocked",
    ),
    (
        "float16 3x3 s1 max with indices on 16 1D rows of 1000: argmax",
        lambda: ovpool.max_pool(_x((1, 16, 1000), np.float16), (3,), return_indices=True),
        "argmax.tables",
    ),
    (
        "float16 3x3 s2 p1 average on 16 planes of 56x56: blocked",
        lambda: ovpool.avg_pool(
            _x((2, 8, 56, 56), np.float16), (3, 3), strides=(2, 2), pads=(1,) * 4
        ),
        "blocked",
    ),
    (
        "float16 3x3 s2 p1 average on 4 planes of 112x112: rows",
        lambda: ovpool.avg_pool(
            _x((1, 4, 112, 112), np.float16), (3, 3), strides=(2, 2), pads=(1,) * 4
        ),
        "rows.separable",
    ),
    (
        "3x3 s3 p1 average on 112x112: rows",
        lambda: ovpool.avg_pool(_x((2, 8, 112, 112)), (3, 3), strides=(3, 3), pads=(1,) * 4),
        "rows.separable",
    ),
    (
        "3x3 s1 on 4x64x112x112, prefetched: the narrow run kernel",
        lambda: ovpool.max_pool(_x((4, 64, 112, 112)), (3, 3), pads=(1,) * 4),
        "rows.runs",
    ),
    (
        "4x4 s1 on 4x64x112x112, prefetched: rows",
        lambda: ovpool.max_pool(_x((4, 64, 112, 112)), (4, 4)),
        "rows.separable",
    ),
    (
        "3x3 float64: rows",
        lambda: ovpool.max_pool(_x((2, 3, 17, 17), np.float64), (3, 3)),
        "rows.separable",
    ),
    (
        "5x5 s2 average",
        lambda: ovpool.avg_pool(_x((2, 3, 100, 100)), (5, 5), strides=(2, 2)),
        "rows.runs",
    ),
    (
        "adaptive 60->14: narrow bins",
        lambda: ovpool.adaptive_avg_pool(_x((2, 3, 60, 60)), 14),
        "rows.narrow_bins" if V3 else "rows.separable",
    ),
    (
        "adaptive 50->7: wide bins",
        lambda: ovpool.adaptive_avg_pool(_x((2, 3, 50, 50)), 7),
        "rows.wide_bins",
    ),
    (
        "adaptive 7->6 float16: bins of one size at a step of 1",
        lambda: ovpool.adaptive_avg_pool(_x((2, 8, 7, 7), np.float16), (6, 7)),
        "blocked",
    ),
    (
        "adaptive max 50->7 with indices: bins of 8 at a step of 7",
        lambda: ovpool.adaptive_max_pool(_x((2, 8, 50, 50)), 7),
        "blocked",
    ),
    (
        "adaptive 30->7 float16: unequal bins in lanes",
        lambda: ovpool.adaptive_avg_pool(_x((2, 8, 30, 30), np.float16), 7),
        "blocked",
    ),
    (
        "adaptive 100->7 float16: unequal bins on a plane up to 10000, in lanes",
        lambda: ovpool.adaptive_avg_pool(_x((2, 8, 100, 100), np.float16), 7),
        "blocked",
    ),
    (
        "3D max 3x3x3 s2: slab",
        lambda: ovpool.max_pool(_x((1, 2, 9, 24, 24)), (3, 3, 3), strides=(2, 2, 2)),
        "rows.depth_slab",
    ),
    (
        "3D average, slices too large for the slab",
        lambda: ovpool.avg_pool(_x((1, 1, 4, 200, 200)), (2, 2, 2), strides=(2, 2, 2)),
        "rows.depth_slices",
    ),
    (
        "3D Lp: rows",
        lambda: ovpool.lp_pool(_x((1, 2, 9, 24, 24)), (3, 3, 3), p=2),
        "rows.separable",
    ),
    (
        "adaptive 1D 128->30: unequal bins in lanes",
        lambda: ovpool.adaptive_avg_pool(_x((2, 8, 128)), 30),
        "blocked",
    ),
    (
        "adaptive 1D 512->30: rows over 256",
        lambda: ovpool.adaptive_avg_pool(_x((2, 8, 512)), 30),
        "rows.separable",
    ),
    (
        "adaptive 14x17->9x12: W bins of two sizes, outputs grouped by list",
        lambda: ovpool.adaptive_avg_pool(_x((2, 8, 14, 17)), (9, 12)),
        "blocked",
    ),
    (
        "adaptive 38x38->7x7: planes over 1024, W bins under 8 taps",
        lambda: ovpool.adaptive_avg_pool(_x((2, 8, 38, 38)), 7),
        "rows.narrow_bins" if V3 else "rows.separable",
    ),
    (
        "adaptive 29->4: bins of 8 at a step of 7 on a plane under 1024",
        lambda: ovpool.adaptive_avg_pool(_x((2, 8, 29, 29)), 4),
        "blocked",
    ),
    (
        "adaptive 36->5: bins of 8 at a step of 7 on a plane over 1024",
        lambda: ovpool.adaptive_avg_pool(_x((2, 8, 36, 36)), 5),
        "rows.wide_bins",
    ),
    (
        "adaptive 7x7->4x7: bins along H only, a tap list a row",
        lambda: ovpool.adaptive_avg_pool(_x((2, 8, 7, 7)), (4, 7)),
        "blocked",
    ),
    (
        "adaptive 40x40->9x20: bins along H only on a plane over 1024",
        lambda: ovpool.adaptive_avg_pool(_x((2, 8, 40, 40)), (9, 20)),
        "rows.runs",
    ),
    (
        "adaptive max 1D 1000->7 with indices: bins in lanes",
        lambda: ovpool.adaptive_max_pool(_x((2, 8, 1000)), 7),
        "blocked",
    ),
    (
        "adaptive max 1D 1000->3 with indices: 334 taps, spans",
        lambda: ovpool.adaptive_max_pool(_x((2, 8, 1000)), 3),
        "argmax.tables",
    ),
    (
        "adaptive max 1D float64 512->3 with indices: 171 taps, spans",
        lambda: ovpool.adaptive_max_pool(_x((2, 8, 512), np.float64), 3),
        "argmax.tables",
    ),
    (
        "adaptive max 38->3 with indices: bins in lanes",
        lambda: ovpool.adaptive_max_pool(_x((2, 8, 38, 38)), 3),
        "blocked",
    ),
    (
        "adaptive max 100->7 with indices: planes over 4096, by columns",
        lambda: ovpool.adaptive_max_pool(_x((2, 8, 100, 100)), 7),
        "argmax.tables",
    ),
    (
        "max 3x3 s2 p1 with indices on 32x32: 14 interior outputs a row, blocked",
        lambda: ovpool.max_pool(
            _x((2, 8, 32, 32)), (3, 3), strides=(2, 2), pads=(1, 1, 1, 1), return_indices=True
        ),
        "blocked",
    ),
    (
        "max 3x3 s2 p1 with indices on 56x56: the vector rows",
        lambda: ovpool.max_pool(
            _x((2, 8, 56, 56)), (3, 3), strides=(2, 2), pads=(1, 1, 1, 1), return_indices=True
        ),
        "argmax.tables",
    ),
    (
        "max 3x3 s2 with indices on 33x33: 16 outputs a row, every one inside",
        lambda: ovpool.max_pool(_x((2, 8, 33, 33)), (3, 3), strides=(2, 2), return_indices=True),
        "argmax.tables",
    ),
    (
        "max 3x3x3 s2 with indices: depth taps, blocked",
        lambda: ovpool.max_pool(
            _x((1, 8, 8, 56, 56)), (3, 3, 3), strides=(2, 2, 2), return_indices=True
        ),
        "blocked",
    ),
    (
        "1D max 5 s3 with indices on rows of 100: blocked",
        lambda: ovpool.max_pool(_x((2, 8, 100)), (5,), strides=(3,), return_indices=True),
        "blocked",
    ),
    (
        "1D max 2 s1 with indices on rows of 1000: argmax",
        lambda: ovpool.max_pool(_x((2, 8, 1000)), (2,), strides=(1,), return_indices=True),
        "argmax.tables",
    ),
    (
        "float16 adaptive 3D 10x28x28->10x6x9: bins in lanes",
        lambda: ovpool.adaptive_avg_pool(_x((1, 8, 10, 28, 28), np.float16), (10, 6, 9)),
        "blocked",
    ),
    (
        "float16 adaptive 110x100->7x6: unequal bins on a plane over 10000, rows",
        lambda: ovpool.adaptive_avg_pool(_x((1, 8, 110, 100), np.float16), (7, 6)),
        "rows.separable",
    ),
    (
        "adaptive max 60->20 with indices",
        lambda: ovpool.adaptive_max_pool(_x((2, 3, 60, 60)), 20),
        "argmax.tables",
    ),
    (
        "adaptive max 64->16 with indices: tiles",
        lambda: ovpool.adaptive_max_pool(_x((2, 3, 64, 64)), 16),
        "argmax.tiles",
    ),
    (
        "max 2x2 with int32 indices: tiles",
        lambda: ovpool.adaptive_max_pool(_x((2, 3, 64, 64)), 32, index_dtype=np.int32),
        "argmax.tiles",
    ),
    (
        "max with indices float64",
        lambda: ovpool.adaptive_max_pool(_x((2, 3, 64, 64), np.float64), 16),
        "argmax.tables",
    ),
    (
        "max with indices float16",
        lambda: ovpool.max_pool(_x((2, 3, 40, 40), np.float16), (3, 3), return_indices=True),
        "argmax.tables",
    ),
    (
        "7x7 planes: blocked",
        lambda: ovpool.max_pool(_x((4, 64, 7, 7)), (4, 4), strides=(2, 2)),
        "blocked",
    ),
    (
        "8x8 tilings 2x2: the tile kernel's vector rows",
        lambda: ovpool.max_pool(_x((2, 3, 8, 8)), (2, 2), strides=(2, 2)),
        "tiles",
    ),
    (
        "6x6 tilings 2x2, rows of 3 outputs: blocked",
        lambda: ovpool.max_pool(_x((2, 3, 6, 6)), (2, 2), strides=(2, 2)),
        "blocked",
    ),
    (
        "24x24 tilings 3x3: blocked",
        lambda: ovpool.avg_pool(_x((2, 3, 24, 24)), (3, 3), strides=(3, 3)),
        "blocked",
    ),
    (
        "44x44 tilings 3x3: blocked",
        lambda: ovpool.max_pool(_x((2, 3, 44, 44)), (3, 3), strides=(3, 3)),
        "blocked",
    ),
    (
        "45x45 tilings 3x3: tiles",
        lambda: ovpool.max_pool(_x((2, 3, 45, 45)), (3, 3), strides=(3, 3)),
        "tiles",
    ),
    (
        "float32 1D 3-wide tilings: tiles",
        lambda: ovpool.max_pool(_x((2, 8, 500)), (3,), strides=(3,)),
        "tiles",
    ),
    (
        "float32 1D 3-wide tiling averages of 64: tiles",
        lambda: ovpool.avg_pool(_x((2, 8, 64)), (3,), strides=(3,)),
        "tiles",
    ),
    (
        "float16 1D 3-wide tilings: blocked (keys)",
        lambda: ovpool.max_pool(_x((2, 8, 500), np.float16), (3,), strides=(3,)),
        "blocked",
    ),
    (
        "2x2 tilings of 7x8 planes (odd rows: no merge): blocked",
        lambda: ovpool.max_pool(_x((2, 4, 7, 8)), (2, 2), strides=(2, 2)),
        "blocked",
    ),
    (
        "2x2 tilings of 13x12 planes (odd rows: no merge): blocked",
        lambda: ovpool.avg_pool(_x((2, 4, 13, 12)), (2, 2), strides=(2, 2)),
        "blocked",
    ),
    (
        "2x2 tilings of 13x16 planes (odd rows: no merge): tiles",
        lambda: ovpool.avg_pool(_x((2, 4, 13, 16)), (2, 2), strides=(2, 2)),
        "tiles",
    ),
    (
        "float16 2x2 tilings of 19x20 planes (odd rows: no merge): blocked",
        lambda: ovpool.max_pool(_x((2, 4, 19, 20), np.float16), (2, 2), strides=(2, 2)),
        "blocked",
    ),
    (
        "float16 2x2 tilings of 21x20 planes (odd rows: no merge): tiles",
        lambda: ovpool.max_pool(_x((2, 4, 21, 20), np.float16), (2, 2), strides=(2, 2)),
        "tiles",
    ),
    (
        "4x4 tilings of 19x20 planes (no merge): blocked",
        lambda: ovpool.max_pool(_x((2, 4, 19, 20)), (4, 4), strides=(4, 4)),
        "blocked",
    ),
    (
        "4x4 tilings of 23x20 planes (no merge): tiles",
        lambda: ovpool.max_pool(_x((2, 4, 23, 20)), (4, 4), strides=(4, 4)),
        "tiles",
    ),
    (
        "float64 6x6 tilings: tiles",
        lambda: ovpool.max_pool(_x((2, 3, 6, 6), np.float64), (2, 2), strides=(2, 2)),
        "tiles",
    ),
    (
        "3D pooled along D on 14x14 slices: blocked",
        lambda: ovpool.max_pool(_x((1, 8, 16, 14, 14)), (2, 2, 2), strides=(3, 3, 3)),
        "blocked",
    ),
    (
        "3D pooled along D on 28x28 slices: the depth slab",
        lambda: ovpool.max_pool(_x((1, 8, 16, 28, 28)), (2, 2, 2), strides=(3, 3, 3)),
        "rows.depth_slab",
    ),
    (
        "rows of under 8 outputs: blocked",
        lambda: ovpool.avg_pool(_x((2, 3, 30, 30)), (5, 5), strides=(4, 4)),
        "blocked",
    ),
    (
        "indices on 14x13: blocked",
        lambda: ovpool.max_pool(_x((2, 8, 14, 13)), (3, 3), strides=(3, 3), return_indices=True),
        "blocked",
    ),
    (
        "3D 4x14x14 float16: blocked",
        lambda: ovpool.avg_pool(_x((1, 8, 4, 14, 14), np.float16), (3, 3, 3), strides=(3, 3, 3)),
        "blocked",
    ),
    (
        "5x5 s3 on 71x74: blocked",
        lambda: ovpool.max_pool(_x((1, 8, 71, 74)), (5, 5), strides=(3, 3), pads=(2,) * 4),
        "blocked",
    ),
    (
        "float16 13x13: blocked",
        lambda: ovpool.avg_pool(_x((2, 16, 13, 13), np.float16), (3, 3)),
        "blocked",
    ),
    ("1D rows of 100: rows_run", lambda: ovpool.avg_pool(_x((2, 3, 100)), (3,)), "rows.runs"),
    (
        "float16 stride-1 windows on mid planes: blocked",
        lambda: ovpool.avg_pool(_x((2, 3, 17, 17), np.float16), (3, 3)),
        "blocked",
    ),
    (
        "float16 rows",
        lambda: ovpool.avg_pool(_x((2, 3, 70, 70), np.float16), (3, 3)),
        "rows.separable",
    ),
]


@pytest.mark.parametrize("name, call, path", PATH_CASES, ids=[c[0] for c in PATH_CASES])
def test_each_path_is_chosen_for_its_shapes(name, call, path):
    _core._cache.clear()
    call()
    plans = _core.cached_plans()
    assert len(plans) == 1, plans
    assert plans[0].kernel == path, (name, plans[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_one_row_argmax_scans_wide_windows_as_torch_picks(dtype):
    """1D max with indices on windows wider than 8 (adaptive bins, a wide
    kernel): each window scanned in vectors (Plan::argmax_spans; float16 its
    widened plane), the first maximum and the last NaN, ties of +0 and -0
    and -inf included, as PyTorch picks them (float16 through float32, which
    holds its values exactly)."""
    torch = pytest.importorskip("torch")
    x = np.round(RNG.standard_normal((2, 5, 1000)) * 2) / 2
    x[0, 0, 3:40] = -0.0
    x[0, 1, :] = -np.inf
    x[1, 2, [7, 60, 61]] = np.nan
    x[1, 3, 100:140] = np.nan
    x = x.astype(dtype)
    _core._cache.clear()
    got = ovpool.adaptive_max_pool(x, 3)
    assert "each span scanned in vectors" in _core.cached_plans()[0].explain()
    want = torch.nn.functional.adaptive_max_pool1d(torch.from_numpy(x), 3, return_indices=True)
    np.testing.assert_array_equal(got[1], want[1].numpy())
    np.testing.assert_array_equal(
        got[0].view(f"u{x.itemsize}"), want[0].numpy().view(f"u{x.itemsize}")
    )
    got = ovpool.max_pool(x, (11,), strides=(40,), return_indices=True)
    want = torch.nn.functional.max_pool1d(torch.from_numpy(x), 11, 40, return_indices=True)
    planes = np.arange(10).reshape(2, 5, 1) * 1000  # ONNX's indices run over the whole tensor
    np.testing.assert_array_equal(got[1], want[1].numpy() + planes)
    np.testing.assert_array_equal(got[0], want[0].numpy())


def test_empty_calls_take_the_empty_path():
    _core._cache.clear()
    assert ovpool.max_pool(np.zeros((0, 3, 8, 8), np.float32), (2, 2)).shape == (0, 3, 7, 7)
    (plan,) = _core.cached_plans()
    assert plan.path == "empty"


def test_16_bit_inputs_with_too_much_scratch_are_widened_first(monkeypatch):
    """A float16 call whose per-thread scratch would pass the limit widens the
    input to float32 first and takes the float32 path: the same results."""
    x = _x((2, 3, 40, 40), np.float16)
    _core._cache.clear()
    want = ovpool.max_pool(x, (3, 3), strides=(2, 2), return_indices=True)
    monkeypatch.setitem(_core.TUNING, "half_scratch_limit", 0)
    _core._cache.clear()
    got = ovpool.max_pool(x, (3, 3), strides=(2, 2), return_indices=True)
    (plan,) = _core.cached_plans()
    assert plan.widen_input and plan.kernel == "argmax.tables"
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    _core._cache.clear()
