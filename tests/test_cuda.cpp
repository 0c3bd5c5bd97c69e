// GPU tests: every strategy x model x precision against the CPU reference on random fields of
// odd sizes, the device reductions, and graph replay. They skip, saying so, without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "strata/core/error.hpp"
#include "strata/engine.hpp"
#include "strata/models/heat2d.hpp"
#include "strata/models/heat3d.hpp"
#include "test_util.hpp"

namespace strata {
namespace {

template <class T>
constexpr double tolerance() {
    return std::is_same_v<T, double> ? 1e-12 : 1e-5;
}

template <class T>
void apf_matches_cpu(const std::string& kernel) {
    const ApfParams p = ApfParams::for_mesh(256, 130);  // 257 x 131 points: no tile divides it
    const auto init = test::random_apf_state<T>(p, 21);
    auto cpu = make_engine<T>(ApfProblem(p), Backend::omp, {}, &init);
    auto gpu = make_engine<T>(ApfProblem(p), Backend::cuda, EngineOptions{kernel, false}, &init);
    EXPECT_EQ(gpu->kernel(), kernel);
    for (int steps : {1, 6}) {  // 1 then 7 in all: both buffers written, halos exercised
        cpu->advance(steps);
        gpu->advance(steps);
        const auto c = test::apf_fields(*cpu), g = test::apf_fields(*gpu);
        EXPECT_LE(max_relative_error(g.e, c.e), tolerance<T>()) << kernel << " E after more " << steps;
        EXPECT_LE(max_relative_error(g.r, c.r), tolerance<T>()) << kernel << " R after more " << steps;
    }
}

template <class T>
void heat_matches_cpu(HeatStencil s, const std::string& kernel, int nx = 67, int ny = 45, int nz = 33, int chunk = 0) {
    const HeatParams p = HeatParams::make_box(nx, ny, nz, s);
    HostField<T> init(p.extent());
    test::fill_random(init, 31);
    test::zero_ghosts(init);
    const auto init_state = test::state_of("u", init);
    auto cpu = make_engine<T>(Heat3dProblem(p), Backend::omp, {}, &init_state);
    auto gpu = make_engine<T>(Heat3dProblem(p), Backend::cuda, EngineOptions{kernel, false, chunk}, &init_state);
    EXPECT_EQ(gpu->kernel(), kernel);
    for (int steps : {1, 6}) {
        cpu->advance(steps);
        gpu->advance(steps);
        EXPECT_LE(max_relative_error(gpu->field("u"), cpu->field("u")), tolerance<T>())
            << kernel << " " << to_string(s) << " after more " << steps;
    }
}

class ApfStrategy : public ::testing::TestWithParam<std::string> {};
class HeatStrategy : public ::testing::TestWithParam<std::string> {};

TEST_P(ApfStrategy, MatchesReferenceOnOddSizesFp64) {
    REQUIRE_GPU();
    apf_matches_cpu<double>(GetParam());
}
TEST_P(ApfStrategy, MatchesReferenceOnOddSizesFp32) {
    REQUIRE_GPU();
    apf_matches_cpu<float>(GetParam());
}
TEST_P(HeatStrategy, MatchesReferenceOnOddSizesFp64) {
    REQUIRE_GPU();
    for (HeatStencil s : {HeatStencil::p7, HeatStencil::p19, HeatStencil::p27}) heat_matches_cpu<double>(s, GetParam());
}
TEST_P(HeatStrategy, MatchesReferenceOnOddSizesFp32) {
    REQUIRE_GPU();
    for (HeatStencil s : {HeatStencil::p7, HeatStencil::p19, HeatStencil::p27}) heat_matches_cpu<float>(s, GetParam());
}

// Every kernel the backend lists is tested: a new strategy cannot skip its check.
INSTANTIATE_TEST_SUITE_P(AllKernels, ApfStrategy, ::testing::ValuesIn(kernel_names(Backend::cuda, "apf")),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(AllKernels, HeatStrategy, ::testing::ValuesIn(kernel_names(Backend::cuda, "heat3d")),
                         [](const auto& info) { return info.param; });

// heat2d, registered with one line, runs every 2D strategy: each against the CPU reference on a
// random field no tile divides (its ghosts random too: the engine's boundary is zero).
template <class T>
void heat2d_matches_cpu(const std::string& kernel, int depth = 0, int steps = 7, int nx = 257, int ny = 131) {
    const Heat2dProblem p(Heat2dParams::make(nx, ny));
    HostField<T> u(p.extent());
    test::fill_random(u, 90 + depth);
    const State<T> init = test::state_of("u", u);
    auto cpu = make_engine<T>(p, Backend::omp, {}, &init);
    auto gpu = make_engine<T>(p, Backend::cuda, EngineOptions{kernel, false, 0, depth}, &init);
    EXPECT_EQ(gpu->kernel(), kernel);
    for (int s : {1, steps - 1}) {
        cpu->advance(s);
        gpu->advance(s);
        EXPECT_LE(max_relative_error(gpu->field("u"), cpu->field("u")), tolerance<T>())
            << kernel << " depth " << depth << " after " << gpu->step() << " steps";
    }
}
class Heat2dStrategy : public ::testing::TestWithParam<std::string> {};
TEST_P(Heat2dStrategy, MatchesReferenceOnOddSizes) {
    REQUIRE_GPU();
    heat2d_matches_cpu<float>(GetParam());
    heat2d_matches_cpu<double>(GetParam());
}
INSTANTIATE_TEST_SUITE_P(AllKernels, Heat2dStrategy, ::testing::ValuesIn(kernel_names(Backend::cuda, "heat2d")),
                         [](const auto& info) { return info.param; });

// Every depth of every kernel that takes one, step counts no depth divides, and the same
// per-cell arithmetic as the single sweeps: bitwise equal to `planes`.
TEST(Heat2dTemporal, MatchesReferenceAtEveryDepthAndEqualsPlanesBitwise) {
    REQUIRE_GPU();
    for (const std::string& k : kernel_names(Backend::cuda, "heat2d")) {
        if (!kernel_takes_depth(Backend::cuda, "heat2d", k)) continue;
        for (int depth : {1, 2, 3, 4, 5, 8, 9, 12, 16}) {
            heat2d_matches_cpu<float>(k, depth, 3 * depth + 2);
            heat2d_matches_cpu<double>(k, depth, 3 * depth + 2, 301, 171);
        }
        const Heat2dProblem p(Heat2dParams::make(1300, 900));  // many blocks, more than one wave of them
        for (int depth : {4, 9}) {
            HostField<float> u(p.extent());
            test::fill_random(u, 95);
            const State<float> init = test::state_of("u", u);
            auto planes = make_engine<float>(p, Backend::cuda, EngineOptions{"planes", false}, &init);
            auto t = make_engine<float>(p, Backend::cuda, EngineOptions{k, true, 0, depth}, &init);
            planes->advance(2 * kGraphPasses * depth + 5);
            t->advance(2 * kGraphPasses * depth + 5);
            EXPECT_TRUE(test::bitwise_equal(planes->field("u"), t->field("u"))) << k << " depth " << depth;
        }
    }
}

// The 2.5D kernels run their blocks in groups of tile rows, each group through all its z-chunks
// before the next (strata/core/block_order.hpp), as many rows as the device holds at once. On an
// H100 this grid needs two groups or more for each of them (vec fp32: 9 x 33 tiles of 128 x 16,
// 264 resident), the last one short.
class HeatGroups : public ::testing::TestWithParam<std::string> {};
TEST_P(HeatGroups, SeveralBlockGroupsMatchTheReference) {
    REQUIRE_GPU();
    heat_matches_cpu<float>(HeatStencil::p7, GetParam(), 1100, 520, 9, 4);
    heat_matches_cpu<double>(HeatStencil::p7, GetParam(), 1100, 520, 9, 4);
}
INSTANTIATE_TEST_SUITE_P(StreamingKernels, HeatGroups, ::testing::ValuesIn([] {
    std::vector<std::string> k{"planes", "vec", "async"};
    const auto all = kernel_names(Backend::cuda, "heat3d");
    for (const char* t : {"tma", "tmasync"})
        if (std::find(all.begin(), all.end(), t) != all.end()) k.push_back(t);
    return k;
}()));

// tma reads what async reads (the TMA's zero fill for the ghost layer) and sums it in the same
// order: bitwise equal to async and planes, on every stencil and precision, on sizes where the
// boxes are partial at every face (odd sizes, thin grids, n = 9, widths around the 128- and
// 64-cell tiles), short chunks (many blocks per column, planes -1 and nz zero-filled at both
// ends), outputs poisoned first. Skipped where the build or the GPU has no TMA (the kernel is
// then not listed, or refuses with a clear error: the next test).
template <class T>
void tma_equals_async(HeatStencil s, int nx, int ny, int nz, int chunk) {
    const HeatParams p = HeatParams::make_box(nx, ny, nz, s);
    HostField<T> init(p.extent());
    test::fill_random(init, 90 + nx + ny + nz);
    test::zero_ghosts(init);
    const auto state = test::state_of("u", init);
    auto planes = make_engine<T>(Heat3dProblem(p), Backend::cuda, EngineOptions{"planes", false}, &state);
    auto async = make_engine<T>(Heat3dProblem(p), Backend::cuda, EngineOptions{"async", false, chunk}, &state);
    planes->advance(5);
    async->advance(5);
    const auto a = async->field("u"), c = planes->field("u");
    for (const char* kernel : {"tma", "tmasync"}) {
        auto tma = make_engine<T>(Heat3dProblem(p), Backend::cuda, EngineOptions{kernel, false, chunk}, &state);
        tma->advance(5);
        const auto b = tma->field("u");
        EXPECT_TRUE(test::bitwise_equal(a, b)) << kernel << " " << to_string(s) << " " << nx << "x" << ny << "x" << nz
                                               << " chunk " << chunk << ": " << max_relative_error(b, a);
        EXPECT_TRUE(test::bitwise_equal(c, b)) << kernel << " " << to_string(s) << " " << nx << "x" << ny << "x" << nz
                                               << " against planes";
    }
}
TEST(Tma, BitwiseEqualToAsyncAndPlanes) {
    REQUIRE_GPU();
    const auto names = kernel_names(Backend::cuda, "heat3d");
    if (std::find(names.begin(), names.end(), "tma") == names.end()) GTEST_SKIP() << "a build without sm_90";
    for (HeatStencil s : {HeatStencil::p7, HeatStencil::p19, HeatStencil::p27})
        for (auto [nx, ny, nz, chunk] : {std::array{9, 9, 9, 0}, {9, 9, 9, 2}, {131, 19, 7, 3}, {127, 17, 30, 5},
                                          {65, 33, 3, 1}, {1, 1, 1, 0}, {260, 5, 11, 0}}) {
            tma_equals_async<float>(s, nx, ny, nz, chunk);
            tma_equals_async<double>(s, nx, ny, nz, chunk);
        }
}

// Temporal blocking: K steps per pass equal K single steps, for several depths and step counts
// that no depth divides (the remainder runs as a shorter pass), on a grid no tile divides.
template <class T>
void temporal_matches_cpu(int depth, int steps) {
    const ApfParams p = ApfParams::for_mesh(300, 170);  // 301 x 171 points
    const auto init = test::random_apf_state<T>(p, 40 + depth);
    auto cpu = make_engine<T>(ApfProblem(p), Backend::omp, {}, &init);
    auto gpu = make_engine<T>(ApfProblem(p), Backend::cuda, EngineOptions{"temporal", false, 0, depth}, &init);
    EXPECT_EQ(gpu->kernel_info().depth, depth);
    cpu->advance(steps);
    gpu->advance(steps);
    const auto c = test::apf_fields(*cpu), g = test::apf_fields(*gpu);
    // fp32 rounding differences grow a little with the step count; 1e-5 holds for these.
    EXPECT_LE(max_relative_error(g.e, c.e), tolerance<T>()) << "depth " << depth << ", " << steps << " steps";
    EXPECT_LE(max_relative_error(g.r, c.r), tolerance<T>()) << "depth " << depth << ", " << steps << " steps";
}

TEST(Temporal, MatchesReferenceAtEveryDepthFp64) {
    REQUIRE_GPU();
    for (int depth : {1, 2, 3, 4, 5, 8, 16}) temporal_matches_cpu<double>(depth, 3 * depth + 2);
}
TEST(Temporal, MatchesReferenceAtEveryDepthFp32) {
    REQUIRE_GPU();
    for (int depth : {1, 2, 3, 4, 5, 8, 16}) temporal_matches_cpu<float>(depth, 3 * depth + 2);
}

// The same per-cell arithmetic as the single-sweep kernels: bitwise equal to `planes`.
template <class T>
void temporal_equals_planes(const ApfParams& p, int seed, int steps) {
    const auto init = test::random_apf_state<T>(p, seed);
    auto planes = make_engine<T>(ApfProblem(p), Backend::cuda, EngineOptions{"planes", false}, &init);
    auto temporal = make_engine<T>(ApfProblem(p), Backend::cuda, EngineOptions{"temporal", false, 0, 4}, &init);
    planes->advance(steps);
    temporal->advance(steps);
    const auto a = test::apf_fields(*planes), b = test::apf_fields(*temporal);
    EXPECT_TRUE(test::bitwise_equal(a.e, b.e)) << max_relative_error(b.e, a.e);
    EXPECT_TRUE(test::bitwise_equal(a.r, b.r)) << max_relative_error(b.r, a.r);
}
TEST(Temporal, BitwiseEqualToPlanes) {
    REQUIRE_GPU();
    temporal_equals_planes<float>(ApfParams::for_mesh(200, 97), 50, 23);
    temporal_equals_planes<double>(ApfParams::for_mesh(200, 97), 50, 23);
}
// A grid of many more tiles than the device holds blocks at once (several waves of blocks), 9
// steps at depth 4.
TEST(Temporal, BitwiseEqualToPlanesOnManyTiles) {
    REQUIRE_GPU();
    const ApfParams p = ApfParams::for_mesh(1300, 900);  // 408 tiles of 56 x 56 output cells
    temporal_equals_planes<double>(p, 51, 9);
    temporal_equals_planes<float>(p, 51, 9);
}

// Graph replay of temporal passes (the first pass may be captured: the kernel's shared-memory
// opt-in must not break capture), starting on an odd pass count.
TEST(Temporal, GraphReplayEqualsPlainLaunchesBitwise) {
    REQUIRE_GPU();
    const ApfParams p = ApfParams::for_mesh(130);
    auto graph = make_engine<double>(ApfProblem(p), Backend::cuda, EngineOptions{"temporal", true, 0, 3});
    auto plain = make_engine<double>(ApfProblem(p), Backend::cuda, EngineOptions{"temporal", false, 0, 3});
    for (int steps : {3 * kGraphPasses + 1, 3, 3 * kGraphPasses * 2 + 5}) {
        graph->advance(steps);
        plain->advance(steps);
    }
    const auto a = test::apf_fields(*plain), b = test::apf_fields(*graph);
    EXPECT_TRUE(test::bitwise_equal(a.e, b.e)) << max_relative_error(b.e, a.e);
    EXPECT_TRUE(test::bitwise_equal(a.r, b.r)) << max_relative_error(b.r, a.r);
}

TEST(Temporal, DepthOutsideItsRangeOrOnAnotherKernelIsAClearError) {
    REQUIRE_GPU();
    const ApfParams p = ApfParams::for_mesh(64);
    EXPECT_THROW(make_engine<float>(ApfProblem(p), Backend::cuda, EngineOptions{"temporal", true, 0, 17}), UsageError);
    EXPECT_THROW(make_engine<float>(ApfProblem(p), Backend::cuda, EngineOptions{"multi4", true, 0, 4}), UsageError);
    const HeatParams h = HeatParams::make(40, HeatStencil::p7);
    EXPECT_THROW(make_engine<double>(Heat3dProblem(h), Backend::cuda, EngineOptions{"temporal", true, 0, 9}), UsageError);
    EXPECT_NO_THROW(make_engine<double>(Heat3dProblem(h), Backend::cuda, EngineOptions{"temporal", true, 0, 8}));
}

// heat3d's temporal kernel: several depths, z-chunks shorter than the grid (the chunks' extra
// planes at both ends) and the default, step counts no depth divides, a grid no tile divides.
template <class T>
void heat_temporal_matches_cpu(HeatStencil s, int depth, int chunk, int nx = 71) {
    const HeatParams p = HeatParams::make_box(nx, 45, 37, s);
    HostField<T> init(p.extent());
    test::fill_random(init, 60 + depth);
    test::zero_ghosts(init);
    const auto init_state = test::state_of("u", init);
    const int steps = 2 * depth + 1;
    auto cpu = make_engine<T>(Heat3dProblem(p), Backend::omp, {}, &init_state);
    auto gpu = make_engine<T>(Heat3dProblem(p), Backend::cuda, EngineOptions{"temporal", false, chunk, depth}, &init_state);
    EXPECT_EQ(gpu->kernel_info().depth, depth);
    cpu->advance(steps);
    gpu->advance(steps);
    EXPECT_LE(max_relative_error(gpu->field("u"), cpu->field("u")), tolerance<T>())
        << to_string(s) << " depth " << depth << ", chunk " << chunk << ", " << steps << " steps, nx " << nx;
}

TEST(HeatTemporal, MatchesReferenceAtEveryDepthFp64) {
    REQUIRE_GPU();
    for (int depth = 1; depth <= 8; ++depth) heat_temporal_matches_cpu<double>(HeatStencil::p7, depth, depth % 2 ? 8 : 0);
    for (int depth : {2, 3}) heat_temporal_matches_cpu<double>(HeatStencil::p27, depth, 16);
}
TEST(HeatTemporal, MatchesReferenceAtEveryDepthFp32) {
    REQUIRE_GPU();
    for (int depth = 1; depth <= 8; ++depth) heat_temporal_matches_cpu<float>(HeatStencil::p7, depth, depth % 2 ? 0 : 8);
    for (int depth : {2, 4}) heat_temporal_matches_cpu<float>(HeatStencil::p19, depth, 16);
}

// In fp32 a width that is a multiple of a thread's 4 cells runs the 7-point kernel whose boundary
// masks are one predicate per thread (depth 1 to 4): the same checks.
TEST(HeatTemporal, WholeThreadColumnsMatchTheReference) {
    REQUIRE_GPU();
    for (int depth = 1; depth <= 4; ++depth)
        heat_temporal_matches_cpu<float>(HeatStencil::p7, depth, depth % 2 ? 0 : 8, 72);
}

// Without --kernel a large heat3d grid runs temporal at depth 4 (7 points) or 2 (19 points), and
// async for 27 points, whose temporal queues spill; temporal asked for without --depth runs at
// depth 2 there.
TEST(HeatTemporal, DefaultKernelAndDepthFollowTheStencil) {
    REQUIRE_GPU();
    const int n = 104;  // 1.1 million cells: past the size under which naive is the default
    auto info = [&](HeatStencil s, const char* kernel) {
        return make_engine<float>(Heat3dProblem(HeatParams::make(n, s)), Backend::cuda, EngineOptions{kernel})
            ->kernel_info();
    };
    const KernelInfo p7 = info(HeatStencil::p7, ""), p19 = info(HeatStencil::p19, ""),
                     p27 = info(HeatStencil::p27, ""), p27t = info(HeatStencil::p27, "temporal");
    EXPECT_EQ(p7.name, "temporal");
    EXPECT_EQ(p7.depth, 4);
    EXPECT_EQ(p19.name, "temporal");
    EXPECT_EQ(p19.depth, 2);
    EXPECT_EQ(p27.name, "temporal");
    EXPECT_EQ(p27.depth, 2);
    EXPECT_EQ(p27t.depth, 2);
}

// The same per-cell arithmetic as the single-sweep kernels: bitwise equal to `planes`.
// Widths 90 and 92: the 7-point kernel with masks per cell and with one per thread (fp32).
TEST(HeatTemporal, BitwiseEqualToPlanes) {
    REQUIRE_GPU();
    for (auto [s, nx] : {std::pair{HeatStencil::p7, 90}, {HeatStencil::p7, 92}, {HeatStencil::p27, 90}}) {
        const HeatParams p = HeatParams::make_box(nx, 61, 40, s);
        HostField<float> init(p.extent());
        test::fill_random(init, 70);
        test::zero_ghosts(init);
    const auto init_state = test::state_of("u", init);
        auto planes = make_engine<float>(Heat3dProblem(p), Backend::cuda, EngineOptions{"planes", false}, &init_state);
        auto temporal = make_engine<float>(Heat3dProblem(p), Backend::cuda, EngineOptions{"temporal", false, 16, 4}, &init_state);
        planes->advance(23);
        temporal->advance(23);
        const auto a = planes->field("u"), b = temporal->field("u");
        EXPECT_TRUE(test::bitwise_equal(a, b)) << to_string(s) << " nx " << nx << " " << max_relative_error(b, a);
    }
}

// `cached` sums the same neighbours in the same order as `planes`, so it is bitwise equal to it.
// Widths that are a multiple of a thread's cells (64: the ghost column comes from the next lane)
// and not (66 in fp32, 67), one of three blocks across in fp32 (261: the warps' end lanes read
// the neighbouring blocks' columns), heights and depths that no block divides, every stencil.
template <class T>
void heat_cached_equals_planes(HeatStencil s, int nx) {
    const HeatParams p = HeatParams::make_box(nx, 45, 33, s);
    HostField<T> init(p.extent());
    test::fill_random(init, 80 + nx);
    test::zero_ghosts(init);
    const auto init_state = test::state_of("u", init);
    auto planes = make_engine<T>(Heat3dProblem(p), Backend::cuda, EngineOptions{"planes", false}, &init_state);
    auto cached = make_engine<T>(Heat3dProblem(p), Backend::cuda, EngineOptions{"cached", false}, &init_state);
    planes->advance(7);
    cached->advance(7);
    const auto a = planes->field("u"), b = cached->field("u");
    EXPECT_TRUE(test::bitwise_equal(a, b)) << to_string(s) << " nx " << nx << " " << max_relative_error(b, a);
}
TEST(HeatCached, BitwiseEqualToPlanes) {
    REQUIRE_GPU();
    for (HeatStencil s : {HeatStencil::p7, HeatStencil::p19, HeatStencil::p27})
        for (int nx : {64, 66, 67, 261}) {
            heat_cached_equals_planes<float>(s, nx);
            heat_cached_equals_planes<double>(s, nx);
        }
}

// The tuner's relaunch: one engine through a single-sweep kernel, the temporal one (whose state
// fields need second buffers that the first did not allocate: apf's R), graphs on and off, and a
// refused launch that must change nothing, against the CPU reference after every segment.
template <class T, class P>
void relaunch_matches_cpu(const P& problem, const State<T>& init, const char* field) {
    auto cpu = make_engine<T>(problem, Backend::omp, {}, &init);
    auto gpu = make_engine<T>(problem, Backend::cuda, EngineOptions{"planes", false}, &init);
    const EngineOptions launches[] = {{"temporal", false, 0, 3}, {"planes", true}, {"temporal", true, 0, 2}, {"naive", false}};
    int segment = 0;
    for (const EngineOptions& o : launches) {
        gpu->relaunch(o);
        EXPECT_EQ(gpu->kernel(), o.kernel);
        EXPECT_THROW(gpu->relaunch(EngineOptions{"naive", false, 8}), UsageError);  // naive has no chunks
        EXPECT_EQ(gpu->kernel(), o.kernel);
        const int steps = 7 + 64 * 2 * (segment++ % 2);  // past a graph's worth on the second and fourth
        cpu->advance(steps);
        gpu->advance(steps);
        EXPECT_LE(max_relative_error(gpu->field(field), cpu->field(field)), 10 * tolerance<T>())
            << o.kernel << " depth " << o.depth << (o.graphs ? " graphs" : "");
    }
    EXPECT_EQ(gpu->step(), cpu->step());
}
TEST(Cuda, RelaunchedEngineMatchesTheReference) {
    REQUIRE_GPU();
    const ApfParams ap = ApfParams::for_mesh(130, 70);
    relaunch_matches_cpu<double>(ApfProblem(ap), test::random_apf_state<double>(ap, 5), "R");
    relaunch_matches_cpu<double>(ApfProblem(ap), test::random_apf_state<double>(ap, 6), "E");
    const HeatParams hp = HeatParams::make_box(37, 29, 23, HeatStencil::p7);
    relaunch_matches_cpu<float>(Heat3dProblem(hp), test::random_state_of<float>("u", hp.extent(), 7, true), "u");
}

// --chunk on a kernel that has no strips or plane chunks is an error, not a silent no-op.
TEST(Cuda, ChunkOnAKernelWithoutChunksIsAClearError) {
    REQUIRE_GPU();
    const HeatParams p = HeatParams::make(40, HeatStencil::p7);
    EXPECT_THROW(make_engine<float>(Heat3dProblem(p), Backend::cuda, EngineOptions{"naive", true, 16}), UsageError);
    EXPECT_THROW(make_engine<float>(ApfProblem(ApfParams::for_mesh(64)), Backend::cuda,
                                    EngineOptions{"temporal", true, 16, 2}),
                 UsageError);
    EXPECT_NO_THROW(make_engine<float>(Heat3dProblem(p), Backend::cuda, EngineOptions{"temporal", true, 16, 2}));
    // Every kernel of every model: --chunk is taken exactly by the kernels listed as taking it.
    for (const ModelInfo* m : models()) {
        const auto chunked = kernel_names(Backend::cuda, m->name, true);
        for (const std::string& k : kernel_names(Backend::cuda, m->name)) {
            const auto problem = m->box(Params{}, 40, 40, m->dims == 3 ? 40 : 1);
            const bool takes = std::find(chunked.begin(), chunked.end(), k) != chunked.end();
            if (takes)
                EXPECT_NO_THROW(make_engine<float>(*problem, Backend::cuda, EngineOptions{k, true, 16})) << m->name << ' ' << k;
            else
                EXPECT_THROW(make_engine<float>(*problem, Backend::cuda, EngineOptions{k, true, 16}), UsageError)
                    << m->name << ' ' << k;
        }
    }
}

TEST(Cuda, KernelListsHoldTheStrategyLadder) {
    for (const char* model : {"apf", "heat3d"}) {
        const auto names = kernel_names(Backend::cuda, model);
        for (const char* k : {"naive", "smem", "planes", "multi2", "multi4"})
            EXPECT_NE(std::find(names.begin(), names.end(), k), names.end()) << model << " lacks " << k;
        for (const auto& k : names) EXPECT_FALSE(kernel_description(Backend::cuda, model, k).empty()) << k;
    }
}

TEST(Cuda, UnknownKernelIsAClearError) {
    REQUIRE_GPU();
    const ApfParams p = ApfParams::for_mesh(30);
    EXPECT_THROW(make_engine<float>(ApfProblem(p), Backend::cuda, EngineOptions{"warp-drive"}), UsageError);
}

// Also catches initialisation that is not ordered on the engine's stream: three engines, built
// back to back, must agree to the bit.
TEST(Cuda, GraphReplayEqualsPlainLaunchesBitwise) {
    REQUIRE_GPU();
    const ApfParams p = ApfParams::for_mesh(64);
    auto plain = make_engine<float>(ApfProblem(p), Backend::cuda, EngineOptions{"", false});
    auto plain2 = make_engine<float>(ApfProblem(p), Backend::cuda, EngineOptions{"", false});
    auto graph = make_engine<float>(ApfProblem(p), Backend::cuda, EngineOptions{"", true});
    for (int steps : {3, 150}) {  // odd first: the graph must cope with swapped buffers
        plain->advance(steps);
        plain2->advance(steps);
        graph->advance(steps);
    }
    const auto a = test::apf_fields(*plain), b = test::apf_fields(*plain2), c = test::apf_fields(*graph);
    EXPECT_TRUE(test::bitwise_equal(a.e, b.e)) << "plain launches are not deterministic: " << max_relative_error(b.e, a.e);
    EXPECT_TRUE(test::bitwise_equal(a.e, c.e)) << "graph differs from plain: " << max_relative_error(c.e, a.e);
    EXPECT_TRUE(test::bitwise_equal(a.r, c.r)) << "graph differs from plain: " << max_relative_error(c.r, a.r);
}

TEST(Cuda, DeviceInitialStateAndStatsMatchTheHost) {
    REQUIRE_GPU();
    const ApfParams p = ApfParams::for_mesh(99, 70);
    auto gpu = make_engine<double>(ApfProblem(p), Backend::cuda);
    auto cpu = make_engine<double>(ApfProblem(p), Backend::cpu);
    EXPECT_TRUE(test::bitwise_equal(test::apf_fields(*gpu).e, test::apf_fields(*cpu).e));
    EXPECT_TRUE(test::bitwise_equal(test::apf_fields(*gpu).r, test::apf_fields(*cpu).r));
    gpu->advance(40);
    cpu->advance(40);
    const Observables g = gpu->observables(), c = cpu->observables();
    EXPECT_NEAR(g["max_norm"], c["max_norm"], 1e-12 * c["max_norm"]);
    EXPECT_NEAR(g["l2norm"], c["l2norm"], 1e-12 * c["l2norm"]);
}

TEST(Cuda, HeatErrorReductionMatchesTheHost) {
    REQUIRE_GPU();
    const HeatParams p = HeatParams::make_box(40, 23, 31, HeatStencil::p27);
    auto gpu = make_engine<double>(Heat3dProblem(p), Backend::cuda);
    auto cpu = make_engine<double>(Heat3dProblem(p), Backend::cpu);
    gpu->advance(25);
    cpu->advance(25);
    const Observables g = gpu->observables(), c = cpu->observables();  // at t = 25 dt
    EXPECT_NEAR(g["max_error"], c["max_error"], 1e-12);
    EXPECT_NEAR(g["l2norm"], c["l2norm"], 1e-12 * c["l2norm"]);
    EXPECT_GT(c["max_error"], 0);
}

// ModelInfo's depth query (what a decomposed run sizes its halos by, before it builds its engine)
// says what the engine then takes: the default strategy's depth below and above the size where
// the default turns temporal, a 27-point default, a --depth asked for, a single sweep asked for.
TEST(DepthQuery, SaysWhatTheEngineTakes) {
    REQUIRE_GPU();
    struct Case {
        int nx, ny, nz;
        HeatStencil stencil;
        std::string kernel;
        int depth;
    };
    const Case cases[] = {
        {67, 45, 33, HeatStencil::p7, "", 0},
        {128, 128, 72, HeatStencil::p7, "", 0},   // 1.2M cells: the default is temporal
        {128, 128, 72, HeatStencil::p27, "", 0},  // (temporal too: two weighted sums a plane)
        {67, 45, 33, HeatStencil::p7, "temporal", 3},
        {67, 45, 33, HeatStencil::p19, "planes", 0}};
    int deep = 0;
    for (const Case& c : cases) {
        const Heat3dProblem problem(HeatParams::make_box(c.nx, c.ny, c.nz, c.stencil));
        const ModelInfo& m = problem.model();
        const EngineOptions o{c.kernel, false, 0, c.depth};
        const std::int64_t cells = problem.extent().cells();
        const std::string what = std::string(to_string(c.stencil)) + " " + std::to_string(cells) + " cells, kernel '" + c.kernel + "'";
        const int f32 = m.depth(Precision::fp32)(problem, Backend::cuda, o, cells),
                  f64 = m.depth(Precision::fp64)(problem, Backend::cuda, o, cells);
        EXPECT_EQ(f32, make_engine<float>(problem, Backend::cuda, o)->kernel_info().depth) << what;
        EXPECT_EQ(f64, make_engine<double>(problem, Backend::cuda, o)->kernel_info().depth) << what;
        EXPECT_EQ(m.depth(Precision::fp32)(problem, Backend::omp, {}, cells), 1) << what;
        deep += f32 > 1;
    }
    EXPECT_EQ(deep, 3)
        << "the 7- and 27-point defaults at 1.2M cells and --depth 3 take several steps per pass";
}

}  // namespace
}  // namespace strata
