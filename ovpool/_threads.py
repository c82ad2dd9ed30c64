"""Thread count of the kernels (after scikit-learn's ``_openmp_effective_n_threads``).

The kernels never choose their own thread count: every call passes an
explicit count to the driver, whose helper threads are ovpool's own
(``src/_workers.hpp``), so ``torch.set_num_threads(1)``, which lowers the
OpenMP default of the whole process (PyTorch ships its own ``libgomp.so.1``
under the same soname), does not pin ovpool.

A call's thread count is, in order:

1. the ``num_threads`` argument of the call;
2. :func:`set_num_threads`, or a ``threadpoolctl.threadpool_limits`` block
   (ovpool registers itself with threadpoolctl as an ``openmp`` library when
   threadpoolctl is installed);
3. the ``OVPOOL_NUM_THREADS`` environment variable;
4. the ``OMP_NUM_THREADS`` environment variable (its first entry), as
   scikit-learn reads it;
5. the CPUs this process may run on: its CPU affinity, and the cgroup CPU
   quota of a container.

Every count is capped to the CPUs of 5., which is also the most helper
threads a call ever starts: more threads than CPUs only slow these kernels
down, and a count the system cannot give (``num_threads=10**6``) is refused
by no error but by the cap. The count is a most: the kernel
core's cost model (plan.hpp's ``threads_for``) gives a call fewer threads
where its work is too small to share, and runs a small call on the calling
thread without a parallel region. The environment variables and the CPUs
are read at import (an ``os.environ`` lookup per call cost over a
microsecond, and a first call made from a thread that OpenVINO pinned to one
core would see that thread's affinity); a bad ``OVPOOL_NUM_THREADS`` is
reported by the first call. Without OpenMP every call runs on one thread.
"""

import math
import numbers
import os

from ._isa import kernels as _kernels
from .errors import OvpoolTypeError, OvpoolValueError

__all__ = ["set_num_threads", "get_num_threads", "available_cpus"]

_process_default = None


def _cgroup_cpus():
    """The CPU quota of this process's cgroup (v2 ``cpu.max``, v1
    ``cpu.cfs_quota_us``), rounded up; None when there is none."""
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
        if quota != "max" and int(period) > 0:
            return max(1, math.ceil(int(quota) / int(period)))
        return None
    except (OSError, ValueError):
        pass
    try:
        with open("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") as f:
            quota = int(f.read())
        with open("/sys/fs/cgroup/cpu/cpu.cfs_period_us") as f:
            period = int(f.read())
        if quota > 0 and period > 0:
            return max(1, math.ceil(quota / period))
    except (OSError, ValueError):
        pass
    return None


def _count_cpus():
    try:
        cpus = max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        cpus = max(1, os.cpu_count() or 1)
    quota = _cgroup_cpus()
    return min(cpus, quota) if quota else cpus


def _omp_num_threads(text):
    """OMP_NUM_THREADS's first entry ("4" or "4,2" for nested regions), or
    None when unset or not a positive integer (the OpenMP runtime ignores
    such a value too)."""
    try:
        value = int(text.split(",")[0])
    except ValueError:
        return None
    return value if value >= 1 else None


# Read once, at import (see the module docstring).
_cpus = _count_cpus()
_openmp = bool(_kernels.openmp_enabled())
_env_threads = os.environ.get("OVPOOL_NUM_THREADS", "").strip()
_omp_env = _omp_num_threads(os.environ.get("OMP_NUM_THREADS", "").strip())


def available_cpus():
    """The CPUs this process may run on (affinity and cgroup quota): the
    most threads any call uses."""
    return _cpus


def check(n, name):
    """``n`` as a thread count (a positive int), else an error naming ``name``."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise OvpoolTypeError(f"{name} must be a positive int or None, got {n!r}")
    n = int(n)
    if n < 1:
        raise OvpoolValueError(f"{name} must be >= 1, got {n}")
    return n


def set_num_threads(n):
    """Set the default number of threads of every ovpool kernel (None: reset)."""
    global _process_default
    _process_default = None if n is None else check(n, "set_num_threads(n)")
    _push()


def get_num_threads():
    """The number of threads a call without ``num_threads`` uses at most."""
    if not _openmp:
        return 1
    if _process_default is not None:
        n = _process_default
    elif _env_threads:
        try:
            value = int(_env_threads)
        except ValueError:
            raise OvpoolValueError(
                f"OVPOOL_NUM_THREADS must be a positive integer, got {_env_threads!r}"
            ) from None
        n = check(value, "OVPOOL_NUM_THREADS")
    elif _omp_env is not None:
        n = _omp_env
    else:
        n = _cpus
    return min(n, _cpus)


def _push():
    """Hand the default thread count and the CPUs to the compiled per-call
    path (0: a bad OVPOOL_NUM_THREADS, which the next call then reports)."""
    try:
        default = get_num_threads()
    except OvpoolValueError:
        default = 0
    _kernels._set_thread_defaults(default, _cpus)


def _register_with_threadpoolctl():
    """Make ``threadpoolctl.threadpool_limits`` (and ``threadpool_info``)
    see ovpool as an OpenMP library, by a controller of its compiled driver
    (found by the exported symbol ``ovpool_threadpool_marker``) whose limit
    is :func:`set_num_threads`."""
    try:
        import threadpoolctl
    except ImportError:
        return
    register = getattr(threadpoolctl, "register", None)
    base = getattr(threadpoolctl, "LibController", None)
    if register is None or base is None:
        return

    class OvpoolController(base):
        user_api = "openmp"
        internal_api = "ovpool"
        filename_prefixes = ("_kernels",)
        check_symbols = ("ovpool_threadpool_marker",)

        def get_num_threads(self):
            return get_num_threads()

        def set_num_threads(self, num_threads):
            set_num_threads(max(1, int(num_threads)))

        def get_version(self):
            from . import __version__

            return __version__

    register(OvpoolController)


_push()
_register_with_threadpoolctl()
