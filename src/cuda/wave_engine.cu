// 3D acoustic waves on the GPU: p^{n+1} is written over p^{n-1} and the two p buffers swap every
// step; vdt2 is a third field in the same padded layout. Sources and receivers are a one-block
// kernel after each update; the step count lives on the device, so captured graphs replay it
// (the host keeps its own count of the steps queued), and the traces stay on the device until
// they are asked for.
#include "cuda_engines.hpp"
#include "time_loop.cuh"
#include "wave_strategies.cuh"

namespace strata::cuda {
namespace {

// One block: thread 0 adds the sources in order (two may share a cell), then the receivers
// sample the updated field, then thread 0 counts the step.
template <class T>
__global__ void wave_sources_receivers(T* p_next, const DevGrid g, const GridSource* sources, const int ns,
                                       const GridPoint* receivers, const int nr, T* traces,
                                       const std::int64_t record_steps, std::int64_t* step, const double dt) {
    const std::int64_t n = *step;
    if (threadIdx.x == 0)
        for (int s = 0; s < ns; ++s) {
            const GridSource src = sources[s];
            p_next[g.at(src.at.i, src.at.j, src.at.k)] += T(src.scale * ricker(double(n) * dt, src.f0));
        }
    __syncthreads();
    if (n < record_steps)
        for (int r = threadIdx.x; r < nr; r += blockDim.x)
            traces[n * nr + r] = p_next[g.at(receivers[r].i, receivers[r].j, receivers[r].k)];
    __syncthreads();  // every thread has read the count
    if (threadIdx.x == 0) *step = n + 1;
}

template <class T>
class WaveCudaEngine final : public WaveEngine<T>, private TimeLoop<Wave3D<T>> {
    using Loop = TimeLoop<Wave3D<T>>;

public:
    WaveCudaEngine(const WaveProblem<T>& p, const WaveState<T>* initial, const EngineOptions& o)
        : Loop(Wave3D<T>(p.params), p.params.extent3(), o,
               default_kernel("wave3d", p.params.extent3().cells())),
          vdt2_(p.params.extent3(), this->stream_.get()),
          sources_(p.sources.size()),
          receivers_(p.receivers.size()),
          traces_(std::size_t(p.record_steps) * p.receivers.size()),
          step_(1),
          ns_(int(p.sources.size())),
          nr_(int(p.receivers.size())),
          record_steps_(p.record_steps),
          dt_(p.params.dt),
          done_(initial ? initial->step : 0) {
        const cudaStream_t s = this->stream_.get();
        vdt2_.upload(p.vdt2, s);
        if (initial) {
            this->in_.upload(initial->p, s);
            this->out_.upload(initial->prev, s);
        } else {
            this->out_ = DeviceField<T>(p.params.extent3(), s);  // TimeLoop poisoned it: p^{n-1} = 0, at rest
        }
        copy_to_device(sources_.get(), p.sources, s);
        copy_to_device(receivers_.get(), p.receivers, s);
        if (initial) copy_to_device(traces_.get(), initial->traces, s);  // the rows before the restart
        STRATA_CUDA_CHECK(cudaMemcpyAsync(step_.get(), &done_, sizeof done_, cudaMemcpyHostToDevice, s));
        this->sync();
    }

    void advance(std::int64_t steps) override {
        this->run_steps(steps);
        done_ += steps;
    }
    double timed_advance_ms(std::int64_t steps) override {
        done_ += steps;
        return this->timed_steps_ms(steps);
    }
    void synchronize() override { this->sync(); }
    std::string kernel() const override { return this->strategy_name(); }

    WaveState<T> state() override {
        const cudaStream_t s = this->stream_.get();
        return {this->in_.download(s), this->out_.download(s), done_, traces()};
    }
    std::vector<T> traces() override {
        std::vector<T> out(std::size_t(std::min(done_, record_steps_)) * nr_);
        if (!out.empty())
            STRATA_CUDA_CHECK(cudaMemcpyAsync(out.data(), traces_.get(), out.size() * sizeof(T),
                                              cudaMemcpyDeviceToHost, this->stream_.get()));
        this->sync();
        return out;
    }
    std::unique_ptr<FieldCopy<T>> snapshot() override { return this->snapshot_latest(); }

private:
    template <class U>
    static void copy_to_device(U* dst, const std::vector<U>& src, cudaStream_t s) {
        if (!src.empty())
            STRATA_CUDA_CHECK(cudaMemcpyAsync(dst, src.data(), src.size() * sizeof(U), cudaMemcpyHostToDevice, s));
    }

    typename Wave3D<T>::Fields step_fields() const override {
        return {this->in_.origin(), this->out_.origin(), vdt2_.origin()};
    }
    void after_update() override {
        if (ns_ == 0 && nr_ == 0) return;
        wave_sources_receivers<<<1, 256, 0, this->stream_.get()>>>(this->out_.origin(), this->out_.grid(),
                                                                     sources_.get(), ns_, receivers_.get(), nr_,
                                                                     traces_.get(), record_steps_, step_.get(), dt_);
        STRATA_CUDA_CHECK_LAUNCH();
    }

    DeviceField<T> vdt2_;
    DeviceBuffer<GridSource> sources_;
    DeviceBuffer<GridPoint> receivers_;
    DeviceBuffer<T> traces_;
    DeviceBuffer<std::int64_t> step_;
    int ns_, nr_;
    std::int64_t record_steps_;
    double dt_;
    std::int64_t done_;  // steps queued, from the initial state's step
};

}  // namespace

template <class T>
std::unique_ptr<WaveEngine<T>> make_wave_engine(const WaveProblem<T>& p, const WaveState<T>* initial,
                                                const EngineOptions& o) {
    require_device();
    return std::make_unique<WaveCudaEngine<T>>(p, initial, o);
}

template std::unique_ptr<WaveEngine<float>> make_wave_engine(const WaveProblem<float>&, const WaveState<float>*,
                                                             const EngineOptions&);
template std::unique_ptr<WaveEngine<double>> make_wave_engine(const WaveProblem<double>&, const WaveState<double>*,
                                                              const EngineOptions&);

}  // namespace strata::cuda
