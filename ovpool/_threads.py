"""Thread count of the kernels (after scikit-learn's ``_openmp_effective_n_threads``).

The kernels never choose their own thread count: every call passes an
explicit ``num_threads`` to its ``prange``. That matters because PyTorch
ships its own ``libgomp.so.1`` under the same soname: whichever loads first
serves both, so ``torch.set_num_threads(1)`` lowers the OpenMP default of the
whole process. An explicit ``num_threads`` clause is not affected by it.

Order of precedence: the ``num_threads`` argument of a call, then
:func:`set_num_threads`, then the ``OVPOOL_NUM_THREADS`` environment variable,
then the number of CPUs this process may run on (``os.sched_getaffinity``).
Both are read at import, like ``OMP_NUM_THREADS`` (an ``os.environ`` lookup
per call cost over a microsecond); a bad value is reported by the first call.
Without OpenMP every call runs on one thread.
"""

import numbers
import os

from ._isa import kernels as _kernels
from .errors import OvpoolTypeError, OvpoolValueError

__all__ = ["set_num_threads", "get_num_threads", "resolve_num_threads"]

_process_default = None

# Below this many input+output elements a parallel region costs more than it
# saves (thread wake-up is a few microseconds).
_MIN_ELEMENTS_PER_THREAD = 1 << 14


def _count_cpus():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


# Read once, at import: a syscall per kernel call would cost more than a small
# pool, and a first call made later from a thread that OpenVINO pinned to one
# core would see that thread's affinity, not the process's.
_cpus = _count_cpus()
_openmp = bool(_kernels.openmp_enabled())
_env_threads = os.environ.get("OVPOOL_NUM_THREADS", "").strip()


def _available_cpus():
    return _cpus


def _check(n, name):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise OvpoolTypeError(f"{name} must be a positive int or None, got {n!r}")
    n = int(n)
    if n < 1:
        raise OvpoolValueError(f"{name} must be >= 1, got {n}")
    return n


def set_num_threads(n):
    """Set the default number of threads of every ovpool kernel (None: reset)."""
    global _process_default
    _process_default = None if n is None else _check(n, "set_num_threads(n)")


def get_num_threads():
    """The number of threads a call without ``num_threads`` uses at most."""
    if not _openmp:
        return 1
    if _process_default is not None:
        return _process_default
    if _env_threads:
        try:
            value = int(_env_threads)
        except ValueError:
            raise OvpoolValueError("OVPOOL_NUM_THREADS must be a positive integer, "
                                   f"got {_env_threads!r}") from None
        return _check(value, "OVPOOL_NUM_THREADS")
    return _available_cpus()


def resolve_num_threads(num_threads, work_items=None, elements=None):
    """Threads for one kernel call.

    ``num_threads`` is the caller's argument (None: the default above).
    ``work_items`` (the number of parallel units, e.g. output rows) caps it.
    ``elements`` (input + output elements) keeps tiny calls on one thread,
    but only for the default: an explicit ``num_threads`` is honoured.
    """
    if num_threads is None:
        n = get_num_threads()
        if elements is not None:
            n = min(n, max(1, elements // _MIN_ELEMENTS_PER_THREAD))
    else:
        n = _check(num_threads, "num_threads")
    if not _openmp:
        return 1
    if work_items is not None:
        n = min(n, max(1, work_items))
    return n
