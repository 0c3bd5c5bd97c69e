// Devices, the strategy names, and `strata probe`: the measured bandwidths every report is
// compared against, cached per device. Host code only: the CUDA runtime API, no kernels.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "check.hpp"
#include "strata/core/memory.hpp"
#include "cuda_engines.hpp"
#include "device_buffer.hpp"
#include "strategy_names.hpp"

namespace strata::cuda {

namespace {
#ifdef STRATA_CUDA_TMA
constexpr bool kTmaBuilt = true;
#else
constexpr bool kTmaBuilt = false;  // an architecture before sm_90 is among those built
#endif
bool built(const StrategyDoc& d) { return kTmaBuilt || !d.hopper; }
template <std::size_t N>
std::vector<std::string> names_of(const std::array<StrategyDoc, N>& docs, bool chunked_only) {
    std::vector<std::string> out;
    for (const auto& d : docs)
        if (built(d) && (d.chunked || !chunked_only)) out.emplace_back(d.name);
    return out;
}
// Calls f with the strategy docs of a model's ladder.
template <class F>
auto with_docs(Ladder l, F&& f) {
    if (l.cells_only) return l.dims == 2 ? f(kStrategiesCells2d) : f(kStrategiesCells3d);
    if (l.radius == 4) return f(kStrategiesWave);
    return l.dims == 2 ? f(kStrategies2d) : f(kStrategies3d);
}
}  // namespace

std::vector<std::string> kernel_names(Ladder l, bool chunked_only) {
    return with_docs(l, [&](const auto& docs) { return names_of(docs, chunked_only); });
}

std::string kernel_description(Ladder l, std::string_view name) {
    return with_docs(l, [&](const auto& docs) {
        for (const auto& d : docs)
            if (d.name == name) return std::string(d.what);
        return std::string();
    });
}

std::string kernel_left_out(Ladder l, std::string_view name) {
    return with_docs(l, [&](const auto& docs) {
        for (const auto& d : docs)
            if (d.name == name && !built(d))
                return "the " + std::string(name) + " kernel needs sm_90 (Hopper's Tensor Memory Accelerator), and this " +
                       "build includes sm_" STRATA_CUDA_ARCHS " (build with -DCMAKE_CUDA_ARCHITECTURES=90 for it)";
        return std::string();
    });
}
std::vector<std::string> kernels_left_out(Ladder l) {
    return with_docs(l, [&](const auto& docs) {
        std::vector<std::string> out;
        for (const auto& d : docs)
            if (!built(d)) out.emplace_back(d.name);
        return out;
    });
}

bool kernel_takes_depth(Ladder l, std::string_view name) {
    return with_docs(l, [&](const auto& docs) {
        for (const auto& d : docs)
            if (d.name == name) return d.temporal;
        return false;
    });
}

std::string default_kernel(Ladder l, std::int64_t cells) {
    const int dims = l.dims, radius = l.radius;
    // From strata bench on an H100 (docs/performance.md). Below about a million cells a step is
    // a few microseconds and the streaming kernels have too few blocks to fill the GPU.
    if (cells < (std::int64_t(1) << 20)) return "naive";
    // A cells-only model: the temporal kernel where it pays (radius 1 in 3D, up to 2 in 2D); where it does
    // not, engine.cuh falls back to the best single sweep that fits. On an H100: in 2D at 8192^2
    // (docs/runs/104) the 9-point box at depth 8 / 6 runs 1015 / 597 GCells/s in fp32 / fp64, 3.2x
    // cached; a two-field mirror file with a coefficient and three divisions per cell at depth 4
    // runs 218 / 116, 1.8x naive, its best single sweep. In 3D at depth 2 Gray-Scott at 384^3 runs
    // 237 / 126, 1.6x / 1.5x cached, and the 27-point box at 512^3 244 / 115 against stream's 155 /
    // 109 (docs/runs/109). Past radius 1 in 3D a single sweep: the radius-2 wave's temporal kernel
    // at depth 2 is 0.97x cached in fp32, 1.03x stream in fp64 (docs/runs/155), not worth a
    // default; of the single sweeps cached (its rows' windows in registers) leads stream (a
    // shared-memory ring of planes) on every radius-2 file at 512^3: fp32 +10-13%, bf16 +52-74%,
    // fp64 +3.5-4.8% (docs/runs/165). `strata tune` measures them all.
    if (l.cells_only) return dims == 2 || radius == 1 ? "temporal" : "cached";
    // apf 8192^2: temporal depth 4 is 2.98x (fp32) and 2.42x (fp64) the best single sweep.
    if (dims == 2) return "temporal";
    if (radius == 4) return "async";  // wave3d: 91.3% / 92.6% of copy (fp32 / fp64, 512^3); naive 71% / 74%
    // heat at 512^3: 7pt temporal depth 4 is 2.4x (fp32) and 2.3x (fp64) cached, the best single
    // sweep; 19pt temporal depth 2 is 1.6x / 1.7x async; the 27-point box's, with two weighted sums
    // per plane (heat3d.hpp's BoxSums), 1.5x tma (the file of its weights: docs/runs/125).
    return "temporal";
}

int device_count() {
    // The one CUDA call whose error is an answer, not a failure: no device, no driver.
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess) return n;
    (void)cudaGetLastError();  // (cleared, so that no later check finds it)
    return 0;
}

