// The state scale (Problem::state_scale, docs/precision.md): a linear model stored times a power of
// two advances to the same solution times it, bit for bit in fp32; every exit (values(),
// observables, traces, snapshots, Python's field()) gives the model's values; fp16 runs of a wave
// whose pressures sit below fp16's normal range keep their traces with it and lose them without;
// checkpoints record it and a restart at another scale is an error that names the fix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "app/run_io.hpp"
#include "stencil/model.hpp"
#include "strata/core/error.hpp"
#include "strata/io/vti.hpp"
#include "strata/simulation.hpp"
#include "strata/stencil.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

// wave3d on a box of `extent` metres with a source at the centre and a line of receivers: with a
// large extent (h ~ 1 km) its pressures are ~1e-5, mostly below fp16's normal range (6.1e-5).
SimulationOptions wave(double extent, Precision p, const std::string& scale) {
    SimulationOptions o;
    o.model = "wave3d";
    const double e = extent;
    o.params = {
        {"n", std::int64_t(40)},
        {"steps", std::int64_t(150)},
        {"extent", e},
        {"receiver_line", std::string(std::to_string(0.125 * e) + "," + std::to_string(0.5 * e) + "," +
                                      std::to_string(0.5 * e) + "," + std::to_string(0.875 * e) + "," +
                                      std::to_string(0.5 * e) + "," + std::to_string(0.5 * e) + ",5")}};
    o.precision = p;
    o.backend = Backend::omp;
    o.state_scale = scale;
    return o;
}

SimulationOptions heat(Precision p, const std::string& scale) {
    SimulationOptions o;
    o.model = "heat3d";
    o.params = {{"n", std::int64_t(20)}, {"steps", std::int64_t(30)}, {"stencil", std::string("27pt")}};
    o.precision = p;
    o.backend = Backend::omp;
    o.state_scale = scale;
    return o;
}

template <class T>
void expect_bitwise(const std::vector<T>& a, const std::vector<T>& b, const std::string& what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (std::size_t i = 0; i < a.size(); ++i)
        ASSERT_EQ(std::memcmp(&a[i], &b[i], sizeof(T)), 0)
            << what << " at " << i << ": " << a[i] << " vs " << b[i];
}

double relative_l2(const std::vector<double>& a, const std::vector<double>& b) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < a.size(); ++i) num += (a[i] - b[i]) * (a[i] - b[i]), den += b[i] * b[i];
    return std::sqrt(num / den);
}

TEST(StateScale, AutoPicksThePowerOfTwoThatBringsTheValuesNearOne) {
    auto problem = [](const SimulationOptions& o) {
        return find_model(o.model).problem(o.params, std::cerr);
    };
    const auto w = problem(wave(40000, Precision::fp16, "auto"));
    // h = 40000 / 39 m: a unit source's direct wave 10 cells away peaks at 1 / (4 pi 10 h) = 7.8e-6.
    EXPECT_EQ(app::choose_state_scale(*w, Precision::fp16, "auto"), std::ldexp(1.0, 17));
    EXPECT_EQ(app::choose_state_scale(*w, Precision::bf16, "auto"), 1);  // fp32's range: nothing to gain
    EXPECT_EQ(app::choose_state_scale(*w, Precision::fp32, "auto"), 1);
    EXPECT_EQ(app::choose_state_scale(*w, Precision::fp16, "none"), 1);
    EXPECT_EQ(app::choose_state_scale(*w, Precision::fp32, "2^10"), 1024);
    EXPECT_EQ(app::choose_state_scale(*w, Precision::fp16, "2^-3"), 0.125);
    EXPECT_EQ(app::choose_state_scale(*w, Precision::fp16, "4096"), 4096);
    // heat3d starts from sin modes of amplitude 1: already near 1.
    EXPECT_EQ(app::choose_state_scale(*problem(heat(Precision::fp16, "auto")), Precision::fp16, "auto"), 1);
    for (const char* bad : {"3", "0", "-4", "2^x", "1e400", "2^70", "abc"}) {
        EXPECT_THROW(app::choose_state_scale(*w, Precision::fp16, bad), UsageError) << bad;
    }
    // apf's update is cubic in E: a scale would change its solution. Auto leaves it at 1.
    SimulationOptions a;
    a.model = "apf";
    a.params = {{"n", std::int64_t(32)}, {"iterations", std::int64_t(5)}};
    const auto apf = problem(a);
    EXPECT_EQ(app::choose_state_scale(*apf, Precision::fp16, "auto"), 1);
    try {
        app::choose_state_scale(*apf, Precision::fp16, "1024");
        ADD_FAILURE() << "apf took a scale";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("not linear"), std::string::npos) << e.what();
    }
}

