// The separable passes every row path is built from.
//
// An output row (od, oh) is computed in two passes:
//
// 1. vertical: the window's input rows (the product of its depth and height
//    taps) are combined element-wise into a per-thread column buffer, a
//    contiguous loop the compiler vectorises;
// 2. horizontal: each output column combines its taps of the column buffer.
//    When the windows along W are uniform (every fixed-window pool, and
//    adaptive pools with In % Out == 0) the column buffer carries the padding
//    on both sides, pre-filled with the identity (0 for sums, -inf for max),
//    so output ow is simply combine(buf[ow*s + t*d] for t < k), specialised
//    for common kernel sizes and strides. Otherwise (adaptive bins of unequal
//    size) the W table drives the loop.
//
// Sums keep the order of the rows, then the order of the columns, so they
// can differ from a row-major sum (PyTorch) by an ulp or two. Max is exact,
// with PyTorch's NaN rule: a window with a NaN gives NaN (the canonical quiet
// NaN), whatever the order of the combination.
//
// T is float or double for sums, and also int8_t or uint8_t for maxima.
#pragma once

#include <type_traits>

#include "plan.hpp"
#include "simd/rows.hpp"

OVPOOL_BEGIN

template <class T>
constexpr bool is_float_v = std::is_floating_point<T>::value;

// Running maximum, PyTorch's NaN rule: a NaN candidate always wins.
template <class T>
OVPOOL_INLINE T mx(T current, T candidate) {
    if constexpr (is_float_v<T>) {
        // maxps semantics (the second operand wins when unordered) catch a NaN
        // candidate; the blend keeps a NaN that is already current.
        T larger = current > candidate ? current : candidate;
        return current != current ? current : larger;
    } else {
        return candidate > current ? candidate : current;
    }
}

// Padding value of the max buffer: -inf for floats (never wins against a
// real element), the lowest value for integers.
template <class T>
constexpr T max_identity() {
    if constexpr (is_float_v<T>)
        return -std::numeric_limits<T>::infinity();
    else
        return std::numeric_limits<T>::lowest();
}

// Value of a max window with no element inside the input (OpenVINO's
// answer), as the values-only kernels fill it: the lowest float32 for every
// float type (OpenVINO's CPU plugin computes in float32), the integers'
// lowest.
template <class T>
constexpr T empty_fill() {
    if constexpr (is_float_v<T>)
        return static_cast<T>(-std::numeric_limits<float>::max());
    else
        return std::numeric_limits<T>::lowest();
}

// The same as the kernels with indices give it: the type's own lowest value.
template <class T>
constexpr T lowest() {
    return std::numeric_limits<T>::lowest();
}

// Its bits in a 16-bit float output: float32's lowest rounded to nearest
// even (-inf in float16 and in bfloat16).
inline uint16_t lowest_bits(bool bf16) {
    const float v = -std::numeric_limits<float>::max();
    return bf16 ? simd::float_to_bf16(v) : simd::float_to_half(v);
}

template <class T>
OVPOOL_INLINE T nan_of() {
    return static_cast<T>(NAN);
}

// ---------------------------------------------------------------------------
// Vertical passes: combine window rows into the column buffer
// ---------------------------------------------------------------------------
// Never inlined: inside the large unit functions their loops ran out of
// registers (the 4-row sum reloaded three row pointers from the stack on
// every vector: aap3d 1.07x slower than as separate functions).

