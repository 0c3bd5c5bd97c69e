#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <regex>
#include <sstream>

#include "strata/core/hd.hpp"
#include "strata/engine.hpp"
#include "strata/run.hpp"
#include "divide_cases.hpp"
#include "test_util.hpp"

namespace strata {
namespace {

// divide (core/hd.hpp) stands for `/` in the models: the same bits on every pair of the cases
// (special and ordinary values, then denormal numerators over divisors that put the quotient
// anywhere). test_divide_cuda.cu checks the device's divide on the same pairs.
template <class T>
void expect_divide_is_the_division() {
    const std::vector<std::pair<T, T>> cases = divide_cases<T>();
    EXPECT_GT(cases.size(), 190000u);
    for (const auto& [a, b] : cases) {
        const T want = a / b, got = divide(a, b);
        if (!same_quotient(want, got)) {
            ADD_FAILURE() << std::hexfloat << a << " / " << b << ": " << want << " against " << got;
            return;
        }
    }
}
TEST(Divide, SameBitsAsTheDivisionFp32) { expect_divide_is_the_division<float>(); }
TEST(Divide, SameBitsAsTheDivisionFp64) { expect_divide_is_the_division<double>(); }

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
    const auto engine = make_engine<double>(ApfProblem(p), Backend::cpu);
    const HostField<double> e = engine->field("E"), r = engine->field("R");
    // Mesh columns i >= n/2+2 = 17 (interior index 16) have E = 1; rows j >= n/2+1 = 16 have R = 1.
    EXPECT_EQ(e.at(15, 3), 0.0);
    EXPECT_EQ(e.at(16, 3), 1.0);
    EXPECT_EQ(e.at(30, 30), 1.0);
    EXPECT_EQ(r.at(7, 14), 0.0);
    EXPECT_EQ(r.at(7, 15), 1.0);
    EXPECT_EQ(e.at(-1, 3), 0.0);  // ghosts mirror the cells two inward
}

TEST(AlievPanfilov, MirrorBoundariesCopyTheCellTwoInward) {
    HostField<double> e(Extent{7, 5, 1, 1, 2});
    test::fill_random(e, 1);
    mirror_ghosts(e);
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
    HostField<double> fe(p.extent()), fr(p.extent());
    test::fill_random(fe, 2);
    test::fill_random(fr, 3);
    const State<double> init = test::state<double>({{"E", fe}, {"R", fr}});
    auto engine = make_engine<double>(ApfProblem(p), Backend::cpu, {}, &init);
    engine->advance(1);
    const HostField<double> out_e = engine->field("E"), out_r = engine->field("R");

    const int last = p.n;  // interior indices run 0..n
    auto E = [&](int i, int j) {  // E_prev with the mirror boundaries applied
        if (i < 0) i = 1;
        if (i > last) i = last - 1;
        if (j < 0) j = 1;
        if (j > last) j = last - 1;
        return fe.at(i, j);
    };
    const double a = 0.1, b = 0.1, kk = 8, M1 = 0.07, M2 = 0.3, eps = 0.01, dt = p.dt;
    for (int j : {0, 1, 13, last - 1, last})
        for (int i : {0, 1, 7, last - 1, last}) {
            const double lap = E(i + 1, j) + E(i - 1, j) - 4 * E(i, j) + E(i, j + 1) + E(i, j - 1);
            double e = E(i, j) + p.alpha * lap;
            double r = fr.at(i, j);
            e = e - dt * (kk * e * (e - a) * (e - 1) + e * r);
            r = r + dt * (eps + M1 * r / (e + M2)) * (-r - kk * e * (e - b - 1));
            EXPECT_NEAR(out_e.at(i, j), e, 1e-15 * std::fabs(e) + 1e-300) << i << "," << j;
            EXPECT_NEAR(out_r.at(i, j), r, 1e-15 * std::fabs(r) + 1e-300) << i << "," << j;
        }
}

TEST(AlievPanfilov, TimeAndIterationStopsGiveTheSameState) {
    const ApfParams p = ApfParams::for_mesh(40);
    const double T = 250.5 * p.dt;  // between two steps: the classic loop takes 251
    const ApfSchedule s = schedule_for_time(p.dt, T, "-t", "-i");
    EXPECT_EQ(s.steps, 251);

    std::ostringstream sink;
    RunOptions by_time{"apf", {{"n", 40}, {"t_final", T}}};
    RunOptions by_count = by_time;
    by_count.params.set("iterations", 251);
    const auto a = run(by_time, sink);
    const auto b = run(by_count, sink);
    EXPECT_EQ(a["iterations"], 251);
    EXPECT_EQ(a["max_norm"].get<double>(), b["max_norm"].get<double>());
    EXPECT_EQ(a["l2norm"].get<double>(), b["l2norm"].get<double>());
}

TEST(AlievPanfilov, ReportHasTheClassicLayout) {
    const RunOptions o{"apf", {{"n", 32}, {"iterations", 20}, {"stats_every", 10}}};
    std::ostringstream out;
    const auto r = run(o, out);
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
    const auto engine = make_engine<double>(ApfProblem(ApfParams::for_mesh(2, 1)), Backend::cpu);
    engine->set_field("E", e);
    const Observables s = engine->observables();
    EXPECT_DOUBLE_EQ(s["max_norm"], 2);
    EXPECT_DOUBLE_EQ(s["l2norm"], std::sqrt(5.0 / 6.0));
}

template <class T>
void expect_omp_equals_cpu() {
    const ApfParams p = ApfParams::for_mesh(61);
    const State<T> f = test::random_apf_state<T>(p, 4);
    auto cpu = make_engine<T>(ApfProblem(p), Backend::cpu, {}, &f);
    auto omp = make_engine<T>(ApfProblem(p), Backend::omp, {}, &f);
    cpu->advance(37);
    omp->advance(37);
    EXPECT_TRUE(test::bitwise_equal(cpu->field("E"), omp->field("E")));
    EXPECT_TRUE(test::bitwise_equal(cpu->field("R"), omp->field("R")));
}
TEST(AlievPanfilov, OmpEqualsCpuBitwiseFp64) { expect_omp_equals_cpu<double>(); }
TEST(AlievPanfilov, OmpEqualsCpuBitwiseFp32) { expect_omp_equals_cpu<float>(); }

// fp32 follows fp64 closely on the classic problem: relative L2 difference of E after 300 steps.
TEST(AlievPanfilov, Fp32StaysWithinToleranceOfFp64) {
    const ApfParams p = ApfParams::for_mesh(64);
    auto e64 = make_engine<double>(ApfProblem(p), Backend::omp);
    auto e32 = make_engine<float>(ApfProblem(p), Backend::omp);
    e64->advance(300);
    e32->advance(300);
    EXPECT_LT(test::relative_l2(e32->field("E"), e64->field("E")), 1e-5);
    EXPECT_NEAR(e32->observables()["l2norm"], e64->observables()["l2norm"], 1e-5 * e64->observables()["l2norm"]);
}

}  // namespace
}  // namespace strata
