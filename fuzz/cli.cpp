// The command line, options to problem: the input is argv, one argument per line, after
// "strata"; a `strata run MODEL ...` is parsed as cli_main parses it, and its problem built and
// checked as run() does before it makes an engine. Bad input must be a UsageError.
//
// The grid's sides are bounded here, not by the fuzzer's -rss_limit_mb: the problem holds
// grid-sized data (wave3d's velocities) and its memory check allows whatever the machine has, so
// an -n of a few thousand is a valid request for gigabytes, slow to fill but not wrong. Sides
// above kMaxSide are skipped; every other option keeps its full range.
#include <sstream>
#include <string>
#include <vector>

#include "strata/core/error.hpp"
#include "strata/problem.hpp"
#include "strata/report.hpp"
#include "strata/run.hpp"

namespace {

constexpr std::int64_t kMaxSide = 64;

bool grid_too_large(const strata::Params& params) {
    for (const char* side : {"n", "nx", "ny", "nz"})
        if (const strata::Params::Value* v = params.find(side))
            if (const auto* n = std::get_if<std::int64_t>(v); n && *n > kMaxSide) return true;
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> args{"strata"};
    std::istringstream lines(std::string(reinterpret_cast<const char*>(data), size));
    for (std::string arg; std::getline(lines, arg);) args.push_back(arg);
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    try {
        const std::optional<strata::RunOptions> o = strata::parse_run_command(int(argv.size()), argv.data());
        if (!o || grid_too_large(o->params)) return 0;
        std::ostringstream out;
        const std::unique_ptr<strata::Problem> problem = strata::find_model(o->model).problem(o->params, out);
        problem->check(o->io.snapshot_every);
        strata::validate(o->io);
        strata::Report r(out);
        problem->describe(r);
        problem->fingerprint();
    } catch (const strata::UsageError&) {
    }
    return 0;
}
