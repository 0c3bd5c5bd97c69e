#pragma once
// The strategies of the radius-4 wave model (Wave3D), kernel templates over the model and the
// launch shape, and their entries in the strategy table the engine picks from (strategies.cuh holds
// the radius-1 strategies, whose tiles and queues are one cell deep).
#ifndef __CUDACC_RTC__
#include <algorithm>
#include <string>
#include <vector>

#include "strategy_names.hpp"
#endif
#include "grid.cuh"
#include "strata/core/block_order.hpp"
#include "strata/core/cstdint.hpp"
#include "strategies.cuh"
#include "tma.cuh"

namespace strata::cuda {

// Clamps a coordinate into the rows and planes that exist: the ghost layer is R cells deep.
// Threads of partial tiles load clamped values that feed no stored cell.
template <int R>
__device__ __forceinline__ int clamp_ghost(int i, int n) {
    return min(max(i, -R), n + R - 1);
}

// naive: one thread per cell, all 25 neighbours from global memory (through L1/L2).
template <class Model, int BX, int BY, int BZ>
__global__ void __launch_bounds__(BX* BY* BZ)
    wave_naive(const Model m, const typename Model::Fields f, const DevGrid g) {
    const int i = g.xlo + blockIdx.x * BX + threadIdx.x, j = g.ylo + blockIdx.y * BY + threadIdx.y,
              k = g.lo + blockIdx.z * BZ + threadIdx.z;
    if (i >= g.nx || j >= g.ny || k >= g.end(g.nz)) return;
    const std::int64_t c = g.at(i, j, k);
    auto nb = [&](int di, int dj, int dk) { return f.in[c + g.at(di, dj, dk)]; };
    m.store(nb, f, i, j, k, c);
}

// The xy tile of a 2.5D wave kernel: a BX x BY block owns (BX V) x BY cells, each thread V
// consecutive cells along x (one 16-byte word). Shared memory holds a plane of the tile with an
// R-cell halo on the four sides (a star needs no corners), TY rows of TX cells; the halo is
// HALO V-wide words, H per thread at most. Every word a thread reads is clamped into memory that
// exists (the ghost layer is R deep; rows are padded, grid.cuh).
template <class T, int R, int BX, int BY, int V>
struct WaveTile {
    using Vec = Lanes<T, V>;
    static constexpr int RV = R / V;  // the halo's width in V-wide words
    static_assert(R % V == 0, "the halo must be whole V-wide words to stay aligned");
    static constexpr int W = BX * V, TX = W + 2 * R, TY = BY + 2 * R, CELLS = TX * TY;
    static constexpr int HALO = 2 * R * BX + 2 * BY * RV;
    static constexpr int NT = BX * BY, H = (HALO + NT - 1) / NT;
    static constexpr int OWN = W * BY;  // cells of the block's own words in a plane

    int x, y;                 // the thread's first cell
    std::int64_t own;         // its word's offset in a plane
    int own_slot;             // and in the tile
    std::int64_t halo_off[H];
    int halo_slot[H];         // -1: none
    unsigned inside;          // bit 0: the own word holds interior cells of its row; bit 1+h: halo word h

