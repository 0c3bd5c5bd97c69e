#pragma once
// 3D acoustic waves p_tt = v^2 lap(p) + sources, leapfrog in time, the 25-point radius-4 star
// Laplacian (8th-order central differences) in space, p = 0 on a ghost layer four cells wide, and
// a sponge (damping) layer along every face that absorbs outgoing waves before they reach it.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/core/field.hpp"
#include "strata/core/hd.hpp"
#include "strata/features.hpp"
#include "strata/model.hpp"
#include "strata/problem.hpp"

namespace strata {

// The 8th-order second-derivative weights c0..c4 (times 1/h^2 per axis).
struct Laplacian8 {
    static constexpr double c[5] = {-205.0 / 72.0, 8.0 / 5.0, -1.0 / 5.0, 8.0 / 315.0, -1.0 / 560.0};
    // max over wavenumbers of |c0 + 2 sum c_k cos(k theta)|, reached at the Nyquist mode theta = pi,
    // where the signs alternate: |c0| + 2 sum |c_k| = 6.5016 (per axis, times 1/h^2).
    static constexpr double symbol_max = 205.0 / 72.0 + 2 * (8.0 / 5.0 + 1.0 / 5.0 + 8.0 / 315.0 + 1.0 / 560.0);
};

// The grid: nx*ny*nz points, spacing h = extent / (nx - 1), so the points span [0, extent] along x
// and [0, (n-1) h] along y and z; point (i, j, k) sits at (i h, j h, k h).
struct WaveParams {
    int nx = 0, ny = 0, nz = 0;
    double extent = 1;        // L: the box's length along x
    double h = 0, dt = 0;
    double v_min = 0, v_max = 0;
    int sponge = 0;           // sponge width in cells on each face (0: reflecting walls)
    double sponge_eta = 0;    // eta at the wall: the damping sigma * dt / 2 (see Wave3D::eta)

    Extent extent3() const { return Extent{nx, ny, nz, 4, 3}; }
    double length(int axis) const { return (axis == 0 ? nx - 1 : axis == 1 ? ny - 1 : nz - 1) * h; }
    // Leapfrog is stable while (v dt / h)^2 * 3 * symbol_max <= 4.
    static double dt_max(double h, double v_max);
    // The damping at the wall for a sponge of `width` cells, from the PML estimate
    // sigma_max = 3 v ln(1/R) / (2 width h) with a target reflection R = 1e-3.
    static double sponge_eta_for(int width, double h, double dt, double v_max);
};

// One cell's update. The neighbourhood `u(di, dj, dk)` reads p^n; the cell also reads its own
// p^{n-1} and writes p^{n+1} at the same index of the same buffer (`out`): each cell reads only
// its own p^{n-1}, so the two p buffers plus vdt2 are all the memory, 16 bytes per cell in fp32.
// The sponge is damping sigma p_t, centred in time: with eta = sigma dt / 2,
//   p^{n+1} = (2 p^n - (1 - eta) p^{n-1} + vdt2 lap(p^n)) / (1 + eta),
// eta computed from the cell's distance to the nearest face (no bytes), 0 outside the sponge.
// Every backend sums the Laplacian in the order of `laplacian`, so they round alike.
template <class T>
struct Wave3D {
    using value_type = T;
    static constexpr int dims = 3;
    static constexpr int radius = 4;
    static constexpr int stencil_points = 25;
    static constexpr bool star = true;
    static constexpr bool mirror = false;
    static constexpr bool zero_ghosts = true;  // strategies may zero-fill ghosts instead of reading them
    // 4 radii x (5 adds + mul + add), the centre's mul and add, then the leapfrog update (6)
    static constexpr int flops_per_cell = 4 * 7 + 2 + 6;
    static constexpr int min_bytes_per_cell = 4 * sizeof(T);  // read p, p_prev, vdt2; write p_next

