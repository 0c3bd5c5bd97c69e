#pragma once
#include <iosfwd>

namespace strata::app {
// `strata info`: the build (compiler, CUDA targets, OpenMP) and the devices this process sees.
void print_info(std::ostream& out);
// `strata probe`: measures the current GPU and caches the result for the reports.
void run_probe_command(std::ostream& out);
}  // namespace strata::app
