// Running a plan: the unit function of its path and element type, the
// per-thread scratch, and a serial runner.
//
// A front door runs a call as
//
//     UnitFn unit = unit_function(plan);
//     Schedule s = make_schedule(plan, n_threads);       // -> call.schedule
//     in each thread: char *scratch = allocate plan.scratch.bytes (64-byte aligned);
//                     init_scratch(plan, scratch);
//                     for each unit u handed to it (any order, any thread):
//                         unit(plan, call, u, scratch);
//
// Each output element is written by exactly one unit, so results do not
// depend on the thread count or on the schedule. Nothing here allocates but
// run_serial's one scratch block.
#pragma once

#include <cstdlib>

#include "argmax_pool.hpp"
#include "depth_pool.hpp"
#include "global_pool.hpp"
#include "half_pool.hpp"
#include "kernels/blocked.hpp"
#include "tile_pool.hpp"

OVPOOL_BEGIN

namespace detail {

// The row kernel's unit of the plan's variant, for T (8-bit integers:
// maxima only).
template <class T>
UnitFn rows_unit(const Plan &plan) {
    const bool is_max = plan.spec.family == Family::max;
    constexpr bool sums = std::is_floating_point<T>::value;
    switch (plan.row_kernel) {
        case RowKernel::separable:
            if constexpr (sums)
                if (!is_max)
                    return sum_unit<T, RowKernel::separable>;
            return max_unit<T, RowKernel::separable>;
        case RowKernel::depth_slices:
            if constexpr (sums)
                if (!is_max)
                    return sum_unit<T, RowKernel::depth_slices>;
            return max_unit<T, RowKernel::depth_slices>;
        case RowKernel::depth_slab:
            if constexpr (sums)
                if (!is_max)
                    return depth_slab_unit<T, false>;
            return depth_slab_unit<T, true>;
        case RowKernel::runs:
            if constexpr (sums)
                return is_max ? max_unit<T, RowKernel::runs> : sum_unit<T, RowKernel::runs>;
            return nullptr;
        case RowKernel::narrow_bins:
            if constexpr (sums)
                return sum_unit<T, RowKernel::narrow_bins>;
            return nullptr;
        case RowKernel::wide_bins:
            if constexpr (sums)
                return sum_unit<T, RowKernel::wide_bins>;
            return nullptr;
    }
    return nullptr;
}

template <class T, class I>
UnitFn argmax_of(const Plan &plan) {
    if constexpr (std::is_same<T, float>::value)
        if (plan.argmax_tiles)
            return argmax_unit<T, I, true>;
    return argmax_unit<T, I, false>;
}

// make(op) for the plan's TileOp as a constant (std::integral_constant).
template <class Make>
UnitFn by_tile_op(const Plan &plan, const Make &make) {
    switch (tile_op(plan)) {
        case simd::kTileSquares:
            return make(std::integral_constant<int, simd::kTileSquares>());
        case simd::kTileAbs:
            return make(std::integral_constant<int, simd::kTileAbs>());
        case simd::kTileSum:
            return make(std::integral_constant<int, simd::kTileSum>());
        default:
            return make(std::integral_constant<int, simd::kTileMax>());
    }
}

// float32, float64 and the 8-bit integers (maxima only) in their own type.
template <class T>
UnitFn native_unit(const Plan &plan) {
    switch (plan.path) {
        case Path::rows:
            return rows_unit<T>(plan);
        case Path::tiles:
            if constexpr (std::is_floating_point<T>::value)
                return by_tile_op(
                    plan, [](auto op) -> UnitFn { return tile_unit<T, decltype(op)::value>; });
            return tile_unit<T, simd::kTileMax>;
        case Path::global:
            if constexpr (std::is_floating_point<T>::value) {
                if (plan.spec.family == Family::average)
                    return global_unit<T, Family::average>;
                if (plan.spec.family == Family::lp)
                    return global_unit<T, Family::lp>;
            }
            return global_unit<T, Family::max>;
        case Path::argmax:
            return plan.spec.index_type == IndexType::i64 ? argmax_of<T, int64_t>(plan)
                                                          : argmax_of<T, int32_t>(plan);
        default:
            return nullptr;
    }
}

template <bool Bf16>
UnitFn half_unit(const Plan &plan) {
    switch (plan.path) {
        case Path::rows:
            return half_rows_unit<Bf16>;
        case Path::tiles:
            return by_tile_op(
                plan, [](auto op) -> UnitFn { return half_tile_unit<Bf16, decltype(op)::value>; });
        case Path::global:
            return half_global_unit<Bf16>;
        case Path::argmax:
            return plan.spec.index_type == IndexType::i64 ? half_argmax_unit<Bf16, int64_t>
                                                          : half_argmax_unit<Bf16, int32_t>;
        default:
            return nullptr;
    }
}

template <class T>
void fill(char *scratch, int64_t offset, int64_t count, T value) {
    T *p = scratch_part<T>(scratch, offset);
    for (int64_t i = 0; i < count; i++)
        p[i] = value;
}

template <class T>
void init_buffers(const Plan &plan, char *scratch) {
    if (plan.scratch.buf < 0)
        return;
    const int64_t groups = plan.path == Path::rows && plan.row_kernel == RowKernel::depth_slices
                               ? std::max<int64_t>(1, plan.slice_rows)
                               : 1;
    const bool is_max = plan.spec.family == Family::max;
    // the padding of the column buffer: the identity, never overwritten
    fill<T>(scratch, plan.scratch.buf, groups * plan.buffer_width,
            is_max ? max_identity<T>() : T(0));
}

template <class C, simd::Elem E>
UnitFn blocked_unit(const Plan &plan) {
    switch (plan.spec.family) {
        case Family::max:
            return blocked::unit<C, E, Family::max, int64_t>;
        case Family::argmax:
            return plan.spec.index_type == IndexType::i64
                       ? blocked::unit<C, E, Family::argmax, int64_t>
                       : blocked::unit<C, E, Family::argmax, int32_t>;
        default:
            if constexpr (E == simd::Elem::i8 || E == simd::Elem::u8)
                return nullptr;
            else
                return plan.spec.family == Family::average
                           ? blocked::unit<C, E, Family::average, int64_t>
                           : blocked::unit<C, E, Family::lp, int64_t>;
    }
}

}  // namespace detail

