#pragma once
// 3D heat equation u_t = kappa * lap(u) on the unit cube, Dirichlet 0 on the boundary, explicit
// Euler in time, with the 7-point or the standard isotropic 19- and 27-point Laplacians.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "strata/core/field.hpp"
#include "strata/core/hd.hpp"
#include "strata/core/plane_sums.hpp"
#include "strata/model.hpp"
#include "strata/problem.hpp"

namespace strata {

enum class HeatStencil { p7 = 7, p19 = 19, p27 = 27 };
std::string_view to_string(HeatStencil s);
HeatStencil parse_heat_stencil(std::string_view s);  // "7pt" | "19pt" | "27pt"

// The grid has nx*ny*nz unknowns with spacing h = 1/(nx+1): the unit cube when all three are
// equal (what the CLI runs), a box of sides (n+1)h otherwise (the tests use odd boxes).
struct HeatParams {
    int nx = 0, ny = 0, nz = 0;
    double kappa = 1.0;
    double safety = 0.5;   // dt = safety * the stencil's explicit-Euler stability bound
    HeatStencil stencil = HeatStencil::p7;
    double h = 0, dt = 0;
    double c = 0;          // kappa * dt / h^2

    static HeatParams make(int n, HeatStencil stencil, double kappa = 1.0, double safety = 0.5);
    static HeatParams make_box(int nx, int ny, int nz, HeatStencil stencil, double kappa = 1.0,
                               double safety = 0.5);
    Extent extent() const { return Extent{nx, ny, nz, 1, 3}; }
    // Largest |eigenvalue| of the discrete Laplacian times h^2: 12, 16/3 and 184/30.
    static double spectral_radius_h2(HeatStencil s);
};

// One cell's update u + c * L(u): 7-point c*(F - 6u); 19-point (c/6)*(2F + E - 24u); 27-point
// (c/30)*(14F + 3E + C - 128u), F, E and C the sums of the faces, edges and corners. The 2.5D
// strategies take each plane's sums once for the three cells they feed (`plane_sums`), the cell's
// update from those of planes z-1, z, z+1:
// - 7-point, from the plane's centre and the sum of its 4 in-plane neighbours (PlaneSums: center,
//   edge): faces = edge(z) + center(z-1) + center(z+1);
// - 19- and 27-point, from two weighted sums per plane (BoxSums): `side`, what a plane adds to the
//   cells above and below it (27pt: 14 centre + 3 edge + corner; 19pt: 2 centre + edge), and
//   `mid`, what it adds to its own (27pt: 14 edge + 3 corner; 19pt: 2 edge + corner); the cell's
//   weighted sum is (side(z-1) + mid(z)) + side(z+1). Two words a plane instead of three class
//   sums, and one word of partial sum instead of three: the temporal kernel's register queues
//   halve, and its 27-point pass at depth 2 runs ahead of the single sweeps (docs/runs/125).
// Every backend groups the sums the same way, so they round the same way.
//
// The model API (Fields, load_point, store, mirror, bind) is described at AlievPanfilov;
// `plane_sums` and `store_planes` are the 2.5D strategies' entry. The boundary is a ghost layer
// of zeros that no update writes.
template <class T, HeatStencil S>
struct Heat3D {
    using value_type = T;
    static constexpr int dims = 3;
    static constexpr int radius = 1;
    static constexpr int points = int(S);
    static constexpr int stencil_points = int(S);
    static constexpr bool star = S == HeatStencil::p7;
    static constexpr bool mirror = false;
    static constexpr bool zero_ghosts = true;  // strategies may zero-fill ghosts instead of reading them
    // adds within the classes, the weight products, the center term and the final update
    static constexpr int flops_per_cell = S == HeatStencil::p7 ? 9 : S == HeatStencil::p19 ? 22 : 31;
    static constexpr int min_bytes_per_cell = 2 * sizeof(T);  // read u, write u_next

    struct Fields {
        const T* in;
        T* out;
    };
    struct Point {};

    using R = compute_t<T>;  // the arithmetic (fp32 for 16-bit storage): the sums and w
    R w;                     // c, c/6 or c/30

    explicit Heat3D(const HeatParams& p)
        : w(R(S == HeatStencil::p7    ? p.c
              : S == HeatStencil::p19 ? p.c / 6
                                      : p.c / 30)) {}

    STRATA_HD static Fields bind(const FieldPtrs<T, 1>& b) { return {b.in[0], b.out[0]}; }

    STRATA_HD Point load_point(const Fields&, std::int64_t) const { return {}; }

    // A 19- or 27-point plane's centre and its two weighted sums.
    struct BoxSums {
        R center, side, mid;
    };
    using Sums = std::conditional_t<star, PlaneSums<R>, BoxSums>;
    // `u(di, dj)` reads one plane at an in-plane offset.
    template <class Nb2>
    STRATA_HD Sums plane_sums(const Nb2& u) const {
        const R c = u(0, 0), edge = u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1);
        if constexpr (star) {
            return {c, edge, R(0)};
        } else {
            const R corner = u(-1, -1) + u(1, -1) + u(-1, 1) + u(1, 1);
            if constexpr (S == HeatStencil::p19)
                return {c, R(2) * c + edge, R(2) * edge + corner};
            else
                return {c, R(14) * c + R(3) * edge + corner, R(14) * edge + R(3) * corner};
        }
    }

