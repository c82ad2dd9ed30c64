// Vector argmax of float32 windows: values and their indices.
//
// Every kernel here keeps ovpool's rule: the first maximum in row-major
// window order (a strict ">" over the taps in that order), except that a NaN
// always wins and the last NaN is kept (the take rule (v > best) | isnan(v)),
// and the value returned is the element the index names (down to the sign
// of a zero). Most kernels run a NaN-free version first (a strict ">" alone,
// the value by maxps, fewer operations on the dependency chain) and redo a
// block that met a NaN with the exact rule.
//
// Contents: one window by its taps (window_argmax_f32); adaptive bins taken
// window by window (bins_*); the vertical-first column fold of adaptive bins
// (fold_rows_argmax_f32, window_argmax8_f32); blocks of 8 or 4 outputs of
// tilings and 3-tap windows (argblock*); 3x3 windows keeping the window rows
// that consecutive output rows share (argrows_k3); and the row entries
// argmax_row_f32 / argmax_rows_f32.
#pragma once

#include "tile.hpp"

OVPOOL_BEGIN
namespace simd {

// In-plane offset of the first maximum (or the last NaN) of a window of
// n_rows x n_cols taps, row-major order: row row_first + t * dil_h, column
// col_first + u * dil_w (n_rows, n_cols >= 1); *best gets its value. The take
// rule over the taps in row-major order equals the leftmost-per-row, then
// topmost rule. Without branches on the data: the edge windows of max
// pooling with indices (those meeting the padding) took 40% of a 3x3 s2 p1
// call on random data in mispredicted compares.
inline int64_t window_argmax_f32(const float *plane, ptrdiff_t in_w, ptrdiff_t row_first,
                                 ptrdiff_t n_rows, ptrdiff_t dil_h, ptrdiff_t col_first,
                                 ptrdiff_t n_cols, ptrdiff_t dil_w, float *best) {
    int64_t at_ = static_cast<int64_t>(row_first) * in_w + col_first;
#if defined(__SSE2__)
    __m128 b = _mm_load_ss(plane + at_);
    for (ptrdiff_t t = 0; t < n_rows; t++) {
        int64_t row = static_cast<int64_t>(row_first + t * dil_h) * in_w;
        for (ptrdiff_t u = t == 0; u < n_cols; u++) {
            int64_t tap = row + col_first + u * dil_w;
            __m128 v = _mm_load_ss(plane + tap);
            __m128 take = _mm_or_ps(_mm_cmpgt_ss(v, b), _mm_cmpunord_ss(v, v));
            b = _mm_or_ps(_mm_and_ps(take, v), _mm_andnot_ps(take, b));
            at_ ^= (at_ ^ tap) & -static_cast<int64_t>(_mm_movemask_ps(take) & 1);
        }
    }
    *best = _mm_cvtss_f32(b);
#else
    float b = plane[at_];
    for (ptrdiff_t t = 0; t < n_rows; t++) {
        int64_t row = static_cast<int64_t>(row_first + t * dil_h) * in_w;
        for (ptrdiff_t u = t == 0; u < n_cols; u++) {
            int64_t tap = row + col_first + u * dil_w;
            float v = plane[tap];
            if ((v > b) | (v != v)) {
                b = v;
                at_ = tap;
            }
        }
    }
    *best = b;
#endif
    return at_;
}

// Whether the windows along W (a table, no dilation) go to bins_argmax_f32
// rather than the column fold: AVX2 builds, windows of 1 to 16 taps that fit
// their vectors, and vectors over no more than 1.5x the row's columns
// (windows that overlap much fold each column once).
inline bool bins_by_window_ok(const int64_t *win_w, ptrdiff_t out_w, ptrdiff_t in_w) {
#if defined(__AVX2__)
    ptrdiff_t lanes = 0;
    for (ptrdiff_t o = 0; o < out_w; o++) {
        int64_t n = win_w[3 * o + 1];
        if (n < 1 || n > 16 || in_w < (n <= 8 ? 8 : 16))
            return false;
        lanes += n <= 8 ? 8 : 16;
    }
    return out_w > 0 && 2 * lanes <= 3 * in_w;
#else
    (void)win_w;
    (void)out_w;
    (void)in_w;
    return false;
#endif
}

#if defined(__AVX2__)
// The smallest (row << 4) + column holding the maximum of one window's
// folded columns c, rank (nv vectors; masked: only lanes lo .. lo + n_taps
// - 1), or -1 if no lane holds the maximum (which only a NaN can cause:
// checked so that no offset is read out of range).
OVPOOL_INLINE int64_t bin_finish(__m256 c0, __m256 c1, __m256i rank0, __m256i rank1, int nv,
                                 int masked, int lo, int n_taps) {
    // by value, not by pointer: the caller's arrays stay in registers
    __m256 c[2] = {c0, c1}, in[2], m = c0;
    __m256i rank[2] = {rank0, rank1}, lane[2], low = _mm256_set1_epi32(INT32_MAX);
    for (int j = 0; j < nv; j++) {
        lane[j] =
            _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(8 * j));
        if (masked) {
            in[j] = _mm256_castsi256_ps(
                _mm256_and_si256(_mm256_cmpgt_epi32(lane[j], _mm256_set1_epi32(lo - 1)),
                                 _mm256_cmpgt_epi32(_mm256_set1_epi32(lo + n_taps), lane[j])));
            __m256 v = _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), c[j], in[j]);
            m = j ? _mm256_max_ps(m, v) : v;
        } else if (j) {
            m = _mm256_max_ps(m, c[j]);
        }
    }
    m = _mm256_max_ps(m, _mm256_permute2f128_ps(m, m, 1));
    m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, 0x4e));
    m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, 0xb1));  // the maximum, every lane
    for (int j = 0; j < nv; j++) {
        __m256 at_max = _mm256_cmp_ps(c[j], m, _CMP_EQ_OQ);
        if (masked)
            at_max = _mm256_and_ps(at_max, in[j]);
        __m256i key = take_index8(low, _mm256_add_epi32(rank[j], lane[j]), at_max);
        low = j ? _mm256_min_epi32(low, key) : key;
    }
    low = _mm256_min_epi32(low, _mm256_permute2x128_si256(low, low, 1));
    low = _mm256_min_epi32(low, _mm256_shuffle_epi32(low, 0x4e));
    low = _mm256_min_epi32(low, _mm256_shuffle_epi32(low, 0xb1));
    int32_t key = _mm256_cvtsi256_si32(low);
    return key == INT32_MAX ? -1 : key;
}

