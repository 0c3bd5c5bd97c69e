#pragma once
// Helpers shared by the tests: random (never constant) fields, poisoning, field comparison.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "strata/core/field.hpp"

namespace strata::test {

// Fills every cell, ghosts included, with values uniform in [lo, hi).
template <class T>
void fill_random(HostField<T>& f, std::uint32_t seed, double lo = 0.0, double hi = 1.0) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    for (auto& v : f.data) v = T(dist(gen));
}

// Sets the ghost layers to 0 (the Dirichlet boundary of heat3d).
template <class T>
void zero_ghosts(HostField<T>& f) {
    const Extent& e = f.extent;
    const int gz = e.dims == 3 ? e.ghost : 0;
    for (int k = -gz; k < e.nz + gz; ++k)
        for (int j = -e.ghost; j < e.ny + e.ghost; ++j)
            for (int i = -e.ghost; i < e.nx + e.ghost; ++i)
                if (i < 0 || j < 0 || k < 0 || i >= e.nx || j >= e.ny || k >= e.nz) f.at(i, j, k) = T(0);
}

// sqrt(sum (a-b)^2 / sum b^2) over the interior; NaN anywhere gives infinity, so it fails.
template <class A, class B>
double relative_l2(const HostField<A>& a, const HostField<B>& b) {
    double num = 0, den = 0;
    const Extent& e = a.extent;
    for (int k = 0; k < e.nz; ++k)
        for (int j = 0; j < e.ny; ++j)
            for (int i = 0; i < e.nx; ++i) {
                const double x = a.at(i, j, k), y = b.at(i, j, k);
                if (!std::isfinite(x) || !std::isfinite(y)) return std::numeric_limits<double>::infinity();
                num += (x - y) * (x - y);
                den += y * y;
            }
    return std::sqrt(num / den);
}

// Bitwise equality of the interiors.
template <class T>
bool bitwise_equal(const HostField<T>& a, const HostField<T>& b) {
    const Extent& e = a.extent;
    for (int k = 0; k < e.nz; ++k)
        for (int j = 0; j < e.ny; ++j)
            for (int i = 0; i < e.nx; ++i)
                if (std::memcmp(&a.at(i, j, k), &b.at(i, j, k), sizeof(T)) != 0) return false;
    return true;
}

}  // namespace strata::test
