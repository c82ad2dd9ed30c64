"""Random calls of ovpool's numpy API, and their classification.

A case is made from ``(seed, index)`` alone (:func:`make_case`), so a worker
process regenerates it from two integers and a finding replays with
``python -m tools.fuzz --replay api:SEED:INDEX``.

Each case starts from a well-formed call: one of the 11 ops, an input of
rank 3 to 5 and a dtype the op takes (float16, bfloat16, float32, float64,
int8, uint8), laid out contiguous, Fortran-ordered, transposed, strided,
reversed (negative strides), broadcast or read-only, with NaN, infinities and
ties; its arguments written in the forms ovpool accepts (lists, tuples, numpy
arrays, numpy integers, one int for every axis) and, sometimes, ``out=``
buffers. One or two corruptions then replace an argument with a hostile value
(negative, zero, huge, a float, a string, None, a list of the wrong length),
the input with one of the wrong dtype, rank or size, or an ``out=`` with one of
the wrong shape, dtype or layout, read-only, or overlapping the input or the
other output.

The fuzzer keeps the meaning of every argument it can read as integers
(:class:`Semantics`): such a call is expected to fail when the spec says so
(kernel < 1, an empty window ovpool refuses, ...) and otherwise to return
what :mod:`tools.fuzz.oracle` computes (torch where it applies, else the
spec evaluated in numpy), and the same bits at 1, 2 and 7 threads.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from . import oracle
from .cases_ir import out_of_memory, same_bits, where_raised

OPS = (
    "adaptive_avg_pool",
    "adaptive_max_pool",
    "avg_pool",
    "max_pool",
    "lp_pool",
    "global_avg_pool",
    "global_max_pool",
    "global_lp_pool",
    "max_unpool",
    "ov.avg_pool",
    "ov.max_pool",
)
MAX_OPS = ("adaptive_max_pool", "max_pool", "global_max_pool", "max_unpool", "ov.max_pool")
THREADS = (1, 2, 7)
MAX_COMPARED = 32 << 20  # bytes of outputs compared across thread counts at most

HOSTILE_INTS = (-1, 0, -(2**63), 2**62, 2**63, 2**64, 10**30)
# Sizes within ovpool's caps (2**40) whose window tables or per-thread scratch
# may pass the memory budget where the output does not (an empty batch, SAME
# padding): the plan of issue 20 budgets those; until then they end in a bare
# MemoryError, a known open finding, so they are generated only with known_open.
MIDDLE_INTS = (2**20, 2**24, 2**26, 2**31, 2**40)
HOSTILE_OTHER = (
    1.5,
    "3",
    None,
    [],
    [1] * 7,
    True,
    float("nan"),
    b"2",
    object(),
    {"a": 1},
    np.array([[2]]),
    complex(1, 0),
    np.float32(2.0),
    "SAME_UPPER",
    [2, "x"],
    [2.0, 2.0],
    (None,),
    np.array([], np.int64),
)
HOSTILE_THREADS = (0, -1, 2.5, "2", True, np.float64(2), [2])
# thread counts no process on this machine can run (libgomp exits): issue 20's
LARGE_THREADS = (64, 1000, 2**31 - 1, 2**40)


class Semantics(dict):
    """What a call means, as plain ints and strings (None: not readable)."""


@dataclass
class Case:
    op: str
    x: object
    kwargs: dict
    sem: Semantics | None  # None: some argument has no integer meaning
    notes: list = field(default_factory=list)
    known_open: str | None = None  # the known open finding this case may hit

    def describe(self):
        x = self.x
        if isinstance(x, np.ndarray):
            xs = (
                f"x: ndarray{x.shape} {x.dtype} strides={x.strides} "
                f"contiguous={x.flags.c_contiguous} writeable={x.flags.writeable}"
            )
        else:
            xs = f"x: {type(x).__name__} {_short(x)}"
        args = ", ".join(f"{k}={_short(v)}" for k, v in self.kwargs.items())
        return f"{self.op}({xs}; {args}) [{'; '.join(self.notes)}]"


def _short(v, limit=80):
    if isinstance(v, np.ndarray):
        if v.size <= 8:
            return f"np.array({v.tolist()!r}, {v.dtype})"
        return f"ndarray{v.shape} {v.dtype} contiguous={v.flags.c_contiguous}"
    text = repr(v)
    return text if len(text) <= limit else text[:limit] + "..."


# --------------------------------------------------------------------------
# generation
# --------------------------------------------------------------------------


def _bf16():
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


def _dtype(rng, op):
    r = rng.random()
    if op in MAX_OPS and r < 0.2:
        return np.dtype(np.int8) if r < 0.1 else np.dtype(np.uint8)
    if r < 0.45:
        return np.dtype(np.float32)
    if r < 0.65:
        return np.dtype(np.float64)
    if r < 0.85:
        return np.dtype(np.float16)
    return _bf16()


def _values(rng, shape, dtype):
    n = math.prod(shape)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        span = (info.min, info.max + 1) if rng.random() < 0.5 else (max(info.min, -3), 4)
        return rng.integers(span[0], span[1], size=shape).astype(dtype)
    v = rng.standard_normal(shape)
    if rng.random() < 0.3:
        v = np.round(v * 2)  # ties
    if rng.random() < 0.1:
        v = v * 1e30 if dtype.itemsize >= 4 else v * 1e3
    if n and rng.random() < 0.15:
        flat = v.reshape(-1)
        for _ in range(int(rng.integers(1, 4))):
            flat[int(rng.integers(n))] = rng.choice([np.nan, np.inf, -np.inf])
    with np.errstate(over="ignore"):
        return v.astype(dtype)


def _layout(rng, shape, dtype, notes):
    """An array of ``shape`` and ``dtype`` laid out in a random way."""
    r = rng.random()
    if r < 0.5:
        return _values(rng, shape, dtype)
    if r < 0.58:
        notes.append("fortran")
        return np.asfortranarray(_values(rng, shape, dtype))
    if r < 0.66:
        notes.append("transposed")
        axes = list(range(len(shape)))
        rng.shuffle(axes)
        inverse = np.argsort(axes)
        base = _values(rng, tuple(shape[a] for a in axes), dtype)
        return base.transpose(inverse)
    if r < 0.74:
        notes.append("strided")
        big = _values(rng, shape[:-1] + (2 * shape[-1],), dtype)
        return big[..., ::2]
    if r < 0.82:
        notes.append("reversed")
        return (
            _values(rng, shape, dtype)[..., ::-1, :]
            if len(shape) > 3
            else _values(rng, shape, dtype)[:, ::-1]
        )
    if r < 0.9:
        notes.append("broadcast")
        base = _values(rng, (1,) + shape[1:], dtype)
        return np.broadcast_to(base, shape)
    notes.append("read-only")
    x = _values(rng, shape, dtype)
    x.setflags(write=False)
    return x


def _ints(rng, values, single_ok=True):
    """``values`` (a tuple of ints) in one of the forms ovpool accepts."""
    values = tuple(int(v) for v in values)
    r = rng.random()
    if single_ok and len(set(values)) == 1 and r < 0.2:
        return values[0] if rng.random() < 0.5 else np.int64(values[0])
    if r < 0.5:
        return list(values)
    if r < 0.7:
        return tuple(values)
    if r < 0.85:
        return np.array(values, dtype=np.int64 if rng.random() < 0.5 else np.int32)
    return [np.int64(v) for v in values]


def _window(rng, n, spatial, onnx):
    """kernel, strides, dilations, pads_begin, pads_end, auto_pad for n axes."""
    kernel = tuple(int(rng.integers(1, 4)) for _ in range(n))
    strides = tuple(int(rng.integers(1, 4)) for _ in range(n))
    dilations = tuple(int(rng.integers(1, 3)) if rng.random() < 0.3 else 1 for _ in range(n))
    begins = tuple(int(rng.integers(0, k)) if rng.random() < 0.5 else 0 for k in kernel)
    ends = tuple(int(rng.integers(0, k)) if rng.random() < 0.5 else 0 for k in kernel)
    if rng.random() < 0.5:
        ends = begins
    r = rng.random()
    auto = (
        "explicit"
        if r < 0.7
        else ("same_upper" if r < 0.8 else ("same_lower" if r < 0.9 else "valid"))
    )
    return kernel, strides, dilations, begins, ends, auto


_ONNX_AUTO = {
    "explicit": "NOTSET",
    "same_upper": "SAME_UPPER",
    "same_lower": "SAME_LOWER",
    "valid": "VALID",
}


def make_case(seed, index, known_open=False):
    """The API case ``index`` of run ``seed`` (deterministic)."""
    rng = np.random.default_rng([seed, 2, index])
    op = OPS[int(rng.integers(len(OPS)))]
    notes = []
    n = int(rng.integers(1, 4))
    lead = (
        int(rng.integers(0, 4)) if rng.random() < 0.05 else int(rng.integers(1, 4)),
        int(rng.integers(1, 5)),
    )
    spatial = tuple(int(rng.integers(1, 11 if n > 1 else 33)) for _ in range(n))
    dtype = _dtype(rng, op)
    shape = lead + spatial
    x = _layout(rng, shape, dtype, notes)
    kw = {}
    sem = Semantics(op=op, shape=shape, dtype=dtype, num_threads=None)
    if op.startswith("adaptive"):
        size = tuple(int(rng.integers(1, 13)) for _ in range(n))
        kw["output_size"] = _ints(rng, size)
        sem["output_size"] = size
        if op == "adaptive_max_pool":
            kw["index_dtype"] = [np.int32, np.int64, "i32", "i64", np.dtype(np.int32)][
                int(rng.integers(5))
            ]
            sem["index_dtype"] = (
                np.dtype(np.int32)
                if str(kw["index_dtype"]) in ("i32", "<class 'numpy.int32'>", "int32")
                else np.dtype(np.int64)
            )
    elif op in ("avg_pool", "max_pool", "lp_pool"):
        kernel, strides, dilations, begins, ends, auto = _window(rng, n, spatial, True)
        kw["kernel_shape"] = _ints(rng, kernel)
        if strides != (1,) * n or rng.random() < 0.5:
            kw["strides"] = _ints(rng, strides)
        if dilations != (1,) * n or rng.random() < 0.3:
            kw["dilations"] = _ints(rng, dilations)
        if auto == "explicit":
            if begins + ends != (0,) * 2 * n or rng.random() < 0.3:
                kw["pads"] = _ints(rng, begins + ends)
        else:
            begins = ends = (0,) * n
        if auto != "explicit" or rng.random() < 0.3:
            spelled = _ONNX_AUTO[auto]
            kw["auto_pad"] = spelled.lower() if rng.random() < 0.2 else spelled
        ceil = bool(rng.random() < 0.4)
        if ceil or rng.random() < 0.3:
            kw["ceil_mode"] = ceil if rng.random() < 0.8 else int(ceil)
        sem.update(
            kernel=kernel,
            strides=strides,
            dilations=dilations,
            pads_begin=begins,
            pads_end=ends,
            auto_pad=auto,
            rounding="ceil_torch" if ceil else "floor",
        )
        if op == "avg_pool":
            cip = bool(rng.random() < 0.5)
            kw["count_include_pad"] = cip
            sem["count_include_pad"] = cip
        if op == "max_pool":
            order = int(rng.random() < 0.3)
            if order or rng.random() < 0.3:
                kw["storage_order"] = order
            ret = bool(rng.random() < 0.6)
            kw["return_indices"] = ret
            sem.update(storage_order=order, return_indices=ret)
        if op == "lp_pool":
            p = float(rng.choice([1, 2, 3, 0.5, 1.5]))
            kw["p"] = p if rng.random() < 0.7 else (int(p) if p == int(p) else p)
            sem["p"] = p
    elif op.startswith("global"):
        if op == "global_lp_pool":
            p = float(rng.choice([1, 2, 3, 0.5]))
            kw["p"] = p
            sem["p"] = p
    elif op == "max_unpool":
        kernel = tuple(int(rng.integers(1, 4)) for _ in range(n))
        strides = tuple(int(rng.integers(1, 4)) for _ in range(n))
        begins = tuple(int(rng.integers(0, k)) if rng.random() < 0.3 else 0 for k in kernel)
        ends = tuple(int(rng.integers(0, k)) if rng.random() < 0.3 else 0 for k in kernel)
        default = tuple(
            (i - 1) * s + k - b - e for i, s, k, b, e in zip(spatial, strides, kernel, begins, ends)
        )
        kw["indices"] = None  # filled below, once the index space is known
        kw["kernel_shape"] = _ints(rng, kernel)
        if strides != (1,) * n or rng.random() < 0.5:
            kw["strides"] = _ints(rng, strides)
        if begins + ends != (0,) * 2 * n:
            kw["pads"] = _ints(rng, begins + ends)
        full = lead + default
        if min(default) >= 1 and rng.random() < 0.3:
            full = lead + tuple(d + int(rng.integers(0, 3)) for d in default)
            kw["output_shape"] = _ints(rng, full, single_ok=False)
        relative = "default_shape"
        if rng.random() < 0.3:
            relative = "output_shape"
            kw["indices_relative_to"] = relative
        space_shape = (lead + default) if relative == "default_shape" else full
        space = math.prod(space_shape) if min(default) >= 1 else 1
        indices = rng.integers(0, max(space, 1), size=shape)
        kw["indices"] = indices.astype(np.int64 if rng.random() < 0.7 else np.int32)
        sem.update(
            kernel=kernel,
            strides=strides,
            pads_begin=begins,
            pads_end=ends,
            default=lead + default,
            full=full,
            relative=relative,
            full_given="output_shape" in kw,
        )
    else:  # OpenVINO AvgPool / MaxPool
        kernel, strides, dilations, begins, ends, auto = _window(rng, n, spatial, False)
        args = [_ints(rng, kernel), _ints(rng, strides), _ints(rng, begins), _ints(rng, ends)]
        kw.update(kernel=args[0], strides=args[1], pads_begin=args[2], pads_end=args[3])
        kw["auto_pad"] = auto
        rounding = ("floor", "ceil", "ceil_torch")[int(rng.integers(3))]
        kw["rounding_type"] = rounding
        sem.update(
            kernel=kernel,
            strides=strides,
            pads_begin=begins,
            pads_end=ends,
            auto_pad=auto,
            rounding=rounding,
        )
        if op == "ov.avg_pool":
            exclude = bool(rng.random() < 0.6)
            kw["exclude_pad"] = exclude
            if dilations != (1,) * n:
                kw["dilations"] = _ints(rng, dilations)
            sem.update(exclude_pad=exclude, dilations=dilations)
        else:
            kw["dilations"] = _ints(rng, dilations)
            rank = 2 + n
            axis = int(rng.integers(-rank, rank))
            kw["axis"] = axis
            ietype = ("i32", "i64")[int(rng.integers(2))]
            kw["index_element_type"] = ietype
            ret = bool(rng.random() < 0.7)
            kw["return_indices"] = ret
            sem.update(
                dilations=dilations,
                axis=axis,
                index_dtype=np.dtype(np.int32 if ietype == "i32" else np.int64),
                return_indices=ret,
            )
    if op != "max_unpool" and rng.random() < 0.5:
        threads = THREADS[int(rng.integers(len(THREADS)))]
        kw["num_threads"] = threads
        sem["num_threads"] = threads
    case = Case(op, x, kw, sem, notes)
    _maybe_out(rng, case)
    for _ in range(int(rng.choice([0, 0, 0, 1, 1, 2]))):
        _corrupt(rng, case, known_open)
    return case


def expected_shape(sem):
    """The output shape the spec gives, or None (an error, or unknown)."""
    op, shape = sem["op"], sem["shape"]
    lead, spatial = shape[:2], shape[2:]
    if op.startswith("adaptive"):
        return lead + tuple(sem["output_size"])
    if op.startswith("global"):
        return lead + (1,) * len(spatial)
    if op == "max_unpool":
        if sem.get("full_given"):
            return sem["full"]
        default = tuple(
            (i - 1) * s + k - b - e
            for i, s, k, b, e in zip(
                spatial, sem["strides"], sem["kernel"], sem["pads_begin"], sem["pads_end"]
            )
        )
        return lead + default if min(default) >= 1 else None
    out = oracle.output_spatial(
        spatial,
        sem["kernel"],
        sem["strides"],
        sem["dilations"],
        sem["pads_begin"],
        sem["pads_end"],
        sem["auto_pad"],
        sem["rounding"],
    )
    return lead + out if min(out) >= 1 else None


def _maybe_out(rng, case):
    sem = case.sem
    if rng.random() > 0.15:
        return
    shape = expected_shape(sem)
    if shape is None or math.prod(shape) > 1 << 20:
        return
    x = case.x
    dtype = x.dtype
    case.kwargs["out"] = np.empty(shape, dtype)
    case.notes.append("out=")
    if case.op in ("adaptive_max_pool", "ov.max_pool") or (
        case.op == "max_pool" and sem.get("return_indices")
    ):
        if case.op != "ov.max_pool" or sem.get("return_indices"):
            case.kwargs["out_indices"] = np.empty(shape, sem.get("index_dtype", np.int64))
            case.notes.append("out_indices=")


_ARGUMENTS = (
    "output_size",
    "kernel_shape",
    "strides",
    "pads",
    "dilations",
    "kernel",
    "pads_begin",
    "pads_end",
    "output_shape",
    "axis",
    "storage_order",
    "p",
    "auto_pad",
    "ceil_mode",
    "count_include_pad",
    "return_indices",
    "exclude_pad",
    "rounding_type",
    "index_dtype",
    "index_element_type",
    "indices_relative_to",
)


def _corrupt(rng, case, known_open):
    kw = case.kwargs
    r = rng.random()
    if r < 0.45:
        names = [k for k in kw if k in _ARGUMENTS] or ["num_threads"]
        name = names[int(rng.integers(len(names)))]
        _corrupt_argument(rng, case, name, known_open)
    elif r < 0.6:
        if case.op == "max_unpool":
            _corrupt_argument(rng, case, "indices", known_open)
            return
        name = "num_threads"
        if known_open and rng.random() < 0.2:
            value = LARGE_THREADS[int(rng.integers(len(LARGE_THREADS)))]
            case.known_open = "large num_threads"
        else:
            value = HOSTILE_THREADS[int(rng.integers(len(HOSTILE_THREADS)))]
        kw[name] = value
        case.notes.append(f"num_threads={_short(value)}")
        if case.sem is not None:
            if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1:
                case.sem["num_threads"] = int(value)
                if case.sem.get("error") == "num_threads":
                    del case.sem["error"]  # (an earlier bad count, replaced)
            else:
                case.sem["error"] = "num_threads"
    elif r < 0.8:
        _corrupt_x(rng, case)
    else:
        _corrupt_out(rng, case)


# Arguments every spatial axis needs an entry of: empty, they are no
# identity (ONNX and OpenVINO refuse a pool without them).
REQUIRED = ("kernel_shape", "kernel", "output_size")


def _missing_or_mis_sized(rng, case, name):
    """The value of a per-axis argument taken away, emptied or given the
    wrong number of entries: the mutations the spec refuses (kept apart from
    the other hostile values, so that each front door meets them often)."""
    old = case.kwargs.get(name)
    n = len(case.sem["shape"]) - 2 if case.sem is not None else 2
    forms = [(), [], np.array([], np.int64), None, [2] * (n + 1)]
    if n > 1:
        forms.append([2] * (n - 1))
    if isinstance(old, (list, tuple)) and len(old) > 1:
        forms.append(list(old)[:-1])
    return forms[int(rng.integers(len(forms)))]


def _corrupt_argument(rng, case, name, known_open):
    kw = case.kwargs
    pool = HOSTILE_INTS + (MIDDLE_INTS if known_open else ())
    r = rng.random()
    if name in REQUIRED + ("strides", "dilations", "pads", "pads_begin", "pads_end") and (
        rng.random() < 0.35
    ):
        value = _missing_or_mis_sized(rng, case, name)
        kw[name] = value
        case.notes.append(f"{name}={_short(value)}")
        if case.sem is not None and case.sem.get("error") == "out":
            case.sem = None  # (the new default may make the bad out= right again)
        _update_semantics(case, name, value)
        _recheck_out(case)
        return
    if name == "indices":
        x = case.x
        shape = getattr(x, "shape", ())
        if math.prod(shape) > 1 << 16:  # (x may be a broadcast view of a huge shape)
            shape = (1, 1, 4)
        bad = [
            np.full(shape, -1),
            np.full(shape, 2**40),
            np.zeros((1,), np.int64),
            np.zeros(shape, np.float32),
            np.full(shape, 2**63, np.uint64),
            "abc",
            None,
        ]
        value = bad[int(rng.integers(len(bad)))]
        kw["indices"] = value
        case.notes.append(f"indices={_short(value)}")
        if (
            getattr(x, "size", 1) == 0
            and getattr(value, "shape", None) == shape
            and getattr(value, "dtype", np.dtype(object)).kind in "iu"
        ):
            case.sem = None  # (no index of an empty array can be bad)
        else:
            case.sem = None if case.sem is None else Semantics(case.sem, error="indices")
        return
    if r < 0.6:
        value = pool[int(rng.integers(len(pool)))]
        if value in MIDDLE_INTS:
            case.known_open = "window tables of a large output"
        if rng.random() < 0.4 and isinstance(kw.get(name), (list, tuple, np.ndarray)):
            old = list(kw[name])
            if old:
                old[int(rng.integers(len(old)))] = value
            value = old
    else:
        value = HOSTILE_OTHER[int(rng.integers(len(HOSTILE_OTHER)))]
    kw[name] = value
    case.notes.append(f"{name}={_short(value)}")
    _update_semantics(case, name, value)
    _recheck_out(case)


def _recheck_out(case):
    sem = case.sem
    if sem is not None and "error" not in sem and isinstance(case.kwargs.get("out"), np.ndarray):
        try:
            shape = expected_shape(sem)
        except (KeyError, TypeError):
            shape = None
        if shape != case.kwargs["out"].shape:
            sem["error"] = "out"  # the out= made for the arguments before


def _as_int_tuple(value):
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return (int(value),)
    if (
        isinstance(value, (list, tuple))
        and value
        and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in value
        )
    ):
        return tuple(int(v) for v in value)
    return None


_SEM_NAMES = {
    "output_size": "output_size",
    "kernel_shape": "kernel",
    "kernel": "kernel",
    "strides": "strides",
    "dilations": "dilations",
    "pads_begin": "pads_begin",
    "pads_end": "pads_end",
}


def _update_semantics(case, name, value):
    sem = case.sem
    if sem is None:
        return
    if sem.get("error") == name:
        del sem["error"]  # (an earlier bad value of this argument, replaced)
    ints = _as_int_tuple(value)
    n = len(sem["shape"]) - 2
    empty = (isinstance(value, (list, tuple)) and len(value) == 0) or (
        isinstance(value, np.ndarray) and value.ndim == 1 and value.size == 0
    )
    if name in REQUIRED and (empty or value is None):
        sem["error"] = name  # required: one entry per spatial axis
        return
    if empty or value is None:
        # an optional per-axis argument left out: its default
        if name in ("strides", "dilations"):
            sem[name] = (1,) * n
            return
        if name in ("pads", "pads_begin", "pads_end"):
            if name in ("pads", "pads_begin"):
                sem["pads_begin"] = (0,) * n
            if name in ("pads", "pads_end"):
                sem["pads_end"] = (0,) * n
            return
    if name in _SEM_NAMES and ints is not None:
        if len(ints) == 1 and not isinstance(value, (list, tuple)):
            ints = ints * n
        key = _SEM_NAMES[name]
        if len(ints) != n:
            sem["error"] = name
        else:
            sem[key] = ints
            minimum = 0 if key.startswith("pads") else 1
            if min(ints) < minimum:
                sem["error"] = name
        return
    if name == "pads" and ints is not None:
        if len(ints) == 1 and not isinstance(value, (list, tuple)):
            ints = ints * (2 * n)
        if len(ints) != 2 * n or min(ints) < 0:
            sem["error"] = name
        elif sem.get("auto_pad", "explicit") != "explicit" and any(ints):
            sem["error"] = name
        else:
            sem["pads_begin"], sem["pads_end"] = ints[:n], ints[n:]
        return
    # anything else: its meaning is not kept
    case.sem = None


def _corrupt_x(rng, case):
    x = case.x
    shape = getattr(x, "shape", (1, 1, 4))
    if len(shape) < 3 or math.prod(shape) > 1 << 16:
        shape = (1, 1, 4)
    r = rng.random()
    choices = [
        ("int32", lambda: np.ones(shape, np.int32)),
        ("int64", lambda: np.ones(shape, np.int64)),
        ("complex", lambda: np.ones(shape, np.complex64)),
        ("bool", lambda: np.ones(shape, bool)),
        ("object", lambda: np.full(shape, None, dtype=object)),
        ("str", lambda: np.full(shape, "a")),
        ("rank 0", lambda: np.float32(1.0)),
        ("rank 2", lambda: np.ones((2, 3), np.float32)),
        ("rank 6", lambda: np.ones((1, 1, 2, 2, 2, 2), np.float32)),
        ("empty spatial", lambda: np.ones(shape[:2] + (0,) * (len(shape) - 2), np.float32)),
        ("empty batch", lambda: np.ones((0,) + tuple(shape[1:]), np.float32)),
        (
            "broadcast huge",
            lambda: np.broadcast_to(np.float32(1.0), (1 << 14, 1 << 14) + tuple(shape[2:])),
        ),
        ("ragged list", lambda: [[[1.0, 2.0]], [[1.0]]]),
        ("None", lambda: None),
        ("string", lambda: "x"),
        (
            "nested list",
            lambda: (
                np.asarray(x, dtype=np.float64).tolist()
                if isinstance(x, np.ndarray) and x.dtype.kind == "f" and x.size < 4096
                else [[[1.0, 2.0]]]
            ),
        ),
    ]
    name, make = choices[int(r * len(choices))]
    case.x = make()
    case.notes.append(f"x: {name}")
    sem = case.sem
    if sem is None:
        return
    if name == "nested list":
        arr = np.asarray(case.x, dtype=np.float64)
        sem["shape"], sem["dtype"] = arr.shape, arr.dtype
        if arr.ndim not in (3, 4, 5) or arr.shape != shape or "out" in case.kwargs:
            case.sem = None
        return
    if name == "empty spatial" and case.op.startswith(("adaptive", "global")):
        case.sem = Semantics(sem, error="x")
        return
    if name in ("empty batch", "empty spatial"):
        case.sem = None  # the output's meaning is not checked, only its class
        return
    if name == "broadcast huge":
        case.sem = Semantics(sem, error="budget")
        return
    case.sem = Semantics(sem, error="x")


def _corrupt_out(rng, case):
    kw, x = case.kwargs, case.x
    shape = expected_shape(case.sem) if case.sem is not None and "error" not in case.sem else None
    if shape is None or not isinstance(x, np.ndarray) or math.prod(shape) > 1 << 16:
        shape = (1, 1, 3)
    dtype = x.dtype if isinstance(x, np.ndarray) else np.dtype(np.float32)
    if dtype.kind not in "fiub" and dtype.name != "bfloat16":
        dtype = np.dtype(np.float32)
    n = math.prod(shape)
    choices = [
        "wrong shape",
        "wrong dtype",
        "non-contiguous",
        "read-only",
        "a list",
        "overlaps x",
        "out_indices overlaps out",
        "out_indices wrong dtype",
    ]
    name = choices[int(rng.integers(len(choices)))]
    if name == "wrong shape":
        kw["out"] = np.empty(shape[:-1] + (shape[-1] + 1,), dtype)
    elif name == "wrong dtype":
        kw["out"] = np.empty(shape, np.float64 if dtype != np.float64 else np.float32)
    elif name == "non-contiguous":
        kw["out"] = np.empty(shape[:-1] + (2 * shape[-1],), dtype)[..., ::2]
    elif name == "read-only":
        out = np.empty(shape, dtype)
        out.setflags(write=False)
        kw["out"] = out
    elif name == "a list":
        kw["out"] = np.empty(shape, dtype).tolist()
    elif name == "overlaps x":
        if (
            isinstance(x, np.ndarray)
            and x.flags.c_contiguous
            and x.flags.writeable
            and x.size >= n > 0
            and x.dtype == dtype
        ):
            kw["out"] = x.reshape(-1)[x.size - n :].reshape(shape)
        else:
            name = "overlaps x (not made)"
    elif name.startswith("out_indices"):
        returns_indices = case.op == "adaptive_max_pool" or (
            case.op in ("max_pool", "ov.max_pool") and kw.get("return_indices") is True
        )
        if not returns_indices:
            # (an op without out_indices would raise Python's own TypeError)
            name = "wrong shape"
            kw["out"] = np.empty(shape[:-1] + (shape[-1] + 1,), dtype)
        elif name == "out_indices wrong dtype":
            kw["out_indices"] = np.empty(shape, np.float32)
        elif n == 0:
            name = "out_indices overlaps out (not made: empty)"
        else:
            raw = np.zeros(n * 8 + 64, np.uint8)
            kw["out"] = raw[: n * dtype.itemsize].view(dtype).reshape(shape)
            kw["out_indices"] = raw[: n * 8].view(np.int64).reshape(shape)
    case.notes.append(f"out: {name}")
    if name == "non-contiguous" and kw["out"].flags.c_contiguous:
        return  # (numpy calls an empty view contiguous)
    if case.sem is not None and "not made" not in name:
        case.sem = Semantics(case.sem, error="out")


# --------------------------------------------------------------------------
# running one case
# --------------------------------------------------------------------------


def _function(op):
    import ovpool
    from ovpool import ov_ops

    if op.startswith("ov."):
        return getattr(ov_ops, op[3:])
    return getattr(ovpool, op)


def _call(case, **override):
    kwargs = dict(case.kwargs)
    kwargs.update(override)
    fn = _function(case.op)
    x = case.x
    if case.op == "max_unpool":
        indices = kwargs.pop("indices")
        kernel = kwargs.pop("kernel_shape")
        return fn(x, indices, kernel, **kwargs)
    if case.op.startswith("ov."):
        args = [kwargs.pop(k) for k in ("kernel", "strides", "pads_begin", "pads_end")]
        return fn(x, *args, **kwargs)
    if case.op.startswith("adaptive"):
        return fn(x, kwargs.pop("output_size"), **kwargs)
    if case.op in ("avg_pool", "max_pool", "lp_pool"):
        return fn(x, kwargs.pop("kernel_shape"), **kwargs)
    return fn(x, **kwargs)


def _as_tuple(result):
    return tuple(result) if isinstance(result, tuple) else (result,)


def _reference(case):
    """(values, indices or None), None for an expected error; raises
    oracle.Unchecked where no reference applies."""
    sem = case.sem
    op = sem["op"]
    x = np.asarray(case.x)
    shape = x.shape
    if x.size and x.dtype.kind not in "fiu" and x.dtype.name != "bfloat16":
        return None
    if x.dtype.name == "bfloat16" or x.dtype.kind in "iu":
        xf = x.astype(np.float64)
    else:
        xf = x.astype(np.float64)
    lead, spatial = shape[:2], shape[2:]
    if 0 in spatial:
        if op.startswith(("adaptive", "global")):
            return None
        raise oracle.Unchecked("an empty spatial axis")
    if 0 in lead:
        raise oracle.Unchecked("an empty batch")
    if op.startswith("adaptive"):
        kind = "avg" if op == "adaptive_avg_pool" else "max"
        return _pair(oracle.adaptive_pool(xf, kind, sem["output_size"]))
    if op.startswith("global"):
        kind = {"global_avg_pool": "avg", "global_max_pool": "max", "global_lp_pool": "lp"}[op]
        return oracle.global_pool(xf, kind, sem.get("p", 2.0)), None
    if op == "max_unpool":
        idx = np.asarray(case.kwargs["indices"])
        if idx.shape != shape or idx.dtype.kind not in "iu":
            return None
        args = sem["kernel"] + sem["strides"] + sem["pads_begin"] + sem["pads_end"]
        if max(args) > 1 << 40:
            raise oracle.Unchecked("arguments beyond 2**40")
        default = lead + tuple(
            (i - 1) * s + k - b - e
            for i, s, k, b, e in zip(
                spatial, sem["strides"], sem["kernel"], sem["pads_begin"], sem["pads_end"]
            )
        )
        if min(default) < 1:
            return None
        full = sem["full"] if "output_shape" in case.kwargs else default
        if math.prod(full) > 1 << 24:
            raise oracle.Unchecked("output too large")
        if full[:2] != lead or any(f < d for f, d in zip(full, default)):
            return None
        out = oracle.max_unpool(xf, idx, default, full, sem["relative"])
        return (out, None) if out is not None else None
    if op == "ov.avg_pool":
        geometry_pads = _resolved_pads(sem, spatial)
        effective = [(k - 1) * d + 1 for k, d in zip(sem["kernel"], sem["dilations"])]
        if (
            sem["exclude_pad"]
            and sem["auto_pad"] == "explicit"
            and any(
                b >= e or p >= e for b, p, e in zip(sem["pads_begin"], sem["pads_end"], effective)
            )
        ):
            return None
        include = not sem["exclude_pad"] and any(geometry_pads)
        v = oracle.fixed_pool(
            xf,
            "avg",
            sem["kernel"],
            sem["strides"],
            sem["dilations"],
            sem["pads_begin"],
            sem["pads_end"],
            sem["auto_pad"],
            sem["rounding"],
            count_include_pad=include,
            empty="unchecked",
        )
        return (v, None) if v is not None else None
    if op == "ov.max_pool":
        rank = len(shape)
        if sem["return_indices"] and not -rank <= sem["axis"] < rank:
            return None
        res = oracle.fixed_pool(
            xf,
            "max",
            sem["kernel"],
            sem["strides"],
            sem["dilations"],
            sem["pads_begin"],
            sem["pads_end"],
            sem["auto_pad"],
            sem["rounding"],
            empty="unchecked",
        )
        if res is None:
            return None
        values, plane = res
        if not sem["return_indices"]:
            return values, None
        axis = sem["axis"] % rank
        plane_size = math.prod(spatial)
        if axis == 0:
            base = np.arange(lead[0] * lead[1]).reshape(lead + (1,) * len(spatial)) * plane_size
        elif axis == 1:
            base = np.arange(lead[1]).reshape((1, lead[1]) + (1,) * len(spatial)) * plane_size
        else:
            base = 0
            plane = plane % math.prod(spatial[axis - 2 :])
        return values, plane + base
    kind = {"avg_pool": "avg", "max_pool": "max", "lp_pool": "lp"}[op]
    res = oracle.fixed_pool(
        xf,
        kind,
        sem["kernel"],
        sem["strides"],
        sem["dilations"],
        sem["pads_begin"],
        sem["pads_end"],
        sem["auto_pad"],
        sem["rounding"],
        count_include_pad=sem.get("count_include_pad", False),
        p=sem.get("p", 2.0),
    )
    if res is None:
        return None
    if kind != "max":
        return res, None
    values, plane = res
    if not sem["return_indices"]:
        return values, None
    if sem["storage_order"] == 1:
        coords = np.unravel_index(plane, spatial)
        plane = np.ravel_multi_index(coords, spatial, order="F")
    plane_size = math.prod(spatial)
    base = np.arange(lead[0] * lead[1]).reshape(lead + (1,) * len(spatial)) * plane_size
    return values, plane + base


def _pair(res):
    return res if isinstance(res, tuple) else (res, None)


def _resolved_pads(sem, spatial):
    pads = []
    for a, n_in in enumerate(spatial):
        _, b, e = oracle.axis_geometry(
            n_in,
            sem["kernel"][a],
            sem["strides"][a],
            sem["dilations"][a],
            sem["pads_begin"][a],
            sem["pads_end"][a],
            sem["auto_pad"],
            sem["rounding"],
        )
        pads += [b, e]
    return pads


_RTOL = {"float64": 1e-10, "float32": 2e-5, "float16": 2e-3, "bfloat16": 1.6e-2}


def _compare(case, result, ref):
    """None if ``result`` matches ``ref``, else a description of the difference."""
    sem = case.sem
    values = result[0]
    ref_values, ref_indices = ref
    dtype = np.asarray(case.x).dtype
    if not isinstance(values, np.ndarray):
        return f"returned {type(values).__name__}, not an array"
    if values.dtype != dtype:
        return f"dtype {values.dtype}, expected {dtype}"
    if values.shape != ref_values.shape:
        return f"shape {values.shape}, expected {ref_values.shape}"
    got = values.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        want = (
            ref_values.astype(dtype).astype(np.float64)
            if dtype.kind == "f" or dtype.name == "bfloat16"
            else ref_values
        )
    op = sem["op"]
    exact = op in MAX_OPS
    if exact:
        bad = ~((got == want) | (np.isnan(got) & np.isnan(want)))
    else:
        rtol = _RTOL.get(dtype.name, 2e-5)
        xf = np.asarray(case.x).astype(np.float64)
        finite = np.isfinite(xf)
        scale = max(1.0, float(np.abs(xf[finite]).max())) if finite.any() else 1.0
        if op.endswith("lp_pool"):
            p = sem.get("p", 2.0)
            if scale**p > (1e30 if dtype.itemsize >= 4 else 6e4) or p < 1:
                raise oracle.Unchecked("|x|^p beyond the float range of the sums")
            scale = float(np.abs(want[np.isfinite(want)]).max()) if np.isfinite(want).any() else 1.0
        both_nan = np.isnan(got) & np.isnan(want)
        same_inf = np.isinf(got) & (got == want)
        close = np.abs(got - want) <= rtol * (scale + np.abs(want))
        bad = ~(both_nan | same_inf | close)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        return (
            f"values differ at {int(bad.sum())} of {bad.size} positions, first {where}: "
            f"{got[where]!r} vs reference {want[where]!r}"
        )
    if ref_indices is not None:
        if len(result) < 2:
            return "no indices returned"
        indices = result[1]
        want_dtype = sem.get("index_dtype", np.dtype(np.int64))
        if indices.dtype != want_dtype:
            return f"indices dtype {indices.dtype}, expected {want_dtype}"
        if not np.array_equal(indices, ref_indices):
            bad = np.argwhere(indices != ref_indices)[0]
            where = tuple(int(i) for i in bad)
            return (
                f"indices differ at {int((indices != ref_indices).sum())} positions, first "
                f"{where}: {int(indices[where])} vs reference {int(ref_indices[where])}"
            )
    return None


def _torch_agrees(case, ref):
    """Cross-check the numpy spec oracle against torch where torch applies
    (a disagreement is a defect of the fuzzer, reported as such)."""
    sem = case.sem
    op = sem["op"]
    x = np.asarray(case.x)
    if x.dtype.kind not in "f" and x.dtype.name != "bfloat16":
        return None
    xf = x.astype(np.float64)
    try:
        if op.startswith("adaptive"):
            kind = "avg" if op == "adaptive_avg_pool" else "max"
            t = _pair(oracle.torch_adaptive(xf, kind, sem["output_size"]))
        elif op in ("avg_pool", "max_pool"):
            kind = "avg" if op == "avg_pool" else "max"
            t = _pair(
                oracle.torch_fixed(
                    xf,
                    kind,
                    sem["kernel"],
                    sem["strides"],
                    sem["dilations"],
                    sem["pads_begin"],
                    sem["pads_end"],
                    sem["auto_pad"],
                    sem["rounding"],
                    sem.get("count_include_pad", False),
                )
            )
        else:
            return None
    except oracle.Unchecked:
        return None
    finite = np.isfinite(xf)
    scale = max(1.0, float(np.abs(xf[finite]).max())) if finite.any() else 1.0
    if not np.allclose(t[0], ref[0], rtol=1e-12, atol=1e-12 * scale, equal_nan=True):
        return "the spec oracle and torch disagree on the values"
    if t[1] is not None and ref[1] is not None:
        plane = ref[1] % max(1, math.prod(x.shape[2:]))
        if op == "max_pool" and sem["storage_order"] == 1:
            return None
        if not np.array_equal(t[1], plane):
            return "the spec oracle and torch disagree on the indices"
    return None


def run_case(case):
    """Run one case: (class, detail, checked). Classes: ok, ovpool-error,
    budget, refused-valid, accepted-invalid, wrong, threads, foreign, memory."""
    import ovpool

    sem = case.sem
    try:
        result = _call(case)
    except getattr(ovpool, "MemoryBudgetError", ()) as exc:  # (builds before issue 22: none)
        return "budget", str(exc)[:300], False
    except ovpool.OvpoolError as exc:
        if sem is not None and "error" not in sem:
            try:
                ref = _reference(case)
            except oracle.Unchecked:
                return "ovpool-error", str(exc)[:300], False
            if ref is not None:
                return "refused-valid", f"{type(exc).__name__}: {exc}"[:500], True
        return "ovpool-error", str(exc)[:300], False
    except MemoryError as exc:
        return "memory", "MemoryError: " + where_raised(exc), False
    except Exception as exc:  # the point: anything else is a finding
        return "foreign", f"{type(exc).__name__}: {exc} at {where_raised(exc)}"[:800], False
    if sem is None:
        return "ok", "", False
    if "error" in sem:
        if sem["error"] in ("budget",):
            return "ok", "", False
        return "accepted-invalid", f"accepted a bad {sem['error']}", True
    try:
        ref = _reference(case)
    except oracle.Unchecked:
        ref = "unchecked"
    if ref is None:
        return "accepted-invalid", "the spec makes this call an error", True
    checked = False
    if isinstance(ref, tuple):
        try:
            diff = _compare(case, _as_tuple(result), ref)
            checked = True
        except oracle.Unchecked:
            diff = None
        if diff is not None:
            return "wrong", diff, True
        disagreement = _torch_agrees(case, ref) if checked else None
        if disagreement is not None:
            return "oracle", disagreement, True
    # the same bits at every thread count (not for outputs whose copies would
    # take the worker's address space: that would be the fuzzer's memory)
    if case.op != "max_unpool" and sum(a.nbytes for a in _as_tuple(result)) <= MAX_COMPARED:
        first = [np.array(a, copy=True) for a in _as_tuple(result)]
        for n in THREADS:
            override = {"num_threads": n}
            if "out" in case.kwargs:
                override["out"] = None
            if "out_indices" in case.kwargs:
                override["out_indices"] = None
            try:
                again = _as_tuple(_call(case, **override))
            except MemoryError as exc:
                return "memory", f"num_threads={n}: MemoryError at {where_raised(exc)}", False
            except Exception as exc:  # a call that worked once fails again
                if isinstance(exc, ovpool.OvpoolError) and out_of_memory(exc):
                    return "ovpool-error", f"num_threads={n}: {exc}"[:300], False
                return "rerun", f"num_threads={n}: {type(exc).__name__}: {exc}"[:600], True
            if not same_bits(first, again):
                return "threads", f"num_threads={n} gives other bits than the first call", True
    return "ok", "", checked


def timed(case):
    start = time.perf_counter()
    cls, detail, checked = run_case(case)
    return cls, detail, checked, time.perf_counter() - start
