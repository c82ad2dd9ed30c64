"""Compare two builds of ovpool bit for bit over every kernel path.

A refactor of the kernels must keep the results: this runs a fixed, seeded
set of calls (every op, dtype, index layout and the shapes each kernel path
exists for, small and large, with NaN, ties and signed zeros) through the
checkout's ``ovpool`` and through a copy of an earlier build imported under
another name, at 1 and 2 threads, and reports every output whose bits differ.

Make the earlier build importable under another name, e.g.::

    git worktree add /tmp/base <commit> && (cd /tmp/base && python setup.py build_ext --inplace)
    mkdir -p /tmp/base_pkg && cp -r /tmp/base/ovpool /tmp/base_pkg/ovpool_base
    python tools/compare_builds.py --baseline /tmp/base_pkg
    OVPOOL_ISA=baseline python tools/compare_builds.py --baseline /tmp/base_pkg

(both builds pick their ISA from ``OVPOOL_ISA`` alike).

Outputs that differ are sorted into three kinds, each counted and listed:

* sums (averages and Lp norms) in another summation order, all within
  ``--sum-rtol`` of the earlier build's (docs/reference/semantics.md says
  which kernel sums in which order);
* max values that differ only in the sign of a zero maximum (+0 and -0
  tied in a window; semantics.md says which zero each kernel keeps);
* anything else (values, indices, errors): a failure.

Exit status 1 when an output differs in the last kind, or in either of the
others with ``--bits`` (every output the same bits).
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import sys

import numpy as np


def _bits(a):
    a = np.asarray(a)
    if a.dtype.kind == "f" or a.dtype.kind == "V" or a.dtype.name == "bfloat16":
        return a.view(np.dtype(f"u{a.dtype.itemsize}"))
    return a


def _same(a, b):
    if isinstance(a, tuple) != isinstance(b, tuple):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(_bits(a), _bits(b))


SUM_OPS = (
    "avg_pool",
    "lp_pool",
    "adaptive_avg_pool",
    "global_avg_pool",
    "global_lp_pool",
    "ov AvgPool",
)


def _is_sum(name):
    op = name.split(" {")[0]
    if op.startswith("random "):
        op = " ".join(op.split()[2:])
    return op.startswith(SUM_OPS)


def _floats(a):
    a = np.asarray(a)
    return a.astype(np.float64) if a.dtype.kind == "f" or a.dtype.name == "bfloat16" else None


def _sums_close(got, want, rtol):
    """Same shape and dtype, NaN where the other has NaN, values within rtol."""
    g, w = _floats(got), _floats(want)
    if g is None or w is None or g.shape != w.shape or got.dtype != want.dtype:
        return False, 0.0
    if not np.array_equal(np.isnan(g), np.isnan(w)):
        return False, np.inf
    g, w = g[~np.isnan(g)], w[~np.isnan(w)]
    scale = np.maximum(np.abs(w), 1.0)
    worst = float(np.max(np.abs(g - w) / scale)) if g.size else 0.0
    return worst <= rtol, worst


def _zero_signs_only(got, want):
    """Every output the same bits but where both are zeros of unlike sign."""
    if isinstance(got, tuple) != isinstance(want, tuple):
        return False
    if isinstance(got, tuple):
        # values and indices: indices the same bits
        return (
            len(got) == len(want)
            and _zero_signs_only(got[0], want[0])
            and all(_same(x, y) for x, y in zip(got[1:], want[1:]))
        )
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype or _floats(got) is None:
        return False
    differ = _bits(got) != _bits(want)
    return bool(np.all((got[differ] == 0) & (want[differ] == 0)))


def _data(rng, shape, dtype, style):
    """Random input: normal values, with ties (rounded), NaN, or signed zeros."""
    import ml_dtypes

    if dtype != "bf16" and np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(info.min, int(info.max) + 1, size=shape)
        if style == "ties":
            x = x // 64
        return x.astype(dtype)
    x = rng.standard_normal(shape)
    if style == "ties":
        x = np.round(x * 2) / 2
    elif style == "nan":
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, size=max(1, flat.size // 997))] = np.nan
    elif style == "zeros":
        x = np.round(x) * 0.0 * np.sign(rng.standard_normal(shape))
    target = ml_dtypes.bfloat16 if dtype == "bf16" else dtype
    return x.astype(target)


FLOATS = (np.float32, np.float64, np.float16, "bf16")


class _Error:
    """An exception a call raised: builds must raise the same type and message."""

    def __init__(self, exc):
        self.text = f"{type(exc).__name__}: {exc}".replace("ovpool_base", "ovpool")

    def __repr__(self):
        return self.text


def _cases():
    """(name, fn(module) -> array or tuple); inputs are made once per case."""
    rng = np.random.default_rng(20)
    cases = []

    def add(name, shape, dtype, style, call):
        x = _data(rng, shape, dtype, style)
        dname = dtype if isinstance(dtype, str) else np.dtype(dtype).name
        cases.append((f"{name} {shape} {dname} {style}", lambda m, x=x: call(m, x)))

    styles = ("normal", "ties", "nan")

    # adaptive pools: tiles, narrow and wide bins, 1D spans, depth, big inputs
    adaptive = [
        ((2, 3, 28, 28), 7),
        ((2, 3, 30, 30), 7),
        ((2, 5, 50, 50), 7),
        ((2, 3, 100, 100), 7),
        ((1, 4, 1000), 100),
        ((1, 4, 1000), 7),
        ((2, 3, 10, 30, 30), (3, 7, 7)),
        ((1, 3, 16, 56, 56), (4, 7, 7)),
        ((2, 3, 8, 8), 11),
        ((3, 2, 7, 9), (3, 4)),
        ((8, 64, 14, 14), 7),
        ((1, 2, 60, 60), 40),
        ((2, 2, 5, 57), (5, 8)),
        ((1, 1, 41, 41), 3),
        ((2, 3, 16, 16), 1),
        ((1, 3, 64, 64), 8),
        ((2, 2, 51, 51), 7),
        ((4, 8, 10, 30, 30), (3, 7, 7)),
        ((2, 3, 6, 20, 20), (6, 5, 5)),
        ((8, 64, 28, 28), 7),
        ((2, 16, 56, 56), 7),
        ((1, 1, 3, 200), (2, 9)),
        # bins of one size at a step that does not divide the axis
        ((4, 16, 7, 7), (6, 7)),
        ((8, 64, 15, 15), 7),
        ((2, 24, 29, 29), 7),
        ((2, 8, 3, 57), (2, 7)),
        ((2, 9, 7, 22, 22), (6, 7, 7)),
        ((3, 5, 10), 3),
        ((2, 3, 1, 6), (3, 4)),
        # unequal bins the blocked kernel takes: 1D rows, few outputs, bins
        # of 8+ taps on small planes (bins_prefer_blocked)
        ((2, 8, 128), 7),
        ((2, 8, 512), 30),
        ((4, 16, 17, 17), (1, 7)),
        ((2, 8, 38, 38), 7),
        ((2, 8, 19, 19), (7, 6)),
        ((2, 8, 36, 36), 5),
        # bins of unequal size along D or H only: a tap list a row
        ((4, 8, 7, 7), (4, 7)),
        ((2, 8, 35, 14), (3, 7)),
        ((2, 8, 10, 7, 7), (6, 5, 7)),
        ((2, 8, 12, 12), (5, 12)),
    ]
    big = [
        ((8, 256, 30, 30), 7),
        ((2, 64, 224, 224), 100),
        ((4, 64, 10, 30, 30), (3, 7, 7)),
        ((8, 128, 28, 28), 7),
        ((8, 12, 16, 64, 64), (4, 7, 7)),
        ((8, 64, 50, 50), 7),
        ((16, 256, 7, 7), (6, 7)),
    ]
    for shape, size in adaptive + big:
        for dtype in FLOATS:
            for style in styles:
                if (shape, size) in big and (dtype != np.float32 or style != "normal"):
                    if dtype not in (np.float16,) or style != "normal":
                        continue
                add(
                    f"adaptive_avg_pool {size}",
                    shape,
                    dtype,
                    style,
                    lambda m, x, size=size: m.adaptive_avg_pool(x, size),
                )
                add(
                    f"adaptive_max_pool i64 {size}",
                    shape,
                    dtype,
                    style,
                    lambda m, x, size=size: m.adaptive_max_pool(x, size),
                )
        for dtype in (np.float32, np.int8, np.uint8):
            add(
                f"adaptive_max_pool i32 {size}",
                shape,
                dtype,
                "ties",
                lambda m, x, size=size: m.adaptive_max_pool(x, size, index_dtype=np.int32),
            )

    # windows of one element: groups of planes as rows of 1x1 tiles
    for shape in [(4, 16, 7, 7), (2, 8, 50), (2, 3, 3, 4, 5), (1, 2, 70, 70)]:
        k = (1,) * (len(shape) - 2)
        for dtype in FLOATS:
            for style in ("normal", "nan", "zeros"):
                add(
                    "adaptive_avg_pool to its size",
                    shape,
                    dtype,
                    style,
                    lambda m, x: m.adaptive_avg_pool(x, x.shape[2:]),
                )
                add(
                    "adaptive_max_pool to its size",
                    shape,
                    dtype,
                    style,
                    lambda m, x: m.adaptive_max_pool(x, x.shape[2:]),
                )
                add(f"avg_pool {k}", shape, dtype, style, lambda m, x, k=k: m.avg_pool(x, k))
                add(f"max_pool {k}", shape, dtype, style, lambda m, x, k=k: m.max_pool(x, k))
                for p in (1, 2, 3):
                    add(
                        f"lp_pool p {p} {k}",
                        shape,
                        dtype,
                        style,
                        lambda m, x, k=k, p=p: m.lp_pool(x, k, p=p),
                    )
        for dtype in (np.int8, np.uint8):
            add(f"max_pool {k}", shape, dtype, "ties", lambda m, x, k=k: m.max_pool(x, k))
    # fixed windows: (kernel, strides, pads, dilations, auto_pad, ceil, cip)
    fixed2d = [
        ((3, 3), (2, 2), (1, 1, 1, 1), None, "NOTSET", False, False),
        ((3, 3), (1, 1), (1, 1, 1, 1), None, "NOTSET", False, True),
        ((3, 3), (1, 1), (1, 1, 1, 1), None, "NOTSET", False, False),
        ((3, 3), (2, 2), None, None, "NOTSET", True, False),
        ((3, 3), (2, 2), (0, 0, 1, 1), None, "NOTSET", True, True),
        ((2, 2), (2, 2), None, None, "NOTSET", False, False),
        ((4, 4), (4, 4), None, None, "NOTSET", False, False),
        ((1, 4), (1, 4), None, None, "NOTSET", False, False),
        ((7, 7), (1, 1), (3, 3, 3, 3), None, "NOTSET", False, False),
        ((5, 5), (2, 2), (2, 2, 2, 2), None, "NOTSET", False, False),
        ((5, 5), (2, 2), (2, 2, 2, 2), None, "NOTSET", False, True),
        ((3, 3), (1, 1), None, (2, 2), "NOTSET", False, False),
        ((3, 2), (2, 3), None, (1, 2), "SAME_UPPER", False, False),
        ((3, 3), (2, 2), None, None, "SAME_LOWER", False, False),
        ((2, 3), (3, 1), None, None, "VALID", True, False),
        ((9, 9), (3, 3), (4, 4, 4, 4), None, "NOTSET", False, True),
        ((3, 3), (3, 3), (1, 1, 1, 1), None, "NOTSET", True, False),
        ((10, 3), (1, 2), (2, 1, 2, 1), None, "NOTSET", False, False),
        ((3, 12), (2, 4), (1, 5, 1, 5), None, "NOTSET", False, True),
    ]
    shapes2d = [(2, 3, 17, 19), (1, 4, 56, 56), (2, 2, 35, 35), (1, 2, 8, 64), (3, 2, 12, 12)]
    big2d = [
        ((16, 64, 56, 56), 0),
        ((4, 64, 112, 112), 0),
        ((16, 128, 56, 56), 5),
        ((2, 64, 112, 112), 3),
        ((16, 96, 71, 71), 9),
    ]
    for k, s, p, d, ap, ceil, cip in fixed2d:
        kw = dict(strides=s, pads=p, dilations=d, auto_pad=ap, ceil_mode=ceil)
        for shape in shapes2d:
            for dtype in FLOATS + (np.int8, np.uint8):
                is_float = any(dtype is f for f in FLOATS)
                style = "nan" if is_float and rng.random() < 0.4 else "ties"
                if is_float:
                    add(
                        f"avg_pool {k} {kw} cip={cip}",
                        shape,
                        dtype,
                        style,
                        lambda m, x, k=k, kw=kw, cip=cip: m.avg_pool(
                            x, k, count_include_pad=cip, **kw
                        ),
                    )
                    add(
                        f"lp_pool {k} {kw}",
                        shape,
                        dtype,
                        style,
                        lambda m, x, k=k, kw=kw: m.lp_pool(x, k, p=2, **kw),
                    )
                add(
                    f"max_pool {k} {kw}",
                    shape,
                    dtype,
                    style,
                    lambda m, x, k=k, kw=kw: m.max_pool(x, k, **kw),
                )
                add(
                    f"max_pool indices {k} {kw}",
                    shape,
                    dtype,
                    style,
                    lambda m, x, k=k, kw=kw: m.max_pool(x, k, return_indices=True, **kw),
                )
                add(
                    f"max_pool indices so=1 {k} {kw}",
                    shape,
                    dtype,
                    style,
                    lambda m, x, k=k, kw=kw: m.max_pool(
                        x, k, return_indices=True, storage_order=1, **kw
                    ),
                )
    for shape, which in big2d:
        k, s, p, d, ap, ceil, cip = fixed2d[which]
        kw = dict(strides=s, pads=p, dilations=d, auto_pad=ap, ceil_mode=ceil)
        for dtype in (np.float32, np.float16):
            add(
                f"avg_pool {k} {kw} cip={cip}",
                shape,
                dtype,
                "normal",
                lambda m, x, k=k, kw=kw, cip=cip: m.avg_pool(x, k, count_include_pad=cip, **kw),
            )
            add(
                f"max_pool {k} {kw}",
                shape,
                dtype,
                "normal",
                lambda m, x, k=k, kw=kw: m.max_pool(x, k, **kw),
            )
            add(
                f"max_pool indices {k} {kw}",
                shape,
                dtype,
                "normal",
                lambda m, x, k=k, kw=kw: m.max_pool(x, k, return_indices=True, **kw),
            )
        add(
            f"lp_pool {k} {kw}",
            shape,
            np.float32,
            "normal",
            lambda m, x, k=k, kw=kw: m.lp_pool(x, k, p=2, **kw),
        )

    # 1D and 3D
    for shape, k, s, p in [
        ((2, 3, 4000), 3, 2, (1, 1)),
        ((4, 8, 4000), 3, 1, (1, 1)),
        ((2, 3, 33), 5, 3, (2, 1)),
        ((1, 2, 100), 16, 3, (0, 0)),
        ((64, 64, 4000), 3, 1, (1, 1)),
    ]:
        for dtype in FLOATS:
            for p_lp in (1, 2, 3.5):
                add(
                    f"lp_pool 1d {k} s{s} p{p_lp}",
                    shape,
                    dtype,
                    "normal",
                    lambda m, x, k=k, s=s, p=p, p_lp=p_lp: m.lp_pool(
                        x, [k], p=p_lp, strides=[s], pads=list(p)
                    ),
                )
            add(
                f"avg_pool 1d {k} s{s}",
                shape,
                dtype,
                "nan",
                lambda m, x, k=k, s=s, p=p: m.avg_pool(x, [k], strides=[s], pads=list(p)),
            )
            add(
                f"max_pool 1d {k} s{s}",
                shape,
                dtype,
                "nan",
                lambda m, x, k=k, s=s, p=p: m.max_pool(
                    x, [k], strides=[s], pads=list(p), return_indices=True
                ),
            )
    for shape, k, s, p, d in [
        ((2, 3, 9, 11, 10), (3, 3, 3), (2, 2, 2), (1,) * 6, None),
        ((8, 16, 16, 28, 28), (3, 3, 3), (2, 2, 2), (1,) * 6, None),
        ((2, 2, 6, 7, 8), (2, 2, 2), (2, 2, 2), None, None),
        ((2, 2, 8, 9, 9), (3, 2, 2), (1, 2, 2), None, (2, 1, 1)),
        ((1, 2, 40, 40, 40), (3, 3, 3), (2, 2, 2), (1,) * 6, None),
        ((2, 4, 5, 16, 16), (2, 3, 3), (1, 1, 1), (0, 1, 1, 1, 1, 1), None),
        # slabs too large for L2: depth slice by slice, or rows
        # prefetched ahead on inputs of 2^21+ elements
        ((1, 2, 5, 190, 200), (2, 3, 3), (2, 2, 2), (0, 1, 1, 0, 1, 1), None),
        ((1, 2, 4, 200, 200), (3, 2, 2), (1, 2, 2), None, (1, 1, 2)),
        ((2, 8, 4, 200, 200), (2, 3, 3), (2, 1, 1), None, None),
    ]:
        for dtype in FLOATS:
            kw = dict(strides=s, pads=p, dilations=d)
            add(
                f"avg_pool 3d {k} {kw}",
                shape,
                dtype,
                "nan",
                lambda m, x, k=k, kw=kw: m.avg_pool(x, k, **kw),
            )
            add(
                f"max_pool 3d {k} {kw}",
                shape,
                dtype,
                "nan",
                lambda m, x, k=k, kw=kw: m.max_pool(x, k, **kw),
            )
            add(
                f"max_pool 3d indices {k} {kw}",
                shape,
                dtype,
                "normal",
                lambda m, x, k=k, kw=kw: m.max_pool(x, k, return_indices=True, **kw),
            )
            add(
                f"lp_pool 3d {k} {kw}",
                shape,
                dtype,
                "normal",
                lambda m, x, k=k, kw=kw: m.lp_pool(x, k, p=3, **kw),
            )

    # seeded random fixed windows, the spread of benchmarks/sweep.py: kernels
    # 1-7, strides 1-4, dilations 1-3, pads below the dilated kernel, ceil
    # modes, rows from 1 output to several vector blocks
    for i in range(120):
        n = 1 + i % 3
        k = [int(v) for v in rng.integers(1, 8, n)]
        s = [int(v) for v in rng.integers(1, 5, n)]
        d = [int(v) if rng.random() < 0.3 else 1 for v in rng.integers(1, 4, n)]
        reach = [(ki - 1) * di + 1 for ki, di in zip(k, d)]
        sizes = [int(r + rng.integers(0, 40 if n < 3 else 12)) for r in reach]
        p = [int(rng.integers(0, r // 2 + 1)) for r in reach] * 2
        ceil = bool(rng.random() < 0.3)
        shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), *sizes)
        kw = dict(strides=s, pads=p, dilations=d, ceil_mode=ceil)
        for dtype in (np.float32, np.float64, np.float16):
            style = ("normal", "nan", "ties")[i % 3]
            add(
                f"random {i} avg_pool {k} {kw}",
                shape,
                dtype,
                style,
                lambda m, x, k=k, kw=kw: m.avg_pool(x, k, count_include_pad=True, **kw),
            )
            add(
                f"random {i} max_pool {k} {kw}",
                shape,
                dtype,
                style,
                lambda m, x, k=k, kw=kw: m.max_pool(x, k, **kw),
            )
            add(
                f"random {i} lp_pool {k} {kw}",
                shape,
                dtype,
                style,
                lambda m, x, k=k, kw=kw: m.lp_pool(x, k, p=2, **kw),
            )
        add(
            f"random {i} max_pool {k} {kw}",
            shape,
            np.int8,
            "ties",
            lambda m, x, k=k, kw=kw: m.max_pool(x, k, **kw),
        )

    # signed zeros tied for the maximum, on enough planes for the blocked
    # kernel: the zero each kernel keeps (padding at the top, 4+ rows)
    for i in range(60):
        n = 1 + i % 3
        k = [int(v) for v in rng.integers(1, 7, n)]
        s = [int(v) for v in rng.integers(1, 4, n)]
        d = [int(v) if rng.random() < 0.2 else 1 for v in rng.integers(1, 3, n)]
        reach = [(ki - 1) * di + 1 for ki, di in zip(k, d)]
        sizes = [int(r + rng.integers(0, 30 if n < 3 else 10)) for r in reach]
        p = [int(rng.integers(0, r // 2 + 1)) for r in reach] * 2
        shape = (int(rng.integers(1, 3)), int(rng.integers(4, 17)), *sizes)
        kw = dict(strides=s, pads=p, dilations=d, ceil_mode=bool(rng.random() < 0.3))
        for dtype in (np.float32, np.float64, np.float16):
            add(
                f"zeros {i} max_pool {k} {kw}",
                shape,
                dtype,
                "zeros",
                lambda m, x, k=k, kw=kw: m.max_pool(x, k, **kw),
            )

    # global pools
    for shape in [
        (2, 3, 7, 7),
        (32, 64, 7, 7),
        (2, 3, 100, 100),
        (2, 5, 4099),
        (3, 2, 3, 4, 5),
        (128, 32, 7, 7),
        (2, 3, 1, 1),
        (1, 9, 8000),
        (8, 7, 5),
        (8, 32, 33, 33),
        (4, 64, 40, 41),
        (8, 256, 9, 9),
        (16, 256, 14, 14),
    ]:
        for dtype in FLOATS:
            for style in ("normal", "nan"):
                add("global_avg_pool", shape, dtype, style, lambda m, x: m.global_avg_pool(x))
                add("global_max_pool", shape, dtype, style, lambda m, x: m.global_max_pool(x))
                for p_lp in (1, 2, 2.5):
                    add(
                        f"global_lp_pool p{p_lp}",
                        shape,
                        dtype,
                        style,
                        lambda m, x, p_lp=p_lp: m.global_lp_pool(x, p=p_lp),
                    )
        for dtype in (np.int8, np.uint8):
            add("global_max_pool", shape, dtype, "ties", lambda m, x: m.global_max_pool(x))

    # OpenVINO variants
    for shape in [(2, 3, 9, 10), (1, 2, 17, 17), (2, 2, 6, 7, 8)]:
        n = len(shape) - 2
        for k, s, pb, pe, rt, ap in [
            ((3,) * n, (2,) * n, (1,) * n, (1,) * n, "ceil", "explicit"),
            ((2,) * n, (3,) * n, (0,) * n, (0,) * n, "ceil", "explicit"),
            ((3,) * n, (2,) * n, (0,) * n, (0,) * n, "ceil_torch", "same_upper"),
            ((4,) * n, (1,) * n, (2,) * n, (1,) * n, "floor", "explicit"),
        ]:
            for dtype in FLOATS:
                for exclude in (True, False):
                    add(
                        f"ov AvgPool {k} {s} {pb} {pe} {rt} {ap} ex={exclude}",
                        shape,
                        dtype,
                        "nan",
                        lambda m, x, a=(k, s, pb, pe), rt=rt, ap=ap, ex=exclude: m.ov_ops.avg_pool(
                            x, *a, exclude_pad=ex, rounding_type=rt, auto_pad=ap
                        ),
                    )
            for dtype in FLOATS + (np.int8,):
                for axis in range(n + 2):
                    add(
                        f"ov MaxPool {k} {s} {rt} axis={axis}",
                        shape,
                        dtype,
                        "ties",
                        lambda m, x, a=(k, s, pb, pe), rt=rt, ap=ap, axis=axis: m.ov_ops.max_pool(
                            x,
                            *a,
                            rounding_type=rt,
                            auto_pad=ap,
                            axis=axis,
                            index_element_type="i32",
                        ),
                    )

    # MaxUnpool of a MaxPool's indices
    for shape, k, s in [((2, 3, 8, 8), (2, 2), (2, 2)), ((1, 2, 9, 9, 9), (3, 3, 3), (2, 2, 2))]:
        for dtype in (np.float32, np.float64, np.float16, np.int8):
            x = _data(rng, shape, dtype, "normal")

            def unpool(m, x=x, k=k, s=s):
                values, idx = m.max_pool(x, k, strides=s, return_indices=True)
                return m.max_unpool(values, idx, k, strides=s)

            cases.append((f"max_unpool {shape} {np.dtype(dtype).name}", unpool))
    return cases


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--baseline", required=True, help="directory holding the earlier build as a package"
    )
    parser.add_argument("--name", default="ovpool_base", help="its package name")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--cases", default="*", help="glob over case names")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument(
        "--sum-rtol",
        type=float,
        default=1e-5,
        help="sums in another order within this relative difference (of the "
        "larger of 1 and the value; float16 and bfloat16: 1e-2)",
    )
    parser.add_argument(
        "--bits",
        action="store_true",
        help="every output the same bits: reordered sums and zero signs fail",
    )
    args = parser.parse_args(argv)

    import ovpool  # the checkout first: it owns "ovpool._kernels"

    sys.path.insert(0, args.baseline)
    base = importlib.import_module(args.name)
    importlib.import_module("ovpool.ov_ops")
    importlib.import_module(args.name + ".ov_ops")
    print(f"new: {ovpool.__file__} ({ovpool._isa.name}); base: {base.__file__} ({base._isa.name})")
    threads = [int(t) for t in args.threads.split(",")]
    failures = 0
    count = 0
    reordered, zero_signs = [], []
    worst_sum = 0.0
    for name, call in _cases():
        if not fnmatch.fnmatch(name, args.cases):
            continue
        for n in threads:
            ovpool.set_num_threads(n)
            base.set_num_threads(n)
            try:
                got = call(ovpool)
            except Exception as exc:  # a refactor must keep the errors too
                got = _Error(exc)
            try:
                want = call(base)
            except Exception as exc:
                want = _Error(exc)
            count += 1
            if isinstance(got, _Error) or isinstance(want, _Error):
                ok = repr(got) == repr(want)
            else:
                ok = _same(got, want)
                if not ok and _is_sum(name):
                    half = np.asarray(want).dtype.itemsize == 2
                    close, worst = _sums_close(got, want, 1e-2 if half else args.sum_rtol)
                    if close:
                        reordered.append(f"{name} ({n} threads)")
                        worst_sum = max(worst_sum, worst)
                        ok = not args.bits
                elif not ok and _zero_signs_only(got, want):
                    zero_signs.append(f"{name} ({n} threads)")
                    ok = not args.bits
            if not ok:
                failures += 1
                print(f"DIFFERS ({n} threads): {name}")
                if args.verbose:
                    print("   new: ", got if isinstance(got, _Error) else "arrays")
                    print("   base:", want if isinstance(want, _Error) else "arrays")
    for name in zero_signs:
        print(f"zero sign: {name}")
    if args.verbose:
        for name in reordered:
            print(f"sum order: {name}")
    print(
        f"{count} calls compared: {count - len(reordered) - len(zero_signs) - failures} the "
        f"same bits, {len(reordered)} sums in another order (at most {worst_sum:.2g} apart, "
        f"relative), {len(zero_signs)} max values apart only in the sign of a zero maximum, "
        f"{failures} differ"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
