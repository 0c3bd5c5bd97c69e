#include "strata/models/heat3d.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <ostream>

#include "strata/core/error.hpp"
#include "strata/engine.hpp"
#include "strata/report.hpp"

namespace strata {

std::string_view to_string(HeatStencil s) {
    switch (s) {
        case HeatStencil::p7: return "7pt";
        case HeatStencil::p19: return "19pt";
        case HeatStencil::p27: return "27pt";
    }
    return "?";
}

HeatStencil parse_heat_stencil(std::string_view s) {
    if (s == "7pt" || s == "7") return HeatStencil::p7;
    if (s == "19pt" || s == "19") return HeatStencil::p19;
    if (s == "27pt" || s == "27") return HeatStencil::p27;
    throw UsageError("unknown stencil '" + std::string(s) + "' (expected 7pt, 19pt or 27pt)");
}

double HeatParams::spectral_radius_h2(HeatStencil s) {
    switch (s) {
        case HeatStencil::p7: return 12.0;
        case HeatStencil::p19: return 16.0 / 3.0;
        case HeatStencil::p27: return 184.0 / 30.0;
    }
    return 12.0;
}

HeatParams HeatParams::make(int n, HeatStencil stencil, double kappa, double safety) {
    return make_box(n, n, n, stencil, kappa, safety);
}

HeatParams HeatParams::make_box(int nx, int ny, int nz, HeatStencil stencil, double kappa, double safety) {
    HeatParams p;
    p.nx = nx;
    p.ny = ny;
    p.nz = nz;
    p.kappa = kappa;
    p.safety = safety;
    p.stencil = stencil;
    p.h = 1.0 / (nx + 1);
    // Explicit Euler is stable while dt * kappa * rho(L) <= 2.
    const double dt_max = 2.0 * p.h * p.h / (kappa * spectral_radius_h2(stencil));
    p.dt = safety * dt_max;
    p.c = kappa * p.dt / (p.h * p.h);
    return p;
}

HeatExact HeatExact::of(const HeatParams& p) {
    const double pi = std::numbers::pi;
    HeatExact e;
    e.kx = pi / (p.nx + 1);
    e.ky = pi / (p.ny + 1);
    e.kz = pi / (p.nz + 1);
    const double lx = (p.nx + 1) * p.h, ly = (p.ny + 1) * p.h, lz = (p.nz + 1) * p.h;
    e.rate = p.kappa * pi * pi * (1 / (lx * lx) + 1 / (ly * ly) + 1 / (lz * lz));
    return e;
}

void Heat3dProblem::Observer::at(double t) { decay = std::exp(-ex.rate * t); }

Observables Heat3dProblem::Observer::named(const Reduced (&r)[2], double cells) const {
    return {{"max_norm", r[0].max_abs}, {"l2norm", std::sqrt(r[0].sum_sq / cells)}, {"max_error", r[1].max_abs}};
}

ModelInfo Heat3dProblem::describe() {
    ModelInfo m;
    m.name = "heat3d";
    m.linear = true;  // a state scale changes nothing but fp16's range (problem.hpp)
    m.summary = "3D heat diffusion (7-, 19- or 27-point Laplacian)";
    m.help =
        "3D heat equation u_t = kappa lap(u) on a box (the unit cube by default) with Dirichlet 0\n"
        "boundaries, starting from sin(pi x / Lx) sin(pi y / Ly) sin(pi z / Lz); explicit Euler with\n"
        "dt = safety x the stencil's stability bound. Reports the max error against the exact solution.\n\n"
        "Examples:\n"
        "  strata run heat3d -n 128 --steps 200\n"
        "  strata run heat3d -n 512 --steps 100 --stencil 27pt --backend cuda --precision fp32\n"
        "  mpirun -np 2 strata run heat3d -n 512 --nz 1024 --backend cuda   # 512^3 per GPU, slabs along z\n"
        "  strata run heat3d -n 128 --steps 400 --every 100 --out heat   # .vti + mid-plane PNGs, heat/heat3d.pvd\n"
        "  strata run heat3d -n 128 --steps 400 --restart heat.ck --checkpoint heat2.ck";
    const std::vector<ParamSpec> box = box_params();
    m.params = {
        {"-n", "n", ParamKind::integer, "64", "Interior points per side (the grid is n^3 unless --nx/--ny/--nz)"},
        box[0],
        box[1],
        box[2],
        {"--steps", "steps", ParamKind::integer, "100", "Time steps"},
        {"--stencil", "stencil", ParamKind::text, "7pt", "7pt, 19pt or 27pt"},
        {"--kappa", "kappa", ParamKind::real, "1", "Diffusivity"},
        {"--safety", "safety", ParamKind::real, "0.5", "dt as a fraction of the stability bound, in (0, 1]"},
    };
    return m;
}

namespace {
// kappa, safety and the stencil from the options, checked.
HeatParams heat_params(const ParamReader& r, int nx, int ny, int nz) {
    const double kappa = r.real("kappa"), safety = r.real("safety");
    const HeatStencil stencil = parse_heat_stencil(r.text("stencil"));
    if (!(kappa > 0)) throw UsageError("--kappa must be positive");
    if (!(safety > 0 && safety <= 1))
        throw UsageError("--safety must be in (0, 1]: it is the fraction of the stability bound used as dt");
    return HeatParams::make_box(nx, ny, nz, stencil, kappa, safety);
}
}  // namespace

std::unique_ptr<Problem> Heat3dProblem::from_params(const Params& params, std::ostream&) {
    const ParamReader r(describe().params, params, "heat3d");
    const std::int64_t n = r.integer("n"), steps = r.integer("steps");
    if (n > 1 << 20) throw UsageError("-n " + std::to_string(n) + " is too large");
    const int nx = r.side("nx", n), ny = r.side("ny", n), nz = r.side("nz", n);
    for (const auto& [key, v] : {std::pair<const char*, int>{"nx", nx}, {"ny", ny}, {"nz", nz}})
        if (v < 3)
            throw UsageError((r.given(key) ? "--" + std::string(key) : std::string("-n")) + " must be at least 3 (got " +
                             std::to_string(v) + ")");
    if (steps < 0) throw UsageError("--steps must be >= 0 (got " + std::to_string(steps) + ")");
    return std::make_unique<Heat3dProblem>(heat_params(r, nx, ny, nz), steps);
}

std::unique_ptr<Problem> Heat3dProblem::box(const Params& params, int nx, int ny, int nz) {
    const ParamReader r(describe().params, params, "heat3d");
    return std::make_unique<Heat3dProblem>(heat_params(r, nx, ny, nz));
}

const ModelInfo& Heat3dProblem::model() const { return find_model("heat3d"); }

std::vector<std::pair<std::string, double>> Heat3dProblem::fingerprint() const {
    return {{"stencil", double(int(params.stencil))}, {"kappa", params.kappa}, {"safety", params.safety},
            {"h", params.h}, {"dt", params.dt}};
}

std::string Heat3dProblem::title() const {
    return "3D heat (heat3d), " + std::string(to_string(params.stencil)) + " stencil";
}

std::string Heat3dProblem::label() const {
    char buf[96];
    if (params.nx == params.ny && params.ny == params.nz)
        std::snprintf(buf, sizeof buf, "heat3d %s %d^3", std::string(to_string(params.stencil)).c_str(), params.nx);
    else
        std::snprintf(buf, sizeof buf, "heat3d %s %d x %d x %d", std::string(to_string(params.stencil)).c_str(),
                      params.nx, params.ny, params.nz);
    return buf;
}

void Heat3dProblem::describe(Report& r) const {
    const std::string grid = params.nx == params.ny && params.ny == params.nz
                                 ? std::to_string(params.nx) + "^3"
                                 : std::to_string(params.nx) + " x " + std::to_string(params.ny) + " x " + std::to_string(params.nz);
    r.line("grid %s, h = %g, kappa = %g, dt = %g (%g of the stability bound), %lld steps",
           {{"", grid}, {"h", params.h}, {"kappa", params.kappa}, {"dt", params.dt}, {"", params.safety},
            {"steps", steps_}});
    r.value("n", params.nx);
    r.value("nx", params.nx), r.value("ny", params.ny), r.value("nz", params.nz);
    r.value("stencil", to_string(params.stencil));
}

void Heat3dProblem::report(Engine& e, Report& r) const {
    const Observables o = e.observables();
    r.line("End at time: %g, step %lld", {{"t_end", t_end()}, {"", steps_}});
    r.line("Max norm: %.6e, L2norm: %.6e", {{"max_norm", o["max_norm"]}, {"l2norm", o["l2norm"]}});
    r.line("Max error vs exact: %.6e\n", {{"max_error", o["max_error"]}});
}

SnapshotSpec Heat3dProblem::snapshot_spec() const {
    const double h = params.h;
    return {"u", io::VtiGrid{params.nx, params.ny, params.nz, h, {h, h, h}, "u"}, 0.0, 1.0};
}

}  // namespace strata
