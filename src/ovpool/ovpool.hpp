// ovpool's kernel core: header-only C++17, no Python, no OpenMP.
//
// Table of contents (each header includes what it needs):
//
//   common.hpp        ISA switches, prefetch helpers, vector block starts
//   simd/half.hpp     float16 / bfloat16 <-> float32
//   simd/vec.hpp      vector loads, stores, tap deinterleaves, lane shuffles
//   simd/reduce.hpp   span maxima, first-maximum positions, plane and span sums
//   simd/rows.hpp     vector row kernels: vertical maxima, 3-wide windows,
//                     adaptive averages of narrow and wide bins
//   simd/tile.hpp     tiling windows (kernel == stride) in vector blocks
//   simd/argmax.hpp   vector argmax: windows, adaptive bins, blocks, 3x3 rows
//   spec.hpp          the vocabulary: enums, the spec of a pool, limits, the
//                     memory budget, the thread and instruction-set rules
//   lower.hpp         an op's attributes (ONNX, OpenVINO) -> the spec
//   plan.hpp          window arithmetic (output sizes, tables), the Plan, the
//                     kernel path (choose_path), work units (make_schedule)
//   separable.hpp     the separable vertical / horizontal passes, window rows
//   call.hpp          a call's arrays and the unit-function type
//   sum_pool.hpp      averages and Lp sums on the row paths
//   max_pool.hpp      max values on the row paths
//   depth_pool.hpp    pooling along D first, into a per-thread slab
//   tile_pool.hpp     tiling windows
//   argmax_pool.hpp   max with indices
//   half_pool.hpp     float16 / bfloat16 rows
//   global_pool.hpp   global pools
//   unpool.hpp        MaxUnpool's scatter
//   run.hpp           the unit function of a plan, scratch, a serial runner
//   api.hpp           one call per pool, for C++ programs and Cython code
#pragma once

#include "api.hpp"
#include "lower.hpp"
#include "unpool.hpp"
