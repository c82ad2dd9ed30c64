// Eight lanes, one per plane of a plane group, and the transposes between
// planes and lanes (the channel-blocked kernel, kernels/blocked.hpp).
//
// A Pack<T> holds eight values of T (float or double): one 256-bit register
// of floats in the x86-64-v3 build, two 128-bit ones in the baseline build
// (four and two registers of doubles). Every operation is lane by lane and
// IEEE-exact (max as maxps: the second operand wins unless the first is
// greater; add, divide, square root correctly rounded), so both builds give
// the same bits.
//
// The transposes move a group of up to eight planes' spans (contiguous
// elements of each plane) into the lanes of scratch, [position][lane], and
// back; the element types are widened to float on the way in (float16 by
// F16C where the build has it, else exactly by the scalar conversion;
// bfloat16 by a shift; 8-bit integers exactly) and rounded back on the way
// out, so the blocked kernel computes only in float or double.
#pragma once

#include <cmath>
#include <type_traits>

#include "vec.hpp"

OVPOOL_BEGIN
namespace simd {

constexpr int kLanes = 8;

template <class T>
struct Pack;

template <>
struct Pack<float> {
#if defined(__AVX__)
    __m256 v;
#elif defined(__SSE2__)
    __m128 lo, hi;
#else
    float a[8];
#endif
};

template <>
struct Pack<double> {
#if defined(__AVX__)
    __m256d lo, hi;
#elif defined(__SSE2__)
    __m128d a, b, c, d;
#else
    double a[8];
#endif
};

using F8 = Pack<float>;
using D8 = Pack<double>;

// Lane-wise operations, each spelled once per build. p: 32-byte aligned.
#if defined(__AVX__)
OVPOOL_INLINE F8 load(const float *p) {
    return {_mm256_load_ps(p)};
}
OVPOOL_INLINE void store(float *p, F8 x) {
    _mm256_store_ps(p, x.v);
}
OVPOOL_INLINE F8 set1(float x) {
    return {_mm256_set1_ps(x)};
}
OVPOOL_INLINE F8 vmax(F8 a, F8 b) {
    return {_mm256_max_ps(a.v, b.v)};
}
OVPOOL_INLINE F8 add(F8 a, F8 b) {
    return {_mm256_add_ps(a.v, b.v)};
}
OVPOOL_INLINE F8 mul(F8 a, F8 b) {
    return {_mm256_mul_ps(a.v, b.v)};
}
OVPOOL_INLINE F8 div(F8 a, F8 b) {
    return {_mm256_div_ps(a.v, b.v)};
}
OVPOOL_INLINE F8 sqrt(F8 a) {
    return {_mm256_sqrt_ps(a.v)};
}
OVPOOL_INLINE F8 gt(F8 a, F8 b) {
    return {_mm256_cmp_ps(a.v, b.v, _CMP_GT_OQ)};
}
OVPOOL_INLINE F8 unord(F8 a) {
    return {_mm256_cmp_ps(a.v, a.v, _CMP_UNORD_Q)};
}
OVPOOL_INLINE F8 eq(F8 a, F8 b) {
    return {_mm256_cmp_ps(a.v, b.v, _CMP_EQ_OQ)};
}
OVPOOL_INLINE F8 or_(F8 a, F8 b) {
    return {_mm256_or_ps(a.v, b.v)};
}
OVPOOL_INLINE F8 blend(F8 mask, F8 yes, F8 no) {
    return {_mm256_blendv_ps(no.v, yes.v, mask.v)};
}
OVPOOL_INLINE bool any(F8 mask) {
    return _mm256_movemask_ps(mask.v) != 0;
}
OVPOOL_INLINE F8 abs(F8 a) {
    return {_mm256_andnot_ps(_mm256_set1_ps(-0.0f), a.v)};
}

OVPOOL_INLINE D8 load(const double *p) {
    return {_mm256_load_pd(p), _mm256_load_pd(p + 4)};
}
OVPOOL_INLINE void store(double *p, D8 x) {
    _mm256_store_pd(p, x.lo);
    _mm256_store_pd(p + 4, x.hi);
}
OVPOOL_INLINE D8 set1(double x) {
    return {_mm256_set1_pd(x), _mm256_set1_pd(x)};
}
OVPOOL_INLINE D8 vmax(D8 a, D8 b) {
    return {_mm256_max_pd(a.lo, b.lo), _mm256_max_pd(a.hi, b.hi)};
}
OVPOOL_INLINE D8 add(D8 a, D8 b) {
    return {_mm256_add_pd(a.lo, b.lo), _mm256_add_pd(a.hi, b.hi)};
}
OVPOOL_INLINE D8 mul(D8 a, D8 b) {
    return {_mm256_mul_pd(a.lo, b.lo), _mm256_mul_pd(a.hi, b.hi)};
}
OVPOOL_INLINE D8 div(D8 a, D8 b) {
    return {_mm256_div_pd(a.lo, b.lo), _mm256_div_pd(a.hi, b.hi)};
}
OVPOOL_INLINE D8 sqrt(D8 a) {
    return {_mm256_sqrt_pd(a.lo), _mm256_sqrt_pd(a.hi)};
}
OVPOOL_INLINE D8 gt(D8 a, D8 b) {
    return {_mm256_cmp_pd(a.lo, b.lo, _CMP_GT_OQ), _mm256_cmp_pd(a.hi, b.hi, _CMP_GT_OQ)};
}
OVPOOL_INLINE D8 unord(D8 a) {
    return {_mm256_cmp_pd(a.lo, a.lo, _CMP_UNORD_Q), _mm256_cmp_pd(a.hi, a.hi, _CMP_UNORD_Q)};
}
OVPOOL_INLINE D8 eq(D8 a, D8 b) {
    return {_mm256_cmp_pd(a.lo, b.lo, _CMP_EQ_OQ), _mm256_cmp_pd(a.hi, b.hi, _CMP_EQ_OQ)};
}
OVPOOL_INLINE D8 or_(D8 a, D8 b) {
    return {_mm256_or_pd(a.lo, b.lo), _mm256_or_pd(a.hi, b.hi)};
}
OVPOOL_INLINE D8 blend(D8 mask, D8 yes, D8 no) {
    return {_mm256_blendv_pd(no.lo, yes.lo, mask.lo), _mm256_blendv_pd(no.hi, yes.hi, mask.hi)};
}
OVPOOL_INLINE bool any(D8 mask) {
    return (_mm256_movemask_pd(mask.lo) | _mm256_movemask_pd(mask.hi)) != 0;
}
OVPOOL_INLINE D8 abs(D8 a) {
    const __m256d sign = _mm256_set1_pd(-0.0);
    return {_mm256_andnot_pd(sign, a.lo), _mm256_andnot_pd(sign, a.hi)};
}
#elif defined(__SSE2__)
OVPOOL_INLINE __m128 select4(__m128 mask, __m128 yes, __m128 no) {
    return _mm_or_ps(_mm_and_ps(mask, yes), _mm_andnot_ps(mask, no));
}
OVPOOL_INLINE __m128d select2(__m128d mask, __m128d yes, __m128d no) {
    return _mm_or_pd(_mm_and_pd(mask, yes), _mm_andnot_pd(mask, no));
}

OVPOOL_INLINE F8 load(const float *p) {
    return {_mm_load_ps(p), _mm_load_ps(p + 4)};
}
OVPOOL_INLINE void store(float *p, F8 x) {
    _mm_store_ps(p, x.lo);
    _mm_store_ps(p + 4, x.hi);
}
OVPOOL_INLINE F8 set1(float x) {
    return {_mm_set1_ps(x), _mm_set1_ps(x)};
}
OVPOOL_INLINE F8 vmax(F8 a, F8 b) {
    return {_mm_max_ps(a.lo, b.lo), _mm_max_ps(a.hi, b.hi)};
}
OVPOOL_INLINE F8 add(F8 a, F8 b) {
    return {_mm_add_ps(a.lo, b.lo), _mm_add_ps(a.hi, b.hi)};
}
OVPOOL_INLINE F8 mul(F8 a, F8 b) {
    return {_mm_mul_ps(a.lo, b.lo), _mm_mul_ps(a.hi, b.hi)};
}
OVPOOL_INLINE F8 div(F8 a, F8 b) {
    return {_mm_div_ps(a.lo, b.lo), _mm_div_ps(a.hi, b.hi)};
}
OVPOOL_INLINE F8 sqrt(F8 a) {
    return {_mm_sqrt_ps(a.lo), _mm_sqrt_ps(a.hi)};
}
OVPOOL_INLINE F8 gt(F8 a, F8 b) {
    return {_mm_cmpgt_ps(a.lo, b.lo), _mm_cmpgt_ps(a.hi, b.hi)};
}
OVPOOL_INLINE F8 unord(F8 a) {
    return {_mm_cmpunord_ps(a.lo, a.lo), _mm_cmpunord_ps(a.hi, a.hi)};
}
OVPOOL_INLINE F8 eq(F8 a, F8 b) {
    return {_mm_cmpeq_ps(a.lo, b.lo), _mm_cmpeq_ps(a.hi, b.hi)};
}
OVPOOL_INLINE F8 or_(F8 a, F8 b) {
    return {_mm_or_ps(a.lo, b.lo), _mm_or_ps(a.hi, b.hi)};
}
OVPOOL_INLINE F8 blend(F8 mask, F8 yes, F8 no) {
    return {select4(mask.lo, yes.lo, no.lo), select4(mask.hi, yes.hi, no.hi)};
}
OVPOOL_INLINE bool any(F8 mask) {
    return _mm_movemask_ps(_mm_or_ps(mask.lo, mask.hi)) != 0;
}
OVPOOL_INLINE F8 abs(F8 a) {
    const __m128 sign = _mm_set1_ps(-0.0f);
    return {_mm_andnot_ps(sign, a.lo), _mm_andnot_ps(sign, a.hi)};
}

OVPOOL_INLINE D8 load(const double *p) {
    return {_mm_load_pd(p), _mm_load_pd(p + 2), _mm_load_pd(p + 4), _mm_load_pd(p + 6)};
}
OVPOOL_INLINE void store(double *p, D8 x) {
    _mm_store_pd(p, x.a);
    _mm_store_pd(p + 2, x.b);
    _mm_store_pd(p + 4, x.c);
    _mm_store_pd(p + 6, x.d);
}
OVPOOL_INLINE D8 set1(double x) {
    const __m128d v = _mm_set1_pd(x);
    return {v, v, v, v};
}
#define OVPOOL_D8_OP(name, op)                                           \
    OVPOOL_INLINE D8 name(D8 x, D8 y) {                                  \
        return {op(x.a, y.a), op(x.b, y.b), op(x.c, y.c), op(x.d, y.d)}; \
    }
OVPOOL_D8_OP(vmax, _mm_max_pd)
OVPOOL_D8_OP(add, _mm_add_pd)
OVPOOL_D8_OP(mul, _mm_mul_pd)
OVPOOL_D8_OP(div, _mm_div_pd)
OVPOOL_D8_OP(gt, _mm_cmpgt_pd)
OVPOOL_D8_OP(eq, _mm_cmpeq_pd)
OVPOOL_D8_OP(or_, _mm_or_pd)
#undef OVPOOL_D8_OP
OVPOOL_INLINE D8 sqrt(D8 x) {
    return {_mm_sqrt_pd(x.a), _mm_sqrt_pd(x.b), _mm_sqrt_pd(x.c), _mm_sqrt_pd(x.d)};
}
OVPOOL_INLINE D8 unord(D8 x) {
    return {_mm_cmpunord_pd(x.a, x.a), _mm_cmpunord_pd(x.b, x.b), _mm_cmpunord_pd(x.c, x.c),
            _mm_cmpunord_pd(x.d, x.d)};
}
OVPOOL_INLINE D8 blend(D8 m, D8 yes, D8 no) {
    return {select2(m.a, yes.a, no.a), select2(m.b, yes.b, no.b), select2(m.c, yes.c, no.c),
            select2(m.d, yes.d, no.d)};
}
OVPOOL_INLINE bool any(D8 m) {
    return _mm_movemask_pd(_mm_or_pd(_mm_or_pd(m.a, m.b), _mm_or_pd(m.c, m.d))) != 0;
}
OVPOOL_INLINE D8 abs(D8 x) {
    const __m128d sign = _mm_set1_pd(-0.0);
    return {_mm_andnot_pd(sign, x.a), _mm_andnot_pd(sign, x.b), _mm_andnot_pd(sign, x.c),
            _mm_andnot_pd(sign, x.d)};
}
#else
// Scalar lanes: masks are all-ones or zero bit patterns held in the values.
template <class T>
OVPOOL_INLINE T mask_of(bool b) {
    T m;
    std::memset(&m, b ? 0xff : 0, sizeof(T));
    return m;
}
template <class T>
OVPOOL_INLINE bool is_set(T m) {
    unsigned char c;
    std::memcpy(&c, &m, 1);
    return c != 0;
}
#define OVPOOL_LANES(P, T)                                         \
    OVPOOL_INLINE P load(const T *p) {                             \
        P r;                                                       \
        for (int l = 0; l < 8; l++)                                \
            r.a[l] = p[l];                                         \
        return r;                                                  \
    }                                                              \
    OVPOOL_INLINE void store(T *p, P x) {                          \
        for (int l = 0; l < 8; l++)                                \
            p[l] = x.a[l];                                         \
    }                                                              \
    OVPOOL_INLINE P set1(T x) {                                    \
        P r;                                                       \
        for (int l = 0; l < 8; l++)                                \
            r.a[l] = x;                                            \
        return r;                                                  \
    }                                                              \
    OVPOOL_INLINE P vmax(P x, P y) {                               \
        P r;                                                       \
        for (int l = 0; l < 8; l++)                                \
            r.a[l] = x.a[l] > y.a[l] ? x.a[l] : y.a[l];            \
        return r;                                                  \
    }                                                              \
    OVPOOL_INLINE P add(P x, P y) {                                \
        P r;                                                       \
        for (int l = 0; l < 8; l++)                                \
            r.a[l] = x.a[l] + y.a[l];                              \
        return r;                                                  \
    }                                                              \
    OVPOOL_INLINE P mul(P x, P y) {                                \
        P r;                                                       \
        for (int l = 0; l < 8; l++)                                \
            r.a[l] = x.a[l] * y.a[l];                              \
        return r;                                                  \
    }                                                              \
    OVPOOL_INLINE P div(P x, P y) {                                \
        P r;                                                       \
        for (int l = 0; l < 8; l++)                                \
            r.a[l] = x.a[l] / y.a[l];                              \
        return r;                                                  \
    }                                                              \
    OVPOOL_INLINE P sqrt(P x) {                                    \
        P r;                                                       \
        for (int l = 0; l < 8; l++)                                \
            r.a[l] = std::sqrt(x.a[l]);                            \
        return r;                                                  \
    }                                                              \
    OVPOOL_INLINE P gt(P x, P y) {                                 \
        P r;                                                       \
        for (int l = 0; l < 8; l++)                                \
            r.a[l] = mask_of<T>(x.a[l] > y.a[l]);                  \
        return r;                                                  \
    }                                                              \
    OVPOOL_INLINE P eq(P x, P y) {                                 \
        P r;                                                       \
        for (int l = 0; l < 8; l++)                                \
            r.a[l] = mask_of<T>(x.a[l] == y.a[l]);                 \
        return r;                                                  \
    }                                                              \
    OVPOOL_INLINE P unord(P x) {                                   \
        P r;                                                       \
        for (int l = 0; l < 8; l++)                                \
            r.a[l] = mask_of<T>(x.a[l] != x.a[l]);                 \
        return r;                                                  \
    }                                                              \
    OVPOOL_INLINE P or_(P x, P y) {                                \
        P r;                                                       \
        for (int l = 0; l < 8; l++)                                \
            r.a[l] = mask_of<T>(is_set(x.a[l]) || is_set(y.a[l])); \
        return r;                                                  \
    }                                                              \
    OVPOOL_INLINE P blend(P m, P yes, P no) {                      \
        P r;                                                       \
        for (int l = 0; l < 8; l++)                                \
            r.a[l] = is_set(m.a[l]) ? yes.a[l] : no.a[l];          \
        return r;                                                  \
    }                                                              \
    OVPOOL_INLINE bool any(P m) {                                  \
        bool r = false;                                            \
        for (int l = 0; l < 8; l++)                                \
            r = r || is_set(m.a[l]);                               \
        return r;                                                  \
    }                                                              \
    OVPOOL_INLINE P abs(P x) {                                     \
        P r;                                                       \
        for (int l = 0; l < 8; l++)                                \
            r.a[l] = std::fabs(x.a[l]);                            \
        return r;                                                  \
    }
OVPOOL_LANES(F8, float)
OVPOOL_LANES(D8, double)
#undef OVPOOL_LANES
#endif

// ---------------------------------------------------------------------------
// Planes to lanes
// ---------------------------------------------------------------------------

// Element types as the transposes read and write them.
enum class Elem : int { f32, f64, f16, bf16, i8, u8 };

template <class C>
OVPOOL_INLINE C widen1(const void *p, ptrdiff_t i, Elem e) {
    switch (e) {
        case Elem::f32:
            return static_cast<C>(static_cast<const float *>(p)[i]);
        case Elem::f64:
            return static_cast<C>(static_cast<const double *>(p)[i]);
        case Elem::f16:
            return static_cast<C>(half_to_float(static_cast<const uint16_t *>(p)[i]));
        case Elem::bf16:
            return static_cast<C>(bf16_to_float(static_cast<const uint16_t *>(p)[i]));
        case Elem::i8:
            return static_cast<C>(static_cast<const int8_t *>(p)[i]);
        case Elem::u8:
            return static_cast<C>(static_cast<const uint8_t *>(p)[i]);
    }
    return C(0);
}

template <class C>
OVPOOL_INLINE void narrow1(C v, void *p, ptrdiff_t i, Elem e) {
    switch (e) {
        case Elem::f32:
            static_cast<float *>(p)[i] = static_cast<float>(v);
            break;
        case Elem::f64:
            static_cast<double *>(p)[i] = static_cast<double>(v);
            break;
        case Elem::f16:
            static_cast<uint16_t *>(p)[i] = float_to_half(static_cast<float>(v));
            break;
        case Elem::bf16:
            static_cast<uint16_t *>(p)[i] = float_to_bf16(static_cast<float>(v));
            break;
        case Elem::i8:
            static_cast<int8_t *>(p)[i] = static_cast<int8_t>(v);
            break;
        case Elem::u8:
            static_cast<uint8_t *>(p)[i] = static_cast<uint8_t>(v);
            break;
    }
}

inline size_t elem_size(Elem e) {
    switch (e) {
        case Elem::f64:
            return 8;
        case Elem::f32:
            return 4;
        case Elem::f16:
        case Elem::bf16:
            return 2;
        default:
            return 1;
    }
}

#if defined(__SSE2__)
// Four floats from element i of a row of e (float32, bfloat16; float16
// where F16C converts it).
template <Elem E>
OVPOOL_INLINE __m128 load4_of(const void *p, ptrdiff_t i) {
    if constexpr (E == Elem::bf16) {
        const __m128i h = _mm_loadl_epi64(
            reinterpret_cast<const __m128i *>(static_cast<const uint16_t *>(p) + i));
        return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), h));
    }
