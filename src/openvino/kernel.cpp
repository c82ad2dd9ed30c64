// The dispatcher and the driver of kernel.hpp: which core build runs, and
// how a plan's units are spread over OpenVINO's threads.
#include "kernel.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "openvino/core/except.hpp"
#include "openvino/core/parallel.hpp"

namespace ovpool_openvino {

std::shared_ptr<const Plan> make_plan_baseline(const PoolSpec &spec);
#if defined(OVPOOL_HAVE_V3)
std::shared_ptr<const Plan> make_plan_x86_64_v3(const PoolSpec &spec);
#endif

namespace {

#if defined(OVPOOL_HAVE_V3)
constexpr bool kHaveV3 = true;
#else
constexpr bool kHaveV3 = false;
#endif

const ovpool::IsaChoice &chosen() {
    static const ovpool::IsaChoice choice =
        ovpool::choose_isa(std::getenv("OVPOOL_ISA"), kHaveV3, ovpool::cpu_has_x86_64_v3());
    return choice;
}

char *allocate(int64_t bytes) {
    if (bytes <= 0)
        return nullptr;
    return static_cast<char *>(std::aligned_alloc(64, static_cast<size_t>((bytes + 63) / 64 * 64)));
}

}  // namespace

const char *isa_name() {
    return ovpool::isa_name(chosen().isa);
}

std::shared_ptr<const Plan> make_plan(const PoolSpec &spec) {
    const ovpool::IsaChoice &choice = chosen();
    if (!choice.error.empty())
        OPENVINO_THROW("ovpool: ", choice.error);
#if defined(OVPOOL_HAVE_V3)
    if (choice.isa == ovpool::Isa::x86_64_v3)
        return make_plan_x86_64_v3(spec);
#endif
    return make_plan_baseline(spec);
}

void run_plan(const Plan &plan, const void *x, void *out, void *indices, const std::string &op) {
    if (plan.empty())
        return;
    // At most OpenVINO's threads: the concurrency of the TBB arena of the
    // stream that runs this node (INFERENCE_NUM_THREADS / NUM_STREAMS decide
    // it); the core's cost model gives a small call one, the calling thread
    const Units units = plan.units(std::max(1, parallel_get_max_threads()));
    const int64_t n_threads = units.threads;
    const int64_t scratch_bytes = plan.scratch_bytes();
    if (scratch_bytes > 0)
        check_budget(op,
                     "per-thread scratch (" + std::to_string(n_threads) + " threads of " +
                         std::to_string(scratch_bytes) + " bytes)",
                     scratch_bytes > INT64_MAX / n_threads ? INT64_MAX : scratch_bytes * n_threads);
    if (n_threads == 1 || units.n_units <= 1) {
        char *scratch = allocate(scratch_bytes);
        if (scratch_bytes > 0 && scratch == nullptr)
            OPENVINO_THROW("ovpool ", op, ": cannot allocate ", scratch_bytes, " bytes of scratch");
        plan.init_scratch(scratch);
        plan.run(x, out, indices, units, 0, units.n_units, scratch);
        std::free(scratch);
        return;
    }
    // units are handed out in chunks from one counter: a thread that starts
    // late (another stream holds a core) leaves its share to the others
    std::atomic<int64_t> next{0};
    ov::parallel_nt(static_cast<int>(n_threads), [&](int, int) {
        char *scratch = allocate(scratch_bytes);
        if (scratch_bytes > 0 && scratch == nullptr)
            return;  // the other threads take the units; checked below
        plan.init_scratch(scratch);
        for (;;) {
            const int64_t first = next.fetch_add(units.chunk);
            if (first >= units.n_units)
                break;
            plan.run(x, out, indices, units, first, std::min(first + units.chunk, units.n_units),
                     scratch);
        }
        std::free(scratch);
    });
    if (next.load() < units.n_units)
        OPENVINO_THROW("ovpool ", op, ": cannot allocate ", scratch_bytes,
                       " bytes of scratch per thread");
}

}  // namespace ovpool_openvino
