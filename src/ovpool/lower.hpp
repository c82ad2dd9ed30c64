// An op's attributes, with ONNX's or OpenVINO's semantics, lowered into the
// core's PoolSpec: once, for every front door (the numpy API and the IR
// runtime through the Cython driver, the extension library's ops directly).
//
// A front door reads its attributes its own way (Python arguments of any
// integer type, IR strings, OpenVINO's attribute visitor) into PoolAttrs;
// lower() applies every rule of the op to them and to the input's shape: the
// number of entries per attribute, their ranges, auto_pad and rounding, the
// output size, windows that would hold no input element, the divisor of an
// average, the index space of MaxPool's indices. A rule that fails throws a
// LoweringError whose message names the attribute and its value; the front
// door prefixes the op (Python: "max_pool: ...", OpenVINO: the node).
//
// Dims may be unknown (-1: shape inference of a dynamic model): the output
// dims that follow from them are unknown too, and the rules that need them
// wait for a static shape.
#pragma once

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "plan.hpp"

namespace ovpool {

// Whose attributes: their names and the rules that differ.
enum class Semantics : int32_t { onnx = 0, openvino = 1 };

// The attributes of one pool op as a front door read them. An empty list is
// an attribute not given: its default, except for the kernel and the
// output_size of an adaptive pool, which every spatial axis needs (ONNX and
// OpenVINO refuse a pool without them; an empty one is no identity).
struct PoolAttrs {
    Semantics semantics = Semantics::onnx;
    Family family = Family::average;  // argmax: max with its indices
    // adaptive bins (AdaptiveAvgPool-8, AdaptiveMaxPool-8) of output_size;
    // global pools: adaptive with global_pool set (1 bin per axis)
    bool adaptive = false;
    bool global_pool = false;
    std::vector<int64_t> output_size;
    // fixed windows
    std::vector<int64_t> kernel, strides, dilations;
    std::vector<int64_t> pads;                  // ONNX: begins then ends, 2 per axis
    std::vector<int64_t> pads_begin, pads_end;  // OpenVINO
    AutoPad auto_pad = AutoPad::explicit_pads;
    Rounding rounding = Rounding::floor;  // ONNX ceil_mode=1: ceil_torch
    bool count_pads = false;              // ONNX count_include_pad; OpenVINO !exclude_pad
    int64_t storage_order = 0;            // ONNX MaxPool: 1 numbers indices column-major
    int64_t axis = 0;                     // OpenVINO MaxPool-8: indices flat from this dim on
    IndexType index_type = IndexType::i64;
    double p = 2.0;  // Lp
};

// What lower_unpool() gives: ONNX MaxUnpool's attributes resolved, its
// default output shape and its output shape (-1 for an unknown dim).
struct UnpoolLowered {
    int rank = 0;
    std::vector<int64_t> kernel, strides, pads_begin, pads_end;
    int64_t default_shape[5] = {-1, -1, -1, -1, -1};
    int64_t out_shape[5] = {-1, -1, -1, -1, -1};
};

// What lower() gives: the spec (complete when is_static) and the output
// shape (-1 for an unknown dim).
struct Lowered {
    PoolSpec spec;
    int rank = 0;
    int64_t out_shape[5] = {-1, -1, -1, -1, -1};
    bool is_static = false;
};

// An attribute or input that breaks an op's rule.
class LoweringError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

}  // namespace ovpool

OVPOOL_BEGIN