#if defined(__F16C__)
    if constexpr (E == Elem::f16)
        return _mm_cvtph_ps(_mm_loadl_epi64(
            reinterpret_cast<const __m128i *>(static_cast<const uint16_t *>(p) + i)));
#endif
    return _mm_loadu_ps(static_cast<const float *>(p) + i);
}
#endif

#if defined(__AVX__)
template <Elem E>
OVPOOL_INLINE __m256 load8_of(const void *p, ptrdiff_t i) {
    if constexpr (E == Elem::bf16) {
        const __m128i h = _mm_loadu_si128(
            reinterpret_cast<const __m128i *>(static_cast<const uint16_t *>(p) + i));
        const __m128i z = _mm_setzero_si128();
        return _mm256_castsi256_ps(
            _mm256_set_m128i(_mm_unpackhi_epi16(z, h), _mm_unpacklo_epi16(z, h)));
    }
#if defined(__F16C__)
    if constexpr (E == Elem::f16)
        return _mm256_cvtph_ps(_mm_loadu_si128(
            reinterpret_cast<const __m128i *>(static_cast<const uint16_t *>(p) + i)));
#endif
    return _mm256_loadu_ps(static_cast<const float *>(p) + i);
}

#endif

// Whether lanes of E are widened in vector registers in this build.
template <Elem E>
constexpr bool vector_elem() {
#if defined(__F16C__)
    if constexpr (E == Elem::f16)
        return true;
#endif
#if defined(__SSE2__)
    return E == Elem::f32 || E == Elem::bf16;
#else
    return false;
#endif
}

