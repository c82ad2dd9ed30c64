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

#include <array>
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "simd/argmax.hpp"
#include "simd/keys.hpp"
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
// table. Adaptive bins are uniform when they all have one size at one step.
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
    // Bins of one size at one step are a fixed window (kernel = size, stride =
    // step, no padding) even where the step does not divide the axis: 7 -> 6
    // is kernel 2 stride 1, 50 -> 7 kernel 8 stride 7. (Bins that repeat an
    // element, n_out > n_in, step by 0 at places: never uniform.)
    if (n_out > 0) {
        w.kernel = w.table[1];
        w.stride = n_out > 1 ? w.table[3] : w.kernel;
        w.uniform = w.stride >= 1;
        for (int64_t o = 0; o < n_out && w.uniform; o++)
            w.uniform = w.table[3 * o] == o * w.stride && w.table[3 * o + 1] == w.kernel;
        if (!w.uniform)
            w.kernel = w.stride = 1;
    }
    return w;
}

inline Windows axis_windows(const AxisSpec &a) {
    return a.adaptive ? adaptive_windows(a.n_in, a.n_out) : fixed_windows(a);
}

// ---------------------------------------------------------------------------
// The plan
// ---------------------------------------------------------------------------

// The kernel of a call, chosen by choose_path: two general kernels (the
// channel-blocked one for small planes and indices, the row kernel for large
// planes) and three that stay where the benchmark shows them faster (each
// says by how much where choose_path takes it).
enum class Path : int32_t {
    empty = 0,    // no output element to compute
    global = 1,   // every window is a whole plane: one reduction per plane
    tiles = 2,    // kernel == stride <= 4, no padding, no pooling along D: runs of output
                  // rows straight from the input, PyTorch's summation order
    rows = 3,     // the row kernel: window rows combined into a padded column buffer, then a
                  // horizontal pass; its variant is Plan::row_kernel
    argmax = 4,   // max with indices on large planes: edges by the tables, the interior and
                  // tilings (Plan::argmax_tiles) by the vector argmax, bins column by column
    blocked = 5,  // groups of eight planes in vector lanes, every tap one vector operation
};

// How the row kernel takes its rows (each variant stays where choose_path's
// comment measures it faster than the separable rows; same bits).
enum class RowKernel : int32_t {
    separable = 0,     // one output row at a time
    runs = 1,          // float32 windows uniform along W, no pooling along D: runs of rows,
                       // their vertical passes one span where the windows step by one row
    depth_slab = 2,    // max values and averages pooled along D first, into a per-thread
                       // slab, then H and W as a 2D plane
    depth_slices = 3,  // pooling along D one depth slice at a time, for a group of rows
    narrow_bins = 4,   // float32 adaptive averages, bins under 8 taps: eight rows in lanes
    wide_bins = 5,     // float32 adaptive averages, bins of 8+ taps over 2+ rows: eight bins
                       // at a time, each summed in lanes over all its rows
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
        case Path::argmax:
            return "argmax";
        case Path::blocked:
            return "blocked";
    }
    return "?";
}

