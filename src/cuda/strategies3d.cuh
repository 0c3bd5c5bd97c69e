#pragma once
// The 3D strategies, kernel templates over the model and the launch shape (see strategies2d.cuh).
#include "grid.cuh"
#include "strata/core/block_order.hpp"
#include "strata/core/plane_sums.hpp"
#include "tma.cuh"

namespace strata::cuda {

// naive: one thread per cell, every neighbour from global memory.
template <class Model, int BX, int BY, int BZ>
__global__ void __launch_bounds__(BX* BY* BZ) naive3d(const Model m, const typename Model::Fields f, const DevGrid g) {
    const int i = g.xlo + blockIdx.x * BX + threadIdx.x, j = g.ylo + blockIdx.y * BY + threadIdx.y,
              k = g.lo + blockIdx.z * BZ + threadIdx.z;
    if (i >= g.nx || j >= g.ny || k >= g.end(g.nz)) return;
    constexpr bool mirror = Model::mirror, periodic = periodic_boundary<Model>();
    auto at = [&](int h, int di, int dj, int dk) {
        return hood_in<Model>(f, h)[g.at(load_index<mirror, periodic>(i + di, g.nx),
                                         load_index<mirror, periodic>(j + dj, g.ny),
                                         load_index<mirror, periodic>(k + dk, g.nz))];
    };
    const std::int64_t c = g.at(i, j, k);
    m.store(neighbourhood<Model>(at), m.load_point(f, c), f, c);
}

// smem: the block's BX x BY x BZ brick and its halo (the model's radius R deep) in shared memory,
// loaded coalesced (a warp reads consecutive words of one row), one barrier, then every neighbour
// from there. The halo costs (BX+2R)(BY+2R)(BZ+2R)/(BX BY BZ) loads per cell: the price the 2.5D
// strategies avoid. (A brick per neighbourhood field, for models of several.)
template <class Model, int BX, int BY, int BZ>
__global__ void __launch_bounds__(BX* BY* BZ) smem3d(const Model m, const typename Model::Fields f, const DevGrid g) {
    using T = typename Model::value_type;
    constexpr int R = Model::radius, TX = BX + 2 * R, TY = BY + 2 * R, TZ = BZ + 2 * R, H = hoods<Model>();
    constexpr bool mirror = Model::mirror, periodic = periodic_boundary<Model>();
    __shared__ T tile[H][TZ][TY][TX];
    const int x0 = g.xlo + blockIdx.x * BX - R, y0 = g.ylo + blockIdx.y * BY - R,
              z0 = g.lo + blockIdx.z * BZ - R;
    const int tid = (threadIdx.z * BY + threadIdx.y) * BX + threadIdx.x;
    for (int t = tid; t < TX * TY * TZ; t += BX * BY * BZ) {
        const int tz = t / (TX * TY), rest = t - tz * TX * TY, ty = rest / TX, tx = rest - ty * TX;
        const std::int64_t from = g.at(load_index<mirror, periodic>(x0 + tx, g.nx),
                                       load_index<mirror, periodic>(y0 + ty, g.ny),
                                       load_index<mirror, periodic>(z0 + tz, g.nz));
#pragma unroll
        for (int h = 0; h < H; ++h) tile[h][tz][ty][tx] = hood_in<Model>(f, h)[from];
    }
    const int i = x0 + R + threadIdx.x, j = y0 + R + threadIdx.y, k = z0 + R + threadIdx.z;
    const bool active = i < g.nx && j < g.ny && k < g.end(g.nz);
    const std::int64_t c = g.at(i, j, k);
    typename Model::Point p{};
    if (active) p = m.load_point(f, c);
    __syncthreads();
    if (!active) return;
    auto at = [&](int h, int di, int dj, int dk) {
        return tile[h][threadIdx.z + R + dk][threadIdx.y + R + dj][threadIdx.x + R + di];
    };
    m.store(neighbourhood<Model>(at), p, f, c);
}

// V consecutive values moved as one access (8 or 16 bytes), V = 1 being a plain scalar.
template <class T, int V>
struct alignas(sizeof(T) * V) Lanes {
    T v[V];
};

// The xy-tile of the 2.5D strategies: a BX x BY block covers (BX V) x (BY M) cells. Each thread
// owns V consecutive cells along x (one 16-byte access when V > 1) in each of M rows ty,
// ty + BY, ... In shared memory a tile row starts 16-byte aligned with its left halo cell just
// before it, so a warp's V-wide accesses are conflict-free; the halo ring (one cell) is spread
// over the threads, H cells each. Offsets are in-plane and clamped as load_index says; V > 1
// loads start V-aligned at or before the ghost column, which the row padding keeps in bounds.
template <class T, bool Mirror, int BX, int BY, int M, int V>
struct PlaneTile {
    static_assert(V == 1 || !Mirror, "V-wide loads read the ghost layer; mirror boundaries need V = 1");
    static constexpr int W = BX * V;  // tile width in cells
    // Rows start and end on whole V-wide words, and on 16 bytes (a TMA box's start and width: at
    // 16 bits a word is 8).
    static constexpr int A = V == 1 ? 1 : (V * int(sizeof(T)) >= 16 ? V : 16 / int(sizeof(T)));
    static constexpr int OFF = A;                              // the interior starts at this column
    static constexpr int TXP = (OFF + W + 1 + A - 1) / A * A;  // padded row length, a multiple of A
    static constexpr int TY = BY * M + 2, NT = BX * BY;
    static constexpr int HALO = 2 * (W + 2) + 2 * (TY - 2);
    static constexpr int H = (HALO + NT - 1) / NT;
    static constexpr int CELLS = TY * TXP;  // one plane in shared memory
    using Vec = Lanes<T, V>;

