"""Build ovpool's compiled driver of the C++ kernel core.

The kernels are header-only C++17 (``src/ovpool/*.hpp``); the Cython driver
(``src/_driver.pxi``) is compiled as C++ and includes them. The headers are
also installed inside the package (``ovpool/include``, see
``ovpool.get_include()``) with ``ovpool/kernels.pxd``, for third-party Cython.

OpenMP is probed the way scikit-learn's setuptools-era build did it: compile,
link and *run* a tiny OpenMP program with the compiler that will build the
extension. If that works, ``-fopenmp`` goes on both the compile and the link
line; otherwise the kernels are built serial with a warning, unless
``OVPOOL_FAIL_NO_OPENMP=1`` turns the warning into an error.

Flags: ``-O3`` and ``-fno-wrapv`` (Python's default CFLAGS carry ``-fwrapv``,
which stops gcc from vectorising strided index arithmetic), and
``-ffp-contract=off`` so that no build fuses multiply-adds (every build gives
the same bits); ``-fvisibility=hidden``, so that the core's functions are
called directly, not through the PLT as symbols another library could
replace (a call per output row through the PLT made the ResNet stem 7%
slower); ``-falign-loops=32``, so that a short hot loop never straddles
a 32-byte fetch block by where the linker happened to place it (the
float16 row widening's five-instruction loop ran 1.3x slower, same
instructions, after an unrelated change moved it across a boundary). Never
``-march=native`` (the wheel must run on any x86-64)
and never ``-ffast-math`` (it breaks NaN propagation and reorders sums).
``OVPOOL_DEBUG_CYTHON=1`` turns Cython's bounds checks back on.

The extension modules are compiled side by side, as many at a time as
``OVPOOL_BUILD_PARALLEL`` says (scikit-learn's ``SKLEARN_BUILD_PARALLEL``),
by default as many as the CMake build of the extension library runs jobs
(the CPUs, at most 4); ``build_ext -j N`` overrides both.

ISA dispatch: the same driver (``src/_driver.pxi``) is compiled twice, as
``ovpool._kernels`` for baseline x86-64 and, on x86-64 with a compiler that
accepts it, as ``ovpool._kernels_v3`` with ``-march=x86-64-v3`` (AVX2);
``ovpool._isa`` picks one at import. ``OVPOOL_NO_V3_BUILD=1`` skips the
second build.

The OpenVINO extension library, ``libovpool_openvino.so``, is built by the
``build_openvino`` step (after ``build_ext``) with CMake against the
``openvino`` that ``pyproject.toml`` requires for the build, into
``ovpool/lib/`` of the wheel (of the source tree for an editable install).
Without OpenVINO at build time (``--no-build-isolation`` in an environment
without it), or with ``OVPOOL_NO_OPENVINO_LIBRARY=1``, the package is built
without it: the numpy API, the IR runtime and the command line work, and
``python -m ovpool.openvino build`` builds the library later.
``OVPOOL_OPENVINO_LIBRARY_DIR=DIR`` takes the library and its record from
DIR instead of building it, if the record says it was built from these
sources against the build environment's OpenVINO release (the library does
not depend on the Python version: ``tools/build_wheels.py`` builds it with
the first wheel and puts that one into every other).
"""

import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import ClassVar

import numpy as np
from Cython.Build import cythonize
from setuptools import Command, Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

OPENMP_FLAG = "-fopenmp"

_PROBE_SOURCE = textwrap.dedent(
    """
    #include <omp.h>
    #include <stdio.h>
    int main(void) {
        int n = 0;
        #pragma omp parallel num_threads(2) reduction(+:n)
        n += 1;
        printf("nthreads=%d\\n", n);
        return n == 2 ? 0 : 1;
    }
    """
)


def _openmp_works(compiler):
    """Compile, link and run an OpenMP program; True if it printed 2 threads."""
    tmp = tempfile.mkdtemp(prefix="ovpool_omp_probe_")
    cwd = os.getcwd()
    try:
        os.chdir(tmp)
        with open("probe.c", "w") as f:
            f.write(_PROBE_SOURCE)
        objects = compiler.compile(["probe.c"], extra_postargs=[OPENMP_FLAG])
        extra_link = os.environ.get("LDFLAGS", "").split()
        compiler.link_executable(objects, "probe", extra_postargs=[OPENMP_FLAG] + extra_link)
        output = subprocess.run(
            [os.path.join(tmp, "probe")], capture_output=True, text=True, timeout=60
        )
        return output.returncode == 0 and "nthreads=2" in output.stdout
    except Exception:  # any compile, link or run failure means "no OpenMP"
        return False
    finally:
        os.chdir(cwd)
        shutil.rmtree(tmp, ignore_errors=True)


def _compiler_accepts(compiler, flag):
    tmp = tempfile.mkdtemp(prefix="ovpool_flag_probe_")
    cwd = os.getcwd()
    try:
        os.chdir(tmp)
        with open("flag.c", "w") as f:
            f.write("int main(void) { return 0; }\n")
        compiler.compile(["flag.c"], extra_postargs=[flag])
        return True
    except Exception:
        return False
    finally:
        os.chdir(cwd)
        shutil.rmtree(tmp, ignore_errors=True)


