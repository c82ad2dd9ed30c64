// Global pools (Path::global): the window is the whole plane, so each output
// is a reduction of one contiguous plane.
//
// Sums (and float32 Lp sums of p 1 and 2, of |x| and x * x) run over 16
// independent lanes folded pairwise at the end (a single running sum could
// not be vectorised without reassociating it), small planes eight at a
// time with one fold for the eight (simd::plane_sums);
// maxima are span_max (planes of 64+: four running maxima,
// simd::span_max_wide). float16 and bfloat16 planes are widened in chunks
// of per-thread scratch (small planes in batches that fill a chunk: one
// conversion and one narrowing per batch, a 7x7 plane went from 24 to 7
// ns), or converted in registers where F16C allows (averages and maxima),
// with the same batches and chunks, so the same sums.
#pragma once

#include "call.hpp"

OVPOOL_BEGIN

// float32 / float64 averages: a group of planes a unit, their sums, then
// their means in one vector loop: a divide after each small plane's sum
// stalled on its latency (each divide rounds as the scalar one; 32x2048x7x7:
// 0.249 -> 0.208 ms at 1 thread, 0.192 -> 0.159 ms at 2; the memory-bound
// 128x2048x7x7 the same). Lp sums and maxima loop over their group too.
template <class T, Family F>
void global_unit(const Plan &plan, const Call &call, int64_t unit, char *) {
    const T *x = static_cast<const T *>(call.x);
    T *out = static_cast<T *>(call.out);
    const int64_t size = plan.in_plane();
    const int64_t first = unit * call.schedule.group;
    const int64_t last = std::min(first + call.schedule.group, plan.n_planes);
    if constexpr (F == Family::average) {
        if constexpr (std::is_same<T, float>::value)
            simd::plane_sums(x + first * size, size, last - first, out + first, 0);
        else
            for (int64_t q = first; q < last; q++)
                out[q] = simd::plane_sum_f64(x + q * size, size);
        for (int64_t q = first; q < last; q++)
            out[q] = out[q] / static_cast<T>(size);
    } else if constexpr (F == Family::max) {
        // planes of 64+ with four running maxima (simd::span_max_wide); the
        // loop over small planes as it was (its own code: global max of
        // 32x2048x7x7 1.05-1.15x slower through the wide one's test)
        if constexpr (std::is_same<T, float>::value)
            if (size >= 64) {
                for (int64_t q = first; q < last; q++)
                    out[q] = simd::span_max_wide_f32(x + q * size, size);
                return;
            }
        for (int64_t q = first; q < last; q++)
            out[q] = span_max(x + q * size, size);
    } else {
        const int mode = plan.mode;
        const double p = plan.p;
        for (int64_t q = first; q < last; q++) {
            const T *row = x + q * size;
            T total = 0;
            // float32 p 1 and 2: the global average's 16 lanes (against one
            // chain of scalar adds 0.12-0.34x on 7x7 to 71x71 planes at 1
            // and 2 threads)
            const bool lanes = std::is_same<T, float>::value && mode != kSumLpP;
            if constexpr (std::is_same<T, float>::value)
                if (lanes)
                    total = mode == kSumLp1
                                ? simd::plane_sum_any<simd::SumOf::abs>(row, size, 0)
                                : simd::plane_sum_any<simd::SumOf::square>(row, size, 0);
            for (int64_t i = 0; !lanes && i < size; i++) {
                if (mode == kSumLp1)
                    total = total + std::fabs(row[i]);
                else if (mode == kSumLp2)
                    total = total + row[i] * row[i];
                else
                    total =
                        total + static_cast<T>(std::pow(std::fabs(static_cast<double>(row[i])), p));
            }
            if (mode == kSumLp1)
                out[q] = total;
            else if (mode == kSumLp2)
                out[q] = static_cast<T>(std::sqrt(static_cast<double>(total)));
            else
                out[q] = static_cast<T>(std::pow(static_cast<double>(total), 1.0 / p));
        }
    }
}

