#include "run_io.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "io/atomic_file.hpp"
#include "strata/core/error.hpp"
#include "strata/io/h5.hpp"

namespace strata {

void validate(const IoOptions& o) {
    if (o.snapshot_every < 0)
        throw UsageError("--every must be >= 0 (got " + std::to_string(o.snapshot_every) + ")");
    if (o.checkpoint_every < 0)
        throw UsageError("--checkpoint-every must be >= 0 (got " + std::to_string(o.checkpoint_every) + ")");
    if (o.checkpoint_every > 0 && o.checkpoint_path.empty())
        throw UsageError("--checkpoint-every needs --checkpoint FILE");
    if (o.writer_threads < 0) throw UsageError("--writer-threads must be >= 0");
    if (o.snapshot_format != "vti" && o.snapshot_format != "png" && o.snapshot_format != "both" &&
        o.snapshot_format != "h5")
        throw UsageError("--snapshot-format must be vti, png, both or h5 (got '" + o.snapshot_format + "')");
    if (o.snapshot_format == "h5" && (!io::hdf5_available() || (dist::size() > 1 && !io::hdf5_parallel())))
        throw UsageError("--snapshot-format h5: " + io::hdf5_missing());
    if (o.vti_compression != "none" && o.vti_compression != "zlib")
        throw UsageError("--vti-compression must be none or zlib (got '" + o.vti_compression + "')");
    if (!o.checkpoint_path.empty() && o.checkpoint_path == o.restart_path)
        throw UsageError("--checkpoint and --restart name the same file '" + o.restart_path +
                         "': write the new checkpoint elsewhere so the one you restart from survives");
}

namespace app {

Progress::Progress(std::ostream& out, bool enabled, std::int64_t first, std::int64_t last, double dt,
                   double cells, int granule)
    : out_(out),
      enabled_(enabled && last > first),
      first_(first),
      last_(last),
      granule_(std::max(granule, 1)),
      chunk_(granule_),
      last_step_(first),
      dt_(dt),
      cells_(cells) {}

void Progress::update(std::int64_t step) {
    const auto now = Clock::now();
    // The next chunk: about a quarter of a second at the rate of the last one, in whole passes.
    const double chunk_s = std::chrono::duration<double>(now - last_time_).count();
    if (step > last_step_ && chunk_s > 0) {
        const auto steps = std::int64_t(0.25 * double(step - last_step_) / chunk_s);
        chunk_ = std::max<std::int64_t>(1, (steps + granule_ - 1) / granule_) * granule_;
    }
    last_step_ = step;
    last_time_ = now;
    if (!enabled_) return;
    if (std::chrono::duration<double>(now - last_draw_).count() < 0.25 && step < last_) return;
    last_draw_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? double(step - first_) / elapsed : 0;  // steps/s
    const double eta = rate > 0 ? double(last_ - step) / rate : 0;
    char line[256];
    std::snprintf(line, sizeof line, "\r[%3d%%] step %lld/%lld  t = %.6g  %.3g GCells/s  ETA %dm%02ds ",
                  int(100.0 * double(step) / double(last_)), static_cast<long long>(step),
                  static_cast<long long>(last_), double(step) * dt_, rate * cells_ * 1e-9, int(eta) / 60,
                  int(eta) % 60);
    out_ << line << std::flush;
    drawn_ = true;
}

void Progress::clear() {
    if (drawn_) out_ << "\r\033[K" << std::flush;
    drawn_ = false;
}

Snapshots::Snapshots(const IoOptions& o, std::int64_t every, const std::string& series)
    : vti_(o.snapshot_format != "png"),
      pictures_(o.snapshot_format != "vti"),
      compression_(o.vti_compression == "zlib" ? io::VtiCompression::zlib : io::VtiCompression::none) {
    validate(o);
    if (every > 0)
        writer_ = std::make_unique<io::SnapshotWriter>(o.dir(), series,
                                                       o.writer_threads);
}

H5Frames::H5Frames(const IoOptions& o, const std::string& series, const io::VtiGrid& grid, int dims,
                   bool root, double unscale)
    : dir_(o.dir()),
      series_(series),
      xmf_(o.dir() + "/" + series + ".xmf"),
      grid_(grid),
      dims_(dims),
      root_(root),
      unscale_(unscale) {
    std::error_code ec;  // every rank: the first frame may come before any rank waits for another
    std::filesystem::create_directories(dir_, ec);
    if (ec || !std::filesystem::is_directory(dir_))
        throw UsageError("cannot create the snapshot directory '" + dir_ + "'");
}

std::vector<std::string> H5Frames::finish(std::ostream& out) {
    if (!root_ || frames_.empty()) return {};
    out << "  " << frames_.size() << " HDF5 frames of " << grid_.name << " in " << dir_ << " (" << xmf_
        << ": the series, for ParaView)\n";
    std::vector<std::string> files = files_;
    files.push_back(xmf_);
    return files;
}

int Snapshots::buffers(std::int64_t frame_bytes) const {
    return writer_ ? io::snapshot_buffers(writer_->threads(), frame_bytes) : 2;
}

std::vector<std::string> Snapshots::finish(std::ostream& out, double loop_s) {
    if (!writer_) return {};
    const auto t0 = std::chrono::steady_clock::now();
    auto files = writer_->finish();
    const double wait_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "Snapshots: %zu files in %s (%d writer threads; the host waited %.3g s for free buffers, and "
                  "%.3g s at the end)\n",
                  files.size(), writer_->dir().c_str(), writer_->threads(), waited_s_, wait_s);
    out << buf;
    if (loop_s > 0 && waited_s_ > 0.05 * loop_s) {
        std::snprintf(buf, sizeof buf,
                      "  The host spent %.0f%% of the %.3g s loop waiting for free snapshot buffers: frames come "
                      "faster than the writers and the disk take them. A GPU runs on the steps already queued "
                      "meanwhile; if the step rate falls short of a run without snapshots, a larger --every "
                      "keeps it going.\n",
                      100 * waited_s_ / loop_s, loop_s);
        out << buf;
    }
    return files;
}

bool parts_of_restart(const std::string& path, int ranks) { return ranks > 1 && is_h5_path(path); }

io::Checkpoint read_restart(const std::string& path, const std::string& model, Precision precision,
                            const Extent& e, bool parts) {
    const io::Box none{{0, 0, 0}, {0, 0, 0}};
    io::Checkpoint c = parts ? io::read_checkpoint_h5(path, &none) : io::read_checkpoint(path);
    const io::CheckpointHeader& h = c.header;
    if (h.model != model)
        throw UsageError("checkpoint '" + path + "' is of model '" + h.model + "', not " + model);
    if (h.precision != precision)
        throw UsageError("checkpoint '" + path + "' holds " + std::string(to_string(h.precision)) +
                         " fields but the run asks for " + std::string(to_string(precision)) +
                         ": pass --precision " + std::string(to_string(h.precision)));
    if (h.nx != e.nx || h.ny != e.ny || h.nz != e.nz || h.dims != e.dims)
        throw UsageError("checkpoint '" + path + "' holds a " + std::to_string(h.nx) + " x " +
                         std::to_string(h.ny) + (h.dims == 3 ? " x " + std::to_string(h.nz) : "") +
                         " grid but the run has " + std::to_string(e.nx) + " x " + std::to_string(e.ny) +
                         (e.dims == 3 ? " x " + std::to_string(e.nz) : "") + ": pass the same -n");
    return c;
}

std::optional<io::Checkpoint> open_restart(const IoOptions& o, Problem& problem, Precision precision,
                                           bool parts, const std::string& state_scale) {
    if (o.restart_path.empty()) return std::nullopt;
    const ModelInfo& m = problem.model();
    io::Checkpoint c = read_restart(o.restart_path, m.name, precision, problem.extent(), parts);
    for (const auto& [name, value] : problem.fingerprint()) require_same_param(c, o.restart_path, name, value);
    // The values are stored times the scale: a run at another would read them as other values.
    const double scale = c.header.state_scale();
    if (state_scale.empty() || state_scale == "auto") problem.set_state_scale(scale);
    if (scale != problem.state_scale()) {
        char buf[512];
        std::snprintf(buf, sizeof buf,
                      "checkpoint '%s' stores its state times %.17g but this run would store it times %.17g: "
                      "restart with --state-scale %.17g",
                      o.restart_path.c_str(), scale, problem.state_scale(), scale);
        throw UsageError(buf);
    }
    if (c.header.step > problem.steps()) {
        char last[64];
        std::snprintf(last, sizeof last, m.last_step.c_str(), static_cast<long long>(problem.steps()));
        throw UsageError("checkpoint '" + o.restart_path + "' is at " + m.step_noun + " " +
                         std::to_string(c.header.step) + ", beyond this run's " + last);
    }
    return c;
}

template <class T>
State<T> checkpoint_state(const io::Checkpoint& c, const ModelInfo& model, const std::string& path) {
    State<T> s;
    s.step = c.header.step;
    const bool cells =
        std::any_of(c.interiors.begin(), c.interiors.end(), [](const auto& v) { return !v.empty(); });
    std::vector<std::string> names;  // the model's state fields, in its order
    for (const FieldDecl& f : model.fields) {
        if (!holds_state(f.role)) continue;
        const auto at = std::find(c.field_names.begin(), c.field_names.end(), f.name);
        if (at == c.field_names.end())
            throw Error("checkpoint '" + path + "' lacks the " + model.name + " field '" + f.name + "'");
        names.emplace_back(f.name);
        if (cells) s.fields.emplace_back(f.name, c.field<T>(std::size_t(at - c.field_names.begin())));
    }
    for (const std::string& a : c.array_names) s.arrays.emplace_back(a, c.array<T>(a));
    if (!cells)  // read without its cells (open_restart's parts): a box at a time, from the file
        s.read_box = [path, names, precision = c.header.precision](std::array<int, 3> lo,
                                                                   std::array<int, 3> n) {
            const io::Box box{lo, n};
            const io::Checkpoint part = io::read_checkpoint_h5(path, &box);
            if (part.header.precision != precision)
                throw Error("checkpoint '" + path + "' changed while it was read");
            std::vector<std::pair<std::string, std::vector<T>>> out;
            for (const std::string& name : names) {
                const auto at = std::find(part.field_names.begin(), part.field_names.end(), name);
                if (at == part.field_names.end())
                    throw Error("checkpoint '" + path + "' changed while it was read");
                const std::vector<char>& raw = part.interiors[std::size_t(at - part.field_names.begin())];
                std::vector<T> values(raw.size() / sizeof(T));
                std::memcpy(values.data(), raw.data(), values.size() * sizeof(T));
                out.emplace_back(name, std::move(values));
            }
            return out;
        };
    return s;
}

bool is_h5_path(const std::string& path) {
    auto ends = [&](const std::string& s) {
        return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
    };
    return ends(".h5") || ends(".hdf5");
}

void check_checkpoint_path(const std::string& path, int ranks) {
    if (is_h5_path(path) && (!io::hdf5_available() || (ranks > 1 && !io::hdf5_parallel())))
        throw UsageError("--checkpoint " + path + ": " + io::hdf5_missing() +
                         " (a name not ending in .h5 writes strata's own format)");
    // A folder of that name would take the run to its end and fail at the rename of its file; a
    // device would be replaced by it.
    try {
        io::require_replaceable(path);
    } catch (const UsageError& e) {
        throw UsageError("--checkpoint " + std::string(e.what()));
    }
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    const std::string d = dir.empty() ? "." : dir.string();
    std::error_code ec;  // made as --out's folder is
    std::filesystem::create_directories(d, ec);
    if (std::filesystem::exists(d) && !std::filesystem::is_directory(d))  // (root passes access() on a file)
        throw UsageError("--checkpoint " + path + ": '" + d + "' is not a folder");
    if (::access(d.c_str(), W_OK) != 0)
        throw UsageError("--checkpoint " + path + ": cannot write in '" + d + "' (" + std::strerror(errno) +
                         ")");
}

template <class T>
std::uintmax_t write_state(const std::string& path, const Problem& problem, TypedEngine<T>& engine) {
    const Extent e = problem.extent();
    std::uintmax_t bytes = 0;
    if (is_h5_path(path)) {  // every rank writes its own part at once
        const PartState<T> s = engine.part_state();
        const io::CheckpointHeader h{problem.model().name,
                                     precision_of<T>(),
                                     e.nx,
                                     e.ny,
                                     e.nz,
                                     e.ghost,
                                     e.dims,
                                     s.step,
                                     double(s.step) * problem.dt(),
                                     checkpoint_params(problem)};
        std::vector<std::pair<std::string, const std::vector<T>*>> fields, arrays;
        for (const auto& [name, f] : s.fields) fields.emplace_back(name, &f), bytes += f.size() * sizeof(T);
        for (const auto& [name, a] : s.arrays) arrays.emplace_back(name, &a);
        io::write_checkpoint_h5<T>(path, h, io::Box{s.lo, s.n}, fields, arrays, process_count() > 1);
        return bytes;
    }
    const State<T> s = engine.state();
    const io::CheckpointHeader h{
        problem.model().name,          precision_of<T>(),         e.nx, e.ny, e.nz, e.ghost, e.dims, s.step,
        double(s.step) * problem.dt(), checkpoint_params(problem)};
    std::vector<std::pair<std::string, const HostField<T>*>> fields;
    for (const auto& [name, f] : s.fields)
        fields.emplace_back(name, &f), bytes += std::uintmax_t(e.cells()) * sizeof(T);
    std::vector<std::pair<std::string, const std::vector<T>*>> arrays;
    for (const auto& [name, a] : s.arrays) arrays.emplace_back(name, &a);
    io::write_checkpoint<T>(path, h, fields, arrays);
    return bytes;
}

template State<float> checkpoint_state<float>(const io::Checkpoint&, const ModelInfo&, const std::string&);
template State<f16> checkpoint_state<f16>(const io::Checkpoint&, const ModelInfo&, const std::string&);
template State<bf16> checkpoint_state<bf16>(const io::Checkpoint&, const ModelInfo&, const std::string&);
template State<double> checkpoint_state<double>(const io::Checkpoint&, const ModelInfo&, const std::string&);
template std::uintmax_t write_state<float>(const std::string&, const Problem&, TypedEngine<float>&);
template std::uintmax_t write_state<f16>(const std::string&, const Problem&, TypedEngine<f16>&);
template std::uintmax_t write_state<bf16>(const std::string&, const Problem&, TypedEngine<bf16>&);
template std::uintmax_t write_state<double>(const std::string&, const Problem&, TypedEngine<double>&);

void require_same_param(const io::Checkpoint& c, const std::string& path, const std::string& name,
                        double run_value) {
    const double v = c.header.param(name, path);
    if (std::memcmp(&v, &run_value, sizeof v) != 0) {
        char buf[512];
        std::snprintf(buf, sizeof buf,
                      "checkpoint '%s' has %s = %.17g but this run has %.17g: restart with the same flags",
                      path.c_str(), name.c_str(), v, run_value);
        throw UsageError(buf);
    }
}

double choose_state_scale(const Problem& problem, Precision precision, const std::string& given) {
    const ModelInfo& m = problem.model();
    if (given.empty() || given == "auto") {
        if (precision != Precision::fp16 || !m.linear || !m.state_magnitude) return 1;
        const double largest = m.state_magnitude(problem);
        if (!(largest > 0) || !std::isfinite(largest)) return 1;
        // 2^k with largest * 2^k in [2^-0.5, 2^0.5]: room for 2^15 of growth and 2^14 of decay
        // before fp16's subnormals.
        return std::ldexp(1.0, std::clamp(int(std::lround(-std::log2(largest))), -60, 60));
    }
    if (given == "none") return 1;
    double s = 0;
    std::size_t used = 0;
    try {
        if (given.rfind("2^", 0) == 0) {
            const int k = std::stoi(given.substr(2), &used);
            used += 2;
            s = std::ldexp(1.0, std::clamp(k, -2000, 2000));
        } else {
            s = std::stod(given, &used);
        }
    } catch (const std::exception&) {
        used = 0;
    }
    int exponent = 0;
    const bool power = used == given.size() && s > 0 && std::isfinite(s) && std::frexp(s, &exponent) == 0.5 &&
                       exponent >= -60 && exponent <= 62;
    if (!power)
        throw UsageError(
            "--state-scale '" + given +
            "': expected auto, none or a power of two from 2^-61 to 2^61 (1024, 2^10, 2^-8): a power of "
            "two scales the values exactly");
    if (s != 1 && !m.linear)
        throw UsageError(
            "--state-scale " + given + ": " + m.name +
            "'s update is not linear in its state, so a scaled state would advance to another solution "
            "(heat2d, heat3d, wave3d and the stencil files whose updates are linear take a scale)");
    return s;
}

std::vector<std::pair<std::string, double>> checkpoint_params(const Problem& problem) {
    std::vector<std::pair<std::string, double>> p = problem.fingerprint();
    if (problem.state_scale() != 1) p.emplace_back("state_scale", problem.state_scale());
    return p;
}

void add_io(nlohmann::json& r, const std::vector<std::string>& snapshots, double snapshot_wait_s,
            const std::vector<std::string>& checkpoints, const IoOptions& o,
            std::optional<std::int64_t> restart_step) {
    r["snapshots"] = snapshots;
    r["snapshot_wait_s"] = snapshot_wait_s;
    r["checkpoints"] = checkpoints;
    if (restart_step) r["restart"] = {{"file", o.restart_path}, {"step", *restart_step}};
}

}  // namespace app
}  // namespace strata
