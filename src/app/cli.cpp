// The command line. Every subcommand fills an options struct and calls the library; every
// failure becomes one line on stderr and a non-zero exit (2 for bad input, 1 otherwise).
#include <algorithm>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "bench.hpp"
#include "info.hpp"
#include "strata/core/error.hpp"
#include "strata/engine.hpp"
#include "strata/run.hpp"

namespace strata {
namespace {

constexpr const char* kApfHelp =
    "Aliev-Panfilov cardiac electrophysiology on an (n+1)x(n+1) mesh, exactly as the classic\n"
    "UCSD `apf` program computes it (same constants, initial state, mirror boundaries and dt\n"
    "rule; the final Max norm and L2norm match it to rounding).\n\n"
    "Examples:\n"
    "  strata run apf                       # n=100 to t=1500, as the classic default\n"
    "  strata run apf -n 256 -i 500         # exactly 500 iterations\n"
    "  strata run apf -n 6144 -t 0.04 --backend cuda --precision fp32\n"
    "  strata run apf -n 512 -i 2000 -p 100 --out frames   # E as PNG + .vti every 100, frames/apf.pvd\n"
    "  strata run apf -n 512 -i 2000 --checkpoint-every 500 --checkpoint apf.ck\n"
    "  strata run apf -n 512 -i 2000 --restart apf.ck       # continues to iteration 2000";

constexpr const char* kHeatHelp =
    "3D heat equation u_t = kappa lap(u) on the unit cube with Dirichlet 0 boundaries, starting\n"
    "from sin(pi x) sin(pi y) sin(pi z); explicit Euler with dt = safety x the stencil's\n"
    "stability bound. Reports the max error against the exact solution.\n\n"
    "Examples:\n"
    "  strata run heat3d -n 128 --steps 200\n"
    "  strata run heat3d -n 512 --steps 100 --stencil 27pt --backend cuda --precision fp32\n"
    "  strata run heat3d -n 128 --steps 400 --every 100 --out heat   # .vti + mid-plane PNGs, heat/heat3d.pvd\n"
    "  strata run heat3d -n 128 --steps 400 --restart heat.ck --checkpoint heat2.ck";

constexpr const char* kWaveHelp =
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

void add_common(CLI::App* cmd, std::string& precision, std::string& backend, std::string& kernel,
                std::string& json, bool& no_graphs, int& chunk, int& depth) {
    cmd->add_option("--precision", precision, "Field precision: fp32 or fp64")->capture_default_str();
    cmd->add_option("--backend", backend, "Where to run: cpu (reference loops), omp (OpenMP), cuda")
        ->capture_default_str();
    cmd->add_option("--kernel", kernel, "CUDA strategy (default: picked by problem size); 'list' describes them");
    cmd->add_flag("--no-graphs", no_graphs, "CUDA: launch every step (no CUDA graph replay)");
    cmd->add_option("--chunk", chunk,
                    "CUDA streaming strategies: rows (2D) or planes (3D) per block (default: per strategy; "
                    "heat3d temporal fits them to the grid and the device)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--depth", depth,
                    "CUDA temporal strategy: time steps per pass over memory (default 4 for apf and 7-point "
                    "heat3d, 2 for the 19/27-point stencils)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--json", json, "Also write the whole report, machine-readable, to this file");
}

void add_io(CLI::App* cmd, IoOptions& io, bool& quiet,
            const std::string& out_help = "Directory for snapshot frames and the .pvd (default strata-out)") {
    cmd->add_option("--out", io.out_dir, out_help);
    cmd->add_option("--every", io.snapshot_every, "Snapshot every N steps: .vti for ParaView and PNG pictures");
    cmd->add_option("--writer-threads", io.writer_threads, "Threads encoding snapshots (default min(cores-1, 16))");
    cmd->add_option("--checkpoint", io.checkpoint_path,
                    "Write a checkpoint to FILE every --checkpoint-every steps and at the end");
    cmd->add_option("--checkpoint-every", io.checkpoint_every, "Checkpoint every N steps");
    cmd->add_option("--restart", io.restart_path,
                    "Continue from the checkpoint FILE (same model, size and precision); -i/--steps "
                    "still count from step 0, so the run ends where an uninterrupted one would");
    cmd->add_flag("--quiet", quiet, "No progress bar (there is none anyway when stdout is not a terminal)");
}

std::vector<std::string> split_list(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

void print_kernels(std::ostream& out, Backend backend, std::string_view model) {
    const auto names = kernel_names(backend, model);
    if (names.empty()) {
        out << "no kernels: the " << to_string(backend) << " backend is not available in this build\n";
        return;
    }
    const auto chunked = kernel_names(backend, model, true);
    out << "kernels for " << model << " on " << to_string(backend)
        << (backend == Backend::cuda ? " (* takes --chunk):\n" : ":\n");
    for (const auto& k : names) {
        const bool c = std::find(chunked.begin(), chunked.end(), k) != chunked.end();
        char line[256];
        std::snprintf(line, sizeof line, "  %-8s %s %s\n", k.c_str(), c ? "*" : " ",
                      kernel_description(backend, model, k).c_str());
        out << line;
    }
}

}  // namespace

int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err, bool out_is_terminal) {
    CLI::App app{"Strata: stencil simulations at the hardware's limit, on CPUs and NVIDIA GPUs.", "strata"};
    app.require_subcommand(1);
    app.set_help_all_flag("--help-all", "Show the help of every subcommand");

    auto* run = app.add_subcommand("run", "Run a model and print its report");
    run->require_subcommand(1);

    ApfRunOptions apf;
    std::string apf_precision = "fp64", apf_backend = "cpu";
    bool apf_no_graphs = false;
    std::int64_t apf_iterations = 0;
    auto* apf_cmd = run->add_subcommand("apf", "The Aliev-Panfilov cardiac model (the classic apf program)");
    apf_cmd->footer(kApfHelp);
    apf_cmd->add_option("-n", apf.n, "Mesh size: (n+1)x(n+1) points, n > 25")->capture_default_str();
    apf_cmd->add_option("-t", apf.t_final, "Simulated time to reach")->capture_default_str();
    auto* iter_opt = apf_cmd->add_option("-i", apf_iterations, "Run exactly this many iterations (overrides -t)");
    apf_cmd->add_option("-s", apf.stats_every, "Print Max norm and L2norm every k iterations (0: never)")
        ->capture_default_str();
    apf_cmd->add_option("-p", apf.plot_every, "Snapshot (PNG + .vti of E) every k iterations, as --every");
    apf_cmd->add_option("-x", apf.px, "Processor geometry along x (1 until the multi-GPU backend)")
        ->capture_default_str();
    apf_cmd->add_option("-y", apf.py, "Processor geometry along y (1 until the multi-GPU backend)")
        ->capture_default_str();
    apf_cmd->add_flag("-k", apf.no_comm, "Skip halo communication (timing experiments only)");
    apf_cmd->add_flag("-d", apf.debug, "Debug: print the final mesh (n <= 32)");
    add_common(apf_cmd, apf_precision, apf_backend, apf.kernel, apf.json_path, apf_no_graphs, apf.chunk, apf.depth);
    bool apf_quiet = false;
    add_io(apf_cmd, apf.io, apf_quiet);

    HeatRunOptions heat;
    std::string heat_precision = "fp64", heat_backend = "cpu", heat_stencil = "7pt";
    bool heat_no_graphs = false;
    auto* heat_cmd = run->add_subcommand("heat3d", "3D heat diffusion (7-, 19- or 27-point Laplacian)");
    heat_cmd->footer(kHeatHelp);
    heat_cmd->add_option("-n", heat.n, "Interior points per side (the grid is n^3)")->capture_default_str();
    heat_cmd->add_option("--steps", heat.steps, "Time steps")->capture_default_str();
    heat_cmd->add_option("--stencil", heat_stencil, "7pt, 19pt or 27pt")->capture_default_str();
    heat_cmd->add_option("--kappa", heat.kappa, "Diffusivity")->capture_default_str();
    heat_cmd->add_option("--safety", heat.safety, "dt as a fraction of the stability bound, in (0, 1]")
        ->capture_default_str();
    add_common(heat_cmd, heat_precision, heat_backend, heat.kernel, heat.json_path, heat_no_graphs, heat.chunk, heat.depth);
    bool heat_quiet = false;
    add_io(heat_cmd, heat.io, heat_quiet);

    WaveRunOptions wave;
    std::string wave_precision = "fp32", wave_backend = "cpu";
    bool wave_no_graphs = false;
    auto* wave_cmd = run->add_subcommand("wave3d", "3D acoustic waves (8th order, sources, receivers, sponge)");
    wave_cmd->footer(kWaveHelp);
    wave_cmd->add_option("-n", wave.n, "Points per side (the grid is n^3)")->capture_default_str();
    wave_cmd->add_option("--nx", wave.nx, "Points along x (default n)")->check(CLI::PositiveNumber);
    wave_cmd->add_option("--ny", wave.ny, "Points along y (default n)")->check(CLI::PositiveNumber);
    wave_cmd->add_option("--nz", wave.nz, "Points along z (default n)")->check(CLI::PositiveNumber);
    wave_cmd->add_option("--steps", wave.steps, "Time steps")->capture_default_str();
    wave_cmd->add_option("--extent", wave.extent, "L: the box's length along x")->capture_default_str();
    wave_cmd->add_option("--velocity", wave.velocity, "V (constant) or layered:V1,V2@F (V2 below depth F of z)")
        ->capture_default_str();
    wave_cmd->add_option("--velocity-file", wave.velocity_file, "Raw float32 velocities, nx*ny*nz, x fastest");
    wave_cmd->add_option("--safety", wave.safety, "dt as a fraction of the CFL bound, in (0, 1]")
        ->capture_default_str();
    wave_cmd->add_option("--dt", wave.dt, "Time step (an error above the CFL bound)");
    wave_cmd->add_option("--sponge", wave.sponge, "Sponge width in cells on each face (default min(16, n/8))")
        ->check(CLI::NonNegativeNumber);
    wave_cmd->add_option("--source", wave.sources, "A Ricker point source x,y,z[,f0] (repeatable; default: centre)");
    wave_cmd->add_option("--receivers", wave.receivers_file, "A file of receivers, one x,y,z per line");
    wave_cmd->add_option("--receiver-line", wave.receiver_line, "count receivers from (x0,y0,z0) to (x1,y1,z1): "
                                                                "x0,y0,z0,x1,y1,z1,count");
    wave_cmd
        ->add_option("--range", wave.range,
                     "Snapshot pictures: the value range LO HI (default +-1/(4 pi 10 h))")
        ->expected(2);
    add_common(wave_cmd, wave_precision, wave_backend, wave.kernel, wave.json_path, wave_no_graphs, wave.chunk, wave.depth);
    bool wave_quiet = false;
    wave.io.out_dir = ".";  // the default for the traces, which most wave runs write
    add_io(wave_cmd, wave.io, wave_quiet,
           "Directory for the traces, the snapshot frames and the .pvd (default: the current directory)");

    app::BenchOptions bench;
    std::string bench_precision = "fp32", bench_backend = "cuda", bench_stencil = "7pt", bench_kernels,
                bench_graphs = "on";
    auto* bench_cmd = app.add_subcommand("bench", "Time every strategy of a model and print a roofline table");
    bench_cmd->footer(
        "Each row: the median time per step over --repeats runs of --steps steps (after a warm-up),\n"
        "GCells/s, effective GB/s (the model's minimum bytes per cell), % of the device's measured\n"
        "copy bandwidth (strata probe), GFLOP/s, and the max relative error against the CPU\n"
        "reference on a smaller odd-sized grid.\n\n"
        "Examples:\n"
        "  strata bench apf                                  # 8192^2, fp32, every kernel\n"
        "  strata bench heat3d --stencil 27pt --precision fp32,fp64\n"
        "  strata bench apf -n 256 --kernels planes --graphs both\n"
        "  strata bench apf --kernels multi4,temporal --depth 2,4,8\n"
        "  strata bench apf -n 4096 --snapshot-every 100     # step rate with and without snapshots");
    bench_cmd->add_option("model", bench.model, "apf, heat3d or wave3d")->required();
    bench_cmd->add_option("-n", bench.n, "Problem size (default 8192 for apf, 512 for heat3d)");
    bench_cmd->add_option("--stencil", bench_stencil, "heat3d: 7pt, 19pt or 27pt")->capture_default_str();
    bench_cmd->add_option("--precision", bench_precision, "fp32, fp64 or fp32,fp64")->capture_default_str();
    bench_cmd->add_option("--backend", bench_backend, "cuda, omp or cpu")->capture_default_str();
    bench_cmd->add_option("--kernels", bench_kernels, "Comma-separated kernels (default: all)");
    bench_cmd->add_option("--graphs", bench_graphs, "CUDA launch: on, off or both")->capture_default_str();
    bench_cmd->add_option("--steps", bench.steps,
                          "Steps per timed repeat (default: 64 passes of the kernel, one captured CUDA graph)");
    bench_cmd->add_option("--repeats", bench.repeats, "Timed repeats (the median is reported)")->capture_default_str();
    bench_cmd->add_option("--chunk", bench.chunk, "Rows (2D) or planes (3D) per block for streaming kernels");
    bench_cmd->add_option("--depth", bench.depths, "Temporal kernel: steps per pass, one row each (e.g. 2,4,8)")
        ->delimiter(',');
    bench_cmd->add_option("--json", bench.json_path, "Also write the table as JSON");
    bench_cmd->add_option("--snapshot-every", bench.snapshot_every,
                          "Instead of the table: steps/s without and with a snapshot every N steps");
    bench_cmd->add_option("--out", bench.out_dir, "With --snapshot-every: where the frames go")->capture_default_str();
    bench_cmd->add_option("--writer-threads", bench.writer_threads, "With --snapshot-every: writer threads (0: default)");
    bench_cmd->add_option("--frames", bench.frames,
                          "With --snapshot-every: frames per measured run (more than the pinned buffers: the "
                          "sustained rate)")
        ->capture_default_str();

    std::string render_file, render_png_path, render_slice = "z";
    std::vector<double> render_range{0.0, 1.0};
    auto* render_cmd = app.add_subcommand("render", "Turn a saved field (.vti) or a checkpoint into a PNG");
    render_cmd->footer(
        "Values are mapped linearly from --range to viridis (y grows upwards); 3D fields give the\n"
        "mid-plane across --slice.\n\n"
        "Examples:\n"
        "  strata render strata-out/apf_000100.vti             # writes strata-out/apf_000100.png\n"
        "  strata render heat.ck --slice x -o heat_x.png");
    render_cmd->add_option("file", render_file, "A .vti file or a strata checkpoint")->required();
    render_cmd->add_option("-o", render_png_path, "The PNG to write (default: FILE with .png)");
    render_cmd->add_option("--slice", render_slice, "3D: the axis across which the mid-plane is cut: z, y or x")
        ->capture_default_str();
    render_cmd->add_option("--range", render_range, "The value range mapped to the colour map: LO HI")
        ->expected(2)
        ->capture_default_str();

    auto* info_cmd = app.add_subcommand("info", "Describe this build and the GPUs it sees");
    auto* probe_cmd = app.add_subcommand(
        "probe", "Measure the GPU's copy and host<->device bandwidth and cache it for the reports");

    try {
        app.parse(argc, argv);
        if (*apf_cmd) {
            if (*iter_opt) apf.iterations = apf_iterations;
            apf.graphs = !apf_no_graphs;
            apf.precision = parse_precision(apf_precision);
            apf.backend = parse_backend(apf_backend);
            apf.io.progress = out_is_terminal && !apf_quiet;
            if (apf.kernel == "list") {
                print_kernels(out, apf.backend, "apf");
                return 0;
            }
            run_apf(apf, out);
        } else if (*heat_cmd) {
            heat.graphs = !heat_no_graphs;
            heat.precision = parse_precision(heat_precision);
            heat.backend = parse_backend(heat_backend);
            heat.stencil = parse_heat_stencil(heat_stencil);
            heat.io.progress = out_is_terminal && !heat_quiet;
            if (heat.kernel == "list") {
                print_kernels(out, heat.backend, "heat3d");
                return 0;
            }
            run_heat3d(heat, out);
        } else if (*wave_cmd) {
            wave.graphs = !wave_no_graphs;
            wave.precision = parse_precision(wave_precision);
            wave.backend = parse_backend(wave_backend);
            wave.io.progress = out_is_terminal && !wave_quiet;
            if (wave.kernel == "list") {
                print_kernels(out, wave.backend, "wave3d");
                return 0;
            }
            run_wave3d(wave, out);
        } else if (*bench_cmd) {
            bench.precisions.clear();
            for (const auto& p : split_list(bench_precision)) bench.precisions.push_back(parse_precision(p));
            if (bench.precisions.empty()) throw UsageError("--precision needs fp32, fp64 or both");
            bench.backend = parse_backend(bench_backend);
            bench.stencil = parse_heat_stencil(bench_stencil);
            bench.kernels = split_list(bench_kernels);
            if (bench_graphs == "on") bench.graphs = {true};
            else if (bench_graphs == "off") bench.graphs = {false};
            else if (bench_graphs == "both") bench.graphs = {true, false};
            else throw UsageError("--graphs must be on, off or both (got '" + bench_graphs + "')");
            app::run_bench(bench, out);
        } else if (*render_cmd) {
            if (render_slice.size() != 1) throw UsageError("--slice must be z, y or x (got '" + render_slice + "')");
            out << "wrote " << render_png(render_file, render_png_path, render_slice[0], render_range[0], render_range[1])
                << '\n';
        } else if (*info_cmd) {
            app::print_info(out);
        } else if (*probe_cmd) {
            app::run_probe_command(out);
        }
        return 0;
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e, out, err);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e, out, err);
    } catch (const CLI::ParseError& e) {
        err << "strata: error: " << e.what() << " (see --help)\n";
        return 2;
    } catch (const UsageError& e) {
        err << "strata: error: " << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        err << "strata: error: " << e.what() << '\n';
        return 1;
    }
}

}  // namespace strata
