// The command line. Every subcommand fills an options struct and calls the library; every
// failure becomes one line on stderr and a non-zero exit (2 for bad input, 1 otherwise).
#include <algorithm>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <list>
#include <map>
#include <optional>
#include <sstream>

#include "bench.hpp"
#include "ranks/mpi.hpp"
#include "check.hpp"
#include "stencil/build.hpp"
#include "info.hpp"
#include "tune/tune_command.hpp"
#include "strata/core/error.hpp"
#include "strata/core/interrupt.hpp"
#include "strata/core/memory.hpp"
#include "strata/engine.hpp"
#include "strata/run.hpp"

namespace strata {
namespace {

void add_common(CLI::App* cmd, std::string& precision, std::string& backend, std::string& kernel,
                std::string& json, bool& no_graphs, int& chunk, int& depth) {
    cmd->add_option("--precision", precision,
                    "Field precision: fp32 or fp64; fp16 or bf16 store 16 bits and compute in fp32 (half the "
                    "bytes; see docs/precision.md for what each model keeps of its accuracy)")
        ->capture_default_str();
    cmd->add_option("--backend", backend, "Where to run: cpu (reference loops), omp (OpenMP), cuda")
        ->capture_default_str();
    cmd->add_option("--kernel", kernel, "CUDA strategy (default: picked by problem size); 'list' describes them");
    cmd->add_flag("--no-graphs", no_graphs, "CUDA: launch every step (no CUDA graph replay)");
    cmd->add_option("--chunk", chunk,
                    "CUDA streaming strategies: rows (2D) or planes (3D) per block (default: per strategy; "
                    "heat3d temporal fits them to the grid and the device)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--depth", depth,
                    "CUDA temporal strategy: time steps per pass over memory (default: the strategy's for "
                    "the model, its stencil and the precision, e.g. 4 for apf, 8 for heat2d in fp32; the report's "
                    "Temporal blocking line names the depth used)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--json", json, "Also write the whole report, machine-readable, to this file");
}

void add_snapshot_files(CLI::App* cmd, IoOptions& io) {
    cmd->add_option(
           "--snapshot-format", io.snapshot_format,
           "Snapshot files: vti (ParaView, the values), png (pictures), both, or h5 (one HDF5 file "
           "per frame that every rank writes its part of, and an XDMF file listing them for ParaView)")
        ->check(CLI::IsMember({"vti", "png", "both", "h5"}))
        ->capture_default_str();
    cmd->add_option("--vti-compression", io.vti_compression,
                    "none (raw: the fastest to write) or zlib (ParaView's compressed .vti: smaller files "
                    "for smooth fields, at the writers' CPU time)")
        ->check(CLI::IsMember({"none", "zlib"}))
        ->capture_default_str();
}

void add_io(CLI::App* cmd, IoOptions& io, bool& quiet,
            const std::string& out_help = "Directory for snapshot frames and the .pvd (default strata-out)") {
    cmd->add_option("--out", io.out_dir, out_help);
    cmd->add_option("--every", io.snapshot_every, "Snapshot every N steps: .vti for ParaView and PNG pictures");
    cmd->add_option("--writer-threads", io.writer_threads, "Threads encoding snapshots (default min(cores-1, 16))");
    add_snapshot_files(cmd, io);
    cmd->add_option(
        "--checkpoint", io.checkpoint_path,
        "Write a checkpoint to FILE every --checkpoint-every steps and at the end (FILE.h5: HDF5, "
        "which h5py reads, every rank writing its own part at once; otherwise strata's own format)");
    cmd->add_option("--checkpoint-every", io.checkpoint_every, "Checkpoint every N steps");
    cmd->add_option("--restart", io.restart_path,
                    "Continue from the checkpoint FILE (same model, size, precision and parameters): "
                    "the run goes on from the checkpoint's step to the same last step (-i, --steps or -t "
                    "count from step 0), so it ends where an uninterrupted run would");
    cmd->add_flag("--quiet", quiet, "No progress bar (there is none anyway when stdout is not a terminal)");
}

// The options of one model's `strata run` subcommand, bound to typed CLI storage (so CLI11
// converts and range-checks them, as for every other option) and read back into the model's
// Params; ParamReader checks them again for programs that set Params directly.
struct ModelCommand {
    const ModelInfo* model = nullptr;
    CLI::App* cmd = nullptr;
    std::map<std::string, std::int64_t> integers;
    std::map<std::string, double> reals;
    std::map<std::string, std::string> text;
    std::map<std::string, std::vector<std::string>> texts;
    std::map<std::string, std::vector<double>> lists;
    std::map<std::string, bool> flags;
    std::map<std::string, CLI::Option*> given;
    std::string precision, backend = "cpu";
    bool no_graphs = false, quiet = false, no_wisdom = false, tune_first = false;
    bool exhaustive = false, no_save = false;  // `strata tune MODEL`
    RunOptions run;

