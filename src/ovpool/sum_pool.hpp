// Averages and Lp sums (float32, float64) off the general row path and its
// specialised runs: separable rows, depth slice by slice, 3-wide windows,
// and the two adaptive-average kernels.
//
// Average: out = (sum of the taps inside the input) / (div_d * div_h *
// div_w), each axis's factor from column 2 of its window table; a zero
// divisor (an empty exclude-pad window) gives NaN, as in OpenVINO. Lp:
// (sum |x|^p)^(1/p); padding contributes zeros.
#pragma once

#include "call.hpp"

OVPOOL_BEGIN

// Lp sums to norms, in place (a no-op for averages).
template <class T>
inline void lp_root(T *out_row, const Plan &plan, int mode, double p) {
    if (mode == kSumLp2) {
        for (ptrdiff_t o = 0; o < plan.out_w; o++)
            out_row[o] = static_cast<T>(std::sqrt(static_cast<double>(out_row[o])));
    } else if (mode == kSumLpP) {
        const double inv_p = 1.0 / p;
        for (ptrdiff_t o = 0; o < plan.out_w; o++)
            out_row[o] = static_cast<T>(std::pow(static_cast<double>(out_row[o]), inv_p));
    }
}

// Horizontal pass and divisor of one output row from its column sums col
// (src: the same sums with the W padding before them; or, from_input, the
// input row itself).
template <class T>
inline void sum_finish(const T *src, const T *col, T *out_row, const T *div_w, const Plan &plan,
                       ptrdiff_t od, ptrdiff_t oh, int mode, double p, bool from_input) {
    const T row_div = static_cast<T>(plan.win_d[3 * od + 2] * plan.win_h[3 * oh + 2]);
    if (mode != kSumAverage)
        div_w = nullptr;
    if (plan.uniform_w)
        hsum(src, out_row, plan.out_w, plan.kernel_w, plan.stride_w, plan.dil_w, div_w, row_div,
             from_input);
    else
        hsum_table(col, out_row, plan, div_w, row_div);
    lp_root(out_row, plan, mode, p);
}

// One output row from its window rows plane + offsets[r].
template <class T>
inline void sum_row_from(const T *plane, const int64_t *offsets, ptrdiff_t n_rows, T *out_row,
                         T *buf, const T *div_w, const Plan &plan, ptrdiff_t od, ptrdiff_t oh,
                         int mode, double p) {
    T *col = buf + plan.pad_w;
    const T *src = buf;  // what the horizontal pass reads
    if (n_rows == 1 && mode == kSumAverage && plan.direct_w) {
        // one window row that needs no padding: read it in place, no copy
        src = plane + offsets[0];
        col = const_cast<T *>(src);
    } else if (mode == kSumAverage) {
        vsum(plane, offsets, n_rows, col, plan.in_w);
    } else {
        vsum_lp(plane, offsets, n_rows, col, plan.in_w, mode, p);
    }
    sum_finish(src, col, out_row, div_w, plan, od, oh, mode, p, src != buf);
}

template <class T>
inline void sum_row(const T *plane, T *out_row, T *buf, int64_t *offsets, const T *div_w,
                    const Plan &plan, ptrdiff_t od, ptrdiff_t oh, int mode, double p) {
    const ptrdiff_t n_rows = row_offsets(plan, od, oh, offsets);
    if (plan.prefetch > 0 && n_rows > 0)
        prefetch_ahead(reinterpret_cast<const char *>(plane), offsets, n_rows,
                       plan.win_h[3 * oh + 1], sizeof(T), plan);
    sum_row_from(plane, offsets, n_rows, out_row, buf, div_w, plan, od, oh, mode, p);
}