// The first maximum, in row-major order, of each of n_win windows of one
// output row (ww: their win_w entries, n_taps columns from first; up to 8
// columns with nv = 1, 16 with nv = 2; n_win * nv <= 4; the rows at
// offsets), by the windows themselves: their columns fold down the rows in
// nv vectors each with the strict ">" (each column's first row holding its
// maximum), and the lanes holding a window's maximum give its smallest
// (row, column) - no column maxima stored and read back, and each row's
// address and rank taken once for the n_win windows. pos[w]: the in-plane
// offset, out[w]: the element's own value (-0.0 and +0.0 compare equal),
// index[w] (if index): index_base + pos[w]. One running sum over all the
// group's vectors finds a NaN in one add per vector and row (a register
// each would spill); then every window of the group gets pos[w] = -1 (so do
// +inf and -inf in one lane). Returns the number of such windows. Needs
// in_w >= 8 nv.
template <int NWin, int NV>
OVPOOL_INLINE int bins_group_f32(const float *plane, const int64_t *offsets, ptrdiff_t n_rows,
                                 ptrdiff_t in_w, const int64_t *ww, float *out, int64_t *pos,
                                 int64_t *index, int64_t index_base) {
    ptrdiff_t start[4], at_[4];
    __m256 c[4], sum = _mm256_setzero_ps();
    __m256i rank[4];
    const float *row = plane + offsets[0];
    for (int w = 0; w < NWin; w++) {
        ptrdiff_t first = ww[3 * w];
        start[w] = first + 8 * NV <= in_w ? first : in_w - 8 * NV;
        for (int j = 0; j < NV; j++) {
            at_[w * NV + j] = start[w] + 8 * j;
            c[w * NV + j] = _mm256_loadu_ps(row + start[w] + 8 * j);
            sum = _mm256_add_ps(sum, c[w * NV + j]);
            rank[w * NV + j] = _mm256_setzero_si256();
        }
    }
    for (ptrdiff_t r = 1; r < n_rows; r++) {
        __m256i key = _mm256_set1_epi32(static_cast<int32_t>(r << 4));
        row = plane + offsets[r];
        for (int k = 0; k < NWin * NV; k++) {
            __m256 v = _mm256_loadu_ps(row + at_[k]);
            rank[k] = take_index8(rank[k], key, _mm256_cmp_ps(v, c[k], _CMP_GT_OQ));
            c[k] = _mm256_max_ps(v, c[k]);
            sum = _mm256_add_ps(sum, v);
        }
    }
    int nan = _mm256_movemask_ps(_mm256_cmp_ps(sum, sum, _CMP_UNORD_Q)), n_exact = 0;
    for (int w = 0; w < NWin; w++) {
        int lo = static_cast<int>(ww[3 * w] - start[w]), n_taps = static_cast<int>(ww[3 * w + 1]);
        int k = w * NV, k1 = w * NV + NV - 1;
        int64_t key = nan ? -1
                      : lo == 0 && n_taps == 8 * NV  // no lane to leave out
                          ? bin_finish(c[k], c[k1], rank[k], rank[k1], NV, 0, 0, 0)
                          : bin_finish(c[k], c[k1], rank[k], rank[k1], NV, 1, lo, n_taps);
        if (key >= 0) {
            key = offsets[key >> 4] + start[w] + (key & 15);
            out[w] = plane[key];
            if (index)
                index[w] = index_base + key;
        }
        pos[w] = key;
        n_exact += key < 0;
    }
    return n_exact;
}
#endif  // __AVX2__

// Values and in-plane offsets (pos) of the out_w windows of one output row
// by bins_group_f32, in groups of up to 4 vectors of windows as wide, where
// bins_by_window_ok holds (and windows of fewer than 2^27 rows: the rank
// key); with index, also index_base + pos there (row-major int64 indices,
// written here). Returns the number of windows with pos -1 (a group with a
// NaN): the caller takes the row again by the exact rule.
inline ptrdiff_t bins_argmax_f32(const float *plane, const int64_t *offsets, ptrdiff_t n_rows,
                                 ptrdiff_t in_w, const int64_t *win_w, ptrdiff_t out_w, float *out,
                                 int64_t *pos, int64_t *index, int64_t index_base) {
#if defined(__AVX2__)
    ptrdiff_t o = 0, n_exact = 0;
    while (o < out_w) {
        int nv = win_w[3 * o + 1] <= 8 ? 1 : 2, n = 1;
        while (n < 4 / nv && o + n < out_w && (win_w[3 * (o + n) + 1] <= 8 ? 1 : 2) == nv)
            n++;
        const int64_t *ww = win_w + 3 * o;
        int64_t *idx = index ? index + o : nullptr;
        if (nv == 2)
            n_exact += n == 2 ? bins_group_f32<2, 2>(plane, offsets, n_rows, in_w, ww, out + o,
                                                     pos + o, idx, index_base)
                              : bins_group_f32<1, 2>(plane, offsets, n_rows, in_w, ww, out + o,
                                                     pos + o, idx, index_base);
        else
            n_exact += n == 4   ? bins_group_f32<4, 1>(plane, offsets, n_rows, in_w, ww, out + o,
                                                       pos + o, idx, index_base)
                       : n == 3 ? bins_group_f32<3, 1>(plane, offsets, n_rows, in_w, ww, out + o,
                                                       pos + o, idx, index_base)
                       : n == 2 ? bins_group_f32<2, 1>(plane, offsets, n_rows, in_w, ww, out + o,
                                                       pos + o, idx, index_base)
                                : bins_group_f32<1, 1>(plane, offsets, n_rows, in_w, ww, out + o,
                                                       pos + o, idx, index_base);
        o += n;
    }
    return n_exact;
#else
    (void)plane;
    (void)offsets;
    (void)n_rows;
    (void)in_w;
    (void)win_w;
    (void)out;
    (void)index;
    (void)index_base;
    for (ptrdiff_t o = 0; o < out_w; o++)
        pos[o] = -1;
    return out_w;
#endif
}

