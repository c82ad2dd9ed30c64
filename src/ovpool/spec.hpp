// The vocabulary of ovpool: what a pool call is, and the rules every front
// door applies before it plans one. The kernel core, the Cython driver (and
// through it Python), the extension library and third-party code read these
// names and numbers from here and nowhere else.
//
// * The enums of a call: op family, element type, index type, auto_pad,
//   rounding, the divisor rule of an average axis.
// * AxisSpec and PoolSpec: one pool call as a front door has resolved it.
// * limits: the largest sizes ovpool accepts.
// * The memory budget rule: the most bytes one request may allocate, its
//   default and its spelling in OVPOOL_MEMORY_BUDGET.
// * window_table_bytes: what a plan's window tables take, checked against the
//   budget before a plan is built.
// * The instruction-set rule: which core build runs (OVPOOL_ISA).
//
// The types live in namespace ovpool itself, shared by every instruction-set
// build of the core (a PoolSpec built by a dispatcher is handed to whichever
// build runs); the functions live in the build's inline namespace like the
// rest of the core (common.hpp), so that no build runs another's code.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__unix__)
#include <sys/resource.h>
#include <unistd.h>
#endif

#include "common.hpp"

namespace ovpool {

enum class Family : int32_t {
    average = 0,  // sum / divisor
    lp = 1,       // (sum |x|^p)^(1/p), padding contributes zeros
    max = 2,      // maximum values (NaN propagates)
    argmax = 3,   // maximum values and their flat indices
};

// Element types of a call. f16 and bf16 are computed in float32 and rounded
// back to nearest even; i8 and u8 for the max families only.
enum class DType : int32_t { f32 = 0, f64 = 1, f16 = 2, bf16 = 3, i8 = 4, u8 = 5 };

enum class IndexType : int32_t { i32 = 0, i64 = 1 };

enum class AutoPad : int32_t { explicit_pads = 0, same_upper = 1, same_lower = 2, valid = 3 };

// floor: (n_in + pads - ek) / s + 1. ceil: the same rounded up; a last
// window that starts in the right padding is kept (OpenVINO's "ceil").
// ceil_torch: rounded up, but a window that would start in the right
// padding is dropped (PyTorch's ceil_mode, ONNX ceil_mode=1, OpenVINO's
// "ceil_torch"). n_in=5, k=2, s=2, pads 1+1: windows start at -1, 1, 3, 5;
// ceil keeps 4, ceil_torch 3.
enum class Rounding : int32_t { floor = 0, ceil = 1, ceil_torch = 2 };

// The divisor factor an axis contributes to an average.
enum class Divisor : int32_t {
    taps = 0,           // taps inside the input (count_include_pad=0)
    declared_pads = 1,  // taps inside [-pad_begin, n_in + pad_end): positions added by
                        // ceil rounding never count (PyTorch, ONNX Runtime, ONNX's reference)
    ov_include = 2,     // OpenVINO AvgPool counting pads: declared_pads, at least 1 (a
                        // rounding_type=ceil window past the pads sums 0 and gives 0)
    ov_exclude = 3,     // OpenVINO exclude-pad: taps; an empty window that starts at or past
                        // the end divides by n_in - start (0/0 = NaN, then 0/negative = -0)
};

// One axis of a pool as a front door describes it: a fixed window (kernel,
// stride, dilation, pads already resolved by axis_output_size) or adaptive
// bins (adaptive set: only n_in and n_out count).
struct AxisSpec {
    int64_t n_in = 1, n_out = 1;
    bool adaptive = false;
    int64_t kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
    Divisor divisor = Divisor::taps;
};

// A pool call as a front door has validated it.
struct PoolSpec {
    Family family = Family::average;
    DType dtype = DType::f32;
    int64_t n = 1, c = 1;  // leading dims: the planes are their product
    int n_spatial = 2;     // 1, 2 or 3
    AxisSpec axes[3];      // the first n_spatial are used
    double p = 2.0;        // Lp
    // argmax: index element type, and how indices count. Plane q numbers its
    // elements from (q % planes_per_index_space) * plane size: 1 gives indices
    // within each (n, c) plane (AdaptiveMaxPool, PyTorch, OpenVINO axis 2),
    // n * c over the whole tensor (ONNX, OpenVINO axis 0), c OpenVINO's axis 1.
    // column_major: ONNX storage_order=1. index_modulo > 0 reduces each index
    // (OpenVINO MaxPool-8 with an axis inside the spatial dims).
    IndexType index_type = IndexType::i64;
    int64_t planes_per_index_space = 1;
    bool column_major = false;
    int64_t index_modulo = 0;
};

namespace limits {
// The most elements of any array, and the largest size of any axis, kernel,
// stride, pad or output size ovpool accepts (2^40: already 4 TiB of float32):
// sizes past it are a mistake or hostile, and every product of two of them
// still fits in int64.
constexpr int64_t kMaxElements = int64_t(1) << 40;
// A dilated kernel may reach 4 kMaxElements (a window tap past the input is
// padding; the tables hold positions, not taps).
constexpr int64_t kMaxDilatedKernel = 4 * kMaxElements;
// The memory budget's floor and its share of the usable memory (see
// default_budget).
constexpr int64_t kMinDefaultBudget = int64_t(256) << 20;
constexpr int64_t kBudgetFraction = 4;
// Bytes of a plan's window tables per output position of an axis, and per
// output position of the last axis on top (plan.hpp: a (first, taps,
// divisor) row of int64 per axis; on W the divisor factors in the compute
// type and the list of windows without a tap).
constexpr int64_t kTableBytesPerOutput = 24;
constexpr int64_t kTableBytesPerLastOutput = 16;

// The largest kernel, stride, dilation or pad the extension leaves to native
// OpenVINO: its CPU plugin (2026.4.1) crashes (SIGFPE) on a stride of 2^32,
// stalls or crashes on a kernel of 2^31 and refuses to compile a dilation or
// kernel of 2^32, where ovpool's ops, whose windows are clipped to the input,
// compute; 65536 compiled and ran in each. The conversions and the Python
// policy (patch_model) both read it.
constexpr int64_t kNativeLargestWindow = 65536;

// Limits of the kernels themselves.
// Floats of per-thread scratch the narrow-bin adaptive kernel may take.
constexpr int64_t kNarrowScratch = 65536;
// Window rows (over all depth slices) that the (row << 4) + column keys of
// the bin argmax hold in int32.
constexpr int64_t kRankKeyRows = int64_t(1) << 27;
// 16-bit elements widened at a time by the global and tiling pools.
constexpr int64_t kHalfChunk = 4096;
// Planes a work unit of the float32/float64/8-bit global pools takes at most.
constexpr int64_t kGlobalGroup = 64;
// Window rows of the run path's windows at most (its row offsets).
constexpr int64_t kRunRows = 16;
}  // namespace limits

// How OVPOOL_MEMORY_BUDGET and set_memory_budget spell a size.
constexpr const char *kBudgetSpelling =
    "bytes, or a number with K, M, G or T, or a percentage such as '10%'";

// Which build of the core runs: OVPOOL_ISA's values.
enum class Isa : int32_t { baseline = 0, x86_64_v3 = 1 };

struct IsaChoice {
    Isa isa = Isa::baseline;
    std::string error;  // a bad OVPOOL_ISA, or a build this CPU cannot run
};

}  // namespace ovpool