class BuildExtWithOpenMP(build_ext):
    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:  # build_ext -j N wins
            jobs = os.environ.get(BUILD_PARALLEL, "").strip()
            self.parallel = int(jobs) if jobs else max(1, min(4, os.cpu_count() or 1))

    def build_extensions(self):
        v3 = [ext for ext in self.extensions if ext.name.endswith("_v3")]
        if v3 and not _compiler_accepts(self.compiler, V3_FLAG):
            print(
                f"WARNING: ovpool: the compiler rejects {V3_FLAG}; "
                "building the baseline kernels only.",
                file=sys.stderr,
            )
            self.extensions = [ext for ext in self.extensions if ext not in v3]
        use_openmp = _openmp_works(self.compiler)
        if not use_openmp:
            message = (
                "ovpool: the C compiler cannot build and run an OpenMP program; "
                "the kernels will be built SERIAL (single-threaded)."
            )
            if os.environ.get("OVPOOL_FAIL_NO_OPENMP", "0") not in ("", "0"):
                raise RuntimeError(message + " OVPOOL_FAIL_NO_OPENMP is set.")
            print("WARNING: " + message, file=sys.stderr)
        for ext in self.extensions:
            if use_openmp and ext.name != "ovpool._spec":
                ext.extra_compile_args.append(OPENMP_FLAG)
                ext.extra_link_args.append(OPENMP_FLAG)
        super().build_extensions()


BUILD_PARALLEL = "OVPOOL_BUILD_PARALLEL"
DEBUG = os.environ.get("OVPOOL_DEBUG_CYTHON", "0") not in ("", "0")

COMPILER_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "nonecheck": False,
    "cdivision": True,
    "profile": False,
    "embedsignature": True,
}

V3_FLAG = "-march=x86-64-v3"
COMMON_FLAGS = [
    "-std=c++17",
    "-O3",
    "-fno-wrapv",
    "-fno-math-errno",
    "-ffp-contract=off",
    "-fvisibility=hidden",
    "-falign-loops=32",
]
HEADERS = sorted(
    os.path.join(root, name)
    for root, _, files in os.walk(os.path.join("src", "ovpool"))
    for name in files
    if name.endswith(".hpp")
)


