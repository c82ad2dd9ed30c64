// The adaptive form (AdaptiveAvgPool, AdaptiveMaxPool of opset ovpool):
// OpenVINO's AdaptiveAvgPool-8 / AdaptiveMaxPool-8 with the bins computed in
// integers (the CPU plugin's float32 borders move once In * Out > 2^24), NaN
// propagated by the max (the CPU plugin ignores a NaN unless it comes first)
// and int64 indices (which the CPU plugin cannot compile). The output size
// is the second input, often known only at run time.
#include "node_helpers.hpp"
#include "ops.hpp"

namespace ovpool_openvino {

// Shape inference: lowered when output_size is a small constant, else its
// spatial dims unknown.
void SchemaOp::infer_adaptive() {
    size_t n = 0;  // output_size's entries (the spatial rank), 0 when unknown
    const ov::PartialShape size_shape = get_input_partial_shape(1);
    if (size_shape.rank().is_static()) {
        NODE_VALIDATION_CHECK(this, size_shape.size() == 1, "output_size must be 1-D, got shape ",
                              shape_text(size_shape));
        if (size_shape[0].is_static()) {
            const int64_t entries = size_shape[0].get_length();
            NODE_VALIDATION_CHECK(this, entries >= 1 && entries <= 3,
                                  "output_size must have 1 to 3 entries, got shape ",
                                  shape_text(size_shape));
            n = static_cast<size_t>(entries);
        }
    }
    ovpool::PoolAttrs a = pool_attrs(m_attrs);
    if (constant_ints(input_value(1), a.output_size)) {
        infer_pool(a, n);
        return;
    }
    const ov::PartialShape data = get_input_partial_shape(0);
    const bool rank_known =
        split_nc(this, data, n, "output_size of " + std::to_string(n) + " entries");
    ov::PartialShape shape = ov::PartialShape::dynamic();
    if (rank_known || n > 0) {
        const size_t n_spatial = rank_known ? data.size() - 2 : n;
        std::vector<ov::Dimension> dims{rank_known ? data[0] : ov::Dimension::dynamic(),
                                        rank_known ? data[1] : ov::Dimension::dynamic()};
        dims.resize(2 + n_spatial, ov::Dimension::dynamic());
        shape = ov::PartialShape(dims);
    }
    set_checked_output(this, 0, get_input_element_type(0), shape);
    const ov::element::Type indices = index_type();
    if (indices.is_static())
        set_checked_output(this, 1, indices, shape);
}

// output_size at run time: one entry per spatial dim of the data
std::vector<int64_t> SchemaOp::output_size_values(const ov::TensorVector &inputs) const {
    const ov::Shape data = inputs[0].get_shape();
    OPENVINO_ASSERT(data.size() >= 3 && inputs[1].get_size() == data.size() - 2, "ovpool ",
                    get_type_info().name, ": output_size of shape ", inputs[1].get_shape(),
                    " does not fit data of shape ", data);
    return tensor_ints(inputs[1]);
}

}  // namespace ovpool_openvino
