// Snapshots, ParaView files, checkpoints, restart and progress, on the CPU backends.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <numbers>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "io/atomic_file.hpp"
#include "strata/core/error.hpp"
#include "strata/engine.hpp"
#include "strata/io/checkpoint.hpp"
#include "strata/io/h5.hpp"
#include "strata/io/png.hpp"
#include "strata/io/snapshot.hpp"
#include "strata/io/vti.hpp"
#include "strata/models/heat3d.hpp"
#include "strata/run.hpp"
#include "test_util.hpp"

namespace strata {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class TempDir {
public:
    TempDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        path_ = fs::temp_directory_path() /
                (std::string("strata_io_") + info->test_suite_name() + "_" + info->name());
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() { fs::remove_all(path_); }
    std::string operator/(const std::string& name) const { return (path_ / name).string(); }
    std::string str() const { return path_.string(); }

private:
    fs::path path_;
};

template <class T>
std::vector<T> random_values(std::size_t n, std::uint32_t seed, double lo = -0.5, double hi = 1.5) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<T> v(n);
    for (auto& x : v) x = T(d(gen));
    return v;
}

std::string read_bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

struct CliResult {
    int code;
    std::string out, err;
};
CliResult cli(std::vector<std::string> args, bool terminal = false) {
    args.insert(args.begin(), "strata");
    std::vector<const char*> argv;
    for (auto& a : args) argv.push_back(a.c_str());
    std::ostringstream out, err;
    const int code = cli_main(int(argv.size()), argv.data(), out, err, terminal);
    return {code, out.str(), err.str()};
}
nlohmann::json read_json(const std::string& path) {
    std::ifstream f(path);
    return nlohmann::json::parse(f);
}

// Raw, and zlib in blocks: a grid whose bytes span several 1 MiB blocks and end in a partial one.
template <class T>
void vti_round_trip(io::VtiCompression compression = io::VtiCompression::none, int nz = 5) {
    TempDir dir;
    const io::VtiGrid g{13, 7, nz, 0.125, {0.5, -1.0, 2.0}, "u"};
    auto v = random_values<T>(std::size_t(13) * 7 * nz, 3);
    for (std::size_t i = 0; i < v.size(); i += 3) v[i] = T(1);  // something for zlib to find
    io::write_vti(dir / "f.vti", g, v.data(), compression);
    const io::VtiField back = io::read_vti(dir / "f.vti");
    EXPECT_EQ(back.grid.nx, 13);
    EXPECT_EQ(back.grid.ny, 7);
    EXPECT_EQ(back.grid.nz, nz);
    EXPECT_EQ(back.grid.spacing, 0.125);
    EXPECT_EQ(back.grid.origin, g.origin);
    EXPECT_EQ(back.grid.name, "u");
    EXPECT_EQ(back.precision, precision_of<T>());
    ASSERT_EQ(back.values.size(), v.size());
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(T(back.values[i]), v[i]) << i;
}
TEST(Vti, RoundTripsFp32ValuesExactly) { vti_round_trip<float>(); }
TEST(Vti, RoundTripsFp64ValuesExactly) { vti_round_trip<double>(); }
TEST(Vti, ZlibBlocksRoundTripFp32ValuesExactly) { vti_round_trip<float>(io::VtiCompression::zlib, 3001); }
TEST(Vti, ZlibBlocksRoundTripFp64ValuesExactly) { vti_round_trip<double>(io::VtiCompression::zlib, 3001); }

TEST(Vti, CorruptZlibBlockIsAClearError) {
    TempDir dir;
    const auto v = random_values<double>(64 * 64, 5);
    io::write_vti(dir / "z.vti", io::VtiGrid{64, 64, 1, 1.0, {}, "u"}, v.data(), io::VtiCompression::zlib);
    std::string bytes = read_bytes(dir / "z.vti");
    bytes[bytes.size() - 200] ^= 0x5a;
    write_bytes(dir / "bad.vti", bytes);
    EXPECT_THROW(io::read_vti(dir / "bad.vti"), UsageError);
}

// --snapshot-format picks the files; without a .vti there is no ParaView series (.pvd).
TEST(Snapshots, FormatFlagPicksTheFiles) {
    TempDir dir;
    ASSERT_EQ(cli({"run", "heat2d", "-n", "40", "--steps", "4", "--every", "2", "--out", dir / "v",
                   "--snapshot-format", "vti", "--vti-compression", "zlib"})
                  .code,
              0);
    EXPECT_TRUE(std::filesystem::exists(dir / "v/heat2d_000004.vti"));
    EXPECT_FALSE(std::filesystem::exists(dir / "v/heat2d_000004.png"));
    EXPECT_EQ(io::read_pvd(dir / "v/heat2d.pvd").size(), 2u);
    EXPECT_EQ(io::read_vti(dir / "v/heat2d_000004.vti").values.size(), 40u * 40u);
    ASSERT_EQ(cli({"run", "heat3d", "-n", "20", "--steps", "4", "--every", "2", "--out", dir / "p",
                   "--snapshot-format", "png"})
                  .code,
              0);
    EXPECT_TRUE(std::filesystem::exists(dir / "p/heat3d_000004_z.png"));
    EXPECT_FALSE(std::filesystem::exists(dir / "p/heat3d_000004.vti"));
    EXPECT_FALSE(std::filesystem::exists(dir / "p/heat3d.pvd"));
    const CliResult bad = cli({"run", "heat2d", "--every", "2", "--snapshot-format", "gif"});
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("--snapshot-format"), std::string::npos) << bad.err;
}

// --snapshot-format h5: a file per frame with the field's values as the frames' .vti hold them,
// and the XDMF series naming each, in time; the report lists them. Without HDF5: a clear error.
TEST(Snapshots, Hdf5FramesHoldTheFieldAndAnXdmfSeriesListsThem) {
    TempDir dir;
    const std::vector<std::string> run = {"run", "heat3d",  "-n", "20",   "--steps",
                                          "4",   "--every", "2",  "--out"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = run;
        args.insert(args.end(), extra.begin(), extra.end());
        return cli(args);
    };
    if (!io::hdf5_available()) {
        const CliResult bad = with({dir / "h", "--snapshot-format", "h5"});
        EXPECT_EQ(bad.code, 2);
        EXPECT_NE(bad.err.find("HDF5"), std::string::npos) << bad.err;
        return;
    }
    ASSERT_EQ(with({dir / "h", "--snapshot-format", "h5", "--json", dir / "r.json"}).code, 0);
    ASSERT_EQ(with({dir / "v", "--snapshot-format", "vti"}).code, 0);
    EXPECT_TRUE(fs::exists(dir / "h/heat3d_000002.h5"));
    EXPECT_TRUE(io::is_hdf5(dir / "h/heat3d_000004.h5"));
    EXPECT_FALSE(fs::exists(dir / "h/heat3d_000004.vti"));
    const std::string xmf = read_bytes(dir / "h/heat3d.xmf");
    const std::size_t two = xmf.find("heat3d_000002.h5:/u"), four = xmf.find("heat3d_000004.h5:/u");
    EXPECT_NE(two, std::string::npos) << xmf;
    EXPECT_NE(four, std::string::npos) << xmf;
    EXPECT_LT(two, four);
    EXPECT_NE(xmf.find("TopologyType=\"3DCoRectMesh\" Dimensions=\"20 20 20\""), std::string::npos) << xmf;
    EXPECT_NE(xmf.find("Precision=\"8\""), std::string::npos) << xmf;
    const auto report = read_json(dir / "r.json");
    const auto files = report["snapshots"];
    EXPECT_EQ(files.back(), dir / "h/heat3d.xmf");
    // The report's rate and memory for them, as for checkpoints: every frame's bytes, 20^3 doubles.
    std::uintmax_t frame_bytes = 0;
    int frames = 0;
    for (const auto& f : fs::directory_iterator(dir / "h"))
        if (f.path().extension() == ".h5") frame_bytes += fs::file_size(f.path()), ++frames;
    EXPECT_EQ(report["h5_frames_written"].get<int>(), frames);
    EXPECT_DOUBLE_EQ(report["h5_frame_gb"].get<double>(), double(frame_bytes) / 1e9);
    EXPECT_DOUBLE_EQ(report["h5_frame_field_mb_per_rank"][0].get<double>(), 20 * 20 * 20 * 8 / 1e6);
    EXPECT_GE(report["h5_frame_vmhwm_after_mb"].get<double>(),
              report["h5_frame_vmhwm_before_mb"].get<double>());
    // The frame's bytes: the field's values as the .vti of the same frame holds them, in HDF5's
    // layout (the raw dataset is stored whole: its last 8000 doubles are the file's values).
    const std::vector<double> vti = io::read_vti(dir / "v/heat3d_000004.vti").values;
    const std::string h5 = read_bytes(dir / "h/heat3d_000004.h5");
    ASSERT_EQ(vti.size(), 8000u);
    EXPECT_NE(h5.find(std::string(reinterpret_cast<const char*>(vti.data()), vti.size() * sizeof(double))),
              std::string::npos);
}

