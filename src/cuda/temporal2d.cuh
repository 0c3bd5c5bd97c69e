#pragma once
// temporal (2D): several time steps per pass over memory, with overlapped tiles.
//
// A block loads an extended tile of TW x TH cells (its output region plus a margin on every
// side) of the stencil field and the pointwise state into registers, advances the tile `depth`
// steps on chip, and stores the output region only: after step s the cells at least s from the
// tile's edge are exact (each step needs the neighbours of the previous one), so after `depth`
// steps the output region is. Tiles of neighbouring blocks overlap by twice the margin; that
// recomputation is the price of reading and writing memory once per `depth` steps.
//
// The model's arithmetic per cell is fixed, so the speed is decided by every other instruction
// (Nsight Compute showed the previous version, one word per access and its cells strided across
// the tile, issue-bound). Hence:
// - thread (tx, ty) owns V = kLanes<T> consecutive cells of each of the CY consecutive rows
//   from ty CY: its cells' values and pointwise state stay in its registers for the whole pass;
//   x-neighbours are its own registers or its warp neighbours' (one shuffle each way per row),
//   y-neighbours its own registers except above its first row and below its last, which come
//   from shared memory, where each thread leaves its first and last rows after each step;
// - the x margin is the depth rounded up to V, so that tiles start 16-byte aligned and every
//   load and store of a row's V cells is one 16-byte access;
// - no per-cell liveness test: every cell is advanced, and only exact cells are stored. Cells
//   too near the tile's edge read wrong neighbours (a shuffle from beyond the tile, a clamped
//   row), which feed only cells that are not exact either. Rows no level reaches are skipped by
//   whole warps.
//
// The boundary needs no ghost cells: a neighbour outside the domain is its mirror image, which
// for the cells on the domain's edge is the neighbour on the other side (e(-1) = e(1) at x = 0,
// e(n) = e(n-2) at x = n-1), or 0 for a zero (Dirichlet) boundary; those cells substitute it
// (blocks touching the edge only, a block-uniform branch). Cells outside the domain are advanced
// like any other and never read by a cell inside it. With a periodic boundary a tile is a window
// of the periodic grid: its cells beyond an edge are loaded from a period away, and advance like
// the cells they stand for (their neighbours in the tile are those cells' neighbours), so nothing
// is substituted. A model without pointwise state (Point empty) advances and stores its stencil
// field alone.
//
// Shared memory holds the tile twice: step s reads one copy and writes the other, so one barrier
// per step suffices.
//
// A model of several neighbourhood fields (H = hoods<Model>(), Gray-Scott's u and v) keeps each
// field's runs, shared rows and shuffles side by side: ev[h], H tiles per copy, nb(h, di, dj).
#include "grid.cuh"
#include "strategies3d.cuh"

