"""Where ``libovpool_openvino.so`` is, what it was built against, and building it.

The wheel carries the library in ``ovpool/lib/``, built by ``setup.py``
with CMake against the ``openvino`` release that ``pyproject.toml`` pins
as a build requirement; the ``openvino`` extra pins the same release
series, the way ``openvino-tokenizers`` ties its library to one OpenVINO
release. ``libovpool_openvino.json`` beside it records the OpenVINO
release and the hash of the sources it was built from. For another
OpenVINO release (or an install built without OpenVINO),
``python -m ovpool.openvino build`` builds it against the installed one
(CMake with the package config that the ``openvino`` wheel ships) into
the same folder; ``OVPOOL_OPENVINO_EXTENSION`` (a file, or a folder
holding the library) points at a build elsewhere.

Nothing here imports OpenVINO at import time, and nothing needs the rest of
ovpool: ``setup.py`` loads this file alone to build the wheel's library (the
package is not importable while it is being built).
"""

from __future__ import annotations

import hashlib
import json
import os
import runpy
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from ..errors import OvpoolError
except ImportError:  # loaded alone by setup.py

    class OvpoolError(Exception):  # type: ignore[no-redef]
        """ovpool.errors.OvpoolError's stand-in outside the package."""


LIBRARY_NAME = "libovpool_openvino.so"
RECORD_NAME = "libovpool_openvino.json"
ENV_VAR = "OVPOOL_OPENVINO_EXTENSION"
BUILD_COMMAND = "python -m ovpool.openvino build"
# The RUNPATH of the wheel's library: site-packages/ovpool/lib/ -> the openvino
# wheel's libopenvino and TBB (src/openvino/CMakeLists.txt says when it serves).
WHEEL_RUNPATH = "$ORIGIN/../../openvino/libs"

_PACKAGE = Path(__file__).resolve().parent.parent  # .../ovpool


class ExtensionError(OvpoolError, RuntimeError):
    """ovpool's OpenVINO extension library is missing, or does not match the
    installed OpenVINO; the message says how to build it."""


def default_dir() -> Path:
    """``ovpool/lib``: where the wheel's library is, and where ``python -m
    ovpool.openvino build`` puts one."""
    return _PACKAGE / "lib"


def sources() -> tuple[Path, Path]:
    """``(folder of CMakeLists.txt, folder holding ovpool/ovpool.hpp)``: a
    checkout's ``src/openvino`` and ``src``, or the copies an installed
    package carries (``ovpool/openvino/src``, ``ovpool/include``)."""
    checkout = _PACKAGE.parent / "src"
    if (checkout / "openvino" / "CMakeLists.txt").is_file() and (
        checkout / "ovpool" / "ovpool.hpp"
    ).is_file():
        return checkout / "openvino", checkout
    installed = _PACKAGE / "openvino" / "src"
    if (installed / "CMakeLists.txt").is_file() and (_PACKAGE / "include" / "ovpool").is_dir():
        return installed, _PACKAGE / "include"
    raise ExtensionError(
        "the sources of ovpool's OpenVINO extension are not in this install "
        f"(looked in {checkout / 'openvino'} and {installed})"
    )


# The op schema the library's op table is generated from, and what generates
# it (the same paths in a checkout and in an install).
SCHEMA_FILES = (
    _PACKAGE / "opset.json",
    _PACKAGE / "_opset.py",
    _PACKAGE / "openvino" / "_opset_cpp.py",
)


def source_hash() -> str:
    """sha256 over the extension's and the kernel core's sources and the op
    schema."""
    ext_dir, include_dir = sources()
    digest = hashlib.sha256()
    files = sorted(
        p
        for p in ext_dir.rglob("*")
        if p.is_file() and p.suffix in (".cpp", ".hpp", ".inc", ".txt")
    )
    files += sorted(p for p in (include_dir / "ovpool").rglob("*.hpp"))
    files += list(SCHEMA_FILES)
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def installed_openvino() -> tuple[str, str]:
    """``(release, full version)`` of the installed OpenVINO, e.g.
    ``("2026.4.1", "2026.4.1-22982-e213a147257-releases/2026/4")``."""
    import openvino

    full = openvino.get_version() if hasattr(openvino, "get_version") else openvino.__version__
    return full.split("-")[0], full


def _located() -> Path:
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        path = Path(env)
        if path.is_dir():
            path = path / LIBRARY_NAME
        if not path.is_file():
            raise ExtensionError(f"{ENV_VAR}={env} names no library file ({path} does not exist)")
        return path
    return default_dir() / LIBRARY_NAME


def read_record(path: Path) -> dict | None:
    """The JSON record beside a library, or None."""
    record = path.parent / RECORD_NAME
    try:
        return json.loads(record.read_text())
    except (OSError, ValueError):
        return None


