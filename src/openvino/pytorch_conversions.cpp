// PyTorch frontend conversions (TorchScript, ov.convert_model(module,
// example_input=..., extension=<this library>)): aten's pools become ovpool
// ops that match PyTorch: ceil_mode is OpenVINO's ceil_torch,
// count_include_pad divides by the taps inside input + declared pads (the
// native conversion divides overhanging windows by the full kernel), max
// indices per (n, c) plane, NaN propagated, unbatched inputs (C, *spatial).
//
// Policy (native.hpp): with OVPOOL_OPENVINO_POLICY=all every aten pool
// becomes an ovpool op; by default max values, averages native OpenVINO
// divides right and global adaptive averages become native nodes (they run
// in OpenVINO's blocked layout, with no reorder), and ovpool's ops take max
// indices, adaptive bins, adaptive max and the averages native OpenVINO
// divides wrongly.
#include <algorithm>
#include <functional>

#include "conversions.hpp"
#include "node_helpers.hpp"
#include "openvino/frontend/node_context.hpp"
#include "openvino/frontend/pytorch/extension/conversion.hpp"
#include "openvino/frontend/sequence_mark.hpp"
#include "openvino/op/constant.hpp"
#include "openvino/op/squeeze.hpp"
#include "openvino/op/unsqueeze.hpp"
#include "native.hpp"
#include "ops.hpp"

