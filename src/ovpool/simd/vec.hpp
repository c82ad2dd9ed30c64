// Vector loads, stores and lane shuffles shared by the kernels.
//
// Loads and stores take float32 rows or, with half set (a constant in every
// instance, so the branch folds away), float16 rows converted in registers
// (F16C, the x86-64-v3 build): exact widening, and the narrowing of
// narrow_f16, so the same bits as widening the rows into scratch first,
// without the scratch's store and reload. Offsets count elements.
//
// Tap helpers (taps4, taps8, ...) give, for a block of consecutive outputs,
// one vector per window tap u whose lane l holds output l's tap u: kw
// contiguous loads and a deinterleave instead of strided gathers. kw = 2 and
// 4 permute the lanes within each 128-bit half (unpermute8 puts them back).
#pragma once

#include "half.hpp"

OVPOOL_BEGIN
namespace simd {

OVPOOL_INLINE const void *at(const void *p, ptrdiff_t i, int half) {
    return half ? static_cast<const void *>(static_cast<const uint16_t *>(p) + i)
                : static_cast<const void *>(static_cast<const float *>(p) + i);
}

// One element, float32 or (half) float16.
OVPOOL_INLINE float load1(const void *p, ptrdiff_t i, int half) {
    if (half) {
#if defined(__F16C__)
        return _cvtsh_ss(static_cast<const uint16_t *>(p)[i]);
#else
        return half_to_float(static_cast<const uint16_t *>(p)[i]);
#endif
    }
    return static_cast<const float *>(p)[i];
}

#if defined(__SSE2__)
OVPOOL_INLINE __m128 load4(const void *p, ptrdiff_t i, int half) {
#if defined(__F16C__)
    if (half)
        return _mm_cvtph_ps(_mm_loadl_epi64(
            reinterpret_cast<const __m128i *>(static_cast<const uint16_t *>(p) + i)));
#endif
    (void)half;
    return _mm_loadu_ps(static_cast<const float *>(p) + i);
}

OVPOOL_INLINE void store4(void *p, __m128 v, int half) {
#if defined(__F16C__)
    if (half) {
        _mm_storel_epi64(static_cast<__m128i *>(p), _mm_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
        return;
    }
#endif
    (void)half;
    _mm_storeu_ps(static_cast<float *>(p), v);
}

// taps u < kw (1, 2, 4) of the 4 outputs whose windows start at p, p + kw, ...
OVPOOL_INLINE void taps4(const void *p, int kw, __m128 v[4], int half) {
    if (kw == 1) {
        v[0] = load4(p, 0, half);
    } else if (kw == 2) {
        __m128 a = load4(p, 0, half), b = load4(p, 4, half);
        v[0] = _mm_shuffle_ps(a, b, 0x88);
        v[1] = _mm_shuffle_ps(a, b, 0xdd);
    } else {
        v[0] = load4(p, 0, half);
        v[1] = load4(p, 4, half);
        v[2] = load4(p, 8, half);
        v[3] = load4(p, 12, half);
        _MM_TRANSPOSE4_PS(v[0], v[1], v[2], v[3]);
    }
}

// taps u < k of 4 float32 outputs at p, deinterleaved by stride: a tiling
// (stride == k in 1, 2, 4), 3 taps at stride 2 or 3 taps at stride 1.
OVPOOL_INLINE void taps4s(const float *p, int stride, int k, __m128 v[4]) {
    if (stride == k) {
        taps4(p, k, v, 0);
    } else if (stride == 2) {  // k == 3: even, odd, then the odd of p + 1
        __m128 w[4];           // (not the even of p + 2: a float too far)
        taps4(p, 2, v, 0);
        taps4(p + 1, 2, w, 0);
        v[2] = w[1];
    } else {  // stride 1
        for (int u = 0; u < k; u++)
            v[u] = _mm_loadu_ps(p + u);
    }
}

// dst[0..4) = index_base + the 4 in-plane offsets of at: flat indices written
// straight from the registers (through an int32 scratch and a widening loop,
// that round trip took 8% of a 3x3 s2 call with indices). Offsets are >= 0
// and < 2^31 (the callers' planes), so zero-extension is the widening.
OVPOOL_INLINE void store_indices4(int64_t *dst, __m128i at, int64_t index_base) {
    __m128i base = _mm_set1_epi64x(index_base), zero = _mm_setzero_si128();
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst),
                     _mm_add_epi64(_mm_unpacklo_epi32(at, zero), base));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 2),
                     _mm_add_epi64(_mm_unpackhi_epi32(at, zero), base));
}
#endif  // __SSE2__

