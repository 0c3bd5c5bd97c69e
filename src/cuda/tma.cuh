#pragma once
// CudaDMA's idea on Hopper's Tensor Memory Accelerator: a thread block split into a DMA warp
// that only moves data and compute warps that only compute, meeting at a ring of shared-memory
// stages guarded by barriers. The hardware does the moving: one elected thread issues a bulk
// tensor copy of a whole tile (`cp.async.bulk.tensor`, described by a tensor map), whose bytes
// complete on the stage's `full` barrier; the compute warps wait on it, read, and arrive on the
// stage's `empty` barrier, which the DMA thread waits on before refilling the stage.
//
// The contract, per stage s of S (the i-th tile goes to stage i % S, the (i / S)-th time):
//   DMA thread      acquire(i): wait empty[s] (its previous tile released), arm full[s] with the
//                   tile's bytes; then the copy, which completes them on full[s]
//   compute warps   wait(i): full[s]'s phase i / S is complete (the tile is in shared memory);
//                   release(i): after its last read, one lane per warp arrives on empty[s]
// Barriers flip phase every use, so waits are by parity: (i / S) & 1.
//
// CudaDMA's three transfer patterns are the ring's three copies, each completing on the stage's
// full barrier:
//   sequential  copy1d: a run of consecutive elements (a 1D tensor map);
//   strided     copy2d: a box of rows of a 2D array (a 2D tensor map: rows of a plane);
//   halo        copy3d: a tile plus its stencil halo in one plane of a 3D grid (a 3D tensor map
//               whose box starts at least R cells before the tile, on 16 bytes), what the 2.5D
//               sweeps stream.
// Elements outside a tensor map's tensor (the grid's interior) are zero-filled by the hardware:
// a model whose ghost layer is zero reads its halo at the faces without reading the ghost
// sectors, and without branches. tests/test_tma_cuda.cu checks each pattern through a ring.
#ifdef __CUDACC_RTC__
// NVRTC has no cuda.h: its CUtensorMap, 128 opaque bytes on 64, which the kernels take by value.
typedef struct alignas(64) CUtensorMap_st {
    unsigned long long opaque[16];
} CUtensorMap;
#else
#include "tma.hpp"
#endif
#include "strata/core/cstdint.hpp"

namespace strata::cuda {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define STRATA_TMA_DEVICE 1
#endif

template <int S>
struct TmaRing {
    std::uint64_t full[S], empty[S];  // mbarriers, in shared memory

    // One thread, before anyone uses the ring; then a __syncthreads().
    __device__ void init(unsigned releasers) {
#ifdef STRATA_TMA_DEVICE
        for (int s = 0; s < S; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&full[s])));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(&empty[s])), "r"(releasers));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // visible to the async proxy
#endif
    }

    // DMA thread: stage i % S is free (its previous tile released by every compute warp), and
    // its full barrier expects `bytes` (the whole box: the zero-filled elements count too).
    __device__ void acquire(int i, unsigned bytes) {
#ifdef STRATA_TMA_DEVICE
        const int s = i % S;
        if (i >= S) wait_parity(&empty[s], ((i / S) - 1) & 1);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&full[s])), "r"(bytes)
                     : "memory");
#endif
    }
    // DMA thread, the sequential pattern: the run of a 1D `map`'s box length from element x into
    // `dst` (128-byte aligned), completing on stage i % S's full barrier. (Through a tensor map
    // rather than a plain bulk copy: a run past the array's end reads nothing there and arrives
    // zero-filled, and compute-sanitizer's racecheck follows the ring's barriers for tensor
    // copies; for the plain bulk copy it reported the refill of a released stage as a hazard.)
    __device__ void copy1d(int i, const CUtensorMap* map, void* dst, int x) {
#ifdef STRATA_TMA_DEVICE
        asm volatile(
            "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];" ::"r"(
                smem(dst)),
            "l"(map), "r"(x), "r"(smem(&full[i % S]))
            : "memory");
#endif
    }
    // DMA thread, the strided pattern: the box at element coordinates (x, y) of a 2D `map` into
    // `dst` (128-byte aligned), completing on stage i % S's full barrier. Boxes start on 16 bytes
    // along x, as the halo's do (an x whose bytes are not a multiple of 16: illegal instruction).
    __device__ void copy2d(int i, const CUtensorMap* map, void* dst, int x, int y) {
#ifdef STRATA_TMA_DEVICE
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
                smem(dst)),
            "l"(map), "r"(x), "r"(y), "r"(smem(&full[i % S]))
            : "memory");
#endif
    }
    // DMA thread, the halo pattern: the box at element coordinates (x, y, z) of `map` into `dst`
    // (128-byte aligned), completing on stage i % S's full barrier. x * the element size must be a
    // multiple of 16 (else the copy is an illegal instruction), so a tile's box starts 16 bytes
    // before it, not R elements (PlaneTile's OFF).
    __device__ void copy3d(int i, const CUtensorMap* map, void* dst, int x, int y, int z) {
#ifdef STRATA_TMA_DEVICE
        asm volatile(
            "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
            "[%5];" ::"r"(smem(dst)),
            "l"(map), "r"(x), "r"(y), "r"(z), "r"(smem(&full[i % S]))
            : "memory");
#endif
    }
    // Compute threads: tile i is in shared memory.
    __device__ void wait(int i) {
#ifdef STRATA_TMA_DEVICE
        wait_parity(&full[i % S], (i / S) & 1);
#endif
    }
    // Compute warps, after their last read of tile i: the warp's lanes are done, one arrives (the
    // warp's first lane by the linear thread index: a block row may be narrower than a warp).
    __device__ void release(int i) {
#ifdef STRATA_TMA_DEVICE
        __syncwarp();
        if (((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x) % 32 == 0)
            asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(&empty[i % S])) : "memory");
#endif
    }

private:
    static __device__ unsigned smem(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
    static __device__ void wait_parity(std::uint64_t* bar, unsigned parity) {
#ifdef STRATA_TMA_DEVICE
        asm volatile(
            "{\n"
            ".reg .pred done;\n"
            "wait:\n"
            "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
            "@!done bra wait;\n"
            "}\n" ::"r"(smem(bar)),
            "r"(parity)
            : "memory");
#endif
    }
};

}  // namespace strata::cuda
