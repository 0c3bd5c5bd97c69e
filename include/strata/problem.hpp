#pragma once
// A model set up for one run (a Problem), and what the registry knows of every model (a
// ModelInfo). The run driver, the benchmark, the CLI and the bindings see models only through
// these two and the Engine interface: a model is one file and one line of registration.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "strata/core/types.hpp"
#include "strata/domain.hpp"
#include "strata/features.hpp"
#include "strata/io/vti.hpp"
#include "strata/model.hpp"
#include "strata/params.hpp"

namespace strata {

class Engine;
class Report;
struct ModelInfo;

// What a snapshot frame holds: one field, its grid in space, the pictures' value range.
struct SnapshotSpec {
    std::string field;
    io::VtiGrid grid;
    double lo = 0, hi = 1;
};

// Something the model prints every `every` steps while the run goes on (apf's -s norms).
struct ModelHook {
    std::int64_t every = 0;
    std::function<void(Engine&, std::ostream&, std::int64_t step)> run;
};

// The classic apf program's stopping rule, `t = 0; while (t < T) { t += dt; ++steps; }`: the steps
// it takes and the time it ends at, with the same floating-point accumulation (the rounding decides
// the last step). `flag` names the option in the error for a dt that is not positive or a T that
// takes more than kMaxTimedSteps (about a second of that loop alone), with `instead` the option to
// use then.
struct TimeSchedule {
    std::int64_t steps = 0;
    double t_end = 0;
};
inline constexpr double kMaxTimedSteps = 1e9;
TimeSchedule schedule_for_time(double dt, double t_final, const std::string& flag, const std::string& instead);

class Problem {
public:
    virtual ~Problem() = default;
    virtual const ModelInfo& model() const = 0;

    // The grid, the time step and the schedule: the run ends at step steps(), at time t_end().
    virtual Extent extent() const = 0;
    virtual double dt() const = 0;
    virtual std::int64_t steps() const = 0;
    virtual double t_end() const { return double(steps()) * dt(); }

    // The parameters (beyond the grid) that decide the result: written into checkpoints, and a
    // restart whose run differs in one is an error that names it.
    virtual std::vector<std::pair<std::string, double>> fingerprint() const = 0;

    // The report: the title ("Aliev-Panfilov (apf)"), the lines under it, and the end: the
    // observables and whatever else the model states then. `label` names the problem in a
    // benchmark's table heading.
    virtual std::string title() const = 0;
    virtual std::string label() const = 0;
    virtual void describe(Report& r) const = 0;
    virtual void report(Engine& e, Report& r) const = 0;
    // After the throughput figures: files the model writes at the end (wave3d's traces), into `dir`.
    virtual void finish(Engine&, Report&, const std::string& /*dir*/) const {}
    virtual std::vector<ModelHook> hooks() const { return {}; }

    virtual SnapshotSpec snapshot_spec() const = 0;
    // Snapshots every N steps when --every is not given (apf's -p); 0: none.
    virtual std::int64_t snapshot_every() const { return 0; }
    // Options that contradict the run's common ones (apf: -p against --every).
    virtual void check(std::int64_t /*every*/) const {}

    virtual PointFeatures points() const { return {}; }
    // The size of the values the point sources make (wave3d: the peak of a unit source's direct
    // wave 10 cells away); 0 without sources. With the initial state's, what the state scale is
    // chosen from.
    virtual double source_magnitude() const { return 0; }

