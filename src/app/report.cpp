#include "report.hpp"

#include <cstdio>
#include <ostream>

#ifdef STRATA_HAVE_CUDA
#include "../cuda/cuda_engines.hpp"
#endif

#include "strata/core/error.hpp"

namespace strata::app {

Throughput throughput(double wall_s, std::int64_t steps, std::int64_t cells, int flops_per_cell,
                      int bytes_per_cell) {
    Throughput t;
    t.wall_s = wall_s;
    if (steps <= 0 || wall_s <= 0) return t;
    const double updates = double(steps) * double(cells);
    t.ms_per_step = 1e3 * wall_s / double(steps);
    t.gcells_per_s = updates / wall_s * 1e-9;
    t.gflops = updates * flops_per_cell / wall_s * 1e-9;
    t.effective_gbs = updates * bytes_per_cell / wall_s * 1e-9;
    return t;
}

void add_throughput(nlohmann::json& r, const Throughput& t, int flops_per_cell, int bytes_per_cell) {
    r["wall_s"] = t.wall_s;
    r["ms_per_step"] = t.ms_per_step;
    r["gcells_per_s"] = t.gcells_per_s;
    r["gflops"] = t.gflops;
    r["flops_per_cell"] = flops_per_cell;
    r["effective_gbs"] = t.effective_gbs;
    r["bytes_per_cell"] = bytes_per_cell;
}

std::string format_throughput(const Throughput& t, int flops_per_cell, int bytes_per_cell) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "Wall time (s)               : %.6g\n"
                  "Time per step (ms)          : %.6g\n"
                  "Cell updates (GCells/s)     : %.6g\n"
                  "Sustained Gflops Rate       : %.6g   (%d flops per cell)\n"
                  "Effective bandwidth (GB/s)  : %.6g   (%d bytes per cell, the minimum traffic)\n",
                  t.wall_s, t.ms_per_step, t.gcells_per_s, t.gflops, flops_per_cell, t.effective_gbs,
                  bytes_per_cell);
    return buf;
}

void add_kernel_info(std::ostream& out, nlohmann::json& report, const KernelInfo& k, int min_bytes_per_cell) {
    report["depth"] = k.depth;
    report["bytes_per_cell_update"] = k.bytes_per_cell_update;
    if (k.depth == 1) return;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "Temporal blocking            : %d steps per pass, %.2f bytes moved per cell update "
                  "(a single sweep moves at least %d)\n",
                  k.depth, k.bytes_per_cell_update, min_bytes_per_cell);
    out << buf;
}

void add_roofline(std::ostream& out, nlohmann::json& report, bool on_gpu, double effective_gbs) {
    if (!on_gpu) return;
#ifdef STRATA_HAVE_CUDA
    const cuda::ProbeResult p = cuda::cached_or_run_probe(out);
    const double pct = 100 * effective_gbs / p.copy_gbs;
    char buf[256];
    std::snprintf(buf, sizeof buf, "Share of copy bandwidth      : %.1f%% of %.0f GB/s measured on %s\n", pct,
                  p.copy_gbs, p.device_name.c_str());
    out << buf;
    report["copy_gbs"] = p.copy_gbs;
    report["pct_copy_bandwidth"] = pct;
    report["device"] = p.device_name;
#else
    (void)out, (void)report, (void)effective_gbs;
#endif
}

}  // namespace strata::app
