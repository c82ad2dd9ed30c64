"""Compiled pooling kernels of ovpool.

Every kernel sees the input as ``n_planes`` contiguous planes of shape
``(in_d, in_h, in_w)`` (1D and 2D pools are lifted to 3D with size-1 axes) and
writes ``n_planes`` output planes of shape ``(out_d, out_h, out_w)``.

The windows along each axis arrive as a table built once in Python by
:mod:`ovpool.shapes`, one row per output coordinate::

    table[o, 0]  first input index of the window that lies inside the input
    table[o, 1]  number of taps of the window inside the input (0 = empty)
    table[o, 2]  divisor factor of this axis for average pooling

Taps are ``first + t * dilation`` for ``t < n_taps``: the tables are already
clipped to the input, so no inner loop tests for padding.

Separable passes. An output row ``(od, oh)`` is computed in two passes:

1. *vertical*: the window's input rows (the product of its depth and height
   taps) are combined element-wise into a per-thread column buffer, a
   contiguous loop the compiler vectorises;
2. *horizontal*: each output column combines its taps of the column buffer.
   When the windows along W are uniform (every fixed-window pool, and adaptive
   pools with In % Out == 0) the column buffer carries the padding on both
   sides, pre-filled with the identity (0 for sums, -inf for max), so output
   ``ow`` is simply ``combine(buf[ow*s + t*d] for t < k)``, specialised for
   the common kernel sizes and strides. Otherwise (adaptive bins of unequal
   size) the W table drives the loop.

Sums keep the order of the rows, then the order of the columns, so they can
differ from a row-major sum (PyTorch) by an ulp or two. Max is exact.

Parallelism: ``prange`` over work units of ``rows_per_block`` consecutive
output rows of one plane (a whole plane when there are enough planes, a
slice of one when planes are few), handed out dynamically in chunks. Every
output element is written by exactly one thread, so results do not depend on
the thread count or on the schedule. Python validates
the arguments, allocates every array (outputs and per-thread scratch) and
chooses the thread count; nothing here allocates or touches a Python object
inside ``nogil``.
"""

from cython.parallel cimport parallel, prange
from libc.float cimport DBL_MAX, FLT_MAX
from libc.math cimport INFINITY, NAN, fabs, pow, sqrt
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint16_t, INT64_MAX
from libc.stdlib cimport free, malloc

from _omp cimport OVPOOL_OPENMP, omp_get_num_threads, omp_get_thread_num
from _types cimport index_t, max_t, real_t

cdef extern from *:
    """
    #define OVPOOL_PREFETCH(address) __builtin_prefetch((const void *)(address), 0, 3)
    /* gcc 12 deleted a loop of nothing but these prefetches as dead code;
       the empty asm that takes the address keeps it */
    #define OVPOOL_PREFETCH_L2(address) do { \\
        __builtin_prefetch((const void *)(address), 0, 2); \\
        __asm__ __volatile__("" : : "r"(address)); } while (0)
    """
    void _prefetch "OVPOOL_PREFETCH"(const void* address) noexcept nogil
    void _prefetch_l2 "OVPOOL_PREFETCH_L2"(const void* address) noexcept nogil

cdef extern from "_simd.h":
    float _span_max_f32 "ovpool_span_max_f32"(const float* x, Py_ssize_t n) noexcept nogil
    double _span_max_f64 "ovpool_span_max_f64"(const double* x, Py_ssize_t n) noexcept nogil
    Py_ssize_t _span_argmax_f32 "ovpool_span_argmax_f32"(const float* x, Py_ssize_t n) noexcept nogil
    Py_ssize_t _span_argmax_f64 "ovpool_span_argmax_f64"(const double* x, Py_ssize_t n) noexcept nogil
    int64_t _window_argmax_f32 "ovpool_window_argmax_f32"(
        const float* plane, Py_ssize_t in_w, Py_ssize_t row_first, Py_ssize_t n_rows,
        Py_ssize_t dil_h, Py_ssize_t col_first, Py_ssize_t n_cols, Py_ssize_t dil_w,
        float* best) noexcept nogil
    float _plane_sum_f32 "ovpool_plane_sum_f32"(const float* x, Py_ssize_t n) noexcept nogil
    double _plane_sum_f64 "ovpool_plane_sum_f64"(const double* x, Py_ssize_t n) noexcept nogil
    Py_ssize_t _span_sums8_f32 "ovpool_span_sums8_f32"(const float* x, Py_ssize_t stride,
                                                       Py_ssize_t k, Py_ssize_t n_out,
                                                       float* out, bint ahead) noexcept nogil
    void _adaptive_rows_f32 "ovpool_adaptive_rows_f32"(
        const float* x, Py_ssize_t n_d, Py_ssize_t d_stride, Py_ssize_t in_w,
        const int64_t* win_h, Py_ssize_t n_out_rows, const int64_t* win_w, Py_ssize_t out_w,
        float* out, Py_ssize_t out_stride, const float* div_w, int64_t div_d) noexcept nogil
    bint _adaptive_narrow_f32 "ovpool_adaptive_narrow_f32"(
        const float* x, Py_ssize_t in_w, const int64_t* win_h, Py_ssize_t n_out_rows,
        const int64_t* win_w, Py_ssize_t out_w, float* out, Py_ssize_t out_stride,
        const float* div_w, int64_t div_d, float* scratch) noexcept nogil
    void _widen "ovpool_widen"(const uint16_t* src, float* dst, Py_ssize_t n, bint bf16) noexcept nogil
    void _narrow "ovpool_narrow"(const float* src, uint16_t* dst, Py_ssize_t n, bint bf16) noexcept nogil
    bint _hmax_s2k3_f32 "ovpool_hmax_s2k3_f32"(const float* buf, float* out,
                                                Py_ssize_t n_out) noexcept nogil
    void _sum_rows_k3_f32 "ovpool_sum_rows_k3_f32"(
        const float* plane, Py_ssize_t in_w, const int64_t* win_h, Py_ssize_t n_rows, float* out,
        Py_ssize_t out_w, float* buf, Py_ssize_t pad_w, const float* div_w,
        int64_t div_d, int stride, bint lp2) noexcept nogil
    Py_ssize_t _max_rows_k3_f32 "ovpool_max_rows_k3_f32"(
        const float* plane, Py_ssize_t in_w, const int64_t* win_h, Py_ssize_t n_rows, float* out,
        Py_ssize_t out_w, float* buf, Py_ssize_t pad_w, int stride) noexcept nogil
    void _tile_rows_f32 "ovpool_tile_rows_f32"(const float* row0, Py_ssize_t in_w, float* out,
                                               Py_ssize_t out_w, Py_ssize_t n_rows, int kh,
                                               int kw, int is_max, int scale,
                                               float divisor, Py_ssize_t ahead) noexcept nogil
    void _tile_rows_f16 "ovpool_tile_rows_f16"(const uint16_t* row0, Py_ssize_t in_w,
                                               uint16_t* out, Py_ssize_t out_w,
                                               Py_ssize_t n_rows, int kh, int kw, int is_max,
                                               int scale, float divisor,
                                               Py_ssize_t ahead) noexcept nogil
    bint F16C_ROWS "OVPOOL_F16C_ROWS"     # float16 converted in registers (x86-64-v3 build)
    float _plane_sum_f16 "ovpool_plane_sum_f16"(const uint16_t* x, Py_ssize_t n) noexcept nogil
    void _plane_sums_f16 "ovpool_plane_sums_f16"(const uint16_t* x, Py_ssize_t size,
                                                 Py_ssize_t n_planes, float* out) noexcept nogil
    float _span_max_f16 "ovpool_span_max_f16"(const uint16_t* x, Py_ssize_t n) noexcept nogil
    bint _vmax_rows_f16 "ovpool_vmax_rows_f16"(const uint16_t* plane, const int64_t* offsets,
                                                Py_ssize_t n_rows, float* col,
                                                Py_ssize_t n) noexcept nogil
    Py_ssize_t _window_argmax8_f32 "ovpool_window_argmax8_f32"(
        const float* col, const int32_t* col_row, Py_ssize_t in_w, Py_ssize_t first,
        Py_ssize_t n_taps) noexcept nogil
    bint _vmax_rows_f32 "ovpool_vmax_rows_f32"(const float* plane, const int64_t* offsets,
                                                Py_ssize_t n_rows, float* col,
                                                Py_ssize_t n) noexcept nogil
    void _fold_rows_argmax_f32 "ovpool_fold_rows_argmax_f32"(
        const float* plane, const int64_t* offsets, Py_ssize_t n_rows, float* col,
        int32_t* col_row, Py_ssize_t n) noexcept nogil
    int _tile_scale "ovpool_tile_scale"(float divisor, float* factor) noexcept nogil
    bint _vector_rows_ok "ovpool_vector_rows_ok"(Py_ssize_t n_out, int stride,
                                                 int k) noexcept nogil
    void _argmax_row_f32 "ovpool_argmax_row_f32"(
        const float* row0, Py_ssize_t in_w, float* out, int64_t* index, Py_ssize_t n_out,
        int kh, int stride, int k, int32_t row_offset, int64_t index_base,
        bint left) noexcept nogil
    void _argmax_rows_f32 "ovpool_argmax_rows_f32"(
        const float* row0, Py_ssize_t in_w, float* out, int64_t* index, Py_ssize_t n_out,
        int kh, int stride, int k, int32_t row_offset, int64_t index_base, bint left,
        Py_ssize_t n_rows, Py_ssize_t row_step, Py_ssize_t out_stride) noexcept nogil
    bint _left_edge_ok "ovpool_left_edge_ok"(Py_ssize_t n_out, int stride, int k,
                                             Py_ssize_t pad) noexcept nogil
    Py_ssize_t _bins_argmax_f32 "ovpool_bins_argmax_f32"(
        const float* plane, const int64_t* offsets, Py_ssize_t n_rows, Py_ssize_t in_w,
        const int64_t* win_w, Py_ssize_t out_w, float* out, int64_t* pos, int64_t* index,
        int64_t index_base) noexcept nogil
    bint _bins_by_window_ok "ovpool_bins_by_window_ok"(const int64_t* win_w, Py_ssize_t out_w,
                                                       Py_ssize_t in_w) noexcept nogil

# Window rows (over all depth slices) that the (row << 4) + column keys of
# ovpool_bin_finish hold in int32.
cdef enum:
    RANK_KEY_ROWS = 1 << 27

# How the taps of a sum pool are transformed and the sum is finished.
cdef enum:
    # floats of per-thread scratch the narrow-bin adaptive kernel may take
    # (_adaptive_narrow_f32: the rows' column sums and the bins' sums)
    NARROW_SCRATCH = 65536

cdef enum:
    SUM_AVERAGE = 0    # sum / divisor
    SUM_LP_1 = 1       # sum |x|
    SUM_LP_2 = 2       # sqrt(sum x^2)
    SUM_LP_P = 3       # (sum |x|^p)^(1/p)


cdef struct Plan:
    Py_ssize_t in_d, in_h, in_w
    Py_ssize_t out_d, out_h, out_w
    Py_ssize_t dil_d, dil_h, dil_w
    const int64_t* win_d        # (out_d, 3) window tables, see the module docstring
    const int64_t* win_h
    const int64_t* win_w
    bint uniform_w              # horizontal pass over a padded buffer, see above
    bint direct_w               # the W windows stay inside the input (no padding)
    Py_ssize_t interior_lo      # outputs interior_lo..interior_hi-1 have every
    Py_ssize_t interior_hi      # W tap inside the input (uniform windows only)
    Py_ssize_t kernel_w, stride_w, pad_w
    Py_ssize_t rows_per_block   # output rows per work unit
    Py_ssize_t blocks_per_plane
    Py_ssize_t prefetch         # elements ahead of a window row to prefetch (0: none)
    Py_ssize_t prefetch_block   # elements a window advances by per output row
    Py_ssize_t slice_rows       # > 0: pool along D one depth slice at a time, for
                                # up to this many output rows per scratch group
    Py_ssize_t slab_lo          # slab_hi > slab_lo: max values and averages pool along
    Py_ssize_t slab_hi          # D first, into a slab of input rows slab_lo..slab_hi-1
                                # (_pool_by_depth)
    bint slab_prefetch          # prefetch the next work unit's slab rows
    bint rows_3_wide            # W windows 3 wide at stride 1 or 2, H windows of <= 3
                                # rows, no pooling along D (_sum_rows_k3_f32,
                                # _max_rows_k3_f32)
    bint rows_narrow            # W windows from a table (adaptive), each under 8 taps,
                                # no dilation, rows of 8+ elements, scratch within
                                # NARROW_SCRATCH (_adaptive_narrow_f32)
    bint rows_8_wide            # W windows from a table (adaptive), each 8 taps or
                                # more, windows of 2 rows or more, no dilation
                                # (_adaptive_rows_f32)
    bint bins_by_window         # float32 maxima with indices by the window tables:
                                # each window on its own (_bins_argmax_f32), set
                                # per call by max_pool_with_indices


def openmp_enabled():
    """True if the kernels were compiled with OpenMP."""
    return bool(OVPOOL_OPENMP)


def float16_in_registers():
    """True if float16 tiling rows and global averages / maxima are converted
    in vector registers (F16C: the x86-64-v3 build) instead of widened into
    float32 scratch first."""
    return bool(F16C_ROWS)


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


