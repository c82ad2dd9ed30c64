// PoolOp (the plan cache, evaluate's shared steps) and geometry.hpp.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <sstream>

#include "geometry.hpp"
#include "openvino/op/constant.hpp"
#include "openvino/op/convert.hpp"
#include "ops.hpp"

namespace ovpool_openvino {

// ---------------------------------------------------------------------------
// PoolOp
// ---------------------------------------------------------------------------

std::string PoolOp::label() const {
    return std::string(get_type_info().name) + " (" + get_friendly_name() + ")";
}

namespace {

bool same_axis(const ovpool::AxisSpec &a, const ovpool::AxisSpec &b) {
    return a.n_in == b.n_in && a.n_out == b.n_out && a.adaptive == b.adaptive &&
           a.kernel == b.kernel && a.stride == b.stride && a.dilation == b.dilation &&
           a.pad_begin == b.pad_begin && a.pad_end == b.pad_end && a.divisor == b.divisor;
}

bool same_spec(const PoolSpec &a, const PoolSpec &b) {
    if (!(a.family == b.family && a.dtype == b.dtype && a.n == b.n && a.c == b.c &&
          a.n_spatial == b.n_spatial && a.p == b.p && a.index_type == b.index_type &&
          a.planes_per_index_space == b.planes_per_index_space &&
          a.column_major == b.column_major && a.index_modulo == b.index_modulo))
        return false;
    for (int s = 0; s < a.n_spatial; s++)
        if (!same_axis(a.axes[s], b.axes[s]))
            return false;
    return true;
}

}  // namespace

std::shared_ptr<const Plan> PoolOp::plan_for(const PoolSpec &spec) const {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        for (const auto &entry : m_plans)
            if (same_spec(entry.first, spec))
                return entry.second;
    }
    // built outside the lock: a large plan takes milliseconds, and two
    // streams building the same one only waste a little work
    check_budget(label(), "the window tables", ovpool::window_table_bytes(spec));
    std::shared_ptr<const Plan> plan;
    try {
        plan = ovpool_openvino::make_plan(spec);
    } catch (const std::bad_alloc &) {
        OPENVINO_THROW("ovpool ", label(), ": cannot allocate the window tables");
    } catch (const std::exception &exc) {
        OPENVINO_THROW("ovpool ", label(), ": ", exc.what());
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_plans.size() >= kCacheSize)
        m_plans.erase(m_plans.begin());
    m_plans.emplace_back(spec, plan);
    return plan;
}

bool PoolOp::output_read(size_t port) const {
    int read = m_output_read.load(std::memory_order_relaxed);
    if (read < 0) {
        // every caller computes the same answer: concurrent first calls agree
        read = get_output_size() > port && !output(port).get_target_inputs().empty() ? 1 : 0;
        m_output_read.store(read, std::memory_order_relaxed);
    }
    return read == 1;
}

void PoolOp::run(const PoolSpec &spec, const ov::Tensor &x, ov::Tensor &out,
                 ov::Tensor *indices) const {
    const auto plan = plan_for(spec);
    void *index_data = indices != nullptr ? indices->data() : nullptr;
    if (!plan->widen_input()) {
        run_plan(*plan, x.data(), out.data(), index_data, label());
        return;
    }
    // a 16-bit input whose per-thread scratch would be too large: widened to
    // float32 as a whole, computed, rounded back (the Python layer's rule)
    const int64_t n_in = static_cast<int64_t>(x.get_size()),
                  n_out = static_cast<int64_t>(out.get_size());
    check_budget(label(), "a float32 copy of the 16-bit input and output", 4 * (n_in + n_out));
    std::vector<float> wide_in, wide_out;
    try {
        wide_in.resize(static_cast<size_t>(n_in));
        wide_out.resize(static_cast<size_t>(n_out));
    } catch (const std::bad_alloc &) {
        OPENVINO_THROW("ovpool ", label(), ": cannot allocate ", 4 * (n_in + n_out),
                       " bytes for a float32 copy of the 16-bit input and output");
    }
    const bool bf16 = spec.dtype == ovpool::DType::bf16;
    plan->widen(static_cast<const uint16_t *>(x.data()), wide_in.data(), n_in, bf16);
    run_plan(*plan, wide_in.data(), wide_out.data(), index_data, label());
    plan->narrow(wide_out.data(), static_cast<uint16_t *>(out.data()), n_out, bf16);
}

