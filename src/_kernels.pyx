"""Compiled pooling kernels of ovpool.

Every kernel sees the input as ``n_planes`` contiguous planes of shape
``(in_d, in_h, in_w)`` (1D and 2D pools are lifted to 3D with size-1 axes) and
writes ``n_planes`` output planes of shape ``(out_d, out_h, out_w)``.

The windows along each axis arrive as a precomputed table (built once in
Python by :mod:`ovpool.shapes`), one row per output coordinate::

    table[o, 0]  first input index of the window that lies inside the input
    table[o, 1]  number of taps of the window inside the input (0 = empty)
    table[o, 2]  divisor factor of this axis for average pooling

Taps are ``first + t * dilation`` for ``t < n_taps``. Because the tables are
already clipped to the input, the inner loops carry no padding test, and the
same kernels serve ONNX pools, OpenVINO pools and adaptive pools alike.

The unit of parallel work is one output row ``(plane, od, oh)``: ``prange``
over all ``n_planes * out_d * out_h`` rows keeps both threads busy whether
there are many small planes or a few large ones. Each output element is
written by exactly one thread, so results do not depend on the thread count.
The Python side validates arguments, allocates every array (outputs and the
per-thread scratch) and chooses the thread count; nothing here allocates or
touches a Python object inside ``nogil``.
"""

from cython.parallel cimport prange
from libc.float cimport DBL_MAX, FLT_MAX
from libc.math cimport fabs, pow, sqrt
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t

from _omp cimport OVPOOL_OPENMP, omp_get_num_threads, omp_get_thread_num
from _types cimport index_t, max_t, real_t

# How the taps of a sum pool are transformed and the sum is finished.
cdef enum:
    SUM_AVERAGE = 0    # sum / divisor
    SUM_LP_1 = 1       # sum |x|
    SUM_LP_2 = 2       # sqrt(sum x^2)
    SUM_LP_P = 3       # (sum |x|^p)^(1/p)


cdef struct Geometry:
    Py_ssize_t in_d, in_h, in_w
    Py_ssize_t out_d, out_h, out_w
    Py_ssize_t dil_d, dil_h, dil_w
    const int64_t* win_d      # (out_d, 3) window tables, see the module docstring
    const int64_t* win_h
    const int64_t* win_w


def openmp_enabled():
    """True if the kernels were compiled with OpenMP."""
    return bool(OVPOOL_OPENMP)


def parallel_team_size(int n_threads):
    """Number of threads a kernel's parallel region gets for ``n_threads``.

    Used by the tests to prove that ``num_threads`` is honoured even when
    another library (PyTorch ships its own libgomp) lowered the OpenMP
    default with ``omp_set_num_threads``.
    """
    cdef Py_ssize_t i
    cdef int team[1]          # an array element is shared, a scalar would be private
    team[0] = 1
    for i in prange(n_threads, nogil=True, num_threads=n_threads, schedule="static"):
        if omp_get_thread_num() == 0:
            team[0] = omp_get_num_threads()
    return team[0]


cdef Geometry _geometry(Py_ssize_t in_d, Py_ssize_t in_h, Py_ssize_t in_w,
                        const int64_t[:, ::1] win_d, const int64_t[:, ::1] win_h,
                        const int64_t[:, ::1] win_w,
                        Py_ssize_t dil_d, Py_ssize_t dil_h, Py_ssize_t dil_w):
    cdef Geometry g
    g.in_d, g.in_h, g.in_w = in_d, in_h, in_w
    g.out_d, g.out_h, g.out_w = win_d.shape[0], win_h.shape[0], win_w.shape[0]
    g.dil_d, g.dil_h, g.dil_w = dil_d, dil_h, dil_w
    g.win_d = &win_d[0, 0]
    g.win_h = &win_h[0, 0]
    g.win_w = &win_w[0, 0]
    return g


