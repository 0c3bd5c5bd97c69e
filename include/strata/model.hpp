#pragma once
// How a model describes its state to the engines: its fields and their roles, how its kernel
// functor's `Fields` are made from the engine's buffers, and the per-cell values its report
// reduces. Every backend reads a model through these; none knows a model by name.
//
// Kernels include it, NVRTC's too (a stencil file's kernels compiled at run time): what only the
// host needs is left out there.
#ifndef __CUDACC_RTC__
#include <cmath>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#endif

#include "strata/core/cstdint.hpp"
#include "strata/core/half.hpp"
#include "strata/core/hd.hpp"

namespace strata {

// What a field is to the time loop.
//   stencil     read through the stencil's neighbourhood; double-buffered: each step reads one
//               buffer and writes the other, then they swap. The other buffer is scratch,
//               unless the next field is its `previous`.
//   previous    the stencil field's other buffer when it carries state (a leapfrog's p^{n-1}):
//               the update reads it at the cell and writes the new value over it.
//   state       pointwise state, read and written at its own cell, updated in place (a kernel
//               that advances several steps per pass writes a second copy and swaps).
//   coefficient constant for the whole run (a velocity model); never written.
enum class FieldRole { stencil, previous, state, coefficient };

struct FieldDecl {
    const char* name;
    FieldRole role;
    double lo = 0, hi = 1;  // the values it typically takes: random test states, picture ranges
};

inline bool holds_state(FieldRole r) { return r != FieldRole::coefficient; }

// Whether a model's kernel functor declares a periodic boundary (`static constexpr bool periodic`):
// a neighbour beyond one face is the cell at the opposite face. Models that say nothing have not.
template <class Model>
constexpr bool periodic_boundary() {
    if constexpr (requires { Model::periodic; })
        return Model::periodic;
    else
        return false;
}

// The value of a model's ghost cells when its boundary holds them at one (`static constexpr double
// ghost_value`: a stencil file's `boundary fixed V`); 0 for the others (zero ghosts, or ghosts the
// mirror or periodic boundary sets). The engines fill every field's ghost layer with it, and no
// strategy writes ghosts.
template <class Model>
constexpr double ghost_value() {
    if constexpr (requires { Model::ghost_value; })
        return Model::ghost_value;
    else
        return 0;
}

// How many fields a model reads through the neighbourhood (`static constexpr int hoods`; one for
// models that do not say). With several (Gray-Scott's u and v), the stencil fields come first in
// the model's fields, its Fields hold `in[h]` and `out[h]`, and its update reads nb(h, di, dj[, dk]);
// with one, `in`, `out` and nb(di, dj[, dk]).
template <class Model>
constexpr int hoods() {
    if constexpr (requires { Model::hoods; })
        return Model::hoods;
    else
        return 1;
}

// Where neighbourhood field h of a model's Fields is now.
template <class Model>
STRATA_HD const typename Model::value_type* hood_in(const typename Model::Fields& f, int h) {
    if constexpr (hoods<Model>() == 1) {
        (void)h;
        return f.in;
    } else {
        return f.in[h];
    }
}

// What a strategy hands a model's update: `at(h, di, dj[, dk])` reads neighbourhood field h; a
// model of one such field gets nb(di, dj[, dk]).
template <class Model, class At>
STRATA_HD auto neighbourhood(const At& at) {
    if constexpr (hoods<Model>() > 1)
        return at;
    else if constexpr (Model::dims == 2)
        return [&at](int di, int dj) { return at(0, di, dj); };
    else
        return [&at](int di, int dj, int dk) { return at(0, di, dj, dk); };
}

// Whether a model's update only reads cells (`static constexpr bool cells_only`: a stencil file's
// model of none of the built-ins' interfaces: codegen.cpp). Such a model is served by the
// strategies that hand the update its neighbourhood cell by cell (strategies.cuh's
// cell_strategies: naive, smem, cached, in 3D stream, in 2D temporal); the others take what only
// the built-in models give: heat3d's plane sums, wave3d's Laplacian rings, the 2D ladder's
// radius-1 star of one row above and below. Its functor's `next_values(nb, point, u)` computes a
// cell's new values, `write_values(u, point, fields, i)` stores them, `store` does both.
template <class Model>
constexpr bool cells_only() {
    if constexpr (requires { Model::cells_only; })
        return Model::cells_only;
    else
        return false;
}

// The smem strategy's tile for a cells-only model: a brick of 32 x 8 (2D) or 32 x 4 x BZ (3D)
// cells and its halo, per neighbourhood field, held in static shared memory (48 KB at most). Sized
// for fp64, so that a model's strategies are the same in both precisions.
template <class Model>
constexpr int smem_brick_z() {
    return Model::radius == 1 ? 4 : 2;
}
template <class Model>
constexpr long smem_tile_bytes() {
    constexpr long R = Model::radius, side = 2 * R;
    constexpr long cells = Model::dims == 2 ? (32 + side) * (8 + side) : (32 + side) * (4 + side) * (smem_brick_z<Model>() + side);
    return cells * hoods<Model>() * long(sizeof(double));
}
template <class Model>
constexpr bool smem_fits() {
    return smem_tile_bytes<Model>() <= 48 * 1024;
}

// The stream strategy's ring for a cells-only 3D model: 2R+1+2 planes of a 32 x 16 tile and its
// halo, per neighbourhood field, in dynamic shared memory; sized for fp64 and kept within 99 KB
// (what a block may take on every architecture since sm_80 but sm_80's 163 KB). The tile and the
// planes ahead are cell_strategies' launch of stream3d (src/cuda/strategies.cuh): keep them alike.
template <class Model>
constexpr long stream_ring_bytes() {
    constexpr long R = Model::radius;
    return (2 * R + 1 + 2) * (32 + 2 * R) * (16 + 2 * R) * hoods<Model>() * long(sizeof(double));
}
template <class Model>
constexpr bool stream_fits() {
    return Model::dims == 3 && stream_ring_bytes<Model>() <= 99 * 1024;
}

// The cached strategy's window for a cells-only model (strategies3d.cuh, cells_cached): per
// neighbourhood field, the cells x-R .. x+R of the thread's row in each of its ZC planes (rows),
// and for the R planes (rows) beyond them on either side the same, or for a 3D star their centre
// alone; in registers, with its cells' pointwise values. It is offered where one plane's window,
// counted as a box's, takes at most kCachedWindowWords 4-byte registers in fp64, so that a model's
// strategies are the same in both precisions. ZC, the planes (rows) per thread, is the most of 8,
// 4, 2, 1 whose window and pointwise values take at most 34 registers in 3D and 64 in 2D (the
// 9-point box at 8192^2, 8 rows: 88% / 96% of copy). Fewer planes read more of them twice (each
// thread's ZC + 2R planes for ZC), more take registers from the warps that hide the loads'
// latency. Measured in 3D on an H200 (docs/runs/170-171, GCells/s at ZC against ZC/2 planes, with
// the words each counts): 3D Gray-Scott fp64, 2 planes (32 words) 102.7 against 95.0; the radius-2
// wave with a coefficient fp32, 4 (32) 161.7 against 142.7, bf16 (two cells a thread) 213.4
// against 182.6; 3D Aliev-Panfilov fp32, 8 (34) 192.9 against 177.9 (its 20 bytes of spills
// included), bf16 226.5 against 209.9. Past 34 they lost: the wave fp64, 2 (36) 73.6 against
// 86.2; Aliev-Panfilov fp64, 4 (36) 97.9 against 99.4.
inline constexpr int kCachedWindowWords = 128;
template <class Model>
constexpr long cached_hood_words(int planes, long value_bytes) {  // the neighbourhood values alone
    // (2D counts a box's: its budget of 64 was measured so, and a star's rows there are not yet.)
    constexpr long R = Model::radius, beyond = Model::star && Model::dims == 3 ? 1 : 2 * R + 1;
    return hoods<Model>() * (planes * (2 * R + 1) + 2 * R * beyond) * value_bytes / 4;
}
template <class Model>
constexpr long cached_window_words(int planes, long value_bytes) {
    using Point = typename Model::Point;
    constexpr long point = __is_empty(Point) ? 0 : long(sizeof(Point) / sizeof(typename Model::value_type));
    return cached_hood_words<Model>(planes, value_bytes) + planes * point * value_bytes / 4;
}
template <class Model, class T>
constexpr int cached_planes() {
    constexpr long budget = Model::dims == 3 ? 34 : 64;
    for (int planes = 8; planes > 1; planes /= 2)
        if (cached_window_words<Model>(planes, sizeof(T) < 4 ? 4 : sizeof(T)) <= budget) return planes;
    return 1;
}
template <class Model>
constexpr long cached_offer_words() {  // one plane's window in fp64, counted as a box's
    constexpr long R = Model::radius;
    return hoods<Model>() * (1 + 2 * R) * (2 * R + 1) * long(sizeof(double)) / 4;
}
template <class Model>
constexpr bool cached_fits() {
    return cached_offer_words<Model>() <= kCachedWindowWords;
}

// Whether a temporal strategy fits the model: its tiles hold at most two neighbourhood fields on
// chip (shared memory and registers). The built-in shapes' kernels advance radius-1 stencils; a
// cells-only model's read any neighbourhood, star or box, up to radius 2.
inline constexpr int kTemporalMaxHoods = 2, kCellsTemporalMaxRadius = 2;
template <class Model>
constexpr bool temporal_fits() {
    if (hoods<Model>() > kTemporalMaxHoods) return false;
    if (!cells_only<Model>()) return true;
    return Model::radius <= kCellsTemporalMaxRadius;
}

// The engine's buffers for a model's N fields, as a kernel step sees them: `in[f]` is what field
// f holds now, `out[f]` where its new value goes (the other buffer of a stencil field; the same
// buffer for the others). A model's `bind` turns them into its functor's Fields.
template <class T, int N>
struct FieldPtrs {
    T* in[N];
    T* out[N];
};

// One cell of a model's fields, for the reductions behind its report: `c(f, di, dj, dk)` reads
// field f at an offset from the cell (i, j, k), its position in the whole grid. All fields of a
// model share one layout. `shift`: where a rank's window of the grid (domain.hpp) starts, as an
// offset of the memory index (0 on one rank). The fields whose bits are set in `scaled` are stored
// times a state scale (Problem::state_scale): their values come out divided by it (`unscale`, its
// inverse, a power of two: exact), so a model's figures are the same whatever the scale.
template <class T, int N>
struct Cell {
    const T* const* origin;  // field f's interior cell (0, 0, 0)
    std::int64_t pitch, plane;
    int i, j, k;
    std::int64_t shift = 0;
    unsigned scaled = 0;
    double unscale = 1;
    STRATA_HD double operator()(int f, int di = 0, int dj = 0, int dk = 0) const {
        const double v =
            double(origin[f][shift + std::int64_t(k + dk) * plane + std::int64_t(j + dj) * pitch + (i + di)]);
        return (scaled >> f & 1u) ? v * unscale : v;
    }
};

// A reduction of one per-cell value over the interior.
struct Reduced {
    double max_abs = 0, sum = 0, sum_sq = 0;
    STRATA_HD void add(double v) {
        const double a = v < 0 ? -v : v;
        max_abs = a > max_abs ? a : max_abs;
        sum += v;
        sum_sq += v * v;
    }
};

#ifndef __CUDACC_RTC__
// The named figures a model's report states about its current state (apf's Max norm and L2
// norm, heat's error against the exact solution, wave's energy), in the model's order.
class Observables {
public:
    Observables() = default;
    Observables(std::initializer_list<std::pair<std::string, double>> v) : values_(v) {}
    explicit Observables(std::vector<std::pair<std::string, double>> v) : values_(std::move(v)) {}
    double operator[](std::string_view name) const;  // Error when the model has no such figure
    const std::vector<std::pair<std::string, double>>& all() const { return values_; }

private:
    std::vector<std::pair<std::string, double>> values_;
};
#endif

}  // namespace strata
