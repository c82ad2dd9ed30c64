/* Reductions that gcc does not vectorise from portable code.
 *
 * A NaN-propagating maximum of a contiguous span: the compare-select chain of
 * the Cython kernels is vectorised across output elements, but a reduction
 * of one span needs lanes, and gcc's SLP vectoriser gives up on lane arrays
 * with selects. These helpers keep maxps lanes plus a sticky "NaN seen" mask
 * (cmpunordps), with AVX when the build targets it (the x86-64-v3 build),
 * SSE2 otherwise (every x86-64), and a scalar loop elsewhere.
 */
#ifndef OVPOOL_SIMD_H
#define OVPOOL_SIMD_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__AVX__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Start of vector block b of width L over n >= L outputs: whole blocks, then
 * the last one moved back to end at n (it overlaps the one before it). */
static inline ptrdiff_t ovpool_block_start(ptrdiff_t b, ptrdiff_t L, ptrdiff_t n) {
    return b * L < n - L ? b * L : n - L;
}

#if defined(__GNUC__)
#define OVPOOL_INLINE __attribute__((always_inline))
#else
#define OVPOOL_INLINE
#endif

/* float16 and bfloat16 rows, converted to and from float32 in scratch.
 *
 * float16: F16C (vcvtph2ps / vcvtps2ph, round to nearest even) in the
 * x86-64-v3 build; elsewhere the exact scalar conversions of F. Giesen's
 * public-domain half.c (half_to_float_fast5, float_to_half_fast3_rtne).
 * bfloat16: the upper 16 bits of a float32, rounded to nearest even; a NaN
 * stays a quiet NaN. Both match numpy's and ml_dtypes' casts. */
#include <string.h>
#if defined(__F16C__)
#include <immintrin.h>
#endif

/* 1 where float16 is converted in registers (F16C: the x86-64-v3 build) by
 * the *_f16 helpers below; 0 where the callers widen into scratch. */
#if defined(__F16C__)
#define OVPOOL_F16C_ROWS 1
#else
#define OVPOOL_F16C_ROWS 0
#endif

static inline float ovpool_half_to_float(uint16_t h) {
    const uint32_t shifted_exp = 0x7c00u << 13;
    uint32_t bits = (uint32_t)(h & 0x7fffu) << 13, exp = shifted_exp & bits;
    float out, magic;
    uint32_t magic_bits = 113u << 23;
    memcpy(&magic, &magic_bits, 4);
    bits += (127u - 15u) << 23;
    if (exp == shifted_exp) {
        bits += (128u - 16u) << 23;               /* Inf / NaN */
        memcpy(&out, &bits, 4);
    } else if (exp == 0) {
        bits += 1u << 23;                         /* zero / subnormal */
        memcpy(&out, &bits, 4);
        out -= magic;
    } else {
        memcpy(&out, &bits, 4);
    }
    memcpy(&bits, &out, 4);
    bits |= (uint32_t)(h & 0x8000u) << 16;
    memcpy(&out, &bits, 4);
    return out;
}

static inline uint16_t ovpool_float_to_half(float value) {
    const uint32_t f32_infinity = 255u << 23, f16_max = (127u + 16u) << 23;
    const uint32_t denorm_magic_bits = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    uint32_t bits, sign;
    uint16_t out;
    float denorm_magic;
    memcpy(&denorm_magic, &denorm_magic_bits, 4);
    memcpy(&bits, &value, 4);
    sign = bits & 0x80000000u;
    bits ^= sign;
    if (bits >= f16_max) {
        out = bits > f32_infinity ? 0x7e00u : 0x7c00u;   /* NaN -> quiet NaN, Inf/overflow -> Inf */
    } else if (bits < (113u << 23)) {                  /* subnormal or zero */
        float f;
        memcpy(&f, &bits, 4);
        f += denorm_magic;
        memcpy(&bits, &f, 4);
        out = (uint16_t)(bits - denorm_magic_bits);
    } else {
        uint32_t mantissa_odd = (bits >> 13) & 1u;
        bits += ((uint32_t)(15 - 127) << 23) + 0xfffu;
        bits += mantissa_odd;
        out = (uint16_t)(bits >> 13);
    }
    return (uint16_t)(out | (sign >> 16));
}

static inline void ovpool_widen_f16(const uint16_t *src, float *dst, ptrdiff_t n) {
    ptrdiff_t i = 0;
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
#endif
    for (; i < n; i++) dst[i] = ovpool_half_to_float(src[i]);
}

static inline void ovpool_narrow_f16(const float *src, uint16_t *dst, ptrdiff_t n) {
    ptrdiff_t i = 0;
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
    for (; i < n; i++) dst[i] = ovpool_float_to_half(src[i]);
}

static inline void ovpool_widen_bf16(const uint16_t *src, float *dst, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++) {
        uint32_t bits = (uint32_t)src[i] << 16;
        memcpy(dst + i, &bits, 4);
    }
}

static inline void ovpool_narrow_bf16(const float *src, uint16_t *dst, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, src + i, 4);
        if ((bits & 0x7fffffffu) > 0x7f800000u)
            dst[i] = (uint16_t)((bits >> 16) | 0x40u);               /* quiet NaN */
        else
            dst[i] = (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
    }
}

static inline void ovpool_widen(const uint16_t *src, float *dst, ptrdiff_t n, int bf16) {
    if (bf16) ovpool_widen_bf16(src, dst, n); else ovpool_widen_f16(src, dst, n);
}

static inline void ovpool_narrow(const float *src, uint16_t *dst, ptrdiff_t n, int bf16) {
    if (bf16) ovpool_narrow_bf16(src, dst, n); else ovpool_narrow_f16(src, dst, n);
}

/* Loads and stores of the tiling blocks, from float32 rows or, with half set
 * (a constant in every instance), from float16 rows converted in registers
 * (F16C, the x86-64-v3 build): exact widening, and the narrowing of
 * ovpool_narrow_f16, so the same bits as widening the rows into scratch
 * first, without the scratch's store and reload (half of the 16-bit tiling
 * time). Offsets count elements. */
static inline OVPOOL_INLINE const void *ovpool_at(const void *p, ptrdiff_t i, int half) {
    return half ? (const void *)((const uint16_t *)p + i) : (const void *)((const float *)p + i);
}

#if defined(__SSE2__)
static inline OVPOOL_INLINE __m128 ovpool_load4(const void *p, ptrdiff_t i, int half) {
#if defined(__F16C__)
    if (half)
        return _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)((const uint16_t *)p + i)));
#endif
    (void)half;
    return _mm_loadu_ps((const float *)p + i);
}

static inline OVPOOL_INLINE void ovpool_store4(void *p, __m128 v, int half) {
#if defined(__F16C__)
    if (half) {
        _mm_storel_epi64((__m128i *)p, _mm_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
        return;
    }
#endif
    (void)half;
    _mm_storeu_ps((float *)p, v);
}
#endif

#if defined(__AVX2__)
static inline OVPOOL_INLINE __m256 ovpool_load8(const void *p, ptrdiff_t i, int half) {
#if defined(__F16C__)
    if (half)
        return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + i)));
#endif
    (void)half;
    return _mm256_loadu_ps((const float *)p + i);
}

static inline OVPOOL_INLINE void ovpool_store8(void *p, __m256 v, int half) {
#if defined(__F16C__)
    if (half) {
        _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
        return;
    }
#endif
    (void)half;
    _mm256_storeu_ps((float *)p, v);
}
#endif

/* One element, float32 or (half) float16. */
static inline OVPOOL_INLINE float ovpool_load1(const void *p, ptrdiff_t i, int half) {
    if (half) {
#if defined(__F16C__)
        return _cvtsh_ss(((const uint16_t *)p)[i]);
#else
        return ovpool_half_to_float(((const uint16_t *)p)[i]);
#endif
    }
    return ((const float *)p)[i];
}


static inline double ovpool_scalar_max_f64(const double *x, ptrdiff_t n, double acc, int *nan) {
    for (ptrdiff_t i = 0; i < n; i++) {
        double v = x[i];
        acc = acc > v ? acc : v;
        *nan |= (v != v);
    }
    return acc;
}

/* NaN-propagating maximum of x[0..n), n >= 1, of float32 values or, with
 * half set (a constant in every instance; F16C builds only), of float16
 * values converted in registers: the same operations on the same values.
 * The last vector block ends at n and may overlap the one before it (max is
 * idempotent): no scalar tail (global max of 7x7 planes: 17% faster). */
static inline OVPOOL_INLINE float ovpool_span_max_any(const void *x, ptrdiff_t n, int half) {
    ptrdiff_t i = 0;
    int nan = 0;
    float acc = -INFINITY;
#if defined(__AVX2__)
    if (n >= 8) {
        __m256 a = ovpool_load8(x, 0, half);
        __m256 u = _mm256_cmp_ps(a, a, _CMP_UNORD_Q);
        for (i = 8; i + 8 <= n; i += 8) {
            __m256 v = ovpool_load8(x, i, half);
            a = _mm256_max_ps(a, v);
            u = _mm256_or_ps(u, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        }
        if (i < n) {        /* a last block ending at n instead of a scalar tail */
            __m256 v = ovpool_load8(x, n - 8, half);
            a = _mm256_max_ps(a, v);
            u = _mm256_or_ps(u, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
            i = n;
        }
        __m128 b = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
        __m128 ub = _mm_or_ps(_mm256_castps256_ps128(u), _mm256_extractf128_ps(u, 1));
        b = _mm_max_ps(b, _mm_movehl_ps(b, b));
        b = _mm_max_ss(b, _mm_shuffle_ps(b, b, 1));
        acc = _mm_cvtss_f32(b);
        nan = _mm_movemask_ps(ub) != 0;
    }
#elif defined(__SSE2__)
    if (n >= 4) {
        __m128 a = ovpool_load4(x, 0, half);
        __m128 u = _mm_cmpunord_ps(a, a);
        for (i = 4; i + 4 <= n; i += 4) {
            __m128 v = ovpool_load4(x, i, half);
            a = _mm_max_ps(a, v);
            u = _mm_or_ps(u, _mm_cmpunord_ps(v, v));
        }
        if (i < n) {
            __m128 v = ovpool_load4(x, n - 4, half);
            a = _mm_max_ps(a, v);
            u = _mm_or_ps(u, _mm_cmpunord_ps(v, v));
            i = n;
        }
        a = _mm_max_ps(a, _mm_movehl_ps(a, a));
        a = _mm_max_ss(a, _mm_shuffle_ps(a, a, 1));
        acc = _mm_cvtss_f32(a);
        nan = _mm_movemask_ps(u) != 0;
    }
#endif
    for (; i < n; i++) {
        float v = ovpool_load1(x, i, half);
        acc = acc > v ? acc : v;
        nan |= (v != v);
    }
    return nan ? NAN : acc;
}

static inline float ovpool_span_max_f32(const float *x, ptrdiff_t n) {
    return ovpool_span_max_any(x, n, 0);
}

static inline double ovpool_span_max_f64(const double *x, ptrdiff_t n) {
    ptrdiff_t i = 0;
    int nan = 0;
    double acc = -INFINITY;
#if defined(__AVX__)
    if (n >= 4) {
        __m256d a = _mm256_loadu_pd(x);
        __m256d u = _mm256_cmp_pd(a, a, _CMP_UNORD_Q);
        for (i = 4; i + 4 <= n; i += 4) {
            __m256d v = _mm256_loadu_pd(x + i);
            a = _mm256_max_pd(a, v);
            u = _mm256_or_pd(u, _mm256_cmp_pd(v, v, _CMP_UNORD_Q));
        }
        if (i < n) {
            __m256d v = _mm256_loadu_pd(x + n - 4);
            a = _mm256_max_pd(a, v);
            u = _mm256_or_pd(u, _mm256_cmp_pd(v, v, _CMP_UNORD_Q));
            i = n;
        }
        __m128d b = _mm_max_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
        __m128d ub = _mm_or_pd(_mm256_castpd256_pd128(u), _mm256_extractf128_pd(u, 1));
        b = _mm_max_sd(b, _mm_unpackhi_pd(b, b));
        acc = _mm_cvtsd_f64(b);
        nan = _mm_movemask_pd(ub) != 0;
    }
#elif defined(__SSE2__)
    if (n >= 2) {
        __m128d a = _mm_loadu_pd(x);
        __m128d u = _mm_cmpunord_pd(a, a);
        for (i = 2; i + 2 <= n; i += 2) {
            __m128d v = _mm_loadu_pd(x + i);
            a = _mm_max_pd(a, v);
            u = _mm_or_pd(u, _mm_cmpunord_pd(v, v));
        }
        if (i < n) {
            __m128d v = _mm_loadu_pd(x + n - 2);
            a = _mm_max_pd(a, v);
            u = _mm_or_pd(u, _mm_cmpunord_pd(v, v));
            i = n;
        }
        a = _mm_max_sd(a, _mm_unpackhi_pd(a, a));
        acc = _mm_cvtsd_f64(a);
        nan = _mm_movemask_pd(u) != 0;
    }
#endif
    acc = ovpool_scalar_max_f64(x + i, n - i, acc, &nan);
    return nan ? NAN : acc;
}


/* Position of the first maximum of x[0..n) (n >= 1), or of the last NaN:
 * the maximum first, then a vector compare for its first occurrence. */
static inline ptrdiff_t ovpool_span_argmax_f32(const float *x, ptrdiff_t n) {
    float best = ovpool_span_max_f32(x, n);
    ptrdiff_t i = 0;
    if (best != best) {
        for (i = n - 1; x[i] == x[i]; i--) {}
        return i;
    }
#if defined(__SSE2__)
    __m128 b = _mm_set1_ps(best);
    for (; i + 4 <= n; i += 4) {
        int mask = _mm_movemask_ps(_mm_cmpeq_ps(_mm_loadu_ps(x + i), b));
        if (mask) return i + __builtin_ctz(mask);
    }
#endif
    while (!(x[i] == best)) i++;
    return i;
}

/* In-plane offset of the first maximum (or the last NaN) of a window of
 * n_rows x n_cols taps, row-major order: row row_first + t * dil_h, column
 * col_first + u * dil_w (n_rows, n_cols >= 1); *best gets its value. The take
 * rule (v > best) | isnan(v) over the taps in row-major order equals the
 * leftmost-per-row, then topmost rule. Without branches on the data: the
 * edge windows of max pooling with indices (those meeting the padding) took
 * 40% of a 3x3 s2 p1 call on random data in mispredicted compares. */
static inline int64_t ovpool_window_argmax_f32(const float *plane, ptrdiff_t in_w,
                                               ptrdiff_t row_first, ptrdiff_t n_rows,
                                               ptrdiff_t dil_h, ptrdiff_t col_first,
                                               ptrdiff_t n_cols, ptrdiff_t dil_w,
                                               float *best) {
    int64_t at = (int64_t)row_first * in_w + col_first;
#if defined(__SSE2__)
    __m128 b = _mm_load_ss(plane + at);
    for (ptrdiff_t t = 0; t < n_rows; t++) {
        int64_t row = (int64_t)(row_first + t * dil_h) * in_w;
        for (ptrdiff_t u = t == 0; u < n_cols; u++) {
            int64_t tap = row + col_first + u * dil_w;
            __m128 v = _mm_load_ss(plane + tap);
            __m128 take = _mm_or_ps(_mm_cmpgt_ss(v, b), _mm_cmpunord_ss(v, v));
            b = _mm_or_ps(_mm_and_ps(take, v), _mm_andnot_ps(take, b));
            at ^= (at ^ tap) & -(int64_t)(_mm_movemask_ps(take) & 1);
        }
    }
    *best = _mm_cvtss_f32(b);
#else
    float b = plane[at];
    for (ptrdiff_t t = 0; t < n_rows; t++) {
        int64_t row = (int64_t)(row_first + t * dil_h) * in_w;
        for (ptrdiff_t u = t == 0; u < n_cols; u++) {
            int64_t tap = row + col_first + u * dil_w;
            float v = plane[tap];
            if ((v > b) | (v != v)) {
                b = v;
                at = tap;
            }
        }
    }
    *best = b;
#endif
    return at;
}

static inline ptrdiff_t ovpool_span_argmax_f64(const double *x, ptrdiff_t n) {
    double best = ovpool_span_max_f64(x, n);
    ptrdiff_t i = 0;
    if (best != best) {
        for (i = n - 1; x[i] == x[i]; i--) {}
        return i;
    }
#if defined(__SSE2__)
    __m128d b = _mm_set1_pd(best);
    for (; i + 2 <= n; i += 2) {
        int mask = _mm_movemask_pd(_mm_cmpeq_pd(_mm_loadu_pd(x + i), b));
        if (mask) return i + __builtin_ctz(mask);
    }
#endif
    while (!(x[i] == best)) i++;
    return i;
}


/* col[i] = max over the n_rows >= 1 rows plane + offsets[r] of element i,
 * with plain maxps and no NaN rule: returns 1 when any element read was NaN,
 * and the caller then redoes the row with the exact rule. One check per row
 * instead of a blend per element: a 3-row pass does about half the work.
 * Rows go 3 at a time; a group of fewer repeats its last row, and the last
 * vector block overlaps the one before it (max is idempotent). float32 rows
 * or, with half set (a constant; F16C builds only), float16 rows converted in
 * registers: the same maxps chain on the same values. */
static inline OVPOOL_INLINE int ovpool_vmax_rows_any(const void *plane, const int64_t *offsets,
                                                     ptrdiff_t n_rows, float *col, ptrdiff_t n,
                                                     int half) {
    int nan = 0;
    for (ptrdiff_t r = 0; r < n_rows; r += 3) {
        ptrdiff_t m = n_rows - r < 3 ? n_rows - r : 3;
        const void *a = ovpool_at(plane, offsets[r], half);
        const void *b = ovpool_at(plane, offsets[r + (m > 1)], half);
        const void *c = ovpool_at(plane, offsets[r + m - 1], half);
        int first = r == 0;
        ptrdiff_t i = 0;
#if defined(__AVX2__)
        if (n >= 8) {
            __m256 u = _mm256_setzero_ps();
            for (ptrdiff_t blk = 0; blk * 8 < n; blk++) {
                i = ovpool_block_start(blk, 8, n);
                __m256 va = ovpool_load8(a, i, half), vb = ovpool_load8(b, i, half);
                __m256 vc = ovpool_load8(c, i, half);
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
                i = ovpool_block_start(blk, 4, n);
                __m128 va = ovpool_load4(a, i, half), vb = ovpool_load4(b, i, half);
                __m128 vc = ovpool_load4(c, i, half);
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
            float x = ovpool_load1(a, i, half), y = ovpool_load1(b, i, half);
            float z = ovpool_load1(c, i, half);
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

static inline int ovpool_vmax_rows_f32(const float *plane, const int64_t *offsets,
                                       ptrdiff_t n_rows, float *col, ptrdiff_t n) {
    return ovpool_vmax_rows_any(plane, offsets, n_rows, col, n, 0);
}

/* The same of float16 rows converted in registers, only when OVPOOL_F16C_ROWS
 * (k3 s2 widened every input row 1.5 times into scratch); returns 1 (the
 * caller widens the rows and takes the exact path) when the rows hold a NaN
 * or the build converts in scratch. */
static inline int ovpool_vmax_rows_f16(const uint16_t *plane, const int64_t *offsets,
                                       ptrdiff_t n_rows, float *col, ptrdiff_t n) {
#if OVPOOL_F16C_ROWS
    return ovpool_vmax_rows_any(plane, offsets, n_rows, col, n, 1);
#else
    (void)plane; (void)offsets; (void)n_rows; (void)col; (void)n;
    return 1;
#endif
}

#if defined(__AVX2__)
/* idx where take is set, else at. A byte blend: gcc 12 compiles
 * _mm256_blendv_ps on integers cast to floats with one more instruction,
 * a vpcmpgtd re-deriving the mask's sign from the compare. */
static inline OVPOOL_INLINE __m256i ovpool_take_index8(__m256i at, __m256i idx, __m256 take) {
    return _mm256_blendv_epi8(at, idx, _mm256_castps_si256(take));
}

#endif

#if defined(__AVX2__)
/* The smallest (row << 4) + column holding the maximum of one window's
 * folded columns c, rank (nv vectors; masked: only lanes lo .. lo + n_taps
 * - 1), or -1 if no lane holds the maximum (which only a NaN can cause:
 * checked so that no offset is read out of range). */
static inline OVPOOL_INLINE int64_t ovpool_bin_finish(__m256 c0, __m256 c1, __m256i rank0,
                                                      __m256i rank1, int nv, int masked,
                                                      int lo, int n_taps) {
    /* by value, not by pointer: the caller's arrays stay in registers */
    __m256 c[2] = {c0, c1}, in[2], m = c0;
    __m256i rank[2] = {rank0, rank1}, lane[2], low = _mm256_set1_epi32(INT32_MAX);
    for (int j = 0; j < nv; j++) {
        lane[j] = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                   _mm256_set1_epi32(8 * j));
        if (masked) {
            in[j] = _mm256_castsi256_ps(_mm256_and_si256(
                _mm256_cmpgt_epi32(lane[j], _mm256_set1_epi32(lo - 1)),
                _mm256_cmpgt_epi32(_mm256_set1_epi32(lo + n_taps), lane[j])));
            __m256 v = _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), c[j], in[j]);
            m = j ? _mm256_max_ps(m, v) : v;
        } else if (j) {
            m = _mm256_max_ps(m, c[j]);
        }
    }
    m = _mm256_max_ps(m, _mm256_permute2f128_ps(m, m, 1));
    m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, 0x4e));
    m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, 0xb1));     /* the maximum, every lane */
    for (int j = 0; j < nv; j++) {
        __m256 at_max = _mm256_cmp_ps(c[j], m, _CMP_EQ_OQ);
        if (masked)
            at_max = _mm256_and_ps(at_max, in[j]);
        __m256i key = ovpool_take_index8(low, _mm256_add_epi32(rank[j], lane[j]), at_max);
        low = j ? _mm256_min_epi32(low, key) : key;
    }
    low = _mm256_min_epi32(low, _mm256_permute2x128_si256(low, low, 1));
    low = _mm256_min_epi32(low, _mm256_shuffle_epi32(low, 0x4e));
    low = _mm256_min_epi32(low, _mm256_shuffle_epi32(low, 0xb1));
    int32_t key = _mm256_cvtsi256_si32(low);
    return key == INT32_MAX ? -1 : key;
}

