// The one way to build an engine: the problem's model knows its engines on every backend. The
// CUDA backend is linked only when the build found nvcc; without it, asking for it is a clear
// error, never a silent fallback to the CPU.
#include <algorithm>

#include "assembly/register.hpp"
#include "ranks/decomposed.hpp"
#include "ranks/mpi.hpp"
#include "strata/core/error.hpp"
#include "strata/engine.hpp"
#ifdef STRATA_HAVE_CUDA
#include "cuda/cuda_engines.hpp"
#endif

namespace strata {

void check_cpu_options(Backend b, const EngineOptions& o) {
    if (!o.kernel.empty() && o.kernel != to_string(b))
        throw UsageError("kernel '" + o.kernel + "' does not exist on the " + std::string(to_string(b)) +
                         " backend (its only kernel is '" + std::string(to_string(b)) + "')");
    if (o.chunk != 0 || o.depth > 1)
        throw UsageError(std::string(o.chunk != 0 ? "--chunk" : "--depth") + " sets a cuda kernel's launch; the " +
                         std::string(to_string(b)) + " backend has none");
}

void no_cuda() {
    throw Error("the cuda backend is not available: this strata was built without CUDA "
                "(configure with nvcc on the PATH or CMAKE_CUDA_COMPILER set)");
}

void no_cuda_engines(const std::string& model) {
    throw Error("the cuda backend is not available: " + model +
                " was compiled without its CUDA engines, as a process that sees no GPU compiles a "
                "stencil file (STRATA_STENCIL_CUDA=1 compiles them without one)");
}

template <class T>
std::unique_ptr<TypedEngine<T>> make_engine(const Problem& problem, Backend backend, const EngineOptions& options,
                                            const State<T>* initial) {
    const ModelInfo& m = problem.model();
    // Several ranks: this one's window of the grid, behind an engine of the whole.
    if (!options.subdomain && (options.decomp.ranks() > 1 || dist::size() > 1))
        return dist::make_decomposed<T>(problem, backend, options, initial);
    return m.engine<T>()(problem, backend, options, initial);
}

int cuda_device_count() {
#ifdef STRATA_HAVE_CUDA
    return cuda::device_count();
#else
    return 0;
#endif
}

#ifdef STRATA_HAVE_CUDA
namespace {
cuda::Ladder ladder(const ModelInfo& m) { return {m.dims, m.radius, m.cells_only}; }
}  // namespace
#endif

std::vector<std::string> kernel_names(Backend backend, std::string_view model, bool chunked_only) {
    const ModelInfo& m = find_model(model);
    if (backend != Backend::cuda)
        return chunked_only ? std::vector<std::string>{} : std::vector{std::string(to_string(backend))};
#ifdef STRATA_HAVE_CUDA
    std::vector<std::string> names = cuda::kernel_names(ladder(m), chunked_only);
    std::erase_if(names, [&](const std::string& k) {
        return std::any_of(m.refused.begin(), m.refused.end(), [&](const auto& r) { return r.first == k; });
    });
    return names;
#else
    (void)m, (void)chunked_only;
    return {};
#endif
}

std::string kernel_description(Backend backend, std::string_view model, std::string_view kernel) {
    const ModelInfo& m = find_model(model);
    if (backend == Backend::cpu) return "plain loops, the reference every other backend is checked against";
    if (backend == Backend::omp) return "the reference's arithmetic, OpenMP over rows/planes, vectorised inner loop";
#ifdef STRATA_HAVE_CUDA
    return cuda::kernel_description(ladder(m), kernel);
#else
    (void)m, (void)kernel;
    return "";
#endif
}

std::vector<std::pair<std::string, std::string>> kernels_left_out(Backend backend, std::string_view model) {
    std::vector<std::pair<std::string, std::string>> out;
#ifdef STRATA_HAVE_CUDA
    const ModelInfo& m = find_model(model);
    if (backend == Backend::cuda)
        for (const std::string& k : cuda::kernels_left_out(ladder(m)))
            out.emplace_back(k, cuda::kernel_left_out(ladder(m), k));
    if (backend == Backend::cuda) out.insert(out.end(), m.refused.begin(), m.refused.end());
#else
    (void)backend, (void)model;
#endif
    return out;
}

bool kernel_takes_depth(Backend backend, std::string_view model, std::string_view kernel) {
    const ModelInfo& m = find_model(model);
    if (backend != Backend::cuda) return false;
#ifdef STRATA_HAVE_CUDA
    return cuda::kernel_takes_depth(ladder(m), kernel);
#else
    (void)m, (void)kernel;
    return false;
#endif
}

template std::unique_ptr<TypedEngine<float>> make_engine(const Problem&, Backend, const EngineOptions&,
                                                         const State<float>*);
template std::unique_ptr<TypedEngine<f16>> make_engine(const Problem&, Backend, const EngineOptions&,
                                                       const State<f16>*);
template std::unique_ptr<TypedEngine<bf16>> make_engine(const Problem&, Backend, const EngineOptions&,
                                                        const State<bf16>*);
template std::unique_ptr<TypedEngine<double>> make_engine(const Problem&, Backend, const EngineOptions&,
                                                          const State<double>*);

}  // namespace strata