void use_device(int d) { STRATA_CUDA_CHECK(cudaSetDevice(d)); }

void require_device() {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0)
        throw Error(std::string("the cuda backend needs a GPU, and this machine has no usable CUDA device (") +
                    (e != cudaSuccess ? cudaGetErrorString(e) : "none found") + ")");
}

void require_device_memory(std::int64_t bytes, const std::string& what, const std::string& hint) {
    std::size_t free = 0, total = 0;
    STRATA_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    if (bytes > std::int64_t(free)) {
        cudaDeviceProp p{};
        int dev = 0;
        STRATA_CUDA_CHECK(cudaGetDevice(&dev));
        STRATA_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
        throw UsageError(memory_refusal(what, bytes, std::int64_t(free), std::string(p.name) + "'s memory",
                                        "of " + format_bytes(double(total)) + "; " + hint));
    }
}

namespace {

std::string uuid_string(const cudaUUID_t& u) {
    char buf[64];
    const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
    std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    return buf;
}

cudaDeviceProp current_properties() {
    int dev = 0;
    STRATA_CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp p{};
    STRATA_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
    return p;
}

int attribute(cudaDeviceAttr a, int dev) {
    int v = 0;
    STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, dev));
    return v;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Median bytes/s of `op` over repeats, timed with events on `s` after warm-ups.
template <class Op>
double measure_gbs(double bytes, int warmups, int repeats, cudaStream_t s, Op op) {
    Event a, b;
    for (int i = 0; i < warmups; ++i) op();
    STRATA_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<double> gbs;
    for (int i = 0; i < repeats; ++i) {
        STRATA_CUDA_CHECK(cudaEventRecord(a.get(), s));
        op();
        STRATA_CUDA_CHECK(cudaEventRecord(b.get(), s));
        STRATA_CUDA_CHECK(cudaEventSynchronize(b.get()));
        float ms = 0;
        STRATA_CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
        gbs.push_back(bytes / (ms * 1e-3) * 1e-9);
    }
    return median(gbs);
}

nlohmann::json to_json(const ProbeResult& p) {
    return {{"device_name", p.device_name},       {"device_uuid", p.device_uuid},
            {"measured_at", p.measured_at},       {"copy_gbs", p.copy_gbs},
            {"h2d_pageable_gbs", p.h2d_pageable_gbs}, {"h2d_pinned_gbs", p.h2d_pinned_gbs},
            {"d2h_pageable_gbs", p.d2h_pageable_gbs}, {"d2h_pinned_gbs", p.d2h_pinned_gbs}};
}

}  // namespace

