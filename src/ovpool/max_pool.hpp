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

// One output row of max values from its window rows plane + offsets[r]
// (fresh: plane is scratch just written, the depth slab or widened rows,
// not the input).
template <class T>
inline void max_row_from(const T *plane, const int64_t *offsets, ptrdiff_t n_rows, T *buf,
                         T *out_row, const Plan &plan, bool fresh = false) {
    if (n_rows == 1 && plan.direct_w) {
        // one window row that needs no padding: read it in place
        const T *src = plane + offsets[0];
        if (plan.uniform_w)
            hmax(src, out_row, plan.out_w, plan.kernel_w, plan.stride_w, plan.dil_w, false, !fresh);
        else
            hmax_table(src, out_row, plan);
        return;
    }
    if (n_rows == 1 && plan.uniform_w && plan.interior_hi - plan.interior_lo >= 8) {
        // one window row padded at its ends: the outputs whose taps are all
        // inside read it in place, the others tap by tap as from the padded
        // copy (the identity in the padding, the same operations, the same
        // bits); the copy cost as much as the pass (1D max 5 s3 p1 on rows
        // of 4000: 10.5 -> 5.4 ms at 1 thread)
        const T *src = plane + offsets[0];
        const int64_t lo = plan.interior_lo, hi = plan.interior_hi;
        const int64_t s = plan.stride_w, k = plan.kernel_w, d = plan.dil_w;
        hmax(src + lo * s - plan.pad_w, out_row + lo, hi - lo, k, s, d, false, !fresh);
        auto edge = [&](int64_t o) {
            const int64_t first = o * s - plan.pad_w;
            auto tap = [&](int64_t t) {
                const int64_t i = first + t * d;
                return i >= 0 && i < plan.in_w ? src[i] : max_identity<T>();
            };
            T acc = tap(0);
            bool nan = acc != acc;
            for (int64_t t = 1; t < k; t++) {
                const T value = tap(t);
                acc = acc > value ? acc : value;
                nan = nan | (value != value);
            }
            if constexpr (is_float_v<T>)
                acc = nan ? nan_of<T>() : acc;
            out_row[o] = acc;
        };
        for (int64_t o = 0; o < lo; o++)
            edge(o);
        for (int64_t o = hi; o < plan.out_w; o++)
            edge(o);
        return;
    }
    max_finish(buf, out_row, plan,
               max_rows_exact(plane, offsets, n_rows, buf + plan.pad_w, plan.in_w));
}

// Max values of output rows oh .. oh + n - 1 of one 2D slice (float32,
// windows uniform along W), in blocks of run_rows(plan) rows: the vertical
// maxima of a block into `block` (rows of in_w), as one span of the block's
// height where its windows step by one input row (row j + 1's window rows
// are row j's one row down: the maxima of the k window rows shifted by
// i * in_w are the block's rows), else row by row; then each row's
// horizontal pass, in place or from the padded buffer buf, or the block's
// as one row (block_as_row). The operations
// of max_row_from, so the same bits. Returns the rows done: all, or the
// start of a block with a NaN or a row without window rows, which the caller
// takes row by row with the exact rule.
inline int64_t max_rows_run(const float *slice, const Plan &plan, int64_t oh, int64_t n,
                            float *out_rows, float *block, float *buf) {
    const int64_t in_w = plan.in_w, m_max = run_rows(plan);
    const int64_t *win_h = plan.win_h.data();
    const bool as_row = block_as_row(plan);
    float *row = block + m_max * in_w;
    int64_t offsets[limits::kRunRows];
    for (int64_t r = 0; r < n; r += m_max) {
        const int64_t m = std::min(m_max, n - r), *wh = win_h + 3 * (oh + r);
        if (block_is_span(wh, m)) {
            const ptrdiff_t taps = slice_row_offsets(plan, 0, oh + r, offsets);
            if (simd::vmax_rows_f32(slice, offsets, taps, block, m * in_w))
                return r;
        } else {
            for (int64_t j = 0; j < m; j++) {
                const ptrdiff_t taps = slice_row_offsets(plan, 0, oh + r + j, offsets);
                if (taps == 0 || simd::vmax_rows_f32(slice, offsets, taps, block + j * in_w, in_w))
                    return r;
            }
        }
        if (as_row) {
            const int64_t per = in_w / plan.stride_w;
            hmax(block, row, (m - 1) * per + plan.out_w, plan.kernel_w, plan.stride_w, plan.dil_w,
                 true);
            for (int64_t j = 0; j < m; j++)
                std::memcpy(out_rows + (r + j) * plan.out_w, row + j * per,
                            static_cast<size_t>(plan.out_w) * sizeof(float));
            continue;
        }
        for (int64_t j = 0; j < m; j++) {
            const float *col = block + j * in_w;
            if (!plan.direct_w) {
                std::memcpy(buf + plan.pad_w, col, static_cast<size_t>(in_w) * sizeof(float));
                col = buf;
            }
            hmax(col, out_rows + (r + j) * plan.out_w, plan.out_w, plan.kernel_w, plan.stride_w,
                 plan.dil_w, true);
        }
    }
    return n;
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

// The work unit of a max path P (rows, depth_slices, rows_run) for T.
template <class T, RowKernel K>
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
            if constexpr (K == RowKernel::depth_slices) {
                n = std::min({left, plan.slice_rows, plan.out_h - oh});
                pool_slices<T, true>(src, buf, offsets, plan, od, oh, n);
                for (int64_t j = 0; j < n; j++)
                    max_finish(buf + j * plan.buffer_width, out_rows + j * plan.out_w, plan, false);
            } else if constexpr (K == RowKernel::runs && std::is_same<T, float>::value) {
                // the rest of this depth slice's rows in one call, up to a block
                // with a NaN (or a row with no window row), which takes the row
                // path row by row
                n = std::min(left, plan.out_h - oh);
                const T *slice_src = src + plan.win_d[3 * od] * slice;
                float *block = scratch_part<float>(scratch, plan.scratch.run);
                const int64_t done =
                    runs_by_narrow_kernel(plan)
                        ? simd::max_rows_k3_f32(slice_src, plan.in_w, plan.win_h.data() + 3 * oh, n,
                                                out_rows, plan.out_w, buf, plan.pad_w,
                                                static_cast<int>(plan.stride_w),
                                                static_cast<int>(plan.kernel_w))
                        : max_rows_run(slice_src, plan, oh, n, out_rows, block, buf);
                if (done < n) {
                    n = done + std::min<int64_t>(n - done, run_rows(plan));
                    for (int64_t j = done; j < n; j++) {
                        const ptrdiff_t n_rows = row_offsets(plan, od, oh + j, offsets);
                        max_row_from(src, offsets, n_rows, buf, out_rows + j * plan.out_w, plan);
                    }
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
