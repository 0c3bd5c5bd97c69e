// `strata run heat3d`: explicit heat diffusion on the unit cube, checked against the exact decay.
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

void validate(const HeatRunOptions& o) {
    if (o.n < 3) throw UsageError("-n must be at least 3 (got " + std::to_string(o.n) + ")");
    if (o.steps < 0) throw UsageError("--steps must be >= 0 (got " + std::to_string(o.steps) + ")");
    if (!(o.kappa > 0)) throw UsageError("--kappa must be positive");
    if (!(o.safety > 0 && o.safety <= 1))
        throw UsageError("--safety must be in (0, 1]: it is the fraction of the stability bound used as dt");
    validate(o.io);
}

namespace {

template <class T, HeatStencil S>
nlohmann::json run(const HeatRunOptions& o, const HeatParams& p, std::ostream& out) {
    std::ofstream json_file;
    if (!o.json_path.empty()) {
        json_file.open(o.json_path);
        if (!json_file) throw UsageError("cannot open '" + o.json_path + "' for the JSON report");
    }
    const std::optional<io::Checkpoint> restart = app::open_restart(
        o.io, "heat3d", o.precision, p.extent(),
        {{"stencil", double(int(p.stencil))}, {"kappa", p.kappa}, {"safety", p.safety}, {"h", p.h}, {"dt", p.dt}},
        o.steps);
    const std::int64_t first = restart ? restart->header.step : 0;
    app::Snapshots snapshots(o.io, o.io.snapshot_every, "heat3d");
    EngineOptions eo{o.kernel, o.graphs, o.chunk, o.depth, snapshots.buffers(p.extent().cells() * std::int64_t(sizeof(T)))};
    std::unique_ptr<HeatEngine<T>> engine;
    if (restart) {
        const HostField<T> init = restart->field<T>(0);  // ghosts 0: the Dirichlet boundary
        engine = make_heat_engine<T>(o.backend, p, &init, eo);
    } else {
        engine = make_heat_engine<T>(o.backend, p, nullptr, eo);
    }
    char buf[256];
    out << "3D heat (heat3d), " << to_string(p.stencil) << " stencil: backend " << to_string(o.backend)
        << ", kernel " << engine->kernel() << ", precision " << to_string(o.precision) << '\n';
    std::snprintf(buf, sizeof buf, "grid %d^3, h = %g, kappa = %g, dt = %g (%g of the stability bound), %lld steps\n",
                  p.nx, p.h, p.kappa, p.dt, p.safety, static_cast<long long>(o.steps));
    out << buf;
    if (restart) out << "restarted from '" << o.io.restart_path << "' at step " << first << '\n';
    out << '\n';
    out.flush();

    std::vector<std::string> checkpoints;
    auto checkpoint = [&](std::int64_t step) {
        const HostField<T> u = engine->field();
        io::CheckpointHeader h{"heat3d", o.precision, p.nx, p.ny, p.nz, 1, 3, step, double(step) * p.dt,
                               {{"stencil", double(int(p.stencil))}, {"kappa", p.kappa}, {"safety", p.safety},
                                {"h", p.h}, {"dt", p.dt}}};
        io::write_checkpoint<T>(o.io.checkpoint_path, h, {{"u", &u}});
        if (checkpoints.empty()) checkpoints.push_back(o.io.checkpoint_path);
    };
    const io::VtiGrid grid{p.nx, p.ny, p.nz, p.h, {p.h, p.h, p.h}, "u"};
    std::vector<app::Periodic> hooks{
        {o.io.snapshot_every, false,
         [&](std::int64_t step) {
             snapshots.submit(step, double(step) * p.dt, io::FrameSpec{"", grid, 3, 0.0, 1.0},
                              [&] { return engine->snapshot(); });
         }},
        {o.io.checkpoint_every, true, checkpoint}};
    app::Progress progress(out, o.io.progress, first, o.steps, p.dt, double(p.extent().cells()));
    const auto t0 = std::chrono::steady_clock::now();
    const double excluded_s = app::drive(*engine, first, o.steps, hooks, progress);
    engine->synchronize();
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - excluded_s;
    if (!o.io.checkpoint_path.empty() && (o.io.checkpoint_every == 0 || o.steps % o.io.checkpoint_every != 0))
        checkpoint(o.steps);
    const std::vector<std::string> snapshot_files = snapshots.finish(out, wall_s + excluded_s);
    const double t_end = double(o.steps) * p.dt;
    const HeatStats s = engine->stats();
    const double err = engine->max_error(t_end);

    std::snprintf(buf, sizeof buf,
                  "End at time: %g, step %lld\nMax norm: %.6e, L2norm: %.6e\nMax error vs exact: %.6e\n\n",
                  t_end, static_cast<long long>(o.steps), s.max_abs, s.l2, err);
    out << buf;
    using Model = Heat3D<T, S>;
    const auto tp = app::throughput(wall_s, o.steps - first, p.extent().cells(), Model::flops_per_cell,
                                    Model::min_bytes_per_cell);
    out << app::format_throughput(tp, Model::flops_per_cell, Model::min_bytes_per_cell);

    nlohmann::json r;
    r["model"] = "heat3d";
    r["stencil"] = to_string(p.stencil);
    r["backend"] = to_string(o.backend);
    r["kernel"] = engine->kernel();
    r["precision"] = to_string(o.precision);
    r["n"] = p.nx;
    r["h"] = p.h;
    r["kappa"] = p.kappa;
    r["dt"] = p.dt;
    r["steps"] = o.steps;
    r["t_end"] = t_end;
    r["max_norm"] = s.max_abs;
    r["l2norm"] = s.l2;
    r["max_error"] = err;
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

template <class T>
nlohmann::json run_precision(const HeatRunOptions& o, std::ostream& out) {
    const HeatParams p = HeatParams::make(o.n, o.stencil, o.kappa, o.safety);
    switch (o.stencil) {
        case HeatStencil::p7: return run<T, HeatStencil::p7>(o, p, out);
        case HeatStencil::p19: return run<T, HeatStencil::p19>(o, p, out);
        case HeatStencil::p27: return run<T, HeatStencil::p27>(o, p, out);
    }
    throw Error("unknown heat stencil");
}

}  // namespace

nlohmann::json run_heat3d(const HeatRunOptions& o, std::ostream& out) {
    validate(o);
    return o.precision == Precision::fp32 ? run_precision<float>(o, out) : run_precision<double>(o, out);
}

}  // namespace strata
