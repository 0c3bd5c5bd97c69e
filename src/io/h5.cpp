#include "strata/io/h5.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "atomic_file.hpp"
#include "strata/core/error.hpp"
#ifdef STRATA_HAVE_HDF5
#include <hdf5.h>
#endif

namespace strata::io {

bool is_hdf5(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    char sig[8] = {};
    f.read(sig, sizeof sig);
    return f && std::memcmp(sig, "\x89HDF\r\n\x1a\n", sizeof sig) == 0;
}

void write_xdmf(const std::string& path, const VtiGrid& grid, int dims, Precision precision,
                const std::vector<XdmfFrame>& frames) {
    // XDMF lists axes slowest first: z y x.
    char line[256];
    const std::string cells =
        dims == 3 ? std::to_string(grid.nz) + " " + std::to_string(grid.ny) + " " + std::to_string(grid.nx)
                  : std::to_string(grid.ny) + " " + std::to_string(grid.nx);
    std::string origin, spacing;
    for (int a = dims - 1; a >= 0; --a) {
        const char* sep = a == dims - 1 ? "" : " ";
        std::snprintf(line, sizeof line, "%s%.17g", sep, grid.origin[std::size_t(a)]);
        origin += line;
        std::snprintf(line, sizeof line, "%s%.17g", sep, grid.spacing);
        spacing += line;
    }
    std::string x =
        "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n  <Domain>\n"
        "    <Grid Name=\"" +
        grid.name + "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (const XdmfFrame& f : frames) {
        std::snprintf(line, sizeof line, "%.17g", f.time);
        const std::string stem = f.file.substr(0, f.file.rfind('.'));
        x += "      <Grid Name=\"" + stem + "\" GridType=\"Uniform\">\n        <Time Value=\"" + line +
             "\"/>\n        <Topology TopologyType=\"" + std::to_string(dims) +
             "DCoRectMesh\" Dimensions=\"" + cells + "\"/>\n        <Geometry GeometryType=\"" +
             (dims == 3 ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY") + "\">\n          <DataItem Dimensions=\"" +
             std::to_string(dims) + "\" Format=\"XML\">" + origin +
             "</DataItem>\n          <DataItem Dimensions=\"" + std::to_string(dims) + "\" Format=\"XML\">" +
             spacing + "</DataItem>\n        </Geometry>\n        <Attribute Name=\"" + grid.name +
             "\" AttributeType=\"Scalar\" Center=\"Node\">\n          <DataItem Dimensions=\"" + cells +
             "\" NumberType=\"Float\" Precision=\"" + std::to_string(bytes_of(precision)) +
             "\" Format=\"HDF\">" + f.file + ":/" + grid.name +
             "</DataItem>\n        </Attribute>\n      </Grid>\n";
    }
    x += "    </Grid>\n  </Domain>\n</Xdmf>\n";
    AtomicFile out(path);
    out.write(x);
    out.commit(false);
}

#ifndef STRATA_HAVE_HDF5

bool hdf5_available() { return false; }
bool hdf5_parallel() { return false; }
std::string hdf5_missing() {
    return "this strata was built without HDF5 (install libhdf5-openmpi-dev, as scripts/setup.sh does, and "
           "rebuild)";
}
template <class T>
void write_checkpoint_h5(const std::string& path, const CheckpointHeader&, const Box&,
                         const std::vector<std::pair<std::string, const std::vector<T>*>>&,
                         const std::vector<std::pair<std::string, const std::vector<T>*>>&, bool) {
    throw UsageError("cannot write the checkpoint '" + path + "': " + hdf5_missing() +
                     "; a name not ending in .h5 writes strata's own format");
}
Checkpoint read_checkpoint_h5(const std::string& path, const Box*) {
    throw UsageError("cannot read the HDF5 checkpoint '" + path + "': " + hdf5_missing());
}
template <class T>
void write_frame_h5(const std::string& path, const VtiGrid&, int, const Box&, const std::vector<T>&,
                    std::int64_t, double, bool) {
    throw UsageError("cannot write the frame '" + path + "': " + hdf5_missing());
}

#else

#ifdef H5_HAVE_PARALLEL
bool hdf5_parallel() { return true; }
#else
bool hdf5_parallel() { return false; }
#endif
bool hdf5_available() { return true; }
std::string hdf5_missing() {
    return hdf5_parallel() ? "" : "this strata's HDF5 is serial: several processes cannot write one file";
}

namespace {

constexpr int kFormat = 1;

// HDF5 prints its error stack to stderr by default; strata reports one line of its own instead.
void quiet() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

// The innermost message of HDF5's error stack ("unable to open file", ...), for the report.
std::string h5_reason() {
    std::string why;
    H5Ewalk2(
        H5E_DEFAULT, H5E_WALK_DOWNWARD,
        [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
            if (n == 0 && e->desc) *static_cast<std::string*>(out) = e->desc;
            return 0;
        },
        &why);
    return why;
}

// An HDF5 identifier, closed by its own close function when it goes out of scope.
class Id {
public:
    Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
    ~Id() {
        if (id_ >= 0) close_(id_);
    }
    Id(const Id&) = delete;
    Id& operator=(const Id&) = delete;
    operator hid_t() const { return id_; }
    // Closes it now, checked (a file's close is where its last bytes are written).
    herr_t close() {
        const herr_t r = id_ >= 0 ? close_(id_) : 0;
        id_ = -1;
        return r;
    }

private:
    hid_t id_;
    herr_t (*close_)(hid_t);
};

// Every HDF5 call checked: a failure throws Error naming the call, the file and this source line.
[[noreturn]] void h5_failed(const char* call, const std::string& path, int line) {
    const std::string why = h5_reason();
    throw Error("HDF5 " + std::string(call) + " failed on '" + path + "'" + (why.empty() ? "" : ": " + why) +
                " (src/io/h5.cpp:" + std::to_string(line) + ")");
}
#define STRATA_H5(call)                                \
    [&] {                                              \
        const auto r_ = (call);                        \
        if (r_ < 0) h5_failed(#call, path_, __LINE__); \
        return r_;                                     \
    }()

// The HDF5 type of a precision's values, in memory and in the file: the native float and double,
// and binary16 and bfloat16 as HDF5 float types of 2 bytes (sign bit 15, then exponent and
// mantissa, the exponent's bias): h5py reads the first as numpy's float16, and any reader asking
// for float gets either converted exactly. Made once, kept open.
hid_t half_type(std::size_t exponent_bits, std::size_t mantissa_bits, std::size_t bias) {
    const hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    if (t < 0 || H5Tset_fields(t, 15, mantissa_bits, exponent_bits, 0, mantissa_bits) < 0 ||
        H5Tset_size(t, 2) < 0 || H5Tset_ebias(t, bias) < 0)
        throw Error("HDF5 could not make its 16-bit float type: " + h5_reason());
    return t;
}
hid_t float_type(Precision p) {
    switch (p) {
        case Precision::fp32: return H5T_NATIVE_FLOAT;
        case Precision::fp64: return H5T_NATIVE_DOUBLE;
        case Precision::fp16: {
            static const hid_t t = half_type(5, 10, 15);
            return t;
        }
        case Precision::bf16: break;
    }
    static const hid_t t = half_type(8, 7, 127);
    return t;
}
template <class T>
hid_t native() {
    return float_type(precision_of<T>());
}

struct Writer {
    const std::string& path_;
    hid_t file;

    template <class V>
    void attribute(hid_t at, const char* name, hid_t type, const V& v) {
        Id space(STRATA_H5(H5Screate(H5S_SCALAR)), H5Sclose);
        Id a(STRATA_H5(H5Acreate2(at, name, type, space, H5P_DEFAULT, H5P_DEFAULT)), H5Aclose);
        STRATA_H5(H5Awrite(a, type, &v));
    }
    void attribute(hid_t at, const char* name, const std::string& s) {
        Id type(STRATA_H5(H5Tcopy(H5T_C_S1)), H5Tclose);
        STRATA_H5(H5Tset_size(type, s.empty() ? 1 : s.size()));
        STRATA_H5(H5Tset_strpad(type, H5T_STR_NULLPAD));
        Id space(STRATA_H5(H5Screate(H5S_SCALAR)), H5Sclose);
        Id a(STRATA_H5(H5Acreate2(at, name, type, space, H5P_DEFAULT, H5P_DEFAULT)), H5Aclose);
        const std::string v = s.empty() ? std::string(1, '\0') : s;
        STRATA_H5(H5Awrite(a, type, v.data()));
    }
    // A group whose links (order = false) or attributes (true) keep the order they were made in.
    Id group(const char* name, bool attributes) {
        Id gcpl(STRATA_H5(H5Pcreate(H5P_GROUP_CREATE)), H5Pclose);
        const unsigned order = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
        if (attributes)
            STRATA_H5(H5Pset_attr_creation_order(gcpl, order));
        else
            STRATA_H5(H5Pset_link_creation_order(gcpl, order));
        return Id(STRATA_H5(H5Gcreate2(file, name, H5P_DEFAULT, gcpl, H5P_DEFAULT)), H5Gclose);
    }
    // A dataset of `dims` (slowest first) into which this process writes `values` at `start` with
    // `count` (count[0] == 0: nothing), every process at once when `dxpl` says so.
    template <class T>
    void dataset(hid_t at, const std::string& name, const std::vector<hsize_t>& dims,
                 const std::vector<hsize_t>& start, const std::vector<hsize_t>& count, const T* values,
                 hid_t dxpl) {
        const int rank = int(dims.size());
        Id fspace(STRATA_H5(H5Screate_simple(rank, dims.data(), nullptr)), H5Sclose);
        Id d(STRATA_H5(
                 H5Dcreate2(at, name.c_str(), native<T>(), fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)),
             H5Dclose);
        const bool none = count.empty() || count[0] == 0;
        Id mspace(STRATA_H5(none ? H5Screate(H5S_NULL) : H5Screate_simple(rank, count.data(), nullptr)),
                  H5Sclose);
        if (none) {
            STRATA_H5(H5Sselect_none(fspace));
            STRATA_H5(H5Sselect_none(mspace));
        } else {
            STRATA_H5(
                H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr));
        }
        STRATA_H5(H5Dwrite(d, native<T>(), mspace, fspace, dxpl, values));
    }
};

// The axes of a grid slowest first: z, y, x (y, x in 2D).
std::vector<hsize_t> slowest_first(const std::array<int, 3>& v, int dims) {
    return dims == 3 ? std::vector<hsize_t>{hsize_t(v[2]), hsize_t(v[1]), hsize_t(v[0])}
                     : std::vector<hsize_t>{hsize_t(v[1]), hsize_t(v[0])};
}

// The largest of every process's `error` (an errno, 0 for none) when `collective`, else `error`:
// how a failure of one rank while writing `tmp` becomes every rank's.
int worst_errno(int error, bool collective, const std::string& tmp) {
    int worst = error;
#ifdef H5_HAVE_PARALLEL
    if (collective) {
        const int code = MPI_Allreduce(&error, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (code != MPI_SUCCESS)
            throw Error("MPI_Allreduce failed (" + std::to_string(code) + ") at " + __FILE__ + ":" +
                        std::to_string(__LINE__) + " after writing '" + tmp + "'");
    }
#else
    (void)collective, (void)tmp;
#endif
    return worst;
}

// A write's failure that every rank learnt at once (worst_errno) when `collective`: SharedError,
// which rank 0 alone reports; one process's own otherwise.
[[noreturn]] void fail_together(const std::string& why, bool collective) {
    if (collective) throw SharedError(why);
    throw Error(why);
}

// Creates PATH.tmp (every process of the run at once when `collective`), lets `fill(writer, dxpl,
// rank)` write into it, flushes and closes it, and renames it to PATH (rank 0). `durable` (a
// checkpoint, as AtomicFile's): every process fsyncs the file before the rename, so that the new
// content survives a power loss, not only a crash: the rename could reach the disk before the
// data and leave a torn file where the last good checkpoint was. Every process syncs its own
// node's pages (on several nodes one fsync would not reach the others'), and all learn together
// whether each did, so that a failure is every rank's error, not one rank's exception while the
// others wait.
template <class F>
void write_h5(const std::string& path, bool collective, bool durable, const F& fill) {
    quiet();
    if (collective && !hdf5_parallel())
        throw UsageError("cannot write '" + path + "' from several processes: " + hdf5_missing() +
                         " (install libhdf5-openmpi-dev and rebuild)");
    const std::string tmp = path + ".tmp";
    const std::string& path_ = tmp;
    int rank = 0;
    Id fapl(STRATA_H5(H5Pcreate(H5P_FILE_ACCESS)), H5Pclose);
    Id dxpl(STRATA_H5(H5Pcreate(H5P_DATASET_XFER)), H5Pclose);
#ifdef H5_HAVE_PARALLEL
    if (collective) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        STRATA_H5(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
        // Each process writes its own rows (the file's creation, datasets and close stay
        // collective). Collective transfers (two-phase I/O) made rank 0 an aggregator holding
        // another part's worth of the others' data: heat3d 256^3 fp64 over 4 ranks (1x1x4, CPU),
        // peak resident 195 MB on rank 0 against 163 MB on the others (126 MB without a
        // checkpoint, a part 33.5 MB); independently every rank peaks at 162-163 MB, slabs and
        // 2x2x1 alike, in the same time on a local disk.
        STRATA_H5(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_INDEPENDENT));
    }
#endif
    {
        Id file(STRATA_H5(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl)), H5Fclose);
        Writer w{tmp, file};
        fill(w, hid_t(dxpl), rank);
        STRATA_H5(H5Fflush(file, H5F_SCOPE_GLOBAL));
        STRATA_H5(file.close());
    }
    if (durable) {
        int error = 0;  // this process's errno, or 0
        const int fd = ::open(tmp.c_str(), O_RDONLY);
        if (fd < 0 || ::fsync(fd) != 0) error = errno;
        if (fd >= 0) ::close(fd);
        const int worst = worst_errno(error, collective, tmp);
        if (worst != 0) {
            if (rank == 0) std::remove(tmp.c_str());
            const std::string why = "cannot sync '" + tmp + "' to the disk: " + std::strerror(worst) +
                                    (error == 0 ? " (on another rank)" : "") + "; '" + path +
                                    "' is left as it was";
            fail_together(why, collective);
        }
    }
    // Rank 0 renames, over a regular file or nothing (a device or a pipe of that name would be
    // replaced: EEXIST here; a folder refuses: EISDIR); every rank learns its errno, so that a
    // failed rename is every rank's error (the others would go on to the next step and wait there
    // for a rank that has stopped).
    int mine = 0;
    if (rank == 0) {
        struct stat st;
        if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
            mine = S_ISDIR(st.st_mode) ? EISDIR : EEXIST;
        else if (std::rename(tmp.c_str(), path.c_str()) != 0)
            mine = errno;
    }
    const int renamed = worst_errno(mine, collective, tmp);
    if (renamed != 0) {
        if (rank == 0) std::remove(tmp.c_str());
        const std::string why =
            "cannot rename '" + tmp + "' to '" + path + "': " +
            (renamed == EEXIST ? "it is not a regular file (a device, a pipe or a socket), which the rename "
                                 "would replace"
                               : std::strerror(renamed));
        fail_together(why, collective);
    }
}

}  // namespace

