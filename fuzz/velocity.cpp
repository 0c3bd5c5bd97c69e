// wave3d's --velocity-file (raw float32, nx*ny*nz), read as the problem is built from its Params.
// The first three bytes pick the grid (9 to 16 points a side), the rest is the file. Any bytes
// must give a problem or a UsageError.
#include <sstream>

#include "input_file.hpp"
#include "strata/core/error.hpp"
#include "strata/problem.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static strata::fuzz::InputFile file;
    if (size < 3) return 0;
    auto side = [&](int axis) { return std::int64_t(9 + data[axis] % 8); };
    const strata::Params params{{"nx", side(0)},
                                {"ny", side(1)},
                                {"nz", side(2)},
                                {"steps", std::int64_t(10)},
                                {"velocity_file", file.write(data + 3, size - 3)}};
    std::ostringstream warnings;
    try {
        strata::find_model("wave3d").problem(params, warnings);
    } catch (const strata::UsageError&) {
    }
    return 0;
}
