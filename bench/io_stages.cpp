// strata-io: where a snapshot's time goes on this machine's disk, stage by stage.
//
//   build/strata-io [DIR] [FRAMES]   (scripts/gpu-check.sh io runs it on the GPU machine)
//
// One apf-sized frame (4096^2 fp64, 134 MB, a smooth field) is written FRAMES times (default 60,
// 8 GB: far more than the disk's cache, and enough that the page cache's dirty limit is reached):
// - disk: the same bytes written sequentially with O_DIRECT in 16 MiB aligned pieces, then
//   fsync: what the disk takes, with no page cache in the way;
// - page cache: plain write(2)s, no sync: the memory copy the writers pay;
// - vti raw / vti zlib / png: one writer thread encoding and writing FRAMES frames of that kind
//   into the page cache (no sync): each stage's own rate;
// - writers, vti raw: the run's SnapshotWriter pool (default threads) writing the frames, timed
//   until syncfs() returns, so every byte is on the disk: the rate a long run sustains.
// Rates are in GB/s of field values (the frame's 134 MB), 1 GB = 1e9 bytes.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "strata/io/snapshot.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "strata-io: %s: %s\n", what.c_str(), std::strerror(errno));
    std::exit(1);
}

// Sequential writes of `total` bytes in `piece`-byte writes to a new file; O_DIRECT and a final
// fsync when `direct`. Returns GB/s.
double raw_write_gbs(const fs::path& path, std::int64_t total, bool direct) {
    const std::size_t piece = std::size_t(16) << 20;
    void* buf = nullptr;
    if (posix_memalign(&buf, 4096, piece) != 0) fail("posix_memalign");
    std::memset(buf, 0x5a, piece);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0), 0644);
    if (fd < 0) fail("open " + path.string() + (direct ? " with O_DIRECT" : ""));
    const auto t0 = Clock::now();
    for (std::int64_t done = 0; done < total; done += std::int64_t(piece))
        if (write(fd, buf, piece) != ssize_t(piece)) fail("write " + path.string());
    if (direct && fsync(fd) != 0) fail("fsync");
    const double s = seconds_since(t0);
    close(fd);
    std::free(buf);
    fs::remove(path);
    return double(total) / s * 1e-9;
}

// A smooth field like a simulation's: what compression meets in practice.
std::vector<double> smooth_field(int n) {
    std::vector<double> v(std::size_t(n) * n);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
            v[std::size_t(j) * n + i] = 0.5 + 0.5 * std::sin(6.0 * i / n) * std::cos(4.0 * j / n);
    return v;
}

// FRAMES frames written by `writer` (threads; 0: the default) with these flags; synced to the
// disk when `sync`. Returns GB/s of field values and the files' bytes per frame.
std::pair<double, double> frames_gbs(const fs::path& dir, const std::vector<double>& field, int n, int frames,
                                     int threads, bool vti, bool pictures, strata::io::VtiCompression c,
                                     bool sync) {
    fs::remove_all(dir);
    const auto t0 = Clock::now();
    {
        strata::io::SnapshotWriter writer(dir.string(), "io", threads);
        for (int f = 0; f < frames; ++f) {
            strata::io::FrameSpec spec{writer.frame_stem(f), {n, n, 1, 1.0 / n, {}, "E"}, 2, 0, 1, vti, pictures, c};
            const double* values = field.data();
            writer.submit(f, strata::io::frame_parts<double>(spec, [values] { return values; }, writer.threads()));
        }
        writer.finish();
    }
    if (sync) {
        const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
        if (fd < 0 || syncfs(fd) != 0) fail("syncfs " + dir.string());
        close(fd);
    }
    const double s = seconds_since(t0);
    std::uintmax_t bytes = 0;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() != ".pvd") bytes += e.file_size();
    fs::remove_all(dir);
    return {double(field.size() * sizeof(double)) * frames / s * 1e-9, double(bytes) / frames};
}

}  // namespace

int main(int argc, char** argv) {
    // No flags: an argument that looks like one (--help) is a question, not the folder to fill
    // with 8 GB.
    const int frames = argc > 2 ? std::atoi(argv[2]) : 60;
    if (argc > 3 || (argc > 1 && argv[1][0] == '-') || frames < 1) {
        std::fprintf(
            stderr,
            "usage: strata-io [DIR] [FRAMES]: writes FRAMES (default 60) frames of 4096^2 fp64 (134 MB "
            "each) into DIR (default strata-io-out), stage by stage, and prints each stage's rate\n");
        return argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") ? 0 : 2;
    }
    const fs::path dir = argc > 1 ? argv[1] : "strata-io-out";
    const int n = 4096;
    fs::create_directories(dir);
    const std::vector<double> field = smooth_field(n);
    const double frame_bytes = double(field.size() * sizeof(double));
    const auto total = std::int64_t(frame_bytes) * frames;
    std::printf("strata-io: %d frames of %d^2 fp64 (%.0f MB each, %.1f GB in all) in %s, %d writer threads by "
                "default\n",
                frames, n, frame_bytes * 1e-6, double(total) * 1e-9, fs::absolute(dir).c_str(),
                strata::io::default_writer_threads());
    std::printf("%-34s %8s %12s\n", "stage", "GB/s", "MB per frame");
    const double disk = raw_write_gbs(dir / "direct.bin", total, true);
    std::printf("%-34s %8.2f %12s\n", "disk, O_DIRECT + fsync", disk, "");
    std::printf("%-34s %8.2f %12s\n", "page cache, write(2)", raw_write_gbs(dir / "cached.bin", total, false), "");
    using strata::io::VtiCompression;
    struct Stage {
        const char* name;
        int threads;
        bool vti, pictures;
        VtiCompression c;
        bool sync;
        int frames;
    };
    // The slow encoders need fewer frames to be timed (zlib takes seconds per frame on one core).
    const int few = std::max(1, frames / 6), fewest = std::max(1, frames / 20);
    const Stage stages[] = {
        {"vti raw, 1 thread, page cache", 1, true, false, VtiCompression::none, false, frames},
        {"vti zlib, 1 thread, page cache", 1, true, false, VtiCompression::zlib, false, fewest},
        {"png, 1 thread, page cache", 1, false, true, VtiCompression::none, false, few},
        {"png, writers, page cache", 0, false, true, VtiCompression::none, false, frames},
        {"vti zlib, writers, to disk", 0, true, false, VtiCompression::zlib, true, few},
        {"vti raw, writers, to disk", 0, true, false, VtiCompression::none, true, frames},
    };
    double writers_raw = 0;
    for (const Stage& s : stages) {
        const auto [gbs, per_frame] =
            frames_gbs(dir / "frames", field, n, s.frames, s.threads, s.vti, s.pictures, s.c, s.sync);
        std::printf("%-34s %8.2f %12.1f\n", s.name, gbs, per_frame * 1e-6);
        if (s.vti && s.c == VtiCompression::none && s.sync) writers_raw = gbs;
    }
    std::printf("vti raw through the writers to disk: %.1f%% of the disk's O_DIRECT rate\n", 100 * writers_raw / disk);
    fs::remove_all(dir);
    return 0;
}
