// Vector row kernels of averages, Lp sums and maxima (float32).
//
// Each computes whole output rows with the same operations, in the same
// order, as the separable passes of separable.hpp (so the same bits), where
// gcc's own vectorisation of those passes leaves time on the table: the
// vertical maximum of a few rows with one NaN check per row, 3-wide windows
// at stride 1 or 2 (a run of rows per call), and adaptive averages whose bins
// are summed in lanes (wide bins) or eight output rows at a time (narrow
// bins). Where a build lacks AVX2 a kernel either runs its scalar twin or
// returns 0 so that the caller takes the separable passes.
#pragma once

#include "reduce.hpp"

OVPOOL_BEGIN
namespace simd {

// col[i] = max over the n_rows >= 1 rows plane + offsets[r] of element i,
// with plain maxps and no NaN rule: returns 1 when any element read was NaN,
// and the caller then redoes the row with the exact rule. One check per row
// instead of a blend per element: a 3-row pass does about half the work.
// Rows go 3 at a time; a group of fewer repeats its last row, and the last
// vector block overlaps the one before it (max is idempotent). float32 rows
// or, with half set (a constant; F16C builds only), float16 rows converted in
// registers: the same maxps chain on the same values.
OVPOOL_INLINE int vmax_rows_any(const void *plane, const int64_t *offsets, ptrdiff_t n_rows,
                                float *col, ptrdiff_t n, int half) {
    int nan = 0;
    for (ptrdiff_t r = 0; r < n_rows; r += 3) {
        ptrdiff_t m = n_rows - r < 3 ? n_rows - r : 3;
        const void *a = at(plane, offsets[r], half);
        const void *b = at(plane, offsets[r + (m > 1)], half);
        const void *c = at(plane, offsets[r + m - 1], half);
        int first = r == 0;
        ptrdiff_t i = 0;
#if defined(__AVX2__)
        if (n >= 8) {
            __m256 u = _mm256_setzero_ps();
            for (ptrdiff_t blk = 0; blk * 8 < n; blk++) {
                i = block_start(blk, 8, n);
                __m256 va = load8(a, i, half), vb = load8(b, i, half);
                __m256 vc = load8(c, i, half);
                u = _mm256_or_ps(u, _mm256_cmp_ps(va, vb, _CMP_UNORD_Q));
                u = _mm256_or_ps(u, _mm256_cmp_ps(vc, vc, _CMP_UNORD_Q));
                __m256 v = _mm256_max_ps(_mm256_max_ps(va, vb), vc);
                if (!first)
                    v = _mm256_max_ps(v, _mm256_loadu_ps(col + i));
                _mm256_storeu_ps(col + i, v);
            }
            nan |= _mm256_movemask_ps(u) != 0;
            i = n;
        }
#elif defined(__SSE2__)
        if (n >= 4) {
            __m128 u = _mm_setzero_ps();
            for (ptrdiff_t blk = 0; blk * 4 < n; blk++) {
                i = block_start(blk, 4, n);
                __m128 va = load4(a, i, half), vb = load4(b, i, half);
                __m128 vc = load4(c, i, half);
                u = _mm_or_ps(u, _mm_cmpunord_ps(va, vb));
                u = _mm_or_ps(u, _mm_cmpunord_ps(vc, vc));
                __m128 v = _mm_max_ps(_mm_max_ps(va, vb), vc);
                if (!first)
                    v = _mm_max_ps(v, _mm_loadu_ps(col + i));
                _mm_storeu_ps(col + i, v);
            }
            nan |= _mm_movemask_ps(u) != 0;
            i = n;
        }
#endif
        for (; i < n; i++) {
            float x = load1(a, i, half), y = load1(b, i, half);
            float z = load1(c, i, half);
            float v = x > y ? x : y;
            v = v > z ? v : z;
            if (!first)
                v = v > col[i] ? v : col[i];
            col[i] = v;
            nan |= (x != x) | (y != y) | (z != z);
        }
    }
    return nan;
}

inline int vmax_rows_f32(const float *plane, const int64_t *offsets, ptrdiff_t n_rows, float *col,
                         ptrdiff_t n) {
    return vmax_rows_any(plane, offsets, n_rows, col, n, 0);
}

// The same of float16 rows converted in registers, only where kF16cRows
// (k3 s2 widened every input row 1.5 times into scratch); returns 1 (the
// caller widens the rows and takes the exact path) when the rows hold a NaN
// or the build converts in scratch.
inline int vmax_rows_f16(const uint16_t *plane, const int64_t *offsets, ptrdiff_t n_rows,
                         float *col, ptrdiff_t n) {
#if defined(__F16C__)
    return vmax_rows_any(plane, offsets, n_rows, col, n, 1);
#else
    (void)plane;
    (void)offsets;
    (void)n_rows;
    (void)col;
    (void)n;
    return 1;
#endif
}

// Column sums (squares: lp2) of n <= 3 rows a, b, c at column i, in 8 lanes
// or one; the order of the vertical pass (vsum, vsum_lp).
#if defined(__AVX__)
OVPOOL_INLINE __m256 col_sums8(const float *a, const float *b, const float *c, ptrdiff_t n,
                               ptrdiff_t i, int lp2) {
    __m256 v = _mm256_setzero_ps(), t;
    if (n >= 1) {
        t = _mm256_loadu_ps(a + i);
        v = lp2 ? _mm256_mul_ps(t, t) : t;
    }
    if (n >= 2) {
        t = _mm256_loadu_ps(b + i);
        v = _mm256_add_ps(v, lp2 ? _mm256_mul_ps(t, t) : t);
    }
    if (n >= 3) {
        t = _mm256_loadu_ps(c + i);
        v = _mm256_add_ps(v, lp2 ? _mm256_mul_ps(t, t) : t);
    }
    return v;
}
#endif

OVPOOL_INLINE float col_sum1(const float *a, const float *b, const float *c, ptrdiff_t n,
                             ptrdiff_t i, int lp2) {
    float v = 0.0f;
    if (n >= 1)
        v = lp2 ? a[i] * a[i] : a[i];
    if (n >= 2)
        v = v + (lp2 ? b[i] * b[i] : b[i]);
    if (n >= 3)
        v = v + (lp2 ? c[i] * c[i] : c[i]);
    return v;
}

#if defined(__AVX2__)
// One output row of 3-tap windows at stride 2 with no padding along W, from
// the window rows themselves: the column sums of 8 outputs' 17 columns stay
// in registers (two vectors and the 17th as a scalar) and are deinterleaved
// there, instead of being stored and read back at offsets 2o, 2o + 1, 2o + 2
// (loads that span two stores of the vertical pass). out[o] = (c[2o] +
// c[2o+1]) + c[2o+2] as in hsum_k, then sqrt or the divide: the same bits.
// Reads columns 0 .. 2 out_w of each row (needs 2 out_w + 1 <= in_w), the
// last block overlapping the one before it.
OVPOOL_INLINE void sum_row_s2k3(const float *a, const float *b, const float *c, ptrdiff_t n,
                                float *out, ptrdiff_t out_w, float row_div, const float *div_w,
                                int lp2) {
    const __m256i next_even = _mm256_setr_epi32(1, 4, 3, 6, 5, 2, 7, 0);
    const __m256 row_divs = _mm256_set1_ps(row_div);
    for (ptrdiff_t blk = 0; blk * 8 < out_w; blk++) {
        ptrdiff_t o = block_start(blk, 8, out_w), i = 2 * o;
        __m256 lo = col_sums8(a, b, c, n, i, lp2);
        __m256 hi = col_sums8(a, b, c, n, i + 8, lp2);
        __m256 last = _mm256_set1_ps(col_sum1(a, b, c, n, i + 16, lp2));
        // outputs in lanes 0 1 4 5 2 3 6 7
        __m256 even = _mm256_shuffle_ps(lo, hi, 0x88), odd = _mm256_shuffle_ps(lo, hi, 0xdd);
        __m256 even2 = _mm256_permutevar8x32_ps(_mm256_blend_ps(even, last, 0x01), next_even);
        __m256 v = unpermute8(_mm256_add_ps(_mm256_add_ps(even, odd), even2), 2);
        v = lp2 ? _mm256_sqrt_ps(v)
                : _mm256_div_ps(v, _mm256_mul_ps(row_divs, _mm256_loadu_ps(div_w + o)));
        _mm256_storeu_ps(out + o, v);
    }
}
#endif

// Average (lp2 clear) or L2 norm (lp2 set: LpPool p = 2) of windows 3 taps
// wide at stride 1 or 2 along W (Inception's 3x3 s1 AveragePool, 3x3 s2
// ones), float32, for n_rows consecutive output rows of one 2D slice: row
// r's window rows are plane + (win_h[3r] + t) * in_w for t < win_h[3r+1] <= 3,
// its divisor (float)(div_d * win_h[3r+2]) * div_w[o]. buf is the per-thread
// padded column buffer (zeros outside buf[pad_w .. pad_w + in_w)). The same
// operations in the same order as the separable passes, so the same bits;
// one call per slice instead of one per row (the per-row calls cost more
// than the rows' arithmetic on a 35x35 plane). Stride 2's horizontal pass is
// gcc's loop over the stored column sums (a vector form reading them back
// measured slower, see hmax_s2k3_f32), except rows with no padding along W
// and 8+ outputs: sum_row_s2k3 keeps their column sums in registers (LpPool
// 3x3 s2 on 16x64x56x56 at 2 threads 0.36 -> 0.32 ms; average 3x3 s2 without
// pads 0.36 -> 0.25 ms).
OVPOOL_INLINE void sum_rows_k3_any(const float *plane, ptrdiff_t in_w, const int64_t *win_h,
                                   ptrdiff_t n_rows, float *out, ptrdiff_t out_w, float *buf,
                                   ptrdiff_t pad_w, const float *div_w, int64_t div_d, int stride,
                                   int lp2) {
    float *col = buf + pad_w;
    for (ptrdiff_t r = 0; r < n_rows; r++, out += out_w) {
        const int64_t *wh = win_h + 3 * r;
        ptrdiff_t n = wh[1], i = 0;
        const float *a = plane + wh[0] * in_w;  // rows past the n-th are not formed
        const float *b = n >= 2 ? a + in_w : a, *c = n >= 3 ? b + in_w : b;
        float row_div = static_cast<float>(div_d * wh[2]);
#if defined(__AVX2__)
        if (stride == 2 && pad_w == 0 && out_w >= 8 && 2 * out_w + 1 <= in_w) {
            sum_row_s2k3(a, b, c, n, out, out_w, row_div, div_w, lp2);
            continue;
        }
#endif
#if defined(__AVX__)
        if (in_w >= 8) {
            for (ptrdiff_t blk = 0; blk * 8 < in_w; blk++) {
                i = block_start(blk, 8, in_w);
                _mm256_storeu_ps(col + i, col_sums8(a, b, c, n, i, lp2));
            }
            i = in_w;
        }
#endif
        for (; i < in_w; i++)  // (reads only the n rows: an empty window has none)
            col[i] = col_sum1(a, b, c, n, i, lp2);
        ptrdiff_t o = 0;
        if (stride == 2) {
            for (; o < out_w; o++) {
                float sum = buf[2 * o] + buf[2 * o + 1] + buf[2 * o + 2];
                out[o] = lp2 ? sqrtf(sum) : sum / (row_div * div_w[o]);
            }
            continue;
        }
#if defined(__AVX__)
        if (out_w >= 8) {
            __m256 row_divs = _mm256_set1_ps(row_div);
            for (ptrdiff_t blk = 0; blk * 8 < out_w; blk++) {
                o = block_start(blk, 8, out_w);
                __m256 v = _mm256_add_ps(_mm256_loadu_ps(buf + o), _mm256_loadu_ps(buf + o + 1));
                v = _mm256_add_ps(v, _mm256_loadu_ps(buf + o + 2));
                v = lp2 ? _mm256_sqrt_ps(v)
                        : _mm256_div_ps(v, _mm256_mul_ps(row_divs, _mm256_loadu_ps(div_w + o)));
                _mm256_storeu_ps(out + o, v);
            }
            o = out_w;
        }
#endif
        for (; o < out_w; o++) {
            float sum = buf[o] + buf[o + 1] + buf[o + 2];
            out[o] = lp2 ? sqrtf(sum) : sum / (row_div * div_w[o]);
        }
    }
}

inline void sum_rows_k3_f32(const float *plane, ptrdiff_t in_w, const int64_t *win_h,
                            ptrdiff_t n_rows, float *out, ptrdiff_t out_w, float *buf,
                            ptrdiff_t pad_w, const float *div_w, int64_t div_d, int stride,
                            bool lp2) {
    if (lp2)
        sum_rows_k3_any(plane, in_w, win_h, n_rows, out, out_w, buf, pad_w, div_w, div_d, stride,
                        1);
    else
        sum_rows_k3_any(plane, in_w, win_h, n_rows, out, out_w, buf, pad_w, div_w, div_d, stride,
                        0);
}

// Horizontal max of 3-tap windows at stride 2 (the ResNet stem) over a
// NaN-free float32 row: out[o] = max of buf[2o], buf[2o + 1], buf[2o + 2],
// with the same operations as the scalar loop of hmax_k, so the same bits,
// in 8 lanes with the last block overlapping; reads buf[0 .. 2 n_out].
// Returns 0 (nothing done) for rows of fewer than 8 outputs or without AVX2.
// The same for sums measured 7% slower than gcc's scalar loop (avg 3x3 s2 on
// 16x128x56x56 at 1 thread: its loads span two of the vertical pass's
// stores; sum_row_s2k3 avoids the store where W has no padding), the maxima
// 5-8% faster.
inline int hmax_s2k3_f32(const float *buf, float *out, ptrdiff_t n_out) {
#if defined(__AVX2__)
    if (n_out < 8)
        return 0;
    for (ptrdiff_t blk = 0; blk * 8 < n_out; blk++) {
        ptrdiff_t o = block_start(blk, 8, n_out);
        __m256 v[4];
        taps8s(buf + 2 * o, 2, 3, v);
        __m256 acc = _mm256_max_ps(_mm256_max_ps(v[0], v[1]), v[2]);
        _mm256_storeu_ps(out + o, unpermute8(acc, 2));
    }
    return 1;
#else
    (void)buf;
    (void)out;
    (void)n_out;
    return 0;
#endif
}

// Maximum of windows 3 taps wide at stride 1 or 2 along W (the ResNet stem's
// 3x3 s2, 3x3 s1), or 2 wide at stride 1 (k = 2), float32, for up to n_rows
// consecutive output rows of one 2D slice: row r's window rows are plane +
// (win_h[3r] + t) * in_w for t < win_h[3r+1] <= 3. buf is the per-thread
// padded column buffer (-inf outside buf[pad_w .. pad_w + in_w)). The same
// operations as the row path (max_rows_exact, then hmax), so the same bits;
// one call per slice instead of one per row. Returns the number of rows done:
// it stops before a row whose window rows hold a NaN or that has none, which
// the caller's row path takes with the exact rule. Taken without software
// prefetch only: on inputs beyond L3 (the stem at batch 16, prefetched) it
// measured 12% slower than the row path, for reasons not found. 2-wide
// windows took twice the time of 3-wide ones through the run's vertical
// spans and the general horizontal pass (max 2x2 s1 on 160x80x80 at 1
// thread: 0.94 ns an element against 0.47 for 3x3 s1).
inline ptrdiff_t max_rows_k3_f32(const float *plane, ptrdiff_t in_w, const int64_t *win_h,
                                 ptrdiff_t n_rows, float *out, ptrdiff_t out_w, float *buf,
                                 ptrdiff_t pad_w, int stride, int k) {
    float *col = buf + pad_w;
    for (ptrdiff_t r = 0; r < n_rows; r++, out += out_w) {
        const int64_t *wh = win_h + 3 * r;
        int64_t offsets[3];
        ptrdiff_t n = wh[1], o = 0;
        for (ptrdiff_t t = 0; t < n; t++)
            offsets[t] = (wh[0] + t) * in_w;
        if (n == 0 || vmax_rows_f32(plane, offsets, n, col, in_w))
            return r;
        if (stride == 2) {
            if (hmax_s2k3_f32(buf, out, out_w))
                continue;
        }
#if defined(__AVX2__)
        else if (out_w >= 8) {
            for (ptrdiff_t blk = 0; blk * 8 < out_w; blk++) {
                o = block_start(blk, 8, out_w);
                __m256 v = _mm256_max_ps(_mm256_loadu_ps(buf + o), _mm256_loadu_ps(buf + o + 1));
                if (k == 3)
                    v = _mm256_max_ps(v, _mm256_loadu_ps(buf + o + 2));
                _mm256_storeu_ps(out + o, v);
            }
            o = out_w;
        }
#endif
        for (; o < out_w; o++) {  // hmax_k's chain
            const float *taps = buf + o * stride;
            float v = taps[0] > taps[1] ? taps[0] : taps[1];
            out[o] = k == 2 || v > taps[2] ? v : taps[2];
        }
    }
    return n_rows;
}

// Output rows of an adaptive average (windows along W from a table:
// win_w[3 o] the first column, win_w[3 o + 1] the taps), eight windows at a
// time. Output row j (0 <= j < n_out_rows) pools the input rows win_h[3 j] ..
// + win_h[3 j + 1] - 1 of the depth slices x + t * d_stride, t < n_d (row
// length in_w). Each window sums into 8 lanes over all its rows (slice by
// slice, top to bottom) before a single fold, the one of fold8x8: lane j of a
// window adds its taps j, j + 8, ... of each row (a last partial block
// masked: its missing lanes add +0), from +0. Then out[o] = sum / (div_d *
// win_h[3 j + 2] * div_w[o]), as the separable passes finish a row. The
// separable passes store the column sums and read them back at unaligned
// offsets, then fold each window alone: adaptive 50 -> 7 took ~1500 cycles a
// plane that way, ~700 this way. Any taps >= 0 give the right sums; the
// planner keeps it to windows of 8 taps or more over 2 rows or more, where it
// is faster (RowKernel::wide_bins). Under eight windows the missing lanes
// repeat the last window and are not stored.
inline void adaptive_rows_f32(const float *x, ptrdiff_t n_d, ptrdiff_t d_stride, ptrdiff_t in_w,
                              const int64_t *win_h, ptrdiff_t n_out_rows, const int64_t *win_w,
                              ptrdiff_t out_w, float *out, ptrdiff_t out_stride, const float *div_w,
                              int64_t div_d) {
#if defined(__AVX2__)
    for (ptrdiff_t blk = 0; blk * 8 < out_w; blk++) {
        const ptrdiff_t o = out_w >= 8 ? block_start(blk, 8, out_w) : 0;
        // whole blocks of eight taps every window has, then n_part blocks,
        // masked per window (one for bins that differ by under 8 taps)
        ptrdiff_t first[8], taps[8], full = PTRDIFF_MAX, n_part = 0;
        float d[8];
        for (int l = 0; l < 8; l++) {
            const ptrdiff_t at_o = o + l < out_w ? o + l : out_w - 1;
            first[l] = static_cast<ptrdiff_t>(win_w[3 * at_o]);
            taps[l] = static_cast<ptrdiff_t>(win_w[3 * at_o + 1]);
            d[l] = div_w[at_o];
            if ((taps[l] & ~static_cast<ptrdiff_t>(7)) < full)
                full = taps[l] & ~static_cast<ptrdiff_t>(7);
        }
        for (int l = 0; l < 8; l++)
            if ((taps[l] - full + 7) / 8 > n_part)
                n_part = (taps[l] - full + 7) / 8;
        const __m256 div_o = _mm256_setr_ps(d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]);
        for (ptrdiff_t j = 0; j < n_out_rows; j++) {
            __m256 v[8];
            for (int l = 0; l < 8; l++)
                v[l] = _mm256_setzero_ps();
            for (ptrdiff_t t = 0; t < n_d; t++) {
                const float *row = x + t * d_stride + win_h[3 * j] * in_w;
                for (ptrdiff_t r = 0; r < win_h[3 * j + 1]; r++, row += in_w) {
                    for (ptrdiff_t i = 0; i < full; i += 8)
                        for (int l = 0; l < 8; l++)
                            v[l] = _mm256_add_ps(v[l], _mm256_loadu_ps(row + first[l] + i));
                    for (ptrdiff_t b = full; b < full + 8 * n_part; b += 8)
                        for (int l = 0; l < 8; l++) {
                            const ptrdiff_t left = taps[l] - b;
                            v[l] = _mm256_add_ps(
                                v[l], _mm256_maskload_ps(row + first[l] + b,
                                                         first_lanes(left < 0   ? 0
                                                                     : left > 8 ? 8
                                                                                : left)));
                        }
                }
            }
            const float row_div = static_cast<float>(div_d * win_h[3 * j + 2]);
            __m256 sums = _mm256_div_ps(fold8x8(v), _mm256_mul_ps(_mm256_set1_ps(row_div), div_o));
            if (out_w >= 8) {
                _mm256_storeu_ps(out + j * out_stride + o, sums);
            } else {
                float lanes[8];
                _mm256_storeu_ps(lanes, sums);
                for (ptrdiff_t l = 0; l < out_w; l++)
                    out[j * out_stride + l] = lanes[l];
            }
        }
    }
#else
    // the same sums, a window at a time: the lanes and the fold above, the
    // masked lanes skipped (adding +0 to a sum that started from +0 changes
    // nothing), so the baseline build gives the same bits
    for (ptrdiff_t o = 0; o < out_w; o++) {
        const ptrdiff_t first = static_cast<ptrdiff_t>(win_w[3 * o]);
        const ptrdiff_t taps = static_cast<ptrdiff_t>(win_w[3 * o + 1]);
        for (ptrdiff_t j = 0; j < n_out_rows; j++) {
            float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (ptrdiff_t t = 0; t < n_d; t++) {
                const float *row = x + t * d_stride + win_h[3 * j] * in_w + first;
                for (ptrdiff_t r = 0; r < win_h[3 * j + 1]; r++, row += in_w)
                    for (ptrdiff_t i = 0; i < taps; i++)
                        lane[i & 7] += row[i];
            }
            for (int l = 0; l < 4; l++)
                lane[l] += lane[l + 4];
            const float row_div = static_cast<float>(div_d * win_h[3 * j + 2]);
            out[j * out_stride + o] =
                ((lane[0] + lane[2]) + (lane[1] + lane[3])) / (row_div * div_w[o]);
        }
    }
#endif
}

