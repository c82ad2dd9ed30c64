// Window geometry and the plan of a pool call: built once per shape, in one
// place, for every front door.
//
// * Output-size arithmetic of fixed windows (ONNX and OpenVINO rules:
//   explicit pads, auto_pad same_upper / same_lower / valid, rounding floor,
//   ceil and ceil_torch, dilations) and adaptive bins, in integers.
// * Window tables per axis: row o is (first, taps, divisor), the first tap
//   inside the input, the number of taps inside it (taps are first + t *
//   dilation), and this axis's factor of an average's divisor. The tables
//   are clipped to the input, so no inner loop tests for padding.
// * make_plan: every rank lifted to three spatial axes (size-1 axes in
//   front), the tables, the buffers and prefetch distances, and the kernel
//   path as one enum chosen by one function (choose_path) from the op
//   family, the element type and the geometry.
// * make_schedule: the work units of a call for a thread count.
//
// Tuning constants are named here with the measurement behind each; a
// constant that depends on cache sizes says which cache it assumes.
#pragma once

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "simd/argmax.hpp"
#include "spec.hpp"

OVPOOL_BEGIN

// ---------------------------------------------------------------------------
// Output sizes
// ---------------------------------------------------------------------------

struct AxisSize {
    int64_t n_out;  // may be <= 0: the window does not fit (the caller decides)
    int64_t pad_begin, pad_end;
};

inline int64_t effective_kernel(int64_t kernel, int64_t dilation) {
    return (kernel - 1) * dilation + 1;
}

// Floor division for any signs (C++ truncates toward zero).
inline int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Output size and the pads actually used along one axis of a fixed-window
// pool. same_*: ceil(n_in / s) outputs, total pad max((out - 1) s + ek - n_in,
// 0), the odd element at the end (upper) or the start (lower); rounding does
// not apply. valid: no pads, the rounding applies (as ONNX Runtime and
// OpenVINO do). Arguments are validated by the caller (n_in >= 0, kernel,
// stride, dilation >= 1, pads >= 0, all below 2^40).
inline AxisSize axis_output_size(int64_t n_in, int64_t kernel, int64_t stride, int64_t dilation,
                                 int64_t pad_begin, int64_t pad_end, AutoPad auto_pad,
                                 Rounding rounding) {
    const int64_t ek = effective_kernel(kernel, dilation);
    if (auto_pad == AutoPad::same_upper || auto_pad == AutoPad::same_lower) {
        const int64_t n_out = -floor_div(-n_in, stride);
        const int64_t total = std::max<int64_t>((n_out - 1) * stride + ek - n_in, 0);
        const int64_t small = total / 2, large = total - total / 2;
        if (auto_pad == AutoPad::same_upper)
            return {n_out, small, large};
        return {n_out, large, small};
    }
    if (auto_pad == AutoPad::valid)
        pad_begin = pad_end = 0;
    const int64_t span = n_in + pad_begin + pad_end - ek;
    if (span < 0)
        return {0, pad_begin, pad_end};
    int64_t n_out;
    if (rounding == Rounding::floor) {
        n_out = span / stride + 1;
    } else {
        n_out = (span + stride - 1) / stride + 1;
        if (rounding == Rounding::ceil_torch && (n_out - 1) * stride >= n_in + pad_begin)
            n_out -= 1;
    }
    return {n_out, pad_begin, pad_end};
}

// Adaptive bin i of n_out over n_in: [floor(i n_in / n_out), ceil((i + 1)
// n_in / n_out)), in integers (a float formula misplaces bin borders once
// n_in * n_out > 2^24, as OpenVINO's CPU plugin does).
inline int64_t adaptive_start(int64_t i, int64_t n_in, int64_t n_out) {
    return i * n_in / n_out;
}

inline int64_t adaptive_end(int64_t i, int64_t n_in, int64_t n_out) {
    return ((i + 1) * n_in + n_out - 1) / n_out;
}

// ONNX MaxUnpool's default output size: (n_in - 1) s + k - pad_begin - pad_end,
// INT64_MAX where that passes it (n_in s: two sizes of up to 2^40 each).
inline int64_t unpool_output_size(int64_t n_in, int64_t kernel, int64_t stride, int64_t pad_begin,
                                  int64_t pad_end) {
    const __int128 size = static_cast<__int128>(n_in - 1) * stride + kernel - pad_begin - pad_end;
    return size > INT64_MAX ? INT64_MAX : static_cast<int64_t>(size);
}

// ---------------------------------------------------------------------------
// Empty windows, without a table
// ---------------------------------------------------------------------------

namespace detail {

inline int64_t mod(int64_t a, int64_t m) {
    const int64_t r = a % m;
    return r < 0 ? r + m : r;
}

// The smallest x >= 0 with lo <= a x mod m <= hi (0 <= a < m, 0 <= lo <= hi
// < m), or -1: Euclid's reduction, O(log m) steps. When no multiple of a
// lands in [lo, hi] before wrapping around m, a x - m y in [lo, hi] asks for
// the smallest y with m y mod a in [-hi mod a, -lo mod a], the same problem
// on (m mod a, a). The back-substitution multiplies two sizes: 128 bits.
inline int64_t first_hit_at(int64_t a, int64_t m, int64_t lo, int64_t hi) {
    if (lo == 0)
        return 0;
    if (a == 0)
        return -1;
    const int64_t k = (lo + a - 1) / a;
    if (a * k <= hi)  // (a k < lo + a < 2 m)
        return k;
    const int64_t y = first_hit_at(m % a, a, mod(-hi, a), mod(-lo, a));
    if (y < 0)
        return -1;
    const __int128 numerator = static_cast<__int128>(lo) + static_cast<__int128>(m) * y;
    return static_cast<int64_t>((numerator + a - 1) / a);
}

}  // namespace detail

