// The channel-blocked kernel (Path::blocked): planes in the lanes of a vector.
//
// A work unit takes a run of plane groups (eight consecutive planes a group)
// and a band of output rows. For each group it transposes the input the
// band's windows read into per-thread scratch laid out [slice][row][column]
// [lane] (simd::planes_to_lanes, widening 16-bit floats and 8-bit integers
// to float on the way), pools there with every tap one vector operation
// across the eight planes, and transposes the band's outputs (and indices)
// back. A group of fewer than eight planes repeats its first plane in the
// spare lanes, whose results are never stored. float16 and bfloat16 max
// values and indices take the groups in pairs instead, sixteen planes in
// 16-bit order keys (key_groups, simd/keys.hpp), with the same layout,
// offsets and bits.
//
// Where every axis has uniform windows (any fixed window: kernel, stride,
// dilation, padding, either rounding; adaptive bins of equal size) the
// layout carries the padding, filled with the identity (-inf for maxima, 0
// for sums), as ONNX Runtime's MLAS pads its row buffer: every window is
// then the same list of taps (Plan::tap_offsets) from its first element,
// and outputs go eight at a time, across rows, with no bounds to test. The
// padding and each output's first element (band_table) are the same for
// every group of a unit: they are set once a unit, and the transpose writes
// each input row straight to its place between the padding. Where some
// window holds no input element (max values), or reaches the padding (with
// indices: a -inf there could come first), an output whose maximum comes
// out -inf is redone by its window tables (Plan::redo_minus_inf; elsewhere
// the padding gives each window's own answer). Adaptive bins of unequal
// size take every output by the tables, in an unpadded layout.
//
// Each output combines its taps in one order, lane by lane, with the same
// operations in every build:
// * max values: maxps (the running value is kept only when greater), over
//   the taps in Plan::max_order (and a row's own list, Plan::row_lists), so
//   among equal maxima (a +0 and a -0) the one the separable passes and
//   tilings keep is kept; a NaN
//   anywhere in the window gives the canonical NaN (a group whose input holds
//   no NaN, the usual case, runs without the NaN flag); windows of many rows
//   and columns (Plan::column_span) pool each column of a row's windows once
//   and then the windows over their columns, the same order (a group with a
//   NaN takes its windows whole);
// * max with indices: row-major, the first maximum (a strict ">"); a NaN
//   always wins and the last NaN is kept; the value is the element the index
//   names; windows of many rows and columns (Plan::row_taps) pool each row's
//   W windows once, then the windows over their rows, in order: the same
//   first maximum, last NaN and index;
// * sums: row-major (depth, row, column), the first tap, then each next one
//   added, as PyTorch sums a window (padding adds +0, which changes nothing
//   but the sign of a zero sum); windows of many rows and columns
//   (Plan::column_span, tilings aside) each column over its rows, then the
//   columns, as the row kernel sums; averages divide by div_d * div_h (an
//   integer, rounded once) times div_w; Lp sums |x|^p, taken as the input
//   is transposed, then the root.
#pragma once

#include <algorithm>
#include <type_traits>

#include "../call.hpp"
#include "../simd/keys.hpp"