// Up to eight output rows of an adaptive average whose W bins (a table) are
// under 8 taps, from one 2D plane x (rows of in_w >= 8; output row j pools
// the rows win_h[3 j] .. + win_h[3 j + 1] - 1): the same sums as the
// separable passes (the column sums in row order, each bin from 0 in tap
// order, divided by div_d * win_h[3 j + 2] * div_w[o]), with the eight output
// rows in the lanes of a vector. The column sums of a block of eight columns
// for the eight rows are transposed in registers into scratch (in_w x 8
// floats), and each bin adds its columns as vectors: no scalar chain per
// output, no store read back at an unaligned offset. scratch holds 8 (in_w +
// out_w) floats. Returns 0 (the caller's separable passes) without AVX2 or
// outside those bounds.
inline int adaptive_narrow_f32(const float *x, ptrdiff_t in_w, const int64_t *win_h,
                               ptrdiff_t n_out_rows, const int64_t *win_w, ptrdiff_t out_w,
                               float *out, ptrdiff_t out_stride, const float *div_w, int64_t div_d,
                               float *scratch) {
#if defined(__AVX2__)
    if (in_w < 8 || n_out_rows < 1 || n_out_rows > 8)
        return 0;
    float *cols = scratch, *sums = scratch + 8 * in_w;
    // lane j: output row j (the missing lanes repeat the last row)
    const int64_t *wh[8];
    float row_div[8];
    for (int j = 0; j < 8; j++) {
        wh[j] = win_h + 3 * (j < n_out_rows ? j : n_out_rows - 1);
        row_div[j] = static_cast<float>(div_d * wh[j][2]);
    }
    for (ptrdiff_t cb = 0; cb * 8 < in_w; cb++) {
        const ptrdiff_t c = block_start(cb, 8, in_w);
        __m256 v[8];
        for (int j = 0; j < 8; j++) {
            const float *row = x + wh[j][0] * in_w + c;
            __m256 acc = wh[j][1] > 0 ? _mm256_loadu_ps(row) : _mm256_setzero_ps();
            for (int64_t r = 1; r < wh[j][1]; r++)
                acc = _mm256_add_ps(acc, _mm256_loadu_ps(row + r * in_w));
            v[j] = acc;
        }
        transpose8x8(v);
        for (int i = 0; i < 8; i++)
            _mm256_storeu_ps(cols + (c + i) * 8, v[i]);
    }
    const __m256 lanes_div = _mm256_loadu_ps(row_div);
    for (ptrdiff_t o = 0; o < out_w; o++) {
        const float *col = cols + win_w[3 * o] * 8;
        __m256 acc = _mm256_setzero_ps();
        for (int64_t t = 0; t < win_w[3 * o + 1]; t++)
            acc = _mm256_add_ps(acc, _mm256_loadu_ps(col + t * 8));
        _mm256_storeu_ps(sums + o * 8,
                         _mm256_div_ps(acc, _mm256_mul_ps(lanes_div, _mm256_set1_ps(div_w[o]))));
    }
    for (ptrdiff_t j = 0; j < n_out_rows; j++)
        for (ptrdiff_t o = 0; o < out_w; o++)
            out[j * out_stride + o] = sums[o * 8 + j];
    return 1;
#else
    (void)x;
    (void)in_w;
    (void)win_h;
    (void)n_out_rows;
    (void)win_w;
    (void)out_w;
    (void)out;
    (void)out_stride;
    (void)div_w;
    (void)div_d;
    (void)scratch;
    return 0;
#endif
}

