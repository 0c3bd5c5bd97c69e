#include "strata/core/types.hpp"

#include <string>

#include "strata/core/error.hpp"

namespace strata {

std::string_view to_string(Precision p) {
    switch (p) {
        case Precision::fp32: return "fp32";
        case Precision::fp64: return "fp64";
        case Precision::fp16: return "fp16";
        case Precision::bf16: return "bf16";
    }
    return "?";
}

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
    if (s == "fp16" || s == "half") return Precision::fp16;
    if (s == "bf16" || s == "bfloat16") return Precision::bf16;
    throw UsageError("unknown precision '" + std::string(s) +
                     "' (expected fp32, fp64, or fp16 / bf16: 16-bit storage with fp32 arithmetic)");
}

Backend parse_backend(std::string_view s) {
    if (s == "cpu") return Backend::cpu;
    if (s == "omp") return Backend::omp;
    if (s == "cuda") return Backend::cuda;
    throw UsageError("unknown backend '" + std::string(s) + "' (expected cpu, omp or cuda)");
}

}  // namespace strata
