#include <gtest/gtest.h>
#include <png.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>

#include "strata/core/error.hpp"
#include "strata/io/png.hpp"

namespace strata {
namespace {

TEST(Png, ViridisRunsFromPurpleToYellowAndFlagsNaN) {
    EXPECT_EQ(io::viridis(0.0), (io::Rgb{68, 1, 84}));
    EXPECT_EQ(io::viridis(1.0), (io::Rgb{253, 231, 37}));
    EXPECT_EQ(io::viridis(-5.0), io::viridis(0.0));  // clamped
    EXPECT_EQ(io::viridis(std::nan("")), (io::Rgb{255, 0, 255}));
    // Lightness grows monotonically along the map (it is perceptually ordered).
    double last = -1;
    for (int i = 0; i <= 100; ++i) {
        const io::Rgb c = io::viridis(i / 100.0);
        const double y = 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
        EXPECT_GE(y, last - 0.5) << i;
        last = y;
    }
}

TEST(Png, WrittenImageReadsBackPixelForPixel) {
    const int w = 37, h = 23;  // odd sizes: no row padding hides an off-by-one
    std::vector<float> v(w * h);
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> d(-1.0f, 2.0f);
    for (auto& x : v) x = d(gen);
    const io::Image img = io::colormap(v.data(), w, h, -1.0, 2.0);
    const auto path = (std::filesystem::temp_directory_path() / "strata_png_test.png").string();
    io::write_png(path, img);
    const io::Image back = io::read_png(path);
    EXPECT_EQ(back.width, w);
    EXPECT_EQ(back.height, h);
    EXPECT_EQ(back.pixels, img.pixels);
    EXPECT_EQ(back.at(5, 3), io::viridis((v[3 * w + 5] + 1.0) / 3.0));
    std::filesystem::remove(path);
}

// The palette indices of an 8-bit indexed PNG as stored, without expanding them to colours
// (two palette entries share a colour, so colours alone would not tell indices apart).
io::IndexedImage read_indices(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw std::runtime_error("cannot open " + path);
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png_create_info_struct(png);
    io::IndexedImage img;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, nullptr);
        std::fclose(f);
        throw std::runtime_error(path + " is not a readable PNG");
    }
    png_init_io(png, f);
    png_read_info(png, info);
    if (png_get_color_type(png, info) == PNG_COLOR_TYPE_PALETTE && png_get_bit_depth(png, info) == 8) {
        img.width = int(png_get_image_width(png, info));
        img.height = int(png_get_image_height(png, info));
        img.index.resize(std::size_t(img.width) * img.height);
        for (int y = 0; y < img.height; ++y) png_read_row(png, &img.index[std::size_t(y) * img.width], nullptr);
        png_read_end(png, nullptr);
    }
    png_destroy_read_struct(&png, &info, nullptr);
    std::fclose(f);
    return img;
}

TEST(Png, IndexedImageWithRunsAndNoiseReadsBackIndexForIndex) {
    // Wider than a zlib run (258 bytes) and odd; rows of one index continuing into the next row,
    // runs shorter and longer than a match, noise, and the NaN index.
    const int w = 1031, h = 13;
    io::IndexedImage img{w, h, std::vector<std::uint8_t>(std::size_t(w) * h)};
    std::mt19937 gen(11);
    std::uniform_int_distribution<int> any(0, 255), run(1, 700);
    for (std::size_t i = 0; i < img.index.size();) {
        const std::size_t n = std::min<std::size_t>(run(gen), img.index.size() - i);
        const bool noise = any(gen) < 64;
        const auto level = std::uint8_t(any(gen));
        for (std::size_t k = 0; k < n; ++k) img.index[i + k] = noise ? std::uint8_t(any(gen)) : level;
        i += n;
    }
    std::fill_n(img.index.begin() + 3 * w, 2 * w + 5, io::IndexedImage::kNaN);
    const auto path = (std::filesystem::temp_directory_path() / "strata_png_indexed_test.png").string();
    io::write_png(path, img);
    const io::IndexedImage back = read_indices(path);
    EXPECT_EQ(back.width, w);
    EXPECT_EQ(back.height, h);
    EXPECT_EQ(back.index, img.index);
    const io::Image rgb = io::read_png(path);  // and our reader's colours are the palette's
    ASSERT_EQ(rgb.pixels.size(), img.index.size());
    for (std::size_t i = 0; i < img.index.size(); ++i)
        ASSERT_EQ(rgb.pixels[i], io::palette_colour(img.index[i])) << i;
    std::filesystem::remove(path);
}

TEST(Png, StripsCompressedOnSeveralThreadsOutOfOrderReadBackIndexForIndex) {
    // Strips of uneven heights (97 rows in 5), each its own deflate stream, finished last to first
    // on their own threads: libpng must read one image whose indices are the rows given.
    const int w = 611, h = 97, strips = 5;
    io::IndexedImage img{w, h, std::vector<std::uint8_t>(std::size_t(w) * h)};
    std::mt19937 gen(23);
    std::uniform_int_distribution<int> any(0, 255);
    for (std::size_t i = 0; i < img.index.size(); ++i)
        img.index[i] = (i / 300) % 3 == 0 ? std::uint8_t(any(gen)) : std::uint8_t(i / 997);  // noise and runs
    const auto path = (std::filesystem::temp_directory_path() / "strata_png_strips_test.png").string();
    io::PngStrips png(path, w, h, strips);
    ASSERT_EQ(png.strips(), strips);
    std::vector<int> completed(strips, 0);
    std::vector<int> rows_filled(h, 0);
    for (int s = strips - 1; s >= 0; --s) {
        std::thread t([&, s] {
            completed[s] = png.write_strip(s, [&](int y, std::uint8_t* row) {
                ++rows_filled[y];
                std::copy_n(img.index.data() + std::size_t(y) * w, w, row);
            });
        });
        t.join();
    }
    EXPECT_EQ(std::count(completed.begin(), completed.end(), 1), 1);
    EXPECT_EQ(completed[0], 1);  // the last one written
    EXPECT_EQ(std::count(rows_filled.begin(), rows_filled.end(), 1), h);  // every row once
    const io::IndexedImage back = read_indices(path);
    EXPECT_EQ(back.width, w);
    EXPECT_EQ(back.height, h);
    EXPECT_EQ(back.index, img.index);
    std::filesystem::remove(path);
    EXPECT_EQ(io::png_strips(4097, 15), 15);
    EXPECT_EQ(io::png_strips(1000, 15), 3);  // at least 256 rows a strip
    EXPECT_EQ(io::png_strips(100, 15), 1);
}

TEST(Png, UnwritablePathAndNonPngAreClearErrors) {
    io::Image img{2, 2, std::vector<io::Rgb>(4)};
    EXPECT_THROW(io::write_png("/nonexistent-dir/x.png", img), Error);
    const auto path = (std::filesystem::temp_directory_path() / "strata_not_a_png.png").string();
    std::ofstream(path) << "hello";
    EXPECT_THROW(io::read_png(path), Error);
    std::filesystem::remove(path);
}

}  // namespace
}  // namespace strata