// A 16-bit run's frames are fp32 (VTK and XDMF know no 16-bit float): the stored values, widened
// exactly; the checkpoint beside them keeps the 16 bits.
TEST(Snapshots, HalfPrecisionFramesAreFp32ValuesOfTheField) {
    TempDir dir;
    for (const char* prec : {"fp16", "bf16"}) {
        const std::string out = dir / prec, ck = dir / (std::string(prec) + ".ck");
        ASSERT_EQ(cli({"run", "heat3d", "-n", "12", "--steps", "4", "--every", "4", "--precision", prec, "--out", out,
                       "--checkpoint", ck})
                      .code,
                  0);
        const io::VtiField v = io::read_vti(out + "/heat3d_000004.vti");
        EXPECT_EQ(v.precision, Precision::fp32) << prec;
        const io::Checkpoint c = io::read_checkpoint(ck);
        ASSERT_EQ(c.header.precision, parse_precision(prec));
        std::vector<double> want;
        if (c.header.precision == Precision::fp16)
            for (f16 x : interior_values(c.field<f16>(0))) want.push_back(double(float(x)));
        else
            for (bf16 x : interior_values(c.field<bf16>(0))) want.push_back(double(float(x)));
        EXPECT_EQ(v.values, want) << prec;
        if (!io::hdf5_available()) continue;
        ASSERT_EQ(cli({"run", "heat3d", "-n", "12", "--steps", "4", "--every", "4", "--precision", prec, "--out",
                       out + "h5", "--snapshot-format", "h5"})
                      .code,
                  0);
        EXPECT_NE(read_bytes(out + "h5/heat3d.xmf").find("Precision=\"4\""), std::string::npos) << prec;
        const std::string h5 = read_bytes(out + "h5/heat3d_000004.h5");
        const std::vector<float> floats(want.begin(), want.end());
        EXPECT_NE(h5.find(std::string(reinterpret_cast<const char*>(floats.data()), floats.size() * sizeof(float))),
                  std::string::npos)
            << prec;
    }
}

TEST(Vti, TruncatedFileIsAClearError) {
    TempDir dir;
    const auto v = random_values<float>(9 * 4, 4);
    io::write_vti(dir / "f.vti", io::VtiGrid{9, 4, 1, 1.0, {}, "E"}, v.data());
    const std::string bytes = read_bytes(dir / "f.vti");
    write_bytes(dir / "cut.vti", bytes.substr(0, bytes.size() - 60));
    EXPECT_THROW(io::read_vti(dir / "cut.vti"), UsageError);
}

// A .vti's text (the writer's 3 x 4 x 1 fp64 field) with its WholeExtent replaced by `extent`
// and, when given, everything after the appended data's '_' by `data`.
std::string vti_with(const TempDir& dir, const std::string& extent, io::VtiCompression compression,
                     std::optional<std::string> data = std::nullopt) {
    const auto v = random_values<double>(12, 7);
    io::write_vti(dir / "base.vti", io::VtiGrid{3, 4, 1, 1.0, {}, "u"}, v.data(), compression);
    std::string text = read_bytes(dir / "base.vti");
    const std::string from = "WholeExtent=\"0 2 0 3 0 0\"", to = "WholeExtent=\"" + extent + "\"";
    text.replace(text.find(from), from.size(), to);
    if (data) text = text.substr(0, text.find('_', text.find("<AppendedData")) + 1) + *data;
    return text;
}
std::string u64_bytes(std::initializer_list<std::uint64_t> values) {
    std::string s;
    for (std::uint64_t v : values) s.append(reinterpret_cast<const char*>(&v), sizeof v);
    return s;
}

// Found by fuzzing (fuzz/vti.cpp): sides past an int overflowed as they were computed (undefined
// behaviour, which the sanitized suite stops at).
TEST(Vti, ExtentBeyondAnIntIsAClearError) {
    TempDir dir;
    write_bytes(dir / "bad.vti", vti_with(dir, "-2147483648 0 0 3 0 0", io::VtiCompression::none));
    EXPECT_THROW(io::read_vti(dir / "bad.vti"), UsageError);
    write_bytes(dir / "bad.vti", vti_with(dir, "0 2147483647 0 3 0 0", io::VtiCompression::none));
    EXPECT_THROW(io::read_vti(dir / "bad.vti"), UsageError);
}

// Sides must hold points, and their product no more values than the file: an empty extent whose
// product matched the data block gave negative sides; one whose product wrapped around 2^64 to
// the block's size, or a zlib one whose blocks promise 800 GB, sized an allocation after it.
TEST(Vti, EmptyOrOversizedExtentIsAClearError) {
    TempDir dir;
    const std::string one_value = u64_bytes({8, 0});
    write_bytes(dir / "bad.vti", vti_with(dir, "0 -2 0 -2 0 0", io::VtiCompression::none, one_value));
    EXPECT_THROW(io::read_vti(dir / "bad.vti"), UsageError);
    write_bytes(dir / "bad.vti", vti_with(dir, "0 2097151 0 2097151 0 524287", io::VtiCompression::none,
                                          u64_bytes({0})));
    EXPECT_THROW(io::read_vti(dir / "bad.vti"), UsageError);
    const std::uint64_t bytes = 100000ull * 100000 * 10 * 8;  // one block of them, 16 bytes compressed
    write_bytes(dir / "bad.vti", vti_with(dir, "0 99999 0 99999 0 9", io::VtiCompression::zlib,
                                          u64_bytes({1, bytes, 0, 16, 0, 0})));
    EXPECT_THROW(io::read_vti(dir / "bad.vti"), UsageError);
    write_bytes(dir / "good.vti", vti_with(dir, "0 2 0 3 0 0", io::VtiCompression::zlib));
    EXPECT_EQ(io::read_vti(dir / "good.vti").values.size(), 12u);
}

// Found by fuzzing (fuzz/vti.cpp): a timestep that is no number escaped as std::stod's exception.
TEST(Pvd, DataSetWithoutANumericTimestepIsAClearError) {
    TempDir dir;
    io::write_pvd(dir / "a.pvd", {{0.5, "a_000001.vti"}});
    const std::string good = read_bytes(dir / "a.pvd"), at = "timestep=\"0.5\"";
    ASSERT_NE(good.find(at), std::string::npos);
    for (const std::string& bad : {std::string("timestep=\"soon\""), std::string("timestep=\"\""),
                                   std::string("timestep=\"1e999\""), std::string("step=\"0.5\"")}) {
        std::string text = good;
        write_bytes(dir / "bad.pvd", text.replace(text.find(at), at.size(), bad));
        EXPECT_THROW(io::read_pvd(dir / "bad.pvd"), UsageError) << bad;
    }
}

