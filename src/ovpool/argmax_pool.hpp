// Max pooling with indices (Path::argmax; tilings: Plan::argmax_tiles).
//
// The rule: the first maximum in row-major window order (a strict ">" over
// the taps in that order), a NaN always wins and the last NaN is kept; the
// value returned is the element the index names. The index of input element
// (id, ih, iw) of plane q is index_base + id * stride_d + ih * stride_h +
// iw * stride_w, index_base = (q % planes_per_index_space) * plane size:
// row-major or column-major (ONNX storage_order=1) within the plane. An
// empty window gives the lowest value and index_base (OpenVINO's answer).
//
// An output row takes, by its windows:
// * tilings and 3-tap windows at stride 1 or 2 of one depth slice (the ResNet
//   and SegNet MaxPool, adaptive 28->7): the vector argmax of
//   simd/argmax.hpp, runs of rows in one call where indices are int64 and
//   row-major, the padded left edge joining the vector blocks;
// * other interior outputs (16+ of them): a taps-outer loop that gcc
//   vectorises over the outputs, the edges (windows meeting the padding) by
//   the tables, each window whole in row-major order;
// * adaptive bins and short rows: vertical first by the tables, each
//   column's first row holding its maximum, then each bin's smallest (row,
//   column) holding the maximum; bins of 1-16 columns window by window where
//   their vectors fit (bins_argmax_f32).
#pragma once

#include "max_pool.hpp"

OVPOOL_BEGIN

