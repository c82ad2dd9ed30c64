// Frontend conversion extensions: ONNX pool nodes and PyTorch's aten pools
// mapped onto ovpool's ops (onnx_conversions.cpp, pytorch_conversions.cpp).
#pragma once

#include <vector>

#include "openvino/core/extension.hpp"

namespace ovpool_openvino {

// AveragePool, MaxPool (Indices, storage_order), LpPool, GlobalAveragePool,
// GlobalMaxPool, GlobalLpPool, MaxUnpool (with output_shape).
std::vector<ov::Extension::Ptr> onnx_extensions();

// aten::max_poolNd, aten::max_poolNd_with_indices, aten::avg_poolNd,
// aten::adaptive_avg_poolNd, aten::adaptive_max_poolNd for N = 1, 2, 3, under
// their TorchScript names and torch.export's FX names.
std::vector<ov::Extension::Ptr> pytorch_extensions();

}  // namespace ovpool_openvino
