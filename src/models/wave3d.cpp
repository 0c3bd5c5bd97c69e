#include "strata/models/wave3d.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "strata/core/error.hpp"
#include "strata/core/memory.hpp"
#include "strata/engine.hpp"
#include "strata/io/checkpoint.hpp"
#include "strata/io/png.hpp"
#include "strata/report.hpp"

namespace strata {

double WaveParams::dt_max(double h, double v_max) {
    return 2 * h / (v_max * std::sqrt(3 * Laplacian8::symbol_max));
}

double WaveParams::sponge_eta_for(int width, double h, double dt, double v_max) {
    if (width <= 0) return 0;
    const double sigma_max = 3 * v_max * std::log(1e3) / (2 * width * h);
    return sigma_max * dt / 2;
}

namespace {

double parse_speed(const std::string& s, std::string_view spec) {
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(s, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != s.size() || s.empty())
        throw UsageError("bad velocity '" + std::string(spec) +
                         "' (expected a speed like 1500, or layered:V1,V2@F with F in (0, 1))");
    if (!(v > 0) || !std::isfinite(v)) throw UsageError("velocities must be positive (got " + s + ")");
    return v;
}

}  // namespace

std::vector<float> wave_velocity(std::string_view spec, const std::string& file, int nx, int ny, int nz) {
    const std::size_t cells = std::size_t(nx) * ny * nz;
    // The problem's velocities and the coefficient field made from them for any backend (at least
    // float32), refused before they are filled; the engine checks its fields next.
    require_host_memory(std::int64_t(2 * cells * sizeof(float)),
                        "wave3d's velocity model and its coefficient field (2 x " + std::to_string(nx) + " x " +
                            std::to_string(ny) + " x " + std::to_string(nz) + " float32 values)");
    std::vector<float> v(cells);
    if (!file.empty()) {
        std::ifstream f(file, std::ios::binary | std::ios::ate);
        if (!f) throw UsageError("cannot read the velocity file '" + file + "'");
        const auto bytes = std::size_t(f.tellg());
        if (bytes != cells * sizeof(float))
            throw UsageError("the velocity file '" + file + "' has " + std::to_string(bytes) + " bytes; a " +
                             std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) +
                             " grid of float32 needs " + std::to_string(cells * sizeof(float)));
        f.seekg(0);
        f.read(reinterpret_cast<char*>(v.data()), std::streamsize(bytes));
        if (!f) throw UsageError("cannot read the velocity file '" + file + "'");
        for (float x : v)
            if (!(x > 0) || !std::isfinite(x))
                throw UsageError("the velocity file '" + file + "' holds a non-positive or non-finite velocity");
        return v;
    }
    const std::string s(spec);
    if (s.starts_with("layered:")) {
        const auto comma = s.find(','), at = s.find('@');
        if (comma == std::string::npos || at == std::string::npos || at < comma)
            throw UsageError("bad velocity '" + s + "' (expected layered:V1,V2@F, e.g. layered:1500,2500@0.5)");
        const double v1 = parse_speed(s.substr(8, comma - 8), spec);
        const double v2 = parse_speed(s.substr(comma + 1, at - comma - 1), spec);
        const double frac = parse_speed(s.substr(at + 1), spec);
        if (frac >= 1) throw UsageError("the layer depth in '" + s + "' must be a fraction in (0, 1)");
        for (int k = 0; k < nz; ++k) {
            const float vk = float(k < frac * (nz - 1) ? v1 : v2);
            std::fill(v.begin() + std::ptrdiff_t(std::size_t(k) * nx * ny),
                      v.begin() + std::ptrdiff_t(std::size_t(k + 1) * nx * ny), vk);
        }
        return v;
    }
    std::fill(v.begin(), v.end(), float(parse_speed(s, spec)));
    return v;
}

