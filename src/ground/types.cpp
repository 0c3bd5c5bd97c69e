#include "strata/core/types.hpp"

#include <string>

#include "strata/core/error.hpp"

namespace strata {

std::string_view to_string(Precision p) { return p == Precision::fp32 ? "fp32" : "fp64"; }

std::string_view to_string(Backend b) {
    switch (b) {
        case Backend::cpu: return "cpu";
        case Backend::omp: return "omp";
        case Backend::cuda: return "cuda";
    }
    return "?";
}

Precision parse_precision(std::string_view s) {
    if (s == "fp32" || s == "float") return Precision::fp32;
    if (s == "fp64" || s == "double") return Precision::fp64;
    throw UsageError("unknown precision '" + std::string(s) + "' (expected fp32 or fp64)");
}

Backend parse_backend(std::string_view s) {
    if (s == "cpu") return Backend::cpu;
    if (s == "omp") return Backend::omp;
    if (s == "cuda") return Backend::cuda;
    throw UsageError("unknown backend '" + std::string(s) + "' (expected cpu, omp or cuda)");
}

}  // namespace strata
