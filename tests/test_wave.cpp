#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numbers>

#include "strata/core/block_order.hpp"
#include "strata/core/error.hpp"
#include "strata/engine.hpp"
#include "strata/models/wave3d.hpp"
#include "test_util.hpp"

namespace strata {
namespace {

Wave3dProblem box(int nx, int ny, int nz, int sponge, const std::string& velocity = "1500") {
    std::vector<float> v = wave_velocity(velocity, "", nx, ny, nz);
    const WaveParams params = wave_params(nx, ny, nz, 1.0, v, 0.5, 0, sponge);
    return Wave3dProblem(params, std::move(v));
}

template <class T>
State<T> wave_state(HostField<T> p, HostField<T> prev, std::int64_t step = 0) {
    return test::state<T>({{"p", std::move(p)}, {"prev", std::move(prev)}}, step);
}

// A Gaussian pulse at rest (p^{n-1} = p^n) of width `sigma` cells around the centre.
template <class T>
State<T> pulse(const WaveParams& p, double sigma) {
    HostField<T> u(p.extent3());
    for (int k = 0; k < p.nz; ++k)
        for (int j = 0; j < p.ny; ++j)
            for (int i = 0; i < p.nx; ++i) {
                const double dx = i - (p.nx - 1) / 2.0, dy = j - (p.ny - 1) / 2.0, dz = k - (p.nz - 1) / 2.0;
                u.at(i, j, k) = T(std::exp(-(dx * dx + dy * dy + dz * dz) / (2 * sigma * sigma)));
            }
    return wave_state<T>(u, u);
}

// h^2 lap of sin(a x) sin(b y) sin(c z) against the exact -(a^2 + b^2 + c^2) h^2 f, on grids
// refined by 2: the error of 8th-order differences falls by ~2^8.
TEST(Wave3D, LaplacianConvergesAtEighthOrder) {
    const double a = 2 * std::numbers::pi, b = 3 * std::numbers::pi, c = 1.5 * std::numbers::pi;
    double err[3];
    for (int level = 0; level < 3; ++level) {
        const double h = 1.0 / (12 << level);
        const Wave3D<double> model(WaveParams{});
        double worst = 0;
        for (double x0 : {0.1, 0.37, 0.71}) {  // a few points: the error is smooth in space
            auto f = [&](double x, double y, double z) { return std::sin(a * x) * std::sin(b * y) * std::sin(c * z); };
            const double y0 = 0.23, z0 = 0.61;
            auto nb = [&](int di, int dj, int dk) { return f(x0 + di * h, y0 + dj * h, z0 + dk * h); };
            const double exact = -(a * a + b * b + c * c) * f(x0, y0, z0);
            worst = std::max(worst, std::fabs(model.laplacian(nb) / (h * h) - exact));
        }
        err[level] = worst;
    }
    for (int level = 0; level < 2; ++level) {
        const double order = std::log2(err[level] / err[level + 1]);
        EXPECT_GE(order, 7.0) << "errors " << err[level] << " -> " << err[level + 1];
    }
}

TEST(Wave3D, CflBoundIsTheNyquistModesLimit) {
    // |c0| + 2 sum |c_k| per axis; leapfrog needs (v dt / h)^2 * 3 * that <= 4.
    EXPECT_NEAR(Laplacian8::symbol_max, 6.5015873015873, 1e-12);
    EXPECT_NEAR(WaveParams::dt_max(0.01, 1000), 2 * 0.01 / (1000 * std::sqrt(3 * 6.5015873015873)), 1e-15);
}

TEST(Wave3D, RickerHasItsPeakZerosAndTroughs) {
    const double f0 = 25, t0 = 1.5 / f0, pi = std::numbers::pi;
    EXPECT_DOUBLE_EQ(ricker(t0, f0), 1.0);
    EXPECT_NEAR(ricker(t0 + 1 / (pi * f0 * std::sqrt(2.0)), f0), 0.0, 1e-15);
    EXPECT_NEAR(ricker(t0 - std::sqrt(1.5) / (pi * f0), f0), -2 * std::exp(-1.5), 1e-15);
    EXPECT_LT(std::fabs(ricker(0, f0)), 1e-8);  // starts at rest
}

// Leapfrog conserves E = |p^{n+1} - p^n|^2_M - <p^{n+1}, L p^n> exactly, with two layers.
TEST(Wave3D, EnergyIsConservedWithoutSourcesOrSponge) {
    const auto p = box(21, 18, 23, 0, "layered:1500,2500@0.5");
    const State<double> init = pulse<double>(p.params, 2.0);
    auto e = make_engine<double>(p, Backend::omp, {}, &init);
    e->advance(1);
    const double e0 = e->observables()["energy"];
    for (int round = 0; round < 4; ++round) {
        e->advance(300);
        const Observables s = e->observables();
        EXPECT_NEAR(s["energy"] / e0, 1.0, 1e-9) << "after " << 1 + 300 * (round + 1) << " steps";
        EXPECT_LT(s["max_abs"], 1.0);
    }
}

// A pulse leaves through the sponge: the energy falls below 1% of its start, and what comes back
// into the interior is compared with the same run between reflecting walls.
TEST(Wave3D, SpongeLetsAPulseLeaveTheBox) {
    const int n = 44, w = 10, steps = 450;  // the wavefront crosses the box ~2 times
    double interior_sq[2], energy_ratio = 0;
    for (int sponge : {0, w}) {
        const auto p = box(n, n, n, sponge);
        const State<double> init = pulse<double>(p.params, 2.0);
        auto e = make_engine<double>(p, Backend::omp, {}, &init);
        e->advance(1);
        const double e0 = e->observables()["energy"];
        e->advance(steps);
        const HostField<double> s = e->field("p");
        if (sponge) energy_ratio = e->observables()["energy"] / e0;
        double sq = 0;
        for (int k = w; k < n - w; ++k)
            for (int j = w; j < n - w; ++j)
                for (int i = w; i < n - w; ++i) sq += s.at(i, j, k) * s.at(i, j, k);
        interior_sq[sponge ? 1 : 0] = sq;
    }
    const double reflected = interior_sq[1] / interior_sq[0];
    std::printf("sponge of %d cells: energy left %.2e of the start; interior sum p^2 %.2e of the walls' run\n", w,
                energy_ratio, reflected);
    EXPECT_LT(energy_ratio, 0.01);
    EXPECT_LT(reflected, 0.01);
}

// From a source at the centre, the peaks reach receivers 8 and 24 cells away (along x) after
// (24 - 8) h / v more, with amplitudes in the ratio 24 : 8 (the 3D Green's function, 1/r).
TEST(Wave3D, ReceiversSeeTheWaveArriveAtDistanceOverSpeed) {
    auto p = box(65, 65, 65, 8);
    const WaveParams& w = p.params;
    const double f0 = 1500 / (2.5 * 10 * w.h);
    p.sources = {PointSource{{32, 32, 32}, f0, 1500 * 1500 * w.dt * w.dt / (w.h * w.h * w.h)}};
    p.receivers = {{40, 32, 32}, {56, 32, 32}};
    const int steps = int((1.5 / f0 + 30 * w.h / 1500) / w.dt);
    p.record_steps = steps;
    auto e = make_engine<double>(p, Backend::omp);
    e->advance(steps);
    const std::vector<double> tr = e->array("traces");
    ASSERT_EQ(tr.size(), std::size_t(steps) * 2);
    int peak[2] = {0, 0};
    for (int s = 0; s < steps; ++s)
        for (int r = 0; r < 2; ++r)
            if (tr[s * 2 + r] > tr[peak[r] * 2 + r]) peak[r] = s;
    const double delay = (peak[1] - peak[0]) * w.dt, expected = 16 * w.h / 1500;
    EXPECT_NEAR(delay / expected, 1.0, 0.03) << "peaks at steps " << peak[0] << ", " << peak[1];
    EXPECT_NEAR(tr[peak[0] * 2] / tr[peak[1] * 2 + 1], 3.0, 0.3);
    // The last row is p at the receivers now.
    EXPECT_EQ(tr[(steps - 1) * 2 + 1], e->field("p").at(56, 32, 32));
}

// Odd sizes, a sponge, two sources and three receivers, from a random state.
Wave3dProblem shot(std::int64_t record_steps) {
    auto p = box(23, 19, 17, 3, "layered:1500,2100@0.4");
    p.sources = {PointSource{{11, 9, 8}, 2000, 0.3}, PointSource{{5, 6, 7}, 3000, 0.2}};
    p.receivers = {{1, 2, 3}, {11, 9, 8}, {20, 15, 10}};
    p.record_steps = record_steps;
    return p;
}
template <class T>
State<T> random_wave_state(const Extent& e) {
    HostField<T> p(e), prev(e);
    test::fill_random(p, 61, -1, 1);
    test::fill_random(prev, 62, -1, 1);
    test::zero_ghosts(p);
    test::zero_ghosts(prev);
    return wave_state<T>(p, prev);
}

// An engine made from another's state at step k (fields, step and traces) ends where the other
// does: the sources keep their clock and the traces recorded before k are kept, bitwise.
template <class T>
void continues_from_state(Backend backend) {
    const auto p = shot(40);  // recording stops before the end
    const State<T> init = random_wave_state<T>(p.params.extent3());
    auto straight = make_engine<T>(p, backend, {}, &init);
    straight->advance(17);
    const State<T> at17 = straight->state();
    EXPECT_EQ(at17.step, 17);
    EXPECT_EQ(at17.array("traces")->size(), 17u * 3);
    straight->advance(33);
    auto continued = make_engine<T>(p, backend, {}, &at17);
    continued->advance(33);
    const State<T> a = straight->state(), b = continued->state();
    EXPECT_EQ(b.step, 50);
    EXPECT_TRUE(test::bitwise_equal(a.field("p"), b.field("p")));
    EXPECT_TRUE(test::bitwise_equal(a.field("prev"), b.field("prev")));
    EXPECT_EQ(*a.array("traces"), *b.array("traces"));
    EXPECT_EQ(b.array("traces")->size(), 40u * 3);
    EXPECT_EQ(*b.array("traces"), continued->array("traces"));
}
TEST(Wave3D, ContinuesFromAStateBitwiseOnCpu) { continues_from_state<float>(Backend::cpu); }
TEST(Wave3D, ContinuesFromAStateBitwiseOnOmpFp64) { continues_from_state<double>(Backend::omp); }

TEST(Wave3D, StateWithTheWrongTraceCountIsAnError) {
    const auto p = shot(40);
    State<float> s = random_wave_state<float>(p.params.extent3());
    s.step = 5;
    s.arrays = {{"traces", std::vector<float>(4 * 3, 0.0f)}};  // 4 rows, not 5
    EXPECT_THROW(make_engine<float>(p, Backend::cpu, {}, &s), Error);
    s.arrays = {{"traces", std::vector<float>(5 * 3, 0.0f)}};
    EXPECT_NO_THROW(make_engine<float>(p, Backend::cpu, {}, &s));
}

TEST(Wave3D, SnapshotHoldsThePressureWhenTaken) {
    const auto p = shot(10);
    const State<double> init = random_wave_state<double>(p.params.extent3());
    auto e = make_engine<double>(p, Backend::omp, {}, &init);
    e->advance(7);
    const auto want = interior_values(e->field("p"));
    auto copy = e->snapshot("p");
    e->advance(2);
    EXPECT_EQ(std::memcmp(copy->wait(), want.data(), want.size() * sizeof(double)), 0);
}

TEST(Wave3D, OmpEqualsCpuBitwise) {
    const auto p = shot(5);
    const State<float> init = random_wave_state<float>(p.params.extent3());
    auto cpu = make_engine<float>(p, Backend::cpu, {}, &init);
    auto omp = make_engine<float>(p, Backend::omp, {}, &init);
    cpu->advance(9);
    omp->advance(9);
    EXPECT_TRUE(test::bitwise_equal(cpu->field("p"), omp->field("p")));
    EXPECT_TRUE(test::bitwise_equal(cpu->field("prev"), omp->field("prev")));
    EXPECT_EQ(cpu->array("traces"), omp->array("traces"));
    EXPECT_EQ(cpu->array("traces").size(), 5u * 3);
}

TEST(Wave3D, VelocityModelsAndTheirErrors) {
    const auto layered = wave_velocity("layered:1500,2500@0.5", "", 3, 2, 5);
    EXPECT_EQ(layered[0], 1500.0f);                 // k = 0
    EXPECT_EQ(layered[1 * 3 * 2], 1500.0f);         // k = 1, above depth 0.5 * (nz - 1) = 2
    EXPECT_EQ(layered[2 * 3 * 2], 2500.0f);         // k = 2, at the interface: the lower layer
    EXPECT_EQ(layered.back(), 2500.0f);
    EXPECT_THROW(wave_velocity("fast", "", 3, 3, 3), UsageError);
    EXPECT_THROW(wave_velocity("-5", "", 3, 3, 3), UsageError);
    EXPECT_THROW(wave_velocity("layered:1500,2500@1.5", "", 3, 3, 3), UsageError);
    const auto path = std::filesystem::temp_directory_path() / "strata_test_velocity.bin";
    {
        std::vector<float> v(2 * 3 * 4, 1800.0f);
        std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(v.data()), 2 * 3 * 4 * 4);
    }
    EXPECT_EQ(wave_velocity("", path.string(), 2, 3, 4)[7], 1800.0f);
    EXPECT_THROW(wave_velocity("", path.string(), 2, 3, 5), UsageError);  // wrong size
    EXPECT_THROW(wave_velocity("", "/nonexistent/v.bin", 2, 3, 4), UsageError);
    std::filesystem::remove(path);
}

TEST(Wave3D, PositionsSnapToTheNearestPointInsideTheBox) {
    const auto p = box(11, 21, 31, 0);  // h = 0.1: the box is 1 x 2 x 3
    const GridPoint g = wave_grid_point(p.params, 0.46, 1.04, 3.0, "receiver");
    EXPECT_EQ(g.i, 5);
    EXPECT_EQ(g.j, 10);
    EXPECT_EQ(g.k, 30);
    EXPECT_THROW(wave_grid_point(p.params, 0.5, 2.1, 1, "receiver"), UsageError);
    EXPECT_THROW(wave_grid_point(p.params, -0.01, 1, 1, "source"), UsageError);
}

TEST(Wave3D, UnstableDtIsAnError) {
    const std::vector<float> v(9 * 9 * 9, 1500.0f);
    const double bound = WaveParams::dt_max(1.0 / 8, 1500);
    EXPECT_THROW(wave_params(9, 9, 9, 1.0, v, 0.5, bound * 1.01, 0), UsageError);
    EXPECT_EQ(wave_params(9, 9, 9, 1.0, v, 0.5, bound * 0.9, 0).dt, bound * 0.9);
}

// The grouped block order visits every (tile column, chunk) once, for groups that divide the
// tile rows and for a short last group.
TEST(BlockOrder, GroupedVisitsEveryBlockOnce) {
    for (int rows : {1, 2, 3, 5, 7, 100}) {
        const int nbx = 3, nby = 7, nbz = 4;
        std::vector<int> seen(std::size_t(nbx) * nby * nbz, 0);
        int last_group = -1;
        for (int id = 0; id < nbx * nby * nbz; ++id) {
            const BlockCoords b = grouped_block(id, nbx, nby, nbz, rows);
            ASSERT_TRUE(b.x >= 0 && b.x < nbx && b.y >= 0 && b.y < nby && b.z >= 0 && b.z < nbz) << id;
            ++seen[(std::size_t(b.z) * nby + b.y) * nbx + b.x];
            ASSERT_GE(b.y / rows, last_group) << "groups run one after another";
            last_group = b.y / rows;
        }
        EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; })) << rows << " rows";
    }
}

}  // namespace
}  // namespace strata
