"""ovpool's Python driver of the C++ kernel core.

The core (``src/ovpool/*.hpp``, declared for Cython in ``ovpool/kernels.pxd``)
computes; this module only carries a call across: it builds a plan from what
the Python layer has validated (:class:`Plan`), and runs a call's work units
with the GIL released: on the calling thread, with the helper threads of
``_workers.hpp`` when the call's schedule has more than one (the caller claims
units from a shared counter and never waits for a helper that has not
started), each thread with its own scratch block. Every output element is
written by exactly one unit, so results do not depend on the thread count or
the schedule. (Third-party Cython code runs the same units under its own
``prange``: ``ovpool/kernels.pxd``.)
"""

from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, int64_t
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

cimport numpy as cnp
import numpy as np

from ovpool cimport kernels as k
from _omp cimport OVPOOL_OPENMP, omp_get_num_threads, omp_get_thread_num

cnp.import_array()

cdef extern from "ovpool/common.hpp" namespace "ovpool":
    const cbool kF16cRows

# The symbol by which ovpool's threadpoolctl controller (ovpool._threads)
# finds this library among the process's shared objects.
cdef extern from *:
    """
    extern "C" __attribute__((visibility("default"))) int ovpool_threadpool_marker;
    int ovpool_threadpool_marker = 1;
    """


def openmp_enabled():
    """True if the kernels were compiled with OpenMP."""
    return bool(OVPOOL_OPENMP)


def float16_in_registers():
    """True if float16 rows are converted in vector registers (F16C: the
    x86-64-v3 build) instead of widened into float32 scratch first."""
    return bool(kF16cRows)


def parallel_team_size(int n_threads):
    """Number of threads a parallel region gets for ``n_threads`` (the tests
    use it to show that an explicit ``num_threads`` is honoured even when
    another library lowered the OpenMP default)."""
    cdef Py_ssize_t i
    cdef int team[1]          # an array element is shared, a scalar would be private
    team[0] = 1
    for i in prange(n_threads, nogil=True, num_threads=n_threads, schedule="static"):
        if omp_get_thread_num() == 0:
            team[0] = omp_get_num_threads()
    return team[0]


# --------------------------------------------------------------------------
# Window arithmetic (the numbers of ovpool.shapes)
# --------------------------------------------------------------------------

def axis_output_size(int64_t n_in, int64_t kernel, int64_t stride, int64_t dilation,
                     int64_t pad_begin, int64_t pad_end, int auto_pad, int rounding):
    """(n_out, pad_begin, pad_end) of one fixed-window axis; see plan.hpp."""
    cdef k.AxisSize size = k.axis_output_size(n_in, kernel, stride, dilation, pad_begin, pad_end,
                                              <k.AutoPad>auto_pad, <k.Rounding>rounding)
    return size.n_out, size.pad_begin, size.pad_end


def unpool_output_size(int64_t n_in, int64_t kernel, int64_t stride, int64_t pad_begin,
                       int64_t pad_end):
    """ONNX MaxUnpool's default output size of one axis."""
    return k.unpool_output_size(n_in, kernel, stride, pad_begin, pad_end)


def axis_has_empty_window(int64_t n_in, int64_t n_out, int64_t kernel, int64_t stride,
                          int64_t dilation, int64_t pad_begin):
    """True if some window of one fixed-window axis holds no input element
    (pads resolved); decided without a table, see plan.hpp."""
    return k.axis_has_empty_window(n_in, n_out, kernel, stride, dilation, pad_begin)


cdef k.AxisSpec _axis(tuple axis) except *:
    cdef k.AxisSpec spec
    (spec.n_in, spec.n_out, spec.adaptive, spec.kernel, spec.stride, spec.dilation,
     spec.pad_begin, spec.pad_end) = axis[:8]
    spec.divisor = <k.Divisor><int>axis[8]
    return spec


def window_table(tuple axis):
    """The (n_out, 3) int64 table (first, taps, divisor) of one axis given as
    (n_in, n_out, adaptive, kernel, stride, dilation, pad_begin, pad_end,
    divisor rule); read-only."""
    cdef k.Windows windows = k.axis_windows(_axis(axis))
    cdef Py_ssize_t i
    table = np.empty((windows.n_out, 3), dtype=np.int64)
    cdef int64_t[:, ::1] view = table
    for i in range(windows.n_out):
        view[i, 0] = windows.table[3 * i]
        view[i, 1] = windows.table[3 * i + 1]
        view[i, 2] = windows.table[3 * i + 2]
    table.setflags(write=False)
    return table