cdef class Geometry:
    """The windows of one pool call, lifted to 3D.

    Built once per cached plan (:class:`ovpool._core.Plan`) and passed to every
    kernel call, so a call converts two arrays (input and output) instead of
    every table. The per-thread scratch (the padded column buffer and the row
    offsets) is allocated by each kernel call inside its parallel region.
    """
    cdef Plan plan
    cdef readonly Py_ssize_t buffer_width   # padded column buffer, elements
    cdef readonly Py_ssize_t max_rows       # input rows of the largest window
    cdef const float* div_w_f32             # W-axis divisor factors per dtype
    cdef const double* div_w_f64
    cdef object _arrays                     # keeps the tables alive

    def __init__(self, Py_ssize_t in_d, Py_ssize_t in_h, Py_ssize_t in_w,
                 const int64_t[:, ::1] win_d, const int64_t[:, ::1] win_h,
                 const int64_t[:, ::1] win_w,
                 Py_ssize_t dil_d, Py_ssize_t dil_h, Py_ssize_t dil_w,
                 bint uniform_w, Py_ssize_t kernel_w, Py_ssize_t stride_w, Py_ssize_t pad_w,
                 Py_ssize_t buffer_width, Py_ssize_t max_rows, Py_ssize_t prefetch,
                 Py_ssize_t prefetch_block, bint direct_w,
                 Py_ssize_t interior_lo, Py_ssize_t interior_hi,
                 const float[::1] div_w_f32, const double[::1] div_w_f64,
                 Py_ssize_t slice_rows=0, Py_ssize_t slab_lo=0, Py_ssize_t slab_hi=0,
                 bint slab_prefetch=False):
        if (win_d.shape[0] < 1 or win_h.shape[0] < 1 or win_w.shape[0] < 1
                or div_w_f32.shape[0] != win_w.shape[0] or div_w_f64.shape[0] != win_w.shape[0]
                or win_d.shape[1] != 3 or win_h.shape[1] != 3 or win_w.shape[1] != 3
                or buffer_width < in_w or max_rows < 1):
            raise ValueError("inconsistent window tables")
        self._arrays = (win_d, win_h, win_w, div_w_f32, div_w_f64)
        self.plan.in_d, self.plan.in_h, self.plan.in_w = in_d, in_h, in_w
        self.plan.out_d, self.plan.out_h, self.plan.out_w = (
            win_d.shape[0], win_h.shape[0], win_w.shape[0])
        self.plan.dil_d, self.plan.dil_h, self.plan.dil_w = dil_d, dil_h, dil_w
        self.plan.win_d = &win_d[0, 0]
        self.plan.win_h = &win_h[0, 0]
        self.plan.win_w = &win_w[0, 0]
        self.plan.uniform_w = uniform_w
        self.plan.direct_w = direct_w
        if not (0 <= interior_lo <= interior_hi <= win_w.shape[0]):
            raise ValueError("inconsistent interior range")
        self.plan.interior_lo = interior_lo
        self.plan.interior_hi = interior_hi
        self.plan.kernel_w, self.plan.stride_w, self.plan.pad_w = kernel_w, stride_w, pad_w
        self.plan.prefetch = prefetch
        self.plan.prefetch_block = prefetch_block
        if slice_rows < 0:
            raise ValueError("negative slice_rows")
        self.plan.slice_rows = slice_rows
        if not (0 <= slab_lo <= slab_hi <= in_h):
            raise ValueError("inconsistent slab rows")
        self.plan.slab_lo, self.plan.slab_hi = slab_lo, slab_hi
        self.plan.slab_prefetch = slab_prefetch
        self.plan.rows_3_wide = (uniform_w and kernel_w == 3 and stride_w in (1, 2) and dil_w == 1
                                 and dil_h == 1 and max(win_h[:, 1]) <= 3
                                 and min(win_d[:, 1]) == 1 == max(win_d[:, 1]))
        # its per-thread scratch, 8 (in_w + out_w) floats, stays within 256 KiB
        self.plan.rows_narrow = (not uniform_w and dil_w == 1 and dil_h == 1
                                 and max(win_w[:, 1]) < 8 and in_w >= 8
                                 and 8 * (in_w + win_w.shape[0]) <= NARROW_SCRATCH)
        self.plan.rows_8_wide = (not uniform_w and dil_w == 1 and dil_h == 1
                                 and min(win_w[:, 1]) >= 8
                                 and max(win_d[:, 1]) * max(win_h[:, 1]) >= 2)
        self.plan.rows_per_block = 1
        self.plan.blocks_per_plane = 1
        self.buffer_width = buffer_width
        self.max_rows = max_rows
        self.div_w_f32 = &div_w_f32[0]
        self.div_w_f64 = &div_w_f64[0]

    @property
    def rows_3_wide(self):
        """True when float32 averages, L2 norms and maxima take the run-of-rows
        kernels for windows 3 wide at stride 1 or 2 (before the per-call dtype,
        mode and prefetch)."""
        return bool(self.plan.rows_3_wide)

    @property
    def rows_8_wide(self):
        """True when float32 averages take the run-of-rows adaptive kernel
        (_adaptive_rows_f32): W windows from a table, each 8 taps or more,
        spanning 2 rows or more."""
        return bool(self.plan.rows_8_wide)

    @property
    def rows_narrow(self):
        """True when float32 averages take the eight-rows-at-a-time adaptive
        kernel (_adaptive_narrow_f32): W windows from a table, each under 8
        taps, rows of 8+ elements (before the per-call mode and prefetch)."""
        return bool(self.plan.rows_narrow)