// Whether some window of a fixed-window axis holds no input element (pads
// already resolved by axis_output_size), decided in O(log) steps without a
// table: shape inference and attribute checks answer for any size at once
// and allocate nothing. Arguments: n_out as axis_output_size gives it, every
// size below 2^40.
//
// Only windows starting outside the input can be empty. Past its end, every
// such window is. In front, window o (start o s - pad_begin < 0) reaches 0
// when the first one does ((k - 1) d >= pad_begin; otherwise the first is
// empty), and its first tap at or past 0 is at (o s - pad_begin) mod d: the
// window is empty when that lies beyond the input. The smallest such o comes
// from first_hit_at.
inline bool axis_has_empty_window(int64_t n_in, int64_t n_out, int64_t kernel, int64_t stride,
                                  int64_t dilation, int64_t pad_begin) {
    if (n_out < 1)
        return false;
    if (n_in < 1)
        return true;
    if (static_cast<__int128>(n_out - 1) * stride - pad_begin >= n_in)
        return true;
    const int64_t in_front = std::min(n_out, (pad_begin + stride - 1) / stride);
    if (in_front == 0)
        return false;
    if (static_cast<__int128>(kernel - 1) * dilation < pad_begin)
        return true;
    if (dilation <= n_in)
        return false;
    // the smallest o with (o s - pad_begin) mod d in [n_in, d - 1]; that
    // interval holds no 0, so the shift by -pad_begin never wraps it
    const int64_t b = detail::mod(-pad_begin, dilation);
    int64_t lo = n_in - b, hi = dilation - 1 - b;
    if (lo < 0 && hi >= 0)
        return true;  // window 0 itself
    lo = detail::mod(lo, dilation);
    hi = detail::mod(hi, dilation);
    const int64_t o = detail::first_hit_at(stride % dilation, dilation, lo, hi);
    return o >= 0 && o < in_front;
}

// ---------------------------------------------------------------------------
// Window tables
// ---------------------------------------------------------------------------

// The windows of one axis as the kernels take them. When uniform, output o
// also reads the padded positions o * stride + t * dilation (t < kernel) of
// the input with pad_begin elements of padding in front: the separable
// passes then run a fixed-size window over a padded buffer instead of the
// table. Adaptive bins are uniform when n_in % n_out == 0.
struct Windows {
    int64_t n_in = 1, n_out = 1;
    int64_t kernel = 1, stride = 1, dilation = 1, pad_begin = 0;
    bool uniform = true;
    std::vector<int64_t> table;  // n_out rows of (first, taps, divisor)

    int64_t first(int64_t o) const { return table[3 * o]; }
    int64_t taps(int64_t o) const { return table[3 * o + 1]; }
    int64_t max_taps() const {
        int64_t m = 0;
        for (int64_t o = 0; o < n_out; o++)
            m = std::max(m, taps(o));
        return m;
    }
    int64_t min_taps() const {
        int64_t m = std::numeric_limits<int64_t>::max();
        for (int64_t o = 0; o < n_out; o++)
            m = std::min(m, taps(o));
        return m;
    }
    bool any_empty() const { return min_taps() == 0; }
};

// Worked example: n_in=5, k=3, s=2, pads (1, 1): windows start at -1, 1, 3;
// rows (0, 2, 2|3), (1, 3, 3), (3, 2, 2|3) (taps | declared pads).
inline Windows fixed_windows(const AxisSpec &a) {
    Windows w;
    w.n_in = a.n_in;
    w.n_out = a.n_out;
    w.kernel = a.kernel;
    w.stride = a.stride;
    w.dilation = a.dilation;
    w.pad_begin = a.pad_begin;
    w.uniform = true;
    w.table.resize(static_cast<size_t>(3 * a.n_out));
    const int64_t d = a.dilation;
    for (int64_t o = 0; o < a.n_out; o++) {
        const int64_t start = o * a.stride - a.pad_begin;
        // first tap t >= 0 with start + t d >= 0, last with start + t d <= n_in - 1
        const int64_t t_first = start < 0 ? (-start + d - 1) / d : 0;
        const int64_t t_last = std::min(a.kernel - 1, floor_div(a.n_in - 1 - start, d));
        const int64_t taps = std::max<int64_t>(t_last - t_first + 1, 0);
        int64_t divisor = taps;
        if (a.divisor == Divisor::declared_pads || a.divisor == Divisor::ov_include) {
            const int64_t t_padded =
                std::min(a.kernel - 1, floor_div(a.n_in + a.pad_end - 1 - start, d));
            divisor = std::max<int64_t>(t_padded + 1, 0);
            if (a.divisor == Divisor::ov_include)
                divisor = std::max<int64_t>(divisor, 1);
        } else if (a.divisor == Divisor::ov_exclude && taps == 0) {
            divisor = start >= a.n_in ? a.n_in - start : 0;
        }
        w.table[3 * o] = taps > 0 ? start + t_first * d : 0;
        w.table[3 * o + 1] = taps;
        w.table[3 * o + 2] = divisor;
    }
    return w;
}

inline Windows adaptive_windows(int64_t n_in, int64_t n_out) {
    Windows w;
    w.n_in = n_in;
    w.n_out = n_out;
    w.table.resize(static_cast<size_t>(3 * n_out));
    for (int64_t o = 0; o < n_out; o++) {
        const int64_t start = adaptive_start(o, n_in, n_out);
        const int64_t size = adaptive_end(o, n_in, n_out) - start;
        w.table[3 * o] = start;
        w.table[3 * o + 1] = size;
        w.table[3 * o + 2] = size;
    }
    if (n_in % n_out == 0) {
        w.kernel = w.stride = n_in / n_out;
        w.uniform = true;
    } else {
        w.uniform = false;
    }
    return w;
}

inline Windows axis_windows(const AxisSpec &a) {
    return a.adaptive ? adaptive_windows(a.n_in, a.n_out) : fixed_windows(a);
}

// ---------------------------------------------------------------------------
// The plan
// ---------------------------------------------------------------------------

