"""ovpool: fast, exact pooling kernels for OpenVINO IR and ONNX models on CPUs.

The numpy API (ONNX semantics, plus OpenVINO's adaptive pools)::

    import ovpool
    y = ovpool.adaptive_avg_pool(x, (7, 7))
    y, idx = ovpool.max_pool(x, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1), return_indices=True)

OpenVINO's own pool variants are in :mod:`ovpool.ov_ops`; the IR runtime in
:mod:`ovpool.ir`; the OpenVINO extension in :mod:`ovpool.openvino`.
"""

try:
    from . import _kernels  # type: ignore[attr-defined]
except ImportError as exc:  # after scikit-learn's __check_build
    raise ImportError(
        "ovpool's compiled kernels (ovpool._kernels) could not be imported: "
        f"{exc}.\nIf you run from a source checkout, build them in place with "
        "`pip install -e .` (or `python setup.py build_ext --inplace`)."
    ) from exc

from . import _threads
from ._version import __version__
from .errors import IRError, OvpoolError, OvpoolTypeError, OvpoolValueError
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
    the value set here, the ``OVPOOL_NUM_THREADS`` environment variable (read
    at import), then the CPUs this process may run on. Calls on tiny inputs
    without ``num_threads`` stay on one thread. ``torch.set_num_threads`` and
    ``OMP_NUM_THREADS`` do not change it: ovpool always passes its count to
    OpenMP explicitly.

    Parameters
    ----------
    n : int or None
        Threads (>= 1), or None to return to the environment variable / CPU
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
        The value of :func:`set_num_threads`, else ``OVPOOL_NUM_THREADS``,
        else the CPUs this process may run on; 1 without OpenMP.

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
    "openmp_enabled",
    "set_num_threads",
    "get_num_threads",
    "__version__",
]
