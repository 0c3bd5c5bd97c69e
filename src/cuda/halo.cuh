#pragma once
// A rank's halos on the GPU (domain.hpp): the cells to send packed into one buffer by a kernel,
// sent while the neighbour's arrive (NCCL: device to device on the stream; MPI: staged through
// pinned host memory), unpacked. Every field of the exchange travels in one message per direction.
#ifndef __CUDACC_RTC__
#include <algorithm>

#include "device_buffer.hpp"
#include "launch.hpp"
#include "strata/domain.hpp"
#include "strata/engine.hpp"
#endif
#include "grid.cuh"
#include "strata/core/cstdint.hpp"
#include "strata/core/window.hpp"

namespace strata::cuda {

template <class T, int N>
struct HaloFields {
    T* p[N];  // each field's interior cell (0, 0, 0)
    int n;
    // Elements from the start of a unit of the slowest axis (a plane in 3D, a row in 2D: pitch x
    // rows or pitch elements, ghosts and padding included) to its first interior cell, the same
    // for every field (they share a layout): grid.cuh's DeviceLayout::lead.
    std::int64_t lead;
};

// The n boxes of cells (field after field, then z, y, x as in memory) copied from the fields into
// `flat` (`Pack`), else the other way. A row of the box at a time: threadIdx.x runs along it, the
// rest of the launch over the rows, so a cell costs an address and a copy (the first version
// split a flat 64-bit cell index into i, j, k and field per cell: five 64-bit divisions, issued on
// the same SMs as the interior's update it runs beside).
template <bool Pack, class T, int N>
__global__ void halo_copy(const HaloFields<T, N> f, const DevGrid g, const HaloBox b, T* flat) {
    const int nx = b.hi[0] - b.lo[0], ny = b.hi[1] - b.lo[1], nz = b.hi[2] - b.lo[2], rows = ny * nz * f.n;
    for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < rows; r += gridDim.y * blockDim.y) {
        const int j = r % ny, k = r / ny % nz;
        T* const row = f.p[r / (ny * nz)] + g.at(b.lo[0], b.lo[1] + j, b.lo[2] + k);
        T* const packed = flat + std::int64_t(r) * nx;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nx; i += gridDim.x * blockDim.x) {
            if constexpr (Pack)
                packed[i] = row[i];
            else
                row[i] = packed[i];
        }
    }
}

#ifndef __CUDACC_RTC__  // the host side: NVRTC compiles the kernels above alone