GridPoint wave_grid_point(const WaveParams& p, double x, double y, double z, std::string_view what) {
    const double pos[3] = {x, y, z};
    int idx[3];
    for (int a = 0; a < 3; ++a) {
        const double len = p.length(a);
        if (!(pos[a] >= 0 && pos[a] <= len * (1 + 1e-12))) {
            char buf[256];
            std::snprintf(buf, sizeof buf, "%s at (%g, %g, %g) is outside the domain [0, %g] x [0, %g] x [0, %g]",
                          std::string(what).c_str(), x, y, z, p.length(0), p.length(1), p.length(2));
            throw UsageError(buf);
        }
        idx[a] = std::min(int(std::lround(pos[a] / p.h)), (a == 0 ? p.nx : a == 1 ? p.ny : p.nz) - 1);
    }
    return {idx[0], idx[1], idx[2]};
}

WaveParams wave_params(int nx, int ny, int nz, double extent, const std::vector<float>& velocity, double safety,
                       double user_dt, int sponge) {
    WaveParams p;
    p.nx = nx, p.ny = ny, p.nz = nz;
    p.extent = extent;
    p.h = extent / (nx - 1);
    const auto [lo, hi] = std::minmax_element(velocity.begin(), velocity.end());
    p.v_min = *lo, p.v_max = *hi;
    const double bound = WaveParams::dt_max(p.h, p.v_max);
    if (user_dt > 0) {
        if (user_dt > bound) {
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "--dt %g is unstable: the CFL bound for h = %g and v_max = %g is dt <= %g", user_dt, p.h,
                          p.v_max, bound);
            throw UsageError(buf);
        }
        p.dt = user_dt;
    } else {
        p.dt = safety * bound;
    }
    p.sponge = sponge;
    p.sponge_eta = WaveParams::sponge_eta_for(sponge, p.h, p.dt, p.v_max);
    return p;
}

template <class T>
HostField<T> wave_vdt2(const WaveParams& p, const std::vector<float>& velocity) {
    HostField<T> f(p.extent3());
    const double r = p.dt / p.h;
    for (int k = 0; k < p.nz; ++k)
        for (int j = 0; j < p.ny; ++j)
            for (int i = 0; i < p.nx; ++i) {
                const double v = velocity[(std::size_t(k) * p.ny + j) * p.nx + i] * r;
                f.at(i, j, k) = T(v * v);
            }
    return f;
}

template HostField<float> wave_vdt2<float>(const WaveParams&, const std::vector<float>&);
template HostField<double> wave_vdt2<double>(const WaveParams&, const std::vector<float>&);
template HostField<f16> wave_vdt2<f16>(const WaveParams&, const std::vector<float>&);
template HostField<bf16> wave_vdt2<bf16>(const WaveParams&, const std::vector<float>&);

Wave3dProblem::Wave3dProblem(const WaveParams& p, std::vector<float> v, std::int64_t steps)
    : params(p), velocity(std::move(v)), steps_(steps) {}

