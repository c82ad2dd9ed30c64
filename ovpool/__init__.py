"""ovpool: fast, exact pooling kernels for OpenVINO IR and ONNX models on CPUs.

The numpy API (ONNX semantics, plus OpenVINO's adaptive pools)::

    import ovpool

    y = ovpool.adaptive_avg_pool(x, (7, 7))
    y, idx = ovpool.max_pool(x, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1), return_indices=True)

OpenVINO's own pool variants are in :mod:`ovpool.ov_ops`; the IR runtime in
:mod:`ovpool.ir`; the OpenVINO extension in :mod:`ovpool.openvino`.
"""

import os as _os

try:
    from ._isa import kernels as _kernels
except ImportError as exc:  # after scikit-learn's __check_build
    raise ImportError(
        "ovpool's compiled kernels (ovpool._kernels) could not be imported: "
        f"{exc}.\nIf you run from a source checkout, build them in place with "
        "`pip install -e .` (or `python setup.py build_ext --inplace`)."
    ) from exc

from . import (
    _limits,
    _threads,
    ov_ops,  # noqa: F401  (its functions register with prepare)
)
from ._core import Pool
from ._version import __version__
from .errors import (
    IRError,
    MemoryBudgetError,
    OvpoolError,
    OvpoolTypeError,
    OvpoolValueError,
)
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
    prepare,
)


def openmp_enabled() -> bool:
    """Whether the kernels were built with OpenMP, i.e. can run on several threads.

    A build whose compiler could not build and run an OpenMP program runs
    every call on one thread (``setup.py`` warns when it builds one).

    Returns
    -------
    bool
        True for a multi-threaded build.

    Examples
    --------
    >>> import ovpool
    >>> ovpool.openmp_enabled() in (True, False)
    True
    """
    return bool(_kernels.openmp_enabled())


def set_num_threads(n: int | None) -> None:
    """Set how many threads ovpool's calls use by default, or reset it.

    The thread count of a call is, in order: its ``num_threads`` argument,
    the value set here (or by a ``threadpoolctl.threadpool_limits`` block:
    ovpool registers with threadpoolctl as an OpenMP library), the
    ``OVPOOL_NUM_THREADS`` environment variable, the ``OMP_NUM_THREADS``
    environment variable (both read at import), then the CPUs this process
    may run on (its affinity and cgroup quota). Every count is capped to
    those CPUs: more threads only slow the kernels down, and a count the
    system cannot give would make the OpenMP runtime abort. Calls on tiny
    inputs without ``num_threads`` stay on one thread.
    ``torch.set_num_threads`` does not change it: ovpool passes its count to
    OpenMP explicitly.

    Parameters
    ----------
    n : int or None
        Threads (>= 1), or None to return to the environment variables / CPU
        count.

    Raises
    ------
    OvpoolTypeError
        If ``n`` is not an int or None.
    OvpoolValueError
        If ``n < 1``.

    See Also
    --------
    get_num_threads : The current default.

    Examples
    --------
    >>> import ovpool
    >>> ovpool.set_num_threads(1)
    >>> ovpool.get_num_threads()
    1
    >>> ovpool.set_num_threads(None)
    """
    _threads.set_num_threads(n)


def get_num_threads() -> int:
    """The number of threads a call without ``num_threads`` uses at most.

    Returns
    -------
    int
        The value of :func:`set_num_threads` (or of a threadpoolctl limit),
        else ``OVPOOL_NUM_THREADS``, else ``OMP_NUM_THREADS``, else the CPUs
        this process may run on, capped to those CPUs; 1 without OpenMP.

    Raises
    ------
    OvpoolValueError
        If ``OVPOOL_NUM_THREADS`` is set to something other than a positive
        integer.

    Examples
    --------
    >>> import ovpool
    >>> ovpool.get_num_threads() >= 1
    True
    """
    return int(_threads.get_num_threads())


