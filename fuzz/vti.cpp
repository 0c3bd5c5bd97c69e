// The ParaView readers: read_vti (strata render FILE.vti), then what render does with the field
// (the mid-plane across each axis, its picture), and read_pvd, on the same bytes. Any bytes must
// give a field whose values fill its grid, or a UsageError: never a crash, a hang or an
// allocation that the file's size does not justify.
#include <cstdlib>

#include "input_file.hpp"
#include "strata/core/error.hpp"
#include "strata/io/png.hpp"
#include "strata/io/snapshot.hpp"
#include "strata/io/vti.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static strata::fuzz::InputFile file;
    const std::string& path = file.write(data, size);
    try {
        const strata::io::VtiField f = strata::io::read_vti(path);
        const strata::io::VtiGrid& g = f.grid;
        if (g.nx < 1 || g.ny < 1 || g.nz < 1 ||
            f.values.size() != std::size_t(g.nx) * std::size_t(g.ny) * std::size_t(g.nz))
            std::abort();
        for (char axis : {'z', 'y', 'x'}) {
            const strata::io::Slice s = strata::io::mid_slice(f.values.data(), g, axis);
            strata::io::field_picture(s.values.data(), s.width, s.height, 0.0, 1.0);
        }
    } catch (const strata::UsageError&) {
    }
    try {
        strata::io::read_pvd(path);
    } catch (const strata::UsageError&) {
    }
    return 0;
}
