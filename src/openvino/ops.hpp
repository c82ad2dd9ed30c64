// ovpool's ops as C++ ov::op::Op classes: opset "ovpool", the type names,
// attributes and ports of ovpool's layer table (ovpool/layers.py), so IR
// files written by earlier versions keep working.
//
//   AdaptiveAvgPool, AdaptiveMaxPool   adaptive_pool.cpp   AdaptiveAvgPool-8 / AdaptiveMaxPool-8
//   AvgPool, MaxPool                   ov_pool.cpp         AvgPool-16 / MaxPool-14 attributes,
//                                                          OpenVINO's specification
//   OnnxAveragePool, OnnxMaxPool,      onnx_pool.cpp       ONNX AveragePool-22, MaxPool-22,
//   LpPool, GlobalLpPool                                   LpPool-22, GlobalLpPool-22
//   MaxUnpool                          max_unpool.cpp      ONNX MaxUnpool-22
//
// Each op reads its attributes into the kernel core's PoolAttrs; the core
// lowers them (lower.hpp: every rule of the op, ONNX's or OpenVINO's) into
// the output shapes at shape inference and into a PoolSpec at evaluate,
// whose plan comes from the node's cache (one plan per input shape, built
// once, shared by every stream) and runs on OpenVINO's threads (kernel.hpp).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kernel.hpp"
#include "openvino/op/op.hpp"
#include "ovpool/lower.hpp"

namespace ovpool_openvino {

// What every ovpool op shares: the plan cache and the calls of evaluate.
class PoolOp : public ov::op::Op {
  public:
    PoolOp() = default;
    explicit PoolOp(const ov::OutputVector &args) : ov::op::Op(args) {}

  protected:
    // Shape inference of a pool: the attributes (`attrs` reads them; a bad
    // spelling fails the validation) lowered on the data input, whose rank
    // must give n_spatial spatial dims (0: any). Output 0 takes the data's
    // type, output 1 (max pools' indices) index_type when it is static.
    void infer_pool(const std::function<ovpool::PoolAttrs()> &attrs, size_t n_spatial,
                    const ov::element::Type &index_type = ov::element::dynamic);
    // evaluate of a pool: the attributes lowered on the static input, the
    // outputs shaped and the plan run; a max pool's indices only when a
    // consumer reads them.
    bool evaluate_pool(const std::function<ovpool::PoolAttrs()> &attrs, ov::TensorVector &outputs,
                       const ov::TensorVector &inputs) const;
    // "kernel_shape=[3, 3]" (what gives the spatial rank) and "X" / "data"
    // (the data input's name) for messages.
    static std::string source_text(const ovpool::PoolAttrs &a);
    static std::string role_name(const ovpool::PoolAttrs &a);
    // The plan of `spec`, from this node's cache. Several streams call
    // evaluate on one node at once: the cache is locked; plans are immutable.
    std::shared_ptr<const Plan> plan_for(const PoolSpec &spec) const;
    // Whether some consumer reads output `port` (a max pool's indices cost
    // many times the values): looked up once, when the graph is final.
    bool output_read(size_t port) const;
    // Run `spec` on x into out (and indices), widening 16-bit floats when the
    // plan asks for it.
    void run(const PoolSpec &spec, const ov::Tensor &x, ov::Tensor &out, ov::Tensor *indices) const;
    // "ovpool MaxPool (name)" for messages.
    std::string label() const;

  private:
    static constexpr size_t kCacheSize = 8;
    mutable std::mutex m_mutex;
    mutable std::vector<std::pair<PoolSpec, std::shared_ptr<const Plan>>> m_plans;
    mutable std::atomic<int> m_output_read{-1};
};

// ---------------------------------------------------------------------------
// Adaptive pools
// ---------------------------------------------------------------------------

class AdaptiveAvgPool : public PoolOp {
  public:
    OPENVINO_OP("AdaptiveAvgPool", "ovpool");
    AdaptiveAvgPool() = default;
    explicit AdaptiveAvgPool(const ov::OutputVector &args);
    bool visit_attributes(ov::AttributeVisitor &visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector &args) const override;
    bool evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const override;
    bool has_evaluate() const override;
};

class AdaptiveMaxPool : public PoolOp {
  public:
    OPENVINO_OP("AdaptiveMaxPool", "ovpool");
    AdaptiveMaxPool() = default;
    AdaptiveMaxPool(const ov::OutputVector &args, ov::element::Type index_element_type);
    bool visit_attributes(ov::AttributeVisitor &visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector &args) const override;
    bool evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const override;
    bool has_evaluate() const override;

