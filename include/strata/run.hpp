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

struct ApfRunOptions {
    int n = 100;                             // -n: the mesh is (n+1)^2 points
    double t_final = 1500.0;                 // -t: simulated time to reach
    std::optional<std::int64_t> iterations;  // -i: exact step count (overrides -t)
    std::int64_t stats_every = 0;            // -s: print max|E| and L2 every k steps (0: never)
    std::int64_t plot_every = 0;             // -p
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
    std::string out_dir = ".";
    Precision precision = Precision::fp32;
    Backend backend = Backend::cpu;
    std::string kernel;
    bool graphs = true;
    int chunk = 0;
    int depth = 0;
    std::string json_path;
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

// The whole command line: `strata run apf ...`, `strata info`, ... Returns the exit code.
int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace strata