    int x0;  // this thread's first column
    std::int64_t own[M];
    bool row_active[M];
    std::int64_t halo_off[H];
    int halo_slot[H];  // flattened tile index, -1 for none
    unsigned inside;   // bit r: own row r's word holds interior cells; bit M+h: halo cell h is interior

    __device__ PlaneTile(const DevGrid& g, int xb, int yb) {
        const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
        x0 = xb + tx * V;
        const int xl = V == 1 ? load_index<Mirror>(x0, g.nx) : min(x0, g.nx / V * V);
        auto interior = [&](int x, int y) { return x >= 0 && x < g.nx && y >= 0 && y < g.ny; };
        inside = 0;
#pragma unroll
        for (int r = 0; r < M; ++r) {
            const int y = yb + ty + r * BY;
            own[r] = g.at(xl, load_index<Mirror>(y, g.ny));
            row_active[r] = y < g.ny;
            if (interior(x0, y)) inside |= 1u << r;
        }
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
            halo_off[h] = g.at(load_index<Mirror>(xb + hx, g.nx), load_index<Mirror>(yb - 1 + hy, g.ny));
            if (id < HALO && interior(xb + hx, yb - 1 + hy)) inside |= 1u << (M + h);
        }
    }
    // Tile index of own row r's first cell.
    __device__ int own_slot(int r) const { return (threadIdx.y + r * BY + 1) * TXP + OFF + threadIdx.x * V; }
    // Which of the words of plane z hold interior cells (the `inside` bits, none outside the grid's
    // planes): models with zero ghosts zero-fill the others instead of reading them, which saves
    // the ghost columns' sectors (3% of the reads of a 512-cell row in fp32).
    __device__ unsigned inside_at(int z, const DevGrid& g) const { return unsigned(z) < unsigned(g.nz) ? inside : 0u; }
    __device__ bool active(int r, int v, const DevGrid& g) const { return row_active[r] && x0 + v < g.nx; }

    // The plane sums of every own cell, from a plane in shared memory.
    template <class Model>
    __device__ void sums(const Model& m, const T* tile, typename Model::Sums (&out)[M][V]) const {
#pragma unroll
        for (int r = 0; r < M; ++r) {
            compute_t<T> w[3][V + 2];  // rows y-1, y, y+1 of columns x0-1 .. x0+V (widened once)
#pragma unroll
            for (int dj = 0; dj < 3; ++dj) {
                const T* row = tile + own_slot(r) + (dj - 1) * TXP;
                const Vec mid = *reinterpret_cast<const Vec*>(row);
                w[dj][0] = row[-1];
#pragma unroll
                for (int v = 0; v < V; ++v) w[dj][v + 1] = mid.v[v];
                w[dj][V + 1] = row[V];
            }
#pragma unroll
            for (int v = 0; v < V; ++v)
                out[r][v] = m.plane_sums([&](int di, int dj) { return w[dj + 1][v + 1 + di]; });
        }
    }

    // Plane z's own cells from the sums of planes z-1, z, z+1: V-wide stores where all V cells
    // are inside, the model's per-cell store at the right edge of the grid.
    template <class Model>
    __device__ void store(const Model& m, const typename Model::Fields& f, const DevGrid& g, int z,
                          const typename Model::Sums (&below)[M][V], const typename Model::Sums (&at)[M][V],
                          const typename Model::Sums (&above)[M][V],
                          const typename Model::Point (&p)[M][V]) const {
#pragma unroll
        for (int r = 0; r < M; ++r) {
            const std::int64_t c = std::int64_t(z) * g.plane + own[r];
            if constexpr (V == 1) {
                if (active(r, 0, g)) m.store_planes(below[r][0], at[r][0], above[r][0], p[r][0], f, c);
            } else if (row_active[r] && x0 + V <= g.nx) {
                Vec out;
#pragma unroll
                for (int v = 0; v < V; ++v) out.v[v] = m.update_planes(below[r][v], at[r][v], above[r][v]);
                *reinterpret_cast<Vec*>(f.out + c) = out;
            } else {
#pragma unroll
                for (int v = 0; v < V; ++v)
                    if (active(r, v, g)) m.store_planes(below[r][v], at[r][v], above[r][v], p[r][v], f, c + v);
            }
        }
    }

    template <class Model>
    __device__ void load_points(const Model& m, const typename Model::Fields& f, const DevGrid& g, int z,
                                typename Model::Point (&p)[M][V]) const {
#pragma unroll
        for (int r = 0; r < M; ++r)
#pragma unroll
            for (int v = 0; v < V; ++v)
                if (active(r, v, g)) p[r][v] = m.load_point(f, std::int64_t(z) * g.plane + own[r] + v);
    }
};

template <class Sums, int M, int V>
__device__ __forceinline__ void shift_queue(Sums (&below)[M][V], Sums (&at)[M][V],
                                            const Sums (&above)[M][V]) {
#pragma unroll
    for (int r = 0; r < M; ++r)
#pragma unroll
        for (int v = 0; v < V; ++v) {
            below[r][v] = at[r][v];
            at[r][v] = above[r][v];
        }
}

