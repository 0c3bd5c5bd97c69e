#pragma once
// temporal (2D): several time steps per pass over memory, with overlapped tiles.
//
// A block loads an extended tile of TW x TH cells (its output region plus a margin of `depth`
// cells on every side) of the stencil field into shared memory, and the pointwise state of the
// cells it owns into registers. It then advances the tile `depth` steps on chip: after step s the
// cells at least s from the tile's edge are exact (each step needs the neighbours of the
// previous one), so after `depth` steps the output region is, and only that is stored. Tiles of
// neighbouring blocks overlap by 2 depth cells; that recomputation is the price of reading and
// writing memory once per `depth` steps instead of once per step.
//
// The domain's mirror boundary needs no ghost cells here: a neighbour outside the domain is read
// at its mirror image inside the domain, which lies in the same tile (grid.cuh's load_index).
// Only blocks that touch the boundary pay for that index arithmetic (a block-uniform branch).
//
// Threads own fixed cells: thread (tx, ty) owns columns tx + i BX and the CY consecutive rows
// from ty CY, so a warp reads 32 consecutive words of one tile row (no bank conflicts) and each
// cell's pointwise state and latest value live in one thread's registers for the whole pass:
// the vertical neighbours come from registers, except at the ends of a thread's rows. Shared
// memory holds the tile twice: step s reads one copy and writes the other, so one barrier per
// step suffices (the new tile is complete before anyone reads it; nobody writes the copy being
// read). A cell's liveness is the smaller of its row's and its column's distance to the tile
// edge (or -1 outside the domain), so the per-step test is two comparisons, and the row's part
// is the same for the whole warp.
#include "check.hpp"
#include "grid.cuh"

namespace strata::cuda {

// Tile geometry shared by the kernel and its host launcher.
template <int BX, int BY, int CX, int CY>
struct TemporalTile2d {
    static constexpr int TW = BX * CX, TH = BY * CY;
    static constexpr int max_depth = (TW < TH ? TW : TH) / 4;  // keeps the output >= half the tile
    __host__ __device__ static int out_w(int depth) { return TW - 2 * depth; }
    __host__ __device__ static int out_h(int depth) { return TH - 2 * depth; }
};

template <class Model, int BX, int BY, int CX, int CY, bool Edge>
__device__ __forceinline__ const typename Model::value_type* temporal2d_steps(
    const Model& m, typename Model::value_type* cur, typename Model::value_type* nxt,
    typename Model::value_type (&ev)[CY][CX], typename Model::Point (&p)[CY][CX], const int (&dx)[CX],
    const int (&dy)[CY], const DevGrid& g, int x0, int y0, int depth) {
    using T = typename Model::value_type;
    using Tile = TemporalTile2d<BX, BY, CX, CY>;
    constexpr int TW = Tile::TW, TH = Tile::TH;
    const int tx = threadIdx.x, ty = threadIdx.y, row0 = ty * CY;
    for (int s = 1; s <= depth; ++s) {
#pragma unroll
        for (int i = 0; i < CX; ++i) {
            const int sx = tx + i * BX;
            const bool col_live = s <= dx[i];
            // The rows just above and below this thread's rows (clamped: read, never used, at the
            // tile's edge rows, which are never live).
            T up = cur[max(row0 - 1, 0) * TW + sx];
            const T below = cur[min(row0 + CY, TH - 1) * TW + sx];
#pragma unroll
            for (int j = 0; j < CY; ++j) {
                const int sy = row0 + j;
                const T old = ev[j][i];
                const T down = j + 1 < CY ? ev[j + 1][i] : below;
                if (s <= dy[j] && col_live) {
                    const int gx = x0 + sx, gy = y0 + sy;
                    auto nb = [&](int di, int dj) {
                        if constexpr (Edge)  // mirror images inside the domain, from the tile
                            return cur[(load_index<true>(gy + dj, g.ny) - y0) * TW + load_index<true>(gx + di, g.nx) -
                                       x0];
                        else
                            return dj < 0 ? up : dj > 0 ? down : di == 0 ? old : cur[sy * TW + sx + di];
                    };
                    T en;
                    m.update(nb, en, p[j][i]);
                    ev[j][i] = en;
                    nxt[sy * TW + sx] = en;
                }
                up = old;
            }
        }
        __syncthreads();
        auto* t = cur;
        cur = nxt;
        nxt = t;
    }
    return cur;
}

// `rd` supplies the old state (in, and the pointwise state), `wr` receives the new one (out, and
// the pointwise state): the two must not alias, since neighbouring tiles read what this one
// overwrites. Dynamic shared memory: two TW x TH tiles.
template <class Model, int BX, int BY, int CX, int CY, int MinBlocks>
__global__ void __launch_bounds__(BX* BY, MinBlocks) temporal2d(const Model m, const typename Model::Fields rd,
                                                     const typename Model::Fields wr, const DevGrid g,
                                                     const int depth) {
    using T = typename Model::value_type;
    using Tile = TemporalTile2d<BX, BY, CX, CY>;
    constexpr int TW = Tile::TW, TH = Tile::TH;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* const tiles = reinterpret_cast<T*>(smem_raw);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x0 = blockIdx.x * Tile::out_w(depth) - depth, y0 = blockIdx.y * Tile::out_h(depth) - depth;

    T ev[CY][CX];
    typename Model::Point p[CY][CX];
    int dx[CX], dy[CY];  // distance to the tile's edge, -1 outside the domain
#pragma unroll
    for (int i = 0; i < CX; ++i) {
        const int sx = tx + i * BX, gx = x0 + sx;
        dx[i] = gx >= 0 && gx < g.nx ? min(sx, TW - 1 - sx) : -1;
    }
#pragma unroll
    for (int j = 0; j < CY; ++j) {
        const int sy = ty * CY + j, gy = y0 + sy;
        dy[j] = gy >= 0 && gy < g.ny ? min(sy, TH - 1 - sy) : -1;
    }
#pragma unroll
    for (int j = 0; j < CY; ++j)
#pragma unroll
        for (int i = 0; i < CX; ++i) {
            const int sx = tx + i * BX, sy = ty * CY + j;
            // Cells outside the domain are loaded clamped and never used.
            const std::int64_t c = g.at(min(max(x0 + sx, 0), g.nx - 1), min(max(y0 + sy, 0), g.ny - 1));
            ev[j][i] = rd.in[c];
            tiles[sy * TW + sx] = ev[j][i];
            p[j][i] = m.load_point(rd, c);
        }
    __syncthreads();
    const bool edge = x0 < 1 || y0 < 1 || x0 + TW > g.nx - 1 || y0 + TH > g.ny - 1;
    T* const a = tiles;
    T* const b = tiles + TW * TH;
    const T* e = edge ? temporal2d_steps<Model, BX, BY, CX, CY, true>(m, a, b, ev, p, dx, dy, g, x0, y0, depth)
                      : temporal2d_steps<Model, BX, BY, CX, CY, false>(m, a, b, ev, p, dx, dy, g, x0, y0, depth);

#pragma unroll
    for (int j = 0; j < CY; ++j)
#pragma unroll
        for (int i = 0; i < CX; ++i) {
            const int sx = tx + i * BX, sy = ty * CY + j;
            if (dx[i] >= depth && dy[j] >= depth)
                m.write(e[sy * TW + sx], p[j][i], wr, g.at(x0 + sx, y0 + sy));
        }
}

template <class Model, int BX, int BY, int CX, int CY>
constexpr std::size_t temporal2d_smem_bytes() {
    return 2 * std::size_t(BX * CX) * (BY * CY) * sizeof(typename Model::value_type);
}

}  // namespace strata::cuda
