// The memory budget of the extension: spec.hpp's rule (the Python side's
// too), read once per process. Every allocation whose size follows from a
// model's numbers (an output, a plan's window tables, the per-thread scratch
// times the threads, a widened copy of a 16-bit input) is checked before it
// is made.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernel.hpp"
#include "openvino/core/except.hpp"

namespace ovpool_openvino {
namespace {

struct Budget {
    int64_t bytes = 0;
    std::string error;
};

Budget read_budget() {
    Budget b;
    const int64_t usable = ovpool::usable_memory();
    const char *env = std::getenv("OVPOOL_MEMORY_BUDGET");
    std::string text = env ? env : "";
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        b.bytes = ovpool::default_budget(usable);
        return b;
    }
    b.bytes = ovpool::parse_budget(env, usable);
    if (b.bytes == -2)
        b.error = "OVPOOL_MEMORY_BUDGET '" + text + "': a percentage is 0% to 100%";
    else if (b.bytes < 0)
        b.error =
            "OVPOOL_MEMORY_BUDGET '" + text + "' is not a size (" + ovpool::kBudgetSpelling + ")";
    return b;
}

const Budget &budget() {
    static const Budget b = read_budget();
    return b;
}

std::string human(int64_t bytes) {
    const char *units[] = {"TiB", "GiB", "MiB", "KiB"};
    const int shifts[] = {40, 30, 20, 10};
    for (int k = 0; k < 4; k++) {
        const int64_t size = int64_t(1) << shifts[k];
        if (bytes >= size) {
            char text[32];
            std::snprintf(text, sizeof text, "%.3g %s",
                          static_cast<double>(bytes) / static_cast<double>(size), units[k]);
            return text;
        }
    }
    return std::to_string(bytes) + " bytes";
}

}  // namespace

int64_t memory_budget() {
    const Budget &b = budget();
    if (!b.error.empty())
        OPENVINO_THROW("ovpool: ", b.error);
    return b.bytes;
}

void check_budget(const std::string &op, const std::string &what, int64_t bytes) {
    const Budget &b = budget();
    if (b.error.empty() && bytes <= b.bytes)
        return;
    const int64_t limit = memory_budget();
    OPENVINO_THROW("ovpool ", op, ": ", what, " would need ", bytes, " bytes (", human(bytes),
                   "), more than ovpool's memory budget of ", limit, " bytes (", human(limit),
                   "); raise it with OVPOOL_MEMORY_BUDGET if this is intended");
}

}  // namespace ovpool_openvino
