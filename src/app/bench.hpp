#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "strata/core/types.hpp"
#include "strata/models/heat3d.hpp"

namespace strata::app {

struct BenchOptions {
    std::string model;                 // "apf" or "heat3d"
    int n = 0;                         // 0: the model's default (8192 for apf, 512 for heat3d)
    HeatStencil stencil = HeatStencil::p7;
    std::vector<Precision> precisions{Precision::fp32};
    Backend backend = Backend::cuda;
    std::vector<std::string> kernels;  // empty: every kernel of the backend
    std::vector<bool> graphs{true};    // CUDA launch modes to time
    int steps = 0;                     // steps per timed repeat; 0: one captured graph's worth
                                       // (64 passes of the kernel's depth)
    int repeats = 7;
    int chunk = 0;
    std::vector<int> depths;           // temporal kernel: one row per depth (empty: its default)
    std::string json_path;
    std::int64_t snapshot_every = 0;   // > 0: the snapshot-overhead benchmark instead of the table
    std::string out_dir = "strata-bench-out";
    int writer_threads = 0;
    int frames = 20;                   // with snapshot_every: frames per measured run
};

void validate(const BenchOptions& o);
// Times each kernel x precision x launch mode and prints one table (and JSON when asked).
void run_bench(const BenchOptions& o, std::ostream& out);

}  // namespace strata::app
