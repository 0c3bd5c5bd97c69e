#pragma once
// An engine owns a model's state on one backend and advances it in time. The run driver, the
// benchmarks, the tests and the bindings all drive every model through this one interface: a
// backend or strategy added here is reachable from all of them, for every model.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/core/field.hpp"
#include "strata/core/types.hpp"
#include "strata/domain.hpp"
#include "strata/model.hpp"
#include "strata/problem.hpp"

namespace strata {

// The CUDA time loop replays passes (steps, or several steps for a temporal kernel) as captured
// graphs of this many passes (even, so the buffers' swaps return to their original roles).
inline constexpr int kGraphPasses = 64;

struct EngineOptions {
    std::string kernel;  // CUDA strategy name; empty picks the default
    bool graphs = true;  // CUDA: replay the time loop as captured graphs (fewer launch gaps)
    int chunk = 0;       // CUDA streaming strategies: rows (2D) or planes (3D) per block; 0 = default
    int depth = 0;       // CUDA temporal strategy: steps per pass over memory; 0 = default
    int snapshot_buffers = 2;  // CUDA: pinned host buffers for snapshots in flight (see snapshot())
    // CUDA: the field whose snapshot buffers are allocated (and counted against the memory
    // available) with the engine, before the time loop; others get theirs at their first snapshot.
    std::string snapshot_field = {};
    // The process grid of a run over several ranks (mpirun): make_engine() then builds this
    // rank's engine on its window of the grid (domain.hpp). One part: the whole grid here.
    Decomposition decomp = {};
    // Set by the decomposed engine for the engine of its window; null on one rank.
    std::shared_ptr<Subdomain> subdomain = {};
};

// What the chosen strategy does per pass over memory, and the model's counts per cell update
// that the report's rates are computed from.
struct KernelInfo {
    std::string name;
    int depth = 1;                       // steps per pass (1 unless temporal)
    double bytes_per_cell_update = 0;    // device-memory traffic per cell update, from the tile
                                         // geometry (the model's minimum for single sweeps)
    int flops_per_cell = 0;              // the model's
    int min_bytes_per_cell = 0;          // the model's minimum traffic: each field read once, written once
};

// A copy of a field's interior (x fastest), taken when the engine's snapshot() was called and
// delivered later: the time loop goes on while it travels. Destroying it returns its buffer to
// the engine's pool; it may outlive the engine.
template <class T>
class FieldCopy {
public:
    virtual ~FieldCopy() = default;
    // Blocks until the values are on the host; they stay valid until destruction. Any thread.
    virtual const T* wait() = 0;
};

// A model's state at a step: the fields that hold state (not the coefficients), by name, with
// their ghost layers, and the arrays the model's features keep (wave3d's "traces": rows of one
// value per receiver, one row per recorded step). What checkpoints hold; what a run restarts from.
template <class T>
struct State {
    std::int64_t step = 0;
    std::vector<std::pair<std::string, HostField<T>>> fields;
    std::vector<std::pair<std::string, std::vector<T>>> arrays;
    // Over MPI ranks, in place of `fields`: what reads every state field's cells of a box of the
    // grid's interior (`lo`, `n` along x, y, z; each field's values x fastest, in the model's
    // order), so that each rank reads its own part of a checkpoint and never holds the grid
    // (app::checkpoint_state, HDF5). The decomposed engine calls it once, with its own cells.
    using BoxReader = std::function<std::vector<std::pair<std::string, std::vector<T>>>(
        std::array<int, 3> lo, std::array<int, 3> n)>;
    BoxReader read_box = {};

