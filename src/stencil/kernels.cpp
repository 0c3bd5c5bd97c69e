// A stencil model's CUDA kernels (build.hpp): NVRTC (rtc.hpp) compiles those its shared object's
// launch sites name into cubins, written beside the object with their table; ptxas's lines in
// NVRTC's log give each kernel's resources (`strata show FILE --cuda`). Apart from the host compile:
// NVRTC is a library that runs in this process, the C++ compiler a command.
#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <istream>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "stencil/build.hpp"
#include "stencil/build_parts.hpp"
#include "stencil/codegen.hpp"
#include "stencil/rtc.hpp"
#include "strata/core/error.hpp"

namespace strata::stencil {

namespace {
// How NVRTC's log of a precision's kernels begins in the model's (then "fp32", "fp64", "fp16" or "bf16").
constexpr std::string_view kCudaPart = "the CUDA engines, ";
}  // namespace

namespace detail {

fs::path kernel_table_path(const fs::path& object) { return fs::path(object).replace_extension(".kernels"); }
fs::path kernel_image_path(const fs::path& object, std::size_t n) {
    std::string extension = ".";  // (not "." + std::to_string(n): g++ 12 warns of a false -Wrestrict)
    extension += std::to_string(n) + ".cubin";
    return fs::path(object).replace_extension(extension);
}

#ifdef STRATA_HAVE_CUDA
std::vector<std::string> registered_kernels(void* so) {
    using Names = const std::vector<std::string>* (*)();
    const auto names = reinterpret_cast<Names>(dlsym(so, kKernelNames));
    if (!names) throw Error(std::string("a compiled model does not list its kernels (") + kKernelNames + ")");
    return *names();
}

bool compile_kernels(const Unit& u, void* so, const fs::path& include, const fs::path& source,
                     std::vector<std::pair<std::string, std::string>>& logs) {
    // Programs side by side: a precision's kernels in one, or on a machine of many cores in up to
    // cores / 4 of even size (at least 8 kernels each: each program parses the source again). Any
    // split compiles the same kernels; this one keeps the precisions' logs apart.
    static constexpr const char* kPrecisions[] = {"fp32", "fp64", "fp16", "bf16"};
    std::vector<std::string> by_precision[4];
    for (const std::string& n : registered_kernels(so)) {
        const int p = n.find("strata::bf16") != std::string::npos  ? 3
                      : n.find("strata::f16") != std::string::npos ? 2
                      : n.find("double") != std::string::npos      ? 1
                                                                   : 0;
        by_precision[p].push_back(n);
    }
    const std::size_t per_precision = std::max(1u, std::thread::hardware_concurrency() / 4);
    struct Job {
        int arch, precision;
        std::vector<std::string> kernels;
        std::future<RtcKernels> result;
    };
    std::vector<Job> jobs;
    for (int arch : u.cc.archs)
        for (int p : {0, 1, 2, 3}) {
            const std::vector<std::string>& all = by_precision[p];
            const std::size_t parts = std::clamp<std::size_t>(all.size() / 8, 1, per_precision);
            for (std::size_t n = 0; n < parts; ++n)
                jobs.push_back({arch,
                                p,
                                {all.begin() + std::ptrdiff_t(all.size() * n / parts),
                                 all.begin() + std::ptrdiff_t(all.size() * (n + 1) / parts)},
                                {}});
        }
    for (Job& j : jobs)
        j.result = std::async(std::launch::async, [&u, &include, &source, &j] {
            return rtc_compile(u.source, j.kernels, include.string(), cuda_defines(), j.arch,
                               source.string());
        });
    bool ok = true;
    std::string table;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const RtcKernels k = jobs[i].result.get();
        const std::string precision = kPrecisions[jobs[i].precision];
        char took[96];
        std::snprintf(took, sizeof took, "NVRTC: %zu kernels for sm_%d in %.2f s\n", k.lowered.size(),
                      jobs[i].arch, k.seconds);
        logs.emplace_back(std::string(kCudaPart) + precision, took + k.log);
        if (!k.ok) {
            ok = false;
            continue;
        }
        write_file(kernel_image_path(u.object, i), k.cubin);
        table += "# image " + std::to_string(i) + " sm_" + std::to_string(jobs[i].arch) + " " + precision +
                 " " + hex(fnv1a(k.cubin)) + "\n";
        for (const auto& [name, symbol] : k.lowered)
            table += std::to_string(i) + " " + symbol + " " + name + "\n";
    }
    if (ok) write_file(kernel_table_path(u.object), table);
    return ok;
}
#endif

}  // namespace detail