#if defined(__AVX2__)
OVPOOL_INLINE __m256 load8(const void *p, ptrdiff_t i, int half) {
#if defined(__F16C__)
    if (half)
        return _mm256_cvtph_ps(_mm_loadu_si128(
            reinterpret_cast<const __m128i *>(static_cast<const uint16_t *>(p) + i)));
#endif
    (void)half;
    return _mm256_loadu_ps(static_cast<const float *>(p) + i);
}

OVPOOL_INLINE void store8(void *p, __m256 v, int half) {
#if defined(__F16C__)
    if (half) {
        _mm_storeu_si128(static_cast<__m128i *>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
        return;
    }
#endif
    (void)half;
    _mm256_storeu_ps(static_cast<float *>(p), v);
}

// 4 lanes of block p and 4 of block q in one 256-bit register (the low and
// high 128-bit lanes): element i of each, float32 or (half) float16.
OVPOOL_INLINE __m256 load4x2(const void *p, const void *q, ptrdiff_t i, int half) {
#if defined(__F16C__)
    if (half)
        return _mm256_cvtph_ps(_mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(
                                                      static_cast<const uint16_t *>(p) + i)),
                                                  _mm_loadl_epi64(reinterpret_cast<const __m128i *>(
                                                      static_cast<const uint16_t *>(q) + i))));
#endif
    (void)half;
    return _mm256_insertf128_ps(
        _mm256_castps128_ps256(_mm_loadu_ps(static_cast<const float *>(p) + i)),
        _mm_loadu_ps(static_cast<const float *>(q) + i), 1);
}

// The first n lanes (0 <= n <= 8) of a mask for _mm256_maskload_ps: a masked
// lane reads nothing (no fault past the end of an array) and loads +0.
alignas(32) inline constexpr int32_t kLaneMasks[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                       0,  0,  0,  0,  0,  0,  0,  0};

OVPOOL_INLINE __m256i first_lanes(ptrdiff_t n) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(kLaneMasks + 8 - n));
}

// idx where take is set, else at. A byte blend: gcc 12 compiles
// _mm256_blendv_ps on integers cast to floats with one more instruction,
// a vpcmpgtd re-deriving the mask's sign from the compare.
OVPOOL_INLINE __m256i take_index8(__m256i at, __m256i idx, __m256 take) {
    return _mm256_blendv_epi8(at, idx, _mm256_castps_si256(take));
}

// Outputs back in order from the lanes of a kw = 2 deinterleave (0 1 4 5 2 3
// 6 7) or a kw = 4 one (0 2 4 6 1 3 5 7), see taps8.
OVPOOL_INLINE __m256 unpermute8(__m256 acc, int kw) {
    if (kw == 2)
        return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(acc), 0xd8));
    if (kw == 4)
        return _mm256_permutevar8x32_ps(acc, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    return acc;
}

OVPOOL_INLINE __m256i unpermute8i(__m256i x, int kw) {
    return _mm256_castps_si256(unpermute8(_mm256_castsi256_ps(x), kw));
}

