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

struct OnnxResolved {
    std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
    FixedGeometry geometry;
};

OnnxResolved resolve(const ov::Node *node, const OnnxWindowAttrs &w, const ov::PartialShape &data) {
    OnnxResolved r;
    const size_t n = w.kernel_shape.size();
    NODE_VALIDATION_CHECK(node, n >= 1 && n <= 3,
                          "the attribute kernel_shape must have 1 to 3 entries, got ",
                          ints_text(w.kernel_shape));
    r.kernel = per_axis(node, "kernel_shape", w.kernel_shape, n, 1, 1);
    r.strides = per_axis(node, "strides", w.strides, n, 1, 1);
    r.dilations = per_axis(node, "dilations", w.dilations, n, 1, 1);
    const std::vector<int64_t> pads = per_axis(node, "pads", w.pads, n, 0, 0, 2);
    r.pads_begin.assign(pads.begin(), pads.begin() + static_cast<ptrdiff_t>(n));
    r.pads_end.assign(pads.begin() + static_cast<ptrdiff_t>(n), pads.end());
    const std::string auto_pad =
        choose(node, "auto_pad", w.auto_pad, {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"});
    ovpool::AutoPad mode = ovpool::AutoPad::explicit_pads;
    if (auto_pad == "SAME_UPPER")
        mode = ovpool::AutoPad::same_upper;
    else if (auto_pad == "SAME_LOWER")
        mode = ovpool::AutoPad::same_lower;
    else if (auto_pad == "VALID")
        mode = ovpool::AutoPad::valid;
    if (mode != ovpool::AutoPad::explicit_pads)
        for (int64_t p : pads)
            NODE_VALIDATION_CHECK(node, p == 0, "pads=", ints_text(pads),
                                  " cannot be combined with auto_pad='", auto_pad, "'");
    split_nc(node, data, n, "kernel_shape=" + ints_text(w.kernel_shape), "X");
    r.geometry =
        fixed_geometry(node, data, r.kernel, r.strides, r.dilations, r.pads_begin, r.pads_end, mode,
                       w.ceil_mode ? ovpool::Rounding::ceil_torch : ovpool::Rounding::floor);
    return r;
}

void refuse_empty(const ov::Node *node, const OnnxResolved &r) {
    if (r.geometry.is_static)
        NODE_VALIDATION_CHECK(
            node, !has_empty_window(r.geometry),
            "some window lies entirely in the padding (pads_begin=", ints_text(r.pads_begin),
            ", pads_end=", ints_text(r.pads_end), ", kernel_shape=", ints_text(r.kernel),
            ", dilations=", ints_text(r.dilations),
            "); pads must be smaller than the dilated kernel");
}

void visit_window(ov::AttributeVisitor &visitor, OnnxWindowAttrs &w) {
    visitor.on_attribute("kernel_shape", w.kernel_shape);
    visitor.on_attribute("strides", w.strides);
    visitor.on_attribute("pads", w.pads);
    visitor.on_attribute("dilations", w.dilations);
    visitor.on_attribute("auto_pad", w.auto_pad);
    visitor.on_attribute("ceil_mode", w.ceil_mode);
}

// The spec of a fixed-window ONNX pool on a static input, and its output shape.
Spec onnx_spec(int32_t family, const ov::Tensor &x, const OnnxResolved &r, int32_t divisor,
               ov::Shape &out_shape) {
    const ov::Shape data = x.get_shape();
    Spec spec = base_spec(family, x.get_element_type(), data);
    out_shape = ov::Shape{data[0], data[1]};
    for (int a = 0; a < spec.n_spatial; a++) {
        spec.axes[a] = r.geometry.axes[static_cast<size_t>(a)];
        spec.axes[a].divisor = divisor;
        out_shape.push_back(static_cast<size_t>(spec.axes[a].n_out));
    }
    return spec;
}

void check_p(const ov::Node *node, double p) {
    NODE_VALIDATION_CHECK(node, std::isfinite(p) && p > 0, "attribute p=", p,
                          " must be a positive finite number");
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

void OnnxAveragePool::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 1, "takes 1 input, got ", get_input_size());
    require_type(this, get_input_element_type(0), false, "X");
    const ov::PartialShape data = get_input_partial_shape(0);
    const OnnxResolved r = resolve(this, m_window, data);
    if (!m_count_include_pad)
        refuse_empty(this, r);
    set_checked_output(this, 0, get_input_element_type(0), pool_shape(data, r.geometry));
}

std::shared_ptr<ov::Node> OnnxAveragePool::clone_with_new_inputs(
    const ov::OutputVector &args) const {
    return std::make_shared<OnnxAveragePool>(args, m_window, m_count_include_pad);
}

bool OnnxAveragePool::has_evaluate() const {
    return float_data(this);
}

bool OnnxAveragePool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    const OnnxResolved r = resolve(this, m_window, ov::PartialShape(inputs[0].get_shape()));
    if (!m_count_include_pad)
        refuse_empty(this, r);
    ov::Shape out_shape;
    const Spec spec =
        onnx_spec(kAverage, inputs[0], r, m_count_include_pad ? kDeclaredPads : kTaps, out_shape);
    shape_output(outputs[0], out_shape, label());
    run(spec, inputs[0], outputs[0], nullptr);
    return true;
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

void OnnxMaxPool::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 1, "takes 1 input, got ", get_input_size());
    require_type(this, get_input_element_type(0), true, "X");
    NODE_VALIDATION_CHECK(this, m_storage_order == 0 || m_storage_order == 1,
                          "storage_order must be 0 or 1, got ", m_storage_order);
    const ov::PartialShape data = get_input_partial_shape(0);
    const OnnxResolved r = resolve(this, m_window, data);
    refuse_empty(this, r);
    const ov::PartialShape shape = pool_shape(data, r.geometry);
    set_checked_output(this, 0, get_input_element_type(0), shape);
    set_checked_output(this, 1, ov::element::i64, shape);
}

