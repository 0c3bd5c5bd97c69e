// The state scale on the GPU (Problem::state_scale; the CPU's in test_state_scale.cpp): the initial
// state built on the device times the scale, the sources scaled, the device reductions and the
// traces taken back out; the same as the CPU engines. Skips, saying so, without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "strata/simulation.hpp"
#include "test_util.hpp"

namespace strata {
namespace {

double relative_l2(const std::vector<double>& a, const std::vector<double>& b) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < a.size(); ++i) num += (a[i] - b[i]) * (a[i] - b[i]), den += b[i] * b[i];
    return std::sqrt(num / den);
}

// heat3d scaled by 2^12 in fp32 on every 3D strategy: bitwise the unscaled run (no value
// underflows), its stored values 4096 times the model's, its device reductions the same figures.
TEST(CudaStateScale, Fp32ScaledHeatEqualsTheUnscaledOnEveryStrategyBitwise) {
    REQUIRE_GPU();
    for (const std::string kernel : {"naive", "planes", "async", "cached", "temporal", "tma"}) {
        SimulationOptions o;
        o.model = "heat3d";
        o.params = {{"n", std::int64_t(37)}, {"steps", std::int64_t(16)}, {"stencil", std::string("27pt")}};
        o.precision = Precision::fp32;
        o.backend = Backend::cuda;
        o.engine.kernel = kernel;
        o.wisdom = RunOptions::Wisdom::ignore;
        o.state_scale = "none";
        SimulationOptions s = o;
        s.state_scale = "4096";
        Simulation a(o), b(s);
        a.advance(16);
        b.advance(16);
        const std::vector<double> va = a.engine().values("u"), vb = b.engine().values("u");
        ASSERT_EQ(va.size(), vb.size());
        for (std::size_t i = 0; i < va.size(); ++i) ASSERT_EQ(va[i], vb[i]) << kernel << " at " << i;
        const HostField<float> raw = b.engine_as<float>().field("u"), mine = a.engine_as<float>().field("u");
        for (std::size_t i = 0; i < raw.data.size(); ++i)
            ASSERT_EQ(raw.data[i], 4096 * mine.data[i]) << kernel << " " << i;
        const auto oa = a.engine().observables().all(), ob = b.engine().observables().all();
        for (std::size_t i = 0; i < oa.size(); ++i)
            EXPECT_EQ(oa[i].second, ob[i].second) << kernel << " " << oa[i].first;
    }
}

// A wave of a 40 km box in fp16 (pressures ~1e-5, below fp16's normal range): the scale the run
// picks (2^17) gives the CPU's traces on the GPU and keeps them within 0.5% of fp64's.
TEST(CudaStateScale, Fp16WaveMatchesTheCpuAndKeepsItsTraces) {
    REQUIRE_GPU();
    auto wave = [](Backend b, Precision p) {
        SimulationOptions o;
        o.model = "wave3d";
        o.params = {{"n", std::int64_t(40)},
                    {"steps", std::int64_t(150)},
                    {"extent", 40000.0},
                    {"receiver_line", std::string("5000,20000,20000,35000,20000,20000,5")}};
        o.precision = p;
        o.backend = b;
        o.wisdom = RunOptions::Wisdom::ignore;
        return o;
    };
    Simulation gpu(wave(Backend::cuda, Precision::fp16)), cpu(wave(Backend::omp, Precision::fp16)),
        ref(wave(Backend::omp, Precision::fp64));
    EXPECT_EQ(gpu.state_scale(), std::ldexp(1.0, 17));
    for (Simulation* s : {&gpu, &cpu, &ref}) s->advance(150);
    const std::vector<double> g = gpu.engine().values("traces"), c = cpu.engine().values("traces"),
                              want = ref.engine().values("traces");
    EXPECT_LT(relative_l2(g, c), 2e-3) << "GPU against CPU at fp16";
    EXPECT_LT(relative_l2(g, want), 5e-3) << "GPU fp16 against fp64";
    EXPECT_NEAR(gpu.engine().observables()["energy"] / cpu.engine().observables()["energy"], 1, 5e-3);
}

}  // namespace
}  // namespace strata
