#include "strata/core/memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include "strata/core/error.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

// A number of bytes from a cgroup file; none (-1) for "max", a missing or unreadable file, or v1's
// "no limit" (the largest multiple of the page size below 2^63).
std::int64_t cgroup_value(const fs::path& path) {
    std::ifstream f(path);
    std::int64_t v = -1;
    if (!(f >> v) || v >= (std::int64_t(1) << 62)) return -1;
    return v;
}

// A counter of a cgroup's memory.stat ("file 123"), or 0.
std::int64_t cgroup_stat(const fs::path& path, const std::string& name) {
    std::ifstream f(path);
    for (std::string key; f >> key;) {
        std::int64_t v = 0;
        if (!(f >> v)) return 0;
        if (key == name) return v;
    }
    return 0;
}

// A field of /proc/self/status or /proc/meminfo ("VmSize:   123 kB") in bytes, or -1.
std::int64_t kib_field(const char* path, const std::string& field) {
    std::ifstream f(path);
    for (std::string key; f >> key;) {
        if (key == field) {
            std::int64_t kib = -1;
            return f >> kib ? kib * 1024 : -1;
        }
        f.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    }
    return -1;
}

// What the process's own address-space limit leaves it (ulimit -v: the kernel checks it against
// VmSize), or -1 where none is set. (Not ulimit -d: before Linux 4.7 it bounds brk alone, and
// VmData counts reservations that take no memory, a CUDA driver's among them.)
std::int64_t rlimit_headroom() {
    rlimit r{};
    if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY ||
        r.rlim_cur >= rlim_t(std::numeric_limits<std::int64_t>::max()))
        return -1;
    const std::int64_t used = kib_field("/proc/self/status", "VmSize:");
    return used < 0 ? -1 : std::max<std::int64_t>(0, std::int64_t(r.rlim_cur) - used);
}

}  // namespace

std::int64_t cgroup_headroom(const std::string& root, const std::string& self_cgroup) {
    std::int64_t least = -1;
    // The process's cgroup and each above it up to the mount: a job's limit is often its parent's
    // (a batch system's step inside its job). A level whose files cannot be read counts for nothing.
    // The usage less the page cache the kernel can drop (the files' pages but shared memory's, as
    // MemAvailable counts them): files a job wrote or read before must not refuse a run that fits.
    // A path outside the cgroup namespace's root ("/../x") names no cgroup seen here: none counts.
    auto walk = [&](const fs::path& mount, const std::string& path, const char* limit_file,
                    const char* usage_file, const char* file_pages, const char* shmem_pages) {
        fs::path at = mount;
        std::vector<fs::path> levels{at};
        for (const fs::path& part : fs::path(path).relative_path()) {
            if (part == "..") return;
            levels.push_back(at /= part);
        }
        for (const fs::path& level : levels) {
            const std::int64_t limit = cgroup_value(level / limit_file),
                               usage = cgroup_value(level / usage_file);
            if (limit < 0 || usage < 0) continue;
            const fs::path stat = level / "memory.stat";
            const std::int64_t cache =
                std::max<std::int64_t>(0, cgroup_stat(stat, file_pages) - cgroup_stat(stat, shmem_pages));
            const std::int64_t left =
                std::max<std::int64_t>(0, limit - std::max<std::int64_t>(0, usage - cache));
            least = least < 0 ? left : std::min(least, left);
        }
    };
    std::istringstream lines(self_cgroup);
    for (std::string line; std::getline(lines, line);) {
        // "ID:CONTROLLERS:PATH": v2's unified hierarchy is "0::PATH", v1's memory controller is a
        // line whose controllers include "memory".
        const std::size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos) continue;
        const std::string id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1),
                          path = line.substr(b + 1);
        if (id == "0" && controllers.empty()) {
            walk(fs::path(root), path, "memory.max", "memory.current", "file", "shmem");
        } else {
            std::istringstream names(controllers);
            for (std::string n; std::getline(names, n, ',');)
                if (n == "memory")
                    walk(fs::path(root) / controllers, path, "memory.limit_in_bytes", "memory.usage_in_bytes",
                         "total_cache", "total_shmem");
        }
    }
    return least;
}

