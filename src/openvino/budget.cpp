// The memory budget of the extension: the rule of ovpool's Python side
// (ovpool._limits), read once per process.
//
// Every allocation whose size follows from a model's numbers (a plan's window
// tables, the per-thread scratch times the threads, a widened copy of a
// 16-bit input) is checked before it is made. Default: a quarter of the
// memory this process may use (the smallest of the physical memory, the
// cgroup's limit and RLIMIT_AS), at least 256 MiB; OVPOOL_MEMORY_BUDGET sets
// it as bytes, with a binary suffix (512M, 2GiB, 1.5G), or as a percentage of
// that memory (10%).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>

#include "kernel.hpp"
#include "openvino/core/except.hpp"

namespace ovpool_openvino {
namespace {

constexpr int64_t kMinDefault = int64_t(256) << 20;

int64_t usable_memory() {
    int64_t best = -1;
    auto take = [&](int64_t n) {
        if (n > 0)
            best = best < 0 ? n : std::min(best, n);
    };
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0)
        take(static_cast<int64_t>(pages) * page);
    for (const char *path :
         {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        std::ifstream f(path);
        std::string text;
        if (f >> text && !text.empty() && std::all_of(text.begin(), text.end(), ::isdigit) &&
            text.size() < 19)
            take(std::stoll(text));
    }
    struct rlimit limit;
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        take(static_cast<int64_t>(limit.rlim_cur));
    return best;
}

struct Budget {
    int64_t bytes = 0;
    std::string error;
};

std::string trim(const std::string &s) {
    size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a])))
        a++;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1])))
        b--;
    return s.substr(a, b - a);
}

// "1073741824", "512M", "2GiB", "1.5G", "10%" -> bytes; -1 if malformed.
int64_t parse(const std::string &text, int64_t usable) {
    std::string s = trim(text);
    if (s.empty())
        return -1;
    size_t pos = 0;
    while (pos < s.size() && (std::isdigit(static_cast<unsigned char>(s[pos])) || s[pos] == '.'))
        pos++;
    if (pos == 0 || !std::isdigit(static_cast<unsigned char>(s[0])) ||
        std::count(s.begin(), s.begin() + pos, '.') > 1)
        return -1;
    const double number = std::strtod(s.substr(0, pos).c_str(), nullptr);
    std::string unit = trim(s.substr(pos));
    for (auto &ch : unit)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (unit == "%") {
        if (number > 100)
            return -1;
        return static_cast<int64_t>(
            (usable > 0 ? static_cast<double>(usable) : double(int64_t(16) << 30)) * number / 100);
    }
    double scale = 1;
    if (!unit.empty()) {
        const char prefix = unit[0];
        const std::string rest = unit.substr(1);
        if (rest != "" && rest != "b" && rest != "ib")
            return -1;
        switch (prefix) {
            case 'k':
                scale = double(1 << 10);
                break;
            case 'm':
                scale = double(1 << 20);
                break;
            case 'g':
                scale = double(int64_t(1) << 30);
                break;
            case 't':
                scale = double(int64_t(1) << 40);
                break;
            case 'b':
                if (!rest.empty())
                    return -1;
                break;
            default:
                return -1;
        }
    }
    const double bytes = number * scale;
    return bytes >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(bytes);
}

Budget read_budget() {
    Budget b;
    const int64_t usable = usable_memory();
    const char *env = std::getenv("OVPOOL_MEMORY_BUDGET");
    if (env != nullptr && !trim(env).empty()) {
        b.bytes = parse(env, usable);
        if (b.bytes < 0)
            b.error = "OVPOOL_MEMORY_BUDGET='" + std::string(env) +
                      "' is not a size (bytes, or a number with K, M, G or T, or a percentage such "
                      "as '10%')";
        return b;
    }
    b.bytes = usable > 0 ? std::max(kMinDefault, usable / 4) : int64_t(4) << 30;
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
