// AdaptiveAvgPool and AdaptiveMaxPool (opset ovpool): OpenVINO's
// AdaptiveAvgPool-8 / AdaptiveMaxPool-8 with the bins computed in integers
// (the CPU plugin's float32 borders move once In * Out > 2^24), NaN
// propagated by the max (the CPU plugin ignores a NaN unless it comes first)
// and int64 indices (which the CPU plugin cannot compile).
#include "geometry.hpp"
#include "ops.hpp"

namespace ovpool_openvino {
namespace {

// Output shape of an adaptive pool; `spatial` gets the output size when the
// output_size input is known.
ov::PartialShape adaptive_shape(const ov::Node *node, bool max_pool) {
    const ov::PartialShape data = node->get_input_partial_shape(0);
    require_type(node, node->get_input_element_type(0), max_pool, "data");
    const ov::element::Type size_type = node->get_input_element_type(1);
    NODE_VALIDATION_CHECK(
        node,
        size_type.is_dynamic() || size_type == ov::element::i32 || size_type == ov::element::i64,
        "output_size must be i32 or i64, got ", size_type.get_type_name());
    const ov::PartialShape size_shape = node->get_input_partial_shape(1);
    size_t n_spatial = 0;
    if (size_shape.rank().is_static()) {
        NODE_VALIDATION_CHECK(node, size_shape.size() == 1, "output_size must be 1-D, got shape ",
                              shape_text(size_shape));
        if (size_shape[0].is_static()) {
            NODE_VALIDATION_CHECK(node, size_shape[0].get_length() <= 3,
                                  "output_size must have 1 to 3 entries, got shape ",
                                  shape_text(size_shape));
            n_spatial = static_cast<size_t>(size_shape[0].get_length());
        }
    }
    const bool rank_known =
        split_nc(node, data, n_spatial, "output_size of shape " + shape_text(size_shape));
    if (!rank_known && n_spatial == 0)
        return ov::PartialShape::dynamic();
    if (rank_known)
        n_spatial = data.size() - 2;
    std::vector<ov::Dimension> dims{rank_known ? data[0] : ov::Dimension::dynamic(),
                                    rank_known ? data[1] : ov::Dimension::dynamic()};
    std::vector<int64_t> sizes;
    if (constant_ints(node->input_value(1), sizes)) {
        NODE_VALIDATION_CHECK(node, sizes.size() == n_spatial, "output_size must have ", n_spatial,
                              " entries for ", n_spatial, " spatial dims, got ", sizes.size(), ": ",
                              ints_text(sizes));
        for (int64_t s : sizes) {
            NODE_VALIDATION_CHECK(node, s >= 1, "output_size must be >= 1, got ", ints_text(sizes));
            NODE_VALIDATION_CHECK(node, s <= kMaxElements, "output_size ", ints_text(sizes),
                                  " is absurdly large");
            dims.emplace_back(s);
        }
    } else {
        dims.resize(2 + n_spatial, ov::Dimension::dynamic());
    }
    return ov::PartialShape(dims);
}

// The spec and output shape of an adaptive pool on concrete inputs.
Spec adaptive_spec(const ov::Node *node, int32_t family, const ov::TensorVector &inputs,
                   ov::Shape &out_shape) {
    const ov::Shape data = inputs[0].get_shape();
    split_nc(node, ov::PartialShape(data), 0, "");
    OPENVINO_ASSERT(inputs[1].get_size() == data.size() - 2, "ovpool ", node->get_type_info().name,
                    ": output_size of shape ", inputs[1].get_shape(),
                    " does not fit data of shape ", data);
    const std::vector<int64_t> sizes = tensor_ints(inputs[1]);
    Spec spec = base_spec(family, inputs[0].get_element_type(), data);
    out_shape = ov::Shape{data[0], data[1]};
    for (int a = 0; a < spec.n_spatial; a++) {
        const int64_t n_in = static_cast<int64_t>(data[2 + a]);
        OPENVINO_ASSERT(sizes[a] >= 1 && sizes[a] <= kMaxElements, "ovpool ",
                        node->get_type_info().name, ": output_size must be 1 to 2^40, got ",
                        ints_text(sizes));
        OPENVINO_ASSERT(n_in >= 1, "ovpool ", node->get_type_info().name,
                        ": every spatial dim of the data must be non-empty, got shape ", data);
        spec.axes[a].adaptive = true;
        spec.axes[a].n_in = n_in;
        spec.axes[a].n_out = sizes[a];
        out_shape.push_back(static_cast<size_t>(sizes[a]));
    }
    return spec;
}

bool has_data_type(const ov::Node *node, bool max_pool) {
    const auto t = node->get_input_element_type(0);
    return t.is_dynamic() || (max_pool ? is_max_type(t) : is_float_type(t));
}

}  // namespace

// --- AdaptiveAvgPool -------------------------------------------------------

AdaptiveAvgPool::AdaptiveAvgPool(const ov::OutputVector &args) : PoolOp(args) {
    constructor_validate_and_infer_types();
}

bool AdaptiveAvgPool::visit_attributes(ov::AttributeVisitor &) {
    return true;
}

void AdaptiveAvgPool::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 2, "takes 2 inputs (data, output_size), got ",
                          get_input_size());
    set_checked_output(this, 0, get_input_element_type(0), adaptive_shape(this, false));
}