/* The first maximum, in row-major order, of each of n_win windows of one
 * output row (ww: their win_w entries, n_taps columns from first; up to 8
 * columns with nv = 1, 16 with nv = 2; n_win * nv <= 4; the rows at
 * offsets), by the windows themselves: their columns fold down the rows in
 * nv vectors each with the strict ">" (each column's first row holding its
 * maximum), and the lanes holding a window's maximum give its smallest
 * (row, column) - no column maxima stored and read back, and each row's
 * address and rank taken once for the n_win windows. pos[w]: the in-plane
 * offset, out[w]: the element's own value (-0.0 and +0.0 compare equal),
 * index[w] (if index): index_base + pos[w]. One running sum over all the
 * group's vectors finds a NaN in one add per vector and row (a register
 * each would spill); then every window of the group gets pos[w] = -1 (so
 * do +inf and -inf in one lane). Returns the number of such windows. Needs
 * in_w >= 8 nv. */
static inline OVPOOL_INLINE int ovpool_bins_group_f32(const float *plane, const int64_t *offsets,
                                                      ptrdiff_t n_rows, ptrdiff_t in_w,
                                                      const int64_t *ww, int n_win, int nv,
                                                      float *out, int64_t *pos, int64_t *index,
                                                      int64_t index_base) {
    ptrdiff_t start[4], at[4];
    __m256 c[4], sum = _mm256_setzero_ps();
    __m256i rank[4];
    const float *row = plane + offsets[0];
    for (int w = 0; w < n_win; w++) {
        ptrdiff_t first = ww[3 * w];
        start[w] = first + 8 * nv <= in_w ? first : in_w - 8 * nv;
        for (int j = 0; j < nv; j++) {
            at[w * nv + j] = start[w] + 8 * j;
            c[w * nv + j] = _mm256_loadu_ps(row + start[w] + 8 * j);
            sum = _mm256_add_ps(sum, c[w * nv + j]);
            rank[w * nv + j] = _mm256_setzero_si256();
        }
    }
    for (ptrdiff_t r = 1; r < n_rows; r++) {
        __m256i key = _mm256_set1_epi32((int32_t)(r << 4));
        row = plane + offsets[r];
        for (int k = 0; k < n_win * nv; k++) {
            __m256 v = _mm256_loadu_ps(row + at[k]);
            rank[k] = ovpool_take_index8(rank[k], key, _mm256_cmp_ps(v, c[k], _CMP_GT_OQ));
            c[k] = _mm256_max_ps(v, c[k]);
            sum = _mm256_add_ps(sum, v);
        }
    }
    int nan = _mm256_movemask_ps(_mm256_cmp_ps(sum, sum, _CMP_UNORD_Q)), n_exact = 0;
    for (int w = 0; w < n_win; w++) {
        int lo = (int)(ww[3 * w] - start[w]), n_taps = (int)ww[3 * w + 1];
        int k = w * nv, k1 = w * nv + nv - 1;
        int64_t key = nan ? -1
                      : lo == 0 && n_taps == 8 * nv      /* no lane to leave out */
                      ? ovpool_bin_finish(c[k], c[k1], rank[k], rank[k1], nv, 0, 0, 0)
                      : ovpool_bin_finish(c[k], c[k1], rank[k], rank[k1], nv, 1, lo, n_taps);
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

#endif

/* Values and in-plane offsets (pos) of the out_w windows of one output row
 * by ovpool_bins_group_f32, in groups of up to 4 vectors of windows as wide,
 * where ovpool_bins_by_window_ok holds (and windows of fewer than 2^27 rows:
 * the rank key); with index, also index_base + pos there (row-major int64
 * indices, written here). Returns the number of windows with pos -1 (a group
 * with a NaN): the caller takes the row again by the exact rule. */
static inline ptrdiff_t ovpool_bins_argmax_f32(const float *plane, const int64_t *offsets,
                                               ptrdiff_t n_rows, ptrdiff_t in_w,
                                               const int64_t *win_w, ptrdiff_t out_w,
                                               float *out, int64_t *pos, int64_t *index,
                                               int64_t index_base) {
#if defined(__AVX2__)
    ptrdiff_t o = 0, n_exact = 0;
    while (o < out_w) {
        int nv = win_w[3 * o + 1] <= 8 ? 1 : 2, n = 1;
        while (n < 4 / nv && o + n < out_w && (win_w[3 * (o + n) + 1] <= 8 ? 1 : 2) == nv)
            n++;
#define OVPOOL_GROUP(N, NV) \
    (n_exact += ovpool_bins_group_f32(plane, offsets, n_rows, in_w, win_w + 3 * o, N, NV, \
                                      out + o, pos + o, index ? index + o : NULL, index_base))
        if (nv == 2)
            n == 2 ? OVPOOL_GROUP(2, 2) : OVPOOL_GROUP(1, 2);
        else
            n == 4 ? OVPOOL_GROUP(4, 1) : n == 3 ? OVPOOL_GROUP(3, 1)
                   : n == 2 ? OVPOOL_GROUP(2, 1) : OVPOOL_GROUP(1, 1);
#undef OVPOOL_GROUP
        o += n;
    }
    return n_exact;
#else
    (void)plane; (void)offsets; (void)n_rows; (void)in_w; (void)win_w; (void)out; (void)index;
    (void)index_base;
    for (ptrdiff_t o = 0; o < out_w; o++)
        pos[o] = -1;
    return out_w;
#endif
}

/* Whether the windows along W (a table, no dilation) go to
 * ovpool_bins_argmax_f32 rather than the column fold: AVX2 builds, windows
 * of 1 to 16 taps that fit their vectors, and vectors over no more than 1.5x
 * the row's columns (windows that overlap much fold each column once). */
static inline int ovpool_bins_by_window_ok(const int64_t *win_w, ptrdiff_t out_w,
                                           ptrdiff_t in_w) {
#if defined(__AVX2__)
    ptrdiff_t lanes = 0;
    for (ptrdiff_t o = 0; o < out_w; o++) {
        int64_t n = win_w[3 * o + 1];
        if (n < 1 || n > 16 || in_w < (n <= 8 ? 8 : 16))
            return 0;
        lanes += n <= 8 ? 8 : 16;
    }
    return out_w > 0 && 2 * lanes <= 3 * in_w;
#else
    (void)win_w; (void)out_w; (void)in_w;
    return 0;
#endif
}

#if defined(__AVX2__)
/* ovpool_fold_rows_argmax_f32 of the 8 columns from i by the exact rule. */
static inline OVPOOL_INLINE void ovpool_fold_block8_exact(const float *plane,
                                                          const int64_t *offsets,
                                                          ptrdiff_t n_rows, ptrdiff_t i,
                                                          float *col, int32_t *col_row) {
    __m256 c = _mm256_loadu_ps(plane + offsets[0] + i);
    __m256i cr = _mm256_setzero_si256();
    for (ptrdiff_t r = 1; r < n_rows; r++) {
        __m256 v = _mm256_loadu_ps(plane + offsets[r] + i);
        __m256 take = _mm256_or_ps(_mm256_cmp_ps(c, v, _CMP_LT_OQ),
                                   _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        c = _mm256_blendv_ps(c, v, take);
        cr = ovpool_take_index8(cr, _mm256_set1_epi32((int32_t)r), take);
    }
    _mm256_storeu_ps(col + i, c);
    _mm256_storeu_si256((__m256i *)(col_row + i), cr);
}
#endif

#if defined(__AVX2__)
/* The NaN-free fold of ovpool_fold_rows_argmax_f32 for nb (2 or 4, a
 * constant) blocks of 8 columns from at[j] at once, each block's maximum and
 * rank a chain of its own; a NaN in rows 1.. sends the blocks to the exact
 * fold. */
static inline OVPOOL_INLINE void ovpool_fold_blocks8(const float *plane, const int64_t *offsets,
                                                     ptrdiff_t n_rows, const ptrdiff_t *at,
                                                     int nb, float *col, int32_t *col_row) {
    __m256 c[4], v[4], nan = _mm256_setzero_ps();
    __m256i rank_of[4];
    for (int j = 0; j < nb; j++) {
        c[j] = _mm256_loadu_ps(plane + offsets[0] + at[j]);
        rank_of[j] = _mm256_setzero_si256();
    }
    for (ptrdiff_t r = 1; r < n_rows; r++) {
        const float *row = plane + offsets[r];
        __m256i rank = _mm256_set1_epi32((int32_t)r);
        for (int j = 0; j < nb; j++)
            v[j] = _mm256_loadu_ps(row + at[j]);
        for (int j = 0; j < nb; j++) {
            rank_of[j] = ovpool_take_index8(rank_of[j], rank,
                                            _mm256_cmp_ps(c[j], v[j], _CMP_LT_OQ));
            c[j] = _mm256_max_ps(v[j], c[j]);
        }
        for (int j = 0; j < nb; j += 2)
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(v[j], v[j + 1], _CMP_UNORD_Q));
    }
    if (_mm256_movemask_ps(nan)) {
        for (int j = 0; j < nb; j++)
            ovpool_fold_block8_exact(plane, offsets, n_rows, at[j], col, col_row);
        return;
    }
    for (int j = 0; j < nb; j++) {
        _mm256_storeu_ps(col + at[j], c[j]);
        _mm256_storeu_si256((__m256i *)(col_row + at[j]), rank_of[j]);
    }
}
#endif

/* The column maxima of the vertical-first argmax over window rows
 * plane + offsets[r], r < n_rows (n_rows >= 1, rows n long): col[i] the
 * maximum of column i, col_row[i] the first row holding it, or the last
 * NaN's row (take = (row[i] > col[i]) | isnan(row[i]), rows in order).
 *
 * AVX2: blocks of 8 columns, each over all the rows in registers and stored
 * once (rows outer, the maxima were loaded and stored at every row:
 * adaptive max 8x256x50x50 -> 7 with indices 1.31 -> 1.16 ms at 2 threads);
 * the last block moved back to end at n (folding a row twice changes
 * nothing; a scalar tail would branch on the data, and mispredictions cost
 * more than the blocks). Four blocks at a time while three or more are
 * left, else two (the last one repeated where one is left): four chains
 * took adaptive max 8x64x100x100 -> 7 with indices 0.86x at 1 and 2
 * threads, 50 -> 7 the same. NaN-free first: the value is maxps(v, c) = v > c
 * ? v : c, the take rule without NaN, one instruction on the dependency
 * chain instead of compare, or and blend (that chain bound the loop: 50 -> 7
 * went 0.87x at 1 and 2 threads); a NaN in rows 1.. sends the blocks to the
 * exact fold (a NaN of row 0 stays under either rule: nothing compares
 * greater than it). */
static inline void ovpool_fold_rows_argmax_f32(const float *plane, const int64_t *offsets,
                                               ptrdiff_t n_rows, float *col, int32_t *col_row,
                                               ptrdiff_t n) {
    ptrdiff_t i;
#if defined(__AVX2__)
    if (n >= 8) {
        ptrdiff_t n_blocks = (n + 7) / 8, blk = 0, at[4];
        while (blk < n_blocks) {
            int nb = n_blocks - blk >= 3 ? 4 : 2;
            for (int j = 0; j < nb; j++)     /* past the last block: the last again */
                at[j] = ovpool_block_start(blk + j, 8, n);
            if (nb == 4)
                ovpool_fold_blocks8(plane, offsets, n_rows, at, 4, col, col_row);
            else
                ovpool_fold_blocks8(plane, offsets, n_rows, at, 2, col, col_row);
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
            __m128i rank = _mm_set1_epi32((int32_t)r);
            for (ptrdiff_t blk = 0; blk * 4 < n; blk++) {
                i = ovpool_block_start(blk, 4, n);
                __m128 v = _mm_loadu_ps(row + i), c = _mm_loadu_ps(col + i);
                __m128 take = _mm_or_ps(_mm_cmplt_ps(c, v), _mm_cmpunord_ps(v, v));
                _mm_storeu_ps(col + i, _mm_or_ps(_mm_and_ps(take, v), _mm_andnot_ps(take, c)));
                __m128i t = _mm_castps_si128(take);
                __m128i cr = _mm_loadu_si128((const __m128i *)(col_row + i));
                _mm_storeu_si128((__m128i *)(col_row + i),
                                 _mm_or_si128(_mm_and_si128(t, rank), _mm_andnot_si128(t, cr)));
            }
            continue;
        }
#endif
        for (; i < n; i++) {
            float v = row[i];
            int take = (v > col[i]) | (v != v);
            col[i] = take ? v : col[i];
            col_row[i] = take ? (int32_t)r : col_row[i];
        }
    }
}


/* Sum of x[0..n) in 16 lanes: lane j adds x[j], x[j+16], ... in order; then
 * the fold lanes j+8 -> j, j+4 -> j, j+2 -> j, lane 1 -> 0, and the tail
 * (n % 16 values) added in order. Every build computes exactly this order.
 * float32 values or, with half set (F16C builds only), float16 values
 * converted in registers, as ovpool_span_max_any. */
static inline OVPOOL_INLINE float ovpool_plane_sum_any(const void *x, ptrdiff_t n, int half) {
    ptrdiff_t i = 0;
    float total, tail = 0.0f;
#if defined(__AVX2__)
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_add_ps(a0, ovpool_load8(x, i, half));
        a1 = _mm256_add_ps(a1, ovpool_load8(x, i + 8, half));
    }
    a0 = _mm256_add_ps(a0, a1);
    __m128 c = _mm_add_ps(_mm256_castps256_ps128(a0), _mm256_extractf128_ps(a0, 1));
#elif defined(__SSE2__)
    __m128 q0 = _mm_setzero_ps(), q1 = _mm_setzero_ps(), q2 = _mm_setzero_ps(), q3 = _mm_setzero_ps();
    for (; i + 16 <= n; i += 16) {
        q0 = _mm_add_ps(q0, ovpool_load4(x, i, half));
        q1 = _mm_add_ps(q1, ovpool_load4(x, i + 4, half));
        q2 = _mm_add_ps(q2, ovpool_load4(x, i + 8, half));
        q3 = _mm_add_ps(q3, ovpool_load4(x, i + 12, half));
    }
    __m128 c = _mm_add_ps(_mm_add_ps(q0, q2), _mm_add_ps(q1, q3));
#endif
#if defined(__AVX2__) || defined(__SSE2__)
    c = _mm_add_ps(c, _mm_movehl_ps(c, c));
    total = _mm_cvtss_f32(c) + _mm_cvtss_f32(_mm_shuffle_ps(c, c, 1));
#else
    float acc[16] = {0};
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++) acc[j] += ovpool_load1(x, i + j, half);
    for (int j = 0; j < 8; j++) acc[j] += acc[j + 8];
    for (int j = 0; j < 4; j++) acc[j] += acc[j + 4];
    for (int j = 0; j < 2; j++) acc[j] += acc[j + 2];
    total = acc[0] + acc[1];
#endif
    for (; i < n; i++) tail += ovpool_load1(x, i, half);
    return total + tail;
}

