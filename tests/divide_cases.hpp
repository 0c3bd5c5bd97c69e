// The pairs strata::divide is checked on, against `/`, on the host (test_apf.cpp) and on the
// device (test_divide_cuda.cu): every pair of special and ordinary values (zeros of both signs,
// denormals, infinities, NaN), then denormal numerators over divisors that put the quotient
// anywhere: normal, at the edge of the normal range (from both sides, ties included), denormal, 0,
// and overflowing.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace strata {

template <class T>
std::vector<std::pair<T, T>> divide_cases() {
    using L = std::numeric_limits<T>;
    std::vector<std::pair<T, T>> cases;
    const T v[] = {T(0), -T(0), L::denorm_min(), -L::denorm_min(), L::min(), T(0.3), -T(1), T(7), L::max(),
                   L::infinity(), -L::infinity(), L::quiet_NaN()};
    for (T a : v)
        for (T b : v) cases.emplace_back(a, b);
    std::mt19937_64 rng(7);
    const int bits = L::digits - 1;
    for (int i = 0; i < 200000; ++i) {
        const T a = std::ldexp(T(rng() % (std::uint64_t(1) << bits) + 1), L::min_exponent - 1 - bits) *
                    (rng() % 2 ? T(1) : T(-1));  // a denormal
        T b;
        switch (i % 4) {
            case 0: b = std::ldexp(T(0.5) + T(rng() % 1000000) / T(2000000), -int(rng() % 40)); break;  // quotient normal or near
            case 1: b = a / L::min() * (T(1) + T(int(rng() % 64) - 32) * L::epsilon()); break;            // quotient at min's edge
            case 2: b = std::ldexp(T(1) + T(rng() % 1000) / T(1000), int(rng() % 60) - 20); break;     // denormal, 0
            default: b = std::ldexp(T(1) + T(rng() % 1000) / T(1000), -int(rng() % 200) - 100); break; // large, overflow
        }
        if (i % 4 == 1 && !(b != T(0))) continue;
        cases.emplace_back(a, b);
    }
    return cases;
}

// The same quotient: the same bits, or both NaN (whose payloads the hardware chooses).
template <class T>
bool same_quotient(T want, T got) {
    return std::isnan(want) ? std::isnan(got) : std::memcmp(&want, &got, sizeof(T)) == 0;
}

}  // namespace strata
