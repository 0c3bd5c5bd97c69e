#pragma once
// Running a model from start to report: what `strata run` does, as a library call.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "strata/core/types.hpp"
#include "strata/params.hpp"
#include "strata/tune.hpp"

namespace strata {

// Snapshots, checkpoints and progress, the same for every model.
struct IoOptions {
    std::string out_dir;  // --out: where snapshot frames and the .pvd go (wave3d: and the traces)
    std::int64_t snapshot_every = 0;    // --every (apf: also -p); 0: no snapshots
    int writer_threads = 0;             // --writer-threads; 0: min(hardware threads - 1, 16)
    std::string snapshot_format = "both";  // --snapshot-format: vti, png or both
    std::string vti_compression = "none";  // --vti-compression: none or zlib
    std::string checkpoint_path;        // --checkpoint: written every --checkpoint-every steps and at the end
    std::int64_t checkpoint_every = 0;  // --checkpoint-every
    std::string restart_path;           // --restart: continue from this checkpoint
    bool progress = false;              // the one-line progress bar (the CLI: a terminal and no --quiet)

    std::string dir() const { return out_dir.empty() ? "strata-out" : out_dir; }  // --out or its default
};
void validate(const IoOptions& o);

// One run of a model: its options (Params, declared by the model) and the common ones.
struct RunOptions {
    explicit RunOptions(std::string model_name = {}, Params model_params = {})
        : model(std::move(model_name)), params(std::move(model_params)) {}
    std::string model;  // "apf", "heat2d", "heat3d", "wave3d"
    Params params;      // the model's options; anything not given takes its default
    std::optional<Precision> precision;  // none: the model's default (fp64; wave3d fp32)
    // --state-scale: auto, none or a power of two (app::choose_state_scale, docs/precision.md)
    std::string state_scale = "auto";
    Backend backend = Backend::cpu;
    std::string kernel;  // CUDA strategy; empty: the default for the problem
    bool graphs = true;
    int chunk = 0;
    int depth = 0;
    std::string json_path;
    std::string decomp;  // --decomp PxQ[xR]: the process grid under mpirun (empty: the model's, or slabs)
    std::string halos = "auto";  // --halos auto|mpi|nccl: how a CUDA run's halos travel between ranks
    bool overlap = true;        // false: --no-overlap (over NCCL, the exchange before each pass)
    IoOptions io;
    // CUDA runs without --kernel, --chunk or --depth: the device's wisdom (tune.hpp), or the
    // built-in defaults (--no-wisdom), or tuning first when the wisdom has no entry (--tune).
    using Wisdom = WisdomUse;
    Wisdom wisdom = Wisdom::use;
};

// Run, print the text report to `out`, return the same report as JSON (also written to
// o.json_path when set). UsageError for bad options, naming the first.
nlohmann::json run(const RunOptions& o, std::ostream& out);

// `strata render`: a saved field (.vti) or a checkpoint as a PNG (3D: the mid-plane across
// `axis`), values mapped from [lo, hi]. Returns the PNG's path (`png_path`, or FILE with .png).
std::string render_png(const std::string& file, std::string png_path, char axis, double lo, double hi);

// `strata run MODEL ...` parsed into the run's options as cli_main parses it, nothing run and no
// file opened: nullopt for another subcommand or a request for help, UsageError (cli_main's
// message) for bad input. The options' Params still go through the model's checks in run().
std::optional<RunOptions> parse_run_command(int argc, const char* const* argv);

// The whole command line: `strata run apf ...`, `strata info`, ... Returns the exit code.
// `out_is_terminal`: whether `out` is a terminal, where long runs show a progress bar.
int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
             bool out_is_terminal = false);

}  // namespace strata