template <class T, int N>
class HaloStage {
public:
    // Fills `deep` cells of the halos of the fields (at most the subdomain's halo) from their
    // owners, axis after axis (a box stencil's corners come through the neighbour between).
    void exchange(Subdomain& sub, const HaloFields<T, N>& f, const DevGrid& g, int deep, cudaStream_t s) {
        if (!sub.exchanges() || f.n == 0) return;
        for (int axis = 0; axis < sub.window.local.dims; ++axis) {
            HaloBox out[2], in[2];
            std::size_t n_out[2], n_in[2];
            for (int dir = 0; dir < 2; ++dir) {
                out[dir] = sub.sent(axis, dir, deep), in[dir] = sub.received(axis, dir, deep);
                n_out[dir] = std::size_t(out[dir].cells() * f.n), n_in[dir] = std::size_t(in[dir].cells() * f.n);
            }
            if (n_out[0] + n_out[1] + n_in[0] + n_in[1] == 0) continue;
            if (sub.device_transfers() && axis == sub.window.local.dims - 1) {
                // Device to device along the slowest axis: a slab is whole units (planes in 3D, rows in
                // 2D) of the fields, contiguous in memory, so NCCL sends them from the fields and
                // receives them into the fields, a message per field, both directions in one group:
                // no pack, no unpack, nothing on the SMs beside NCCL's own kernel. The units' ghost
                // cells and padding travel too; neighbours along this axis share the other axes' extents,
                // so the layouts match, and a ghost cell's value is the boundary's on both.
                const std::int64_t unit = sub.window.local.dims == 3 ? g.plane : g.pitch;
                Subdomain::Message m[2 * N];
                int k = 0;
                for (int dir = 0; dir < 2; ++dir)
                    for (int i = 0; i < f.n; ++i) {
                        T* const first = f.p[i] - f.lead;
                        const std::size_t out_units = std::size_t(out[dir].hi[axis] - out[dir].lo[axis]) * (n_out[dir] > 0);
                        const std::size_t in_units = std::size_t(in[dir].hi[axis] - in[dir].lo[axis]) * (n_in[dir] > 0);
                        m[k++] = {dir, first + out[dir].lo[axis] * unit, out_units * unit * sizeof(T),
                                  first + in[dir].lo[axis] * unit, in_units * unit * sizeof(T)};
                    }
                sub.device_transfer(axis, m, k, s);
                continue;
            }
            reserve(std::max(n_out[0] + n_out[1], n_in[0] + n_in[1]));
            if (sub.device_transfers()) {  // device to device (NCCL) across the other axes: packed, both directions in one group, all on the stream
                T* const o[2] = {dev_out_.get(), dev_out_.get() + n_out[0]};
                T* const i[2] = {dev_in_.get(), dev_in_.get() + n_in[0]};
                Subdomain::Message m[2];
                for (int dir = 0; dir < 2; ++dir) {
                    copy<true>(f, g, out[dir], o[dir], n_out[dir], s);
                    m[dir] = {dir, o[dir], n_out[dir] * sizeof(T), i[dir], n_in[dir] * sizeof(T)};
                }
                sub.device_transfer(axis, m, 2, s);
                for (int dir = 0; dir < 2; ++dir) copy<false>(f, g, in[dir], i[dir], n_in[dir], s);
                continue;
            }
            for (int dir = 0; dir < 2; ++dir) {  // staged through pinned host memory, a direction at a time
                copy<true>(f, g, out[dir], dev_out_.get(), n_out[dir], s);
                if (n_out[dir])
                    STRATA_CUDA_CHECK(cudaMemcpyAsync(host_out_.get(), dev_out_.get(), n_out[dir] * sizeof(T),
                                                      cudaMemcpyDeviceToHost, s));
                STRATA_CUDA_CHECK(cudaStreamSynchronize(s));
                sub.transfer(axis, dir, host_out_.get(), n_out[dir] * sizeof(T), host_in_.get(), n_in[dir] * sizeof(T));
                if (n_in[dir])
                    STRATA_CUDA_CHECK(cudaMemcpyAsync(dev_in_.get(), host_in_.get(), n_in[dir] * sizeof(T),
                                                      cudaMemcpyHostToDevice, s));
                copy<false>(f, g, in[dir], dev_in_.get(), n_in[dir], s);
            }
        }
    }

private:
    template <bool Pack>
    static void copy(const HaloFields<T, N>& f, const DevGrid& g, const HaloBox& b, T* flat, std::size_t n,
                     cudaStream_t s) {
        if (n == 0) return;
        // 256 threads: a row's width of them (at most 128: a column of a 2D cut is a few cells
        // wide), the rest over rows; about 2048 blocks at most, each copying several rows.
        const int width = b.hi[0] - b.lo[0], rows = int(n / std::size_t(width));
        const int tx = width >= 96 ? 128 : width >= 24 ? 32 : 8, ty = 256 / tx;
        const unsigned bx = unsigned((width + tx - 1) / tx);
        const unsigned by = unsigned(std::max(1, std::min((rows + ty - 1) / ty, int(2048 / bx))));
        launch(STRATA_KERNEL(halo_copy, Pack, T, N), dim3(bx, by), dim3(tx, ty), 0, s, f, g, b, flat);
    }
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

// A rank's exposed communication, timed on the device. Per pass, two events: `ready` where the
// kernels could have gone on without the halos, `done` where the halos are in; the pass lost
// max(0, done - ready) to communication (0 when it was hidden behind the interior's update).
// Plain passes take the slots from kGraphPasses on, round-robin, and a slot is read (waiting for
// it, long done by then) before it is reused. The passes of a captured graph record into slots
// 0..kGraphPasses-1, which each replay overwrites: they are read after each replay, so the host
// waits for a replay before it launches the next (one launch gap per kGraphPasses passes).
class ExchangeClock {
public:
    ExchangeClock() {
        for (auto& e : events_) STRATA_CUDA_CHECK(cudaEventCreate(&e));
    }
    ~ExchangeClock() {
        for (auto e : events_) cudaEventDestroy(e);
    }
    ExchangeClock(const ExchangeClock&) = delete;
    ExchangeClock& operator=(const ExchangeClock&) = delete;

    // The slot of the next plain pass (`captured`: of the `pass`-th pass of the graph being captured).
    int slot(bool captured, int pass) {
        if (captured) return pass;
        const int s = kGraphPasses + next_;
        next_ = (next_ + 1) % kGraphPasses;
        if (pending_[s]) read(s);
        return s;
    }
    void ready(int slot, cudaStream_t s, bool captured) { record(2 * slot, s, captured); }
    void done(int slot, cudaStream_t s, bool captured) {
        record(2 * slot + 1, s, captured);
        pending_[slot] = !captured;
    }
    // After a replay of the graph whose passes were timed.
    void replayed() {
        for (int s = 0; s < kGraphPasses; ++s) pending_[s] = true;
        for (int s = 0; s < kGraphPasses; ++s) read(s);
    }
    // Seconds lost so far, every slot read.
    double exposed_s() {
        for (int s = 0; s < 2 * kGraphPasses; ++s)
            if (pending_[s]) read(s);
        return exposed_ms_ / 1e3;
    }

private:
    void record(int e, cudaStream_t s, bool captured) {
        STRATA_CUDA_CHECK(cudaEventRecordWithFlags(events_[e], s, captured ? cudaEventRecordExternal : cudaEventRecordDefault));
    }
    void read(int slot) {  // (overlapped, the two events are on two streams: either may end last)
        STRATA_CUDA_CHECK(cudaEventSynchronize(events_[2 * slot]));
        STRATA_CUDA_CHECK(cudaEventSynchronize(events_[2 * slot + 1]));
        float ms = 0;
        STRATA_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[2 * slot], events_[2 * slot + 1]));
        exposed_ms_ += std::max(0.0f, ms);
        pending_[slot] = false;
    }
    cudaEvent_t events_[4 * kGraphPasses];
    bool pending_[2 * kGraphPasses] = {};
    int next_ = 0;
    double exposed_ms_ = 0;
};

#endif  // __CUDACC_RTC__

}  // namespace strata::cuda
