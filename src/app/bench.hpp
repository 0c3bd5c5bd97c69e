#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "strata/core/field_ops.hpp"
#include "strata/core/types.hpp"
#include "strata/engine.hpp"
#include "strata/params.hpp"
#include "strata/run.hpp"

namespace strata::app {

// Every state field random in its typical range (never constant: an unwritten cell shows), from
// `seed` up; the engines apply the model's boundary to the ghosts.
template <class T>
State<T> random_state(const Problem& p, std::uint64_t seed) {
    State<T> s;
    for (const FieldDecl& f : p.model().fields) {
        if (!holds_state(f.role)) continue;
        HostField<T> u(p.extent());
        fill_random(u, seed++, f.lo, f.hi);
        s.fields.emplace_back(f.name, std::move(u));
    }
    return s;
}

// The bench's snapshot options: a run's, with frames going to strata-bench-out.
inline IoOptions bench_io() {
    IoOptions io;
    io.out_dir = "strata-bench-out";
    return io;
}

struct BenchOptions {
    std::string model;                 // any registered model
    int n = 0;                         // 0: the default (8192 for 2D models, 512 for 3D ones)
    Params params;                     // the model's options beyond the grid (heat3d's stencil)
    std::vector<Precision> precisions{Precision::fp32};
    Backend backend = Backend::cuda;
    std::vector<std::string> kernels;  // empty: every kernel of the backend
    std::vector<bool> graphs{true};    // CUDA launch modes to time
    int steps = 0;                     // steps per timed repeat; 0: one captured graph's worth
                                       // (64 passes of the kernel's depth)
    int repeats = 7;
    int chunk = 0;
    std::vector<int> depths;           // temporal kernels: one row per depth (empty: the default)
    std::string json_path;
    std::int64_t snapshot_every = 0;   // > 0: the snapshot-overhead benchmark instead of the table
    IoOptions io = bench_io();         // with snapshot_every: where and how frames are written
    int frames = 20;                   // with snapshot_every: frames per measured run
};

void validate(const BenchOptions& o);
// Times each kernel x precision x launch mode and prints one table (and JSON when asked).
void run_bench(const BenchOptions& o, std::ostream& out);

}  // namespace strata::app