# --------------------------------------------------------------------------
# Plans
# --------------------------------------------------------------------------

cdef class Plan:
    """The plan of one pool call (immutable, shared between threads): the
    geometry lifted to 3D, the window tables, the kernel path and the scratch
    each thread needs. Built by :func:`make_plan`."""

    cdef k.Plan plan
    cdef k.UnitFn unit

    @property
    def path(self):
        """The kernel (``plan.hpp``'s ``Path``), e.g. ``"tiles"``."""
        return k.path_name(self.plan.path).decode()

    @property
    def kernel(self):
        """The kernel with its variant (``plan.hpp``'s ``kernel_name``), e.g.
        ``"rows.runs"``, ``"argmax.tiles"``, ``"blocked"``."""
        return k.kernel_name(self.plan).decode()

    @property
    def family(self):
        """The op family code of spec.hpp (ovpool._spec.FAMILY_*)."""
        return <int>self.plan.spec.family

    @property
    def dtype(self):
        """The element type of the call: "float32", "float16", "int8", ..."""
        cdef k.DType t = self.plan.spec.dtype
        if t == k.DType.f64:
            return "float64"
        if t == k.DType.f16:
            return "float16"
        if t == k.DType.bf16:
            return "bfloat16"
        if t == k.DType.i8:
            return "int8"
        if t == k.DType.u8:
            return "uint8"
        return "float32"

    @property
    def out_spatial(self):
        return tuple(self.plan.out_spatial[i] for i in range(self.plan.spec.n_spatial))

    @property
    def widen_input(self):
        """True when a 16-bit input is widened to float32 before the call."""
        return self.plan.widen_input

    @property
    def scratch_bytes(self):
        """Bytes of scratch each thread allocates."""
        return self.plan.scratch.bytes

    def threads(self, int max_threads):
        """The threads a call runs on, at most ``max_threads``: the core's
        cost model (``plan.hpp``'s ``threads_for``) keeps a small call on the
        calling thread."""
        return k.threads_for(self.plan, max_threads)

    @property
    def cost_ns(self):
        """The cost model's estimate of a call on one thread, nanoseconds."""
        return k.cost_ns(self.plan)

    def explain(self, int max_threads=1):
        """What a call will run, in words (``plan.hpp``'s ``describe``): the
        kernel and its choices, the threads and work units of a call given
        ``max_threads``, the scratch and the cost estimate."""
        cdef k.Schedule schedule = k.make_schedule(self.plan, max_threads)
        return k.describe(self.plan, schedule).decode()

    @property
    def geometry(self):
        """(n_planes, (in_d, in_h, in_w), (out_d, out_h, out_w)) as computed
        (a merged tiling sees groups of planes as one)."""
        p = &self.plan
        return p.n_planes, (p.in_d, p.in_h, p.in_w), (p.out_d, p.out_h, p.out_w)

    @property
    def prefetch(self):
        """Elements the row path prefetches ahead of a window row (0: none)."""
        return self.plan.prefetch

    @property
    def slab_prefetch(self):
        """True when the depth slab prefetches the next unit's rows."""
        return (self.plan.slab_prefetch and self.plan.path == k.Path.rows
                and self.plan.row_kernel == k.RowKernel.depth_slab)

    @property
    def tile_ahead(self):
        """Bytes a tiling run of rows prefetches ahead (0: none)."""
        return self.plan.tile_ahead

    @property
    def slice_rows(self):
        """Output rows per group of the depth_slices path's scratch."""
        return self.plan.slice_rows

    @property
    def pools_depth(self):
        """True when some window spans more than one depth slice."""
        cdef Py_ssize_t i
        for i in range(self.plan.out_d):
            if self.plan.win_d[3 * i + 1] > 1:
                return True
        return False

    @property
    def narrow_rows(self):
        """True when float32 adaptive averages of bins under 8 taps may take
        eight output rows at a time (where the build has AVX2)."""
        return self.plan.narrow_rows

    @property
    def merged(self):
        """True when a tiling runs over groups of planes seen as one plane."""
        return self.plan.n_planes != self.plan.spec.n * self.plan.spec.c

    def __repr__(self):
        return f"<ovpool Plan {self.explain().rstrip()}>"