OVPOOL_BEGIN
namespace blocked {

constexpr int64_t L = simd::kLanes;

// ---------------------------------------------------------------------------
// The operations of each family on eight lanes
// ---------------------------------------------------------------------------

enum class Op : int { max, max_nan, sum, argmax, argmax_nan };

constexpr bool has_positions(Op o) {
    return o == Op::argmax || o == Op::argmax_nan;
}

constexpr bool is_max(Op o) {
    return o != Op::sum;
}

// A running window: the value and, by op, the NaN flag (max_nan) or the
// position of the value relative to the window's first element (argmax).
template <class C, Op O>
struct Acc {
    simd::Pack<C> v, aux;
};

template <class C, Op O>
OVPOOL_INLINE void start(Acc<C, O> &a, const C *p, const simd::Pack<C> *tap_pos) {
    a.v = simd::load(p);
    if constexpr (O == Op::max_nan)
        a.aux = simd::unord(a.v);
    else if constexpr (has_positions(O))
        a.aux = *tap_pos;
}

template <class C, Op O>
OVPOOL_INLINE void step(Acc<C, O> &a, const C *p, const simd::Pack<C> *tap_pos) {
    const simd::Pack<C> x = simd::load(p);
    if constexpr (O == Op::max) {
        a.v = simd::vmax(a.v, x);
    } else if constexpr (O == Op::max_nan) {
        a.v = simd::vmax(a.v, x);
        a.aux = simd::or_(a.aux, simd::unord(x));
    } else if constexpr (O == Op::sum) {
        a.v = simd::add(a.v, x);
    } else {
        simd::Pack<C> take = simd::gt(x, a.v);
        if constexpr (O == Op::argmax_nan)
            take = simd::or_(take, simd::unord(x));
        a.v = simd::blend(take, x, a.v);
        a.aux = simd::blend(take, *tap_pos, a.aux);
    }
}

// N windows from their first elements p[j] over the plan's tap list
// (offsets[t] elements on, tap_pos[t] the index-space offsets in lanes).
template <class C, Op O, int N>
OVPOOL_INLINE void gather(const C *const p[N], const int64_t *offsets, int64_t n_taps,
                          const simd::Pack<C> *tap_pos, Acc<C, O> a[N]) {
    for (int j = 0; j < N; j++)
        start(a[j], p[j] + offsets[0], tap_pos);
    for (int64_t t = 1; t < n_taps; t++) {
        const int64_t off = offsets[t];
        for (int j = 0; j < N; j++)
            step(a[j], p[j] + off, tap_pos + t);
    }
}

// ---------------------------------------------------------------------------
// Finishing an output
// ---------------------------------------------------------------------------

template <class C>
struct Finish {
    int mode;             // kSumAverage, kSumLp1, kSumLp2, kSumLpP
    double inv_p;         // Lp: 1 / p
    simd::Pack<C> empty;  // max: an empty window's value
    simd::Pack<C> nan;    // max: the canonical NaN
};

// An output from its window into out (and pos): div, the average's divisor;
// at, the index-space position of the window's first element.
template <class C, Op O>
OVPOOL_INLINE void finish(const Acc<C, O> &a, C div, C at, const Finish<C> &f, C *out, C *pos) {
    if constexpr (O == Op::max) {
        simd::store(out, a.v);
    } else if constexpr (O == Op::max_nan) {
        simd::store(out, simd::blend(a.aux, f.nan, a.v));
    } else if constexpr (O == Op::sum) {
        if (f.mode == kSumAverage) {
            simd::store(out, simd::div(a.v, simd::set1(div)));
        } else if (f.mode == kSumLp2) {
            simd::store(out, simd::sqrt(a.v));
        } else if (f.mode == kSumLp1) {
            simd::store(out, a.v);
        } else {
            alignas(64) C lanes[L];
            simd::store(lanes, a.v);
            for (int l = 0; l < L; l++)
                out[l] = static_cast<C>(std::pow(static_cast<double>(lanes[l]), f.inv_p));
        }
    } else {
        simd::store(out, a.v);
        simd::store(pos, simd::add(a.aux, simd::set1(at)));
    }
}

// ---------------------------------------------------------------------------
// Outputs by their window tables
// ---------------------------------------------------------------------------

// The band of input in lanes of the current unit and group.
template <class C>
struct Lanes {
    const C *in;
    Band band;
};

// Output (od, oh, ow) by its window tables: each window row, each tap, in
// the order of the tap list (max values: Plan::max_order; else row-major);
// an empty window gives the empty value (and position -1: the caller's
// index base).
template <class C, Op O>
OVPOOL_NOINLINE void by_table(const Plan &plan, const Lanes<C> &lanes, int64_t od, int64_t oh,
                              int64_t ow, const Finish<C> &f, C *out, C *pos) {
    const int64_t *wd = plan.win_d.data() + 3 * od, *wh = plan.win_h.data() + 3 * oh;
    const int64_t *ww = plan.win_w.data() + 3 * ow;
    const int64_t nd = wd[1], nh = wh[1], nw = ww[1];
    const C div =
        static_cast<C>(static_cast<C>(wd[2] * wh[2]) *
                       (std::is_same<C, double>::value ? plan.div_w_f64[ow] : plan.div_w_f32[ow]));
    if (nd == 0 || nh == 0 || nw == 0) {
        if constexpr (O == Op::sum) {
            Acc<C, O> a;
            a.v = simd::set1(C(0));
            finish(a, div, C(0), f, out, pos);
        } else {
            simd::store(out, f.empty);
            if constexpr (has_positions(O))
                simd::store(pos, simd::set1(C(-1)));
        }
        return;
    }
    const Band &b = lanes.band;
    const int64_t row_len = plan.lane_width * L, slice_len = plan.lane_rows * row_len;
    auto at = [&](int64_t td, int64_t th, int64_t t) -> const C * {
        const int64_t id = wd[0] + td * plan.dil_d, ih = wh[0] + th * plan.dil_h;
        const int64_t iw = ww[0] + t * plan.dil_w;
        return lanes.in + (id - b.d_lo) * slice_len + (ih - b.h_lo) * row_len +
               (iw + plan.lane_pad[2]) * L;
    };
    simd::Pack<C> tap;
    auto position = [&](int64_t td, int64_t th, int64_t t) -> const simd::Pack<C> * {
        if constexpr (has_positions(O)) {
            const int64_t id = wd[0] + td * plan.dil_d, ih = wh[0] + th * plan.dil_h;
            const int64_t iw = ww[0] + t * plan.dil_w;
            tap = simd::set1(static_cast<C>(id * plan.index_stride_d + ih * plan.index_stride_h +
                                            iw * plan.index_stride_w));
        }
        return &tap;
    };
    Acc<C, O> a;
    start(a, at(0, 0, 0), position(0, 0, 0));
    const bool values = O == Op::max || O == Op::max_nan;
    const MaxOrder order = values ? plan.max_order : MaxOrder::row_major;
    // the first tap again: max and sums are unchanged by it (x > x is false)
    // only if skipped, so each order starts after (0, 0, 0)
    if (order == MaxOrder::row_major) {
        for (int64_t td = 0; td < nd; td++)
            for (int64_t th = 0; th < nh; th++)
                for (int64_t t = (td == 0 && th == 0) ? 1 : 0; t < nw; t++)
                    step(a, at(td, th, t), position(td, th, t));
    } else if (order == MaxOrder::columns) {
        // each column's rows in groups, the groups in reverse order (see
        // set_taps); max values only, so restarting at the first tap is
        // harmless (the maximum of x and x is x, whichever zero)
        const int64_t rows = nd * nh;
        const int64_t group = std::is_same<C, double>::value ? rows : 3;
        for (int64_t t = 0; t < nw; t++)
            for (int64_t g = (rows - 1) / group * group; g >= 0; g -= group)
                for (int64_t r = g; r < std::min(g + group, rows); r++)
                    step(a, at(r / nh, r % nh, t), position(r / nh, r % nh, t));
    } else {
        // columns_depth_inner: each column's slab rows in groups, the depth
        // rows of each in groups (see set_taps)
        const int64_t gd = std::is_same<C, double>::value ? nd : 3;
        const int64_t gh = std::is_same<C, double>::value ? nh : 3;
        for (int64_t t = 0; t < nw; t++)
            for (int64_t hg = (nh - 1) / gh * gh; hg >= 0; hg -= gh)
                for (int64_t th = hg; th < std::min(hg + gh, nh); th++)
                    for (int64_t dg = (nd - 1) / gd * gd; dg >= 0; dg -= gd)
                        for (int64_t td = dg; td < std::min(dg + gd, nd); td++)
                            step(a, at(td, th, t), position(td, th, t));
    }
    finish(a, div, C(0), f, out, pos);
}

// ---------------------------------------------------------------------------
// A band of outputs
// ---------------------------------------------------------------------------

// Where each output of a unit's band reads: the element of its window's
// first tap in the band's lanes, and its divisor (sums) or the index-space
// position of that element (argmax). The same for every group of the unit,
// so worked out once a unit (not for plans by the tables). With kinds of
// column (bins of unequal size along W) the outputs are grouped by tap
// list, so that a list's outputs go in batches: slot j holds output
// order[j], list l's outputs slots [runs[l], runs[l + 1]).
// With first_index (indices as keys), also output k's index-space position
// of its window's first element, by output.
template <class C, Family F>
inline void band_table(const Plan &plan, const Band &b, int64_t r0, int64_t r1, int64_t *first,
                       C *aux, int64_t *order, int64_t *runs, int32_t *first_index = nullptr) {
    const int64_t out_w = plan.out_w, out_h = plan.out_h, kinds = plan.n_col_kinds;
    const int64_t row_len = plan.lane_width * L, slice_len = plan.lane_rows * row_len;
    const C *div_w = div_w_of<C>(plan);
    constexpr bool sums = F != Family::max && F != Family::argmax;
    const bool grouped = kinds > 1;
    const int64_t n_lists = static_cast<int64_t>(plan.tap_lists.size()) / 2;
    int64_t *next = runs + n_lists + 1;
    if (grouped) {
        std::fill(runs, runs + n_lists + 1, int64_t(0));
        for (int64_t row = r0; row < r1; row++)
            for (int64_t ow = 0; ow < out_w; ow++)
                runs[plan.row_lists[row * kinds + plan.col_kind[ow]] + 1]++;
        for (int64_t l = 0; l < n_lists; l++)
            runs[l + 1] += runs[l];
        std::copy(runs, runs + n_lists, next);
    }
    for (int64_t row = r0, k = 0; row < r1; row++) {
        const int64_t od = row / out_h, oh = row - od * out_h;
        const int64_t id0 =
            plan.uniform[0] ? od * plan.stride[0] - plan.pad[0] : plan.win_d[3 * od];
        const int64_t ih0 =
            plan.uniform[1] ? oh * plan.stride[1] - plan.pad[1] : plan.win_h[3 * oh];
        const int64_t base = (id0 - b.d_lo) * slice_len + (ih0 - b.h_lo) * row_len;
        C row_div = 0, row_first = 0;
        if constexpr (sums)
            row_div = static_cast<C>(plan.win_d[3 * od + 2] * plan.win_h[3 * oh + 2]);
        if constexpr (F == Family::argmax)
            row_first = static_cast<C>(id0 * plan.index_stride_d + ih0 * plan.index_stride_h);
        for (int64_t ow = 0; ow < out_w; ow++, k++) {
            const int64_t iw0 =
                plan.uniform[2] ? ow * plan.stride[2] - plan.pad[2] : plan.win_w[3 * ow];
            int64_t j = k;
            if (grouped) {
                j = next[plan.row_lists[row * kinds + plan.col_kind[ow]]]++;
                order[j] = k;
            }
            first[j] = base + (iw0 + plan.lane_pad[2]) * L;
            if (first_index)
                first_index[k] =
                    static_cast<int32_t>(id0 * plan.index_stride_d + ih0 * plan.index_stride_h +
                                         iw0 * plan.index_stride_w);
            if constexpr (sums)
                aux[j] = static_cast<C>(row_div * div_w[ow]);
            if constexpr (F == Family::argmax)
                aux[j] = row_first + static_cast<C>(iw0 * plan.index_stride_w);
        }
    }
}

// Outputs k .. k + M of a band (up to k1), their windows M at a time from
// their first elements, in + at(k); with Spare, the windows past k1 repeat
// the last output's and are not stored.
template <class C, Op O, int M, bool Spare, class At, class Output>
OVPOOL_INLINE void batch(const C *in, const At &at, int64_t k, int64_t k1, const int64_t *offsets,
                         int64_t n_taps, const simd::Pack<C> *tap_pos, const Output &output) {
    const C *p[M];
    for (int j = 0; j < M; j++)
        p[j] = in + at(Spare ? std::min<int64_t>(k + j, k1 - 1) : k + j);
    Acc<C, O> a[M];
    gather<C, O, M>(p, offsets, n_taps, tap_pos, a);
    for (int j = 0; j < M && (!Spare || k + j < k1); j++)
        output(k + j, a[j]);
}

// Outputs [k0, k1) of a band, all with one tap list, N at a time. One
// output alone is a chain of dependent operations, a tap's latency each,
// that out-of-order execution cannot overlap with the next output's once the
// window is long (an average 7x7 s1 p1 on 7x6 planes, 6 outputs a plane,
// spent 85% of its time in that chain): sums and maxima with indices of 16+
// taps take their last m outputs as a batch too, the smallest of 2, 4 or N
// that holds them, with spare windows (a batch of 8 for one output was 1.07x
// slower on 5x5 windows; adaptive max 7x1 bins on 56x55 planes, 4 outputs
// and 3 single ones a plane before, 0.92x as two batches of 4). Short
// windows' chains overlap, and a maximum's take a cycle a tap (max 4x4 s2 on
// 7x7 planes 1.05x slower batched).
template <class C, Op O, int N, class At, class Output>
OVPOOL_INLINE void by_list(const C *in, const At &at, int64_t k0, int64_t k1,
                           const int64_t *offsets, int64_t n_taps, const simd::Pack<C> *tap_pos,
                           const Output &output) {
    int64_t k = k0;
    for (; k + N <= k1; k += N)
        batch<C, O, N, false>(in, at, k, k1, offsets, n_taps, tap_pos, output);
    if constexpr (O == Op::sum || has_positions(O)) {
        const int64_t m = k1 - k;
        if (N == 8 && n_taps >= 16 && m > 4)
            return batch<C, O, N, true>(in, at, k, k1, offsets, n_taps, tap_pos, output);
        if (n_taps >= 16 && m > 2)
            return batch<C, O, 4, true>(in, at, k, k1, offsets, n_taps, tap_pos, output);
        if (n_taps >= 16 && m == 2)
            return batch<C, O, 2, true>(in, at, k, k1, offsets, n_taps, tap_pos, output);
    }
    for (; k < k1; k++)
        batch<C, O, 1, false>(in, at, k, k1, offsets, n_taps, tap_pos, output);
}

// Max values or sums of outputs [r0, r1) x [0, out_w) with columns pooled
// once (Plan::column_span): for each output row, every column its W windows
// read takes the maximum (or sum) of its rows (the row's list's first column
// of taps) into a column buffer, eight columns at a time; then each window
// combines its columns there, finished by output. The lists combine a
// window's taps column by column (MaxOrder; sums: set_taps), so this keeps
// the same one of equal maxima and the row kernel's order of a sum.
template <class C, Op O, class Output>
OVPOOL_NOINLINE void pool_columns(const Plan &plan, const C *in, int64_t r0, int64_t r1,
                                  const int64_t *first, C *cols, const Output &output) {
    const int64_t out_w = plan.out_w, kw = plan.kernel[2], span = plan.column_span;
    const int64_t step = plan.stride[2] * L;
    const int64_t *offsets = plan.tap_offsets.data(), *lists = plan.tap_lists.data();
    const int64_t *w_taps = plan.column_taps.data();
    const auto column = [](int64_t c) { return c * L; };
    const auto window = [step](int64_t k) { return k * step; };
    for (int64_t row = r0; row < r1; row++) {
        const int64_t list = plan.row_lists.empty() ? 0 : plan.row_lists[row];
        const int64_t k0 = (row - r0) * out_w;
        by_list<C, O, 8>(in + first[k0], column, 0, span, offsets + lists[2 * list],
                         lists[2 * list + 1] / kw, nullptr,
                         [=](int64_t c, const Acc<C, O> &a) { simd::store(cols + c * L, a.v); });
        by_list<C, O, 8>(cols, window, 0, out_w, w_taps, kw, nullptr,
                         [=](int64_t k, const Acc<C, O> &a) { output(k0 + k, a); });
    }
}

// Max with indices of outputs [r0, r1) x [0, out_w) by rows
// (Plan::row_taps): the W windows of every row of the band, out_w of them a
// row, into rows (values, then their W positions), by the first kw taps of
// the tap list; then each window over its rows, in order, each row's
// position added to its winner's. M windows at a time.
template <class C, Op O, int M>
OVPOOL_INLINE void over_rows(const C *const p[M], ptrdiff_t to_pos, const int64_t *row_taps,
                             int64_t n_rows, const simd::Pack<C> *row_pos, int64_t pos_step,
                             Acc<C, O> a[M]) {
    for (int j = 0; j < M; j++) {
        a[j].v = simd::load(p[j]);
        a[j].aux = simd::load(p[j] + to_pos);  // the first row's position is 0
    }
    for (int64_t r = 1; r < n_rows; r++) {
        const int64_t off = row_taps[r];
        const simd::Pack<C> at = row_pos[r * pos_step];
        for (int j = 0; j < M; j++) {
            const simd::Pack<C> x = simd::load(p[j] + off);
            simd::Pack<C> take = simd::gt(x, a[j].v);
            if constexpr (O == Op::argmax_nan)
                take = simd::or_(take, simd::unord(x));
            a[j].v = simd::blend(take, x, a[j].v);
            a[j].aux = simd::blend(take, simd::add(simd::load(p[j] + off + to_pos), at), a[j].aux);
        }
    }
}

template <class C, Op O>
OVPOOL_NOINLINE void pool_by_rows(const Plan &plan, const C *in, int64_t r0, int64_t r1,
                                  const Finish<C> &f, C *out, C *pos, const simd::Pack<C> *tap_pos,
                                  const int64_t *first, const C *aux, C *rows) {
    const int64_t out_w = plan.out_w, kw = plan.kernel[2];
    const int64_t n_rows = plan.lane_slices * plan.lane_rows, row_len = plan.lane_width * L;
    const int64_t step = plan.stride[2] * L, width = out_w * L;
    const ptrdiff_t to_pos = n_rows * width;
    const Finish<C> fin = f;
    for (int64_t r = 0; r < n_rows; r++) {
        C *v = rows + r * width;
        by_list<C, O, 4>(
            in + r * row_len, [step](int64_t k) { return k * step; }, 0, out_w,
            plan.tap_offsets.data(), kw, tap_pos,
            [=](int64_t k, const Acc<C, O> &a) {
                simd::store(v + k * L, a.v);
                simd::store(v + to_pos + k * L, a.aux);
            });
    }
    const int64_t *row_taps = plan.row_taps.data();
    const int64_t n_taps = static_cast<int64_t>(plan.row_taps.size());
    auto output = [&](int64_t k, const Acc<C, O> &a) {
        if constexpr (std::is_same<C, simd::Key2>::value) {
            // keys: positions relative to the window's first element
            simd::store(out + k * L, a.v);
            simd::store(pos + k * L, a.aux);
        } else {
            finish(a, C(0), aux[k], fin, out + k * L, pos + k * L);
        }
    };
    for (int64_t row = r0; row < r1; row++) {
        const int64_t k0 = (row - r0) * out_w;
        const C *p0 = rows + first[k0] / row_len * width;
        int64_t ow = 0;
        for (; ow + 4 <= out_w; ow += 4) {
            const C *p[4] = {p0 + ow * L, p0 + (ow + 1) * L, p0 + (ow + 2) * L, p0 + (ow + 3) * L};
            Acc<C, O> a[4];
            over_rows<C, O, 4>(p, to_pos, row_taps, n_taps, tap_pos, kw, a);
            for (int j = 0; j < 4; j++)
                output(k0 + ow + j, a[j]);
        }
        for (; ow < out_w; ow++) {
            const C *p[1] = {p0 + ow * L};
            Acc<C, O> a[1];
            over_rows<C, O, 1>(p, to_pos, row_taps, n_taps, tap_pos, kw, a);
            output(k0 + ow, a[0]);
        }
    }
}

// Outputs [r0, r1) x [0, out_w) of one group (a pair of groups as keys),
// N at a time (across rows) from the unit's band table, by the tap lists
// (one for the band, one a run of rows, or one a group of outputs:
// Plan::row_lists).
template <class C, Op O>
inline void pool_lists(const Plan &plan, const C *in, int64_t r0, int64_t r1, const Finish<C> &f,
                       C *out, C *pos, const simd::Pack<C> *tap_pos, const int64_t *first,
                       const C *aux, const int64_t *order, const int64_t *runs, C *cols) {
    constexpr int N = has_positions(O) ? 4 : 8;
    const int64_t out_w = plan.out_w;
    // captures by value: the vector stores may alias anything, so values
    // read through references would be read again after each store
    const Finish<C> fin = f;
    // band table slot j into output k
    auto store = [=](int64_t j, int64_t k, const Acc<C, O> &a) {
        if constexpr (std::is_same<C, simd::Key2>::value) {
            // keys: the positions stay relative to the window's first
            // element (keys_to_indices adds its index)
            simd::store(out + k * L, a.v);
            if constexpr (has_positions(O))
                simd::store(pos + k * L, a.aux);
        } else {
            C div = 0, at = 0;
            if constexpr (O == Op::sum)
                div = aux[j];
            if constexpr (has_positions(O))
                at = aux[j];
            finish(a, div, at, fin, out + k * L, pos + k * L);
        }
    };
    auto output = [=](int64_t k, const Acc<C, O> &a) { store(k, k, a); };
    const int64_t n_out = (r1 - r0) * out_w;
    const int64_t *offsets = plan.tap_offsets.data(), *lists = plan.tap_lists.data();
    const auto from = [first](int64_t k) { return first[k]; };
    if ((O == Op::max || O == Op::sum) && plan.column_span > 0) {
        if constexpr (O == Op::max || O == Op::sum)
            pool_columns<C, O>(plan, in, r0, r1, first, cols, output);
    } else if (has_positions(O) && !plan.row_taps.empty()) {
        if constexpr (has_positions(O))
            pool_by_rows<C, O>(plan, in, r0, r1, f, out, pos, tap_pos, first, aux, cols);
    } else if (plan.row_lists.empty()) {
        by_list<C, O, N>(in, from, 0, n_out, offsets, plan.n_taps, tap_pos, output);
    } else if (plan.n_col_kinds == 1) {
        // runs of rows with the same list
        int64_t list = plan.row_lists[r0], k0 = 0;
        for (int64_t row = r0 + 1; row <= r1; row++) {
            const int64_t own = row < r1 ? plan.row_lists[row] : -1;
            if (own == list)
                continue;
            const int64_t at = lists[2 * list], k1 = (row - r0) * out_w;
            by_list<C, O, N>(in, from, k0, k1, offsets + at, lists[2 * list + 1], tap_pos + at,
                             output);
            list = own;
            k0 = k1;
        }
    } else {
        // the band table's groups: slot j is output order[j]
        auto output_at = [=](int64_t j, const Acc<C, O> &a) { store(j, order[j], a); };
        const int64_t n_lists = static_cast<int64_t>(plan.tap_lists.size()) / 2;
        for (int64_t l = 0; l < n_lists; l++) {
            const int64_t at = lists[2 * l];
            if (runs[l] < runs[l + 1])
                by_list<C, O, N>(in, from, runs[l], runs[l + 1], offsets + at, lists[2 * l + 1],
                                 tap_pos + at, output_at);
        }
    }
}

// Outputs [r0, r1) x [0, out_w) of one group by pool_lists; a maximum of
// -inf is redone by the tables. Plans by the tables: each output by the
// tables.
template <class C, Op O>
inline void pool_band(const Plan &plan, const Lanes<C> &lanes, int64_t r0, int64_t r1,
                      const Finish<C> &f, C *out, C *pos, const simd::Pack<C> *tap_pos,
                      const int64_t *first, const C *aux, const int64_t *order, const int64_t *runs,
                      C *cols) {
    const int64_t out_w = plan.out_w, out_h = plan.out_h;
    if (plan.lanes_by_table) {
        for (int64_t row = r0; row < r1; row++) {
            const int64_t od = row / out_h, oh = row - od * out_h;
            for (int64_t ow = 0; ow < out_w; ow++) {
                const int64_t at = ((row - r0) * out_w + ow) * L;
                by_table<C, O>(plan, lanes, od, oh, ow, f, out + at, pos + at);
            }
        }
        return;
    }
    pool_lists<C, O>(plan, lanes.in, r0, r1, f, out, pos, tap_pos, first, aux, order, runs, cols);
    if constexpr (is_max(O)) {
        // where the padding gives every window's own answer, no scan (it
        // alone took 17% of max 2x2 s1 on 16x512x14x14: 0.78x without it)
        if (!plan.redo_minus_inf)
            return;
        const int64_t n_out = (r1 - r0) * out_w;
        // a maximum of -inf: padding only, or -inf values; the tables tell
        // them apart. Redone after the taps' loops, not in them: a call
        // there clobbers every vector register, and gcc then kept two of
        // the eight windows on the stack through the taps (max 5x5 s1 on
        // 17x17 planes 1.5x the time of the same sums)
        const simd::Pack<C> minus_inf = simd::set1(-std::numeric_limits<C>::infinity());
        for (int64_t k = 0; k < n_out; k++)
            if (simd::any(simd::eq(simd::load(out + k * L), minus_inf))) {
                const int64_t row = r0 + k / out_w, od = row / out_h;
                by_table<C, O>(plan, lanes, od, row - od * out_h, k % out_w, f, out + k * L,
                               pos + k * L);
            }
    }
}

// ---------------------------------------------------------------------------
// The unit
// ---------------------------------------------------------------------------

// The transpose that also prefetches outputs, kept out of line: inlined
// beside the other, it slowed calls that prefetch no outputs by 5-13%
// (average 2x2 s3 on 16x512x7x7, max 2x2 s3 on 32x768x7x7, at 2 threads).
template <simd::Elem E, bool Check, simd::Fold Fo>
OVPOOL_NOINLINE bool to_lanes_out(const void *const src[8], ptrdiff_t n, float *dst,
                                  ptrdiff_t row_w, ptrdiff_t row_stride, const simd::Ahead &ahead) {
    return simd::planes_to_lanes<E, Check, Fo, true>(src, n, dst, row_w, row_stride, ahead);
}

template <class C, simd::Elem E, simd::Fold Fo>
OVPOOL_INLINE bool to_lanes(const void *const src[8], ptrdiff_t n, C *dst, ptrdiff_t row_w,
                            ptrdiff_t row_stride, bool check, const simd::Ahead &ahead) {
    if constexpr (std::is_same<C, double>::value) {
        static_assert(Fo == simd::Fold::none, "float64 lanes fold after the transpose");
        return check ? simd::planes_to_lanes_f64<true>(src, n, dst, row_w, row_stride)
                     : simd::planes_to_lanes_f64<false>(src, n, dst, row_w, row_stride);
    } else {
        if (ahead.out_bytes > 0)
            return check ? to_lanes_out<E, true, Fo>(src, n, dst, row_w, row_stride, ahead)
                         : to_lanes_out<E, false, Fo>(src, n, dst, row_w, row_stride, ahead);
        return check ? simd::planes_to_lanes<E, true, Fo>(src, n, dst, row_w, row_stride, ahead)
                     : simd::planes_to_lanes<E, false, Fo>(src, n, dst, row_w, row_stride, ahead);
    }
}

template <class C, simd::Elem E>
OVPOOL_INLINE void to_planes(const C *src, ptrdiff_t n, void *const dst[8], int count) {
    if constexpr (std::is_same<C, double>::value)
        simd::lanes_to_planes_f64(src, n, dst, count);
    else
        simd::lanes_to_planes<E>(src, n, dst, count);
}

template <class C>
OVPOOL_INLINE void fill(C *p, int64_t positions, simd::Pack<C> value) {
    for (int64_t i = 0; i < positions; i++)
        simd::store(p + i * L, value);
}

// |x|^p of every value of a band in lanes (Lp), in place.
template <class C>
inline void lp_transform(C *v, int64_t n, int mode, double p) {
    if (mode == kSumLp2) {
        for (int64_t i = 0; i < n; i++)
            simd::store(v + i * L, simd::mul(simd::load(v + i * L), simd::load(v + i * L)));
    } else if (mode == kSumLp1) {
        for (int64_t i = 0; i < n; i++)
            simd::store(v + i * L, simd::abs(simd::load(v + i * L)));
    } else {
        for (int64_t i = 0; i < n * L; i++)
            v[i] = static_cast<C>(std::pow(std::fabs(static_cast<double>(v[i])), p));
    }
}

// The positions of a band in lanes that hold no input: the padding around
// it, and slices and rows outside the input, set to the identity. They are
// the same for every group of a unit and band_to_lanes never writes them,
// so they are set once a unit.
template <class C>
inline void band_padding(const Plan &plan, const Band &b, C *in, simd::Pack<C> identity) {
    const int64_t in_w = plan.in_w, width = plan.lane_width, pw = plan.lane_pad[2];
    const int64_t row_len = width * L, slice_len = plan.lane_rows * row_len;
    const int64_t rows = b.h_hi - b.h_lo;
    const int64_t h0 = std::max<int64_t>(b.h_lo, 0), h1 = std::min(b.h_hi, plan.in_h);
    for (int64_t id = b.d_lo; id < b.d_hi; id++) {
        C *slice = in + (id - b.d_lo) * slice_len;
        if (id < 0 || id >= plan.in_d || h0 >= h1) {
            fill(slice, rows * width, identity);
            continue;
        }
        fill(slice, (h0 - b.h_lo) * width, identity);
        if (width != in_w)
            for (int64_t r = h0; r < h1; r++) {
                C *row = slice + (r - b.h_lo) * row_len;
                fill(row, pw, identity);
                fill(row + (pw + in_w) * L, width - pw - in_w, identity);
            }
        fill(slice + (h1 - b.h_lo) * row_len, (b.h_hi - h1) * width, identity);
    }
}

// The input of group q0's planes (count of them) a band reads, transposed
// into its place in lanes (see band_padding for the rest); prefetched
// meanwhile: ahead. Returns true when a NaN was met (with
// check). Fo: what each value becomes on the way (simd::Fold).
template <class C, simd::Elem E, simd::Fold Fo = simd::Fold::none>
inline bool band_to_lanes(const Plan &plan, const Band &b, const char *planes,
                          const int64_t lane_at[8], C *in, bool check, simd::Ahead ahead) {
    const int64_t esize = static_cast<int64_t>(simd::elem_size(E));
    const int64_t in_w = plan.in_w, width = plan.lane_width, pw = plan.lane_pad[2];
    const int64_t row_len = width * L, slice_len = plan.lane_rows * row_len;
    const int64_t h0 = std::max<int64_t>(b.h_lo, 0), h1 = std::min(b.h_hi, plan.in_h);
    if (h0 >= h1)
        return false;
    bool nan = false;
    const void *src[8];
    for (int64_t id = std::max<int64_t>(b.d_lo, 0); id < std::min(b.d_hi, plan.in_d); id++) {
        // the slice's rows [h0, h1) are contiguous in each plane: one span
        const int64_t offset = (id * plan.in_h + h0) * in_w;
        for (int l = 0; l < 8; l++)
            src[l] = planes + lane_at[l] + offset * esize;
        C *first = in + (id - b.d_lo) * slice_len + (h0 - b.h_lo) * row_len + pw * L;
        nan |= to_lanes<C, E, Fo>(src, (h1 - h0) * in_w, first, in_w, width, check, ahead);
        ahead = simd::Ahead{};
    }
    return nan;
}

// Index lanes to the caller's indices: index base of the plane plus the
// position (an empty window's -1: the base), reduced by index_modulo.
template <class C, class I>
inline void store_indices(const Plan &plan, const C *pos, int64_t n, I *const dst[8], int count,
                          const int64_t base[8]) {
    const int64_t modulo = plan.spec.index_modulo;
    if constexpr (std::is_same<C, float>::value)
        if (modulo == 0)
            return simd::lanes_to_indices(pos, n, dst, count, base);
    for (int l = 0; l < count; l++) {
        I *d = dst[l];
        const int64_t b = base[l];
        for (int64_t i = 0; i < n; i++) {
            const C p = pos[i * L + l];
            int64_t index = b + (p < 0 ? 0 : static_cast<int64_t>(p));
            if (modulo > 0)
                index %= modulo;
            d[i] = static_cast<I>(index);
        }
    }
}

// Where the indices of a group's lanes (a pair's as keys) go from output
// row r0: planes q0 .. q0 + count, spare lanes repeating plane q0, and
// each plane's index base.
template <class I>
OVPOOL_INLINE void index_targets(const Plan &plan, I *index, int64_t q0, int count, int lanes,
                                 int64_t r0, I **idst, int64_t *base) {
    for (int l = 0; l < lanes; l++) {
        const int64_t q = q0 + (l < count ? l : 0);
        idst[l] = index + q * plan.out_plane() + r0 * plan.out_w;
        base[l] = (q % plan.spec.planes_per_index_space) * plan.in_plane();
    }
}

// Groups [g0, g1) x output rows [r0, r1) in lanes of C. C: the compute
// type (float, or double for float64); E: the element type of the arrays;
// I: the index type (argmax).
template <class C, simd::Elem E, Family F, class I>
void groups(const Plan &plan, const Call &call, int64_t r0, int64_t r1, int64_t g0, int64_t g1,
            char *scratch) {
    const int64_t esize = static_cast<int64_t>(simd::elem_size(E));
    const int64_t in_plane = plan.in_plane(), out_plane = plan.out_plane();
    Lanes<C> lanes{scratch_part<C>(scratch, plan.scratch.lanes_in), band_of(plan, r0, r1)};
    C *in = scratch_part<C>(scratch, plan.scratch.lanes_in);
    C *out = scratch_part<C>(scratch, plan.scratch.lanes_out);
    C *pos = scratch_part<C>(scratch, plan.scratch.lanes_pos);
    simd::Pack<C> *tap_pos = scratch_part<simd::Pack<C>>(scratch, plan.scratch.tap_pos);
    if constexpr (F == Family::argmax)
        for (size_t t = 0; t < plan.tap_index.size(); t++)
            tap_pos[t] = simd::set1(static_cast<C>(plan.tap_index[t]));
    Finish<C> f;
    f.mode = plan.mode;
    f.inv_p = 1.0 / plan.p;
    // an empty window: with indices the element type's lowest value (16-bit
    // floats: float32's, rounded), without them OpenVINO's lowest float32
    if constexpr (E == simd::Elem::i8)
        f.empty = simd::set1(static_cast<C>(std::numeric_limits<int8_t>::lowest()));
    else if constexpr (E == simd::Elem::u8)
        f.empty = simd::set1(static_cast<C>(0));
    else if constexpr (F == Family::argmax && E == simd::Elem::f64)
        f.empty = simd::set1(static_cast<C>(std::numeric_limits<double>::lowest()));
    else
        f.empty = simd::set1(static_cast<C>(std::numeric_limits<float>::lowest()));
    f.nan = simd::set1(static_cast<C>(NAN));
    constexpr bool maxima = F == Family::max || F == Family::argmax;
    const simd::Pack<C> identity = simd::set1(maxima ? -std::numeric_limits<C>::infinity() : C(0));
    const bool check = maxima && E != simd::Elem::i8 && E != simd::Elem::u8;
    const char *x = static_cast<const char *>(call.x);
    char *y = static_cast<char *>(call.out);
    I *index = static_cast<I *>(call.indices);
    const int64_t n_out = (r1 - r0) * plan.out_w;
    int64_t *first = scratch_part<int64_t>(scratch, plan.scratch.win_at);
    C *aux = scratch_part<C>(scratch, plan.scratch.win_aux);
    int64_t *order = scratch_part<int64_t>(scratch, plan.scratch.win_order);
    int64_t *runs = scratch_part<int64_t>(scratch, plan.scratch.win_runs);
    C *cols = scratch_part<C>(scratch, plan.scratch.lanes_cols);
    if (!plan.lanes_by_table)
        band_table<C, F>(plan, lanes.band, r0, r1, first, aux, order, runs);
    band_padding(plan, lanes.band, in, identity);
    // bytes from a group's first input and output plane to each lane's (a
    // group of fewer planes repeats its first in the spare lanes)
    int64_t lane_in[8] = {}, lane_out[8] = {};
    int lanes_set = -1;
    for (int64_t g = g0; g < g1; g++) {
        const int64_t q0 = g * L;
        const int count = static_cast<int>(std::min<int64_t>(L, plan.n_planes - q0));
        if (count != lanes_set) {
            for (int l = 0; l < 8; l++) {
                lane_in[l] = (l < count ? l : 0) * in_plane * esize;
                lane_out[l] = (l < count ? l : 0) * out_plane * esize;
            }
            lanes_set = count;
        }
        // whole planes: the next group's input is one span, prefetched while
        // this group's is transposed (not past the unit's last group), or
        // with lanes_prefetch_head only the head of each of its planes, now;
        // with lanes_prefetch_out so is this group's output, for writing,
        // which the pooling then leaves time to arrive before the transpose
        // out stores to it (eight streams of stores, each line read for
        // ownership at its first store, kept that transpose waiting)
        const bool whole = plan.bands == 1 && g + 1 < g1;
        const char *next = x + (q0 + L) * in_plane * esize;
        const int64_t next_planes = whole ? std::min<int64_t>(L, plan.n_planes - q0 - L) : 0;
        simd::Ahead ahead{next, plan.lanes_prefetch_head > 0 ? 0 : next_planes * in_plane * esize};
        for (int64_t q = 0; q < next_planes && plan.lanes_prefetch_head > 0; q++)
            for (int64_t k = 0; k < plan.lanes_prefetch_head; k++)
                prefetch_l2(next + q * in_plane * esize + k * 64);
        if (plan.lanes_prefetch_out) {
            ahead.out = y + q0 * out_plane * esize;
            ahead.out_bytes = count * out_plane * esize;
            if constexpr (F == Family::argmax) {
                ahead.indices = reinterpret_cast<const char *>(index + q0 * out_plane);
                ahead.index_bytes = count * out_plane * static_cast<int64_t>(sizeof(I));
            }
        }
        const char *planes = x + q0 * in_plane * esize;
        bool nan = false, folded = false;
        if constexpr (F == Family::lp && std::is_same<C, float>::value) {
            // |x| and x * x on the way into lanes; other powers after
            folded = plan.mode == kSumLp2 || plan.mode == kSumLp1;
            if (plan.mode == kSumLp2)
                band_to_lanes<C, E, simd::Fold::square>(plan, lanes.band, planes, lane_in, in,
                                                        false, ahead);
            else if (plan.mode == kSumLp1)
                band_to_lanes<C, E, simd::Fold::abs>(plan, lanes.band, planes, lane_in, in, false,
                                                     ahead);
        }
        if (!folded) {
            nan = band_to_lanes<C, E>(plan, lanes.band, planes, lane_in, in, check, ahead);
            if constexpr (F == Family::lp)
                lp_transform(in, plan.lane_slices * plan.lane_rows * plan.lane_width, plan.mode,
                             plan.p);
        }
        if constexpr (F == Family::max) {
            if (nan)
                pool_band<C, Op::max_nan>(plan, lanes, r0, r1, f, out, pos, tap_pos, first, aux,
                                          order, runs, cols);
            else
                pool_band<C, Op::max>(plan, lanes, r0, r1, f, out, pos, tap_pos, first, aux, order,
                                      runs, cols);
        } else if constexpr (F == Family::argmax) {
            if (nan)
                pool_band<C, Op::argmax_nan>(plan, lanes, r0, r1, f, out, pos, tap_pos, first, aux,
                                             order, runs, cols);
            else
                pool_band<C, Op::argmax>(plan, lanes, r0, r1, f, out, pos, tap_pos, first, aux,
                                         order, runs, cols);
        } else {
            pool_band<C, Op::sum>(plan, lanes, r0, r1, f, out, pos, tap_pos, first, aux, order,
                                  runs, cols);
        }
        void *dst[8];
        char *y0 = y + (q0 * out_plane + r0 * plan.out_w) * esize;
        for (int l = 0; l < 8; l++)
            dst[l] = y0 + lane_out[l];
        to_planes<C, E>(out, n_out, dst, count);
        if constexpr (F == Family::argmax) {
            I *idst[8];
            int64_t base[8];
            index_targets(plan, index, q0, count, 8, r0, idst, base);
            store_indices(plan, pos, n_out, idst, count, base);
        }
    }
}

// Groups [g0, g1) x output rows [r0, r1) of 16-bit max values (and
// indices) as keys (Plan::lanes_keys), a pair of groups at a time: sixteen
// planes in the lanes. A pair whose input holds a NaN or a -0 is pooled
// again as floats (by groups), which rewrites the outputs the keys gave.
template <simd::Elem E, Family F, class I>
void key_groups(const Plan &plan, const Call &call, int64_t r0, int64_t r1, int64_t g0, int64_t g1,
                char *scratch) {
    using K = simd::Key2;
    constexpr bool indices = F == Family::argmax;
    constexpr Op O = indices ? Op::argmax : Op::max;
    const int64_t in_plane = plan.in_plane(), out_plane = plan.out_plane();
    const Band b = band_of(plan, r0, r1);
    K *in = scratch_part<K>(scratch, plan.scratch.lanes_in);
    K *out = scratch_part<K>(scratch, plan.scratch.lanes_out);
    K *pos = scratch_part<K>(scratch, plan.scratch.lanes_pos);
    K *cols = scratch_part<K>(scratch, plan.scratch.lanes_cols);
    simd::Pack<K> *tap_pos = scratch_part<simd::Pack<K>>(scratch, plan.scratch.tap_pos);
    int64_t *first = scratch_part<int64_t>(scratch, plan.scratch.win_at);
    int32_t *first_index = scratch_part<int32_t>(scratch, plan.scratch.win_aux);
    int64_t *order = scratch_part<int64_t>(scratch, plan.scratch.win_order);
    int64_t *runs = scratch_part<int64_t>(scratch, plan.scratch.win_runs);
    Finish<K> f{};
    // an empty window: as the float lanes give it (OpenVINO's lowest
    // float32, rounded; with indices the index base)
    uint16_t empty_bits;
    simd::narrow1<float>(std::numeric_limits<float>::lowest(), &empty_bits, 0, E);
    const int16_t pad = simd::pad_key(E);
    const char *x = static_cast<const char *>(call.x);
    char *y = static_cast<char *>(call.out);
    I *index = static_cast<I *>(call.indices);
    const int64_t n_out = (r1 - r0) * plan.out_w;
    const int64_t h0 = std::max<int64_t>(b.h_lo, 0), h1 = std::min(b.h_hi, plan.in_h);
    const int64_t row_len = plan.lane_width * L, slice_len = plan.lane_rows * row_len;
    bool ready = false;  // the band table, padding and taps' positions are the keys'
    for (int64_t g = g0; g < g1; g += 2) {
        const int64_t q0 = g * L;
        const int count = static_cast<int>(std::min<int64_t>(2 * L, plan.n_planes - q0));
        if (!ready) {
            band_table<float, Family::max>(plan, b, r0, r1, first, nullptr, order, runs,
                                           indices ? first_index : nullptr);
            band_padding(plan, b, in, simd::set1_key(pad));
            if constexpr (indices)
                for (size_t t = 0; t < plan.tap_index.size(); t++)
                    tap_pos[t] = simd::set1_key(static_cast<int16_t>(plan.tap_index[t]));
            ready = true;
        }
        // whole planes: the next pair's input is one span, prefetched while
        // this pair's is transposed (its outputs are not: float16 max 5x5 s3
        // p2 on 32x192x71x74, 6.8 MB out, measured even with them)
        simd::Ahead ahead{x + (q0 + 2 * L) * in_plane * 2,
                          plan.bands == 1 && g + 2 < g1
                              ? std::min<int64_t>(2 * L, plan.n_planes - q0 - 2 * L) * in_plane * 2
                              : 0};
        bool bad = false;
        const void *src[16];
        for (int64_t id = std::max<int64_t>(b.d_lo, 0); id < std::min(b.d_hi, plan.in_d) && h0 < h1;
             id++) {
            const int64_t offset = (id * plan.in_h + h0) * plan.in_w;
            for (int l = 0; l < 16; l++)
                src[l] = x + ((q0 + (l < count ? l : 0)) * in_plane + offset) * 2;
            K *at = in + (id - b.d_lo) * slice_len + (h0 - b.h_lo) * row_len + plan.lane_pad[2] * L;
            bad |= simd::planes_to_keys<E>(src, (h1 - h0) * plan.in_w, at, plan.in_w,
                                           plan.lane_width, ahead);
            ahead = simd::Ahead{};
        }
        if (bad) {
            groups<float, E, F, I>(plan, call, r0, r1, g, std::min(g + 2, g1), scratch);
            ready = false;
            continue;
        }
        pool_lists<K, O>(plan, in, r0, r1, f, out, pos, tap_pos, first, nullptr, order, runs, cols);
        void *dst[16];
        for (int l = 0; l < 16; l++)
            dst[l] = y + ((q0 + (l < count ? l : 0)) * out_plane + r0 * plan.out_w) * 2;
        simd::keys_to_planes(out, n_out, dst, count, plan.any_empty, empty_bits, pad);
        if constexpr (indices) {
            I *idst[16];
            int64_t base[16];
            index_targets(plan, index, q0, count, 16, r0, idst, base);
            simd::keys_to_indices(pos, out, first_index, n_out, idst, count, base, plan.any_empty,
                                  pad, plan.spec.index_modulo);
        }
    }
}

// The work unit: groups [g0, g1) x output rows [r0, r1) (Schedule::group,
// Plan::unit_rows).
template <class C, simd::Elem E, Family F, class I>
void unit(const Plan &plan, const Call &call, int64_t u, char *scratch) {
    const int64_t run = u / plan.bands;
    int64_t r0, r1;
    band_span(plan, plan.unit_rows, u % plan.bands, &r0, &r1);
    const int64_t g0 = run * call.schedule.group;
    const int64_t g1 = std::min(plan.n_groups, g0 + call.schedule.group);
    if constexpr ((F == Family::max || F == Family::argmax) &&
                  (E == simd::Elem::f16 || E == simd::Elem::bf16))
        if (plan.lanes_keys)
            return key_groups<E, F, I>(plan, call, r0, r1, g0, g1, scratch);
    groups<C, E, F, I>(plan, call, r0, r1, g0, g1, scratch);
}

}  // namespace blocked
OVPOOL_END