    void add_params() {
        for (const ParamSpec& p : model->params) {
            CLI::Option* o = nullptr;
            switch (p.kind) {
                case ParamKind::flag: o = cmd->add_flag(p.flag, flags[p.key], p.help); break;
                case ParamKind::texts: o = cmd->add_option(p.flag, texts[p.key], p.help); break;
                case ParamKind::reals: o = cmd->add_option(p.flag, lists[p.key], p.help)->expected(p.count); break;
                case ParamKind::integer:
                    integers[p.key] = p.fallback.empty() ? 0 : std::stoll(p.fallback);
                    o = cmd->add_option(p.flag, integers[p.key], p.help);
                    break;
                case ParamKind::real:
                    reals[p.key] = p.fallback.empty() ? 0 : std::stod(p.fallback);
                    o = cmd->add_option(p.flag, reals[p.key], p.help);
                    break;
                case ParamKind::text:
                    text[p.key] = p.fallback;
                    o = cmd->add_option(p.flag, text[p.key], p.help);
                    break;
            }
            if (!p.fallback.empty()) o->capture_default_str();
            if (p.positive) o->check(CLI::PositiveNumber);
            if (p.non_negative) o->check(CLI::NonNegativeNumber);
            given[p.key] = o;
        }
    }
    Params params() const {
        Params out;
        for (const ParamSpec& p : model->params) {
            if (given.at(p.key)->count() == 0) continue;
            switch (p.kind) {
                case ParamKind::flag: out.set(p.key, flags.at(p.key)); break;
                case ParamKind::texts: out.set(p.key, texts.at(p.key)); break;
                case ParamKind::reals: out.set(p.key, lists.at(p.key)); break;
                case ParamKind::integer: out.set(p.key, integers.at(p.key)); break;
                case ParamKind::real: out.set(p.key, reals.at(p.key)); break;
                case ParamKind::text: out.set(p.key, text.at(p.key)); break;
            }
        }
        return out;
    }
    // What the command line asks this model's run to do; `terminal`: stdout is one (a progress bar).
    RunOptions options(bool terminal) const {
        RunOptions o = run;
        o.model = model->name;
        o.params = params();
        o.graphs = !no_graphs;
        o.precision = parse_precision(precision);
        o.backend = parse_backend(backend);
        o.io.progress = terminal && !quiet;
        if (no_wisdom && tune_first) throw UsageError("--no-wisdom and --tune contradict each other");
        o.wisdom = no_wisdom ? RunOptions::Wisdom::ignore : tune_first ? RunOptions::Wisdom::tune : RunOptions::Wisdom::use;
        return o;
    }
};

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
    // Those left out, each reason once with the kernels it keeps out.
    std::vector<std::pair<std::string, std::string>> reasons;  // kernels, why
    for (const auto& left_out : kernels_left_out(backend, model)) {
        const std::string& why = left_out.second;
        auto same = std::find_if(reasons.begin(), reasons.end(), [&](const auto& r) { return r.second == why; });
        if (same == reasons.end())
            reasons.push_back(left_out);
        else
            same->first += ", " + left_out.first;
    }
    for (const auto& [kernels, why] : reasons) out << "  (not here: " << kernels << ": " << why << ")\n";
}

// The whole command line: CLI11's parser and, bound to it, every subcommand's options.
// cli_main parses it and does what it asks; parse_run_command parses it and stops there.
struct CommandLine {
    CLI::App app{"Strata: stencil simulations at the hardware's limit, on CPUs and NVIDIA GPUs.", "strata"};
    std::list<ModelCommand> commands;  // one `strata run MODEL` each, in registration order
    std::list<ModelCommand> tunes;     // one `strata tune MODEL` each
    CLI::App* wisdom_cmd = nullptr;
    std::string wisdom_action, wisdom_argument;
    CLI::App* cache_cmd = nullptr;
    std::string cache_action = "show";
    app::BenchOptions bench;
    std::string bench_precision = "fp32", bench_backend = "cuda", bench_stencil = "7pt", bench_kernels,
                bench_graphs = "on";
    CLI::App *bench_cmd = nullptr, *render_cmd = nullptr, *info_cmd = nullptr, *probe_cmd = nullptr,
             *show_cmd = nullptr, *check_cmd = nullptr;
    app::CheckOptions check;
    std::string check_precision = "fp32,fp64", check_backend = "cuda", check_kernels, check_stencil = "7pt";
    CLI::Option* check_stencil_opt = nullptr;
    CLI::Option* stencil_opt = nullptr;
    std::string show_file;
    bool show_cuda = false;
    std::string render_file, render_png_path, render_slice = "z";
    std::vector<double> render_range{0.0, 1.0};

