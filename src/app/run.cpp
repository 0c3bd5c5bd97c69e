// `strata run MODEL`: the one run driver, for every model. Options -> problem -> engine -> the
// time loop with its periodic hooks (the model's, snapshots, checkpoints, progress) -> the
// model's report, the throughput figures and the files written, as text and JSON at once.
#include "strata/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "ranks/decomposed.hpp"
#include "ranks/mpi.hpp"
#include "report.hpp"
#include "run_io.hpp"
#include "strata/core/error.hpp"
#include "strata/core/interrupt.hpp"
#include "strata/core/memory.hpp"
#include "strata/engine.hpp"
#include "strata/report.hpp"
#include "tune/tune_command.hpp"

namespace strata {
namespace {

// The process grid of the run: the model's own (apf's -x -y), --decomp, or slabs over the ranks.
Decomposition decomposition(const RunOptions& o, const Problem& problem) {
    const int dims = problem.model().dims, ranks = dist::size();
    std::optional<Decomposition> d = problem.decomposition();
    if (!o.decomp.empty()) {
        Decomposition given = parse_decomposition(o.decomp, dims);
        if (d && !std::equal(d->parts, d->parts + 3, given.parts))
            throw UsageError("--decomp " + given.text(dims) + " and the model's own process grid " + d->text(dims) +
                             " differ: give one");
        if (d) given.exchange = d->exchange;
        d = given;
    }
    if (!d) d = default_decomposition(dims, ranks);
    d->halos = o.halos == "nccl" ? Decomposition::Halos::nccl
               : o.halos == "mpi" ? Decomposition::Halos::mpi
                                  : Decomposition::Halos::automatic;
    d->overlap = o.overlap;
    if (d->ranks() != ranks)
        throw UsageError("the process grid " + d->text(dims) + " has " + std::to_string(d->ranks()) + " parts but " +
                         (ranks == 1 ? "this run is one process: launch it with mpirun -np " + std::to_string(d->ranks())
                                     : "mpirun started " + std::to_string(ranks) + " ranks: they must be equal"));
    return *d;
}

// fp16's range at the end of a run (bf16 has fp32's): each state field's largest magnitude, the
// share of its nonzero values below fp16's normal range (subnormal: fewer significant bits, then 0
// below 6e-8) and the values that overflowed (beyond 65504: infinite). Each rank counts its own
// part; a line a field, and a warning where a field has lost bits.
template <class T>
void report_fp16_range(Report& r, TypedEngine<T>& engine, const ModelInfo& model) {
    if constexpr (std::is_same_v<T, f16>) {
        constexpr double normal = 6.103515625e-05;  // 2^-14
        for (const FieldDecl& f : model.fields) {
            if (!holds_state(f.role)) continue;
            const PartField<T> part = engine.part_field(f.name);
            double counts[3] = {0, 0, 0}, largest = 0;  // nonzero, subnormal, not finite
            for (T v : part.values) {
                const double x = std::fabs(double(float(v)));
                if (!std::isfinite(x)) {
                    counts[2] += 1;
                } else if (x > 0) {
                    counts[0] += 1;
                    counts[1] += x < normal;
                    largest = std::max(largest, x);
                }
            }
            dist::allreduce_sum(counts, 3);
            dist::allreduce_max(&largest, 1);
            const double share = counts[0] > 0 ? 100 * counts[1] / counts[0] : 0;
            const std::string name(f.name);
            std::string label = "fp16 range of " + name;
            label.resize(std::max<std::size_t>(label.size(), 28), ' ');
            r.line(label + ": max |" + name +
                       "| %.3g, %.2f%% of its nonzero values subnormal (below 6.1e-05), %.0f not finite",
                   {{"fp16_max_" + name, largest},
                    {"fp16_subnormal_percent_" + name, share},
                    {"fp16_not_finite_" + name, counts[2]}});
            // Subnormal values far below the field's largest cost nothing: their absolute error (3e-8)
            // is under the largest values' own rounding. They do where the largest values sit near
            // the bottom of the range: below 16 x 6.1e-5 the subnormals' error passes 1/16 of theirs.
            char max_text[32];
            std::snprintf(max_text, sizeof max_text, "%.3g", largest);
            if (counts[2] > 0)
                r.text("  warning: " + name +
                       " overflowed fp16's range (beyond 65504: infinite); bf16 has fp32's "
                       "range (docs/precision.md)\n");
            else if (largest > 0 && largest < 16 * normal)
                r.text(
                    "  warning: " + name + "'s values are small for fp16 (max |" + name + "| " + max_text +
                    "): below 6.1e-05 they keep fewer bits than fp16's 11; a larger --state-scale (a model "
                    "linear in its state) or bf16, which has fp32's range, keeps them (docs/precision.md)\n");
        }
    }
}

// The state scale (Problem::state_scale): where an fp16 run's values sit, or the scale asked for.
void report_state_scale(Report& r, const Problem& problem, Precision precision) {
    const double s = problem.state_scale();
    r.value("state_scale", s);
    if (s == 1 && precision != Precision::fp16) return;
    const ModelInfo& m = problem.model();
    if (s == 1) {
        r.text(m.linear ? "state scale: 1 (the state fields are stored as they are)\n"
                        : "state scale: 1 (" + m.name +
                              "'s update is not linear in its state: its values are stored as they are)\n");
        return;
    }
    int k = 0;
    std::frexp(s, &k);
    char buf[256];
    std::snprintf(
        buf, sizeof buf,
        "state scale: 2^%d (the state fields are stored times %.6g, so that their values sit in fp16's "
        "range; every figure, trace and snapshot is the model's)\n",
        k - 1, s);
    r.text(buf);
}

// What the files of one kind a run writes (checkpoints, HDF5 frames) cost: how many, their bytes
// on the disk (rank 0 counts them), this rank's time writing them, and what they added to this
// process's peak resident set (VmHWM before the first, after the last) against the field values
// it wrote. Over ranks each writes its own part of an HDF5 file: it should add that part and a
// buffer, no more (docs/performance-notes.md).
struct WriteCost {
    int written = 0;
    double seconds = 0;
    std::uintmax_t file_bytes = 0, field_bytes = 0;
    std::int64_t hwm_before = -1, hwm_after = -1;
    // `write()` writes one file and returns the bytes of field values this process handed it.
    template <class F>
    void time(F&& write) {
        if (written++ == 0) hwm_before = peak_resident_bytes();
        const auto start = std::chrono::steady_clock::now();
        field_bytes = std::max(field_bytes, std::uintmax_t(write()));
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        hwm_after = peak_resident_bytes();
    }
};

// The report's two lines for one kind of file (`label`: "Checkpoints written", ...; `key`: the
// JSON keys' stem, "checkpoint": checkpoints_written, checkpoint_gb, checkpoint_write_s,
// checkpoint_gb_per_s, checkpoint_memory_growth_mb, checkpoint_vmhwm_before_mb and _after_mb on
// the rank that grew most, and every rank's in checkpoint_vmhwm_*_mb_per_rank and
// checkpoint_field_mb_per_rank). Collective: every rank calls it, having written as many.
void report_writes(Report& r, const std::string& label, const std::string& memory_label,
                   const std::string& key, WriteCost c) {
    if (c.written == 0) return;
    auto padded = [](std::string s) {
        s.resize(std::max<std::size_t>(s.size(), 28), ' ');
        return s + ": ";
    };
    if (dist::size() > 1) dist::allreduce_max(&c.seconds, 1);
    r.line(padded(label) + "%d, %.4g GB in %.4g s (%.4g GB/s; the slowest rank's time)",
           {{key + "s_written", c.written},
            {key + "_gb", double(c.file_bytes) / 1e9},
            {key + "_write_s", c.seconds},
            {key + "_gb_per_s", double(c.file_bytes) / 1e9 / std::max(c.seconds, 1e-12)}});
    const double mine[3] = {double(c.hwm_before), double(c.hwm_after), double(c.field_bytes)};
    const std::vector<unsigned char> all = dist::allgather(mine, sizeof mine);
    const std::size_t n = all.size() / sizeof mine;
    std::vector<double> b(n), a(n), p(n);
    for (std::size_t i = 0; i < n; ++i) {
        double v[3];
        std::memcpy(v, all.data() + i * sizeof mine, sizeof mine);
        b[i] = v[0], a[i] = v[1], p[i] = v[2];
    }
    if (std::any_of(b.begin(), b.end(), [](double v) { return v < 0; })) return;  // no VmHWM here
    std::size_t worst = 0;
    for (std::size_t i = 1; i < n; ++i)
        if (a[i] - b[i] > a[worst] - b[worst]) worst = i;
    const double grew = a[worst] - b[worst];
    char parts[96] = "";
    if (p[worst] > 0)
        std::snprintf(parts, sizeof parts, ", %.2f times the %s of field values it wrote", grew / p[worst],
                      format_bytes(p[worst]).c_str());
    const std::string who = n > 1 ? "rank " + std::to_string(worst) + ", which grew most" : "this process";
    r.line(padded(memory_label) + "+%.4g   (the peak resident set, VmHWM, of " + who +
               ": %.4g MB before the first, %.4g after the last" + parts + ")",
           {{key + "_memory_growth_mb", grew / 1e6},
            {key + "_vmhwm_before_mb", b[worst] / 1e6},
            {key + "_vmhwm_after_mb", a[worst] / 1e6}});
    auto mb = [](const std::vector<double>& v) {
        nlohmann::json j = nlohmann::json::array();
        for (double x : v) j.push_back(x / 1e6);
        return j;
    };
    r.value(key + "_vmhwm_before_mb_per_rank", mb(b));
    r.value(key + "_vmhwm_after_mb_per_rank", mb(a));
    r.value(key + "_field_mb_per_rank", mb(p));
}

// The launch (kernel, chunk, depth, graphs) every rank runs: rank 0's. Ranks whose kernels or
// depths differed would build halos of different depths, whose messages do not pair up; and each
// rank would read its own GPU's wisdom. So rank 0 alone chooses, from the wisdom's entry for the
// run over these ranks (its process grid and link are part of the key), and its choice, or its
// error, reaches every rank (which then fail alike). --tune where there is no entry is every
// rank's work: the run's candidates are measured over all of them.
std::string launch_of_rank0(const RunOptions& o, const Problem& problem, Precision precision,
                            EngineOptions& eo, std::ostream& out) {
    if (dist::size() == 1)
        return choose_launch(problem, o.params, o.backend, precision, o.wisdom, eo, out, o.io.progress);
    dist::setup_checkpoint();  // (a rank that failed before, e.g. rank 0 at its report's path, says why)
    std::string launch, error;
    int failed = 0;  // 1: bad input (UsageError), 2: any other error
    if (dist::rank() == 0) {
        try {
            launch = choose_launch(problem, o.params, o.backend, precision, o.wisdom, eo, out, o.io.progress);
        } catch (const UsageError& e) {
            failed = 1, error = e.what();
        } catch (const std::exception& e) {
            failed = 2, error = e.what();
        }
    }
    int head[7] = {
        failed,           eo.chunk, eo.depth, int(eo.graphs), int(eo.kernel.size()), int(launch.size()),
        int(error.size())};
    dist::broadcast(head, sizeof head);
    auto text = [](std::string& t, int n) {
        t.resize(std::size_t(n));
        dist::broadcast(t.data(), t.size());
    };
    text(eo.kernel, head[4]);
    text(launch, head[5]);
    text(error, head[6]);
    if (head[0] == 1) throw UsageError(error);
    if (head[0] == 2) throw Error(error);
    eo.chunk = head[1], eo.depth = head[2], eo.graphs = head[3] != 0;
    // --tune without an entry: every rank measures, each candidate on the whole run (the link's
    // part in it too), and every rank sees the same times, hence the same winner.
    if (o.wisdom == WisdomUse::tune && o.backend == Backend::cuda && eo.kernel.empty() && eo.chunk == 0 &&
        eo.depth == 0 && cuda_device_count() > 0)
        return tune_over_ranks(problem, o.params, precision, eo, out, o.io.progress);
    return launch;
}

// Every rank's halo schedule, as one text: where ranks differ (one too narrow for an interior
// sends after its pass while its neighbours overlap theirs), each schedule and its ranks. A
// collective: every rank calls it.
std::string every_ranks_schedule(const std::string& mine) {
    const std::vector<std::string> all = dist::allgather_texts(mine);
    std::vector<std::pair<std::string, std::vector<int>>> seen;  // a schedule, its ranks
    for (int r = 0; r < dist::size(); ++r) {
        const std::string& text = all[std::size_t(r)];
        auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& p) { return p.first == text; });
        if (it == seen.end()) it = seen.insert(seen.end(), {text, {}});
        it->second.push_back(r);
    }
    if (seen.size() == 1) return seen[0].first;
    std::string out;
    for (const auto& [text, ranks] : seen) {
        out += (out.empty() ? "" : "; ") + text + (ranks.size() == 1 ? " on rank " : " on ranks ");
        for (std::size_t k = 0; k < ranks.size() && k < 8; ++k)
            out += (k ? ", " : "") + std::to_string(ranks[k]);
        if (ranks.size() > 8) out += " and " + std::to_string(ranks.size() - 8) + " more";
    }
    return out;
}

