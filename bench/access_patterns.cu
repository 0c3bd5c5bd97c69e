// strata-patterns: how fast the device moves one 512^3 fp32 field (512 MiB in, 512 MiB out) in
// the memory-access patterns of the 3D strategies, with no stencil arithmetic in the way.
//
//   build/strata-patterns        (scripts/gpu-check.sh patterns runs it on the GPU machine)
//
// - cudaMemcpy: what `strata probe` measures (there on 1 GiB);
// - copy, flat: one 16-byte vector per thread, blocks in address order;
// - copy, 2.5D: the `vec` strategy's pattern, a block of 32 x 8 threads copying a 128 x 16 tile
//   plane after plane through a chunk of planes (1024 blocks at 64 planes);
// - 7-point, cached: the `cached` strategy's pattern with a 7-point stencil on a grid without
//   ghost cells.
// Each row: the median of 7 timings of 32 back-to-back launches (CUDA events), after a warm-up.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

#define CHECK(call)                                                                                      \
    do {                                                                                                 \
        const cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                         \
            std::fprintf(stderr, "strata-patterns: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__, \
                         cudaGetErrorString(e_));                                                        \
            std::exit(1);                                                                                \
        }                                                                                                \
    } while (0)

constexpr int kN = 512;                                   // cells per side
constexpr std::size_t kRow = kN / 4, kPlane = kN * kRow;  // float4 per row, per plane
constexpr std::size_t kVecs = kN * kPlane;                // float4 per field

__global__ void copy_flat(const float4* __restrict__ a, float4* __restrict__ b) {
    const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < kVecs) b[i] = a[i];
}

// Block (32, 8): a 128-float x 16-row tile, two rows per thread, through `chunk` planes, one plane
// loaded ahead.
__global__ void copy_planes(const float4* __restrict__ a, float4* __restrict__ b, int chunk) {
    constexpr int tiles_x = kN / 128, tiles = tiles_x * (kN / 16);
    const int t = blockIdx.x % tiles, z0 = blockIdx.x / tiles * chunk;
    const std::size_t col = (t % tiles_x) * 32 + threadIdx.x, row = (t / tiles_x) * 16 + threadIdx.y;
    auto at = [&](int z, int r) { return std::size_t(z) * kPlane + (row + 8 * r) * kRow + col; };
    float4 next[2] = {a[at(z0, 0)], a[at(z0, 1)]};
    for (int z = z0; z < z0 + chunk; ++z) {
        const float4 cur[2] = {next[0], next[1]};
        if (z + 1 < z0 + chunk) next[0] = a[at(z + 1, 0)], next[1] = a[at(z + 1, 1)];
        b[at(z, 0)] = cur[0], b[at(z, 1)] = cur[1];
    }
}

// Block (32, BY): 4 cells along x and ZC planes per thread; zero outside the grid.
template <int BY, int ZC>
__global__ void __launch_bounds__(32 * BY)
    heat7_cached(const float4* __restrict__ a, float4* __restrict__ b, float w) {
    const int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * BY + threadIdx.y, z0 = blockIdx.z * ZC;
    auto at = [&](int yy, int zz) {
        return unsigned(yy) < unsigned(kN) && unsigned(zz) < unsigned(kN) ? a[zz * kPlane + yy * kRow + x]
                                                                          : make_float4(0, 0, 0, 0);
    };
    const float* af = reinterpret_cast<const float*>(a);
    float4 c[ZC + 2];
#pragma unroll
    for (int q = 0; q < ZC + 2; ++q) c[q] = at(y, z0 - 1 + q);
#pragma unroll
    for (int q = 1; q <= ZC; ++q) {
        const int z = z0 - 1 + q;
        const std::size_t i = z * kPlane + y * kRow + x;
        const float4 n = at(y - 1, z), s = at(y + 1, z), m = c[q];
        float l = __shfl_up_sync(~0u, m.w, 1), r = __shfl_down_sync(~0u, m.x, 1);
        if (threadIdx.x == 0) l = x == 0 ? 0.f : af[4 * i - 1];
        if (threadIdx.x == 31) r = x == kRow - 1 ? 0.f : af[4 * i + 4];
        float4 o;
        o.x = m.x + w * (l + m.y + n.x + s.x + c[q - 1].x + c[q + 1].x - 6.f * m.x);
        o.y = m.y + w * (m.x + m.z + n.y + s.y + c[q - 1].y + c[q + 1].y - 6.f * m.y);
        o.z = m.z + w * (m.y + m.w + n.z + s.z + c[q - 1].z + c[q + 1].z - 6.f * m.z);
        o.w = m.w + w * (m.z + r + n.w + s.w + c[q - 1].w + c[q + 1].w - 6.f * m.w);
        b[i] = o;
    }
}

}  // namespace

int main() {
    const std::size_t bytes = kVecs * sizeof(float4);
    float4 *a, *b;
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    CHECK(cudaMemset(a, 0, bytes));
    CHECK(cudaMemset(b, 0, bytes));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s: 512^3 fp32, %zu MiB read + %zu MiB written per launch\n", prop.name, bytes >> 20,
                bytes >> 20);
    std::printf("%-34s %10s %10s %8s\n", "pattern", "ms", "GB/s", "%memcpy");
    double memcpy_gbs = 0;
    auto time = [&](const char* name, auto launch) {  // launch(k): the k-th of 32, reading a or b
        constexpr int kLaunches = 32;
        for (int k = 0; k < 4; ++k) launch(k);
        CHECK(cudaGetLastError());
        std::vector<float> ms;
        for (int r = 0; r < 7; ++r) {
            CHECK(cudaEventRecord(e0));
            for (int k = 0; k < kLaunches; ++k) launch(k);
            CHECK(cudaEventRecord(e1));
            CHECK(cudaEventSynchronize(e1));
            float t = 0;
            CHECK(cudaEventElapsedTime(&t, e0, e1));
            ms.push_back(t / kLaunches);
        }
        CHECK(cudaGetLastError());
        std::sort(ms.begin(), ms.end());
        const double gbs = 2.0 * bytes / (ms[3] * 1e6);
        if (memcpy_gbs == 0) memcpy_gbs = gbs;
        std::printf("%-34s %10.4f %10.1f %7.1f%%\n", name, ms[3], gbs, 100 * gbs / memcpy_gbs);
    };
    auto src = [&](int k) { return k % 2 ? b : a; };
    auto dst = [&](int k) { return k % 2 ? a : b; };
    time("cudaMemcpy",
         [&](int k) { CHECK(cudaMemcpyAsync(dst(k), src(k), bytes, cudaMemcpyDeviceToDevice)); });
    time("copy, flat", [&](int k) { copy_flat<<<kVecs / 256, 256>>>(src(k), dst(k)); });
    for (int chunk : {32, 64, 128, 256}) {
        char name[64];
        std::snprintf(name, sizeof name, "copy, 2.5D, %d planes per block", chunk);
        time(name, [&](int k) {
            copy_planes<<<(kN / 128) * (kN / 16) * (kN / chunk), dim3(32, 8)>>>(src(k), dst(k), chunk);
        });
    }
    time("7-point, cached (32 x 4, 4 planes)", [&](int k) {
        heat7_cached<4, 4><<<dim3(kRow / 32, kN / 4, kN / 4), dim3(32, 4)>>>(src(k), dst(k), 0.1f);
    });
    time("7-point, cached (32 x 8, 4 planes)", [&](int k) {
        heat7_cached<8, 4><<<dim3(kRow / 32, kN / 8, kN / 4), dim3(32, 8)>>>(src(k), dst(k), 0.1f);
    });
    return 0;
}
