#pragma once
// Operations on host fields shared by the benchmarks and the tests: random (never constant)
// fills, the Dirichlet ghost layer, and comparison against a reference.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "strata/core/field.hpp"

namespace strata {

// Every cell, ghosts included, uniform in [lo, hi); split over threads (512^3 is slow on one).
// Deterministic for a given seed and machine thread count.
template <class T>
void fill_random(HostField<T>& f, std::uint64_t seed, double lo = 0.0, double hi = 1.0) {
    const unsigned nt = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    const std::size_t n = f.data.size(), per = (n + nt - 1) / nt;
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < nt; ++t)
        pool.emplace_back([&f, seed, lo, hi, t, n, per] {
            std::mt19937_64 gen(seed * 1000003ull + t);
            std::uniform_real_distribution<double> d(lo, hi);
            for (std::size_t i = t * per; i < std::min(n, (t + 1) * per); ++i) f.data[i] = T(d(gen));
        });
    for (auto& th : pool) th.join();
}

// Sets the ghost layers to `v` (0: the Dirichlet boundary of heat3d; a stencil file's `fixed V`).
template <class T>
void fill_ghosts(HostField<T>& f, T v) {
    const Extent& e = f.extent;
    const int g = e.ghost, gz = e.dims == 3 ? e.ghost : 0;
    for (int k = -gz; k < e.nz + gz; ++k)
        for (int j = -g; j < e.ny + g; ++j)
            for (int i = -g; i < e.nx + g; ++i)
                if (i < 0 || j < 0 || k < 0 || i >= e.nx || j >= e.ny || k >= e.nz) f.at(i, j, k) = v;
}
template <class T>
void zero_ghosts(HostField<T>& f) {
    fill_ghosts(f, T(0));
}

// Mirror boundaries: each ghost cell takes the value two cells inward (u[-1] = u[1],
// u[n] = u[n-2]) along the axis it lies beyond, the classic no-flux condition (corners stay).
template <class T>
void mirror_ghosts(HostField<T>& u) {
    const Extent& e = u.extent;
    for (int k = 0; k < e.nz; ++k) {
        for (int j = 0; j < e.ny; ++j) {
            u.at(-1, j, k) = u.at(1, j, k);
            u.at(e.nx, j, k) = u.at(e.nx - 2, j, k);
        }
        for (int i = 0; i < e.nx; ++i) {
            u.at(i, -1, k) = u.at(i, 1, k);
            u.at(i, e.ny, k) = u.at(i, e.ny - 2, k);
        }
    }
    if (e.dims == 3)
        for (int j = 0; j < e.ny; ++j)
            for (int i = 0; i < e.nx; ++i) {
                u.at(i, j, -1) = u.at(i, j, 1);
                u.at(i, j, e.nz) = u.at(i, j, e.nz - 2);
            }
}

// Periodic boundaries: each ghost cell (the layer is e.ghost deep) takes the value of the cell a
// period away, along x, then y, then z, so the edges and corners of the layer are wrapped too.
template <class T>
void periodic_ghosts(HostField<T>& u) {
    const Extent& e = u.extent;
    const int g = e.ghost, gz = e.dims == 3 ? g : 0;
    for (int k = -gz; k < e.nz + gz; ++k)
        for (int j = 0; j < e.ny; ++j)
            for (int d = 1; d <= g; ++d) {
                u.at(-d, j, k) = u.at(e.nx - d, j, k);
                u.at(e.nx - 1 + d, j, k) = u.at(d - 1, j, k);
            }
    for (int k = -gz; k < e.nz + gz; ++k)
        for (int i = -g; i < e.nx + g; ++i)
            for (int d = 1; d <= g; ++d) {
                u.at(i, -d, k) = u.at(i, e.ny - d, k);
                u.at(i, e.ny - 1 + d, k) = u.at(i, d - 1, k);
            }
    if (e.dims == 3)
        for (int j = -g; j < e.ny + g; ++j)
            for (int i = -g; i < e.nx + g; ++i)
                for (int d = 1; d <= g; ++d) {
                    u.at(i, j, -d) = u.at(i, j, e.nz - d);
                    u.at(i, j, e.nz - 1 + d) = u.at(i, j, d - 1);
                }
}

// The interior cells in one compact array, x fastest: what snapshots and checkpoints hold.
template <class T>
std::vector<T> interior_values(const HostField<T>& f) {
    const Extent& e = f.extent;
    std::vector<T> out;
    out.reserve(std::size_t(e.cells()));
    for (int k = 0; k < e.nz; ++k)
        for (int j = 0; j < e.ny; ++j) out.insert(out.end(), &f.at(0, j, k), &f.at(0, j, k) + e.nx);
    return out;
}

// max |a - b| / max |b| over the interior; a NaN in `a` (a poisoned, unwritten cell) gives infinity.
template <class A, class B>
double max_relative_error(const HostField<A>& a, const HostField<B>& b) {
    double diff = 0, ref = 0;
    const Extent& e = a.extent;
    for (int k = 0; k < e.nz; ++k)
        for (int j = 0; j < e.ny; ++j)
            for (int i = 0; i < e.nx; ++i) {
                const double x = double(a.at(i, j, k)), y = double(b.at(i, j, k));
                if (!std::isfinite(x)) return std::numeric_limits<double>::infinity();
                diff = std::max(diff, std::fabs(x - y));
                ref = std::max(ref, std::fabs(y));
            }
    return diff / ref;
}

}  // namespace strata
