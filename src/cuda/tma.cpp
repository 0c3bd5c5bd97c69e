// The host side of the TMA loader (tma.cuh): tensor maps, encoded through the driver entry point
// the runtime exposes (no link to libcuda), kept per buffer.
#include "tma.hpp"

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "check.hpp"
#include "strata/core/error.hpp"

namespace strata::cuda {

namespace {

PFN_cuTensorMapEncodeTiled_v12000 encoder() {
    static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
        void* p = nullptr;
        cudaDriverEntryPointQueryResult found{};
        STRATA_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || !p)
            throw Error("the CUDA driver has no cuTensorMapEncodeTiled (the TMA kernels need driver 12.0 or later)");
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
    }();
    return fn;
}

}  // namespace

const CUtensorMap& interior_tensor_map(const void* origin, int nx, int ny, int nz, std::int64_t pitch,
                                       std::int64_t plane, int elem_bytes, int bx, int by) {
    using Key = std::tuple<const void*, int, int, int, std::int64_t, std::int64_t, int, int, int>;
    static std::mutex lock;
    static std::map<Key, CUtensorMap> maps;  // a few per engine: its buffers, once each
    const Key key{origin, nx, ny, nz, pitch, plane, elem_bytes, bx, by};
    const std::lock_guard<std::mutex> hold(lock);
    if (auto it = maps.find(key); it != maps.end()) return it->second;
    const cuuint64_t dims[3] = {cuuint64_t(nx), cuuint64_t(ny), cuuint64_t(nz)};
    const cuuint64_t strides[2] = {cuuint64_t(pitch * elem_bytes), cuuint64_t(plane * elem_bytes)};
    const cuuint32_t box[3] = {cuuint32_t(bx), cuuint32_t(by), 1}, element_strides[3] = {1, 1, 1};
    CUtensorMap map{};
    const CUresult r = encoder()(&map, elem_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
                                 3, const_cast<void*>(origin), dims, strides, box, element_strides,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        throw Error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ") for a " + std::to_string(nx) +
                    " x " + std::to_string(ny) + " x " + std::to_string(nz) + " grid, box " + std::to_string(bx) +
                    " x " + std::to_string(by) + " (" __FILE__ ")");
    return maps.emplace(key, map).first->second;
}

void require_tma() {
    int dev = 0, major = 0, minor = 0;
    STRATA_CUDA_CHECK(cudaGetDevice(&dev));
    STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    if (major < 9)
        throw UsageError("the tma and tmasync kernels need a GPU with a Tensor Memory Accelerator (sm_90, Hopper, or "
                         "later); this one is sm_" + std::to_string(major) + std::to_string(minor));
}

}  // namespace strata::cuda
