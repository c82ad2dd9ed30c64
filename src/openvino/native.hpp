// The conversions' policy, and the native OpenVINO nodes they build where
// native OpenVINO computes what the specification says and runs faster.
//
// OpenVINO's CPU plugin runs an extension op in plain NCHW and reorders its
// blocked tensors around it: a values-only MaxPool or an AvgPool inside a
// network costs more through ovpool (the reorders) than natively. So by
// default the ONNX and PyTorch conversions build ovpool's ops only where
// native OpenVINO deviates from the specification or is slow (MaxPool
// indices, adaptive bins, AdaptiveMaxPool, LpPool, MaxUnpool), and native
// nodes elsewhere; the Python layer's patch_model applies the same rules to
// native models (ovpool/openvino/__init__.py, _decide). With
// OVPOOL_OPENVINO_POLICY=all every pool becomes an ovpool op.
#pragma once

#include "openvino/core/node.hpp"
#include "ops.hpp"

namespace ovpool_openvino {

enum class Policy { kDefault, kAll };

// OVPOOL_OPENVINO_POLICY ("default" or "all"; unset: default), read at each
// conversion so that a process may change it between conversions.
Policy conversion_policy();

// Native OpenVINO MaxPool-14's values, AvgPool-16, and a global mean / max
// (ReduceMean / ReduceMax over the spatial axes, keeping them).
ov::Output<ov::Node> native_max_values(const ov::Output<ov::Node> &x, const OvWindowAttrs &w);
ov::Output<ov::Node> native_avg_pool(const ov::Output<ov::Node> &x, const OvWindowAttrs &w,
                                     bool exclude_pad);
ov::Output<ov::Node> native_global(const ov::Output<ov::Node> &x, bool max);

// Where native OpenVINO deviates: an AvgPool counting pads with ceil rounding
// whose edge window runs past the declared pads (divided by the full kernel
// there), unknown dims counted as such; same_upper / same_lower with ceil
// rounding (a window past ceil(n / s)).
bool native_avg_deviates(const ov::PartialShape &data, const OvWindowAttrs &w, bool exclude_pad);
bool native_shape_deviates(const OvWindowAttrs &w);

// Whether native OpenVINO takes these window numbers: every kernel, stride,
// dilation and pad at most spec.hpp's kNativeLargestWindow (why: there).
// Larger numbers stay on ovpool's ops whatever the policy.
bool native_takes(const OvWindowAttrs &w);

}  // namespace ovpool_openvino