// The unit function of a plan (nullptr for an empty plan).
inline UnitFn unit_function(const Plan &plan) {
    if (plan.path == Path::empty)
        return nullptr;
    if (plan.path == Path::blocked) {
        switch (plan.compute) {
            case DType::f32:
                return detail::blocked_unit<float, simd::Elem::f32>(plan);
            case DType::f64:
                return detail::blocked_unit<double, simd::Elem::f64>(plan);
            case DType::f16:
                return detail::blocked_unit<float, simd::Elem::f16>(plan);
            case DType::bf16:
                return detail::blocked_unit<float, simd::Elem::bf16>(plan);
            case DType::i8:
                return detail::blocked_unit<float, simd::Elem::i8>(plan);
            case DType::u8:
                return detail::blocked_unit<float, simd::Elem::u8>(plan);
        }
    }
    switch (plan.compute) {
        case DType::f32:
            return detail::native_unit<float>(plan);
        case DType::f64:
            return detail::native_unit<double>(plan);
        case DType::f16:
            return detail::half_unit<false>(plan);
        case DType::bf16:
            return detail::half_unit<true>(plan);
        case DType::i8:
            return detail::native_unit<int8_t>(plan);
        case DType::u8:
            return detail::native_unit<uint8_t>(plan);
    }
    return nullptr;
}

// Prepare one thread's scratch block (plan.scratch.bytes) before its units.
inline void init_scratch(const Plan &plan, char *scratch) {
    if (plan.scratch.bytes == 0)
        return;
    switch (plan.compute) {
        case DType::f32:
            detail::init_buffers<float>(plan, scratch);
            break;
        case DType::f64:
            detail::init_buffers<double>(plan, scratch);
            break;
        case DType::i8:
            detail::init_buffers<int8_t>(plan, scratch);
            break;
        case DType::u8:
            detail::init_buffers<uint8_t>(plan, scratch);
            break;
        case DType::f16:
        case DType::bf16:
            detail::init_buffers<float>(plan, scratch);
            break;
    }
    if (plan.scratch.state >= 0)
        *scratch_part<int64_t>(scratch, plan.scratch.state) = -1;  // no plane widened yet
}

// A 64-byte aligned scratch block of plan.scratch.bytes (nullptr when the
// plan needs none or the allocation fails: check plan.scratch.bytes).
inline char *allocate_scratch(const Plan &plan) {
    if (plan.scratch.bytes == 0)
        return nullptr;
    return static_cast<char *>(std::aligned_alloc(64, static_cast<size_t>(plan.scratch.bytes)));
}

inline void free_scratch(char *scratch) {
    std::free(scratch);
}

// Run every unit of a call on the calling thread. Returns false when the
// scratch block cannot be allocated (nothing is written then).
inline bool run_serial(const Plan &plan, const void *x, void *out, void *indices) noexcept {
    const UnitFn unit = unit_function(plan);
    if (unit == nullptr)
        return true;
    Call call;
    call.x = x;
    call.out = out;
    call.indices = indices;
    call.schedule = make_schedule(plan, 1);
    char *scratch = allocate_scratch(plan);
    if (plan.scratch.bytes > 0 && scratch == nullptr)
        return false;
    init_scratch(plan, scratch);
    for (int64_t u = 0; u < call.schedule.n_units; u++)
        unit(plan, call, u, scratch);
    free_scratch(scratch);
    return true;
}

OVPOOL_END