ModelInfo Wave3dProblem::describe() {
    ModelInfo m;
    m.name = "wave3d";
    m.linear = true;  // a state scale changes nothing but fp16's range (problem.hpp)
    m.summary = "3D acoustic waves (8th order, sources, receivers, sponge)";
    m.help =
        "3D acoustic waves p_tt = v^2 lap(p) + sources: leapfrog in time, the 25-point 8th-order\n"
        "Laplacian, Ricker point sources, receivers recorded every step, and a sponge layer on every\n"
        "face. Positions are physical, in the box [0, L] along x (h = L / (nx - 1)). Everything goes\n"
        "to one --out directory (default: the current directory): the traces as traces.bin (float32,\n"
        "steps x receivers), traces.json and seismogram.png, and with --every N the frames of p\n"
        "(wave3d_NNNNNN.vti, the mid-plane PNGs wave3d_NNNNNN_{z,y,x}.png, and wave3d.pvd). The\n"
        "pictures map p from -A to A with A = 1 / (4 pi 10 h), the peak of a source's direct wave\n"
        "10 cells away (--range LO HI to change it). A checkpoint holds p, the previous p, the step\n"
        "and the traces so far: a restarted run writes the same traces.bin as an uninterrupted one.\n\n"
        "Examples:\n"
        "  strata run wave3d -n 128 --steps 400 --receiver-line 0.1,0.5,0.3,0.9,0.5,0.3,64\n"
        "  strata run wave3d -n 256 --velocity layered:1500,2500@0.5 --source 0.5,0.5,0.2,30 \\\n"
        "      --receivers recv.txt --out shot1 --every 50 --backend cuda\n"
        "  strata run wave3d --nx 200 --ny 100 --nz 100 --extent 2000 --velocity-file vp.bin --sponge 20\n"
        "  strata run wave3d -n 128 --steps 400 --checkpoint shot.ck\n"
        "  strata run wave3d -n 128 --steps 800 --restart shot.ck   # the same flags: steps 400 to 800";
    m.precision = Precision::fp32;
    m.out_dir = ".";
    m.out_help = "Directory for the traces, the snapshot frames and the .pvd (default: the current directory)";
    const std::vector<ParamSpec> box = box_params();
    ParamSpec sponge{"--sponge", "sponge", ParamKind::integer, "", "Sponge width in cells on each face (default min(16, n/8))"};
    sponge.non_negative = true;
    ParamSpec range{"--range", "range", ParamKind::reals, "",
                    "Snapshot pictures: the value range LO HI (default +-1/(4 pi 10 h))"};
    range.count = 2;
    m.params = {
        {"-n", "n", ParamKind::integer, "128", "Points per side (the grid is n^3)"},
        box[0],
        box[1],
        box[2],
        {"--steps", "steps", ParamKind::integer, "500", "Time steps"},
        {"--extent", "extent", ParamKind::real, "1", "L: the box's length along x"},
        {"--velocity", "velocity", ParamKind::text, "1500", "V (constant) or layered:V1,V2@F (V2 below depth F of z)"},
        {"--velocity-file", "velocity_file", ParamKind::text, "", "Raw float32 velocities, nx*ny*nz, x fastest"},
        {"--safety", "safety", ParamKind::real, "0.5", "dt as a fraction of the CFL bound, in (0, 1]"},
        {"--dt", "dt", ParamKind::real, "", "Time step (an error above the CFL bound)"},
        sponge,
        {"--source", "source", ParamKind::texts, "", "A Ricker point source x,y,z[,f0] (repeatable; default: centre)"},
        {"--receivers", "receivers", ParamKind::text, "", "A file of receivers, one x,y,z per line"},
        {"--receiver-line", "receiver_line", ParamKind::text, "",
         "count receivers from (x0,y0,z0) to (x1,y1,z1): x0,y0,z0,x1,y1,z1,count"},
        range,
    };
    return m;
}

