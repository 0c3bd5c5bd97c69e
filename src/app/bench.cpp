// `strata bench`: every strategy of a model on one problem, timed after a warm-up as the median
// of several repeats (CUDA events on the GPU), each row with its error against the CPU reference
// on a smaller odd-sized grid run alongside.
#include "bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "run_io.hpp"
#include "strata/core/error.hpp"
#include "strata/core/field_ops.hpp"
#include "strata/engine.hpp"
#include "strata/io/snapshot.hpp"
#include "strata/problem.hpp"
#ifdef STRATA_HAVE_CUDA
#include "cuda/cuda_engines.hpp"
#endif

namespace strata::app {

void validate(const BenchOptions& o) {
    find_model(o.model);  // UsageError naming the models there are
    if (o.n < 0) throw UsageError("-n must be positive");
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

// Times every kernel x launch mode. `make(options)` builds an engine on the benchmark problem;
// `check(options)` returns that kernel's max relative error against the CPU reference.
template <class Make, class Check>
std::vector<Row> bench_kernels(const BenchOptions& o, std::string_view model, double cells, double copy_gbs,
                               Make make, Check check) {
    std::vector<Row> rows;
    // With --chunk, the kernels that take one (another kernel given by name is a usage error).
    const auto kernels = o.kernels.empty() ? kernel_names(o.backend, model, o.chunk > 0) : o.kernels;
    if (kernels.empty()) throw UsageError("--chunk: no " + std::string(model) + " kernel on this backend takes one");
    for (const auto& k : kernels) {
        // Depths apply to the temporal kernels; every other kernel advances one step per pass.
        const bool temporal = kernel_takes_depth(o.backend, model, k);
        const std::vector<int> depths = temporal && !o.depths.empty() ? o.depths : std::vector<int>{0};
        for (int depth : depths)
        for (bool graphs : o.graphs) {
            const EngineOptions eo{k, graphs, o.chunk, depth};
            Row row;
            KernelInfo info;
            {
                decltype(make(eo)) e;
                try {
                    e = make(eo);  // released before the check: only one big problem on the device
                } catch (const KernelRefused& refused) {
                    if (!o.kernels.empty()) throw;  // (asked for by name: the user hears why)
                    std::cerr << "strata bench: " << k << " left out: " << refused.what() << "\n";
                    break;
                }
                row.ms_per_step = median_ms_per_step(*e, o);
                info = e->kernel_info();
            }
            row.depth = info.depth;
            row.bytes_moved = info.bytes_per_cell_update;
            row.max_rel_err = check(eo);
            row.kernel = k;
            row.launch = o.backend == Backend::cuda ? (graphs ? "graph" : "stream") : "-";
            row.bytes_per_cell = info.min_bytes_per_cell;
            row.flops_per_cell = info.flops_per_cell;
            row.gcells = cells / (row.ms_per_step * 1e-3) * 1e-9;
            row.gbs = row.gcells * row.bytes_per_cell;
            row.gflops = row.gcells * row.flops_per_cell;
            row.pct_copy = copy_gbs > 0 ? 100 * row.gbs / copy_gbs : 0;
            rows.push_back(row);
        }
    }
    return rows;
}

// The benchmark problem: the model's stencil alone on its -n grid (8192^2 or 512^3 by default).
std::unique_ptr<Problem> bench_problem(const BenchOptions& o, const ModelInfo& m) {
    const int side = (o.n > 0 ? o.n : m.dims == 2 ? 8192 : 512) + m.n_offset;
    return m.box(o.params, side, side, m.dims == 3 ? side : 1);
}
// The check problem: an odd-sized grid that no tile divides.
std::unique_ptr<Problem> check_problem(const BenchOptions& o, const ModelInfo& m) {
    return m.dims == 2 ? m.box(o.params, 515, 301, 1) : m.box(o.params, 67, 45, 33);
}


constexpr int kCheckSteps = 10;

// The check's start: random values in each field's declared range, unless the model's own update
// takes those past the finite numbers within the check's steps (a 3D Gray-Scott file from u and v
// anywhere in [0, 1]: the error printed was then inf, inf against inf); then the model's own
// initial state, each field with noise of 1% of its largest value, so that the error stays a
// measurement. Decided in fp64, once, so that the table's header says which.
bool random_check_stays_finite(const Problem& check) {
    const State<double> start = random_state<double>(check, 3);
    auto e = make_engine<double>(check, Backend::omp, {}, &start);
    e->advance(kCheckSteps);
    for (const auto& [name, field] : e->state().fields)
        for (double v : field.data)
            if (!std::isfinite(v)) return false;
    return true;
}
template <class T>
State<T> check_state(const Problem& check, bool random) {
    if (random) return random_state<T>(check, 3);
    State<T> s = make_engine<T>(check, Backend::omp)->state();
    std::uint64_t seed = 3;
    for (auto& [name, field] : s.fields) {
        double largest = 0;
        for (T v : field.data) largest = std::max(largest, std::fabs(double(v)));
        HostField<T> noise(field.extent);
        fill_random(noise, seed++, -0.01 * (largest > 0 ? largest : 1), 0.01 * (largest > 0 ? largest : 1));
        for (std::size_t i = 0; i < field.data.size(); ++i)
            field.data[i] = T(compute_t<T>(field.data[i]) + compute_t<T>(noise.data[i]));
    }
    return s;
}

template <class T>
std::vector<Row> bench_precision(const BenchOptions& o, const Problem* problem, const Problem* check,
                                 bool random_check, double copy_gbs) {
    const ModelInfo& m = problem->model();
    const State<T> init = random_state<T>(*problem, 1), check_init = check_state<T>(*check, random_check);
    auto ref = make_engine<T>(*check, Backend::omp, {}, &check_init);
    ref->advance(kCheckSteps);
    const std::string field = m.fields[0].name;
    const HostField<T> ref_u = ref->field(field);
    return bench_kernels(
        o, m.name, double(problem->extent().cells()), copy_gbs,
        [&](const EngineOptions& eo) { return make_engine<T>(*problem, o.backend, eo, &init); },
        [&](const EngineOptions& eo) {
            auto c = make_engine<T>(*check, o.backend, eo, &check_init);
            c->advance(kCheckSteps);
            return max_relative_error(c->field(field), ref_u);
        });
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
    app::Snapshots snapshots(o.io, o.snapshot_every, o.model);  // as a run writes them
    EngineOptions eo{o.kernels.empty() ? "" : o.kernels.front(), o.graphs.front(), o.chunk,
                     o.depths.empty() ? 0 : o.depths.front()};
    const ModelInfo& m = find_model(o.model);
    const auto problem = bench_problem(o, m);
    const State<T> init = random_state<T>(*problem, 1);
    const SnapshotSpec spec = problem->snapshot_spec();
    eo.snapshot_buffers = snapshots.buffers(problem->extent().cells() * std::int64_t(sizeof(T)));
    eo.snapshot_field = spec.field;
    const auto engine = make_engine<T>(*problem, o.backend, eo, &init);
    auto snapshot = [&](std::int64_t step) {
        snapshots.submit(step, double(step), io::FrameSpec{"", spec.grid, m.dims, spec.lo, spec.hi},
                         [&] { return engine->snapshot(spec.field); });
    };
    const std::int64_t every = o.snapshot_every;
    engine->advance(every);  // warm-up: module load, graph capture, clocks
    snapshot(0);             // and the pinned buffers
    std::ostringstream warm_up;
    snapshots.finish(warm_up);
    const double waited_before = snapshots.waited_s();
    const double plain = steps_per_s(*engine, o.frames, every, [](std::int64_t) {});
    const auto t0 = std::chrono::steady_clock::now();
    const double with = steps_per_s(*engine, o.frames, every, snapshot);
    const auto t1 = std::chrono::steady_clock::now();
    std::ostringstream finished;
    const auto files = snapshots.finish(finished);
    const double drained =
        double(o.frames * every) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double loop_s = std::chrono::duration<double>(t1 - t0).count();
    const std::string buffers = o.backend == Backend::cuda ? std::to_string(eo.snapshot_buffers) + " pinned buffers"
                                                           : std::string("copies in host memory");
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%d frames, one every %lld steps, %d writer threads, %s, frames to %s\n"
                  "the host waited %.3f s for free buffers (the GPU runs on queued steps meanwhile)\n"
                  "no snapshots          : %10.1f steps/s\n"
                  "with snapshots        : %10.1f steps/s  (%.1f%% of no snapshots; time loop %.3f s)\n"
                  "with snapshots, drained: %9.1f steps/s  (%.1f%%, until the last frame is written)\n",
                  o.frames, static_cast<long long>(every), snapshots.threads(), buffers.c_str(), o.io.out_dir.c_str(),
                  snapshots.waited_s() - waited_before, plain, with, 100 * with / plain, loop_s, drained,
                  100 * drained / plain);
    out << buf;
    for (const auto& f : files) std::filesystem::remove(f);
}

}  // namespace

