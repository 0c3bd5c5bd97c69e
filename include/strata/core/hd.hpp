#pragma once
// STRATA_HD marks code that runs on the host and, when compiled by nvcc, on the device:
// the models are written once and used by every backend.
#if defined(__CUDACC__)
#define STRATA_HD __host__ __device__ __forceinline__
#else
#define STRATA_HD inline
#endif