// col += sum of the rows, added in row order, up to 4 rows per sweep.
template <class T>
OVPOOL_NOINLINE void vsum_add(const T *plane, const int64_t *offsets, ptrdiff_t n_rows, T *col,
                              ptrdiff_t width) {
    ptrdiff_t r = 0;
    while (r + 4 <= n_rows) {
        const T *a = plane + offsets[r], *b = plane + offsets[r + 1];
        const T *c = plane + offsets[r + 2], *d = plane + offsets[r + 3];
        for (ptrdiff_t i = 0; i < width; i++)
            col[i] = col[i] + a[i] + b[i] + c[i] + d[i];
        r += 4;
    }
    if (n_rows - r == 3) {
        const T *a = plane + offsets[r], *b = plane + offsets[r + 1], *c = plane + offsets[r + 2];
        for (ptrdiff_t i = 0; i < width; i++)
            col[i] = col[i] + a[i] + b[i] + c[i];
    } else if (n_rows - r == 2) {
        const T *a = plane + offsets[r], *b = plane + offsets[r + 1];
        for (ptrdiff_t i = 0; i < width; i++)
            col[i] = col[i] + a[i] + b[i];
    } else if (n_rows - r == 1) {
        const T *a = plane + offsets[r];
        for (ptrdiff_t i = 0; i < width; i++)
            col[i] = col[i] + a[i];
    }
}

// col = sum of the rows, added in row order (groups of up to 4 rows per
// sweep keep the column buffer out of the load/store critical path).
template <class T>
OVPOOL_NOINLINE void vsum(const T *plane, const int64_t *offsets, ptrdiff_t n_rows, T *col,
                          ptrdiff_t width) {
    if (n_rows == 0) {
        for (ptrdiff_t i = 0; i < width; i++)
            col[i] = 0;
        return;
    }
    const T *a = plane + offsets[0];
    if (n_rows == 1) {
        for (ptrdiff_t i = 0; i < width; i++)
            col[i] = a[i];
        return;
    }
    const T *b = plane + offsets[1];
    if (n_rows == 2) {
        for (ptrdiff_t i = 0; i < width; i++)
            col[i] = a[i] + b[i];
        return;
    }
    const T *c = plane + offsets[2];
    if (n_rows == 3) {
        for (ptrdiff_t i = 0; i < width; i++)
            col[i] = a[i] + b[i] + c[i];
        return;
    }
    const T *d = plane + offsets[3];
    for (ptrdiff_t i = 0; i < width; i++)
        col[i] = a[i] + b[i] + c[i] + d[i];
    vsum_add(plane, offsets + 4, n_rows - 4, col, width);
}

// col = sum over the rows of |x|^p (Lp pooling; p = 1, 2 or other by mode).
template <class T>
inline void vsum_lp(const T *plane, const int64_t *offsets, ptrdiff_t n_rows, T *col,
                    ptrdiff_t width, int mode, double p) {
    for (ptrdiff_t i = 0; i < width; i++)
        col[i] = 0;
    for (ptrdiff_t r = 0; r < n_rows; r++) {
        const T *a = plane + offsets[r];
        if (mode == kSumLp1) {
            for (ptrdiff_t i = 0; i < width; i++)
                col[i] += std::fabs(a[i]);
        } else if (mode == kSumLp2) {
            for (ptrdiff_t i = 0; i < width; i++)
                col[i] += a[i] * a[i];
        } else {
            for (ptrdiff_t i = 0; i < width; i++)
                col[i] += static_cast<T>(std::pow(std::fabs(static_cast<double>(a[i])), p));
        }
    }
}

template <class T>
OVPOOL_INLINE T max2(T x, T y) {
    T m = x > y ? x : y;
    if constexpr (is_float_v<T>)
        return (x != x) | (y != y) ? nan_of<T>() : m;
    else
        return m;
}

template <class T>
OVPOOL_INLINE T max3(T x, T y, T z) {
    T m = x > y ? x : y;
    m = m > z ? m : z;
    if constexpr (is_float_v<T>)
        return (x != x) | (y != y) | (z != z) ? nan_of<T>() : m;
    else
        return m;
}

template <class T>
OVPOOL_INLINE T max4(T w, T x, T y, T z) {
    T m = w > x ? w : x;
    m = m > y ? m : y;
    m = m > z ? m : z;
    if constexpr (is_float_v<T>)
        return (w != w) | (x != x) | (y != y) | (z != z) ? nan_of<T>() : m;
    else
        return m;
}