static inline float ovpool_plane_sum_f32(const float *x, ptrdiff_t n) {
    return ovpool_plane_sum_any(x, n, 0);
}

/* float16 planes converted in registers (only when OVPOOL_F16C_ROWS): the
 * sums and maxima of the widened values, without widening them into scratch
 * first. Elsewhere the callers widen, and these are never called. */
static inline float ovpool_plane_sum_f16(const uint16_t *x, ptrdiff_t n) {
#if OVPOOL_F16C_ROWS
    return ovpool_plane_sum_any(x, n, 1);
#else
    (void)x; (void)n;
    return NAN;
#endif
}

static inline float ovpool_span_max_f16(const uint16_t *x, ptrdiff_t n) {
#if OVPOOL_F16C_ROWS
    return ovpool_span_max_any(x, n, 1);
#else
    (void)x; (void)n;
    return NAN;
#endif
}

static inline double ovpool_plane_sum_f64(const double *x, ptrdiff_t n) {
    ptrdiff_t i = 0;
    double total, tail = 0.0;
#if defined(__AVX__)
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    __m256d a2 = _mm256_setzero_pd(), a3 = _mm256_setzero_pd();
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_add_pd(a0, _mm256_loadu_pd(x + i));
        a1 = _mm256_add_pd(a1, _mm256_loadu_pd(x + i + 4));
        a2 = _mm256_add_pd(a2, _mm256_loadu_pd(x + i + 8));
        a3 = _mm256_add_pd(a3, _mm256_loadu_pd(x + i + 12));
    }
    __m256d b = _mm256_add_pd(_mm256_add_pd(a0, a2), _mm256_add_pd(a1, a3));  /* lanes 0-3 */
    __m128d c = _mm_add_pd(_mm256_castpd256_pd128(b), _mm256_extractf128_pd(b, 1));
    total = _mm_cvtsd_f64(c) + _mm_cvtsd_f64(_mm_unpackhi_pd(c, c));
#elif defined(__SSE2__)
    __m128d q[8];
    for (int j = 0; j < 8; j++) q[j] = _mm_setzero_pd();
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 8; j++) q[j] = _mm_add_pd(q[j], _mm_loadu_pd(x + i + 2 * j));
    for (int j = 0; j < 4; j++) q[j] = _mm_add_pd(q[j], q[j + 4]);   /* lanes j+8 -> j */
    q[0] = _mm_add_pd(q[0], q[2]);                                   /* j+4 -> j */
    q[1] = _mm_add_pd(q[1], q[3]);
    __m128d c = _mm_add_pd(q[0], q[1]);                              /* j+2 -> j */
    total = _mm_cvtsd_f64(c) + _mm_cvtsd_f64(_mm_unpackhi_pd(c, c));
#else
    double acc[16] = {0};
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++) acc[j] += x[i + j];
    for (int j = 0; j < 8; j++) acc[j] += acc[j + 8];
    for (int j = 0; j < 4; j++) acc[j] += acc[j + 4];
    for (int j = 0; j < 2; j++) acc[j] += acc[j + 2];
    total = acc[0] + acc[1];
#endif
    for (; i < n; i++) tail += x[i];
    return total + tail;
}

#if defined(__SSE2__)
/* Prefetch into L1 the bytes [p, p + n) (n = 0: none): input read in address
 * order, some way ahead. Prefetches never fault, past the end of an array too. */
static inline OVPOOL_INLINE void ovpool_prefetch_span(const char *p, ptrdiff_t n) {
    for (ptrdiff_t b = 0; b < n; b += 64)
        _mm_prefetch(p + b, _MM_HINT_T0);
}
#endif

#if defined(__AVX2__)
/* Eight windows' sums from their lane sums: lane j of v[l] holds window l's
 * partial sum j. Folded as ovpool_plane_sum_any and _span_sum fold one window
 * (lanes j + (j + 4), then (0 + 2) + (1 + 3)), but across the eight windows
 * with shuffles: window l's sum comes out in lane l. */