namespace {

// Comma-separated numbers: exactly `min_count` or `max_count` of them.
std::vector<double> numbers(const std::string& s, std::size_t min_count, std::size_t max_count,
                            const std::string& what) {
    std::vector<double> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');) {
        std::size_t used = 0;
        double v = 0;
        try {
            v = std::stod(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size() || !std::isfinite(v)) throw UsageError("bad " + what + " '" + s + "'");
        out.push_back(v);
    }
    if (out.size() != min_count && out.size() != max_count) throw UsageError("bad " + what + " '" + s + "'");
    return out;
}

// The sources (default: one at the centre with ~10 points per shortest wavelength), a warning for
// each whose f0 leaves fewer than 4, and the receivers of --receivers and --receiver-line.
void place(Wave3dProblem& w, const ParamReader& r, std::ostream& out) {
    const WaveParams& p = w.params;
    const double default_f0 = p.v_min / (2.5 * 10 * p.h);
    std::vector<std::string> specs = r.texts("source");
    if (specs.empty()) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "%.17g,%.17g,%.17g", p.length(0) / 2, p.length(1) / 2, p.length(2) / 2);
        specs.push_back(buf);
    }
    for (const auto& s : specs) {
        const auto v = numbers(s, 3, 4, "--source (expected x,y,z or x,y,z,f0)");
        const double f0 = v.size() == 4 ? v[3] : default_f0;
        if (!(f0 > 0)) throw UsageError("the source frequency in '" + s + "' must be positive");
        PointSource src;
        src.at = wave_grid_point(p, v[0], v[1], v[2], "source");
        src.f0 = f0;
        const double vel = w.velocity[(std::size_t(src.at.k) * p.ny + src.at.j) * p.nx + src.at.i];
        src.scale = (vel * p.dt) * (vel * p.dt) / (p.h * p.h * p.h);  // a unit point force, as vdt2 / h
        w.sources.push_back(src);
        // The Ricker spectrum is negligible above ~2.5 f0: its shortest wavelength needs 4+ points.
        const double points = p.v_min / (2.5 * f0 * p.h);
        if (points < 4) {
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "warning: source f0 = %g Hz is too high for this grid: %.1f points per shortest "
                          "wavelength (want >= 4; f0 <= %g)\n",
                          f0, points, p.v_min / (10 * p.h));
            out << buf;
        }
    }
    const std::string file = r.text("receivers");
    if (!file.empty()) {
        std::ifstream f(file);
        if (!f) throw UsageError("cannot read the receivers file '" + file + "'");
        const std::size_t before = w.receivers.size();
        for (std::string line; std::getline(f, line);) {
            if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
            const auto v = numbers(line, 3, 3, "receiver line in " + file + " (expected x,y,z)");
            w.receivers.push_back(wave_grid_point(p, v[0], v[1], v[2], "receiver"));
        }
        // A run without the traces it was asked for would be found out only at its end.
        if (w.receivers.size() == before)
            throw UsageError("the receivers file '" + file + "' lists no receivers (expected x,y,z lines)");
    }
    const std::string line = r.text("receiver_line");
    if (!line.empty()) {
        const auto v = numbers(line, 7, 7, "--receiver-line (expected x0,y0,z0,x1,y1,z1,count)");
        // At most one per grid point: more could only repeat them, and would take memory for nothing.
        const double points = double(p.nx) * p.ny * p.nz;
        if (!(v[6] >= 1 && v[6] <= points && v[6] == std::floor(v[6])))
            throw UsageError("the receiver count must be a whole number from 1 to the grid's " +
                             std::to_string(std::int64_t(points)) + " points");
        const int count = int(v[6]);
        for (int k = 0; k < count; ++k) {
            const double t = count == 1 ? 0 : double(k) / (count - 1);
            w.receivers.push_back(wave_grid_point(p, v[0] + t * (v[3] - v[0]), v[1] + t * (v[4] - v[1]),
                                                  v[2] + t * (v[5] - v[2]), "receiver"));
        }
    }
}

