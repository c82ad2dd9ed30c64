// The public C++ entry points: one call per pool on contiguous NC(D)(H)W
// arrays, run serially on the calling thread, no exceptions (a status code).
// For C++ programs and for Cython code through ovpool/kernels.pxd; callable
// without the GIL. Shapes and attributes are checked by the ops' rules
// (lower.hpp, ONNX's semantics, as for the Python functions): a rule that
// fails is kBadArgument. The arrays must hold what the shapes say.
//
//     ovpool::Shape in{2, 3, 2, {7, 10}};                 // N, C, spatial rank, dims
//     int64_t out_size[2] = {3, 3};
//     int status = ovpool::adaptive_avg_pool(x, in, out_size, y);   // y: 2x3x3x3
//
// To run a pool on several threads, build a Plan (plan.hpp) and hand its
// units to the threads (run.hpp), as ovpool's own front doors do.
#pragma once

#include "lower.hpp"
#include "run.hpp"

OVPOOL_BEGIN

enum Status : int {
    kOk = 0,
    kBadArgument = -1,  // a shape, window or attribute a pool cannot take
    kNoMemory = -2,     // the scratch or the plan could not be allocated
};

// The input of a pool: N, C and 1 to 3 spatial dims.
struct Shape {
    int64_t n = 1, c = 1;
    int n_spatial = 2;
    int64_t spatial[3] = {1, 1, 1};
};

// The attributes of a fixed-window pool, per spatial axis (ONNX's and
// OpenVINO's: pads as begins and ends; strides and dilations default to 1).
struct Window {
    int64_t kernel[3] = {1, 1, 1};
    int64_t strides[3] = {1, 1, 1};
    int64_t dilations[3] = {1, 1, 1};
    int64_t pads_begin[3] = {0, 0, 0};
    int64_t pads_end[3] = {0, 0, 0};
    AutoPad auto_pad = AutoPad::explicit_pads;
    Rounding rounding = Rounding::floor;
};

namespace detail {

template <class T>
constexpr DType dtype_of() {
    if constexpr (std::is_same<T, float>::value)
        return DType::f32;
    else if constexpr (std::is_same<T, double>::value)
        return DType::f64;
    else if constexpr (std::is_same<T, int8_t>::value)
        return DType::i8;
    else
        return DType::u8;
}

// The attributes of a Window for an input of `n` spatial dims.
inline PoolAttrs window_attrs(const Window &w, int n, Family family) {
    PoolAttrs a;
    a.semantics = Semantics::onnx;
    a.family = family;
    a.kernel.assign(w.kernel, w.kernel + n);
    a.strides.assign(w.strides, w.strides + n);
    a.dilations.assign(w.dilations, w.dilations + n);
    a.pads.assign(w.pads_begin, w.pads_begin + n);
    a.pads.insert(a.pads.end(), w.pads_end, w.pads_end + n);
    a.auto_pad = w.auto_pad;
    a.rounding = w.rounding;
    return a;
}

// The rules of the op on `in`: its lowering, or kBadArgument.
inline int lowered(const PoolAttrs &a, DType dtype, const Shape &in, Lowered &out) noexcept {
    if (in.n < 0 || in.c < 0 || in.n_spatial < 1 || in.n_spatial > 3)
        return kBadArgument;
    int64_t dims[5] = {in.n, in.c, 0, 0, 0};
    for (int s = 0; s < in.n_spatial; s++) {
        if (in.spatial[s] < 1)
            return kBadArgument;
        dims[2 + s] = in.spatial[s];
    }
    try {
        out = lower(a, dtype, 2 + in.n_spatial, dims);
        return out.is_static ? kOk : kBadArgument;
    } catch (const std::bad_alloc &) {
        return kNoMemory;
    } catch (...) {
        return kBadArgument;
    }
}

inline int run_spec(const PoolSpec &spec, const void *x, void *out, void *indices) noexcept {
    try {
        const Plan plan = make_plan(spec);
        if (plan.widen_input)
            return kBadArgument;  // 16-bit types are not offered here
        return run_serial(plan, x, out, indices) ? kOk : kNoMemory;
    } catch (const std::bad_alloc &) {
        return kNoMemory;
    } catch (...) {
        return kBadArgument;
    }
}

}  // namespace detail

// The output spatial size of a fixed-window pool (a max pool's: windows
// that hold no input element are refused too); kBadArgument when the window
// does not fit the padded input.
inline int pool_output_size(const Shape &in, const Window &w, int64_t *out_spatial) noexcept {
    Lowered l;
    const int status =
        detail::lowered(detail::window_attrs(w, in.n_spatial, Family::max), DType::f32, in, l);
    if (status != kOk)
        return status;
    for (int a = 0; a < in.n_spatial; a++)
        out_spatial[a] = l.out_shape[2 + a];
    return kOk;
}

