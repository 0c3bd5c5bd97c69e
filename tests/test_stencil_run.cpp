// Stencil files run as models (src/stencil: codegen, build): the generated model against the
// built-in one it restates (bitwise), against the update computed here by hand (a pointwise field,
// the mirror boundary, a read of a new value), and the run-time build: its cache, a corrupted
// entry, the errors for what the engines cannot take yet. The tests share the cache the build
// points them to (STRATA_CACHE_DIR, tests/CMakeLists.txt), so each file compiles once per build.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>

#include "stencil/build.hpp"
#include "stencil/rtc.hpp"
#include "strata/core/error.hpp"
#include "strata/engine.hpp"
#include "strata/models/aliev_panfilov.hpp"
#include "strata/models/heat2d.hpp"
#include "strata/models/heat3d.hpp"
#include "strata/models/wave3d.hpp"
#include "test_util.hpp"
#include "wave8_twin.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

using test::exact;
using test::stencil_example;
std::string example(const std::string& name) { return stencil_example(name); }

template <class T>
std::unique_ptr<TypedEngine<T>> engine(const ModelInfo& m, const Problem& p, Backend b, const State<T>* init) {
    return test::model_engine<T>(m, p, b, {}, init);
}

// heat2d.stencil writes the built-in heat2d's update in its order: with the built-in's c, the two
// give the same bits from the same (random) state, in both precisions, on both CPU backends.
template <class T>
void heat_equals_builtin(Backend backend) {
    const Heat2dProblem builtin(Heat2dParams::make(37, 23));
    const ModelInfo& m = find_model(example("heat2d.stencil"));
    const auto generated = m.box(Params{{"params", "c=" + exact(builtin.params.c)}}, 37, 23, 1);
    const State<T> init = test::random_state_of<T>("u", builtin.extent(), 5, false);
    auto a = make_engine<T>(builtin, backend, {}, &init);
    auto b = engine<T>(m, *generated, backend, &init);
    a->advance(13);
    b->advance(13);
    EXPECT_TRUE(test::bitwise_equal(a->field("u"), b->field("u")));
    EXPECT_EQ(b->step(), 13);
    EXPECT_EQ(b->kernel_info().min_bytes_per_cell, int(2 * sizeof(T)));
}
TEST(StencilRun, HeatFileEqualsBuiltinBitwiseCpuFp64) { heat_equals_builtin<double>(Backend::cpu); }
TEST(StencilRun, HeatFileEqualsBuiltinBitwiseOmpFp32) { heat_equals_builtin<float>(Backend::omp); }
TEST(StencilRun, HeatFileEqualsBuiltinBitwiseAt16Bits) {  // (the arithmetic fp32, the stores rounded alike)
    heat_equals_builtin<f16>(Backend::cpu);
    heat_equals_builtin<bf16>(Backend::omp);
}

// apf.stencil writes the built-in apf's update in its order (a let for the diffusion, then the
// reaction), and its alpha and dt follow from the mesh as the classic program's do: the same bits
// on both CPU backends, both precisions, from the same random state.
template <class T>
void apf_equals_builtin(Backend backend) {
    const ApfParams p = ApfParams::for_mesh(40, 26);  // 41 x 27 points
    const ApfProblem builtin(p);
    const ModelInfo& m = find_model(example("apf.stencil"));
    const auto generated = m.box(Params{}, p.n + 1, p.m + 1, 1);
    EXPECT_EQ(generated->dt(), p.dt);
    const State<T> init = test::random_apf_state<T>(p, 9);
    auto a = make_engine<T>(builtin, backend, {}, &init);
    auto b = engine<T>(m, *generated, backend, &init);
    a->advance(17);
    b->advance(17);
    EXPECT_TRUE(test::bitwise_equal(a->field("E"), b->field("E")));
    EXPECT_TRUE(test::bitwise_equal(a->field("R"), b->field("R")));
    EXPECT_EQ(a->observables()["max_norm"], b->observables()["max_E"]);
    EXPECT_EQ(a->observables()["l2norm"], b->observables()["rms_E"]);
}
TEST(StencilRun, ApfFileEqualsBuiltinBitwiseCpuFp64) { apf_equals_builtin<double>(Backend::cpu); }
TEST(StencilRun, ApfFileEqualsBuiltinBitwiseOmpFp32) { apf_equals_builtin<float>(Backend::omp); }
TEST(StencilRun, ApfFileEqualsBuiltinBitwiseAt16Bits) {
    apf_equals_builtin<f16>(Backend::omp);
    apf_equals_builtin<bf16>(Backend::cpu);
}

// -t/--time: the classic schedule (t += dt while t < T) in steps of the param dt, so apf.stencil
// stops where the built-in does, at the same time; refused beside --steps, and without a dt.
TEST(StencilRun, TimeStopsApfFileWhereTheBuiltinStops) {
    const ModelInfo& apf = find_model("apf");
    const ModelInfo& file = find_model(example("apf.stencil"));
    for (const double T : {1.0, 7.3, 10.0}) {
        const auto a = apf.problem(Params{{"n", std::int64_t(40)}, {"t_final", T}}, std::cerr);
        const auto b = file.problem(Params{{"n", std::int64_t(41)}, {"time", T}}, std::cerr);
        EXPECT_EQ(a->steps(), b->steps()) << "T = " << T;
        EXPECT_EQ(a->t_end(), b->t_end()) << "T = " << T;
        EXPECT_GE(b->t_end(), T);
        EXPECT_LT(b->t_end() - b->dt(), T);
    }
    EXPECT_THROW(file.problem(Params{{"time", 1.0}, {"steps", std::int64_t(3)}}, std::cerr), UsageError);
    EXPECT_THROW(file.problem(Params{{"time", 1.0}, {"params", std::string("dt=0")}}, std::cerr), UsageError);
    EXPECT_THROW(find_model(example("heat7.stencil")).problem(Params{{"time", 1.0}}, std::cerr), UsageError);
    try {  // a T past kMaxTimedSteps steps: refused, in the file's words (steps, --steps), not apf's
        file.problem(Params{{"time", 1e12}}, std::cerr);
        ADD_FAILURE() << "-t 1e12 was accepted";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("steps of dt"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("use --steps"), std::string::npos) << e.what();
    }
}

