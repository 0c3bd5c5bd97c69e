// The Aliev-Panfilov model on the GPU: E and E_prev swap every step, R is updated in place.
// The initial state is built on the device and nothing returns to the host inside the loop.
#include <cmath>

#include "cuda_engines.hpp"
#include "reduce.cuh"
#include "time_loop.cuh"

namespace strata::cuda {
namespace {

template <class T>
__global__ void apf_initial_state_kernel(T* e, T* r, const DevGrid g, const int n, const int m) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = blockIdx.y; j < g.ny; j += gridDim.y) {
        if (i >= g.nx) continue;
        e[g.at(i, j)] = i >= n / 2 + 1 ? T(1) : T(0);  // as apf_initial_state on the host
        r[g.at(i, j)] = j >= m / 2 ? T(1) : T(0);
    }
}

template <class T>
class ApfCudaEngine final : public ApfEngine<T>, private TimeLoop<AlievPanfilov<T>> {
    using Loop = TimeLoop<AlievPanfilov<T>>;

public:
    ApfCudaEngine(const ApfParams& p, const ApfFields<T>* initial, const EngineOptions& o)
        : Loop(AlievPanfilov<T>(p), p.extent(), o, default_kernel("apf", p.extent().cells())), r_(p.extent(), this->stream_.get()) {
        const cudaStream_t s = this->stream_.get();
        if (initial) {
            this->in_.upload(initial->e, s);
            r_.upload(initial->r, s);
        } else {
            const DevGrid& g = this->in_.grid();
            apf_initial_state_kernel<<<dim3(blocks_for(g.nx, 256), std::min(g.ny, 65535)), 256, 0, s>>>(
                this->in_.origin(), r_.origin(), g, p.n, p.m);
            STRATA_CUDA_CHECK_LAUNCH();
        }
        if (this->temporal()) r_next_ = DeviceField<T>(p.extent(), s);
        this->sync();
    }

    void advance(std::int64_t steps) override { this->run_steps(steps); }
    double timed_advance_ms(std::int64_t steps) override { return this->timed_steps_ms(steps); }
    void synchronize() override { this->sync(); }
    std::string kernel() const override { return this->strategy_name(); }
    KernelInfo kernel_info() const override { return this->info(); }

    ApfStats stats() override {
        const DevGrid& g = this->in_.grid();
        const MaxSum r = reducer_.run(g, FieldValue<T>{this->in_.origin(), g}, this->stream_.get());
        return {r.max_abs, std::sqrt(r.sum_sq / (double(g.nx) * g.ny))};
    }
    ApfFields<T> fields() override {
        ApfFields<T> f{this->in_.download(this->stream_.get()), r_.download(this->stream_.get())};
        apf_mirror_ghosts(f.e);  // the device never stores E's ghosts: kernels read mirrored cells
        return f;
    }
    std::unique_ptr<FieldCopy<T>> snapshot() override { return this->snapshot_latest(); }

private:
    using Fields = typename AlievPanfilov<T>::Fields;
    Fields step_fields() const override { return {this->in_.origin(), this->out_.origin(), r_.origin()}; }
    std::pair<Fields, Fields> pass_fields() const override {
        return {{this->in_.origin(), nullptr, r_.origin()}, {nullptr, this->out_.origin(), r_next_.origin()}};
    }
    void swap_point_state() override { std::swap(r_, r_next_); }

    DeviceField<T> r_;
    DeviceField<T> r_next_;  // allocated for temporal strategies only
    Reducer reducer_;
};

}  // namespace

template <class T>
std::unique_ptr<ApfEngine<T>> make_apf_engine(const ApfParams& p, const ApfFields<T>* initial,
                                              const EngineOptions& o) {
    require_device();
    return std::make_unique<ApfCudaEngine<T>>(p, initial, o);
}

template std::unique_ptr<ApfEngine<float>> make_apf_engine(const ApfParams&, const ApfFields<float>*,
                                                           const EngineOptions&);
template std::unique_ptr<ApfEngine<double>> make_apf_engine(const ApfParams&, const ApfFields<double>*,
                                                            const EngineOptions&);

}  // namespace strata::cuda
