// The CPU backends. `cpu` is plain loops, written for clarity: the truth every other backend
// is checked against. `omp` runs the same per-cell arithmetic in the same order, with OpenMP
// over rows (2D) or planes (3D) and a vectorisable inner loop, so its results are bitwise equal.
#include <utility>

#include "cpu_engines.hpp"
#include "strata/core/error.hpp"
#include "strata/core/field_ops.hpp"

namespace strata::cpu {
namespace {

// Every interior cell of a 3D field, planes split over threads when Parallel, the inner loop
// vectorisable. `cell(nb, i, j, k, index)` updates one cell; nb(di, dj, dk) reads `in` around it.
template <bool Parallel, class T, class Cell>
void sweep3d(const Extent& ext, const T* in, const Cell& cell) {
    const std::int64_t px = ext.px(), pxy = ext.px() * ext.py();
    auto plane = [&](int k) {
        for (int j = 0; j < ext.ny; ++j) {
            const std::int64_t base = ext.index(0, j, k);
#pragma omp simd
            for (int i = 0; i < ext.nx; ++i) {
                const T* c = in + base + i;
                auto nb = [c, px, pxy](int di, int dj, int dk) { return c[di + dj * px + dk * pxy]; };
                cell(nb, i, j, k, base + i);
            }
        }
    };
    if constexpr (Parallel) {
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

template <class T, bool Parallel>
class ApfCpuEngine final : public ApfEngine<T> {
public:
    ApfCpuEngine(const ApfParams& p, ApfFields<T> initial)
        : model_(p), e_(std::move(initial.e)), r_(std::move(initial.r)), e_next_(e_.extent) {}

    void advance(std::int64_t steps) override {
        for (std::int64_t s = 0; s < steps; ++s) step();
    }
    ApfStats stats() override { return apf_stats(e_); }
    ApfFields<T> fields() override { return {e_, r_}; }
    std::unique_ptr<FieldCopy<T>> snapshot() override { return std::make_unique<HostCopy<T>>(e_); }
    std::string kernel() const override { return Parallel ? "omp" : "cpu"; }

private:
    void step() {
        apf_mirror_ghosts(e_);
        const Extent ext = e_.extent;
        const std::int64_t pitch = ext.px();
        const typename AlievPanfilov<T>::Fields f{e_.ptr(), e_next_.ptr(), r_.ptr()};
        const AlievPanfilov<T> model = model_;
        auto row = [=](int j) {
            const std::int64_t base = ext.index(0, j);
#pragma omp simd
            for (int i = 0; i < ext.nx; ++i) {
                const T* c = f.in + base + i;
                auto e = [c, pitch](int di, int dj) { return c[di + dj * pitch]; };
                model.store(e, model.load_point(f, base + i), f, base + i);
            }
        };
        if constexpr (Parallel) {
#pragma omp parallel for schedule(static)
            for (int j = 0; j < ext.ny; ++j) row(j);
        } else {
            for (int j = 0; j < ext.ny; ++j) row(j);
        }
        std::swap(e_, e_next_);
    }

    AlievPanfilov<T> model_;
    HostField<T> e_, r_, e_next_;
};

template <class T, HeatStencil S, bool Parallel>
class HeatCpuEngine final : public HeatEngine<T> {
public:
    HeatCpuEngine(const HeatParams& p, HostField<T> initial)
        : params_(p), model_(p), u_(std::move(initial)), u_next_(u_.extent) {}

    void advance(std::int64_t steps) override {
        for (std::int64_t s = 0; s < steps; ++s) step();
    }
    HeatStats stats() override { return heat_stats(u_); }
    double max_error(double t) override { return heat_max_error(params_, u_, t); }
    HostField<T> field() override { return u_; }
    std::unique_ptr<FieldCopy<T>> snapshot() override { return std::make_unique<HostCopy<T>>(u_); }
    std::string kernel() const override { return Parallel ? "omp" : "cpu"; }
    KernelInfo kernel_info() const override { return {kernel(), 1, Heat3D<T, S>::min_bytes_per_cell}; }

private:
    void step() {
        const typename Heat3D<T, S>::Fields f{u_.ptr(), u_next_.ptr()};
        const Heat3D<T, S> model = model_;
        sweep3d<Parallel>(u_.extent, f.in, [&](const auto& nb, int, int, int, std::int64_t c) {
            model.store(nb, model.load_point(f, c), f, c);
        });
        std::swap(u_, u_next_);  // the ghost layers of both buffers stay 0: Dirichlet
    }

    HeatParams params_;
    Heat3D<T, S> model_;
    HostField<T> u_, u_next_;
};

template <class T, bool Parallel>
std::unique_ptr<HeatEngine<T>> make_heat(const HeatParams& p, HostField<T> u0) {
    switch (p.stencil) {
        case HeatStencil::p7: return std::make_unique<HeatCpuEngine<T, HeatStencil::p7, Parallel>>(p, std::move(u0));
        case HeatStencil::p19: return std::make_unique<HeatCpuEngine<T, HeatStencil::p19, Parallel>>(p, std::move(u0));
        case HeatStencil::p27: return std::make_unique<HeatCpuEngine<T, HeatStencil::p27, Parallel>>(p, std::move(u0));
    }
    throw Error("unknown heat stencil");
}

// Leapfrog with p^{n+1} written over p^{n-1} (see Wave3D), then the sources added and the
// receivers sampled, in the order the CUDA engine does it.
template <class T, bool Parallel>
class WaveCpuEngine final : public WaveEngine<T> {
public:
    WaveCpuEngine(const WaveProblem<T>& p, WaveState<T> initial)
        : problem_(p),
          model_(p.params),
          p_(std::move(initial.p)),
          prev_(std::move(initial.prev)),
          traces_(std::move(initial.traces)),
          step_(initial.step) {}

    void advance(std::int64_t steps) override {
        for (std::int64_t s = 0; s < steps; ++s) step();
    }
    WaveState<T> state() override { return {p_, prev_, step_, traces_}; }
    std::vector<T> traces() override { return traces_; }
    std::unique_ptr<FieldCopy<T>> snapshot() override { return std::make_unique<HostCopy<T>>(p_); }
    std::string kernel() const override { return Parallel ? "omp" : "cpu"; }

private:
    void step() {
        const typename Wave3D<T>::Fields f{p_.ptr(), prev_.ptr(), problem_.vdt2.ptr()};
        const Wave3D<T> model = model_;
        sweep3d<Parallel>(p_.extent, f.in, [&](const auto& nb, int i, int j, int k, std::int64_t c) {
            model.store(nb, f, i, j, k, c);
        });
        const double t = double(step_) * problem_.params.dt;
        for (const GridSource& s : problem_.sources) prev_.at(s.at.i, s.at.j, s.at.k) += T(s.scale * ricker(t, s.f0));
        if (step_ < problem_.record_steps)
            for (const GridPoint& r : problem_.receivers) traces_.push_back(prev_.at(r.i, r.j, r.k));
        ++step_;
        std::swap(p_, prev_);  // p^{n+1} was written over p^{n-1}
    }

    WaveProblem<T> problem_;
    Wave3D<T> model_;
    HostField<T> p_, prev_;
    std::vector<T> traces_;
    std::int64_t step_;
};

}  // namespace

template <class T>
std::unique_ptr<ApfEngine<T>> make_apf_engine(bool parallel, const ApfParams& p, ApfFields<T> initial) {
    if (parallel) return std::make_unique<ApfCpuEngine<T, true>>(p, std::move(initial));
    return std::make_unique<ApfCpuEngine<T, false>>(p, std::move(initial));
}

template <class T>
std::unique_ptr<HeatEngine<T>> make_heat_engine(bool parallel, const HeatParams& p, HostField<T> initial) {
    if (parallel) return make_heat<T, true>(p, std::move(initial));
    return make_heat<T, false>(p, std::move(initial));
}

template <class T>
std::unique_ptr<WaveEngine<T>> make_wave_engine(bool parallel, const WaveProblem<T>& p, WaveState<T> initial) {
    if (parallel) return std::make_unique<WaveCpuEngine<T, true>>(p, std::move(initial));
    return std::make_unique<WaveCpuEngine<T, false>>(p, std::move(initial));
}

template std::unique_ptr<ApfEngine<float>> make_apf_engine(bool, const ApfParams&, ApfFields<float>);
template std::unique_ptr<ApfEngine<double>> make_apf_engine(bool, const ApfParams&, ApfFields<double>);
template std::unique_ptr<HeatEngine<float>> make_heat_engine(bool, const HeatParams&, HostField<float>);
template std::unique_ptr<HeatEngine<double>> make_heat_engine(bool, const HeatParams&, HostField<double>);
template std::unique_ptr<WaveEngine<float>> make_wave_engine(bool, const WaveProblem<float>&, WaveState<float>);
template std::unique_ptr<WaveEngine<double>> make_wave_engine(bool, const WaveProblem<double>&, WaveState<double>);

}  // namespace strata::cpu
