// 16-bit storage on the GPU: the device rounds as the host does (cvt.rn against half.hpp's
// software rounding), every strategy of every built-in model at fp16 and bf16 against the CPU
// engines at the same precision, and the temporal kernels bit for bit equal to a single sweep.
#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <random>
#include <sstream>
#include <vector>

#include "app/check.hpp"
#include "cuda/check.hpp"
#include "strata/core/half.hpp"
#include "strata/engine.hpp"
#include "strata/models/aliev_panfilov.hpp"
#include "strata/models/heat2d.hpp"
#include "strata/models/heat3d.hpp"
#include "test_util.hpp"

namespace strata {
namespace {

template <class H>
__global__ void round_trip(const float* in, std::uint16_t* rounded, const std::uint16_t* patterns,
                           float* widened, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    rounded[i] = H(in[i]).bits;
    H h;
    h.bits = patterns[i];
    widened[i] = float(h);
}

template <class H>
void device_rounds_as_the_host() {
    std::vector<float> in;
    std::mt19937 gen(11);
    for (int i = 0; i < (1 << 20); ++i)
        in.push_back(std::bit_cast<float>(std::uint32_t(gen()) & 0xff7fffffu));
    for (int h = 0; h < 65536; ++h) {  // every value and the midpoints above it, a float ulp either side
        H a, b;
        a.bits = std::uint16_t(h), b.bits = std::uint16_t(h + 1);
        const float mid = float((double(float(a)) + double(float(b))) / 2);
        for (float x : {float(a), mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)})
            if (!std::isnan(x)) in.push_back(x);
    }
    const int n = int(in.size());
    std::vector<std::uint16_t> patterns(std::size_t(n), 0);
    for (int i = 0; i < n; ++i) patterns[std::size_t(i)] = std::uint16_t(i);
    float *d_in, *d_wide;
    std::uint16_t *d_round, *d_pat;
    STRATA_CUDA_CHECK(cudaMalloc(&d_in, sizeof(float) * n));
    STRATA_CUDA_CHECK(cudaMalloc(&d_wide, sizeof(float) * n));
    STRATA_CUDA_CHECK(cudaMalloc(&d_round, 2 * std::size_t(n)));
    STRATA_CUDA_CHECK(cudaMalloc(&d_pat, 2 * std::size_t(n)));
    STRATA_CUDA_CHECK(cudaMemcpy(d_in, in.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
    STRATA_CUDA_CHECK(cudaMemcpy(d_pat, patterns.data(), 2 * std::size_t(n), cudaMemcpyHostToDevice));
    round_trip<H><<<(n + 255) / 256, 256>>>(d_in, d_round, d_pat, d_wide, n);
    STRATA_CUDA_CHECK(cudaGetLastError());
    std::vector<std::uint16_t> rounded(static_cast<std::size_t>(n));
    std::vector<float> wide(static_cast<std::size_t>(n));
    STRATA_CUDA_CHECK(cudaMemcpy(rounded.data(), d_round, 2 * std::size_t(n), cudaMemcpyDeviceToHost));
    STRATA_CUDA_CHECK(cudaMemcpy(wide.data(), d_wide, sizeof(float) * n, cudaMemcpyDeviceToHost));
    for (void* p : {(void*)d_in, (void*)d_wide, (void*)d_round, (void*)d_pat}) STRATA_CUDA_CHECK(cudaFree(p));
    int wrong = 0;
    for (int i = 0; i < n && wrong < 5; ++i) {
        const H host(in[std::size_t(i)]);
        if (host.bits != rounded[std::size_t(i)]) {
            ++wrong;
            ADD_FAILURE() << std::hexfloat << in[std::size_t(i)] << ": host " << host.bits << ", device "
                          << rounded[std::size_t(i)];
        }
        if (i < 65536) {
            H h;
            h.bits = std::uint16_t(i);
            const float f = float(h);
            if (!(std::isnan(f) && std::isnan(wide[std::size_t(i)])) &&
                std::bit_cast<std::uint32_t>(f) != std::bit_cast<std::uint32_t>(wide[std::size_t(i)])) {
                ++wrong;
                ADD_FAILURE() << "pattern " << i << ": host " << f << ", device " << wide[std::size_t(i)];
            }
        }
    }
}

TEST(HalfCuda, DeviceRoundsAndWidensAsTheHost) {
    REQUIRE_GPU();
    device_rounds_as_the_host<f16>();
    device_rounds_as_the_host<bf16>();
}

// `strata check` at fp16 and bf16: every strategy (every depth of the temporal ones) against the
// CPU engine of the same precision from a random state, within a few of the type's ulps.
void every_strategy_matches_the_cpu(const std::string& model, Params params = {}) {
    app::CheckOptions o;
    o.model = model;
    o.params = std::move(params);
    o.precisions = {Precision::fp16, Precision::bf16};
    std::ostringstream out;
    EXPECT_EQ(app::run_check(o, out), 0) << out.str();
    EXPECT_NE(out.str().find("fp16"), std::string::npos) << out.str();
}
TEST(HalfCuda, EveryStrategyOfApfMatchesTheCpu) {
    REQUIRE_GPU();
    every_strategy_matches_the_cpu("apf");
}
TEST(HalfCuda, EveryStrategyOfHeat2dMatchesTheCpu) {
    REQUIRE_GPU();
    every_strategy_matches_the_cpu("heat2d");
}
TEST(HalfCuda, EveryStrategyOfHeat3dMatchesTheCpuOnEveryStencil) {
    REQUIRE_GPU();
    for (const char* s : {"7pt", "19pt", "27pt"}) every_strategy_matches_the_cpu("heat3d", {{"stencil", s}});
}
TEST(HalfCuda, EveryStrategyOfWave3dMatchesTheCpu) {
    REQUIRE_GPU();
    app::CheckOptions o;
    o.model = "wave3d";
    o.precisions = {Precision::fp16, Precision::bf16};
    o.kernels = {"naive", "planes", "async"};  // tma and tmasync refuse 16 bits (tested below)
    std::ostringstream out;
    EXPECT_EQ(app::run_check(o, out), 0) << out.str();
}
// Every example stencil file at fp16 and bf16: every strategy the file gets (wave8.stencil's tma and
// tmasync refuse 16 bits, and check says so) against its CPU engine of the same precision.
TEST(HalfCuda, EveryStrategyOfEveryExampleStencilMatchesTheCpu) {
    REQUIRE_GPU();
    for (const auto& f : std::filesystem::directory_iterator(test::stencil_example(""))) {
        SCOPED_TRACE(f.path().string());
        every_strategy_matches_the_cpu(f.path().string());
    }
}
TEST(HalfCuda, WaveTmaAt16BitsIsAClearError) {
    REQUIRE_GPU();
    const Params none;
    const std::unique_ptr<Problem> p = find_model("wave3d").box(none, 40, 40, 40);
    try {
        make_engine<f16>(*p, Backend::cuda, EngineOptions{"tma", false})->advance(1);
        FAIL() << "wave3d's tma ran at fp16";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("async"), std::string::npos) << e.what();
    }
}

// The temporal kernels round each level to the storage type as a single sweep rounds each step:
// bit for bit equal to `planes` after steps no depth divides.
template <class T>
void temporal_equals_planes() {
    {
        const ApfParams p = ApfParams::for_mesh(200, 97);
        const auto init = test::random_apf_state<T>(p, 50);
        auto planes = make_engine<T>(ApfProblem(p), Backend::cuda, EngineOptions{"planes", false}, &init);
        auto temporal =
            make_engine<T>(ApfProblem(p), Backend::cuda, EngineOptions{"temporal", false, 0, 4}, &init);
        planes->advance(23);
        temporal->advance(23);
        const auto a = test::apf_fields(*planes), b = test::apf_fields(*temporal);
        EXPECT_TRUE(test::bitwise_equal(a.e, b.e)) << "apf E " << max_relative_error(b.e, a.e);
        EXPECT_TRUE(test::bitwise_equal(a.r, b.r)) << "apf R " << max_relative_error(b.r, a.r);
    }
    for (HeatStencil s : {HeatStencil::p7, HeatStencil::p27}) {
        const HeatParams p = HeatParams::make_box(90, 61, 40, s);
        HostField<T> init(p.extent());
        test::fill_random(init, 70);
        test::zero_ghosts(init);
        const auto state = test::state_of("u", init);
        auto planes = make_engine<T>(Heat3dProblem(p), Backend::cuda, EngineOptions{"planes", false}, &state);
        auto temporal =
            make_engine<T>(Heat3dProblem(p), Backend::cuda, EngineOptions{"temporal", false, 16, 3}, &state);
        planes->advance(23);
        temporal->advance(23);
        const auto a = planes->field("u"), b = temporal->field("u");
        EXPECT_TRUE(test::bitwise_equal(a, b))
            << "heat3d " << to_string(s) << " " << max_relative_error(b, a);
    }
    {
        const Heat2dProblem p(Heat2dParams::make(257, 131));
        HostField<T> u(p.extent());
        test::fill_random(u, 91);
        const State<T> init = test::state_of("u", u);
        auto planes = make_engine<T>(p, Backend::cuda, EngineOptions{"planes", false}, &init);
        auto temporal = make_engine<T>(p, Backend::cuda, EngineOptions{"temporal", false, 0, 5}, &init);
        planes->advance(23);
        temporal->advance(23);
        const auto a = planes->field("u"), b = temporal->field("u");
        EXPECT_TRUE(test::bitwise_equal(a, b)) << "heat2d " << max_relative_error(b, a);
    }
}
TEST(HalfCuda, TemporalEqualsPlanesBitwise) {
    REQUIRE_GPU();
    temporal_equals_planes<f16>();
    temporal_equals_planes<bf16>();
}

}  // namespace
}  // namespace strata