namespace strata::cuda {

// The xy tile of the temporal strategies (2D and 3D), shared by the kernels and their launchers:
// BX x BY threads, each owning V = kLanes<T> consecutive cells of CY consecutive rows. The
// x margin is the depth rounded up to V, so that tiles start 16-byte aligned.
template <class T, int BX_, int BY, int CY>
struct TemporalTile {
    static constexpr int V = kLanes<T>;
    static constexpr int BX = BX_, TW = BX * V, TH = BY * CY, CELLS = TW * TH;
    static constexpr int max_depth = (TW < TH ? TW : TH) / 4;  // keeps the output >= half the tile
    __host__ __device__ static constexpr int margin_x(int depth) { return (depth + V - 1) / V * V; }
    __host__ __device__ static constexpr int out_w(int depth) { return TW - 2 * margin_x(depth); }
    __host__ __device__ static constexpr int out_h(int depth) { return TH - 2 * depth; }
    // The first of the CY rows of thread row ty. With Pair, thread rows pair up from both ends of
    // the tile (0, BY-1, 1, BY-2, ...): a warp of two thread rows (BX = 16) then holds rows equally
    // far from the tile's edge, and skips every step after which none of them is exact.
    template <bool Pair>
    __device__ static int row0(int ty) {
        return (Pair ? (ty & 1 ? BY - 1 - (ty >> 1) : ty >> 1) : ty) * CY;
    }
};

// Thread rows paired from both ends of the tile (TemporalTile::row0) where a warp holds two:
// measured on an H100 at 8192^2, depth 4, fp32 544 against 537 GCells/s. (fp64's warps hold one
// thread row, where pairing only reorders the warps: that was 2% slower.)
template <int BX>
inline constexpr bool kPairRows2d = BX < 32;

// Whether a model has pointwise state (apf's R) that travels with its cells. (The compilers'
// builtin rather than std::is_empty_v: NVRTC has no <type_traits>.)
template <class Model>
inline constexpr bool kHasPoint = !__is_empty(typename Model::Point);

// The update of one cell in registers (value v of row j of each field's runs), with its pointwise
// state if it has one. A model of several fields returns them all at once. The runs hold the
// arithmetic's type (fp32 at 16 bits): each new value rounded to T, then widened once, where every
// read of it would widen it again (five per cell and step for a star).
template <class Model, class Nb, class Run, int H, int CY, class P>
__device__ __forceinline__ void update_cell(const Model& m, const Nb& nb, Run (&ev)[H][CY], int j, int v,
                                            P& point) {
    using T = typename Model::value_type;
    T u[H];
    if constexpr (H > 1)
        m.update(nb, u, point);
    else if constexpr (kHasPoint<Model>)
        m.update(nb, u[0], point);
    else
        m.update(nb, u[0]);
#pragma unroll
    for (int h = 0; h < H; ++h) ev[h][j].v[v] = u[h];
}

// A thread's rows that other threads read at the next step, into the next copy of the tile: the R
// first and R last of its CY rows (from row0), every field's. Both 2D temporal kernels.
template <int R, int CY, int TW, int CELLS, class T, class Run, int H>
__device__ __forceinline__ void store_shared_rows(T* nxt, const Run (&ev)[H][CY], int row0, int sx) {
#pragma unroll
    for (int h = 0; h < H; ++h)
#pragma unroll
        for (int j = 0; j < CY; ++j)
            if (j < R || j >= CY - R) *reinterpret_cast<Run*>(nxt + h * CELLS + (row0 + j) * TW + sx) = ev[h][j];
}

// A run of V values of T as the arithmetic's type: the run itself where that is T (a copy of the
// whole, which stays one vector access), else widened value by value. The run must be a value,
// not a reference to memory: read through a reference, a load splits into one per value (run 126).
template <class T, int V, class Run>
__device__ __forceinline__ Lanes<compute_t<T>, V> widened(const Run& a) {
    if constexpr (sizeof(compute_t<T>) == sizeof(T)) {
        return a;
    } else {
        Lanes<compute_t<T>, V> b;
#pragma unroll
        for (int v = 0; v < V; ++v) b.v[v] = a.v[v];
        return b;
    }
}

// V values of T from memory (16-byte aligned, 8 at 16 bits) as the runs' type: one vector load,
// then the widening.
template <class Run, class T, int V = kLanes<T>>
__device__ __forceinline__ Lanes<compute_t<T>, V> load_widened(const T* p) {
    if constexpr (sizeof(compute_t<T>) == sizeof(T)) {
        return *reinterpret_cast<const Lanes<compute_t<T>, V>*>(p);
    } else {
        const Run a = *reinterpret_cast<const Run*>(p);
        return widened<T, V>(a);
    }
}

template <class Model, int BX, int BY, int CY, bool Edge>
__device__ __forceinline__ void temporal2d_steps(
    const Model& m, compute_t<typename Model::value_type>* cur, compute_t<typename Model::value_type>* nxt,
    Lanes<compute_t<typename Model::value_type>, kLanes<typename Model::value_type>> (
        &ev)[hoods<Model>()][CY],
    typename Model::template Run<kLanes<typename Model::value_type>> (&p)[CY], const DevGrid& g, int x, int y,
    unsigned warp_dist, int depth) {
    using T = typename Model::value_type;
    using R = compute_t<T>;
    using Tile = TemporalTile<T, BX, BY, CY>;
    constexpr int V = Tile::V, TW = Tile::TW, TH = Tile::TH, H = hoods<Model>(), CELLS = Tile::CELLS;
    using Vec = Lanes<R, V>;
    const int sx = threadIdx.x * V, row0 = Tile::template row0<kPairRows2d<BX>>(threadIdx.y);
    // The shared-memory rows just above and below this thread's rows (clamped at the tile's edge,
    // whose rows are never exact).
    const int above = max(row0 - 1, 0) * TW + sx, below = min(row0 + CY, TH - 1) * TW + sx;
    for (int s = 1; s <= depth; ++s) {
        if (warp_dist >= unsigned(s)) {  // warp-uniform: some row of the warp is exact after step s
            Vec bottom[H], prev[H];  // prev: the old values of the row above the current one
#pragma unroll
            for (int h = 0; h < H; ++h) {
                prev[h] = *reinterpret_cast<const Vec*>(cur + h * CELLS + above);
                bottom[h] = *reinterpret_cast<const Vec*>(cur + h * CELLS + below);
            }
#pragma unroll
            for (int j = 0; j < CY; ++j) {
                Vec old[H];
                R left[H], right[H];
#pragma unroll
                for (int h = 0; h < H; ++h) {
                    old[h] = ev[h][j];
                    left[h] = shfl_up(old[h].v[V - 1], 1, BX);
                    right[h] = shfl_down(old[h].v[0], 1, BX);
                }
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    R w[H], e[H], n[H], sn[H];
#pragma unroll
                    for (int h = 0; h < H; ++h) {
                        w[h] = v > 0 ? old[h].v[v - 1] : left[h];
                        e[h] = v + 1 < V ? old[h].v[v + 1] : right[h];
                        n[h] = prev[h].v[v];
                        sn[h] = j + 1 < CY ? ev[h][j + 1].v[v] : bottom[h].v[v];
                        if constexpr (Edge) {  // a neighbour outside the domain: its mirror image, or 0
                            if (x + v == 0) w[h] = Model::mirror ? e[h] : R(0);
                            if (x + v == g.nx - 1) e[h] = Model::mirror ? w[h] : R(0);
                            if (y + j == 0) n[h] = Model::mirror ? sn[h] : R(0);
                            if (y + j == g.ny - 1) sn[h] = Model::mirror ? n[h] : R(0);
                        }
                    }
                    auto at = [&](int h, int di, int dj) {
                        return dj < 0 ? n[h] : dj > 0 ? sn[h] : di < 0 ? w[h] : di > 0 ? e[h] : old[h].v[v];
                    };
                    update_cell(m, neighbourhood<Model>(at), ev, j, v, p[j].v[v]);
                }
#pragma unroll
                for (int h = 0; h < H; ++h) prev[h] = old[h];
            }
            store_shared_rows<1, CY, TW, CELLS>(nxt, ev, row0, sx);
        }
        __syncthreads();
        auto* t = cur;
        cur = nxt;
        nxt = t;
    }
}