void print_devices(std::ostream& out) {
    const int n = device_count();
    if (n == 0) {
        out << "  devices       : none usable (no GPU or no driver)\n";
        return;
    }
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    out << "  CUDA runtime  : " << runtime / 1000 << "." << (runtime % 1000) / 10 << ", driver " << driver / 1000 << "."
        << (driver % 1000) / 10 << "\n";
    for (int d = 0; d < n; ++d) {
        cudaDeviceProp p{};
        STRATA_CUDA_CHECK(cudaGetDeviceProperties(&p, d));
        const int sm_clock = attribute(cudaDevAttrClockRate, d), mem_clock = attribute(cudaDevAttrMemoryClockRate, d);
        const int bus = attribute(cudaDevAttrGlobalMemoryBusWidth, d);
        char buf[1024];
        std::snprintf(buf, sizeof buf,
                      "  device %d      : %s (compute capability %d.%d, %s)\n"
                      "    SMs %d, SM clock %.0f MHz, memory clock %.0f MHz, bus %d bits (theoretical %.0f GB/s)\n"
                      "    global memory %.1f GiB, L2 %.1f MiB\n"
                      "    shared memory %zu KiB per block (%zu KiB opt-in), %zu KiB per SM; registers %d per block, "
                      "%d per SM\n"
                      "    max threads %d per block, %d per SM; warp %d\n",
                      d, p.name, p.major, p.minor, uuid_string(p.uuid).c_str(), p.multiProcessorCount,
                      sm_clock / 1e3, mem_clock / 1e3, bus, 2.0 * mem_clock * 1e3 * (bus / 8) / 1e9,
                      double(p.totalGlobalMem) / (1 << 30), double(p.l2CacheSize) / (1 << 20),
                      p.sharedMemPerBlock / 1024, p.sharedMemPerBlockOptin / 1024,
                      p.sharedMemPerMultiprocessor / 1024, p.regsPerBlock, p.regsPerMultiprocessor,
                      p.maxThreadsPerBlock, p.maxThreadsPerMultiProcessor, p.warpSize);
        out << buf;
    }
}

std::string device_identity() {
    require_device();
    const cudaDeviceProp p = current_properties();
    int driver = 0, runtime = 0;
    STRATA_CUDA_CHECK(cudaDriverGetVersion(&driver));
    STRATA_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    char text[512];
    std::snprintf(text, sizeof text, "%s, %d SMs, %.1f GiB, driver %d, runtime %d", p.name, p.multiProcessorCount,
                  double(p.totalGlobalMem) / double(1 << 30), driver, runtime);
    return text;
}

std::string probe_cache_path() {
    std::filesystem::path dir;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
        dir = x;
    } else if (const char* h = std::getenv("HOME"); h && *h) {
        dir = std::filesystem::path(h) / ".cache";
    } else {
        dir = std::filesystem::temp_directory_path();
    }
    return (dir / "strata" / ("probe-" + uuid_string(current_properties().uuid) + ".json")).string();
}

