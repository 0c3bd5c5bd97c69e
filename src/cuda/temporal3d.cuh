#pragma once
// temporal (3D): K time steps per pass over memory, by 2.5D streaming with K pipelined levels.
//
// A block owns an xy tile of 64 x BY cells (its output region plus a margin on every side,
// overlapping its neighbours' tiles as in temporal2d.cuh) and marches it along z over a chunk of
// planes [z0, z1). Level 0 is the state read from memory; level l+1 is level l advanced one step.
// When plane q of level 0 arrives, level 1 can advance plane q-1 (it has planes q-2, q-1 and q of
// level 0), then level 2 plane q-2, ..., and level K plane q-K, which is stored: a pipeline K
// planes deep. Level l is exact on cells at least l from the tile's edge, so after K levels the
// output region is; along z the chunk reads K extra planes at each end for the same reason.
//
// The work per cell and level is a handful of additions, so what decides the speed is every
// other instruction (Nsight Compute showed the previous version of this kernel, one word per
// access and its cells strided across the tile, issue-bound at 48 instructions per cell
// update). Hence:
// - each thread owns V = kLanes<T> consecutive cells of one row: a 16-byte shared-memory access
//   (8 bytes at 16 bits) per row reads all of them, and their x-neighbours are the thread's own
//   registers, or its warp neighbours' (one shuffle each way; the tile's edge columns get a wrong
//   value there, which only the inexact edge cells use);
// - a cell's update is split as the model's `partial` (planes z-1 and z) and `finish` (plane
//   z+1), so the register queue holds per cell and level the newest plane's sums and one partial
//   sum (two words for a star stencil) instead of two planes' sums;
// - the x margin is rounded up to V, so that every tile starts 16-byte aligned and level 0
//   arrives by one 16-byte cp.async per thread and plane (into a ring of S stages, S-1 planes
//   ahead, as in async3d), and the output leaves by one 16-byte store;
// - rows too near the tile's edge for a level are skipped by whole warps.
// Each level's newest plane sits in shared memory for the next level's y-neighbours.
//
// Fixed (Dirichlet, zero) boundaries with a zero ghost layer only: every cell outside the domain
// is 0 at every level. Level 0 zero-fills them instead of reading them (cp.async with a source
// size of 0); later levels write 0. Barriers: one per plane for the ring, then one per level, so
// that level l's newest plane is complete before level l+1 reads it. A level's buffer is
// rewritten one plane later, K-1 barriers after its last reader (K = 1 uses no level buffer).
#include "grid.cuh"
#include "strata/core/plane_sums.hpp"
#include "strategies3d.cuh"
#include "temporal2d.cuh"

namespace strata::cuda {

// The words of a star model's Partial that its pipelines carry per cell (`static constexpr int
// partial_words`; 1 for models that do not say: heat3d's `faces`). A file's `lap(u)` carries two
// (codegen.cpp: lap sums the plane below with the one above, so its centre waits).
template <class Model>
constexpr int partial_words() {
    if constexpr (requires { Model::partial_words; })
        return Model::partial_words;
    else
        return 1;
}

// A thread's word (16 bytes, or 8 at 16 bits) in shared memory at a 32-bit shared address.
template <class Vec>
__device__ __forceinline__ Vec lds_word(unsigned a) {
    static_assert(sizeof(Vec) == 16 || sizeof(Vec) == 8);
    Vec v;
    if constexpr (sizeof(Vec) == 16) {
        uint4 u;
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
                     : "r"(a));
        memcpy(&v, &u, sizeof v);
    } else {
        uint2 u;
        asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(u.x), "=r"(u.y) : "r"(a));
        memcpy(&v, &u, sizeof v);
    }
    return v;
}
template <class Vec>
__device__ __forceinline__ void sts_word(unsigned a, const Vec& v) {
    static_assert(sizeof(Vec) == 16 || sizeof(Vec) == 8);
    if constexpr (sizeof(Vec) == 16) {
        uint4 u;
        memcpy(&u, &v, sizeof u);
        asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(u.x), "r"(u.y), "r"(u.z),
                     "r"(u.w)
                     : "memory");
    } else {
        uint2 u;
        memcpy(&u, &v, sizeof u);
        asm volatile("st.shared.v2.u32 [%0], {%1, %2};" ::"r"(a), "r"(u.x), "r"(u.y) : "memory");
    }
}