// The horizontal pass of any kernel k, stride and dilation d over a float32
// row: out[o] = combine of buf[o * stride + t * d], t < k, in tap order, for
// 8 outputs per register (the last block overlapping the one before it).
// mode 0 sums; 1 maxima of a row known to hold no NaN; 2 maxima with the NaN
// flag of hmax_k (a window with a NaN gives the canonical NaN). The
// operations of the scalar loops in the same order: the same bits. Each tap
// of 8 outputs is one load at stride 1, two loads and a shuffle at stride 2
// (lanes in taps8's kw = 2 order, put back once at the end; no element past
// the last tap is read), a gather otherwise; with `plain`, taps of under 9 at
// strides 3, 4, 5 and 7 take plain loads instead (htaps8_loads). Returns the
// outputs done: all, or 0 for rows of fewer than 8 outputs and builds
// without AVX2.
#if defined(__AVX2__)
// The k taps of 8 outputs combined in tap order by mode (see htaps8_f32),
// tap t's eight values from load(t).
template <class Load>
OVPOOL_INLINE __m256 combine_taps8(ptrdiff_t k, int mode, Load &&load) {
    __m256 acc = load(0);
    if (mode == 0) {
        for (ptrdiff_t t = 1; t < k; t++)
            acc = _mm256_add_ps(acc, load(t));
    } else if (mode == 1) {
        for (ptrdiff_t t = 1; t < k; t++)
            acc = _mm256_max_ps(acc, load(t));
    } else {
        __m256 nan = _mm256_cmp_ps(acc, acc, _CMP_UNORD_Q);
        for (ptrdiff_t t = 1; t < k; t++) {
            const __m256 v = load(t);
            acc = _mm256_max_ps(acc, v);
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        }
        acc = _mm256_blendv_ps(acc, _mm256_set1_ps(NAN), nan);
    }
    return acc;
}

