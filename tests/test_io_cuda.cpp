// GPU snapshots and restart: the asynchronous copy holds exactly what a synchronous download
// holds, and a restarted GPU run continues bitwise. They skip, saying so, without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "strata/core/field_ops.hpp"
#include "strata/engine.hpp"
#include "strata/models/heat3d.hpp"
#include "strata/models/wave3d.hpp"
#include "strata/io/checkpoint.hpp"
#include "strata/run.hpp"
#include "test_util.hpp"

namespace strata {
namespace {

template <class T>
bool same_bits(const T* a, const std::vector<T>& b) {
    return std::memcmp(a, b.data(), b.size() * sizeof(T)) == 0;
}

// Two engines from the same random state advance in lock step; one takes snapshots behind
// queued steps (graphs on, so copies sit between graph launches), the other downloads
// synchronously. Two buffers, both held at once, then reused.
template <class T>
void apf_snapshots_match_downloads() {
    const ApfParams p = ApfParams::for_mesh(300, 157);  // 301 x 158: no tile divides it
    const State<T> init = test::random_apf_state<T>(p, 41);
    auto a = make_engine<T>(ApfProblem(p), Backend::cuda, EngineOptions{"", true, 0, 0, 2}, &init);
    auto b = make_engine<T>(ApfProblem(p), Backend::cuda, EngineOptions{"", true, 0, 0, 2}, &init);
    for (int round = 0; round < 3; ++round) {
        a->advance(67);
        auto first = a->snapshot("E");
        a->advance(130);  // queued behind the copy: must not change what it holds
        auto second = a->snapshot("E");
        a->advance(3);
        b->advance(67);
        const auto want_first = interior_values(test::apf_fields(*b).e);
        b->advance(130);
        const auto want_second = interior_values(test::apf_fields(*b).e);
        b->advance(3);
        EXPECT_TRUE(same_bits(second->wait(), want_second)) << "round " << round;
        EXPECT_TRUE(same_bits(first->wait(), want_first)) << "round " << round;
    }
}
TEST(CudaSnapshot, ApfAsyncCopyEqualsSynchronousDownloadFp32) {
    REQUIRE_GPU();
    apf_snapshots_match_downloads<float>();
}
TEST(CudaSnapshot, ApfAsyncCopyEqualsSynchronousDownloadFp64) {
    REQUIRE_GPU();
    apf_snapshots_match_downloads<double>();
}

TEST(CudaSnapshot, HeatAsyncCopyEqualsSynchronousDownload) {
    REQUIRE_GPU();
    const HeatParams p = HeatParams::make_box(67, 45, 33, HeatStencil::p19);
    HostField<float> init(p.extent());
    test::fill_random(init, 43);
    test::zero_ghosts(init);
    const auto init_state = test::state_of("u", init);
    auto a = make_engine<float>(Heat3dProblem(p), Backend::cuda, EngineOptions{"", true, 0, 0, 3}, &init_state);
    auto b = make_engine<float>(Heat3dProblem(p), Backend::cuda, {}, &init_state);
    a->advance(70);
    auto copy = a->snapshot("u");
    a->advance(65);  // odd: the buffers swap roles after the copy
    b->advance(70);
    EXPECT_TRUE(same_bits(copy->wait(), interior_values(b->field("u"))));
    b->advance(65);
    EXPECT_TRUE(same_bits(a->snapshot("u")->wait(), interior_values(b->field("u"))));
}

TEST(CudaSnapshot, WaveAsyncCopyEqualsSynchronousDownload) {
    REQUIRE_GPU();
    const int nx = 67, ny = 45, nz = 33;
    std::vector<float> v = wave_velocity("1500", "", nx, ny, nz);
    const WaveParams params = wave_params(nx, ny, nz, 1.0, v, 0.5, 0, 5);
    Wave3dProblem p(params, std::move(v));
    p.sources = {PointSource{{33, 22, 16}, 2000, 0.5}};
    HostField<float> u(params.extent3()), prev(params.extent3());
    test::fill_random(u, 44, -1, 1);
    test::fill_random(prev, 45, -1, 1);
    test::zero_ghosts(u);
    test::zero_ghosts(prev);
    const State<float> init = test::state<float>({{"p", u}, {"prev", prev}});
    auto a = make_engine<float>(p, Backend::cuda, EngineOptions{"", true, 0, 0, 3}, &init);
    auto b = make_engine<float>(p, Backend::cuda, {}, &init);
    a->advance(70);
    auto copy = a->snapshot("p");
    a->advance(65);  // odd, graphs replayed: the buffers swap roles after the copy
    b->advance(70);
    EXPECT_TRUE(same_bits(copy->wait(), interior_values(b->field("p"))));
    b->advance(65);
    EXPECT_TRUE(same_bits(a->snapshot("p")->wait(), interior_values(b->field("p"))));
}

TEST(CudaSnapshot, CopyOutlivesItsEngine) {
    REQUIRE_GPU();
    const ApfParams p = ApfParams::for_mesh(64);
    auto a = make_engine<float>(ApfProblem(p), Backend::cuda);
    a->advance(10);
    const auto want = interior_values(test::apf_fields(*a).e);
    auto copy = a->snapshot("E");
    a.reset();
    EXPECT_TRUE(same_bits(copy->wait(), want));
}

int cli(std::vector<std::string> args) {
    args.insert(args.begin(), "strata");
    std::vector<const char*> argv;
    for (auto& s : args) argv.push_back(s.c_str());
    std::ostringstream out, err;
    const int code = cli_main(int(argv.size()), argv.data(), out, err);
    EXPECT_EQ(code, 0) << err.str();
    return code;
}

nlohmann::json read_json(const std::string& path) {
    std::ifstream f(path);
    return nlohmann::json::parse(f);
}

// Restart from step k (odd, so graph replay resumes with swapped buffers) to n, against a
// straight run to n: the same report values, the same final fields and arrays, bitwise, and the
// same `out_files` in --out.
void expect_gpu_restart_equivalent(const std::vector<std::string>& base, const std::string& steps_flag,
                                   const std::vector<std::string>& report_keys = {"max_norm", "l2norm"},
                                   const std::vector<std::string>& out_files = {}) {
    // One folder per test: ctest runs the tests in parallel.
    const auto dir = std::filesystem::temp_directory_path() /
                     (std::string("strata_io_cuda_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto path = [&](const char* name) { return (dir / name).string(); };
    auto with = [&](std::vector<std::string> extra) {
        auto args = base;
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    };
    cli(with({steps_flag, "300", "--checkpoint", path("straight.ck"), "--json", path("a.json"), "--out",
              path("straight")}));
    cli(with({steps_flag, "131", "--checkpoint", path("k.ck"), "--every", "50", "--out", path("frames")}));
    cli(with({steps_flag, "300", "--restart", path("k.ck"), "--checkpoint", path("restarted.ck"), "--json",
              path("b.json"), "--out", path("restarted")}));
    const auto a = read_json(path("a.json")), b = read_json(path("b.json"));
    for (const auto& key : report_keys) EXPECT_EQ(a[key].get<double>(), b[key].get<double>()) << key;
    const io::Checkpoint x = io::read_checkpoint(path("straight.ck")),
                         y = io::read_checkpoint(path("restarted.ck"));
    EXPECT_EQ(x.interiors, y.interiors);
    EXPECT_EQ(x.arrays, y.arrays);
    for (const auto& f : out_files) {
        std::ifstream fa(dir / "straight" / f, std::ios::binary), fb(dir / "restarted" / f, std::ios::binary);
        const std::string sa{std::istreambuf_iterator<char>(fa), {}},
            sb{std::istreambuf_iterator<char>(fb), {}};
        EXPECT_FALSE(sa.empty()) << f;
        EXPECT_EQ(sa, sb) << f;
    }
    std::filesystem::remove_all(dir);
}

TEST(CudaRestart, ApfContinuesBitwise) {
    REQUIRE_GPU();
    expect_gpu_restart_equivalent({"run", "apf", "-n", "257", "--backend", "cuda", "--precision", "fp32"},
                                  "-i");
}
TEST(CudaRestart, Heat3dContinuesBitwise) {
    REQUIRE_GPU();
    expect_gpu_restart_equivalent({"run", "heat3d", "-n", "45", "--backend", "cuda", "--stencil", "27pt"},
                                  "--steps");
}
// The device's step count and the traces recorded before the checkpoint come back with it.
TEST(CudaRestart, Wave3dContinuesBitwiseWithTheTraces) {
    REQUIRE_GPU();
    expect_gpu_restart_equivalent(
        {"run", "wave3d", "--nx", "67", "--ny", "45", "--nz", "33", "--backend", "cuda", "--kernel", "planes",
         "--source", "0.5,0.3,0.2,3000", "--receiver-line", "0.1,0.3,0.2,0.9,0.3,0.2,9"},
        "--steps", {"max_abs", "energy"}, {"traces.bin", "traces.json", "seismogram.png"});
}

// A grid beyond the GPU's memory is refused before anything is allocated, with the bytes needed
// and free, as one line and exit code 2; the device is usable afterwards.
TEST(CudaResources, GridBeyondTheGpuIsRefused) {
    REQUIRE_GPU();
    const char* argv[] = {"strata", "run", "heat3d", "-n", "3000", "--steps", "1", "--backend", "cuda"};
    std::ostringstream out, err;
    EXPECT_EQ(cli_main(int(std::size(argv)), argv, out, err), 2);
    const std::string e = err.str();
    EXPECT_TRUE(e.starts_with("strata: error: heat3d's fields (2 buffers of 3002 x 3002 x 3002 fp64")) << e;
    EXPECT_NE(e.find("memory needed"), std::string::npos) << e;
    EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 1) << e;
    const char* small[] = {"strata", "run", "heat3d", "-n", "33", "--steps", "2", "--backend", "cuda"};
    std::ostringstream out2, err2;
    EXPECT_EQ(cli_main(int(std::size(small)), small, out2, err2), 0) << err2.str();
}

}  // namespace
}  // namespace strata
