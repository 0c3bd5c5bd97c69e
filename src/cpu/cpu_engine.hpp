#pragma once
// The CPU backends, for any model. `cpu` is plain loops, written for clarity: the truth every
// other backend is checked against. `omp` runs the same per-cell arithmetic in the same order,
// with OpenMP over rows (2D) or planes (3D) and a vectorisable inner loop, so its results are
// bitwise equal.
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "description/field_buffers.hpp"
#include "description/state_scale.hpp"
#include "strata/core/error.hpp"
#include "strata/core/field_ops.hpp"
#include "strata/core/memory.hpp"
#include "strata/engine.hpp"

namespace strata::cpu {

// Every interior cell, rows (2D) or planes (3D) split over threads when Parallel, the inner loop
// vectorisable. The model's store reads the neighbourhood through nb(di, dj[, dk]), or nb(h, ...)
// for a model of several neighbourhood fields.
template <bool Parallel, class Model>
void sweep(const Model& model, const typename Model::Fields& f, const Extent& ext) {
    using T = typename Model::value_type;
    const std::int64_t px = ext.px(), pxy = ext.px() * ext.py();
    auto row = [=](int j, int k) {
        const std::int64_t base = ext.index(0, j, k);
#pragma omp simd
        for (int i = 0; i < ext.nx; ++i) {
            if constexpr (Model::dims == 2 && hoods<Model>() == 1) {
                const T* c = f.in + base + i;
                auto nb = [c, px](int di, int dj) { return c[di + dj * px]; };
                model.store(nb, model.load_point(f, base + i), f, base + i);
            } else if constexpr (Model::dims == 2) {  // several neighbourhood fields: nb(h, di, dj)
                auto nb = [&f, base, i, px](int h, int di, int dj) { return f.in[h][base + i + di + dj * px]; };
                model.store(nb, model.load_point(f, base + i), f, base + i);
            } else if constexpr (hoods<Model>() > 1) {
                auto nb = [&f, base, i, px, pxy](int h, int di, int dj, int dk) {
                    return f.in[h][base + i + di + dj * px + dk * pxy];
                };
                model.store(nb, model.load_point(f, base + i), f, base + i);
            } else {
                const T* c = f.in + base + i;
                auto nb = [c, px, pxy](int di, int dj, int dk) { return c[di + dj * px + dk * pxy]; };
                if constexpr (requires { model.store(nb, f, i, j, k, base + i); })
                    model.store(nb, f, i, j, k, base + i);  // a model whose update needs its position
                else
                    model.store(nb, model.load_point(f, base + i), f, base + i);
            }
        }
    };
    auto plane = [&](int k) {
        for (int j = 0; j < ext.ny; ++j) row(j, k);
    };
    if constexpr (Model::dims == 2 && Parallel) {
#pragma omp parallel for schedule(static)
        for (int j = 0; j < ext.ny; ++j) row(j, 0);
    } else if constexpr (Model::dims == 2) {
        for (int j = 0; j < ext.ny; ++j) row(j, 0);
    } else if constexpr (Parallel) {
#pragma omp parallel for schedule(static)
        for (int k = 0; k < ext.nz; ++k) plane(k);
    } else {
        for (int k = 0; k < ext.nz; ++k) plane(k);
    }
}

// On the CPU the time loop waits for nothing: a snapshot is a plain copy, ready at once.
template <class T>
class HostCopy final : public FieldCopy<T> {
public:
    explicit HostCopy(const HostField<T>& f) : values_(interior_values(f)) {}
    const T* wait() override { return values_.data(); }

private:
    std::vector<T> values_;
};

// The reductions behind a model's observables, over the interior in memory order (k, j, i): the
// cells this rank owns, combined with the other ranks' (`sub`, null on one rank).
template <class Observer, class T, std::size_t N>
Observables observe(const Observer& obs, const std::array<const T*, N>& origin, const Extent& e,
                    Subdomain* sub, unsigned scaled = 0, double unscale = 1) {
    Reduced r[Observer::count];
    double v[Observer::count];
    int lo[3] = {0, 0, 0}, n[3] = {e.nx, e.ny, e.nz}, at[3] = {0, 0, 0};
    if (sub)
        for (int a = 0; a < 3; ++a) lo[a] = sub->window.own_lo[a], n[a] = sub->window.own_n[a], at[a] = sub->window.offset[a];
    Cell<T, int(N)> base{origin.data(), e.px(), e.px() * e.py(), 0, 0, 0, 0, scaled, unscale};
    base.shift = -(std::int64_t(at[2]) * base.plane + std::int64_t(at[1]) * base.pitch + at[0]);
    for (int k = lo[2]; k < lo[2] + n[2]; ++k)
        for (int j = lo[1]; j < lo[1] + n[1]; ++j)
            for (int i = lo[0]; i < lo[0] + n[0]; ++i) {
                Cell<T, int(N)> c = base;
                c.i = i + at[0], c.j = j + at[1], c.k = k + at[2];
                obs(c, v);
                for (int m = 0; m < Observer::count; ++m) r[m].add(v[m]);
            }
    if (!sub) return obs.named(r, double(e.cells()));
    sub->combine(r, Observer::count);
    return obs.named(r, double(sub->window.global.cells()));
}

template <class P, class Model, bool Parallel>
class CpuEngine final : public TypedEngine<typename Model::value_type> {
    using T = typename Model::value_type;
    static constexpr int N = int(std::size(P::fields));

public:
    CpuEngine(const P& problem, const Model& model, const State<T>* initial, std::shared_ptr<Subdomain> sub)
        : info_(&problem.model()),
          model_(placed(model, sub.get())),
          sub_(std::move(sub)),
          extent_(sub_ ? sub_->window.local : problem.extent()),
          dt_(problem.dt()),
          observer_(problem.observer()),
          points_(scaled_points(sub_ ? localize(problem.points(), sub_->window) : problem.points(),
                                problem.state_scale())),
          scale_(problem.state_scale()),
          buffers_(P::fields) {
        require_host_memory(buffers_.count(false) * extent_.padded_cells() * std::int64_t(sizeof(T)),
                            fields_text(problem.model(), buffers_.count(false), extent_, precision_of<T>()),
                            memory_hint<T>());
        for (int f = 0; f < N; ++f) {
            if (buffers_.has_current(f)) buffers_.cur[f] = HostField<T>(extent_);
            if (buffers_.has_next(f, false)) buffers_.next[f] = HostField<T>(extent_);
            if constexpr (ghost_value<Model>() != 0) {  // fields start at 0: ghosts at the model's value, no sweep writes them
                if (buffers_.has_current(f)) fill_ghosts(buffers_.cur[f], T(ghost_value<Model>()));
                if (buffers_.has_next(f, false)) fill_ghosts(buffers_.next[f], T(ghost_value<Model>()));
            }
        }
        for (auto& [name, values] : problem.template coefficients<T>())
            buffers_.current(buffers_.index(name)) = sub_ ? window_of(values, sub_->window) : values;
        if (initial) {
            for (int f = 0; f < N; ++f)
                if (holds_state(buffers_.role(f))) set_field(P::fields[f].name, initial->field(P::fields[f].name));
            step_ = initial->step;
            const std::vector<T>* traces = initial->array("traces");
            check_traces(points_, step_, traces ? traces->size() : 0);
            if (traces) traces_ = *traces;
        } else {
            const auto init = problem.initial();
            for (int f = 0; f < N; ++f) {
                if (!holds_state(buffers_.role(f))) continue;
                HostField<T>& u = buffers_.current(f);
                for (int k = 0; k < extent_.nz; ++k)
                    for (int j = 0; j < extent_.ny; ++j)
                        for (int i = 0; i < extent_.nx; ++i) {
                            if (!sub_) {
                                u.at(i, j, k) = T(init(f, i, j, k) * scale_);
                                continue;
                            }
                            const Window& w = sub_->window;
                            u.at(i, j, k) =
                                T(init(f, w.global_index(0, i), w.global_index(1, j), w.global_index(2, k)) *
                                  scale_);
                        }
            }
            // Fields whose initial values a model reads from files (a stencil file's file("...")).
            for (auto& [name, values] : initial_file_values<T>(problem))
                set_field(name, sub_ ? window_of(values, sub_->window) : values);
        }
    }

