// `strata run wave3d`: acoustic waves from Ricker point sources, recorded by receivers, with a
// sponge on every face; the traces are written as a binary array, a JSON header and a PNG, next to
// the snapshot frames of p, in one --out directory. Checkpoints hold p, p_prev, the step and the
// traces recorded so far, so a restarted run writes the traces of an uninterrupted one.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <optional>
#include <ostream>
#include <sstream>
#include <utility>

#include "report.hpp"
#include "run_io.hpp"
#include "strata/core/error.hpp"
#include "strata/engine.hpp"
#include "strata/io/checkpoint.hpp"
#include "strata/io/png.hpp"
#include "strata/run.hpp"

namespace strata {

namespace {

int side(int given, int n) { return given > 0 ? given : n; }

int sponge_width(const WaveRunOptions& o) {
    const int smallest = std::min({side(o.nx, o.n), side(o.ny, o.n), side(o.nz, o.n)});
    return o.sponge >= 0 ? o.sponge : std::min(16, smallest / 8);
}

// Comma-separated numbers: exactly `min_count` or `max_count` of them.
std::vector<double> numbers(const std::string& s, std::size_t min_count, std::size_t max_count,
                            const std::string& what) {
    std::vector<double> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');) {
        std::size_t used = 0;
        double v = 0;
        try {
            v = std::stod(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size() || !std::isfinite(v)) throw UsageError("bad " + what + " '" + s + "'");
        out.push_back(v);
    }
    if (out.size() != min_count && out.size() != max_count) throw UsageError("bad " + what + " '" + s + "'");
    return out;
}

struct Placed {
    std::vector<GridSource> sources;
    std::vector<GridPoint> receivers;
    double min_f0 = 0, max_f0 = 0;
};

Placed place(const WaveRunOptions& o, const WaveParams& p, const std::vector<float>& velocity,
             std::ostream& out) {
    Placed pl;
    // By default a wavelength of ~10 points at the Ricker's highest significant frequency.
    const double default_f0 = p.v_min / (2.5 * 10 * p.h);
    std::vector<std::string> specs = o.sources;
    if (specs.empty()) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "%.17g,%.17g,%.17g", p.length(0) / 2, p.length(1) / 2, p.length(2) / 2);
        specs.push_back(buf);
    }
    for (const auto& s : specs) {
        const auto v = numbers(s, 3, 4, "--source (expected x,y,z or x,y,z,f0)");
        const double f0 = v.size() == 4 ? v[3] : default_f0;
        if (!(f0 > 0)) throw UsageError("the source frequency in '" + s + "' must be positive");
        GridSource src;
        src.at = wave_grid_point(p, v[0], v[1], v[2], "source");
        src.f0 = f0;
        const double vel = velocity[(std::size_t(src.at.k) * p.ny + src.at.j) * p.nx + src.at.i];
        src.scale = (vel * p.dt) * (vel * p.dt) / (p.h * p.h * p.h);
        pl.sources.push_back(src);
        // The Ricker spectrum is negligible above ~2.5 f0: its shortest wavelength needs 4+ points.
        const double points = p.v_min / (2.5 * f0 * p.h);
        if (points < 4) {
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "warning: source f0 = %g Hz is too high for this grid: %.1f points per shortest "
                          "wavelength (want >= 4; f0 <= %g)\n",
                          f0, points, p.v_min / (10 * p.h));
            out << buf;
        }
    }
    if (!o.receivers_file.empty()) {
        std::ifstream f(o.receivers_file);
        if (!f) throw UsageError("cannot read the receivers file '" + o.receivers_file + "'");
        for (std::string line; std::getline(f, line);) {
            if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
            const auto v = numbers(line, 3, 3, "receiver line in " + o.receivers_file + " (expected x,y,z)");
            pl.receivers.push_back(wave_grid_point(p, v[0], v[1], v[2], "receiver"));
        }
    }
    if (!o.receiver_line.empty()) {
        const auto v = numbers(o.receiver_line, 7, 7, "--receiver-line (expected x0,y0,z0,x1,y1,z1,count)");
        const int count = int(v[6]);
        if (count < 1 || double(count) != v[6]) throw UsageError("the receiver count must be a positive integer");
        for (int r = 0; r < count; ++r) {
            const double t = count == 1 ? 0 : double(r) / (count - 1);
            pl.receivers.push_back(wave_grid_point(p, v[0] + t * (v[3] - v[0]), v[1] + t * (v[4] - v[1]),
                                                   v[2] + t * (v[5] - v[2]), "receiver"));
        }
    }
    return pl;
}

