#pragma once
#include "strata/core/hd.hpp"

namespace strata {

// Partial sums of a 3x3 patch of one z-plane around a cell: the cell, its 4 edge neighbours and
// its 4 corner neighbours. A radius-1 box stencil is a function of these sums over the planes
// z-1, z, z+1, which lets the 2.5D strategies compute each plane's sums once and keep them in a
// register queue instead of re-reading three planes of neighbours per cell. A 3D model offers
// `using Sums` (these, or its own: a stencil file's are the weighted sums its planes need,
// codegen.cpp), `plane_sums(u2d)` and `store_planes(below, at, above, point, fields, index)`.
template <class T>
struct PlaneSums {
    T center, edge, corner;
};

// The sums of a plane whose centre alone is read (a star's planes z-1 and z+1): the model's
// plane_sums with every other value 0, which it does not use there.
template <class Model, class R>
STRATA_HD auto centre_sums(const Model& m, R centre) {
    return m.plane_sums([&](int di, int dj) { return di == 0 && dj == 0 ? centre : R(0); });
}

}  // namespace strata