// Averages and Lp sums of output rows oh .. oh + n - 1 of depth slice od
// (float32, windows uniform along W), in blocks of run_rows(plan) rows: the
// column sums of a block into `block`, as one span where its windows step
// by one input row (see max_rows_run), else row by row; then each row's
// horizontal pass and divisor (sum_finish), in place or from the padded
// buffer buf, or the block as one row (block_as_row). The operations of
// sum_row_from, so the same bits.
inline void sum_rows_run(const float *slice, const Plan &plan, int64_t od, int64_t oh, int64_t n,
                         float *out_rows, float *block, float *buf, const float *div_w) {
    const int64_t in_w = plan.in_w, m_max = run_rows(plan);
    const int64_t *win_h = plan.win_h.data();
    const int mode = plan.mode;
    const bool as_row = block_as_row(plan);
    float *row = block + m_max * in_w;
    int64_t offsets[limits::kRunRows];
    auto columns = [&](int64_t out_row, float *col, int64_t width) {
        const ptrdiff_t taps = slice_row_offsets(plan, 0, out_row, offsets);
        if (mode == kSumAverage)
            vsum(slice, offsets, taps, col, width);
        else
            vsum_lp(slice, offsets, taps, col, width, mode, plan.p);
    };
    for (int64_t r = 0; r < n; r += m_max) {
        const int64_t m = std::min(m_max, n - r), *wh = win_h + 3 * (oh + r);
        if (block_is_span(wh, m)) {
            columns(oh + r, block, m * in_w);
        } else {
            for (int64_t j = 0; j < m; j++)
                columns(oh + r + j, block + j * in_w, in_w);
        }
        if (as_row) {
            const int64_t per = in_w / plan.stride_w;
            hsum(block, row, (m - 1) * per + plan.out_w, plan.kernel_w, plan.stride_w, plan.dil_w,
                 static_cast<const float *>(nullptr), 1.0f, false);
            for (int64_t j = 0; j < m; j++) {
                float *out_row = out_rows + (r + j) * plan.out_w;
                std::memcpy(out_row, row + j * per,
                            static_cast<size_t>(plan.out_w) * sizeof(float));
                if (mode == kSumAverage)
                    divide_row(out_row, plan.out_w, div_w,
                               static_cast<float>(plan.win_d[3 * od + 2] * wh[3 * j + 2]));
                lp_root(out_row, plan, mode, plan.p);
            }
            continue;
        }
        for (int64_t j = 0; j < m; j++) {
            float *col = block + j * in_w;
            const float *src = col;
            if (!plan.direct_w) {
                std::memcpy(buf + plan.pad_w, col, static_cast<size_t>(in_w) * sizeof(float));
                src = buf;
            }
            sum_finish(src, col, out_rows + (r + j) * plan.out_w, div_w, plan, od, oh + r + j, mode,
                       plan.p, false);
        }
    }
}

// Vertical passes of output rows (od, oh .. oh + n_out_rows - 1) into the
// scratch rows buf + j * buffer_width, one depth slice at a time. Row by row,
// a window pooled along D reads kd row blocks a whole slice apart, streams
// the hardware prefetcher does not follow; slice by slice, the rows of each
// slice are read in address order (aap3d at 1 thread: 6.4 -> 2.8 ms;
// software prefetch on top of it only slowed maxpool3d, 4.5 -> 4.9 ms).
template <class T, bool IsMax>
inline void pool_slices(const T *plane, T *buf, int64_t *offsets, const Plan &plan, ptrdiff_t od,
                        ptrdiff_t oh, ptrdiff_t n_out_rows) {
    const int64_t *wd = plan.win_d.data() + 3 * od;
    const ptrdiff_t width = plan.buffer_width;
    if (wd[1] == 0) {
        for (ptrdiff_t j = 0; j < n_out_rows; j++) {
            if constexpr (IsMax)
                vmax(plane, offsets, 0, buf + j * width + plan.pad_w, plan.in_w);
            else
                vsum(plane, offsets, 0, buf + j * width + plan.pad_w, plan.in_w);
        }
        return;
    }
    for (ptrdiff_t td = 0; td < wd[1]; td++)
        for (ptrdiff_t j = 0; j < n_out_rows; j++) {
            const ptrdiff_t n_rows =
                slice_row_offsets(plan, wd[0] + td * plan.dil_d, oh + j, offsets);
            T *col = buf + j * width + plan.pad_w;
            if constexpr (IsMax) {
                if (td == 0)
                    vmax(plane, offsets, n_rows, col, plan.in_w);
                else
                    vmax_add(plane, offsets, n_rows, col, plan.in_w);
            } else {
                if (td == 0)
                    vsum(plane, offsets, n_rows, col, plan.in_w);
                else
                    vsum_add(plane, offsets, n_rows, col, plan.in_w);
            }
        }
}