namespace {
// A kernel's name as ptxas gives it (mangled), demangled and shortened: no return type, no
// parameters, no namespaces ("temporal2d<Kernel<float>, 16, 16, 4, 1>").
std::string kernel_name(const std::string& mangled) {
    int status = 0;
    char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
    std::string s = status == 0 && d ? d : mangled;
    std::free(d);
    if (s.rfind("void ", 0) == 0) s.erase(0, 5);
    int depth = 0;  // the parameters: the first '(' outside the template arguments
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '<') ++depth;
        if (s[i] == '>') --depth;
        if (s[i] == '(' && depth == 0) {
            s.erase(i);
            break;
        }
    }
    std::string out;  // each qualified name's last part
    for (std::size_t i = 0; i < s.size();) {
        std::size_t j = i;
        while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
        if (j > i && s.compare(j, 2, "::") == 0) {
            i = j + 2;
            continue;
        }
        out.append(s, i, std::max(j, i + 1) - i);
        i = std::max(j, i + 1);
    }
    return out;
}
}  // namespace

std::string kernel_table(std::istream& log) {
    // ptxas, per kernel and architecture: "Compiling entry function 'NAME' for 'sm_90'", then
    // "Function properties for NAME", "N bytes stack frame, S bytes spill stores, L bytes spill
    // loads", "Used R registers, ... X bytes smem, ...". The properties of a device function the
    // kernel calls (sin's slow path) may follow: those are not the kernel's.
    struct Row {
        std::string precision, arch, mangled, name;
        long registers = 0, stack = 0, stores = 0, loads = 0, smem = 0;
    };
    std::vector<Row> rows;
    Row* at = nullptr;  // the kernel whose properties the next lines give
    std::string precision;
    auto number_before = [](const std::string& l, const std::string& what) {
        const std::size_t at = l.find(what);
        if (at == std::string::npos) return 0L;
        std::size_t b = at;
        while (b > 0 && l[b - 1] == ' ') --b;
        std::size_t a = b;
        while (a > 0 && std::isdigit(static_cast<unsigned char>(l[a - 1]))) --a;
        return a < b ? std::stol(l.substr(a, b - a)) : 0L;
    };
    for (std::string l; std::getline(log, l);) {
        if (l.rfind("== ", 0) == 0) {
            precision = l.compare(3, kCudaPart.size(), kCudaPart) == 0 ? l.substr(3 + kCudaPart.size()) : "";
        } else if (const std::size_t c = l.find("Compiling entry function '"); c != std::string::npos && !precision.empty()) {
            const std::size_t b = c + 26, e = l.find('\'', b), arch = l.find("for '", e);
            const std::string mangled = l.substr(b, e - b);
            rows.push_back({precision, arch == std::string::npos ? "" : l.substr(arch + 5, l.find('\'', arch + 5) - arch - 5),
                            mangled, kernel_name(mangled)});
            at = nullptr;
        } else if (const std::size_t p = l.find("Function properties for "); p != std::string::npos) {
            at = !rows.empty() && l.substr(p + 24) == rows.back().mangled ? &rows.back() : nullptr;
        } else if (at && l.find("bytes stack frame") != std::string::npos) {
            at->stack = number_before(l, "bytes stack frame");
            at->stores = number_before(l, "bytes spill stores");
            at->loads = number_before(l, "bytes spill loads");
        } else if (at && l.find("Used ") != std::string::npos && l.find(" registers") != std::string::npos) {
            at->registers = number_before(l, "registers");
            at->smem = number_before(l, "bytes smem");
        }
    }
    if (rows.empty()) return "";
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
        return std::tie(a.precision, a.arch, a.name) < std::tie(b.precision, b.arch, b.name);
    });
    std::ostringstream out;
    char line[160];
    std::snprintf(line, sizeof line, "%-5s %-6s %9s %12s %10s %12s  %s\n", "prec", "arch", "registers", "spills (B)",
                  "stack (B)", "shared (B)", "kernel");
    out << line;
    for (const Row& r : rows) {
        const std::string spills = std::to_string(r.stores) + "/" + std::to_string(r.loads);
        std::snprintf(line, sizeof line, "%-5s %-6s %9ld %12s %10ld %12ld  ", r.precision.c_str(), r.arch.c_str(),
                      r.registers, spills.c_str(), r.stack, r.smem);
        out << line << r.name << "\n";
    }
    return out.str();
}

}  // namespace strata::stencil
