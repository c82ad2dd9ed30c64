"""No kernel reads outside its input: inputs placed against an inaccessible page.

Vector kernels load whole registers; a block that strays one float past the
last window (or before the first) would read a neighbouring allocation,
usually harmlessly, which no value comparison can see. Here the input ends
exactly at (or starts exactly after) a PROT_NONE page, so such a read is a
segfault. Each layout runs in a fresh interpreter and must exit cleanly.
"""

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = """
import ctypes, mmap, sys
import numpy as np
import ovpool
from ovpool import _core
_core.TUNING["tile_prefetch_min_bytes"] = 0   # tiling calls prefetch ahead, past the end too
_core.TUNING["slab_prefetch_min_elements"] = 0   # the depth slab prefetches the next unit's rows
_core.TUNING["prefetch_min_elements"] = 0        # the row path prefetches rows ahead
_core.TUNING["prefetch_min_plane"] = 0
_core.TUNING["blocked_prefetch_out_bytes"] = 0   # the blocked kernel prefetches outputs

PAGE = mmap.PAGESIZE
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
keep = []


def guarded(values, at_end):
    # a copy of values whose bytes end at (at_end) or start after a PROT_NONE page
    nbytes = values.nbytes
    data_pages = -(-nbytes // PAGE)
    region = mmap.mmap(-1, (data_pages + 2) * PAGE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    keep.append(region)
    if at_end:
        guard = base + (data_pages + 1) * PAGE
        start = guard - nbytes
    else:
        guard = base
        start = base + PAGE
    assert libc.mprotect(guard, PAGE, 0) == 0, ctypes.get_errno()
    raw = (ctypes.c_char * nbytes).from_address(start)
    array = np.frombuffer(raw, dtype=values.dtype).reshape(values.shape)
    array[...] = values
    return array


rng = np.random.default_rng(7)
at_end = sys.argv[1] == "end"
calls = 0
for dtype in (np.float32, np.float64, np.float16, np.int8):
    for shape in [(1, 2, 9, 40), (1, 1, 8, 28), (2, 3, 14, 14), (1, 1, 7, 7), (1, 2, 6, 17),
                  (1, 1, 7, 17)]:
        x = guarded((rng.standard_normal(shape) * 3).astype(dtype), at_end)
        h, w = shape[2:]
        for k, s, p in [((3, 3), (2, 2), 1), ((3, 3), (2, 2), 0), ((3, 3), (1, 1), 1),
                        ((2, 2), (2, 2), 0),
                        ((1, 4), (1, 4), 0), ((4, 1), (4, 1), 0), ((2, 1), (2, 1), 0)]:
            if k[0] > h + 2 * p or k[1] > w + 2 * p:
                continue
            ovpool.max_pool(x, k, strides=s, pads=(p,) * 4)
            ovpool.max_pool(x, k, strides=s, pads=(p,) * 4, return_indices=True)
            if dtype != np.int8:
                ovpool.avg_pool(x, k, strides=s, pads=(p,) * 4)
                ovpool.lp_pool(x, k, strides=s, pads=(p,) * 4, p=2)
            calls += 4
        if dtype != np.int8:
            ovpool.adaptive_avg_pool(x, (max(1, h // 2), max(1, w // 2)))
            ovpool.adaptive_max_pool(x, (max(1, h // 2), max(1, w // 2)))
            ovpool.global_avg_pool(x)
            ovpool.lp_pool(x, (2, 2), p=2)
        ovpool.global_max_pool(x)
        calls += 5
x3 = guarded(rng.standard_normal((1, 2, 6, 10, 12)).astype(np.float32), at_end)
ovpool.max_pool(x3, (3, 3, 3), strides=(2, 2, 2), pads=(1,) * 6)
ovpool.avg_pool(x3, (2, 2, 2), strides=(2, 2, 2))
ovpool.adaptive_avg_pool(x3, (3, 5, 6))
for dtype in (np.float64, np.int8):   # the depth slab of max values, its tail block
    x3 = guarded((rng.standard_normal((2, 1, 5, 7, 9)) * 3).astype(dtype), at_end)
    ovpool.max_pool(x3, (2, 3, 3), strides=(1, 2, 2), pads=(0, 1, 1, 1, 1, 1))
xw = guarded(rng.standard_normal((1, 2, 9, 43)).astype(np.float32), at_end)
ovpool.adaptive_avg_pool(xw, (4, 5))   # bins of 8-9 taps: the last one's masked block
ovpool.adaptive_avg_pool(xw, (9, 9))   # bins of 5-6 taps: the last block of columns
ovpool.adaptive_avg_pool(guarded(rng.standard_normal((1, 2, 4, 9, 13)).astype(np.float32),
                                 at_end), (2, 4, 5))   # the same from the depth slab
x1 = guarded(rng.standard_normal((2, 3, 100)).astype(np.float32), at_end)
ovpool.adaptive_avg_pool(x1, 10)
ovpool.max_pool(x1, (3,), strides=(2,), pads=(1, 1), return_indices=True)
xs = guarded(rng.standard_normal((1, 3, 1001)).astype(np.float32), at_end)
xs2 = guarded(rng.standard_normal((1, 1, 4, 2003)).astype(np.float32), at_end)
for s in (3, 4, 5, 7):   # strided W windows: plain loads, the last blocks gathered
    for k in (2, 3, 5, 7):
        for p in sorted({0, k // 2}):
            for ceil in (False, True):
                ovpool.max_pool(xs, (k,), strides=(s,), pads=(p, p), ceil_mode=ceil)
                ovpool.avg_pool(xs, (k,), strides=(s,), pads=(p, p), ceil_mode=ceil)
                ovpool.max_pool(xs2, (1, k), strides=(1, s), pads=(0, p, 0, p), ceil_mode=ceil)
                ovpool.max_pool(xs2, (2, k), strides=(1, s), pads=(0, p, 0, p), ceil_mode=ceil)
                calls += 4
print("ok", calls)
"""


@pytest.mark.parametrize("layout", ["end", "start"])
def test_kernels_stay_inside_guarded_inputs(layout):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), layout],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert result.stdout.startswith("ok "), result.stdout