OVPOOL_BEGIN

inline size_t dtype_size(DType t) {
    switch (t) {
        case DType::f64:
            return 8;
        case DType::f16:
        case DType::bf16:
            return 2;
        case DType::i8:
        case DType::u8:
            return 1;
        default:
            return 4;
    }
}

inline bool is_half(DType t) {
    return t == DType::f16 || t == DType::bf16;
}

// a * b, or limit when the product would pass it (sizes >= 0).
inline int64_t saturating_mul(int64_t a, int64_t b, int64_t limit = INT64_MAX) {
    if (a <= 0 || b <= 0)
        return 0;
    return a > limit / b ? limit : a * b;
}

inline int64_t saturating_add(int64_t a, int64_t b) {
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

// The elements of a shape of n dims (each >= 0): their product, or -1 when it
// passes limits::kMaxElements (checked factor by factor: nothing overflows).
// A dim of 0 makes it 0 whatever the others.
inline int64_t shape_elements(const int64_t *dims, int n) {
    for (int i = 0; i < n; i++)
        if (dims[i] == 0)
            return 0;
    int64_t product = 1;
    for (int i = 0; i < n; i++) {
        if (dims[i] < 0 || dims[i] > limits::kMaxElements / product)
            return -1;
        product *= dims[i];
    }
    return product;
}

// Bytes of the window tables a plan of these output sizes allocates
// (saturating: an absurd size gives INT64_MAX, which no budget holds).
inline int64_t window_table_bytes(int n_spatial, const int64_t *out_spatial) {
    int64_t bytes = 0;
    for (int a = 0; a < n_spatial; a++)
        bytes = saturating_add(bytes, saturating_mul(std::max<int64_t>(0, out_spatial[a]),
                                                     limits::kTableBytesPerOutput));
    if (n_spatial > 0)
        bytes =
            saturating_add(bytes, saturating_mul(std::max<int64_t>(0, out_spatial[n_spatial - 1]),
                                                 limits::kTableBytesPerLastOutput));
    return bytes;
}

inline int64_t window_table_bytes(const PoolSpec &spec) {
    int64_t out[3] = {1, 1, 1};
    for (int a = 0; a < spec.n_spatial && a < 3; a++)
        out[a] = spec.axes[a].n_out;
    return window_table_bytes(spec.n_spatial, out);
}

// ---------------------------------------------------------------------------
// The memory budget
// ---------------------------------------------------------------------------
//
// Every allocation whose size follows from a caller's numbers (an output
// shape, an output_size, pads, a constant of an IR file, a window table, the
// per-thread scratch) is checked against the budget before it is made: one
// request at a time, not the sum over a call. It bounds what a few bytes of
// arguments or of a model file can make ovpool allocate.
//
// Default: a quarter of the memory this process may use (the smallest of
// the physical memory, the cgroup's limit and RLIMIT_AS), at least 256 MiB.
// A pooling output is rarely larger than its input; a request for more than
// a quarter of the machine beside its input is a mistake or hostile, and
// sizing it from the machine keeps an edge device out of the OOM killer
// without refusing a large batch on a server.

// Bytes this process may use; -1 when none of the limits is known.
inline int64_t usable_memory() {
    int64_t best = -1;
    auto take = [&](int64_t n) {
        if (n > 0)
            best = best < 0 ? n : std::min(best, n);
    };
#if defined(__unix__)
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0)
        take(saturating_mul(static_cast<int64_t>(pages), static_cast<int64_t>(page)));
    for (const char *path :
         {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        if (FILE *f = std::fopen(path, "r")) {
            char text[32] = {0};
            const size_t n = std::fread(text, 1, sizeof text - 1, f);
            std::fclose(f);
            size_t digits = 0;
            while (digits < n && std::isdigit(static_cast<unsigned char>(text[digits])))
                digits++;
            // "max" (no limit) has no digits; 19+ digits is no limit either
            if (digits > 0 && digits < 19 && (digits == n || std::isspace(text[digits])))
                take(std::strtoll(text, nullptr, 10));
        }
    }
    struct rlimit limit;
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        take(static_cast<int64_t>(std::min<rlim_t>(limit.rlim_cur, INT64_MAX)));
#endif
    return best;
}

inline int64_t default_budget(int64_t usable) {
    return usable > 0 ? std::max(limits::kMinDefaultBudget, usable / limits::kBudgetFraction)
                      : int64_t(4) << 30;
}

// Bytes from "1073741824", "512M", "512MiB", "64 KiB", "1.5G", "2gb" or
// "10%" (of `usable`, 16 GiB when unknown); -1 when malformed, -2 for a
// percentage over 100.
inline int64_t parse_budget(const char *text, int64_t usable) {
    std::string s(text ? text : "");
    auto is_space = [](char ch) { return std::isspace(static_cast<unsigned char>(ch)) != 0; };
    while (!s.empty() && is_space(s.back()))
        s.pop_back();
    size_t pos = 0;
    while (pos < s.size() && is_space(s[pos]))
        pos++;
    const size_t start = pos;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])))
        pos++;
    if (pos == start)
        return -1;
    if (pos < s.size() && s[pos] == '.') {
        pos++;
        while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])))
            pos++;
    }
    const double number = std::strtod(s.substr(start, pos - start).c_str(), nullptr);
    while (pos < s.size() && is_space(s[pos]))
        pos++;
    std::string unit = s.substr(pos);
    for (auto &ch : unit)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (unit == "%") {
        if (number > 100)
            return -2;
        const double base = usable > 0 ? static_cast<double>(usable) : double(int64_t(16) << 30);
        return static_cast<int64_t>(base * number / 100);
    }
    double scale = 1;
    size_t rest = 0;
    if (!unit.empty() && std::strchr("kmgt", unit[0]) != nullptr) {
        scale = double(int64_t(1) << (10 * (std::strchr("kmgt", unit[0]) - "kmgt" + 1)));
        rest = 1;
    }
    const std::string suffix = unit.substr(rest);
    if (!(suffix.empty() || suffix == "b" || (rest == 1 && suffix == "ib")))
        return -1;
    const double bytes = number * scale;
    return bytes >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(bytes);
}

