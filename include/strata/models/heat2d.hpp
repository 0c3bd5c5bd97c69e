#pragma once
// 2D heat equation u_t = kappa lap(u) on the unit square, Dirichlet 0 on the boundary, explicit
// Euler in time with the 5-point Laplacian: the classic 2D Jacobi benchmark. Everything about the
// model is in this file; src/models/CMakeLists.txt's strata_model() line registers it.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "strata/core/error.hpp"
#include "strata/core/field.hpp"
#include "strata/core/hd.hpp"
#include "strata/engine.hpp"
#include "strata/model.hpp"
#include "strata/problem.hpp"
#include "strata/report.hpp"

namespace strata {

// nx x ny unknowns with spacing h = 1/(nx+1): the unit square when nx = ny (what the CLI runs),
// a box of sides (n+1)h otherwise (the tests and the checks use odd boxes). Explicit Euler is
// stable while kappa dt 8 / h^2 <= 2 (8: the 5-point Laplacian's largest |eigenvalue| times h^2).
struct Heat2dParams {
    int nx = 0, ny = 0;
    double kappa = 1, safety = 0.5;  // dt = safety x the stability bound
    double h = 0, dt = 0, c = 0;     // c = kappa dt / h^2

    static Heat2dParams make(int nx, int ny, double kappa = 1, double safety = 0.5) {
        Heat2dParams p{nx, ny, kappa, safety};
        p.h = 1.0 / (nx + 1);
        p.dt = safety * p.h * p.h / (4 * kappa);
        p.c = kappa * p.dt / (p.h * p.h);
        return p;
    }
    Extent extent() const { return Extent{nx, ny, 1, 1, 2}; }
};

// One cell: u + c (the four neighbours - 4u), summed in this order by every backend. The model
// API (Fields, bind, load_point, store) is described at AlievPanfilov; the temporal strategies
// advance cells in registers with `update(nb, value)` and store runs of V cells with `write_run`.
template <class T>
struct Heat2D {
    using value_type = T;
    static constexpr int dims = 2;
    static constexpr int radius = 1;
    static constexpr int stencil_points = 5;
    static constexpr bool mirror = false;
    static constexpr bool star = true;
    static constexpr bool zero_ghosts = true;  // strategies may zero-fill ghosts instead of reading them
    static constexpr int flops_per_cell = 7;   // 3 adds of the neighbours, 4u, the difference, c*, u+
    static constexpr int min_bytes_per_cell = 2 * sizeof(T);  // read u, write u_next

    struct Fields {
        const T* in;
        T* out;
    };
    struct Point {};

    using R = compute_t<T>;  // the arithmetic (fp32 for 16-bit storage)
    R c;

    explicit Heat2D(const Heat2dParams& p) : c(R(p.c)) {}

    STRATA_HD static Fields bind(const FieldPtrs<T, 1>& b) { return {b.in[0], b.out[0]}; }
    STRATA_HD Point load_point(const Fields&, std::int64_t) const { return {}; }

    template <class Nb>
    STRATA_HD T update(const Nb& u) const {
        const R x = u(0, 0);
        return x + c * ((R(u(-1, 0)) + R(u(1, 0))) + (R(u(0, -1)) + R(u(0, 1))) - R(4) * x);
    }
    template <class Nb>
    STRATA_HD void update(const Nb& u, T& out) const {
        out = update(u);
    }
    template <class Nb>
    STRATA_HD void store(const Nb& u, Point, const Fields& f, std::int64_t i) const {
        f.out[i] = update(u);
    }
    STRATA_HD void write(T u, const Fields& f, std::int64_t i) const { f.out[i] = u; }
    template <int V>
    struct alignas(sizeof(T) * V) Run {
        T v[V];
    };
    template <int V>
    STRATA_HD void write_run(const Run<V>& u, const Fields& f, std::int64_t i) const {
        *reinterpret_cast<Run<V>*>(f.out + i) = u;
    }
};

// The model as the engines and the run driver see it (model.hpp, problem.hpp): `strata run heat2d`.
class Heat2dProblem final : public Problem {
public:
    static constexpr FieldDecl fields[] = {{"u", FieldRole::stencil, 0, 1}};
    template <class T>
    using Kernel = Heat2D<T>;
    template <class T, class F>
    decltype(auto) with_kernel(F&& f) const {
        return f(Heat2D<T>(params));
    }
    template <class T>
    std::vector<std::pair<std::string, HostField<T>>> coefficients() const {
        return {};
    }

    // The exact solution, the lowest mode sin(pi x/Lx) sin(pi y/Ly), decaying as
    // exp(-kappa pi^2 (1/Lx^2 + 1/Ly^2) t); kx, ky: pi h / L, the phase per grid index.
    struct Exact {
        double kx, ky, rate;
        STRATA_HD double mode(int i, int j) const { return sin(kx * (i + 1)) * sin(ky * (j + 1)); }
    };
    Exact exact() const {
        const double pi = std::numbers::pi, lx = (params.nx + 1) * params.h, ly = (params.ny + 1) * params.h;
        return {pi / (params.nx + 1), pi / (params.ny + 1), params.kappa * pi * pi * (1 / (lx * lx) + 1 / (ly * ly))};
    }
    struct Initial {
        Exact ex;
        STRATA_HD double operator()(int, int i, int j, int) const { return ex.mode(i, j); }
    };
    Initial initial() const { return {exact()}; }