// planes (2.5D streaming; `multi` when M > 1, `vec` when V > 1): a block marches its PlaneTile
// along z over a chunk of planes. Shared memory holds one plane, the newest (z+1); from it each
// thread takes the plane sums of its cells (PlaneSums) and keeps a register queue of the sums of
// planes z-1, z and z+1, from which the model updates plane z. So each plane is read from global
// memory once (plus the halo ring). The next D planes are loaded ahead into registers: a
// streaming kernel is limited by the bytes it keeps in flight per SM (about 20 KB are needed on
// an H100), and registers cap the threads per SM (the launch bound keeps at least MinBlocks
// blocks per SM). Per plane, two barriers: nobody reads the tile any more -> the new plane is
// written. V > 1 needs a model with one output field (`out`), written with V-wide stores.
template <class Model, int BX, int BY, int M, int V, int D, int MinBlocks>
__global__ void __launch_bounds__(BX* BY, MinBlocks)
    planes3d(const Model m, const typename Model::Fields f, const DevGrid g, const int zchunk, const int rows) {
    using T = typename Model::value_type;
    using Tile = PlaneTile<T, Model::mirror, BX, BY, M, V>;
    using Sums = typename Model::Sums;
    __shared__ __align__(16) T tile[Tile::CELLS];
    const BlockCoords b =
        grouped_block(blockIdx.x, blocks_for(g.xend() - g.xlo, Tile::W), blocks_for(g.yend() - g.ylo, BY * M),
                      blocks_for(g.span(g.nz), zchunk), rows);
    const Tile t(g, g.xlo + b.x * Tile::W, g.ylo + b.y * BY * M);
    const int z0 = g.lo + b.z * zchunk, z1 = min(z0 + zchunk, g.end(g.nz));

    // The next D planes to enter the tile, loaded ahead into slots used round-robin: slot d is
    // read at the steps z with (z - z0) % D == d, compile-time indices since the loop is
    // unrolled by D (a register copy between slots would wait for the load it copies).
    typename Tile::Vec vals[D][M];
    T halo[D][Tile::H];
    auto load_plane = [&](int z, int slot) {
        const std::int64_t zo = std::int64_t(load_index<Model::mirror>(z, g.nz)) * g.plane;
        const unsigned in = Model::zero_ghosts ? t.inside_at(z, g) : ~0u;
#pragma unroll
        for (int r = 0; r < M; ++r)
            vals[slot][r] = (in >> r) & 1u ? *reinterpret_cast<const typename Tile::Vec*>(f.in + zo + t.own[r])
                                           : typename Tile::Vec{};
#pragma unroll
        for (int h = 0; h < Tile::H; ++h)
            if (t.halo_slot[h] >= 0) halo[slot][h] = (in >> (M + h)) & 1u ? f.in[zo + t.halo_off[h]] : T(0);
    };
    // Barrier, the loaded plane into the tile, barrier, then each own cell's plane sums.
    auto enter_plane = [&](Sums (&sums)[M][V], int slot) {
        __syncthreads();
#pragma unroll
        for (int r = 0; r < M; ++r) *reinterpret_cast<typename Tile::Vec*>(tile + t.own_slot(r)) = vals[slot][r];
#pragma unroll
        for (int h = 0; h < Tile::H; ++h)
            if (t.halo_slot[h] >= 0) tile[t.halo_slot[h]] = halo[slot][h];
        __syncthreads();
        t.sums(m, tile, sums);
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
            t.load_points(m, f, g, z, p);
            enter_plane(above, d);     // plane z+1
            load_plane(z + 1 + D, d);  // in flight while planes z .. z+D-1 are computed
            t.store(m, f, g, z, below, at, above, p);
            shift_queue(below, at, above);
        }
}

