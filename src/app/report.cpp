#include "report.hpp"

#include <cstdio>
#include <ostream>

#ifdef STRATA_HAVE_CUDA
#include "cuda/cuda_engines.hpp"
#endif

#include "strata/core/error.hpp"

namespace strata {

std::string format_value(std::string_view conversion, const nlohmann::json& v) {
    // The conversion without its length modifiers; integers are printed as long long.
    std::string spec;
    for (char c : conversion)
        if (c != 'l' && c != 'h' && c != 'z' && c != 'j' && c != 't') spec += c;
    const char type = spec.back();
    char buf[256];
    if (type == 'd' || type == 'i' || type == 'u' || type == 'x') {
        spec.insert(spec.size() - 1, "ll");
        std::snprintf(buf, sizeof buf, spec.c_str(), static_cast<long long>(v.get<std::int64_t>()));
    } else if (type == 's') {
        std::snprintf(buf, sizeof buf, spec.c_str(), v.get<std::string>().c_str());
    } else {
        std::snprintf(buf, sizeof buf, spec.c_str(), v.get<double>());
    }
    return buf;
}

void Report::line(std::string_view format, std::initializer_list<Item> items) {
    std::string text;
    auto item = items.begin();
    for (std::size_t i = 0; i < format.size(); ++i) {
        if (format[i] != '%') {
            text += format[i];
            continue;
        }
        if (i + 1 < format.size() && format[i + 1] == '%') {
            text += '%';
            ++i;
            continue;
        }
        const std::size_t end = format.find_first_of("diuxeEfFgGs", i + 1);
        if (end == std::string_view::npos || item == items.end())
            throw Error("report line '" + std::string(format) + "' has more conversions than values");
        text += format_value(format.substr(i, end - i + 1), item->value);
        if (!item->key.empty()) json_[item->key] = item->value;
        ++item;
        i = end;
    }
    if (item != items.end()) throw Error("report line '" + std::string(format) + "' has more values than conversions");
    out_ << text << '\n';
}

void Report::text(std::string_view s) { out_ << s; }

void Report::value(const std::string& key, nlohmann::json v) { json_[key] = std::move(v); }

namespace app {

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

void report_throughput(Report& r, const Throughput& t, int flops_per_cell, int bytes_per_cell) {
    r.line("Wall time (s)               : %.6g", {{"wall_s", t.wall_s}});
    r.line("Time per step (ms)          : %.6g", {{"ms_per_step", t.ms_per_step}});
    r.line("Cell updates (GCells/s)     : %.6g", {{"gcells_per_s", t.gcells_per_s}});
    r.line("Sustained Gflops Rate       : %.6g   (%d flops per cell)",
           {{"gflops", t.gflops}, {"flops_per_cell", flops_per_cell}});
    r.line("Effective bandwidth (GB/s)  : %.6g   (%d bytes per cell, the minimum traffic)",
           {{"effective_gbs", t.effective_gbs}, {"bytes_per_cell", bytes_per_cell}});
}

void report_kernel(Report& r, const KernelInfo& k, int min_bytes_per_cell) {
    if (k.depth == 1) {
        r.value("depth", k.depth);
        r.value("bytes_per_cell_update", k.bytes_per_cell_update);
        return;
    }
    r.line("Temporal blocking            : %d steps per pass, %.2f bytes moved per cell update "
           "(a single sweep moves at least %d)",
           {{"depth", k.depth}, {"bytes_per_cell_update", k.bytes_per_cell_update}, {"", min_bytes_per_cell}});
}

void report_roofline(Report& r, bool on_gpu, double effective_gbs) {
    if (!on_gpu) return;
#ifdef STRATA_HAVE_CUDA
    const cuda::ProbeResult p = cuda::cached_or_run_probe(r.out());
    r.line("Share of copy bandwidth      : %.1f%% of %.0f GB/s measured on %s",
           {{"pct_copy_bandwidth", 100 * effective_gbs / p.copy_gbs}, {"copy_gbs", p.copy_gbs},
            {"device", p.device_name}});
#else
    (void)r, (void)effective_gbs;
#endif
}

}  // namespace app
}  // namespace strata
