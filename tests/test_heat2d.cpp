// heat2d, the model written as one file: its numerics against the exact solution, and every
// layer above the engine (run, report, snapshots, checkpoints) reached through the registry.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "strata/core/error.hpp"
#include "strata/engine.hpp"
#include "strata/io/checkpoint.hpp"
#include "strata/io/png.hpp"
#include "strata/io/vti.hpp"
#include "strata/models/heat2d.hpp"
#include "strata/run.hpp"
#include "test_util.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

// Halving h (and dt with it, dt ~ h^2) divides the error against the exact solution by ~4.
TEST(Heat2D, ErrorShrinksAtSecondOrder) {
    double err[2];
    const int sizes[2] = {15, 31};  // h = 1/16, 1/32
    for (int level = 0; level < 2; ++level) {
        const Heat2dParams p = Heat2dParams::make(sizes[level], sizes[level]);
        const std::int64_t steps = 40 << (2 * level);  // the same simulated time at both levels
        auto e = make_engine<double>(Heat2dProblem(p), Backend::omp);
        e->advance(steps);
        err[level] = e->observables()["max_error"];
    }
    const double order = std::log2(err[0] / err[1]);
    EXPECT_GT(order, 1.9) << "errors " << err[0] << " " << err[1];
    EXPECT_LT(order, 2.2) << "errors " << err[0] << " " << err[1];
}

// The 5-point Laplacian is exact on quadratics: lap(x^2 + 2y^2) = 6.
TEST(Heat2D, StencilIsExactOnQuadratics) {
    auto nb = [](int di, int dj) { return double((3 + di) * (3 + di) + 2 * (4 + dj) * (4 + dj)); };
    Heat2dParams p = Heat2dParams::make(10, 10);
    p.c = 1;  // h = 1 in index units, kappa dt = 1: update = u + lap(u)
    EXPECT_DOUBLE_EQ(Heat2D<double>(p).update(nb), nb(0, 0) + 6);
}

TEST(Heat2D, OmpEqualsCpuBitwiseAndTheBoundaryStaysZero) {
    const Heat2dProblem p(Heat2dParams::make(37, 23));
    HostField<double> u(p.extent());
    test::fill_random(u, 21);  // ghosts too: the engine's boundary is the model's, zero
    const State<double> init = test::state_of("u", u);
    auto cpu = make_engine<double>(p, Backend::cpu, {}, &init);
    auto omp = make_engine<double>(p, Backend::omp, {}, &init);
    cpu->advance(11);
    omp->advance(11);
    const HostField<double> a = cpu->field("u"), b = omp->field("u");
    EXPECT_TRUE(test::bitwise_equal(a, b));
    EXPECT_EQ(a.at(-1, 5), 0.0);
    EXPECT_EQ(a.at(37, 5), 0.0);
    EXPECT_EQ(a.at(5, 23), 0.0);
    // One step by hand at a corner cell, whose west and south neighbours are the zero boundary.
    auto one = make_engine<double>(p, Backend::cpu, {}, &init);
    one->advance(1);
    const double c = p.params.c, x = u.at(0, 0);
    EXPECT_EQ(one->field("u").at(0, 0), x + c * ((0 + u.at(1, 0)) + (0 + u.at(0, 1)) - 4 * x));
}

TEST(Heat2D, Fp32StaysWithinToleranceOfFp64) {
    const Heat2dProblem p(Heat2dParams::make(48, 48));
    auto e64 = make_engine<double>(p, Backend::omp);
    auto e32 = make_engine<float>(p, Backend::omp);
    e64->advance(200);
    e32->advance(200);
    EXPECT_LT(test::relative_l2(e32->field("u"), e64->field("u")), 1e-5);
}

TEST(Heat2D, ReportCarriesTheErrorAgainstTheExactSolution) {
    std::ostringstream out;
    const auto r = run(RunOptions("heat2d", {{"n", 40}, {"steps", 30}}), out);
    EXPECT_EQ(r["model"], "heat2d");
    EXPECT_GT(r["max_error"].get<double>(), 0.0);
    EXPECT_LT(r["max_error"].get<double>(), 1e-3);
    char line[128];
    std::snprintf(line, sizeof line, "Max error vs exact: %.6e", r["max_error"].get<double>());
    EXPECT_NE(out.str().find(line), std::string::npos) << out.str();
    EXPECT_THROW(run(RunOptions("heat2d", {{"n", 2}}), out), UsageError);
    EXPECT_THROW(run(RunOptions("heat2d", {{"kappa", -1.0}}), out), UsageError);
    EXPECT_THROW(run(RunOptions("heat2d", {{"stencil", "7pt"}}), out), UsageError);  // not a heat2d option
}

// Snapshots and checkpoints come with the model for free: a frame of the last step holds what
// the end checkpoint holds, and a run restarted halfway ends bitwise where a straight one does.
TEST(Heat2D, SnapshotsCheckpointsAndRestartWithoutModelCode) {
    // Of this process alone: another build's tests may run the same test at once.
    const fs::path dir = fs::temp_directory_path() / ("strata_test_heat2d_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    auto run_to = [&](int steps, const std::string& name, const std::string& restart) {
        RunOptions o("heat2d", {{"n", 33}, {"steps", steps}});
        o.backend = Backend::omp;
        o.io.out_dir = (dir / name).string();
        o.io.snapshot_every = 10;
        o.io.checkpoint_path = (dir / (name + ".ck")).string();
        o.io.restart_path = restart;
        std::ostringstream out;
        return run(o, out);
    };
    const auto straight = run_to(40, "straight", "");
    run_to(20, "half", "");
    const auto restarted = run_to(40, "restarted", (dir / "half.ck").string());
    EXPECT_EQ(restarted["restart"]["step"], 20);
    EXPECT_EQ(straight["max_error"].get<double>(), restarted["max_error"].get<double>());
    const io::Checkpoint a = io::read_checkpoint((dir / "straight.ck").string()),
                         b = io::read_checkpoint((dir / "restarted.ck").string());
    EXPECT_EQ(a.field_names, (std::vector<std::string>{"u"}));
    EXPECT_EQ(a.interiors, b.interiors);
    const io::VtiField v = io::read_vti((dir / "straight/heat2d_000040.vti").string());
    EXPECT_EQ(v.values, interior_values(a.field<double>(0)));
    EXPECT_EQ(io::read_png((dir / "straight/heat2d_000040.png").string()).width, 33);
    fs::remove_all(dir);
}

}  // namespace
}  // namespace strata
