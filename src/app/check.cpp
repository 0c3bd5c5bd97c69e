// `strata check MODEL`: every strategy of a backend against the CPU reference, every state field,
// from a random state on a grid no tile divides (check.hpp).
#include "check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>

#include "bench.hpp"
#include "strata/core/error.hpp"
#include "strata/core/field_ops.hpp"
#include "strata/engine.hpp"

namespace strata::app {

namespace {

// The tolerance of a precision after a few steps: its rounding, grown by different but equally
// valid orders of operations (fused multiply-adds on the GPU).
// At 16 bits both sides round each step's fp32 value to the storage type, where one fp32 ulp (a
// fused multiply-add) may tip a rounding: a few of the type's ulps (2^-11 fp16, 2^-8 bf16).
template <class T>
double tolerance() {
    if constexpr (std::is_same_v<T, f16>) return 4.0 / 2048;
    if constexpr (std::is_same_v<T, bf16>) return 4.0 / 256;
    return sizeof(T) == 4 ? 1e-5 : 1e-12;
}

template <class T>
int check_precision(const CheckOptions& o, const ModelInfo& m, const Problem& p, std::ostream& out) {
    const State<T> init = random_state<T>(p, 11);
    auto ref = make_engine<T>(p, Backend::cpu, {}, &init);
    ref->advance(o.steps);
    std::vector<std::string> kernels = o.kernels;
    if (kernels.empty()) kernels = kernel_names(o.backend, m.name);
    int failed = 0;
    for (const std::string& k : kernels) {
        std::vector<int> depths{0};
        if (kernel_takes_depth(o.backend, m.name, k)) depths = {2, 3, 4};
        for (int depth : depths) {
            EngineOptions eo{k, false};
            eo.depth = depth;
            std::unique_ptr<TypedEngine<T>> e;
            try {
                e = make_engine<T>(p, o.backend, eo, &init);
            } catch (const KernelRefused& refused) {
                // A strategy without this precision says why (wave3d's tma at 16 bits): not a failure.
                // (the depth refused, where a temporal kernel's levels do not fit it; deeper ones neither)
                char line[64];
                std::snprintf(line, sizeof line, "%-9s %5s %-5s ", k.c_str(),
                              depth ? std::to_string(depth).c_str() : "-",
                              std::string(to_string(precision_of<T>())).c_str());
                out << line << "refused: " << refused.what() << "\n";
                break;
            }
            e->advance(o.steps);
            double worst = -1;
            std::string which;
            for (const FieldDecl& f : m.fields) {
                if (!holds_state(f.role)) continue;
                const double err = max_relative_error(e->field(f.name), ref->field(f.name));
                if (!(err <= worst)) worst = err, which = f.name;  // NaN counts as the worst
            }
            const bool ok = worst <= tolerance<T>();
            failed += !ok;
            char line[160];
            std::snprintf(line, sizeof line, "%-9s %5d %-5s %11.2e  %-8s %s\n", k.c_str(), depth ? depth : 1,
                          std::string(to_string(precision_of<T>())).c_str(), worst, which.c_str(),
                          ok ? "ok" : "FAILED");
            out << line;
        }
    }
    return failed;
}

// What 16-bit storage costs the model itself: its own initial state on the same box, o.steps on the
// CPU at precision T and in fp64, each state field's max relative difference (the strategies'
// rows above say the GPU rounds as the CPU does; this says how far both are from fp64).
template <class T>
void storage_cost(const CheckOptions& o, const ModelInfo& m, const Problem& p, std::ostream& out) {
    auto ref = make_engine<double>(p, Backend::omp);
    auto low = make_engine<T>(p, Backend::omp);
    ref->advance(o.steps);
    low->advance(o.steps);
    for (const FieldDecl& f : m.fields) {
        if (!holds_state(f.role)) continue;
        const HostField<double> want = ref->field(f.name);
        double largest = 0;
        for (double v : want.data) largest = std::max(largest, std::fabs(v));
        char line[160];
        if (largest == 0)
            std::snprintf(line, sizeof line, "%-5s %-8s %11s  (the field is 0 throughout)\n",
                          std::string(to_string(precision_of<T>())).c_str(), f.name, "-");
        else
            std::snprintf(line, sizeof line, "%-5s %-8s %11.2e\n", std::string(to_string(precision_of<T>())).c_str(),
                          f.name, max_relative_error(low->field(f.name), want));
        out << line;
    }
}

}  // namespace

int run_check(const CheckOptions& o, std::ostream& out) {
    if (o.n < 7 || o.n > 4096) throw UsageError("-n must be from 7 to 4096 (got " + std::to_string(o.n) + ")");
    if (o.steps < 1 || o.steps > 10000) throw UsageError("--steps must be from 1 to 10000");
    const ModelInfo& m = find_model(o.model);
    if (o.backend == Backend::cuda && cuda_device_count() == 0)
        throw Error("--backend cuda: no CUDA device here (check the CPU's omp backend with --backend omp)");
    // n x (n - 2) [x (n - 4)]: odd when n is, different along each axis (a mix-up of x and y shows).
    const auto p = m.box(o.params, o.n + m.n_offset, o.n - 2 + m.n_offset, m.dims == 3 ? o.n - 4 + m.n_offset : 1);
    const Extent e = p->extent();
    out << m.name << ": every " << to_string(o.backend) << " strategy against the cpu reference, " << o.steps
        << " steps from a random state on " << e.nx << " x " << e.ny;
    if (m.dims == 3) out << " x " << e.nz;
    out << "\ntolerance: max |a - b| / max |b| <= 1e-5 (fp32), 1e-12 (fp64), 2e-3 (fp16), 1.6e-2 (bf16), the "
           "worst "
           "field shown\n\n"
        << "kernel    depth prec    max rel err  field    result\n";
    int failed = 0;
    for (Precision prec : o.precisions)
        failed += with_precision(
            prec, [&]<class T>(std::type_identity<T>) { return check_precision<T>(o, m, *p, out); });
    bool header = false;
    for (Precision prec : o.precisions) {
        if (!is_half(prec)) continue;
        if (!header)
            out << "\nwhat 16 bits cost: the model's own initial state, " << o.steps
                << " steps on the CPU, against fp64\nprec  field    max rel err\n";
        header = true;
        with_precision(prec, [&]<class T>(std::type_identity<T>) {
            if constexpr (is_half_v<T>) storage_cost<T>(o, m, *p, out);
        });
    }
    if (failed)
        out << "\n" << failed << " FAILED\n";
    else
        out << "\nall ok\n";
    return failed ? 1 : 0;
}

}  // namespace strata::app