namespace ovpool_openvino {
namespace {

using Context = ov::frontend::NodeContext;

// Whether input `index` is left out: absent, None, or an empty list (the
// stride of F.avg_pool2d(x, 2) reaches TorchScript as an empty
// prim::ListConstruct, which the frontend cannot fold into a constant).
bool input_absent(const Context &ctx, size_t index) {
    if (index >= ctx.get_input_size() || ctx.input_is_none(index))
        return true;
    const auto node = ctx.get_input(static_cast<int>(index)).get_node_shared_ptr();
    const std::string type = node->get_type_info().name;
    return node->get_input_size() == 0 && (type == "SequenceMark" || type == "FrameworkNode");
}

// A constant input as ints (left out, or an empty list: `fallback`; one
// value: repeated for every axis).
std::vector<int64_t> ints_input(const Context &ctx, size_t index, size_t n,
                                std::vector<int64_t> fallback, const std::string &name) {
    if (input_absent(ctx, index))
        return fallback;
    ov::Any value;
    try {
        value = ctx.get_values_from_const_input(static_cast<int>(index));
    } catch (const std::exception &) {
        OPENVINO_THROW("ovpool: ", ctx.get_op_type(), " needs a constant ", name);
    }
    std::vector<int64_t> out;
    if (value.empty())
        return fallback;
    if (value.is<std::vector<int64_t>>()) {
        out = value.as<std::vector<int64_t>>();
    } else if (value.is<std::vector<int32_t>>()) {
        for (int32_t v : value.as<std::vector<int32_t>>())
            out.push_back(v);
    } else if (value.is<int64_t>()) {
        out = {value.as<int64_t>()};
    } else if (value.is<int32_t>()) {
        out = {value.as<int32_t>()};
    } else {
        OPENVINO_THROW("ovpool: ", ctx.get_op_type(), " needs a constant ", name);
    }
    if (out.empty())
        return fallback;
    if (out.size() == 1)
        out.assign(n, out[0]);
    OPENVINO_ASSERT(out.size() == n, "ovpool: ", name, "=", ints_text(out), " does not have ", n,
                    " entries");
    return out;
}

bool flag_input(const Context &ctx, size_t index, bool fallback) {
    if (input_absent(ctx, index))
        return fallback;
    const ov::Any value = ctx.get_values_from_const_input(static_cast<int>(index));
    if (value.empty())
        return fallback;
    if (value.is<bool>())
        return value.as<bool>();
    if (value.is<int64_t>())
        return value.as<int64_t>() != 0;
    if (value.is<int32_t>())
        return value.as<int32_t>() != 0;
    return fallback;
}

// torch's unbatched inputs (C, *spatial): N = 1 added, and removed after.
ov::Output<ov::Node> batched(const ov::Output<ov::Node> &x, size_t n, bool &unbatched) {
    const ov::PartialShape shape = x.get_partial_shape();
    unbatched = shape.rank().is_static() && shape.size() == n + 1;
    if (!unbatched)
        return x;
    auto axis = ov::op::v0::Constant::create(ov::element::i64, ov::Shape{1}, {0});
    return std::make_shared<ov::op::v0::Unsqueeze>(x, axis)->output(0);
}

ov::OutputVector unbatch(const ov::OutputVector &outputs, bool unbatched) {
    if (!unbatched)
        return outputs;
    ov::OutputVector out;
    for (const auto &o : outputs) {
        auto axis = ov::op::v0::Constant::create(ov::element::i64, ov::Shape{1}, {0});
        out.push_back(std::make_shared<ov::op::v0::Squeeze>(o, axis)->output(0));
    }
    return out;
}

// torch's window arguments (kernel_size, stride, padding, then dilation for
// a max pool) from input 1 on, as ovpool's AvgPool's or MaxPool's attributes.
Attrs window_inputs(const Context &ctx, size_t n, OpId id) {
    Attrs w = attrs_of(id);
    std::vector<int64_t> &kernel = w.at("kernel").ints;
    kernel = ints_input(ctx, 1, n, {}, "kernel_size");
    OPENVINO_ASSERT(!kernel.empty(), "ovpool: ", ctx.get_op_type(), " needs a kernel_size");
    w.at("strides").ints = ints_input(ctx, 2, n, kernel, "stride");
    w.at("pads_begin").ints = ints_input(ctx, 3, n, std::vector<int64_t>(n, 0), "padding");
    w.at("pads_end").ints = w.at("pads_begin").ints;
    w.at("dilations").ints = id == OpId::MaxPool
                                 ? ints_input(ctx, 4, n, std::vector<int64_t>(n, 1), "dilation")
                                 : std::vector<int64_t>(n, 1);
    return w;
}

ov::OutputVector max_pool(size_t n, bool with_indices, const Context &ctx) {
    Attrs w = window_inputs(ctx, n, OpId::MaxPool);
    w.at("rounding_type").s = flag_input(ctx, 5, false) ? "ceil_torch" : "floor";
    w.at("axis").i = 2;  // indices per (n, c) plane
    bool unbatched = false;
    const auto x = batched(ctx.get_input(0), n, unbatched);
    auto pool = make_op(OpId::MaxPool, {x}, w);
    ov::OutputVector outputs = pool->outputs();
    if (conversion_policy() == Policy::kDefault &&
        window_deviation(w, x.get_partial_shape()) == nullptr)
        outputs[0] = native_max_values(x, w);  // the indices, if read, from ovpool's op
    if (!with_indices)
        outputs.resize(1);
    return unbatch(outputs, unbatched);
}

ov::OutputVector avg_pool(size_t n, const Context &ctx) {
    if (!input_absent(ctx, 6) && !ctx.get_values_from_const_input(6).empty())
        OPENVINO_THROW(
            "ovpool: avg_pool with divisor_override is not supported (OpenVINO has no such "
            "attribute); convert this module without ovpool's extensions");
    Attrs w = window_inputs(ctx, n, OpId::AvgPool);
    w.at("rounding_type").s = flag_input(ctx, 4, false) ? "ceil_torch" : "floor";
    w.at("exclude-pad").b = !flag_input(ctx, 5, true);  // count_include_pad
    bool unbatched = false;
    const auto x = batched(ctx.get_input(0), n, unbatched);
    auto pool = make_op(OpId::AvgPool, {x}, w);
    if (conversion_policy() == Policy::kDefault &&
        window_deviation(w, x.get_partial_shape()) == nullptr)
        return unbatch({native_avg_pool(x, w)}, unbatched);
    return unbatch(pool->outputs(), unbatched);
}

ov::OutputVector adaptive_pool(size_t n, bool max_pool, const Context &ctx) {
    bool unbatched = false;
    const auto x = batched(ctx.get_input(0), n, unbatched);
    const auto size = ctx.get_input(1);
    std::vector<int64_t> sizes;
    bool known = false;
    if (!max_pool && conversion_policy() == Policy::kDefault) {
        // a list of constants reaches the converter unfolded: read its values
        try {
            sizes = ints_input(ctx, 1, n, {}, "output_size");
            known = !sizes.empty();
        } catch (const std::exception &) {
            known = false;  // not a constant: the bins come from ovpool's op
        }
        if (adaptive_verdict(false, known ? &sizes : nullptr, x.get_partial_shape()) ==
            verdict::kGlobalAverage)
            return unbatch({native_global(x, false)}, unbatched);  // a mean: exact natively
    }
    const OpId id = max_pool ? OpId::AdaptiveMaxPool : OpId::AdaptiveAvgPool;
    return unbatch(make_op(id, {x, size}, attrs_of(id))->outputs(), unbatched);
}

// torch.export's graphs (FX) hand an op of several results to its users as
// one value that getitem nodes take apart: a sequence of the outputs, as the
// frontend's own translators return it.
ov::OutputVector as_sequence(const ov::OutputVector &outputs) {
    return {std::make_shared<ov::frontend::SequenceMark>(outputs)->output(0)};
}

}  // namespace

std::vector<ov::Extension::Ptr> pytorch_extensions() {
    using ov::frontend::pytorch::ConversionExtension;
    std::vector<ov::Extension::Ptr> result;
    const auto add = [&result](const std::string &name,
                               std::function<ov::OutputVector(const Context &)> convert) {
        result.push_back(std::make_shared<ConversionExtension>(name, convert));
    };
    for (size_t n = 1; n <= 3; n++) {
        const std::string d = std::to_string(n) + "d";
        const auto max_values = [n](const Context &ctx) { return max_pool(n, false, ctx); };
        const auto max_indices = [n](const Context &ctx) { return max_pool(n, true, ctx); };
        const auto avg = [n](const Context &ctx) { return avg_pool(n, ctx); };
        const auto adaptive_avg = [n](const Context &ctx) { return adaptive_pool(n, false, ctx); };
        const auto adaptive_max = [n](const Context &ctx) { return adaptive_pool(n, true, ctx); };
        // TorchScript (torch.jit.trace / script, ov.convert_model(module))
        add("aten::max_pool" + d, max_values);
        add("aten::max_pool" + d + "_with_indices", max_indices);
        add("aten::avg_pool" + d, avg);
        add("aten::adaptive_avg_pool" + d, adaptive_avg);
        add("aten::adaptive_max_pool" + d, adaptive_max);
        // torch.export (ov.convert_model(ExportedProgram)): the FX names, before
        // and after ATen's decompositions
        add("aten.max_pool" + d + ".default", max_values);
        add("aten.max_pool" + d + "_with_indices.default",
            [max_indices](const Context &ctx) { return as_sequence(max_indices(ctx)); });
        add("aten.avg_pool" + d + ".default", avg);
        add("aten.adaptive_avg_pool" + d + ".default", adaptive_avg);
        add("aten._adaptive_avg_pool" + d + ".default", adaptive_avg);
        add("aten.adaptive_max_pool" + d + ".default",
            [adaptive_max](const Context &ctx) { return as_sequence(adaptive_max(ctx)); });
    }
    return result;
}

}  // namespace ovpool_openvino
