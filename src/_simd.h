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

#if defined(__AVX__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline float ovpool_scalar_max_f32(const float *x, ptrdiff_t n, float acc, int *nan) {
    for (ptrdiff_t i = 0; i < n; i++) {
        float v = x[i];
        acc = acc > v ? acc : v;
        *nan |= (v != v);
    }
    return acc;
}

static inline double ovpool_scalar_max_f64(const double *x, ptrdiff_t n, double acc, int *nan) {
    for (ptrdiff_t i = 0; i < n; i++) {
        double v = x[i];
        acc = acc > v ? acc : v;
        *nan |= (v != v);
    }
    return acc;
}

/* NaN-propagating maximum of x[0..n), n >= 1. */
static inline float ovpool_span_max_f32(const float *x, ptrdiff_t n) {
    ptrdiff_t i = 0;
    int nan = 0;
    float acc = -INFINITY;
#if defined(__AVX__)
    if (n >= 8) {
        __m256 a = _mm256_loadu_ps(x);
        __m256 u = _mm256_cmp_ps(a, a, _CMP_UNORD_Q);
        for (i = 8; i + 8 <= n; i += 8) {
            __m256 v = _mm256_loadu_ps(x + i);
            a = _mm256_max_ps(a, v);
            u = _mm256_or_ps(u, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
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
        __m128 a = _mm_loadu_ps(x);
        __m128 u = _mm_cmpunord_ps(a, a);
        for (i = 4; i + 4 <= n; i += 4) {
            __m128 v = _mm_loadu_ps(x + i);
            a = _mm_max_ps(a, v);
            u = _mm_or_ps(u, _mm_cmpunord_ps(v, v));
        }
        a = _mm_max_ps(a, _mm_movehl_ps(a, a));
        a = _mm_max_ss(a, _mm_shuffle_ps(a, a, 1));
        acc = _mm_cvtss_f32(a);
        nan = _mm_movemask_ps(u) != 0;
    }
#endif
    acc = ovpool_scalar_max_f32(x + i, n - i, acc, &nan);
    return nan ? NAN : acc;
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


/* float16 and bfloat16 rows, converted to and from float32 in scratch.
 *
 * float16: F16C (vcvtph2ps / vcvtps2ph, round to nearest even) in the
 * x86-64-v3 build; elsewhere the exact scalar conversions of F. Giesen's
 * public-domain half.c (half_to_float_fast5, float_to_half_fast3_rtne).
 * bfloat16: the upper 16 bits of a float32, rounded to nearest even; a NaN
 * stays a quiet NaN. Both match numpy's and ml_dtypes' casts. */
#include <stdint.h>
#include <string.h>
#if defined(__F16C__)
#include <immintrin.h>
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


/* Sum of x[0..n) in 16 lanes: lane j adds x[j], x[j+16], ... in order; then
 * the fold lanes j+8 -> j, j+4 -> j, j+2 -> j, lane 1 -> 0, and the tail
 * (n % 16 values) added in order. Every build computes exactly this order. */
static inline float ovpool_plane_sum_f32(const float *x, ptrdiff_t n) {
    ptrdiff_t i = 0;
    float total, tail = 0.0f;
#if defined(__AVX__)
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
        a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
    }
    a0 = _mm256_add_ps(a0, a1);
    __m128 c = _mm_add_ps(_mm256_castps256_ps128(a0), _mm256_extractf128_ps(a0, 1));
#elif defined(__SSE2__)
    __m128 q0 = _mm_setzero_ps(), q1 = _mm_setzero_ps(), q2 = _mm_setzero_ps(), q3 = _mm_setzero_ps();
    for (; i + 16 <= n; i += 16) {
        q0 = _mm_add_ps(q0, _mm_loadu_ps(x + i));
        q1 = _mm_add_ps(q1, _mm_loadu_ps(x + i + 4));
        q2 = _mm_add_ps(q2, _mm_loadu_ps(x + i + 8));
        q3 = _mm_add_ps(q3, _mm_loadu_ps(x + i + 12));
    }
    __m128 c = _mm_add_ps(_mm_add_ps(q0, q2), _mm_add_ps(q1, q3));
#endif
#if defined(__AVX__) || defined(__SSE2__)
    c = _mm_add_ps(c, _mm_movehl_ps(c, c));
    total = _mm_cvtss_f32(c) + _mm_cvtss_f32(_mm_shuffle_ps(c, c, 1));
#else
    float acc[16] = {0};
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

#endif /* OVPOOL_SIMD_H */