namespace argmax {

struct Layout {
    int64_t index_base;
    int64_t stride_d, stride_h, stride_w;
};

// The index of the element at row-major in-plane offset p: split into
// (d, h, w) and renumbered by the strides.
OVPOOL_INLINE int64_t flat_index(int64_t p, const Plan &plan, const Layout &l) {
    if (plan.row_major)
        return l.index_base + p;  // row-major: no divisions
    const int64_t plane_hw = plan.in_h * plan.in_w;
    const int64_t d = p / plane_hw, rest = p - d * plane_hw, ih = rest / plan.in_w;
    return l.index_base + d * l.stride_d + ih * l.stride_h + (rest - ih * plan.in_w) * l.stride_w;
}

// Fold taps t_begin..k-1 of one window row into the running maximum of
// outputs lo..hi-1 (all their taps inside the input). Tap t of output o is
// row[o*stride + start + t*dilation]; the taps arrive in row-major window
// order, so the strict ">" keeps the first maximum and "!=" the last NaN.
// Branch-free selects over o vectorise (pos is an in-plane offset).
template <class T, ptrdiff_t S, ptrdiff_t D>
OVPOOL_INLINE void taps(const T *row, T *best, int32_t *pos, ptrdiff_t lo, ptrdiff_t hi,
                        ptrdiff_t stride, ptrdiff_t start, ptrdiff_t dilation, ptrdiff_t t_begin,
                        ptrdiff_t k, int32_t row_offset) {
    const ptrdiff_t s = S ? S : stride, d = D ? D : dilation;
    for (ptrdiff_t t = t_begin; t < k; t++)
        for (ptrdiff_t o = lo; o < hi; o++) {
            const ptrdiff_t i = o * s + start + t * d;
            const T value = row[i];
            const bool take = (value > best[o]) | (value != value);
            best[o] = take ? value : best[o];
            pos[o] = take ? static_cast<int32_t>(row_offset + i) : pos[o];
        }
}

template <class T, ptrdiff_t S>
OVPOOL_INLINE void first_tap(const T *row, T *best, int32_t *pos, ptrdiff_t lo, ptrdiff_t hi,
                             ptrdiff_t stride, ptrdiff_t start, int32_t row_offset) {
    const ptrdiff_t s = S ? S : stride;
    for (ptrdiff_t o = lo; o < hi; o++) {
        const ptrdiff_t i = o * s + start;
        best[o] = row[i];
        pos[o] = static_cast<int32_t>(row_offset + i);
    }
}

#if defined(__AVX2__)
// float32 at stride S (1 or 2): blocks of 8 outputs [lo, returned) keep
// their running maximum and position in registers through the row's taps,
// loaded and stored once a row rather than once a tap (the passes over the
// outputs tap by tap spent more on best[] and pos[] than on the
// comparisons); the same comparisons in the same order. At stride 2 the
// lanes hold outputs 0, 1, 4, 5, 2, 3, 6, 7 (simd::strided8), put back once
// at the end. The rest take the loops of taps().
template <int S>
inline ptrdiff_t interior_row_f32(const float *row, float *best, int32_t *pos, ptrdiff_t lo,
                                  ptrdiff_t hi, ptrdiff_t start, ptrdiff_t d, ptrdiff_t k,
                                  bool first_row, int32_t row_offset) {
    const __m256i lanes = S == 1 ? _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
                                 : _mm256_setr_epi32(0, 2, 8, 10, 4, 6, 12, 14);
    const __m256i unused = _mm256_setzero_si256();
    ptrdiff_t o = lo;
    for (; o + 8 <= hi; o += 8) {
        const float *p = row + o * S + start;
        const __m256i at = _mm256_add_epi32(
            lanes, _mm256_set1_epi32(static_cast<int32_t>(row_offset + o * S + start)));
        __m256 b;
        __m256i q;
        ptrdiff_t t = 0;
        if (first_row) {
            b = simd::strided8(p, S, unused);
            q = at;
            t = 1;
        } else {
            // the lanes' order: the same permutation (it is its own inverse)
            b = simd::unpermute8(_mm256_loadu_ps(best + o), S);
            q = simd::unpermute8i(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(pos + o)),
                                  S);
        }
        for (; t < k; t++) {
            const __m256 v = simd::strided8(p + t * d, S, unused);
            const __m256 take =
                _mm256_or_ps(_mm256_cmp_ps(v, b, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
            b = _mm256_blendv_ps(b, v, take);
            const __m256i at_t =
                _mm256_add_epi32(at, _mm256_set1_epi32(static_cast<int32_t>(t * d)));
            q = _mm256_castps_si256(
                _mm256_blendv_ps(_mm256_castsi256_ps(q), _mm256_castsi256_ps(at_t), take));
        }
        _mm256_storeu_ps(best + o, simd::unpermute8(b, S));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(pos + o), simd::unpermute8i(q, S));
    }
    return o;
}
#endif

// One window row for the interior outputs; strides 1 and 2 are specialised
// so that the loads are contiguous or deinterleaved.
template <class T>
inline void interior_row(const T *row, T *best, int32_t *pos, const Plan &plan, bool first_row,
                         int32_t row_offset) {
    ptrdiff_t lo = plan.interior_lo;
    const ptrdiff_t hi = plan.interior_hi;
    const ptrdiff_t start = -plan.pad_w, k = plan.kernel_w, d = plan.dil_w, s = plan.stride_w;
    const ptrdiff_t t_begin = first_row ? 1 : 0;
#if defined(__AVX2__)
    if constexpr (std::is_same<T, float>::value)
        if (s == 1 || s == 2) {
            lo = s == 1 ? interior_row_f32<1>(row, best, pos, lo, hi, start, d, k, first_row,
                                              row_offset)
                        : interior_row_f32<2>(row, best, pos, lo, hi, start, d, k, first_row,
                                              row_offset);
            if (lo >= hi)
                return;
        }
#endif
    if (first_row) {
        if (s == 1)
            first_tap<T, 1>(row, best, pos, lo, hi, 1, start, row_offset);
        else if (s == 2)
            first_tap<T, 2>(row, best, pos, lo, hi, 2, start, row_offset);
        else
            first_tap<T, 0>(row, best, pos, lo, hi, s, start, row_offset);
    }
    if (s == 1 && d == 1)
        taps<T, 1, 1>(row, best, pos, lo, hi, 1, start, 1, t_begin, k, row_offset);
    else if (s == 2 && d == 1)
        taps<T, 2, 1>(row, best, pos, lo, hi, 2, start, 1, t_begin, k, row_offset);
    else if (s == 3 && d == 1)
        taps<T, 3, 1>(row, best, pos, lo, hi, 3, start, 1, t_begin, k, row_offset);
    else if (s == 4 && d == 1)
        taps<T, 4, 1>(row, best, pos, lo, hi, 4, start, 1, t_begin, k, row_offset);
    else
        taps<T, 0, 0>(row, best, pos, lo, hi, s, start, d, t_begin, k, row_offset);
}

// Outputs o_begin..o_end-1 by the window tables (edge windows that meet the
// padding, or adaptive bins): the leftmost maximum of each window row, then
// the topmost row, both with the strict comparison.
template <class T, class I>
inline void edges(const T *plane, T *out_row, I *index_row, const Plan &plan, ptrdiff_t od,
                  ptrdiff_t oh, ptrdiff_t o_begin, ptrdiff_t o_end, const Layout &l) {
    const int64_t *wd = plan.win_d.data() + 3 * od;
    const int64_t *wh = plan.win_h.data() + 3 * oh;
    if constexpr (std::is_same<T, float>::value) {
        bool short_windows = wd[1] == 1;
        for (ptrdiff_t ow = o_begin; ow < o_end && short_windows; ow++)
            short_windows = plan.win_w[3 * ow + 1] < 8;
        if (short_windows) {
            // one depth slice, windows under 8 taps a row: each window whole,
            // without data-dependent branches
            for (ptrdiff_t ow = o_begin; ow < o_end; ow++) {
                const int64_t *ww = plan.win_w.data() + 3 * ow;
                if (wh[1] == 0 || ww[1] == 0) {
                    out_row[ow] = lowest<T>();
                    index_row[ow] = static_cast<I>(l.index_base);
                    continue;
                }
                float best;
                const int64_t offset =
                    simd::window_argmax_f32(plane, plan.in_w, wd[0] * plan.in_h + wh[0], wh[1],
                                            plan.dil_h, ww[0], ww[1], plan.dil_w, &best);
                out_row[ow] = best;
                index_row[ow] = static_cast<I>(flat_index(offset, plan, l));
            }
            return;
        }
    }
    for (ptrdiff_t ow = o_begin; ow < o_end; ow++) {
        out_row[ow] = lowest<T>();
        index_row[ow] = static_cast<I>(l.index_base);
    }
    bool first_row = true;
    for (ptrdiff_t td = 0; td < wd[1]; td++) {
        const int64_t in_d_idx = wd[0] + td * plan.dil_d;
        for (ptrdiff_t th = 0; th < wh[1]; th++) {
            const int64_t in_h_idx = wh[0] + th * plan.dil_h;
            const T *row = plane + (in_d_idx * plan.in_h + in_h_idx) * plan.in_w;
            const int64_t row_base = l.index_base + in_d_idx * l.stride_d + in_h_idx * l.stride_h;
            for (ptrdiff_t ow = o_begin; ow < o_end; ow++) {
                const int64_t first = plan.win_w[3 * ow], n_taps = plan.win_w[3 * ow + 1];
                if (n_taps == 0)
                    continue;
                T best;
                int64_t best_tap;
                if (plan.dil_w == 1 && n_taps >= 8) {
                    best_tap = span_argmax(row + first, n_taps) + first;
                    best = row[best_tap];
                } else {
                    best = row[first];
                    best_tap = first;
                    for (int64_t t = 1; t < n_taps; t++) {
                        const int64_t tap = first + t * plan.dil_w;
                        const T value = row[tap];
                        const bool take = (value > best) | (value != value);
                        best = take ? value : best;
                        best_tap = take ? tap : best_tap;
                    }
                }
                if (first_row || best > out_row[ow] || best != best) {
                    out_row[ow] = best;
                    index_row[ow] = static_cast<I>(row_base + best_tap * l.stride_w);
                }
            }
            first_row = false;
        }
    }
}

// Values and indices of one output row by the window tables, vertical first
// (adaptive bins of unequal size, rows with few interior outputs).
//
// The vertical pass keeps, per input column, the maximum over the window
// rows and the rank of the topmost row holding it (the bottommost for a NaN).
// The horizontal pass then takes, among the columns of a window, the
// lexicographically smallest (row, column) holding the maximum, or the
// largest holding a NaN: that is the first maximum (last NaN) in row-major
// window order, so the tie and NaN rules hold. Where plan.bins_by_window,
// each window is taken on its own first (the same rule, see
// simd::bins_group_f32; positions, out_w int64, is its scratch), and a row
// where that meets a NaN by the fold.
template <class T, class I>
inline void table_row(const T *plane, T *out_row, I *index_row, T *col, int32_t *col_row,
                      int64_t *offsets, int64_t *positions, const Plan &plan, ptrdiff_t od,
                      ptrdiff_t oh, const Layout &l) {
    const ptrdiff_t n_rows = row_offsets(plan, od, oh, offsets);
    const bool vector_bins = std::is_same<T, float>::value && plan.dil_w == 1 && plan.in_w >= 8 &&
                             plan.in_d * plan.in_h < limits::kRankKeyRows;
    // a window with no element: the lowest value, the plane's first index
    auto empty = [&](ptrdiff_t o) {
        out_row[o] = lowest<T>();
        index_row[o] = static_cast<I>(l.index_base);
    };
    if (n_rows == 0) {
        for (ptrdiff_t o = 0; o < plan.out_w; o++)
            empty(o);
        return;
    }
    // ask for as many bytes as the window has, from 2 KiB past its last row:
    // where the next output rows' windows read. The hardware prefetcher does
    // not follow the column blocks' row-by-row order (adaptive max
    // 8x256x50x50 -> 7 with indices 0.86-0.88x at 1 and 2 threads, the
    // window right after this one), and the folds of one window do not hide
    // the latency of the next: 2 KiB further gave 0.91-0.94x at 1 and 2
    // threads (100 -> 7 0.91-0.95x; 4 and 8 KiB less; whole windows further
    // ahead made large windows slower)
    const char *ahead =
        reinterpret_cast<const char *>(plane + offsets[n_rows - 1] + plan.in_w) + 2048;
    for (ptrdiff_t i = 0; i < n_rows * plan.in_w * static_cast<ptrdiff_t>(sizeof(T)); i += 256) {
        // four lines a turn (a prefetch past the end cannot fault)
        prefetch_l1(ahead + i);
        prefetch_l1(ahead + i + 64);
        prefetch_l1(ahead + i + 128);
        prefetch_l1(ahead + i + 192);
    }
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
        if (plan.argmax_spans && n_rows == 1) {
            // each window's first maximum (last NaN) by a vector scan of its
            // span: the element itself, as below (Plan::argmax_spans)
            const T *row = plane + offsets[0];
            for (ptrdiff_t o = 0; o < plan.out_w; o++) {
                const int64_t first = plan.win_w[3 * o], n_taps = plan.win_w[3 * o + 1];
                if (n_taps == 0) {
                    empty(o);
                    continue;
                }
                ptrdiff_t c = first;
                if constexpr (std::is_same<T, float>::value)
                    c += simd::span_argmax_f32(row + first, n_taps);
                else
                    c += simd::span_argmax_f64(row + first, n_taps);
                out_row[o] = row[c];
                index_row[o] = static_cast<I>(flat_index(offsets[0] + c, plan, l));
            }
            return;
        }
    }
    if constexpr (std::is_same<T, float>::value) {
        if (plan.bins_by_window) {
            const bool direct = std::is_same<I, int64_t>::value && plan.row_major;
            if (simd::bins_argmax_f32(plane, offsets, n_rows, plan.in_w, plan.win_w.data(),
                                      plan.out_w, out_row, positions,
                                      direct ? reinterpret_cast<int64_t *>(index_row) : nullptr,
                                      l.index_base) == 0) {
                if (!direct)
                    for (ptrdiff_t o = 0; o < plan.out_w; o++)
                        index_row[o] = static_cast<I>(flat_index(positions[o], plan, l));
                return;
            }
            // a NaN (or +inf and -inf in a column): the fold below takes the
            // row again, with the exact rule where a window holds the NaN
        }
        simd::fold_rows_argmax_f32(plane, offsets, n_rows, col, col_row, plan.in_w);
    } else {
        const T *row = plane + offsets[0];
        for (ptrdiff_t i = 0; i < plan.in_w; i++) {
            col[i] = row[i];
            col_row[i] = 0;
        }
        for (ptrdiff_t r = 1; r < n_rows; r++) {
            row = plane + offsets[r];
            for (ptrdiff_t i = 0; i < plan.in_w; i++) {
                const T value = row[i];
                const bool take = (value > col[i]) | (value != value);
                col[i] = take ? value : col[i];
                col_row[i] = take ? static_cast<int32_t>(r) : col_row[i];
            }
        }
    }
    for (ptrdiff_t o = 0; o < plan.out_w; o++) {
        const int64_t first = plan.win_w[3 * o], n_taps = plan.win_w[3 * o + 1];
        if (n_taps == 0) {
            empty(o);
            continue;
        }
        if constexpr (std::is_same<T, float>::value) {
            // windows of up to 8 columns: the same choice in one vector
            if (vector_bins && n_taps <= 8) {
                const ptrdiff_t c =
                    simd::window_argmax8_f32(col, col_row, plan.in_w, first, n_taps);
                if (c >= 0) {
                    out_row[o] = col[c];
                    index_row[o] = static_cast<I>(flat_index(offsets[col_row[c]] + c, plan, l));
                    continue;
                }
            }
        }
        // the maximum by a compare-select chain, then the smallest (rank,
        // column) holding it as one int64 key: no branch depends on the data
        // (mispredicted branches cost more than both passes); a window with a
        // NaN takes the exact loop below
        T best = col[first];
        bool any_nan = best != best;
        for (int64_t t = 1; t < n_taps; t++) {
            const T value = col[first + t * plan.dil_w];
            best = value > best ? value : best;
            any_nan = any_nan | (value != value);
        }
        int32_t best_r;
        ptrdiff_t best_c;
        if (!any_nan) {
            int64_t best_key = std::numeric_limits<int64_t>::max();
            for (int64_t t = 0; t < n_taps; t++) {
                const ptrdiff_t c = first + t * plan.dil_w;
                const int64_t key = (static_cast<int64_t>(col_row[c]) << 32) | c;
                best_key = (col[c] == best) & (key < best_key) ? key : best_key;
            }
            best_r = static_cast<int32_t>(best_key >> 32);
            best_c = static_cast<ptrdiff_t>(best_key - (static_cast<int64_t>(best_r) << 32));
            best = col[best_c];  // that element's own value: -0.0 == +0.0 above
        } else {
            best = col[first];
            best_r = col_row[first];
            best_c = first;
            for (int64_t t = 1; t < n_taps; t++) {
                const ptrdiff_t c = first + t * plan.dil_w;
                const T value = col[c];
                const int32_t rank = col_row[c];
                const bool value_nan = value != value, best_nan = best != best;
                bool take;
                if (best_nan)
                    take = value_nan && rank >= best_r;
                else if (value_nan)
                    take = true;
                else
                    take = value > best || (value == best && rank < best_r);
                if (take) {
                    best = value;
                    best_r = rank;
                    best_c = c;
                }
            }
        }
        out_row[o] = best;
        index_row[o] = static_cast<I>(flat_index(offsets[best_r] + best_c, plan, l));
    }
}

