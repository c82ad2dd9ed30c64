// The kernel core as the extension drives it.
//
// The ops describe a call in the neutral types below (a Spec mirrors the
// core's PoolSpec field for field); make_plan hands it to the core build
// chosen for this CPU (baseline x86-64 or x86-64-v3, each compiled from
// plan_isa.inc in a translation unit of its own, in the core's inline
// namespace of that build), and run_plan runs the plan's units on OpenVINO's
// own threads (ov::parallel_nt, the TBB arena of the stream that calls
// evaluate), each thread with its own scratch. Every output element is
// written by one unit, so the bits do not depend on the thread count, the
// schedule or the build.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace ovpool_openvino {

// Codes of the core's plan.hpp enums (Family, DType, Divisor).
enum Family : int32_t { kAverage = 0, kLp = 1, kMax = 2, kArgmax = 3 };
enum DType : int32_t { kF32 = 0, kF64 = 1, kF16 = 2, kBF16 = 3, kI8 = 4, kU8 = 5 };
enum DivisorRule : int32_t { kTaps = 0, kDeclaredPads = 1, kOvInclude = 2, kOvExclude = 3 };

struct Axis {
    int64_t n_in = 1, n_out = 1;
    bool adaptive = false;
    int64_t kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
    int32_t divisor = kTaps;

    bool operator==(const Axis &o) const {
        return n_in == o.n_in && n_out == o.n_out && adaptive == o.adaptive && kernel == o.kernel &&
               stride == o.stride && dilation == o.dilation && pad_begin == o.pad_begin &&
               pad_end == o.pad_end && divisor == o.divisor;
    }
};

struct Spec {
    int32_t family = kAverage;
    int32_t dtype = kF32;
    int64_t n = 1, c = 1;
    int n_spatial = 2;
    Axis axes[3];
    double p = 2.0;
    bool index_i64 = true;
    int64_t planes_per_index_space = 1;
    bool column_major = false;
    int64_t index_modulo = 0;

    bool operator==(const Spec &o) const {
        if (!(family == o.family && dtype == o.dtype && n == o.n && c == o.c &&
              n_spatial == o.n_spatial && p == o.p && index_i64 == o.index_i64 &&
              planes_per_index_space == o.planes_per_index_space &&
              column_major == o.column_major && index_modulo == o.index_modulo))
            return false;
        for (int a = 0; a < n_spatial; a++)
            if (!(axes[a] == o.axes[a]))
                return false;
        return true;
    }
};

// A call's threads and work units (the core's Schedule).
struct Units {
    int threads = 1;
    int64_t n_units = 0, rows_per_block = 1, blocks_per_plane = 1, group = 1, chunk = 1;
};

// The plan of one call in one core build: immutable, shared by the threads
// and the streams that run it.
class Plan {
  public:
    virtual ~Plan() = default;
    virtual bool empty() const = 0;             // no unit to run
    virtual bool widen_input() const = 0;       // 16-bit input: the caller widens it to f32 first
    virtual int64_t scratch_bytes() const = 0;  // per thread, 64-byte aligned
    // The threads and units of a call on at most max_threads threads (the
    // core's cost model: a small call gets one, the calling thread).
    virtual Units units(int max_threads) const = 0;
    virtual void init_scratch(char *scratch) const = 0;
    // Units [first, last) of a call on the arrays (x and out in the plan's
    // compute type, f16/bf16 as raw bits; indices of the spec's index type).
    virtual void run(const void *x, void *out, void *indices, const Units &units, int64_t first,
                     int64_t last, char *scratch) const = 0;
    virtual const char *path() const = 0;
    // What a call on at most max_threads threads runs, in words (the core's
    // describe).
    virtual std::string describe(int max_threads) const = 0;
    // 16-bit floats (raw bits) <-> float32, rounded to nearest even: for a
    // plan whose input the caller widens (widen_input)
    virtual void widen(const uint16_t *src, float *dst, int64_t n, bool bf16) const = 0;
    virtual void narrow(const float *src, uint16_t *dst, int64_t n, bool bf16) const = 0;
};

// Bytes of the window tables a plan of `spec` allocates (checked against the
// memory budget before the plan is built).
int64_t table_bytes(const Spec &spec);

// The plan of `spec` in the core build chosen for this CPU; throws
// std::invalid_argument / std::length_error as the core's make_plan does.
std::shared_ptr<const Plan> make_plan(const Spec &spec);

// "baseline" or "x86-64-v3": the core build make_plan uses (OVPOOL_ISA in the
// environment forces one, as it does for the Python package).
const char *isa_name();

// Run every unit of `plan` on OpenVINO's threads. `op` names the node in
// errors (memory budget, allocation failure).
void run_plan(const Plan &plan, const void *x, void *out, void *indices, const std::string &op);

// The memory budget (budget.cpp): the most bytes one request of the
// extension may allocate; check_budget throws an ov::Exception naming the
// op, what it needed and the budget.
int64_t memory_budget();
void check_budget(const std::string &op, const std::string &what, int64_t bytes);

}  // namespace ovpool_openvino