// col = maximum of col and the rows, up to 3 rows per sweep.
template <class T>
OVPOOL_NOINLINE void vmax_add(const T *plane, const int64_t *offsets, ptrdiff_t n_rows, T *col,
                              ptrdiff_t width) {
    ptrdiff_t r = 0;
    while (r + 3 <= n_rows) {
        const T *a = plane + offsets[r], *b = plane + offsets[r + 1], *c = plane + offsets[r + 2];
        for (ptrdiff_t i = 0; i < width; i++)
            col[i] = max4(col[i], a[i], b[i], c[i]);
        r += 3;
    }
    if (n_rows - r == 2) {
        const T *a = plane + offsets[r], *b = plane + offsets[r + 1];
        for (ptrdiff_t i = 0; i < width; i++)
            col[i] = max3(col[i], a[i], b[i]);
    } else if (n_rows - r == 1) {
        const T *a = plane + offsets[r];
        for (ptrdiff_t i = 0; i < width; i++)
            col[i] = max2(col[i], a[i]);
    }
}

// col = element-wise NaN-propagating maximum of the rows. The maximum is a
// plain compare-select chain and NaN is tracked as a separate flag: one
// vector blend per element instead of one per step.
template <class T>
OVPOOL_NOINLINE void vmax(const T *plane, const int64_t *offsets, ptrdiff_t n_rows, T *col,
                          ptrdiff_t width) {
    if (n_rows == 0) {
        for (ptrdiff_t i = 0; i < width; i++)
            col[i] = max_identity<T>();
        return;
    }
    const T *a = plane + offsets[0];
    if (n_rows == 1) {
        for (ptrdiff_t i = 0; i < width; i++)
            col[i] = a[i];
        return;
    }
    const T *b = plane + offsets[1];
    if (n_rows == 2) {
        for (ptrdiff_t i = 0; i < width; i++)
            col[i] = max2(a[i], b[i]);
        return;
    }
    const T *c = plane + offsets[2];
    for (ptrdiff_t i = 0; i < width; i++)
        col[i] = max3(a[i], b[i], c[i]);
    vmax_add(plane, offsets + 3, n_rows - 3, col, width);
}

// col = NaN-propagating maximum of the rows (canonical NaN). float32 rows are
// combined with plain maxps and one NaN check per row, and redone with the
// exact rule when they hold a NaN. Returns true when col is known to hold no
// NaN (the horizontal pass then drops its NaN flag).
template <class T>
OVPOOL_INLINE bool max_rows_exact(const T *plane, const int64_t *offsets, ptrdiff_t n_rows, T *col,
                                  ptrdiff_t width) {
    if constexpr (std::is_same<T, float>::value) {
        if (n_rows > 0 && !simd::vmax_rows_f32(plane, offsets, n_rows, col, width))
            return true;
    }
    vmax(plane, offsets, n_rows, col, width);
    return false;
}

// ---------------------------------------------------------------------------
// Contiguous spans: one window row of 8 or more taps
// ---------------------------------------------------------------------------
// A long window row is reduced in 8 independent lanes (a vector register)
// with a fixed fold: a single running sum or max could not be vectorised.

template <class T>
OVPOOL_INLINE T span_sum(const T *x, ptrdiff_t n) {
    T acc[8];
    T tail = 0;
    ptrdiff_t i = 0;
    for (int j = 0; j < 8; j++)
        acc[j] = 0;
    while (i + 8 <= n) {
        for (int j = 0; j < 8; j++)
            acc[j] = acc[j] + x[i + j];
        i += 8;
    }
    while (i < n) {
        tail = tail + x[i];
        i += 1;
    }
    for (int j = 0; j < 4; j++)
        acc[j] = acc[j] + acc[j + 4];
    return ((acc[0] + acc[2]) + (acc[1] + acc[3])) + tail;
}

