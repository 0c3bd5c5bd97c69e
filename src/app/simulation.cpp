#include "strata/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <ostream>
#include <sstream>

#include "run_io.hpp"
#include "strata/core/error.hpp"
#include "tune/tune_command.hpp"

namespace strata {

// One writer series per directory, as a run has one: its .pvd lists every frame written there.
struct Simulation::Writers {
    struct Series {
        IoOptions io;
        std::unique_ptr<app::Snapshots> snapshots;
        std::unique_ptr<app::H5Frames> h5;  // format h5
        std::string field;                  // (h5: the series' field)
        std::size_t files = 0;              // written so far
    };
    std::map<std::string, Series> by_dir;
};

namespace {

template <class T>
std::unique_ptr<Engine> make(Problem& problem, const SimulationOptions& o, const EngineOptions& eo) {
    std::optional<State<T>> init;
    if (!o.restart.empty()) {
        IoOptions io;
        io.restart_path = o.restart;
        const std::optional<io::Checkpoint> c =
            app::open_restart(io, problem, precision_of<T>(), false, o.state_scale);
        init = app::checkpoint_state<T>(*c, problem.model(), o.restart);
    }
    return make_engine<T>(problem, o.backend, eo, init ? &*init : nullptr);
}

}  // namespace

Simulation::Simulation(const SimulationOptions& o, std::ostream* warnings)
    : backend_(o.backend), writers_(std::make_unique<Writers>()) {
    const ModelInfo& model = find_model(o.model);
    for (const ParamSpec& p : model.params)
        if (p.run_only && o.params.has(p.key))
            throw UsageError(p.flag + " (" + p.key + ") acts in a scheduled run (`strata run`, strata.run()), not in a " +
                             "simulation advanced step by step: read observables() or call snapshot() instead");
    std::ostringstream ignored;
    problem_ = model.problem(o.params, warnings ? *warnings : ignored);
    const Precision precision = o.precision.value_or(model.precision);
    problem_->set_state_scale(app::choose_state_scale(*problem_, precision, o.state_scale));
    // The launch as `strata run` chooses it (the wisdom's, unless given or declined).
    EngineOptions eo = o.engine;
    std::ostringstream wisdom_log;  // a corrupt wisdom file's warning
    launch_ = choose_launch(*problem_, o.params, o.backend, precision, o.wisdom, eo, wisdom_log);
    if (warnings) *warnings << wisdom_log.str();
    engine_ = with_precision(precision, [&]<class T>(std::type_identity<T>) -> std::unique_ptr<Engine> {
        return make<T>(*problem_, o, eo);
    });
}

Simulation::~Simulation() {
    try {
        flush();
    } catch (...) {  // documented: flush() first to see them
    }
}

template <class T>
TypedEngine<T>& Simulation::engine_as() {
    if (precision() != precision_of<T>())
        throw Error("the simulation is " + std::string(to_string(precision())) + ", not " +
                    std::string(to_string(precision_of<T>())));
    return static_cast<TypedEngine<T>&>(*engine_);
}
template TypedEngine<float>& Simulation::engine_as<float>();
template TypedEngine<f16>& Simulation::engine_as<f16>();
template TypedEngine<bf16>& Simulation::engine_as<bf16>();
template TypedEngine<double>& Simulation::engine_as<double>();

bool Simulation::advance(std::int64_t steps, const std::function<bool()>& stop) {
    if (steps < 0) throw UsageError("cannot advance a negative number of steps (" + std::to_string(steps) + ")");
    // Pieces of whole passes: a captured graph's worth at first, then a quarter of a second at the
    // rate measured. Each piece but the last is waited for, so that a stop lands within one; a
    // wait every quarter second costs the GPU a launch gap (microseconds) per 0.25 s.
    const std::int64_t pass = engine_->kernel_info().depth;
    std::int64_t piece = seconds_per_step_ > 0 ? std::int64_t(0.25 / seconds_per_step_) : kGraphPasses * pass;
    piece = std::max<std::int64_t>(1, piece / pass) * pass;
    std::int64_t done = 0;
    while (done < steps) {
        const std::int64_t n = std::min(piece, steps - done);
        const auto t0 = std::chrono::steady_clock::now();
        engine_->advance(n);
        done += n;
        if (done == steps) break;
        engine_->synchronize();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s > 0) {
            seconds_per_step_ = s / double(n);
            piece = std::max<std::int64_t>(1, std::int64_t(0.25 / seconds_per_step_) / pass) * pass;
        }
        if (stop && stop()) return false;
    }
    return true;
}

