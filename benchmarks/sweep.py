"""A seeded random sweep of pool configurations, drawn the way networks use them.

The benchmark's named cases are where the kernels were tuned; a sweep asks
how they do on shapes nobody tuned for. :func:`sweep_cases` draws ``count``
cases from a seed: the op (max pooling, with and without indices; averages,
with and without ``count_include_pad``; adaptive averages and maxima; global
pools; Lp pooling), the rank (mostly 2D, some 1D and 3D), kernels of 2-7 taps
(3 and 2 most often), strides of 1-3 (often the kernel's), symmetric pads up
to half the kernel, some dilations and ceil modes, adaptive outputs of 1-14,
spatial sizes of real feature maps, float32 or float16, and a batch x
channels that puts the input anywhere from 128 KiB to well beyond a 32 MiB
last-level cache. Every peer that supports a configuration is run beside
ovpool (the case builders of :mod:`cases` fill them in; a peer's
disagreement is recorded, as for the named cases).

``python benchmarks/run.py --sweep SEED [--sweep-count N]`` runs one; the
report adds the distributions of ovpool / best peer and ovpool / roofline.
Seed 1 is the one kernels are tuned on; seed 2 is only reported.
"""

from __future__ import annotations

import math
import random

try:
    from . import cases as cases_mod
except ImportError:  # run as a script from benchmarks/
    import cases as cases_mod  # type: ignore[no-redef]

__all__ = ["sweep_cases", "TUNE_SEED", "REPORT_SEED", "DEFAULT_COUNT"]

TUNE_SEED = 1
REPORT_SEED = 2
DEFAULT_COUNT = 64

# op families and how often networks have them
_OPS = [
    ("max_pool", 30),
    ("max_pool_indices", 8),
    ("avg_pool", 22),
    ("adaptive_avg", 14),
    ("adaptive_max", 7),
    ("global_avg", 8),
    ("global_max", 4),
    ("lp_pool", 3),
]
_RANKS = [(2, 70), (1, 15), (3, 15)]


def _pick(rng, weighted):
    values, weights = zip(*weighted)
    return rng.choices(values, weights)[0]


def _spatial(rng, rank):
    """Spatial dims of a feature map of this rank."""
    if rank == 1:
        return (rng.choice([64, 100, 128, 250, 256, 500, 512, 1000, 2048, 4000]),)
    if rank == 2:
        side = rng.choice([7, 8, 13, 14, 17, 19, 28, 32, 35, 38, 56, 64, 71, 75, 112, 128, 147])
        other = side if rng.random() < 0.8 else rng.choice([side - 1, side + 3, side // 2 + 5])
        return (side, max(2, other))
    depth = rng.choice([4, 8, 10, 16, 32])
    side = rng.choice([7, 14, 28, 32, 56])
    return (depth, side, side)


_CHANNELS = (3, 16, 24, 32, 48, 64, 96, 128, 160, 192, 256, 384, 512, 768, 1024, 2048)
_BATCHES = (1, 2, 4, 8, 16, 32, 64)


def _lead(rng, spatial, itemsize):
    """(N, C) of networks' sizes putting the input closest to a size drawn
    log-uniform from 128 KiB to 128 MiB (small feature maps cannot reach
    the top)."""
    target = 2 ** rng.uniform(17, 27)
    plane = math.prod(spatial) * itemsize
    candidates = [
        (abs(math.log(n * c * plane / target)), rng.random(), n, c)
        for n in _BATCHES
        for c in _CHANNELS
    ]
    _, _, n, c = min(candidates)
    return n, c


def _window(rng, spatial):
    """(kernel, stride, pad, dilation, ceil) that fit the input."""
    for _ in range(100):
        k = _pick(rng, [(2, 30), (3, 40), (4, 6), (5, 10), (6, 3), (7, 11)])
        s = _pick(rng, [(1, 35), (2, 50), (3, 15)])
        if rng.random() < 0.25:
            s = min(k, 3)
        d = 2 if rng.random() < 0.1 else 1
        ek = (k - 1) * d + 1
        p = rng.randint(0, ek // 2) if rng.random() < 0.6 else 0
        ceil = rng.random() < 0.25
        if all(n + 2 * p >= ek for n in spatial):
            return k, s, p, d, ceil
    return 2, 2, 0, 1, False


def sweep_cases(seed, count=DEFAULT_COUNT):
    """``count`` :class:`cases.Case` objects drawn from ``seed`` (same seed,
    same cases), named ``sweep<seed>_<i>_<what>``."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        op = _pick(rng, _OPS)
        rank = _pick(rng, _RANKS)
        dtype = "float16" if rng.random() < 0.2 and op != "lp_pool" else "float32"
        itemsize = 2 if dtype == "float16" else 4
        spatial = _spatial(rng, rank)
        n, c = _lead(rng, spatial, itemsize)
        shape = (n, c) + spatial
        dims = "x".join(map(str, shape))
        if op in ("max_pool", "max_pool_indices", "avg_pool", "lp_pool"):
            k, s, p, d, ceil = _window(rng, spatial)
            what = f"{op}_k{k}s{s}p{p}" + (f"d{d}" if d > 1 else "") + ("c" if ceil else "")
            name = f"sweep{seed}_{i:02d}_{what}_{dims}_{dtype}"
            if op == "avg_pool":
                cip = rng.random() < 0.3
                out.append(
                    cases_mod.avg_pool(
                        name + ("_cip" if cip else ""),
                        shape,
                        k,
                        s,
                        p,
                        ceil=ceil,
                        count_include_pad=cip,
                        dilation=d,
                        dtype=dtype,
                        group="sweep",
                    )
                )
            elif op == "lp_pool":
                out.append(
                    cases_mod.lp_pool(
                        f"sweep{seed}_{i:02d}_lp_pool_k{k}s{s}_{dims}_{dtype}",
                        shape,
                        k,
                        s,
                        p=2,
                        dtype=dtype,
                        group="sweep",
                    )
                )
            else:
                out.append(
                    cases_mod.max_pool(
                        name,
                        shape,
                        k,
                        s,
                        p,
                        ceil=ceil,
                        dilation=d,
                        indices=op == "max_pool_indices",
                        dtype=dtype,
                        group="sweep",
                    )
                )
        elif op in ("adaptive_avg", "adaptive_max"):
            size = tuple(
                min(
                    n_in,
                    _pick(
                        rng,
                        [
                            (1, 5),
                            (2, 5),
                            (3, 10),
                            (4, 8),
                            (5, 8),
                            (6, 8),
                            (7, 30),
                            (8, 8),
                            (9, 4),
                            (10, 4),
                            (12, 4),
                            (14, 6),
                        ],
                    ),
                )
                for n_in in spatial
            )
            name = f"sweep{seed}_{i:02d}_{op}_to{'x'.join(map(str, size))}_{dims}_{dtype}"
            build = cases_mod.adaptive_avg if op == "adaptive_avg" else cases_mod.adaptive_max
            out.append(build(name, shape, size, dtype=dtype, group="sweep"))
        else:
            name = f"sweep{seed}_{i:02d}_{op}_{dims}_{dtype}"
            build = cases_mod.global_avg if op == "global_avg" else cases_mod.global_max
            out.append(build(name, shape, dtype=dtype, group="sweep"))
    return out