// Integer types only (no NaN): 8 lanes, then the tail.
template <class T>
OVPOOL_INLINE T span_max_lanes(const T *x, ptrdiff_t n) {
    T acc[8];
    T best = x[0];
    ptrdiff_t i = 1;
    if (n >= 8) {
        for (int j = 0; j < 8; j++)
            acc[j] = x[j];
        i = 8;
        while (i + 8 <= n) {
            for (int j = 0; j < 8; j++) {
                T value = x[i + j];
                acc[j] = acc[j] > value ? acc[j] : value;
            }
            i += 8;
        }
        for (int j = 0; j < 8; j++)
            best = best > acc[j] ? best : acc[j];
    }
    while (i < n) {
        T value = x[i];
        best = best > value ? best : value;
        i += 1;
    }
    return best;
}

// NaN-propagating maximum of n >= 1 contiguous values.
template <class T>
OVPOOL_INLINE T span_max(const T *x, ptrdiff_t n) {
    if constexpr (std::is_same<T, float>::value)
        return simd::span_max_f32(x, n);
    else if constexpr (std::is_same<T, double>::value)
        return simd::span_max_f64(x, n);
    else
        return span_max_lanes(x, n);
}

// Position of the first maximum of n >= 1 contiguous values, or of the last
// NaN: the vectorised maximum first, then a short scan for it.
template <class T>
OVPOOL_INLINE ptrdiff_t span_argmax(const T *x, ptrdiff_t n) {
    if constexpr (std::is_same<T, float>::value) {
        return simd::span_argmax_f32(x, n);
    } else if constexpr (std::is_same<T, double>::value) {
        return simd::span_argmax_f64(x, n);
    } else {
        T best = span_max(x, n);
        ptrdiff_t i = 0;
        while (!(x[i] == best))
            i++;
        return i;
    }
}

// ---------------------------------------------------------------------------
// Horizontal passes over a padded buffer: out[o] = combine(buf[o*s + t*d], t < k)
// ---------------------------------------------------------------------------
// With the kernel size and stride as template arguments each instance is a
// fully unrolled, vectorised loop.

// out /= row_div * div_w, as a separate (vectorised) loop: a division at the
// end of each output's sum stalled the loop on its latency (adaptive 50->7
// at 1 thread: 700 -> 600 ns per plane).
template <class T>
OVPOOL_INLINE void divide_row(T *out, ptrdiff_t n_out, const T *div_w, T row_div) {
    if (div_w != nullptr)
        for (ptrdiff_t o = 0; o < n_out; o++)
            out[o] = out[o] / (row_div * div_w[o]);
}

// out[o] = sum(buf[o*S + t], t < K), divided by row_div * div_w[o] unless
// div_w is null (Lp pooling finishes the sums itself). K = 0: k at run time.
template <class T, ptrdiff_t S, ptrdiff_t K>
OVPOOL_INLINE void hsum_k(const T *buf, T *out, ptrdiff_t n_out, ptrdiff_t stride, ptrdiff_t k,
                          const T *div_w, T row_div) {
    const ptrdiff_t s = S ? S : stride, kk = K ? K : k;
    if (div_w == nullptr) {
        for (ptrdiff_t o = 0; o < n_out; o++) {
            T acc = buf[o * s];
            for (ptrdiff_t t = 1; t < kk; t++)
                acc = acc + buf[o * s + t];
            out[o] = acc;
        }
    } else {
        for (ptrdiff_t o = 0; o < n_out; o++) {
            T acc = buf[o * s];
            for (ptrdiff_t t = 1; t < kk; t++)
                acc = acc + buf[o * s + t];
            out[o] = acc / (row_div * div_w[o]);
        }
    }
}