    const ModelInfo& model() const override { return *info_; }
    void advance(std::int64_t steps) override {
        for (std::int64_t s = 0; s < steps; ++s) step();
    }
    std::int64_t step() const override { return step_; }
    KernelInfo kernel_info() const override {
        return {Parallel ? "omp" : "cpu", 1, Model::min_bytes_per_cell, Model::flops_per_cell, Model::min_bytes_per_cell};
    }

    Observables observables() override {
        std::array<const T*, N> origin;
        for (int f = 0; f < N; ++f) origin[f] = buffers_.current(f).ptr() + extent_.index(0, 0, 0);
        observer_.at(double(step_) * dt_);
        return observe(observer_, origin, extent_, sub_.get(), scaled_fields(P::fields, scale_), 1 / scale_);
    }
    HostField<T> field(std::string_view name) override {
        HostField<T> u = buffers_.current(buffers_.index(name));
        if constexpr (Model::mirror) mirror_ghosts(u);
        if constexpr (periodic_boundary<Model>()) periodic_ghosts(u);
        return u;
    }
    void set_field(std::string_view name, const HostField<T>& values) override {
        HostField<T>& u = buffers_.current(buffers_.index(name));
        if (values.extent.nx != extent_.nx || values.extent.ny != extent_.ny || values.extent.nz != extent_.nz ||
            values.extent.ghost != extent_.ghost)
            throw Error("field '" + std::string(name) + "' differs from the problem's grid in extent");
        u = values;
        if constexpr (!Model::mirror) fill_ghosts(u, T(ghost_value<Model>()));  // the boundary is the model's
    }
    std::vector<std::string> arrays() const override {
        return points_.active() ? std::vector<std::string>{"traces"} : std::vector<std::string>{};
    }
    std::vector<T> array(std::string_view name) override {
        if (name != "traces" || !points_.active()) throw Error("the model keeps no array '" + std::string(name) + "'");
        return traces_;
    }
    std::vector<double> values(std::string_view name) override {
        if (name == "traces") return unscaled(array(name), scale_);
        const int f = buffers_.index(name);
        return unscaled(interior_values(buffers_.current(f)), holds_state(buffers_.role(f)) ? scale_ : 1);
    }
    std::unique_ptr<FieldCopy<T>> snapshot(std::string_view name) override {
        return std::make_unique<HostCopy<T>>(buffers_.current(buffers_.index(name)));
    }