    struct Fields {
        const T* in;     // p^n
        T* out;          // p^{n-1} on entry, p^{n+1} on exit
        const T* vdt2;   // (v dt / h)^2
    };

    using R = compute_t<T>;  // the arithmetic (fp32 for 16-bit storage)
    R c0x3, c1, c2, c3, c4;  // c0 times 3 (the centre weight of all three axes together)
    int nx, ny, nz, sponge;
    R sponge_eta;
    int origin[3] = {0, 0, 0};  // where the engine's grid starts in the whole grid (domain.hpp)

    explicit Wave3D(const WaveParams& p)
        : c0x3(R(3 * Laplacian8::c[0])),
          c1(R(Laplacian8::c[1])),
          c2(R(Laplacian8::c[2])),
          c3(R(Laplacian8::c[3])),
          c4(R(Laplacian8::c[4])),
          nx(p.nx),
          ny(p.ny),
          nz(p.nz),
          sponge(p.sponge),
          sponge_eta(R(p.sponge_eta)) {}

    // Wave3dProblem's fields: p, prev (p's other buffer), vdt2.
    STRATA_HD static Fields bind(const FieldPtrs<T, 3>& b) { return {b.in[0], b.out[0], b.in[2]}; }

    // h^2 lap(p) at the cell.
    template <class Nb>
    STRATA_HD R laplacian(const Nb& u) const {
        auto ring = [&](int r) {
            return ((u(-r, 0, 0) + u(r, 0, 0)) + (u(0, -r, 0) + u(0, r, 0))) + (u(0, 0, -r) + u(0, 0, r));
        };
        return c0x3 * u(0, 0, 0) + c1 * ring(1) + c2 * ring(2) + c3 * ring(3) + c4 * ring(4);
    }

    // sigma dt / 2 at cell (i, j, k) of the engine's grid: eta_max ((w - d) / w)^2 at distance d < w from
    // the nearest face of the whole grid.
    STRATA_HD R eta(int i, int j, int k) const {
        i += origin[0], j += origin[1], k += origin[2];
        const int dx = i < nx - 1 - i ? i : nx - 1 - i, dy = j < ny - 1 - j ? j : ny - 1 - j;
        const int dz = k < nz - 1 - k ? k : nz - 1 - k;
        const int dxy = dx < dy ? dx : dy;  // the same along a column: kernels marching in z keep it
        const int d = dxy < dz ? dxy : dz;
        if (d >= sponge) return R(0);
        const R s = R(sponge - d) / R(sponge);
        return sponge_eta * s * s;
    }

    STRATA_HD R update(R p, R prev, R vdt2, R lap, R eta) const {
        const R undamped = R(2) * p - (R(1) - eta) * prev + vdt2 * lap;
        return eta == R(0) ? undamped : undamped / (R(1) + eta);  // the same value, no division inside
    }

    template <class Nb>
    STRATA_HD void store(const Nb& u, const Fields& f, int i, int j, int k, std::int64_t c) const {
        f.out[c] = update(u(0, 0, 0), f.out[c], f.vdt2[c], laplacian(u), eta(i, j, k));
    }
};

// The velocity model: "1500" (constant), "layered:V1,V2@F" (V1 above depth F of the box along z,
// V2 below), or, when `file` is set, nx*ny*nz raw float32 (x fastest). Throws UsageError on a bad
// spec, an unreadable or wrong-size file, or a non-positive velocity.
std::vector<float> wave_velocity(std::string_view spec, const std::string& file, int nx, int ny, int nz);

// The grid point nearest the physical position (x, y, z); UsageError when it is outside the box.
GridPoint wave_grid_point(const WaveParams& p, double x, double y, double z, std::string_view what);

// h, dt (the user's, checked against the CFL bound, or safety x the bound), the sponge.
// Throws UsageError for an unstable dt.
WaveParams wave_params(int nx, int ny, int nz, double extent, const std::vector<float>& velocity,
                       double safety, double user_dt, int sponge);

template <class T>
HostField<T> wave_vdt2(const WaveParams& p, const std::vector<float>& velocity);

// The model as the engines and the run driver see it (model.hpp, problem.hpp): `strata run wave3d`.
// Point sources and receivers are the engines' generic feature (features.hpp), on p.
class Wave3dProblem final : public Problem {
public:
    static constexpr FieldDecl fields[] = {
        {"p", FieldRole::stencil, -1, 1}, {"prev", FieldRole::previous, -1, 1}, {"vdt2", FieldRole::coefficient}};
    template <class T>
    using Kernel = Wave3D<T>;
    template <class T, class F>
    decltype(auto) with_kernel(F&& f) const {
        return f(Wave3D<T>(params));
    }
    template <class T>
    std::vector<std::pair<std::string, HostField<T>>> coefficients() const {
        return {{"vdt2", wave_vdt2<T>(params, velocity)}};
    }

