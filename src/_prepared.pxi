# Prepared pools and the per-call path (included by _driver.pxi).
#
# A Pool is a pool built once for an op, its attributes, an input shape and
# dtype: it holds the plan, the output shape and dtypes, and what the memory
# budget and the thread count need per call. Calling it checks only what must
# be checked per call (the array's dtype, shape and layout, a caller's out=)
# and runs the plan with the GIL released. A Pool is immutable: one may be
# called from several Python threads at once (each call has its own outputs
# and per-thread scratch).
#
# The numpy functions are Pools too, found per call by `call` under a key of
# plain integers (the op, the input's dtype and shape, the attribute values),
# the way numpy's ufunc dispatch keys its cache: the lookup costs a bytes
# object and one dict probe, and only a key never seen builds a Pool (in
# Python, where every argument is validated and explained).

from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdint cimport uint64_t
from libc.string cimport memcpy

cdef extern from "Python.h":
    bint PyLong_CheckExact(object o)
    bint PyFloat_CheckExact(object o)
    bint PyTuple_CheckExact(object o)
    bint PyList_CheckExact(object o)
    bint PyUnicode_CheckExact(object o)
    bint PyBool_Check(object o)
    Py_ssize_t PyTuple_GET_SIZE(object o)
    PyObject* PyTuple_GET_ITEM(object o, Py_ssize_t i)
    Py_ssize_t PyList_GET_SIZE(object o)
    PyObject* PyList_GET_ITEM(object o, Py_ssize_t i)

# The cache of pools: a fixed table in C, keyed by the int64 words of a key
# (compared whole, hashed by an FNV-style multiply per word): a lookup costs a
# few dozen instructions, where a bytes object, its siphash and a dict probe
# cost a microsecond. The oldest entry goes first once it holds kSlots.
cdef extern from *:
    """
    #include <Python.h>
    #include <cstdint>
    #include <cstdlib>
    #include <cstring>
    namespace {
    struct PoolCache {
        static constexpr int kSlots = 256, kBuckets = 1024;
        struct Entry {
            uint64_t hash;
            int32_t words, next;
            int64_t *key;
            PyObject *pool;
        };
        Entry entries[kSlots];
        int32_t buckets[kBuckets];
        int32_t count = 0, oldest = 0;

        PoolCache() {
            for (int b = 0; b < kBuckets; b++)
                buckets[b] = -1;
        }
        static uint64_t hash_of(const int64_t *key, int words) {
            uint64_t h = 1469598103934665603ull;
            for (int i = 0; i < words; i++)
                h = (h ^ static_cast<uint64_t>(key[i])) * 1099511628211ull;
            return h ^ (h >> 29);
        }
        PyObject *find(const int64_t *key, int words, uint64_t h) const {
            for (int32_t e = buckets[h % kBuckets]; e >= 0; e = entries[e].next)
                if (entries[e].hash == h && entries[e].words == words &&
                    std::memcmp(entries[e].key, key, sizeof(int64_t) * words) == 0)
                    return entries[e].pool;
            return nullptr;
        }
        void unlink(int32_t slot) {
            int32_t *link = &buckets[entries[slot].hash % kBuckets];
            while (*link != slot)
                link = &entries[*link].next;
            *link = entries[slot].next;
            std::free(entries[slot].key);
        }
        // takes a new reference to pool; 0, or -1 when out of memory
        int insert(const int64_t *key, int words, uint64_t h, PyObject *pool) {
            int64_t *copy = static_cast<int64_t *>(std::malloc(sizeof(int64_t) * words));
            if (copy == nullptr)
                return -1;
            std::memcpy(copy, key, sizeof(int64_t) * words);
            int32_t slot;
            PyObject *evicted = nullptr;
            if (count < kSlots) {
                slot = (oldest + count) % kSlots;
                count++;
            } else {
                slot = oldest;
                oldest = (oldest + 1) % kSlots;
                unlink(slot);
                evicted = entries[slot].pool;
            }
            Py_INCREF(pool);
            entries[slot] = {h, words, buckets[h % kBuckets], copy, pool};
            buckets[h % kBuckets] = slot;
            Py_XDECREF(evicted);  // last: a pool's release may run Python code
            return 0;
        }
        PyObject *at(int i) const { return entries[(oldest + i) % kSlots].pool; }
        void clear() {
            while (count > 0) {
                const int32_t slot = oldest;
                unlink(slot);
                PyObject *pool = entries[slot].pool;
                oldest = (oldest + 1) % kSlots;
                count--;
                Py_DECREF(pool);
            }
        }
    };
    PoolCache the_pool_cache;
    }
    """
    cppclass PoolCache:
        int count
        @staticmethod
        uint64_t hash_of(const int64_t* key, int words)
        PyObject* find(const int64_t* key, int words, uint64_t h)
        int insert(const int64_t* key, int words, uint64_t h, PyObject* pool)
        PyObject* at(int i)
        void clear()
    PoolCache the_pool_cache