// Where element i of a span of rows goes in lanes: rows of row_w elements
// laid out row_stride positions apart (the padding between them is not
// written), eight floats a position.
template <class C>
struct LaneCursor {
    C *d;
    ptrdiff_t col = 0, row_w, skip;
    // rows laid out back to back are one row
    LaneCursor(C *dst, ptrdiff_t n, ptrdiff_t w, ptrdiff_t stride)
        : d(dst), row_w(stride == w ? n : w), skip((stride - w) * 8) {}
    OVPOOL_INLINE void next() {
        d += 8;
        if (++col == row_w) {
            col = 0;
            d += skip;
        }
    }
};

// The blocks of eight positions of a span of n elements into lanes laid out
// as rows of row_w (see LaneCursor at): block(i, r) makes positions i .. i +
// 7 (r[j] position i + j), put(d, r[j]) stores one there. Rows back to back,
// or at least eight wide, end with one more block ending at n, over
// positions already written (the same values again). Returns the first
// position left to the caller, the cursor at it.
template <class V, class C, class Block, class Put>
OVPOOL_INLINE ptrdiff_t put_blocks(ptrdiff_t n, C *dst, LaneCursor<C> &at, ptrdiff_t row_w,
                                   ptrdiff_t row_stride, const Block &block, const Put &put) {
    ptrdiff_t i = 0;
    if (row_stride == row_w) {
        for (; i + 8 <= n; i += 8) {
            V r[8];
            block(i, r);
            for (int j = 0; j < 8; j++)
                put(dst + (i + j) * 8, r[j]);
        }
        if (i < n && n >= 8) {
            V r[8];
            block(n - 8, r);
            for (int j = 0; j < 8; j++)
                put(dst + (n - 8 + j) * 8, r[j]);
            i = n;
        }
        at.d = dst + i * 8;
        return i;
    }
    if (row_w >= 8) {
        // a block ends in its row or the next (left: its positions in its
        // own row), tested once a block, and the last partial block is one
        // more vector block rather than scalars: 13 blocked configurations
        // on 7x7 to 35x35 planes 0.94-0.98x in geometric mean (three paired
        // runs at 1 thread; float16 max 3x3 s3 p1 on 35x35 0.88-0.98x)
        const ptrdiff_t skip = (row_stride - row_w) * 8;
        C *d = dst;
        ptrdiff_t row_end = row_w;
        for (; i + 8 <= n; i += 8) {
            V r[8];
            block(i, r);
            const ptrdiff_t left = row_end - i;
            if (left >= 8) {
                for (int j = 0; j < 8; j++)
                    put(d + 8 * j, r[j]);
                d += 64;
                if (left == 8) {
                    d += skip;
                    row_end += row_w;
                }
            } else {
                for (int j = 0; j < 8; j++)
                    put(d + 8 * j + (j >= left ? skip : 0), r[j]);
                d += 64 + skip;
                row_end += row_w;
            }
        }
        if (i < n) {
            // the last row's last eight positions (n is whole rows)
            V r[8];
            block(n - 8, r);
            C *last = dst + ((n / row_w - 1) * row_stride + row_w - 8) * 8;
            for (int j = 0; j < 8; j++)
                put(last + 8 * j, r[j]);
            i = n;
        }
        return i;
    }
    for (; i + 8 <= n; i += 8) {
        V r[8];
        block(i, r);
        for (int j = 0; j < 8; j++) {
            put(at.d, r[j]);
            at.next();
        }
    }
    return i;
}