namespace detail {

// A chunk's sum (average) or maximum combined with the running total.
OVPOOL_INLINE float half_combine(float total, float part, bool is_max) {
    if (!is_max)
        return total + part;
    return part != part || part > total ? part : total;  // a NaN sticks
}

// total combined with the reduction of chunk[0..m) (float32 values).
inline float half_reduce(const float *chunk, int64_t m, Family family, int mode, double p,
                         float total) {
    if (family == Family::average)
        return half_combine(total, simd::plane_sum_f32(chunk, m), false);
    if (family == Family::max)
        return half_combine(total, simd::span_max_wide_f32(chunk, m), true);
    for (int64_t i = 0; i < m; i++) {
        if (mode == kSumLp1)
            total = total + std::fabs(chunk[i]);
        else if (mode == kSumLp2)
            total = total + chunk[i] * chunk[i];
        else
            total =
                total + static_cast<float>(std::pow(std::fabs(static_cast<double>(chunk[i])), p));
    }
    return total;
}

// The same of float16 values converted in registers (F16C builds, average
// and max only): the same operations, no scratch.
inline float half_reduce_f16(const uint16_t *x, int64_t m, Family family, float total) {
    if (family == Family::average)
        return half_combine(total, simd::plane_sum_f16(x, m), false);
    return half_combine(total, simd::span_max_wide_f16(x, m), true);
}

inline float half_finish(float total, int64_t size, Family family, int mode, double p) {
    if (family == Family::average)
        return total / static_cast<float>(size);
    if (family == Family::lp && mode == kSumLp2)
        return static_cast<float>(std::sqrt(static_cast<double>(total)));
    if (family == Family::lp && mode == kSumLpP)
        return static_cast<float>(std::pow(static_cast<double>(total), 1.0 / p));
    return total;
}

}  // namespace detail

// float16 / bfloat16: a batch of small planes (or one large plane) a unit.
template <bool Bf16>
void half_global_unit(const Plan &plan, const Call &call, int64_t unit, char *scratch) {
    const uint16_t *x = static_cast<const uint16_t *>(call.x);
    uint16_t *out = static_cast<uint16_t *>(call.out);
    const Family family = plan.spec.family;
    const int mode = plan.mode;
    const double p = plan.p;
    const int64_t size = plan.in_plane(), batch = call.schedule.group;
    const int64_t first = unit * batch, last = std::min(first + batch, plan.n_planes);
    const bool is_max = family == Family::max;
    const float start_total = is_max ? -INFINITY : 0.0f;
    const bool in_registers = kF16cRows && !Bf16 && family != Family::lp;
    float *chunk = scratch_part<float>(scratch, plan.scratch.rows);
    float *values = scratch_part<float>(scratch, plan.scratch.out_row);
    if (size <= limits::kHalfChunk) {
        if (!in_registers)
            simd::widen(x + first * size, chunk, (last - first) * size, Bf16);
        if (in_registers && family == Family::average) {
            // eight planes at a time, folded together (the same sums)
            simd::plane_sums(x + first * size, size, last - first, values, 1);
        } else {
            for (int64_t q = first; q < last; q++) {
                const float total =
                    in_registers ? detail::half_reduce_f16(x + q * size, size, family, start_total)
                                 : detail::half_reduce(chunk + (q - first) * size, size, family,
                                                       mode, p, start_total);
                values[q - first] = family == Family::average
                                        ? total
                                        : detail::half_finish(total, size, family, mode, p);
            }
        }
        if (family == Family::average)
            for (int64_t q = 0; q < last - first; q++)
                values[q] = values[q] / static_cast<float>(size);
    } else {
        float total = start_total;
        for (int64_t at = 0; at < size;) {  // chunk by chunk in both ways: the same sums
            const int64_t m = std::min(limits::kHalfChunk, size - at);
            if (in_registers) {
                total = detail::half_reduce_f16(x + first * size + at, m, family, total);
            } else {
                simd::widen(x + first * size + at, chunk, m, Bf16);
                total = detail::half_reduce(chunk, m, family, mode, p, total);
            }
            at += m;
        }
        values[0] = detail::half_finish(total, size, family, mode, p);
    }
    simd::narrow(values, out + first, last - first, Bf16);
}

OVPOOL_END