def extension_path() -> str:
    """Path of ``libovpool_openvino.so`` for ``core.add_extension(path)``.

    Raises :class:`ExtensionError` when the library is missing or was built
    against another OpenVINO release than the installed one, naming both
    releases, the OpenVINO to install for this library and the command that
    builds one for the installed OpenVINO.
    """
    path = _located()
    if not path.is_file():
        raise ExtensionError(
            f"ovpool's OpenVINO extension library is not in this install ({path} does not "
            "exist: ovpool was built without OpenVINO). Build it against the installed "
            f"OpenVINO with: {BUILD_COMMAND}"
        )
    record = read_record(path)
    if record is not None:
        release, full = installed_openvino()
        built = record.get("openvino_release")
        if built != release:
            raise ExtensionError(
                f"{path} was built against OpenVINO {built}, but OpenVINO {release} ({full}) is "
                f"installed. Install the release it was built for (pip install "
                f'"openvino=={built}"), or build the library for OpenVINO {release} with: '
                f"{BUILD_COMMAND} (or point {ENV_VAR} at a library built for it)"
            )
    return str(path)


def is_current(path: Path | None = None) -> bool:
    """Whether the library at ``path`` (default: where :func:`extension_path`
    looks) was built from these sources against the installed OpenVINO."""
    path = path or _located()
    record = read_record(path) if path.is_file() else None
    if record is None:
        return False
    try:
        return (
            record.get("openvino_release") == installed_openvino()[0]
            and record.get("sources") == source_hash()
        )
    except (ExtensionError, ImportError):
        return False


# --------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------


def _cmake() -> str:
    found = shutil.which("cmake")
    if found is None:
        try:
            import cmake  # the pip package ships the binary

            candidate = Path(cmake.CMAKE_BIN_DIR) / "cmake"
            found = str(candidate) if candidate.is_file() else None
        except (ImportError, AttributeError):
            found = None
    if found is None:
        raise ExtensionError(
            "building ovpool's OpenVINO extension needs CMake (3.16+) and a C++17 "
            "compiler; install CMake with: pip install cmake"
        )
    return found


def openvino_cmake_dir() -> Path:
    """The folder of ``OpenVINOConfig.cmake`` (``OpenVINO_DIR`` overrides it)."""
    env = os.environ.get("OpenVINO_DIR", "").strip()
    if env:
        return Path(env)
    import openvino

    path = Path(openvino.__file__).resolve().parent / "cmake"
    if not (path / "OpenVINOConfig.cmake").is_file():
        raise ExtensionError(
            f"the installed openvino package has no CMake config in {path}; "
            "set OpenVINO_DIR to the folder of OpenVINOConfig.cmake"
        )
    return path


def build(
    output_dir: str | os.PathLike | None = None,
    *,
    build_dir: str | os.PathLike | None = None,
    jobs: int | None = None,
    verbose: bool = False,
    force: bool = False,
    relocatable: bool = False,
) -> str:
    """Build ``libovpool_openvino.so`` against the installed OpenVINO.

    ``output_dir``: where the library and its record go (default
    ``ovpool/lib``). ``build_dir``: CMake's build folder, kept for
    incremental rebuilds (default: a temporary folder, removed after).
    Unless ``force``, a library already built from these sources against
    this OpenVINO is kept. ``relocatable`` (the wheel's build): the
    library finds OpenVINO's runtime only through :data:`WHEEL_RUNPATH`,
    not also through the absolute folder of the OpenVINO it was built
    against. Returns the library's path.
    """
    out = Path(output_dir) if output_dir is not None else default_dir()
    target = out / LIBRARY_NAME
    if not force and is_current(target):
        return str(target)
    ext_dir, include_dir = sources()
    release, full = installed_openvino()
    digest = source_hash()
    cmake = _cmake()
    jobs = jobs or max(1, min(4, os.cpu_count() or 1))
    temporary = build_dir is None
    work = Path(tempfile.mkdtemp(prefix="ovpool-openvino-")) if temporary else Path(build_dir)
    try:
        work.mkdir(parents=True, exist_ok=True)
        configure = [
            cmake,
            "-S",
            str(ext_dir),
            "-B",
            str(work),
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DOpenVINO_DIR={openvino_cmake_dir()}",
            f"-DOVPOOL_INCLUDE_DIR={include_dir}",
            f"-DOVPOOL_PACKAGE_DIR={_PACKAGE}",
            f"-DPython3_EXECUTABLE={sys.executable}",
        ]
        if relocatable:
            configure.append(f"-DOVPOOL_RUNPATH={WHEEL_RUNPATH}")
        for command in (configure, [cmake, "--build", str(work), "-j", str(jobs)]):
            result = subprocess.run(command, capture_output=not verbose, text=True)
            if result.returncode != 0:
                log = ((result.stdout or "") + (result.stderr or ""))[-4000:]
                raise ExtensionError(
                    f"building ovpool's OpenVINO extension failed: {' '.join(command)}\n{log}"
                )
        built = work / LIBRARY_NAME
        if not built.is_file():
            raise ExtensionError(f"the build finished without {built}")
        out.mkdir(parents=True, exist_ok=True)
        partial = out / (LIBRARY_NAME + ".partial")
        shutil.copy2(built, partial)
        os.replace(partial, target)  # a process that loaded the old one keeps its copy
        record = {
            "openvino_release": release,
            "openvino_version": full,
            "sources": digest,
            "ovpool": _ovpool_version(),
            "python": sys.version.split()[0],
        }
        (out / RECORD_NAME).write_text(json.dumps(record, indent=1) + "\n")
    finally:
        if temporary:
            shutil.rmtree(work, ignore_errors=True)
    return str(target)


def _ovpool_version() -> str:
    # read from the file, not imported: the same whether or not the package imports
    return runpy.run_path(str(_PACKAGE / "_version.py"))["__version__"]
