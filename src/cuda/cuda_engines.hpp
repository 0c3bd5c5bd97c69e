#pragma once
// The CUDA backend as seen from plain C++ (no CUDA headers): engines, strategies, devices.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/engine.hpp"

namespace strata::cuda {

template <class T>
std::unique_ptr<ApfEngine<T>> make_apf_engine(const ApfParams& p, const ApfFields<T>* initial,
                                              const EngineOptions& o);
template <class T>
std::unique_ptr<HeatEngine<T>> make_heat_engine(const HeatParams& p, const HostField<T>* initial,
                                                const EngineOptions& o);
template <class T>
std::unique_ptr<WaveEngine<T>> make_wave_engine(const WaveProblem<T>& p, const WaveState<T>* initial,
                                                const EngineOptions& o);

std::vector<std::string> kernel_names(std::string_view model, bool chunked_only);
std::string kernel_description(std::string_view model, std::string_view name);
// The strategy a run gets without --kernel (until the autotuner's wisdom replaces it).
// `points`: heat3d's stencil (7, 19 or 27), 0 for the other models.
std::string default_kernel(std::string_view model, std::int64_t cells, int points = 0);

// Throws Error with a clear message when no usable device is present.
void require_device();
int device_count();  // 0 when there is no device or no driver
void print_devices(std::ostream& out);

// `strata probe`: measured bandwidths of the current device, cached per device.
struct ProbeResult {
    std::string device_name, device_uuid, measured_at;
    double copy_gbs = 0;  // device-to-device copy, bytes read + bytes written
    double h2d_pageable_gbs = 0, h2d_pinned_gbs = 0, d2h_pageable_gbs = 0, d2h_pinned_gbs = 0;
};
ProbeResult run_probe();
std::optional<ProbeResult> cached_probe();       // for the current device, if measured before
ProbeResult cached_or_run_probe(std::ostream& log);  // measures once, then reads the cache
std::string probe_cache_path();
void print_probe(std::ostream& out, const ProbeResult& p);

}  // namespace strata::cuda