#if defined(__AVX2__)
// fold_rows_argmax_f32 of the 8 columns from i by the exact rule.
OVPOOL_INLINE void fold_block8_exact(const float *plane, const int64_t *offsets, ptrdiff_t n_rows,
                                     ptrdiff_t i, float *col, int32_t *col_row) {
    __m256 c = _mm256_loadu_ps(plane + offsets[0] + i);
    __m256i cr = _mm256_setzero_si256();
    for (ptrdiff_t r = 1; r < n_rows; r++) {
        __m256 v = _mm256_loadu_ps(plane + offsets[r] + i);
        __m256 take =
            _mm256_or_ps(_mm256_cmp_ps(c, v, _CMP_LT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        c = _mm256_blendv_ps(c, v, take);
        cr = take_index8(cr, _mm256_set1_epi32(static_cast<int32_t>(r)), take);
    }
    _mm256_storeu_ps(col + i, c);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(col_row + i), cr);
}

// The NaN-free fold of fold_rows_argmax_f32 for NB (2 or 4) blocks of 8
// columns from at[j] at once, each block's maximum and rank a chain of its
// own; a NaN in rows 1.. sends the blocks to the exact fold.
template <int NB>
OVPOOL_INLINE void fold_blocks8(const float *plane, const int64_t *offsets, ptrdiff_t n_rows,
                                const ptrdiff_t *at_, float *col, int32_t *col_row) {
    __m256 c[4], v[4], nan = _mm256_setzero_ps();
    __m256i rank_of[4];
    for (int j = 0; j < NB; j++) {
        c[j] = _mm256_loadu_ps(plane + offsets[0] + at_[j]);
        rank_of[j] = _mm256_setzero_si256();
    }
    for (ptrdiff_t r = 1; r < n_rows; r++) {
        const float *row = plane + offsets[r];
        __m256i rank = _mm256_set1_epi32(static_cast<int32_t>(r));
        for (int j = 0; j < NB; j++)
            v[j] = _mm256_loadu_ps(row + at_[j]);
        for (int j = 0; j < NB; j++) {
            rank_of[j] = take_index8(rank_of[j], rank, _mm256_cmp_ps(c[j], v[j], _CMP_LT_OQ));
            c[j] = _mm256_max_ps(v[j], c[j]);
        }
        for (int j = 0; j < NB; j += 2)
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(v[j], v[j + 1], _CMP_UNORD_Q));
    }
    if (_mm256_movemask_ps(nan)) {
        for (int j = 0; j < NB; j++)
            fold_block8_exact(plane, offsets, n_rows, at_[j], col, col_row);
        return;
    }
    for (int j = 0; j < NB; j++) {
        _mm256_storeu_ps(col + at_[j], c[j]);
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(col_row + at_[j]), rank_of[j]);
    }
}
#endif  // __AVX2__

// The column maxima of the vertical-first argmax over window rows
// plane + offsets[r], r < n_rows (n_rows >= 1, rows n long): col[i] the
// maximum of column i, col_row[i] the first row holding it, or the last
// NaN's row (take = (row[i] > col[i]) | isnan(row[i]), rows in order).
//
// AVX2: blocks of 8 columns, each over all the rows in registers and stored
// once (rows outer, the maxima were loaded and stored at every row:
// adaptive max 8x256x50x50 -> 7 with indices 1.31 -> 1.16 ms at 2 threads);
// the last block moved back to end at n (folding a row twice changes
// nothing; a scalar tail would branch on the data, and mispredictions cost
// more than the blocks). Four blocks at a time while three or more are
// left, else two (the last one repeated where one is left): four chains
// took adaptive max 8x64x100x100 -> 7 with indices 0.86x at 1 and 2
// threads, 50 -> 7 the same. NaN-free first: the value is maxps(v, c) = v > c
// ? v : c, the take rule without NaN, one instruction on the dependency
// chain instead of compare, or and blend (that chain bound the loop: 50 -> 7
// went 0.87x at 1 and 2 threads); a NaN in rows 1.. sends the blocks to the
// exact fold (a NaN of row 0 stays under either rule: nothing compares
// greater than it).
inline void fold_rows_argmax_f32(const float *plane, const int64_t *offsets, ptrdiff_t n_rows,
                                 float *col, int32_t *col_row, ptrdiff_t n) {
    ptrdiff_t i;
#if defined(__AVX2__)
    if (n >= 8) {
        ptrdiff_t n_blocks = (n + 7) / 8, blk = 0, at_[4];
        while (blk < n_blocks) {
            int nb = n_blocks - blk >= 3 ? 4 : 2;
            for (int j = 0; j < nb; j++)  // past the last block: the last again
                at_[j] = block_start(blk + j, 8, n);
            if (nb == 4)
                fold_blocks8<4>(plane, offsets, n_rows, at_, col, col_row);
            else
                fold_blocks8<2>(plane, offsets, n_rows, at_, col, col_row);
            blk += nb;
        }
        return;
    }
#endif
    for (i = 0; i < n; i++) {
        col[i] = plane[offsets[0] + i];
        col_row[i] = 0;
    }
    for (ptrdiff_t r = 1; r < n_rows; r++) {
        const float *row = plane + offsets[r];
        i = 0;
#if defined(__SSE2__) && !defined(__AVX2__)
        if (n >= 4) {
            __m128i rank = _mm_set1_epi32(static_cast<int32_t>(r));
            for (ptrdiff_t blk = 0; blk * 4 < n; blk++) {
                i = block_start(blk, 4, n);
                __m128 v = _mm_loadu_ps(row + i), c = _mm_loadu_ps(col + i);
                __m128 take = _mm_or_ps(_mm_cmplt_ps(c, v), _mm_cmpunord_ps(v, v));
                _mm_storeu_ps(col + i, _mm_or_ps(_mm_and_ps(take, v), _mm_andnot_ps(take, c)));
                __m128i t = _mm_castps_si128(take);
                __m128i cr = _mm_loadu_si128(reinterpret_cast<const __m128i *>(col_row + i));
                _mm_storeu_si128(reinterpret_cast<__m128i *>(col_row + i),
                                 _mm_or_si128(_mm_and_si128(t, rank), _mm_andnot_si128(t, cr)));
            }
            continue;
        }
#endif
        for (; i < n; i++) {
            float v = row[i];
            int take = (v > col[i]) | (v != v);
            col[i] = take ? v : col[i];
            col_row[i] = take ? static_cast<int32_t>(r) : col_row[i];
        }
    }
}

// The horizontal pass of the vertical-first argmax for one window of
// 1 <= n_taps <= 8 consecutive columns first.. of the column maxima col and
// the ranks col_row of their rows (in_w >= 8 columns): the column whose
// (rank, column) is smallest among those holding the window's maximum, in
// one vector (the block moved back to end at in_w when it would pass it).
// Returns the column, or -1 when the window holds a NaN or the build has
// no AVX2 (the caller then takes its scalar loop).
inline ptrdiff_t window_argmax8_f32(const float *col, const int32_t *col_row, ptrdiff_t in_w,
                                    ptrdiff_t first, ptrdiff_t n_taps) {
#if defined(__AVX2__)
    ptrdiff_t start = first + 8 <= in_w ? first : in_w - 8;
    int lo = static_cast<int>(first - start);
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256 in = _mm256_castsi256_ps(_mm256_and_si256(
        _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(lo - 1)),
        _mm256_cmpgt_epi32(_mm256_set1_epi32(lo + static_cast<int>(n_taps)), lane)));
    __m256 v = _mm256_loadu_ps(col + start);
    if (_mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q), in)))
        return -1;
    // ranks as bin_finish's keys: row << 4 (rows < 2^27, the caller's)
    __m256i rank = _mm256_slli_epi32(
        _mm256_loadu_si256(reinterpret_cast<const __m256i *>(col_row + start)), 4);
    int64_t key = bin_finish(v, v, rank, rank, 1, 1, lo, static_cast<int>(n_taps));
    return key < 0 ? -1 : start + (key & 15);
