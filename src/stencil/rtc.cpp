#include "stencil/rtc.hpp"

#include <nvrtc.h>

#include <chrono>
#include <memory>
#include <set>

#include "cuda/check.hpp"
#include "strata/core/error.hpp"

namespace strata::stencil {

namespace {

void check(nvrtcResult r, const char* call, const std::string& log = "") {
    if (r != NVRTC_SUCCESS)
        throw Error(std::string("NVRTC error ") + nvrtcGetErrorString(r) + " in " + call +
                    (log.empty() ? "" : ":\n" + log));
}
#define STRATA_NVRTC_CHECK(call, ...) check(call, #call __VA_OPT__(, ) __VA_ARGS__)

struct ProgramDeleter {
    void operator()(nvrtcProgram p) const { nvrtcDestroyProgram(&p); }
};

}  // namespace

std::vector<std::string> rtc_options(const std::string& include, const std::vector<std::string>& defines,
                                     int arch) {
    // nvcc's defaults for the device code (fused multiply-adds, IEEE division and square root, no
    // flush to zero) are NVRTC's too, so the kernels compute the bits nvcc's would. -default-device:
    // the headers' unannotated helpers (constexpr sizes, Extent's) are the device's here, where
    // nothing is the host's. ptxas's -v: each kernel's registers, spills and shared memory in the
    // log (`strata show FILE --cuda`).
    std::vector<std::string> options = {"-std=c++20",         "-DNDEBUG",
                                        "-default-device",    "--gpu-architecture=sm_" + std::to_string(arch),
                                        "--ptxas-options=-v", "-I" + include};
    options.insert(options.end(), defines.begin(), defines.end());
    return options;
}

std::string rtc_version() {
    int major = 0, minor = 0;
    STRATA_NVRTC_CHECK(nvrtcVersion(&major, &minor));
    return std::to_string(major) + "." + std::to_string(minor);
}

int device_arch() {
    int device = 0, major = 0, minor = 0;
    STRATA_CUDA_CHECK(cudaGetDevice(&device));
    STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    return major * 10 + minor;
}

RtcKernels rtc_compile(const std::string& source, const std::vector<std::string>& names,
                       const std::string& include, const std::vector<std::string>& defines, int arch,
                       const std::string& source_name) {
    const auto start = std::chrono::steady_clock::now();
    // The kernels' templates first: the model's types are template arguments, met at the end. Then
    // the source, its lines counted as the file's, so that an error names the generated line.
    std::string quoted_name;
    for (char c : source_name)
        quoted_name += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    const std::string unit = "#include \"cuda/engine.cuh\"\n#line 1 \"" + quoted_name + "\"\n" + source;
    nvrtcProgram raw = nullptr;
    STRATA_NVRTC_CHECK(nvrtcCreateProgram(&raw, unit.c_str(), source_name.c_str(), 0, nullptr, nullptr));
    const std::unique_ptr<_nvrtcProgram, ProgramDeleter> program(raw);
    // A kernel launched from two sites is registered twice; NVRTC takes each expression once.
    const std::set<std::string> unique(names.begin(), names.end());
    for (const std::string& n : unique) STRATA_NVRTC_CHECK(nvrtcAddNameExpression(raw, n.c_str()));

    const std::vector<std::string> options = rtc_options(include, defines, arch);
    std::vector<const char*> argv;
    for (const std::string& o : options) argv.push_back(o.c_str());

    const nvrtcResult compiled = nvrtcCompileProgram(raw, int(argv.size()), argv.data());
    RtcKernels out;
    std::size_t size = 0;
    STRATA_NVRTC_CHECK(nvrtcGetProgramLogSize(raw, &size));
    out.log.resize(size);
    STRATA_NVRTC_CHECK(nvrtcGetProgramLog(raw, out.log.data()));
    while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (compiled == NVRTC_ERROR_COMPILATION) return out;
    STRATA_NVRTC_CHECK(compiled, out.log);

    STRATA_NVRTC_CHECK(nvrtcGetCUBINSize(raw, &size));
    out.cubin.resize(size);
    STRATA_NVRTC_CHECK(nvrtcGetCUBIN(raw, out.cubin.data()));
    for (const std::string& n : unique) {
        const char* symbol = nullptr;
        STRATA_NVRTC_CHECK(nvrtcGetLoweredName(raw, n.c_str(), &symbol));
        out.lowered.emplace_back(n, symbol);
    }
    out.ok = true;
    return out;
}

}  // namespace strata::stencil
