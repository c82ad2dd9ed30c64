# Baseline x86-64 (SSE2) build of the pooling kernels; the code is in _kernels.pxi.
include "_kernels.pxi"
