#include "strata/io/png.hpp"

#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>

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

// Writes rows of `bytes_per_pixel` bytes; `palette` (256 colours) makes it an indexed image.
void write_rows(const std::string& path, int width, int height, const std::uint8_t* rows, int bytes_per_pixel,
                const std::vector<png_color>* palette) {
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
    png_set_IHDR(png, info, width, height, 8, palette ? PNG_COLOR_TYPE_PALETTE : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 1);  // fast: snapshots are written while the GPU runs on
    if (palette) {
        png_set_PLTE(png, info, palette->data(), int(palette->size()));
        png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);  // the PNG spec's advice for palettes
        // Indices of a smooth field come in runs: run-length matches (distance 1 only) find them
        // as well as the full search does, in half the bytes of a 4097^2 apf frame and 10% less
        // time. Not for RGB, whose runs repeat at distance 3.
        png_set_compression_strategy(png, Z_RLE);
    }
    // Whole-frame IDAT chunks of 1 MiB instead of 8 KiB: fewer chunks, CRCs and write calls.
    png_set_compression_buffer_size(png, 1 << 20);
    png_write_info(png, info);
    for (int y = 0; y < height; ++y) png_write_row(png, rows + std::size_t(y) * width * bytes_per_pixel);
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    if (std::fflush(f.get()) != 0 || std::ferror(f.get())) throw Error("failed writing '" + path + "'");
}

}  // namespace

void write_png(const std::string& path, const Image& img) {
    if (img.pixels.size() != std::size_t(img.width) * img.height)
        throw Error("cannot write '" + path + "': the image is inconsistent");
    write_rows(path, img.width, img.height, reinterpret_cast<const std::uint8_t*>(img.pixels.data()), 3, nullptr);
}

void write_png(const std::string& path, const IndexedImage& img) {
    if (img.index.size() != std::size_t(img.width) * img.height)
        throw Error("cannot write '" + path + "': the image is inconsistent");
    std::vector<png_color> palette(256);
    for (int i = 0; i < 256; ++i) {
        const Rgb c = palette_colour(std::uint8_t(i));
        palette[i] = {c.r, c.g, c.b};
    }
    write_rows(path, img.width, img.height, img.index.data(), 1, &palette);
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