std::shared_ptr<ov::Node> OnnxMaxPool::clone_with_new_inputs(const ov::OutputVector &args) const {
    return std::make_shared<OnnxMaxPool>(args, m_window, m_storage_order);
}

bool OnnxMaxPool::has_evaluate() const {
    const auto t = get_input_element_type(0);
    return t.is_dynamic() || is_max_type(t);
}

bool OnnxMaxPool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    const OnnxResolved r = resolve(this, m_window, ov::PartialShape(inputs[0].get_shape()));
    refuse_empty(this, r);
    const bool with_indices = outputs.size() > 1 && output_read(1);
    ov::Shape out_shape;
    Spec spec = onnx_spec(with_indices ? kArgmax : kMax, inputs[0], r, kTaps, out_shape);
    shape_output(outputs[0], out_shape, label());
    if (!with_indices) {
        run(spec, inputs[0], outputs[0], nullptr);
        return true;
    }
    shape_output(outputs[1], out_shape, label());
    const auto index_type = outputs[1].get_element_type();
    OPENVINO_ASSERT(index_type == ov::element::i32 || index_type == ov::element::i64,
                    "ovpool OnnxMaxPool: indices of type ", index_type.get_type_name());
    spec.index_i64 = index_type == ov::element::i64;
    spec.planes_per_index_space = std::max<int64_t>(1, spec.n * spec.c);
    spec.column_major = m_storage_order == 1;
    if (!spec.index_i64)
        OPENVINO_ASSERT(static_cast<int64_t>(inputs[0].get_size()) <= INT32_MAX,
                        "ovpool OnnxMaxPool: indices up to ", inputs[0].get_size() - 1,
                        " do not fit in the int32 the plugin allocated");
    run(spec, inputs[0], outputs[0], &outputs[1]);
    return true;
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

void LpPool::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 1, "takes 1 input, got ", get_input_size());
    require_type(this, get_input_element_type(0), false, "X");
    check_p(this, m_p);
    const ov::PartialShape data = get_input_partial_shape(0);
    const OnnxResolved r = resolve(this, m_window, data);
    set_checked_output(this, 0, get_input_element_type(0), pool_shape(data, r.geometry));
}

std::shared_ptr<ov::Node> LpPool::clone_with_new_inputs(const ov::OutputVector &args) const {
    return std::make_shared<LpPool>(args, m_window, m_p);
}

bool LpPool::has_evaluate() const {
    return float_data(this);
}

bool LpPool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    const OnnxResolved r = resolve(this, m_window, ov::PartialShape(inputs[0].get_shape()));
    ov::Shape out_shape;
    Spec spec = onnx_spec(kLp, inputs[0], r, kTaps, out_shape);
    spec.p = m_p;
    shape_output(outputs[0], out_shape, label());
    run(spec, inputs[0], outputs[0], nullptr);
    return true;
}

// --- GlobalLpPool ----------------------------------------------------------

GlobalLpPool::GlobalLpPool(const ov::OutputVector &args, double p) : PoolOp(args), m_p(p) {
    constructor_validate_and_infer_types();
}

bool GlobalLpPool::visit_attributes(ov::AttributeVisitor &visitor) {
    visitor.on_attribute("p", m_p);
    return true;
}

void GlobalLpPool::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 1, "takes 1 input, got ", get_input_size());
    require_type(this, get_input_element_type(0), false, "X");
    check_p(this, m_p);
    const ov::PartialShape data = get_input_partial_shape(0);
    if (!split_nc(this, data, 0, "", "X")) {
        set_checked_output(this, 0, get_input_element_type(0), ov::PartialShape::dynamic());
        return;
    }
    std::vector<ov::Dimension> dims{data[0], data[1]};
    for (size_t a = 2; a < data.size(); a++) {
        NODE_VALIDATION_CHECK(this, data[a].is_dynamic() || data[a].get_length() >= 1,
                              "spatial dims must be non-empty, got ", shape_text(data));
        dims.emplace_back(1);
    }
    set_checked_output(this, 0, get_input_element_type(0), ov::PartialShape(dims));
}

std::shared_ptr<ov::Node> GlobalLpPool::clone_with_new_inputs(const ov::OutputVector &args) const {
    return std::make_shared<GlobalLpPool>(args, m_p);
}

bool GlobalLpPool::has_evaluate() const {
    return float_data(this);
}

bool GlobalLpPool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    const ov::Shape data = inputs[0].get_shape();
    split_nc(this, ov::PartialShape(data), 0, "", "X");
    Spec spec = base_spec(kLp, inputs[0].get_element_type(), data);
    spec.p = m_p;
    ov::Shape out_shape{data[0], data[1]};
    for (int a = 0; a < spec.n_spatial; a++) {
        OPENVINO_ASSERT(data[2 + a] >= 1,
                        "ovpool GlobalLpPool: spatial dims must be non-empty, got ", data);
        spec.axes[a].adaptive = true;
        spec.axes[a].n_in = static_cast<int64_t>(data[2 + a]);
        spec.axes[a].n_out = 1;
        out_shape.push_back(1);
    }
    shape_output(outputs[0], out_shape, label());
    run(spec, inputs[0], outputs[0], nullptr);
    return true;
}

}  // namespace ovpool_openvino
