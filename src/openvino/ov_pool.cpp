// AvgPool and MaxPool (opset ovpool): AvgPool-16's and MaxPool-14's
// attributes with OpenVINO's specification, where the CPU plugin deviates
// from it (ovpool.ov_ops):
//
// * AvgPool counting pads with ceil rounding: an edge window is divided by
//   its taps inside input + declared pads (PyTorch, ONNX Runtime), not by the
//   full kernel; OpenVINO counts pads only when some pad is non-zero.
// * same_upper / same_lower give ceil(n / s) outputs whatever the rounding.
// * MaxPool's indices run threaded (the CPU plugin falls back to its
//   single-threaded reference for them).
#include "geometry.hpp"
#include "ops.hpp"

namespace ovpool_openvino {
namespace {

// The window attributes as the core's lowering takes them (the strings
// parsed: a bad spelling throws the lowering's error).
ovpool::PoolAttrs lowering_attrs(const OvWindowAttrs &w, ovpool::Family family) {
    ovpool::PoolAttrs a;
    a.semantics = ovpool::Semantics::openvino;
    a.family = family;
    a.kernel = w.kernel;
    a.strides = w.strides;
    a.dilations = w.dilations;
    a.pads_begin = w.pads_begin;
    a.pads_end = w.pads_end;
    a.auto_pad = ovpool::parse_auto_pad(w.auto_pad);
    a.rounding = ovpool::parse_rounding(w.rounding_type);
    return a;
}

void visit_window(ov::AttributeVisitor &visitor, OvWindowAttrs &w) {
    visitor.on_attribute("kernel", w.kernel);
    visitor.on_attribute("strides", w.strides);
    visitor.on_attribute("pads_begin", w.pads_begin);
    visitor.on_attribute("pads_end", w.pads_end);
}

}  // namespace

void OvWindowAttrs::materialize() {
    const size_t n = kernel.size();
    fill_empty(strides, n, 1);
    fill_empty(pads_begin, n, 0);
    fill_empty(pads_end, n, 0);
    fill_empty(dilations, n, 1);
}

// --- AvgPool ---------------------------------------------------------------

AvgPool::AvgPool(const ov::OutputVector &args, OvWindowAttrs window, bool exclude_pad)
    : PoolOp(args), m_window(std::move(window)), m_exclude_pad(exclude_pad) {
    m_window.materialize();
    constructor_validate_and_infer_types();
}

bool AvgPool::visit_attributes(ov::AttributeVisitor &visitor) {
    m_window.materialize();
    visit_window(visitor, m_window);
    visitor.on_attribute("exclude-pad", m_exclude_pad);
    visitor.on_attribute("rounding_type", m_window.rounding_type);
    visitor.on_attribute("auto_pad", m_window.auto_pad);
    visitor.on_attribute("dilations", m_window.dilations);
    m_window.materialize();
    return true;
}

ovpool::PoolAttrs AvgPool::attrs() const {
    ovpool::PoolAttrs a = lowering_attrs(m_window, ovpool::Family::average);
    a.count_pads = !m_exclude_pad;
    return a;
}

void AvgPool::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 1, "takes 1 input, got ", get_input_size());
    require_type(this, get_input_element_type(0), false, "data");
    infer_pool([this] { return attrs(); }, m_window.kernel.size());
}

std::shared_ptr<ov::Node> AvgPool::clone_with_new_inputs(const ov::OutputVector &args) const {
    return std::make_shared<AvgPool>(args, m_window, m_exclude_pad);
}

bool AvgPool::has_evaluate() const {
    const auto t = get_input_element_type(0);
    return t.is_dynamic() || is_float_type(t);
}

bool AvgPool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    return evaluate_pool([this] { return attrs(); }, outputs, inputs);
}

// --- MaxPool ---------------------------------------------------------------

MaxPool::MaxPool(const ov::OutputVector &args, OvWindowAttrs window,
                 ov::element::Type index_element_type, int64_t axis)
    : PoolOp(args),
      m_window(std::move(window)),
      m_index_element_type(index_element_type),
      m_axis(axis) {
    m_window.materialize();
    constructor_validate_and_infer_types();
}

bool MaxPool::visit_attributes(ov::AttributeVisitor &visitor) {
    m_window.materialize();
    visit_window(visitor, m_window);
    visitor.on_attribute("rounding_type", m_window.rounding_type);
    visitor.on_attribute("auto_pad", m_window.auto_pad);
    visitor.on_attribute("dilations", m_window.dilations);
    visitor.on_attribute("index_element_type", m_index_element_type);
    visitor.on_attribute("axis", m_axis);
    m_window.materialize();
    return true;
}

ovpool::PoolAttrs MaxPool::attrs() const {
    ovpool::PoolAttrs a = lowering_attrs(m_window, ovpool::Family::argmax);
    a.axis = m_axis;
    a.index_type =
        m_index_element_type == ov::element::i32 ? ovpool::IndexType::i32 : ovpool::IndexType::i64;
    return a;
}

void MaxPool::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 1, "takes 1 input, got ", get_input_size());
    require_type(this, get_input_element_type(0), true, "data");
    NODE_VALIDATION_CHECK(
        this, m_index_element_type == ov::element::i32 || m_index_element_type == ov::element::i64,
        "ovpool writes i32/i64 indices, not ", m_index_element_type.get_type_name());
    infer_pool([this] { return attrs(); }, m_window.kernel.size(), m_index_element_type);
}

std::shared_ptr<ov::Node> MaxPool::clone_with_new_inputs(const ov::OutputVector &args) const {
    return std::make_shared<MaxPool>(args, m_window, m_index_element_type, m_axis);
}

bool MaxPool::has_evaluate() const {
    const auto t = get_input_element_type(0);
    return t.is_dynamic() || is_max_type(t);
}

bool MaxPool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    return evaluate_pool([this] { return attrs(); }, outputs, inputs);
}

}  // namespace ovpool_openvino
