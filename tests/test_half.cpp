// 16-bit storage on the CPU: the host's rounding to fp16 and bf16 (the GPU's is checked against it
// in test_half_cuda.cu), the engines of every built-in model at 16 bits, and what refuses them.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "strata/core/error.hpp"
#include "strata/core/half.hpp"
#include "strata/engine.hpp"
#include "strata/models/heat2d.hpp"
#include "strata/models/heat3d.hpp"
#include "test_util.hpp"

namespace strata {
namespace {

// The value of a 16-bit pattern in double, from its fields (independent of half.hpp's code).
double value_of(std::uint16_t h, int exponent_bits, int mantissa_bits) {
    const int bias = (1 << (exponent_bits - 1)) - 1, e = (h >> mantissa_bits) & ((1 << exponent_bits) - 1);
    const int m = h & ((1 << mantissa_bits) - 1);
    const double sign = h >> 15 ? -1 : 1;
    if (e == (1 << exponent_bits) - 1) return m ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
    if (e == 0) return sign * std::ldexp(m, 1 - bias - mantissa_bits);
    return sign * std::ldexp((1 << mantissa_bits) + m, e - bias - mantissa_bits);
}

// The nearest 16-bit value to x (ties to the even pattern), found by searching the patterns of
// x's sign: what to_f16 / to_bf16 must give.
std::uint16_t nearest(float x, int exponent_bits, int mantissa_bits) {
    const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const double a = std::fabs(double(x));
    const std::uint16_t inf = std::uint16_t(((1 << exponent_bits) - 1) << mantissa_bits);
    // The largest finite value plus half an ulp of it rounds to infinity (ties to even: the
    // infinity's pattern is even).
    const double top = value_of(inf - 1, exponent_bits, mantissa_bits),
                 ulp = top - value_of(inf - 2, exponent_bits, mantissa_bits);
    if (a >= top + ulp / 2) return sign | inf;
    std::uint16_t lo = 0, hi = inf - 1;  // the last pattern whose value is <= a
    while (lo < hi) {
        const std::uint16_t mid = std::uint16_t((lo + hi + 1) / 2);
        if (value_of(mid, exponent_bits, mantissa_bits) <= a)
            lo = mid;
        else
            hi = std::uint16_t(mid - 1);
    }
    if (lo == inf - 1) return sign | lo;
    const double below = value_of(lo, exponent_bits, mantissa_bits),
                 above = value_of(lo + 1, exponent_bits, mantissa_bits);
    const double d0 = a - below, d1 = above - a;
    const std::uint16_t pick = d0 < d1   ? lo
                               : d1 < d0 ? std::uint16_t(lo + 1)
                                         : (lo & 1 ? std::uint16_t(lo + 1) : lo);
    return sign | pick;
}

// Floats that probe the roundings: every 16-bit value, the midpoints between neighbours and a float
// ulp either side of them, the edges of the ranges, and random floats of every exponent.
std::vector<float> probes(int exponent_bits, int mantissa_bits) {
    std::vector<float> v;
    const int inf = ((1 << exponent_bits) - 1) << mantissa_bits;
    for (int h = 0; h < inf; ++h) {
        const double a = value_of(std::uint16_t(h), exponent_bits, mantissa_bits),
                     b = value_of(std::uint16_t(h + 1), exponent_bits, mantissa_bits);
        const float mid = float((a + b) / 2);  // exact in fp32 for both types' ranges
        for (float x : {float(a), mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
            v.push_back(x);
            v.push_back(-x);
        }
    }
    std::mt19937 gen(7);
    for (int i = 0; i < 200000; ++i) v.push_back(std::bit_cast<float>(std::uint32_t(gen()) & 0xff7fffffu));
    for (float x : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 1e30f, std::numeric_limits<float>::max(),
                    std::numeric_limits<float>::denorm_min(), 5.96e-8f, 2.98e-8f, 2.9802322e-8f, 3.0e-8f})
        v.push_back(x);
    return v;
}

// Every probe rounds to the pattern the search finds.
template <class H>
void rounds_to_nearest(int exponent_bits, int mantissa_bits) {
    for (float x : probes(exponent_bits, mantissa_bits)) {
        if (std::isnan(x)) continue;
        ASSERT_EQ(H(x).bits, nearest(x, exponent_bits, mantissa_bits)) << x;
    }
    EXPECT_TRUE(std::isnan(float(H(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Half, HostRoundsToTheNearestFp16TiesToEven) {
    rounds_to_nearest<f16>(5, 10);
    EXPECT_EQ(f16(1.0f).bits, 0x3c00);
    EXPECT_EQ(f16(65504.0f).bits, 0x7bff);
    EXPECT_EQ(f16(65520.0f).bits, 0x7c00);  // the tie past the largest finite rounds to infinity
}

TEST(Half, HostRoundsToTheNearestBf16TiesToEven) {
    rounds_to_nearest<bf16>(8, 7);
    EXPECT_EQ(bf16(1.0f).bits, 0x3f80);
}

TEST(Half, EveryPatternConvertsToFloatExactlyAndBack) {
    for (int h = 0; h < 65536; ++h) {
        f16 a;
        bf16 b;
        a.bits = b.bits = std::uint16_t(h);
        const double va = value_of(a.bits, 5, 10), vb = value_of(b.bits, 8, 7);
        if (std::isnan(va)) {
            EXPECT_TRUE(std::isnan(float(a))) << h;
        } else {
            ASSERT_EQ(double(float(a)), va) << h;
            ASSERT_EQ(f16(float(a)).bits, a.bits) << h;
        }
        if (std::isnan(vb)) {
            EXPECT_TRUE(std::isnan(float(b))) << h;
        } else {
            ASSERT_EQ(double(float(b)), vb) << h;
            ASSERT_EQ(bf16(float(b)).bits, b.bits) << h;
        }
    }
}

TEST(Half, PrecisionNamesParseAndSayTheirBytes) {
    EXPECT_EQ(parse_precision("fp16"), Precision::fp16);
    EXPECT_EQ(parse_precision("bf16"), Precision::bf16);
    EXPECT_EQ(parse_precision("bfloat16"), Precision::bf16);
    EXPECT_EQ(bytes_of(Precision::fp16), 2);
    EXPECT_EQ(bytes_of(Precision::bf16), 2);
    try {
        parse_precision("fp8");
        FAIL() << "fp8 was accepted";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos) << e.what();
    }
}

// The CPU engines at 16 bits: cpu and omp agree bit for bit (the same roundings). The error
// against the exact solution is what a 16-bit state costs explicit diffusion: here each step
// changes u by 6e-4 of itself, about one fp16 ulp (fp16 ends 1.5e-2 off after 200 steps, fp32
// 1e-5) and below half a bf16 ulp, so bf16's rounding to nearest loses every increment and the
// solution stalls (0.115 off: the whole decay). docs/precision.md tables it.
template <class T>
void heat2d_at_16_bits(double lo, double hi) {
    const Heat2dProblem p(Heat2dParams::make(63, 63), 200);
    auto cpu = make_engine<T>(p, Backend::cpu);
    auto omp = make_engine<T>(p, Backend::omp);
    cpu->advance(200);
    omp->advance(200);
    EXPECT_TRUE(test::bitwise_equal(cpu->field("u"), omp->field("u")));
    const double err = cpu->observables()["max_error"];
    EXPECT_GT(err, lo) << to_string(precision_of<T>());
    EXPECT_LT(err, hi) << to_string(precision_of<T>());
    EXPECT_EQ(cpu->precision(), precision_of<T>());
}
TEST(Half, Heat2dCpuEnginesAgreeAndStayNearTheExactSolution) {
    heat2d_at_16_bits<f16>(1e-3, 2e-2);
    heat2d_at_16_bits<bf16>(0.1, 0.12);
}

TEST(Half, Heat3dOmpEqualsCpuBitwiseOnEveryStencil) {
    for (HeatStencil s : {HeatStencil::p7, HeatStencil::p19, HeatStencil::p27}) {
        const HeatParams p = HeatParams::make_box(21, 17, 13, s);
        HostField<bf16> init(p.extent());
        test::fill_random(init, 5);
        test::zero_ghosts(init);
        const auto state = test::state_of("u", init);
        auto cpu = make_engine<bf16>(Heat3dProblem(p), Backend::cpu, {}, &state);
        auto omp = make_engine<bf16>(Heat3dProblem(p), Backend::omp, {}, &state);
        cpu->advance(9);
        omp->advance(9);
        EXPECT_TRUE(test::bitwise_equal(cpu->field("u"), omp->field("u"))) << to_string(s);
    }
}

// A stencil file at 16 bits (gray-scott.stencil: two fields through neighbourhoods, periodic):
// cpu and omp agree bit for bit, and the state stays within a few of the type's ulps of fp64's
// after a few steps (the arithmetic is fp32's; each store rounds).
template <class T>
void gray_scott_at_16_bits(double tol) {
    const ModelInfo& m = find_model(test::stencil_example("gray-scott.stencil"));
    const auto p = m.box(Params{}, 37, 23, 1);
    auto cpu = test::model_engine<T>(m, *p, Backend::cpu, {}, nullptr);
    auto omp = test::model_engine<T>(m, *p, Backend::omp, {}, nullptr);
    auto ref = test::model_engine<double>(m, *p, Backend::cpu, {}, nullptr);
    for (auto* e :
         {static_cast<Engine*>(cpu.get()), static_cast<Engine*>(omp.get()), static_cast<Engine*>(ref.get())})
        e->advance(20);
    for (const char* f : {"u", "v"}) {
        EXPECT_TRUE(test::bitwise_equal(cpu->field(f), omp->field(f))) << f;
        const double err = max_relative_error(cpu->field(f), ref->field(f));
        EXPECT_LE(err, tol) << to_string(precision_of<T>()) << " " << f;
        EXPECT_GT(err, 0.0) << "16 bits that cost nothing";
    }
}
TEST(Half, StencilFileAt16BitsOnTheCpu) {
    gray_scott_at_16_bits<f16>(4e-3);
    gray_scott_at_16_bits<bf16>(3e-2);
}

}  // namespace
}  // namespace strata