OVPOOL_INLINE __m256 strided8(const float *p, ptrdiff_t stride, __m256i at) {
    if (stride == 1)
        return _mm256_loadu_ps(p);
    if (stride == 2)  // p[0, 2, 8, 10 | 4, 6, 12, 14]
        return _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 7), 0xd8);
    return _mm256_i32gather_ps(p, at, 4);
}

// Strided taps by plain loads: at strides 3, 5 and 7 the stride's vectors
// blended so that each lane holds its element (odd strides put the elements
// r + s * j, j < 8, in distinct lanes) and one permute; at stride 4, four
// loads and three shuffles (lanes in another order, put back once at the
// end). A gather took about three times as long on a row read in place (1D
// max 5 s3 on 32x160x4000: 13.3 -> 3.0 ms at 2 threads); on a buffer just
// written by the vertical pass the loads, which span two of its stores, wait
// for them (max 3x3 s3 p1 on 112x112 planes 1.24x slower), so the callers ask
// for them only on rows read in place and rows of 1024+ elements, whose start
// has left the store buffer by the time it is read (rows of 2000: 0.5x the
// gathers' time). No element past the row's last tap is read: a block whose
// loads would reach past it is left to the gathers.
struct StridedTap {
    ptrdiff_t base;  // elements from the window's first to the first vector
    int phase;       // stride 4: the element of each 4 (r)
    __m256 mask[6];  // odd strides: lanes taken from vector v + 1
    __m256i perm;    // odd strides: lane j <- lane (r + s * j) % 8
};

