#pragma once

namespace strata {

// Partial sums of a 3x3 patch of one z-plane around a cell: the cell, its 4 edge neighbours and
// its 4 corner neighbours. A radius-1 box stencil is a function of these sums over the planes
// z-1, z, z+1, which lets the 2.5D strategies compute each plane's sums once and keep them in a
// register queue instead of re-reading three planes of neighbours per cell. A 3D model offers
// `plane_sums(u2d)` and `store_planes(below, at, above, point, fields, index)` for them.
template <class T>
struct PlaneSums {
    T center, edge, corner;
};

}  // namespace strata
