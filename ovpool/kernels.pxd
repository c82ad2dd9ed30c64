# cython: language_level=3
"""ovpool's kernels for Cython code: ``from ovpool cimport kernels``.

The declarations of ovpool's C++ kernel core (the headers under
``ovpool.get_include()``), to call a pool from your own ``nogil`` code.
Compile your extension as C++17 with ``include_dirs=[ovpool.get_include()]``;
nothing else links: the core is header-only.

The one-call functions (``adaptive_avg_pool``, ``max_pool_with_indices``, ...)
run serially on the calling thread and return a status (``kOk``,
``kBadArgument``, ``kNoMemory``); the inline helpers at the end take typed
memoryviews of (N, C, H, W) arrays. To run a pool on several threads, build a
``Plan`` (``make_plan``, which may raise and so needs the GIL), then hand its
units to your threads (``unit_function``, ``make_schedule``, one scratch block
per thread from ``allocate_scratch`` and ``init_scratch``), as ovpool's own
driver (``src/_driver.pxi``) does.
"""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t
from libcpp cimport bool
from libcpp.string cimport string
from libcpp.vector cimport vector

cdef extern from "ovpool/spec.hpp" namespace "ovpool" nogil:
    # --- the vocabulary (spec.hpp): a pool call, its limits and rules -------
    cdef enum class Family(int32_t):
        average
        lp
        max
        argmax

    cdef enum class DType(int32_t):
        f32
        f64
        f16
        bf16
        i8
        u8

    cdef enum class IndexType(int32_t):
        i32
        i64

    cdef enum class AutoPad(int32_t):
        explicit_pads
        same_upper
        same_lower
        valid

    cdef enum class Rounding(int32_t):
        floor
        ceil
        ceil_torch

    cdef enum class Divisor(int32_t):
        taps
        declared_pads
        ov_include
        ov_exclude

    cdef cppclass AxisSpec:
        int64_t n_in, n_out
        bool adaptive
        int64_t kernel, stride, dilation, pad_begin, pad_end
        Divisor divisor

    cdef cppclass PoolSpec:
        Family family
        DType dtype
        int64_t n, c
        int n_spatial
        AxisSpec axes[3]
        double p
        IndexType index_type
        int64_t planes_per_index_space
        bool column_major
        int64_t index_modulo

    cdef enum class Isa(int32_t):
        baseline
        x86_64_v3

    cdef cppclass IsaChoice:
        Isa isa
        string error

    const char* kBudgetSpelling

    size_t dtype_size(DType t)
    int64_t window_table_bytes(int n_spatial, const int64_t* out_spatial)
    int64_t usable_memory()
    int64_t default_budget(int64_t usable)
    int64_t parse_budget(const char* text, int64_t usable)
    bool cpu_has_x86_64_v3()
    IsaChoice choose_isa(const char* env, bool have_v3, bool cpu_v3)
    const char* isa_name(Isa isa)


cdef extern from "ovpool/spec.hpp" namespace "ovpool::limits" nogil:
    const int64_t kMaxElements
    const int64_t kMaxDilatedKernel
    const int64_t kNativeLargestWindow


cdef extern from "ovpool/lower.hpp" namespace "ovpool" nogil:
    # --- an op's attributes lowered into the spec (lower.hpp) ---------------
    cdef enum class Semantics(int32_t):
        onnx
        openvino

    cdef cppclass PoolAttrs:
        Semantics semantics
        Family family
        bool adaptive
        bool global_pool
        vector[int64_t] output_size
        vector[int64_t] kernel, strides, dilations, pads, pads_begin, pads_end
        AutoPad auto_pad
        Rounding rounding
        bool count_pads
        int64_t storage_order
        int64_t axis
        IndexType index_type
        double p

    cdef cppclass Lowered:
        PoolSpec spec
        int rank
        int64_t out_shape[5]
        bool is_static

    cdef cppclass UnpoolLowered:
        int rank
        vector[int64_t] kernel, strides, pads_begin, pads_end
        int64_t default_shape[5]
        int64_t out_shape[5]

    Lowered lower(const PoolAttrs& attrs, DType dtype, int rank, const int64_t* dims) except +
    UnpoolLowered lower_unpool(const vector[int64_t]& kernel_shape,
                               const vector[int64_t]& strides, const vector[int64_t]& pads,
                               const vector[int64_t]& output_shape, int rank,
                               const int64_t* dims) except +
    AutoPad parse_auto_pad(const string& text, const char* name) except +
    Rounding parse_rounding(const string& text, const char* name) except +


