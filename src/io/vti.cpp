#include "strata/io/vti.hpp"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "atomic_file.hpp"
#include "strata/core/error.hpp"

namespace strata::io {

static_assert(std::endian::native == std::endian::little, "the .vti writer declares LittleEndian");

namespace {

std::string extent_text(const VtiGrid& g) {
    std::ostringstream s;
    s << "0 " << g.nx - 1 << " 0 " << g.ny - 1 << " 0 " << g.nz - 1;
    return s.str();
}

// The value of `name="..."` in `text`, or "" when absent.
std::string attribute(const std::string& text, const std::string& name) {
    const std::string key = " " + name + "=\"";
    const auto at = text.find(key);
    if (at == std::string::npos) return "";
    const auto start = at + key.size(), end = text.find('"', start);
    return end == std::string::npos ? "" : text.substr(start, end - start);
}

// The `count` whitespace-separated numbers of attribute `name` in `text`; false when it is
// missing, malformed or out of V's range.
template <class V>
bool numbers(const std::string& text, const std::string& name, V* out, int count) {
    std::istringstream s(attribute(text, name));
    for (int i = 0; i < count; ++i)
        if (!(s >> out[i])) return false;
    return true;
}

std::string read_all(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw UsageError("cannot open '" + path + "'");
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// zlib blocks of the appended data, as VTK's vtkZLibDataCompressor lays them out (UInt64
// header): the block count, the uncompressed block size, the last block's size (0 when full),
// each block's compressed size, then the blocks.
constexpr std::uint64_t kZlibBlock = 1 << 20;
// Deflate's largest expansion (a 258-byte match coded in 2 bits, plus overhead): no zlib block
// inflates to more than this many times its size.
constexpr std::uint64_t kDeflateMaxRatio = 1032;

std::vector<std::uint8_t> zlib_blocks(const void* data, std::uint64_t bytes) {
    const std::uint64_t blocks = (bytes + kZlibBlock - 1) / kZlibBlock;
    std::vector<std::uint64_t> header{blocks, kZlibBlock, bytes % kZlibBlock};
    std::vector<std::uint8_t> body;
    std::vector<std::uint8_t> out(compressBound(kZlibBlock));
    for (std::uint64_t b = 0; b < blocks; ++b) {
        const std::uint64_t n = std::min(kZlibBlock, bytes - b * kZlibBlock);
        uLongf size = uLongf(out.size());
        // Level 1: most of what zlib saves on simulation fields, at a fraction of the default's time.
        if (compress2(out.data(), &size, static_cast<const Bytef*>(data) + b * kZlibBlock, uLong(n), 1) != Z_OK)
            throw Error("zlib failed compressing a .vti block");
        header.push_back(size);
        body.insert(body.end(), out.begin(), out.begin() + std::ptrdiff_t(size));
    }
    std::vector<std::uint8_t> all(header.size() * sizeof(std::uint64_t));
    std::memcpy(all.data(), header.data(), all.size());
    all.insert(all.end(), body.begin(), body.end());
    return all;
}

}  // namespace

template <class T>
void write_vti(const std::string& path, const VtiGrid& g, const T* values, VtiCompression compression) {
    const std::uint64_t bytes = std::uint64_t(g.nx) * g.ny * g.nz * sizeof(T);
    char geometry[256];
    std::snprintf(geometry, sizeof geometry, "Origin=\"%.17g %.17g %.17g\" Spacing=\"%.17g %.17g %.17g\"",
                  g.origin[0], g.origin[1], g.origin[2], g.spacing, g.spacing, g.spacing);
    const std::string ext = extent_text(g);
    const bool zlib = compression == VtiCompression::zlib;
    std::string head =
        "<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\"" +
        std::string(zlib ? " compressor=\"vtkZLibDataCompressor\"" : "") +
        ">\n"
        "  <ImageData WholeExtent=\"" +
        ext + "\" " + geometry +
        ">\n"
        "    <Piece Extent=\"" +
        ext +
        "\">\n"
        "      <PointData Scalars=\"" +
        g.name +
        "\">\n"
        "        <DataArray type=\"" +
        (sizeof(T) == 4 ? "Float32" : "Float64") + "\" Name=\"" + g.name +
        "\" format=\"appended\" offset=\"0\"/>\n"
        "      </PointData>\n"
        "    </Piece>\n"
        "  </ImageData>\n"
        "  <AppendedData encoding=\"raw\">\n   _";
    const std::string tail = "\n  </AppendedData>\n</VTKFile>\n";
    const std::vector<std::uint8_t> packed = zlib ? zlib_blocks(values, bytes) : std::vector<std::uint8_t>{};
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw Error("cannot open '" + path + "' for writing: " + std::strerror(errno));
    bool ok = std::fwrite(head.data(), 1, head.size(), f) == head.size();
    if (zlib)
        ok = ok && std::fwrite(packed.data(), 1, packed.size(), f) == packed.size();
    else
        ok = ok && std::fwrite(&bytes, sizeof bytes, 1, f) == 1 && std::fwrite(values, 1, bytes, f) == bytes;
    ok = ok && std::fwrite(tail.data(), 1, tail.size(), f) == tail.size();
    int error = ok ? 0 : errno;
    if (std::fclose(f) != 0 && ok) ok = false, error = errno;
    if (!ok) write_failed(path, error);
}

template void write_vti<float>(const std::string&, const VtiGrid&, const float*, VtiCompression);
template void write_vti<double>(const std::string&, const VtiGrid&, const double*, VtiCompression);

// The `expected` bytes of zlib blocks (zlib_blocks' layout) starting at text[at].
std::string inflate_blocks(const std::string& text, std::size_t at, std::uint64_t expected, const std::string& path) {
    auto u64 = [&](std::size_t i) {
        std::uint64_t v = 0;
        if (text.size() < at + (i + 1) * 8) throw UsageError("'" + path + "' is truncated");
        std::memcpy(&v, text.data() + at + i * 8, 8);
        return v;
    };
    const std::uint64_t blocks = u64(0), block = u64(1), last = u64(2);
    const bool consistent = block > 0 && last < block && blocks <= expected / block + 1 &&
                            (blocks == 0 ? expected == 0
                                         : (blocks - 1) * block + (last ? last : block) == expected);
    if (!consistent) throw UsageError("'" + path + "': the compressed blocks do not match WholeExtent");
    std::string out(expected, '\0');
    std::size_t from = at + (3 + blocks) * 8;
    for (std::uint64_t b = 0; b < blocks; ++b) {
        const std::uint64_t size = u64(3 + b), want = b + 1 == blocks && last ? last : block;
        if (size > text.size() || from > text.size() - size) throw UsageError("'" + path + "' is truncated");
        uLongf got = uLongf(want);
        if (uncompress(reinterpret_cast<Bytef*>(out.data() + b * block), &got,
                       reinterpret_cast<const Bytef*>(text.data() + from), uLong(size)) != Z_OK || got != want)
            throw UsageError("'" + path + "': a compressed block is corrupt");
        from += size;
    }
    return out;
}

VtiField read_vti(const std::string& path) {
    const std::string text = read_all(path);
    const std::string marker = "<AppendedData encoding=\"raw\">";
    const auto data_at = text.find(marker);
    const auto underscore = data_at == std::string::npos ? data_at : text.find('_', data_at);
    if (text.find("type=\"ImageData\"") == std::string::npos || underscore == std::string::npos ||
        text.find("header_type=\"UInt64\"") == std::string::npos)
        throw UsageError("'" + path + "' is not a .vti file with raw appended UInt64-headed data");
    const std::string head = text.substr(0, data_at);
    VtiField out;
    // The DataArray's type, not the VTKFile's (which comes first).
    const auto array_at = head.find("<DataArray");
    const std::string array_type =
        array_at == std::string::npos ? "" : attribute(head.substr(array_at), "type");
    if (array_type != "Float32" && array_type != "Float64")
        throw UsageError("'" + path + "': unsupported data type '" + array_type + "' (Float32 or Float64)");
    out.precision = array_type == "Float32" ? Precision::fp32 : Precision::fp64;
    const std::size_t elem = array_type == "Float32" ? 4 : 8;
    int extent[6];
    if (!numbers(head, "WholeExtent", extent, 6) || !numbers(head, "Origin", out.grid.origin.data(), 3) ||
        !numbers(head, "Spacing", &out.grid.spacing, 1))
        throw UsageError("'" + path + "': missing or malformed WholeExtent, Origin or Spacing");
    const bool zlib = attribute(head, "compressor") == "vtkZLibDataCompressor";
    // The most values a file of this size holds, raw or inflated: a WholeExtent beyond it is
    // refused before its sides' product can overflow or size an allocation.
    const std::uint64_t room = text.size() * (zlib ? kDeflateMaxRatio : 1) / elem;
    std::uint64_t count = 1;
    int* sides[3] = {&out.grid.nx, &out.grid.ny, &out.grid.nz};
    for (int axis = 0; axis < 3; ++axis) {
        const std::int64_t n = std::int64_t(extent[2 * axis + 1]) - extent[2 * axis] + 1;
        if (n < 1 || n > std::numeric_limits<int>::max() || std::uint64_t(n) > room / count)
            throw UsageError("'" + path + "': WholeExtent \"" + attribute(head, "WholeExtent") +
                             "\" is empty or holds more values than the file");
        *sides[axis] = int(n);
        count *= std::uint64_t(n);
    }
    out.grid.name = attribute(head, "Name");
    const char* p = nullptr;
    std::string inflated;
    if (zlib) {
        inflated = inflate_blocks(text, underscore + 1, count * elem, path);
        p = inflated.data();
    } else {
        std::uint64_t bytes = 0;
        if (text.size() < underscore + 1 + sizeof bytes) throw UsageError("'" + path + "' is truncated");
        std::memcpy(&bytes, text.data() + underscore + 1, sizeof bytes);
        if (bytes != count * elem)
            throw UsageError("'" + path + "': the data block size does not match WholeExtent");
        if (text.size() < underscore + 1 + sizeof bytes + bytes)
            throw UsageError("'" + path + "' is truncated");
        p = text.data() + underscore + 1 + sizeof bytes;
    }
    out.values.resize(count);
    for (std::uint64_t i = 0; i < count; ++i) {
        if (elem == 4) {
            float v;
            std::memcpy(&v, p + i * 4, 4);
            out.values[i] = v;
        } else {
            std::memcpy(&out.values[i], p + i * 8, 8);
        }
    }
    return out;
}

void write_pvd(const std::string& path, const std::vector<PvdFrame>& frames) {
    std::string s =
        "<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
        "  <Collection>\n";
    char line[1024];
    for (const PvdFrame& f : frames) {
        std::snprintf(line, sizeof line,
                      "    <DataSet timestep=\"%.17g\" group=\"\" part=\"0\" file=\"%s\"/>\n", f.time,
                      f.file.c_str());
        s += line;
    }
    s += "  </Collection>\n</VTKFile>\n";
    AtomicFile out(path);
    out.write(s);
    out.commit(false);  // rewritten after every frame: atomic is enough, durable would be slow
}

std::vector<PvdFrame> read_pvd(const std::string& path) {
    const std::string text = read_all(path);
    if (text.find("type=\"Collection\"") == std::string::npos || text.find("</VTKFile>") == std::string::npos)
        throw UsageError("'" + path + "' is not a complete .pvd collection");
    std::vector<PvdFrame> frames;
    for (auto at = text.find("<DataSet"); at != std::string::npos; at = text.find("<DataSet", at + 1)) {
        const std::string tag = text.substr(at, text.find("/>", at) - at);
        const std::string time = attribute(tag, "timestep"), file = attribute(tag, "file");
        char* end = nullptr;
        const double t = std::strtod(time.c_str(), &end);
        if (time.empty() || *end != '\0' || !std::isfinite(t) || file.empty())
            throw UsageError("'" + path + "': a DataSet without a finite timestep and a file");
        frames.push_back({t, file});
    }
    return frames;
}

}  // namespace strata::io
