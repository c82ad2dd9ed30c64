// OnnxAveragePool, OnnxMaxPool, LpPool and GlobalLpPool (opset ovpool): the
// ONNX operations with ONNX's semantics (ovpool.ops): ceil_mode drops a
// window that would start in the right padding (ONNX Runtime, PyTorch),
// count_include_pad divides by the taps inside input + declared pads, MaxPool
// indices are flat over the whole tensor (storage_order=1: column-major
// within each plane).
#include <cmath>

#include "geometry.hpp"
#include "ops.hpp"

namespace ovpool_openvino {
namespace {

// The window attributes as the core's lowering takes them (auto_pad parsed:
// a bad spelling throws the lowering's error).
ovpool::PoolAttrs lowering_attrs(const OnnxWindowAttrs &w, ovpool::Family family) {
    ovpool::PoolAttrs a;
    a.semantics = ovpool::Semantics::onnx;
    a.family = family;
    a.kernel = w.kernel_shape;
    a.strides = w.strides;
    a.dilations = w.dilations;
    a.pads = w.pads;
    a.auto_pad = ovpool::parse_auto_pad(w.auto_pad);
    a.rounding = w.ceil_mode ? ovpool::Rounding::ceil_torch : ovpool::Rounding::floor;
    return a;
}

void visit_window(ov::AttributeVisitor &visitor, OnnxWindowAttrs &w) {
    visitor.on_attribute("kernel_shape", w.kernel_shape);
    visitor.on_attribute("strides", w.strides);
    visitor.on_attribute("pads", w.pads);
    visitor.on_attribute("dilations", w.dilations);
    visitor.on_attribute("auto_pad", w.auto_pad);
    visitor.on_attribute("ceil_mode", w.ceil_mode);
}

bool float_data(const ov::Node *node) {
    const auto t = node->get_input_element_type(0);
    return t.is_dynamic() || is_float_type(t);
}

}  // namespace

void OnnxWindowAttrs::materialize() {
    const size_t n = kernel_shape.size();
    fill_empty(strides, n, 1);
    fill_empty(pads, 2 * n, 0);
    fill_empty(dilations, n, 1);
}

// --- OnnxAveragePool -------------------------------------------------------

OnnxAveragePool::OnnxAveragePool(const ov::OutputVector &args, OnnxWindowAttrs window,
                                 bool count_include_pad)
    : PoolOp(args), m_window(std::move(window)), m_count_include_pad(count_include_pad) {
    m_window.materialize();
    constructor_validate_and_infer_types();
}

bool OnnxAveragePool::visit_attributes(ov::AttributeVisitor &visitor) {
    m_window.materialize();
    visit_window(visitor, m_window);
    visitor.on_attribute("count_include_pad", m_count_include_pad);
    m_window.materialize();
    return true;
}

ovpool::PoolAttrs OnnxAveragePool::attrs() const {
    ovpool::PoolAttrs a = lowering_attrs(m_window, ovpool::Family::average);
    a.count_pads = m_count_include_pad;
    return a;
}

void OnnxAveragePool::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 1, "takes 1 input, got ", get_input_size());
    require_type(this, get_input_element_type(0), false, "X");
    infer_pool([this] { return attrs(); }, m_window.kernel_shape.size());
}

std::shared_ptr<ov::Node> OnnxAveragePool::clone_with_new_inputs(
    const ov::OutputVector &args) const {
    return std::make_shared<OnnxAveragePool>(args, m_window, m_count_include_pad);
}

bool OnnxAveragePool::has_evaluate() const {
    return float_data(this);
}

bool OnnxAveragePool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    return evaluate_pool([this] { return attrs(); }, outputs, inputs);
}

// --- OnnxMaxPool -----------------------------------------------------------

OnnxMaxPool::OnnxMaxPool(const ov::OutputVector &args, OnnxWindowAttrs window,
                         int64_t storage_order)
    : PoolOp(args), m_window(std::move(window)), m_storage_order(storage_order) {
    m_window.materialize();
    constructor_validate_and_infer_types();
}

