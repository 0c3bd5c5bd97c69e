// The Problem that every model generated from a stencil file shares (stencil/model.hpp).
#include "stencil/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "stencil/build.hpp"
#include "strata/core/error.hpp"
#include "strata/engine.hpp"
#include "strata/report.hpp"

namespace strata::stencil {

namespace {

const char* boundary_name(Boundary b) {
    switch (b) {
        case Boundary::zero: return "zero";
        case Boundary::fixed: return "fixed";
        case Boundary::periodic: return "periodic";
        case Boundary::mirror: return "mirror";
    }
    return "?";
}

// "c = 0.2, dt = 1" (or with `sep` "=" and ","): params as the report and the help print them
// (without a grid, a formula's value is not known: the help says so).
std::string params_text(const Spec& spec, const std::vector<double>& values, const char* eq, const char* sep) {
    std::string text;
    for (std::size_t i = 0; i < spec.params.size(); ++i) {
        char v[64];
        std::snprintf(v, sizeof v, "%g", values[i]);
        text += (i ? sep : "") + spec.params[i].first + eq + (std::isnan(values[i]) ? "(from the grid)" : v);
    }
    return text;
}

// The params on the run's grid, --params NAME=VALUE,... replacing the file's.
std::vector<double> run_params(const Spec& spec, const ParamReader& r, const Setup& grid) {
    if (!r.given("params")) return resolve_params(spec, grid.nx, grid.ny, grid.nz);
    Spec s = spec;
    override_params(s, r.text("params"));
    return resolve_params(s, grid.nx, grid.ny, grid.nz);
}

// A periodic boundary's ghost cells come from a period away, so the grid must be at least as wide
// as the stencil's radius along every axis.
void check_sides(const Spec& spec, const Setup& s) {
    if (spec.boundary != Boundary::periodic) return;
    const int r = spec.radius(), n = std::min({s.nx, s.ny, spec.dims == 3 ? s.nz : s.nx});
    if (n < r)
        throw UsageError("a periodic grid needs at least the stencil's radius (" + std::to_string(r) +
                         ") cells along every axis, and this one has " + std::to_string(n));
}

// Whether an expression scales with the state (ModelInfo::linear): its degree in the state
// fields' values under a scale s > 0, 0 (unchanged: numbers, params, coefficients, ratios and
// comparisons of scaled values) or 1 (times s), or -1 when it is neither (u * u, u + 1, exp(u)).
// Conservative: what it cannot show scales (sqrt(u * u)) is -1.
int degree(const Expr& e, const Spec& spec) {
    auto zero = [](const Expr& x) { return x.kind == Expr::Kind::number && x.value == 0; };
    auto both = [&](int a, int b) { return a == b ? a : -1; };
    switch (e.kind) {
        case Expr::Kind::number:
        case Expr::Kind::param:
        case Expr::Kind::coordinate:
        case Expr::Kind::grid: return 0;
        case Expr::Kind::field: {
            const FieldDef* f = spec.field(e.name);
            return f && f->coefficient ? 0 : 1;
        }
        case Expr::Kind::local: {
            const Update* let = spec.local(e.name);
            return let ? degree(*let->value, spec) : -1;
        }
        case Expr::Kind::unary: {
            const int a = degree(*e.args[0], spec);
            return e.op == "-" ? a : (a == 0 ? 0 : -1);
        }
        case Expr::Kind::binary: {
            const Expr &x = *e.args[0], &y = *e.args[1];
            const int a = degree(x, spec), b = degree(y, spec);
            if (a < 0 || b < 0) return -1;
            if (e.op == "+" || e.op == "-") return zero(x) ? b : zero(y) ? a : both(a, b);
            if (e.op == "*") return a + b <= 1 ? a + b : -1;
            if (e.op == "/") return b == 0 ? a : (a == 1 ? 0 : -1);
            if (e.op == "&&" || e.op == "||") return a == 0 && b == 0 ? 0 : -1;
            // A comparison keeps its truth when both sides scale alike, or one is 0 (s > 0).
            return a == b || zero(x) || zero(y) ? 0 : -1;
        }
        case Expr::Kind::call: {
            std::vector<int> d;
            for (const ExprPtr& a : e.args) d.push_back(degree(*a, spec));
            if (std::find(d.begin(), d.end(), -1) != d.end()) return -1;
            if (e.name == "lap") return d.empty() ? -1 : d[0];
            if (e.name == "abs") return d.size() == 1 ? d[0] : -1;
            if (e.name == "min" || e.name == "max") return d.size() == 2 ? both(d[0], d[1]) : -1;
            return std::all_of(d.begin(), d.end(), [](int x) { return x == 0; }) ? 0 : -1;
        }
    }
    return -1;
}

}  // namespace

StencilProblem::StencilProblem(std::shared_ptr<const Spec> spec, const ModelInfo* info, Setup setup)
    : spec_(std::move(spec)), info_(info), setup_(std::move(setup)) {}

Extent StencilProblem::extent() const {
    return Extent{setup_.nx, setup_.ny, spec_->dims == 3 ? setup_.nz : 1, std::max(spec_->radius(), 1), spec_->dims};
}

double StencilProblem::dt() const {
    for (std::size_t i = 0; i < spec_->params.size(); ++i)
        if (spec_->params[i].first == "dt") return setup_.params[i];
    return 1;
}

double StencilProblem::t_end() const { return setup_.t_end ? *setup_.t_end : double(setup_.steps) * dt(); }

std::vector<std::pair<std::string, double>> StencilProblem::fingerprint() const {
    std::vector<std::pair<std::string, double>> f;
    for (std::size_t i = 0; i < spec_->params.size(); ++i) f.emplace_back(spec_->params[i].first, setup_.params[i]);
    return f;
}

std::string StencilProblem::title() const { return spec_->path + " (a model generated from the stencil file)"; }

std::string StencilProblem::label() const {
    char buf[160];
    if (spec_->dims == 2)
        std::snprintf(buf, sizeof buf, "%s %d x %d", info_->name.c_str(), setup_.nx, setup_.ny);
    else
        std::snprintf(buf, sizeof buf, "%s %d x %d x %d", info_->name.c_str(), setup_.nx, setup_.ny, setup_.nz);
    return buf;
}

void StencilProblem::describe(Report& r) const {
    if (spec_->dims == 2)
        r.line("grid %d x %d, boundary %s, %lld steps",
               {{"nx", setup_.nx}, {"ny", setup_.ny}, {"boundary", boundary_name(spec_->boundary)}, {"steps", setup_.steps}});
    else
        r.line("grid %d x %d x %d, boundary %s, %lld steps",
               {{"nx", setup_.nx},
                {"ny", setup_.ny},
                {"nz", setup_.nz},
                {"boundary", boundary_name(spec_->boundary)},
                {"steps", setup_.steps}});
    for (std::size_t i = 0; i < spec_->params.size(); ++i) r.value("param_" + spec_->params[i].first, setup_.params[i]);
    const std::string params = params_text(*spec_, setup_.params, " = ", ", ");
    if (!params.empty()) r.text("params: " + params + "\n");
    const LoadStats l = load_stats(*info_);
    r.line(l.compiled ? "model: generated and compiled in %.3g s (%s)" : "model: from the cache in %.3g s (%s)",
           {{"model_load_s", l.seconds}, {"model_object", l.object}});
    // (Under a millisecond it found no GPU: not worth a line.)
    if (l.cuda && l.driver_seconds >= 1e-3)
        r.line("CUDA driver: started in %.3g s, before the model's load",
               {{"cuda_start_s", l.driver_seconds}});
}

std::vector<double> StencilProblem::file_values(const std::string& name) const {
    const FieldDef* f = spec_->field(name);
    if (!f || f->file.empty()) return {};
    namespace fs = std::filesystem;
    const fs::path path = fs::path(f->file).is_absolute() ? fs::path(f->file) : fs::path(spec_->path).parent_path() / f->file;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error_at(*spec_, f->at, "cannot read " + path.string() + " (" + std::strerror(errno) + ")");
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const Extent e = extent();
    const std::size_t cells = std::size_t(e.cells());
    std::vector<double> v(cells);
    if (bytes.size() == cells * sizeof(float)) {
        for (std::size_t n = 0; n < cells; ++n) {
            float x;
            std::memcpy(&x, bytes.data() + n * sizeof x, sizeof x);
            v[n] = x;
        }
    } else if (bytes.size() == cells * sizeof(double)) {
        std::memcpy(v.data(), bytes.data(), bytes.size());
    } else {
        const std::string grid = spec_->dims == 2 ? std::to_string(e.nx) + " x " + std::to_string(e.ny)
                                                  : std::to_string(e.nx) + " x " + std::to_string(e.ny) + " x " +
                                                        std::to_string(e.nz);
        throw error_at(*spec_, f->at,
                       path.string() + " holds " + std::to_string(bytes.size()) + " bytes; the " + grid + " grid needs " +
                           std::to_string(cells * 4) + " (float32) or " + std::to_string(cells * 8) +
                           " (float64), x fastest");
    }
    return v;
}

Observables StencilProblem::named(const Reduced* red, int count, double cells) const {
    std::vector<std::pair<std::string, double>> v;
    int n = 0;
    for (const FieldDef& f : spec_->fields) {
        if (f.coefficient || n >= count) continue;
        v.emplace_back("max_" + f.name, red[n].max_abs);
        v.emplace_back("rms_" + f.name, std::sqrt(red[n].sum_sq / cells));
        ++n;
    }
    return Observables(std::move(v));
}

void StencilProblem::report(Engine& e, Report& r) const {
    const Observables o = e.observables();
    r.line("End at time: %g, step %lld", {{"t_end", t_end()}, {"", setup_.steps}});
    for (const FieldDef& f : spec_->fields) {
        if (f.coefficient) continue;
        r.line(("max |" + f.name + "|: %.6e, rms " + f.name + ": %.6e").c_str(),
               {{"max_" + f.name, o["max_" + f.name]}, {"rms_" + f.name, o["rms_" + f.name]}});
    }
    r.text("\n");
}

SnapshotSpec StencilProblem::snapshot_spec() const {
    // The first field the file updates, on the unit box: cell centres at (i + 1/2) h.
    std::string field;
    for (const FieldDef& f : spec_->fields)
        if (!f.coefficient) {
            field = f.name;
            break;
        }
    const double h = 1.0 / std::max({setup_.nx, setup_.ny, spec_->dims == 3 ? setup_.nz : 1});
    const int nz = spec_->dims == 3 ? setup_.nz : 1;
    return {field, io::VtiGrid{setup_.nx, setup_.ny, nz, h, {h / 2, h / 2, spec_->dims == 3 ? h / 2 : 0}, field},
            0.0, 1.0};
}

bool scales_linearly(const Spec& spec) {
    if (spec.boundary == Boundary::fixed && spec.boundary_value != 0) return false;  // ghosts of V: affine
    for (const Update& u : spec.updates)
        if (!u.local && degree(*u.value, spec) != 1) return false;
    return true;
}

ModelInfo describe_stencil(const Spec& spec, const std::string& name) {
    ModelInfo m;
    m.name = name;
    m.summary = "the stencil file " + spec.path;
    std::vector<double> values;
    for (const auto& p : spec.params) values.push_back(p.second);
    const std::string params = params_text(spec, values, "=", ", ");
    m.help = "A model from the stencil file " + spec.path + " (docs/stencil-language.md), generated into the\n" +
             "engines' model functor and compiled at the first run (cached: ~/.cache/strata/kernels).\n" +
             (params.empty() ? std::string("It has no params.\n") : "Params: " + params + " (--params NAME=VALUE,...).\n") +
             "\nExamples:\n  strata run " + spec.path + " -n 512 --steps 1000\n  strata run " + spec.path +
             " --backend cuda --kernel list\n  strata show " + spec.path + "   # the generated model";
    m.precision = Precision::fp64;
    m.linear = scales_linearly(spec);
    const std::string side = spec.dims == 2 ? "256" : "64";
    m.params = {
        {"-n", "n", ParamKind::integer, side, "Cells per side (the grid is n^" + std::to_string(spec.dims) + ")"},
        {"--nx", "nx", ParamKind::integer, "0", "Cells along x (0: n)"},
        {"--ny", "ny", ParamKind::integer, "0", "Cells along y (0: n)"},
        {"--steps", "steps", ParamKind::integer, "100", "Time steps"},
        {"-t,--time", "time", ParamKind::real, "",
         "Simulated time to reach instead of --steps, in steps of the param dt (the classic apf rule: t += dt while t < T)"},
        {"--params", "params", ParamKind::text, "", "NAME=VALUE,... replacing the file's params"},
    };
    if (spec.dims == 3)
        m.params.insert(m.params.begin() + 3, {"--nz", "nz", ParamKind::integer, "0", "Cells along z (0: n)"});
    return m;
}

Setup stencil_setup(const Spec& spec, const ModelInfo& info, const Params& params) {
    const ParamReader r(info.params, params, info.name);
    const std::int64_t n = r.integer("n"), steps = r.integer("steps");
    auto side = [&](const char* key) {
        const std::int64_t v = r.given(key) ? r.integer(key) : 0;
        const std::int64_t s = v > 0 ? v : n;
        if (s < 3 || s > 1 << 30)
            throw UsageError(std::string(v > 0 ? "--" : "-") + (v > 0 ? key : "n") + " must be from 3 to 2^30 (got " +
                             std::to_string(s) + ")");
        return int(s);
    };
    if (steps < 0) throw UsageError("--steps must be >= 0 (got " + std::to_string(steps) + ")");
    Setup s;
    s.nx = side("nx");
    s.ny = side("ny");
    s.nz = spec.dims == 3 ? side("nz") : 1;
    s.steps = steps;
    s.params = run_params(spec, r, s);
    check_sides(spec, s);
    if (r.given("time")) {
        if (r.given("steps")) throw UsageError("--steps and -t/--time both say when to stop: give one");
        const auto dt = std::find_if(spec.params.begin(), spec.params.end(), [](const auto& p) { return p.first == "dt"; });
        if (dt == spec.params.end())
            throw UsageError("-t/--time counts steps of the param dt, and " + spec.path + " has none: give --steps");
        const TimeSchedule t = schedule_for_time(s.params[std::size_t(dt - spec.params.begin())], r.real("time"), "-t",
                                                 "--steps");
        s.steps = t.steps;
        s.t_end = t.t_end;
    }
    return s;
}

Setup stencil_box(const Spec& spec, const ModelInfo& info, const Params& params, int nx, int ny, int nz) {
    const ParamReader r(info.params, params, info.name);
    Setup s;
    s.nx = nx;
    s.ny = ny;
    s.nz = spec.dims == 3 ? nz : 1;
    s.steps = 1;
    s.params = run_params(spec, r, s);
    check_sides(spec, s);
    return s;
}

}  // namespace strata::stencil