template <class T>
nlohmann::json run_typed(const RunOptions& o, Problem& problem, std::ostream& out) {
    const ModelInfo& model = problem.model();
    // Every rank runs this, in step with the others; rank 0 alone prints and writes files.
    const bool root = dist::rank() == 0;
    std::ofstream json_file;
    if (!o.json_path.empty() && root) {
        json_file.open(o.json_path);  // opened first: a bad path fails before the run, not after
        if (!json_file) throw UsageError("cannot open '" + o.json_path + "' for the JSON report");
    }
    IoOptions io = o.io;
    if (!io.checkpoint_path.empty() && root) app::check_checkpoint_path(io.checkpoint_path, dist::size());
    if (io.out_dir.empty()) io.out_dir = model.out_dir;
    const Precision precision = precision_of<T>();
    // A restart continues the same schedule: the run still ends at problem.steps().
    // Over ranks an HDF5 checkpoint is read in parts: each rank its own cells (app::checkpoint_state).
    const std::optional<io::Checkpoint> restart = app::open_restart(
        io, problem, precision, app::parts_of_restart(io.restart_path, dist::size()), o.state_scale);
    const std::int64_t first = restart ? restart->header.step : 0, last = problem.steps();
    const std::int64_t snapshot_every = io.snapshot_every > 0 ? io.snapshot_every : problem.snapshot_every();
    const SnapshotSpec spec = problem.snapshot_spec();
    const Extent extent = problem.extent();
    // HDF5 frames: every rank writes its part (H5Frames); the others are gathered to rank 0's writers.
    const bool h5_frames = io.snapshot_format == "h5";
    app::Snapshots snapshots(io, root && !h5_frames ? snapshot_every : 0, model.name);
    std::optional<app::H5Frames> h5;
    if (h5_frames && snapshot_every > 0)
        h5.emplace(io, model.name, spec.grid, model.dims, root, problem.unscale(spec.field));
    EngineOptions eo{o.kernel, o.graphs, o.chunk, o.depth,
                     snapshots.buffers(extent.cells() * std::int64_t(sizeof(T))),
                     snapshot_every > 0 ? spec.field : std::string()};
    eo.decomp = decomposition(o, problem);
    if (o.backend == Backend::cuda && dist::size() > 1)
        dist::use_rank_device();  // rank 0's wisdom is its GPU's
    const std::string launch = launch_of_rank0(o, problem, precision, eo, out);
    std::optional<State<T>> init;
    if (restart) init = app::checkpoint_state<T>(*restart, model, io.restart_path);
    const std::unique_ptr<TypedEngine<T>> engine = make_engine<T>(problem, o.backend, eo, init ? &*init : nullptr);
    dist::end_setup();  // from here on a rank's error ends every rank

    Report r(out);
    r.value("model", model.name);
    r.line(is_half(precision) ? "%s: backend %s, kernel %s, precision %s (16-bit storage, fp32 arithmetic)"
                              : "%s: backend %s, kernel %s, precision %s",
           {{"", problem.title()},
            {"backend", std::string(to_string(o.backend))},
            {"kernel", engine->kernel()},
            {"precision", std::string(to_string(precision))}});
    r.value("arithmetic", std::string(to_string(is_half(precision) ? Precision::fp32 : precision)));
    if (!launch.empty()) r.line("%s", {{"launch", launch}});
    report_state_scale(r, problem, precision);
    if (dist::size() > 1) {
        const std::string halos = every_ranks_schedule(engine->halo_schedule());
        r.line("%d ranks, process grid %s, halos %s",
               {{"ranks", dist::size()}, {"decomposition", eo.decomp.text(model.dims)}, {"halos", halos}});
    } else if (eo.decomp.halos == Decomposition::Halos::nccl) {
        r.text("--halos nccl: one process has no halos to move\n");
    }
    problem.describe(r);
    if (restart) r.text("restarted from '" + io.restart_path + "' at " + model.step_noun + " " + std::to_string(first) + '\n');
    r.text("\n");
    out.flush();

    std::vector<std::string> checkpoints;
    // Strata's own format: the state gathered from every rank, then written by rank 0. HDF5:
    // every rank writes its own part (app::write_state). The report gives their rate, which the
    // disk's (`strata-io`) bounds, and what they cost in memory.
    WriteCost checkpoint_cost, frame_cost;
    auto checkpoint = [&](std::int64_t) {
        checkpoint_cost.time([&]() -> std::uintmax_t {
            if (!root && !app::is_h5_path(io.checkpoint_path)) {
                (void)engine->state();
                return 0;
            }
            const std::uintmax_t bytes = app::write_state(io.checkpoint_path, problem, *engine);
            if (checkpoints.empty()) checkpoints.push_back(io.checkpoint_path);
            if (root) checkpoint_cost.file_bytes += std::filesystem::file_size(io.checkpoint_path);
            return bytes;
        });
    };
    std::vector<app::Periodic> hooks;
    for (const ModelHook& h : problem.hooks())
        hooks.push_back({h.every, true, [&, run = h.run](std::int64_t step) { run(*engine, out, step); }});
    io::FrameSpec frame{"", spec.grid, model.dims, spec.lo, spec.hi};
    frame.unscale = problem.unscale(spec.field);
    hooks.push_back({snapshot_every, false, [&](std::int64_t step) {
                         if (h5) {
                             frame_cost.time([&] {
                                 const auto [file, bytes] =
                                     h5->write(step, double(step) * problem.dt(), *engine, spec.field);
                                 if (root) frame_cost.file_bytes += std::filesystem::file_size(file);
                                 return bytes;
                             });
                             return;
                         }
                         if (!root) {  // gathered from every rank, written by rank 0
                             engine->snapshot(spec.field)->wait();
                             return;
                         }
                         snapshots.submit(step, double(step) * problem.dt(), frame,
                                          [&] { return engine->snapshot(spec.field); });
                     }});
    hooks.push_back({io.checkpoint_every, true, checkpoint});
    app::Progress progress(out, io.progress, first, last, problem.dt(), double(extent.cells()),
                           engine->kernel_info().depth);
    const auto t0 = std::chrono::steady_clock::now();
    const app::Driven driven = app::drive(*engine, first, last, hooks, progress);
    engine->synchronize();
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - driven.excluded_s;
    if (driven.step < last) {  // stopped by a signal: keep what there is, then say so
        if (!io.checkpoint_path.empty()) checkpoint(driven.step);
        snapshots.finish(out);
        if (h5) h5->finish(out);
        const int signal = stop_requested();  // 0 here: another rank's (app::drive)
        throw Interrupted(signal, "interrupted by " + (signal ? signal_name(signal) : "a signal to another rank") + " at " + model.step_noun + " " +
                                      std::to_string(driven.step) + " of " + std::to_string(last) +
                                      (io.checkpoint_path.empty()
                                           ? ": nothing saved (with --checkpoint FILE an interrupted run keeps "
                                             "its state)"
                                           : "; checkpoint written to '" + io.checkpoint_path +
                                                 "' (continue with --restart " + io.checkpoint_path + ")"));
    }
    if (!io.checkpoint_path.empty() && (io.checkpoint_every == 0 || last % io.checkpoint_every != 0)) checkpoint(last);
    std::vector<std::string> snapshot_files = snapshots.finish(out, wall_s + driven.excluded_s);
    if (h5) {
        const std::vector<std::string> frames = h5->finish(out);
        snapshot_files.insert(snapshot_files.end(), frames.begin(), frames.end());
    }

    problem.report(*engine, r);
    report_fp16_range(r, *engine, model);
    const KernelInfo k = engine->kernel_info();
    const app::Throughput tp = app::throughput(wall_s, last - first, extent.cells(), k.flops_per_cell,
                                               k.min_bytes_per_cell);
    app::report_throughput(r, tp, k.flops_per_cell, k.min_bytes_per_cell);
    if (dist::size() > 1) {  // the ranks' exposed communication: what the decomposition costs
        // A rank also waits at an exchange for a slower neighbour: the spread between the rank
        // that waited most and the one that waited least is the ranks' imbalance.
        const double own = engine->exposed_communication_s();
        double exposed = own, least = -own;
        dist::allreduce_max(&exposed, 1);
        dist::allreduce_max(&least, 1);
        least = -least;
        r.line("Per rank (GCells/s)         : %.6g   (%d ranks)",
               {{"gcells_per_s_per_rank", tp.gcells_per_s / dist::size()}, {"ranks", dist::size()}});
        r.line("Exposed communication (s)   : %.6g   (%.1f%% of the wall time on the rank that waited most, %.1f%% on the one "
               "that waited least)",
               {{"exposed_communication_s", exposed},
                {"exposed_share_percent", 100 * exposed / std::max(wall_s, 1e-12)},
                {"least_exposed_share_percent", 100 * least / std::max(wall_s, 1e-12)}});
        double sent = engine->halo_bytes_per_step();
        dist::allreduce_max(&sent, 1);
        if (sent > 0)
            r.line("Halos sent per step (MB)    : %.4g   (the busiest rank's)", {{"halo_mb_per_step", sent / 1e6}});
    }
    report_writes(r, "Checkpoints written", "Checkpoint memory (MB)", "checkpoint", checkpoint_cost);
    report_writes(r, "HDF5 frames written", "HDF5 frame memory (MB)", "h5_frame", frame_cost);
    app::report_kernel(r, k, k.min_bytes_per_cell);
    app::report_roofline(r, o.backend == Backend::cuda, tp.effective_gbs);
    app::add_io(r.json(), snapshot_files, snapshots.waited_s(), checkpoints, io,
                restart ? std::optional(first) : std::nullopt);
    problem.finish(*engine, r, io.dir());
    if (json_file.is_open()) {
        json_file << r.json().dump(2) << '\n';
        json_file.flush();  // (a full disk shows at the flush, not at the buffered write)
        if (!json_file) throw Error("failed writing the JSON report to '" + o.json_path + "'");
    }
    return r.json();
}

}  // namespace

namespace {
nlohmann::json run_ranked(const RunOptions& o, std::ostream& out) {
    const ModelInfo& model = find_model(o.model);
    const std::unique_ptr<Problem> problem = model.problem(o.params, out);
    problem->check(o.io.snapshot_every);
    validate(o.io);
    const Precision p = o.precision.value_or(model.precision);
    problem->set_state_scale(app::choose_state_scale(*problem, p, o.state_scale));
    return with_precision(p, [&]<class T>(std::type_identity<T>) { return run_typed<T>(o, *problem, out); });
}
}  // namespace

nlohmann::json run(const RunOptions& given, std::ostream& out) {
    RunOptions o = given;
    // --halos auto is settled before the setup, collectively: a collective inside the setup would
    // meet another rank's error agreement instead (dist/mpi.hpp).
    if (o.halos == "auto") o.halos = dist::nccl_halos(o.backend) ? "nccl" : "mpi";
    dist::begin_setup();  // (dist/mpi.hpp: how an error of one rank reaches the user)
    std::ostream none(nullptr);  // the ranks but 0 print nothing
    return run_ranked(o, dist::rank() == 0 ? out : none);
}


}  // namespace strata