// `rd` supplies the old state (in, and the pointwise state), `wr` receives the new one (out, and
// the pointwise state): the two must not alias, since neighbouring tiles read what this one
// overwrites. Tiles are numbered row-major over tiles_x tile columns; block t advances tile t,
// loading it straight into registers. Dynamic shared memory: two TW x TH tiles.
template <class Model, int BX, int BY, int CY, int MinBlocks>
__global__ void __launch_bounds__(BX* BY, MinBlocks)
    temporal2d(const Model m, const typename Model::Fields rd, const typename Model::Fields wr,
               const DevGrid g, const int depth, const int tiles_x) {
    using T = typename Model::value_type;
    using P = typename Model::Point;
    using Tile = TemporalTile<T, BX, BY, CY>;
    constexpr int V = Tile::V, TW = Tile::TW, TH = Tile::TH, CELLS = Tile::CELLS;
    static_assert(!kHasPoint<Model> || sizeof(P) == sizeof(T), "the pointwise state is one word per cell, moved V at a time");
    using Vec = typename Model::template Run<V>;
    using R = compute_t<T>;
    using Wide = Lanes<R, V>;  // the fields' runs in registers and shared memory (fp32 at 16 bits)
    constexpr int H = hoods<Model>();
    unsigned char* const smem_raw = dynamic_smem();
    R* const tiles_a = reinterpret_cast<R*>(smem_raw);  // H tiles each
    R* const tiles_b = tiles_a + H * CELLS;
    const int mx = Tile::margin_x(depth);
    const int sx = threadIdx.x * V, row0 = Tile::template row0<kPairRows2d<BX>>(threadIdx.y);

    // The largest distance of an own row to the tile's edge, and the warp's (a warp skips a step
    // after which none of its rows is exact).
    int dist = 0;
#pragma unroll
    for (int j = 0; j < CY; ++j) dist = max(dist, min(row0 + j, TH - 1 - row0 - j));
    const unsigned warp_dist = __reduce_max_sync(~0u, unsigned(dist));

    auto origin = [&](int t, int& x0, int& y0) {
        x0 = (t % tiles_x) * Tile::out_w(depth) - mx;
        y0 = g.lo + (t / tiles_x) * Tile::out_h(depth) - depth;
    };
    // Where tile t's own run of row j comes from. Cells outside the domain are read clamped (a
    // V-aligned run reaches past the last column into the ghost and the row padding, which
    // exist) and never read by a cell inside it.
    auto source = [&](int t, int j) {
        int x0, y0;
        origin(t, x0, y0);
        return g.at(min(max(x0 + sx, 0), (g.nx - 1) / V * V), min(max(y0 + row0 + j, 0), g.ny - 1));
    };
    // Tile t from its state in registers: `depth` steps, then the exact cells out. Its first and
    // last own rows must be in tiles_a, and a barrier passed since.
    auto advance = [&](int t, Wide(&ev)[H][CY], Vec(&p)[CY]) {
        int x0, y0;
        origin(t, x0, y0);
        const int x = x0 + sx, y = y0 + row0;  // the first own cell
        const bool edge = !periodic_boundary<Model>() && (x0 < 1 || y0 < 1 || x0 + TW > g.nx - 1 || y0 + TH > g.ny - 1);
        if (edge)
            temporal2d_steps<Model, BX, BY, CY, true>(m, tiles_a, tiles_b, ev, p, g, x, y, warp_dist, depth);
        else
            temporal2d_steps<Model, BX, BY, CY, false>(m, tiles_a, tiles_b, ev, p, g, x, y, warp_dist, depth);
        const bool cols = sx >= mx && sx < TW - mx;
#pragma unroll
        for (int j = 0; j < CY; ++j) {
            const int sy = row0 + j;
            if (!cols || sy < depth || sy >= TH - depth || y + j >= g.end(g.ny) || x >= g.nx) continue;
            const std::int64_t c = g.at(x, y + j);
            if constexpr (H > 1) {  // several fields: Fields' out[h], and s for the pointwise state
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    if (x + V > g.nx && x + v >= g.nx) continue;
#pragma unroll
                    for (int h = 0; h < H; ++h) wr.out[h][c + v] = ev[h][j].v[v];
                    if constexpr (kHasPoint<Model>) wr.s[c + v] = p[j].v[v];
                }
            } else if (x + V <= g.nx) {
                Vec out;
#pragma unroll
                for (int v = 0; v < V; ++v) out.v[v] = ev[0][j].v[v];
                if constexpr (kHasPoint<Model>)
                    m.write_run(out, p[j], wr, c);
                else
                    m.write_run(out, wr, c);
            } else {
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    if (x + v >= g.nx) continue;
                    if constexpr (kHasPoint<Model>)
                        m.write(ev[0][j].v[v], p[j].v[v], wr, c + v);
                    else
                        m.write(ev[0][j].v[v], wr, c + v);
                }
            }
        }
    };

    Wide ev[H][CY];
    Vec p[CY];
    const int t = blockIdx.x;
