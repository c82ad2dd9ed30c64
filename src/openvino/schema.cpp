// schema.hpp: the attribute values of a node, and their lowering.
#include "schema.hpp"

#include "openvino/core/except.hpp"

namespace ovpool_openvino {

bool dtype_of(const ov::element::Type &t, ovpool::DType &dtype) {
    for (const CoreType &c : kCoreTypes)
        if (t == c.type) {
            dtype = c.dtype;
            return true;
        }
    return false;
}

Attrs::Attrs(const OpSchema &op) : m_op(&op), m_values(op.n_attrs) {
    for (size_t i = 0; i < op.n_attrs; i++) {
        const AttrSchema &a = op.attrs[i];
        AttrValue &v = m_values[i];
        v.i = a.int_default;
        v.f = a.float_default;
        v.b = a.bool_default;
        v.s = a.str_default;
        v.etype = a.etype_default;
    }
}

int Attrs::find(const std::string &name) const {
    for (size_t i = 0; i < m_op->n_attrs; i++)
        if (name == m_op->attrs[i].name)
            return static_cast<int>(i);
    return -1;
}

bool Attrs::has(const std::string &name) const {
    return find(name) >= 0;
}

AttrValue &Attrs::at(const std::string &name) {
    const int i = find(name);
    OPENVINO_ASSERT(i >= 0, "ovpool: ", m_op->type, " has no attribute ", name);
    return m_values[static_cast<size_t>(i)];
}

const AttrValue &Attrs::at(const std::string &name) const {
    return const_cast<Attrs *>(this)->at(name);
}

size_t Attrs::n_spatial() const {
    return m_op->spatial < 0 ? 0 : m_values[static_cast<size_t>(m_op->spatial)].ints.size();
}

void Attrs::materialize() {
    const size_t n = n_spatial();
    if (n == 0)
        return;
    for (size_t i = 0; i < m_op->n_attrs; i++) {
        const AttrSchema &a = m_op->attrs[i];
        std::vector<int64_t> &values = m_values[i].ints;
        if (a.kind == AttrKind::ints && a.per_axis > 0 && !a.spatial && values.empty())
            values.assign(n * static_cast<size_t>(a.per_axis), a.fill);
    }
}

void Attrs::visit(ov::AttributeVisitor &visitor) {
    for (size_t i = 0; i < m_op->n_attrs; i++) {
        const char *name = m_op->attrs[i].name;
        AttrValue &v = m_values[i];
        switch (m_op->attrs[i].kind) {
            case AttrKind::int_:
                visitor.on_attribute(name, v.i);
                break;
            case AttrKind::float_:
                visitor.on_attribute(name, v.f);
                break;
            case AttrKind::bool_:
                visitor.on_attribute(name, v.b);
                break;
            case AttrKind::str:
                visitor.on_attribute(name, v.s);
                break;
            case AttrKind::ints:
                visitor.on_attribute(name, v.ints);
                break;
            case AttrKind::etype:
                visitor.on_attribute(name, v.etype);
                break;
        }
    }
}

namespace {

using ovpool::PoolAttrs;

// What each attribute means to the kernel core's lowering, by its IR name.
// A new attribute of the schema is one row here (and its run in
// ovpool/layers.py).
struct Lowering {
    const char *name;
    void (*apply)(const AttrValue &v, PoolAttrs &a);
};

const Lowering kLowerings[] = {
    {"kernel", [](const AttrValue &v, PoolAttrs &a) { a.kernel = v.ints; }},
    {"kernel_shape", [](const AttrValue &v, PoolAttrs &a) { a.kernel = v.ints; }},
    {"strides", [](const AttrValue &v, PoolAttrs &a) { a.strides = v.ints; }},
    {"dilations", [](const AttrValue &v, PoolAttrs &a) { a.dilations = v.ints; }},
    {"pads", [](const AttrValue &v, PoolAttrs &a) { a.pads = v.ints; }},
    {"pads_begin", [](const AttrValue &v, PoolAttrs &a) { a.pads_begin = v.ints; }},
    {"pads_end", [](const AttrValue &v, PoolAttrs &a) { a.pads_end = v.ints; }},
    {"auto_pad",
     [](const AttrValue &v, PoolAttrs &a) { a.auto_pad = ovpool::parse_auto_pad(v.s); }},
    {"rounding_type",
     [](const AttrValue &v, PoolAttrs &a) { a.rounding = ovpool::parse_rounding(v.s); }},
    // ONNX's ceil_mode is OpenVINO's ceil_torch
    {"ceil_mode",
     [](const AttrValue &v, PoolAttrs &a) {
         a.rounding = v.b ? ovpool::Rounding::ceil_torch : ovpool::Rounding::floor;
     }},
    {"exclude-pad", [](const AttrValue &v, PoolAttrs &a) { a.count_pads = !v.b; }},
    {"count_include_pad", [](const AttrValue &v, PoolAttrs &a) { a.count_pads = v.b; }},
    {"storage_order", [](const AttrValue &v, PoolAttrs &a) { a.storage_order = v.i; }},
    {"axis", [](const AttrValue &v, PoolAttrs &a) { a.axis = v.i; }},
    {"p", [](const AttrValue &v, PoolAttrs &a) { a.p = v.f; }},
    {"index_element_type",
     [](const AttrValue &v, PoolAttrs &a) {
         a.index_type =
             v.etype == ov::element::i32 ? ovpool::IndexType::i32 : ovpool::IndexType::i64;
     }},
    // MaxUnpool's own (max_unpool.cpp): nothing of a pool
    {"indices_relative_to", [](const AttrValue &, PoolAttrs &) {}},
};

const Lowering *lowering_of(const std::string &name) {
    for (const Lowering &l : kLowerings)
        if (name == l.name)
            return &l;
    return nullptr;
}

}  // namespace

bool lowering_knows(const std::string &name) {
    return lowering_of(name) != nullptr;
}

ovpool::PoolAttrs pool_attrs(const Attrs &attrs) {
    const OpSchema &op = attrs.op();
    ovpool::PoolAttrs a;
    a.semantics = op.semantics;
    a.family = op.family;
    a.adaptive = op.form == Form::adaptive || op.form == Form::global;
    a.global_pool = op.form == Form::global;  // one bin per axis: the whole plane
    for (size_t i = 0; i < op.n_attrs; i++) {
        const Lowering *l = lowering_of(op.attrs[i].name);
        if (l != nullptr)  // (every attribute has one: the library checks at load)
            l->apply(attrs[i], a);
    }
    return a;
}

}  // namespace ovpool_openvino
