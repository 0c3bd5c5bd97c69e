#include "strata/io/snapshot.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "strata/core/error.hpp"
#include "strata/io/png.hpp"

namespace strata::io {

template <class T>
Slice mid_slice(const T* values, const VtiGrid& g, char axis) {
    const std::int64_t nx = g.nx, ny = g.ny;
    auto at = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
        return double(values[(k * ny + j) * nx + i]);
    };
    Slice s;
    if (axis == 'z') {
        s = {g.nx, g.ny, {}};
        for (int j = 0; j < g.ny; ++j)
            for (int i = 0; i < g.nx; ++i) s.values.push_back(at(i, j, g.nz / 2));
    } else if (axis == 'y') {
        s = {g.nx, g.nz, {}};
        for (int k = 0; k < g.nz; ++k)
            for (int i = 0; i < g.nx; ++i) s.values.push_back(at(i, g.ny / 2, k));
    } else if (axis == 'x') {
        s = {g.ny, g.nz, {}};
        for (int k = 0; k < g.nz; ++k)
            for (int j = 0; j < g.ny; ++j) s.values.push_back(at(g.nx / 2, j, k));
    } else {
        throw UsageError(std::string("unknown slice axis '") + axis + "' (z, y or x)");
    }
    return s;
}

namespace {

template <class T>
std::vector<FramePart> parts_of(const FrameSpec& spec, std::function<const T*()> values, int threads) {
    std::vector<FramePart> parts;
    if (spec.vti)
        parts.push_back([spec, values] {
            const std::string path = spec.stem + ".vti";
            write_vti(path, spec.grid, values(), spec.compression);
            return std::vector<std::string>{path};
        });
    if (!spec.pictures) return parts;
    if (spec.dims == 2) {
        const int w = spec.grid.nx, h = spec.grid.ny;
        auto png = std::make_shared<PngStrips>(spec.stem + ".png", w, h, png_strips(h, threads));
        for (int s = 0; s < png->strips(); ++s)
            parts.push_back([spec, values, png, s, w, h] {
                const T* v = values();
                const bool done = png->write_strip(s, [&](int y, std::uint8_t* row) {
                    picture_row(v + std::size_t(h - 1 - y) * w, w, spec.lo, spec.hi, row);  // y upwards
                });
                return done ? std::vector<std::string>{png->path()} : std::vector<std::string>{};
            });
    } else {
        for (char axis : {'z', 'y', 'x'})
            parts.push_back([spec, values, axis] {
                const Slice s = mid_slice(values(), spec.grid, axis);
                const std::string path = spec.stem + "_" + axis + ".png";
                write_png(path, field_picture(s.values.data(), s.width, s.height, spec.lo, spec.hi));
                return std::vector<std::string>{path};
            });
    }
    return parts;
}

}  // namespace

template <class T>
std::vector<FramePart> frame_parts(const FrameSpec& spec, std::function<const T*()> values, int threads) {
    // 16-bit frames are written as fp32 (VTK has no 16-bit float; every value converts exactly),
    // and values stored times a state scale divided by it (spec.unscale, a power of two: exact),
    // converted once by whichever part runs first.
    using Out = std::conditional_t<is_half_v<T>, float, T>;
    if (!is_half_v<T> && spec.unscale == 1) return parts_of<T>(spec, std::move(values), threads);
    struct Converted {
        std::once_flag once;
        std::vector<Out> v;
    };
    auto c = std::make_shared<Converted>();
    const std::size_t n = std::size_t(spec.grid.nx) * std::size_t(spec.grid.ny) * std::size_t(spec.grid.nz);
    const Out unscale = Out(spec.unscale);
    return parts_of<Out>(
        spec,
        [c, values, n, unscale] {
            std::call_once(c->once, [&] {
                const T* p = values();
                c->v.assign(n, Out(0));
                for (std::size_t i = 0; i < n; ++i) c->v[i] = Out(p[i]) * unscale;
            });
            return static_cast<const Out*>(c->v.data());
        },
        threads);
}

template <class T>
std::vector<std::string> write_frame(const FrameSpec& spec, const T* values) {
    std::vector<std::string> files;
    for (const FramePart& part : frame_parts<T>(spec, [values] { return values; }, 1)) {
        const auto more = part();
        files.insert(files.end(), more.begin(), more.end());
    }
    return files;
}

template Slice mid_slice<float>(const float*, const VtiGrid&, char);
template Slice mid_slice<double>(const double*, const VtiGrid&, char);
template std::vector<FramePart> frame_parts<float>(const FrameSpec&, std::function<const float*()>, int);
template std::vector<FramePart> frame_parts<double>(const FrameSpec&, std::function<const double*()>, int);
template std::vector<FramePart> frame_parts<f16>(const FrameSpec&, std::function<const f16*()>, int);
template std::vector<FramePart> frame_parts<bf16>(const FrameSpec&, std::function<const bf16*()>, int);
template std::vector<std::string> write_frame<float>(const FrameSpec&, const float*);
template std::vector<std::string> write_frame<double>(const FrameSpec&, const double*);