// A file that render cannot read is bad input: one error line naming it, exit 2, no "wrote"
// before it and no picture.
TEST(Render, BadFileIsOneErrorLineAndNoPicture) {
    TempDir dir;
    const auto v = random_values<float>(9 * 4, 4);
    io::write_vti(dir / "f.vti", io::VtiGrid{9, 4, 1, 1.0, {}, "E"}, v.data());
    const std::string vti = read_bytes(dir / "f.vti");
    write_bytes(dir / "cut.vti", vti.substr(0, vti.size() - 60));
    write_bytes(dir / "junk.vti", "not a .vti file\n");
    ASSERT_EQ(cli({"run", "heat2d", "-n", "5", "--steps", "1", "--checkpoint", dir / "h.ck"}).code, 0);
    const std::string ck = read_bytes(dir / "h.ck");
    write_bytes(dir / "cut.ck", ck.substr(0, ck.size() - 9));
    for (const std::string name : {"cut.vti", "junk.vti", "cut.ck"}) {
        const CliResult r = cli({"render", dir / name, "-o", dir / "out.png"});
        EXPECT_EQ(r.code, 2) << name;
        EXPECT_EQ(r.out, "") << name;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_TRUE(r.err.starts_with("strata: error: ")) << r.err;
        EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(dir / "out.png")) << name;
    }
}

TEST(Png, FieldPictureMapsValuesWithYUpwards) {
    TempDir dir;
    const int w = 29, h = 17;
    auto v = random_values<double>(w * h, 5);
    v[3] = std::nan("");
    const io::IndexedImage img = io::field_picture(v.data(), w, h, 0.0, 1.0);
    io::write_png(dir / "p.png", img);
    const io::Image back = io::read_png(dir / "p.png");
    ASSERT_EQ(back.width, w);
    ASSERT_EQ(back.height, h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const double value = v[std::size_t(h - 1 - y) * w + x];  // picture row 0 is the top: y = h-1
            const double t = std::clamp(value, 0.0, 1.0);
            const io::Rgb want = std::isnan(value) ? io::Rgb{255, 0, 255}
                                                   : io::palette_colour(std::uint8_t(std::lround(t * 254)));
            ASSERT_EQ(back.at(x, y), want) << x << "," << y << " value " << value;
        }
}

TEST(SnapshotWriter, PvdListsEveryFrameInOrderWhileFramesFinishOutOfOrder) {
    TempDir dir;
    io::SnapshotWriter writer(dir.str(), "s", 3);
    const io::VtiGrid g{11, 6, 1, 0.5, {}, "E"};
    std::vector<std::vector<float>> frames;
    for (int f = 0; f < 7; ++f) frames.push_back(random_values<float>(11 * 6, 10 + f));
    for (int f = 0; f < 7; ++f) {
        io::FrameSpec spec{writer.frame_stem(10 * f), g, 2, 0.0, 1.0};
        writer.submit(0.25 * f, [&frames, f, spec] {
            std::this_thread::sleep_for(std::chrono::milliseconds(f % 2 ? 1 : 30));  // finish out of order
            return io::write_frame(spec, frames[f].data());
        });
    }
    const auto files = writer.finish();
    ASSERT_EQ(files.size(), 7u * 2 + 1);
    EXPECT_EQ(files.back(), dir / "s.pvd");
    const auto pvd = io::read_pvd(dir / "s.pvd");
    ASSERT_EQ(pvd.size(), 7u);
    for (int f = 0; f < 7; ++f) {
        char name[32];
        std::snprintf(name, sizeof name, "s_%06d.vti", 10 * f);
        EXPECT_EQ(pvd[f], (io::PvdFrame{0.25 * f, name}));
        const io::VtiField back = io::read_vti(dir / name);
        for (std::size_t i = 0; i < frames[f].size(); ++i) ASSERT_EQ(float(back.values[i]), frames[f][i]);
    }
}

TEST(SnapshotWriter, AFrameInPartsOnSeveralThreadsEqualsOneWrittenWhole) {
    // 1100 rows: the picture goes in 4 strips on 4 writers, alongside the .vti.
    TempDir dir;
    const int w = 300, h = 1100;
    const io::VtiGrid g{w, h, 1, 0.5, {}, "E"};
    const auto v = random_values<float>(std::size_t(w) * h, 31);
    io::SnapshotWriter writer(dir.str(), "s", 4);
    const io::FrameSpec spec{writer.frame_stem(7), g, 2, 0.0, 1.0};
    const auto parts = io::frame_parts<float>(spec, [&v] { return v.data(); }, writer.threads());
    EXPECT_EQ(parts.size(), 1u + 4u);
    writer.submit(1.5, parts);
    const auto files = writer.finish();
    ASSERT_EQ(files, (std::vector<std::string>{dir / "s_000007.vti", dir / "s_000007.png", dir / "s.pvd"}));
    const auto whole = io::write_frame(io::FrameSpec{dir / "whole", g, 2, 0.0, 1.0}, v.data());
    ASSERT_EQ(whole, (std::vector<std::string>{dir / "whole.vti", dir / "whole.png"}));
    EXPECT_EQ(read_bytes(dir / "s_000007.vti"), read_bytes(dir / "whole.vti"));
    const io::Image png = io::read_png(dir / "s_000007.png");
    EXPECT_EQ(png.pixels, io::read_png(dir / "whole.png").pixels);
    const io::IndexedImage want = io::field_picture(v.data(), w, h, 0.0, 1.0);
    ASSERT_EQ(png.pixels.size(), want.index.size());
    for (std::size_t i = 0; i < want.index.size(); ++i) ASSERT_EQ(png.pixels[i], io::palette_colour(want.index[i])) << i;
    EXPECT_EQ(io::read_pvd(dir / "s.pvd"), (std::vector<io::PvdFrame>{{1.5, "s_000007.vti"}}));
}

TEST(SnapshotWriter, AnErrorOnAWriterThreadReachesTheCaller) {
    TempDir dir;
    io::SnapshotWriter writer(dir.str(), "s", 2);
    writer.submit(0, []() -> std::vector<std::string> { throw Error("disk full (simulated)"); });
    EXPECT_THROW(
        {
            for (int i = 0; i < 50; ++i) writer.submit(1, [] { return std::vector<std::string>{}; });
            writer.finish();
        },
        Error);
    EXPECT_THROW(writer.finish(), Error);  // and it stays reported
}

// The header of the round-trip tests' apf checkpoint (41 x 28 points, step 123 at t = 4.5), read back.
void expect_apf_header(const io::CheckpointHeader& got, const io::CheckpointHeader& h) {
    EXPECT_EQ(got.model, "apf");
    EXPECT_EQ(got.precision, Precision::fp32);
    EXPECT_EQ(got.nx, 41);
    EXPECT_EQ(got.ny, 28);
    EXPECT_EQ(got.dims, 2);
    EXPECT_EQ(got.step, 123);
    EXPECT_EQ(got.t, 4.5);
    EXPECT_EQ(got.params, h.params);
}

TEST(Checkpoint, RoundTripsHeaderAndFieldsBitwise) {
    TempDir dir;
    const ApfParams p = ApfParams::for_mesh(40, 27);
    const auto f = test::random_apf_fields<float>(p, 7);
    const io::CheckpointHeader h{
        "apf", Precision::fp32, p.n + 1, p.m + 1, 1, 1, 2, 123, 4.5, {{"dt", p.dt}, {"alpha", p.alpha}}};
    io::write_checkpoint<float>(dir / "c.ck", h, {{"E", &f.e}, {"R", &f.r}});
    EXPECT_FALSE(fs::exists(dir / "c.ck.tmp"));
    const io::Checkpoint c = io::read_checkpoint(dir / "c.ck");
    expect_apf_header(c.header, h);
    EXPECT_EQ(c.field_names, (std::vector<std::string>{"E", "R"}));
    EXPECT_TRUE(test::bitwise_equal(c.field<float>(0), f.e));
    EXPECT_TRUE(test::bitwise_equal(c.field<float>(1), f.r));
    EXPECT_THROW(c.field<double>(0), Error);
}