#pragma unroll
    for (int j = 0; j < CY; ++j) {
        if constexpr (periodic_boundary<Model>()) {  // the cells a period away, V at once inside the grid
            int x0, y0;
            origin(t, x0, y0);
            auto wrap = [](int i, int n) { return (i % n + n) % n; };
            const int x = x0 + sx, y = wrap(y0 + row0 + j, g.ny);
            if (x >= 0 && x + V <= g.nx) {
                const std::int64_t c = g.at(x, y);
#pragma unroll
                for (int h = 0; h < H; ++h) ev[h][j] = load_widened<Vec>(hood_in<Model>(rd, h) + c);
                if constexpr (kHasPoint<Model>) p[j] = *reinterpret_cast<const Vec*>(m.points(rd) + c);
            } else {
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    const std::int64_t c = g.at(wrap(x + v, g.nx), y);
#pragma unroll
                    for (int h = 0; h < H; ++h) ev[h][j].v[v] = hood_in<Model>(rd, h)[c];
                    if constexpr (kHasPoint<Model>) p[j].v[v] = m.points(rd)[c];
                }
            }
        } else {
            const std::int64_t c = source(t, j);
#pragma unroll
            for (int h = 0; h < H; ++h) ev[h][j] = load_widened<Vec>(hood_in<Model>(rd, h) + c);
            if constexpr (kHasPoint<Model>) p[j] = *reinterpret_cast<const Vec*>(m.points(rd) + c);
        }
        if (j == 0 || j == CY - 1)