// What a transpose prefetches while it runs: in_bytes from in (the next
// group's input, into L2), and for writing out_bytes from out and
// index_bytes from indices (the outputs about to be stored).
struct Ahead {
    const char *in = nullptr;
    ptrdiff_t in_bytes = 0;
    const char *out = nullptr;
    ptrdiff_t out_bytes = 0;
    const char *indices = nullptr;
    ptrdiff_t index_bytes = 0;
};

// The prefetches of an Ahead, in address order, spread over the blocks of a
// transpose: some() a block, rest() what is left after the last. Out: the
// outputs and indices too (a transpose of its own: see
// blocked::to_lanes_out).
template <bool Out>
struct SpreadPrefetch {
    // a span prefetched a few lines a block
    struct Span {
        const char *p;
        ptrdiff_t lines, per_block;
        Span(const char *at, ptrdiff_t bytes, ptrdiff_t blocks)
            : p(at),
              lines(bytes > 0 ? (bytes + 63) / 64 : 0),
              per_block(bytes > 0 ? (bytes / 64) / std::max<ptrdiff_t>(1, blocks) + 1 : 0) {}
        template <bool Write>
        OVPOOL_INLINE void some() {
            if (lines <= 0)
                return;
            const ptrdiff_t m = std::min(per_block, lines);
            for (ptrdiff_t k = 0; k < m; k++)
                Write ? prefetch_write(p + k * 64) : prefetch_l2(p + k * 64);
            p += m * 64;
            lines -= m;
        }
        template <bool Write>
        OVPOOL_INLINE void rest() {
            for (; lines > 0; lines--, p += 64)
                Write ? prefetch_write(p) : prefetch_l2(p);
        }
    };
    Span in, out, indices;
    SpreadPrefetch(const Ahead &a, ptrdiff_t blocks)
        : in(a.in, a.in_bytes, blocks),
          out(a.out, Out ? a.out_bytes : 0, blocks),
          indices(a.indices, Out ? a.index_bytes : 0, blocks) {}
    OVPOOL_INLINE void some() {
        if constexpr (Out) {
            out.some<true>();
            indices.some<true>();
        }
        in.some<false>();
    }
    OVPOOL_INLINE void rest() {
        in.rest<false>();
        if constexpr (Out) {
            out.rest<true>();
            indices.rest<true>();
        }
    }
};

