// native.hpp: the default policy, its C entry points, and native nodes.
#include "native.hpp"

#include <cstdlib>
#include <string>

#include "node_helpers.hpp"
#include "openvino/op/avg_pool.hpp"
#include "openvino/op/constant.hpp"
#include "openvino/op/max_pool.hpp"
#include "openvino/op/parameter.hpp"
#include "openvino/op/reduce_max.hpp"
#include "openvino/op/reduce_mean.hpp"

namespace ovpool_openvino {
namespace {

ov::op::PadType pad_type(const std::string &auto_pad) {
    if (auto_pad == "same_upper")
        return ov::op::PadType::SAME_UPPER;
    if (auto_pad == "same_lower")
        return ov::op::PadType::SAME_LOWER;
    if (auto_pad == "valid")
        return ov::op::PadType::VALID;
    return ov::op::PadType::EXPLICIT;
}

ov::op::RoundingType rounding_type(const std::string &rounding) {
    if (rounding == "ceil")
        return ov::op::RoundingType::CEIL;
    if (rounding == "ceil_torch")
        return ov::op::RoundingType::CEIL_TORCH;
    return ov::op::RoundingType::FLOOR;
}

template <class T>
T unsigned_of(const Attrs &w, const char *name) {
    const std::vector<int64_t> &values = w.at(name).ints;
    return T(values.begin(), values.end());
}

bool is_avg(const Attrs &w) {
    return &w.op() == &schema_of(OpId::AvgPool);
}

// The native node of w (AvgPool-16 or MaxPool-14) on x.
std::shared_ptr<ov::Node> native_node(const ov::Output<ov::Node> &x, const Attrs &attrs) {
    Attrs w = attrs;
    w.materialize();
    const auto strides = unsigned_of<ov::Strides>(w, "strides");
    const auto dilations = unsigned_of<ov::Strides>(w, "dilations");
    const auto pads_begin = unsigned_of<ov::Shape>(w, "pads_begin");
    const auto pads_end = unsigned_of<ov::Shape>(w, "pads_end");
    const auto kernel = unsigned_of<ov::Shape>(w, "kernel");
    const auto rounding = rounding_type(w.at("rounding_type").s);
    const auto pad = pad_type(w.at("auto_pad").s);
    if (is_avg(w))
        return std::make_shared<ov::op::v16::AvgPool>(x, strides, dilations, pads_begin, pads_end,
                                                      kernel, w.at("exclude-pad").b, rounding, pad);
    return std::make_shared<ov::op::v14::MaxPool>(x, strides, dilations, pads_begin, pads_end,
                                                  kernel, rounding, pad);
}

bool spatial_static(const ov::PartialShape &data, size_t n) {
    if (data.rank().is_dynamic() || data.size() != n + 2)
        return false;
    for (size_t i = 0; i < n; i++)
        if (data[2 + i].is_dynamic())
            return false;
    return true;
}

// Native OpenVINO's output shape against the specification's (the kernel
// core's lowering), asked of a native node itself where the spatial dims
// are known.
bool output_shape_deviates(const Attrs &w, const ov::PartialShape &data) {
    const size_t n = w.n_spatial();
    if (!spatial_static(data, n)) {
        // only "ceil" can: with ceil_torch native gives ceil(n / s) (checked
        // for n < 40, kernels and strides to 6)
        const std::string &auto_pad = w.at("auto_pad").s;
        return (auto_pad == "same_upper" || auto_pad == "same_lower") &&
               w.at("rounding_type").s == "ceil";
    }
    std::vector<ov::Dimension> dims{1, 1};
    int64_t in[5] = {1, 1, 1, 1, 1};
    for (size_t i = 0; i < n; i++) {
        in[2 + i] = data[2 + i].get_length();
        dims.emplace_back(in[2 + i]);
    }
    const auto x =
        std::make_shared<ov::op::v0::Parameter>(ov::element::f32, ov::PartialShape(dims));
    const ov::PartialShape native = native_node(x, w)->get_output_partial_shape(0);
    const ovpool::Lowered spec =
        ovpool::lower(pool_attrs(w), ovpool::DType::f32, static_cast<int>(n + 2), in);
    for (size_t i = 0; i < n; i++)
        if (native[2 + i].is_dynamic() || native[2 + i].get_length() != spec.out_shape[2 + i])
            return true;
    return false;
}

// An AvgPool counting pads with ceil rounding whose edge window runs past
// the declared pads (native OpenVINO divides it by the full kernel there).
bool avg_overhangs(const Attrs &attrs, const ov::PartialShape &data) {
    if (attrs.at("exclude-pad").b || attrs.at("rounding_type").s == "floor" ||
        attrs.at("auto_pad").s != "explicit")
        return false;
    Attrs w = attrs;
    w.materialize();
    const std::vector<int64_t> &begins = w.at("pads_begin").ints, &ends = w.at("pads_end").ints;
    bool any_pad = false;
    for (size_t i = 0; i < begins.size(); i++)
        any_pad = any_pad || begins[i] > 0 || ends[i] > 0;
    if (!any_pad)
        return false;  // OpenVINO counts pads only when some pad is non-zero
    const size_t n = w.n_spatial();
    if (!spatial_static(data, n))
        return true;  // cannot rule it out
    int64_t in[5] = {1, 1, 1, 1, 1};
    for (size_t i = 0; i < n; i++)
        in[2 + i] = data[2 + i].get_length();
    const ovpool::Lowered spec =
        ovpool::lower(pool_attrs(w), ovpool::DType::f32, static_cast<int>(n + 2), in);
    const std::vector<int64_t> &kernel = w.at("kernel").ints, &strides = w.at("strides").ints,
                               &dilations = w.at("dilations").ints;
    for (size_t i = 0; i < n; i++) {
        const int64_t n_out = spec.out_shape[2 + i], ek = (kernel[i] - 1) * dilations[i] + 1;
        if (n_out >= 1 && (n_out - 1) * strides[i] + ek > in[2 + i] + begins[i] + ends[i])
            return true;
    }
    return false;
}

}  // namespace

Policy conversion_policy() {
    const char *env = std::getenv("OVPOOL_OPENVINO_POLICY");
    const std::string value = env ? env : "";
    if (value.empty() || value == "default")
        return Policy::kDefault;
    if (value == "all")
        return Policy::kAll;
    OPENVINO_THROW("ovpool: OVPOOL_OPENVINO_POLICY must be 'default' or 'all', got '", value, "'");
}

const char *window_deviation(const Attrs &w, const ov::PartialShape &data) {
    for (const char *name : {"kernel", "strides", "dilations", "pads_begin", "pads_end"})
        for (int64_t v : w.at(name).ints)
            if (v > ovpool::limits::kNativeLargestWindow)
                return verdict::kWindowNumbers;
    if (output_shape_deviates(w, data))
        return verdict::kOutputShape;
    if (is_avg(w) && avg_overhangs(w, data))
        return verdict::kAvgIncludePadCeil;
    return nullptr;
}

const char *adaptive_verdict(bool max_pool, const std::vector<int64_t> *sizes,
                             const ov::PartialShape &data) {
    if (max_pool)
        return verdict::kAdaptiveMaxPool;
    if (sizes == nullptr)
        return verdict::kRuntimeSizes;
    bool global = true;
    for (int64_t s : *sizes)
        global = global && s == 1;
    if (global)
        return verdict::kGlobalAverage;
    if (data.rank().is_dynamic() || data.size() < 3)
        return verdict::kAdaptiveFloatBins;
    for (size_t i = 0; i + 2 < data.size() && i < sizes->size(); i++) {
        const int64_t bound = data[2 + i].get_max_length();  // -1: unbounded
        if (bound < 0 || bound * (*sizes)[i] > (int64_t(1) << 24))
            return verdict::kAdaptiveFloatBins;
    }
    return verdict::kAdaptiveBins;
}

ov::Output<ov::Node> native_max_values(const ov::Output<ov::Node> &x, const Attrs &w) {
    return native_node(x, w)->output(0);
}

ov::Output<ov::Node> native_avg_pool(const ov::Output<ov::Node> &x, const Attrs &w) {
    return native_node(x, w)->output(0);
}

ov::Output<ov::Node> native_global(const ov::Output<ov::Node> &x, bool max) {
    const ov::PartialShape shape = x.get_partial_shape();
    OPENVINO_ASSERT(shape.rank().is_static() && shape.size() >= 3,
                    "ovpool: a global pool needs an input of known "
                    "rank 3 to 5, got ",
                    shape_text(shape));
    std::vector<int64_t> axes;
    for (int64_t a = 2; a < static_cast<int64_t>(shape.size()); a++)
        axes.push_back(a);
    auto axes_node = ov::op::v0::Constant::create(ov::element::i64, ov::Shape{axes.size()}, axes);
    if (max)
        return std::make_shared<ov::op::v1::ReduceMax>(x, axes_node, true)->output(0);
    return std::make_shared<ov::op::v1::ReduceMean>(x, axes_node, true)->output(0);
}

}  // namespace ovpool_openvino