cdef vector[int64_t] _ints(values) except *:
    cdef vector[int64_t] out
    if values is not None:
        for v in values:
            out.push_back(v)
    return out


# lower.hpp's Semantics: whose attributes an op takes
SEMANTICS_ONNX = <int>k.Semantics.onnx
SEMANTICS_OPENVINO = <int>k.Semantics.openvino


cdef class Lowering:
    """An op's attributes lowered into the kernel core's spec (lower.hpp) for
    an input shape: the output shape (None for an unknown dim) and, when the
    shape is known, what :func:`make_plan` plans."""

    cdef k.Lowered lowered

    @property
    def out_shape(self):
        return tuple(None if self.lowered.out_shape[i] < 0 else self.lowered.out_shape[i]
                     for i in range(self.lowered.rank))

    @property
    def is_static(self):
        return self.lowered.is_static

    @property
    def pads(self):
        """The pads used per spatial axis, (begin, end) (auto_pad resolved;
        None where the axis's size is unknown)."""
        cdef int s
        spec = &self.lowered.spec
        return tuple((spec.axes[s].pad_begin, spec.axes[s].pad_end)
                     if self.lowered.out_shape[2 + s] >= 0 else None
                     for s in range(self.lowered.rank - 2))


def parse_auto_pad(str text, str name="auto_pad"):
    """spec.hpp's AutoPad code of an ONNX or OpenVINO auto_pad spelling
    (ValueError naming ``name`` otherwise)."""
    cdef bytes raw = name.encode()
    return <int>k.parse_auto_pad(text.encode("utf-8", "replace"), raw)


def parse_rounding(str text, str name="rounding_type"):
    """spec.hpp's Rounding code of floor, ceil or ceil_torch."""
    cdef bytes raw = name.encode()
    return <int>k.parse_rounding(text.encode("utf-8", "replace"), raw)


def lower(int semantics, int family, int dtype, dims, *, kernel=None, strides=None,
          dilations=None, pads=None, pads_begin=None, pads_end=None, output_size=None,
          bint adaptive=False, bint global_pool=False, int auto_pad=0, int rounding=0,
          bint count_pads=False, int64_t storage_order=0, int64_t axis=0, int index_type=1,
          double p=2.0):
    """The rules of an op (lower.hpp) applied to its attributes (lists of
    ints; None: not given) on an input of shape ``dims`` (None for an unknown
    dim): a :class:`Lowering`, or ValueError with the rule's message."""
    cdef k.PoolAttrs a
    cdef int64_t d[5]
    cdef int i, rank = len(dims)
    if not 3 <= rank <= 5:
        raise ValueError(f"x must have shape (N, C, D1[, D2[, D3]]) with 1 to 3 spatial dims, "
                         f"got rank {rank}")
    for i in range(rank):
        d[i] = -1 if dims[i] is None else dims[i]
    a.semantics = <k.Semantics>semantics
    a.family = <k.Family>family
    a.adaptive = adaptive
    a.global_pool = global_pool
    a.output_size = _ints(output_size)
    a.kernel = _ints(kernel)
    a.strides = _ints(strides)
    a.dilations = _ints(dilations)
    a.pads = _ints(pads)
    a.pads_begin = _ints(pads_begin)
    a.pads_end = _ints(pads_end)
    a.auto_pad = <k.AutoPad>auto_pad
    a.rounding = <k.Rounding>rounding
    a.count_pads = count_pads
    a.storage_order = storage_order
    a.axis = axis
    a.index_type = <k.IndexType>index_type
    a.p = p
    cdef Lowering result = Lowering.__new__(Lowering)
    result.lowered = k.lower(a, <k.DType>dtype, rank, d)
    return result


def lower_unpool(dims, kernel_shape, strides, pads, output_shape):
    """ONNX MaxUnpool's rules (lower.hpp) on an input of shape ``dims`` (None
    for an unknown dim): (kernel, strides, pads_begin, pads_end, default
    shape, output shape), None for unknown dims; ValueError with the rule's
    message."""
    cdef int64_t d[5]
    cdef int i, rank = len(dims)
    if not 3 <= rank <= 5:
        raise ValueError(f"x must have shape (N, C, D1[, D2[, D3]]) with 1 to 3 spatial dims, "
                         f"got rank {rank}")
    for i in range(rank):
        d[i] = -1 if dims[i] is None else dims[i]
    cdef k.UnpoolLowered u = k.lower_unpool(_ints(kernel_shape), _ints(strides), _ints(pads),
                                            _ints(output_shape), rank, d)
    return (list(u.kernel), list(u.strides), list(u.pads_begin), list(u.pads_end),
            tuple(None if u.default_shape[i] < 0 else u.default_shape[i] for i in range(rank)),
            tuple(None if u.out_shape[i] < 0 else u.out_shape[i] for i in range(rank)))


