#pragma once
// 16-bit storage types: `f16` (IEEE binary16: 5 exponent bits, 10 mantissa bits, normal from
// 6.1e-5 to 65504) and `bf16` (bfloat16: fp32's 8 exponent bits, 7 mantissa bits). A field stored
// in one of them moves half of fp32's bytes; the arithmetic is fp32's (compute_t): a value becomes
// a float when read and is rounded to the nearest 16-bit value (ties to even) when stored.
//
// The types have conversions and nothing else: no arithmetic operators, so `a + b` on two of them
// is fp32's `float(a) + float(b)`, and an accumulator declared of the storage type (`T s = 0;
// s += x`) does not compile: every sum a kernel keeps is in compute_t<T>, and the only roundings
// are the stores. The host rounds in software and the device with cvt.rn; both round to nearest
// even, so the CPU reference and the GPU store the same bits for the same float.
//
// Kernels include it, NVRTC's too (no standard headers there).
#include "strata/core/cstdint.hpp"
#include "strata/core/hd.hpp"
#if !defined(__CUDACC_RTC__)
#include <bit>
#endif

namespace strata {

namespace half_bits {

STRATA_HD std::uint32_t of(float x) {
#ifdef __CUDA_ARCH__
    return __float_as_uint(x);
#else
    return std::bit_cast<std::uint32_t>(x);
#endif
}
STRATA_HD float from(std::uint32_t u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    return std::bit_cast<float>(u);
#endif
}

// float -> binary16, round to nearest even; overflow to infinity, NaN stays NaN (quiet).
STRATA_HD std::uint16_t to_f16(float f) {
#ifdef __CUDA_ARCH__
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    std::uint32_t x = of(f);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) return std::uint16_t(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (x >= 0x477ff000u) return std::uint16_t(sign | 0x7c00u);  // 65520 and up round to infinity
    if (x >= 0x38800000u) {                                      // normal in binary16: 2^-14 and up
        const std::uint32_t r = x - 0x38000000u;                 // the exponent's bias, 127 -> 15
        return std::uint16_t(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
    }
    if (x < 0x33000000u) return std::uint16_t(sign);  // below 2^-25: rounds to zero (2^-25 ties to 0)
    // Subnormal: the value in units of 2^-24, rounded to nearest even (it may round up to 2^-14).
    const std::uint32_t e = x >> 23, m = (x & 0x7fffffu) | 0x800000u, s = 126 - e;
    std::uint32_t h = m >> s;
    const std::uint32_t rest = m & ((1u << s) - 1), half = 1u << (s - 1);
    if (rest > half || (rest == half && (h & 1u))) ++h;
    return std::uint16_t(sign | h);
#endif
}

STRATA_HD float from_f16(std::uint16_t h) {
#ifdef __CUDA_ARCH__
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#else
    const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 31) return from(sign | 0x7f800000u | (m << 13));
    if (e == 0) {  // zero or subnormal: m x 2^-24, exact in fp32
        const float v = float(m) * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return from(sign | ((e + 112) << 23) | (m << 13));
#endif
}

// float -> bfloat16, round to nearest even; NaN stays NaN (quiet).
STRATA_HD std::uint16_t to_bf16(float f) {
#ifdef __CUDA_ARCH__
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    const std::uint32_t x = of(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((x >> 16) | 0x40u);
    return std::uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
#endif
}

STRATA_HD float from_bf16(std::uint16_t h) { return from(std::uint32_t(h) << 16); }

}  // namespace half_bits

struct f16 {
    std::uint16_t bits;
    f16() = default;
    STRATA_HD f16(float x) : bits(half_bits::to_f16(x)) {}
    STRATA_HD operator float() const { return half_bits::from_f16(bits); }
};

struct bf16 {
    std::uint16_t bits;
    bf16() = default;
    STRATA_HD bf16(float x) : bits(half_bits::to_bf16(x)) {}
    STRATA_HD operator float() const { return half_bits::from_bf16(bits); }
};

// The arithmetic of a storage type: fp32 for the 16-bit types, the type itself otherwise.
template <class T>
struct compute_type {
    using type = T;
};
template <>
struct compute_type<f16> {
    using type = float;
};
template <>
struct compute_type<bf16> {
    using type = float;
};
template <class T>
using compute_t = typename compute_type<T>::type;

template <class T>
inline constexpr bool is_half_v = false;
template <>
inline constexpr bool is_half_v<f16> = true;
template <>
inline constexpr bool is_half_v<bf16> = true;

}  // namespace strata