template <class T>
void write_checkpoint_h5(const std::string& path, const CheckpointHeader& h, const Box& box,
                         const std::vector<std::pair<std::string, const std::vector<T>*>>& fields,
                         const std::vector<std::pair<std::string, const std::vector<T>*>>& arrays,
                         bool collective) {
    if (h.precision != precision_of<T>()) throw Error("checkpoint header and fields differ in precision");
    for (const auto& [name, values] : fields)
        if (values->size() != box.cells())
            throw Error("checkpoint field '" + name + "' holds " + std::to_string(values->size()) +
                        " values for a box of " + std::to_string(box.cells()) + " cells");
    write_h5(path, collective, true, [&](Writer& w, hid_t dxpl, int rank) {
        const hid_t file = w.file;
        w.attribute(file, "format", H5T_NATIVE_INT, kFormat);
        w.attribute(file, "model", h.model);
        w.attribute(file, "precision", std::string(to_string(h.precision)));
        const char* names[] = {"nx", "ny", "nz", "dims", "ghost"};
        const int values[] = {h.nx, h.ny, h.nz, h.dims, h.ghost};
        for (int i = 0; i < 5; ++i) w.attribute(file, names[i], H5T_NATIVE_INT, values[i]);
        w.attribute(file, "step", H5T_NATIVE_INT64, std::int64_t(h.step));
        w.attribute(file, "t", H5T_NATIVE_DOUBLE, h.t);
        {
            Id params = w.group("params", true);
            for (const auto& [name, v] : h.params) w.attribute(params, name.c_str(), H5T_NATIVE_DOUBLE, v);
        }
        {
            Id group = w.group("fields", false);
            for (const auto& [name, values] : fields)
                w.dataset(group, name, slowest_first({h.nx, h.ny, h.nz}, h.dims),
                          slowest_first(box.lo, h.dims), slowest_first(box.n, h.dims), values->data(), dxpl);
        }
        Id group = w.group("arrays", false);
        for (const auto& [name, values] : arrays) {
            const hsize_t length = values->size();
            w.dataset(group, name, {length}, {0}, {rank == 0 ? length : 0}, values->data(), dxpl);
        }
    });
}