// What changes a run's result, for the checkpoint's header, so that restarting with other flags is
// an error: the grid spacing, dt, the sponge, and the velocity model, sources and receivers as
// hashes (their top 53 bits, exact in a double) next to their counts.
std::vector<std::pair<std::string, double>> result_params(const WaveParams& p,
                                                          const std::vector<float>& velocity,
                                                          const Placed& pl) {
    auto hash = [](const auto& values) {
        return double(io::fnv1a64(values.data(), values.size() * sizeof(values[0])) >> 11);
    };
    std::vector<double> sources, receivers;
    for (const GridSource& s : pl.sources)
        sources.insert(sources.end(), {double(s.at.i), double(s.at.j), double(s.at.k), s.f0, s.scale});
    for (const GridPoint& r : pl.receivers)
        receivers.insert(receivers.end(), {double(r.i), double(r.j), double(r.k)});
    return {{"h", p.h},
            {"dt", p.dt},
            {"sponge", double(p.sponge)},
            {"velocity_hash", hash(velocity)},
            {"sources", double(pl.sources.size())},
            {"source_hash", hash(sources)},
            {"receivers", double(pl.receivers.size())},
            {"receiver_hash", hash(receivers)}};
}

// The pictures' range: --range, or +-the peak of a unit source's direct wave 10 cells away,
// 1 / (4 pi 10 h) (in 3D p = ricker(t - r / v) / (4 pi r), whatever v): the wavefield beyond the
// sources' neighbourhood shows, and every frame uses the same colours.
std::pair<double, double> picture_range(const WaveRunOptions& o, const WaveParams& p) {
    if (!o.range.empty()) return {o.range[0], o.range[1]};
    const double peak = 1 / (4 * std::numbers::pi * 10 * p.h);
    return {-peak, peak};
}

// traces.bin (float32, steps x receivers, row-major), traces.json (its header) and
// seismogram.png (a receiver per column, time downwards, viridis over +-max|trace|).
template <class T>
std::vector<std::string> write_traces(const WaveRunOptions& o, const WaveParams& p, const Placed& pl,
                                      const std::vector<T>& traces) {
    namespace fs = std::filesystem;
    const std::string out_dir = o.io.dir();
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (!fs::is_directory(out_dir)) throw UsageError("cannot create the output directory '" + out_dir + "'");
    const int nr = int(pl.receivers.size());
    const std::int64_t rows = std::int64_t(traces.size()) / nr;
    const std::vector<float> f32(traces.begin(), traces.end());
    const fs::path dir(out_dir);
    const std::string bin = (dir / "traces.bin").string(), json = (dir / "traces.json").string(),
                      png = (dir / "seismogram.png").string();
    {
        std::ofstream f(bin, std::ios::binary);
        f.write(reinterpret_cast<const char*>(f32.data()), std::streamsize(f32.size() * sizeof(float)));
        if (!f) throw Error("failed writing '" + bin + "'");
    }
    nlohmann::json h;
    h["file"] = "traces.bin";
    h["dtype"] = "float32";
    h["layout"] = "row-major [steps][receivers]: row n is p at time (n + 1) * dt";
    h["steps"] = rows;
    h["receivers"] = nr;
    h["dt"] = p.dt;
    h["h"] = p.h;
    h["positions"] = nlohmann::json::array();
    for (const GridPoint& r : pl.receivers) h["positions"].push_back({r.i * p.h, r.j * p.h, r.k * p.h});
    {
        std::ofstream f(json);
        f << h.dump(2) << '\n';
        if (!f) throw Error("failed writing '" + json + "'");
    }
    double peak = 0;
    for (float v : f32) peak = std::max(peak, double(std::fabs(v)));
    io::write_png(png, io::colormap(f32.data(), nr, int(rows), -peak, peak));
    return {bin, json, png};
}

