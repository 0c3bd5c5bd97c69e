// GPU tests of the wave model: each strategy against the CPU reference on random fields of odd
// sizes, with a sponge, sources and receivers; graph replay included. Skip, saying so, without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "strata/engine.hpp"
#include "strata/models/wave3d.hpp"
#include "test_util.hpp"

namespace strata {
namespace {

template <class T>
constexpr double tolerance() {
    return std::is_same_v<T, double> ? 1e-12 : 1e-5;
}

// max |a - b| / max |b|: traces pass through zero, so no pointwise relative error.
template <class T>
double trace_error(const std::vector<T>& a, const std::vector<T>& b) {
    double diff = 0, ref = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        diff = std::max(diff, std::fabs(double(a[i]) - double(b[i])));
        ref = std::max(ref, std::fabs(double(b[i])));
    }
    return diff / ref;
}

struct Dims {
    int nx, ny, nz;
};

template <class T>
void wave_matches_cpu(const std::string& kernel, bool graphs, int chunk = 0, Dims d = {67, 45, 33}) {
    const int nx = d.nx, ny = d.ny, nz = d.nz;  // by default no tile divides them
    std::vector<float> v = wave_velocity("layered:1500,2500@0.5", "", nx, ny, nz);
    const WaveParams params = wave_params(nx, ny, nz, 1.0, v, 0.5, 0, 5);
    Wave3dProblem p(params, std::move(v));
    p.sources = {PointSource{{nx / 2, ny / 2, nz / 2}, 2000, 0.5}, PointSource{{3, ny - 5, nz - 3}, 3000, 0.25}};
    p.receivers = {{0, 0, 0}, {nx / 2, ny / 2, nz / 2}, {nx - 1, ny - 1, nz - 1}, {nx - 3, 1, nz / 2 + 1}};
    p.record_steps = 80;
    HostField<T> u(params.extent3()), prev(params.extent3());
    test::fill_random(u, 51, -1, 1);
    test::fill_random(prev, 52, -1, 1);
    test::zero_ghosts(u);
    test::zero_ghosts(prev);
    const State<T> init = test::state<T>({{"p", u}, {"prev", prev}});
    auto cpu = make_engine<T>(p, Backend::omp, {}, &init);
    auto gpu = make_engine<T>(p, Backend::cuda, EngineOptions{kernel, graphs, chunk}, &init);
    EXPECT_EQ(gpu->kernel(), kernel);
    // 1, then 7 (both buffers written), then 71 (a graph of 64 replayed after an odd step)
    for (int steps : {1, 6, 64}) {
        cpu->advance(steps);
        gpu->advance(steps);
        const State<T> c = cpu->state(), g = gpu->state();
        EXPECT_LE(max_relative_error(g.field("p"), c.field("p")), tolerance<T>()) << kernel << " p after more " << steps;
        EXPECT_LE(max_relative_error(g.field("prev"), c.field("prev")), tolerance<T>())
            << kernel << " prev after more " << steps;
    }
    const std::vector<T> tc = cpu->array("traces"), tg = gpu->array("traces");
    ASSERT_EQ(tc.size(), tg.size());
    EXPECT_LE(trace_error(tg, tc), tolerance<T>()) << kernel << " traces";
}

// A GPU engine made from the CPU's state at step k (fields, step, traces) goes on as the CPU does:
// the sources keep their clock, the first k rows of traces come back as they were given.
template <class T>
void wave_continues_from_cpu_state(const std::string& kernel) {
    const int nx = 37, ny = 29, nz = 23;
    std::vector<float> v = wave_velocity("layered:1500,2500@0.5", "", nx, ny, nz);
    const WaveParams params = wave_params(nx, ny, nz, 1.0, v, 0.5, 0, 3);
    Wave3dProblem p(params, std::move(v));
    p.sources = {PointSource{{18, 14, 11}, 3000, 0.5}};
    p.receivers = {{18, 14, 11}, {30, 3, 20}};
    p.record_steps = 100;
    auto cpu = make_engine<T>(p, Backend::omp);
    cpu->advance(37);
    const State<T> at37 = cpu->state();
    auto gpu = make_engine<T>(p, Backend::cuda, EngineOptions{kernel, true}, &at37);
    cpu->advance(130);  // graphs of 64 replayed, and steps beyond the recording
    gpu->advance(130);
    const State<T> c = cpu->state(), g = gpu->state();
    EXPECT_EQ(g.step, 167);
    EXPECT_LE(max_relative_error(g.field("p"), c.field("p")), tolerance<T>()) << kernel;
    const std::vector<T>&gt = *g.array("traces"), &ct = *c.array("traces"), &t37 = *at37.array("traces");
    ASSERT_EQ(gt.size(), ct.size());
    EXPECT_TRUE(std::equal(t37.begin(), t37.end(), gt.begin())) << kernel;
    EXPECT_LE(trace_error(gt, ct), tolerance<T>()) << kernel << " traces";
}

class WaveStrategy : public ::testing::TestWithParam<std::string> {};

TEST_P(WaveStrategy, MatchesReferenceOnOddSizesFp32) {
    REQUIRE_GPU();
    wave_matches_cpu<float>(GetParam(), false);
}
TEST_P(WaveStrategy, MatchesReferenceOnOddSizesFp64) {
    REQUIRE_GPU();
    wave_matches_cpu<double>(GetParam(), false);
}
TEST_P(WaveStrategy, MatchesReferenceWithGraphReplay) {
    REQUIRE_GPU();
    wave_matches_cpu<float>(GetParam(), true);
}

TEST_P(WaveStrategy, ContinuesFromACpuStateWithItsStepAndTraces) {
    REQUIRE_GPU();
    wave_continues_from_cpu_state<float>(GetParam());
}

// Every kernel the backend lists (tma and tmasync where the build has sm_90): none skips its check.
INSTANTIATE_TEST_SUITE_P(AllKernels, WaveStrategy, ::testing::ValuesIn(kernel_names(Backend::cuda, "wave3d")));

// The streaming kernels other than naive, as the backend lists them.
std::vector<std::string> wave_streaming_kernels() {
    std::vector<std::string> k = kernel_names(Backend::cuda, "wave3d");
    k.erase(std::remove(k.begin(), k.end(), "naive"), k.end());
    return k;
}

// The streaming kernels split z into chunks of --chunk planes: 5 and 16 leave a short last
// chunk of the 33 planes, and every chunk starts its queue or ring over.
class WaveChunks : public ::testing::TestWithParam<std::string> {};
TEST_P(WaveChunks, ChunksShorterThanTheGridMatchTheReference) {
    REQUIRE_GPU();
    for (int chunk : {5, 16}) {
        SCOPED_TRACE("chunk " + std::to_string(chunk));
        wave_matches_cpu<float>(GetParam(), false, chunk);
        wave_matches_cpu<double>(GetParam(), false, chunk);
    }
}
INSTANTIATE_TEST_SUITE_P(StreamingKernels, WaveChunks, ::testing::ValuesIn(wave_streaming_kernels()));

// async runs its blocks in groups of tile rows, each group through all its z-chunks before the
// next (strata/core/block_order.hpp), as many rows as the device holds at once. This grid is
// wider than one group on an H100 (fp32: 16 x 19 tiles in rows of 16, fp64: 32 x 19 in rows of
// 8), so several groups run, the last one short.
// (tma and tmasync lay their blocks out as async does.)
TEST(WaveAsync, SeveralBlockGroupsMatchTheReference) {
    REQUIRE_GPU();
    const Dims wide{1001, 301, 12};
    for (const std::string& k : wave_streaming_kernels())
        if (k != "planes") {
            SCOPED_TRACE(k);
            wave_matches_cpu<float>(k, false, 5, wide);
            wave_matches_cpu<double>(k, false, 5, wide);
        }
}

// tma and tmasync read what async reads (the TMA's zero fill for the ghost layer, async's zero
// fill of ghost words) and update it with the same code: bitwise equal to async, with a sponge,
// both precisions, on sizes where the boxes are partial at every face (odd sizes, thin grids,
// n = 9, widths around the 64- and 32-cell tiles), short chunks (many blocks per column, planes
// beyond both ends zero-filled). The update writes p^{n+1} over p^{n-1}, random before: a cell
// it skipped keeps a value async's run does not have. Skipped where the build has no sm_90.
template <class T>
void wave_tma_equals_async(int nx, int ny, int nz, int chunk) {
    std::vector<float> v = wave_velocity("layered:1500,2500@0.5", "", nx, ny, nz);
    const WaveParams params = wave_params(nx, ny, nz, 1.0, v, 0.5, 0, 2);
    const Wave3dProblem p(params, std::move(v));
    HostField<T> u(params.extent3()), prev(params.extent3());
    test::fill_random(u, 60 + nx, -1, 1);
    test::fill_random(prev, 61 + ny, -1, 1);
    test::zero_ghosts(u);
    test::zero_ghosts(prev);
    const State<T> init = test::state<T>({{"p", u}, {"prev", prev}});
    auto async = make_engine<T>(p, Backend::cuda, EngineOptions{"async", false, chunk}, &init);
    async->advance(5);
    for (const char* kernel : {"tma", "tmasync"}) {
        auto tma = make_engine<T>(p, Backend::cuda, EngineOptions{kernel, false, chunk}, &init);
        tma->advance(5);
        for (const char* f : {"p", "prev"})
            EXPECT_TRUE(test::bitwise_equal(async->field(f), tma->field(f)))
                << kernel << " " << f << " " << nx << "x" << ny << "x" << nz << " chunk " << chunk << ": "
                << max_relative_error(tma->field(f), async->field(f));
    }
}
TEST(WaveTma, BitwiseEqualToAsync) {
    REQUIRE_GPU();
    const auto names = kernel_names(Backend::cuda, "wave3d");
    if (std::find(names.begin(), names.end(), "tma") == names.end()) GTEST_SKIP() << "a build without sm_90";
    for (auto [nx, ny, nz, chunk] : {std::array{9, 9, 9, 0}, {9, 9, 9, 2}, {131, 19, 7, 3}, {67, 17, 30, 5},
                                      {65, 33, 5, 1}, {260, 5, 11, 0}, {5, 6, 7, 0}}) {
        wave_tma_equals_async<float>(nx, ny, nz, chunk);
        wave_tma_equals_async<double>(nx, ny, nz, chunk);
    }
}

}  // namespace
}  // namespace strata
