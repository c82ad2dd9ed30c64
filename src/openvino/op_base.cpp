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

std::shared_ptr<const Plan> PoolOp::plan_for(const Spec &spec) const {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        for (const auto &entry : m_plans)
            if (entry.first == spec)
                return entry.second;
    }
    // built outside the lock: a large plan takes milliseconds, and two
    // streams building the same one only waste a little work
    check_budget(label(), "the window tables", table_bytes(spec));
    std::shared_ptr<const Plan> plan;
    try {
        plan = make_plan(spec);
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

void PoolOp::run(const Spec &spec, const ov::Tensor &x, ov::Tensor &out,
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
    const bool bf16 = spec.dtype == kBF16;
    plan->widen(static_cast<const uint16_t *>(x.data()), wide_in.data(), n_in, bf16);
    run_plan(*plan, wide_in.data(), wide_out.data(), index_data, label());
    plan->narrow(wide_out.data(), static_cast<uint16_t *>(out.data()), n_out, bf16);
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

int32_t dtype_code(const ov::element::Type &t) {
    if (t == ov::element::f32)
        return kF32;
    if (t == ov::element::f64)
        return kF64;
    if (t == ov::element::f16)
        return kF16;
    if (t == ov::element::bf16)
        return kBF16;
    if (t == ov::element::i8)
        return kI8;
    if (t == ov::element::u8)
        return kU8;
    return -1;
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

std::vector<int64_t> per_axis(const ov::Node *node, const std::string &name,
                              const std::vector<int64_t> &values, size_t n, int64_t fill,
                              int64_t minimum, size_t per) {
    if (values.empty())
        return std::vector<int64_t>(n * per, fill);
    NODE_VALIDATION_CHECK(node, values.size() == n * per, "attribute ", name, "=",
                          ints_text(values), " must have ", n * per, " entries for ", n,
                          " spatial dims");
    for (int64_t v : values) {
        NODE_VALIDATION_CHECK(node, v >= minimum, "attribute ", name, "=", ints_text(values),
                              ": every entry must be >= ", minimum);
        NODE_VALIDATION_CHECK(node, v <= kMaxElements, "attribute ", name, "=", ints_text(values),
                              " is absurdly large");
    }
    return values;
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

FixedGeometry fixed_geometry(const ov::Node *node, const ov::PartialShape &data,
                             const std::vector<int64_t> &kernel,
                             const std::vector<int64_t> &strides,
                             const std::vector<int64_t> &dilations,
                             const std::vector<int64_t> &pads_begin,
                             const std::vector<int64_t> &pads_end, ovpool::AutoPad auto_pad,
                             ovpool::Rounding rounding) {
    FixedGeometry g;
    g.n = kernel.size();
    g.rank_known = data.rank().is_static();
    g.is_static = g.rank_known;
    for (size_t a = 0; a < g.n; a++) {
        const int64_t ek = (kernel[a] - 1) * dilations[a] + 1;
        NODE_VALIDATION_CHECK(node, kernel[a] <= 4 * kMaxElements / dilations[a],
                              "the dilated kernel (", kernel[a], " taps, dilation ", dilations[a],
                              ") is absurdly large");
        if (!g.rank_known || data[2 + a].is_dynamic()) {
            g.is_static = false;
            g.out.emplace_back(ov::Dimension::dynamic());
            continue;
        }
        const int64_t n_in = data[2 + a].get_length();
        const ovpool::AxisSize size =
            ovpool::axis_output_size(n_in, kernel[a], strides[a], dilations[a], pads_begin[a],
                                     pads_end[a], auto_pad, rounding);
        NODE_VALIDATION_CHECK(node, size.n_out >= 1, "the window does not fit along spatial axis ",
                              a, ": input size ", n_in, " with pads (", size.pad_begin, ", ",
                              size.pad_end, ") is smaller than the dilated kernel ", ek,
                              " (kernel=", ints_text(kernel), ", dilations=", ints_text(dilations),
                              ")");
        NODE_VALIDATION_CHECK(node, size.n_out <= kMaxElements, "the output size ", size.n_out,
                              " along spatial axis ", a, " is absurdly large");
        g.out.emplace_back(size.n_out);
        Axis axis;
        axis.n_in = n_in;
        axis.n_out = size.n_out;
        axis.kernel = kernel[a];
        axis.stride = strides[a];
        axis.dilation = dilations[a];
        axis.pad_begin = size.pad_begin;
        axis.pad_end = size.pad_end;
        g.axes.push_back(axis);
    }
    return g;
}

bool has_empty_window(const FixedGeometry &g) {
    for (const Axis &a : g.axes)
        if (ovpool::axis_has_empty_window(a.n_in, a.n_out, a.kernel, a.stride, a.dilation,
                                          a.pad_begin))
            return true;
    return false;
}

ov::PartialShape pool_shape(const ov::PartialShape &data, const FixedGeometry &g) {
    std::vector<ov::Dimension> dims;
    if (g.rank_known) {
        dims.push_back(data[0]);
        dims.push_back(data[1]);
    } else {
        dims.emplace_back(ov::Dimension::dynamic());
        dims.emplace_back(ov::Dimension::dynamic());
    }
    dims.insert(dims.end(), g.out.begin(), g.out.end());
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

Spec base_spec(int32_t family, const ov::element::Type &type, const ov::Shape &data) {
    Spec spec;
    spec.family = family;
    spec.dtype = dtype_code(type);
    OPENVINO_ASSERT(spec.dtype >= 0, "ovpool: no kernel for ", type.get_type_name(), " data");
    OPENVINO_ASSERT(data.size() >= 3 && data.size() <= 5, "ovpool: data of rank ", data.size());
    spec.n = static_cast<int64_t>(data[0]);
    spec.c = static_cast<int64_t>(data[1]);
    spec.n_spatial = static_cast<int>(data.size()) - 2;
    return spec;
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