OVPOOL_INLINE void strided_tap(StridedTap &tap, ptrdiff_t u, ptrdiff_t s) {
    const ptrdiff_t r = u % s;
    tap.base = u - r;
    tap.phase = static_cast<int>(r);
    if (s % 2 == 0)
        return;
    alignas(32) int32_t perm[8];
    alignas(32) int32_t mask[6][8] = {};
    for (ptrdiff_t j = 0; j < 8; j++) {
        const ptrdiff_t e = r + s * j;
        perm[j] = static_cast<int32_t>(e % 8);
        if (e / 8 > 0)
            mask[e / 8 - 1][e % 8] = -1;
    }
    tap.perm = _mm256_load_si256(reinterpret_cast<const __m256i *>(perm));
    for (ptrdiff_t v = 0; v + 1 < s; v++)
        tap.mask[v] =
            _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i *>(mask[v])));
}

template <int S>
OVPOOL_INLINE __m256 strided_load(const float *first, const StridedTap &tap) {
    const float *p = first + tap.base;
    if constexpr (S == 4) {
        // each vector's element r of its low and high four: lanes hold
        // j = 0, 2, 4, 6, 1, 3, 5, 7
        const __m256 v0 = _mm256_loadu_ps(p), v1 = _mm256_loadu_ps(p + 8);
        const __m256 v2 = _mm256_loadu_ps(p + 16), v3 = _mm256_loadu_ps(p + 24);
        __m256 lo, hi;
        switch (tap.phase) {
            case 0:
                lo = _mm256_shuffle_ps(v0, v1, 0x00), hi = _mm256_shuffle_ps(v2, v3, 0x00);
                break;
            case 1:
                lo = _mm256_shuffle_ps(v0, v1, 0x55), hi = _mm256_shuffle_ps(v2, v3, 0x55);
                break;
            case 2:
                lo = _mm256_shuffle_ps(v0, v1, 0xaa), hi = _mm256_shuffle_ps(v2, v3, 0xaa);
                break;
            default:
                lo = _mm256_shuffle_ps(v0, v1, 0xff), hi = _mm256_shuffle_ps(v2, v3, 0xff);
        }
        return _mm256_shuffle_ps(lo, hi, 0x88);
    } else {
        __m256 x = _mm256_loadu_ps(p);
        for (int v = 1; v < S; v++)
            x = _mm256_blendv_ps(x, _mm256_loadu_ps(p + 8 * v), tap.mask[v - 1]);
        return _mm256_permutevar8x32_ps(x, tap.perm);
    }
}