cdef class _PoolCacheView:
    """The pools the numpy functions have built (len, values, clear)."""

    def __len__(self):
        return the_pool_cache.count

    def values(self):
        return [<object>the_pool_cache.at(i) for i in range(the_pool_cache.count)]

    def clear(self):
        the_pool_cache.clear()


pool_cache = _PoolCacheView()


cdef extern from "numpy/arrayobject.h":
    ctypedef struct PyArray_Descr
    # steals a reference to descr (numpy's pxd leaves it out for that reason)
    object PyArray_Empty(int nd, cnp.npy_intp* dims, PyArray_Descr* descr, int fortran)

# A call on one thread whose work the core's cost model puts under this
# (nanoseconds) keeps the GIL: releasing it and taking it back costs more.
cdef double _KEEP_GIL_NS = 4000.0

# Defaults pushed here by ovpool._threads and ovpool._limits whenever they
# change, so that a call reads two C integers instead of asking Python.
cdef int _default_threads = 0   # <= 0: ask ovpool._threads (a bad OVPOOL_NUM_THREADS)
cdef int _cpus = 1
cdef int64_t _budget = -1       # < 0: ask ovpool._limits (a bad OVPOOL_MEMORY_BUDGET)


def _set_thread_defaults(int default_threads, int cpus):
    """The thread count of a call without num_threads (<= 0: ovpool._threads
    decides, and reports a bad setting), and the CPUs any call is capped to."""
    global _default_threads, _cpus
    _default_threads = default_threads
    _cpus = max(1, cpus)


def _set_budget(int64_t budget):
    """ovpool's memory budget in bytes (< 0: ovpool._limits reports why)."""
    global _budget
    _budget = budget


# Python's side of the per-call path, set by ovpool._core: the thread and
# budget errors, argument coercion, and the rare calls that widen a 16-bit
# input first.
_python = {}

# Key tags of `_encode`: what kind of argument a value was (so that 2, 2.0,
# True and (2,) never share a key).
cdef enum:
    TAG_NONE = 1
    TAG_INT = 2
    TAG_BOOL = 3
    TAG_FLOAT = 4
    TAG_INTS = 5
    TAG_STR = 6
    TAG_OBJECT = 7

cdef enum:
    KEY_WORDS = 96     # int64 words of a key at most


cdef inline bint _is_int(PyObject* o) noexcept:
    return PyLong_CheckExact(<object>o)