// barkley.stencil: v through its neighbourhood with the mirror boundary, w at the cell only,
// reading v' (v's new value). One step from a random state against the formula evaluated here.
TEST(StencilRun, PointwiseFieldMirrorAndNewValueMatchTheFormula) {
    const ModelInfo& m = find_model(example("barkley.stencil"));
    ASSERT_EQ(m.fields.size(), 2u);
    EXPECT_EQ(m.fields[1].role, FieldRole::state);
    const auto p = m.box(Params{{"params", std::string("dt=0.05")}}, 11, 7, 1);
    const Extent e = p->extent();
    HostField<double> v(e), w(e);
    test::fill_random(v, 1);
    test::fill_random(w, 2);
    const State<double> init = test::state<double>({{"v", v}, {"w", w}});
    for (Backend b : {Backend::cpu, Backend::omp}) {
        auto eng = engine<double>(m, *p, b, &init);
        eng->advance(1);
        const HostField<double> v1 = eng->field("v"), w1 = eng->field("w");
        const double D = 1, a = 0.7, bb = 0.02, eps = 0.02, dt = 0.05;
        auto at = [&](int i, int j) {  // the mirror: a ghost reads the cell two inward
            i = i < 0 ? 1 : i >= e.nx ? e.nx - 2 : i;
            j = j < 0 ? 1 : j >= e.ny ? e.ny - 2 : j;
            return v.at(i, j);
        };
        for (int j = 0; j < e.ny; ++j)
            for (int i = 0; i < e.nx; ++i) {
                const double c = at(i, j), ww = w.at(i, j);
                const double lap = ((at(i - 1, j) + at(i + 1, j)) + (at(i, j - 1) + at(i, j + 1))) - 4 * c;
                const double vn = c + dt * (D * lap + c * (1 - c) * (c - (ww + bb) / a) / eps);
                ASSERT_EQ(v1.at(i, j), vn) << to_string(b) << " at " << i << "," << j;
                ASSERT_EQ(w1.at(i, j), ww + dt * (vn - ww)) << to_string(b) << " at " << i << "," << j;
            }
    }
}

// heat-periodic.stencil on odd sizes: a neighbour beyond a face is the cell at the opposite face.
TEST(StencilRun, PeriodicBoundaryWrapsOnOddSizes) {
    const ModelInfo& m = find_model(example("heat-periodic.stencil"));
    EXPECT_TRUE(m.refused.empty());  // temporal too: its tiles load their cells beyond an edge from a period away
    const auto p = m.box(Params{}, 9, 7, 1);
    HostField<double> u(p->extent());
    test::fill_random(u, 4);
    const State<double> init = test::state_of("u", u);
    for (Backend b : {Backend::cpu, Backend::omp}) {
        auto eng = engine<double>(m, *p, b, &init);
        eng->advance(1);
        const HostField<double> u1 = eng->field("u");
        auto at = [&](int i, int j) { return u.at((i + 9) % 9, (j + 7) % 7); };
        for (int j = 0; j < 7; ++j)
            for (int i = 0; i < 9; ++i) {
                const double c = at(i, j);
                const double lap = ((at(i - 1, j) + at(i + 1, j)) + (at(i, j - 1) + at(i, j + 1))) - 4 * c;
                ASSERT_EQ(u1.at(i, j), c + 0.2 * lap) << to_string(b) << " at " << i << "," << j;
            }
        EXPECT_EQ(u1.at(-1, 3), u1.at(8, 3));  // the ghost layer a caller sees is the wrapped cells
        EXPECT_EQ(u1.at(4, 7), u1.at(4, 0));
    }
}

// The model's own initial values (expressions of the cell centre), its report and --params.
TEST(StencilRun, InitialValuesParamsAndReport) {
    const ModelInfo& m = find_model(example("jacobi.stencil"));
    EXPECT_EQ(&m, &find_model("jacobi"));  // registered under the file's stem too
    EXPECT_EQ(&m, &find_model(example("jacobi.stencil")));  // the same file, unchanged: the same model
    const auto p = m.problem(Params{{"n", std::int64_t(20)}, {"steps", std::int64_t(0)}}, std::cerr);
    auto eng = engine<double>(m, *p, Backend::cpu, nullptr);
    const HostField<double> s = eng->field("s");
    // s = 1 where |x - 0.5| < 0.05 and |y - 0.5| < 0.05, x = (i + 0.5) / 20: i = 9 and 10.
    for (int j = 0; j < 20; ++j)
        for (int i = 0; i < 20; ++i)
            EXPECT_EQ(s.at(i, j), (i == 9 || i == 10) && (j == 9 || j == 10) ? 1.0 : 0.0) << i << "," << j;
    EXPECT_EQ(eng->observables()["max_s"], 1.0);
    EXPECT_DOUBLE_EQ(eng->observables()["rms_s"], std::sqrt(4.0 / 400));
    EXPECT_THROW(m.problem(Params{{"params", std::string("q=1")}}, std::cerr), UsageError);
}

// gray-scott.stencil (two fields read through neighbourhoods, periodic) on the CPU against the
// update written out here, on an odd grid with random fields; cpu and omp bitwise equal.
TEST(StencilRun, TwoNeighbourhoodFieldsMatchTheFormula) {
    const ModelInfo& m = find_model(example("gray-scott.stencil"));
    ASSERT_EQ(m.fields.size(), 2u);
    EXPECT_EQ(m.fields[1].role, FieldRole::stencil);
    const int nx = 13, ny = 9;
    const auto p = m.box(Params{{"params", std::string("F=0.04,k=0.06")}}, nx, ny, 1);
    HostField<double> u(p->extent()), v(p->extent());
    test::fill_random(u, 3);
    test::fill_random(v, 4, 0.0, 0.5);
    State<double> init = test::state_of("u", u);
    init.fields.emplace_back("v", v);
    auto cpu = test::model_engine<double>(m, *p, Backend::cpu, {}, &init);
    auto omp = test::model_engine<double>(m, *p, Backend::omp, {}, &init);
    const int steps = 4;
    cpu->advance(steps);
    omp->advance(steps);
    const double Du = 0.16, Dv = 0.08, F = 0.04, k = 0.06, dt = 1.0;
    for (int s = 0; s < steps; ++s) {
        HostField<double> un = u, vn = v;
        auto at = [&](const HostField<double>& f, int i, int j) { return f.at((i + nx) % nx, (j + ny) % ny); };
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                const double a = u.at(i, j), b = v.at(i, j);
                const double lu = at(u, i - 1, j) + at(u, i + 1, j) + at(u, i, j - 1) + at(u, i, j + 1) - 4 * a;
                const double lv = at(v, i - 1, j) + at(v, i + 1, j) + at(v, i, j - 1) + at(v, i, j + 1) - 4 * b;
                un.at(i, j) = a + dt * (Du * lu - a * b * b + F * (1 - a));
                vn.at(i, j) = b + dt * (Dv * lv + a * b * b - (F + k) * b);
            }
        u = un;
        v = vn;
    }
    EXPECT_LE(max_relative_error(cpu->field("u"), u), 1e-13);
    EXPECT_LE(max_relative_error(cpu->field("v"), v), 1e-13);
    EXPECT_TRUE(test::bitwise_equal(cpu->field("u"), omp->field("u")));
    EXPECT_TRUE(test::bitwise_equal(cpu->field("v"), omp->field("v")));
}

std::string message(const std::function<void()>& f) {
    try {
        f();
    } catch (const UsageError& e) {
        return e.what();
    }
    return "(no UsageError)";
}