// Any kernel, stride S (0: at run time) and dilation. float32 rows of 8+
// outputs take the vector pass of simd::htaps8_f32; the rest, taps
// outermost: out[o] = buf[o*S] + buf[o*S + d] + ... in tap order, as the
// loops above add them (the same bits), each tap one pass over the output
// row, which the compiler vectorises for a stride known at compile time.
// One output at a time cost about 30 instructions an output (average 5x5 s2
// on 96x71x71: 70% of the call).
template <class T, ptrdiff_t S>
OVPOOL_INLINE void hsum_taps(const T *__restrict buf, T *__restrict out, ptrdiff_t n_out,
                             ptrdiff_t stride, ptrdiff_t k, ptrdiff_t dilation, bool plain) {
    const ptrdiff_t s = S ? S : stride;
    if constexpr (std::is_same<T, float>::value)
        if (simd::htaps8_f32(buf, out, n_out, s, k, dilation, 0, plain) == n_out)
            return;
    for (ptrdiff_t o = 0; o < n_out; o++)
        out[o] = buf[o * s];
    for (ptrdiff_t t = 1; t < k; t++) {
        const T *__restrict tap = buf + t * dilation;
        for (ptrdiff_t o = 0; o < n_out; o++)
            out[o] = out[o] + tap[o * s];
    }
}

// The maxima of the same windows. Taps outermost, a NaN is kept once met
// (the running value wins while it is NaN; a NaN tap wins, as maxps lets the
// second operand win when unordered) and made the canonical NaN at the end:
// the bits of the per-output loops with their NaN flag.
template <class T, ptrdiff_t S>
OVPOOL_INLINE void hmax_taps(const T *__restrict buf, T *__restrict out, ptrdiff_t n_out,
                             ptrdiff_t stride, ptrdiff_t k, ptrdiff_t dilation, bool nan_free,
                             bool plain) {
    const ptrdiff_t s = S ? S : stride;
    if constexpr (std::is_same<T, float>::value)
        if (simd::htaps8_f32(buf, out, n_out, s, k, dilation, nan_free ? 1 : 2, plain) == n_out)
            return;
    for (ptrdiff_t o = 0; o < n_out; o++)
        out[o] = buf[o * s];
    if (!is_float_v<T> || nan_free) {
        for (ptrdiff_t t = 1; t < k; t++) {
            const T *__restrict tap = buf + t * dilation;
            for (ptrdiff_t o = 0; o < n_out; o++) {
                const T value = tap[o * s];
                out[o] = out[o] > value ? out[o] : value;
            }
        }
        return;
    }
    if constexpr (is_float_v<T>) {
        for (ptrdiff_t t = 1; t < k; t++) {
            const T *__restrict tap = buf + t * dilation;
            for (ptrdiff_t o = 0; o < n_out; o++) {
                const T acc = out[o], value = tap[o * s];
                out[o] = (acc > value) | (acc != acc) ? acc : value;
            }
        }
        for (ptrdiff_t o = 0; o < n_out; o++)
            out[o] = out[o] != out[o] ? nan_of<T>() : out[o];
    }
}

// Whether the W pass loads strided taps plainly (simd::htaps8_loads, see
// there): rows read in place, and rows long enough that their start has left
// the store buffer when it is read.
OVPOOL_INLINE bool plain_taps(bool in_place, ptrdiff_t n_out, ptrdiff_t stride) {
    return in_place || n_out * stride >= 1024;
}

