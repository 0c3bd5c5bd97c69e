// Stencil files on the GPU: the generated model runs every 2D strategy (temporal included), each
// bitwise equal to the built-in model it restates with the same strategy (both are compiled by
// nvcc from the same expression order), and a model with a pointwise field and the mirror
// boundary against the CPU within the precision's tolerance; heat7.stencil (heat3d's plane sums) on
// every 3D strategy bitwise equal to heat3d; wave8.stencil (wave3d's interface) on every radius-4
// strategy bitwise equal to wave3d; the cells-only models (wider radii, coefficients...) on naive,
// smem, stream and cached. They skip without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "stencil/build.hpp"
#include "strata/engine.hpp"
#include "strata/models/aliev_panfilov.hpp"
#include "strata/models/heat2d.hpp"
#include "strata/models/heat3d.hpp"
#include "test_util.hpp"
#include "wave8_twin.hpp"

namespace strata {
namespace {

std::string example(const std::string& name) { return test::stencil_example(name); }

template <class T>
std::unique_ptr<TypedEngine<T>> engine(const ModelInfo& m, const Problem& p, Backend b, const EngineOptions& o,
                                       const State<T>* init) {
    return test::model_engine<T>(m, p, b, o, init);
}

// Every strategy of the model, each temporal one at depths 2 and 5, as unbuffered launches.
void for_each_launch(const std::string& model, const std::function<void(const EngineOptions&)>& f) {
    for (const std::string& k : kernel_names(Backend::cuda, model))
        for (int depth : kernel_takes_depth(Backend::cuda, model, k) ? std::vector<int>{2, 5} : std::vector<int>{0}) {
            EngineOptions o{k, false};
            o.depth = depth;
            f(o);
        }
}

// The generated model m against the built-in model `builtin` names, from the same state (its
// fields named as each model names them): the same strategies, and after `steps` steps the same
// bits in each pair of `fields` (the built-in's name, the file's), strategy by strategy.
template <class T>
void every_strategy_bitwise(const Problem& builtin, const std::string& builtin_name, const State<T>& builtin_init,
                            const ModelInfo& m, const Problem& generated, const State<T>& init, int steps,
                            const std::vector<std::pair<std::string, std::string>>& fields) {
    EXPECT_EQ(kernel_names(Backend::cuda, m.name), kernel_names(Backend::cuda, builtin_name));
    for_each_launch(m.name, [&](const EngineOptions& o) {
        // (wave3d's TMA kernels refuse 16 bits, built-in and file alike: test_half_cuda.cu)
        if (is_half_v<T> && builtin_name == "wave3d" && o.kernel.rfind("tma", 0) == 0) return;
        auto a = make_engine<T>(builtin, Backend::cuda, o, &builtin_init);
        auto b = engine<T>(m, generated, Backend::cuda, o, &init);
        EXPECT_EQ(b->kernel(), o.kernel);
        a->advance(steps);
        b->advance(steps);
        for (const auto& [fa, fb] : fields)
            EXPECT_TRUE(test::bitwise_equal(a->field(fa), b->field(fb)))
                << fb << ", " << o.kernel << " depth " << o.depth << ": max relative difference "
                << max_relative_error(b->field(fb), a->field(fa));
    });
}
// The same, where both models name their fields alike.
template <class T>
void every_strategy_bitwise(const Problem& builtin, const std::string& builtin_name, const ModelInfo& m,
                            const Problem& generated, const State<T>& init, int steps,
                            const std::vector<std::string>& fields) {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const std::string& f : fields) pairs.emplace_back(f, f);
    every_strategy_bitwise<T>(builtin, builtin_name, init, m, generated, init, steps, pairs);
}

template <class T>
void heat_every_strategy() {
    const Heat2dProblem builtin(Heat2dParams::make(301, 203));  // no tile divides it
    const ModelInfo& m = find_model(example("heat2d.stencil"));
    const auto generated = m.box(Params{{"params", "c=" + test::exact(builtin.params.c)}}, 301, 203, 1);
    const State<T> init = test::random_state_of<T>("u", builtin.extent(), 7, true);
    every_strategy_bitwise<T>(builtin, "heat2d", m, *generated, init, 11, {"u"});
}
TEST(StencilCuda, HeatFileEqualsBuiltinBitwiseOnEveryStrategyFp32) {
    REQUIRE_GPU();
    heat_every_strategy<float>();
}
TEST(StencilCuda, HeatFileEqualsBuiltinBitwiseOnEveryStrategyFp64) {
    REQUIRE_GPU();
    heat_every_strategy<double>();
}
TEST(StencilCuda, HeatFileEqualsBuiltinBitwiseOnEveryStrategyAt16Bits) {
    REQUIRE_GPU();
    heat_every_strategy<f16>();
    heat_every_strategy<bf16>();
}

// apf.stencil against the built-in apf, every strategy (temporal at depths 2 and 5), bitwise.
template <class T>
void apf_every_strategy() {
    const ApfParams p = ApfParams::for_mesh(256, 130);  // 257 x 131 points: no tile divides it
    const ApfProblem builtin(p);
    const ModelInfo& m = find_model(example("apf.stencil"));
    const auto generated = m.box(Params{}, p.n + 1, p.m + 1, 1);  // its dt and alpha from the mesh
    ASSERT_EQ(generated->dt(), p.dt);
    const State<T> init = test::random_apf_state<T>(p, 21);
    every_strategy_bitwise<T>(builtin, "apf", m, *generated, init, 11, {"E", "R"});
}
TEST(StencilCuda, ApfFileEqualsBuiltinBitwiseOnEveryStrategyFp32) {
    REQUIRE_GPU();
    apf_every_strategy<float>();
}
TEST(StencilCuda, ApfFileEqualsBuiltinBitwiseOnEveryStrategyFp64) {
    REQUIRE_GPU();
    apf_every_strategy<double>();
}
TEST(StencilCuda, ApfFileEqualsBuiltinBitwiseOnEveryStrategyAt16Bits) {
    REQUIRE_GPU();
    apf_every_strategy<f16>();
    apf_every_strategy<bf16>();
}

// barkley.stencil (v through the mirror neighbourhood, w pointwise, w' reading v') on every
// strategy against the generated CPU engine.
template <class T>
void barkley_matches_cpu() {
    const ModelInfo& m = find_model(example("barkley.stencil"));
    const auto p = m.box(Params{}, 257, 131, 1);
    HostField<T> v(p->extent()), w(p->extent());
    test::fill_random(v, 3);
    test::fill_random(w, 4);
    const State<T> init = test::state<T>({{"v", v}, {"w", w}});
    auto cpu = engine<T>(m, *p, Backend::omp, {}, &init);
    cpu->advance(7);
    const double tol = sizeof(T) == 8 ? 1e-12 : 1e-5;
    for (const std::string& k : kernel_names(Backend::cuda, m.name)) {
        auto gpu = engine<T>(m, *p, Backend::cuda, EngineOptions{k, false}, &init);
        gpu->advance(7);
        EXPECT_LE(max_relative_error(gpu->field("v"), cpu->field("v")), tol) << k;
        EXPECT_LE(max_relative_error(gpu->field("w"), cpu->field("w")), tol) << k;
    }
}
TEST(StencilCuda, PointwiseFieldAndMirrorMatchCpuFp32) {
    REQUIRE_GPU();
    barkley_matches_cpu<float>();
}
TEST(StencilCuda, PointwiseFieldAndMirrorMatchCpuFp64) {
    REQUIRE_GPU();
    barkley_matches_cpu<double>();
}

// heat-periodic.stencil on every strategy against the CPU (temporal at depths 2 and 5: its tiles
// load their cells beyond an edge from a period away), on a grid no tile divides and on one
// smaller than a tile (the wrapped reads of a tile's overhang clamp inside the grid; a temporal
// tile wraps several times).
template <class T>
void periodic_matches_cpu(int nx, int ny) {
    const ModelInfo& m = find_model(example("heat-periodic.stencil"));
    const auto p = m.box(Params{}, nx, ny, 1);
    HostField<T> u(p->extent());
    test::fill_random(u, 8);
    const State<T> init = test::state_of("u", u);
    auto cpu = engine<T>(m, *p, Backend::omp, {}, &init);
    cpu->advance(7);
    const double tol = sizeof(T) == 8 ? 1e-12 : 1e-5;
    const auto names = kernel_names(Backend::cuda, m.name);
    EXPECT_EQ(std::count(names.begin(), names.end(), "temporal"), 1);
    for_each_launch(m.name, [&](const EngineOptions& o) {
        auto gpu = engine<T>(m, *p, Backend::cuda, o, &init);
        gpu->advance(7);
        EXPECT_LE(max_relative_error(gpu->field("u"), cpu->field("u")), tol)
            << o.kernel << " depth " << o.depth << " " << nx << "x" << ny;
    });
}
TEST(StencilCuda, PeriodicBoundaryMatchesCpuOnEveryStrategy) {
    REQUIRE_GPU();
    periodic_matches_cpu<float>(301, 203);
    periodic_matches_cpu<double>(301, 203);
    periodic_matches_cpu<double>(9, 7);
    periodic_matches_cpu<float>(130, 67);
    const ModelInfo& m = find_model(example("heat-periodic.stencil"));
    EXPECT_EQ(m.engine<float>()(*m.box(Params{}, 2048, 2048, 1), Backend::cuda, {}, nullptr)->kernel(),
              "temporal");
    const ModelInfo& gs = find_model(example("gray-scott.stencil"));
    EXPECT_EQ(gs.engine<float>()(*gs.box(Params{}, 2048, 2048, 1), Backend::cuda, {}, nullptr)->kernel(),
              "temporal");
}

// gray-scott.stencil: two fields read through neighbourhoods and a periodic boundary, on every
// strategy (temporal at depths 2 and 5: a tile per field) against the CPU, on a grid no tile
// divides and on one smaller than a tile, both fields compared.
template <class T>
void gray_scott_matches_cpu(int nx, int ny) {
    const ModelInfo& m = find_model(example("gray-scott.stencil"));
    const auto p = m.box(Params{}, nx, ny, 1);
    HostField<T> u(p->extent()), v(p->extent());
    test::fill_random(u, 11);
    test::fill_random(v, 12, 0.0, 0.5);
    State<T> init = test::state_of("u", u);
    init.fields.emplace_back("v", v);
    auto cpu = engine<T>(m, *p, Backend::omp, {}, &init);
    cpu->advance(9);
    const double tol = sizeof(T) == 8 ? 1e-12 : 1e-5;
    EXPECT_EQ(kernel_names(Backend::cuda, m.name), kernel_names(Backend::cuda, "heat2d"));
    for_each_launch(m.name, [&](const EngineOptions& o) {
        auto gpu = engine<T>(m, *p, Backend::cuda, o, &init);
        gpu->advance(9);
        for (const char* f : {"u", "v"})
            EXPECT_LE(max_relative_error(gpu->field(f), cpu->field(f)), tol)
                << o.kernel << " depth " << o.depth << " " << f << " " << nx << "x" << ny;
    });
}
TEST(StencilCuda, TwoNeighbourhoodFieldsMatchCpuOnEveryStrategy) {
    REQUIRE_GPU();
    gray_scott_matches_cpu<float>(301, 203);
    gray_scott_matches_cpu<double>(301, 203);
    gray_scott_matches_cpu<double>(9, 7);
}

// heat7.stencil, heat3d's sum in its order, has heat3d's plane sums (codegen.cpp): every 3D
// strategy (temporal at depths 2 and 5) bitwise equal to the built-in heat3d 7pt with the same
// strategy, on a box no tile divides.
template <class T>
void heat7_equals_builtin(const std::string& file = "heat7.stencil") {
    SCOPED_TRACE(file);
    const Heat3dProblem builtin(HeatParams::make_box(37, 19, 13, HeatStencil::p7));
    const ModelInfo& m = find_model(example(file));
    const auto generated = m.box(Params{{"params", "c=" + test::exact(builtin.params.c)}}, 37, 19, 13);
    const State<T> init = test::random_state_of<T>("u", builtin.extent(), 5, true);
    every_strategy_bitwise<T>(builtin, "heat3d", m, *generated, init, 7, {"u"});
}
TEST(StencilCuda, Heat7FileEqualsBuiltinBitwise) {
    REQUIRE_GPU();
    heat7_equals_builtin<float>();
    heat7_equals_builtin<double>();
    heat7_equals_builtin<f16>();
    heat7_equals_builtin<bf16>();
}
// diffusion3d.stencil, `u + c * lap(u)`: lap sums as heat3d does, so the same.
TEST(StencilCuda, LapHeatFileEqualsBuiltinBitwise) {
    REQUIRE_GPU();
    heat7_equals_builtin<float>("diffusion3d.stencil");
    heat7_equals_builtin<double>("diffusion3d.stencil");
}

// wave8.stencil, wave3d's leapfrog in its order, has wave3d's interface (codegen.cpp): every
// radius-4 strategy bitwise equal to the built-in wave3d (no sponge) with the same strategy, on a
// box no tile divides, with a velocity varying per cell.
template <class T>
void wave8_equals_builtin() {
    const test::Wave8Twin<T> twin(37, 19, 13);
    every_strategy_bitwise<T>(twin.builtin, "wave3d", twin.builtin_init, *twin.model, *twin.generated,
                              twin.generated_init, 7, {{"p", "p"}, {"prev", "q"}});
}
TEST(StencilCuda, Wave8FileEqualsBuiltinBitwise) {
    REQUIRE_GPU();
    wave8_equals_builtin<float>();
    wave8_equals_builtin<double>();
    wave8_equals_builtin<f16>();
    wave8_equals_builtin<bf16>();
}

// Cells-only models on every strategy that serves them against the CPU: 3D with radius 2, a box
// offset, two neighbourhood fields, pointwise fields, a coefficient and the periodic boundary
// (tests/stencils/mixed3d.stencil); variable-wave.stencil (radius 2, a coefficient, zero ghosts);
// a radius-2 box with the fixed boundary (fixed3d-r2.stencil);
// 2D with radius 3 and box offsets (tests/stencils/wide2d.stencil); the fixed boundary
// (tests/stencils/fixed3d.stencil: the ghosts of both buffers at its value); the mirror boundary in 3D
// (mirror3d.stencil); periodic in 3D, a box of two fields (periodic3d.stencil); a 2D radius-1 box
// (box2d.stencil); 2D radius 2 with each boundary, pointwise fields, a coefficient and two boxes (mirror2d,
// fixed2d, periodic2d.stencil); and plane-sum models on heat3d's ladder: 3D heat summed pairwise
// (pairs3d.stencil), its faces read twice (faces3d.stencil: heat3d's PlaneSums), weighted sums of
// their own (box3d, upwind3d.stencil). Odd sizes, smaller and larger than
// a tile (and than cached's 8 planes or rows per thread); every field compared.
template <class T>
void cells_match_cpu(const std::string& file, int nx, int ny, int nz, int steps, bool cells = true) {
    const ModelInfo& m = find_model(file);
    ASSERT_EQ(m.cells_only, cells);
    const auto p = m.box(Params{}, nx, ny, nz);
    State<T> init;
    std::uint32_t seed = 20;
    for (const FieldDecl& f : m.fields) {
        if (f.role == FieldRole::coefficient) continue;
        HostField<T> h(p->extent());
        test::fill_random(h, seed++, 0.0, 0.5);
        init.fields.emplace_back(f.name, h);
    }
    auto cpu = engine<T>(m, *p, Backend::omp, {}, &init);
    cpu->advance(steps);
    // (16 bits: a few of the type's ulps, where a fused multiply-add tips a rounding: app/check.cpp)
    const double tol = sizeof(T) == 8           ? 1e-12
                       : sizeof(T) == 4         ? 1e-5
                       : std::is_same_v<T, f16> ? 4.0 / 2048
                                                : 4.0 / 256;
    const auto chunked = kernel_names(Backend::cuda, m.name, true);
    for (const std::string& k : kernel_names(Backend::cuda, m.name)) {
        const bool chunks = std::count(chunked.begin(), chunked.end(), k) > 0,
                   depths = kernel_takes_depth(Backend::cuda, m.name, k);
        // Passes of several steps and a shorter last one; several chunks of planes, the last one partial.
        std::vector<std::pair<int, int>> knobs;  // (depth, chunk)
        // Every depth up to 4 the kernel takes (3D temporal at radius 2 stops at 3, or at 2 where its
        // rings would pass a block's shared memory: it says so).
        if (depths) knobs = {{1, 0}, {2, 0}, {3, 0}, {4, 0}};
        if (chunks) knobs.push_back({0, 3});
        if (knobs.empty()) knobs.push_back({0, 0});
        for (const auto& [depth, chunk] : knobs) {
            EngineOptions o{k, false};
            o.depth = depth;
            o.chunk = chunk;
            std::unique_ptr<TypedEngine<T>> gpu;
            try {
                gpu = engine<T>(m, *p, Backend::cuda, o, &init);
            } catch (const UsageError& e) {
                EXPECT_GE(depth, 3) << file << " " << k << ": " << e.what();
                EXPECT_NE(std::string(e.what()).find("--depth must be from 1 to "), std::string::npos)
                    << e.what();
                continue;
            }
            gpu->advance(steps);
            for (const auto& [name, values] : init.fields)
                EXPECT_LE(max_relative_error(gpu->field(name), cpu->field(name)), tol)
                    << file << " " << k << " depth " << depth << " chunk " << chunk << " " << name << " " << nx
                    << "x" << ny << "x" << nz;
        }
    }
}
TEST(StencilCuda, CellsOnlyModelsMatchCpuOnEveryStrategy) {
    REQUIRE_GPU();
    const std::string mixed = test::stencil_fixture("mixed3d.stencil"), wide = test::stencil_fixture("wide2d.stencil");
    cells_match_cpu<double>(mixed, 7, 5, 6, 3);
    cells_match_cpu<float>(mixed, 45, 21, 10, 5);
    cells_match_cpu<double>(mixed, 45, 21, 10, 5);
    cells_match_cpu<float>(mixed, 99, 27, 26, 3);  // cached's blocks wholly inside the grid too
    cells_match_cpu<float>(example("variable-wave.stencil"), 41, 23, 17, 6);
    cells_match_cpu<double>(example("variable-wave.stencil"), 41, 23, 17, 6);
    // Radius 2 in 3D: the temporal kernel's tiles and chunks inside the grid and across each face.
    cells_match_cpu<float>(example("variable-wave.stencil"), 133, 45, 40, 7);
    cells_match_cpu<float>(test::stencil_fixture("fixed3d-r2.stencil"), 133, 45, 40, 7);
    cells_match_cpu<double>(test::stencil_fixture("fixed3d-r2.stencil"), 37, 9, 13, 4);
    cells_match_cpu<float>(mixed, 130, 40, 24, 5);
    cells_match_cpu<float>(wide, 77, 29, 1, 5);
    cells_match_cpu<double>(wide, 77, 29, 1, 5);
    cells_match_cpu<double>(wide, 5, 4, 1, 2);
    cells_match_cpu<float>(test::stencil_fixture("fixed3d.stencil"), 37, 9, 13, 4);
    cells_match_cpu<double>(test::stencil_fixture("fixed3d.stencil"), 37, 9, 13, 4);
    cells_match_cpu<float>(test::stencil_fixture("mirror3d.stencil"), 67, 19, 21, 5);
    cells_match_cpu<double>(test::stencil_fixture("mirror3d.stencil"), 31, 10, 9, 5);
    // The 3D temporal kernel's boundaries: tiles and chunks of planes (chunk 3) wholly inside the
    // grid too, periodic rows of a width that is a multiple of a thread's cells and of one that is not.
    cells_match_cpu<float>(test::stencil_fixture("mirror3d.stencil"), 130, 40, 24, 5);
    cells_match_cpu<double>(test::stencil_fixture("fixed3d.stencil"), 130, 40, 24, 5);
    cells_match_cpu<float>(test::stencil_fixture("periodic3d.stencil"), 67, 19, 21, 5);
    cells_match_cpu<double>(test::stencil_fixture("periodic3d.stencil"), 31, 10, 9, 5);
    cells_match_cpu<float>(test::stencil_fixture("periodic3d.stencil"), 128, 36, 20, 5);
    cells_match_cpu<float>(test::stencil_fixture("box2d.stencil"), 101, 83, 1, 7);
    cells_match_cpu<double>(test::stencil_fixture("box2d.stencil"), 33, 150, 1, 7);
    cells_match_cpu<float>(test::stencil_fixture("box2d.stencil"), 130, 200, 1, 7);  // (inside the grid too)
    cells_match_cpu<float>(wide, 201, 100, 1, 3);  // (radius 3, inside the grid too)
    // 3D heat summed pairwise: heat3d's ladder on the model's own plane sums (temporal, tma...).
    cells_match_cpu<float>(test::stencil_fixture("pairs3d.stencil"), 67, 37, 29, 7, false);
    cells_match_cpu<double>(test::stencil_fixture("pairs3d.stencil"), 45, 19, 23, 7, false);
    // heat3d's faces summed pairwise, read twice (PlaneSums, two-word partial sums).
    cells_match_cpu<float>(test::stencil_fixture("faces3d.stencil"), 67, 37, 29, 7, false);
    cells_match_cpu<double>(test::stencil_fixture("faces3d.stencil"), 45, 19, 23, 7, false);
    // Weighted sums of the model's own plane sums (codegen.cpp: linear_split): a 27-point box whose
    // z-1 and z+1 weights differ, and a star whose whole update is linear, on heat3d's ladder.
    cells_match_cpu<float>(test::stencil_fixture("box3d.stencil"), 67, 37, 29, 7, false);
    cells_match_cpu<double>(test::stencil_fixture("box3d.stencil"), 45, 19, 23, 7, false);
    cells_match_cpu<float>(test::stencil_fixture("upwind3d.stencil"), 130, 40, 24, 7, false);
    cells_match_cpu<double>(test::stencil_fixture("upwind3d.stencil"), 31, 10, 9, 5, false);
    // The 2D temporal kernel's boundaries at radius 2, with pointwise fields and coefficients, and
    // two neighbourhood fields of a box: tiles inside the grid and across each face.
    for (const char* f : {"mirror2d.stencil", "fixed2d.stencil", "periodic2d.stencil"}) {
        cells_match_cpu<float>(test::stencil_fixture(f), 181, 150, 1, 7);
        cells_match_cpu<double>(test::stencil_fixture(f), 150, 181, 1, 7);
        cells_match_cpu<float>(test::stencil_fixture(f), 9, 13, 1, 5);  // smaller than a tile
    }
}
// The same at 16 bits (fp32 arithmetic, each store rounded): every strategy of every kind of file.
TEST(StencilCuda, CellsOnlyModelsMatchCpuOnEveryStrategyAt16Bits) {
    REQUIRE_GPU();
    cells_match_cpu<f16>(test::stencil_fixture("mixed3d.stencil"), 45, 21, 10, 5);
    cells_match_cpu<bf16>(test::stencil_fixture("mixed3d.stencil"), 99, 27, 26, 3);
    cells_match_cpu<f16>(example("variable-wave.stencil"), 41, 23, 17, 6);
    cells_match_cpu<bf16>(test::stencil_fixture("fixed3d-r2.stencil"), 133, 45, 40, 5);
    cells_match_cpu<bf16>(test::stencil_fixture("wide2d.stencil"), 77, 29, 1, 5);
    cells_match_cpu<f16>(test::stencil_fixture("fixed3d.stencil"), 130, 40, 24, 5);
    cells_match_cpu<bf16>(test::stencil_fixture("mirror3d.stencil"), 67, 19, 21, 5);
    cells_match_cpu<f16>(test::stencil_fixture("periodic3d.stencil"), 128, 36, 20, 5);
    cells_match_cpu<bf16>(test::stencil_fixture("box2d.stencil"), 101, 83, 1, 7);
    // Wider grids: blocks wholly inside the grid at 16 bits too.
    cells_match_cpu<f16>(test::stencil_fixture("mirror3d.stencil"), 301, 20, 12, 3);
    cells_match_cpu<bf16>(test::stencil_fixture("periodic3d.stencil"), 302, 21, 11, 3);
    cells_match_cpu<bf16>(test::stencil_fixture("box2d.stencil"), 303, 160, 1, 3);
    cells_match_cpu<f16>(test::stencil_fixture("pairs3d.stencil"), 67, 37, 29, 7, false);
    cells_match_cpu<bf16>(test::stencil_fixture("box3d.stencil"), 67, 37, 29, 7, false);
    cells_match_cpu<f16>(test::stencil_fixture("faces3d.stencil"), 45, 19, 23, 7, false);
    cells_match_cpu<f16>(test::stencil_fixture("upwind3d.stencil"), 130, 40, 24, 7, false);
    for (const char* f : {"mirror2d.stencil", "fixed2d.stencil", "periodic2d.stencil"}) {
        cells_match_cpu<f16>(test::stencil_fixture(f), 181, 150, 1, 7);
        cells_match_cpu<bf16>(test::stencil_fixture(f), 9, 13, 1, 5);
    }
}

// Without --kernel, past a million cells: a 2D cells-only file runs its temporal kernel, deeper
// for a light update (the 9-point box's 15 flops: depth 8 in fp32, 6 in fp64), or cached, then
// naive, where temporal does not fit (radius 3); `u + c * lap(u)` in 3D runs heat3d's temporal at
// depth 4, and so do its faces summed pairwise (regrouped into heat3d's additions: one word of
// partial sum, codegen.cpp); other 3D cells-only files of radius 1, star or box, their own temporal kernel at
// depth 2, and those of radius 2 cached.
TEST(StencilCuda, DefaultKernelsOfFilesFollowTheirShape) {
    REQUIRE_GPU();
    auto info = [](const std::string& file, int n, int nz, bool fp64) {
        const ModelInfo& m = find_model(file);
        const auto p = m.box(Params{}, n, n, nz);
        return fp64 ? engine<double>(m, *p, Backend::cuda, {}, nullptr)->kernel_info()
                    : engine<float>(m, *p, Backend::cuda, {}, nullptr)->kernel_info();
    };
    const std::string box = test::stencil_fixture("box2d.stencil"),
                      wide = test::stencil_fixture("wide2d.stencil"), lap = example("diffusion3d.stencil"),
                      pairs = test::stencil_fixture("pairs3d.stencil"),
                      mirror3d = test::stencil_fixture("mirror3d.stencil"),
                      fixed3d = test::stencil_fixture("fixed3d.stencil"),
                      mixed3d = test::stencil_fixture("mixed3d.stencil");
    for (const auto& [k, file, n, nz, fp64, kernel, depth] :
         std::vector<std::tuple<int, std::string, int, int, bool, std::string, int>>{
             {0, box, 1100, 1, false, "temporal", 8},
             {1, box, 1100, 1, true, "temporal", 6},
             {2, wide, 1100, 1, false, "naive", 1},
             {3, lap, 104, 104, false, "temporal", 4},
             {4, lap, 104, 104, true, "temporal", 4},
             {5, pairs, 104, 104, false, "temporal", 4},
             {6, pairs, 104, 104, true, "temporal", 4},
             {7, mirror3d, 104, 104, false, "temporal", 2},
             {8, mirror3d, 104, 104, true, "temporal", 2},
             {9, fixed3d, 104, 104, true, "temporal", 2},
             {10, mixed3d, 104, 104, false, "cached", 1},
             {11, mixed3d, 104, 104, true, "cached", 1}}) {
        const KernelInfo i = info(file, n, nz, fp64);
        EXPECT_EQ(i.name, kernel) << k;
        EXPECT_EQ(i.depth, depth) << k;
    }
}

}  // namespace
}  // namespace strata