TEST(Checkpoint, RoundTripsArraysOfAnyLength) {
    TempDir dir;
    const HeatParams p = HeatParams::make_box(9, 5, 7, HeatStencil::p7);
    HostField<double> u(p.extent());
    test::fill_random(u, 12);
    const auto traces = random_values<double>(3 * 17, 13), empty = std::vector<double>{};
    const io::CheckpointHeader h{"heat3d", Precision::fp64, 9, 5, 7, 1, 3, 17, 0.5, {{"dt", p.dt}}};
    io::write_checkpoint<double>(dir / "c.ck", h, {{"u", &u}}, {{"traces", &traces}, {"none", &empty}});
    const io::Checkpoint c = io::read_checkpoint(dir / "c.ck");
    EXPECT_TRUE(test::bitwise_equal(c.field<double>(0), u));
    EXPECT_EQ(c.array_names, (std::vector<std::string>{"traces", "none"}));
    EXPECT_EQ(c.array<double>("traces"), traces);
    EXPECT_TRUE(c.array<double>("none").empty());
    EXPECT_THROW(c.array<double>("missing"), Error);
    EXPECT_THROW(c.array<float>("traces"), Error);
}

// HDF5 checkpoints (io/h5.hpp) hold what the binary ones hold, read back by the same
// read_checkpoint: 2D and 3D, fp32 and fp64, arrays of any length (empty too), in the order written.
TEST(Hdf5Checkpoint, RoundTripsHeaderFieldsAndArraysBitwise) {
    if (!io::hdf5_available()) GTEST_SKIP() << io::hdf5_missing();
    TempDir dir;
    const ApfParams p = ApfParams::for_mesh(40, 27);
    const auto f = test::random_apf_fields<float>(p, 7);
    const io::CheckpointHeader h{
        "apf", Precision::fp32, p.n + 1, p.m + 1, 1, 1, 2, 123, 4.5, {{"dt", p.dt}, {"alpha", p.alpha}}};
    const std::vector<float> e = interior_values(f.e), r = interior_values(f.r);
    const io::Box whole{{0, 0, 0}, {h.nx, h.ny, 1}};
    io::write_checkpoint_h5<float>(dir / "c.h5", h, whole, {{"R", &r}, {"E", &e}}, {}, false);
    EXPECT_FALSE(fs::exists(dir / "c.h5.tmp"));
    EXPECT_TRUE(io::is_hdf5(dir / "c.h5"));
    const io::Checkpoint c = io::read_checkpoint(dir / "c.h5");
    expect_apf_header(c.header, h);
    EXPECT_EQ(c.field_names, (std::vector<std::string>{"R", "E"}));  // as written, not by name
    EXPECT_TRUE(test::bitwise_equal(c.field<float>(1), f.e));
    EXPECT_TRUE(test::bitwise_equal(c.field<float>(0), f.r));

    const HeatParams q = HeatParams::make_box(9, 5, 7, HeatStencil::p7);
    HostField<double> u(q.extent());
    test::fill_random(u, 12);
    const std::vector<double> values = interior_values(u), traces = random_values<double>(3 * 17, 13), empty;
    const io::CheckpointHeader g{"heat3d", Precision::fp64, 9, 5, 7, 1, 3, 17, 0.5, {{"dt", q.dt}}};
    io::write_checkpoint_h5<double>(dir / "d.h5", g, io::Box{{0, 0, 0}, {9, 5, 7}}, {{"u", &values}},
                                    {{"traces", &traces}, {"none", &empty}}, false);
    const io::Checkpoint d = io::read_checkpoint(dir / "d.h5");
    EXPECT_EQ(d.header.nz, 7);
    EXPECT_TRUE(test::bitwise_equal(d.field<double>(0), u));
    EXPECT_EQ(d.array_names, (std::vector<std::string>{"traces", "none"}));
    EXPECT_EQ(d.array<double>("traces"), traces);
    EXPECT_TRUE(d.array<double>("none").empty());
    // A box that is not the values' size is the caller's error, caught before a byte is written.
    EXPECT_THROW(io::write_checkpoint_h5<double>(dir / "e.h5", g, io::Box{{0, 0, 0}, {9, 5, 6}},
                                                 {{"u", &values}}, {}, false),
                 Error);
}

// A part of an HDF5 checkpoint (what each rank of a restart reads): a box of every field, x
// fastest, the cells the whole field has there; a box of no cells reads the header, the names and
// the arrays alone; a box past the grid is refused.
TEST(Hdf5Checkpoint, APartIsTheBoxOfEveryField) {
    if (!io::hdf5_available()) GTEST_SKIP() << io::hdf5_missing();
    TempDir dir;
    const HeatParams q = HeatParams::make_box(9, 5, 7, HeatStencil::p7);
    HostField<double> u(q.extent()), v(q.extent());
    test::fill_random(u, 21);
    test::fill_random(v, 22);
    const std::vector<double> a = interior_values(u), b = interior_values(v),
                              traces = random_values<double>(6, 23);
    const io::CheckpointHeader g{"heat3d", Precision::fp64, 9, 5, 7, 1, 3, 17, 0.5, {{"dt", q.dt}}};
    io::write_checkpoint_h5<double>(dir / "p.h5", g, io::Box{{0, 0, 0}, {9, 5, 7}}, {{"u", &a}, {"v", &b}},
                                    {{"traces", &traces}}, false);
    const io::Box box{{2, 1, 3}, {4, 3, 2}};
    const io::Checkpoint c = io::read_checkpoint_h5(dir / "p.h5", &box);
    ASSERT_EQ(c.field_names, (std::vector<std::string>{"u", "v"}));
    for (int f = 0; f < 2; ++f) {
        const HostField<double>& whole = f ? v : u;
        std::vector<double> want;
        for (int k = 3; k < 5; ++k)
            for (int j = 1; j < 4; ++j)
                for (int i = 2; i < 6; ++i) want.push_back(whole.at(i, j, k));
        std::vector<double> got(c.interiors[std::size_t(f)].size() / sizeof(double));
        std::memcpy(got.data(), c.interiors[std::size_t(f)].data(), got.size() * sizeof(double));
        EXPECT_EQ(got, want) << c.field_names[std::size_t(f)];
    }
    EXPECT_EQ(c.array<double>("traces"), traces);
    const io::Box none{{0, 0, 0}, {0, 0, 0}};
    const io::Checkpoint h = io::read_checkpoint_h5(dir / "p.h5", &none);
    EXPECT_EQ(h.header.step, 17);
    EXPECT_EQ(h.field_names, c.field_names);
    EXPECT_TRUE(h.interiors[0].empty() && h.interiors[1].empty());
    const io::Box past{{6, 0, 0}, {4, 5, 7}};
    EXPECT_THROW(io::read_checkpoint_h5(dir / "p.h5", &past), Error);
}

// A damaged or foreign file is one UsageError naming it, whatever HDF5 makes of it.
TEST(Hdf5Checkpoint, DamagedFileIsAClearError) {
    if (!io::hdf5_available()) GTEST_SKIP() << io::hdf5_missing();
    TempDir dir;
    const std::vector<double> values(60, 1.5);
    const io::CheckpointHeader g{"heat3d", Precision::fp64, 5, 4, 3, 1, 3, 2, 0.5, {{"dt", 0.1}}};
    io::write_checkpoint_h5<double>(dir / "good.h5", g, io::Box{{0, 0, 0}, {5, 4, 3}}, {{"u", &values}}, {},
                                    false);
    const std::string bytes = read_bytes(dir / "good.h5");
    std::ofstream(dir / "half.h5", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    std::ofstream(dir / "junk.h5", std::ios::binary) << bytes.substr(0, 8) << std::string(500, 'x');
    for (const char* name : {"half.h5", "junk.h5"}) {
        try {
            io::read_checkpoint(dir / name);
            ADD_FAILURE() << name << " was read";
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find(dir / name), std::string::npos) << e.what();
        }
    }
}