// The kernel path of a call, chosen by choose_path. Each exists because the
// benchmark showed it faster than the general path on the shapes it takes,
// with the same bits (see the family headers for the measurements).
enum class Path : int32_t {
    empty = 0,            // no output element to compute
    global = 1,           // every window is a whole plane: one reduction per plane
    tiles = 2,            // kernel == stride <= 4, no padding, no pooling along D: runs of
                          // output rows straight from the input, PyTorch's summation order
    rows = 3,             // the separable passes, one output row at a time (the general path)
    rows_run = 4,         // float32 windows uniform along W, no pooling along D: runs of rows,
                          // their vertical passes one span where the windows step by one row
    adaptive_narrow = 5,  // float32 adaptive averages, bins under 8 taps: eight rows in lanes
    adaptive_wide = 6,    // float32 adaptive averages, bins of 8+ taps over 2+ rows: eight
                          // bins at a time, each summed in lanes over all its rows
    depth_slices = 7,     // pooling along D one depth slice at a time, for a group of rows
    depth_slab = 8,       // max values and averages pooled along D first, into a per-thread
                          // slab, then H and W as a 2D plane
    argmax = 9,           // max with indices: edges by the tables, the interior vectorised,
                          // adaptive bins window by window or by a column fold
    argmax_tiles = 10,    // max with indices of tilings (float32): the vector argmax over runs
};

inline const char *path_name(Path p) {
    switch (p) {
        case Path::empty:
            return "empty";
        case Path::global:
            return "global";
        case Path::tiles:
            return "tiles";
        case Path::rows:
            return "rows";
        case Path::rows_run:
            return "rows_run";
        case Path::adaptive_narrow:
            return "adaptive_narrow";
        case Path::adaptive_wide:
            return "adaptive_wide";
        case Path::depth_slices:
            return "depth_slices";
        case Path::depth_slab:
            return "depth_slab";
        case Path::argmax:
            return "argmax";
        case Path::argmax_tiles:
            return "argmax_tiles";
    }
    return "?";
}

// How an Lp or average sum is transformed and finished.
enum SumMode : int { kSumAverage = 0, kSumLp1 = 1, kSumLp2 = 2, kSumLpP = 3 };

// Thresholds of the path choice and the prefetches. The defaults are what
// the benchmark measured best; each says which cache size its measurement
// assumes. A front door may pass other values (the tests lower the size
// thresholds to run the large-input paths on small arrays).
struct Tuning {
    // Parallel work units per thread when planes are few (load balance).
    int64_t units_per_thread = 8;
    // Tiling pools whose windows use every input row take groups of
    // consecutive planes as one plane of at most this many outputs.
    int64_t merged_outputs = 4096;
    // Input rows the row path prefetches ahead (4 windows' advance), only for
    // overlapping windows of inputs of 2^21+ elements and planes of 8K+
    // elements: a smaller input stays in a 32 MiB last-level cache between
    // calls, where the prefetches only cost (maxpool 3x3 s2 on 1x64x112x112:
    // 0.133 -> 0.124 ms without them; on 4x64x112x112 they save 0.62 -> 0.51
    // ms, 4 rows ahead slightly better than 2), and the hardware prefetcher
    // streams through small planes on its own (adaptive 8x256x50x50 -> 7: 0.82
    // -> 0.74 ms without). Tiling windows and 1D pools stream through the
    // input, which the hardware prefetcher follows better than 4 rows ahead
    // (aap1d 4.5 -> 3.3 ms, aap3d 4.7 -> 3.5 ms without).
    int64_t prefetch_rows = 4;
    int64_t prefetch_min_elements = int64_t(1) << 21;
    int64_t prefetch_min_plane = 8192;
    // Tiling windows on inputs of 16 MiB or more prefetch 8 KiB ahead of each
    // run of output rows: the hardware prefetcher alone left max and average
    // 2x2 s2 on 16x128x56x56 float32 (25.7 MB) 25-30% slower (1.06 -> 0.76
    // ms, 1.03 -> 0.78; adaptive 14->7 on 64x512x14x14 1.24 -> 0.98; 16 KiB
    // ahead gained less, 1 KiB lost). Inputs that stay in a 32 MiB last-level
    // cache between calls only pay for the prefetches (adaptive 28->7 on
    // 8x512x28x28, 12.8 MB: 12% slower with them).
    int64_t tile_prefetch_min_bytes = int64_t(16) << 20;
    int64_t tile_ahead_bytes = 8192;
    // Pooling along D through the slab prefetches the next unit's slab rows
    // into L2 on inputs of 2^22+ elements (16 MiB of float32): below that it
    // cost adaptive 10x30x30 -> 3x7x7 19-29% at batch 4 and 6 (inputs that
    // stay in a 32 MiB last-level cache), and saved 7-34% from 18 MB up.
    int64_t slab_prefetch_min_elements = int64_t(1) << 22;
    // Elements of per-thread scratch for the column sums or maxima of a block
    // of output rows on the run path (0: no run path). 4 KiB: average 7x7 s1
    // on 4x32x112x112 at 1 thread 0.87 ms with 1024, 1.02 with 4096 (the
    // block is read back once per window row); the narrower windows measured
    // the same from 1024 to 4096.
    int64_t run_elements = 1024;
    // Elements of per-thread scratch for the column sums of a group of output
    // rows when pooling along D slice by slice.
    int64_t slice_scratch = 8192;
    // Largest per-thread slab of depth maxima or sums, bytes: a quarter of a
    // 1 MiB L2 (maxpool3d 3x3x3 s2 3.63 -> 3.16 ms, avgpool3d 3.75 -> 3.00,
    // aap3d 2.98 -> 2.37, aap3d_overlap 0.48 -> 0.33 with the slab).
    int64_t slab_bytes = 256 * 1024;
    // Per-thread scratch a 16-bit-float kernel may use before the input is
    // widened to float32 as a whole instead.
    int64_t half_scratch_limit = int64_t(8) << 20;
};

