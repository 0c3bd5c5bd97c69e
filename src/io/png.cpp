#include "strata/io/png.hpp"

#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <memory>

#include "atomic_file.hpp"
#include "strata/core/error.hpp"

namespace strata::io {

static_assert(sizeof(Rgb) == 3, "rows of Rgb are handed to libpng as packed RGB bytes");

namespace {

// viridis at t = 0, 0.1, ..., 1 (matplotlib's map), linearly interpolated between the stops:
// within a few 8-bit steps of the full 256-entry table, and just as perceptually uniform.
constexpr int kStops = 11;
constexpr std::array<std::array<double, 3>, kStops> kViridis{{
    {0.267004, 0.004874, 0.329415}, {0.282623, 0.140926, 0.457517}, {0.253935, 0.265254, 0.529983},
    {0.206756, 0.371758, 0.553117}, {0.163625, 0.471133, 0.558148}, {0.127568, 0.566949, 0.550556},
    {0.134692, 0.658636, 0.517649}, {0.266941, 0.748751, 0.440573}, {0.477504, 0.821444, 0.318195},
    {0.741388, 0.873449, 0.149561}, {0.993248, 0.906157, 0.143936},
}};

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

File open(const std::string& path, const char* mode) {
    File f(std::fopen(path.c_str(), mode), &std::fclose);
    if (!f) throw Error("cannot open '" + path + "'" + (mode[0] == 'w' ? " for writing" : ""));
    return f;
}

}  // namespace

Rgb viridis(double t) {
    if (std::isnan(t)) return {255, 0, 255};
    t = std::fmin(1.0, std::fmax(0.0, t)) * (kStops - 1);
    const int i = std::min(int(t), kStops - 2);
    const double f = t - i;
    auto channel = [&](int c) {
        const double v = kViridis[i][c] * (1 - f) + kViridis[i + 1][c] * f;
        return std::uint8_t(std::lround(v * 255));
    };
    return {channel(0), channel(1), channel(2)};
}

Rgb palette_colour(std::uint8_t index) {
    return index == IndexedImage::kNaN ? viridis(std::nan("")) : viridis(index / double(IndexedImage::kLevels - 1));
}

namespace {

// Writes an 8-bit RGB image through libpng.
void write_rgb_rows(const std::string& path, int width, int height, const std::uint8_t* rows) {
    if (width <= 0 || height <= 0) throw Error("cannot write '" + path + "': the image is empty");
    File f = open(path, "wb");
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png ? png_create_info_struct(png) : nullptr;
    if (!info) {
        png_destroy_write_struct(&png, nullptr);
        throw Error("libpng could not start writing '" + path + "'");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        throw Error("libpng failed writing '" + path + "'");
    }
    png_init_io(png, f.get());
    png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 1);
    png_set_compression_buffer_size(png, 1 << 20);  // 1 MiB IDAT chunks: fewer CRCs and writes
    png_write_info(png, info);
    for (int y = 0; y < height; ++y) png_write_row(png, rows + std::size_t(y) * width * 3);
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    if (std::fflush(f.get()) != 0 || std::ferror(f.get())) write_failed(path, errno);
}

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(std::uint8_t(v >> shift));
}

// A PNG chunk: length, type, data, CRC-32 of type and data.
bool write_chunk(std::FILE* f, const char* type, const std::uint8_t* data, std::size_t n) {
    std::vector<std::uint8_t> head;
    put_u32(head, std::uint32_t(n));
    head.insert(head.end(), type, type + 4);
    std::uint32_t crc = std::uint32_t(crc32(0, head.data() + 4, 4));
    if (n > 0) crc = std::uint32_t(crc32_z(crc, data, n));
    std::vector<std::uint8_t> tail;
    put_u32(tail, crc);
    return std::fwrite(head.data(), 1, head.size(), f) == head.size() &&
           (n == 0 || std::fwrite(data, 1, n, f) == n) && std::fwrite(tail.data(), 1, tail.size(), f) == tail.size();
}

}  // namespace

int png_strips(int height, int threads) {
    return std::max(1, std::min(std::max(threads, 1), height / 256));
}

PngStrips::PngStrips(std::string path, int width, int height, int strips)
    : path_(std::move(path)), width_(width), height_(height), left_(0) {
    if (width <= 0 || height <= 0) throw Error("cannot write '" + path_ + "': the image is empty");
    strips = std::clamp(strips, 1, height);
    for (int s = 0; s < strips; ++s)
        strips_.push_back({int(std::int64_t(height) * s / strips), int(std::int64_t(height) * (s + 1) / strips), {}, 1});
    left_ = strips;
}

