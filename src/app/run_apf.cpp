// `strata run apf`: the classic Aliev-Panfilov program, same printed statistics, plus our figures.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <ostream>

#include "report.hpp"
#include "run_io.hpp"
#include "strata/core/error.hpp"
#include "strata/engine.hpp"
#include "strata/run.hpp"

namespace strata {

void validate(const ApfRunOptions& o) {
    if (o.n <= 25) throw UsageError("-n must be greater than 25 (got " + std::to_string(o.n) + ")");
    if (!o.iterations && !(o.t_final > 0))
        throw UsageError("-t must be a positive simulated time (got " + std::to_string(o.t_final) + ")");
    if (o.iterations && *o.iterations < 1)
        throw UsageError("-i must be a positive number of iterations (got " + std::to_string(*o.iterations) + ")");
    if (o.stats_every < 0) throw UsageError("-s must be >= 0 (got " + std::to_string(o.stats_every) + ")");
    if (o.plot_every < 0) throw UsageError("-p must be >= 0 (got " + std::to_string(o.plot_every) + ")");
    if (o.px < 1 || o.py < 1)
        throw UsageError("-x and -y must be >= 1 (got " + std::to_string(o.px) + " x " + std::to_string(o.py) + ")");
    const int points = o.n + 1;
    if (points % o.px != 0 || points % o.py != 0)
        throw UsageError("processor geometry " + std::to_string(o.px) + " x " + std::to_string(o.py) +
                         " does not divide the " + std::to_string(points) + " x " + std::to_string(points) +
                         " mesh");
    if (o.px * o.py != 1)
        throw UsageError("processor geometry " + std::to_string(o.px) + " x " + std::to_string(o.py) +
                         " needs the multi-GPU backend, which is not yet available: use -x 1 -y 1");
    if (o.plot_every > 0 && o.io.snapshot_every > 0 && o.plot_every != o.io.snapshot_every)
        throw UsageError("-p and --every ask for different snapshot intervals (" + std::to_string(o.plot_every) +
                         " and " + std::to_string(o.io.snapshot_every) + "): give one");
    validate(o.io);
}

namespace {

void print_norms(std::ostream& out, std::int64_t iteration, const ApfStats& s) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "iteration = %lld, Max norm: %.6e, L2norm: %.6e\n",
                  static_cast<long long>(iteration), s.max_abs, s.l2);
    out << buf;
}

template <class T>
void print_mesh(std::ostream& out, const HostField<T>& e) {
    char buf[32];
    for (int j = 0; j < e.extent.ny; ++j) {
        for (int i = 0; i < e.extent.nx; ++i) {
            std::snprintf(buf, sizeof buf, "%6.3f ", double(e.at(i, j)));
            out << buf;
        }
        out << '\n';
    }
}

