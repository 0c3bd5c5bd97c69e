#pragma once
// The strategy table: every strategy that applies to a model, with its launch shape. Shapes are
// template arguments of one kernel per strategy family, never copies of a kernel.
// Under NVRTC only the kernels' headers are left.
#include "strategies2d.cuh"
#include "strategies3d.cuh"
#include "temporal2d.cuh"
#include "temporal3d.cuh"
#ifndef __CUDACC_RTC__
#include <algorithm>
#include <string>
#include <vector>

#include "check.hpp"
#include "launch.hpp"
#include "strategy_names.hpp"

namespace strata::cuda {

// Run-time knobs of a launch (the autotuner's to set): rows per block for the 2D streaming
// strategies, planes per block for the 3D ones; 0 picks the default below.
struct LaunchKnobs {
    int chunk = 0;
};
// Measured on an H100 (strata bench --chunk): short strips keep the blocks in flight on
// neighbouring rows, which 2D apf prefers (multi4 fp32: 98% of copy bandwidth at 8 rows, 95% at
// 16, 88% at 64); the 3D strategies are within 2% of each other from 32 to 256 planes.
constexpr int kDefaultRows2d = 8, kDefaultPlanes3d = 64;
// async3d's planes per block. Measured with --chunk at 512^3 (H100, 5 repeats, the box stencils
// for which async is the default): 19pt fp32/fp64 86.6% / 86.7% of copy at 16 planes, 84.5% /
// 85.8% at 32, 83.4% / 84.2% at 64, 83.4% / 82.6% at 128; 27pt 86.9% / 86.6% at 16, 82.5% / 84.3%
// at 64.
constexpr int kDefaultPlanesAsync3d = 16;
// Steps per pass of the temporal strategies when --depth is not given. Measured on an H100:
// - apf 8192^2: depth 4 (docs/performance.md);
// - heat 7pt 512^3 (5 repeats, 64 planes per block): depth 4 beats 3 and 5 in fp32 and fp64
//   (fp32 725 / 718 / 586 GCells/s);
// - heat 19pt and 27pt, whose queues hold three sums per cell (3 repeats, 128 planes): depth 2.
//   19pt fp32 501 GCells/s at depth 2 against 272 / 352 / 261 at 1 / 3 / 4 (async 321); 27pt
//   fp32 279 against 273 / 152 / 64 (async 322): its queues spill about 120 bytes per thread
//   at depth 2 and 340 at depth 3.
constexpr int kDefaultDepth2d = 4, kDefaultDepth3dStar = 4, kDefaultDepth3dBox = 2;
// A star whose partial update holds two words (partial_words), in fp64 (1024 threads of 64
// registers): depth 2, the deepest without spills (depth 3: 36 bytes per thread, 4: 172).
constexpr int kDefaultDepth3dPairs64 = 2;
// 2D models whose update is a few flops (heat2d's 7, against apf's 28) pay less for the cells a
// deeper pass recomputes. heat2d 8192^2 on an H100, GCells/s at depth 4 / 6 / 7 / 8 / 10 / 16:
// fp32 1387 / 1606 / 1717 / 1792 / 1490 / 1002, fp64 673 / 817 / 783 / 795 / 729 / 467.
constexpr int kLightFlops = 8, kDefaultDepth2dLight32 = 8, kDefaultDepth2dLight64 = 6;
// At 16 bits (H100, heat2d 8192^2): depth 4 1452 / 1384 GCells/s in fp16 / bf16, depth 8 1347 / 1261.
constexpr int kDefaultDepth2dLight16 = 4;
// A cells-only 2D model (cells_temporal2d) reads its neighbours from registers it fills per step,
// whatever their number: light up to 16 flops. At 8192^2 on an H100 (docs/runs/104): the 9-point
// box (15 flops) fp32 at depth 2 / 4 / 6 / 8: 574 / 940 / 972 / 1015 GCells/s, fp64 368 / 577 / 597
// / 577; a two-field file of 20 flops, three of them exact divisions, fp32 at 2 / 4 / 6: 149 / 218 /
// 211, fp64 93 / 116 / 112. A step of radius R reaches R cells: the depth is divided by R.
constexpr int kCellsLightFlops = 16;

template <class Model>
using LaunchFn = void (*)(const Model&, const typename Model::Fields&, const DevGrid&, const LaunchKnobs&,
                          cudaStream_t);

// A temporal strategy advances `depth` steps per launch, reading the state from `rd` and writing
// the new state to `wr` (which must not alias `rd`, the pointwise state included).
template <class Model>
using FusedFn = void (*)(const Model&, const typename Model::Fields& rd, const typename Model::Fields& wr,
                         const DevGrid&, int depth, const LaunchKnobs&, cudaStream_t);
// Bytes a fused pass moves through device memory per cell update, from its tile geometry
// (each tile's extended region read once, its output region written once).
using FusedBytesFn = double (*)(const DevGrid&, int depth, const LaunchKnobs&);

// The cells one block of a launch updates along x and (3D) y, at a depth (steps per pass): the
// tile that the bounds of a span along those axes are multiples of (DevGrid::xlo).
struct TileCells {
    int x = 1, y = 1;
};
using TileFn = TileCells (*)(int depth);
template <int X, int Y = 1>
TileCells fixed_tile(int) {
    return {X, Y};
}

// Either `launch` (one step per launch) or `fused` (several) is set. `chunked` says whether the
// kernel reads LaunchKnobs::chunk (strips of rows or chunks of planes per block).
template <class Model>
struct Strategy {
    std::string name;
    LaunchFn<Model> launch = nullptr;
    bool chunked = false;
    TileFn tile = nullptr;
    FusedFn<Model> fused = nullptr;
    FusedBytesFn fused_bytes = nullptr;
    int max_depth = 1;
    int default_depth = 1;
    // Where the strategy cannot take the model's precision: why, and what to use (find_strategy
    // refuses it with this when it is asked for; `launch` is null then).
    std::string refuses = {};
};

// Blocks of w cells that cover a launch's span [lo, hi) of an axis of n cells, laid from lo, which
// must lie whole tiles from the axis's tile origin `org` (DevGrid::x0): a planning error otherwise,
// not a user's. (Its end need not: a rank's own cells end where they end, and a last partial tile
// of a span stores into the halo beside it at most, cells the exchange overwrites.)
inline unsigned span_blocks(int lo, int hi, int n, int org, int w, char axis) {
    if ((lo - org) % w != 0 || lo < org || lo >= std::min(hi, n))
        throw Error(std::string("internal: a launch's span [") + std::to_string(lo) + ", " +
                    std::to_string(hi) + ") along " + axis + " does not start whole tiles of " +
                    std::to_string(w) + " cells from " + std::to_string(org) + " (of " + std::to_string(n) +
                    ")");
    return blocks_for(std::min(hi, n) - lo, w);
}
inline unsigned x_blocks(const DevGrid& g, int w) { return span_blocks(g.xlo, g.xhi, g.nx, g.x0, w, 'x'); }
inline unsigned y_blocks(const DevGrid& g, int w) { return span_blocks(g.ylo, g.yhi, g.ny, g.y0, w, 'y'); }
// The launch of a kernel that takes no span of x or y (its Strategy::tile is null).
inline void require_whole_xy(const DevGrid& g) {
    if (!g.whole_xy())
        throw Error("internal: a span of x or y given to a kernel that updates whole rows and planes");
}

// Tile rows per block group (strata/core/block_order.hpp): as many rows of nbx tiles as the
// device holds blocks at once, at least one.
template <class Sig>
int group_rows(KernelRef<Sig> k, unsigned nbx, int threads, std::size_t smem) {
    return std::max(1, resident_blocks(k, threads, smem) / int(nbx));
}

template <class Model, int BX, int BY>
void launch_naive2d(const Model& m, const typename Model::Fields& f, const DevGrid& g, const LaunchKnobs&,
                    cudaStream_t s) {
    launch(STRATA_KERNEL(naive2d, Model, BX, BY), dim3(x_blocks(g, BX), blocks_for(g.span(g.ny), BY)),
           dim3(BX, BY), 0, s, m, f, g);
}
template <class Model, int BX, int BY>
void launch_smem2d(const Model& m, const typename Model::Fields& f, const DevGrid& g, const LaunchKnobs&,
                   cudaStream_t s) {
    launch(STRATA_KERNEL(smem2d, Model, BX, BY), dim3(x_blocks(g, BX), blocks_for(g.span(g.ny), BY)),
           dim3(BX, BY), 0, s, m, f, g);
}
template <class Model, int BX, int M>
void launch_rows2d(const Model& m, const typename Model::Fields& f, const DevGrid& g, const LaunchKnobs& k,
                   cudaStream_t s) {
    const int rows = k.chunk > 0 ? k.chunk : kDefaultRows2d;
    launch(STRATA_KERNEL(rows2d, Model, BX, M), dim3(x_blocks(g, BX), blocks_for(g.span(g.ny), rows)), BX, 0,
           s, m, f, g, rows);
}
template <class Model, int BX, int BY, int BZ>
void launch_naive3d(const Model& m, const typename Model::Fields& f, const DevGrid& g, const LaunchKnobs&,
                    cudaStream_t s) {
    launch(STRATA_KERNEL(naive3d, Model, BX, BY, BZ),
           dim3(x_blocks(g, BX), y_blocks(g, BY), blocks_for(g.span(g.nz), BZ)), dim3(BX, BY, BZ), 0, s, m, f,
           g);
}
template <class Model, int BX, int BY, int BZ>
void launch_smem3d(const Model& m, const typename Model::Fields& f, const DevGrid& g, const LaunchKnobs&,
                   cudaStream_t s) {
    launch(STRATA_KERNEL(smem3d, Model, BX, BY, BZ),
           dim3(x_blocks(g, BX), y_blocks(g, BY), blocks_for(g.span(g.nz), BZ)), dim3(BX, BY, BZ), 0, s, m, f,
           g);
}
template <class Model, int BX, int BY, int M, int V, int D, int MinBlocks = 2>
void launch_planes3d(const Model& m, const typename Model::Fields& f, const DevGrid& g, const LaunchKnobs& k,
                     cudaStream_t s) {
    const int planes = k.chunk > 0 ? k.chunk : kDefaultPlanes3d;
    const auto kernel = STRATA_KERNEL(planes3d, Model, BX, BY, M, V, D, MinBlocks);
    const unsigned nbx = x_blocks(g, BX * V), nby = y_blocks(g, BY * M),
                   nbz = blocks_for(g.span(g.nz), planes);
    const int rows = group_rows(kernel, nbx, BX * BY, 0);
    launch(kernel, nbx * nby * nbz, dim3(BX, BY), 0, s, m, f, g, planes, rows);
}

template <class Model, int BX, int BY, int ZC, int V>
void launch_cached3d(const Model& m, const typename Model::Fields& f, const DevGrid& g, const LaunchKnobs&,
                     cudaStream_t s) {
    const dim3 grid(x_blocks(g, BX * V), y_blocks(g, BY), blocks_for(g.span(g.nz), ZC));
    if (g.lo == 0 && g.end(g.nz) == g.nz && g.whole_xy())
        launch(STRATA_KERNEL(cached3d, Model, BX, BY, ZC, V, true), grid, dim3(BX, BY), 0, s, m, f, g);
    else
        launch(STRATA_KERNEL(cached3d, Model, BX, BY, ZC, V, false), grid, dim3(BX, BY), 0, s, m, f, g);
}

template <class Model, int BX, int BY, int M, int V, int S>
void launch_async3d(const Model& m, const typename Model::Fields& f, const DevGrid& g, const LaunchKnobs& k,
                    cudaStream_t s) {
    using Tile = PlaneTile<typename Model::value_type, Model::mirror, BX, BY, M, V>;
    constexpr std::size_t smem = std::size_t(S) * Tile::CELLS * sizeof(typename Model::value_type);
    static_assert(smem <= 48 * 1024, "more stages need cudaFuncSetAttribute for the dynamic shared memory");
    const int planes = k.chunk > 0 ? k.chunk : kDefaultPlanesAsync3d;
    const auto kernel = STRATA_KERNEL(async3d, Model, BX, BY, M, V, S);
    const unsigned nbx = x_blocks(g, BX * V), nby = y_blocks(g, BY * M),
                   nbz = blocks_for(g.span(g.nz), planes);
    const int rows = group_rows(kernel, nbx, BX * BY, smem);
    launch(kernel, nbx * nby * nbz, dim3(BX, BY), smem, s, m, f, g, planes, rows);
}

template <class Model, int BX, int BY, int M, int V, int S, bool Ws>
void launch_tma3d(const Model& m, const typename Model::Fields& f, const DevGrid& g, const LaunchKnobs& k,
                  cudaStream_t s) {
    using T = typename Model::value_type;
    using Tile = PlaneTile<T, false, BX, BY, M, V>;
    require_tma();
    constexpr std::size_t smem = std::size_t(S) * tma3d_stage_cells<Model, BX, BY, M, V>() * sizeof(T) +
                                 sizeof(TmaRing<S>);
    static_assert(smem <= 48 * 1024, "more stages need cudaFuncSetAttribute for the dynamic shared memory");
    const CUtensorMap& in = interior_tensor_map(f.in, g.nx, g.ny, g.nz, g.pitch, g.plane, int(sizeof(T)), Tile::TXP, Tile::TY);
    const int planes = k.chunk > 0 ? k.chunk : kDefaultPlanesAsync3d;
    const auto kernel = STRATA_KERNEL(tma3d, Model, BX, BY, M, V, S, Ws);
    constexpr int threads_y = BY + int(Ws);  // the DMA warp's row
    const unsigned nbx = x_blocks(g, BX * V), nby = y_blocks(g, BY * M),
                   nbz = blocks_for(g.span(g.nz), planes);
    const int rows = group_rows(kernel, nbx, BX * threads_y, smem);
    launch(kernel, nbx * nby * nbz, dim3(BX, threads_y), smem, s, m, f, g, planes, rows, in);
}

// temporal in 2D: temporal2d for the built-in shapes, cells_temporal2d for a cells-only model, on
// the same tiles; a step reaches the model's radius (the built-ins': 1).
template <class Model, int BX, int BY, int CY, int MinBlocks>
void launch_temporal2d(const Model& m, const typename Model::Fields& rd, const typename Model::Fields& wr,
                       const DevGrid& g, int depth, const LaunchKnobs&, cudaStream_t s) {
    using Tile = TemporalTile<typename Model::value_type, BX, BY, CY>;
    const int reach = depth * Model::radius;
    require_whole_xy(g);
    const int tiles_x = int(blocks_for(g.nx, Tile::out_w(reach)));
    const int tiles = tiles_x * int(blocks_for(g.span(g.ny), Tile::out_h(reach)));
    constexpr std::size_t smem = temporal2d_smem_bytes<Model, BX, BY, CY>();
    auto go = [&](auto kernel) {
        allow_dynamic_smem(kernel, smem);
        launch(kernel, tiles, dim3(BX, BY), smem, s, m, rd, wr, g, depth, tiles_x);
    };
    if constexpr (cells_only<Model>())
        go(STRATA_KERNEL(cells_temporal2d, Model, BX, BY, CY, MinBlocks));
    else
        go(STRATA_KERNEL(temporal2d, Model, BX, BY, CY, MinBlocks));
}
// Its bytes per cell update: each tile's extended region of the neighbourhood fields and the
// Point (pointwise fields and coefficients) read, the output region's new values written (the
// model's min_bytes_per_cell counts the words read and written once per cell).
template <class Model, int BX, int BY, int CY>
double temporal2d_bytes(const DevGrid& g, int depth, const LaunchKnobs&) {
    using T = typename Model::value_type;
    using Tile = TemporalTile<T, BX, BY, CY>;
    const int reach = depth * Model::radius;
    constexpr double read = hoods<Model>() + (kHasPoint<Model> ? sizeof(typename Model::Point) / sizeof(T) : 0),
                     written = Model::min_bytes_per_cell / double(sizeof(T)) - read;
    const double bx = blocks_for(g.nx, Tile::out_w(reach)), by = blocks_for(g.ny, Tile::out_h(reach));
    const double cells = double(g.nx) * g.ny;
    return (bx * by * Tile::CELLS * read + cells * written) * sizeof(T) / (cells * depth);
}

template <class Model, int BX, int BY, int CY, int MinBlocks>
Strategy<Model> temporal_strategy(std::string_view name) {
    Strategy<Model> t{std::string(name)};
    t.fused = launch_temporal2d<Model, BX, BY, CY, MinBlocks>;
    t.fused_bytes = temporal2d_bytes<Model, BX, BY, CY>;
    // No span of x (Strategy::tile): the tile's place among a span's columns took two divisions a
    // block, and on an H100 heat2d at depth 8 ran 1626 GCells/s against 1737, apf at depth 4 470
    // against 481 (docs/runs/160). A rank cut across x exchanges before each pass with it.
    constexpr int R = Model::radius;
    t.max_depth = std::max(1, TemporalTile<typename Model::value_type, BX, BY, CY>::max_depth / R);
    constexpr int light = cells_only<Model>() ? kCellsLightFlops : kLightFlops;
    t.default_depth = std::max(1, (Model::flops_per_cell > light             ? kDefaultDepth2d
                                   : sizeof(typename Model::value_type) == 2 ? kDefaultDepth2dLight16
                                   : sizeof(typename Model::value_type) == 4 ? kDefaultDepth2dLight32
                                                                             : kDefaultDepth2dLight64) /
                                      R);
    return t;
}

// temporal3d's tiles at a depth: the blocks of one layer of z-chunks.
template <class T, int BY>
int temporal3d_tiles(const DevGrid& g, int depth) {
    using Tile = TemporalTile3d<T, BY>;
    return int(blocks_for(g.nx, Tile::out_w(depth)) * blocks_for(g.ny, Tile::out_h(depth)));
}
// temporal3d's planes per block: --chunk's, or else the chunking that the following model says
// is fastest. The device runs `resident` blocks at once, so a pass takes ceil(blocks / resident)
// rounds, and a round lasts as long as a block: proportional to the planes its levels compute,
// planes + depth + 1 on average (level l of K computes planes + 2 (K - l)). Measured on an H100
// at 512^3 (5 repeats; heat 7pt at depth 4 is 220 tiles, 132 blocks resident in fp64, 264 in
// fp32): fp64 408 GCells/s at 171 planes per block, 395 at 86, 385 at 128, 372 at 103, 369 at
// 64, 345 at 256, the model's order and within 1% of its ratios (a fixed 128 planes left the
// last of 7 rounds a third empty). fp32 runs a lone block on an SM nearly as fast as two (it is
// issue-bound), which the model does not know: it picks 86 planes (809 GCells/s), where 171
// gave 822. For a kernel that needs both blocks of an SM to hide latency the model is right:
// 27pt fp32 at depth 2 ran 279 GCells/s at 128 planes and 235 at 256, and the model picks 128.
inline int temporal3d_planes(const DevGrid& g, int tiles, int depth, int resident, const LaunchKnobs& k) {
    if (k.chunk > 0) return k.chunk;
    const int nz = g.span(g.nz);  // the planes this launch updates
    int best = nz;
    std::int64_t best_time = -1;
    for (int chunks = 1; chunks <= std::max(1, nz / 8); ++chunks) {  // at least 8 planes per block
        const int planes = int(blocks_for(nz, chunks));
        const std::int64_t blocks = std::int64_t(tiles) * blocks_for(nz, planes);
        const std::int64_t time = (blocks + resident - 1) / resident * (planes + depth + 1);
        if (best_time < 0 || time < best_time) best_time = time, best = planes;  // ties: fewer chunks
    }
    return best;
}

// Calls f(std::integral_constant<int, K>{}) for the K of Ks that equals `depth`: temporal3d's
// depth is a template argument (it sizes the register queues), one kernel per depth.
template <int... Ks, class F>
void with_depth(int depth, F&& f) {
    const bool found = ((depth == Ks ? (f(std::integral_constant<int, Ks>{}), true) : false) || ...);
    if (!found) throw Error("temporal3d has no kernel of depth " + std::to_string(depth));
}

// The most shared memory a block may have (sm_90).
inline constexpr std::size_t kMaxBlockSmem = 227 * 1024;

// temporal3d at depth K: its kernel, shared memory and planes per block.
template <class Model, int BY, int S, int MinBlocks, int K, bool Whole>
struct Temporal3dLaunch {
    using T = typename Model::value_type;
    using Tile = TemporalTile3d<T, BY>;
    static constexpr std::size_t smem = temporal3d_smem_bytes<T, BY, K, S>();
    static_assert(smem <= kMaxBlockSmem, "more shared memory than a block may have (sm_90)");
    static auto kernel() { return STRATA_KERNEL(temporal3d, Model, BY, K, S, MinBlocks, Whole); }
    static int planes(const DevGrid& g, const LaunchKnobs& k) {
        allow_dynamic_smem(kernel(), smem);  // before the occupancy is asked
        return temporal3d_planes(g, temporal3d_tiles<T, BY>(g, K), K,
                                 resident_blocks(kernel(), Tile::BX * BY, smem), k);
    }
};
// Calls f(Temporal3dLaunch<...>{}) for the kernel that runs `depth` on g. In fp32, where the
// domain's width is a multiple of a thread's 4 cells, star stencils up to depth 4 take the kernel
// whose masks are one predicate per thread (Whole) instead of a bit test per cell: 64 fewer
// instructions in the depth-4 kernel, and on an H100 at 512^3 809 -> 836 GCells/s at depth 4,
// 763 -> 844 at depth 3. In fp64 (2 cells per thread) it was slower, 412 -> 397 at depth 4 (Nsight
// Compute: more stalls on shared-memory results), so fp64 keeps the bit tests. Past depth 4 and
// for box stencils there are no registers for it.
template <class Model, int BY, int S, int MinBlocks, int... Ks, class F>
void with_temporal3d(const DevGrid& g, int depth, F&& f) {
    with_depth<Ks...>(depth, [&](auto K) {
        constexpr int k = decltype(K)::value;
        if constexpr (Model::star && k <= 4 && kFp32Shapes<typename Model::value_type>) {
            if (g.nx % TemporalTile3d<typename Model::value_type, BY>::V == 0) {
                f(Temporal3dLaunch<Model, BY, S, MinBlocks, k, true>{});
                return;
            }
        }
        f(Temporal3dLaunch<Model, BY, S, MinBlocks, k, false>{});
    });
}

template <class Model, int BY, int S, int MinBlocks, int... Ks>
void launch_temporal3d(const Model& m, const typename Model::Fields& rd, const typename Model::Fields& wr,
                       const DevGrid& g, int depth, const LaunchKnobs& k, cudaStream_t s) {
    with_temporal3d<Model, BY, S, MinBlocks, Ks...>(g, depth, [&](auto shape) {
        using L = decltype(shape);
        const int planes = L::planes(g, k);
        require_whole_xy(g);
        const dim3 blocks(blocks_for(g.nx, L::Tile::out_w(depth)), blocks_for(g.ny, L::Tile::out_h(depth)),
                          blocks_for(g.span(g.nz), planes));
        launch(L::kernel(), blocks, dim3(L::Tile::BX, BY), L::smem, s, m, rd, wr, g, planes);
    });
}
template <class Model, int BY, int S, int MinBlocks, int... Ks>
double temporal3d_bytes(const DevGrid& g, int depth, const LaunchKnobs& k) {
    using T = typename Model::value_type;
    constexpr double word = sizeof(T);
    int planes = 0;
    with_temporal3d<Model, BY, S, MinBlocks, Ks...>(g, depth,
                                                    [&](auto launch) { planes = decltype(launch)::planes(g, k); });
    const int tiles = temporal3d_tiles<T, BY>(g, depth);
    const double cells = double(g.nx) * g.ny * g.nz, chunks = blocks_for(g.nz, planes);
    const double read = double(tiles) * TemporalTile3d<T, BY>::CELLS * (g.nz + chunks * 2 * depth) * word;
    return (read + cells * word) / (cells * depth);
}
template <class Model, int BY, int S, int MinBlocks, int... Ks>
Strategy<Model> temporal3d_strategy(std::string_view name) {
    Strategy<Model> t{std::string(name)};
    t.chunked = true;
    t.fused = launch_temporal3d<Model, BY, S, MinBlocks, Ks...>;
    t.fused_bytes = temporal3d_bytes<Model, BY, S, MinBlocks, Ks...>;
    // No span of x or y (Strategy::tile): a block holds half an SM's registers for a chunk of planes
    // (tens of microseconds), and the faces across x or y go through pack and unpack kernels that
    // wait for blocks to leave (slabs need none). On 2 H200s, heat3d 512^3 a GPU at depth 4,
    // ms/step before each pass -> overlapped: cut along x 0.174 -> 0.190, along y 0.168 -> 0.188
    // (docs/runs/156). Its passes across x or y exchange before they run.
    t.max_depth = std::max({Ks...});
    t.default_depth = !Model::star ? kDefaultDepth3dBox
                      : partial_words<Model>() > 1 && sizeof(typename Model::value_type) == 8
                          ? kDefaultDepth3dPairs64
                          : kDefaultDepth3dStar;
    return t;
}

// temporal for a cells-only 3D model of radius 1 or 2: cells_temporal3d at depth K, BY rows of 64
// cells per tile, level 0 A planes ahead, planes per block as temporal3d's. Its tiles and chunks
// reach K times the radius. Depths 1 to 4 at radius 1, 1 to 3 at radius 2 (whose 16-row tiles keep
// 4 exact rows at depth 3), each where its rings fit a block's shared memory (two radius-2 boxes in
// fp64 stop at depth 2).
template <class Model, int BY, int K, int A = 2>
constexpr bool cells_temporal3d_fits() {
    using Tile = TemporalTile3d<typename Model::value_type, BY>;
    return Tile::out_h(cells_temporal3d_reach<Model>(K)) > 0 &&
           cells_temporal3d_smem_bytes<Model, BY, K, A>() <= kMaxBlockSmem;
}
template <class Model, int BY>
constexpr int cells_temporal3d_max_depth() {
    constexpr int most = Model::radius == 1 ? 4 : 3;
    if constexpr (cells_temporal3d_fits<Model, BY, most>()) return most;
    if constexpr (cells_temporal3d_fits<Model, BY, most - 1>()) return most - 1;
    if constexpr (cells_temporal3d_fits<Model, BY, most - 2>()) return most - 2;
    return 1;
}
template <class Model, int BY, int MinBlocks, int K, int A = 2>
struct CellsTemporal3dLaunch {
    using T = typename Model::value_type;
    using Tile = TemporalTile3d<T, BY>;
    static constexpr int reach = cells_temporal3d_reach<Model>(K);
    static_assert(cells_temporal3d_fits<Model, BY, K, A>(),
                  "no exact rows, or more shared memory than a block has");
    static constexpr std::size_t smem = cells_temporal3d_smem_bytes<Model, BY, K, A>();
    static auto kernel() { return STRATA_KERNEL(cells_temporal3d, Model, BY, K, A, MinBlocks); }
    static int tiles(const DevGrid& g) { return temporal3d_tiles<T, BY>(g, reach); }
    static int planes(const DevGrid& g, const LaunchKnobs& k) {
        allow_dynamic_smem(kernel(), smem);  // before the occupancy is asked
        return temporal3d_planes(g, tiles(g), reach, resident_blocks(kernel(), Tile::BX * BY, smem), k);
    }
};
// Calls f(std::integral_constant<int, K>{}) for K = depth, one of cells_temporal3d's depths.
template <class Model, int BY, int K = 1, class F>
void with_cells_temporal3d_depth(int depth, F&& f) {
    if constexpr (K <= cells_temporal3d_max_depth<Model, BY>()) {
        if (depth == K) return f(std::integral_constant<int, K>{});
        with_cells_temporal3d_depth<Model, BY, K + 1>(depth, f);
    } else {
        throw Error("cells_temporal3d has no kernel of depth " + std::to_string(depth));
    }
}
template <class Model, int BY, int MinBlocks>
void launch_cells_temporal3d(const Model& m, const typename Model::Fields& rd, const typename Model::Fields& wr,
                             const DevGrid& g, int depth, const LaunchKnobs& k, cudaStream_t s) {
    with_cells_temporal3d_depth<Model, BY>(depth, [&](auto K) {
        using L = CellsTemporal3dLaunch<Model, BY, MinBlocks, decltype(K)::value>;
        const int planes = L::planes(g, k);
        require_whole_xy(g);
        const dim3 blocks(blocks_for(g.nx, L::Tile::out_w(L::reach)),
                          blocks_for(g.ny, L::Tile::out_h(L::reach)), blocks_for(g.span(g.nz), planes));
        launch(L::kernel(), blocks, dim3(L::Tile::BX, BY), L::smem, s, m, rd, wr, g, planes);
    });
}
// Its bytes per cell update: each tile's planes of the neighbourhood fields and the Point read (the
// reach more at each end of a chunk of planes), the new values written (as temporal2d_bytes counts
// them).
template <class Model, int BY, int MinBlocks>
double cells_temporal3d_bytes(const DevGrid& g, int depth, const LaunchKnobs& k) {
    using T = typename Model::value_type;
    constexpr double read = hoods<Model>() + (kHasPoint<Model> ? sizeof(typename Model::Point) / sizeof(T) : 0),
                     written = Model::min_bytes_per_cell / double(sizeof(T)) - read;
    int planes = 0, tiles = 0, reach = 0;
    with_cells_temporal3d_depth<Model, BY>(depth, [&](auto K) {
        using L = CellsTemporal3dLaunch<Model, BY, MinBlocks, decltype(K)::value>;
        planes = L::planes(g, k), tiles = L::tiles(g), reach = L::reach;
    });
    const double cells = double(g.nx) * g.ny * g.nz, chunks = blocks_for(g.nz, planes);
    const double moved = double(tiles) * TemporalTile3d<T, BY>::CELLS * (g.nz + chunks * 2 * reach) * read;
    return (moved + cells * written) * sizeof(T) / (cells * depth);
}
template <class Model, int BY, int MinBlocks>
Strategy<Model> cells_temporal3d_strategy(std::string_view name) {
    Strategy<Model> t{std::string(name)};
    t.chunked = true;
    t.fused = launch_cells_temporal3d<Model, BY, MinBlocks>;
    t.fused_bytes = cells_temporal3d_bytes<Model, BY, MinBlocks>;
    // No span of x or y, as temporal3d.
    t.max_depth = cells_temporal3d_max_depth<Model, BY>();
    // The fastest measured (H100, GCells/s fp32/fp64 at depths 2 and 3): 3D Gray-Scott at 384^3
    // 237/126 and 205/103, the 27-point box at 512^3 244/115 and 228/99.
    t.default_depth = 2;
    return t;
}

// The kernels of the radius-1 strategies in strategy_names.hpp, entry by entry.
template <class Model>
std::vector<Strategy<Model>> radius1_strategies() {
    std::vector<std::pair<LaunchFn<Model>, TileFn>> kernels;  // each launch and its blocks' cells
    std::vector<Strategy<Model>> out;
    if constexpr (Model::dims == 2) {
        kernels = {{launch_naive2d<Model, 32, 8>, fixed_tile<32>},
                   {launch_smem2d<Model, 32, 8>, fixed_tile<32>},
                   {launch_rows2d<Model, 128, 1>, fixed_tile<128>},
                   {launch_rows2d<Model, 128, 2>, fixed_tile<128>},
                   {launch_rows2d<Model, 128, 4>, fixed_tile<128>}};
        for (std::size_t i = 0; i < kernels.size(); ++i)
            out.push_back({std::string(kStrategies2d[i].name), kernels[i].first, kStrategies2d[i].chunked,
                           kernels[i].second});
        // 64 x 64-cell tiles, one per block, 4 rows per thread: fp32 256 threads of 4 cells (77
        // registers, three blocks per SM), fp64 512 threads of 2 cells (64 registers, 60 bytes of
        // spills, two blocks per SM). Measured on an H100 at 8192^2, depth 4, GCells/s: fp32 with
        // 512 threads of 2 rows x 4 cells (two blocks per SM) 494, with 4 rows 533-536 (a quarter
        // of the shared-memory rows and shuffles per cell, more independent cells per thread);
        // four blocks of 64 registers spill and ran 529-542; 64 x 80, 64 x 96 and 64 x 128 tiles
        // (two or one blocks per SM) 390-517, 8 rows per thread (114 registers) 419-504;
        // persistent fp32 blocks 430-455. fp64, on two machines, alternating the builds: 2 rows x
        // 2 cells, 1024 threads, one persistent block per SM (copying its next tile in with
        // cp.async while it advanced one) 223.5-224.3; 4 rows x 2 cells 235.1-239.8 (and 219
        // against 208 at depth 8); the same persistent 190.3; 8 rows x 2 cells, 256 threads (126
        // registers) 235.7 (205 at depth 8); 4 rows, 512 threads, one block per SM (84 registers,
        // no spill) 190.7.
        // Not with more than two neighbourhood fields: ModelInfo::refused says so. Two fields (H)
        // take twice the registers and shared memory: one block per SM is what the launch bounds
        // promise then.
        constexpr int H = hoods<Model>(), B = H > 1 ? 1 : 2;
        if constexpr (!temporal_fits<Model>())
            ;
        else if constexpr (kFp32Shapes<typename Model::value_type>)
            out.push_back(temporal_strategy<Model, 16, 16, 4, B>(kStrategies2d[5].name));
        else
            out.push_back(temporal_strategy<Model, 32, 16, 4, B>(kStrategies2d[5].name));
    } else {
        // Two planes in flight (D) keep enough bytes in flight per SM. Box stencils keep three
        // plane sums per cell instead of one, so their wide variants keep one plane in flight, or
        // they would spill. (Measured on an H100, 512^3: for box vec, one row per thread with two
        // planes in flight and 3 blocks per SM was worse in fp32, 64-72% against 78%.)
        constexpr int D = Model::star ? 2 : 1;
        // At 16 bits cached takes 16-byte words (8 cells: heat 7pt fp16 at 512^3 on an H100, 609
        // GCells/s against 538 with 8-byte words); async was slower with them (279 against 441),
        // planes the same, and tma's boxes would pass the TMA's 256 elements: those keep kLanes.
        constexpr int V = kLanes<typename Model::value_type>, VC = kWideLanes<typename Model::value_type>;
        // cached: 32 x 4 threads, 4 planes per thread in fp32, 3 in fp64. Measured on an H100
        // (heat 7pt, 512^3, % of copy, fp32 / fp64) over threads 32 x 2/4/8/16 and 2 to 8 planes:
        // 32 x 4, 4 planes 98.0 / 94.9; 32 x 4, 3 planes 94.9 / 97.2; 32 x 8, 4 planes 97.4 /
        // 92.9; 32 x 2, 2 planes 93.1 / 97.1; 8 planes 89.8-92.2 / 83.4-84.3 (more registers,
        // fewer blocks).
        constexpr int ZC = kFp32Shapes<typename Model::value_type> ? 4 : 3;
        kernels = {{launch_naive3d<Model, 32, 4, 2>, fixed_tile<32, 4>},
                   {launch_smem3d<Model, 32, 4, 4>, fixed_tile<32, 4>},
                   {launch_planes3d<Model, 32, 8, 1, 1, 2>, fixed_tile<32, 8>},
                   {launch_planes3d<Model, 32, 8, 2, 1, 2>, fixed_tile<32, 16>},
                   {launch_planes3d<Model, 32, 8, 4, 1, D>, fixed_tile<32, 32>},
                   {launch_planes3d<Model, 32, 8, 2, V, D>, fixed_tile<32 * V, 16>},
                   {launch_async3d<Model, 32, 8, 2, V, 4>, fixed_tile<32 * V, 16>},
                   {launch_cached3d<Model, 32, 4, ZC, VC>, fixed_tile<32 * VC, 4>}};
        for (std::size_t i = 0; i < kernels.size(); ++i)
            out.push_back({std::string(kStrategies3d[i].name), kernels[i].first, kStrategies3d[i].chunked,
                           kernels[i].second});
        // 64 x 32-cell tiles, a 4-stage ring; fp32 two blocks of 512 threads per SM, fp64 one of
        // 1024 (64 registers either way; no spill up to depth 4). Measured on an H100 (512^3,
        // depth 4): 64 x 64 tiles of 1024 threads (fp32, one block per SM) were 8% slower, and
        // unrolling the plane loop twice (to rotate the register queue by renaming) 1-2% slower.
        // A star whose partial update holds two words (a file's `lap(u)`: the plane below's centre
        // waits for the one above, codegen.cpp) adds one register per cell and level, which two blocks
        // of 64 registers cannot hold: in fp32 it keeps one block of 128 (at depth 4, 184 bytes of
        // spills per thread otherwise).
        constexpr int TB = kFp32Shapes<typename Model::value_type> && partial_words<Model>() == 1 ? 2 : 1;
        out.push_back(temporal3d_strategy<Model, 32, 4, TB, 1, 2, 3, 4, 5, 6, 7, 8>(kStrategies3d[8].name));
#ifdef STRATA_CUDA_TMA
        // async's tile and ring (32 x 8 threads of 2 rows x V cells, 4 stages), loaded by the TMA.
        static_assert(Model::zero_ghosts && !Model::mirror, "the radius-1 3D models have zero ghosts");
        out.push_back({std::string(kStrategies3d[9].name), launch_tma3d<Model, 32, 8, 2, V, 4, true>,
                       kStrategies3d[9].chunked, fixed_tile<32 * V, 16>});
        out.push_back({std::string(kStrategies3d[10].name), launch_tma3d<Model, 32, 8, 2, V, 4, false>,
                       kStrategies3d[10].chunked, fixed_tile<32 * V, 16>});
#endif
    }
    return out;
}

// Planes per block for the stream strategy: its ring is refilled with 2R + A planes at the start
// of each chunk (5% of the reads at radius 1, 64 planes). Unmeasured against other chunks: `strata
// tune` measures them.
constexpr int kDefaultStreamPlanes = 64;

template <class Model, int BX, int BY, int A>
void launch_stream3d(const Model& m, const typename Model::Fields& f, const DevGrid& g, const LaunchKnobs& k,
                     cudaStream_t s) {
    using T = typename Model::value_type;
    constexpr int R = Model::radius;
    constexpr std::size_t smem = std::size_t(2 * R + 1 + A) * (BX + 2 * R) * (BY + 2 * R) * hoods<Model>() * sizeof(T);
    const auto kernel = STRATA_KERNEL(stream3d, Model, BX, BY, A);
    allow_dynamic_smem(kernel, smem);
    const int planes = k.chunk > 0 ? k.chunk : kDefaultStreamPlanes;
    launch(kernel, dim3(x_blocks(g, BX), y_blocks(g, BY), blocks_for(g.span(g.nz), planes)), dim3(BX, BY),
           smem, s, m, f, g, planes);
}

// cached for a cells-only model: 32 x BY threads, each with V cells of its row in ZC planes (3D:
// a block covers 32 V x BY x ZC cells) or rows (2D: 32 V x BY ZC), at least MB blocks an SM.
template <class Model, int BY, int ZC, int V, int MB>
void launch_cells_cached(const Model& m, const typename Model::Fields& f, const DevGrid& g,
                         const LaunchKnobs&, cudaStream_t s) {
    const dim3 grid = Model::dims == 3
                          ? dim3(x_blocks(g, 32 * V), y_blocks(g, BY), blocks_for(g.span(g.nz), ZC))
                          : dim3(x_blocks(g, 32 * V), blocks_for(g.span(g.ny), BY * ZC));
    launch(STRATA_KERNEL(cells_cached, Model, BY, ZC, V, MB), grid, dim3(32, BY), 0, s, m, f, g);
}

// The strategies of a cells-only model (model.hpp): naive; smem where its tiles fit the static
// shared memory (smem_fits); in 3D, stream where its ring fits (stream_fits: 32 x 16 tiles, two
// planes copied ahead); cached where its window fits the registers (cached_fits); in 2D, temporal
// (cells_temporal2d) up to radius 2 and two neighbourhood fields (temporal_fits).
// ModelInfo::refused says why one is missing.
template <class Model>
std::vector<Strategy<Model>> cell_strategies() {
    std::vector<Strategy<Model>> out;
    const std::string naive(kStrategiesCells3d[0].name), smem(kStrategiesCells3d[1].name);
    if constexpr (Model::dims == 2) {
        out.push_back({naive, launch_naive2d<Model, 32, 8>, false, fixed_tile<32>});
        if constexpr (smem_fits<Model>())
            out.push_back({smem, launch_smem2d<Model, 32, 8>, false, fixed_tile<32>});
    } else {
        out.push_back({naive, launch_naive3d<Model, 32, 4, 2>, false, fixed_tile<32, 4>});
        if constexpr (smem_fits<Model>())
            out.push_back(
                {smem, launch_smem3d<Model, 32, 4, smem_brick_z<Model>()>, false, fixed_tile<32, 4>});
        if constexpr (stream_fits<Model>())
            out.push_back({std::string(kStrategiesCells3d[2].name), launch_stream3d<Model, 32, 16, 2>, true,
                           fixed_tile<32, 16>});
    }
    // At 16 bits a thread takes two cells of its row (in half the planes or rows: as many cells), so
    // that the indices, shuffles and loads of a row's window serve two cells; at fp32 and fp64 one.
    // On an H100 (docs/runs/143, two against one, GCells/s): bf16 aniso9-2d 485 / 376, 3D
    // Gray-Scott 187 / 160, rd-coef2d 151 / 138, variable-wave 158 / 159, apf3d 145 / 153; fp32
    // 0-4% slower, fp64 7-24% slower (their windows' registers).
    // Blocks of 4 rows, and at fp32 and 16 bits launch bounds asking for 8 of them an SM (32 warps,
    // so at most 64 registers a thread): these kernels wait on their loads (3D Gray-Scott fp32:
    // 67.6% DRAM, 57.6% SM), and the warps an SM holds are what hides it. apf3d at bf16 took 86
    // registers, 2 blocks of 8 rows (16 warps) an SM, and ran at fp32's rate where fp16 (79, 3
    // blocks) was 39% faster. On an H100 (docs/runs/151-152, GCells/s, against 8 rows at 16 bits
    // and no bound): bf16 3D Gray-Scott 211 / 190, rd-coef2d 179 / 154, variable-wave 178 / 158,
    // apf3d 206 / 145, aniso9-2d 482 / 483 (fp16 alike, aniso9-2d 484 / 492); fp32 aniso9-2d 340 /
    // 321, apf3d 156 / 142, rd-coef2d 148 / 144, 3D Gray-Scott 150.5 / 153, variable-wave 121 / 123.
    // fp64 keeps no bound: 32 x 4 with 4 blocks asked lost 3-4% on every file (its doubles need
    // the registers). 16 rows lost 4-27% everywhere (run 148).
    if constexpr (cached_fits<Model>()) {
        using T = typename Model::value_type;
        constexpr int V = sizeof(T) == 2 ? 2 : 1, BY = 4, ZC = cached_planes<Model, T>();
        constexpr int MB = sizeof(T) == 8 ? 1 : 1024 / (32 * BY);
        out.push_back({std::string(kStrategiesCells3d[3].name),
                       launch_cells_cached<Model, BY, (V > 1 && ZC > 1 ? ZC / V : ZC), V, MB>, false,
                       fixed_tile<32 * V, (Model::dims == 3 ? BY : 1)>});
    }
    // temporal2d's shapes: fp32 16 x 16 threads, fp64 32 x 16, 4 rows each; two blocks per SM
    // for one neighbourhood field, one for two (twice the shared memory) or, in fp64, with
    // pointwise fields or coefficients (the registers of two blocks of 512 threads are 64 each:
    // a Point of two words spilled 280 bytes per thread there).
    if constexpr (Model::dims == 2 && temporal_fits<Model>()) {
        constexpr bool fp64 = sizeof(typename Model::value_type) == 8;
        constexpr int B = hoods<Model>() > 1 || (fp64 && kHasPoint<Model>) ? 1 : 2;
        if constexpr (kFp32Shapes<typename Model::value_type>)
            out.push_back(temporal_strategy<Model, 16, 16, 4, B>(kStrategiesCells2d[3].name));
        else
            out.push_back(temporal_strategy<Model, 32, 16, 4, B>(kStrategiesCells2d[3].name));
    }
    // 64 x 16-cell tiles: fp32 256 threads, two blocks per SM's registers (up to 128 a thread);
    // fp64 512 threads, one block.
    if constexpr (Model::dims == 3 && temporal_fits<Model>()) {
        // 64 x 16-cell tiles: 256 threads in fp32, 512 in fp64 (one block per SM's registers). In
        // fp32 a star's queues fit two blocks an SM's registers (up to 128 a thread), a box without
        // them three. Measured on an H100 (fp32, GCells/s at depths 2 and 3): 3D Gray-Scott at
        // 384^3 237 and 205 with two blocks, 240 and 173 with one; the 27-point box at 512^3 237
        // and 228 with two, 244 and 228 with three; tiles of 64 x 32 cells (512 threads) were
        // slower at depth 2 (177 and 223) and no faster at 3 and 4.
        // At radius 2 one block: its queues and the Points of three rounds a level pass 128
        // registers.
        using T = typename Model::value_type;
        constexpr int blocks = kFp32Shapes<T> && Model::star && Model::radius == 1 ? 2 : 1;
        out.push_back(cells_temporal3d_strategy<Model, 16, blocks>(kStrategiesCells3d[4].name));
    }
    return out;
}

}  // namespace strata::cuda
#endif  // __CUDACC_RTC__
