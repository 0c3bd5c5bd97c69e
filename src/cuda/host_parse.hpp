#pragma once
// What the host compiler needs to parse the kernels' headers when it compiles an engine's host
// side alone (STRATA_RTC_HOST: a stencil file's engines, whose kernels NVRTC compiles; stencil/compile.cpp).
// It only parses the kernels: their templates are never instantiated there (a launch site names a
// kernel by its type and its name, cuda/launch.hpp), so the device's builtins need declaring, not
// defining. cuda_runtime.h gives the rest: the execution-space keywords as nothing, dim3, uint3.
#include <cuda_runtime.h>

#define __launch_bounds__(...)

extern const uint3 threadIdx, blockIdx;
extern const dim3 blockDim, gridDim;
void __syncthreads();
void __syncwarp(unsigned mask = 0xffffffffu);
int min(int, int);
int max(int, int);
std::size_t __cvta_generic_to_shared(const void*);
unsigned __reduce_max_sync(unsigned mask, unsigned value);
unsigned __shfl_up_sync(unsigned mask, unsigned value, unsigned delta, int width);
unsigned __shfl_down_sync(unsigned mask, unsigned value, unsigned delta, int width);