    // The tile of block column (bx, by) of the launch's spans (DevGrid::xlo).
    __device__ WaveTile(const DevGrid& g, int bx, int by) {
        const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
        const int xb = g.xlo + bx * W, yb = g.ylo + by * BY;
        x = xb + tx * V;
        y = yb + ty;
        // The last V-aligned word that holds cells up to nx+R-1: the padded rows end at a
        // multiple of 128 bytes at or past nx + R, so it lies inside the row.
        const int xlast = (g.nx + R - 1) / V * V;
        auto word = [&](int xv, int yv) { return g.at(min(xv, xlast), clamp_ghost<R>(yv, g.ny)); };
        // Words start V-aligned from x = 0, so a word is either all ghost (or beyond) or holds
        // an interior cell.
        auto interior = [&](int xv, int yv) { return xv >= 0 && xv < g.nx && yv >= 0 && yv < g.ny; };
        own = word(x, y);
        own_slot = (R + ty) * TX + R + tx * V;
        inside = interior(x, y) ? 1u : 0u;
#pragma unroll
        for (int h = 0; h < H; ++h) {
            const int id = tid + h * NT;
            int col, row;  // in the tile
            if (id < 2 * R * BX) {  // R rows above, then R rows below
                const int r = id / BX;
                row = r < R ? r : BY + r;
                col = R + (id % BX) * V;
            } else {  // RV words left, then RV words right, of each of the BY rows
                const int e = id - 2 * R * BX, side = e / (BY * RV), rest = e % (BY * RV);
                row = R + rest / RV;
                col = side == 0 ? (rest % RV) * V : R + W + (rest % RV) * V;
            }
            halo_slot[h] = id < HALO ? row * TX + col : -1;
            halo_off[h] = word(xb - R + col, yb - R + row);
            if (id < HALO && interior(xb - R + col, yb - R + row)) inside |= 2u << h;
        }
    }

    // The update of the thread's V cells at plane z from the tile of plane z (x- and y-neighbours,
    // read as aligned V-wide words) and `zn(dk)`, p at the own cells of plane z+dk; stored unless
    // outside the grid.
    template <class Model, class ZNb>
    __device__ void update(const Model& m, const typename Model::Fields& f, const DevGrid& g, int z,
                           const T* tile, const ZNb& zn, const Vec& prev, const Vec& vdt2) const {
        Vec xs[1 + 2 * RV];  // cells x-R .. x+V+R-1 of row y
#pragma unroll
        for (int w = 0; w < 1 + 2 * RV; ++w) xs[w] = *reinterpret_cast<const Vec*>(tile + own_slot - R + w * V);
        Vec ys[2 * R + 1];  // rows y-R .. y+R at the own cells (ys[R] unused: it is xs' middle)
#pragma unroll
        for (int dj = -R; dj <= R; ++dj)
            if (dj != 0) ys[R + dj] = *reinterpret_cast<const Vec*>(tile + own_slot + dj * TX);
        Vec zs[2 * R + 1];  // planes z-R .. z+R at the own cells (zs[R] unused)
#pragma unroll
        for (int dk = -R; dk <= R; ++dk)
            if (dk != 0) zs[R + dk] = zn(dk);
        const Vec& centre = xs[RV];
        Vec out;
#pragma unroll
        for (int v = 0; v < V; ++v) {
            auto nb = [&](int di, int dj, int dk) {
                if (dk != 0) return zs[R + dk].v[v];
                if (dj != 0) return ys[R + dj].v[v];
                const int c = R + v + di;
                return xs[c / V].v[c % V];
            };
            out.v[v] = m.update(centre.v[v], prev.v[v], vdt2.v[v], m.laplacian(nb), m.eta(x + v, y, z));
        }
        if (y < g.ny) {
            T* dst = f.out + std::int64_t(z) * g.plane + own;
            if (x + V <= g.nx) {
                *reinterpret_cast<Vec*>(dst) = out;
            } else {
#pragma unroll
                for (int v = 0; v < V; ++v)
                    if (x + v < g.nx) dst[v] = out.v[v];
            }
        }
    }

