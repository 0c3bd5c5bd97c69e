#pragma once
// A rank's window of the global grid, and boxes of its cells (domain.hpp tells the rest): what the
// kernels see of a decomposition. Kernels include it, NVRTC's too.
#include "strata/core/cstdint.hpp"
#include "strata/core/extent.hpp"
#include "strata/core/hd.hpp"

namespace strata {

// One rank's window of the global grid (see the top of domain.hpp).
struct Window {
    Extent global;              // the whole grid
    Extent local;               // the engine's grid: owned cells and halos, all interior to it
    int offset[3] = {0, 0, 0};  // the global index of local index 0 along each axis
    int own_lo[3] = {0, 0, 0};  // the owned cells, in local indices
    int own_n[3] = {1, 1, 1};
    bool periodic[3] = {false, false, false};  // axes that wrap around in the global grid

    // The global index of local index i along `axis`, wrapped on a periodic axis.
    STRATA_HD int global_index(int axis, int i) const {
        const int n = axis == 0 ? global.nx : axis == 1 ? global.ny : global.nz;
        int g = i + offset[axis];
        if (g < 0) g += n;
        if (g >= n) g -= n;
        return g;
    }
    // The local index of global index g along `axis` (may lie outside the window).
    STRATA_HD int local_index(int axis, int g) const { return g - offset[axis]; }
    STRATA_HD bool owns(int axis, int i) const { return i >= own_lo[axis] && i < own_lo[axis] + own_n[axis]; }
    STRATA_HD bool owns(int i, int j, int k) const {
        return owns(0, i) && owns(1, j) && (global.dims == 2 || owns(2, k));
    }
    STRATA_HD bool holds(int i, int j, int k) const {
        return i >= 0 && j >= 0 && k >= 0 && i < local.nx && j < local.ny && k < local.nz;
    }
};

// A box of a window's cells, in its local indices: [lo, hi) along each axis.
struct HaloBox {
    int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    STRATA_HD std::int64_t cells() const {
        return std::int64_t(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
    }
};

}  // namespace strata