// cached: the grid swept in memory order, like a copy. A thread owns V consecutive cells of a row
// (one 16-byte access) in ZC consecutive planes; a BX x BY block covers a (BX V) x BY x ZC brick,
// and the blocks are numbered x fastest, then y, then z, so at any moment the running blocks
// cover a few consecutive planes. Every neighbour comes through the caches: the rows y-1 and
// y+1 from L1 (the block's other warps read them) or L2, the planes z-1 and z+ZC from L2 (the
// blocks of the neighbouring bricks read them a moment apart), the x-neighbours from the next
// lane by a shuffle (global memory at the warp's two ends). So device memory sees one read and
// one write per cell, and all of it streams in address order. The 2.5D strategies' blocks each
// walk their own chunk of planes, so the device reads and writes at as many places in memory as
// blocks run, which an H100 serves more slowly: there `strata-patterns` (bench/access_patterns.cu)
// copies in their pattern at 93.5-96.1% of cudaMemcpy's rate (32 to 256 planes per block), and
// in address order at 100.7%. The ghost layer is zero and is never read (zero-filled instead):
// its sectors would be a few percent of the reads. A thread loads its ZC + 2 own vectors first,
// so that they are all in flight at once, then each plane's neighbour rows; the plane sums of
// each plane are taken once (a star stencil takes only the centers of the two end planes).
// `Whole`: the launch updates every cell (the spans are the grid's), and the kernel never reads
// their bounds. With the span's offset, though uniform, ptxas spreads the first loads out among the
// address arithmetic instead of issuing them together, and heat 7pt fp64 512^3 took 0.7596
// ms/step against 0.7411 on an H100 (2.5%; fp32 0.3698 against 0.3691; docs/runs/69).
template <class Model, int BX, int BY, int ZC, int V, bool Whole>
__global__ void __launch_bounds__(BX* BY)
    cached3d(const Model m, const typename Model::Fields f, const DevGrid g) {
    using T = typename Model::value_type;
    using Sums = typename Model::Sums;
    using Vec = Lanes<T, V>;
    static_assert(Model::zero_ghosts && V > 1, "zero ghosts, not read; 8- or 16-byte vectors");
    static_assert(BX == 32, "a warp is one row of threads: the x-neighbours pass between its lanes");
    const int lane = threadIdx.x, x0 = (Whole ? 0 : g.xlo) + (blockIdx.x * BX + lane) * V,
              y = (Whole ? 0 : g.ylo) + blockIdx.y * BY + threadIdx.y;
    const int z0 = (Whole ? 0 : g.lo) + blockIdx.z * ZC, z_end = Whole ? g.nz : g.end(g.nz);
    // Threads past the grid's width read nothing: their zeros are at most the ghost column's.
    const bool own_x = x0 < g.nx, left_x = x0 > 0 && x0 <= g.nx, right_x = x0 + V < g.nx;
    auto row_at = [&](int z, int yy) {  // -1 where (z, yy) is a ghost row or past the grid
        return unsigned(z) < unsigned(g.nz) && unsigned(yy) < unsigned(g.ny)
                   ? std::int64_t(z) * g.plane + std::int64_t(yy) * g.pitch
                   : std::int64_t(-1);
    };
    auto vec_at = [&](std::int64_t ro) {
        return ro >= 0 && own_x ? *reinterpret_cast<const Vec*>(f.in + ro + x0) : Vec{};
    };

    Vec own[ZC + 2];  // row y of the planes z0-1 .. z0+ZC
#pragma unroll
    for (int q = 0; q < ZC + 2; ++q) own[q] = vec_at(row_at(z0 - 1 + q, y));

    // Plane q's sums: the rows y-1 and y+1 where `edges`, the x-neighbours of the rows the stencil
    // needs them for (all three for the box stencils, the middle one for the star).
    auto plane = [&](int q, bool edges, Sums (&s)[V]) {
        const int z = z0 - 1 + q;
        // Kept in the storage type: widened once here, fp16 heat 7pt at 512^3 on an H100 fell from
        // 609 to 538 GCells/s (bf16 547 either way).
        T w[3][V + 2];
#pragma unroll
        for (int dj = 0; dj < 3; ++dj) {
            if (dj != 1 && !edges) continue;
            const std::int64_t ro = row_at(z, y + dj - 1);
            const Vec mid = dj == 1 ? own[q] : vec_at(ro);
#pragma unroll
            for (int v = 0; v < V; ++v) w[dj][v + 1] = mid.v[v];
            if (edges && (dj == 1 || !Model::star)) {
                T left = shfl_up(mid.v[V - 1], 1), right = shfl_down(mid.v[0], 1);
                if (lane == 0) left = ro >= 0 && left_x ? f.in[ro + x0 - 1] : T(0);
                if (lane == BX - 1) right = ro >= 0 && right_x ? f.in[ro + x0 + V] : T(0);
                w[dj][0] = left, w[dj][V + 1] = right;
            } else {
                w[dj][0] = w[dj][V + 1] = T(0);  // not read: a star stencil has no diagonal neighbour
            }
        }
#pragma unroll
        for (int v = 0; v < V; ++v)
            s[v] = edges ? m.plane_sums([&](int di, int dj) { return w[dj + 1][v + 1 + di]; })
                         : centre_sums(m, w[1][v + 1]);
    };
    // The end planes z0-1 and z0+ZC only feed the planes inside: a star stencil takes only their
    // centres (update_planes reads no other value of planes z-1 and z+1).
    constexpr bool ends_need_edges = !Model::star;

    Sums below[V], at[V], above[V];
    plane(0, ends_need_edges, below);
    plane(1, true, at);
#pragma unroll
    for (int k = 0; k < ZC; ++k) {
        const int z = z0 + k;
        plane(k + 2, k + 1 < ZC || ends_need_edges, above);
        if (z < z_end && y < g.ny) {
            const std::int64_t c = std::int64_t(z) * g.plane + std::int64_t(y) * g.pitch + x0;
            if (x0 + V <= g.nx) {
                Vec out;
#pragma unroll
                for (int v = 0; v < V; ++v) out.v[v] = m.update_planes(below[v], at[v], above[v]);
                *reinterpret_cast<Vec*>(f.out + c) = out;
            } else {
#pragma unroll
                for (int v = 0; v < V; ++v)
                    if (x0 + v < g.nx)
                        m.store_planes(below[v], at[v], above[v], m.load_point(f, c + v), f, c + v);
            }
        }
#pragma unroll
        for (int v = 0; v < V; ++v) below[v] = at[v], at[v] = above[v];
    }
}

