// float16 and bfloat16 <-> float32.
//
// 16-bit floats are computed in float32 and rounded back to nearest even.
// float16: F16C (vcvtph2ps / vcvtps2ph) in the x86-64-v3 build; elsewhere the
// exact scalar conversions of F. Giesen's public-domain half.c
// (half_to_float_fast5, float_to_half_fast3_rtne). bfloat16: the upper 16
// bits of a float32, rounded to nearest even; a NaN stays a quiet NaN. Both
// match numpy's and ml_dtypes' casts, so every build gives the same bits.
#pragma once

#include "../common.hpp"

OVPOOL_BEGIN
namespace simd {

inline float half_to_float(uint16_t h) {
    const uint32_t shifted_exp = 0x7c00u << 13;
    uint32_t bits = static_cast<uint32_t>(h & 0x7fffu) << 13, exp = shifted_exp & bits;
    float out, magic;
    uint32_t magic_bits = 113u << 23;
    std::memcpy(&magic, &magic_bits, 4);
    bits += (127u - 15u) << 23;
    if (exp == shifted_exp) {
        bits += (128u - 16u) << 23;  // Inf / NaN
        std::memcpy(&out, &bits, 4);
    } else if (exp == 0) {
        bits += 1u << 23;  // zero / subnormal
        std::memcpy(&out, &bits, 4);
        out -= magic;
    } else {
        std::memcpy(&out, &bits, 4);
    }
    std::memcpy(&bits, &out, 4);
    bits |= static_cast<uint32_t>(h & 0x8000u) << 16;
    std::memcpy(&out, &bits, 4);
    return out;
}

inline uint16_t float_to_half(float value) {
    const uint32_t f32_infinity = 255u << 23, f16_max = (127u + 16u) << 23;
    const uint32_t denorm_magic_bits = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    uint32_t bits, sign;
    uint16_t out;
    float denorm_magic;
    std::memcpy(&denorm_magic, &denorm_magic_bits, 4);
    std::memcpy(&bits, &value, 4);
    sign = bits & 0x80000000u;
    bits ^= sign;
    if (bits >= f16_max) {
        out = bits > f32_infinity ? 0x7e00u : 0x7c00u;  // NaN -> quiet NaN, Inf/overflow -> Inf
    } else if (bits < (113u << 23)) {                   // subnormal or zero
        float f;
        std::memcpy(&f, &bits, 4);
        f += denorm_magic;
        std::memcpy(&bits, &f, 4);
        out = static_cast<uint16_t>(bits - denorm_magic_bits);
    } else {
        uint32_t mantissa_odd = (bits >> 13) & 1u;
        bits += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu;
        bits += mantissa_odd;
        out = static_cast<uint16_t>(bits >> 13);
    }
    return static_cast<uint16_t>(out | (sign >> 16));
}

inline float bf16_to_float(uint16_t h) {
    uint32_t bits = static_cast<uint32_t>(h) << 16;
    float out;
    std::memcpy(&out, &bits, 4);
    return out;
}

inline uint16_t float_to_bf16(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        return static_cast<uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
    return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

inline void widen_f16(const uint16_t *src, float *dst, ptrdiff_t n) {
    ptrdiff_t i = 0;
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(
            dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i))));
#endif
    for (; i < n; i++)
        dst[i] = half_to_float(src[i]);
}

inline void narrow_f16(const float *src, uint16_t *dst, ptrdiff_t n) {
    ptrdiff_t i = 0;
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
    for (; i < n; i++)
        dst[i] = float_to_half(src[i]);
}

inline void widen_bf16(const uint16_t *src, float *dst, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++)
        dst[i] = bf16_to_float(src[i]);
}

inline void narrow_bf16(const float *src, uint16_t *dst, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++)
        dst[i] = float_to_bf16(src[i]);
}

inline void widen(const uint16_t *src, float *dst, ptrdiff_t n, bool bf16) {
    if (bf16)
        widen_bf16(src, dst, n);
    else
        widen_f16(src, dst, n);
}

inline void narrow(const float *src, uint16_t *dst, ptrdiff_t n, bool bf16) {
    if (bf16)
        narrow_bf16(src, dst, n);
    else
        narrow_f16(src, dst, n);
}

}  // namespace simd
OVPOOL_END