std::vector<std::string> Simulation::snapshot(const std::string& dir, const std::string& format,
                                              const std::string& compression, const std::string& field) {
    if (dir.empty()) throw UsageError("snapshot: give a directory for the frames");
    Writers::Series& series = writers_->by_dir[dir];
    if (!series.snapshots) {
        series.io.out_dir = dir;
        series.io.snapshot_format = format;
        series.io.vti_compression = compression;
        validate(series.io);
        // (h5 frames are written by H5Frames below: no writer threads)
        series.snapshots = std::make_unique<app::Snapshots>(series.io, format == "h5" ? 0 : 1, model().name);
    } else if (series.io.snapshot_format != format || series.io.vti_compression != compression) {
        throw UsageError("snapshot: frames in '" + dir + "' are " + series.io.snapshot_format + " (" +
                         series.io.vti_compression + "); one directory holds one series");
    }
    SnapshotSpec spec = problem_->snapshot_spec();
    if (!field.empty() && field != spec.field) {
        const FieldDecl& decl = model().fields.at(std::size_t(model().field_index(field)));
        spec.field = field;
        spec.grid.name = field;  // the array's name in the .vti and the dataset's in the .h5
        spec.lo = decl.lo;
        spec.hi = decl.hi;
    }
    if (format == "h5") {  // a file per frame, and the XDMF series (H5Frames), written here
        if (!series.h5) {
            series.h5 = std::make_unique<app::H5Frames>(series.io, model().name, spec.grid, model().dims,
                                                        true, problem_->unscale(spec.field));
            series.field = spec.field;
        } else if (series.field != spec.field) {
            throw UsageError("snapshot: the HDF5 frames in '" + dir + "' are of " + series.field + ", not " +
                             spec.field + "; one directory holds one series");
        }
        with_precision(precision(), [&]<class T>(std::type_identity<T>) {
            series.h5->write(step(), time(), engine_as<T>(), spec.field);
        });
        std::ostringstream quiet;
        const std::vector<std::string> files = series.h5->finish(quiet);  // the frames, then the .xmf
        return {files[files.size() - 2], files.back()};
    }
    io::FrameSpec frame{"", spec.grid, model().dims, spec.lo, spec.hi};
    frame.unscale = problem_->unscale(spec.field);
    with_precision(precision(), [&]<class T>(std::type_identity<T>) {
        series.snapshots->submit(step(), time(), frame, [&] { return engine_as<T>().snapshot(spec.field); });
    });
    std::ostringstream quiet;  // finish()'s line is for a run's report
    // Every frame's files so far, then the .pvd when a .vti frame was written (it is rewritten
    // with each frame, so it is part of every frame's files).
    std::vector<std::string> files = series.snapshots->finish(quiet);
    const bool pvd = !files.empty() && files.back().ends_with(".pvd");
    const std::size_t frames_end = files.size() - (pvd ? 1 : 0);
    std::vector<std::string> fresh(files.begin() + std::ptrdiff_t(std::min(series.files, frames_end)),
                                   files.begin() + std::ptrdiff_t(frames_end));
    if (pvd) fresh.push_back(files.back());
    series.files = frames_end;
    return fresh;
}

void Simulation::flush() {
    std::ostringstream quiet;
    for (auto& [dir, series] : writers_->by_dir)
        if (series.snapshots) series.snapshots->finish(quiet);
}

void Simulation::checkpoint(const std::string& path) {
    if (path.empty()) throw UsageError("checkpoint: give a file name");
    with_precision(precision(), [&]<class T>(std::type_identity<T>) {
        app::write_state(path, *problem_, engine_as<T>());
    });
}

}  // namespace strata
