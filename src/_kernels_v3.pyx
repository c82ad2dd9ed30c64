# x86-64-v3 (AVX2) build of the same pooling kernels, compiled with
# -march=x86-64-v3 and chosen at import by ovpool._isa when the CPU has the
# features; the code is in _kernels.pxi.
include "_kernels.pxi"