  private:
    ov::element::Type m_index_element_type = ov::element::i64;
};

// ---------------------------------------------------------------------------
// OpenVINO's AvgPool and MaxPool
// ---------------------------------------------------------------------------

// The window attributes of AvgPool-16 / MaxPool-14, as written in IR. An
// empty per-axis list means the fill value on every axis (0 for pads, 1 for
// strides and dilations), as OpenVINO's reader does; it is spelled out as
// soon as the kernel gives the rank.
struct OvWindowAttrs {
    std::vector<int64_t> kernel, strides, pads_begin, pads_end, dilations;
    std::string rounding_type = "floor";
    std::string auto_pad = "explicit";

    void materialize();
};

class AvgPool : public PoolOp {
  public:
    OPENVINO_OP("AvgPool", "ovpool");
    AvgPool() = default;
    AvgPool(const ov::OutputVector &args, OvWindowAttrs window, bool exclude_pad);
    bool visit_attributes(ov::AttributeVisitor &visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector &args) const override;
    bool evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const override;
    bool has_evaluate() const override;

  private:
    ovpool::PoolAttrs attrs() const;
    OvWindowAttrs m_window;
    bool m_exclude_pad = true;
};

class MaxPool : public PoolOp {
  public:
    OPENVINO_OP("MaxPool", "ovpool");
    MaxPool() = default;
    MaxPool(const ov::OutputVector &args, OvWindowAttrs window,
            ov::element::Type index_element_type, int64_t axis);
    bool visit_attributes(ov::AttributeVisitor &visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector &args) const override;
    bool evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const override;
    bool has_evaluate() const override;

  private:
    ovpool::PoolAttrs attrs() const;
    OvWindowAttrs m_window;
    ov::element::Type m_index_element_type = ov::element::i64;
    int64_t m_axis = 0;
};

// ---------------------------------------------------------------------------
// ONNX pools
// ---------------------------------------------------------------------------

// ONNX's window attributes: pads as [x1_begin, x2_begin, ..., x1_end, ...].
struct OnnxWindowAttrs {
    std::vector<int64_t> kernel_shape, strides, pads, dilations;
    std::string auto_pad = "NOTSET";
    bool ceil_mode = false;

    void materialize();
};

class OnnxAveragePool : public PoolOp {
  public:
    OPENVINO_OP("OnnxAveragePool", "ovpool");
    OnnxAveragePool() = default;
    OnnxAveragePool(const ov::OutputVector &args, OnnxWindowAttrs window, bool count_include_pad);
    bool visit_attributes(ov::AttributeVisitor &visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector &args) const override;
    bool evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const override;
    bool has_evaluate() const override;

  private:
    ovpool::PoolAttrs attrs() const;
    OnnxWindowAttrs m_window;
    bool m_count_include_pad = false;
};

class OnnxMaxPool : public PoolOp {
  public:
    OPENVINO_OP("OnnxMaxPool", "ovpool");
    OnnxMaxPool() = default;
    OnnxMaxPool(const ov::OutputVector &args, OnnxWindowAttrs window, int64_t storage_order);
    bool visit_attributes(ov::AttributeVisitor &visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector &args) const override;
    bool evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const override;
    bool has_evaluate() const override;

  private:
    ovpool::PoolAttrs attrs() const;
    OnnxWindowAttrs m_window;
    int64_t m_storage_order = 0;
};

class LpPool : public PoolOp {
  public:
    OPENVINO_OP("LpPool", "ovpool");
    LpPool() = default;
    LpPool(const ov::OutputVector &args, OnnxWindowAttrs window, double p);
    bool visit_attributes(ov::AttributeVisitor &visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector &args) const override;
    bool evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const override;
    bool has_evaluate() const override;

  private:
    ovpool::PoolAttrs attrs() const;
    OnnxWindowAttrs m_window;
    double m_p = 2.0;
};

class GlobalLpPool : public PoolOp {
  public:
    OPENVINO_OP("GlobalLpPool", "ovpool");
    GlobalLpPool() = default;
    GlobalLpPool(const ov::OutputVector &args, double p);
    bool visit_attributes(ov::AttributeVisitor &visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector &args) const override;
    bool evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const override;
    bool has_evaluate() const override;

  private:
    ovpool::PoolAttrs attrs() const;
    double m_p = 2.0;
};

class MaxUnpool : public PoolOp {
  public:
    OPENVINO_OP("MaxUnpool", "ovpool");
    MaxUnpool() = default;
    MaxUnpool(const ov::OutputVector &args, std::vector<int64_t> kernel_shape,
              std::vector<int64_t> strides, std::vector<int64_t> pads,
              std::string indices_relative_to);
    bool visit_attributes(ov::AttributeVisitor &visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector &args) const override;
    bool evaluate(ov::TensorVector &outputs, const ov::TensorVector &inputs) const override;
    bool has_evaluate() const override;

  private:
    void materialize();
    std::vector<int64_t> m_kernel_shape, m_strides, m_pads;
    std::string m_indices_relative_to = "default_shape";
};

}  // namespace ovpool_openvino