int default_writer_threads() {
    const int hw = int(std::thread::hardware_concurrency());
    return std::clamp(hw - 1, 1, 16);
}

int snapshot_buffers(int writer_threads, std::int64_t frame_bytes) {
    const std::int64_t budget = std::int64_t(2) << 30;
    return int(std::clamp<std::int64_t>(budget / std::max<std::int64_t>(frame_bytes, 1), 2, writer_threads + 1));
}

SnapshotWriter::SnapshotWriter(std::string dir, std::string series, int threads)
    : dir_(std::move(dir)), series_(std::move(series)) {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec || !std::filesystem::is_directory(dir_))
        throw UsageError("cannot create the snapshot directory '" + dir_ + "'");
    pvd_path_ = (std::filesystem::path(dir_) / (series_ + ".pvd")).string();
    const int n = threads > 0 ? threads : default_writer_threads();
    for (int t = 0; t < n; ++t) threads_.emplace_back([this] { work(); });
}

SnapshotWriter::~SnapshotWriter() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    queued_.notify_all();
    for (auto& t : threads_) t.join();
}

std::string SnapshotWriter::frame_stem(std::int64_t step) const {
    char name[64];
    std::snprintf(name, sizeof name, "_%06lld", static_cast<long long>(step));
    return (std::filesystem::path(dir_) / (series_ + name)).string();
}

void SnapshotWriter::rethrow_locked() {
    if (error_) std::rethrow_exception(error_);
}

void SnapshotWriter::submit(double time, std::vector<FramePart> parts) {
    if (parts.empty()) return;
    {
        std::unique_lock lock(mutex_);
        done_.wait(lock, [&] { return pending_ <= threads() || error_; });
        rethrow_locked();
        const std::int64_t seq = next_seq_++;
        running_[seq] = {time, std::vector<std::vector<std::string>>(parts.size()), parts.size(), false};
        for (std::size_t i = 0; i < parts.size(); ++i) queue_.push_back({seq, i, std::move(parts[i])});
        ++pending_;
    }
    queued_.notify_all();
}

std::vector<std::string> SnapshotWriter::finish() {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    rethrow_locked();
    std::vector<std::string> files;
    for (const auto& [seq, frame] : finished_)
        files.insert(files.end(), frame.second.begin(), frame.second.end());
    if (listed_) files.push_back(pvd_path_);
    return files;
}

void SnapshotWriter::work() {
    for (;;) {
        Part part;
        bool failed_before = false;  // after an error, frames are dropped, not written
        {
            std::unique_lock lock(mutex_);
            queued_.wait(lock, [&] { return stop_ || !queue_.empty(); });
            if (queue_.empty()) return;
            part = std::move(queue_.front());
            queue_.pop_front();
            failed_before = bool(error_);
        }
        std::vector<std::string> files;
        std::exception_ptr error;
        try {
            if (!failed_before) files = part.run();
        } catch (...) {
            error = std::current_exception();
        }
        part.run = nullptr;  // gives back its hold on the frame's buffer before the bookkeeping below
        std::unique_lock lock(mutex_);
        Frame& frame = running_.at(part.seq);
        if (error && !error_) error_ = error;
        frame.failed = frame.failed || error || failed_before;
        frame.files[part.index] = std::move(files);
        if (--frame.left == 0) {
            finish_frame_locked(part.seq);
            --pending_;
            lock.unlock();
            done_.notify_all();
        }
    }
}

void SnapshotWriter::finish_frame_locked(std::int64_t seq) {
    const Frame frame = std::move(running_.at(seq));
    running_.erase(seq);
    std::vector<std::string> files;
    for (const auto& f : frame.files) files.insert(files.end(), f.begin(), f.end());
    if (frame.failed || files.empty()) return;
    finished_[seq] = {frame.time, std::move(files)};
    // Rewritten after every frame, finished frames in order: a crash leaves a valid list.
    std::vector<PvdFrame> frames;
    for (const auto& [s, f] : finished_)
        if (f.second.front().ends_with(".vti"))  // pictures alone make no ParaView series
            frames.push_back({f.first, std::filesystem::path(f.second.front()).filename().string()});
    if (frames.empty()) return;
    listed_ = true;
    try {
        write_pvd(pvd_path_, frames);
    } catch (...) {
        if (!error_) error_ = std::current_exception();
    }
}

}  // namespace strata::io