static inline OVPOOL_INLINE __m256 ovpool_fold8x8(const __m256 v[8]) {
    /* lanes j + (j + 4): windows 2m (low half) and 2m + 1 (high half) */
    __m256 s[4];
    for (int m = 0; m < 4; m++)
        s[m] = _mm256_add_ps(_mm256_permute2f128_ps(v[2 * m], v[2 * m + 1], 0x20),
                             _mm256_permute2f128_ps(v[2 * m], v[2 * m + 1], 0x31));
    /* (0 + 2), (1 + 3): windows 0, 2 | 1, 3 (then 4, 6 | 5, 7), two lanes each */
    __m256 d0 = _mm256_add_ps(_mm256_shuffle_ps(s[0], s[1], 0x44),
                              _mm256_shuffle_ps(s[0], s[1], 0xEE));
    __m256 d1 = _mm256_add_ps(_mm256_shuffle_ps(s[2], s[3], 0x44),
                              _mm256_shuffle_ps(s[2], s[3], 0xEE));
    /* (0 + 2) + (1 + 3): windows 0, 2, 4, 6 | 1, 3, 5, 7, put back in order */
    __m256 total = _mm256_add_ps(_mm256_shuffle_ps(d0, d1, 0x88),
                                 _mm256_shuffle_ps(d0, d1, 0xDD));
    return _mm256_permutevar8x32_ps(total, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* Lane l: the taps from..k-1 of the window at w + l * stride (elements;
 * float32 or, with half, float16), added in order from 0. Four columns at a
 * time, a 4x4 transpose of each half of the eight windows; the last four
 * columns end at k (k >= 4). */
static inline OVPOOL_INLINE __m256 ovpool_tail8x8(const void *w, ptrdiff_t stride,
                                                  ptrdiff_t from, ptrdiff_t k, int half) {
    __m256 tail = _mm256_setzero_ps();
    for (ptrdiff_t t = from; t < k;) {
        const ptrdiff_t at = k - t >= 4 ? t : k - 4;
        __m256 q0 = _mm256_set_m128(ovpool_load4(w, at + 4 * stride, half), ovpool_load4(w, at, half));
        __m256 q1 = _mm256_set_m128(ovpool_load4(w, at + 5 * stride, half),
                                    ovpool_load4(w, at + stride, half));
        __m256 q2 = _mm256_set_m128(ovpool_load4(w, at + 6 * stride, half),
                                    ovpool_load4(w, at + 2 * stride, half));
        __m256 q3 = _mm256_set_m128(ovpool_load4(w, at + 7 * stride, half),
                                    ovpool_load4(w, at + 3 * stride, half));
        __m256 lo01 = _mm256_unpacklo_ps(q0, q1), hi01 = _mm256_unpackhi_ps(q0, q1);
        __m256 lo23 = _mm256_unpacklo_ps(q2, q3), hi23 = _mm256_unpackhi_ps(q2, q3);
        __m256 col[4] = {_mm256_shuffle_ps(lo01, lo23, 0x44), _mm256_shuffle_ps(lo01, lo23, 0xEE),
                         _mm256_shuffle_ps(hi01, hi23, 0x44), _mm256_shuffle_ps(hi01, hi23, 0xEE)};
        for (; t < at + 4; t++)
            tail = _mm256_add_ps(tail, col[t - at]);
    }
    return tail;
}

/* With ahead (the windows are in the input, read in address order), each
 * block prefetches the lines this many bytes on: the hardware prefetcher
 * alone left the 1000 -> 100 average at 1 thread 20% slower (3.56 -> 2.86 ms;
 * 1 KiB ahead gained 0-3%, 3 KiB 7-12%, 12 KiB as 6 KiB). */
#define OVPOOL_SPAN_AHEAD 6144

static inline OVPOOL_INLINE void ovpool_span_sums8_block(const float *w, ptrdiff_t stride,
                                                         ptrdiff_t k, float *out, int ahead) {
    const ptrdiff_t full = k & ~(ptrdiff_t)7;
    ovpool_prefetch_span((const char *)w + OVPOOL_SPAN_AHEAD,
                         ahead ? 8 * stride * (ptrdiff_t)sizeof(float) : 0);
    __m256 v[8];
    for (int l = 0; l < 8; l++)
        v[l] = _mm256_loadu_ps(w + l * stride);
    for (ptrdiff_t i = 8; i < full; i += 8)
        for (int l = 0; l < 8; l++)
            v[l] = _mm256_add_ps(v[l], _mm256_loadu_ps(w + l * stride + i));
    _mm256_storeu_ps(out, _mm256_add_ps(ovpool_fold8x8(v), ovpool_tail8x8(w, stride, full, k, 0)));
}

/* Sums of eight contiguous planes of size >= 16 elements (float32, or
 * float16 with half), each as ovpool_plane_sum_any sums one (16 lanes, their
 * two halves added, the fold, then the tail), into out[0..8): one fold for
 * the eight. */
static inline OVPOOL_INLINE void ovpool_plane_sums8_block(const void *x, ptrdiff_t size,
                                                          float *out, int half) {
    const ptrdiff_t full = size & ~(ptrdiff_t)15;
    __m256 v[8];
    for (int l = 0; l < 8; l++) {
        __m256 a0 = ovpool_load8(x, l * size, half), a1 = ovpool_load8(x, l * size + 8, half);
        for (ptrdiff_t i = 16; i < full; i += 16) {
            a0 = _mm256_add_ps(a0, ovpool_load8(x, l * size + i, half));
            a1 = _mm256_add_ps(a1, ovpool_load8(x, l * size + i + 8, half));
        }
        v[l] = _mm256_add_ps(a0, a1);
    }
    _mm256_storeu_ps(out, _mm256_add_ps(ovpool_fold8x8(v), ovpool_tail8x8(x, size, full, size, half)));
}
#endif

/* Sums of n_out windows of k >= 8 contiguous taps, window o starting at
 * x + o * stride, in _span_sum's order (lanes j hold 0 + x[j] + x[j+8] + ...,
 * folded j+4 -> j, then (0 + 2) + (1 + 3); plus the tail, summed in order
 * from 0). Eight windows at a time: the fold runs across the eight with
 * shuffles instead of inside each (a 1000 -> 100 adaptive average is ten taps
 * a window, a scalar chain per output in _span_sum). The zero each lane starts
 * from is dropped: it changes only the sign of a zero lane, and the final
 * "+ tail" (tail is never -0) gives +0 either way. The last block of eight
 * overlaps the one before it and writes the same sums again. Returns the
 * outputs done: n_out, or 0 without AVX2 or under 8 outputs (the caller's). */
static inline ptrdiff_t ovpool_span_sums8_f32(const float *x, ptrdiff_t stride, ptrdiff_t k,
                                              ptrdiff_t n_out, float *out, int ahead) {
#if defined(__AVX2__)
    if (n_out < 8)
        return 0;
    for (ptrdiff_t blk = 0; blk * 8 < n_out; blk++) {
        const ptrdiff_t o = ovpool_block_start(blk, 8, n_out);  /* the last overlaps */
        ovpool_span_sums8_block(x + o * stride, stride, k, out + o, ahead);
    }
    return n_out;
#else
    (void)x; (void)stride; (void)k; (void)n_out; (void)out; (void)ahead;
    return 0;
#endif
}

#if defined(__AVX2__)
/* The first n lanes (0 <= n <= 8) of a mask for _mm256_maskload_ps: a masked
 * lane reads nothing (no fault past the end of an array) and loads +0. */
static const int32_t ovpool_lane_masks[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

static inline OVPOOL_INLINE __m256i ovpool_first_lanes(ptrdiff_t n) {
    return _mm256_loadu_si256((const __m256i *)(ovpool_lane_masks + 8 - n));
}
#endif

/* Output rows of an adaptive average (windows along W from a table, as
 * _hsum_table reads it: win_w[3 o] the first column, win_w[3 o + 1] the
 * taps), eight windows at a time. Output row j (0 <= j < n_out_rows) pools
 * the input rows win_h[3 j] .. + win_h[3 j + 1] - 1 of the depth slices
 * x + t * d_stride, t < n_d (row length in_w). Each window sums into 8 lanes
 * over all its rows (slice by slice, top to bottom) before a single fold,
 * the one of ovpool_fold8x8: lane j of a window adds its taps j, j + 8, ...
 * of each row (a last partial block masked: its missing lanes add +0), from
 * +0. Then out[o] = sum / (div_d * win_h[3 j + 2] * div_w[o]), as
 * _sum_finish and _divide_row. The separable passes store the column sums
 * and read them back at unaligned offsets, then fold each window alone:
 * adaptive 50 -> 7 took ~1500 cycles a plane that way, ~700 this way. Any
 * taps >= 0 give the right sums; the callers keep it to windows of 8 taps or
 * more over 2 rows or more, where it is faster (Plan.rows_8_wide). Under
 * eight windows the missing lanes repeat the last window and are not stored. */
static inline void ovpool_adaptive_rows_f32(const float *x, ptrdiff_t n_d, ptrdiff_t d_stride,
                                            ptrdiff_t in_w, const int64_t *win_h,
                                            ptrdiff_t n_out_rows, const int64_t *win_w,
                                            ptrdiff_t out_w, float *out, ptrdiff_t out_stride,
                                            const float *div_w, int64_t div_d) {
#if defined(__AVX2__)
    for (ptrdiff_t blk = 0; blk * 8 < out_w; blk++) {
        const ptrdiff_t o = out_w >= 8 ? ovpool_block_start(blk, 8, out_w) : 0;
        /* whole blocks of eight taps every window has, then n_part blocks,
         * masked per window (one for bins that differ by under 8 taps) */
        ptrdiff_t first[8], taps[8], full = PTRDIFF_MAX, n_part = 0;
        float d[8];
        for (int l = 0; l < 8; l++) {
            const ptrdiff_t at = o + l < out_w ? o + l : out_w - 1;
            first[l] = (ptrdiff_t)win_w[3 * at];
            taps[l] = (ptrdiff_t)win_w[3 * at + 1];
            d[l] = div_w[at];
            if ((taps[l] & ~(ptrdiff_t)7) < full)
                full = taps[l] & ~(ptrdiff_t)7;
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
                            v[l] = _mm256_add_ps(v[l], _mm256_maskload_ps(
                                row + first[l] + b,
                                ovpool_first_lanes(left < 0 ? 0 : left > 8 ? 8 : left)));
                        }
                }
            }
            const float row_div = (float)(div_d * win_h[3 * j + 2]);
            __m256 sums = _mm256_div_ps(ovpool_fold8x8(v),
                                        _mm256_mul_ps(_mm256_set1_ps(row_div), div_o));
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
    /* the same sums, a window at a time: the lanes and the fold above, the
     * masked lanes skipped (adding +0 to a sum that started from +0 changes
     * nothing), so the baseline build gives the same bits */
    for (ptrdiff_t o = 0; o < out_w; o++) {
        const ptrdiff_t first = (ptrdiff_t)win_w[3 * o], taps = (ptrdiff_t)win_w[3 * o + 1];
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
            const float row_div = (float)(div_d * win_h[3 * j + 2]);
            out[j * out_stride + o] = ((lane[0] + lane[2]) + (lane[1] + lane[3]))
                                      / (row_div * div_w[o]);
        }
    }
#endif
}

#if defined(__AVX2__)
/* v[i] <- column i of the 8x8 matrix whose rows are v[0..8). */
static inline OVPOOL_INLINE void ovpool_transpose8x8(__m256 v[8]) {
    __m256 a[8], b[8];
    for (int i = 0; i < 8; i += 2) {
        a[i] = _mm256_unpacklo_ps(v[i], v[i + 1]);
        a[i + 1] = _mm256_unpackhi_ps(v[i], v[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        b[i] = _mm256_shuffle_ps(a[i], a[i + 2], 0x44);
        b[i + 1] = _mm256_shuffle_ps(a[i], a[i + 2], 0xEE);
        b[i + 2] = _mm256_shuffle_ps(a[i + 1], a[i + 3], 0x44);
        b[i + 3] = _mm256_shuffle_ps(a[i + 1], a[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        v[i] = _mm256_permute2f128_ps(b[i], b[i + 4], 0x20);
        v[i + 4] = _mm256_permute2f128_ps(b[i], b[i + 4], 0x31);
    }
}
#endif

/* Up to eight output rows of an adaptive average whose W bins (a table, as
 * _hsum_table reads it) are under 8 taps, from one 2D plane x (rows of in_w
 * >= 8; output row j pools the rows win_h[3 j] .. + win_h[3 j + 1] - 1): the
 * same sums as the separable passes (the column sums in row order, each bin
 * from 0 in tap order, divided by div_d * win_h[3 j + 2] * div_w[o]), with
 * the eight output rows in the lanes of a vector. The column sums of a
 * block of eight columns for the eight rows are transposed in registers
 * into scratch (in_w x 8 floats), and each bin adds its columns as vectors:
 * no scalar chain per output, no store read back at an unaligned offset.
 * scratch holds 8 (in_w + out_w) floats. Returns 0 (the caller's separable
 * passes) without AVX2 or outside those bounds. */
static inline int ovpool_adaptive_narrow_f32(const float *x, ptrdiff_t in_w,
                                             const int64_t *win_h, ptrdiff_t n_out_rows,
                                             const int64_t *win_w, ptrdiff_t out_w, float *out,
                                             ptrdiff_t out_stride, const float *div_w,
                                             int64_t div_d, float *scratch) {
#if defined(__AVX2__)
    if (in_w < 8 || n_out_rows < 1 || n_out_rows > 8)
        return 0;
    float *cols = scratch, *sums = scratch + 8 * in_w;
    /* lane j: output row j (the missing lanes repeat the last row) */
    const int64_t *wh[8];
    float row_div[8];
    for (int j = 0; j < 8; j++) {
        wh[j] = win_h + 3 * (j < n_out_rows ? j : n_out_rows - 1);
        row_div[j] = (float)(div_d * wh[j][2]);
    }
    for (ptrdiff_t cb = 0; cb * 8 < in_w; cb++) {
        const ptrdiff_t c = ovpool_block_start(cb, 8, in_w);
        __m256 v[8];
        for (int j = 0; j < 8; j++) {
            const float *row = x + wh[j][0] * in_w + c;
            __m256 acc = wh[j][1] > 0 ? _mm256_loadu_ps(row) : _mm256_setzero_ps();
            for (int64_t r = 1; r < wh[j][1]; r++)
                acc = _mm256_add_ps(acc, _mm256_loadu_ps(row + r * in_w));
            v[j] = acc;
        }
        ovpool_transpose8x8(v);
        for (int i = 0; i < 8; i++)
            _mm256_storeu_ps(cols + (c + i) * 8, v[i]);
    }
    const __m256 lanes_div = _mm256_loadu_ps(row_div);
    for (ptrdiff_t o = 0; o < out_w; o++) {
        const float *col = cols + win_w[3 * o] * 8;
        __m256 acc = _mm256_setzero_ps();
        for (int64_t t = 0; t < win_w[3 * o + 1]; t++)
            acc = _mm256_add_ps(acc, _mm256_loadu_ps(col + t * 8));
        _mm256_storeu_ps(sums + o * 8, _mm256_div_ps(acc, _mm256_mul_ps(
            lanes_div, _mm256_set1_ps(div_w[o]))));
    }
    for (ptrdiff_t j = 0; j < n_out_rows; j++)
        for (ptrdiff_t o = 0; o < out_w; o++)
            out[j * out_stride + o] = sums[o * 8 + j];
    return 1;
#else
    (void)x; (void)in_w; (void)win_h; (void)n_out_rows; (void)win_w; (void)out_w; (void)out;
    (void)out_stride; (void)div_w; (void)div_d; (void)scratch;
    return 0;
#endif
}

/* The sums of n_planes contiguous float16 planes of size elements (F16C
 * builds), each exactly as ovpool_plane_sum_any: eight planes at a time folded
 * together where size >= 16 (the same argument about the dropped zeros as
 * above), the others one by one. A 7x7 global average spent most of its time
 * in the fold: 32x2048x7x7 at 1 thread 0.234 -> 0.179 ms. (float32 planes
 * stay one by one: read eight at a time, the 51 MB 7x7 average, memory
 * bound, was 17% slower.) */
static inline void ovpool_plane_sums_f16(const uint16_t *x, ptrdiff_t size, ptrdiff_t n_planes,
                                         float *out) {
#if OVPOOL_F16C_ROWS
    ptrdiff_t plane = 0;
#if defined(__AVX2__)
    if (size >= 16)
        for (; plane + 8 <= n_planes; plane += 8)
            ovpool_plane_sums8_block(x + plane * size, size, out + plane, 1);
#endif
    for (; plane < n_planes; plane++)
        out[plane] = ovpool_plane_sum_any(x + plane * size, size, 1);
#else
    (void)x; (void)size; (void)n_planes; (void)out;
#endif
}

/* Tiling windows (kernel == stride, kw in {1, 2, 4}), float32: one output row.
 *
 * out[o] = taps of window o combined in row-major order (row t, then column
 * u), the order of the Cython kernel and of PyTorch, so sums are bit-exact.
 * Vector lanes are outputs; a lane's kw taps are kw consecutive floats, so
 * kw vectors of taps come from kw contiguous loads and a deinterleave. A
 * row is covered by whole vector blocks, the last one overlapping the one
 * before it (its outputs are recomputed from the input, not accumulated),
 * so rows of 4 to 15 outputs -- adaptive 28->7, 14->7 -- need no scalar
 * tail. Loads stay within the first out_w * kw floats of each window row.
 */

/* 1 when dividing by divisor is multiplying by *factor (a power of two:
 * x * 2^-k and x / 2^k round the same exact value); else *factor = divisor. */
static inline int ovpool_tile_scale(float divisor, float *factor) {
    int exponent;
    if (frexpf(divisor, &exponent) == 0.5f) {
        *factor = 1.0f / divisor;
        return 1;
    }
    *factor = divisor;
    return 0;
}

/* Column sums (squares: lp2) of n <= 3 rows a, b, c at column i, in 8
 * lanes or one; the order of _vsum (_vsum_lp). */
#if defined(__AVX__)
static inline OVPOOL_INLINE __m256 ovpool_col_sums8(const float *a, const float *b,
                                                    const float *c, ptrdiff_t n, ptrdiff_t i,
                                                    int lp2) {
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

static inline OVPOOL_INLINE float ovpool_col_sum1(const float *a, const float *b,
                                                  const float *c, ptrdiff_t n, ptrdiff_t i,
                                                  int lp2) {
    float v = 0.0f;
    if (n >= 1) v = lp2 ? a[i] * a[i] : a[i];
    if (n >= 2) v = v + (lp2 ? b[i] * b[i] : b[i]);
    if (n >= 3) v = v + (lp2 ? c[i] * c[i] : c[i]);
    return v;
}

#if defined(__AVX2__)
/* Outputs back in order from the lanes of a kw = 2 deinterleave (0 1 4 5 2 3
 * 6 7) or a kw = 4 one (0 2 4 6 1 3 5 7), see ovpool_taps8. */
static inline OVPOOL_INLINE __m256 ovpool_unpermute8(__m256 acc, int kw) {
    if (kw == 2)
        return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(acc), 0xd8));
    if (kw == 4)
        return _mm256_permutevar8x32_ps(acc, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    return acc;
}

/* One output row of 3-tap windows at stride 2 with no padding along W, from
 * the window rows themselves: the column sums of 8 outputs' 17 columns stay
 * in registers (two vectors and the 17th as a scalar) and are deinterleaved
 * there, instead of being stored and read back at offsets 2o, 2o + 1, 2o + 2
 * (loads that span two stores of the vertical pass). out[o] = (c[2o] +
 * c[2o+1]) + c[2o+2] as in _hsum_k, then sqrt or the divide: the same bits.
 * Reads columns 0 .. 2 out_w of each row (needs 2 out_w + 1 <= in_w), the
 * last block overlapping the one before it. */
static inline OVPOOL_INLINE void ovpool_sum_row_s2k3(const float *a, const float *b,
                                                     const float *c, ptrdiff_t n, float *out,
                                                     ptrdiff_t out_w, float row_div,
                                                     const float *div_w, int lp2) {
    const __m256i next_even = _mm256_setr_epi32(1, 4, 3, 6, 5, 2, 7, 0);
    const __m256 row_divs = _mm256_set1_ps(row_div);
    for (ptrdiff_t blk = 0; blk * 8 < out_w; blk++) {
        ptrdiff_t o = ovpool_block_start(blk, 8, out_w), i = 2 * o;
        __m256 lo = ovpool_col_sums8(a, b, c, n, i, lp2);
        __m256 hi = ovpool_col_sums8(a, b, c, n, i + 8, lp2);
        __m256 last = _mm256_set1_ps(ovpool_col_sum1(a, b, c, n, i + 16, lp2));
        /* outputs in lanes 0 1 4 5 2 3 6 7 */
        __m256 even = _mm256_shuffle_ps(lo, hi, 0x88), odd = _mm256_shuffle_ps(lo, hi, 0xdd);
        __m256 even2 = _mm256_permutevar8x32_ps(_mm256_blend_ps(even, last, 0x01), next_even);
        __m256 v = ovpool_unpermute8(_mm256_add_ps(_mm256_add_ps(even, odd), even2), 2);
        v = lp2 ? _mm256_sqrt_ps(v)
                : _mm256_div_ps(v, _mm256_mul_ps(row_divs, _mm256_loadu_ps(div_w + o)));
        _mm256_storeu_ps(out + o, v);
    }
}
#endif

/* Average (lp2 clear) or L2 norm (lp2 set: LpPool p = 2) of windows 3 taps
 * wide at stride 1 or 2 along W (Inception's 3x3 s1 AveragePool, 3x3 s2
 * ones), float32, for n_rows consecutive output rows of one 2D slice: row
 * r's window rows are plane + (win_h[3r] + t) * in_w for t < win_h[3r+1] <= 3,
 * its divisor (float)(div_d * win_h[3r+2]) * div_w[o]. buf is the per-thread
 * padded column buffer (zeros outside buf[pad_w .. pad_w + in_w)). The same
 * operations in the same order as _vsum (_vsum_lp), _hsum_k and _sum_finish,
 * so the same bits; one call per slice instead of one per row (the per-row
 * calls cost more than the rows' arithmetic on a 35x35 plane). Stride 2's
 * horizontal pass is gcc's loop over the stored column sums (a vector form
 * reading them back measured slower, see ovpool_hmax_s2k3_f32), except rows
 * with no padding along W and 8+ outputs: ovpool_sum_row_s2k3 keeps their
 * column sums in registers (LpPool 3x3 s2 on 16x64x56x56 at 2 threads 0.36
 * -> 0.32 ms; average 3x3 s2 without pads 0.36 -> 0.25 ms). */
static inline OVPOOL_INLINE void ovpool_sum_rows_k3_any(
        const float *plane, ptrdiff_t in_w, const int64_t *win_h, ptrdiff_t n_rows, float *out,
        ptrdiff_t out_w, float *buf, ptrdiff_t pad_w, const float *div_w, int64_t div_d,
        int stride, int lp2) {
    float *col = buf + pad_w;
    for (ptrdiff_t r = 0; r < n_rows; r++, out += out_w) {
        const int64_t *wh = win_h + 3 * r;
        ptrdiff_t n = wh[1], i = 0;
        const float *a = plane + wh[0] * in_w;     /* rows past the n-th are not formed */
        const float *b = n >= 2 ? a + in_w : a, *c = n >= 3 ? b + in_w : b;
        float row_div = (float)(div_d * wh[2]);
#if defined(__AVX2__)
        if (stride == 2 && pad_w == 0 && out_w >= 8 && 2 * out_w + 1 <= in_w) {
            ovpool_sum_row_s2k3(a, b, c, n, out, out_w, row_div, div_w, lp2);
            continue;
        }
#endif
#if defined(__AVX__)
        if (in_w >= 8) {
            for (ptrdiff_t blk = 0; blk * 8 < in_w; blk++) {
                i = ovpool_block_start(blk, 8, in_w);
                _mm256_storeu_ps(col + i, ovpool_col_sums8(a, b, c, n, i, lp2));
            }
            i = in_w;
        }
#endif
        for (; i < in_w; i++)       /* (reads only the n rows: an empty window has none) */
            col[i] = ovpool_col_sum1(a, b, c, n, i, lp2);
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
                o = ovpool_block_start(blk, 8, out_w);
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

static inline void ovpool_sum_rows_k3_f32(const float *plane, ptrdiff_t in_w,
                                          const int64_t *win_h, ptrdiff_t n_rows, float *out,
                                          ptrdiff_t out_w, float *buf, ptrdiff_t pad_w,
                                          const float *div_w, int64_t div_d, int stride,
                                          int lp2) {
    if (lp2)
        ovpool_sum_rows_k3_any(plane, in_w, win_h, n_rows, out, out_w, buf, pad_w, div_w,
                               div_d, stride, 1);
    else
        ovpool_sum_rows_k3_any(plane, in_w, win_h, n_rows, out, out_w, buf, pad_w, div_w,
                               div_d, stride, 0);
}

/* The rows ovpool_tile_row_f32 (stride == k) and ovpool_argmax_row_f32 take:
 * 4+ outputs (one whole vector block) of a tiling (stride == k in 1, 2, 4) or of
 * 3-tap windows at stride 2 or 1. */
static inline int ovpool_vector_rows_ok(ptrdiff_t n_out, int stride, int k) {
#if defined(__SSE2__)
    return n_out >= 4 && ((stride == k && (k == 1 || k == 2 || k == 4))
                          || (k == 3 && (stride == 1 || stride == 2)));
#else
    (void)n_out; (void)stride; (void)k;
    return 0;
#endif
}

#if defined(__SSE2__)
/* taps u < kw of the 4 outputs whose windows start at p, p + kw, ... */
static inline OVPOOL_INLINE void ovpool_taps4(const void *p, int kw, __m128 v[4], int half) {
    if (kw == 1) {
        v[0] = ovpool_load4(p, 0, half);
    } else if (kw == 2) {
        __m128 a = ovpool_load4(p, 0, half), b = ovpool_load4(p, 4, half);
        v[0] = _mm_shuffle_ps(a, b, 0x88);
        v[1] = _mm_shuffle_ps(a, b, 0xdd);
    } else {
        v[0] = ovpool_load4(p, 0, half);
        v[1] = ovpool_load4(p, 4, half);
        v[2] = ovpool_load4(p, 8, half);
        v[3] = ovpool_load4(p, 12, half);
        _MM_TRANSPOSE4_PS(v[0], v[1], v[2], v[3]);
    }
}

static inline OVPOOL_INLINE __m128 ovpool_comb4(__m128 acc, __m128 v, __m128 *nan, int is_max) {
    if (!is_max)
        return _mm_add_ps(acc, v);
    *nan = _mm_or_ps(*nan, _mm_cmpunord_ps(v, v));
    return _mm_max_ps(acc, v);      /* acc > v ? acc : v, as the scalar chain */
}

/* Blocks at p and q at once: each block is a serial chain of kh * kw
 * operations (the exact tap order), so two chains keep the adder busy.
 * With scale set, divisor holds the factor of ovpool_tile_scale. */
static inline OVPOOL_INLINE void ovpool_tile_block4x2(const void *p, const void *q, ptrdiff_t in_w,
                                        void *out_p, void *out_q, int kh, int kw,
                                        int is_max, int scale, __m128 divisor, int half) {
    __m128 v[4], w[4], acc_p, acc_q, nan_p, nan_q;
    ovpool_taps4(p, kw, v, half);
    ovpool_taps4(q, kw, w, half);
    acc_p = v[0];
    acc_q = w[0];
    nan_p = _mm_cmpunord_ps(acc_p, acc_p);
    nan_q = _mm_cmpunord_ps(acc_q, acc_q);
    for (int u = 1; u < kw; u++) {       /* constant kw: fully unrolled */
        acc_p = ovpool_comb4(acc_p, v[u], &nan_p, is_max);
        acc_q = ovpool_comb4(acc_q, w[u], &nan_q, is_max);
    }
    for (int t = 1; t < kh; t++) {
        ovpool_taps4(ovpool_at(p, t * in_w, half), kw, v, half);
        ovpool_taps4(ovpool_at(q, t * in_w, half), kw, w, half);
        for (int u = 0; u < kw; u++) {
            acc_p = ovpool_comb4(acc_p, v[u], &nan_p, is_max);
            acc_q = ovpool_comb4(acc_q, w[u], &nan_q, is_max);
        }
    }
    if (is_max) {
        __m128 qnan = _mm_set1_ps(NAN);
        acc_p = _mm_or_ps(_mm_andnot_ps(nan_p, acc_p), _mm_and_ps(nan_p, qnan));
        acc_q = _mm_or_ps(_mm_andnot_ps(nan_q, acc_q), _mm_and_ps(nan_q, qnan));
    } else {
        acc_p = scale ? _mm_mul_ps(acc_p, divisor) : _mm_div_ps(acc_p, divisor);
        acc_q = scale ? _mm_mul_ps(acc_q, divisor) : _mm_div_ps(acc_q, divisor);
    }
    ovpool_store4(out_p, acc_p, half);
    ovpool_store4(out_q, acc_q, half);
}
#endif

#if defined(__AVX2__)
/* The same for 8 outputs; the lanes come out permuted (see ovpool_unpermute8). */
/* Taps u < kw (1, 2, 4) of consecutive kw-wide windows from kw registers r
 * holding them contiguously, each 128-bit lane on its own: the kw = 2
 * deinterleave and the kw = 4 transpose never cross the lanes. */
static inline OVPOOL_INLINE void ovpool_deinterleave8(const __m256 r[4], int kw, __m256 v[4]) {
    if (kw == 1) {
        v[0] = r[0];
    } else if (kw == 2) {
        v[0] = _mm256_shuffle_ps(r[0], r[1], 0x88);
        v[1] = _mm256_shuffle_ps(r[0], r[1], 0xdd);
    } else {
        __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
        __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
        v[0] = _mm256_shuffle_ps(t0, t2, 0x44);
        v[1] = _mm256_shuffle_ps(t0, t2, 0xee);
        v[2] = _mm256_shuffle_ps(t1, t3, 0x44);
        v[3] = _mm256_shuffle_ps(t1, t3, 0xee);
    }
}

/* Lanes of kw = 2: outputs 0 1 4 5 2 3 6 7; of kw = 4: 0 2 4 6 1 3 5 7. */
static inline OVPOOL_INLINE void ovpool_taps8(const void *p, int kw, __m256 v[4], int half) {
    __m256 r[4];
    for (int j = 0; j < kw; j++)
        r[j] = ovpool_load8(p, 8 * j, half);
    ovpool_deinterleave8(r, kw, v);
}

static inline OVPOOL_INLINE __m256 ovpool_comb8(__m256 acc, __m256 v, __m256 *nan, int is_max) {
    if (!is_max)
        return _mm256_add_ps(acc, v);
    *nan = _mm256_or_ps(*nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_max_ps(acc, v);
}

static inline OVPOOL_INLINE void ovpool_tile_block8x2(const void *p, const void *q, ptrdiff_t in_w,
                                        void *out_p, void *out_q, int kh, int kw,
                                        int is_max, int scale, __m256 divisor, int half) {
    __m256 v[4], w[4], acc_p, acc_q, nan_p, nan_q;
    ovpool_taps8(p, kw, v, half);
    ovpool_taps8(q, kw, w, half);
    acc_p = v[0];
    acc_q = w[0];
    nan_p = _mm256_cmp_ps(acc_p, acc_p, _CMP_UNORD_Q);
    nan_q = _mm256_cmp_ps(acc_q, acc_q, _CMP_UNORD_Q);
    for (int u = 1; u < kw; u++) {
        acc_p = ovpool_comb8(acc_p, v[u], &nan_p, is_max);
        acc_q = ovpool_comb8(acc_q, w[u], &nan_q, is_max);
    }
    for (int t = 1; t < kh; t++) {
        ovpool_taps8(ovpool_at(p, t * in_w, half), kw, v, half);
        ovpool_taps8(ovpool_at(q, t * in_w, half), kw, w, half);
        for (int u = 0; u < kw; u++) {
            acc_p = ovpool_comb8(acc_p, v[u], &nan_p, is_max);
            acc_q = ovpool_comb8(acc_q, w[u], &nan_q, is_max);
        }
    }
    if (is_max) {
        __m256 qnan = _mm256_set1_ps(NAN);
        acc_p = _mm256_blendv_ps(acc_p, qnan, nan_p);
        acc_q = _mm256_blendv_ps(acc_q, qnan, nan_q);
    } else {
        acc_p = scale ? _mm256_mul_ps(acc_p, divisor) : _mm256_div_ps(acc_p, divisor);
        acc_q = scale ? _mm256_mul_ps(acc_q, divisor) : _mm256_div_ps(acc_q, divisor);
    }
    ovpool_store8(out_p, ovpool_unpermute8(acc_p, kw), half);
    ovpool_store8(out_q, ovpool_unpermute8(acc_q, kw), half);
}

/* 4 lanes of block p and 4 of block q in one 256-bit register (the low and
 * high 128-bit lanes): element i of each, float32 or (half) float16. */
static inline OVPOOL_INLINE __m256 ovpool_load4x2(const void *p, const void *q, ptrdiff_t i,
                                                  int half) {
#if defined(__F16C__)
    if (half)
        return _mm256_cvtph_ps(_mm_unpacklo_epi64(
            _mm_loadl_epi64((const __m128i *)((const uint16_t *)p + i)),
            _mm_loadl_epi64((const __m128i *)((const uint16_t *)q + i))));
#endif
    (void)half;
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps((const float *)p + i)),
                                _mm_loadu_ps((const float *)q + i), 1);
}

/* ovpool_taps4 of blocks p and q side by side: taps u < kw (1, 2, 4) of the
 * 4 outputs whose windows start at p, p + kw, ... and the 4 at q. kw = 1
 * puts p's in the low 128-bit lane and q's in the high one, in order. kw = 2
 * and 4 load p's 4 kw taps and then q's as whole 8-lane registers (one load
 * and, in float16, one conversion per 8 taps instead of two half loads and
 * a shuffle), so the lanes hold the outputs permuted as in ovpool_taps8:
 * ovpool_unpermute8 puts them back. The same taps, read from the same
 * elements. Adaptive 8x512x28x28 -> 7 at 2 threads: float16 0.26 -> 0.20 ms,
 * float32 0.197 -> 0.177 ms. */
static inline OVPOOL_INLINE void ovpool_taps4x2(const void *p, const void *q, int kw,
                                                __m256 v[4], int half) {
    __m256 r[4];
    if (kw >= 2) {
        for (int j = 0; j < kw / 2; j++) {
            r[j] = ovpool_load8(p, 8 * j, half);
            r[kw / 2 + j] = ovpool_load8(q, 8 * j, half);
        }
    } else {
        for (int j = 0; j < kw; j++)
            r[j] = ovpool_load4x2(p, q, 4 * j, half);
    }
    ovpool_deinterleave8(r, kw, v);
}

/* ovpool_tile_block4x2 with its two blocks side by side in 256-bit registers
 * (rows of 4-7 outputs: adaptive 28->7, 14->7): the same operation on every
 * lane as the 4-lane block, so the same bits, with half the shuffles, adds
 * and (float16) conversions. n (1 or 2, a constant) output rows at once, the
 * second one next elements of input and out_next bytes of output on: the
 * taps of a window are added in order, one dependent chain per row, and two
 * chains hide each other's latency (adaptive 8x512x28x28 -> 7 in float16:
 * 0.434 -> 0.400 ms at 1 thread, 0.225 -> 0.207 ms at 2). */
static inline OVPOOL_INLINE void ovpool_tile_block4x2_wide(const void *p, const void *q,
                                                           ptrdiff_t in_w, void *out_p,
                                                           void *out_q, int kh, int kw,
                                                           int is_max, int scale,
                                                           __m256 divisor, int half, int n,
                                                           ptrdiff_t next, ptrdiff_t out_next) {
    __m256 v[2][4], acc[2], nan[2];
    for (int t = 0; t < kh; t++) {
        for (int j = 0; j < n; j++)
            ovpool_taps4x2(ovpool_at(p, j * next + t * in_w, half),
                           ovpool_at(q, j * next + t * in_w, half), kw, v[j], half);
        for (int u = 0; u < kw; u++)
            for (int j = 0; j < n; j++) {
                if (t == 0 && u == 0) {
                    acc[j] = v[j][0];
                    nan[j] = _mm256_cmp_ps(acc[j], acc[j], _CMP_UNORD_Q);
                } else {
                    acc[j] = ovpool_comb8(acc[j], v[j][u], &nan[j], is_max);
                }
            }
    }
    for (int j = 0; j < n; j++) {
        __m256 a = acc[j];
        char *op = (char *)out_p + j * out_next, *oq = (char *)out_q + j * out_next;
        if (is_max)
            a = _mm256_blendv_ps(a, _mm256_set1_ps(NAN), nan[j]);
        else
            a = scale ? _mm256_mul_ps(a, divisor) : _mm256_div_ps(a, divisor);
        a = ovpool_unpermute8(a, kw);     /* p's 4 outputs, then q's */
#if defined(__F16C__)
        if (half) {
            __m128i h = _mm256_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT);
            _mm_storel_epi64((__m128i *)op, h);
            _mm_storel_epi64((__m128i *)oq, _mm_unpackhi_epi64(h, h));
            continue;
        }
#endif
        _mm_storeu_ps((float *)op, _mm256_castps256_ps128(a));
        _mm_storeu_ps((float *)oq, _mm256_extractf128_ps(a, 1));
    }
}
#endif

#if defined(__SSE2__)
static inline OVPOOL_INLINE void ovpool_tile_row_kw(const void *row0, ptrdiff_t in_w,
                                                    void *out, ptrdiff_t out_w, int kh, int kw,
                                                    int is_max, int scale, float divisor,
                                                    int half) {
    /* block starts 0, L, 2L, ..., and out_w - L for a partial last block,
     * taken two at a time (an odd count repeats the last block) */
    size_t out_size = half ? sizeof(uint16_t) : sizeof(float);
#if defined(__AVX2__)
    if (out_w >= 8) {
        ptrdiff_t n_blocks = (out_w + 7) / 8, b;
        __m256 d8 = _mm256_set1_ps(divisor);
        for (b = 0; b < n_blocks; b += 2) {
            ptrdiff_t o = ovpool_block_start(b, 8, out_w);
            ptrdiff_t o2 = ovpool_block_start(b + 1 < n_blocks ? b + 1 : b, 8, out_w);
            ovpool_tile_block8x2(ovpool_at(row0, o * kw, half), ovpool_at(row0, o2 * kw, half),
                                 in_w, (char *)out + o * out_size, (char *)out + o2 * out_size,
                                 kh, kw, is_max, scale, d8, half);
        }
        return;
    }
#endif
    ptrdiff_t n_blocks = (out_w + 3) / 4, b;
    __m128 d4 = _mm_set1_ps(divisor);
    for (b = 0; b < n_blocks; b += 2) {
        ptrdiff_t o = ovpool_block_start(b, 4, out_w);
        ptrdiff_t o2 = ovpool_block_start(b + 1 < n_blocks ? b + 1 : b, 4, out_w);
#if defined(__AVX2__)
        ovpool_tile_block4x2_wide(ovpool_at(row0, o * kw, half),
                                  ovpool_at(row0, o2 * kw, half), in_w,
                                  (char *)out + o * out_size, (char *)out + o2 * out_size,
                                  kh, kw, is_max, scale, _mm256_set1_ps(divisor), half, 1, 0, 0);
        (void)d4;
#else
        ovpool_tile_block4x2(ovpool_at(row0, o * kw, half), ovpool_at(row0, o2 * kw, half),
                             in_w, (char *)out + o * out_size, (char *)out + o2 * out_size,
                             kh, kw, is_max, scale, d4, half);
#endif
    }
}

static inline OVPOOL_INLINE void ovpool_tile_rows_kw(const void *row0, ptrdiff_t in_w,
                                                     void *out, ptrdiff_t out_w,
                                                     ptrdiff_t n_rows, int kh, int kw,
                                                     int is_max, int scale, float divisor,
                                                     int half, ptrdiff_t ahead) {
    size_t out_size = half ? sizeof(uint16_t) : sizeof(float);
    ptrdiff_t r = 0;
#if defined(__AVX2__)
    if (half && out_w >= 4 && out_w < 8) {
        /* one pair of 4-lane blocks a row (at 0 and out_w - 4): two rows at a
         * time, float16 only (float32 28->7 at 1 thread went 0.33 -> 0.37 ms) */
        const ptrdiff_t o2 = out_w - 4, next = kh * in_w, out_next = out_w * out_size;
        for (; r + 2 <= n_rows; r += 2) {
            ovpool_prefetch_span((const char *)ovpool_at(row0, r * next, half) + ahead,
                                 ahead ? 2 * next * (ptrdiff_t)out_size : 0);
            ovpool_tile_block4x2_wide(ovpool_at(row0, r * next, half),
                                      ovpool_at(row0, r * next + o2 * kw, half), in_w,
                                      (char *)out + r * out_next,
                                      (char *)out + r * out_next + o2 * out_size, kh, kw, is_max,
                                      scale, _mm256_set1_ps(divisor), half, 2, next, out_next);
        }
    }
#endif
    for (; r < n_rows; r++) {
        ovpool_prefetch_span((const char *)ovpool_at(row0, r * kh * in_w, half) + ahead,
                             ahead ? kh * in_w * (ptrdiff_t)out_size : 0);
        ovpool_tile_row_kw(ovpool_at(row0, r * kh * in_w, half), in_w,
                           (char *)out + r * out_w * out_size, out_w, kh, kw, is_max, scale,
                           divisor, half);
    }
}

/* Every (is_max, scale, kw) instance for one element type (half constant). */
static inline OVPOOL_INLINE void ovpool_tile_rows_any(const void *row0, ptrdiff_t in_w, void *out,
                                                      ptrdiff_t out_w, ptrdiff_t n_rows, int kh,
                                                      int kw, int is_max, int scale,
                                                      float divisor, int half, ptrdiff_t ahead) {
    if (is_max) {
        if (kw == 1) ovpool_tile_rows_kw(row0, in_w, out, out_w, n_rows, kh, 1, 1, 0, divisor, half, ahead);
        else if (kw == 2) ovpool_tile_rows_kw(row0, in_w, out, out_w, n_rows, kh, 2, 1, 0, divisor, half, ahead);
        else ovpool_tile_rows_kw(row0, in_w, out, out_w, n_rows, kh, 4, 1, 0, divisor, half, ahead);
    } else if (scale) {
        if (kw == 1) ovpool_tile_rows_kw(row0, in_w, out, out_w, n_rows, kh, 1, 0, 1, divisor, half, ahead);
        else if (kw == 2) ovpool_tile_rows_kw(row0, in_w, out, out_w, n_rows, kh, 2, 0, 1, divisor, half, ahead);
        else ovpool_tile_rows_kw(row0, in_w, out, out_w, n_rows, kh, 4, 0, 1, divisor, half, ahead);
    } else {
        if (kw == 1) ovpool_tile_rows_kw(row0, in_w, out, out_w, n_rows, kh, 1, 0, 0, divisor, half, ahead);
        else if (kw == 2) ovpool_tile_rows_kw(row0, in_w, out, out_w, n_rows, kh, 2, 0, 0, divisor, half, ahead);
        else ovpool_tile_rows_kw(row0, in_w, out, out_w, n_rows, kh, 4, 0, 0, divisor, half, ahead);
    }
}
#endif

/* n_rows consecutive output rows of tiling windows: row r reads the kh input
 * rows from row0 + r * kh * in_w and writes out + r * out_w. Needs
 * ovpool_vector_rows_ok(out_w, kw, kw); (scale, divisor) from
 * ovpool_tile_scale. kw and is_max become constants here, so each instance
 * is unrolled; kh stays a loop. A call per run of rows, not per row: a 7x7
 * output plane paid more for the call than for its 7 rows. */
static inline void ovpool_tile_rows_f32(const float *row0, ptrdiff_t in_w, float *out,
                                        ptrdiff_t out_w, ptrdiff_t n_rows, int kh, int kw,
                                        int is_max, int scale, float divisor,
                                        ptrdiff_t ahead) {
#if defined(__SSE2__)
    ovpool_tile_rows_any(row0, in_w, out, out_w, n_rows, kh, kw, is_max, scale, divisor, 0, ahead);
#else
    (void)row0; (void)in_w; (void)out; (void)out_w; (void)n_rows; (void)kh; (void)kw;
    (void)is_max; (void)scale; (void)divisor; (void)ahead;
#endif
}

/* The same on float16 rows and outputs, converted in registers; only when
 * OVPOOL_F16C_ROWS (else the caller widens into scratch). */
static inline void ovpool_tile_rows_f16(const uint16_t *row0, ptrdiff_t in_w, uint16_t *out,
                                        ptrdiff_t out_w, ptrdiff_t n_rows, int kh, int kw,
                                        int is_max, int scale, float divisor,
                                        ptrdiff_t ahead) {
#if OVPOOL_F16C_ROWS
    ovpool_tile_rows_any(row0, in_w, out, out_w, n_rows, kh, kw, is_max, scale, divisor, 1, ahead);
#else
    (void)row0; (void)in_w; (void)out; (void)out_w; (void)n_rows; (void)kh; (void)kw;
    (void)is_max; (void)scale; (void)divisor; (void)ahead;
#endif
}

/* Argmax of uniform windows, float32: the values and the int64 indices
 * index_base + the in-plane row-major offset (int32 in the lanes, widened on
 * the store) of n_out consecutive outputs whose taps all lie inside the
 * input. Window (stride s, k taps per row, kh rows): output o's tap (t, u)
 * is row0[t*in_w + o*s + u], at offset row_offset + t*in_w + o*s + u. Taps
 * in row-major window order with take = (v > best) | isnan(v): the first
 * maximum, the last NaN, as the scalar kernels. (s, k) is a tiling (s == k
 * in 1, 2, 4), (2, 3) or (1, 3) (see ovpool_vector_rows_ok). Lanes as in
 * ovpool_tile_row_f32; the offsets ride in integer lanes permuted like the
 * values. */
#if defined(__SSE2__)
/* taps u < k of 4 outputs at p: deinterleaved by stride */
static inline OVPOOL_INLINE void ovpool_taps4s(const float *p, int stride, int k, __m128 v[4]) {
    if (stride == k) {
        ovpool_taps4(p, k, v, 0);
    } else if (stride == 2) {          /* k == 3: even, odd, then the odd of p + 1 */
        __m128 w[4];                   /* (not the even of p + 2: a float too far) */
        ovpool_taps4(p, 2, v, 0);
        ovpool_taps4(p + 1, 2, w, 0);
        v[2] = w[1];
    } else {                           /* stride 1 */
        for (int u = 0; u < k; u++)
            v[u] = _mm_loadu_ps(p + u);
    }
}

/* dst[0..4) = index_base + the 4 in-plane offsets of at: the flat indices
 * written straight from the registers (through an int32 scratch and a
 * widening loop, that round trip took 8% of a 3x3 s2 call with indices).
 * Offsets are >= 0 and < 2^31 (the callers' planes), so zero-extension is
 * the widening; SSE2 has no sign-extending one. */
static inline OVPOOL_INLINE void ovpool_store_indices4(int64_t *dst, __m128i at,
                                                       int64_t index_base) {
    __m128i base = _mm_set1_epi64x(index_base), zero = _mm_setzero_si128();
    _mm_storeu_si128((__m128i *)dst, _mm_add_epi64(_mm_unpacklo_epi32(at, zero), base));
    _mm_storeu_si128((__m128i *)(dst + 2), _mm_add_epi64(_mm_unpackhi_epi32(at, zero), base));
}

/* ovpool_argblock8x2 in 4 lanes (SSE2: blends by and/andnot/or). */
static inline OVPOOL_INLINE int ovpool_argblock4x2(
        const float *p, const float *q, ptrdiff_t in_w, float *out_p, float *out_q,
        int64_t *idx_p, int64_t *idx_q, int32_t off_p, int32_t off_q, int64_t index_base,
        int kh, int stride, int k, int exact) {
    __m128 v[4], w[4], best_p, best_q, nan = _mm_setzero_ps();
    __m128i at_p, at_q;
    /* lane l holds output l */
    __m128i lanes = _mm_setr_epi32(0, stride, 2 * stride, 3 * stride);
    __m128i base_p = _mm_add_epi32(lanes, _mm_set1_epi32(off_p));
    __m128i base_q = _mm_add_epi32(lanes, _mm_set1_epi32(off_q));
    for (int t = 0; t < kh; t++) {
        ovpool_taps4s(p + t * in_w, stride, k, v);
        ovpool_taps4s(q + t * in_w, stride, k, w);
        for (int u = 0; u < k; u++) {
            __m128i tap = _mm_set1_epi32((int32_t)(t * in_w + u));
            __m128 take_p, take_q;
            __m128i idx_p = tap, idx_q = tap;
            if (!exact)
                nan = _mm_or_ps(nan, _mm_cmpunord_ps(v[u], w[u]));
            else {
                idx_p = _mm_add_epi32(base_p, tap);
                idx_q = _mm_add_epi32(base_q, tap);
            }
            if (t == 0 && u == 0) {
                best_p = v[0]; best_q = w[0];
                at_p = exact ? idx_p : _mm_setzero_si128();
                at_q = exact ? idx_q : _mm_setzero_si128();
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
            at_p = _mm_or_si128(_mm_and_si128(tp, idx_p), _mm_andnot_si128(tp, at_p));
            at_q = _mm_or_si128(_mm_and_si128(tq, idx_q), _mm_andnot_si128(tq, at_q));
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
    ovpool_store_indices4(idx_p, at_p, index_base);
    ovpool_store_indices4(idx_q, at_q, index_base);
    return 0;
}
#endif

#if defined(__AVX2__)
static inline OVPOOL_INLINE __m256i ovpool_unpermute8i(__m256i x, int kw) {
    return _mm256_castps_si256(ovpool_unpermute8(_mm256_castsi256_ps(x), kw));
}

/* ovpool_store_indices4 of the 4 offsets in each half of at: the low half
 * to dst_lo, the high half to dst_hi */
static inline OVPOOL_INLINE void ovpool_store_indices8(int64_t *dst_lo, int64_t *dst_hi,
                                                       __m256i at, int64_t index_base) {
    __m256i base = _mm256_set1_epi64x(index_base);
    _mm256_storeu_si256((__m256i *)dst_lo,
                        _mm256_add_epi64(_mm256_cvtepu32_epi64(_mm256_castsi256_si128(at)), base));
    _mm256_storeu_si256((__m256i *)dst_hi,
                        _mm256_add_epi64(_mm256_cvtepu32_epi64(_mm256_extracti128_si256(at, 1)),
                                         base));
}

/* the deinterleave (kw of ovpool_taps8) behind a (stride, k) pair */
static inline OVPOOL_INLINE int ovpool_lane_kw(int stride, int k) {
    return stride == k ? k : stride == 2 ? 2 : 1;
}

/* The window start of the output each lane holds, relative to output 0's
 * (ovpool_taps8's permutation for ovpool_lane_kw(stride, k)). */
static inline OVPOOL_INLINE __m256i ovpool_lane_starts8(int stride, int k) {
    int kw = ovpool_lane_kw(stride, k);
    __m256i order = kw == 1 ? _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
                  : kw == 2 ? _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7)
                            : _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    return _mm256_mullo_epi32(order, _mm256_set1_epi32(stride));
}

static inline OVPOOL_INLINE void ovpool_taps8s(const float *p, int stride, int k, __m256 v[4]) {
    if (stride == k) {
        ovpool_taps8(p, k, v, 0);
    } else if (stride == 2) {
        __m256 w[4];
        ovpool_taps8(p, 2, v, 0);
        ovpool_taps8(p + 1, 2, w, 0);
        v[2] = w[1];
    } else {
        for (int u = 0; u < k; u++)
            v[u] = _mm256_loadu_ps(p + u);
    }
}

/* ovpool_taps8s (k = 3) of a block whose output 0 (lane 0 in both lane
 * orders) starts one column left of its row, at p[0]: a 3-tap window with
 * W padding 1. p[0] is not read (a masked load), and output 0's tap 0
 * repeats its tap 1, column 0. In row-major order (t, 0), (t, 0), (t, 1)
 * has the first maximum and the last NaN of (t, 0), (t, 1): the strict ">"
 * never takes a repeat just taken, a NaN's repeat takes the same position.
 * So the padded output joins the vector block instead of the scalar edge
 * loop (there, 20% of a 3x3 s2 p1 call with indices). */
static inline OVPOOL_INLINE void ovpool_taps8s_left(const float *p, int stride, __m256 v[4]) {
    __m256i skip_first = _mm256_setr_epi32(0, -1, -1, -1, -1, -1, -1, -1);
    if (stride == 2) {
        __m256 r[4], w[4];
        r[0] = _mm256_maskload_ps(p, skip_first);
        r[1] = _mm256_loadu_ps(p + 8);
        ovpool_deinterleave8(r, 2, v);
        ovpool_taps8(p + 1, 2, w, 0);
        v[2] = w[1];
    } else {
        v[0] = _mm256_maskload_ps(p, skip_first);
        v[1] = _mm256_loadu_ps(p + 1);
        v[2] = _mm256_loadu_ps(p + 2);
    }
    v[0] = _mm256_blend_ps(v[0], v[1], 1);
}

/* The horizontal pass of the vertical-first argmax for one window of
 * 1 <= n_taps <= 8 consecutive columns first.. of the column maxima col and
 * the ranks col_row of their rows (in_w >= 8 columns): the column whose
 * (rank, column) is smallest among those holding the window's maximum, in
 * one vector (the block moved back to end at in_w when it would pass it).
 * Returns the column, or -1 when the window holds a NaN or the build has
 * no AVX2 (the caller then takes its scalar loop). */
static inline ptrdiff_t ovpool_window_argmax8_f32(const float *col, const int32_t *col_row,
                                                  ptrdiff_t in_w, ptrdiff_t first,
                                                  ptrdiff_t n_taps) {
    ptrdiff_t start = first + 8 <= in_w ? first : in_w - 8;
    int lo = (int)(first - start);
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256 in = _mm256_castsi256_ps(_mm256_and_si256(
        _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(lo - 1)),
        _mm256_cmpgt_epi32(_mm256_set1_epi32(lo + (int)n_taps), lane)));
    __m256 v = _mm256_loadu_ps(col + start);
    if (_mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q), in)))
        return -1;
    /* ranks as ovpool_bin_finish's keys: row << 4 (rows < 2^27, the caller's) */
    __m256i rank = _mm256_slli_epi32(_mm256_loadu_si256((const __m256i *)(col_row + start)), 4);
    int64_t key = ovpool_bin_finish(v, v, rank, rank, 1, 1, lo, (int)n_taps);
    return key < 0 ? -1 : start + (key & 15);
}

/* Horizontal max of 3-tap windows at stride 2 (the ResNet stem) over a
 * NaN-free float32 row: out[o] = max of buf[2o], buf[2o + 1], buf[2o + 2],
 * with the same operations as the scalar loop of _hmax_k, so the same bits,
 * in 8 lanes with the last block overlapping; reads buf[0 .. 2 n_out].
 * Returns 0 (nothing done) for rows of fewer than 8 outputs. The same for
 * sums measured 7% slower than gcc's scalar loop (avg 3x3 s2 on
 * 16x128x56x56 at 1 thread: its loads span two of the vertical pass's
 * stores; ovpool_sum_row_s2k3 avoids the store where W has no padding), the
 * maxima 5-8% faster. */
static inline int ovpool_hmax_s2k3_f32(const float *buf, float *out, ptrdiff_t n_out) {
    if (n_out < 8)
        return 0;
    for (ptrdiff_t blk = 0; blk * 8 < n_out; blk++) {
        ptrdiff_t o = ovpool_block_start(blk, 8, n_out);
        __m256 v[4];
        ovpool_taps8s(buf + 2 * o, 2, 3, v);
        __m256 acc = _mm256_max_ps(_mm256_max_ps(v[0], v[1]), v[2]);
        _mm256_storeu_ps(out + o, ovpool_unpermute8(acc, 2));
    }
    return 1;
}

/* The first maximum of the taps v[0 .. k) of one window row, k in 1, 2 or
 * 4, lane by lane, NaN-free: its value, and in *col its tap. ">" of the
 * later over the earlier (in pairs, then the pairs' winners) keeps the
 * earlier of equal taps; row by row with a strict ">", the window's first
 * maximum in row-major order follows, with one compare on the chain per row
 * instead of one per tap and no tap number broadcast per tap. */
static inline OVPOOL_INLINE __m256 ovpool_row_max8(const __m256 *v, int k, __m256i *col) {
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
    __m256i c23 = ovpool_take_index8(_mm256_set1_epi32(2), _mm256_set1_epi32(3),
                                     _mm256_cmp_ps(v[3], v[2], _CMP_GT_OQ));
    __m256 m23 = _mm256_max_ps(v[3], v[2]);
    *col = ovpool_take_index8(c, c23, _mm256_cmp_ps(m23, m, _CMP_GT_OQ));
    return _mm256_max_ps(m23, m);
}

/* Values and in-plane positions of the window maxima of two blocks of 8
 * outputs (p and q), the taps in row-major order with a strict ">" (the
 * first maximum wins). With exact clear, the NaN-free version: ">" alone,
 * the value by max (vmaxps(v, best) is v > best ? v : best, the blend's
 * choice, and one cycle shorter on the chain from tap to tap), the tap's
 * offset blended and the lanes' bases added once at the end, and
 * one unordered compare per pair of taps (one of each block); it returns 1
 * when a tap was NaN, and the caller redoes the blocks with exact set (a NaN
 * always wins, the last one): 4 vector operations per tap of a block
 * instead of 6. */
static inline OVPOOL_INLINE int ovpool_argblock8x2(
        const float *p, const float *q, ptrdiff_t in_w, float *out_p, float *out_q,
        int64_t *idx_p, int64_t *idx_q, int32_t off_p, int32_t off_q, int64_t index_base,
        int kh, int stride, int k, int left, int exact) {
    __m256 v[4], w[4], best_p, best_q, nan = _mm256_setzero_ps();
    __m256i at_p, at_q;
    int kw = ovpool_lane_kw(stride, k);
    __m256i lanes = ovpool_lane_starts8(stride, k);
    __m256i base_p = _mm256_add_epi32(lanes, _mm256_set1_epi32(off_p));
    __m256i base_q = _mm256_add_epi32(lanes, _mm256_set1_epi32(off_q));
    for (int t = 0; t < kh; t++) {
        if (left)
            ovpool_taps8s_left(p + t * in_w, stride, v);
        else
            ovpool_taps8s(p + t * in_w, stride, k, v);
        ovpool_taps8s(q + t * in_w, stride, k, w);
        for (int u = 0; u < k; u++) {
            __m256i tap = _mm256_set1_epi32((int32_t)(t * in_w + u));
            /* p's output 0 of a left edge: its tap 0 is column 0, one right */
            __m256i tap_p = left && u == 0 ? _mm256_add_epi32(tap, _mm256_setr_epi32(
                                                 1, 0, 0, 0, 0, 0, 0, 0)) : tap;
            if (!exact) {
                nan = _mm256_or_ps(nan, _mm256_cmp_ps(v[u], w[u], _CMP_UNORD_Q));
                if (t == 0 && u == 0) {
                    best_p = v[0]; best_q = w[0];
                    at_p = tap_p;                /* 0 but a left edge's lane 0 */
                    at_q = tap;
                    continue;
                }
                __m256 take_p = _mm256_cmp_ps(v[u], best_p, _CMP_GT_OQ);
                __m256 take_q = _mm256_cmp_ps(w[u], best_q, _CMP_GT_OQ);
                best_p = _mm256_max_ps(v[u], best_p);       /* NaN-free: the blend */
                best_q = _mm256_max_ps(w[u], best_q);
                at_p = ovpool_take_index8(at_p, tap_p, take_p);
                at_q = ovpool_take_index8(at_q, tap, take_q);
                continue;
            }
            __m256i idx_p = _mm256_add_epi32(base_p, tap_p);
            __m256i idx_q = _mm256_add_epi32(base_q, tap);
            if (t == 0 && u == 0) {
                best_p = v[0]; best_q = w[0]; at_p = idx_p; at_q = idx_q;
                continue;
            }
            __m256 take_p = _mm256_or_ps(_mm256_cmp_ps(v[u], best_p, _CMP_GT_OQ),
                                         _mm256_cmp_ps(v[u], v[u], _CMP_UNORD_Q));
            __m256 take_q = _mm256_or_ps(_mm256_cmp_ps(w[u], best_q, _CMP_GT_OQ),
                                         _mm256_cmp_ps(w[u], w[u], _CMP_UNORD_Q));
            best_p = _mm256_blendv_ps(best_p, v[u], take_p);
            best_q = _mm256_blendv_ps(best_q, w[u], take_q);
            at_p = ovpool_take_index8(at_p, idx_p, take_p);
            at_q = ovpool_take_index8(at_q, idx_q, take_q);
        }
    }
    if (!exact) {
        if (_mm256_movemask_ps(nan))
            return 1;
        at_p = _mm256_add_epi32(at_p, base_p);
        at_q = _mm256_add_epi32(at_q, base_q);
    }
    _mm256_storeu_ps(out_p, ovpool_unpermute8(best_p, kw));
    _mm256_storeu_ps(out_q, ovpool_unpermute8(best_q, kw));
    ovpool_store_indices8(idx_p, idx_p + 4, ovpool_unpermute8i(at_p, kw), index_base);
    ovpool_store_indices8(idx_q, idx_q + 4, ovpool_unpermute8i(at_q, kw), index_base);
    return 0;
}

/* ovpool_argblock4x2 of tiling windows (stride == k in 1, 2, 4) with its two
 * blocks side by side in 256-bit registers (rows of 4-7 outputs: adaptive
 * 28->7 and 14->7 with indices), the NaN-free version first as
 * ovpool_argblock8x2: the same choice on every lane, with half the
 * operations. */
static inline OVPOOL_INLINE int ovpool_argblock4x2_wide(
        const float *p, const float *q, ptrdiff_t in_w, float *out_p, float *out_q,
        int64_t *idx_p, int64_t *idx_q, int32_t off_p, int32_t off_q, int64_t index_base,
        int kh, int k, int exact) {
    __m256 v[4], best, nan = _mm256_setzero_ps();
    __m256i at;
    /* window start of each lane's output, in ovpool_taps4x2's lane order */
    __m256i base = k == 1 ? _mm256_add_epi32(
                       _mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3),
                       _mm256_setr_epi32(off_p, off_p, off_p, off_p, off_q, off_q, off_q, off_q))
                 : _mm256_add_epi32(
                       k == 2 ? _mm256_setr_epi32(0, 2, 0, 2, 4, 6, 4, 6)
                              : _mm256_setr_epi32(0, 8, 0, 8, 4, 12, 4, 12),
                       _mm256_setr_epi32(off_p, off_p, off_q, off_q, off_p, off_p, off_q, off_q));
    for (int t = 0; t < kh; t++) {
        ovpool_taps4x2(p + t * in_w, q + t * in_w, k, v, 0);
        if (!exact) {       /* row by row, see ovpool_row_max8 */
            __m256i col;
            __m256 m = ovpool_row_max8(v, k, &col);
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(v[0], v[k / 2], _CMP_UNORD_Q));
            if (k == 4)
                nan = _mm256_or_ps(nan, _mm256_cmp_ps(v[1], v[3], _CMP_UNORD_Q));
            col = _mm256_add_epi32(_mm256_set1_epi32((int32_t)(t * in_w)), col);
            if (t == 0) {
                best = m;
                at = col;
                continue;
            }
            __m256 take = _mm256_cmp_ps(m, best, _CMP_GT_OQ);
            best = _mm256_max_ps(m, best);
            at = ovpool_take_index8(at, col, take);
            continue;
        }
        for (int u = 0; u < k; u++) {
            __m256i tap = _mm256_add_epi32(base, _mm256_set1_epi32((int32_t)(t * in_w + u)));
            __m256 take;
            if (t == 0 && u == 0) {
                best = v[0];
                at = tap;
                continue;
            }
            take = _mm256_or_ps(_mm256_cmp_ps(v[u], best, _CMP_GT_OQ),
                                _mm256_cmp_ps(v[u], v[u], _CMP_UNORD_Q));
            best = _mm256_blendv_ps(best, v[u], take);
            at = ovpool_take_index8(at, tap, take);
        }
    }
    if (!exact) {
        if (_mm256_movemask_ps(nan))
            return 1;
        at = _mm256_add_epi32(at, base);
    }
    best = ovpool_unpermute8(best, k);       /* p's 4 outputs, then q's */
    at = ovpool_unpermute8i(at, k);
    _mm_storeu_ps(out_p, _mm256_castps256_ps128(best));
    _mm_storeu_ps(out_q, _mm256_extractf128_ps(best, 1));
    ovpool_store_indices8(idx_p, idx_q, at, index_base);   /* p's 4, then q's */
    return 0;
}
#else
static inline int ovpool_hmax_s2k3_f32(const float *buf, float *out, ptrdiff_t n_out) {
    (void)buf; (void)out; (void)n_out;
    return 0;
}

static inline ptrdiff_t ovpool_window_argmax8_f32(const float *col, const int32_t *col_row,
                                                  ptrdiff_t in_w, ptrdiff_t first,
                                                  ptrdiff_t n_taps) {
    (void)col; (void)col_row; (void)in_w; (void)first; (void)n_taps;
    return -1;      /* no AVX2: the caller's scalar loop */
}
#endif

#if defined(__AVX2__)
/* ovpool_argblock8x2 of a row's outputs o.. and o2.. (left: o == 0 is a
 * left edge): the NaN-free version, then the exact one if a tap was NaN */
static inline OVPOOL_INLINE void ovpool_argpair8(const float *row0, ptrdiff_t in_w, float *out,
                                                 int64_t *index, ptrdiff_t o, ptrdiff_t o2,
                                                 int32_t row_offset, int64_t index_base, int kh,
                                                 int stride, int k, int left) {
    if (ovpool_argblock8x2(row0 + o * stride, row0 + o2 * stride, in_w, out + o, out + o2,
                           index + o, index + o2, (int32_t)(row_offset + o * stride),
                           (int32_t)(row_offset + o2 * stride), index_base, kh, stride, k,
                           left, 0))
        ovpool_argblock8x2(row0 + o * stride, row0 + o2 * stride, in_w, out + o, out + o2,
                           index + o, index + o2, (int32_t)(row_offset + o * stride),
                           (int32_t)(row_offset + o2 * stride), index_base, kh, stride, k,
                           left, 1);
}
#endif

#if defined(__AVX2__)
/* One window row of a pair of 8-output blocks (p, q) in ovpool_argrows_k3:
 * the first maximum of each output's 3 taps (lanes in ovpool_taps8s's
 * order), and in pos its in-plane position, base[u] + row for tap u (p's
 * base[0..2], q's base[3..5]); NaN-free. left: as ovpool_taps8s_left (its
 * lane 0's base[0] is its base[1]). Any NaN tap is set in *nan: taps 1 and 2
 * hold every column but tap 0 of output 0, which the block before holds
 * (tap 2 of its last output or after) unless p is the first block of its
 * chunk: first_p checks it. */
static inline OVPOOL_INLINE void ovpool_row_argmax3x2(const float *p, const float *q, int stride,
                                                      int left, int first_p,
                                                      const __m256i *base, __m256i row,
                                                      __m256 h[2], __m256i pos[2],
                                                      __m256 *nan) {
    __m256 v[4], w[4];
    if (left)
        ovpool_taps8s_left(p, stride, v);
    else
        ovpool_taps8s(p, stride, 3, v);
    ovpool_taps8s(q, stride, 3, w);
    __m256 odd = _mm256_or_ps(_mm256_cmp_ps(v[1], w[1], _CMP_UNORD_Q),
                              _mm256_cmp_ps(v[2], w[2], _CMP_UNORD_Q));
    if (first_p && !left)
        odd = _mm256_or_ps(odd, _mm256_cmp_ps(v[0], v[0], _CMP_UNORD_Q));
    *nan = _mm256_or_ps(*nan, odd);
    __m256 take_p = _mm256_cmp_ps(v[1], v[0], _CMP_GT_OQ);
    __m256 take_q = _mm256_cmp_ps(w[1], w[0], _CMP_GT_OQ);
    __m256 m_p = _mm256_max_ps(v[1], v[0]), m_q = _mm256_max_ps(w[1], w[0]);
    __m256i at_p = ovpool_take_index8(base[0], base[1], take_p);
    __m256i at_q = ovpool_take_index8(base[3], base[4], take_q);
    take_p = _mm256_cmp_ps(v[2], m_p, _CMP_GT_OQ);
    take_q = _mm256_cmp_ps(w[2], m_q, _CMP_GT_OQ);
    pos[0] = _mm256_add_epi32(ovpool_take_index8(at_p, base[2], take_p), row);
    pos[1] = _mm256_add_epi32(ovpool_take_index8(at_q, base[5], take_q), row);
    h[0] = _mm256_max_ps(v[2], m_p);
    h[1] = _mm256_max_ps(w[2], m_q);
}

/* What one pair of 8-output blocks keeps from an output row to the next in
 * ovpool_argrows_k3: its lanes' tap offsets (p's taps 0..2, then q's) and
 * the horizontal argmax of the window rows the next output row shares. */
typedef struct {
    __m256i base[6];
    __m256 value[2][2];         /* [shared window row][p, q] */
    __m256i at[2][2];
} ovpool_argcarry;

/* One output row of a pair of blocks (p, q: their window row 0) in
 * ovpool_argrows_k3: the rows not kept from the row before (all 3 when
 * first) by ovpool_row_argmax3x2, then the three combined top to bottom. */
static inline OVPOOL_INLINE void ovpool_argstep8x2_k3(
        const float *p, const float *q, ptrdiff_t in_w, float *out_p, float *out_q,
        int64_t *idx_p, int64_t *idx_q, int64_t index_base, int stride, int row_stride,
        int left, int first_p, int first, int32_t row_at, ovpool_argcarry *c, __m256 *nan) {
    int kw = ovpool_lane_kw(stride, 3), kept = 3 - row_stride, t = 0;
    __m256 h[3][2];
    __m256i at[3][2];
    if (!first)
        for (; t < kept; t++) {
            h[t][0] = c->value[t][0]; h[t][1] = c->value[t][1];
            at[t][0] = c->at[t][0]; at[t][1] = c->at[t][1];
        }
    for (; t < 3; t++)
        ovpool_row_argmax3x2(p + t * in_w, q + t * in_w, stride, left, first_p, c->base,
                             _mm256_set1_epi32(row_at + (int32_t)(t * in_w)), h[t], at[t],
                             nan);
    for (t = 0; t < kept; t++) {
        c->value[t][0] = h[t + row_stride][0]; c->value[t][1] = h[t + row_stride][1];
        c->at[t][0] = at[t + row_stride][0]; c->at[t][1] = at[t + row_stride][1];
    }
    for (int j = 0; j < 2; j++) {
        __m256 take = _mm256_cmp_ps(h[1][j], h[0][j], _CMP_GT_OQ);
        __m256 best = _mm256_max_ps(h[1][j], h[0][j]);
        __m256i pos = ovpool_take_index8(at[0][j], at[1][j], take);
        take = _mm256_cmp_ps(h[2][j], best, _CMP_GT_OQ);
        best = _mm256_max_ps(h[2][j], best);
        pos = ovpool_take_index8(pos, at[2][j], take);
        int64_t *idx = j ? idx_q : idx_p;
        _mm256_storeu_ps(j ? out_q : out_p, ovpool_unpermute8(best, kw));
        ovpool_store_indices8(idx, idx + 4, ovpool_unpermute8i(pos, kw), index_base);
    }
}

/* Block pairs per chunk of ovpool_argrows_k3: 256 outputs, 7 KiB of carries. */
#define OVPOOL_ARG_CHUNK 16

/* ovpool_argmax_rows_f32 of 3x3 windows (W stride 1 or 2) whose output rows
 * step down row_stride (1 or 2) input rows, NaN-free first: each input row's
 * horizontal argmax is taken once, and the 3 - row_stride window rows an
 * output row shares with the next are kept (per block pair, in a carry)
 * instead of taken again. The row's first maximum, then the first row
 * holding the maximum, is the first maximum in row-major order. The rows go
 * in order through chunks of 256 outputs, so the input streams as in the
 * row path (a walk down each pair's columns was 1.4x slower beyond L3).
 * 1.8x fewer instructions than the 9-tap fold of every output row. Where a
 * tap of a chunk is NaN, its rows are redone with the exact rule. */
static inline OVPOOL_INLINE void ovpool_argrows_k3(
        const float *row0, ptrdiff_t in_w, float *out, int64_t *index, ptrdiff_t n_out,
        int32_t row_offset, int64_t index_base, int stride, int row_stride, int left,
        ptrdiff_t n_rows, ptrdiff_t out_stride) {
    ovpool_argcarry carry[OVPOOL_ARG_CHUNK];
    ptrdiff_t n_blocks = (n_out + 7) / 8, row_step = row_stride * in_w;
    __m256i lanes = ovpool_lane_starts8(stride, 3);
    __m256i one = _mm256_set1_epi32(1);
    for (ptrdiff_t b0 = 0; b0 < n_blocks; b0 += 2 * OVPOOL_ARG_CHUNK) {
        ptrdiff_t b_end = b0 + 2 * OVPOOL_ARG_CHUNK < n_blocks ? b0 + 2 * OVPOOL_ARG_CHUNK
                                                               : n_blocks;
        ptrdiff_t o[2 * OVPOOL_ARG_CHUNK];
        __m256 nan = _mm256_setzero_ps();
        for (ptrdiff_t b = b0; b < b_end; b += 2) {
            ovpool_argcarry *c = carry + (b - b0) / 2;
            o[b - b0] = ovpool_block_start(b, 8, n_out);
            o[b - b0 + 1] = ovpool_block_start(b + 1 < n_blocks ? b + 1 : b, 8, n_out);
            for (int j = 0; j < 2; j++) {
                c->base[3 * j] = _mm256_add_epi32(
                    lanes, _mm256_set1_epi32((int32_t)(row_offset + o[b - b0 + j] * stride)));
                c->base[3 * j + 1] = _mm256_add_epi32(c->base[3 * j], one);
                c->base[3 * j + 2] = _mm256_add_epi32(c->base[3 * j + 1], one);
            }
            if (left && b == 0)     /* output 0's tap 0 repeats tap 1, column 0 */
                c->base[0] = _mm256_blend_epi32(c->base[0], c->base[1], 1);
        }
        /* the chunk's first pair (a left edge, or its first block's tap 0
         * checked for NaN), then the others; output row 0, then the rest */
#define OVPOOL_STEP(B, L, FP, F) \
    ovpool_argstep8x2_k3(rows + o[B - b0] * stride, rows + o[B - b0 + 1] * stride, in_w, \
                         out_r + o[B - b0], out_r + o[B - b0 + 1], index_r + o[B - b0], \
                         index_r + o[B - b0 + 1], index_base, stride, row_stride, L, FP, F, \
                         row_at, carry + (B - b0) / 2, &nan)
#define OVPOOL_ROW(F) { \
    const float *rows = row0 + r * row_step; \
    int32_t row_at = (int32_t)(r * row_step); \
    float *out_r = out + r * out_stride; \
    int64_t *index_r = index + r * out_stride; \
    if (left && b0 == 0) \
        OVPOOL_STEP(b0, 1, 1, F); \
    else \
        OVPOOL_STEP(b0, 0, 1, F); \
    for (ptrdiff_t b = b0 + 2; b < b_end; b += 2) \
        OVPOOL_STEP(b, 0, 0, F); }
        ptrdiff_t r = 0;
        OVPOOL_ROW(1)
        for (r = 1; r < n_rows; r++)
            OVPOOL_ROW(0)
#undef OVPOOL_ROW
#undef OVPOOL_STEP
        if (!_mm256_movemask_ps(nan))
            continue;
        for (ptrdiff_t r = 0; r < n_rows; r++)
            for (ptrdiff_t b = b0; b < b_end; b += 2) {
                ptrdiff_t op = o[b - b0], oq = o[b - b0 + 1];
                ovpool_argblock8x2(row0 + r * row_step + op * stride,
                                   row0 + r * row_step + oq * stride, in_w,
                                   out + r * out_stride + op, out + r * out_stride + oq,
                                   index + r * out_stride + op, index + r * out_stride + oq,
                                   (int32_t)(row_offset + r * row_step + op * stride),
                                   (int32_t)(row_offset + r * row_step + oq * stride),
                                   index_base, 3, stride, 3, left && b == 0, 1);
            }
    }
}
#endif