// What the engines cannot take yet is refused at the line and column that asks for it.
TEST(StencilRun, WhatCannotRunYetIsRefusedWhereTheFileAsksForIt) {
    auto refusal = [](const std::string& name, const std::string& text) {
        const fs::path f = fs::temp_directory_path() / (name + "-" + std::to_string(getpid()) + ".stencil");
        std::ofstream(f) << text;
        const std::string what = message([&] { find_model(f.string()); });
        fs::remove(f);
        EXPECT_NE(what.find("^"), std::string::npos) << what;
        return what;
    };
    const std::string mirror = refusal("wide-mirror", "dims 2\nfield u = 0\nboundary mirror\nu' = u + u[2,0]\n");
    EXPECT_NE(mirror.find(".stencil:3:1: the mirror boundary"), std::string::npos) << mirror;
    EXPECT_NE(mirror.find("reads radius 2"), std::string::npos) << mirror;
    const std::string coef =
        refusal("coef-offset", "dims 2\ncoefficient k = 1\nfield u = 0\nu' = u + k[1,0] * lap(u)\n");
    EXPECT_NE(coef.find(".stencil:4:10: a coefficient read at an offset cannot run yet"), std::string::npos) << coef;
    const std::string where = refusal("position", "dims 2\nfield u = 0\nu' = u + x * lap(u)\n");
    EXPECT_NE(where.find(".stencil:3:10: an update that depends on the position cannot run yet"), std::string::npos)
        << where;
    EXPECT_NO_THROW(find_model(example("variable-wave.stencil")));  // 3D, radius 2, a coefficient
    // Two fields of radius 4 in 3D: smem's tile and stream's ring would not fit in shared memory.
    const fs::path wide = fs::temp_directory_path() / ("strata-wide3d-" + std::to_string(getpid()) + ".stencil");
    std::ofstream(wide) << "dims 3\nfield u = 0\nfield v = 0\nu' = u[4,0,0] + v[0,0,-4]\nv' = v[0,4,0] + u\n";
    const ModelInfo& w = find_model(wide.string());
    fs::remove(wide);
    EXPECT_TRUE(w.cells_only);
    std::map<std::string, std::string> refused(w.refused.begin(), w.refused.end());
    EXPECT_NE(refused["smem"].find("75 KB of shared memory in fp64 (2 field(s)); 48 KB is the most"), std::string::npos)
        << refused["smem"];
    EXPECT_NE(refused["stream"].find("165 KB of shared memory in fp64 (2 field(s)); 99 KB is the most"),
              std::string::npos)
        << refused["stream"];
    EXPECT_NE(refused["cached"].find("324 registers in fp64 (2 field(s)); 128 is the most"), std::string::npos)
        << refused["cached"];
    EXPECT_NE(refused["planes"].find("cell by cell"), std::string::npos) << refused["planes"];
    // A periodic boundary a period away needs the grid at least as wide as the radius.
    const fs::path ring = fs::temp_directory_path() / ("strata-ring-" + std::to_string(getpid()) + ".stencil");
    std::ofstream(ring) << "dims 2\nfield u = 0\nboundary periodic\nu' = u[4,0] + u\n";
    const ModelInfo& r = find_model(ring.string());
    fs::remove(ring);
    const std::map<std::string, std::string> refused_r(r.refused.begin(), r.refused.end());
    ASSERT_TRUE(refused_r.count("temporal"));  // the 2D temporal kernel reaches radius 2
    EXPECT_NE(refused_r.at("temporal").find("up to 2 fields read through neighbourhoods, of radius up to 2: this "
                                            "model reads 1, of radius 4"),
              std::string::npos)
        << refused_r.at("temporal");
    const std::string narrow = message([&] { r.box(Params{}, 9, 3, 1); });
    EXPECT_NE(narrow.find("a periodic grid needs at least the stencil's radius (4) cells along every axis, and this "
                          "one has 3"),
              std::string::npos)
        << narrow;
    EXPECT_NO_THROW(r.box(Params{}, 9, 4, 1));
    const std::string none = message([] { find_model("/nonexistent/x.stencil"); });
    EXPECT_NE(none.find("cannot open the stencil file"), std::string::npos) << none;
    const auto dir =
        std::filesystem::temp_directory_path() / ("strata_folder_" + std::to_string(::getpid()) + ".stencil");
    std::filesystem::create_directories(dir);
    const std::string folder = message([&] { find_model(dir.string()); });
    EXPECT_NE(folder.find("is a folder: name a .stencil file"), std::string::npos) << folder;
    std::filesystem::remove(dir);
}

// heat7.stencil writes the built-in heat3d's 7-point update in its order: with the built-in's c,
// the same bits from the same random state on an odd box, both precisions, both CPU backends.
template <class T>
void heat7_equals_builtin(Backend backend, const std::string& file = example("heat7.stencil")) {
    SCOPED_TRACE(file);
    const Heat3dProblem builtin(HeatParams::make_box(19, 13, 11, HeatStencil::p7));
    const ModelInfo& m = find_model(file);
    EXPECT_FALSE(m.cells_only);  // heat3d's interface (codegen.cpp)
    const auto generated = m.box(Params{{"params", "c=" + exact(builtin.params.c)}}, 19, 13, 11);
    const State<T> init = test::random_state_of<T>("u", builtin.extent(), 6, false);
    auto a = make_engine<T>(builtin, backend, {}, &init);
    auto b = engine<T>(m, *generated, backend, &init);
    a->advance(9);
    b->advance(9);
    EXPECT_TRUE(test::bitwise_equal(a->field("u"), b->field("u")));
    EXPECT_EQ(b->kernel_info().flops_per_cell, 9);
}
TEST(StencilRun, Heat7FileEqualsBuiltinBitwiseCpuFp64) { heat7_equals_builtin<double>(Backend::cpu); }
TEST(StencilRun, Heat7FileEqualsBuiltinBitwiseOmpFp32) { heat7_equals_builtin<float>(Backend::omp); }
TEST(StencilRun, Heat7FileEqualsBuiltinBitwiseAt16Bits) {
    heat7_equals_builtin<f16>(Backend::cpu);
    heat7_equals_builtin<bf16>(Backend::omp);
}

// diffusion3d.stencil, 3D heat as `u + c * lap(u)`: lap sums as heat3d does, so the file has
// heat3d's interface (heat3d's ladder, temporal and the TMA included) and bits.
TEST(StencilRun, LapHeatFileEqualsBuiltinBitwise) {
    heat7_equals_builtin<double>(Backend::cpu, example("diffusion3d.stencil"));
    heat7_equals_builtin<float>(Backend::omp, example("diffusion3d.stencil"));
#ifdef STRATA_HAVE_CUDA
    const std::vector<std::string> kernels =
        kernel_names(Backend::cuda, find_model(example("diffusion3d.stencil")).name);
    EXPECT_NE(std::find(kernels.begin(), kernels.end(), "temporal"), kernels.end());
#endif
}

