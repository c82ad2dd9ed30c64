// float16 and bfloat16 on the row path: averages, Lp sums and max values.
//
// 16-bit floats arrive as their raw bits. Each window row is widened to
// float32 in per-thread scratch, pooled by the float32 row code, and the
// output row narrowed back with rounding to nearest even: no float32 copy of
// the whole input is made (plan.widen_input asks for one only where the
// scratch would be too large). Where F16C converts in registers, the
// vertical pass of float16 maxima skips the scratch (a row that holds a NaN
// is widened and taken by the exact rule).
#pragma once

#include "max_pool.hpp"

OVPOOL_BEGIN

template <bool Bf16>
void half_rows_unit(const Plan &plan, const Call &call, int64_t unit, char *scratch) {
    const uint16_t *x = static_cast<const uint16_t *>(call.x);
    uint16_t *out = static_cast<uint16_t *>(call.out);
    float *buf = scratch_part<float>(scratch, plan.scratch.buf);
    float *rows = scratch_part<float>(scratch, plan.scratch.rows);
    float *out_row = scratch_part<float>(scratch, plan.scratch.out_row);
    int64_t *offsets = scratch_part<int64_t>(scratch, plan.scratch.offsets);
    int64_t *local = scratch_part<int64_t>(scratch, plan.scratch.local);
    const bool is_max = plan.spec.family == Family::max;
    const bool max_in_registers = is_max && kF16cRows && !Bf16 && plan.in_w >= 8;
    const uint16_t fill = lowest_bits(Bf16);
    const int64_t in_plane = plan.in_plane(), out_plane = plan.out_plane();
    for_unit_rows(plan, call.schedule, unit,
                  [&](int64_t q, int64_t row, int64_t od, int64_t oh, int64_t) -> int64_t {
                      const uint16_t *src = x + q * in_plane;
                      uint16_t *out_bits = out + q * out_plane + row * plan.out_w;
                      const ptrdiff_t n_rows = row_offsets(plan, od, oh, offsets);
                      if (plan.prefetch > 0 && n_rows > 0)
                          prefetch_ahead(reinterpret_cast<const char *>(src), offsets, n_rows,
                                         plan.win_h[3 * oh + 1], sizeof(uint16_t), plan);
                      if (max_in_registers && n_rows > 0 &&
                          !simd::vmax_rows_f16(src, offsets, n_rows, buf + plan.pad_w, plan.in_w)) {
                          max_finish(buf, out_row, plan, true);
                      } else {  // widened rows; also float16 rows holding a NaN (exact rule)
                          for (ptrdiff_t r = 0; r < n_rows; r++) {
                              simd::widen(src + offsets[r], rows + r * plan.in_w, plan.in_w, Bf16);
                              local[r] = r * plan.in_w;
                          }
                          if (is_max)
                              max_row_from(rows, local, n_rows, buf, out_row, plan, true);
                          else
                              sum_row_from(rows, local, n_rows, out_row, buf, plan.div_w_f32.data(),
                                           plan, od, oh, plan.mode, plan.p);
                      }
                      simd::narrow(out_row, out_bits, plan.out_w, Bf16);
                      if (is_max)
                          fill_empty_rows(plan, out_bits, od, oh, 1, fill);
                      return 1;
                  });
}

OVPOOL_END
