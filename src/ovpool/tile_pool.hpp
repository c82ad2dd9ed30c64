// Tiling windows (Path::tiles): kernel == stride <= 4 along H and W, no
// padding, no pooling along D, or windows of one element (make_plan lays
// groups of their planes out as rows); averages, max values and Lp norms of
// p 1 and 2 (simd::TileOp).
//
// Each input element belongs to at most one window, so the separable passes'
// column buffer only adds work; on short rows (14 wide and less) their loop
// overhead dominated. Here each output row is accumulated straight from its
// kh input rows, taps in row-major order (the same order as PyTorch's sums,
// so averages match it bit for bit). float32 rows of 4 or more outputs with
// kw in (1, 2, 4) use the vector blocks of simd/tile.hpp (lanes = outputs,
// taps deinterleaved from contiguous loads), which gcc does not derive from
// the strided loops below: adaptive 28->7 at 1 thread 320 -> 200 ns per
// plane, 14->7 150 -> 100, same bits. float16 rows convert in those
// registers where F16C allows; bfloat16 (and float16 elsewhere) widen a
// group of output rows' input rows into scratch first.
#pragma once

#include "call.hpp"

OVPOOL_BEGIN

// A tap as Op sums it: |x| or x * x for the Lp norms.
template <int Op, class T>
OVPOOL_INLINE T tile_fold(T v) {
    if constexpr (Op == simd::kTileSquares)
        return v * v;
    else if constexpr (Op == simd::kTileAbs)
        return std::fabs(v);
    return v;
}

template <class T, int KW, int Op>
OVPOOL_INLINE void tile_sum_pass(const T *row, T *out, ptrdiff_t n_out, bool first) {
    if (first) {
        for (ptrdiff_t o = 0; o < n_out; o++) {
            T acc = tile_fold<Op>(row[o * KW]);
            for (int t = 1; t < KW; t++)
                acc = acc + tile_fold<Op>(row[o * KW + t]);
            out[o] = acc;
        }
    } else {
        for (ptrdiff_t o = 0; o < n_out; o++) {
            T acc = out[o];
            for (int t = 0; t < KW; t++)
                acc = acc + tile_fold<Op>(row[o * KW + t]);
            out[o] = acc;
        }
    }
}

template <class T, int KW>
OVPOOL_INLINE void tile_max_pass(const T *row, T *out, ptrdiff_t n_out, bool first) {
    for (ptrdiff_t o = 0; o < n_out; o++) {
        T acc = first ? row[o * KW] : out[o];
        bool nan = acc != acc;
        for (int t = first ? 1 : 0; t < KW; t++) {
            T value = row[o * KW + t];
            acc = acc > value ? acc : value;
            nan = nan | (value != value);
        }
        if constexpr (is_float_v<T>)
            out[o] = nan ? nan_of<T>() : acc;
        else
            out[o] = acc;
    }
}

// first row initialises, later rows accumulate: literal flags, so that each
// pass inlines into one unrolled, vectorised loop
template <class T, int KW, int Op>
OVPOOL_INLINE void tile_row_k(const T *row0, T *out, const Plan &plan, int64_t kh) {
    if constexpr (Op == simd::kTileMax) {
        tile_max_pass<T, KW>(row0, out, plan.out_w, true);
        for (int64_t th = 1; th < kh; th++)
            tile_max_pass<T, KW>(row0 + th * plan.in_w, out, plan.out_w, false);
    } else {
        tile_sum_pass<T, KW, Op>(row0, out, plan.out_w, true);
        for (int64_t th = 1; th < kh; th++)
            tile_sum_pass<T, KW, Op>(row0 + th * plan.in_w, out, plan.out_w, false);
    }
}

// One output row of tiles by the scalar passes (a divide by kh * kw for the
// average, a square root for Lp 2).
template <class T, int Op>
inline void tile_row(const T *row0, T *out, const Plan &plan) {
    const int64_t kh = plan.tile_kh, kw = plan.tile_kw;
    if (kw == 2)
        tile_row_k<T, 2, Op>(row0, out, plan, kh);
    else if (kw == 3)
        tile_row_k<T, 3, Op>(row0, out, plan, kh);
    else if (kw == 4)
        tile_row_k<T, 4, Op>(row0, out, plan, kh);
    else
        tile_row_k<T, 1, Op>(row0, out, plan, kh);
    if constexpr (Op == simd::kTileSum) {
        const T divisor = static_cast<T>(kh * kw);
        for (ptrdiff_t o = 0; o < plan.out_w; o++)
            out[o] = out[o] / divisor;
    } else if constexpr (Op == simd::kTileSquares) {
        for (ptrdiff_t o = 0; o < plan.out_w; o++)
            out[o] = std::sqrt(out[o]);
    }
}

