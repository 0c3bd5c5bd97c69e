#pragma once
// A stencil file's model as C++ source (codegen.cpp): the kernel functor every strategy template
// takes, written from the expression trees, and the Problem class around it (stencil/model.hpp).
#include <string>

#include "strata/stencil.hpp"

namespace strata::stencil {

// The source of the model unit: compiled with the engines' headers into a shared object whose
// `strata_stencil_model` registers it (load.cpp). `symbol` makes its names unique in a process
// that loads several. A stencil the engines cannot take yet is a UsageError at the line and column
// that asks for it (error_at), saying what can.
std::string generate_model(const Spec& spec, const std::string& symbol);

// The name of the entry point each generated unit exports.
inline constexpr const char* kEntryPoint = "strata_stencil_model";
// And in a CUDA build, the name expressions of the kernels its engines launch (cuda/launch.hpp's
// kernel_names(): `const std::vector<std::string>* ()`), what NVRTC compiles (rtc.hpp), and where
// the loader hands it NVRTC's cubins (set_rtc_kernels: `void (int, const char* const*, const
// std::size_t*, const char*)`).
inline constexpr const char* kKernelNames = "strata_stencil_kernel_names";
inline constexpr const char* kKernelSetter = "strata_stencil_set_kernels";

}  // namespace strata::stencil