#else
    (void)col;
    (void)col_row;
    (void)in_w;
    (void)first;
    (void)n_taps;
    return -1;  // no AVX2: the caller's scalar loop
#endif
}

// Argmax of uniform windows, float32: the values and the int64 indices
// index_base + the in-plane row-major offset (int32 in the lanes, widened on
// the store) of n_out consecutive outputs whose taps all lie inside the
// input. Window (stride s, k taps per row, kh rows): output o's tap (t, u) is
// row0[t*in_w + o*s + u], at offset row_offset + t*in_w + o*s + u. (s, k) is
// a tiling (s == k in 1, 2, 4), (2, 3) or (1, 3) (see vector_rows_ok). Lanes
// as in tile_rows_f32; the offsets ride in integer lanes permuted like the
// values.
#if defined(__SSE2__)
// argblock8x2 in 4 lanes (SSE2: blends by and/andnot/or).
OVPOOL_INLINE int argblock4x2(const float *p, const float *q, ptrdiff_t in_w, float *out_p,
                              float *out_q, int64_t *idx_p, int64_t *idx_q, int32_t off_p,
                              int32_t off_q, int64_t index_base, int kh, int stride, int k,
                              int exact) {
    __m128 v[4], w[4], best_p = _mm_setzero_ps(), best_q = _mm_setzero_ps(), nan = _mm_setzero_ps();
    __m128i at_p = _mm_setzero_si128(), at_q = _mm_setzero_si128();
    // lane l holds output l
    __m128i lanes = _mm_setr_epi32(0, stride, 2 * stride, 3 * stride);
    __m128i base_p = _mm_add_epi32(lanes, _mm_set1_epi32(off_p));
    __m128i base_q = _mm_add_epi32(lanes, _mm_set1_epi32(off_q));
    for (int t = 0; t < kh; t++) {
        taps4s(p + t * in_w, stride, k, v);
        taps4s(q + t * in_w, stride, k, w);
        for (int u = 0; u < k; u++) {
            __m128i tap = _mm_set1_epi32(static_cast<int32_t>(t * in_w + u));
            __m128 take_p, take_q;
            __m128i ix_p = tap, ix_q = tap;
            if (!exact) {
                nan = _mm_or_ps(nan, _mm_cmpunord_ps(v[u], w[u]));
            } else {
                ix_p = _mm_add_epi32(base_p, tap);
                ix_q = _mm_add_epi32(base_q, tap);
            }
            if (t == 0 && u == 0) {
                best_p = v[0];
                best_q = w[0];
                at_p = exact ? ix_p : _mm_setzero_si128();
                at_q = exact ? ix_q : _mm_setzero_si128();
                continue;
            }
            if (!exact) {
                take_p = _mm_cmpgt_ps(v[u], best_p);
                take_q = _mm_cmpgt_ps(w[u], best_q);
            } else {
                take_p = _mm_or_ps(_mm_cmpgt_ps(v[u], best_p), _mm_cmpunord_ps(v[u], v[u]));
                take_q = _mm_or_ps(_mm_cmpgt_ps(w[u], best_q), _mm_cmpunord_ps(w[u], w[u]));
            }
            best_p = _mm_or_ps(_mm_and_ps(take_p, v[u]), _mm_andnot_ps(take_p, best_p));
            best_q = _mm_or_ps(_mm_and_ps(take_q, w[u]), _mm_andnot_ps(take_q, best_q));
            __m128i tp = _mm_castps_si128(take_p), tq = _mm_castps_si128(take_q);
            at_p = _mm_or_si128(_mm_and_si128(tp, ix_p), _mm_andnot_si128(tp, at_p));
            at_q = _mm_or_si128(_mm_and_si128(tq, ix_q), _mm_andnot_si128(tq, at_q));
        }
    }
    if (!exact) {
        if (_mm_movemask_ps(nan))
            return 1;
        at_p = _mm_add_epi32(at_p, base_p);
        at_q = _mm_add_epi32(at_q, base_q);
    }
    _mm_storeu_ps(out_p, best_p);
    _mm_storeu_ps(out_q, best_q);
    store_indices4(idx_p, at_p, index_base);
    store_indices4(idx_q, at_q, index_base);
    return 0;
}
#endif  // __SSE2__

#if defined(__AVX2__)
// The first maximum of the taps v[0 .. k) of one window row, k in 1, 2 or 4,
// lane by lane, NaN-free: its value, and in *col its tap. ">" of the later
// over the earlier (in pairs, then the pairs' winners) keeps the earlier of
// equal taps; row by row with a strict ">", the window's first maximum in
// row-major order follows, with one compare on the chain per row instead of
// one per tap and no tap number broadcast per tap.
OVPOOL_INLINE __m256 row_max8(const __m256 *v, int k, __m256i *col) {
    if (k == 1) {
        *col = _mm256_setzero_si256();
        return v[0];
    }
    __m256i c = _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(v[1], v[0], _CMP_GT_OQ)),
                                 _mm256_set1_epi32(1));
    __m256 m = _mm256_max_ps(v[1], v[0]);
    if (k == 2) {
        *col = c;
        return m;
    }
    __m256i c23 = take_index8(_mm256_set1_epi32(2), _mm256_set1_epi32(3),
                              _mm256_cmp_ps(v[3], v[2], _CMP_GT_OQ));
    __m256 m23 = _mm256_max_ps(v[3], v[2]);
    *col = take_index8(c, c23, _mm256_cmp_ps(m23, m, _CMP_GT_OQ));
    return _mm256_max_ps(m23, m);
}

