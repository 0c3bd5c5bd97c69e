#pragma once
// What a model generated from a stencil file needs on the device: the language's functions and the
// report's per-cell values. NVRTC compiles it with the kernels (stencil/rtc.cpp), so it keeps to
// the headers kernels include; model.hpp adds the host's side.
#include "strata/core/hd.hpp"
#include "strata/model.hpp"

namespace strata::stencil {

// The language's functions (docs/stencil-language.md), overloaded for float and double so that an
// fp32 model computes in fp32 as a hand-written one does. Comparisons and logic give 1 or 0.
namespace fn {
STRATA_HD float abs(float v) { return fabsf(v); }
STRATA_HD double abs(double v) { return fabs(v); }
STRATA_HD float sqrt(float v) { return sqrtf(v); }
STRATA_HD double sqrt(double v) { return ::sqrt(v); }
STRATA_HD float exp(float v) { return expf(v); }
STRATA_HD double exp(double v) { return ::exp(v); }
STRATA_HD float log(float v) { return logf(v); }
STRATA_HD double log(double v) { return ::log(v); }
STRATA_HD float sin(float v) { return sinf(v); }
STRATA_HD double sin(double v) { return ::sin(v); }
STRATA_HD float cos(float v) { return cosf(v); }
STRATA_HD double cos(double v) { return ::cos(v); }
STRATA_HD float tanh(float v) { return tanhf(v); }
STRATA_HD double tanh(double v) { return ::tanh(v); }
STRATA_HD float min(float a, float b) { return fminf(a, b); }
STRATA_HD double min(double a, double b) { return fmin(a, b); }
STRATA_HD float max(float a, float b) { return fmaxf(a, b); }
STRATA_HD double max(double a, double b) { return fmax(a, b); }
STRATA_HD float pow(float a, float b) { return powf(a, b); }
STRATA_HD double pow(double a, double b) { return ::pow(a, b); }
}  // namespace fn

class StencilProblem;

// The report's reductions: the value of each of `count` fields at the cell (`field[n]`: the index
// of the n-th among the model's fields).
template <int N>
struct StencilObserver {
    static constexpr int count = N;
    int field[N];
    const StencilProblem* problem;  // for the names; the host's only
    void at(double) {}
    template <class C>
    STRATA_HD void operator()(const C& c, double (&v)[N]) const {
        for (int n = 0; n < N; ++n) v[n] = c(field[n]);
    }
#ifndef __CUDACC_RTC__
    Observables named(const Reduced (&r)[N], double cells) const;  // model.hpp
#endif
};

}  // namespace strata::stencil
