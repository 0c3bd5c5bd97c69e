#pragma once
// A stencil model's CUDA kernels compiled by NVRTC, the CUDA toolkit's run-time compiler (a library:
// no nvcc, no host compiler): the generated model's source after cuda/engine.cuh, whose headers
// leave NVRTC their kernels alone (__CUDACC_RTC__), instantiated at the kernels' name expressions
// (cuda/launch.hpp: what a module's launch sites register).
#include <string>
#include <utility>
#include <vector>

namespace strata::stencil {

struct RtcKernels {
    bool ok = false;                                           // false: the log says why
    std::string cubin;                                         // for the architecture asked
    std::vector<std::pair<std::string, std::string>> lowered;  // each name expression, its symbol
    std::string log;                                           // NVRTC's, warnings included
    double seconds = 0;                                        // the compile's wall time
};

// Compiles `source` for sm_`arch`, with the headers under `include` (the engines' headers as the
// build saw them) and `defines` (-DNAME=VALUE, the build's for its CUDA units), instantiating the
// kernel of each name expression in `names`, with ptxas's resource lines in the log. The log names
// the source's lines as `source_name`'s (the generated file the cache keeps). A program that
// does not compile is `ok` false, the log saying why; Error when NVRTC itself fails.
RtcKernels rtc_compile(const std::string& source, const std::vector<std::string>& names,
                       const std::string& include, const std::vector<std::string>& defines, int arch,
                       const std::string& source_name = "model.cpp");
// The options rtc_compile gives NVRTC, and NVRTC's version ("13.0"): what a cached cubin was
// compiled with.
std::vector<std::string> rtc_options(const std::string& include, const std::vector<std::string>& defines,
                                     int arch);
std::string rtc_version();
// The current GPU's architecture (90 for compute capability 9.0). Error without a GPU.
int device_arch();

}  // namespace strata::stencil
