"""ovpool: fast, exact pooling kernels for OpenVINO IR and ONNX models on CPUs.

The numpy API (ONNX semantics, plus OpenVINO's adaptive pools)::

    import ovpool
    y = ovpool.adaptive_avg_pool(x, (7, 7))
    y, idx = ovpool.max_pool(x, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1), return_indices=True)

OpenVINO's own pool variants are in :mod:`ovpool.ov_ops`; the IR runtime in
:mod:`ovpool.ir`; the OpenVINO extension in :mod:`ovpool.openvino`.
"""

try:
    from . import _kernels
except ImportError as exc:  # after scikit-learn's __check_build
    raise ImportError(
        "ovpool's compiled kernels (ovpool._kernels) could not be imported: "
        f"{exc}.\nIf you run from a source checkout, build them in place with "
        "`pip install -e .` (or `python setup.py build_ext --inplace`)."
    ) from exc

from ._limits import get_memory_budget, set_memory_budget
from ._threads import get_num_threads, set_num_threads
from .errors import IRError, MemoryBudgetError, OvpoolError, OvpoolTypeError, OvpoolValueError
from .ops import (
    adaptive_avg_pool,
    adaptive_max_pool,
    avg_pool,
    global_avg_pool,
    global_lp_pool,
    global_max_pool,
    lp_pool,
    max_pool,
    max_unpool,
)

__version__ = "0.1.0"


def openmp_enabled():
    """True if the kernels were built with OpenMP (multi-threaded)."""
    return _kernels.openmp_enabled()


__all__ = [
    "adaptive_avg_pool",
    "adaptive_max_pool",
    "avg_pool",
    "max_pool",
    "lp_pool",
    "global_avg_pool",
    "global_max_pool",
    "global_lp_pool",
    "max_unpool",
    "OvpoolError",
    "OvpoolValueError",
    "OvpoolTypeError",
    "IRError",
    "MemoryBudgetError",
    "openmp_enabled",
    "set_num_threads",
    "get_num_threads",
    "set_memory_budget",
    "get_memory_budget",
    "__version__",
]
