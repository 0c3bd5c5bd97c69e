#pragma once
// temporal (3D): K time steps per pass over memory, by 2.5D streaming with K pipelined levels.
//
// A block owns an xy tile of TW x TH cells (its output region plus a margin of K cells on every
// side, overlapping its neighbours' tiles as in temporal2d.cuh) and marches it along z over a
// chunk of planes [z0, z1). Level 0 is the state read from memory; level l+1 is level l advanced
// one step. When plane q of level 0 arrives, level 1 can advance plane q-1 (it has planes q-2,
// q-1 and q of level 0), then level 2 plane q-2, ..., and level K plane q-K, which is stored: a
// pipeline K planes deep, with each level's newest plane in shared memory and, per cell, the
// plane sums (plane_sums.hpp) of its two older planes in a register queue, as in planes3d.
// Level l is exact on cells at least l from the tile's edge, so after K levels the output
// region is; along z the chunk reads K extra planes at each end for the same reason.
//
// Level 0 arrives through cp.async into a ring of S stages, S-1 planes ahead (async3d), so the
// bytes in flight cost no registers. Threads own fixed cells, as in temporal2d: thread (tx, ty)
// owns columns tx + i BX and the CY consecutive rows from ty CY, so a warp works on one row at a
// time (rows too near the tile's edge for a level are skipped by whole warps), and a cell's
// vertical neighbours inside a thread's rows come from registers.
//
// Fixed (Dirichlet, zero) boundaries only: every cell outside the domain is 0 at every level.
// Level 0 reads them from the ghost layer (load_index clamps to it); later levels write 0.
// Barriers: one per plane for the ring, then one per level, so that level l's newest plane is
// complete before level l+1 reads it. A level's buffer is rewritten one plane later, K-1
// barriers after its last reader (K = 1 uses no level buffer).
#include <cstdint>
#include <utility>

#include "check.hpp"
#include "grid.cuh"
#include "strata/core/plane_sums.hpp"
#include "strategies3d.cuh"

