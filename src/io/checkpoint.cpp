#include "strata/io/checkpoint.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "atomic_file.hpp"
#include "strata/core/error.hpp"
#include "strata/io/h5.hpp"

namespace strata::io {

static_assert(std::endian::native == std::endian::little, "checkpoints are written little-endian");

namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'C', 'K'};
constexpr int kMaxGhost = 16;  // the models' stencils reach 1 to 4 cells

// The header's value word: its bytes (4 fp32, 8 fp64, 2 fp16), bfloat16's 2 marked in the second
// byte (older readers refuse both 16-bit kinds as an unknown precision).
constexpr std::uint32_t kBf16Word = 0x102;
std::uint32_t precision_word(Precision p) {
    return p == Precision::bf16 ? kBf16Word : std::uint32_t(bytes_of(p));
}

struct Writer {
    std::string bytes;
    template <class V>
    void put(V v) {
        bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    void put_string(const std::string& s) {
        put(std::uint32_t(s.size()));
        bytes += s;
    }
};

// Reads the header fields in order; running past the end is a truncated file.
struct Reader {
    const std::string& path;
    const std::string& bytes;
    std::size_t at = 0;
    void need(std::size_t n) const {
        if (bytes.size() < at + n) throw UsageError("checkpoint '" + path + "' is truncated");
    }
    template <class V>
    V get() {
        need(sizeof(V));
        V v;
        std::memcpy(&v, bytes.data() + at, sizeof v);
        at += sizeof v;
        return v;
    }
    std::string get_string() {
        const auto n = get<std::uint32_t>();
        need(n);
        std::string s = bytes.substr(at, n);
        at += n;
        return s;
    }
};

}  // namespace

std::uint64_t fnv1a64(const void* data, std::size_t bytes, std::uint64_t hash) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
    return hash;
}

namespace {
constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;
std::uint64_t word_at(const unsigned char* p) {
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);  // (little-endian on every machine strata builds for)
    return w;
}
}  // namespace

void WordChecksum::add(const void* data, std::size_t bytes) {
    if (bytes == 0) return;  // (data may be null: an empty array's)
    const auto* p = static_cast<const unsigned char*>(data);
    if (npending_ > 0) {  // a word begun by the last piece
        const std::size_t n = std::min(sizeof pending_ - npending_, bytes);
        std::memcpy(pending_ + npending_, p, n);
        npending_ += n, p += n, bytes -= n;
        if (npending_ < sizeof pending_) return;
        hash_ = (hash_ ^ word_at(pending_)) * kFnvPrime, npending_ = 0;
    }
    for (; bytes >= 8; p += 8, bytes -= 8) hash_ = (hash_ ^ word_at(p)) * kFnvPrime;
    std::memcpy(pending_, p, bytes);
    npending_ += bytes;
}

std::uint64_t WordChecksum::value() const { return fnv1a64(pending_, npending_, hash_); }

// A 2D field has one plane; ghost layers wider than kMaxGhost are no stencil's (and would make the
// fields built from the header, interior plus ghosts, far larger than the file).
bool CheckpointHeader::plausible() const {
    return nx >= 1 && ny >= 1 && nz >= 1 && (dims == 2 || dims == 3) && (dims == 3 || nz == 1) && ghost >= 0 &&
           ghost <= kMaxGhost && step >= 0;
}

double CheckpointHeader::param(const std::string& name, const std::string& file) const {
    for (const auto& [n, v] : params)
        if (n == name) return v;
    throw UsageError("checkpoint '" + file + "' lacks the " + model + " parameter '" + name + "'");
}

double CheckpointHeader::state_scale() const {
    for (const auto& [n, v] : params)
        if (n == "state_scale") return v;
    return 1;
}

template <class T>
HostField<T> Checkpoint::field(std::size_t i) const {
    if (header.precision != precision_of<T>())
        throw Error("checkpoint holds " + std::string(to_string(header.precision)) + " fields, not " +
                    std::string(to_string(precision_of<T>())));
    HostField<T> f(header.extent());
    const Extent& e = f.extent;
    const char* src = interiors.at(i).data();
    for (int k = 0; k < e.nz; ++k)
        for (int j = 0; j < e.ny; ++j, src += std::size_t(e.nx) * sizeof(T))
            std::memcpy(&f.at(0, j, k), src, std::size_t(e.nx) * sizeof(T));
    return f;
}

