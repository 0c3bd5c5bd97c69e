#pragma once
// The 2D strategies, each a kernel template over the model (see AlievPanfilov for the model
// API) and its launch shape. One thread stores one cell per output; the model does the physics.
#include "grid.cuh"

namespace strata::cuda {

// naive: one thread per cell, every neighbour read from global memory (the caches catch the
// reuse). The baseline every other strategy is measured against.
template <class Model, int BX, int BY>
__global__ void __launch_bounds__(BX* BY) naive2d(const Model m, const typename Model::Fields f, const DevGrid g) {
    const int i = g.xlo + blockIdx.x * BX + threadIdx.x, j = g.lo + blockIdx.y * BY + threadIdx.y;
    if (i >= g.nx || j >= g.end(g.ny)) return;
    constexpr bool mirror = Model::mirror, periodic = periodic_boundary<Model>();
    auto at = [&](int h, int di, int dj) {
        return hood_in<Model>(f, h)[g.at(load_index<mirror, periodic>(i + di, g.nx),
                                         load_index<mirror, periodic>(j + dj, g.ny))];
    };
    const std::int64_t c = g.at(i, j);
    m.store(neighbourhood<Model>(at), m.load_point(f, c), f, c);
}

// smem: the block's BX x BY tile and its halo (the model's radius R deep) are loaded once,
// coalesced, into shared memory; every neighbour then comes from there. A warp reads one tile row
// of consecutive words, so rows need no padding against bank conflicts. One barrier: tile loaded
// -> compute. (A tile per neighbourhood field, for models of several.)
template <class Model, int BX, int BY>
__global__ void __launch_bounds__(BX* BY) smem2d(const Model m, const typename Model::Fields f, const DevGrid g) {
    using T = typename Model::value_type;
    constexpr int R = Model::radius, TX = BX + 2 * R, TY = BY + 2 * R, H = hoods<Model>();
    constexpr bool mirror = Model::mirror, periodic = periodic_boundary<Model>();
    __shared__ T tile[H][TY][TX];
    const int x0 = g.xlo + blockIdx.x * BX - R, y0 = g.lo + blockIdx.y * BY - R;
    for (int t = threadIdx.y * BX + threadIdx.x; t < TX * TY; t += BX * BY) {
        const int ty = t / TX, tx = t - ty * TX;
        const std::int64_t from =
            g.at(load_index<mirror, periodic>(x0 + tx, g.nx), load_index<mirror, periodic>(y0 + ty, g.ny));
#pragma unroll
        for (int h = 0; h < H; ++h) tile[h][ty][tx] = hood_in<Model>(f, h)[from];
    }
    const int i = x0 + R + threadIdx.x, j = y0 + R + threadIdx.y;
    const bool active = i < g.nx && j < g.end(g.ny);
    const std::int64_t c = g.at(i, j);
    typename Model::Point p{};
    if (active) p = m.load_point(f, c);
    __syncthreads();
    if (!active) return;
    auto at = [&](int h, int di, int dj) { return tile[h][threadIdx.y + R + dj][threadIdx.x + R + di]; };
    m.store(neighbourhood<Model>(at), p, f, c);
}

// rows ("sliding rows", `planes` with M = 1; `multi` with M = 2 or 4): a 1D block of BX threads
// marches down a strip of rows. Each thread keeps its own column's values for rows y-1 .. y+M
// in registers (the rows above and below come from there); the M current rows, with a halo
// cell at each end, sit in shared memory for the x-neighbours. The next M rows and their
// pointwise state are loaded one pass ahead, so they are in flight while this pass computes.
// Per pass, two barriers: nobody reads the rows any more -> the new rows are written. (Registers
// and rows per neighbourhood field, for models of several.)
template <class Model, int BX, int M>
__global__ void __launch_bounds__(BX) rows2d(const Model m, const typename Model::Fields f, const DevGrid g,
                                             const int strip) {
    using T = typename Model::value_type;
    using Point = typename Model::Point;
    constexpr bool mirror = Model::mirror, periodic = periodic_boundary<Model>();
    constexpr int H = hoods<Model>();
    __shared__ T row[H][M][BX + 2];
    const int tx = threadIdx.x, xb = g.xlo + blockIdx.x * BX, x = xb + tx;
    const int y0 = g.lo + blockIdx.y * strip, y1 = min(y0 + strip, g.end(g.ny));
    const bool active_col = x < g.nx;
    // Threads past the right edge load clamped columns: the first of them holds exactly the
    // right neighbour (or its mirror) of the last active column.
    const int xc = load_index<mirror, periodic>(x, g.nx);
    const bool left_halo = tx == 0, right_halo = tx == BX - 1;
    const int xh = left_halo ? load_index<mirror, periodic>(xb - 1, g.nx) : load_index<mirror, periodic>(xb + BX, g.nx);

    // Loaded a pass ahead: rows y+1 .. y+M, the halo cells of rows y .. y+M-1 (two threads;
    // the barrier would make the whole block wait for them), and the rows' pointwise state.
    T next[H][M], hnext[H][M];
    Point pnext[M];
    auto load_pass = [&](int y) {
#pragma unroll
        for (int r = 0; r < M; ++r) {
#pragma unroll
            for (int h = 0; h < H; ++h) {
                next[h][r] = hood_in<Model>(f, h)[g.at(xc, load_index<mirror, periodic>(y + r + 1, g.ny))];
                if (left_halo || right_halo)
                    hnext[h][r] = hood_in<Model>(f, h)[g.at(xh, load_index<mirror, periodic>(y + r, g.ny))];
            }
            if (active_col && y + r < y1) pnext[r] = m.load_point(f, g.at(x, y + r));
        }
    };

    T v[H][M + 2];  // v[h][r] is row y - 1 + r of this thread's column of field h
#pragma unroll
    for (int h = 0; h < H; ++h) {
        v[h][0] = hood_in<Model>(f, h)[g.at(xc, load_index<mirror, periodic>(y0 - 1, g.ny))];
        v[h][1] = hood_in<Model>(f, h)[g.at(xc, y0)];
    }
    load_pass(y0);
    for (int y = y0; y < y1; y += M) {
        T halo[H][M];
        Point p[M];
#pragma unroll
        for (int r = 0; r < M; ++r) {
#pragma unroll
            for (int h = 0; h < H; ++h) {
                v[h][r + 2] = next[h][r];
                halo[h][r] = hnext[h][r];
            }
            p[r] = pnext[r];
        }
        if (y + M < y1) load_pass(y + M);
        __syncthreads();
#pragma unroll
        for (int h = 0; h < H; ++h)
#pragma unroll
            for (int r = 0; r < M; ++r) {
                row[h][r][tx + 1] = v[h][r + 1];
                if (left_halo) row[h][r][0] = halo[h][r];
                if (right_halo) row[h][r][BX + 1] = halo[h][r];
            }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < M; ++r) {
            if (active_col && y + r < y1) {
                auto at = [&](int h, int di, int dj) {
                    if (dj < 0) return v[h][r];
                    if (dj > 0) return v[h][r + 2];
                    if (di == 0) return v[h][r + 1];
                    return row[h][r][tx + 1 + di];
                };
                m.store(neighbourhood<Model>(at), p[r], f, g.at(x, y + r));
            }
        }
#pragma unroll
        for (int h = 0; h < H; ++h) {
            v[h][0] = v[h][M];
            v[h][1] = v[h][M + 1];
        }
    }
}

}  // namespace strata::cuda
