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

std::shared_ptr<const Plan> make_plan_baseline(const Spec &spec);
#if defined(OVPOOL_HAVE_V3)
std::shared_ptr<const Plan> make_plan_x86_64_v3(const Spec &spec);
#endif

namespace {

// Below this many input + output elements per thread a parallel region
// costs more than it saves (ovpool._threads uses the same threshold).
constexpr int64_t kMinElementsPerThread = int64_t(1) << 14;

bool cpu_has_v3() {
#if defined(OVPOOL_HAVE_V3) && defined(__GNUC__)
    __builtin_cpu_init();
    // the features of -march=x86-64-v3 the kernels use (the OS's saving of
    // the AVX state included: __builtin_cpu_supports checks it)
    return __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") &&
           __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
           __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("f16c") &&
           __builtin_cpu_supports("movbe") && __builtin_cpu_supports("lzcnt");
#else
    return false;
#endif
}

struct Choice {
    bool v3 = false;
    std::string error;  // a bad OVPOOL_ISA: reported by the first plan
};

Choice choose() {
    Choice choice;
    const char *env = std::getenv("OVPOOL_ISA");
    std::string value = env ? env : "";
    for (auto &ch : value)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (value.empty() || value == "auto") {
        choice.v3 = cpu_has_v3();
    } else if (value == "baseline") {
        choice.v3 = false;
    } else if (value == "x86-64-v3") {
        choice.v3 = cpu_has_v3();
        if (!choice.v3)
            choice.error =
                "OVPOOL_ISA=x86-64-v3, but this CPU (or this build of libovpool_openvino) lacks it";
    } else {
        choice.error =
            "OVPOOL_ISA must be auto, baseline or x86-64-v3, got '" + std::string(env) + "'";
    }
    return choice;
}

const Choice &chosen() {
    static const Choice choice = choose();
    return choice;
}

char *allocate(int64_t bytes) {
    if (bytes <= 0)
        return nullptr;
    return static_cast<char *>(std::aligned_alloc(64, static_cast<size_t>((bytes + 63) / 64 * 64)));
}

}  // namespace

const char *isa_name() {
    return chosen().v3 ? "x86-64-v3" : "baseline";
}

int64_t table_bytes(const Spec &spec) {
    // three int64 per output of each axis, plus the float and double divisor
    // rows of the last axis (plan.hpp's Windows and div_w_*)
    int64_t bytes = 0;
    for (int a = 0; a < spec.n_spatial; a++) {
        const int64_t n_out = std::max<int64_t>(0, spec.axes[a].n_out);
        bytes += n_out > (int64_t(1) << 56) / 64 ? (int64_t(1) << 56) : 3 * 8 * n_out;
    }
    if (spec.n_spatial > 0)
        bytes += 12 * std::min<int64_t>(std::max<int64_t>(0, spec.axes[spec.n_spatial - 1].n_out),
                                        int64_t(1) << 50);
    return bytes;
}

std::shared_ptr<const Plan> make_plan(const Spec &spec) {
    const Choice &choice = chosen();
    if (!choice.error.empty())
        OPENVINO_THROW("ovpool: ", choice.error);
#if defined(OVPOOL_HAVE_V3)
    if (choice.v3)
        return make_plan_x86_64_v3(spec);
#endif
    return make_plan_baseline(spec);
}

void run_plan(const Plan &plan, const void *x, void *out, void *indices, const std::string &op) {
    if (plan.empty())
        return;
    // OpenVINO's threads: the concurrency of the TBB arena of the stream that
    // runs this node (INFERENCE_NUM_THREADS / NUM_STREAMS decide it), never
    // more; tiny calls stay on the calling thread
    int64_t n_threads = std::max(1, parallel_get_max_threads());
    n_threads = std::min(n_threads, std::max<int64_t>(1, plan.elements() / kMinElementsPerThread));
    n_threads = std::min(n_threads, std::max<int64_t>(1, plan.work_rows()));
    const int64_t scratch_bytes = plan.scratch_bytes();
    if (scratch_bytes > 0)
        check_budget(op,
                     "per-thread scratch (" + std::to_string(n_threads) + " threads of " +
                         std::to_string(scratch_bytes) + " bytes)",
                     scratch_bytes > INT64_MAX / n_threads ? INT64_MAX : scratch_bytes * n_threads);
    const Units units = plan.units(static_cast<int>(n_threads));
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