def _kernel_extension(name, extra_flags=()):
    return Extension(
        f"ovpool.{name}",
        [f"src/{name}.pyx"],
        language="c++",
        include_dirs=[np.get_include(), "src"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
        extra_compile_args=COMMON_FLAGS + list(extra_flags),
        extra_link_args=[],
        depends=["src/_driver.pxi", "src/_workers.hpp", "src/_omp.pxd", "ovpool/kernels.pxd"]
        + HEADERS,
    )


OPENVINO_SOURCES = sorted(
    os.path.join("src", "openvino", name)
    for name in os.listdir(os.path.join("src", "openvino"))
    if name.endswith((".cpp", ".hpp", ".inc", ".txt"))
)


class BuildPyWithHeaders(build_py):
    """Install the kernel headers inside the package (ovpool/include), where
    ovpool.get_include() finds them; a checkout's get_include() is src/.
    The OpenVINO extension's sources go to ovpool/openvino/src, from where
    ``python -m ovpool.openvino build`` builds the library against another
    OpenVINO release than the wheel's."""

    def run(self):
        super().run()
        for header in HEADERS:
            target = os.path.join(
                self.build_lib, "ovpool", "include", os.path.relpath(header, "src")
            )
            self.mkpath(os.path.dirname(target))
            self.copy_file(header, target)
        for source in OPENVINO_SOURCES:
            target = os.path.join(
                self.build_lib, "ovpool", "openvino", "src", os.path.basename(source)
            )
            self.mkpath(os.path.dirname(target))
            self.copy_file(source, target)


NO_OPENVINO_LIBRARY = "OVPOOL_NO_OPENVINO_LIBRARY"
LIBRARY_DIR = "OVPOOL_OPENVINO_LIBRARY_DIR"


def _openvino_library_module():
    """ovpool/openvino/_library.py loaded alone: it builds the library the
    way ``python -m ovpool.openvino build`` does, and the package cannot be
    imported while it is being built."""
    spec = importlib.util.spec_from_file_location(
        "_ovpool_openvino_library", os.path.join("ovpool", "openvino", "_library.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildOpenVINOLibrary(Command):
    """Build libovpool_openvino.so against the build environment's OpenVINO
    into the package's ``lib/`` folder, with its record (the OpenVINO
    release, the sources' hash) beside it."""

    description = "build ovpool's OpenVINO extension library (CMake)"
    user_options: ClassVar[list] = []
    editable_mode = False

    def initialize_options(self):
        self.build_lib = None

    def finalize_options(self):
        self.set_undefined_options("build_ext", ("build_lib", "build_lib"))

    def _skip_reason(self):
        if os.environ.get(NO_OPENVINO_LIBRARY, "0") not in ("", "0"):
            return f"{NO_OPENVINO_LIBRARY} is set"
        try:
            import openvino  # noqa: F401
        except ImportError:
            return "OpenVINO is not installed in the build environment"
        return None

    def _names(self):
        library = _openvino_library_module()
        return library, (library.LIBRARY_NAME, library.RECORD_NAME)

    def run(self):
        reason = self._skip_reason()
        if reason is not None:
            print(
                f"WARNING: ovpool: {reason}: building without the OpenVINO extension "
                "library. The numpy API, the IR runtime and the ovpool command work "
                "without it; for ovpool.openvino, install OpenVINO and run: "
                "python -m ovpool.openvino build",
                file=sys.stderr,
            )
            return
        library, _ = self._names()
        # in place for an editable install, as build_ext puts the kernels
        out = (
            os.path.join("ovpool", "lib")
            if self.editable_mode
            else os.path.join(self.build_lib, "ovpool", "lib")
        )
        release = library.installed_openvino()[0]
        given = os.environ.get(LIBRARY_DIR, "").strip()
        if given:
            self._copy_built(library, given, out, release)
            return
        print(
            f"ovpool: building libovpool_openvino.so against OpenVINO {release} (CMake) into {out}",
            file=sys.stderr,
            flush=True,
        )
        try:
            library.build(out, relocatable=True)
        except library.ExtensionError as exc:
            raise RuntimeError(
                f"{exc}\n{NO_OPENVINO_LIBRARY}=1 builds ovpool without the "
                "OpenVINO extension library."
            ) from exc

    def _copy_built(self, library, given, out, release):
        # the same bytes in every wheel: refused, never rebuilt, unless the
        # record matches these sources and this OpenVINO release
        built = os.path.join(given, library.LIBRARY_NAME)
        record = library.read_record(Path(built)) if os.path.isfile(built) else None
        if record is None:
            raise RuntimeError(f"{LIBRARY_DIR}={given}: no {library.LIBRARY_NAME} with its record")
        if not library.is_current(Path(built)):
            raise RuntimeError(
                f"{LIBRARY_DIR}={given}: {library.LIBRARY_NAME} was built against OpenVINO "
                f"{record.get('openvino_release')} from sources {record.get('sources', '?')[:12]}; "
                f"this build has OpenVINO {release} and sources {library.source_hash()[:12]}"
            )
        print(
            f"ovpool: libovpool_openvino.so from {given} (built against OpenVINO {release} "
            f"by Python {record.get('python')}) into {out}",
            file=sys.stderr,
            flush=True,
        )
        self.mkpath(out)
        for name in (library.LIBRARY_NAME, library.RECORD_NAME):
            self.copy_file(os.path.join(given, name), os.path.join(out, name))

    def get_outputs(self):
        if self._skip_reason() is not None:
            return []
        _, names = self._names()
        return [os.path.join(self.build_lib, "ovpool", "lib", name) for name in names]

    def get_output_mapping(self):
        if not self.editable_mode:
            return {}
        return {
            output: os.path.join("ovpool", "lib", os.path.basename(output))
            for output in self.get_outputs()
        }


class BuildWithOpenVINOLibrary(build):
    sub_commands = build.sub_commands + [("build_openvino", None)]


# ovpool._spec: the vocabulary of spec.hpp (codes, limits, the budget and ISA
# rules) for Python, without kernels; ovpool._isa asks it which kernel build
# to load.
extensions = [
    Extension(
        "ovpool._spec",
        ["src/_spec.pyx"],
        language="c++",
        include_dirs=["src"],
        extra_compile_args=COMMON_FLAGS,
        extra_link_args=[],
        depends=["ovpool/kernels.pxd", "src/ovpool/spec.hpp", "src/ovpool/common.hpp"],
    ),
    _kernel_extension("_kernels"),
]
if platform.machine().lower() in ("x86_64", "amd64") and os.environ.get(
    "OVPOOL_NO_V3_BUILD", "0"
) in ("", "0"):
    extensions.append(_kernel_extension("_kernels_v3", [V3_FLAG, "-mtune=generic"]))

# --- Debug info -------------------------------------------------------------
# Python's CFLAGS carry -g, and the DWARF is over 80% of each module (5.4 + 7.7 MB
# -> 0.9 + 1.2 MB without it). Strip it at link time; the symbol table stays,
# so profilers and backtraces still name the kernels. OVPOOL_DEBUG_SYMBOLS=1
# keeps the debug info (gdb with sources, perf annotate by line).
if sys.platform.startswith("linux") and os.environ.get("OVPOOL_DEBUG_SYMBOLS", "0") in ("", "0"):
    for ext in extensions:
        ext.extra_link_args.append("-Wl,--strip-debug")
# ---------------------------------------------------------------------------

setup(
    ext_modules=cythonize(
        extensions,
        include_path=["src", "."],
        compiler_directives=COMPILER_DIRECTIVES,
    ),
    cmdclass={
        "build": BuildWithOpenVINOLibrary,
        "build_ext": BuildExtWithOpenMP,
        "build_py": BuildPyWithHeaders,
        "build_openvino": BuildOpenVINOLibrary,
    },
)
