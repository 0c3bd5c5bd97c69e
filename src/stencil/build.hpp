#pragma once
// A stencil file made into a registered model at run time: its generated source (codegen.hpp)
// compiled with this build's compiler and the engines' headers (which travel inside the binary)
// into a shared object, cached on disk, loaded, registered: cache.cpp (the cache and its lock),
// compile.cpp (the host compile), kernels.cpp (NVRTC's compile of the kernels), load.cpp (loading).
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "strata/problem.hpp"

namespace strata::stencil {

// Whether a model name is a stencil file's path (it ends with ".stencil").
bool is_stencil_path(std::string_view name);

// The model of the stencil file at `path`, registered (models(), find_model()) under the file's
// stem ("barkley" for examples/barkley.stencil; with the text's hash where a model has that stem):
// from the cache when the same source was compiled before by the same compiler and Strata, else
// compiled now (seconds; a line on stderr says so). Loading the same file again, unchanged,
// returns the same model; an edited file is a new model (named with its text's hash). UsageError for a file with mistakes or one the engines cannot take yet (file, line,
// column); Error when the compiler fails, naming the generated file (kept) and its log.
const ModelInfo& load_model(const std::string& path);

// In a CUDA build a model gets its CUDA engines (their host side and NVRTC's kernels) where this
// process sees a GPU, and, without one, where $STRATA_STENCIL_CUDA is 1 (to fill a cache on a
// machine without GPUs, such as a cluster's login node, for the nodes that have them) or after
// compile_cuda_engines(); otherwise only its CPU engines, in one C++ compile (a few times faster;
// its cuda backend then says why it has none). The two are different entries in the cache.
void compile_cuda_engines();

// What load_model did for a model, for the report's line and the compile-time and start-up rows.
struct LoadStats {
    bool compiled = false;  // false: the cache had it
    double seconds = 0;     // generating, compiling (if it did) and loading
    std::string object;     // the shared object's path
    bool cuda = false;      // compiled with its CUDA engines (compile_cuda_engines())
    // The CUDA driver's start, the process's first call to it, where it came just before (the
    // first model a process loads): any program that runs on the GPU pays it, and on some hosts
    // it is ten times the load (0.1 s), so it is timed apart from `seconds`.
    double driver_seconds = 0;
};
LoadStats load_stats(const ModelInfo& model);

// The generated source and the command that compiles it (`strata show FILE`).
std::string show(const std::string& path);

// The CUDA kernels compiled from the stencil file at `path` (compiled now if the cache has not got
// it, with its CUDA engines, with or without a GPU), with the registers, spills, stack and static
// shared memory that ptxas gave each, from the compiler's log (`strata show FILE --cuda`).
// UsageError in a build without CUDA.
std::string kernel_resources(const std::string& path);
// Its table, from a model's compiler log (the CUDA parts' ptxas lines, under their "== the CUDA
// engines, fp32" headings): one row per kernel and architecture, sorted; "" where it lists none.
std::string kernel_table(std::istream& log);

#ifdef STRATA_HAVE_CUDA
// The name expressions of the kernels the engines of the stencil file at `path` launch (loading it
// first, with its CUDA engines): what NVRTC compiled for them, listed with their symbols in the table beside
// the model's shared object (OBJECT.kernels, its cubins OBJECT.N.cubin).
std::vector<std::string> launched_kernels(const std::string& path);
#endif
// The engines' headers as the compilers read them: a directory in the cache, written once per set
// of contents (the ones embedded in this binary).
std::string headers_directory();

// $STRATA_CACHE_DIR, else $XDG_CACHE_HOME/strata, else ~/.cache/strata; compiled models go into its
// kernels/ directory.
std::string cache_dir();

// The compiled models' directory (cache_dir()/kernels): its compiled models (shared objects), and
// its files and bytes in all (the objects, the generated sources and compiler logs kept beside
// them, the engines' headers). `strata cache show`.
struct CacheUsage {
    std::string dir;
    std::int64_t models = 0, files = 0, bytes = 0;
};
CacheUsage cache_usage();
// Removes everything in that directory (`strata cache clear`): the next run of each stencil file
// compiles it again. What it removed. Refused (Error) while a run loads or compiles a model there:
// runs hold the cache's lock shared, a clear alone.
CacheUsage clear_cache();

}  // namespace strata::stencil