// The work unit of a sum path P (rows, depth_slices, rows_run,
// adaptive_narrow, adaptive_wide) for element type T.
template <class T, RowKernel K>
void sum_unit(const Plan &plan, const Call &call, int64_t unit, char *scratch) {
    const T *x = static_cast<const T *>(call.x);
    T *out = static_cast<T *>(call.out);
    T *buf = scratch_part<T>(scratch, plan.scratch.buf);
    int64_t *offsets = scratch_part<int64_t>(scratch, plan.scratch.offsets);
    const T *div_w = div_w_of<T>(plan);
    const int mode = plan.mode;
    const double p = plan.p;
    const int64_t in_plane = plan.in_plane(), out_plane = plan.out_plane();
    const int64_t slice = plan.in_h * plan.in_w;
    for_unit_rows(
        plan, call.schedule, unit,
        [&](int64_t q, int64_t row, int64_t od, int64_t oh, int64_t left) -> int64_t {
            const T *src = x + q * in_plane;
            T *out_rows = out + q * out_plane + row * plan.out_w;
            const int64_t *wd = plan.win_d.data() + 3 * od;
            if constexpr (K == RowKernel::depth_slices) {
                const int64_t n = std::min({left, plan.slice_rows, plan.out_h - oh});
                pool_slices<T, false>(src, buf, offsets, plan, od, oh, n);
                for (int64_t j = 0; j < n; j++)
                    sum_finish(buf + j * plan.buffer_width,
                               buf + j * plan.buffer_width + plan.pad_w, out_rows + j * plan.out_w,
                               div_w, plan, od, oh + j, mode, p, false);
                return n;
            } else if constexpr (K == RowKernel::runs && std::is_same<T, float>::value) {
                // the rest of this depth slice's rows in one call; 3-wide
                // windows over up to 3 rows keep their own kernel (stride 2's
                // column sums in registers)
                const int64_t n = std::min(left, plan.out_h - oh);
                const T *slice_src = src + wd[0] * slice;
                if (runs_by_narrow_kernel(plan))
                    simd::sum_rows_k3_f32(slice_src, plan.in_w, plan.win_h.data() + 3 * oh, n,
                                          out_rows, plan.out_w, buf, plan.pad_w, div_w, wd[2],
                                          static_cast<int>(plan.stride_w), mode == kSumLp2);
                else
                    sum_rows_run(slice_src, plan, od, oh, n, out_rows,
                                 scratch_part<float>(scratch, plan.scratch.run), buf, div_w);
                return n;
            } else if constexpr (K == RowKernel::narrow_bins && std::is_same<T, float>::value) {
                // up to eight rows of this depth slice in one call (a depth window
                // of more than one slice takes the row path)
                const int64_t n = std::min({int64_t(8), left, plan.out_h - oh});
                if (wd[1] == 1 && simd::adaptive_narrow_f32(
                                      src + wd[0] * slice, plan.in_w, plan.win_h.data() + 3 * oh, n,
                                      plan.win_w.data(), plan.out_w, out_rows, plan.out_w, div_w,
                                      wd[2], scratch_part<float>(scratch, plan.scratch.lanes)))
                    return n;
                sum_row(src, out_rows, buf, offsets, div_w, plan, od, oh, mode, p);
                return 1;
            } else if constexpr (K == RowKernel::wide_bins && std::is_same<T, float>::value) {
                // the rest of this depth slice's rows in one call
                const int64_t n = std::min(left, plan.out_h - oh);
                simd::adaptive_rows_f32(src + wd[0] * slice, wd[1], plan.dil_d * slice, plan.in_w,
                                        plan.win_h.data() + 3 * oh, n, plan.win_w.data(),
                                        plan.out_w, out_rows, plan.out_w, div_w, wd[2]);
                return n;
            } else {
                sum_row(src, out_rows, buf, offsets, div_w, plan, od, oh, mode, p);
                return 1;
            }
        });
}

OVPOOL_END
