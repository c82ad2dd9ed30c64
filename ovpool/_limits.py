"""ovpool's memory budget: the most bytes one request may ask for.

Every allocation whose size follows from a caller's numbers (an output shape,
an ``output_size``, pads, a Const of an IR file, a contiguous copy of a
strided or broadcast input) is checked against the budget *before* it is
made, by :func:`check_budget`. An over-budget request raises
:class:`~ovpool.MemoryBudgetError` (an :class:`~ovpool.OvpoolValueError`)
naming the op, the argument and the bytes it would need, instead of a bare
``MemoryError``, an OOM kill or minutes of swapping.

The budget applies to each request on its own (one output array, one window
table, one constant), not to the sum over a call: it bounds what a few bytes
of arguments or a 1 KB IR file can make ovpool allocate, it is not an
accounting of the process's memory.

Default: a quarter of the memory this process may use, i.e. of the smallest
of the physical memory, the cgroup's ``memory.max`` and ``RLIMIT_AS``, but at
least 256 MiB (the rule, and why, is written once in ``src/ovpool/spec.hpp``
and applies to the OpenVINO extension library too). Services that run
untrusted IR files or arguments should set a tighter budget.

Change it with :func:`set_memory_budget` or, at import, the environment
variable ``OVPOOL_MEMORY_BUDGET``: a number of bytes, optionally with a
binary suffix (``512M``, ``2GiB``, ``1.5G``), or a percentage of the memory
above (``10%``). A bad value is reported by the first call that allocates.
"""

from __future__ import annotations

import numbers
import os

from . import _spec
from ._isa import kernels as _kernels
from .errors import MemoryBudgetError, OvpoolError, OvpoolTypeError, OvpoolValueError

__all__ = [
    "set_memory_budget",
    "get_memory_budget",
    "check_budget",
    "default_memory_budget",
    "parse_budget",
]


def _usable_memory():
    """Bytes this process may use: the smallest of physical memory, the
    cgroup limit (v2 ``memory.max``, v1 ``memory.limit_in_bytes``) and
    ``RLIMIT_AS``; None when none of them is known (spec.hpp's rule)."""
    return _spec.usable_memory()


_usable = _usable_memory()


def default_memory_budget():
    """The budget without ``OVPOOL_MEMORY_BUDGET`` or :func:`set_memory_budget`:
    a quarter of the usable memory (see the module docstring), at least 256 MiB."""
    return _spec.default_budget(_usable)


def parse_budget(value, name="memory budget"):
    """Bytes from an int, or from a string as ``OVPOOL_MEMORY_BUDGET`` takes it
    (``"1073741824"``, ``"512M"``, ``"2GiB"``, ``"10%"``)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, str)):
        raise OvpoolTypeError(
            f"{name} must be a number of bytes (int) or a string such as "
            f"'512M' or '10%', got {value!r}"
        )
    if isinstance(value, numbers.Integral):
        if value < 0:
            raise OvpoolValueError(f"{name} must be >= 0 bytes, got {value}")
        return int(value)
    nbytes = _spec.parse_budget(value, _usable)
    if nbytes == -2:
        raise OvpoolValueError(f"{name} {value!r}: a percentage is 0% to 100%")
    if nbytes < 0:
        raise OvpoolValueError(f"{name} {value!r} is not a size ({_spec.BUDGET_SPELLING})")
    return nbytes


def _from_environment():
    text = os.environ.get("OVPOOL_MEMORY_BUDGET", "").strip()
    if not text:
        return default_memory_budget(), None
    try:
        return parse_budget(text, "OVPOOL_MEMORY_BUDGET"), None
    except OvpoolError as exc:
        return -1, str(exc)


# The budget in bytes; -1 while OVPOOL_MEMORY_BUDGET is malformed, so that the
# one comparison of the fast path sends every request to the error below.
_budget, _env_error = _from_environment()
_kernels._set_budget(_budget)  # what the compiled per-call path compares with


def set_memory_budget(nbytes):
    """Set ovpool's memory budget: the most bytes one request may allocate
    (an int, a string such as ``"2GiB"`` or ``"10%"``, or None for the default).

    Returns the previous budget in bytes (None if it was a malformed
    ``OVPOOL_MEMORY_BUDGET``)."""
    global _budget, _env_error
    previous = None if _env_error is not None else _budget
    if nbytes is None:
        _budget, _env_error = _from_environment()
    else:
        _budget, _env_error = parse_budget(nbytes, "set_memory_budget(nbytes)"), None
    _kernels._set_budget(_budget)
    return previous


def get_memory_budget():
    """ovpool's memory budget in bytes (see :mod:`ovpool._limits`)."""
    if _env_error is not None:
        raise OvpoolValueError(_env_error)
    return _budget


def _human(nbytes):
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes} bytes"


def check_budget(op, what, nbytes, shape=None, dtype=None):
    """Raise :class:`~ovpool.MemoryBudgetError` if ``nbytes``, a request made
    by ``op`` for ``what`` (the argument or output, e.g. ``"out"``; of
    ``shape`` and ``dtype`` when given, named in the message), is more than
    the budget. Costs one comparison when it is not: call it with plain
    values, nothing formatted."""
    if nbytes <= _budget:
        return
    budget = get_memory_budget()  # raises for a malformed OVPOOL_MEMORY_BUDGET
    if nbytes <= budget:
        return
    if shape is not None:
        what = f"{what} of shape {tuple(shape)}" + (f" and dtype {dtype}" if dtype else "")
    raise MemoryBudgetError(
        f"{op}: {what} would need {nbytes} bytes ({_human(nbytes)}), more than ovpool's memory "
        f"budget of {budget} bytes ({_human(budget)}); raise it with "
        "ovpool.set_memory_budget(nbytes) or OVPOOL_MEMORY_BUDGET if this is intended"
    )