    CommandLine();
    // CLI11's parse. Its errors become UsageError like every other bad input; a request for help
    // stays a CLI::Success, for cli_main to print.
    void parse(int argc, const char* const* argv) {
        try {
            app.parse(argc, argv);
        } catch (const CLI::Success&) {
            throw;
        } catch (const CLI::ParseError& e) {
            throw UsageError(std::string(e.what()) + " (see --help)");
        }
    }
    // The `strata run MODEL` given, or null.
    const ModelCommand* run_command() const {
        for (const ModelCommand& mc : commands)
            if (*mc.cmd) return &mc;
        return nullptr;
    }
    bool tunes_given() const {
        for (const ModelCommand& mc : tunes)
            if (*mc.cmd) return true;
        return false;
    }
};

CommandLine::CommandLine() {
    app.require_subcommand(1);
    app.set_help_all_flag("--help-all", "Show the help of every subcommand");

    auto* run = app.add_subcommand("run", "Run a model and print its report");
    run->footer(
        "Every model takes --help: what it solves, its options, examples.\n"
        "Under mpirun the grid is split over the ranks (--decomp PxQ[xR], apf's -x X -y Y; default slabs),\n"
        "one GPU each with --backend cuda, and the result is bitwise that of one process:\n"
        "  mpirun -np 4 strata run apf -n 2048 -i 500 -x 2 -y 2 --backend omp\n"
        "  mpirun -np 2 strata run heat3d -n 1024 --steps 500 --backend cuda\n"
        "A grid that does not fit is refused before anything is allocated; the ranks on a node share its\n"
        "memory (its free memory, its cgroup, or STRATA_NODE_MEMORY=64G where a scheduler allows less).");
    run->require_subcommand(1);

    for (const ModelInfo* m : models()) {
        ModelCommand& mc = commands.emplace_back();
        mc.model = m;
        mc.precision = std::string(to_string(m->precision));
        mc.cmd = run->add_subcommand(m->name, m->summary);
        mc.cmd->footer(m->help);
        mc.add_params();
        add_common(mc.cmd, mc.precision, mc.backend, mc.run.kernel, mc.run.json_path, mc.no_graphs, mc.run.chunk,
                   mc.run.depth);
        add_io(mc.cmd, mc.run.io, mc.quiet, m->out_help);
        mc.cmd
            ->add_option(
                "--state-scale", mc.run.state_scale,
                "Store the state fields times a power of two: auto (fp16 runs of models linear in their "
                "state: the initial state's and the sources' largest value near 1, in fp16's range), "
                "none, or e.g. 2^10; reports, traces and snapshots stay in the model's units "
                "(docs/precision.md)")
            ->capture_default_str();
        mc.cmd->add_option(
            "--decomp", mc.run.decomp,
            m->dims == 3
                ? "Under mpirun: ranks along x, y and z, PxQxR (default 1x1xN: slabs along z, "
                  "the fastest on one node: their halos are whole planes, sent without packing; "
                  "on 4 GPUs 2x2x1 ran 10-15% slower than 1x1x4, docs/performance.md)"
                : "Under mpirun: ranks along x and y, PxQ (default 1xN: slabs of rows, the "
                  "fastest on one node: their halos are whole rows, sent without packing; on 4 GPUs 2x2 ran "
                  "2-8% slower than 1x4)");
        mc.cmd
            ->add_option("--halos", mc.run.halos,
                         "Under mpirun with --backend cuda: nccl (device to device, one GPU per rank, the "
                         "faces sent while the interior updates where the kernel allows: the report says), "
                         "mpi (staged through the host, before each pass), or auto: nccl where every rank "
                         "has a GPU of its own and NCCL loads, else mpi")
            ->check(CLI::IsMember({"auto", "mpi", "nccl"}))
            ->capture_default_str();
        mc.cmd->add_flag("--no-overlap{false}", mc.run.overlap,
                         "Under mpirun, halos over NCCL: exchange them before each pass instead of sending the "
                         "faces of every cut axis while the interior updates (to measure what the overlap gains)");
        mc.cmd->add_flag("--no-wisdom", mc.no_wisdom,
                         "CUDA: the built-in launch defaults, not the device's wisdom (`strata tune`)");
        mc.cmd->add_flag(
            "--tune", mc.tune_first,
            "CUDA: when the wisdom has no entry for this problem, tune first (seconds) and save it. "
            "Under mpirun the entry is the process grid's and link's: every rank measures each kernel "
            "and depth on the whole run, the exchange included (tens of seconds)");
    }

    auto* tune = app.add_subcommand("tune", "Measure every launch configuration of a problem on this GPU; keep the best");
    tune->footer(
        "The candidates: every CUDA strategy that fits the problem, with its rows or planes per block\n"
        "(--chunk), steps per pass (--depth) and graph replay on or off. Successive halving: each\n"
        "measured for about 20 ms, the best eighth three times, then the best three and the built-in\n"
        "default seven times each, in turn (the median). The winner goes into this GPU's wisdom, which `strata run --backend cuda`\n"
        "then starts from when no --kernel, --chunk or --depth is given (`strata wisdom show`).\n"
        "Entries are per model, stencil, precision and size class: each side rounded to the nearest\n"
        "half octave, so 500^3 and 512^3 share one.\n\n"
        "Examples:\n"
        "  strata tune heat3d -n 512 --precision fp32\n"
        "  strata tune apf -n 8192 --precision fp32,fp64\n"
        "  strata tune heat3d -n 512 --stencil 27pt --exhaustive --no-save   # every candidate, fully");
    tune->require_subcommand(1);
    for (const ModelInfo* m : models()) {
        ModelCommand& mc = tunes.emplace_back();
        mc.model = m;
        mc.precision = std::string(to_string(m->precision));
        mc.cmd = tune->add_subcommand(m->name, m->summary);
        mc.add_params();
        mc.cmd->add_option("--precision", mc.precision, "fp32, fp64, fp16, bf16 or a list (fp32,bf16)")
            ->capture_default_str();
        mc.cmd->add_flag("--exhaustive", mc.exhaustive,
                         "Measure every candidate (2 repeats), then the best three, the built-in default and the "
                         "wisdom's choice in turn: the tuner's reference");
        mc.cmd->add_flag("--no-save", mc.no_save, "Print the winner without storing it in the wisdom");
        mc.cmd->add_flag("--quiet", mc.quiet, "No progress line");
    }

    wisdom_cmd = app.add_subcommand("wisdom", "Show, export, import or forget this GPU's tuned launch configurations");
    wisdom_cmd->footer(
        "The wisdom is a JSON file per GPU (name, SMs, memory, driver and runtime versions) in\n"
        "$STRATA_WISDOM_DIR, else $XDG_CACHE_HOME/strata/wisdom, else ~/.cache/strata/wisdom.\n\n"
        "Examples:\n"
        "  strata wisdom show\n"
        "  strata wisdom export h100.json       # to another machine with the same GPU\n"
        "  strata wisdom import h100.json       # merged with what is there\n"
        "  strata wisdom forget heat3d          # or every entry, without MODEL");
    wisdom_cmd->add_option("action", wisdom_action, "show, export, import or forget")->required();
    wisdom_cmd->add_option("argument", wisdom_argument, "FILE for export and import; MODEL for forget");

    cache_cmd = app.add_subcommand("cache", "Show or clear the compiled stencil files (the kernel cache)");
    cache_cmd->footer(
        "A stencil file is compiled at its first run (seconds) into a shared object kept in\n"
        "$STRATA_CACHE_DIR/kernels, else $XDG_CACHE_HOME/strata/kernels, else ~/.cache/strata/kernels,\n"
        "with the generated source and the compiler's log beside it; later runs load it (a millisecond).\n"
        "Every edit of a file is a new entry, and nothing is removed by itself. A clear is refused while\n"
        "a run is loading or compiling a stencil file in the cache (it would pull files from under it).\n"
        "A process that sees no GPU compiles a file's CPU engines alone (faster; an entry of its own);\n"
        "STRATA_STENCIL_CUDA=1 compiles the CUDA engines there too (a login node's cache for GPU nodes).\n\n"
        "Examples:\n"
        "  strata cache              # where it is, how many models, how many bytes\n"
        "  strata cache clear        # remove them all: each file compiles again at its next run");
    cache_cmd->add_option("action", cache_action, "show (the default) or clear");

    bench_cmd = app.add_subcommand("bench", "Time every strategy of a model and print a roofline table");
    bench_cmd->footer(
        "Each row: the median time per step over --repeats runs of --steps steps (after a warm-up),\n"
        "GCells/s, effective GB/s (the model's minimum bytes per cell), % of the device's measured\n"
        "copy bandwidth (strata probe), GFLOP/s, and the max relative error against the CPU\n"
        "reference on a smaller odd-sized grid.\n\n"
        "Examples:\n"
        "  strata bench apf                                  # 8192^2, fp32, every kernel\n"
        "  strata bench heat2d --precision fp32,fp64 --depth 4,8,12\n"
        "  strata bench heat3d --stencil 27pt --precision fp32,fp64\n"
        "  strata bench apf -n 256 --kernels planes --graphs both\n"
        "  strata bench apf --kernels multi4,temporal --depth 2,4,8\n"
        "  strata bench apf -n 4096 --snapshot-every 100     # step rate with and without snapshots");
    bench_cmd->add_option("model", bench.model, "apf, heat2d, heat3d, wave3d, or a .stencil file")->required();
    bench_cmd->add_option("-n", bench.n, "Problem size (default 8192 for 2D models, 512 for 3D ones)");
    stencil_opt = bench_cmd->add_option("--stencil", bench_stencil, "heat3d: 7pt, 19pt or 27pt (default 7pt)");
    bench_cmd->add_option("--precision", bench_precision, "fp32, fp64, fp16, bf16 or a list (fp32,bf16)")
        ->capture_default_str();
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
    bench_cmd->add_option("--out", bench.io.out_dir, "With --snapshot-every: where the frames go")->capture_default_str();
    bench_cmd->add_option("--writer-threads", bench.io.writer_threads, "With --snapshot-every: writer threads (0: default)");
    add_snapshot_files(bench_cmd, bench.io);
    bench_cmd->add_option("--frames", bench.frames,
                          "With --snapshot-every: frames per measured run (more than the pinned buffers: the "
                          "sustained rate)")
        ->capture_default_str();

    render_cmd = app.add_subcommand("render", "Turn a saved field (.vti) or a checkpoint into a PNG");
    render_cmd->footer(
        "Values are mapped linearly from --range to viridis (y grows upwards); 3D fields give the\n"
        "mid-plane across --slice.\n\n"
        "Examples:\n"
        "  strata render strata-out/apf_000100.vti             # writes strata-out/apf_000100.png\n"
        "  strata render heat.ck --slice x -o heat_x.png");
    render_cmd->add_option("file", render_file, "A .vti file or a strata checkpoint")->required();
    render_cmd->add_option("-o", render_png_path, "The PNG to write (default: FILE with .png)");
    render_cmd
        ->add_option("--slice", render_slice, "3D: the axis across which the mid-plane is cut: z, y or x")
        ->check(CLI::IsMember({"z", "y", "x"}))
        ->capture_default_str();
    render_cmd->add_option("--range", render_range, "The value range mapped to the colour map: LO HI")
        ->expected(2)
        ->capture_default_str();

    check_cmd = app.add_subcommand("check", "Check every strategy of a model against the CPU reference");
    check_cmd->footer(
        "Each strategy (and, for temporal kernels, depths 2, 3 and 4) runs --steps steps from a random\n"
        "state on an n x (n-2) (x (n-4)) grid that no tile divides; every state field is compared with\n"
        "the plain CPU loops. Exit status 1 when one is out of tolerance.\n\n"
        "Examples:\n"
        "  strata check apf\n"
        "  strata check examples/stencils/barkley.stencil -n 97\n"
        "  strata check heat3d --stencil 27pt --precision fp32 --kernels async,tma\n"
        "  strata check heat2d --backend omp                 # without a GPU: omp against cpu");
    check_cmd->add_option("model", check.model, "A model (apf, heat2d, heat3d, wave3d) or a .stencil file")->required();
    check_cmd->add_option("-n", check.n, "Cells along x (the grid is n x (n-2) [x (n-4)])")->capture_default_str();
    check_cmd->add_option("--steps", check.steps, "Steps before comparing")->capture_default_str();
    check_stencil_opt = check_cmd->add_option("--stencil", check_stencil, "heat3d: 7pt, 19pt or 27pt");
    check_cmd->add_option("--precision", check_precision, "fp32, fp64, fp16, bf16 or a list (fp32,bf16)")
        ->capture_default_str();
    check_cmd->add_option("--backend", check_backend, "cuda or omp")->capture_default_str();
    check_cmd->add_option("--kernels", check_kernels, "Comma-separated kernels (default: all)");

    show_cmd = app.add_subcommand("show", "Print the model generated from a stencil file, and how it is compiled");
    show_cmd->footer(
        "The source that `strata run FILE.stencil` compiles (once: the cache keeps it) into the engines'\n"
        "model functor; every backend and strategy runs that code. docs/stencil-language.md has the language.\n\n"
        "Examples:\n"
        "  strata show examples/stencils/heat2d.stencil\n"
        "  strata show examples/stencils/gray-scott.stencil --cuda   # and its kernels' registers and spills");
    show_cmd->add_option("file", show_file, "A .stencil file")->required();
    show_cmd->add_flag("--cuda", show_cuda,
                       "Then its CUDA kernels: each strategy's, both precisions, with the registers, spills and "
                       "shared memory ptxas gave them (compiling the file first if the cache has not got it)");

    info_cmd = app.add_subcommand("info", "Describe this build and the GPUs it sees");
    probe_cmd = app.add_subcommand(
        "probe", "Measure the GPU's copy and host<->device bandwidth and cache it for the reports");
}

}  // namespace

