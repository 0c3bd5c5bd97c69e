#pragma once
// Running a model from start to report: what `strata run` does, as a library call.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/core/types.hpp"
#include "strata/models/heat3d.hpp"

namespace strata {

// Snapshots, checkpoints and progress, the same for every model.
struct IoOptions {
    std::string out_dir;  // --out: where snapshot frames and the .pvd go (wave3d: and the traces)
    std::int64_t snapshot_every = 0;    // --every (apf: also -p); 0: no snapshots
    int writer_threads = 0;             // --writer-threads; 0: min(hardware threads - 1, 16)
    std::string checkpoint_path;        // --checkpoint: written every --checkpoint-every steps and at the end
    std::int64_t checkpoint_every = 0;  // --checkpoint-every
    std::string restart_path;           // --restart: continue from this checkpoint
    bool progress = false;              // the one-line progress bar (the CLI: a terminal and no --quiet)

    std::string dir() const { return out_dir.empty() ? "strata-out" : out_dir; }  // --out or its default
};
void validate(const IoOptions& o);

struct ApfRunOptions {
    int n = 100;                             // -n: the mesh is (n+1)^2 points
    double t_final = 1500.0;                 // -t: simulated time to reach
    std::optional<std::int64_t> iterations;  // -i: exact step count (overrides -t)
    std::int64_t stats_every = 0;            // -s: print max|E| and L2 every k steps (0: never)
    std::int64_t plot_every = 0;             // -p: snapshots every k steps (as --every), into io.out_dir
    int px = 1, py = 1;                      // -x, -y: process geometry
    bool no_comm = false;                    // -k
    bool debug = false;                      // -d
    Precision precision = Precision::fp64;
    Backend backend = Backend::cpu;
    std::string kernel;
    bool graphs = true;
    int chunk = 0;
    int depth = 0;
    std::string json_path;
    IoOptions io;
};

struct HeatRunOptions {
    int n = 64;
    std::int64_t steps = 100;
    HeatStencil stencil = HeatStencil::p7;
    double kappa = 1.0;
    double safety = 0.5;
    Precision precision = Precision::fp64;
    Backend backend = Backend::cpu;
    std::string kernel;
    bool graphs = true;
    int chunk = 0;
    int depth = 0;
    std::string json_path;
    IoOptions io;
};

struct WaveRunOptions {
    int n = 128;             // points per side, unless nx/ny/nz say otherwise
    int nx = 0, ny = 0, nz = 0;
    std::int64_t steps = 500;
    double extent = 1;       // L: the box spans [0, L] along x; h = L / (nx - 1)
    std::string velocity = "1500";
    std::string velocity_file;
    double safety = 0.5;     // dt = safety x the CFL bound, unless dt is given
    double dt = 0;
    int sponge = -1;         // cells per face; -1: min(16, n / 8)
    std::vector<std::string> sources;  // "x,y,z[,f0]"; none: one at the centre
    std::string receivers_file;        // one "x,y,z" per line
    std::string receiver_line;         // "x0,y0,z0,x1,y1,z1,count"
    std::vector<double> range;         // --range LO HI of the snapshot pictures; empty: +-1/(4 pi 10 h)
    Precision precision = Precision::fp32;
    Backend backend = Backend::cpu;
    std::string kernel;
    bool graphs = true;
    int chunk = 0;
    int depth = 0;
    std::string json_path;
    IoOptions io;  // io.out_dir holds the traces too
};

// Throw UsageError naming the first bad option.
void validate(const ApfRunOptions& o);
void validate(const HeatRunOptions& o);
void validate(const WaveRunOptions& o);

// Run, print the text report to `out`, return the same report as JSON (also written to
// o.json_path when set).
nlohmann::json run_apf(const ApfRunOptions& o, std::ostream& out);
nlohmann::json run_heat3d(const HeatRunOptions& o, std::ostream& out);
nlohmann::json run_wave3d(const WaveRunOptions& o, std::ostream& out);

// `strata render`: a saved field (.vti) or a checkpoint as a PNG (3D: the mid-plane across
// `axis`), values mapped from [lo, hi]. Returns the PNG's path (`png_path`, or FILE with .png).
std::string render_png(const std::string& file, std::string png_path, char axis, double lo, double hi);

// The whole command line: `strata run apf ...`, `strata info`, ... Returns the exit code.
// `out_is_terminal`: whether `out` is a terminal, where long runs show a progress bar.
int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
             bool out_is_terminal = false);

}  // namespace strata
