#pragma once
// The CUDA strategies by name, in ladder order, with a line on each (kept free of CUDA so plain
// C++ can list them). strategies.cuh pairs each entry with its kernel, in the same order.
#include <array>
#include <string_view>

namespace strata::cuda {

// Which ladder of strategies serves a model (strategies.cuh): the 2D one, the 3D one of plane
// sums, the wave's of Laplacian rings, or that of a cells-only model (model.hpp).
struct Ladder {
    int dims = 2, radius = 1;
    bool cells_only = false;
};

struct StrategyDoc {
    std::string_view name, what;
    bool chunked = false;   // takes --chunk (rows or planes per block)
    bool temporal = false;  // takes --depth: several steps per pass over memory
    bool hopper = false;    // needs sm_90 (the Tensor Memory Accelerator): absent from older builds
};

inline constexpr std::array<StrategyDoc, 6> kStrategies2d{{
    {"naive", "one thread per cell, neighbours from global memory (32x8 blocks)"},
    {"smem", "a 32x8 tile and its halo in shared memory"},
    {"planes", "sliding rows: 128-thread rows march along y, rows above/below in registers", true},
    {"multi2", "sliding rows, 2 rows per thread per pass", true},
    {"multi4", "sliding rows, 4 rows per thread per pass", true},
    {"temporal", "--depth K steps per pass over memory: 64x64 overlapped tiles advanced in shared memory", false,
     true},
}};

inline constexpr std::array<StrategyDoc, 11> kStrategies3d{{
    {"naive", "one thread per cell, neighbours from global memory (32x4x2 blocks)"},
    {"smem", "a 32x4x4 brick and its halo in shared memory"},
    {"planes", "2.5D: 32x8 tiles march along z, plane sums in a register queue", true},
    {"multi2", "2.5D, 2 cells per thread along y (32x16 tiles)", true},
    {"multi4", "2.5D, 4 cells per thread along y (32x32 tiles)", true},
    {"vec", "2.5D, 16-byte accesses: 4 (fp32) or 2 (fp64) cells along x, 2 along y per thread", true},
    {"async", "vec with cp.async: planes copied straight to a 4-stage shared-memory ring, 3 ahead", true},
    {"cached", "in memory order like a copy: 16-byte accesses, 4 (fp32) or 3 (fp64) planes per thread, "
               "neighbours from L1/L2"},
    {"temporal", "--depth K steps per pass: 64x32 overlapped tiles stream along z, K levels pipelined", true, true},
    {"tma", "async's tiles copied by the TMA: a DMA warp fills a 4-stage ring, 8 compute warps (sm_90)", true, false,
     true},
    {"tmasync", "tma without warp specialization: a compute thread refills each stage once all warps are done (sm_90)",
     true, false, true},
}};

// A cells-only model's (model.hpp: a stencil file's in 3D, or wider than the 2D ladder takes);
// in 2D naive, smem, cached and a temporal kernel of its own.
inline constexpr std::array<StrategyDoc, 5> kStrategiesCells3d{{
    {"naive", "one thread per cell, every neighbour from global memory through the caches"},
    {"smem", "a 32x8 (2D) or 32x4x4 (3D; 32x4x2 beyond radius 1) tile and its halo in shared memory"},
    {"stream",
     "2.5D: 32x16 tiles march along z, planes z-R..z+R and their halo in a shared-memory ring, "
     "cp.async copies 2 ahead",
     true},
    {"cached",
     "in memory order like a copy: a warp per row of 32 cells (64 at 16 bits), up to 8 planes (rows) "
     "per thread, its row's neighbours in registers, the others (3D) from L1/L2"},
    {"temporal",
     "--depth K steps per pass (1 to 4; 1 to 3 at radius 2): 64x16 overlapped tiles stream along z, K levels "
     "pipelined, each level's last 2R+1 planes in shared memory (radius <= 2, at most two neighbourhood "
     "fields)",
     true, true},
}};
inline constexpr std::array<StrategyDoc, 4> kStrategiesCells2d{
    {kStrategiesCells3d[0],
     kStrategiesCells3d[1],
     kStrategiesCells3d[3],
     {"temporal",
      "--depth K steps per pass over memory: 64x64 overlapped tiles, each thread's 4 rows of 16 bytes and "
      "their pointwise fields in registers (radius <= 2, at most two neighbourhood fields)",
      false, true}}};

// The radius-4 wave model (wave_strategies.cuh).
inline constexpr std::array<StrategyDoc, 5> kStrategiesWave{{
    {"naive", "one thread per cell, all 25 neighbours from global memory (32x4x2 blocks)"},
    {"planes", "2.5D: 64x16 (fp32) tiles march along z, the field at z-4..z+4 in a register queue, 16-byte accesses", true},
    {"async", "2.5D: cp.async copies planes 2 ahead into a shared-memory ring of 11 tiles (z-4..z+4 read there)",
     true},
    {"tma", "async's tiles and rings filled by the TMA: a DMA warp issues one box per tile, 8 compute warps (sm_90)",
     true, false, true},
    {"tmasync", "tma without warp specialization: a compute thread refills each stage once all warps are done (sm_90)",
     true, false, true},
}};

}  // namespace strata::cuda