    // update() at plane z from a 2.5D loader's rings (async's cp.async, tma's TMA). p's ring has S
    // stages of STRIDE elements, plane z+dk's tile in stage (pb + R + dk) mod S; `vs` is the stage
    // of p^{n-1} (the block's OWN cells) and vdt2 after it. p^{n-1} and vdt2 are read into
    // registers before the update (its 19 tile reads): the compiler then schedules them first,
    // which was 3% faster in fp32 than reading them as arguments.
    template <int S, int STRIDE, class Model>
    __device__ __forceinline__ void update_from_rings(const Model& m, const typename Model::Fields& f, const DevGrid& g,
                                                      int z, const T* p_ring, int pb, const T* vs) const {
        auto wrap = [](int slot) { return slot >= S ? slot - S : slot; };
        const int v_slot = threadIdx.y * W + threadIdx.x * V;
        const Vec prev = *reinterpret_cast<const Vec*>(vs + v_slot);
        const Vec vdt2 = *reinterpret_cast<const Vec*>(vs + OWN + v_slot);
        update(m, f, g, z, p_ring + wrap(pb + R) * STRIDE,
               [&](int dk) { return *reinterpret_cast<const Vec*>(p_ring + wrap(pb + R + dk) * STRIDE + own_slot); },
               prev, vdt2);
    }
};

// planes (2.5D): a block marches its WaveTile along z over a chunk of planes. Each thread keeps
// p at planes z-R .. z+R of its cells in a register queue, so the z-neighbours never touch
// shared memory; the tile holds plane z. Loads are issued one step ahead, so they are in flight
// while a plane is computed: the next queue plane (z+R+2), the halo of plane z+1, and p^{n-1}
// and vdt2 of plane z+1. p^{n+1} is written over p^{n-1} (see Wave3D): only this thread reads
// p^{n-1} at its cells. Per plane, two barriers: nobody reads the tile any more -> plane z is
// in the tile.
template <class Model, int BX, int BY, int V, int MinBlocks>
__global__ void __launch_bounds__(BX* BY, MinBlocks)
    wave_planes(const Model m, const typename Model::Fields f, const DevGrid g, const int zchunk) {
    using T = typename Model::value_type;
    constexpr int R = Model::radius;
    using Tile = WaveTile<T, R, BX, BY, V>;
    using Vec = typename Tile::Vec;
    __shared__ __align__(16) T tile[Tile::CELLS];
    const Tile t(g, blockIdx.x, blockIdx.y);

    const int z0 = g.lo + blockIdx.z * zchunk, z1 = min(z0 + zchunk, g.end(g.nz));
    auto load = [&](const T* field, int z, std::int64_t off) {
        return *reinterpret_cast<const Vec*>(field + std::int64_t(clamp_ghost<R>(z, g.nz)) * g.plane + off);
    };
    Vec halo[Tile::H];
    auto load_halo = [&](int z) {
#pragma unroll
        for (int h = 0; h < Tile::H; ++h)
            if (t.halo_slot[h] >= 0) halo[h] = load(f.in, z, t.halo_off[h]);
    };

    Vec q[2 * R + 1];  // p^n at planes z-R .. z+R of the own cells
#pragma unroll
    for (int d = 0; d < 2 * R + 1; ++d) q[d] = load(f.in, z0 - R + d, t.own);
    Vec next = load(f.in, z0 + R + 1, t.own);
    Vec prev = load(f.out, z0, t.own), vdt2 = load(f.vdt2, z0, t.own);
    load_halo(z0);

    for (int z = z0; z < z1; ++z) {
        __syncthreads();
        *reinterpret_cast<Vec*>(tile + t.own_slot) = q[R];
#pragma unroll
        for (int h = 0; h < Tile::H; ++h)
            if (t.halo_slot[h] >= 0) *reinterpret_cast<Vec*>(tile + t.halo_slot[h]) = halo[h];
        __syncthreads();
        const Vec prev_z = prev, vdt2_z = vdt2;
        prev = load(f.out, z + 1, t.own);
        vdt2 = load(f.vdt2, z + 1, t.own);
        load_halo(z + 1);
        t.update(m, f, g, z, tile, [&](int dk) { return q[R + dk]; }, prev_z, vdt2_z);
#pragma unroll
        for (int d = 0; d < 2 * R; ++d) q[d] = q[d + 1];
        q[2 * R] = next;
        next = load(f.in, z + R + 2, t.own);
    }
}

// async: the planes strategy with its loads off the registers, as the heat async strategy:
// planes are copied straight into shared memory with cp.async, K planes ahead of need, so the
// bytes in flight per SM are bounded by shared memory, not registers. A ring of 2R+1+K stages
// holds the tiles of p at planes z-R .. z+R (whose own cells are the z-neighbours: no register
// queue) and the K in flight; a ring of K+1 stages holds p^{n-1} and vdt2 of the own cells at
// planes z .. z+K. Per plane z: wait for this thread's copies of group z (p at z+R, the rest at
// z), one barrier (every copy of the group is visible, and nobody still reads the stages of
// plane z-1), start group z+K into those stages, update plane z. Stage indices advance by one
// per plane: a modulo per neighbour plane cost 4% of the fp32 rate (H100). Words of the ghost
// layer are zero-filled rather than read (2% faster in fp32, 1.5% in fp64), and the blocks run in
// groups of tile rows that fit on the device (grouped_block: fp64 88.9% -> 91.3% of copy at 48
// planes per block, as the planes where chunks overlap now come from L2).
// Measured at 512^3 (H100): K = 2 beats 1 by 3-4%; K = 3 fits one block per SM, and loading
// p^{n-1} and vdt2 into registers instead (less shared memory, a third block per SM at 80
// registers) spills: both slower.
template <class T, int R, int BX, int BY, int V, int K>
constexpr std::size_t wave_async_smem_bytes() {
    using Tile = WaveTile<T, R, BX, BY, V>;
    return (std::size_t(2 * R + 1 + K) * Tile::CELLS + std::size_t(K + 1) * 2 * Tile::W * BY) * sizeof(T);
}

template <class Model, int BX, int BY, int V, int K>
__global__ void __launch_bounds__(BX* BY)
    wave_async(const Model m, const typename Model::Fields f, const DevGrid g, const int zchunk, const int rows) {
    using T = typename Model::value_type;
    constexpr int R = Model::radius, SP = 2 * R + 1 + K, SV = K + 1;
    using Tile = WaveTile<T, R, BX, BY, V>;
    static_assert(V * sizeof(T) == 16 || V * sizeof(T) == 8, "cp.async copies 8- or 16-byte words");
    static_assert(Model::zero_ghosts, "ghost words are zero-filled, not read");
    constexpr int OWN = Tile::OWN;  // cells of a p^{n-1} or vdt2 stage
    unsigned char* const smem_raw = dynamic_smem();
    T* p_ring = reinterpret_cast<T*>(smem_raw);
    T* v_ring = p_ring + SP * Tile::CELLS;  // stage s: p^{n-1} at v_ring + 2 s OWN, vdt2 after it
    const BlockCoords b =
        grouped_block(blockIdx.x, blocks_for(g.xend() - g.xlo, Tile::W), blocks_for(g.yend() - g.ylo, BY),
                      blocks_for(g.span(g.nz), zchunk), rows);
    const Tile t(g, b.x, b.y);
    const int z0 = g.lo + b.z * zchunk, z1 = min(z0 + zchunk, g.end(g.nz));
    const int v_slot = threadIdx.y * Tile::W + threadIdx.x * V;

    auto plane = [&](int z) { return std::int64_t(clamp_ghost<R>(z, g.nz)) * g.plane; };
    auto copy_p = [&](int z, int slot) {  // p at plane z, the own word and the halo, into a stage
        if (z >= z1 + R) return;
        T* st = p_ring + slot * Tile::CELLS;
        const std::int64_t zo = plane(z);
        // Ghost words (p = 0 there) are zero-filled, not read: their sectors were 3% of the bytes.
        const unsigned in = unsigned(z) < unsigned(g.nz) ? t.inside : 0u;
        cp_async_or_zero<sizeof(T) * V>(st + t.own_slot, f.in + zo + t.own, in & 1u);
#pragma unroll
        for (int h = 0; h < Tile::H; ++h)
            if (t.halo_slot[h] >= 0)
                cp_async_or_zero<sizeof(T) * V>(st + t.halo_slot[h], f.in + zo + t.halo_off[h],
                                                (in >> (1 + h)) & 1u);
    };
    auto copy_v = [&](int z, int slot) {  // p^{n-1} and vdt2 at plane z, the own word
        if (z >= z1) return;
        T* st = v_ring + slot * 2 * OWN;
        const std::int64_t zo = plane(z);
        cp_async<sizeof(T) * V>(st + v_slot, f.out + zo + t.own);
        cp_async<sizeof(T) * V>(st + OWN + v_slot, f.vdt2 + zo + t.own);
    };
    auto wrap = [](int slot, int n) { return slot >= n ? slot - n : slot; };

    // Group z (committed in this order) holds p at plane z+R and the rest at plane z; the first
    // also holds p at z0-R .. z0+R-1. Plane z0-R+i goes to p stage i, plane z0+i to v stage i.
    for (int i = 0; i < 2 * R; ++i) copy_p(z0 - R + i, i);
    for (int i = 0; i < K; ++i) {
        copy_p(z0 + R + i, 2 * R + i);
        copy_v(z0 + i, i);
        cp_async_commit();
    }
    int pb = 0, vb = 0;  // the stages of p at plane z-R and of the rest at plane z
    for (int z = z0; z < z1; ++z) {
        cp_async_wait<K - 1>();
        __syncthreads();
        copy_p(z + K + R, pb == 0 ? SP - 1 : pb - 1);  // over plane z-R-1
        copy_v(z + K, vb == 0 ? SV - 1 : vb - 1);      // over plane z-1
        cp_async_commit();
        t.template update_from_rings<SP, Tile::CELLS>(m, f, g, z, p_ring, pb, v_ring + vb * 2 * OWN);
        pb = wrap(pb + 1, SP);
        vb = wrap(vb + 1, SV);
    }
}

// tma: async's sweep with its loads on the Tensor Memory Accelerator, warp-specialized (CudaDMA's
// split, tma.cuh). The compute threads are async's BX x BY, and with Ws one more row of threads
// holds the DMA warp, whose first thread only issues copies: each plane's p tile with its halo
// (one TMA box of TX x TY elements from (xb - R, yb - R), the tile's own layout, corners
// included), and p^{n-1} and vdt2 of the own cells (two W x BY boxes), into two rings guarded by
// full/empty barriers:
//   p ring  SP = 2R+1+K stages; tile i is plane z0-R+i. Plane z = z0+j reads tiles j .. j+2R
//           (its z-neighbours' own cells, and its own tile with the halo); after plane z tile j
//           (plane z-R) is read no more, and the compute warps release it.
//   v ring  SV = K+1 stages; stage j is p^{n-1} and vdt2 at plane z0+j, released after plane z.
// The DMA thread issues in the order of need (tiles 0..2R-1, then per plane the tile 2R+j and
// stage j), each as soon as its stage is free. The tensor maps cover the interior only: the halo
// at the faces, and planes beyond the grid, arrive zero-filled, which is the zero ghost layer, so
// no ghost sector is read and no thread decides what to load. p^{n+1} is written over p^{n-1}
// (generic stores) at planes the TMA no longer reads. With Ws false (the A/B's "TMA without warp
// specialization"), thread (0, 0) issues the first stages, then refills each once every warp has
// released it (its warp waits for the slowest).
template <class T, int R, int BX, int BY, int V, int K>
struct WaveTmaLayout {
    using Tile = WaveTile<T, R, BX, BY, V>;
    static constexpr int SP = 2 * R + 1 + K, SV = K + 1;
    static constexpr int OWN = Tile::OWN;  // cells of a p^{n-1} or vdt2 box
    static constexpr int ALIGN = 128 / int(sizeof(T));  // TMA writes 128-byte aligned destinations
    static constexpr int P_STAGE = (Tile::CELLS + ALIGN - 1) / ALIGN * ALIGN, V_STAGE = 2 * OWN;
    static_assert(OWN % ALIGN == 0, "a vdt2 box must start 128-byte aligned after its p^{n-1} box");
    static constexpr std::size_t bytes =
        (std::size_t(SP) * P_STAGE + std::size_t(SV) * V_STAGE) * sizeof(T) + sizeof(TmaRing<SP>) + sizeof(TmaRing<SV>);
};

// Two blocks per SM, as async (shared memory allows two): registers are allocated per warp, and
// the DMA warp takes as many as a compute warp, so the bound caps them at 65536 / (2 x 9 warps).
template <class Model, int BX, int BY, int V, int K, bool Ws>
__global__ void __launch_bounds__(BX*(BY + int(Ws)), 2)
    wave_tma(const Model m, const typename Model::Fields f, const DevGrid g, const int zchunk, const int rows,
             const __grid_constant__ CUtensorMap p_map, const __grid_constant__ CUtensorMap prev_map,
             const __grid_constant__ CUtensorMap vdt2_map) {
    using T = typename Model::value_type;
    constexpr int R = Model::radius;
    using L = WaveTmaLayout<T, R, BX, BY, V, K>;
    using Tile = typename L::Tile;
    static_assert(Model::zero_ghosts, "TMA's zero fill stands for a zero ghost layer only");
    static_assert((BX * BY) % 32 == 0, "the compute threads are whole warps");
    unsigned char* const smem_raw = dynamic_smem();
    T* p_ring = reinterpret_cast<T*>(smem_raw);
    T* v_ring = p_ring + L::SP * L::P_STAGE;  // stage s: p^{n-1} at v_ring + s V_STAGE, vdt2 OWN after it
    TmaRing<L::SP>& pr = *reinterpret_cast<TmaRing<L::SP>*>(v_ring + L::SV * L::V_STAGE);
    TmaRing<L::SV>& vr = *reinterpret_cast<TmaRing<L::SV>*>(&pr + 1);
    const BlockCoords b =
        grouped_block(blockIdx.x, blocks_for(g.xend() - g.xlo, Tile::W), blocks_for(g.yend() - g.ylo, BY),
                      blocks_for(g.span(g.nz), zchunk), rows);
    const int xb = g.xlo + b.x * Tile::W, yb = g.ylo + b.y * BY;
    const int z0 = g.lo + b.z * zchunk, z1 = min(z0 + zchunk, g.end(g.nz));
    const int n = z1 - z0;  // planes updated; p tiles 0 .. n+2R-1

    constexpr unsigned warps = BX * BY / 32;  // each compute warp releases every stage
    if (threadIdx.x == 0 && threadIdx.y == 0) pr.init(warps), vr.init(warps);
    __syncthreads();
    auto issue_p = [&](int i) {
        pr.acquire(i, Tile::CELLS * sizeof(T));
        pr.copy3d(i, &p_map, p_ring + (i % L::SP) * L::P_STAGE, xb - R, yb - R, z0 - R + i);
    };
    auto issue_v = [&](int j) {
        T* st = v_ring + (j % L::SV) * L::V_STAGE;
        vr.acquire(j, 2 * L::OWN * sizeof(T));
        vr.copy3d(j, &prev_map, st, xb, yb, z0 + j);
        vr.copy3d(j, &vdt2_map, st + L::OWN, xb, yb, z0 + j);
    };
    const bool dma = threadIdx.x == 0 && threadIdx.y == (Ws ? BY : 0);
    if constexpr (Ws) {
        if (threadIdx.y == BY) {  // the DMA warp: one thread issues, the others have nothing to do
            if (dma) {
                for (int i = 0; i < 2 * R; ++i) issue_p(i);
                for (int j = 0; j < n; ++j) issue_p(j + 2 * R), issue_v(j);
            }
            return;  // the copies in flight complete on barriers the compute warps wait for
        }
    } else if (dma) {
        for (int i = 0; i < min(L::SP, n + 2 * R); ++i) issue_p(i);
        for (int j = 0; j < min(L::SV, n); ++j) issue_v(j);
    }
    const Tile t(g, b.x, b.y);
    auto wrap = [](int slot) { return slot >= L::SP ? slot - L::SP : slot; };
    for (int i = 0; i < 2 * R; ++i) pr.wait(i);
    int pb = 0, vb = 0;  // the stages of tile j (plane z-R) and of v stage j
    for (int j = 0; j < n; ++j) {
        const int z = z0 + j;
        pr.wait(j + 2 * R);
        vr.wait(j);
        t.template update_from_rings<L::SP, L::P_STAGE>(m, f, g, z, p_ring, pb, v_ring + vb * L::V_STAGE);
        pr.release(j);
        vr.release(j);
        if (!Ws && dma) {  // each waits for every warp to release its stage
            if (j + L::SP < n + 2 * R) issue_p(j + L::SP);
            if (j + L::SV < n) issue_v(j + L::SV);
        }
        pb = wrap(pb + 1);
        vb = vb + 1 == L::SV ? 0 : vb + 1;
    }
}

#ifndef __CUDACC_RTC__  // the host side: NVRTC compiles the kernels above alone

// Planes per block for the wave's planes strategy: the queue is refilled with 2R+1 planes at the
// start of every chunk, 7% of the p reads at 128 planes (and p is a quarter of the traffic).
constexpr int kDefaultWavePlanes = 128;

template <class Model, int BX, int BY, int BZ>
void launch_wave_naive(const Model& m, const typename Model::Fields& f, const DevGrid& g, const LaunchKnobs&,
                       cudaStream_t s) {
    launch(STRATA_KERNEL(wave_naive, Model, BX, BY, BZ),
           dim3(x_blocks(g, BX), y_blocks(g, BY), blocks_for(g.span(g.nz), BZ)), dim3(BX, BY, BZ), 0, s, m, f,
           g);
}
// Planes per block for the async strategy. Measured at 512^3 (H100, --chunk, 5 repeats, ghosts
// zero-filled, grouped block order): short chunks win although each refills 2R planes of its
// ring (they come from L2): fp32 90.1% of copy at 16 planes, 91.3% at 24, 89.9% at 32 and 48;
// fp64 92.6% at 24, 92.0% at 32, 91.3% at 48, 89.6% at 64, 90.2% at 96.
constexpr int kDefaultWaveAsyncPlanes = 24;

template <class Model, int BX, int BY, int K>
void launch_wave_async(const Model& m, const typename Model::Fields& f, const DevGrid& g, const LaunchKnobs& k,
                       cudaStream_t s) {
    using T = typename Model::value_type;
    constexpr int V = kLanes<T>;
    constexpr std::size_t smem = wave_async_smem_bytes<T, Model::radius, BX, BY, V, K>();
    const auto kernel = STRATA_KERNEL(wave_async, Model, BX, BY, V, K);
    allow_dynamic_smem(kernel, smem);
    const int planes = k.chunk > 0 ? k.chunk : kDefaultWaveAsyncPlanes;
    const unsigned nbx = x_blocks(g, BX * V), nby = y_blocks(g, BY), nbz = blocks_for(g.span(g.nz), planes);
    const int rows = group_rows(kernel, nbx, BX * BY, smem);
    launch(kernel, nbx * nby * nbz, dim3(BX, BY), smem, s, m, f, g, planes, rows);
}
template <class Model, int BX, int BY, int K, bool Ws>
void launch_wave_tma(const Model& m, const typename Model::Fields& f, const DevGrid& g, const LaunchKnobs& k,
                     cudaStream_t s) {
    using T = typename Model::value_type;
    static_assert(sizeof(T) >= 4, "16-bit storage: wave_strategy_table refuses tma");
    constexpr int V = kLanes<T>;
    using L = WaveTmaLayout<T, Model::radius, BX, BY, V, K>;
    require_tma();
    const auto kernel = STRATA_KERNEL(wave_tma, Model, BX, BY, V, K, Ws);
    allow_dynamic_smem(kernel, L::bytes);
    const int e = int(sizeof(T));
    const CUtensorMap& p_map =
        interior_tensor_map(f.in, g.nx, g.ny, g.nz, g.pitch, g.plane, e, L::Tile::TX, L::Tile::TY);
    const CUtensorMap& prev_map =
        interior_tensor_map(f.out, g.nx, g.ny, g.nz, g.pitch, g.plane, e, L::Tile::W, BY);
    const CUtensorMap& vdt2_map =
        interior_tensor_map(f.vdt2, g.nx, g.ny, g.nz, g.pitch, g.plane, e, L::Tile::W, BY);
    const int planes = k.chunk > 0 ? k.chunk : kDefaultWaveAsyncPlanes;
    constexpr int threads_y = BY + int(Ws);  // the DMA warp's row
    const unsigned nbx = x_blocks(g, BX * V), nby = y_blocks(g, BY), nbz = blocks_for(g.span(g.nz), planes);
    const int rows = group_rows(kernel, nbx, BX * threads_y, L::bytes);
    launch(kernel, nbx * nby * nbz, dim3(BX, threads_y), L::bytes, s, m, f, g, planes, rows, p_map, prev_map,
           vdt2_map);
}
template <class Model, int BX, int BY, int MinBlocks>
void launch_wave_planes(const Model& m, const typename Model::Fields& f, const DevGrid& g, const LaunchKnobs& k,
                        cudaStream_t s) {
    constexpr int V = kLanes<typename Model::value_type>;
    const int planes = k.chunk > 0 ? k.chunk : kDefaultWavePlanes;
    launch(STRATA_KERNEL(wave_planes, Model, BX, BY, V, MinBlocks),
           dim3(x_blocks(g, BX * V), y_blocks(g, BY), blocks_for(g.span(g.nz), planes)), dim3(BX, BY), 0, s,
           m, f, g, planes);
}

// The kernels of kStrategiesWave, entry by entry. 16 x 16 threads of 16-byte words: tiles of
// 64 x 16 cells in fp32 (32 x 16 in fp64), so the y-halo (8 rows of the tile's width) and the
// x-halo (two 16-byte words per row) add 0.6 (0.75) cells of L2 reads per cell.
template <class Model>
std::vector<Strategy<Model>> wave_strategy_table() {
    constexpr int V = kLanes<typename Model::value_type>;
    const std::vector<std::pair<LaunchFn<Model>, TileFn>> kernels = {
        {launch_wave_naive<Model, 32, 4, 2>, fixed_tile<32, 4>},
        {launch_wave_planes<Model, 16, 16, 2>, fixed_tile<16 * V, 16>},
        {launch_wave_async<Model, 16, 16, 2>, fixed_tile<16 * V, 16>}};
    std::vector<Strategy<Model>> out;
    for (std::size_t i = 0; i < kernels.size(); ++i)
        out.push_back({std::string(kStrategiesWave[i].name), kernels[i].first, kStrategiesWave[i].chunked,
                       kernels[i].second});
#ifdef STRATA_CUDA_TMA
    // async's tiles and rings, loaded by the TMA (with a DMA warp, then without).
    if constexpr (sizeof(typename Model::value_type) == 2) {
        // The p box starts R cells before the tile, and a TMA box's x must start on 16 bytes:
        // R = 4 cells of 2 bytes are 8. (Its tiles would need a 16-byte-wide left halo.)
        for (int i : {3, 4}) {
            out.push_back({std::string(kStrategiesWave[i].name), nullptr, kStrategiesWave[i].chunked});
            out.back().refuses =
                "the TMA kernels of the radius-4 ladder copy a halo of 4 cells from 16-byte aligned starts, "
                "which 16-bit storage does not give: at fp16 and bf16 use async (the default) or planes";
        }
    } else {
        out.push_back({std::string(kStrategiesWave[3].name), launch_wave_tma<Model, 16, 16, 2, true>,
                       kStrategiesWave[3].chunked, fixed_tile<16 * V, 16>});
        out.push_back({std::string(kStrategiesWave[4].name), launch_wave_tma<Model, 16, 16, 2, false>,
                       kStrategiesWave[4].chunked, fixed_tile<16 * V, 16>});
    }
#endif
    return out;
}

#endif  // __CUDACC_RTC__

}  // namespace strata::cuda