// What the input transpose does to each value on the way into lanes.
enum class Fold { none, abs, square };

template <Fold Fo>
OVPOOL_INLINE float fold1(float v) {
    if constexpr (Fo == Fold::abs)
        return std::fabs(v);
    else if constexpr (Fo == Fold::square)
        return v * v;
    return v;
}

// Element i of src[l] (every src[l] a valid row: a group of fewer planes
// repeats one) to lane l of position i of dst, as float, for i < n, the
// positions laid out as rows of row_w (see LaneCursor). Returns true when
// a NaN was met (float inputs; only looked for with Check). Meanwhile it
// prefetches what ahead names (its outputs only with Out), spread over the
// blocks: the eight rows are eight short streams, which the hardware
// prefetcher does not get ahead of (a group's input read this way came from
// DRAM at a third of a sequential read's rate); the next group's input is
// one. Fo: |x| or x * x of each value on the way (Lp norms of p 1 and 2;
// the same bits as a pass over the lanes after, without that pass: Lp 2x2
// s2 on 4x384x38x37 0.71x, 3x3 s2 on 32x512x13x13 0.69x, 0.71-0.96x on
// the sweeps' other Lp configurations, at 1 thread).
template <Elem E, bool Check, Fold Fo = Fold::none, bool Out = false>
inline bool planes_to_lanes(const void *const src[8], ptrdiff_t n, float *dst, ptrdiff_t row_w,
                            ptrdiff_t row_stride, const Ahead &ahead) {
    ptrdiff_t i = 0;
    bool nan = false;
    LaneCursor<float> at(dst, n, row_w, row_stride);
    SpreadPrefetch<Out> pf(ahead, n / 8);
    if constexpr (vector_elem<E>()) {
#if defined(__AVX__)
        __m256 u = _mm256_setzero_ps();
        // inlined at its three calls, where gcc made it a call a block in
        // most instances (paired, inlined: Lp 2 3x3 s2 on 32x512x13x13
        // 0.69-0.92x / 0.73-0.77x at 1 / 2 threads, Lp 1 3x3 s1 on
        // 16x256x17x17 0.87x / 0.90x; max and average even)
        auto block = [&](ptrdiff_t at_i, __m256 r[8]) OVPOOL_INLINE_LAMBDA {
            pf.some();
            for (int l = 0; l < 8; l++)
                r[l] = load8_of<E>(src[l], at_i);
            transpose8x8(r);
            // unordered: either operand a NaN (one compare for two
            // registers: max 2x2 s3 and 4x4 s2 on 7x7 planes 0.75-0.95x
            // at 1 thread)
            if (Check)
                for (int j = 0; j < 8; j += 2)
                    u = _mm256_or_ps(u, _mm256_cmp_ps(r[j], r[j + 1], _CMP_UNORD_Q));
            if constexpr (Fo == Fold::abs)
                for (int j = 0; j < 8; j++)
                    r[j] = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), r[j]);
            else if constexpr (Fo == Fold::square)
                for (int j = 0; j < 8; j++)
                    r[j] = _mm256_mul_ps(r[j], r[j]);
        };
        i = put_blocks<__m256>(n, dst, at, row_w, row_stride, block,
                               [](float *d, __m256 x) { _mm256_store_ps(d, x); });
        if (Check)
            nan = _mm256_movemask_ps(u) != 0;
