#pragma once
// The state scale (Problem::state_scale, docs/precision.md) where every backend meets it: the
// sources and the initial values read from files come in scaled, and the values going out
// (observables, values()) go out divided by it. One place, so that every engine scales alike.
#include <string>
#include <utility>
#include <vector>

#include "strata/core/field.hpp"
#include "strata/features.hpp"
#include "strata/model.hpp"
#include "strata/problem.hpp"

namespace strata {

// The model's sources add their wavelets times the scale.
inline PointFeatures scaled_points(PointFeatures pf, double scale) {
    for (PointSource& s : pf.sources) s.scale *= scale;
    return pf;
}

// The state fields' bits for Cell::scaled (model.hpp): every field that holds state; none at
// scale 1.
template <class Fields>
unsigned scaled_fields(const Fields& fields, double scale) {
    unsigned bits = 0;
    if (scale == 1) return bits;
    for (std::size_t f = 0; f < std::size(fields); ++f)
        if (holds_state(fields[f].role)) bits |= 1u << f;
    return bits;
}

// The initial values a model reads from files (a stencil file's file("...")), each times the
// scale before it is rounded to T (a value rounded to fp16 first would keep none of the range the
// scale gives); none for a model without them.
template <class T, class P>
std::vector<std::pair<std::string, HostField<T>>> initial_file_values(const P& problem) {
    if constexpr (requires { problem.template initial_values<T>(); }) {
        const double s = problem.state_scale();
        if (s == 1) return problem.template initial_values<T>();
        std::vector<std::pair<std::string, HostField<T>>> out;
        for (auto& [name, wide] : problem.template initial_values<double>()) {
            HostField<T> f(wide.extent);
            for (std::size_t n = 0; n < wide.data.size(); ++n) f.data[n] = T(wide.data[n] * s);
            out.emplace_back(name, std::move(f));
        }
        return out;
    } else {
        (void)problem;
        return {};
    }
}

// Stored values as the model's: divided by the scale (exact: a power of two).
template <class T>
std::vector<double> unscaled(const std::vector<T>& v, double scale) {
    std::vector<double> out(v.begin(), v.end());
    if (scale != 1)
        for (double& x : out) x /= scale;
    return out;
}

}  // namespace strata