// --precision fp32,fp64 and the like.
std::vector<Precision> parse_precisions(const std::string& list) {
    std::vector<Precision> out;
    for (const auto& p : split_list(list)) out.push_back(parse_precision(p));
    if (out.empty()) throw UsageError("--precision needs one or more of fp32, fp64, fp16 and bf16");
    return out;
}

// `strata run FILE.stencil ...`, `strata tune FILE.stencil ...`: the file's model is compiled (or
// found in the cache) and registered before the command line is built, so that it has its
// subcommand with its options like a built-in model; the path becomes the model's name.
std::vector<const char*> load_stencil_models(int argc, const char* const* argv) {
    std::vector<const char*> args(argv, argv + argc);
    if (argc > 2 && (std::string_view(argv[1]) == "run" || std::string_view(argv[1]) == "tune") &&
        stencil::is_stencil_path(argv[2]))
        args[2] = find_model(argv[2]).name.c_str();
    return args;
}

std::optional<RunOptions> parse_run_command(int argc, const char* const* argv) {
    const std::vector<const char*> args = load_stencil_models(argc, argv);
    CommandLine c;  // (its errors reach the caller as exceptions, as parse's do)
    try {
        c.parse(argc, args.data());
    } catch (const CLI::Success&) {
        return std::nullopt;
    }
    const ModelCommand* mc = c.run_command();
    return mc ? std::optional(mc->options(false)) : std::nullopt;
}

