#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "strata/core/error.hpp"
#include "strata/run.hpp"

namespace strata {
namespace {

struct CliResult {
    int code;
    std::string out, err;
};

CliResult cli(std::vector<std::string> args) {
    args.insert(args.begin(), "strata");
    std::vector<const char*> argv;
    for (auto& a : args) argv.push_back(a.c_str());
    std::ostringstream out, err;
    const int code = cli_main(int(argv.size()), argv.data(), out, err);
    return {code, out.str(), err.str()};
}

// Bad input: a non-zero exit and exactly one line on stderr that names the problem.
void expect_clear_error(const std::vector<std::string>& args, const std::string& mention) {
    const CliResult r = cli(args);
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.err.find(mention), std::string::npos) << "stderr: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr: " << r.err;
    EXPECT_TRUE(r.err.starts_with("strata: error: ")) << r.err;
}

TEST(Cli, RunsApfAndPrintsTheReport) {
    const CliResult r = cli({"run", "apf", "-n", "30", "-i", "5"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("End at time"), std::string::npos);
    EXPECT_NE(r.out.find("Max norm:"), std::string::npos);
    EXPECT_TRUE(r.err.empty());
}

TEST(Cli, ParsesEveryApfFlag) {
    const auto json = std::filesystem::temp_directory_path() / "strata_cli_test.json";
    const CliResult r = cli({"run", "apf", "-n", "27", "-t", "1", "-s", "5", "-x", "1", "-y", "1", "-k", "-d",
                             "--precision", "fp32", "--backend", "omp", "--json", json.string()});
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream f(json);
    const auto j = nlohmann::json::parse(f);
    EXPECT_EQ(j["n"], 27);
    EXPECT_EQ(j["precision"], "fp32");
    EXPECT_EQ(j["backend"], "omp");
    EXPECT_EQ(j["no_comm"], true);
    EXPECT_GE(j["t_end"].get<double>(), 1.0);
    EXPECT_NE(r.out.find("iteration = 5,"), std::string::npos);
    EXPECT_NE(r.out.find("E at the end"), std::string::npos);  // -d on a small mesh
    std::filesystem::remove(json);
}

TEST(Cli, RunsHeat3d) {
    const CliResult r = cli({"run", "heat3d", "-n", "12", "--steps", "4", "--stencil", "19pt"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("Max error vs exact"), std::string::npos);
}

// fp16's range, said at the end of a run: a field well inside it gets its line and no warning; a
// wave whose source has only begun (values of 6e-8, fp16's smallest) gets a warning that names
// the remedies; bf16 (fp32's range) gets no line.
TEST(Cli, Fp16RunsSayWhereTheirFieldsSitInTheRange) {
    const auto json = std::filesystem::temp_directory_path() / "strata_cli_fp16.json";
    const CliResult heat =
        cli({"run", "heat3d", "-n", "12", "--steps", "4", "--precision", "fp16", "--json", json.string()});
    ASSERT_EQ(heat.code, 0) << heat.err;
    EXPECT_NE(heat.out.find("fp16 range of u"), std::string::npos) << heat.out;
    EXPECT_EQ(heat.out.find("warning"), std::string::npos) << heat.out;
    std::ifstream f(json);
    const auto j = nlohmann::json::parse(f);
    EXPECT_GT(j["fp16_max_u"].get<double>(), 0.5);
    EXPECT_EQ(j["fp16_not_finite_u"].get<double>(), 0);
    std::filesystem::remove(json);
    const CliResult wave = cli({"run", "wave3d", "-n", "24", "--steps", "5", "--precision", "fp16"});
    ASSERT_EQ(wave.code, 0) << wave.err;
    EXPECT_NE(wave.out.find("warning: p's values are small for fp16"), std::string::npos) << wave.out;
    EXPECT_NE(wave.out.find("a larger --state-scale"), std::string::npos) << wave.out;
    EXPECT_NE(wave.out.find("state scale: 2^2"), std::string::npos) << wave.out;  // chosen, and too early: the wavelet has not begun
    const CliResult bf = cli({"run", "heat3d", "-n", "12", "--steps", "4", "--precision", "bf16"});
    ASSERT_EQ(bf.code, 0) << bf.err;
    EXPECT_EQ(bf.out.find("fp16 range"), std::string::npos) << bf.out;
}

// A box: its sides, and the exact solution on it (the error is the scheme's, small).
TEST(Cli, RunsHeat3dOnABox) {
    const CliResult r = cli({"run", "heat3d", "--nx", "9", "--ny", "7", "--nz", "15", "--steps", "20"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("grid 9 x 7 x 15,"), std::string::npos) << r.out;
    const std::size_t at = r.out.find("Max error vs exact: ");
    ASSERT_NE(at, std::string::npos);
    const double error = std::stod(r.out.substr(at + 20));
    EXPECT_GT(error, 0.0);
    EXPECT_LT(error, 5e-3);
    expect_clear_error({"run", "heat3d", "-n", "10", "--nz", "2"}, "--nz must be at least 3");
}

TEST(Cli, HelpTeachesAndExitsZero) {
    const CliResult r = cli({"run", "apf", "--help"});
    EXPECT_EQ(r.code, 0);
    EXPECT_NE(r.out.find("-n"), std::string::npos);
    EXPECT_NE(r.out.find("Examples"), std::string::npos);
    EXPECT_EQ(cli({"--help"}).code, 0);
    EXPECT_EQ(cli({"run", "heat3d", "--help"}).code, 0);
}

TEST(Cli, InfoDescribesTheBuild) {
    const CliResult r = cli({"info"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("CUDA"), std::string::npos);
    EXPECT_NE(r.out.find("host memory   : "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" available to this process"), std::string::npos) << r.out;
}

TEST(Cli, RejectsSmallMeshes) { expect_clear_error({"run", "apf", "-n", "25"}, "-n must be greater than 25"); }
TEST(Cli, RejectsNonPositiveTime) { expect_clear_error({"run", "apf", "-t", "0"}, "-t must be"); }
TEST(Cli, RejectsNegativeTime) { expect_clear_error({"run", "apf", "-t", "-1"}, "-t"); }
TEST(Cli, RejectsNegativeIterations) { expect_clear_error({"run", "apf", "-i", "-3"}, "-i"); }
TEST(Cli, RejectsNegativeStatsInterval) { expect_clear_error({"run", "apf", "-s", "-1", "-i", "2"}, "-s"); }
TEST(Cli, RejectsUnknownFlags) { expect_clear_error({"run", "apf", "--bogus"}, "--bogus"); }
TEST(Cli, RejectsNonNumbers) { expect_clear_error({"run", "apf", "-n", "big"}, "big"); }
// Uneven splits are allowed (tests/mpi_runs.sh runs them); one process cannot be two ranks.
TEST(Cli, RejectsGeometryOfMoreRanksThanTheRunHas) {
    expect_clear_error({"run", "apf", "-n", "100", "-x", "3"}, "this run is one process: launch it with mpirun -np 3");
    expect_clear_error({"run", "heat3d", "-n", "20", "--decomp", "1x1x2"}, "launch it with mpirun -np 2");
}
// -x and -y were cut to an int (4294967297 read as 1) and multiplied in one (65536 x 65536
// overflowed); found reading the code, past the fuzz target's bound on the grid's size.
TEST(Cli, RejectsGeometryBeyondAnInt) {
    expect_clear_error({"run", "apf", "-n", "30", "-x", "4294967297"}, "more parts than the 31 x 31 mesh");
    expect_clear_error({"run", "apf", "-n", "65535", "-x", "65536", "-y", "65536", "-i", "1"},
                       "has 4294967296 parts but this run is one process");
}
// -t is reached one `t += dt` at a time: -t 1e300 never ended (t + dt == t), and the default
// -t 1500 on a mesh of 10^6 took minutes before the memory check could refuse it.
TEST(Cli, RejectsTimesNeedingTooManyIterations) {
    expect_clear_error({"run", "apf", "-n", "30", "-t", "1e300"}, "-t 1e+300 needs");
    expect_clear_error({"run", "apf", "-n", "1000000"}, "use -i");
}
TEST(Cli, RejectsNegativePlotInterval) { expect_clear_error({"run", "apf", "-p", "-1"}, "-p"); }
TEST(Cli, RejectsUnknownPrecisionAndBackend) {
    expect_clear_error({"run", "apf", "--precision", "fp8"}, "fp8");
    expect_clear_error({"run", "apf", "--backend", "tpu"}, "tpu");
    expect_clear_error({"run", "heat3d", "--stencil", "5pt"}, "5pt");
}
TEST(Cli, RejectsKernelsTheCpuDoesNotHave) {
    expect_clear_error({"run", "apf", "--kernel", "planes"}, "planes");
}
TEST(Cli, CudaBackendFailsClearlyWithoutADevice) {
    // Without CUDA in the build, or without a GPU, --backend cuda must say so and exit non-zero.
    const CliResult r = cli({"run", "apf", "-n", "30", "-i", "1", "--backend", "cuda"});
    if (r.code == 0) GTEST_SKIP() << "a CUDA device is present: nothing to check here";
    EXPECT_NE(r.err.find("cuda"), std::string::npos) << r.err;
}
TEST(Cli, RejectsUnwritableJsonPathBeforeRunning) {
    expect_clear_error({"run", "apf", "-i", "1", "--json", "/nonexistent-dir/r.json"}, "/nonexistent-dir/r.json");
}
TEST(Cli, AReportThatCannotBeWrittenIsAnError) {
    // A full disk shows when the buffered report is flushed: the run must not end as if it had been written.
    if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
    expect_clear_error({"run", "heat3d", "-n", "8", "--steps", "1", "--json", "/dev/full"},
                       "failed writing the JSON report to '/dev/full'");
}
TEST(Cli, RejectsACheckpointThatNamesAFolderBeforeRunning) {
    const auto dir = std::filesystem::temp_directory_path();
    expect_clear_error({"run", "heat3d", "-n", "8", "--steps", "1", "--checkpoint", dir.string()},
                       "is a folder: name a file");
}
TEST(Cli, RefusesToReplaceWhatIsNotARegularFile) {
    // A checkpoint is written beside its name and renamed over it: a device or a pipe there would
    // be replaced (as root, /dev/full itself once, before the check), never written into.
    const auto fifo =
        std::filesystem::temp_directory_path() / ("strata_cli_fifo_" + std::to_string(::getpid()));
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    expect_clear_error({"run", "heat3d", "-n", "8", "--steps", "1", "--checkpoint", fifo.string()},
                       "is not a regular file");
    EXPECT_TRUE(std::filesystem::is_fifo(fifo));
    expect_clear_error({"wisdom", "export", fifo.string()},
                       "");  // (no GPU: refused for that first; with one: for the file)
    EXPECT_TRUE(std::filesystem::is_fifo(fifo));
    std::filesystem::remove(fifo);
}
TEST(Cli, RenderAndRestartRejectAFolder) {
    const std::string dir = std::filesystem::temp_directory_path().string();
    expect_clear_error({"render", dir}, "is a folder");
    expect_clear_error({"render", dir, "--slice", "q"}, "--slice");  // (a 2D file took any letter)
    expect_clear_error({"run", "heat3d", "-n", "8", "--steps", "1", "--restart", dir}, "is a folder");
}
TEST(Cli, RejectsACheckpointInAFileAsIfAFolderBeforeRunning) {
    const auto file =
        std::filesystem::temp_directory_path() / ("strata_cli_file_" + std::to_string(::getpid()));
    std::ofstream(file) << "not a folder\n";
    expect_clear_error(
        {"run", "heat3d", "-n", "8", "--steps", "1", "--checkpoint", (file / "run.chk").string()},
        "is not a folder");
    std::filesystem::remove(file);
}
TEST(Cli, RejectsBadHeatInput) {
    expect_clear_error({"run", "heat3d", "-n", "2"}, "-n");
    expect_clear_error({"run", "heat3d", "--steps", "-1"}, "--steps");
    expect_clear_error({"run", "heat3d", "--safety", "1.5"}, "--safety");
}
TEST(Cli, RunsWave3dAndWritesTheTraces) {
    const auto dir = std::filesystem::temp_directory_path() / "strata_test_wave_out";
    std::filesystem::remove_all(dir);
    const CliResult r = cli({"run", "wave3d", "-n", "24", "--steps", "30", "--backend", "omp", "--receiver-line",
                             "0.1,0.5,0.5,0.9,0.5,0.5,5", "--source", "0.5,0.5,0.5,12000", "--out", dir.string()});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("energy"), std::string::npos);
    EXPECT_NE(r.out.find("warning: source f0 = 12000"), std::string::npos) << r.out;  // 1.2 points per wavelength
    EXPECT_EQ(std::filesystem::file_size(dir / "traces.bin"), 30u * 5 * sizeof(float));
    std::ifstream header(dir / "traces.json");
    const auto j = nlohmann::json::parse(header);
    EXPECT_EQ(j["steps"], 30);
    EXPECT_EQ(j["receivers"], 5);
    EXPECT_TRUE(std::filesystem::exists(dir / "seismogram.png"));
    std::filesystem::remove_all(dir);
}
TEST(Cli, RejectsBadWaveInput) {
    expect_clear_error({"run", "wave3d", "-n", "8"}, "at least 9");
    expect_clear_error({"run", "wave3d", "-n", "20", "--sponge", "9"}, "too small for a sponge");
    expect_clear_error({"run", "wave3d", "-n", "16", "--source", "0.5,0.5,1.5"}, "outside the domain");
    expect_clear_error({"run", "wave3d", "-n", "16", "--receiver-line", "0,0,0,2,0,0,4"}, "outside the domain");
    expect_clear_error({"run", "wave3d", "-n", "16", "--source", "0.5,0.5"}, "--source");
    expect_clear_error({"run", "wave3d", "-n", "16", "--dt", "1"}, "unstable");
    expect_clear_error({"run", "wave3d", "-n", "16", "--velocity", "layered:1500"}, "bad velocity");
    expect_clear_error({"run", "wave3d", "-n", "16", "--velocity-file", "/nonexistent/v.bin"}, "/nonexistent/v.bin");
    expect_clear_error({"run", "wave3d", "-n", "16", "--receivers", "/nonexistent/r.txt"}, "/nonexistent/r.txt");
}
TEST(Cli, ParsesARunWithoutRunningIt) {
    const std::vector<const char*> argv{"strata", "run", "wave3d", "-n", "16", "--backend", "omp", "--every", "5"};
    const std::optional<RunOptions> o = parse_run_command(int(argv.size()), argv.data());
    ASSERT_TRUE(o.has_value());
    EXPECT_EQ(o->model, "wave3d");
    EXPECT_EQ(std::get<std::int64_t>(*o->params.find("n")), 16);
    EXPECT_FALSE(o->params.has("steps"));  // not given: the model's default
    EXPECT_EQ(o->backend, Backend::omp);
    EXPECT_EQ(o->io.snapshot_every, 5);
    const std::vector<const char*> info{"strata", "info"}, help{"strata", "run", "apf", "--help"},
        bad{"strata", "run", "apf", "--bogus"};
    EXPECT_FALSE(parse_run_command(int(info.size()), info.data()).has_value());
    EXPECT_FALSE(parse_run_command(int(help.size()), help.data()).has_value());
    EXPECT_THROW(parse_run_command(int(bad.size()), bad.data()), UsageError);
}
// Numbers past an int were cut to one (--nx 4294967305 ran a 9-point side, --sponge 4294967296
// no sponge, a receiver count of 1e300 was undefined behaviour) and a count of 2e9 receivers
// filled 24 GB: the count and float-cast overflow found by hand through fuzz_cli, the sides and
// the sponge reading the code.
TEST(Cli, RejectsWaveNumbersBeyondTheirRange) {
    expect_clear_error({"run", "wave3d", "-n", "16", "--nx", "4294967305"}, "--nx 4294967305 is too large");
    expect_clear_error({"run", "wave3d", "-n", "16", "--sponge", "4294967296"}, "sponge of 4294967296");
    for (const char* count : {"1e300", "2000000000", "4097", "0", "2.5"})
        expect_clear_error({"run", "wave3d", "-n", "16", "--receiver-line", std::string("0,0,0,1,1,1,") + count},
                           "receiver count");
}
TEST(Cli, RejectsAReceiversFileWithoutReceivers) {
    const auto dir = std::filesystem::temp_directory_path() / "strata_test_receivers";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "empty.txt").close();
    std::ofstream(dir / "blank.txt") << "\n  \t\n\r\n";
    for (const char* name : {"empty.txt", "blank.txt"}) {
        const std::string file = (dir / name).string();
        expect_clear_error({"run", "wave3d", "-n", "16", "--receivers", file}, file);
        EXPECT_EQ(cli({"run", "wave3d", "-n", "16", "--receivers", file}).code, 2);
    }
    std::filesystem::remove_all(dir);
}
// strata cache: the compiled models and files of its directory ($STRATA_CACHE_DIR/kernels, here
// one of this test's own), and `clear` empties it.
TEST(Cli, CacheShowsAndClearsTheCompiledModels) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("strata-cache-cli-" + std::to_string(getpid()));
    fs::create_directories(dir / "kernels" / "include-0");
    std::ofstream(dir / "kernels" / "0a.so") << "12345";
    std::ofstream(dir / "kernels" / "0a.cpp") << "1";
    std::ofstream(dir / "kernels" / "include-0" / "h.hpp") << "12";
    const char* was = std::getenv("STRATA_CACHE_DIR");
    const std::string saved = was ? was : "";
    setenv("STRATA_CACHE_DIR", dir.c_str(), 1);
    const CliResult shown = cli({"cache"});
    EXPECT_EQ(shown.code, 0);
    EXPECT_NE(shown.out.find("1 compiled model, 3 files"), std::string::npos) << shown.out;
    const CliResult cleared = cli({"cache", "clear"});
    EXPECT_EQ(cleared.code, 0);
    EXPECT_NE(cleared.out.find("removed 1 compiled model, 3 files"), std::string::npos) << cleared.out;
    EXPECT_TRUE(fs::is_empty(dir / "kernels"));
    EXPECT_NE(cli({"cache", "show"}).out.find("0 compiled models, 0 files"), std::string::npos);
    {  // while a run holds the cache (its lock shared, as a run loading a model does), a clear is refused
        std::ofstream(dir / "kernels" / "0b.so") << "1";
        const int fd = open((dir / "kernels.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(flock(fd, LOCK_SH), 0);
        const CliResult busy = cli({"cache", "clear"});
        EXPECT_NE(busy.code, 0);
        EXPECT_NE(busy.err.find("is in use"), std::string::npos) << busy.err;
        EXPECT_TRUE(fs::exists(dir / "kernels" / "0b.so"));
        close(fd);
        EXPECT_EQ(cli({"cache", "clear"}).code, 0);
        EXPECT_TRUE(fs::is_empty(dir / "kernels"));
    }
    expect_clear_error({"cache", "bogus"}, "show and clear");
    if (was)
        setenv("STRATA_CACHE_DIR", saved.c_str(), 1);
    else
        unsetenv("STRATA_CACHE_DIR");
    fs::remove_all(dir);
}

TEST(Cli, RequiresASubcommand) {
    const CliResult r = cli({});
    EXPECT_NE(r.code, 0);
}

}  // namespace
}  // namespace strata