// cp.async: copies global -> shared without passing through registers; completion is tracked
// per thread in commit groups.
// cp.async copies 4, 8 or 16 bytes: a 2-byte cell (a 16-bit type's halo cell) is copied by a
// load and a store, visible to the block after the barrier that follows the wait, as the rest.
template <int Bytes>
__device__ __forceinline__ void cp_async(void* smem, const void* gmem) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    if constexpr (Bytes == 2)
        *static_cast<std::uint16_t*>(smem) = *static_cast<const std::uint16_t*>(gmem);
    else if constexpr (Bytes == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(gmem), "n"(Bytes));
}
// cp.async that reads global memory only when `fetch`: otherwise the source size is 0, no byte
// is read, and the bytes in shared memory are zero-filled.
template <int Bytes>
__device__ __forceinline__ void cp_async_or_zero(void* smem, const void* gmem, bool fetch) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    if constexpr (Bytes == 2)
        *static_cast<std::uint16_t*>(smem) =
            fetch ? *static_cast<const std::uint16_t*>(gmem) : std::uint16_t(0);
    else if constexpr (Bytes == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(fetch ? 16 : 0));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(gmem), "n"(Bytes),
                     "r"(fetch ? Bytes : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

// async: the planes strategy with its loads moved off the registers: planes are copied straight
// into a ring of S shared-memory stages with cp.async, S-1 planes ahead, so the bytes in flight
// are bounded by shared memory instead of registers. Per plane q: wait for this thread's copies
// of plane q, one barrier (everyone's copies of q are visible, and nobody still reads the stage
// of plane q-1), start the copies of plane q+S-1 into that stage, take the plane sums of q, and
// update plane q-1 from the sums of q-2, q-1, q.
template <class Model, int BX, int BY, int M, int V, int S>
__global__ void __launch_bounds__(BX* BY)
    async3d(const Model m, const typename Model::Fields f, const DevGrid g, const int zchunk, const int rows) {
    using T = typename Model::value_type;
    using Tile = PlaneTile<T, Model::mirror, BX, BY, M, V>;
    using Sums = typename Model::Sums;
    unsigned char* const smem_raw = dynamic_smem();
    T* ring = reinterpret_cast<T*>(smem_raw);  // S stages of Tile::CELLS
    const BlockCoords b =
        grouped_block(blockIdx.x, blocks_for(g.xend() - g.xlo, Tile::W), blocks_for(g.yend() - g.ylo, BY * M),
                      blocks_for(g.span(g.nz), zchunk), rows);
    const Tile t(g, g.xlo + b.x * Tile::W, g.ylo + b.y * BY * M);
    const int z0 = g.lo + b.z * zchunk, z1 = min(z0 + zchunk, g.end(g.nz));

    auto stage = [&](int q) { return ring + ((q - z0 + 1) % S) * Tile::CELLS; };
    auto issue = [&](int q) {  // plane q's copies as one commit group (empty past the chunk)
        if (q <= z1) {
            const std::int64_t zo = std::int64_t(load_index<Model::mirror>(q, g.nz)) * g.plane;
            T* st = stage(q);
            const unsigned in = Model::zero_ghosts ? t.inside_at(q, g) : ~0u;
#pragma unroll
            for (int r = 0; r < M; ++r)
                cp_async_or_zero<sizeof(T) * V>(st + t.own_slot(r), f.in + zo + t.own[r], (in >> r) & 1u);
#pragma unroll
            for (int h = 0; h < Tile::H; ++h)
                if (t.halo_slot[h] >= 0)
                    cp_async_or_zero<sizeof(T)>(st + t.halo_slot[h], f.in + zo + t.halo_off[h], (in >> (M + h)) & 1u);
        }
        cp_async_commit();
    };

    for (int q = z0 - 1; q < z0 - 1 + S - 1; ++q) issue(q);
    Sums below[M][V], at[M][V], above[M][V];
    for (int q = z0 - 1; q <= z1; ++q) {
        typename Model::Point p[M][V];
        if (q >= z0 + 1) t.load_points(m, f, g, q - 1, p);
        cp_async_wait<S - 2>();
        __syncthreads();
        issue(q + S - 1);
        t.sums(m, stage(q), above);
        if (q >= z0 + 1) t.store(m, f, g, q - 1, below, at, above, p);
        shift_queue(below, at, above);
    }
}

// stream: the 2.5D sweep for a cells-only model (model.hpp), whose update reads its neighbourhood
// cell by cell. A BX x BY block marches its tile along z over a chunk of planes; a ring of S =
// 2R+1+A shared-memory stages holds planes z-R .. z+R of the tile and its R-deep halo (per
// neighbourhood field), and cp.async copies the A planes after those, so they are in flight while
// plane z is computed. A cell is read from global memory (TX TY) / (BX BY) times per sweep (its
// neighbours' halos, mostly from L2: the blocks of one chunk of planes run side by side) and
// written once. Ghost cells are read as they are, through load_index (the zero or fixed layer, a
// mirror, a period away). Per plane z: wait for this thread's copies of plane z+R, one barrier
// (every copy of plane z+R is visible, and nobody reads the stage of plane z-R-1 any more), copy
// plane z+R+A into that stage, update plane z from the ring.
template <class Model, int BX, int BY, int A>
__global__ void __launch_bounds__(BX* BY)
    stream3d(const Model m, const typename Model::Fields f, const DevGrid g, const int zchunk) {
    using T = typename Model::value_type;
    constexpr int R = Model::radius, H = hoods<Model>(), TX = BX + 2 * R, TY = BY + 2 * R, CELLS = TX * TY;
    constexpr int S = 2 * R + 1 + A;
    constexpr bool mirror = Model::mirror, periodic = periodic_boundary<Model>();
    unsigned char* const smem_raw = dynamic_smem();
    T* ring = reinterpret_cast<T*>(smem_raw);  // S stages of H planes of CELLS
    const int x0 = g.xlo + blockIdx.x * BX - R, y0 = g.ylo + blockIdx.y * BY - R;
    const int z0 = g.lo + blockIdx.z * zchunk, z1 = min(z0 + zchunk, g.end(g.nz));
    const int tid = threadIdx.y * BX + threadIdx.x;

    auto stage = [&](int q) { return ring + ((q - z0 + R) % S) * (H * CELLS); };
    auto issue = [&](int q) {  // plane q's copies as one commit group (empty past the chunk's last plane + R)
        if (q < z1 + R) {
            const std::int64_t zo = std::int64_t(load_index<mirror, periodic>(q, g.nz)) * g.plane;
            T* st = stage(q);
            for (int c = tid; c < CELLS; c += BX * BY) {
                const int ty = c / TX, tx = c - ty * TX;
                const std::int64_t from = zo + std::int64_t(load_index<mirror, periodic>(y0 + ty, g.ny)) * g.pitch +
                                          load_index<mirror, periodic>(x0 + tx, g.nx);
#pragma unroll
                for (int h = 0; h < H; ++h) cp_async<sizeof(T)>(st + h * CELLS + c, hood_in<Model>(f, h) + from);
            }
        }
        cp_async_commit();
    };

    for (int q = z0 - R; q < z0 + R + A; ++q) issue(q);
    const int i = x0 + R + threadIdx.x, j = y0 + R + threadIdx.y;
    const bool active = i < g.nx && j < g.ny;
    const int own = (threadIdx.y + R) * TX + threadIdx.x + R;
    for (int z = z0; z < z1; ++z) {
        const std::int64_t c = g.at(i, j, z);
        typename Model::Point p{};
        if (active) p = m.load_point(f, c);
        cp_async_wait<A - 1>();  // plane z+R's copies; the A - 1 after it may still be in flight
        __syncthreads();
        issue(z + R + A);
        if (!active) continue;
        const T* planes[2 * R + 1];
#pragma unroll
        for (int d = 0; d < 2 * R + 1; ++d) planes[d] = stage(z - R + d) + own;
        auto at = [&](int h, int di, int dj, int dk) { return planes[dk + R][h * CELLS + dj * TX + di]; };
        m.store(neighbourhood<Model>(at), p, f, c);
    }
}

// cached for a cells-only model, 2D and 3D: the grid swept in memory order, like a copy (cached3d's
// pattern), for an update that reads its neighbourhood cell by cell. A warp is 32 V consecutive
// cells of a row; a thread owns its V cells in ZC consecutive planes (3D) or rows (2D) and keeps in
// registers, per neighbourhood field, the window of its row that the radius R spans: the cells
// x-R .. x+V-1+R of the planes (rows) z-R .. z+ZC-1+R. Its own cells are loaded first, all at once,
// so that they are in flight together, with their pointwise values; the others come from the lanes
// beside it by a shuffle (the warp's end lanes read theirs). Every offset in that window (in 2D all
// of them; in 3D those in the thread's row) is then a register; in 3D the other rows come through
// L1 (the block's other warps read them as their own) or L2 (the neighbouring blocks'). The blocks
// are numbered x fastest, then y, then z, so the running blocks cover a few consecutive planes and
// device memory sees one read and one write per cell, in address order. Every load goes through
// load_index, so a cell beyond a face is what the boundary says (a shuffled neighbour is its
// lane's own cell, read so), and lanes past the grid's width or height read cells that exist and
// store nothing.
// The pointwise values are loaded before the first store: a load after a store may not be moved
// above it (the compiler cannot tell the buffers apart), and read where the update takes them each
// plane (row) waited a whole memory latency. On an H100 (docs/runs/131): the 2D two-field file with
// a coefficient map at 8192^2, 93.5 -> 127.1 GCells/s in fp32 (62% -> 85% of copy) and 43.1 -> 70.8
// in fp64; 3D Aliev-Panfilov 134 -> 140 (fp32) and 122 -> 155 (bf16); files without pointwise
// fields unchanged. The other rows of 3D stay where the update reads them: loaded a plane ahead
// too, their registers cost more than the latency they hid (3D Gray-Scott 148 -> 131, run 130).
// Which of a block's reads may cross a face, and so go through load_index (cells_cached).
enum class CellsReach {
    inside,  // none: every cell is addressed by its offsets alone
    x_face,  // (3D) along x only: the block's rows and planes are inside, its columns reach a face
    any,
};
template <class Model, int BY, int ZC, int V, CellsReach Reach>
__device__ __forceinline__ void cells_cached_sweep(const Model& m, const typename Model::Fields& f,
                                                   const DevGrid& g, int x, int y, int s0, int s_end) {
    using T = typename Model::value_type;
    constexpr int R = Model::radius, H = hoods<Model>(), Q = ZC + 2 * R, W = 2 * R + V;
    constexpr bool mirror = Model::mirror, periodic = periodic_boundary<Model>(), three = Model::dims == 3;
    const int lane = threadIdx.x;
    // The cell (x, y (3D), the slow axis) as the boundary reads it.
    auto index = [&](int i, int j, int s) -> std::int64_t {
        if constexpr (Reach == CellsReach::inside) return three ? g.at(i, j, s) : g.at(i, s);
        const int li = load_index<mirror, periodic>(i, g.nx);
        if constexpr (Reach == CellsReach::x_face) return g.at(li, j, s);
        if constexpr (three)
            return g.at(li, load_index<mirror, periodic>(j, g.ny), load_index<mirror, periodic>(s, g.nz));
        else
            return g.at(li, load_index<mirror, periodic>(s, g.ny));
    };
    const bool active = x < g.nx && (!three || y < g.ny);
    T w[H][Q][W];
#pragma unroll
    for (int q = 0; q < Q; ++q) {
#pragma unroll
        for (int v = 0; v < V; ++v) {
            const std::int64_t own = index(x + v, y, s0 - R + q);
#pragma unroll
            for (int h = 0; h < H; ++h) w[h][q][R + v] = hood_in<Model>(f, h)[own];
        }
    }
    // (One plane: no store before its load, which stays where the update takes it: loaded with the
    // window, variable-wave in fp64 ran at 67.7 GCells/s against 71.0.)
    typename Model::Point p[ZC][V];
    if constexpr (ZC > 1)
#pragma unroll
        for (int k = 0; k < ZC; ++k)
#pragma unroll
            for (int v = 0; v < V; ++v)
                if (active && s0 + k < s_end && x + v < g.nx)
                    p[k][v] = m.load_point(f, three ? g.at(x + v, y, s0 + k) : g.at(x + v, s0 + k));
    // The window's other cells, x - R .. x - 1 and x + V .. x + V - 1 + R: cell x + o is lane
    // lane + floor(o / V)'s own cell o mod V (a shuffle), or past the warp's ends a load.
#pragma unroll
    for (int h = 0; h < H; ++h)
#pragma unroll
        for (int q = 0; q < Q; ++q)
#pragma unroll
            for (int o = -R; o < V + R; ++o) {
                if (o >= 0 && o < V) continue;
                const int d = o < 0 ? (-o + V - 1) / V : o / V;  // lanes away
                const int sub = o < 0 ? o + d * V : o - d * V;
                T got = o < 0 ? shfl_up(w[h][q][R + sub], d) : shfl_down(w[h][q][R + sub], d);
                if (o < 0 ? lane < d : lane >= 32 - d) got = hood_in<Model>(f, h)[index(x + o, y, s0 - R + q)];
                w[h][q][R + o] = got;
            }
    if (!active) return;  // (after the last shuffle)
#pragma unroll
    for (int k = 0; k < ZC; ++k) {
        const int s = s0 + k;
        if (s >= s_end) break;
#pragma unroll
        for (int v = 0; v < V; ++v) {
            if (v > 0 && x + v >= g.nx) break;
            const std::int64_t c = three ? g.at(x + v, y, s) : g.at(x + v, s);
            if constexpr (three) {
                auto at = [&](int h, int di, int dj, int dk) {
                    if (dj == 0) return w[h][k + R + dk][R + v + di];
                    if (Reach == CellsReach::inside || (Reach == CellsReach::x_face && di == 0))
                        return hood_in<Model>(f, h)[c + di + dj * g.pitch + dk * g.plane];
                    return hood_in<Model>(f, h)[index(x + v + di, y + dj, s + dk)];
                };
                m.store(neighbourhood<Model>(at), ZC > 1 ? p[k][v] : m.load_point(f, c), f, c);
            } else {
                auto at = [&](int h, int di, int dj) { return w[h][k + R + dj][R + v + di]; };
                m.store(neighbourhood<Model>(at), ZC > 1 ? p[k][v] : m.load_point(f, c), f, c);
            }
        }
    }
}
template <class Model, int BY, int ZC, int V, int MB>
__global__ void __launch_bounds__(32 * BY, MB)
    cells_cached(const Model m, const typename Model::Fields f, const DevGrid g) {
    constexpr int R = Model::radius;
    constexpr bool three = Model::dims == 3;
    const int xb = g.xlo + blockIdx.x * 32 * V, yb = three ? g.ylo + blockIdx.y * BY : 0;  // the block's tile
    const int x = xb + threadIdx.x * V;
    const int y = three ? yb + threadIdx.y : 0;  // 3D: the thread's row
    // The thread's first plane (3D) or row (2D), and the end of the launch's span of them.
    const int s0 = g.lo + (three ? blockIdx.z * ZC : (blockIdx.y * BY + threadIdx.y) * ZC);
    const int s_end = g.end(three ? g.nz : g.ny);
    // A block whose every read is inside the grid (no ghost, no cell past a face) addresses its
    // cells by their offsets alone, without load_index: a sweep of its own, so that each keeps its
    // loads together (a choice per load kept them apart: a 27-point box ran at half the rate).
    const int bs0 = g.lo + (three ? blockIdx.z * ZC : blockIdx.y * BY * ZC),
              bs1 = bs0 + (three ? ZC : BY * ZC);
    // In 3D the blocks at the faces of x are a sixth of the grid at 384^3 in fp32 (two columns of
    // blocks in twelve; a third at 16 bits), those at the faces of y and z a fiftieth: so those
    // whose rows and planes are inside have a sweep of their own, which sends only the reads that
    // may cross x's faces (the columns x-R.. and ..x+R: the window's ends, a box's other rows)
    // through load_index. On an H200 (docs/runs/170, GCells/s): 3D Aliev-Panfilov fp32 184.6 ->
    // 192.2, bf16 206.8 -> 228.4; the radius-2 wave +1-2.5%; 3D Gray-Scott fp32 +1.1%, but fp64
    // 99.6 -> 95.0 and bf16 -1.4% (the third sweep took its fp64 kernel from 46 registers to 52),
    // which two planes a thread in fp64 (model.hpp: cached_planes) more than made up for.
    const bool inside_x = xb >= R && xb + 32 * V + R <= g.nx,
               inside_rows = bs0 >= R && bs1 + R <= (three ? g.nz : g.ny) &&
                             (!three || (yb >= R && yb + BY + R <= g.ny));
    if (inside_x && inside_rows)
        cells_cached_sweep<Model, BY, ZC, V, CellsReach::inside>(m, f, g, x, y, s0, s_end);
    else if (three && inside_rows)
        cells_cached_sweep<Model, BY, ZC, V, three ? CellsReach::x_face : CellsReach::any>(m, f, g, x, y, s0,
                                                                                           s_end);
    else
        cells_cached_sweep<Model, BY, ZC, V, CellsReach::any>(m, f, g, x, y, s0, s_end);
}

// tma: async's sweep with its loads on the Tensor Memory Accelerator, warp-specialized (CudaDMA's
// split, tma.cuh). Threads (BX, BY + 1): the last row of threads is the DMA warp, whose first
// lane copies each plane's tile with its halo (TXP x TY elements from (xb - OFF, yb - 1), the
// tile's own layout, so the compute warps' reads are async's) into a ring of S stages, as far
// ahead as the stages allow; rows 0..BY-1 are the compute warps: wait for plane q, take its
// sums, release the stage, update plane q-1. The tensor map covers the interior only: the halo
// at the grid's faces (and the planes -1 and nz) arrive zero-filled, which is the ghost layer of
// a zero-ghost model, so no ghost sector is read and no thread decides what to load.
// With Ws false (the A/B's "TMA without warp specialization"), no DMA warp: thread (0, 0) issues
// the first S planes, then refills each stage between its own planes, once every warp released it.
template <class Model, int BX, int BY, int M, int V>
constexpr int tma3d_stage_cells() {  // a stage's elements, 128-byte aligned (TMA's destination rule)
    using T = typename Model::value_type;
    constexpr int cells = PlaneTile<T, false, BX, BY, M, V>::CELLS, align = 128 / int(sizeof(T));
    return (cells + align - 1) / align * align;
}
template <class Model, int BX, int BY, int M, int V, int S, bool Ws>
__global__ void __launch_bounds__(BX*(BY + int(Ws)))
    tma3d(const Model m, const typename Model::Fields f, const DevGrid g, const int zchunk, const int rows,
          const __grid_constant__ CUtensorMap in) {
    static_assert(Model::zero_ghosts && !Model::mirror, "TMA's zero fill stands for a zero ghost layer only");
    using T = typename Model::value_type;
    using Tile = PlaneTile<T, false, BX, BY, M, V>;
    using Sums = typename Model::Sums;
    constexpr int STAGE = tma3d_stage_cells<Model, BX, BY, M, V>();
    unsigned char* const smem_raw = dynamic_smem();
    T* ring = reinterpret_cast<T*>(smem_raw);  // S stages of STAGE elements, then the barriers
    TmaRing<S>& pipe = *reinterpret_cast<TmaRing<S>*>(smem_raw + S * STAGE * sizeof(T));
    const BlockCoords b =
        grouped_block(blockIdx.x, blocks_for(g.xend() - g.xlo, Tile::W), blocks_for(g.yend() - g.ylo, BY * M),
                      blocks_for(g.span(g.nz), zchunk), rows);
    const int xb = g.xlo + b.x * Tile::W, yb = g.ylo + b.y * BY * M;
    const int z0 = g.lo + b.z * zchunk, z1 = min(z0 + zchunk, g.end(g.nz));
    const int planes = z1 - z0 + 2;  // z0-1 .. z1: each updated plane's neighbours

    if (threadIdx.x == 0 && threadIdx.y == 0) pipe.init(BY);  // BY compute warps release each stage
    __syncthreads();
    auto issue = [&](int i) {
        pipe.acquire(i, Tile::CELLS * sizeof(T));
        pipe.copy3d(i, &in, ring + (i % S) * STAGE, xb - Tile::OFF, yb - 1, z0 - 1 + i);
    };
    const bool dma = threadIdx.x == 0 && threadIdx.y == (Ws ? BY : 0);
    if constexpr (Ws) {
        if (threadIdx.y == BY) {  // the DMA warp: one lane issues, the others have nothing to do
            if (dma)
                for (int i = 0; i < planes; ++i) issue(i);
            return;  // the copies in flight complete on barriers the compute warps wait for
        }
    } else if (dma) {
        for (int i = 0; i < min(S, planes); ++i) issue(i);
    }
    const Tile t(g, xb, yb);
    Sums below[M][V], at[M][V], above[M][V];
    for (int i = 0; i < planes; ++i) {
        const int q = z0 - 1 + i;
        typename Model::Point p[M][V];
        if (q >= z0 + 1) t.load_points(m, f, g, q - 1, p);
        pipe.wait(i);
        t.sums(m, ring + (i % S) * STAGE, above);
        pipe.release(i);
        if (!Ws && dma && i + S < planes) issue(i + S);  // waits for every warp to release plane i
        if (q >= z0 + 1) t.store(m, f, g, q - 1, below, at, above, p);
        shift_queue(below, at, above);
    }
}

}  // namespace strata::cuda
