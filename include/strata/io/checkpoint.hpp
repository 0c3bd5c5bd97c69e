#pragma once
// Checkpoints: a model's whole state at a step, from which a run continues bitwise as if it had
// never stopped.
//
// Layout (little-endian): "STRATACK", u32 format version, the model name, u32 precision (4 or
// 8 bytes per value), i32 nx ny nz ghost, i64 step, f64 t, the model parameters (u32 count, then
// name and f64 each), the fields (u32 count, then each name), the arrays (u32 count, then each
// name and u64 length), then each field's interior cells (x fastest), then each array's values,
// then a u64 checksum of every byte before it: FNV-1a over its 64-bit words (WordChecksum;
// versions 1 and 2: FNV-1a byte by byte, still read). Strings are u32 length + bytes.
// Ghost cells are not stored: each model rebuilds them (apf mirrors E's and never reads R's,
// heat3d's and wave3d's are the zeros beyond the box). Arrays hold what is not a field, of any
// length (wave3d: the receiver traces recorded so far). Version 1 had no arrays; it is still read.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "strata/core/field.hpp"
#include "strata/core/types.hpp"

namespace strata::io {

inline constexpr std::uint32_t kCheckpointVersion = 3;

struct CheckpointHeader {
    std::string model;  // "apf", "heat3d", "wave3d"
    Precision precision = Precision::fp64;
    int nx = 0, ny = 0, nz = 1, ghost = 1, dims = 2;
    std::int64_t step = 0;
    double t = 0;
    std::vector<std::pair<std::string, double>> params;  // the model's, strategy-independent

    Extent extent() const { return Extent{nx, ny, nz, ghost, dims}; }
    // Sizes, ghost layer and step in range (what both formats' readers check before trusting them).
    bool plausible() const;
    // The parameter called `name`; UsageError naming `file` when absent.
    double param(const std::string& name, const std::string& file) const;
    // What the state fields are stored times (the param state_scale; 1 where absent, as in
    // checkpoints written before it).
    double state_scale() const;
};

struct Checkpoint {
    CheckpointHeader header;
    std::vector<std::string> field_names;
    std::vector<std::vector<char>> interiors;  // raw values, one per field
    std::vector<std::string> array_names;
    std::vector<std::vector<char>> arrays;  // raw values, one per array

    // Field `i` with zero ghosts; Error when the precision is not T's.
    template <class T>
    HostField<T> field(std::size_t i) const;
    // The array called `name`; Error when absent or when the precision is not T's.
    template <class T>
    std::vector<T> array(const std::string& name) const;
};

// Written to FILE.tmp, flushed, fsync'ed and renamed: the previous FILE survives a crash mid-write.
template <class T>
void write_checkpoint(const std::string& path, const CheckpointHeader& header,
                      const std::vector<std::pair<std::string, const HostField<T>*>>& fields,
                      const std::vector<std::pair<std::string, const std::vector<T>*>>& arrays = {});

// Validates magic, version, sizes and checksum; every failure is a UsageError (a bad file is bad
// input, like a bad flag) naming the file and what is wrong with it.
Checkpoint read_checkpoint(const std::string& path);

// 64-bit FNV-1a, continuing from `hash`: versions 1 and 2's checksum.
std::uint64_t fnv1a64(const void* data, std::size_t bytes, std::uint64_t hash = 0xcbf29ce484222325ull);

// Version 3's checksum: FNV-1a's step taken on each 64-bit word of the bytes (little-endian, as
// the file), then on the last 0-7 bytes one at a time. Byte by byte FNV-1a ran at 0.9 GB/s on
// the development VM, half of a checkpoint's time once the disk was written directly; by words,
// 7 GB/s. Bytes may come in pieces of any size (a field's rows): the sum is that of them all.
class WordChecksum {
public:
    void add(const void* data, std::size_t bytes);
    std::uint64_t value() const;  // (the pending bytes taken one at a time)

private:
    std::uint64_t hash_ = 0xcbf29ce484222325ull;
    unsigned char pending_[8] = {};
    std::size_t npending_ = 0;
};

}  // namespace strata::io
