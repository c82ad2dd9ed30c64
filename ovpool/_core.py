"""Input normalisation, allocation and kernel dispatch shared by every op.

Python validates and allocates; Cython computes. The functions here turn an
array-like into contiguous ``(n_planes, plane_size)`` planes of a kernel dtype,
allocate the outputs (or check a caller's ``out=``), lift every rank to three
spatial axes, pick the thread count and call the kernels.

A :class:`Plan` holds everything that depends only on the shapes and the
attributes of a call (window tables, the horizontal-pass description, scratch
sizes). The ops cache plans by their arguments (:func:`cached`), so a repeated
call with the same shapes costs a dictionary lookup, not a re-validation.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass

import numpy as np

from . import _limits
from ._isa import kernels as _kernels
from ._limits import check_budget
from ._threads import resolve_num_threads
from .errors import OvpoolTypeError, OvpoolValueError
from .shapes import MAX_ELEMENTS, AxisWindows, adaptive_axis_windows

_NATIVE = (np.dtype(np.float32), np.dtype(np.float64))
_INT8 = (np.dtype(np.int8), np.dtype(np.uint8))

# Window description of a size-1 axis added when lifting 1D/2D pools to 3D.
_UNIT_TABLE = np.array([[0, 1, 1]], dtype=np.int64)
_UNIT_TABLE.setflags(write=False)
_UNIT_AXIS = AxisWindows(_UNIT_TABLE, 1, 1, 1, 0, True)

# Parallel work units per thread when planes are few (load balance).
_UNITS_PER_THREAD = 8

# Tiling pools whose windows use every input row take groups of consecutive
# planes as one plane of that many outputs at most (Plan.merged_tiling).
_MERGED_OUTPUTS = 4096

# Sum-pool modes of the kernels: average, then Lp with p = 1, 2, other.
_SUM_MODE_AVERAGE = 0

# Input rows the kernels prefetch ahead of the row they compute, and the input
# size (elements) below which they do not: a small input stays in the caches
# between calls, where the prefetches only cost (maxpool 3x3 s2 on
# 1x64x112x112: 0.133 -> 0.124 ms without them; on 4x64x112x112 they save
# 0.62 -> 0.51 ms, 4 rows ahead slightly better than 2).
_PREFETCH_ROWS = 4
_PREFETCH_MIN_ELEMENTS = 1 << 21
# Nor for planes under this many elements, which the hardware prefetcher
# streams through on its own (adaptive avg 8x256x50x50 -> 7x7 at 2 threads:
# 0.82 -> 0.74 ms without; 3x3 s1 on 35x35 planes the same either way).
_PREFETCH_MIN_PLANE = 8192

# Tiling windows (kernel == stride) on inputs of this many bytes or more
# prefetch the input this many bytes ahead of each output row: the hardware
# prefetcher alone left max and average 2x2 s2 on 16x128x56x56 float32
# (25.7 MB) 25-30% slower (paired at 2 threads: 1.06 -> 0.76 ms, 1.03 -> 0.78;
# adaptive 14->7 on 64x512x14x14 1.24 -> 0.98; 16 KiB ahead gained less, 1 KiB
# lost). Smaller inputs stay in this machine's 32 MiB L3 between calls, where
# the prefetches only cost (adaptive 28->7 on 8x512x28x28, 12.8 MB: 12% slower
# with them; the 2x2 s2 average in float16, 12.8 MB: 0-5%; 1x64x56x56: 4-10%).
_TILE_PREFETCH_MIN_BYTES = 16 << 20
_TILE_AHEAD_BYTES = 8192
# Pooling along D through the per-thread slab prefetches the next unit's slab
# rows into L2 on inputs of this many elements or more (16 MiB of float32),
# by the same rule: toggled alone at 2 threads, it cost adaptive 10x30x30 ->
# 3x7x7 19-29% at batch 4 and 6 (9.2, 13.8 MB; 0.228 -> 0.162 ms at batch 4)
# and adaptive 16x56x56 -> 4x7x7 10% at batch 1 (12.8 MB; 3x3x3 s2 max the
# same either way), and saved 7-34% from 18 MB up (the same planes at batch 8
# and 12, those at batch 2).
_SLAB_PREFETCH_MIN_ELEMENTS = 1 << 22


def _tile_ahead(x):
    """Bytes ahead of each run of tiling rows that the kernel prefetches."""
    return _TILE_AHEAD_BYTES if x.nbytes >= _TILE_PREFETCH_MIN_BYTES else 0

# Elements of per-thread scratch for the column sums of a group of output rows
# when pooling along D (kernels._sum_slices).
_SLICE_SCRATCH = 8192

# Largest per-thread slab of depth maxima or sums (kernels._pool_by_depth), bytes.
_SLAB_BYTES = 256 * 1024


def _is_bfloat16(dtype):
    # ml_dtypes.bfloat16, without importing it; its kind is "V" (void), and
    # the kind check first spares the other dtypes dtype.name (2 us a call)
    return dtype.kind == "V" and dtype.name == "bfloat16"


@dataclass
class Planes:
    """An input seen as contiguous planes of the kernel dtype."""

    planes: np.ndarray        # (n_planes, prod(spatial)), kernel dtype, C-contiguous
    lead: tuple               # (N, C)
    spatial: tuple            # the spatial shape, 1 to 3 dims
    result_dtype: np.dtype    # dtype of the values returned to the caller
    half: str = None          # "f16" / "bf16": planes hold the raw bits as uint16

    @property
    def n_spatial(self):
        return len(self.spatial)

    def widened(self):
        """The same planes as float32 (the fallback for 16-bit floats when a
        kernel's per-thread scratch would be too large)."""
        if self.half is None:
            return self
        values = self.planes.view(self.result_dtype).astype(np.float32)
        return Planes(values, self.lead, self.spatial, self.result_dtype)


def prepare(x, op, *, allow_int8=False, name="x"):
    """Validate ``x`` and view it as planes.

    float32/float64 are used as they are; float16 and bfloat16 are computed in
    float32 and returned in their own dtype; int8/uint8 only where
    ``allow_int8`` (the max ops). Anything else is a TypeError.
    """
    if isinstance(x, np.ndarray):
        array = x
    else:
        try:
            array = np.asarray(x)
        except (TypeError, ValueError) as exc:
            raise OvpoolTypeError(f"{op}: {name} is not a numeric array: {exc}") from None
    dtype = array.dtype
    half = None
    if dtype in _NATIVE or (allow_int8 and dtype in _INT8):
        kernel_dtype = dtype
    elif dtype == np.float16 or _is_bfloat16(dtype):
        kernel_dtype = dtype  # viewed as raw uint16 bits below
        half = "f16" if dtype == np.float16 else "bf16"
    else:
        allowed = "float16, bfloat16, float32, float64" + (", int8, uint8" if allow_int8 else "")
        raise OvpoolTypeError(f"{op}: unsupported dtype {dtype} of {name}; expected one of {allowed}")
    if array.ndim not in (3, 4, 5):
        raise OvpoolValueError(
            f"{op}: {name} must have shape (N, C, D1[, D2[, D3]]) with 1 to 3 spatial dims, "
            f"got shape {array.shape}")
    lead = array.shape[:2]
    spatial = array.shape[2:]
    plane_size = 1
    for n in spatial:
        plane_size *= n
    if not array.flags.c_contiguous:
        # the copy needs the view's logical size: a broadcast view of a few
        # bytes may claim terabytes
        check_budget(op, f"a contiguous copy of {name}", array.size * dtype.itemsize,
                     array.shape, dtype)
    try:
        planes = np.ascontiguousarray(array, dtype=kernel_dtype).reshape(lead[0] * lead[1],
                                                                         plane_size)
    except MemoryError:
        raise OvpoolValueError(f"{op}: out of memory for a contiguous copy of {name} of shape "
                               f"{array.shape}") from None
    if half is not None:
        planes = planes.view(np.uint16)
    return Planes(planes, lead, spatial, dtype, half)


# --------------------------------------------------------------------------
# plans and their cache
# --------------------------------------------------------------------------

class Plan:
    """The shape-dependent part of one pool call (immutable, shareable between
    threads): lifted window tables, horizontal-pass description, scratch sizes."""

    def __init__(self, lead, spatial, windows):
        axes = [_UNIT_AXIS] * (3 - len(spatial)) + list(windows)
        self.axes = tuple(axes)
        self.lead = tuple(lead)
        self.in_dhw = (1,) * (3 - len(spatial)) + tuple(spatial)
        self.out_dhw = tuple(a.n_out for a in axes)
        self.out_spatial = self.out_dhw[3 - len(spatial):]
        self.full_shape = self.lead + self.out_spatial
        self.n_planes = self.lead[0] * self.lead[1]
        self.in_plane = self.in_dhw[0] * self.in_dhw[1] * self.in_dhw[2]
        self.out_plane = self.out_dhw[0] * self.out_dhw[1] * self.out_dhw[2]
        self.rows_per_plane = self.out_dhw[0] * self.out_dhw[1]
        total = self.n_planes * self.out_plane
        if total > MAX_ELEMENTS:
            raise OvpoolValueError(f"output shape {self.full_shape} is absurdly large")
        self.tables = tuple(a.table for a in axes)
        self.dilations = tuple(a.dilation for a in axes)
        w_axis, in_w = axes[2], self.in_dhw[2]
        if w_axis.uniform:
            needed = (w_axis.n_out - 1) * w_axis.stride + (w_axis.kernel - 1) * w_axis.dilation + 1
            self.buffer_width = max(w_axis.pad_begin + in_w, needed)
            self.w_args = (True, w_axis.kernel, w_axis.stride, w_axis.pad_begin)
            # a window row can be read in place when no tap falls in padding
            self.direct_w = w_axis.pad_begin == 0 and needed <= in_w
            # outputs whose every tap lies inside the input (vectorised argmax)
            s, p, reach = w_axis.stride, w_axis.pad_begin, (w_axis.kernel - 1) * w_axis.dilation
            lo = -(-p // s)
            hi = (in_w - 1 + p - reach) // s + 1 if in_w - 1 + p - reach >= 0 else 0
            lo, hi = min(lo, w_axis.n_out), max(0, min(hi, w_axis.n_out))
            self.interior = (lo, hi) if lo < hi else (0, 0)
        else:
            self.buffer_width = in_w
            self.w_args = (False, 1, 1, 0)
            self.direct_w = True
            self.interior = (0, 0)
        if self.in_dhw[0] * self.in_dhw[1] * in_w >= 2 ** 31:
            self.interior = (0, 0)  # in-plane offsets are int32 in the vectorised argmax
        self.max_rows = max(1, int(axes[0].table[:, 1].max()) * int(axes[1].table[:, 1].max()))
        # prefetch: the rows a window advances by per output row, so many ahead.
        # Only when consecutive output rows share input rows (overlapping
        # windows read several streams at once); tiling windows and 1D pools
        # stream through the input, which the hardware prefetcher follows
        # better than 4 rows ahead (measured: aap1d 4.5 -> 3.3 ms, aap3d 4.7 ->
        # 3.5 ms; large tiling inputs prefetch 8 KiB ahead, _TILE_AHEAD_BYTES).
        row_step = max(1, self.in_dhw[1] // max(1, self.out_dhw[1]))
        overlapping = int(axes[1].table[:, 1].max()) > row_step
        self.prefetch_block = row_step * in_w
        streams = (overlapping and self.n_planes * self.in_plane >= _PREFETCH_MIN_ELEMENTS
                   and self.in_plane >= _PREFETCH_MIN_PLANE)
        self.prefetch = _PREFETCH_ROWS * self.prefetch_block if streams else 0
        self.is_global = all(
            a.n_out == 1 and tuple(a.table[0]) == (0, n_in, n_in) and (n_in == 1 or a.dilation == 1)
            for a, n_in in zip(axes, self.in_dhw))
        self.tiling = self._tiling()
        self.empty_axes = tuple((i, np.flatnonzero(a.table[:, 1] == 0))
                                for i, a in enumerate(axes) if (a.table[:, 1] == 0).any())
        # pooling along D without a slab (below; and Lp pooling): the kernels
        # read one depth slice at a time for groups of output rows whose column
        # sums fit in 32 KiB of scratch (f32), unless they prefetch the window
        # rows (overlapping windows of a large input: maxpool3d 3x3x3 s2 at 2
        # threads 3.72 ms by slices, 3.49 by rows with prefetch; aap3d 4x8x8
        # tiles 2.52 by slices, 3.47 by rows)
        pools_depth = int(axes[0].table[:, 1].max()) > 1
        self.slice_rows = (min(self.out_dhw[1], max(1, _SLICE_SCRATCH // self.buffer_width))
                           if pools_depth and not self.prefetch else 0)
        # max values and averages pooled along D: the depth maxima or sums of
        # one output depth go into a per-thread slab of the input rows the H
        # windows read, when it fits in a quarter of L2 (kernels._pool_by_depth;
        # at 2 threads, in process, before -> after: maxpool3d 3x3x3 s2 3.63 ->
        # 3.16 ms, avgpool3d 3.75 -> 3.00, aap3d 2.98 -> 2.37, aap3d_overlap
        # 0.48 -> 0.33)
        h_used = axes[1].table[axes[1].table[:, 1] > 0]
        self.slab_rows = (0, 0)
        if pools_depth and len(h_used) and self.in_dhw[1] * in_w * 8 <= _SLAB_BYTES:
            reach = h_used[:, 0] + (h_used[:, 1] - 1) * axes[1].dilation + 1
            self.slab_rows = (int(h_used[:, 0].min()), int(reach.max()))
        # the next unit's slab rows are prefetched (into L2: into L1 they
        # evicted the current slab; maxpool3d 3x3x3 s2 5.5 ms at 1 thread with
        # L2 prefetch, 7.0 with L1 prefetch, 6.6 without a slab)
        self.slab_prefetch = self.n_planes * self.in_plane >= _SLAB_PREFETCH_MIN_ELEMENTS
        div_w = self.tables[2][:, 2]
        self.geometry = _kernels.Geometry(
            *self.in_dhw, *self.tables, *self.dilations, *self.w_args, self.buffer_width,
            self.max_rows, self.prefetch, self.prefetch_block, self.direct_w, *self.interior,
            np.ascontiguousarray(div_w, dtype=np.float32),
            np.ascontiguousarray(div_w, dtype=np.float64), self.slice_rows, *self.slab_rows,
            self.slab_prefetch)

    @functools.cached_property
    def merged_tiling(self):
        """This tiling pool over groups of consecutive planes, each group seen
        as one plane of its rows stacked (the same windows, so the same
        results), or None.

        Where the tiles use every input row, the input rows of plane p + 1
        follow those of plane p with no gap, and so do the output rows: a
        group is one tall plane. The kernels then take long runs of rows
        instead of one call per small plane (in a run, float16 takes two
        rows at a time; a 7-row plane left one row alone). Paired in one
        process at 2 and 1 threads: adaptive 28->7 on 8x512 planes 0.83x and
        0.89x in float32, 0.80x and 0.75x in float16 (at batch 1 0.85-0.90x
        and 0.81x), 14->7 on 64x512 planes 0.75x; 2x2 s2 on 56x56 planes, 784
        outputs each, the same either way. Values only: indices count within
        each original plane."""
        if self.tiling is None or self.n_planes < 2:
            return None
        rows_in = self.in_dhw[0] * self.in_dhw[1]
        rows_out = self.out_dhw[0] * self.out_dhw[1]
        if rows_in != rows_out * self.tiling[0] or self.n_planes * self.in_plane >= 2 ** 31:
            return None
        group = min(self.n_planes, max(1, _MERGED_OUTPUTS // self.out_plane))
        while self.n_planes % group:
            group -= 1
        if group < 2:
            return None
        rows_axis = adaptive_axis_windows(group * rows_in, group * rows_out)
        return Plan((self.n_planes // group, 1), (group * rows_in, self.in_dhw[2]),
                    [rows_axis, self.axes[2]])

    def _tiling(self):
        """(kh, kw) when every window is a full kh x kw tile at stride (kh, kw)
        with no padding and no pooling along D (kernels.tile_pool), else None."""
        d_axis, h_axis, w_axis = self.axes
        if d_axis.n_out != self.in_dhw[0] or (d_axis.table[:, 1] != 1).any() or \
                (d_axis.table[:, 0] != np.arange(d_axis.n_out)).any():
            return None
        sizes = []
        for axis in (h_axis, w_axis):
            k = axis.kernel
            if not (axis.uniform and axis.stride == k and axis.pad_begin == 0
                    and axis.dilation == 1 and 1 <= k <= 4):
                return None
            if (axis.table[:, 1] != k).any() or (axis.table[:, 2] != k).any():
                return None
            sizes.append(k)
        return tuple(sizes) if sizes != [1, 1] else None

    def threads(self, num_threads):
        """(n_threads, rows_per_block) for a call."""
        work = self.n_planes * self.rows_per_plane
        n_threads = resolve_num_threads(num_threads, work,
                                        self.n_planes * (self.in_plane + self.out_plane))
        if self.n_planes >= _UNITS_PER_THREAD * n_threads:
            rows_per_block = self.rows_per_plane
        else:
            rows_per_block = max(1, -(-work // (_UNITS_PER_THREAD * n_threads)))
        return n_threads, rows_per_block


_CACHE_SIZE = 256
_cache = {}
_cache_lock = threading.Lock()


_TAG = object()  # marks frozen non-int values
_TYPED_SCALARS = frozenset([int, float, bool, np.int64, np.int32, np.float64, np.float32,
                            np.bool_])


def _freeze(value):
    """A hashable stand-in for an argument (lists and arrays become tuples).

    Scalars keep their type: 2.0 == 2 and True == 1, but only the int is a
    valid size, so they must not share a cached plan. Exact type checks (not
    isinstance) keep this cheap: it runs on every call.
    """
    kind = type(value)
    if kind is int or kind is str or value is None:
        return value
    if kind is tuple or kind is list:
        for v in value:
            if type(v) is not int:
                return tuple([_freeze(v) for v in value])
        return tuple(value)  # the common case: plain ints
    if kind in _TYPED_SCALARS:
        return (_TAG, kind, value)  # equal to no argument a caller can write
    if kind is np.ndarray:
        return (_TAG, value.dtype.str, value.shape, value.tobytes())
    if kind is np.dtype or kind is type:
        return value
    raise TypeError  # not cacheable: the caller builds without the cache


def cached(key_parts, build):
    """``build()``, memoised by the hashable form of ``key_parts``.

    Only successful builds are cached; an argument that cannot be frozen
    bypasses the cache (the build then validates and reports it).
    """
    try:
        key = _freeze(key_parts)
        hash(key)
    except TypeError:
        return build()
    value = _cache.get(key)
    if value is None:
        value = build()
        with _cache_lock:
            if len(_cache) >= _CACHE_SIZE:
                _cache.pop(next(iter(_cache)))
            _cache[key] = value
    return value


# --------------------------------------------------------------------------
# allocation
# --------------------------------------------------------------------------

def _check_out(out, shape, dtype, op, name, source, others=()):
    """``out`` as the caller's buffer for output ``name``: shape, dtype,
    layout, and no memory shared with ``source`` (the input the kernel reads)
    nor with any array of ``others``, ``(name, array)`` pairs (the other
    inputs and outputs of the call): a kernel writing into what it reads, or
    two outputs into one buffer, would return wrong values."""
    if not isinstance(out, np.ndarray):
        raise OvpoolTypeError(f"{op}: {name} must be a numpy array, got {type(out).__name__}")
    if out.shape != tuple(shape) or out.dtype != dtype:
        raise OvpoolValueError(
            f"{op}: {name} must have shape {tuple(shape)} and dtype {dtype}, "
            f"got shape {out.shape} and dtype {out.dtype}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise OvpoolValueError(f"{op}: {name} must be C-contiguous and writeable")
    if source is not None and np.shares_memory(out, source):
        raise OvpoolValueError(f"{op}: {name} must not overlap the input")
    for other_name, other in others:
        # (every array here is C-contiguous: the exact test is a bounds test)
        if other is not None and np.shares_memory(out, other):
            raise OvpoolValueError(f"{op}: {name} must not overlap {other_name}")
    return out


def allocate(shape, dtype, out, op, name, source, result_dtype=None, others=()):
    """The array the kernel writes: ``out`` itself when it has the kernel
    dtype, else a new array (copied into ``out`` by :func:`finish`).
    ``out`` must have ``result_dtype``, the dtype returned to the caller, and
    share no memory with ``source`` nor ``others`` (see :func:`_check_out`)."""
    total = 1
    for n in shape:
        total *= n
    if total > MAX_ELEMENTS:
        raise OvpoolValueError(f"{op}: output shape {tuple(shape)} is absurdly large")
    if out is not None:
        _check_out(out, shape, dtype if result_dtype is None else result_dtype, op, name, source,
                   others)
        if out.dtype == dtype:
            return out
    nbytes = total * dtype.itemsize
    if nbytes > _limits._budget:   # (the call only when over: it is on every call's path)
        check_budget(op, name, nbytes, shape, dtype)
    try:
        return np.empty(shape, dtype=dtype)
    except (MemoryError, ValueError) as exc:
        raise OvpoolValueError(f"{op}: cannot allocate output of shape {tuple(shape)}: {exc}") from None


def finish(result, result_dtype, out):
    """Cast back to the caller's dtype (float16, bfloat16) and fill ``out``.

    The cast rounds; values beyond float16's range (such as the -FLT_MAX of a
    max window with no input) become infinities, as OpenVINO's f16 gives."""
    if out is not None:
        if out is not result:
            with np.errstate(over="ignore"):
                out[...] = result
        return out
    if result.dtype != result_dtype:
        with np.errstate(over="ignore"):  # (entering errstate costs a microsecond)
            return result.astype(result_dtype)
    return result


# --------------------------------------------------------------------------
# kernel calls
# --------------------------------------------------------------------------

def _sum_mode(p):
    if p is None:
        return _SUM_MODE_AVERAGE
    return {1.0: 1, 2.0: 2}.get(float(p), 3)


# Per-thread scratch a 16-bit-float kernel may allocate before ovpool widens
# the whole input to float32 instead.
_HALF_SCRATCH_LIMIT = 8 << 20


def _half_output(plan, out, op, planes):
    """(array the 16-bit kernel writes as uint16, array returned to the caller)."""
    if out is not None:
        _check_out(out, plan.full_shape, planes.result_dtype, op, "out", planes.planes)
        return out.view(np.uint16), out
    bits = allocate(plan.full_shape, np.dtype(np.uint16), None, op, "out", None)
    return bits, bits.view(planes.result_dtype)


def _tile_pool(plan, x, flat_out, is_max, num_threads, half=None):
    """A values-only tiling call (kernels.tile_pool; half_tile_pool for the raw
    bits of 16-bit floats, ``half`` "f16" or "bf16"), over groups of planes
    where the plan allows it (:attr:`Plan.merged_tiling`)."""
    tiles = plan.merged_tiling or plan
    if tiles is not plan:
        x = x.reshape(tiles.n_planes, tiles.in_plane)
        flat_out = flat_out.reshape(tiles.n_planes, tiles.out_plane)
    n_threads, rows_per_block = tiles.threads(num_threads)
    if half is None:
        _kernels.tile_pool(x, flat_out, tiles.geometry, *tiles.tiling, is_max, rows_per_block,
                           n_threads, _tile_ahead(x))
    else:
        _kernels.half_tile_pool(x, flat_out, tiles.geometry, *tiles.tiling, is_max,
                                half == "bf16", rows_per_block, n_threads, _tile_ahead(x))


def run_sum_pool(planes, plan, *, op, p=None, num_threads=None, out=None):
    """Average pooling (``p is None``) or Lp pooling of ``planes`` by ``plan``."""
    if planes.half is not None:
        if 4 * plan.max_rows * plan.in_dhw[2] <= _HALF_SCRATCH_LIMIT:
            return _run_half(planes, plan, op=op, kind=_sum_mode(p), p=p,
                             num_threads=num_threads, out=out)
        planes = planes.widened()
    x = planes.planes
    result = allocate(plan.full_shape, x.dtype, out, op, "out", x, planes.result_dtype)
    if plan.n_planes == 0 or plan.out_plane == 0:
        return finish(result, planes.result_dtype, out)
    flat_out = result.reshape(plan.n_planes, plan.out_plane)
    if not plan.is_global and plan.tiling is not None and p is None:
        _tile_pool(plan, x, flat_out, False, num_threads)
        return finish(result, planes.result_dtype, out)
    n_threads, rows_per_block = plan.threads(num_threads)
    mode = _sum_mode(p)
    p_value = 1.0 if p is None else float(p)
    if plan.is_global:
        _kernels.global_sum_pool(x, flat_out.reshape(-1), mode, p_value, n_threads)
    else:
        _kernels.sum_pool(x, flat_out, plan.geometry, rows_per_block, mode, p_value, n_threads)
    return finish(result, planes.result_dtype, out)


def _run_half(planes, plan, *, op, kind, p, num_threads, out):
    """Average, Lp (kind = the sum mode) or max values (kind 4) of float16 /
    bfloat16 planes, widened row by row inside the kernel."""
    bits, result = _half_output(plan, out, op, planes)
    if plan.n_planes == 0 or plan.out_plane == 0:
        return result
    flat_bits = bits.reshape(plan.n_planes, plan.out_plane)
    if (not plan.is_global and plan.tiling is not None
            and kind in (_SUM_MODE_AVERAGE, _HALF_MAX)):
        _tile_pool(plan, planes.planes, flat_bits, kind == _HALF_MAX, num_threads, planes.half)
        return result
    n_threads, rows_per_block = plan.threads(num_threads)
    if plan.is_global:
        _kernels.half_global_pool(planes.planes, bits.reshape(-1), kind,
                                  1.0 if p is None else float(p), planes.half == "bf16",
                                  n_threads)
        return result
    _kernels.half_pool(planes.planes, flat_bits, plan.geometry, rows_per_block, kind,
                       1.0 if p is None else float(p), planes.half == "bf16", n_threads)
    if kind == _HALF_MAX:
        _fill_empty_windows(result, plan)
    return result


_HALF_MAX = 4


def _lowest(dtype):
    if dtype.kind == "f" or _is_bfloat16(dtype):
        # float32's lowest, as OpenVINO computes 16-bit floats in float32: it
        # rounds to -inf in float16 and to bfloat16's own lowest.
        return np.float32(np.finfo(np.float32).min)
    return np.iinfo(dtype).min


def _fill_empty_windows(values, plan):
    """Windows with no element inside the input: the lowest finite value
    (OpenVINO's answer; the kernel's buffer identity is -inf)."""
    if (values.dtype.kind != "f" and not _is_bfloat16(values.dtype)) or not plan.empty_axes:
        return  # the integer identity already is the lowest value
    lifted = values.reshape((plan.n_planes,) + plan.out_dhw)
    for axis_index, empty in plan.empty_axes:
        index = [slice(None)] * 4
        index[axis_index + 1] = empty
        with np.errstate(over="ignore"):
            lifted[tuple(index)] = _lowest(values.dtype)


def run_max_pool(planes, plan, *, op, with_indices=False, index_dtype=np.int64,
                 column_major=False, planes_per_index_space=1, index_modulo=None,
                 num_threads=None, out=None, out_indices=None):
    """Max pooling of ``planes`` by ``plan``, optionally with flat indices.

    Indices count within ``planes_per_index_space`` consecutive planes (1: per
    (n, c) plane; N*C: the whole tensor; C: per sample), row-major or
    column-major within the spatial dims. ``index_modulo`` then reduces them
    (OpenVINO MaxPool-8 with an axis inside the spatial dims).
    """
    if planes.half is not None:
        scratch = 4 * (plan.in_plane if with_indices else plan.max_rows * plan.in_dhw[2])
        if scratch > _HALF_SCRATCH_LIMIT:
            planes = planes.widened()
        elif not with_indices:
            return _run_half(planes, plan, op=op, kind=_HALF_MAX, p=None,
                             num_threads=num_threads, out=out)
    x = planes.planes
    if planes.half is not None:
        values, result = _half_output(plan, out, op, planes)
    else:
        values = allocate(plan.full_shape, x.dtype, out, op, "out", x, planes.result_dtype)
        result = None
    in_d, in_h, in_w = plan.in_dhw
    if with_indices:
        index_dtype = np.dtype(index_dtype)
        if index_dtype == np.int32:
            space = plan.in_plane * max(1, planes_per_index_space)
            if space > np.iinfo(np.int32).max:
                raise OvpoolValueError(
                    f"{op}: indices up to {space - 1} do not fit in int32; use int64 indices")
        if out_indices is not None:
            _check_out(out_indices, plan.full_shape, index_dtype, op, "out_indices", x,
                       (("out", out),))
        if out_indices is not None and index_modulo is None:
            indices = out_indices
        else:
            indices = allocate(plan.full_shape, index_dtype, None, op, "indices", None)
    if plan.n_planes == 0 or plan.out_plane == 0:
        values = result if result is not None else finish(values, planes.result_dtype, out)
        return (values, indices) if with_indices else values
    flat_values = values.reshape(plan.n_planes, plan.out_plane)
    if not with_indices and not plan.is_global and plan.tiling is not None:
        _tile_pool(plan, x, flat_values, True, num_threads)
        return finish(values, planes.result_dtype, out)
    n_threads, rows_per_block = plan.threads(num_threads)
    if not with_indices:
        if plan.is_global:
            _kernels.global_max_pool(x, flat_values.reshape(-1), n_threads)
        else:
            _kernels.max_pool(x, flat_values, plan.geometry, rows_per_block, n_threads)
            _fill_empty_windows(values, plan)
        return finish(values, planes.result_dtype, out)

    if column_major:
        strides = (1, in_d, in_d * in_h)
    else:
        strides = (in_h * in_w, in_w, 1)
    if planes.half is not None:
        _kernels.half_max_pool_with_indices(
            x, flat_values, indices.reshape(plan.n_planes, plan.out_plane), plan.geometry,
            *strides, max(1, planes_per_index_space), rows_per_block, planes.half == "bf16",
            n_threads)
    else:
        _kernels.max_pool_with_indices(
            x, flat_values, indices.reshape(plan.n_planes, plan.out_plane), plan.geometry,
            *strides, max(1, planes_per_index_space), rows_per_block, n_threads,
            *(plan.tiling or (0, 0)))
    if index_modulo is not None:
        np.remainder(indices, index_modulo, out=indices)
        if out_indices is not None:
            out_indices[...] = indices
            indices = out_indices
    if result is not None:
        return result, indices
    return finish(values, planes.result_dtype, out), indices
