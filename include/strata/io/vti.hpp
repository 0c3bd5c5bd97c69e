#pragma once
// ParaView files: image data (.vti, VTK XML ImageData, the values raw in an appended block with
// a UInt64 byte count) and the .pvd collection that lists a series of frames with their
// simulated times, so ParaView opens the whole series at once.
#include <array>
#include <string>
#include <vector>

#include "strata/core/types.hpp"

namespace strata::io {

// A point-data field on a regular grid; 2D fields have nz = 1.
struct VtiGrid {
    int nx = 1, ny = 1, nz = 1;
    double spacing = 1;              // the same along every axis
    std::array<double, 3> origin{};  // position of value 0
    std::string name = "field";      // the array's name in ParaView
};

// How the values are stored: raw (the fastest to write and read), or zlib-compressed in 1 MiB
// blocks (ParaView's vtkZLibDataCompressor), smaller for smooth fields at a CPU cost.
enum class VtiCompression { none, zlib };

// `values`: nx*ny*nz, x fastest. Float32 or Float64 by T. Throws Error naming the file.
template <class T>
void write_vti(const std::string& path, const VtiGrid& grid, const T* values,
               VtiCompression compression = VtiCompression::none);

struct VtiField {
    VtiGrid grid;
    Precision precision = Precision::fp64;
    std::vector<double> values;  // converted exactly from the stored Float32/Float64
};
// Reads what write_vti writes (one Piece, one appended array, raw or zlib); anything else is a
// UsageError naming the file (a bad file is bad input, like a bad flag).
VtiField read_vti(const std::string& path);

struct PvdFrame {
    double time = 0;
    std::string file;  // relative to the .pvd
    bool operator==(const PvdFrame&) const = default;
};
// Written to a temporary and renamed: a reader (or a crash) never sees a half-written list.
void write_pvd(const std::string& path, const std::vector<PvdFrame>& frames);
// The frames of a complete .pvd; anything else is a UsageError naming the file.
std::vector<PvdFrame> read_pvd(const std::string& path);

}  // namespace strata::io