// Per-thread scratch of a call: byte offsets of its parts in one block
// (each part 64-byte aligned), and its size. -1: the part is not used.
struct ScratchLayout {
    int64_t bytes = 0;
    int64_t buf = -1;      // padded column buffer(s), compute type
    int64_t offsets = -1;  // row offsets, int64
    int64_t run = -1;      // rows_run: a block of rows' column sums or maxima, then
                           // the horizontal pass's outputs over it, float
    int64_t lanes = -1;    // adaptive_narrow's column sums, float
    int64_t slab = -1;     // depth_slab's slab, compute type
    int64_t rows = -1;     // 16-bit: widened window rows / tiles / plane, float
    int64_t out_row = -1;  // 16-bit: a float output row / the global values
    int64_t local = -1;    // 16-bit: row offsets into the widened rows, int64
    int64_t pos = -1;      // argmax: int32 positions / int64 scratch
    int64_t col = -1;      // argmax: column maxima then their int32 row ranks
    int64_t state = -1;    // 16-bit argmax: the plane now widened, int64
};

struct Plan {
    PoolSpec spec;
    Tuning tuning;
    Path path = Path::empty;
    DType compute = DType::f32;  // what the kernels read (f32 when widen_input)
    bool widen_input = false;    // the caller widens a 16-bit input to float32 first
    int mode = kSumAverage;      // sum families
    double p = 1.0;
    int64_t out_spatial[3] = {1, 1, 1};

    // the computed geometry, every rank lifted to (D, H, W); a merged tiling
    // sees groups of planes as one tall plane
    int64_t n_planes = 0;
    int64_t in_d = 1, in_h = 1, in_w = 1, out_d = 1, out_h = 1, out_w = 1;
    int64_t dil_d = 1, dil_h = 1, dil_w = 1;
    std::vector<int64_t> win_d, win_h, win_w;  // (out_*, 3) tables
    std::vector<float> div_w_f32;              // W divisor factors of sums: float32 and the
    std::vector<double> div_w_f64;             // 16-bit types, or float64
    bool uniform_w = true;                     // horizontal pass over a padded buffer
    bool direct_w = true;                      // the W windows stay inside the input (no padding)
    int64_t kernel_w = 1, stride_w = 1, pad_w = 0;
    int64_t interior_lo = 0, interior_hi = 0;  // outputs with every W tap inside
    int64_t buffer_width = 1, max_rows = 1;
    int64_t prefetch = 0, prefetch_block = 0;  // elements ahead / advanced per row
    int64_t slice_rows = 0;                    // depth_slices: rows per scratch group
    int64_t slab_lo = 0, slab_hi = 0;          // depth_slab: the slab's input rows
    bool slab_prefetch = false;
    int64_t tile_kh = 0, tile_kw = 0, tile_ahead = 0;
    bool bins_by_window = false;   // argmax: adaptive bins window by window
    bool narrow_rows = false;      // float32 average bins under 8 taps, rows of 8+:
                                   // eight rows at a time where the build has AVX2
                                   // (adaptive_narrow, depth_slab)
    std::vector<int64_t> empty_w;  // max: W windows with no tap
    bool any_empty = false;        // max: some window has no tap
    // argmax index layout
    int64_t index_stride_d = 0, index_stride_h = 0, index_stride_w = 1;
    bool row_major = true;

    ScratchLayout scratch;

    int64_t in_plane() const { return in_d * in_h * in_w; }
    int64_t out_plane() const { return out_d * out_h * out_w; }
    int64_t rows_per_plane() const { return out_d * out_h; }
    int64_t in_elements() const { return n_planes * in_plane(); }
    int64_t out_elements() const { return n_planes * out_plane(); }
};

// Output rows whose column sums or maxima the run path keeps at a time.
inline int64_t run_rows(const Plan &plan) {
    return std::max<int64_t>(1, std::min(plan.out_h, plan.tuning.run_elements / plan.in_w));
}

// Windows 3 wide at W stride 1 or 2 over at most 3 rows: the run path's own
// kernels (simd::max_rows_k3_f32, sum_rows_k3_f32) take them, padded or not.
inline bool run_three_wide(const Plan &plan) {
    return plan.kernel_w == 3 && (plan.stride_w == 1 || plan.stride_w == 2) && plan.dil_w == 1 &&
           plan.dil_h == 1 && plan.max_rows <= 3;
}

// The work units of one call.
struct Schedule {
    int64_t n_units = 0;
    int64_t rows_per_block = 1;  // output rows per unit (row paths)
    int64_t blocks_per_plane = 1;
    int64_t group = 1;  // planes per unit (global paths)
    int64_t chunk = 1;  // units handed out at a time
};

namespace detail {

// Front doors check limits::kMaxElements (and the memory budget) first, so
// this only keeps the arithmetic below from overflowing.
inline int64_t checked_mul(int64_t a, int64_t b) {
    if (a < 0 || b < 0 || (a != 0 && b > limits::kMaxElements / a))
        throw std::length_error("ovpool: sizes too large");
    return a * b;
}

inline bool is_tiling_axis(const Windows &w) {
    if (!(w.uniform && w.stride == w.kernel && w.pad_begin == 0 && w.dilation == 1 &&
          w.kernel >= 1 && w.kernel <= 4))
        return false;
    for (int64_t o = 0; o < w.n_out; o++)
        if (w.table[3 * o + 1] != w.kernel || w.table[3 * o + 2] != w.kernel)
            return false;
    return true;
}

inline int64_t max_taps(const std::vector<int64_t> &t) {
    int64_t m = 0;
    for (size_t o = 0; o < t.size(); o += 3)
        m = std::max(m, t[o + 1]);
    return m;
}

inline int64_t min_taps(const std::vector<int64_t> &t) {
    int64_t m = std::numeric_limits<int64_t>::max();
    for (size_t o = 0; o < t.size(); o += 3)
        m = std::min(m, t[o + 1]);
    return m;
}

inline int64_t round64(int64_t bytes) {
    return (bytes + 63) / 64 * 64;
}

// Byte offset of the row ranks after the column maxima in the argmax
// scratch, rounded up to 64 so that the int32 ranks stay aligned.
inline int64_t rank_offset(int64_t width, int64_t item_size) {
    return (width * item_size + 63) / 64 * 64;
}

struct Lifted {
    Windows axes[3];
};

}  // namespace detail

