// The decomposition's geometry (src/dist): every cell of the grid owned by exactly one rank, the
// halos where the neighbours are, the process grid's parsing. The runs themselves, over MPI ranks
// against one process, are tests/mpi_runs.sh.
#include <gtest/gtest.h>

#include <vector>

#include "ranks/decomposed.hpp"
#include "strata/core/error.hpp"

namespace strata {
namespace {

int axis_n(const Extent& e, int a) { return a == 0 ? e.nx : a == 1 ? e.ny : e.nz; }

// Every global cell owned once; each window's halos inside the grid (or wrapped) and its own
// cells where its offset says.
void check_cover(const Extent& g, const Decomposition& d, int halo, bool periodic) {
    std::vector<int> owners(std::size_t(g.cells()), 0);
    for (int r = 0; r < d.ranks(); ++r) {
        const Window w = dist::make_window(g, d, r, halo, periodic);
        for (int a = 0; a < g.dims; ++a) {
            const int n = axis_n(w.local, a), lo = w.own_lo[a], hi = n - lo - w.own_n[a];
            EXPECT_TRUE(lo == 0 || lo == halo) << "rank " << r << " axis " << a;
            EXPECT_TRUE(hi == 0 || hi == halo) << "rank " << r << " axis " << a;
            if (!periodic) {
                EXPECT_GE(w.offset[a], 0);
            }
        }
        for (int k = 0; k < w.local.nz; ++k)
            for (int j = 0; j < w.local.ny; ++j)
                for (int i = 0; i < w.local.nx; ++i)
                    if (w.owns(i, j, k)) {
                        const int gi = w.global_index(0, i), gj = w.global_index(1, j);
                        const int gk = g.dims == 3 ? w.global_index(2, k) : 0;
                        ++owners[std::size_t((std::int64_t(gk) * g.ny + gj) * g.nx + gi)];
                    }
    }
    for (std::size_t c = 0; c < owners.size(); ++c) ASSERT_EQ(owners[c], 1) << "cell " << c;
}

TEST(Decomposition, EveryCellOwnedOnceWithUnevenSplits) {
    check_cover(Extent{201, 201, 1, 1, 2}, parse_decomposition("2x3", 2), 1, false);
    check_cover(Extent{45, 45, 1, 1, 2}, parse_decomposition("3x2", 2), 1, true);
    check_cover(Extent{13, 11, 17, 4, 3}, parse_decomposition("1x2x3", 3), 4, false);
    check_cover(Extent{29, 29, 29, 1, 3}, parse_decomposition("3x1x1", 3), 1, false);
}

TEST(Decomposition, WindowsAndNeighbours) {
    const Extent g{10, 7, 1, 1, 2};
    const Decomposition d = parse_decomposition("1x3", 2);  // rows 3, 2, 2
    const Window mid = dist::make_window(g, d, 1, 1, false);
    EXPECT_EQ(mid.local.ny, 2 + 2);
    EXPECT_EQ(mid.own_lo[1], 1);
    EXPECT_EQ(mid.offset[1], 3 - 1);
    EXPECT_EQ(mid.local.nx, 10);  // one part along x: no halo there
    const auto nb = dist::neighbours(d, 1, false, 2);
    EXPECT_EQ(nb[2], 0);
    EXPECT_EQ(nb[3], 2);
    EXPECT_EQ(nb[0], -1);
    EXPECT_EQ(dist::neighbours(d, 2, false, 2)[3], -1);
    EXPECT_EQ(dist::neighbours(d, 2, true, 2)[3], 0);  // around a periodic grid
    const Window first = dist::make_window(g, d, 0, 1, true);
    EXPECT_EQ(first.offset[1], -1);
    EXPECT_EQ(first.global_index(1, 0), 6);  // its lower halo is the grid's last row
}

TEST(Decomposition, RefusesWhatCannotWork) {
    EXPECT_THROW(parse_decomposition("2x", 2), UsageError);
    EXPECT_THROW(parse_decomposition("2x2x2", 2), UsageError);
    EXPECT_THROW(parse_decomposition("0x2", 2), UsageError);
    EXPECT_THROW(parse_decomposition("2", 3), UsageError);
    EXPECT_THROW(parse_decomposition("-1x2", 2), UsageError);
    try {
        dist::make_window(Extent{20, 20, 20, 4, 3}, parse_decomposition("1x1x6", 3), 0, 4, false);
        FAIL() << "a part thinner than the halo";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("rank 5's part of the grid along z is 3 cells"), std::string::npos) << e.what();
    }
    EXPECT_EQ(default_decomposition(3, 4).parts[2], 4);
    EXPECT_EQ(default_decomposition(2, 4).parts[1], 4);
}

}  // namespace
}  // namespace strata
