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

// Where a launch's span [o, n) along an axis is cut into three: its first tile of t cells, the
// tiles up to its last, and that one (the faces and interior of a rank cut on both sides).
std::vector<int> tile_cuts(int n, int t, int o = 0) {
    std::vector<int> c{o};
    if (o + t < n) c.push_back(o + t);
    const int last = o + (n - 1 - o) / t * t;
    if (last > c.back()) c.push_back(last);
    c.push_back(n);
    return c;
}

// Where the spans of a kernel with tiles begin (DevGrid x0, y0, and lo along the slowest axis): a
// rank's own cells, past its halo (engine.cuh: own_cells). The cells before them stay as they were.
struct Origin {
    int x = 0, y = 0, slow = 0;
    bool any() const { return x || y || slow; }
};

// The problem's fields from random values (each in its declared range, ghosts zero), one step
// (a pass of the strategy's default depth for a temporal one) of every strategy, over the whole
// grid and then in the spans between `cuts` of the slowest axis (its last cut its length). With
// `xy`, each of those is cut along x and (3D) y too, at the strategy's tiles (tile_cuts): every
// box a launch of its own. With an `origin`, a kernel with tiles updates the cells from there
// alone, in tiles laid from it: those have the whole launch's bits, the others the bits they had.
template <class T, class P>
void spans_equal_one_launch(const P& problem, const std::vector<int>& cuts, bool xy = false,
                            Origin origin = {}) {
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
            // (A kernel without Strategy::tile takes no span of x or y: the slowest axis's alone.)
            const bool boxes = xy && st.tile;
            const Origin o = st.tile ? origin : Origin{};
            // Every buffer after the update (none launched: `launched` false), in the order
            // FieldBuffers holds them.
            auto run = [&](bool in_spans, bool launched = true) {
                FieldBuffers<DeviceField<T>, N> b(P::fields);
                for (int f = 0; f < N; ++f) {
                    // (with an origin, its column on 128 bytes, as a rank's fields lay it)
                    if (b.has_current(f)) b.cur[f] = DeviceField<T>(e, s, T(0), o.x);
                    if (b.has_next(f, fused)) b.next[f] = DeviceField<T>(e, s, T(0), o.x);
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
                const TileCells tile = boxes ? st.tile(fused ? st.default_depth : 1) : TileCells{};
                const std::vector<int> xs =
                    boxes ? tile_cuts(e.nx, tile.x, o.x) : std::vector<int>{o.x, 1 << 30};
                const std::vector<int> ys =
                    boxes && e.dims == 3 ? tile_cuts(e.ny, tile.y, o.y) : std::vector<int>{o.y, 1 << 30};
                std::vector<int> slabs = cuts;
                slabs.front() = o.slow;
                g.x0 = o.x, g.y0 = e.dims == 3 ? o.y : 0;
                if (!launched) {
                } else if (!in_spans) {
                    g.x0 = g.y0 = 0;
                    launch();
                } else {
                    for (std::size_t c = 0; c + 1 < slabs.size(); ++c)
                        for (std::size_t b = 0; b + 1 < ys.size(); ++b)
                            for (std::size_t a = 0; a + 1 < xs.size(); ++a) {
                                g.lo = slabs[c], g.hi = slabs[c + 1], g.ylo = ys[b], g.yhi = ys[b + 1];
                                g.xlo = xs[a], g.xhi = xs[a + 1];
                                launch();
                            }
                }
                std::vector<HostField<T>> out;
                for (int f = 0; f < N; ++f) {
                    if (b.cur[f]) out.push_back(b.cur[f].download(s));
                    if (b.next[f]) out.push_back(b.next[f].download(s));
                }
                return out;
            };
            auto whole = run(false);
            const auto spans = run(true);
            if (o.any()) {  // the cells before the origin as they were before the launch
                const auto before = run(false, false);
                for (std::size_t i = 0; i < whole.size(); ++i)
                    for (int k = 0; k < e.nz; ++k)
                        for (int j = 0; j < e.ny; ++j)
                            for (int x = 0; x < e.nx; ++x)
                                if (x < o.x || (e.dims == 3 ? j < o.y || k < o.slow : j < o.slow))
                                    whole[i].at(x, j, k) = before[i].at(x, j, k);
            }
            for (std::size_t i = 0; i < whole.size(); ++i)
                EXPECT_TRUE(same_bits(spans[i], whole[i]))
                    << st.name << (fused ? " depth " + std::to_string(st.default_depth) : std::string())
                    << (xy && st.tile ? " in boxes" : "") << (o.any() ? " from an origin" : "") << ", "
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

// The same in boxes cut along x and y at each strategy's tiles as well (an overlapped rank cut
// across x or y updates the columns and rows beside its neighbours first): wide enough for three
// spans of the widest tiles (128 cells of fp32 `vec`).
TEST(Spans, Heat3dEveryStrategyInBoxesEqualsOneLaunch) {
    REQUIRE_GPU();
    for (HeatStencil st : {HeatStencil::p7, HeatStencil::p27}) {
        SCOPED_TRACE(to_string(st));
        const Heat3dProblem p(HeatParams::make_box(300, 75, 21, st));
        spans_equal_one_launch<float>(p, {0, 3, 21}, true);
        spans_equal_one_launch<double>(p, {0, 3, 21}, true);
    }
}

TEST(Spans, Wave3dEveryStrategyInBoxesEqualsOneLaunch) {
    REQUIRE_GPU();
    std::vector<float> v = wave_velocity("layered:1500,2500@0.5", "", 150, 40, 20);
    const WaveParams params = wave_params(150, 40, 20, 1.0, v, 0.5, 0, 3);
    const Wave3dProblem p(params, std::move(v));
    spans_equal_one_launch<float>(p, {0, 8, 20}, true);
    spans_equal_one_launch<double>(p, {0, 8, 20}, true);
}

TEST(Spans, TwoDimensionalModelsInBoxesEqualOneLaunch) {
    REQUIRE_GPU();
    const Heat2dProblem heat(Heat2dParams::make(301, 70));
    spans_equal_one_launch<float>(heat, {0, 4, 70}, true);
    spans_equal_one_launch<double>(heat, {0, 4, 70}, true);
    const ApfProblem apf(ApfParams::for_mesh(300, 60));  // the mirror boundary
    spans_equal_one_launch<float>(apf, {0, 9, 61}, true);
    spans_equal_one_launch<double>(apf, {0, 9, 61}, true);
}

// A rank whose kernel has tiles updates its own cells alone, in tiles laid from the first (on 16
// bytes along x): whole, and in boxes from there as an overlapped rank's faces and interior.
template <class T, class P>
void own_cells_equal_one_launch(const P& problem, const std::vector<int>& cuts, int y, int slow) {
    const Origin o{int(16 / sizeof(T)), y, slow};
    spans_equal_one_launch<T>(problem, cuts, false, o);
    spans_equal_one_launch<T>(problem, cuts, true, o);
}

TEST(Spans, KernelsWithTilesFromARanksOwnCellsEqualOneLaunch) {
    REQUIRE_GPU();
    for (HeatStencil st : {HeatStencil::p7, HeatStencil::p27}) {
        SCOPED_TRACE(to_string(st));
        const Heat3dProblem p(HeatParams::make_box(300, 75, 21, st));
        own_cells_equal_one_launch<float>(p, {0, 3, 21}, 1, 1);
        own_cells_equal_one_launch<double>(p, {0, 5, 21}, 4, 2);
    }
    std::vector<float> v = wave_velocity("layered:1500,2500@0.5", "", 150, 40, 20);
    const WaveParams params = wave_params(150, 40, 20, 1.0, v, 0.5, 0, 3);
    const Wave3dProblem wave(params, std::move(v));
    own_cells_equal_one_launch<float>(wave, {0, 8, 20}, 4, 4);
    own_cells_equal_one_launch<double>(wave, {0, 8, 20}, 4, 4);
    const Heat2dProblem heat(Heat2dParams::make(301, 70));
    own_cells_equal_one_launch<float>(heat, {0, 4, 70}, 0, 1);
    own_cells_equal_one_launch<double>(heat, {0, 4, 70}, 0, 1);
    const ApfProblem apf(ApfParams::for_mesh(300, 60));  // the mirror boundary
    own_cells_equal_one_launch<float>(apf, {0, 9, 61}, 0, 2);
    own_cells_equal_one_launch<double>(apf, {0, 9, 61}, 0, 2);
}

}  // namespace
}  // namespace strata::cuda
