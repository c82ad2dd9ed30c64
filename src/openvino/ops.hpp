// ovpool's ops as C++ ov::op::Op classes: opset "ovpool", one class per row
// of the op table (schema.hpp, generated from ovpool/opset.json, which
// ovpool's layer table reads too), so that IR written by either keeps
// working with the other.
//
// An op class is only its row: SchemaOp does what every op does from the
// row (attributes, shape inference, evaluate), and Op<id> gives each row
// the type of its own that OpenVINO registers. The rules of the ops
// themselves are the kernel core's: shape inference and evaluate lower the
// attributes (schema.cpp, then lower.hpp) into the output shapes and into a
// PoolSpec, whose plan comes from the node's cache (one plan per input
// shape, built once, shared by every stream) and runs on OpenVINO's threads
// (kernel.hpp).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kernel.hpp"
#include "openvino/core/extension.hpp"
#include "openvino/op/op.hpp"
#include "schema.hpp"

namespace ovpool_openvino {

class SchemaOp : public ov::op::Op {
  public:
    bool visit_attributes(ov::AttributeVisitor &visitor) override;
    void validate_and_infer_types() override;
    bool evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const override;
    bool has_evaluate() const override;

    const Attrs &attrs() const { return m_attrs; }

  protected:
    explicit SchemaOp(const OpSchema &op) : m_attrs(op) {}
    SchemaOp(const ov::OutputVector &args, Attrs attrs);

  private:
    const OpSchema &op() const { return m_attrs.op(); }
    // the input count and the element types of inputs and outputs
    void check_types();
    ov::element::Type index_type() const;  // output 1's, dynamic without one

    // Shape inference of a pool: `a` lowered on the data input, whose rank
    // must give n_spatial spatial dims (0: any). Output 0 takes the data's
    // type, output 1 (max pools' indices) index_type when it is static.
    void infer_pool(const ovpool::PoolAttrs &a, size_t n_spatial);
    // evaluate of a pool: `a` lowered on the static input, the outputs
    // shaped and the plan run; a max pool's indices only when a consumer
    // reads them.
    bool evaluate_pool(ovpool::PoolAttrs a, ov::TensorVector &outputs,
                       const ov::TensorVector &inputs) const;
    // the adaptive form (adaptive_pool.cpp) and the unpool form (max_unpool.cpp)
    void infer_adaptive();
    std::vector<int64_t> output_size_values(const ov::TensorVector &inputs) const;
    void infer_unpool();
    bool evaluate_unpool(ov::TensorVector &outputs, const ov::TensorVector &inputs) const;

    // "kernel_shape=[3, 3]" (what gives the spatial rank) for messages.
    std::string source_text(const ovpool::PoolAttrs &a) const;
    // The plan of `spec`, from this node's cache. Several streams call
    // evaluate on one node at once: the cache is locked; plans are immutable.
    std::shared_ptr<const Plan> plan_for(const PoolSpec &spec) const;
    // Whether some consumer reads output `port` (a max pool's indices cost
    // many times the values): looked up once, when the graph is final.
    bool output_read(size_t port) const;
    // Run `spec` on x into out (and indices), widening 16-bit floats when the
    // plan asks for it.
    void run(const PoolSpec &spec, const ov::Tensor &x, ov::Tensor &out, ov::Tensor *indices) const;
    // "MaxPool (name)" for messages.
    std::string label() const;

    Attrs m_attrs;
    static constexpr size_t kCacheSize = 8;
    mutable std::mutex m_mutex;
    mutable std::vector<std::pair<PoolSpec, std::shared_ptr<const Plan>>> m_plans;
    mutable std::atomic<int> m_output_read{-1};
};

// The op class of one row of the table.
template <OpId Id>
class Op : public SchemaOp {
  public:
    OPENVINO_OP(schema_of(Id).type, "ovpool");
    Op() : SchemaOp(schema_of(Id)) {}
    Op(const ov::OutputVector &args, Attrs attrs) : SchemaOp(args, std::move(attrs)) {
        constructor_validate_and_infer_types();
    }
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector &args) const override {
        return std::make_shared<Op>(args, attrs());
    }
};

// A node of op `id` on `args` with `attrs` (an Attrs of that op), validated.
std::shared_ptr<SchemaOp> make_op(OpId id, const ov::OutputVector &args, Attrs attrs);
// An ov::OpExtension of each op of the table.
std::vector<ov::Extension::Ptr> op_extensions();

}  // namespace ovpool_openvino
