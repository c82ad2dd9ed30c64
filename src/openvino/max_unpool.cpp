// MaxUnpool (opset ovpool): ONNX MaxUnpool-22, X scattered into zeros at the
// flat indices I of a max pool (ovpool.ops.max_unpool). The optional third
// input output_shape may be known only at run time (the output is then
// shaped in evaluate). indices_relative_to picks how indices read against an
// output_shape larger than the default one: "default_shape" (ONNX's
// reference: positions in the default shape, that block placed at the
// origin) or "output_shape" (ONNX Runtime, PyTorch: positions in the output).
#include "geometry.hpp"
#include "ops.hpp"
#include "ovpool/unpool.hpp"

namespace ovpool_openvino {
namespace {

bool is_index_type(const ov::element::Type &t) {
    return t.is_integral_number() && t.bitwidth() >= 8 && t != ov::element::boolean;
}

// The default output size along spatial axis a of an input of n_in there.
int64_t default_size(const ov::Node *node, size_t a, int64_t n_in,
                     const std::vector<int64_t> &kernel, const std::vector<int64_t> &strides,
                     const std::vector<int64_t> &pads) {
    const size_t n = kernel.size();
    const int64_t size =
        ovpool::unpool_output_size(n_in, kernel[a], strides[a], pads[a], pads[n + a]);
    NODE_VALIDATION_CHECK(node, size >= 1 && size <= kMaxElements,
                          "the output size along spatial axis ", a, " would be ", size, " (input ",
                          n_in, ", kernel_shape=", ints_text(kernel),
                          ", strides=", ints_text(strides), ", pads=(", pads[a], ", ", pads[n + a],
                          ")); it must be 1 to 2^40");
    return size;
}

// (N, C, default spatial...) from X's static shape.
std::vector<int64_t> default_shape(const ov::Node *node, const ov::Shape &x,
                                   const std::vector<int64_t> &kernel,
                                   const std::vector<int64_t> &strides,
                                   const std::vector<int64_t> &pads) {
    std::vector<int64_t> shape{static_cast<int64_t>(x[0]), static_cast<int64_t>(x[1])};
    for (size_t a = 0; a < kernel.size(); a++)
        shape.push_back(
            default_size(node, a, static_cast<int64_t>(x[2 + a]), kernel, strides, pads));
    return shape;
}

template <class T>
int64_t scatter(const void *x, const int64_t *indices, int64_t n, void *out, int64_t size) {
    return ovpool::max_unpool(static_cast<const T *>(x), indices, n, static_cast<T *>(out), size);
}

}  // namespace

MaxUnpool::MaxUnpool(const ov::OutputVector &args, std::vector<int64_t> kernel_shape,
                     std::vector<int64_t> strides, std::vector<int64_t> pads,
                     std::string indices_relative_to)
    : PoolOp(args),
      m_kernel_shape(std::move(kernel_shape)),
      m_strides(std::move(strides)),
      m_pads(std::move(pads)),
      m_indices_relative_to(std::move(indices_relative_to)) {
    materialize();
    constructor_validate_and_infer_types();
}

void MaxUnpool::materialize() {
    fill_empty(m_strides, m_kernel_shape.size(), 1);
    fill_empty(m_pads, 2 * m_kernel_shape.size(), 0);
}

bool MaxUnpool::visit_attributes(ov::AttributeVisitor &visitor) {
    materialize();
    visitor.on_attribute("kernel_shape", m_kernel_shape);
    visitor.on_attribute("strides", m_strides);
    visitor.on_attribute("pads", m_pads);
    visitor.on_attribute("indices_relative_to", m_indices_relative_to);
    materialize();
    return true;
}

void MaxUnpool::validate_and_infer_types() {
    const size_t inputs = get_input_size();
    NODE_VALIDATION_CHECK(this, inputs == 2 || inputs == 3,
                          "takes 2 to 3 inputs (X, I, output_shape), got ", inputs);
    require_type(this, get_input_element_type(0), true, "X");
    const auto index_type = get_input_element_type(1);
    NODE_VALIDATION_CHECK(this, index_type.is_dynamic() || is_index_type(index_type),
                          "I must be an integer tensor, got ", index_type.get_type_name());
    choose(this, "indices_relative_to", m_indices_relative_to, {"default_shape", "output_shape"});
    const size_t n = m_kernel_shape.size();
    NODE_VALIDATION_CHECK(this, n >= 1 && n <= 3,
                          "the attribute kernel_shape must have 1 to 3 entries, got ",
                          ints_text(m_kernel_shape));
    const auto kernel = per_axis(this, "kernel_shape", m_kernel_shape, n, 1, 1);
    const auto strides = per_axis(this, "strides", m_strides, n, 1, 1);
    const auto pads = per_axis(this, "pads", m_pads, n, 0, 0, 2);
    const ov::PartialShape data = get_input_partial_shape(0);
    const bool rank_known =
        split_nc(this, data, n, "kernel_shape=" + ints_text(m_kernel_shape), "X");
    const ov::PartialShape index_shape = get_input_partial_shape(1);
    NODE_VALIDATION_CHECK(
        this, !rank_known || index_shape.rank().is_dynamic() || index_shape.size() == data.size(),
        "I ", shape_text(index_shape), " must have the shape of X ", shape_text(data));
    std::vector<ov::Dimension> dims{rank_known ? data[0] : ov::Dimension::dynamic(),
                                    rank_known ? data[1] : ov::Dimension::dynamic()};
    if (inputs == 3) {
        const auto shape_type = get_input_element_type(2);
        NODE_VALIDATION_CHECK(this,
                              shape_type.is_dynamic() || shape_type == ov::element::i32 ||
                                  shape_type == ov::element::i64,
                              "output_shape must be i32 or i64, got ", shape_type.get_type_name());
        const ov::PartialShape shape_shape = get_input_partial_shape(2);
        NODE_VALIDATION_CHECK(this,
                              shape_shape.rank().is_dynamic() ||
                                  (shape_shape.size() == 1 &&
                                   (shape_shape[0].is_dynamic() ||
                                    shape_shape[0].get_length() == static_cast<int64_t>(n + 2))),
                              "output_shape must be 1-D with ", n + 2, " entries for ", n,
                              " spatial dims, got shape ", shape_text(shape_shape));
        std::vector<int64_t> values;
        if (constant_ints(input_value(2), values)) {
            NODE_VALIDATION_CHECK(this, values.size() == n + 2, "output_shape must have ", n + 2,
                                  " entries for ", n, " spatial dims, got ", values.size(), ": ",
                                  ints_text(values));
            dims.clear();
            for (int64_t v : values) {
                NODE_VALIDATION_CHECK(this, v >= 1 && v <= kMaxElements,
                                      "output_shape must be 1 to 2^40, got ", ints_text(values));
                dims.emplace_back(v);
            }
        } else {
            dims.resize(n + 2, ov::Dimension::dynamic());
        }
    } else if (rank_known && data.is_static()) {
        const auto shape = default_shape(this, data.to_shape(), kernel, strides, pads);
        for (size_t a = 0; a < n; a++)
            dims.emplace_back(shape[2 + a]);
    } else {
        dims.resize(n + 2, ov::Dimension::dynamic());
        for (size_t a = 0; rank_known && a < n; a++)
            if (data[2 + a].is_static())
                dims[2 + a] =
                    default_size(this, a, data[2 + a].get_length(), kernel, strides, pads);
    }
    set_checked_output(this, 0, get_input_element_type(0), ov::PartialShape(dims));
}

std::shared_ptr<ov::Node> MaxUnpool::clone_with_new_inputs(const ov::OutputVector &args) const {
    return std::make_shared<MaxUnpool>(args, m_kernel_shape, m_strides, m_pads,
                                       m_indices_relative_to);
}

bool MaxUnpool::has_evaluate() const {
    const auto t = get_input_element_type(0);
    return t.is_dynamic() || is_max_type(t);
}

bool MaxUnpool::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    const std::string op = label();
    const ov::Shape x = inputs[0].get_shape();
    const size_t n = m_kernel_shape.size();
    OPENVINO_ASSERT(x.size() == n + 2, "ovpool ", op, ": X of shape ", x, " for kernel_shape ",
                    ints_text(m_kernel_shape));
    split_nc(this, ov::PartialShape(x), n, "kernel_shape=" + ints_text(m_kernel_shape), "X");
    OPENVINO_ASSERT(inputs[1].get_shape() == x, "ovpool ", op, ": I must have the shape of X ", x,
                    ", got ", inputs[1].get_shape());
    const auto kernel = per_axis(this, "kernel_shape", m_kernel_shape, n, 1, 1);
    const auto strides = per_axis(this, "strides", m_strides, n, 1, 1);
    const auto pads = per_axis(this, "pads", m_pads, n, 0, 0, 2);
    const std::vector<int64_t> base = default_shape(this, x, kernel, strides, pads);
    std::vector<int64_t> full = base;
    if (inputs.size() > 2) {
        OPENVINO_ASSERT(inputs[2].get_size() == n + 2, "ovpool ", op, ": output_shape of shape ",
                        inputs[2].get_shape(), " must have ", n + 2, " entries");
        full = tensor_ints(inputs[2]);
        OPENVINO_ASSERT(full[0] == base[0] && full[1] == base[1], "ovpool ", op, ": output_shape ",
                        ints_text(full), " must keep N and C of X ", x);
        for (size_t a = 0; a < full.size(); a++) {
            OPENVINO_ASSERT(full[a] >= base[a], "ovpool ", op, ": output_shape ", ints_text(full),
                            " is smaller than the default shape ", ints_text(base));
            OPENVINO_ASSERT(full[a] <= kMaxElements, "ovpool ", op, ": output_shape ",
                            ints_text(full), " has a dim past ovpool's limit of 2^40");
        }
    }
    const std::vector<int64_t> &index_shape = m_indices_relative_to == "output_shape" ? full : base;
    const int64_t space = ovpool::shape_elements(index_shape.data(), static_cast<int>(n + 2));
    const int64_t size = ovpool::shape_elements(full.data(), static_cast<int>(n + 2));
    OPENVINO_ASSERT(space >= 0 && size >= 0, "ovpool ", op, ": an output of shape ",
                    ints_text(full), " is past ovpool's limit of 2^40 elements");
    ov::Shape out_shape;
    for (int64_t d : full)
        out_shape.push_back(static_cast<size_t>(d));
    shape_output(outputs[0], out_shape, op);
    const int64_t count = static_cast<int64_t>(inputs[0].get_size());
    check_budget(op, "the indices as int64", 8 * count);
    std::vector<int64_t> indices;
    try {
        indices = tensor_ints(inputs[1]);
    } catch (const std::bad_alloc &) {
        OPENVINO_THROW("ovpool ", op, ": cannot allocate ", 8 * count,
                       " bytes for the indices as int64");
    }
    for (int64_t i = 0; i < count; i++) {
        const int64_t target = indices[static_cast<size_t>(i)];
        OPENVINO_ASSERT(target >= 0 && target < space, "ovpool ", op, ": the index ", target,
                        " at flat position ", i, " is outside a tensor of shape ",
                        ints_text(index_shape), " (valid range [0, ", space, "))");
    }
    if (index_shape != full) {
        // positions in the default shape -> the same coordinates in the output
        std::vector<int64_t> coords(full.size());
        for (auto &target : indices) {
            int64_t rest = target, flat = 0, stride = 1;
            for (size_t a = full.size(); a-- > 0;) {
                coords[a] = rest % index_shape[a];
                rest /= index_shape[a];
            }
            for (size_t a = full.size(); a-- > 0;) {
                flat += coords[a] * stride;
                stride *= full[a];
            }
            target = flat;
        }
    }
    std::memset(outputs[0].data(), 0, outputs[0].get_byte_size());
    const size_t width = inputs[0].get_element_type().size();
    int64_t bad = -1;
    switch (width) {
        case 1:
            bad =
                scatter<uint8_t>(inputs[0].data(), indices.data(), count, outputs[0].data(), size);
            break;
        case 2:
            bad =
                scatter<uint16_t>(inputs[0].data(), indices.data(), count, outputs[0].data(), size);
            break;
        case 4:
            bad =
                scatter<uint32_t>(inputs[0].data(), indices.data(), count, outputs[0].data(), size);
            break;
        case 8:
            bad =
                scatter<uint64_t>(inputs[0].data(), indices.data(), count, outputs[0].data(), size);
            break;
        default:
            OPENVINO_THROW("ovpool ", op, ": elements of ", width, " bytes");
    }
    OPENVINO_ASSERT(bad < 0, "ovpool ", op, ": index out of range");  // checked above
    return true;
}

}  // namespace ovpool_openvino
