// The unpool form (MaxUnpool of opset ovpool): ONNX MaxUnpool-22, X scattered into zeros at the
// flat indices I of a max pool (ovpool.ops.max_unpool). The optional third
// input output_shape may be known only at run time (the output is then
// shaped in evaluate). indices_relative_to picks how indices read against an
// output_shape larger than the default one: "default_shape" (ONNX's
// reference: positions in the default shape, that block placed at the
// origin) or "output_shape" (ONNX Runtime, PyTorch: positions in the output).
#include "node_helpers.hpp"
#include "ops.hpp"
#include "ovpool/unpool.hpp"

namespace ovpool_openvino {
namespace {

// ONNX MaxUnpool's rules (lower.hpp) on X of `data`'s shape (rank known) and
// output_shape (empty: the default); a broken rule fails the node.
ovpool::UnpoolLowered lower_node(const ov::Node *node, const std::vector<int64_t> &kernel,
                                 const std::vector<int64_t> &strides,
                                 const std::vector<int64_t> &pads,
                                 const std::vector<int64_t> &output_shape,
                                 const ov::PartialShape &data) {
    int64_t dims[5];
    const int rank = static_cast<int>(data.size());
    for (int i = 0; i < rank && i < 5; i++)
        dims[i] = data[i].is_static() ? data[i].get_length() : -1;
    try {
        return ovpool::lower_unpool(kernel, strides, pads, output_shape, rank, dims);
    } catch (const ovpool::LoweringError &exc) {
        NODE_VALIDATION_CHECK(node, false, exc.what());
    }
    return {};
}

template <class T>
int64_t scatter(const void *x, const int64_t *indices, int64_t n, void *out, int64_t size) {
    return ovpool::max_unpool(static_cast<const T *>(x), indices, n, static_cast<T *>(out), size);
}

}  // namespace

void SchemaOp::infer_unpool() {
    const size_t inputs = get_input_size();
    const std::string &relative_to = m_attrs.at("indices_relative_to").s;
    choose(this, "indices_relative_to", relative_to, {"default_shape", "output_shape"});
    const std::vector<int64_t> &kernel_shape = m_attrs.at("kernel_shape").ints;
    const size_t n = kernel_shape.size();
    NODE_VALIDATION_CHECK(this, n >= 1 && n <= 3,
                          "the attribute kernel_shape must have 1 to 3 entries, got ",
                          ints_text(kernel_shape));
    const ov::PartialShape data = get_input_partial_shape(0);
    const bool rank_known = split_nc(this, data, n, "kernel_shape=" + ints_text(kernel_shape), "X");
    const ov::PartialShape index_shape = get_input_partial_shape(1);
    NODE_VALIDATION_CHECK(
        this, !rank_known || index_shape.rank().is_dynamic() || index_shape.size() == data.size(),
        "I ", shape_text(index_shape), " must have the shape of X ", shape_text(data));
    std::vector<int64_t> output_shape;
    bool output_known = true;
    if (inputs == 3) {
        const ov::PartialShape shape_shape = get_input_partial_shape(2);
        NODE_VALIDATION_CHECK(this,
                              shape_shape.rank().is_dynamic() ||
                                  (shape_shape.size() == 1 &&
                                   (shape_shape[0].is_dynamic() ||
                                    shape_shape[0].get_length() == static_cast<int64_t>(n + 2))),
                              "output_shape must be 1-D with ", n + 2, " entries for ", n,
                              " spatial dims, got shape ", shape_text(shape_shape));
        output_known = constant_ints(input_value(2), output_shape);
    }
    ov::PartialShape shape = ov::PartialShape::dynamic(static_cast<int64_t>(n + 2));
    if (rank_known) {
        const ovpool::UnpoolLowered u =
            lower_node(this, kernel_shape, m_attrs.at("strides").ints, m_attrs.at("pads").ints,
                       output_known ? output_shape : std::vector<int64_t>(), data);
        std::vector<ov::Dimension> dims;
        for (int i = 0; i < u.rank; i++)
            dims.emplace_back(output_known && u.out_shape[i] >= 0 ? ov::Dimension(u.out_shape[i])
                                                                  : ov::Dimension::dynamic());
        if (!output_known) {
            dims[0] = data[0];
            dims[1] = data[1];
        }
        shape = ov::PartialShape(dims);
    }
    set_checked_output(this, 0, get_input_element_type(0), shape);
}

bool SchemaOp::evaluate_unpool(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    const std::string op = label();
    const std::vector<int64_t> &kernel_shape = m_attrs.at("kernel_shape").ints;
    const ov::Shape x = inputs[0].get_shape();
    const size_t n = kernel_shape.size();
    OPENVINO_ASSERT(x.size() == n + 2, "ovpool ", op, ": X of shape ", x, " for kernel_shape ",
                    ints_text(kernel_shape));
    split_nc(this, ov::PartialShape(x), n, "kernel_shape=" + ints_text(kernel_shape), "X");
    OPENVINO_ASSERT(inputs[1].get_shape() == x, "ovpool ", op, ": I must have the shape of X ", x,
                    ", got ", inputs[1].get_shape());
    std::vector<int64_t> output_shape;
    if (inputs.size() > 2) {
        OPENVINO_ASSERT(inputs[2].get_size() == n + 2, "ovpool ", op, ": output_shape of shape ",
                        inputs[2].get_shape(), " must have ", n + 2, " entries");
        output_shape = tensor_ints(inputs[2]);
    }
    const ovpool::UnpoolLowered u =
        lower_node(this, kernel_shape, m_attrs.at("strides").ints, m_attrs.at("pads").ints,
                   output_shape, ov::PartialShape(x));
    const std::vector<int64_t> base(u.default_shape, u.default_shape + u.rank);
    const std::vector<int64_t> full(u.out_shape, u.out_shape + u.rank);
    const std::vector<int64_t> &index_shape =
        m_attrs.at("indices_relative_to").s == "output_shape" ? full : base;
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