bool OnnxMaxPool::visit_attributes(ov::AttributeVisitor &visitor) {
    m_window.materialize();
    visit_window(visitor, m_window);
    visitor.on_attribute("storage_order", m_storage_order);
    m_window.materialize();
    return true;
}

ovpool::PoolAttrs OnnxMaxPool::attrs() const {
    ovpool::PoolAttrs a = lowering_attrs(m_window, ovpool::Family::argmax);
    a.storage_order = m_storage_order;
    return a;
}

void OnnxMaxPool::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 1, "takes 1 input, got ", get_input_size());
    require_type(this, get_input_element_type(0), true, "X");
    infer_pool([this] { return attrs(); }, m_window.kernel_shape.size(), ov::element::i64);
}

std::shared_ptr<ov::Node> OnnxMaxPool::clone_with_new_inputs(const ov::OutputVector &args) const {
    return std::make_shared<OnnxMaxPool>(args, m_window, m_storage_order);
}

bool OnnxMaxPool::has_evaluate() const {
    const auto t = get_input_element_type(0);
    return t.is_dynamic() || is_max_type(t);
}

bool OnnxMaxPool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    return evaluate_pool([this] { return attrs(); }, outputs, inputs);
}

// --- LpPool ----------------------------------------------------------------

LpPool::LpPool(const ov::OutputVector &args, OnnxWindowAttrs window, double p)
    : PoolOp(args), m_window(std::move(window)), m_p(p) {
    m_window.materialize();
    constructor_validate_and_infer_types();
}

bool LpPool::visit_attributes(ov::AttributeVisitor &visitor) {
    m_window.materialize();
    visit_window(visitor, m_window);
    visitor.on_attribute("p", m_p);
    m_window.materialize();
    return true;
}

ovpool::PoolAttrs LpPool::attrs() const {
    ovpool::PoolAttrs a = lowering_attrs(m_window, ovpool::Family::lp);
    a.p = m_p;
    return a;
}

void LpPool::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 1, "takes 1 input, got ", get_input_size());
    require_type(this, get_input_element_type(0), false, "X");
    infer_pool([this] { return attrs(); }, m_window.kernel_shape.size());
}

std::shared_ptr<ov::Node> LpPool::clone_with_new_inputs(const ov::OutputVector &args) const {
    return std::make_shared<LpPool>(args, m_window, m_p);
}

bool LpPool::has_evaluate() const {
    return float_data(this);
}

bool LpPool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    return evaluate_pool([this] { return attrs(); }, outputs, inputs);
}

// --- GlobalLpPool ----------------------------------------------------------

GlobalLpPool::GlobalLpPool(const ov::OutputVector &args, double p) : PoolOp(args), m_p(p) {
    constructor_validate_and_infer_types();
}

bool GlobalLpPool::visit_attributes(ov::AttributeVisitor &visitor) {
    visitor.on_attribute("p", m_p);
    return true;
}

ovpool::PoolAttrs GlobalLpPool::attrs() const {
    ovpool::PoolAttrs a;
    a.semantics = ovpool::Semantics::onnx;
    a.family = ovpool::Family::lp;
    a.adaptive = true;
    a.global_pool = true;  // one bin per axis: the whole plane
    a.p = m_p;
    return a;
}

void GlobalLpPool::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 1, "takes 1 input, got ", get_input_size());
    require_type(this, get_input_element_type(0), false, "X");
    infer_pool([this] { return attrs(); }, 0);
}

std::shared_ptr<ov::Node> GlobalLpPool::clone_with_new_inputs(const ov::OutputVector &args) const {
    return std::make_shared<GlobalLpPool>(args, m_p);
}

bool GlobalLpPool::has_evaluate() const {
    return float_data(this);
}

bool GlobalLpPool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    return evaluate_pool([this] { return attrs(); }, outputs, inputs);
}

}  // namespace ovpool_openvino
