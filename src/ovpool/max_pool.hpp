// Max values (float32, float64, int8, uint8) off the general row path and
// its specialised runs: separable rows, depth slice by slice, 3-wide windows.
//
// NaN rule (PyTorch's): a NaN tap always replaces the running maximum, so a
// window with a NaN gives NaN. The values-only kernels may combine in any
// order (the value is the same); argmax_pool.hpp keeps the tie and NaN
// rules of the positions too. A window with no element inside the input
// gives OpenVINO's lowest value (empty_fill).
#pragma once

#include "sum_pool.hpp"

OVPOOL_BEGIN

// Horizontal pass of one output row from its padded column maxima.
template <class T>
OVPOOL_INLINE void max_finish(const T *buf, T *out_row, const Plan &plan, bool nan_free) {
    if (plan.uniform_w)
        hmax(buf, out_row, plan.out_w, plan.kernel_w, plan.stride_w, plan.dil_w, nan_free);
    else
        hmax_table(buf + plan.pad_w, out_row, plan);
}

// One output row of max values from its window rows plane + offsets[r].
template <class T>
inline void max_row_from(const T *plane, const int64_t *offsets, ptrdiff_t n_rows, T *buf,
                         T *out_row, const Plan &plan) {
    if (n_rows == 1 && plan.direct_w) {
        // one window row that needs no padding: read it in place
        const T *src = plane + offsets[0];
        if (plan.uniform_w)
            hmax(src, out_row, plan.out_w, plan.kernel_w, plan.stride_w, plan.dil_w, false);
        else
            hmax_table(src, out_row, plan);
        return;
    }
    max_finish(buf, out_row, plan,
               max_rows_exact(plane, offsets, n_rows, buf + plan.pad_w, plan.in_w));
}

// Output rows (od, oh .. oh + n - 1) with a window that holds no element of
// the input get `value` there (some OpenVINO ceil-rounded windows).
template <class T>
inline void fill_empty_rows(const Plan &plan, T *out_rows, int64_t od, int64_t oh, int64_t n,
                            T value) {
    if (!plan.any_empty)
        return;
    for (int64_t j = 0; j < n; j++) {
        T *row = out_rows + j * plan.out_w;
        if (plan.win_d[3 * od + 1] == 0 || plan.win_h[3 * (oh + j) + 1] == 0) {
            for (int64_t o = 0; o < plan.out_w; o++)
                row[o] = value;
        } else {
            for (int64_t o : plan.empty_w)
                row[o] = value;
        }
    }
}

// The work unit of a max path P (rows, depth_slices, rows_k3) for T.
template <class T, Path P>
void max_unit(const Plan &plan, const Call &call, int64_t unit, char *scratch) {
    const T *x = static_cast<const T *>(call.x);
    T *out = static_cast<T *>(call.out);
    T *buf = scratch_part<T>(scratch, plan.scratch.buf);
    int64_t *offsets = scratch_part<int64_t>(scratch, plan.scratch.offsets);
    const int64_t in_plane = plan.in_plane(), out_plane = plan.out_plane();
    const int64_t slice = plan.in_h * plan.in_w;
    for_unit_rows(
        plan, call.schedule, unit,
        [&](int64_t q, int64_t row, int64_t od, int64_t oh, int64_t left) -> int64_t {
            const T *src = x + q * in_plane;
            T *out_rows = out + q * out_plane + row * plan.out_w;
            int64_t n = 1;
            if constexpr (P == Path::depth_slices) {
                n = std::min({left, plan.slice_rows, plan.out_h - oh});
                pool_slices<T, true>(src, buf, offsets, plan, od, oh, n);
                for (int64_t j = 0; j < n; j++)
                    max_finish(buf + j * plan.buffer_width, out_rows + j * plan.out_w, plan, false);
            } else if constexpr (P == Path::rows_k3 && std::is_same<T, float>::value) {
                // the rest of this depth slice's rows in one call, up to a row
                // with a NaN (or no window row), which takes the row path
                n = std::min(left, plan.out_h - oh);
                const int64_t done = simd::max_rows_k3_f32(
                    src + plan.win_d[3 * od] * slice, plan.in_w, plan.win_h.data() + 3 * oh, n,
                    out_rows, plan.out_w, buf, plan.pad_w, static_cast<int>(plan.stride_w));
                if (done < n) {
                    n = done + 1;
                    const ptrdiff_t n_rows = row_offsets(plan, od, oh + done, offsets);
                    max_row_from(src, offsets, n_rows, buf, out_rows + done * plan.out_w, plan);
                }
            } else {
                const ptrdiff_t n_rows = row_offsets(plan, od, oh, offsets);
                if (plan.prefetch > 0 && n_rows > 0)
                    prefetch_ahead(reinterpret_cast<const char *>(src), offsets, n_rows,
                                   plan.win_h[3 * oh + 1], sizeof(T), plan);
                max_row_from(src, offsets, n_rows, buf, out_rows, plan);
            }
            fill_empty_rows(plan, out_rows, od, oh, n, empty_fill<T>());
            return n;
        });
}

OVPOOL_END