// A version 1 file (before arrays) is a version 2 file without the array count.
TEST(Checkpoint, ReadsVersion1Files) {
    TempDir dir;
    const ApfParams p = ApfParams::for_mesh(30);
    const auto f = test::random_apf_fields<double>(p, 14);
    io::write_checkpoint<double>(dir / "v2.ck",
                                 {"apf", Precision::fp64, 31, 31, 1, 1, 2, 5, 0.1, {{"dt", p.dt}}},
                                 {{"E", &f.e}, {"R", &f.r}});
    std::string v1 = read_bytes(dir / "v2.ck");
    const std::size_t fields_at = v1.size() - sizeof(std::uint64_t) - 2 * 31 * 31 * sizeof(double);
    v1.erase(fields_at - sizeof(std::uint32_t), sizeof(std::uint32_t));  // no arrays section
    v1[8] = 1;
    v1.resize(v1.size() - sizeof(std::uint64_t));
    const std::uint64_t sum = io::fnv1a64(v1.data(), v1.size());
    v1.append(reinterpret_cast<const char*>(&sum), sizeof sum);
    write_bytes(dir / "v1.ck", v1);
    const io::Checkpoint c = io::read_checkpoint(dir / "v1.ck");
    EXPECT_EQ(c.header.step, 5);
    EXPECT_TRUE(test::bitwise_equal(c.field<double>(1), f.r));
    EXPECT_TRUE(c.arrays.empty());
}

// AtomicFile's pieces: every byte lands, in order, whatever the sizes written and whether the file
// system takes direct I/O (the last piece padded to a block, then the file cut back) or not
// (/dev/shm, tmpfs: O_DIRECT refused, the page cache); nothing under the name before commit().
TEST(AtomicFileTest, WritesEveryByteDirectOrNot) {
    TempDir dir;
    std::vector<std::string> folders = {dir.str()};
    if (fs::is_directory("/dev/shm")) folders.push_back("/dev/shm");
    const std::size_t piece = io::AtomicFile::kPiece;
    for (const std::string& folder : folders)
        for (std::size_t size : {std::size_t(0), std::size_t(1), std::size_t(4095), std::size_t(4097),
                                 piece - 1, piece, 2 * piece + 5}) {
            std::string bytes(size, '\0');
            for (std::size_t i = 0; i < size; ++i) bytes[i] = char(i * 131 + size);
            const std::string path = folder + "/strata-atomic-" + std::to_string(::getpid()) + ".bin";
            {
                io::AtomicFile f(path);
                for (std::size_t at = 0, step = 1; at < size; at += step, step = step * 3 + 1)
                    f.write(bytes.data() + at, std::min(step, size - at));
                EXPECT_FALSE(fs::exists(path));
                f.commit();
            }
            EXPECT_EQ(fs::file_size(path), size) << folder << ", " << size << " bytes";
            EXPECT_TRUE(read_bytes(path) == bytes) << folder << ", " << size << " bytes";
            EXPECT_FALSE(fs::exists(path + ".tmp"));
            fs::remove(path);
        }
}

// Version 3's checksum takes its bytes in pieces of any size (a field's rows), and is FNV-1a's
// step on each 64-bit word, then on each of the last bytes: not the byte-by-byte sum of version 2.
TEST(Checkpoint, WordChecksumIsTheSameInPiecesOfAnySize) {
    std::string bytes(1003, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i * 37 + 11);
    io::WordChecksum whole;
    whole.add(bytes.data(), bytes.size());
    for (std::size_t piece : {1, 3, 7, 8, 9, 13, 1002}) {
        io::WordChecksum s;
        for (std::size_t at = 0; at < bytes.size(); at += piece)
            s.add(bytes.data() + at, std::min(piece, bytes.size() - at));
        EXPECT_EQ(s.value(), whole.value()) << "pieces of " << piece;
    }
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::size_t i = 0; i + 8 <= bytes.size(); i += 8) {
        std::uint64_t w;
        std::memcpy(&w, bytes.data() + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    EXPECT_EQ(whole.value(), io::fnv1a64(bytes.data() + 1000, 3, h));
    EXPECT_NE(whole.value(), io::fnv1a64(bytes.data(), bytes.size()));
    EXPECT_EQ(io::kCheckpointVersion, 3u);
}

class CheckpointCorruption : public ::testing::Test {
protected:
    void SetUp() override {
        const ApfParams p = ApfParams::for_mesh(30);
        const auto f = test::random_apf_fields<double>(p, 9);
        io::write_checkpoint<double>(dir / "good.ck",
                                     {"apf", Precision::fp64, 31, 31, 1, 1, 2, 5, 0.1, {{"dt", p.dt}}},
                                     {{"E", &f.e}, {"R", &f.r}});
        good = read_bytes(dir / "good.ck");
    }
    // Reading `bytes` fails with a message that names the file and contains `problem`.
    void expect_rejected(const std::string& bytes, const std::string& problem) {
        write_bytes(dir / "bad.ck", bytes);
        try {
            io::read_checkpoint(dir / "bad.ck");
            ADD_FAILURE() << "accepted a checkpoint that is " << problem;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(problem), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(dir / "bad.ck"), std::string::npos) << e.what();
        }
    }
    TempDir dir;
    std::string good;
};

TEST_F(CheckpointCorruption, TruncatedAnywhereIsRejected) {
    std::mt19937 gen(11);
    for (int i = 0; i < 20; ++i) {
        const std::size_t cut = std::uniform_int_distribution<std::size_t>(9, good.size() - 1)(gen);
        expect_rejected(good.substr(0, cut), "truncated");
    }
}
TEST_F(CheckpointCorruption, FlippedPayloadByteFailsTheChecksum) {
    std::string bad = good;
    bad[bad.size() - 100] ^= 0x10;
    expect_rejected(bad, "checksum");
}
TEST_F(CheckpointCorruption, WrongMagicIsNotACheckpoint) {
    std::string bad = good;
    bad[0] = 'X';
    expect_rejected(bad, "not a strata checkpoint");
}
TEST_F(CheckpointCorruption, WrongVersionIsNamed) {
    std::string bad = good;
    bad[8] = 7;  // the u32 version follows the 8-byte magic
    expect_rejected(bad, "format version 7");
}

// A version-2 heat3d checkpoint in the documented layout with any header, which write_checkpoint
// would not write: `fields` fields named u holding `values` fp64 zeros in all, a valid checksum.
std::string checkpoint_bytes(int nx, int ny, int nz, int ghost, int dims, std::uint32_t fields,
                             std::size_t values) {
    std::string b = "STRATACK";
    auto put = [&](auto v) { b.append(reinterpret_cast<const char*>(&v), sizeof v); };
    auto put_string = [&](const std::string& s) {
        put(std::uint32_t(s.size()));
        b += s;
    };
    put(std::uint32_t(2));
    put_string("heat3d");
    put(std::uint32_t(8));
    for (int v : {nx, ny, nz, ghost, dims}) put(std::int32_t(v));
    put(std::int64_t(0));
    put(0.0);
    put(std::uint32_t(0));
    put(fields);
    for (std::uint32_t i = 0; i < fields; ++i) put_string("u");
    put(std::uint32_t(0));
    b.append(values * 8, '\0');
    put(io::fnv1a64(b.data(), b.size()));
    return b;
}

// Headers that read a field past its end or sized one far beyond the file, each found by reading
// the reader (fuzz_checkpoint did not reach them in its minutes): a 2D field of two planes made
// field() copy the second plane past the HostField; a ghost width of 2^29, or sides whose
// product wrapped around 2^64 to the data's size, made it allocate exabytes.
TEST_F(CheckpointCorruption, HeadersPromisingOtherFieldsThanTheFileHoldsAreRejected) {
    ASSERT_NO_THROW(write_bytes(dir / "ok.ck", checkpoint_bytes(3, 4, 5, 1, 3, 2, 120)));
    EXPECT_EQ(io::read_checkpoint(dir / "ok.ck").field<double>(1).extent.pz(), 7);
    expect_rejected(checkpoint_bytes(3, 3, 2, 1, 2, 1, 18), "corrupted header");
    expect_rejected(checkpoint_bytes(3, 3, 1, 1 << 29, 2, 1, 9), "corrupted header");
    expect_rejected(checkpoint_bytes(1 << 21, 1 << 21, 1 << 19, 1, 3, 1, 0), "truncated");
    expect_rejected(checkpoint_bytes(1 << 16, 1 << 16, 1 << 16, 1, 3, 1 << 16, 0), "truncated");
}

// The run `args` (a restart) fails as bad input, saying `mention`, and writes no checkpoint.
void expect_restart_rejected(const TempDir& dir, std::vector<std::string> args, const std::string& mention) {
    write_bytes(dir / "keep.ck", "precious");
    args.insert(args.end(), {"--checkpoint", dir / "keep.ck", "--json", dir / "r.json"});
    const CliResult r = cli(args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(mention), std::string::npos) << "wanted '" << mention << "' in: " << r.err;
    EXPECT_EQ(read_bytes(dir / "keep.ck"), "precious");
}

