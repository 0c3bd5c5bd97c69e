#pragma once
// Running a model from start to report: what `strata run` does, as a library call.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

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

// Throw UsageError naming the first bad option.
void validate(const ApfRunOptions& o);
void validate(const HeatRunOptions& o);

// Run, print the text report to `out`, return the same report as JSON (also written to
// o.json_path when set).
nlohmann::json run_apf(const ApfRunOptions& o, std::ostream& out);
nlohmann::json run_heat3d(const HeatRunOptions& o, std::ostream& out);

// The whole command line: `strata run apf ...`, `strata info`, ... Returns the exit code.
int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace strata
