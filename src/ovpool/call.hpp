// One call of a plan: its arrays and work units, and the per-thread scratch.
#pragma once

#include "separable.hpp"

OVPOOL_BEGIN

// The arrays of one call, all C-contiguous: x is (n_planes, in_plane) of the
// plan's compute type (16-bit floats as their raw bits), out (n_planes,
// out_plane) of the same type, indices (argmax) of spec.index_type.
struct Call {
    const void *x = nullptr;
    void *out = nullptr;
    void *indices = nullptr;
    Schedule schedule;
};

// A part of the per-thread scratch block (see ScratchLayout).
template <class U>
OVPOOL_INLINE U *scratch_part(char *scratch, int64_t offset) {
    return offset < 0 ? nullptr : reinterpret_cast<U *>(scratch + offset);
}

template <class T>
OVPOOL_INLINE const T *div_w_of(const Plan &plan) {
    if constexpr (std::is_same<T, double>::value)
        return plan.div_w_f64.data();
    else
        return plan.div_w_f32.data();
}

// The work of one unit, into this thread's scratch.
using UnitFn = void (*)(const Plan &, const Call &, int64_t unit, char *scratch);

OVPOOL_END
