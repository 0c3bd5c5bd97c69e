#pragma once
// Point sources and receivers: a feature any model can put on one of its stencil fields (wave3d
// puts them on p). After each step's update the sources add their wavelets at their cells, then
// the receivers record the field there; the engines keep the recorded rows as the array "traces".
// The points and the wavelet are the kernels' too (NVRTC's included); the rest is the host's.
#ifndef __CUDACC_RTC__
#include <vector>
#endif

#include "strata/core/cstdint.hpp"
#include "strata/core/hd.hpp"

namespace strata {

struct GridPoint {
    int i = 0, j = 0, k = 0;
};

// A Ricker wavelet at a grid point: field += scale * ricker(n dt, f0) after step n's update.
struct PointSource {
    GridPoint at;
    double f0 = 0;
    double scale = 0;
};

#ifndef __CUDACC_RTC__
struct PointFeatures {
    int field = -1;                   // the model's field index they act on; -1: the model has none
    std::vector<PointSource> sources;
    std::vector<GridPoint> receivers;
    std::int64_t record_steps = 0;    // steps recorded (the run goes on past them unrecorded)
    double dt = 0;                    // the sources' clock: step n is at time n dt

    bool active() const { return field >= 0; }
    // Rows of traces after `step` steps.
    std::int64_t rows(std::int64_t step) const { return step < record_steps ? step : record_steps; }
};

// Error unless `values` is a row of traces per recorded step up to `step`: the state a run
// continues from.
void check_traces(const PointFeatures& pf, std::int64_t step, std::size_t values);
#endif

// The Ricker wavelet of peak frequency f0, delayed by t0 = 1.5 / f0 so it starts at ~0.
STRATA_HD double ricker(double t, double f0);

}  // namespace strata

#if defined(__CUDACC__)
#define STRATA_EXP(x) ::exp(x)
#else
#include <cmath>
#define STRATA_EXP(x) std::exp(x)
#endif
namespace strata {
STRATA_HD double ricker(double t, double f0) {
    const double pi = 3.14159265358979323846;
    const double a = pi * f0 * (t - 1.5 / f0), a2 = a * a;
    return (1 - 2 * a2) * STRATA_EXP(-a2);
}
}  // namespace strata
#undef STRATA_EXP
