// The checkpoint reader (--restart, strata render FILE.ck), then what a restart does with what it
// read: every field as a HostField, every array. Any bytes must give a checkpoint whose fields
// hold their header's cells, or a UsageError: never a crash, a hang or an allocation that the
// file's size does not justify.
//
// Strata's own format only: bytes that start with HDF5's signature would go to the HDF5 library's
// parser (read_checkpoint_h5), which is that library's to harden, not ours; what strata checks of
// what HDF5 hands it is tested in tests/test_io.cpp (Hdf5Checkpoint.*).
#include "strata/io/checkpoint.hpp"

#include <cstdlib>
#include <cstring>

#include "input_file.hpp"
#include "strata/core/error.hpp"

namespace {

template <class T>
void restore(const strata::io::Checkpoint& c) {
    for (std::size_t i = 0; i < c.interiors.size(); ++i) c.field<T>(i);
    for (const std::string& name : c.array_names) c.array<T>(name);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static strata::fuzz::InputFile file;
    if (size >= 8 && std::memcmp(data, "\x89HDF\r\n\x1a\n", 8) == 0) return 0;
    try {
        const strata::io::Checkpoint c = strata::io::read_checkpoint(file.write(data, size));
        const strata::io::CheckpointHeader& h = c.header;
        const std::size_t cells = std::size_t(h.nx) * std::size_t(h.ny) * std::size_t(h.nz);
        for (const auto& f : c.interiors)
            if (f.size() != cells * (h.precision == strata::Precision::fp32 ? 4 : 8)) std::abort();
        if (h.precision == strata::Precision::fp32)
            restore<float>(c);
        else
            restore<double>(c);
    } catch (const strata::UsageError&) {
    }
    return 0;
}
