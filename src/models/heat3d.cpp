#include "strata/models/heat3d.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "strata/core/error.hpp"

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

template <class T>
HostField<T> heat_initial_state(const HeatParams& p) {
    HostField<T> u(p.extent());
    const HeatExact ex = HeatExact::of(p);
    for (int k = 0; k < p.nz; ++k)
        for (int j = 0; j < p.ny; ++j)
            for (int i = 0; i < p.nx; ++i) u.at(i, j, k) = T(ex.mode(i, j, k));
    return u;
}

template <class T>
double heat_max_error(const HeatParams& p, const HostField<T>& u, double t) {
    const HeatExact ex = HeatExact::of(p);
    const double decay = std::exp(-ex.rate * t);
    double err = 0;
    for (int k = 0; k < p.nz; ++k)
        for (int j = 0; j < p.ny; ++j)
            for (int i = 0; i < p.nx; ++i)
                err = std::max(err, std::fabs(double(u.at(i, j, k)) - decay * ex.mode(i, j, k)));
    return err;
}

template <class T>
HeatStats heat_stats(const HostField<T>& u) {
    double mx = 0, sum_sq = 0;
    const Extent& e = u.extent;
    for (int k = 0; k < e.nz; ++k)
        for (int j = 0; j < e.ny; ++j)
            for (int i = 0; i < e.nx; ++i) {
                const double v = u.at(i, j, k);
                sum_sq += v * v;
                mx = std::max(mx, std::fabs(v));
            }
    return {mx, std::sqrt(sum_sq / double(e.cells()))};
}

#define STRATA_INSTANTIATE(T)                                                      \
    template HostField<T> heat_initial_state<T>(const HeatParams&);               \
    template double heat_max_error<T>(const HeatParams&, const HostField<T>&, double); \
    template HeatStats heat_stats<T>(const HostField<T>&);
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
#undef STRATA_INSTANTIATE

}  // namespace strata