std::shared_ptr<ov::Node> AdaptiveAvgPool::clone_with_new_inputs(
    const ov::OutputVector &args) const {
    return std::make_shared<AdaptiveAvgPool>(args);
}

bool AdaptiveAvgPool::has_evaluate() const {
    return has_data_type(this, false);
}

bool AdaptiveAvgPool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    ov::Shape out_shape;
    const Spec spec = adaptive_spec(this, kAverage, inputs, out_shape);
    shape_output(outputs[0], out_shape, label());
    run(spec, inputs[0], outputs[0], nullptr);
    return true;
}

// --- AdaptiveMaxPool -------------------------------------------------------

AdaptiveMaxPool::AdaptiveMaxPool(const ov::OutputVector &args, ov::element::Type index_element_type)
    : PoolOp(args), m_index_element_type(index_element_type) {
    constructor_validate_and_infer_types();
}

bool AdaptiveMaxPool::visit_attributes(ov::AttributeVisitor &visitor) {
    visitor.on_attribute("index_element_type", m_index_element_type);
    return true;
}

void AdaptiveMaxPool::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 2, "takes 2 inputs (data, output_size), got ",
                          get_input_size());
    NODE_VALIDATION_CHECK(
        this, m_index_element_type == ov::element::i32 || m_index_element_type == ov::element::i64,
        "ovpool writes i32/i64 indices, not ", m_index_element_type.get_type_name());
    const ov::PartialShape shape = adaptive_shape(this, true);
    set_checked_output(this, 0, get_input_element_type(0), shape);
    set_checked_output(this, 1, m_index_element_type, shape);
}

std::shared_ptr<ov::Node> AdaptiveMaxPool::clone_with_new_inputs(
    const ov::OutputVector &args) const {
    return std::make_shared<AdaptiveMaxPool>(args, m_index_element_type);
}

bool AdaptiveMaxPool::has_evaluate() const {
    return has_data_type(this, true);
}

bool AdaptiveMaxPool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    const bool with_indices = outputs.size() > 1 && output_read(1);
    ov::Shape out_shape;
    Spec spec = adaptive_spec(this, with_indices ? kArgmax : kMax, inputs, out_shape);
    shape_output(outputs[0], out_shape, label());
    if (!with_indices) {
        run(spec, inputs[0], outputs[0], nullptr);
        return true;
    }
    shape_output(outputs[1], out_shape, label());
    // the element type OpenVINO allocated (the CPU plugin may narrow i64)
    const auto index_type = outputs[1].get_element_type();
    OPENVINO_ASSERT(index_type == ov::element::i32 || index_type == ov::element::i64,
                    "ovpool AdaptiveMaxPool: indices of type ", index_type.get_type_name());
    spec.index_i64 = index_type == ov::element::i64;
    spec.planes_per_index_space = 1;
    if (!spec.index_i64) {
        int64_t plane = 1;
        for (size_t a = 2; a < out_shape.size(); a++)
            plane *= static_cast<int64_t>(inputs[0].get_shape()[a]);
        OPENVINO_ASSERT(plane <= INT32_MAX, "ovpool AdaptiveMaxPool: indices up to ", plane - 1,
                        " do not fit in int32; use index_element_type=i64");
    }
    run(spec, inputs[0], outputs[0], &outputs[1]);
    return true;
}

}  // namespace ovpool_openvino