#if defined(__SSE2__)
static inline OVPOOL_INLINE void ovpool_argmax_sk(const float *row0, ptrdiff_t in_w,
                                                  float *out, int64_t *index, ptrdiff_t n_out,
                                                  int kh, int stride, int k, int32_t row_offset,
                                                  int64_t index_base, int left) {
#if defined(__AVX2__)
    if (n_out >= 8) {
        ptrdiff_t n_blocks = (n_out + 7) / 8, b;
        for (b = 0; b < n_blocks; b += 2) {
            ptrdiff_t o = ovpool_block_start(b, 8, n_out);
            ptrdiff_t o2 = ovpool_block_start(b + 1 < n_blocks ? b + 1 : b, 8, n_out);
            if (k == 3 && left && b == 0)       /* see ovpool_left_edge_ok */
                ovpool_argpair8(row0, in_w, out, index, o, o2, row_offset, index_base, kh,
                                stride, k, 1);
            else
                ovpool_argpair8(row0, in_w, out, index, o, o2, row_offset, index_base, kh,
                                stride, k, 0);
        }
        return;
    }
#endif
    ptrdiff_t n_blocks = (n_out + 3) / 4, b;
    for (b = 0; b < n_blocks; b += 2) {
        ptrdiff_t o = ovpool_block_start(b, 4, n_out);
        ptrdiff_t o2 = ovpool_block_start(b + 1 < n_blocks ? b + 1 : b, 4, n_out);
#if defined(__AVX2__)
        if (stride == k) {              /* the tilings (4-7 outputs: adaptive 28->7) */
            if (ovpool_argblock4x2_wide(row0 + o * stride, row0 + o2 * stride, in_w, out + o,
                                        out + o2, index + o, index + o2,
                                        (int32_t)(row_offset + o * stride),
                                        (int32_t)(row_offset + o2 * stride), index_base,
                                        kh, k, 0))
                ovpool_argblock4x2_wide(row0 + o * stride, row0 + o2 * stride, in_w, out + o,
                                        out + o2, index + o, index + o2,
                                        (int32_t)(row_offset + o * stride),
                                        (int32_t)(row_offset + o2 * stride), index_base,
                                        kh, k, 1);
            continue;
        }
#endif
        if (ovpool_argblock4x2(row0 + o * stride, row0 + o2 * stride, in_w, out + o, out + o2,
                               index + o, index + o2, (int32_t)(row_offset + o * stride),
                               (int32_t)(row_offset + o2 * stride), index_base, kh, stride, k, 0))
            ovpool_argblock4x2(row0 + o * stride, row0 + o2 * stride, in_w, out + o, out + o2,
                               index + o, index + o2, (int32_t)(row_offset + o * stride),
                               (int32_t)(row_offset + o2 * stride), index_base, kh, stride, k, 1);
    }
}
#endif

