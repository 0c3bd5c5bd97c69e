// `strata render`: a saved field (.vti) or a checkpoint's first field as a PNG, for users who
// kept raw data. 3D fields give the mid-plane across an axis.
#include <cstring>
#include <filesystem>
#include <fstream>

#include "strata/core/error.hpp"
#include "strata/io/checkpoint.hpp"
#include "strata/io/h5.hpp"
#include "strata/io/png.hpp"
#include "strata/io/snapshot.hpp"
#include "strata/io/vti.hpp"
#include "strata/run.hpp"

namespace strata {
namespace {

bool is_checkpoint(const std::string& path) {
    if (std::filesystem::is_directory(path))
        throw UsageError("'" + path +
                         "' is a folder: render takes one .vti file or checkpoint (a run's frames are " +
                         "the .vti files in its --out folder)");
    std::ifstream f(path, std::ios::binary);
    if (!f) throw UsageError("cannot open '" + path + "'");
    char magic[8] = {};
    f.read(magic, sizeof magic);
    return f && (std::memcmp(magic, "STRATACK", sizeof magic) == 0 || io::is_hdf5(path));
}

// The first field's values as the model's: a checkpoint of a run with a state scale stores them
// times it (its param state_scale; absent: 1).
template <class T>
std::vector<double> checkpoint_values(const io::Checkpoint& c) {
    const double scale = c.header.state_scale();
    const std::vector<char>& raw = c.interiors.at(0);
    std::vector<double> v(raw.size() / sizeof(T));
    for (std::size_t i = 0; i < v.size(); ++i) {
        T x;
        std::memcpy(&x, raw.data() + i * sizeof(T), sizeof x);
        v[i] = double(x) / scale;
    }
    return v;
}

}  // namespace

std::string render_png(const std::string& file, std::string png_path, char axis, double lo, double hi) {
    io::VtiGrid grid;
    std::vector<double> values;
    if (is_checkpoint(file)) {
        const io::Checkpoint c = io::read_checkpoint(file);
        if (c.interiors.empty()) throw Error("checkpoint '" + file + "' holds no field");
        const io::CheckpointHeader& h = c.header;
        grid.nx = h.nx;
        grid.ny = h.ny;
        grid.nz = h.nz;
        values = with_precision(h.precision,
                                [&]<class T>(std::type_identity<T>) { return checkpoint_values<T>(c); });
    } else {
        io::VtiField f = io::read_vti(file);
        grid = f.grid;
        values = std::move(f.values);
    }
    if (png_path.empty()) png_path = std::filesystem::path(file).replace_extension(".png").string();
    if (grid.nz == 1) {
        io::write_png(png_path, io::field_picture(values.data(), grid.nx, grid.ny, lo, hi));
    } else {
        const io::Slice s = io::mid_slice(values.data(), grid, axis);
        io::write_png(png_path, io::field_picture(s.values.data(), s.width, s.height, lo, hi));
    }
    return png_path;
}

}  // namespace strata