bool PngStrips::write_strip(int s, const std::function<void(int, std::uint8_t*)>& fill) {
    Strip& strip = strips_.at(std::size_t(s));
    // Each row is its filter byte (0: none, the PNG spec's advice for palettes) and its indices.
    const std::size_t row_bytes = std::size_t(width_) + 1;
    std::vector<std::uint8_t> raw(row_bytes * std::size_t(strip.y1 - strip.y0));
    for (int y = strip.y0; y < strip.y1; ++y) {
        std::uint8_t* row = raw.data() + row_bytes * std::size_t(y - strip.y0);
        row[0] = 0;
        fill(y, row + 1);
    }
    strip.adler = std::uint32_t(adler32_z(1, raw.data(), raw.size()));
    // Raw deflate, level 1. Indices of a smooth field come in runs: run-length matches (distance
    // 1 only) find them as well as the full search does, in half the bytes of a 4097^2 apf frame
    // and 10% less time. Every strip but the last ends with a sync flush: byte-aligned, not final.
    z_stream z{};
    if (deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_RLE) != Z_OK) throw Error("zlib could not start on '" + path_ + "'");
    strip.deflated.resize(deflateBound(&z, raw.size()) + 64);
    const bool last = s + 1 == strips();
    std::size_t in = 0, out = 0;
    bool ok = true;
    do {  // in pieces of at most 1 GiB: zlib counts bytes in 32 bits
        const std::size_t piece = std::min<std::size_t>(raw.size() - in, std::size_t(1) << 30);
        const bool end = in + piece == raw.size();
        z.next_in = raw.data() + in;
        z.avail_in = uInt(piece);
        z.next_out = strip.deflated.data() + out;
        z.avail_out = uInt(std::min<std::size_t>(strip.deflated.size() - out, std::size_t(1) << 31));
        const int rc = deflate(&z, !end ? Z_NO_FLUSH : last ? Z_FINISH : Z_SYNC_FLUSH);
        ok = (end && last ? rc == Z_STREAM_END : rc == Z_OK) && z.avail_in == 0 && z.avail_out > 0;
        in += piece;
        out = std::size_t(z.next_out - strip.deflated.data());
    } while (ok && in < raw.size());
    strip.deflated.resize(out);
    deflateEnd(&z);
    if (!ok) throw Error("zlib failed compressing '" + path_ + "'");
    if (left_.fetch_sub(1, std::memory_order_acq_rel) != 1) return false;
    write_file();
    return true;
}

void PngStrips::write_file() const {
    std::vector<std::uint8_t> ihdr;
    put_u32(ihdr, std::uint32_t(width_));
    put_u32(ihdr, std::uint32_t(height_));
    ihdr.insert(ihdr.end(), {8, 3, 0, 0, 0});  // 8 bits, palette, deflate, adaptive filters, no interlace
    std::vector<std::uint8_t> plte;
    for (int i = 0; i < 256; ++i) {
        const Rgb c = palette_colour(std::uint8_t(i));
        plte.insert(plte.end(), {c.r, c.g, c.b});
    }
    // The zlib stream: its header (deflate, 32K window, fastest), the strips, the Adler-32 of
    // all rows. IDAT chunks concatenate into one stream, so each piece is a chunk of its own.
    const std::uint8_t zhead[2] = {0x78, 0x01};
    std::uint32_t adler = strips_.front().adler;
    for (std::size_t s = 1; s < strips_.size(); ++s) {
        const auto bytes = std::size_t(strips_[s].y1 - strips_[s].y0) * (std::size_t(width_) + 1);
        adler = std::uint32_t(adler32_combine(adler, strips_[s].adler, z_off_t(bytes)));
    }
    std::vector<std::uint8_t> ztail;
    put_u32(ztail, adler);

    File f = open(path_, "wb");
    static const std::uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    bool ok = std::fwrite(signature, 1, 8, f.get()) == 8 && write_chunk(f.get(), "IHDR", ihdr.data(), ihdr.size()) &&
              write_chunk(f.get(), "PLTE", plte.data(), plte.size()) && write_chunk(f.get(), "IDAT", zhead, 2);
    for (const Strip& s : strips_) ok = ok && write_chunk(f.get(), "IDAT", s.deflated.data(), s.deflated.size());
    ok = ok && write_chunk(f.get(), "IDAT", ztail.data(), ztail.size()) && write_chunk(f.get(), "IEND", nullptr, 0);
    if (!ok || std::fflush(f.get()) != 0 || std::ferror(f.get())) write_failed(path_, errno);
}

void write_png(const std::string& path, const Image& img) {
    if (img.pixels.size() != std::size_t(img.width) * img.height)
        throw Error("cannot write '" + path + "': the image is inconsistent");
    write_rgb_rows(path, img.width, img.height, reinterpret_cast<const std::uint8_t*>(img.pixels.data()));
}

void write_png(const std::string& path, const IndexedImage& img) {
    if (img.index.size() != std::size_t(img.width) * img.height)
        throw Error("cannot write '" + path + "': the image is inconsistent");
    PngStrips png(path, img.width, img.height, 1);
    png.write_strip(0, [&](int y, std::uint8_t* row) {
        std::copy_n(img.index.data() + std::size_t(y) * img.width, img.width, row);
    });
}

Image read_png(const std::string& path) {
    File f = open(path, "rb");
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png ? png_create_info_struct(png) : nullptr;
    if (!info) {
        png_destroy_read_struct(&png, nullptr, nullptr);
        throw Error("libpng could not start reading '" + path + "'");
    }
    Image img;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, nullptr);
        throw Error("'" + path + "' is not a readable PNG file");
    }
    png_init_io(png, f.get());
    png_read_info(png, info);
    if (png_get_color_type(png, info) == PNG_COLOR_TYPE_PALETTE) {
        png_set_palette_to_rgb(png);
        png_read_update_info(png, info);
    }
    if (png_get_color_type(png, info) != PNG_COLOR_TYPE_RGB || png_get_bit_depth(png, info) != 8) {
        png_destroy_read_struct(&png, &info, nullptr);
        throw Error("'" + path + "' is not an 8-bit RGB PNG");
    }
    img.width = int(png_get_image_width(png, info));
    img.height = int(png_get_image_height(png, info));
    img.pixels.resize(std::size_t(img.width) * img.height);
    for (int y = 0; y < img.height; ++y)
        png_read_row(png, reinterpret_cast<png_bytep>(&img.pixels[std::size_t(y) * img.width]), nullptr);
    png_destroy_read_struct(&png, &info, nullptr);
    return img;
}

}  // namespace strata::io