    // At rest: p = 0 at step 0, only the sources make waves.
    struct Initial {
        STRATA_HD double operator()(int, int, int, int) const { return 0; }
    };
    Initial initial() const { return {}; }

    // max |p|, and the leapfrog's conserved discrete energy (without sources or sponge)
    //   E = sum (p - prev)^2 / vdt2 - sum p * L(prev),  L the h^2-scaled Laplacian,
    // positive while dt is stable (arbitrary units: multiply by h^3 / dt^2 for physical ones).
    // The Laplacian in double, whatever T: the energy is a diagnostic, not a step.
    struct Observer {
        static constexpr int count = 2;
        void at(double) {}
        template <class C>
        STRATA_HD void operator()(const C& c, double (&v)[2]) const {
            constexpr double w[5] = {Laplacian8::c[0], Laplacian8::c[1], Laplacian8::c[2], Laplacian8::c[3],
                                     Laplacian8::c[4]};
            const double pn = c(0), prev = c(1), d = pn - prev;
            double lap = 3 * w[0] * prev;
            for (int r = 1; r <= 4; ++r)
                lap += w[r] * (c(1, -r, 0, 0) + c(1, r, 0, 0) + c(1, 0, -r, 0) + c(1, 0, r, 0) + c(1, 0, 0, -r) +
                               c(1, 0, 0, r));
            v[0] = pn;
            v[1] = d * d / c(2) - pn * lap;
        }
        Observables named(const Reduced (&r)[2], double cells) const;
    };
    Observer observer() const { return {}; }

    // The grid and velocity; no sources or receivers until they are added.
    Wave3dProblem(const WaveParams& p, std::vector<float> velocity, std::int64_t steps = 1);
    static ModelInfo describe();
    static std::unique_ptr<Problem> from_params(const Params& params, std::ostream& out);
    static std::unique_ptr<Problem> box(const Params& params, int nx, int ny, int nz);

    const ModelInfo& model() const override;
    Extent extent() const override { return params.extent3(); }
    double dt() const override { return params.dt; }
    std::int64_t steps() const override { return steps_; }
    std::vector<std::pair<std::string, double>> fingerprint() const override;
    std::string title() const override { return "3D acoustic waves (wave3d), 8th-order Laplacian"; }
    std::string label() const override;
    void describe(Report& r) const override;
    void report(Engine& e, Report& r) const override;
    void finish(Engine& e, Report& r, const std::string& dir) const override;
    SnapshotSpec snapshot_spec() const override;
    PointFeatures points() const override;
    double source_magnitude() const override;

    WaveParams params;
    std::vector<float> velocity;          // nx*ny*nz, x fastest
    std::vector<PointSource> sources;     // a Ricker wavelet each, added to p after every step
    std::vector<GridPoint> receivers;     // p recorded there after every step
    std::int64_t record_steps = 0;        // steps recorded (0 without receivers)
    double lo = -1, hi = 1;               // the snapshot pictures' value range

private:
    std::int64_t steps_;
};

}  // namespace strata