inline const char *row_kernel_name(RowKernel k) {
    switch (k) {
        case RowKernel::separable:
            return "separable";
        case RowKernel::runs:
            return "runs";
        case RowKernel::depth_slab:
            return "depth_slab";
        case RowKernel::depth_slices:
            return "depth_slices";
        case RowKernel::narrow_bins:
            return "narrow_bins";
        case RowKernel::wide_bins:
            return "wide_bins";
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
    // Bytes of one plane group's input in lanes the blocked kernel may hold
    // (0: no blocked path); larger planes are split into bands of rows.
    int64_t blocked_bytes = 256 * 1024;
    // Output bytes of a call (its dtype's) from which the blocked kernel's
    // input transpose also prefetches each group's outputs for writing:
    // outputs the last-level cache does not keep between calls (max 2x2 s1
    // on 8x2048x17x17, 16.7 MB out, 0.82-0.88x; 2x2 s2 ceil on
    // 64x2048x13x13, 25.7 MB, 0.77x; 3x3 s3 p1 on 8x768x35x35, 3.5 MB,
    // 0.90x) and not those it does, which only pay for the prefetches
    // (average 2x2 s3 on 16x512x7x7, 0.3 MB, 1.14x; Lp 2x2 s2 on
    // 4x384x38x37, 2.1 MB, 1.12x; average 3x3 s3 on 32x768x14x14, 2.4 MB,
    // even), paired at 2 threads.
    int64_t blocked_prefetch_out_bytes = int64_t(3) << 20;
    // Planes of at least this many bytes: the blocked kernel prefetches
    // only the first blocked_prefetch_head_lines cache lines of each of the
    // next group's planes, not the whole group. A plane that long is a
    // stream the hardware prefetcher follows once started, and the whole
    // group's prefetches held the misses it would have in flight (max 3x3
    // s3 p1 on 8x256x56x56 0.77x, 8x512x48x48 0.88x, 8x128x71x71 0.85x at
    // 2 threads; on 8x768x32x32 and 16x768x28x28 the heads alone were 1.04x
    // and 1.23x slower, on 32x160x38x38 even).
    int64_t blocked_prefetch_head_bytes = 8192;
    int64_t blocked_prefetch_head_lines = 8;
    // Max with indices on the blocked kernel: each row's W windows pooled
    // once first where the whole windows take at least this many times the
    // steps (set_row_windows; 0: wherever windows are 2+ rows tall and wide).
    double row_windows_ratio = 1.5;
    // Work units the blocked kernel splits the rows of a call into at least,
    // when there are fewer plane groups.
    int64_t blocked_units = 16;
    // The blocked kernel wherever it can take a plan (the tests run every
    // shape through it this way).
    bool blocked_everywhere = false;
    // float16 and bfloat16 max values on the blocked kernel in sixteen lanes
    // of order keys (Plan::lanes_keys) rather than eight of widened floats.
    bool key_lanes = true;
    // The cost model (cost_ns, threads_for): nanoseconds a byte read or
    // written and a tap combined take on one thread, and the work a thread
    // must get for a parallel region to pay: starting one and meeting at its
    // barrier costs a few microseconds on a 2-vCPU virtual machine.
    double byte_ns = 0.06;
    double tap_ns = 0.03;
    double thread_ns = 8000;
};

// Per-thread scratch of a call: byte offsets of its parts in one block
// (each part 64-byte aligned), and its size. -1: the part is not used.
struct ScratchLayout {
    int64_t bytes = 0;
    int64_t buf = -1;         // padded column buffer(s), compute type
    int64_t offsets = -1;     // row offsets, int64
    int64_t run = -1;         // rows_run: a block of rows' column sums or maxima, then
                              // the horizontal pass's outputs over it, float
    int64_t lanes = -1;       // adaptive_narrow's column sums, float
    int64_t slab = -1;        // depth_slab's slab, compute type
    int64_t rows = -1;        // 16-bit: widened window rows / tiles / plane, float
    int64_t out_row = -1;     // 16-bit: a float output row / the global values
    int64_t local = -1;       // 16-bit: row offsets into the widened rows, int64
    int64_t pos = -1;         // argmax: int32 positions / int64 scratch
    int64_t col = -1;         // argmax: column maxima then their int32 row ranks
    int64_t state = -1;       // 16-bit argmax: the plane now widened, int64
    int64_t lanes_in = -1;    // blocked: a band of input in lanes, compute type
    int64_t lanes_out = -1;   // blocked: the band's outputs in lanes
    int64_t lanes_pos = -1;   // blocked: their positions (argmax)
    int64_t tap_pos = -1;     // blocked: the taps' positions in lanes (argmax)
    int64_t win_at = -1;      // blocked: each output's first tap in the band's lanes, int64
    int64_t win_aux = -1;     // blocked: each output's divisor / first position, compute type
    int64_t win_order = -1;   // blocked: the outputs grouped by tap list, int64
    int64_t win_runs = -1;    // blocked: where each list's group starts, and a cursor, int64
    int64_t lanes_cols = -1;  // blocked: a row's pooled columns (Plan::column_span), or
                              // every row's pooled W windows and their positions
                              // (Plan::row_taps)
};

// The order in which the blocked kernel combines the taps of a max window
// (values only): among equal maxima (a +0 and a -0) the last one is kept,
// as the separable passes keep it (each column's rows, then the columns)
// and as tilings keep it (row-major), so the sign of a zero maximum is the
// one these passes give; columns_depth_inner: the rows of a column depth
// slice innermost, as pooling along D first does.
enum class MaxOrder : int32_t { row_major = 0, columns = 1, columns_depth_inner = 2 };

struct Plan {
    PoolSpec spec;
    Tuning tuning;
    Path path = Path::empty;
    RowKernel row_kernel = RowKernel::separable;  // rows: how
    bool argmax_tiles = false;                    // argmax: tilings by the vector argmax
    DType compute = DType::f32;                   // what the kernels read (f32 when widen_input)
    bool widen_input = false;  // the caller widens a 16-bit input to float32 first
    int mode = kSumAverage;    // sum families
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
    bool slab_narrow = false;  // depth_slab: float32 max values of windows 3 wide at W stride 1
                               // or 2 (2 wide at stride 1) over up to 3 slab rows, all of a
                               // slice's rows in one call (simd::max_rows_k3_f32)
    bool slab_prefetch = false;
    int64_t tile_kh = 0, tile_kw = 0, tile_ahead = 0;
    bool bins_by_window = false;   // argmax: adaptive bins window by window
    bool argmax_spans = false;     // argmax: one input row, every window by a vector scan
    bool narrow_rows = false;      // float32 average bins under 8 taps, rows of 8+:
                                   // eight rows at a time where the build has AVX2
                                   // (adaptive_narrow, depth_slab)
    std::vector<int64_t> empty_w;  // max (with indices too): W windows with no tap
    bool any_empty = false;        // max (with indices too): some window has no tap
    bool redo_minus_inf = true;    // blocked max: an output of -inf is redone by the tables
    // argmax index layout
    int64_t index_stride_d = 0, index_stride_h = 0, index_stride_w = 1;
    bool row_major = true;

    // each axis (D, H, W) as a uniform window: window o starts at o * stride -
    // pad (in the padding when negative) and takes kernel taps
    bool uniform[3] = {true, true, true};
    int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
    bool tiling_axes = false;  // every axis a tiling (detail::is_tiling_axis)

    // blocked: groups of kLanes planes, bands of unit_rows output rows, each
    // group's band of input in lanes laid out [slice][row][column][lane]
    int64_t n_groups = 0, unit_rows = 1, bands = 1;
    bool lanes_by_table = false;       // every output by the window tables, the layout
                                       // unpadded (max values of bins of unequal size;
                                       // other bins take tap lists, see set_taps)
    int64_t lane_pad[3] = {0, 0, 0};   // the layout's front padding (D, H, W)
    int64_t lane_width = 0;            // positions per layout row
    int64_t lane_rows = 0;             // rows per layout slice
    int64_t lane_slices = 0;           // most slices of a band
    bool lanes_prefetch_out = false;   // whole planes: each group's outputs prefetched for
                                       // writing (Tuning::blocked_prefetch_out_bytes)
    int64_t lanes_prefetch_head = 0;   // whole planes: cache lines of each plane of the next
                                       // group prefetched (0: the whole group's input;
                                       // Tuning::blocked_prefetch_head_bytes)
    std::vector<int64_t> tap_offsets;  // elements from a window's first to each tap, in the
                                       // order the kernel combines them
    std::vector<int64_t> tap_index;    // argmax: index-space offsets of the same taps
    int64_t n_taps = 0;                // taps of list 0 (with bins of unequal size, of the
                                       // longest list)
    std::vector<int64_t> tap_lists;    // (start, length) in tap_offsets of each tap list
                                       // (list 0: tap_offsets' start, n_taps long)
    std::vector<int64_t> row_lists;    // per output row (D x H) and column kind, its list
                                       // (empty: every output takes list 0; see set_taps)
    std::vector<int64_t> col_kind;     // per output column, its kind (empty: one kind)
    int64_t n_col_kinds = 1;
    MaxOrder max_order = MaxOrder::columns;
    int64_t column_span = 0;           // max values: the columns of a row's W windows, each
                                       // column's rows pooled once first (0: every window
                                       // whole; see set_taps)
    std::vector<int64_t> column_taps;  // their W taps' offsets in the column buffer
    std::vector<int64_t> row_taps;     // argmax: each layout row's W windows pooled once first,
                                       // then each window over its rows: the offset of each
                                       // of its rows in that row buffer (empty: every window
                                       // whole; see set_row_windows)
    bool lanes_keys = false;           // 16-bit max values and indices: pairs of groups in
                                       // 16-bit order keys (simd/keys.hpp), a pair with a
                                       // NaN or a -0 pooled as floats

    ScratchLayout scratch;

    int64_t in_plane() const { return in_d * in_h * in_w; }
    int64_t out_plane() const { return out_d * out_h * out_w; }
    int64_t rows_per_plane() const { return out_d * out_h; }
    int64_t in_elements() const { return n_planes * in_plane(); }
    int64_t out_elements() const { return n_planes * out_plane(); }
};

// Output rows whose column sums or maxima the run path keeps at a time.
inline int64_t run_rows(const Plan &plan) {
    return std::max<int64_t>(
        1, std::min(plan.out_h, plan.tuning.run_elements / std::max<int64_t>(1, plan.in_w)));
}

// Windows 3 wide at W stride 1 or 2 over at most 3 rows: the run path's own
// kernels (simd::max_rows_k3_f32, sum_rows_k3_f32) take them, padded or not;
// max values 2 wide at stride 1 too (max_rows_k3_f32 with k = 2). rows: the
// rows a window takes (of the input, or of the depth slab).
inline bool run_narrow(const Plan &plan, int64_t rows) {
    const bool three = plan.kernel_w == 3 && (plan.stride_w == 1 || plan.stride_w == 2);
    const bool max_two =
        plan.spec.family == Family::max && plan.kernel_w == 2 && plan.stride_w == 1;
    return (three || max_two) && plan.dil_w == 1 && plan.dil_h == 1 && rows <= 3;
}

inline bool run_narrow(const Plan &plan) {
    return run_narrow(plan, plan.max_rows);
}

// Whether a plan on the run path takes those kernels (max values, averages
// and L2 norms of run_narrow's windows) rather than the run's vertical spans
// and horizontal pass: the units and the plan's text ask this one question.
inline bool runs_by_narrow_kernel(const Plan &plan) {
    return run_narrow(plan) && (plan.spec.family == Family::max ||
                                plan.spec.family == Family::average || plan.mode == kSumLp2);
}

// The work units of one call.
struct Schedule {
    int threads = 1;  // the call's threads (the cost model's, see threads_for)
    int64_t n_units = 0;
    int64_t rows_per_block = 1;  // output rows per unit (row paths)
    int64_t blocks_per_plane = 1;
    int64_t group = 1;  // planes per unit (global paths), plane groups per unit (blocked)
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
    for (int a = 0; a < 3; a++) {
        plan.uniform[a] = axes[a].uniform;
        plan.kernel[a] = axes[a].kernel;
        plan.stride[a] = axes[a].stride;
        plan.pad[a] = axes[a].pad_begin;
    }
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

// Input a band of output rows of the blocked kernel reads (see band_of).
struct Band {
    int64_t d_lo = 0, d_hi = 0, h_lo = 0, h_hi = 0;
};

namespace detail {

inline void widen_range(const int64_t *table, int64_t o_lo, int64_t o_hi, int64_t dil, int64_t *lo,
                        int64_t *hi) {
    for (int64_t o = o_lo; o < o_hi; o++) {
        const int64_t first = table[3 * o], taps = table[3 * o + 1];
        if (taps > 0) {
            *lo = std::min(*lo, first);
            *hi = std::max(*hi, first + (taps - 1) * dil + 1);
        }
    }
}

}  // namespace detail

// The input in lanes of output rows [r0, r1) (rows counted over depth and
// height): depth slices [d_lo, d_hi) and rows [h_lo, h_hi) of each, along an
// axis of uniform windows in their padded coordinates (negative or past the
// input: padding), else clipped to the input by the axis's tables.
inline Band band_of(const Plan &plan, int64_t r0, int64_t r1) {
    Band b;
    const int64_t od0 = r0 / plan.out_h, od1 = (r1 - 1) / plan.out_h;
    const int64_t oh0 = od0 == od1 ? r0 - od0 * plan.out_h : 0;
    const int64_t oh1 = od0 == od1 ? r1 - 1 - od0 * plan.out_h : plan.out_h - 1;
    int64_t d_lo = plan.in_d, d_hi = 0, h_lo = plan.in_h, h_hi = 0;
    if (!plan.lanes_by_table && plan.uniform[0]) {
        d_lo = od0 * plan.stride[0] - plan.pad[0];
        d_hi = od1 * plan.stride[0] - plan.pad[0] + (plan.kernel[0] - 1) * plan.dil_d + 1;
    } else {
        detail::widen_range(plan.win_d.data(), od0, od1 + 1, plan.dil_d, &d_lo, &d_hi);
    }
    if (!plan.lanes_by_table && plan.uniform[1]) {
        h_lo = oh0 * plan.stride[1] - plan.pad[1];
        h_hi = oh1 * plan.stride[1] - plan.pad[1] + (plan.kernel[1] - 1) * plan.dil_h + 1;
    } else {
        detail::widen_range(plan.win_h.data(), oh0, oh1 + 1, plan.dil_h, &h_lo, &h_hi);
    }
    if (d_lo < d_hi && h_lo < h_hi) {
        b.d_lo = d_lo;
        b.d_hi = d_hi;
        b.h_lo = h_lo;
        b.h_hi = h_hi;
    }
    return b;
}

// The bands of `rows` output rows a plane: part of one output depth each
// when a depth's rows take more than one band (a band across two depths
// reads every input row of both), else runs of whole depths (blocked_rows
// takes multiples of a depth's rows there).
inline int64_t band_count(const Plan &plan, int64_t rows) {
    if (rows < plan.out_h)
        return plan.out_d * ((plan.out_h + rows - 1) / rows);
    return (plan.rows_per_plane() + rows - 1) / rows;
}

// Output rows [r0, r1) (counted over depth and height) of band b.
inline void band_span(const Plan &plan, int64_t rows, int64_t b, int64_t *r0, int64_t *r1) {
    if (rows < plan.out_h) {
        const int64_t per = (plan.out_h + rows - 1) / rows, d = b / per, k = b % per;
        *r0 = d * plan.out_h + k * rows;
        *r1 = d * plan.out_h + std::min(plan.out_h, (k + 1) * rows);
    } else {
        *r0 = b * rows;
        *r1 = std::min(plan.rows_per_plane(), *r0 + rows);
    }
}

// The most slices, rows and positions a band of `rows` output rows holds.
inline void band_extent(const Plan &plan, int64_t rows, int64_t *slices, int64_t *band_rows,
                        int64_t *positions) {
    *slices = *band_rows = 0;
    for (int64_t i = 0, n = band_count(plan, rows); i < n; i++) {
        int64_t r0, r1;
        band_span(plan, rows, i, &r0, &r1);
        const Band b = band_of(plan, r0, r1);
        *slices = std::max(*slices, b.d_hi - b.d_lo);
        *band_rows = std::max(*band_rows, b.h_hi - b.h_lo);
    }
    *positions = *slices * *band_rows * plan.lane_width;
}

namespace detail {

// (kh, kw) when every window is a full kh x kw tile at stride (kh, kw) with
// no padding and no pooling along D, else (0, 0); (1, 1) only with one_tap
// (the geometry make_plan gives windows of one element).
inline void tiling_of(const Windows axes[3], int64_t *kh, int64_t *kw, bool one_tap) {
    *kh = *kw = 0;
    const Windows &d = axes[0];
    if (d.n_out != d.n_in)
        return;
    // (a divisor factor other than 1: a depth of 1 padded and counted)
    for (int64_t o = 0; o < d.n_out; o++)
        if (d.table[3 * o + 1] != 1 || d.table[3 * o] != o || d.table[3 * o + 2] != 1)
            return;
    if (!is_tiling_axis(axes[1]) || !is_tiling_axis(axes[2]))
        return;
    if (axes[1].kernel == 1 && axes[2].kernel == 1 && !one_tap)
        return;
    *kh = axes[1].kernel;
    *kw = axes[2].kernel;
}

// Whether every window along every axis is the one element at its own
// position (kernel 1 at stride 1 without padding: an adaptive pool to its
// input's size, an AveragePool of kernel 1).
inline bool is_one_tap(const Windows axes[3]) {
    for (int a = 0; a < 3; a++) {
        const Windows &w = axes[a];
        if (w.n_out != w.n_in)
            return false;
        for (int64_t o = 0; o < w.n_out; o++)
            if (w.table[3 * o] != o || w.table[3 * o + 1] != 1 || w.table[3 * o + 2] != 1)
                return false;
    }
    return true;
}

// The largest divisor of n (n >= 1) that is at most cap (cap >= 1).
inline int64_t divisor_at_most(int64_t n, int64_t cap) {
    int64_t d = std::min(n, cap);
    while (n % d)
        d -= 1;
    return d;
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
// ---------------------------------------------------------------------------
// The cost model: threads of a call
// ---------------------------------------------------------------------------

// An estimate of a call's time on one thread, nanoseconds, from its bytes
// (input and output, indices too) and its taps (the elements its windows
// combine; with indices four times, a compare and two blends each).
inline double cost_ns(const Plan &plan) {
    const double item = static_cast<double>(dtype_size(plan.spec.dtype));
    const double in = static_cast<double>(plan.in_elements());
    const double out = static_cast<double>(plan.out_elements());
    const bool indices = plan.spec.family == Family::argmax;
    const double index_item = indices ? (plan.spec.index_type == IndexType::i64 ? 8.0 : 4.0) : 0.0;
    const double bytes = (in + out) * item + out * index_item;
    const double window = static_cast<double>(std::max<int64_t>(1, detail::max_taps(plan.win_d))) *
                          static_cast<double>(std::max<int64_t>(1, detail::max_taps(plan.win_h))) *
                          static_cast<double>(std::max<int64_t>(1, detail::max_taps(plan.win_w)));
    const double taps = out * window * (indices ? 4.0 : 1.0);
    return bytes * plan.tuning.byte_ns + taps * plan.tuning.tap_ns;
}

// The threads of a call, at most max_threads: one per tuning.thread_ns of
// estimated work, so that a small call runs on the calling thread without a
// parallel region (every front door asks this; none has a cutoff of its own).
inline int threads_for(const Plan &plan, int max_threads) {
    if (max_threads <= 1 || plan.path == Path::empty)
        return 1;
    const double share = cost_ns(plan) / std::max(1.0, plan.tuning.thread_ns);
    return static_cast<int>(std::max(1.0, std::min(static_cast<double>(max_threads), share)));
}

namespace detail {

inline int64_t band_positions(const Plan &plan, int64_t rows) {
    int64_t slices, band_rows, positions;
    band_extent(plan, rows, &slices, &band_rows, &positions);
    return positions;
}

}  // namespace detail

namespace detail {

// The layout columns a row's uniform W windows reach, from the first
// window's first tap to the last window's last.
inline int64_t w_reach(const Plan &plan) {
    return (plan.out_w - 1) * plan.stride[2] + (plan.kernel[2] - 1) * plan.dil_w + 1;
}

}  // namespace detail

// Output rows per work unit of the blocked kernel: all of a plane's rows
// when the group's input in lanes fits tuning.blocked_bytes, else the most
// that fit (0: not even one row does, or, with indices, positions would pass
// the compute type's exact integers), then fewer when there are fewer plane
// groups than tuning.blocked_units and work for more than one thread, so
// that bands of rows share it. Sets the layout's padding and width first.
inline int64_t blocked_rows(Plan &plan) {
    const bool f64 = plan.compute == DType::f64;
    const int64_t item = f64 ? 8 : 4;
    const int64_t budget = plan.tuning.blocked_bytes / (simd::kLanes * item);
    const int64_t total = plan.rows_per_plane();
    if (budget <= 0 || total == 0 || plan.n_planes == 0 || plan.out_plane() == 0)
        return 0;
    if (plan.spec.family == Family::argmax &&
        plan.in_plane() >= (f64 ? int64_t(1) << 53 : int64_t(1) << 24))
        return 0;
    // bins of unequal size: the uniform windows' band table, each output's
    // first element and divisor from the tables, a tap list a kind of output
    // (set_taps); max values keep the tables (their taps' order is the row
    // kernel's)
    plan.lanes_by_table =
        !(plan.uniform[0] && plan.uniform[1] && plan.uniform[2]) && plan.spec.family == Family::max;
    for (int a = 0; a < 3; a++)
        plan.lane_pad[a] = plan.lanes_by_table || !plan.uniform[a] ? 0 : plan.pad[a];
    plan.lane_width = plan.lanes_by_table || !plan.uniform[2]
                          ? plan.in_w
                          : std::max(plan.pad[2] + plan.in_w, detail::w_reach(plan));
    // whole depths while they fit, else part of one depth (band_count)
    int64_t rows = total;
    if (detail::band_positions(plan, rows) > budget) {
        int64_t depths = plan.out_d;
        while (depths > 1 && detail::band_positions(plan, depths * plan.out_h) > budget)
            depths = (depths + 1) / 2;
        rows = depths * plan.out_h;
        while (rows > 1 && detail::band_positions(plan, rows) > budget)
            rows = (rows + 1) / 2;
    }
    if (detail::band_positions(plan, rows) > budget)
        return 0;
    const int64_t groups = plan.n_groups;
    if (groups < plan.tuning.blocked_units && cost_ns(plan) >= 2 * plan.tuning.thread_ns) {
        // at most as many bands as units want (fewer bands read fewer rows
        // twice): runs of whole depths, or each depth's rows split evenly
        const int64_t want = std::min(total, (plan.tuning.blocked_units + groups - 1) / groups);
        const int64_t split = std::min(
            rows, want <= plan.out_d ? (plan.out_d + want - 1) / want * plan.out_h
                                     : (plan.out_h + want / plan.out_d - 1) / (want / plan.out_d));
        if (detail::band_positions(plan, split) <= budget)
            rows = split;
    }
    return rows;
}

// Max values whose lists take a window column by column (each list the same
// rows for every W tap, MaxOrder), and sums: each column a row's windows
// read is pooled once over those rows, then each window over its columns,
// where the whole windows take at least 1.6x the operations (out_w * kw *
// rows a row against span * rows + out_w * kw). Measured against whole
// windows at 1 thread: 3D 7x7x7 s1 0.26x (float16 0.19x), 7x7 s1 on 17x17
// 0.57x, 5x5 s1 on 13x13 0.75x, 3x3x3 s1 0.86x; at 1.3-1.4x the operations
// (3x3 s1 on 7x7 and 17x17, 4x4 s2) pooling the columns first was 1.0-1.18x
// slower. Averages and Lp norms (the 22 sweep shapes it takes, against
// row-major whole windows): 0.74-0.98x, 3x3x3 s1 even (0.95-1.05x).
inline void set_columns(Plan &plan) {
    const int64_t kw = plan.kernel[2], rows = plan.kernel[0] * plan.kernel[1];
    const int64_t span = detail::w_reach(plan);
    const int64_t whole = plan.out_w * kw * rows, columns = span * rows + plan.out_w * kw;
    if (kw < 2 || rows < 2 || 5 * whole < 8 * columns)
        return;
    plan.column_span = span;
    for (int64_t t = 0; t < kw; t++)
        plan.column_taps.push_back(t * plan.dil_w * simd::kLanes);
}

// Max with indices over uniform windows many rows tall and wide: the W
// windows of every layout row of a band are pooled once (the first maximum,
// or the last NaN, and its W position), then each window over its rows, in
// order (Plan::row_taps). A row's winner comes before every later row's
// element, so a strict ">" over the rows in order keeps the first maximum
// of the whole window, and a NaN taken always the last NaN, as the whole
// window row-major does: the same value and index. Taken where the whole
// windows take Tuning::row_windows_ratio times the steps or more (a row's
// step, which also loads and adds its position, counted 1.5). Paired
// against whole windows at 1 thread: 5x5x5 s1 on 32x14x14 0.49x, 7x7 s1 on
// 17x17 0.64x, 5x5 s1 on 28x28 0.67x, 7x7 s2 p3 on 56x56 0.67x, 5x5x5 s2
// 0.78x, 4x4 s1 on 28x28 0.81x; under the ratio 3x3 s1 p1 on 14x14 was even
// (0.97x) and 3x3x3 s1 on 4x14x14 1.16x slower, s(1,2,2) on 8x28x28 1.11x.
// 16-bit order keys alike (float16 5x5x5 s1 0.53x, 7x7 s2 p3 on 112x111
// 0.79x; under the ratio 4x4 s1 p1 on 14x14 1.10x slower).
inline void set_row_windows(Plan &plan) {
    const int64_t kd = plan.kernel[0], kh = plan.kernel[1], kw = plan.kernel[2];
    const int64_t rows = kd * kh, out_rows = plan.unit_rows;
    const int64_t in_rows = plan.lane_slices * plan.lane_rows;
    const double whole = static_cast<double>(out_rows * plan.out_w * rows * kw);
    const double first = static_cast<double>(in_rows * plan.out_w * kw) +
                         1.5 * static_cast<double>(out_rows * plan.out_w * rows);
    if (kw < 2 || rows < 2 || whole < plan.tuning.row_windows_ratio * first)
        return;
    const int64_t row_len = plan.lane_width * simd::kLanes;
    for (int64_t r = 0; r < rows; r++)
        plan.row_taps.push_back(plan.tap_offsets[r * kw] / row_len * plan.out_w * simd::kLanes);
}

// The blocked kernel's tap lists: the offsets (elements of the layout) and
// index-space offsets of every tap from the window's first, in the order the
// kernel combines them (see MaxOrder). Uniform windows take one list (max
// values one a row whose windows are cut other than at the end); bins of
// unequal size one a distinct triple of bin sizes (D, H, W), each row-major,
// as the tables would combine them: the outputs of a row take one list a
// kind of column (columns of one bin size), and the band table groups them
// by list.
inline void set_taps(Plan &plan) {
    plan.tap_offsets.clear();
    plan.tap_index.clear();
    plan.tap_lists.clear();
    plan.row_lists.clear();
    plan.col_kind.clear();
    plan.n_col_kinds = 1;
    plan.n_taps = 0;
    plan.column_span = 0;
    plan.column_taps.clear();
    plan.row_taps.clear();
    if (plan.lanes_by_table)
        return;
    const int64_t L = simd::kLanes;
    const int64_t kd = plan.kernel[0], kh = plan.kernel[1], kw = plan.kernel[2];
    const bool values = plan.spec.family == Family::max;
    auto add = [&](int64_t td, int64_t th, int64_t t) {
        const int64_t d = td * plan.dil_d, h = th * plan.dil_h, w = t * plan.dil_w;
        plan.tap_offsets.push_back(((d * plan.lane_rows + h) * plan.lane_width + w) * L);
        plan.tap_index.push_back(d * plan.index_stride_d + h * plan.index_stride_h +
                                 w * plan.index_stride_w);
    };
    // the list of a key, added the first time
    std::vector<std::array<int64_t, 4>> keys;
    auto list_of = [&](const std::array<int64_t, 4> &key, auto &&add_taps) {
        const auto it = std::find(keys.begin(), keys.end(), key);
        if (it != keys.end())
            return static_cast<int64_t>(it - keys.begin());
        const int64_t at = static_cast<int64_t>(plan.tap_offsets.size());
        add_taps();
        const int64_t length = static_cast<int64_t>(plan.tap_offsets.size()) - at;
        keys.push_back(key);
        plan.tap_lists.push_back(at);
        plan.tap_lists.push_back(length);
        plan.n_taps = std::max(plan.n_taps, length);
        return static_cast<int64_t>(keys.size()) - 1;
    };
    if (!(plan.uniform[0] && plan.uniform[1] && plan.uniform[2])) {
        std::vector<int64_t> sizes;  // the W bin size of each column kind
        for (int64_t ow = 0; ow < plan.out_w; ow++) {
            const int64_t nw = plan.uniform[2] ? kw : plan.win_w[3 * ow + 1];
            const auto it = std::find(sizes.begin(), sizes.end(), nw);
            plan.col_kind.push_back(it - sizes.begin());
            if (it == sizes.end())
                sizes.push_back(nw);
        }
        plan.n_col_kinds = static_cast<int64_t>(sizes.size());
        if (plan.n_col_kinds == 1)
            plan.col_kind.clear();
        for (int64_t od = 0; od < plan.out_d; od++) {
            const int64_t nd = plan.uniform[0] ? kd : plan.win_d[3 * od + 1];
            for (int64_t oh = 0; oh < plan.out_h; oh++) {
                const int64_t nh = plan.uniform[1] ? kh : plan.win_h[3 * oh + 1];
                for (const int64_t nw : sizes)
                    plan.row_lists.push_back(list_of({nd, nh, nw, 0}, [&] {
                        for (int64_t td = 0; td < nd; td++)
                            for (int64_t th = 0; th < nh; th++)
                                for (int64_t t = 0; t < nw; t++)
                                    add(td, th, t);
                    }));
            }
        }
        return;
    }
    if (values && plan.max_order != MaxOrder::row_major) {
        // The row kernel's vertical pass combines the window's rows that
        // hold input (depth, then height) three at a time and keeps the
        // earlier group's value on a tie (float rows; float64 rows go one by
        // one, keeping the later): the groups in reverse order, each in its
        // own order, make the kernel's one chain (the later value kept) keep
        // the same +0 or -0 among tied maxima. Pooling along D first
        // (columns_depth_inner) groups the depth rows so, then the slab's
        // rows. A row whose windows are cut other than at the end (padding
        // at the top, or at the bottom of H in 3D, for the row kernel) groups
        // its own rows: it gets its own list.
        const bool depth_inner = plan.max_order == MaxOrder::columns_depth_inner;
        const bool f64 = plan.compute == DType::f64;
        auto add_list = [&](int64_t d0, int64_t nd, int64_t h0, int64_t nh) {
            // reversed groups of `group` among n items, each group in order
            auto each = [](int64_t n, int64_t group, auto &&body) {
                for (int64_t g = (n - 1) / group * group; g >= 0; g -= group)
                    for (int64_t r = g; r < std::min(g + group, n); r++)
                        body(r);
            };
            for (int64_t t = 0; t < kw; t++) {
                if (depth_inner)
                    each(nh, f64 ? nh : 3, [&](int64_t h) {
                        each(nd, f64 ? nd : 3, [&](int64_t d) { add(d0 + d, h0 + h, t); });
                    });
                else
                    each(nd * nh, f64 ? nd * nh : 3,
                         [&](int64_t r) { add(d0 + r / nh, h0 + r % nh, t); });
            }
        };
        list_of({0, kd, 0, kh}, [&] { add_list(0, kd, 0, kh); });
        set_columns(plan);
        if (f64 || (depth_inner ? kd <= 3 && kh <= 3 : kd * kh <= 3))
            return;  // one group: cut windows keep the order
        std::vector<int64_t> row_lists;
        bool own = false;
        for (int64_t od = 0; od < plan.out_d; od++) {
            const int64_t *wd = plan.win_d.data() + 3 * od;
            const int64_t cd = (wd[0] - (od * plan.stride[0] - plan.pad[0])) / plan.dil_d;
            for (int64_t oh = 0; oh < plan.out_h; oh++) {
                const int64_t *wh = plan.win_h.data() + 3 * oh;
                const int64_t ch = (wh[0] - (oh * plan.stride[1] - plan.pad[1])) / plan.dil_h;
                // cut at the end only: the first list's groups, less the taps
                // past the end (which read the identity)
                const bool prefix =
                    cd == 0 && ch == 0 && (depth_inner || wh[1] == kh || wd[1] <= 1);
                int64_t list = 0;
                if (!prefix && wd[1] > 0 && wh[1] > 0) {
                    list = list_of({cd, wd[1], ch, wh[1]}, [&] { add_list(cd, wd[1], ch, wh[1]); });
                    own = true;
                }
                row_lists.push_back(list);
            }
        }
        if (own)
            plan.row_lists = std::move(row_lists);
        return;
    }
    // sums of windows many rows tall and wide, tilings aside (their bits are
    // PyTorch's): each column over its rows, then the columns, as the row
    // kernel sums
    if (!values && plan.spec.family != Family::argmax && plan.tile_kh == 0)
        set_columns(plan);
    const bool columns = plan.column_span > 0;
    list_of({0, kd, 0, kh}, [&] {
        if (columns)
            for (int64_t t = 0; t < kw; t++)
                for (int64_t td = 0; td < kd; td++)
                    for (int64_t th = 0; th < kh; th++)
                        add(td, th, t);
        else
            for (int64_t td = 0; td < kd; td++)
                for (int64_t th = 0; th < kh; th++)
                    for (int64_t t = 0; t < kw; t++)
                        add(td, th, t);
    });
    if (plan.spec.family == Family::argmax)
        set_row_windows(plan);
}

namespace detail {

// The planes a tiling takes as one tall plane (see make_plan): where its
// tiles use every input row, the largest divisor of the planes whose group
// has at most merged_outputs outputs; 1 where they do not merge.
inline int64_t merged_planes(const Plan &plan) {
    const int64_t rows_in = plan.in_d * plan.in_h, rows_out = plan.out_d * plan.out_h;
    if (plan.n_planes < 2 || rows_in != rows_out * plan.tile_kh ||
        plan.n_planes * plan.in_plane() >= (int64_t(1) << 31))
        return 1;
    return divisor_at_most(plan.n_planes,
                           std::max<int64_t>(1, plan.tuning.merged_outputs / plan.out_plane()));
}

}  // namespace detail

// float32 adaptive averages of bins of 8+ taps over 2+ rows, where the bins
// do not tile W: the wide_bins row kernel sums eight bins in lanes over all
// their rows (50->7 0.49 -> 0.35 ms, 100->7 0.64 -> 0.37 ms at 2 threads);
// narrower bins and one-row bins were slower that way (30->7 0.35 -> 0.49, 1D
// 1000->7 1.35 -> 4.45 ms). Bins of one size at one step (50->7: 8 taps at a
// step of 7) are uniform windows, but the blocked kernel takes them 1.5x
// slower (8x256x50x50, paired, 1 and 2 threads); on smaller planes it is
// faster (prefer_blocked, bins_prefer_blocked).
inline bool wide_bins_ok(const Plan &plan) {
    const bool bins_w = plan.spec.axes[plan.spec.n_spatial - 1].adaptive &&
                        !(plan.uniform_w && plan.stride_w == plan.kernel_w);
    return plan.compute == DType::f32 && plan.spec.family == Family::average && bins_w &&
           plan.dil_w == 1 && plan.dil_h == 1 && detail::min_taps(plan.win_w) >= 8 &&
           detail::max_taps(plan.win_d) * detail::max_taps(plan.win_h) >= 2;
}

// Whether the blocked kernel takes bins of unequal size (adaptive bins that
// are not one window), whose outputs it takes in batches by tap lists (one a
// distinct triple of bin sizes, set_taps), rather than the row kernel
// (narrow_bins, wide_bins, the runs) or the argmax kernel (spans scanned in
// vectors, bins column by column). Measured at 1 thread against those on
// 1,122 adaptive shapes, then paired (1 and 2 threads) on the shapes whose
// kernel this changes:
// * with indices: planes up to 4096 elements (38x38 -> 5x5 0.59x, 64x64 ->
//   8x5 0.48x; 100x100 -> 4x7 1.15x slower), rows up to 512 or 1024 with
//   windows up to 160 taps (1D 128 -> 7 0.21x, 1000 -> 7 0.71x; 1000 -> 3,
//   334 taps, 1.24x slower); float64 rows with windows up to 40 taps (256 ->
//   7 0.55x; 128 -> 3, 43 taps, 1.06x and 512 -> 3 1.54x slower);
// * 16-bit averages on 2D planes up to 10000 elements, 3D ones up to
//   50176, or rows up to 512, where the row kernel widens each window row
//   first (30x30 -> 7x7 0.28-0.30x, 14x14 -> 5x5 0.18x, 3D 6x20x20 -> 4x7x7
//   0.28x, 64x64 -> 10x10 0.67-0.83x, 1D 500 -> 7 0.90-0.97x, all before the
//   tap lists, which took 0.3-0.8x off again; with them, at 2 threads:
//   80x80 -> 7x7 0.74x, 100x100 -> 7x7 0.61-0.84x, 90x90 -> 13x13 0.61x,
//   3D 10x28x28 -> 10x6x9 0.23-0.27x, 16x32x32 -> 4x7x7 0.59x, 16x56x56
//   -> 5x6x7 0.69x; 128x128 -> 7x7 1.03x);
// * float32 averages on planes up to 1024 elements (7x7 -> 7x4 0.16x, 17x17
//   -> 1x7 0.22x, 19x19 -> 9x12 0.37x, 28x28 -> 9x12 0.54x), or 1600 with W
//   bins of 8+ taps (38x38 -> 8x5 0.47x; against narrow_bins at 38x38, 7x7
//   1.05-1.14x and 7x6 1.06-1.37x slower; 50x50 -> 7x7 1.40x and 4x7 1.50x
//   slower), and rows up to 256 (64 -> 30 0.12x, 256 -> 7 0.81x; 512 -> 14
//   1.06x, 512 -> 3 1.57x slower). float64 averages keep the rows (four
//   lanes: slower on most shapes, up to 3.5x).
inline bool bins_prefer_blocked(const Plan &plan) {
    const bool one_row = plan.in_h == 1 && plan.in_d == 1;
    const int64_t in = plan.in_plane();
    const DType t = plan.compute;
    if (plan.spec.family == Family::argmax) {
        if (!one_row)
            return in <= 4096;
        const int64_t taps = detail::max_taps(plan.win_w);
        if (t == DType::f64)
            return plan.in_w <= 1024 && taps <= 40;
        return plan.in_w <= 512 || (plan.in_w <= 1024 && taps <= 160);
    }
    if (is_half(t))
        return one_row ? plan.in_w <= 512 : in <= (plan.in_d > 1 ? 50176 : 10000);
    if (t != DType::f32 || plan.spec.family != Family::average)
        return false;
    return one_row ? plan.in_w <= 256 : in <= 1024 || (in <= 1600 && wide_bins_ok(plan));
}

// Whether 16-bit max values and indices can go as order keys
// (Plan::lanes_keys): not planes a multiple of 4 KiB apart, whose sixteen
// input rows a transpose reads together then share one set of an 8-way L1
// data cache (float16 3x3x3 s2 on 10x32x32 planes and 3x3 s2 on 32x64
// planes 1.15-1.20x the float lanes' time; on 9x32x32, 10x33x32 and 33x64
// planes 0.71-0.77x).
inline bool keys_fit(const Plan &plan) {
    return is_half(plan.compute) && plan.tuning.key_lanes && simd::kKeyLanes &&
           (plan.in_plane() * 2) % 4096 != 0;
}

// Whether the blocked kernel takes a plan it can take. Measured at 2
// threads against the row kernel, paired (float32 unless said; sweep seed 2
// and the named cases):
// * windows at W strides of 2+ (not 3 wide) on planes up to 8192 elements:
//   max 5x5 s2 dilated on 75x75 0.56x, float16 5x5 s3 on 71x74 0.61x, max
//   3x3 s3 on 35x35 0.81x and 0.83x, 2x2 s2 p1 on 19x19 0.58x, average 6x6
//   s2 on 71x71 0.89x; larger planes are the row kernel's (max 4x4 s2 on
//   128x128: 1.22x, 3x3 s2 on 147x150: 1.41x); 2D max windows under 8 wide
//   at W strides of 3+ up to 448x448, whose taps the row path's horizontal
//   pass takes by gathers or blended loads (max 3x3 s3 p1 on 2x160x112x112,
//   1.05x ONNX Runtime's time there, 0.47-0.50x in the blocked kernel; 91x91
//   to 224x224 0.47-0.69x, 320x320 0.72x, 448x448 0.75x, 4x4 s3 0.48-0.58x,
//   5x5 s4 0.70-0.79x, 7x7 s4 0.55x, float16 0.54x; at 1 and 2 threads; not
//   averages, 3x3 s3 p1 on 112x112 1.12-1.20x, nor 3D pooling along D, the
//   depth slab, 1.28x);
// * 3-wide windows (the row kernel's own 3-tap kernels) on planes up to 1024
//   elements: average 3x3 s2 p1 on 28x19 0.81x and on 17x17 0.59x; 1.5-1.7x
//   slower on 56x56 (the named cases' 3x3 s2 average and L2 norm); 2D 16-bit
//   maxima at stride 2, which have no run kernel (the separable rows widen
//   each row first), up to 56x56: float16 max 3x3 s2 p1 on 35x35 to 56x56
//   0.42-0.77x, bfloat16 0.61-0.94x, at 1 and 2 threads (float16 63x63
//   0.83-0.95x, bfloat16 0.87-1.05x; 75x75 and up float16 0.67-1.2x,
//   bfloat16 1.06x); 2D float16 averages at stride 2 up to 224x224 (3x3 s2
//   with and without p1 on 35x35 to 71x71 0.25-0.45x, 112x112 and 150x150
//   0.50-0.60x, 224x224 0.74-0.81x, at 1 and 2 threads; on 8+ planes:
//   4 planes of 112x112, half the lanes spare, 1.2x slower; bfloat16,
//   widened by a shift, 0.70x on 35x35 but 0.94-1.39x on 150x150 and
//   224x224, stays);
// * overlapping windows at stride 1, where the row kernel's separable passes
//   save taps, only on planes up to 324 elements, 576 for windows of up to 9
//   taps (max 3x3 s1 on 14x14 0.61x, on 17x17 0.64-0.70x, on 24x24 0.87-0.90x,
//   average 3x3 s1 on 22x22 0.76-0.95x, 2x2 s1 on 13x13 0.40x, average 7x7
//   s1 on 7x6 0.40x, 5x5 s1 on 17x17 0.60x; 5x5 on 20x20 and 24x24 and 3x3
//   on 28x28 even, 0.8-1.12x), 256 in float64 (four lanes: 3x3 on 17x17
//   1.1-1.36x slower), or rows of under 8
//   outputs on planes up to 1024; average 3x3 s1 on 35x35 1.4x and 7x7 s1 on
//   112x112 2.5x slower; float16 on planes up to 4096, whose rows the row
//   kernel widens first (average 5x5 s1 ceil on 28x28 0.33x, 3x3 s1 p1 on
//   35x35 0.35x and on 56x56 0.62-0.69x, max 3x3 s1 p1 on 35x35 0.6x, 5x5
//   s1 p2 on 56x56 0.87-0.95x; 3x3 on 112x112 and 7x7 on 75x75 even);
// * 1D rows up to 64, or up to 512 at strides of 2+ with windows under 8
//   (average 6x6 s3 on 500: 0.32x), 256 for 3-wide windows (average 3x3 s2
//   on 128: 0.84x; max 3x3 s2 on 2048 1.1x slower); adaptive 1000->100
//   1.6x slower; 16-bit rows up to 4096 (float16; 3-wide max values and
//   bfloat16 max values up to 1024): at 2 threads float16 max 5 s3 on 2048
//   and 4096 0.58-0.79x, 3 s2 on 300 to 1000 0.59-0.84x (on 2048 to 4096
//   1.06-1.30x), averages 3 s2 and 5 s3 on 512 to 4096 0.67-0.97x;
//   bfloat16 max 3 s2, 4 s2 and 5 s3 on 512 and 1024 0.19-0.79x (on 4096
//   1.4-2.7x), its averages 1.1-2.0x slower;
// * indices wherever the argmax kernel's vector kernels do not apply
//   (float32 3-tap windows at stride 1 or 2 of one depth tap, 16+ outputs a
//   row with every tap inside, where padded edges are the tables' output by
//   output only on 2D planes over 1600 elements; tilings; adaptive bins
//   column by column), given a group's eight lanes to fill: 0.12-0.79x;
//   3x3 s2 p1 on 32x32 (14 such outputs a row) 0.25x, s1 p1 on 20x20 0.53x
//   and 28x28 0.76x, 3x3x3 s2 p1 on 8x56x56 0.21x, 1D 5 s3 on 100 0.31x and
//   on 4000 0.57x, 7 s2 on 300 0.67x (s2 p1 on 38x38 to 42x42 even; 1D 2 s1
//   on 1000 and 5 s1 on 2048 1.1-1.17x slower, 1D windows of 8+ taps
//   mixed: bins 4000->5 1.29x, 250->3 0.49x); tilings 28->7 1.6x and bins
//   50->7 1.35x slower;
// * tilings the tile kernel takes by the scalar passes (3-wide tiles, rows
//   of under 4 outputs) on planes up to 1024 elements: max 3x3 s3 on 12x12
//   0.46x, 24x24 0.79x, 36x36 0.85x (48x48 1.13x slower), average 3x3 s3 on
//   15x15 0.46x, max 2x2 s2 on 6x6 0.49x; 3-wide tiles up to 44x44 (3x3 s3
//   on 33x33 to 44x44, float32 and float16, in L3 and beyond it: 0.41-0.89x
//   at 2 threads; 48x48 0.90-1.05x), but not float32 1D rows of 3-wide
//   tiles (max and average 3 s3 on 30 to 1000: the tile kernel 0.51-0.84x
//   the blocked kernel's time at 2 threads; float16 max keeps the keys,
//   1.25-1.33x slower as tiles). Not the tile kernel's vector rows
//   (2- and 4-wide tiles, 4+ outputs a row, float32 and float16), which merge
//   small planes into one: max 2x2 s2 on 8x8 0.6x, average 0.56x and
//   adaptive 8->4 0.53x the blocked kernel's time, float16 max 0.6x; but
//   planes that do not merge (rows the tiles leave out: one call a plane)
//   are the blocked kernel's up to 160 elements for float32 2-wide tiles,
//   400 for the others (at 1 and 2 threads, 16 MB: float32 max and average
//   2x2 s2 on 7x8 0.44-0.58x, 11x12 0.74-0.89x, 13x16 0.85-1.13x, 17x18
//   0.99-1.25x; 4x4 s4 on 13x16 0.63-0.70x, 19x20 0.76-0.86x, 25x28
//   0.93-1.22x; float16 2x2 s2 on 7x8 0.31-0.37x, 19x20 0.79-0.89x, 21x24
//   0.99-1.21x); nor float64 tilings (2x2 s2 on 8x8: 0.36x; 3x3 s3 on
//   12x12: 0.3x);
// * depth pooled through the slab on planes up to 400 elements: max 2x2x2 s3
//   on 16x7x7 0.36x, 16x14x14 0.44x, 16x20x20 0.58x, max 3x3x3 s2 p1 on
//   8x8x8 0.35x and on 16x20x20 0.71x, average 2x2x2 s3 on 16x14x14 0.41x;
//   at 24x24 even (0.9-1.09x), at 28x28 1.27x slower (and on the named
//   cases' 56x56 and 30x30 planes 1.17-1.27x).
// * float16 and bfloat16 max values and indices on 16+ planes, which the
//   blocked kernel takes as order keys, sixteen planes a pass
//   (Plan::lanes_keys; indices from 9 taps), while the row kernels widen
//   each row first (at 2 threads): values against the separable rows
//   0.54-1.02x (3x3 s1 p1 on 75x75 to 224x224 0.55-0.93x, 3x3 s2 p1 on
//   75x75 to 224x224 0.58-1.02x, 5x5 and 7x7 on 150x150 and 224x224
//   0.54-0.73x, 3D 3x3x3 s2 0.82x, 1D 3x3 and 5x5 s1 on 256 and 1000
//   0.74-0.79x), but not 1D rows at strides of 2+ (3x3 s2 on 4096 1.39x),
//   tilings (2x2 s2 1.25-1.67x) or fewer planes (8 planes of 112x112 1.36x,
//   3 planes 2.4-3.4x); indices against the argmax kernel's 3-tap vector
//   kernels on 2D planes (3x3 s1 and s2 on 28x28 to 224x224 0.55-1.02x) and
//   on 1D rows up to 1024 without 3-wide windows (3x3 s3 on 100 to 1000
//   0.36-0.53x, 5x5 s2 on 1000 0.85x, 4x4 s4 on 300 0.87x; 3x3 s1 on 1000
//   1.25x and s2 on 500 1.29x slower, one bin of 2048 1.42x);
// * max values whose columns are pooled once (set_columns): float32 on
//   planes up to 80x80, 16-bit up to 112x112 (against the separable rows at
//   2 threads: 4x4 to 7x7 s1 0.52-0.77x on 40x40 to 80x80, 5x5 s2 0.81-0.95x;
//   on 112x112 float16 0.80-0.89x, float32 0.80-0.94x on inputs in L3 but
//   1.05x (s1) and 1.2x (s2) on 4x192x112x112), and with depth through the
//   slab on planes
//   up to 28x28 (3x3x3 and 5x5x5 s1 on 8x20x20 0.53x, 8x28x28 0.65-0.76x;
//   5x5x5 on 8x40x40 1.49x slower); windows under 8 taps at W strides of 3+
//   (7x7 s3, which the row kernel takes by gathers) on planes up to 320x320
//   (0.48-0.66x from 128x128 to 320x320; 9x9 s3 and 11x11 s4 0.94-1.34x,
//   5x5 s1 on 128x128 to 224x224 0.93-1.30x, stay on the rows). float64
//   keeps the rules of other windows.
// Lp tilings of p 1 and 2 take the tiling rules (the tile kernel sums |x|
// or x * x: paired against the blocked kernel and the rows at 1 / 2
// threads, 2x2 s2 on 4x384x38x37 0.50-0.67x / 0.45-0.54x for p 1 and 2,
// 4x4 s4 p 1 on 4x64x112x112 0.63-0.68x / 0.34-0.38x, float16 2x2 s2 on
// 8x256x28x28 0.47-0.49x / 0.46-0.48x); other p the rules of other
// windows. Bins of unequal size as bins_prefer_blocked says; bins of 8+
// taps along W of one size at one step on planes up to 1024 elements
// (22x22 -> 3x3 0.54-0.65x, 29x29 -> 4x4 0.80-0.90x; 36x36 -> 5x5
// 1.11-1.17x and 50x50 -> 7x7 1.5x slower: wide_bins), and not calls of
// under 4 planes (spare lanes).
inline bool prefer_blocked(const Plan &plan) {
    if (plan.tuning.blocked_everywhere)
        return true;
    const int64_t slice = plan.in_h * plan.in_w;
    const bool by_table = !(plan.uniform[0] && plan.uniform[1] && plan.uniform[2]);
    const bool one_row = plan.in_h == 1 && plan.in_d == 1;
    const bool three_wide = plan.uniform_w && plan.dil_w == 1 && plan.kernel_w == 3 &&
                            (plan.stride_w == 1 || plan.stride_w == 2);
    const bool keys = keys_fit(plan) && plan.n_planes >= 16;
    if (plan.spec.family == Family::argmax) {
        if (by_table && plan.n_planes >= simd::kLanes && bins_prefer_blocked(plan))
            return true;
        if (keys && (!one_row || (!three_wide && plan.in_w <= 1024)))
            return true;
        // the argmax kernel's vector kernels: 3-tap windows at stride 1 or 2,
        // tilings, adaptive bins column by column (float32)
        const bool f32 = plan.compute == DType::f32;
        const bool tiles =
            f32 && plan.tile_kw > 0 && simd::vector_rows_ok(plan.out_w, plan.tile_kw, plan.tile_kw);
        const bool bins = f32 && !plan.uniform_w && plan.dil_w == 1 &&
                          simd::bins_by_window_ok(plan.win_w.data(), plan.out_w, plan.in_w);
        // the vector rows take a row's interior outputs (every tap inside);
        // edges and rows of under 16 such outputs go by the tables, output
        // by output
        const int64_t interior = plan.interior_hi - plan.interior_lo;
        const bool depth_taps = detail::max_taps(plan.win_d) > 1;
        const bool vector_rows = f32 && three_wide && !depth_taps && plan.dil_h == 1 &&
                                 interior >= 16 &&
                                 (one_row || interior == plan.out_w || slice > 1600);
        if (vector_rows || tiles || bins || plan.n_planes < simd::kLanes ||
            (!f32 && three_wide && !depth_taps && plan.out_w >= 16))
            return false;
        return !one_row || plan.in_w <= 64 ||
               (plan.stride_w >= 2 && plan.kernel_w < 8 && plan.in_w <= 4096);
    }
    const bool slab = detail::max_taps(plan.win_d) > 1 && plan.slab_hi > plan.slab_lo &&
                      !is_half(plan.compute) && plan.spec.family != Family::lp;
    const bool columns =
        plan.column_span > 0 && plan.compute != DType::f64 && plan.spec.family == Family::max;
    // float32 max values of whole windows as wide as their stride along D, H
    // and W (3D tilings): the slab pools them a call an output row; the
    // blocked kernel, paired at 1 and 2 threads, took 2x2x2 s2 on 8x28x28
    // 0.49x / 0.55x, on 8x32x32 0.87x / 0.89x, on 16x56x56 0.76x / 0.80x, on
    // 8x64x64 0.91x / 0.95x, 3x3x3 s3 on 9x33x33 0.68x / 0.69x (on 8x112x112
    // 0.99x / 1.08x: the slab keeps larger slices)
    if (slab && plan.tiling_axes && plan.spec.family == Family::max && plan.compute == DType::f32 &&
        slice <= 64 * 64)
        return true;
    if ((by_table && !bins_prefer_blocked(plan)) || (slab && slice > (columns ? 784 : 400)) ||
        plan.n_planes < 4 || (!by_table && wide_bins_ok(plan) && plan.in_plane() > 1024))
        return false;
    if (by_table)
        return true;
    if (plan.tile_kw > 0 && plan.mode != kSumLpP) {
        const bool vector_tiles = (plan.compute == DType::f32 || plan.compute == DType::f16) &&
                                  simd::vector_rows_ok(plan.out_w, plan.tile_kw, plan.tile_kw);
        if (vector_tiles && plan.in_d == 1 && detail::merged_planes(plan) < 2)
            return plan.in_plane() <= (plan.compute == DType::f32 && plan.tile_kw == 2 ? 160 : 400);
        if (vector_tiles || plan.compute == DType::f64 ||
            (one_row && plan.tile_kw == 3 && plan.compute == DType::f32))
            return false;
        return slice <= (plan.tile_kw == 3 ? 1936 : 1024);
    }
    const bool strided = plan.stride_w >= 2 || plan.kernel_w == 1;
    if (keys && plan.spec.family == Family::max && !(one_row && strided))
        return true;
    if (one_row) {
        // 16-bit rows, which the row kernel widens first: float16 up to
        // 4096 but for 3-wide max values (1024), bfloat16 max values up to
        // 1024 (its averages, widened by a shift, stay on the rows)
        const bool max = plan.spec.family == Family::max;
        const int64_t half_limit = plan.compute == DType::f16 ? (max && three_wide ? 1024 : 4096)
                                   : plan.compute == DType::bf16 && max ? 1024
                                                                        : 0;
        return plan.in_w <= 64 ||
               (strided && plan.kernel_w < 8 &&
                plan.in_w <= std::max<int64_t>(half_limit, three_wide ? 256 : 512));
    }
    if (columns)
        return slice <= (is_half(plan.compute) ? 12544 : 6400) ||
               (plan.stride_w >= 3 && plan.kernel_w < 8 && slice <= 102400);
    if (strided) {
        const bool max_2d = plan.spec.family == Family::max && plan.in_d == 1;
        if (max_2d && plan.stride_w >= 3 && plan.kernel_w < 8 && plan.compute != DType::f64)
            return slice <= 448 * 448;
        if (max_2d && three_wide && is_half(plan.compute))
            return slice <= 56 * 56;
        if (plan.spec.family == Family::average && plan.in_d == 1 && three_wide &&
            plan.compute == DType::f16)
            return slice <= 224 * 224 && plan.n_planes >= 8;
        return slice <= (three_wide ? 1024 : 8192);
    }
    const int64_t limit = plan.compute == DType::f64 ? 256 : plan.n_taps <= 9 ? 576 : 324;
    return slice <= limit || (plan.out_w < 8 && slice <= 1024) ||
           (is_half(plan.compute) && slice <= 4096);
}

// The kernel of a plan whose geometry is set: one decision, in order; sets
// plan.path and its variant (plan.row_kernel, plan.argmax_tiles). (Kernels
// a build or an element type lacks are never chosen.)
inline void choose_path(Plan &plan, bool global, bool tiling) {
    const auto rows = [&plan](RowKernel k) {
        plan.path = Path::rows;
        plan.row_kernel = k;
    };
    const Family family = plan.spec.family;
    const DType t = plan.compute;
    const bool f32 = t == DType::f32, half = is_half(t);
    const bool average = family == Family::average;
    plan.row_kernel = RowKernel::separable;
    plan.slab_narrow = false;
    plan.argmax_tiles = false;
    plan.path = Path::empty;
    if (plan.n_planes == 0 || plan.out_plane() == 0)
        return;
    // a plane reduced whole: 16 lanes, no window tables (global max of 7x7
    // planes 17% faster without a scalar tail; means of a group of planes in
    // one vector loop: 32x2048x7x7 0.249 -> 0.208 ms at 1 thread)
    if (global && family != Family::argmax) {
        plan.path = Path::global;
        return;
    }
    if (plan.unit_rows > 0 && prefer_blocked(plan)) {
        plan.path = Path::blocked;
        return;
    }
    if (family == Family::argmax) {
        // tiles with indices: the vector argmax over runs of rows (adaptive
        // max 28->7 with indices 0.88x, paired, against one call per row)
        if (f32 && tiling && simd::vector_rows_ok(plan.out_w, plan.tile_kw, plan.tile_kw) &&
            plan.in_plane() < (int64_t(1) << 31))
            plan.argmax_tiles = true;
        plan.path = Path::argmax;
        return;
    }
    // tiles: straight from the input in PyTorch's order (adaptive 28->7 at 1
    // thread 320 -> 200 ns a plane against the separable passes)
    if (tiling &&
        (average || family == Family::max || plan.mode == kSumLp1 || plan.mode == kSumLp2)) {
        plan.path = Path::tiles;
        return;
    }
    rows(RowKernel::separable);
    if (half)
        return;  // 16-bit rows are widened and take the separable rows
    // pooling along D first into a slab that fits a quarter of L2 (maxpool3d
    // 3x3x3 s2 3.63 -> 3.16 ms, aap3d 2.98 -> 2.37 ms at 2 threads)
    // (float32 max values of run_narrow's windows over the slab's rows: its
    // kernel, unless the next slab is prefetched a row at a time)
    const bool slab = plan.slab_hi > plan.slab_lo;
    if (slab && (average || family == Family::max)) {
        plan.slab_narrow = f32 && family == Family::max && plan.uniform_w && !plan.slab_prefetch &&
                           run_narrow(plan, detail::max_taps(plan.win_h));
        return rows(RowKernel::depth_slab);
    }
    // else slice by slice, rows in address order (aap3d at 1 thread 6.4 ->
    // 2.8 ms against window row by window row)
    if (plan.slice_rows > 0 && (average || family == Family::max))
        return rows(RowKernel::depth_slices);
    // adaptive bins of 8+ taps (wide_bins_ok); before the runs, which would
    // take bins of one size at one step
    if (wide_bins_ok(plan))
        return rows(RowKernel::wide_bins);
    // float32 windows uniform along W over one depth slice: runs of rows per
    // call (the per-row calls cost more than a small plane's arithmetic: max
    // 2x2 s1 on 16x32x38x38, 250 instructions a row of 37 outputs besides
    // the horizontal pass), the vertical passes of rows whose windows step by
    // one input row as one span. Windows of one row keep the row path, which
    // reads such a row in place (adaptive 1000 -> 100 in 1D, bins of 10,
    // 1.22-1.33x slower through the run's copy), and so do windows padded
    // along W, whose copy into the padded buffer cost more than the run saved
    // (average 5x5 s1 p2 on 32x24x71x71: 1.5x slower), except those of
    // run_narrow, which have their own kernel. Prefetched inputs keep the row
    // path (a run of 3-wide windows at stride 2 was 12% slower on the stem at
    // batch 16, max 4x4 s2 on 64x3x128x128 1.30x), except run_narrow's
    // windows at stride 1, paired at 1 and 2 threads against the prefetched
    // row path: max 3x3 s1 on 2x64x128x128 0.48x / 0.49x, padded on
    // 8x64x112x112 0.61x / 0.57x, on 1x16x512x512 0.63x / 0.60x, on
    // 32x64x96x96 (75 MB) 0.77x / 0.79x; max 2x2 s1 on 4x64x128x128 0.55x /
    // 0.62x; average 3x3 s1 p1 on 2x64x128x128 0.91x / 0.76x. The run does
    // not prefetch.
    const int64_t max_h = detail::max_taps(plan.win_h), max_d = detail::max_taps(plan.win_d);
    const int64_t min_d = detail::min_taps(plan.win_d);
    const bool narrow = run_narrow(plan);
    const bool narrow_s1 = plan.stride_w == 1 && runs_by_narrow_kernel(plan);
    if (f32 && plan.tuning.run_elements > 0 && plan.uniform_w &&
        ((max_h >= 2 && plan.direct_w) || narrow) && max_h <= limits::kRunRows && min_d == 1 &&
        max_d == 1 && (plan.prefetch == 0 || narrow_s1) &&
        (family == Family::max || average || family == Family::lp)) {
        plan.prefetch = 0;
        return rows(RowKernel::runs);
    }
    // adaptive averages of bins under 8 taps: eight rows in lanes (8x256x30x30
    // -> 7x7 0.35 -> 0.23 ms at 2 threads); not on prefetched rows
    // (2x64x224x224 -> 100 went 1.60 -> 2.32 ms)
    if (kAvx2 && plan.narrow_rows && plan.prefetch == 0)
        return rows(RowKernel::narrow_bins);
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
            if (plan.row_kernel == RowKernel::depth_slab) {
                s.buf = part(s, plan.buffer_width * item);
                s.slab = part(s, plan.in_h * plan.in_w * item);
                s.offsets = part(s, plan.max_rows * i64);
                if (kAvx2 && plan.narrow_rows)
                    s.lanes = part(s, 8 * (plan.in_w + plan.out_w) * fl);
            } else if (half) {
                s.buf = part(s, plan.buffer_width * fl);
                s.rows = part(s, plan.max_rows * plan.in_w * fl);
                s.out_row = part(s, plan.out_w * fl);
                s.offsets = part(s, plan.max_rows * i64);
                s.local = part(s, plan.max_rows * i64);
            } else {
                const int64_t groups = plan.row_kernel == RowKernel::depth_slices
                                           ? std::max<int64_t>(1, plan.slice_rows)
                                           : 1;
                s.buf = part(s, groups * plan.buffer_width * item);
                s.offsets = part(s, plan.max_rows * i64);
                if (plan.row_kernel == RowKernel::narrow_bins)
                    s.lanes = part(s, 8 * (plan.in_w + plan.out_w) * fl);
                if (plan.row_kernel == RowKernel::runs)
                    s.run = part(s, 2 * run_rows(plan) * plan.in_w * fl);
            }
            break;
        case Path::blocked: {
            const int64_t c = plan.compute == DType::f64 ? 8 : 4, L = simd::kLanes;
            const bool indices = plan.spec.family == Family::argmax;
            s.lanes_in = part(s, plan.lane_slices * plan.lane_rows * plan.lane_width * L * c);
            s.lanes_out = part(s, plan.unit_rows * plan.out_w * L * c);
            if (indices)
                s.lanes_pos = part(s, plan.unit_rows * plan.out_w * L * c);
            if (indices)
                s.tap_pos = part(
                    s, std::max<int64_t>(1, static_cast<int64_t>(plan.tap_index.size())) * L * c);
            if (!plan.lanes_by_table) {
                s.win_at = part(s, plan.unit_rows * plan.out_w * i64);
                if (plan.spec.family != Family::max)
                    s.win_aux = part(s, plan.unit_rows * plan.out_w * c);
            }
            if (plan.n_col_kinds > 1) {
                s.win_order = part(s, plan.unit_rows * plan.out_w * i64);
                s.win_runs = part(s, static_cast<int64_t>(plan.tap_lists.size() + 2) * i64);
            }
            if (plan.column_span > 0)
                s.lanes_cols = part(s, plan.column_span * L * c);
            if (!plan.row_taps.empty())
                s.lanes_cols = part(s, 2 * plan.lane_slices * plan.lane_rows * plan.out_w * L * c);
            break;
        }
        case Path::argmax: {
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
    int64_t n_planes = detail::checked_mul(spec.n, spec.c);
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
    // Windows of one element each pool every element alone, so a group of
    // whole planes can be one plane of rows up to merged_outputs wide (at
    // least an input row): 1x1 tiles, which the tile kernel streams at about
    // the rate of a copy. The blocked kernel took them with a transpose in
    // and out (adaptive 7x7 -> 7x7, VGG's head at 224x224, on 16x2048 planes
    // 0.32x / 0.29x at 1 / 2 threads; AveragePool of kernel 1 on 4x64x56x56
    // 0.30x / 0.28x, paired). Values only (indices count within each
    // original plane), and Lp norms of p 1 and 2 (the tile kernel's).
    const bool one_tap = spec.family != Family::argmax && plan.mode != kSumLpP && n_planes > 0 &&
                         in_plane > 0 && detail::is_one_tap(axes);
    if (one_tap) {
        const int64_t group = detail::divisor_at_most(
            n_planes, std::max<int64_t>(1, tuning.merged_outputs / in_plane));
        const int64_t merged = group * in_plane;
        // in_w divides merged, so the row is never narrower than an input row
        const int64_t width =
            detail::divisor_at_most(merged, std::max(in_w, tuning.merged_outputs));
        n_planes /= group;
        axes[0] = adaptive_windows(1, 1);
        axes[1] = adaptive_windows(merged / width, merged / width);
        axes[2] = adaptive_windows(width, width);
    }
    bool global = false, tiling = false;
    if (n_planes > 0 && in_plane > 0 && out_plane > 0) {
        global = detail::is_global(axes);
        detail::tiling_of(axes, &plan.tile_kh, &plan.tile_kw, one_tap);
        tiling = plan.tile_kh > 0 && !global;
        plan.tiling_axes = detail::is_tiling_axis(axes[0]) && detail::is_tiling_axis(axes[1]) &&
                           detail::is_tiling_axis(axes[2]);
    }
    set_geometry(plan, n_planes, axes);  // (moves the tables into the plan)
    plan.row_major = plan.index_stride_w == 1 && plan.index_stride_h == plan.in_w &&
                     plan.index_stride_d == plan.in_h * plan.in_w;
    // 16-bit floats: widened window rows (a widened plane, with indices) in
    // per-thread scratch, unless that scratch would be too large: then the
    // caller widens the whole input to float32 first
    plan.compute = spec.dtype;
    if (tiling)
        plan.max_order = MaxOrder::row_major;
    else if (detail::max_taps(plan.win_d) > 1 && plan.slab_hi > plan.slab_lo &&
             !is_half(spec.dtype))
        plan.max_order = MaxOrder::columns_depth_inner;
    plan.n_groups = (plan.n_planes + simd::kLanes - 1) / simd::kLanes;
    plan.unit_rows = global && spec.family != Family::argmax ? 0 : blocked_rows(plan);
    plan.bands = plan.unit_rows > 0 ? band_count(plan, plan.unit_rows) : 1;
    if (plan.unit_rows > 0) {
        int64_t positions;
        band_extent(plan, plan.unit_rows, &plan.lane_slices, &plan.lane_rows, &positions);
        set_taps(plan);
    }
    if (is_half(spec.dtype) && !(plan.unit_rows > 0 && prefer_blocked(plan))) {
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
    choose_path(plan, global, tiling);
    // Where the tiles use every input row, the input rows of plane q + 1
    // follow those of plane q with no gap, and so do the output rows: a group
    // of consecutive planes is one tall plane. The kernels then take long
    // runs of rows instead of one call per small plane (in a run, float16
    // takes two rows at a time; a 7-row plane left one row alone). Adaptive
    // 28->7 on 8x512 planes 0.83x and 0.89x in float32, 0.80x and 0.75x in
    // float16 at 2 and 1 threads, 14->7 on 64x512 planes 0.75x; 2x2 s2 on
    // 56x56 planes the same either way. Values only: indices count within
    // each original plane.
    if (plan.path == Path::tiles) {
        const int64_t group = detail::merged_planes(plan);
        if (group >= 2) {
            Windows merged[3];
            merged[0] = adaptive_windows(1, 1);
            merged[1] =
                adaptive_windows(group * plan.in_d * plan.in_h, group * plan.out_d * plan.out_h);
            merged[2] = axes[2];  // its table moved into the plan: take it back
            merged[2].table = plan.win_w;
            set_geometry(plan, plan.n_planes / group, merged);
        }
    }
    if (plan.path == Path::tiles)
        plan.tile_ahead = plan.in_elements() * static_cast<int64_t>(dtype_size(plan.compute)) >=
                                  plan.tuning.tile_prefetch_min_bytes
                              ? plan.tuning.tile_ahead_bytes
                              : 0;
    if (plan.path == Path::argmax && !plan.argmax_tiles)
        plan.bins_by_window = plan.compute == DType::f32 && !is_half(spec.dtype) &&
                              plan.dil_w == 1 && plan.in_d * plan.in_h < limits::kRankKeyRows &&
                              simd::bins_by_window_ok(plan.win_w.data(), plan.out_w, plan.in_w);
    // One input row (1D) and windows wider than 8: the table path's compare
    // chain is bound by its latency there (an adaptive 250 -> 3 max with
    // indices took about 170 ns an output); a vector scan of each window's
    // span keeps the rule (first maximum, last NaN). 16-bit floats scan
    // their widened plane (an adaptive 1000 -> 6 in float16 on 96 rows took
    // 86 us, 1.8x PyTorch's time).
    if (plan.path == Path::argmax && !plan.argmax_tiles && !plan.bins_by_window &&
        plan.dil_w == 1 && plan.in_d == 1 && plan.in_h == 1 &&
        (plan.compute == DType::f32 || plan.compute == DType::f64 || is_half(plan.compute))) {
        bool wide = plan.out_w > 0;
        for (int64_t o = 0; o < plan.out_w; o++)
            wide = wide && (plan.win_w[3 * o + 1] == 0 || plan.win_w[3 * o + 1] > 8);
        plan.argmax_spans = wide;
    }
    if ((spec.family == Family::max || spec.family == Family::argmax) &&
        plan.path != Path::global && plan.path != Path::tiles) {
        for (int64_t o = 0; o < plan.out_w; o++)
            if (plan.win_w[3 * o + 1] == 0)
                plan.empty_w.push_back(o);
        plan.any_empty = !plan.empty_w.empty() || detail::min_taps(plan.win_d) == 0 ||
                         detail::min_taps(plan.win_h) == 0;
        // the padded layout gives a window's own answer but where the
        // window is empty (max values: the empty value), or, with indices,
        // reaches the padding (a -inf there could be the first maximum)
        bool clipped = false;
        const std::vector<int64_t> *tables[3] = {&plan.win_d, &plan.win_h, &plan.win_w};
        for (int a = 0; a < 3; a++)
            clipped = clipped || !plan.uniform[a] || detail::min_taps(*tables[a]) < plan.kernel[a];
        plan.redo_minus_inf = plan.any_empty || (spec.family == Family::argmax && clipped);
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
    // Indices as keys: each tap's offset from its window's first element in
    // 16 bits, the first element's index in 32; windows of 9+ taps, where
    // the taps outweigh the indices' stores (against the float lanes at 2
    // threads, float16 on 35x35, 14x14 and 28x28 planes: 4 taps 0.89-1.15x,
    // 9 taps 0.95-1.00x, 16 taps 0.86-0.92x, 25 taps 0.74-0.80x)
    bool short_taps = plan.in_plane() <= INT32_MAX && plan.n_taps >= 9;
    for (int64_t t : plan.tap_index)
        short_taps = short_taps && t >= 0 && t <= INT16_MAX;
    plan.lanes_keys =
        plan.path == Path::blocked &&
        (spec.family == Family::max || (spec.family == Family::argmax && short_taps)) &&
        !plan.lanes_by_table && keys_fit(plan);
    if (plan.path != Path::blocked)
        plan.row_taps.clear();
    // the blocked kernel's prefetches of whole planes (float groups, one band)
    const bool whole_planes = plan.path == Path::blocked && plan.bands == 1 && !plan.lanes_keys;
    const int64_t esize = static_cast<int64_t>(dtype_size(spec.dtype));
    plan.lanes_prefetch_out =
        whole_planes && plan.out_elements() * esize >= plan.tuning.blocked_prefetch_out_bytes;
    const int64_t plane_bytes = plan.in_plane() * esize;
    if (whole_planes && plane_bytes >= plan.tuning.blocked_prefetch_head_bytes)
        plan.lanes_prefetch_head = std::max<int64_t>(
            0, std::min(plan.tuning.blocked_prefetch_head_lines, plane_bytes / 64));
    plan.scratch = detail::scratch_layout(plan);
    return plan;
}

// The work units of a call on threads_for(plan, max_threads) threads:
// contiguous runs of plane groups (blocked), blocks of output rows of one
// plane (whole planes when there are enough of them, so that every thread
// gets units_per_thread units), depth slices for the slab, groups of planes
// for the global pools.
inline Schedule make_schedule(const Plan &plan, int max_threads) {
    Schedule s;
    s.threads = threads_for(plan, max_threads);
    const int64_t threads = s.threads;
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
        case Path::blocked: {
            // runs of whole groups, so that each thread gets units_per_thread
            // (one thread: one run); keys take groups in pairs
            const int64_t want = threads == 1 ? 1 : plan.tuning.units_per_thread * threads;
            const int64_t per = plan.lanes_keys ? 2 : 1;
            const int64_t items = (plan.n_groups + per - 1) / per;
            const int64_t runs = std::max<int64_t>(1, std::min(items, want / plan.bands));
            s.group = std::min(plan.n_groups, (items + runs - 1) / runs * per);
            s.n_units = (plan.n_groups + s.group - 1) / s.group * plan.bands;
            break;
        }
        default: {
            if (plan.path == Path::rows && plan.row_kernel == RowKernel::depth_slab) {
                s.n_units = plan.n_planes * plan.out_d;  // an output depth of a plane
                break;
            }
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

// The kernel of a plan with its variant: "rows.runs", "argmax.tiles",
// "blocked", ...
inline std::string kernel_name(const Plan &plan) {
    std::string name = path_name(plan.path);
    if (plan.path == Path::rows)
        name = name + "." + row_kernel_name(plan.row_kernel);
    else if (plan.path == Path::argmax)
        name += plan.argmax_tiles ? ".tiles" : ".tables";
    return name;
}

namespace detail {

inline std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string format(const char *fmt, ...) {
    char text[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(text, sizeof(text), fmt, args);
    va_end(args);
    return text;
}

inline const char *family_name(Family f) {
    switch (f) {
        case Family::average:
            return "average";
        case Family::lp:
            return "lp";
        case Family::max:
            return "max";
        case Family::argmax:
            return "max with indices";
    }
    return "?";
}

inline const char *dtype_name(DType t) {
    static const char *const names[] = {"float32",  "float64", "float16",
                                        "bfloat16", "int8",    "uint8"};
    return names[static_cast<int>(t)];
}

inline const char *order_name(MaxOrder o) {
    switch (o) {
        case MaxOrder::row_major:
            return "row-major";
        case MaxOrder::columns:
            return "columns first";
        case MaxOrder::columns_depth_inner:
            return "columns first, depth innermost";
    }
    return "?";
}

}  // namespace detail

// What a call of `plan` on schedule `s` will run, in words: the kernel and
// its choices (group size, unit size, layout, edge and interior outputs,
// prefetches), the threads and units, the scratch and the cost estimate.
inline std::string describe(const Plan &plan, const Schedule &s) {
    using detail::format;
    std::string text =
        format("path %s: %s %s, %lld planes of %lldx%lldx%lld -> %lldx%lldx%lld (D x H x W)\n",
               kernel_name(plan).c_str(), detail::dtype_name(plan.spec.dtype),
               detail::family_name(plan.spec.family), static_cast<long long>(plan.n_planes),
               static_cast<long long>(plan.in_d), static_cast<long long>(plan.in_h),
               static_cast<long long>(plan.in_w), static_cast<long long>(plan.out_d),
               static_cast<long long>(plan.out_h), static_cast<long long>(plan.out_w));
    switch (plan.path) {
        case Path::blocked:
            text += format(
                "  groups of %d planes in vector lanes (%lld groups), units of %lld groups x "
                "%lld output rows (%lld band%s a plane)%s%s\n",
                simd::kLanes, static_cast<long long>(plan.n_groups),
                static_cast<long long>(s.group), static_cast<long long>(plan.unit_rows),
                static_cast<long long>(plan.bands), plan.bands == 1 ? "" : "s",
                plan.lanes_prefetch_head > 0
                    ? format("; the next group's planes prefetched by their first %lld cache lines",
                             static_cast<long long>(plan.lanes_prefetch_head))
                          .c_str()
                    : "",
                plan.lanes_prefetch_out ? plan.spec.family == Family::argmax
                                              ? "; each group's outputs and indices prefetched "
                                                "for writing"
                                              : "; each group's outputs prefetched for writing"
                                        : "");
            if (plan.lanes_by_table)
                text += format(
                    "  layout %lldx%lldx%lld unpadded; every output by its window "
                    "tables (max values of bins of unequal size)\n",
                    static_cast<long long>(plan.lane_slices),
                    static_cast<long long>(plan.lane_rows),
                    static_cast<long long>(plan.lane_width));
            else
                text += format(
                    "  layout %lldx%lldx%lld padded by %lld,%lld,%lld (the identity); %s "
                    "%zu taps, %s%s; outputs %d at a time; %s\n",
                    static_cast<long long>(plan.lane_slices),
                    static_cast<long long>(plan.lane_rows), static_cast<long long>(plan.lane_width),
                    static_cast<long long>(plan.lane_pad[0]),
                    static_cast<long long>(plan.lane_pad[1]),
                    static_cast<long long>(plan.lane_pad[2]),
                    plan.uniform[0] && plan.uniform[1] && plan.uniform[2] ? "every window"
                    : plan.n_col_kinds > 1
                        ? "bins of unequal size, a tap list a group of outputs, windows of up to"
                        : "bins of unequal size, a tap list a row, windows of up to",
                    static_cast<size_t>(plan.n_taps),
                    plan.spec.family == Family::max ? detail::order_name(plan.max_order)
                    : plan.column_span > 0          ? "columns first"
                                                    : "row-major",
                    plan.column_span > 0     ? ", each row's columns pooled once first"
                    : !plan.row_taps.empty() ? ", each row's W windows pooled once first, then the "
                                               "windows over their rows"
                                             : "",
                    plan.spec.family == Family::argmax ? 4 : 8,
                    plan.lanes_keys
                        ? "16-bit order keys, two groups (16 planes) a pass, a pair holding a NaN "
                          "or a -0 pooled as floats"
                    : plan.spec.family == Family::max || plan.spec.family == Family::argmax
                        ? (plan.redo_minus_inf ? "a -inf maximum redone by the tables"
                                               : "a -inf maximum kept (no window needs its tables)")
                    : plan.spec.family == Family::lp ? "the p-th root of each sum"
                                                     : "each sum divided by its window's divisor");
            break;
        case Path::global:
            text += format("  %lld planes a unit, each one reduction\n",
                           static_cast<long long>(s.group));
            break;
        case Path::tiles:
            text += format(
                "  tiles %lldx%lld straight from the input, runs of rows; %s%s\n",
                static_cast<long long>(plan.tile_kh), static_cast<long long>(plan.tile_kw),
                plan.tile_kh * plan.tile_kw == 1 ? "windows of one element, planes as rows"
                : plan.n_planes != plan.spec.n * plan.spec.c ? "groups of planes as one tall plane"
                                                             : "plane by plane",
                plan.tile_ahead > 0 ? ", prefetching ahead" : "");
            break;
        case Path::argmax:
            text += format(
                "  %s; units of %lld output rows; outputs %lld..%lld with every tap "
                "inside vectorised, the rest by the table\n",
                plan.argmax_tiles     ? "tilings by the vector argmax, runs of rows"
                : plan.bins_by_window ? "adaptive bins folded column by column"
                : plan.argmax_spans   ? "windows by the tables, each span scanned in vectors"
                                      : "windows by the tables",
                static_cast<long long>(s.rows_per_block), static_cast<long long>(plan.interior_lo),
                static_cast<long long>(plan.interior_hi));
            break;
        default:
            if (plan.row_kernel == RowKernel::depth_slab) {
                text += format(
                    "  depth_slab: input rows %lld..%lld pooled along D first into a slab, a unit "
                    "an output depth%s\n",
                    static_cast<long long>(plan.slab_lo), static_cast<long long>(plan.slab_hi),
                    plan.slab_prefetch ? ", the next slab prefetched"
                    : plan.slab_narrow ? "; the slab's rows by the 3-wide kernel, in one call"
                                       : "");
                break;
            }
            text += format(
                "  %s%s: units of %lld output rows; W windows: %s, outputs %lld..%lld with every "
                "tap inside, the rest by the table; %s\n",
                row_kernel_name(plan.row_kernel),
                plan.row_kernel == RowKernel::runs && runs_by_narrow_kernel(plan)
                    ? " (2-3-wide windows by their own kernel, row by row)"
                    : "",
                static_cast<long long>(s.rows_per_block),
                plan.uniform_w ? "uniform (a padded column buffer)" : "bins by the table",
                static_cast<long long>(plan.interior_lo), static_cast<long long>(plan.interior_hi),
                plan.prefetch > 0 ? "rows prefetched ahead" : "no prefetch");
    }
    text += format(
        "  %d thread%s, %lld units handed out %lld at a time; %lld bytes of scratch "
        "a thread; about %.0f us on one thread\n",
        s.threads, s.threads == 1 ? "" : "s", static_cast<long long>(s.n_units),
        static_cast<long long>(s.chunk), static_cast<long long>(plan.scratch.bytes),
        cost_ns(plan) / 1000.0);
    return text;
}

OVPOOL_END
