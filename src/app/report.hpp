#pragma once
#include <cstdint>
#include <string>

#include "strata/engine.hpp"
#include "strata/report.hpp"

namespace strata::app {

// The figures every run reports, from the wall time and the model's per-cell counts.
struct Throughput {
    double wall_s = 0, ms_per_step = 0, gcells_per_s = 0, gflops = 0, effective_gbs = 0;
};
Throughput throughput(double wall_s, std::int64_t steps, std::int64_t cells, int flops_per_cell,
                      int bytes_per_cell);
void report_throughput(Report& r, const Throughput& t, int flops_per_cell, int bytes_per_cell);
// The kernel's steps per pass and its device-memory traffic per cell update (what a temporal
// kernel saves against the single-sweep minimum); the line only for a temporal kernel.
void report_kernel(Report& r, const KernelInfo& k, int min_bytes_per_cell);
// On the GPU, the effective bandwidth as a share of the device's measured copy bandwidth (the
// probe runs once per device and is cached). Nothing on a CPU.
void report_roofline(Report& r, bool on_gpu, double effective_gbs);

}  // namespace strata::app
