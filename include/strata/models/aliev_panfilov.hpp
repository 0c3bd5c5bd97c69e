#pragma once
// The Aliev-Panfilov cardiac model exactly as the classic UCSD `apf` program computes it:
// the same constants, mesh, initial state, mirror boundaries, time step rule and statistics.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "strata/core/field.hpp"
#include "strata/core/hd.hpp"
#include "strata/model.hpp"
#include "strata/problem.hpp"

namespace strata {

// The model's constants and the derived step sizes. Always double precision, whatever the
// precision of the fields, as in the classic program.
struct ApfParams {
    static constexpr double a = 0.1, b = 0.1, kk = 8.0, M1 = 0.07, M2 = 0.3, epsilon = 0.01,
                            d = 5e-5;
    int n = 0;  // the mesh has (m+1) rows of (n+1) points; dx = 1/n
    int m = 0;  // the classic program always has m = n; tests use m != n to catch x/y mix-ups
    double dx = 0, dt = 0, alpha = 0;

    static ApfParams for_mesh(int n, int m = -1);
    Extent extent() const { return Extent{n + 1, m + 1, 1, 1, 2}; }
};

// The classic stopping rule (problem.hpp), or -i iterations.
using ApfSchedule = TimeSchedule;

// One cell's update: the PDE over E_prev's 5-point neighbourhood, then the ODEs on the new
// E and on R in place. `e(di, dj)` reads E_prev at an offset (di along x, dj along y). The
// expression order follows the classic program so every backend rounds the same way.
//
// What every backend and strategy sees of a model: `Fields` (the stencil input `in` and the
// rest), `load_point` (the cell's pointwise state, loaded early so strategies can keep loads in
// flight) and `store` (the update of one cell from its neighbourhood and that state).
// `mirror` says the boundary is the classic mirror: a ghost reads the cell two inward.
// `update` (the new E and R of a cell, in registers) and `write` let a strategy advance cells
// several steps on chip before storing them. `bind` makes the Fields from the engine's buffers
// of the model's fields (ApfProblem::fields: E, R).
template <class T>
struct AlievPanfilov {
    using value_type = T;
    static constexpr int dims = 2;
    static constexpr int radius = 1;
    static constexpr int stencil_points = 5;
    static constexpr bool mirror = true;
    static constexpr bool star = true;
    static constexpr int flops_per_cell = 28;               // the classic program's count
    static constexpr int min_bytes_per_cell = 4 * sizeof(T);  // read E_prev, R; write E, R

    struct Fields {
        const T* in;  // E_prev
        T* out;       // E
        T* r;         // R, updated in place
    };
    using Point = T;  // R at the cell

    using R = compute_t<T>;  // the arithmetic (fp32 for 16-bit storage)
    R alpha, dt;

    explicit AlievPanfilov(const ApfParams& p) : alpha(R(p.alpha)), dt(R(p.dt)) {}

    STRATA_HD static Fields bind(const FieldPtrs<T, 2>& b) { return {b.in[0], b.out[0], b.out[1]}; }

    STRATA_HD Point load_point(const Fields& f, std::int64_t i) const { return f.r[i]; }

    template <class Nb>
    STRATA_HD void store(const Nb& e, Point r, const Fields& f, std::int64_t i) const {
        T en;
        update(e, en, r);
        write(en, r, f, i);
    }
    // The cell's new state into the output fields (the temporal strategy updates cells on chip
    // for several steps with `update`, then writes them once).
    STRATA_HD void write(T e_new, Point r, const Fields& f, std::int64_t i) const {
        f.out[i] = e_new;
        f.r[i] = r;
    }
    // The same for a run of V consecutive cells starting at a V-aligned index, moved as one
    // access per field (the temporal strategy's threads own such runs, and copy them in from
    // `points`, the pointwise state as a field).
    template <int V>
    struct alignas(sizeof(T) * V) Run {
        T v[V];
    };
    STRATA_HD const Point* points(const Fields& f) const { return f.r; }
    template <int V>
    STRATA_HD void write_run(const Run<V>& e_new, const Run<V>& r, const Fields& f, std::int64_t i) const {
        *reinterpret_cast<Run<V>*>(f.out + i) = e_new;
        *reinterpret_cast<Run<V>*>(f.r + i) = r;
    }

