#pragma once
// PNG images of fields: a perceptually uniform colour map (viridis) over a fixed value range, so
// frames of a series compare, written and read back through libpng.
#include <cstdint>
#include <string>
#include <vector>

namespace strata::io {

struct Rgb {
    std::uint8_t r = 0, g = 0, b = 0;
    bool operator==(const Rgb&) const = default;
};

// An 8-bit RGB image, row 0 at the top.
struct Image {
    int width = 0, height = 0;
    std::vector<Rgb> pixels;  // width * height, row-major
    Rgb& at(int x, int y) { return pixels[std::size_t(y) * width + x]; }
    const Rgb& at(int x, int y) const { return pixels[std::size_t(y) * width + x]; }
};

// viridis at t in [0, 1] (clamped; NaN maps to magenta so unwritten cells stand out).
Rgb viridis(double t);

// Maps values (row-major, `width` per row, row 0 drawn at the top) linearly from [lo, hi] to viridis.
template <class T>
Image colormap(const T* values, int width, int height, double lo, double hi) {
    Image img{width, height, std::vector<Rgb>(std::size_t(width) * height)};
    const double scale = hi > lo ? 1.0 / (hi - lo) : 0.0;
    for (std::size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = viridis((double(values[i]) - lo) * scale);
    return img;
}

// Throw strata::Error naming the file on any failure.
void write_png(const std::string& path, const Image& img);
Image read_png(const std::string& path);

}  // namespace strata::io
