#include "strata/tune.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>

#include "io/atomic_file.hpp"
#include "ranks/mpi.hpp"
#include "strata/core/error.hpp"
#ifdef STRATA_HAVE_CUDA
#include "cuda/cuda_engines.hpp"
#endif

namespace strata {

namespace {

constexpr int kWisdomVersion = 1;

std::string now_utc() {
    const std::time_t now = std::time(nullptr);
    char when[64];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return when;
}

}  // namespace

WisdomEntry wisdom_entry(const TuneResult& r) { return {r.best, r.best_ms, now_utc()}; }

std::string LaunchConfig::text() const {
    std::string t = kernel;
    if (depth > 0) t += " depth " + std::to_string(depth);
    if (chunk > 0) t += " chunk " + std::to_string(chunk);
    return t + (graphs ? " graphs" : " no-graphs");
}

std::vector<LaunchConfig> search_space(const ModelInfo& model, const Extent& e) {
    std::vector<LaunchConfig> out;
    // Chunks that split the outer axis into c blocks: the divisions that change the blocks' count.
    const int outer = model.dims == 3 ? e.nz : e.ny;
    std::set<int> chunk_set;
    for (int c : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128}) {
        const int chunk = (outer + c - 1) / c;
        if (chunk >= 4) chunk_set.insert(chunk);
    }
    const std::vector<std::string> chunked = kernel_names(Backend::cuda, model.name, true);
    for (const std::string& k : kernel_names(Backend::cuda, model.name)) {
        std::vector<int> chunks{0};
        if (std::find(chunked.begin(), chunked.end(), k) != chunked.end()) chunks.insert(chunks.end(), chunk_set.begin(), chunk_set.end());
        std::vector<int> depths{0};
        if (kernel_takes_depth(Backend::cuda, model.name, k)) depths = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16};
        for (int d : depths)
            for (int c : chunks)
                for (bool g : {true, false}) out.push_back({k, c, d, g});
    }
    return out;
}