template <class T>
std::vector<T> Checkpoint::array(const std::string& name) const {
    if (header.precision != precision_of<T>())
        throw Error("checkpoint holds " + std::string(to_string(header.precision)) + " arrays, not " +
                    std::string(to_string(precision_of<T>())));
    for (std::size_t i = 0; i < array_names.size(); ++i)
        if (array_names[i] == name) {
            std::vector<T> v(arrays[i].size() / sizeof(T));
            if (!v.empty()) std::memcpy(v.data(), arrays[i].data(), v.size() * sizeof(T));
            return v;
        }
    throw Error("the " + header.model + " checkpoint lacks the array '" + name + "'");
}

template <class T>
void write_checkpoint(const std::string& path, const CheckpointHeader& h,
                      const std::vector<std::pair<std::string, const HostField<T>*>>& fields,
                      const std::vector<std::pair<std::string, const std::vector<T>*>>& arrays) {
    if (h.precision != precision_of<T>()) throw Error("checkpoint header and fields differ in precision");
    Writer w;
    w.bytes.append(kMagic, sizeof kMagic);
    w.put(kCheckpointVersion);
    w.put_string(h.model);
    w.put(precision_word(precision_of<T>()));
    for (int v : {h.nx, h.ny, h.nz, h.ghost, h.dims}) w.put(std::int32_t(v));
    w.put(std::int64_t(h.step));
    w.put(h.t);
    w.put(std::uint32_t(h.params.size()));
    for (const auto& [name, value] : h.params) {
        w.put_string(name);
        w.put(value);
    }
    w.put(std::uint32_t(fields.size()));
    for (const auto& f : fields) w.put_string(f.first);
    w.put(std::uint32_t(arrays.size()));
    for (const auto& [name, a] : arrays) {
        w.put_string(name);
        w.put(std::uint64_t(a->size()));
    }
    AtomicFile out(path);
    out.write(w.bytes);
    WordChecksum sum;
    sum.add(w.bytes.data(), w.bytes.size());
    const Extent e = h.extent();
    for (const auto& [name, f] : fields) {
        if (f->extent.nx != e.nx || f->extent.ny != e.ny || f->extent.nz != e.nz)
            throw Error("checkpoint field '" + name + "' differs in size from the header");
        for (int k = 0; k < e.nz; ++k)
            for (int j = 0; j < e.ny; ++j) {
                const T* row = &f->at(0, j, k);
                out.write(row, std::size_t(e.nx) * sizeof(T));
                sum.add(row, std::size_t(e.nx) * sizeof(T));
            }
    }
    for (const auto& a : arrays) {
        out.write(a.second->data(), a.second->size() * sizeof(T));
        sum.add(a.second->data(), a.second->size() * sizeof(T));
    }
    const std::uint64_t hash = sum.value();
    out.write(&hash, sizeof hash);
    out.commit();
}