// Blocks of 8 outputs at stride S (3, 4, 5 or 7) by strided_load, from the
// first on, while their loads stay within the row's `limit` elements;
// returns the first block not done.
template <int S>
OVPOOL_NOINLINE ptrdiff_t htaps8_loads(const float *buf, float *out, ptrdiff_t n_out, ptrdiff_t k,
                                       ptrdiff_t d, int mode, ptrdiff_t limit) {
    StridedTap taps[8];
    for (ptrdiff_t t = 0; t < k; t++)
        strided_tap(taps[t], t * d, S);
    const ptrdiff_t reach = taps[k - 1].base + 8 * S;
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    ptrdiff_t blk = 0;
    for (; blk * 8 < n_out; blk++) {
        const ptrdiff_t o = block_start(blk, 8, n_out);
        if (o * S + reach > limit)
            break;
        const float *first = buf + o * S;
        __m256 acc =
            combine_taps8(k, mode, [&](ptrdiff_t t) { return strided_load<S>(first, taps[t]); });
        if constexpr (S == 4)
            acc = _mm256_permutevar8x32_ps(acc, order);
        _mm256_storeu_ps(out + o, acc);
    }
    return blk;
}
#endif

#if defined(__AVX2__)
// Maxima (mode M, 1 or 2) of blocks of 8 outputs at stride S (1 or 2) of K
// taps, the taps unrolled: a loop over taps known only at run time spent as
// much on its own control as on the maxima (paired, 1D max 7 s1 on rows of
// 1000 0.72x, 4 s2 0.52x, 2D max 4x4 s2 on 128x128 0.80x, 5x5 s1 0.79x).
// Sums are bound by their additions' latency either way (0.91-1.06x) and
// keep the loop.
template <int S, int K, int M>
OVPOOL_NOINLINE void htaps8_fixed(const float *buf, float *out, ptrdiff_t n_out, ptrdiff_t d) {
    const __m256i unused = _mm256_setzero_si256();
    for (ptrdiff_t blk = 0; blk * 8 < n_out; blk++) {
        const ptrdiff_t o = block_start(blk, 8, n_out);
        const float *first = buf + o * S;
        __m256 acc =
            combine_taps8(K, M, [&](ptrdiff_t t) { return strided8(first + t * d, S, unused); });
        if constexpr (S == 2)
            acc = unpermute8(acc, 2);
        _mm256_storeu_ps(out + o, acc);
    }
}

