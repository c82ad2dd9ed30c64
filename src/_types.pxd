# Fused types shared by the kernels (after skimage's fused_numerics.pxd).
from libc.stdint cimport int8_t, uint8_t, int32_t, int64_t

# Sums (average, Lp) are defined for floating types only; float16 and
# bfloat16 are widened to float32 on the Python side.
ctypedef fused real_t:
    float
    double

# Max pooling also runs on 8-bit integers (ONNX MaxPool int8/uint8).
ctypedef fused max_t:
    float
    double
    int8_t
    uint8_t

# Index element types: OpenVINO's index_element_type i32 / i64.
ctypedef fused index_t:
    int32_t
    int64_t
