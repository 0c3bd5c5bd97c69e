#pragma once
// The autotuner and its wisdom, "like FFTW": candidate launch configurations are measured on
// the device itself, the winner is kept in a file per device, and later runs start from it.
//
//  - The search space is every CUDA strategy that fits the problem with each one's knobs, all of
//    them fields of EngineOptions (the launch-knobs hook): rows or planes per block (--chunk),
//    steps per pass (--depth), graph replay. A kernel that gains a knob there gains tuning here.
//  - The search is successive halving: every candidate measured briefly (about 20 ms, at most a
//    quarter of a graph's worth of passes), the best eighth with the benchmark's method and 3
//    repeats, the best three and the built-in default 7 times each, in turn (events after a
//    warm-up, the median).
//  - Wisdom: one JSON file per device (its name, SM count, memory and driver/runtime versions),
//    entries keyed by model, stencil shape, precision and size class (over several ranks also the
//    process grid and the link: there each candidate is measured on the whole run, exchange and
//    all). Written under a lock, merged with what is on disk, through a temporary and a rename.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "strata/core/types.hpp"
#include "strata/engine.hpp"
#include "strata/params.hpp"
#include "strata/problem.hpp"

namespace strata {

// What a run asks of the wisdom: its entry for the problem (the default), the built-in defaults
// (--no-wisdom), or its entry after tuning the problem first where it has none (--tune).
enum class WisdomUse { use, ignore, tune };

// One point of the search space: what EngineOptions sets for the CUDA engine.
struct LaunchConfig {
    std::string kernel;
    int chunk = 0;  // 0: the strategy's default
    int depth = 0;  // 0: the strategy's default
    bool graphs = true;
    std::string text() const;  // "temporal depth 4 chunk 171 graphs"
    bool operator==(const LaunchConfig&) const = default;
};

// The candidates for `problem` on `model`'s CUDA strategies: every kernel, with chunks of rows
// (2D) or planes (3D) that divide the grid's outer axis into 1, 2, 3, 4, 6, 8, ... blocks (and
// the default), depths 1..16 for kernels that take one, graphs on and off. Candidates a kernel
// refuses (a depth beyond its maximum) are dropped when measured.
std::vector<LaunchConfig> search_space(const ModelInfo& model, const Extent& extent);

// A measurement: the median milliseconds per step of `c` over `repeats` timed runs of a graph's
// worth of passes (after as many to warm up), or with `repeats` 0 a quick one (about 20 ms); nullopt
// when the configuration does not fit the problem (the engine refused it).
using Measure = std::function<std::optional<double>(const LaunchConfig& c, int repeats)>;

struct Trial {
    LaunchConfig config;
    double ms_per_step;
    int round;  // 0: the quick round; the last round is the full measurement
};
struct TuneResult {
    LaunchConfig best;
    double best_ms = 0;
    std::vector<Trial> trials;  // every measurement, in order
    int measurements = 0;       // calls of Measure (repeats are within one)
    double seconds = 0;
};

// Successive halving over `candidates`: round 0 measures each quickly (repeats 0), round 1 the
// best eighth (at least 3) with 3 repeats, round 2 the best 3 and `also` (the built-in default,
// which then wins if nothing beats it) 7 times each, in turn, the median of each. `progress` (may
// be null) hears each trial and the best so far. UsageError when no candidate fits.
TuneResult tune(const std::vector<LaunchConfig>& candidates, const Measure& measure,
                const std::function<void(const Trial&, const TuneResult&)>& progress = {},
                const std::vector<LaunchConfig>& also = {});
// Every candidate with 2 repeats, then the best three and `also` as tune()'s final round: the
// reference the tuner is checked against (put its choice in `also` to compare them like for like).
TuneResult tune_exhaustive(const std::vector<LaunchConfig>& candidates, const Measure& measure,
                           const std::function<void(const Trial&, const TuneResult&)>& progress = {},
                           const std::vector<LaunchConfig>& also = {});

// The real measurement: one engine of `problem` at precision T on the current GPU, relaunched
// for each candidate; and the launch the engine picks by itself (its kernel, chunk 0, its depth).
struct DeviceMeasure {
    Measure measure;
    LaunchConfig builtin;
};
template <class T>
DeviceMeasure measure_on_device(const Problem& problem);
// The same over the ranks of a run (mpirun; `base.decomp` its process grid, `base.graphs` its
// graphs; an error while measuring ends every rank, as one in a run's time loop): every rank calls it
// and every measurement together, each candidate an engine of its own on every rank (a depth
// changes the halos' depth, hence the windows), timed on the whole run, the exchange over the
// run's link included; a time is the slowest rank's, so every rank sees the same figures and the
// search takes the same path on each. A candidate one rank refuses is refused on all (the decomposed
// engine agrees on it before its first message: Subdomain::all_built). `problem`
// must outlive the measure.
template <class T>
DeviceMeasure measure_over_ranks(const Problem& problem, const EngineOptions& base);

// What a wisdom entry is keyed by. The size class rounds each side to the nearest half octave
// (2^(k/2)), so 500^3 and 512^3 share an entry and 362 and 512 do not.
struct WisdomKey {
    std::string model;    // "heat3d"
    std::string shape;    // the options that choose the stencil ("stencil=27pt"), "" when none
    Precision precision = Precision::fp32;
    std::string size;     // the class: "512x512x512"
    // Over several ranks, the run's process grid and link (ranks_key); "" for one process.
    std::string ranks;
    std::string text() const;  // "heat3d stencil=27pt fp32 512x512x512", then " ranks=..." over ranks
};
WisdomKey wisdom_key(const ModelInfo& model, const Params& params, const Extent& extent, Precision precision,
                     std::string ranks = {});
// What a run over several ranks adds to its key: the process grid, how the halos travel and when,
// and the link: the nodes (as many ranks on each as on this one's), and the settings that choose
// NCCL's transport where set (a run over sockets is measured apart from one over NVLink; ranks that
// share a GPU, STRATA_SHARE_GPUS, apart from ranks of a GPU each). "" for one process. `d.halos`
// resolved (not `automatic`).
std::string ranks_key(const Decomposition& d, int dims);
std::string size_class(const Extent& e);

struct WisdomEntry {
    LaunchConfig config;
    double ms_per_step = 0;
    std::string measured_at;  // UTC, ISO 8601
};

// A tuning's winner as an entry, measured now.
WisdomEntry wisdom_entry(const TuneResult& r);

// The wisdom file of one device: $STRATA_WISDOM_DIR, else $XDG_CACHE_HOME/strata/wisdom, else
// ~/.cache/strata/wisdom, one file per device identity.
class Wisdom {
public:
    using Entries = std::vector<std::pair<std::string, WisdomEntry>>;
    // The current device's file (Error without a GPU). Problems reading it are warnings on `log`.
    static Wisdom for_device(std::ostream& log);
    // Any file (tests, import/export). `device`: the identity it must name ("" for any).
    Wisdom(std::string path, std::string device, std::ostream& log);

    const std::string& path() const { return path_; }
    const std::string& device() const { return device_; }
    // The entry for `key`, if any; one whose kernel `valid_kernels` lacks is ignored with a warning.
    std::optional<WisdomEntry> find(const WisdomKey& key, const std::vector<std::string>& valid_kernels) const;
    const Entries& entries() const { return entries_; }
    // Adds or replaces entries and writes the file: under a lock, merged with the entries on disk
    // now (another run's among them), to PATH.tmp and renamed.
    void store(const Entries& entries);
    void store(const WisdomKey& key, const WisdomEntry& e) { store({{key.text(), e}}); }
    // Removes entries whose key starts with `prefix` (all with ""); returns how many.
    int forget(const std::string& prefix);
    // Merges another wisdom file's entries (for this device) into this one; returns how many.
    int import(const std::string& file);

private:
    void rewrite(const std::function<Entries(Entries)>& change);
    std::string path_, device_;
    std::ostream* log_;
    Entries entries_;
};

// The current GPU's identity for wisdom: "NVIDIA H100 80GB HBM3, 132 SMs, 79.2 GiB, driver
// 13000, runtime 13000"; "" without CUDA.
std::string cuda_device_identity();

}  // namespace strata