namespace lowering {

inline std::string ints_text(const std::vector<int64_t> &values) {
    std::string s = "[";
    for (size_t i = 0; i < values.size(); i++)
        s += (i ? ", " : "") + std::to_string(values[i]);
    return s + "]";
}

// A shape as Python prints a tuple: (8,), (8, 8).
inline std::string tuple_text(const int64_t *dims, int n) {
    std::string s = "(";
    for (int i = 0; i < n; i++)
        s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + (n == 1 ? ",)" : ")");
}

inline std::string lower_case(const std::string &text) {
    std::string s;
    for (char ch : text)
        if (!std::isspace(static_cast<unsigned char>(ch)))
            s += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
}

struct Names {
    const char *kernel, *pads_begin, *pads_end;
};

inline Names names(Semantics s) {
    return s == Semantics::onnx ? Names{"kernel_shape", "pads_begin", "pads_end"}
                                : Names{"kernel", "pads_begin", "pads_end"};
}

// A per-axis attribute: per_dim entries for each of n spatial dims (and
// `extra` more: MaxUnpool's output_shape holds N and C), each in [minimum,
// kMaxElements]; an empty list gives `fill` on every axis, or is refused
// where `fill` is kRequired.
constexpr int64_t kRequired = -1;

inline std::vector<int64_t> per_axis(const std::vector<int64_t> &values, const char *name,
                                     int n_spatial, int64_t minimum, int64_t fill, int per_dim = 1,
                                     int extra = 0) {
    const size_t count = static_cast<size_t>(n_spatial * per_dim + extra);
    if (values.empty() && fill != kRequired)
        return std::vector<int64_t>(count, fill);
    if (values.size() != count)
        throw LoweringError(std::string(name) + " must have " + std::to_string(count) +
                            " entries for " + std::to_string(n_spatial) + " spatial dims, got " +
                            std::to_string(values.size()) + ": " + ints_text(values));
    for (int64_t v : values) {
        if (v < minimum)
            throw LoweringError(std::string(name) + " must be >= " + std::to_string(minimum) +
                                ", got " + ints_text(values));
        if (v > limits::kMaxElements)
            throw LoweringError(std::string(name) + " is absurdly large: " + ints_text(values));
    }
    return values;
}

}  // namespace lowering

// auto_pad as ONNX (NOTSET, SAME_UPPER, ...) or OpenVINO (explicit,
// same_upper, ...) spells it, any case.
inline AutoPad parse_auto_pad(const std::string &text, const char *name = "auto_pad") {
    const std::string s = lowering::lower_case(text);
    if (s == "notset" || s == "explicit")
        return AutoPad::explicit_pads;
    if (s == "same_upper")
        return AutoPad::same_upper;
    if (s == "same_lower")
        return AutoPad::same_lower;
    if (s == "valid")
        return AutoPad::valid;
    throw LoweringError(std::string(name) +
                        " must be one of NOTSET/explicit, SAME_UPPER, SAME_LOWER, VALID; got '" +
                        text + "'");
}

// OpenVINO's rounding_type: floor, ceil, ceil_torch.
inline Rounding parse_rounding(const std::string &text, const char *name = "rounding_type") {
    const std::string s = lowering::lower_case(text);
    if (s == "floor")
        return Rounding::floor;
    if (s == "ceil")
        return Rounding::ceil;
    if (s == "ceil_torch")
        return Rounding::ceil_torch;
    throw LoweringError(std::string(name) + " must be one of floor, ceil, ceil_torch; got '" +
                        text + "'");
}