// from_input: buf is a row of the input (not scratch), streamed in order
template <class T>
inline void hsum(const T *buf, T *out, ptrdiff_t n_out, ptrdiff_t k, ptrdiff_t stride,
                 ptrdiff_t dilation, const T *div_w, T row_div, bool from_input) {
    const bool plain = plain_taps(from_input, n_out, stride);
    if (dilation == 1 && k >= 8) {
        ptrdiff_t o = 0;
        if constexpr (std::is_same<T, float>::value)
            o = simd::span_sums8_f32(buf, stride, k, n_out, out, from_input);
        for (; o < n_out; o++)
            out[o] = span_sum(buf + o * stride, k);
        return divide_row(out, n_out, div_w, row_div);
    }
    if (dilation == 1 && stride == 1) {
        switch (k) {
            case 1:
                return hsum_k<T, 1, 1>(buf, out, n_out, 1, 1, div_w, row_div);
            case 2:
                return hsum_k<T, 1, 2>(buf, out, n_out, 1, 2, div_w, row_div);
            case 3:
                return hsum_k<T, 1, 3>(buf, out, n_out, 1, 3, div_w, row_div);
            case 4:
                return hsum_k<T, 1, 4>(buf, out, n_out, 1, 4, div_w, row_div);
            case 5:
                return hsum_k<T, 1, 5>(buf, out, n_out, 1, 5, div_w, row_div);
            case 7:
                return hsum_k<T, 1, 7>(buf, out, n_out, 1, 7, div_w, row_div);
        }
    } else if (dilation == 1 && stride == 2) {
        switch (k) {
            case 2:
                return hsum_k<T, 2, 2>(buf, out, n_out, 2, 2, div_w, row_div);
            case 3:
                return hsum_k<T, 2, 3>(buf, out, n_out, 2, 3, div_w, row_div);
            case 4:
                return hsum_k<T, 2, 4>(buf, out, n_out, 2, 4, div_w, row_div);
        }
    } else if (dilation == 1 && stride == 3 && k == 3) {
        return hsum_k<T, 3, 3>(buf, out, n_out, 3, 3, div_w, row_div);
    } else if (dilation == 1 && stride == 4 && k == 4) {
        return hsum_k<T, 4, 4>(buf, out, n_out, 4, 4, div_w, row_div);
    }
    switch (stride) {
        case 1:
            hsum_taps<T, 1>(buf, out, n_out, 1, k, dilation, plain);
            break;
        case 2:
            hsum_taps<T, 2>(buf, out, n_out, 2, k, dilation, plain);
            break;
        case 3:
            hsum_taps<T, 3>(buf, out, n_out, 3, k, dilation, plain);
            break;
        default:
            hsum_taps<T, 0>(buf, out, n_out, stride, k, dilation, plain);
    }
    divide_row(out, n_out, div_w, row_div);
}

// nan_free: buf holds no NaN, so the NaN flag (a blend per output) is dropped
template <class T, ptrdiff_t S, ptrdiff_t K>
OVPOOL_INLINE void hmax_k(const T *buf, T *out, ptrdiff_t n_out, ptrdiff_t stride, ptrdiff_t k,
                          bool nan_free) {
    const ptrdiff_t s = S ? S : stride, kk = K ? K : k;
    if (!is_float_v<T>)
        nan_free = true;
    if (nan_free) {
        for (ptrdiff_t o = 0; o < n_out; o++) {
            T acc = buf[o * s];
            for (ptrdiff_t t = 1; t < kk; t++) {
                T value = buf[o * s + t];
                acc = acc > value ? acc : value;
            }
            out[o] = acc;
        }
        return;
    }
    for (ptrdiff_t o = 0; o < n_out; o++) {
        T acc = buf[o * s];
        bool nan = acc != acc;
        for (ptrdiff_t t = 1; t < kk; t++) {
            T value = buf[o * s + t];
            acc = acc > value ? acc : value;
            nan = nan | (value != value);
        }
        if constexpr (is_float_v<T>)
            out[o] = nan ? nan_of<T>() : acc;
    }
}

