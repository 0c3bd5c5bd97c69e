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
// Threads own fixed cells: thread (tx, ty) owns columns tx + i BX and rows ty + j BY, so a warp
// reads 32 consecutive words of one tile row (no bank conflicts) and each cell's pointwise state
// lives in one thread's registers for the whole pass. The tile is double-buffered in shared
// memory: step s reads one buffer and writes the other, so one barrier per step suffices (the
// new tile is complete before anyone reads it; nobody writes the buffer being read).
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
    typename Model::Point (&p)[CY][CX], const DevGrid& g, int x0, int y0, int depth) {
    using Tile = TemporalTile2d<BX, BY, CX, CY>;
    constexpr int TW = Tile::TW, TH = Tile::TH;
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int s = 1; s <= depth; ++s) {
#pragma unroll
        for (int j = 0; j < CY; ++j)
#pragma unroll
            for (int i = 0; i < CX; ++i) {
                const int sx = tx + i * BX, sy = ty + j * BY;
                // Exact after this step: at least s cells from the tile's edge (inside the domain).
                if (sx < s || sx >= TW - s || sy < s || sy >= TH - s) continue;
                const int gx = x0 + sx, gy = y0 + sy;
                if (Edge && (gx < 0 || gy < 0 || gx >= g.nx || gy >= g.ny)) continue;
                auto nb = [&](int di, int dj) {
                    if constexpr (Edge)
                        return cur[(load_index<true>(gy + dj, g.ny) - y0) * TW + load_index<true>(gx + di, g.nx) - x0];
                    else
                        return cur[(sy + dj) * TW + sx + di];
                };
                m.update(nb, nxt[sy * TW + sx], p[j][i]);
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
template <class Model, int BX, int BY, int CX, int CY>
__global__ void __launch_bounds__(BX* BY) temporal2d(const Model m, const typename Model::Fields rd,
                                                     const typename Model::Fields wr, const DevGrid g,
                                                     const int depth) {
    using T = typename Model::value_type;
    using Tile = TemporalTile2d<BX, BY, CX, CY>;
    constexpr int TW = Tile::TW, TH = Tile::TH;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* const tiles = reinterpret_cast<T*>(smem_raw);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x0 = blockIdx.x * Tile::out_w(depth) - depth, y0 = blockIdx.y * Tile::out_h(depth) - depth;

    typename Model::Point p[CY][CX];
#pragma unroll
    for (int j = 0; j < CY; ++j)
#pragma unroll
        for (int i = 0; i < CX; ++i) {
            const int sx = tx + i * BX, sy = ty + j * BY;
            // Cells outside the domain are loaded clamped and never used.
            const std::int64_t c = g.at(min(max(x0 + sx, 0), g.nx - 1), min(max(y0 + sy, 0), g.ny - 1));
            tiles[sy * TW + sx] = rd.in[c];
            p[j][i] = m.load_point(rd, c);
        }
    __syncthreads();
    const bool edge = x0 < 1 || y0 < 1 || x0 + TW > g.nx - 1 || y0 + TH > g.ny - 1;
    const T* e = edge ? temporal2d_steps<Model, BX, BY, CX, CY, true>(m, tiles, tiles + TW * TH, p, g, x0, y0, depth)
                      : temporal2d_steps<Model, BX, BY, CX, CY, false>(m, tiles, tiles + TW * TH, p, g, x0, y0, depth);

#pragma unroll
    for (int j = 0; j < CY; ++j)
#pragma unroll
        for (int i = 0; i < CX; ++i) {
            const int sx = tx + i * BX, sy = ty + j * BY, gx = x0 + sx, gy = y0 + sy;
            const bool out = sx >= depth && sx < TW - depth && sy >= depth && sy < TH - depth;
            if (out && gx < g.nx && gy < g.ny) m.write(e[sy * TW + sx], p[j][i], wr, g.at(gx, gy));
        }
}

template <class Model, int BX, int BY, int CX, int CY>
constexpr std::size_t temporal2d_smem_bytes() {
    return 2 * std::size_t(BX * CX) * (BY * CY) * sizeof(typename Model::value_type);
}

// Raises the kernel's dynamic shared memory limit once (past 48 KB needs the opt-in).
template <class Model, int BX, int BY, int CX, int CY>
void temporal2d_prepare() {
    static const bool done = [] {
        STRATA_CUDA_CHECK(cudaFuncSetAttribute(temporal2d<Model, BX, BY, CX, CY>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               int(temporal2d_smem_bytes<Model, BX, BY, CX, CY>())));
        return true;
    }();
    (void)done;
}

}  // namespace strata::cuda
