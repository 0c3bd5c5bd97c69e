// The one way to build an engine: the problem's model knows its engines on every backend. The
// CUDA backend is linked only when the build found nvcc; without it, asking for it is a clear
// error, never a silent fallback to the CPU.
#include "strata/engine.hpp"

#include <algorithm>
#include <chrono>

#include "../dist/decomposed.hpp"
#include "../dist/mpi.hpp"
#include "field_buffers.hpp"
#include "register.hpp"
#include "strata/core/error.hpp"
#ifdef STRATA_HAVE_CUDA
#include "../cuda/cuda_engines.hpp"
#endif

namespace strata {

double Observables::operator[](std::string_view name) const {
    for (const auto& [n, v] : values_)
        if (n == name) return v;
    throw Error("the model reports no figure '" + std::string(name) + "'");
}

int ModelInfo::field_index(std::string_view field) const {
    for (std::size_t f = 0; f < fields.size(); ++f)
        if (field == fields[f].name) return int(f);
    throw UsageError("the " + name + " model has no field '" + std::string(field) + "'");
}

std::string fields_text(const ModelInfo& model, int buffers, const Extent& e, Precision p) {
    std::string dims = std::to_string(e.px()) + " x " + std::to_string(e.py());
    if (e.dims == 3) dims += " x " + std::to_string(e.pz());
    return model.name + "'s fields (" + std::to_string(buffers) + " buffers of " + dims + " " +
           std::string(to_string(p)) + " values with their ghosts)";
}

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

void check_traces(const PointFeatures& pf, std::int64_t step, std::size_t values) {
    if (!pf.active()) return;
    const std::int64_t rows = pf.rows(step);
    if (step < 0 || values != std::size_t(rows) * pf.receivers.size())
        throw Error("a state at step " + std::to_string(step) + " needs " + std::to_string(rows) +
                    " rows of traces for " + std::to_string(pf.receivers.size()) + " receivers; it has " +
                    std::to_string(values) + " values");
}

void Engine::relaunch(const EngineOptions&) {
    throw UsageError("the " + kernel() + " engine's launch cannot change (only CUDA's has strategies to choose)");
}

double Engine::timed_advance_ms(std::int64_t steps) {
    synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    advance(steps);
    synchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

template <class T>
const HostField<T>& State<T>::field(std::string_view name) const {
    for (const auto& [n, f] : fields)
        if (n == name) return f;
    throw Error("the state lacks the field '" + std::string(name) + "'");
}

template <class T>
const std::vector<T>* State<T>::array(std::string_view name) const {
    for (const auto& [n, a] : arrays)
        if (n == name) return &a;
    return nullptr;
}

template <class T>
State<T> TypedEngine<T>::state() {
    State<T> s;
    s.step = step();
    for (const FieldDecl& f : model().fields)
        if (holds_state(f.role)) s.fields.emplace_back(f.name, field(f.name));
    for (const std::string& a : arrays()) s.arrays.emplace_back(a, array(a));
    return s;
}

template <class T>
std::unique_ptr<TypedEngine<T>> make_engine(const Problem& problem, Backend backend, const EngineOptions& options,
                                            const State<T>* initial) {
    const ModelInfo& m = problem.model();
    // Several ranks: this one's window of the grid, behind an engine of the whole.
    if (!options.subdomain && (options.decomp.ranks() > 1 || dist::size() > 1))
        return dist::make_decomposed<T>(problem, backend, options, initial);
    if constexpr (std::is_same_v<T, float>)
        return m.engine_f32(problem, backend, options, initial);
    else
        return m.engine_f64(problem, backend, options, initial);
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

template struct State<float>;
template struct State<double>;
template class TypedEngine<float>;
template class TypedEngine<double>;
template std::unique_ptr<TypedEngine<float>> make_engine(const Problem&, Backend, const EngineOptions&,
                                                         const State<float>*);
template std::unique_ptr<TypedEngine<double>> make_engine(const Problem&, Backend, const EngineOptions&,
                                                          const State<double>*);

}  // namespace strata
