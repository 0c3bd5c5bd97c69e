#pragma once
// The 3D strategies, kernel templates over the model and the launch shape (see strategies2d.cuh).
#include "grid.cuh"

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
// thread owns M cells of the tile (rows ty, ty + BY, ...) and keeps their column values in a
// register queue; each plane is read from global memory once, plus a one-cell halo ring.
//   star stencils (7-point): shared memory holds the current plane; z-1 and z+1 come from the
//     register queue.
//   box stencils (19/27-point): shared memory holds a ring of three planes (z-1, z, z+1),
//     since the diagonal neighbours above and below are needed too.
// Per plane: the next plane's loads are issued, a barrier (nobody reads the slot about to be
// overwritten any more), the slot is written, a barrier, then the M cells are computed.
template <class Model, int BX, int BY, int M>
__global__ void __launch_bounds__(BX* BY) planes3d(const Model m, const typename Model::Fields f, const DevGrid g,
                                                   const int zchunk) {
    using T = typename Model::value_type;
    constexpr bool mirror = Model::mirror, star = Model::star;
    constexpr int TX = BX + 2, TY = BY * M + 2, NT = BX * BY;
    constexpr int NP = star ? 1 : 3;                   // planes held in shared memory
    constexpr int HALO = 2 * TX + 2 * (TY - 2);        // halo cells of one plane
    constexpr int HALO_PER_THREAD = (HALO + NT - 1) / NT;
    __shared__ T tile[NP][TY][TX];

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
    std::int64_t halo_off[HALO_PER_THREAD];
    int halo_slot[HALO_PER_THREAD];  // index into tile[p] flattened, -1 if none
#pragma unroll
    for (int h = 0; h < HALO_PER_THREAD; ++h) {
        const int id = tid + h * NT;
        int hx = 0, hy = 0;
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
    auto plane_off = [&](int z) { return std::int64_t(load_index<mirror>(z, g.nz)) * g.plane; };
    auto fill_slot = [&](int slot, int z, const T (&vals)[M], const T (&halo)[HALO_PER_THREAD]) {
        T* t = &tile[slot][0][0];
#pragma unroll
        for (int r = 0; r < M; ++r) t[(ty + r * BY + 1) * TX + tx + 1] = vals[r];
#pragma unroll
        for (int h = 0; h < HALO_PER_THREAD; ++h)
            if (halo_slot[h] >= 0) t[halo_slot[h]] = halo[h];
    };
    auto load_plane = [&](int z, T (&vals)[M], T (&halo)[HALO_PER_THREAD]) {
        const std::int64_t zo = plane_off(z);
#pragma unroll
        for (int r = 0; r < M; ++r) vals[r] = f.in[zo + own[r]];
#pragma unroll
        for (int h = 0; h < HALO_PER_THREAD; ++h)
            if (halo_slot[h] >= 0) halo[h] = f.in[zo + halo_off[h]];
    };

    T below[M], cur[M], above[M], halo[HALO_PER_THREAD];
    if constexpr (star) {
#pragma unroll
        for (int r = 0; r < M; ++r) {
            below[r] = f.in[plane_off(z0 - 1) + own[r]];
            cur[r] = f.in[plane_off(z0) + own[r]];
        }
    } else {
        // Prologue: planes z0-1 and z0 into the ring (slots by z mod 3, shifted to stay >= 0).
        load_plane(z0 - 1, below, halo);
        fill_slot((z0 + 2) % 3, z0 - 1, below, halo);
        load_plane(z0, cur, halo);
        fill_slot(z0 % 3, z0, cur, halo);
    }
    for (int z = z0; z < z1; ++z) {
        typename Model::Point p[M];
        if constexpr (star) {
            const std::int64_t zo = plane_off(z);
#pragma unroll
            for (int h = 0; h < HALO_PER_THREAD; ++h)
                if (halo_slot[h] >= 0) halo[h] = f.in[zo + halo_off[h]];
#pragma unroll
            for (int r = 0; r < M; ++r) above[r] = f.in[plane_off(z + 1) + own[r]];
        } else {
            load_plane(z + 1, above, halo);
        }
#pragma unroll
        for (int r = 0; r < M; ++r)
            if (active[r]) p[r] = m.load_point(f, std::int64_t(z) * g.plane + own[r]);
        __syncthreads();
        if constexpr (star) {
            fill_slot(0, z, cur, halo);
        } else {
            fill_slot((z + 1) % 3, z + 1, above, halo);
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < M; ++r) {
            if (!active[r]) continue;
            const int sy = ty + r * BY + 1, sx = tx + 1;
            auto nb = [&](int di, int dj, int dk) {
                if constexpr (star) {
                    if (dk < 0) return below[r];
                    if (dk > 0) return above[r];
                    if (di == 0 && dj == 0) return cur[r];
                    return tile[0][sy + dj][sx + di];
                } else {
                    if (di == 0 && dj == 0) return dk < 0 ? below[r] : dk > 0 ? above[r] : cur[r];
                    return tile[(z + 3 + dk) % 3][sy + dj][sx + di];
                }
            };
            const std::int64_t c = std::int64_t(z) * g.plane + own[r];
            m.store(nb, p[r], f, c);
        }
#pragma unroll
        for (int r = 0; r < M; ++r) {
            below[r] = cur[r];
            cur[r] = above[r];
        }
    }
}

}  // namespace strata::cuda
