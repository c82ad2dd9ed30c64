"""Pick the kernel build for this CPU.

Two builds of the same kernels ship (see setup.py): ``ovpool._kernels``
(baseline x86-64) and ``ovpool._kernels_v3`` (``-march=x86-64-v3``: AVX2,
FMA, BMI1/2, F16C, LZCNT, MOVBE). The v3 build is used when the CPU has every
one of those features. ``OVPOOL_ISA=baseline`` forces the baseline build and
``OVPOOL_ISA=x86-64-v3`` insists on the v3 one (an error if unusable). Both
builds compute the same bits (no FMA contraction, same summation order).
"""

import importlib
import os

from .errors import OvpoolValueError

# /proc/cpuinfo names of the x86-64-v3 features ("abm" is LZCNT on AMD and Intel).
_V3_CPU_FLAGS = {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _load_baseline():
    return importlib.import_module(".._kernels", __name__)


def _load_v3():
    # only the chosen build is loaded, so that one ovpool library shows in
    # threadpoolctl's view of the process
    try:
        return importlib.import_module(".._kernels_v3", __name__)
    except ImportError:
        return None


def _choose():
    choice = os.environ.get("OVPOOL_ISA", "auto").strip().lower() or "auto"
    if choice == "baseline":
        return _load_baseline(), "baseline"
    if choice not in ("auto", "x86-64-v3"):
        raise OvpoolValueError(f"OVPOOL_ISA must be auto, baseline or x86-64-v3, got {choice!r}")
    supported = _V3_CPU_FLAGS <= _cpu_flags()
    module = _load_v3() if supported else None
    if module is not None:
        return module, "x86-64-v3"
    if choice == "x86-64-v3":
        raise OvpoolValueError(
            "OVPOOL_ISA=x86-64-v3, but " + ("the v3 build is missing" if supported
                                             else "this CPU lacks x86-64-v3 features"))
    return _load_baseline(), "baseline"


kernels, name = _choose()