// The rules of the op `a` on an input of `rank` dims (`dims`, -1 unknown) of
// element type `dtype`. rank must be known; 3 to 5 is checked here.
inline Lowered lower(const PoolAttrs &a, DType dtype, int rank, const int64_t *dims) {
    using lowering::ints_text;
    using lowering::per_axis;
    Lowered out;
    if (rank < 3 || rank > 5)
        throw LoweringError(
            "x must have shape (N, C, D1[, D2[, D3]]) with 1 to 3 spatial dims, "
            "got rank " +
            std::to_string(rank));
    const int n = rank - 2;
    out.rank = rank;
    for (int i = 0; i < rank; i++) {
        if (dims[i] > limits::kMaxElements)
            throw LoweringError("dim " + std::to_string(i) + " of x (" + std::to_string(dims[i]) +
                                ") is absurdly large");
    }
    out.out_shape[0] = dims[0];
    out.out_shape[1] = dims[1];
    bool known = dims[0] >= 0 && dims[1] >= 0;
    PoolSpec &spec = out.spec;
    spec.family = a.family;
    spec.dtype = dtype;
    spec.n = dims[0];
    spec.c = dims[1];
    spec.n_spatial = n;
    spec.p = a.p;
    spec.index_type = a.index_type;
    if (a.family == Family::lp && !(std::isfinite(a.p) && a.p > 0)) {
        char text[32];
        std::snprintf(text, sizeof text, "%g", a.p);
        throw LoweringError(std::string("p must be a positive finite number, got ") + text);
    }

    if (a.adaptive) {
        const std::vector<int64_t> sizes =
            a.global_pool ? std::vector<int64_t>(static_cast<size_t>(n), 1)
                          : per_axis(a.output_size, "output_size", n, 1, lowering::kRequired);
        int64_t total = 1;
        for (int s = 0; s < n; s++)
            total = saturating_mul(total, sizes[s], limits::kMaxElements + 1);
        if (total > limits::kMaxElements)
            throw LoweringError("output_size " + ints_text(sizes) + " is absurdly large");
        for (int s = 0; s < n; s++) {
            const int64_t n_in = dims[2 + s];
            if (n_in == 0)
                throw LoweringError(
                    "every spatial dim of x must be non-empty, got size 0 in spatial shape " +
                    lowering::tuple_text(dims + 2, n));
            AxisSpec &axis = spec.axes[s];
            axis.adaptive = true;
            axis.n_in = n_in;
            axis.n_out = sizes[static_cast<size_t>(s)];
            out.out_shape[2 + s] = sizes[static_cast<size_t>(s)];
            known = known && n_in >= 0;
        }
    } else {
        const lowering::Names name = lowering::names(a.semantics);
        const std::vector<int64_t> kernel =
            per_axis(a.kernel, name.kernel, n, 1, lowering::kRequired);
        const std::vector<int64_t> strides = per_axis(a.strides, "strides", n, 1, 1);
        const std::vector<int64_t> dilations = per_axis(a.dilations, "dilations", n, 1, 1);
        std::vector<int64_t> begins, ends;
        if (a.semantics == Semantics::onnx) {
            const std::vector<int64_t> pads = per_axis(a.pads, "pads", n, 0, 0, 2);
            begins.assign(pads.begin(), pads.begin() + n);
            ends.assign(pads.begin() + n, pads.end());
            if (a.auto_pad != AutoPad::explicit_pads)
                for (int64_t pad : pads)
                    if (pad != 0)
                        throw LoweringError("pads=" + ints_text(pads) +
                                            " cannot be combined with auto_pad='" +
                                            (a.auto_pad == AutoPad::same_upper   ? "SAME_UPPER"
                                             : a.auto_pad == AutoPad::same_lower ? "SAME_LOWER"
                                                                                 : "VALID") +
                                            "'");
        } else {
            begins = per_axis(a.pads_begin, "pads_begin", n, 0, 0);
            ends = per_axis(a.pads_end, "pads_end", n, 0, 0);
        }
        for (int s = 0; s < n; s++)
            if (kernel[s] - 1 > (limits::kMaxDilatedKernel - 1) / dilations[s])
                throw LoweringError("the dilated kernel is absurdly large (" +
                                    std::string(name.kernel) + " " + ints_text(kernel) +
                                    ", dilations " + ints_text(dilations) + ")");
        // OpenVINO's exclude-pad AvgPool: a pad as large as the dilated
        // kernel leaves a window without any input element, which OpenVINO
        // divides as 0/0
        if (a.semantics == Semantics::openvino && a.family == Family::average && !a.count_pads &&
            a.auto_pad == AutoPad::explicit_pads)
            for (int s = 0; s < n; s++) {
                const int64_t ek = effective_kernel(kernel[s], dilations[s]);
                if (begins[s] >= ek || ends[s] >= ek)
                    throw LoweringError(
                        "with exclude_pad the dilated kernel (" + std::to_string(ek) +
                        ") must be larger than the pads (pads_begin=" + ints_text(begins) +
                        ", pads_end=" + ints_text(ends) + "); some window would be empty");
            }
        int64_t total = 1;
        std::vector<int64_t> used_begin(begins), used_end(ends);
        for (int s = 0; s < n; s++) {
            AxisSpec &axis = spec.axes[s];
            axis.kernel = kernel[s];
            axis.stride = strides[s];
            axis.dilation = dilations[s];
            const int64_t n_in = dims[2 + s];
            if (n_in < 0) {
                known = false;
                if (a.auto_pad == AutoPad::valid)
                    used_begin[s] = used_end[s] = 0;
                continue;
            }
            const AxisSize size = axis_output_size(n_in, kernel[s], strides[s], dilations[s],
                                                   begins[s], ends[s], a.auto_pad, a.rounding);
            if (size.n_out < 1)
                throw LoweringError(
                    "the window does not fit along spatial axis " + std::to_string(s) +
                    ": input size " + std::to_string(n_in) + " with pads (" +
                    std::to_string(size.pad_begin) + ", " + std::to_string(size.pad_end) +
                    ") is smaller than the dilated kernel " +
                    std::to_string(effective_kernel(kernel[s], dilations[s])) + " (" + name.kernel +
                    "=" + ints_text(kernel) + ", dilations=" + ints_text(dilations) + ")");
            axis.n_in = n_in;
            axis.n_out = size.n_out;
            axis.pad_begin = used_begin[s] = size.pad_begin;
            axis.pad_end = used_end[s] = size.pad_end;
            out.out_shape[2 + s] = size.n_out;
            total = saturating_mul(total, size.n_out, limits::kMaxElements + 1);
        }
        if (total > limits::kMaxElements)
            throw LoweringError("output spatial shape " +
                                lowering::tuple_text(out.out_shape + 2, n) + " is absurdly large");
        // windows holding no input element: ONNX's references disagree on
        // them (ONNX Runtime gives -FLT_MAX and index -1, the reference NaN),
        // so max and exclude-pad averages refuse them; OpenVINO's ops define
        // them (ovpool.ov_ops)
        const bool refuse_empty = a.semantics == Semantics::onnx &&
                                  (a.family == Family::max || a.family == Family::argmax ||
                                   (a.family == Family::average && !a.count_pads));
        if (refuse_empty)
            for (int s = 0; s < n; s++) {
                const AxisSpec &axis = spec.axes[s];
                if (dims[2 + s] >= 0 &&
                    axis_has_empty_window(axis.n_in, axis.n_out, axis.kernel, axis.stride,
                                          axis.dilation, axis.pad_begin))
                    throw LoweringError("some window lies entirely in the padding (pads_begin=" +
                                        ints_text(used_begin) + ", pads_end=" +
                                        ints_text(used_end) + ", " + name.kernel + "=" +
                                        ints_text(kernel) + ", dilations=" + ints_text(dilations) +
                                        "); pads must be smaller than the dilated kernel");
            }
        // the divisor of an average, per axis
        Divisor divisor = Divisor::taps;
        if (a.family == Family::average) {
            if (a.semantics == Semantics::onnx) {
                divisor = a.count_pads ? Divisor::declared_pads : Divisor::taps;
            } else {
                // OpenVINO counts pads only when some pad is non-zero (its
                // reference: pads_in_avg = !exclude_pad && any pad != 0);
                // with all pads 0 a ceil window past the input is 0/0 = NaN
                // as in OpenVINO. Counting pads, a rounding_type=ceil window
                // may start beyond the declared pads: its sum is 0 and
                // OpenVINO returns 0, so its divisor stays non-zero.
                bool any_pad = false;
                for (int s = 0; s < n; s++)
                    any_pad = any_pad || used_begin[s] != 0 || used_end[s] != 0;
                divisor = a.count_pads && any_pad ? Divisor::ov_include : Divisor::ov_exclude;
            }
        }
        for (int s = 0; s < n; s++)
            spec.axes[s].divisor = divisor;
    }

    // the index space of max with indices
    if (a.family == Family::argmax) {
        int64_t planes_per_space = 1, modulo = 0;
        if (a.semantics == Semantics::onnx && !a.adaptive) {
            if (a.storage_order != 0 && a.storage_order != 1)
                throw LoweringError("storage_order must be 0 or 1, got " +
                                    std::to_string(a.storage_order));
            spec.column_major = a.storage_order == 1;
            planes_per_space = known ? saturating_mul(dims[0], dims[1]) : 1;
        } else if (a.semantics == Semantics::openvino && !a.adaptive) {
            if (a.axis < -rank || a.axis >= rank)
                throw LoweringError("axis must be in [" + std::to_string(-rank) + ", " +
                                    std::to_string(rank - 1) + "], got " + std::to_string(a.axis));
            const int64_t axis = (a.axis + rank) % rank;
            if (axis == 0)
                planes_per_space = known ? saturating_mul(dims[0], dims[1]) : 1;
            else if (axis == 1)
                planes_per_space = dims[1] >= 0 ? dims[1] : 1;
            else if (axis > 2) {
                modulo = 1;
                for (int d = static_cast<int>(axis); d < rank; d++)
                    modulo = dims[d] >= 0 ? saturating_mul(modulo, dims[d]) : -1;
            }
        }
        spec.planes_per_index_space = std::max<int64_t>(1, planes_per_space);
        spec.index_modulo = std::max<int64_t>(0, modulo);
        if (a.index_type == IndexType::i32 && known) {
            int64_t space = spec.planes_per_index_space;
            for (int s = 0; s < n; s++)
                space = saturating_mul(space, dims[2 + s]);
            if (space > int64_t(INT32_MAX))
                throw LoweringError("indices up to " + std::to_string(space - 1) +
                                    " do not fit in int32; use int64 indices");
        }
    }
    if (known) {
        int64_t total = 1;
        for (int i = 0; i < rank; i++)
            total = saturating_mul(total, out.out_shape[i], limits::kMaxElements + 1);
        if (total > limits::kMaxElements)
            throw LoweringError("output shape " + lowering::tuple_text(out.out_shape, rank) +
                                " is absurdly large");
    }
    out.is_static = known;
    return out;
}

