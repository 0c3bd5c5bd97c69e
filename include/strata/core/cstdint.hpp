#pragma once
// The standard integer types for headers that kernels include. Under nvcc and the host compiler
// they are the system's; under NVRTC, which compiles a stencil file's kernels at run time without
// the system's headers, they are declared here with the same widths (LP64: long is 64 bits).
#ifdef __CUDACC_RTC__
namespace std {
using int8_t = signed char;
using uint8_t = unsigned char;
using int16_t = short;
using uint16_t = unsigned short;
using int32_t = int;
using uint32_t = unsigned int;
using int64_t = long;
using uint64_t = unsigned long;
using uintptr_t = unsigned long;
using size_t = decltype(sizeof(0));
}  // namespace std
#else
#include <cstddef>
#include <cstdint>
#endif
