#pragma once
// One way to check CUDA calls: a failure becomes strata::Error naming the call, file and line,
// which the CLI prints as one line and a non-zero exit.
#include <cuda_runtime.h>

#include <string>

#include "strata/core/error.hpp"

namespace strata::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
    throw Error(std::string("CUDA error ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ") in " +
                call + " at " + file + ":" + std::to_string(line));
}

}  // namespace strata::cuda

#define STRATA_CUDA_CHECK(call)                                                                        \
    do {                                                                                               \
        const cudaError_t strata_err_ = (call);                                                        \
        if (strata_err_ != cudaSuccess) ::strata::cuda::throw_cuda_error(strata_err_, #call, __FILE__, __LINE__); \
    } while (0)

// After a kernel launch: launch-configuration errors surface here, not at the next sync.
#define STRATA_CUDA_CHECK_LAUNCH() STRATA_CUDA_CHECK(cudaGetLastError())
