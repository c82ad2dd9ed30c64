# distutils: language = c++
# x86-64-v3 (AVX2, F16C) build of the same driver, compiled with
# -march=x86-64-v3 and chosen at import by ovpool._isa when the CPU has the
# features; the code is in _driver.pxi.
include "_driver.pxi"