/* Needs ovpool_vector_rows_ok(n_out, stride, k); row0 is output 0's first tap. */
static inline void ovpool_argmax_row_f32(const float *row0, ptrdiff_t in_w, float *out,
                                         int64_t *index, ptrdiff_t n_out, int kh, int stride,
                                         int k, int32_t row_offset, int64_t index_base,
                                         int left) {
#if defined(__SSE2__)
    if (k == 3 && stride == 2)
        ovpool_argmax_sk(row0, in_w, out, index, n_out, kh, 2, 3, row_offset, index_base, left);
    else if (k == 3)        /* stride 1 */
        ovpool_argmax_sk(row0, in_w, out, index, n_out, kh, 1, 3, row_offset, index_base, left);
    else if (k == 1)        /* the tilings: stride == k */
        ovpool_argmax_sk(row0, in_w, out, index, n_out, kh, 1, 1, row_offset, index_base, 0);
    else if (k == 2)
        ovpool_argmax_sk(row0, in_w, out, index, n_out, kh, 2, 2, row_offset, index_base, 0);
    else
        ovpool_argmax_sk(row0, in_w, out, index, n_out, kh, 4, 4, row_offset, index_base, 0);
#else
    (void)row0; (void)in_w; (void)out; (void)index; (void)n_out; (void)kh; (void)stride;
    (void)k; (void)row_offset; (void)index_base; (void)left;
#endif
}