    template <class Nb>
    STRATA_HD void update(const Nb& e, T& e_out, T& r) const {
        constexpr R a = R(ApfParams::a), b = R(ApfParams::b), kk = R(ApfParams::kk);
        constexpr R M1 = R(ApfParams::M1), M2 = R(ApfParams::M2), eps = R(ApfParams::epsilon);
        const R c = e(0, 0), rc = r;
        R en = c + alpha * (R(e(1, 0)) + R(e(-1, 0)) - R(4) * c + R(e(0, 1)) + R(e(0, -1)));
        en = en - dt * (kk * en * (en - a) * (en - R(1)) + en * rc);
        r = rc +
            dt * (eps + divide(M1 * rc, en + M2)) * (-rc - kk * en * (en - b - R(1)));  // (divide: hd.hpp)
        e_out = en;
    }
};

// The model as the engines and the run driver see it (model.hpp, problem.hpp): `strata run apf`.
class ApfProblem final : public Problem {
public:
    // E (the membrane potential) through the 5-point stencil, R (the recovery variable) pointwise.
    static constexpr FieldDecl fields[] = {{"E", FieldRole::stencil, 0, 1}, {"R", FieldRole::state, 0, 0.5}};
    template <class T>
    using Kernel = AlievPanfilov<T>;
    template <class T, class F>
    decltype(auto) with_kernel(F&& f) const {
        return f(AlievPanfilov<T>(params));
    }
    template <class T>
    std::vector<std::pair<std::string, HostField<T>>> coefficients() const {
        return {};
    }

    // The classic initial state: E = 1 on the right half of the columns, R = 1 on the lower half
    // of the rows (mesh indices i >= n/2+2 and j >= n/2+1, counted from 1).
    struct Initial {
        int n, m;
        STRATA_HD double operator()(int field, int i, int j, int) const {
            return field == 0 ? (i >= n / 2 + 1 ? 1.0 : 0.0) : (j >= m / 2 ? 1.0 : 0.0);
        }
    };
    Initial initial() const { return {params.n, params.m}; }

    // max |E| and sqrt(mean E^2) over the (n+1)^2 mesh points.
    struct Observer {
        static constexpr int count = 1;
        void at(double /*t*/) {}
        template <class C>
        STRATA_HD void operator()(const C& c, double (&v)[1]) const {
            v[0] = c(0);
        }
        Observables named(const Reduced (&r)[1], double cells) const;
    };
    Observer observer() const { return {}; }

    explicit ApfProblem(const ApfParams& p, std::int64_t steps = 1);
    ApfProblem(const ApfParams& p, const ApfSchedule& s) : params(p), schedule(s) {}
    static ModelInfo describe();
    static std::unique_ptr<Problem> from_params(const Params& params, std::ostream& out);
    static std::unique_ptr<Problem> box(const Params& params, int nx, int ny, int nz);

    const ModelInfo& model() const override;
    Extent extent() const override { return params.extent(); }
    double dt() const override { return params.dt; }
    std::int64_t steps() const override { return schedule.steps; }
    double t_end() const override { return schedule.t_end; }
    std::vector<std::pair<std::string, double>> fingerprint() const override;
    std::string title() const override { return "Aliev-Panfilov (apf)"; }
    std::string label() const override;
    void describe(Report& r) const override;
    void report(Engine& e, Report& r) const override;
    std::vector<ModelHook> hooks() const override;
    SnapshotSpec snapshot_spec() const override;
    // -x, -y and -k when the run names a geometry of several parts or -k.
    std::optional<Decomposition> decomposition() const override {
        if (px == 1 && py == 1 && !no_comm) return std::nullopt;
        Decomposition d;
        d.parts[0] = px, d.parts[1] = py, d.exchange = !no_comm;
        return d;
    }
    std::int64_t snapshot_every() const override { return plot_every; }
    void check(std::int64_t every) const override;

    ApfParams params;
    ApfSchedule schedule;
    std::int64_t stats_every = 0;  // -s: print the norms every k iterations
    std::int64_t plot_every = 0;   // -p: snapshots every k iterations
    int px = 1, py = 1;            // -x, -y: the process geometry
    bool no_comm = false;          // -k
    bool debug = false;            // -d: print the final mesh
};

}  // namespace strata