// ---------------------------------------------------------------------------
// The policy for the Python layer (ovpool.openvino: ctypes)
// ---------------------------------------------------------------------------

namespace {

// dims_min / dims_max of `rank` dims (rank < 0: dynamic; a max < 0: unbounded).
ov::PartialShape shape_of(int rank, const int64_t *dims_min, const int64_t *dims_max) {
    if (rank < 0)
        return ov::PartialShape::dynamic();
    std::vector<ov::Dimension> dims;
    for (int i = 0; i < rank; i++)
        dims.emplace_back(dims_min[i], dims_max[i]);
    return ov::PartialShape(dims);
}

thread_local std::string error_text;

const char *failed(const std::exception &exc) {
    error_text = std::string("error: ") + exc.what();
    return error_text.c_str();
}

}  // namespace

// window_deviation for ovpool's AvgPool (max_pool 0) or MaxPool (1) with
// these attributes (n entries per list) over data of `rank` dims: the
// verdict's key, "" for none, or "error: <message>".
extern "C" OPENVINO_CORE_EXPORTS const char *ovpool_openvino_window_deviation(
    int max_pool, int n, const int64_t *kernel, const int64_t *strides, const int64_t *dilations,
    const int64_t *pads_begin, const int64_t *pads_end, const char *rounding_type,
    const char *auto_pad, int exclude_pad, int rank, const int64_t *dims_min,
    const int64_t *dims_max) {
    using namespace ovpool_openvino;
    try {
        Attrs w = attrs_of(max_pool ? OpId::MaxPool : OpId::AvgPool);
        const size_t count = static_cast<size_t>(n);
        w.at("kernel").ints.assign(kernel, kernel + count);
        w.at("strides").ints.assign(strides, strides + count);
        w.at("dilations").ints.assign(dilations, dilations + count);
        w.at("pads_begin").ints.assign(pads_begin, pads_begin + count);
        w.at("pads_end").ints.assign(pads_end, pads_end + count);
        w.at("rounding_type").s = rounding_type;
        w.at("auto_pad").s = auto_pad;
        if (!max_pool)
            w.at("exclude-pad").b = exclude_pad != 0;
        const char *key = window_deviation(w, shape_of(rank, dims_min, dims_max));
        return key ? key : "";
    } catch (const std::exception &exc) {
        return failed(exc);
    }
}

// adaptive_verdict for an AdaptiveAvgPool (max_pool 0) or AdaptiveMaxPool
// (1) whose output size has n_sizes entries (< 0: known at run time only):
// the verdict's key, or "error: <message>".
extern "C" OPENVINO_CORE_EXPORTS const char *ovpool_openvino_adaptive_verdict(
    int max_pool, int n_sizes, const int64_t *sizes, int rank, const int64_t *dims_min,
    const int64_t *dims_max) {
    using namespace ovpool_openvino;
    try {
        const std::vector<int64_t> values(sizes, sizes + (n_sizes > 0 ? n_sizes : 0));
        return adaptive_verdict(max_pool != 0, n_sizes < 0 ? nullptr : &values,
                                shape_of(rank, dims_min, dims_max));
    } catch (const std::exception &exc) {
        return failed(exc);
    }
}