// A 64-cell-wide tile of BY rows, one row per thread.
template <class T, int BY>
using TemporalTile3d = TemporalTile<T, 64 / (kLanes<T>), BY, 1>;

// Whole: the domain's width is a multiple of V, so each thread's V cells lie all in or all out of
// the domain's columns and one predicate per level masks them, instead of a bit test per cell.
template <class Model, int BY, int K, int S, int MinBlocks, bool Whole>
__global__ void __launch_bounds__(TemporalTile3d<typename Model::value_type, BY>::BX* BY, MinBlocks)
    temporal3d(const Model m, const typename Model::Fields rd, const typename Model::Fields wr,
               const DevGrid g, const int zchunk) {
    static_assert(!Model::mirror && Model::zero_ghosts,
                  "temporal3d applies fixed boundaries with zero ghosts");
    static_assert(S >= 2 && K >= 1);
    using T = typename Model::value_type;
    using Sums = typename Model::Sums;
    using Partial = typename Model::Partial;
    using Tile = TemporalTile3d<T, BY>;
    constexpr int V = Tile::V, BX = Tile::BX, TW = Tile::TW, TH = Tile::TH, CELLS = Tile::CELLS;
    constexpr int MX = Tile::margin_x(K);
    using R = compute_t<T>;
    using Vec = Lanes<T, V>;
    using Wide = Lanes<R, V>;  // a level's values: rounded to T, held as R (the same at fp32 and fp64)
    unsigned char* const smem_raw = dynamic_smem();
    T* const ring = reinterpret_cast<T*>(smem_raw);            // S stages of level 0
    R* const levels = reinterpret_cast<R*>(ring + S * CELLS);  // the newest plane of levels 1 .. K-1

    // Rows paired from both ends of the tile (TemporalTile::row0) in fp32, whose warps hold two
    // rows, from depth 4: measured on an H100 at 512^3, heat 7pt depth 4, 896 against 836 GCells/s;
    // at depth 3 it was 3% slower (819 against 844), 19pt at depth 2 1.4%, and in fp64, where it
    // only reorders the warps, about 1%.
    constexpr bool pair = BX < 32 && K >= 4;
    const int sx = threadIdx.x * V, sy = Tile::template row0<pair>(threadIdx.y);
    const int x = blockIdx.x * Tile::out_w(K) - MX + sx, y = blockIdx.y * Tile::out_h(K) - K + sy;
    const int z0 = g.lo + blockIdx.z * zchunk, z1 = min(z0 + zchunk, g.end(g.nz));
    // Own cells' offsets in a tile plane; the rows above and below are clamped into the tile at
    // its edge rows, which no level computes exactly.
    const int own = sy * TW + sx, up = max(sy - 1, 0) * TW + sx, down = min(sy + 1, TH - 1) * TW + sx;
    unsigned in_x = 0;  // bit v: own cell v lies in the domain's columns
#pragma unroll
    for (int v = 0; v < V; ++v) in_x |= unsigned(x + v >= 0 && x + v < g.nx) << v;
    const bool in_y = y >= 0 && y < g.ny;
    // The 16 bytes of a row hold interior cells (V-aligned groups lie wholly left of column 0;
    // past the last column they reach into the ghost and the row padding, never read by an
    // interior cell except the ghost, which is 0).
    const bool fetch_xy = in_y && in_x != 0;
    const std::int64_t row = std::int64_t(load_index<false>(y, g.ny)) * g.pitch;
    const std::int64_t src_xy = row + (fetch_xy ? x : 0);
    const bool store_xy = fetch_xy && sx >= MX && sx < TW - MX && sy >= K && sy < TH - K;
    // Levels computed by this warp: those exact on one of its rows at least.
    const unsigned warp_dist = __reduce_max_sync(~0u, unsigned(min(sy, TH - 1 - sy)));
    asm("" : "+r"(in_x));  // keep the bits in one register instead of re-deriving them per use
    // Shared-memory addresses of the own cells and those above and below them in stage 0 of the
    // ring; every other stage and level plane is a fixed offset away. Kept in registers: the
    // compiler otherwise re-derives them at every level (about 8 instructions of the ~66 per
    // level), and keeping them was 4.6% faster in fp32 and 1.2% in fp64 (H100, heat 7pt 512^3,
    // depth 4). Only where the registers allow: past depth 4, and for box stencils, it adds spills
    // (27pt fp64 at depth 2: 124 -> 144 bytes, 137 -> 118 GCells/s), so those keep the pointers.
    // At 16 bits the levels' planes hold R (fp32), twice the ring's words: their own addresses.
    constexpr bool pin = Model::star && K <= 4;
    constexpr unsigned PLANE = CELLS * sizeof(T), LEVEL = CELLS * sizeof(R);
    unsigned a_own = unsigned(__cvta_generic_to_shared(smem_raw)) + own * unsigned(sizeof(T));
    unsigned a_up = a_own + (up - own) * int(sizeof(T)), a_down = a_own + (down - own) * int(sizeof(T));
    if constexpr (pin) asm("" : "+r"(a_own), "+r"(a_up), "+r"(a_down));
    constexpr bool wide = sizeof(R) != sizeof(T);
    unsigned l_own = unsigned(__cvta_generic_to_shared(levels)) + own * unsigned(sizeof(R));
    unsigned l_up = l_own + (up - own) * int(sizeof(R)), l_down = l_own + (down - own) * int(sizeof(R));
    if constexpr (pin && wide) asm("" : "+r"(l_own), "+r"(l_up), "+r"(l_down));

    // Level-0 planes [qa, qb) feed output planes [z0, z1).
    const int qa = z0 - K, qb = z1 + K;
    auto issue = [&](int q, T* stage) {  // plane q's copy as one commit group (empty past qb)
        if (q < qb) {
            const bool fetch = fetch_xy && unsigned(q) < unsigned(g.nz);
            const T* src = rd.in + std::int64_t(min(max(q, 0), g.nz - 1)) * g.plane + src_xy;
            cp_async_or_zero<sizeof(T) * V>(stage + own, src, fetch);
        }
        cp_async_commit();
    };
    for (int q = qa; q < qa + S - 1; ++q) issue(q, ring + (q - qa) * CELLS);

    // Per level l and own cell: the sums of level l's newest plane, and its partial update. Until
    // a level has seen two planes they hold values that feed no exact cell.
    Sums at[K][V];
    Partial pend[K][V];
#pragma unroll
    for (int l = 0; l < K; ++l)
#pragma unroll
        for (int v = 0; v < V; ++v) at[l][v] = Sums{}, pend[l][v] = Partial{};

    int slot = 0;  // the stage of plane q
    for (int q = qa; q < qb; ++q) {
        cp_async_wait<S - 2>();
        __syncthreads();  // plane q is in its stage, and nobody reads the stage of plane q-1
        issue(q + S - 1, ring + (slot == 0 ? S - 1 : slot - 1) * CELLS);
        const T* src = ring + slot * CELLS;  // the plane level 0 reads
        const unsigned off = slot * PLANE;   // its offset from stage 0
        slot = slot + 1 == S ? 0 : slot + 1;

        // Level l's own cells, newest plane, widened (level 0's from the ring; later levels' are
        // the values this thread computed, rounded to T). At fp32 and fp64 Wide is Vec, and none
        // of this converts anything.
        Wide cur = widened<T, V>(pin ? lds_word<Vec>(a_own + off) : *reinterpret_cast<const Vec*>(src + own));
#pragma unroll
        for (int l = 0; l < K; ++l) {
            // Level l's planes start at z0 - K + l, reached at q = qa + 2l (each level lags one
            // plane behind the one it reads).
            if (q < qa + 2 * l) break;  // block-uniform, so no barrier is skipped by some threads only
            if (l > 0) __syncthreads();                 // level l's newest plane is complete
            if (warp_dist < unsigned(l + 1)) continue;  // warp-uniform
            const int p = q - l - 1;                    // the plane level l+1 computes now
            // Rows y-1, y, y+1 of columns x-1 .. x+V, widened once (at 16 bits a value feeds up to
            // three cells' sums): level 0's from the ring, the others' as they are.
            Wide a, b;
            if (l == 0) {
                a = widened<T, V>(pin ? lds_word<Vec>(a_up + off) : *reinterpret_cast<const Vec*>(src + up));
                b = widened<T, V>(pin ? lds_word<Vec>(a_down + off) : *reinterpret_cast<const Vec*>(src + down));
            } else {
                const unsigned lo = (l - 1) * LEVEL;  // level l's plane from the levels' first
                const R* lv = levels + (l - 1) * CELLS;
                a = pin && wide ? lds_word<Wide>(l_up + lo)
                    : pin       ? lds_word<Wide>(a_up + (S * PLANE + lo))
                                : *reinterpret_cast<const Wide*>(lv + up);
                b = pin && wide ? lds_word<Wide>(l_down + lo)
                    : pin       ? lds_word<Wide>(a_down + (S * PLANE + lo))
                                : *reinterpret_cast<const Wide*>(lv + down);
            }
            R w[3][V + 2];
#pragma unroll
            for (int v = 0; v < V; ++v) w[0][v + 1] = a.v[v], w[1][v + 1] = cur.v[v], w[2][v + 1] = b.v[v];
#pragma unroll
            for (int r = 0; r < 3; ++r) {
                if (Model::star && r != 1) continue;  // a star stencil uses no corner
                w[r][0] = shfl_up(w[r][V], 1, BX);
                w[r][V + 1] = shfl_down(w[r][1], 1, BX);
            }
            const bool in_z = in_y && unsigned(p) < unsigned(g.nz);
            const bool keep = in_z && (!Whole || in_x != 0);  // Whole: in_x is 0 or all V bits
            Vec nxt;
#pragma unroll
            for (int v = 0; v < V; ++v) {
                const Sums above = m.plane_sums([&](int di, int dj) { return w[dj + 1][v + 1 + di]; });
                const T val = m.finish(at[l][v], pend[l][v], above);
                nxt.v[v] = keep && (Whole || (in_x >> v & 1)) ? val : T(0);
                pend[l][v] = m.partial(at[l][v], above);
                at[l][v] = above;
            }
            cur = widened<T, V>(nxt);  // (at 16 bits the rounded values, widened once)
            if (l + 1 < K) {
                if constexpr (pin && wide)
                    sts_word(l_own + l * LEVEL, cur);
                else if constexpr (pin)
                    sts_word(a_own + (S * PLANE + l * LEVEL), cur);
                else
                    *reinterpret_cast<Wide*>(levels + l * CELLS + own) = cur;
            } else if (store_xy && p >= z0 && p < z1) {
                T* const dst = wr.out + std::int64_t(p) * g.plane + row + x;
                if (Whole || in_x == (1u << V) - 1) {
                    *reinterpret_cast<Vec*>(dst) = nxt;
                } else {
#pragma unroll
                    for (int v = 0; v < V; ++v)
                        if (in_x >> v & 1) dst[v] = nxt.v[v];
                }
            }
        }
    }
}

