// GPU tests of the wave model: each strategy against the CPU reference on random fields of odd
// sizes, with a sponge, sources and receivers; graph replay included. Skip, saying so, without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
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
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device here: GPU test skipped";
    wave_matches_cpu<float>(GetParam(), false);
}
TEST_P(WaveStrategy, MatchesReferenceOnOddSizesFp64) {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device here: GPU test skipped";
    wave_matches_cpu<double>(GetParam(), false);
}
TEST_P(WaveStrategy, MatchesReferenceWithGraphReplay) {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device here: GPU test skipped";
    wave_matches_cpu<float>(GetParam(), true);
}

TEST_P(WaveStrategy, ContinuesFromACpuStateWithItsStepAndTraces) {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device here: GPU test skipped";
    wave_continues_from_cpu_state<float>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(AllKernels, WaveStrategy, ::testing::Values("naive", "planes", "async"));

// The streaming kernels split z into chunks of --chunk planes: 5 and 16 leave a short last
// chunk of the 33 planes, and every chunk starts its queue or ring over.
class WaveChunks : public ::testing::TestWithParam<std::string> {};
TEST_P(WaveChunks, ChunksShorterThanTheGridMatchTheReference) {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device here: GPU test skipped";
    for (int chunk : {5, 16}) {
        SCOPED_TRACE("chunk " + std::to_string(chunk));
        wave_matches_cpu<float>(GetParam(), false, chunk);
        wave_matches_cpu<double>(GetParam(), false, chunk);
    }
}
INSTANTIATE_TEST_SUITE_P(StreamingKernels, WaveChunks, ::testing::Values("planes", "async"));

// async runs its blocks in groups of tile rows, each group through all its z-chunks before the
// next (strata/core/block_order.hpp), as many rows as the device holds at once. This grid is
// wider than one group on an H100 (fp32: 16 x 19 tiles in rows of 16, fp64: 32 x 19 in rows of
// 8), so several groups run, the last one short.
TEST(WaveAsync, SeveralBlockGroupsMatchTheReference) {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device here: GPU test skipped";
    const Dims wide{1001, 301, 12};
    wave_matches_cpu<float>("async", false, 5, wide);
    wave_matches_cpu<double>("async", false, 5, wide);
}

}  // namespace
}  // namespace strata