/* ovpool_argmax_row_f32 of n_rows output rows: row r's output 0 window at
 * row0 + r * row_step (in-plane offset row_offset + r * row_step), its
 * values at out + r * out_stride and its indices at index + r * out_stride
 * (a row's n_out outputs may be the interior of a longer row). One call
 * for a run of rows: the per-row set-up and the caller's loop took 12-20%
 * of the time (paired: adaptive max 28->7 with indices 0.88x, 3x3 s2 p1 on
 * 8x64x56x56 with indices 0.83x at 1 and 2 threads). A function of its own:
 * the rows loop inside ovpool_argmax_row_f32 made its single rows 10-14%
 * slower. */
static inline void ovpool_argmax_rows_f32(const float *row0, ptrdiff_t in_w, float *out,
                                          int64_t *index, ptrdiff_t n_out, int kh, int stride,
                                          int k, int32_t row_offset, int64_t index_base,
                                          int left, ptrdiff_t n_rows, ptrdiff_t row_step,
                                          ptrdiff_t out_stride) {
#if defined(__AVX2__)
    /* 3x3 windows stepping 1 or 2 rows: the shared window rows kept */
    if (k == 3 && kh == 3 && n_out >= 8 && n_rows > 1
            && (row_step == in_w || row_step == 2 * in_w)) {
        if (stride == 2)
            row_step == in_w ? ovpool_argrows_k3(row0, in_w, out, index, n_out, row_offset,
                                                 index_base, 2, 1, left, n_rows, out_stride)
                             : ovpool_argrows_k3(row0, in_w, out, index, n_out, row_offset,
                                                 index_base, 2, 2, left, n_rows, out_stride);
        else
            row_step == in_w ? ovpool_argrows_k3(row0, in_w, out, index, n_out, row_offset,
                                                 index_base, 1, 1, left, n_rows, out_stride)
                             : ovpool_argrows_k3(row0, in_w, out, index, n_out, row_offset,
                                                 index_base, 1, 2, left, n_rows, out_stride);
        return;
    }
#endif
#if defined(__SSE2__)
#define OVPOOL_ROWS(S, K, L) \
    for (ptrdiff_t r = 0; r < n_rows; r++) \
        ovpool_argmax_sk(row0 + r * row_step, in_w, out + r * out_stride, \
                         index + r * out_stride, n_out, kh, S, K, \
                         (int32_t)(row_offset + r * row_step), index_base, L)
    if (k == 3 && stride == 2)
        OVPOOL_ROWS(2, 3, left);
    else if (k == 3)        /* stride 1 */
        OVPOOL_ROWS(1, 3, left);
    else if (k == 1)        /* the tilings: stride == k */
        OVPOOL_ROWS(1, 1, 0);
    else if (k == 2)
        OVPOOL_ROWS(2, 2, 0);
    else
        OVPOOL_ROWS(4, 4, 0);
#undef OVPOOL_ROWS
#else
    (void)row0; (void)in_w; (void)out; (void)index; (void)n_out; (void)kh; (void)stride;
    (void)k; (void)row_offset; (void)index_base; (void)left; (void)n_rows; (void)row_step;
    (void)out_stride;
#endif
}

