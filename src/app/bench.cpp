// `strata bench`: every strategy of a model on one problem, timed after a warm-up as the median
// of several repeats (CUDA events on the GPU), each row with its error against the CPU reference
// on a smaller odd-sized grid run alongside.
#include "bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "strata/core/error.hpp"
#include "strata/core/field_ops.hpp"
#include "strata/engine.hpp"
#include "strata/io/snapshot.hpp"
#include "run_io.hpp"
#ifdef STRATA_HAVE_CUDA
#include "../cuda/cuda_engines.hpp"
#endif

namespace strata::app {

void validate(const BenchOptions& o) {
    if (o.model != "apf" && o.model != "heat3d" && o.model != "wave3d")
        throw UsageError("unknown model '" + o.model + "' (apf, heat3d or wave3d)");
    const int n_min = o.model == "apf" ? 26 : o.model == "wave3d" ? 9 : 3;
    if (o.n < 0 || (o.n > 0 && o.n < n_min)) throw UsageError("-n is too small for " + o.model);
    if (o.steps < 0) throw UsageError("--steps must be >= 1 (or 0: one captured graph's worth)");
    for (int d : o.depths)
        if (d < 1) throw UsageError("--depth must be >= 1");
    if (o.repeats < 1) throw UsageError("--repeats must be >= 1");
    if (o.snapshot_every < 0) throw UsageError("--snapshot-every must be >= 0");
    if (o.frames < 1) throw UsageError("--frames must be >= 1");
}

namespace {

struct Row {
    std::string kernel, precision, launch;
    int depth = 1;
    double ms_per_step = 0, gcells = 0, gbs = 0, pct_copy = 0, gflops = 0, max_rel_err = 0, bytes_moved = 0;
    int bytes_per_cell = 0, flops_per_cell = 0;
};

template <class E>
double median_ms_per_step(E& engine, const BenchOptions& o) {
    const int steps = o.steps > 0 ? o.steps : kGraphPasses * engine.kernel_info().depth;
    engine.advance(steps);  // warm-up: module load, graph capture, clocks
    engine.synchronize();
    std::vector<double> ms;
    for (int r = 0; r < o.repeats; ++r) ms.push_back(engine.timed_advance_ms(steps) / steps);
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

constexpr int kCheckSteps = 10;

// Times every kernel x launch mode. `make(options)` builds an engine on the benchmark problem;
// `check(options)` returns that kernel's max relative error against the CPU reference.
template <class Make, class Check>
std::vector<Row> bench_kernels(const BenchOptions& o, std::string_view model, double cells, int flops_per_cell,
                               int bytes_per_cell, double copy_gbs, Make make, Check check) {
    std::vector<Row> rows;
    // With --chunk, the kernels that take one (another kernel given by name is a usage error).
    const auto kernels = o.kernels.empty() ? kernel_names(o.backend, model, o.chunk > 0) : o.kernels;
    if (kernels.empty()) throw UsageError("--chunk: no " + std::string(model) + " kernel on this backend takes one");
    for (const auto& k : kernels) {
        // Depths apply to the temporal kernel; every other kernel advances one step per pass.
        const bool temporal = k == "temporal";
        const std::vector<int> depths = temporal && !o.depths.empty() ? o.depths : std::vector<int>{0};
        for (int depth : depths)
        for (bool graphs : o.graphs) {
            const EngineOptions eo{k, graphs, o.chunk, depth};
            Row row;
            {
                auto e = make(eo);  // released before the check: only one big problem on the device
                row.ms_per_step = median_ms_per_step(*e, o);
                const KernelInfo info = e->kernel_info();
                row.depth = info.depth;
                row.bytes_moved = info.bytes_per_cell_update;
            }
            row.max_rel_err = check(eo);
            row.kernel = k;
            row.launch = o.backend == Backend::cuda ? (graphs ? "graph" : "stream") : "-";
            row.bytes_per_cell = bytes_per_cell;
            row.flops_per_cell = flops_per_cell;
            row.gcells = cells / (row.ms_per_step * 1e-3) * 1e-9;
            row.gbs = row.gcells * bytes_per_cell;
            row.gflops = row.gcells * flops_per_cell;
            row.pct_copy = copy_gbs > 0 ? 100 * row.gbs / copy_gbs : 0;
            rows.push_back(row);
        }
    }
    return rows;
}

template <class T>
std::vector<Row> bench_apf(const BenchOptions& o, double copy_gbs) {
    const ApfParams p = ApfParams::for_mesh(o.n > 0 ? o.n : 8192);
    ApfFields<T> init{HostField<T>(p.extent()), HostField<T>(p.extent())};
    fill_random(init.e, 1, 0.0, 1.0);
    fill_random(init.r, 2, 0.0, 0.5);
    const ApfParams pc = ApfParams::for_mesh(514, 300);  // the check grid: 515 x 301 points
    ApfFields<T> check{HostField<T>(pc.extent()), HostField<T>(pc.extent())};
    fill_random(check.e, 3, 0.0, 1.0);
    fill_random(check.r, 4, 0.0, 0.5);
    auto ref = make_apf_engine<T>(Backend::omp, pc, &check);
    ref->advance(kCheckSteps);
    const HostField<T> ref_e = ref->fields().e;
    using Model = AlievPanfilov<T>;
    return bench_kernels(
        o, "apf", double(p.extent().cells()), Model::flops_per_cell, Model::min_bytes_per_cell, copy_gbs,
        [&](const EngineOptions& eo) { return make_apf_engine<T>(o.backend, p, &init, eo); },
        [&](const EngineOptions& eo) {
            auto c = make_apf_engine<T>(o.backend, pc, &check, eo);
            c->advance(kCheckSteps);
            return max_relative_error(c->fields().e, ref_e);
        });
}

template <class T, HeatStencil S>
std::vector<Row> bench_heat(const BenchOptions& o, double copy_gbs) {
    const HeatParams p = HeatParams::make(o.n > 0 ? o.n : 512, S);
    HostField<T> init(p.extent());
    fill_random(init, 5, 0.0, 1.0);
    zero_ghosts(init);
    const HeatParams pc = HeatParams::make_box(67, 45, 33, S);
    HostField<T> check(pc.extent());
    fill_random(check, 6, 0.0, 1.0);
    zero_ghosts(check);
    auto ref = make_heat_engine<T>(Backend::omp, pc, &check);
    ref->advance(kCheckSteps);
    const HostField<T> ref_u = ref->field();
    using Model = Heat3D<T, S>;
    return bench_kernels(
        o, "heat3d", double(p.extent().cells()), Model::flops_per_cell, Model::min_bytes_per_cell, copy_gbs,
        [&](const EngineOptions& eo) { return make_heat_engine<T>(o.backend, p, &init, eo); },
        [&](const EngineOptions& eo) {
            auto c = make_heat_engine<T>(o.backend, pc, &check, eo);
            c->advance(kCheckSteps);
            return max_relative_error(c->field(), ref_u);
        });
}

// The wave benchmarks' problem: a constant-velocity box with its sponge, no sources or
// receivers, so the rows time the stencil alone; and a random p^n and p^{n-1} (ghosts at 0).
template <class T>
WaveProblem<T> wave_bench_problem(int nx, int ny, int nz) {
    const std::vector<float> v(std::size_t(nx) * ny * nz, 1500.0f);
    WaveProblem<T> pr;
    pr.params = wave_params(nx, ny, nz, 1.0, v, 0.5, 0, std::min(16, std::min({nx, ny, nz}) / 8));
    pr.vdt2 = wave_vdt2<T>(pr.params, v);
    return pr;
}
template <class T>
WaveState<T> wave_random_state(const Extent& e, std::uint64_t seed) {
    WaveState<T> s = WaveState<T>::at_rest(e);
    fill_random(s.p, seed, -1.0, 1.0);
    fill_random(s.prev, seed + 1, -1.0, 1.0);
    zero_ghosts(s.p);
    zero_ghosts(s.prev);
    return s;
}

template <class T>
std::vector<Row> bench_wave(const BenchOptions& o, double copy_gbs) {
    auto problem = wave_bench_problem<T>;
    auto random_state = wave_random_state<T>;
    const int n = o.n > 0 ? o.n : 512;
    const WaveProblem<T> p = problem(n, n, n);
    const WaveState<T> init = random_state(p.params.extent3(), 7);
    const WaveProblem<T> pc = problem(67, 45, 33);
    const WaveState<T> check = random_state(pc.params.extent3(), 8);
    auto ref = make_wave_engine<T>(Backend::omp, pc, &check);
    ref->advance(kCheckSteps);
    const HostField<T> ref_p = ref->state().p;
    using Model = Wave3D<T>;
    return bench_kernels(
        o, "wave3d", double(p.params.extent3().cells()), Model::flops_per_cell, Model::min_bytes_per_cell, copy_gbs,
        [&](const EngineOptions& eo) { return make_wave_engine<T>(o.backend, p, &init, eo); },
        [&](const EngineOptions& eo) {
            auto c = make_wave_engine<T>(o.backend, pc, &check, eo);
            c->advance(kCheckSteps);
            return max_relative_error(c->state().p, ref_p);
        });
}

template <class T>
std::vector<Row> bench_precision(const BenchOptions& o, double copy_gbs) {
    if (o.model == "apf") return bench_apf<T>(o, copy_gbs);
    if (o.model == "wave3d") return bench_wave<T>(o, copy_gbs);
    switch (o.stencil) {
        case HeatStencil::p7: return bench_heat<T, HeatStencil::p7>(o, copy_gbs);
        case HeatStencil::p19: return bench_heat<T, HeatStencil::p19>(o, copy_gbs);
        case HeatStencil::p27: return bench_heat<T, HeatStencil::p27>(o, copy_gbs);
    }
    throw Error("unknown stencil");
}

// The snapshot overhead: the same engine runs `frames` x every steps in chunks of `every`, first
// without snapshots, then with one after each chunk (written by the writer pool while the
// engine goes on). Wall clock around synchronized runs, so the writer's effect on the host and
// on the GPU is all counted.
template <class Engine>
double steps_per_s(Engine& engine, int frames, std::int64_t every,
                   const std::function<void(std::int64_t)>& after_chunk) {
    engine.synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    for (int f = 1; f <= frames; ++f) {
        engine.advance(every);
        after_chunk(f * every);
    }
    engine.synchronize();
    return double(frames * every) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class T>
void bench_snapshots(const BenchOptions& o, std::ostream& out) {
    IoOptions io_options;
    io_options.out_dir = o.out_dir;
    io_options.writer_threads = o.writer_threads;
    app::Snapshots snapshots(io_options, o.snapshot_every, o.model);  // as a run writes them
    EngineOptions eo{o.kernels.empty() ? "" : o.kernels.front(), o.graphs.front(), o.chunk,
                     o.depths.empty() ? 0 : o.depths.front()};
    auto buffers_for = [&](const Extent& e) { eo.snapshot_buffers = snapshots.buffers(e.cells() * std::int64_t(sizeof(T))); };
    std::unique_ptr<ApfEngine<T>> apf;
    std::unique_ptr<HeatEngine<T>> heat;
    std::unique_ptr<WaveEngine<T>> wave;
    io::FrameSpec spec;
    if (o.model == "apf") {
        const ApfParams p = ApfParams::for_mesh(o.n > 0 ? o.n : 8192);
        ApfFields<T> init{HostField<T>(p.extent()), HostField<T>(p.extent())};
        fill_random(init.e, 1, 0.0, 1.0);
        fill_random(init.r, 2, 0.0, 0.5);
        buffers_for(p.extent());
        apf = make_apf_engine<T>(o.backend, p, &init, eo);
        spec = {"", {p.n + 1, p.m + 1, 1, p.dx, {0, 0, 0}, "E"}, 2, 0.0, 1.0};
    } else if (o.model == "wave3d") {
        const int n = o.n > 0 ? o.n : 512;
        const WaveProblem<T> p = wave_bench_problem<T>(n, n, n);
        const WaveState<T> init = wave_random_state<T>(p.params.extent3(), 7);
        buffers_for(p.params.extent3());
        wave = make_wave_engine<T>(o.backend, p, &init, eo);
        const double h = p.params.h;
        spec = {"", {n, n, n, h, {0, 0, 0}, "p"}, 3, -1.0, 1.0};
    } else {
        const HeatParams p = HeatParams::make(o.n > 0 ? o.n : 512, o.stencil);
        HostField<T> init(p.extent());
        fill_random(init, 5, 0.0, 1.0);
        zero_ghosts(init);
        buffers_for(p.extent());
        heat = make_heat_engine<T>(o.backend, p, &init, eo);
        spec = {"", {p.nx, p.ny, p.nz, p.h, {p.h, p.h, p.h}, "u"}, 3, 0.0, 1.0};
    }
    auto snapshot = [&](std::int64_t step) {
        snapshots.submit(step, double(step), spec,
                         [&] { return apf ? apf->snapshot() : heat ? heat->snapshot() : wave->snapshot(); });
    };
    auto measure = [&](auto& engine) {
        const std::int64_t every = o.snapshot_every;
        engine.advance(every);  // warm-up: module load, graph capture, clocks
        snapshot(0);            // and the pinned buffers
        std::ostringstream warm_up;
        snapshots.finish(warm_up);
        const double waited_before = snapshots.waited_s();
        const double plain = steps_per_s(engine, o.frames, every, [](std::int64_t) {});
        const auto t0 = std::chrono::steady_clock::now();
        const double with = steps_per_s(engine, o.frames, every, snapshot);
        const auto t1 = std::chrono::steady_clock::now();
        std::ostringstream finished;
        const auto files = snapshots.finish(finished);
        const double drained = double(o.frames * every) /
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double loop_s = std::chrono::duration<double>(t1 - t0).count();
        const std::string buffers = o.backend == Backend::cuda
                                        ? std::to_string(eo.snapshot_buffers) + " pinned buffers"
                                        : std::string("copies in host memory");
        char buf[512];
        std::snprintf(buf, sizeof buf,
                      "%d frames, one every %lld steps, %d writer threads, %s, frames to %s\n"
                      "the host waited %.3f s for free buffers (the GPU runs on queued steps meanwhile)\n"
                      "no snapshots          : %10.1f steps/s\n"
                      "with snapshots        : %10.1f steps/s  (%.1f%% of no snapshots; time loop %.3f s)\n"
                      "with snapshots, drained: %9.1f steps/s  (%.1f%%, until the last frame is written)\n",
                      o.frames, static_cast<long long>(every), snapshots.threads(), buffers.c_str(),
                      o.out_dir.c_str(), snapshots.waited_s() - waited_before, plain, with,
                      100 * with / plain, loop_s, drained, 100 * drained / plain);
        out << buf;
        for (const auto& f : files) std::filesystem::remove(f);
    };
    if (apf) measure(*apf);
    else if (heat) measure(*heat);
    else measure(*wave);
}

}  // namespace

void run_bench(const BenchOptions& o, std::ostream& out) {
    validate(o);
    if (o.snapshot_every > 0) {
        if (o.precisions.size() != 1) throw UsageError("--snapshot-every takes one --precision");
        out << "snapshot overhead: " << o.model << " n=" << (o.n > 0 ? o.n : (o.model == "apf" ? 8192 : 512)) << ", "
            << to_string(o.precisions.front()) << ", backend " << to_string(o.backend) << '\n';
        if (o.precisions.front() == Precision::fp32) bench_snapshots<float>(o, out);
        else bench_snapshots<double>(o, out);
        return;
    }
    std::ofstream json_file;
    if (!o.json_path.empty()) {
        json_file.open(o.json_path);
        if (!json_file) throw UsageError("cannot open '" + o.json_path + "' for the JSON report");
    }
    double copy_gbs = 0;
    std::string device = "host CPU";
    if (o.backend == Backend::cuda) {
#ifdef STRATA_HAVE_CUDA
        cuda::require_device();
        const cuda::ProbeResult probe = cuda::cached_or_run_probe(out);
        copy_gbs = probe.copy_gbs;
        device = probe.device_name;
#else
        throw Error("the cuda backend is not available: this strata was built without CUDA");
#endif
    }
    const int n = o.n > 0 ? o.n : (o.model == "apf" ? 8192 : 512);
    char buf[512];
    if (o.model == "apf")
        std::snprintf(buf, sizeof buf, "apf n=%d (%d x %d points)", n, n + 1, n + 1);
    else if (o.model == "wave3d")
        std::snprintf(buf, sizeof buf, "wave3d 8th order %d^3", n);
    else
        std::snprintf(buf, sizeof buf, "heat3d %s %d^3", std::string(to_string(o.stencil)).c_str(), n);
    const std::string problem = buf;
    out << problem << ", ";
    if (o.steps > 0)
        out << o.steps << " steps";
    else
        out << kGraphPasses << " passes";
    out << " x " << o.repeats << " repeats (median), on " << device;
    if (copy_gbs > 0) {
        std::snprintf(buf, sizeof buf, ", measured copy bandwidth %.0f GB/s", copy_gbs);
        out << buf;
    }
    out << "\nmax rel err: against the CPU reference after 10 steps on a "
        << (o.model == "apf" ? "515 x 301" : "67 x 45 x 33") << " random field\n"
        << "GB/s and %copy count the model's minimum bytes per cell update; B/upd is what the kernel moves\n\n";
    std::snprintf(buf, sizeof buf, "%-8s %5s %-5s %-6s %10s %10s %9s %7s %6s %9s %12s\n", "kernel", "depth", "prec",
                  "launch", "ms/step", "GCells/s", "GB/s", "%copy", "B/upd", "GFLOP/s", "max rel err");
    out << buf;
    nlohmann::json j;
    j["problem"] = problem;
    j["device"] = device;
    j["copy_gbs"] = copy_gbs;
    j["steps"] = o.steps;  // 0: one captured graph's worth per repeat
    j["repeats"] = o.repeats;
    j["rows"] = nlohmann::json::array();
    for (Precision prec : o.precisions) {
        const auto rows = prec == Precision::fp32 ? bench_precision<float>(o, copy_gbs)
                                                  : bench_precision<double>(o, copy_gbs);
        for (const Row& r : rows) {
            char pct[16] = "      -";
            if (copy_gbs > 0) std::snprintf(pct, sizeof pct, "%6.1f%%", r.pct_copy);
            std::snprintf(buf, sizeof buf, "%-8s %5d %-5s %-6s %10.4f %10.2f %9.1f %7s %6.2f %9.1f %12.2e\n",
                          r.kernel.c_str(), r.depth, std::string(to_string(prec)).c_str(), r.launch.c_str(),
                          r.ms_per_step, r.gcells, r.gbs, pct, r.bytes_moved, r.gflops, r.max_rel_err);
            out << buf;
            out.flush();
            j["rows"].push_back({{"kernel", r.kernel},
                                 {"depth", r.depth},
                                 {"bytes_moved_per_cell_update", r.bytes_moved},
                                 {"precision", to_string(prec)},
                                 {"launch", r.launch},
                                 {"ms_per_step", r.ms_per_step},
                                 {"gcells_per_s", r.gcells},
                                 {"effective_gbs", r.gbs},
                                 {"pct_copy_bandwidth", r.pct_copy},
                                 {"gflops", r.gflops},
                                 {"bytes_per_cell", r.bytes_per_cell},
                                 {"flops_per_cell", r.flops_per_cell},
                                 {"max_rel_err", r.max_rel_err}});
        }
    }
    if (json_file.is_open()) json_file << j.dump(2) << '\n';
}

}  // namespace strata::app
