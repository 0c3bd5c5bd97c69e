#pragma once
// Device reductions over the interior of a field: max |v| and sum v^2 in double, where v is any
// per-cell value (the field itself, or its error against an exact solution). Warp shuffles
// reduce inside a warp, shared memory across the block's warps, each block writes one partial,
// and a single block combines the partials: no atomics, and the same order on every run.
#include <cuda_runtime.h>

#include "check.hpp"
#include "device_buffer.hpp"
#include "grid.cuh"

namespace strata::cuda {

struct MaxSum {
    double max_abs = 0, sum_sq = 0;
};

__device__ __forceinline__ double2 combine(double2 a, double2 b) { return {fmax(a.x, b.x), a.y + b.y}; }

__device__ __forceinline__ double2 block_reduce(double2 v) {
    __shared__ double2 warp_part[32];
    for (int o = 16; o > 0; o >>= 1)
        v = combine(v, double2{__shfl_down_sync(0xffffffffu, v.x, o), __shfl_down_sync(0xffffffffu, v.y, o)});
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < int(blockDim.x >> 5) ? warp_part[lane] : double2{0, 0};
        for (int o = 16; o > 0; o >>= 1)
            v = combine(v, double2{__shfl_down_sync(0xffffffffu, v.x, o), __shfl_down_sync(0xffffffffu, v.y, o)});
    }
    return v;
}

// Blocks stride over the interior rows (j, k); threads stride along x.
template <class Value>
__global__ void reduce_rows(const DevGrid g, const Value value, double2* partials) {
    double2 acc{0, 0};
    const std::int64_t rows = std::int64_t(g.ny) * g.nz;
    for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const int j = int(r % g.ny), k = int(r / g.ny);
        for (int i = threadIdx.x; i < g.nx; i += blockDim.x) {
            const double v = value(i, j, k);
            acc = combine(acc, double2{fabs(v), v * v});
        }
    }
    acc = block_reduce(acc);
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

static __global__ void reduce_partials(const double2* partials, int n, double2* out) {
    double2 acc{0, 0};
    for (int i = threadIdx.x; i < n; i += blockDim.x) acc = combine(acc, partials[i]);
    acc = block_reduce(acc);
    if (threadIdx.x == 0) *out = acc;
}

// Owns the partials buffer; one reduction at a time on the given stream.
class Reducer {
public:
    static constexpr int kBlocks = 1024, kThreads = 256;
    Reducer() : partials_(kBlocks + 1) {}

    template <class Value>
    MaxSum run(const DevGrid& g, const Value& value, cudaStream_t stream) {
        reduce_rows<<<kBlocks, kThreads, 0, stream>>>(g, value, partials_.get());
        STRATA_CUDA_CHECK_LAUNCH();
        reduce_partials<<<1, 1024, 0, stream>>>(partials_.get(), kBlocks, partials_.get() + kBlocks);
        STRATA_CUDA_CHECK_LAUNCH();
        double2 r;
        STRATA_CUDA_CHECK(cudaMemcpyAsync(&r, partials_.get() + kBlocks, sizeof r, cudaMemcpyDeviceToHost, stream));
        STRATA_CUDA_CHECK(cudaStreamSynchronize(stream));
        return {r.x, r.y};
    }

private:
    DeviceBuffer<double2> partials_;
};

template <class T>
struct FieldValue {
    const T* p;
    DevGrid g;
    __device__ double operator()(int i, int j, int k) const { return double(p[g.at(i, j, k)]); }
};

}  // namespace strata::cuda