// A 3D heat file whose faces are summed pairwise axis by axis (tests/stencils/pairs3d.stencil) is
// one weighted sum: its model regroups the additions plane by plane, into heat3d's own (codegen.cpp:
// linear_split), and gives heat3d's bits, where the file's order would round apart by an ulp.
TEST(StencilRun, PairsHeatFileGetsHeat3dsAdditions) {
    heat7_equals_builtin<double>(Backend::cpu, test::stencil_fixture("pairs3d.stencil"));
    heat7_equals_builtin<float>(Backend::omp, test::stencil_fixture("pairs3d.stencil"));
}

// A fixture (tests/stencils/NAME) beside its twin read cell by cell in the file's order (the
// fixed boundary at 0, which keeps a file cells-only with the same ghosts): u of each after 9 steps
// from the same random state on an odd box. The fixture is no cells-only model, the twin is.
template <class T>
std::pair<HostField<T>, HostField<T>> beside_cells_twin(const std::string& name, Backend backend) {
    const std::string file = test::stencil_fixture(name);
    const ModelInfo& m = find_model(file);
    EXPECT_FALSE(m.cells_only) << name;
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    const fs::path twin = fs::temp_directory_path() / ("strata-" + name.substr(0, name.find('.')) + "-cells-" +
                                                       std::to_string(getpid()) + ".stencil");
    std::ofstream(twin) << "boundary fixed 0\n" << text.str();
    const ModelInfo& c = find_model(twin.string());
    fs::remove(twin);
    EXPECT_TRUE(c.cells_only) << name;
    const auto a = m.box(Params{}, 19, 13, 11), b = c.box(Params{}, 19, 13, 11);
    const State<T> init = test::random_state_of<T>("u", a->extent(), 8, false);
    auto ea = engine<T>(m, *a, backend, &init), eb = engine<T>(c, *b, backend, &init);
    ea->advance(9);
    eb->advance(9);
    return {ea->field("u"), eb->field("u")};
}

// A file that reads heat3d's faces sum pairwise, twice, once inside a product
// (tests/stencils/faces3d.stencil: no one term is a weighted sum) gets heat3d's PlaneSums in its
// own order: the same bits as its cells-only twin, both precisions, both CPU backends.
template <class T>
void faces_equal_cells(Backend backend) {
    const auto [file, cells] = beside_cells_twin<T>("faces3d.stencil", backend);
    EXPECT_TRUE(test::bitwise_equal(file, cells)) << "max relative difference " << max_relative_error(file, cells);
}
TEST(StencilRun, FacesSumReadTwiceGetsPlaneSumsWithItsBitsCpuFp64) {
    faces_equal_cells<double>(Backend::cpu);
}
TEST(StencilRun, FacesSumReadTwiceGetsPlaneSumsWithItsBitsOmpFp32) { faces_equal_cells<float>(Backend::omp); }

// A file whose neighbourhood is one weighted sum, in an order of its own (tests/stencils/box3d.stencil:
// a 27-point box, weights apart for z-1 and z+1; upwind3d.stencil: a star whose whole update is
// linear) gets heat3d's interface with its own plane sums (codegen.cpp: linear_split): against its
// cells-only twin, the same values within a few ulps (the sums regrouped plane by plane), both
// precisions, both CPU backends, and at 16 bits.
template <class T>
void sums_match_cells(const std::string& name, Backend backend) {
    const auto [file, cells] = beside_cells_twin<T>(name, backend);
    const double tol = sizeof(T) == 8           ? 1e-13
                       : sizeof(T) == 4         ? 1e-5
                       : std::is_same_v<T, f16> ? 8.0 / 2048
                                                : 8.0 / 256;
    EXPECT_LE(max_relative_error(file, cells), tol) << name;
    EXPECT_FALSE(test::bitwise_equal(file, HostField<T>(file.extent)));  // (not all zero)
}
TEST(StencilRun, WeightedSumsGetTheirOwnPlaneSumsCpuFp64) {
    sums_match_cells<double>("box3d.stencil", Backend::cpu);
    sums_match_cells<double>("upwind3d.stencil", Backend::cpu);
}
TEST(StencilRun, WeightedSumsGetTheirOwnPlaneSumsOmpFp32) {
    sums_match_cells<float>("box3d.stencil", Backend::omp);
    sums_match_cells<float>("upwind3d.stencil", Backend::omp);
}
TEST(StencilRun, WeightedSumsGetTheirOwnPlaneSumsAt16Bits) {
    sums_match_cells<f16>("box3d.stencil", Backend::omp);
    sums_match_cells<bf16>("upwind3d.stencil", Backend::cpu);
}

// wave8.stencil writes wave3d's leapfrog and 8th-order Laplacian in its order: with wave3d's vdt2
// (a velocity varying per cell), its weights as params, no sponge and no sources, the same bits
// from the same random state (q: wave3d's prev) on an odd box, both precisions, both CPU backends.
// It has wave3d's interface (codegen.cpp: leapfrog_split), not cells.
template <class T>
void wave8_equals_builtin(Backend backend) {
    const test::Wave8Twin<T> twin(19, 13, 11);
    EXPECT_FALSE(twin.model->cells_only);
    auto a = make_engine<T>(twin.builtin, backend, {}, &twin.builtin_init);
    auto b = engine<T>(*twin.model, *twin.generated, backend, &twin.generated_init);
    a->advance(8);
    b->advance(8);
    EXPECT_TRUE(test::bitwise_equal(a->field("p"), b->field("p")));
    EXPECT_TRUE(test::bitwise_equal(a->field("prev"), b->field("q")));
}
TEST(StencilRun, Wave8FileEqualsBuiltinBitwiseCpuFp64) { wave8_equals_builtin<double>(Backend::cpu); }
TEST(StencilRun, Wave8FileEqualsBuiltinBitwiseOmpFp32) { wave8_equals_builtin<float>(Backend::omp); }
TEST(StencilRun, Wave8FileEqualsBuiltinBitwiseAt16Bits) {
    wave8_equals_builtin<f16>(Backend::omp);
    wave8_equals_builtin<bf16>(Backend::cpu);
}