// ---------------------------------------------------------------------------
// The instruction-set build
// ---------------------------------------------------------------------------

// True where the CPU (and the OS, which must save the AVX state) runs the
// x86-64-v3 build: AVX, AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE.
inline bool cpu_has_x86_64_v3() {
#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") &&
           __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
           __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("f16c") &&
           __builtin_cpu_supports("movbe") && __builtin_cpu_supports("lzcnt");
#else
    return false;
#endif
}

// OVPOOL_ISA (null or empty: auto) for a program that has the x86-64-v3
// build (have_v3) on this CPU (cpu_v3): auto takes v3 where both are there,
// baseline forces the baseline build, x86-64-v3 insists on v3.
inline IsaChoice choose_isa(const char *env, bool have_v3, bool cpu_v3) {
    IsaChoice choice;
    std::string value = env ? env : "";
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())))
        value.pop_back();
    value.erase(0, std::min(value.size(), value.find_first_not_of(" \t\n\r")));
    for (auto &ch : value)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (value.empty() || value == "auto") {
        choice.isa = have_v3 && cpu_v3 ? Isa::x86_64_v3 : Isa::baseline;
    } else if (value == "baseline") {
        choice.isa = Isa::baseline;
    } else if (value == "x86-64-v3") {
        if (have_v3 && cpu_v3)
            choice.isa = Isa::x86_64_v3;
        else
            choice.error =
                std::string("OVPOOL_ISA=x86-64-v3, but ") +
                (cpu_v3 ? "the x86-64-v3 build is missing" : "this CPU lacks x86-64-v3 features");
    } else {
        choice.error = "OVPOOL_ISA must be auto, baseline or x86-64-v3, got '" +
                       std::string(env ? env : "") + "'";
    }
    return choice;
}

inline const char *isa_name(Isa isa) {
    return isa == Isa::x86_64_v3 ? "x86-64-v3" : "baseline";
}

OVPOOL_END
