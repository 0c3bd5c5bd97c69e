// The description's engine interface: what every engine shares whatever its backend (a state's
// fields by name, the default relaunch and timing), and the figures' and fields' texts the
// backends' messages use.
#include "strata/engine.hpp"

#include <chrono>

#include "field_buffers.hpp"
#include "strata/core/error.hpp"
#include "strata/core/field_ops.hpp"
#include "strata/problem.hpp"

namespace strata {

double Problem::unscale(const std::string& field) const {
    const ModelInfo& m = model();
    return holds_state(m.fields[std::size_t(m.field_index(field))].role) ? 1 / state_scale_ : 1;
}

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

void ModelInfo::no_engine(Precision p) const {
    throw UsageError("the " + name + " model has no engine storing " + std::string(to_string(p)) +
                     (cells_only && is_half(p)
                          ? " (stencil files run in fp32 and fp64; 16-bit storage is the "
                            "built-in models' for now)"
                          : ""));
}

std::string fields_text(const ModelInfo& model, int buffers, const Extent& e, Precision p) {
    std::string dims = std::to_string(e.px()) + " x " + std::to_string(e.py());
    if (e.dims == 3) dims += " x " + std::to_string(e.pz());
    return model.name + "'s fields (" + std::to_string(buffers) + " buffers of " + dims + " " +
           std::string(to_string(p)) + " values with their ghosts)";
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
PartField<T> TypedEngine<T>::part_field(std::string_view name) {
    const HostField<T> u = field(name);
    return {{0, 0, 0}, {u.extent.nx, u.extent.ny, u.extent.nz}, interior_values(u)};
}

template <class T>
PartState<T> TypedEngine<T>::part_state() {
    PartState<T> s;
    s.step = step();
    for (const FieldDecl& f : model().fields)
        if (holds_state(f.role)) {
            PartField<T> p = part_field(f.name);
            s.lo = p.lo, s.n = p.n;
            s.fields.emplace_back(f.name, std::move(p.values));
        }
    for (const std::string& a : arrays()) s.arrays.emplace_back(a, array(a));
    return s;
}

template struct State<float>;
template struct State<f16>;
template struct State<bf16>;
template struct State<double>;
template class TypedEngine<float>;
template class TypedEngine<f16>;
template class TypedEngine<bf16>;
template class TypedEngine<double>;

}  // namespace strata