cdef inline max_t _lowest(max_t dummy) noexcept nogil:
    # Value of a window with no element inside the input (OpenVINO: -FLT_MAX).
    if max_t is float:
        return -FLT_MAX
    elif max_t is double:
        return -DBL_MAX
    elif max_t is int8_t:
        return -128
    else:
        return 0


# --------------------------------------------------------------------------
# Sum pools: average and Lp
# --------------------------------------------------------------------------

cdef inline void _sum_row(const real_t* plane, real_t* out_row, real_t* col,
                          const Geometry* g, Py_ssize_t od, Py_ssize_t oh,
                          int mode, double p) noexcept nogil:
    """One output row: a vertical pass sums the window rows into ``col``,
    then a horizontal pass sums the ``col`` taps of each output column."""
    cdef const int64_t* wd = g.win_d + 3 * od
    cdef const int64_t* wh = g.win_h + 3 * oh
    cdef const int64_t* ww
    cdef Py_ssize_t in_w = g.in_w
    cdef Py_ssize_t iw, td, th, t, ow, first, n_taps
    cdef const real_t* row
    cdef double total, divisor

    for iw in range(in_w):
        col[iw] = 0
    for td in range(wd[1]):
        for th in range(wh[1]):
            row = plane + ((wd[0] + td * g.dil_d) * g.in_h
                           + wh[0] + th * g.dil_h) * in_w
            if mode == SUM_AVERAGE:
                for iw in range(in_w):
                    col[iw] += row[iw]
            elif mode == SUM_LP_1:
                for iw in range(in_w):
                    col[iw] += fabs(row[iw])
            elif mode == SUM_LP_2:
                for iw in range(in_w):
                    col[iw] += row[iw] * row[iw]
            else:
                for iw in range(in_w):
                    col[iw] += pow(fabs(row[iw]), p)

    for ow in range(g.out_w):
        ww = g.win_w + 3 * ow
        first = ww[0]
        n_taps = ww[1]
        total = 0.0
        for t in range(n_taps):
            total += col[first + t * g.dil_w]
        if mode == SUM_AVERAGE:
            # An empty window with a zero divisor gives 0/0 = NaN, as in
            # OpenVINO's exclude-pad AvgPool with rounding_type=ceil.
            divisor = <double>(wd[2] * wh[2] * ww[2])
            out_row[ow] = <real_t>(total / divisor)
        elif mode == SUM_LP_1:
            out_row[ow] = <real_t>total
        elif mode == SUM_LP_2:
            out_row[ow] = <real_t>sqrt(total)
        else:
            out_row[ow] = <real_t>pow(total, 1.0 / p)


cdef void _sum_pool(const real_t[:, ::1] x, real_t[:, ::1] out, real_t[:, ::1] scratch,
                    const Geometry* g, int mode, double p, int n_threads) noexcept nogil:
    cdef Py_ssize_t rows_per_plane = g.out_d * g.out_h
    cdef Py_ssize_t n_rows = x.shape[0] * rows_per_plane
    cdef Py_ssize_t r, plane, od, oh, rem
    cdef const real_t* x_base = &x[0, 0]
    cdef real_t* out_base = &out[0, 0]
    cdef Py_ssize_t in_plane = x.shape[1]
    cdef Py_ssize_t out_plane = out.shape[1]
    for r in prange(n_rows, num_threads=n_threads, schedule="static"):
        plane = r // rows_per_plane
        rem = r - plane * rows_per_plane
        od = rem // g.out_h
        oh = rem - od * g.out_h
        _sum_row(x_base + plane * in_plane,
                 out_base + plane * out_plane + (od * g.out_h + oh) * g.out_w,
                 &scratch[omp_get_thread_num(), 0], g, od, oh, mode, p)