// The TileOp of a plan on the tiling path.
inline simd::TileOp tile_op(const Plan &plan) {
    if (plan.spec.family == Family::max)
        return simd::kTileMax;
    if (plan.spec.family == Family::lp)
        return plan.mode == kSumLp2 ? simd::kTileSquares : simd::kTileAbs;
    return simd::kTileSum;
}

// The work unit of the tiling path, native types.
template <class T, int Op>
void tile_unit(const Plan &plan, const Call &call, int64_t unit, char *) {
    const T *x = static_cast<const T *>(call.x);
    T *out = static_cast<T *>(call.out);
    const int64_t kh = plan.tile_kh, kw = plan.tile_kw;
    const bool simd_rows =
        std::is_same<T, float>::value && simd::vector_rows_ok(plan.out_w, kw, kw);
    float factor = 1;
    const int scale = simd::tile_scale(static_cast<float>(kh * kw), &factor);
    const int64_t in_plane = plan.in_plane(), out_plane = plan.out_plane();
    for_unit_rows(plan, call.schedule, unit,
                  [&](int64_t q, int64_t row, int64_t od, int64_t oh, int64_t left) -> int64_t {
                      const T *row0 = x + q * in_plane + (od * plan.in_h + oh * kh) * plan.in_w;
                      T *out_rows = out + q * out_plane + row * plan.out_w;
                      if constexpr (std::is_same<T, float>::value) {
                          if (simd_rows) {
                              // the rest of this depth slice's rows in one call
                              const int64_t n = std::min(left, plan.out_h - oh);
                              simd::tile_rows_f32(row0, plan.in_w, out_rows, plan.out_w, n,
                                                  static_cast<int>(kh), static_cast<int>(kw), Op,
                                                  scale, factor, plan.tile_ahead);
                              return n;
                          }
                      }
                      tile_row<T, Op>(row0, out_rows, plan);
                      return 1;
                  });
}

// The work unit of the tiling path, float16 / bfloat16 (Bf16) raw bits.
template <bool Bf16, int Op>
void half_tile_unit(const Plan &plan, const Call &call, int64_t unit, char *scratch) {
    const uint16_t *x = static_cast<const uint16_t *>(call.x);
    uint16_t *out = static_cast<uint16_t *>(call.out);
    const int64_t kh = plan.tile_kh, kw = plan.tile_kw;
    const bool simd_rows = simd::vector_rows_ok(plan.out_w, kw, kw);
    const bool in_registers = simd_rows && kF16cRows && !Bf16;
    const int64_t group =
        std::max<int64_t>(1, limits::kHalfChunk / (kh * plan.in_w));  // output rows at once
    float factor = 1;
    const int scale = simd::tile_scale(static_cast<float>(kh * kw), &factor);
    const int64_t in_plane = plan.in_plane(), out_plane = plan.out_plane();
    const int64_t run = in_registers ? plan.rows_per_plane() : group;  // rows per call
    float *rows = scratch_part<float>(scratch, plan.scratch.rows);
    float *outs = scratch_part<float>(scratch, plan.scratch.out_row);
    for_unit_rows(
        plan, call.schedule, unit,
        [&](int64_t q, int64_t row, int64_t od, int64_t oh, int64_t left) -> int64_t {
            const int64_t n = std::min({left, run, plan.out_h - oh});
            const uint16_t *row0 = x + q * in_plane + (od * plan.in_h + oh * kh) * plan.in_w;
            uint16_t *out_rows = out + q * out_plane + row * plan.out_w;
            if (in_registers) {
                simd::tile_rows_f16(row0, plan.in_w, out_rows, plan.out_w, n, static_cast<int>(kh),
                                    static_cast<int>(kw), Op, scale, factor, plan.tile_ahead);
                return n;
            }
            simd::widen(row0, rows, n * kh * plan.in_w, Bf16);
            if (simd_rows) {
                simd::tile_rows_f32(rows, plan.in_w, outs, plan.out_w, n, static_cast<int>(kh),
                                    static_cast<int>(kw), Op, scale, factor, 0);
            } else {
                for (int64_t j = 0; j < n; j++)
                    tile_row<float, Op>(rows + j * kh * plan.in_w, outs + j * plan.out_w, plan);
            }
            simd::narrow(outs, out_rows, n * plan.out_w, Bf16);
            return n;
        });
}

OVPOOL_END
