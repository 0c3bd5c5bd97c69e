#include "tune_command.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "io/atomic_file.hpp"
#include "ranks/mpi.hpp"
#include "strata/core/error.hpp"
#include "strata/tune.hpp"

namespace strata {
namespace {

// One line per round on a terminal: measured/total, and the best so far.
struct TuneProgress {
    std::ostream& out;
    bool enabled;
    std::size_t total;
    std::size_t seen = 0;
    int round = 0;
    void operator()(const Trial& t, const TuneResult& r) {
        if (t.round != round) {
            if (enabled) out << '\n';
            round = t.round, seen = 0;
        }
        ++seen;
        if (!enabled) return;
        char line[256];
        std::snprintf(line, sizeof line, "\r  round %d: %zu measured, best %s %.4f ms/step   ", t.round, seen,
                      r.best.text().c_str(), r.best_ms);
        out << line << std::flush;
    }
};

template <class T>
void tune_precision(const TuneOptions& o, const ModelInfo& model, std::ostream& out) {
    std::ostringstream warnings;
    const std::unique_ptr<Problem> problem = model.problem(o.params, warnings);
    const Extent e = problem->extent();
    const WisdomKey key = wisdom_key(model, o.params, e, precision_of<T>());
    const std::vector<LaunchConfig> candidates = search_space(model, e);
    out << "tuning " << key.text() << " (" << problem->label() << "): " << candidates.size() << " candidates, "
        << (o.exhaustive ? "every one measured with 2 repeats, the best 3 seven times" : "successive halving (a quick round, 3 repeats, then 7)") << '\n';
    TuneProgress progress{out, o.progress, candidates.size()};
    const DeviceMeasure device = measure_on_device<T>(*problem);
    // Measured in the final round beside the winners: the built-in default (what tuning gains
    // over it) and, for the exhaustive reference, the wisdom's choice (how far from the best it is).
    std::vector<LaunchConfig> also{device.builtin};
    std::optional<WisdomEntry> wise;
    if (o.exhaustive) {
        std::ostringstream quiet;  // a missing or foreign file is no news here
        wise = Wisdom::for_device(quiet).find(key, kernel_names(Backend::cuda, model.name));
        if (wise) also.push_back(wise->config);
    }
    const TuneResult r = o.exhaustive ? tune_exhaustive(candidates, device.measure, std::ref(progress), also)
                                      : tune(candidates, device.measure, std::ref(progress), also);
    if (o.progress) out << '\n';
    // What was tried: the last round in full (the finalists), and how many fitted.
    std::vector<Trial> last;
    for (const Trial& t : r.trials)
        if (t.round == 2) last.push_back(t);
    std::stable_sort(last.begin(), last.end(), [](const Trial& a, const Trial& b) { return a.ms_per_step < b.ms_per_step; });
    const double cells = double(e.cells());
    out << "  " << r.trials.size() << " measurements of " << candidates.size() << " candidates ("
        << r.measurements << " tried) in " << std::fixed;
    out.precision(1);
    out << r.seconds << " s; the final round:\n";
    for (const Trial& t : last) {
        char line[256];
        std::snprintf(line, sizeof line, "    %-40s %9.4f ms/step %8.1f GCells/s%s\n", t.config.text().c_str(),
                      t.ms_per_step, cells / (t.ms_per_step * 1e-3) * 1e-9,
                      t.config == device.builtin ? "  (the built-in default)"
                      : wise && t.config == wise->config ? "  (the wisdom's choice)" : "");
        out << line;
    }
    char best[256];
    std::snprintf(best, sizeof best, "  best: %s, %.4f ms/step, %.1f GCells/s (tuning %.1f s)\n", r.best.text().c_str(),
                  r.best_ms, cells / (r.best_ms * 1e-3) * 1e-9, r.seconds);
    out << best;
    auto final_ms = [&](const LaunchConfig& c) -> std::optional<double> {
        for (const Trial& t : last)
            if (t.config == c) return t.ms_per_step;
        return std::nullopt;
    };
    if (const std::optional<double> ms = final_ms(device.builtin)) {
        std::snprintf(best, sizeof best, "  built-in default: %s, %.4f ms/step: the best is %.1f%% faster\n",
                      device.builtin.text().c_str(), *ms, 100.0 * (*ms / r.best_ms - 1.0));
        out << best;
    }
    if (const std::optional<double> ms = wise ? final_ms(wise->config) : std::nullopt) {
        std::snprintf(best, sizeof best, "  the wisdom's choice: %s, %.4f ms/step: %.1f%% from the best\n",
                      wise->config.text().c_str(), *ms, 100.0 * (*ms / r.best_ms - 1.0));
        out << best;
    }
    if (o.save) {
        Wisdom w = Wisdom::for_device(out);
        w.store(key, wisdom_entry(r));
        out << "  saved as '" << key.text() << "' in " << w.path() << '\n';
    }
}

}  // namespace

void run_tune(const TuneOptions& o, std::ostream& out) {
    const ModelInfo& model = find_model(o.model);
    if (o.precisions.empty()) throw UsageError("--precision needs one or more of fp32, fp64, fp16 and bf16");
    if (cuda_device_count() == 0) throw Error("strata tune measures on the GPU, and this machine has none");
    for (Precision p : o.precisions) {
        with_precision(p, [&]<class T>(std::type_identity<T>) { tune_precision<T>(o, model, out); });
    }
}

void run_wisdom_command(const std::string& action, const std::string& argument, std::ostream& out) {
    if (action != "show" && action != "export" && action != "import" && action != "forget")
        throw UsageError("wisdom: the actions are show, export FILE, import FILE and forget [MODEL] (got '" + action + "')");
    if ((action == "export" || action == "import") && argument.empty())
        throw UsageError("wisdom " + action + " needs a FILE");
    Wisdom w = Wisdom::for_device(out);
    if (action == "show") {
        out << "wisdom for " << w.device() << "\n  in " << w.path() << '\n';
        if (w.entries().empty()) out << "  (none yet: `strata tune MODEL ...` measures it)\n";
        for (const auto& [k, e] : w.entries()) {
            char line[512];
            std::snprintf(line, sizeof line, "  %-40s %-34s %9.4f ms/step  %s\n", k.c_str(), e.config.text().c_str(),
                          e.ms_per_step, e.measured_at.c_str());
            out << line;
        }
    } else if (action == "export") {
        if (!std::filesystem::exists(w.path())) throw UsageError("no wisdom to export yet: " + w.path() + " does not exist");
        std::ifstream in(w.path(), std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        io::AtomicFile f(argument);
        f.write(text.str());
        f.commit();
        out << "wrote " << w.entries().size() << " entries to " << argument << '\n';
    } else if (action == "import") {
        const int n = w.import(argument);
        out << "imported " << n << " entries from " << argument << " into " << w.path() << '\n';
    } else {
        const int n = w.forget(argument);
        out << "forgot " << n << (argument.empty() ? " entries" : " entries of " + argument) << " in " << w.path() << '\n';
    }
}

std::string choose_launch(const Problem& problem, const Params& params, Backend backend, Precision precision,
                          WisdomUse use, EngineOptions& eo, std::ostream& out, bool progress) {
    if (backend != Backend::cuda || cuda_device_count() == 0) return {};  // the engine says why not
    if (!eo.kernel.empty() || eo.chunk != 0 || eo.depth != 0) return "launch: as given";
    if (use == WisdomUse::ignore) return "launch: the built-in defaults (--no-wisdom)";
    const ModelInfo& model = problem.model();
    Wisdom w = Wisdom::for_device(out);
    const WisdomKey key =
        wisdom_key(model, params, problem.extent(), precision, ranks_key(eo.decomp, model.dims));
    std::optional<WisdomEntry> entry = w.find(key, kernel_names(Backend::cuda, model.name));
    bool tuned = false;
    if (!entry && use == WisdomUse::tune &&
        dist::size() == 1) {  // (over ranks: tune_over_ranks, on every rank)
        const std::vector<LaunchConfig> candidates = search_space(model, problem.extent());
        // The measuring engine is gone (its memory free) before the run builds its own.
        TuneProgress line{out, progress, candidates.size()};
        auto tuned_on = [&](const DeviceMeasure& d) {
            return tune(candidates, d.measure, std::ref(line), {d.builtin});
        };
        const TuneResult r = with_precision(precision, [&]<class T>(std::type_identity<T>) {
            return tuned_on(measure_on_device<T>(problem));
        });
        if (progress) out << '\n';
        entry = wisdom_entry(r);
        w.store(key, *entry);
        tuned = true;
    }
    if (!entry)
        return "launch: the built-in defaults (no wisdom for '" + key.text() + "' in " + w.path() +
               "; `strata tune` or --tune measures it)";
    eo.kernel = entry->config.kernel;
    eo.chunk = entry->config.chunk;
    eo.depth = entry->config.depth;
    eo.graphs = eo.graphs && entry->config.graphs;  // --no-graphs still holds
    return std::string(tuned ? "launch: tuned now, saved to the wisdom (" : "launch: from wisdom (") + w.path() +
           "): " + entry->config.text();
}

std::string tune_over_ranks(const Problem& problem, const Params& params, Precision precision,
                            EngineOptions& eo, std::ostream& out, bool progress) {
    const ModelInfo& model = problem.model();
    const WisdomKey key =
        wisdom_key(model, params, problem.extent(), precision, ranks_key(eo.decomp, model.dims));
    // Over ranks a pass's exchange weighs against its update: the kernel (its tiles decide what
    // overlaps) and its depth (fewer messages at a deeper one, as many bytes a step) are what the
    // link weighs in. Chunks stay at their defaults, graphs as the run has them: each candidate is
    // an engine built on every rank, a second or so, not a relaunch.
    std::vector<LaunchConfig> candidates;
    for (LaunchConfig& c : search_space(model, problem.extent()))
        if (c.chunk == 0 && c.graphs == eo.graphs) candidates.push_back(std::move(c));
    out << "tuning " << key.text() << ": " << candidates.size() << " kernels and depths, each run on all "
        << dist::size() << " ranks, the exchange included\n"
        << std::flush;
    EngineOptions base;
    base.decomp = eo.decomp;
    base.graphs = eo.graphs;
    TuneProgress line{out, progress && dist::rank() == 0, candidates.size()};
    const TuneResult r = with_precision(precision, [&]<class T>(std::type_identity<T>) {
        const DeviceMeasure d = measure_over_ranks<T>(problem, base);
        return tune(candidates, d.measure, std::ref(line), {d.builtin});
    });
    if (line.enabled) out << '\n';
    eo.kernel = r.best.kernel;
    eo.chunk = r.best.chunk;
    eo.depth = r.best.depth;
    eo.graphs = eo.graphs && r.best.graphs;  // --no-graphs still holds
    std::string path;
    if (dist::rank() == 0) {  // one GPU's wisdom: rank 0's (the ranks' GPUs are alike)
        Wisdom w = Wisdom::for_device(out);
        w.store(key, wisdom_entry(r));
        path = w.path();
    }
    char figures[160];
    std::snprintf(figures, sizeof figures, "%.4f ms/step, tuning %.1f s", r.best_ms, r.seconds);
    return "launch: tuned now over " + std::to_string(dist::size()) + " ranks (" + figures +
           "), saved to the wisdom (" + path + "): " + r.best.text();
}

}  // namespace strata