#elif defined(__SSE2__)
        __m128 u = _mm_setzero_ps();
        for (; i + 4 <= n; i += 4) {
            if (i % 8 == 0)
                pf.some();
            float *d[4];
            for (int j = 0; j < 4; j++) {
                d[j] = at.d;
                at.next();
            }
            for (int h = 0; h < 2; h++) {
                __m128 r0 = load4_of<E>(src[4 * h], i), r1 = load4_of<E>(src[4 * h + 1], i);
                __m128 r2 = load4_of<E>(src[4 * h + 2], i), r3 = load4_of<E>(src[4 * h + 3], i);
                _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
                if (Check)
                    u = _mm_or_ps(u, _mm_or_ps(_mm_cmpunord_ps(r0, r1), _mm_cmpunord_ps(r2, r3)));
                if constexpr (Fo == Fold::abs) {
                    const __m128 sign = _mm_set1_ps(-0.0f);
                    r0 = _mm_andnot_ps(sign, r0), r1 = _mm_andnot_ps(sign, r1);
                    r2 = _mm_andnot_ps(sign, r2), r3 = _mm_andnot_ps(sign, r3);
                } else if constexpr (Fo == Fold::square) {
                    r0 = _mm_mul_ps(r0, r0), r1 = _mm_mul_ps(r1, r1);
                    r2 = _mm_mul_ps(r2, r2), r3 = _mm_mul_ps(r3, r3);
                }
                _mm_store_ps(d[0] + 4 * h, r0);
                _mm_store_ps(d[1] + 4 * h, r1);
                _mm_store_ps(d[2] + 4 * h, r2);
                _mm_store_ps(d[3] + 4 * h, r3);
            }
        }
        if (Check)
            nan = _mm_movemask_ps(u) != 0;