cdef extern from "ovpool/ovpool.hpp" namespace "ovpool" nogil:
    # --- window arithmetic --------------------------------------------------
    cdef cppclass AxisSize:
        int64_t n_out, pad_begin, pad_end

    AxisSize axis_output_size(int64_t n_in, int64_t kernel, int64_t stride, int64_t dilation,
                              int64_t pad_begin, int64_t pad_end, AutoPad auto_pad,
                              Rounding rounding)
    int64_t adaptive_start(int64_t i, int64_t n_in, int64_t n_out)
    int64_t adaptive_end(int64_t i, int64_t n_in, int64_t n_out)
    int64_t unpool_output_size(int64_t n_in, int64_t kernel, int64_t stride,
                               int64_t pad_begin, int64_t pad_end)
    bool axis_has_empty_window(int64_t n_in, int64_t n_out, int64_t kernel, int64_t stride,
                               int64_t dilation, int64_t pad_begin)

    cdef cppclass Windows:
        int64_t n_in, n_out, kernel, stride, dilation, pad_begin
        bool uniform
        vector[int64_t] table

    Windows axis_windows(const AxisSpec& axis) except +

    # --- plans --------------------------------------------------------------
    cdef enum class Path(int32_t):
        empty
        global_ "global"
        tiles
        rows
        argmax
        blocked

    cdef enum class RowKernel(int32_t):
        separable
        runs
        depth_slab
        depth_slices
        narrow_bins
        wide_bins

    const char* path_name(Path path)
    const char* row_kernel_name(RowKernel kernel)

    cdef cppclass ScratchLayout:
        int64_t bytes

    cdef cppclass Tuning:
        int64_t units_per_thread, merged_outputs, prefetch_rows, prefetch_min_elements
        int64_t prefetch_min_plane, tile_prefetch_min_bytes, tile_ahead_bytes
        int64_t slab_prefetch_min_elements, slice_scratch, run_elements, slab_bytes
        int64_t half_scratch_limit, blocked_bytes, blocked_prefetch_out_bytes, blocked_units
        int64_t blocked_prefetch_head_bytes, blocked_prefetch_head_lines
        bool blocked_everywhere
        bool key_lanes
        double row_windows_ratio, byte_ns, tap_ns, thread_ns

    cdef cppclass Plan:
        PoolSpec spec
        Tuning tuning
        Path path
        RowKernel row_kernel
        bool argmax_tiles
        DType compute
        bool widen_input
        int64_t out_spatial[3]
        int64_t n_planes
        int64_t in_d, in_h, in_w, out_d, out_h, out_w
        int64_t prefetch, slice_rows, slab_lo, slab_hi, tile_ahead
        bool slab_prefetch, narrow_rows
        vector[int64_t] win_d
        ScratchLayout scratch
        int64_t in_plane()
        int64_t out_plane()
        int64_t rows_per_plane()

    cdef cppclass Schedule:
        int threads
        int64_t n_units, rows_per_block, blocks_per_plane, group, chunk

    cdef cppclass Call:
        const void* x
        void* out
        void* indices
        Schedule schedule

    ctypedef void (*UnitFn)(const Plan&, const Call&, int64_t, char*) noexcept nogil

    Plan make_plan(const PoolSpec& spec) except +
    Plan make_plan(const PoolSpec& spec, const Tuning& tuning) except +
    Schedule make_schedule(const Plan& plan, int max_threads)
    int threads_for(const Plan& plan, int max_threads)
    double cost_ns(const Plan& plan)
    string describe(const Plan& plan, const Schedule& schedule) except +
    string kernel_name(const Plan& plan) except +
    UnitFn unit_function(const Plan& plan)
    void init_scratch(const Plan& plan, char* scratch)
    char* allocate_scratch(const Plan& plan)
    void free_scratch(char* scratch)
    bool run_serial(const Plan& plan, const void* x, void* out, void* indices)

    # --- one call per pool (serial, status codes) ---------------------------
    enum Status:
        kOk
        kBadArgument
        kNoMemory

    cdef cppclass Shape:
        int64_t n, c
        int n_spatial
        int64_t spatial[3]

    cdef cppclass Window:
        int64_t kernel[3]
        int64_t strides[3]
        int64_t dilations[3]
        int64_t pads_begin[3]
        int64_t pads_end[3]
        AutoPad auto_pad
        Rounding rounding

    int pool_output_size(const Shape& shape, const Window& window, int64_t* out_spatial)
    int adaptive_avg_pool[T](const T* x, const Shape& shape, const int64_t* out_spatial, T* out)
    int adaptive_max_pool[T, I](const T* x, const Shape& shape, const int64_t* out_spatial, T* out,
                                I* indices)
    int avg_pool[T](const T* x, const Shape& shape, const Window& window,
                    bool count_include_pad, T* out)
    int max_pool[T](const T* x, const Shape& shape, const Window& window, T* out)
    int max_pool_with_indices[T, I](const T* x, const Shape& shape, const Window& window, T* out,
                                    I* indices, bool column_major)
    int lp_pool[T](const T* x, const Shape& shape, const Window& window, double p, T* out)
    int global_avg_pool[T](const T* x, const Shape& shape, T* out)
    int global_max_pool[T](const T* x, const Shape& shape, T* out)
    int64_t max_unpool[T](const T* x, const int64_t* indices, int64_t n, T* out, int64_t size)


