#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace strata::app {

// The figures every run reports, from the wall time and the model's per-cell counts.
struct Throughput {
    double wall_s = 0, ms_per_step = 0, gcells_per_s = 0, gflops = 0, effective_gbs = 0;
};
Throughput throughput(double wall_s, std::int64_t steps, std::int64_t cells, int flops_per_cell,
                      int bytes_per_cell);
void add_throughput(nlohmann::json& report, const Throughput& t, int flops_per_cell, int bytes_per_cell);
std::string format_throughput(const Throughput& t, int flops_per_cell, int bytes_per_cell);
void write_json_file(const std::string& path, const nlohmann::json& report);

}  // namespace strata::app
