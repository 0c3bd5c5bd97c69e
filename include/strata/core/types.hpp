#pragma once
#include <string>
#include <string_view>
#include <type_traits>

#include "strata/core/extent.hpp"
#include "strata/core/half.hpp"

namespace strata {

// What a field's values are stored in; the arithmetic is fp32 for the 16-bit ones (half.hpp).
enum class Precision { fp32, fp64, fp16, bf16 };
enum class Backend { cpu, omp, cuda };

std::string_view to_string(Precision p);
std::string_view to_string(Backend b);
Precision parse_precision(std::string_view s);  // throws UsageError
Backend parse_backend(std::string_view s);      // throws UsageError

template <class T> constexpr Precision precision_of();
template <> constexpr Precision precision_of<float>() { return Precision::fp32; }
template <> constexpr Precision precision_of<double>() { return Precision::fp64; }
template <>
constexpr Precision precision_of<f16>() {
    return Precision::fp16;
}
template <>
constexpr Precision precision_of<bf16>() {
    return Precision::bf16;
}

inline int bytes_of(Precision p) { return p == Precision::fp64 ? 8 : p == Precision::fp32 ? 4 : 2; }
inline bool is_half(Precision p) { return p == Precision::fp16 || p == Precision::bf16; }

// Calls f(std::type_identity<T>{}) with the storage type T of precision p.
template <class F>
decltype(auto) with_precision(Precision p, F&& f) {
    switch (p) {
        case Precision::fp32: return f(std::type_identity<float>{});
        case Precision::fp64: return f(std::type_identity<double>{});
        case Precision::fp16: return f(std::type_identity<f16>{});
        case Precision::bf16: break;
    }
    return f(std::type_identity<bf16>{});
}

}  // namespace strata
