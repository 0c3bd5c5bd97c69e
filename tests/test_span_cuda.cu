// Every CUDA strategy of the built-in models, updating the grid in spans of its slowest axis
// (DevGrid lo/hi: what an overlapped rank does, its boundary slabs and then its interior, each a
// launch of its own) equals one launch over the whole grid, bit for bit, in every buffer. The
// decomposed runs check the same over NCCL, which takes two GPUs; this takes one. The kernels
// that take another code path for a partial span (cached3d's Whole) meet both here.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cuda/engine.cuh"
#include "strata/models/aliev_panfilov.hpp"
#include "strata/models/heat2d.hpp"
#include "strata/models/heat3d.hpp"
#include "strata/models/wave3d.hpp"
#include "test_util.hpp"

namespace strata::cuda {
namespace {

// The whole buffers, ghost layers too (test::bitwise_equal compares the interiors): a span's launch
// must write nothing outside its planes.
template <class T>
bool same_bits(const HostField<T>& a, const HostField<T>& b) {
    return a.data.size() == b.data.size() && std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(T)) == 0;
}

// The problem's fields from random values (each in its declared range, ghosts zero), one step
// (a pass of the strategy's default depth for a temporal one) of every strategy, over the whole
// grid and then in the spans between `cuts` of the slowest axis (its last cut its length).
template <class T, class P>
void spans_equal_one_launch(const P& problem, const std::vector<int>& cuts) {
    problem.template with_kernel<T>([&](const auto& m) {
        using Model = std::decay_t<decltype(m)>;
        constexpr int N = int(std::size(P::fields));
        const Extent e = problem.extent();
        std::vector<HostField<T>> initial;
        for (int f = 0; f < N; ++f) {
            HostField<T> u(e);
            test::fill_random(u, 17 + f, P::fields[f].lo, P::fields[f].hi);
            test::zero_ghosts(u);
            initial.push_back(std::move(u));
        }
        Stream stream;
        const cudaStream_t s = stream.get();
        for (const Strategy<Model>& st : strategies<Model>()) {
            const bool fused = st.fused != nullptr;
            // Every buffer after the update, in the order FieldBuffers holds them.
            auto run = [&](bool in_spans) {
                FieldBuffers<DeviceField<T>, N> b(P::fields);
                for (int f = 0; f < N; ++f) {
                    if (b.has_current(f)) b.cur[f] = DeviceField<T>(e, s);
                    if (b.has_next(f, fused)) b.next[f] = DeviceField<T>(e, s);
                }
                for (int f = 0; f < N; ++f) {
                    if (b.scratch(f, fused)) b.next[f].poison(s);  // a cell no launch writes fails
                    b.current(f).upload(initial[f], s);
                }
                auto origin = [](DeviceField<T>& u) { return u.origin(); };
                DevGrid g = b.cur[0].grid();
                auto launch = [&] {
                    if (fused) {
                        const auto [rd, wr] = b.template pass<T>(origin);
                        st.fused(m, Model::bind(rd), Model::bind(wr), g, st.default_depth, LaunchKnobs{}, s);
                    } else {
                        st.launch(m, Model::bind(b.template step<T>(origin)), g, LaunchKnobs{}, s);
                    }
                };
                if (!in_spans) {
                    launch();
                } else {
                    for (std::size_t c = 0; c + 1 < cuts.size(); ++c) g.lo = cuts[c], g.hi = cuts[c + 1], launch();
                }
                std::vector<HostField<T>> out;
                for (int f = 0; f < N; ++f) {
                    if (b.cur[f]) out.push_back(b.cur[f].download(s));
                    if (b.next[f]) out.push_back(b.next[f].download(s));
                }
                return out;
            };
            const auto whole = run(false), spans = run(true);
            for (std::size_t i = 0; i < whole.size(); ++i)
                EXPECT_TRUE(same_bits(spans[i], whole[i]))
                    << st.name << (fused ? " depth " + std::to_string(st.default_depth) : std::string()) << ", "
                    << (sizeof(T) == 4 ? "fp32" : "fp64") << ": buffer " << i << " differs";
        }
        return 0;
    });
}

TEST(Spans, Heat3dEveryStrategyInSlabsEqualsOneLaunch) {
    REQUIRE_GPU();
    for (HeatStencil st : {HeatStencil::p7, HeatStencil::p19, HeatStencil::p27}) {
        SCOPED_TRACE(to_string(st));
        const Heat3dProblem p(HeatParams::make_box(67, 21, 37, st));
        spans_equal_one_launch<float>(p, {0, 5, 6, 33, 37});  // a one-plane span among them
        spans_equal_one_launch<double>(p, {0, 5, 6, 33, 37});
    }
}

TEST(Spans, Wave3dEveryStrategyInSlabsEqualsOneLaunch) {
    REQUIRE_GPU();
    std::vector<float> v = wave_velocity("layered:1500,2500@0.5", "", 37, 29, 45);
    const WaveParams params = wave_params(37, 29, 45, 1.0, v, 0.5, 0, 3);  // a sponge 3 deep
    const Wave3dProblem p(params, std::move(v));
    spans_equal_one_launch<float>(p, {0, 8, 37, 45});
    spans_equal_one_launch<double>(p, {0, 8, 37, 45});
}

TEST(Spans, TwoDimensionalModelsInStripsOfRowsEqualOneLaunch) {
    REQUIRE_GPU();
    const Heat2dProblem heat(Heat2dParams::make(301, 203));
    spans_equal_one_launch<float>(heat, {0, 4, 199, 203});
    spans_equal_one_launch<double>(heat, {0, 4, 199, 203});
    const ApfProblem apf(ApfParams::for_mesh(300, 170));  // 301 x 171 points, the mirror boundary
    spans_equal_one_launch<float>(apf, {0, 1, 9, 171});
    spans_equal_one_launch<double>(apf, {0, 1, 9, 171});
}

}  // namespace
}  // namespace strata::cuda