// in_place: buf is a row read in place (not a buffer just written)
template <class T>
inline void hmax(const T *buf, T *out, ptrdiff_t n_out, ptrdiff_t k, ptrdiff_t stride,
                 ptrdiff_t dilation, bool nan_free, bool in_place = false) {
    const bool plain = plain_taps(in_place, n_out, stride);
    // the stem's 3x3 s2 keeps its own 3-tap kernel (half the instructions of
    // the general pass's two loads and a shuffle per tap), the rest under 8
    // taps take the general vector pass
    if constexpr (std::is_same<T, float>::value) {
        if (nan_free && dilation == 1 && stride == 2 && k == 3 &&
            simd::hmax_s2k3_f32(buf, out, n_out))
            return;
        if (k < 8 && simd::htaps8_f32(buf, out, n_out, stride, k, dilation, nan_free ? 1 : 2,
                                      plain) == n_out)
            return;
    }
    if (dilation == 1 && k >= 8) {
        for (ptrdiff_t o = 0; o < n_out; o++)
            out[o] = span_max(buf + o * stride, k);
        return;
    }
    if (dilation == 1 && stride == 1) {
        switch (k) {
            case 2:
                return hmax_k<T, 1, 2>(buf, out, n_out, 1, 2, nan_free);
            case 3:
                return hmax_k<T, 1, 3>(buf, out, n_out, 1, 3, nan_free);
            case 5:
                return hmax_k<T, 1, 5>(buf, out, n_out, 1, 5, nan_free);
        }
    } else if (dilation == 1 && stride == 2) {
        switch (k) {
            case 2:
                return hmax_k<T, 2, 2>(buf, out, n_out, 2, 2, nan_free);
            case 3:
                if constexpr (std::is_same<T, float>::value)
                    if (nan_free && simd::hmax_s2k3_f32(buf, out, n_out))
                        return;
                return hmax_k<T, 2, 3>(buf, out, n_out, 2, 3, nan_free);
        }
    } else if (dilation == 1 && stride == 3 && k == 3) {
        return hmax_k<T, 3, 3>(buf, out, n_out, 3, 3, nan_free);
    } else if (dilation == 1 && stride == 4 && k == 4) {
        return hmax_k<T, 4, 4>(buf, out, n_out, 4, 4, nan_free);
    }
    switch (stride) {
        case 1:
            return hmax_taps<T, 1>(buf, out, n_out, 1, k, dilation, nan_free, plain);
        case 2:
            return hmax_taps<T, 2>(buf, out, n_out, 2, k, dilation, nan_free, plain);
        case 3:
            return hmax_taps<T, 3>(buf, out, n_out, 3, k, dilation, nan_free, plain);
        default:
            return hmax_taps<T, 0>(buf, out, n_out, stride, k, dilation, nan_free, plain);
    }
}

// Horizontal passes driven by the W table (adaptive bins of unequal size).

template <class T>
inline void hsum_table(const T *col, T *out, const Plan &plan, const T *div_w, T row_div) {
    for (ptrdiff_t o = 0; o < plan.out_w; o++) {
        const ptrdiff_t first = plan.win_w[3 * o], n_taps = plan.win_w[3 * o + 1];
        T acc;
        if (plan.dil_w == 1 && n_taps >= 8) {
            acc = span_sum(col + first, n_taps);
        } else {
            acc = 0;
            for (ptrdiff_t t = 0; t < n_taps; t++)
                acc = acc + col[first + t * plan.dil_w];
        }
        out[o] = acc;
    }
    divide_row(out, plan.out_w, div_w, row_div);
}

template <class T>
inline void hmax_table(const T *col, T *out, const Plan &plan) {
    for (ptrdiff_t o = 0; o < plan.out_w; o++) {
        const ptrdiff_t first = plan.win_w[3 * o], n_taps = plan.win_w[3 * o + 1];
        if (n_taps == 0) {
            out[o] = max_identity<T>();
        } else if (plan.dil_w == 1) {
            out[o] = span_max(col + first, n_taps);
        } else {
            T acc = max_identity<T>();
            for (ptrdiff_t t = 0; t < n_taps; t++)
                acc = mx(acc, col[first + t * plan.dil_w]);
            out[o] = acc;
        }
    }
}

// ---------------------------------------------------------------------------
// Window rows
// ---------------------------------------------------------------------------

// Offsets of the input rows of window row oh within depth slice in_d_idx,
// top to bottom; returns their number.
inline ptrdiff_t slice_row_offsets(const Plan &plan, ptrdiff_t in_d_idx, ptrdiff_t oh,
                                   int64_t *offsets) {
    const int64_t *wh = plan.win_h.data() + 3 * oh;
    for (ptrdiff_t th = 0; th < wh[1]; th++)
        offsets[th] = (in_d_idx * plan.in_h + wh[0] + th * plan.dil_h) * plan.in_w;
    return wh[1];
}