TEST(Restart, WrongModelPrecisionOrSizeIsAClearErrorAndOverwritesNothing) {
    TempDir dir;
    ASSERT_EQ(cli({"run", "apf", "-n", "30", "-i", "20", "--checkpoint", dir / "apf.ck"}).code, 0);
    auto rejected = [&](std::vector<std::string> args, const std::string& mention) {
        expect_restart_rejected(dir, std::move(args), mention);
    };
    rejected({"run", "heat3d", "-n", "30", "--restart", dir / "apf.ck"}, "model 'apf'");
    rejected({"run", "apf", "-n", "30", "-i", "40", "--precision", "fp32", "--restart", dir / "apf.ck"},
             "fp64");
    rejected({"run", "apf", "-n", "32", "-i", "40", "--restart", dir / "apf.ck"}, "-n");
    rejected({"run", "apf", "-n", "30", "-i", "10", "--restart", dir / "apf.ck"}, "beyond");
    const std::string good = read_bytes(dir / "apf.ck");
    write_bytes(dir / "cut.ck", good.substr(0, good.size() / 2));
    const CliResult r = cli({"run", "apf", "-n", "30", "-i", "40", "--restart", dir / "cut.ck"});
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
    EXPECT_EQ(read_bytes(dir / "apf.ck"), good);
}

// A run restarted from step k ends with the same fields and arrays (bitwise), the same report
// values and the same output files (in --out) as an uninterrupted run. Returns the checkpoint at k.
io::Checkpoint expect_restart_equivalent(std::vector<std::string> base, const std::string& steps_flag,
                                         const std::string& k, const std::string& n,
                                         const std::vector<std::string>& report_keys = {"max_norm", "l2norm"},
                                         const std::vector<std::string>& out_files = {},
                                         const std::string& k_file = "k.ck") {
    TempDir dir;
    auto run = [&](const std::string& steps, std::vector<std::string> extra) {
        std::vector<std::string> args = base;
        args.insert(args.end(), {steps_flag, steps});
        args.insert(args.end(), extra.begin(), extra.end());
        const CliResult r = cli(args);
        EXPECT_EQ(r.code, 0) << r.err;
        return r;
    };
    run(n, {"--checkpoint", dir / "straight.ck", "--json", dir / "straight.json", "--out", dir / "straight"});
    run(k, {"--checkpoint", dir / k_file, "--out", dir / "k"});
    const CliResult restarted = run(n, {"--restart", dir / k_file, "--checkpoint", dir / "restarted.ck",
                                        "--json", dir / "restarted.json", "--out", dir / "restarted"});
    EXPECT_NE(restarted.out.find("restarted from"), std::string::npos);
    const auto a = read_json(dir / "straight.json"), b = read_json(dir / "restarted.json");
    for (const auto& key : report_keys) EXPECT_EQ(a[key].get<double>(), b[key].get<double>()) << key;
    EXPECT_EQ(a["t_end"].get<double>(), b["t_end"].get<double>());
    EXPECT_EQ(b["restart"]["step"].get<std::int64_t>(), io::read_checkpoint(dir / k_file).header.step);
    EXPECT_EQ(b["checkpoints"], nlohmann::json::array({dir / "restarted.ck"}));
    const io::Checkpoint x = io::read_checkpoint(dir / "straight.ck"),
                         y = io::read_checkpoint(dir / "restarted.ck");
    EXPECT_EQ(x.header.step, y.header.step);
    EXPECT_EQ(x.interiors, y.interiors);  // bitwise
    EXPECT_EQ(x.arrays, y.arrays);
    for (const auto& f : out_files) {
        const std::string want = read_bytes(dir / ("straight/" + f));
        EXPECT_FALSE(want.empty()) << f;
        EXPECT_EQ(want, read_bytes(dir / ("restarted/" + f))) << f;
    }
    return io::read_checkpoint(dir / k_file);
}

TEST(Restart, ApfContinuesBitwiseOnCpu) {
    expect_restart_equivalent({"run", "apf", "-n", "37"}, "-i", "61", "150");
}
TEST(Restart, ApfContinuesBitwiseOnOmpFp32) {
    expect_restart_equivalent({"run", "apf", "-n", "45", "--backend", "omp", "--precision", "fp32"}, "-i",
                              "33", "97");
}
TEST(Restart, ApfTimeScheduleEndsAtTheSameIteration) {
    TempDir dir;
    ASSERT_EQ(
        cli({"run", "apf", "-n", "30", "-t", "10", "--checkpoint", dir / "a.ck", "--json", dir / "a.json"})
            .code,
        0);
    ASSERT_EQ(cli({"run", "apf", "-n", "30", "-i", "50", "--checkpoint", dir / "k.ck"}).code, 0);
    ASSERT_EQ(
        cli({"run", "apf", "-n", "30", "-t", "10", "--restart", dir / "k.ck", "--json", dir / "b.json"}).code,
        0);
    const auto a = read_json(dir / "a.json"), b = read_json(dir / "b.json");
    EXPECT_EQ(a["iterations"], b["iterations"]);
    EXPECT_EQ(a["max_norm"].get<double>(), b["max_norm"].get<double>());
    EXPECT_EQ(a["l2norm"].get<double>(), b["l2norm"].get<double>());
}
// The report says how many checkpoints a run wrote, their bytes (the file's, each time) and the
// time they took; none, no such line.
TEST(Checkpoint, ReportGivesTheWritesBytesAndTime) {
    TempDir dir;
    ASSERT_EQ(cli({"run", "heat2d", "-n", "40", "--steps", "12", "--checkpoint", dir / "h.ck",
                   "--checkpoint-every", "5", "--json", dir / "r.json"})
                  .code,
              0);
    const auto r = read_json(dir / "r.json");
    EXPECT_EQ(r["checkpoints_written"].get<int>(), 3);  // steps 5, 10, and the last, 12
    EXPECT_DOUBLE_EQ(r["checkpoint_gb"].get<double>(), 3 * double(fs::file_size(dir / "h.ck")) / 1e9);
    EXPECT_GT(r["checkpoint_write_s"].get<double>(), 0);
    EXPECT_GT(r["checkpoint_gb_per_s"].get<double>(), 0);
    // What they cost in memory: this process's peak resident set before the first and after the
    // last, and the field values it wrote (heat2d's u, 40^2 doubles).
    ASSERT_EQ(r["checkpoint_field_mb_per_rank"].size(), 1u);
    EXPECT_DOUBLE_EQ(r["checkpoint_field_mb_per_rank"][0].get<double>(), 40 * 40 * 8 / 1e6);
    const double before = r["checkpoint_vmhwm_before_mb"].get<double>(),
                 after = r["checkpoint_vmhwm_after_mb"].get<double>();
    EXPECT_GT(before, 1);  // (a process of this size holds more than a megabyte)
    EXPECT_GE(after, before);
    EXPECT_NEAR(r["checkpoint_memory_growth_mb"].get<double>(), after - before, 1e-6);
    ASSERT_EQ(cli({"run", "heat2d", "-n", "40", "--steps", "2", "--json", dir / "none.json"}).code, 0);
    EXPECT_FALSE(read_json(dir / "none.json").contains("checkpoints_written"));
}
TEST(Restart, Heat3dContinuesBitwise) {
    expect_restart_equivalent({"run", "heat3d", "-n", "19", "--stencil", "27pt", "--backend", "omp"},
                              "--steps", "13", "40");
}

// wave3d on 21^3 points with a source whose wavelet (f0 = 6000: its peak at step ~33) passes the
// five receivers early, so the traces a checkpoint carries are not zeros.
std::vector<std::string> wave_shot(std::vector<std::string> extra,
                                   const std::string& source = "0.5,0.5,0.5,6000",
                                   const std::string& receivers = "0.1,0.5,0.5,0.9,0.5,0.5,5") {
    extra.insert(extra.begin(),
                 {"run", "wave3d", "-n", "21", "--source", source, "--receiver-line", receivers});
    return extra;
}