    const HostField<T>& field(std::string_view name) const;  // Error when absent
    const std::vector<T>* array(std::string_view name) const;  // null when absent
};

// This process' cells of a field: a box of the grid's interior, `lo` and `n` cells along x, y, z,
// x fastest. One process owns the whole grid; over MPI ranks each its own part. What the files
// that every rank writes at once take (io/h5.hpp): no rank holds more than its own cells.
template <class T>
struct PartField {
    std::array<int, 3> lo{0, 0, 0}, n{1, 1, 1};
    std::vector<T> values;
};
// This process' part of a State: its cells of every state field (one box for all), every array
// whole.
template <class T>
struct PartState {
    std::int64_t step = 0;
    std::array<int, 3> lo{0, 0, 0}, n{1, 1, 1};
    std::vector<std::pair<std::string, std::vector<T>>> fields;
    std::vector<std::pair<std::string, std::vector<T>>> arrays;
};

class Engine {
public:
    virtual ~Engine() = default;
    virtual const ModelInfo& model() const = 0;
    virtual Precision precision() const = 0;
    virtual void advance(std::int64_t steps) = 0;
    virtual std::int64_t step() const = 0;  // steps from the model's t = 0 (a restart's included)
    // The model's figures of the current state (reductions on the device for CUDA).
    virtual Observables observables() = 0;
    // A field's interior (x fastest) or an array, whatever the precision: for reports.
    virtual std::vector<double> values(std::string_view name) = 0;
    // The arrays the model's features keep ("traces" for point receivers).
    virtual std::vector<std::string> arrays() const = 0;
    virtual KernelInfo kernel_info() const = 0;
    std::string kernel() const { return kernel_info().name; }
    virtual void synchronize() {}
    // CUDA engines work on a stream of their own. For work of others on the same memory (a
    // cudaStream_t; null: the legacy default stream, PyTorch's and CuPy's unless told otherwise):
    // the engine's next work waits for what is queued on `stream` now...
    virtual void wait_for(void* stream) { (void)stream; }
    // ...and what is queued on `stream` later waits for the engine's work queued so far.
    virtual void signal_to(void* stream) { (void)stream; }
    // Advances and returns the elapsed milliseconds (CUDA events on the GPU, a clock on the CPU).
    virtual double timed_advance_ms(std::int64_t steps);
    // Changes the strategy and its knobs (o's kernel, graphs, chunk, depth) between steps, the
    // fields kept: how the tuner measures candidates without building an engine for each. CUDA
    // only (the CPU engines have one loop each); a refused launch (UsageError) changes nothing.
    virtual void relaunch(const EngineOptions& o);
    // A run over several ranks: seconds this rank spent in halo exchanges that nothing overlapped.
    virtual double exposed_communication_s() const { return 0; }
    // A run over several ranks: when the halos travel, for the report (the decomposed engine
    // says how too).
    virtual std::string halo_schedule() const { return "before each pass"; }
    // A run over several ranks: bytes of halos this rank sends per step (0 where not counted).
    virtual double halo_bytes_per_step() const { return 0; }
};

// A field's values where the engine keeps them, for zero-copy views (the Python bindings' DLPack
// capsules): the first interior cell, and the strides in elements of y and z (x is contiguous).
// `device`: the CUDA device, or -1 for host memory. The view names the field's values at the
// current step: the engine trades a field's buffers as it steps, so take a new view after
// advance(). What is written through it before the next advance() is what that advance starts
// from; it stays valid memory while the engine lives.
template <class T>
struct FieldView {
    T* data = nullptr;
    int device = -1;
    Extent extent;
    std::int64_t stride_y = 0, stride_z = 0;
};

template <class T>
class TypedEngine : public Engine {
public:
    Precision precision() const override { return precision_of<T>(); }
    // The latest values of a field, with its ghost layer as the model's boundary defines it.
    virtual HostField<T> field(std::string_view name) = 0;
    // Replaces a field's values (a stencil field's ghost layer is the model's boundary, not the
    // given one: zero, or mirrored).
    virtual void set_field(std::string_view name, const HostField<T>& values) = 0;
    virtual std::vector<T> array(std::string_view name) = 0;
    // A field's latest values without stalling the time loop: on the GPU a device copy on the
    // compute stream and a host copy on a copy stream. Blocks only while all snapshot buffers
    // are taken.
    virtual std::unique_ptr<FieldCopy<T>> snapshot(std::string_view name) = 0;
    // Where the field's current values are (see FieldView).
    virtual FieldView<T> view(std::string_view name) = 0;
    // Replaces a field's interior from memory laid out as a FieldView's (x contiguous, strides in
    // elements), host memory or, on a CUDA engine, device memory of its GPU; the ghost layer
    // stays the model's. Returns once the copy is done: `src` may then be reused.
    virtual void copy_in(std::string_view name, const T* src, std::int64_t stride_y, std::int64_t stride_z) = 0;
    // Every state field, every array, the step. (Over several ranks, on rank 0: what checkpoints
    // write; the other ranks get the step alone, their memory spared the whole grid.)
    virtual State<T> state();
    // This process' part of a field, and of the state (over several ranks every rank calls them at
    // once: the arrays are gathered).
    virtual PartField<T> part_field(std::string_view name);
    PartState<T> part_state();
};

// `initial` null: the model's own initial state (built on the device for CUDA). Otherwise the run
// continues from it: every state field of the model must be there. Throws UsageError for an
// unknown kernel, Error when the backend is unavailable.
template <class T>
std::unique_ptr<TypedEngine<T>> make_engine(const Problem& problem, Backend backend, const EngineOptions& options = {},
                                            const State<T>* initial = nullptr);

// CUDA devices this process can use: 0 without a GPU, a driver, or a CUDA build.
int cuda_device_count();

// The strategies a backend offers for a model ("cpu" and "omp" have one each); `chunked_only`:
// those that take --chunk (rows or planes per block).
std::vector<std::string> kernel_names(Backend backend, std::string_view model, bool chunked_only = false);
std::string kernel_description(Backend backend, std::string_view model, std::string_view kernel);
// Whether the kernel takes --depth (advances several steps per pass over memory).
bool kernel_takes_depth(Backend backend, std::string_view model, std::string_view kernel);
// The strategies of `model` this build leaves out, each with why (the TMA kernels in a build for
// an architecture before sm_90).
std::vector<std::pair<std::string, std::string>> kernels_left_out(Backend backend, std::string_view model);

}  // namespace strata