def avg_pool(const real_t[:, ::1] x,          # IN  (n_planes, in_d*in_h*in_w)
             real_t[:, ::1] out,              # OUT (n_planes, out_d*out_h*out_w)
             real_t[:, ::1] scratch,          # (n_threads, in_w) per-thread column sums
             Py_ssize_t in_d, Py_ssize_t in_h, Py_ssize_t in_w,
             const int64_t[:, ::1] win_d, const int64_t[:, ::1] win_h,
             const int64_t[:, ::1] win_w,
             Py_ssize_t dil_d, Py_ssize_t dil_h, Py_ssize_t dil_w,
             int n_threads):
    """Average pooling over precomputed windows.

    out = (sum of the taps inside the input) / (div_d * div_h * div_w), the
    divisor factors coming from column 2 of the window tables.
    """
    if x.shape[0] == 0 or out.shape[1] == 0:
        return
    cdef Geometry g = _geometry(in_d, in_h, in_w, win_d, win_h, win_w, dil_d, dil_h, dil_w)
    with nogil:
        _sum_pool(x, out, scratch, &g, SUM_AVERAGE, 1.0, n_threads)


def lp_pool(const real_t[:, ::1] x,           # IN  (n_planes, in_d*in_h*in_w)
            real_t[:, ::1] out,               # OUT (n_planes, out_d*out_h*out_w)
            real_t[:, ::1] scratch,           # (n_threads, in_w)
            Py_ssize_t in_d, Py_ssize_t in_h, Py_ssize_t in_w,
            const int64_t[:, ::1] win_d, const int64_t[:, ::1] win_h,
            const int64_t[:, ::1] win_w,
            Py_ssize_t dil_d, Py_ssize_t dil_h, Py_ssize_t dil_w,
            double p, int n_threads):
    """Lp pooling: (sum over the taps inside the input of |x|^p)^(1/p).

    Padding contributes zeros, so it does not change the sum.
    """
    if x.shape[0] == 0 or out.shape[1] == 0:
        return
    cdef Geometry g = _geometry(in_d, in_h, in_w, win_d, win_h, win_w, dil_d, dil_h, dil_w)
    cdef int mode = SUM_LP_P
    if p == 1.0:
        mode = SUM_LP_1
    elif p == 2.0:
        mode = SUM_LP_2
    with nogil:
        _sum_pool(x, out, scratch, &g, mode, p, n_threads)


# --------------------------------------------------------------------------
# Max pools
# --------------------------------------------------------------------------
#
# NaN rule (PyTorch's): a NaN tap always replaces the running maximum, so a
# window with a NaN gives NaN, and its index is the last NaN in row-major
# window order. Ties keep the first maximum in row-major window order
# (strict ">"). The with-indices kernel keeps both rules with a
# horizontal-first scan: the leftmost maximum of each window row, then the
# topmost row with the strict comparison.

cdef inline bint _replaces(max_t candidate, max_t current) noexcept nogil:
    if max_t is float or max_t is double:
        return candidate > current or candidate != candidate
    else:
        return candidate > current


cdef inline void _max_row(const max_t* plane, max_t* out_row, max_t* col,
                          const Geometry* g, Py_ssize_t od, Py_ssize_t oh) noexcept nogil:
    """Values only: vertical maximum of the window rows into ``col``, then the
    horizontal maximum over the ``col`` taps (the order does not matter for
    values)."""
    cdef const int64_t* wd = g.win_d + 3 * od
    cdef const int64_t* wh = g.win_h + 3 * oh
    cdef const int64_t* ww
    cdef Py_ssize_t in_w = g.in_w
    cdef Py_ssize_t iw, td, th, t, ow, first, n_taps
    cdef const max_t* row
    cdef max_t best, value
    cdef bint first_row = True

    if wd[1] == 0 or wh[1] == 0:
        for ow in range(g.out_w):
            out_row[ow] = _lowest(<max_t>0)
        return
    for td in range(wd[1]):
        for th in range(wh[1]):
            row = plane + ((wd[0] + td * g.dil_d) * g.in_h
                           + wh[0] + th * g.dil_h) * in_w
            if first_row:
                for iw in range(in_w):
                    col[iw] = row[iw]
                first_row = False
            else:
                for iw in range(in_w):
                    if _replaces(row[iw], col[iw]):
                        col[iw] = row[iw]

    for ow in range(g.out_w):
        ww = g.win_w + 3 * ow
        first = ww[0]
        n_taps = ww[1]
        if n_taps == 0:
            out_row[ow] = _lowest(<max_t>0)
            continue
        best = col[first]
        for t in range(1, n_taps):
            value = col[first + t * g.dil_w]
            if _replaces(value, best):
                best = value
        out_row[ow] = best


