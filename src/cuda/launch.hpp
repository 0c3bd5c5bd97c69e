#pragma once
// Every kernel launch goes through here: `launch(STRATA_KERNEL(naive2d, Model, 32, 8), grid, block,
// smem, stream, args...)` instead of `naive2d<Model, 32, 8><<<...>>>(args...)`.
//
// Why not the triple chevrons: a kernel named this way is known both by its address, which nvcc's
// launches use, and by its name expression as C++ source ("strata::cuda::naive2d<Kernel<float>,
// 32, 8>"), which is what NVRTC needs to compile and find it when a stencil file's kernels are
// compiled at run time. Each launch site registers its kernel's name when the module that
// instantiates it loads (kernel_names()), so a module can say which kernels it can launch.
//
// The arguments are converted to the kernel's parameter types, as the chevrons do: cudaLaunchKernel
// copies each parameter's bytes, so a mismatched type would be read as another.
#include <cuda_runtime.h>
#include <cxxabi.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "check.hpp"

namespace strata::cuda {

// A kernel's template argument as C++ source: a type's full name, or a value.
template <class T>
std::string template_arg() {
    int status = 0;
    const std::unique_ptr<char, void (*)(void*)> name(
        abi::__cxa_demangle(typeid(T).name(), nullptr, nullptr, &status), std::free);
    if (status != 0 || !name)
        throw Error(std::string("cannot name the kernel argument type ") + typeid(T).name());
    return name.get();
}
template <auto V>
std::string template_arg() {
    if constexpr (std::is_same_v<decltype(V), bool>)
        return V ? "true" : "false";
    else
        return std::to_string(V);
}
inline std::string kernel_name(std::string_view kernel, std::initializer_list<std::string> args) {
    std::string out(kernel);
    out += '<';
    for (const std::string& a : args) out += (out.back() == '<' ? "" : ", ") + a;
    return out + '>';
}

// The name expressions of the kernels this module's launch sites name, in the order the module's
// static initialisation met them (one launch site each: a kernel launched from two sites is
// listed twice).
inline std::vector<std::string>& kernel_names() {
    static std::vector<std::string> names;
    return names;
}
template <class Name>
struct KernelRegistration {
    static inline const bool done = (kernel_names().push_back(Name{}()), true);
};

// One kernel's identity and what the launch sites ask of it once.
struct KernelState {
    KernelState(const void* f, std::string n) : fn(f), name(std::move(n)) {}
    const void* fn;
    std::string name;
    std::array<std::atomic<int>, 64> resident{};  // blocks held at once, by device ordinal; 0: not asked yet
    std::once_flag smem_raised;
};
// A kernel of parameters P...: what launch() takes.
template <class Sig>
struct KernelRef;
template <class... P>
struct KernelRef<void (*)(P...)> {
    KernelState* state;
};

#ifndef STRATA_RTC_HOST
template <class... P, class Name>
KernelRef<void (*)(P...)> kernel_ref(void (*fn)(P...), Name) {
    (void)KernelRegistration<Name>::done;
    static KernelState state{reinterpret_cast<const void*>(fn), Name{}()};
    return {&state};
}
#else
// An engine whose host side the host compiler built alone (a stencil file's, stencil/compile.cpp): its kernels
// are NVRTC's, in the images the loader hands over (set_rtc_kernels) before any launch, each loaded
// as a library at the first launch; a kernel is found there by the symbol NVRTC gave its name.
struct RtcLibrary {
    std::vector<std::string> images;  // cubins
    std::vector<cudaLibrary_t> libraries;
    std::map<std::string, std::pair<std::size_t, std::string>> symbols;  // name -> image, symbol
    std::once_flag loaded;
};
inline RtcLibrary& rtc_library() {
    static RtcLibrary l;
    return l;
}
// `table`: a line per kernel, "IMAGE SYMBOL NAME" (stencil/kernels.cpp writes it beside the cubins).
inline void set_rtc_kernels(int images, const char* const* cubin, const std::size_t* bytes,
                            const char* table) {
    RtcLibrary& l = rtc_library();
    for (int i = 0; i < images; ++i) l.images.emplace_back(cubin[i], bytes[i]);
    for (const char* line = table; *line;) {
        const char* end = line;
        while (*end && *end != '\n') ++end;
        const std::string_view row(line, std::size_t(end - line));
        line = *end ? end + 1 : end;
        if (row.empty() || row[0] == '#') continue;  // an image's line
        const std::size_t a = row.find(' '), b = row.find(' ', a + 1);
        if (a == std::string_view::npos || b == std::string_view::npos)
            throw Error("a malformed kernel table row");
        l.symbols[std::string(row.substr(b + 1))] = {std::stoul(std::string(row.substr(0, a))),
                                                     std::string(row.substr(a + 1, b - a - 1))};
    }
}
inline const void* rtc_function(const std::string& name) {
    RtcLibrary& l = rtc_library();
    std::call_once(l.loaded, [&] {
        if (l.images.empty())
            throw Error("no NVRTC kernels were handed to the model before its first launch");
        for (const std::string& image : l.images) {  // (empty: another architecture's)
            cudaLibrary_t lib = nullptr;
            if (!image.empty())
                STRATA_CUDA_CHECK(
                    cudaLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
            l.libraries.push_back(lib);
        }
    });
    const auto it = l.symbols.find(name);
    if (it == l.symbols.end() || it->second.first >= l.libraries.size() || !l.libraries[it->second.first])
        throw Error("NVRTC did not compile the kernel " + name + " for this GPU");
    cudaKernel_t k = nullptr;
    STRATA_CUDA_CHECK(cudaLibraryGetKernel(&k, l.libraries[it->second.first], it->second.second.c_str()));
    return reinterpret_cast<const void*>(k);  // the runtime's calls take a kernel handle as its function
}
template <class Sig, class Name>
KernelRef<Sig> kernel_ref(Name) {
    (void)KernelRegistration<Name>::done;
    static KernelState state{rtc_function(Name{}()), Name{}()};
    return {&state};
}
#endif

// Raises the kernel's dynamic shared-memory limit to `bytes`, once: past 48 KB needs the opt-in.
template <class Sig>
void allow_dynamic_smem(KernelRef<Sig> k, std::size_t bytes) {
    std::call_once(k.state->smem_raised, [&] {
        STRATA_CUDA_CHECK(
            cudaFuncSetAttribute(k.state->fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    });
}

// How many blocks of the kernel, with `threads` threads and `smem` bytes of dynamic shared memory,
// the current device holds at once (its occupancy asked once per device), at least one.
template <class Sig>
int resident_blocks(KernelRef<Sig> k, int threads, std::size_t smem) {
    int dev = 0;
    STRATA_CUDA_CHECK(cudaGetDevice(&dev));
    std::atomic<int>& n = k.state->resident[std::size_t(dev) % k.state->resident.size()];
    if (n.load() == 0) {
        int per_sm = 0, sms = 0;
        STRATA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k.state->fn, threads, smem));
        STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        n.store(per_sm * sms > 1 ? per_sm * sms : 1);
    }
    return n.load();
}

// Launches the kernel; a launch the device refuses (too much shared memory, a bad shape) throws,
// naming the kernel.
template <class... P>
void launch(KernelRef<void (*)(P...)> k, dim3 grid, dim3 block, std::size_t smem, cudaStream_t s,
            std::type_identity_t<P>... args) {
    void* params[] = {&args..., nullptr};
    const cudaError_t e = cudaLaunchKernel(k.state->fn, grid, block, params, smem, s);
    if (e != cudaSuccess)
        throw_cuda_error(e, ("cudaLaunchKernel of " + k.state->name).c_str(), __FILE__, __LINE__);
}

}  // namespace strata::cuda

// STRATA_KERNEL(k, A...): the kernel strata::cuda::k<A...>. Each of A is a type or a value. (Built
// alone by the host compiler, its type only: taking its address would instantiate its body there.)
#define STRATA_KERNEL_NAME(k, ...) \
    [] { return ::strata::cuda::kernel_name("strata::cuda::" #k, {STRATA_TEMPLATE_ARGS(__VA_ARGS__)}); }
#ifndef STRATA_RTC_HOST
#define STRATA_KERNEL(k, ...) ::strata::cuda::kernel_ref(&k<__VA_ARGS__>, STRATA_KERNEL_NAME(k, __VA_ARGS__))
#else
#define STRATA_KERNEL(k, ...) \
    ::strata::cuda::kernel_ref<decltype(&k<__VA_ARGS__>)>(STRATA_KERNEL_NAME(k, __VA_ARGS__))
#endif
// template_arg<a>() for each of the arguments (the __VA_OPT__ recursion: a dozen at most).
#define STRATA_TEMPLATE_ARGS(...) __VA_OPT__(STRATA_EXPAND(STRATA_TEMPLATE_ARGS_(__VA_ARGS__)))
#define STRATA_TEMPLATE_ARGS_(a, ...) \
    ::strata::cuda::template_arg<a>() __VA_OPT__(, STRATA_TEMPLATE_ARGS_AGAIN STRATA_PARENS(__VA_ARGS__))
#define STRATA_TEMPLATE_ARGS_AGAIN() STRATA_TEMPLATE_ARGS_
#define STRATA_PARENS ()
#define STRATA_EXPAND(...) STRATA_EXPAND3(STRATA_EXPAND3(STRATA_EXPAND3(__VA_ARGS__)))
#define STRATA_EXPAND3(...) STRATA_EXPAND1(STRATA_EXPAND1(STRATA_EXPAND1(STRATA_EXPAND1(__VA_ARGS__))))
#define STRATA_EXPAND1(...) __VA_ARGS__
