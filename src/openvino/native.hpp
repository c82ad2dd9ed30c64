// The default policy (which pools move onto ovpool's ops, and why) and the
// native OpenVINO nodes the conversions build where native OpenVINO computes
// what the specification says. Written once: the ONNX and PyTorch
// conversions apply it, and the Python layer's patch_model asks the same
// functions through the library's C entry points (native.cpp), on the nodes
// of a native model.
//
// OpenVINO's CPU plugin runs an extension op in plain NCHW and reorders its
// blocked tensors around it: a values-only MaxPool or an AvgPool inside a
// network costs more through ovpool (the reorders) than natively. So by
// default a pool moves onto ovpool's ops only where native OpenVINO deviates
// from the specification (the keys below, ovpool.openvino.DEVIATIONS says
// each in words) or is slow (MaxPool indices, adaptive bins); with
// OVPOOL_OPENVINO_POLICY=all every pool becomes an ovpool op.
#pragma once

#include <vector>

#include "openvino/core/node.hpp"
#include "schema.hpp"

namespace ovpool_openvino {

enum class Policy { kDefault, kAll };

// OVPOOL_OPENVINO_POLICY ("default" or "all"; unset: default), read at each
// conversion so that a process may change it between conversions.
Policy conversion_policy();

// What the default policy says of a pool (the keys the Python layer reads).
namespace verdict {
// native OpenVINO deviates from the specification: the pool moves
constexpr const char *kWindowNumbers = "window_numbers";
constexpr const char *kOutputShape = "output_shape";
constexpr const char *kAvgIncludePadCeil = "avg_pool_include_pad_ceil";
constexpr const char *kAdaptiveFloatBins = "adaptive_float_bins";
constexpr const char *kAdaptiveMaxPool = "adaptive_max_pool";
// ovpool's op is faster, the layout change counted: the pool moves
constexpr const char *kRuntimeSizes = "runtime_sizes";
constexpr const char *kAdaptiveBins = "adaptive_bins";
// native OpenVINO runs it exact and faster: the pool stays
constexpr const char *kGlobalAverage = "global_average";
}  // namespace verdict

// Where native OpenVINO deviates on a fixed-window pool with `w` (the
// attributes of ovpool's AvgPool or MaxPool) over data of shape `data`:
// kWindowNumbers (a kernel, stride, dilation or pad past spec.hpp's
// kNativeLargestWindow), kOutputShape (native's output shape is not the
// specification's: same_upper / same_lower with "ceil" rounding may add a
// window past ceil(n / s); unknown dims count as such), kAvgIncludePadCeil
// (an AvgPool counting pads with ceil rounding has an edge window past the
// declared pads, which native divides by the full kernel; unknown dims count
// as such), or nullptr.
const char *window_deviation(const Attrs &w, const ov::PartialShape &data);

// The default policy on an adaptive pool: kAdaptiveMaxPool (native ignores a
// NaN unless it comes first and cannot compile i64 indices), kRuntimeSizes
// (`sizes` null: the output size is known at run time only), kGlobalAverage
// (every size 1: a mean), kAdaptiveFloatBins (some spatial dim of `data`,
// at its upper bound, times its size passes 2^24: native's float32 bin
// borders move) or kAdaptiveBins.
const char *adaptive_verdict(bool max_pool, const std::vector<int64_t> *sizes,
                             const ov::PartialShape &data);

// Native OpenVINO MaxPool-14's values and AvgPool-16 with `w` (as above),
// and a global mean / max (ReduceMean / ReduceMax over the spatial axes,
// keeping them).
ov::Output<ov::Node> native_max_values(const ov::Output<ov::Node> &x, const Attrs &w);
ov::Output<ov::Node> native_avg_pool(const ov::Output<ov::Node> &x, const Attrs &w);
ov::Output<ov::Node> native_global(const ov::Output<ov::Node> &x, bool max);

}  // namespace ovpool_openvino
