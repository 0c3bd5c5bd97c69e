#pragma once
// A rank's halos on the GPU (domain.hpp): the cells to send packed into one buffer by a kernel,
// sent while the neighbour's arrive (NCCL: device to device on the stream; MPI: staged through
// pinned host memory), unpacked. Every field of the exchange travels in one message per direction.
#include <cstdint>

#include "device_buffer.hpp"
#include "grid.cuh"
#include "strata/domain.hpp"

namespace strata::cuda {

template <class T, int N>
struct HaloFields {
    T* p[N];  // each field's interior cell (0, 0, 0)
    int n;
};

// Cell c of the n boxes of cells (field after field, then z, y, x as in memory): `Pack` copies it
// from the fields into `flat`, else the other way.
template <bool Pack, class T, int N>
__global__ void halo_copy(const HaloFields<T, N> f, const DevGrid g, const HaloBox b, T* flat) {
    const std::int64_t cells = b.cells(), nx = b.hi[0] - b.lo[0], ny = b.hi[1] - b.lo[1];
    for (std::int64_t c = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; c < cells * f.n;
         c += std::int64_t(gridDim.x) * blockDim.x) {
        const std::int64_t r = c % cells;
        const int i = b.lo[0] + int(r % nx), j = b.lo[1] + int(r / nx % ny), k = b.lo[2] + int(r / (nx * ny));
        T& cell = f.p[c / cells][g.at(i, j, k)];
        if constexpr (Pack)
            flat[c] = cell;
        else
            cell = flat[c];
    }
}

template <class T, int N>
class HaloStage {
public:
    // Fills `deep` cells of the halos of the fields (at most the subdomain's halo) from their owners.
    void exchange(Subdomain& sub, const HaloFields<T, N>& f, const DevGrid& g, int deep, cudaStream_t s) {
        if (!sub.exchanges() || f.n == 0) return;
        for (int axis = 0; axis < sub.window.local.dims; ++axis)
            for (int dir = 0; dir < 2; ++dir) {
                const HaloBox out = sub.sent(axis, dir, deep), in = sub.received(axis, dir, deep);
                const std::size_t n_out = std::size_t(out.cells() * f.n), n_in = std::size_t(in.cells() * f.n);
                if (n_out == 0 && n_in == 0) continue;
                reserve(std::max(n_out, n_in));
                if (n_out) {
                    halo_copy<true><<<blocks(n_out), 256, 0, s>>>(f, g, out, dev_out_.get());
                    STRATA_CUDA_CHECK_LAUNCH();
                }
                // Device to device where the subdomain can (NCCL), all on the stream.
                if (sub.device_transfer(axis, dir, dev_out_.get(), n_out * sizeof(T), dev_in_.get(), n_in * sizeof(T), s)) {
                    if (n_in) {
                        halo_copy<false><<<blocks(n_in), 256, 0, s>>>(f, g, in, dev_in_.get());
                        STRATA_CUDA_CHECK_LAUNCH();
                    }
                    continue;
                }
                if (n_out)
                    STRATA_CUDA_CHECK(cudaMemcpyAsync(host_out_.get(), dev_out_.get(), n_out * sizeof(T),
                                                      cudaMemcpyDeviceToHost, s));
                STRATA_CUDA_CHECK(cudaStreamSynchronize(s));
                sub.transfer(axis, dir, host_out_.get(), n_out * sizeof(T), host_in_.get(), n_in * sizeof(T));
                if (n_in) {
                    STRATA_CUDA_CHECK(
                        cudaMemcpyAsync(dev_in_.get(), host_in_.get(), n_in * sizeof(T), cudaMemcpyHostToDevice, s));
                    halo_copy<false><<<blocks(n_in), 256, 0, s>>>(f, g, in, dev_in_.get());
                    STRATA_CUDA_CHECK_LAUNCH();
                }
            }
    }

private:
    static unsigned blocks(std::size_t n) { return unsigned(std::min<std::size_t>((n + 255) / 256, 4096)); }
    void reserve(std::size_t n) {
        if (n <= dev_out_.size()) return;
        dev_out_ = DeviceBuffer<T>(n);
        dev_in_ = DeviceBuffer<T>(n);
        host_out_ = PinnedBuffer<T>(n);
        host_in_ = PinnedBuffer<T>(n);
    }
    DeviceBuffer<T> dev_out_, dev_in_;
    PinnedBuffer<T> host_out_, host_in_;
};

}  // namespace strata::cuda