// tests/stencils/mixed3d.stencil, a cells-only 3D model of everything at once (two fields through
// neighbourhoods of radius 2 with a box offset, two at their cell, a coefficient of the position,
// the periodic boundary), on an odd box just wider than the radius: one step against the formula
// written out here; cpu and omp bitwise equal.
TEST(StencilRun, CellsOnlyModelMatchesTheFormula) {
    const ModelInfo& m = find_model(test::stencil_fixture("mixed3d.stencil"));
    EXPECT_TRUE(m.cells_only);
    EXPECT_EQ(m.radius, 2);
    ASSERT_EQ(m.fields.size(), 5u);  // u, v through neighbourhoods, w, s at the cell, k
    EXPECT_EQ(m.fields[1].role, FieldRole::stencil);
    EXPECT_EQ(m.fields[3].role, FieldRole::state);
    EXPECT_EQ(m.fields[4].role, FieldRole::coefficient);
    const int nx = 7, ny = 5, nz = 6;
    const auto p = m.box(Params{}, nx, ny, nz);
    const Extent e = p->extent();
    std::vector<std::pair<std::string, HostField<double>>> fields;
    for (const char* f : {"u", "v", "w", "s"}) {
        HostField<double> h(e);
        test::fill_random(h, std::uint32_t(f[0]));
        fields.emplace_back(f, h);
    }
    const State<double> init = test::state<double>(fields);
    const HostField<double>&u = fields[0].second, &v = fields[1].second, &w = fields[2].second, &s = fields[3].second;
    auto at = [](const HostField<double>& f, int i, int j, int k) {
        const Extent& x = f.extent;
        return f.at((i + x.nx) % x.nx, (j + x.ny) % x.ny, (k + x.nz) % x.nz);
    };
    std::unique_ptr<TypedEngine<double>> first;
    for (Backend b : {Backend::cpu, Backend::omp}) {
        auto eng = engine<double>(m, *p, b, &init);
        eng->advance(1);
        for (int k = 0; k < nz; ++k)
            for (int j = 0; j < ny; ++j)
                for (int i = 0; i < nx; ++i) {
                    const double x = (i + 0.5) / nx, y = (j + 0.5) / ny, z = (k + 0.5) / nz;
                    const double kk = (0.5 + x * y) + z, c = u.at(i, j, k), a = 0.1;
                    const double un =
                        (c + (a * kk) * ((at(u, i + 2, j, k) + at(u, i, j - 2, k + 1)) - 2 * c)) + w.at(i, j, k);
                    const double vn = (v.at(i, j, k) + a * (at(v, i - 1, j, k) - v.at(i, j, k))) + at(u, i, j, k - 2);
                    const double wn = 0.5 * w.at(i, j, k) + at(u, i + 1, j + 1, k + 1);
                    ASSERT_EQ(eng->field("u").at(i, j, k), un) << to_string(b) << " at " << i << "," << j << "," << k;
                    ASSERT_EQ(eng->field("v").at(i, j, k), vn) << to_string(b) << " at " << i << "," << j << "," << k;
                    ASSERT_EQ(eng->field("w").at(i, j, k), wn) << to_string(b) << " at " << i << "," << j << "," << k;
                    ASSERT_EQ(eng->field("s").at(i, j, k), s.at(i, j, k) * 0.9 + wn) << to_string(b);
                }
        if (!first) {
            first = std::move(eng);
            first->advance(4);
        } else {
            eng->advance(4);
            for (const char* f : {"u", "v", "w", "s"}) EXPECT_TRUE(test::bitwise_equal(first->field(f), eng->field(f))) << f;
        }
    }
}

// `boundary fixed V`: every ghost cell reads V, in both of a field's buffers (two steps), on an
// odd grid; cpu and omp alike.
TEST(StencilRun, FixedBoundaryHoldsTheGhostsAtItsValue) {
    const ModelInfo& m = find_model(test::stencil_fixture("fixed3d.stencil"));
    EXPECT_TRUE(m.cells_only);
    const int nx = 6, ny = 5, nz = 4;
    const auto p = m.box(Params{}, nx, ny, nz);
    HostField<double> u(p->extent());
    test::fill_random(u, 8);
    const State<double> init = test::state_of("u", u);
    auto step = [&](const HostField<double>& in) {
        auto at = [&](int i, int j, int k) {
            return i < 0 || j < 0 || k < 0 || i >= nx || j >= ny || k >= nz ? 1.5 : in.at(i, j, k);
        };
        HostField<double> out = in;
        for (int k = 0; k < nz; ++k)
            for (int j = 0; j < ny; ++j)
                for (int i = 0; i < nx; ++i) {
                    const double c = in.at(i, j, k);
                    out.at(i, j, k) = c + 0.05 * (((at(i + 1, j + 1, k + 1) + at(i - 1, j, k)) + at(i, j - 1, k)) - 3 * c);
                }
        return out;
    };
    const HostField<double> two = step(step(u));
    for (Backend b : {Backend::cpu, Backend::omp}) {
        auto eng = engine<double>(m, *p, b, &init);
        eng->advance(2);
        const HostField<double> got = eng->field("u");
        for (int k = 0; k < nz; ++k)
            for (int j = 0; j < ny; ++j)
                for (int i = 0; i < nx; ++i) ASSERT_EQ(got.at(i, j, k), two.at(i, j, k)) << to_string(b) << " " << i << "," << j << "," << k;
    }
}

