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

ovpool::AutoPad ov_auto_pad(const std::string &s) {
    if (s == "same_upper")
        return ovpool::AutoPad::same_upper;
    if (s == "same_lower")
        return ovpool::AutoPad::same_lower;
    if (s == "valid")
        return ovpool::AutoPad::valid;
    return ovpool::AutoPad::explicit_pads;
}

ovpool::Rounding ov_rounding(const std::string &s) {
    if (s == "ceil")
        return ovpool::Rounding::ceil;
    if (s == "ceil_torch")
        return ovpool::Rounding::ceil_torch;
    return ovpool::Rounding::floor;
}

// The attributes checked and the geometry of the data input.
struct OvResolved {
    std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
    std::string auto_pad, rounding;
    FixedGeometry geometry;
};

OvResolved resolve(const ov::Node *node, const OvWindowAttrs &w, const ov::PartialShape &data) {
    OvResolved r;
    const size_t n = w.kernel.size();
    NODE_VALIDATION_CHECK(node, n >= 1 && n <= 3,
                          "the attribute kernel must have 1 to 3 entries, got ",
                          ints_text(w.kernel));
    r.kernel = per_axis(node, "kernel", w.kernel, n, 1, 1);
    r.strides = per_axis(node, "strides", w.strides, n, 1, 1);
    r.dilations = per_axis(node, "dilations", w.dilations, n, 1, 1);
    r.pads_begin = per_axis(node, "pads_begin", w.pads_begin, n, 0, 0);
    r.pads_end = per_axis(node, "pads_end", w.pads_end, n, 0, 0);
    r.auto_pad =
        choose(node, "auto_pad", w.auto_pad, {"explicit", "same_upper", "same_lower", "valid"});
    r.rounding = choose(node, "rounding_type", w.rounding_type, {"floor", "ceil", "ceil_torch"});
    split_nc(node, data, n, "kernel=" + ints_text(w.kernel));
    r.geometry = fixed_geometry(node, data, r.kernel, r.strides, r.dilations, r.pads_begin,
                                r.pads_end, ov_auto_pad(r.auto_pad), ov_rounding(r.rounding));
    return r;
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

void AvgPool::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 1, "takes 1 input, got ", get_input_size());
    require_type(this, get_input_element_type(0), false, "data");
    const ov::PartialShape data = get_input_partial_shape(0);
    const OvResolved r = resolve(this, m_window, data);
    if (m_exclude_pad && r.auto_pad == "explicit") {
        // OpenVINO's own rule: some window would hold no input element
        for (size_t a = 0; a < r.kernel.size(); a++) {
            const int64_t ek = (r.kernel[a] - 1) * r.dilations[a] + 1;
            NODE_VALIDATION_CHECK(
                this, r.pads_begin[a] < ek && r.pads_end[a] < ek,
                "with exclude-pad the dilated kernel (", ek,
                ") must be larger than the pads (pads_begin=", ints_text(r.pads_begin),
                ", pads_end=", ints_text(r.pads_end), "); some window would be empty");
        }
    }
    set_checked_output(this, 0, get_input_element_type(0), pool_shape(data, r.geometry));
}

std::shared_ptr<ov::Node> AvgPool::clone_with_new_inputs(const ov::OutputVector &args) const {
    return std::make_shared<AvgPool>(args, m_window, m_exclude_pad);
}

bool AvgPool::has_evaluate() const {
    const auto t = get_input_element_type(0);
    return t.is_dynamic() || is_float_type(t);
}

bool AvgPool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    const ov::Shape data = inputs[0].get_shape();
    const OvResolved r = resolve(this, m_window, ov::PartialShape(data));
    Spec spec = base_spec(kAverage, inputs[0].get_element_type(), data);
    // OpenVINO counts pads only when some pad is non-zero (its reference:
    // pads_in_avg = !exclude_pad && any pad != 0); with every pad 0 a ceil
    // window past the input is then 0 / 0 = NaN, as in OpenVINO
    bool any_pad = false;
    for (const Axis &a : r.geometry.axes)
        any_pad = any_pad || a.pad_begin > 0 || a.pad_end > 0;
    const int32_t divisor = !m_exclude_pad && any_pad ? kOvInclude : kOvExclude;
    ov::Shape out_shape{data[0], data[1]};
    for (int a = 0; a < spec.n_spatial; a++) {
        spec.axes[a] = r.geometry.axes[static_cast<size_t>(a)];
        spec.axes[a].divisor = divisor;
        out_shape.push_back(static_cast<size_t>(spec.axes[a].n_out));
    }
    shape_output(outputs[0], out_shape, label());
    run(spec, inputs[0], outputs[0], nullptr);
    return true;
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