cdef int _encode(object value, int64_t* key, int at, list refs) except -2:
    """Append ``value`` to ``key`` from word ``at``; the next free word, or
    -1 when the value has no integer key (the call then builds its pool
    without the cache)."""
    cdef int overflow = 0
    cdef Py_ssize_t i, n
    cdef const char* text
    cdef PyObject* item
    cdef double real
    if at + 3 > KEY_WORDS:
        return -1
    if value is None:
        key[at] = TAG_NONE
        return at + 1
    if PyBool_Check(value):
        key[at] = TAG_BOOL
        key[at + 1] = 1 if value is True else 0
        return at + 2
    if PyLong_CheckExact(value):
        key[at] = TAG_INT
        key[at + 1] = PyLong_AsLongLongAndOverflow(value, &overflow)
        return -1 if overflow else at + 2
    if PyTuple_CheckExact(value) or PyList_CheckExact(value):
        n = PyTuple_GET_SIZE(value) if PyTuple_CheckExact(value) else PyList_GET_SIZE(value)
        if at + 2 + n > KEY_WORDS:
            return -1
        key[at] = TAG_INTS
        key[at + 1] = n
        for i in range(n):
            item = (PyTuple_GET_ITEM(value, i) if PyTuple_CheckExact(value)
                    else PyList_GET_ITEM(value, i))
            if not _is_int(item):
                return -1
            key[at + 2 + i] = PyLong_AsLongLongAndOverflow(<object>item, &overflow)
            if overflow:
                return -1
        return at + 2 + n
    if PyFloat_CheckExact(value):
        real = PyFloat_AS_DOUBLE(value)
        key[at] = TAG_FLOAT
        memcpy(&key[at + 1], &real, 8)
        return at + 2
    if PyUnicode_CheckExact(value):
        text = PyUnicode_AsUTF8AndSize(value, &n)
        if n > 24 or at + 5 > KEY_WORDS:
            return -1
        key[at] = TAG_STR
        key[at + 1] = key[at + 2] = key[at + 3] = 0
        memcpy(&key[at + 1], text, n)
        return at + 4
    if isinstance(value, type) or isinstance(value, np.dtype):
        # numpy's scalar types and dtypes, by identity; the pool keeps a
        # reference, so the address cannot name another object while cached
        key[at] = TAG_OBJECT
        key[at + 1] = <int64_t><Py_ssize_t><PyObject*>value
        refs.append(value)
        return at + 2
    return -1


cdef int _doors = 0


cdef class FrontDoor:
    """One public function's way to its pools: its name, the Python builder
    of a pool from (shape, dtype, *attributes), and how to explain an error
    (``explain(exc, x, args)`` rewrites its message)."""

    cdef readonly str op
    cdef readonly object builder
    cdef readonly object explain
    cdef readonly bint allow_int8
    cdef int code

    def __init__(self, str op, builder, explain, bint allow_int8=False):
        global _doors
        self.op = op
        self.builder = builder
        self.explain = explain
        self.allow_int8 = allow_int8
        _doors += 1
        self.code = _doors

    cdef Pool pool_for(self, cnp.ndarray x, tuple args):
        cdef int64_t key[KEY_WORDS]
        cdef int at, i, ndim = cnp.PyArray_NDIM(x)
        cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(x)
        cdef list refs = []
        cdef PyObject* found
        cdef uint64_t h
        key[0] = self.code
        key[1] = cnp.PyArray_TYPE(x)
        key[2] = ndim
        at = 3
        for i in range(min(ndim, 8)):
            key[at] = dims[i]
            at += 1
        for value in args:
            at = _encode(value, key, at, refs)
            if at < 0:
                break
        if at < 0 or ndim > 8:
            return self.builder((<object>x).shape, (<object>x).dtype, *args)
        h = PoolCache.hash_of(key, at)
        found = the_pool_cache.find(key, at, h)
        if found != NULL:
            return <Pool>found
        pool = <Pool?>self.builder((<object>x).shape, (<object>x).dtype, *args)
        pool.key_refs = tuple(refs)
        if the_pool_cache.insert(key, at, h, <PyObject*>pool) < 0:
            raise MemoryError()
        return pool


cdef inline bint _fast_input(object x) noexcept:
    """An ndarray the kernels read in place: C-contiguous, aligned, native."""
    return (cnp.PyArray_Check(x)
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>x)
            and cnp.PyArray_ISALIGNED(<cnp.ndarray>x)
            and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>x))


