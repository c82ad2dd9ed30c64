// The opset "ovpool" as data: its op table, generated when the library is
// built from ovpool/opset.json (the schema ovpool's layer table reads too,
// ovpool/_opset.py), and the attribute values of one node.
//
// An op is its table row: type name, form (how its inputs are read and its
// shape inferred), the kernel core's semantics and family, its attributes
// (IR name, kind, default, per-axis fill), its inputs (each with the element
// types it takes) and its outputs (each typed like the data input, by an
// attribute, or fixed). ops.hpp makes one op class of each row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "openvino/core/attribute_visitor.hpp"
#include "openvino/core/type/element_type.hpp"
#include "ovpool/lower.hpp"

namespace ovpool_openvino {

enum class AttrKind { int_, float_, bool_, str, ints, etype };

// window: one data input, fixed windows; adaptive: data and output_size;
// global: data, one bin per axis; unpool: ONNX MaxUnpool.
enum class Form { window, adaptive, global, unpool };

struct AttrSchema {
    const char *name;  // as written in IR
    AttrKind kind;
    bool required;
    // the default of its kind (a list attribute's is empty)
    int64_t int_default;
    double float_default;
    bool bool_default;
    const char *str_default;
    ov::element::Type_t etype_default;
    int per_axis;  // a list: entries per spatial axis (0: not per axis)
    int64_t fill;  // the value of each such entry when the list is left out
    bool spatial;  // its length is the spatial rank
};

// The element types an input takes, and how a message names them.
struct TypeSet {
    const ov::element::Type_t *types;
    size_t count;
    const char *text;

    bool contains(const ov::element::Type &t) const {
        for (size_t i = 0; i < count; i++)
            if (t == types[i])
                return true;
        return false;
    }
};

struct InputSchema {
    const char *name;
    TypeSet types;
    bool value;     // shape inference reads its values when they are constant
    bool optional;  // trailing, may be left out
};

// data: the data input's element type; attribute: the value of attribute
// `attr`, which must be one of `types`; fixed: `fixed`.
enum class OutputRule { data, attribute, fixed };

struct OutputSchema {
    const char *name;
    OutputRule rule;
    int attr;
    ov::element::Type_t fixed;
    TypeSet types;
};

struct OpSchema {
    const char *type;
    Form form;
    ovpool::Semantics semantics;
    ovpool::Family family;
    const AttrSchema *attrs;
    size_t n_attrs;
    const InputSchema *inputs;
    size_t n_inputs;
    const OutputSchema *outputs;
    size_t n_outputs;
    int spatial;  // the attribute whose length is the spatial rank, -1: none
};

// An element type a data input takes, and the kernel core's of the same name.
struct CoreType {
    ov::element::Type_t type;
    ovpool::DType dtype;
};

#include "opset_table.inc"  // OpId, kOpset, kCoreTypes (generated)

inline const OpSchema &schema_of(OpId id) {
    return kOpset[static_cast<size_t>(id)];
}

// The kernel core's element type of t; false for a type no kernel takes.
bool dtype_of(const ov::element::Type &t, ovpool::DType &dtype);

// One attribute's value; the field of its kind is the one used.
struct AttrValue {
    int64_t i = 0;
    double f = 0;
    bool b = false;
    std::string s;
    std::vector<int64_t> ints;
    ov::element::Type etype;
};

// The attribute values of one node of an op, in the schema's order,
// starting from the defaults.
class Attrs {
  public:
    explicit Attrs(const OpSchema &op);

    const OpSchema &op() const { return *m_op; }
    size_t size() const { return m_values.size(); }
    AttrValue &operator[](size_t i) { return m_values[i]; }
    const AttrValue &operator[](size_t i) const { return m_values[i]; }
    // The value of the attribute named `name` (the op must have it).
    AttrValue &at(const std::string &name);
    const AttrValue &at(const std::string &name) const;
    bool has(const std::string &name) const;

    // The spatial rank the attributes give: the length of the spatial
    // attribute (0 where the op has none or it is empty).
    size_t n_spatial() const;
    // Per-axis lists left empty spelled out with their fill value for the
    // spatial rank (OpenVINO's attribute visitor writes "" for an empty
    // list, which readers then cannot tell apart from a missing attribute).
    void materialize();
    // Each attribute, in the schema's order, to `visitor` (save and read).
    void visit(ov::AttributeVisitor &visitor);

  private:
    int find(const std::string &name) const;

    const OpSchema *m_op;
    std::vector<AttrValue> m_values;
};

// The attributes of op `id` at their defaults.
inline Attrs attrs_of(OpId id) {
    return Attrs(schema_of(id));
}

// The attributes lowered into what the kernel core's lowering takes
// (lower.hpp): each attribute's meaning, once for every op that has it.
// A bad spelling of a string attribute throws the lowering's error.
ovpool::PoolAttrs pool_attrs(const Attrs &attrs);

// Whether pool_attrs knows what the attribute `name` means (every attribute
// of the schema must be known: the library checks it when it loads).
bool lowering_knows(const std::string &name);

}  // namespace ovpool_openvino
