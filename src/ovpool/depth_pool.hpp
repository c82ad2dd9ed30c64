// Max values and averages pooled along D first (Path::rows, RowKernel::depth_slab).
//
// A work unit is one output depth od of one plane: the maxima or sums over
// its window's depth slices go into a per-thread slab (input rows slab_lo ..
// slab_hi - 1 of a slice), from which every output row of od is pooled as
// from a 2D plane. The slab pass reads kd contiguous streams, one long row
// per slice, and each input row is read once per od instead of once per
// output row that covers it (maxpool3d 3x3x3 s2: 1.5 reads per element
// instead of 2.25; at 2 threads maxpool3d 3.63 -> 3.16 ms, avgpool3d 3.75 ->
// 3.00, aap3d 2.98 -> 2.37, aap3d_overlap 0.48 -> 0.33).
#pragma once

#include "max_pool.hpp"

OVPOOL_BEGIN

// Part `part` of out_h of the slab rows of the next work unit's depth slices
// (plane next_src, depth window next_wd), into L2: the thread usually takes
// the next unit itself, and spreading the requests over the output rows of
// the current unit keeps them ahead of the slab pass without flooding the
// miss queue. Each slice's rows are only a few pages long, which the
// hardware prefetcher does not cross. (Into L1 they evicted the current
// slab: maxpool3d 3x3x3 s2 5.5 ms at 1 thread with L2 prefetch, 7.0 with L1
// prefetch, 6.6 without a slab.)
inline void prefetch_slab_part(const char *next_src, const int64_t *next_wd, int64_t part,
                               int64_t item_size, const Plan &plan) {
    const int64_t span = (plan.slab_hi - plan.slab_lo) * plan.in_w * item_size;
    const int64_t lo = (span * part / plan.out_h) & ~int64_t(63);
    const int64_t hi = span * (part + 1) / plan.out_h;
    for (int64_t td = 0; td < next_wd[1]; td++) {
        const char *start = next_src + ((next_wd[0] + td * plan.dil_d) * plan.in_h + plan.slab_lo) *
                                           plan.in_w * item_size;
        for (int64_t b = lo; b < hi; b += 64)
            prefetch_l2(start + b);
    }
}

template <class T, bool IsMax>
void depth_slab_unit(const Plan &plan, const Call &call, int64_t unit, char *scratch) {
    const T *x = static_cast<const T *>(call.x);
    T *out = static_cast<T *>(call.out);
    T *buf = scratch_part<T>(scratch, plan.scratch.buf);
    T *slab = scratch_part<T>(scratch, plan.scratch.slab);
    int64_t *offsets = scratch_part<int64_t>(scratch, plan.scratch.offsets);
    const int64_t slice = plan.in_h * plan.in_w, in_plane = plan.in_d * slice,
                  out_plane = plan.out_plane();
    const int64_t slab_width = (plan.slab_hi - plan.slab_lo) * plan.in_w;
    const int64_t n_units = plan.n_planes * plan.out_d;
    const int64_t q = unit / plan.out_d, od = unit - q * plan.out_d;
    const T *src = x + q * in_plane;
    const int64_t *wd = plan.win_d.data() + 3 * od;
    T *out_d = out + q * out_plane + od * plan.out_h * plan.out_w;
    // the slab's rows are contiguous in every depth slice: one long row
    for (int64_t td = 0; td < wd[1]; td++)
        offsets[td] = (wd[0] + td * plan.dil_d) * slice + plan.slab_lo * plan.in_w;
    if constexpr (IsMax)
        max_rows_exact(src, offsets, wd[1], slab + plan.slab_lo * plan.in_w, slab_width);
    else
        vsum(src, offsets, wd[1], slab + plan.slab_lo * plan.in_w, slab_width);
    // the next unit: the next output depth, or the first of the next plane
    const char *next_src =
        reinterpret_cast<const char *>(od + 1 < plan.out_d ? src : src + in_plane);
    const int64_t *next_wd = od + 1 < plan.out_d ? wd + 3 : plan.win_d.data();
    const bool ahead = plan.slab_prefetch && unit + 1 < n_units;
    const int64_t item = static_cast<int64_t>(sizeof(T));
    int64_t oh = 0;
    if constexpr (!IsMax && std::is_same<T, float>::value) {
        // adaptive averages of narrow bins: eight output rows at a time
        if (kAvx2 && plan.narrow_rows) {
            float *lanes = scratch_part<float>(scratch, plan.scratch.lanes);
            while (oh < plan.out_h) {
                const int64_t n = std::min<int64_t>(8, plan.out_h - oh);
                if (!simd::adaptive_narrow_f32(slab, plan.in_w, plan.win_h.data() + 3 * oh, n,
                                               plan.win_w.data(), plan.out_w,
                                               out_d + oh * plan.out_w, plan.out_w,
                                               div_w_of<T>(plan), wd[2], lanes))
                    break;
                if (ahead)
                    for (int64_t r = oh; r < oh + n; r++)
                        prefetch_slab_part(next_src, next_wd, r, item, plan);
                oh += n;
            }
        }
    }
    if constexpr (IsMax && std::is_same<T, float>::value) {
        // windows 3 wide at stride 1 or 2 (2 wide at stride 1) over up to 3
        // slab rows: the run path's kernel, the same operations as
        // max_row_from, in one call for the slice's rows (up to a row whose
        // window rows hold a NaN, which the loop below takes); a call a row
        // cost more than the arithmetic on small slices (3x3x3 s1 p1 on
        // 32x32x32 0.56-0.59x, 2x2x2 s1 on 8x28x28 0.51-0.55x at 1 and 2
        // threads)
        if (plan.slab_narrow)
            oh = simd::max_rows_k3_f32(slab, plan.in_w, plan.win_h.data(), plan.out_h, out_d,
                                       plan.out_w, buf, plan.pad_w, static_cast<int>(plan.stride_w),
                                       static_cast<int>(plan.kernel_w));
    }
    for (; oh < plan.out_h; oh++) {
        if (ahead)
            prefetch_slab_part(next_src, next_wd, oh, item, plan);
        const ptrdiff_t n_rows = slice_row_offsets(plan, 0, oh, offsets);
        T *out_row = out_d + oh * plan.out_w;
        if constexpr (IsMax)
            max_row_from(slab, offsets, n_rows, buf, out_row, plan, true);
        else
            sum_row_from(slab, offsets, n_rows, out_row, buf, div_w_of<T>(plan), plan, od, oh,
                         kSumAverage, 1.0);
    }
    if constexpr (IsMax)
        fill_empty_rows(plan, out_d, od, 0, plan.out_h, empty_fill<T>());
}

OVPOOL_END
