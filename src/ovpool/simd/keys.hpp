// Sixteen 16-bit order keys in the lanes of a vector: the blocked kernel's
// layout for float16 and bfloat16 max values and indices (Plan::lanes_keys).
//
// A 16-bit float's bits b, read as a signed integer, become the key
// b ^ ((b >> 15) & 0x7fff): the keys of non-NaN values are ordered as the
// values are, so a signed 16-bit maximum (pmaxsw) is the floats' maximum,
// on sixteen planes at once where widened floats take eight, and with no
// conversion either way. The same transform turns a key back into its bits.
// Two kinds of value have no key that keeps the float path's bits: a NaN
// (the float path gives the canonical NaN, and the last NaN's index) and
// -0 (its key is below +0's, while the float path keeps one of equal zeros
// by the order of the taps, or the first of them with indices).
// The transposes report them, and such a group is pooled as floats.
//
// A key element (Key2) is a pair of keys, so that a position of the layout,
// eight elements, holds sixteen planes in the 32 bytes a position of eight
// floats takes: the plan's offsets and the scratch layout, counted in
// elements of eight a position, serve both.
#pragma once

#include "pack.hpp"

OVPOOL_BEGIN
namespace simd {

struct Key2 {
    uint32_t bits;
};

template <>
struct Pack<Key2> {
#if defined(__AVX2__)
    __m256i v;
#elif defined(__SSE2__)
    __m128i lo, hi;  // planes 0-7, planes 8-15
#else
    int16_t a[16];
#endif
};

// Whether this build has the key lanes (the plan asks before choosing them).
#if defined(__SSE2__)
constexpr bool kKeyLanes = true;
#else
constexpr bool kKeyLanes = false;
#endif

// +inf's key (float16 or bfloat16); -inf's is -inf_key - 1, as every
// negative value's key is the one's complement of its magnitude's.
constexpr int16_t inf_key(Elem e) {
    return e == Elem::bf16 ? int16_t(0x7f80) : int16_t(0x7c00);
}

// The padding's key: below -inf's, which a NaN would take and no group
// pooled as keys holds, so a window of padding only (an empty window) is
// told apart from one of -inf values.
constexpr int16_t pad_key(Elem e) {
    return static_cast<int16_t>(-inf_key(e) - 2);
}

OVPOOL_INLINE int16_t key_of(uint16_t bits) {
    const int16_t s = static_cast<int16_t>(bits);
    return static_cast<int16_t>(s ^ ((s >> 15) & 0x7fff));
}

#if defined(__AVX2__)
OVPOOL_INLINE Pack<Key2> load(const Key2 *p) {
    return {_mm256_load_si256(reinterpret_cast<const __m256i *>(p))};
}
OVPOOL_INLINE void store(Key2 *p, Pack<Key2> x) {
    _mm256_store_si256(reinterpret_cast<__m256i *>(p), x.v);
}
OVPOOL_INLINE Pack<Key2> vmax(Pack<Key2> a, Pack<Key2> b) {
    return {_mm256_max_epi16(a.v, b.v)};
}
OVPOOL_INLINE Pack<Key2> set1_key(int16_t k) {
    return {_mm256_set1_epi16(k)};
}
OVPOOL_INLINE Pack<Key2> gt(Pack<Key2> a, Pack<Key2> b) {
    return {_mm256_cmpgt_epi16(a.v, b.v)};
}
OVPOOL_INLINE Pack<Key2> blend(Pack<Key2> mask, Pack<Key2> yes, Pack<Key2> no) {
    return {_mm256_blendv_epi8(no.v, yes.v, mask.v)};
}
// positions (in 16 bits) added: the row kernel of max with indices
OVPOOL_INLINE Pack<Key2> add(Pack<Key2> a, Pack<Key2> b) {
    return {_mm256_add_epi16(a.v, b.v)};
}
#elif defined(__SSE2__)
OVPOOL_INLINE Pack<Key2> load(const Key2 *p) {
    const __m128i *q = reinterpret_cast<const __m128i *>(p);
    return {_mm_load_si128(q), _mm_load_si128(q + 1)};
}
OVPOOL_INLINE void store(Key2 *p, Pack<Key2> x) {
    __m128i *q = reinterpret_cast<__m128i *>(p);
    _mm_store_si128(q, x.lo);
    _mm_store_si128(q + 1, x.hi);
}
OVPOOL_INLINE Pack<Key2> vmax(Pack<Key2> a, Pack<Key2> b) {
    return {_mm_max_epi16(a.lo, b.lo), _mm_max_epi16(a.hi, b.hi)};
}
OVPOOL_INLINE Pack<Key2> set1_key(int16_t k) {
    return {_mm_set1_epi16(k), _mm_set1_epi16(k)};
}
OVPOOL_INLINE Pack<Key2> gt(Pack<Key2> a, Pack<Key2> b) {
    return {_mm_cmpgt_epi16(a.lo, b.lo), _mm_cmpgt_epi16(a.hi, b.hi)};
}
OVPOOL_INLINE __m128i select16(__m128i mask, __m128i yes, __m128i no) {
    return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}
OVPOOL_INLINE Pack<Key2> blend(Pack<Key2> mask, Pack<Key2> yes, Pack<Key2> no) {
    return {select16(mask.lo, yes.lo, no.lo), select16(mask.hi, yes.hi, no.hi)};
}
OVPOOL_INLINE Pack<Key2> add(Pack<Key2> a, Pack<Key2> b) {
    return {_mm_add_epi16(a.lo, b.lo), _mm_add_epi16(a.hi, b.hi)};
}
#else
OVPOOL_INLINE Pack<Key2> load(const Key2 *p) {
    Pack<Key2> r;
    std::memcpy(r.a, p, sizeof(r.a));
    return r;
}
OVPOOL_INLINE void store(Key2 *p, Pack<Key2> x) {
    std::memcpy(p, x.a, sizeof(x.a));
}
OVPOOL_INLINE Pack<Key2> vmax(Pack<Key2> a, Pack<Key2> b) {
    Pack<Key2> r;
    for (int l = 0; l < 16; l++)
        r.a[l] = a.a[l] > b.a[l] ? a.a[l] : b.a[l];
    return r;
}
OVPOOL_INLINE Pack<Key2> set1_key(int16_t k) {
    Pack<Key2> r;
    for (int l = 0; l < 16; l++)
        r.a[l] = k;
    return r;
}
OVPOOL_INLINE Pack<Key2> gt(Pack<Key2> a, Pack<Key2> b) {
    Pack<Key2> r;
    for (int l = 0; l < 16; l++)
        r.a[l] = a.a[l] > b.a[l] ? int16_t(-1) : int16_t(0);
    return r;
}
OVPOOL_INLINE Pack<Key2> blend(Pack<Key2> mask, Pack<Key2> yes, Pack<Key2> no) {
    Pack<Key2> r;
    for (int l = 0; l < 16; l++)
        r.a[l] = mask.a[l] ? yes.a[l] : no.a[l];
    return r;
}
OVPOOL_INLINE Pack<Key2> add(Pack<Key2> a, Pack<Key2> b) {
    Pack<Key2> r;
    for (int l = 0; l < 16; l++)
        r.a[l] = static_cast<int16_t>(a.a[l] + b.a[l]);
    return r;
}
#endif

#if defined(__SSE2__)
// The 16-bit operations of the transposes, on 128-bit vectors and on each
// 128-bit half of 256-bit ones.
OVPOOL_INLINE __m128i unpacklo16(__m128i a, __m128i b) {
    return _mm_unpacklo_epi16(a, b);
}
OVPOOL_INLINE __m128i unpackhi16(__m128i a, __m128i b) {
    return _mm_unpackhi_epi16(a, b);
}
OVPOOL_INLINE __m128i unpacklo32(__m128i a, __m128i b) {
    return _mm_unpacklo_epi32(a, b);
}
OVPOOL_INLINE __m128i unpackhi32(__m128i a, __m128i b) {
    return _mm_unpackhi_epi32(a, b);
}
OVPOOL_INLINE __m128i unpacklo64(__m128i a, __m128i b) {
    return _mm_unpacklo_epi64(a, b);
}
OVPOOL_INLINE __m128i unpackhi64(__m128i a, __m128i b) {
    return _mm_unpackhi_epi64(a, b);
}
// key_of on every lane (its own inverse)
OVPOOL_INLINE __m128i keys_of(__m128i x) {
    return _mm_xor_si128(x, _mm_srli_epi16(_mm_srai_epi16(x, 15), 1));
}
// lanes holding a NaN or -0 (bits; inf: +inf's bits)
OVPOOL_INLINE __m128i unkeyable(__m128i x, __m128i inf, __m128i minus_zero) {
    return _mm_or_si128(_mm_cmpgt_epi16(_mm_and_si128(x, _mm_set1_epi16(0x7fff)), inf),
                        _mm_cmpeq_epi16(x, minus_zero));
}
#endif
#if defined(__AVX2__)
OVPOOL_INLINE __m256i unpacklo16(__m256i a, __m256i b) {
    return _mm256_unpacklo_epi16(a, b);
}
OVPOOL_INLINE __m256i unpackhi16(__m256i a, __m256i b) {
    return _mm256_unpackhi_epi16(a, b);
}
OVPOOL_INLINE __m256i unpacklo32(__m256i a, __m256i b) {
    return _mm256_unpacklo_epi32(a, b);
}
OVPOOL_INLINE __m256i unpackhi32(__m256i a, __m256i b) {
    return _mm256_unpackhi_epi32(a, b);
}
OVPOOL_INLINE __m256i unpacklo64(__m256i a, __m256i b) {
    return _mm256_unpacklo_epi64(a, b);
}
OVPOOL_INLINE __m256i unpackhi64(__m256i a, __m256i b) {
    return _mm256_unpackhi_epi64(a, b);
}
OVPOOL_INLINE __m256i keys_of(__m256i x) {
    return _mm256_xor_si256(x, _mm256_srli_epi16(_mm256_srai_epi16(x, 15), 1));
}
OVPOOL_INLINE __m256i unkeyable(__m256i x, __m256i inf, __m256i minus_zero) {
    return _mm256_or_si256(_mm256_cmpgt_epi16(_mm256_and_si256(x, _mm256_set1_epi16(0x7fff)), inf),
                           _mm256_cmpeq_epi16(x, minus_zero));
}
#endif

#if defined(__SSE2__)
// An 8x8 transpose of 16-bit elements (in each 128-bit half of V): r[i]'s
// element j to r[j]'s element i.
template <class V>
OVPOOL_INLINE void transpose8x16(V r[8]) {
    const V a0 = unpacklo16(r[0], r[1]), a1 = unpackhi16(r[0], r[1]);
    const V a2 = unpacklo16(r[2], r[3]), a3 = unpackhi16(r[2], r[3]);
    const V a4 = unpacklo16(r[4], r[5]), a5 = unpackhi16(r[4], r[5]);
    const V a6 = unpacklo16(r[6], r[7]), a7 = unpackhi16(r[6], r[7]);
    const V b0 = unpacklo32(a0, a2), b1 = unpackhi32(a0, a2);
    const V b2 = unpacklo32(a1, a3), b3 = unpackhi32(a1, a3);
    const V b4 = unpacklo32(a4, a6), b5 = unpackhi32(a4, a6);
    const V b6 = unpacklo32(a5, a7), b7 = unpackhi32(a5, a7);
    r[0] = unpacklo64(b0, b4), r[1] = unpackhi64(b0, b4);
    r[2] = unpacklo64(b1, b5), r[3] = unpackhi64(b1, b5);
    r[4] = unpacklo64(b2, b6), r[5] = unpackhi64(b2, b6);
    r[6] = unpacklo64(b3, b7), r[7] = unpackhi64(b3, b7);
}
#endif

// Element i of the 16-bit rows src[l] (every src[l] a valid row: a group of
// fewer planes repeats one) to lane l of position i of dst as its key, for
// i < n, the positions laid out as rows of row_w (see LaneCursor); ahead's
// input prefetched meanwhile (see planes_to_lanes). Returns true when a NaN
// or a -0 was met (the group then goes as floats).
template <Elem E>
inline bool planes_to_keys(const void *const src[16], ptrdiff_t n, Key2 *dst, ptrdiff_t row_w,
                           ptrdiff_t row_stride, const Ahead &ahead) {
    ptrdiff_t i = 0;
    bool bad = false;
    LaneCursor<Key2> at(dst, n, row_w, row_stride);
    SpreadPrefetch<false> pf(ahead, n / 8);
    const auto row = [&](int l) { return static_cast<const uint16_t *>(src[l]); };
#if defined(__SSE2__)
#if defined(__AVX2__)
    using V = __m256i;
    const V inf = _mm256_set1_epi16(inf_key(E)), minus_zero = _mm256_set1_epi16(-0x8000);
    V u = _mm256_setzero_si256();
    // positions at_i .. at_i + 7: r[j] = position j, planes 0-7 in the low
    // half, 8-15 in the high one
    auto block = [&](ptrdiff_t at_i, V r[8]) {
        pf.some();
        for (int l = 0; l < 8; l++)
            r[l] = _mm256_inserti128_si256(
                _mm256_castsi128_si256(
                    _mm_loadu_si128(reinterpret_cast<const __m128i *>(row(l) + at_i))),
                _mm_loadu_si128(reinterpret_cast<const __m128i *>(row(l + 8) + at_i)), 1);
        for (int l = 0; l < 8; l++) {
            u = _mm256_or_si256(u, unkeyable(r[l], inf, minus_zero));
            r[l] = keys_of(r[l]);
        }
        transpose8x16(r);
    };
    auto put = [](Key2 *d, V x) { _mm256_store_si256(reinterpret_cast<__m256i *>(d), x); };
#else
    // two 128-bit halves, planes 0-7 and 8-15, each transposed on its own
    struct V {
        __m128i lo, hi;
    };
    const __m128i inf = _mm_set1_epi16(inf_key(E)), minus_zero = _mm_set1_epi16(-0x8000);
    __m128i u = _mm_setzero_si128();
    auto block = [&](ptrdiff_t at_i, V r[8]) {
        pf.some();
        __m128i lo[8], hi[8];
        for (int l = 0; l < 8; l++) {
            lo[l] = _mm_loadu_si128(reinterpret_cast<const __m128i *>(row(l) + at_i));
            hi[l] = _mm_loadu_si128(reinterpret_cast<const __m128i *>(row(l + 8) + at_i));
            u = _mm_or_si128(u, _mm_or_si128(unkeyable(lo[l], inf, minus_zero),
                                             unkeyable(hi[l], inf, minus_zero)));
            lo[l] = keys_of(lo[l]);
            hi[l] = keys_of(hi[l]);
        }
        transpose8x16(lo);
        transpose8x16(hi);
        for (int j = 0; j < 8; j++)
            r[j] = {lo[j], hi[j]};
    };
    auto put = [](Key2 *d, V x) {
        _mm_store_si128(reinterpret_cast<__m128i *>(d), x.lo);
        _mm_store_si128(reinterpret_cast<__m128i *>(d) + 1, x.hi);
    };
#endif
    i = put_blocks<V>(n, dst, at, row_w, row_stride, block, put);
#if defined(__AVX2__)
    bad = !_mm256_testz_si256(u, u);
#else
    bad = _mm_movemask_epi8(u) != 0;
#endif
#endif
    pf.rest();
    for (; i < n; i++, at.next()) {
        int16_t *d = reinterpret_cast<int16_t *>(at.d);
        for (int l = 0; l < 16; l++) {
            const uint16_t b = row(l)[i];
            bad |= (b & 0x7fff) > static_cast<uint16_t>(inf_key(E)) || b == 0x8000;
            d[l] = key_of(b);
        }
    }
    return bad;
}

// dst[l][i] = the bits of key src[i * 8 + l] (lane l of position i) for
// i < n, l < count; with empty set, a key of the padding (an empty window)
// gives empty_bits.
inline void keys_to_planes(const Key2 *src, ptrdiff_t n, void *const dst[16], int count, bool empty,
                           uint16_t empty_bits, int16_t pad) {
    ptrdiff_t i = 0;
    const auto row = [&](int l) { return static_cast<uint16_t *>(dst[l]); };
#if defined(__AVX2__)
    const __m256i pad_v = _mm256_set1_epi16(pad), empty_v = _mm256_set1_epi16(empty_bits);
    for (; i + 8 <= n; i += 8) {
        __m256i r[8];
        for (int j = 0; j < 8; j++) {
            const __m256i k =
                _mm256_load_si256(reinterpret_cast<const __m256i *>(src + (i + j) * 8));
            r[j] = keys_of(k);
            if (empty)
                r[j] = _mm256_blendv_epi8(r[j], empty_v, _mm256_cmpeq_epi16(k, pad_v));
        }
        transpose8x16(r);
        // r[l]: plane l's positions i .. i + 7, then plane l + 8's
        for (int l = 0; l < 8; l++) {
            if (l < count)
                _mm_storeu_si128(reinterpret_cast<__m128i *>(row(l) + i),
                                 _mm256_castsi256_si128(r[l]));
            if (l + 8 < count)
                _mm_storeu_si128(reinterpret_cast<__m128i *>(row(l + 8) + i),
                                 _mm256_extracti128_si256(r[l], 1));
        }
    }
#elif defined(__SSE2__)
    const __m128i pad_v = _mm_set1_epi16(pad), empty_v = _mm_set1_epi16(empty_bits);
    for (; i + 8 <= n; i += 8) {
        for (int h = 0; h < 2 && 8 * h < count; h++) {
            __m128i r[8];
            for (int j = 0; j < 8; j++) {
                const __m128i k =
                    _mm_load_si128(reinterpret_cast<const __m128i *>(src + (i + j) * 8) + h);
                r[j] = keys_of(k);
                if (empty) {
                    const __m128i m = _mm_cmpeq_epi16(k, pad_v);
                    r[j] = _mm_or_si128(_mm_and_si128(m, empty_v), _mm_andnot_si128(m, r[j]));
                }
            }
            transpose8x16(r);
            for (int l = 0; l < 8 && 8 * h + l < count; l++)
                _mm_storeu_si128(reinterpret_cast<__m128i *>(row(8 * h + l) + i), r[l]);
        }
    }
#endif
    for (; i < n; i++) {
        const int16_t *k = reinterpret_cast<const int16_t *>(src + i * 8);
        for (int l = 0; l < count; l++)
            row(l)[i] = empty && k[l] == pad ? empty_bits : static_cast<uint16_t>(key_of(k[l]));
    }
}

// Indices of a pair of groups pooled as keys: dst[l][i] = base[l] + at[i] +
// pos[i * 8 + l] (lane l of position i: the offset of the maximum from
// its window's first element, at[i] that element's index), for i < n,
// l < count; with empty set, where val holds the padding's key (an empty
// window) base[l] alone. modulo > 0 reduces each index (OpenVINO's axis).
template <class I>
inline void keys_to_indices(const Key2 *pos, const Key2 *val, const int32_t *at, ptrdiff_t n,
                            I *const dst[16], int count, const int64_t base[16], bool empty,
                            int16_t pad, int64_t modulo) {
    static_assert(std::is_same<I, int64_t>::value || std::is_same<I, int32_t>::value,
                  "indices are int64 or int32");
    ptrdiff_t i = 0;
#if defined(__AVX2__)
    const __m256i pad_v = _mm256_set1_epi16(pad);
    for (; modulo == 0 && i + 8 <= n; i += 8) {
        __m256i r[8], m[8] = {};
        for (int j = 0; j < 8; j++) {
            r[j] = _mm256_load_si256(reinterpret_cast<const __m256i *>(pos + (i + j) * 8));
            if (empty)
                m[j] = _mm256_cmpeq_epi16(
                    _mm256_load_si256(reinterpret_cast<const __m256i *>(val + (i + j) * 8)), pad_v);
        }
        transpose8x16(r);
        if (empty)
            transpose8x16(m);
        const __m256i at8 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(at + i));
        // r[l]: plane l's offsets i .. i + 7, then plane l + 8's
        for (int q = 0; q < count; q++) {
            const int l = q & 7;
            const __m128i half =
                q < 8 ? _mm256_castsi256_si128(r[l]) : _mm256_extracti128_si256(r[l], 1);
            __m256i v = _mm256_add_epi32(_mm256_cvtepi16_epi32(half), at8);
            if (empty) {
                const __m128i mh =
                    q < 8 ? _mm256_castsi256_si128(m[l]) : _mm256_extracti128_si256(m[l], 1);
                v = _mm256_andnot_si256(_mm256_cvtepi16_epi32(mh), v);
            }
            if constexpr (std::is_same<I, int64_t>::value)
                store_indices8(dst[q] + i, dst[q] + i + 4, v, base[q]);
            else
                _mm256_storeu_si256(
                    reinterpret_cast<__m256i *>(dst[q] + i),
                    _mm256_add_epi32(v, _mm256_set1_epi32(static_cast<int32_t>(base[q]))));
        }
    }
#elif defined(__SSE2__)
    const __m128i pad_v = _mm_set1_epi16(pad);
    for (; modulo == 0 && i + 8 <= n; i += 8) {
        const __m128i at_lo = _mm_loadu_si128(reinterpret_cast<const __m128i *>(at + i));
        const __m128i at_hi = _mm_loadu_si128(reinterpret_cast<const __m128i *>(at + i + 4));
        for (int h = 0; h < 2 && 8 * h < count; h++) {
            __m128i r[8], m[8] = {};
            for (int j = 0; j < 8; j++) {
                r[j] = _mm_load_si128(reinterpret_cast<const __m128i *>(pos + (i + j) * 8) + h);
                if (empty)
                    m[j] = _mm_cmpeq_epi16(
                        _mm_load_si128(reinterpret_cast<const __m128i *>(val + (i + j) * 8) + h),
                        pad_v);
            }
            transpose8x16(r);
            if (empty)
                transpose8x16(m);
            for (int l = 0; l < 8 && 8 * h + l < count; l++) {
                const int q = 8 * h + l;
                // sign-extended to 32 bits: each 16-bit value into the high
                // half, shifted down
                __m128i lo = _mm_srai_epi32(_mm_unpacklo_epi16(r[l], r[l]), 16);
                __m128i hi = _mm_srai_epi32(_mm_unpackhi_epi16(r[l], r[l]), 16);
                lo = _mm_add_epi32(lo, at_lo);
                hi = _mm_add_epi32(hi, at_hi);
                if (empty) {
                    lo = _mm_andnot_si128(_mm_unpacklo_epi16(m[l], m[l]), lo);
                    hi = _mm_andnot_si128(_mm_unpackhi_epi16(m[l], m[l]), hi);
                }
                if constexpr (std::is_same<I, int64_t>::value) {
                    store_indices4(dst[q] + i, lo, base[q]);
                    store_indices4(dst[q] + i + 4, hi, base[q]);
                } else {
                    const __m128i b = _mm_set1_epi32(static_cast<int32_t>(base[q]));
                    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst[q] + i), _mm_add_epi32(lo, b));
                    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst[q] + i + 4),
                                     _mm_add_epi32(hi, b));
                }
            }
        }
    }
#endif
    for (; i < n; i++) {
        const int16_t *p = reinterpret_cast<const int16_t *>(pos + i * 8);
        const int16_t *v = reinterpret_cast<const int16_t *>(val + i * 8);
        for (int q = 0; q < count; q++) {
            int64_t index = base[q] + (empty && v[q] == pad ? 0 : at[i] + p[q]);
            if (modulo > 0)
                index %= modulo;
            dst[q][i] = static_cast<I>(index);
        }
    }
}

}  // namespace simd
OVPOOL_END