#pragma unroll
            for (int h = 0; h < H; ++h)
                *reinterpret_cast<Wide*>(tiles_a + h * CELLS + (row0 + j) * TW + sx) = ev[h][j];
    }
    __syncthreads();
    advance(t, ev, p);
}

template <class Model, int BX, int BY, int CY>
constexpr std::size_t temporal2d_smem_bytes() {
    using Tile = TemporalTile<typename Model::value_type, BX, BY, CY>;
    return 2 * std::size_t(hoods<Model>()) * Tile::CELLS * sizeof(compute_t<typename Model::value_type>);
}

// temporal (2D) for a cells-only model (model.hpp): temporal2d's tiles, thread layout and
// exactness, for any update the model reads cell by cell: radius R up to 2 (at most V, so that one
// shuffle brings the R columns beside a thread's V), star or box, one or two neighbourhood fields,
// pointwise fields and coefficients, every boundary. A step reaches R cells, so after step s the
// cells at least sR from the tile's edge are exact, and the margins are depth R (x: rounded up to V).
//
// Per step a thread builds, per neighbourhood field, the window its cells read: rows y-R ..
// y+CY-1+R and columns x-R .. x+V-1+R. Its own rows are its registers; the R rows above and below
// come from shared memory, where each thread leaves its first and last R rows after each step;
// the R columns on either side come by one shuffle each way (every row for a box, the own rows
// for a star). The update reads the window at compile-time places, so it stays in registers.
// A cell's pointwise fields and coefficients (the model's Point) stay in its thread's registers for
// the whole pass: the coefficients are read once per pass, the pointwise fields written once.
//
// The boundary, in tiles that reach past a face (a block-uniform choice; the others pay nothing):
// - periodic: a tile is a window of the periodic grid, loaded a period away: nothing to do;
// - fixed (zero included): the cells outside the domain hold the ghost value, set after the load
//   and after every step, so that their neighbours read it;
// - mirror (radius-1 stars only, as the stencil language says): a neighbour outside is its image
//   inside (load_index's rule, -1 -> 1, n -> n-2), the neighbour on the cell's other side, which
//   its window holds: the cells on a face read that instead, a select per read.
enum class TileEdge { none, fixed, mirror };

