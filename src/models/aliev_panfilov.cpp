#include "strata/models/aliev_panfilov.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "strata/core/error.hpp"
#include "strata/engine.hpp"
#include "strata/report.hpp"

namespace strata {

ApfParams ApfParams::for_mesh(int n, int m) {
    ApfParams p;
    p.n = n;
    p.m = m < 0 ? n : m;
    p.dx = 1.0 / n;
    const double rp = kk * (b + 1) * (b + 1) / 4;
    const double dte = (p.dx * p.dx) / (d * 4 + (p.dx * p.dx) * (rp + kk));
    const double dtr = 1 / (epsilon + (M1 / M2) * rp);
    p.dt = (dte < dtr) ? 0.95 * dte : 0.95 * dtr;
    p.alpha = d * p.dt / (p.dx * p.dx);
    return p;
}

ApfProblem::ApfProblem(const ApfParams& p, std::int64_t steps) : params(p), schedule{steps, double(steps) * p.dt} {}

ModelInfo ApfProblem::describe() {
    ModelInfo m;
    m.name = "apf";
    m.summary = "The Aliev-Panfilov cardiac model (the classic apf program)";
    m.help =
        "Aliev-Panfilov cardiac electrophysiology on an (n+1)x(n+1) mesh, exactly as the classic\n"
        "UCSD `apf` program computes it (same constants, initial state, mirror boundaries and dt\n"
        "rule; the final Max norm and L2norm match it to rounding).\n\n"
        "Examples:\n"
        "  strata run apf                       # n=100 to t=1500, as the classic default\n"
        "  strata run apf -n 256 -i 500         # exactly 500 iterations\n"
        "  strata run apf -n 6144 -t 0.04 --backend cuda --precision fp32\n"
        "  strata run apf -n 512 -i 2000 -p 100 --out frames   # E as PNG + .vti every 100, frames/apf.pvd\n"
        "  strata run apf -n 512 -i 2000 --checkpoint-every 500 --checkpoint apf.ck\n"
        "  strata run apf -n 512 -i 2000 --restart apf.ck       # continues to iteration 2000";
    m.step_noun = "iteration";
    m.last_step = "last (%lld)";
    m.n_offset = 1;
    m.params = {
        {"-n", "n", ParamKind::integer, "100", "Mesh size: (n+1)x(n+1) points, n > 25"},
        {"-t", "t_final", ParamKind::real, "1500", "Simulated time to reach"},
        {"-i", "iterations", ParamKind::integer, "", "Run exactly this many iterations (overrides -t)"},
        {"-s", "stats_every", ParamKind::integer, "0", "Print Max norm and L2norm every k iterations (0: never)"},
        {"-p", "plot_every", ParamKind::integer, "", "Snapshot (PNG + .vti of E) every k iterations, as --every"},
        {"-x", "px", ParamKind::integer, "1", "Ranks along x (mpirun -np X*Y): the mesh split in X x Y parts"},
        {"-y", "py", ParamKind::integer, "1", "Ranks along y"},
        {"-k", "no_comm", ParamKind::flag, "", "Never exchange the halos (timing experiments only: the result then differs)"},
        {"-d", "debug", ParamKind::flag, "", "Debug: print the final mesh (n <= 32)"},
    };
    for (ParamSpec& p : m.params) p.run_only = p.key == "stats_every" || p.key == "plot_every" || p.key == "debug";
    return m;
}

std::unique_ptr<Problem> ApfProblem::from_params(const Params& params, std::ostream&) {
    const ParamReader r(describe().params, params, "apf");
    const std::int64_t n = r.integer("n");
    const double t_final = r.real("t_final");
    if (n <= 25) throw UsageError("-n must be greater than 25 (got " + std::to_string(n) + ")");
    if (n > 1 << 30) throw UsageError("-n " + std::to_string(n) + " is too large");
    const bool by_count = r.given("iterations");
    const std::int64_t iterations = by_count ? r.integer("iterations") : 0;
    if (!by_count && !(t_final > 0))
        throw UsageError("-t must be a positive simulated time (got " + std::to_string(t_final) + ")");
    if (by_count && iterations < 1)
        throw UsageError("-i must be a positive number of iterations (got " + std::to_string(iterations) + ")");
    auto p = std::make_unique<ApfProblem>(ApfParams::for_mesh(int(n)));
    p->stats_every = r.integer("stats_every");
    p->plot_every = r.given("plot_every") ? r.integer("plot_every") : 0;
    p->no_comm = r.flag("no_comm");
    p->debug = r.flag("debug");
    if (p->stats_every < 0) throw UsageError("-s must be >= 0 (got " + std::to_string(p->stats_every) + ")");
    if (p->plot_every < 0) throw UsageError("-p must be >= 0 (got " + std::to_string(p->plot_every) + ")");
    const std::int64_t px = r.integer("px"), py = r.integer("py");
    const std::string geometry = std::to_string(px) + " x " + std::to_string(py);
    if (px < 1 || py < 1) throw UsageError("-x and -y must be >= 1 (got " + geometry + ")");
    if (px > n + 1 || py > n + 1)  // the product then fits an int64
        throw UsageError("processor geometry " + geometry + " has more parts than the " + std::to_string(n + 1) +
                         " x " + std::to_string(n + 1) + " mesh has points along a side");
    p->px = int(px);
    p->py = int(py);
    // -t is reached as the classic program does, one `t += dt` at a time (problem.hpp).
    const double dt = p->params.dt;
    p->schedule = by_count ? ApfSchedule{iterations, double(iterations) * dt} : schedule_for_time(dt, t_final, "-t", "-i");
    return p;
}

std::unique_ptr<Problem> ApfProblem::box(const Params&, int nx, int ny, int) {
    return std::make_unique<ApfProblem>(ApfParams::for_mesh(nx - 1, ny - 1));
}

const ModelInfo& ApfProblem::model() const { return find_model("apf"); }

std::vector<std::pair<std::string, double>> ApfProblem::fingerprint() const {
    return {{"n", params.n}, {"m", params.m}, {"dt", params.dt}, {"alpha", params.alpha}};
}

std::string ApfProblem::label() const {
    char buf[96];
    std::snprintf(buf, sizeof buf, "apf n=%d (%d x %d points)", params.n, params.n + 1, params.m + 1);
    return buf;
}

void ApfProblem::describe(Report& r) const {
    r.line("dt= %g, # iters = %lld", {{"dt", params.dt}, {"iterations", schedule.steps}});
    r.line("m x n = %d x %d", {{"", params.n}, {"n", params.n}});
    r.line("processor geometry: %d x %d", {{"", px}, {"", py}});
    r.value("geometry", {px, py});
    r.value("no_comm", no_comm);
    r.value("alpha", params.alpha);
    r.value("mesh_points", extent().cells());
    if (no_comm && px == 1 && py == 1) r.text("-k: no halo communication requested (a 1 x 1 geometry has none to skip)\n");
    if (no_comm && (px > 1 || py > 1))
        r.text("-k: the halos are never exchanged (timing only): each rank's part evolves alone and the norms "
               "differ from a communicating run's\n");
}

Observables ApfProblem::Observer::named(const Reduced (&r)[1], double cells) const {
    return {{"max_norm", r[0].max_abs}, {"l2norm", std::sqrt(r[0].sum_sq / cells)}};
}

void ApfProblem::report(Engine& e, Report& r) const {
    if (debug) {
        if (params.n <= 32) {
            r.text("E at the end (mesh points, row j = 1 first):\n");
            const std::vector<double> v = e.values("E");
            char buf[32];
            for (int j = 0; j <= params.m; ++j) {
                for (int i = 0; i <= params.n; ++i) {
                    std::snprintf(buf, sizeof buf, "%6.3f ", v[std::size_t(j) * (params.n + 1) + i]);
                    r.text(buf);
                }
                r.text("\n");
            }
        } else {
            r.text("-d: the mesh is too large to print (n > 32)\n");
        }
    }
    const Observables o = e.observables();
    r.line("End at time: %g, iteration %lld", {{"t_end", schedule.t_end}, {"iterations", schedule.steps}});
    r.line("Max norm: %.6e, L2norm: %.6e\n", {{"max_norm", o["max_norm"]}, {"l2norm", o["l2norm"]}});
}

std::vector<ModelHook> ApfProblem::hooks() const {
    return {{stats_every, [](Engine& e, std::ostream& out, std::int64_t step) {
                 const Observables o = e.observables();
                 char buf[160];
                 std::snprintf(buf, sizeof buf, "iteration = %lld, Max norm: %.6e, L2norm: %.6e\n",
                               static_cast<long long>(step), o["max_norm"], o["l2norm"]);
                 out << buf;
             }}};
}

SnapshotSpec ApfProblem::snapshot_spec() const {
    return {"E", io::VtiGrid{params.n + 1, params.m + 1, 1, params.dx, {0, 0, 0}, "E"}, 0.0, 1.0};
}

void ApfProblem::check(std::int64_t every) const {
    if (plot_every > 0 && every > 0 && plot_every != every)
        throw UsageError("-p and --every ask for different snapshot intervals (" + std::to_string(plot_every) +
                         " and " + std::to_string(every) + "): give one");
}

}  // namespace strata