namespace {

using Progress = std::function<void(const Trial&, const TuneResult&)>;

// Measures `configs` with `repeats` each in round `round`; returns the fitting ones, fastest first.
std::vector<Trial> measure_round(const std::vector<LaunchConfig>& configs, int repeats, int round,
                                 const Measure& measure, TuneResult& r, const Progress& progress) {
    std::vector<Trial> round_trials;
    for (const LaunchConfig& c : configs) {
        const std::optional<double> ms = measure(c, repeats);
        ++r.measurements;
        if (!ms) continue;
        const Trial t{c, *ms, round};
        r.trials.push_back(t);
        round_trials.push_back(t);
        if (r.best.kernel.empty() || *ms < r.best_ms) r.best = c, r.best_ms = *ms;
        if (progress) progress(t, r);
    }
    std::stable_sort(round_trials.begin(), round_trials.end(),
                     [](const Trial& a, const Trial& b) { return a.ms_per_step < b.ms_per_step; });
    return round_trials;
}

std::vector<LaunchConfig> configs_of(const std::vector<Trial>& trials, std::size_t n) {
    std::vector<LaunchConfig> out;
    for (std::size_t i = 0; i < std::min(n, trials.size()); ++i) out.push_back(trials[i].config);
    return out;
}

// The final round: the finalists and `also` (the built-in default; for the exhaustive reference,
// the wisdom's choice too), 7 full measurements each, taken in turn (one of each, then again) so
// that a drift of the GPU's clocks (a GPU warmed by the search clocks a few percent lower)
// touches them alike; the median of each. The default wins when nothing beats it.
std::vector<Trial> final_round(std::vector<LaunchConfig> configs, const std::vector<LaunchConfig>& also,
                               const Measure& measure, TuneResult& r, const Progress& progress) {
    for (const LaunchConfig& c : also)
        if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
    std::vector<std::vector<double>> ms(configs.size());
    for (int repeat = 0; repeat < 7; ++repeat)
        for (std::size_t i = 0; i < configs.size(); ++i) {
            if (repeat > 0 && ms[i].empty()) continue;  // refused the first time
            const std::optional<double> t = measure(configs[i], 1);
            ++r.measurements;
            if (t) ms[i].push_back(*t);
        }
    std::vector<Trial> last;
    for (std::size_t i = 0; i < configs.size(); ++i) {
        if (ms[i].empty()) continue;
        std::sort(ms[i].begin(), ms[i].end());
        last.push_back({configs[i], ms[i][ms[i].size() / 2], 2});
        r.trials.push_back(last.back());
        if (progress) progress(last.back(), r);
    }
    std::stable_sort(last.begin(), last.end(), [](const Trial& a, const Trial& b) { return a.ms_per_step < b.ms_per_step; });
    return last;
}

TuneResult finish(TuneResult r, const std::vector<Trial>& last, std::chrono::steady_clock::time_point t0) {
    if (last.empty()) throw UsageError("no launch configuration fits this problem");
    // The winner is the last round's best: earlier rounds' single timings are noisier.
    r.best = last.front().config;
    r.best_ms = last.front().ms_per_step;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace

TuneResult tune(const std::vector<LaunchConfig>& candidates, const Measure& measure, const Progress& progress,
                const std::vector<LaunchConfig>& also) {
    const auto t0 = std::chrono::steady_clock::now();
    TuneResult r;
    const std::vector<Trial> quick = measure_round(candidates, 0, 0, measure, r, progress);
    const std::size_t keep = std::max<std::size_t>(3, (quick.size() + 7) / 8);
    const std::vector<Trial> second = measure_round(configs_of(quick, keep), 3, 1, measure, r, progress);
    const std::vector<Trial> last = final_round(configs_of(second, 3), also, measure, r, progress);
    return finish(std::move(r), last, t0);
}

TuneResult tune_exhaustive(const std::vector<LaunchConfig>& candidates, const Measure& measure,
                           const Progress& progress, const std::vector<LaunchConfig>& also) {
    const auto t0 = std::chrono::steady_clock::now();
    TuneResult r;
    // Every candidate the benchmark's way (2 repeats after a graph's worth of warm-up), then the
    // best three with the tuner's final measurement, so that the two winners compare like for like.
    const std::vector<Trial> all = measure_round(candidates, 2, 1, measure, r, progress);
    const std::vector<Trial> last = final_round(configs_of(all, 3), also, measure, r, progress);
    return finish(std::move(r), last, t0);
}

namespace {

// The milliseconds per step of `e`'s launch: with `repeats` 0 quickly, else the benchmark's way.
// `agree` turns a time into the one every rank goes by (over ranks the slowest's: how many passes
// follow depends on it, and the ranks' passes must pair up); on one process it is the time itself.
double time_launch(Engine& e, int repeats, const std::function<double(double)>& agree) {
    const std::int64_t pass = e.kernel_info().depth;
    if (repeats == 0) {
        // The quick round: a pass to warm up (the kernel's module loads at its first launch),
        // a timed pass, then as many more as fit in about 20 ms, at most a quarter of a
        // graph's worth, in plain launches. A slow candidate (a deep temporal pass of a box
        // stencil takes tens of milliseconds) costs a few passes, not sixteen.
        e.advance(pass);
        const double first = agree(e.timed_advance_ms(pass));
        const std::int64_t more =
            std::clamp<std::int64_t>(std::int64_t(20.0 / std::max(first, 1e-3)), 0, kGraphPasses / 4 - 1);
        const double rest = more > 0 ? agree(e.timed_advance_ms(more * pass)) : 0.0;
        return (first + rest) / double((more + 1) * pass);
    }
    // The benchmark's method: a graph's worth of passes to warm up (graph capture), then the
    // median of `repeats` timed runs of a graph's worth (CUDA events around each on one process;
    // over ranks the host's clock between two synchronizations). Where a
    // graph's worth would last over 100 ms (a pass of 1.5 ms or more: a deep temporal pass of
    // a box stencil), runs of 100 ms in plain launches: a launch's few microseconds are then
    // below 0.3% of a pass, graphs or not, and such a candidate is a loser anyway.
    e.advance(pass);
    const double one = agree(e.timed_advance_ms(pass));
    const std::int64_t passes =
        one * kGraphPasses <= 100.0 ? kGraphPasses : std::max<std::int64_t>(1, std::int64_t(100.0 / one));
    const std::int64_t steps = passes * pass;
    if (passes == kGraphPasses) e.advance(steps);
    std::vector<double> ms;
    for (int i = 0; i < repeats; ++i) ms.push_back(agree(e.timed_advance_ms(steps)) / double(steps));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

double slowest_rank(double ms) {
    dist::allreduce_max(&ms, 1);
    return ms;
}

}  // namespace

template <class T>
DeviceMeasure measure_on_device(const Problem& problem) {
    // One engine for every candidate, relaunched: building one (allocating gigabytes, filling the
    // initial state or a velocity model) costs more than a quick measurement, several times over.
    // The fields go on evolving from candidate to candidate; the kernels' speed does not depend
    // on the values (no data-dependent branches).
    std::shared_ptr<TypedEngine<T>> e = make_engine<T>(problem, Backend::cuda, EngineOptions{}, nullptr);
    const KernelInfo builtin = e->kernel_info();
    DeviceMeasure out;
    out.builtin = LaunchConfig{builtin.name, 0,
                               kernel_takes_depth(Backend::cuda, problem.model().name, builtin.name) ? builtin.depth : 0, true};
    out.measure = [e](const LaunchConfig& c, int repeats) -> std::optional<double> {
        try {
            e->relaunch(EngineOptions{c.kernel, c.graphs, c.chunk, c.depth});
        } catch (const UsageError&) {
            return std::nullopt;  // the kernel refuses this chunk or depth here
        }
        return time_launch(*e, repeats, [](double ms) { return ms; });
    };
    return out;
}

template <class T>
DeviceMeasure measure_over_ranks(const Problem& problem, const EngineOptions& base) {
    // An engine per candidate: the decomposed engine keeps its launch (its windows are as deep
    // as its depth's halos). Each is gone, its memory free, before the next is built.
    auto build = [&problem, base](const LaunchConfig& c) -> std::unique_ptr<TypedEngine<T>> {
        EngineOptions o;
        o.decomp = base.decomp;
        o.kernel = c.kernel, o.graphs = c.graphs, o.chunk = c.chunk, o.depth = c.depth;
        try {
            return make_engine<T>(problem, Backend::cuda, o, nullptr);
        } catch (const UsageError&) {
            return nullptr;  // refused, on every rank alike (make_decomposed agrees on it: all_built)
        }
    };
    DeviceMeasure out;
    {
        EngineOptions o;  // the run's own launch: a refusal of it is the run's error, said by its rank
        o.decomp = base.decomp;
        o.graphs = base.graphs;
        const std::unique_ptr<TypedEngine<T>> e = make_engine<T>(problem, Backend::cuda, o, nullptr);
        const KernelInfo builtin = e->kernel_info();
        out.builtin = LaunchConfig{
            builtin.name, 0,
            kernel_takes_depth(Backend::cuda, problem.model().name, builtin.name) ? builtin.depth : 0,
            base.graphs};
    }
    out.measure = [build](const LaunchConfig& c, int repeats) -> std::optional<double> {
        const std::unique_ptr<TypedEngine<T>> e = build(c);
        if (!e) return std::nullopt;
        try {
            return time_launch(*e, repeats, slowest_rank);
        } catch (const std::exception& x) {
            // The ranks step in lock step here, before the run's setup ends: a rank that failed
            // would leave the others waiting at their next message, so it ends them all, as an
            // error inside a run's time loop does.
            std::fprintf(stderr, "strata: error: %s (%s, measuring %s)\n", x.what(), dist::where().c_str(),
                         c.text().c_str());
            dist::abort(1);
        }
    };
    return out;
}
template DeviceMeasure measure_on_device<float>(const Problem&);
template DeviceMeasure measure_on_device<f16>(const Problem&);
template DeviceMeasure measure_on_device<bf16>(const Problem&);
template DeviceMeasure measure_on_device<double>(const Problem&);
template DeviceMeasure measure_over_ranks<float>(const Problem&, const EngineOptions&);
template DeviceMeasure measure_over_ranks<f16>(const Problem&, const EngineOptions&);
template DeviceMeasure measure_over_ranks<bf16>(const Problem&, const EngineOptions&);
template DeviceMeasure measure_over_ranks<double>(const Problem&, const EngineOptions&);

std::string size_class(const Extent& e) {
    auto side = [](int n) {
        const double k = std::round(2 * std::log2(double(std::max(n, 1))));
        return std::to_string(std::llround(std::exp2(k / 2)));
    };
    return e.dims == 3 ? side(e.nx) + "x" + side(e.ny) + "x" + side(e.nz) : side(e.nx) + "x" + side(e.ny);
}

std::string WisdomKey::text() const {
    return model + (shape.empty() ? "" : " " + shape) + " " + std::string(to_string(precision)) + " " + size +
           (ranks.empty() ? "" : " ranks=" + ranks);
}

std::string ranks_key(const Decomposition& d, int dims) {
    if (dist::size() <= 1) return {};
    // "2x2x1 nccl overlap, 1 node": what decides how the exchange weighs against a pass
    std::string k =
        d.text(dims) + (!d.exchange                             ? " no-exchange"
                        : d.halos == Decomposition::Halos::nccl ? (d.overlap ? " nccl overlap" : " nccl")
                                                                : " mpi");
    const int nodes =
        (dist::size() + dist::node_size() - 1) / dist::node_size();  // (as many ranks on each as on rank 0's)
    k += ", " + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes");
    // NCCL's own choice of transport follows the hardware, the same on a machine of one kind;
    // these settings change it (as-another-node.sh: sockets over loopback in place of NVLink).
    for (const char* v :
         {"NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_NET", "NCCL_P2P_LEVEL", "NCCL_IB_DISABLE",
          "NCCL_SOCKET_IFNAME", "NCCL_ALGO", "NCCL_PROTO", "STRATA_SHARE_GPUS"})
        if (const char* s = std::getenv(v); s && *s) k += std::string(" ") + v + "=" + s;
    return k;
}

WisdomKey wisdom_key(const ModelInfo& model, const Params& params, const Extent& extent, Precision precision,
                     std::string ranks) {
    WisdomKey k{model.name, "", precision, size_class(extent), std::move(ranks)};
    // The options that choose the stencil (and with it the kernels' instances): heat3d's.
    for (const ParamSpec& p : model.params)
        if (p.key == "stencil") {
            const Params::Value* v = params.find(p.key);
            const std::string* given = v ? std::get_if<std::string>(v) : nullptr;
            k.shape = "stencil=" + (given ? *given : p.fallback);
        }
    return k;
}

std::string cuda_device_identity() {
#ifdef STRATA_HAVE_CUDA
    return cuda_device_count() > 0 ? cuda::device_identity() : std::string();
#else
    return {};
#endif
}

namespace {

std::filesystem::path wisdom_dir() {
    if (const char* d = std::getenv("STRATA_WISDOM_DIR"); d && *d) return d;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "strata" / "wisdom";
    if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "strata" / "wisdom";
    return std::filesystem::temp_directory_path() / "strata-wisdom";
}

std::string file_name(const std::string& identity) {
    std::string f;
    for (char c : identity) f += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return f + ".json";
}

nlohmann::json to_json(const WisdomEntry& e) {
    return {{"kernel", e.config.kernel}, {"chunk", e.config.chunk},        {"depth", e.config.depth},
            {"graphs", e.config.graphs}, {"ms_per_step", e.ms_per_step}, {"measured_at", e.measured_at}};
}

// Holds an exclusive lock on PATH.lock while alive: writers of one wisdom file take turns.
class FileLock {
public:
    explicit FileLock(const std::string& path) : fd_(::open((path + ".lock").c_str(), O_CREAT | O_RDWR, 0644)) {
        if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0)
            throw Error("cannot lock '" + path + ".lock' to update the wisdom: " + std::strerror(errno));
    }
    ~FileLock() { ::close(fd_); }  // closing releases the lock
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;

private:
    int fd_;
};

// The entries of a wisdom file; when the whole file is ignored, `why` says why (a missing file
// is no entries and no reason). Malformed entries are skipped with a warning on `log`.
std::vector<std::pair<std::string, WisdomEntry>> read_entries(const std::string& path, const std::string& device,
                                                               std::ostream& log, std::string& why) {
    std::vector<std::pair<std::string, WisdomEntry>> out;
    std::ifstream f(path);
    if (!f) return out;
    auto ignore = [&](const std::string& reason) {
        why = "ignoring the wisdom in '" + path + "': " + reason;
        return decltype(out){};
    };
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(f);
    } catch (const nlohmann::json::exception& e) {
        return ignore(std::string("not valid JSON (") + e.what() + ")");
    }
    if (!j.is_object() || j.value("format", "") != "strata-wisdom") return ignore("not a Strata wisdom file");
    if (!j.contains("version") || !j["version"].is_number_integer() || j["version"] != kWisdomVersion)
        return ignore("written in another format version (this Strata reads " + std::to_string(kWisdomVersion) + ")");
    if (!device.empty() && j.value("device", "") != device)
        return ignore("measured on another device ('" + j.value("device", "") + "')");
    if (!j.contains("entries") || !j["entries"].is_object()) return ignore("it has no entries");
    for (const auto& [key, v] : j["entries"].items()) {
        try {
            WisdomEntry e;
            e.config.kernel = v.at("kernel").get<std::string>();
            e.config.chunk = v.at("chunk").get<int>();
            e.config.depth = v.at("depth").get<int>();
            e.config.graphs = v.at("graphs").get<bool>();
            e.ms_per_step = v.at("ms_per_step").get<double>();
            e.measured_at = v.value("measured_at", "");
            if (e.config.chunk < 0 || e.config.depth < 0 || !(e.ms_per_step > 0)) throw std::out_of_range("values");
            out.emplace_back(key, e);
        } catch (const std::exception&) {
            log << "strata: warning: ignoring the malformed wisdom entry '" << key << "' in '" << path << "'\n";
        }
    }
    return out;
}

}  // namespace

Wisdom Wisdom::for_device(std::ostream& log) {
    const std::string id = cuda_device_identity();
    if (id.empty()) throw Error("wisdom is kept per GPU, and this machine has none");
    return Wisdom((wisdom_dir() / file_name(id)).string(), id, log);
}

Wisdom::Wisdom(std::string path, std::string device, std::ostream& log)
    : path_(std::move(path)), device_(std::move(device)), log_(&log) {
    std::string why;
    entries_ = read_entries(path_, device_, log, why);
    if (!why.empty()) log << "strata: warning: " << why << " (it will be rewritten when wisdom is stored)\n";
}

std::optional<WisdomEntry> Wisdom::find(const WisdomKey& key, const std::vector<std::string>& valid_kernels) const {
    const std::string k = key.text();
    for (const auto& [name, e] : entries_) {
        if (name != k) continue;
        if (std::find(valid_kernels.begin(), valid_kernels.end(), e.config.kernel) == valid_kernels.end()) {
            *log_ << "strata: warning: the wisdom for '" << k << "' names the kernel '" << e.config.kernel
                  << "', which this build does not have: ignored\n";
            return std::nullopt;
        }
        return e;
    }
    return std::nullopt;
}

// Under the file's lock: what is on disk now (another run may have written since this one read
// it), changed by `change`, written to PATH.tmp and renamed into place.
void Wisdom::rewrite(const std::function<Entries(Entries)>& change) {
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
    const FileLock lock(path_);
    std::ostringstream quiet;  // said when this object read the file
    std::string why;
    entries_ = change(read_entries(path_, device_, quiet, why));
    nlohmann::json j{{"format", "strata-wisdom"}, {"version", kWisdomVersion}, {"device", device_},
                     {"entries", nlohmann::json::object()}};
    for (const auto& [k, e] : entries_) j["entries"][k] = to_json(e);
    io::AtomicFile f(path_);
    f.write(j.dump(2) + "\n");
    f.commit();
}

void Wisdom::store(const Entries& add) {
    rewrite([&](Entries on_disk) {
        std::map<std::string, WisdomEntry> merged(on_disk.begin(), on_disk.end());
        for (const auto& [k, e] : add) merged[k] = e;  // ours over theirs
        return Entries(merged.begin(), merged.end());
    });
}

int Wisdom::forget(const std::string& prefix) {
    int removed = 0;
    rewrite([&](Entries on_disk) {
        Entries kept;
        for (auto& [k, e] : on_disk) {
            if (k.rfind(prefix, 0) == 0 && (prefix.empty() || k.size() == prefix.size() || k[prefix.size()] == ' ')) ++removed;
            else kept.emplace_back(k, e);
        }
        return kept;
    });
    return removed;
}

int Wisdom::import(const std::string& file) {
    if (!std::filesystem::exists(file)) throw UsageError("no wisdom file '" + file + "'");
    std::string why;
    const auto add = read_entries(file, device_, *log_, why);
    if (!why.empty()) throw UsageError(why);
    if (add.empty()) throw UsageError("'" + file + "' holds no wisdom entries");
    store(add);
    return int(add.size());
}

}  // namespace strata