template <int S, int M>
OVPOOL_INLINE bool htaps8_unrolled(const float *buf, float *out, ptrdiff_t n_out, ptrdiff_t k,
                                   ptrdiff_t d) {
    switch (k) {
        case 2:
            return htaps8_fixed<S, 2, M>(buf, out, n_out, d), true;
        case 3:
            return htaps8_fixed<S, 3, M>(buf, out, n_out, d), true;
        case 4:
            return htaps8_fixed<S, 4, M>(buf, out, n_out, d), true;
        case 5:
            return htaps8_fixed<S, 5, M>(buf, out, n_out, d), true;
        case 6:
            return htaps8_fixed<S, 6, M>(buf, out, n_out, d), true;
        case 7:
            return htaps8_fixed<S, 7, M>(buf, out, n_out, d), true;
        case 8:
            return htaps8_fixed<S, 8, M>(buf, out, n_out, d), true;
    }
    return false;
}

template <int S>
OVPOOL_INLINE bool htaps8_unrolled(const float *buf, float *out, ptrdiff_t n_out, ptrdiff_t k,
                                   ptrdiff_t d, int mode) {
    if (mode == 1)
        return htaps8_unrolled<S, 1>(buf, out, n_out, k, d);
    return htaps8_unrolled<S, 2>(buf, out, n_out, k, d);
}
#endif

