#pragma once
// PNG images of fields: a perceptually uniform colour map (viridis) over a fixed value range, so
// frames of a series compare, written and read back through libpng.
#include <atomic>
#include <cstdint>
#include <functional>
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

// A field's picture as 8-bit indices into a viridis palette: a third of the bytes of RGB to
// compress, which is what lets snapshots of large fields keep up with the GPU.
struct IndexedImage {
    static constexpr int kLevels = 255;             // indices 0..254 cover [lo, hi]
    static constexpr std::uint8_t kNaN = kLevels;   // index 255: magenta, a NaN
    int width = 0, height = 0;
    std::vector<std::uint8_t> index;                // width * height, row 0 at the top
};
// The palette colour of an index.
Rgb palette_colour(std::uint8_t index);

// One row of a field's picture: `width` values mapped linearly from [lo, hi] to palette indices,
// clamped, NaN to IndexedImage::kNaN.
template <class T>
void picture_row(const T* values, int width, double lo, double hi, std::uint8_t* out) {
    const double top = IndexedImage::kLevels - 1, scale = hi > lo ? top / (hi - lo) : 0.0;
    // GCC keeps these selects as branches (an FP compare may trap), so this does not vectorise;
    // a smooth field predicts them well: ~12 ms (fp32) / ~20 ms (fp64) a 4097^2 frame on one
    // core, about the time to read its values. Vectorised (SSE2, with -fno-trapping-math) it was
    // not faster on real frames.
    for (int x = 0; x < width; ++x) {
        const double s = (double(values[x]) - lo) * scale;
        const double c = s > 0 ? (s < top ? s : top) : 0.0;  // NaN compares false: 0, fixed below
        out[x] = s == s ? std::uint8_t(c + 0.5) : IndexedImage::kNaN;
    }
}

// Values (row-major, `width` per row) mapped linearly from [lo, hi] and clamped, with rows
// flipped so that y grows upwards in the picture, as in a plot.
template <class T>
IndexedImage field_picture(const T* values, int width, int height, double lo, double hi) {
    IndexedImage img{width, height, std::vector<std::uint8_t>(std::size_t(width) * height)};
    for (int y = 0; y < height; ++y)
        picture_row(values + std::size_t(height - 1 - y) * width, width, lo, hi,
                    img.index.data() + std::size_t(y) * width);
    return img;
}

// An indexed PNG compressed by several threads at once, in strips of rows, as pigz does: each
// strip is its own deflate stream ending on a byte boundary, and the strips concatenated are
// the image's one zlib stream (the Adler-32 combined). A strip costs its thread ~2.5 ms per 256
// rows of a 4097-wide frame; the thread that completes the last strip writes the file.
class PngStrips {
public:
    PngStrips(std::string path, int width, int height, int strips);
    const std::string& path() const { return path_; }
    int strips() const { return int(strips_.size()); }
    // Fills strip s row by row, `fill(y, row)` writing the `width` indices of picture row y
    // (0 at the top), and compresses it. Returns true for the call that completed the image: it
    // has written the file. Each strip once, from any thread.
    bool write_strip(int s, const std::function<void(int, std::uint8_t*)>& fill);

private:
    struct Strip {
        int y0 = 0, y1 = 0;
        std::vector<std::uint8_t> deflated;
        std::uint32_t adler = 1;
    };
    void write_file() const;

    std::string path_;
    int width_, height_;
    std::vector<Strip> strips_;
    std::atomic<int> left_;
};
// Strips for a picture of `height` rows shared by `threads` writers: at least 256 rows each.
int png_strips(int height, int threads);

// Throw strata::Error naming the file on any failure. read_png expands indexed images to RGB.
void write_png(const std::string& path, const Image& img);
void write_png(const std::string& path, const IndexedImage& img);
Image read_png(const std::string& path);

}  // namespace strata::io