cdef inline void _max_row_with_indices(const max_t* plane, max_t* out_row, index_t* index_row,
                                       const Geometry* g, Py_ssize_t od, Py_ssize_t oh,
                                       int64_t index_base, int64_t stride_d,
                                       int64_t stride_h, int64_t stride_w) noexcept nogil:
    """Values and flat indices: horizontal-first, see the NaN and tie rules above.

    The index of input element (id, ih, iw) is
    ``index_base + id*stride_d + ih*stride_h + iw*stride_w``; an empty window
    gives the lowest value and ``index_base`` (OpenVINO's behaviour).
    """
    cdef const int64_t* wd = g.win_d + 3 * od
    cdef const int64_t* wh = g.win_h + 3 * oh
    cdef const int64_t* ww
    cdef Py_ssize_t td, th, t, ow, first, n_taps, tap, best_tap, in_d_idx, in_h_idx
    cdef const max_t* row
    cdef max_t best, value
    cdef int64_t row_base
    cdef bint first_row = True

    for ow in range(g.out_w):
        out_row[ow] = _lowest(<max_t>0)
        index_row[ow] = <index_t>index_base
    for td in range(wd[1]):
        in_d_idx = wd[0] + td * g.dil_d
        for th in range(wh[1]):
            in_h_idx = wh[0] + th * g.dil_h
            row = plane + (in_d_idx * g.in_h + in_h_idx) * g.in_w
            row_base = index_base + in_d_idx * stride_d + in_h_idx * stride_h
            for ow in range(g.out_w):
                ww = g.win_w + 3 * ow
                first = ww[0]
                n_taps = ww[1]
                if n_taps == 0:
                    continue
                best = row[first]
                best_tap = first
                for t in range(1, n_taps):
                    tap = first + t * g.dil_w
                    value = row[tap]
                    if _replaces(value, best):
                        best = value
                        best_tap = tap
                if first_row or _replaces(best, out_row[ow]):
                    out_row[ow] = best
                    index_row[ow] = <index_t>(row_base + best_tap * stride_w)
            first_row = False


def max_pool(const max_t[:, ::1] x,            # IN  (n_planes, in_d*in_h*in_w)
             max_t[:, ::1] out,                # OUT (n_planes, out_d*out_h*out_w)
             max_t[:, ::1] scratch,            # (n_threads, in_w) per-thread column maxima
             Py_ssize_t in_d, Py_ssize_t in_h, Py_ssize_t in_w,
             const int64_t[:, ::1] win_d, const int64_t[:, ::1] win_h,
             const int64_t[:, ::1] win_w,
             Py_ssize_t dil_d, Py_ssize_t dil_h, Py_ssize_t dil_w,
             int n_threads):
    """Max pooling over precomputed windows, values only."""
    if x.shape[0] == 0 or out.shape[1] == 0:
        return
    cdef Geometry g = _geometry(in_d, in_h, in_w, win_d, win_h, win_w, dil_d, dil_h, dil_w)
    cdef Py_ssize_t rows_per_plane = g.out_d * g.out_h
    cdef Py_ssize_t n_rows = x.shape[0] * rows_per_plane
    cdef Py_ssize_t r, plane, od, oh, rem
    cdef const max_t* x_base = &x[0, 0]
    cdef max_t* out_base = &out[0, 0]
    cdef Py_ssize_t in_plane = x.shape[1]
    cdef Py_ssize_t out_plane = out.shape[1]
    for r in prange(n_rows, nogil=True, num_threads=n_threads, schedule="static"):
        plane = r // rows_per_plane
        rem = r - plane * rows_per_plane
        od = rem // g.out_h
        oh = rem - od * g.out_h
        _max_row(x_base + plane * in_plane,
                 out_base + plane * out_plane + (od * g.out_h + oh) * g.out_w,
                 &scratch[omp_get_thread_num(), 0], &g, od, oh)


