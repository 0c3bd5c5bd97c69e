#pragma once
// Device reductions over the interior of a model's fields: for each of the K values a model's
// observer computes per cell, max |v|, sum v and sum v^2, in double. Warp shuffles reduce inside
// a warp, shared memory across the block's warps, each block writes one partial, and a single
// block combines the partials: no atomics, and the same order on every run.
#ifndef __CUDACC_RTC__
#include "check.hpp"
#include "device_buffer.hpp"
#include "launch.hpp"
#include "strata/domain.hpp"
#endif
#include "grid.cuh"
#include "strata/core/window.hpp"
#include "strata/model.hpp"

namespace strata::cuda {

// K reductions of (max |v|, sum v, sum v^2), combined component by component.
template <int K>
struct Partial {
    Reduced r[K];
    __device__ void combine(const Partial& o) {
#pragma unroll
        for (int n = 0; n < K; ++n) {
            r[n].max_abs = fmax(r[n].max_abs, o.r[n].max_abs);
            r[n].sum += o.r[n].sum;
            r[n].sum_sq += o.r[n].sum_sq;
        }
    }
    __device__ Partial shfl_down(int offset) const {
        Partial p;
#pragma unroll
        for (int n = 0; n < K; ++n) {
            p.r[n].max_abs = __shfl_down_sync(0xffffffffu, r[n].max_abs, offset);
            p.r[n].sum = __shfl_down_sync(0xffffffffu, r[n].sum, offset);
            p.r[n].sum_sq = __shfl_down_sync(0xffffffffu, r[n].sum_sq, offset);
        }
        return p;
    }
};

template <int K>
__device__ __forceinline__ Partial<K> block_reduce(Partial<K> v) {
    __shared__ Partial<K> warp_part[32];
    for (int o = 16; o > 0; o >>= 1) v.combine(v.shfl_down(o));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < int(blockDim.x >> 5) ? warp_part[lane] : Partial<K>{};
        for (int o = 16; o > 0; o >>= 1) v.combine(v.shfl_down(o));
    }
    return v;
}

// The fields of a model as its observer reads them (Cell, model.hpp), passed by value.
template <class T, int N>
struct FieldOrigins {
    const T* p[N];
    unsigned scaled = 0;  // Cell's: the fields stored times the state scale, and its inverse
    double unscale = 1;
};

// The cells reduced: a box of the grid (what a rank owns of its window, domain.hpp), and where the
// grid lies in the whole (the observer sees each cell's place there).
struct ReduceBox {
    int lo[3], n[3], at[3];
};

// Blocks stride over the box's rows (j, k); threads stride along x.
template <class Observer, class T, int N>
__global__ void reduce_rows(const DevGrid g, const FieldOrigins<T, N> fields, const Observer obs, const ReduceBox b,
                            Partial<Observer::count>* partials) {
    constexpr int K = Observer::count;
    Partial<K> acc{};
    const std::int64_t rows = std::int64_t(b.n[1]) * b.n[2];
    const std::int64_t shift = -(std::int64_t(b.at[2]) * g.plane + std::int64_t(b.at[1]) * g.pitch + b.at[0]);
    for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const int j = b.lo[1] + int(r % b.n[1]), k = b.lo[2] + int(r / b.n[1]);
        for (int i = b.lo[0] + threadIdx.x; i < b.lo[0] + b.n[0]; i += blockDim.x) {
            const Cell<T, N> c{fields.p,    g.pitch, g.plane,       i + b.at[0],   j + b.at[1],
                               k + b.at[2], shift,   fields.scaled, fields.unscale};
            double v[K];
            obs(c, v);
#pragma unroll
            for (int n = 0; n < K; ++n) acc.r[n].add(v[n]);
        }
    }
    acc = block_reduce(acc);
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

template <int K>
__global__ void reduce_partials(const Partial<K>* partials, int n, Partial<K>* out) {
    Partial<K> acc{};
    for (int i = threadIdx.x; i < n; i += blockDim.x) acc.combine(partials[i]);
    acc = block_reduce(acc);
    if (threadIdx.x == 0) *out = acc;
}

#ifndef __CUDACC_RTC__  // the host side: NVRTC compiles the kernels above alone

// Owns the partials buffer; one reduction at a time on the given stream.
template <int K>
class Reducer {
public:
    static constexpr int kBlocks = 1024, kThreads = 256;
    Reducer() : partials_(kBlocks + 1) {}

    // Over the whole grid, or the cells a rank owns of its window `w`.
    template <class Observer, class T, int N>
    void run(const DevGrid& g, const FieldOrigins<T, N>& fields, const Observer& obs, Reduced (&out)[K],
             cudaStream_t stream, const Window* w = nullptr) {
        ReduceBox b{{0, 0, 0}, {g.nx, g.ny, g.nz}, {0, 0, 0}};
        if (w)
            for (int a = 0; a < 3; ++a) b.lo[a] = w->own_lo[a], b.n[a] = w->own_n[a], b.at[a] = w->offset[a];
        launch(STRATA_KERNEL(reduce_rows, Observer, T, N), kBlocks, kThreads, 0, stream, g, fields, obs, b,
               partials_.get());
        launch(STRATA_KERNEL(reduce_partials, K), 1, 1024, 0, stream, partials_.get(), kBlocks,
               partials_.get() + kBlocks);
        Partial<K> r;
        STRATA_CUDA_CHECK(cudaMemcpyAsync(&r, partials_.get() + kBlocks, sizeof r, cudaMemcpyDeviceToHost, stream));
        STRATA_CUDA_CHECK(cudaStreamSynchronize(stream));
        for (int n = 0; n < K; ++n) out[n] = r.r[n];
    }

private:
    DeviceBuffer<Partial<K>> partials_;
};

#endif  // __CUDACC_RTC__

}  // namespace strata::cuda
