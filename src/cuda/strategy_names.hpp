#pragma once
// The names of the CUDA strategies, in ladder order (kept free of CUDA so plain C++ can list them).
#include <array>
#include <string_view>

namespace strata::cuda {

inline constexpr std::array<std::string_view, 5> kStrategyNames = {"naive", "smem", "planes", "multi2", "multi4"};

}  // namespace strata::cuda
