#include "strata/models/aliev_panfilov.hpp"

#include <algorithm>
#include <cmath>

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

ApfSchedule apf_schedule_for_time(double dt, double t_final) {
    ApfSchedule s;
    double t = 0;
    while (t < t_final) {
        t += dt;
        ++s.steps;
    }
    s.t_end = t;
    return s;
}

template <class T>
ApfFields<T> apf_initial_state(const ApfParams& p) {
    ApfFields<T> f{HostField<T>(p.extent()), HostField<T>(p.extent())};
    const int n = p.n, m = p.m;
    // Mesh index k (1-based, as in the classic program) is interior index k - 1 here.
    for (int j = 0; j <= m; ++j)
        for (int i = n / 2 + 1; i <= n; ++i) f.e.at(i, j) = T(1);
    for (int j = m / 2; j <= m; ++j)
        for (int i = 0; i <= n; ++i) f.r.at(i, j) = T(1);
    return f;
}

template <class T>
void apf_mirror_ghosts(HostField<T>& e) {
    const int nx = e.extent.nx, ny = e.extent.ny;
    for (int j = 0; j < ny; ++j) {
        e.at(-1, j) = e.at(1, j);
        e.at(nx, j) = e.at(nx - 2, j);
    }
    for (int i = 0; i < nx; ++i) {
        e.at(i, -1) = e.at(i, 1);
        e.at(i, ny) = e.at(i, ny - 2);
    }
}

template <class T>
ApfStats apf_stats(const HostField<T>& e) {
    double mx = -1, sum_sq = 0;
    for (int j = 0; j < e.extent.ny; ++j)
        for (int i = 0; i < e.extent.nx; ++i) {
            const double v = e.at(i, j);
            sum_sq += v * v;
            mx = std::max(mx, std::fabs(v));
        }
    return {mx, std::sqrt(sum_sq / double(e.extent.cells()))};
}

#define STRATA_INSTANTIATE(T)                                      \
    template ApfFields<T> apf_initial_state<T>(const ApfParams&); \
    template void apf_mirror_ghosts<T>(HostField<T>&);            \
    template ApfStats apf_stats<T>(const HostField<T>&);
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
#undef STRATA_INSTANTIATE

}  // namespace strata