template <class T>
void expect_wave_restart_equivalent(const std::vector<std::string>& extra) {
    const std::vector<std::string> base = wave_shot(extra);
    const io::Checkpoint k = expect_restart_equivalent(base, "--steps", "61", "150", {"max_abs", "energy"},
                                                       {"traces.bin", "traces.json", "seismogram.png"});
    EXPECT_EQ(k.field_names, (std::vector<std::string>{"p", "prev"}));
    const std::vector<T> traces = k.array<T>("traces");
    ASSERT_EQ(traces.size(), 61u * 5);
    EXPECT_GT(*std::max_element(traces.begin(), traces.end()), T(0.1));
}
TEST(Restart, Wave3dContinuesBitwiseWithTheTracesOnCpu) { expect_wave_restart_equivalent<float>({}); }
TEST(Restart, Wave3dContinuesBitwiseWithTheTracesOnOmpFp64) {
    expect_wave_restart_equivalent<double>({"--backend", "omp", "--precision", "fp64"});
}

// 16-bit checkpoints keep the stored bits: a restart at fp16 or bf16 continues bit for bit, from
// strata's format and from HDF5 (wave3d's traces included).
TEST(Restart, HalfPrecisionsContinueBitwise) {
    const io::Checkpoint a =
        expect_restart_equivalent({"run", "apf", "-n", "37", "--precision", "fp16"}, "-i", "61", "150");
    EXPECT_EQ(a.header.precision, Precision::fp16);
    const io::Checkpoint h = expect_restart_equivalent(
        {"run", "heat3d", "-n", "19", "--stencil", "27pt", "--backend", "omp", "--precision", "bf16"},
        "--steps", "13", "40");
    EXPECT_EQ(h.header.precision, Precision::bf16);
    EXPECT_EQ(h.interiors.at(0).size(), 19u * 19 * 19 * 2);
}
TEST(Restart, HalfPrecisionsContinueBitwiseFromAnHdf5Checkpoint) {
    if (!io::hdf5_available()) GTEST_SKIP() << io::hdf5_missing();
    const io::Checkpoint k = expect_restart_equivalent(wave_shot({"--precision", "bf16"}), "--steps", "61",
                                                       "150", {"max_abs", "energy"}, {"traces.bin"}, "k.h5");
    EXPECT_EQ(k.header.precision, Precision::bf16);
    const std::vector<bf16> traces = k.array<bf16>("traces");
    ASSERT_EQ(traces.size(), 61u * 5);
    float largest = 0;
    for (bf16 v : traces) largest = std::max(largest, float(v));
    EXPECT_GT(largest, 0.1f);
}

// From an HDF5 checkpoint (FILE.h5) as from strata's own: apf's two fields, wave3d's traces.
TEST(Restart, ApfContinuesBitwiseFromAnHdf5Checkpoint) {
    if (!io::hdf5_available()) GTEST_SKIP() << io::hdf5_missing();
    expect_restart_equivalent({"run", "apf", "-n", "37"}, "-i", "61", "150", {"max_norm", "l2norm"}, {},
                              "k.h5");
}
TEST(Restart, Wave3dContinuesBitwiseFromAnHdf5CheckpointWithTheTraces) {
    if (!io::hdf5_available()) GTEST_SKIP() << io::hdf5_missing();
    const io::Checkpoint k = expect_restart_equivalent(wave_shot({}), "--steps", "61", "150",
                                                       {"max_abs", "energy"}, {"traces.bin"}, "k.h5");
    EXPECT_EQ(k.array<float>("traces").size(), 61u * 5);
}

TEST(Restart, Wave3dWithOtherFlagsIsAClearError) {
    TempDir dir;
    const std::vector<std::string> fixed{"--out", dir / "out"};
    auto restart = [&](std::vector<std::string> extra) {
        extra.insert(extra.end(), {"--steps", "40", "--restart", dir / "w.ck"});
        extra.insert(extra.end(), fixed.begin(), fixed.end());
        return extra;
    };
    std::vector<std::string> first = fixed;
    first.insert(first.end(), {"--steps", "20", "--checkpoint", dir / "w.ck"});
    ASSERT_EQ(cli(wave_shot(first)).code, 0);
    ASSERT_EQ(cli(wave_shot(restart({}))).code, 0);  // the same flags restart
    auto rejected = [&](std::vector<std::string> args, const std::string& mention) {
        expect_restart_rejected(dir, std::move(args), mention);
    };
    rejected(wave_shot(restart({"--velocity", "layered:1500,1400@0.5"})), "velocity_hash");  // dt the same
    rejected(wave_shot(restart({"--velocity", "1600"})), "dt =");
    rejected(wave_shot(restart({"--source", "0.2,0.5,0.5,6000"})), "sources = 1");
    rejected(wave_shot(restart({}), "0.4,0.5,0.5,6000"), "source_hash");
    rejected(wave_shot(restart({}), "0.5,0.5,0.5,5000"), "source_hash");
    rejected(wave_shot(restart({}), "0.5,0.5,0.5,6000", "0.1,0.5,0.5,0.9,0.5,0.5,4"), "receivers = 5");
    rejected(wave_shot(restart({}), "0.5,0.5,0.5,6000", "0.1,0.4,0.5,0.9,0.4,0.5,5"), "receiver_hash");
    rejected(wave_shot(restart({"--sponge", "3"})), "sponge");
    rejected(wave_shot(restart({"--extent", "2"})), "h =");
    rejected(wave_shot(restart({"--safety", "0.4"})), "dt =");
    rejected(wave_shot(restart({"--precision", "fp64"})), "fp32");
    rejected(wave_shot(restart({"--nz", "22"})), "-n");
    rejected(wave_shot({"--steps", "10", "--restart", dir / "w.ck", "--out", dir / "out"}), "beyond");
    expect_restart_rejected(dir, {"run", "heat3d", "-n", "21", "--restart", dir / "w.ck"}, "model 'wave3d'");
}

