#pragma once
// Owning handles for device memory, streams, events and graphs: released on scope exit, so an
// exception anywhere leaks nothing.
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "check.hpp"

namespace strata::cuda {

// Where a Buffer's memory comes from: the device, or page-locked host memory (device-to-host
// copies into it run asynchronously at full PCIe speed).
struct DeviceMemory {
    static cudaError_t allocate(void** p, std::size_t bytes) { return cudaMalloc(p, bytes); }
    static void release(void* p) { cudaFree(p); }
};
struct PinnedMemory {
    static cudaError_t allocate(void** p, std::size_t bytes) { return cudaMallocHost(p, bytes); }
    static void release(void* p) { cudaFreeHost(p); }
};

template <class T, class Memory>
class Buffer {
public:
    Buffer() = default;
    explicit Buffer(std::size_t n) : n_(n) {
        if (n) STRATA_CUDA_CHECK(Memory::allocate(reinterpret_cast<void**>(&p_), n * sizeof(T)));
    }
    ~Buffer() {
        if (p_) Memory::release(p_);
    }
    Buffer(Buffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
    Buffer& operator=(Buffer&& o) noexcept {
        std::swap(p_, o.p_);
        std::swap(n_, o.n_);
        return *this;
    }
    T* get() const { return p_; }
    std::size_t size() const { return n_; }

private:
    T* p_ = nullptr;
    std::size_t n_ = 0;
};

template <class T>
using DeviceBuffer = Buffer<T, DeviceMemory>;
template <class T>
using PinnedBuffer = Buffer<T, PinnedMemory>;

class Stream {
public:
    Stream() { STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
    // The device's highest priority (its blocks go first when both streams wait for room).
    struct Urgent {};
    explicit Stream(Urgent) {
        int least = 0, greatest = 0;
        STRATA_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        STRATA_CUDA_CHECK(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking, greatest));
    }
    ~Stream() { cudaStreamDestroy(s_); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    cudaStream_t get() const { return s_; }

private:
    cudaStream_t s_{};
};

class Event {
public:
    // cudaEventBlockingSync | cudaEventDisableTiming for events a thread waits on: it sleeps
    // instead of spinning a core that other host work needs.
    explicit Event(unsigned flags = cudaEventDefault) { STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags)); }
    ~Event() { cudaEventDestroy(e_); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    cudaEvent_t get() const { return e_; }

private:
    cudaEvent_t e_{};
};

class GraphExec {
public:
    GraphExec() = default;
    ~GraphExec() { reset(); }
    GraphExec(const GraphExec&) = delete;
    GraphExec& operator=(const GraphExec&) = delete;
    void reset() {
        if (exec_) cudaGraphExecDestroy(exec_);
        exec_ = nullptr;
    }
    explicit operator bool() const { return exec_ != nullptr; }
    // Records what `enqueue` launches on `stream` and instantiates it for replay.
    template <class F>
    void capture(cudaStream_t stream, F&& enqueue) {
        reset();
        cudaGraph_t graph{};
        STRATA_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        try {
            enqueue();
        } catch (...) {
            cudaStreamEndCapture(stream, &graph);
            if (graph) cudaGraphDestroy(graph);
            throw;
        }
        STRATA_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
        // Nodes keep the priorities of the streams they were captured from.
        const cudaError_t e = cudaGraphInstantiate(&exec_, graph, cudaGraphInstantiateFlagUseNodePriority);
        cudaGraphDestroy(graph);
        STRATA_CUDA_CHECK(e);
    }
    void launch(cudaStream_t stream) const { STRATA_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

private:
    cudaGraphExec_t exec_ = nullptr;
};

}  // namespace strata::cuda
