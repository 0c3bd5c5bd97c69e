#pragma once
// `strata tune`, `strata wisdom`, and the wisdom's part in a run (tune.hpp has the search and the
// store). The tuner sits above the assembly: it builds the engines it measures (make_engine).
#include <iosfwd>
#include <string>
#include <vector>

#include "strata/engine.hpp"
#include "strata/params.hpp"
#include "strata/problem.hpp"
#include "strata/tune.hpp"

namespace strata {

struct TuneOptions {
    std::string model;
    Params params;
    std::vector<Precision> precisions;
    bool exhaustive = false;  // measure every candidate fully (the reference for the tuner)
    bool save = true;         // store the winner in the device's wisdom
    bool progress = false;    // a progress line (a terminal)
};
void run_tune(const TuneOptions& o, std::ostream& out);

// `strata wisdom show | export FILE | import FILE | forget [MODEL]`.
void run_wisdom_command(const std::string& action, const std::string& argument, std::ostream& out);

// The launch configuration of a CUDA run whose kernel, chunk and depth were not given (`eo` holds
// the run's options as given): the device's wisdom for the problem of these parameters (tuned
// first with WisdomUse::tune when there is none), else the built-in defaults. Sets `eo` and
// returns the report's line saying which. Over several ranks (`eo.decomp`, part of the key)
// rank 0 calls it alone, and it never tunes: tune_over_ranks does, on every rank. `progress`: a
// line on `out` (a terminal) that follows the tuning, round by round.
std::string choose_launch(const Problem& problem, const Params& params, Backend backend, Precision precision,
                          WisdomUse use, EngineOptions& eo, std::ostream& out, bool progress = false);
// --tune over several ranks where the wisdom has no entry for the run (every rank calls it): each
// kernel and depth measured on the whole run, link and all (measure_over_ranks); the winner set in
// `eo` and stored by rank 0. Returns the report's line.
std::string tune_over_ranks(const Problem& problem, const Params& params, Precision precision,
                            EngineOptions& eo, std::ostream& out, bool progress = false);

}  // namespace strata
