#pragma once
#include <iosfwd>

namespace strata::app {
// `strata info`: the build (compiler, CUDA targets, OpenMP) and the devices this process sees.
void print_info(std::ostream& out);
}  // namespace strata::app
