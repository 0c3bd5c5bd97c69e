#pragma once
// HDF5 checkpoints (FILE.h5): what the binary format holds (checkpoint.hpp), in the library the
// field reads, so that h5py, ParaView and the users' own tools open them:
//   /                 attributes format (the version, 1), model, precision ("fp32"/"fp64"), nx, ny,
//                     nz, dims, ghost, step, t
//   /params           an attribute per model parameter (f64), in the model's order
//   /fields/NAME      every state field's interior cells, nz x ny x nx (ny x nx in 2D), x fastest
//   /arrays/NAME      every array (wave3d's receiver traces), one dimension
// Fields and arrays keep the order they were written in (the groups track creation order).
//
// Over several processes every process writes its own box of every field at once into the one
// file through MPI-IO (MPI's world communicator: the ranks layer started MPI), so that no process
// holds more than its own part; the attributes and arrays are the same on every process and rank
// 0's are written. That needs HDF5 built for MPI (Debian's libhdf5-openmpi-dev); a
// build with a serial HDF5 writes from one process only, and a build without HDF5 says so.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "strata/io/checkpoint.hpp"
#include "strata/io/vti.hpp"

namespace strata::io {

// Whether this build writes and reads HDF5 (hdf5_parallel: from several processes at once into
// one file), and if not, what it lacks, for messages.
bool hdf5_available();
bool hdf5_parallel();
std::string hdf5_missing();

// Whether `path` starts with HDF5's signature (false for a file that cannot be read).
bool is_hdf5(const std::string& path);

// This process' box of the grid's interior: cells lo[a] .. lo[a] + n[a] - 1 along axis a (x, y, z).
struct Box {
    std::array<int, 3> lo{0, 0, 0}, n{1, 1, 1};
    std::size_t cells() const { return std::size_t(n[0]) * n[1] * n[2]; }
};

// Writes FILE.tmp and renames it (on rank 0, once every process closed it): a crash mid-write
// leaves the previous FILE. `fields`: this process' values of `box`, x fastest. `collective`:
// every process of the run calls it at once with its own box (the boxes tile the grid), the same
// header and the same arrays. Error naming the HDF5 call and the file when one fails.
template <class T>
void write_checkpoint_h5(const std::string& path, const CheckpointHeader& header, const Box& box,
                         const std::vector<std::pair<std::string, const std::vector<T>*>>& fields,
                         const std::vector<std::pair<std::string, const std::vector<T>*>>& arrays,
                         bool collective);

// The whole checkpoint, as read_checkpoint() returns it (which calls this for an HDF5 file);
// UsageError naming the file and what is missing or malformed. With `part`, each field's values
// are those of that box alone, x fastest (a rank's own cells: over MPI ranks each reads its own
// part, never the grid); a box of no cells reads the header, the fields' names and the arrays.
Checkpoint read_checkpoint_h5(const std::string& path, const Box* part = nullptr);

// A snapshot frame (--snapshot-format h5): FILE holds the field of `grid` (its name, nz x ny x nx
// or ny x nx cells) as the dataset /NAME, with the attributes step and t; every process writes
// its box at once (`collective`), as for checkpoints. Written to FILE.tmp and renamed.
template <class T>
void write_frame_h5(const std::string& path, const VtiGrid& grid, int dims, const Box& box,
                    const std::vector<T>& values, std::int64_t step, double t, bool collective);

// The XDMF file that describes a series of such frames for ParaView and VTK's XDMF readers: a
// temporal collection of uniform grids (origin and spacing from `grid`), each frame's values in
// `file` (relative to the .xmf), at `time`. Written to PATH.tmp and renamed, after every frame.
struct XdmfFrame {
    double time = 0;
    std::string file;
};
void write_xdmf(const std::string& path, const VtiGrid& grid, int dims, Precision precision,
                const std::vector<XdmfFrame>& frames);

}  // namespace strata::io