// Taps u < kw (1, 2, 4) of consecutive kw-wide windows from kw registers r
// holding them contiguously, each 128-bit lane on its own: the kw = 2
// deinterleave and the kw = 4 transpose never cross the lanes.
OVPOOL_INLINE void deinterleave8(const __m256 r[4], int kw, __m256 v[4]) {
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

// Lanes of kw = 2: outputs 0 1 4 5 2 3 6 7; of kw = 4: 0 2 4 6 1 3 5 7.
OVPOOL_INLINE void taps8(const void *p, int kw, __m256 v[4], int half) {
    __m256 r[4];
    for (int j = 0; j < kw; j++)
        r[j] = load8(p, 8 * j, half);
    deinterleave8(r, kw, v);
}

// taps4 of blocks p and q side by side: taps u < kw (1, 2, 4) of the 4
// outputs whose windows start at p, p + kw, ... and the 4 at q. kw = 1 puts
// p's in the low 128-bit lane and q's in the high one, in order. kw = 2 and
// 4 load p's 4 kw taps and then q's as whole 8-lane registers (one load and,
// in float16, one conversion per 8 taps instead of two half loads and a
// shuffle), so the lanes hold the outputs permuted as in taps8: unpermute8
// puts them back. The same taps, read from the same elements. Adaptive
// 8x512x28x28 -> 7 at 2 threads: float16 0.26 -> 0.20 ms, float32 0.197 ->
// 0.177 ms.
OVPOOL_INLINE void taps4x2(const void *p, const void *q, int kw, __m256 v[4], int half) {
    __m256 r[4];
    if (kw >= 2) {
        for (int j = 0; j < kw / 2; j++) {
            r[j] = load8(p, 8 * j, half);
            r[kw / 2 + j] = load8(q, 8 * j, half);
        }
    } else {
        for (int j = 0; j < kw; j++)
            r[j] = load4x2(p, q, 4 * j, half);
    }
    deinterleave8(r, kw, v);
}

// the deinterleave (kw of taps8) behind a (stride, k) pair
OVPOOL_INLINE int lane_kw(int stride, int k) {
    return stride == k ? k : stride == 2 ? 2 : 1;
}

// The window start of the output each lane holds, relative to output 0's
// (taps8's permutation for lane_kw(stride, k)).
OVPOOL_INLINE __m256i lane_starts8(int stride, int k) {
    int kw = lane_kw(stride, k);
    __m256i order = kw == 1   ? _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
                    : kw == 2 ? _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7)
                              : _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    return _mm256_mullo_epi32(order, _mm256_set1_epi32(stride));
}

// taps8 of float32 outputs deinterleaved by stride, as taps4s.
OVPOOL_INLINE void taps8s(const float *p, int stride, int k, __m256 v[4]) {
    if (stride == k) {
        taps8(p, k, v, 0);
    } else if (stride == 2) {
        __m256 w[4];
        taps8(p, 2, v, 0);
        taps8(p + 1, 2, w, 0);
        v[2] = w[1];
    } else {
        for (int u = 0; u < k; u++)
            v[u] = _mm256_loadu_ps(p + u);
    }
}

// taps8s (k = 3) of a block whose output 0 (lane 0 in both lane orders)
// starts one column left of its row, at p[0]: a 3-tap window with W padding
// 1. p[0] is not read (a masked load), and output 0's tap 0 repeats its tap
// 1, column 0. In row-major order (t, 0), (t, 0), (t, 1) has the first
// maximum and the last NaN of (t, 0), (t, 1): the strict ">" never takes a
// repeat just taken, a NaN's repeat takes the same position. So the padded
// output joins the vector block instead of the scalar edge loop (there, 20%
// of a 3x3 s2 p1 call with indices).
OVPOOL_INLINE void taps8s_left(const float *p, int stride, __m256 v[4]) {
    __m256i skip_first = _mm256_setr_epi32(0, -1, -1, -1, -1, -1, -1, -1);
    if (stride == 2) {
        __m256 r[4], w[4];
        r[0] = _mm256_maskload_ps(p, skip_first);
        r[1] = _mm256_loadu_ps(p + 8);
        deinterleave8(r, 2, v);
        taps8(p + 1, 2, w, 0);
        v[2] = w[1];
    } else {
        v[0] = _mm256_maskload_ps(p, skip_first);
        v[1] = _mm256_loadu_ps(p + 1);
        v[2] = _mm256_loadu_ps(p + 2);
    }
    v[0] = _mm256_blend_ps(v[0], v[1], 1);
}

// store_indices4 of the 4 offsets in each half of at: the low half to
// dst_lo, the high half to dst_hi
OVPOOL_INLINE void store_indices8(int64_t *dst_lo, int64_t *dst_hi, __m256i at,
                                  int64_t index_base) {
    __m256i base = _mm256_set1_epi64x(index_base);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst_lo),
                        _mm256_add_epi64(_mm256_cvtepu32_epi64(_mm256_castsi256_si128(at)), base));
    _mm256_storeu_si256(
        reinterpret_cast<__m256i *>(dst_hi),
        _mm256_add_epi64(_mm256_cvtepu32_epi64(_mm256_extracti128_si256(at, 1)), base));
}
#endif  // __AVX2__

#if defined(__AVX__)
// v[i] <- column i of the 8x8 matrix whose rows are v[0..8).
OVPOOL_INLINE void transpose8x8(__m256 v[8]) {
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
#endif  // __AVX__

}  // namespace simd
OVPOOL_END
