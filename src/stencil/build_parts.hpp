#pragma once
// What the four files of the stencil build share (build.hpp is their public side): cache.cpp (the
// cache and its lock), compile.cpp (the host compile), kernels.cpp (NVRTC's compile of the kernels)
// and load.cpp (loading, compiling first where the cache has not got the model). How they fit:
//
// Stencil files made into models at run time (build.hpp). The generated unit is compiled with the
// built-in models' standard, defines and architectures: by the C++ compiler into a shared object
// that resolves the library's symbols from the program that loads it (which exports them:
// -rdynamic), and in a CUDA build its kernels, every strategy of every precision, by NVRTC into
// cubins beside it (rtc.hpp). One entry per source, compiler commands and headers, named by their
// hash, in the cache; its files written under temporary names and renamed, the shared object last,
// so concurrent runs never see half of one.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/stencil.hpp"

namespace strata::stencil::detail {

namespace fs = std::filesystem;

// cache.cpp
std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ull);
std::string hex(std::uint64_t v);
std::string env(const char* name);
// A suffix no other process writing the cache uses, on this machine or another that shares it.
std::string temporary_suffix();
void write_file(const fs::path& path, const std::string& text);
// The hash of the embedded headers: part of every cached object's name, since an object built
// against other headers (another build of the same version) may lay out the library's types
// differently.
std::uint64_t headers_hash();
// The headers in the cache, once per set of contents: written into a directory of their own
// that is renamed into place whole.
fs::path headers_dir(const fs::path& kernels);
// The cache's lock (kernels.lock beside the kernels directory): a run loading or compiling a model
// holds it shared, `strata cache clear` alone, so a clear never pulls the headers, the source or
// a half-built object from under a compile. (flock: released when the process ends, however.) A
// guard, not what the cache's correctness rests on (it renames whole files into place): where the
// lock cannot be had (a read-only cache, a filesystem without locks) the cache works unguarded.
class CacheLock {
public:
    enum Mode { shared, alone_or_fail };
    explicit CacheLock(Mode mode);
    ~CacheLock();
    CacheLock(const CacheLock&) = delete;
    CacheLock& operator=(const CacheLock&) = delete;

private:
    int fd_ = -1;
};

// compile.cpp
std::string quoted(const std::string& s);
// The CUDA driver's start, timed: seconds the process's first call to it took if this call made
// it, else 0 (and 0 in a build without CUDA).
double start_cuda_driver();
// The defines of this build's CUDA units (as the host compiler and NVRTC take them).
std::vector<std::string> cuda_defines();

// This build's compilers for the generated unit: the C++ compiler, and in a CUDA build NVRTC for
// the kernels. With the CUDA engines (a CUDA build, and a GPU visible or the engines asked for:
// build.hpp), six parts side by side (the registration with the CPU engines of fp32 and
// fp64; the CPU engines of fp16 and bf16; the CUDA engines' host side of each of the four
// precisions: their kernels are parsed, never compiled, there), one link, then NVRTC compiles the
// kernels the shared object's launch sites name (cuda/launch.hpp), programs per precision and
// architecture side by side (kernels.cpp). Without, one C++ compile (in a CUDA build with
// STRATA_CUDA_ENGINES_LEFT_OUT: register.hpp). $STRATA_CXX overrides the C++
// compiler.
//
// The CUDA engines' host side only sets up launches: compiled at -O1 (measured with nvcc, whose
// host compile it replaces: 11.8 / 10.5 s at -O3 against 10.3 / 9.7 s at -O1 for heat7.stencil's
// three parts, run 77). (-Wno-psabi: GCC's note that a tensor map, passed by value to a launch, is
// passed as GCC 4.6 began to: nothing to do with NVRTC's kernels.)
struct Compiler {
    bool cuda = false;
    // With the include directory as @INCLUDE@, the source as @IN@; part i writes @OUT@.i.o, the
    // link (or the single compile) writes @OUT@. A part's name heads its log in the model's.
    struct Part {
        std::string command, name;
    };
    std::vector<Part> parts;
    std::string link;
    std::string nvrtc;  // NVRTC's version and options (@INCLUDE@ for the headers' directory)
    std::vector<int> archs;
    std::string text() const {
        std::string t;
        for (const Part& p : parts) t += p.command + "\n//   ";
        return t + link + (nvrtc.empty() ? "" : "\n//   " + nvrtc);
    }
};
Compiler compiler();
std::string substitute(std::string s, const std::string& key, const std::string& value);
// The first line of a compiler log that says "error" (it names the generated file and line), or
// else its first line (a compiler that did not start), for a one-line message. (Not the parts'
// headings, "== NAME".)
std::string first_error(const fs::path& log);

// load.cpp
// A stencil file's generated unit, the commands that compile it and its place in the cache (the
// cache's key: the source, commands and headers, hashed).
struct Unit {
    Spec spec;
    std::string source;
    Compiler cc;
    fs::path kernels, object;
};
Unit prepare(const std::string& path);

// kernels.cpp
// Beside a model's shared object: NVRTC's cubins (KEY.N.cubin) and their table (KEY.kernels): a line
// "# image N sm_ARCH PRECISION HASH" per cubin (HASH: its bytes' FNV-1a, so that a damaged cubin is
// compiled again rather than loaded), then a line "N SYMBOL NAME" per kernel (cuda/launch.hpp reads
// them).
fs::path kernel_table_path(const fs::path& object);
fs::path kernel_image_path(const fs::path& object, std::size_t n);
#ifdef STRATA_HAVE_CUDA
// The name expressions the launch sites of the shared object `so` registered (cuda/launch.hpp).
std::vector<std::string> registered_kernels(void* so);
// NVRTC's compile of the kernels the shared object `so` (not yet in place) launches: a program per
// precision and architecture, side by side (a kernel is fp64's when a template argument names
// double). Each program's log, under its heading, into `logs` (its errors name `source`'s lines); the
// cubins and their table written beside the object. False when a program does not compile.
bool compile_kernels(const Unit& u, void* so, const fs::path& include, const fs::path& source,
                     std::vector<std::pair<std::string, std::string>>& logs);
#endif

}  // namespace strata::stencil::detail