template <class Model, int BX, int BY, int CY, TileEdge Edge>
__device__ __forceinline__ void cells_temporal2d_steps(
    const Model& m, compute_t<typename Model::value_type>* cur, compute_t<typename Model::value_type>* nxt,
    Lanes<compute_t<typename Model::value_type>, kLanes<typename Model::value_type>> (
        &ev)[hoods<Model>()][CY],
    typename Model::Point (&pt)[CY][kLanes<typename Model::value_type>], const DevGrid& g, int x0, int y0,
    unsigned warp_dist, int depth) {
    using T = typename Model::value_type;
    using A = compute_t<T>;  // the runs' type (temporal2d's: each value rounded to T, held widened)
    using Tile = TemporalTile<T, BX, BY, CY>;
    constexpr int V = Tile::V, TW = Tile::TW, TH = Tile::TH, CELLS = Tile::CELLS, H = hoods<Model>();
    constexpr int R = Model::radius, Q = CY + 2 * R, W = V + 2 * R;
    using Vec = Lanes<A, V>;
    const int sx = threadIdx.x * V, row0 = Tile::template row0<kPairRows2d<BX>>(threadIdx.y);
    const int x = x0 + sx, y = y0 + row0;  // the first own cell
    for (int s = 1; s <= depth; ++s) {
        if (warp_dist >= unsigned(s * R)) {  // warp-uniform: some row of the warp is exact after step s
            A w[H][Q][W];
#pragma unroll
            for (int h = 0; h < H; ++h) {
#pragma unroll
                for (int r = 0; r < R; ++r) {  // the rows above and below, clamped into the tile
                    const Vec a = *reinterpret_cast<const Vec*>(cur + h * CELLS + max(row0 - R + r, 0) * TW +
                                                                sx),
                              b = *reinterpret_cast<const Vec*>(cur + h * CELLS +
                                                                min(row0 + CY + r, TH - 1) * TW + sx);
#pragma unroll
                    for (int v = 0; v < V; ++v) w[h][r][R + v] = a.v[v], w[h][R + CY + r][R + v] = b.v[v];
                }
#pragma unroll
                for (int j = 0; j < CY; ++j)
#pragma unroll
                    for (int v = 0; v < V; ++v) w[h][R + j][R + v] = ev[h][j].v[v];
#pragma unroll
                for (int r = 0; r < Q; ++r) {
                    if (Model::star && (r < R || r >= R + CY)) continue;  // a star reads no corner
#pragma unroll
                    for (int d = 1; d <= R; ++d) {
                        w[h][r][R - d] = shfl_up(w[h][r][R + V - d], 1, BX);
                        w[h][r][R + V - 1 + d] = shfl_down(w[h][r][R + d - 1], 1, BX);
                    }
                }
            }
#pragma unroll
            for (int j = 0; j < CY; ++j)
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    auto at = [&](int h, int di, int dj) {
                        if constexpr (Edge ==
                                      TileEdge::mirror) {  // a radius-1 star: the other side's neighbour
                            if (di != 0)
                                return (di < 0 ? x + v == 0 : x + v == g.nx - 1) ? w[h][R + j][R + v - di]
                                                                                 : w[h][R + j][R + v + di];
                            if (dj != 0)
                                return (dj < 0 ? y + j == 0 : y + j == g.ny - 1) ? w[h][R + j - dj][R + v]
                                                                                 : w[h][R + j + dj][R + v];
                        }
                        return w[h][R + j + dj][R + v + di];
                    };
                    T u[H];
                    m.next_values(neighbourhood<Model>(at), pt[j][v], u);
#pragma unroll
                    for (int h = 0; h < H; ++h) ev[h][j].v[v] = u[h];
                }
            if constexpr (Edge == TileEdge::fixed) {
#pragma unroll
                for (int j = 0; j < CY; ++j)
#pragma unroll
                    for (int v = 0; v < V; ++v)
                        if (unsigned(x + v) >= unsigned(g.nx) || unsigned(y + j) >= unsigned(g.ny))
#pragma unroll
                            for (int h = 0; h < H; ++h) ev[h][j].v[v] = A(T(ghost_value<Model>()));
            }
            store_shared_rows<R, CY, TW, CELLS>(nxt, ev, row0, sx);
        }
        __syncthreads();
        auto* t = cur;
        cur = nxt;
        nxt = t;
    }
}

