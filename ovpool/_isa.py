"""Pick the kernel build for this CPU.

Two builds of the same kernels ship (see setup.py): ``ovpool._kernels``
(baseline x86-64) and ``ovpool._kernels_v3`` (``-march=x86-64-v3``: AVX2,
FMA, BMI1/2, F16C, LZCNT, MOVBE). The rule is spec.hpp's ``choose_isa``,
which the OpenVINO extension library applies too: the v3 build where the CPU
runs it, ``OVPOOL_ISA=baseline`` forces the baseline build and
``OVPOOL_ISA=x86-64-v3`` insists on the v3 one (an error if unusable). Both
builds compute the same bits (no FMA contraction, same summation order).
"""

import importlib
import importlib.util
import os

from . import _spec
from .errors import OvpoolValueError


def _choose():
    # only the chosen build is loaded, so that one ovpool library shows in
    # threadpoolctl's view of the process
    have_v3 = importlib.util.find_spec(".._kernels_v3", __name__) is not None
    name, error = _spec.choose_isa(os.environ.get("OVPOOL_ISA"), have_v3)
    if error is not None:
        raise OvpoolValueError(error)
    module = "_kernels_v3" if name == "x86-64-v3" else "_kernels"
    return importlib.import_module(f"..{module}", __name__), name


kernels, name = _choose()