// A coefficient from a raw file next to the stencil file: float32 or float64 by its size; a file
// of another size, or none, is an error at the coefficient's line. A field's initial values too.
TEST(StencilRun, CoefficientFromAFile) {
    const fs::path dir = fs::temp_directory_path() / ("strata-coef-" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "diffuse.stencil") << "dims 2\ncoefficient k = file(\"k.raw\")\nfield u = 0\nu' = u + k * lap(u)\n";
    const ModelInfo& m = find_model((dir / "diffuse.stencil").string());
    const int nx = 5, ny = 4;
    const auto p = m.box(Params{}, nx, ny, 1);
    HostField<double> u(p->extent());
    test::fill_random(u, 3);
    const State<double> init = test::state_of("u", u);
    std::vector<double> k(nx * ny);
    for (std::size_t n = 0; n < k.size(); ++n) k[n] = 0.01 * double(n + 1);
    auto write = [&](auto type_tag, std::size_t count) {
        using V = decltype(type_tag);
        std::vector<V> raw(k.begin(), k.begin() + std::ptrdiff_t(std::min(count, k.size())));
        raw.resize(count);
        std::ofstream(dir / "k.raw", std::ios::binary)
            .write(reinterpret_cast<const char*>(raw.data()), std::streamsize(raw.size() * sizeof(V)));
    };
    for (bool single : {true, false}) {
        single ? write(float(0), k.size()) : write(double(0), k.size());
        auto eng = engine<double>(m, *p, Backend::cpu, &init);
        eng->advance(1);
        auto at = [&](int i, int j) { return i < 0 || j < 0 || i >= nx || j >= ny ? 0.0 : u.at(i, j); };
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                const double kk = single ? double(float(k[std::size_t(j * nx + i)])) : k[std::size_t(j * nx + i)];
                const double c = u.at(i, j);
                const double lap = ((at(i - 1, j) + at(i + 1, j)) + (at(i, j - 1) + at(i, j + 1))) - 4 * c;
                ASSERT_EQ(eng->field("u").at(i, j), c + kk * lap) << (single ? "float32" : "float64") << " " << i << "," << j;
            }
    }
    // A field's initial values from a file, the same way (the rest of the state from expressions).
    std::ofstream(dir / "start.stencil") << "dims 2\nfield u = file(\"k.raw\")\nfield v = 2\nu' = u + 0.1 * lap(u)\nv' = v\n";
    const ModelInfo& start = find_model((dir / "start.stencil").string());
    const auto sp = start.box(Params{}, nx, ny, 1);
    for (Backend b : {Backend::cpu, Backend::omp}) {
        auto eng = engine<double>(start, *sp, b, nullptr);
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                EXPECT_EQ(eng->field("u").at(i, j), k[std::size_t(j * nx + i)]) << i << "," << j;
                EXPECT_EQ(eng->field("v").at(i, j), 2.0);
            }
    }
    // Stored times a state scale (linear: u + 0.1 lap(u), v): the file's values times it, before
    // any rounding; values() gives the model's.
    EXPECT_TRUE(start.linear);
    sp->set_state_scale(1024);
    for (Backend b : {Backend::cpu, Backend::omp}) {
        auto eng = engine<double>(start, *sp, b, nullptr);
        const HostField<double> u = eng->field("u"), v = eng->field("v");
        const std::vector<double> model = eng->values("u");
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                EXPECT_EQ(u.at(i, j), 1024 * k[std::size_t(j * nx + i)]) << i << "," << j;
                EXPECT_EQ(model[std::size_t(j * nx + i)], k[std::size_t(j * nx + i)]) << i << "," << j;
                EXPECT_EQ(v.at(i, j), 2048.0);
            }
    }
    sp->set_state_scale(1);
    write(float(0), 3);
    const std::string size = message([&] { engine<double>(m, *p, Backend::cpu, &init); });
    EXPECT_NE(size.find("diffuse.stencil:2:13: "), std::string::npos) << size;
    EXPECT_NE(size.find("holds 12 bytes; the 5 x 4 grid needs 80 (float32) or 160 (float64)"), std::string::npos) << size;
    fs::remove(dir / "k.raw");
    const std::string none = message([&] { engine<double>(m, *p, Backend::cpu, &init); });
    EXPECT_NE(none.find("cannot read"), std::string::npos) << none;
    fs::remove_all(dir);
}

// The CLI: a first run compiles, a second takes the cache, a corrupted entry is compiled again
// with a warning; `strata show` prints the generated model.
struct Cli {
    int rc;
    std::string out, err;
};
Cli cli(const fs::path& cache, const std::string& args, const std::string& env = "") {
    const fs::path out = cache / "out.txt", err = cache / "err.txt";
    const std::string cmd = env + "STRATA_CACHE_DIR='" + cache.string() + "' '" STRATA_CLI "' " + args + " > '" +
                            out.string() + "' 2> '" + err.string() + "'";
    const int status = std::system(cmd.c_str());
    auto slurp = [](const fs::path& p) {
        std::ifstream f(p);
        std::ostringstream s;
        s << f.rdbuf();
        return s.str();
    };
    return {WEXITSTATUS(status), slurp(out), slurp(err)};
}

// `show --cuda`'s table from a model's compiler log (ptxas's lines, as nvcc 13 writes them): each
// kernel's own properties, not those of a device function that follow them (sin's slow path after
// initial_state), rows sorted by precision and name, nothing from the host compiler's part.
TEST(StencilRun, KernelTableTakesEachKernelsOwnProperties) {
    const std::string init = "_ZN6strata4cuda13initial_stateIfNS_7stencil17m80f3ee24a88739225Model7InitialEEEvPT_NS0_"
                             "7DevGridET0_iNS_6WindowE",
                      naive = "_ZN6strata4cuda7naive3dINS_7stencil17m80f3ee24a88739226KernelIdEELi32ELi4ELi2EEEvT_NS6_"
                              "6FieldsENS0_7DevGridE";
    std::istringstream log(
        "== the registration and the CPU engines\n"
        "ptxas info    : Compiling entry function '" + naive + "' for 'sm_90'\n"
        "== the CUDA engines, fp64\n"
        "ptxas info    : Compiling entry function '" + naive + "' for 'sm_90'\n"
        "ptxas info    : Function properties for " + naive + "\n"
        "    0 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 1 barriers, 2176 bytes smem, 400 bytes cmem[0]\n"
        "== the CUDA engines, fp32\n"
        "ptxas info    : 272 bytes gmem\n"
        "ptxas info    : Compiling entry function '" + init + "' for 'sm_90'\n"
        "ptxas info    : Function properties for " + init + "\n"
        "    40 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 38 registers, used 0 barriers, 40 bytes cumulative stack size\n"
        "ptxas info    : Compile time = 0.913 ms\n"
        "ptxas info    : Function properties for __internal_trig_reduction_slowpathd\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "== the link\n");
    const std::string table = stencil::kernel_table(log);
    const std::string rows[] = {
        "fp32  sm_90         38          0/0         40            0  initial_state<float, Initial>\n",
        "fp64  sm_90        255         8/12          0         2176  naive3d<Kernel<double>, 32, 4, 2>\n"};
    EXPECT_NE(table.find(rows[0]), std::string::npos) << table;
    EXPECT_NE(table.find(rows[1]), std::string::npos) << table;
    EXPECT_LT(table.find(rows[0]), table.find(rows[1])) << table;
    EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 3) << table;  // the heading and the two kernels
    std::istringstream none("== the registration and the CPU engines\n== the link\n");
    EXPECT_EQ(stencil::kernel_table(none), "");
}

