#pragma once
// What a run does between steps, for every model: periodic statistics, snapshots written by a
// pool of threads while the engine goes on, checkpoints, and the progress bar.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ranks/mpi.hpp"
#include "strata/core/interrupt.hpp"
#include "strata/engine.hpp"
#include "strata/io/checkpoint.hpp"
#include "strata/io/h5.hpp"
#include "strata/io/snapshot.hpp"
#include "strata/run.hpp"

namespace strata::app {

// Paces the time loop in chunks of about a quarter of a second (whole passes of `granule` steps),
// so that a stop request is seen soon and a long run shows its progress: with `enabled` (a
// terminal, no --quiet), one line redrawn with '\r' at most four times a second: step/total,
// simulated time, GCells/s, ETA.
class Progress {
public:
    Progress(std::ostream& out, bool enabled, std::int64_t first, std::int64_t last, double dt, double cells,
             int granule = 1);
    bool enabled() const { return enabled_; }
    // Steps until the next check is due (estimated from the rate so far).
    std::int64_t chunk() const { return chunk_; }
    void update(std::int64_t step);
    void clear();  // erases the line before the report
    // An error that ends the run (its line on stderr) then starts on a line of its own, not after
    // the progress line the terminal shows.
    ~Progress() { clear(); }
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

private:
    using Clock = std::chrono::steady_clock;
    std::ostream& out_;
    bool enabled_;
    std::int64_t first_, last_, granule_, chunk_, last_step_;
    double dt_, cells_;
    Clock::time_point start_ = Clock::now(), last_draw_ = start_, last_time_ = start_;
    bool drawn_ = false;
};

// Something done every `every` steps (never when 0). `excluded`: its time is not part of the
// step rate (statistics and checkpoints are; snapshots are meant to cost nothing, so they count).
struct Periodic {
    std::int64_t every = 0;
    bool excluded = true;
    std::function<void(std::int64_t step)> run;
};

// Where drive() stopped: `to`, or earlier when a stop was requested (interrupt.hpp).
struct Driven {
    std::int64_t step;
    double excluded_s;  // seconds spent in excluded hooks
};

// Advances `engine` from step `from` to `to` in the progress' chunks, stopping at every multiple
// of each hook's period, and after any chunk once a stop is requested. Over several ranks every
// decision is the ranks' together (the largest chunk, a check if any rank wants one, a stop if any
// rank has a signal): they step, exchange and stop in step.
template <class Engine>
Driven drive(Engine& engine, std::int64_t from, std::int64_t to, const std::vector<Periodic>& hooks,
             Progress& progress) {
    double excluded_s = 0;
    std::int64_t done = from, checked = from;
    const bool several = dist::size() > 1;
    while (done < to) {
        std::int64_t next = std::min(to, checked + progress.chunk());
        for (const Periodic& h : hooks)
            if (h.every > 0) next = std::min(next, (done / h.every + 1) * h.every);
        if (several) next = dist::allreduce_max(next);
        engine.advance(next - done);
        done = next;
        for (const Periodic& h : hooks) {
            if (h.every <= 0 || done % h.every != 0) continue;
            progress.clear();  // a hook may print a line
            if (!h.excluded) {
                h.run(done);
                continue;
            }
            engine.synchronize();
            const auto t0 = std::chrono::steady_clock::now();
            h.run(done);
            excluded_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        const bool cut = done < checked + progress.chunk() && done < to;  // short of the chunk: by a hook
        if (several ? dist::allreduce_max(int(!cut)) == 0 : cut) continue;
        // The steps queued are done before the stop check (a stop lands between steps) and the
        // bar shows steps done, not steps queued. Once every quarter second: no measurable cost.
        engine.synchronize();
        progress.update(done);
        checked = done;
        if (several ? dist::allreduce_max(int(stop_requested() != 0)) != 0 : stop_requested() != 0) break;
    }
    progress.clear();
    return {done, excluded_s};
}

// The snapshot series of a run: frames submitted to a writer pool, the files they wrote.
class Snapshots {
public:
    // Nothing is written when `every` is 0.
    Snapshots(const IoOptions& o, std::int64_t every, const std::string& series);
    bool active() const { return writer_ != nullptr; }
    int threads() const { return writer_ ? writer_->threads() : 0; }
    // Pinned buffers the engine should keep for snapshots in flight: one per writer thread and
    // one more, within a 2 GiB budget.
    int buffers(std::int64_t frame_bytes) const;
    // Takes the engine's copy of the field (`take()` returns the engine's snapshot(), which
    // blocks while every pinned buffer holds a frame not yet written) and queues the frame (which
    // blocks while the writers are a round behind). The time blocked is the host's wait for the
    // writers: frames come faster than the disk takes them. A GPU goes on with the steps already
    // queued meanwhile, so it stalls only once the wait outlasts them.
    template <class Take>
    void submit(std::int64_t step, double time, io::FrameSpec spec, const Take& take) {
        const auto t0 = std::chrono::steady_clock::now();
        std::shared_ptr c(take());
        using T = std::remove_cv_t<std::remove_pointer_t<decltype(c->wait())>>;
        spec.stem = writer_->frame_stem(step);
        spec.vti = vti_;
        spec.pictures = pictures_;
        spec.compression = compression_;
        writer_->submit(time, io::frame_parts<T>(spec, [c] { return c->wait(); }, writer_->threads()));
        waited_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    // Waits for the writers; prints a line about the frames and the waits, and a hint when the
    // time loop (`loop_s` long, if known) waited more than 5% of it; returns the files.
    std::vector<std::string> finish(std::ostream& out, double loop_s = 0);
    // Seconds the host spent in submit(): blocked on the writers, plus the copy's launch.
    double waited_s() const { return waited_s_; }

private:
    bool vti_, pictures_;  // IoOptions::snapshot_format
    io::VtiCompression compression_;
    std::unique_ptr<io::SnapshotWriter> writer_;
    double waited_s_ = 0;
};

// Snapshot frames in HDF5 (--snapshot-format h5): at each frame every rank writes its part of the
// field into DIR/SERIES_STEP.h5 at once, and rank 0 rewrites DIR/SERIES.xmf, the XDMF file that
// lists them in time (io/h5.hpp), which ParaView opens as one series. Written in the time loop, on
// the ranks together (no writer threads).
class H5Frames {
public:
    // `unscale`: the field's values are stored times a state scale; its inverse (Problem::unscale).
    H5Frames(const IoOptions& o, const std::string& series, const io::VtiGrid& grid, int dims, bool root,
             double unscale = 1);
    // Writes a frame (every rank its own part); returns its file and the bytes of values this
    // process wrote.
    template <class T>
    std::pair<std::string, std::uintmax_t> write(std::int64_t step, double time, TypedEngine<T>& engine,
                                                 const std::string& field) {
        const PartField<T> p = engine.part_field(field);
        char name[64];
        std::snprintf(name, sizeof name, "_%06lld.h5", static_cast<long long>(step));
        const std::string file = series_ + name, path = dir_ + "/" + file;
        // 16-bit fields are written as fp32 (XDMF readers know no 16-bit float; exact), and
        // values stored times a state scale divided by it (exact: a power of two).
        using F = std::conditional_t<is_half_v<T>, float, T>;
        if (is_half_v<T> || unscale_ != 1) {
            std::vector<F> v(p.values.size());
            for (std::size_t i = 0; i < v.size(); ++i) v[i] = F(p.values[i]) * F(unscale_);
            io::write_frame_h5<F>(path, grid_, dims_, io::Box{p.lo, p.n}, v, step, time, dist::size() > 1);
        } else {
            io::write_frame_h5<T>(path, grid_, dims_, io::Box{p.lo, p.n}, p.values, step, time,
                                  dist::size() > 1);
        }
        const std::uintmax_t bytes = p.values.size() * sizeof(F);
        if (!root_) return {path, bytes};
        frames_.push_back({time, file});
        files_.push_back(path);
        io::write_xdmf(xmf_, grid_, dims_, precision_of<F>(), frames_);
        return {path, bytes};
    }
    // Rank 0 prints where the frames are; returns the files, the .xmf last.
    std::vector<std::string> finish(std::ostream& out);

private:
    std::string dir_, series_, xmf_;
    io::VtiGrid grid_;
    int dims_;
    bool root_;
    double unscale_;
    std::vector<io::XdmfFrame> frames_;
    std::vector<std::string> files_;
};

// Reads a checkpoint for a restart and checks it is `model` at `precision` with `extent`. `parts`
// (an HDF5 checkpoint): the header, the fields' names and the arrays alone, no cell of a field
// (checkpoint_state reads each rank's own).
io::Checkpoint read_restart(const std::string& path, const std::string& model, Precision precision,
                            const Extent& extent, bool parts = false);
// The checkpoint a run restarts from (none without --restart): read_restart's checks, each of the
// problem's fingerprint the same bitwise as the run's, and a step not past its last (a restart
// continues to the same last step as the uninterrupted run, or further). `parts`: over several
// ranks, an HDF5 checkpoint is read rank by rank, each its own cells (parts_of_restart). The
// state scale: the checkpoint's stored values are at its own, which the problem takes when the
// run's was chosen (`state_scale` auto or empty); one given that differs is an error.
std::optional<io::Checkpoint> open_restart(const IoOptions& o, Problem& problem, Precision precision,
                                           bool parts = false, const std::string& state_scale = "auto");
// Whether a run of `ranks` processes reads the checkpoint `path` in parts: HDF5, over ranks.
bool parts_of_restart(const std::string& path, int ranks);
// Throws UsageError naming the parameter when the checkpoint's differs (bitwise) from the run's.
void require_same_param(const io::Checkpoint& c, const std::string& path, const std::string& name,
                        double run_value);
// The state a checkpoint holds: every state field of the model, and the arrays. For a checkpoint
// read without its cells (open_restart's `parts`), a State whose read_box reads a box of every
// state field from the file (each rank its own, when the decomposed engine asks).
template <class T>
State<T> checkpoint_state(const io::Checkpoint& c, const ModelInfo& model, const std::string& path);
// Whether a checkpoint's name asks for HDF5 (io/h5.hpp): it ends in .h5 or .hdf5.
bool is_h5_path(const std::string& path);
// UsageError unless a run of `ranks` processes can write the checkpoint `path`: its folder (made
// if missing) takes files, and for HDF5 the build has it (parallel, for several ranks). Checked
// before the run, so that a bad path costs no steps.
void check_checkpoint_path(const std::string& path, int ranks);
// Writes the engine's state to a checkpoint (to PATH.tmp, renamed): strata's own format, gathered
// to rank 0, or for a name is_h5_path() takes, HDF5 with every rank writing its own part at once.
// Returns the bytes of field values this process wrote (its part, or the whole state).
template <class T>
std::uintmax_t write_state(const std::string& path, const Problem& problem, TypedEngine<T>& engine);

// The state scale a run stores its state fields at (Problem::state_scale, docs/precision.md), from
// --state-scale (Python's state_scale): "auto" picks 2^k with the problem's largest initial or
// source magnitude times 2^k in [0.71, 1.41] for an fp16 run of a linear model, else 1; "none" is
// 1; a power of two ("1024", "2^10", "2^-8") is taken as it is. UsageError for anything else,
// or for a scale other than 1 on a model whose update is not linear in its state (apf).
double choose_state_scale(const Problem& problem, Precision precision, const std::string& given);
// What a checkpoint records of the run beyond the state: the problem's fingerprint and, when it
// is not 1, the state scale (so that a checkpoint of before the scale reads as scale 1).
std::vector<std::pair<std::string, double>> checkpoint_params(const Problem& problem);

// The JSON keys every run adds: snapshots, snapshot_wait_s (Snapshots::waited_s), checkpoints, restart.
void add_io(nlohmann::json& r, const std::vector<std::string>& snapshots, double snapshot_wait_s,
            const std::vector<std::string>& checkpoints, const IoOptions& o,
            std::optional<std::int64_t> restart_step);

}  // namespace strata::app