template <class T>
nlohmann::json run(const ApfRunOptions& o, std::ostream& out) {
    std::ofstream json_file;
    if (!o.json_path.empty()) {
        json_file.open(o.json_path);  // opened first: a bad path fails before the run, not after
        if (!json_file) throw UsageError("cannot open '" + o.json_path + "' for the JSON report");
    }
    const ApfParams p = ApfParams::for_mesh(o.n);
    ApfSchedule sched;
    if (o.iterations) {
        sched.steps = *o.iterations;
        sched.t_end = double(sched.steps) * p.dt;
    } else {
        sched = apf_schedule_for_time(p.dt, o.t_final);
    }
    // A restart continues the same schedule: the run still ends at sched.steps.
    std::optional<io::Checkpoint> restart;
    if (!o.io.restart_path.empty()) {
        restart = app::read_restart(o.io.restart_path, "apf", o.precision, p.extent());
        app::require_same_param(*restart, o.io.restart_path, "dt", p.dt);
        app::require_same_param(*restart, o.io.restart_path, "alpha", p.alpha);
        if (restart->header.step > sched.steps)
            throw UsageError("checkpoint '" + o.io.restart_path + "' is at iteration " +
                             std::to_string(restart->header.step) + ", beyond this run's last (" +
                             std::to_string(sched.steps) + ")");
    }
    const std::int64_t first = restart ? restart->header.step : 0;
    const std::int64_t snapshot_every = o.io.snapshot_every > 0 ? o.io.snapshot_every : o.plot_every;
    app::Snapshots snapshots(o.io, snapshot_every, "apf");
    EngineOptions eo{o.kernel, o.graphs, o.chunk, o.depth, snapshots.buffers(p.extent().cells() * std::int64_t(sizeof(T)))};
    std::unique_ptr<ApfEngine<T>> engine;
    if (restart) {
        ApfFields<T> init{restart->field<T>(0), restart->field<T>(1)};
        apf_mirror_ghosts(init.e);
        engine = make_apf_engine<T>(o.backend, p, &init, eo);
    } else {
        engine = make_apf_engine<T>(o.backend, p, nullptr, eo);
    }

    char buf[256];
    std::snprintf(buf, sizeof buf, "dt= %g, # iters = %lld\n", p.dt, static_cast<long long>(sched.steps));
    out << "Aliev-Panfilov (apf): backend " << to_string(o.backend) << ", kernel " << engine->kernel()
        << ", precision " << to_string(o.precision) << '\n'
        << buf << "m x n = " << o.n << " x " << o.n << '\n'
        << "processor geometry: " << o.px << " x " << o.py << '\n';
    if (o.no_comm) out << "-k: no halo communication requested (a 1 x 1 geometry has none to skip)\n";
    if (restart) out << "restarted from '" << o.io.restart_path << "' at iteration " << first << '\n';
    out << '\n';
    out.flush();

    std::vector<std::string> checkpoints;
    auto checkpoint = [&](std::int64_t step) {
        const ApfFields<T> f = engine->fields();
        io::CheckpointHeader h{"apf", o.precision, f.e.extent.nx, f.e.extent.ny, 1, 1, 2, step, double(step) * p.dt,
                               {{"n", p.n}, {"m", p.m}, {"dt", p.dt}, {"alpha", p.alpha}}};
        io::write_checkpoint<T>(o.io.checkpoint_path, h, {{"E", &f.e}, {"R", &f.r}});
        if (checkpoints.empty()) checkpoints.push_back(o.io.checkpoint_path);
    };
    const io::VtiGrid grid{p.n + 1, p.m + 1, 1, p.dx, {0, 0, 0}, "E"};
    std::vector<app::Periodic> hooks{
        {o.stats_every, true, [&](std::int64_t step) { print_norms(out, step, engine->stats()); }},
        {snapshot_every, false,
         [&](std::int64_t step) {
             snapshots.submit(step, double(step) * p.dt, io::FrameSpec{"", grid, 2, 0.0, 1.0},
                              [&] { return engine->snapshot(); });
         }},
        {o.io.checkpoint_every, true, checkpoint}};
    app::Progress progress(out, o.io.progress, first, sched.steps, p.dt, double(p.extent().cells()));
    const auto t0 = std::chrono::steady_clock::now();
    const double excluded_s = app::drive(*engine, first, sched.steps, hooks, progress);
    engine->synchronize();
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - excluded_s;
    if (!o.io.checkpoint_path.empty() && (o.io.checkpoint_every == 0 || sched.steps % o.io.checkpoint_every != 0))
        checkpoint(sched.steps);
    const std::vector<std::string> snapshot_files = snapshots.finish(out, wall_s + excluded_s);
    const ApfStats s = engine->stats();

    if (o.debug) {
        if (o.n <= 32) {
            out << "E at the end (mesh points, row j = 1 first):\n";
            print_mesh(out, engine->fields().e);
        } else {
            out << "-d: the mesh is too large to print (n > 32)\n";
        }
    }

    std::snprintf(buf, sizeof buf, "End at time: %g, iteration %lld\n", sched.t_end,
                  static_cast<long long>(sched.steps));
    out << buf;
    std::snprintf(buf, sizeof buf, "Max norm: %.6e, L2norm: %.6e\n\n", s.max_abs, s.l2);
    out << buf;

    using Model = AlievPanfilov<T>;
    const std::int64_t cells = p.extent().cells();
    const auto tp = app::throughput(wall_s, sched.steps - first, cells, Model::flops_per_cell, Model::min_bytes_per_cell);
    out << app::format_throughput(tp, Model::flops_per_cell, Model::min_bytes_per_cell);

    nlohmann::json r;
    r["model"] = "apf";
    r["backend"] = to_string(o.backend);
    r["kernel"] = engine->kernel();
    r["precision"] = to_string(o.precision);
    r["n"] = o.n;
    r["mesh_points"] = cells;
    r["geometry"] = {o.px, o.py};
    r["no_comm"] = o.no_comm;
    r["dt"] = p.dt;
    r["alpha"] = p.alpha;
    r["iterations"] = sched.steps;
    r["t_end"] = sched.t_end;
    r["max_norm"] = s.max_abs;
    r["l2norm"] = s.l2;
    app::add_throughput(r, tp, Model::flops_per_cell, Model::min_bytes_per_cell);
    app::add_kernel_info(out, r, engine->kernel_info(), Model::min_bytes_per_cell);
    app::add_roofline(out, r, o.backend == Backend::cuda, tp.effective_gbs);
    app::add_io(r, snapshot_files, snapshots.waited_s(), checkpoints, o.io,
                restart ? std::optional(first) : std::nullopt);
    if (json_file.is_open()) {
        json_file << r.dump(2) << '\n';
        if (!json_file) throw Error("failed writing the JSON report to '" + o.json_path + "'");
    }
    return r;
}

}  // namespace

nlohmann::json run_apf(const ApfRunOptions& o, std::ostream& out) {
    validate(o);
    return o.precision == Precision::fp32 ? run<float>(o, out) : run<double>(o, out);
}

}  // namespace strata