// fp32 values times 2^k round exactly as the values do: where nothing underflows (heat3d: sin
// modes, no value below 1e-6) the scaled run is the unscaled one times 2^k, every value and
// observable bit for bit, and its snapshot the model's values.
TEST(StateScale, Fp32ScaledHeatIsTheUnscaledOneBitForBit) {
    const SimulationOptions plain = heat(Precision::fp32, "none");
    SimulationOptions scaled = plain;
    scaled.state_scale = "2^12";
    Simulation a(plain), b(scaled);
    EXPECT_EQ(b.state_scale(), 4096);
    a.advance(a.problem().steps());
    b.advance(b.problem().steps());
    expect_bitwise(a.engine().values("u"), b.engine().values("u"), "u");
    const auto oa = a.engine().observables().all(), ob = b.engine().observables().all();
    ASSERT_EQ(oa.size(), ob.size());
    for (std::size_t i = 0; i < oa.size(); ++i) EXPECT_EQ(oa[i].second, ob[i].second) << oa[i].first;
    // The stored values are the model's times the scale.
    const HostField<float> raw = b.engine_as<float>().field("u"), mine = a.engine_as<float>().field("u");
    for (std::size_t i = 0; i < raw.data.size(); ++i) ASSERT_EQ(raw.data[i], 4096 * mine.data[i]) << i;
    // A snapshot is the model's values.
    const fs::path dir = fs::temp_directory_path() / "strata-scale-snapshot";
    fs::remove_all(dir);
    const std::vector<std::string> files = b.snapshot(dir.string(), "vti", "none", "u");
    b.flush();
    const io::VtiField f = io::read_vti(files.at(0));
    expect_bitwise(f.values, a.engine().values("u"), "snapshot");
    fs::remove_all(dir);
}

// wave3d (sources, receivers, the sponge) scaled in fp32: the same run but for the wave's tail
// ahead of its front, whose values fall below fp32's normal range (1.2e-38) and round apart at
// another scale; those differences reach the front's values at the rounding's level.
TEST(StateScale, Fp32ScaledWaveIsTheUnscaledOneToTheRounding) {
    Simulation a(wave(4000, Precision::fp32, "none")), b(wave(4000, Precision::fp32, "2^-20"));
    a.advance(a.problem().steps());
    b.advance(b.problem().steps());
    EXPECT_LT(relative_l2(b.engine().values("traces"), a.engine().values("traces")), 1e-6);
    EXPECT_LT(relative_l2(b.engine().values("p"), a.engine().values("p")), 1e-6);
    const double ea = a.engine().observables()["energy"], eb = b.engine().observables()["energy"];
    EXPECT_NEAR(eb / ea, 1, 1e-6);
}

// The wave of a 40 km box at fp16: scaled, its traces stay within the 1% that fp32 leaves to the
// Green's function; stored as they are, most of its values are subnormal and the traces lose it.
TEST(StateScale, Fp16WaveKeepsItsTracesOnlyScaled) {
    Simulation ref(wave(40000, Precision::fp64, "none")), fit(wave(40000, Precision::fp16, "auto")),
        bare(wave(40000, Precision::fp16, "none"));
    EXPECT_EQ(fit.state_scale(), std::ldexp(1.0, 17));
    for (Simulation* s : {&ref, &fit, &bare}) s->advance(s->problem().steps());
    const std::vector<double> want = ref.engine().values("traces");
    double peak = 0;
    for (double v : want) peak = std::max(peak, std::fabs(v));
    EXPECT_LT(peak, 1e-4);  // the problem is the one meant: below fp16's normal range mostly
    const double scaled = relative_l2(fit.engine().values("traces"), want),
                 plain = relative_l2(bare.engine().values("traces"), want);
    EXPECT_LT(scaled, 0.005) << "fp16 with the scale";
    EXPECT_GT(plain, 4 * scaled) << "fp16 without the scale: " << plain << " against " << scaled;
}

