#pragma once
// Snapshot frames and the pool of threads that writes them while the time loop goes on.
//
// A frame of a 2D field is STEM.vti and STEM.png; of a 3D field STEM.vti and the mid-plane
// slices STEM_z.png, STEM_y.png, STEM_x.png (either kind alone with FrameSpec's flags). The
// series' .pvd lists every finished frame's .vti.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "strata/io/vti.hpp"

namespace strata::io {

struct FrameSpec {
    std::string stem;  // directory and name without extension, e.g. "out/apf_000100"
    VtiGrid grid;
    int dims = 2;
    double lo = 0, hi = 1;  // the pictures' fixed value range, so frames compare
    bool vti = true, pictures = true;  // which files (--snapshot-format); at least one
    VtiCompression compression = VtiCompression::none;
    // What every value is multiplied by as it is written: a field stored times a state scale
    // (Problem::state_scale) is written as the model's values (a power of two: exact).
    double unscale = 1;
};

// A piece of a frame's work for a writer thread; returns the files it completed.
using FramePart = std::function<std::vector<std::string>()>;

// A frame's work in parts that writer threads run at once, so a frame is on disk in about the
// time of its .vti rather than of all its files one after another: the .vti (the first part,
// the longest), then the picture in strips for `threads` writers (2D) or the three slices (3D).
// Every part calls `values` before it reads the field (it may wait for the copy to arrive).
template <class T>
std::vector<FramePart> frame_parts(const FrameSpec& spec, std::function<const T*()> values, int threads);

// Writes the frame's files on this thread and returns their paths, the .vti first.
template <class T>
std::vector<std::string> write_frame(const FrameSpec& spec, const T* values);

// The mid-plane of a 3D field across `axis` ('z': the x-y plane, 'y': x-z, 'x': y-z), as a
// row-major 2D array of `width` x `height` with the lower axis fastest.
struct Slice {
    int width = 0, height = 0;
    std::vector<double> values;
};
template <class T>
Slice mid_slice(const T* values, const VtiGrid& grid, char axis);

// min(hardware threads - 1, 16), at least 1: one core stays with the time loop. A 4097^2 frame
// costs a writer 100-170 ms against 5-8 ms of GPU steps between frames, so every core helps;
// past 16 the page cache and disk, not the CPU, set the pace, and each thread holds a pinned
// frame buffer (16 x 134 MB = 2.1 GB at 4096^2 fp64; runs cap them at 2 GiB).
int default_writer_threads();

// Pinned host buffers for snapshots in flight with `writer_threads` writers: one per writer and
// one more, within a 2 GiB budget, and at least 2.
int snapshot_buffers(int writer_threads, std::int64_t frame_bytes);

class SnapshotWriter {
public:
    // Creates `dir` if needed. The series' collection is DIR/SERIES.pvd. threads <= 0: the default.
    SnapshotWriter(std::string dir, std::string series, int threads = 0);
    ~SnapshotWriter();  // stops the threads; call finish() first to see their errors
    SnapshotWriter(const SnapshotWriter&) = delete;
    SnapshotWriter& operator=(const SnapshotWriter&) = delete;

    int threads() const { return int(threads_.size()); }
    const std::string& dir() const { return dir_; }
    std::string frame_stem(std::int64_t step) const;  // DIR/SERIES_000100

    // Queues a frame: its parts run on the writer threads, in parallel, and return the files
    // they wrote; the first file of the first part is what the .pvd lists at `time`. Blocks
    // while threads() + 1 frames are pending; rethrows the error of an earlier frame.
    void submit(double time, std::vector<FramePart> parts);
    void submit(double time, FramePart job) { submit(time, std::vector<FramePart>{std::move(job)}); }
    // Waits for every frame; rethrows the first error; returns the files written, frame by
    // frame, and the .pvd last (nothing when no frame was written).
    std::vector<std::string> finish();

private:
    struct Part {
        std::int64_t seq;  // the frame's
        std::size_t index;
        FramePart run;
    };
    struct Frame {
        double time = 0;
        std::vector<std::vector<std::string>> files;  // by part
        std::size_t left = 0;                         // parts not finished
        bool failed = false;
    };
    void work();
    void rethrow_locked();
    void finish_frame_locked(std::int64_t seq);

    std::string dir_, series_, pvd_path_;
    std::mutex mutex_;
    std::condition_variable queued_, done_;
    std::deque<Part> queue_;
    std::map<std::int64_t, Frame> running_;  // by seq
    int pending_ = 0;                        // frames submitted and not finished
    std::int64_t next_seq_ = 0;
    bool stop_ = false;
    bool listed_ = false;  // the .pvd was written (a frame with a .vti finished)
    std::exception_ptr error_;
    std::map<std::int64_t, std::pair<double, std::vector<std::string>>> finished_;  // by seq
    std::vector<std::thread> threads_;
};

}  // namespace strata::io
