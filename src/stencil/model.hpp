#pragma once
// What a model generated from a stencil file stands on (codegen.cpp writes the rest): the Problem
// every such model shares (its grid, steps, params after --params, report, snapshots), the report's
// reductions, and the language's functions in the fields' precision on the host and the device.
// The generated unit includes this header at run time (compile.cpp), so it keeps to what the engines'
// headers already need: nothing of the CLI, JSON or PNG. What its kernels need is kernel.hpp's.
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stencil/kernel.hpp"
#include "strata/core/field.hpp"
#include "strata/core/hd.hpp"
#include "strata/model.hpp"
#include "strata/problem.hpp"
#include "strata/stencil.hpp"

namespace strata::stencil {

// A run's grid and schedule, from a stencil model's options (-n, --nx, --ny, --nz, --steps,
// --params).
struct Setup {
    int nx = 0, ny = 0, nz = 1;
    std::int64_t steps = 0;
    std::optional<double> t_end;  // where -t/--time set the steps: the time they end at (problem.hpp)
    std::vector<double> params;  // in the file's order, --params applied
};

// The Problem of every generated model: the generated class adds the kernel functor, the field
// declarations, the initial values and the registration hooks (codegen.cpp).
class StencilProblem : public Problem {
public:
    StencilProblem(std::shared_ptr<const Spec> spec, const ModelInfo* info, Setup setup);

    const Spec& spec() const { return *spec_; }
    const std::vector<double>& param_values() const { return setup_.params; }

    const ModelInfo& model() const override { return *info_; }
    Extent extent() const override;
    double dt() const override;  // the param `dt` when the file has one, else 1
    double t_end() const override;
    std::int64_t steps() const override { return setup_.steps; }
    std::vector<std::pair<std::string, double>> fingerprint() const override;
    std::string title() const override;
    std::string label() const override;
    void describe(Report& r) const override;
    void report(Engine& e, Report& r) const override;
    SnapshotSpec snapshot_spec() const override;

    // A field's values (field `f` of the model) on the whole grid: from its file, or its expression
    // in `init` (the coefficients', and the initial values read from files).
    template <class T, class Initial>
    HostField<T> field_values(const std::string& name, const Initial& init, int f) const {
        const Extent e = extent();
        HostField<T> out(e);
        const std::vector<double> file = file_values(name);
        std::size_t n = 0;
        for (int k = 0; k < e.nz; ++k)
            for (int j = 0; j < e.ny; ++j)
                for (int i = 0; i < e.nx; ++i, ++n) out.at(i, j, k) = T(file.empty() ? init(f, i, j, k) : file[n]);
        return out;
    }
    // The raw values of a field's `file("PATH")` (PATH relative to the stencil file's folder):
    // float32 or float64 by the file's size, x fastest; empty when the field has no file. A
    // missing file or a wrong size is a UsageError at the field's declaration.
    std::vector<double> file_values(const std::string& name) const;

    // The report's figures, per updated field in the file's order: max |f| and the root mean square.
    Observables named(const Reduced* r, int count, double cells) const;

private:
    std::shared_ptr<const Spec> spec_;
    const ModelInfo* info_;
    Setup setup_;
};

// The options every stencil model takes, and what they set.
ModelInfo describe_stencil(const Spec& spec, const std::string& name);
// Whether every update of the file is linear and homogeneous in its fields (ModelInfo::linear):
// u' = u + c * lap(u) is, u' = u + dt * u * (1 - u) and a `fixed V` boundary with V != 0 are not.
bool scales_linearly(const Spec& spec);
Setup stencil_setup(const Spec& spec, const ModelInfo& info, const Params& params);
// The benchmarks' and checks' problem: the file's params (and --params), a given box.
Setup stencil_box(const Spec& spec, const ModelInfo& info, const Params& params, int nx, int ny, int nz);

template <int N>
Observables StencilObserver<N>::named(const Reduced (&r)[N], double cells) const {
    return problem->named(r, N, cells);
}

}  // namespace strata::stencil
