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

// V consecutive values moved as one access (8 or 16 bytes), V = 1 being a plain scalar.
template <class T, int V>
struct alignas(sizeof(T) * V) Lanes {
    T v[V];
};

// planes (2.5D streaming): a BX x BY block covers a (BX V) x (BY M) tile of the xy-plane and
// marches along z over a chunk of planes. Each thread owns V x M cells: V consecutive cells
// along x (one 16-byte access when V > 1, the `vec` strategy) in each of M rows ty, ty + BY, ...
// (`multi` when M > 1). Shared memory holds one plane, the newest (z+1), with a one-cell halo
// ring; from it each thread takes the plane sums of its cells (PlaneSums) and keeps a register
// queue of the sums of planes z-1, z and z+1, from which the model updates plane z. So each
// plane is read from global memory once (plus the halo ring). The loads of the next D planes
// are in flight while plane z is computed: a streaming kernel is limited by the bytes it keeps
// in flight per SM (about 20 KB are needed on an H100), and registers cap the threads per SM
// (the launch bound keeps at least MinBlocks blocks per SM). Per plane, two barriers: nobody reads the tile any more ->
// the new plane is written. Tile rows start 16-byte aligned (the left halo cell sits just before),
// so the V-wide shared-memory accesses of a warp are conflict-free.
// V > 1 needs ghost-layer boundaries (not mirror) and a model with one output field (`out`),
// written with V-wide stores.
template <class Model, int BX, int BY, int M, int V, int D, int MinBlocks>
__global__ void __launch_bounds__(BX* BY, MinBlocks) planes3d(const Model m, const typename Model::Fields f, const DevGrid g,
                                                   const int zchunk) {
    using T = typename Model::value_type;
    using Sums = PlaneSums<T>;
    using Vec = Lanes<T, V>;
    constexpr bool mirror = Model::mirror;
    static_assert(V == 1 || !mirror, "V-wide loads read the ghost layer; mirror boundaries need V = 1");
    constexpr int W = BX * V;                             // tile width in cells
    constexpr int OFF = V;                                // the interior starts at this column
    constexpr int TXP = (OFF + W + 1 + V - 1) / V * V;    // padded row length, a multiple of V
    constexpr int TY = BY * M + 2, NT = BX * BY;
    constexpr int HALO = 2 * (W + 2) + 2 * (TY - 2);      // halo cells of one plane
    constexpr int H = (HALO + NT - 1) / NT;               // halo cells per thread
    __shared__ __align__(16) T tile[TY][TXP];

    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
    const int xb = blockIdx.x * W, yb = blockIdx.y * BY * M;
    const int z0 = blockIdx.z * zchunk, z1 = min(z0 + zchunk, g.nz);
    const int x0 = xb + tx * V;  // this thread's first column
    // The column its loads start at: clamped into memory that exists (see load_index); for V > 1
    // a V-aligned start at or before the ghost column, which the row padding keeps in bounds.
    const int xl = V == 1 ? load_index<mirror>(x0, g.nx) : min(x0, g.nx / V * V);

    // In-plane offsets of this thread's own cells and halo cells.
    std::int64_t own[M];
    bool row_active[M];
#pragma unroll
    for (int r = 0; r < M; ++r) {
        const int y = yb + ty + r * BY;
        own[r] = g.at(xl, load_index<mirror>(y, g.ny));
        row_active[r] = y < g.ny;
    }
    std::int64_t halo_off[H];
    int halo_slot[H];  // flattened tile index, -1 for none
#pragma unroll
    for (int h = 0; h < H; ++h) {
        const int id = tid + h * NT;
        int hx, hy;  // hx from -1 (left halo) to W (right halo)
        if (id < W + 2) {
            hx = id - 1, hy = 0;
        } else if (id < 2 * (W + 2)) {
            hx = id - (W + 2) - 1, hy = TY - 1;
        } else if (id < 2 * (W + 2) + (TY - 2)) {
            hx = -1, hy = 1 + id - 2 * (W + 2);
        } else {
            hx = W, hy = 1 + id - 2 * (W + 2) - (TY - 2);
        }
        halo_slot[h] = id < HALO ? hy * TXP + OFF + hx : -1;
        halo_off[h] = g.at(load_index<mirror>(xb + hx, g.nx), load_index<mirror>(yb - 1 + hy, g.ny));
    }

    // The next D planes to enter the tile, loaded ahead into slots used round-robin: slot d is
    // read at the steps z with (z - z0) % D == d, compile-time indices since the loop is
    // unrolled by D (a register copy between slots would wait for the load it copies).
    Vec vals[D][M];
    T halo[D][H];
    auto load_plane = [&](int z, int slot) {
        const std::int64_t zo = std::int64_t(load_index<mirror>(z, g.nz)) * g.plane;
#pragma unroll
        for (int r = 0; r < M; ++r) vals[slot][r] = *reinterpret_cast<const Vec*>(f.in + zo + own[r]);
#pragma unroll
        for (int h = 0; h < H; ++h)
            if (halo_slot[h] >= 0) halo[slot][h] = f.in[zo + halo_off[h]];
    };
    // Barrier, the loaded plane into the tile, barrier, then each own cell's plane sums.
    auto enter_plane = [&](Sums (&sums)[M][V], int slot) {
        __syncthreads();
#pragma unroll
        for (int r = 0; r < M; ++r) *reinterpret_cast<Vec*>(&tile[ty + r * BY + 1][OFF + tx * V]) = vals[slot][r];
        T* t = &tile[0][0];
#pragma unroll
        for (int h = 0; h < H; ++h)
            if (halo_slot[h] >= 0) t[halo_slot[h]] = halo[slot][h];
        __syncthreads();
#pragma unroll
        for (int r = 0; r < M; ++r) {
            T w[3][V + 2];  // rows y-1, y, y+1 of columns x0-1 .. x0+V
#pragma unroll
            for (int dj = 0; dj < 3; ++dj) {
                const T* row = &tile[ty + r * BY + dj][OFF + tx * V];
                const Vec mid = *reinterpret_cast<const Vec*>(row);
                w[dj][0] = row[-1];
#pragma unroll
                for (int v = 0; v < V; ++v) w[dj][v + 1] = mid.v[v];
                w[dj][V + 1] = row[V];
            }
#pragma unroll
            for (int v = 0; v < V; ++v)
                sums[r][v] = m.plane_sums([&](int di, int dj) { return w[dj + 1][v + 1 + di]; });
        }
    };

    Sums below[M][V], at[M][V], above[M][V];
    load_plane(z0 - 1, 0);
    enter_plane(below, 0);
    load_plane(z0, 0);
    enter_plane(at, 0);
#pragma unroll
    for (int d = 0; d < D; ++d) load_plane(z0 + 1 + d, d);
    for (int zb = z0; zb < z1; zb += D)
#pragma unroll
    for (int d = 0; d < D; ++d) {
        const int z = zb + d;
        if (z >= z1) break;  // the same for the whole block: no thread skips a barrier
        typename Model::Point p[M][V];
#pragma unroll
        for (int r = 0; r < M; ++r)
#pragma unroll
            for (int v = 0; v < V; ++v)
                if (row_active[r] && x0 + v < g.nx) p[r][v] = m.load_point(f, std::int64_t(z) * g.plane + own[r] + v);
        enter_plane(above, d);    // plane z+1
        load_plane(z + 1 + D, d);  // in flight while planes z .. z+D-1 are computed
#pragma unroll
        for (int r = 0; r < M; ++r) {
            const std::int64_t c = std::int64_t(z) * g.plane + own[r];
            if constexpr (V == 1) {
                if (row_active[r] && x0 < g.nx) m.store_planes(below[r][0], at[r][0], above[r][0], p[r][0], f, c);
            } else if (row_active[r] && x0 + V <= g.nx) {
                Vec out;
#pragma unroll
                for (int v = 0; v < V; ++v) out.v[v] = m.update_planes(below[r][v], at[r][v], above[r][v]);
                *reinterpret_cast<Vec*>(f.out + c) = out;
            } else if (row_active[r]) {  // the right edge of the grid: only the cells inside
#pragma unroll
                for (int v = 0; v < V; ++v)
                    if (x0 + v < g.nx) m.store_planes(below[r][v], at[r][v], above[r][v], p[r][v], f, c + v);
            }
#pragma unroll
            for (int v = 0; v < V; ++v) {
                below[r][v] = at[r][v];
                at[r][v] = above[r][v];
            }
        }
    }
}

}  // namespace strata::cuda
