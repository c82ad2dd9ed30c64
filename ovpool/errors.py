"""Exceptions raised by ovpool.

Every error that ovpool raises on bad input derives from :class:`OvpoolError`
and also from the builtin a caller would expect (``ValueError`` for a bad
value or shape, ``TypeError`` for a bad type), so both ``except OvpoolError``
and ``except ValueError`` work.
"""

__all__ = ["OvpoolError", "OvpoolValueError", "OvpoolTypeError", "IRError", "MemoryBudgetError"]


class OvpoolError(Exception):
    """Base class of every error ovpool raises on bad input.

    Each message starts with the name of the function (numpy API) or the
    OpenVINO operation at fault and names the argument and its value.

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> try:
    ...     ovpool.max_pool(np.ones((1, 1, 4), np.float32), 5)
    ... except ovpool.OvpoolError as exc:
    ...     print(type(exc).__name__, isinstance(exc, ValueError))
    OvpoolValueError True
    """


class OvpoolValueError(OvpoolError, ValueError):
    """An argument has a bad value or shape (also a ``ValueError``).

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> import textwrap
    >>> try:
    ...     ovpool.adaptive_avg_pool(np.ones((3, 8, 8), np.float32), (2, 2))
    ... except ValueError as exc:
    ...     print(textwrap.fill(str(exc), width=72))
    adaptive_avg_pool: output_size must have 1 entries for 1 spatial dims,
    got 2: [2, 2]. x of shape (3, 8, 8) is read as (N, C, L), a 1D pool,
    while output_size has 2 entries: if x is one unbatched sample of 2
    spatial dims, add a batch axis with x[None]
    """


class OvpoolTypeError(OvpoolError, TypeError):
    """An argument has an unsupported type or dtype (also a ``TypeError``).

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> try:
    ...     ovpool.avg_pool(np.ones((1, 1, 4), np.int32), 2)
    ... except TypeError as exc:
    ...     print(exc)
    avg_pool: unsupported dtype int32 of x; expected one of float16, bfloat16, float32, float64
    """


class IRError(OvpoolValueError):
    """An OpenVINO IR file is malformed, hostile, or uses an unsupported layer.

    The message starts with ``path:line:`` of the XML element at fault, when
    there is one; the ``path`` and ``line`` attributes hold them.

    Examples
    --------
    >>> from ovpool import ir
    >>> ir.read_model("no/such/model.xml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ovpool.errors.IRError: no/such/model.xml: ...
    """


class MemoryBudgetError(OvpoolValueError):
    """A request would allocate more than ovpool's memory budget
    (:func:`ovpool.set_memory_budget`); the message names the op, the argument
    and the bytes it would need. Raised before anything is allocated.

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> x = np.ones((0, 3, 8), np.float32)  # no plane, yet 2**40 window positions
    >>> try:
    ...     ovpool.adaptive_avg_pool(x, 1 << 40)
    ... except ovpool.MemoryBudgetError as exc:
    ...     print(isinstance(exc, ValueError), str(exc)[:55])
    True adaptive_avg_pool: the window tables would need 4398046
    """
