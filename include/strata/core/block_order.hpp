#pragma once
// The order in which a z-chunked 2.5D kernel visits its blocks, on a 1D grid (device code and
// host tests share it).
#include "strata/core/hd.hpp"

namespace strata {

struct BlockCoords {
    int x, y, z;  // tile column (x, y) and z-chunk z
};

// Block `id` of nbx * nby * nbz. Tile columns go in groups of `rows` tile rows; a group runs all
// its z-chunks, chunk by chunk, before the next group starts (the last group may be shorter).
// When a group fits on the device at once (rows * nbx resident blocks), the blocks of chunk c+1
// start as those of chunk c end, and the planes where two chunks overlap are still in L2. In the
// launch order of a 3D grid (x, then y, then z), a chunk layer larger than the device runs in
// several waves, and the overlap is read from memory twice.
STRATA_HD BlockCoords grouped_block(int id, int nbx, int nby, int nbz, int rows) {
    const int per_group = rows * nbx * nbz, group = id / per_group, rest = id - group * per_group;
    const int left = nby - group * rows;
    const int width = (left < rows ? left : rows) * nbx;  // blocks per chunk in this group
    const int z = rest / width, xy = rest - z * width;
    return {xy % nbx, group * rows + xy / nbx, z};
}

}  // namespace strata