ProbeResult run_probe() {
    require_device();
    const cudaDeviceProp prop = current_properties();
    ProbeResult r;
    r.device_name = prop.name;
    r.device_uuid = uuid_string(prop.uuid);
    const std::time_t now = std::time(nullptr);
    char when[64];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    r.measured_at = when;

    Stream stream;
    const cudaStream_t s = stream.get();
    // Far beyond L2, so the copy measures device memory, not the cache.
    const std::size_t copy_bytes = std::size_t(1) << 30;
    {
        DeviceBuffer<char> src(copy_bytes), dst(copy_bytes);
        STRATA_CUDA_CHECK(cudaMemsetAsync(src.get(), 1, copy_bytes, s));
        r.copy_gbs = measure_gbs(2.0 * copy_bytes, 3, 15, s, [&] {
            STRATA_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), copy_bytes, cudaMemcpyDeviceToDevice, s));
        });
    }
    const std::size_t host_bytes = std::size_t(256) << 20;
    DeviceBuffer<char> dev(host_bytes);
    std::vector<char> pageable(host_bytes, 1);
    char* pinned = nullptr;
    STRATA_CUDA_CHECK(cudaMallocHost(&pinned, host_bytes));
    std::unique_ptr<char, decltype(&cudaFreeHost)> pinned_owner(pinned, &cudaFreeHost);
    std::fill(pinned, pinned + host_bytes, 1);
    auto copy = [&](void* to, const void* from, cudaMemcpyKind kind) {
        return [=] { STRATA_CUDA_CHECK(cudaMemcpyAsync(to, from, host_bytes, kind, s)); };
    };
    r.h2d_pageable_gbs = measure_gbs(host_bytes, 1, 5, s, copy(dev.get(), pageable.data(), cudaMemcpyHostToDevice));
    r.h2d_pinned_gbs = measure_gbs(host_bytes, 1, 5, s, copy(dev.get(), pinned, cudaMemcpyHostToDevice));
    r.d2h_pageable_gbs = measure_gbs(host_bytes, 1, 5, s, copy(pageable.data(), dev.get(), cudaMemcpyDeviceToHost));
    r.d2h_pinned_gbs = measure_gbs(host_bytes, 1, 5, s, copy(pinned, dev.get(), cudaMemcpyDeviceToHost));

    const std::filesystem::path path = probe_cache_path();
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    const std::filesystem::path tmp = path.string() + ".tmp";
    {
        std::ofstream f(tmp);
        f << to_json(r).dump(2) << '\n';
        if (!f) throw Error("cannot write the probe cache '" + tmp.string() + "'");
    }
    std::filesystem::rename(tmp, path);  // readers never see a half-written cache
    return r;
}

std::optional<ProbeResult> cached_probe() {
    if (device_count() == 0) return std::nullopt;
    std::ifstream f(probe_cache_path());
    if (!f) return std::nullopt;
    try {
        const auto j = nlohmann::json::parse(f);
        ProbeResult r;
        r.device_name = j.at("device_name");
        r.device_uuid = j.at("device_uuid");
        r.measured_at = j.at("measured_at");
        r.copy_gbs = j.at("copy_gbs");
        r.h2d_pageable_gbs = j.at("h2d_pageable_gbs");
        r.h2d_pinned_gbs = j.at("h2d_pinned_gbs");
        r.d2h_pageable_gbs = j.at("d2h_pageable_gbs");
        r.d2h_pinned_gbs = j.at("d2h_pinned_gbs");
        if (r.copy_gbs <= 0) return std::nullopt;
        return r;
    } catch (const std::exception&) {
        return std::nullopt;  // a damaged cache is measured again
    }
}

ProbeResult cached_or_run_probe(std::ostream& log) {
    if (auto r = cached_probe()) return *r;
    log << "(measuring this device's copy bandwidth once; cached in " << probe_cache_path() << ")\n";
    return run_probe();
}

void print_probe(std::ostream& out, const ProbeResult& p) {
    char buf[768];
    std::snprintf(buf, sizeof buf,
                  "%s (%s), measured %s\n"
                  "  device-to-device copy : %8.1f GB/s (bytes read + bytes written)\n"
                  "  host-to-device        : %8.1f GB/s pinned, %8.1f GB/s pageable\n"
                  "  device-to-host        : %8.1f GB/s pinned, %8.1f GB/s pageable\n",
                  p.device_name.c_str(), p.device_uuid.c_str(), p.measured_at.c_str(), p.copy_gbs, p.h2d_pinned_gbs,
                  p.h2d_pageable_gbs, p.d2h_pinned_gbs, p.d2h_pageable_gbs);
    out << buf;
}

}  // namespace strata::cuda
