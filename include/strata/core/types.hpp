#pragma once
#include <string>
#include <string_view>

#include "strata/core/extent.hpp"

namespace strata {

enum class Precision { fp32, fp64 };
enum class Backend { cpu, omp, cuda };

std::string_view to_string(Precision p);
std::string_view to_string(Backend b);
Precision parse_precision(std::string_view s);  // throws UsageError
Backend parse_backend(std::string_view s);      // throws UsageError

template <class T> constexpr Precision precision_of();
template <> constexpr Precision precision_of<float>() { return Precision::fp32; }
template <> constexpr Precision precision_of<double>() { return Precision::fp64; }

}  // namespace strata