namespace {

// $STRATA_NODE_MEMORY in bytes ("64G", "1500M", "2000000000"), or -1 where it is not set.
std::int64_t assigned_bytes() {
    const char* v = std::getenv("STRATA_NODE_MEMORY");
    if (!v || !*v) return -1;
    char* end = nullptr;
    const double n = std::strtod(v, &end);
    std::string unit(end);
    if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
    const std::string units = "KMGT";
    const std::size_t u =
        unit.size() == 1 ? units.find(char(std::toupper(unsigned(unit[0])))) : std::string::npos;
    if (end == v || !(n > 0) || (!unit.empty() && u == std::string::npos))
        throw UsageError("$STRATA_NODE_MEMORY is '" + std::string(v) +
                         "': give the bytes the run may take on each node, e.g. 64G or 1500M");
    return std::int64_t(n * std::pow(1000.0, unit.empty() ? 0 : double(u + 1)));
}

struct NodeShare {
    int ranks = 1;
    std::int64_t bytes = -1;    // this rank's share when it was taken
    std::int64_t resident = 0;  // this process's resident set then
};
NodeShare g_share;

}  // namespace

HostMemory host_memory() {
    HostMemory m;
    m.free = kib_field("/proc/meminfo", "MemAvailable:");
    if (m.free < 0) m.free = std::int64_t(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGESIZE);
    std::ifstream self("/proc/self/cgroup");
    std::ostringstream text;
    text << self.rdbuf();
    m.cgroup = cgroup_headroom("/sys/fs/cgroup", text.str());
    m.assigned = assigned_bytes();
    m.limits = rlimit_headroom();
    if (g_share.bytes >= 0) {
        const std::int64_t grown =
            std::max<std::int64_t>(0, kib_field("/proc/self/status", "VmRSS:") - g_share.resident);
        m.share = std::max<std::int64_t>(0, g_share.bytes - grown);
        m.sharing = g_share.ranks;
    }
    return m;
}

std::int64_t HostMemory::available() const {
    std::int64_t a = share >= 0 ? share : free;
    auto cap = [&a](std::int64_t c) {
        if (c >= 0) a = std::min(a, c);
    };
    cap(limits);
    if (share < 0) cap(cgroup), cap(assigned);  // (with a share, the node's: counted in it)
    return a;
}

void share_host_memory(int ranks_on_node) {
    if (ranks_on_node <= 1) return;
    g_share = {};
    HostMemory node = host_memory();
    node.limits = -1;  // (the node's: each rank's own limit stays its own)
    g_share = {ranks_on_node, node.available() / ranks_on_node,
               std::max<std::int64_t>(0, kib_field("/proc/self/status", "VmRSS:"))};
}

std::int64_t available_host_bytes() { return host_memory().available(); }

std::int64_t peak_resident_bytes() { return kib_field("/proc/self/status", "VmHWM:"); }

std::string format_bytes(double bytes) {
    static const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    int u = 0;
    for (; bytes >= 999.5 && u < 5; ++u) bytes /= 1000;  // (999.6 MB is "1 GB", not "1e+03 MB")
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
    const HostMemory m = host_memory();
    const std::int64_t available = m.available();
    // (Said where the share is what refuses, not the process's own limit.)
    const bool shared = m.share >= 0 && available == m.share;
    if (bytes > available)
        throw UsageError(memory_refusal(what, bytes, available, "host memory",
                                        shared ? "this rank's share: the node's memory is its " +
                                                     std::to_string(m.sharing) + " ranks'" +
                                                     (hint.empty() ? "" : "; " + hint)
                                               : hint));
}

}  // namespace strata
