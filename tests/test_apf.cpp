#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <sstream>

#include "strata/engine.hpp"
#include "strata/run.hpp"
#include "test_util.hpp"

namespace strata {
namespace {

TEST(AlievPanfilov, ParametersFollowTheClassicDtRule) {
    const ApfParams p = ApfParams::for_mesh(100);
    const double dx = 0.01, rp = 8.0 * 1.1 * 1.1 / 4;
    const double dte = dx * dx / (4 * 5e-5 + dx * dx * (rp + 8.0));
    const double dtr = 1 / (0.01 + (0.07 / 0.3) * rp);
    EXPECT_DOUBLE_EQ(p.dt, 0.95 * std::min(dte, dtr));
    EXPECT_DOUBLE_EQ(p.alpha, 5e-5 * p.dt / (dx * dx));
}

TEST(AlievPanfilov, InitialStateIsTheClassicOne) {
    const ApfParams p = ApfParams::for_mesh(30);
    const auto f = apf_initial_state<double>(p);
    // Mesh columns i >= n/2+2 = 17 (interior index 16) have E = 1; rows j >= n/2+1 = 16 have R = 1.
    EXPECT_EQ(f.e.at(15, 3), 0.0);
    EXPECT_EQ(f.e.at(16, 3), 1.0);
    EXPECT_EQ(f.e.at(30, 30), 1.0);
    EXPECT_EQ(f.r.at(7, 14), 0.0);
    EXPECT_EQ(f.r.at(7, 15), 1.0);
    EXPECT_EQ(f.e.at(-1, 3), 0.0);  // ghosts start at 0
}

TEST(AlievPanfilov, MirrorBoundariesCopyTheCellTwoInward) {
    HostField<double> e(Extent{7, 5, 1, 1, 2});
    test::fill_random(e, 1);
    apf_mirror_ghosts(e);
    for (int j = 0; j < 5; ++j) {
        EXPECT_EQ(e.at(-1, j), e.at(1, j));
        EXPECT_EQ(e.at(7, j), e.at(5, j));
    }
    for (int i = 0; i < 7; ++i) {
        EXPECT_EQ(e.at(i, -1), e.at(i, 1));
        EXPECT_EQ(e.at(i, 5), e.at(i, 3));
    }
}

// One step on a small random state, each cell recomputed by hand from the classic formulas.
TEST(AlievPanfilov, OneStepMatchesTheFormulasByHand) {
    const ApfParams p = ApfParams::for_mesh(26);
    ApfFields<double> f{HostField<double>(p.extent()), HostField<double>(p.extent())};
    test::fill_random(f.e, 2);
    test::fill_random(f.r, 3);
    auto engine = make_apf_engine<double>(Backend::cpu, p, &f);
    engine->advance(1);
    const auto out = engine->fields();

    const int last = p.n;  // interior indices run 0..n
    auto E = [&](int i, int j) {  // E_prev with the mirror boundaries applied
        if (i < 0) i = 1;
        if (i > last) i = last - 1;
        if (j < 0) j = 1;
        if (j > last) j = last - 1;
        return f.e.at(i, j);
    };
    const double a = 0.1, b = 0.1, kk = 8, M1 = 0.07, M2 = 0.3, eps = 0.01, dt = p.dt;
    for (int j : {0, 1, 13, last - 1, last})
        for (int i : {0, 1, 7, last - 1, last}) {
            const double lap = E(i + 1, j) + E(i - 1, j) - 4 * E(i, j) + E(i, j + 1) + E(i, j - 1);
            double e = E(i, j) + p.alpha * lap;
            double r = f.r.at(i, j);
            e = e - dt * (kk * e * (e - a) * (e - 1) + e * r);
            r = r + dt * (eps + M1 * r / (e + M2)) * (-r - kk * e * (e - b - 1));
            EXPECT_NEAR(out.e.at(i, j), e, 1e-15 * std::fabs(e) + 1e-300) << i << "," << j;
            EXPECT_NEAR(out.r.at(i, j), r, 1e-15 * std::fabs(r) + 1e-300) << i << "," << j;
        }
}

TEST(AlievPanfilov, TimeAndIterationStopsGiveTheSameState) {
    const ApfParams p = ApfParams::for_mesh(40);
    const double T = 250.5 * p.dt;  // between two steps: the classic loop takes 251
    const ApfSchedule s = apf_schedule_for_time(p.dt, T);
    EXPECT_EQ(s.steps, 251);

    std::ostringstream sink;
    ApfRunOptions by_time;
    by_time.n = 40;
    by_time.t_final = T;
    ApfRunOptions by_count = by_time;
    by_count.iterations = 251;
    const auto a = run_apf(by_time, sink);
    const auto b = run_apf(by_count, sink);
    EXPECT_EQ(a["iterations"], 251);
    EXPECT_EQ(a["max_norm"].get<double>(), b["max_norm"].get<double>());
    EXPECT_EQ(a["l2norm"].get<double>(), b["l2norm"].get<double>());
}

TEST(AlievPanfilov, ReportHasTheClassicLayout) {
    ApfRunOptions o;
    o.n = 32;
    o.iterations = 20;
    o.stats_every = 10;
    std::ostringstream out;
    const auto r = run_apf(o, out);
    const std::string text = out.str();
    EXPECT_TRUE(std::regex_search(text, std::regex(R"(iteration = 10, Max norm: \d\.\d{6}e[+-]\d\d, L2norm: \d\.\d{6}e[+-]\d\d)")))
        << text;
    EXPECT_TRUE(std::regex_search(text, std::regex(R"(End at time: \S+, iteration 20\n)"))) << text;
    EXPECT_TRUE(std::regex_search(text, std::regex(R"(\nMax norm: \d\.\d{6}e[+-]\d\d, L2norm: \d\.\d{6}e[+-]\d\d\n)")))
        << text;
    char line[128];
    std::snprintf(line, sizeof line, "Max norm: %.6e, L2norm: %.6e", r["max_norm"].get<double>(),
                  r["l2norm"].get<double>());
    EXPECT_NE(text.find(line), std::string::npos) << "printed stats differ from the JSON report";
    EXPECT_NE(text.find("GCells/s"), std::string::npos);
}

TEST(AlievPanfilov, StatsAreMaxAbsAndRootMeanSquareOverMeshPoints) {
    HostField<double> e(Extent{3, 2, 1, 1, 2}, 0.0);
    e.at(0, 0) = -2;
    e.at(2, 1) = 1;
    e.at(-1, 0) = 100;  // ghosts do not count
    const ApfStats s = apf_stats(e);
    EXPECT_DOUBLE_EQ(s.max_abs, 2);
    EXPECT_DOUBLE_EQ(s.l2, std::sqrt(5.0 / 6.0));
}

template <class T>
void expect_omp_equals_cpu() {
    const ApfParams p = ApfParams::for_mesh(61);
    ApfFields<T> f{HostField<T>(p.extent()), HostField<T>(p.extent())};
    test::fill_random(f.e, 4);
    test::fill_random(f.r, 5, 0.0, 0.5);
    auto cpu = make_apf_engine<T>(Backend::cpu, p, &f);
    auto omp = make_apf_engine<T>(Backend::omp, p, &f);
    cpu->advance(37);
    omp->advance(37);
    EXPECT_TRUE(test::bitwise_equal(cpu->fields().e, omp->fields().e));
    EXPECT_TRUE(test::bitwise_equal(cpu->fields().r, omp->fields().r));
}
TEST(AlievPanfilov, OmpEqualsCpuBitwiseFp64) { expect_omp_equals_cpu<double>(); }
TEST(AlievPanfilov, OmpEqualsCpuBitwiseFp32) { expect_omp_equals_cpu<float>(); }

// fp32 follows fp64 closely on the classic problem: relative L2 difference of E after 300 steps.
TEST(AlievPanfilov, Fp32StaysWithinToleranceOfFp64) {
    const ApfParams p = ApfParams::for_mesh(64);
    auto e64 = make_apf_engine<double>(Backend::omp, p, nullptr);
    auto e32 = make_apf_engine<float>(Backend::omp, p, nullptr);
    e64->advance(300);
    e32->advance(300);
    EXPECT_LT(test::relative_l2(e32->fields().e, e64->fields().e), 1e-5);
    EXPECT_NEAR(e32->stats().l2, e64->stats().l2, 1e-5 * e64->stats().l2);
}

}  // namespace
}  // namespace strata