    // max |u|, sqrt(mean u^2), and the max error against the exact solution at time t.
    struct Observer {
        static constexpr int count = 2;
        Exact ex;
        double decay = 1;
        void at(double t) { decay = std::exp(-ex.rate * t); }
        template <class C>
        STRATA_HD void operator()(const C& c, double (&v)[2]) const {
            v[0] = c(0);
            v[1] = v[0] - decay * ex.mode(c.i, c.j);
        }
        Observables named(const Reduced (&r)[2], double cells) const {
            return {{"max_norm", r[0].max_abs}, {"l2norm", std::sqrt(r[0].sum_sq / cells)}, {"max_error", r[1].max_abs}};
        }
    };
    Observer observer() const { return {exact()}; }

    explicit Heat2dProblem(const Heat2dParams& p, std::int64_t steps = 1) : params(p), steps_(steps) {}

    static ModelInfo describe() {
        ModelInfo m;
        m.name = "heat2d";
        m.linear = true;  // a state scale changes nothing but fp16's range (problem.hpp)
        m.summary = "2D heat diffusion (5-point Laplacian), the classic 2D Jacobi benchmark";
        m.help =
            "2D heat equation u_t = kappa lap(u) on the unit square with Dirichlet 0 boundaries,\n"
            "starting from sin(pi x) sin(pi y); explicit Euler with the 5-point Laplacian and dt =\n"
            "safety x the stability bound h^2 / (4 kappa). Reports the max error against the exact\n"
            "solution.\n\n"
            "Examples:\n"
            "  strata run heat2d -n 1024 --steps 1000\n"
            "  strata run heat2d -n 8192 --steps 1200 --backend cuda --precision fp32 --depth 8\n"
            "  strata run heat2d -n 512 --steps 400 --every 100 --out heat   # .vti + PNG, heat/heat2d.pvd";
        m.params = {
            {"-n", "n", ParamKind::integer, "512", "Interior points per side (the grid is n^2)"},
            {"--steps", "steps", ParamKind::integer, "100", "Time steps"},
            {"--kappa", "kappa", ParamKind::real, "1", "Diffusivity"},
            {"--safety", "safety", ParamKind::real, "0.5", "dt as a fraction of the stability bound, in (0, 1]"},
        };
        return m;
    }
    static std::unique_ptr<Problem> box(const Params& params, int nx, int ny, int) {
        const ParamReader r(describe().params, params, "heat2d");
        const double kappa = r.real("kappa"), safety = r.real("safety");
        if (!(kappa > 0)) throw UsageError("--kappa must be positive");
        if (!(safety > 0 && safety <= 1))
            throw UsageError("--safety must be in (0, 1]: it is the fraction of the stability bound used as dt");
        return std::make_unique<Heat2dProblem>(Heat2dParams::make(nx, ny, kappa, safety));
    }
    static std::unique_ptr<Problem> from_params(const Params& params, std::ostream&) {
        const ParamReader r(describe().params, params, "heat2d");
        const std::int64_t n = r.integer("n"), steps = r.integer("steps");
        if (n < 3 || n > 1 << 30) throw UsageError("-n must be from 3 to 2^30 (got " + std::to_string(n) + ")");
        if (steps < 0) throw UsageError("--steps must be >= 0 (got " + std::to_string(steps) + ")");
        auto p = box(params, int(n), int(n), 1);
        static_cast<Heat2dProblem&>(*p).steps_ = steps;
        return p;
    }

    const ModelInfo& model() const override { return find_model("heat2d"); }
    Extent extent() const override { return params.extent(); }
    double dt() const override { return params.dt; }
    std::int64_t steps() const override { return steps_; }
    std::vector<std::pair<std::string, double>> fingerprint() const override {
        return {{"kappa", params.kappa}, {"safety", params.safety}, {"h", params.h}, {"dt", params.dt}};
    }
    std::string title() const override { return "2D heat (heat2d), 5-point stencil"; }
    std::string label() const override {
        char buf[64];
        std::snprintf(buf, sizeof buf, "heat2d %d x %d", params.nx, params.ny);
        return buf;
    }
    void describe(Report& r) const override {
        r.line("grid %d x %d, h = %g, kappa = %g, dt = %g (%g of the stability bound), %lld steps",
               {{"nx", params.nx}, {"ny", params.ny}, {"h", params.h}, {"kappa", params.kappa}, {"dt", params.dt},
                {"safety", params.safety}, {"steps", steps_}});
    }
    void report(Engine& e, Report& r) const override {
        const Observables o = e.observables();
        r.line("End at time: %g, step %lld", {{"t_end", t_end()}, {"", steps_}});
        r.line("Max norm: %.6e, L2norm: %.6e", {{"max_norm", o["max_norm"]}, {"l2norm", o["l2norm"]}});
        r.line("Max error vs exact: %.6e\n", {{"max_error", o["max_error"]}});
    }
    SnapshotSpec snapshot_spec() const override {
        const double h = params.h;
        return {"u", io::VtiGrid{params.nx, params.ny, 1, h, {h, h, 0}, "u"}, 0.0, 1.0};
    }

    Heat2dParams params;

private:
    std::int64_t steps_;
};

}  // namespace strata