TEST(StencilRun, CliCompilesOnceThenCachesAndRecompilesACorruptedEntry) {
    const fs::path cache = fs::temp_directory_path() / ("strata-stencil-cache-" + std::to_string(getpid()));
    fs::remove_all(cache);
    fs::create_directories(cache);
    const std::string run = "run '" + example("heat2d.stencil") + "' -n 16 --steps 5 --backend cpu";
    const Cli first = cli(cache, run);
    ASSERT_EQ(first.rc, 0) << first.err;
    EXPECT_NE(first.err.find("compiling"), std::string::npos) << first.err;
    EXPECT_NE(first.out.find("max |u|"), std::string::npos) << first.out;
    const Cli second = cli(cache, run);
    ASSERT_EQ(second.rc, 0) << second.err;
    EXPECT_EQ(second.err, "");
    EXPECT_EQ(first.out.substr(first.out.find("End at"), 60), second.out.substr(second.out.find("End at"), 60));
    for (const auto& f : fs::directory_iterator(cache / "kernels"))
        if (f.path().extension() == ".so") std::ofstream(f.path(), std::ios::binary | std::ios::trunc) << "junk";
    const Cli third = cli(cache, run);
    ASSERT_EQ(third.rc, 0) << third.err;
    EXPECT_NE(third.err.find("does not load"), std::string::npos) << third.err;
    EXPECT_NE(third.err.find("compiling"), std::string::npos) << third.err;
#ifdef STRATA_HAVE_CUDA
    // A damaged cubin (one byte changed, the size kept) is compiled again too, not loaded. (With the
    // CUDA engines asked for: a machine without a GPU compiles none by default, a cache entry of
    // its own.)
    const std::string cuda = "STRATA_STENCIL_CUDA=1 ";
    ASSERT_EQ(cli(cache, run, cuda).rc, 0);
    for (const auto& f : fs::directory_iterator(cache / "kernels"))
        if (f.path().extension() == ".cubin") {
            std::fstream c(f.path(), std::ios::binary | std::ios::in | std::ios::out);
            const std::streamoff middle(fs::file_size(f.path()) / 2);
            c.seekg(middle);
            const char b = char(c.get() ^ 0xff);
            c.seekp(middle);
            c.put(b);
        }
    const Cli fourth = cli(cache, run, cuda);
    ASSERT_EQ(fourth.rc, 0) << fourth.err;
    EXPECT_NE(fourth.err.find("its NVRTC kernels are missing or damaged"), std::string::npos) << fourth.err;
    EXPECT_NE(fourth.err.find("compiling"), std::string::npos) << fourth.err;
    const Cli fifth = cli(cache, run, cuda);
    EXPECT_EQ(fifth.err, "");
#endif

    const Cli show = cli(cache, "show '" + example("heat2d.stencil") + "'");
    ASSERT_EQ(show.rc, 0) << show.err;
    EXPECT_NE(show.out.find("struct Kernel"), std::string::npos);
    EXPECT_NE(show.out.find("nb(-1, 0)"), std::string::npos);

    const Cli bad = cli(cache, "run '" + example("heat2d.stencil") + "' -n 16 --params q=1");
    EXPECT_EQ(bad.rc, 2);
    EXPECT_NE(bad.err.find("strata: error: --params: "), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find("has no param 'q'"), std::string::npos) << bad.err;
    const Cli check = cli(cache, "check '" + example("heat2d.stencil") + "' --backend omp -n 31");
    EXPECT_EQ(check.rc, 0) << check.out << check.err;
    EXPECT_NE(check.out.find("omp           1 fp64     0.00e+00  u        ok"), std::string::npos) << check.out;
    EXPECT_NE(check.out.find("all ok"), std::string::npos) << check.out;
#ifdef STRATA_HAVE_CUDA  // (a CPU-only build lists no CUDA kernels)
    const fs::path three = cache / "three.stencil";  // three neighbourhood fields: no temporal kernel
    std::ofstream(three) << "dims 2\nfield a = 0\nfield b = 0\nfield c = 0\na' = a + lap(b)\nb' = b + lap(c)\nc' = c + lap(a)\n";
    const Cli list = cli(cache, "run '" + three.string() + "' --backend cuda --kernel list");
    EXPECT_EQ(list.rc, 0) << list.err;
    EXPECT_NE(list.out.find("  multi4 "), std::string::npos) << list.out;
    EXPECT_EQ(list.out.find("  temporal"), std::string::npos) << list.out;
    EXPECT_NE(list.out.find("at most two fields read through neighbourhoods: this model reads 3"), std::string::npos)
        << list.out;
    // `show --cuda`: the source, then every kernel of both precisions with what ptxas gave it (the
    // compiler's log, parts and all: an empty part's log once lost every later part's).
    const Cli kernels = cli(cache, "show '" + example("heat2d.stencil") + "' --cuda");
    ASSERT_EQ(kernels.rc, 0) << kernels.err;
    EXPECT_NE(kernels.out.find("struct Kernel"), std::string::npos);
    for (const char* row : {R"(\nfp32 +sm_\d+ +[1-9]\d* +\d+/\d+ +\d+ +\d+  temporal2d<Kernel<float>, )",
                            R"(\nfp64 +sm_\d+ +[1-9]\d* +\d+/\d+ +\d+ +\d+  temporal2d<Kernel<double>, )",
                            R"(\nfp64 +sm_\d+ +[1-9]\d* +\d+/\d+ +\d+ +[1-9]\d*  smem2d<Kernel<double>, 32, 8>\n)"})
        EXPECT_TRUE(std::regex_search(kernels.out, std::regex(row))) << row << "\n" << kernels.out;
#else
    const Cli kernels = cli(cache, "show '" + example("heat2d.stencil") + "' --cuda");
    EXPECT_EQ(kernels.rc, 2);
    EXPECT_NE(kernels.err.find("this build has no CUDA backend"), std::string::npos) << kernels.err;
#endif
    // A file name a command line would not take as a name (the model's is cleaned); the same text
    // elsewhere is the same object: no compile.
    fs::copy_file(example("heat2d.stencil"), cache / "my heat=1.stencil");
    const Cli odd = cli(cache, "run '" + (cache / "my heat=1.stencil").string() + "' -n 16 --steps 5 --backend cpu");
    EXPECT_EQ(odd.rc, 0) << odd.err;
    EXPECT_EQ(odd.err, "");
    EXPECT_EQ(odd.out.substr(odd.out.find("End at"), 60), first.out.substr(first.out.find("End at"), 60));
    const Cli params = cli(cache, run + " --params k=2");
    EXPECT_EQ(params.rc, 2);
    EXPECT_NE(params.err.find("has no param 'k' (it has c)"), std::string::npos) << params.err;
    // A compiler that fails: one line naming the generated source (kept) and the log.
    const Cli broken = cli(cache, "run '" + example("jacobi.stencil") + "' -n 16 --steps 1");
    ASSERT_EQ(broken.rc, 0) << broken.err;  // (jacobi compiles)
    const std::string cc = "STRATA_CXX=/nonexistent/c++ ";
    const Cli failed = cli(cache, "run '" + example("barkley.stencil") + "' -n 16 --steps 1", cc);
    EXPECT_EQ(failed.rc, 1);
    EXPECT_NE(failed.err.find("compiling the model generated from"), std::string::npos) << failed.err;
    const std::string label = "the generated source: ";
    const std::size_t kept = failed.err.find(label);
    ASSERT_NE(kept, std::string::npos) << failed.err;
    const std::size_t from = kept + label.size();
    const std::string src = failed.err.substr(from, failed.err.find(',', from) - from);
    EXPECT_TRUE(fs::exists(src)) << src;
    fs::remove_all(cache);
}

