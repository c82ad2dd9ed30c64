// SchemaOp: what every op of the table does from its row (ops.hpp).
#include <sstream>
#include <utility>

#include "node_helpers.hpp"
#include "openvino/core/op_extension.hpp"
#include "ops.hpp"

namespace ovpool_openvino {

SchemaOp::SchemaOp(const ov::OutputVector &args, Attrs attrs)
    : ov::op::Op(args), m_attrs(std::move(attrs)) {
    m_attrs.materialize();
}

std::string SchemaOp::label() const {
    return std::string(get_type_info().name) + " (" + get_friendly_name() + ")";
}

bool SchemaOp::visit_attributes(ov::AttributeVisitor &visitor) {
    m_attrs.materialize();
    m_attrs.visit(visitor);
    m_attrs.materialize();
    return true;
}

ov::element::Type SchemaOp::index_type() const {
    if (op().n_outputs < 2)
        return ov::element::dynamic;
    const OutputSchema &o = op().outputs[1];
    return o.rule == OutputRule::attribute ? m_attrs[static_cast<size_t>(o.attr)].etype
                                           : ov::element::Type(o.fixed);
}

void SchemaOp::check_types() {
    const OpSchema &s = op();
    size_t required = 0;
    std::string names;
    for (size_t k = 0; k < s.n_inputs; k++) {
        required += s.inputs[k].optional ? 0 : 1;
        names += (k ? ", " : "") + std::string(s.inputs[k].name);
    }
    const size_t n = get_input_size();
    const std::string count = required == s.n_inputs
                                  ? std::to_string(required)
                                  : std::to_string(required) + " to " + std::to_string(s.n_inputs);
    NODE_VALIDATION_CHECK(this, n >= required && n <= s.n_inputs, "takes ", count,
                          s.n_inputs == 1 ? " input" : " inputs (" + names + ")", ", got ", n);
    // (a dynamic type passes: the PyTorch frontend types its graph after conversion)
    for (size_t k = 0; k < n; k++) {
        const InputSchema &in = s.inputs[k];
        const ov::element::Type t = get_input_element_type(k);
        if (t.is_dynamic() || in.types.contains(t))
            continue;
        if (k == 0)
            NODE_VALIDATION_CHECK(this, false, "ovpool runs ", get_type_info().name, " on ",
                                  in.types.text, " ", in.name, ", not ", t.get_type_name());
        NODE_VALIDATION_CHECK(this, false, in.name, " must be ", in.types.text, ", got ",
                              t.get_type_name());
    }
    for (size_t j = 0; j < s.n_outputs; j++) {
        const OutputSchema &o = s.outputs[j];
        if (o.rule != OutputRule::attribute)
            continue;
        const ov::element::Type t = m_attrs[static_cast<size_t>(o.attr)].etype;
        NODE_VALIDATION_CHECK(this, o.types.contains(t), "ovpool writes ", o.types.text, " ",
                              o.name, ", not ", t.get_type_name());
    }
}

void SchemaOp::validate_and_infer_types() {
    check_types();
    if (op().form == Form::adaptive) {
        infer_adaptive();
        return;
    }
    if (op().form == Form::unpool) {
        infer_unpool();
        return;
    }
    ovpool::PoolAttrs a;
    try {
        a = pool_attrs(m_attrs);
    } catch (const ovpool::LoweringError &exc) {
        NODE_VALIDATION_CHECK(this, false, exc.what());
    }
    infer_pool(a, m_attrs.n_spatial());  // (a global pool's: 0, any rank)
}

bool SchemaOp::has_evaluate() const {
    const auto t = get_input_element_type(0);
    return t.is_dynamic() || op().inputs[0].types.contains(t);
}

bool SchemaOp::evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const {
    if (op().form == Form::unpool)
        return evaluate_unpool(outputs, inputs);
    ovpool::PoolAttrs a;
    try {
        a = pool_attrs(m_attrs);
    } catch (const ovpool::LoweringError &exc) {
        OPENVINO_THROW("ovpool ", label(), ": ", exc.what());
    }
    if (op().form == Form::adaptive)
        a.output_size = output_size_values(inputs);
    return evaluate_pool(std::move(a), outputs, inputs);
}

// ---------------------------------------------------------------------------
// Pools: shape inference, evaluate, plans
// ---------------------------------------------------------------------------

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

std::shared_ptr<const Plan> SchemaOp::plan_for(const PoolSpec &spec) const {
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

bool SchemaOp::output_read(size_t port) const {
    int read = m_output_read.load(std::memory_order_relaxed);
    if (read < 0) {
        // every caller computes the same answer: concurrent first calls agree
        read = get_output_size() > port && !output(port).get_target_inputs().empty() ? 1 : 0;
        m_output_read.store(read, std::memory_order_relaxed);
    }
    return read == 1;
}

void SchemaOp::run(const PoolSpec &spec, const ov::Tensor &x, ov::Tensor &out,
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

std::string SchemaOp::source_text(const ovpool::PoolAttrs &a) const {
    if (a.adaptive)
        return a.output_size.empty() ? "" : "output_size=" + ints_text(a.output_size);
    return std::string(op().attrs[op().spatial].name) + "=" + ints_text(a.kernel);
}

void SchemaOp::infer_pool(const ovpool::PoolAttrs &a, size_t n_spatial) {
    const ov::PartialShape data = get_input_partial_shape(0);
    const ov::element::Type type = get_input_element_type(0);
    ov::PartialShape shape = ov::PartialShape::dynamic(
        n_spatial > 0 ? static_cast<int64_t>(n_spatial) + 2 : ov::Rank::dynamic());
    if (split_nc(this, data, n_spatial, source_text(a), op().inputs[0].name))
        shape = lowered_shape(lower_node(this, a, data, type));
    set_checked_output(this, 0, type, shape);
    const ov::element::Type indices = index_type();
    if (indices.is_static())
        set_checked_output(this, 1, indices, shape);
}

bool SchemaOp::evaluate_pool(ovpool::PoolAttrs a, ov::TensorVector &outputs,
                             const ov::TensorVector &inputs) const {
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
    split_nc(this, ov::PartialShape(data), 0, "", op().inputs[0].name);
    const ovpool::Lowered lowered =
        lower_node(this, a, ov::PartialShape(data), inputs[0].get_element_type());
    const ov::Shape out_shape(lowered.out_shape, lowered.out_shape + lowered.rank);
    shape_output(outputs[0], out_shape, label());
    if (with_indices)
        shape_output(outputs[1], out_shape, label());
    run(lowered.spec, inputs[0], outputs[0], with_indices ? &outputs[1] : nullptr);
    return true;
}

// ---------------------------------------------------------------------------
// The op classes of the table
// ---------------------------------------------------------------------------

namespace {

template <size_t... I>
std::shared_ptr<SchemaOp> make_indexed(size_t id, const ov::OutputVector &args, Attrs attrs,
                                       std::index_sequence<I...>) {
    using Maker = std::shared_ptr<SchemaOp> (*)(const ov::OutputVector &, Attrs);
    static const Maker makers[] = {[](const ov::OutputVector &a, Attrs v) {
        return std::shared_ptr<SchemaOp>(std::make_shared<Op<static_cast<OpId>(I)>>(a, v));
    }...};
    return makers[id](args, std::move(attrs));
}

template <size_t... I>
std::vector<ov::Extension::Ptr> extensions_of(std::index_sequence<I...>) {
    return {std::make_shared<ov::OpExtension<Op<static_cast<OpId>(I)>>>()...};
}

}  // namespace

std::shared_ptr<SchemaOp> make_op(OpId id, const ov::OutputVector &args, Attrs attrs) {
    OPENVINO_ASSERT(&attrs.op() == &schema_of(id), "ovpool: attributes of ", attrs.op().type,
                    " for a ", schema_of(id).type);
    return make_indexed(static_cast<size_t>(id), args, std::move(attrs),
                        std::make_index_sequence<kOpCount>());
}

std::vector<ov::Extension::Ptr> op_extensions() {
    for (const OpSchema &op : kOpset)
        for (size_t i = 0; i < op.n_attrs; i++)
            OPENVINO_ASSERT(lowering_knows(op.attrs[i].name), "ovpool: the attribute ",
                            op.attrs[i].name, " of ", op.type, " has no lowering (schema.cpp)");
    return extensions_of(std::make_index_sequence<kOpCount>());
}

}  // namespace ovpool_openvino