/* Whether ovpool_argmax_row_f32 takes, with left set, n_out outputs whose
 * first (output 0) has 3-tap windows starting one column left of the row
 * (W padding 1, stride 1 or 2; see ovpool_taps8s_left): AVX2 builds, 8
 * outputs or more (the 8-lane blocks). */
static inline int ovpool_left_edge_ok(ptrdiff_t n_out, int stride, int k, ptrdiff_t pad) {
#if defined(__AVX2__)
    return n_out >= 8 && k == 3 && (stride == 1 || stride == 2) && pad == 1;
#else
    (void)n_out; (void)stride; (void)k; (void)pad;
    return 0;
#endif
}

/* Maximum of windows 3 taps wide at stride 1 or 2 along W (the ResNet stem's
 * 3x3 s2, 3x3 s1), float32, for up to n_rows consecutive output rows of one
 * 2D slice: row r's window rows are plane + (win_h[3r] + t) * in_w for
 * t < win_h[3r+1] <= 3. buf is the per-thread padded column buffer (-inf
 * outside buf[pad_w .. pad_w + in_w)). The same operations as the row path
 * (_max_rows_exact, then _hmax), so the same bits; one call per slice
 * instead of one per row. Returns the number of rows done: it stops before a
 * row whose window rows hold a NaN or that has none, which the caller's row
 * path takes with the exact rule. Taken without software prefetch only: on
 * inputs beyond L3 (the stem at batch 16, prefetched) it measured 12% slower
 * than the row path, for reasons not found. */
static inline ptrdiff_t ovpool_max_rows_k3_f32(const float *plane, ptrdiff_t in_w,
                                               const int64_t *win_h, ptrdiff_t n_rows,
                                               float *out, ptrdiff_t out_w, float *buf,
                                               ptrdiff_t pad_w, int stride) {
    float *col = buf + pad_w;
    for (ptrdiff_t r = 0; r < n_rows; r++, out += out_w) {
        const int64_t *wh = win_h + 3 * r;
        int64_t offsets[3];
        ptrdiff_t n = wh[1], o = 0;
        for (ptrdiff_t t = 0; t < n; t++)
            offsets[t] = (wh[0] + t) * in_w;
        if (n == 0 || ovpool_vmax_rows_f32(plane, offsets, n, col, in_w))
            return r;
        if (stride == 2) {
            if (ovpool_hmax_s2k3_f32(buf, out, out_w))
                continue;
        }
#if defined(__AVX2__)
        else if (out_w >= 8) {
            for (ptrdiff_t blk = 0; blk * 8 < out_w; blk++) {
                o = ovpool_block_start(blk, 8, out_w);
                __m256 v = _mm256_max_ps(_mm256_loadu_ps(buf + o), _mm256_loadu_ps(buf + o + 1));
                _mm256_storeu_ps(out + o, _mm256_max_ps(v, _mm256_loadu_ps(buf + o + 2)));
            }
            o = out_w;
        }
#endif
        for (; o < out_w; o++) {       /* _hmax_k's chain */
            const float *taps = buf + o * stride;
            float v = taps[0] > taps[1] ? taps[0] : taps[1];
            out[o] = v > taps[2] ? v : taps[2];
        }
    }
    return n_rows;
}

#endif /* OVPOOL_SIMD_H */
