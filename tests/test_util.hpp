#pragma once
// Helpers shared by the tests: random (never constant) fields, poisoning, field comparison, and
// the states of the built-in models as the engines take them.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "strata/core/field.hpp"
#include "strata/core/field_ops.hpp"
#include "strata/engine.hpp"
#include "strata/models/aliev_panfilov.hpp"

// A GPU test skips where there is no CUDA device (CI); the device machine runs it.
#define REQUIRE_GPU() \
    if (::strata::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device here: GPU test skipped"

namespace strata::test {

using strata::fill_random;
using strata::zero_ghosts;

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

// A state of named fields (a model's state fields, in any order) at a step.
template <class T>
State<T> state(std::vector<std::pair<std::string, HostField<T>>> fields, std::int64_t step = 0,
               std::vector<std::pair<std::string, std::vector<T>>> arrays = {}) {
    return State<T>{step, std::move(fields), std::move(arrays)};
}

// The state of a model with one state field.
template <class T>
State<T> state_of(const std::string& name, const HostField<T>& u) {
    return state<T>({{name, u}});
}

// The state of a model with one state field of random values in [0, 1) on `e`; `dirichlet`: its
// ghost layer zero (a model whose boundary is the zero ghosts reads them).
template <class T>
State<T> random_state_of(const std::string& name, const Extent& e, std::uint64_t seed, bool dirichlet) {
    HostField<T> u(e);
    fill_random(u, seed);
    if (dirichlet) zero_ghosts(u);
    return state_of(name, u);
}

// apf's two fields, as one engine holds them now.
template <class T>
struct ApfFields {
    HostField<T> e, r;
};
template <class T>
ApfFields<T> apf_fields(TypedEngine<T>& engine) {
    return {engine.field("E"), engine.field("R")};
}

// A random apf state: E uniform in [0, 1), R in [0, 0.5).
template <class T>
ApfFields<T> random_apf_fields(const ApfParams& p, std::uint32_t seed) {
    ApfFields<T> f{HostField<T>(p.extent()), HostField<T>(p.extent())};
    fill_random(f.e, seed);
    fill_random(f.r, seed + 1, 0.0, 0.5);
    return f;
}
template <class T>
State<T> random_apf_state(const ApfParams& p, std::uint32_t seed) {
    ApfFields<T> f = random_apf_fields<T>(p, seed);
    return state<T>({{"E", std::move(f.e)}, {"R", std::move(f.r)}});
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

#ifdef STRATA_SOURCE_DIR
// A stencil file of examples/stencils/.
inline std::string stencil_example(const std::string& name) {
    return std::string(STRATA_SOURCE_DIR) + "/examples/stencils/" + name;
}
// A stencil file the tests keep (tests/stencils/).
inline std::string stencil_fixture(const std::string& name) {
    return std::string(STRATA_SOURCE_DIR) + "/tests/stencils/" + name;
}
#endif

// A double as text that reads back the same (a --params value equal to a built-in's).
inline std::string exact(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// A registered model's engine in precision T (ModelInfo's makers, as a model found by name has).
template <class T>
std::unique_ptr<TypedEngine<T>> model_engine(const ModelInfo& m, const Problem& p, Backend b, const EngineOptions& o,
                                             const State<T>* init) {
    return m.engine<T>()(p, b, o, init);
}

}  // namespace strata::test
