// Picks the backend that runs a model. The CUDA backend is linked only when the build found
// nvcc; without it, asking for it is a clear error, never a silent fallback to the CPU.
#include "strata/engine.hpp"

#include <algorithm>
#include <chrono>

#include "../cpu/cpu_engines.hpp"
#include "strata/core/error.hpp"
#ifdef STRATA_HAVE_CUDA
#include "../cuda/cuda_engines.hpp"
#endif

namespace strata {
namespace {

void check_cpu_kernel(Backend b, const EngineOptions& o) {
    if (!o.kernel.empty() && o.kernel != to_string(b))
        throw UsageError("kernel '" + o.kernel + "' does not exist on the " + std::string(to_string(b)) +
                         " backend (its only kernel is '" + std::string(to_string(b)) + "')");
    if (o.chunk != 0 || o.depth > 1)
        throw UsageError(std::string(o.chunk != 0 ? "--chunk" : "--depth") + " sets a cuda kernel's launch; the " +
                         std::string(to_string(b)) + " backend has none");
}

#ifndef STRATA_HAVE_CUDA
[[noreturn]] void no_cuda() {
    throw Error("the cuda backend is not available: this strata was built without CUDA "
                "(configure with nvcc on the PATH or CMAKE_CUDA_COMPILER set)");
}
#endif

template <class E>
double wall_ms(E& engine, std::int64_t steps) {
    engine.synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    engine.advance(steps);
    engine.synchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

template <class T>
double ApfEngine<T>::timed_advance_ms(std::int64_t steps) {
    return wall_ms(*this, steps);
}
template <class T>
double HeatEngine<T>::timed_advance_ms(std::int64_t steps) {
    return wall_ms(*this, steps);
}
template <class T>
double WaveEngine<T>::timed_advance_ms(std::int64_t steps) {
    return wall_ms(*this, steps);
}
template class ApfEngine<float>;
template class ApfEngine<double>;
template class HeatEngine<float>;
template class HeatEngine<double>;
template class WaveEngine<float>;
template class WaveEngine<double>;

template <class T>
std::unique_ptr<ApfEngine<T>> make_apf_engine(Backend backend, const ApfParams& params,
                                              const ApfFields<T>* initial, const EngineOptions& options) {
    if (backend == Backend::cuda) {
#ifdef STRATA_HAVE_CUDA
        return cuda::make_apf_engine<T>(params, initial, options);
#else
        no_cuda();
#endif
    }
    check_cpu_kernel(backend, options);
    return cpu::make_apf_engine<T>(backend == Backend::omp, params,
                                   initial ? *initial : apf_initial_state<T>(params));
}

template <class T>
std::unique_ptr<HeatEngine<T>> make_heat_engine(Backend backend, const HeatParams& params,
                                                const HostField<T>* initial, const EngineOptions& options) {
    if (backend == Backend::cuda) {
#ifdef STRATA_HAVE_CUDA
        return cuda::make_heat_engine<T>(params, initial, options);
#else
        no_cuda();
#endif
    }
    check_cpu_kernel(backend, options);
    return cpu::make_heat_engine<T>(backend == Backend::omp, params,
                                    initial ? *initial : heat_initial_state<T>(params));
}

template <class T>
std::unique_ptr<WaveEngine<T>> make_wave_engine(Backend backend, const WaveProblem<T>& problem,
                                                const WaveState<T>* initial, const EngineOptions& options) {
    if (initial) {
        const std::int64_t rows = std::min(initial->step, problem.record_steps);
        if (initial->step < 0 || initial->traces.size() != std::size_t(rows) * problem.receivers.size())
            throw Error("a wave state at step " + std::to_string(initial->step) + " needs " +
                        std::to_string(rows) + " rows of traces for " +
                        std::to_string(problem.receivers.size()) + " receivers; it has " +
                        std::to_string(initial->traces.size()) + " values");
    }
    if (backend == Backend::cuda) {
#ifdef STRATA_HAVE_CUDA
        return cuda::make_wave_engine<T>(problem, initial, options);
#else
        no_cuda();
#endif
    }
    check_cpu_kernel(backend, options);
    const Extent e = problem.params.extent3();
    return cpu::make_wave_engine<T>(backend == Backend::omp, problem,
                                    initial ? *initial : WaveState<T>::at_rest(e));
}

int cuda_device_count() {
#ifdef STRATA_HAVE_CUDA
    return cuda::device_count();
#else
    return 0;
#endif
}

std::vector<std::string> kernel_names(Backend backend, std::string_view model, bool chunked_only) {
    if (backend != Backend::cuda) return chunked_only ? std::vector<std::string>{} : std::vector{std::string(to_string(backend))};
#ifdef STRATA_HAVE_CUDA
    return cuda::kernel_names(model, chunked_only);
#else
    (void)model, (void)chunked_only;
    return {};
#endif
}

std::string kernel_description(Backend backend, std::string_view model, std::string_view kernel) {
    if (backend == Backend::cpu) return "plain loops, the reference every other backend is checked against";
    if (backend == Backend::omp) return "the reference's arithmetic, OpenMP over rows/planes, vectorised inner loop";
#ifdef STRATA_HAVE_CUDA
    return cuda::kernel_description(model, kernel);
#else
    (void)model, (void)kernel;
    return "";
#endif
}

template std::unique_ptr<ApfEngine<float>> make_apf_engine(Backend, const ApfParams&, const ApfFields<float>*, const EngineOptions&);
template std::unique_ptr<ApfEngine<double>> make_apf_engine(Backend, const ApfParams&, const ApfFields<double>*, const EngineOptions&);
template std::unique_ptr<HeatEngine<float>> make_heat_engine(Backend, const HeatParams&, const HostField<float>*, const EngineOptions&);
template std::unique_ptr<HeatEngine<double>> make_heat_engine(Backend, const HeatParams&, const HostField<double>*, const EngineOptions&);
template std::unique_ptr<WaveEngine<float>> make_wave_engine(Backend, const WaveProblem<float>&, const WaveState<float>*, const EngineOptions&);
template std::unique_ptr<WaveEngine<double>> make_wave_engine(Backend, const WaveProblem<double>&, const WaveState<double>*, const EngineOptions&);

}  // namespace strata
