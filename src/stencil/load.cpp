// Loading a stencil file's model (build.hpp), where the build's parts meet: the cache's object where
// it loads whole, else the unit compiled (compile.cpp, kernels.cpp) into the cache; then NVRTC's
// cubins handed to the object and its model registered, once per file and text.
#include <dlfcn.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "ranks/mpi.hpp"
#include "stencil/build.hpp"
#include "stencil/build_parts.hpp"
#include "stencil/codegen.hpp"
#include "stencil/model.hpp"
#include "stencil/rtc.hpp"
#include "strata/core/error.hpp"
#include "strata/problem.hpp"
#include "strata/stencil.hpp"

namespace strata::stencil {

using namespace detail;  // what the four files share (build_parts.hpp)

namespace {

using Entry = const ModelInfo* (*)(const Spec*, const char*);

// What only generated models call, referenced here so that a program linked with the static
// library has it (the linker takes an archive's object only for a reference), to export.
[[gnu::used]] const void* const kForGeneratedModels[] = {reinterpret_cast<const void*>(&stencil_setup),
                                                         reinterpret_cast<const void*>(&stencil_box),
                                                         reinterpret_cast<const void*>(&describe_stencil)};

std::mutex g_mutex;
std::map<std::string, const ModelInfo*> g_loaded;  // by canonical path and the text's hash
std::map<const ModelInfo*, LoadStats> g_stats;
std::map<const ModelInfo*, void*> g_handles;  // the shared objects, by model

}  // namespace

namespace detail {

Unit prepare(const std::string& path) {
    Unit u{parse_file(path), {}, compiler(), {}, {}};
    std::string symbol = "m";  // (not "m" + hex(): g++ 12 warns of a false -Wrestrict)
    symbol += hex(fnv1a(u.spec.text));
    u.source = generate_model(u.spec, symbol);
    u.kernels = fs::path(cache_dir()) / "kernels";
    const std::string key = hex(fnv1a(u.cc.text(), fnv1a(u.source, headers_hash())));
    u.object = u.kernels / (key + ".so");
    return u;
}

}  // namespace detail

namespace {

// The model's name: the file's stem ("barkley"), as a command line takes it (letters, digits,
// '_', '-', '.'; others become '_'), with the text's hash where a model has the stem (heat2d.stencil:
// "heat2d-0f4b2a7d"; another file of that stem, or this one edited). Never a path's ending
// (".stencil"): find_model() takes those as files.
std::string model_name(const std::string& path, const Spec& spec) {
    std::string n = fs::path(path).stem().string();
    for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
    if (n.empty() || n[0] == '-' || n[0] == '.') n = "stencil_" + n;
    for (const ModelInfo* m : models())
        if (m->name == n) return n + "-" + hex(fnv1a(spec.text)).substr(0, 8);
    return n;
}

}  // namespace

bool is_stencil_path(std::string_view name) {
    constexpr std::string_view ext = ".stencil";
    return name.size() > ext.size() && name.substr(name.size() - ext.size()) == ext;
}

namespace {

#ifdef STRATA_HAVE_CUDA
// Hands the shared object `so` the cubins of its kernels, those of the GPU's architecture (asked
// only where the build names several). False when the table or a cubin is missing, unreadable or
// not the bytes NVRTC gave (its hash in the table).
bool hand_kernels(void* so, const fs::path& object, const std::vector<int>& archs) {
    using Setter = void (*)(int, const char* const*, const std::size_t*, const char*);
    const auto set = reinterpret_cast<Setter>(dlsym(so, kKernelSetter));
    std::ifstream t(kernel_table_path(object), std::ios::binary);
    if (!set || !t) return false;
    const std::string table((std::istreambuf_iterator<char>(t)), std::istreambuf_iterator<char>());
    const int arch = archs.size() > 1 ? device_arch() : archs.front();
    std::vector<std::string> images;
    std::istringstream lines(table);
    for (std::string l; std::getline(lines, l);) {
        std::istringstream w(l);
        std::string hash, image, sm, precision, sum;
        std::size_t n = 0;
        if (!(w >> hash >> image >> n >> sm >> precision >> sum) || hash != "#" || image != "image") continue;
        if (n != images.size()) return false;
        images.emplace_back();
        if (sm != "sm_" + std::to_string(arch)) continue;  // another architecture's: not loaded
        std::ifstream f(kernel_image_path(object, n), std::ios::binary);
        if (!f) return false;
        images.back().assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
        if (images.back().empty() || hex(fnv1a(images.back())) != sum) return false;
    }
    if (images.empty()) return false;
    std::vector<const char*> data;
    std::vector<std::size_t> bytes;
    for (const std::string& i : images) data.push_back(i.data()), bytes.push_back(i.size());
    set(int(images.size()), data.data(), bytes.data(), table.c_str());
    return true;
}
#endif

const ModelInfo& load_here(const std::string& path) {
    const std::lock_guard lock(g_mutex);
    const double driver_s = start_cuda_driver();  // (prepare asks it whether there is a GPU)
    const auto start = std::chrono::steady_clock::now();
    Unit u = prepare(path);
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(path, ec);
    const std::string id = (ec ? path : canonical.string()) + "#" + hex(fnv1a(u.spec.text));
    if (auto it = g_loaded.find(id); it != g_loaded.end()) return *it->second;  // the same file, unchanged
    const CacheLock in_use(CacheLock::shared);
    fs::create_directories(u.kernels);

    void* handle = nullptr;
    bool compiled = false;
    if (fs::exists(u.object)) {
        handle = dlopen(u.object.c_str(), RTLD_NOW | RTLD_LOCAL);
        const char* broken = !handle ? dlerror() : !dlsym(handle, kEntryPoint) ? "no entry point" : nullptr;
#ifdef STRATA_HAVE_CUDA
        if (!broken && u.cc.cuda && !hand_kernels(handle, u.object, u.cc.archs))
            broken = "its NVRTC kernels are missing or damaged";
#endif
        if (broken) {
            std::cerr << "strata: warning: the cached model " << u.object.string() << " does not load ("
                      << broken << "): compiling it again\n";
            if (handle) dlclose(handle);
            handle = nullptr;
            fs::remove(u.object);
        }
    }
    if (!handle) {
        const fs::path include = headers_dir(u.kernels);
        const std::string stem = u.object.stem().string();
        const fs::path source = u.kernels / (stem + ".cpp");
        const fs::path log = u.kernels / (stem + ".log");
        const fs::path tmp = u.object.string() + temporary_suffix();
        write_file(source, u.source);
        auto command = [&](const std::string& c, const fs::path& log) {
            std::string cmd = substitute(c, "@INCLUDE@", quoted(include.string()));
            cmd = substitute(cmd, "@IN@", quoted(source.string()));
            cmd = substitute(cmd, "@OUT@", quoted(tmp.string()));
            return cmd + " > " + quoted(log.string()) + " 2>&1";
        };
        std::cerr << "strata: compiling " << path << " (" << (u.cc.cuda ? "c++ and NVRTC" : "c++")
                  << ", once: the cache keeps it)...\n";
        auto part_log = [&](std::size_t i) {  // the link's is the last; this process's own (tmp's name)
            std::string name = tmp.string();
            name += '.';
            name += i < u.cc.parts.size() ? std::to_string(i) : std::string("link");
            name += ".log";
            return fs::path(name);
        };
        std::vector<std::future<int>> parts;
        for (std::size_t i = 0; i < u.cc.parts.size(); ++i)
            parts.push_back(std::async(std::launch::async, [&, i] {
                return std::system(command(u.cc.parts[i].command, part_log(i)).c_str());
            }));
        bool ok = true;
        for (auto& p : parts) ok = p.get() == 0 && ok;
        if (ok) ok = std::system(command(u.cc.link, part_log(u.cc.parts.size())).c_str()) == 0 && fs::exists(tmp);
        // The kernels: NVRTC compiles those the shared object's launch sites name (loaded from its
        // temporary name: in place only once they are), and hands them over.
        std::vector<std::pair<std::string, std::string>> kernel_logs;
#ifdef STRATA_HAVE_CUDA
        if (ok && u.cc.cuda) {
            handle = dlopen(tmp.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (!handle) {
                fs::remove(tmp);
                throw Error(std::string("loading the model compiled from ") + path + " failed: " + dlerror());
            }
            try {
                ok = compile_kernels(u, handle, include, source, kernel_logs) &&
                     hand_kernels(handle, u.object, u.cc.archs);
            } catch (...) {  // NVRTC itself failed: nothing half-built stays in the cache
                fs::remove(tmp);
                throw;
            }
        }
#endif
        {  // one log: the parts' in order, each under its name, then the link's (written whole, then renamed)
            const fs::path whole = tmp.string() + ".log";
            std::ofstream all(whole, std::ios::binary | std::ios::trunc);
            for (std::size_t i = 0; i <= u.cc.parts.size(); ++i) {
                const fs::path part = part_log(i);
                all << "== " << (i < u.cc.parts.size() ? u.cc.parts[i].name : u.cc.parts.empty() ? "the compile" : "the link")
                    << "\n";
                std::ifstream in(part, std::ios::binary);
                // (An empty log inserted would fail the stream, and every later part's would be lost.)
                if (in && in.peek() != std::ifstream::traits_type::eof()) all << in.rdbuf();
                fs::remove(part);
            }
            for (const auto& [heading, text] : kernel_logs)
                all << "== " << heading << "\n" << text << (text.empty() ? "" : "\n");
        }
        fs::rename(tmp.string() + ".log", log);
        for (std::size_t i = 0; i < u.cc.parts.size(); ++i) fs::remove(tmp.string() + "." + std::to_string(i) + ".o");
        if (!ok) {
            fs::remove(tmp);  // (a handle open on it stays valid; its model is never registered)
            throw Error("compiling the model generated from " + path + " failed: " + first_error(log) +
                        " (the generated source: " + source.string() + ", the compiler's log: " + log.string() + ")");
        }
        fs::rename(tmp, u.object);
        if (!handle) handle = dlopen(u.object.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            throw Error(std::string("loading the model compiled from ") + path + " failed: " + dlerror() +
                        " (the program must export the library's symbols: linked with -rdynamic, as the CMake "
                        "package does; a module loaded with RTLD_GLOBAL, as strata's Python package is)");
        compiled = true;
    }
    const auto entry = reinterpret_cast<Entry>(dlsym(handle, kEntryPoint));
    if (!entry) throw Error("the model compiled from " + path + " has no entry point " + kEntryPoint);
    const ModelInfo* info = entry(&u.spec, model_name(path, u.spec).c_str());
    register_model(info);
    g_loaded[id] = info;
    g_handles[info] = handle;
    g_stats[info] = {compiled,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                     u.object.string(), u.cc.cuda, driver_s};
    return *info;
}
}  // namespace

// Over several ranks, rank 0 compiles first and the others then take its object from the cache,
// instead of every rank compiling at once (a node with a cache of its own compiles once there).
// Rank 0's failure is its to say (dist/mpi.hpp): the others leave quietly with its code.
const ModelInfo& load_model(const std::string& path) {
    if (dist::size() == 1) return load_here(path);
    if (dist::rank() != 0) {
        if (const int failed = dist::allreduce_max(0)) throw dist::Silent{failed};
        return load_here(path);
    }
    try {
        const ModelInfo& m = load_here(path);
        dist::allreduce_max(0);
        return m;
    } catch (const UsageError&) {
        dist::allreduce_max(2);
        throw;
    } catch (...) {
        dist::allreduce_max(1);
        throw;
    }
}

LoadStats load_stats(const ModelInfo& model) {
    const std::lock_guard lock(g_mutex);
    const auto it = g_stats.find(&model);
    return it == g_stats.end() ? LoadStats{} : it->second;
}

#ifdef STRATA_HAVE_CUDA
namespace {
// The model of `path` with its CUDA engines, for what reads their kernels.
const ModelInfo& load_with_cuda(const std::string& path) {
    compile_cuda_engines();
    const ModelInfo& m = load_model(path);
    if (!load_stats(m).cuda)
        throw Error(path +
                    " was loaded without its CUDA engines earlier in this process (no GPU visible): set "
                    "STRATA_STENCIL_CUDA=1 before it loads");
    return m;
}
}  // namespace

std::vector<std::string> launched_kernels(const std::string& path) {
    const ModelInfo& m = load_with_cuda(path);
    const std::lock_guard lock(g_mutex);
    return registered_kernels(g_handles.at(&m));
}
#endif

std::string kernel_resources(const std::string& path) {
#ifndef STRATA_HAVE_CUDA
    throw UsageError("strata show --cuda: this build has no CUDA backend, so no kernels are compiled for " + path);
#else
    const ModelInfo& m = load_with_cuda(path);
    const fs::path log = fs::path(load_stats(m).object).replace_extension(".log");
    std::ifstream f(log);
    if (!f)
        throw Error("the compiler's log " + log.string() + " is gone: `strata cache clear`, then this again, compiles " +
                    path + " anew and keeps it");
    const std::string table = kernel_table(f);
    if (table.empty())
        throw Error("the compiler's log " + log.string() + " lists no kernels (compiled by another Strata?): `strata "
                    "cache clear`, then this again, compiles " + path + " anew");
    return "The CUDA kernels compiled from " + path + " (model " + m.name + "), as ptxas reported them in " +
           log.string() + ":\n\n" + table +
           "\nSpills are bytes stored / loaded per thread; shared memory is the static part (a kernel that sizes "
           "its ring at launch takes the rest dynamically).\n";
#endif
}

}  // namespace strata::stencil
