// 3D heat on the GPU: u and u_next swap every step; the ghost layers of both stay 0 (Dirichlet).
#include <cmath>

#include "cuda_engines.hpp"
#include "reduce.cuh"
#include "time_loop.cuh"

namespace strata::cuda {
namespace {

template <class T>
__global__ void heat_initial_state_kernel(T* u, const DevGrid g, const HeatExact ex) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = blockIdx.y; r < g.ny * g.nz; r += gridDim.y)
        if (i < g.nx) u[g.at(i, r % g.ny, r / g.ny)] = T(ex.mode(i, r % g.ny, r / g.ny));
}

template <class T>
struct HeatErrorValue {
    const T* u;
    DevGrid g;
    HeatExact ex;
    double decay;
    __device__ double operator()(int i, int j, int k) const {
        return double(u[g.at(i, j, k)]) - decay * ex.mode(i, j, k);
    }
};

template <class T, HeatStencil S>
class HeatCudaEngine final : public HeatEngine<T>, private TimeLoop<Heat3D<T, S>> {
    using Loop = TimeLoop<Heat3D<T, S>>;

public:
    HeatCudaEngine(const HeatParams& p, const HostField<T>* initial, const EngineOptions& o)
        : Loop(Heat3D<T, S>(p), p.extent(), o, default_kernel("heat3d", p.extent().cells(), Heat3D<T, S>::points)), params_(p) {
        const cudaStream_t s = this->stream_.get();
        if (initial) {
            this->in_.upload(*initial, s);
        } else {
            const DevGrid& g = this->in_.grid();
            heat_initial_state_kernel<<<dim3(blocks_for(g.nx, 256), std::min(g.ny * g.nz, 65535)), 256, 0, s>>>(
                this->in_.origin(), g, HeatExact::of(p));
            STRATA_CUDA_CHECK_LAUNCH();
        }
        this->sync();
    }

    void advance(std::int64_t steps) override { this->run_steps(steps); }
    double timed_advance_ms(std::int64_t steps) override { return this->timed_steps_ms(steps); }
    void synchronize() override { this->sync(); }
    std::string kernel() const override { return this->strategy_name(); }
    KernelInfo kernel_info() const override { return this->info(); }

    HeatStats stats() override {
        const DevGrid& g = this->in_.grid();
        const MaxSum r = reducer_.run(g, FieldValue<T>{this->in_.origin(), g}, this->stream_.get());
        return {r.max_abs, std::sqrt(r.sum_sq / (double(g.nx) * g.ny * g.nz))};
    }
    double max_error(double t) override {
        const DevGrid& g = this->in_.grid();
        const HeatExact ex = HeatExact::of(params_);
        const HeatErrorValue<T> v{this->in_.origin(), g, ex, std::exp(-ex.rate * t)};
        return reducer_.run(g, v, this->stream_.get()).max_abs;
    }
    HostField<T> field() override { return this->in_.download(this->stream_.get()); }
    std::unique_ptr<FieldCopy<T>> snapshot() override { return this->snapshot_latest(); }

private:
    typename Heat3D<T, S>::Fields step_fields() const override { return {this->in_.origin(), this->out_.origin()}; }

    HeatParams params_;
    Reducer reducer_;
};

}  // namespace

template <class T>
std::unique_ptr<HeatEngine<T>> make_heat_engine(const HeatParams& p, const HostField<T>* initial,
                                                const EngineOptions& o) {
    require_device();
    switch (p.stencil) {
        case HeatStencil::p7: return std::make_unique<HeatCudaEngine<T, HeatStencil::p7>>(p, initial, o);
        case HeatStencil::p19: return std::make_unique<HeatCudaEngine<T, HeatStencil::p19>>(p, initial, o);
        case HeatStencil::p27: return std::make_unique<HeatCudaEngine<T, HeatStencil::p27>>(p, initial, o);
    }
    throw Error("unknown heat stencil");
}

template std::unique_ptr<HeatEngine<float>> make_heat_engine(const HeatParams&, const HostField<float>*,
                                                             const EngineOptions&);
template std::unique_ptr<HeatEngine<double>> make_heat_engine(const HeatParams&, const HostField<double>*,
                                                              const EngineOptions&);

}  // namespace strata::cuda
