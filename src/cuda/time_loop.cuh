#pragma once
// What every CUDA engine shares: fields in the padded device layout, the chosen strategy, a
// stream, and the time loop (plain launches, or replays of a captured CUDA graph).
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "device_buffer.hpp"
#include "grid.cuh"
#include "strata/core/field.hpp"
#include "strata/engine.hpp"
#include "snapshot.cuh"
#include "strategies.cuh"

namespace strata::cuda {

template <class T>
__global__ void fill_interior(T* origin, const DevGrid g, const T value) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = blockIdx.y; r < g.ny * g.nz; r += gridDim.y)
        if (i < g.nx) origin[g.at(i, r % g.ny, r / g.ny)] = value;
}

// A field on the device: ghosts at 0, interior in the padded layout (grid.cuh).
template <class T>
class DeviceField {
public:
    DeviceField() = default;
    // Zeroed on `s`, the stream every later use of the field is ordered on: a plain cudaMemset
    // runs on the legacy stream, which does not order with non-blocking streams.
    DeviceField(const Extent& e, cudaStream_t s)
        : extent_(e), layout_(DeviceLayout::of(e, sizeof(T))), buf_(layout_.total_elems) {
        STRATA_CUDA_CHECK(cudaMemsetAsync(buf_.get(), 0, layout_.total_elems * sizeof(T), s));
    }
    T* origin() const { return buf_.get() + layout_.origin; }
    const DevGrid& grid() const { return layout_.grid; }

    // Every interior cell to NaN: a cell a kernel forgets to write poisons the result.
    void poison(cudaStream_t s) {
        const DevGrid& g = layout_.grid;
        fill_interior<<<dim3(blocks_for(g.nx, 256), std::min(g.ny * g.nz, 65535)), 256, 0, s>>>(
            origin(), g, std::numeric_limits<T>::quiet_NaN());
        STRATA_CUDA_CHECK_LAUNCH();
    }
    void upload(const HostField<T>& h, cudaStream_t s) {
        const auto [dst, width, rows] = rows_view(h.extent);
        STRATA_CUDA_CHECK(cudaMemcpy2DAsync(dst, layout_.grid.pitch * sizeof(T), h.ptr(), width, width, rows,
                                            cudaMemcpyHostToDevice, s));
        STRATA_CUDA_CHECK(cudaStreamSynchronize(s));  // h may go away after this call
    }
    HostField<T> download(cudaStream_t s) const {
        HostField<T> h(extent_);
        const auto [src, width, rows] = rows_view(h.extent);
        STRATA_CUDA_CHECK(cudaMemcpy2DAsync(h.ptr(), width, src, layout_.grid.pitch * sizeof(T), width, rows,
                                            cudaMemcpyDeviceToHost, s));
        STRATA_CUDA_CHECK(cudaStreamSynchronize(s));
        return h;
    }

private:
    struct Rows {
        T* first;           // device address of host element 0 (the first ghost cell)
        std::size_t width;  // bytes per host row
        std::size_t rows;
    };
    Rows rows_view(const Extent& e) const {
        if (e.nx != extent_.nx || e.ny != extent_.ny || e.nz != extent_.nz || e.ghost != extent_.ghost)
            throw Error("host and device fields differ in extent");
        const int gz = e.dims == 3 ? e.ghost : 0;
        T* first = origin() + layout_.grid.at(-e.ghost, -e.ghost, -gz);
        return {first, std::size_t(e.px()) * sizeof(T), std::size_t(e.py() * e.pz())};
    }

    Extent extent_{};
    DeviceLayout layout_{};
    DeviceBuffer<T> buf_;
};

template <class Model>
Strategy<Model> find_strategy(const std::string& name, const std::string& fallback) {
    const std::string want = name.empty() ? fallback : name;
    std::string known;
    for (const auto& s : strategies<Model>()) {
        if (s.name == want) return s;
        known += (known.empty() ? "" : ", ") + s.name;
    }
    throw UsageError("unknown kernel '" + want + "' (this model has: " + known + ")");
}

// The time loop over `in -> out` with a swap per step. Derived engines add their other fields
// and say how the model's Fields are made from the two buffers.
template <class Model>
class TimeLoop {
public:
    using T = typename Model::value_type;

