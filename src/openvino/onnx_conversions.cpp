// ONNX frontend conversions with ONNX's semantics (ceil_mode drops a window
// that would start in the right padding, count_include_pad's divisor,
// storage_order, MaxUnpool; OpenVINO's own conversion maps ceil_mode to
// MaxPool-8's "ceil", ignores storage_order and has no MaxUnpool).
//
// Policy (native.hpp): with OVPOOL_OPENVINO_POLICY=all every pool node
// becomes the ovpool op of its ONNX semantics; by default MaxPool's values,
// AveragePool and the global average and max become native nodes with
// ONNX's semantics where native OpenVINO computes them right (they run in
// OpenVINO's blocked layout, with no reorder), and ovpool's ops do the rest
// (MaxPool's Indices, LpPool, GlobalLpPool, MaxUnpool, the averages native
// OpenVINO divides wrongly).
#include <cctype>

#include "conversions.hpp"
#include "geometry.hpp"
#include "openvino/frontend/node_context.hpp"
#include "openvino/frontend/onnx/extension/conversion.hpp"
#include "openvino/op/constant.hpp"
#include "native.hpp"
#include "ops.hpp"

namespace ovpool_openvino {
namespace {

using Context = ov::frontend::NodeContext;

// The node in messages: its name, or its op type when it has none (the
// frontend's report adds the node's output name around the message).
std::string node_text(const Context &node) {
    const std::string &name = node.get_name();
    return name.empty() ? "the unnamed " + node.get_op_type() + " node" : "'" + name + "'";
}

std::vector<int64_t> ints_attr(const Context &node, const std::string &name) {
    const ov::Any value = node.get_attribute_as_any(name);
    if (value.empty())
        return {};
    if (value.is<std::vector<int64_t>>())
        return value.as<std::vector<int64_t>>();
    if (value.is<int64_t>())
        return {value.as<int64_t>()};
    OPENVINO_THROW("ovpool: the ONNX attribute ", name, " of ", node_text(node),
                   " is not a list of ints");
}

int64_t int_attr(const Context &node, const std::string &name, int64_t fallback) {
    const ov::Any value = node.get_attribute_as_any(name);
    if (value.empty())
        return fallback;
    if (value.is<int64_t>())
        return value.as<int64_t>();
    if (value.is<float>())
        return static_cast<int64_t>(value.as<float>());
    OPENVINO_THROW("ovpool: the ONNX attribute ", name, " of ", node_text(node), " is not an int");
}

// An ONNX flag (ceil_mode, count_include_pad): 0 or 1, as ovpool.ops takes it.
bool flag_attr(const Context &node, const std::string &name) {
    const int64_t value = int_attr(node, name, 0);
    OPENVINO_ASSERT(value == 0 || value == 1, "ovpool: the ONNX attribute ", name, " of ",
                    node_text(node), " must be 0 or 1, got ", value);
    return value == 1;
}

double number_attr(const Context &node, const std::string &name, double fallback) {
    // LpPool-1 wrote p as a float, later versions as an int
    const ov::Any value = node.get_attribute_as_any(name);
    if (value.empty())
        return fallback;
    if (value.is<float>())
        return value.as<float>();
    if (value.is<double>())
        return value.as<double>();
    if (value.is<int64_t>())
        return static_cast<double>(value.as<int64_t>());
    OPENVINO_THROW("ovpool: the ONNX attribute ", name, " of ", node_text(node),
                   " is not a number");
}

OnnxWindowAttrs window_attrs(const Context &node) {
    OnnxWindowAttrs w;
    w.kernel_shape = ints_attr(node, "kernel_shape");
    w.strides = ints_attr(node, "strides");
    w.pads = ints_attr(node, "pads");
    w.dilations = ints_attr(node, "dilations");
    const ov::Any auto_pad = node.get_attribute_as_any("auto_pad");
    if (!auto_pad.empty() && auto_pad.is<std::string>() && !auto_pad.as<std::string>().empty())
        w.auto_pad = auto_pad.as<std::string>();
    w.ceil_mode = flag_attr(node, "ceil_mode");
    return w;
}

// ONNX's window as OpenVINO's attributes (ceil_mode is ceil_torch).
OvWindowAttrs ov_window(const OnnxWindowAttrs &w) {
    OvWindowAttrs o;
    o.kernel = w.kernel_shape;
    o.strides = w.strides;
    o.dilations = w.dilations;
    const size_t n = w.kernel_shape.size();
    if (w.pads.size() == 2 * n) {
        o.pads_begin.assign(w.pads.begin(), w.pads.begin() + static_cast<ptrdiff_t>(n));
        o.pads_end.assign(w.pads.begin() + static_cast<ptrdiff_t>(n), w.pads.end());
    }
    std::string mode;
    for (char ch : w.auto_pad)
        mode += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    o.auto_pad = mode == "notset" || mode.empty() ? "explicit" : mode;
    o.rounding_type = w.ceil_mode ? "ceil_torch" : "floor";
    return o;
}

ov::OutputVector average_pool(const Context &node) {
    const auto x = node.get_input(0);
    const OnnxWindowAttrs w = window_attrs(node);
    const bool include = flag_attr(node, "count_include_pad");
    auto pool = std::make_shared<OnnxAveragePool>(ov::OutputVector{x}, w, include);  // validates
    const OvWindowAttrs o = ov_window(w);
    if (conversion_policy() == Policy::kAll || !native_takes(o) ||
        native_avg_deviates(x.get_partial_shape(), o, !include) || native_shape_deviates(o))
        return pool->outputs();
    return {native_avg_pool(x, o, !include)};
}

ov::OutputVector max_pool(const Context &node) {
    const auto x = node.get_input(0);
    const OnnxWindowAttrs w = window_attrs(node);
    auto pool =
        std::make_shared<OnnxMaxPool>(ov::OutputVector{x}, w, int_attr(node, "storage_order", 0));
    const OvWindowAttrs o = ov_window(w);
    if (conversion_policy() == Policy::kAll || !native_takes(o) || native_shape_deviates(o))
        return pool->outputs();
    // the values natively; the indices, when the graph reads them, from
    // ovpool's op (native OpenVINO computes them single-threaded, ignoring
    // storage_order); unread, that op has no consumer and is dropped
    return {native_max_values(x, o), pool->output(1)};
}

ov::OutputVector lp_pool(const Context &node) {
    return std::make_shared<LpPool>(ov::OutputVector{node.get_input(0)}, window_attrs(node),
                                    number_attr(node, "p", 2.0))
        ->outputs();
}

ov::OutputVector global_lp_pool(const Context &node) {
    return std::make_shared<GlobalLpPool>(ov::OutputVector{node.get_input(0)},
                                          number_attr(node, "p", 2.0))
        ->outputs();
}

bool is_null(const ov::Output<ov::Node> &value) {
    // an optional input left out ("" in the node's inputs)
    return std::string(value.get_node()->get_type_info().name) == "NullNode";
}

ov::OutputVector max_unpool(const Context &node) {
    ov::OutputVector inputs{node.get_input(0), node.get_input(1)};
    if (node.get_input_size() > 2 && !is_null(node.get_input(2)))
        inputs.push_back(node.get_input(2));
    return std::make_shared<MaxUnpool>(inputs, ints_attr(node, "kernel_shape"),
                                       ints_attr(node, "strides"), ints_attr(node, "pads"),
                                       "default_shape")
        ->outputs();
}

// Global pools as adaptive pools to 1 along every spatial axis.
std::shared_ptr<ov::Node> ones_for(const Context &node, const ov::Output<ov::Node> &x) {
    const ov::PartialShape shape = x.get_partial_shape();
    OPENVINO_ASSERT(shape.rank().is_static() && shape.size() >= 3, "ovpool: ", node.get_op_type(),
                    " needs an input of known rank 3 to 5, got ", shape_text(shape));
    return ov::op::v0::Constant::create(ov::element::i64, ov::Shape{shape.size() - 2},
                                        std::vector<int64_t>(shape.size() - 2, 1));
}

ov::OutputVector global_average_pool(const Context &node) {
    const auto x = node.get_input(0);
    if (conversion_policy() == Policy::kDefault)
        return {native_global(x, false)};  // a mean: exact natively, and vectorised
    return std::make_shared<AdaptiveAvgPool>(ov::OutputVector{x, ones_for(node, x)})->outputs();
}

ov::OutputVector global_max_pool(const Context &node) {
    const auto x = node.get_input(0);
    if (conversion_policy() == Policy::kDefault)
        return {native_global(x, true)};
    auto pool =
        std::make_shared<AdaptiveMaxPool>(ov::OutputVector{x, ones_for(node, x)}, ov::element::i64);
    return {pool->output(0)};
}

}  // namespace

std::vector<ov::Extension::Ptr> onnx_extensions() {
    using ov::frontend::onnx::ConversionExtension;
    return {
        std::make_shared<ConversionExtension>("AveragePool", average_pool),
        std::make_shared<ConversionExtension>("MaxPool", max_pool),
        std::make_shared<ConversionExtension>("LpPool", lp_pool),
        std::make_shared<ConversionExtension>("GlobalLpPool", global_lp_pool),
        std::make_shared<ConversionExtension>("MaxUnpool", max_unpool),
        std::make_shared<ConversionExtension>("GlobalAveragePool", global_average_pool),
        std::make_shared<ConversionExtension>("GlobalMaxPool", global_max_pool),
    };
}

}  // namespace ovpool_openvino
