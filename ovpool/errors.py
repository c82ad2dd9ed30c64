"""Exceptions raised by ovpool.

Every error that ovpool raises on bad input derives from :class:`OvpoolError`
and also from the builtin a caller would expect (``ValueError`` for a bad
value or shape, ``TypeError`` for a bad type), so both ``except OvpoolError``
and ``except ValueError`` work.
"""

__all__ = ["OvpoolError", "OvpoolValueError", "OvpoolTypeError", "IRError", "MemoryBudgetError"]


class OvpoolError(Exception):
    """Base class of every error ovpool raises on bad input."""


class OvpoolValueError(OvpoolError, ValueError):
    """An argument has a bad value or shape."""


class OvpoolTypeError(OvpoolError, TypeError):
    """An argument has an unsupported type or dtype."""


class IRError(OvpoolValueError):
    """An OpenVINO IR file is malformed, hostile, or uses an unsupported layer.

    The message names the file and, where there is one, the line of the XML
    element at fault.
    """


class MemoryBudgetError(OvpoolValueError):
    """A request would allocate more than ovpool's memory budget
    (:func:`ovpool.set_memory_budget`); the message names the op, the argument
    and the bytes it would need. Raised before anything is allocated."""