def max_pool_with_indices(const max_t[:, ::1] x,       # IN  (n_planes, in_d*in_h*in_w)
                          max_t[:, ::1] out,           # OUT (n_planes, out_d*out_h*out_w)
                          index_t[:, ::1] indices,     # OUT same shape as out
                          Py_ssize_t in_d, Py_ssize_t in_h, Py_ssize_t in_w,
                          const int64_t[:, ::1] win_d, const int64_t[:, ::1] win_h,
                          const int64_t[:, ::1] win_w,
                          Py_ssize_t dil_d, Py_ssize_t dil_h, Py_ssize_t dil_w,
                          int64_t stride_d, int64_t stride_h, int64_t stride_w,
                          Py_ssize_t planes_per_index_space, int n_threads):
    """Max pooling with flat indices.

    Plane ``p`` numbers its elements from
    ``(p % planes_per_index_space) * in_d*in_h*in_w``: 1 gives indices within
    each (n, c) plane (AdaptiveMaxPool, PyTorch, OpenVINO axis=2), n_planes
    gives indices over the whole tensor (ONNX, OpenVINO axis=0) and C gives
    OpenVINO's axis=1. ``stride_*`` give the order within a plane: row-major
    (in_h*in_w, in_w, 1) or ONNX storage_order=1 column-major (1, in_d, in_d*in_h).
    """
    if x.shape[0] == 0 or out.shape[1] == 0:
        return
    cdef Geometry g = _geometry(in_d, in_h, in_w, win_d, win_h, win_w, dil_d, dil_h, dil_w)
    cdef Py_ssize_t rows_per_plane = g.out_d * g.out_h
    cdef Py_ssize_t n_rows = x.shape[0] * rows_per_plane
    cdef Py_ssize_t r, plane, od, oh, rem, out_offset
    cdef const max_t* x_base = &x[0, 0]
    cdef max_t* out_base = &out[0, 0]
    cdef index_t* index_base = &indices[0, 0]
    cdef Py_ssize_t in_plane = x.shape[1]
    cdef Py_ssize_t out_plane = out.shape[1]
    for r in prange(n_rows, nogil=True, num_threads=n_threads, schedule="static"):
        plane = r // rows_per_plane
        rem = r - plane * rows_per_plane
        od = rem // g.out_h
        oh = rem - od * g.out_h
        out_offset = plane * out_plane + (od * g.out_h + oh) * g.out_w
        _max_row_with_indices(x_base + plane * in_plane, out_base + out_offset,
                              index_base + out_offset, &g, od, oh,
                              <int64_t>((plane % planes_per_index_space) * in_plane),
                              stride_d, stride_h, stride_w)


# --------------------------------------------------------------------------
# MaxUnpool
# --------------------------------------------------------------------------

def max_unpool(const max_t[::1] x,             # IN  values, flattened
               const int64_t[::1] indices,     # IN  flat positions in out, same length
               max_t[::1] out):                # OUT zero-filled by the caller
    """Scatter ``out[indices[i]] = x[i]``; later duplicates win, as in ONNX
    Runtime's sequential loop (hence serial: threads would race on duplicates).

    Returns -1, or the position of the first index outside ``[0, len(out))``
    (the caller raises; nothing is written past that position).
    """
    cdef Py_ssize_t i, n = x.shape[0]
    cdef Py_ssize_t size = out.shape[0]
    cdef int64_t target
    cdef Py_ssize_t bad = -1
    with nogil:
        for i in range(n):
            target = indices[i]
            if target < 0 or target >= size:
                bad = i
                break
            out[target] = x[i]
    return bad