def make_plan(Lowering lowered not None, dict tuning=None):
    """A :class:`Plan` of a lowered call on a known shape, with thresholds of
    plan.hpp's Tuning changed from their defaults (by field name)."""
    cdef k.Tuning t
    if not lowered.lowered.is_static:
        raise ValueError("ovpool: a plan needs a known input shape")
    for name, value in (tuning or {}).items():
        if name == "units_per_thread":
            t.units_per_thread = value
        elif name == "merged_outputs":
            t.merged_outputs = value
        elif name == "prefetch_rows":
            t.prefetch_rows = value
        elif name == "prefetch_min_elements":
            t.prefetch_min_elements = value
        elif name == "prefetch_min_plane":
            t.prefetch_min_plane = value
        elif name == "tile_prefetch_min_bytes":
            t.tile_prefetch_min_bytes = value
        elif name == "tile_ahead_bytes":
            t.tile_ahead_bytes = value
        elif name == "slab_prefetch_min_elements":
            t.slab_prefetch_min_elements = value
        elif name == "slice_scratch":
            t.slice_scratch = value
        elif name == "run_elements":
            t.run_elements = value
        elif name == "slab_bytes":
            t.slab_bytes = value
        elif name == "half_scratch_limit":
            t.half_scratch_limit = value
        elif name == "blocked_bytes":
            t.blocked_bytes = value
        elif name == "blocked_prefetch_out_bytes":
            t.blocked_prefetch_out_bytes = value
        elif name == "blocked_prefetch_head_bytes":
            t.blocked_prefetch_head_bytes = value
        elif name == "blocked_prefetch_head_lines":
            t.blocked_prefetch_head_lines = value
        elif name == "row_windows_ratio":
            t.row_windows_ratio = value
        elif name == "blocked_units":
            t.blocked_units = value
        elif name == "blocked_everywhere":
            t.blocked_everywhere = value
        elif name == "key_lanes":
            t.key_lanes = value
        elif name == "byte_ns":
            t.byte_ns = value
        elif name == "tap_ns":
            t.tap_ns = value
        elif name == "thread_ns":
            t.thread_ns = value
        else:
            raise ValueError(f"unknown tuning field {name!r}")
    cdef Plan plan = Plan.__new__(Plan)
    plan.plan = k.make_plan(lowered.lowered.spec, t)
    plan.unit = k.unit_function(plan.plan)
    return plan


# --------------------------------------------------------------------------
# Calls
# --------------------------------------------------------------------------

# Per-thread scratch of a call on one thread, when it fits: on the stack
# (a small call would spend more on aligned_alloc and free than on pooling).
cdef extern from *:
    """
    struct alignas(64) OvpoolStackScratch { char bytes[16384]; };
    """
    cppclass StackScratch "OvpoolStackScratch":
        char bytes[16384]


cdef extern from "_workers.hpp" namespace "ovpool_driver" nogil:
    cdef cppclass Workers:
        @staticmethod
        Workers& instance()
        void run(const k.Plan& plan, const k.Call& call, k.UnitFn unit, int threads,
                 char* scratch) noexcept


cdef int _run_units(const k.Plan* plan, const k.Call* call, k.UnitFn unit) noexcept nogil:
    """Every unit of a call on the threads of its schedule: the calling thread
    (its scratch on the stack when it fits), with the pool's helpers when the
    schedule has more than one thread (_workers.hpp: the caller never waits
    for a helper that has not started); 1 when the calling thread's scratch
    could not be allocated."""
    cdef int64_t u, n_units = call.schedule.n_units
    cdef char* scratch = NULL
    cdef StackScratch stack
    if plan.scratch.bytes <= <int64_t>sizeof(stack.bytes):
        scratch = stack.bytes
    else:
        scratch = k.allocate_scratch(plan[0])
        if scratch == NULL:
            return 1
    k.init_scratch(plan[0], scratch)
    if call.schedule.threads <= 1 or n_units <= 1:
        for u in range(n_units):
            unit(plan[0], call[0], u, scratch)
    else:
        Workers.instance().run(plan[0], call[0], unit, call.schedule.threads, scratch)
    if scratch != stack.bytes:
        k.free_scratch(scratch)
    return 0


