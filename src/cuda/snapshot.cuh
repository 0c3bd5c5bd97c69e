#pragma once
// Snapshots that do not stall the time loop. On the compute stream a kernel packs the field's
// interior into a device staging buffer (a device-speed copy, tens of microseconds); a copy
// stream waits for that and copies the staging buffer into one of a few pinned host buffers,
// while the compute stream goes on. The host side (FieldCopy::wait) waits for that copy only.
//
// Ordering: the next pack waits (on the GPU, not the host) until the previous device-to-host
// copy has read the staging buffer; a pinned buffer is reused only once its FieldCopy is gone,
// and taking one blocks the host only while every buffer is still being written out.
#ifndef __CUDACC_RTC__
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "device_buffer.hpp"
#include "strata/engine.hpp"
#include "strategies.cuh"
#endif
#include "grid.cuh"

namespace strata::cuda {

template <class T>
__global__ void pack_interior(T* dst, const T* origin, const DevGrid g) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= g.nx) return;
    for (int r = blockIdx.y; r < g.ny * g.nz; r += gridDim.y)
        dst[std::int64_t(r) * g.nx + i] = origin[g.at(i, r % g.ny, r / g.ny)];
}

#ifndef __CUDACC_RTC__  // the host side: NVRTC compiles the kernels above alone

template <class T>
class SnapshotPool : public std::enable_shared_from_this<SnapshotPool<T>> {
public:
    SnapshotPool(const DevGrid& g, int buffers)
        : cells_(std::size_t(g.nx) * g.ny * g.nz),
          staging_(cells_),
          copied_(cudaEventDisableTiming),
          staged_(cudaEventDisableTiming) {
        for (int b = 0; b < std::max(buffers, 1); ++b) slots_.push_back(std::make_unique<Slot>(cells_));
    }

    std::unique_ptr<FieldCopy<T>> take(const T* origin, const DevGrid& g, cudaStream_t compute) {
        const int s = acquire();
        STRATA_CUDA_CHECK(cudaStreamWaitEvent(compute, copied_.get()));  // staging_ is free again
        launch(STRATA_KERNEL(pack_interior, T), dim3(blocks_for(g.nx, 256), std::min(g.ny * g.nz, 65535)),
               256, 0, compute, staging_.get(), origin, g);
        STRATA_CUDA_CHECK(cudaEventRecord(staged_.get(), compute));
        STRATA_CUDA_CHECK(cudaStreamWaitEvent(copy_stream_.get(), staged_.get()));
        STRATA_CUDA_CHECK(cudaMemcpyAsync(slots_[s]->host.get(), staging_.get(), cells_ * sizeof(T),
                                          cudaMemcpyDeviceToHost, copy_stream_.get()));
        STRATA_CUDA_CHECK(cudaEventRecord(slots_[s]->done.get(), copy_stream_.get()));
        STRATA_CUDA_CHECK(cudaEventRecord(copied_.get(), copy_stream_.get()));
        return std::make_unique<Copy>(this->shared_from_this(), s);
    }

private:
    struct Slot {
        explicit Slot(std::size_t n) : host(n), done(cudaEventBlockingSync | cudaEventDisableTiming) {}
        PinnedBuffer<T> host;
        Event done;
        bool busy = false;
    };

    class Copy final : public FieldCopy<T> {
    public:
        Copy(std::shared_ptr<SnapshotPool> pool, int slot) : pool_(std::move(pool)), slot_(slot) {}
        ~Copy() override { pool_->release(slot_); }
        const T* wait() override {
            Slot& s = *pool_->slots_[slot_];
            STRATA_CUDA_CHECK(cudaEventSynchronize(s.done.get()));
            return s.host.get();
        }

    private:
        std::shared_ptr<SnapshotPool> pool_;
        int slot_;
    };

    int acquire() {
        std::unique_lock lock(mutex_);
        for (;;) {
            for (std::size_t s = 0; s < slots_.size(); ++s)
                if (!slots_[s]->busy) {
                    slots_[s]->busy = true;
                    return int(s);
                }
            freed_.wait(lock);
        }
    }
    void release(int s) {
        {
            std::lock_guard lock(mutex_);
            slots_[s]->busy = false;
        }
        freed_.notify_one();
    }

    std::size_t cells_;
    DeviceBuffer<T> staging_;
    Stream copy_stream_;
    Event copied_, staged_;
    std::vector<std::unique_ptr<Slot>> slots_;
    std::mutex mutex_;
    std::condition_variable freed_;
};

#endif  // __CUDACC_RTC__

}  // namespace strata::cuda