// Dynamic shared memory of one block: the ring and K-1 level planes (of R: fp32 at 16 bits).
template <class T, int BY, int K, int S>
constexpr std::size_t temporal3d_smem_bytes() {
    return (std::size_t(S) * sizeof(T) + std::size_t(K - 1) * sizeof(compute_t<T>)) *
           TemporalTile3d<T, BY>::CELLS;
}

// Calls f(Index<J>{}) for J = I, I+1, .. Last while f returns true: a loop whose index is a
// compile-time constant (NVRTC has no <utility>).
template <int I>
struct Index {
    static constexpr int value = I;
};
template <int I, int Last, class F>
__device__ __forceinline__ void while_true(F& f) {
    if constexpr (I <= Last)
        if (f(Index<I>{})) while_true<I + 1, Last>(f);
}

// temporal (3D) for a cells-only model of radius D = 1 or 2 (model.hpp): temporal3d's tiles and
// pipeline of K levels along z, for any update read cell by cell: star or box, one or two
// neighbourhood fields, pointwise fields and coefficients, every boundary. Level l+1 computes plane
// p from level l's planes p-D .. p+D, which level l computed by the same threads in the last 2D
// rounds and this one: each level runs D planes behind the one before and is exact on D fewer rows
// and columns at each side of the tile (the tile's reach: K D). For a star each thread keeps its
// own rows of them in registers (a queue of 2D per level and field, and the newest), and shared
// memory holds what other threads read, rows y-D .. y+D of plane p: a ring of D+1 planes per level
// and field. A box reads all of the 2D+1 planes' rows there but the newest's own: a ring of 2D+1.
// Level 0 arrives by cp.async into its ring and A more stages, A planes ahead. (The first version
// read all nine rows from a ring of three planes and loaded level 0 through registers when it was
// needed: on an H100, 3D Gray-Scott at 384^3 fp32 ran 95 GCells/s at depth 1 and 181 at depth 3;
// the cp.async ring alone gave 202 at depth 3, the queues then 237 at depth 2.) The Point of the
// plane a level's successor reads stays in registers (its coefficients travel with it: read once
// per pass, one plane ahead), D+1 rounds of it per level. Per level and plane a thread builds the
// 2D kernel's window, for 2D+1 planes, and the D columns beside its V cells by a shuffle each way
// (every row for a box; the own row of plane p for a star).
//
// The boundary, in blocks whose tile or chunk of planes reaches past a face (block-uniform):
// periodic tiles are loaded a period away, fixed (and zero) ones hold the cells outside the domain
// at the ghost value (each thread overwrites its own cells of level 0 once its copies are in), the
// mirror (radius-1 stars) reads the neighbour on the other side.
// a[N-1] = a[N-2], .., a[1] = a[0], a[0] = newest: the last N rounds' values, the newest first.
template <class X, int N>
__device__ __forceinline__ void shift_in(X (&a)[N], const X& newest) {
#pragma unroll
    for (int j = N - 1; j > 0; --j) a[j] = a[j - 1];
    a[0] = newest;
}
template <class X, int N, int V>
__device__ __forceinline__ void shift_in(X (&a)[N][V], const X (&newest)[V]) {
#pragma unroll
    for (int j = N - 1; j > 0; --j)
#pragma unroll
        for (int v = 0; v < V; ++v) a[j][v] = a[j - 1][v];
#pragma unroll
    for (int v = 0; v < V; ++v) a[0][v] = newest[v];
}
template <class Model>
constexpr int cells_temporal3d_ring() {
    return Model::star ? Model::radius + 1 : 2 * Model::radius + 1;
}
// The rows and columns a tile of cells_temporal3d at depth K loses at each side: K levels of the
// model's radius.
template <class Model>
__host__ __device__ constexpr int cells_temporal3d_reach(int depth) {
    return depth * Model::radius;
}
template <class Model, int BY, int K, int A, int MinBlocks, TileEdge Edge>
__device__ __forceinline__ void cells_temporal3d_pass(const Model& m, const typename Model::Fields& rd,
                                                      const typename Model::Fields& wr, const DevGrid& g,
                                                      int x0, int y0, int z0, int z1) {
    using T = typename Model::value_type;
    using Tile = TemporalTile3d<T, BY>;
    using P = typename Model::Point;
    constexpr int D = Model::radius, KD = cells_temporal3d_reach<Model>(K);
    constexpr int V = Tile::V, BX = Tile::BX, TW = Tile::TW, TH = Tile::TH, CELLS = Tile::CELLS,
                  H = hoods<Model>(), MX = Tile::margin_x(KD), R = cells_temporal3d_ring<Model>(), S = A + R;
    static_assert(D <= V, "a thread's neighbours' columns come from the threads beside it");
    constexpr bool kQueue = Model::star;
    constexpr bool periodic = periodic_boundary<Model>();
    using Vec = Lanes<T, V>;
    // [S stages of level 0][H fields][CELLS], then [levels 1 .. K-1][R planes][H fields][CELLS]
    T* const ring = reinterpret_cast<T*>(dynamic_smem());
    // Level-0 planes [qa, qb) feed output planes [z0, z1); level l's plane p sits in its ring at
    // (p - qa) modulo the ring's length (p >= qa wherever a level reads it).
    const int qa = z0 - KD, qb = z1 + KD;
    auto plane_of = [&](int l, int p, int h) {
        return l == 0 ? ring + ((p - qa) % S * H + h) * CELLS
                      : ring + ((S + (l - 1) * R + (p - qa) % R) * H + h) * CELLS;
    };
    auto wrap = [](int i, int n) { return (i % n + n) % n; };
    const int sx = threadIdx.x * V, sy = threadIdx.y;
    const int x = x0 + sx, y = y0 + sy;
    // Row y + dy's cells of a plane at rows[D + dy], for dy in [-D, D] (clamped into the tile: a row
    // past its edge is never exact).
    int rows[2 * D + 1];
#pragma unroll
    for (int r = 0; r <= 2 * D; ++r) rows[r] = min(max(sy + r - D, 0), TH - 1) * TW + sx;
    const int own = rows[D];
    const unsigned warp_dist = __reduce_max_sync(~0u, unsigned(min(sy, TH - 1 - sy)));
    auto outside = [&](int v, int p) {
        return unsigned(x + v) >= unsigned(g.nx) || unsigned(y) >= unsigned(g.ny) || unsigned(p) >= unsigned(g.nz);
    };
    // Level 0's plane q of every field, a period away or clamped into the domain (the ghost value
    // replaces the clamped cells once they are in): one 16-byte copy per field, or one per cell
    // where a periodic row crosses the domain's side inside a thread's V cells. A commit group per
    // plane (empty past qb).
    const int yq = periodic ? wrap(y, g.ny) : min(max(y, 0), g.ny - 1);
    const bool whole_x = periodic ? g.nx % V == 0 || (x >= 0 && x + V <= g.nx) : true;
    const int xq = periodic ? wrap(x, g.nx) : min(max(x, 0), (g.nx - 1) / V * V);
    auto issue = [&](int q) {
        if (q < qb) {
            const int zq = periodic ? wrap(q, g.nz) : min(max(q, 0), g.nz - 1);
#pragma unroll
            for (int h = 0; h < H; ++h) {
                T* const dst = plane_of(0, q, h) + own;
                if (whole_x) {
                    cp_async<sizeof(T) * V>(dst, hood_in<Model>(rd, h) + g.at(xq, yq, zq));
                } else {
#pragma unroll
                    for (int v = 0; v < V; ++v)
                        cp_async<sizeof(T)>(dst + v, hood_in<Model>(rd, h) + g.at(wrap(x + v, g.nx), yq, zq));
                }
            }
        }
        cp_async_commit();
    };
    auto point_at = [&](int v, int q) {
        const int zq = periodic ? wrap(q, g.nz) : min(max(q, 0), g.nz - 1);
        return m.load_point(rd, g.at(periodic ? wrap(x + v, g.nx) : min(max(x + v, 0), g.nx - 1), yq, zq));
    };
    for (int q = qa; q < qa + A; ++q) issue(q);
    // Per level l < K and field, the own rows of the 2D planes it computed before this round
    // (queue[l][h][0] the latest); the newest is `cur`, handed from level to level within a round. A
    // box reads its own rows of the older planes from shared memory instead: it reads the rows
    // beside them there anyway, and the queue's registers cost it a block per SM (the 27-point box
    // at depth 2, fp32 on an H100: 237 GCells/s without the queue, 194 with it). Per level, the
    // Points of the planes it computed in the last D+1 rounds (pts[l][0] this round's), which level
    // l+1 reads D rounds later; level 0's come from memory a plane ahead (next).
    Vec queue[K][H][2 * D], cur[H];
    P pts[K][D + 1][V] = {}, next[V];
#pragma unroll
    for (int v = 0; v < V; ++v) next[v] = point_at(v, qa);
    for (int q = qa; q < qb; ++q) {
        cp_async_wait<A - 1>();  // this thread's copies of plane q are in
#pragma unroll
        for (int h = 0; h < H; ++h) {
            T* const mine = plane_of(0, q, h) + own;
            cur[h] = *reinterpret_cast<const Vec*>(mine);
            if constexpr (Edge == TileEdge::fixed) {
#pragma unroll
                for (int v = 0; v < V; ++v)
                    if (outside(v, q)) cur[h].v[v] = mine[v] = T(ghost_value<Model>());
            }
        }
        // Plane q is complete, and the stage of plane q-R, which level 1 read in the last round,
        // is free for plane q+A.
        __syncthreads();
        issue(q + A);
        shift_in(pts[0], next);
#pragma unroll
        for (int v = 0; v < V; ++v) next[v] = point_at(v, q + 1);
        // Level l computes plane p = q - l D from level l-1's planes p-D..p+D; false: levels l and
        // up have not started. A function of a compile-time l, so that the queues stay in registers
        // (as a loop with a break nvcc left them in local memory).
        auto level = [&](auto L) {
            constexpr int l = decltype(L)::value;
            // Level l's planes start at z0 - KD + l D (it is exact on (K - l) D fewer planes at each
            // end), so at q = z0 - KD + 2 l D. (Each time level l-1's newest plane, cur, has been
            // read, it joins that level's queue.)
            if (q < qa + 2 * l * D) {  // block-uniform: no barrier is skipped by some threads only
                if constexpr (kQueue)
#pragma unroll
                    for (int h = 0; h < H; ++h) shift_in(queue[l - 1][h], cur[h]);
                return false;
            }
            if (l > 1) __syncthreads();  // level l-1's plane p+D is complete
            if (warp_dist < unsigned(l * D))
                return true;  // warp-uniform: no row of the warp is exact at level l
            const int p = q - l * D;
            // [field][plane p-D .. p+D][row y-D .. y+D][column x-D .. x+V+D-1]
            T w[H][2 * D + 1][2 * D + 1][V + 2 * D];
#pragma unroll
            for (int h = 0; h < H; ++h)
#pragma unroll
                for (int dz = 0; dz <= 2 * D; ++dz) {
                    const T* src = plane_of(l - 1, p - D + dz, h);
                    const Vec b = dz == 2 * D ? cur[h]
                                  : kQueue    ? queue[l - 1][h][2 * D - 1 - dz]
                                              : *reinterpret_cast<const Vec*>(src + own);
#pragma unroll
                    for (int v = 0; v < V; ++v) w[h][dz][D][D + v] = b.v[v];
#pragma unroll
                    for (int r = 0; r <= 2 * D; ++r) {
                        if (r == D || (Model::star && dz != D))
                            continue;  // a star reads rows y-D..y+D of plane p only
                        const Vec a = *reinterpret_cast<const Vec*>(src + rows[r]);
#pragma unroll
                        for (int v = 0; v < V; ++v) w[h][dz][r][D + v] = a.v[v];
                    }
#pragma unroll
                    for (int r = 0; r <= 2 * D; ++r) {
                        if (Model::star && (dz != D || r != D)) continue;  // a star reads no diagonal
#pragma unroll
                        for (int i = 0; i < D; ++i) {
                            w[h][dz][r][i] = shfl_up(w[h][dz][r][V + i], 1, BX);
                            w[h][dz][r][D + V + i] = shfl_down(w[h][dz][r][D + i], 1, BX);
                        }
                    }
                }
            if constexpr (kQueue)
#pragma unroll
                for (int h = 0; h < H; ++h) shift_in(queue[l - 1][h], cur[h]);
            P out[V];
            T u[H][V];
#pragma unroll
            for (int v = 0; v < V; ++v) {
                auto at = [&](int h, int di, int dj, int dk) {
                    if constexpr (Edge == TileEdge::mirror) {  // a radius-1 star: the other side's neighbour
                        if (di != 0)
                            return (di < 0 ? x + v == 0 : x + v == g.nx - 1) ? w[h][1][1][1 + v - di]
                                                                               : w[h][1][1][1 + v + di];
                        if (dj != 0)
                            return (dj < 0 ? y == 0 : y == g.ny - 1) ? w[h][1][1 - dj][1 + v] : w[h][1][1 + dj][1 + v];
                        if (dk != 0)
                            return (dk < 0 ? p == 0 : p == g.nz - 1) ? w[h][1 - dk][1][1 + v] : w[h][1 + dk][1][1 + v];
                    }
                    return w[h][D + dk][D + dj][D + v + di];
                };
                out[v] = pts[l - 1][D][v];
                T n[H];
                m.next_values(neighbourhood<Model>(at), out[v], n);
#pragma unroll
                for (int h = 0; h < H; ++h)
                    u[h][v] = Edge == TileEdge::fixed && outside(v, p) ? T(ghost_value<Model>()) : n[h];
            }
            if (l < K) {
#pragma unroll
                for (int h = 0; h < H; ++h) {
#pragma unroll
                    for (int v = 0; v < V; ++v) cur[h].v[v] = u[h][v];
                    *reinterpret_cast<Vec*>(plane_of(l, p, h) + own) = cur[h];
                }
                shift_in(pts[l], out);
            } else if (sx >= MX && sx < TW - MX && sy >= KD && sy < TH - KD && p >= z0 && p < z1 &&
                       y < g.ny) {
                const std::int64_t c = g.at(x, y, p);
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    if (x + v >= g.nx) continue;
                    T cell[H];
#pragma unroll
                    for (int h = 0; h < H; ++h) cell[h] = u[h][v];
                    m.write_values(cell, out[v], wr, c + v);
                }
            }
            return true;
        };
        while_true<1, K>(level);
    }
}