// The sides and the grid's parameters from the options, checked.
std::unique_ptr<Wave3dProblem> wave_problem(const ParamReader& r, int nx, int ny, int nz) {
    const std::int64_t steps = r.integer("steps");
    const double extent = r.real("extent"), safety = r.real("safety"), dt = r.given("dt") ? r.real("dt") : 0;
    const int smallest = std::min({nx, ny, nz});
    if (smallest < 9) throw UsageError("every side needs at least 9 points for the radius-4 stencil");
    if (steps < 0) throw UsageError("--steps must be >= 0 (got " + std::to_string(steps) + ")");
    if (!(extent > 0)) throw UsageError("--extent must be positive");
    if (!(safety > 0 && safety <= 1))
        throw UsageError("--safety must be in (0, 1]: it is the fraction of the CFL bound used as dt");
    if (dt < 0) throw UsageError("--dt must be positive");
    const std::int64_t sponge = r.given("sponge") ? r.integer("sponge") : std::min(16, smallest / 8);
    if (2 * std::min<std::int64_t>(sponge, smallest) >= smallest - 2)
        throw UsageError("the grid (smallest side " + std::to_string(smallest) + ") is too small for a sponge of " +
                         std::to_string(sponge) + " cells on each face");
    const std::vector<double> range = r.reals("range");
    if (r.given("range") && (range.size() != 2 || !(range[0] < range[1])))
        throw UsageError("--range needs two values LO HI with LO < HI");
    std::vector<float> v = wave_velocity(r.text("velocity"), r.text("velocity_file"), nx, ny, nz);
    const WaveParams p = wave_params(nx, ny, nz, extent, v, safety, dt, int(sponge));
    auto w = std::make_unique<Wave3dProblem>(p, std::move(v), steps);
    // The pictures' range: --range, or +-the peak of a unit source's direct wave 10 cells away,
    // 1 / (4 pi 10 h) (in 3D p = ricker(t - r / v) / (4 pi r), whatever v): the wavefield beyond
    // the sources' neighbourhood shows, and every frame uses the same colours.
    const double peak = 1 / (4 * std::numbers::pi * 10 * p.h);
    w->lo = r.given("range") ? range[0] : -peak;
    w->hi = r.given("range") ? range[1] : peak;
    return w;
}

}  // namespace

std::unique_ptr<Problem> Wave3dProblem::from_params(const Params& params, std::ostream& out) {
    const ParamReader r(describe().params, params, "wave3d");
    const std::int64_t n = r.integer("n");
    if (n > 1 << 20) throw UsageError("-n " + std::to_string(n) + " is too large");
    auto w = wave_problem(r, r.side("nx", n), r.side("ny", n), r.side("nz", n));
    place(*w, r, out);
    w->record_steps = w->receivers.empty() ? 0 : w->steps();
    return w;
}

std::unique_ptr<Problem> Wave3dProblem::box(const Params& params, int nx, int ny, int nz) {
    return wave_problem(ParamReader(describe().params, params, "wave3d"), nx, ny, nz);
}

const ModelInfo& Wave3dProblem::model() const { return find_model("wave3d"); }

// What changes a run's result, for the checkpoint's header, so that restarting with other flags is
// an error: the grid spacing, dt, the sponge, and the velocity model, sources and receivers as
// hashes (their top 53 bits, exact in a double) next to their counts.
std::vector<std::pair<std::string, double>> Wave3dProblem::fingerprint() const {
    auto hash = [](const auto& values) {
        return double(io::fnv1a64(values.data(), values.size() * sizeof(values[0])) >> 11);
    };
    std::vector<double> s, r;
    for (const PointSource& src : sources)
        s.insert(s.end(), {double(src.at.i), double(src.at.j), double(src.at.k), src.f0, src.scale});
    for (const GridPoint& g : receivers) r.insert(r.end(), {double(g.i), double(g.j), double(g.k)});
    return {{"h", params.h},
            {"dt", params.dt},
            {"sponge", double(params.sponge)},
            {"velocity_hash", hash(velocity)},
            {"sources", double(sources.size())},
            {"source_hash", hash(s)},
            {"receivers", double(receivers.size())},
            {"receiver_hash", hash(r)}};
}

std::string Wave3dProblem::label() const {
    char buf[96];
    if (params.nx == params.ny && params.ny == params.nz)
        std::snprintf(buf, sizeof buf, "wave3d 8th order %d^3", params.nx);
    else
        std::snprintf(buf, sizeof buf, "wave3d 8th order %d x %d x %d", params.nx, params.ny, params.nz);
    return buf;
}