TEST(Snapshots, ApfRunWritesFramesThatParseBackToTheFields) {
    TempDir dir;
    const CliResult r =
        cli({"run", "apf", "-n", "33", "-i", "30", "-p", "10", "--out", dir / "frames", "--json",
             dir / "r.json", "--checkpoint", dir / "end.ck", "--writer-threads", "2"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = read_json(dir / "r.json");
    EXPECT_EQ(j["snapshots"].size(), 3u * 2 + 1);
    EXPECT_EQ(j["checkpoints"], nlohmann::json::array({dir / "end.ck"}));
    EXPECT_GE(j["snapshot_wait_s"].get<double>(), 0.0);  // the time loop's wait for the writers
    const auto pvd = io::read_pvd(dir / "frames/apf.pvd");
    ASSERT_EQ(pvd.size(), 3u);
    const ApfParams p = ApfParams::for_mesh(33);
    EXPECT_EQ(pvd[2], (io::PvdFrame{30 * p.dt, "apf_000030.vti"}));
    // The last frame is the final state, which the end checkpoint also holds.
    const io::VtiField last = io::read_vti(dir / "frames/apf_000030.vti");
    EXPECT_EQ(last.grid.nx, 34);
    EXPECT_EQ(last.grid.spacing, p.dx);
    const HostField<double> e = io::read_checkpoint(dir / "end.ck").field<double>(0);
    const auto want = interior_values(e);
    ASSERT_EQ(last.values, want);
    const io::Image png = io::read_png(dir / "frames/apf_000030.png");
    EXPECT_EQ(png.at(5, 0),
              io::palette_colour(std::uint8_t(std::lround(std::clamp(e.at(5, 33), 0.0, 1.0) * 254))));
    // strata render turns the raw frame into the same picture.
    ASSERT_EQ(cli({"render", dir / "frames/apf_000030.vti", "-o", dir / "r.png"}).code, 0);
    EXPECT_EQ(io::read_png(dir / "r.png").pixels, png.pixels);
}

TEST(Snapshots, Heat3dFramesHoldTheFieldAndItsMidPlanes) {
    TempDir dir;
    const CliResult r = cli({"run", "heat3d", "-n", "13", "--steps", "8", "--every", "4", "--out", dir.str(),
                             "--checkpoint", dir / "end.ck"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(io::read_pvd(dir / "heat3d.pvd").size(), 2u);
    const io::VtiField v = io::read_vti(dir / "heat3d_000008.vti");
    const io::Checkpoint c = io::read_checkpoint(dir / "end.ck");
    EXPECT_EQ(v.values, interior_values(c.field<double>(0)));
    EXPECT_EQ(v.grid.origin[0], v.grid.spacing);
    for (const char* axis : {"x", "y", "z"}) {
        const io::Image img = io::read_png(dir / (std::string("heat3d_000008_") + axis + ".png"));
        EXPECT_EQ(img.width, 13);
    }
    // render of the checkpoint's x slice equals the snapshot's x slice.
    ASSERT_EQ(cli({"render", dir / "end.ck", "--slice", "x", "-o", dir / "x.png"}).code, 0);
    EXPECT_EQ(io::read_png(dir / "x.png").pixels, io::read_png(dir / "heat3d_000008_x.png").pixels);
}

TEST(Snapshots, Wave3dFramesHoldPressureNextToTheTraces) {
    TempDir dir;
    const CliResult r = cli(wave_shot({"--nx", "23", "--ny", "19", "--steps", "30", "--every", "10", "--out",
                                       dir.str(), "--checkpoint", dir / "end.ck", "--json", dir / "r.json"}));
    ASSERT_EQ(r.code, 0) << r.err;
    for (const char* f : {"traces.bin", "traces.json", "seismogram.png"})
        EXPECT_TRUE(fs::exists(dir / f)) << f;
    const auto j = read_json(dir / "r.json");
    const double h = j["h"].get<double>(), dt = j["dt"].get<double>();
    EXPECT_EQ(j["snapshots"].size(), 3u * 4 + 1);
    const auto pvd = io::read_pvd(dir / "wave3d.pvd");
    ASSERT_EQ(pvd.size(), 3u);
    for (int f = 0; f < 3; ++f) {
        char name[32];
        std::snprintf(name, sizeof name, "wave3d_%06d.vti", 10 * (f + 1));
        EXPECT_EQ(pvd[f], (io::PvdFrame{10 * (f + 1) * dt, name}));
    }
    // The last frame is the final p, which the end checkpoint also holds; point (i, j, k) is at (ih, jh, kh).
    const io::VtiField v = io::read_vti(dir / "wave3d_000030.vti");
    EXPECT_EQ(v.precision, Precision::fp32);
    EXPECT_EQ(v.grid.name, "p");
    EXPECT_EQ(v.grid.spacing, h);
    EXPECT_EQ(v.grid.origin, (std::array<double, 3>{0, 0, 0}));
    const io::Checkpoint c = io::read_checkpoint(dir / "end.ck");
    const auto p = interior_values(c.field<float>(0));
    ASSERT_EQ(v.values.size(), p.size());
    for (std::size_t i = 0; i < p.size(); ++i) ASSERT_EQ(float(v.values[i]), p[i]) << i;
    const auto [lo, hi] = std::minmax_element(p.begin(), p.end());
    EXPECT_GT(std::max(-*lo, *hi), 0.1f);  // the wavelet is under way (negative first, as a Ricker)
    // The pictures map p over +-1 / (4 pi 10 h): render of the frame with that range is the picture.
    const double peak = 1 / (4 * std::numbers::pi * 10 * h);
    EXPECT_EQ(j["picture_range"], nlohmann::json::array({-peak, peak}));
    const int sizes[3][2] = {{23, 19}, {23, 21}, {19, 21}};  // z: x-y, y: x-z, x: y-z
    for (int a = 0; a < 3; ++a) {
        const std::string axis(1, "zyx"[a]);
        const io::Image img = io::read_png(dir / ("wave3d_000030_" + axis + ".png"));
        EXPECT_EQ(img.width, sizes[a][0]) << axis;
        EXPECT_EQ(img.height, sizes[a][1]) << axis;
        char lo[32], hi[32];
        std::snprintf(lo, sizeof lo, "%.17g", -peak);
        std::snprintf(hi, sizeof hi, "%.17g", peak);
        ASSERT_EQ(cli({"render", dir / "wave3d_000030.vti", "--slice", axis, "--range", lo, hi, "-o",
                       dir / ("r" + axis + ".png")})
                      .code,
                  0);
        EXPECT_EQ(io::read_png(dir / ("r" + axis + ".png")).pixels, img.pixels) << axis;
    }
}

TEST(Snapshots, Wave3dRangeOptionSetsThePictures) {
    TempDir dir;
    const CliResult r = cli({"run", "wave3d", "-n", "17", "--steps", "4", "--every", "4", "--range", "-0.25",
                             "0.5", "--out", dir.str(), "--json", dir / "r.json"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_json(dir / "r.json")["picture_range"], nlohmann::json::array({-0.25, 0.5}));
    EXPECT_EQ(cli({"run", "wave3d", "-n", "17", "--range", "1", "-1"}).code, 2);
}

TEST(Progress, BarOnlyOnATerminalAndNotWithQuiet) {
    const std::vector<std::vector<std::string>> runs{{"run", "apf", "-n", "30", "-i", "40"},
                                                     {"run", "wave3d", "-n", "20", "--steps", "40"}};
    for (const auto& args : runs) {
        EXPECT_EQ(cli(args, false).out.find('\r'), std::string::npos) << args[1];
        const CliResult tty = cli(args, true);
        EXPECT_EQ(tty.code, 0) << tty.out;
        EXPECT_NE(tty.out.find("\r[100%] step 40/40"), std::string::npos) << tty.out;
        auto quiet = args;
        quiet.push_back("--quiet");
        EXPECT_EQ(cli(quiet, true).out.find('\r'), std::string::npos) << args[1];
    }
}

TEST(Snapshots, ARunThatOutpacesItsWritersSaysSo) {
    // A frame every step of a small grid on one writer thread: the time loop waits for the
    // writer nearly all the time, and the report says so and what to do.
    TempDir dir;
    const CliResult r = cli({"run", "apf", "-n", "120", "-i", "60", "-p", "1", "--out", dir.str(), "--writer-threads",
                             "1", "--json", dir / "r.json"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("waiting for free snapshot buffers"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--every"), std::string::npos);
    EXPECT_GT(read_json(dir / "r.json")["snapshot_wait_s"].get<double>(), 0.0);
}

TEST(Snapshots, BenchMeasuresEachModelAndLeavesNoFrames) {
    TempDir dir;
    for (const std::vector<std::string>& model : {std::vector<std::string>{"apf", "-n", "64"},
                                                 {"heat3d", "-n", "20"}, {"wave3d", "-n", "20"}}) {
        std::vector<std::string> args{"bench"};
        args.insert(args.end(), model.begin(), model.end());
        for (const char* a : {"--snapshot-every", "2", "--frames", "3", "--backend", "cpu", "--precision", "fp32",
                              "--writer-threads", "2", "--out"})
            args.push_back(a);
        args.push_back(dir / "frames");
        const CliResult r = cli(args);
        ASSERT_EQ(r.code, 0) << model[0] << ": " << r.err;
        EXPECT_NE(r.out.find("snapshot overhead: " + model[0]), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("3 frames, one every 2 steps, 2 writer threads"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("with snapshots        :"), std::string::npos) << r.out;
        EXPECT_TRUE(fs::is_empty(dir / "frames")) << model[0] << ": the bench removes its frames";
    }
    EXPECT_EQ(cli({"bench", "apf", "--snapshot-every", "2", "--frames", "0"}).code, 2);
}

TEST(Cli, RejectsContradictingSnapshotAndCheckpointFlags) {
    EXPECT_EQ(cli({"run", "apf", "-p", "10", "--every", "20"}).code, 2);
    EXPECT_EQ(cli({"run", "apf", "--checkpoint-every", "20"}).code, 2);
    EXPECT_EQ(cli({"run", "heat3d", "--every", "-1"}).code, 2);
}

}  // namespace
}  // namespace strata
