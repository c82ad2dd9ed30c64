// AdaptiveAvgPool and AdaptiveMaxPool (opset ovpool): OpenVINO's
// AdaptiveAvgPool-8 / AdaptiveMaxPool-8 with the bins computed in integers
// (the CPU plugin's float32 borders move once In * Out > 2^24), NaN
// propagated by the max (the CPU plugin ignores a NaN unless it comes first)
// and int64 indices (which the CPU plugin cannot compile).
#include "geometry.hpp"
#include "ops.hpp"

namespace ovpool_openvino {
namespace {

// The output_size input's element type and shape checked; its entries (the
// spatial rank), 0 when unknown.
size_t output_size_entries(const ov::Node *node) {
    const ov::element::Type size_type = node->get_input_element_type(1);
    NODE_VALIDATION_CHECK(
        node,
        size_type.is_dynamic() || size_type == ov::element::i32 || size_type == ov::element::i64,
        "output_size must be i32 or i64, got ", size_type.get_type_name());
    const ov::PartialShape size_shape = node->get_input_partial_shape(1);
    if (size_shape.rank().is_dynamic())
        return 0;
    NODE_VALIDATION_CHECK(node, size_shape.size() == 1, "output_size must be 1-D, got shape ",
                          shape_text(size_shape));
    if (size_shape[0].is_dynamic())
        return 0;
    NODE_VALIDATION_CHECK(node, size_shape[0].get_length() >= 1 && size_shape[0].get_length() <= 3,
                          "output_size must have 1 to 3 entries, got shape ",
                          shape_text(size_shape));
    return static_cast<size_t>(size_shape[0].get_length());
}

ovpool::PoolAttrs adaptive_attrs(ovpool::Family family, std::vector<int64_t> output_size,
                                 const ov::element::Type &index_type) {
    ovpool::PoolAttrs a;
    a.semantics = ovpool::Semantics::openvino;
    a.family = family;
    a.adaptive = true;
    a.output_size = std::move(output_size);
    a.index_type = index_type == ov::element::i32 ? ovpool::IndexType::i32 : ovpool::IndexType::i64;
    return a;
}

// Shape inference of an adaptive pool: lowered when output_size is a small
// constant, else its spatial dims unknown.
void infer_adaptive(PoolOp *node, bool max_pool, const ov::element::Type &index_type,
                    const std::function<void(const ovpool::PoolAttrs &, size_t)> &infer) {
    require_type(node, node->get_input_element_type(0), max_pool, "data");
    const size_t n = output_size_entries(node);
    std::vector<int64_t> sizes;
    if (constant_ints(node->input_value(1), sizes)) {
        infer(adaptive_attrs(max_pool ? ovpool::Family::argmax : ovpool::Family::average, sizes,
                             index_type),
              n);
        return;
    }
    const ov::PartialShape data = node->get_input_partial_shape(0);
    const bool rank_known =
        split_nc(node, data, n, "output_size of " + std::to_string(n) + " entries");
    ov::PartialShape shape = ov::PartialShape::dynamic();
    if (rank_known || n > 0) {
        const size_t n_spatial = rank_known ? data.size() - 2 : n;
        std::vector<ov::Dimension> dims{rank_known ? data[0] : ov::Dimension::dynamic(),
                                        rank_known ? data[1] : ov::Dimension::dynamic()};
        dims.resize(2 + n_spatial, ov::Dimension::dynamic());
        shape = ov::PartialShape(dims);
    }
    set_checked_output(node, 0, node->get_input_element_type(0), shape);
    if (max_pool)
        set_checked_output(node, 1, index_type, shape);
}

// output_size at run time: one entry per spatial dim of the data
std::vector<int64_t> output_size_values(const ov::Node *node, const ov::TensorVector &inputs) {
    const ov::Shape data = inputs[0].get_shape();
    OPENVINO_ASSERT(data.size() >= 3 && inputs[1].get_size() == data.size() - 2, "ovpool ",
                    node->get_type_info().name, ": output_size of shape ", inputs[1].get_shape(),
                    " does not fit data of shape ", data);
    return tensor_ints(inputs[1]);
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
    infer_adaptive(this, false, ov::element::dynamic, [this](const ovpool::PoolAttrs &a, size_t n) {
        infer_pool([&a] { return a; }, n);
    });
}

std::shared_ptr<ov::Node> AdaptiveAvgPool::clone_with_new_inputs(
    const ov::OutputVector &args) const {
    return std::make_shared<AdaptiveAvgPool>(args);
}

bool AdaptiveAvgPool::has_evaluate() const {
    return has_data_type(this, false);
}

bool AdaptiveAvgPool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    return evaluate_pool(
        [&] {
            return adaptive_attrs(ovpool::Family::average, output_size_values(this, inputs),
                                  ov::element::i64);
        },
        outputs, inputs);
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
    infer_adaptive(this, true, m_index_element_type, [this](const ovpool::PoolAttrs &a, size_t n) {
        infer_pool([&a] { return a; }, n, m_index_element_type);
    });
}

std::shared_ptr<ov::Node> AdaptiveMaxPool::clone_with_new_inputs(
    const ov::OutputVector &args) const {
    return std::make_shared<AdaptiveMaxPool>(args, m_index_element_type);
}

bool AdaptiveMaxPool::has_evaluate() const {
    return has_data_type(this, true);
}

bool AdaptiveMaxPool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    return evaluate_pool(
        [&] {
            return adaptive_attrs(ovpool::Family::argmax, output_size_values(this, inputs),
                                  m_index_element_type);
        },
        outputs, inputs);
}

}  // namespace ovpool_openvino