// The derived geometry of one computed view (the caller's, or a merged
// tiling's): everything but the path and the scratch.
inline void set_geometry(Plan &plan, int64_t n_planes, Windows axes[3]) {
    plan.n_planes = n_planes;
    plan.in_d = axes[0].n_in;
    plan.in_h = axes[1].n_in;
    plan.in_w = axes[2].n_in;
    plan.out_d = axes[0].n_out;
    plan.out_h = axes[1].n_out;
    plan.out_w = axes[2].n_out;
    plan.dil_d = axes[0].dilation;
    plan.dil_h = axes[1].dilation;
    plan.dil_w = axes[2].dilation;
    plan.win_d = std::move(axes[0].table);
    plan.win_h = std::move(axes[1].table);
    plan.win_w = std::move(axes[2].table);
    const Windows &w = axes[2];
    const int64_t in_w = plan.in_w;
    if (w.uniform) {
        const int64_t needed = (w.n_out - 1) * w.stride + (w.kernel - 1) * w.dilation + 1;
        plan.buffer_width = std::max(w.pad_begin + in_w, needed);
        plan.uniform_w = true;
        plan.kernel_w = w.kernel;
        plan.stride_w = w.stride;
        plan.pad_w = w.pad_begin;
        plan.direct_w = w.pad_begin == 0 && needed <= in_w;
        // outputs whose every tap lies inside the input (vectorised argmax)
        const int64_t s = w.stride, p = w.pad_begin, reach = (w.kernel - 1) * w.dilation;
        int64_t lo = (p + s - 1) / s;
        int64_t hi = in_w - 1 + p - reach >= 0 ? (in_w - 1 + p - reach) / s + 1 : 0;
        lo = std::min(lo, w.n_out);
        hi = std::max<int64_t>(0, std::min(hi, w.n_out));
        plan.interior_lo = lo < hi ? lo : 0;
        plan.interior_hi = lo < hi ? hi : 0;
    } else {
        plan.buffer_width = in_w;
        plan.uniform_w = false;
        plan.kernel_w = 1;
        plan.stride_w = 1;
        plan.pad_w = 0;
        plan.direct_w = true;
        plan.interior_lo = plan.interior_hi = 0;
    }
    if (plan.in_d * plan.in_h * in_w >= (int64_t(1) << 31))
        plan.interior_lo = plan.interior_hi = 0;  // in-plane offsets are int32 in the vector argmax
    plan.max_rows =
        std::max<int64_t>(1, detail::max_taps(plan.win_d) * detail::max_taps(plan.win_h));
    // prefetch the rows a window advances by per output row, so many ahead,
    // where consecutive output rows share input rows (see tuning)
    const int64_t row_step = std::max<int64_t>(1, plan.in_h / std::max<int64_t>(1, plan.out_h));
    const bool overlapping = detail::max_taps(plan.win_h) > row_step;
    const int64_t in_plane = plan.in_plane();
    plan.prefetch_block = row_step * in_w;
    const bool streams = overlapping && n_planes * in_plane >= plan.tuning.prefetch_min_elements &&
                         in_plane >= plan.tuning.prefetch_min_plane;
    plan.prefetch = streams ? plan.tuning.prefetch_rows * plan.prefetch_block : 0;
    // pooling along D without a slab (and Lp pooling): groups of output rows
    // whose column sums fit tuning.slice_scratch elements, unless the row path
    // prefetches (overlapping windows of a large input: maxpool3d 3x3x3 s2 at
    // 2 threads 3.72 ms by slices, 3.49 by rows with prefetch; aap3d 4x8x8
    // tiles 2.52 by slices, 3.47 by rows)
    const bool pools_depth = detail::max_taps(plan.win_d) > 1;
    plan.slice_rows = pools_depth && !plan.prefetch
                          ? std::min(plan.out_h, std::max<int64_t>(1, plan.tuning.slice_scratch /
                                                                          plan.buffer_width))
                          : 0;
    // max values and averages pooled along D: a slab of the input rows the H
    // windows read, when it fits (Tuning::slab_bytes)
    plan.slab_lo = plan.slab_hi = 0;
    if (pools_depth && plan.in_h * in_w * 8 <= plan.tuning.slab_bytes) {
        int64_t lo = std::numeric_limits<int64_t>::max(), hi = 0;
        for (int64_t o = 0; o < plan.out_h; o++) {
            const int64_t first = plan.win_h[3 * o], taps = plan.win_h[3 * o + 1];
            if (taps > 0) {
                lo = std::min(lo, first);
                hi = std::max(hi, first + (taps - 1) * plan.dil_h + 1);
            }
        }
        if (hi > 0) {
            plan.slab_lo = lo;
            plan.slab_hi = hi;
        }
    }
    plan.slab_prefetch = n_planes * in_plane >= plan.tuning.slab_prefetch_min_elements;
}

namespace detail {

// (kh, kw) when every window is a full kh x kw tile at stride (kh, kw) with
// no padding and no pooling along D, else (0, 0).
inline void tiling_of(const Windows axes[3], int64_t *kh, int64_t *kw) {
    *kh = *kw = 0;
    const Windows &d = axes[0];
    if (d.n_out != d.n_in)
        return;
    for (int64_t o = 0; o < d.n_out; o++)
        if (d.table[3 * o + 1] != 1 || d.table[3 * o] != o)
            return;
    if (!is_tiling_axis(axes[1]) || !is_tiling_axis(axes[2]))
        return;
    if (axes[1].kernel == 1 && axes[2].kernel == 1)
        return;
    *kh = axes[1].kernel;
    *kw = axes[2].kernel;
}

inline bool is_global(const Windows axes[3]) {
    for (int a = 0; a < 3; a++) {
        const Windows &w = axes[a];
        if (!(w.n_out == 1 && w.table[0] == 0 && w.table[1] == w.n_in && w.table[2] == w.n_in &&
              (w.n_in == 1 || w.dilation == 1)))
            return false;
    }
    return true;
}

}  // namespace detail