template <class Model, int BY, int K, int A, int MinBlocks>
__global__ void __launch_bounds__(TemporalTile3d<typename Model::value_type, BY>::BX* BY, MinBlocks)
    cells_temporal3d(const Model m, const typename Model::Fields rd, const typename Model::Fields wr,
                     const DevGrid g, const int zchunk) {
    using Tile = TemporalTile3d<typename Model::value_type, BY>;
    constexpr int KD = cells_temporal3d_reach<Model>(K);
    static_assert((Model::radius == 1 || Model::radius == 2) && Model::dims == 3);
    static_assert(!Model::mirror || (Model::star && Model::radius == 1),
                  "the mirror boundary serves radius-1 stars");
    constexpr bool periodic = periodic_boundary<Model>();
    const int x0 = blockIdx.x * Tile::out_w(KD) - Tile::margin_x(KD), y0 = blockIdx.y * Tile::out_h(KD) - KD;
    const int z0 = g.lo + blockIdx.z * zchunk, z1 = min(z0 + zchunk, g.end(g.nz));
    const bool inside = x0 >= 0 && y0 >= 0 && x0 + Tile::TW <= g.nx && y0 + Tile::TH <= g.ny &&
                        z0 - KD >= 0 && z1 + KD <= g.nz;
    constexpr TileEdge kEdge = periodic ? TileEdge::none : Model::mirror ? TileEdge::mirror : TileEdge::fixed;
    if (periodic || inside)
        cells_temporal3d_pass<Model, BY, K, A, MinBlocks, TileEdge::none>(m, rd, wr, g, x0, y0, z0, z1);
    else if constexpr (kEdge != TileEdge::none)
        cells_temporal3d_pass<Model, BY, K, A, MinBlocks, kEdge>(m, rd, wr, g, x0, y0, z0, z1);
}

// Dynamic shared memory of one block: A + R stages of level 0 and R planes of levels 1 .. K-1, per
// neighbourhood field (R: cells_temporal3d_ring).
template <class Model, int BY, int K, int A>
constexpr std::size_t cells_temporal3d_smem_bytes() {
    using T = typename Model::value_type;
    constexpr int R = cells_temporal3d_ring<Model>();
    return std::size_t(A + R + (K - 1) * R) * hoods<Model>() * TemporalTile3d<T, BY>::CELLS * sizeof(T);
}

}  // namespace strata::cuda
