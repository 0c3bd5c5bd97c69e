#pragma once
// examples/stencils/wave8.stencil set up to restate a built-in wave3d, for the CPU and GPU tests:
// wave3d with a velocity varying per cell, no sponge and no sources; the file with wave3d's vdt2,
// read from a raw file of the precision's values in a folder of its own (removed with the twin),
// and wave3d's weights as --params; one random state for both (the file's q is wave3d's prev).
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "strata/models/wave3d.hpp"
#include "test_util.hpp"

namespace strata::test {

template <class T>
struct Wave8Twin {
    std::vector<float> velocity;
    WaveParams params;
    Wave3dProblem builtin;
    std::filesystem::path dir;
    const ModelInfo* model = nullptr;  // the file's, registered
    std::unique_ptr<Problem> generated;
    State<T> builtin_init, generated_init;

    Wave8Twin(int nx, int ny, int nz)
        : velocity(speeds(nx * ny * nz)), params(wave_params(nx, ny, nz, 1.0, velocity, 0.5, 0, 0)), builtin(params, velocity) {
        static std::atomic<int> twins{0};
        dir = std::filesystem::temp_directory_path() /
              ("strata-wave8-" + std::to_string(getpid()) + "-" + std::to_string(twins++));
        std::filesystem::create_directories(dir);
        std::ifstream in(stencil_example("wave8.stencil"));
        std::ostringstream all;
        all << in.rdbuf();
        std::string text = all.str();
        const std::string from = "coefficient vdt2 = 0.1 + 0.05 * (z > 0.5)";
        if (text.find(from) == std::string::npos) throw std::runtime_error("wave8.stencil no longer says: " + from);
        text.replace(text.find(from), from.size(), "coefficient vdt2 = file(\"vdt2.raw\")");
        std::ofstream(dir / "wave8.stencil") << text;
        // (a file holds float32 or float64: 16-bit values go as float32, which holds each exactly)
        using Raw = std::conditional_t<sizeof(T) == 2, float, T>;
        std::vector<Raw> raw;
        for (T v : interior_values(wave_vdt2<T>(params, velocity))) raw.push_back(Raw(v));
        std::ofstream(dir / "vdt2.raw", std::ios::binary)
            .write(reinterpret_cast<const char*>(raw.data()), std::streamsize(raw.size() * sizeof(Raw)));
        model = &find_model((dir / "wave8.stencil").string());
        const Laplacian8 l;
        generated = model->box(Params{{"params", "c0x3=" + exact(3 * l.c[0]) + ",c1=" + exact(l.c[1]) + ",c2=" +
                                                     exact(l.c[2]) + ",c3=" + exact(l.c[3]) + ",c4=" + exact(l.c[4])}},
                               nx, ny, nz);
        HostField<T> p(builtin.extent()), prev(builtin.extent());
        fill_random(p, 31, -1.0, 1.0);
        fill_random(prev, 32, -1.0, 1.0);
        builtin_init = state<T>({{"p", p}, {"prev", prev}});
        generated_init = state<T>({{"p", p}, {"q", prev}});
    }
    ~Wave8Twin() { std::filesystem::remove_all(dir); }
    Wave8Twin(const Wave8Twin&) = delete;
    Wave8Twin& operator=(const Wave8Twin&) = delete;

private:
    static std::vector<float> speeds(int n) {
        std::vector<float> v(std::size_t(n), 0.0f);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1500.0f + float(i % 97) * 7.0f;
        return v;
    }
};

}  // namespace strata::test
