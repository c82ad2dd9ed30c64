// ONNX frontend conversions with ONNX's semantics (ceil_mode drops a window
// that would start in the right padding, count_include_pad's divisor,
// storage_order, MaxUnpool; OpenVINO's own conversion maps ceil_mode to
// MaxPool-8's "ceil", ignores storage_order and has no MaxUnpool).
//
// A node's attributes are read by the schema of its ovpool op, each by its
// kind (onnx_attrs). Policy (native.hpp): with OVPOOL_OPENVINO_POLICY=all
// every pool node becomes the ovpool op of its ONNX semantics; by default
// MaxPool's values, AveragePool and the global average and max become native
// nodes with ONNX's semantics where native OpenVINO computes them right
// (they run in OpenVINO's blocked layout, with no reorder), and ovpool's ops
// do the rest (MaxPool's Indices, LpPool, GlobalLpPool, MaxUnpool, the
// averages native OpenVINO divides wrongly).
#include <cctype>

#include "conversions.hpp"
#include "node_helpers.hpp"
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

std::string string_attr(const Context &node, const std::string &name, const std::string &fallback) {
    const ov::Any value = node.get_attribute_as_any(name);
    if (!value.empty() && value.is<std::string>() && !value.as<std::string>().empty())
        return value.as<std::string>();
    return fallback;
}

// The node's attributes as ovpool's op `id` has them, each read by its kind
// (an attribute the node leaves out keeps the op's default).
Attrs onnx_attrs(const Context &node, OpId id) {
    Attrs attrs = attrs_of(id);
    const OpSchema &op = schema_of(id);
    for (size_t i = 0; i < op.n_attrs; i++) {
        const AttrSchema &a = op.attrs[i];
        AttrValue &v = attrs[i];
        switch (a.kind) {
            case AttrKind::ints:
                v.ints = ints_attr(node, a.name);
                break;
            case AttrKind::int_:
                v.i = int_attr(node, a.name, v.i);
                break;
            case AttrKind::bool_:
                v.b = flag_attr(node, a.name);
                break;
            case AttrKind::float_:
                v.f = number_attr(node, a.name, v.f);
                break;
            case AttrKind::str:
                v.s = string_attr(node, a.name, v.s);
                break;
            case AttrKind::etype:  // (no ONNX pool has one)
                break;
        }
    }
    return attrs;
}

// An ONNX window (OnnxAveragePool's, OnnxMaxPool's) as OpenVINO's AvgPool's
// or MaxPool's attributes: ceil_mode is ceil_torch, count_include_pad the
// opposite of exclude-pad.
Attrs ov_window(const Attrs &onnx, OpId id) {
    Attrs o = attrs_of(id);
    o.at("kernel").ints = onnx.at("kernel_shape").ints;
    o.at("strides").ints = onnx.at("strides").ints;
    o.at("dilations").ints = onnx.at("dilations").ints;
    const std::vector<int64_t> &pads = onnx.at("pads").ints;
    const size_t n = onnx.n_spatial();
    if (pads.size() == 2 * n) {
        o.at("pads_begin").ints.assign(pads.begin(), pads.begin() + static_cast<ptrdiff_t>(n));
        o.at("pads_end").ints.assign(pads.begin() + static_cast<ptrdiff_t>(n), pads.end());
    }
    std::string mode;
    for (char ch : onnx.at("auto_pad").s)
        mode += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    o.at("auto_pad").s = mode == "notset" || mode.empty() ? "explicit" : mode;
    o.at("rounding_type").s = onnx.at("ceil_mode").b ? "ceil_torch" : "floor";
    if (onnx.has("count_include_pad"))
        o.at("exclude-pad").b = !onnx.at("count_include_pad").b;
    return o;
}

bool native_runs(const Attrs &w, const ov::Output<ov::Node> &x) {
    return conversion_policy() == Policy::kDefault &&
           window_deviation(w, x.get_partial_shape()) == nullptr;
}

ov::OutputVector average_pool(const Context &node) {
    const auto x = node.get_input(0);
    const Attrs attrs = onnx_attrs(node, OpId::OnnxAveragePool);
    auto pool = make_op(OpId::OnnxAveragePool, {x}, attrs);  // validates
    const Attrs o = ov_window(attrs, OpId::AvgPool);
    if (!native_runs(o, x))
        return pool->outputs();
    return {native_avg_pool(x, o)};
}

ov::OutputVector max_pool(const Context &node) {
    const auto x = node.get_input(0);
    const Attrs attrs = onnx_attrs(node, OpId::OnnxMaxPool);
    auto pool = make_op(OpId::OnnxMaxPool, {x}, attrs);
    const Attrs o = ov_window(attrs, OpId::MaxPool);
    if (!native_runs(o, x))
        return pool->outputs();
    // the values natively; the indices, when the graph reads them, from
    // ovpool's op (native OpenVINO computes them single-threaded, ignoring
    // storage_order); unread, that op has no consumer and is dropped
    return {native_max_values(x, o), pool->output(1)};
}

ov::OutputVector lp_pool(const Context &node) {
    return make_op(OpId::LpPool, {node.get_input(0)}, onnx_attrs(node, OpId::LpPool))->outputs();
}

ov::OutputVector global_lp_pool(const Context &node) {
    return make_op(OpId::GlobalLpPool, {node.get_input(0)}, onnx_attrs(node, OpId::GlobalLpPool))
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
    return make_op(OpId::MaxUnpool, inputs, onnx_attrs(node, OpId::MaxUnpool))->outputs();
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
    return make_op(OpId::AdaptiveAvgPool, {x, ones_for(node, x)}, attrs_of(OpId::AdaptiveAvgPool))
        ->outputs();
}

ov::OutputVector global_max_pool(const Context &node) {
    const auto x = node.get_input(0);
    if (conversion_policy() == Policy::kDefault)
        return {native_global(x, true)};
    auto pool =
        make_op(OpId::AdaptiveMaxPool, {x, ones_for(node, x)}, attrs_of(OpId::AdaptiveMaxPool));
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