ctypedef fused real_t:
    float
    double


cdef inline Shape shape2d(Py_ssize_t n, Py_ssize_t c, Py_ssize_t h, Py_ssize_t w) noexcept nogil:
    """The Shape of an (N, C, H, W) array."""
    cdef Shape shape
    shape.n = n
    shape.c = c
    shape.n_spatial = 2
    shape.spatial[0] = h
    shape.spatial[1] = w
    return shape


cdef inline Window window2d(Py_ssize_t kh, Py_ssize_t kw, Py_ssize_t sh, Py_ssize_t sw,
                            Py_ssize_t pad_h, Py_ssize_t pad_w) noexcept nogil:
    """A 2D window with symmetric pads and no dilation (floor rounding)."""
    cdef Window window
    window.kernel[0] = kh
    window.kernel[1] = kw
    window.strides[0] = sh
    window.strides[1] = sw
    window.pads_begin[0] = window.pads_end[0] = pad_h
    window.pads_begin[1] = window.pads_end[1] = pad_w
    return window


cdef inline int adaptive_avg_pool2d(const real_t[:, :, :, ::1] x,
                                    real_t[:, :, :, ::1] out) noexcept nogil:
    """out[n, c] = adaptive average of x[n, c] to out's (H, W); a status."""
    cdef int64_t size[2]
    if x.shape[0] != out.shape[0] or x.shape[1] != out.shape[1]:
        return kBadArgument
    if x.shape[0] * x.shape[1] == 0:
        return kOk
    size[0] = out.shape[2]
    size[1] = out.shape[3]
    cdef Shape shape = shape2d(x.shape[0], x.shape[1], x.shape[2], x.shape[3])
    if real_t is float:
        return adaptive_avg_pool[float](&x[0, 0, 0, 0], shape, size, &out[0, 0, 0, 0])
    else:
        return adaptive_avg_pool[double](&x[0, 0, 0, 0], shape, size, &out[0, 0, 0, 0])


cdef inline int max_pool2d_with_indices(const real_t[:, :, :, ::1] x, const Window& window,
                                        real_t[:, :, :, ::1] out,
                                        int64_t[:, :, :, ::1] indices) noexcept nogil:
    """ONNX MaxPool of x with its flat indices over the whole tensor; out and
    indices must have the output shape (pool_output_size); a status."""
    cdef int64_t size[2]
    cdef Shape shape = shape2d(x.shape[0], x.shape[1], x.shape[2], x.shape[3])
    cdef int status = pool_output_size(shape, window, size)
    if status != kOk:
        return status
    if (out.shape[0] != x.shape[0] or out.shape[1] != x.shape[1] or out.shape[2] != size[0]
            or out.shape[3] != size[1] or indices.shape[0] != out.shape[0]
            or indices.shape[1] != out.shape[1] or indices.shape[2] != size[0]
            or indices.shape[3] != size[1]):
        return kBadArgument
    if x.shape[0] * x.shape[1] == 0:
        return kOk
    if real_t is float:
        return max_pool_with_indices[float, int64_t](&x[0, 0, 0, 0], shape, window,
                                                     &out[0, 0, 0, 0], &indices[0, 0, 0, 0], False)
    else:
        return max_pool_with_indices[double, int64_t](&x[0, 0, 0, 0], shape, window,
                                                      &out[0, 0, 0, 0], &indices[0, 0, 0, 0], False)


cdef inline int avg_pool2d(const real_t[:, :, :, ::1] x, const Window& window,
                           bool count_include_pad, real_t[:, :, :, ::1] out) noexcept nogil:
    """ONNX AveragePool of x; out must have the output shape; a status."""
    cdef int64_t size[2]
    cdef Shape shape = shape2d(x.shape[0], x.shape[1], x.shape[2], x.shape[3])
    cdef int status = pool_output_size(shape, window, size)
    if status != kOk:
        return status
    if (out.shape[0] != x.shape[0] or out.shape[1] != x.shape[1] or out.shape[2] != size[0]
            or out.shape[3] != size[1]):
        return kBadArgument
    if x.shape[0] * x.shape[1] == 0:
        return kOk
    if real_t is float:
        return avg_pool[float](&x[0, 0, 0, 0], shape, window, count_include_pad, &out[0, 0, 0, 0])
    else:
        return avg_pool[double](&x[0, 0, 0, 0], shape, window, count_include_pad,
                                &out[0, 0, 0, 0])
