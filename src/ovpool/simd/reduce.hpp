// Reductions of contiguous spans: maxima, first-maximum positions, sums.
//
// gcc vectorises the compare-select chains of the row kernels across output
// elements, but a reduction of one span needs lanes, and its SLP vectoriser
// gives up on lane arrays with selects. These helpers keep maxps lanes plus a
// sticky "NaN seen" mask (cmpunordps), and sums in a fixed lane order that
// every build (AVX2, SSE2, scalar) computes exactly.
#pragma once

#include <algorithm>
#include <cmath>

#include "vec.hpp"

OVPOOL_BEGIN
namespace simd {

inline double scalar_max_f64(const double *x, ptrdiff_t n, double acc, int *nan) {
    for (ptrdiff_t i = 0; i < n; i++) {
        double v = x[i];
        acc = acc > v ? acc : v;
        *nan |= (v != v);
    }
    return acc;
}

// NaN-propagating maximum of x[0..n), n >= 1, of float32 values or, with
// half set (a constant in every instance; F16C builds only), of float16
// values converted in registers: the same operations on the same values.
// The last vector block ends at n and may overlap the one before it (max is
// idempotent): no scalar tail (global max of 7x7 planes: 17% faster).
OVPOOL_INLINE float span_max_any(const void *x, ptrdiff_t n, int half) {
    ptrdiff_t i = 0;
    int nan = 0;
    float acc = -INFINITY;
#if defined(__AVX2__)
    if (n >= 8) {
        __m256 a = load8(x, 0, half);
        __m256 u = _mm256_cmp_ps(a, a, _CMP_UNORD_Q);
        for (i = 8; i + 8 <= n; i += 8) {
            __m256 v = load8(x, i, half);
            a = _mm256_max_ps(a, v);
            u = _mm256_or_ps(u, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        }
        if (i < n) {  // a last block ending at n instead of a scalar tail
            __m256 v = load8(x, n - 8, half);
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
        __m128 a = load4(x, 0, half);
        __m128 u = _mm_cmpunord_ps(a, a);
        for (i = 4; i + 4 <= n; i += 4) {
            __m128 v = load4(x, i, half);
            a = _mm_max_ps(a, v);
            u = _mm_or_ps(u, _mm_cmpunord_ps(v, v));
        }
        if (i < n) {
            __m128 v = load4(x, n - 4, half);
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
        float v = load1(x, i, half);
        acc = acc > v ? acc : v;
        nan |= (v != v);
    }
    return nan ? NAN : acc;
}

// span_max_any's result with four running maxima where the build has AVX2
// and the span is long (global maxima): one chain of maxps is bound by its
// latency once the span is in cache (global max of 64x3x64x64 planes 1.2x
// PyTorch's time). The maximum is the same value whatever the order; only a
// zero maximum, where a +0 and a -0 may tie, is taken again by the one
// chain, so the same zero is kept. Kept apart from span_max_any, which the
// row kernels inline for short windows.
OVPOOL_INLINE float span_max_wide(const void *x, ptrdiff_t n, int half) {
#if defined(__AVX2__)
    if (n >= 64) {
        __m256 a0 = load8(x, 0, half), a1 = load8(x, 8, half);
        __m256 a2 = load8(x, 16, half), a3 = load8(x, 24, half);
        __m256 u = _mm256_or_ps(
            _mm256_or_ps(_mm256_cmp_ps(a0, a0, _CMP_UNORD_Q), _mm256_cmp_ps(a1, a1, _CMP_UNORD_Q)),
            _mm256_or_ps(_mm256_cmp_ps(a2, a2, _CMP_UNORD_Q), _mm256_cmp_ps(a3, a3, _CMP_UNORD_Q)));
        ptrdiff_t i = 32;
        for (; i + 32 <= n; i += 32) {
            const __m256 v0 = load8(x, i, half), v1 = load8(x, i + 8, half);
            const __m256 v2 = load8(x, i + 16, half), v3 = load8(x, i + 24, half);
            a0 = _mm256_max_ps(a0, v0);
            a1 = _mm256_max_ps(a1, v1);
            a2 = _mm256_max_ps(a2, v2);
            a3 = _mm256_max_ps(a3, v3);
            u = _mm256_or_ps(u, _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(v0, v0, _CMP_UNORD_Q),
                                                          _mm256_cmp_ps(v1, v1, _CMP_UNORD_Q)),
                                             _mm256_or_ps(_mm256_cmp_ps(v2, v2, _CMP_UNORD_Q),
                                                          _mm256_cmp_ps(v3, v3, _CMP_UNORD_Q))));
        }
        // the rest in blocks of 8, the last ending at n
        for (; i < n; i += 8) {
            const __m256 v = load8(x, std::min<ptrdiff_t>(i, n - 8), half);
            a0 = _mm256_max_ps(a0, v);
            u = _mm256_or_ps(u, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        }
        const __m256 a = _mm256_max_ps(_mm256_max_ps(a0, a1), _mm256_max_ps(a2, a3));
        __m128 b = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
        const __m128 ub = _mm_or_ps(_mm256_castps256_ps128(u), _mm256_extractf128_ps(u, 1));
        b = _mm_max_ps(b, _mm_movehl_ps(b, b));
        b = _mm_max_ss(b, _mm_shuffle_ps(b, b, 1));
        const float best = _mm_cvtss_f32(b);
        if (_mm_movemask_ps(ub) != 0)
            return NAN;
        if (best != 0.0f)
            return best;
    }
#endif
    return span_max_any(x, n, half);
}

inline float span_max_f32(const float *x, ptrdiff_t n) {
    return span_max_any(x, n, 0);
}

inline float span_max_wide_f32(const float *x, ptrdiff_t n) {
    return span_max_wide(x, n, 0);
}

// span_max_wide of float16 spans converted in registers (only where kF16cRows; elsewhere the
// callers widen, and this is never called).
inline float span_max_wide_f16(const uint16_t *x, ptrdiff_t n) {
#if defined(__F16C__)
    return span_max_wide(x, n, 1);
#else
    (void)x;
    (void)n;
    return NAN;
#endif
}

inline double span_max_f64(const double *x, ptrdiff_t n) {
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
    acc = scalar_max_f64(x + i, n - i, acc, &nan);
    return nan ? NAN : acc;
}

// Position of the first maximum of x[0..n) (n >= 1), or of the last NaN:
// the maximum first, then a vector compare for its first occurrence.
inline ptrdiff_t span_argmax_f32(const float *x, ptrdiff_t n) {
    float best = span_max_f32(x, n);
    ptrdiff_t i = 0;
    if (best != best) {
        for (i = n - 1; x[i] == x[i]; i--) {
        }
        return i;
    }
#if defined(__SSE2__)
    __m128 b = _mm_set1_ps(best);
    for (; i + 4 <= n; i += 4) {
        int mask = _mm_movemask_ps(_mm_cmpeq_ps(_mm_loadu_ps(x + i), b));
        if (mask)
            return i + __builtin_ctz(static_cast<unsigned>(mask));
    }
#endif
    while (!(x[i] == best))
        i++;
    return i;
}

inline ptrdiff_t span_argmax_f64(const double *x, ptrdiff_t n) {
    double best = span_max_f64(x, n);
    ptrdiff_t i = 0;
    if (best != best) {
        for (i = n - 1; x[i] == x[i]; i--) {
        }
        return i;
    }
#if defined(__SSE2__)
    __m128d b = _mm_set1_pd(best);
    for (; i + 2 <= n; i += 2) {
        int mask = _mm_movemask_pd(_mm_cmpeq_pd(_mm_loadu_pd(x + i), b));
        if (mask)
            return i + __builtin_ctz(static_cast<unsigned>(mask));
    }
#endif
    while (!(x[i] == best))
        i++;
    return i;
}

// Sum of x[0..n) in 16 lanes: lane j adds x[j], x[j+16], ... in order; then
// the fold lanes j+8 -> j, j+4 -> j, j+2 -> j, lane 1 -> 0, and the tail
// (n % 16 values) added in order. Every build computes exactly this order.
// float32 values or, with half set (F16C builds only), float16 values
// converted in registers, as span_max_any. Of: each value as it is
// (SumOf::value), its magnitude or its square (the global Lp sums of p 1
// and 2).
enum class SumOf { value, abs, square };

template <SumOf Of = SumOf::value>
OVPOOL_INLINE float plane_sum_any(const void *x, ptrdiff_t n, int half) {
    ptrdiff_t i = 0;
    float total, tail = 0.0f;
#if defined(__AVX2__)
    const auto of = [](__m256 v) {
        if constexpr (Of == SumOf::abs)
            return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
        else if constexpr (Of == SumOf::square)
            return _mm256_mul_ps(v, v);
        return v;
    };
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_add_ps(a0, of(load8(x, i, half)));
        a1 = _mm256_add_ps(a1, of(load8(x, i + 8, half)));
    }
    a0 = _mm256_add_ps(a0, a1);
    __m128 c = _mm_add_ps(_mm256_castps256_ps128(a0), _mm256_extractf128_ps(a0, 1));
#elif defined(__SSE2__)
    const auto of = [](__m128 v) {
        if constexpr (Of == SumOf::abs)
            return _mm_andnot_ps(_mm_set1_ps(-0.0f), v);
        else if constexpr (Of == SumOf::square)
            return _mm_mul_ps(v, v);
        return v;
    };
    __m128 q0 = _mm_setzero_ps(), q1 = _mm_setzero_ps(), q2 = _mm_setzero_ps(),
           q3 = _mm_setzero_ps();
    for (; i + 16 <= n; i += 16) {
        q0 = _mm_add_ps(q0, of(load4(x, i, half)));
        q1 = _mm_add_ps(q1, of(load4(x, i + 4, half)));
        q2 = _mm_add_ps(q2, of(load4(x, i + 8, half)));
        q3 = _mm_add_ps(q3, of(load4(x, i + 12, half)));
    }
    __m128 c = _mm_add_ps(_mm_add_ps(q0, q2), _mm_add_ps(q1, q3));
#endif
    const auto of1 = [](float v) {
        if constexpr (Of == SumOf::abs)
            return std::fabs(v);
        else if constexpr (Of == SumOf::square)
            return v * v;
        return v;
    };
#if defined(__AVX2__) || defined(__SSE2__)
    c = _mm_add_ps(c, _mm_movehl_ps(c, c));
    total = _mm_cvtss_f32(c) + _mm_cvtss_f32(_mm_shuffle_ps(c, c, 1));
#else
    float acc[16] = {0};
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++)
            acc[j] += of1(load1(x, i + j, half));
    for (int j = 0; j < 8; j++)
        acc[j] += acc[j + 8];
    for (int j = 0; j < 4; j++)
        acc[j] += acc[j + 4];
    for (int j = 0; j < 2; j++)
        acc[j] += acc[j + 2];
    total = acc[0] + acc[1];
#endif
    for (; i < n; i++)
        tail += of1(load1(x, i, half));
    return total + tail;
}

inline float plane_sum_f32(const float *x, ptrdiff_t n) {
    return plane_sum_any(x, n, 0);
}

// float16 planes converted in registers (only where kF16cRows).
inline float plane_sum_f16(const uint16_t *x, ptrdiff_t n) {
#if defined(__F16C__)
    return plane_sum_any(x, n, 1);
#else
    (void)x;
    (void)n;
    return NAN;
#endif
}

inline double plane_sum_f64(const double *x, ptrdiff_t n) {
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
    __m256d b = _mm256_add_pd(_mm256_add_pd(a0, a2), _mm256_add_pd(a1, a3));  // lanes 0-3
    __m128d c = _mm_add_pd(_mm256_castpd256_pd128(b), _mm256_extractf128_pd(b, 1));
    total = _mm_cvtsd_f64(c) + _mm_cvtsd_f64(_mm_unpackhi_pd(c, c));
#elif defined(__SSE2__)
    __m128d q[8];
    for (int j = 0; j < 8; j++)
        q[j] = _mm_setzero_pd();
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 8; j++)
            q[j] = _mm_add_pd(q[j], _mm_loadu_pd(x + i + 2 * j));
    for (int j = 0; j < 4; j++)
        q[j] = _mm_add_pd(q[j], q[j + 4]);  // lanes j+8 -> j
    q[0] = _mm_add_pd(q[0], q[2]);          // j+4 -> j
    q[1] = _mm_add_pd(q[1], q[3]);
    __m128d c = _mm_add_pd(q[0], q[1]);  // j+2 -> j
    total = _mm_cvtsd_f64(c) + _mm_cvtsd_f64(_mm_unpackhi_pd(c, c));
#else
    double acc[16] = {0};
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++)
            acc[j] += x[i + j];
    for (int j = 0; j < 8; j++)
        acc[j] += acc[j + 8];
    for (int j = 0; j < 4; j++)
        acc[j] += acc[j + 4];
    for (int j = 0; j < 2; j++)
        acc[j] += acc[j + 2];
    total = acc[0] + acc[1];