// Values and in-plane positions of the window maxima of two blocks of 8
// outputs (p and q), the taps in row-major order with a strict ">" (the first
// maximum wins). With exact clear, the NaN-free version: ">" alone, the value
// by max (vmaxps(v, best) is v > best ? v : best, the blend's choice, and one
// cycle shorter on the chain from tap to tap), the tap's offset blended and
// the lanes' bases added once at the end, and one unordered compare per pair
// of taps (one of each block); it returns 1 when a tap was NaN, and the
// caller redoes the blocks with exact set (a NaN always wins, the last one):
// 4 vector operations per tap of a block instead of 6.
OVPOOL_INLINE int argblock8x2(const float *p, const float *q, ptrdiff_t in_w, float *out_p,
                              float *out_q, int64_t *idx_p, int64_t *idx_q, int32_t off_p,
                              int32_t off_q, int64_t index_base, int kh, int stride, int k,
                              int left, int exact) {
    __m256 v[4], w[4], best_p = _mm256_setzero_ps(), best_q = _mm256_setzero_ps(),
                       nan = _mm256_setzero_ps();
    __m256i at_p = _mm256_setzero_si256(), at_q = _mm256_setzero_si256();
    int kw = lane_kw(stride, k);
    __m256i lanes = lane_starts8(stride, k);
    __m256i base_p = _mm256_add_epi32(lanes, _mm256_set1_epi32(off_p));
    __m256i base_q = _mm256_add_epi32(lanes, _mm256_set1_epi32(off_q));
    for (int t = 0; t < kh; t++) {
        if (left)
            taps8s_left(p + t * in_w, stride, v);
        else
            taps8s(p + t * in_w, stride, k, v);
        taps8s(q + t * in_w, stride, k, w);
        for (int u = 0; u < k; u++) {
            __m256i tap = _mm256_set1_epi32(static_cast<int32_t>(t * in_w + u));
            // p's output 0 of a left edge: its tap 0 is column 0, one right
            __m256i tap_p = left && u == 0
                                ? _mm256_add_epi32(tap, _mm256_setr_epi32(1, 0, 0, 0, 0, 0, 0, 0))
                                : tap;
            if (!exact) {
                nan = _mm256_or_ps(nan, _mm256_cmp_ps(v[u], w[u], _CMP_UNORD_Q));
                if (t == 0 && u == 0) {
                    best_p = v[0];
                    best_q = w[0];
                    at_p = tap_p;  // 0 but a left edge's lane 0
                    at_q = tap;
                    continue;
                }
                __m256 take_p = _mm256_cmp_ps(v[u], best_p, _CMP_GT_OQ);
                __m256 take_q = _mm256_cmp_ps(w[u], best_q, _CMP_GT_OQ);
                best_p = _mm256_max_ps(v[u], best_p);  // NaN-free: the blend
                best_q = _mm256_max_ps(w[u], best_q);
                at_p = take_index8(at_p, tap_p, take_p);
                at_q = take_index8(at_q, tap, take_q);
                continue;
            }
            __m256i ix_p = _mm256_add_epi32(base_p, tap_p);
            __m256i ix_q = _mm256_add_epi32(base_q, tap);
            if (t == 0 && u == 0) {
                best_p = v[0];
                best_q = w[0];
                at_p = ix_p;
                at_q = ix_q;
                continue;
            }
            __m256 take_p = _mm256_or_ps(_mm256_cmp_ps(v[u], best_p, _CMP_GT_OQ),
                                         _mm256_cmp_ps(v[u], v[u], _CMP_UNORD_Q));
            __m256 take_q = _mm256_or_ps(_mm256_cmp_ps(w[u], best_q, _CMP_GT_OQ),
                                         _mm256_cmp_ps(w[u], w[u], _CMP_UNORD_Q));
            best_p = _mm256_blendv_ps(best_p, v[u], take_p);
            best_q = _mm256_blendv_ps(best_q, w[u], take_q);
            at_p = take_index8(at_p, ix_p, take_p);
            at_q = take_index8(at_q, ix_q, take_q);
        }
    }
    if (!exact) {
        if (_mm256_movemask_ps(nan))
            return 1;
        at_p = _mm256_add_epi32(at_p, base_p);
        at_q = _mm256_add_epi32(at_q, base_q);
    }
    _mm256_storeu_ps(out_p, unpermute8(best_p, kw));
    _mm256_storeu_ps(out_q, unpermute8(best_q, kw));
    store_indices8(idx_p, idx_p + 4, unpermute8i(at_p, kw), index_base);
    store_indices8(idx_q, idx_q + 4, unpermute8i(at_q, kw), index_base);
    return 0;
}

// argblock4x2 of tiling windows (stride == k in 1, 2, 4) with its two blocks
// side by side in 256-bit registers (rows of 4-7 outputs: adaptive 28->7 and
// 14->7 with indices), the NaN-free version first as argblock8x2: the same
// choice on every lane, with half the operations.
OVPOOL_INLINE int argblock4x2_wide(const float *p, const float *q, ptrdiff_t in_w, float *out_p,
                                   float *out_q, int64_t *idx_p, int64_t *idx_q, int32_t off_p,
                                   int32_t off_q, int64_t index_base, int kh, int k, int exact) {
    __m256 v[4], best = _mm256_setzero_ps(), nan = _mm256_setzero_ps();
    __m256i at_ = _mm256_setzero_si256();
    // window start of each lane's output, in taps4x2's lane order
    __m256i base =
        k == 1 ? _mm256_add_epi32(
                     _mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3),
                     _mm256_setr_epi32(off_p, off_p, off_p, off_p, off_q, off_q, off_q, off_q))
               : _mm256_add_epi32(
                     k == 2 ? _mm256_setr_epi32(0, 2, 0, 2, 4, 6, 4, 6)
                            : _mm256_setr_epi32(0, 8, 0, 8, 4, 12, 4, 12),
                     _mm256_setr_epi32(off_p, off_p, off_q, off_q, off_p, off_p, off_q, off_q));
    for (int t = 0; t < kh; t++) {
        taps4x2(p + t * in_w, q + t * in_w, k, v, 0);
        if (!exact) {  // row by row, see row_max8
            __m256i col;
            __m256 m = row_max8(v, k, &col);
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(v[0], v[k / 2], _CMP_UNORD_Q));
            if (k == 4)
                nan = _mm256_or_ps(nan, _mm256_cmp_ps(v[1], v[3], _CMP_UNORD_Q));
            col = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int32_t>(t * in_w)), col);
            if (t == 0) {
                best = m;
                at_ = col;
                continue;
            }
            __m256 take = _mm256_cmp_ps(m, best, _CMP_GT_OQ);
            best = _mm256_max_ps(m, best);
            at_ = take_index8(at_, col, take);
            continue;
        }
        for (int u = 0; u < k; u++) {
            __m256i tap =
                _mm256_add_epi32(base, _mm256_set1_epi32(static_cast<int32_t>(t * in_w + u)));
            __m256 take;
            if (t == 0 && u == 0) {
                best = v[0];
                at_ = tap;
                continue;
            }
            take = _mm256_or_ps(_mm256_cmp_ps(v[u], best, _CMP_GT_OQ),
                                _mm256_cmp_ps(v[u], v[u], _CMP_UNORD_Q));
            best = _mm256_blendv_ps(best, v[u], take);
            at_ = take_index8(at_, tap, take);
        }
    }
    if (!exact) {
        if (_mm256_movemask_ps(nan))
            return 1;
        at_ = _mm256_add_epi32(at_, base);
    }
    best = unpermute8(best, k);  // p's 4 outputs, then q's
    at_ = unpermute8i(at_, k);
    _mm_storeu_ps(out_p, _mm256_castps256_ps128(best));
    _mm_storeu_ps(out_q, _mm256_extractf128_ps(best, 1));
    store_indices8(idx_p, idx_q, at_, index_base);  // p's 4, then q's
    return 0;
}

