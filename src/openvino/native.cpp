// native.hpp: the conversions' policy and their native nodes.
#include "native.hpp"

#include <cstdlib>
#include <string>

#include "geometry.hpp"
#include "openvino/op/avg_pool.hpp"
#include "openvino/op/constant.hpp"
#include "openvino/op/max_pool.hpp"
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
T unsigned_of(const std::vector<int64_t> &values) {
    return T(values.begin(), values.end());
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

ov::Output<ov::Node> native_max_values(const ov::Output<ov::Node> &x, const OvWindowAttrs &w) {
    OvWindowAttrs a = w;
    a.materialize();
    return std::make_shared<ov::op::v14::MaxPool>(
               x, unsigned_of<ov::Strides>(a.strides), unsigned_of<ov::Strides>(a.dilations),
               unsigned_of<ov::Shape>(a.pads_begin), unsigned_of<ov::Shape>(a.pads_end),
               unsigned_of<ov::Shape>(a.kernel), rounding_type(a.rounding_type),
               pad_type(a.auto_pad))
        ->output(0);
}

ov::Output<ov::Node> native_avg_pool(const ov::Output<ov::Node> &x, const OvWindowAttrs &w,
                                     bool exclude_pad) {
    OvWindowAttrs a = w;
    a.materialize();
    return std::make_shared<ov::op::v16::AvgPool>(
               x, unsigned_of<ov::Strides>(a.strides), unsigned_of<ov::Strides>(a.dilations),
               unsigned_of<ov::Shape>(a.pads_begin), unsigned_of<ov::Shape>(a.pads_end),
               unsigned_of<ov::Shape>(a.kernel), exclude_pad, rounding_type(a.rounding_type),
               pad_type(a.auto_pad))
        ->output(0);
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

bool native_shape_deviates(const OvWindowAttrs &w) {
    return (w.auto_pad == "same_upper" || w.auto_pad == "same_lower") && w.rounding_type != "floor";
}

bool native_takes(const OvWindowAttrs &w) {
    for (const auto *values : {&w.kernel, &w.strides, &w.dilations, &w.pads_begin, &w.pads_end})
        for (int64_t v : *values)
            if (v > ovpool::limits::kNativeLargestWindow)
                return false;
    return true;
}

bool native_avg_deviates(const ov::PartialShape &data, const OvWindowAttrs &w, bool exclude_pad) {
    if (exclude_pad || w.rounding_type == "floor" || w.auto_pad != "explicit")
        return false;
    OvWindowAttrs a = w;
    a.materialize();
    bool any_pad = false;
    for (size_t i = 0; i < a.kernel.size(); i++)
        any_pad = any_pad || a.pads_begin[i] > 0 || a.pads_end[i] > 0;
    if (!any_pad)
        return false;  // OpenVINO counts pads only when some pad is non-zero
    if (data.rank().is_dynamic() || data.size() != a.kernel.size() + 2)
        return true;
    for (size_t i = 0; i < a.kernel.size(); i++) {
        if (data[2 + i].is_dynamic())
            return true;
        const int64_t n_in = data[2 + i].get_length();
        const ovpool::AxisSize size = ovpool::axis_output_size(
            n_in, a.kernel[i], a.strides[i], a.dilations[i], a.pads_begin[i], a.pads_end[i],
            ovpool::AutoPad::explicit_pads,
            a.rounding_type == "ceil" ? ovpool::Rounding::ceil : ovpool::Rounding::ceil_torch);
        const int64_t ek = (a.kernel[i] - 1) * a.dilations[i] + 1;
        if (size.n_out >= 1 &&
            (size.n_out - 1) * a.strides[i] + ek > n_in + a.pads_begin[i] + a.pads_end[i])
            return true;
    }
    return false;
}

}  // namespace ovpool_openvino