// `rd` supplies the old state, `wr` receives the new one; they must not alias (temporal2d's rule).
// Tiles numbered row-major over tiles_x tile columns, one per block. Dynamic shared memory: two
// TW x TH tiles per neighbourhood field.
template <class Model, int BX, int BY, int CY, int MinBlocks>
__global__ void __launch_bounds__(BX* BY, MinBlocks)
    cells_temporal2d(const Model m, const typename Model::Fields rd, const typename Model::Fields wr,
                     const DevGrid g, const int depth, const int tiles_x) {
    using T = typename Model::value_type;
    using Tile = TemporalTile<T, BX, BY, CY>;
    constexpr int V = Tile::V, TW = Tile::TW, TH = Tile::TH, CELLS = Tile::CELLS, H = hoods<Model>(),
                  R = Model::radius;
    static_assert(R <= V && Model::dims == 2);
    static_assert(!Model::mirror || (R == 1 && Model::star), "the mirror boundary serves radius-1 stars");
    using A = compute_t<T>;
    using Vec = Lanes<T, V>;
    using Wide = Lanes<A, V>;  // the runs in registers and shared memory (fp32 at 16 bits)
    constexpr bool periodic = periodic_boundary<Model>();
    A* const tiles_a = reinterpret_cast<A*>(dynamic_smem());  // H tiles each
    A* const tiles_b = tiles_a + H * CELLS;
    const int reach = depth * R, mx = Tile::margin_x(reach);
    const int sx = threadIdx.x * V, row0 = Tile::template row0<kPairRows2d<BX>>(threadIdx.y);
    const int x0 = int(blockIdx.x % unsigned(tiles_x)) * Tile::out_w(reach) - mx,
              y0 = g.lo + int(blockIdx.x / unsigned(tiles_x)) * Tile::out_h(reach) - reach;
    const int x = x0 + sx, y = y0 + row0;  // the first own cell
    const TileEdge edge = periodic || (x0 >= 0 && y0 >= 0 && x0 + TW <= g.nx && y0 + TH <= g.ny)
                              ? TileEdge::none
                          : Model::mirror ? TileEdge::mirror
                                          : TileEdge::fixed;
    // The largest distance of an own row to the tile's edge, over the warp (temporal2d's skip).
    int dist = 0;
#pragma unroll
    for (int j = 0; j < CY; ++j) dist = max(dist, min(row0 + j, TH - 1 - row0 - j));
    const unsigned warp_dist = __reduce_max_sync(~0u, unsigned(dist));

    // The tile from memory: cells outside the domain a period away, or clamped (a V-aligned run
    // reaches past the last column into the ghost and the row padding, which exist) and then, for
    // a fixed boundary, the ghost value.
    Wide ev[H][CY];
    typename Model::Point pt[CY][V];
    auto wrap = [](int i, int n) { return (i % n + n) % n; };
#pragma unroll
    for (int j = 0; j < CY; ++j) {
        const int yj = periodic ? wrap(y + j, g.ny) : min(max(y + j, 0), g.ny - 1);
        if (!periodic || (x >= 0 && x + V <= g.nx)) {
            const std::int64_t c = g.at(periodic ? x : min(max(x, 0), (g.nx - 1) / V * V), yj);
#pragma unroll
            for (int h = 0; h < H; ++h) ev[h][j] = load_widened<Vec>(hood_in<Model>(rd, h) + c);
        } else {
#pragma unroll
            for (int v = 0; v < V; ++v)
#pragma unroll
                for (int h = 0; h < H; ++h)
                    ev[h][j].v[v] = hood_in<Model>(rd, h)[g.at(wrap(x + v, g.nx), yj)];
        }
#pragma unroll
        for (int v = 0; v < V; ++v) {
            const int xv = periodic ? wrap(x + v, g.nx) : min(max(x + v, 0), g.nx - 1);
            pt[j][v] = m.load_point(rd, g.at(xv, yj));
            if (edge == TileEdge::fixed &&
                (unsigned(x + v) >= unsigned(g.nx) || unsigned(y + j) >= unsigned(g.ny)))
#pragma unroll
                for (int h = 0; h < H; ++h) ev[h][j].v[v] = A(T(ghost_value<Model>()));
        }
        if (j < R || j >= CY - R)
#pragma unroll
            for (int h = 0; h < H; ++h)
                *reinterpret_cast<Wide*>(tiles_a + h * CELLS + (row0 + j) * TW + sx) = ev[h][j];
    }
    __syncthreads();
    constexpr TileEdge kEdge = periodic ? TileEdge::none : Model::mirror ? TileEdge::mirror : TileEdge::fixed;
    if (edge == TileEdge::none)
        cells_temporal2d_steps<Model, BX, BY, CY, TileEdge::none>(m, tiles_a, tiles_b, ev, pt, g, x0, y0,
                                                                  warp_dist, depth);
    else if constexpr (kEdge != TileEdge::none)
        cells_temporal2d_steps<Model, BX, BY, CY, kEdge>(m, tiles_a, tiles_b, ev, pt, g, x0, y0, warp_dist,
                                                         depth);

    // The exact cells out: the output region's, inside the domain and the launch's span of rows.
    if (sx < mx || sx >= TW - mx) return;
#pragma unroll
    for (int j = 0; j < CY; ++j) {
        const int sy = row0 + j;
        if (sy < reach || sy >= TH - reach || y + j >= g.end(g.ny)) continue;
        const std::int64_t c = g.at(x, y + j);
#pragma unroll
        for (int v = 0; v < V; ++v) {
            if (x + v >= g.nx) continue;
            T u[H];
#pragma unroll
            for (int h = 0; h < H; ++h) u[h] = ev[h][j].v[v];
            m.write_values(u, pt[j][v], wr, c + v);
        }
    }
}

}  // namespace strata::cuda