// The kernel path of a plan whose geometry is set: one decision, in order.
// (Paths a build or an element type lacks are never chosen.)
inline Path choose_path(const Plan &plan, bool global, bool tiling) {
    const Family family = plan.spec.family;
    const DType t = plan.compute;
    const bool f32 = t == DType::f32, half = is_half(t);
    const bool average = family == Family::average;
    if (plan.n_planes == 0 || plan.out_plane() == 0)
        return Path::empty;
    // a plane reduced whole: 16 lanes, no window tables (global max of 7x7
    // planes 17% faster without a scalar tail; means of a group of planes in
    // one vector loop: 32x2048x7x7 0.249 -> 0.208 ms at 1 thread)
    if (global && family != Family::argmax)
        return Path::global;
    if (family == Family::argmax) {
        // tiles with indices: the vector argmax over runs of rows (adaptive
        // max 28->7 with indices 0.88x, paired, against one call per row)
        if (f32 && tiling && simd::vector_rows_ok(plan.out_w, plan.tile_kw, plan.tile_kw) &&
            plan.in_plane() < (int64_t(1) << 31))
            return Path::argmax_tiles;
        return Path::argmax;
    }
    // tiles: straight from the input in PyTorch's order (adaptive 28->7 at 1
    // thread 320 -> 200 ns a plane against the separable passes)
    if (tiling && (average || family == Family::max))
        return Path::tiles;
    if (half)
        return Path::rows;  // 16-bit rows are widened and take the row path
    // pooling along D first into a slab that fits a quarter of L2 (maxpool3d
    // 3x3x3 s2 3.63 -> 3.16 ms, aap3d 2.98 -> 2.37 ms at 2 threads)
    const bool slab = plan.slab_hi > plan.slab_lo;
    if (slab && (average || family == Family::max))
        return Path::depth_slab;
    // else slice by slice, rows in address order (aap3d at 1 thread 6.4 ->
    // 2.8 ms against window row by window row)
    if (plan.slice_rows > 0 && (average || family == Family::max))
        return Path::depth_slices;
    // float32 windows uniform along W over one depth slice: a run of rows per
    // call (the per-row calls cost more than a small plane's arithmetic: max
    // 2x2 s1 on 16x32x38x38, 250 instructions a row of 37 outputs besides
    // the horizontal pass), the vertical passes of rows whose windows step by
    // one input row as one span. Windows of one row keep the row path, which
    // reads such a row in place (adaptive 1000 -> 100 in 1D, bins of 10,
    // 1.22-1.33x slower through the run's copy), and so do windows padded
    // along W, whose copy into the padded buffer cost more than the run saved
    // (average 5x5 s1 p2 on 32x24x71x71: 1.5x slower), except 3 wide, which
    // have their own kernel. Prefetched inputs keep the row path (a run of
    // 3-wide windows was 12% slower on the stem at batch 16).
    const int64_t max_h = detail::max_taps(plan.win_h), max_d = detail::max_taps(plan.win_d);
    const int64_t min_d = detail::min_taps(plan.win_d);
    const bool three_wide = run_three_wide(plan);
    if (f32 && plan.tuning.run_elements > 0 && plan.uniform_w &&
        ((max_h >= 2 && plan.direct_w) || three_wide) && max_h <= limits::kRunRows && min_d == 1 &&
        max_d == 1 && plan.prefetch == 0 &&
        (family == Family::max || average || family == Family::lp))
        return Path::rows_run;
    // adaptive averages of bins under 8 taps: eight rows in lanes (8x256x30x30
    // -> 7x7 0.35 -> 0.23 ms at 2 threads); not on prefetched rows
    // (2x64x224x224 -> 100 went 1.60 -> 2.32 ms)
    if (kAvx2 && plan.narrow_rows && plan.prefetch == 0)
        return Path::adaptive_narrow;
    // adaptive averages of bins of 8+ taps over 2+ rows: eight bins summed in
    // lanes over all their rows (50->7 0.49 -> 0.35 ms, 100->7 0.64 -> 0.37 ms
    // at 2 threads); narrower bins and one-row bins were slower that way (30->7
    // 0.35 -> 0.49, 1D 1000->7 1.35 -> 4.45 ms)
    if (f32 && average && !plan.uniform_w && plan.dil_w == 1 && plan.dil_h == 1 &&
        detail::min_taps(plan.win_w) >= 8 && max_d * max_h >= 2)
        return Path::adaptive_wide;
    return Path::rows;
}

