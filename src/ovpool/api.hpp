// The public C++ entry points: one call per pool on contiguous NC(D)(H)W
// arrays, run serially on the calling thread, no exceptions (a status code).
// For C++ programs and for Cython code through ovpool/kernels.pxd; callable
// without the GIL. Shapes and the output size are checked here; the arrays
// must hold what the shapes say.
//
//     ovpool::Shape in{2, 3, 2, {7, 10}};                 // N, C, spatial rank, dims
//     int64_t out_size[2] = {3, 3};
//     int status = ovpool::adaptive_avg_pool(x, in, out_size, y);   // y: 2x3x3x3
//
// To run a pool on several threads, build a Plan (plan.hpp) and hand its
// units to the threads (run.hpp), as ovpool's own front doors do.
#pragma once

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

constexpr int64_t kApiMax = int64_t(1) << 40;

inline bool shape_ok(const Shape &in) {
    if (in.n < 0 || in.c < 0 || in.n > kApiMax || in.c > kApiMax || in.n_spatial < 1 ||
        in.n_spatial > 3)
        return false;
    for (int a = 0; a < in.n_spatial; a++)
        if (in.spatial[a] < 1 || in.spatial[a] > kApiMax)
            return false;
    return true;
}

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

// Axis specs of a fixed-window pool: kBadArgument when a window does not fit.
inline int fixed_axes(const Shape &in, const Window &w, Divisor divisor, PoolSpec &spec) {
    for (int a = 0; a < in.n_spatial; a++) {
        if (w.kernel[a] < 1 || w.strides[a] < 1 || w.dilations[a] < 1 || w.pads_begin[a] < 0 ||
            w.pads_end[a] < 0 || w.kernel[a] > kApiMax || w.strides[a] > kApiMax ||
            w.dilations[a] > kApiMax || w.pads_begin[a] > kApiMax || w.pads_end[a] > kApiMax ||
            w.kernel[a] > kApiMax / w.dilations[a])
            return kBadArgument;
        const AxisSize size =
            axis_output_size(in.spatial[a], w.kernel[a], w.strides[a], w.dilations[a],
                             w.pads_begin[a], w.pads_end[a], w.auto_pad, w.rounding);
        if (size.n_out < 1)
            return kBadArgument;
        AxisSpec &s = spec.axes[a];
        s.n_in = in.spatial[a];
        s.n_out = size.n_out;
        s.kernel = w.kernel[a];
        s.stride = w.strides[a];
        s.dilation = w.dilations[a];
        s.pad_begin = size.pad_begin;
        s.pad_end = size.pad_end;
        s.divisor = divisor;
    }
    return kOk;
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

// The output spatial size of a fixed-window pool; kBadArgument when the
// window does not fit the padded input.
inline int pool_output_size(const Shape &in, const Window &w, int64_t *out_spatial) noexcept {
    if (!detail::shape_ok(in))
        return kBadArgument;
    PoolSpec spec;
    const int status = detail::fixed_axes(in, w, Divisor::taps, spec);
    if (status != kOk)
        return status;
    for (int a = 0; a < in.n_spatial; a++)
        out_spatial[a] = spec.axes[a].n_out;
    return kOk;
}

namespace detail {

template <class T>
inline int adaptive(Family family, const T *x, const Shape &in, const int64_t *out_spatial, T *out,
                    void *indices, IndexType index_type) noexcept {
    if (!shape_ok(in))
        return kBadArgument;
    PoolSpec spec;
    spec.family = family;
    spec.dtype = dtype_of<T>();
    spec.n = in.n;
    spec.c = in.c;
    spec.n_spatial = in.n_spatial;
    spec.index_type = index_type;
    spec.planes_per_index_space = 1;
    for (int a = 0; a < in.n_spatial; a++) {
        if (out_spatial[a] < 1 || out_spatial[a] > kApiMax)
            return kBadArgument;
        spec.axes[a].adaptive = true;
        spec.axes[a].n_in = in.spatial[a];
        spec.axes[a].n_out = out_spatial[a];
    }
    return run_spec(spec, x, out, indices);
}

template <class T>
inline int fixed(Family family, const T *x, const Shape &in, const Window &w, Divisor divisor,
                 double p, T *out, void *indices, IndexType index_type,
                 bool column_major) noexcept {
    if (!shape_ok(in))
        return kBadArgument;
    PoolSpec spec;
    spec.family = family;
    spec.dtype = dtype_of<T>();
    spec.n = in.n;
    spec.c = in.c;
    spec.n_spatial = in.n_spatial;
    spec.p = p;
    spec.index_type = index_type;
    spec.planes_per_index_space = std::max<int64_t>(1, in.n * in.c);
    spec.column_major = column_major;
    const int status = fixed_axes(in, w, divisor, spec);
    if (status != kOk)
        return status;
    return run_spec(spec, x, out, indices);
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
    return detail::fixed(Family::average, x, in, w,
                         count_include_pad ? Divisor::declared_pads : Divisor::taps, 2.0, out,
                         nullptr, IndexType::i64, false);
}

// Max pooling (ONNX MaxPool), values only.
template <class T>
inline int max_pool(const T *x, const Shape &in, const Window &w, T *out) noexcept {
    return detail::fixed(Family::max, x, in, w, Divisor::taps, 2.0, out, nullptr, IndexType::i64,
                         false);
}

// Max pooling with indices flat over the whole (n, c, ...) tensor (ONNX
// MaxPool's Indices; column_major: storage_order=1).
template <class T, class I>
inline int max_pool_with_indices(const T *x, const Shape &in, const Window &w, T *out, I *indices,
                                 bool column_major = false) noexcept {
    static_assert(std::is_same<I, int32_t>::value || std::is_same<I, int64_t>::value,
                  "int32 or int64 indices");
    return detail::fixed(Family::argmax, x, in, w, Divisor::taps, 2.0, out, indices,
                         std::is_same<I, int64_t>::value ? IndexType::i64 : IndexType::i32,
                         column_major);
}

// Lp pooling (ONNX LpPool): (sum |x|^p)^(1/p), padding contributes zeros.
template <class T>
inline int lp_pool(const T *x, const Shape &in, const Window &w, double p, T *out) noexcept {
    static_assert(std::is_floating_point<T>::value, "Lp sums need float or double");
    if (!(p > 0) || p > 1e300)
        return kBadArgument;
    return detail::fixed(Family::lp, x, in, w, Divisor::taps, p, out, nullptr, IndexType::i64,
                         false);
}

// Global pools: one output per (n, c) plane.
template <class T>
inline int global_avg_pool(const T *x, const Shape &in, T *out) noexcept {
    const int64_t ones[3] = {1, 1, 1};
    return adaptive_avg_pool(x, in, ones, out);
}

template <class T>
inline int global_max_pool(const T *x, const Shape &in, T *out) noexcept {
    if (!detail::shape_ok(in))
        return kBadArgument;
    Window w;
    for (int a = 0; a < in.n_spatial; a++)
        w.kernel[a] = in.spatial[a];
    return max_pool(x, in, w, out);
}

OVPOOL_END
