// The stencil language's front end and code generation: any bytes must give a checked Spec or a
// UsageError; a Spec's params on a grid, initial values and derived figures must be computable; and code generation
// must give a model's source or a UsageError at the line that asks for what the engines cannot
// take (every layout: the 2D ladder's, cells-only in 2D and 3D, several fields of each role).
#include <cstdint>
#include <string>

#include "stencil/codegen.hpp"
#include "strata/stencil.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const strata::stencil::Spec s = strata::stencil::parse(std::string(reinterpret_cast<const char*>(data), size));
        (void)strata::stencil::resolve_params(s, 7, 5, 3);
        const double at[3] = {0.25, 0.5, 0.75};
        for (const auto& f : s.fields)
            if (f.initial) (void)strata::stencil::evaluate(*f.initial, s, at);
        (void)s.radius(), (void)s.star(), (void)s.flops_per_cell(), (void)s.min_values_per_cell();
        (void)strata::stencil::generate_model(s, "fuzz");
    } catch (const strata::UsageError&) {
    }
    return 0;
}
