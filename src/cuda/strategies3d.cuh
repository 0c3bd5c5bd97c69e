#pragma once
// The 3D strategies, kernel templates over the model and the launch shape (see strategies2d.cuh).
#include "grid.cuh"
#include "strata/core/plane_sums.hpp"

namespace strata::cuda {

// naive: one thread per cell, every neighbour from global memory.
template <class Model, int BX, int BY, int BZ>
__global__ void __launch_bounds__(BX* BY* BZ) naive3d(const Model m, const typename Model::Fields f, const DevGrid g) {
    const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y, k = blockIdx.z * BZ + threadIdx.z;
    if (i >= g.nx || j >= g.ny || k >= g.nz) return;
    constexpr bool mirror = Model::mirror;
    auto nb = [&](int di, int dj, int dk) {
        return f.in[g.at(load_index<mirror>(i + di, g.nx), load_index<mirror>(j + dj, g.ny),
                         load_index<mirror>(k + dk, g.nz))];
    };
    const std::int64_t c = g.at(i, j, k);
    m.store(nb, m.load_point(f, c), f, c);
}

// smem: the block's BX x BY x BZ brick and its halo in shared memory, loaded coalesced (a warp
// reads consecutive words of one row), one barrier, then every neighbour from there. The halo
// costs (BX+2)(BY+2)(BZ+2)/(BX BY BZ) loads per cell: the price the 2.5D strategies avoid.
template <class Model, int BX, int BY, int BZ>
__global__ void __launch_bounds__(BX* BY* BZ) smem3d(const Model m, const typename Model::Fields f, const DevGrid g) {
    using T = typename Model::value_type;
    constexpr int TX = BX + 2, TY = BY + 2, TZ = BZ + 2;
    constexpr bool mirror = Model::mirror;
    __shared__ T tile[TZ][TY][TX];
    const int x0 = blockIdx.x * BX - 1, y0 = blockIdx.y * BY - 1, z0 = blockIdx.z * BZ - 1;
    const int tid = (threadIdx.z * BY + threadIdx.y) * BX + threadIdx.x;
    for (int t = tid; t < TX * TY * TZ; t += BX * BY * BZ) {
        const int tz = t / (TX * TY), rest = t - tz * TX * TY, ty = rest / TX, tx = rest - ty * TX;
        tile[tz][ty][tx] = f.in[g.at(load_index<mirror>(x0 + tx, g.nx), load_index<mirror>(y0 + ty, g.ny),
                                     load_index<mirror>(z0 + tz, g.nz))];
    }
    const int i = x0 + 1 + threadIdx.x, j = y0 + 1 + threadIdx.y, k = z0 + 1 + threadIdx.z;
    const bool active = i < g.nx && j < g.ny && k < g.nz;
    const std::int64_t c = g.at(i, j, k);
    typename Model::Point p{};
    if (active) p = m.load_point(f, c);
    __syncthreads();
    if (!active) return;
    auto nb = [&](int di, int dj, int dk) {
        return tile[threadIdx.z + 1 + dk][threadIdx.y + 1 + dj][threadIdx.x + 1 + di];
    };
    m.store(nb, p, f, c);
}

// planes (2.5D streaming; `multi` with M = 2 or 4 outputs per thread along y): a BX x BY block
// covers a BX x (BY M) tile of the xy-plane and marches along z over a chunk of planes. Each
// thread owns M cells of the tile (rows ty, ty + BY, ...). Shared memory holds one plane, the
// newest (z+1), with a one-cell halo ring; from it each thread takes the plane sums of its cells
// (PlaneSums: 4 or 8 shared-memory reads) and keeps a register queue of the sums of planes z-1,
// z and z+1, from which the model updates plane z. So each plane is read from global memory
// once (plus the halo ring), and the loads of plane z+2 are in flight while plane z is computed.
// Per plane, two barriers: nobody reads the tile any more -> the new plane is written.
template <class Model, int BX, int BY, int M>
__global__ void __launch_bounds__(BX* BY) planes3d(const Model m, const typename Model::Fields f, const DevGrid g,
                                                   const int zchunk) {
    using T = typename Model::value_type;
    using Sums = PlaneSums<T>;
    constexpr bool mirror = Model::mirror;
    constexpr int TX = BX + 2, TY = BY * M + 2, NT = BX * BY;
    constexpr int HALO = 2 * TX + 2 * (TY - 2);  // halo cells of one plane
    constexpr int H = (HALO + NT - 1) / NT;      // halo cells per thread
    __shared__ T tile[TY][TX];

    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
    const int xb = blockIdx.x * BX, yb = blockIdx.y * BY * M;
    const int z0 = blockIdx.z * zchunk, z1 = min(z0 + zchunk, g.nz);
    const int x = xb + tx, xc = load_index<mirror>(x, g.nx);

    // In-plane offsets of this thread's own cells and halo cells (clamped, as load_index says).
    std::int64_t own[M];
    bool active[M];
#pragma unroll
    for (int r = 0; r < M; ++r) {
        const int y = yb + ty + r * BY;
        own[r] = g.at(xc, load_index<mirror>(y, g.ny));
        active[r] = x < g.nx && y < g.ny;
    }
    std::int64_t halo_off[H];
    int halo_slot[H];  // flattened tile index, -1 for none
#pragma unroll
    for (int h = 0; h < H; ++h) {
        const int id = tid + h * NT;
        int hx, hy;
        if (id < TX) {
            hx = id, hy = 0;
        } else if (id < 2 * TX) {
            hx = id - TX, hy = TY - 1;
        } else if (id < 2 * TX + (TY - 2)) {
            hx = 0, hy = 1 + id - 2 * TX;
        } else {
            hx = TX - 1, hy = 1 + id - 2 * TX - (TY - 2);
        }
        halo_slot[h] = id < HALO ? hy * TX + hx : -1;
        halo_off[h] = g.at(load_index<mirror>(xb - 1 + hx, g.nx), load_index<mirror>(yb - 1 + hy, g.ny));
    }

    T vals[M], halo[H];  // the next plane to enter the tile, loaded ahead
    auto load_plane = [&](int z) {
        const std::int64_t zo = std::int64_t(load_index<mirror>(z, g.nz)) * g.plane;
#pragma unroll
        for (int r = 0; r < M; ++r) vals[r] = f.in[zo + own[r]];
#pragma unroll
        for (int h = 0; h < H; ++h)
            if (halo_slot[h] >= 0) halo[h] = f.in[zo + halo_off[h]];
    };
    // Barrier, the loaded plane into the tile, barrier, then each own cell's plane sums.
    auto enter_plane = [&](Sums (&sums)[M]) {
        __syncthreads();
        T* t = &tile[0][0];
#pragma unroll
        for (int r = 0; r < M; ++r) t[(ty + r * BY + 1) * TX + tx + 1] = vals[r];
#pragma unroll
        for (int h = 0; h < H; ++h)
            if (halo_slot[h] >= 0) t[halo_slot[h]] = halo[h];
        __syncthreads();
#pragma unroll
        for (int r = 0; r < M; ++r) {
            const int sy = ty + r * BY + 1, sx = tx + 1;
            sums[r] = m.plane_sums([&](int di, int dj) { return tile[sy + dj][sx + di]; });
        }
    };

    Sums below[M], at[M], above[M];
    load_plane(z0 - 1);
    enter_plane(below);
    load_plane(z0);
    enter_plane(at);
    load_plane(z0 + 1);
    for (int z = z0; z < z1; ++z) {
        typename Model::Point p[M];
#pragma unroll
        for (int r = 0; r < M; ++r)
            if (active[r]) p[r] = m.load_point(f, std::int64_t(z) * g.plane + own[r]);
        enter_plane(above);  // plane z+1
        load_plane(z + 2);   // in flight while plane z is computed
#pragma unroll
        for (int r = 0; r < M; ++r) {
            if (active[r]) m.store_planes(below[r], at[r], above[r], p[r], f, std::int64_t(z) * g.plane + own[r]);
            below[r] = at[r];
            at[r] = above[r];
        }
    }
}

}  // namespace strata::cuda