void run_bench(const BenchOptions& o, std::ostream& out) {
    validate(o);
    if (o.snapshot_every > 0) {
        if (o.precisions.size() != 1) throw UsageError("--snapshot-every takes one --precision");
        const int dims = find_model(o.model).dims;
        out << "snapshot overhead: " << o.model << " n=" << (o.n > 0 ? o.n : (dims == 2 ? 8192 : 512)) << ", "
            << to_string(o.precisions.front()) << ", backend " << to_string(o.backend) << '\n';
        with_precision(o.precisions.front(),
                       [&]<class T>(std::type_identity<T>) { bench_snapshots<T>(o, out); });
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
    const ModelInfo& m = find_model(o.model);
    const auto problem = bench_problem(o, m), check = check_problem(o, m);
    const Extent ce = check->extent();
    const std::string check_grid =
        std::to_string(ce.nx) + " x " + std::to_string(ce.ny) + (m.dims == 3 ? " x " + std::to_string(ce.nz) : "");
    char buf[512];
    out << problem->label() << ", ";
    if (o.steps > 0)
        out << o.steps << " steps";
    else
        out << kGraphPasses << " passes";
    out << " x " << o.repeats << " repeats (median), on " << device;
    if (copy_gbs > 0) {
        std::snprintf(buf, sizeof buf, ", measured copy bandwidth %.0f GB/s", copy_gbs);
        out << buf;
    }
    const bool random_check = random_check_stays_finite(*check);
    out << "\nmax rel err: against the CPU reference after 10 steps on a " << check_grid
        << (random_check
                ? " random field\n"
                : " grid, from the model's initial state with 1% noise (from random fields its update "
                  "leaves the finite numbers)\n")
        << "GB/s and %copy count the model's minimum bytes per cell update; B/upd is what the kernel "
           "moves\n\n";
    std::snprintf(buf, sizeof buf, "%-8s %5s %-5s %-6s %10s %10s %9s %7s %6s %9s %12s\n", "kernel", "depth", "prec",
                  "launch", "ms/step", "GCells/s", "GB/s", "%copy", "B/upd", "GFLOP/s", "max rel err");
    out << buf;
    nlohmann::json j;
    j["problem"] = problem->label();
    j["device"] = device;
    j["copy_gbs"] = copy_gbs;
    j["steps"] = o.steps;  // 0: one captured graph's worth per repeat
    j["repeats"] = o.repeats;
    j["rows"] = nlohmann::json::array();
    for (Precision prec : o.precisions) {
        const auto rows = with_precision(prec, [&]<class T>(std::type_identity<T>) {
            return bench_precision<T>(o, problem.get(), check.get(), random_check, copy_gbs);
        });
        for (const Row& r : rows) {
            char pct[16] = "      -";
            if (copy_gbs > 0) std::snprintf(pct, sizeof pct, "%6.1f%%", r.pct_copy);
            std::snprintf(buf, sizeof buf, "%-8s %5d %-5s %-6s %10.4f %10.2f %9.1f %7s %6.2f %9.1f %12.2e\n",
                          r.kernel.c_str(), r.depth, std::string(to_string(prec)).c_str(), r.launch.c_str(),
                          r.ms_per_step, r.gcells, r.gbs, pct, r.bytes_moved, r.gflops, r.max_rel_err);
            out << buf;
            out.flush();
            j["rows"].push_back(
                {{"kernel", r.kernel},
                 {"depth", r.depth},
                 {"bytes_moved_per_cell_update", r.bytes_moved},
                 {"precision", std::string(to_string(prec))},
                 {"arithmetic", std::string(to_string(is_half(prec) ? Precision::fp32 : prec))},
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