// argmax_row_f32 (n_out outputs from row0, the tap at in-plane offset
// row_offset) with its indices in index_row: written by the kernel itself
// when they are int64 and row-major, else through the int64 scratch (n_out
// long) and flat_index.
template <class I>
inline void vector_row(const float *row0, float *out, I *index_row, int64_t *scratch,
                       ptrdiff_t n_out, int kh, int stride, int k, int32_t row_offset,
                       const Plan &plan, const Layout &l, bool left) {
    if constexpr (std::is_same<I, int64_t>::value) {
        if (plan.row_major) {
            simd::argmax_row_f32(row0, plan.in_w, out, index_row, n_out, kh, stride, k, row_offset,
                                 l.index_base, left);
            return;
        }
    }
    simd::argmax_row_f32(row0, plan.in_w, out, scratch, n_out, kh, stride, k, row_offset, 0, left);
    for (ptrdiff_t o = 0; o < n_out; o++)
        index_row[o] = static_cast<I>(flat_index(scratch[o], plan, l));
}

// Values and flat indices of output row (od, oh) and, where the vector
// argmax takes them with int64 row-major indices, of up to max_rows - 1
// following rows of the slice whose windows have as many rows, one stride
// lower each (one kernel call for them); returns the number of rows done.
template <class T, class I>
inline ptrdiff_t rows(const T *plane, T *out_row, I *index_row, int32_t *pos, T *col,
                      int32_t *col_row, int64_t *offsets, const Plan &plan, ptrdiff_t od,
                      ptrdiff_t oh, const Layout &l, ptrdiff_t max_rows) {
    ptrdiff_t n_run = 1, row_step = 0;
    const int64_t *wd = plan.win_d.data() + 3 * od;
    const int64_t *wh = plan.win_h.data() + 3 * oh;
    ptrdiff_t lo = plan.interior_lo, hi = plan.interior_hi;
    // vertical-first by the tables unless enough outputs lie in the interior
    // to fill vector registers with the taps-outer argmax below
    if (hi - lo < 16) {
        table_row(plane, out_row, index_row, col, col_row, offsets,
                  reinterpret_cast<int64_t *>(pos), plan, od, oh, l);
        return 1;
    }
    if (wd[1] == 0 || wh[1] == 0 || hi <= lo) {
        edges(plane, out_row, index_row, plan, od, oh, 0, plan.out_w, l);
        return 1;
    }
    const bool vector_rows = std::is_same<T, float>::value && wd[1] == 1 && plan.dil_h == 1 &&
                             plan.dil_w == 1 &&
                             simd::vector_rows_ok(hi - lo, plan.stride_w, plan.kernel_w);
    // output 0 of 3-tap windows with W padding 1 joins the vector blocks
    // (simd::taps8s_left)
    const bool left =
        vector_rows && lo == 1 && simd::left_edge_ok(hi, plan.stride_w, plan.kernel_w, plan.pad_w);
    if (std::is_same<T, float>::value && vector_rows && std::is_same<I, int64_t>::value &&
        oh + 1 < plan.out_h && plan.row_major) {
        row_step = wh[3] - wh[0];
        while (n_run < max_rows && oh + n_run < plan.out_h && wh[3 * n_run + 1] == wh[1] &&
               wh[3 * n_run] == wh[0] + n_run * row_step)
            n_run += 1;
    }
    for (ptrdiff_t r = 0; r < n_run; r++) {
        if (lo > 0 && !left)
            edges(plane, out_row + r * plan.out_w, index_row + r * plan.out_w, plan, od, oh + r, 0,
                  lo, l);
        if (hi < plan.out_w)
            edges(plane, out_row + r * plan.out_w, index_row + r * plan.out_w, plan, od, oh + r, hi,
                  plan.out_w, l);
    }
    if constexpr (std::is_same<T, float>::value) {
        if (vector_rows) {
            // consecutive window rows: the vector argmax takes them all
            if (left)
                lo = 0;
            const int32_t row_offset = static_cast<int32_t>(
                (wd[0] * plan.in_h + wh[0]) * plan.in_w + lo * plan.stride_w - plan.pad_w);
            const int kh = static_cast<int>(wh[1]), s = static_cast<int>(plan.stride_w);
            const int k = static_cast<int>(plan.kernel_w);
            if constexpr (std::is_same<I, int64_t>::value) {
                if (n_run > 1) {
                    simd::argmax_rows_f32(
                        plane + row_offset, plan.in_w, out_row + lo, index_row + lo, hi - lo, kh, s,
                        k, row_offset, l.index_base, left, n_run, row_step * plan.in_w, plan.out_w);
                    return n_run;
                }
            }
            vector_row(plane + row_offset, out_row + lo, index_row + lo,
                       reinterpret_cast<int64_t *>(pos), hi - lo, kh, s, k, row_offset, plan, l,
                       left);
            return 1;
        }
    }
    bool first_row = true;
    for (ptrdiff_t td = 0; td < wd[1]; td++) {
        const int64_t in_d_idx = wd[0] + td * plan.dil_d;
        for (ptrdiff_t th = 0; th < wh[1]; th++) {
            const int64_t in_h_idx = wh[0] + th * plan.dil_h;
            const int32_t row_offset =
                static_cast<int32_t>((in_d_idx * plan.in_h + in_h_idx) * plan.in_w);
            interior_row(plane + row_offset, out_row, pos, plan, first_row, row_offset);
            first_row = false;
        }
    }
    // index_row[lo:hi] from the row-major in-plane offsets pos[lo:hi]
    if (plan.row_major) {
        for (ptrdiff_t o = lo; o < hi; o++)  // a plain (vectorised) add
            index_row[o] = static_cast<I>(l.index_base + pos[o]);
    } else {
        for (ptrdiff_t o = lo; o < hi; o++)
            index_row[o] = static_cast<I>(flat_index(pos[o], plan, l));
    }
    return 1;
}

