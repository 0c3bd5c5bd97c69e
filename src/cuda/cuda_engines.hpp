#pragma once
// The CUDA backend as seen from plain C++ (no CUDA headers): strategies, devices, the probe.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/engine.hpp"
#include "strategy_names.hpp"

namespace strata::cuda {

// The strategies of a model's ladder (strategy_names.hpp).
std::vector<std::string> kernel_names(Ladder l, bool chunked_only);
std::string kernel_description(Ladder l, std::string_view name);
bool kernel_takes_depth(Ladder l, std::string_view name);
// A strategy this build leaves out (the TMA ones where an architecture before sm_90 is built):
// why, as an error's text; "" for any other name. And which they are.
std::string kernel_left_out(Ladder l, std::string_view name);
std::vector<std::string> kernels_left_out(Ladder l);
// The strategy a run gets without --kernel (until the autotuner's wisdom replaces it), from the
// model's dimension and radius, and the grid's cells.
std::string default_kernel(Ladder l, std::int64_t cells);

// Throws Error with a clear message when no usable device is present.
void require_device();
int device_count();  // 0 when there is no device or no driver
void use_device(int device);  // this thread's current device
// Throws UsageError (memory.hpp's refusal) when `bytes` exceed the current device's free memory.
void require_device_memory(std::int64_t bytes, const std::string& what, const std::string& hint);
void print_devices(std::ostream& out);
// The current device for the tuner's wisdom: name, SMs, memory, driver and runtime versions.
std::string device_identity();

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
