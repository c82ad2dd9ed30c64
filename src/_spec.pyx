# distutils: language = c++
"""ovpool's vocabulary for Python: the codes, limits and rules of
``src/ovpool/spec.hpp``, the one place they are written.

The codes of a call (op family, element type, index type, auto_pad,
rounding, divisor rule), the size limits, the memory-budget rule and the
choice of the kernel build are read from the C++ header here, so that the
Python front doors, the kernel core and the OpenVINO extension library cannot
disagree. This module holds no kernels: ``ovpool._isa`` asks it which kernel
build to load before loading one.
"""

from libc.stdint cimport int64_t
from libcpp cimport bool as cbool

from ovpool cimport kernels as k

# codes of spec.hpp's enums
FAMILY_AVERAGE = <int>k.Family.average
FAMILY_LP = <int>k.Family.lp
FAMILY_MAX = <int>k.Family.max
FAMILY_ARGMAX = <int>k.Family.argmax

DTYPE_F32 = <int>k.DType.f32
DTYPE_F64 = <int>k.DType.f64
DTYPE_F16 = <int>k.DType.f16
DTYPE_BF16 = <int>k.DType.bf16
DTYPE_I8 = <int>k.DType.i8
DTYPE_U8 = <int>k.DType.u8

INDEX_I32 = <int>k.IndexType.i32
INDEX_I64 = <int>k.IndexType.i64

AUTO_PAD_CODES = {
    "explicit": <int>k.AutoPad.explicit_pads,
    "same_upper": <int>k.AutoPad.same_upper,
    "same_lower": <int>k.AutoPad.same_lower,
    "valid": <int>k.AutoPad.valid,
}
ROUNDING_CODES = {
    "floor": <int>k.Rounding.floor,
    "ceil": <int>k.Rounding.ceil,
    "ceil_torch": <int>k.Rounding.ceil_torch,
}
DIVISOR_TAPS = <int>k.Divisor.taps
DIVISOR_DECLARED_PADS = <int>k.Divisor.declared_pads
DIVISOR_OV_INCLUDE = <int>k.Divisor.ov_include
DIVISOR_OV_EXCLUDE = <int>k.Divisor.ov_exclude

# limits
MAX_ELEMENTS = k.kMaxElements
MAX_DILATED_KERNEL = k.kMaxDilatedKernel
NATIVE_LARGEST_WINDOW = k.kNativeLargestWindow

# the memory budget
BUDGET_SPELLING = k.kBudgetSpelling.decode()


def usable_memory():
    """Bytes this process may use (physical memory, cgroup limit,
    RLIMIT_AS: the smallest), or None when none is known."""
    cdef int64_t n = k.usable_memory()
    return None if n < 0 else n


def default_budget(usable):
    """The memory budget's default for ``usable`` bytes (None: unknown)."""
    return k.default_budget(-1 if usable is None else usable)


def parse_budget(str text, usable):
    """Bytes from a size as OVPOOL_MEMORY_BUDGET spells it (``"512M"``,
    ``"2GiB"``, ``"10%"`` of ``usable``); -1 when malformed, -2 for a
    percentage over 100."""
    cdef bytes raw = text.encode("utf-8", "replace")
    return k.parse_budget(raw, -1 if usable is None else usable)


def window_table_bytes(out_spatial):
    """Bytes of a plan's window tables for these output sizes (saturating)."""
    cdef int64_t sizes[3]
    cdef int i, n = len(out_spatial)
    if not 1 <= n <= 3:
        raise ValueError("1 to 3 spatial axes")
    for i in range(n):
        sizes[i] = min(max(int(out_spatial[i]), 0), 1 << 62)
    return k.window_table_bytes(n, sizes)


# the kernel build

def cpu_has_x86_64_v3():
    """True where this CPU and OS run the x86-64-v3 build (AVX2, FMA, F16C, ...)."""
    return k.cpu_has_x86_64_v3()


def choose_isa(env, cbool have_v3):
    """(build name, error or None) for OVPOOL_ISA's value ``env`` (None:
    auto), given whether the x86-64-v3 build is installed."""
    cdef bytes raw = (env or "").encode("utf-8", "replace")
    cdef k.IsaChoice choice = k.choose_isa(raw, have_v3, k.cpu_has_x86_64_v3())
    error = choice.error.decode("utf-8", "replace") if choice.error.size() else None
    return k.isa_name(choice.isa).decode(), error