namespace detail {

inline int64_t part(ScratchLayout &s, int64_t bytes) {
    const int64_t at = s.bytes;
    s.bytes += round64(bytes);
    return at;
}

// The per-thread scratch each path needs (see the family headers).
inline ScratchLayout scratch_layout(const Plan &plan) {
    ScratchLayout s;
    const int64_t item = static_cast<int64_t>(dtype_size(plan.compute));
    const int64_t fl = static_cast<int64_t>(sizeof(float)),
                  i64 = static_cast<int64_t>(sizeof(int64_t));
    const bool half = is_half(plan.compute);
    switch (plan.path) {
        case Path::empty:
            break;
        case Path::global:
            if (half) {
                const int64_t size = plan.in_plane();
                const int64_t batch = size <= limits::kHalfChunk
                                          ? std::max<int64_t>(1, limits::kHalfChunk / size)
                                          : 1;
                s.rows = part(s, limits::kHalfChunk * fl);
                s.out_row = part(s, batch * fl);
            }
            break;
        case Path::tiles:
            if (half && !(kF16cRows && plan.compute == DType::f16 &&
                          simd::vector_rows_ok(plan.out_w, plan.tile_kw, plan.tile_kw))) {
                const int64_t group =
                    std::max<int64_t>(1, limits::kHalfChunk / (plan.tile_kh * plan.in_w));
                s.rows = part(s, group * plan.tile_kh * plan.in_w * fl);
                s.out_row = part(s, group * plan.out_w * fl);
            }
            break;
        case Path::rows:
        case Path::rows_run:
        case Path::adaptive_narrow:
        case Path::adaptive_wide:
        case Path::depth_slices:
            if (half) {
                s.buf = part(s, plan.buffer_width * fl);
                s.rows = part(s, plan.max_rows * plan.in_w * fl);
                s.out_row = part(s, plan.out_w * fl);
                s.offsets = part(s, plan.max_rows * i64);
                s.local = part(s, plan.max_rows * i64);
            } else {
                const int64_t groups =
                    plan.path == Path::depth_slices ? std::max<int64_t>(1, plan.slice_rows) : 1;
                s.buf = part(s, groups * plan.buffer_width * item);
                s.offsets = part(s, plan.max_rows * i64);
                if (plan.path == Path::adaptive_narrow)
                    s.lanes = part(s, 8 * (plan.in_w + plan.out_w) * fl);
                if (plan.path == Path::rows_run)
                    s.run = part(s, 2 * run_rows(plan) * plan.in_w * fl);
            }
            break;
        case Path::depth_slab:
            s.buf = part(s, plan.buffer_width * item);
            s.slab = part(s, plan.in_h * plan.in_w * item);
            s.offsets = part(s, plan.max_rows * i64);
            if (kAvx2 && plan.narrow_rows)
                s.lanes = part(s, 8 * (plan.in_w + plan.out_w) * fl);
            break;
        case Path::argmax:
        case Path::argmax_tiles: {
            const int64_t compute_item = half ? fl : item;
            s.pos = part(s, (plan.out_w + 1) * i64);  // int32 positions, int64 scratch too
            s.col = part(s, rank_offset(plan.in_w, compute_item) +
                                plan.in_w * static_cast<int64_t>(sizeof(int32_t)));
            s.offsets = part(s, plan.max_rows * i64);
            if (half) {
                s.rows = part(s, plan.in_plane() * fl);
                s.out_row = part(s, plan.out_w * fl);
                s.state = part(s, i64);
            }
            break;
        }
    }
    return s;
}

}  // namespace detail

// The plan of a pool call. Throws std::invalid_argument for a spec no front
// door should pass (the front doors validate and explain first) and
// std::length_error for sizes beyond 2^40 elements.
inline Plan make_plan(const PoolSpec &spec, const Tuning &tuning = Tuning()) {
    Plan plan;
    plan.spec = spec;
    plan.tuning = tuning;
    if (spec.n_spatial < 1 || spec.n_spatial > 3)
        throw std::invalid_argument("ovpool: 1 to 3 spatial axes");
    if (spec.n < 0 || spec.c < 0)
        throw std::invalid_argument("ovpool: negative leading dims");
    const bool max_family = spec.family == Family::max || spec.family == Family::argmax;
    if (!max_family && (spec.dtype == DType::i8 || spec.dtype == DType::u8))
        throw std::invalid_argument("ovpool: sums need a floating-point type");
    const int64_t n_planes = detail::checked_mul(spec.n, spec.c);
    Windows axes[3];
    int64_t in_plane = 1, out_plane = 1;
    for (int a = 0; a < 3; a++) {
        const int s = a - (3 - spec.n_spatial);
        if (s < 0) {
            axes[a] = adaptive_windows(1, 1);  // a size-1 axis lifting the rank to 3
            continue;
        }
        const AxisSpec &as = spec.axes[s];
        if (as.n_in < 0 || as.n_out < 0 || as.kernel < 1 || as.stride < 1 || as.dilation < 1 ||
            as.pad_begin < 0 || as.pad_end < 0 || (as.adaptive && as.n_in < 1 && as.n_out > 0))
            throw std::invalid_argument("ovpool: bad axis description");
        in_plane = detail::checked_mul(in_plane, as.n_in);
        out_plane = detail::checked_mul(out_plane, as.n_out);
        plan.out_spatial[s] = as.n_out;
    }
    detail::checked_mul(n_planes, std::max(in_plane, out_plane));
    for (int a = 0; a < 3; a++) {
        const int s = a - (3 - spec.n_spatial);
        if (s >= 0)
            axes[a] = axis_windows(spec.axes[s]);
    }
    if (spec.family == Family::lp) {
        plan.p = spec.p;
        plan.mode = spec.p == 1.0 ? kSumLp1 : spec.p == 2.0 ? kSumLp2 : kSumLpP;
    }
    // index layout: row-major or column-major within a plane
    const int64_t in_d = axes[0].n_in, in_h = axes[1].n_in, in_w = axes[2].n_in;
    if (spec.column_major) {
        plan.index_stride_d = 1;
        plan.index_stride_h = in_d;
        plan.index_stride_w = in_d * in_h;
    } else {
        plan.index_stride_d = in_h * in_w;
        plan.index_stride_h = in_w;
        plan.index_stride_w = 1;
    }
    bool global = false, tiling = false;
    if (n_planes > 0 && in_plane > 0 && out_plane > 0) {
        global = detail::is_global(axes);
        detail::tiling_of(axes, &plan.tile_kh, &plan.tile_kw);
        tiling = plan.tile_kh > 0 && !global;
    }
    set_geometry(plan, n_planes, axes);  // (moves the tables into the plan)
    plan.row_major = plan.index_stride_w == 1 && plan.index_stride_h == plan.in_w &&
                     plan.index_stride_d == plan.in_h * plan.in_w;
    // 16-bit floats: widened window rows (a widened plane, with indices) in
    // per-thread scratch, unless that scratch would be too large: then the
    // caller widens the whole input to float32 first
    plan.compute = spec.dtype;
    if (is_half(spec.dtype)) {
        const int64_t scratch =
            4 * (spec.family == Family::argmax ? plan.in_plane() : plan.max_rows * plan.in_w);
        if (scratch > plan.tuning.half_scratch_limit) {
            plan.compute = DType::f32;
            plan.widen_input = true;
        }
    }
    plan.narrow_rows = plan.compute == DType::f32 && spec.family == Family::average &&
                       !plan.uniform_w && plan.dil_w == 1 && plan.dil_h == 1 &&
                       detail::max_taps(plan.win_w) < 8 && plan.in_w >= 8 &&
                       8 * (plan.in_w + plan.out_w) <= limits::kNarrowScratch;
    plan.path = choose_path(plan, global, tiling);
    if (plan.path == Path::tiles && plan.n_planes >= 2) {
        // Where the tiles use every input row, the input rows of plane q + 1
        // follow those of plane q with no gap, and so do the output rows: a
        // group of consecutive planes is one tall plane. The kernels then take
        // long runs of rows instead of one call per small plane (in a run,
        // float16 takes two rows at a time; a 7-row plane left one row alone).
        // Adaptive 28->7 on 8x512 planes 0.83x and 0.89x in float32, 0.80x and
        // 0.75x in float16 at 2 and 1 threads, 14->7 on 64x512 planes 0.75x;
        // 2x2 s2 on 56x56 planes the same either way. Values only: indices
        // count within each original plane.
        const int64_t rows_in = plan.in_d * plan.in_h, rows_out = plan.out_d * plan.out_h;
        if (rows_in == rows_out * plan.tile_kh &&
            plan.n_planes * plan.in_plane() < (int64_t(1) << 31)) {
            int64_t group = std::min(
                plan.n_planes, std::max<int64_t>(1, plan.tuning.merged_outputs / plan.out_plane()));
            while (plan.n_planes % group)
                group -= 1;
            if (group >= 2) {
                Windows merged[3];
                merged[0] = adaptive_windows(1, 1);
                merged[1] = adaptive_windows(group * rows_in, group * rows_out);
                merged[2] = axes[2];  // its table moved into the plan: take it back
                merged[2].table = plan.win_w;
                set_geometry(plan, plan.n_planes / group, merged);
            }
        }
    }
    if (plan.path == Path::tiles)
        plan.tile_ahead = plan.in_elements() * static_cast<int64_t>(dtype_size(plan.compute)) >=
                                  plan.tuning.tile_prefetch_min_bytes
                              ? plan.tuning.tile_ahead_bytes
                              : 0;
    if (plan.path == Path::argmax)
        plan.bins_by_window = plan.compute == DType::f32 && !is_half(spec.dtype) &&
                              plan.dil_w == 1 && plan.in_d * plan.in_h < limits::kRankKeyRows &&
                              simd::bins_by_window_ok(plan.win_w.data(), plan.out_w, plan.in_w);
    if (spec.family == Family::max && plan.path != Path::global && plan.path != Path::tiles) {
        for (int64_t o = 0; o < plan.out_w; o++)
            if (plan.win_w[3 * o + 1] == 0)
                plan.empty_w.push_back(o);
        plan.any_empty = !plan.empty_w.empty() || detail::min_taps(plan.win_d) == 0 ||
                         detail::min_taps(plan.win_h) == 0;
    }
    // the W divisor factors of the averages, in the compute type
    if (spec.family == Family::average || spec.family == Family::lp) {
        const size_t n = static_cast<size_t>(plan.out_w);
        if (plan.compute == DType::f64) {
            plan.div_w_f64.resize(n);
            for (size_t o = 0; o < n; o++)
                plan.div_w_f64[o] = static_cast<double>(plan.win_w[3 * o + 2]);
        } else {
            plan.div_w_f32.resize(n);
            for (size_t o = 0; o < n; o++)
                plan.div_w_f32[o] = static_cast<float>(plan.win_w[3 * o + 2]);
        }
    }
    plan.scratch = detail::scratch_layout(plan);
    return plan;
}

