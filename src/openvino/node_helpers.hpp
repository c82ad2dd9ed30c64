// Helpers of the ops' nodes: reading their inputs, checking and setting
// their output shapes, and naming shapes in messages. The rules of the ops
// themselves are the kernel core's (lower.hpp), never a second copy: an op
// reads its attributes into a PoolAttrs (schema.hpp) and lower_node applies
// every rule of the op to them and to the data input's shape.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "kernel.hpp"
#include "openvino/core/node.hpp"
#include "openvino/core/partial_shape.hpp"
#include "ovpool/lower.hpp"
#include "schema.hpp"

namespace ovpool_openvino {

// The largest attribute value, dim or element count ovpool accepts (the
// core's 2^40, as ovpool.shapes).
using ovpool::limits::kMaxElements;

// "[2,3,?,?]" for messages.
std::string shape_text(const ov::PartialShape &shape);
std::string ints_text(const std::vector<int64_t> &values);

// `value` matched case-insensitively against `choices`; the choice as spelled
// there, or an error naming the attribute.
std::string choose(const ov::Node *node, const std::string &name, const std::string &value,
                   std::initializer_list<const char *> choices);

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

// The rules of an op (lower.hpp) on its attributes and its data input of
// element type `type` (shape inference: dims may be unknown, a dynamic type
// lowers as f32); a broken rule fails the node's validation with the rule's
// message. The data's rank must be known.
ovpool::Lowered lower_node(const ov::Node *node, const ovpool::PoolAttrs &attrs,
                           const ov::PartialShape &data, const ov::element::Type &type);

// The output shape of a lowering (-1 dims dynamic).
ov::PartialShape lowered_shape(const ovpool::Lowered &lowered);

// The values of a small integer input when they are known at compile time
// (a Constant, or a Convert of one as the CPU plugin leaves it) and hold at
// most `max_count` of them.
bool constant_ints(const ov::Output<ov::Node> &value, std::vector<int64_t> &out,
                   size_t max_count = 8);

// The values of an integer tensor (i32 / i64 / ...) at run time.
std::vector<int64_t> tensor_ints(const ov::Tensor &tensor);

// The output tensor's shape set when the plugin handed it over unshaped (its
// memory then allocated here: checked against ovpool's limit and the memory
// budget first; `op` names the node in errors).
void shape_output(ov::Tensor &tensor, const ov::Shape &shape, const std::string &op);

}  // namespace ovpool_openvino