// Out of line: where gcc inlined it into hsum or not moved with unrelated
// code in the same build, and the row kernel's 7x7 s1 average with it
// (1.03-1.1x).
OVPOOL_NOINLINE ptrdiff_t htaps8_f32(const float *buf, float *out, ptrdiff_t n_out,
                                     ptrdiff_t stride, ptrdiff_t k, ptrdiff_t d, int mode,
                                     bool plain = false) {
#if defined(__AVX2__)
    if (n_out < 8 || stride > (ptrdiff_t(1) << 27))
        return 0;
    const __m256i at = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                          _mm256_set1_epi32(static_cast<int>(stride)));
    if (mode != 0 && stride == 1 && htaps8_unrolled<1>(buf, out, n_out, k, d, mode))
        return n_out;
    if (mode != 0 && stride == 2 && htaps8_unrolled<2>(buf, out, n_out, k, d, mode))
        return n_out;
    ptrdiff_t blk = 0;
    if (plain && k <= 8 && (stride == 3 || stride == 4 || stride == 5 || stride == 7)) {
        // the elements the row's windows read
        const ptrdiff_t limit = (n_out - 1) * stride + (k - 1) * d + 1;
        if (stride == 3)
            blk = htaps8_loads<3>(buf, out, n_out, k, d, mode, limit);
        else if (stride == 4)
            blk = htaps8_loads<4>(buf, out, n_out, k, d, mode, limit);
        else if (stride == 5)
            blk = htaps8_loads<5>(buf, out, n_out, k, d, mode, limit);
        else
            blk = htaps8_loads<7>(buf, out, n_out, k, d, mode, limit);
    }
    for (; blk * 8 < n_out; blk++) {
        const ptrdiff_t o = block_start(blk, 8, n_out);
        const float *first = buf + o * stride;
        __m256 acc = combine_taps8(
            k, mode, [&](ptrdiff_t t) { return strided8(first + t * d, stride, at); });
        if (stride == 2)
            acc = unpermute8(acc, 2);
        _mm256_storeu_ps(out + o, acc);
    }
    return n_out;
#else
    (void)buf;
    (void)out;
    (void)n_out;
    (void)stride;
    (void)k;
    (void)d;
    (void)mode;
    (void)plain;
    return 0;
#endif
}

}  // namespace simd
OVPOOL_END