template <class T>
nlohmann::json run(const WaveRunOptions& o, std::ostream& out) {
    std::ofstream json_file;
    if (!o.json_path.empty()) {
        json_file.open(o.json_path);
        if (!json_file) throw UsageError("cannot open '" + o.json_path + "' for the JSON report");
    }
    const int nx = side(o.nx, o.n), ny = side(o.ny, o.n), nz = side(o.nz, o.n);
    const std::vector<float> velocity = wave_velocity(o.velocity, o.velocity_file, nx, ny, nz);
    WaveProblem<T> problem;
    problem.params = wave_params(nx, ny, nz, o.extent, velocity, o.safety, o.dt, sponge_width(o));
    const WaveParams& p = problem.params;
    const Placed pl = place(o, p, velocity, out);
    problem.vdt2 = wave_vdt2<T>(p, velocity);
    problem.sources = pl.sources;
    problem.receivers = pl.receivers;
    problem.record_steps = pl.receivers.empty() ? 0 : o.steps;
    const auto params = result_params(p, velocity, pl);
    const Extent e = p.extent3();

    const std::optional<io::Checkpoint> restart = app::open_restart(o.io, "wave3d", o.precision, e, params, o.steps);
    const std::int64_t first = restart ? restart->header.step : 0;
    app::Snapshots snapshots(o.io, o.io.snapshot_every, "wave3d");
    const EngineOptions eo{o.kernel, o.graphs, o.chunk, o.depth,
                           snapshots.buffers(e.cells() * std::int64_t(sizeof(T)))};
    std::optional<WaveState<T>> init;  // from the checkpoint: ghosts 0, p = 0 beyond the box
    if (restart)
        init = WaveState<T>{restart->field<T>(0), restart->field<T>(1), first, restart->array<T>("traces")};
    const auto engine = make_wave_engine<T>(o.backend, problem, init ? &*init : nullptr, eo);
    char buf[512];
    out << "3D acoustic waves (wave3d), 8th-order Laplacian: backend " << to_string(o.backend) << ", kernel "
        << engine->kernel() << ", precision " << to_string(o.precision) << '\n';
    std::snprintf(
        buf, sizeof buf,
        "grid %d x %d x %d, h = %g, v in [%g, %g], dt = %g (CFL bound %g), sponge %d cells, %lld steps\n"
        "%zu source(s), %zu receiver(s)\n",
        nx, ny, nz, p.h, p.v_min, p.v_max, p.dt, WaveParams::dt_max(p.h, p.v_max), p.sponge,
        static_cast<long long>(o.steps), pl.sources.size(), pl.receivers.size());
    out << buf;
    if (restart) out << "restarted from '" << o.io.restart_path << "' at step " << first << '\n';
    out << '\n';
    out.flush();

    std::vector<std::string> checkpoints;
    io::CheckpointHeader h{"wave3d", o.precision, nx, ny, nz, e.ghost, 3, 0, 0, params};
    auto checkpoint = [&](std::int64_t step) {
        const WaveState<T> st = engine->state();
        h.step = step;
        h.t = double(step) * p.dt;
        io::write_checkpoint<T>(o.io.checkpoint_path, h, {{"p", &st.p}, {"prev", &st.prev}},
                                {{"traces", &st.traces}});
        if (checkpoints.empty()) checkpoints.push_back(o.io.checkpoint_path);
    };
    const auto [lo, hi] = picture_range(o, p);
    const io::VtiGrid grid{nx, ny, nz, p.h, {0, 0, 0}, "p"};
    std::vector<app::Periodic> hooks{{o.io.snapshot_every, false,
                                      [&](std::int64_t step) {
                                          snapshots.submit(step, double(step) * p.dt,
                                                           io::FrameSpec{"", grid, 3, lo, hi},
                                                           [&] { return engine->snapshot(); });
                                      }},
                                     {o.io.checkpoint_every, true, checkpoint}};
    app::Progress progress(out, o.io.progress, first, o.steps, p.dt, double(e.cells()));
    const auto t0 = std::chrono::steady_clock::now();
    const double excluded_s = app::drive(*engine, first, o.steps, hooks, progress);
    engine->synchronize();
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - excluded_s;
    if (!o.io.checkpoint_path.empty() && (o.io.checkpoint_every == 0 || o.steps % o.io.checkpoint_every != 0))
        checkpoint(o.steps);
    const std::vector<std::string> snapshot_files = snapshots.finish(out, wall_s + excluded_s);
    const WaveStats s = wave_stats(problem.vdt2, engine->state());
    std::snprintf(buf, sizeof buf, "End at time: %g, step %lld\nMax |p|: %.6e, energy: %.6e\n\n",
                  double(o.steps) * p.dt, static_cast<long long>(o.steps), s.max_abs, s.energy);
    out << buf;
    using Model = Wave3D<T>;
    const auto tp =
        app::throughput(wall_s, o.steps - first, e.cells(), Model::flops_per_cell, Model::min_bytes_per_cell);
    out << app::format_throughput(tp, Model::flops_per_cell, Model::min_bytes_per_cell);

    nlohmann::json r;
    r["model"] = "wave3d";
    r["backend"] = to_string(o.backend);
    r["kernel"] = engine->kernel();
    r["precision"] = to_string(o.precision);
    r["nx"] = nx, r["ny"] = ny, r["nz"] = nz;
    r["h"] = p.h;
    r["dt"] = p.dt;
    r["dt_max"] = WaveParams::dt_max(p.h, p.v_max);
    r["sponge"] = p.sponge;
    r["steps"] = o.steps;
    r["t_end"] = double(o.steps) * p.dt;
    r["max_abs"] = s.max_abs;
    r["energy"] = s.energy;
    r["picture_range"] = {lo, hi};
    app::add_throughput(r, tp, Model::flops_per_cell, Model::min_bytes_per_cell);
    app::add_roofline(out, r, o.backend == Backend::cuda, tp.effective_gbs);
    app::add_io(r, snapshot_files, snapshots.waited_s(), checkpoints, o.io,
                restart ? std::optional(first) : std::nullopt);
    r["files"] = nlohmann::json::array();
    if (!pl.receivers.empty()) {
        for (const auto& f : write_traces(o, p, pl, engine->traces())) r["files"].push_back(f);
        out << "Traces written: ";
        for (const auto& f : r["files"]) out << f.get<std::string>() << ' ';
        out << '\n';
    } else {
        out << "No receivers (--receivers or --receiver-line): no traces written\n";
    }
    if (json_file.is_open()) {
        json_file << r.dump(2) << '\n';
        if (!json_file) throw Error("failed writing the JSON report to '" + o.json_path + "'");
    }
    return r;
}

}  // namespace