cdef inline bint _holds(cnp.ndarray a, int64_t n_bytes) noexcept:
    return (cnp.PyArray_IS_C_CONTIGUOUS(a) and cnp.PyArray_ISWRITEABLE(a)
            and cnp.PyArray_SIZE(a) * cnp.PyArray_ITEMSIZE(a) == n_bytes)


def run(Plan plan not None, cnp.ndarray x not None, cnp.ndarray out not None, indices,
        int n_threads):
    """Run ``plan`` on x (its planes, the plan's compute dtype or the raw bits
    of a 16-bit float) into out and, for max with indices, ``indices``, on
    at most ``n_threads`` threads (as many as the cost model gives it).

    The Python layer has validated everything; the byte sizes are checked
    again here so that no misuse can write out of bounds.
    """
    cdef k.Plan* p = &plan.plan
    cdef k.Call call
    cdef cnp.ndarray index_array
    cdef int64_t item = 8 if p.compute == k.DType.f64 else (
        1 if p.compute == k.DType.i8 or p.compute == k.DType.u8 else (
            2 if p.compute == k.DType.f16 or p.compute == k.DType.bf16 else 4))
    cdef int failed
    if plan.unit == NULL:
        return
    if (not cnp.PyArray_IS_C_CONTIGUOUS(x)
            or cnp.PyArray_SIZE(x) * cnp.PyArray_ITEMSIZE(x) != p.n_planes * p.in_plane() * item
            or not _holds(out, p.n_planes * p.out_plane() * item)):
        raise ValueError("ovpool: arrays do not match the plan")
    call.x = cnp.PyArray_DATA(x)
    call.out = cnp.PyArray_DATA(out)
    call.indices = NULL
    if p.spec.family == k.Family.argmax:
        index_array = indices
        if not _holds(index_array, p.n_planes * p.out_plane()
                      * (8 if p.spec.index_type == k.IndexType.i64 else 4)):
            raise ValueError("ovpool: indices do not match the plan")
        call.indices = cnp.PyArray_DATA(index_array)
    call.schedule = k.make_schedule(p[0], n_threads)
    with nogil:
        failed = _run_units(p, &call, plan.unit)
    if failed:
        raise MemoryError("ovpool: cannot allocate the per-thread scratch "
                          f"({p.scratch.bytes} bytes per thread)")


def max_unpool(cnp.ndarray x not None, cnp.ndarray indices not None, cnp.ndarray out not None):
    """Scatter ``out.flat[indices[i]] = x.flat[i]`` (contiguous arrays of one
    dtype, int64 indices). Returns -1, or the position of the first index
    outside ``out`` (nothing is written from there on)."""
    cdef int64_t n = cnp.PyArray_SIZE(x), size = cnp.PyArray_SIZE(out), bad = -1
    cdef const void* xp = cnp.PyArray_DATA(x)
    cdef const int64_t* ip = <const int64_t*>cnp.PyArray_DATA(indices)
    cdef void* op = cnp.PyArray_DATA(out)
    cdef int kind = x.dtype.num
    if (x.dtype != out.dtype or indices.dtype != np.int64 or cnp.PyArray_SIZE(indices) != n
            or not cnp.PyArray_IS_C_CONTIGUOUS(x) or not cnp.PyArray_IS_C_CONTIGUOUS(indices)
            or not _holds(out, size * out.itemsize)):
        raise ValueError("ovpool: max_unpool arrays do not match")
    with nogil:
        if kind == cnp.NPY_FLOAT:
            bad = k.max_unpool[float](<const float*>xp, ip, n, <float*>op, size)
        elif kind == cnp.NPY_DOUBLE:
            bad = k.max_unpool[double](<const double*>xp, ip, n, <double*>op, size)
        elif kind == cnp.NPY_INT8:
            bad = k.max_unpool[k.int8_t](<const k.int8_t*>xp, ip, n, <k.int8_t*>op, size)
        elif kind == cnp.NPY_UINT8:
            bad = k.max_unpool[k.uint8_t](<const k.uint8_t*>xp, ip, n, <k.uint8_t*>op, size)
        else:
            bad = -2
    if bad == -2:
        raise TypeError(f"ovpool: max_unpool of dtype {x.dtype}")
    return bad


include "_prepared.pxi"
