#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "strata/core/error.hpp"
#include "strata/engine.hpp"
#include "strata/models/heat3d.hpp"
#include "strata/run.hpp"
#include "test_util.hpp"

namespace strata {
namespace {

class HeatStencils : public ::testing::TestWithParam<HeatStencil> {};

// Halving h (and dt with it, dt ~ h^2) must divide the error against the exact solution by ~4.
TEST_P(HeatStencils, ErrorShrinksAtSecondOrder) {
    double err[2];
    const int sizes[2] = {15, 31};  // h = 1/16, 1/32
    for (int level = 0; level < 2; ++level) {
        const HeatParams p = HeatParams::make(sizes[level], GetParam());
        const std::int64_t steps = 40 << (2 * level);  // the same simulated time at both levels
        auto e = make_engine<double>(Heat3dProblem(p), Backend::omp);
        e->advance(steps);
        err[level] = e->observables()["max_error"];  // at t = steps dt
    }
    const double order = std::log2(err[0] / err[1]);
    EXPECT_GT(order, 1.9) << "errors " << err[0] << " " << err[1];
    EXPECT_LT(order, 2.2) << "errors " << err[0] << " " << err[1];
}

TEST_P(HeatStencils, OmpEqualsCpuBitwise) {
    const HeatParams p = HeatParams::make(19, GetParam());
    HostField<double> u(p.extent());
    test::fill_random(u, 11);
    test::zero_ghosts(u);  // Dirichlet
    const State<double> init = test::state<double>({{"u", u}});
    auto cpu = make_engine<double>(Heat3dProblem(p), Backend::cpu, {}, &init);
    auto omp = make_engine<double>(Heat3dProblem(p), Backend::omp, {}, &init);
    cpu->advance(9);
    omp->advance(9);
    EXPECT_TRUE(test::bitwise_equal(cpu->field("u"), omp->field("u")));
}

TEST_P(HeatStencils, Fp32StaysWithinToleranceOfFp64) {
    const HeatParams p = HeatParams::make(24, GetParam());
    auto e64 = make_engine<double>(Heat3dProblem(p), Backend::omp);
    auto e32 = make_engine<float>(Heat3dProblem(p), Backend::omp);
    e64->advance(50);
    e32->advance(50);
    EXPECT_LT(test::relative_l2(e32->field("u"), e64->field("u")), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(AllStencils, HeatStencils,
                         ::testing::Values(HeatStencil::p7, HeatStencil::p19, HeatStencil::p27),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// The three Laplacians are exact on quadratics: lap(x^2 + 2y^2 + 3z^2) = 12.
TEST(Heat3D, StencilsAreExactOnQuadratics) {
    auto q = [](int i, int j, int k) { return double(i * i + 2 * j * j + 3 * k * k); };
    auto nb = [&](int di, int dj, int dk) { return q(3 + di, 4 + dj, 5 + dk); };
    HeatParams p = HeatParams::make(10, HeatStencil::p7);
    p.c = 1.0;  // h = 1 in index units, kappa dt = 1: update = u + lap(u)
    EXPECT_DOUBLE_EQ((Heat3D<double, HeatStencil::p7>(p).update(nb)), q(3, 4, 5) + 12);
    EXPECT_DOUBLE_EQ((Heat3D<double, HeatStencil::p19>(p).update(nb)), q(3, 4, 5) + 12);
    EXPECT_DOUBLE_EQ((Heat3D<double, HeatStencil::p27>(p).update(nb)), q(3, 4, 5) + 12);
}

TEST(Heat3D, ReportCarriesTheErrorAgainstTheExactSolution) {
    const RunOptions o{"heat3d", {{"n", 16}, {"steps", 10}}};
    std::ostringstream out;
    const auto r = run(o, out);
    EXPECT_GT(r["max_error"].get<double>(), 0.0);
    EXPECT_LT(r["max_error"].get<double>(), 1e-2);
    EXPECT_NE(out.str().find("Max error vs exact"), std::string::npos);
}

// The CPU backends have no kernel launch to shape: --chunk and --depth there are errors.
TEST(Heat3D, LaunchKnobsOnTheCpuAreAClearError) {
    const Heat3dProblem p(HeatParams::make(8, HeatStencil::p7));
    EXPECT_THROW(make_engine<double>(p, Backend::cpu, EngineOptions{"", true, 16}), UsageError);
    EXPECT_THROW(make_engine<double>(p, Backend::omp, EngineOptions{"", true, 0, 4}), UsageError);
    EXPECT_NO_THROW(make_engine<double>(p, Backend::omp, EngineOptions{}));
}

}  // namespace
}  // namespace strata