void PoolOp::infer_pool(const std::function<ovpool::PoolAttrs()> &attrs, size_t n_spatial,
                        const ov::element::Type &index_type) {
    const ov::PartialShape data = get_input_partial_shape(0);
    const ov::element::Type type = get_input_element_type(0);
    ovpool::PoolAttrs a;
    try {
        a = attrs();
    } catch (const ovpool::LoweringError &exc) {
        NODE_VALIDATION_CHECK(this, false, exc.what());
    }
    ov::PartialShape shape = ov::PartialShape::dynamic(
        n_spatial > 0 ? static_cast<int64_t>(n_spatial) + 2 : ov::Rank::dynamic());
    if (split_nc(this, data, n_spatial, source_text(a), role_name(a)))
        shape = lowered_shape(lower_node(this, a, data, type));
    set_checked_output(this, 0, type, shape);
    if (index_type.is_static())
        set_checked_output(this, 1, index_type, shape);
}

bool PoolOp::evaluate_pool(const std::function<ovpool::PoolAttrs()> &attrs,
                           ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    ovpool::PoolAttrs a;
    try {
        a = attrs();
    } catch (const ovpool::LoweringError &exc) {
        OPENVINO_THROW("ovpool ", label(), ": ", exc.what());
    }
    // a max pool's indices cost many times its values: computed only when a
    // consumer reads them, in the element type OpenVINO allocated (the CPU
    // plugin may narrow i64)
    const bool with_indices =
        a.family == ovpool::Family::argmax && outputs.size() > 1 && output_read(1);
    if (a.family == ovpool::Family::argmax && !with_indices)
        a.family = ovpool::Family::max;
    if (with_indices) {
        const auto t = outputs[1].get_element_type();
        OPENVINO_ASSERT(t == ov::element::i32 || t == ov::element::i64, "ovpool ", label(),
                        ": indices of type ", t.get_type_name());
        a.index_type = t == ov::element::i64 ? ovpool::IndexType::i64 : ovpool::IndexType::i32;
    }
    const ov::Shape data = inputs[0].get_shape();
    split_nc(this, ov::PartialShape(data), 0, "", role_name(a));
    const ovpool::Lowered lowered =
        lower_node(this, a, ov::PartialShape(data), inputs[0].get_element_type());
    const ov::Shape out_shape(lowered.out_shape, lowered.out_shape + lowered.rank);
    shape_output(outputs[0], out_shape, label());
    if (with_indices)
        shape_output(outputs[1], out_shape, label());
    run(lowered.spec, inputs[0], outputs[0], with_indices ? &outputs[1] : nullptr);
    return true;
}

std::string PoolOp::source_text(const ovpool::PoolAttrs &a) {
    if (a.adaptive)
        return a.output_size.empty() ? "" : "output_size=" + ints_text(a.output_size);
    return (a.semantics == ovpool::Semantics::onnx ? "kernel_shape=" : "kernel=") +
           ints_text(a.kernel);
}

std::string PoolOp::role_name(const ovpool::PoolAttrs &a) {
    return a.semantics == ovpool::Semantics::onnx && !a.adaptive ? "X" : "data";
}

// ---------------------------------------------------------------------------
// Types and attributes
// ---------------------------------------------------------------------------

bool is_float_type(const ov::element::Type &t) {
    return t == ov::element::f32 || t == ov::element::f64 || t == ov::element::f16 ||
           t == ov::element::bf16;
}

bool is_max_type(const ov::element::Type &t) {
    return is_float_type(t) || t == ov::element::i8 || t == ov::element::u8;
}

bool dtype_of(const ov::element::Type &t, ovpool::DType &dtype) {
    if (t == ov::element::f32)
        dtype = ovpool::DType::f32;
    else if (t == ov::element::f64)
        dtype = ovpool::DType::f64;
    else if (t == ov::element::f16)
        dtype = ovpool::DType::f16;
    else if (t == ov::element::bf16)
        dtype = ovpool::DType::bf16;
    else if (t == ov::element::i8)
        dtype = ovpool::DType::i8;
    else if (t == ov::element::u8)
        dtype = ovpool::DType::u8;
    else
        return false;
    return true;
}

void require_type(const ov::Node *node, const ov::element::Type &t, bool max_types,
                  const std::string &role) {
    NODE_VALIDATION_CHECK(node, t.is_dynamic() || (max_types ? is_max_type(t) : is_float_type(t)),
                          "ovpool runs ", node->get_type_info().name, " on ",
                          max_types ? "f16/bf16/f32/f64/i8/u8" : "f16/bf16/f32/f64", " ", role,
                          ", not ", t.get_type_name());
}

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

void fill_empty(std::vector<int64_t> &values, size_t n, int64_t fill) {
    if (values.empty() && n > 0)
        values.assign(n, fill);
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