template <class I>
OVPOOL_INLINE void reduce_indices(const Plan &plan, I *index, int64_t n) {
    if (plan.spec.index_modulo > 0)
        for (int64_t i = 0; i < n; i++)
            index[i] = static_cast<I>(index[i] % plan.spec.index_modulo);
}

}  // namespace argmax

// The work unit of Path::argmax (Tiles: Plan::argmax_tiles), native types.
template <class T, class I, bool Tiles>
void argmax_unit(const Plan &plan, const Call &call, int64_t unit, char *scratch) {
    const T *x = static_cast<const T *>(call.x);
    T *out = static_cast<T *>(call.out);
    I *index = static_cast<I *>(call.indices);
    int32_t *pos = scratch_part<int32_t>(scratch, plan.scratch.pos);
    T *col = scratch_part<T>(scratch, plan.scratch.col);
    int32_t *col_row = reinterpret_cast<int32_t *>(reinterpret_cast<char *>(col) +
                                                   detail::rank_offset(plan.in_w, sizeof(T)));
    int64_t *offsets = scratch_part<int64_t>(scratch, plan.scratch.offsets);
    const int64_t in_plane = plan.in_plane(), out_plane = plan.out_plane();
    for_unit_rows(
        plan, call.schedule, unit,
        [&](int64_t q, int64_t row, int64_t od, int64_t oh, int64_t left) -> int64_t {
            const argmax::Layout l{(q % plan.spec.planes_per_index_space) * in_plane,
                                   plan.index_stride_d, plan.index_stride_h, plan.index_stride_w};
            const T *src = x + q * in_plane;
            const int64_t at = q * out_plane + row * plan.out_w;
            int64_t n = 1;
            if constexpr (Tiles && std::is_same<T, float>::value) {
                const int64_t kh = plan.tile_kh, kw = plan.tile_kw;
                const int64_t tile_row = (od * plan.in_h + oh * kh) * plan.in_w;
                if (std::is_same<I, int64_t>::value && plan.row_major) {
                    // the unit's rows in this depth slice, in one call
                    n = std::min(left, plan.out_h - oh);
                    simd::argmax_rows_f32(src + tile_row, plan.in_w, out + at,
                                          reinterpret_cast<int64_t *>(index + at), plan.out_w,
                                          static_cast<int>(kh), static_cast<int>(kw),
                                          static_cast<int>(kw), static_cast<int32_t>(tile_row),
                                          l.index_base, 0, n, kh * plan.in_w, plan.out_w);
                } else {
                    argmax::vector_row(
                        src + tile_row, out + at, index + at, reinterpret_cast<int64_t *>(pos),
                        plan.out_w, static_cast<int>(kh), static_cast<int>(kw),
                        static_cast<int>(kw), static_cast<int32_t>(tile_row), plan, l, false);
                }
            } else {
                n = argmax::rows(src, out + at, index + at, pos, col, col_row, offsets, plan, od,
                                 oh, l, left);
            }
            argmax::reduce_indices(plan, index + at, n * plan.out_w);
            return n;
        });
}

