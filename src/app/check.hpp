#pragma once
// `strata check MODEL`: every strategy of a backend against the CPU reference (check.cpp).
#include <iosfwd>
#include <string>
#include <vector>

#include "strata/core/types.hpp"
#include "strata/params.hpp"

namespace strata::app {

struct CheckOptions {
    std::string model;  // any registered model, or a stencil file
    int n = 97;         // the grid: n x (n-2) (x (n-4) in 3D)
    int steps = 10;
    Params params;      // the model's options beyond the grid (heat3d's stencil)
    std::vector<Precision> precisions{Precision::fp32, Precision::fp64};
    Backend backend = Backend::cuda;
    std::vector<std::string> kernels;  // empty: every kernel of the backend
};

// Prints a row per strategy (and depth) and precision; returns 1 when one is out of tolerance.
int run_check(const CheckOptions& o, std::ostream& out);

}  // namespace strata::app