#ifdef STRATA_HAVE_CUDA
// A stencil file's kernels are NVRTC's: every kernel its engines' launch sites name is in the table
// beside its shared object, with a symbol in a cubin there, and the loaded model's host side (the C++
// compiler's alone) holds them. One file of each shape: the 3D radius-1 ladder with every temporal
// depth and the TMA (heat7), the 2D ladder of a pointwise field and the mirror boundary (apf), of two
// neighbourhood fields (Gray-Scott, periodic), radius 4 (wave8), cells only (variable-wave). No GPU
// needed: the GPU tests launch them (StencilCuda).
TEST(StencilRun, NvrtcCompilesEveryKernelTheEnginesLaunch) {
    stencil::compile_cuda_engines();  // (find_model loads the files first: with a GPU or not)
    const std::map<std::string, std::vector<std::string>> files = {
        {"heat7.stencil",
         {"cached3d<", "temporal3d<", "tma3d<", "halo_copy<true, float, 1>", "halo_copy<false, double, 1>"}},
        {"apf.stencil", {"rows2d<", "temporal2d<", "fill_ghost_layer<double>"}},
        {"gray-scott.stencil", {"smem2d<", "temporal2d<", "halo_copy<true, float, 2>"}},
        {"wave8.stencil", {"wave_planes<", "wave_async<", "wave_tma<", "point_features<float>"}},
        {"variable-wave.stencil", {"naive3d<", "stream3d<"}}};
    for (const auto& [file, families] : files) {
        SCOPED_TRACE(file);
        const ModelInfo& m = find_model(example(file));
        const std::vector<std::string> names = stencil::launched_kernels(example(file));
        // Every engine's kernels besides its strategies', in every precision, and the families named.
        std::vector<std::string> expected = families;
        for (const char* t : {"float", "double", "strata::f16", "strata::bf16"})
            for (const std::string f : {"fill_interior", "pack_interior", "initial_state"})
                expected.push_back(f + "<" + t);
        expected.push_back("reduce_rows<strata::stencil::StencilObserver<");
        expected.push_back("reduce_partials<");
        for (const std::string& e : expected)
            EXPECT_TRUE(std::any_of(names.begin(), names.end(), [&](const auto& n) {
                return n.find("strata::cuda::" + e) == 0;
            })) << e;
        // The table: an image line per cubin (a program or more per precision: kernels.cpp), a row
        // per kernel.
        const fs::path object = stencil::load_stats(m).object;
        std::ifstream t(fs::path(object).replace_extension(".kernels"));
        ASSERT_TRUE(t);
        std::map<std::string, std::string> symbols;
        int images = 0;
        std::set<std::string> precisions;
        for (std::string l; std::getline(t, l);) {
            if (l.rfind("# image ", 0) == 0) {
                std::istringstream words(l.substr(8));
                std::string n, arch, precision;
                words >> n >> arch >> precision;
                precisions.insert(precision);
                EXPECT_GT(fs::file_size(
                              fs::path(object).replace_extension("." + std::to_string(images++) + ".cubin")),
                          1000u);
                continue;
            }
            const std::size_t a = l.find(' '), b = l.find(' ', a + 1);
            ASSERT_NE(b, std::string::npos) << l;
            symbols[l.substr(b + 1)] = l.substr(a + 1, b - a - 1);
        }
        EXPECT_GE(images, 4);
        EXPECT_EQ(precisions, (std::set<std::string>{"bf16", "fp16", "fp32", "fp64"}));
        for (const std::string& n : names) {
            ASSERT_TRUE(symbols.count(n)) << n;
            EXPECT_EQ(symbols[n].rfind("_Z", 0), 0u) << n << " " << symbols[n];
        }
    }
}
#endif

#ifdef STRATA_HAVE_CUDA
// A process that sees no GPU compiles a stencil file's CPU engines alone (one C++ compile, no
// NVRTC), and its cuda backend says so; STRATA_STENCIL_CUDA=1 compiles the CUDA engines there too,
// into an entry of their own.
TEST(StencilRun, WithoutAGpuOnlyTheCpuEnginesCompile) {
    if (cuda_device_count() > 0)
        GTEST_SKIP() << "this machine has a GPU: its stencil models get their CUDA engines";
    const fs::path cache = fs::temp_directory_path() / ("strata-stencil-cpu-" + std::to_string(getpid()));
    fs::remove_all(cache);
    fs::create_directories(cache);
    const std::string run = "run '" + example("heat2d.stencil") + "' -n 16 --steps 2";
    const Cli cpu = cli(cache, run + " --backend omp");
    ASSERT_EQ(cpu.rc, 0) << cpu.err;
    EXPECT_NE(cpu.err.find("(c++, once"), std::string::npos) << cpu.err;
    auto count = [&](const std::string& extension) {
        int n = 0;
        for (const auto& f : fs::directory_iterator(cache / "kernels"))
            n += f.path().extension() == extension;
        return n;
    };
    EXPECT_EQ(count(".so"), 1);
    EXPECT_EQ(count(".cubin"), 0);
    const Cli gpu = cli(cache, run + " --backend cuda");
    EXPECT_EQ(gpu.rc, 1) << gpu.err;
    EXPECT_NE(gpu.err.find(" was compiled without its CUDA engines"), std::string::npos) << gpu.err;
    EXPECT_NE(gpu.err.find("STRATA_STENCIL_CUDA=1"), std::string::npos) << gpu.err;
    fs::remove_all(cache);
}

// An error in NVRTC's compile names the generated file's line, as the C++ compiler's do (the
// kernels' headers come first in NVRTC's program). Nothing a stencil file can say fails there and
// not in the C++ compile, so the source here is one that fails.
TEST(StencilRun, NvrtcErrorsNameTheGeneratedLine) {
    const std::string source = "namespace generated {\nint f() { return undeclared_name; }\n}\n";
    const stencil::RtcKernels k =
        stencil::rtc_compile(source, {}, stencil::headers_directory(), {}, 90, "/tmp/my model.cpp");
    EXPECT_FALSE(k.ok);
    EXPECT_NE(k.log.find("/tmp/my model.cpp(2): error"), std::string::npos) << k.log;
}
#endif

// Two runs that compile the same file into the same cache at once: both run, one object stays,
// no temporary is left behind.
TEST(StencilRun, ConcurrentFirstRunsShareTheCache) {
    const fs::path cache = fs::temp_directory_path() / ("strata-stencil-race-" + std::to_string(getpid()));
    fs::remove_all(cache);
    fs::create_directories(cache / "a");
    fs::create_directories(cache / "b");
    const std::string run = " run '" + example("heat2d.stencil") + "' -n 16 --steps 3 --backend cpu";
    const std::string cmd = "cd '" + cache.string() + "' && export STRATA_CACHE_DIR='" + cache.string() + "' && ('" +
                            STRATA_CLI + "'" + run + " > a/out.txt 2>&1 & '" + STRATA_CLI + "'" + run +
                            " > b/out.txt 2>&1; s=$?; wait $! && exit $s)";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    int objects = 0, temporaries = 0;
    for (const auto& f : fs::directory_iterator(cache / "kernels")) {
        objects += f.path().extension() == ".so";
        temporaries += f.path().filename().string().find(".tmp.") != std::string::npos;
    }
    EXPECT_EQ(objects, 1);
    EXPECT_EQ(temporaries, 0);
    fs::remove_all(cache);
}

}  // namespace
}  // namespace strata
