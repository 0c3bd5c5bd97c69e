// wave3d's --receivers file (one x,y,z per line), read as the problem is built from its Params on
// a 12^3 grid of unit length. Any bytes must give a problem or a UsageError.
#include <sstream>

#include "input_file.hpp"
#include "strata/core/error.hpp"
#include "strata/problem.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static strata::fuzz::InputFile file;
    const strata::Params params{{"n", std::int64_t(12)}, {"receivers", file.write(data, size)}};
    std::ostringstream warnings;
    try {
        strata::find_model("wave3d").problem(params, warnings);
    } catch (const strata::UsageError&) {
    }
    return 0;
}