// argblock8x2 of a row's outputs o.. and o2.. (left: o == 0 is a left edge):
// the NaN-free version, then the exact one if a tap was NaN
OVPOOL_INLINE void argpair8(const float *row0, ptrdiff_t in_w, float *out, int64_t *index,
                            ptrdiff_t o, ptrdiff_t o2, int32_t row_offset, int64_t index_base,
                            int kh, int stride, int k, int left) {
    if (argblock8x2(row0 + o * stride, row0 + o2 * stride, in_w, out + o, out + o2, index + o,
                    index + o2, static_cast<int32_t>(row_offset + o * stride),
                    static_cast<int32_t>(row_offset + o2 * stride), index_base, kh, stride, k, left,
                    0))
        argblock8x2(row0 + o * stride, row0 + o2 * stride, in_w, out + o, out + o2, index + o,
                    index + o2, static_cast<int32_t>(row_offset + o * stride),
                    static_cast<int32_t>(row_offset + o2 * stride), index_base, kh, stride, k, left,
                    1);
}

// One window row of a pair of 8-output blocks (p, q) in argrows_k3: the
// first maximum of each output's 3 taps (lanes in taps8s's order), and in
// pos its in-plane position, base[u] + row for tap u (p's base[0..2], q's
// base[3..5]); NaN-free. left: as taps8s_left (its lane 0's base[0] is its
// base[1]). Any NaN tap is set in *nan: taps 1 and 2 hold every column but
// tap 0 of output 0, which the block before holds (tap 2 of its last output
// or after) unless p is the first block of its chunk: first_p checks it.
OVPOOL_INLINE void row_argmax3x2(const float *p, const float *q, int stride, int left, int first_p,
                                 const __m256i *base, __m256i row, __m256 h[2], __m256i pos[2],
                                 __m256 *nan) {
    __m256 v[4], w[4];
    if (left)
        taps8s_left(p, stride, v);
    else
        taps8s(p, stride, 3, v);
    taps8s(q, stride, 3, w);
    __m256 odd = _mm256_or_ps(_mm256_cmp_ps(v[1], w[1], _CMP_UNORD_Q),
                              _mm256_cmp_ps(v[2], w[2], _CMP_UNORD_Q));
    if (first_p && !left)
        odd = _mm256_or_ps(odd, _mm256_cmp_ps(v[0], v[0], _CMP_UNORD_Q));
    *nan = _mm256_or_ps(*nan, odd);
    __m256 take_p = _mm256_cmp_ps(v[1], v[0], _CMP_GT_OQ);
    __m256 take_q = _mm256_cmp_ps(w[1], w[0], _CMP_GT_OQ);
    __m256 m_p = _mm256_max_ps(v[1], v[0]), m_q = _mm256_max_ps(w[1], w[0]);
    __m256i at_p = take_index8(base[0], base[1], take_p);
    __m256i at_q = take_index8(base[3], base[4], take_q);
    take_p = _mm256_cmp_ps(v[2], m_p, _CMP_GT_OQ);
    take_q = _mm256_cmp_ps(w[2], m_q, _CMP_GT_OQ);
    pos[0] = _mm256_add_epi32(take_index8(at_p, base[2], take_p), row);
    pos[1] = _mm256_add_epi32(take_index8(at_q, base[5], take_q), row);
    h[0] = _mm256_max_ps(v[2], m_p);
    h[1] = _mm256_max_ps(w[2], m_q);
}

// What one pair of 8-output blocks keeps from an output row to the next in
// argrows_k3: its lanes' tap offsets (p's taps 0..2, then q's) and the
// horizontal argmax of the window rows the next output row shares.
struct ArgCarry {
    __m256i base[6];
    __m256 value[2][2];  // [shared window row][p, q]
    __m256i at[2][2];
};

// One output row of a pair of blocks (p, q: their window row 0) in
// argrows_k3: the rows not kept from the row before (all 3 when first) by
// row_argmax3x2, then the three combined top to bottom.
OVPOOL_INLINE void argstep8x2_k3(const float *p, const float *q, ptrdiff_t in_w, float *out_p,
                                 float *out_q, int64_t *idx_p, int64_t *idx_q, int64_t index_base,
                                 int stride, int row_stride, int left, int first_p, int first,
                                 int32_t row_at, ArgCarry *c, __m256 *nan) {
    int kw = lane_kw(stride, 3), kept = 3 - row_stride, t = 0;
    __m256 h[3][2];
    __m256i at_[3][2];
    if (!first)
        for (; t < kept; t++) {
            h[t][0] = c->value[t][0];
            h[t][1] = c->value[t][1];
            at_[t][0] = c->at[t][0];
            at_[t][1] = c->at[t][1];
        }
    for (; t < 3; t++)
        row_argmax3x2(p + t * in_w, q + t * in_w, stride, left, first_p, c->base,
                      _mm256_set1_epi32(row_at + static_cast<int32_t>(t * in_w)), h[t], at_[t],
                      nan);
    for (t = 0; t < kept; t++) {
        c->value[t][0] = h[t + row_stride][0];
        c->value[t][1] = h[t + row_stride][1];
        c->at[t][0] = at_[t + row_stride][0];
        c->at[t][1] = at_[t + row_stride][1];
    }
    for (int j = 0; j < 2; j++) {
        __m256 take = _mm256_cmp_ps(h[1][j], h[0][j], _CMP_GT_OQ);
        __m256 best = _mm256_max_ps(h[1][j], h[0][j]);
        __m256i pos = take_index8(at_[0][j], at_[1][j], take);
        take = _mm256_cmp_ps(h[2][j], best, _CMP_GT_OQ);
        best = _mm256_max_ps(h[2][j], best);
        pos = take_index8(pos, at_[2][j], take);
        int64_t *idx = j ? idx_q : idx_p;
        _mm256_storeu_ps(j ? out_q : out_p, unpermute8(best, kw));
        store_indices8(idx, idx + 4, unpermute8i(pos, kw), index_base);
    }
}

// Block pairs per chunk of argrows_k3: 256 outputs, 7 KiB of carries.
constexpr ptrdiff_t kArgChunk = 16;

