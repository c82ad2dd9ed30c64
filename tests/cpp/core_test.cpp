// A C++ program on ovpool's kernel core alone (no Python): adaptive average
// and max pooling with indices against hand-computed values. Built and run
// by tests/test_kernel_core.py; exits non-zero on a mismatch.
#include <cmath>
#include <cstdio>

#include "ovpool/ovpool.hpp"

static int failures = 0;

template <class T>
static void expect(const char *what, const T *got, const T *want, int n) {
    for (int i = 0; i < n; i++)
        if (!(got[i] == want[i])) {
            std::printf("%s[%d]: got %g, want %g\n", what, i, double(got[i]), double(want[i]));
            failures++;
        }
}

template <class T, class I>
static void max_pool_case() {
    // 4x4 plane, 3x3 windows at stride 2 with pads 1: windows rows/cols
    // {0,1} and {1,2,3}. Window (1,1) holds 8 at (2,1) and (2,2): the first
    // in row-major order wins, index 9.
    const T x[16] = {1, 3, 2, 4, 5, 0, 6, 1, 2, 8, 8, 1, 0, 7, 3, 5};
    ovpool::Shape in;
    in.n = 1;
    in.c = 1;
    in.n_spatial = 2;
    in.spatial[0] = in.spatial[1] = 4;
    ovpool::Window w;
    w.kernel[0] = w.kernel[1] = 3;
    w.strides[0] = w.strides[1] = 2;
    w.pads_begin[0] = w.pads_begin[1] = w.pads_end[0] = w.pads_end[1] = 1;
    int64_t size[2];
    if (ovpool::pool_output_size(in, w, size) != ovpool::kOk || size[0] != 2 || size[1] != 2) {
        std::printf("pool_output_size\n");
        failures++;
        return;
    }
    T values[4];
    I indices[4];
    if (ovpool::max_pool_with_indices(x, in, w, values, indices) != ovpool::kOk) {
        std::printf("max_pool_with_indices failed\n");
        failures++;
        return;
    }
    const T want_values[4] = {5, 6, 8, 8};
    const I want_indices[4] = {4, 6, 9, 9};
    expect("max values", values, want_values, 4);
    expect("max indices", indices, want_indices, 4);
}

// The arithmetic empty-window test against the window tables (a row with no
// tap), over every small geometry, and on an axis whose table would take
// 24 TiB: kernel 2, dilation n + 1, n padded on each side: only the window
// starting at -1 (taps -1 and n) misses an input of n; n + 1 holds it.
static void empty_window_cases() {
    int64_t compared = 0;
    for (int64_t n_in = 1; n_in <= 9; n_in++)
        for (int64_t k = 1; k <= 3; k++)
            for (int64_t s = 1; s <= 5; s++)
                for (int64_t d = 1; d <= 13; d++)
                    for (int64_t pb = 0; pb <= 12; pb++) {
                        const ovpool::AxisSize size = ovpool::axis_output_size(
                            n_in, k, s, d, pb, pb / 2, ovpool::AutoPad::explicit_pads,
                            ovpool::Rounding::ceil);
                        if (size.n_out < 1)
                            continue;
                        ovpool::AxisSpec a;
                        a.n_in = n_in;
                        a.n_out = size.n_out;
                        a.kernel = k;
                        a.stride = s;
                        a.dilation = d;
                        a.pad_begin = pb;
                        a.pad_end = pb / 2;
                        const bool want = ovpool::fixed_windows(a).any_empty();
                        if (ovpool::axis_has_empty_window(n_in, size.n_out, k, s, d, pb) != want) {
                            std::printf("empty window: n_in %lld k %lld s %lld d %lld pads %lld\n",
                                        (long long)n_in, (long long)k, (long long)s, (long long)d,
                                        (long long)pb);
                            failures++;
                        }
                        compared++;
                    }
    const int64_t n = int64_t(1) << 39;
    if (compared < 10000 || !ovpool::axis_has_empty_window(n, 2 * n, 2, 1, n + 1, n) ||
        ovpool::axis_has_empty_window(n + 1, 2 * n, 2, 1, n + 1, n)) {
        std::printf("empty window: the huge axis (%lld compared)\n", (long long)compared);
        failures++;
    }
}

int main() {
    // adaptive average of a 3x4 plane (and the same plus 12 in a second
    // channel) to 2x3: bins [0,2) [1,3) along H, [0,2) [1,3) [2,4) along W
    float x[24];
    for (int i = 0; i < 12; i++) {
        x[i] = float(i + 1);
        x[12 + i] = float(i + 13);
    }
    ovpool::Shape in;
    in.n = 1;
    in.c = 2;
    in.n_spatial = 2;
    in.spatial[0] = 3;
    in.spatial[1] = 4;
    const int64_t out_size[2] = {2, 3};
    float y[12];
    if (ovpool::adaptive_avg_pool(x, in, out_size, y) != ovpool::kOk) {
        std::printf("adaptive_avg_pool failed\n");
        return 1;
    }
    // (1+2+5+6)/4 = 3.5, then 4.5, 5.5; (5+6+9+10)/4 = 7.5, 8.5, 9.5
    const float want[12] = {3.5f,  4.5f,  5.5f,  7.5f,  8.5f,  9.5f,
                            15.5f, 16.5f, 17.5f, 19.5f, 20.5f, 21.5f};
    expect("adaptive average", y, want, 12);

    // adaptive max with per-plane indices: bin (0,0) of the first plane is
    // {1, 2, 5, 6}: 6 at offset 5
    float v[12];
    int64_t idx[12];
    if (ovpool::adaptive_max_pool(x, in, out_size, v, idx) != ovpool::kOk) {
        std::printf("adaptive_max_pool failed\n");
        return 1;
    }
    const float want_v[12] = {6, 7, 8, 10, 11, 12, 18, 19, 20, 22, 23, 24};
    const int64_t want_idx[12] = {5, 6, 7, 9, 10, 11, 5, 6, 7, 9, 10, 11};
    expect("adaptive max values", v, want_v, 12);
    expect("adaptive max indices", idx, want_idx, 12);

    max_pool_case<float, int64_t>();
    max_pool_case<double, int32_t>();
    max_pool_case<int8_t, int64_t>();
    empty_window_cases();

    // a window that does not fit is refused, not run
    ovpool::Window big;
    big.kernel[0] = big.kernel[1] = 9;
    int64_t size[2];
    if (ovpool::pool_output_size(in, big, size) != ovpool::kBadArgument) {
        std::printf("a 9x9 window on a 3x4 plane was accepted\n");
        failures++;
    }
    std::printf("%s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