// The work units of a call at n_threads: blocks of output rows of one plane
// (whole planes when there are enough of them, so that every thread gets
// kUnitsPerThread units), depth slices for the slab, groups of planes for
// the global pools.
inline Schedule make_schedule(const Plan &plan, int n_threads) {
    Schedule s;
    const int64_t threads = std::max(1, n_threads);
    const int64_t rows_per_plane = plan.rows_per_plane();
    switch (plan.path) {
        case Path::empty:
            return s;
        case Path::global:
            if (is_half(plan.compute)) {
                const int64_t size = plan.in_plane();
                s.group = size <= limits::kHalfChunk
                              ? std::max<int64_t>(1, limits::kHalfChunk / size)
                              : 1;
            } else {
                // a few planes per unit, fewer when there are few planes, so every
                // thread still gets units (one call per 7x7 plane made the global
                // max 1.5x slower)
                s.group = std::max<int64_t>(
                    1, std::min(limits::kGlobalGroup, plan.n_planes / (16 * threads)));
            }
            s.n_units = (plan.n_planes + s.group - 1) / s.group;
            break;
        case Path::depth_slab:
            s.n_units = plan.n_planes * plan.out_d;
            break;
        default: {
            const int64_t work = plan.n_planes * rows_per_plane;
            int64_t rows =
                plan.n_planes >= plan.tuning.units_per_thread * threads
                    ? rows_per_plane
                    : std::max<int64_t>(1, (work + plan.tuning.units_per_thread * threads - 1) /
                                               (plan.tuning.units_per_thread * threads));
            s.rows_per_block = std::max<int64_t>(1, std::min(rows, rows_per_plane));
            s.blocks_per_plane = (rows_per_plane + s.rows_per_block - 1) / s.rows_per_block;
            s.n_units = plan.n_planes * s.blocks_per_plane;
        }
    }
    // Dynamic scheduling in chunks of about 1/16 of a thread's share: when a
    // neighbour process takes a core away, the other thread picks up the work
    // instead of waiting for it at the barrier (static halves made a 2-thread
    // call 5-20x slower on a loaded machine). Which thread computes a unit
    // never changes its result.
    s.chunk = std::max<int64_t>(1, s.n_units / (16 * threads));
    return s;
}

OVPOOL_END
