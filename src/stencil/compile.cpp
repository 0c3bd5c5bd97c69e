// The host compile of a stencil file's generated unit (build.hpp): the C++ compiler's commands,
// made from this build's compiler, standard, defines and architectures so that a stencil model is
// compiled as the built-in ones are. The commands are part of a cached model's key, so another
// compiler compiles the file anew.
#include <atomic>
#include <cctype>
#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#ifdef STRATA_HAVE_CUDA
#include "cuda/cuda_engines.hpp"
#endif
#include "stencil/build.hpp"
#include "stencil/build_parts.hpp"
#include "stencil/rtc.hpp"

namespace strata::stencil {

using namespace detail;  // what the four files share (build_parts.hpp)

namespace {
std::atomic<bool> g_cuda_asked{false};  // compile_cuda_engines()
}  // namespace

void compile_cuda_engines() { g_cuda_asked = true; }

#ifdef STRATA_HAVE_CUDA
namespace {
// Whether the generated unit gets its CUDA engines (build.hpp): asked for, or a GPU to run them.
bool with_cuda_engines() {
    if (g_cuda_asked || env("STRATA_STENCIL_CUDA") == "1") return true;
    static const bool gpu = cuda::device_count() > 0;
    return gpu;
}

// The GPU architectures the kernels are compiled for: CMAKE_CUDA_ARCHITECTURES' numbers (90 of
// 90, 90-real, 90-virtual), or where it names none (native, all), the current device's.
std::vector<int> cuda_archs() {
    std::vector<int> archs;
    std::istringstream list(STRATA_CUDA_ARCHS);
    for (std::string a; std::getline(list, a, ',');)
        if (!a.empty() && std::isdigit(static_cast<unsigned char>(a[0]))) archs.push_back(std::stoi(a));
    if (archs.empty()) archs.push_back(device_arch());
    return archs;
}
}  // namespace
#endif

namespace detail {

double start_cuda_driver() {
#ifdef STRATA_HAVE_CUDA
    static std::atomic<bool> started{false};
    if (started.exchange(true)) return 0;
    const auto t0 = std::chrono::steady_clock::now();
    (void)cuda::device_count();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
#else
    return 0;
#endif
}

std::string quoted(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::vector<std::string> cuda_defines() {
#ifdef STRATA_HAVE_CUDA
    return {"-DSTRATA_HAVE_CUDA", "-DSTRATA_CUDA_ARCHS=\"" STRATA_CUDA_ARCHS "\"",
#ifdef STRATA_CUDA_TMA
            "-DSTRATA_CUDA_TMA"
#endif
    };
#else
    return {};
#endif
}

Compiler compiler() {
    Compiler c;
    const std::string cxx = env("STRATA_CXX").empty() ? STRATA_STENCIL_CXX : env("STRATA_CXX");
    const std::string common = " -std=c++20 -DNDEBUG -DSTRATA_VERSION='\"" STRATA_VERSION "\"' -I@INCLUDE@";
    const std::string host = " -fPIC -fopenmp -fvisibility=hidden -ffp-contract=off";
#ifdef STRATA_HAVE_CUDA
    if (with_cuda_engines()) {
        c.cuda = true;
        std::string defs, cuda_includes;  // (the toolkit's headers: cuda_runtime.h)
        for (const std::string& d : cuda_defines())
            defs += " " + (d.find('"') == std::string::npos ? d : quoted(d));
        std::istringstream dirs(STRATA_STENCIL_CUDA_INCLUDE);
        for (std::string d; std::getline(dirs, d, ':');) cuda_includes += " -I" + quoted(std::as_const(d));
        c.parts.push_back(
            {quoted(cxx) + common + defs + " -O3" + host +
                 " -DSTRATA_STENCIL_MAIN -DSTRATA_STENCIL_CPU_HALF_APART -x c++ -c @IN@ -o @OUT@.0.o",
             "the registration and the CPU engines, fp32 and fp64"});
        const std::pair<const char*, const char*> cuda_parts[] = {
            {"F32", "fp32"}, {"F64", "fp64"}, {"F16", "fp16"}, {"BF16", "bf16"}};
        for (std::size_t n = 0; n < std::size(cuda_parts); ++n)
            c.parts.push_back({quoted(cxx) + common + defs + cuda_includes +
                                   " -DSTRATA_RTC_HOST -DSTRATA_STENCIL_CUDA_" + cuda_parts[n].first +
                                   " -O1" + host + " -Wno-psabi -x c++ -c @IN@ -o @OUT@." +
                                   std::to_string(n + 1) + ".o",
                               std::string("the host side of the CUDA engines, ") + cuda_parts[n].second});
        c.parts.push_back({quoted(cxx) + common + defs + " -O3" + host +
                               " -DSTRATA_STENCIL_CPU_HALF -x c++ -c @IN@ -o @OUT@.5.o",
                           "the CPU engines, fp16 and bf16"});
        // The program's CUDA runtime (libcudart.so, loaded already): kernels are launched through it.
        c.link = quoted(cxx) +
                 " -shared -fopenmp @OUT@.0.o @OUT@.1.o @OUT@.2.o @OUT@.3.o @OUT@.4.o @OUT@.5.o -L" +
                 quoted(STRATA_STENCIL_CUDA_LIB) + " -lcudart -o @OUT@";
        c.archs = cuda_archs();
        c.nvrtc = "NVRTC " + rtc_version() + " (sm_";
        for (std::size_t i = 0; i < c.archs.size(); ++i)
            c.nvrtc += (i ? ", sm_" : "") + std::to_string(c.archs[i]);
        c.nvrtc += "):";
        for (const std::string& o : rtc_options("@INCLUDE@", cuda_defines(), c.archs.front()))
            c.nvrtc += " " + o;
        return c;
    }
    // Without them, the CPU engines alone; their cuda backend says why it has none (register.hpp).
    const std::string left_out = " -DSTRATA_CUDA_ENGINES_LEFT_OUT";
#else
    const std::string left_out;
#endif
    c.link = quoted(cxx) + common + left_out + " -O3" + host +
             " -DSTRATA_STENCIL_MAIN -shared -x c++ @IN@ -o @OUT@";
    return c;
}

std::string substitute(std::string s, const std::string& key, const std::string& value) {
    for (std::size_t p; (p = s.find(key)) != std::string::npos;) s.replace(p, key.size(), value);
    return s;
}

std::string first_error(const fs::path& log) {
    std::ifstream f(log);
    std::string first;
    for (std::string l; std::getline(f, l);) {
        if (l.rfind("== ", 0) == 0) continue;
        if (l.find("error") != std::string::npos) return l;
        if (first.empty()) first = l;
    }
    return first.empty() ? "(an empty log)" : first;
}

}  // namespace detail

std::string show(const std::string& path) {
    const Unit u = prepare(path);
    return u.source + "\n// Compiled at the first run with\n//   " + u.cc.text() + "\n// into " + u.object.string() +
           "\n";
}

}  // namespace strata::stencil