namespace detail {

template <class T>
inline int adaptive(Family family, const T *x, const Shape &in, const int64_t *out_spatial, T *out,
                    void *indices, IndexType index_type) noexcept {
    if (in.n_spatial < 1 || in.n_spatial > 3)
        return kBadArgument;
    Lowered l;
    int status;
    try {
        PoolAttrs a;
        a.family = family;
        a.adaptive = true;
        a.output_size.assign(out_spatial, out_spatial + in.n_spatial);
        a.index_type = index_type;
        status = lowered(a, dtype_of<T>(), in, l);
    } catch (...) {
        return kNoMemory;
    }
    return status != kOk ? status : run_spec(l.spec, x, out, indices);
}

template <class T>
inline int fixed(Family family, const T *x, const Shape &in, const Window &w, bool count_pads,
                 double p, T *out, void *indices, IndexType index_type,
                 bool column_major) noexcept {
    if (in.n_spatial < 1 || in.n_spatial > 3)
        return kBadArgument;
    Lowered l;
    int status;
    try {
        PoolAttrs a = window_attrs(w, in.n_spatial, family);
        a.count_pads = count_pads;
        a.p = p;
        a.index_type = index_type;
        a.storage_order = column_major ? 1 : 0;
        status = lowered(a, dtype_of<T>(), in, l);
    } catch (...) {
        return kNoMemory;
    }
    return status != kOk ? status : run_spec(l.spec, x, out, indices);
}

}  // namespace detail

// Adaptive average pooling (OpenVINO AdaptiveAvgPool-8, PyTorch's
// adaptive_avg_poolNd): out has shape (n, c, out_spatial...). T: float or
// double.
template <class T>
inline int adaptive_avg_pool(const T *x, const Shape &in, const int64_t *out_spatial,
                             T *out) noexcept {
    static_assert(std::is_floating_point<T>::value, "averages need float or double");
    return detail::adaptive(Family::average, x, in, out_spatial, out, nullptr, IndexType::i64);
}

// Adaptive max pooling (OpenVINO AdaptiveMaxPool-8): values, and indices
// flat within each (n, c) plane. T: float, double, int8_t, uint8_t; I:
// int32_t or int64_t.
template <class T, class I>
inline int adaptive_max_pool(const T *x, const Shape &in, const int64_t *out_spatial, T *out,
                             I *indices) noexcept {
    static_assert(std::is_same<I, int32_t>::value || std::is_same<I, int64_t>::value,
                  "int32 or int64 indices");
    return detail::adaptive(Family::argmax, x, in, out_spatial, out, indices,
                            std::is_same<I, int64_t>::value ? IndexType::i64 : IndexType::i32);
}

// Average pooling (ONNX AveragePool): count_include_pad divides by the taps
// inside input + declared pads.
template <class T>
inline int avg_pool(const T *x, const Shape &in, const Window &w, bool count_include_pad,
                    T *out) noexcept {
    static_assert(std::is_floating_point<T>::value, "averages need float or double");
    return detail::fixed(Family::average, x, in, w, count_include_pad, 2.0, out, nullptr,
                         IndexType::i64, false);
}

// Max pooling (ONNX MaxPool), values only.
template <class T>
inline int max_pool(const T *x, const Shape &in, const Window &w, T *out) noexcept {
    return detail::fixed(Family::max, x, in, w, false, 2.0, out, nullptr, IndexType::i64, false);
}

// Max pooling with indices flat over the whole (n, c, ...) tensor (ONNX
// MaxPool's Indices; column_major: storage_order=1).
template <class T, class I>
inline int max_pool_with_indices(const T *x, const Shape &in, const Window &w, T *out, I *indices,
                                 bool column_major = false) noexcept {
    static_assert(std::is_same<I, int32_t>::value || std::is_same<I, int64_t>::value,
                  "int32 or int64 indices");
    return detail::fixed(Family::argmax, x, in, w, false, 2.0, out, indices,
                         std::is_same<I, int64_t>::value ? IndexType::i64 : IndexType::i32,
                         column_major);
}

// Lp pooling (ONNX LpPool): (sum |x|^p)^(1/p), padding contributes zeros.
template <class T>
inline int lp_pool(const T *x, const Shape &in, const Window &w, double p, T *out) noexcept {
    static_assert(std::is_floating_point<T>::value, "Lp sums need float or double");
    return detail::fixed(Family::lp, x, in, w, false, p, out, nullptr, IndexType::i64, false);
}

// Global pools: one output per (n, c) plane.
template <class T>
inline int global_avg_pool(const T *x, const Shape &in, T *out) noexcept {
    const int64_t ones[3] = {1, 1, 1};
    return adaptive_avg_pool(x, in, ones, out);
}

template <class T>
inline int global_max_pool(const T *x, const Shape &in, T *out) noexcept {
    if (in.n_spatial < 1 || in.n_spatial > 3)
        return kBadArgument;
    const int64_t ones[3] = {1, 1, 1};
    return detail::adaptive(Family::max, x, in, ones, out, nullptr, IndexType::i64);
}

OVPOOL_END
