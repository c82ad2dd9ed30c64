# distutils: language = c++
# Baseline x86-64 (SSE2) build of ovpool's driver; the code is in _driver.pxi.
include "_driver.pxi"