def call(FrontDoor door not None, x, tuple args, num_threads, out, out_indices):
    """The per-call path of a numpy function: its Pool for x and ``args``
    (from the cache, or built), run on x."""
    cdef Pool pool
    try:
        if num_threads is not None and not (PyLong_CheckExact(num_threads) and num_threads >= 1):
            num_threads = _python["check_threads"](num_threads, f"{door.op}: num_threads")
        if not _fast_input(x):
            x = _python["coerce"](x, door.op, door.allow_int8)
        pool = door.pool_for(<cnp.ndarray>x, args)
        return pool.run(<cnp.ndarray>x, num_threads, out, out_indices)
    except _python["OvpoolError"] as exc:
        door.explain(exc, x, args)
        raise


cdef class Pool:
    """A pool prepared for one op, its attributes, an input shape and dtype.

    Made by :func:`ovpool.prepare`. Everything a call of the op decides from
    its arguments (their checks, the output shape, the kernel's plan, the
    memory it needs) was decided once; calling the pool checks only the
    array and runs. One pool may be called from several threads at once:
    it is never modified, and each call has its own outputs and scratch.
    It pickles as what it was prepared from (op, shape, dtype, arguments,
    threads) and is prepared again where it is loaded, so it can be sent to
    worker processes (``multiprocessing``, ``concurrent.futures``).

    Call it as ``pool(x, *, out=None, out_indices=None)`` with ``x`` of the
    shape and dtype it was prepared for (a strided or non-native array is
    copied first, as the functions do) and, optionally, buffers for the
    outputs as the op's function takes them; it returns what the op's
    function returns: the values, or ``(values, indices)``.

    Attributes
    ----------
    op : str
        The op's name, as its errors start.
    shape, dtype : tuple, numpy.dtype
        The input the pool was prepared for.
    out_shape : tuple
        The shape of its outputs.
    index_dtype : numpy.dtype or None
        The indices' dtype, for the pools that return them.
    num_threads : int or None
        The threads of every call (None: chosen per call, see :meth:`threads`).
    plan : object
        The kernel core's plan; its ``repr`` says what runs.
    out_bytes, index_bytes : int
        Bytes of the outputs a call allocates.

    Examples
    --------
    >>> import numpy as np
    >>> import ovpool
    >>> pool = ovpool.prepare(ovpool.adaptive_max_pool, (2, 3, 7), np.float32, 3)
    >>> pool.out_shape, pool.index_dtype
    ((2, 3, 3), dtype('int64'))
    >>> x = np.arange(42, dtype=np.float32).reshape(2, 3, 7)
    >>> values, indices = pool(x)
    >>> values[0, 0], indices[0, 0]
    (array([2., 4., 6.], dtype=float32), array([2, 4, 6]))
    """

    cdef readonly Plan plan
    cdef readonly str op
    cdef readonly tuple shape
    cdef readonly tuple out_shape
    cdef readonly object dtype
    cdef readonly object index_dtype
    cdef readonly object num_threads
    cdef object source          # what rebuilds it (pickle): ovpool.prepare's call, or None
    cdef object key_refs
    cdef object out_descr       # np.dtype objects, for PyArray_Empty
    cdef object index_descr
    cdef int in_type, index_type  # their numpy type numbers
    cdef int ndim
    cdef cnp.npy_intp in_dims[5]
    cdef cnp.npy_intp out_dims[5]
    cdef readonly int64_t out_bytes, index_bytes
    cdef bint widen
    cdef bint keep_gil

    def __init__(self, Plan plan not None, str op, tuple shape, dtype, tuple out_shape,
                 index_dtype=None, num_threads=None):
        cdef int i
        self.plan = plan
        self.op = op
        self.shape = shape
        self.out_shape = out_shape
        self.dtype = np.dtype(dtype)
        self.out_descr = self.dtype
        self.in_type = self.dtype.num
        self.index_dtype = None if index_dtype is None else np.dtype(index_dtype)
        self.index_descr = self.index_dtype
        self.index_type = -1 if index_dtype is None else self.index_dtype.num
        self.num_threads = num_threads
        self.ndim = len(shape)
        if not 3 <= self.ndim <= 5 or len(out_shape) != self.ndim:
            raise ValueError("ovpool: a pool's input has 3 to 5 dims")
        for i in range(self.ndim):
            self.in_dims[i] = shape[i]
            self.out_dims[i] = out_shape[i]
        item = self.dtype.itemsize
        self.out_bytes = plan.plan.n_planes * plan.plan.out_plane() * item
        self.index_bytes = 0 if index_dtype is None else (
            plan.plan.n_planes * plan.plan.out_plane() * self.index_dtype.itemsize)
        self.widen = plan.plan.widen_input
        # a call on one thread shorter than handing the GIL to another thread
        # and back keeps it
        self.keep_gil = k.cost_ns(plan.plan) < _KEEP_GIL_NS
        self.key_refs = ()
        self.source = None

    def _set_num_threads(self, num_threads):
        # by ovpool.prepare only, on a pool no other code holds yet
        self.num_threads = num_threads

    def _set_source(self, source):
        # by ovpool.prepare only, as above: a picklable callable that prepares
        # the same pool again (its op, shape, dtype, arguments and threads)
        self.source = source

    def __reduce__(self):
        # a plan holds pointers into this process's kernel build: a pool
        # travels as what it was prepared from and is prepared again where
        # it is loaded (a worker process), under that process's memory budget
        if self.source is None:
            raise TypeError(
                f"ovpool: this {self.op} pool was not made by ovpool.prepare, so it cannot "
                "be pickled; make the pool to ship with ovpool.prepare(op, shape, dtype, ...)")
        return (self.source, ())

    def threads(self, num_threads=None):
        """The threads a call runs on.

        Parameters
        ----------
        num_threads : int, optional
            A call's thread count (None: the pool's own setting, else the
            default of :func:`ovpool.get_num_threads`).

        Returns
        -------
        int
            That count capped to the CPUs, then lowered by the kernel core's
            cost model where the call's work is too small to share (a small
            call runs on the calling thread).

        Examples
        --------
        >>> import numpy as np
        >>> import ovpool
        >>> ovpool.prepare(ovpool.global_avg_pool, (1, 8, 4, 4), np.float32).threads()
        1
        """
        return self._threads(self.num_threads if num_threads is None else num_threads)

    def __call__(self, x, *, out=None, out_indices=None):
        if not (_fast_input(x) and self._matches(<cnp.ndarray>x)):
            x = _python["pool_input"](self, x)
        return self.run(<cnp.ndarray>x, self.num_threads, out, out_indices)

    cdef bint _matches(self, cnp.ndarray x) noexcept:
        cdef int i
        cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(x)
        if cnp.PyArray_NDIM(x) != self.ndim:
            return False
        for i in range(self.ndim):
            if dims[i] != self.in_dims[i]:
                return False
        return cnp.PyArray_TYPE(x) == self.in_type

    cdef int _threads(self, object num_threads) except -1:
        cdef int64_t n
        if not OVPOOL_OPENMP:
            return 1
        if num_threads is not None:
            n = _cpus if num_threads > _cpus else <int64_t>num_threads
        elif _default_threads > 0:
            n = _default_threads
        else:
            n = _python["default_threads"]()
        return k.threads_for(self.plan.plan, <int>n)

    cdef int _budget_check(self, int n_threads, bint own_out, bint own_indices) except -1:
        # only what the call allocates: a caller's out= is the caller's memory
        cdef int64_t scratch = self.plan.plan.scratch.bytes * n_threads
        if (_budget < 0 or (own_out and self.out_bytes > _budget)
                or (own_indices and self.index_bytes > _budget) or scratch > _budget):
            _python["check_budget"](self, n_threads, own_out, own_indices)
        return 0

    cdef bint _holds(self, object buffer, int type_num, cnp.ndarray x) noexcept:
        """``buffer`` as an out= the kernel writes in place: the output's
        shape and dtype, C-contiguous, aligned, writeable, not overlapping x."""
        cdef int i
        cdef cnp.ndarray a
        cdef char* lo
        cdef char* x_lo
        if not cnp.PyArray_Check(buffer):
            return False
        a = <cnp.ndarray>buffer
        if cnp.PyArray_NDIM(a) != self.ndim:
            return False
        for i in range(self.ndim):
            if cnp.PyArray_DIMS(a)[i] != self.out_dims[i]:
                return False
        if not (cnp.PyArray_IS_C_CONTIGUOUS(a) and cnp.PyArray_ISWRITEABLE(a)
                and cnp.PyArray_ISALIGNED(a) and cnp.PyArray_ISNOTSWAPPED(a)
                and cnp.PyArray_TYPE(a) == type_num):
            return False
        lo = <char*>cnp.PyArray_DATA(a)
        x_lo = <char*>cnp.PyArray_DATA(x)
        return (lo + cnp.PyArray_NBYTES(a) <= x_lo or x_lo + cnp.PyArray_NBYTES(x) <= lo
                or cnp.PyArray_NBYTES(a) == 0 or cnp.PyArray_NBYTES(x) == 0)

    cdef object run(self, cnp.ndarray x, object num_threads, object out, object out_indices):
        """Run on x (the pool's shape and dtype, C-contiguous, aligned)."""
        cdef k.Plan* p = &self.plan.plan
        cdef k.Call call
        cdef cnp.ndarray values, indices = None
        cdef int n_threads, failed
        cdef char* lo
        cdef char* hi
        if self.widen:
            return _python["run_widened"](self, x, num_threads, out, out_indices)
        n_threads = self._threads(num_threads)
        self._budget_check(n_threads, out is None, out_indices is None)
        if out is None:
            Py_INCREF(self.out_descr)
            values = PyArray_Empty(self.ndim, self.out_dims, <PyArray_Descr*>self.out_descr, 0)
        elif self._holds(out, self.in_type, x):
            values = <cnp.ndarray>out
        else:
            _python["check_out"](self, x, out, out_indices)
            raise ValueError(f"{self.op}: out cannot be written")
        if self.index_descr is not None:
            if out_indices is None:
                Py_INCREF(self.index_descr)
                indices = PyArray_Empty(self.ndim, self.out_dims,
                                        <PyArray_Descr*>self.index_descr, 0)
            elif self._holds(out_indices, self.index_type, x):
                indices = <cnp.ndarray>out_indices
                lo = <char*>cnp.PyArray_DATA(indices)
                hi = <char*>cnp.PyArray_DATA(values)
                if not (lo + self.index_bytes <= hi or hi + self.out_bytes <= lo
                        or self.index_bytes == 0):
                    _python["check_out"](self, x, out, out_indices)
                    raise ValueError(f"{self.op}: out_indices overlaps out")
            else:
                _python["check_out"](self, x, out, out_indices)
                raise ValueError(f"{self.op}: out_indices cannot be written")
        if self.plan.unit != NULL:
            call.x = cnp.PyArray_DATA(x)
            call.out = cnp.PyArray_DATA(values)
            call.indices = NULL if indices is None else cnp.PyArray_DATA(indices)
            call.schedule = k.make_schedule(p[0], n_threads)
            if n_threads > 1 or not self.keep_gil:
                with nogil:
                    failed = _run_units(p, &call, self.plan.unit)
            else:
                failed = _run_units(p, &call, self.plan.unit)
            if failed:
                raise _python["OvpoolValueError"](
                    f"{self.op}: cannot allocate the per-thread scratch "
                    f"({p.scratch.bytes} bytes per thread)")
        if indices is None:
            return values
        return values, indices

    def __repr__(self):
        indices = "" if self.index_dtype is None else f" with {self.index_dtype} indices"
        # the plan as a call of this pool runs it: its threads and units
        plan = self.plan.explain(self.threads()).rstrip()
        return (f"<ovpool Pool {self.op} {self.dtype} {self.shape} -> {self.out_shape}"
                f"{indices}, <ovpool Plan {plan}>>")