    FieldView<T> view(std::string_view name) override {
        HostField<T>& u = buffers_.current(buffers_.index(name));
        return {u.ptr() + extent_.index(0, 0, 0), -1, extent_, extent_.px(), extent_.px() * extent_.py()};
    }
    void copy_in(std::string_view name, const T* src, std::int64_t stride_y, std::int64_t stride_z) override {
        const FieldView<T> v = view(name);
        for (int k = 0; k < extent_.nz; ++k)
            for (int j = 0; j < extent_.ny; ++j)
                std::copy_n(src + k * stride_z + j * stride_y, extent_.nx, v.data + k * v.stride_z + j * v.stride_y);
    }

private:
    void step() {
        if (sub_) {  // the halos from their owners (one radius deep, every step)
            T* halo[N];
            int n = 0;
            for (int f = 0; f < N; ++f)
                if (buffers_.role(f) == FieldRole::stencil) halo[n++] = buffers_.cur[f].ptr();
            const auto t0 = std::chrono::steady_clock::now();
            sub_->exchange(halo, n);
            sub_->exposed_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        for (int f = 0; f < N; ++f) {
            if (buffers_.role(f) != FieldRole::stencil) continue;
            if constexpr (Model::mirror) mirror_ghosts(buffers_.cur[f]);
            if constexpr (periodic_boundary<Model>()) periodic_ghosts(buffers_.cur[f]);
        }
        // On the host the model's indices are those of the whole padded array (Extent::index).
        const typename Model::Fields f = Model::bind(buffers_.template step<T>([](HostField<T>& u) { return u.ptr(); }));
        sweep<Parallel>(model_, f, extent_);
        if (points_.active()) {  // into the new values, as the CUDA engine does
            HostField<T>& u = buffers_.next[points_.field];
            const double t = double(step_) * points_.dt;
            for (const PointSource& s : points_.sources) {
                T& v = u.at(s.at.i, s.at.j, s.at.k);
                v = T(compute_t<T>(v) + compute_t<T>(s.scale * ricker(t, s.f0)));
            }
            if (step_ < points_.record_steps)
                for (const GridPoint& r : points_.receivers) traces_.push_back(u.at(r.i, r.j, r.k));
        }
        buffers_.swap(false);
        ++step_;
    }

    const ModelInfo* info_;
    Model model_;
    std::shared_ptr<Subdomain> sub_;  // null on one rank
    Extent extent_;
    double dt_;
    typename P::Observer observer_;
    PointFeatures points_;
    double scale_;  // Problem::state_scale
    FieldBuffers<HostField<T>, N> buffers_;
    std::vector<T> traces_;
    std::int64_t step_ = 0;
};

template <class P, class T>
std::unique_ptr<TypedEngine<T>> make_engine(const P& problem, bool parallel, const State<T>* initial,
                                            std::shared_ptr<Subdomain> sub) {
    return problem.template with_kernel<T>([&](const auto& model) -> std::unique_ptr<TypedEngine<T>> {
        using Model = std::decay_t<decltype(model)>;
        if (parallel) return std::make_unique<CpuEngine<P, Model, true>>(problem, model, initial, sub);
        return std::make_unique<CpuEngine<P, Model, false>>(problem, model, initial, sub);
    });
}

}  // namespace strata::cpu