void Wave3dProblem::describe(Report& r) const {
    const WaveParams& p = params;
    r.line("grid %d x %d x %d, h = %g, v in [%g, %g], dt = %g (CFL bound %g), sponge %d cells, %lld steps",
           {{"nx", p.nx}, {"ny", p.ny}, {"nz", p.nz}, {"h", p.h}, {"", p.v_min}, {"", p.v_max}, {"dt", p.dt},
            {"dt_max", WaveParams::dt_max(p.h, p.v_max)}, {"sponge", p.sponge}, {"steps", steps_}});
    r.line("%zu source(s), %zu receiver(s)", {{"", sources.size()}, {"", receivers.size()}});
    r.value("picture_range", {lo, hi});
}

Observables Wave3dProblem::Observer::named(const Reduced (&r)[2], double) const {
    return {{"max_abs", r[0].max_abs}, {"energy", r[1].sum}};
}

void Wave3dProblem::report(Engine& e, Report& r) const {
    const Observables o = e.observables();
    r.line("End at time: %g, step %lld", {{"t_end", t_end()}, {"", steps_}});
    r.line("Max |p|: %.6e, energy: %.6e\n", {{"max_abs", o["max_abs"]}, {"energy", o["energy"]}});
}

// traces.bin (float32, steps x receivers, row-major), traces.json (its header) and
// seismogram.png (a receiver per column, time downwards, viridis over +-max|trace|).
void Wave3dProblem::finish(Engine& e, Report& r, const std::string& out_dir) const {
    namespace fs = std::filesystem;
    if (receivers.empty()) {
        r.value("files", nlohmann::json::array());
        r.text("No receivers (--receivers or --receiver-line): no traces written\n");
        return;
    }
    const std::vector<double> traces = e.values("traces");  // gathered from every rank
    if (process_rank() != 0) return;                         // and written by rank 0
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (!fs::is_directory(out_dir)) throw UsageError("cannot create the output directory '" + out_dir + "'");
    const int nr = int(receivers.size());
    const std::int64_t rows = std::int64_t(traces.size()) / nr;
    const std::vector<float> f32(traces.begin(), traces.end());
    const fs::path dir(out_dir);
    const std::string bin = (dir / "traces.bin").string(), json = (dir / "traces.json").string(),
                      png = (dir / "seismogram.png").string();
    {
        std::ofstream f(bin, std::ios::binary);
        f.write(reinterpret_cast<const char*>(f32.data()), std::streamsize(f32.size() * sizeof(float)));
        if (!f) throw Error("failed writing '" + bin + "'");
    }
    nlohmann::json h;
    h["file"] = "traces.bin";
    h["dtype"] = "float32";
    h["layout"] = "row-major [steps][receivers]: row n is p at time (n + 1) * dt";
    h["steps"] = rows;
    h["receivers"] = nr;
    h["dt"] = params.dt;
    h["h"] = params.h;
    h["positions"] = nlohmann::json::array();
    for (const GridPoint& g : receivers) h["positions"].push_back({g.i * params.h, g.j * params.h, g.k * params.h});
    {
        std::ofstream f(json);
        f << h.dump(2) << '\n';
        if (!f) throw Error("failed writing '" + json + "'");
    }
    double peak = 0;
    for (float v : f32) peak = std::max(peak, double(std::fabs(v)));
    io::write_png(png, io::colormap(f32.data(), nr, int(rows), -peak, peak));
    r.value("files", {bin, json, png});
    r.text("Traces written: " + bin + ' ' + json + ' ' + png + " \n");
}

SnapshotSpec Wave3dProblem::snapshot_spec() const {
    return {"p", io::VtiGrid{params.nx, params.ny, params.nz, params.h, {0, 0, 0}, "p"}, lo, hi};
}

PointFeatures Wave3dProblem::points() const { return {0, sources, receivers, record_steps, params.dt}; }

// A unit source's direct wave 10 cells away peaks at 1 / (4 pi 10 h) (the pictures' default range,
// wave_problem): the size of what the sources make beyond their own neighbourhood.
double Wave3dProblem::source_magnitude() const {
    return sources.empty() ? 0 : 1 / (4 * std::numbers::pi * 10 * params.h);
}

}  // namespace strata