template <class T>
void write_frame_h5(const std::string& path, const VtiGrid& grid, int dims, const Box& box,
                    const std::vector<T>& values, std::int64_t step, double t, bool collective) {
    if (values.size() != box.cells())
        throw Error("frame '" + path + "': " + std::to_string(values.size()) + " values for a box of " +
                    std::to_string(box.cells()) + " cells");
    // (A frame need not outlive a power loss: atomic is enough, as for the .vti frames.)
    write_h5(path, collective, false, [&](Writer& w, hid_t dxpl, int) {
        w.attribute(w.file, "step", H5T_NATIVE_INT64, step);
        w.attribute(w.file, "t", H5T_NATIVE_DOUBLE, t);
        w.dataset(w.file, grid.name, slowest_first({grid.nx, grid.ny, grid.nz}, dims),
                  slowest_first(box.lo, dims), slowest_first(box.n, dims), values.data(), dxpl);
    });
}

namespace {

struct Reader {
    const std::string& path_;
    hid_t file;

    [[noreturn]] void bad(const std::string& what) const {
        throw UsageError("'" + path_ + "' is not a strata checkpoint: " + what);
    }
    Id open_attribute(hid_t at, const char* name) const {
        if (STRATA_H5(H5Aexists(at, name)) <= 0) bad("it lacks the attribute '" + std::string(name) + "'");
        return Id(STRATA_H5(H5Aopen(at, name, H5P_DEFAULT)), H5Aclose);
    }
    template <class V>
    V number(hid_t at, const char* name, hid_t type) const {
        Id a = open_attribute(at, name);
        Id t(STRATA_H5(H5Aget_type(a)), H5Tclose);
        const H5T_class_t c = H5Tget_class(t);
        if (c != H5T_INTEGER && c != H5T_FLOAT)
            bad("its attribute '" + std::string(name) + "' is not a number");
        V v{};
        STRATA_H5(H5Aread(a, type, &v));
        return v;
    }
    std::string text(hid_t at, const char* name) const {
        Id a = open_attribute(at, name);
        Id t(STRATA_H5(H5Aget_type(a)), H5Tclose);
        if (H5Tget_class(t) != H5T_STRING) bad("its attribute '" + std::string(name) + "' is not text");
        if (STRATA_H5(H5Tis_variable_str(t)) > 0) {  // as h5py writes text
            char* s = nullptr;
            STRATA_H5(H5Aread(a, t, &s));
            std::string out = s ? s : "";
            H5free_memory(s);
            return out;
        }
        std::string s(H5Tget_size(t), '\0');
        STRATA_H5(H5Aread(a, t, s.data()));
        return s.substr(0, s.find('\0'));
    }
    // The names in a group, in the order they were made (by name where the file did not track it).
    std::vector<std::string> links(hid_t group) const {
        H5G_info_t info;
        STRATA_H5(H5Gget_info(group, &info));
        std::vector<std::string> names;
        for (hsize_t i = 0; i < info.nlinks; ++i) {
            H5_index_t index = H5_INDEX_CRT_ORDER;
            ssize_t len = H5Lget_name_by_idx(group, ".", index, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
            if (len < 0)
                index = H5_INDEX_NAME,
                len =
                    STRATA_H5(H5Lget_name_by_idx(group, ".", index, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT));
            std::string s(std::size_t(len) + 1, '\0');
            STRATA_H5(H5Lget_name_by_idx(group, ".", index, H5_ITER_INC, i, s.data(), s.size(), H5P_DEFAULT));
            names.push_back(s.substr(0, std::size_t(len)));
        }
        return names;
    }
    // Dataset `name` of `group`: its values as raw bytes of `elem`-byte floats, after checking it
    // holds floats of dimensions `dims` (slowest first); with `start` and `count` (slowest first,
    // inside `dims`), that hyperslab's alone.
    std::vector<char> values(hid_t group, const std::string& name, Precision precision,
                             const std::vector<hsize_t>* dims, const std::vector<hsize_t>* start = nullptr,
                             const std::vector<hsize_t>* count = nullptr) const {
        const std::size_t elem = std::size_t(bytes_of(precision));
        Id d(STRATA_H5(H5Dopen2(group, name.c_str(), H5P_DEFAULT)), H5Dclose);
        Id t(STRATA_H5(H5Dget_type(d)), H5Tclose);
        if (H5Tget_class(t) != H5T_FLOAT) bad("'" + name + "' does not hold floating-point values");
        Id space(STRATA_H5(H5Dget_space(d)), H5Sclose);
        const int rank = STRATA_H5(H5Sget_simple_extent_ndims(space));
        std::vector<hsize_t> got(std::size_t(std::max(rank, 0)));
        STRATA_H5(H5Sget_simple_extent_dims(space, got.data(), nullptr));
        if (dims && got != *dims) bad("'" + name + "' differs in size from the grid its attributes give");
        if (!dims && rank != 1) bad("the array '" + name + "' is not one-dimensional");
        if (start) {  // the hyperslab alone, into memory of its size
            hsize_t cells = 1;
            for (hsize_t c : *count) cells *= c;
            std::vector<char> out(std::size_t(cells) * elem);
            if (!cells) return out;
            STRATA_H5(
                H5Sselect_hyperslab(space, H5S_SELECT_SET, start->data(), nullptr, count->data(), nullptr));
            Id memory(STRATA_H5(H5Screate_simple(int(count->size()), count->data(), nullptr)), H5Sclose);
            STRATA_H5(H5Dread(d, float_type(precision), memory, space, H5P_DEFAULT, out.data()));
            return out;
        }
        hsize_t count_all = 1;
        for (hsize_t g : got) count_all *= g;
        std::vector<char> out(std::size_t(count_all) * elem);
        if (count_all)
            STRATA_H5(H5Dread(d, float_type(precision), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()));
        return out;
    }
};

}  // namespace

Checkpoint read_checkpoint_h5(const std::string& path, const Box* part) {
    quiet();
    const std::string& path_ = path;
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) throw UsageError("cannot open the HDF5 checkpoint '" + path + "': " + h5_reason());
    Id file(f, H5Fclose);
    Reader r{path, file};
    Checkpoint c;
    CheckpointHeader& h = c.header;
    const int format = r.number<int>(file, "format", H5T_NATIVE_INT);
    if (format != kFormat)
        throw UsageError("checkpoint '" + path + "' has HDF5 format version " + std::to_string(format) +
                         "; this strata reads version " + std::to_string(kFormat));
    h.model = r.text(file, "model");
    const std::string precision = r.text(file, "precision");
    try {
        h.precision = parse_precision(precision);
    } catch (const UsageError&) {
        r.bad("its precision is '" + precision + "'");
    }
    h.nx = r.number<int>(file, "nx", H5T_NATIVE_INT);
    h.ny = r.number<int>(file, "ny", H5T_NATIVE_INT);
    h.nz = r.number<int>(file, "nz", H5T_NATIVE_INT);
    h.dims = r.number<int>(file, "dims", H5T_NATIVE_INT);
    h.ghost = r.number<int>(file, "ghost", H5T_NATIVE_INT);
    h.step = r.number<std::int64_t>(file, "step", H5T_NATIVE_INT64);
    h.t = r.number<double>(file, "t", H5T_NATIVE_DOUBLE);
    if (!h.plausible()) r.bad("its sizes or step are out of range");
    if (STRATA_H5(H5Lexists(file, "params", H5P_DEFAULT)) > 0) {
        Id params(STRATA_H5(H5Gopen2(file, "params", H5P_DEFAULT)), H5Gclose);
        std::vector<std::string> names;
        hsize_t at = 0;
        auto add = [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
            static_cast<std::vector<std::string>*>(out)->push_back(name);
            return 0;
        };
        if (H5Aiterate2(params, H5_INDEX_CRT_ORDER, H5_ITER_INC, &at, add, &names) < 0) {
            names.clear(), at = 0;
            STRATA_H5(H5Aiterate2(params, H5_INDEX_NAME, H5_ITER_INC, &at, add, &names));
        }
        for (const std::string& name : names)
            h.params.emplace_back(name, r.number<double>(params, name.c_str(), H5T_NATIVE_DOUBLE));
    }
    const std::vector<hsize_t> dims = slowest_first({h.nx, h.ny, h.nz}, h.dims);
    std::vector<hsize_t> start, count;
    if (part) {
        const int n[3] = {h.nx, h.ny, h.nz};
        for (int a = 0; a < 3; ++a)
            if (part->lo[a] < 0 || part->n[a] < 0 || part->lo[a] + part->n[a] > (a < h.dims ? n[a] : 1))
                throw Error("a part of checkpoint '" + path + "' asked for beyond its grid");
        start = slowest_first(part->lo, h.dims);
        count = slowest_first(part->n, h.dims);
    }
    for (const char* kind : {"fields", "arrays"}) {
        if (STRATA_H5(H5Lexists(file, kind, H5P_DEFAULT)) <= 0) {
            if (kind[0] == 'f') r.bad("it has no group 'fields'");
            continue;
        }
        Id group(STRATA_H5(H5Gopen2(file, kind, H5P_DEFAULT)), H5Gclose);
        for (const std::string& name : r.links(group)) {
            if (kind[0] == 'f') {
                c.field_names.push_back(name);
                c.interiors.push_back(r.values(group, name, h.precision, &dims, part ? &start : nullptr,
                                               part ? &count : nullptr));
            } else {
                c.array_names.push_back(name);
                c.arrays.push_back(r.values(group, name, h.precision, nullptr));
            }
        }
    }
    return c;
}

