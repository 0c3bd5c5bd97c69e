#pragma once
// The Aliev-Panfilov cardiac model exactly as the classic UCSD `apf` program computes it:
// the same constants, mesh, initial state, mirror boundaries, time step rule and statistics.
#include <cstdint>

#include "strata/core/field.hpp"
#include "strata/core/hd.hpp"

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

// The classic stopping rule `t = 0; while (t < T) { t += dt; ++niter; }`: how many steps it
// takes and the simulated time it ends at, with the same floating-point accumulation.
struct ApfSchedule {
    std::int64_t steps = 0;
    double t_end = 0;
};
ApfSchedule apf_schedule_for_time(double dt, double t_final);

// One cell's update: the PDE over E_prev's 5-point neighbourhood, then the ODEs on the new
// E and on R in place. `e(di, dj)` reads E_prev at an offset (di along x, dj along y). The
// expression order follows the classic program so every backend rounds the same way.
//
// What every backend and strategy sees of a model: `Fields` (the stencil input `in` and the
// rest), `load_point` (the cell's pointwise state, loaded early so strategies can keep loads in
// flight) and `store` (the update of one cell from its neighbourhood and that state).
// `mirror` says the boundary is the classic mirror: a ghost reads the cell two inward.
// `update` (the new E and R of a cell, in registers) and `write` let a strategy advance cells
// several steps on chip before storing them.
template <class T>
struct AlievPanfilov {
    using value_type = T;
    static constexpr int dims = 2;
    static constexpr int radius = 1;
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

    T alpha, dt;

    explicit AlievPanfilov(const ApfParams& p) : alpha(T(p.alpha)), dt(T(p.dt)) {}

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
        constexpr T a = T(ApfParams::a), b = T(ApfParams::b), kk = T(ApfParams::kk);
        constexpr T M1 = T(ApfParams::M1), M2 = T(ApfParams::M2), eps = T(ApfParams::epsilon);
        const T c = e(0, 0);
        T en = c + alpha * (e(1, 0) + e(-1, 0) - T(4) * c + e(0, 1) + e(0, -1));
        en = en - dt * (kk * en * (en - a) * (en - T(1)) + en * r);
        r = r + dt * (eps + M1 * r / (en + M2)) * (-r - kk * en * (en - b - T(1)));
        e_out = en;
    }
};

// The model's state on the host: E (the latest membrane potential) and R (the recovery variable).
template <class T>
struct ApfFields {
    HostField<T> e, r;
};

// The classic initial state: E = 1 on the right half of the columns, R = 1 on the lower half
// of the rows (mesh indices i >= n/2+2 and j >= n/2+1, counted from 1).
template <class T>
ApfFields<T> apf_initial_state(const ApfParams& p);

// Mirror boundaries: each ghost cell takes the value two cells inward (E[0] = E[2],
// E[n+2] = E[n]), the classic no-flux condition.
template <class T>
void apf_mirror_ghosts(HostField<T>& e);

// max |E| and sqrt(mean E^2) over the (n+1)^2 mesh points.
struct ApfStats {
    double max_abs = 0;
    double l2 = 0;
};
template <class T>
ApfStats apf_stats(const HostField<T>& e);

}  // namespace strata
