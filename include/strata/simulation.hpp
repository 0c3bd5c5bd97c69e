#pragma once
// A model's problem and its engine in one object: the shortest way to drive Strata from a
// program (docs/api.md), and what the Python bindings' classes wrap. `strata run` is the same
// pieces (registry -> problem -> engine) with the schedule, the hooks and the report around them.
//
//     strata::Simulation sim({.model = "heat3d", .params = {{"n", 128}}, .backend = strata::Backend::cuda});
//     sim.advance(100);
//     strata::HostField<float> u = sim.engine_as<float>().field("u");
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/core/types.hpp"
#include "strata/engine.hpp"
#include "strata/params.hpp"
#include "strata/problem.hpp"
#include "strata/run.hpp"

namespace strata {

struct SimulationOptions {
    std::string model;                   // "apf", "heat2d", "heat3d", "wave3d"
    Params params;                       // the model's options (keys as in `strata run MODEL --help`)
    std::optional<Precision> precision;  // none: the model's default
    // The state fields stored times a power of two (fp16's range, docs/precision.md): "auto" (as
    // `strata run`: fp16 runs of linear models), "none", or "1024", "2^10", ...
    std::string state_scale = "auto";
    Backend backend = Backend::cpu;
    EngineOptions engine;                // the CUDA strategy and its knobs
    // CUDA without a kernel, chunk or depth: the device's wisdom (`strata tune`), the built-in
    // defaults (ignore), or tuning first when the wisdom has no entry (tune), as `strata run`.
    RunOptions::Wisdom wisdom = RunOptions::Wisdom::use;
    std::string restart;                 // a checkpoint to continue from (checked as `--restart` is)
};

class Simulation {
public:
    // UsageError for bad options (the CLI's messages); warnings about valid but questionable
    // choices go to `warnings` when given.
    explicit Simulation(const SimulationOptions& o, std::ostream* warnings = nullptr);
    ~Simulation();  // waits for the snapshot writers (their errors are lost: call flush() first)
    Simulation(const Simulation&) = delete;
    Simulation& operator=(const Simulation&) = delete;

    const ModelInfo& model() const { return problem_->model(); }
    const Problem& problem() const { return *problem_; }
    Precision precision() const { return engine_->precision(); }
    // What the state fields are stored times (1: as they are). field(), values(), observables()
    // and snapshots give the model's values; view() and device arrays the stored ones.
    double state_scale() const { return problem_->state_scale(); }
    Backend backend() const { return backend_; }
    Engine& engine() { return *engine_; }
    // Where the CUDA launch came from, the run report's line: "launch: from wisdom (FILE): ...",
    // "launch: the built-in defaults (...)", "launch: as given"; "" on the CPU backends.
    const std::string& launch() const { return launch_; }
    template <class T>
    TypedEngine<T>& engine_as();  // Error when the simulation is of the other precision

    // Advances `steps`. A long advance goes in pieces of about a quarter of a second of work,
    // asking `stop` between them; when it says so, the advance ends there (the steps done stay
    // done) and returns false. A short one is a single engine call, queued without waiting.
    bool advance(std::int64_t steps, const std::function<bool()>& stop = {});
    std::int64_t step() const { return engine_->step(); }
    double time() const { return double(step()) * problem_->dt(); }

    // Writes a frame of `field` (default: the model's snapshot field) at the current step into
    // `dir` through the CLI's writers: the same file names and formats (`format`: vti, png, both
    // or h5; `compression`: none or zlib), and DIR/MODEL.pvd lists every .vti frame this
    // simulation wrote there (DIR/MODEL.xmf every h5 frame). Returns the frame's files once
    // written.
    std::vector<std::string> snapshot(const std::string& dir, const std::string& format = "both",
                                      const std::string& compression = "none", const std::string& field = {});
    // Waits for every frame in flight and rethrows a writer's error.
    void flush();
    // The whole state at the current step, restartable with SimulationOptions::restart or
    // `strata run --restart` (written to PATH.tmp and renamed).
    void checkpoint(const std::string& path);

private:
    struct Writers;
    std::unique_ptr<Problem> problem_;
    Backend backend_;
    std::unique_ptr<Engine> engine_;
    std::string launch_;
    std::unique_ptr<Writers> writers_;
    double seconds_per_step_ = 0;  // measured by long advances: the size of their pieces
};

}  // namespace strata