Checkpoint read_checkpoint(const std::string& path) {
    if (std::filesystem::is_directory(path))
        throw UsageError("checkpoint '" + path + "' is a folder: name the checkpoint file in it");
    if (is_hdf5(path)) return read_checkpoint_h5(path);
    std::ifstream f(path, std::ios::binary);
    if (!f) throw UsageError("cannot open checkpoint '" + path + "'");
    const std::string bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
        throw UsageError("'" + path + "' is not a strata checkpoint (no STRATACK magic)");
    Reader r{path, bytes, sizeof kMagic};
    const auto version = r.get<std::uint32_t>();
    if (version < 1 || version > kCheckpointVersion)
        throw UsageError("checkpoint '" + path + "' has format version " + std::to_string(version) +
                         "; this strata reads versions 1 to " + std::to_string(kCheckpointVersion));
    Checkpoint c;
    CheckpointHeader& h = c.header;
    h.model = r.get_string();
    const auto word = r.get<std::uint32_t>();
    if (word != 4 && word != 8 && word != 2 && word != kBf16Word)
        throw UsageError("checkpoint '" + path + "' has an unknown precision (value word " +
                         std::to_string(word) + ")");
    h.precision = word == 4   ? Precision::fp32
                  : word == 8 ? Precision::fp64
                  : word == 2 ? Precision::fp16
                              : Precision::bf16;
    const std::size_t elem = std::size_t(bytes_of(h.precision));
    h.nx = r.get<std::int32_t>();
    h.ny = r.get<std::int32_t>();
    h.nz = r.get<std::int32_t>();
    h.ghost = r.get<std::int32_t>();
    h.dims = r.get<std::int32_t>();
    h.step = r.get<std::int64_t>();
    h.t = r.get<double>();
    if (!h.plausible())
        throw UsageError("checkpoint '" + path + "' has a corrupted header (sizes or step out of range)");
    const auto nparams = r.get<std::uint32_t>();
    for (std::uint32_t i = 0; i < nparams; ++i) {
        std::string name = r.get_string();
        h.params.emplace_back(std::move(name), r.get<double>());
    }
    const auto nfields = r.get<std::uint32_t>();
    for (std::uint32_t i = 0; i < nfields; ++i) c.field_names.push_back(r.get_string());
    // The values the header promises, each size checked against the most the file can hold
    // before it is multiplied or added: int32 sides and 32- and 64-bit counts multiply past 2^64,
    // and wrapped around they could match the file's size.
    const std::size_t room = bytes.size() / elem, nx = h.nx, ny = h.ny, nz = h.nz;
    if (nx > room || ny > room / nx || nz > room / (nx * ny) || nfields > room / (nx * ny * nz))
        throw UsageError("checkpoint '" + path + "' is truncated (its header's fields exceed the file)");
    const std::size_t field_bytes = nx * ny * nz * elem;
    std::size_t values = nfields * nx * ny * nz;
    std::vector<std::size_t> array_bytes;
    const std::uint32_t narrays = version >= 2 ? r.get<std::uint32_t>() : 0;
    for (std::uint32_t i = 0; i < narrays; ++i) {
        c.array_names.push_back(r.get_string());
        const auto length = r.get<std::uint64_t>();
        if (length > room - values)
            throw UsageError("checkpoint '" + path + "' is truncated (array '" + c.array_names.back() +
                             "' runs past its end)");
        values += length;
        array_bytes.push_back(std::size_t(length) * elem);
    }
    const std::size_t expected = r.at + values * elem + sizeof(std::uint64_t);
    if (bytes.size() < expected)
        throw UsageError("checkpoint '" + path + "' is truncated (" + std::to_string(bytes.size()) + " of " +
                         std::to_string(expected) + " bytes)");
    if (bytes.size() > expected)
        throw UsageError("checkpoint '" + path + "' has trailing bytes: it is corrupted");
    std::uint64_t stored;
    std::memcpy(&stored, bytes.data() + expected - sizeof stored, sizeof stored);
    std::uint64_t computed = 0;
    if (version >= 3) {
        WordChecksum sum;
        sum.add(bytes.data(), expected - sizeof stored);
        computed = sum.value();
    } else {
        computed = fnv1a64(bytes.data(), expected - sizeof stored);
    }
    if (computed != stored) throw UsageError("checkpoint '" + path + "' is corrupted (checksum mismatch)");
    const char* p = bytes.data() + r.at;
    for (std::uint32_t i = 0; i < nfields; ++i, p += field_bytes)
        c.interiors.emplace_back(p, p + field_bytes);
    for (std::size_t n : array_bytes) {
        c.arrays.emplace_back(p, p + n);
        p += n;
    }
    return c;
}

template HostField<float> Checkpoint::field<float>(std::size_t) const;
template HostField<f16> Checkpoint::field<f16>(std::size_t) const;
template HostField<bf16> Checkpoint::field<bf16>(std::size_t) const;
template HostField<double> Checkpoint::field<double>(std::size_t) const;
template std::vector<float> Checkpoint::array<float>(const std::string&) const;
template std::vector<f16> Checkpoint::array<f16>(const std::string&) const;
template std::vector<bf16> Checkpoint::array<bf16>(const std::string&) const;
template std::vector<double> Checkpoint::array<double>(const std::string&) const;
template void write_checkpoint<float>(const std::string&, const CheckpointHeader&,
                                      const std::vector<std::pair<std::string, const HostField<float>*>>&,
                                      const std::vector<std::pair<std::string, const std::vector<float>*>>&);
template void write_checkpoint<f16>(const std::string&, const CheckpointHeader&,
                                    const std::vector<std::pair<std::string, const HostField<f16>*>>&,
                                    const std::vector<std::pair<std::string, const std::vector<f16>*>>&);
template void write_checkpoint<bf16>(const std::string&, const CheckpointHeader&,
                                     const std::vector<std::pair<std::string, const HostField<bf16>*>>&,
                                     const std::vector<std::pair<std::string, const std::vector<bf16>*>>&);
template void write_checkpoint<double>(
    const std::string&, const CheckpointHeader&,
    const std::vector<std::pair<std::string, const HostField<double>*>>&,
    const std::vector<std::pair<std::string, const std::vector<double>*>>&);

}  // namespace strata::io
