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
#include "geometry.hpp"
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

ov::OutputVector max_pool(size_t n, bool with_indices, const Context &ctx) {
    OvWindowAttrs w;
    w.kernel = ints_input(ctx, 1, n, {}, "kernel_size");
    OPENVINO_ASSERT(!w.kernel.empty(), "ovpool: ", ctx.get_op_type(), " needs a kernel_size");
    w.strides = ints_input(ctx, 2, n, w.kernel, "stride");
    w.pads_begin = ints_input(ctx, 3, n, std::vector<int64_t>(n, 0), "padding");
    w.pads_end = w.pads_begin;
    w.dilations = ints_input(ctx, 4, n, std::vector<int64_t>(n, 1), "dilation");
    w.rounding_type = flag_input(ctx, 5, false) ? "ceil_torch" : "floor";
    bool unbatched = false;
    const auto x = batched(ctx.get_input(0), n, unbatched);
    auto pool = std::make_shared<MaxPool>(ov::OutputVector{x}, w, ov::element::i64, 2);
    ov::OutputVector outputs = pool->outputs();
    if (conversion_policy() == Policy::kDefault && native_takes(w) && !native_shape_deviates(w))
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
    OvWindowAttrs w;
    w.kernel = ints_input(ctx, 1, n, {}, "kernel_size");
    OPENVINO_ASSERT(!w.kernel.empty(), "ovpool: ", ctx.get_op_type(), " needs a kernel_size");
    w.strides = ints_input(ctx, 2, n, w.kernel, "stride");
    w.pads_begin = ints_input(ctx, 3, n, std::vector<int64_t>(n, 0), "padding");
    w.pads_end = w.pads_begin;
    w.dilations = std::vector<int64_t>(n, 1);
    w.rounding_type = flag_input(ctx, 4, false) ? "ceil_torch" : "floor";
    const bool count_include_pad = flag_input(ctx, 5, true);
    bool unbatched = false;
    const auto x = batched(ctx.get_input(0), n, unbatched);
    auto pool = std::make_shared<AvgPool>(ov::OutputVector{x}, w, !count_include_pad);
    if (conversion_policy() == Policy::kDefault && native_takes(w) &&
        !native_avg_deviates(x.get_partial_shape(), w, !count_include_pad))
        return unbatch({native_avg_pool(x, w, !count_include_pad)}, unbatched);
    return unbatch(pool->outputs(), unbatched);
}

ov::OutputVector adaptive_pool(size_t n, bool max_pool, const Context &ctx) {
    bool unbatched = false;
    const auto x = batched(ctx.get_input(0), n, unbatched);
    const auto size = ctx.get_input(1);
    std::vector<int64_t> sizes;
    if (!max_pool && conversion_policy() == Policy::kDefault) {
        // a list of constants reaches the converter unfolded: read its values
        try {
            sizes = ints_input(ctx, 1, n, {}, "output_size");
        } catch (const std::exception &) {
            sizes.clear();  // not a constant: the bins come from ovpool's op
        }
    }
    if (!sizes.empty() && std::all_of(sizes.begin(), sizes.end(), [](int64_t s) { return s == 1; }))
        return unbatch({native_global(x, false)}, unbatched);  // a mean: exact natively
    if (max_pool)
        return unbatch(
            std::make_shared<AdaptiveMaxPool>(ov::OutputVector{x, size}, ov::element::i64)
                ->outputs(),
            unbatched);
    return unbatch(std::make_shared<AdaptiveAvgPool>(ov::OutputVector{x, size})->outputs(),
                   unbatched);
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