// One output row r of argrows_k3 over the block pairs b0 .. b_end of a chunk
// (first: the chunk's first row, whose window rows are all taken anew): the
// chunk's first pair (a left edge, or its first block's tap 0 checked for
// NaN), then the others.
OVPOOL_INLINE void argrow_k3(const float *row0, ptrdiff_t in_w, float *out, int64_t *index,
                             ptrdiff_t r, ptrdiff_t row_step, ptrdiff_t out_stride,
                             const ptrdiff_t *o, ptrdiff_t b0, ptrdiff_t b_end, int64_t index_base,
                             int stride, int row_stride, int left, int first, ArgCarry *carry,
                             __m256 *nan) {
    const float *rows = row0 + r * row_step;
    int32_t row_at = static_cast<int32_t>(r * row_step);
    float *out_r = out + r * out_stride;
    int64_t *index_r = index + r * out_stride;
    const ptrdiff_t op = o[0], oq = o[1];
    if (left && b0 == 0)
        argstep8x2_k3(rows + op * stride, rows + oq * stride, in_w, out_r + op, out_r + oq,
                      index_r + op, index_r + oq, index_base, stride, row_stride, 1, 1, first,
                      row_at, carry, nan);
    else
        argstep8x2_k3(rows + op * stride, rows + oq * stride, in_w, out_r + op, out_r + oq,
                      index_r + op, index_r + oq, index_base, stride, row_stride, 0, 1, first,
                      row_at, carry, nan);
    for (ptrdiff_t b = b0 + 2; b < b_end; b += 2) {
        const ptrdiff_t bp = o[b - b0], bq = o[b - b0 + 1];
        argstep8x2_k3(rows + bp * stride, rows + bq * stride, in_w, out_r + bp, out_r + bq,
                      index_r + bp, index_r + bq, index_base, stride, row_stride, 0, 0, first,
                      row_at, carry + (b - b0) / 2, nan);
    }
}

// argmax_rows_f32 of 3x3 windows (W stride 1 or 2) whose output rows step
// down row_stride (1 or 2) input rows, NaN-free first: each input row's
// horizontal argmax is taken once, and the 3 - row_stride window rows an
// output row shares with the next are kept (per block pair, in a carry)
// instead of taken again. The row's first maximum, then the first row
// holding the maximum, is the first maximum in row-major order. The rows go
// in order through chunks of 256 outputs, so the input streams as in the row
// path (a walk down each pair's columns was 1.4x slower beyond L3). 1.8x
// fewer instructions than the 9-tap fold of every output row. Where a tap of
// a chunk is NaN, its rows are redone with the exact rule.
OVPOOL_INLINE void argrows_k3(const float *row0, ptrdiff_t in_w, float *out, int64_t *index,
                              ptrdiff_t n_out, int32_t row_offset, int64_t index_base, int stride,
                              int row_stride, int left, ptrdiff_t n_rows, ptrdiff_t out_stride) {
    ArgCarry carry[kArgChunk];
    ptrdiff_t n_blocks = (n_out + 7) / 8, row_step = row_stride * in_w;
    __m256i lanes = lane_starts8(stride, 3);
    __m256i one = _mm256_set1_epi32(1);
    for (ptrdiff_t b0 = 0; b0 < n_blocks; b0 += 2 * kArgChunk) {
        ptrdiff_t b_end = b0 + 2 * kArgChunk < n_blocks ? b0 + 2 * kArgChunk : n_blocks;
        ptrdiff_t o[2 * kArgChunk] = {};
        __m256 nan = _mm256_setzero_ps();
        for (ptrdiff_t b = b0; b < b_end; b += 2) {
            ArgCarry *c = carry + (b - b0) / 2;
            o[b - b0] = block_start(b, 8, n_out);
            o[b - b0 + 1] = block_start(b + 1 < n_blocks ? b + 1 : b, 8, n_out);
            for (int j = 0; j < 2; j++) {
                c->base[3 * j] = _mm256_add_epi32(
                    lanes,
                    _mm256_set1_epi32(static_cast<int32_t>(row_offset + o[b - b0 + j] * stride)));
                c->base[3 * j + 1] = _mm256_add_epi32(c->base[3 * j], one);
                c->base[3 * j + 2] = _mm256_add_epi32(c->base[3 * j + 1], one);
            }
            if (left && b == 0)  // output 0's tap 0 repeats tap 1, column 0
                c->base[0] = _mm256_blend_epi32(c->base[0], c->base[1], 1);
        }
        // output row 0 takes all its window rows, the rest keep the shared ones
        argrow_k3(row0, in_w, out, index, 0, row_step, out_stride, o, b0, b_end, index_base, stride,
                  row_stride, left, 1, carry, &nan);
        for (ptrdiff_t r = 1; r < n_rows; r++)
            argrow_k3(row0, in_w, out, index, r, row_step, out_stride, o, b0, b_end, index_base,
                      stride, row_stride, left, 0, carry, &nan);
        if (!_mm256_movemask_ps(nan))
            continue;
        for (ptrdiff_t r = 0; r < n_rows; r++)
            for (ptrdiff_t b = b0; b < b_end; b += 2) {
                ptrdiff_t op = o[b - b0], oq = o[b - b0 + 1];
                argblock8x2(row0 + r * row_step + op * stride, row0 + r * row_step + oq * stride,
                            in_w, out + r * out_stride + op, out + r * out_stride + oq,
                            index + r * out_stride + op, index + r * out_stride + oq,
                            static_cast<int32_t>(row_offset + r * row_step + op * stride),
                            static_cast<int32_t>(row_offset + r * row_step + oq * stride),
                            index_base, 3, stride, 3, left && b == 0, 1);
            }
    }
}
#endif  // __AVX2__

#if defined(__SSE2__)
OVPOOL_INLINE void argmax_sk(const float *row0, ptrdiff_t in_w, float *out, int64_t *index,
                             ptrdiff_t n_out, int kh, int stride, int k, int32_t row_offset,
                             int64_t index_base, int left) {
#if defined(__AVX2__)
    if (n_out >= 8) {
        ptrdiff_t n_blocks = (n_out + 7) / 8, b;
        for (b = 0; b < n_blocks; b += 2) {
            ptrdiff_t o = block_start(b, 8, n_out);
            ptrdiff_t o2 = block_start(b + 1 < n_blocks ? b + 1 : b, 8, n_out);
            if (k == 3 && left && b == 0)  // see left_edge_ok
                argpair8(row0, in_w, out, index, o, o2, row_offset, index_base, kh, stride, k, 1);
            else
                argpair8(row0, in_w, out, index, o, o2, row_offset, index_base, kh, stride, k, 0);
        }
        return;
    }
#endif
    (void)left;
    ptrdiff_t n_blocks = (n_out + 3) / 4, b;
    for (b = 0; b < n_blocks; b += 2) {
        ptrdiff_t o = block_start(b, 4, n_out);
        ptrdiff_t o2 = block_start(b + 1 < n_blocks ? b + 1 : b, 4, n_out);
#if defined(__AVX2__)
        if (stride == k) {  // the tilings (4-7 outputs: adaptive 28->7)
            if (argblock4x2_wide(
                    row0 + o * stride, row0 + o2 * stride, in_w, out + o, out + o2, index + o,
                    index + o2, static_cast<int32_t>(row_offset + o * stride),
                    static_cast<int32_t>(row_offset + o2 * stride), index_base, kh, k, 0))
                argblock4x2_wide(
                    row0 + o * stride, row0 + o2 * stride, in_w, out + o, out + o2, index + o,
                    index + o2, static_cast<int32_t>(row_offset + o * stride),
                    static_cast<int32_t>(row_offset + o2 * stride), index_base, kh, k, 1);
            continue;
        }
#endif
        if (argblock4x2(row0 + o * stride, row0 + o2 * stride, in_w, out + o, out + o2, index + o,
                        index + o2, static_cast<int32_t>(row_offset + o * stride),
                        static_cast<int32_t>(row_offset + o2 * stride), index_base, kh, stride, k,
                        0))
            argblock4x2(row0 + o * stride, row0 + o2 * stride, in_w, out + o, out + o2, index + o,
                        index + o2, static_cast<int32_t>(row_offset + o * stride),
                        static_cast<int32_t>(row_offset + o2 * stride), index_base, kh, stride, k,
                        1);
    }
}
#endif  // __SSE2__

