// What the ops share to read their attributes and inputs and to infer their
// output shapes. The window arithmetic itself is the kernel core's
// (plan.hpp), never a second copy: the output sizes of fixed windows
// (explicit pads, auto_pad, floor / ceil / ceil_torch, dilations), the
// adaptive bins and MaxUnpool's default size.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "kernel.hpp"
#include "openvino/core/node.hpp"
#include "openvino/core/partial_shape.hpp"
#include "ovpool/plan.hpp"

namespace ovpool_openvino {

// The largest attribute value, dim or element count ovpool accepts (the
// core's 2^40, as ovpool.shapes).
using ovpool::limits::kMaxElements;

// Element types: floats (every pool) and 8-bit integers (the max pools).
bool is_float_type(const ov::element::Type &t);
bool is_max_type(const ov::element::Type &t);
int32_t dtype_code(const ov::element::Type &t);  // kF32, ...; -1 for others

// Refuse a data input ovpool's kernels do not take (a dynamic type passes:
// the PyTorch frontend types its graph after conversion).
void require_type(const ov::Node *node, const ov::element::Type &t, bool max_types,
                  const std::string &role);

// "[2,3,?,?]" for messages.
std::string shape_text(const ov::PartialShape &shape);
std::string ints_text(const std::vector<int64_t> &values);

// A per-axis list attribute for n spatial axes (per entries each: ONNX pads
// take 2): an empty list gives `fill` on every axis, any other must have
// n * per entries, each >= minimum and <= 2^40.
std::vector<int64_t> per_axis(const ov::Node *node, const std::string &name,
                              const std::vector<int64_t> &values, size_t n, int64_t fill,
                              int64_t minimum, size_t per = 1);

// `value` matched case-insensitively against `choices`; the choice as spelled
// there, or an error naming the attribute.
std::string choose(const ov::Node *node, const std::string &name, const std::string &value,
                   std::initializer_list<const char *> choices);

// An empty per-axis list spelled out as `fill` for n axes (OpenVINO's
// attribute visitor writes "" for an empty list, which readers then cannot
// tell apart from a missing attribute).
void fill_empty(std::vector<int64_t> &values, size_t n, int64_t fill);

// The data input's leading dims and spatial rank: rank 3 to 5, and n_spatial
// (from `source`, e.g. "kernel=[3,3]") spatial dims when both are known; its
// known dims within ovpool's limit (check_elements). Returns false for a
// dynamic rank.
bool split_nc(const ov::Node *node, const ov::PartialShape &data, size_t n_spatial,
              const std::string &source, const std::string &role = "data");

// Refuse a shape whose known dims, or their product, pass ovpool's limit of
// 2^40 elements: no size product of a node's arithmetic can then overflow.
// `what` names the tensor ("the data input", "output 0") in the message,
// with the elements and the bytes of `type`.
void check_elements(const ov::Node *node, const std::string &what, const ov::PartialShape &shape,
                    const ov::element::Type &type);

// set_output_type for output `port`, once its shape is within ovpool's limit
// and, when static, its bytes within the memory budget: OpenVINO allocates
// what shape inference declares, so an absurd or over-budget output is
// refused here, at read, reshape or compile, before anything is allocated.
void set_checked_output(ov::Node *node, size_t port, const ov::element::Type &type,
                        const ov::PartialShape &shape);

// The geometry of a fixed-window pool: per spatial axis the output dim and,
// when the input is static, the core's axis (pads resolved by auto_pad). The
// data's dims are those split_nc checked.
struct FixedGeometry {
    size_t n = 0;
    bool rank_known = false;
    bool is_static = false;
    std::vector<ov::Dimension> out;
    std::vector<Axis> axes;
};

FixedGeometry fixed_geometry(const ov::Node *node, const ov::PartialShape &data,
                             const std::vector<int64_t> &kernel,
                             const std::vector<int64_t> &strides,
                             const std::vector<int64_t> &dilations,
                             const std::vector<int64_t> &pads_begin,
                             const std::vector<int64_t> &pads_end, ovpool::AutoPad auto_pad,
                             ovpool::Rounding rounding);

// Whether some window of a static geometry holds no input element (the
// core's arithmetic test: no window table).
bool has_empty_window(const FixedGeometry &g);

// (N, C, out...) of a pool.
ov::PartialShape pool_shape(const ov::PartialShape &data, const FixedGeometry &g);

// The values of a small integer input when they are known at compile time
// (a Constant, or a Convert of one as the CPU plugin leaves it) and hold at
// most `max_count` of them.
bool constant_ints(const ov::Output<ov::Node> &value, std::vector<int64_t> &out,
                   size_t max_count = 8);

// The values of an integer tensor (i32 / i64 / ...) at run time.
std::vector<int64_t> tensor_ints(const ov::Tensor &tensor);

// A Spec's leading part from a static data shape.
Spec base_spec(int32_t family, const ov::element::Type &type, const ov::Shape &data);

// The output tensor's shape set when the plugin handed it over unshaped (its
// memory then allocated here: checked against ovpool's limit and the memory
// budget first; `op` names the node in errors).
void shape_output(ov::Tensor &tensor, const ov::Shape &shape, const std::string &op);

}  // namespace ovpool_openvino
