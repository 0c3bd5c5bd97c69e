// The host side of the TMA loader (tma.cuh): tensor maps, encoded through the driver entry point
// the runtime exposes (no link to libcuda), kept per buffer.
#include "tma.hpp"

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <array>
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

// A tensor map of `rank` dimensions (the first contiguous), kept by all that defines it: a few per
// engine (its buffers, once each), so a launch only looks it up.
const CUtensorMap& kept_tensor_map(const void* origin, int rank, const cuuint64_t* dims, const cuuint64_t* strides,
                                   const cuuint32_t* box, int elem_bytes) {
    using Key = std::tuple<const void*, int, std::array<cuuint64_t, 3>, std::array<cuuint64_t, 2>,
                           std::array<cuuint32_t, 3>, int>;
    static std::mutex lock;
    static std::map<Key, CUtensorMap> maps;
    Key key{origin, rank, {}, {}, {}, elem_bytes};
    for (int d = 0; d < rank; ++d) std::get<2>(key)[d] = dims[d], std::get<4>(key)[d] = box[d];
    for (int d = 0; d + 1 < rank; ++d) std::get<3>(key)[d] = strides[d];
    const std::lock_guard<std::mutex> hold(lock);
    if (auto it = maps.find(key); it != maps.end()) return it->second;
    const cuuint32_t element_strides[3] = {1, 1, 1};
    CUtensorMap map{};
    const CUresult r = encoder()(&map,
                                 elem_bytes == 4   ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                 : elem_bytes == 8 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64
                                                   : CU_TENSOR_MAP_DATA_TYPE_UINT16,  // 16-bit storage: bits
                                 cuuint32_t(rank), const_cast<void*>(origin), dims, strides, box,
                                 element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        std::string shape, boxes;
        for (int d = 0; d < rank; ++d)
            shape += (d ? " x " : "") + std::to_string(dims[d]), boxes += (d ? " x " : "") + std::to_string(box[d]);
        throw Error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ") for a " + shape +
                    " grid, box " + boxes + " (" __FILE__ ")");
    }
    return maps.emplace(key, map).first->second;
}

}  // namespace

const CUtensorMap& interior_tensor_map(const void* origin, int nx, int ny, int nz, std::int64_t pitch,
                                       std::int64_t plane, int elem_bytes, int bx, int by) {
    const cuuint64_t dims[3] = {cuuint64_t(nx), cuuint64_t(ny), cuuint64_t(nz)};
    const cuuint64_t strides[2] = {cuuint64_t(pitch * elem_bytes), cuuint64_t(plane * elem_bytes)};
    const cuuint32_t box[3] = {cuuint32_t(bx), cuuint32_t(by), 1};
    return kept_tensor_map(origin, 3, dims, strides, box, elem_bytes);
}

const CUtensorMap& run_tensor_map(const void* origin, std::int64_t n, int elem_bytes, int run) {
    const cuuint64_t dims[1] = {cuuint64_t(n)}, strides[1] = {0};  // (a 1D map has no stride)
    const cuuint32_t box[1] = {cuuint32_t(run)};
    return kept_tensor_map(origin, 1, dims, strides, box, elem_bytes);
}

const CUtensorMap& rows_tensor_map(const void* origin, int nx, int ny, std::int64_t pitch, int elem_bytes, int bx,
                                   int by) {
    const cuuint64_t dims[2] = {cuuint64_t(nx), cuuint64_t(ny)};
    const cuuint64_t strides[1] = {cuuint64_t(pitch * elem_bytes)};
    const cuuint32_t box[2] = {cuuint32_t(bx), cuuint32_t(by)};
    return kept_tensor_map(origin, 2, dims, strides, box, elem_bytes);
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
