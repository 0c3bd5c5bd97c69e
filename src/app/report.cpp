#include "report.hpp"

#include <cstdio>
#include <fstream>

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

void write_json_file(const std::string& path, const nlohmann::json& report) {
    std::ofstream f(path);
    if (!f) throw Error("cannot open '" + path + "' for writing the JSON report");
    f << report.dump(2) << '\n';
    if (!f) throw Error("failed writing the JSON report to '" + path + "'");
}

}  // namespace strata::app
