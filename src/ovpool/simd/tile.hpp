// Tiling windows (kernel == stride, kw in {1, 2, 4}), float32 or float16:
// runs of output rows straight from the input.
//
// out[o] = taps of window o combined in row-major order (row t, then column
// u), the order of the scalar tiling passes and of PyTorch, so sums are
// bit-exact with it (Lp norms of p 1 and 2 sum |x| or x * x in that
// order, as the blocked kernel does). Vector lanes are outputs; a lane's kw
// taps are kw consecutive elements, so kw vectors of taps come from kw
// contiguous loads and a deinterleave. A row is covered by whole vector blocks, the last one
// overlapping the one before it (its outputs are recomputed from the input,
// not accumulated), so rows of 4 to 15 outputs (adaptive 28->7, 14->7) need
// no scalar tail. Loads stay within the first out_w * kw elements of each
// window row.
#pragma once

#include "vec.hpp"

OVPOOL_BEGIN
namespace simd {

// What a tile kernel makes of a window's taps: their maximum, or a sum of
// them (divided: averages), of their squares (square-rooted: Lp 2) or of
// their magnitudes (Lp 1).
enum TileOp : int { kTileSum = 0, kTileMax = 1, kTileSquares = 2, kTileAbs = 3 };

// 1 when dividing by divisor is multiplying by *factor (a power of two:
// x * 2^-k and x / 2^k round the same exact value); else *factor = divisor.
inline int tile_scale(float divisor, float *factor) {
    int exponent;
    if (std::frexp(divisor, &exponent) == 0.5f) {
        *factor = 1.0f / divisor;
        return 1;
    }
    *factor = divisor;
    return 0;
}

// The rows tile_rows_f32 (stride == k) and argmax_row_f32 take: 4+ outputs
// (one whole vector block) of a tiling (stride == k in 1, 2, 4) or of 3-tap
// windows at stride 2 or 1.
inline bool vector_rows_ok(ptrdiff_t n_out, int64_t stride, int64_t k) {
#if defined(__SSE2__)
    return n_out >= 4 && ((stride == k && (k == 1 || k == 2 || k == 4)) ||
                          (k == 3 && (stride == 1 || stride == 2)));
#else
    (void)n_out;
    (void)stride;
    (void)k;
    return false;
#endif
}

#if defined(__SSE2__)
// A tap as op combines it: |x| or x * x for the Lp sums.
OVPOOL_INLINE __m128 fold4(__m128 v, int op) {
    if (op == kTileSquares)
        return _mm_mul_ps(v, v);
    if (op == kTileAbs)
        return _mm_andnot_ps(_mm_set1_ps(-0.0f), v);
    return v;
}

OVPOOL_INLINE __m128 comb4(__m128 acc, __m128 v, __m128 *nan, int op) {
    if (op != kTileMax)
        return _mm_add_ps(acc, fold4(v, op));
    *nan = _mm_or_ps(*nan, _mm_cmpunord_ps(v, v));
    return _mm_max_ps(acc, v);  // acc > v ? acc : v, as the scalar chain
}

// A window's result from its combined taps: the canonical NaN where a max
// met one, the average's divide (a multiply by factor with scale), the
// square root of Lp 2.
OVPOOL_INLINE __m128 finish4(__m128 acc, __m128 nan, int op, int scale, __m128 divisor) {
    if (op == kTileMax)
        return _mm_or_ps(_mm_andnot_ps(nan, acc), _mm_and_ps(nan, _mm_set1_ps(NAN)));
    if (op == kTileSquares)
        return _mm_sqrt_ps(acc);
    if (op == kTileAbs)
        return acc;
    return scale ? _mm_mul_ps(acc, divisor) : _mm_div_ps(acc, divisor);
}

// Blocks at p and q at once: each block is a serial chain of kh * kw
// operations (the exact tap order), so two chains keep the adder busy.
// With scale set, divisor holds the factor of tile_scale.
OVPOOL_INLINE void tile_block4x2(const void *p, const void *q, ptrdiff_t in_w, void *out_p,
                                 void *out_q, int kh, int kw, int op, int scale, __m128 divisor,
                                 int half) {
    __m128 v[4], w[4], acc_p, acc_q, nan_p, nan_q;
    taps4(p, kw, v, half);
    taps4(q, kw, w, half);
    acc_p = fold4(v[0], op);
    acc_q = fold4(w[0], op);
    nan_p = _mm_cmpunord_ps(acc_p, acc_p);
    nan_q = _mm_cmpunord_ps(acc_q, acc_q);
    for (int u = 1; u < kw; u++) {  // constant kw: fully unrolled
        acc_p = comb4(acc_p, v[u], &nan_p, op);
        acc_q = comb4(acc_q, w[u], &nan_q, op);
    }
    for (int t = 1; t < kh; t++) {
        taps4(at(p, t * in_w, half), kw, v, half);
        taps4(at(q, t * in_w, half), kw, w, half);
        for (int u = 0; u < kw; u++) {
            acc_p = comb4(acc_p, v[u], &nan_p, op);
            acc_q = comb4(acc_q, w[u], &nan_q, op);
        }
    }
    store4(out_p, finish4(acc_p, nan_p, op, scale, divisor), half);
    store4(out_q, finish4(acc_q, nan_q, op, scale, divisor), half);
}
#endif  // __SSE2__

#if defined(__AVX2__)
OVPOOL_INLINE __m256 fold8(__m256 v, int op) {
    if (op == kTileSquares)
        return _mm256_mul_ps(v, v);
    if (op == kTileAbs)
        return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
    return v;
}

OVPOOL_INLINE __m256 comb8(__m256 acc, __m256 v, __m256 *nan, int op) {
    if (op != kTileMax)
        return _mm256_add_ps(acc, fold8(v, op));
    *nan = _mm256_or_ps(*nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_max_ps(acc, v);
}

OVPOOL_INLINE __m256 finish8(__m256 acc, __m256 nan, int op, int scale, __m256 divisor) {
    if (op == kTileMax)
        return _mm256_blendv_ps(acc, _mm256_set1_ps(NAN), nan);
    if (op == kTileSquares)
        return _mm256_sqrt_ps(acc);
    if (op == kTileAbs)
        return acc;
    return scale ? _mm256_mul_ps(acc, divisor) : _mm256_div_ps(acc, divisor);
}

// tile_block4x2 for 8 outputs; the lanes come out permuted (unpermute8).
OVPOOL_INLINE void tile_block8x2(const void *p, const void *q, ptrdiff_t in_w, void *out_p,
                                 void *out_q, int kh, int kw, int op, int scale, __m256 divisor,
                                 int half) {
    __m256 v[4], w[4], acc_p, acc_q, nan_p, nan_q;
    taps8(p, kw, v, half);
    taps8(q, kw, w, half);
    acc_p = fold8(v[0], op);
    acc_q = fold8(w[0], op);
    nan_p = _mm256_cmp_ps(acc_p, acc_p, _CMP_UNORD_Q);
    nan_q = _mm256_cmp_ps(acc_q, acc_q, _CMP_UNORD_Q);
    for (int u = 1; u < kw; u++) {
        acc_p = comb8(acc_p, v[u], &nan_p, op);
        acc_q = comb8(acc_q, w[u], &nan_q, op);
    }
    for (int t = 1; t < kh; t++) {
        taps8(at(p, t * in_w, half), kw, v, half);
        taps8(at(q, t * in_w, half), kw, w, half);
        for (int u = 0; u < kw; u++) {
            acc_p = comb8(acc_p, v[u], &nan_p, op);
            acc_q = comb8(acc_q, w[u], &nan_q, op);
        }
    }
    store8(out_p, unpermute8(finish8(acc_p, nan_p, op, scale, divisor), kw), half);
    store8(out_q, unpermute8(finish8(acc_q, nan_q, op, scale, divisor), kw), half);
}

// tile_block4x2 with its two blocks side by side in 256-bit registers (rows
// of 4-7 outputs: adaptive 28->7, 14->7): the same operation on every lane as
// the 4-lane block, so the same bits, with half the shuffles, adds and
// (float16) conversions. n (1 or 2, a constant) output rows at once, the
// second one next elements of input and out_next bytes of output on: the
// taps of a window are added in order, one dependent chain per row, and two
// chains hide each other's latency (adaptive 8x512x28x28 -> 7 in float16:
// 0.434 -> 0.400 ms at 1 thread, 0.225 -> 0.207 ms at 2).
OVPOOL_INLINE void tile_block4x2_wide(const void *p, const void *q, ptrdiff_t in_w, void *out_p,
                                      void *out_q, int kh, int kw, int op, int scale,
                                      __m256 divisor, int half, int n, ptrdiff_t next,
                                      ptrdiff_t out_next) {
    __m256 v[2][4], acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    __m256 nan[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int t = 0; t < kh; t++) {
        for (int j = 0; j < n; j++)
            taps4x2(at(p, j * next + t * in_w, half), at(q, j * next + t * in_w, half), kw, v[j],
                    half);
        for (int u = 0; u < kw; u++)
            for (int j = 0; j < n; j++) {
                if (t == 0 && u == 0) {
                    acc[j] = fold8(v[j][0], op);
                    nan[j] = _mm256_cmp_ps(acc[j], acc[j], _CMP_UNORD_Q);
                } else {
                    acc[j] = comb8(acc[j], v[j][u], &nan[j], op);
                }
            }
    }
    for (int j = 0; j < n; j++) {
        char *to_p = static_cast<char *>(out_p) + j * out_next;
        char *to_q = static_cast<char *>(out_q) + j * out_next;
        // p's 4 outputs, then q's
        const __m256 a = unpermute8(finish8(acc[j], nan[j], op, scale, divisor), kw);
#if defined(__F16C__)
        if (half) {
            __m128i h = _mm256_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT);
            _mm_storel_epi64(reinterpret_cast<__m128i *>(to_p), h);
            _mm_storel_epi64(reinterpret_cast<__m128i *>(to_q), _mm_unpackhi_epi64(h, h));
            continue;
        }
#endif
        _mm_storeu_ps(reinterpret_cast<float *>(to_p), _mm256_castps256_ps128(a));
        _mm_storeu_ps(reinterpret_cast<float *>(to_q), _mm256_extractf128_ps(a, 1));
    }
}
#endif  // __AVX2__

#if defined(__SSE2__)
OVPOOL_INLINE void tile_row_kw(const void *row0, ptrdiff_t in_w, void *out, ptrdiff_t out_w, int kh,
                               int kw, int op, int scale, float divisor, int half) {
    // block starts 0, L, 2L, ..., and out_w - L for a partial last block,
    // taken two at a time (an odd count repeats the last block)
    ptrdiff_t out_size =
        half ? static_cast<ptrdiff_t>(sizeof(uint16_t)) : static_cast<ptrdiff_t>(sizeof(float));
#if defined(__AVX2__)
    if (out_w >= 8) {
        ptrdiff_t n_blocks = (out_w + 7) / 8, b;
        __m256 d8 = _mm256_set1_ps(divisor);
        for (b = 0; b < n_blocks; b += 2) {
            ptrdiff_t o = block_start(b, 8, out_w);
            ptrdiff_t o2 = block_start(b + 1 < n_blocks ? b + 1 : b, 8, out_w);
            tile_block8x2(at(row0, o * kw, half), at(row0, o2 * kw, half), in_w,
                          static_cast<char *>(out) + o * out_size,
                          static_cast<char *>(out) + o2 * out_size, kh, kw, op, scale, d8, half);
        }
        return;
    }
#endif
    ptrdiff_t n_blocks = (out_w + 3) / 4, b;
    __m128 d4 = _mm_set1_ps(divisor);
    for (b = 0; b < n_blocks; b += 2) {
        ptrdiff_t o = block_start(b, 4, out_w);
        ptrdiff_t o2 = block_start(b + 1 < n_blocks ? b + 1 : b, 4, out_w);
#if defined(__AVX2__)
        tile_block4x2_wide(at(row0, o * kw, half), at(row0, o2 * kw, half), in_w,
                           static_cast<char *>(out) + o * out_size,
                           static_cast<char *>(out) + o2 * out_size, kh, kw, op, scale,
                           _mm256_set1_ps(divisor), half, 1, 0, 0);
        (void)d4;
#else
        tile_block4x2(at(row0, o * kw, half), at(row0, o2 * kw, half), in_w,
                      static_cast<char *>(out) + o * out_size,
                      static_cast<char *>(out) + o2 * out_size, kh, kw, op, scale, d4, half);
#endif
    }
}

OVPOOL_INLINE void tile_rows_kw(const void *row0, ptrdiff_t in_w, void *out, ptrdiff_t out_w,
                                ptrdiff_t n_rows, int kh, int kw, int op, int scale, float divisor,
                                int half, ptrdiff_t ahead) {
    ptrdiff_t out_size =
        half ? static_cast<ptrdiff_t>(sizeof(uint16_t)) : static_cast<ptrdiff_t>(sizeof(float));
    ptrdiff_t r = 0;
#if defined(__AVX2__)
    if (half && out_w >= 4 && out_w < 8) {
        // one pair of 4-lane blocks a row (at 0 and out_w - 4): two rows at a
        // time, float16 only (float32 28->7 at 1 thread went 0.33 -> 0.37 ms)
        const ptrdiff_t o2 = out_w - 4, next = kh * in_w, out_next = out_w * out_size;
        for (; r + 2 <= n_rows; r += 2) {
            prefetch_span(static_cast<const char *>(at(row0, r * next, half)) + ahead,
                          ahead ? 2 * next * out_size : 0);
            tile_block4x2_wide(at(row0, r * next, half), at(row0, r * next + o2 * kw, half), in_w,
                               static_cast<char *>(out) + r * out_next,
                               static_cast<char *>(out) + r * out_next + o2 * out_size, kh, kw, op,
                               scale, _mm256_set1_ps(divisor), half, 2, next, out_next);
        }
    }
#endif
    for (; r < n_rows; r++) {
        prefetch_span(static_cast<const char *>(at(row0, r * kh * in_w, half)) + ahead,
                      ahead ? kh * in_w * out_size : 0);
        tile_row_kw(at(row0, r * kh * in_w, half), in_w,
                    static_cast<char *>(out) + r * out_w * out_size, out_w, kh, kw, op, scale,
                    divisor, half);
    }
}

// Every (op, scale, kw) instance for one element type (half constant).
OVPOOL_INLINE void tile_rows_any(const void *row0, ptrdiff_t in_w, void *out, ptrdiff_t out_w,
                                 ptrdiff_t n_rows, int kh, int kw, int op, int scale, float divisor,
                                 int half, ptrdiff_t ahead) {
    // kw, op and scale as constants: each instance unrolled (and inlined,
    // so that half stays a constant in it too)
    const auto by_kw = [&](auto op_c, auto scale_c) OVPOOL_INLINE_LAMBDA {
        if (kw == 1)
            tile_rows_kw(row0, in_w, out, out_w, n_rows, kh, 1, op_c, scale_c, divisor, half,
                         ahead);
        else if (kw == 2)
            tile_rows_kw(row0, in_w, out, out_w, n_rows, kh, 2, op_c, scale_c, divisor, half,
                         ahead);
        else
            tile_rows_kw(row0, in_w, out, out_w, n_rows, kh, 4, op_c, scale_c, divisor, half,
                         ahead);
    };
    using Max = std::integral_constant<int, kTileMax>;
    using Squares = std::integral_constant<int, kTileSquares>;
    using Abs = std::integral_constant<int, kTileAbs>;
    using Sum = std::integral_constant<int, kTileSum>;
    using Zero = std::integral_constant<int, 0>;
    using One = std::integral_constant<int, 1>;
    if (op == kTileMax)
        by_kw(Max(), Zero());
    else if (op == kTileSquares)
        by_kw(Squares(), Zero());
    else if (op == kTileAbs)
        by_kw(Abs(), Zero());
    else if (scale)
        by_kw(Sum(), One());
    else
        by_kw(Sum(), Zero());
}
#endif  // __SSE2__

// n_rows consecutive output rows of tiling windows: row r reads the kh input
// rows from row0 + r * kh * in_w and writes out + r * out_w. Needs
// vector_rows_ok(out_w, kw, kw); (scale, divisor) from tile_scale (the
// average's; op a TileOp). kw and op become constants here, so each instance
// is unrolled; kh stays a loop. A call per run of rows, not per row: a 7x7
// output plane paid more for the call than for its 7 rows.
inline void tile_rows_f32(const float *row0, ptrdiff_t in_w, float *out, ptrdiff_t out_w,
                          ptrdiff_t n_rows, int kh, int kw, int op, int scale, float divisor,
                          ptrdiff_t ahead) {
#if defined(__SSE2__)
    tile_rows_any(row0, in_w, out, out_w, n_rows, kh, kw, op, scale, divisor, 0, ahead);
#else
    (void)row0;
    (void)in_w;
    (void)out;
    (void)out_w;
    (void)n_rows;
    (void)kh;
    (void)kw;
    (void)op;
    (void)scale;
    (void)divisor;
    (void)ahead;
#endif
}

// The same on float16 rows and outputs, converted in registers; only where
// kF16cRows (else the caller widens into scratch).
inline void tile_rows_f16(const uint16_t *row0, ptrdiff_t in_w, uint16_t *out, ptrdiff_t out_w,
                          ptrdiff_t n_rows, int kh, int kw, int op, int scale, float divisor,
                          ptrdiff_t ahead) {
#if defined(__F16C__)
    tile_rows_any(row0, in_w, out, out_w, n_rows, kh, kw, op, scale, divisor, 1, ahead);
#else
    (void)row0;
    (void)in_w;
    (void)out;
    (void)out_w;
    (void)n_rows;
    (void)kh;
    (void)kw;
    (void)op;
    (void)scale;
    (void)divisor;
    (void)ahead;
#endif
}

}  // namespace simd
OVPOOL_END