#endif
    for (; i < n; i++)
        tail += x[i];
    return total + tail;
}

#if defined(__AVX2__)
// Eight windows' sums from their lane sums: lane j of v[l] holds window l's
// partial sum j. Folded as plane_sum_any and span_sum fold one window (lanes
// j + (j + 4), then (0 + 2) + (1 + 3)), but across the eight windows with
// shuffles: window l's sum comes out in lane l.
OVPOOL_INLINE __m256 fold8x8(const __m256 v[8]) {
    // lanes j + (j + 4): windows 2m (low half) and 2m + 1 (high half)
    __m256 s[4];
    for (int m = 0; m < 4; m++)
        s[m] = _mm256_add_ps(_mm256_permute2f128_ps(v[2 * m], v[2 * m + 1], 0x20),
                             _mm256_permute2f128_ps(v[2 * m], v[2 * m + 1], 0x31));
    // (0 + 2), (1 + 3): windows 0, 2 | 1, 3 (then 4, 6 | 5, 7), two lanes each
    __m256 d0 =
        _mm256_add_ps(_mm256_shuffle_ps(s[0], s[1], 0x44), _mm256_shuffle_ps(s[0], s[1], 0xEE));
    __m256 d1 =
        _mm256_add_ps(_mm256_shuffle_ps(s[2], s[3], 0x44), _mm256_shuffle_ps(s[2], s[3], 0xEE));
    // (0 + 2) + (1 + 3): windows 0, 2, 4, 6 | 1, 3, 5, 7, put back in order
    __m256 total = _mm256_add_ps(_mm256_shuffle_ps(d0, d1, 0x88), _mm256_shuffle_ps(d0, d1, 0xDD));
    return _mm256_permutevar8x32_ps(total, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// Lane l: the taps from..k-1 of the window at w + l * stride (elements;
// float32 or, with half, float16), added in order from 0. Four columns at a
// time, a 4x4 transpose of each half of the eight windows; the last four
// columns end at k (k >= 4).
OVPOOL_INLINE __m256 tail8x8(const void *w, ptrdiff_t stride, ptrdiff_t from, ptrdiff_t k,
                             int half) {
    __m256 tail = _mm256_setzero_ps();
    for (ptrdiff_t t = from; t < k;) {
        const ptrdiff_t at = k - t >= 4 ? t : k - 4;
        __m256 q0 = _mm256_set_m128(load4(w, at + 4 * stride, half), load4(w, at, half));
        __m256 q1 = _mm256_set_m128(load4(w, at + 5 * stride, half), load4(w, at + stride, half));
        __m256 q2 =
            _mm256_set_m128(load4(w, at + 6 * stride, half), load4(w, at + 2 * stride, half));
        __m256 q3 =
            _mm256_set_m128(load4(w, at + 7 * stride, half), load4(w, at + 3 * stride, half));
        __m256 lo01 = _mm256_unpacklo_ps(q0, q1), hi01 = _mm256_unpackhi_ps(q0, q1);
        __m256 lo23 = _mm256_unpacklo_ps(q2, q3), hi23 = _mm256_unpackhi_ps(q2, q3);
        __m256 col[4] = {_mm256_shuffle_ps(lo01, lo23, 0x44), _mm256_shuffle_ps(lo01, lo23, 0xEE),
                         _mm256_shuffle_ps(hi01, hi23, 0x44), _mm256_shuffle_ps(hi01, hi23, 0xEE)};
        for (; t < at + 4; t++)
            tail = _mm256_add_ps(tail, col[t - at]);
    }
    return tail;
}

// With ahead (the windows are in the input, read in address order), each
// block prefetches the lines this many bytes on: the hardware prefetcher
// alone left the 1000 -> 100 average at 1 thread 20% slower (3.56 -> 2.86 ms;
// 1 KiB ahead gained 0-3%, 3 KiB 7-12%, 12 KiB as 6 KiB).
constexpr ptrdiff_t kSpanAhead = 6144;

OVPOOL_INLINE void span_sums8_block(const float *w, ptrdiff_t stride, ptrdiff_t k, float *out,
                                    int ahead) {
    const ptrdiff_t full = k & ~static_cast<ptrdiff_t>(7);
    prefetch_span(reinterpret_cast<const char *>(w) + kSpanAhead,
                  ahead ? 8 * stride * static_cast<ptrdiff_t>(sizeof(float)) : 0);
    __m256 v[8];
    for (int l = 0; l < 8; l++)
        v[l] = _mm256_loadu_ps(w + l * stride);
    for (ptrdiff_t i = 8; i < full; i += 8)
        for (int l = 0; l < 8; l++)
            v[l] = _mm256_add_ps(v[l], _mm256_loadu_ps(w + l * stride + i));
    _mm256_storeu_ps(out, _mm256_add_ps(fold8x8(v), tail8x8(w, stride, full, k, 0)));
}

// Sums of eight contiguous planes of size >= 16 elements (float32, or
// float16 with half), each as plane_sum_any sums one (16 lanes, their two
// halves added, the fold, then the tail), into out[0..8): one fold for the
// eight.
OVPOOL_INLINE void plane_sums8_block(const void *x, ptrdiff_t size, float *out, int half) {
    const ptrdiff_t full = size & ~static_cast<ptrdiff_t>(15);
    __m256 v[8];
    for (int l = 0; l < 8; l++) {
        __m256 a0 = load8(x, l * size, half), a1 = load8(x, l * size + 8, half);
        for (ptrdiff_t i = 16; i < full; i += 16) {
            a0 = _mm256_add_ps(a0, load8(x, l * size + i, half));
            a1 = _mm256_add_ps(a1, load8(x, l * size + i + 8, half));
        }
        v[l] = _mm256_add_ps(a0, a1);
    }
    _mm256_storeu_ps(out, _mm256_add_ps(fold8x8(v), tail8x8(x, size, full, size, half)));
}

// Sums of the float32 planes x, x + step planes, x + 2 step and x + 3 step
// of size elements into out[0], out[step], out[2 step], out[3 step], each
// exactly as plane_sum_any sums one, the four planes' additions interleaved:
// one plane's two running sums wait on the adds' latency, four planes' eight
// keep the adders busy.
OVPOOL_INLINE void plane_sums4_f32(const float *x, ptrdiff_t size, ptrdiff_t step, float *out) {
    const float *p[4] = {x, x + step * size, x + 2 * step * size, x + 3 * step * size};
    __m256 a[4][2];
    for (int q = 0; q < 4; q++)
        a[q][0] = a[q][1] = _mm256_setzero_ps();
    ptrdiff_t i = 0;
    for (; i + 16 <= size; i += 16)
        for (int q = 0; q < 4; q++) {
            a[q][0] = _mm256_add_ps(a[q][0], _mm256_loadu_ps(p[q] + i));
            a[q][1] = _mm256_add_ps(a[q][1], _mm256_loadu_ps(p[q] + i + 8));
        }
    for (int q = 0; q < 4; q++) {
        const __m256 s = _mm256_add_ps(a[q][0], a[q][1]);
        __m128 c = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
        c = _mm_add_ps(c, _mm_movehl_ps(c, c));
        const float total = _mm_cvtss_f32(c) + _mm_cvtss_f32(_mm_shuffle_ps(c, c, 1));
        float tail = 0.0f;
        for (ptrdiff_t j = i; j < size; j++)
            tail += p[q][j];
        out[q * step] = total + tail;
    }
}

// plane_sums8_block over the blocks of eight of n_planes planes; returns the
// planes done. plane_sums' copy for planes of 64 to 127 values, out of line
// (why: plane_sums).
OVPOOL_NOINLINE ptrdiff_t plane_sums8(const char *x, ptrdiff_t size, ptrdiff_t n_planes, float *out,
                                      int half) {
    const ptrdiff_t esize = half ? 2 : 4;
    ptrdiff_t plane = 0;
    for (; plane + 8 <= n_planes; plane += 8)
        plane_sums8_block(x + plane * size * esize, size, out + plane, half);
    return plane;
}

// plane_sums4_f32 over n_planes planes taken as four runs, a quarter of the
// planes apart; returns the planes done (none where a run would be too short
// to pay).
OVPOOL_NOINLINE ptrdiff_t plane_sums4_strided(const float *x, ptrdiff_t size, ptrdiff_t n_planes,
                                              float *out) {
    const ptrdiff_t step = n_planes / 4;
    if (step < 1 || (step * size < 3072 && size < 1024))
        return 0;
    for (ptrdiff_t plane = 0; plane < step; plane++)
        plane_sums4_f32(x + plane * size, size, step, out + plane);
    return 4 * step;
}
#endif  // __AVX2__

// Sums of n_out windows of k >= 8 contiguous taps, window o starting at
// x + o * stride, in span_sum's order (lanes j hold 0 + x[j] + x[j+8] + ...,
// folded j+4 -> j, then (0 + 2) + (1 + 3); plus the tail, summed in order
// from 0). Eight windows at a time: the fold runs across the eight with
// shuffles instead of inside each (a 1000 -> 100 adaptive average is ten taps
// a window, a scalar chain per output in span_sum). The zero each lane starts
// from is dropped: it changes only the sign of a zero lane, and the final
// "+ tail" (tail is never -0) gives +0 either way. The last block of eight
// overlaps the one before it and writes the same sums again. Returns the
// outputs done: n_out, or 0 without AVX2 or under 8 outputs (the caller's).
inline ptrdiff_t span_sums8_f32(const float *x, ptrdiff_t stride, ptrdiff_t k, ptrdiff_t n_out,
                                float *out, int ahead) {
#if defined(__AVX2__)
    if (n_out < 8)
        return 0;
    for (ptrdiff_t blk = 0; blk * 8 < n_out; blk++) {
        const ptrdiff_t o = block_start(blk, 8, n_out);  // the last overlaps
        span_sums8_block(x + o * stride, stride, k, out + o, ahead);
    }
    return n_out;
#else
    (void)x;
    (void)stride;
    (void)k;
    (void)n_out;
    (void)out;
    (void)ahead;
    return 0;
#endif
}

// The sums of n_planes contiguous planes of size elements, float32 or, with
// half (F16C builds only), float16, each exactly as plane_sum_any (the same
// argument about the dropped zeros as above):
// - size 16+, float16, and float32 under 128: eight planes at a time folded
//   together. Small planes spent most of their time in each plane's own
//   fold: a float16 7x7 global average, 32x2048x7x7 at 1 thread, 0.234 ->
//   0.179 ms; float32 7x7 planes 0.67-0.98x at 1 thread, 4x4 and 5x5
//   0.79-0.89x, the memory-bound 128x2048x7x7 0.88-1.03x; 8x8 to 11x11 at
//   1 and 2 threads 0.86-0.94x in the quietest of three runs, 0.87-1.11x in
//   the others. Under 64 inlined here and over 64 out of line (plane_sums8):
//   the 7x7 planes' loops, compiled for sizes up to 127, ran 1.07-1.24x
//   slower.
// - float32 of 128+: four planes at a time, interleaved, a quarter of the
//   unit's planes apart (plane_sums4_strided; one plane's sum is two chains
//   of adds waiting on their latency). Paired at 1 / 2 threads against four
//   contiguous planes for 1024+ and one by one under, three runs:
//   16x256x28x27 0.54-0.63x / 0.62-0.88x, 64x256x14x14 0.63-0.82x /
//   0.65-0.94x, 16x256x32x32 0.61-0.67x / 0.53-0.79x, the rest of 17x17 to
//   112x112 0.78-1.01x / 0.65-1.03x. Runs shorter than 3072 values lost (a
//   quarter of 64 8x8 planes: 1.69x / 1.24x) and go one by one, as do four
//   contiguous planes under 1024 (within a page: 17x17 1.55-1.62x).
inline void plane_sums(const void *x, ptrdiff_t size, ptrdiff_t n_planes, float *out, int half) {
    const ptrdiff_t esize = half ? 2 : 4;
    const char *at = static_cast<const char *>(x);
    ptrdiff_t plane = 0;
#if defined(__AVX2__)
    if (size >= 16 && (half || size < 64))
        for (; plane + 8 <= n_planes; plane += 8)
            plane_sums8_block(at + plane * size * esize, size, out + plane, half);
    else if (!half && size >= 64 && size < 128)
        plane = plane_sums8(at, size, n_planes, out, 0);
    else if (!half && size >= 128)
        plane = plane_sums4_strided(reinterpret_cast<const float *>(at), size, n_planes, out);
#endif
    for (; plane < n_planes; plane++)
        out[plane] = plane_sum_any(at + plane * size * esize, size, half);
}

}  // namespace simd
OVPOOL_END
