#include "strata/models/wave3d.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "strata/core/error.hpp"

namespace strata {

double WaveParams::dt_max(double h, double v_max) {
    return 2 * h / (v_max * std::sqrt(3 * Laplacian8::symbol_max));
}

double WaveParams::sponge_eta_for(int width, double h, double dt, double v_max) {
    if (width <= 0) return 0;
    const double sigma_max = 3 * v_max * std::log(1e3) / (2 * width * h);
    return sigma_max * dt / 2;
}

namespace {

double parse_speed(const std::string& s, std::string_view spec) {
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(s, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != s.size() || s.empty())
        throw UsageError("bad velocity '" + std::string(spec) +
                         "' (expected a speed like 1500, or layered:V1,V2@F with F in (0, 1))");
    if (!(v > 0) || !std::isfinite(v)) throw UsageError("velocities must be positive (got " + s + ")");
    return v;
}

}  // namespace

std::vector<float> wave_velocity(std::string_view spec, const std::string& file, int nx, int ny, int nz) {
    const std::size_t cells = std::size_t(nx) * ny * nz;
    std::vector<float> v(cells);
    if (!file.empty()) {
        std::ifstream f(file, std::ios::binary | std::ios::ate);
        if (!f) throw UsageError("cannot read the velocity file '" + file + "'");
        const auto bytes = std::size_t(f.tellg());
        if (bytes != cells * sizeof(float))
            throw UsageError("the velocity file '" + file + "' has " + std::to_string(bytes) + " bytes; a " +
                             std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) +
                             " grid of float32 needs " + std::to_string(cells * sizeof(float)));
        f.seekg(0);
        f.read(reinterpret_cast<char*>(v.data()), std::streamsize(bytes));
        if (!f) throw UsageError("cannot read the velocity file '" + file + "'");
        for (float x : v)
            if (!(x > 0) || !std::isfinite(x))
                throw UsageError("the velocity file '" + file + "' holds a non-positive or non-finite velocity");
        return v;
    }
    const std::string s(spec);
    if (s.starts_with("layered:")) {
        const auto comma = s.find(','), at = s.find('@');
        if (comma == std::string::npos || at == std::string::npos || at < comma)
            throw UsageError("bad velocity '" + s + "' (expected layered:V1,V2@F, e.g. layered:1500,2500@0.5)");
        const double v1 = parse_speed(s.substr(8, comma - 8), spec);
        const double v2 = parse_speed(s.substr(comma + 1, at - comma - 1), spec);
        const double frac = parse_speed(s.substr(at + 1), spec);
        if (frac >= 1) throw UsageError("the layer depth in '" + s + "' must be a fraction in (0, 1)");
        for (int k = 0; k < nz; ++k) {
            const float vk = float(k < frac * (nz - 1) ? v1 : v2);
            std::fill(v.begin() + std::ptrdiff_t(std::size_t(k) * nx * ny),
                      v.begin() + std::ptrdiff_t(std::size_t(k + 1) * nx * ny), vk);
        }
        return v;
    }
    std::fill(v.begin(), v.end(), float(parse_speed(s, spec)));
    return v;
}

GridPoint wave_grid_point(const WaveParams& p, double x, double y, double z, std::string_view what) {
    const double pos[3] = {x, y, z};
    int idx[3];
    for (int a = 0; a < 3; ++a) {
        const double len = p.length(a);
        if (!(pos[a] >= 0 && pos[a] <= len * (1 + 1e-12))) {
            char buf[256];
            std::snprintf(buf, sizeof buf, "%s at (%g, %g, %g) is outside the domain [0, %g] x [0, %g] x [0, %g]",
                          std::string(what).c_str(), x, y, z, p.length(0), p.length(1), p.length(2));
            throw UsageError(buf);
        }
        idx[a] = std::min(int(std::lround(pos[a] / p.h)), (a == 0 ? p.nx : a == 1 ? p.ny : p.nz) - 1);
    }
    return {idx[0], idx[1], idx[2]};
}

WaveParams wave_params(int nx, int ny, int nz, double extent, const std::vector<float>& velocity, double safety,
                       double user_dt, int sponge) {
    WaveParams p;
    p.nx = nx, p.ny = ny, p.nz = nz;
    p.extent = extent;
    p.h = extent / (nx - 1);
    const auto [lo, hi] = std::minmax_element(velocity.begin(), velocity.end());
    p.v_min = *lo, p.v_max = *hi;
    const double bound = WaveParams::dt_max(p.h, p.v_max);
    if (user_dt > 0) {
        if (user_dt > bound) {
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "--dt %g is unstable: the CFL bound for h = %g and v_max = %g is dt <= %g", user_dt, p.h,
                          p.v_max, bound);
            throw UsageError(buf);
        }
        p.dt = user_dt;
    } else {
        p.dt = safety * bound;
    }
    p.sponge = sponge;
    p.sponge_eta = WaveParams::sponge_eta_for(sponge, p.h, p.dt, p.v_max);
    return p;
}

template <class T>
HostField<T> wave_vdt2(const WaveParams& p, const std::vector<float>& velocity) {
    HostField<T> f(p.extent3());
    const double r = p.dt / p.h;
    for (int k = 0; k < p.nz; ++k)
        for (int j = 0; j < p.ny; ++j)
            for (int i = 0; i < p.nx; ++i) {
                const double v = velocity[(std::size_t(k) * p.ny + j) * p.nx + i] * r;
                f.at(i, j, k) = T(v * v);
            }
    return f;
}

template <class T>
WaveStats wave_stats(const HostField<T>& vdt2, const WaveState<T>& s) {
    const Extent e = s.p.extent;
    const std::int64_t px = e.px(), pxy = e.px() * e.py();
    WaveStats st;
    for (int k = 0; k < e.nz; ++k)
        for (int j = 0; j < e.ny; ++j)
            for (int i = 0; i < e.nx; ++i) {
                const std::int64_t c = e.index(i, j, k);
                const T* prev = s.prev.ptr() + c;
                auto nb = [prev, px, pxy](int di, int dj, int dk) { return double(prev[di + dj * px + dk * pxy]); };
                const double pn = s.p.data[std::size_t(c)], d = pn - double(*prev);
                // the Laplacian in double, whatever T: the energy is a diagnostic, not a step
                double lap = 3 * Laplacian8::c[0] * nb(0, 0, 0);
                for (int r = 1; r <= 4; ++r)
                    lap += Laplacian8::c[r] * (nb(-r, 0, 0) + nb(r, 0, 0) + nb(0, -r, 0) + nb(0, r, 0) +
                                               nb(0, 0, -r) + nb(0, 0, r));
                st.energy += d * d / double(vdt2.data[std::size_t(c)]) - pn * lap;
                st.max_abs = std::max(st.max_abs, std::fabs(pn));
            }
    return st;
}

#define STRATA_INSTANTIATE(T)                                                             \
    template HostField<T> wave_vdt2<T>(const WaveParams&, const std::vector<float>&);    \
    template WaveStats wave_stats<T>(const HostField<T>&, const WaveState<T>&);
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
#undef STRATA_INSTANTIATE

}  // namespace strata