void MaxPool::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 1, "takes 1 input, got ", get_input_size());
    require_type(this, get_input_element_type(0), true, "data");
    NODE_VALIDATION_CHECK(
        this, m_index_element_type == ov::element::i32 || m_index_element_type == ov::element::i64,
        "ovpool writes i32/i64 indices, not ", m_index_element_type.get_type_name());
    const ov::PartialShape data = get_input_partial_shape(0);
    const OvResolved r = resolve(this, m_window, data);
    const int64_t rank = static_cast<int64_t>(r.kernel.size()) + 2;
    NODE_VALIDATION_CHECK(this, m_axis >= -rank && m_axis < rank, "axis=", m_axis,
                          " is out of range for a rank-", rank, " input");
    const ov::PartialShape shape = pool_shape(data, r.geometry);
    set_checked_output(this, 0, get_input_element_type(0), shape);
    set_checked_output(this, 1, m_index_element_type, shape);
}

std::shared_ptr<ov::Node> MaxPool::clone_with_new_inputs(const ov::OutputVector &args) const {
    return std::make_shared<MaxPool>(args, m_window, m_index_element_type, m_axis);
}

bool MaxPool::has_evaluate() const {
    const auto t = get_input_element_type(0);
    return t.is_dynamic() || is_max_type(t);
}

bool MaxPool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    const ov::Shape data = inputs[0].get_shape();
    const OvResolved r = resolve(this, m_window, ov::PartialShape(data));
    const bool with_indices = outputs.size() > 1 && output_read(1);
    Spec spec = base_spec(with_indices ? kArgmax : kMax, inputs[0].get_element_type(), data);
    ov::Shape out_shape{data[0], data[1]};
    for (int a = 0; a < spec.n_spatial; a++) {
        spec.axes[a] = r.geometry.axes[static_cast<size_t>(a)];
        out_shape.push_back(static_cast<size_t>(spec.axes[a].n_out));
    }
    shape_output(outputs[0], out_shape, label());
    if (!with_indices) {
        run(spec, inputs[0], outputs[0], nullptr);
        return true;
    }
    shape_output(outputs[1], out_shape, label());
    const auto index_type = outputs[1].get_element_type();
    OPENVINO_ASSERT(index_type == ov::element::i32 || index_type == ov::element::i64,
                    "ovpool MaxPool: indices of type ", index_type.get_type_name());
    spec.index_i64 = index_type == ov::element::i64;
    // indices count from `axis` on: 0 over the whole tensor, 1 within each
    // sample, 2 within each (n, c) plane, deeper axes modulo the dims after
    const int64_t rank = static_cast<int64_t>(data.size());
    const int64_t axis = (m_axis % rank + rank) % rank;
    int64_t plane = 1;
    for (size_t a = 2; a < data.size(); a++)
        plane *= static_cast<int64_t>(data[a]);
    if (axis == 0) {
        spec.planes_per_index_space = spec.n * spec.c;
    } else if (axis == 1) {
        spec.planes_per_index_space = spec.c;
    } else {
        spec.planes_per_index_space = 1;
        if (axis > 2) {
            int64_t modulo = 1;
            for (int64_t a = axis; a < rank; a++)
                modulo *= static_cast<int64_t>(data[static_cast<size_t>(a)]);
            spec.index_modulo = modulo;
        }
    }
    spec.planes_per_index_space = std::max<int64_t>(1, spec.planes_per_index_space);
    if (!spec.index_i64)
        OPENVINO_ASSERT(plane * spec.planes_per_index_space <= INT32_MAX,
                        "ovpool MaxPool: indices up to ", plane * spec.planes_per_index_space - 1,
                        " do not fit in int32; use index_element_type=i64");
    run(spec, inputs[0], outputs[0], &outputs[1]);
    return true;
}

}  // namespace ovpool_openvino