    // update_planes in two halves, for pipelines that learn the planes one at a time: `partial`
    // once planes z-1 and z are known, `finish` when z+1 arrives. The sums are added in the same
    // order either way, so finish(at, partial(below, at), above) == update_planes(...) bit for bit.
    struct StarPartial {
        R faces;
    };
    struct BoxPartial {
        R sum;
    };
    using Partial = std::conditional_t<star, StarPartial, BoxPartial>;
    STRATA_HD Partial partial(const Sums& below, const Sums& at) const {
        if constexpr (star)
            return {at.edge + below.center};
        else
            return {below.side + at.mid};
    }
    STRATA_HD R finish(const Sums& at, const Partial& p, const Sums& above) const {
        const R c = at.center;
        if constexpr (star) {
            const R faces = p.faces + above.center;
            return c + w * (faces - R(6) * c);
        } else {
            const R sum = p.sum + above.side;
            return c + w * (sum - R(S == HeatStencil::p19 ? 24 : 128) * c);
        }
    }
    STRATA_HD R update_planes(const Sums& below, const Sums& at, const Sums& above) const {
        return finish(at, partial(below, at), above);
    }

    // `u(di, dj, dk)` reads the old field at an offset.
    template <class Nb>
    STRATA_HD R update(const Nb& u) const {
        auto plane = [&](int dk) { return plane_sums([&](int di, int dj) { return u(di, dj, dk); }); };
        return update_planes(plane(-1), plane(0), plane(1));
    }

    template <class Nb>
    STRATA_HD void store(const Nb& u, Point, const Fields& f, std::int64_t i) const {
        f.out[i] = update(u);
    }
    STRATA_HD void store_planes(const Sums& below, const Sums& at, const Sums& above, Point, const Fields& f,
                                std::int64_t i) const {
        f.out[i] = update_planes(below, at, above);
    }
};

// The exact solution: the lowest mode of the box, sin(pi x/Lx) sin(pi y/Ly) sin(pi z/Lz), decaying
// as exp(-kappa pi^2 (1/Lx^2 + 1/Ly^2 + 1/Lz^2) t): exp(-3 pi^2 kappa t) on the unit cube.
struct HeatExact {
    double kx, ky, kz;  // pi * h / L along each axis: the phase per grid index
    double rate;        // the decay rate
    static HeatExact of(const HeatParams& p);
    STRATA_HD double mode(int i, int j, int k) const;  // at interior index (i, j, k)
};

// The model as the engines and the run driver see it (model.hpp, problem.hpp): `strata run heat3d`.
class Heat3dProblem final : public Problem {
public:
    static constexpr FieldDecl fields[] = {{"u", FieldRole::stencil, 0, 1}};
    template <class T>
    using Kernel = Heat3D<T, HeatStencil::p7>;
    template <class T, class F>
    decltype(auto) with_kernel(F&& f) const {
        switch (params.stencil) {
            case HeatStencil::p19: return f(Heat3D<T, HeatStencil::p19>(params));
            case HeatStencil::p27: return f(Heat3D<T, HeatStencil::p27>(params));
            default: return f(Heat3D<T, HeatStencil::p7>(params));
        }
    }
    template <class T>
    std::vector<std::pair<std::string, HostField<T>>> coefficients() const {
        return {};
    }

    // u0 = the exact solution at t = 0 at the interior points.
    struct Initial {
        HeatExact ex;
        STRATA_HD double operator()(int, int i, int j, int k) const { return ex.mode(i, j, k); }
    };
    Initial initial() const { return {HeatExact::of(params)}; }

    // u, and its error against the exact solution at time t: max |u|, sqrt(mean u^2), max |u - exact|.
    struct Observer {
        static constexpr int count = 2;
        HeatExact ex;
        double decay = 1;
        void at(double t);
        template <class C>
        STRATA_HD void operator()(const C& c, double (&v)[2]) const {
            v[0] = c(0);
            v[1] = v[0] - decay * ex.mode(c.i, c.j, c.k);
        }
        Observables named(const Reduced (&r)[2], double cells) const;
    };
    Observer observer() const { return {HeatExact::of(params)}; }

    explicit Heat3dProblem(const HeatParams& p, std::int64_t steps = 1) : params(p), steps_(steps) {}
    static ModelInfo describe();
    static std::unique_ptr<Problem> from_params(const Params& params, std::ostream& out);
    static std::unique_ptr<Problem> box(const Params& params, int nx, int ny, int nz);

    const ModelInfo& model() const override;
    Extent extent() const override { return params.extent(); }
    double dt() const override { return params.dt; }
    std::int64_t steps() const override { return steps_; }
    std::vector<std::pair<std::string, double>> fingerprint() const override;
    std::string title() const override;
    std::string label() const override;
    void describe(Report& r) const override;
    void report(Engine& e, Report& r) const override;
    SnapshotSpec snapshot_spec() const override;

    HeatParams params;

private:
    std::int64_t steps_;
};

}  // namespace strata

#if defined(__CUDACC__)
#define STRATA_SIN(x) ::sin(x)
#else
#include <cmath>
#define STRATA_SIN(x) std::sin(x)
#endif
namespace strata {
STRATA_HD double HeatExact::mode(int i, int j, int k) const {
    return STRATA_SIN(kx * (i + 1)) * STRATA_SIN(ky * (j + 1)) * STRATA_SIN(kz * (k + 1));
}
}  // namespace strata
#undef STRATA_SIN