def set_memory_budget(nbytes: int | str | None) -> int | None:
    """Set ovpool's memory budget: the most bytes one request may allocate.

    Every allocation whose size follows from a caller's numbers (an output,
    the window tables of a plan, the per-thread scratch, a contiguous copy of
    a strided input, a Const of an IR file) is checked before it is made; one
    over the budget raises :class:`MemoryBudgetError` naming the op, the
    argument and the bytes, instead of a ``MemoryError``, an OOM kill or
    minutes of swapping. The budget bounds each request on its own, not the
    process. The default is a quarter of the memory this process may use
    (physical memory, cgroup ``memory.max``, ``RLIMIT_AS``), at least 256 MiB;
    ``OVPOOL_MEMORY_BUDGET``, read at import, takes the same values as
    ``nbytes``. Services that run untrusted IR files or arguments should set
    a tighter one.

    Parameters
    ----------
    nbytes : int, str or None
        Bytes, a size with a binary suffix (``"512M"``, ``"2GiB"``), a
        percentage of the usable memory (``"10%"``), or None for the default.

    Returns
    -------
    int or None
        The previous budget in bytes (None if it was a malformed
        ``OVPOOL_MEMORY_BUDGET``).

    Raises
    ------
    OvpoolTypeError
        If ``nbytes`` is neither an int, a str nor None.
    OvpoolValueError
        If ``nbytes`` is negative or not a size.

    See Also
    --------
    get_memory_budget : The current budget.

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> previous = ovpool.set_memory_budget("1M")
    >>> try:
    ...     ovpool.adaptive_avg_pool(np.ones((1, 1, 8), np.float32), 1 << 20)
    ... except ovpool.MemoryBudgetError as exc:
    ...     print(str(exc)[:74])
    adaptive_avg_pool: out of shape (1, 1, 1048576) and dtype float32 would ne
    >>> _ = ovpool.set_memory_budget(None)
    """
    return _limits.set_memory_budget(nbytes)


def get_memory_budget() -> int:
    """ovpool's memory budget in bytes (see :func:`set_memory_budget`).

    Returns
    -------
    int
        The most bytes one request may allocate.

    Raises
    ------
    OvpoolValueError
        If ``OVPOOL_MEMORY_BUDGET`` is malformed and no budget was set since.

    Examples
    --------
    >>> import ovpool
    >>> ovpool.get_memory_budget() >= 256 << 20
    True
    """
    return _limits.get_memory_budget()


def get_include() -> str:
    """The directory of ovpool's C++ kernel headers, as numpy's ``get_include()``.

    For code that compiles against the kernel core: C++ with
    ``#include "ovpool/ovpool.hpp"``, or Cython with
    ``from ovpool cimport kernels`` (``ovpool/kernels.pxd``, found on
    ``sys.path``), compiled as C++17 with
    ``include_dirs=[ovpool.get_include()]``. An installed package has the
    headers in ``ovpool/include``; a source checkout in ``src``.

    Returns
    -------
    str
        The directory holding ``ovpool/ovpool.hpp``.

    Raises
    ------
    ImportError
        If the headers are missing from the installation.

    Examples
    --------
    >>> import os, ovpool
    >>> os.path.isfile(os.path.join(ovpool.get_include(), "ovpool", "ovpool.hpp"))
    True
    """
    here = _os.path.dirname(_os.path.abspath(__file__))
    for candidate in (_os.path.join(here, "include"), _os.path.join(_os.path.dirname(here), "src")):
        if _os.path.isfile(_os.path.join(candidate, "ovpool", "ovpool.hpp")):
            return candidate
    raise ImportError(
        f"ovpool's C++ headers are missing from the installation (looked in {here}/include)"
    )


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
    "prepare",
    "Pool",
    "OvpoolError",
    "OvpoolValueError",
    "OvpoolTypeError",
    "IRError",
    "MemoryBudgetError",
    "openmp_enabled",
    "get_include",
    "set_num_threads",
    "get_num_threads",
    "set_memory_budget",
    "get_memory_budget",
    "__version__",
]