#endif
    }
    pf.rest();
    for (; i < n; i++, at.next())
        for (int l = 0; l < 8; l++) {
            const float v = widen1<float>(src[l], i, E);
            nan |= Check && v != v;
            at.d[l] = fold1<Fo>(v);
        }
    return nan;
}

// The same for float64 planes.
template <bool Check>
inline bool planes_to_lanes_f64(const void *const src[8], ptrdiff_t n, double *dst, ptrdiff_t row_w,
                                ptrdiff_t row_stride) {
    bool nan = false;
    LaneCursor<double> at(dst, n, row_w, row_stride);
    for (ptrdiff_t i = 0; i < n; i++, at.next())
        for (int l = 0; l < 8; l++) {
            const double v = static_cast<const double *>(src[l])[i];
            nan |= Check && v != v;
            at.d[l] = v;
        }
    return nan;
}

#if defined(__SSE2__)
template <Elem E>
OVPOOL_INLINE void store4_as(void *p, ptrdiff_t i, __m128 v) {
#if defined(__F16C__)
    if constexpr (E == Elem::f16) {
        _mm_storel_epi64(reinterpret_cast<__m128i *>(static_cast<uint16_t *>(p) + i),
                         _mm_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
        return;
    }
#endif
    _mm_storeu_ps(static_cast<float *>(p) + i, v);
}
#endif

template <Elem E>
constexpr bool vector_store() {
#if defined(__F16C__)
    if constexpr (E == Elem::f16)
        return true;
#endif
#if defined(__SSE2__)
    return E == Elem::f32;
#else
    return false;
#endif
}

#if defined(__SSE2__)
// Positions i .. i + 3 of lanes 4h .. 4h + 3 of a group in lanes: r[l] holds
// lane 4h + l's four values.
OVPOOL_INLINE void lanes_block4(const float *src, ptrdiff_t i, int h, __m128 r[4]) {
    __m128 r0 = _mm_load_ps(src + i * 8 + 4 * h);
    __m128 r1 = _mm_load_ps(src + (i + 1) * 8 + 4 * h);
    __m128 r2 = _mm_load_ps(src + (i + 2) * 8 + 4 * h);
    __m128 r3 = _mm_load_ps(src + (i + 3) * 8 + 4 * h);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    r[0] = r0, r[1] = r1, r[2] = r2, r[3] = r3;
}
#endif

#if defined(__AVX__)
// Positions i .. i + 7 of the eight lanes: r[l] holds lane l's eight values.
OVPOOL_INLINE void lanes_block8(const float *src, ptrdiff_t i, __m256 r[8]) {
    for (int j = 0; j < 8; j++)
        r[j] = _mm256_load_ps(src + (i + j) * 8);
    transpose8x8(r);
}
#endif

// dst[l][i] = src[i * 8 + l] for i < n, l < count, rounded to E.
template <Elem E>
inline void lanes_to_planes(const float *src, ptrdiff_t n, void *const dst[8], int count) {
    ptrdiff_t i = 0;
    if constexpr (vector_store<E>()) {
#if defined(__AVX__)
        if (count == 8) {
            for (; i + 8 <= n; i += 8) {
                __m256 r[8];
                lanes_block8(src, i, r);
                for (int l = 0; l < 8; l++) {
                    if constexpr (E == Elem::f16)
                        _mm_storeu_si128(
                            reinterpret_cast<__m128i *>(static_cast<uint16_t *>(dst[l]) + i),
                            _mm256_cvtps_ph(r[l], _MM_FROUND_TO_NEAREST_INT));
                    else
                        _mm256_storeu_ps(static_cast<float *>(dst[l]) + i, r[l]);
                }
            }
        }
#endif
        for (; i + 4 <= n; i += 4) {
            for (int h = 0; h < 2 && 4 * h < count; h++) {
                __m128 r[4];
                lanes_block4(src, i, h, r);
                for (int l = 0; l < 4 && 4 * h + l < count; l++)
                    store4_as<E>(dst[4 * h + l], i, r[l]);
            }
        }
    }
    for (; i < n; i++)
        for (int l = 0; l < count; l++)
            narrow1<float>(src[i * 8 + l], dst[l], i, E);
}

// dst[l][i] = base[l] + max(pos[i * 8 + l], 0) for i < n, l < count: a
// group's positions in lanes (exact integers as float, an empty window's
// -1 giving the base) to the caller's indices, transposed and widened in
// registers (as scalars this took a third of a max 3x3 s1 with indices on
// 8x8 planes). The positions are below 2^24, so truncation is exact.
template <class I>
inline void lanes_to_indices(const float *pos, ptrdiff_t n, I *const dst[8], int count,
                             const int64_t base[8]) {
    static_assert(std::is_same<I, int64_t>::value || std::is_same<I, int32_t>::value,
                  "indices are int64 or int32");
    ptrdiff_t i = 0;
#if defined(__AVX2__)
    for (; i + 8 <= n; i += 8) {
        __m256 r[8];
        lanes_block8(pos, i, r);
        for (int l = 0; l < count; l++) {
            const __m256i at = _mm256_max_epi32(_mm256_cvttps_epi32(r[l]), _mm256_setzero_si256());
            if constexpr (std::is_same<I, int64_t>::value) {
                store_indices8(dst[l] + i, dst[l] + i + 4, at, base[l]);
            } else {
                _mm256_storeu_si256(
                    reinterpret_cast<__m256i *>(dst[l] + i),
                    _mm256_add_epi32(at, _mm256_set1_epi32(static_cast<int32_t>(base[l]))));
            }
        }
    }
#endif
#if defined(__SSE2__)
    for (; i + 4 <= n; i += 4) {
        for (int h = 0; h < 2 && 4 * h < count; h++) {
            __m128 r[4];
            lanes_block4(pos, i, h, r);
            for (int l = 0; l < 4 && 4 * h + l < count; l++) {
                const int q = 4 * h + l;
                __m128i at = _mm_cvttps_epi32(r[l]);
                at = _mm_andnot_si128(_mm_srai_epi32(at, 31), at);  // max(at, 0)
                if constexpr (std::is_same<I, int64_t>::value) {
                    store_indices4(dst[q] + i, at, base[q]);
                } else {
                    _mm_storeu_si128(
                        reinterpret_cast<__m128i *>(dst[q] + i),
                        _mm_add_epi32(at, _mm_set1_epi32(static_cast<int32_t>(base[q]))));
                }
            }
        }
    }
#endif
    for (; i < n; i++)
        for (int l = 0; l < count; l++) {
            const float p = pos[i * 8 + l];
            dst[l][i] = static_cast<I>(base[l] + (p < 0 ? 0 : static_cast<int64_t>(p)));
        }
}

inline void lanes_to_planes_f64(const double *src, ptrdiff_t n, void *const dst[8], int count) {
    for (ptrdiff_t i = 0; i < n; i++)
        for (int l = 0; l < count; l++)
            static_cast<double *>(dst[l])[i] = src[i * 8 + l];
}

}  // namespace simd
OVPOOL_END