void validate(const WaveRunOptions& o) {
    const int nx = side(o.nx, o.n), ny = side(o.ny, o.n), nz = side(o.nz, o.n);
    const int smallest = std::min({nx, ny, nz});
    if (smallest < 9) throw UsageError("every side needs at least 9 points for the radius-4 stencil");
    if (o.steps < 0) throw UsageError("--steps must be >= 0 (got " + std::to_string(o.steps) + ")");
    if (!(o.extent > 0)) throw UsageError("--extent must be positive");
    if (!(o.safety > 0 && o.safety <= 1))
        throw UsageError("--safety must be in (0, 1]: it is the fraction of the CFL bound used as dt");
    if (o.dt < 0) throw UsageError("--dt must be positive");
    const int w = sponge_width(o);
    if (2 * w >= smallest - 2)
        throw UsageError("the grid (smallest side " + std::to_string(smallest) + ") is too small for a sponge of " +
                         std::to_string(w) + " cells on each face");
    if (!o.range.empty() && (o.range.size() != 2 || !(o.range[0] < o.range[1])))
        throw UsageError("--range needs two values LO HI with LO < HI");
    validate(o.io);
}

nlohmann::json run_wave3d(const WaveRunOptions& o, std::ostream& out) {
    validate(o);
    return o.precision == Precision::fp32 ? run<float>(o, out) : run<double>(o, out);
}

}  // namespace strata