    // The state scale (fp16's range, docs/precision.md): the engines store every state field's
    // values (and the traces) times this power of two, so that a problem whose values are small
    // or large for fp16 sits in its normal range. The engines scale the initial state and the
    // sources, and take it out of the observables and values(); the run's writers take it out of
    // snapshots; checkpoints keep the stored values and the scale. 1 (nothing scaled) unless
    // the run set another: only a model whose update is linear in its state (ModelInfo::linear)
    // gives the same solution scaled.
    double state_scale() const { return state_scale_; }
    void set_state_scale(double s) { state_scale_ = s; }
    // What `field`'s stored values are multiplied by to give the model's: 1 / the state scale for
    // a field that holds state, 1 for a coefficient (never scaled). Error for an unknown field.
    double unscale(const std::string& field) const;
    // The process grid the model's own options ask for (apf's -x, -y and -k); none: --decomp or
    // the default slabs.
    virtual std::optional<Decomposition> decomposition() const { return std::nullopt; }

private:
    double state_scale_ = 1;
};

template <class T>
class TypedEngine;
template <class T>
struct State;
struct EngineOptions;

// Builds an engine of a model on a backend (cpu, omp, cuda): the model's own initial state when
// `state` is null, else that state.
template <class T>
using EngineMaker = std::unique_ptr<TypedEngine<T>> (*)(const Problem&, Backend, const EngineOptions&,
                                                        const State<T>*);
// The steps per pass of the engine that the EngineMaker of the same precision would build for
// these options on a grid of `cells` (the temporal strategy's depth; 1 for every other strategy
// and the CPU backends), found without building it.
using DepthQuery = int (*)(const Problem&, Backend, const EngineOptions&, std::int64_t cells);

struct ModelInfo {
    std::string name;      // "apf": `strata run apf`
    std::string summary;   // a line for `strata run --help`
    std::string help;      // what it solves and examples, for `strata run NAME --help`
    std::string step_noun = "step";          // apf counts "iteration"s
    std::string last_step = "--steps %lld";  // how an error names the run's last step
    Precision precision = Precision::fp64;   // the default
    int dims = 2, radius = 1;
    bool cells_only = false;  // served by the cell-by-cell strategies only (model.hpp's cells_only)
    int n_offset = 0;      // `-n N` means N + n_offset points per side (apf: n intervals)
    std::string out_dir = "strata-out";
    std::string out_help = "Directory for snapshot frames and the .pvd (default strata-out)";
    std::vector<FieldDecl> fields;
    std::vector<ParamSpec> params;
    // Strategies of the model's shape that do not fit it, with why (a periodic boundary's
    // `temporal`): left out of kernel_names(), listed by kernels_left_out().
    std::vector<std::pair<std::string, std::string>> refused;
    // The boundary (the kernel's): the ghost layer of a field gathered from several ranks.
    bool mirror = false, periodic = false;
    // Whether the update is linear and homogeneous in the state fields, the sources and the ghost
    // values: then the state times s (a power of two) advances to the solution times s, and a
    // state scale (Problem::state_scale) changes nothing but where the values sit in fp16's range.
    // heat2d, heat3d and wave3d; a stencil file whose updates are (stencil/model.cpp); not apf.
    bool linear = false;
    // The largest magnitude a problem's state takes at first: its initial state's (sampled) and
    // its sources' (Problem::source_magnitude). Set by registration (assembly/register.hpp).
    double (*state_magnitude)(const Problem&) = nullptr;

    // The problem that `params` describe; warnings (a questionable but valid choice) go to `out`.
    std::unique_ptr<Problem> (*problem)(const Params& params, std::ostream& out) = nullptr;
    // The stencil alone (no sources, default parameters but those in `params`) on a box of
    // nx x ny x nz points: the benchmarks' and the checks' problem.
    std::unique_ptr<Problem> (*box)(const Params& params, int nx, int ny, int nz) = nullptr;
    // The engines of each storage precision; null where the model has none (the error says so).
    std::tuple<EngineMaker<float>, EngineMaker<double>, EngineMaker<f16>, EngineMaker<bf16>> engines{};
    // A decomposed run's halos are that many radii deep (dist/decomposed.cpp); by Precision.
    DepthQuery depths[4] = {};

    // The engine maker of precision T; Error naming what the model lacks when it has none.
    template <class T>
    EngineMaker<T> engine() const {
        const EngineMaker<T> m = std::get<EngineMaker<T>>(engines);
        if (!m) no_engine(precision_of<T>());
        return m;
    }
    DepthQuery depth(Precision p) const {
        if (!depths[int(p)]) no_engine(p);
        return depths[int(p)];
    }
    [[noreturn]] void no_engine(Precision p) const;

    int field_index(std::string_view field) const;  // Error when the model has no such field
};

// Every model this build has, in registration order.
std::vector<const ModelInfo*> models();
// UsageError naming the models there are when there is none of that name.
const ModelInfo& find_model(std::string_view name);
// Registers a model made at run time, a stencil file's; Error if the name is taken.
void register_model(const ModelInfo* model);

}  // namespace strata