    TimeLoop(const Model& m, const Extent& e, const EngineOptions& o, const std::string& default_kernel)
        : model_(m),
          strategy_(find_strategy<Model>(o.kernel, default_kernel)),
          knobs_{o.chunk},
          depth_(pick_depth(strategy_, o.depth)),
          use_graphs_(o.graphs),
          snapshot_buffers_(o.snapshot_buffers),
          in_(e, stream_.get()),
          out_(e, stream_.get()) {
        out_.poison(stream_.get());
        if (o.chunk < 0) throw UsageError("--chunk must be positive (got " + std::to_string(o.chunk) + ")");
        if (o.chunk > 0 && !strategy_.chunked)
            throw UsageError("--chunk sets the rows or planes per block of the streaming kernels; '" + strategy_.name +
                             "' has none");
    }
    virtual ~TimeLoop() = default;

    // Passes of depth_ steps (one step each unless the strategy is temporal), replayed as graphs of
    // kGraphPasses passes where there are enough, then the remainder as one shorter pass.
    void run_steps(std::int64_t steps) {
        std::int64_t passes = steps / depth_;
        const int rest = int(steps % depth_);
        if (use_graphs_ && passes >= kGraphPasses) {
            if (odd_) {  // the graph was captured with the buffers in their original roles
                pass(depth_);
                --passes;
            }
            if (!graph_)
                graph_.capture(stream_.get(), [&] {
                    for (int s = 0; s < kGraphPasses; ++s) pass(depth_);
                });
            for (; passes >= kGraphPasses; passes -= kGraphPasses) graph_.launch(stream_.get());
        }
        for (; passes > 0; --passes) pass(depth_);
        if (rest > 0) pass(rest);
    }

    double timed_steps_ms(std::int64_t steps) {
        STRATA_CUDA_CHECK(cudaEventRecord(start_.get(), stream_.get()));
        run_steps(steps);
        STRATA_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_.get()));
        STRATA_CUDA_CHECK(cudaEventSynchronize(stop_.get()));
        float ms = 0;
        STRATA_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
        return ms;
    }

    void sync() { STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_.get())); }
    // The latest state, copied out behind the steps already queued (snapshot.cuh).
    std::unique_ptr<FieldCopy<T>> snapshot_latest() {
        if (!snapshots_) snapshots_ = std::make_shared<SnapshotPool<T>>(in_.grid(), snapshot_buffers_);
        return snapshots_->take(in_.origin(), in_.grid(), stream_.get());
    }
    const std::string& strategy_name() const { return strategy_.name; }
    KernelInfo info() const {
        const double bytes = strategy_.fused ? strategy_.fused_bytes(in_.grid(), depth_, knobs_) : Model::min_bytes_per_cell;
        return {strategy_.name, depth_, bytes};
    }

protected:
    using Fields = typename Model::Fields;
    // The fields of one step: in_ -> out_ (pointwise state updated in place).
    virtual Fields step_fields() const = 0;
    // The fields a temporal pass reads and writes: the pointwise state may not be updated in
    // place there, so a model with one keeps a second copy and swaps it with each pass.
    virtual std::pair<Fields, Fields> pass_fields() const { return {step_fields(), step_fields()}; }
    virtual void swap_point_state() {}
    // Runs after each single-step update, before the swap (out_ holds the new state): sources,
    // receivers. Temporal strategies are for models without such per-step work.
    virtual void after_update() {}
    bool temporal() const { return strategy_.fused != nullptr; }

    void pass(int steps) {
        if (temporal()) {
            const auto [rd, wr] = pass_fields();
            strategy_.fused(model_, rd, wr, in_.grid(), steps, knobs_, stream_.get());
            swap_point_state();
        } else {
            strategy_.launch(model_, step_fields(), in_.grid(), knobs_, stream_.get());
            after_update();
        }
        std::swap(in_, out_);
        odd_ = !odd_;
    }

    static int pick_depth(const Strategy<Model>& s, int asked) {
        if (!s.fused) {
            if (asked > 1)
                throw UsageError("--depth " + std::to_string(asked) + " needs the temporal kernel ('" + s.name +
                                 "' advances one step per pass)");
            return 1;
        }
        if (asked == 0) return s.default_depth;
        if (asked < 1 || asked > s.max_depth)
            throw UsageError("--depth must be from 1 to " + std::to_string(s.max_depth) + " for the " + s.name +
                             " kernel (got " + std::to_string(asked) + ")");
        return asked;
    }

    Model model_;
    Strategy<Model> strategy_;
    LaunchKnobs knobs_;
    int depth_;  // steps per pass
    bool use_graphs_;
    int snapshot_buffers_;
    Stream stream_;
    Event start_, stop_;
    DeviceField<T> in_, out_;  // in_ always holds the latest state
    GraphExec graph_;
    std::shared_ptr<SnapshotPool<T>> snapshots_;  // made at the first snapshot
    bool odd_ = false;
};

}  // namespace strata::cuda
