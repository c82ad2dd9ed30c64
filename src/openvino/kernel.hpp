// The kernel core as the extension drives it.
//
// The ops describe a call as the core's PoolSpec (spec.hpp, lowered from
// their attributes by lower.hpp); make_plan hands it to the core build
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

#include "ovpool/spec.hpp"

namespace ovpool_openvino {

using ovpool::PoolSpec;

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

// The plan of `spec` in the core build chosen for this CPU; throws
// std::invalid_argument / std::length_error as the core's make_plan does.
std::shared_ptr<const Plan> make_plan(const PoolSpec &spec);

// "baseline" or "x86-64-v3": the core build make_plan uses (spec.hpp's
// choose_isa, the rule of the Python package too: OVPOOL_ISA forces one).
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