cdef inline Py_ssize_t _chunk(Py_ssize_t n_units, int n_threads) noexcept nogil:
    """Work units handed out at a time. Dynamic scheduling in chunks of about
    1/16 of a thread's share: when a neighbour process takes a core away, the
    other thread picks up the work instead of waiting for it at the barrier
    (static halves made a 2-thread call 5-20x slower on a loaded machine).
    Which thread computes a unit never changes its result."""
    return max(1, n_units // (16 * n_threads))


cdef inline void _set_blocks(Plan* plan, Py_ssize_t rows_per_block) noexcept nogil:
    cdef Py_ssize_t rows_per_plane = plan.out_d * plan.out_h
    plan.rows_per_block = max(1, min(rows_per_block, rows_per_plane))
    plan.blocks_per_plane = (rows_per_plane + plan.rows_per_block - 1) // plan.rows_per_block


cdef inline Py_ssize_t _row_offsets(const Plan* plan, Py_ssize_t od, Py_ssize_t oh,
                                    int64_t* offsets) noexcept nogil:
    """Offsets (in elements, within a plane) of the input rows of window row
    (od, oh), in row-major window order; returns their number."""
    cdef const int64_t* wd = plan.win_d + 3 * od
    cdef Py_ssize_t td, n = 0
    for td in range(wd[1]):
        n += _slice_row_offsets(plan, wd[0] + td * plan.dil_d, oh, offsets + n)
    return n


cdef inline Py_ssize_t _slice_row_offsets(const Plan* plan, Py_ssize_t in_d_idx, Py_ssize_t oh,
                                          int64_t* offsets) noexcept nogil:
    """Offsets of the input rows of window row oh within depth slice
    in_d_idx, top to bottom; returns their number."""
    cdef const int64_t* wh = plan.win_h + 3 * oh
    cdef Py_ssize_t th
    for th in range(wh[1]):
        offsets[th] = (in_d_idx * plan.in_h + wh[0] + th * plan.dil_h) * plan.in_w
    return wh[1]


cdef inline void _prefetch_ahead(const char* plane, const int64_t* offsets, Py_ssize_t n_rows,
                                 Py_ssize_t rows_per_slice, Py_ssize_t item_size,
                                 const Plan* plan) noexcept nogil:
    """Ask for the input rows a later output row will read first.

    The window rows of one depth slice are consecutive rows of a contiguous
    plane, so the rows the window will newly need ``prefetch`` elements ahead
    form one contiguous block after the slice's last row (the hardware
    prefetcher does not keep up with several row streams)."""
    cdef Py_ssize_t r, b, block_bytes = plan.prefetch_block * item_size
    cdef const char* start
    r = rows_per_slice - 1
    while r < n_rows:
        start = plane + (offsets[r] + plan.in_w + plan.prefetch - plan.prefetch_block) * item_size
        for b in range(0, block_bytes, 64):
            _prefetch(start + b)
        r += rows_per_slice


# --------------------------------------------------------------------------
# Element-wise combinations
# --------------------------------------------------------------------------

cdef inline max_t _mx(max_t current, max_t candidate) noexcept nogil:
    """Running maximum, PyTorch's NaN rule: a NaN candidate always wins."""
    cdef max_t larger
    if max_t is float or max_t is double:
        # maxps semantics (the second operand wins when unordered) catch a NaN
        # candidate; the blend keeps a NaN that is already current.
        larger = current if current > candidate else candidate
        return current if current != current else larger
    else:
        return candidate if candidate > current else current


cdef inline max_t _max_identity(max_t dummy) noexcept nogil:
    # Padding value of the max buffer: -inf for floats (never wins against a
    # real element), the lowest value for integers.
    if max_t is float or max_t is double:
        return -INFINITY
    elif max_t is int8_t:
        return -128
    else:
        return 0


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
# Vertical passes: combine window rows into the column buffer
# --------------------------------------------------------------------------

cdef inline void _vsum(const real_t* plane, const int64_t* offsets, Py_ssize_t n_rows,
                       real_t* col, Py_ssize_t width) noexcept nogil:
    """col = sum of the rows, added in row order (groups of up to 4 rows per
    sweep keep the column buffer out of the load/store critical path)."""
    cdef Py_ssize_t i, r
    cdef const real_t* a
    cdef const real_t* b
    cdef const real_t* c
    cdef const real_t* d
    if n_rows == 0:
        for i in range(width):
            col[i] = 0
        return
    a = plane + offsets[0]
    if n_rows == 1:
        for i in range(width):
            col[i] = a[i]
        return
    b = plane + offsets[1]
    if n_rows == 2:
        for i in range(width):
            col[i] = a[i] + b[i]
        return
    c = plane + offsets[2]
    if n_rows == 3:
        for i in range(width):
            col[i] = a[i] + b[i] + c[i]
        return
    d = plane + offsets[3]
    for i in range(width):
        col[i] = a[i] + b[i] + c[i] + d[i]
    _vsum_add(plane, offsets + 4, n_rows - 4, col, width)


cdef inline void _vsum_add(const real_t* plane, const int64_t* offsets, Py_ssize_t n_rows,
                           real_t* col, Py_ssize_t width) noexcept nogil:
    """col += sum of the rows, added in row order, up to 4 rows per sweep."""
    cdef Py_ssize_t i, r = 0
    cdef const real_t* a
    cdef const real_t* b
    cdef const real_t* c
    cdef const real_t* d
    while r + 4 <= n_rows:
        a = plane + offsets[r]
        b = plane + offsets[r + 1]
        c = plane + offsets[r + 2]
        d = plane + offsets[r + 3]
        for i in range(width):
            col[i] = col[i] + a[i] + b[i] + c[i] + d[i]
        r += 4
    if n_rows - r == 3:
        a = plane + offsets[r]
        b = plane + offsets[r + 1]
        c = plane + offsets[r + 2]
        for i in range(width):
            col[i] = col[i] + a[i] + b[i] + c[i]
    elif n_rows - r == 2:
        a = plane + offsets[r]
        b = plane + offsets[r + 1]
        for i in range(width):
            col[i] = col[i] + a[i] + b[i]
    elif n_rows - r == 1:
        a = plane + offsets[r]
        for i in range(width):
            col[i] = col[i] + a[i]


cdef inline void _vsum_lp(const real_t* plane, const int64_t* offsets, Py_ssize_t n_rows,
                          real_t* col, Py_ssize_t width, int mode, double p) noexcept nogil:
    """col = sum over the rows of |x|^p (Lp pooling; not a hot path)."""
    cdef Py_ssize_t i, r
    cdef const real_t* a
    for i in range(width):
        col[i] = 0
    for r in range(n_rows):
        a = plane + offsets[r]
        if mode == SUM_LP_1:
            for i in range(width):
                col[i] += fabs(a[i])
        elif mode == SUM_LP_2:
            for i in range(width):
                col[i] += a[i] * a[i]
        else:
            for i in range(width):
                col[i] += <real_t>pow(fabs(a[i]), p)


cdef inline max_t _max2(max_t x, max_t y) noexcept nogil:
    cdef max_t m = x if x > y else y
    if max_t is float or max_t is double:
        return <max_t>NAN if (x != x) | (y != y) else m
    else:
        return m


cdef inline max_t _max3(max_t x, max_t y, max_t z) noexcept nogil:
    cdef max_t m = x if x > y else y
    m = m if m > z else z
    if max_t is float or max_t is double:
        return <max_t>NAN if (x != x) | (y != y) | (z != z) else m
    else:
        return m


cdef inline max_t _max4(max_t w, max_t x, max_t y, max_t z) noexcept nogil:
    cdef max_t m = w if w > x else x
    m = m if m > y else y
    m = m if m > z else z
    if max_t is float or max_t is double:
        return <max_t>NAN if (w != w) | (x != x) | (y != y) | (z != z) else m
    else:
        return m


cdef inline void _vmax(const max_t* plane, const int64_t* offsets, Py_ssize_t n_rows,
                       max_t* col, Py_ssize_t width) noexcept nogil:
    """col = element-wise NaN-propagating maximum of the rows.

    The maximum is a plain compare-select chain and NaN is tracked as a
    separate flag: one vector blend per element instead of one per step (a
    NaN result is the canonical quiet NaN)."""
    cdef Py_ssize_t i, r
    cdef const max_t* a
    cdef const max_t* b
    cdef const max_t* c
    if n_rows == 0:
        for i in range(width):
            col[i] = _max_identity(<max_t>0)
        return
    a = plane + offsets[0]
    if n_rows == 1:
        for i in range(width):
            col[i] = a[i]
        return
    b = plane + offsets[1]
    if n_rows == 2:
        for i in range(width):
            col[i] = _max2(a[i], b[i])
        return
    c = plane + offsets[2]
    for i in range(width):
        col[i] = _max3(a[i], b[i], c[i])
    _vmax_add(plane, offsets + 3, n_rows - 3, col, width)


cdef inline void _vmax_add(const max_t* plane, const int64_t* offsets, Py_ssize_t n_rows,
                           max_t* col, Py_ssize_t width) noexcept nogil:
    """col = maximum of col and the rows, up to 3 rows per sweep."""
    cdef Py_ssize_t i, r = 0
    cdef const max_t* a
    cdef const max_t* b
    cdef const max_t* c
    while r + 3 <= n_rows:
        a = plane + offsets[r]
        b = plane + offsets[r + 1]
        c = plane + offsets[r + 2]
        for i in range(width):
            col[i] = _max4(col[i], a[i], b[i], c[i])
        r += 3
    if n_rows - r == 2:
        a = plane + offsets[r]
        b = plane + offsets[r + 1]
        for i in range(width):
            col[i] = _max3(col[i], a[i], b[i])
    elif n_rows - r == 1:
        a = plane + offsets[r]
        for i in range(width):
            col[i] = _max2(col[i], a[i])


# --------------------------------------------------------------------------
# Contiguous spans: one window row of 8 or more taps
# --------------------------------------------------------------------------
# A long window row is reduced in 8 independent lanes (a vector register)
# with a fixed fold: a single running sum or max could not be vectorised.

cdef inline real_t _span_sum(const real_t* x, Py_ssize_t n) noexcept nogil:
    cdef real_t acc[8]
    cdef real_t tail = 0
    cdef Py_ssize_t i = 0, j
    for j in range(8):
        acc[j] = 0
    while i + 8 <= n:
        for j in range(8):
            acc[j] = acc[j] + x[i + j]
        i += 8
    while i < n:
        tail = tail + x[i]
        i += 1
    for j in range(4):
        acc[j] = acc[j] + acc[j + 4]
    return ((acc[0] + acc[2]) + (acc[1] + acc[3])) + tail


cdef inline max_t _span_max(const max_t* x, Py_ssize_t n) noexcept nogil:
    """NaN-propagating maximum of n >= 1 contiguous values (the float types
    use the SIMD helpers of _simd.h; the integer lanes vectorise as written)."""
    if max_t is float:
        return _span_max_f32(x, n)
    elif max_t is double:
        return _span_max_f64(x, n)
    else:
        return _span_max_lanes(x, n)


cdef inline max_t _span_max_lanes(const max_t* x, Py_ssize_t n) noexcept nogil:
    # integer types only (no NaN): 8 lanes, then the tail
    cdef max_t acc[8]
    cdef max_t best = x[0], value
    cdef Py_ssize_t i = 1, j
    if n >= 8:
        for j in range(8):
            acc[j] = x[j]
        i = 8
        while i + 8 <= n:
            for j in range(8):
                value = x[i + j]
                acc[j] = acc[j] if acc[j] > value else value
            i += 8
        for j in range(8):
            best = best if best > acc[j] else acc[j]
    while i < n:
        value = x[i]
        best = best if best > value else value
        i += 1
    return best


cdef inline Py_ssize_t _span_argmax(const max_t* x, Py_ssize_t n) noexcept nogil:
    """Position of the first maximum of n >= 1 contiguous values, or of the
    last NaN: the vectorised maximum first, then a short scan for it."""
    if max_t is float:
        return _span_argmax_f32(x, n)
    elif max_t is double:
        return _span_argmax_f64(x, n)
    else:
        return _span_argmax_lanes(x, n)


cdef inline Py_ssize_t _span_argmax_lanes(const max_t* x, Py_ssize_t n) noexcept nogil:
    cdef max_t best = _span_max(x, n)
    cdef Py_ssize_t i
    if best != best:
        i = n - 1
        while x[i] == x[i]:
            i -= 1
        return i
    i = 0
    while not (x[i] == best):
        i += 1
    return i


# --------------------------------------------------------------------------
# Horizontal passes over a padded buffer: out[o] = combine(buf[o*s + t*d], t < k)
# --------------------------------------------------------------------------
# The *_k helpers take the kernel size and stride as arguments; called with
# literal constants they inline into fully unrolled, vectorised loops.

cdef inline void _hsum_k(const real_t* buf, real_t* out, Py_ssize_t n_out,
                         Py_ssize_t stride, Py_ssize_t k, const real_t* div_w,
                         real_t row_div) noexcept nogil:
    """out[o] = sum(buf[o*stride + t], t < k), divided by row_div * div_w[o]
    unless div_w is NULL (Lp pooling finishes the sums itself)."""
    cdef Py_ssize_t o, t
    cdef real_t acc
    if div_w == NULL:
        for o in range(n_out):
            acc = buf[o * stride]
            for t in range(1, k):
                acc = acc + buf[o * stride + t]
            out[o] = acc
    else:
        for o in range(n_out):
            acc = buf[o * stride]
            for t in range(1, k):
                acc = acc + buf[o * stride + t]
            out[o] = acc / (row_div * div_w[o])


cdef inline void _hsum(const real_t* buf, real_t* out, Py_ssize_t n_out, Py_ssize_t k,
                       Py_ssize_t stride, Py_ssize_t dilation, const real_t* div_w,
                       real_t row_div, bint from_input=False) noexcept nogil:
    # from_input: buf is a row of the input (not scratch), streamed in order
    cdef Py_ssize_t o, t
    cdef real_t acc
    if dilation == 1 and stride == 1:
        if k == 1:
            _hsum_k(buf, out, n_out, 1, 1, div_w, row_div)
        elif k == 2:
            _hsum_k(buf, out, n_out, 1, 2, div_w, row_div)
        elif k == 3:
            _hsum_k(buf, out, n_out, 1, 3, div_w, row_div)
        elif k == 4:
            _hsum_k(buf, out, n_out, 1, 4, div_w, row_div)
        elif k == 5:
            _hsum_k(buf, out, n_out, 1, 5, div_w, row_div)
        elif k == 7:
            _hsum_k(buf, out, n_out, 1, 7, div_w, row_div)
        else:
            _hsum_k(buf, out, n_out, 1, k, div_w, row_div)
    elif dilation == 1 and stride == 2:
        if k == 2:
            _hsum_k(buf, out, n_out, 2, 2, div_w, row_div)
        elif k == 3:
            _hsum_k(buf, out, n_out, 2, 3, div_w, row_div)
        elif k == 4:
            _hsum_k(buf, out, n_out, 2, 4, div_w, row_div)
        else:
            _hsum_k(buf, out, n_out, 2, k, div_w, row_div)
    elif dilation == 1 and stride == k and k < 8:
        if k == 3:
            _hsum_k(buf, out, n_out, 3, 3, div_w, row_div)
        elif k == 4:
            _hsum_k(buf, out, n_out, 4, 4, div_w, row_div)
        else:
            _hsum_k(buf, out, n_out, k, k, div_w, row_div)
    elif dilation == 1 and k >= 8:
        o = 0
        if real_t is float:
            o = _span_sums8_f32(buf, stride, k, n_out, out, from_input)
        for o in range(o, n_out):
            out[o] = _span_sum(buf + o * stride, k)
        _divide_row(out, n_out, div_w, row_div)
    else:
        for o in range(n_out):
            acc = buf[o * stride]
            for t in range(1, k):
                acc = acc + buf[o * stride + t * dilation]
            if div_w == NULL:
                out[o] = acc
            else:
                out[o] = acc / (row_div * div_w[o])


cdef inline void _hmax_k(const max_t* buf, max_t* out, Py_ssize_t n_out,
                         Py_ssize_t stride, Py_ssize_t k, bint nan_free) noexcept nogil:
    # nan_free: buf holds no NaN, so the NaN flag (a blend per output) is dropped
    cdef Py_ssize_t o, t
    cdef max_t acc, value
    cdef bint nan
    if nan_free or not (max_t is float or max_t is double):
        for o in range(n_out):
            acc = buf[o * stride]
            for t in range(1, k):
                value = buf[o * stride + t]
                acc = acc if acc > value else value
            out[o] = acc
        return
    for o in range(n_out):
        acc = buf[o * stride]
        nan = acc != acc
        for t in range(1, k):
            value = buf[o * stride + t]
            acc = acc if acc > value else value
            nan = nan | (value != value)
        out[o] = <max_t>NAN if nan else acc


cdef inline void _hmax(const max_t* buf, max_t* out, Py_ssize_t n_out, Py_ssize_t k,
                       Py_ssize_t stride, Py_ssize_t dilation, bint nan_free) noexcept nogil:
    cdef Py_ssize_t o, t
    cdef max_t acc
    if dilation == 1 and stride == 1:
        if k == 2:
            _hmax_k(buf, out, n_out, 1, 2, nan_free)
        elif k == 3:
            _hmax_k(buf, out, n_out, 1, 3, nan_free)
        elif k == 5:
            _hmax_k(buf, out, n_out, 1, 5, nan_free)
        else:
            _hmax_k(buf, out, n_out, 1, k, nan_free)
    elif dilation == 1 and stride == 2:
        if k == 2:
            _hmax_k(buf, out, n_out, 2, 2, nan_free)
        elif k == 3:
            if max_t is float:
                if nan_free and _hmax_s2k3_f32(buf, out, n_out):
                    return
            _hmax_k(buf, out, n_out, 2, 3, nan_free)
        else:
            _hmax_k(buf, out, n_out, 2, k, nan_free)
    elif dilation == 1 and stride == k and k < 8:
        if k == 3:
            _hmax_k(buf, out, n_out, 3, 3, nan_free)
        elif k == 4:
            _hmax_k(buf, out, n_out, 4, 4, nan_free)
        else:
            _hmax_k(buf, out, n_out, k, k, nan_free)
    elif dilation == 1 and k >= 8:
        for o in range(n_out):
            out[o] = _span_max(buf + o * stride, k)
    else:
        for o in range(n_out):
            acc = buf[o * stride]
            for t in range(1, k):
                acc = _mx(acc, buf[o * stride + t * dilation])
            out[o] = acc


# Horizontal passes driven by the W table (adaptive bins of unequal size).

cdef inline void _hsum_table(const real_t* col, real_t* out, const Plan* plan,
                             const real_t* div_w, real_t row_div) noexcept nogil:
    cdef Py_ssize_t o, t, first, n_taps
    cdef real_t acc
    for o in range(plan.out_w):
        first = plan.win_w[3 * o]
        n_taps = plan.win_w[3 * o + 1]
        if plan.dil_w == 1 and n_taps >= 8:
            acc = _span_sum(col + first, n_taps)
        else:
            acc = 0
            for t in range(n_taps):
                acc = acc + col[first + t * plan.dil_w]
        out[o] = acc
    _divide_row(out, plan.out_w, div_w, row_div)


cdef inline void _divide_row(real_t* out, Py_ssize_t n_out, const real_t* div_w,
                             real_t row_div) noexcept nogil:
    """out /= row_div * div_w, as a separate (vectorised) loop: a division
    at the end of each output's sum stalled the loop on its latency
    (adaptive 50->7 at 1 thread: 700 -> 600 ns per plane)."""
    cdef Py_ssize_t o
    if div_w != NULL:
        for o in range(n_out):
            out[o] = out[o] / (row_div * div_w[o])


cdef inline void _hmax_table(const max_t* col, max_t* out, const Plan* plan) noexcept nogil:
    cdef Py_ssize_t o, t, first, n_taps
    cdef max_t acc
    for o in range(plan.out_w):
        first = plan.win_w[3 * o]
        n_taps = plan.win_w[3 * o + 1]
        if n_taps == 0:
            out[o] = _max_identity(<max_t>0)
        elif plan.dil_w == 1:
            out[o] = _span_max(col + first, n_taps)
        else:
            acc = _max_identity(<max_t>0)
            for t in range(n_taps):
                acc = _mx(acc, col[first + t * plan.dil_w])
            out[o] = acc


# --------------------------------------------------------------------------
# Sum pools: average and Lp
# --------------------------------------------------------------------------

cdef inline void _sum_row(const real_t* plane, real_t* out_row, real_t* buf,
                          int64_t* offsets, const real_t* div_w, const Plan* plan,
                          Py_ssize_t od, Py_ssize_t oh, int mode, double p) noexcept nogil:
    cdef Py_ssize_t n_rows = _row_offsets(plan, od, oh, offsets)
    if plan.prefetch > 0 and n_rows > 0:
        _prefetch_ahead(<const char*>plane, offsets, n_rows, plan.win_h[3 * oh + 1],
                        sizeof(real_t), plan)
    _sum_row_from(plane, offsets, n_rows, out_row, buf, div_w, plan, od, oh, mode, p)


cdef inline void _sum_row_from(const real_t* plane, const int64_t* offsets, Py_ssize_t n_rows,
                               real_t* out_row, real_t* buf, const real_t* div_w,
                               const Plan* plan, Py_ssize_t od, Py_ssize_t oh, int mode,
                               double p) noexcept nogil:
    """One output row from its window rows ``plane + offsets[r]``."""
    cdef real_t* col = buf + plan.pad_w
    cdef const real_t* src = buf          # what the horizontal pass reads
    if n_rows == 1 and mode == SUM_AVERAGE and plan.direct_w:
        # one window row that needs no padding: read it in place, no copy
        src = plane + offsets[0]
        col = <real_t*>src
    elif mode == SUM_AVERAGE:
        _vsum(plane, offsets, n_rows, col, plan.in_w)
    else:
        _vsum_lp(plane, offsets, n_rows, col, plan.in_w, mode, p)
    _sum_finish(src, col, out_row, div_w, plan, od, oh, mode, p, src != buf)


cdef inline void _sum_slices(const real_t* plane, real_t* buf, Py_ssize_t buffer_width,
                             int64_t* offsets, const Plan* plan, Py_ssize_t od, Py_ssize_t oh,
                             Py_ssize_t n_out_rows) noexcept nogil:
    """Vertical passes of output rows (od, oh .. oh + n_out_rows - 1) into the
    scratch rows ``buf + j * buffer_width``, one depth slice at a time.

    Row by row, a window pooled along D reads kd row blocks a whole slice
    apart, streams the hardware prefetcher does not follow; slice by slice, the
    rows of each slice are read in address order (aap3d at 1 thread: 6.4 -> 2.8
    ms; software prefetch on top of it only slowed maxpool3d, 4.5 -> 4.9 ms)."""
    cdef const int64_t* wd = plan.win_d + 3 * od
    cdef Py_ssize_t td, j, n_rows
    if wd[1] == 0:
        for j in range(n_out_rows):
            _vsum(plane, offsets, 0, buf + j * buffer_width + plan.pad_w, plan.in_w)
        return
    for td in range(wd[1]):
        for j in range(n_out_rows):
            n_rows = _slice_row_offsets(plan, wd[0] + td * plan.dil_d, oh + j, offsets)
            if td == 0:
                _vsum(plane, offsets, n_rows, buf + j * buffer_width + plan.pad_w, plan.in_w)
            else:
                _vsum_add(plane, offsets, n_rows, buf + j * buffer_width + plan.pad_w, plan.in_w)


cdef inline void _sum_finish(const real_t* src, const real_t* col, real_t* out_row,
                             const real_t* div_w, const Plan* plan, Py_ssize_t od,
                             Py_ssize_t oh, int mode, double p,
                             bint from_input=False) noexcept nogil:
    """Horizontal pass and divisor of one output row from its column sums
    ``col`` (``src``: the same sums with the W padding before them; or with
    from_input, the input row itself)."""
    cdef Py_ssize_t o
    cdef real_t row_div
    cdef double inv_p
    # average: divisor = div_d * div_h * div_w, each axis's factor from its
    # table; a zero divisor (empty exclude-pad window) gives NaN, as in OpenVINO.
    row_div = <real_t>(plan.win_d[3 * od + 2] * plan.win_h[3 * oh + 2])
    if mode != SUM_AVERAGE:
        div_w = NULL
    if plan.uniform_w:
        _hsum(src, out_row, plan.out_w, plan.kernel_w, plan.stride_w, plan.dil_w, div_w, row_div,
              from_input)
    else:
        _hsum_table(col, out_row, plan, div_w, row_div)
    if mode == SUM_LP_2:
        for o in range(plan.out_w):
            out_row[o] = sqrt(out_row[o])
    elif mode == SUM_LP_P:
        inv_p = 1.0 / p
        for o in range(plan.out_w):
            out_row[o] = <real_t>pow(out_row[o], inv_p)


cdef void _sum_pool(const real_t* x, real_t* out, Py_ssize_t n_planes, const real_t* div_w,
                    const Plan* plan, Py_ssize_t buffer_width, Py_ssize_t max_rows,
                    int mode, double p, bint rows_k3, int n_threads, int* failed) noexcept nogil:
    cdef Py_ssize_t in_plane = plan.in_d * plan.in_h * plan.in_w
    cdef Py_ssize_t out_plane = plan.out_d * plan.out_h * plan.out_w
    cdef Py_ssize_t rows_per_plane = plan.out_d * plan.out_h
    cdef Py_ssize_t n_units = n_planes * plan.blocks_per_plane
    cdef Py_ssize_t unit, plane, row, row_end, od, oh, i, j, n_group
    # depth slice by slice: scratch rows for a group of output rows
    cdef bint by_slice = plan.slice_rows > 0 and mode == SUM_AVERAGE
    # adaptive averages of wide windows: all the rows of eight windows summed
    # in lanes, one fold (the separable passes: 50 -> 7 at 2 threads 0.49 ->
    # 0.35 ms, 100 -> 7 0.64 -> 0.37 ms; windows under 8 taps and windows of
    # one row were slower that way: 30 -> 7 0.35 -> 0.49, 1000 -> 7 in 1D
    # 1.35 -> 4.45, eight interleaved streams through each row)
    cdef bint rows_8_wide = plan.rows_8_wide and mode == SUM_AVERAGE
    # adaptive averages of narrow bins: eight output rows at a time (not where
    # the rows are prefetched: 2x64x224x224 -> 100 went 1.60 -> 2.32 ms)
    cdef bint narrow = (real_t is float and plan.rows_narrow and mode == SUM_AVERAGE
                        and plan.prefetch == 0)
    cdef Py_ssize_t scratch_rows = plan.slice_rows if by_slice else 1
    cdef real_t* buf
    cdef int64_t* offsets
    cdef float* lanes = NULL
    with parallel(num_threads=n_threads):
        # per-thread scratch; its padding (zeros) is never overwritten
        buf = <real_t*>malloc(scratch_rows * buffer_width * sizeof(real_t))
        offsets = <int64_t*>malloc(max_rows * sizeof(int64_t))
        lanes = <float*>malloc(8 * (plan.in_w + plan.out_w) * sizeof(float)) if narrow else NULL
        if buf == NULL or offsets == NULL or (narrow and lanes == NULL):
            failed[0] = 1
        else:
            for i in range(scratch_rows * buffer_width):
                buf[i] = 0
        for unit in prange(n_units, schedule="dynamic", chunksize=_chunk(n_units, n_threads)):
            if buf == NULL or offsets == NULL or (narrow and lanes == NULL):
                continue
            plane = unit // plan.blocks_per_plane
            row = (unit - plane * plan.blocks_per_plane) * plan.rows_per_block
            row_end = min(row + plan.rows_per_block, rows_per_plane)
            od = row // plan.out_h
            oh = row - od * plan.out_h
            while row < row_end:
                if by_slice:
                    # output rows of one od, at most scratch_rows of them
                    n_group = min(row_end - row, scratch_rows, plan.out_h - oh)
                    _sum_slices(x + plane * in_plane, buf, buffer_width, offsets, plan, od, oh,
                                n_group)
                    for j in range(n_group):
                        _sum_finish(buf + j * buffer_width, buf + j * buffer_width + plan.pad_w,
                                    out + plane * out_plane + (row + j) * plan.out_w, div_w,
                                    plan, od, oh + j, mode, p)
                elif real_t is float and rows_k3:
                    # the rest of this depth slice's rows in one call
                    n_group = min(row_end - row, plan.out_h - oh)
                    _sum_rows_k3_f32(x + plane * in_plane
                                     + plan.win_d[3 * od] * plan.in_h * plan.in_w,
                                     plan.in_w, plan.win_h + 3 * oh, n_group,
                                     out + plane * out_plane + row * plan.out_w, plan.out_w,
                                     buf, plan.pad_w, div_w, plan.win_d[3 * od + 2],
                                     <int>plan.stride_w, mode == SUM_LP_2)
                elif real_t is float and narrow and plan.win_d[3 * od + 1] == 1 and \
                        _adaptive_narrow_f32(
                            x + plane * in_plane + plan.win_d[3 * od] * plan.in_h * plan.in_w,
                            plan.in_w, plan.win_h + 3 * oh, min(8, row_end - row, plan.out_h - oh),
                            plan.win_w, plan.out_w, out + plane * out_plane + row * plan.out_w,
                            plan.out_w, div_w, plan.win_d[3 * od + 2], lanes):
                    # up to eight rows of this depth slice in one call
                    n_group = min(8, row_end - row, plan.out_h - oh)
                elif real_t is float and rows_8_wide:
                    # the rest of this depth slice's rows in one call
                    n_group = min(row_end - row, plan.out_h - oh)
                    _adaptive_rows_f32(
                        x + plane * in_plane + plan.win_d[3 * od] * plan.in_h * plan.in_w,
                        plan.win_d[3 * od + 1], plan.dil_d * plan.in_h * plan.in_w, plan.in_w,
                        plan.win_h + 3 * oh, n_group, plan.win_w, plan.out_w,
                        out + plane * out_plane + row * plan.out_w, plan.out_w, div_w,
                        plan.win_d[3 * od + 2])
                else:
                    n_group = 1
                    _sum_row(x + plane * in_plane, out + plane * out_plane + row * plan.out_w,
                             buf, offsets, div_w, plan, od, oh, mode, p)
                row = row + n_group
                oh = oh + n_group
                if oh == plan.out_h:
                    oh = 0
                    od = od + 1
        free(buf)
        free(offsets)
        free(lanes)


def sum_pool(const real_t[:, ::1] x,          # IN  (n_planes, in_d*in_h*in_w)
             real_t[:, ::1] out,              # OUT (n_planes, out_d*out_h*out_w)
             Geometry geometry not None,
             Py_ssize_t rows_per_block, int mode, double p, int n_threads):
    """Average (``mode=0``) or Lp pooling (``mode`` 1, 2, 3 for p = 1, 2, other).

    Average: out = (sum of the taps inside the input) / (div_d * div_h * div_w),
    the factors coming from column 2 of the window tables. Lp:
    (sum |x|^p)^(1/p); padding contributes zeros.
    """
    cdef Plan plan = geometry.plan
    cdef const real_t* div_w
    cdef int failed[1]
    # float32 averages and L2 norms (LpPool p = 2) of 3-wide windows at stride
    # 1 or 2 (3x3 s1 and s2) whose H windows have at most 3 rows, with no
    # pooling along D and no prefetch: a run of rows per call (_sum_rows_k3_f32)
    cdef bint rows_k3 = (real_t is float and (mode == SUM_AVERAGE or mode == SUM_LP_2)
                         and plan.rows_3_wide and plan.prefetch == 0)
    failed[0] = 0
    if x.shape[0] == 0 or out.shape[1] == 0:
        return
    if (x.shape[1] != plan.in_d * plan.in_h * plan.in_w or out.shape[0] != x.shape[0]
            or out.shape[1] != plan.out_d * plan.out_h * plan.out_w):
        raise ValueError("array shapes do not match the geometry")
    if real_t is float:
        div_w = geometry.div_w_f32
    else:
        div_w = geometry.div_w_f64
    _set_blocks(&plan, rows_per_block)
    with nogil:
        if plan.slab_hi > plan.slab_lo and mode == SUM_AVERAGE:
            _pool_by_depth(&x[0, 0], &out[0, 0], x.shape[0], div_w, &plan,
                           geometry.buffer_width, geometry.max_rows, False, n_threads, failed)
        else:
            _sum_pool(&x[0, 0], &out[0, 0], x.shape[0], div_w, &plan, geometry.buffer_width,
                      geometry.max_rows, mode, p, rows_k3, n_threads, failed)
    if failed[0]:
        raise MemoryError("ovpool: cannot allocate the per-thread scratch buffers")


# --------------------------------------------------------------------------
# Max pools
# --------------------------------------------------------------------------
#
# NaN rule (PyTorch's): a NaN tap always replaces the running maximum, so a
# window with a NaN gives NaN, and its index is the last NaN in row-major
# window order. Ties keep the first maximum in row-major window order
# (strict ">"). The values-only kernel may combine in any order (the value is
# the same); the with-indices kernel keeps both rules with a horizontal-first
# scan: the leftmost maximum of each window row, then the topmost row with
# the strict comparison.

cdef inline bint _max_rows_exact(const max_t* plane, const int64_t* offsets, Py_ssize_t n_rows,
                                 max_t* col, Py_ssize_t width) noexcept nogil:
    """col = NaN-propagating maximum of the rows (canonical NaN). float32 rows
    are combined with plain maxps and one NaN check per row, and redone with
    the exact rule when they hold a NaN. Returns True when col is known to
    hold no NaN (the horizontal pass then drops its NaN flag)."""
    if max_t is float:
        if n_rows > 0 and not _vmax_rows_f32(plane, offsets, n_rows, col, width):
            return True
    _vmax(plane, offsets, n_rows, col, width)
    return False


cdef inline void _max_row_from(const max_t* plane, const int64_t* offsets, Py_ssize_t n_rows,
                               max_t* buf, max_t* out_row, const Plan* plan) noexcept nogil:
    """One output row of max values from its window rows ``plane + offsets[r]``."""
    cdef const max_t* src
    if n_rows == 1 and plan.direct_w:
        # one window row that needs no padding: read it in place
        src = plane + offsets[0]
        if plan.uniform_w:
            _hmax(src, out_row, plan.out_w, plan.kernel_w, plan.stride_w, plan.dil_w, False)
        else:
            _hmax_table(src, out_row, plan)
        return
    _max_finish(buf, out_row, plan,
                _max_rows_exact(plane, offsets, n_rows, buf + plan.pad_w, plan.in_w))


cdef inline void _max_finish(const max_t* buf, max_t* out_row, const Plan* plan,
                             bint nan_free) noexcept nogil:
    """Horizontal pass of one output row from its padded column maxima."""
    if plan.uniform_w:
        _hmax(buf, out_row, plan.out_w, plan.kernel_w, plan.stride_w, plan.dil_w, nan_free)
    else:
        _hmax_table(buf + plan.pad_w, out_row, plan)


cdef inline void _max_slices(const max_t* plane, max_t* buf, Py_ssize_t buffer_width,
                             int64_t* offsets, const Plan* plan, Py_ssize_t od, Py_ssize_t oh,
                             Py_ssize_t n_out_rows) noexcept nogil:
    """_sum_slices for the maximum."""
    cdef const int64_t* wd = plan.win_d + 3 * od
    cdef Py_ssize_t td, j, n_rows
    if wd[1] == 0:
        for j in range(n_out_rows):
            _vmax(plane, offsets, 0, buf + j * buffer_width + plan.pad_w, plan.in_w)
        return
    for td in range(wd[1]):
        for j in range(n_out_rows):
            n_rows = _slice_row_offsets(plan, wd[0] + td * plan.dil_d, oh + j, offsets)
            if td == 0:
                _vmax(plane, offsets, n_rows, buf + j * buffer_width + plan.pad_w, plan.in_w)
            else:
                _vmax_add(plane, offsets, n_rows, buf + j * buffer_width + plan.pad_w, plan.in_w)


cdef void _max_pool(const max_t* x, max_t* out, Py_ssize_t n_planes, const Plan* plan,
                    Py_ssize_t buffer_width, Py_ssize_t max_rows, int n_threads,
                    int* failed) noexcept nogil:
    # float32 windows 3 wide at stride 1 or 2 (3x3 s2, 3x3 s1) with no pooling
    # along D and no prefetch: a run of rows per call (_max_rows_k3_f32)
    cdef bint rows_k3 = max_t is float and plan.rows_3_wide and plan.prefetch == 0
    cdef Py_ssize_t in_plane = plan.in_d * plan.in_h * plan.in_w
    cdef Py_ssize_t out_plane = plan.out_d * plan.out_h * plan.out_w
    cdef Py_ssize_t rows_per_plane = plan.out_d * plan.out_h
    cdef Py_ssize_t n_units = n_planes * plan.blocks_per_plane
    cdef Py_ssize_t unit, plane, row, row_end, od, oh, n_rows, i, j, n_group, n_done
    cdef Py_ssize_t scratch_rows = max(1, plan.slice_rows)
    cdef max_t* buf
    cdef int64_t* offsets
    cdef max_t* out_row
    with parallel(num_threads=n_threads):
        # per-thread scratch; its padding (the identity) is never overwritten
        buf = <max_t*>malloc(scratch_rows * buffer_width * sizeof(max_t))
        offsets = <int64_t*>malloc(max_rows * sizeof(int64_t))
        if buf == NULL or offsets == NULL:
            failed[0] = 1
        else:
            for i in range(scratch_rows * buffer_width):
                buf[i] = _max_identity(<max_t>0)
        for unit in prange(n_units, schedule="dynamic", chunksize=_chunk(n_units, n_threads)):
            if buf == NULL or offsets == NULL:
                continue
            plane = unit // plan.blocks_per_plane
            row = (unit - plane * plan.blocks_per_plane) * plan.rows_per_block
            row_end = min(row + plan.rows_per_block, rows_per_plane)
            od = row // plan.out_h
            oh = row - od * plan.out_h
            while row < row_end:
                if plan.slice_rows > 0:
                    n_group = min(row_end - row, scratch_rows, plan.out_h - oh)
                    _max_slices(x + plane * in_plane, buf, buffer_width, offsets, plan, od, oh,
                                n_group)
                    for j in range(n_group):
                        _max_finish(buf + j * buffer_width,
                                    out + plane * out_plane + (row + j) * plan.out_w, plan, False)
                elif max_t is float and rows_k3:
                    # the rest of this depth slice's rows in one call, up to a row
                    # with a NaN (or no window row), which takes the row path
                    n_group = min(row_end - row, plan.out_h - oh)
                    n_done = _max_rows_k3_f32(x + plane * in_plane
                                              + plan.win_d[3 * od] * plan.in_h * plan.in_w,
                                              plan.in_w, plan.win_h + 3 * oh, n_group,
                                              out + plane * out_plane + row * plan.out_w,
                                              plan.out_w, buf, plan.pad_w, <int>plan.stride_w)
                    if n_done < n_group:
                        n_group = n_done + 1
                        n_rows = _row_offsets(plan, od, oh + n_done, offsets)
                        _max_row_from(x + plane * in_plane, offsets, n_rows, buf,
                                      out + plane * out_plane + (row + n_done) * plan.out_w,
                                      plan)
                else:
                    n_group = 1
                    n_rows = _row_offsets(plan, od, oh, offsets)
                    if plan.prefetch > 0 and n_rows > 0:
                        _prefetch_ahead(<const char*>(x + plane * in_plane), offsets, n_rows,
                                        plan.win_h[3 * oh + 1], sizeof(max_t), plan)
                    out_row = out + plane * out_plane + row * plan.out_w
                    _max_row_from(x + plane * in_plane, offsets, n_rows, buf, out_row, plan)
                row = row + n_group
                oh = oh + n_group
                if oh == plan.out_h:
                    oh = 0
                    od = od + 1
        free(buf)
        free(offsets)


cdef inline void _prefetch_slab_part(const char* next_src, const int64_t* next_wd,
                                     Py_ssize_t part, Py_ssize_t item_size,
                                     const Plan* plan) noexcept nogil:
    """Part ``part`` of out_h of the slab rows of the next work unit's depth
    slices (plane ``next_src``, depth window ``next_wd``): the thread usually
    takes the next unit itself, and spreading the requests over the output
    rows of the current unit keeps them ahead of the slab pass without
    flooding the miss queue. Each slice's rows are only a few pages long,
    which the hardware prefetcher does not cross."""
    cdef Py_ssize_t span = (plan.slab_hi - plan.slab_lo) * plan.in_w * item_size
    cdef Py_ssize_t lo = (span * part // plan.out_h) & ~63
    cdef Py_ssize_t hi = span * (part + 1) // plan.out_h
    cdef Py_ssize_t td, b
    cdef const char* start
    for td in range(next_wd[1]):
        start = next_src + (((next_wd[0] + td * plan.dil_d) * plan.in_h + plan.slab_lo)
                            * plan.in_w * item_size)
        for b in range(lo, hi, 64):
            _prefetch_l2(start + b)


cdef void _pool_by_depth(const max_t* x, max_t* out, Py_ssize_t n_planes, const max_t* div_w,
                         const Plan* plan, Py_ssize_t buffer_width, Py_ssize_t max_rows,
                         bint is_max, int n_threads, int* failed) noexcept nogil:
    """Max values (``is_max``) or average pooling along D first. A work unit
    is one output depth od of one plane: the maxima or sums over its window's
    depth slices go into a per-thread slab (input rows slab_lo..slab_hi-1),
    from which every output row of od is pooled as from a 2D plane (``div_w``:
    the average's W factors, NULL for the maximum). The slab pass reads kd
    contiguous streams, one long row per slice, and each input row is read
    once per od instead of once per output row that covers it (maxpool3d
    3x3x3 s2: 1.5 reads per element instead of 2.25)."""
    cdef Py_ssize_t slice_size = plan.in_h * plan.in_w
    cdef Py_ssize_t in_plane = plan.in_d * slice_size
    cdef Py_ssize_t out_plane = plan.out_d * plan.out_h * plan.out_w
    cdef Py_ssize_t n_units = n_planes * plan.out_d
    cdef Py_ssize_t slab_width = (plan.slab_hi - plan.slab_lo) * plan.in_w
    cdef Py_ssize_t unit, plane, od, oh, td, n_rows, i
    cdef const int64_t* wd
    cdef const int64_t* next_wd
    cdef const max_t* src
    cdef const max_t* next_src
    cdef max_t* buf
    cdef max_t* slab
    cdef max_t* out_row
    cdef int64_t* offsets
    cdef float* lanes = NULL
    # adaptive averages of narrow bins: eight output rows at a time
    cdef bint narrow = max_t is float and not is_max and plan.rows_narrow
    cdef Py_ssize_t n_group, ahead_row
    with parallel(num_threads=n_threads):
        buf = <max_t*>malloc(buffer_width * sizeof(max_t))
        slab = <max_t*>malloc(slice_size * sizeof(max_t))
        offsets = <int64_t*>malloc(max_rows * sizeof(int64_t))
        lanes = <float*>malloc(8 * (plan.in_w + plan.out_w) * sizeof(float)) if narrow else NULL
        if buf == NULL or slab == NULL or offsets == NULL or (narrow and lanes == NULL):
            failed[0] = 1
        else:
            # the padding of the column buffer: the identity, never overwritten
            for i in range(buffer_width):
                buf[i] = _max_identity(<max_t>0) if is_max else 0
        for unit in prange(n_units, schedule="dynamic", chunksize=_chunk(n_units, n_threads)):
            if buf == NULL or slab == NULL or offsets == NULL or (narrow and lanes == NULL):
                continue
            plane = unit // plan.out_d
            od = unit - plane * plan.out_d
            src = x + plane * in_plane
            wd = plan.win_d + 3 * od
            # the slab's rows are contiguous in every depth slice: one long row
            for td in range(wd[1]):
                offsets[td] = (wd[0] + td * plan.dil_d) * slice_size + plan.slab_lo * plan.in_w
            if is_max:
                _max_rows_exact(src, offsets, wd[1], slab + plan.slab_lo * plan.in_w, slab_width)
            elif max_t is float or max_t is double:
                _vsum(src, offsets, wd[1], slab + plan.slab_lo * plan.in_w, slab_width)
            # the next unit: the next output depth, or the first of the next plane
            next_src = src if od + 1 < plan.out_d else src + in_plane
            next_wd = wd + 3 if od + 1 < plan.out_d else plan.win_d
            oh = 0
            if max_t is float and narrow:
                while oh < plan.out_h:
                    n_group = min(8, plan.out_h - oh)
                    if not _adaptive_narrow_f32(slab, plan.in_w, plan.win_h + 3 * oh, n_group,
                                                plan.win_w, plan.out_w,
                                                out + plane * out_plane
                                                + (od * plan.out_h + oh) * plan.out_w,
                                                plan.out_w, div_w, wd[2], lanes):
                        break
                    if plan.slab_prefetch and unit + 1 < n_units:
                        for ahead_row in range(oh, oh + n_group):
                            _prefetch_slab_part(<const char*>next_src, next_wd, ahead_row,
                                                sizeof(max_t), plan)
                    oh = oh + n_group
            for oh in range(oh, plan.out_h):
                if plan.slab_prefetch and unit + 1 < n_units:
                    _prefetch_slab_part(<const char*>next_src, next_wd, oh, sizeof(max_t), plan)
                n_rows = _slice_row_offsets(plan, 0, oh, offsets)
                out_row = out + plane * out_plane + (od * plan.out_h + oh) * plan.out_w
                if is_max:
                    _max_row_from(slab, offsets, n_rows, buf, out_row, plan)
                elif max_t is float or max_t is double:
                    _sum_row_from(slab, offsets, n_rows, out_row, buf, div_w, plan, od, oh,
                                  SUM_AVERAGE, 1.0)
        free(buf)
        free(slab)
        free(offsets)
        free(lanes)


def max_pool(const max_t[:, ::1] x,            # IN  (n_planes, in_d*in_h*in_w)
             max_t[:, ::1] out,                # OUT (n_planes, out_d*out_h*out_w)
             Geometry geometry not None,
             Py_ssize_t rows_per_block, int n_threads):
    """Max pooling, values only. A window with no element inside the input
    gives the buffer identity (-inf); the caller replaces it where needed."""
    cdef Plan plan = geometry.plan
    cdef int failed[1]
    failed[0] = 0
    if x.shape[0] == 0 or out.shape[1] == 0:
        return
    if (x.shape[1] != plan.in_d * plan.in_h * plan.in_w or out.shape[0] != x.shape[0]
            or out.shape[1] != plan.out_d * plan.out_h * plan.out_w):
        raise ValueError("array shapes do not match the geometry")
    _set_blocks(&plan, rows_per_block)
    with nogil:
        if plan.slab_hi > plan.slab_lo:
            _pool_by_depth(&x[0, 0], &out[0, 0], x.shape[0], NULL, &plan, geometry.buffer_width,
                           geometry.max_rows, True, n_threads, failed)
        else:
            _max_pool(&x[0, 0], &out[0, 0], x.shape[0], &plan, geometry.buffer_width,
                      geometry.max_rows, n_threads, failed)
    if failed[0]:
        raise MemoryError("ovpool: cannot allocate the per-thread scratch buffers")


cdef inline void _argmax_taps(const max_t* row, max_t* best, int32_t* pos,
                              Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t stride,
                              Py_ssize_t start, Py_ssize_t dilation, Py_ssize_t t_begin,
                              Py_ssize_t k, int32_t row_offset) noexcept nogil:
    """Fold taps t_begin..k-1 of one window row into the running maximum of
    outputs lo..hi-1 (all their taps inside the input). Tap t of output o is
    row[o*stride + start + t*dilation]; the taps arrive in row-major window
    order, so the strict ">" keeps the first maximum and "!=" the last NaN.
    Branch-free selects over o vectorise (pos is an in-plane offset)."""
    cdef Py_ssize_t o, t, i
    cdef max_t value
    cdef bint take
    for t in range(t_begin, k):
        for o in range(lo, hi):
            i = o * stride + start + t * dilation
            value = row[i]
            take = (value > best[o]) | (value != value)
            best[o] = value if take else best[o]
            pos[o] = <int32_t>(row_offset + i) if take else pos[o]


cdef inline void _argmax_first_tap(const max_t* row, max_t* best, int32_t* pos,
                                   Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t stride,
                                   Py_ssize_t start, int32_t row_offset) noexcept nogil:
    cdef Py_ssize_t o, i
    for o in range(lo, hi):
        i = o * stride + start
        best[o] = row[i]
        pos[o] = <int32_t>(row_offset + i)


cdef inline void _argmax_row(const max_t* row, max_t* best, int32_t* pos, const Plan* plan,
                             bint first_row, int32_t row_offset) noexcept nogil:
    """One window row for the interior outputs; strides 1 and 2 are
    specialised so that the loads are contiguous or deinterleaved."""
    cdef Py_ssize_t lo = plan.interior_lo, hi = plan.interior_hi
    cdef Py_ssize_t start = -plan.pad_w, k = plan.kernel_w, d = plan.dil_w
    cdef Py_ssize_t t_begin = 1 if first_row else 0
    if first_row:
        if plan.stride_w == 1:
            _argmax_first_tap(row, best, pos, lo, hi, 1, start, row_offset)
        elif plan.stride_w == 2:
            _argmax_first_tap(row, best, pos, lo, hi, 2, start, row_offset)
        else:
            _argmax_first_tap(row, best, pos, lo, hi, plan.stride_w, start, row_offset)
    if plan.stride_w == 1 and d == 1:
        _argmax_taps(row, best, pos, lo, hi, 1, start, 1, t_begin, k, row_offset)
    elif plan.stride_w == 2 and d == 1:
        _argmax_taps(row, best, pos, lo, hi, 2, start, 1, t_begin, k, row_offset)
    elif plan.stride_w == 3 and d == 1:
        _argmax_taps(row, best, pos, lo, hi, 3, start, 1, t_begin, k, row_offset)
    elif plan.stride_w == 4 and d == 1:
        _argmax_taps(row, best, pos, lo, hi, 4, start, 1, t_begin, k, row_offset)
    else:
        _argmax_taps(row, best, pos, lo, hi, plan.stride_w, start, d, t_begin, k, row_offset)


cdef inline bint _short_windows(const int64_t* win_w, Py_ssize_t o_begin,
                                Py_ssize_t o_end) noexcept nogil:
    # every window of outputs o_begin..o_end-1 has under 8 taps along W
    cdef Py_ssize_t ow
    for ow in range(o_begin, o_end):
        if win_w[3 * ow + 1] >= 8:
            return False
    return True


cdef inline void _max_edges_with_indices(const max_t* plane, max_t* out_row, index_t* index_row,
                                         const Plan* plan, Py_ssize_t od, Py_ssize_t oh,
                                         Py_ssize_t o_begin, Py_ssize_t o_end,
                                         int64_t index_base, int64_t stride_d,
                                         int64_t stride_h, int64_t stride_w) noexcept nogil:
    """Outputs o_begin..o_end-1 by the window tables (edge windows that meet
    the padding, or adaptive bins): the leftmost maximum of each window row,
    then the topmost row, both with the strict comparison (see above)."""
    cdef const int64_t* wd = plan.win_d + 3 * od
    cdef const int64_t* wh = plan.win_h + 3 * oh
    cdef const int64_t* ww
    cdef Py_ssize_t td, th, t, ow, first, n_taps, tap, best_tap, in_d_idx, in_h_idx
    cdef const max_t* row
    cdef max_t best, value
    cdef int64_t row_base
    cdef bint first_row = True, take
    cdef float best_f32
    cdef int64_t offset

    if max_t is float and wd[1] == 1 and _short_windows(plan.win_w, o_begin, o_end):
        # one depth slice, windows under 8 taps a row: each window whole,
        # without data-dependent branches
        for ow in range(o_begin, o_end):
            ww = plan.win_w + 3 * ow
            if wh[1] == 0 or ww[1] == 0:
                out_row[ow] = _lowest(<max_t>0)
                index_row[ow] = <index_t>index_base
                continue
            offset = _window_argmax_f32(plane, plan.in_w, wd[0] * plan.in_h + wh[0], wh[1],
                                        plan.dil_h, ww[0], ww[1], plan.dil_w, &best_f32)
            out_row[ow] = best_f32
            index_row[ow] = <index_t>_flat_index(offset, plan, index_base, stride_d, stride_h,
                                                 stride_w)
        return
    for ow in range(o_begin, o_end):
        out_row[ow] = _lowest(<max_t>0)
        index_row[ow] = <index_t>index_base
    for td in range(wd[1]):
        in_d_idx = wd[0] + td * plan.dil_d
        for th in range(wh[1]):
            in_h_idx = wh[0] + th * plan.dil_h
            row = plane + (in_d_idx * plan.in_h + in_h_idx) * plan.in_w
            row_base = index_base + in_d_idx * stride_d + in_h_idx * stride_h
            for ow in range(o_begin, o_end):
                ww = plan.win_w + 3 * ow
                first = ww[0]
                n_taps = ww[1]
                if n_taps == 0:
                    continue
                if plan.dil_w == 1 and n_taps >= 8:
                    best_tap = _span_argmax(row + first, n_taps) + first
                    best = row[best_tap]
                else:
                    best = row[first]
                    best_tap = first
                    for t in range(1, n_taps):
                        tap = first + t * plan.dil_w
                        value = row[tap]
                        take = (value > best) | (value != value)
                        best = value if take else best
                        best_tap = tap if take else best_tap
                if first_row or best > out_row[ow] or best != best:
                    out_row[ow] = best
                    index_row[ow] = <index_t>(row_base + best_tap * stride_w)
            first_row = False


cdef inline Py_ssize_t _rank_offset(Py_ssize_t width, Py_ssize_t item_size) noexcept nogil:
    # byte offset of the row ranks after the column maxima in one allocation,
    # rounded up to 64 so that the int32 ranks stay aligned
    return ((width * item_size + 63) // 64) * 64


cdef inline void _max_table_with_indices(const max_t* plane, max_t* out_row, index_t* index_row,
                                         max_t* col, int32_t* col_row, int64_t* offsets,
                                         int64_t* positions, const Plan* plan, Py_ssize_t od,
                                         Py_ssize_t oh, int64_t index_base, int64_t stride_d,
                                         int64_t stride_h, int64_t stride_w) noexcept nogil:
    """Values and indices of one output row by the window tables, vertical
    first (adaptive bins of unequal size).

    The vertical pass keeps, per input column, the maximum over the window
    rows and the rank of the topmost row holding it (the bottommost for a
    NaN). The horizontal pass then takes, among the columns of a window, the
    lexicographically smallest (row, column) holding the maximum, or the
    largest holding a NaN: that is the first maximum (last NaN) in row-major
    window order, so the tie and NaN rules hold.

    Where ``plan.bins_by_window``, each window is taken on its own first
    (the same rule, see ovpool_bins_group_f32; ``positions``, out_w int64, is
    its scratch), and a row where that meets a NaN by the fold."""
    cdef Py_ssize_t n_rows = _row_offsets(plan, od, oh, offsets)
    cdef Py_ssize_t r, i, o, t, first, n_taps, c, best_c
    cdef const max_t* row
    cdef const int64_t* ww
    cdef max_t value, best
    cdef int32_t rank, best_r
    cdef int64_t key, best_key
    cdef bint take, value_nan, best_nan, any_nan, row_major
    cdef bint vector_bins = (max_t is float and plan.dil_w == 1 and plan.in_w >= 8
                             and plan.in_d * plan.in_h < RANK_KEY_ROWS)
    cdef const char* ahead
    if n_rows == 0:
        for o in range(plan.out_w):
            out_row[o] = _lowest(<max_t>0)
            index_row[o] = <index_t>index_base
        return
    # ask for as many bytes as the window has, from 2 KiB past its last row:
    # where the next output rows' windows read. The hardware prefetcher does
    # not follow the column blocks' row-by-row order (adaptive max
    # 8x256x50x50 -> 7 with indices 0.86-0.88x at 1 and 2 threads, the window
    # right after this one), and the folds of one window do not hide the
    # latency of the next: 2 KiB further gave 0.91-0.94x at 1 and 2 threads
    # (100 -> 7 0.91-0.95x; 4 and 8 KiB less; whole windows further ahead
    # made large windows slower)
    ahead = <const char*>(plane + offsets[n_rows - 1] + plan.in_w) + 2048
    for i in range(0, n_rows * plan.in_w * <Py_ssize_t>sizeof(max_t), 256):
        # four lines a turn (a prefetch past the end cannot fault)
        _prefetch(ahead + i)
        _prefetch(ahead + i + 64)
        _prefetch(ahead + i + 128)
        _prefetch(ahead + i + 192)
    if max_t is float and plan.bins_by_window:
        row_major = index_t is int64_t and _row_major(plan, stride_d, stride_h, stride_w)
        if _bins_argmax_f32(plane, offsets, n_rows, plan.in_w, plan.win_w, plan.out_w, out_row,
                            positions, <int64_t*>index_row if row_major else NULL,
                            index_base) == 0:
            if not row_major:
                for o in range(plan.out_w):
                    index_row[o] = <index_t>_flat_index(positions[o], plan, index_base,
                                                        stride_d, stride_h, stride_w)
            return
        # a NaN (or +inf and -inf in a column): the fold below takes the row
        # again, with the exact rule where a window holds the NaN
    if max_t is float:
        _fold_rows_argmax_f32(plane, offsets, n_rows, col, col_row, plan.in_w)
    else:
        row = plane + offsets[0]
        for i in range(plan.in_w):
            col[i] = row[i]
            col_row[i] = 0
        for r in range(1, n_rows):
            row = plane + offsets[r]
            for i in range(plan.in_w):
                value = row[i]
                take = (value > col[i]) | (value != value)
                col[i] = value if take else col[i]
                col_row[i] = <int32_t>r if take else col_row[i]
    for o in range(plan.out_w):
        ww = plan.win_w + 3 * o
        first = ww[0]
        n_taps = ww[1]
        if n_taps == 0:
            out_row[o] = _lowest(<max_t>0)
            index_row[o] = <index_t>index_base
            continue
        if max_t is float:
            # windows of up to 8 columns: the same choice in one vector
            if vector_bins and n_taps <= 8:
                c = _window_argmax8_f32(col, col_row, plan.in_w, first, n_taps)
                if c >= 0:
                    out_row[o] = col[c]
                    index_row[o] = <index_t>_flat_index(offsets[col_row[c]] + c, plan,
                                                        index_base, stride_d, stride_h,
                                                        stride_w)
                    continue
        # the maximum by a compare-select chain, then the smallest (rank,
        # column) holding it as one int64 key: no branch depends on the data
        # (mispredicted branches cost more than both passes); a window with a
        # NaN takes the exact loop below
        best = col[first]
        any_nan = best != best
        for t in range(1, n_taps):
            value = col[first + t * plan.dil_w]
            best = value if value > best else best
            any_nan = any_nan | (value != value)
        if not any_nan:
            best_key = INT64_MAX
            for t in range(n_taps):
                c = first + t * plan.dil_w
                key = ((<int64_t>col_row[c]) << 32) | c
                best_key = key if (col[c] == best) & (key < best_key) else best_key
            best_r = <int32_t>(best_key >> 32)
            best_c = <Py_ssize_t>(best_key - ((<int64_t>best_r) << 32))
            best = col[best_c]      # that element's own value: -0.0 == +0.0 above
        else:
            best = col[first]
            best_r = col_row[first]
            best_c = first
            for t in range(1, n_taps):
                c = first + t * plan.dil_w
                value = col[c]
                rank = col_row[c]
                value_nan = value != value
                best_nan = best != best
                if best_nan:
                    take = value_nan and rank >= best_r
                elif value_nan:
                    take = True
                else:
                    take = value > best or (value == best and rank < best_r)
                if take:
                    best = value
                    best_r = rank
                    best_c = c
        out_row[o] = best
        index_row[o] = <index_t>_flat_index(offsets[best_r] + best_c, plan, index_base,
                                            stride_d, stride_h, stride_w)


cdef inline Py_ssize_t _max_rows_with_indices(const max_t* plane, max_t* out_row,
                                              index_t* index_row, int32_t* pos, max_t* col,
                                              int64_t* offsets, const Plan* plan,
                                              Py_ssize_t od, Py_ssize_t oh,
                                              int64_t index_base, int64_t stride_d,
                                              int64_t stride_h, int64_t stride_w,
                                              Py_ssize_t max_rows) noexcept nogil:
    """Values and flat indices of output row (od, oh) and, where the vector
    argmax takes them with int64 row-major indices, of up to max_rows - 1
    following rows of the slice whose windows have as many rows, one stride
    lower each (one kernel call for them); returns the number of rows done.
    See the NaN and tie rules above.

    The index of input element (id, ih, iw) is
    ``index_base + id*stride_d + ih*stride_h + iw*stride_w``; an empty window
    gives the lowest value and ``index_base`` (OpenVINO's behaviour).
    """
    cdef Py_ssize_t n_run = 1, r, row_step = 0
    cdef const int64_t* wd = plan.win_d + 3 * od
    cdef const int64_t* wh = plan.win_h + 3 * oh
    cdef Py_ssize_t lo = plan.interior_lo, hi = plan.interior_hi
    cdef Py_ssize_t td, th, in_d_idx, in_h_idx
    cdef bint first_row = True, vector_rows, left
    cdef int32_t row_offset
    # vertical-first by the tables unless enough outputs lie in the interior
    # to fill vector registers with the taps-outer argmax below
    if hi - lo < 16 and col != NULL:
        _max_table_with_indices(plane, out_row, index_row, col,
                                <int32_t*>(<char*>col + _rank_offset(plan.in_w, sizeof(max_t))),
                                offsets, <int64_t*>pos, plan, od, oh, index_base, stride_d,
                                stride_h, stride_w)
        return 1
    if wd[1] == 0 or wh[1] == 0 or hi <= lo:
        _max_edges_with_indices(plane, out_row, index_row, plan, od, oh, 0, plan.out_w,
                                index_base, stride_d, stride_h, stride_w)
        return 1
    vector_rows = (max_t is float and wd[1] == 1 and plan.dil_h == 1 and plan.dil_w == 1
                   and _vector_rows_ok(hi - lo, plan.stride_w, plan.kernel_w))
    # output 0 of 3-tap windows with W padding 1 joins the vector blocks
    # (ovpool_taps8s_left)
    left = (vector_rows and lo == 1
            and _left_edge_ok(hi, plan.stride_w, plan.kernel_w, plan.pad_w))
    if (max_t is float and vector_rows and index_t is int64_t and oh + 1 < plan.out_h
            and _row_major(plan, stride_d, stride_h, stride_w)):
        row_step = wh[3] - wh[0]
        while (n_run < max_rows and oh + n_run < plan.out_h
               and wh[3 * n_run + 1] == wh[1] and wh[3 * n_run] == wh[0] + n_run * row_step):
            n_run += 1
    for r in range(n_run):
        if lo > 0 and not left:
            _max_edges_with_indices(plane, out_row + r * plan.out_w,
                                    index_row + r * plan.out_w, plan, od, oh + r, 0, lo,
                                    index_base, stride_d, stride_h, stride_w)
        if hi < plan.out_w:
            _max_edges_with_indices(plane, out_row + r * plan.out_w,
                                    index_row + r * plan.out_w, plan, od, oh + r, hi,
                                    plan.out_w, index_base, stride_d, stride_h, stride_w)
    if max_t is float and vector_rows:
        # consecutive window rows: the vector argmax of _simd.h takes them all
        if left:
            lo = 0
        row_offset = <int32_t>((wd[0] * plan.in_h + wh[0]) * plan.in_w
                               + lo * plan.stride_w - plan.pad_w)
        if index_t is int64_t:
            if n_run > 1:
                _argmax_rows_f32(plane + row_offset, plan.in_w, out_row + lo, index_row + lo,
                                 hi - lo, wh[1], plan.stride_w, plan.kernel_w, row_offset,
                                 index_base, left, n_run, row_step * plan.in_w, plan.out_w)
                return n_run
        _argmax_row_indices(plane + row_offset, out_row + lo, index_row + lo, <int64_t*>pos,
                            hi - lo, wh[1], plan.stride_w, plan.kernel_w, row_offset, plan,
                            index_base, stride_d, stride_h, stride_w, left)
        return 1
    for td in range(wd[1]):
        in_d_idx = wd[0] + td * plan.dil_d
        for th in range(wh[1]):
            in_h_idx = wh[0] + th * plan.dil_h
            row_offset = <int32_t>((in_d_idx * plan.in_h + in_h_idx) * plan.in_w)
            _argmax_row(plane + row_offset, out_row, pos, plan, first_row, row_offset)
            first_row = False
    _positions_to_indices(pos, index_row, lo, hi, plan, index_base, stride_d, stride_h,
                          stride_w)
    return 1


cdef inline void _argmax_row_indices(const float* row0, float* out, index_t* index_row,
                                     int64_t* scratch, Py_ssize_t n_out, int kh, int stride,
                                     int k, int32_t row_offset, const Plan* plan,
                                     int64_t index_base, int64_t stride_d, int64_t stride_h,
                                     int64_t stride_w, bint left) noexcept nogil:
    """_argmax_row_f32 (n_out outputs from row0, the tap at in-plane offset
    row_offset) with its indices in index_row: written by the kernel itself
    when they are int64 and row-major, else through the int64 scratch
    (n_out long) and _flat_index."""
    cdef Py_ssize_t o
    if index_t is int64_t and _row_major(plan, stride_d, stride_h, stride_w):
        _argmax_row_f32(row0, plan.in_w, out, index_row, n_out, kh, stride, k, row_offset,
                        index_base, left)
        return
    _argmax_row_f32(row0, plan.in_w, out, scratch, n_out, kh, stride, k, row_offset, 0, left)
    for o in range(n_out):
        index_row[o] = <index_t>_flat_index(scratch[o], plan, index_base, stride_d, stride_h,
                                            stride_w)


cdef inline bint _row_major(const Plan* plan, int64_t stride_d, int64_t stride_h,
                            int64_t stride_w) noexcept nogil:
    return stride_w == 1 and stride_h == plan.in_w and stride_d == plan.in_h * plan.in_w


cdef inline void _positions_to_indices(const int32_t* pos, index_t* index_row, Py_ssize_t lo,
                                       Py_ssize_t hi, const Plan* plan, int64_t index_base,
                                       int64_t stride_d, int64_t stride_h,
                                       int64_t stride_w) noexcept nogil:
    """index_row[lo:hi] from the row-major in-plane offsets pos[lo:hi]."""
    cdef Py_ssize_t o
    if _row_major(plan, stride_d, stride_h, stride_w):
        for o in range(lo, hi):   # row-major: a plain (vectorised) add
            index_row[o] = <index_t>(index_base + pos[o])
    else:
        for o in range(lo, hi):
            index_row[o] = <index_t>_flat_index(pos[o], plan, index_base, stride_d, stride_h,
                                                stride_w)


cdef inline int64_t _flat_index(int64_t p, const Plan* plan, int64_t index_base,
                                int64_t stride_d, int64_t stride_h,
                                int64_t stride_w) noexcept nogil:
    """The index of the element at row-major in-plane offset p: split into
    (d, h, w) and renumbered by the strides (ONNX storage_order=1: column-major)."""
    cdef int64_t plane_hw = plan.in_h * plan.in_w
    if _row_major(plan, stride_d, stride_h, stride_w):
        return index_base + p       # row-major: no divisions
    cdef int64_t in_d_idx = p // plane_hw
    cdef int64_t rest = p - in_d_idx * plane_hw
    cdef int64_t ih = rest // plan.in_w
    return index_base + in_d_idx * stride_d + ih * stride_h + (rest - ih * plan.in_w) * stride_w


def max_pool_with_indices(const max_t[:, ::1] x,       # IN  (n_planes, in_d*in_h*in_w)
                          max_t[:, ::1] out,           # OUT (n_planes, out_d*out_h*out_w)
                          index_t[:, ::1] indices,     # OUT same shape as out
                          Geometry geometry not None,
                          int64_t stride_d, int64_t stride_h, int64_t stride_w,
                          Py_ssize_t planes_per_index_space, Py_ssize_t rows_per_block,
                          int n_threads, Py_ssize_t tile_kh=0, Py_ssize_t tile_kw=0):
    """Max pooling with flat indices.

    ``tile_kh, tile_kw``: the windows are tiles (ovpool._core.Plan.tiling);
    float32 rows then take the vector argmax of _simd.h.

    Plane ``p`` numbers its elements from
    ``(p % planes_per_index_space) * in_d*in_h*in_w``: 1 gives indices within
    each (n, c) plane (AdaptiveMaxPool, PyTorch, OpenVINO axis=2), n_planes
    gives indices over the whole tensor (ONNX, OpenVINO axis=0) and C gives
    OpenVINO's axis=1. ``stride_*`` give the order within a plane: row-major
    (in_h*in_w, in_w, 1) or ONNX storage_order=1 column-major (1, in_d, in_d*in_h).
    """
    cdef Plan plan = geometry.plan
    if x.shape[0] == 0 or out.shape[1] == 0:
        return
    if (x.shape[1] != plan.in_d * plan.in_h * plan.in_w or out.shape[0] != x.shape[0]
            or out.shape[1] != plan.out_d * plan.out_h * plan.out_w
            or indices.shape[0] != out.shape[0] or indices.shape[1] != out.shape[1]
            or planes_per_index_space < 1):
        raise ValueError("array shapes do not match the geometry")
    _set_blocks(&plan, rows_per_block)
    plan.bins_by_window = (max_t is float and plan.dil_w == 1
                           and plan.in_d * plan.in_h < RANK_KEY_ROWS
                           and _bins_by_window_ok(plan.win_w, plan.out_w, plan.in_w))
    cdef Py_ssize_t in_plane = plan.in_d * plan.in_h * plan.in_w
    cdef Py_ssize_t out_plane = out.shape[1]
    cdef Py_ssize_t rows_per_plane = plan.out_d * plan.out_h
    cdef Py_ssize_t n_units = x.shape[0] * plan.blocks_per_plane
    cdef Py_ssize_t unit, plane, row, row_end, od, oh, out_offset, n_run
    cdef const max_t* x_base = &x[0, 0]
    cdef max_t* out_base = &out[0, 0]
    cdef index_t* index_base = &indices[0, 0]
    cdef Py_ssize_t tile_row = 0
    cdef bint row_major = _row_major(&plan, stride_d, stride_h, stride_w)
    cdef bint tiles = (max_t is float and _is_tiling(&plan, tile_kh, tile_kw)
                       and _vector_rows_ok(plan.out_w, tile_kw, tile_kw) and in_plane < 2 ** 31)
    cdef int32_t* pos
    cdef max_t* col          # table mode: column maxima, then their row ranks (int32)
    cdef int64_t* offsets
    cdef int failed[1]
    failed[0] = 0
    with nogil, parallel(num_threads=n_threads):
        pos = <int32_t*>malloc((plan.out_w + 1) * sizeof(int64_t))   # int64 scratch too
        col = <max_t*>malloc(_rank_offset(plan.in_w, sizeof(max_t)) + plan.in_w * sizeof(int32_t))
        offsets = <int64_t*>malloc(geometry.max_rows * sizeof(int64_t))
        if pos == NULL or col == NULL or offsets == NULL:
            failed[0] = 1
        for unit in prange(n_units, schedule="dynamic", chunksize=_chunk(n_units, n_threads)):
            if pos == NULL or col == NULL or offsets == NULL:
                continue
            plane = unit // plan.blocks_per_plane
            row = (unit - plane * plan.blocks_per_plane) * plan.rows_per_block
            row_end = min(row + plan.rows_per_block, rows_per_plane)
            od = row // plan.out_h
            oh = row - od * plan.out_h
            while row < row_end:
                out_offset = plane * out_plane + row * plan.out_w
                n_run = 1
                if max_t is float and tiles:
                    tile_row = (od * plan.in_h + oh * tile_kh) * plan.in_w
                    if index_t is int64_t and row_major:
                        # the unit's rows in this depth slice, in one call
                        n_run = min(row_end - row, plan.out_h - oh)
                        _argmax_rows_f32(
                            x_base + plane * in_plane + tile_row, plan.in_w,
                            out_base + out_offset, index_base + out_offset, plan.out_w,
                            tile_kh, tile_kw, tile_kw, <int32_t>tile_row,
                            <int64_t>((plane % planes_per_index_space) * in_plane), False,
                            n_run, tile_kh * plan.in_w, plan.out_w)
                    else:
                        _argmax_row_indices(x_base + plane * in_plane + tile_row,
                                            out_base + out_offset, index_base + out_offset,
                                            <int64_t*>pos, plan.out_w, tile_kh, tile_kw,
                                            tile_kw, <int32_t>tile_row, &plan,
                                            <int64_t>((plane % planes_per_index_space)
                                                      * in_plane),
                                            stride_d, stride_h, stride_w, False)
                else:
                    n_run = _max_rows_with_indices(
                        x_base + plane * in_plane, out_base + out_offset,
                        index_base + out_offset, pos, col, offsets, &plan, od, oh,
                        <int64_t>((plane % planes_per_index_space) * in_plane),
                        stride_d, stride_h, stride_w, row_end - row)
                row = row + n_run
                oh = oh + n_run
                if oh == plan.out_h:
                    oh = 0
                    od = od + 1
        free(pos)
        free(col)
        free(offsets)
    if failed[0]:
        raise MemoryError("ovpool: cannot allocate the per-thread scratch buffers")


# --------------------------------------------------------------------------
# Tiling windows: kernel == stride <= 4 on H and W, no padding, no depth pooling
# --------------------------------------------------------------------------
# Each input element belongs to at most one window, so the separable passes'
# column buffer only adds work; on short rows (14 wide and less) their loop
# overhead dominated. Here each output row is accumulated straight from its
# kh input rows, taps in row-major order (the same order as PyTorch's sums).
# float32 rows of 4 or more outputs with kw in (1, 2, 4) use the SSE/AVX
# blocks of _simd.h (lanes = outputs, taps deinterleaved from contiguous
# loads), which gcc does not derive from the strided loops below: adaptive
# 28->7 at 1 thread 320 -> 200 ns per plane, 14->7 150 -> 100, same bits.

cdef inline bint _is_tiling(const Plan* plan, Py_ssize_t kh, Py_ssize_t kw) noexcept nogil:
    """The windows can be kh x kw tiles at stride (kh, kw) of each depth slice."""
    return (plan.out_d == plan.in_d and 1 <= kh <= 4 and 1 <= kw <= 4
            and plan.out_h * kh <= plan.in_h and plan.out_w * kw <= plan.in_w)


cdef inline void _tile_sum_pass(const real_t* row, real_t* out, Py_ssize_t n_out,
                                Py_ssize_t kw, bint first) noexcept nogil:
    cdef Py_ssize_t o, t
    cdef real_t acc
    if first:
        for o in range(n_out):
            acc = row[o * kw]
            for t in range(1, kw):
                acc = acc + row[o * kw + t]
            out[o] = acc
    else:
        for o in range(n_out):
            acc = out[o]
            for t in range(kw):
                acc = acc + row[o * kw + t]
            out[o] = acc


cdef inline void _tile_max_pass(const max_t* row, max_t* out, Py_ssize_t n_out,
                                Py_ssize_t kw, bint first) noexcept nogil:
    cdef Py_ssize_t o, t
    cdef max_t acc, value
    cdef bint nan
    if first:
        for o in range(n_out):
            acc = row[o * kw]
            nan = acc != acc
            for t in range(1, kw):
                value = row[o * kw + t]
                acc = acc if acc > value else value
                nan = nan | (value != value)
            if max_t is float or max_t is double:
                out[o] = <max_t>NAN if nan else acc
            else:
                out[o] = acc
    else:
        for o in range(n_out):
            acc = out[o]
            nan = acc != acc
            for t in range(kw):
                value = row[o * kw + t]
                acc = acc if acc > value else value
                nan = nan | (value != value)
            if max_t is float or max_t is double:
                out[o] = <max_t>NAN if nan else acc
            else:
                out[o] = acc


cdef inline void _tile_sum_k(const real_t* row0, real_t* out, const Plan* plan,
                             Py_ssize_t kh, Py_ssize_t kw) noexcept nogil:
    # first row initialises, later rows accumulate: literal flags, so that each
    # pass inlines into one unrolled, vectorised loop
    cdef Py_ssize_t th
    _tile_sum_pass(row0, out, plan.out_w, kw, True)
    for th in range(1, kh):
        _tile_sum_pass(row0 + th * plan.in_w, out, plan.out_w, kw, False)


cdef inline void _tile_sum_row(const real_t* row0, real_t* out, const Plan* plan,
                               Py_ssize_t kh, Py_ssize_t kw, real_t divisor) noexcept nogil:
    cdef Py_ssize_t o
    if kw == 2:
        _tile_sum_k(row0, out, plan, kh, 2)
    elif kw == 3:
        _tile_sum_k(row0, out, plan, kh, 3)
    elif kw == 4:
        _tile_sum_k(row0, out, plan, kh, 4)
    else:
        _tile_sum_k(row0, out, plan, kh, 1)
    for o in range(plan.out_w):
        out[o] = out[o] / divisor


cdef inline void _tile_max_k(const max_t* row0, max_t* out, const Plan* plan,
                             Py_ssize_t kh, Py_ssize_t kw) noexcept nogil:
    cdef Py_ssize_t th
    _tile_max_pass(row0, out, plan.out_w, kw, True)
    for th in range(1, kh):
        _tile_max_pass(row0 + th * plan.in_w, out, plan.out_w, kw, False)


cdef inline void _tile_max_row(const max_t* row0, max_t* out, const Plan* plan,
                               Py_ssize_t kh, Py_ssize_t kw) noexcept nogil:
    if kw == 2:
        _tile_max_k(row0, out, plan, kh, 2)
    elif kw == 3:
        _tile_max_k(row0, out, plan, kh, 3)
    elif kw == 4:
        _tile_max_k(row0, out, plan, kh, 4)
    else:
        _tile_max_k(row0, out, plan, kh, 1)


def tile_pool(const max_t[:, ::1] x,            # IN  (n_planes, in_d*in_h*in_w)
              max_t[:, ::1] out,                # OUT (n_planes, in_d*out_h*out_w)
              Geometry geometry not None,
              Py_ssize_t kh, Py_ssize_t kw, bint is_max,
              Py_ssize_t rows_per_block, int n_threads, Py_ssize_t ahead=0):
    """Average (float types) or max pooling of tiling windows: windows of kh x kw
    taps at stride (kh, kw), no padding, no pooling along D. The caller checks
    those conditions (ovpool._core.Plan.tiling)."""
    cdef Plan plan = geometry.plan
    if x.shape[0] == 0 or out.shape[1] == 0:
        return
    if (x.shape[1] != plan.in_d * plan.in_h * plan.in_w or out.shape[0] != x.shape[0]
            or out.shape[1] != plan.out_d * plan.out_h * plan.out_w
            or not _is_tiling(&plan, kh, kw)):
        raise ValueError("array shapes do not match a tiling geometry")
    if not is_max and not (max_t is float or max_t is double):
        raise ValueError("average pooling needs a float type")
    _set_blocks(&plan, rows_per_block)
    cdef Py_ssize_t in_plane = plan.in_d * plan.in_h * plan.in_w
    cdef Py_ssize_t out_plane = out.shape[1]
    cdef Py_ssize_t rows_per_plane = plan.out_d * plan.out_h
    cdef Py_ssize_t n_units = x.shape[0] * plan.blocks_per_plane
    cdef Py_ssize_t unit, plane, row, row_end, od, oh, n_run
    cdef const max_t* x_base = &x[0, 0]
    cdef max_t* out_base = &out[0, 0]
    cdef const max_t* row0
    cdef max_t divisor = <max_t>(kh * kw)
    cdef bint simd_rows = max_t is float and _vector_rows_ok(plan.out_w, kw, kw)
    cdef float factor = 1
    cdef int scale = _tile_scale(<float>(kh * kw), &factor)
    for unit in prange(n_units, nogil=True, num_threads=n_threads, schedule="dynamic",
                       chunksize=_chunk(n_units, n_threads)):
        plane = unit // plan.blocks_per_plane
        row = (unit - plane * plan.blocks_per_plane) * plan.rows_per_block
        row_end = min(row + plan.rows_per_block, rows_per_plane)
        od = row // plan.out_h
        oh = row - od * plan.out_h
        while row < row_end:
            row0 = x_base + plane * in_plane + (od * plan.in_h + oh * kh) * plan.in_w
            n_run = 1
            if max_t is float and simd_rows:
                # the rest of this depth slice's rows in one call
                n_run = min(row_end - row, plan.out_h - oh)
                _tile_rows_f32(row0, plan.in_w, out_base + plane * out_plane + row * plan.out_w,
                               plan.out_w, n_run, kh, kw, is_max, scale, factor, ahead)
            elif is_max:
                _tile_max_row(row0, out_base + plane * out_plane + row * plan.out_w, &plan, kh, kw)
            elif max_t is float or max_t is double:
                _tile_sum_row(row0, out_base + plane * out_plane + row * plan.out_w, &plan, kh, kw,
                              divisor)
            row = row + n_run
            oh = oh + n_run
            if oh == plan.out_h:
                oh = 0
                od = od + 1


# --------------------------------------------------------------------------
# Global reductions: the window is the whole plane
# --------------------------------------------------------------------------
# A plane is contiguous, so a global pool is a reduction of each plane: the
# sum runs over 16 independent lanes folded pairwise at the end (a single
# running sum could not be vectorised without reassociating it), the maximum
# is _span_max.

cdef enum:
    HALF_CHUNK = 4096     # float16 / bfloat16 elements widened at a time
    GLOBAL_GROUP = 64     # planes a work unit of the global averages takes


cdef inline real_t _plane_sum(const real_t* x, Py_ssize_t n) noexcept nogil:
    """Sum of n contiguous values: 16 lanes (two vector registers of
    independent partial sums), a fixed pairwise fold, then the tail (the
    SIMD helpers of _simd.h compute exactly this order)."""
    if real_t is float:
        return _plane_sum_f32(x, n)
    else:
        return _plane_sum_f64(x, n)


def global_sum_pool(const real_t[:, ::1] x,   # IN  (n_planes, plane_size)
                    real_t[::1] out,          # OUT (n_planes,)
                    int mode, double p, int n_threads):
    """Global average (mode 0) or Lp (modes 1-3) pooling of each plane."""
    cdef Py_ssize_t n_planes = x.shape[0], size = x.shape[1], plane, i, group, last
    # averages: groups of up to GLOBAL_GROUP planes, fewer when there are
    # few planes, so every thread still gets work units
    cdef Py_ssize_t group_size = max(1, min(GLOBAL_GROUP, n_planes // (16 * n_threads)))
    cdef Py_ssize_t n_groups = (n_planes + group_size - 1) // group_size
    cdef real_t total
    cdef const real_t* row
    if n_planes == 0:
        return
    if mode == SUM_AVERAGE:
        # the sums of a group of planes, then their means in one vector loop:
        # a divide after each small plane's sum stalled on its latency (each
        # divide rounds as the scalar one; 32x2048x7x7: 0.249 -> 0.208 ms at
        # 1 thread, 0.192 -> 0.159 ms at 2; the memory-bound 128x2048x7x7 the same)
        for group in prange(n_groups, nogil=True, num_threads=n_threads, schedule="dynamic",
                            chunksize=_chunk(n_groups, n_threads)):
            last = min((group + 1) * group_size, n_planes)
            for plane in range(group * group_size, last):
                out[plane] = _plane_sum(&x[plane, 0], size)
            for plane in range(group * group_size, last):
                out[plane] = out[plane] / <real_t>size
        return
    for plane in prange(n_planes, nogil=True, num_threads=n_threads, schedule="dynamic",
                        chunksize=_chunk(n_planes, n_threads)):
        row = &x[plane, 0]
        total = 0
        for i in range(size):
            if mode == SUM_LP_1:
                total = total + fabs(row[i])
            elif mode == SUM_LP_2:
                total = total + row[i] * row[i]
            else:
                total = total + <real_t>pow(fabs(row[i]), p)
        if mode == SUM_LP_1:
            out[plane] = total
        elif mode == SUM_LP_2:
            out[plane] = sqrt(total)
        else:
            out[plane] = <real_t>pow(total, 1.0 / p)


def global_max_pool(const max_t[:, ::1] x,    # IN  (n_planes, plane_size)
                    max_t[::1] out,           # OUT (n_planes,)
                    int n_threads):
    """Global max pooling of each plane (NaN propagates)."""
    cdef Py_ssize_t n_planes = x.shape[0], size = x.shape[1], plane
    if n_planes == 0:
        return
    for plane in prange(n_planes, nogil=True, num_threads=n_threads, schedule="dynamic",
                        chunksize=_chunk(n_planes, n_threads)):
        out[plane] = _span_max(&x[plane, 0], size)


# --------------------------------------------------------------------------
# float16 and bfloat16
# --------------------------------------------------------------------------
# 16-bit floats arrive as their raw bits (uint16). Each window row is widened
# to float32 in per-thread scratch (F16C in the x86-64-v3 build), pooled by
# the float32 row code above, and the output row narrowed back with rounding
# to nearest even: no float32 copy of the whole input is ever made. Where
# F16C converts in registers (F16C_ROWS), float16 tiling rows, global
# averages and maxima, and the vertical pass of maxima skip the scratch.

cdef inline void _widen_window_rows(const uint16_t* plane, const int64_t* offsets,
                                    Py_ssize_t n_rows, Py_ssize_t width, float* rows,
                                    int64_t* local, bint bf16) noexcept nogil:
    cdef Py_ssize_t r
    for r in range(n_rows):
        _widen(plane + offsets[r], rows + r * width, width, bf16)
        local[r] = r * width


def half_pool(const uint16_t[:, ::1] x,        # IN  raw float16 / bfloat16 bits
              uint16_t[:, ::1] out,            # OUT same encoding
              Geometry geometry not None,
              Py_ssize_t rows_per_block, int kind, double p, bint bf16, int n_threads):
    """Average (kind 0), Lp (kinds 1-3, as sum_pool's modes) or max values
    (kind 4) pooling of float16 / bfloat16 planes, computed in float32."""
    cdef Plan plan = geometry.plan
    cdef int failed[1]
    failed[0] = 0
    if x.shape[0] == 0 or out.shape[1] == 0:
        return
    if (x.shape[1] != plan.in_d * plan.in_h * plan.in_w or out.shape[0] != x.shape[0]
            or out.shape[1] != plan.out_d * plan.out_h * plan.out_w or not 0 <= kind <= 4):
        raise ValueError("array shapes do not match the geometry")
    _set_blocks(&plan, rows_per_block)
    with nogil:
        _half_pool(&x[0, 0], &out[0, 0], x.shape[0], geometry.div_w_f32, &plan,
                   geometry.buffer_width, geometry.max_rows, kind, p, bf16, n_threads, failed)
    if failed[0]:
        raise MemoryError("ovpool: cannot allocate the per-thread scratch buffers")


cdef void _half_pool(const uint16_t* x, uint16_t* out, Py_ssize_t n_planes, const float* div_w,
                     const Plan* plan, Py_ssize_t buffer_width, Py_ssize_t max_rows, int kind,
                     double p, bint bf16, int n_threads, int* failed) noexcept nogil:
    cdef Py_ssize_t in_plane = plan.in_d * plan.in_h * plan.in_w
    cdef Py_ssize_t out_plane = plan.out_d * plan.out_h * plan.out_w
    cdef Py_ssize_t rows_per_plane = plan.out_d * plan.out_h
    cdef Py_ssize_t n_units = n_planes * plan.blocks_per_plane
    cdef Py_ssize_t unit, plane, row, row_end, od, oh, i, n_rows
    cdef float* buf
    cdef float* rows
    cdef float* out_row
    cdef int64_t* offsets
    cdef int64_t* local
    cdef const uint16_t* x_plane
    # float16 maxima: the vertical pass converts in registers (NaN-free rows)
    cdef bint max_in_registers = kind == 4 and F16C_ROWS and not bf16 and plan.in_w >= 8
    with parallel(num_threads=n_threads):
        buf = <float*>malloc(buffer_width * sizeof(float))
        rows = <float*>malloc(max_rows * plan.in_w * sizeof(float))
        out_row = <float*>malloc(plan.out_w * sizeof(float))
        offsets = <int64_t*>malloc(max_rows * sizeof(int64_t))
        local = <int64_t*>malloc(max_rows * sizeof(int64_t))
        if buf == NULL or rows == NULL or out_row == NULL or offsets == NULL or local == NULL:
            failed[0] = 1
        else:
            for i in range(buffer_width):
                buf[i] = -INFINITY if kind == 4 else 0
        for unit in prange(n_units, schedule="dynamic", chunksize=_chunk(n_units, n_threads)):
            if buf == NULL or rows == NULL or out_row == NULL or offsets == NULL or local == NULL:
                continue
            plane = unit // plan.blocks_per_plane
            row = (unit - plane * plan.blocks_per_plane) * plan.rows_per_block
            row_end = min(row + plan.rows_per_block, rows_per_plane)
            od = row // plan.out_h
            oh = row - od * plan.out_h
            x_plane = x + plane * in_plane
            while row < row_end:
                n_rows = _row_offsets(plan, od, oh, offsets)
                if plan.prefetch > 0 and n_rows > 0:
                    _prefetch_ahead(<const char*>x_plane, offsets, n_rows,
                                    plan.win_h[3 * oh + 1], sizeof(uint16_t), plan)
                if (max_in_registers and n_rows > 0
                        and not _vmax_rows_f16(x_plane, offsets, n_rows, buf + plan.pad_w,
                                               plan.in_w)):
                    _max_finish(buf, out_row, plan, True)
                else:      # widened rows; also float16 rows holding a NaN (exact rule)
                    _widen_window_rows(x_plane, offsets, n_rows, plan.in_w, rows, local, bf16)
                    if kind == 4:
                        _max_row_from(rows, local, n_rows, buf, out_row, plan)
                    else:
                        _sum_row_from(rows, local, n_rows, out_row, buf, div_w, plan, od, oh,
                                      kind, p)
                _narrow(out_row, out + plane * out_plane + row * plan.out_w, plan.out_w, bf16)
                row = row + 1
                oh = oh + 1
                if oh == plan.out_h:
                    oh = 0
                    od = od + 1
        free(buf)
        free(rows)
        free(out_row)
        free(offsets)
        free(local)


def half_tile_pool(const uint16_t[:, ::1] x,      # IN  raw float16 / bfloat16 bits
                   uint16_t[:, ::1] out,          # OUT same encoding
                   Geometry geometry not None,
                   Py_ssize_t kh, Py_ssize_t kw, bint is_max, bint bf16,
                   Py_ssize_t rows_per_block, int n_threads, Py_ssize_t ahead=0):
    """tile_pool for float16 / bfloat16. float16 rows that the vector tiling
    code takes are converted in its registers (F16C, the x86-64-v3 build): no
    scratch. Otherwise the input rows of up to HALF_CHUNK elements' worth of
    output rows are widened at once (they are contiguous: tiling windows of
    one depth slice), pooled by the float32 tiling code and narrowed back
    together; a per-row conversion cost more than the pooling."""
    cdef Plan plan = geometry.plan
    cdef int failed[1]
    failed[0] = 0
    if x.shape[0] == 0 or out.shape[1] == 0:
        return
    if (x.shape[1] != plan.in_d * plan.in_h * plan.in_w or out.shape[0] != x.shape[0]
            or out.shape[1] != plan.out_d * plan.out_h * plan.out_w
            or not _is_tiling(&plan, kh, kw)):
        raise ValueError("array shapes do not match a tiling geometry")
    _set_blocks(&plan, rows_per_block)
    cdef Py_ssize_t in_plane = plan.in_d * plan.in_h * plan.in_w
    cdef Py_ssize_t out_plane = out.shape[1]
    cdef Py_ssize_t rows_per_plane = plan.out_d * plan.out_h
    cdef Py_ssize_t n_units = x.shape[0] * plan.blocks_per_plane
    cdef Py_ssize_t group = max(1, HALF_CHUNK // (kh * plan.in_w))   # output rows at once
    cdef Py_ssize_t unit, plane, row, row_end, od, oh, j, n
    cdef const uint16_t* x_base = &x[0, 0]
    cdef uint16_t* out_base = &out[0, 0]
    cdef float* rows
    cdef float* outs
    cdef bint simd_rows = _vector_rows_ok(plan.out_w, kw, kw)
    cdef bint in_registers = simd_rows and F16C_ROWS and not bf16
    cdef float factor = 1
    cdef int scale = _tile_scale(<float>(kh * kw), &factor)
    cdef float divisor = <float>(kh * kw)
    cdef Py_ssize_t run = rows_per_plane if in_registers else group   # rows per call
    with nogil, parallel(num_threads=n_threads):
        rows = NULL
        outs = NULL
        if not in_registers:
            rows = <float*>malloc(group * kh * plan.in_w * sizeof(float))
            outs = <float*>malloc(group * plan.out_w * sizeof(float))
            if rows == NULL or outs == NULL:
                failed[0] = 1
        for unit in prange(n_units, schedule="dynamic", chunksize=_chunk(n_units, n_threads)):
            if not in_registers and (rows == NULL or outs == NULL):
                continue
            plane = unit // plan.blocks_per_plane
            row = (unit - plane * plan.blocks_per_plane) * plan.rows_per_block
            row_end = min(row + plan.rows_per_block, rows_per_plane)
            od = row // plan.out_h
            oh = row - od * plan.out_h
            while row < row_end:
                n = min(row_end - row, run, plan.out_h - oh)
                if in_registers:
                    _tile_rows_f16(x_base + plane * in_plane + (od * plan.in_h + oh * kh) * plan.in_w,
                                   plan.in_w, out_base + plane * out_plane + row * plan.out_w,
                                   plan.out_w, n, kh, kw, is_max, scale, factor, ahead)
                else:
                    _widen(x_base + plane * in_plane + (od * plan.in_h + oh * kh) * plan.in_w,
                           rows, n * kh * plan.in_w, bf16)
                    if simd_rows:
                        _tile_rows_f32(rows, plan.in_w, outs, plan.out_w, n, kh, kw, is_max,
                                       scale, factor, 0)
                    else:
                        for j in range(n):
                            if is_max:
                                _tile_max_row(rows + j * kh * plan.in_w, outs + j * plan.out_w,
                                              &plan, kh, kw)
                            else:
                                _tile_sum_row(rows + j * kh * plan.in_w, outs + j * plan.out_w,
                                              &plan, kh, kw, divisor)
                    _narrow(outs, out_base + plane * out_plane + row * plan.out_w,
                            n * plan.out_w, bf16)
                row = row + n
                oh = oh + n
                if oh == plan.out_h:
                    oh = 0
                    od = od + 1
        free(rows)
        free(outs)
    if failed[0]:
        raise MemoryError("ovpool: cannot allocate the per-thread scratch buffers")


def half_max_pool_with_indices(const uint16_t[:, ::1] x,   # IN  raw float16 / bfloat16 bits
                               uint16_t[:, ::1] out,       # OUT same encoding
                               index_t[:, ::1] indices,    # OUT
                               Geometry geometry not None,
                               int64_t stride_d, int64_t stride_h, int64_t stride_w,
                               Py_ssize_t planes_per_index_space, Py_ssize_t rows_per_block,
                               bint bf16, int n_threads):
    """max_pool_with_indices for float16 / bfloat16 planes: each plane is
    widened once into per-thread float32 scratch (one plane per thread)."""
    cdef Plan plan = geometry.plan
    cdef int failed[1]
    failed[0] = 0
    if x.shape[0] == 0 or out.shape[1] == 0:
        return
    if (x.shape[1] != plan.in_d * plan.in_h * plan.in_w or out.shape[0] != x.shape[0]
            or out.shape[1] != plan.out_d * plan.out_h * plan.out_w
            or indices.shape[0] != out.shape[0] or indices.shape[1] != out.shape[1]
            or planes_per_index_space < 1):
        raise ValueError("array shapes do not match the geometry")
    _set_blocks(&plan, rows_per_block)
    cdef Py_ssize_t in_plane = plan.in_d * plan.in_h * plan.in_w
    cdef Py_ssize_t out_plane = out.shape[1]
    cdef Py_ssize_t rows_per_plane = plan.out_d * plan.out_h
    cdef Py_ssize_t n_units = x.shape[0] * plan.blocks_per_plane
    cdef Py_ssize_t unit, plane, row, row_end, od, oh, out_offset
    cdef Py_ssize_t* widened      # the plane now in plane_f (written inside prange)
    cdef const uint16_t* x_base = &x[0, 0]
    cdef uint16_t* out_base = &out[0, 0]
    cdef index_t* index_base = &indices[0, 0]
    cdef float* plane_f
    cdef float* out_row
    cdef int32_t* pos
    cdef float* col
    cdef int64_t* offsets
    with nogil, parallel(num_threads=n_threads):
        plane_f = <float*>malloc(in_plane * sizeof(float))
        out_row = <float*>malloc(plan.out_w * sizeof(float))
        pos = <int32_t*>malloc((plan.out_w + 1) * sizeof(int64_t))   # int64 scratch too
        col = <float*>malloc(_rank_offset(plan.in_w, sizeof(float)) + plan.in_w * sizeof(int32_t))
        offsets = <int64_t*>malloc(geometry.max_rows * sizeof(int64_t))
        widened = <Py_ssize_t*>malloc(sizeof(Py_ssize_t))
        if (plane_f == NULL or out_row == NULL or pos == NULL or col == NULL
                or offsets == NULL or widened == NULL):
            failed[0] = 1
        else:
            widened[0] = -1
        for unit in prange(n_units, schedule="dynamic", chunksize=_chunk(n_units, n_threads)):
            if (plane_f == NULL or out_row == NULL or pos == NULL or col == NULL
                    or offsets == NULL or widened == NULL):
                continue
            plane = unit // plan.blocks_per_plane
            if plane != widened[0]:
                _widen(x_base + plane * in_plane, plane_f, in_plane, bf16)
                widened[0] = plane
            row = (unit - plane * plan.blocks_per_plane) * plan.rows_per_block
            row_end = min(row + plan.rows_per_block, rows_per_plane)
            od = row // plan.out_h
            oh = row - od * plan.out_h
            while row < row_end:
                out_offset = plane * out_plane + row * plan.out_w
                _max_rows_with_indices(plane_f, out_row, index_base + out_offset, pos, col,
                                       offsets, &plan, od, oh,
                                       <int64_t>((plane % planes_per_index_space) * in_plane),
                                       stride_d, stride_h, stride_w, 1)
                _narrow(out_row, out_base + out_offset, plan.out_w, bf16)
                row = row + 1
                oh = oh + 1
                if oh == plan.out_h:
                    oh = 0
                    od = od + 1
        free(plane_f)
        free(out_row)
        free(pos)
        free(col)
        free(offsets)
        free(widened)
    if failed[0]:
        raise MemoryError("ovpool: cannot allocate the per-thread scratch buffers")


cdef inline float _half_combine(float total, float part, int kind) noexcept nogil:
    """A chunk's sum (average) or maximum (kind 4) combined with the total."""
    if kind == SUM_AVERAGE:
        return total + part
    return part if part != part or part > total else total  # a NaN sticks


cdef inline float _half_reduce(const float* chunk, Py_ssize_t m, int kind, double p,
                               float total) noexcept nogil:
    """total combined with the reduction of chunk[0..m) (global pools)."""
    cdef Py_ssize_t i
    if kind == SUM_AVERAGE:
        return _half_combine(total, _plane_sum(chunk, m), kind)
    if kind == 4:
        return _half_combine(total, _span_max(chunk, m), kind)
    for i in range(m):
        if kind == SUM_LP_1:
            total = total + fabs(chunk[i])
        elif kind == SUM_LP_2:
            total = total + chunk[i] * chunk[i]
        else:
            total = total + <float>pow(fabs(chunk[i]), p)
    return total


cdef inline float _half_reduce_f16(const uint16_t* x, Py_ssize_t m, int kind,
                                   float total) noexcept nogil:
    """_half_reduce of the float16 values x[0..m) converted in registers
    (F16C_ROWS, average and max only): the same operations, no scratch."""
    if kind == SUM_AVERAGE:
        return _half_combine(total, _plane_sum_f16(x, m), kind)
    return _half_combine(total, _span_max_f16(x, m), kind)


cdef inline float _half_finish(float total, Py_ssize_t size, int kind, double p) noexcept nogil:
    if kind == SUM_AVERAGE:
        return total / <float>size
    if kind == SUM_LP_2:
        return sqrt(total)
    if kind == SUM_LP_P:
        return <float>pow(total, 1.0 / p)
    return total


def half_global_pool(const uint16_t[:, ::1] x,   # IN  raw float16 / bfloat16 bits
                     uint16_t[::1] out,            # OUT (n_planes,)
                     int kind, double p, bint bf16, int n_threads):
    """Global average (kind 0), Lp (1-3) or max (4) of float16 / bfloat16
    planes, widened in chunks of per-thread scratch: planes of up to
    HALF_CHUNK elements in batches that fill a chunk (one conversion and one
    narrowing per batch: a 7x7 plane went from 24 to 7 ns), larger planes a
    chunk at a time. float16 averages and maxima skip the scratch where F16C
    converts in registers (F16C_ROWS); they keep the batches and chunks, so
    the sums are the same."""
    cdef Py_ssize_t n_planes = x.shape[0], size = x.shape[1], plane, start, m, b, first, last
    cdef Py_ssize_t batch = max(1, HALF_CHUNK // size) if size <= HALF_CHUNK else 1
    cdef Py_ssize_t n_batches = (n_planes + batch - 1) // batch
    cdef const uint16_t* x_base
    cdef uint16_t* out_base
    cdef float* chunk
    cdef float* values
    cdef float total
    cdef int failed[1]
    failed[0] = 0
    if n_planes == 0:
        return
    if out.shape[0] != n_planes or size < 1 or not 0 <= kind <= 4:
        raise ValueError("array shapes do not match")
    # float16 averages and maxima are converted in registers (F16C_ROWS)
    cdef bint in_registers = F16C_ROWS and not bf16 and (kind == SUM_AVERAGE or kind == 4)
    x_base = &x[0, 0]
    out_base = &out[0]
    with nogil, parallel(num_threads=n_threads):
        chunk = <float*>malloc(HALF_CHUNK * sizeof(float))
        values = <float*>malloc(batch * sizeof(float))
        if chunk == NULL or values == NULL:
            failed[0] = 1
        for b in prange(n_batches, schedule="dynamic", chunksize=_chunk(n_batches, n_threads)):
            if chunk == NULL or values == NULL:
                continue
            first = b * batch
            last = min(first + batch, n_planes)
            if size <= HALF_CHUNK:
                if not in_registers:
                    _widen(x_base + first * size, chunk, (last - first) * size, bf16)
                if in_registers and kind == SUM_AVERAGE:
                    # eight planes at a time, folded together (the same sums)
                    _plane_sums_f16(x_base + first * size, size, last - first, values)
                else:
                    for plane in range(first, last):
                        if in_registers:
                            total = _half_reduce_f16(x_base + plane * size, size, kind,
                                                     -INFINITY if kind == 4 else 0)
                        else:
                            total = _half_reduce(chunk + (plane - first) * size, size, kind, p,
                                                 -INFINITY if kind == 4 else 0)
                        if kind == SUM_AVERAGE:
                            values[plane - first] = total
                        else:
                            values[plane - first] = _half_finish(total, size, kind, p)
                if kind == SUM_AVERAGE:
                    # the means of the batch in one vector loop (each divide rounds
                    # as the scalar one; the latency was a third of a 7x7 plane)
                    for plane in range(last - first):
                        values[plane] = values[plane] / <float>size
            else:
                total = -INFINITY if kind == 4 else 0
                start = 0
                while start < size:     # chunk by chunk in both ways: the same sums
                    m = min(HALF_CHUNK, size - start)
                    if in_registers:
                        total = _half_reduce_f16(x_base + first * size + start, m, kind, total)
                    else:
                        _widen(x_base + first * size + start, chunk, m, bf16)
                        total = _half_reduce(chunk, m, kind, p, total)
                    start = start + m
                values[0] = _half_finish(total, size, kind, p)
            _narrow(values, out_base + first, last - first, bf16)
        free(chunk)
        free(values)
    if failed[0]:
        raise MemoryError("ovpool: cannot allocate the per-thread scratch buffers")


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
