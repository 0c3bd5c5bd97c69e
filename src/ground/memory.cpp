#include "strata/core/memory.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "strata/core/error.hpp"

namespace strata {
namespace {

// A number from a cgroup file, or none ("max", missing, unreadable).
std::int64_t cgroup_value(const char* path) {
    std::ifstream f(path);
    std::int64_t v = -1;
    if (!(f >> v)) return -1;
    return v;
}

}  // namespace

std::int64_t available_host_bytes() {
    std::int64_t available = -1;
    std::ifstream meminfo("/proc/meminfo");
    for (std::string key; meminfo >> key;) {
        std::int64_t kib = 0;
        meminfo >> kib;
        if (key == "MemAvailable:") {
            available = kib * 1024;
            break;
        }
        meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    }
    if (available < 0) available = std::int64_t(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGESIZE);
    // cgroup v2 (v1's files differ; a v1-only host is checked against MemAvailable alone).
    const std::int64_t limit = cgroup_value("/sys/fs/cgroup/memory.max"),
                       used = cgroup_value("/sys/fs/cgroup/memory.current");
    if (limit > 0 && used >= 0) available = std::min(available, std::max<std::int64_t>(0, limit - used));
    return available;
}

std::int64_t peak_resident_bytes() {
    std::ifstream status("/proc/self/status");
    for (std::string key; status >> key;) {
        if (key == "VmHWM:") {
            std::int64_t kib = -1;
            return status >> kib ? kib * 1024 : -1;
        }
        status.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    }
    return -1;
}

std::string format_bytes(double bytes) {
    static const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    int u = 0;
    for (; bytes >= 1000 && u < 5; ++u) bytes /= 1000;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g %s", bytes, units[u]);
    return buf;
}

std::string memory_refusal(const std::string& what, std::int64_t bytes, std::int64_t available,
                           const std::string& where, const std::string& hint) {
    return what + ": " + format_bytes(double(bytes)) + " of " + where + " needed, " +
           format_bytes(double(available)) + " available" + (hint.empty() ? "" : " (" + hint + ")");
}

void require_host_memory(std::int64_t bytes, const std::string& what, const std::string& hint) {
    const std::int64_t available = available_host_bytes();
    if (bytes > available)
        throw UsageError(memory_refusal(what, bytes, available, "host memory", hint));
}

}  // namespace strata
