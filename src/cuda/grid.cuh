#pragma once
// Device-side layout of a field and the index helpers every strategy uses.
//
// Rows are padded so that the first interior cell of every row sits on a 128-byte boundary (on a
// rank whose kernels start at another column, that one: DeviceLayout::of): a warp reading 32
// consecutive cells from there touches whole cache lines. Kernel pointers point at interior cell
// (0,0,0); ghost cells are at negative offsets.
#ifdef STRATA_RTC_HOST
#include "host_parse.hpp"
#endif
#include "strata/core/cstdint.hpp"
#include "strata/core/extent.hpp"

namespace strata::cuda {

// The cells a thread moves as one vector access: 16 bytes of fp32 or fp64 values, 8 bytes of a
// 16-bit type. At 16 bits a kernel's tiles and threads are fp32's, its words half as wide.
template <class T>
inline constexpr int kLanes = sizeof(T) == 2 ? 4 : 16 / int(sizeof(T));

// 16-byte words whatever the type: 8 cells at 16 bits (the 2.5D sweeps, whose bytes in flight
// per thread would halve with kLanes' 8-byte words).
template <class T>
inline constexpr int kWideLanes = 16 / int(sizeof(T));

// Whether a kernel takes fp32's launch shapes (threads, tiles, blocks per SM): fp32 and the 16-bit
// types, whose values are fp32 in registers (fp64's shapes would halve their blocks per SM).
template <class T>
inline constexpr bool kFp32Shapes = sizeof(T) <= 4;

// Warp shuffles of one value of a storage type among all 32 lanes: `shuffle` is the intrinsic's
// call, which takes no 16-bit class type (those travel as their bits).
template <class T, class Shuffle>
__device__ __forceinline__ T shuffled(T v, Shuffle shuffle) {
    if constexpr (sizeof(T) == 2) {
        T r;
        r.bits = static_cast<unsigned short>(shuffle(unsigned(v.bits)));
        return r;
    } else {
        return shuffle(v);
    }
}
template <class T>
__device__ __forceinline__ T shfl_up(T v, unsigned delta, int width = 32) {
    return shuffled(v, [&](auto x) { return __shfl_up_sync(~0u, x, delta, width); });
}
template <class T>
__device__ __forceinline__ T shfl_down(T v, unsigned delta, int width = 32) {
    return shuffled(v, [&](auto x) { return __shfl_down_sync(~0u, x, delta, width); });
}

struct DevGrid {
    int nx, ny, nz;
    std::int64_t pitch, plane;  // elements between rows and between planes
    // The planes (3D) or rows (2D) a launch updates: [lo, hi) of the slowest axis, clamped to the
    // grid. All of them, unless a rank updates the slabs its neighbours wait for first and the
    // rest while they travel (engine.cuh). Kernels lay their blocks over this span, offset by lo;
    // what they read, and where the boundary lies, stay the whole grid's.
    int lo = 0, hi = 1 << 30;
    // The columns (x) a launch updates, and in 3D its rows (y): [xlo, xhi) and [ylo, yhi), all of
    // them unless a rank cut along x or y updates the columns or rows beside its neighbours first.
    // Each bound is whole tiles from x0 (y0) along that axis (Strategy::tile), or the axis's
    // length or more, so that a span's blocks are exactly some of the whole launch's:
    // kernels lay their blocks from xlo (ylo) and store what they stored before.
    int xlo = 0, xhi = 1 << 30, ylo = 0, yhi = 1 << 30;
    // Where the tiles of x and y start: the bounds above lie whole tiles from here. 0, unless a rank
    // updates its own cells alone (engine.cuh: own_cells): then its first own column (on 16 bytes)
    // and row, so that the halo beside them adds no column or row of tiles.
    int x0 = 0, y0 = 0;
    __host__ __device__ std::int64_t at(int i, int j, int k = 0) const { return k * plane + j * pitch + i; }
    // The span's end on an axis of n cells, and its length.
    __host__ __device__ int end(int n) const { return hi < n ? hi : n; }
    __host__ __device__ int span(int n) const { return end(n) - lo; }
    __host__ __device__ int xend() const { return xhi < nx ? xhi : nx; }
    __host__ __device__ int yend() const { return yhi < ny ? yhi : ny; }
    // Whether the launch updates every column and (3D) row.
    __host__ __device__ bool whole_xy() const { return xlo == 0 && xhi >= nx && ylo == 0 && yhi >= ny; }
};

// The block's dynamic shared memory, declared here once for every kernel: two declarations of
// the extern array with different alignments in one translation unit are an error nvcc only
// warns about (#1886). 128 bytes, what the TMA's copies need of their destinations.
__device__ __forceinline__ unsigned char* dynamic_smem() {
    extern __shared__ __align__(128) unsigned char smem_raw[];
    return smem_raw;
}

// The index a load should use for coordinate i along an axis of n cells. Mirror boundaries read
// the cell two inward (i = -1 -> 1, i = n -> n-2); fixed boundaries read the ghost layer. Either
// way the result is clamped into memory that exists: threads of partial tiles load clamped
// values that feed no stored cell.
template <bool Mirror, bool Periodic = false>
__device__ __forceinline__ int load_index(int i, int n) {
    if constexpr (Periodic) {  // the cell a period away (clamped: a tile's far overhang feeds no stored cell)
        i = i < 0 ? i + n : (i >= n ? i - n : i);
        return min(max(i, 0), n - 1);
    } else if constexpr (Mirror) {
        i = i < 0 ? -i : (i >= n ? 2 * n - 2 - i : i);
        return min(max(i, 0), n - 1);
    } else {
        return min(max(i, -1), n);
    }
}

// Blocks of `per_block` cells that cover n cells.
__host__ __device__ inline unsigned blocks_for(int n, int per_block) { return unsigned((n + per_block - 1) / per_block); }

// Host-side: the padded layout for an extent and element size.
struct DeviceLayout {
    DevGrid grid;
    // Elements of 128 bytes: the interior starts a multiple of them into each row, less aligned_x.
    std::int64_t align_elems;
    std::int64_t total_elems;  // allocation size
    std::int64_t origin;       // offset of interior (0,0,0) from the allocation start
    // Elements from the start of interior (0,0,0)'s unit of the slowest axis (its plane in 3D, its
    // row in 2D, ghosts and padding included) to the cell: halo.cuh sends whole units.
    std::int64_t lead(int dims) const { return origin % (dims == 3 ? grid.plane : grid.pitch); }
    // Column `aligned_x` of every row on 128 bytes (a multiple of 16 bytes' elements): where a
    // rank's kernels lay their first tile (engine.cuh: own_cells), so that a warp's row of loads
    // covers whole lines. 0 elsewhere: interior column 0.
    static DeviceLayout of(const Extent& e, std::size_t elem_bytes, int aligned_x = 0) {
        DeviceLayout l;
        l.align_elems = std::int64_t(128 / elem_bytes);
        const std::int64_t a = l.align_elems, shift = (a - aligned_x % a) % a;
        const std::int64_t pitch = (a + shift + e.nx + e.ghost + a - 1) / a * a;
        const std::int64_t rows = e.py() * e.pz();
        l.grid = DevGrid{e.nx, e.ny, e.nz, pitch, pitch * e.py()};
        l.total_elems = rows * pitch;
        const std::int64_t gz = e.dims == 3 ? e.ghost : 0;
        l.origin = gz * l.grid.plane + e.ghost * pitch + a + shift;
        return l;
    }
};

}  // namespace strata::cuda