#endif  // STRATA_HAVE_HDF5

template void write_checkpoint_h5<float>(
    const std::string&, const CheckpointHeader&, const Box&,
    const std::vector<std::pair<std::string, const std::vector<float>*>>&,
    const std::vector<std::pair<std::string, const std::vector<float>*>>&, bool);
template void write_checkpoint_h5<f16>(const std::string&, const CheckpointHeader&, const Box&,
                                       const std::vector<std::pair<std::string, const std::vector<f16>*>>&,
                                       const std::vector<std::pair<std::string, const std::vector<f16>*>>&,
                                       bool);
template void write_checkpoint_h5<bf16>(const std::string&, const CheckpointHeader&, const Box&,
                                        const std::vector<std::pair<std::string, const std::vector<bf16>*>>&,
                                        const std::vector<std::pair<std::string, const std::vector<bf16>*>>&,
                                        bool);
template void write_checkpoint_h5<double>(
    const std::string&, const CheckpointHeader&, const Box&,
    const std::vector<std::pair<std::string, const std::vector<double>*>>&,
    const std::vector<std::pair<std::string, const std::vector<double>*>>&, bool);

template void write_frame_h5<float>(const std::string&, const VtiGrid&, int, const Box&,
                                    const std::vector<float>&, std::int64_t, double, bool);
template void write_frame_h5<double>(const std::string&, const VtiGrid&, int, const Box&,
                                     const std::vector<double>&, std::int64_t, double, bool);

}  // namespace strata::io