// A checkpoint records the scale; a restart takes it when the run's is chosen (auto), a given one
// that differs is an error naming the fix, and the same continues bit for bit.
TEST(StateScale, CheckpointKeepsTheScaleAndARestartMustMatchIt) {
    const fs::path path = fs::temp_directory_path() / "strata-scale.ck";
    SimulationOptions o = heat(Precision::fp32, "1024");
    Simulation whole(o), half(o);
    whole.advance(30);
    half.advance(12);
    half.checkpoint(path.string());
    SimulationOptions again = o;
    again.restart = path.string();
    Simulation rest(again);
    rest.advance(18);
    expect_bitwise(whole.engine().values("u"), rest.engine().values("u"), "restarted");
    again.state_scale = "auto";  // fp32: auto would be 1; the checkpoint's 1024 is taken
    Simulation taken(again);
    EXPECT_EQ(taken.state_scale(), 1024);
    taken.advance(18);
    expect_bitwise(whole.engine().values("u"), taken.engine().values("u"),
                   "restarted at the checkpoint's scale");
    again.state_scale = "none";
    try {
        Simulation other(again);
        ADD_FAILURE() << "a restart at another scale ran";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("--state-scale 1024"), std::string::npos) << e.what();
    }
    fs::remove(path);
}

TEST(StateScale, StencilFilesTakeAScaleWhenEveryUpdateIsLinear) {
    auto linear = [](const std::string& body) { return stencil::scales_linearly(stencil::parse(body)); };
    EXPECT_TRUE(linear("dims 3\nparam c = 0.1\nfield u = 1\nu' = u + c * lap(u)\n"));
    EXPECT_TRUE(linear("dims 2\ncoefficient k = x\nfield u = 0\nu' = u + k * (u[1,0] - u) / 2\n"));
    EXPECT_TRUE(linear(
        "dims 2\nfield u = 0\nfield v = 0\nlet d = u - v\nu' = max(u, v) + abs(d)\nv' = -v * (u > v)\n"));
    EXPECT_TRUE(linear("dims 2\nfield u = 0\nfield v = 1\nu' = u + 0.1 * lap(u)\nv' = v\n"));
    EXPECT_TRUE(
        linear("dims 2\nfield p = 0\nfield q = 0\nboundary periodic\np' = 2*p - q + lap(p)\nq' = p\n"));
    EXPECT_FALSE(linear("dims 2\nfield u = 0\nu' = u + 1\n"));        // affine
    EXPECT_FALSE(linear("dims 2\nfield u = 0\nu' = u * (1 - u)\n"));  // quadratic
    EXPECT_FALSE(linear("dims 2\nfield u = 0\nu' = exp(u)\n"));
    EXPECT_FALSE(linear("dims 2\nfield u = 0\nu' = max(u, 0.5)\n"));
    EXPECT_FALSE(linear("dims 2\nfield u = 0\nu' = u * (u > 0.5)\n"));  // a threshold in the model's units
    EXPECT_FALSE(linear("dims 2\nfield u = 0\nboundary fixed 1\nu' = u + lap(u)\n"));  // ghosts of 1
    EXPECT_TRUE(linear("dims 2\nfield u = 0\nboundary fixed 0\nu' = u + lap(u)\n"));
    for (const char* name : {"gray-scott.stencil", "apf.stencil", "barkley.stencil"})
        EXPECT_FALSE(stencil::scales_linearly(
            stencil::parse_file(std::string(STRATA_SOURCE_DIR) + "/examples/stencils/" + name)))
            << name;
    for (const char* name : {"heat7.stencil", "diffusion3d.stencil", "variable-wave.stencil", "wave8.stencil",
                             "heat2d.stencil", "jacobi.stencil", "heat-periodic.stencil"})
        EXPECT_TRUE(stencil::scales_linearly(
            stencil::parse_file(std::string(STRATA_SOURCE_DIR) + "/examples/stencils/" + name)))
            << name;
}

}  // namespace
}  // namespace strata
