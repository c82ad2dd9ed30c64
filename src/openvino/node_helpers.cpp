// node_helpers.hpp.
#include "node_helpers.hpp"

#include <cctype>
#include <sstream>

#include "openvino/op/constant.hpp"
#include "openvino/op/convert.hpp"

namespace ovpool_openvino {

std::string shape_text(const ov::PartialShape &shape) {
    if (shape.rank().is_dynamic())
        return "[...]";
    std::ostringstream s;
    s << "[";
    for (size_t i = 0; i < shape.size(); i++) {
        if (i)
            s << ",";
        if (shape[i].is_static())
            s << shape[i].get_length();
        else
            s << "?";
    }
    s << "]";
    return s.str();
}

std::string ints_text(const std::vector<int64_t> &values) {
    std::ostringstream s;
    s << "[";
    for (size_t i = 0; i < values.size(); i++)
        s << (i ? ", " : "") << values[i];
    s << "]";
    return s.str();
}

std::string choose(const ov::Node *node, const std::string &name, const std::string &value,
                   std::initializer_list<const char *> choices) {
    std::string lower;
    for (char ch : value)
        if (!std::isspace(static_cast<unsigned char>(ch)))
            lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::string names;
    for (const char *choice : choices) {
        std::string c = choice;
        std::string cl;
        for (char ch : c)
            cl += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (cl == lower)
            return c;
        names += (names.empty() ? "" : ", ") + c;
    }
    NODE_VALIDATION_CHECK(node, false, "attribute ", name, "='", value, "' must be one of ", names);
    return value;
}

bool split_nc(const ov::Node *node, const ov::PartialShape &data, size_t n_spatial,
              const std::string &source, const std::string &role) {
    if (data.rank().is_dynamic())
        return false;
    const size_t rank = data.size();
    NODE_VALIDATION_CHECK(node, rank >= 3 && rank <= 5, "the ", role,
                          " input must have rank 3, 4 or 5 (N, C, 1 to 3 spatial dims), got shape ",
                          shape_text(data));
    NODE_VALIDATION_CHECK(node, n_spatial == 0 || rank - 2 == n_spatial, source, " gives ",
                          n_spatial, " spatial dims but the ", role, " input has shape ",
                          shape_text(data), " (", rank - 2, " spatial dims)");
    check_elements(node, "the " + role + " input", data, node->get_input_element_type(0));
    return true;
}

namespace {

std::string node_label(const ov::Node *node) {
    return std::string(node->get_type_info().name) + " (" + node->get_friendly_name() + ")";
}

// The product of the known dims of a shape, in floating point: for messages
// about shapes whose element count passes 2^63.
double known_elements(const ov::PartialShape &shape) {
    double product = 1;
    for (size_t i = 0; i < shape.size(); i++)
        if (shape[i].is_static())
            product *= static_cast<double>(shape[i].get_length());
    return product;
}

}  // namespace

void check_elements(const ov::Node *node, const std::string &what, const ov::PartialShape &shape,
                    const ov::element::Type &type) {
    if (shape.rank().is_dynamic())
        return;
    std::vector<int64_t> known;
    for (size_t i = 0; i < shape.size(); i++) {
        if (shape[i].is_dynamic())
            continue;
        const int64_t d = shape[i].get_length();
        NODE_VALIDATION_CHECK(node, d <= kMaxElements, what, " ", shape_text(shape), " has dim ", i,
                              " = ", d, ", more than ovpool's limit of 2^40 (", kMaxElements, ")");
        known.push_back(d);
    }
    if (ovpool::shape_elements(known.data(), static_cast<int>(known.size())) >= 0)
        return;
    const double elements = known_elements(shape);
    std::ostringstream bytes;
    if (type.is_static() && type.size() > 0)
        bytes << " (" << elements * static_cast<double>(type.size()) << " bytes of "
              << type.get_type_name() << ")";
    NODE_VALIDATION_CHECK(node, false, what, " ", shape_text(shape), " would hold ", elements,
                          " elements", bytes.str(), ", more than ovpool's limit of 2^40 (",
                          kMaxElements, ") elements");
}

void set_checked_output(ov::Node *node, size_t port, const ov::element::Type &type,
                        const ov::PartialShape &shape) {
    const std::string what = "output " + std::to_string(port);
    check_elements(node, what, shape, type);
    if (shape.is_static() && type.is_static()) {
        const int64_t elements = static_cast<int64_t>(ov::shape_size(shape.to_shape()));
        check_budget(node_label(node),
                     what + " " + shape_text(shape) + " of " + type.get_type_name(),
                     elements * static_cast<int64_t>(type.size()));
    }
    node->set_output_type(port, type, shape);
}

// ---------------------------------------------------------------------------
// Geometry
// ---------------------------------------------------------------------------

ovpool::Lowered lower_node(const ov::Node *node, const ovpool::PoolAttrs &attrs,
                           const ov::PartialShape &data, const ov::element::Type &type) {
    int64_t dims[5];
    const int rank = static_cast<int>(data.size());
    for (int i = 0; i < rank && i < 5; i++)
        dims[i] = data[i].is_static() ? data[i].get_length() : -1;
    ovpool::DType dtype = ovpool::DType::f32;
    if (type.is_static())
        dtype_of(type, dtype);
    try {
        return ovpool::lower(attrs, dtype, rank, dims);
    } catch (const ovpool::LoweringError &exc) {
        NODE_VALIDATION_CHECK(node, false, exc.what());
    }
    return {};
}

ov::PartialShape lowered_shape(const ovpool::Lowered &lowered) {
    std::vector<ov::Dimension> dims;
    for (int i = 0; i < lowered.rank; i++)
        dims.emplace_back(lowered.out_shape[i] >= 0 ? ov::Dimension(lowered.out_shape[i])
                                                    : ov::Dimension::dynamic());
    return ov::PartialShape(dims);
}

bool constant_ints(const ov::Output<ov::Node> &value, std::vector<int64_t> &out, size_t max_count) {
    auto node = value.get_node_shared_ptr();
    if (auto convert = ov::as_type_ptr<ov::op::v0::Convert>(node)) {
        if (!convert->get_destination_type().is_integral_number())
            return false;
        node = convert->input_value(0).get_node_shared_ptr();
    }
    auto constant = ov::as_type_ptr<ov::op::v0::Constant>(node);
    if (!constant || !constant->get_element_type().is_integral_number() ||
        ov::shape_size(constant->get_shape()) > max_count)
        return false;
    out = constant->cast_vector<int64_t>();
    return true;
}

std::vector<int64_t> tensor_ints(const ov::Tensor &tensor) {
    const size_t n = tensor.get_size();
    std::vector<int64_t> out(n);
    const auto type = tensor.get_element_type();
    const void *data = tensor.data();
#define OVPOOL_CASE(ET, T)                         \
    if (type == ov::element::ET) {                 \
        const T *p = static_cast<const T *>(data); \
        for (size_t i = 0; i < n; i++)             \
            out[i] = static_cast<int64_t>(p[i]);   \
        return out;                                \
    }
    OVPOOL_CASE(i64, int64_t)
    OVPOOL_CASE(i32, int32_t)
    OVPOOL_CASE(i16, int16_t)
    OVPOOL_CASE(i8, int8_t)
    OVPOOL_CASE(u64, uint64_t)
    OVPOOL_CASE(u32, uint32_t)
    OVPOOL_CASE(u16, uint16_t)
    OVPOOL_CASE(u8, uint8_t)
#undef OVPOOL_CASE
    OPENVINO_THROW("ovpool: expected an integer tensor, got ", type.get_type_name());
}

void shape_output(ov::Tensor &tensor, const ov::Shape &shape, const std::string &op) {
    if (tensor.get_shape() == shape)
        return;
    // (the shapes evaluate computes are within 2^40 per dim)
    const std::vector<int64_t> dims(shape.begin(), shape.end());
    const int64_t elements = ovpool::shape_elements(dims.data(), static_cast<int>(dims.size()));
    OPENVINO_ASSERT(elements >= 0, "ovpool ", op, ": an output of shape ", shape,
                    " is past ovpool's limit of 2^40 (", kMaxElements, ") elements");
    const int64_t bytes = elements * static_cast<int64_t>(tensor.get_element_type().size());
    check_budget(op, "an output of shape " + shape_text(ov::PartialShape(shape)), bytes);
    try {
        tensor.set_shape(shape);
    } catch (const std::bad_alloc &) {
        OPENVINO_THROW("ovpool ", op, ": cannot allocate ", bytes, " bytes for an output of shape ",
                       shape);
    }
}

}  // namespace ovpool_openvino