// Needs vector_rows_ok(n_out, stride, k); row0 is output 0's first tap.
inline void argmax_row_f32(const float *row0, ptrdiff_t in_w, float *out, int64_t *index,
                           ptrdiff_t n_out, int kh, int stride, int k, int32_t row_offset,
                           int64_t index_base, int left) {
#if defined(__SSE2__)
    if (k == 3 && stride == 2)
        argmax_sk(row0, in_w, out, index, n_out, kh, 2, 3, row_offset, index_base, left);
    else if (k == 3)  // stride 1
        argmax_sk(row0, in_w, out, index, n_out, kh, 1, 3, row_offset, index_base, left);
    else if (k == 1)  // the tilings: stride == k
        argmax_sk(row0, in_w, out, index, n_out, kh, 1, 1, row_offset, index_base, 0);
    else if (k == 2)
        argmax_sk(row0, in_w, out, index, n_out, kh, 2, 2, row_offset, index_base, 0);
    else
        argmax_sk(row0, in_w, out, index, n_out, kh, 4, 4, row_offset, index_base, 0);
#else
    (void)row0;
    (void)in_w;
    (void)out;
    (void)index;
    (void)n_out;
    (void)kh;
    (void)stride;
    (void)k;
    (void)row_offset;
    (void)index_base;
    (void)left;
#endif
}

#if defined(__SSE2__)
// argmax_sk of n_rows output rows with literal (stride, k, left).
template <int S, int K>
OVPOOL_INLINE void argmax_rows_sk(const float *row0, ptrdiff_t in_w, float *out, int64_t *index,
                                  ptrdiff_t n_out, int kh, int32_t row_offset, int64_t index_base,
                                  int left, ptrdiff_t n_rows, ptrdiff_t row_step,
                                  ptrdiff_t out_stride) {
    for (ptrdiff_t r = 0; r < n_rows; r++)
        argmax_sk(row0 + r * row_step, in_w, out + r * out_stride, index + r * out_stride, n_out,
                  kh, S, K, static_cast<int32_t>(row_offset + r * row_step), index_base, left);
}
#endif

// argmax_row_f32 of n_rows output rows: row r's output 0 window at
// row0 + r * row_step (in-plane offset row_offset + r * row_step), its
// values at out + r * out_stride and its indices at index + r * out_stride
// (a row's n_out outputs may be the interior of a longer row). One call for
// a run of rows: the per-row set-up and the caller's loop took 12-20% of the
// time (paired: adaptive max 28->7 with indices 0.88x, 3x3 s2 p1 on
// 8x64x56x56 with indices 0.83x at 1 and 2 threads). A function of its own:
// the rows loop inside argmax_row_f32 made its single rows 10-14% slower.
inline void argmax_rows_f32(const float *row0, ptrdiff_t in_w, float *out, int64_t *index,
                            ptrdiff_t n_out, int kh, int stride, int k, int32_t row_offset,
                            int64_t index_base, int left, ptrdiff_t n_rows, ptrdiff_t row_step,
                            ptrdiff_t out_stride) {
#if defined(__AVX2__)
    // 3x3 windows stepping 1 or 2 rows: the shared window rows kept
    if (k == 3 && kh == 3 && n_out >= 8 && n_rows > 1 &&
        (row_step == in_w || row_step == 2 * in_w)) {
        if (stride == 2) {
            if (row_step == in_w)
                argrows_k3(row0, in_w, out, index, n_out, row_offset, index_base, 2, 1, left,
                           n_rows, out_stride);
            else
                argrows_k3(row0, in_w, out, index, n_out, row_offset, index_base, 2, 2, left,
                           n_rows, out_stride);
        } else {
            if (row_step == in_w)
                argrows_k3(row0, in_w, out, index, n_out, row_offset, index_base, 1, 1, left,
                           n_rows, out_stride);
            else
                argrows_k3(row0, in_w, out, index, n_out, row_offset, index_base, 1, 2, left,
                           n_rows, out_stride);
        }
        return;
    }
#endif
#if defined(__SSE2__)
    if (k == 3 && stride == 2)
        argmax_rows_sk<2, 3>(row0, in_w, out, index, n_out, kh, row_offset, index_base, left,
                             n_rows, row_step, out_stride);
    else if (k == 3)  // stride 1
        argmax_rows_sk<1, 3>(row0, in_w, out, index, n_out, kh, row_offset, index_base, left,
                             n_rows, row_step, out_stride);
    else if (k == 1)  // the tilings: stride == k
        argmax_rows_sk<1, 1>(row0, in_w, out, index, n_out, kh, row_offset, index_base, 0, n_rows,
                             row_step, out_stride);
    else if (k == 2)
        argmax_rows_sk<2, 2>(row0, in_w, out, index, n_out, kh, row_offset, index_base, 0, n_rows,
                             row_step, out_stride);
    else
        argmax_rows_sk<4, 4>(row0, in_w, out, index, n_out, kh, row_offset, index_base, 0, n_rows,
                             row_step, out_stride);
#else
    (void)row0;
    (void)in_w;
    (void)out;
    (void)index;
    (void)n_out;
    (void)kh;
    (void)stride;
    (void)k;
    (void)row_offset;
    (void)index_base;
    (void)left;
    (void)n_rows;
    (void)row_step;
    (void)out_stride;
#endif
}

// Whether argmax_row_f32 takes, with left set, n_out outputs whose first
// (output 0) has 3-tap windows starting one column left of the row (W
// padding 1, stride 1 or 2; see taps8s_left): AVX2 builds, 8 outputs or more
// (the 8-lane blocks).
inline bool left_edge_ok(ptrdiff_t n_out, int64_t stride, int64_t k, ptrdiff_t pad) {
#if defined(__AVX2__)
    return n_out >= 8 && k == 3 && (stride == 1 || stride == 2) && pad == 1;
#else
    (void)n_out;
    (void)stride;
    (void)k;
    (void)pad;
    return false;
#endif
}

}  // namespace simd
OVPOOL_END
