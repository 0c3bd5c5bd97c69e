#pragma once
// A field's extents: what the host's fields, the device's layouts and the kernels' windows share.
// Kernels include it, NVRTC's included (strata/core/cstdint.hpp).
#include "strata/core/cstdint.hpp"

namespace strata {

// Extents of a field: nx*ny*nz interior cells surrounded by `ghost` layers on every side
// (nz == 1 and no ghost layers along z for 2D fields). Row-major: x is the fastest index.
struct Extent {
    int nx = 0, ny = 0, nz = 1;
    int ghost = 1;
    int dims = 2;

    std::int64_t px() const { return nx + 2 * ghost; }
    std::int64_t py() const { return ny + 2 * ghost; }
    std::int64_t pz() const { return dims == 3 ? nz + 2 * ghost : 1; }
    std::int64_t padded_cells() const { return px() * py() * pz(); }
    std::int64_t cells() const { return std::int64_t(nx) * ny * nz; }
    // Index of interior cell (i, j, k), each counted from 0 at the first interior cell.
    std::int64_t index(std::int64_t i, std::int64_t j, std::int64_t k = 0) const {
        const std::int64_t g = ghost, gz = dims == 3 ? ghost : 0;
        return ((k + gz) * py() + (j + g)) * px() + (i + g);
    }
};

}  // namespace strata