// ONNX MaxUnpool's rules on an input of `rank` dims (`dims`, -1 unknown):
// kernel_shape, strides and pads as for the pools; the default output size
// (n_in - 1) s + k - pad_begin - pad_end per axis, at least 1; output_shape
// (empty: the default) keeps N and C and is at least the default shape.
inline UnpoolLowered lower_unpool(const std::vector<int64_t> &kernel_shape,
                                  const std::vector<int64_t> &strides,
                                  const std::vector<int64_t> &pads,
                                  const std::vector<int64_t> &output_shape, int rank,
                                  const int64_t *dims) {
    using lowering::ints_text;
    using lowering::per_axis;
    UnpoolLowered out;
    if (rank < 3 || rank > 5)
        throw LoweringError(
            "x must have shape (N, C, D1[, D2[, D3]]) with 1 to 3 spatial dims, "
            "got rank " +
            std::to_string(rank));
    const int n = rank - 2;
    out.rank = rank;
    out.kernel = per_axis(kernel_shape, "kernel_shape", n, 1, lowering::kRequired);
    out.strides = per_axis(strides, "strides", n, 1, 1);
    const std::vector<int64_t> p = per_axis(pads, "pads", n, 0, 0, 2);
    out.pads_begin.assign(p.begin(), p.begin() + n);
    out.pads_end.assign(p.begin() + n, p.end());
    out.default_shape[0] = dims[0];
    out.default_shape[1] = dims[1];
    for (int s = 0; s < n; s++) {
        const int64_t n_in = dims[2 + s];
        if (n_in < 0)
            continue;
        if (n_in > limits::kMaxElements)
            throw LoweringError("dim " + std::to_string(2 + s) + " of x (" + std::to_string(n_in) +
                                ") is absurdly large");
        const int64_t size = unpool_output_size(n_in, out.kernel[s], out.strides[s],
                                                out.pads_begin[s], out.pads_end[s]);
        if (size < 1)
            throw LoweringError("the output size along spatial axis " + std::to_string(s) +
                                " would be " + std::to_string(size) + " (input " +
                                std::to_string(n_in) + ", kernel_shape=" + ints_text(out.kernel) +
                                ", strides=" + ints_text(out.strides) + ", pads=(" +
                                std::to_string(out.pads_begin[s]) + ", " +
                                std::to_string(out.pads_end[s]) + "))");
        if (size > limits::kMaxElements)
            throw LoweringError("the output size along spatial axis " + std::to_string(s) + " (" +
                                std::to_string(size) + ") is absurdly large");
        out.default_shape[2 + s] = size;
    }
    if (output_shape.empty()) {
        std::copy(out.default_shape, out.default_shape + rank, out.out_shape);
        return out;
    }
    const std::vector<int64_t> full = per_axis(output_shape, "output_shape", n, 1, 1, 1, 2);
    for (int i = 0; i < 2; i++)
        if (dims[i] >= 0 && full[i] != dims[i])
            throw LoweringError("output_shape " + ints_text(full) + " must keep N and C of x " +
                                lowering::tuple_text(dims, 2));
    for (int i = 2; i < rank; i++)
        if (out.default_shape[i] >= 0 && full[i] < out.default_shape[i])
            throw LoweringError(
                "output_shape " + ints_text(full) + " is smaller than the default shape " +
                ints_text(std::vector<int64_t>(out.default_shape, out.default_shape + rank)));
    std::copy(full.begin(), full.end(), out.out_shape);
    return out;
}

OVPOOL_END