// One line on stderr, and the exit code. Over several ranks (dist/mpi.hpp) the rank that says
// why names itself once the run has started, and an error then ends every rank.
int fail(std::ostream& err, const std::string& why, int code) {
    if (dist::size_or_one() <= 1) {
        err << "strata: error: " << why << '\n';
        return code;
    }
    const bool running = dist::phase() == dist::Phase::run;
    if (dist::says_why(code)) err << "strata: error: " << why << (running ? " (" + dist::where() + ")" : "") << '\n';
    if (running) dist::abort(code);
    return code;
}

int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err, bool out_is_terminal) {
    // A stencil file's model first (its compile can fail), then the command line with it.
    std::vector<const char*> args;
    std::optional<CommandLine> line;
    try {
        args = load_stencil_models(argc, argv);
        line.emplace();
    } catch (const dist::Silent& e) {  // rank 0 failed to compile the file, and says why
        return e.code;
    } catch (const UsageError& e) {
        return fail(err, e.what(), 2);
    } catch (const std::exception& e) {
        return fail(err, e.what(), 1);
    }
    CommandLine& c = *line;
    try {
        c.parse(argc, args.data());
        if (dist::size() > 1 && !c.run_command())
            throw UsageError(
                std::string(
                    "under mpirun only `strata run` has work for several ranks: run the others as one "
                    "process") +
                (c.tunes_given() ? " (`strata run MODEL ... --tune` under mpirun tunes over the ranks, "
                                   "the link included)"
                                 : ""));
        if (const ModelCommand* mc = c.run_command()) {
            const RunOptions o = mc->options(out_is_terminal);
            if (o.kernel == "list") {
                print_kernels(out, o.backend, o.model);
                return 0;
            }
            const StopOnSignals stop_on_signals;  // Ctrl-C: stop between steps, keep the checkpoint
            strata::run(o, out);
            return 0;
        }
        for (const ModelCommand& mc : c.tunes) {
            if (!*mc.cmd) continue;
            TuneOptions t;
            t.model = mc.model->name;
            t.params = mc.params();
            for (const auto& p : split_list(mc.precision)) t.precisions.push_back(parse_precision(p));
            t.exhaustive = mc.exhaustive;
            t.save = !mc.no_save;
            t.progress = out_is_terminal && !mc.quiet;
            run_tune(t, out);
            return 0;
        }
        if (*c.wisdom_cmd) {
            run_wisdom_command(c.wisdom_action, c.wisdom_argument, out);
            return 0;
        }
        if (*c.cache_cmd) {
            if (c.cache_action != "show" && c.cache_action != "clear")
                throw UsageError("cache: the actions are show and clear (got '" + c.cache_action + "')");
            const bool clear = c.cache_action == "clear";
            const stencil::CacheUsage u = clear ? stencil::clear_cache() : stencil::cache_usage();
            char line[512];
            std::snprintf(line, sizeof line, "%s %lld compiled model%s, %lld files, %.1f MB %s %s\n",
                          clear ? "removed" : "the kernel cache holds", static_cast<long long>(u.models),
                          u.models == 1 ? "" : "s", static_cast<long long>(u.files), double(u.bytes) / 1e6,
                          clear ? "from" : "in", u.dir.c_str());
            out << line;
            return 0;
        }
        if (*c.bench_cmd) {
            c.bench.precisions = parse_precisions(c.bench_precision);
            c.bench.backend = parse_backend(c.bench_backend);
            if (c.stencil_opt->count() > 0) c.bench.params.set("stencil", c.bench_stencil);
            c.bench.kernels = split_list(c.bench_kernels);
            if (c.bench_graphs == "on") c.bench.graphs = {true};
            else if (c.bench_graphs == "off") c.bench.graphs = {false};
            else if (c.bench_graphs == "both") c.bench.graphs = {true, false};
            else throw UsageError("--graphs must be on, off or both (got '" + c.bench_graphs + "')");
            app::run_bench(c.bench, out);
        } else if (*c.render_cmd) {
            if (c.render_slice.size() != 1)
                throw UsageError("--slice must be z, y or x (got '" + c.render_slice + "')");
            // Rendered before anything is printed: a bad file is one error line, not "wrote " and one.
            const std::string png = render_png(c.render_file, c.render_png_path, c.render_slice[0],
                                               c.render_range[0], c.render_range[1]);
            out << "wrote " << png << '\n';
        } else if (*c.check_cmd) {
            c.check.precisions = parse_precisions(c.check_precision);
            c.check.backend = parse_backend(c.check_backend);
            if (c.check.backend == Backend::cpu) throw UsageError("--backend cpu is the reference: check cuda or omp");
            if (c.check_stencil_opt->count() > 0) c.check.params.set("stencil", c.check_stencil);
            c.check.kernels = split_list(c.check_kernels);
            return app::run_check(c.check, out);
        } else if (*c.show_cmd) {
            // The kernels first (compiling the file if need be): an error then prints nothing else.
            const std::string kernels = c.show_cuda ? "\n" + stencil::kernel_resources(c.show_file) : "";
            out << stencil::show(c.show_file) << kernels;
        } else if (*c.info_cmd) {
            app::print_info(out);
        } else if (*c.probe_cmd) {
            app::run_probe_command(out);
        }
        return 0;
    } catch (const CLI::Success& e) {
        return dist::rank() == 0 ? c.app.exit(e, out, err) : 0;
    } catch (const dist::Silent& e) {  // another rank failed and says why
        return e.code;
    } catch (const Interrupted& e) {  // every rank stops at the same step (app::drive): rank 0 says so
        if (dist::size_or_one() <= 1 || dist::rank() == 0) err << "strata: " << e.what() << '\n';
        return e.exit_code();
    } catch (const SharedError& e) {  // every rank met it together: rank 0 says why, none ends the others
        if (dist::size_or_one() <= 1 || dist::rank() == 0) err << "strata: error: " << e.what() << '\n';
        return 1;
    } catch (const UsageError& e) {
        return fail(err, e.what(), 2);
    } catch (const std::bad_alloc&) {  // the checks before allocating (memory.hpp) missed something
        return fail(err, "out of host memory (" + format_bytes(double(available_host_bytes())) + " available now)", 1);
    } catch (const std::exception& e) {
        return fail(err, e.what(), 1);
    }
}

}  // namespace strata