// Offsets (in elements, within a plane) of the input rows of window row
// (od, oh), in row-major window order; returns their number.
inline ptrdiff_t row_offsets(const Plan &plan, ptrdiff_t od, ptrdiff_t oh, int64_t *offsets) {
    const int64_t *wd = plan.win_d.data() + 3 * od;
    ptrdiff_t n = 0;
    for (ptrdiff_t td = 0; td < wd[1]; td++)
        n += slice_row_offsets(plan, wd[0] + td * plan.dil_d, oh, offsets + n);
    return n;
}

// Ask for the input rows a later output row will read first. The window rows
// of one depth slice are consecutive rows of a contiguous plane, so the rows
// the window will newly need plan.prefetch elements ahead form one contiguous
// block after the slice's last row (the hardware prefetcher does not keep up
// with several row streams).
inline void prefetch_ahead(const char *plane, const int64_t *offsets, ptrdiff_t n_rows,
                           ptrdiff_t rows_per_slice, ptrdiff_t item_size, const Plan &plan) {
    const ptrdiff_t block_bytes = plan.prefetch_block * item_size;
    for (ptrdiff_t r = rows_per_slice - 1; r < n_rows; r += rows_per_slice) {
        const char *start =
            plane + (offsets[r] + plan.in_w + plan.prefetch - plan.prefetch_block) * item_size;
        for (ptrdiff_t b = 0; b < block_bytes; b += 64)
            prefetch_l1(start + b);
    }
}

// The run path's horizontal pass of a block of rows of column values (rows
// of in_w) as one row: with no padding along W and in_w a multiple of the
// stride s, output o of row j reads the block from (j * in_w / s + o) * s,
// so one pass over the block gives row j's outputs at j * in_w / s, and the
// outputs between them (windows across two rows) are dropped. Kernels under
// 8 taps (each output combines its taps in order, whatever its neighbours:
// the same bits as row by row) and rows of at most 32 outputs, whose
// per-row calls cost more than the dropped outputs and the copies out
// (max 2x2 s1 on 16x32x38x38: 156 instructions a row in the row's call).
inline bool block_as_row(const Plan &plan) {
    return plan.direct_w && plan.in_w % plan.stride_w == 0 && plan.kernel_w < 8 && plan.out_w <= 32;
}

// The run path's test for a block of m output rows from table row wh: their
// windows hold the same number of rows, step by one input row, and are not
// empty, so the block's vertical pass is one span (see max_rows_run).
inline bool block_is_span(const int64_t *wh, int64_t m) {
    bool span = wh[1] > 0;
    for (int64_t j = 1; j < m && span; j++)
        span = wh[3 * j] == wh[0] + j && wh[3 * j + 1] == wh[1];
    return span;
}

// ---------------------------------------------------------------------------
// The work units of a row path
// ---------------------------------------------------------------------------

// The rows of work unit `unit` (a block of output rows of one plane), in
// runs: run(plane, row, od, oh, rows_left) computes output rows from (od, oh)
// of plane `plane` (row = od * out_h + oh), at most rows_left of them and
// never past the end of depth slice od, and returns how many it did (>= 1).
template <class Run>
OVPOOL_INLINE void for_unit_rows(const Plan &plan, const Schedule &s, int64_t unit, Run &&run) {
    const int64_t plane = unit / s.blocks_per_plane;
    int64_t row = (unit - plane * s.blocks_per_plane) * s.rows_per_block;
    const int64_t row_end = std::min(row + s.rows_per_block, plan.rows_per_plane());
    int64_t od = row / plan.out_h, oh = row - od * plan.out_h;
    while (row < row_end) {
        const int64_t n = run(plane, row, od, oh, row_end - row);
        row += n;
        oh += n;
        if (oh == plan.out_h) {
            oh = 0;
            od += 1;
        }
    }
}

OVPOOL_END