namespace strata::cuda {

template <int BX, int BY, int CX, int CY>
struct TemporalTile3d {
    static constexpr int TW = BX * CX, TH = BY * CY, CELLS = TW * TH;
    __host__ __device__ static constexpr int out_w(int depth) { return TW - 2 * depth; }
    __host__ __device__ static constexpr int out_h(int depth) { return TH - 2 * depth; }
};

template <class Model, int BX, int BY, int CX, int CY, int K, int S, int MinBlocks>
__global__ void __launch_bounds__(BX* BY, MinBlocks)
    temporal3d(const Model m, const typename Model::Fields rd, const typename Model::Fields wr, const DevGrid g,
               const int zchunk) {
    static_assert(!Model::mirror, "temporal3d applies fixed (zero) boundaries");
    static_assert(S >= 2 && K >= 1 && CX * CY <= 32 && CY * K <= 32, "the cell and row bits fit one word");
    using T = typename Model::value_type;
    using Sums = PlaneSums<T>;
    using Tile = TemporalTile3d<BX, BY, CX, CY>;
    constexpr int TW = Tile::TW, TH = Tile::TH, CELLS = Tile::CELLS;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    // S stages of level 0 after 16 bytes of padding (box stencils' corner reads at the tile's
    // edge cells, whose values are never used, reach one cell before or after the buffers).
    T* const ring = reinterpret_cast<T*>(smem_raw) + 16 / sizeof(T);
    T* const levels = ring + S * CELLS;              // the newest plane of levels 1 .. K-1

    const int tx = threadIdx.x, row0 = threadIdx.y * CY;
    const int x0 = blockIdx.x * Tile::out_w(K) - K, y0 = blockIdx.y * Tile::out_h(K) - K;
    const int z0 = blockIdx.z * zchunk, z1 = min(z0 + zchunk, g.nz);

    // Per own column and row: the offset to load from (clamped into the ghost layer). Per own
    // cell, bits (kept in one register each, not re-derived at every use): whether it lies in the
    // domain, and whether it is far enough from the tile's edge to be stored; per own row and
    // level, whether the level is exact there (the row is at least that far from the edge).
    int col[CX], row_off[CY];
    unsigned inside = 0, stored = 0, rows = 0;
#pragma unroll
    for (int j = 0; j < CY; ++j) {
        const int sy = row0 + j, y = y0 + sy, dist_y = min(sy, TH - 1 - sy);
        row_off[j] = int(load_index<false>(y, g.ny) * g.pitch);
#pragma unroll
        for (int l = 1; l <= K; ++l) rows |= unsigned(dist_y >= l) << (j * K + l - 1);
#pragma unroll
        for (int i = 0; i < CX; ++i) {
            const int sx = tx + i * BX, x = x0 + sx;
            const bool in = x >= 0 && x < g.nx && y >= 0 && y < g.ny;
            inside |= unsigned(in) << (j * CX + i);
            stored |= unsigned(in && sx >= K && sx < TW - K && dist_y >= K) << (j * CX + i);
        }
    }
#pragma unroll
    for (int i = 0; i < CX; ++i) col[i] = load_index<false>(x0 + tx + i * BX, g.nx);
    // Opaque to the optimizer, which would otherwise fold each bit test back into the
    // comparisons it came from and evaluate them again per cell and level.
    asm("" : "+r"(inside), "+r"(stored), "+r"(rows));

    // Level-0 planes [qa, qb) feed output planes [z0, z1).
    const int qa = z0 - K, qb = z1 + K;
    auto issue = [&](int q, T* stage) {  // plane q's copies as one commit group (empty past qb)
        if (q < qb) {
            const T* src = rd.in + std::int64_t(load_index<false>(q, g.nz)) * g.plane;
#pragma unroll
            for (int j = 0; j < CY; ++j)
#pragma unroll
                for (int i = 0; i < CX; ++i)
                    cp_async<sizeof(T)>(stage + (row0 + j) * TW + tx + i * BX, src + row_off[j] + col[i]);
        }
        cp_async_commit();
    };
    for (int q = qa; q < qa + S - 1; ++q) issue(q, ring + (q - qa) * CELLS);

    Sums older[K][CY][CX], old[K][CY][CX];  // level l's plane sums at its planes p-1 and p
    int slot = 0;                           // the stage of plane q
    for (int q = qa; q < qb; ++q) {
        cp_async_wait<S - 2>();
        __syncthreads();  // plane q is in its stage, and nobody reads the stage of plane q-1
        issue(q + S - 1, ring + (slot == 0 ? S - 1 : slot - 1) * CELLS);
        const T* src = ring + slot * CELLS;
        slot = slot + 1 == S ? 0 : slot + 1;

        T cur[CY][CX];  // own cells of the level being read, at its newest plane
#pragma unroll
        for (int j = 0; j < CY; ++j)
#pragma unroll
            for (int i = 0; i < CX; ++i) cur[j][i] = src[(row0 + j) * TW + tx + i * BX];

#pragma unroll
        for (int l = 0; l < K; ++l) {
            // Level l's planes start at z0 - K + l, reached at q = qa + 2l (each level lags one
            // plane behind the one it reads); level l+1 needs three of them.
            if (q < qa + 2 * l) break;  // block-uniform, so no barrier is skipped by some threads only
            if (l > 0) {
                __syncthreads();  // level l's newest plane is complete
                src = levels + (l - 1) * CELLS;
            }
            T* const dst = levels + l * CELLS;  // level l+1 (when l+1 < K)
            const bool advance = q >= qa + 2 * l + 2;
            const int p = q - l - 1;  // the plane level l+1 computes now
            const bool in_z = p >= 0 && p < g.nz;
            const bool store = l + 1 == K && p >= z0 && p < z1;
            T nxt[CY][CX];
#pragma unroll
            for (int j = 0; j < CY; ++j) {
                if (!(rows >> (j * K + l) & 1)) continue;  // level l+1 is not exact on this row: skip it
                const int sy = row0 + j;
#pragma unroll
                for (int i = 0; i < CX; ++i) {
                    const int sx = tx + i * BX;
                    auto u = [&](int di, int dj) -> T {
                        if (di == 0 && dj == 0) return cur[j][i];
                        if (di == 0 && dj == -1 && j > 0) return cur[j > 0 ? j - 1 : 0][i];
                        if (di == 0 && dj == 1 && j + 1 < CY) return cur[j + 1 < CY ? j + 1 : j][i];
                        return src[(sy + dj) * TW + sx + di];
                    };
                    const Sums above = m.plane_sums(u);
                    // Before `advance` the queue is not full yet: v is garbage that nobody reads
                    // (the next level starts later, and `store` is false), cheaper than a branch.
                    const bool in = in_z && (inside >> (j * CX + i) & 1);
                    const T v = in ? m.update_planes(older[l][j][i], old[l][j][i], above) : T(0);
                    nxt[j][i] = v;
                    if (l + 1 < K)
                        dst[sy * TW + sx] = v;
                    else if (store && (stored >> (j * CX + i) & 1))
                        wr.out[std::int64_t(p) * g.plane + row_off[j] + col[i]] = v;
                    older[l][j][i] = old[l][j][i];
                    old[l][j][i] = above;
                }
            }
            if (!advance || l + 1 == K) break;
#pragma unroll
            for (int j = 0; j < CY; ++j)
#pragma unroll
                for (int i = 0; i < CX; ++i) cur[j][i] = nxt[j][i];
        }
    }
}

// Dynamic shared memory of one block: the ring and K-1 level planes, and the padding around them.
template <class T, int BX, int BY, int CX, int CY, int K, int S>
constexpr std::size_t temporal3d_smem_bytes() {
    return std::size_t(S + K - 1) * TemporalTile3d<BX, BY, CX, CY>::CELLS * sizeof(T) + 2 * 16;
}

}  // namespace strata::cuda
