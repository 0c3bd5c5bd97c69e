#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

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