// float16 / bfloat16: each plane is widened once into per-thread float32
// scratch (the plane a thread last widened is kept for its next unit).
template <bool Bf16, class I>
void half_argmax_unit(const Plan &plan, const Call &call, int64_t unit, char *scratch) {
    const uint16_t *x = static_cast<const uint16_t *>(call.x);
    uint16_t *out = static_cast<uint16_t *>(call.out);
    I *index = static_cast<I *>(call.indices);
    float *plane_f = scratch_part<float>(scratch, plan.scratch.rows);
    float *out_row = scratch_part<float>(scratch, plan.scratch.out_row);
    int64_t *widened = scratch_part<int64_t>(scratch, plan.scratch.state);
    int32_t *pos = scratch_part<int32_t>(scratch, plan.scratch.pos);
    float *col = scratch_part<float>(scratch, plan.scratch.col);
    int32_t *col_row = reinterpret_cast<int32_t *>(reinterpret_cast<char *>(col) +
                                                   detail::rank_offset(plan.in_w, sizeof(float)));
    int64_t *offsets = scratch_part<int64_t>(scratch, plan.scratch.offsets);
    const int64_t in_plane = plan.in_plane(), out_plane = plan.out_plane();
    const int64_t q = unit / call.schedule.blocks_per_plane;
    if (*widened != q) {
        simd::widen(x + q * in_plane, plane_f, in_plane, Bf16);
        *widened = q;
    }
    for_unit_rows(plan, call.schedule, unit,
                  [&](int64_t, int64_t row, int64_t od, int64_t oh, int64_t) -> int64_t {
                      const argmax::Layout l{(q % plan.spec.planes_per_index_space) * in_plane,
                                             plan.index_stride_d, plan.index_stride_h,
                                             plan.index_stride_w};
                      const int64_t at = q * out_plane + row * plan.out_w;
                      argmax::rows(plane_f, out_row, index + at, pos, col, col_row, offsets, plan,
                                   od, oh, l, 1);
                      simd::narrow(out_row, out + at, plan.out_w, Bf16);
                      argmax::reduce_indices(plan, index + at, plan.out_w);
                      return 1;
                  });
}

OVPOOL_END
