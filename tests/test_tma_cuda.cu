// The TMA loader's three patterns (tma.cuh: CudaDMA's sequential, strided and halo transfers),
// each through a ring of fewer stages than tiles, so that every stage is refilled and every
// barrier flips phase several times. A DMA warp issues the copies; two compute warps wait for
// each tile, write it out and release the stage. The output is poisoned first, and each tile
// is compared with what it should hold, the elements outside the tensor zero-filled.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cuda/check.hpp"
#include "cuda/tma.cuh"

namespace strata::cuda {
namespace {

enum class Pattern { sequential, strided, halo };

constexpr int S = 3;                 // stages
constexpr int BX = 32, BY = 8;       // a box: 32 x 8 floats, 1 KiB, a multiple of 128 bytes
constexpr int TILE = BX * BY;        // elements per tile, the run's length in the sequential pattern
constexpr int COMPUTE_WARPS = 2;

// Tile i of each pattern: the sequential run i; the strided box i of a row-major walk over the
// boxes of the 2D array; the halo box i of a walk over the tiles of each plane of the 3D grid,
// starting before the tile by a radius-1 halo on y and by 16 bytes on x (a box's first element
// along x must lie on 16 bytes, as the kernels' tiles do: PlaneTile's OFF).
constexpr int HX = 16 / sizeof(float), HY = 1;
struct Walk {
    int nx, ny, nz, tiles_x, tiles_y;
    __host__ __device__ void box(Pattern p, int i, int& x, int& y, int& z) const {
        const bool halo = p == Pattern::halo;
        const int per_plane = tiles_x * tiles_y, t = i % per_plane;
        z = halo ? i / per_plane : 0;
        x = halo ? (t % tiles_x) * (BX - 2 * HX) - HX : (t % tiles_x) * BX;
        y = halo ? (t / tiles_x) * (BY - 2 * HY) - HY : (t / tiles_x) * BY;
    }
};

__global__ void __launch_bounds__(32 * (COMPUTE_WARPS + 1))
    ring_copies(Pattern p, const __grid_constant__ CUtensorMap map, float* out, int tiles, Walk w) {
    __shared__ __align__(128) float stages[S][TILE];
    __shared__ TmaRing<S> ring;
    if (threadIdx.x == 0 && threadIdx.y == 0) ring.init(COMPUTE_WARPS);
    __syncthreads();
    if (threadIdx.y == COMPUTE_WARPS) {  // the DMA warp
        if (threadIdx.x == 0)
            for (int i = 0; i < tiles; ++i) {
                ring.acquire(i, TILE * sizeof(float));
                int x, y, z;
                w.box(p, i, x, y, z);
                if (p == Pattern::sequential)
                    ring.copy1d(i, &map, stages[i % S], i * TILE);
                else if (p == Pattern::strided)
                    ring.copy2d(i, &map, stages[i % S], x, y);
                else
                    ring.copy3d(i, &map, stages[i % S], x, y, z);
            }
        return;
    }
    const int t = threadIdx.y * 32 + threadIdx.x;
    for (int i = 0; i < tiles; ++i) {
        ring.wait(i);
        for (int e = t; e < TILE; e += 32 * COMPUTE_WARPS) out[std::size_t(i) * TILE + e] = stages[i % S][e];
        ring.release(i);
    }
}

bool device_runs_tma() {
    int devices = 0, major = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return false;
    STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    cudaFuncAttributes a{};
    STRATA_CUDA_CHECK(cudaFuncGetAttributes(&a, ring_copies));
    return major >= 9 && a.binaryVersion >= 90;  // the device has a TMA, and this build has its code
}

// Pattern p over a grid of nx x ny x nz floats (rows `pitch` apart, planes ny rows apart): the
// tiles the kernel wrote, against the source read on the host.
void expect_tiles(Pattern p, int nx, int ny, int nz, int pitch) {
    SCOPED_TRACE(::testing::Message() << "pattern " << int(p) << ", " << nx << " x " << ny << " x " << nz << ", pitch "
                                      << pitch);
    const int wx = p == Pattern::halo ? BX - 2 * HX : BX, wy = p == Pattern::halo ? BY - 2 * HY : BY;  // a tile's own
    const Walk w{nx, ny, nz, (nx + wx - 1) / wx, (ny + wy - 1) / wy};
    const std::size_t elems = std::size_t(pitch) * ny * nz;
    // (the last run partial: the rest of it zero-filled)
    const int tiles = p == Pattern::sequential ? int((elems + TILE - 1) / TILE) : w.tiles_x * w.tiles_y * (p == Pattern::halo ? nz : 1);
    std::vector<float> a(elems);
    for (std::size_t e = 0; e < elems; ++e) a[e] = float(e % 9973) + 0.25f;  // padding too: no zero by chance
    float *src = nullptr, *out = nullptr;
    STRATA_CUDA_CHECK(cudaMalloc(&src, elems * sizeof(float)));
    STRATA_CUDA_CHECK(cudaMalloc(&out, std::size_t(tiles) * TILE * sizeof(float)));
    STRATA_CUDA_CHECK(cudaMemcpy(src, a.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
    STRATA_CUDA_CHECK(cudaMemset(out, 0xff, std::size_t(tiles) * TILE * sizeof(float)));  // NaNs
    CUtensorMap map{};
    if (p == Pattern::sequential) map = run_tensor_map(src, std::int64_t(elems), sizeof(float), TILE);
    if (p == Pattern::strided) map = rows_tensor_map(src, nx, ny, pitch, sizeof(float), BX, BY);
    if (p == Pattern::halo) map = interior_tensor_map(src, nx, ny, nz, pitch, std::int64_t(pitch) * ny, sizeof(float), BX, BY);
    ring_copies<<<1, dim3(32, COMPUTE_WARPS + 1)>>>(p, map, out, tiles, w);
    STRATA_CUDA_CHECK_LAUNCH();
    STRATA_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> got(std::size_t(tiles) * TILE);
    STRATA_CUDA_CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(src);
    cudaFree(out);
    int wrong = 0;
    for (int i = 0; i < tiles && wrong < 5; ++i)
        for (int e = 0; e < TILE && wrong < 5; ++e) {
            float want;
            if (p == Pattern::sequential) {
                const std::size_t at = std::size_t(i) * TILE + e;
                want = at < elems ? a[at] : 0.0f;
            } else {
                int x, y, z;
                w.box(p, i, x, y, z);
                x += e % BX, y += e / BX;
                const bool inside = x >= 0 && x < nx && y >= 0 && y < ny;
                want = inside ? a[(std::size_t(z) * ny + y) * pitch + x] : 0.0f;
            }
            const float g = got[std::size_t(i) * TILE + e];
            if (std::memcmp(&g, &want, sizeof g) != 0) {
                ++wrong;
                ADD_FAILURE() << "pattern " << int(p) << ", tile " << i << ", element " << e << ": " << g << ", not "
                              << want;
            }
        }
}

TEST(TmaPatterns, SequentialRunsZeroFilledPastTheEnd) {
    if (!device_runs_tma()) GTEST_SKIP() << "no GPU with a TMA, or a build without sm_90";
    expect_tiles(Pattern::sequential, 100, 37, 1, 128);  // 4736 floats: 19 runs of 256, the last half past the end
}

TEST(TmaPatterns, StridedBoxesOfRowsZeroFilledPastTheEdges) {
    if (!device_runs_tma()) GTEST_SKIP() << "no GPU with a TMA, or a build without sm_90";
    expect_tiles(Pattern::strided, 100, 37, 1, 128);  // 4 x 5 boxes, the last column and row partial
    expect_tiles(Pattern::strided, 32, 8, 1, 32);     // one box, whole
}

TEST(TmaPatterns, HaloBoxesOfEveryPlaneZeroFilledAtTheFaces) {
    if (!device_runs_tma()) GTEST_SKIP() << "no GPU with a TMA, or a build without sm_90";
    expect_tiles(Pattern::halo, 61, 13, 3, 64);  // 3 x 3 tiles of 24 x 6 per plane, halos at every face
    expect_tiles(Pattern::halo, 9, 9, 9, 32);    // n = 9: every box partial
}

}  // namespace
}  // namespace strata::cuda
