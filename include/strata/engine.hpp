#pragma once
// An engine owns a model's state on one backend and advances it in time. The CLI, the
// benchmarks and the tests all drive models through these two interfaces, so a backend or
// strategy added here is reachable from every one of them.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/core/types.hpp"
#include "strata/models/aliev_panfilov.hpp"
#include "strata/models/heat3d.hpp"
#include "strata/models/wave3d.hpp"

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
};

// What the chosen strategy does per pass over memory.
struct KernelInfo {
    std::string name;
    int depth = 1;                       // steps per pass (1 unless temporal)
    double bytes_per_cell_update = 0;    // device-memory traffic per cell update, from the tile
                                         // geometry (the model's minimum for single sweeps)
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

template <class T>
class ApfEngine {
public:
    virtual ~ApfEngine() = default;
    virtual void advance(std::int64_t steps) = 0;
    virtual ApfStats stats() = 0;        // of the latest E
    virtual ApfFields<T> fields() = 0;   // the latest state, copied to the host
    // The latest E, without stalling the time loop: on the GPU a device copy on the compute
    // stream and a host copy on a copy stream. Blocks only while all snapshot buffers are taken.
    virtual std::unique_ptr<FieldCopy<T>> snapshot() = 0;
    virtual std::string kernel() const = 0;
    virtual KernelInfo kernel_info() const { return {kernel(), 1, AlievPanfilov<T>::min_bytes_per_cell}; }
    virtual void synchronize() {}
    // Advances and returns the elapsed milliseconds (CUDA events on the GPU, a clock on the CPU).
    virtual double timed_advance_ms(std::int64_t steps);
};

template <class T>
class HeatEngine {
public:
    virtual ~HeatEngine() = default;
    virtual void advance(std::int64_t steps) = 0;
    virtual HeatStats stats() = 0;
    virtual double max_error(double t) = 0;  // against the exact solution at time t
    virtual HostField<T> field() = 0;
    virtual std::unique_ptr<FieldCopy<T>> snapshot() = 0;  // the latest u, as ApfEngine's
    virtual std::string kernel() const = 0;
    virtual KernelInfo kernel_info() const = 0;
    virtual void synchronize() {}
    virtual double timed_advance_ms(std::int64_t steps);
};

template <class T>
class WaveEngine {
public:
    virtual ~WaveEngine() = default;
    virtual void advance(std::int64_t steps) = 0;
    virtual WaveState<T> state() = 0;     // p^n, p^{n-1}, n and the traces, copied to the host
    virtual std::vector<T> traces() = 0;  // the recorded steps x receivers, row-major
    virtual std::unique_ptr<FieldCopy<T>> snapshot() = 0;  // the latest p, as ApfEngine's
    virtual std::string kernel() const = 0;
    virtual KernelInfo kernel_info() const { return {kernel(), 1, Wave3D<T>::min_bytes_per_cell}; }
    virtual void synchronize() {}
    virtual double timed_advance_ms(std::int64_t steps);
};

// `initial` may be null: the engine then builds the model's own initial state (on the device
// for CUDA). Throws UsageError for an unknown kernel, Error when the backend is unavailable.
template <class T>
std::unique_ptr<ApfEngine<T>> make_apf_engine(Backend backend, const ApfParams& params,
                                              const ApfFields<T>* initial,
                                              const EngineOptions& options = {});
template <class T>
std::unique_ptr<HeatEngine<T>> make_heat_engine(Backend backend, const HeatParams& params,
                                                const HostField<T>* initial,
                                                const EngineOptions& options = {});

// A null `initial` starts from rest (p = 0) at step 0: only the sources make waves. Otherwise the
// run continues from `initial->step` with the traces recorded before it; Error when their count
// is not min(step, record_steps) x receivers.
template <class T>
std::unique_ptr<WaveEngine<T>> make_wave_engine(Backend backend, const WaveProblem<T>& problem,
                                                const WaveState<T>* initial, const EngineOptions& options = {});

// CUDA devices this process can use: 0 without a GPU, a driver, or a CUDA build.
int cuda_device_count();

// The strategies a backend offers for a model ("cpu" and "omp" have one each); `chunked_only`:
// those that take --chunk (rows or planes per block).
std::vector<std::string> kernel_names(Backend backend, std::string_view model, bool chunked_only = false);
std::string kernel_description(Backend backend, std::string_view model, std::string_view kernel);

}  // namespace strata
